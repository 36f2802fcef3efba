//! Helpers shared by the measurement examples (and, by path, the benchmarks).

/// The allocator the `hypermem` binary uses, so measurements match it (the benchmarks
/// include this module by path).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// CPU seconds (user + system) this process has used, from `/proc/self/stat` (Linux); 0
/// elsewhere. Rates per CPU-second sit beside wall rates on a shared machine.
pub fn cpu_seconds() -> f64 {
    process_cpu_seconds("self")
}

/// CPU seconds (user + system) process `pid` has used (`"self"` for this one), from
/// `/proc/<pid>/stat`; 0 where that cannot be read.
pub fn process_cpu_seconds(pid: &str) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}
