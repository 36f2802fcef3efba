//! The semantic vector space: dense embeddings (the caller's own, or a built-in static
//! model's) kept as their sign random projection to bits, one space per project, searched
//! with the `hdv` kernels like every other vector.
//!
//! An embedding of `n` dimensions is projected by [`hdv::encode::Projector`] seeded with
//! [`PROJECTION_SEED`] and `n`, so equal embeddings always give equal bits and Hamming
//! distance estimates their angle. The bits live in the ledger (`semantic_vectors`, written
//! in the transaction that appends the event), so they are never lost or half-written and
//! erasure removes them with the project; each process holds a RAM block per project it
//! recalls ([`Space`]). A project's space has one input dimension: an embedding of another
//! size is refused with a named reason.

pub mod model;
#[cfg(feature = "sentence")]
pub mod sentence;

use crate::sync::Recover as _;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hdv::encode::Projector;
use hdv::{Dim, Hypervector};

pub use model::{ModelError, StaticModel, WordPiece};
#[cfg(feature = "sentence")]
pub use sentence::{SentenceModel, Windows};

/// Seed of the projection hyperplanes (mixed with the input dimension).
pub const PROJECTION_SEED: u64 = 0x5E4A_17C0_DE00_0001;

/// Projects embeddings to bits, and embeds text when a model is loaded.
pub struct Embedder {
    model: Option<Arc<StaticModel>>,
    bits: Dim,
    projectors: Mutex<HashMap<usize, Arc<Projector>>>,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("model", &self.model)
            .field("bits", &self.bits.bits())
            .finish()
    }
}

impl Embedder {
    /// An embedder to `bits` bits, with an optional text model.
    pub fn new(model: Option<StaticModel>, bits: Dim) -> Self {
        Self {
            model: model.map(Arc::new),
            bits,
            projectors: Mutex::new(HashMap::new()),
        }
    }

    /// The model as a semantic item memory for the HDC text encoder
    /// ([`hdv::encode::WordVectors`]): each word's vector is the sign projection of its
    /// embedding at the encoder's dimension. `None` without a model.
    pub fn word_vectors(&self) -> Option<Arc<dyn hdv::encode::WordVectors>> {
        let model = self.model.clone()?;
        Some(Arc::new(ModelWords {
            model,
            projector: Mutex::new(None),
        }))
    }

    /// The loaded model, if any.
    pub fn model(&self) -> Option<&StaticModel> {
        self.model.as_deref()
    }

    /// The projection's output dimension.
    pub fn bits(&self) -> Dim {
        self.bits
    }

    fn projector(&self, input: usize) -> hdv::Result<Arc<Projector>> {
        let mut cache = self.projectors.locked();
        if let Some(p) = cache.get(&input) {
            return Ok(p.clone());
        }
        let p = Arc::new(Projector::new(
            input,
            self.bits,
            PROJECTION_SEED ^ (input as u64).rotate_left(32),
        )?);
        cache.insert(input, p.clone());
        Ok(p)
    }

    /// The bits of an embedding.
    ///
    /// # Errors
    /// An empty embedding or a non-finite component.
    pub fn project(&self, embedding: &[f32]) -> hdv::Result<Hypervector> {
        self.projector(embedding.len())?.project(embedding)
    }

    /// The model's embedding of `text` (`None` without a model or known words).
    pub fn embed_text(&self, text: &str) -> Option<Vec<f32>> {
        self.model.as_ref()?.embed(text)
    }
}

/// A static model's words as hypervectors (see [`Embedder::word_vectors`]).
#[derive(Debug)]
struct ModelWords {
    model: Arc<StaticModel>,
    projector: Mutex<Option<Arc<Projector>>>,
}

impl hdv::encode::WordVectors for ModelWords {
    fn vector(&self, word: &str, dim: Dim) -> Option<Hypervector> {
        let embedding = self.model.embed(word)?;
        let projector = {
            let mut p = self.projector.locked();
            match &*p {
                Some(pr) if pr.dim() == dim => pr.clone(),
                _ => {
                    let pr = Arc::new(
                        Projector::new(self.model.dim(), dim, PROJECTION_SEED ^ 0x17E4).ok()?,
                    );
                    *p = Some(pr.clone());
                    pr
                }
            }
        };
        projector.project(&embedding).ok()
    }
}

/// The semantic vectors of one project in RAM: ids and packed bits, in append order.
#[derive(Debug, Default, Clone)]
pub struct Space {
    /// The embedding dimension of this project's space (0 while it is empty).
    pub input: usize,
    ids: Vec<u64>,
    words: Vec<u64>,
    /// The highest event id held.
    pub last_id: u64,
}

impl Space {
    /// Appends the bits of event `id` (an embedding of `input` dimensions).
    pub fn push(&mut self, id: u64, input: usize, bits: &Hypervector) {
        debug_assert!(
            self.ids.last().is_none_or(|&last| last < id),
            "append order"
        );
        self.input = input;
        self.ids.push(id);
        self.words.extend_from_slice(bits.words());
        self.last_id = self.last_id.max(id);
    }

    /// Vectors held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The mean and standard deviation of the similarity of `query` to up to `n` vectors
    /// spread evenly over the space (for almost any query, unrelated memories): the
    /// baseline the relevance floor compares against. `None` under 8 vectors.
    pub fn baseline(&self, query: &Hypervector, n: usize) -> Option<(f64, f64)> {
        let words = query.words().len();
        if self.ids.len() < 8 || words == 0 {
            return None;
        }
        let step = self.ids.len().div_ceil(n.max(1));
        let d = query.dim().bits() as f64;
        let sims: Vec<f64> = self
            .words
            .chunks_exact(words)
            .step_by(step)
            .map(|v| {
                let h: u32 = v
                    .iter()
                    .zip(query.words())
                    .map(|(a, b)| (a ^ b).count_ones())
                    .sum();
                1.0 - 2.0 * f64::from(h) / d
            })
            .collect();
        let m = sims.len() as f64;
        let mean = sims.iter().sum::<f64>() / m;
        let var = sims.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (m - 1.0);
        Some((mean, var.sqrt()))
    }

    /// The similarity of `query` to the vector of event `id`, if the space holds it.
    pub fn similarity(&self, query: &Hypervector, id: u64) -> Option<f64> {
        let words = query.words().len();
        let i = self.ids.binary_search(&id).ok()?;
        let v = self.words.get(i * words..(i + 1) * words)?;
        let h: u32 = v
            .iter()
            .zip(query.words())
            .map(|(a, b)| (a ^ b).count_ones())
            .sum();
        Some(1.0 - 2.0 * f64::from(h) / query.dim().bits() as f64)
    }

    /// The `k` nearest to `query`, as `(event id, similarity in [-1, 1])`, best first.
    ///
    /// # Errors
    /// A query of another dimension.
    pub fn search(&self, query: &Hypervector, k: usize) -> hdv::Result<Vec<(u64, f64)>> {
        if self.ids.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let dim = query.dim();
        let block = hdv::Block::new(&self.words, dim)?;
        let d = dim.bits() as f64;
        Ok(hdv::Scan::new(k)
            .top_k(&block, query)?
            .into_iter()
            .map(|h| (self.ids[h.index], 1.0 - 2.0 * f64::from(h.distance) / d))
            .collect())
    }
}
