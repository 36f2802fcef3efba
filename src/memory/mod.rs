//! `Memory`: the one facade agents use. It wires the ledger, the vector store, the text
//! encoder, cognition and recall together: an observation is appended to the ledger,
//! encoded, stored in the vector tier and linked (synapse to its thread predecessor) in one
//! call; recall fuses HDC similarity with bm25; erasure covers every store.
//!
//! The rest of the API (episodes, beliefs, procedures, meta-memory, pulse, stats) is in
//! [`ops`].
//!
//! Layout of a data directory: `ledger.db` (SQLite: events, beliefs, cognition) and
//! `vectors/` (the mmap segment store).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use hdv::encode::{TextEncoder, UniformWeights};
use hdv::{HvRef, Hypervector};
use rayon::prelude::*;
use rusqlite::params;

use crate::cognition::{Cognition, RecallTrace, RippleParams};
use crate::governance::ErasureReceipt;
use crate::ledger::{Event, EventId, Ledger, LedgerConfig, NewEvent, Role};
use crate::recall::lexical::{self, Postings};
use crate::recall::query::CompiledQuery;
use crate::recall::{self, Fused, Pack, Ranked, supersede};
use crate::store::{
    HotTier, ProjectId, SearchRequest, SegmentStore, TierManager, VectorId, VectorTier,
};
use crate::{Profile, Result};

mod ops;
pub use ops::ProjectStats;

/// Candidates gathered from each source before fusion.
const CANDIDATES: usize = 50;
/// IDF of a word in a quarter of the events: `ln(1 + 3)`; below it a word is "common".
const COMMON_IDF: f64 = 1.386;
/// Direct results under this fraction of the best rank-fusion score stay out of packs.
const RELEVANCE_FLOOR: f64 = 0.5;
/// Episodes (and concept-supporting episodes) whose events join recall as a source.
const EPISODES: usize = 2;
/// Topic (or prototype) similarity an episode (or concept) needs to be a source: about
/// 4.5 standard deviations of chance (1/√D) at D = 8,192.
const EPISODE_SIMILARITY: f64 = 0.05;
/// Head of the fused ranking that recall-time supersession reorders.
const RERANK_WINDOW: usize = 10;
/// Recalls whose learning signals are buffered before they are applied in one transaction.
pub const FEEDBACK_BATCH: usize = 32;

/// A mutex guard, whatever a panicking holder left behind (the guarded state is rebuilt
/// or append-only).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn read_lock<T>(m: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write_lock<T>(m: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Derived text indexes of one project, rebuilt from the ledger on first use.
#[derive(Debug, Default)]
struct ProjectText {
    /// BM25 postings.
    postings: Postings,
    /// Events stating standing directives ([`recall::directives`]), oldest first.
    directives: Vec<u64>,
}

impl ProjectText {
    fn add(&mut self, id: u64, role: Role, text: &str, tokens: &[String]) {
        self.postings.add(id, tokens);
        if recall::directives::is_directive(role, text) {
            self.directives.push(id);
        }
    }
}

/// A recalled memory with its score breakdown and source anchor.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecallItem {
    /// The raw event (the anchor: id, thread, turn, content).
    pub event: Event,
    /// Fused score and each source's contribution.
    pub fused: Fused,
    /// HDC similarity to the query, when the vector source found it.
    pub similarity: Option<f64>,
    /// The older event this one was moved above because it states a newer value
    /// (recall-time supersession, [`recall::supersede`]).
    pub supersedes: Option<EventId>,
    /// The `event_context` window around the anchor, when [`RecallQuery::context`] asks.
    pub context: Option<crate::ledger::EventContext>,
}

/// A recall request: the text, how many results, and filters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecallQuery<'a> {
    /// The query text.
    pub text: &'a str,
    /// Results wanted.
    pub k: usize,
    /// Only events created at or after this time (ms).
    pub since: Option<i64>,
    /// Only events created before this time (ms).
    pub until: Option<i64>,
    /// Only events of this agent.
    pub agent: Option<&'a str>,
    /// Only events of this thread.
    pub thread: Option<&'a str>,
    /// The caller's current session: its own events are suppressed (same-session echo).
    pub session: Option<&'a str>,
    /// Chronological neighbours (this many on each side, with parent and children) to
    /// attach to each result as its `context`; 0 attaches none.
    pub context: usize,
}

