//! The AVX-512 single-query scan's tile, chosen by measuring both on the process's own
//! first scans.
//!
//! A memory-bound scan reads at the rate the CPU's prefetchers sustain, and which tile
//! keeps them busy depends on the microarchitecture: four vectors per tile (four
//! interleaved read streams sharing each query load) reads at 0.96 of a plain sequential
//! read on a Xeon with AVX-512, one vector per tile at 0.72; on Zen 4 two interleaved
//! streams halved the AVX2 scan's read rate, and the four-stream AVX-512 scan trailed the
//! one-stream AVX2 one (`docs/EXPERIMENTS.md`). So neither is the default everywhere: the
//! process's first whole block scans of at least [`TRIAL_BYTES`] ([`measured`]) alternate
//! between the two tiles on each thread, each timed whole; after [`TRIALS`] of each, the
//! tile whose fastest trial read the most bytes per nanosecond runs from then on, for the
//! process. Both compute the same distances, so the choice changes speed, never results.
//! `HDV_SCAN_TILE=1|4` forces one (benchmarks, tests); [`chosen`] reports it.

use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

use super::avx512;

/// The environment variable that forces the AVX-512 scan's tile (`1` or `4`).
pub const TILE_ENV: &str = "HDV_SCAN_TILE";

/// The tiles tried, in vectors per tile; the first is used until one is chosen.
const TILES: [usize; 2] = [avx512::SCAN_V, 1];

/// Timed block scans per tile before the choice.
pub(crate) const TRIALS: u32 = 3;

/// Smallest block a trial times: long enough for the prefetchers to settle into the
/// tile's access pattern, as they do in a long scan (timing 320 KB steps, alternating
/// tiles, favoured the one-stream tile, which they follow soonest, though the four-stream
/// one reads a third faster in a long scan on a Xeon).
pub(crate) const TRIAL_BYTES: usize = 8 << 20;

/// 0 while undecided, else 1 + the index in [`TILES`].
static CHOICE: AtomicU8 = AtomicU8::new(0);
static CALLS: AtomicU32 = AtomicU32::new(0);
/// Per tile, the fewest picoseconds per byte a timed block scan took.
static BEST: [AtomicU64; 2] = [AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX)];

thread_local! {
    /// The tile a trial on this thread runs with, while it runs.
    static TRIAL: Cell<Option<usize>> = const { Cell::new(None) };
    /// Trials this thread has run (each thread alternates its own).
    static RUNS: Cell<usize> = const { Cell::new(0) };
}

/// The tile `HDV_SCAN_TILE` forces, read once; `None` when it is unset or names no tile.
fn forced() -> Option<usize> {
    static FORCED: OnceLock<Option<usize>> = OnceLock::new();
    *FORCED.get_or_init(|| {
        let value = std::env::var(TILE_ENV)
            .ok()
            .filter(|v| !v.trim().is_empty())?;
        let tile = value.trim().parse().ok().filter(|t| TILES.contains(t));
        if tile.is_none() {
            eprintln!("hdv: ignoring {TILE_ENV}={value:?} (use 1 or 4)");
        }
        tile
    })
}

/// The tile the AVX-512 scan runs with: forced, or measured; `None` while still measuring.
pub fn chosen() -> Option<usize> {
    forced().or_else(|| match CHOICE.load(Ordering::Acquire) {
        0 => None,
        c => Some(TILES[usize::from(c) - 1]),
    })
}

/// Scans a block of `bytes` with `scan`, as a trial of one tile when none is chosen yet
/// and the block is long enough ([`TRIAL_BYTES`]): each thread alternates the tiles over
/// its trials, each timed whole; after [`TRIALS`] of each (counted over all threads) the
/// tile with the fastest trial runs from then on. Every scan's results are the same
/// whichever tile computes them.
pub(crate) fn measured<R>(bytes: usize, scan: impl FnOnce() -> R) -> R {
    if chosen().is_some() || bytes < TRIAL_BYTES {
        return scan();
    }
    let which = RUNS.with(|r| {
        let n = r.get();
        r.set(n + 1);
        n % 2
    });
    TRIAL.with(|t| t.set(Some(TILES[which])));
    let started = Instant::now();
    let out = scan();
    let nanos = started.elapsed().as_nanos();
    TRIAL.with(|t| t.set(None));
    // Picoseconds per byte; each tile keeps its best, what it sustains when nothing else
    // gets in its way on a shared machine.
    let cost = u64::try_from(nanos * 1000 / bytes as u128).unwrap_or(u64::MAX);
    BEST[which].fetch_min(cost.max(1), Ordering::Relaxed);
    let both = |i: usize| BEST[i].load(Ordering::Relaxed) < u64::MAX;
    if CALLS.fetch_add(1, Ordering::Relaxed) + 1 >= 2 * TRIALS && both(0) && both(1) {
        let cost = |i: usize| BEST[i].load(Ordering::Relaxed);
        let best = u8::from(cost(1) < cost(0));
        let _ = CHOICE.compare_exchange(0, best + 1, Ordering::AcqRel, Ordering::Acquire);
    }
    out
}

/// Runs the scan with `tile` vectors per tile.
///
/// # Safety
/// The CPU must support AVX-512F and VPOPCNTDQ.
unsafe fn run(tile: usize, query: &[u64], block: &[u64], out: &mut [u32]) {
    // SAFETY: forwarded contract.
    unsafe {
        if tile == 1 {
            avx512::distances_one(query, block, out);
        } else {
            avx512::distances(query, block, out);
        }
    }
}

/// Distances from `query` to each vector of `block` with the tile of this thread's trial,
/// else the chosen one, else the first.
///
/// # Safety
/// The CPU must support AVX-512F and VPOPCNTDQ.
pub(crate) unsafe fn distances(query: &[u64], block: &[u64], out: &mut [u32]) {
    let tile = TRIAL.with(Cell::get).or_else(chosen).unwrap_or(TILES[0]);
    // SAFETY: forwarded contract.
    unsafe { run(tile, query, block, out) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_tiles_compute_the_same_distances_and_one_is_chosen() {
        if !super::super::has_avx512() {
            eprintln!("SKIPPED: this CPU has no AVX-512 VPOPCNTDQ");
            return;
        }
        let words = 157;
        let n = 300;
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let query: Vec<u64> = (0..words).map(|_| next()).collect();
        let block: Vec<u64> = (0..words * n).map(|_| next()).collect();
        let reference: Vec<u32> = (0..n)
            .map(|v| {
                super::super::super::scalar::hamming(&query, &block[v * words..(v + 1) * words])
            })
            .collect();
        for tile in TILES {
            let mut out = vec![0; n];
            // SAFETY: AVX-512 VPOPCNTDQ checked above.
            unsafe { run(tile, &query, &block, &mut out) };
            assert_eq!(out, reference, "tile {tile}");
        }
        // Trials on blocks long enough choose a tile; the results never change.
        let long_n = TRIAL_BYTES / (words * 8) + 1;
        let long: Vec<u64> = (0..words * long_n).map(|_| next()).collect();
        let mut first = vec![0; long_n];
        // SAFETY: as above.
        unsafe { distances(&query, &long, &mut first) };
        for _ in 0..2 * TRIALS {
            let mut out = vec![0; long_n];
            measured(long.len() * 8, || {
                // SAFETY: as above.
                unsafe { distances(&query, &long, &mut out) }
            });
            assert_eq!(out, first);
        }
        assert!(chosen().is_some_and(|t| TILES.contains(&t)));
    }
}
