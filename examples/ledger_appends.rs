//! Event-log appends per second on SQLite and, built with `--features postgres` and given
//! `HYPERMEM_POSTGRES_URL`, on PostgreSQL, through the same [`EventLog`] calls in one run.
//!
//! Appends `--batches` batches of `--size` chat turns of about 200 bytes (one thread and
//! session per batch, as an import writes them) and reports events per wall second and
//! per CPU-second of this process (the PostgreSQL server's own CPU is another process's:
//! compare wall rates across backends), medians of `--reps` runs, each into a new project.
//!
//! ```sh
//! cargo run --release --example ledger_appends
//! HYPERMEM_POSTGRES_URL=postgres://hm@127.0.0.1:5432/postgres \
//!   cargo run --release --features postgres --example ledger_appends
//! ```

mod common;

use std::time::Instant;

use common::cpu_seconds;

use hypermem::ledger::{EventKind, EventLog, Ledger, LedgerConfig, NewEvent, Role};

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// `(events per wall second, events per CPU-second)` of one run into `project`.
fn run(log: &dyn EventLog, project: &str, batches: usize, size: usize) -> (f64, f64) {
    let p = hypermem::base::ProjectId::new(project).expect("a project name");
    let (t, c) = (Instant::now(), cpu_seconds());
    for b in 0..batches {
        let batch: Vec<NewEvent> =
            (0..size)
                .map(|i| {
                    NewEvent::new(
                    p.clone(),
                    if i % 2 == 0 { Role::User } else { Role::Assistant },
                    EventKind::Message,
                    format!(
                        "turn {i} of batch {b}: the delivery window moved to Thursday afternoon, \
                         the courier needs the gate code and a phone number, and the invoice \
                         goes to the office address this time, not the warehouse."
                    ),
                )
                .thread(format!("t{b}"))
                .session(format!("t{b}"))
                })
                .collect();
        log.append_batch(&batch).expect("append");
    }
    let n = (batches * size) as f64;
    let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
    (n / wall, n / cpu.max(0.01))
}

/// The PostgreSQL event log `HYPERMEM_POSTGRES_URL` names, in a build with the feature.
fn postgres() -> Option<Result<Box<dyn EventLog>, Box<dyn std::error::Error>>> {
    #[cfg(feature = "postgres")]
    if let Ok(url) = std::env::var("HYPERMEM_POSTGRES_URL") {
        return Some(
            hypermem::ledger::Ledger::connect(&url, LedgerConfig::default())
                .map(|log| Box::new(log) as Box<dyn EventLog>)
                .map_err(Into::into),
        );
    }
    None
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut batches, mut size, mut reps) = (200usize, 50usize, 3usize);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value: usize = args
            .next()
            .ok_or(format!("{flag} needs a value"))?
            .parse()?;
        match flag.as_str() {
            "--batches" => batches = value,
            "--size" => size = value,
            "--reps" => reps = value.max(1),
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let dir = tempfile::tempdir()?;
    let sqlite: Box<dyn EventLog> = Box::new(Ledger::open(
        dir.path().join("ledger.db"),
        LedgerConfig::default(),
    )?);
    let logs: Vec<Box<dyn EventLog>> = std::iter::once(Ok(sqlite))
        .chain(postgres())
        .collect::<Result<_, Box<dyn std::error::Error>>>()?;
    if logs.len() == 1 {
        eprintln!(
            "(SQLite only: build with --features postgres and set HYPERMEM_POSTGRES_URL for PostgreSQL)"
        );
    }
    let tag = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis();
    // Repetitions interleaved across backends, so drift hits both alike.
    let mut rates: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); logs.len()];
    for r in 0..reps {
        for (log, (wall, cpu)) in logs.iter().zip(rates.iter_mut()) {
            let (w, c) = run(log.as_ref(), &format!("appends-{tag}-{r}"), batches, size);
            wall.push(w);
            cpu.push(c);
        }
    }
    for (log, (wall, cpu)) in logs.iter().zip(rates) {
        println!(
            "{} batches {batches} x {size}: {:.0} events/s wall, {:.0} per CPU-second of this process (median of {reps})",
            log.backend(),
            median(wall),
            median(cpu)
        );
    }
    Ok(())
}
