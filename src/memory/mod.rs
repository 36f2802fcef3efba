//! `Memory`: the one facade agents use. It wires the ledger, the vector tiers, the text
//! encoders, the lexical index, cognition and recall together: `open.rs` opens a data
//! directory, `observe.rs` is the write path (ledger, then index, vectors and links, in one
//! call), `answer.rs` the reads (recall and packs, run by [`crate::recall`]), `embed.rs`
//! the semantic vectors, `map.rs` the project map and `ops.rs` the rest of the API
//! (episodes, beliefs, procedures, meta-memory, pulse, stats); erasure covers every store.
//!
//! Layout of a data directory: `ledger.db` (SQLite: events, beliefs, cognition, memory
//! traces), `vectors/` (warm mmap segments), `vectors-cold/` (cold mmap segments) and
//! `lexical/` (saved lexical indexes, one file per project).

use crate::sync::{Recover as _, RecoverRw as _};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use hdv::encode::{TextEncoder, UniformWeights};
use hdv::{HvRef, Hypervector};
use rayon::prelude::*;

use crate::cognition::{Cognition, RecallTrace};
use crate::governance::ErasureReceipt;
use crate::index::lexical::ProjectText;
use crate::ledger::{EventId, Ledger, LedgerConfig, NewEvent};
use crate::store::{HotTier, ProjectId, SegmentStore, TierManager, VectorId, VectorTier};
use crate::{Profile, Result};

mod answer;
mod embed;
mod map;
mod observe;
mod open;
mod ops;
pub use crate::recall::{RecallItem, RecallQuery, RecallResult};
pub use map::{
    ConceptSummary, DEFAULT_MAP_LIMIT, EpisodeSummary, Hub, MemoryMap, ThreadSummary, TierCensus,
};
pub use ops::ProjectStats;

/// The most results one recall returns (a larger `k` is refused as `invalid_argument`).
pub const MAX_RECALL_K: usize = 10_000;
/// The longest query one recall reads, in characters (a longer one is refused as
/// `query_too_long`, never cut: what a cut would drop is the caller's to choose).
pub const MAX_QUERY_CHARS: usize = 65_536;
/// The most distinct words one recall's query holds (a query with more is refused as
/// `query_too_long`): a recall's work grows with them, and no question has so many.
pub const MAX_QUERY_TERMS: usize = 2_048;
/// Recalls whose learning signals are buffered before they are applied in one transaction.
pub const FEEDBACK_BATCH: usize = 32;
/// Pending recall signals past which a recall applies them itself even when the host
/// defers them ([`Memory::defer_feedback`]): a host that falls behind loses no more.
pub const DEFERRED_FEEDBACK_LIMIT: usize = 8 * FEEDBACK_BATCH;

/// What `forget_project` removed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ForgetReceipt {
    /// Ledger, governance and cognition rows per table.
    pub ledger: ErasureReceipt,
    /// Vectors removed from the vector store.
    pub vectors: usize,
    /// Documents dropped from the in-memory lexical index (0 if it was not loaded).
    pub lexical: u64,
    /// Saved lexical index files removed (`lexical/<project>.lex`: 0 or 1) and their bytes.
    pub lexical_files: u64,
    /// Bytes of the saved lexical index removed.
    pub lexical_file_bytes: u64,
}

