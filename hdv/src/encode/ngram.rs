use std::collections::HashMap;

use crate::bundle::{Bundler, VoteSink};
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
/// allocations, and on the AVX-512 kernel the n-grams are added to dense counters
/// (the same votes). Unlike [`TextEncoder`](super::TextEncoder), nothing but the n-grams
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
        let mut buf = Vec::new();
        for c in text.chars() {
            buf.push(c.to_string());
        }
        let symbols: Vec<&str> = buf.iter().map(String::as_str).collect();
        self.add_symbols(&symbols, bundler)
    }
}
