//! `Memory`: the one facade agents use. It wires the ledger, the vector tiers, the text
//! encoder, cognition and recall together: an observation is appended to the ledger,
//! indexed, encoded, stored in the vector tiers and linked (a synapse to its thread
//! predecessor, its agent's open episode) in one call; recall (`recall.rs`) compiles the
//! query, fuses HDC similarity with BM25 and returns anchored, explained results or a
//! budgeted pack; erasure covers every store.
//!
//! The rest of the API (episodes, beliefs, procedures, meta-memory, pulse, stats) is in
//! `ops.rs`.
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
use rusqlite::params;

use crate::cognition::{Cognition, RecallTrace};
use crate::governance::ErasureReceipt;
use crate::ledger::{EventId, Ledger, LedgerConfig, NewEvent};
use crate::index::lexical::ProjectText;
use crate::store::{HotTier, ProjectId, SegmentStore, TierManager, VectorId, VectorTier};
use crate::{Profile, Result};

mod map;
mod ops;
mod answer;
pub use map::{
    ConceptSummary, DEFAULT_MAP_LIMIT, EpisodeSummary, Hub, MemoryMap, ThreadSummary, TierCensus,
};
pub use ops::ProjectStats;
pub use crate::recall::{RecallItem, RecallQuery, RecallResult};

/// The most results one recall returns (a larger `k` is refused as `invalid_argument`).
pub const MAX_RECALL_K: usize = 10_000;
/// Recalls whose learning signals are buffered before they are applied in one transaction.
pub const FEEDBACK_BATCH: usize = 32;
/// Pending recall signals past which a recall applies them itself even when the host
/// defers them ([`Memory::defer_feedback`]): a host that falls behind loses no more.
pub const DEFERRED_FEEDBACK_LIMIT: usize = 8 * FEEDBACK_BATCH;

/// What `forget_project` removed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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

/// Events the background embedder reads and stores per transaction.
pub const EMBED_BATCH: usize = 64;
/// How long the background embedder sleeps when nothing is queued.
const EMBED_IDLE: std::time::Duration = std::time::Duration::from_millis(200);

/// What [`Memory::embed_pending`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EmbedProgress {
    /// Queued events taken (embedded, or dropped for a dimension conflict).
    pub embedded: usize,
    /// Events still queued (of the project asked about; of every project, 0 or 1 for
    /// "none" or "some").
    pub left: u64,
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
    /// Lexical (BM25) postings per project, built from the ledger on first use.
    lexicon: RwLock<HashMap<ProjectId, Arc<RwLock<ProjectText>>>>,
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

/// File of a data directory naming its deployment: a random token, written once, that
/// shared services (Redis) record so two data directories never share one key space.
const DEPLOYMENT: &str = "DEPLOYMENT";

/// The data directory's deployment token, created if `create` and missing.
fn deployment_token(data_dir: &Path, create: bool) -> Result<String> {
    let path = data_dir.join(DEPLOYMENT);
    let io = |source| crate::store::StoreError::Io {
        path: path.clone(),
        source,
    };
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().to_owned()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e).into()),
    }
    if !create {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no deployment token: open the data directory for writing once first",
        ))
        .into());
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!("{nanos}-{}-{}", std::process::id(), data_dir.display());
    let token = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(seed.as_bytes()));
    let tmp = data_dir.join(format!("{DEPLOYMENT}.tmp"));
    std::fs::write(&tmp, format!("{token}\n")).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)?;
    Ok(token)
}

/// A warm tier, and where the deployment's processes share LTP accesses (if they do).
type WarmTier = (Arc<dyn VectorTier>, Option<Shared>);

/// What a deployment's processes share through Redis: LTP access counts and working
/// memories.
#[derive(Clone)]
struct Shared {
    traces: Arc<dyn crate::store::SharedTraces>,
    working: Arc<dyn crate::cognition::WorkingBoard>,
}

/// The durable vector tiers of a profile, opened for writing or as a view.
struct OpenedTiers {
    warm: Arc<dyn VectorTier>,
    cold: Arc<dyn VectorTier>,
    board: Option<Shared>,
    lock: Option<std::fs::File>,
}