/// The memory of one data directory.
pub struct Memory {
    profile: Profile,
    data_dir: PathBuf,
    ledger: Arc<Ledger>,
    /// Hot (RAM copies) + warm + cold vector tiers with LTP placement.
    tiers: TierManager,
    /// The warm tier: mmap segments under `vectors/` (lite), or Redis (standard).
    warm: Arc<dyn VectorTier>,
    /// The cold tier: mmap segments (HNSW above its threshold) under `vectors-cold/`; on
    /// the scale profile the same Qdrant tier as `warm` (the home of every vector).
    cold: Arc<dyn VectorTier>,
    /// The data directory's lock when no segment store holds one (scale profile).
    _lock: Option<std::fs::File>,
    cognition: Arc<Cognition>,
    /// The text encoders of the profile.
    encoders: crate::semantic::Encoders,
    /// Lexical (BM25) postings per project, built from the ledger on first use; at most
    /// [`Profile::open_projects`] at once ([`Memory::close_least_used`]).
    lexicon: RwLock<HashMap<ProjectId, Arc<RwLock<ProjectText>>>>,
    /// When each open project was last used (a tick of `uses`): the least recently used
    /// is the one closed.
    last_used: Mutex<HashMap<ProjectId, u64>>,
    /// Uses of open projects so far.
    uses: std::sync::atomic::AtomicU64,
    /// Learning signals of recalls not yet applied ([`Memory::flush_feedback`]).
    feedback: Mutex<Vec<RecallTrace>>,
    /// The host applies the feedback off the request path ([`Memory::defer_feedback`]).
    feedback_deferred: std::sync::atomic::AtomicBool,
    /// Held across a ledger append and the indexing of its events (and across a lazy
    /// build), so every event is indexed exactly once.
    append_lock: Mutex<()>,
    /// Opened with [`open_view`](Memory::open_view): reads only, no lock, nothing written.
    read_only: bool,
    /// Projects this process has ticked: its hot tier is filled on a project's first tick,
    /// which is not news to report as moves.
    ticked: Mutex<std::collections::HashSet<ProjectId>>,
    /// Projects embeddings to bits; embeds text with the profile's static model, if any.
    embedder: crate::semantic::Embedder,
    /// Semantic vectors per project, loaded from the ledger on first use.
    spaces: RwLock<HashMap<ProjectId, Arc<RwLock<crate::semantic::Space>>>>,
}

impl std::fmt::Debug for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memory")
            .field("data_dir", &self.data_dir)
            .field("profile", &self.profile.kind)
            .finish()
    }
}

impl Memory {
    /// Whether this memory was opened with [`open_view`](Self::open_view).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Refuses a write on a read-only view.
    fn writable(&self) -> Result<()> {
        if self.read_only {
            return Err(crate::store::StoreError::ReadOnly {
                path: self.data_dir.clone(),
            }
            .into());
        }
        Ok(())
    }

    /// The ledger.
    pub fn ledger(&self) -> &Arc<Ledger> {
        &self.ledger
    }

    /// The cognitive layers (pending recall feedback is applied first, so synapses and
    /// the query log are current).
    pub fn cognition(&self) -> &Arc<Cognition> {
        if let Err(e) = self.flush_feedback() {
            tracing::warn!(error = %e, "recall feedback not applied");
        }
        &self.cognition
    }

    /// Hands the application of recall feedback to the host: a recall then only buffers
    /// its signals, and the host calls [`flush_feedback`](Self::flush_feedback) when
    /// [`feedback_due`](Self::feedback_due) says so, off any request's path (a server
    /// does it in a task of its own, so no recall waits on the write and its sync). Past
    /// [`DEFERRED_FEEDBACK_LIMIT`] pending signals a recall applies them itself.
    pub fn defer_feedback(&self) {
        self.feedback_deferred
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a batch of recall feedback is waiting to be applied.
    pub fn feedback_due(&self) -> bool {
        self.feedback.locked().len() >= FEEDBACK_BATCH
    }

    /// Whether a recall that left `pending` signals buffered applies them now.
    pub(crate) fn feedback_now(&self, pending: usize) -> bool {
        let deferred = self
            .feedback_deferred
            .load(std::sync::atomic::Ordering::Relaxed);
        pending
            >= if deferred {
                DEFERRED_FEEDBACK_LIMIT
            } else {
                FEEDBACK_BATCH
            }
    }

    /// Applies the buffered learning signals of recent recalls (synapse strengthening
    /// among their top results, their LTP accesses, the query log) in one transaction.
    /// Recall buffers them so a query costs no disk sync; they are applied every 32 recalls
    /// (`FEEDBACK_BATCH`; by the host instead when it [defers](Self::defer_feedback)
    /// them), by observations, packs, [`flush`](Self::flush), cognition access and on
    /// drop. They are derived signals: a crash loses at most one batch of them, never an
    /// observation.
    ///
    /// # Errors
    /// SQLite errors (the batch is dropped then).
    pub fn flush_feedback(&self) -> Result<()> {
        let batch = std::mem::take(&mut *self.feedback.locked());
        if self.read_only {
            // A view learns nothing (no access counts, no synapses), but the questions it
            // answered are the project's: they are logged, so `gaps` lists what a view's
            // recalls could not answer as it does a writer's. Best effort: a view of a
            // store it may not write (a read-only mount) still answers.
            if let Err(e) = self.cognition.log_recalls(&batch) {
                tracing::debug!(error = %e, "a view could not log its recalls");
            }
            return Ok(());
        }
        Ok(self.cognition.record_recalls(&batch)?)
    }

    /// The vector tiers (hot, warm, cold) and their LTP traces.
    pub fn vectors(&self) -> &TierManager {
        &self.tiers
    }

    /// The profile it was opened with.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    fn with_encoder<R>(&self, f: impl FnOnce(&mut TextEncoder) -> R) -> R {
        self.encoders.with(f)
    }

