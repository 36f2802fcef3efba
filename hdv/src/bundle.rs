//! Majority bundling with bit-sliced counters.
//!
//! A [`Bundler`] keeps one signed counter per bit position, stored *bit-sliced*: plane `p`
//! of word `i` is a `u64` holding bit `p` (two's complement) of the 64 counters of that word.
//! Adding a vector is then a ripple-carry addition over the planes — a few word operations
//! per 64 counters instead of 64 byte increments — and it stops as soon as the carry dies.
//! [`Bundler::add_all`] first sums up to 15 inputs per word into a 4-plane counter kept in
//! registers, then adds that once into the stored planes.
//!
//! Binarization is by majority of the weighted votes: bit `i` is 1 when
//! `2 * counter_i > total_weight`, 0 when it is below, and a **seeded random coin** on ties
//! (a fixed tie rule would bias the density, e.g. to 0.25 for two inputs).

use crate::error::{Error, Result};
use crate::hypervector::{AsHv, Dim, HvRef, Hypervector, assert_same_dim};
use crate::rng::SeededRng;

/// Most counter planes (bits per counter, sign included).
const MAX_PLANES: usize = 62;
/// Inputs summed in registers before touching the stored planes (fits 4 planes).
const GROUP: usize = 15;

/// Accumulates weighted votes per bit; binarizes by majority with seeded tie-breaking.
///
/// ```
/// use hdv::{Bundler, Dim, Hypervector};
/// let dim = Dim::new(4096).unwrap();
/// let inputs: Vec<_> = (0..5).map(|s| Hypervector::random(dim, s)).collect();
/// let mut b = Bundler::new(dim);
/// b.add_all(&inputs);
/// let bundle = b.binarize(99).unwrap();
/// let unrelated = Hypervector::random(dim, 1000);
/// for v in &inputs {
///     assert!(bundle.similarity(v) > bundle.similarity(&unrelated) + 0.2);
/// }
/// ```
#[derive(Debug, Clone)]
pub struct Bundler {
    dim: Dim,
    /// Planes per counter.
    planes: usize,
    /// Word-major: `slices[i * planes + p]` = plane `p` of word `i`.
    slices: Vec<u64>,
    /// Sum of all weights added (the number of votes).
    total_weight: i64,
    /// Sum of all |weights|: a bound on every |counter|.
    abs_weight: u64,
    /// Unit adds not yet carried into `slices`: a 4-plane counter per word, plane-major
    /// (`pending[p * words + i]`), holding at most [`GROUP`] votes; every reader adds it in.
    pending: Vec<u64>,
    /// How many unit adds `pending` holds.
    pending_n: usize,
}

impl Bundler {
    /// An empty accumulator for vectors of dimension `dim`.
    pub fn new(dim: Dim) -> Self {
        let planes = 2;
        Self {
            dim,
            planes,
            slices: vec![0; dim.words() * planes],
            total_weight: 0,
            abs_weight: 0,
            pending: Vec::new(),
            pending_n: 0,
        }
    }

