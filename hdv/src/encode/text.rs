use std::collections::HashMap;
use std::sync::Arc;

use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::bundle::{Bundler, DenseVotes, TiledArena, VoteSink, XorFeature};
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
    /// Derives item vectors (its own cache is not used: vectors live in `arena`).
    items: ItemMemory,
    /// A semantic item memory for word features, if one is set.
    words: Option<Arc<dyn WordVectors>>,
    /// The vectors features are built from, `dim.words()` words per slot: slot 0 is zeros
    /// (a part a feature does not need), per (character, shift) `ρ^shift(C(c))`, and per
    /// word (see [`WordEntry`]) `W(t)`, `ρ(W(t))` and the bit planes of its n-gram counts.
    arena: TiledArena,
    word_slots: HashMap<Box<str>, WordEntry>,
    char_slots: HashMap<(char, usize), u32, crate::fasthash::FxBuild>,
    /// Scratch buffer for item-memory keys.
    key: String,
    /// Slots the cache holds before it is cleared (at the start of a text).
    cache_cap: usize,
    /// Dense vote counters (and their scratch) kept between texts.
    dense: Option<DenseVotes>,
    /// The n-gram weight of the text being encoded, when it is not the configured one
    /// ([`TextEncoder::encode_with_ngram_weight`]); words' slots are made as configured.
    ngram_weight: Option<f32>,
}

/// Where a word's vectors sit in the encoder's arena: `W(t)` at `slot`, `ρ(W(t))` at
/// `slot + 1`, then `planes` slots holding, per bit, how many of the word's `grams`
/// n-grams set it, in binary (plane `p` is the bit of weight `2^p`). The n-grams of a word
/// then add as `planes` features of weights `2^p · v` instead of `grams` features of
/// weight `v`: the same counters, 2–3 times fewer additions for ordinary words.
#[derive(Debug, Clone, Copy)]
struct WordEntry {
    slot: u32,
    planes: u32,
    grams: u32,
}

impl TextEncoder {
    /// A text encoder producing `dim`-bit vectors.
    pub fn new(dim: Dim, config: TextConfig) -> Self {
        Self {
            items: ItemMemory::new(dim, config.seed),
            config,
            words: None,
            arena: TiledArena::new(dim.words()),
            word_slots: HashMap::new(),
            char_slots: HashMap::default(),
            key: String::new(),
            cache_cap: (ITEM_CACHE_BYTES / dim.bytes()).max(ITEM_CACHE_MIN),
            dense: None,
            ngram_weight: None,
        }
    }

    /// The same encoder with word features taken from `words` where it has a vector (a
    /// semantic item memory); character n-grams keep their item vectors.
    #[must_use]
    pub fn with_word_vectors(mut self, words: Arc<dyn WordVectors>) -> Self {
        self.words = Some(words);
        self.clear_cache();
        self
    }

    fn clear_cache(&mut self) {
        self.arena.truncate(1);
        self.word_slots.clear();
        self.char_slots.clear();
    }

    fn slots(&self) -> usize {
        self.arena.len()
    }

    fn push_slot(&mut self, v: &Hypervector) -> u32 {
        self.arena.push(v.words())
    }

    /// The word's slots (see [`WordEntry`]), made on first use: `W(t)` is the word's vector
    /// from the semantic item memory, else its item vector.
    fn word_entry(&mut self, t: &str) -> WordEntry {
        if let Some(&e) = self.word_slots.get(t) {
            return e;
        }
        // The n-grams' character slots first, so that the word's slots are contiguous
        // (none where n-grams carry no weight: their planes would never be added).
        let n = if self.config.ngram_weight > 0.0 {
            self.config.ngram
        } else {
            0
        };
        let framed: Vec<char> = std::iter::once('\u{2}')
            .chain(t.chars())
            .chain(std::iter::once('\u{3}'))
            .collect();
        let grams: Vec<Vec<u32>> = if n == 0 || framed.len() < n {
            Vec::new()
        } else {
            framed
                .windows(n)
                .map(|gram| {
                    gram.iter()
                        .enumerate()
                        // The i-th character of an n-gram is shifted n - 1 - i times.
                        .map(|(i, &c)| self.char_slot(c, n - 1 - i))
                        .collect()
                })
                .collect()
        };
        let dim = self.dim();
        let v = match self.words.as_ref().and_then(|w| w.vector(t, dim)) {
            Some(v) => v,
            None => {
                // The item memory's key of a word, built in a buffer kept for the purpose.
                self.key.clear();
                self.key.push_str("w\u{1f}");
                self.key.push_str(t);
                self.items.vector(&self.key)
            }
        };
        let slot = self.push_slot(&v);
        self.push_slot(&v.permute(1));
        let planes = self.push_count_planes(&grams);
        let e = WordEntry {
            slot,
            planes,
            grams: grams.len() as u32,
        };
        self.word_slots.insert(t.into(), e);
        e
    }