/// Opens the tiers the profile's table in DESIGN.md names: lite, mmap warm and cold;
/// standard, Redis warm and mmap cold; scale, Qdrant as the one home of every vector
/// (warm and cold at once) with Redis sharing access counts. A writer first takes the
/// data directory's lock (the cold segment store's, or `LOCK` on scale), so it is the
/// writer before the deployment token is read or created.
fn open_tiers(profile: &Profile, data_dir: &Path, read_only: bool) -> Result<OpenedTiers> {
    let segments = |dir: &str| -> Result<Arc<dyn VectorTier>> {
        let path = data_dir.join(dir);
        Ok(if read_only {
            Arc::new(SegmentStore::view(path, profile.dim)?)
        } else {
            Arc::new(SegmentStore::open_or_create(
                path,
                profile.dim,
                profile.store,
            )?)
        })
    };
    if let Some(qdrant) = &profile.qdrant {
        let lock = if read_only {
            None
        } else {
            Some(crate::store::lock_file(
                &data_dir.join("LOCK"),
                profile.store.lock_wait_ms,
            )?)
        };
        let home = open_qdrant(profile, qdrant)?;
        let board = match &profile.redis {
            Some(redis) => open_redis(profile, redis, &deployment_token(data_dir, !read_only)?)?.1,
            None => None,
        };
        return Ok(OpenedTiers {
            warm: home.clone(),
            cold: home,
            board,
            lock,
        });
    }
    let cold = segments("vectors-cold")?;
    let (warm, board) = match &profile.redis {
        Some(redis) => open_redis(profile, redis, &deployment_token(data_dir, !read_only)?)?,
        None => (segments("vectors")?, None),
    };
    Ok(OpenedTiers {
        warm,
        cold,
        board,
        lock: None,
    })
}

/// The Qdrant tier of the scale profile.
#[cfg(feature = "scale")]
fn open_qdrant(profile: &Profile, qdrant: &crate::QdrantSettings) -> Result<Arc<dyn VectorTier>> {
    Ok(Arc::new(crate::store::QdrantTier::open(
        profile.dim,
        qdrant,
    )?))
}

/// Without the `scale` feature no profile with Qdrant settings parses; a hand-built one is
/// refused the same way.
#[cfg(not(feature = "scale"))]
fn open_qdrant(profile: &Profile, _: &crate::QdrantSettings) -> Result<Arc<dyn VectorTier>> {
    Err(crate::ConfigError::NotBuilt {
        profile: profile.kind.name().to_owned(),
        built: crate::PROFILE,
    }
    .into())
}

/// The Redis warm tier of a standard or scale profile; it also holds the shared accesses.
#[cfg(feature = "standard")]
fn open_redis(profile: &Profile, redis: &crate::RedisSettings, owner: &str) -> Result<WarmTier> {
    let tier = Arc::new(crate::store::RedisTier::open(profile.dim, redis, owner)?);
    let shared = Shared {
        traces: tier.clone(),
        working: tier.clone(),
    };
    Ok((tier, Some(shared)))
}

/// Without the `standard` feature no profile with Redis settings parses; a hand-built one
/// is refused the same way.
#[cfg(not(feature = "standard"))]
fn open_redis(profile: &Profile, _: &crate::RedisSettings, _: &str) -> Result<WarmTier> {
    Err(crate::ConfigError::NotBuilt {
        profile: profile.kind.name().to_owned(),
        built: crate::PROFILE,
    }
    .into())
}

impl Memory {
    /// Opens (creating if needed) the memory in `data_dir` (or the profile's), and
    /// re-encodes any event whose vector an interrupted observation did not store.
    ///
    /// # Errors
    /// Ledger or store errors (wrong dimension, corruption, lock held by another process).
    pub fn open(profile: &Profile, data_dir: Option<&Path>) -> Result<Self> {
        Self::open_with_clock(profile, data_dir, Arc::new(crate::clock::SystemClock))
    }

    /// [`open`](Self::open) on another clock (event times, LTP ages, synapse decay; tests
    /// and simulations inject a [`crate::clock::ManualClock`]).
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_with_clock(
        profile: &Profile,
        data_dir: Option<&Path>,
        clock: Arc<dyn crate::clock::Clock>,
    ) -> Result<Self> {
        // A bad `HDV_KERNEL` is an error here, at open, never a panic in a kernel call.
        hdv::kernels::try_active()?;
        let data_dir = data_dir.map_or_else(|| profile.data_dir.clone(), Path::to_path_buf);
        // A directory that held nothing before is left as it was when the open fails (a
        // Redis or Qdrant that cannot be reached, a bad profile): no ledger, no token.
        let existed = data_dir.exists();
        let fresh = std::fs::read_dir(&data_dir).map_or(true, |mut d| d.next().is_none());
        let opened = (|| {
            std::fs::create_dir_all(&data_dir).map_err(|source| crate::store::StoreError::Io {
                path: data_dir.clone(),
                source,
            })?;
            let ledger = Arc::new(
                Ledger::open(data_dir.join("ledger.db"), LedgerConfig::default())?
                    .with_clock(clock),
            );
            let tiers = open_tiers(profile, &data_dir, false)?;
            let memory = Self::assemble(profile, data_dir.clone(), ledger, tiers, false)?;
            memory.repair()?;
            memory.restore_traces()?;
            if memory.embedder.deferred() {
                let queued = memory.ledger.queue_unembedded()?;
                if queued > 0 {
                    tracing::info!(
                        queued,
                        "events without a semantic vector queued for the sentence model"
                    );
                }
            }
            Ok(memory)
        })();
        if opened.is_err() && fresh {
            let undone = if existed {
                std::fs::read_dir(&data_dir).and_then(|entries| {
                    entries.flatten().try_for_each(|e| {
                        if e.file_type()?.is_dir() {
                            std::fs::remove_dir_all(e.path())
                        } else {
                            std::fs::remove_file(e.path())
                        }
                    })
                })
            } else {
                std::fs::remove_dir_all(&data_dir)
            };
            if let Err(e) = undone {
                tracing::warn!(dir = %data_dir.display(), error = %e, "a failed open left files behind");
            }
        }
        opened
    }

