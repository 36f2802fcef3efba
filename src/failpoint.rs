//! Injected failures, so tests can drive the error paths that real faults take (a disk
//! that fills after the ledger commit, a process killed between two stores). Armed per
//! project, so concurrent tests do not trip each other; disarmed, a check is one relaxed
//! atomic load.

use crate::sync::Recover as _;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

static ANY: AtomicBool = AtomicBool::new(false);
static ARMED: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);

/// The next `times` observation batches of `project` fail after their ledger commit and
/// before their vectors, synapses and episodes are written (as a full disk would).
#[doc(hidden)]
pub fn fail_projections(project: &str, times: usize) {
    let mut armed = ARMED.locked();
    armed
        .get_or_insert_with(HashMap::new)
        .insert(project.to_owned(), times);
    ANY.store(true, Ordering::Release);
}

/// Whether the projection step of a batch of `project` must fail now (consumes one).
pub(crate) fn projection_fails(project: &str) -> bool {
    if !ANY.load(Ordering::Relaxed) {
        return false;
    }
    let mut armed = ARMED.locked();
    match armed.as_mut().and_then(|m| m.get_mut(project)) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    }
}
