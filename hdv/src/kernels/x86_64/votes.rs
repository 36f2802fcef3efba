//! AVX-512 kernels of [`crate::bundle::DenseVotes`]: masked adds of a feature's weight
//! into 32 `i16` counters per instruction (the counters of D = 10,048 bits fit in L1),
//! register-tiled over a buffer of features; a carry-save adder for features given as XORs
//! of arena slots; and the transpose of counters into bit planes.

use core::arch::x86_64::{
    __m512i, _load_mask32, _mm512_and_si512, _mm512_cmpeq_epi16_mask, _mm512_cmpgt_epi16_mask,
    _mm512_loadu_si512, _mm512_mask_add_epi16, _mm512_set1_epi16, _mm512_setzero_si512,
    _mm512_storeu_si512, _mm512_ternarylogic_epi64, _mm512_test_epi16_mask, _mm512_test_epi64_mask,
    _mm512_xor_si512,
};

use crate::bundle::{TiledArena, XorFeature};

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

pub(crate) use crate::kernels::votes::CarrySaveScratch;
use crate::kernels::votes::LEVELS;

/// Adds every feature of `features`, each the XOR of three slots of `arena`:
/// `counts[64 i + b] += weight` for every bit `b` set in word `i` of the XOR. Weights must
/// be non-negative and the sums must stay inside `i16` (the caller checks both).
///
/// A carry-save adder, one tile (8 words, 512 bits) at a time: a weight is a sum of powers
/// of two, so a feature is one input at each level `l` where its weight has bit `l`. Each
/// level's inputs (its features, then the carries of the level below) are summed by a
/// chain of full adders (two `vpternlogq` each: the XOR of three, and their majority),
/// whose sum bit is plane `l` of the tile's total and whose carries go up a level. Then
/// each plane is added to the `i16` counters once (masked adds of `2^l`). A feature costs
/// about four logic operations per 512 bits instead of sixteen masked adds, and the
/// tile-major arena keeps a tile's parts together; the counters come out the same
/// integers.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) fn add_xor_features(
    counts: &mut [i16],
    arena: &TiledArena,
    features: &[XorFeature],
    scratch: &mut CarrySaveScratch,
) {
    let words = counts.len() / 64;
    assert_eq!(counts.len(), words * 64);
    assert_eq!(
        arena.tiles(),
        words.div_ceil(8),
        "an arena of the counters' dimension"
    );
    let s = scratch;
    s.prepare(arena, features);
    let (data, stride) = (arena.data(), arena.stride());
    for t in 0..arena.tiles() {
        let n = (words - 8 * t).min(8);
        let row = &data[t * stride * 8..][..stride * 8];
        add_tile(&mut counts[512 * t..512 * t + 64 * n], row, s);
    }
}

/// [`add_xor_features`] for one tile: `row` holds that tile of every arena slot (8 words
/// each), `counts` the tile's `64 n` counters (`n ≤ 8` words).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn add_tile(counts: &mut [i16], row: &[u64], s: &mut CarrySaveScratch) {
    let n = counts.len() / 64;
    let zero = _mm512_setzero_si512();
    let mut planes = [zero; LEVELS];
    let mut carried = 0;
    // The XOR of a feature's three parts, and a carry of the level below.
    let feature = |[a, b, c]: [u32; 3]| {
        // SAFETY: every part is a block of the row (asserted by the caller); unaligned loads.
        unsafe {
            _mm512_ternarylogic_epi64::<0x96>(
                _mm512_loadu_si512(row.as_ptr().add(a as usize).cast()),
                _mm512_loadu_si512(row.as_ptr().add(b as usize).cast()),
                _mm512_loadu_si512(row.as_ptr().add(c as usize).cast()),
            )
        }
    };
    // SAFETY: 8 words; unaligned load.
    let carry_of = |c: &[u64; 8]| unsafe { _mm512_loadu_si512(c.as_ptr().cast()) };
    for (l, plane) in planes.iter_mut().enumerate() {
        let inputs = &s.parts[s.starts[l]..s.starts[l + 1]];
        if inputs.is_empty() && carried == 0 {
            continue;
        }
        // A chain of full adders over pairs of inputs: `ones` is the level's running sum
        // bit; each adder's carry goes to the level above.
        let mut ones = zero;
        let mut emitted = 0;
        let (carries_in, out) = (&s.carries_in[..carried], &mut s.carries_out);
        let mut add = |x: __m512i, y: __m512i| {
            let carry = _mm512_ternarylogic_epi64::<0xE8>(ones, x, y);
            ones = _mm512_ternarylogic_epi64::<0x96>(ones, x, y);
            // SAFETY: `out` has room for half of the level's inputs, and one more.
            unsafe { _mm512_storeu_si512(out[emitted].as_mut_ptr().cast(), carry) };
            emitted += 1;
        };
        let mut pairs = inputs.chunks_exact(2);
        for p in &mut pairs {
            add(feature(p[0]), feature(p[1]));
        }
        // The odd feature goes with the first carry; then the carries in pairs.
        let mut held = pairs.remainder().first().map(|&p| feature(p));
        let mut rest = carries_in;
        if let (Some(x), Some((c, after))) = (held, rest.split_first()) {
            add(x, carry_of(c));
            held = None;
            rest = after;
        }
        let mut pairs = rest.chunks_exact(2);
        for p in &mut pairs {
            add(carry_of(&p[0]), carry_of(&p[1]));
        }
        if let Some(c) = pairs.remainder().first() {
            held = Some(carry_of(c));
        }
        if let Some(h) = held {
            if emitted == 0 {
                // The only input: nothing to carry.
                ones = h;
            } else {
                let carry = _mm512_and_si512(ones, h);
                ones = _mm512_xor_si512(ones, h);
                // SAFETY: 8 words; unaligned store.
                unsafe { _mm512_storeu_si512(out[emitted].as_mut_ptr().cast(), carry) };
                emitted += 1;
            }
        }
        *plane = ones;
        std::mem::swap(&mut s.carries_in, &mut s.carries_out);
        carried = emitted;
    }
    debug_assert!(
        s.carries_in[..carried]
            .iter()
            .all(|c| c.iter().all(|&w| w == 0)),
        "a sum beyond the counters' range"
    );
    // Each plane's bits into the counters: 2^l where set, one group of 32 counters at a
    // time (it stays in a register while every plane is added).
    let mut bits = [[0u64; 8]; LEVELS];
    let mut used = [0usize; LEVELS];
    let mut k = 0;
    for (l, plane) in planes.iter().enumerate() {
        if _mm512_test_epi64_mask(*plane, *plane) != 0 {
            // SAFETY: 8 words; unaligned store.
            unsafe { _mm512_storeu_si512(bits[k].as_mut_ptr().cast(), *plane) };
            used[k] = l;
            k += 1;
        }
    }
    let base = counts.as_mut_ptr().cast::<__m512i>();
    for j in 0..2 * n {
        // SAFETY: register `j` covers counters 32 j .. 32 j + 32 of the `64 n`.
        let mut a = unsafe { _mm512_loadu_si512(base.add(j)) };
        for (plane, &l) in bits[..k].iter().zip(&used) {
            // SAFETY: `j < 16`, and a plane is 8 words = 16 `u32` masks.
            let m = unsafe { _load_mask32(plane.as_ptr().cast::<u32>().add(j)) };
            a = _mm512_mask_add_epi16(a, m, a, _mm512_set1_epi16(1 << l));
        }
        // SAFETY: as for the load.
        unsafe { _mm512_storeu_si512(base.add(j), a) };
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
