//! Recall through a node whose ledger is on PostgreSQL, against the same node on the
//! SQLite file, in one run: two memories with the same vector tiers (lite's) are given the
//! same N chat-like notes, then the same queries are recalled in process on one and on
//! the other, alternating query by query (both see the machine in the same state). Prints
//! the build time, recall p50 / p99 of each and their ratio. On PostgreSQL a recall also
//! asks the ledger whether another node appended to the project (a shared ledger is
//! followed at every read).
//!
//! ```sh
//! HYPERMEM_POSTGRES_URL=postgres://hm@127.0.0.1:5432/postgres \
//!   cargo run --release --features postgres --example ledger_recall -- 20000
//! ```

mod common;
#[path = "common/notes.rs"]
mod notes;

use std::time::Instant;

use hypermem::hdv::SeededRng;
use hypermem::store::ProjectId;
use hypermem::{Memory, Profile, ProfileKind};
use notes::{observe_notes, percentiles, query};

/// Gives `memory` `n` notes in batches of 1,000; the wall seconds and CPU-seconds of this
/// process it took (PostgreSQL's own CPU is another process's).
fn build(
    memory: &Memory,
    p: &ProjectId,
    n: usize,
) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let (t, cpu) = (Instant::now(), common::cpu_seconds());
    observe_notes(memory, p, n)?;
    Ok((t.elapsed().as_secs_f64(), common::cpu_seconds() - cpu))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(20_000), |a| a.parse())?;
    let Ok(url) = std::env::var("HYPERMEM_POSTGRES_URL") else {
        eprintln!("set HYPERMEM_POSTGRES_URL (and build with --features postgres) to compare");
        return Ok(());
    };
    let lite = Profile::builtin(ProfileKind::Lite)?;
    let mut shared = lite.clone();
    shared.ledger.url = Some(url);
    let (d1, d2) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let sqlite = Memory::open(&lite, Some(d1.path()))?;
    let postgres = Memory::open(&shared, Some(d2.path()))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_nanos();
    let p = ProjectId::new(format!("recall-{nanos}"))?;
    let ((w1, c1), (w2, c2)) = (build(&sqlite, &p, n)?, build(&postgres, &p, n)?);
    let rate = |s: f64| n as f64 / s.max(1e-9);
    println!(
        "observed {n} notes: SQLite {:.0}/s wall, {:.0} per CPU-second; PostgreSQL {:.0}/s wall, {:.0} per CPU-second of this process",
        rate(w1),
        rate(c1),
        rate(w2),
        rate(c2)
    );
    let mut rng = SeededRng::new(11);
    let queries: Vec<String> = (0..300).map(|_| query(&mut rng)).collect();
    for q in queries.iter().take(20) {
        sqlite.recall(&p, q, 10)?;
        postgres.recall(&p, q, 10)?;
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for q in &queries {
        let t = Instant::now();
        let x = sqlite.recall(&p, q, 10)?;
        a.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let y = postgres.recall(&p, q, 10)?;
        b.push(t.elapsed().as_secs_f64() * 1e3);
        let ids = |h: &[hypermem::RecallItem]| {
            h.iter()
                .map(|h| h.event.content.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&x), ids(&y), "the same notes, the same answer: {q}");
    }
    let ((a50, a99), (b50, b99)) = (percentiles(a), percentiles(b));
    println!("recall, SQLite ledger      p50 {a50:.2} ms  p99 {a99:.2} ms");
    println!(
        "recall, PostgreSQL ledger  p50 {b50:.2} ms  p99 {b99:.2} ms  (PostgreSQL / SQLite p50 {:.2}, p99 {:.2})",
        b50 / a50,
        b99 / a99
    );
    postgres.forget_project(&p)?;
    Ok(())
}
