//! Packed binary hypervectors: the owned [`Hypervector`], the borrowed [`HvRef`] view and the
//! validated dimension [`Dim`].
//!
//! # Bit order
//! A vector of `D` bits is stored in `D / 64` little-endian `u64` words: bit `i` lives in word
//! `i / 64` at position `i % 64` (value `1 << (i % 64)`). Because `D` is a multiple of 64 the
//! last word is always full; the "tail bits are zero" rule therefore only matters for views
//! built from foreign data, which are validated on construction.

use std::fmt;

use bitvec::order::Lsb0;
use bitvec::slice::BitSlice;

use crate::error::{Error, Result};
use crate::kernels;
use crate::rng::SeededRng;

/// Default dimension: 8,192 bits (128 words, 1 KiB per vector).
pub const DEFAULT_DIM: usize = 8_192;

/// A validated dimension: a positive multiple of 64 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(try_from = "usize", into = "usize"))]
pub struct Dim(usize);

impl Dim {
    /// Validates a dimension in bits.
    ///
    /// # Errors
    /// [`Error::ZeroDimension`] for 0, [`Error::DimensionNotMultipleOf64`] otherwise invalid.
    pub const fn new(bits: usize) -> Result<Self> {
        if bits == 0 {
            Err(Error::ZeroDimension)
        } else if !bits.is_multiple_of(64) {
            Err(Error::DimensionNotMultipleOf64 { bits })
        } else {
            Ok(Self(bits))
        }
    }

    /// The smallest valid dimension holding at least `bits` bits: `bits` rounded up to a
    /// multiple of 64 (`Dim::new` refuses anything else).
    ///
    /// ```
    /// use hdv::Dim;
    /// assert_eq!(Dim::round_up(10_000).unwrap().bits(), 10_048);
    /// assert_eq!(Dim::round_up(8_192).unwrap().bits(), 8_192);
    /// assert!(Dim::round_up(0).is_err());
    /// ```
    ///
    /// # Errors
    /// [`Error::ZeroDimension`] for 0 bits.
    pub const fn round_up(bits: usize) -> Result<Self> {
        Self::from_words(bits.div_ceil(64))
    }

    /// The dimension for a given number of 64-bit words.
    ///
    /// # Errors
    /// [`Error::ZeroDimension`] for 0 words.
    pub const fn from_words(words: usize) -> Result<Self> {
        Self::new(words * 64)
    }

    /// Number of bits, `D`.
    #[inline]
    pub const fn bits(self) -> usize {
        self.0
    }

    /// Number of `u64` words, `D / 64`.
    #[inline]
    pub const fn words(self) -> usize {
        self.0 / 64
    }

    /// Number of bytes one vector occupies, `D / 8`.
    #[inline]
    pub const fn bytes(self) -> usize {
        self.0 / 8
    }
}

impl Default for Dim {
    fn default() -> Self {
        Self(DEFAULT_DIM)
    }
}

impl TryFrom<usize> for Dim {
    type Error = Error;
    fn try_from(bits: usize) -> Result<Self> {
        Self::new(bits)
    }
}

impl From<Dim> for usize {
    fn from(d: Dim) -> usize {
        d.0
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bits", self.0)
    }
}

/// Anything that can be viewed as a hypervector without copying.
pub trait AsHv {
    /// A borrowed view of the vector.
    fn as_hv(&self) -> HvRef<'_>;
}

/// A borrowed hypervector: a word slice plus its dimension. `Copy`, never allocates.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct HvRef<'a> {
    words: &'a [u64],
}

impl<'a> HvRef<'a> {
    /// Views `words` as one hypervector of `words.len() * 64` bits.
    ///
    /// # Errors
    /// [`Error::ZeroDimension`] for an empty slice.
    pub fn new(words: &'a [u64]) -> Result<Self> {
        Dim::from_words(words.len())?;
        Ok(Self { words })
    }

    /// Views `words` as a hypervector that must have dimension `dim`.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] when the slice length does not match.
    pub fn with_dim(words: &'a [u64], dim: Dim) -> Result<Self> {
        if words.len() != dim.words() {
            return Err(Error::DimensionMismatch {
                expected: dim.bits(),
                found: words.len() * 64,
            });
        }
        Ok(Self { words })
    }

    /// Internal constructor for slices already known to be non-empty.
    #[inline]
    pub(crate) fn from_words_unchecked(words: &'a [u64]) -> Self {
        debug_assert!(!words.is_empty());
        Self { words }
    }

