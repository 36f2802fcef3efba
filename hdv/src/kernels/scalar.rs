//! Portable reference kernels: plain `u64` XOR and `count_ones`. Every SIMD kernel is
//! property-tested against these, and they run wherever no SIMD tier is available.

/// Hamming distance between two equal-length word slices.
#[inline]
pub(crate) fn hamming(a: &[u64], b: &[u64]) -> u32 {
    debug_assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// Distances from `query` to each `query.len()`-word vector of `block`.
pub(crate) fn distances(query: &[u64], block: &[u64], out: &mut [u32]) {
    for (v, o) in block.chunks_exact(query.len()).zip(out.iter_mut()) {
        *o = hamming(query, v);
    }
}

/// All-pairs distances, `out[q * nv + v]`.
pub(crate) fn distances_many(queries: &[u64], block: &[u64], words: usize, out: &mut [u32]) {
    let nv = block.len() / words;
    for (q, row) in queries
        .chunks_exact(words)
        .zip(out.chunks_exact_mut(nv.max(1)))
    {
        distances(q, block, row);
    }
}

/// XOR of every word (eight independent lanes, so the compiler vectorizes the fold).
pub(crate) fn fold_xor(words: &[u64]) -> u64 {
    let mut acc = [0u64; 8];
    let chunks = words.chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (a, w) in acc.iter_mut().zip(chunk) {
            *a ^= w;
        }
    }
    acc.iter().chain(rest).fold(0, |x, y| x ^ y)
}
