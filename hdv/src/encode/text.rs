use std::collections::HashMap;
use std::sync::Arc;

use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::bundle::{Bundler, VoteSink};
use crate::encode::ItemMemory;
use crate::error::{Error, Result};
use crate::hypervector::{Dim, Hypervector};

/// Bytes of word vectors one [`TextEncoder`] keeps cached (each cache is cleared when it
/// reaches this size; a vector is derived again from its seed when next needed).
const ITEM_CACHE_BYTES: usize = 16 << 20;
/// Words a cache holds at least, whatever the dimension.
const ITEM_CACHE_MIN: usize = 1024;

/// Per-term weights supplied by the caller, typically inverse document frequencies computed
/// over the caller's corpus with the same [`TextEncoder::tokens`].
pub trait TermWeights {
    /// The weight of `term` (a normalized token); 0 drops it, negative values count as 0.
    fn weight(&self, term: &str) -> f32;
}

impl<F: Fn(&str) -> f32> TermWeights for F {
    fn weight(&self, term: &str) -> f32 {
        self(term)
    }
}

/// Every term weighs 1.
#[derive(Debug, Clone, Copy, Default)]
pub struct UniformWeights;

impl TermWeights for UniformWeights {
    fn weight(&self, _term: &str) -> f32 {
        1.0
    }
}

/// Settings of a [`TextEncoder`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TextConfig {
    /// Seed of the symbol item memory.
    pub seed: u64,
    /// Character n-gram length (0 disables n-grams).
    pub ngram: usize,
    /// Weight of each character n-gram relative to its word.
    pub ngram_weight: f32,
    /// Weight of each ordered word pair relative to its lighter word (0 disables order).
    pub order_weight: f32,
    /// Resolution of weights: a feature of weight `w` adds `round(w * quantum)` votes.
    pub quantum: f32,
}

impl Default for TextConfig {
    fn default() -> Self {
        Self {
            seed: 0x6879_7065_726d_656d, // "hypermem"
            ngram: 3,
            ngram_weight: 0.5,
            order_weight: 0.5,
            quantum: 16.0,
        }
    }
}

/// Word vectors that replace the item memory's random ones: a **semantic item memory**
/// (for example the sign projection of each word's embedding in a static model), so that
/// bundling words makes similar words count as shared features.
pub trait WordVectors: Send + Sync + std::fmt::Debug {
    /// The vector of the (normalized) word `word` at `dim` bits, or `None` to keep its
    /// random item vector.
    fn vector(&self, word: &str, dim: Dim) -> Option<Hypervector>;
}

/// Encodes text as the weighted majority bundle of its features:
///
/// - **normalization**: Unicode NFKC, then Unicode lowercase;
/// - **tokens**: Unicode words (UAX #29 word boundaries, punctuation dropped);
/// - **word features** `W(t)` = item vector of `"w\u{1f}" + t`, weight `weight(t)`;
/// - **character n-grams** of `"\u{2}" + t + "\u{3}"`: `ρ^(n-1)(C(c_0)) ⊕ … ⊕ C(c_(n-1))` with
///   `C(c)` = item vector of `"c\u{1f}" + c`, weight `ngram_weight * weight(t)` each;
/// - **order**: each adjacent word pair as `ρ(W(t_i)) ⊕ W(t_(i+1))`, weight
///   `order_weight * min(weight(t_i), weight(t_(i+1)))`.
///
/// Ties are broken by a coin seeded from the token sequence ([`TextEncoder::tie_seed`]), so
/// the same text always gives the same vector. Texts sharing most words are close; unrelated texts are at the
/// random-pair distance.
///
/// This is a retrieval encoder, **not** the classic n-gram protocol of HDC language
/// identification: it always adds word features, its n-grams never cross a word boundary
/// (each word is framed by `\u{2}` … `\u{3}`), and its item keys are prefixed (`"c\u{1f}"`),
/// so its n-grams differ from [`encode_ngram`](super::encode_ngram) of plain item vectors.
/// For the classic protocol (every n-gram of the raw character stream, spaces included,
/// nothing else) use [`NgramEncoder`](super::NgramEncoder).
#[derive(Debug, Clone)]
pub struct TextEncoder {
    config: TextConfig,
    items: ItemMemory,
    /// `ρ^shift(C(c))` per (character, shift), so an n-gram is n XORs of cached vectors.
    shifted_chars: HashMap<(char, usize), Hypervector, crate::fasthash::FxBuild>,
    /// A semantic item memory for word features, if one is set.
    words: Option<Arc<dyn WordVectors>>,
    /// Its vectors (or `None`: the word keeps its item vector), cached per word.
    word_cache: HashMap<String, Option<Hypervector>>,
    /// Scratch buffer for item-memory keys.
    key: String,
    /// Words each cache holds before it is cleared.
    cache_cap: usize,
}