    /// The counters with the pending unit adds carried in (borrowed when there are none).
    fn settled(&self) -> std::borrow::Cow<'_, [u64]> {
        if self.pending_n == 0 {
            return std::borrow::Cow::Borrowed(&self.slices);
        }
        let mut out = self.slices.clone();
        carry_in(&mut out, self.planes, &self.pending);
        std::borrow::Cow::Owned(out)
    }

    /// Carries the pending unit adds into the counters.
    fn settle(&mut self) {
        if self.pending_n == 0 {
            return;
        }
        carry_in(&mut self.slices, self.planes, &self.pending);
        self.pending.fill(0);
        self.pending_n = 0;
    }

    /// The dimension.
    pub fn dim(&self) -> Dim {
        self.dim
    }

    /// The sum of the weights added so far (for unit adds, the number of vectors).
    pub fn total_weight(&self) -> i64 {
        self.total_weight
    }

    /// Whether every counter is zero and no net weight was added.
    pub fn is_empty(&self) -> bool {
        self.total_weight == 0 && self.settled().iter().all(|&s| s == 0)
    }

    /// Bits per counter currently used (grows with the total absolute weight).
    pub fn planes(&self) -> usize {
        self.planes
    }

    /// Forgets every vote.
    pub fn clear(&mut self) {
        *self = Self::new(self.dim);
    }

    /// Makes room for counters up to `abs_weight + extra` in magnitude.
    ///
    /// # Panics
    /// If the counters would need more than 62 bits.
    fn reserve(&mut self, extra: u64) {
        let need = self
            .abs_weight
            .checked_add(extra)
            .expect("bundle weight overflow");
        self.fit(need);
        self.abs_weight = need;
    }

    /// Grows the counters to hold magnitudes up to `need` (sign-extending what they hold).
    ///
    /// # Panics
    /// If that needs more than 62 bits.
    fn fit(&mut self, need: u64) {
        // A counter of `planes` bits holds magnitudes up to 2^(planes-1) - 1.
        let mut planes = self.planes;
        while planes < MAX_PLANES && (1u64 << (planes - 1)) - 1 < need {
            planes += 1;
        }
        assert!(
            (1u64 << (planes - 1)) > need,
            "bundle weight {need} exceeds the 62-bit counter range"
        );
        if planes != self.planes && self.abs_weight == 0 && self.total_weight == 0 {
            // Nothing stored yet: new zeroed planes, nothing to copy.
            self.slices = vec![0u64; self.dim.words() * planes];
            self.planes = planes;
        } else if planes != self.planes {
            let old = self.planes;
            let mut slices = vec![0u64; self.dim.words() * planes];
            for (dst, src) in slices
                .chunks_exact_mut(planes)
                .zip(self.slices.chunks_exact(old))
            {
                dst[..old].copy_from_slice(src);
                // Sign extension: new high planes copy the old sign plane.
                let sign = src[old - 1];
                dst[old..].fill(sign);
            }
            self.slices = slices;
            self.planes = planes;
        }
    }

    /// Adds `v` with weight 1.
    ///
    /// # Panics
    /// If `v` has a different dimension.
    pub fn add(&mut self, v: &impl AsHv) {
        let v = v.as_hv();
        assert_same_dim(self.dim, v.dim());
        // Unit adds collect in a 4-plane counter per word (a half-adder chain of four
        // steps) and are carried into the full counters every 15, as `add_all` does: a
        // loop of `add` costs what `add_all` does.
        if self.pending_n == GROUP {
            self.settle();
        }
        self.reserve(1);
        self.total_weight += 1;
        if self.pending.is_empty() {
            self.pending = vec![0; self.dim.words() * 4];
        }
        group_counters(&[v], &mut self.pending, self.dim.words());
        self.pending_n += 1;
    }

    /// Removes one unit vote of `v` (weight −1), undoing an earlier [`add`](Self::add).
    ///
    /// # Panics
    /// If `v` has a different dimension.
    pub fn remove(&mut self, v: &impl AsHv) {
        self.add_weighted(v, -1);
    }

    /// Adds `v` with an integer weight; negative weights subtract (remove) votes.
    ///
    /// # Panics
    /// If `v` has a different dimension, or the total absolute weight exceeds 2^61.
    pub fn add_weighted(&mut self, v: &impl AsHv, weight: i64) {
        let v = v.as_hv();
        assert_same_dim(self.dim, v.dim());
        if weight == 0 {
            return;
        }
        let mag = weight.unsigned_abs();
        self.reserve(mag);
        self.total_weight += weight;
        let planes = self.planes;
        for (s, &x) in self.slices.chunks_exact_mut(planes).zip(v.words()) {
            if weight > 0 {
                add_masked(s, x, mag);
            } else {
                sub_masked(s, x, mag);
            }
        }
    }

    /// Adds every vector with weight 1, summing up to 15 of them per word in registers
    /// before updating the stored counters. The iterator is consumed 15 items at a time
    /// (nothing else is collected), so it may be arbitrarily long or lazily generated.
    ///
    /// # Panics
    /// If any vector has a different dimension.
    pub fn add_all<I>(&mut self, vectors: I)
    where
        I: IntoIterator,
        I::Item: AsHv,
    {
        let mut iter = vectors.into_iter();
        // Size the counters once for what the iterator promises, instead of growing them
        // group by group.
        let promised = (iter.size_hint().0 as u64).min(1 << 40);
        self.fit(self.abs_weight.saturating_add(promised));
        let mut group: Vec<I::Item> = Vec::with_capacity(GROUP);
        loop {
            group.clear();
            group.extend(iter.by_ref().take(GROUP));
            if group.is_empty() {
                return;
            }
            for v in &group {
                assert_same_dim(self.dim, v.as_hv().dim());
            }
            self.reserve(group.len() as u64);
            self.total_weight += group.len() as i64;
            let planes = self.planes;
            let views: Vec<HvRef<'_>> = group.iter().map(AsHv::as_hv).collect();
            // 4-plane vertical counters of every word over the group, plane-major so the
            // half-adder chain runs across words in SIMD lanes.
            let mut c = vec![0u64; 4 * self.dim.words()];
            group_counters(&views, &mut c, self.dim.words());
            carry_in(&mut self.slices, planes, &c);
        }
    }

    /// Adds all votes of `other` (same dimension) to this accumulator.
    ///
    /// # Panics
    /// If the dimensions differ.
    pub fn merge(&mut self, other: &Bundler) {
        assert_same_dim(self.dim, other.dim);
        self.reserve(other.abs_weight);
        self.total_weight += other.total_weight;
        let (planes, op) = (self.planes, other.planes);
        let mut y = vec![0u64; planes];
        for (s, o) in self
            .slices
            .chunks_exact_mut(planes)
            .zip(other.settled().chunks_exact(op))
        {
            y[..op].copy_from_slice(o);
            y[op..].fill(o[op - 1]);
            add_sliced(s, &y);
        }
    }

    /// The counters as bytes, to persist a bundle and keep adding to it later (a concept
    /// prototype, an open episode). Layout: `u32` planes, `i64` total weight, `u64` absolute
    /// weight, then the word-major planes as `u64`, all little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        let settled = self.settled();
        let mut out = Vec::with_capacity(20 + settled.len() * 8);
        out.extend_from_slice(&(self.planes as u32).to_le_bytes());
        out.extend_from_slice(&self.total_weight.to_le_bytes());
        out.extend_from_slice(&self.abs_weight.to_le_bytes());
        for s in settled.iter() {
            out.extend_from_slice(&s.to_le_bytes());
        }
        out
    }

    /// Restores counters written by [`to_bytes`](Self::to_bytes).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if the bytes do not describe counters of dimension `dim`.
    pub fn from_bytes(dim: Dim, bytes: &[u8]) -> Result<Self> {
        let bad = |reason: String| Error::InvalidParameter {
            name: "bundle bytes",
            reason,
        };
        if bytes.len() < 20 {
            return Err(bad(format!(
                "{} bytes is shorter than the 20-byte header",
                bytes.len()
            )));
        }
        let planes = u32::from_le_bytes(bytes[0..4].try_into().expect("4")) as usize;
        let total_weight = i64::from_le_bytes(bytes[4..12].try_into().expect("8"));
        let abs_weight = u64::from_le_bytes(bytes[12..20].try_into().expect("8"));
        if !(2..=MAX_PLANES).contains(&planes) {
            return Err(bad(format!("{planes} planes (expected 2..={MAX_PLANES})")));
        }
        if bytes.len() != 20 + dim.words() * planes * 8 {
            return Err(bad(format!(
                "{} bytes do not hold {planes} planes of {} words",
                bytes.len(),
                dim.words()
            )));
        }
        let slices = bytes[20..]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
            .collect();
        Ok(Self {
            dim,
            planes,
            slices,
            total_weight,
            abs_weight,
            pending: Vec::new(),
            pending_n: 0,
        })
    }

    /// The counter of bit `i`: the weighted number of votes for 1 at that position.
    ///
    /// # Panics
    /// If `i >= D`.
    pub fn counter(&self, i: usize) -> i64 {
        assert!(i < self.dim.bits(), "bit {i} out of range {}", self.dim);
        let (word, bit) = (i / 64, i % 64);
        let s = &self.slices[word * self.planes..(word + 1) * self.planes];
        let mut value: i64 = 0;
        for (p, plane) in s.iter().enumerate() {
            value |= (((plane >> bit) & 1) as i64) << p;
        }
        // Sign-extend from `planes` bits.
        let shift = 64 - self.planes as u32;
        let mut value = (value << shift) >> shift;
        // Plus the unit votes not yet carried in (only this word's).
        if self.pending_n > 0 {
            let words = self.dim.words();
            for p in 0..4 {
                value += (((self.pending[p * words + word] >> bit) & 1) as i64) << p;
            }
        }
        value
    }

    /// Every counter, bit 0 first: [`counter`](Self::counter) of each bit in one pass.
    ///
    /// ```
    /// use hdv::{Bundler, Dim, Hypervector};
    /// let dim = Dim::new(256).unwrap();
    /// let mut b = Bundler::new(dim);
    /// b.add(&Hypervector::random(dim, 1));
    /// b.add_weighted(&Hypervector::random(dim, 2), -3);
    /// let all = b.counters();
    /// assert_eq!(all.len(), 256);
    /// assert!((0..256).all(|i| all[i] == b.counter(i)));
    /// ```
    pub fn counters(&self) -> Vec<i64> {
        let settled = self.settled();
        let planes = self.planes;
        let mut out = vec![0i64; self.dim.bits()];
        for (lanes, s) in out.chunks_exact_mut(64).zip(settled.chunks_exact(planes)) {
            for (p, &plane) in s.iter().enumerate() {
                // The top plane is the sign: it weighs −2^(planes−1).
                let weight = if p + 1 == planes {
                    -(1i64 << p)
                } else {
                    1i64 << p
                };
                let mut bits = plane;
                while bits != 0 {
                    lanes[bits.trailing_zeros() as usize] += weight;
                    bits &= bits - 1;
                }
            }
        }
        out
    }

    /// The majority vector: bit `i` is 1 iff `2 * counter_i > total_weight`; exact ties are
    /// broken by a coin drawn from [`SeededRng::new(seed)`](SeededRng) (one `u64` per word,
    /// drawn for every word, so the coin of a position does not depend on other positions).
    ///
    /// # Choosing the seed
    /// The seed matters only where a counter ties: with an odd number of unit votes there
    /// are no ties and every seed gives the same vector; with an even number about
    /// `1/√(πn/2)` of the bits tie (half of them for two inputs). The convention this crate
    /// follows, and recommends:
    /// - **derive the seed from what the bundle stands for**, never from a clock or a
    ///   counter of calls, so the same inputs always give the same vector (the text encoder
    ///   uses the hash of the text's tokens, [`TextEncoder::tie_seed`](crate::encode::TextEncoder::tie_seed);
    ///   hypermem's concepts and episodes use their id);
    /// - **give different bundles different seeds**: two bundles of the same even-sized set
    ///   binarized with one seed agree on every tie, so their similarity is inflated;
    /// - a bundle that is re-binarized as it grows (a prototype) keeps its seed, so bits that
    ///   stay tied do not flicker between versions.
    ///
    /// ```
    /// use hdv::{Bundler, Dim, Hypervector};
    /// let dim = Dim::new(4096).unwrap();
    /// let (a, b) = (Hypervector::random(dim, 1), Hypervector::random(dim, 2));
    /// let mut pair = Bundler::new(dim);
    /// pair.add(&a);
    /// pair.add(&b);
    /// // Two votes tie wherever a and b differ: the seed decides those bits, reproducibly.
    /// assert_eq!(pair.binarize(7).unwrap(), pair.binarize(7).unwrap());
    /// assert_ne!(pair.binarize(7).unwrap(), pair.binarize(8).unwrap());
    /// pair.add(&Hypervector::random(dim, 3));
    /// // Three votes never tie: the seed no longer matters.
    /// assert_eq!(pair.binarize(7).unwrap(), pair.binarize(8).unwrap());
    /// ```
    ///
    /// # Errors
    /// [`Error::EmptyBundle`] if the accumulator holds no votes.
    pub fn binarize(&self, seed: u64) -> Result<Hypervector> {
        if self.is_empty() {
            return Err(Error::EmptyBundle);
        }
        let mut rng = SeededRng::new(seed);
        let mut out = Hypervector::zeros(self.dim);
        let planes = self.planes;
        // d = 2c - T needs planes + 2 bits (|2c| <= 2A, |T| <= A).
        let width = planes + 2;
        let t = self.total_weight;
        // Bit p of T in two's complement, sign-extended, broadcast to all lanes.
        let mut tb = [0u64; MAX_PLANES + 2];
        for (p, b) in tb[..width].iter_mut().enumerate() {
            *b = if (t >> p.min(63)) & 1 == 1 { !0u64 } else { 0 };
        }
        let settled = self.settled();
        majority_words(&settled, planes, &tb[..width], out.words_mut(), &mut rng);
        Ok(out)
    }
}