impl<'a> RecallQuery<'a> {
    /// `k` results for `text`, no filters.
    pub fn new(text: &'a str, k: usize) -> Self {
        Self {
            text,
            k,
            since: None,
            until: None,
            agent: None,
            thread: None,
            session: None,
            context: 0,
        }
    }
}

/// The filters of one recall: the caller's ([`RecallQuery`]) and those compiled from the
/// query text ([`CompiledQuery`]); an event must pass both.
struct Filters<'a> {
    rq: &'a RecallQuery<'a>,
    compiled: &'a CompiledQuery,
}

impl Filters<'_> {
    /// Why `event` must not be returned, if it must not.
    fn suppresses(&self, event: &Event) -> Option<String> {
        let (rq, q) = (self.rq, self.compiled);
        if rq.session.is_some() && event.session.as_deref() == rq.session {
            return Some("same-session echo".to_owned());
        }
        let outside = |since: Option<i64>, until: Option<i64>| {
            since.is_some_and(|t| event.created_at < t)
                || until.is_some_and(|t| event.created_at >= t)
        };
        if outside(rq.since, rq.until) || outside(q.since, q.until) {
            return Some("outside the time window".to_owned());
        }
        let differs = |want: Option<&str>, have: Option<&str>| want.is_some() && want != have;
        if differs(rq.agent, event.agent.as_deref())
            || differs(q.agent.as_deref(), event.agent.as_deref())
        {
            return Some("another agent".to_owned());
        }
        if differs(rq.thread, event.thread.as_deref())
            || differs(q.thread.as_deref(), event.thread.as_deref())
        {
            return Some("another thread".to_owned());
        }
        if differs(q.session.as_deref(), event.session.as_deref()) {
            return Some("another session".to_owned());
        }
        if q.role.is_some_and(|r| r != event.role) {
            return Some(format!(
                "role {} is not {}",
                event.role,
                q.role.expect("checked")
            ));
        }
        if q.kind.is_some_and(|k| k != event.kind) {
            return Some(format!(
                "kind {} is not {}",
                event.kind,
                q.kind.expect("checked")
            ));
        }
        if !q.phrases.is_empty() {
            let content = recall::query::normalize(&event.content);
            if let Some(missing) = q.phrases.iter().find(|p| !content.contains(p.as_str())) {
                return Some(format!("does not contain the phrase \"{missing}\""));
            }
        }
        None
    }
}

/// Recall results and the candidates the filters suppressed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecallResult {
    /// Results, best first.
    pub items: Vec<RecallItem>,
    /// Suppressed candidates with the reason.
    pub suppressed: Vec<(EventId, String)>,
}

/// What `forget_project` removed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ForgetReceipt {
    /// Ledger, governance and cognition rows per table.
    pub ledger: ErasureReceipt,
    /// Vectors removed from the vector store.
    pub vectors: usize,
    /// Documents dropped from the in-memory lexical index (0 if it was not loaded).
    pub lexical: u64,
}

/// The memory of one data directory.
pub struct Memory {
    profile: Profile,
    data_dir: PathBuf,
    ledger: Arc<Ledger>,
    /// Hot (RAM copies) + warm + cold vector tiers with LTP placement.
    tiers: TierManager,
    /// The warm tier: mmap segments under `vectors/`.
    warm: Arc<SegmentStore>,
    /// The cold tier: mmap segments (HNSW above its threshold) under `vectors-cold/`.
    cold: Arc<SegmentStore>,
    cognition: Arc<Cognition>,
    /// Encoders ready for use: one is taken per encoding task (so threads encode in
    /// parallel, each keeping its own symbol cache) and put back afterwards.
    encoders: Mutex<Vec<TextEncoder>>,
    /// Lexical (BM25) postings per project, built from the ledger on first use.
    lexicon: RwLock<HashMap<ProjectId, Arc<RwLock<ProjectText>>>>,
    /// Learning signals of recalls not yet applied ([`Memory::flush_feedback`]).
    feedback: Mutex<Vec<RecallTrace>>,
    /// Held across a ledger append and the indexing of its events (and across a lazy
    /// build), so every event is indexed exactly once.
    append_lock: Mutex<()>,
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
        let data_dir = data_dir.map_or_else(|| profile.data_dir.clone(), Path::to_path_buf);
        std::fs::create_dir_all(&data_dir).map_err(|source| crate::store::StoreError::Io {
            path: data_dir.clone(),
            source,
        })?;
        let ledger = Arc::new(
            Ledger::open(data_dir.join("ledger.db"), LedgerConfig::default())?.with_clock(clock),
        );
        let warm = Arc::new(SegmentStore::open_or_create(
            data_dir.join("vectors"),
            profile.dim,
            profile.store,
        )?);
        let cold = Arc::new(SegmentStore::open_or_create(
            data_dir.join("vectors-cold"),
            profile.dim,
            profile.store,
        )?);
        let tiers = TierManager::new(
            HotTier::new(profile.dim, profile.hot_capacity),
            warm.clone(),
            cold.clone(),
            profile.tiers,
            ledger.clock(),
        );
        let cognition = Arc::new(Cognition::new(
            ledger.clone(),
            profile.dim,
            profile.cognition,
        ));
        let memory = Self {
            profile: profile.clone(),
            data_dir,
            ledger,
            tiers,
            warm,
            cold,
            cognition,
            encoders: Mutex::new(Vec::new()),
            lexicon: RwLock::new(HashMap::new()),
            append_lock: Mutex::new(()),
            feedback: Mutex::new(Vec::new()),
        };
        memory.repair()?;
        memory.restore_traces()?;
        Ok(memory)
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