impl TextEncoder {
    /// A text encoder producing `dim`-bit vectors.
    pub fn new(dim: Dim, config: TextConfig) -> Self {
        Self {
            items: ItemMemory::new(dim, config.seed),
            config,
            shifted_chars: HashMap::default(),
            words: None,
            word_cache: HashMap::new(),
            key: String::new(),
            cache_cap: (ITEM_CACHE_BYTES / dim.bytes()).max(ITEM_CACHE_MIN),
        }
    }

    /// The same encoder with word features taken from `words` where it has a vector (a
    /// semantic item memory); character n-grams keep their item vectors.
    #[must_use]
    pub fn with_word_vectors(mut self, words: Arc<dyn WordVectors>) -> Self {
        self.words = Some(words);
        self.word_cache.clear();
        self
    }

    /// `W(t)`: the word's vector from the semantic item memory, else its item vector.
    fn word(&mut self, t: &str) -> &Hypervector {
        // Bounded caches: a long-lived encoder meets an unbounded vocabulary (names,
        // numbers, identifiers), and a vector is cheap to derive again from its seed.
        if self.items.len() >= self.cache_cap {
            self.items.clear_cache();
        }
        if self.word_cache.len() >= self.cache_cap {
            self.word_cache.clear();
        }
        if let Some(words) = &self.words {
            if !self.word_cache.contains_key(t) {
                let v = words.vector(t, self.items.dim());
                self.word_cache.insert(t.to_owned(), v);
            }
            if matches!(self.word_cache.get(t), Some(Some(_))) {
                return self.word_cache[t].as_ref().expect("checked");
            }
        }
        // The item memory's key of a word, built in a buffer kept for the purpose.
        self.key.clear();
        self.key.push_str("w\u{1f}");
        self.key.push_str(t);
        self.items.get(&self.key)
    }

    /// The dimension.
    pub fn dim(&self) -> Dim {
        self.items.dim()
    }

    /// The settings.
    pub fn config(&self) -> &TextConfig {
        &self.config
    }

    /// NFKC + lowercase normalization. ASCII text is its own NFKC form, so it is only
    /// lowercased (the same string, without the decomposition tables).
    pub fn normalize(text: &str) -> String {
        if text.is_ascii() {
            return text.to_ascii_lowercase();
        }
        text.nfkc().collect::<String>().to_lowercase()
    }

    /// The normalized word tokens of `text`, in order.
    pub fn tokens(text: &str) -> Vec<String> {
        Self::normalize(text)
            .unicode_words()
            .map(str::to_owned)
            .collect()
    }

    fn votes(&self, weight: f32) -> i64 {
        if weight.is_finite() && weight > 0.0 {
            (weight * self.config.quantum).round() as i64
        } else {
            0
        }
    }

    /// Adds the features of `text` to `bundler` (so counters can be kept and combined) and
    /// returns how many features were added.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if the bundler's dimension differs from the encoder's.
    pub fn encode_into(
        &mut self,
        text: &str,
        weights: &impl TermWeights,
        bundler: &mut Bundler,
    ) -> Result<usize> {
        self.encode_with(&Self::tokens(text), weights, bundler, false)
    }

    /// [`encode_into`](Self::encode_into) on the portable path: every feature added to the
    /// bit-sliced counters directly, as on a CPU without AVX-512. The reference the fast
    /// path is tested against (the counters are identical); slower where AVX-512 exists.
    ///
    /// # Errors
    /// As [`encode_into`](Self::encode_into).
    pub fn encode_into_bit_sliced(
        &mut self,
        text: &str,
        weights: &impl TermWeights,
        bundler: &mut Bundler,
    ) -> Result<usize> {
        self.encode_with(&Self::tokens(text), weights, bundler, true)
    }

    fn encode_with(
        &mut self,
        tokens: &[String],
        weights: &impl TermWeights,
        bundler: &mut Bundler,
        bit_sliced: bool,
    ) -> Result<usize> {
        if bundler.dim() != self.dim() {
            return Err(Error::DimensionMismatch {
                expected: self.dim().bits(),
                found: bundler.dim().bits(),
            });
        }
        let mut sink = if bit_sliced {
            VoteSink::bit_sliced(bundler)
        } else {
            VoteSink::new(bundler)
        };
        let features = self.encode_features(tokens, weights, &mut sink);
        sink.finish();
        Ok(features)
    }