    /// Appends the bit planes of the per-bit count of the XORs `grams` (each a list of
    /// slots); returns how many planes.
    fn push_count_planes(&mut self, grams: &[Vec<u32>]) -> u32 {
        let planes = (usize::BITS - grams.len().leading_zeros()) as usize;
        let w = self.dim().words();
        let mut out = vec![0u64; planes * w];
        let mut carry = vec![0u64; w];
        // Whole-vector passes (compiled for AVX2 where the CPU has it).
        crate::kernels::votes::count_xors(&self.arena, grams, &mut out, &mut carry);
        for plane in out.chunks_exact(w) {
            self.arena.push(plane);
        }
        planes as u32
    }

    /// The slot of `ρ^shift(C(c))`.
    fn char_slot(&mut self, c: char, shift: usize) -> u32 {
        if let Some(&slot) = self.char_slots.get(&(c, shift)) {
            return slot;
        }
        let mut buf = [0u8; 6];
        buf[..2].copy_from_slice(b"c\x1f");
        let len = 2 + c.encode_utf8(&mut buf[2..]).len();
        let v = self.items.vector_bytes(&buf[..len]).permute(shift);
        let slot = self.push_slot(&v);
        self.char_slots.insert((c, shift), slot);
        slot
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

    /// The normalized word tokens of `text`, in order (see [`token_slices`](Self::token_slices)).
    pub fn tokens(text: &str) -> Vec<String> {
        Self::token_slices(&Self::normalize(text))
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// The tokens of normalized text: its words (UAX #29); a text without any (emoji,
    /// symbols: "🎉🎉", "→ ✓") is its symbols instead, each grapheme cluster that is not
    /// whitespace, so it still has a vector and can be found again.
    pub fn token_slices(normalized: &str) -> Vec<&str> {
        let words: Vec<&str> = normalized.unicode_words().collect();
        if !words.is_empty() {
            return words;
        }
        normalized
            .graphemes(true)
            .filter(|g| !g.chars().all(char::is_whitespace))
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
        self.check_dim(bundler)?;
        let mut sink = if bit_sliced {
            VoteSink::bit_sliced(bundler)
        } else {
            VoteSink::reusing(bundler, self.dense.take())
        };
        let count = self.add_features(tokens, weights, &mut sink);
        if let Some(d) = sink.finish_keeping() {
            self.dense = Some(d);
        }
        Ok(count)
    }

    fn check_dim(&self, bundler: &Bundler) -> Result<()> {
        if bundler.dim() != self.dim() {
            return Err(Error::DimensionMismatch {
                expected: self.dim().bits(),
                found: bundler.dim().bits(),
            });
        }
        Ok(())
    }

    /// Adds the features of `tokens` to `sink`; returns how many.
    fn add_features<T: AsRef<str>>(
        &mut self,
        tokens: &[T],
        weights: &impl TermWeights,
        sink: &mut VoteSink<'_>,
    ) -> usize {
        let (features, count) = self.features_within_cache(tokens, weights);
        sink.add_xor_features(&self.arena, &features);
        count
    }

    /// [`features`](Self::features), the caches cleared first when full: a long-lived
    /// encoder meets an unbounded vocabulary (names, numbers, identifiers), and a vector is
    /// cheap to derive again from its seed. Cleared between texts only, so a text's slots
    /// stay valid while it is added.
    fn features_within_cache<T: AsRef<str>>(
        &mut self,
        tokens: &[T],
        weights: &impl TermWeights,
    ) -> (Vec<XorFeature>, usize) {
        if self.slots() >= self.cache_cap {
            self.clear_cache();
        }
        self.features(tokens, weights)
    }

    /// The features of `tokens` as XORs of arena slots, and how many features they count
    /// for (a feature occurring m times is one entry with m times the votes).
    fn features<T: AsRef<str>>(
        &mut self,
        tokens: &[T],
        weights: &impl TermWeights,
    ) -> (Vec<XorFeature>, usize) {
        let token_weights: Vec<f32> = tokens
            .iter()
            .map(|t| weights.weight(t.as_ref()).max(0.0))
            .collect();
        // Each token that votes, by its word's slots: one lookup per token, after which
        // tokens are told apart by their slot (an integer) instead of by their text.
        let mut entries: Vec<Option<WordEntry>> = Vec::with_capacity(tokens.len());
        for (t, &w) in tokens.iter().zip(&token_weights) {
            entries.push((self.votes(w) > 0).then(|| self.word_entry(t.as_ref())));
        }
        // Bundling is a sum, so a feature occurring m times is added once with m times the
        // votes: the same counters (and vector), far fewer additions for long texts. Runs of
        // one slot after sorting are one word (its weight is a function of the word).
        let mut by_slot: Vec<(u32, u32)> = entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.map(|e| (e.slot, i as u32)))
            .collect();
        by_slot.sort_unstable();
        let mut out = Vec::with_capacity(tokens.len() * 4);
        let mut count = 0;
        for run in by_slot.chunk_by(|a, b| a.0 == b.0) {
            let occurrences = run.len() as i64;
            let first = run[0].1 as usize;
            let (w, e) = (
                token_weights[first],
                entries[first].expect("voting tokens have slots"),
            );
            let votes = self.votes(w) * occurrences;
            out.push(XorFeature {
                parts: [e.slot, 0, 0],
                weight: votes,
                total: votes,
            });
            count += run.len();
            let ngram_weight = self.ngram_weight.unwrap_or(self.config.ngram_weight);
            let gram_votes = self.votes(ngram_weight * w) * occurrences;
            if gram_votes > 0 && e.grams > 0 {
                for p in 0..e.planes {
                    out.push(XorFeature {
                        parts: [e.slot + 2 + p, 0, 0],
                        weight: gram_votes << p,
                        // The planes add `grams` n-grams' votes to each counter they count.
                        total: if p == 0 {
                            gram_votes * i64::from(e.grams)
                        } else {
                            0
                        },
                    });
                }
                count += run.len() * e.grams as usize;
            }
        }
        if self.config.order_weight > 0.0 {
            // Each ordered pair by the slots of its words, grouped the same way.
            let mut all: Vec<(u64, i64)> = Vec::with_capacity(tokens.len());
            for (i, ws) in token_weights.windows(2).enumerate() {
                let votes = self.votes(self.config.order_weight * ws[0].min(ws[1]));
                if votes > 0 {
                    let mut slot = |j: usize| match entries[j] {
                        Some(e) => e.slot,
                        // A word too light to vote alone whose pair still votes.
                        None => self.word_entry(tokens[j].as_ref()).slot,
                    };
                    let key = (u64::from(slot(i)) << 32) | u64::from(slot(i + 1));
                    all.push((key, votes));
                }
            }
            all.sort_unstable_by_key(|p| p.0);
            for run in all.chunk_by(|a, b| a.0 == b.0) {
                let votes: i64 = run.iter().map(|p| p.1).sum();
                // ρ(W(a)) ⊕ W(b): the slot after W(a) holds ρ(W(a)).
                let (a, b) = ((run[0].0 >> 32) as u32, run[0].0 as u32);
                out.push(XorFeature {
                    parts: [a + 1, b, 0],
                    weight: votes,
                    total: votes,
                });
                count += 1;
            }
        }
        (out, count)
    }

    /// The tie-breaking seed of `text`: XXH3-64 of its tokens joined by U+001F, so texts
    /// with the same tokens get the same vector.
    pub fn tie_seed(&self, text: &str) -> u64 {
        let normalized = Self::normalize(text);
        self.seed_of_tokens(&Self::token_slices(&normalized))
    }

    /// [`tie_seed`](Self::tie_seed) of a text already tokenized.
    fn seed_of_tokens(&self, tokens: &[&str]) -> u64 {
        let joined = tokens.join("\u{1f}");
        xxh3_64_with_seed(joined.as_bytes(), self.config.seed)
    }

    /// The vector of `text` with the caller's term weights and its character n-grams at
    /// `ngram_weight` (relative to their word) instead of the configured weight: a query
    /// may weigh sub-word evidence differently from the texts it is compared with. With
    /// n-grams disabled (`ngram` 0 or a configured weight of 0) it is [`encode`](Self::encode).
    ///
    /// # Errors
    /// [`Error::EmptyBundle`] if the text has no token with a positive weight.
    pub fn encode_with_ngram_weight(
        &mut self,
        text: &str,
        weights: &impl TermWeights,
        ngram_weight: f32,
    ) -> Result<Hypervector> {
        if self.config.ngram == 0 || self.config.ngram_weight <= 0.0 {
            return self.encode(text, weights);
        }
        self.ngram_weight = Some(ngram_weight.max(0.0));
        let v = self.encode(text, weights);
        self.ngram_weight = None;
        v
    }

    /// The vector of `text` with the caller's term weights.
    ///
    /// # Errors
    /// [`Error::EmptyBundle`] if the text has no token with a positive weight.
    pub fn encode(&mut self, text: &str, weights: &impl TermWeights) -> Result<Hypervector> {
        // One tokenization serves the features and the tie-breaking seed; the tokens stay
        // slices of the normalized text.
        let normalized = Self::normalize(text);
        let tokens = Self::token_slices(&normalized);
        let seed = self.seed_of_tokens(&tokens);
        let (features, _) = self.features_within_cache(&tokens, weights);
        // A text whose votes fit the sum planes (below 2^24 in all, any chat turn) is read
        // straight from them; a heavier one, or AVX-512, goes through the counters.
        let dim = self.dim();
        let dense = self.dense.get_or_insert_with(|| DenseVotes::new(dim));
        if let Some(v) = dense.majority_of_xor(&self.arena, &features, seed) {
            return v;
        }
        let mut bundler = Bundler::new(dim);
        let mut sink = VoteSink::reusing(&mut bundler, self.dense.take());
        sink.add_xor_features(&self.arena, &features);
        let (v, dense) = sink.binarize_keeping(seed);
        self.dense = dense;
        v
    }
}