    /// Applies the buffered learning signals of recent recalls (synapse strengthening
    /// among their top results, their LTP accesses, the query log) in one transaction. Recall buffers them so
    /// a query costs no disk sync; they are applied every [`FEEDBACK_BATCH`] recalls, by
    /// observations, packs, [`flush`](Self::flush), cognition access and on drop. They are
    /// derived signals: a crash loses at most one batch of them, never an observation.
    ///
    /// # Errors
    /// SQLite errors (the batch is dropped then).
    pub fn flush_feedback(&self) -> Result<()> {
        let batch = std::mem::take(&mut *lock(&self.feedback));
        Ok(self.cognition.record_recalls(&batch)?)
    }

    /// The vector tiers (hot, warm, cold) and their LTP traces.
    pub fn vectors(&self) -> &TierManager {
        &self.tiers
    }

    /// Restores the LTP statistics of every stored memory: persisted ones from
    /// `memory_traces`, else importance 1, one access, last access = the event's time.
    fn restore_traces(&self) -> Result<()> {
        type Row = (String, i64, i64, Option<f64>, Option<i64>, Option<i64>);
        let rows: Vec<Row> = self.ledger.read(|c| {
            c.prepare(
                "SELECT e.project, e.id, e.created_at, t.importance, t.accesses, t.last_access
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
        for (name, id, created, importance, accesses, last) in rows {
            if project.as_ref().is_none_or(|p| p.as_str() != name) {
                project = Some(ProjectId::new(name)?);
            }
            let p = project.as_ref().expect("set above");
            self.tiers.restore(
                p,
                VectorId(id as u64),
                importance.unwrap_or(1.0),
                accesses.map_or(1, |a| a as u64),
                last.unwrap_or(created) as f64 / 1000.0,
            );
        }
        Ok(())
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    fn with_encoder<R>(&self, f: impl FnOnce(&mut TextEncoder) -> R) -> R {
        let pooled = self
            .encoders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop();
        let mut encoder =
            pooled.unwrap_or_else(|| TextEncoder::new(self.profile.dim, self.profile.text));
        let out = f(&mut encoder);
        self.encoders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(encoder);
        out
    }

    /// Encodes text with the profile's text encoder and uniform term weights (`None` for
    /// text without tokens).
    pub fn encode(&self, text: &str) -> Option<Hypervector> {
        self.with_encoder(|e| e.encode(text, &UniformWeights).ok())
    }

    /// The text indexes of `project`, built from the ledger if not yet loaded.
    fn project_text(&self, project: &ProjectId) -> Result<Arc<RwLock<ProjectText>>> {
        if let Some(p) = read_lock(&self.lexicon).get(project) {
            return Ok(p.clone());
        }
        let _append = lock(&self.append_lock);
        if let Some(p) = read_lock(&self.lexicon).get(project) {
            return Ok(p.clone());
        }
        let contents = self.ledger.contents(project)?;
        let tokens: Vec<Vec<String>> = contents
            .par_iter()
            .map(|(_, _, text)| lexical::tokens(text))
            .collect();
        let mut text = ProjectText::default();
        for ((id, role, content), t) in contents.iter().zip(&tokens) {
            text.add(id.0, *role, content, t);
        }
        tracing::debug!(
            project = project.as_str(),
            documents = text.postings.documents(),
            directives = text.directives.len(),
            "lexical index built"
        );
        let text = Arc::new(RwLock::new(text));
        write_lock(&self.lexicon).insert(project.clone(), text.clone());
        Ok(text)
    }

    /// BM25 IDF weights of the words of `text` in `project`, so rare words dominate a
    /// query vector and template words barely count. A word the lexical tokenizer splits
    /// (`v3.11`) takes the weight of its rarest piece.
    fn idf(&self, postings: &Postings, text: &str) -> HashMap<String, f32> {
        let n = postings.documents();
        TextEncoder::tokens(text)
            .into_iter()
            .map(|word| {
                let df = lexical::tokens(&word)
                    .iter()
                    .map(|t| postings.df(t))
                    .min()
                    .unwrap_or(0);
                (word, lexical::idf(n, df) as f32)
            })
            .collect()
    }

    /// Encodes text with IDF weights of `project`.
    fn encode_idf(&self, text: &str, idf: &HashMap<String, f32>) -> Option<Hypervector> {
        let weights = |t: &str| idf.get(t).copied().unwrap_or(1.0);
        self.with_encoder(|e| e.encode(text, &weights).ok())
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
                self.tiers.insert_batch(&project, &batch, 1.0)?;
                repaired += batch.len();
            }
        }
        if repaired > 0 {
            tracing::warn!(repaired, "re-encoded events whose vectors were not stored");
        }
        Ok(repaired)
    }

    /// Standing directives recall keeps for `project` (loads its text index).
    fn directive_count(&self, project: &ProjectId) -> Result<usize> {
        let text = self.project_text(project)?;
        Ok(read_lock(&text).directives.len())
    }

    /// Events of the sealed episodes whose topic is nearest `query`, and of the episodes
    /// supporting the nearest concept (each only above [`EPISODE_SIMILARITY`]), best first
    /// by their own similarity to the query.
    fn episodic_candidates(&self, project: &ProjectId, query: &Hypervector) -> Result<Vec<u64>> {
        let mut episodes: Vec<crate::cognition::EpisodeId> = self
            .cognition
            .similar_episodes(project, query, EPISODES)?
            .into_iter()
            .filter(|(_, s)| *s >= EPISODE_SIMILARITY)
            .map(|(id, _)| id)
            .collect();
        let best_concept = self
            .cognition
            .concepts(project)?
            .into_iter()
            .map(|c| (query.similarity(&c.prototype), c))
            .filter(|(s, _)| *s >= EPISODE_SIMILARITY)
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.id.0.cmp(&a.1.id.0)));
        if let Some((_, concept)) = best_concept {
            episodes.extend(concept.support.iter().take(EPISODES));
        }
        episodes.sort_unstable();
        episodes.dedup();
        let mut scored = Vec::new();
        for id in episodes {
            for event in self.cognition.episode(project, id)?.events {
                if let Some(v) = self.tiers.get(project, VectorId(event.0))? {
                    scored.push((query.hamming(&v), event.0));
                }
            }
        }
        scored.sort_unstable();
        scored.dedup_by_key(|s| s.1);
        Ok(scored.into_iter().take(CANDIDATES).map(|s| s.1).collect())
    }