    /// Encodes text with the profile's text encoder and uniform term weights (`None` for
    /// text without tokens).
    pub fn encode(&self, text: &str) -> Option<Hypervector> {
        self.with_encoder(|e| e.encode(text, &UniformWeights).ok())
    }

    /// The text indexes of `project`: already loaded; else read from its file and caught
    /// up with the events appended since it was saved; else (no file, or a damaged one,
    /// which is reported) built from the ledger.
    fn project_text(&self, project: &ProjectId) -> Result<Arc<RwLock<ProjectText>>> {
        let loaded = self.lexicon.reading().get(project).cloned();
        if let Some(p) = loaded {
            self.used(project);
            if self.read_only {
                self.follow_writer(project, &p)?;
            } else if self.ledger_shared() {
                // Under the append lock: this node's own appends index themselves.
                let _append = self.append_lock.locked();
                self.follow_writer(project, &p)?;
            }
            return Ok(p);
        }
        let _append = self.append_lock.locked();
        if let Some(p) = self.lexicon.reading().get(project) {
            self.used(project);
            return Ok(p.clone());
        }
        self.close_least_used(project);
        let mut text = ProjectText::load(
            &ProjectText::path(&self.data_dir, project),
            self.profile.recall.reply_context,
            self.profile.recall.turn_regime,
        );
        let caught_up = text.catch_up(&self.ledger, project)?;
        if self.read_only || self.ledger_shared() {
            // What other writers stored since this process listed the shared tier gets
            // traces, as when it follows them later: without one a vector is found by a
            // search but not read back by id (the relevance floor's baseline sample is
            // read by id, so two nodes would judge one query by different samples).
            let theirs: Vec<VectorId> = caught_up.iter().copied().map(VectorId).collect();
            self.tiers.adopt(project, &theirs);
            // A semantic space loaded before the text (an observation loads it) takes in
            // what other writers stored since.
            self.follow_space(project)?;
        }
        let caught_up = caught_up.len();
        tracing::debug!(
            project = project.as_str(),
            documents = text.postings.documents(),
            caught_up,
            directives = text.directives.len(),
            "lexical index ready"
        );
        let text = Arc::new(RwLock::new(text));
        self.lexicon.writing().insert(project.clone(), text.clone());
        self.used(project);
        Ok(text)
    }

