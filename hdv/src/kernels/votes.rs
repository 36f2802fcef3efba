//! Portable kernels of [`crate::bundle::DenseVotes`]: the same exact `i16` counters (and
//! a text's majority straight from its sum planes), from plain `u64` logic the compiler
//! vectorizes, compiled once as is and once each with AVX2 and AVX-512 enabled, chosen at
//! run time by the process's kernel tier. AVX-512 keeps its own counter kernels in
//! `x86_64::votes`.
//!
//! Features given as XORs of arena slots go through a carry-save adder, one tile of 8
//! words at a time: a weight is a sum of powers of two, so a feature is one input at each
//! level where its weight has a bit; a level's inputs and the carries of the level below
//! are summed by a chain of full adders (sum = a ⊕ b ⊕ c, carry = majority), whose sum bit
//! is that level's plane of the tile's total. Each plane is then added to the counters
//! once. A feature costs a handful of word operations per 64 bits instead of a ripple
//! through every counter plane of a [`crate::Bundler`].

use crate::bundle::{TiledArena, XorFeature};

/// Counter planes a tile's sums can reach: the caller keeps every counter inside `i16`.
/// Weights are below `2^(LEVELS - 1)`, so features are inputs to the first `LEVELS` levels.
pub(crate) const LEVELS: usize = 16;

/// Sum planes a majority read straight from them uses (no counters): sums below `2^24`.
pub(crate) const MAJORITY_LEVELS: usize = 24;

/// Scratch of the carry-save adders, kept between texts: the features ordered by the bits
/// of their weights, and the carry vectors passed from one level of the adder to the next.
#[derive(Debug, Clone, Default)]
pub(crate) struct CarrySaveScratch {
    /// The features' parts as blocks of a tile row (slot × 8), level by level: those whose
    /// weight has bit `l` set are `parts[starts[l] .. starts[l + 1]]`.
    pub(crate) parts: Vec<[u32; 3]>,
    pub(crate) starts: [usize; LEVELS + 1],
    /// Carries into the level being added, and out of it.
    pub(crate) carries_in: Vec<[u64; 8]>,
    pub(crate) carries_out: Vec<[u64; 8]>,
}

impl CarrySaveScratch {
    /// Orders `features` by the bits of their weights (a counting sort) and sizes the
    /// carry buffers; checks every part is in `arena` and every weight in range.
    pub(crate) fn prepare(&mut self, arena: &TiledArena, features: &[XorFeature]) {
        for f in features {
            for &p in &f.parts {
                assert!((p as usize) < arena.len(), "feature part out of the arena");
            }
            assert!(
                (0..1 << (LEVELS - 1)).contains(&f.weight),
                "a weight within the counters' range"
            );
        }
        let levels = |w: i64| {
            let mut w = w as u64;
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let l = w.trailing_zeros() as usize;
                    w &= w - 1;
                    l
                })
            })
        };
        let mut starts = [0usize; LEVELS + 1];
        for f in features {
            for l in levels(f.weight) {
                starts[l + 1] += 1;
            }
        }
        for l in 0..LEVELS {
            starts[l + 1] += starts[l];
        }
        self.parts.clear();
        self.parts.resize(starts[LEVELS], [0; 3]);
        let mut next = starts;
        for f in features {
            for l in levels(f.weight) {
                self.parts[next[l]] = f.parts.map(|p| p * 8);
                next[l] += 1;
            }
        }
        self.starts = starts;
        // A level emits at most half as many carries as it has inputs.
        let most = starts.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0) + 1;
        self.carries_in.resize(2 * most, [0; 8]);
        self.carries_out.resize(2 * most, [0; 8]);
    }
}

/// The tier the vote kernels run at in this process: that of its kernel (detected, or
/// forced by `HDV_KERNEL`, so forcing `avx2` or `scalar` on a wider CPU runs what a
/// narrower one runs), AVX-512 only with BW. It picks the copy of these portable kernels
/// and whether [`crate::bundle::DenseVotes`] uses the AVX-512 counter kernels.
#[cfg(target_arch = "x86_64")]
pub(crate) fn tier() -> crate::kernels::KernelKind {
    use crate::kernels::KernelKind;
    match crate::kernels::try_active().map(|k| k.kind()) {
        Ok(KernelKind::Avx512) if crate::kernels::x86_64::has_avx512bw() => KernelKind::Avx512,
        Ok(KernelKind::Avx512 | KernelKind::Avx2) => KernelKind::Avx2,
        _ => KernelKind::Scalar,
    }
}

