//! x86-64 SIMD kernels. Each function carries `#[target_feature]`; callers must have checked
//! the features at run time (the [`Kernel`](crate::kernels::Kernel) constructor does).

pub(crate) mod avx2;
pub(crate) mod avx512;
pub(crate) mod dense;
pub(crate) mod scan_tile;
pub(crate) mod votes;

/// Whether this CPU can run the AVX2 kernel.
pub(crate) fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("popcnt")
}

/// Whether this CPU can run the AVX-512 VPOPCNTDQ kernel.
pub(crate) fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
}

/// Whether this CPU can run the AVX-512 vote kernels ([`votes`]: F and BW).
pub(crate) fn has_avx512bw() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
}

/// How far ahead of the vectors being compared the single-query scan prefetches.
pub(crate) const PREFETCH_BYTES: usize = 5120;

/// Hints the CPU to pull the cache line at `p` into L1. Never faults, whatever `p` is.
#[inline(always)]
pub(crate) fn prefetch(p: *const i8) {
    use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
    // SAFETY: a prefetch is a hint; it does not fault or read memory observably, even for
    // addresses past the end of an allocation.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(p) }
}

/// Expands, inside a kernel module that defines `scan_tile::<V>` and `hamming`, the
/// single-query block kernel `$name` built from them with `$v` vectors per tile (`$v`
/// interleaved read streams), with software prefetch. Both tiers share this driver so they
/// differ only in their register tile.
macro_rules! scan_kernel {
    ($features:literal, $name:ident, $v:expr) => {
        /// Distances from `query` to each vector of `block` (`out.len()` vectors of
        /// `query.len()` words).
        #[target_feature(enable = $features)]
        pub(crate) fn $name(query: &[u64], block: &[u64], out: &mut [u32]) {
            const TILE: usize = $v;
            let w = query.len();
            assert_eq!(block.len(), w * out.len());
            let (q, b, n) = (query.as_ptr(), block.as_ptr(), out.len());
            let mut v = 0;
            let group_bytes = TILE * w * 8;
            while v + TILE <= n {
                // Software prefetch PREFETCH_BYTES ahead, one line at a time:
                // hardware prefetchers alone leave this stream short of read bandwidth.
                let ahead = b.wrapping_add(v * w).cast::<i8>().wrapping_add($crate::kernels::x86_64::PREFETCH_BYTES);
                let mut off = 0;
                while off < group_bytes {
                    $crate::kernels::x86_64::prefetch(ahead.wrapping_add(off));
                    off += 64;
                }
                let ptrs: [*const u64; TILE] =
                    // SAFETY: vectors v..v + TILE lie inside `block` (asserted length).
                    core::array::from_fn(|j| unsafe { b.add((v + j) * w) });
                // SAFETY: every pointer addresses `w` readable words.
                let d = unsafe { scan_tile::<TILE>(q, ptrs, w) };
                out[v..v + TILE].copy_from_slice(&d);
                v += TILE;
            }
            while v < n {
                out[v] = hamming(query, &block[v * w..(v + 1) * w]);
                v += 1;
            }
        }
    };
}
pub(crate) use scan_kernel;
