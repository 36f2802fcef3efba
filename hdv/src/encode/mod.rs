//! Encoders: from symbols, text, scalars, sequences, records and dense embeddings to
//! hypervectors. All are deterministic functions of their input and a seed: the same
//! input, seed and dimension give the same bits on every machine and kernel tier.
//!
//! | encoder | input | how | similar inputs → similar vectors? |
//! |---|---|---|---|
//! | [`ItemMemory`] | a symbol (`&str`, `char`) | seeded random vector per symbol, cached; [`ItemMemory::fill`] then [`ItemMemory::lookup`] lends several at once | no: every symbol is quasi-orthogonal to every other |
//! | [`LevelEncoder`] | a scalar in a range | flips a fixed share of bits per level step | yes: similarity falls linearly with distance |
//! | [`encode_sequence`] / [`probe_sequence`] | an ordered list of vectors | bundle of `ρ^i(x_i)` (position by permutation) | shares of equal elements at equal positions |
//! | [`encode_ngram`] | one n-gram of vectors | `ρ^(n−1)(x₁) ⊕ … ⊕ x_n` | no: a different n-gram is unrelated |
//! | [`NgramEncoder`] | a whole sequence (characters or symbols) | bundles every n-gram, with cached permutations (n XORs per n-gram); the classic letter-trigram protocol of language identification | shared n-grams |
//! | [`RecordEncoder`] | role → filler pairs | bundle of `role ⊕ filler` | shared pairs; a filler is read back by unbinding its role |
//! | [`TextEncoder`] | free text | bundle of weighted word vectors, word pairs and character n-grams inside words (see its docs for how it differs from the classic protocol) | shared words and spellings |
//! | [`Projector`] | a dense `f32` embedding | signs of seeded random projections (SimHash) | yes: Hamming similarity tracks the angle |
//!
//! Bundled vectors are binarized by majority with a seeded coin on ties; see
//! [`Bundler::binarize`](crate::Bundler::binarize) for how to choose that seed.
//!
//! ```
//! use hdv::{Bundler, Dim, encode::NgramEncoder};
//! let dim = Dim::round_up(10_000).unwrap(); // 10,048 bits: a whole number of words
//! let mut trigrams = NgramEncoder::new(dim, 42, 3).unwrap();
//! let mut profile = |text: &str| {
//!     let mut b = Bundler::new(dim);
//!     trigrams.add_chars(text, &mut b);
//!     b.binarize(1).unwrap()
//! };
//! let english = profile("the quick brown fox jumps over the lazy dog and then the fox sleeps");
//! let german = profile("der schnelle braune fuchs springt ueber den faulen hund und schlaeft");
//! let query = profile("the dog and the fox");
//! assert!(query.similarity(&english) > query.similarity(&german));
//! ```

mod item;
mod level;
mod ngram;
mod projector;
mod record;
mod sequence;
mod text;

pub use item::ItemMemory;
pub use level::LevelEncoder;
pub use ngram::NgramEncoder;
pub use projector::Projector;
pub use record::RecordEncoder;
pub use sequence::{encode_ngram, encode_sequence, probe_sequence};
pub use text::{TermWeights, TextConfig, TextEncoder, UniformWeights, WordVectors};
