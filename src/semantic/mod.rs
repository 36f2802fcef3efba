//! The semantic vector space: dense embeddings (the caller's own, or a local model's) kept
//! as their sign random projection to bits, one space per project, searched with the `hdv`
//! kernels like every other vector.
//!
//! Two kinds of local model load from a directory, the kind told by its files ([`Model`]):
//! a static model (model2vec: one table lookup per token, cheap enough to embed each
//! observation on the write path) and, with the `sentence` feature, a BERT-family sentence
//! model (a transformer: milliseconds per turn, so observations are queued and embedded by
//! a background worker, see `Memory::embed_pending`).
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
use std::path::Path;
use std::sync::{Arc, Mutex};

use hdv::encode::Projector;
use hdv::{Dim, Hypervector};

pub use model::{ModelError, StaticModel, WordPiece};
#[cfg(feature = "sentence")]
pub use sentence::SentenceModel;

/// Seed of the projection hyperplanes (mixed with the input dimension).
pub const PROJECTION_SEED: u64 = 0x5E4A_17C0_DE00_0001;

/// How a text longer than one window is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Windows {
    /// Every window (up to `sentence::MAX_WINDOWS` (16)), their normalized embeddings averaged.
    #[default]
    Mean,
    /// The first window only: the text truncated at the model's window, as
    /// sentence-transformers reads it.
    First,
}

/// Text encoders ready for use: one is taken per encoding task (so threads encode in
/// parallel, each keeping its own symbol cache) and put back afterwards. Each encodes with
/// the profile's dimension and text settings and, when given, a model's word vectors as its
/// item memory.
pub struct Encoders {
    pool: Mutex<Vec<hdv::encode::TextEncoder>>,
    dim: Dim,
    config: hdv::encode::TextConfig,
    words: Option<Arc<dyn hdv::encode::WordVectors>>,
}

impl std::fmt::Debug for Encoders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoders")
            .field("dim", &self.dim)
            .field("item_memory", &self.words.is_some())
            .finish()
    }
}

impl Encoders {
    /// An empty pool of encoders of `dim` bits with `config`, and `words` as their item
    /// memory when given.
    pub fn new(
        dim: Dim,
        config: hdv::encode::TextConfig,
        words: Option<Arc<dyn hdv::encode::WordVectors>>,
    ) -> Self {
        Self {
            pool: Mutex::new(Vec::new()),
            dim,
            config,
            words,
        }
    }

    /// Runs `f` with an encoder of the pool (a new one when all are taken).
    pub fn with<R>(&self, f: impl FnOnce(&mut hdv::encode::TextEncoder) -> R) -> R {
        let pooled = self.pool.locked().pop();
        let mut encoder = pooled.unwrap_or_else(|| {
            let encoder = hdv::encode::TextEncoder::new(self.dim, self.config);
            match &self.words {
                Some(words) => encoder.with_word_vectors(words.clone()),
                None => encoder,
            }
        });
        let out = f(&mut encoder);
        self.pool.locked().push(encoder);
        out
    }
}

/// A local embedding model, of the kind its directory holds.
#[derive(Debug)]
pub enum Model {
    /// A static model (model2vec).
    Static(StaticModel),
    /// A sentence model (BERT family, sentence-transformers layout).
    #[cfg(feature = "sentence")]
    Sentence(SentenceModel),
}

impl Model {
    /// Loads the model in `dir`: a sentence model when it has a `config.json`, else a
    /// static model.
    ///
    /// # Errors
    /// A missing or malformed file, naming it; a sentence model in a build without the
    /// `sentence` feature.
    pub fn load(dir: &Path) -> Result<Self, ModelError> {
        if model::is_sentence_model(dir) {
            #[cfg(feature = "sentence")]
            return SentenceModel::load(dir).map(Self::Sentence);
            #[cfg(not(feature = "sentence"))]
            return Err(model::model_error(
                &dir.join("config.json"),
                "is a sentence-transformers model; this build has no sentence-model support (build hypermem with `--features sentence`)",
            ));
        }
        StaticModel::load(dir).map(Self::Static)
    }

    /// Embedding dimensions.
    pub fn dim(&self) -> usize {
        match self {
            Self::Static(m) => m.dim(),
            #[cfg(feature = "sentence")]
            Self::Sentence(m) => m.dim(),
        }
    }

    /// The model reading long texts as `windows` says (a sentence model; a static model
    /// reads every token of a text anyway).
    #[must_use]
    pub fn with_windows(self, windows: Windows) -> Self {
        match self {
            #[cfg(feature = "sentence")]
            Self::Sentence(m) => Self::Sentence(m.with_windows(windows)),
            other => {
                let _ = windows;
                other
            }
        }
    }

