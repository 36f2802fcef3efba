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

/// CPU seconds (user + system) used so far by process `pid` (`"self"` for this one), from
/// `/proc/<pid>/stat`; 0 where that cannot be read.
pub fn cpu_secs(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, r)| r.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}
