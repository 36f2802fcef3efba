//! AVX-512 kernels: 512-bit XOR and `VPOPCNTQ`, 8 words per instruction, the last partial
//! chunk read with a masked load (never past the slice).
//!
//! The all-pairs kernel is register-blocked: a tile of `Q` queries × `V` vectors keeps
//! `Q * V` accumulators in `zmm` registers, so each 64-byte chunk loaded is reused
//! `V` (or `Q`) times. That turns a batch from memory-bound into compute-bound.

use core::arch::x86_64::{
    __m512i, _mm512_add_epi64, _mm512_loadu_si512, _mm512_maskz_loadu_epi64,
    _mm512_popcnt_epi64, _mm512_reduce_add_epi64, _mm512_setzero_si512, _mm512_xor_si512,
};

/// Queries per register tile in the all-pairs kernel.
const TILE_Q: usize = 4;
/// Vectors per register tile in the all-pairs kernel.
const TILE_V: usize = 2;
/// Vectors per tile in the single-query scan (shares each query load among them).
const SCAN_V: usize = 4;

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

/// `Q × V` distances between the vectors starting at `qs[..]` and `vs[..]`, each `words` long.
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
    let mut acc = [[_mm512_setzero_si512(); V]; Q];
    let mut step = |q: [__m512i; Q], v: [__m512i; V]| {
        for (qi, qv) in q.iter().enumerate() {
            for (vi, vv) in v.iter().enumerate() {
                let x = _mm512_popcnt_epi64(_mm512_xor_si512(*qv, *vv));
                acc[qi][vi] = _mm512_add_epi64(acc[qi][vi], x);
            }
        }
    };
    let mut i = 0;
    while i + 8 <= words {
        // SAFETY: i + 8 <= words, and every pointer addresses `words` words.
        let q = qs.map(|p| unsafe { load(p, i) });
        // SAFETY: as above.
        let v = vs.map(|p| unsafe { load(p, i) });
        step(q, v);
        i += 8;
    }
    if i < words {
        let rem = words - i;
        // SAFETY: rem < 8 words remain readable after offset i.
        let q = qs.map(|p| unsafe { load_tail(p, i, rem) });
        // SAFETY: as above.
        let v = vs.map(|p| unsafe { load_tail(p, i, rem) });
        step(q, v);
    }
    acc.map(|row| row.map(|a| _mm512_reduce_add_epi64(a) as u32))
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

super::block_kernels!("avx512f,avx512vpopcntdq");