    /// The static model, if this is one.
    pub fn as_static(&self) -> Option<&StaticModel> {
        match self {
            Self::Static(m) => Some(m),
            #[cfg(feature = "sentence")]
            Self::Sentence(_) => None,
        }
    }

    /// `"static"` or `"sentence"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Static(_) => "static",
            #[cfg(feature = "sentence")]
            Self::Sentence(_) => "sentence",
        }
    }
}

/// Questions whose embeddings a sentence model keeps (a repeated question is not embedded
/// again).
#[cfg(feature = "sentence")]
const QUERY_CACHE: usize = 256;

/// Projects embeddings to bits, and embeds text when a model is loaded.
pub struct Embedder {
    model: Option<Arc<Model>>,
    bits: Dim,
    projectors: Mutex<HashMap<usize, Arc<Projector>>>,
    /// Recent questions' embeddings (sentence models only), oldest first.
    #[cfg(feature = "sentence")]
    queries: Mutex<std::collections::VecDeque<(String, Arc<[f32]>)>>,
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
    pub fn new(model: Option<Model>, bits: Dim) -> Self {
        Self {
            model: model.map(Arc::new),
            bits,
            projectors: Mutex::new(HashMap::new()),
            #[cfg(feature = "sentence")]
            queries: Mutex::new(std::collections::VecDeque::new()),
        }
    }

    /// A static model as a semantic item memory for the HDC text encoder
    /// ([`hdv::encode::WordVectors`]): each word's vector is the sign projection of its
    /// embedding at the encoder's dimension. `None` without a static model.
    pub fn word_vectors(&self) -> Option<Arc<dyn hdv::encode::WordVectors>> {
        let model = self.model.clone()?;
        model.as_static()?;
        Some(Arc::new(ModelWords {
            model,
            projector: Mutex::new(None),
        }))
    }

    /// The loaded model, if any.
    pub fn model(&self) -> Option<&Model> {
        self.model.as_deref()
    }

    /// The model's embedding dimensions, if a model is loaded.
    pub fn model_dim(&self) -> Option<usize> {
        self.model.as_ref().map(|m| m.dim())
    }

