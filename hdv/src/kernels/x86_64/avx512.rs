//! AVX-512 kernels: 512-bit XOR and `VPOPCNTQ`, 8 words per instruction, the last partial
//! chunk read with a masked load (never past the slice).
//!
//! The all-pairs kernel is register-blocked: a tile of `Q` queries × `V` vectors keeps
//! `Q * V` accumulators in `zmm` registers, so each 64-byte chunk loaded is reused
//! `V` (or `Q`) times. That turns a batch from memory-bound into compute-bound.

use core::arch::x86_64::{
    __m512i, _mm512_add_epi64, _mm512_loadu_si512, _mm512_maskz_loadu_epi64, _mm512_popcnt_epi64,
    _mm512_reduce_add_epi64, _mm512_setzero_si512, _mm512_xor_si512,
};

/// Queries per register tile in the all-pairs kernel.
const TILE_Q: usize = 4;
/// Vectors per register tile in the all-pairs kernel.
const TILE_V: usize = 2;
/// Vectors per tile in the wide single-query scan (shares each query load among them,
/// four interleaved read streams); [`distances_one`] reads one stream. Which is faster
/// depends on the microarchitecture ([`super::scan_tile`] measures them).
pub(crate) const SCAN_V: usize = 4;

/// Loads the 8-word chunk at word offset `i` (`i + 8 <= len`).
///
/// # Safety
/// `p.add(i)..p.add(i + 8)` must be readable.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn load(p: *const u64, i: usize) -> __m512i {
    // SAFETY: the caller guarantees 8 readable words at `p + i`; `loadu` has no alignment need.
    unsafe { _mm512_loadu_si512(p.add(i).cast()) }
}

/// Loads the `rem < 8` words at word offset `i`, zero-filling the rest of the register.
///
/// # Safety
/// `p.add(i)..p.add(i + rem)` must be readable.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn load_tail(p: *const u64, i: usize, rem: usize) -> __m512i {
    let mask = ((1u16 << rem) - 1) as u8;
    // SAFETY: masked-off lanes are not accessed (no fault), the others are readable.
    unsafe { _mm512_maskz_loadu_epi64(mask, p.add(i).cast()) }
}

/// Loads the lanes of the 8-word chunk at word offset `i` selected by `mask`, zeroing the
/// others.
///
/// # Safety
/// The selected words must be readable.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn load_masked(p: *const u64, i: usize, mask: u8) -> __m512i {
    // SAFETY: masked-off lanes are not accessed (no fault), the others are readable.
    unsafe { _mm512_maskz_loadu_epi64(mask, p.add(i).cast()) }
}

/// `Q × V` distances between the vectors starting at `qs[..]` and `vs[..]`, each `words` long.
///
/// # Safety
/// Every pointer must address `words` readable `u64`s.
#[inline]
#[allow(clippy::needless_range_loop)]
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
unsafe fn tile_impl<const Q: usize, const V: usize, const MASKED: bool>(
    qs: [*const u64; Q],
    vs: [*const u64; V],
    words: usize,
) -> [[u32; V]; Q] {
    // Index loops over const-sized arrays, no closures or iterator adaptors: they unroll
    // completely and keep every accumulator in a register (closures and `chain` were left
    // out of line or spilled to the stack, halving batch throughput).
    let mut acc = [[_mm512_setzero_si512(); V]; Q];
    let mut q = [_mm512_setzero_si512(); Q];
    let mut v = [_mm512_setzero_si512(); V];
    let full = words - words % 8;
    let tail_mask = ((1u16 << (words % 8)) - 1) as u8;
    let mut i = 0;
    while i < words {
        // Full chunks use plain loads, the last partial chunk a masked load that never reads
        // past the vectors. With MASKED every chunk goes through a mask register instead of
        // a branch: measured faster for the memory-bound single-query scan, slower for the
        // compute-bound tiles.
        let plain = !MASKED && i < full;
        let mask = if i < full { 0xff } else { tail_mask };
        for j in 0..Q {
            // SAFETY: the lanes selected by `mask` (words i.. of each vector) are readable.
            q[j] = unsafe {
                if plain {
                    load(qs[j], i)
                } else {
                    load_masked(qs[j], i, mask)
                }
            };
        }
        for j in 0..V {
            // SAFETY: as above.
            v[j] = unsafe {
                if plain {
                    load(vs[j], i)
                } else {
                    load_masked(vs[j], i, mask)
                }
            };
        }
        for a in 0..Q {
            for b in 0..V {
                let x = _mm512_popcnt_epi64(_mm512_xor_si512(q[a], v[b]));
                acc[a][b] = _mm512_add_epi64(acc[a][b], x);
            }
        }
        i += 8;
    }
    let mut out = [[0u32; V]; Q];
    for a in 0..Q {
        for b in 0..V {
            out[a][b] = _mm512_reduce_add_epi64(acc[a][b]) as u32;
        }
    }
    out
}