    /// The packed words (bit order documented at module level).
    #[inline]
    pub fn words(&self) -> &'a [u64] {
        self.words
    }

    /// The dimension.
    #[inline]
    pub fn dim(&self) -> Dim {
        Dim(self.words.len() * 64)
    }

    /// A readable bit-level view (debugging, encoders); never used in hot loops.
    pub fn bits(&self) -> &'a BitSlice<u64, Lsb0> {
        BitSlice::from_slice(self.words)
    }

    /// Bit `i`.
    ///
    /// # Panics
    /// If `i >= D`.
    #[inline]
    pub fn bit(&self, i: usize) -> bool {
        (self.words[i / 64] >> (i % 64)) & 1 == 1
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }

    /// Hamming distance: the number of differing bits, with the dispatched SIMD kernel.
    ///
    /// # Panics
    /// If the dimensions differ.
    #[inline]
    pub fn hamming(&self, other: &impl AsHv) -> u32 {
        let other = other.as_hv();
        assert_same_dim(self.dim(), other.dim());
        kernels::active().hamming(self.words, other.words)
    }

    /// Similarity in `[-1, 1]`: `1 - 2 * hamming / D` (0 for unrelated random vectors).
    ///
    /// # Panics
    /// If the dimensions differ.
    #[inline]
    pub fn similarity(&self, other: &impl AsHv) -> f64 {
        1.0 - 2.0 * f64::from(self.hamming(other)) / self.dim().bits() as f64
    }

    /// Copies the view into an owned vector.
    pub fn to_owned(&self) -> Hypervector {
        Hypervector {
            words: self.words.to_vec(),
        }
    }
}

impl AsHv for HvRef<'_> {
    #[inline]
    fn as_hv(&self) -> HvRef<'_> {
        *self
    }
}

impl fmt::Debug for HvRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_words(self.words, f)
    }
}

fn debug_words(words: &[u64], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(f, "Hv[{} bits, {} ones: ", words.len() * 64, {
        words.iter().map(|w| w.count_ones()).sum::<u32>()
    })?;
    for w in words.iter().take(2) {
        write!(f, "{w:016x} ")?;
    }
    if words.len() > 2 {
        write!(f, "…")?;
    }
    write!(f, "]")
}

/// An owned binary hypervector of run-time dimension `D` (a multiple of 64).
#[derive(Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(try_from = "HypervectorRepr", into = "HypervectorRepr")
)]
pub struct Hypervector {
    words: Vec<u64>,
}

#[track_caller]
pub(crate) fn assert_same_dim(a: Dim, b: Dim) {
    assert!(
        a == b,
        "hypervector dimension mismatch: {} vs {}",
        a.bits(),
        b.bits()
    );
}

impl Hypervector {
    /// The all-zero vector.
    pub fn zeros(dim: Dim) -> Self {
        Self {
            words: vec![0; dim.words()],
        }
    }

    /// A uniformly random vector, fully determined by `(dim, seed)`: the words are the first
    /// `D / 64` outputs of [`SeededRng::new(seed)`](SeededRng).
    pub fn random(dim: Dim, seed: u64) -> Self {
        let mut rng = SeededRng::new(seed);
        Self::random_from(dim, &mut rng)
    }

    /// A uniformly random vector drawn from an existing stream.
    pub fn random_from(dim: Dim, rng: &mut SeededRng) -> Self {
        Self {
            words: (0..dim.words()).map(|_| rng.next_u64()).collect(),
        }
    }

    /// Takes ownership of packed words.
    ///
    /// # Errors
    /// [`Error::ZeroDimension`] for an empty vector.
    pub fn from_words(words: Vec<u64>) -> Result<Self> {
        Dim::from_words(words.len())?;
        Ok(Self { words })
    }

    /// Builds a vector from a bit iterator (bit `i` = item `i`).
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if the iterator does not yield exactly `D` bits.
    pub fn from_bits(dim: Dim, bits: impl IntoIterator<Item = bool>) -> Result<Self> {
        let mut hv = Self::zeros(dim);
        let mut n = 0usize;
        for b in bits {
            if n >= dim.bits() {
                return Err(Error::DimensionMismatch {
                    expected: dim.bits(),
                    found: n + 1,
                });
            }
            if b {
                hv.words[n / 64] |= 1 << (n % 64);
            }
            n += 1;
        }
        if n != dim.bits() {
            return Err(Error::DimensionMismatch {
                expected: dim.bits(),
                found: n,
            });
        }
        Ok(hv)
    }

