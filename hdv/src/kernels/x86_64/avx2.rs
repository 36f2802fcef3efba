//! AVX2 kernels. AVX2 has no vector popcount, so bytes are counted with the nibble
//! lookup of Muła, Kurz and Lemire (`VPSHUFB` on both nibbles), and byte counts are summed
//! into 64-bit lanes with `VPSADBW`. Leftover words use the scalar `POPCNT` instruction.
//! The all-pairs kernel splits each query into its nibbles once per call: the nibbles of
//! `q ^ v` are those of `q` XOR those of `v`, so a pair costs two XORs, two lookups and two
//! byte adds instead of also shifting and masking its XOR.

use core::arch::x86_64::{
    __m256i, _mm256_add_epi8, _mm256_add_epi64, _mm256_and_si256, _mm256_extract_epi64,
    _mm256_loadu_si256, _mm256_sad_epu8, _mm256_set1_epi8, _mm256_setr_epi8, _mm256_setzero_si256,
    _mm256_shuffle_epi8, _mm256_srli_epi16, _mm256_xor_si256,
};

/// Queries per register tile in the all-pairs kernel ([`nibble_tile`]; 6 × 1 measured
/// fastest of 2 × 2 to 6 × 1 on Zen 3, `docs/EXPERIMENTS.md`).
const PAIRS_Q: usize = 6;
/// Every byte's low nibble.
const LOW_NIBBLES: u64 = 0x0f0f_0f0f_0f0f_0f0f;
/// Vectors per tile in the single-query scan.
const SCAN_V: usize = 1;

/// The popcount of each nibble value 0..16, in both 128-bit lanes (a `VPSHUFB` table).
#[inline]
#[target_feature(enable = "avx2")]
fn nibble_counts() -> __m256i {
    _mm256_setr_epi8(
        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, //
        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
    )
}

/// Per-byte popcount of `x` (each byte 0..=8).
#[inline]
#[target_feature(enable = "avx2")]
fn popcnt_bytes(x: __m256i) -> __m256i {
    let lut = nibble_counts();
    let low = _mm256_set1_epi8(0x0f);
    let lo = _mm256_and_si256(x, low);
    let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(x), low);
    _mm256_add_epi8(_mm256_shuffle_epi8(lut, lo), _mm256_shuffle_epi8(lut, hi))
}

/// Loads the 4-word chunk at word offset `i`.
///
/// # Safety
/// `p.add(i)..p.add(i + 4)` must be readable.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load(p: *const u64, i: usize) -> __m256i {
    // SAFETY: the caller guarantees 4 readable words; `loadu` has no alignment need.
    unsafe { _mm256_loadu_si256(p.add(i).cast()) }
}

#[inline]
#[target_feature(enable = "avx2")]
fn hsum(x: __m256i) -> u64 {
    (_mm256_extract_epi64::<0>(x)
        + _mm256_extract_epi64::<1>(x)
        + _mm256_extract_epi64::<2>(x)
        + _mm256_extract_epi64::<3>(x)) as u64
}

/// `Q × V` distances between vectors of `words` words. Each pair's byte counts add up in
/// a byte register for up to 31 chunks (31 × 8 < 256) before one `VPSADBW` folds them into
/// its 64-bit sums: eight vector operations per pair and chunk instead of ten.
///
/// # Safety
/// Every pointer must address `words` readable `u64`s.
#[inline]
#[allow(clippy::needless_range_loop)]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn tile<const Q: usize, const V: usize>(
    qs: [*const u64; Q],
    vs: [*const u64; V],
    words: usize,
) -> [[u32; V]; Q] {
    // Index loops over const-sized arrays (no closures) so the tile stays in registers.
    let zero = _mm256_setzero_si256();
    let mut acc = [[zero; V]; Q];
    let mut q = [zero; Q];
    let mut v = [zero; V];
    let mut i = 0;
    while i + 4 <= words {
        let mut bytes = [[zero; V]; Q];
        let mut chunks = 0;
        while i + 4 <= words && chunks < 31 {
            for j in 0..Q {
                // SAFETY: i + 4 <= words for every pointer.
                q[j] = unsafe { load(qs[j], i) };
            }
            for j in 0..V {
                // SAFETY: as above.
                v[j] = unsafe { load(vs[j], i) };
            }
            for a in 0..Q {
                for b in 0..V {
                    let counts = popcnt_bytes(_mm256_xor_si256(q[a], v[b]));
                    bytes[a][b] = _mm256_add_epi8(bytes[a][b], counts);
                }
            }
            i += 4;
            chunks += 1;
        }
        for a in 0..Q {
            for b in 0..V {
                acc[a][b] = _mm256_add_epi64(acc[a][b], _mm256_sad_epu8(bytes[a][b], zero));
            }
        }
    }
    let mut out = [[0u32; V]; Q];
    for a in 0..Q {
        for b in 0..V {
            let mut d = hsum(acc[a][b]) as u32;
            for j in i..words {
                // SAFETY: j < words for every pointer.
                d += unsafe { *qs[a].add(j) ^ *vs[b].add(j) }.count_ones();
            }
            out[a][b] = d;
        }
    }
    out
}