/// XOR of every word, read with eight independent 512-bit accumulators: the fastest plain
/// sequential read, used as the bandwidth yardstick for scans.
#[target_feature(enable = "avx512f")]
pub(crate) fn fold_xor(words: &[u64]) -> u64 {
    let (p, n) = (words.as_ptr(), words.len());
    let mut acc = [_mm512_setzero_si512(); 8];
    let mut i = 0;
    while i + 64 <= n {
        // The same software prefetch distance as the scan, so the yardstick is not weaker
        // than the scan it judges.
        let ahead = p
            .wrapping_add(i)
            .cast::<i8>()
            .wrapping_add(super::PREFETCH_BYTES);
        for line in 0..8 {
            super::prefetch(ahead.wrapping_add(64 * line));
        }
        for (j, a) in acc.iter_mut().enumerate() {
            // SAFETY: i + 8 * j + 8 <= i + 64 <= n.
            *a = _mm512_xor_si512(*a, unsafe { load(p, i + 8 * j) });
        }
        i += 64;
    }
    let folded = acc
        .into_iter()
        .fold(_mm512_setzero_si512(), |a, b| _mm512_xor_si512(a, b));
    let mut lanes = [0u64; 8];
    // SAFETY: `lanes` is 64 writable bytes.
    unsafe { core::arch::x86_64::_mm512_storeu_si512(lanes.as_mut_ptr().cast(), folded) };
    lanes.iter().chain(&words[i..]).fold(0, |x, y| x ^ y)
}

/// A compute-bound register tile (see [`tile_impl`]).
///
/// # Safety
/// Every pointer must address `words` readable `u64`s.
#[inline]
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
unsafe fn tile<const Q: usize, const V: usize>(
    qs: [*const u64; Q],
    vs: [*const u64; V],
    words: usize,
) -> [[u32; V]; Q] {
    // SAFETY: forwarded contract.
    unsafe { tile_impl::<Q, V, false>(qs, vs, words) }
}

/// The memory-bound single-query tile: one query against `V` vectors.
///
/// # Safety
/// Every pointer must address `words` readable `u64`s.
#[inline]
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
unsafe fn scan_tile<const V: usize>(q: *const u64, vs: [*const u64; V], words: usize) -> [u32; V] {
    // SAFETY: forwarded contract.
    unsafe { tile_impl::<1, V, true>([q], vs, words)[0] }
}

/// Hamming distance between two equal-length word slices.
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
pub(crate) fn hamming(a: &[u64], b: &[u64]) -> u32 {
    assert_eq!(a.len(), b.len());
    let (pa, pb, n) = (a.as_ptr(), b.as_ptr(), a.len());
    let mut acc = [_mm512_setzero_si512(); 4];
    let mut i = 0;
    while i + 32 <= n {
        for (j, a) in acc.iter_mut().enumerate() {
            // SAFETY: i + 8 * j + 8 <= i + 32 <= n for both slices.
            let x = unsafe { _mm512_xor_si512(load(pa, i + 8 * j), load(pb, i + 8 * j)) };
            *a = _mm512_add_epi64(*a, _mm512_popcnt_epi64(x));
        }
        i += 32;
    }
    while i + 8 <= n {
        // SAFETY: i + 8 <= n for both slices.
        let x = unsafe { _mm512_xor_si512(load(pa, i), load(pb, i)) };
        acc[0] = _mm512_add_epi64(acc[0], _mm512_popcnt_epi64(x));
        i += 8;
    }
    if i < n {
        // SAFETY: n - i < 8 words remain in both slices.
        let x = unsafe { _mm512_xor_si512(load_tail(pa, i, n - i), load_tail(pb, i, n - i)) };
        acc[1] = _mm512_add_epi64(acc[1], _mm512_popcnt_epi64(x));
    }
    let sum = _mm512_add_epi64(
        _mm512_add_epi64(acc[0], acc[1]),
        _mm512_add_epi64(acc[2], acc[3]),
    );
    _mm512_reduce_add_epi64(sum) as u32
}

super::scan_kernel!("avx512f,avx512vpopcntdq", distances, SCAN_V);
super::scan_kernel!("avx512f,avx512vpopcntdq", distances_one, 1);

/// All-pairs distances between `queries` and `block` (both of `words`-word
/// vectors), row-major: `out[q * nv + v]`: register tiles of [`TILE_Q`] queries by
/// [`TILE_V`] vectors, leftovers by narrower tiles and the single-query kernel.
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
pub(crate) fn distances_many(queries: &[u64], block: &[u64], words: usize, out: &mut [u32]) {
    let nq = queries.len() / words;
    let nv = block.len() / words;
    assert_eq!(out.len(), nq * nv);
    let (qp, bp) = (queries.as_ptr(), block.as_ptr());
    // SAFETY: callers pass i < nq, so the pointer stays inside `queries`.
    let qptr = |i: usize| unsafe { qp.add(i * words) };
    // SAFETY: callers pass i < nv, so the pointer stays inside `block`.
    let vptr = |i: usize| unsafe { bp.add(i * words) };
    let full_q = nq - nq % TILE_Q;
    let full_v = nv - nv % TILE_V;
    for q0 in (0..full_q).step_by(TILE_Q) {
        let qs: [*const u64; TILE_Q] = core::array::from_fn(|j| qptr(q0 + j));
        for v0 in (0..full_v).step_by(TILE_V) {
            let vs: [*const u64; TILE_V] = core::array::from_fn(|j| vptr(v0 + j));
            // SAFETY: all pointers address `words` readable words.
            let d = unsafe { tile::<TILE_Q, TILE_V>(qs, vs, words) };
            for (j, row) in d.iter().enumerate() {
                let at = (q0 + j) * nv + v0;
                out[at..at + TILE_V].copy_from_slice(row);
            }
        }
        for v in full_v..nv {
            // SAFETY: all pointers address `words` readable words.
            let d = unsafe { tile::<TILE_Q, 1>(qs, [vptr(v)], words) };
            for (j, row) in d.iter().enumerate() {
                out[(q0 + j) * nv + v] = row[0];
            }
        }
    }
    for q in full_q..nq {
        distances(
            &queries[q * words..(q + 1) * words],
            block,
            &mut out[q * nv..(q + 1) * nv],
        );
    }
}