    /// Directive slots of a `k`-result recall: the profile's number, at most a third of `k`.
    fn directive_slots(&self, k: usize) -> usize {
        self.profile.recall.directive_slots.min(k / 3)
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
    /// their thread predecessor by a synapse and appended to their agent's open episode
    /// (if the agent started one). Acknowledged when it returns.
    ///
    /// # Errors
    /// Ledger validation (content size, references), store and SQLite errors.
    pub fn observe_batch(&self, events: &[NewEvent]) -> Result<Vec<EventId>> {
        self.flush_feedback()?;
        // Documents are encoded with uniform term weights and queries with IDF weights:
        // measured on BEAM, IDF on the documents too lowered recall@10 from 0.442 to 0.386.
        let prepared: Vec<(Option<Hypervector>, Vec<String>)> = events
            .par_iter()
            .map(|e| (self.encode(&e.content), lexical::tokens(&e.content)))
            .collect();
        let ids = {
            let _append = lock(&self.append_lock);
            let ids = self.ledger.append_batch(events)?;
            let lexicon = read_lock(&self.lexicon);
            for ((e, id), (_, tokens)) in events.iter().zip(&ids).zip(&prepared) {
                if let Some(p) = lexicon.get(&e.project) {
                    write_lock(p).add(id.0, e.role, &e.content, tokens);
                }
            }
            ids
        };
        let mut by_project: std::collections::BTreeMap<&ProjectId, Vec<(VectorId, HvRef<'_>)>> =
            Default::default();
        let mut links: std::collections::BTreeMap<&ProjectId, Vec<(u64, u64)>> = Default::default();
        for ((e, id), (v, _)) in events.iter().zip(&ids).zip(&prepared) {
            if let Some(v) = v {
                by_project
                    .entry(&e.project)
                    .or_default()
                    .push((VectorId(id.0), v.view()));
            }
            if e.thread.is_some()
                && let Some(stored) = self.ledger.get(&e.project, *id)?
                && let Some(prev) = stored.prev
            {
                links.entry(&e.project).or_default().push((prev.0, id.0));
            }
        }
        for (project, batch) in by_project {
            self.tiers.insert_batch(project, &batch, 1.0)?;
        }
        for (project, pairs) in links {
            self.cognition.strengthen_pairs(project, &pairs)?;
        }
        self.link_episodes(events, &ids, &prepared)?;
        Ok(ids)
    }

    /// Appends observed events to their agent's open episode, if the agent has one (an
    /// agent opts in with [`start_episode`](Self::start_episode)). On a topic shift the
    /// episode is soft-sealed and a new one, chained to it, takes the rest: episodes
    /// segment themselves once started.
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
            let Some(mut episode) = self.cognition.open_episode(project, agent)? else {
                continue;
            };
            let mut rest = &items[..];
            while !rest.is_empty() {
                let appended = self
                    .cognition
                    .append_batch_to_episode(project, episode, rest)?;
                rest = &rest[appended..];
                if !rest.is_empty() {
                    episode = self.cognition.start_episode(project, agent)?;
                }
            }
        }
        Ok(())
    }