/// Runs `$body` (a call of an `#[inline(always)]` function) compiled for this process's
/// [`tier`]: with AVX-512, with AVX2, or as is. It is plain `u64` logic on tiles of 8
/// words, which each compiles into whole registers.
macro_rules! dispatch {
    ($name:ident($($arg:ident: $t:ty),*) $(-> $r:ty)? => $body:ident) => {
        pub(crate) fn $name($($arg: $t),*) $(-> $r)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512bw")]
                fn widest($($arg: $t),*) $(-> $r)? {
                    $body($($arg),*)
                }
                #[target_feature(enable = "avx2")]
                fn wide($($arg: $t),*) $(-> $r)? {
                    $body($($arg),*)
                }
                match tier() {
                    // SAFETY: that tier's kernel runs only where the CPU has AVX-512F and
                    // BW (checked by `tier`).
                    crate::kernels::KernelKind::Avx512 => return unsafe { widest($($arg),*) },
                    // SAFETY: the AVX2 (or AVX-512) kernel runs only where the CPU has AVX2.
                    crate::kernels::KernelKind::Avx2 => return unsafe { wide($($arg),*) },
                    crate::kernels::KernelKind::Scalar => {}
                }
            }
            $body($($arg),*)
        }
    };
}

dispatch!(add_many(counts: &mut [i16], features: &[u64], weights: &[i16]) => add_many_body);
dispatch!(transpose(counts: &[i16], planes: usize, slices: &mut [u64]) => transpose_body);
dispatch!(add_xor_features(counts: &mut [i16], arena: &TiledArena, features: &[XorFeature], scratch: &mut CarrySaveScratch) => add_xor_body);
dispatch!(majority_words(counts: &[i16], half: i16, even: bool, out: &mut [u64], coins: &[u64]) => majority_body);
dispatch!(count_xors(arena: &TiledArena, xors: &[Vec<u32>], planes: &mut [u64], carry: &mut [u64]) => count_xors_body);
dispatch!(majority_of_xor_features(arena: &TiledArena, features: &[XorFeature], half: i32, even: bool, out: &mut [u64], coins: &[u64], scratch: &mut CarrySaveScratch) => majority_xor_body);

/// Adds to the bit planes `planes` (plane-major, `carry.len()` words each) the XOR of the
/// `arena` slots of each entry of `xors`, one ripple-carry pass per plane: the planes end
/// up holding, per bit, how many of the XORs set it. `carry` is scratch.
#[inline(always)]
fn count_xors_body(arena: &TiledArena, xors: &[Vec<u32>], planes: &mut [u64], carry: &mut [u64]) {
    let w = carry.len();
    for slots in xors {
        carry.fill(0);
        for &s in slots {
            arena.xor_into(s, carry);
        }
        for plane in planes.chunks_exact_mut(w) {
            for (p, c) in plane.iter_mut().zip(carry.iter_mut()) {
                let next = *p & *c;
                *p ^= *c;
                *c = next;
            }
        }
        debug_assert!(carry.iter().all(|&c| c == 0), "the planes hold the count");
    }
}

/// `counts[64 i + b] += w` for every bit `b` of word `i`.
#[inline(always)]
fn add_word(counts: &mut [i16], word: u64, w: i16) {
    for (b, c) in counts.iter_mut().enumerate().take(64) {
        *c = c.wrapping_add(w & -(((word >> b) & 1) as i16));
    }
}

/// Adds every buffered feature: `features` holds `weights.len()` vectors of
/// `counts.len() / 64` words each, one after another.
#[inline(always)]
fn add_many_body(counts: &mut [i16], features: &[u64], weights: &[i16]) {
    let words = counts.len() / 64;
    assert_eq!(features.len(), words * weights.len());
    for (f, &w) in weights.iter().enumerate() {
        for (i, &word) in features[f * words..(f + 1) * words].iter().enumerate() {
            add_word(&mut counts[64 * i..64 * i + 64], word, w);
        }
    }
}

/// Word-major bit planes of the counters: `slices[i * planes + p]` bit `b` = bit `p` of
/// `counts[64 i + b]` (two's complement, bit 15 standing for every higher plane).
#[inline(always)]
fn transpose_body(counts: &[i16], planes: usize, slices: &mut [u64]) {
    assert_eq!(counts.len() * planes, slices.len() * 64);
    for (lanes, s) in counts.chunks_exact(64).zip(slices.chunks_exact_mut(planes)) {
        for (p, plane) in s.iter_mut().enumerate() {
            let shift = p.min(15);
            *plane = lanes.iter().enumerate().fold(0u64, |acc, (b, &c)| {
                acc | ((((c as u16) >> shift) & 1) as u64) << b
            });
        }
    }
}

