//! AVX2 kernels. AVX2 has no vector popcount, so bytes are counted with the nibble
//! lookup of Muła, Kurz and Lemire (`VPSHUFB` on both nibbles), and byte counts are summed
//! into 64-bit lanes with `VPSADBW`. Leftover words use the scalar `POPCNT` instruction.

use core::arch::x86_64::{
    __m256i, _mm256_add_epi8, _mm256_add_epi64, _mm256_and_si256, _mm256_extract_epi64,
    _mm256_loadu_si256, _mm256_sad_epu8, _mm256_set1_epi8, _mm256_setr_epi8, _mm256_setzero_si256,
    _mm256_shuffle_epi8, _mm256_srli_epi16, _mm256_xor_si256,
};

/// Queries per register tile in the all-pairs kernel.
const TILE_Q: usize = 2;
/// Vectors per register tile in the all-pairs kernel.
const TILE_V: usize = 2;
/// Vectors per tile in the single-query scan.
const SCAN_V: usize = 2;

/// Per-byte popcount of `x` (each byte 0..=8).
#[inline]
#[target_feature(enable = "avx2")]
fn popcnt_bytes(x: __m256i) -> __m256i {
    let lut = _mm256_setr_epi8(
        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, //
        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
    );
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

/// `Q × V` distances between vectors of `words` words.
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
    let mut acc = [[_mm256_setzero_si256(); V]; Q];
    let mut q = [_mm256_setzero_si256(); Q];
    let mut v = [_mm256_setzero_si256(); V];
    let zero = _mm256_setzero_si256();
    let mut i = 0;
    while i + 4 <= words {
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
                let bytes = popcnt_bytes(_mm256_xor_si256(q[a], v[b]));
                acc[a][b] = _mm256_add_epi64(acc[a][b], _mm256_sad_epu8(bytes, zero));
            }
        }
        i += 4;
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

super::block_kernels!("avx2,popcnt");
