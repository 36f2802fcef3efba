//! Hamming-distance kernels and their run-time dispatch.
//!
//! Three tiers compute the same results: [`KernelKind::Scalar`] (portable reference),
//! [`KernelKind::Avx2`] (nibble-lookup popcount) and [`KernelKind::Avx512`] (`VPOPCNTQ`).
//! The best tier this CPU supports is chosen once, on first use, and cached; the environment
//! variable `HDV_KERNEL=scalar|avx2|avx512` forces one. [`crate::kernel_name`] reports it.
//!
//! The same tiers dispatch the dense-layer kernel of a local sentence model ([`dense`],
//! [`Kernel::linear`]): the portable reference on the scalar tier, AVX2 with FMA and F16C
//! on the wider ones.
//!
//! A [`Kernel`] value can only be obtained for a tier the CPU supports, which is what makes
//! its methods safe to call.

use std::fmt;
use std::sync::OnceLock;

use crate::error::{Error, Result};

pub mod dense;
pub(crate) mod scalar;
pub(crate) mod votes;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_64;

/// The environment variable that forces a kernel tier.
pub const KERNEL_ENV: &str = "HDV_KERNEL";

/// A kernel tier, supported by this CPU or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum KernelKind {
    /// Portable `u64` XOR + `count_ones`.
    Scalar,
    /// AVX2 with the nibble-lookup popcount.
    Avx2,
    /// AVX-512F with `VPOPCNTDQ`.
    Avx512,
}

impl KernelKind {
    /// Every tier, slowest first.
    pub const ALL: [KernelKind; 3] = [KernelKind::Scalar, KernelKind::Avx2, KernelKind::Avx512];

    /// The name used by `HDV_KERNEL` and [`crate::kernel_name`].
    pub const fn name(self) -> &'static str {
        match self {
            KernelKind::Scalar => "scalar",
            KernelKind::Avx2 => "avx2",
            KernelKind::Avx512 => "avx512",
        }
    }

    /// Parses a tier name (`scalar`, `avx2`, `avx512`; case-insensitive).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name.trim()))
    }

    /// Whether this CPU can run the tier.
    pub fn is_supported(self) -> bool {
        match self {
            KernelKind::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            KernelKind::Avx2 => x86_64::has_avx2(),
            #[cfg(target_arch = "x86_64")]
            KernelKind::Avx512 => x86_64::has_avx512(),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }
}

impl fmt::Display for KernelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A kernel tier this CPU is known to support. Cheap to copy; its methods dispatch with one
/// `match` per call, so call them per block, not per word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Kernel(KernelKind);

impl Kernel {
    /// The kernel for `kind`, if this CPU supports it.
    pub fn new(kind: KernelKind) -> Option<Self> {
        kind.is_supported().then_some(Self(kind))
    }

    /// The portable reference kernel (always available).
    pub const fn scalar() -> Self {
        Self(KernelKind::Scalar)
    }

    /// The fastest tier this CPU supports, ignoring `HDV_KERNEL`.
    pub fn best() -> Self {
        KernelKind::ALL
            .into_iter()
            .rev()
            .find_map(Self::new)
            .unwrap_or(Self::scalar())
    }

    /// Every tier this CPU supports, slowest first.
    pub fn available() -> Vec<Self> {
        KernelKind::ALL.into_iter().filter_map(Self::new).collect()
    }

    /// Which tier this is.
    pub const fn kind(self) -> KernelKind {
        self.0
    }