/// Majority bits: where `counts > half`, and where equal (for an even total) the coin.
#[inline(always)]
fn majority_body(counts: &[i16], half: i16, even: bool, out: &mut [u64], coins: &[u64]) {
    for ((o, lanes), &coin) in out.iter_mut().zip(counts.chunks_exact(64)).zip(coins) {
        let (mut above, mut tied) = (0u64, 0u64);
        for (b, &c) in lanes.iter().enumerate() {
            above |= u64::from(c > half) << b;
            tied |= u64::from(c == half) << b;
        }
        *o = above | if even { tied & coin } else { 0 };
    }
}

/// Adds every feature of `features` (XORs of three `arena` slots) with its weight.
#[inline(always)]
fn add_xor_body(
    counts: &mut [i16],
    arena: &TiledArena,
    features: &[XorFeature],
    s: &mut CarrySaveScratch,
) {
    let mut tiles = TileSums::new(arena, features, counts.len() / 64, s);
    while let Some((t, n, planes)) = tiles.next::<LEVELS>(s) {
        add_planes(&mut counts[512 * t..512 * t + 64 * n], &planes);
    }
}

/// The tiles of a prepared feature list, one after another: each tile's index, how many
/// of its 8 words the vectors have, and the features' sum over it as bit planes
/// ([`tile_planes`]). The next tile's blocks are prefetched while one is summed. An
/// iterator with an inlined `next` rather than a closure per tile, so the caller's
/// consumer stays in its AVX2 compilation.
struct TileSums<'a> {
    data: &'a [u64],
    stride: usize,
    tiles: usize,
    words: usize,
    next: usize,
}

impl<'a> TileSums<'a> {
    /// Prepares `features` into `s` for vectors of `words` words.
    #[inline(always)]
    fn new(
        arena: &'a TiledArena,
        features: &[XorFeature],
        words: usize,
        s: &mut CarrySaveScratch,
    ) -> Self {
        assert_eq!(
            arena.tiles(),
            words.div_ceil(8),
            "an arena of the vectors' dimension"
        );
        s.prepare(arena, features);
        Self {
            data: arena.data(),
            stride: arena.stride(),
            tiles: arena.tiles(),
            words,
            next: 0,
        }
    }

    #[inline(always)]
    fn row(&self, t: usize) -> &'a [u64] {
        &self.data[t * self.stride * 8..][..self.stride * 8]
    }

    /// The next tile summed into `L` planes, or `None` after the last.
    #[inline(always)]
    fn next<const L: usize>(
        &mut self,
        s: &mut CarrySaveScratch,
    ) -> Option<(usize, usize, [Tile; L])> {
        let t = self.next;
        if t == self.tiles {
            return None;
        }
        self.next += 1;
        if self.next < self.tiles {
            prefetch_blocks(self.row(self.next), s);
        }
        let n = (self.words - 8 * t).min(8);
        Some((t, n, tile_planes::<L>(self.row(t), s)))
    }
}