/// Adds plane-major 4-plane counters `c` (see [`group_counters`]) into word-major
/// `slices` of `planes` planes.
fn carry_in(slices: &mut [u64], planes: usize, c: &[u64]) {
    let words = c.len() / 4;
    let (c0, rest) = c.split_at(words);
    let (c1, rest) = rest.split_at(words);
    let (c2, c3) = rest.split_at(words);
    for (i, s) in slices.chunks_exact_mut(planes).enumerate() {
        add_sliced(s, &[c0[i], c1[i], c2[i], c3[i]]);
    }
}

/// Which compilation of a word-parallel loop runs here: the same source, compiled for
/// 8-lane registers on AVX-512 machines and 4-lane ones on AVX2 machines.
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
enum Width {
    Avx512,
    Avx2,
    Portable,
}

fn width() -> Width {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::kernels::try_active()
            .is_ok_and(|k| k.kind() == crate::kernels::KernelKind::Avx512)
        {
            return Width::Avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return Width::Avx2;
        }
    }
    Width::Portable
}

/// Adds, per bit, how many of (at most 15 in all) `views` set it, as 4 bit planes of `words`
/// words each in `c` (plane-major). The same loop is compiled for AVX-512 and AVX2
/// registers.
fn group_counters(views: &[HvRef<'_>], c: &mut [u64], words: usize) {
    #[cfg(target_arch = "x86_64")]
    match width() {
        // SAFETY: `Avx512` only where the active kernel is AVX-512 (the CPU has AVX-512F).
        Width::Avx512 => return unsafe { group_counters_avx512(views, c, words) },
        // SAFETY: `Avx2` only where the CPU reports AVX2.
        Width::Avx2 => return unsafe { group_counters_avx2(views, c, words) },
        Width::Portable => {}
    }
    group_counters_portable(views, c, words);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn group_counters_avx512(views: &[HvRef<'_>], c: &mut [u64], words: usize) {
    group_counters_portable(views, c, words);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn group_counters_avx2(views: &[HvRef<'_>], c: &mut [u64], words: usize) {
    group_counters_portable(views, c, words);
}

#[inline(always)]
fn group_counters_portable(views: &[HvRef<'_>], c: &mut [u64], words: usize) {
    let (c0, rest) = c.split_at_mut(words);
    let (c1, rest) = rest.split_at_mut(words);
    let (c2, c3) = rest.split_at_mut(words);
    for v in views {
        let x = &v.words()[..words];
        for i in 0..words {
            let mut carry = x[i];
            let t = c0[i] & carry;
            c0[i] ^= carry;
            carry = t;
            let t = c1[i] & carry;
            c1[i] ^= carry;
            carry = t;
            let t = c2[i] & carry;
            c2[i] ^= carry;
            carry = t;
            c3[i] ^= carry;
        }
    }
}

/// The majority bits of word-major counters `settled` (`planes` planes a word): bit set
/// where `2c − T > 0`, the coin where it is 0. `tb` holds the broadcast bits of T over
/// `planes + 2` planes. Eight words at a time, as independent subtraction chains (SIMD
/// lanes on AVX-512 and AVX2 machines).
fn majority_words(
    settled: &[u64],
    planes: usize,
    tb: &[u64],
    out: &mut [u64],
    rng: &mut SeededRng,
) {
    #[cfg(target_arch = "x86_64")]
    match width() {
        // SAFETY: `Avx512` only where the active kernel is AVX-512 (the CPU has AVX-512F).
        Width::Avx512 => return unsafe { majority_words_avx512(settled, planes, tb, out, rng) },
        // SAFETY: `Avx2` only where the CPU reports AVX2.
        Width::Avx2 => return unsafe { majority_words_avx2(settled, planes, tb, out, rng) },
        Width::Portable => {}
    }
    majority_words_portable(settled, planes, tb, out, rng);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn majority_words_avx2(
    settled: &[u64],
    planes: usize,
    tb: &[u64],
    out: &mut [u64],
    rng: &mut SeededRng,
) {
    majority_words_portable(settled, planes, tb, out, rng);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn majority_words_avx512(
    settled: &[u64],
    planes: usize,
    tb: &[u64],
    out: &mut [u64],
    rng: &mut SeededRng,
) {
    majority_words_portable(settled, planes, tb, out, rng);
}

#[inline(always)]
fn majority_words_portable(
    settled: &[u64],
    planes: usize,
    tb: &[u64],
    out: &mut [u64],
    rng: &mut SeededRng,
) {
    const LANES: usize = 8;
    let width = tb.len();
    // The block's minuend 2c plane-major, lane = word: plane 0 is 0, planes 1..=P are c's,
    // plane P + 1 repeats the sign. Lanes past a short last block hold stale values whose
    // results are never written.
    let mut d = [[0u64; LANES]; MAX_PLANES + 2];
    for (o, s) in out.chunks_mut(LANES).zip(settled.chunks(LANES * planes)) {
        let n = o.len();
        for (j, w) in s.chunks_exact(planes).enumerate() {
            for (q, &plane) in w.iter().enumerate() {
                d[q + 1][j] = plane;
            }
            d[planes + 1][j] = w[planes - 1];
        }
        let mut borrow = [0u64; LANES];
        let mut nonzero = [0u64; LANES];
        let mut last = [0u64; LANES];
        for (dp, &b) in d[..width].iter().zip(tb) {
            for j in 0..LANES {
                let a = dp[j];
                let x = a ^ b;
                let r = x ^ borrow[j];
                borrow[j] = (!a & b) | (!x & borrow[j]);
                nonzero[j] |= r;
                last[j] = r;
            }
        }
        for j in 0..n {
            let coin = rng.next_u64();
            o[j] = (!last[j] & nonzero[j]) | (!nonzero[j] & coin);
        }
    }
}

/// Adds `weight` to the counters of the lanes set in `x`, stopping once the carry dies and
/// no weight bit remains.
#[inline]
fn add_masked(s: &mut [u64], x: u64, weight: u64) {
    let mut carry = 0u64;
    // Planes below the weight's lowest set bit receive nothing and no carry.
    let low = weight.trailing_zeros() as usize;
    for (p, plane) in s.iter_mut().enumerate().skip(low) {
        let b = if (weight >> p) & 1 == 1 { x } else { 0 };
        let a = *plane;
        let t = a ^ b;
        *plane = t ^ carry;
        carry = (a & b) | (carry & t);
        if carry == 0 && weight >> (p + 1) == 0 {
            break;
        }
    }
}

/// Subtracts `weight` from the counters of the lanes set in `x` (two's complement borrow).
#[inline]
fn sub_masked(s: &mut [u64], x: u64, weight: u64) {
    let mut borrow = 0u64;
    let low = weight.trailing_zeros() as usize;
    for (p, plane) in s.iter_mut().enumerate().skip(low) {
        let b = if (weight >> p) & 1 == 1 { x } else { 0 };
        let a = *plane;
        let t = a ^ b;
        *plane = t ^ borrow;
        borrow = (!a & b) | (!t & borrow);
        if borrow == 0 && weight >> (p + 1) == 0 {
            break;
        }
    }
}

/// Adds the bit-sliced per-lane numbers `y` (planes, low first; missing planes are zero)
/// to the counters `s`, modulo 2^planes.
#[inline]
fn add_sliced(s: &mut [u64], y: &[u64]) {
    let mut carry = 0u64;
    for (p, plane) in s.iter_mut().enumerate() {
        let b = y.get(p).copied().unwrap_or(0);
        let a = *plane;
        let t = a ^ b;
        *plane = t ^ carry;
        carry = (a & b) | (carry & t);
        if carry == 0 && p + 1 >= y.len() {
            break;
        }
    }
}

/// Features [`DenseVotes`] buffers before adding them in one register-tiled pass.
const FEATURE_BUFFER: usize = 64;

/// Weighted votes kept as one `i16` counter per bit, for adding many differently weighted
/// vectors quickly (the text encoder's features): on AVX-512 one masked add covers 32
/// bits, where the bit-sliced [`Bundler`] walks every plane of every word per vector. The
/// counters are exact integers, so [`DenseVotes::into_bundler`] gives counters identical
/// to adding the same vectors to a [`Bundler`] in any order.
#[derive(Debug, Clone)]
pub(crate) struct DenseVotes {
    dim: Dim,
    counts: Vec<i16>,
    /// Features not yet added: [`FEATURE_BUFFER`] vectors at most, one after another.
    pending: Vec<u64>,
    pending_weights: Vec<i16>,
    total_weight: i64,
    abs_weight: u64,
    /// Whether votes were ever moved into a bundler (then the counters hold only part).
    drained: bool,
    /// Whether the AVX-512 kernels run them (else the portable ones, AVX2 where present).
    wide: bool,
    /// Scratch of [`add_xor`](Self::add_xor), kept between texts.
    carry_save: crate::kernels::votes::CarrySaveScratch,
}

/// Vectors of one dimension ("slots") stored **tile-major**: the 8 words `8 t .. 8 t + 8`
/// of every slot lie together (the last tile padded with zeros), so that adding a tile of
/// many features reads one compact, cache-resident block instead of one line of each
/// vector scattered over megabytes. Slot 0 is zeros.
#[derive(Debug, Clone)]
pub(crate) struct TiledArena {
    /// Words per vector.
    words: usize,
    /// Slots each tile row has room for.
    cap: usize,
    /// Slots in use.
    len: usize,
    /// `tiles() * cap` blocks of 8 words: slot `s`, tile `t` at block `t * cap + s`.
    data: Vec<u64>,
}

impl TiledArena {
    /// An arena of `words`-word vectors holding the zero slot.
    pub(crate) fn new(words: usize) -> Self {
        let mut arena = Self {
            words,
            cap: 0,
            len: 0,
            data: Vec::new(),
        };
        arena.push(&vec![0; words]);
        arena
    }

    /// Tiles of 8 words per vector.
    pub(crate) fn tiles(&self) -> usize {
        self.words.div_ceil(8)
    }

    /// Slots in use (the zero slot included).
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Blocks per tile row: slot `s`'s tile `t` is block `t * stride() + s` of
    /// [`data`](Self::data).
    pub(crate) fn stride(&self) -> usize {
        self.cap
    }

    /// The blocks, 8 words each.
    pub(crate) fn data(&self) -> &[u64] {
        &self.data
    }

    /// Keeps the first `len` slots (at least the zero slot).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len.max(1));
    }

    /// Appends `v` (`words` words); its slot.
    pub(crate) fn push(&mut self, v: &[u64]) -> u32 {
        assert_eq!(v.len(), self.words, "a slot is a whole vector");
        if self.len == self.cap {
            self.grow();
        }
        let slot = self.len;
        // Whole tiles as fixed-size copies (two register moves each, not a `memcpy` call
        // per 64 bytes); the last, short tile padded with zeros.
        let (whole, tail) = v.as_chunks::<8>();
        for (t, chunk) in whole.iter().enumerate() {
            let at = (t * self.cap + slot) * 8;
            let block: &mut [u64; 8] = (&mut self.data[at..at + 8]).try_into().expect("8 words");
            *block = *chunk;
        }
        if !tail.is_empty() {
            let block = &mut self.data[(whole.len() * self.cap + slot) * 8..][..8];
            block[..tail.len()].copy_from_slice(tail);
            block[tail.len()..].fill(0);
        }
        self.len += 1;
        slot as u32
    }

    fn grow(&mut self) {
        let cap = (self.cap * 2).max(64);
        let mut data = vec![0; self.tiles() * cap * 8];
        for t in 0..self.tiles() {
            data[t * cap * 8..][..self.len * 8]
                .copy_from_slice(&self.data[t * self.cap * 8..][..self.len * 8]);
        }
        self.cap = cap;
        self.data = data;
    }

    /// XORs slot `slot` into `out` (`words` words).
    #[inline(always)]
    pub(crate) fn xor_into(&self, slot: u32, out: &mut [u64]) {
        for (t, chunk) in out.chunks_mut(8).enumerate() {
            let block = &self.data[(t * self.cap + slot as usize) * 8..][..chunk.len()];
            for (o, b) in chunk.iter_mut().zip(block) {
                *o ^= b;
            }
        }
    }
}

/// A feature given as the XOR of three slots of a [`TiledArena`]; a part not needed names
/// the zero slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct XorFeature {
    /// Arena slots of the three parts.
    pub(crate) parts: [u32; 3],
    /// Votes it adds to each counter where it is set.
    pub(crate) weight: i64,
    /// What it adds to the total weight (the majority threshold): `weight` for a feature
    /// of its own; for the bit planes of a count of `k` features of weight `v` (plane `p`
    /// adds `2^p v`), `k v` on the first plane and 0 on the others.
    pub(crate) total: i64,
}

impl XorFeature {
    /// The feature's vector, computed in full.
    fn vector(&self, arena: &TiledArena) -> Hypervector {
        let mut words = vec![0; arena.words];
        for &p in &self.parts {
            arena.xor_into(p, &mut words);
        }
        Hypervector::from_words(words).expect("an arena slot is a whole vector")
    }
}

impl DenseVotes {
    /// Dense votes of dimension `dim`: run by the AVX-512 kernels where this process's
    /// kernel is AVX-512 (with AVX-512BW), else by the portable ones (in the copy compiled
    /// for that tier: `kernels::votes::tier`). Both beat the bit-sliced [`Bundler`]'s walk
    /// over every counter plane per feature (`docs/EXPERIMENTS.md`).
    pub(crate) fn new(dim: Dim) -> Self {
        #[cfg(target_arch = "x86_64")]
        let wide = crate::kernels::votes::tier() == crate::kernels::KernelKind::Avx512;
        #[cfg(not(target_arch = "x86_64"))]
        let wide = false;
        Self {
            dim,
            counts: vec![0; dim.bits()],
            // Allocated on first use: the text encoder adds features from its arena.
            pending: Vec::new(),
            pending_weights: Vec::with_capacity(FEATURE_BUFFER),
            total_weight: 0,
            abs_weight: 0,
            drained: false,
            wide,
            carry_save: Default::default(),
        }
    }

    /// Empties the counters for the next text (keeping every buffer).
    fn reset(&mut self) {
        if self.abs_weight != 0 || self.drained {
            self.counts.fill(0);
        }
        self.pending.clear();
        self.pending_weights.clear();
        self.total_weight = 0;
        self.abs_weight = 0;
        self.drained = false;
    }

    /// The majority vector of `features` alone (XORs of `arena` slots), ties broken by the
    /// coins of `seed` as [`Bundler::binarize`] breaks them: the vector that adding them to
    /// empty counters and binarizing gives, read from each tile's carry-save sum planes
    /// without writing a counter (the counters are left as they were), so a long text needs
    /// no drain into a [`Bundler`] when its votes pass the `i16` range. `None` where that
    /// path does not apply: their absolute weights reach `2^24` (the planes it reads) or one
    /// feature's reaches `2^15` (a carry-save input level). On AVX-512 too it beats adding
    /// to counters and reading them (`docs/EXPERIMENTS.md`).
    ///
    /// # Errors
    /// [`Error::EmptyBundle`] if no feature has a vote.
    pub(crate) fn majority_of_xor(
        &mut self,
        arena: &TiledArena,
        features: &[XorFeature],
        seed: u64,
    ) -> Option<Result<Hypervector>> {
        let abs: u64 = features.iter().map(|f| f.weight.unsigned_abs()).sum();
        let most = 1u64 << crate::kernels::votes::MAJORITY_LEVELS;
        let heaviest = 1i64 << (crate::kernels::votes::LEVELS - 1);
        if abs >= most || features.iter().any(|f| !(0..heaviest).contains(&f.weight)) {
            return None;
        }
        let total: i64 = features.iter().map(|f| f.total).sum();
        if abs == 0 && total == 0 {
            return Some(Err(Error::EmptyBundle));
        }
        let half = i32::try_from(total.div_euclid(2)).ok()?;
        let mut out = Hypervector::zeros(self.dim);
        let mut rng = SeededRng::new(seed);
        // The coins drawn once per word in order, as the bundler draws them.
        let coins: Vec<u64> = (0..out.words().len()).map(|_| rng.next_u64()).collect();
        crate::kernels::votes::majority_of_xor_features(
            arena,
            features,
            half,
            total.rem_euclid(2) == 0,
            out.words_mut(),
            &coins,
            &mut self.carry_save,
        );
        Some(Ok(out))
    }

    /// Whether `weight` more can be added without leaving the `i16` range.
    pub(crate) fn has_room(&self, weight: i64) -> bool {
        self.abs_weight.saturating_add(weight.unsigned_abs()) < i16::MAX as u64
    }

    /// Adds, with `weight`, the vector `write` puts into the buffer slot it is given (the
    /// caller checked [`has_room`](Self::has_room)): a feature computed in place.
    pub(crate) fn add_with(&mut self, weight: i64, write: impl FnOnce(&mut [u64])) {
        assert!(self.has_room(weight), "dense votes overflow");
        if weight == 0 {
            return;
        }
        self.total_weight += weight;
        self.abs_weight += weight.unsigned_abs();
        let start = self.pending.len();
        self.pending.resize(start + self.dim.words(), 0);
        write(&mut self.pending[start..]);
        self.pending_weights.push(weight as i16);
        if self.pending_weights.len() == FEATURE_BUFFER {
            self.flush();
        }
    }

    /// Adds the buffered features to the counters.
    fn flush(&mut self) {
        if self.pending_weights.is_empty() {
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if self.wide {
            // SAFETY: `wide` only where AVX-512F and BW are available.
            unsafe {
                crate::kernels::x86_64::votes::add_many(
                    &mut self.counts,
                    &self.pending,
                    &self.pending_weights,
                );
            }
            self.pending.clear();
            self.pending_weights.clear();
            return;
        }
        crate::kernels::votes::add_many(&mut self.counts, &self.pending, &self.pending_weights);
        self.pending.clear();
        self.pending_weights.clear();
    }

    /// Adds `features` (the caller checked that their absolute weights fit with the
    /// votes already held: see [`VoteSink::add_xor_features`]).
    fn add_xor(&mut self, arena: &TiledArena, features: &[XorFeature]) {
        self.flush();
        for f in features {
            self.total_weight += f.total;
            self.abs_weight += f.weight.unsigned_abs();
        }
        assert!(self.abs_weight < i16::MAX as u64, "dense votes overflow");
        #[cfg(target_arch = "x86_64")]
        if self.wide {
            // SAFETY: `wide` only where AVX-512F and BW are available.
            unsafe {
                crate::kernels::x86_64::votes::add_xor_features(
                    &mut self.counts,
                    arena,
                    features,
                    &mut self.carry_save,
                );
            }
            return;
        }
        crate::kernels::votes::add_xor_features(
            &mut self.counts,
            arena,
            features,
            &mut self.carry_save,
        );
    }

    /// Adds these votes to `bundler` and clears them.
    pub(crate) fn drain_into(&mut self, bundler: &mut Bundler) {
        assert_same_dim(self.dim, bundler.dim);
        self.flush();
        if self.abs_weight == 0 {
            return;
        }
        self.drained = true;
        let mut mine = Bundler::new(self.dim);
        mine.reserve(self.abs_weight);
        mine.total_weight = self.total_weight;
        let planes = mine.planes;
        #[cfg(target_arch = "x86_64")]
        if self.wide {
            // SAFETY: `wide` only where AVX-512F and BW are available.
            unsafe {
                crate::kernels::x86_64::votes::transpose(&self.counts, planes, &mut mine.slices);
            }
        }
        if !self.wide {
            crate::kernels::votes::transpose(&self.counts, planes, &mut mine.slices);
        }
        bundler.merge(&mine);
        self.counts.fill(0);
        self.total_weight = 0;
        self.abs_weight = 0;
    }
}

/// Where an encoder's features go: into [`DenseVotes`] first (exact `i16` counters, a
/// carry-save adder instead of a walk over every counter plane per feature), added to the
/// caller's [`Bundler`] at the end; or, for [`bit_sliced`](Self::bit_sliced), straight into
/// the bundler. Both give the same counters (exact integer sums).
pub(crate) struct VoteSink<'a> {
    bundler: &'a mut Bundler,
    dense: Option<DenseVotes>,
}

impl<'a> VoteSink<'a> {
    pub(crate) fn new(bundler: &'a mut Bundler) -> Self {
        let dense = Some(DenseVotes::new(bundler.dim()));
        Self { bundler, dense }
    }

    /// [`new`](Self::new), reusing `kept` (dense votes a previous sink handed back through
    /// [`finish_keeping`](Self::finish_keeping) or [`binarize_keeping`](Self::binarize_keeping))
    /// when it has the bundler's dimension: no counters allocated per text.
    pub(crate) fn reusing(bundler: &'a mut Bundler, kept: Option<DenseVotes>) -> Self {
        match kept {
            Some(mut d) if d.dim == bundler.dim() => {
                d.reset();
                Self {
                    bundler,
                    dense: Some(d),
                }
            }
            _ => Self::new(bundler),
        }
    }

    pub(crate) fn bit_sliced(bundler: &'a mut Bundler) -> Self {
        Self {
            bundler,
            dense: None,
        }
    }

    /// The dense votes, drained first if `weight` would leave their range; `None` when
    /// there are none or `weight` alone is too large for them.
    fn dense_with_room(&mut self, weight: i64) -> Option<&mut DenseVotes> {
        let d = self.dense.as_mut()?;
        if !d.has_room(weight) {
            d.drain_into(self.bundler);
        }
        d.has_room(weight).then_some(d)
    }

    /// Adds the binding (XOR) of `parts` with `weight`, written straight into the dense
    /// buffer where there is one.
    pub(crate) fn add_bound(&mut self, parts: &[&Hypervector], weight: i64) {
        if let Some(d) = self.dense_with_room(weight) {
            d.add_with(weight, |dst| {
                dst.copy_from_slice(parts[0].words());
                for p in &parts[1..] {
                    for (a, b) in dst.iter_mut().zip(p.words()) {
                        *a ^= b;
                    }
                }
            });
            return;
        }
        let mut acc = parts[0].clone();
        for p in &parts[1..] {
            acc.bind_assign(p);
        }
        self.bundler.add_weighted(&acc, weight);
    }

    /// Adds `features` (XORs of `arena` slots): into the dense votes in runs whose
    /// weights fit their range (draining them between runs), else each computed in full
    /// and added to the bundler.
    pub(crate) fn add_xor_features(&mut self, arena: &TiledArena, features: &[XorFeature]) {
        let mut rest = features;
        while let Some(first) = rest.first() {
            match self.dense_with_room(first.weight) {
                Some(d) => {
                    // The longest run that keeps |votes| below the `i16` range.
                    let mut room = i16::MAX as u64 - 1 - d.abs_weight;
                    let n = rest
                        .iter()
                        .take_while(|f| {
                            let fits = f.weight.unsigned_abs() <= room;
                            room = room.saturating_sub(f.weight.unsigned_abs());
                            fits
                        })
                        .count();
                    d.add_xor(arena, &rest[..n]);
                    rest = &rest[n..];
                }
                None => {
                    self.bundler
                        .add_weighted(&first.vector(arena), first.weight);
                    self.bundler.total_weight += first.total - first.weight;
                    rest = &rest[1..];
                }
            }
        }
    }

    pub(crate) fn finish(self) {
        self.finish_keeping();
    }

    /// [`finish`](Self::finish), handing back the dense votes for [`reusing`](Self::reusing).
    pub(crate) fn finish_keeping(mut self) -> Option<DenseVotes> {
        if let Some(d) = &mut self.dense {
            d.drain_into(self.bundler);
        }
        self.dense
    }

    /// The majority vector of everything added (as [`Bundler::binarize`] of the bundler
    /// after [`finish`](Self::finish)), and the dense votes handed back for
    /// [`reusing`](Self::reusing). Where every vote is still in the dense counters and the
    /// bundler was empty, it is read straight from the counters, and the bundler is left
    /// empty; otherwise the votes are moved into the bundler first.
    ///
    /// # Errors
    /// [`Error::EmptyBundle`] if no votes were added.
    pub(crate) fn binarize_keeping(
        mut self,
        seed: u64,
    ) -> (Result<Hypervector>, Option<DenseVotes>) {
        let v = self.binarize_in_place(seed);
        (v, self.dense)
    }

    fn binarize_in_place(&mut self, seed: u64) -> Result<Hypervector> {
        if let Some(d) = &mut self.dense
            && !d.drained
            && self.bundler.is_empty()
        {
            d.flush();
            if d.total_weight == 0 && d.counts.iter().all(|&c| c == 0) {
                return Err(Error::EmptyBundle);
            }
            let mut out = Hypervector::zeros(d.dim);
            let mut rng = SeededRng::new(seed);
            #[cfg(target_arch = "x86_64")]
            if d.wide {
                // SAFETY: `wide` only where AVX-512F and BW are available.
                unsafe {
                    crate::kernels::x86_64::votes::majority(
                        &d.counts,
                        d.total_weight,
                        out.words_mut(),
                        || rng.next_u64(),
                    );
                }
                return Ok(out);
            }
            // 2c > T ⟺ c > ⌊T / 2⌋, and 2c = T only for even T, at c = T / 2; the coins
            // drawn once per word in order, as the bundler draws them.
            let half = i16::try_from(d.total_weight.div_euclid(2))
                .expect("a total within the i16 counters' range");
            let coins: Vec<u64> = (0..out.words().len()).map(|_| rng.next_u64()).collect();
            crate::kernels::votes::majority_words(
                &d.counts,
                half,
                d.total_weight.rem_euclid(2) == 0,
                out.words_mut(),
                &coins,
            );
            return Ok(out);
        }
        let bundler = &mut *self.bundler;
        if let Some(d) = &mut self.dense {
            d.drain_into(bundler);
        }
        bundler.binarize(seed)
    }
}

/// Majority bundle of `vectors` (unit weights), ties broken by the coin of `seed`: the
/// vector [`Bundler::add_all`] then [`Bundler::binarize`] give, computed without stored
/// counters (see [`column_majority`]).
///
/// # Errors
/// [`Error::EmptyBundle`] if `vectors` is empty, [`Error::DimensionMismatch`] if the
/// vectors disagree on dimension.
pub fn bundle<V: AsHv>(vectors: &[V], seed: u64) -> Result<Hypervector> {
    let first = vectors.first().ok_or(Error::EmptyBundle)?.as_hv().dim();
    if let Some(bad) = vectors.iter().find(|v| v.as_hv().dim() != first) {
        return Err(Error::DimensionMismatch {
            expected: first.bits(),
            found: bad.as_hv().dim().bits(),
        });
    }
    let views: Vec<HvRef<'_>> = vectors.iter().map(AsHv::as_hv).collect();
    let words = column_majority(&views, first.words(), seed);
    Ok(Hypervector::from_words(words).expect("a whole vector"))
}

/// Words per block of [`column_majority`]: one 512-bit register, two 256-bit ones.
const BLOCK: usize = 8;
/// Vectors per pass over the words: 120 vectors of 10,048 bits (150 KB) stay in L2 while
/// their blocks are read one after the other.
const CHUNK: usize = 8 * GROUP;

/// The majority words of `views` (unit votes), computed block by block: for each block of
/// [`BLOCK`] words, the count of every bit over a group of [`GROUP`] vectors is summed in
/// 4 bit planes held in registers (a half-adder chain per vector), then added into a
/// bit-sliced count of `max(4, ⌈log2(n + 1)⌉)` planes; the majority is that count compared
/// with `n / 2` from the top plane down. Ties (an even `n`, a count of exactly `n / 2`) take the
/// coin of word `i`, the `i`-th draw of `SeededRng::new(seed)`, as [`Bundler::binarize`]
/// does, so the result is the same vector. Nothing is stored but the bit-sliced counts
/// (`planes` words per word), and no step depends on the data.
fn column_majority(views: &[HvRef<'_>], words: usize, seed: u64) -> Vec<u64> {
    #[cfg(target_arch = "x86_64")]
    match width() {
        // SAFETY: `Avx512` only where the active kernel is AVX-512 (the CPU has AVX-512F).
        Width::Avx512 => return unsafe { column_majority_avx512(views, words, seed) },
        // SAFETY: `Avx2` only where the CPU reports AVX2.
        Width::Avx2 => return unsafe { column_majority_avx2(views, words, seed) },
        Width::Portable => {}
    }
    column_majority_portable(views, words, seed)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn column_majority_avx512(views: &[HvRef<'_>], words: usize, seed: u64) -> Vec<u64> {
    column_majority_portable(views, words, seed)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn column_majority_avx2(views: &[HvRef<'_>], words: usize, seed: u64) -> Vec<u64> {
    column_majority_portable(views, words, seed)
}

#[inline(always)]
fn column_majority_portable(views: &[HvRef<'_>], words: usize, seed: u64) -> Vec<u64> {
    let n = views.len();
    // Counts run 0..=n; at least the 4 planes a group's count fills.
    let planes = ((usize::BITS - n.leading_zeros()) as usize).max(4);
    let blocks = words.div_ceil(BLOCK);
    // Block-major: `acc[b * planes + p]` is plane `p` of block `b`'s counts.
    let mut acc = vec![[0u64; BLOCK]; blocks * planes];
    // The first word block `b` reads: a short last block reads the last whole block's
    // worth of words (its lanes shifted up by `b * BLOCK - start`), when there are that many.
    let start_of = |b: usize| (b * BLOCK).min(words.saturating_sub(BLOCK));
    for chunk in views.chunks(CHUNK) {
        for (b, a) in acc.chunks_exact_mut(planes).enumerate() {
            let start = start_of(b);
            let m = BLOCK.min(words - start);
            for group in chunk.chunks(GROUP) {
                if m == BLOCK {
                    count_block(group, a, |w| w[start..start + BLOCK].try_into().expect("8"));
                } else {
                    count_block(group, a, |w| {
                        let mut x = [0u64; BLOCK];
                        x[..m].copy_from_slice(&w[start..]);
                        x
                    });
                }
            }
        }
    }
    // Bit set where count > n / 2: from the top plane down, above once a plane has 1 where
    // h has 0 with every higher plane equal.
    let h = n / 2;
    let ties = n.is_multiple_of(2);
    let mut rng = SeededRng::new(seed);
    let mut out = vec![0u64; words];
    for (b, (o, a)) in out
        .chunks_mut(BLOCK)
        .zip(acc.chunks_exact(planes))
        .enumerate()
    {
        let shift = b * BLOCK - start_of(b);
        let mut gt = [0u64; BLOCK];
        let mut eq = [!0u64; BLOCK];
        for (p, plane) in a.iter().enumerate().rev() {
            let hb = if (h >> p) & 1 == 1 { !0u64 } else { 0 };
            for j in 0..BLOCK {
                gt[j] |= eq[j] & plane[j] & !hb;
                eq[j] &= !(plane[j] ^ hb);
            }
        }
        for (j, o) in o.iter_mut().enumerate() {
            *o = gt[j + shift];
            if ties {
                *o |= eq[j + shift] & rng.next_u64();
            }
        }
    }
    out
}

/// Adds the count of every bit of one block over `group` (at most [`GROUP`] vectors) into
/// that block's planes `a` (at least 4, enough for every count), `load` reading the block's
/// words of a vector. The group's count is a half-adder chain per vector into four named
/// 4-plane accumulators, so they stay in registers; it is carried into `a` once.
#[inline(always)]
fn count_block(group: &[HvRef<'_>], a: &mut [[u64; BLOCK]], load: impl Fn(&[u64]) -> [u64; BLOCK]) {
    let (mut g0, mut g1, mut g2, mut g3) =
        ([0u64; BLOCK], [0u64; BLOCK], [0u64; BLOCK], [0u64; BLOCK]);
    for v in group {
        let x = load(v.words());
        for j in 0..BLOCK {
            let c0 = g0[j] & x[j];
            g0[j] ^= x[j];
            let c1 = g1[j] & c0;
            g1[j] ^= c0;
            let c2 = g2[j] & c1;
            g2[j] ^= c1;
            g3[j] ^= c2;
        }
    }
    let (low, high) = a.split_at_mut(4);
    let mut carry = [0u64; BLOCK];
    for (plane, y) in low.iter_mut().zip([&g0, &g1, &g2, &g3]) {
        for j in 0..BLOCK {
            let s = plane[j];
            let t = s ^ y[j];
            plane[j] = t ^ carry[j];
            carry[j] = (s & y[j]) | (carry[j] & t);
        }
    }
    // Counts never exceed 2^planes - 1, so the last carry is 0.
    for plane in high {
        for j in 0..BLOCK {
            let s = plane[j];
            plane[j] = s ^ carry[j];
            carry[j] &= s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TiledArena;
    use crate::rng::SeededRng;

    #[test]
    fn a_tiled_arena_gives_back_every_slot_across_growth_and_truncation() {
        for words in [1, 7, 8, 9, 157] {
            let mut rng = SeededRng::new(words as u64);
            let mut arena = TiledArena::new(words);
            let mut kept: Vec<Vec<u64>> = vec![vec![0; words]];
            for _ in 0..200 {
                let v: Vec<u64> = (0..words).map(|_| rng.next_u64()).collect();
                assert_eq!(arena.push(&v) as usize, kept.len());
                kept.push(v);
            }
            let read = |arena: &TiledArena, s: usize| {
                let mut out = vec![0; words];
                arena.xor_into(s as u32, &mut out);
                out
            };
            for (s, v) in kept.iter().enumerate() {
                assert_eq!(&read(&arena, s), v, "slot {s} of {words}-word vectors");
            }
            // The padding of a last partial tile stays zero.
            for t in 0..arena.tiles() {
                for s in 0..arena.len() {
                    let block = &arena.data()[(t * arena.stride() + s) * 8..][..8];
                    let real = (words - 8 * t).min(8);
                    assert!(block[real..].iter().all(|&w| w == 0));
                }
            }
            arena.truncate(3);
            let v: Vec<u64> = (0..words).map(|_| rng.next_u64()).collect();
            assert_eq!(arena.push(&v), 3, "truncation frees the later slots");
            assert_eq!(read(&arena, 3), v);
            assert_eq!(read(&arena, 2), kept[2]);
            arena.truncate(0);
            assert_eq!(arena.len(), 1, "the zero slot stays");
            assert!(read(&arena, 0).iter().all(|&w| w == 0));
        }
    }
}