    /// Its name (`scalar`, `avx2`, `avx512`).
    pub const fn name(self) -> &'static str {
        self.0.name()
    }

    /// Hamming distance between two word slices of equal length.
    ///
    /// # Panics
    /// If the lengths differ.
    #[inline]
    pub fn hamming(self, a: &[u64], b: &[u64]) -> u32 {
        assert_eq!(a.len(), b.len(), "hamming: word slices of different length");
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `Kernel` of this kind exists only if the CPU supports AVX-512 VPOPCNTDQ.
            KernelKind::Avx512 => unsafe { x86_64::avx512::hamming(a, b) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `Kernel` of this kind exists only if the CPU supports AVX2 and POPCNT.
            KernelKind::Avx2 => unsafe { x86_64::avx2::hamming(a, b) },
            _ => scalar::hamming(a, b),
        }
    }

    /// `out = x Wᵀ + b` for every row of `x` (rows of `shape.input` values; `out` the same
    /// rows of `shape.output`), the weights read where they lie ([`dense::Weights`]: `f32`
    /// or half precision). The scalar tier runs the portable reference, the AVX2 and
    /// AVX-512 tiers the AVX2 + FMA + F16C kernel where the CPU has FMA and F16C. Returns
    /// `false`, writing nothing, when the operands do not fit together or `input` is not
    /// a multiple of 8 or `output` is odd (the caller multiplies another way).
    pub fn linear(
        self,
        x: &[f32],
        weights: dense::Weights<'_>,
        bias: &[f32],
        shape: dense::Shape,
        out: &mut [f32],
    ) -> bool {
        if !dense::suits(x, &weights, bias, shape, out) {
            return false;
        }
        #[cfg(target_arch = "x86_64")]
        if self.dense_simd() {
            // SAFETY: `dense_simd` checked AVX2, FMA and F16C; the operands suit.
            unsafe { x86_64::dense::linear(x, weights, bias, shape, out) };
            return true;
        }
        dense::linear_scalar(x, weights, bias, shape, out);
        true
    }

    /// Whether [`linear`](Self::linear) runs the AVX2 + FMA + F16C kernel on this tier
    /// (which reads half-precision weights natively) rather than the portable reference.
    pub fn dense_simd(self) -> bool {
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            KernelKind::Avx2 | KernelKind::Avx512 => x86_64::dense::supported(),
            _ => false,
        }
    }

    /// The name of what [`linear`](Self::linear) runs on this tier: `avx2-fma-f16c` or
    /// `scalar`.
    pub fn dense_name(self) -> &'static str {
        if self.dense_simd() {
            "avx2-fma-f16c"
        } else {
            "scalar"
        }
    }

    /// XOR of all `words`, reading each exactly once at the widest width the tier has: the
    /// sequential-read yardstick that scan throughput is compared with (see
    /// `examples/scan_bandwidth.rs`).
    pub fn fold_xor(self, words: &[u64]) -> u64 {
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `Kernel` of this kind exists only if the CPU supports AVX-512F.
            KernelKind::Avx512 => unsafe { x86_64::avx512::fold_xor(words) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `Kernel` of this kind exists only if the CPU supports AVX2.
            KernelKind::Avx2 => unsafe { x86_64::avx2::fold_xor(words) },
            _ => scalar::fold_xor(words),
        }
    }

    /// Distances from `query` to each of the `out.len()` consecutive vectors in `block`,
    /// each `query.len()` words long.
    ///
    /// # Panics
    /// If `query` is empty or `block.len() != query.len() * out.len()`.
    pub fn distances(self, query: &[u64], block: &[u64], out: &mut [u32]) {
        assert!(!query.is_empty(), "distances: empty query");
        assert_eq!(
            block.len(),
            query.len() * out.len(),
            "distances: block does not hold out.len() vectors of the query's length"
        );
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: see `hamming`.
            KernelKind::Avx512 => unsafe { x86_64::scan_tile::distances(query, block, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: see `hamming`.
            KernelKind::Avx2 => unsafe { x86_64::avx2::distances(query, block, out) },
            _ => scalar::distances(query, block, out),
        }
    }

    /// All-pairs distances between the vectors of `queries` and those of `block` (both made
    /// of `words`-word vectors), row-major: `out[q * n_block + v]`. Register-blocked, so
    /// every chunk loaded is compared with several queries while it is in registers.
    ///
    /// # Panics
    /// If `words == 0`, a slice is not a whole number of vectors, or
    /// `out.len() != n_queries * n_block`.
    pub fn distances_many(self, queries: &[u64], block: &[u64], words: usize, out: &mut [u32]) {
        assert!(words > 0, "distances_many: zero-word vectors");
        assert!(
            queries.len().is_multiple_of(words) && block.len().is_multiple_of(words),
            "distances_many: slices are not whole vectors"
        );
        assert_eq!(
            out.len(),
            (queries.len() / words) * (block.len() / words),
            "distances_many: output is not n_queries x n_block"
        );
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: see `hamming`.
            KernelKind::Avx512 => unsafe {
                x86_64::avx512::distances_many(queries, block, words, out)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: see `hamming`.
            KernelKind::Avx2 => unsafe { x86_64::avx2::distances_many(queries, block, words, out) },
            _ => scalar::distances_many(queries, block, words, out),
        }
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Asks the CPU to start loading `words` into cache (one hint per 64-byte line) so a later
/// distance computation on them does not wait for memory. Graph searches call this for
/// every neighbour before comparing any, overlapping the memory latencies. A no-op where
/// the architecture has no prefetch hint.
#[inline]
pub fn prefetch(words: &[u64]) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = words.as_ptr().cast::<i8>();
        let bytes = words.len() * 8;
        let mut off = 0;
        while off < bytes {
            x86_64::prefetch(p.wrapping_add(off));
            off += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = words;
}

/// Runs `scan`, a single-query scan of `bytes` with `kernel`'s [`Kernel::distances`]: on
/// the AVX-512 tier, while its tile is not chosen yet, as a timed trial of one of them
/// ([`scan_tile`]).
pub(crate) fn measured<R>(kernel: Kernel, bytes: usize, scan: impl FnOnce() -> R) -> R {
    match kernel.kind() {
        #[cfg(target_arch = "x86_64")]
        KernelKind::Avx512 => x86_64::scan_tile::measured(bytes, scan),
        _ => scan(),
    }
}

/// Vectors per tile of the active kernel's single-query scan: 1 on the AVX2 tier; on
/// AVX-512 the tile measured fastest on this process's first scans (four interleaved read
/// streams or one; `HDV_SCAN_TILE=1|4` forces it), `None` while it is being measured;
/// `None` on the scalar tier.
pub fn scan_tile() -> Option<usize> {
    match active().kind() {
        #[cfg(target_arch = "x86_64")]
        KernelKind::Avx512 => x86_64::scan_tile::chosen(),
        #[cfg(target_arch = "x86_64")]
        KernelKind::Avx2 => Some(1),
        _ => None,
    }
}

/// Resolves the kernel from an optional `HDV_KERNEL` value.
///
/// # Errors
/// [`Error::UnavailableKernel`] for an unknown name or a tier this CPU lacks: forcing a tier
/// never falls back silently.
pub fn select(requested: Option<&str>) -> Result<Kernel> {
    let Some(name) = requested.filter(|s| !s.trim().is_empty()) else {
        return Ok(Kernel::best());
    };
    let kind = KernelKind::parse(name).ok_or_else(|| Error::UnavailableKernel {
        requested: name.to_owned(),
        reason: "unknown kernel; expected one of scalar, avx2, avx512".to_owned(),
    })?;
    Kernel::new(kind).ok_or_else(|| Error::UnavailableKernel {
        requested: name.to_owned(),
        reason: format!("this CPU does not support the {kind} kernel"),
    })
}

static ACTIVE: OnceLock<Result<Kernel>> = OnceLock::new();

/// The kernel chosen for this process (from `HDV_KERNEL` or CPU detection), resolved once.
///
/// # Errors
/// See [`select`].
pub fn try_active() -> Result<Kernel> {
    match ACTIVE.get_or_init(|| select(std::env::var(KERNEL_ENV).ok().as_deref())) {
        Ok(k) => Ok(*k),
        Err(e) => Err(e.clone()),
    }
}

/// The kernel chosen for this process.
///
/// # Panics
/// If `HDV_KERNEL` names an unknown tier or one this CPU cannot run; use [`try_active`] to
/// handle that as an error.
#[inline]
pub fn active() -> Kernel {
    match try_active() {
        Ok(k) => k,
        Err(e) => panic!("{e}"),
    }
}