    /// Reads a vector from its little-endian byte layout (`D / 8` bytes, LSB-first bits).
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if `bytes.len() != D / 8`.
    pub fn from_le_bytes(dim: Dim, bytes: &[u8]) -> Result<Self> {
        if bytes.len() != dim.bytes() {
            return Err(Error::DimensionMismatch {
                expected: dim.bits(),
                found: bytes.len() * 8,
            });
        }
        let words = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("chunk of 8")))
            .collect();
        Ok(Self { words })
    }

    /// The little-endian byte layout (`D / 8` bytes).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// A borrowed view.
    #[inline]
    pub fn view(&self) -> HvRef<'_> {
        HvRef::from_words_unchecked(&self.words)
    }

    /// The packed words.
    #[inline]
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Consumes the vector, returning its words.
    pub fn into_words(self) -> Vec<u64> {
        self.words
    }

    /// The dimension.
    #[inline]
    pub fn dim(&self) -> Dim {
        Dim(self.words.len() * 64)
    }

    /// Bit `i`.
    ///
    /// # Panics
    /// If `i >= D`.
    #[inline]
    pub fn bit(&self, i: usize) -> bool {
        self.view().bit(i)
    }

    /// Sets bit `i` to `value`.
    ///
    /// # Panics
    /// If `i >= D`.
    #[inline]
    pub fn set_bit(&mut self, i: usize, value: bool) {
        let mask = 1u64 << (i % 64);
        if value {
            self.words[i / 64] |= mask;
        } else {
            self.words[i / 64] &= !mask;
        }
    }

    /// A readable bit-level view (debugging, encoders); never used in hot loops.
    pub fn bits(&self) -> &BitSlice<u64, Lsb0> {
        self.view().bits()
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u32 {
        self.view().count_ones()
    }

    /// Hamming distance (see [`HvRef::hamming`]).
    ///
    /// # Panics
    /// If the dimensions differ.
    #[inline]
    pub fn hamming(&self, other: &impl AsHv) -> u32 {
        self.view().hamming(other)
    }

    /// Similarity in `[-1, 1]` (see [`HvRef::similarity`]).
    ///
    /// # Panics
    /// If the dimensions differ.
    #[inline]
    pub fn similarity(&self, other: &impl AsHv) -> f64 {
        self.view().similarity(other)
    }

    /// Binding: element-wise XOR. Self-inverse (`a.bind(b).bind(b) == a`), commutative,
    /// and the result is dissimilar to both inputs.
    ///
    /// # Panics
    /// If the dimensions differ.
    pub fn bind(&self, other: &impl AsHv) -> Self {
        let mut out = self.clone();
        out.bind_assign(other);
        out
    }

    /// [`bind`](Self::bind) written into `out`, without allocating: for loops that bind
    /// many pairs into one scratch vector.
    ///
    /// ```
    /// use hdv::{Dim, Hypervector};
    /// let dim = Dim::new(1024).unwrap();
    /// let (a, b) = (Hypervector::random(dim, 1), Hypervector::random(dim, 2));
    /// let mut scratch = Hypervector::zeros(dim);
    /// a.bind_into(&b, &mut scratch);
    /// assert_eq!(scratch, a.bind(&b));
    /// ```
    ///
    /// # Panics
    /// If the dimensions differ.
    pub fn bind_into(&self, other: &impl AsHv, out: &mut Hypervector) {
        let other = other.as_hv();
        assert_same_dim(self.dim(), other.dim());
        assert_same_dim(self.dim(), out.dim());
        for ((o, a), b) in out.words.iter_mut().zip(&self.words).zip(other.words()) {
            *o = a ^ b;
        }
    }

    /// In-place [`bind`](Self::bind).
    ///
    /// # Panics
    /// If the dimensions differ.
    pub fn bind_assign(&mut self, other: &impl AsHv) {
        let other = other.as_hv();
        assert_same_dim(self.dim(), other.dim());
        for (a, b) in self.words.iter_mut().zip(other.words()) {
            *a ^= b;
        }
    }

    /// Cyclic permutation by `k` bits **toward higher indices**: bit `i` of `self` becomes
    /// bit `(i + k) mod D` of the result. `k` may exceed `D` or be negative (see
    /// [`permute_by`](Self::permute_by)); [`inverse_permute`](Self::inverse_permute) undoes it.
    pub fn permute(&self, k: usize) -> Self {
        let d = self.dim().bits();
        let k = k % d;
        let n = self.words.len();
        let (q, r) = (k / 64, (k % 64) as u32);
        // Whole words first: word j of the result is word (j - q) mod n of the input...
        let mut out = Vec::with_capacity(n);
        out.extend_from_slice(&self.words[n - q..]);
        out.extend_from_slice(&self.words[..n - q]);
        // ...then the remaining r bits, carried from each word into the next (cyclically).
        if r != 0 {
            let wrap = out[n - 1] >> (64 - r);
            for j in (1..n).rev() {
                out[j] = (out[j] << r) | (out[j - 1] >> (64 - r));
            }
            out[0] = (out[0] << r) | wrap;
        }
        Self { words: out }
    }

    /// Cyclic permutation by a signed amount: positive toward higher indices, negative
    /// toward lower ones.
    pub fn permute_by(&self, k: i64) -> Self {
        let d = self.dim().bits() as i64;
        self.permute(k.rem_euclid(d) as usize)
    }

    /// The inverse of [`permute`](Self::permute): `v.permute(k).inverse_permute(k) == v`.
    pub fn inverse_permute(&self, k: usize) -> Self {
        let d = self.dim().bits();
        self.permute(d - k % d)
    }

    /// Flips exactly `round(fraction * D)` distinct bits chosen by a seeded stream; the result
    /// is at Hamming distance exactly that number from `self`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `0 <= fraction <= 1`.
    pub fn with_noise(&self, fraction: f64, seed: u64) -> Result<Self> {
        if !(0.0..=1.0).contains(&fraction) {
            return Err(Error::InvalidParameter {
                name: "fraction",
                reason: format!("must be in [0, 1], got {fraction}"),
            });
        }
        let d = self.dim().bits();
        let flips = (fraction * d as f64).round() as usize;
        let mask = sample_bit_mask(self.dim(), flips, &mut SeededRng::new(seed));
        let mut out = self.clone();
        out.bind_assign(&mask);
        Ok(out)
    }

    /// Mutable access to the packed words (bit `i` is bit `i % 64` of word `i / 64`; see
    /// `docs/FORMAT.md`), for writing results in place without allocating.
    #[inline]
    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }
}

