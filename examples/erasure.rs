//! Erasure at scale: `forget_project` on a project of N events (threads of 50 chained by
//! `prev_id`, as observations are), beside a small project that must survive.
//!
//! ```sh
//! cargo run --release --example erasure -- 100000 1000000
//! ```
//! Prints, per size, the ingest time and the erasure time (wall and CPU).

mod common;
use common::cpu_seconds;

use std::time::Instant;

use hypermem::ledger::{EventKind, Ledger, LedgerConfig, NewEvent, Role};
use hypermem::store::ProjectId;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let sizes = if sizes.is_empty() {
        vec![100_000]
    } else {
        sizes
    };
    for n in sizes {
        let dir = tempfile::tempdir()?;
        let ledger = Ledger::open(dir.path().join("ledger.db"), LedgerConfig::default())?;
        let big = ProjectId::new("big")?;
        let small = ProjectId::new("small")?;
        let t = Instant::now();
        let mut batch = Vec::with_capacity(10_000);
        for i in 0..n {
            batch.push(
                NewEvent::new(
                    big.clone(),
                    if i % 2 == 0 {
                        Role::User
                    } else {
                        Role::Assistant
                    },
                    EventKind::Message,
                    format!("event {i} about topic {} with a few more words", i % 97),
                )
                .thread(format!("t{}", i / 50)),
            );
            if batch.len() == batch.capacity() {
                ledger.append_batch(&batch)?;
                batch.clear();
            }
        }
        if !batch.is_empty() {
            ledger.append_batch(&batch)?;
        }
        ledger.append(
            NewEvent::new(small.clone(), Role::User, EventKind::Message, "kept").thread("k"),
        )?;
        let ingest = t.elapsed().as_secs_f64();
        let (t, cpu) = (Instant::now(), cpu_seconds());
        let receipt = ledger.forget_project(&big)?;
        let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - cpu);
        assert_eq!(receipt.rows["events"], n as u64);
        assert_eq!(ledger.count(&small)?, 1);
        println!(
            "{n:>9} events: ingest {ingest:.1} s; forget_project {wall:.2} s wall, {cpu:.2} s CPU ({:.0} events/s)",
            n as f64 / wall
        );
    }
    Ok(())
}
