//! Chat-like notes and questions about them, for the measurement examples that build a
//! memory of many short notes (`http_load`, `ledger_recall`), and the percentiles they
//! report.

use hypermem::Memory;
use hypermem::hdv::SeededRng;
use hypermem::ledger::{EventKind, NewEvent, Role};
use hypermem::store::ProjectId;

/// Gives `memory` `n` notes of [`sentence`] (seed 7) in batches of 1,000, a thread per
/// hundred.
///
/// # Errors
/// As [`Memory::observe_batch`].
pub fn observe_notes(memory: &Memory, p: &ProjectId, n: usize) -> hypermem::Result<()> {
    let mut rng = SeededRng::new(7);
    for start in (0..n).step_by(1000) {
        let batch: Vec<NewEvent> = (start..(start + 1000).min(n))
            .map(|i| {
                NewEvent::new(
                    p.clone(),
                    Role::User,
                    EventKind::Message,
                    sentence(&mut rng, i),
                )
                .thread(format!("t{}", i / 100))
            })
            .collect();
        memory.observe_batch(&batch)?;
    }
    Ok(())
}

pub const SUBJECTS: &[&str] = &[
    "deploy", "database", "invoice", "editor", "backup", "meeting", "budget", "laptop", "garden",
    "flight",
];
pub const VERBS: &[&str] = &[
    "prefers",
    "scheduled",
    "moved",
    "fixed",
    "asked about",
    "cancelled",
];
pub const DETAILS: &[&str] = &[
    "on Tuesday",
    "for the Berlin office",
    "after the outage",
    "with the new vendor",
    "before the release",
    "at 9am",
];

pub fn sentence(rng: &mut SeededRng, i: usize) -> String {
    let pick = |rng: &mut SeededRng, xs: &[&'static str]| xs[rng.below(xs.len() as u64) as usize];
    format!(
        "Note {i}: the user {} the {} {} (ticket {}).",
        pick(rng, VERBS),
        pick(rng, SUBJECTS),
        pick(rng, DETAILS),
        rng.below(100_000)
    )
}

pub fn query(rng: &mut SeededRng) -> String {
    let pick = |rng: &mut SeededRng, xs: &[&'static str]| xs[rng.below(xs.len() as u64) as usize];
    format!(
        "what did the user do with the {} {}",
        pick(rng, SUBJECTS),
        pick(rng, DETAILS)
    )
}

pub fn percentiles(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
    (at(0.5), at(0.99))
}