    /// The memory over opened stores (the tiers, cognition and the semantic model are
    /// built here, for a writable memory and a view alike).
    fn assemble(
        profile: &Profile,
        data_dir: PathBuf,
        ledger: Arc<Ledger>,
        tiers: OpenedTiers,
        read_only: bool,
    ) -> Result<Self> {
        let OpenedTiers {
            warm,
            cold,
            board,
            lock,
        } = tiers;
        let mut tiers = TierManager::new(
            HotTier::new(profile.dim, profile.hot_capacity),
            warm.clone(),
            cold.clone(),
            profile.tiers,
            ledger.clock(),
        )?;
        let mut cognition = Cognition::new(ledger.clone(), profile.dim, profile.cognition);
        if let Some(shared) = board {
            tiers = tiers.with_shared_traces(shared.traces);
            cognition = cognition.with_working_board(shared.working);
        }
        let cognition = Arc::new(cognition);
        let model = match &profile.semantic.model {
            Some(dir) => {
                Some(crate::semantic::Model::load(dir)?.with_windows(profile.semantic.windows))
            }
            None => None,
        };
        let embedder = crate::semantic::Embedder::new(model, profile.semantic.bits);
        let words = embedder
            .word_vectors()
            .filter(|_| profile.semantic.item_memory);
        Ok(Self {
            encoders: crate::semantic::Encoders::new(profile.dim, profile.text, words),
            embedder,
            spaces: RwLock::new(HashMap::new()),
            profile: profile.clone(),
            data_dir,
            ledger,
            tiers,
            warm,
            cold,
            _lock: lock,
            cognition,
            lexicon: RwLock::new(HashMap::new()),
            append_lock: Mutex::new(()),
            ticked: Mutex::new(std::collections::HashSet::new()),
            read_only,
            feedback: Mutex::new(Vec::new()),
            feedback_deferred: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Opens a data directory for reading only, beside a process that holds it (a server,
    /// a writer): no lock is taken and nothing stored is changed — no repair, no migration
    /// (an outdated schema is `needs_migration`), no learning from recalls (no
    /// potentiation, no synapses), no saved indexes. Its one write is the query log of the
    /// recalls it answers (rows of `query_log`, what knowledge gaps are made of), applied
    /// when it is flushed or dropped. It sees what was committed when it opened.
    ///
    /// # Errors
    /// `needs_migration`, a missing or damaged store, SQLite errors.
    pub fn open_view(profile: &Profile, data_dir: Option<&Path>) -> Result<Self> {
        hdv::kernels::try_active()?;
        let data_dir = data_dir.map_or_else(|| profile.data_dir.clone(), Path::to_path_buf);
        let ledger = Ledger::open_unmigrated(data_dir.join("ledger.db"), LedgerConfig::default())?;
        let needed = crate::ledger::MIGRATIONS.last().map_or(0, |m| m.version);
        let found = ledger.schema_version()?;
        if found != needed {
            return Err(crate::ledger::LedgerError::NeedsMigration { found, needed }.into());
        }
        let ledger = Arc::new(ledger);
        let tiers = open_tiers(profile, &data_dir, true)?;
        let memory = Self::assemble(profile, data_dir, ledger, tiers, true)?;
        memory.restore_traces()?;
        Ok(memory)
    }

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

    /// Restores the LTP statistics of every stored memory: persisted ones from
    /// `memory_traces`, else importance 1, one access, last access = when it was stored
    /// (`ingested_at`), as the process that stored it counted it: a memory's strength, and
    /// so its tier, does not depend on whether the process restarted since (an imported
    /// conversation of 2023 was still accessed when it was stored).
    fn restore_traces(&self) -> Result<()> {
        type Row = (String, i64, i64, Option<f64>, Option<i64>, Option<i64>);
        let rows: Vec<Row> = self.ledger.read(|c| {
            c.prepare(
                "SELECT e.project, e.id, e.ingested_at, t.importance, t.accesses, t.last_access
                 FROM events e LEFT JOIN memory_traces t ON t.project = e.project AND t.id = e.id",
            )
            .and_then(|mut s| {
                s.query_map([], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                    ))
                })?
                .collect()
            })
            .map_err(|e| self.ledger.sql(e))
        })?;
        let mut project: Option<ProjectId> = None;
        for (name, id, stored, importance, accesses, last) in rows {
            if project.as_ref().is_none_or(|p| p.as_str() != name) {
                project = Some(ProjectId::new(name)?);
            }
            let p = project.as_ref().expect("set above");
            self.tiers.restore(
                p,
                VectorId(id as u64),
                importance.unwrap_or(1.0),
                accesses.map_or(1, |a| a as u64),
                last.unwrap_or(stored) as f64 / 1000.0,
            );
        }
        Ok(())
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
            if self.read_only {
                self.follow_writer(project, &p)?;
            }
            return Ok(p);
        }
        let _append = self.append_lock.locked();
        if let Some(p) = self.lexicon.reading().get(project) {
            return Ok(p.clone());
        }
        let mut text = ProjectText::load(
            &ProjectText::path(&self.data_dir, project),
            self.profile.recall.reply_context,
        );
        let caught_up = text.catch_up(&self.ledger, project)?.len();
        tracing::debug!(
            project = project.as_str(),
            documents = text.postings.documents(),
            caught_up,
            directives = text.directives.len(),
            "lexical index ready"
        );
        let text = Arc::new(RwLock::new(text));
        self.lexicon.writing().insert(project.clone(), text.clone());
        Ok(text)
    }