/// One query against `V` vectors.
///
/// # Safety
/// Every pointer must address `words` readable `u64`s.
#[inline]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn scan_tile<const V: usize>(q: *const u64, vs: [*const u64; V], words: usize) -> [u32; V] {
    // SAFETY: forwarded contract.
    unsafe { tile::<1, V>([q], vs, words)[0] }
}

/// Hamming distance between two equal-length word slices.
#[target_feature(enable = "avx2,popcnt")]
pub(crate) fn hamming(a: &[u64], b: &[u64]) -> u32 {
    assert_eq!(a.len(), b.len());
    // Byte counters hold at most 8 per chunk: flush them every 31 chunks (31 * 8 < 256).
    let (pa, pb, n) = (a.as_ptr(), b.as_ptr(), a.len());
    let zero = _mm256_setzero_si256();
    let mut total = _mm256_setzero_si256();
    let mut i = 0;
    while i + 4 <= n {
        let mut bytes = _mm256_setzero_si256();
        let mut chunks = 0;
        while i + 4 <= n && chunks < 31 {
            // SAFETY: i + 4 <= n for both slices.
            let x = unsafe { _mm256_xor_si256(load(pa, i), load(pb, i)) };
            bytes = _mm256_add_epi8(bytes, popcnt_bytes(x));
            i += 4;
            chunks += 1;
        }
        total = _mm256_add_epi64(total, _mm256_sad_epu8(bytes, zero));
    }
    let mut sum = hsum(total) as u32;
    for j in i..n {
        sum += (a[j] ^ b[j]).count_ones();
    }
    sum
}

/// XOR of all `words`: eight independent 256-bit accumulators with the scan's software
/// prefetch distance, so the sequential-read yardstick reads as fast as this tier can.
#[target_feature(enable = "avx2")]
pub(crate) fn fold_xor(words: &[u64]) -> u64 {
    let (p, n) = (words.as_ptr(), words.len());
    let mut acc = [_mm256_setzero_si256(); 8];
    let mut i = 0;
    while i + 32 <= n {
        // Four 64-byte lines per step: the same prefetch distance as the scan.
        let ahead = p
            .wrapping_add(i)
            .cast::<i8>()
            .wrapping_add(super::PREFETCH_BYTES);
        for line in 0..4 {
            super::prefetch(ahead.wrapping_add(64 * line));
        }
        for (j, a) in acc.iter_mut().enumerate() {
            // SAFETY: i + 4 * j + 4 <= i + 32 <= n.
            *a = _mm256_xor_si256(*a, unsafe { load(p, i + 4 * j) });
        }
        i += 32;
    }
    let folded = acc
        .into_iter()
        .fold(_mm256_setzero_si256(), |a, b| _mm256_xor_si256(a, b));
    let lanes = [
        _mm256_extract_epi64::<0>(folded) as u64,
        _mm256_extract_epi64::<1>(folded) as u64,
        _mm256_extract_epi64::<2>(folded) as u64,
        _mm256_extract_epi64::<3>(folded) as u64,
    ];
    lanes.iter().chain(&words[i..]).fold(0, |x, y| x ^ y)
}

super::scan_kernel!("avx2,popcnt", distances, SCAN_V);