    /// The `k` memories of `project` most relevant to `query`: HDC similarity and bm25
    /// candidates fused by weighted reciprocal rank, each with its breakdown and anchor.
    /// The top results strengthen their synapses, and the query is logged for gap
    /// detection.
    ///
    /// # Errors
    /// Store, ledger and SQLite errors.
    pub fn recall(&self, project: &ProjectId, query: &str, k: usize) -> Result<Vec<RecallItem>> {
        Ok(self
            .recall_with(project, &RecallQuery::new(query, k))?
            .items)
    }

    /// Recall with filters (see [`RecallQuery`]): candidates outside the time window, of
    /// another agent or thread, or from the caller's own session (echo) are suppressed and
    /// listed with the reason.
    ///
    /// # Errors
    /// As [`recall`](Self::recall).
    pub fn recall_with(&self, project: &ProjectId, rq: &RecallQuery<'_>) -> Result<RecallResult> {
        let compiled = recall::query::compile(rq.text, self.ledger.now_ms())?;
        if let Some(named) = &compiled.project
            && named != project.as_str()
        {
            return Err(crate::ledger::LedgerError::Invalid {
                what: "query",
                reason: format!(
                    "it names project `{named}` but recalls project `{project}`: recall never crosses projects"
                ),
            }
            .into());
        }
        let filters = Filters {
            rq,
            compiled: &compiled,
        };
        let (query, k) = (compiled.text.as_str(), rq.k);
        let mut similarity = std::collections::HashMap::new();
        let mut lists = Vec::new();
        let text = self.project_text(project)?;
        let idf = self.idf(&read_lock(&text).postings, query);
        // Standing directives most similar to the query (their own slots, below).
        let mut directives: Vec<(u64, f64)> = Vec::new();
        if let Some(q) = self.encode_idf(query, &idf) {
            let slots = self.directive_slots(k);
            if slots > 0 {
                let ids = read_lock(&text).directives.clone();
                let d = self.profile.dim.bits() as f64;
                for id in ids {
                    if let Some(v) = self.tiers.get(project, VectorId(id))? {
                        directives.push((id, 1.0 - 2.0 * f64::from(q.hamming(&v)) / d));
                    }
                }
                directives.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                // Only directives clearly above chance (3 standard deviations of the
                // similarity of unrelated vectors, 1/√D) take a slot.
                let chance = 1.0 / d.sqrt();
                directives.retain(|&(_, sim)| sim >= 3.0 * chance);
                directives.truncate(slots);
            }
            let hits = self
                .tiers
                .search(project, &SearchRequest::new(q.view(), CANDIDATES))?;
            let d = self.profile.dim.bits() as f64;
            for h in &hits {
                similarity.insert(h.id.0, 1.0 - 2.0 * f64::from(h.distance) / d);
            }
            lists.push(Ranked {
                source: "vector",
                weight: self.profile.recall.vector_weight,
                ids: hits.iter().map(|h| h.id.0).collect(),
            });
            if self.profile.recall.episode_weight > 0.0 {
                let ids = self.episodic_candidates(project, &q)?;
                if !ids.is_empty() {
                    lists.push(Ranked {
                        source: "episode",
                        weight: self.profile.recall.episode_weight,
                        ids,
                    });
                }
            }
        }
        let query_terms = {
            // Words in more than a quarter of the project's events add almost nothing to
            // BM25 (idf ≤ ln 4) but make it score nearly every event: leave them out
            // (unless nothing else remains).
            let postings = &read_lock(&text).postings;
            let n = postings.documents();
            let terms = lexical::tokens(query);
            let distinctive: Vec<String> = terms
                .iter()
                .filter(|t| lexical::idf(n, postings.df(t)) >= COMMON_IDF)
                .cloned()
                .collect();
            let hits = postings.search(
                if distinctive.is_empty() {
                    &terms
                } else {
                    &distinctive
                },
                CANDIDATES,
            );
            lists.push(Ranked {
                source: "bm25",
                weight: self.profile.recall.fts_weight,
                ids: hits.iter().map(|h| h.0).collect(),
            });
            if !compiled.phrases.is_empty() {
                // Events holding every word of every phrase (the filter checks the phrase
                // itself), best by BM25 over those words.
                let words: Vec<String> = compiled
                    .phrases
                    .iter()
                    .flat_map(|p| lexical::tokens(p))
                    .collect();
                let hits = postings.search_all(&words, CANDIDATES);
                lists.push(Ranked {
                    source: "phrase",
                    weight: self.profile.recall.fts_weight,
                    ids: hits.iter().map(|h| h.0).collect(),
                });
            }
            if distinctive.is_empty() {
                terms
            } else {
                distinctive
            }
        };
        let mut out = Vec::with_capacity(k);
        // Role prior: what the user said outranks what was said back to the user, among the
        // top fused candidates (additive and bounded, like every boost).
        let user_bonus = self.profile.recall.user_bonus;
        let mut all = Vec::new();
        let mut suppressed = Vec::new();
        for mut fused in recall::fuse(&lists).into_iter().take(k.max(40)) {
            if let Some(event) = self.ledger.get(project, EventId(fused.id))? {
                if let Some(reason) = filters.suppresses(&event) {
                    suppressed.push((event.id, reason));
                    continue;
                }
                if event.role == crate::ledger::Role::User {
                    fused.score += user_bonus;
                }
                all.push((fused, event));
            }
        }
        all.sort_by(|a, b| b.0.score.total_cmp(&a.0.score).then(a.0.id.cmp(&b.0.id)));
        let mut supersedes = HashMap::new();
        if self.profile.recall.supersede {
            let mut ranked: Vec<supersede::Candidate> = all
                .iter()
                .take(RERANK_WINDOW)
                .map(|(f, e)| supersede::Candidate {
                    id: f.id,
                    role: e.role,
                    tokens: lexical::tokens(&e.content),
                    evidence: f.breakdown.iter().map(|b| b.2).sum(),
                })
                .collect();
            let moves = supersede::reorder(
                &query_terms,
                &mut ranked,
                self.profile.recall.supersede_ratio,
            );
            if !moves.is_empty() {
                let order: HashMap<u64, usize> =
                    ranked.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
                let head = all.len().min(RERANK_WINDOW);
                all[..head].sort_by_key(|(f, _)| order[&f.id]);
                supersedes.extend(moves);
            }
        }
        // Directive slots: the standing directives closest to the query that rank fusion
        // left out of the top k take the last places (filters apply to them too).
        let mut slot_items = Vec::new();
        for (rank, &(id, sim)) in directives.iter().enumerate() {
            if all.iter().take(k).any(|(f, _)| f.id == id) {
                continue;
            }
            if let Some(event) = self.ledger.get(project, EventId(id))? {
                if let Some(reason) = filters.suppresses(&event) {
                    suppressed.push((event.id, reason));
                    continue;
                }
                similarity.insert(id, sim);
                let fused = Fused {
                    id,
                    score: 0.0,
                    breakdown: vec![("directive", rank + 1, 0.0)],
                };
                slot_items.push((fused, event));
            }
        }
        all.retain(|(f, _)| !slot_items.iter().any(|(s, _)| s.id == f.id));
        all.truncate(k.saturating_sub(slot_items.len()));
        all.extend(slot_items);
        for (fused, event) in all.into_iter().take(k) {
            let context = if rq.context > 0 {
                Some(
                    self.ledger
                        .event_context(project, event.id, rq.context, rq.context)?,
                )
            } else {
                None
            };
            out.push(RecallItem {
                context,
                supersedes: supersedes.get(&fused.id).map(|&id| EventId(id)),
                similarity: similarity.get(&fused.id).copied(),
                event,
                fused,
            });
        }
        let best = out
            .iter()
            .filter_map(|i| i.similarity)
            .fold(0.0f64, f64::max);
        let top: Vec<u64> = out.iter().take(5).map(|i| i.event.id.0).collect();
        // Long-term potentiation: the top results count an access now (in RAM; persisted
        // with the feedback batch) and grow stronger for tier placement.
        let accessed: Vec<VectorId> = top.iter().map(|&id| VectorId(id)).collect();
        self.tiers.touch(project, &accessed);
        let pending = {
            let mut feedback = lock(&self.feedback);
            feedback.push(RecallTrace {
                project: project.clone(),
                query: query.to_owned(),
                best_similarity: best,
                hits: top,
                at: self.ledger.now_ms(),
            });
            feedback.len()
        };
        if pending >= FEEDBACK_BATCH {
            self.flush_feedback()?;
        }
        Ok(RecallResult {
            items: out,
            suppressed,
        })
    }