/// A vector with exactly `ones` distinct bits set, chosen uniformly by `rng`.
///
/// # Panics
/// If `ones > D`.
pub fn sample_bit_mask(dim: Dim, ones: usize, rng: &mut SeededRng) -> Hypervector {
    let d = dim.bits();
    assert!(ones <= d, "cannot choose {ones} of {d} bits");
    // Choose the smaller of the set and its complement so rejection stays cheap.
    let invert = ones > d / 2;
    let target = if invert { d - ones } else { ones };
    let mut mask = Hypervector::zeros(dim);
    let mut chosen = 0;
    while chosen < target {
        let i = rng.below(d as u64) as usize;
        if !mask.bit(i) {
            mask.set_bit(i, true);
            chosen += 1;
        }
    }
    if invert {
        for w in mask.words_mut() {
            *w = !*w;
        }
    }
    mask
}

impl AsHv for Hypervector {
    #[inline]
    fn as_hv(&self) -> HvRef<'_> {
        self.view()
    }
}

impl<T: AsHv + ?Sized> AsHv for &T {
    #[inline]
    fn as_hv(&self) -> HvRef<'_> {
        (**self).as_hv()
    }
}

impl fmt::Debug for Hypervector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_words(&self.words, f)
    }
}

impl<'a> From<&'a Hypervector> for HvRef<'a> {
    fn from(hv: &'a Hypervector) -> Self {
        hv.view()
    }
}

/// Serialized form of a [`Hypervector`]: its dimension and its words.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct HypervectorRepr {
    dim: usize,
    words: Vec<u64>,
}

#[cfg(feature = "serde")]
impl TryFrom<HypervectorRepr> for Hypervector {
    type Error = Error;
    fn try_from(r: HypervectorRepr) -> Result<Self> {
        let dim = Dim::new(r.dim)?;
        if r.words.len() != dim.words() {
            return Err(Error::DimensionMismatch {
                expected: dim.bits(),
                found: r.words.len() * 64,
            });
        }
        Ok(Self { words: r.words })
    }
}

#[cfg(feature = "serde")]
impl From<Hypervector> for HypervectorRepr {
    fn from(hv: Hypervector) -> Self {
        Self {
            dim: hv.dim().bits(),
            words: hv.words,
        }
    }
}
