//! Helpers shared by the benchmarks.
#![allow(dead_code)]

/// A scratch directory under `$HYPERMEM_BENCH_DIR`, or the system temp directory.
pub fn bench_dir() -> tempfile::TempDir {
    match std::env::var_os("HYPERMEM_BENCH_DIR") {
        Some(d) => tempfile::tempdir_in(d).unwrap(),
        None => tempfile::tempdir().unwrap(),
    }
}