    /// A context pack for `query` within `available_tokens`: current beliefs the query
    /// touches, suggested procedures, direct recall results, then associative neighbours
    /// (ripple over synapses from the top results), greedily filled
    /// under the budget (`requested`, default 25 % of the available tokens, never above
    /// 30 %). The query compiles as in [`recall_with`](Self::recall_with) (filters, phrases,
    /// time hints); events of the caller's own `session` are suppressed as echo. The receipt
    /// lists every selected item and every suppressed candidate with its reason.
    ///
    /// # Errors
    /// As [`recall`](Self::recall).
    pub fn recall_pack(
        &self,
        project: &ProjectId,
        query: &str,
        session: Option<&str>,
        available_tokens: usize,
        requested: Option<usize>,
    ) -> Result<Pack> {
        let budget = recall::pack_budget(available_tokens, requested);
        let mut rq = RecallQuery::new(query, 20);
        rq.session = session;
        let RecallResult {
            items: direct,
            suppressed,
        } = self.recall_with(project, &rq)?;
        let compiled = recall::query::compile(query, self.ledger.now_ms())?;
        let filters = Filters {
            rq: &rq,
            compiled: &compiled,
        };
        let query = compiled.text.as_str();
        let mut associative_suppressed = Vec::new();
        let mut candidates = Vec::new();
        // Current beliefs touched by the query come first: concise and governed (only
        // active rows, never superseded ones; user-owned ones exist only with user evidence).
        let words: std::collections::HashSet<String> = TextEncoder::tokens(query)
            .into_iter()
            .filter(|t| t.chars().count() > 3)
            .collect();
        for b in self
            .ledger
            .beliefs_with_status(project, crate::governance::BeliefStatus::Active)?
        {
            let text = format!("{} {}", b.key.replace(['.', '_'], " "), b.statement);
            let overlap: Vec<String> = TextEncoder::tokens(&text)
                .into_iter()
                .filter(|t| words.contains(t))
                .collect();
            if !overlap.is_empty() {
                candidates.push((
                    b.id.0,
                    "belief",
                    format!(
                        "current belief {} v{} (matches {:?})",
                        b.key, b.version, overlap
                    ),
                    format!("{}: {}", b.key, b.statement),
                ));
            }
        }
        if let Some(q) = self.encode(query) {
            for s in self.cognition.suggest_procedures(project, &q, 2)? {
                if s.score > 0.05 {
                    let steps: Vec<&str> = s
                        .procedure
                        .steps
                        .iter()
                        .map(|st| st.instruction.as_str())
                        .collect();
                    candidates.push((
                        s.procedure.id.0,
                        "procedure",
                        format!("procedure score {:.3} (similarity x reliability)", s.score),
                        format!("{}: {}", s.procedure.name, steps.join("; ")),
                    ));
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        // A relevance floor: direct results whose rank-fusion evidence (priors excluded) is
        // under half the best one's do not fill the budget just because there is room; they
        // are listed as suppressed instead.
        let evidence = |i: &RecallItem| i.fused.breakdown.iter().map(|b| b.2).sum::<f64>();
        let best = direct.iter().map(evidence).fold(0.0, f64::max);
        let mut below_floor = Vec::new();
        for (i, item) in direct.iter().enumerate() {
            seen.insert(item.event.id.0);
            if let Some(&("directive", rank, _)) = item.fused.breakdown.first() {
                candidates.push((
                    item.event.id.0,
                    "directive",
                    format!(
                        "standing directive, #{rank} by similarity ({:.3})",
                        item.similarity.unwrap_or(0.0)
                    ),
                    item.event.content.clone(),
                ));
                continue;
            }
            if evidence(item) < RELEVANCE_FLOOR * best {
                below_floor.push(recall::ReceiptLine {
                    id: item.event.id.0,
                    slot: "direct",
                    tokens: recall::estimate_tokens(&item.event.content),
                    reason: format!(
                        "below the relevance floor (rank fusion {:.4} < {RELEVANCE_FLOOR} x best {best:.4})",
                        evidence(item)
                    ),
                });
                continue;
            }
            candidates.push((
                item.event.id.0,
                "direct",
                format!("rank {} (fused {:.4})", i + 1, item.fused.score),
                item.event.content.clone(),
            ));
        }
        let seeds: Vec<u64> = direct.iter().take(3).map(|i| i.event.id.0).collect();
        self.flush_feedback()?;
        for a in self
            .cognition
            .ripple(project, &seeds, RippleParams::default())?
        {
            if seen.insert(a.id)
                && let Some(e) = self.ledger.get(project, EventId(a.id))?
            {
                if let Some(reason) = filters.suppresses(&e) {
                    associative_suppressed.push(recall::ReceiptLine {
                        id: a.id,
                        slot: "associative",
                        tokens: 0,
                        reason,
                    });
                    continue;
                }
                candidates.push((
                    a.id,
                    "associative",
                    format!("linked from {:?} (activation {:.3})", a.path, a.activation),
                    e.content,
                ));
            }
        }
        let mut pack = recall::fill(budget, candidates);
        pack.suppressed.extend(below_floor);
        pack.suppressed.extend(associative_suppressed);
        pack.suppressed.extend(
            suppressed
                .into_iter()
                .map(|(id, reason)| recall::ReceiptLine {
                    id: id.0,
                    slot: "direct",
                    tokens: 0,
                    reason,
                }),
        );
        Ok(pack)
    }

    /// Erases `project` everywhere: ledger, governance and cognition rows, the full-text
    /// table, the vector store (its directory, graph included) and in-memory state.
    ///
    /// # Errors
    /// Ledger or store errors.
    pub fn forget_project(&self, project: &ProjectId) -> Result<ForgetReceipt> {
        let _append = lock(&self.append_lock);
        lock(&self.feedback).retain(|r| &r.project != project);
        let lexical = write_lock(&self.lexicon)
            .remove(project)
            .map_or(0, |p| read_lock(&p).postings.documents());
        let ledger = self.ledger.forget_project(project)?;
        let vectors = self.tiers.drop_project(project)?;
        self.cognition.forget_project_state(project);
        Ok(ForgetReceipt {
            ledger,
            vectors,
            lexical,
        })
    }

    /// Applies pending recall feedback and makes derived data durable (HNSW graphs); also
    /// done on drop.
    ///
    /// # Errors
    /// Store errors.
    pub fn flush(&self) -> Result<()> {
        self.flush_feedback()?;
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