    /// A view follows the process that writes the data directory: events it appended
    /// since the view last looked are indexed, and their vectors (in a shared warm tier,
    /// which the view searches as it is now) get traces so recall can read them.
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
        if newest == last {
            return Ok(());
        }
        let new = text.writing().catch_up(&self.ledger, project)?;
        let new: Vec<VectorId> = new.into_iter().map(VectorId).collect();
        self.tiers.adopt(project, &new);
        Ok(())
    }

    /// The semantic vector of each event: its caller-supplied embedding, else the static
    /// model's embedding of its content (none without a model; a sentence model's comes
    /// later, from [`embed_pending`](Self::embed_pending)), projected to bits, with
    /// the embedding's dimensions. Every embedding of a project must have the dimensions
    /// of the project's semantic space.
    ///
    /// # Errors
    /// `embedding` invalid: empty, non-finite, or of another dimension than the project's.
    fn semantic_bits(&self, events: &[NewEvent]) -> Result<Vec<Option<(usize, Hypervector)>>> {
        let mut dims: HashMap<&ProjectId, usize> = HashMap::new();
        for e in events {
            let input = match (&e.embedding, self.embedder.model_dim()) {
                (Some(v), _) => v.len(),
                // A deferred model's dimensions are checked when it embeds.
                (None, Some(_)) if self.embedder.deferred() => continue,
                (None, Some(d)) => d,
                (None, None) => continue,
            };
            let have = match dims.get(&e.project) {
                Some(&d) => Some(d),
                None => {
                    let space = self.space(&e.project)?;
                    let d = space.reading().input;
                    (d > 0).then_some(d)
                }
            };
            if let Some(have) = have
                && have != input
            {
                return Err(crate::ledger::LedgerError::Invalid {
                    what: "embedding",
                    reason: format!(
                        "has {input} dimensions; the semantic space of project `{}` holds {have}-dimensional embeddings",
                        e.project
                    ),
                }
                .into());
            }
            dims.insert(&e.project, input);
        }
        events
            .par_iter()
            .map(|e| {
                let embedding = match &e.embedding {
                    Some(v) => Some(std::borrow::Cow::Borrowed(v.as_slice())),
                    None => self
                        .embedder
                        .embed_inline(&e.content)
                        .map(std::borrow::Cow::Owned),
                };
                match embedding {
                    Some(v) => self
                        .embedder
                        .project(&v)
                        .map(|bits| Some((v.len(), bits)))
                        .map_err(|err| {
                            crate::ledger::LedgerError::Invalid {
                                what: "embedding",
                                reason: err.to_string(),
                            }
                            .into()
                        }),
                    None => Ok(None),
                }
            })
            .collect()
    }

    /// The semantic space of `project`, loaded from the ledger on first use.
    fn space(&self, project: &ProjectId) -> Result<Arc<RwLock<crate::semantic::Space>>> {
        if let Some(s) = self.spaces.reading().get(project) {
            return Ok(s.clone());
        }
        let mut space = crate::semantic::Space::default();
        let dim = self.embedder.bits();
        for (id, input, bytes) in self.ledger.semantic_vectors_after(project, EventId(0))? {
            let words: Vec<u64> = bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect();
            // Vectors of another projection size (a changed profile) are skipped.
            if let Ok(v) = Hypervector::from_words(words)
                && v.dim() == dim
            {
                space.push(id.0, input as usize, &v);
            }
        }
        let mut spaces = self.spaces.writing();
        Ok(spaces
            .entry(project.clone())
            .or_insert_with(|| Arc::new(RwLock::new(space)))
            .clone())
    }

    /// Embeds events queued for the sentence model (of `project`, or of every project),
    /// oldest first, in batches of [`EMBED_BATCH`], until `limit` are done, the queue is
    /// empty or `deadline` passes (checked between batches): stores their vectors (one
    /// transaction per batch) and adds them to the loaded semantic spaces. An event whose
    /// project's space holds embeddings of other dimensions (the caller's own) is taken
    /// off the queue without a vector, with a warning. Without a sentence model there is
    /// nothing to do.
    ///
    /// # Errors
    /// `read_only` for a view; SQLite errors (the batch stays queued).
    pub fn embed_pending(
        &self,
        project: Option<&ProjectId>,
        limit: usize,
        deadline: Option<std::time::Instant>,
    ) -> Result<EmbedProgress> {
        let mut progress = EmbedProgress::default();
        if !self.embedder.deferred() || limit == 0 {
            return Ok(progress);
        }
        self.writable()?;
        while progress.embedded < limit {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                break;
            }
            let batch = self
                .ledger
                .semantic_pending(project, EMBED_BATCH.min(limit - progress.embedded))?;
            if batch.is_empty() {
                break;
            }
            let texts: Vec<(Option<&str>, &str)> = batch
                .iter()
                .map(|e| (e.speaker.as_deref(), e.content.as_str()))
                .collect();
            let embeddings = self.embedder.embed_documents(&texts);
            let mut done = Vec::with_capacity(batch.len());
            let mut bits = HashMap::new();
            for (e, v) in batch.iter().zip(&embeddings) {
                let space = self.space(&e.project)?;
                let input = space.reading().input;
                if input != 0 && input != v.len() {
                    tracing::warn!(
                        project = e.project.as_str(),
                        event = e.id.0,
                        space = input,
                        model = v.len(),
                        "event left without a semantic vector: the project's space holds embeddings of other dimensions"
                    );
                    done.push((e.clone(), None));
                    continue;
                }
                let hv = self.embedder.project(v).map_err(|err| {
                    crate::ledger::LedgerError::Invalid {
                        what: "embedding",
                        reason: err.to_string(),
                    }
                })?;
                let bytes = hv.words().iter().flat_map(|w| w.to_le_bytes()).collect();
                done.push((e.clone(), Some((v.len() as u32, bytes))));
                bits.insert(e.id.0, (e.project.clone(), v.len(), hv));
            }
            // Under the append lock, so the spaces take the vectors in event order.
            let _append = self.append_lock.locked();
            let stored = self.ledger.store_semantic(&done)?;
            let spaces = self.spaces.reading();
            for id in &stored {
                if let Some((p, input, hv)) = bits.get(&id.0)
                    && let Some(space) = spaces.get(p)
                {
                    space.writing().push(id.0, *input, hv);
                }
            }
            progress.embedded += batch.len();
        }
        progress.left = match project {
            Some(p) => self.ledger.semantic_backlog(p)?,
            None => self.ledger.semantic_pending(None, 1)?.len() as u64,
        };
        Ok(progress)
    }

    /// Starts a thread that embeds the events queued for the sentence model as they come
    /// ([`embed_pending`](Self::embed_pending)), and ends when the memory is dropped. A
    /// server starts it; without a sentence model, or on a view, it starts nothing.
    pub fn spawn_embedder(self: &Arc<Self>) {
        if !self.embedder.deferred() || self.read_only {
            return;
        }
        let memory = Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name("hypermem-embedder".to_owned())
            .spawn(move || {
                loop {
                    let Some(m) = memory.upgrade() else { return };
                    let idle = match m.embed_pending(None, EMBED_BATCH, None) {
                        Ok(p) => p.embedded == 0,
                        Err(e) => {
                            tracing::warn!(error = %e, "background embedding failed; retrying");
                            true
                        }
                    };
                    drop(m);
                    if idle {
                        std::thread::sleep(EMBED_IDLE);
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "background embedder not started; pulse embeds instead");
        }
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

    /// Events appended to the ledger whose vectors are missing (an observation interrupted
    /// between its ledger commit and its vector append) are encoded and stored now.
    fn repair(&self) -> Result<usize> {
        let projects: Vec<String> = self.ledger.read(|c| {
            c.prepare("SELECT DISTINCT project FROM events")
                .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
                .map_err(|e| self.ledger.sql(e))
        })?;
        let mut repaired = 0;
        for name in projects {
            let project = ProjectId::new(name)?;
            let ids: Vec<i64> = self.ledger.read(|c| {
                c.prepare("SELECT id FROM events WHERE project = ?1 ORDER BY id")
                    .and_then(|mut s| {
                        s.query_map(params![project.as_str()], |r| r.get(0))?
                            .collect()
                    })
                    .map_err(|e| self.ledger.sql(e))
            })?;
            let missing: Vec<EventId> = ids
                .into_iter()
                .map(|i| EventId(i as u64))
                .filter(|i| self.tiers.trace(&project, VectorId(i.0)).is_none())
                .collect();
            for chunk in missing.chunks(1000) {
                let mut items = Vec::new();
                for id in chunk {
                    if let Some(e) = self.ledger.get(&project, *id)?
                        && let Some(v) = self.encode(&e.content)
                    {
                        items.push((VectorId(id.0), v));
                    }
                }
                let batch: Vec<_> = items.iter().map(|(id, v)| (*id, v.view())).collect();
                match self.tiers.insert_batch(&project, &batch, 1.0) {
                    Ok(()) => repaired += batch.len(),
                    // The tier holds some of them but did not list them (a service that
                    // answered the listing partially): those are adopted, not re-stored.
                    Err(crate::store::StoreError::DuplicateId { .. }) => {
                        for item in &batch {
                            match self
                                .tiers
                                .insert_batch(&project, std::slice::from_ref(item), 1.0)
                            {
                                Ok(()) => repaired += 1,
                                Err(crate::store::StoreError::DuplicateId { .. }) => {
                                    tracing::warn!(
                                        project = project.as_str(),
                                        id = item.0.0,
                                        "a stored vector the warm tier did not list; adopted"
                                    );
                                    self.tiers.adopt(&project, &[item.0]);
                                }
                                Err(e) => return Err(e.into()),
                            }
                        }
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        if repaired > 0 {
            tracing::warn!(repaired, "re-encoded events whose vectors were not stored");
        }
        Ok(repaired)
    }

    /// Rebuilds the warm tier from the ledger if it reports that it lost its contents (a
    /// Redis restarted empty or flushed): every event whose durable home is the warm tier
    /// and whose vector is missing there is re-encoded (bit-identical: encoding is
    /// deterministic) and stored again. Another process may be restoring the same vectors:
    /// an id it stored first is not an error. Returns how many were restored. A view
    /// leaves the rebuild to the writer.
    ///
    /// # Errors
    /// The warm tier is unavailable; SQLite errors.
    pub fn recover_warm(&self) -> Result<usize> {
        if self.read_only || !self.warm.lost_contents()? {
            return Ok(0);
        }
        let _append = self.append_lock.locked();
        let projects: Vec<String> = self.ledger.read(|c| {
            c.prepare("SELECT DISTINCT project FROM events")
                .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
                .map_err(|e| self.ledger.sql(e))
        })?;
        let mut restored = 0;
        for name in projects {
            let project = ProjectId::new(name)?;
            let present: std::collections::HashSet<VectorId> =
                self.warm.ids(&project).into_iter().collect();
            let missing: Vec<VectorId> = self
                .tiers
                .warm_homed(&project)
                .into_iter()
                .filter(|id| !present.contains(id))
                .collect();
            for chunk in missing.chunks(1000) {
                let mut items = Vec::with_capacity(chunk.len());
                for id in chunk {
                    if let Some(e) = self.ledger.get(&project, EventId(id.0))?
                        && let Some(v) = self.encode(&e.content)
                    {
                        items.push((*id, v));
                    }
                }
                let batch: Vec<_> = items.iter().map(|(id, v)| (*id, v.view())).collect();
                match self.warm.insert_batch(&project, &batch) {
                    Ok(()) => restored += batch.len(),
                    Err(crate::store::StoreError::DuplicateId { .. }) => {
                        for item in &batch {
                            match self.warm.insert_batch(&project, std::slice::from_ref(item)) {
                                Ok(()) => restored += 1,
                                Err(crate::store::StoreError::DuplicateId { .. }) => {}
                                Err(e) => return Err(e.into()),
                            }
                        }
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        tracing::warn!(restored, "warm tier rebuilt from the ledger");
        Ok(restored)
    }

    /// Standing directives recall keeps for `project` (loads its text index).
    fn directive_count(&self, project: &ProjectId) -> Result<usize> {
        let text = self.project_text(project)?;
        Ok(text.reading().directives.len())
    }

    /// Records one observation (see [`observe_batch`](Self::observe_batch)).
    ///
    /// # Errors
    /// As [`observe_batch`](Self::observe_batch).
    pub fn observe(&self, event: NewEvent) -> Result<EventId> {
        Ok(self.observe_batch(std::slice::from_ref(&event))?[0])
    }

    /// Records observations: appended to the ledger in one transaction, encoded (in
    /// parallel), stored in the vector tier under their event ids (synced), linked to
    /// their thread predecessor by a synapse and, when they have an agent, appended to that
    /// agent's open episode (one is started when it has none). Acknowledged when it returns.
    ///
    /// All or nothing from the caller's view: if a projection (vectors, synapses,
    /// episodes) fails after the ledger commit, the call errs; retrying the same batch
    /// completes what is missing without storing any event twice (events with a source id
    /// that is stored, with the same content, are the stored events), and the next open
    /// re-encodes from the ledger any vector that is still missing.
    ///
    /// # Errors
    /// Ledger validation (content size, references), `conflict` for a stored source id
    /// with other content, store and SQLite errors.
    pub fn observe_batch(&self, events: &[NewEvent]) -> Result<Vec<EventId>> {
        self.writable()?;
        self.recover_warm()?;
        self.flush_feedback()?;
        // Lexical tokens only for projects whose index is in memory: the others catch up
        // from the ledger when they are first recalled (tokenizing now would be thrown away).
        let loaded: std::collections::HashSet<&str> = {
            let lexicon = self.lexicon.reading();
            events
                .iter()
                .filter(|e| lexicon.contains_key(&e.project))
                .map(|e| e.project.as_str())
                .collect()
        };
        let semantic = self.semantic_bits(events)?;
        // Events without bits wait for the sentence model's background worker.
        let deferred = self.embedder.deferred();
        let (ids, prevs, prepared) = {
            let _append = self.append_lock.locked();
            // A retry of a batch whose projections failed: events whose source id is
            // stored (same content) are the stored events, not new rows.
            let stored = self.ledger.stored_by_source(events)?;
            let fresh: Vec<bool> = stored.iter().map(Option::is_none).collect();
            let rows: Vec<Option<(u32, Vec<u8>)>> = semantic
                .iter()
                .zip(&fresh)
                .filter(|(_, f)| **f)
                .map(|(s, _)| {
                    s.as_ref().map(|(input, v)| {
                        (
                            *input as u32,
                            v.words().iter().flat_map(|w| w.to_le_bytes()).collect(),
                        )
                    })
                })
                .collect();
            // The ledger append (one transaction, one sync) runs on one core while the
            // texts are encoded on the others: neither needs what the other makes.
            // Documents are encoded with uniform term weights and queries with IDF weights:
            // measured on BEAM, IDF on the documents too lowered recall@10 from 0.442 to 0.386.
            let (prepared, appended) = rayon::join(
                || -> Vec<(Option<Hypervector>, Vec<String>)> {
                    events
                        .par_iter()
                        .map(|e| {
                            let tokens = if loaded.contains(e.project.as_str()) {
                                crate::text::tokens(&e.content)
                            } else {
                                Vec::new()
                            };
                            (self.encode(&e.content), tokens)
                        })
                        .collect()
                },
                || {
                    if fresh.iter().all(|f| *f) {
                        self.ledger.append_batch_with(events, &rows, deferred)
                    } else {
                        let new: Vec<NewEvent> = events
                            .iter()
                            .zip(&fresh)
                            .filter(|(_, f)| **f)
                            .map(|(e, _)| e.clone())
                            .collect();
                        self.ledger.append_batch_with(&new, &rows, deferred)
                    }
                },
            );
            let mut appended = appended?.into_iter();
            // Each event's id and, for a new one, the `prev` the ledger gave it.
            let (ids, prevs): (Vec<EventId>, Vec<Option<Option<EventId>>>) = stored
                .iter()
                .map(|s| match s {
                    Some(id) => (*id, None),
                    None => {
                        let a = appended.next().expect("one id per new event");
                        (a.id, Some(a.prev))
                    }
                })
                .unzip();
            let spaces = self.spaces.reading();
            let lexicon = self.lexicon.reading();
            for (i, e) in events.iter().enumerate().filter(|(i, _)| fresh[*i]) {
                let id = ids[i];
                if let (Some((input, v)), Some(space)) = (&semantic[i], spaces.get(&e.project)) {
                    space.writing().push(id.0, *input, v);
                }
                if let Some(p) = lexicon.get(&e.project) {
                    // Loaded since the tokens were prepared: tokenize here.
                    let late;
                    let tokens = if loaded.contains(e.project.as_str()) {
                        &prepared[i].1
                    } else {
                        late = crate::text::tokens(&e.content);
                        &late
                    };
                    let mut p = p.writing();
                    let indexed = crate::index::lexical::Indexed {
                        id: id.0,
                        role: e.role,
                        speaker: e.speaker.as_deref(),
                        session: e.session.as_deref().or(e.thread.as_deref()),
                        content: &e.content,
                        tokens,
                    };
                    p.index(&indexed, |prev| {
                        crate::index::lexical::tail_of(&self.ledger, &e.project, prev)
                    });
                    if let Some(name) = &e.speaker {
                        p.speakers.extend(crate::text::tokens(name));
                    }
                }
            }
            (ids, prevs, prepared)
        };
        // The ledger is the truth: from here on, a failure leaves projections that a retry
        // of the same batch (by source id) completes, and that the next open repairs
        // (vectors are re-encoded from the ledger).
        match self.project_observed(events, &ids, &prepared, &prevs) {
            Ok(()) => Ok(ids),
            // Every event has a source id: a retry of the batch is the stored events, so
            // the cause (retryable or not) stands as it is.
            Err(e) if events.iter().all(|e| e.source_id.is_some()) => Err(e),
            // Without source ids a retry would store the events twice: the error says
            // they are stored, never that retrying can succeed.
            Err(e) => Err(crate::Error::Committed {
                events: ids,
                source: Box::new(e),
            }),
        }
    }

    /// The projections of observed events after their ledger commit: vectors into the
    /// tiers, thread synapses, episodes.
    fn project_observed(
        &self,
        events: &[NewEvent],
        ids: &[EventId],
        prepared: &[(Option<Hypervector>, Vec<String>)],
        prevs: &[Option<Option<EventId>>],
    ) -> Result<()> {
        if let Some(e) = events
            .iter()
            .find(|e| crate::failpoint::projection_fails(e.project.as_str()))
        {
            return Err(crate::store::StoreError::Io {
                path: self.data_dir.join("vectors"),
                source: std::io::Error::other(format!(
                    "injected projection failure for project `{}`",
                    e.project
                )),
            }
            .into());
        }
        let mut by_project: std::collections::BTreeMap<&ProjectId, Vec<(VectorId, HvRef<'_>)>> =
            Default::default();
        let mut links: std::collections::BTreeMap<&ProjectId, Vec<(u64, u64)>> = Default::default();
        let mut retried_links: std::collections::BTreeMap<&ProjectId, Vec<(u64, u64)>> =
            Default::default();
        for (((e, id), (v, _)), prev) in events.iter().zip(ids).zip(prepared).zip(prevs) {
            let fresh = prev.is_some();
            if let Some(v) = v
                && (fresh || self.tiers.trace(&e.project, VectorId(id.0)).is_none())
            {
                by_project
                    .entry(&e.project)
                    .or_default()
                    .push((VectorId(id.0), v.view()));
            }
            if e.thread.is_none() {
                continue;
            }
            // A stored event of a retried batch: its `prev` is read back.
            let prev = match prev {
                Some(prev) => *prev,
                None => self.ledger.get(&e.project, *id)?.and_then(|s| s.prev),
            };
            if let Some(prev) = prev {
                let target = if fresh {
                    &mut links
                } else {
                    &mut retried_links
                };
                target.entry(&e.project).or_default().push((prev.0, id.0));
            }
        }
        for (project, batch) in by_project {
            self.tiers.insert_batch(project, &batch, 1.0)?;
        }
        for (project, pairs) in retried_links {
            let missing = self.cognition.unlinked(project, &pairs)?;
            links.entry(project).or_default().extend(missing);
        }
        for (project, pairs) in links {
            self.cognition.strengthen_pairs(project, &pairs)?;
        }
        self.link_episodes(events, ids, prepared)?;
        Ok(())
    }

    /// Appends observed events with an agent to that agent's open episode, starting one
    /// when it has none (it never started one, or its last was sealed). On a topic shift the
    /// episode is soft-sealed and a new one, chained to it, takes the rest: every agent's
    /// events segment themselves; [`start_episode`](Self::start_episode) only draws a
    /// boundary where the agent wants one.
    fn link_episodes(
        &self,
        events: &[NewEvent],
        ids: &[EventId],
        prepared: &[(Option<Hypervector>, Vec<String>)],
    ) -> Result<()> {
        let mut groups: std::collections::BTreeMap<
            (&ProjectId, &str),
            Vec<(EventId, &Hypervector)>,
        > = Default::default();
        for ((e, id), (v, _)) in events.iter().zip(ids).zip(prepared) {
            if let (Some(agent), Some(v)) = (e.agent.as_deref(), v) {
                groups
                    .entry((&e.project, agent))
                    .or_default()
                    .push((*id, v));
            }
        }
        for ((project, agent), items) in groups {
            // Segmentation runs for every agent: one without an open episode (it never
            // started one, or its last one was sealed) starts one with this event, and a
            // topic shift chains the next, by the same rule as an episode started explicitly.
            let mut episode = match self.cognition.open_episode(project, agent)? {
                Some(open) => open,
                None => self.cognition.start_episode(project, agent)?,
            };
            let mut rest = &items[..];
            while !rest.is_empty() {
                let appended = self
                    .cognition
                    .append_batch_to_episode(project, episode, rest)?
                    .len();
                rest = &rest[appended..];
                if !rest.is_empty() {
                    episode = self.cognition.start_episode(project, agent)?;
                }
            }
        }
        Ok(())
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

    /// Applies pending recall feedback and makes derived data durable (lexical indexes,
    /// HNSW graphs); also done on drop.
    ///
    /// # Errors
    /// Store errors.
    pub fn flush(&self) -> Result<()> {
        if self.read_only {
            return self.flush_feedback();
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
