//! Helpers shared by the benchmarks.
#![allow(dead_code)]

/// A scratch directory under `$HYPERMEM_BENCH_DIR`, or the system temp directory.
pub fn bench_dir() -> tempfile::TempDir {
    match std::env::var_os("HYPERMEM_BENCH_DIR") {
        Some(d) => tempfile::tempdir_in(d).unwrap(),
        None => tempfile::tempdir().unwrap(),
    }
}

/// A conversation's speaker for turn `i`: the user on even turns, the assistant on odd ones.
pub fn turn_role(i: usize) -> hypermem::ledger::Role {
    if i.is_multiple_of(2) {
        hypermem::ledger::Role::User
    } else {
        hypermem::ledger::Role::Assistant
    }
}

#[path = "../../examples/common/mod.rs"]
mod cpu;
#[allow(unused_imports)]
pub use cpu::{cpu_seconds, process_cpu_seconds};