    /// Whether observations are embedded off the write path (a sentence model): they are
    /// queued, and [`embed_documents`](Self::embed_documents) embeds them in batches.
    pub fn deferred(&self) -> bool {
        self.model.as_ref().is_some_and(|m| m.kind() == "sentence")
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

    /// The model's embedding of an observation's `text`, on the write path: a static
    /// model's (`None` without one, or without a known word); a sentence model embeds
    /// observations off the write path ([`embed_documents`](Self::embed_documents)).
    pub fn embed_inline(&self, text: &str) -> Option<Vec<f32>> {
        match self.model.as_deref()? {
            Model::Static(m) => m.embed(text),
            #[cfg(feature = "sentence")]
            Model::Sentence(_) => None,
        }
    }

    /// The model's embedding of a question (`None` without a model, or a static model
    /// without a known word). A sentence model keeps the last [`QUERY_CACHE`] questions'
    /// embeddings: a repeated question costs a lookup.
    pub fn embed_query(&self, text: &str) -> Option<Arc<[f32]>> {
        match self.model.as_deref()? {
            Model::Static(m) => m.embed(text).map(Arc::from),
            #[cfg(feature = "sentence")]
            Model::Sentence(m) => {
                if let Some((_, v)) = self.queries.locked().iter().find(|(q, _)| q == text) {
                    return Some(v.clone());
                }
                let v: Arc<[f32]> = Arc::from(m.embed(text));
                let mut cache = self.queries.locked();
                if cache.len() >= QUERY_CACHE {
                    cache.pop_front();
                }
                cache.push_back((text.to_owned(), v.clone()));
                Some(v)
            }
        }
    }

    /// The embeddings of observations queued for a deferred model, in order: each text
    /// as `speaker: text` when it has a speaker (turns that name each other are then
    /// found by name). Empty without a sentence model.
    pub fn embed_documents(&self, texts: &[(Option<&str>, &str)]) -> Vec<Vec<f32>> {
        match self.model.as_deref() {
            #[cfg(feature = "sentence")]
            Some(Model::Sentence(m)) => {
                let owned: Vec<std::borrow::Cow<'_, str>> = texts
                    .iter()
                    .map(|(speaker, text)| match speaker {
                        Some(s) => std::borrow::Cow::Owned(format!("{s}: {text}")),
                        None => std::borrow::Cow::Borrowed(*text),
                    })
                    .collect();
                let refs: Vec<&str> = owned.iter().map(|t| t.as_ref()).collect();
                m.embed_batch(&refs)
            }
            _ => {
                let _ = texts;
                Vec::new()
            }
        }
    }
}

/// A static model's words as hypervectors (see [`Embedder::word_vectors`]).
#[derive(Debug)]
struct ModelWords {
    model: Arc<Model>,
    projector: Mutex<Option<Arc<Projector>>>,
}

impl hdv::encode::WordVectors for ModelWords {
    fn vector(&self, word: &str, dim: Dim) -> Option<Hypervector> {
        let model = self.model.as_static()?;
        let embedding = model.embed(word)?;
        let projector = {
            let mut p = self.projector.locked();
            match &*p {
                Some(pr) if pr.dim() == dim => pr.clone(),
                _ => {
                    let pr =
                        Arc::new(Projector::new(model.dim(), dim, PROJECTION_SEED ^ 0x17E4).ok()?);
                    *p = Some(pr.clone());
                    pr
                }
            }
        };
        projector.project(&embedding).ok()
    }
}

/// The mean and sample standard deviation of a baseline sample of similarities (at least
/// two): what a relevance floor is set from, for the HDC and the semantic vectors alike.
/// A median and MAD were measured instead and gained nothing (`docs/EXPERIMENTS.md`).
pub fn mean_sd(sims: &[f64]) -> (f64, f64) {
    let m = sims.len() as f64;
    let mean = sims.iter().sum::<f64>() / m;
    let var = sims.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (m - 1.0);
    (mean, var.sqrt())
}

/// The semantic vectors of one project in RAM: ids and packed bits, in the order they
/// arrived (a sentence model's background worker fills in older events after newer
/// caller-supplied ones), with each id's position.
#[derive(Debug, Default, Clone)]
pub struct Space {
    /// The embedding dimension of this project's space (0 while it is empty).
    pub input: usize,
    ids: Vec<u64>,
    at: HashMap<u64, usize>,
    words: Vec<u64>,
    /// The highest event id held.
    pub last_id: u64,
    /// What a process following other writers last saw of this project (its embedding
    /// queue's length and the newest event indexed): while both stay, no other worker
    /// stored a vector it lacks.
    pub(crate) followed: Option<(u64, u64)>,
}

impl Space {
    /// Adds the bits of event `id` (an embedding of `input` dimensions); an id it holds
    /// already keeps its vector. Vectors are kept in event-id order whatever order they
    /// arrive in (a node of a shared ledger takes in another's between its own; a sentence
    /// model embeds older events later), so a search breaks ties the same way on every
    /// node.
    pub fn push(&mut self, id: u64, input: usize, bits: &Hypervector) {
        if self.at.contains_key(&id) {
            return;
        }
        self.input = input;
        let words = bits.words();
        if id > self.last_id || self.ids.is_empty() {
            self.at.insert(id, self.ids.len());
            self.ids.push(id);
            self.words.extend_from_slice(words);
        } else {
            let i = self.ids.partition_point(|&x| x < id);
            self.ids.insert(i, id);
            let w = words.len();
            self.words.splice(i * w..i * w, words.iter().copied());
            for (k, &later) in self.ids.iter().enumerate().skip(i) {
                self.at.insert(later, k);
            }
        }
        self.last_id = self.last_id.max(id);
    }

    /// Whether it holds a vector of event `id`.
    pub fn contains(&self, id: u64) -> bool {
        self.at.contains_key(&id)
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
        Some(mean_sd(&sims))
    }

    /// The similarity of `query` to the vector of event `id`, if the space holds it.
    pub fn similarity(&self, query: &Hypervector, id: u64) -> Option<f64> {
        let words = query.words().len();
        let i = *self.at.get(&id)?;
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

#[cfg(test)]
mod space_tests {
    use super::Space;
    use hdv::{Dim, Hypervector};

    #[test]
    fn a_space_holds_its_vectors_in_event_order_whatever_order_they_arrive_in() {
        let dim = Dim::new(256).unwrap();
        // Events 2 and 5 carry one vector: a tie any search must break the same way.
        let v = |id: u64| Hypervector::random(dim, if id == 5 { 2 } else { id });
        let mut in_order = Space::default();
        for id in [1, 2, 3, 5, 8] {
            in_order.push(id, 16, &v(id));
        }
        let mut shuffled = Space::default();
        for id in [8, 5, 1, 3, 2, 3] {
            shuffled.push(id, 16, &v(id));
        }
        assert_eq!(shuffled.len(), 5, "an id it holds keeps its vector");
        assert_eq!(shuffled.last_id, 8);
        let q = v(2);
        assert_eq!(in_order.search(&q, 1).unwrap()[0].0, 2);
        assert_eq!(
            in_order.search(&q, 5).unwrap(),
            shuffled.search(&q, 5).unwrap()
        );
        for id in [1, 2, 3, 5, 8] {
            assert_eq!(in_order.similarity(&q, id), shuffled.similarity(&q, id));
        }
        assert_eq!(in_order.baseline(&q, 3), shuffled.baseline(&q, 3));
    }
}
