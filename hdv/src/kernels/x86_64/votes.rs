//! AVX-512 kernels of [`crate::bundle::DenseVotes`]: masked adds of a feature's weight
//! into 32 `i16` counters per instruction (the counters of D = 10,048 bits fit in L1),
//! register-tiled over a buffer of features, and the transpose of counters into bit planes.

use core::arch::x86_64::{
    __m512i, _load_mask32, _mm512_cmpeq_epi16_mask, _mm512_cmpgt_epi16_mask, _mm512_loadu_si512,
    _mm512_mask_add_epi16, _mm512_set1_epi16, _mm512_storeu_si512, _mm512_ternarylogic_epi64,
    _mm512_test_epi16_mask,
};

use crate::bundle::XorFeature;

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

/// Adds every feature of `features`, each the XOR of three vectors of `arena` (slot `s` =
/// words `s * w .. (s + 1) * w`, `w = counts.len() / 64`): `counts[64 i + b] += weight`
/// for every bit `b` set in word `i` of the XOR. Tile by tile (8 words, 512 counters in
/// 16 registers): first every feature's 8 words of the tile are XORed into a small buffer
/// that stays in L1, then they are read back as masks (`kmovd k, m32`, a load, where a mask
/// taken from a general register would compete with the adds for one port) for the
/// masked adds. No feature is ever written out whole.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) fn add_xor_features(
    counts: &mut [i16],
    arena: &[u64],
    features: &[XorFeature],
    masks: &mut Vec<u64>,
    lanes: &mut Vec<[i16; 32]>,
) {
    const TILE: usize = 8;
    let words = counts.len() / 64;
    assert_eq!(counts.len(), words * 64);
    for f in features {
        for &p in &f.parts {
            assert!(
                (p as usize + 1) * words <= arena.len(),
                "feature part out of the arena"
            );
        }
    }
    // Every feature's weight in 32 lanes, and room for one tile of every feature (each
    // written before it is read): buffers the caller keeps between texts.
    lanes.clear();
    lanes.extend(
        features
            .iter()
            .map(|f| [i16::try_from(f.weight).expect("a weight within the counters' range"); 32]),
    );
    masks.resize(features.len() * TILE, 0);
    let (masks, ws) = (&mut masks[..], &lanes[..]);
    let full = words - words % TILE;
    for t in (0..full).step_by(TILE) {
        for (f, out) in features.iter().zip(masks.chunks_exact_mut(TILE)) {
            let [a, b, c] = f.parts.map(|p| p as usize * words + t);
            // SAFETY: each part's words `t .. t + 8` lie inside the arena (asserted above for
            // the whole vector, `t + 8 <= words`); `out` is 8 words; unaligned loads/stores.
            unsafe {
                let x = _mm512_ternarylogic_epi64::<0x96>(
                    _mm512_loadu_si512(arena.as_ptr().add(a).cast()),
                    _mm512_loadu_si512(arena.as_ptr().add(b).cast()),
                    _mm512_loadu_si512(arena.as_ptr().add(c).cast()),
                );
                _mm512_storeu_si512(out.as_mut_ptr().cast(), x);
            }
        }
        add_tile(&mut counts[64 * t..64 * (t + TILE)], masks, ws);
    }
    // The last words (fewer than a tile), one at a time.
    for i in full..words {
        let base = counts[64 * i..64 * (i + 1)].as_mut_ptr().cast::<__m512i>();
        // SAFETY: the two registers cover `counts[64 i .. 64 i + 64]`.
        let (mut lo, mut hi) =
            unsafe { (_mm512_loadu_si512(base), _mm512_loadu_si512(base.add(1))) };
        for (f, w) in features.iter().zip(ws) {
            let [a, b, c] = f.parts.map(|p| p as usize * words + i);
            let word = arena[a] ^ arena[b] ^ arena[c];
            // SAFETY: 32 `i16`s = 64 bytes; unaligned load.
            let w = unsafe { _mm512_loadu_si512(w.as_ptr().cast()) };
            lo = _mm512_mask_add_epi16(lo, word as u32, lo, w);
            hi = _mm512_mask_add_epi16(hi, (word >> 32) as u32, hi, w);
        }
        // SAFETY: as for the loads.
        unsafe {
            _mm512_storeu_si512(base, lo);
            _mm512_storeu_si512(base.add(1), hi);
        }
    }
}

/// Adds feature `f`'s weight `ws[f]` to the 512 counters `counts` where bit set in its 8
/// words `masks[8 f .. 8 f + 8]`; the counters stay in registers throughout.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn add_tile(counts: &mut [i16], masks: &[u64], ws: &[[i16; 32]]) {
    assert!(counts.len() == 512 && masks.len() >= ws.len() * 8);
    let base = counts.as_mut_ptr().cast::<__m512i>();
    let mut acc = [_mm512_set1_epi16(0); 16];
    for (j, a) in acc.iter_mut().enumerate() {
        // SAFETY: register `j` covers counters 32 j .. 32 j + 32 of the 512.
        *a = unsafe { _mm512_loadu_si512(base.add(j)) };
    }
    for (f, w) in ws.iter().enumerate() {
        // SAFETY: 32 `i16`s = 64 bytes; unaligned load.
        let w = unsafe { _mm512_loadu_si512(w.as_ptr().cast()) };
        let m = masks[8 * f..8 * f + 8].as_ptr().cast::<u32>();
        for (j, a) in acc.iter_mut().enumerate() {
            // SAFETY: `m` points at 8 words = 16 `u32` masks.
            let k = unsafe { _load_mask32(m.add(j)) };
            *a = _mm512_mask_add_epi16(*a, k, *a, w);
        }
    }
    for (j, a) in acc.iter().enumerate() {
        // SAFETY: as for the loads.
        unsafe { _mm512_storeu_si512(base.add(j), *a) };
    }
}

/// The majority vector of the counters (`total` the sum of every weight added): bit `b` of
/// word `i` is set where `2 · counts[64 i + b] > total`, and where they are equal it is the
/// bit of `coins()` drawn once per word in order, as [`crate::Bundler::binarize`] decides.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) fn majority(
    counts: &[i16],
    total: i64,
    out: &mut [u64],
    mut coins: impl FnMut() -> u64,
) {
    assert_eq!(counts.len(), out.len() * 64);
    // 2c > T  ⟺  c > ⌊T / 2⌋, and 2c = T only for even T, at c = T / 2.
    let half = i16::try_from(total.div_euclid(2)).expect("a total within the i16 counters' range");
    let even = total.rem_euclid(2) == 0;
    let h = _mm512_set1_epi16(half);
    for (o, lanes) in out.iter_mut().zip(counts.chunks_exact(64)) {
        // SAFETY: each half is 32 `i16`s = 64 bytes; unaligned loads.
        let (lo, hi) = unsafe {
            (
                _mm512_loadu_si512(lanes.as_ptr().cast::<__m512i>()),
                _mm512_loadu_si512(lanes[32..].as_ptr().cast::<__m512i>()),
            )
        };
        let above = u64::from(_mm512_cmpgt_epi16_mask(lo, h))
            | (u64::from(_mm512_cmpgt_epi16_mask(hi, h)) << 32);
        let tied = u64::from(_mm512_cmpeq_epi16_mask(lo, h))
            | (u64::from(_mm512_cmpeq_epi16_mask(hi, h)) << 32);
        let coin = coins();
        *o = above | if even { tied & coin } else { 0 };
    }
}