    /// Marks `project` as used now.
    fn used(&self, project: &ProjectId) {
        let tick = self.uses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match self.last_used.locked().entry(project.clone()) {
            std::collections::hash_map::Entry::Occupied(mut e) => *e.get_mut() = tick,
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(tick);
            }
        }
    }

    /// Makes room for `opening`: while [`Profile::open_projects`] projects (or more) are
    /// open, closes the least recently used — its lexical index saved to its file (unless
    /// this is a read-only view) and dropped with its semantic space. Both are derived:
    /// the next use reads the file back and catches up with the ledger. Called under the
    /// append lock, so no append runs between the save and the drop (an event appended
    /// after is indexed when the project is next opened). A failed save costs only the
    /// rebuild from the ledger on the next use (logged).
    fn close_least_used(&self, opening: &ProjectId) {
        let bound = self.profile.open_projects;
        if bound == 0 {
            return;
        }
        loop {
            let victim = {
                let lexicon = self.lexicon.reading();
                if lexicon.len() < bound {
                    return;
                }
                let used = self.last_used.locked();
                lexicon
                    .keys()
                    .filter(|p| *p != opening)
                    .min_by_key(|p| used.get(*p).copied().unwrap_or(0))
                    .cloned()
            };
            let Some(victim) = victim else { return };
            if let Some(text) = self.lexicon.writing().remove(&victim)
                && !self.read_only
            {
                let path = ProjectText::path(&self.data_dir, &victim);
                if let Err(error) = ProjectText::save(&text, &path) {
                    tracing::warn!(
                        project = victim.as_str(),
                        %error,
                        "saving a closed project's lexical index failed; it is rebuilt from the ledger on its next use"
                    );
                }
            }
            self.spaces.writing().remove(&victim);
            self.last_used.locked().remove(&victim);
            tracing::debug!(
                project = victim.as_str(),
                "closed the least recently used project"
            );
        }
    }

    /// How many projects have their text indexes open in this process (at most
    /// [`Profile::open_projects`] when that is not 0).
    pub fn open_projects(&self) -> usize {
        self.lexicon.reading().len()
    }

    /// Whether other processes write the same ledger (a PostgreSQL ledger every node of a
    /// deployment shares): what this process derived from it then follows the ledger at
    /// every read, as a view follows its writer.
    pub(crate) fn ledger_shared(&self) -> bool {
        self.ledger.backend() == "postgres"
    }

    /// A view follows the process that writes the data directory (and a node of a shared
    /// ledger the other nodes): events appended since it last looked are indexed, and
    /// their vectors (in a shared tier, searched as it is now) get traces so recall can
    /// read them; semantic vectors other workers embedded since are taken in
    /// ([`follow_embeddings`](Self::follow_embeddings)). A project whose ledger ends below
    /// what was indexed was erased: what was derived from it is forgotten and rebuilt at
    /// the next use.
    fn follow_writer(&self, project: &ProjectId, text: &Arc<RwLock<ProjectText>>) -> Result<()> {
        let last = text.reading().last_id;
        let newest = self.ledger.last_id(project)?.map_or(0, |id| id.0);
        if newest < last {
            // The writer erased the project (ids are never reused): forget what this view
            // derived from it; the next use rebuilds from what the ledger holds now.
            self.lexicon.writing().remove(project);
            self.spaces.writing().remove(project);
            self.tiers.forget_local(project);
            return Ok(());
        }
        if newest > last {
            let new = text.writing().catch_up(&self.ledger, project)?;
            let new: Vec<VectorId> = new.into_iter().map(VectorId).collect();
            self.tiers.adopt(project, &new);
            self.follow_space(project)?;
        }
        // A sentence model's vectors come late, new events or not.
        self.follow_embeddings(project, text)
    }

    /// The loaded semantic space of `project` takes in the vectors stored with the events
    /// other writers appended (a static model's, a caller's embeddings); a sentence
    /// model's, embedded later, are taken in by
    /// [`follow_embeddings`](Self::follow_embeddings).
    fn follow_space(&self, project: &ProjectId) -> Result<()> {
        let space = self.spaces.reading().get(project).cloned();
        if let Some(space) = space {
            self.extend_space(project, &mut space.writing())?;
        }
        Ok(())
    }

    /// Saves every loaded lexical index whose file is missing, damaged or lags it by
    /// [`LEXICAL_LAG`] documents or more (atomically: a synced temporary file renamed over
    /// the old one). A file is derived data: a damaged one is rebuilt.
    fn save_lexicon(&self) -> Result<()> {
        // Under the append lock: an erasure cannot run between reading an index and
        // writing its file (which would bring the erased project's words back).
        let _append = self.append_lock.locked();
        let loaded: Vec<(ProjectId, Arc<RwLock<ProjectText>>)> = self
            .lexicon
            .reading()
            .iter()
            .map(|(p, t)| (p.clone(), t.clone()))
            .collect();
        for (project, text) in loaded {
            let path = ProjectText::path(&self.data_dir, &project);
            ProjectText::save(&text, &path)
                .map_err(|source| crate::store::StoreError::Io { path, source })?;
        }
        Ok(())
    }

    /// Standing directives recall keeps for `project` (loads its text index).
    fn directive_count(&self, project: &ProjectId) -> Result<usize> {
        let text = self.project_text(project)?;
        Ok(text.reading().directives.len())
    }

    /// Erases `project` everywhere: ledger, governance and cognition rows, the full-text
    /// table, the vector store (its directory, graph included) and in-memory state.
    ///
    /// # Errors
    /// Ledger or store errors.
    pub fn forget_project(&self, project: &ProjectId) -> Result<ForgetReceipt> {
        self.writable()?;
        let _append = self.append_lock.locked();
        self.feedback.locked().retain(|r| &r.project != project);
        let lexical = self
            .lexicon
            .writing()
            .remove(project)
            .map_or(0, |p| p.reading().postings.documents());
        self.spaces.writing().remove(project);
        let saved = ProjectText::path(&self.data_dir, project);
        let (mut lexical_files, mut lexical_file_bytes) = (0, 0);
        if let Ok(meta) = std::fs::metadata(&saved) {
            std::fs::remove_file(&saved).map_err(|source| crate::store::StoreError::Io {
                path: saved.clone(),
                source,
            })?;
            lexical_files = 1;
            lexical_file_bytes = meta.len();
        }
        let ledger = self.ledger.forget_project(project)?;
        let vectors = self.tiers.drop_project(project)?;
        self.cognition.forget_project_state(project);
        Ok(ForgetReceipt {
            ledger,
            vectors,
            lexical,
            lexical_files,
            lexical_file_bytes,
        })
    }

    /// Adds what the vector tiers' search graphs do not hold yet to them now (or until
    /// `deadline`), instead of leaving it to their indexer threads; returns the vectors
    /// still outside. Searches are exact over those either way: this makes them faster
    /// sooner (a host may call it when idle; benchmarks call it before measuring).
    ///
    /// # Errors
    /// Store errors.
    pub fn catch_up_indexes(&self, deadline: Option<std::time::Instant>) -> Result<usize> {
        Ok(self.warm.catch_up(deadline)? + self.cold.catch_up(deadline)?)
    }

    /// A view saves the lexical indexes it built, so the next CLI read of a large project
    /// loads them instead of re-reading its whole ledger. Only while no writer runs: the
    /// view takes the writer's lock without waiting (a running writer saves its own), and
    /// under it saves an index only if the ledger still ends where the index does (an
    /// erasure since the view read the ledger would otherwise bring erased words back in
    /// a file). Best effort: the file is derived data, and a view of a store it may not
    /// write still answers.
    fn save_lexicon_of_view(&self) {
        let loaded: Vec<(ProjectId, Arc<RwLock<ProjectText>>)> = self
            .lexicon
            .reading()
            .iter()
            .filter(|(_, t)| t.reading().needs_save())
            .map(|(p, t)| (p.clone(), t.clone()))
            .collect();
        if loaded.is_empty() {
            return;
        }
        let lock = open::writer_lock_path(&self.profile, &self.data_dir);
        if !lock.parent().is_some_and(Path::is_dir) {
            return;
        }
        let _writer = match crate::store::lock_file(&lock, 0) {
            Ok(file) => file,
            Err(e) => {
                tracing::debug!(error = %e, "a view leaves the lexical indexes to the writer");
                return;
            }
        };
        for (project, text) in loaded {
            let last = text.reading().last_id;
            match self.ledger.last_id(&project) {
                Ok(Some(id)) if id.0 == last => {}
                _ => continue,
            }
            let path = ProjectText::path(&self.data_dir, &project);
            if let Err(e) = ProjectText::save(&text, &path) {
                tracing::debug!(path = %path.display(), error = %e, "a view could not save a lexical index");
            }
        }
    }

    /// Applies pending recall feedback and makes derived data durable (lexical indexes,
    /// HNSW graphs); also done on drop.
    ///
    /// # Errors
    /// Store errors.
    pub fn flush(&self) -> Result<()> {
        if self.read_only {
            self.flush_feedback()?;
            self.save_lexicon_of_view();
            return Ok(());
        }
        self.flush_feedback()?;
        self.save_lexicon()?;
        self.warm.flush()?;
        Ok(self.cold.flush()?)
    }
}

impl Drop for Memory {
    /// Applies pending recall feedback and saves derived indexes (HNSW graphs), so the next
    /// open reloads them instead of rebuilding. Errors are logged: everything acknowledged
    /// is already durable, and what is derived is rebuilt on open.
    fn drop(&mut self) {
        if let Err(e) = self.flush() {
            tracing::warn!(error = %e, "flush on close failed");
        }
    }
}