/// Distances from `Q` queries, each given as its split nibbles (`words` words of low
/// nibbles, then `words` of high ones, [`split_nibbles`]), to the vector at `v`.
///
/// # Safety
/// Every query pointer must address `2 * words` readable `u64`s, `v` `words`.
#[inline]
#[allow(clippy::needless_range_loop)]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn nibble_tile<const Q: usize>(
    qs: [*const u64; Q],
    v: *const u64,
    words: usize,
) -> [u32; Q] {
    let zero = _mm256_setzero_si256();
    let lut = nibble_counts();
    let low = _mm256_set1_epi8(0x0f);
    let mut acc = [zero; Q];
    let mut i = 0;
    while i + 4 <= words {
        // Byte counts reach at most 8 a chunk: fold them every 31 chunks (31 × 8 < 256).
        let mut bytes = [zero; Q];
        let mut chunks = 0;
        while i + 4 <= words && chunks < 31 {
            // SAFETY: i + 4 <= words for every pointer.
            let x = unsafe { load(v, i) };
            let (vl, vh) = (
                _mm256_and_si256(x, low),
                _mm256_and_si256(_mm256_srli_epi16::<4>(x), low),
            );
            for a in 0..Q {
                // SAFETY: the query holds 2 * words words; i + 4 <= words.
                let (ql, qh) = unsafe { (load(qs[a], i), load(qs[a], words + i)) };
                let lo = _mm256_shuffle_epi8(lut, _mm256_xor_si256(ql, vl));
                let hi = _mm256_shuffle_epi8(lut, _mm256_xor_si256(qh, vh));
                bytes[a] = _mm256_add_epi8(bytes[a], _mm256_add_epi8(lo, hi));
            }
            i += 4;
            chunks += 1;
        }
        for a in 0..Q {
            acc[a] = _mm256_add_epi64(acc[a], _mm256_sad_epu8(bytes[a], zero));
        }
    }
    let mut out = [0u32; Q];
    for a in 0..Q {
        let mut d = hsum(acc[a]) as u32;
        for j in i..words {
            // SAFETY: j < words for every pointer.
            let (x, ql, qh) = unsafe { (*v.add(j), *qs[a].add(j), *qs[a].add(words + j)) };
            d += (ql ^ (x & LOW_NIBBLES)).count_ones()
                + (qh ^ ((x >> 4) & LOW_NIBBLES)).count_ones();
        }
        out[a] = d;
    }
    out
}

/// Each `words`-word query's low nibbles, then its high nibbles (each byte's bits 4..8
/// shifted down), query after query.
fn split_nibbles(queries: &[u64], words: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(2 * queries.len());
    for q in queries.chunks_exact(words) {
        out.extend(q.iter().map(|x| x & LOW_NIBBLES));
        out.extend(q.iter().map(|x| (x >> 4) & LOW_NIBBLES));
    }
    out
}

/// All-pairs distances between `queries` and `block` (both of `words`-word vectors),
/// row-major: `out[q * nv + v]`. The queries are split into nibbles once per call (a few
/// µs against the call's hundreds), then each vector of the block is compared with
/// [`PAIRS_Q`] queries at a time.
#[target_feature(enable = "avx2,popcnt")]
pub(crate) fn distances_many(queries: &[u64], block: &[u64], words: usize, out: &mut [u32]) {
    let split = split_nibbles(queries, words);
    let nq = queries.len() / words;
    let nv = block.len() / words;
    assert_eq!(out.len(), nq * nv);
    let sp = split.as_ptr();
    // SAFETY: callers pass i < nq, so the pointer and its 2 * words words lie in `split`.
    let qptr = |i: usize| unsafe { sp.add(i * 2 * words) };
    let bp = block.as_ptr();
    let full_q = nq - nq % PAIRS_Q;
    for q0 in (0..full_q).step_by(PAIRS_Q) {
        let qs: [*const u64; PAIRS_Q] = core::array::from_fn(|j| qptr(q0 + j));
        for v in 0..nv {
            // SAFETY: v < nv, so the vector's words lie in `block`; queries as above.
            let d = unsafe { nibble_tile::<PAIRS_Q>(qs, bp.add(v * words), words) };
            for (j, d) in d.into_iter().enumerate() {
                out[(q0 + j) * nv + v] = d;
            }
        }
    }
    for q in full_q..nq {
        for v in 0..nv {
            // SAFETY: as above.
            out[q * nv + v] = unsafe { nibble_tile::<1>([qptr(q)], bp.add(v * words), words) }[0];
        }
    }
}