    /// Adds the features of `text` to `sink`; returns how many.
    fn encode_features(
        &mut self,
        tokens: &[String],
        weights: &impl TermWeights,
        bundler: &mut VoteSink<'_>,
    ) -> usize {
        let token_weights: Vec<f32> = tokens.iter().map(|t| weights.weight(t).max(0.0)).collect();
        // Bundling is a sum, so a feature occurring m times is added once with m times the
        // votes: the same counters (and vector), far fewer additions for long texts.
        // Grouped by sorting (no hashing of user text): each distinct token in order, with
        // its count and its weight (the weight is a function of the token).
        let mut sorted: Vec<(&str, f32)> = tokens
            .iter()
            .map(String::as_str)
            .zip(token_weights.iter().copied())
            .collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut unique: Vec<(&str, (i64, f32))> = Vec::with_capacity(sorted.len());
        for (t, w) in sorted {
            match unique.last_mut() {
                Some((last, (count, _))) if *last == t => *count += 1,
                _ => unique.push((t, (1, w))),
            }
        }
        let mut features = 0;
        for (t, (count, w)) in unique {
            let votes = self.votes(w);
            if votes == 0 {
                continue;
            }
            bundler.add_weighted(self.word(t), votes * count);
            features += count as usize;
            features += count as usize * self.add_ngrams(t, w, count, bundler);
        }
        if self.config.order_weight > 0.0 {
            let mut all: Vec<((&str, &str), i64)> = Vec::with_capacity(tokens.len());
            for (pair, ws) in tokens.windows(2).zip(token_weights.windows(2)) {
                let votes = self.votes(self.config.order_weight * ws[0].min(ws[1]));
                if votes > 0 {
                    all.push(((pair[0].as_str(), pair[1].as_str()), votes));
                }
            }
            all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            let mut pairs: Vec<((&str, &str), i64)> = Vec::with_capacity(all.len());
            for (pair, votes) in all {
                match pairs.last_mut() {
                    Some((last, sum)) if *last == pair => *sum += votes,
                    _ => pairs.push((pair, votes)),
                }
            }
            for ((a, b), votes) in pairs {
                let first = self.word(a).permute(1);
                let second = self.word(b);
                bundler.add_bound(&[&first, second], votes);
                features += 1;
            }
        }
        features
    }

    /// Adds the n-grams of `token` (occurring `count` times); returns n-grams per occurrence.
    fn add_ngrams(
        &mut self,
        token: &str,
        weight: f32,
        count: i64,
        bundler: &mut VoteSink<'_>,
    ) -> usize {
        let n = self.config.ngram;
        let votes = self.votes(self.config.ngram_weight * weight) * count;
        if n == 0 || votes == 0 {
            return 0;
        }
        let chars: Vec<char> = std::iter::once('\u{2}')
            .chain(token.chars())
            .chain(std::iter::once('\u{3}'))
            .collect();
        if chars.len() < n {
            return 0;
        }
        // Fill the cache first, so the n vectors of each n-gram can be borrowed together.
        for (i, &c) in chars.iter().enumerate() {
            for shift in 0..n {
                // Position i takes shift n - 1 - k in the n-grams where it is the k-th.
                if i + shift + 1 >= n && i + shift < chars.len() {
                    self.shifted_char(c, shift);
                }
            }
        }
        let mut added = 0;
        let mut parts: Vec<&Hypervector> = Vec::with_capacity(n);
        for gram in chars.windows(n) {
            parts.clear();
            parts.extend(
                gram.iter()
                    .enumerate()
                    .map(|(i, &c)| &self.shifted_chars[&(c, n - 1 - i)]),
            );
            bundler.add_bound(&parts, votes);
            added += 1;
        }
        added
    }

    /// `ρ^shift` of the item vector of character `c`, cached.
    fn shifted_char(&mut self, c: char, shift: usize) -> &Hypervector {
        let items = &mut self.items;
        self.shifted_chars.entry((c, shift)).or_insert_with(|| {
            let mut buf = [0u8; 4];
            let key = [b"c\x1f".as_slice(), c.encode_utf8(&mut buf).as_bytes()].concat();
            items.get_bytes(&key).permute(shift)
        })
    }

    /// The tie-breaking seed of `text`: XXH3-64 of its tokens joined by U+001F, so texts
    /// with the same tokens get the same vector.
    pub fn tie_seed(&self, text: &str) -> u64 {
        self.seed_of_tokens(&Self::tokens(text))
    }

    /// [`tie_seed`](Self::tie_seed) of a text already tokenized.
    fn seed_of_tokens(&self, tokens: &[String]) -> u64 {
        let joined = tokens.join("\u{1f}");
        xxh3_64_with_seed(joined.as_bytes(), self.config.seed)
    }

    /// The vector of `text` with the caller's term weights.
    ///
    /// # Errors
    /// [`Error::EmptyBundle`] if the text has no token with a positive weight.
    pub fn encode(&mut self, text: &str, weights: &impl TermWeights) -> Result<Hypervector> {
        // One tokenization serves the features and the tie-breaking seed.
        let tokens = Self::tokens(text);
        let mut bundler = Bundler::new(self.dim());
        self.encode_with(&tokens, weights, &mut bundler, false)?;
        bundler.binarize(self.seed_of_tokens(&tokens))
    }
}
