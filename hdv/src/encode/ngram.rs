use std::collections::HashMap;

use crate::bundle::{Bundler, TiledArena, VoteSink, XorFeature};
use crate::encode::ItemMemory;
use crate::error::{Error, Result};
use crate::fasthash::FxBuild;
use crate::hypervector::{Dim, Hypervector};

/// Bundles every n-gram of a sequence of symbols: the classic HDC protocol of letter
/// n-gram language identification (Joshi et al. 2016; Rahimi et al. 2016), where a text is
/// the bundle of `ρ^(n-1)(x_i) ⊕ … ⊕ ρ^0(x_(i+n-1))` over all windows `i`.
///
/// Each n-gram is exactly [`encode_ngram`](super::encode_ngram) of the item vectors
/// [`ItemMemory::vector`] gives its symbols, but the permuted item vectors are cached per
/// (symbol, shift), so an n-gram costs `n` XORs instead of `n` permutations and
/// allocations, and the n-grams are added to dense counters (the same votes); n-grams of up
/// to three symbols are added straight from the cached vectors by the carry-save kernels,
/// never computed one by one. Unlike [`TextEncoder`](super::TextEncoder), nothing but the n-grams
/// is added: no word features, no word boundaries.
///
/// ```
/// use hdv::encode::{ItemMemory, NgramEncoder, encode_ngram};
/// use hdv::{Bundler, Dim};
/// let dim = Dim::round_up(10_000).unwrap();
/// let mut trigrams = NgramEncoder::new(dim, 7, 3).unwrap();
/// let mut fast = Bundler::new(dim);
/// assert_eq!(trigrams.add_chars("the cat", &mut fast), 5);
/// // The same votes as adding each n-gram on its own.
/// let items = ItemMemory::new(dim, 7);
/// let mut slow = Bundler::new(dim);
/// let chars: Vec<String> = "the cat".chars().map(String::from).collect();
/// for w in chars.windows(3) {
///     let v: Vec<_> = w.iter().map(|c| items.vector(c)).collect();
///     slow.add(&encode_ngram(&v).unwrap());
/// }
/// assert_eq!(fast.to_bytes(), slow.to_bytes());
/// ```
#[derive(Debug, Clone)]
pub struct NgramEncoder {
    n: usize,
    items: ItemMemory,
    /// Per symbol, its item vector permuted by 0..n.
    shifted: HashMap<Box<str>, Vec<Hypervector>, FxBuild>,
    /// For n ≤ 3, the same permuted vectors as slots of a tiled arena, per symbol (slot of
    /// shift `k` at `k`), so an n-gram is an [`XorFeature`] of its symbols' slots.
    slots: HashMap<Box<str>, [u32; 3], FxBuild>,
    arena: Option<TiledArena>,
}

impl NgramEncoder {
    /// N-grams of `n` symbols over `dim`-bit item vectors of `ItemMemory::new(dim, seed)`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for `n` = 0.
    pub fn new(dim: Dim, seed: u64, n: usize) -> Result<Self> {
        if n == 0 {
            return Err(Error::InvalidParameter {
                name: "n",
                reason: "an n-gram needs at least one symbol".into(),
            });
        }
        Ok(Self {
            n,
            items: ItemMemory::new(dim, seed),
            shifted: HashMap::default(),
            slots: HashMap::default(),
            arena: (n <= 3).then(|| TiledArena::new(dim.words())),
        })
    }

    /// The n-gram length.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The item memory symbols are drawn from.
    pub fn items(&self) -> &ItemMemory {
        &self.items
    }

    /// Adds every n-gram of `symbols` (each window of `n` consecutive ones) to `bundler`
    /// with weight 1; returns how many (0 when there are fewer than `n` symbols).
    ///
    /// # Panics
    /// If `bundler` has another dimension.
    pub fn add_symbols(&mut self, symbols: &[&str], bundler: &mut Bundler) -> usize {
        assert_eq!(
            bundler.dim(),
            self.items.dim(),
            "the bundler's dimension differs from the encoder's"
        );
        let n = self.n;
        if symbols.len() < n {
            return 0;
        }
        if let Some(arena) = &mut self.arena {
            // One lookup per symbol; a new symbol's permuted vectors join the arena.
            let mut rows: Vec<[u32; 3]> = Vec::with_capacity(symbols.len());
            for s in symbols {
                let row = match self.slots.get(*s) {
                    Some(row) => *row,
                    None => {
                        let v = self.items.vector(s);
                        // Shifts past n are the zero slot: an n-gram of fewer than three
                        // symbols XORs it in.
                        let mut row = [0u32; 3];
                        for (k, slot) in row.iter_mut().enumerate().take(n) {
                            *slot = arena.push(v.permute(k).words());
                        }
                        self.slots.insert((*s).into(), row);
                        row
                    }
                };
                rows.push(row);
            }
            let features: Vec<XorFeature> = rows
                .windows(n)
                .map(|w| {
                    let mut parts = [0u32; 3];
                    for (i, row) in w.iter().enumerate() {
                        parts[i] = row[n - 1 - i];
                    }
                    XorFeature {
                        parts,
                        weight: 1,
                        total: 1,
                    }
                })
                .collect();
            let mut sink = VoteSink::new(bundler);
            sink.add_xor_features(arena, &features);
            sink.finish();
            return features.len();
        }
        for s in symbols {
            if !self.shifted.contains_key(*s) {
                let v = self.items.vector(s);
                let perms = (0..n).map(|k| v.permute(k)).collect();
                self.shifted.insert((*s).into(), perms);
            }
        }
        let rows: Vec<&Vec<Hypervector>> = symbols.iter().map(|s| &self.shifted[*s]).collect();
        let mut sink = VoteSink::new(bundler);
        let mut parts: Vec<&Hypervector> = Vec::with_capacity(n);
        for w in rows.windows(n) {
            parts.clear();
            parts.extend(w.iter().enumerate().map(|(i, row)| &row[n - 1 - i]));
            sink.add_bound(&parts, 1);
        }
        sink.finish();
        symbols.len() - n + 1
    }

    /// [`add_symbols`](Self::add_symbols) over the characters of `text` (each `char` a
    /// symbol, spaces and punctuation included: normalize the text first if the protocol
    /// asks for it).
    ///
    /// # Panics
    /// As [`add_symbols`](Self::add_symbols).
    pub fn add_chars(&mut self, text: &str, bundler: &mut Bundler) -> usize {
        // Each character as the slice of `text` it occupies: no string per character.
        let symbols: Vec<&str> = text
            .char_indices()
            .map(|(i, c)| &text[i..i + c.len_utf8()])
            .collect();
        self.add_symbols(&symbols, bundler)
    }
}