/// Hints the CPU to fetch the blocks of the tile row `row` that the prepared features
/// read (the zero slot's is always at hand): a text's slots lie anywhere in an arena of
/// up to 16 MB, so without it each block is a cache miss waited for in turn.
#[inline(always)]
fn prefetch_blocks(row: &[u64], s: &CarrySaveScratch) {
    #[cfg(target_arch = "x86_64")]
    for part in &s.parts {
        for &at in part {
            if at != 0 {
                crate::kernels::x86_64::prefetch(row.as_ptr().wrapping_add(at as usize).cast());
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (row, s);
}

type Tile = [u64; 8];

/// One tile of a feature: the XOR of its three parts' blocks in `row`. A function, not a
/// closure: a closure the compiler leaves out of line runs without the caller's AVX2.
#[inline(always)]
fn feature_block(row: &[u64], [a, b, c]: [u32; 3]) -> Tile {
    let block = |at: u32| -> &Tile {
        row[at as usize..at as usize + 8]
            .try_into()
            .expect("8 words")
    };
    xor3(block(a), block(b), block(c))
}

#[inline(always)]
fn xor3(a: &Tile, b: &Tile, c: &Tile) -> Tile {
    std::array::from_fn(|i| a[i] ^ b[i] ^ c[i])
}

/// A full adder on every bit of a tile: `ones` becomes the sum bit of `ones + x + y`; the
/// carry bit is returned.
#[inline(always)]
fn full_add(ones: &mut Tile, x: &Tile, y: &Tile) -> Tile {
    let mut carry = [0u64; 8];
    for i in 0..8 {
        let (o, a, b) = (ones[i], x[i], y[i]);
        carry[i] = (o & a) | (o & b) | (a & b);
        ones[i] = o ^ a ^ b;
    }
    carry
}

/// The majority of `features` alone (XORs of `arena` slots) into `out`: bit `b` set where
/// their weighted count is above `half`, and where it equals `half` (for an `even` total)
/// the coin, `coins` holding one per word. The count is compared with `half` on each
/// tile's carry-save sum planes, from the top plane down, so no counter is written: the
/// vector [`add_xor_body`] into zeroed counters and then [`majority_body`] give.
#[inline(always)]
fn majority_xor_body(
    arena: &TiledArena,
    features: &[XorFeature],
    half: i32,
    even: bool,
    out: &mut [u64],
    coins: &[u64],
    s: &mut CarrySaveScratch,
) {
    let words = out.len();
    assert_eq!(coins.len(), words, "one coin per word");
    assert!(
        (0..1 << MAJORITY_LEVELS).contains(&half),
        "a threshold within the sum planes"
    );
    let mut tiles = TileSums::new(arena, features, words, s);
    while let Some((t, n, planes)) = tiles.next::<MAJORITY_LEVELS>(s) {
        // Above: a higher plane where the count has a 1 and `half` a 0, all planes above
        // equal. Equal: every plane so far agrees with `half`.
        let (mut above, mut equal) = ([0u64; 8], [!0u64; 8]);
        for (l, plane) in planes.iter().enumerate().rev() {
            if (half >> l) & 1 == 1 {
                for i in 0..8 {
                    equal[i] &= plane[i];
                }
            } else {
                for i in 0..8 {
                    above[i] |= equal[i] & plane[i];
                    equal[i] &= !plane[i];
                }
            }
        }
        for j in 0..n {
            let tied = if even { equal[j] & coins[8 * t + j] } else { 0 };
            out[8 * t + j] = above[j] | tied;
        }
    }
}

/// Adds one tile's sum planes to its counters (`counts`: 64 per word the tile holds).
#[inline(always)]
fn add_planes(counts: &mut [i16], planes: &[Tile; LEVELS]) {
    let n = counts.len() / 64;
    for (l, plane) in planes.iter().enumerate() {
        if plane.iter().all(|&w| w == 0) {
            continue;
        }
        let w = 1i16 << l;
        for (j, &word) in plane.iter().enumerate().take(n) {
            add_word(&mut counts[64 * j..64 * j + 64], word, w);
        }
    }
}

/// The sum of the prepared features over one tile as `L` bit planes (plane `l` holds bit
/// `l` of each count; the sums must stay below `2^L`): `row` holds that tile of every
/// arena slot (8 words each). Levels past [`LEVELS`] take only carries.
#[inline(always)]
fn tile_planes<const L: usize>(row: &[u64], s: &mut CarrySaveScratch) -> [Tile; L] {
    let mut planes = [[0u64; 8]; L];
    let mut carried = 0;
    for (l, plane) in planes.iter_mut().enumerate() {
        let inputs = if l < LEVELS {
            &s.parts[s.starts[l]..s.starts[l + 1]]
        } else {
            &[]
        };
        if inputs.is_empty() && carried == 0 {
            continue;
        }
        let mut ones = [0u64; 8];
        let mut emitted = 0;
        let (carries_in, out) = (&s.carries_in[..carried], &mut s.carries_out);
        // The adders are written out at each call (no closure): a closure the compiler
        // leaves out of line loses the caller's target features and its registers.
        let mut pairs = inputs.chunks_exact(2);
        for p in &mut pairs {
            out[emitted] = full_add(
                &mut ones,
                &feature_block(row, p[0]),
                &feature_block(row, p[1]),
            );
            emitted += 1;
        }
        // The odd feature goes with the first carry; then the carries in pairs.
        let mut held = pairs.remainder().first().map(|&p| feature_block(row, p));
        let mut rest = carries_in;
        if let (Some(x), Some((c, after))) = (held, rest.split_first()) {
            out[emitted] = full_add(&mut ones, &x, c);
            emitted += 1;
            held = None;
            rest = after;
        }
        let mut pairs = rest.chunks_exact(2);
        for p in &mut pairs {
            out[emitted] = full_add(&mut ones, &p[0], &p[1]);
            emitted += 1;
        }
        if let Some(c) = pairs.remainder().first() {
            held = Some(*c);
        }
        if let Some(h) = held {
            if emitted == 0 {
                ones = h;
            } else {
                for i in 0..8 {
                    out[emitted][i] = ones[i] & h[i];
                    ones[i] ^= h[i];
                }
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
    planes
}
