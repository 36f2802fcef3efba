//! AVX-512 kernels of [`crate::bundle::DenseVotes`]: masked adds of a feature's weight
//! into 32 `i16` counters per instruction (the counters of D = 10,048 bits fit in L1),
//! register-tiled over a buffer of features, and the transpose of counters into bit planes.

use core::arch::x86_64::{
    __m512i, _mm512_loadu_si512, _mm512_mask_add_epi16, _mm512_set1_epi16, _mm512_storeu_si512,
    _mm512_test_epi16_mask,
};

/// Adds every buffered feature: `features` holds `weights.len()` vectors of
/// `counts.len() / 64` words each, one after another; `counts[64 i + b] += weights[f]` for
/// every bit `b` set in word `i` of feature `f`. Register-tiled: 256 counters (8 registers)
/// stay in registers while every feature's 4 words of them are added, so counters are
/// loaded and stored once per call, not once per feature.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) fn add_many(counts: &mut [i16], features: &[u64], weights: &[i16]) {
    let words = counts.len() / 64;
    assert_eq!(counts.len(), words * 64);
    assert_eq!(features.len(), words * weights.len());
    let ws: Vec<__m512i> = weights.iter().map(|&w| _mm512_set1_epi16(w)).collect();
    let mut t = 0;
    while t < words {
        let n = (words - t).min(4);
        let base = counts[64 * t..64 * (t + n)].as_mut_ptr().cast::<__m512i>();
        let mut acc = [_mm512_set1_epi16(0); 8];
        for (j, a) in acc.iter_mut().enumerate().take(2 * n) {
            // SAFETY: register `j` covers counters 32 j .. 32 j + 32 of the tile, inside
            // `counts[64 t .. 64 (t + n)]`.
            *a = unsafe { _mm512_loadu_si512(base.add(j)) };
        }
        for (f, w) in ws.iter().enumerate() {
            let x = &features[f * words + t..f * words + t + n];
            for (j, &word) in x.iter().enumerate() {
                acc[2 * j] = _mm512_mask_add_epi16(acc[2 * j], word as u32, acc[2 * j], *w);
                acc[2 * j + 1] =
                    _mm512_mask_add_epi16(acc[2 * j + 1], (word >> 32) as u32, acc[2 * j + 1], *w);
            }
        }
        for (j, a) in acc.iter().enumerate().take(2 * n) {
            // SAFETY: as for the loads.
            unsafe { _mm512_storeu_si512(base.add(j), *a) };
        }
        t += n;
    }
}

/// Writes the low `planes` bits of every counter as word-major bit planes:
/// `slices[i * planes + p]` bit `b` = bit `p` of `counts[64 i + b]` (two's complement, bit
/// 15 standing for every higher plane).
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) fn transpose(counts: &[i16], planes: usize, slices: &mut [u64]) {
    assert_eq!(counts.len() * planes, slices.len() * 64);
    for (lanes, s) in counts.chunks_exact(64).zip(slices.chunks_exact_mut(planes)) {
        // SAFETY: each half is 32 `i16`s = 64 bytes; unaligned loads.
        let (lo, hi) = unsafe {
            (
                _mm512_loadu_si512(lanes.as_ptr().cast::<__m512i>()),
                _mm512_loadu_si512(lanes[32..].as_ptr().cast::<__m512i>()),
            )
        };
        for (p, plane) in s.iter_mut().enumerate() {
            let bit = _mm512_set1_epi16((1u16 << p.min(15)) as i16);
            *plane = u64::from(_mm512_test_epi16_mask(lo, bit))
                | (u64::from(_mm512_test_epi16_mask(hi, bit)) << 32);
        }
    }
}
