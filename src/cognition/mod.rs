//! Cognitive layers on top of the ledger: working memory, episodes, concepts, procedures,
//! meta-memory, synapses and ripple, knowledge gaps, associations, the consolidation
//! curator and the pulse that runs them. Everything is scoped by project (agents are fields)
//! and persisted in the ledger's SQLite database, so erasure covers it.
//!
//! The layer takes vectors from its caller (the `Memory` facade encodes text); it never
//! deletes raw events (the ledger's triggers would refuse it anyway).

mod associations;
mod concepts;
mod curator;
mod episodes;
mod feedback;
mod gaps;
mod meta;
mod procedures;
mod pulse;
mod synapses;
mod working;

use crate::sync::Recover as _;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hdv::{Bundler, Dim, Hypervector};

pub use crate::store::{WorkingBoard, WorkingItem};
pub use associations::Association;
pub use concepts::{Concept, ConceptId};
pub use curator::{CandidateRefusal, Curated};
pub use episodes::{AppendOutcome, Episode, EpisodeId, EpisodeStatus};
pub use feedback::RecallTrace;
pub use gaps::{Gap, GapKind};
pub use meta::{Proposal, ProposalStatus};
pub use procedures::{Procedure, ProcedureId, Step, Suggestion};
pub use pulse::{PHASES, Phase, PhaseReceipt, PulseBudget, PulseReceipt, PulseRunner};
pub use synapses::{Activation, RippleParams};
pub use working::WorkingMemory;

use crate::base::ProjectId;
use crate::ledger::{Ledger, LedgerError, LedgerResult};

/// Settings of the cognitive layers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CognitionConfig {
    /// Working-memory capacity per agent.
    pub working_capacity: usize,
    /// Working-memory recency time constant (seconds).
    pub working_tau_secs: f64,
    /// An open episode idle this long is soft-sealed; soft-sealed this long again, sealed.
    pub episode_idle_ms: i64,
    /// An event whose similarity to its open episode is below this (after
    /// `topic_min_events` events) is a topic shift: the episode is soft-sealed.
    pub topic_shift_similarity: f64,
    /// Events before topic shifts are judged.
    pub topic_min_events: usize,
    /// Similarity an episode needs to join a concept (well above chance, 0 ± 1/√D).
    pub concept_similarity: f64,
    /// An episode also needs a similarity to the concept of at least this many robust
    /// standard deviations above the median similarity of the project's other episodes
    /// (median + z · 1.4826 · MAD): text of one project shares words, so unrelated
    /// episodes are far above chance.
    pub concept_z: f64,
    /// Concepts a project keeps at most: past it, those with the least support are retired.
    pub max_concepts: usize,
    /// Hebbian learning rate: `w ← w + rate · (1 − w)` per co-activation.
    pub synapse_rate: f64,
    /// Synapse decay per day: `w ← w · e^(−decay · days)`.
    pub synapse_decay_per_day: f64,
}

impl Default for CognitionConfig {
    fn default() -> Self {
        Self {
            working_capacity: 64,
            working_tau_secs: 600.0,
            episode_idle_ms: 30 * 60 * 1000,
            topic_shift_similarity: 0.02,
            topic_min_events: 3,
            concept_similarity: 0.15,
            concept_z: 3.0,
            max_concepts: 30,
            synapse_rate: 0.2,
            synapse_decay_per_day: 0.05,
        }
    }
}

/// Filler: an acknowledgement or small talk with fewer than three content words ("ok",
/// "thanks!", "sounds good"). It proposes nothing, stays out of summaries, and never starts an episode.
pub(crate) fn is_filler(text: &str) -> bool {
    crate::text::tokens(text)
        .iter()
        .filter(|t| !crate::text::is_stop_word(t))
        .count()
        < 3
}

/// Row ids and the packed words of their vectors (`ids[i]` owns the i-th vector).
type PackedVectors = (Vec<u64>, Vec<u64>);

/// The cognitive layers of one ledger.
pub struct Cognition {
    /// Where working memories live when processes share them.
    board: Option<Arc<dyn WorkingBoard>>,
    ledger: Arc<Ledger>,
    dim: Dim,
    config: CognitionConfig,
    working: Mutex<HashMap<(ProjectId, String), WorkingMemory>>,
    /// Open episodes' (positional, topic) counters.
    open: Mutex<HashMap<EpisodeId, (Bundler, Bundler)>>,
    /// Topic vectors of sealed episodes per project (ids, packed words), loaded on first
    /// use and dropped when an episode of the project is sealed: recall ranks them per query.
    topics: Mutex<HashMap<ProjectId, Arc<PackedVectors>>>,
    /// Per project, what consolidation knows of its words (`concepts::GistState`).
    gists: Mutex<HashMap<ProjectId, concepts::GistState>>,
}

impl std::fmt::Debug for Cognition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cognition")
            .field("dim", &self.dim)
            .field("config", &self.config)
            .finish()
    }
}

impl Cognition {
    /// Cognition over `ledger` for vectors of dimension `dim`.
    pub fn new(ledger: Arc<Ledger>, dim: Dim, config: CognitionConfig) -> Self {
        Self {
            board: None,
            ledger,
            dim,
            config,
            working: Mutex::new(HashMap::new()),
            open: Mutex::new(HashMap::new()),
            topics: Mutex::new(HashMap::new()),
            gists: Mutex::new(HashMap::new()),
        }
    }

    /// The ledger.
    pub fn ledger(&self) -> &Arc<Ledger> {
        &self.ledger
    }

    /// The settings.
    pub fn config(&self) -> CognitionConfig {
        self.config
    }

    /// The dimension.
    pub fn dim(&self) -> Dim {
        self.dim
    }

    fn now_secs(&self) -> f64 {
        self.ledger.now_ms() as f64 / 1000.0
    }

    /// Keeps working memories on `board`, shared with the deployment's other processes.
    #[must_use]
    pub fn with_working_board(mut self, board: Arc<dyn WorkingBoard>) -> Self {
        self.board = Some(board);
        self
    }

    /// Runs `f` on the working memory of `agent` in `project`: the shared one when the
    /// deployment has a board (read, changed and written back under the agent's lock),
    /// else this process's. A board that cannot be reached is logged and this process's
    /// copy serves: working memory is scratch state, not a reason to fail the caller.
    pub fn with_working<R>(
        &self,
        project: &ProjectId,
        agent: &str,
        f: impl FnOnce(&mut WorkingMemory, f64) -> R,
    ) -> R {
        let now = self.now_secs();
        let mut f = Some(f);
        if let Some(board) = &self.board {
            let (capacity, tau) = (self.config.working_capacity, self.config.working_tau_secs);
            let mut out = None;
            let result = board.update(project, agent, &mut |items| {
                let mut wm = WorkingMemory::restore(capacity, tau, std::mem::take(items));
                if let Some(f) = f.take() {
                    out = Some(f(&mut wm, now));
                }
                *items = wm.into_items();
            });
            if let Err(e) = &result {
                tracing::warn!(error = %e, agent, "shared working memory unavailable; using this process's");
            }
            // `f` ran on the shared copy (even if storing it back failed): done.
            if let Some(r) = out {
                return r;
            }
        }
        let f = f.expect("run once: the board did not run it");
        let mut all = self.working.locked();
        let wm = all
            .entry((project.clone(), agent.to_owned()))
            .or_insert_with(|| {
                WorkingMemory::new(self.config.working_capacity, self.config.working_tau_secs)
            });
        f(wm, now)
    }

    /// Pushes a snapshot of recall results into `agent`'s working memory as `recall` items
    /// (importance = score, expiring after `ttl_secs`); returns the items evicted.
    pub fn push_recall_snapshot(
        &self,
        project: &ProjectId,
        agent: &str,
        results: &[(u64, String, f64)],
        ttl_secs: f64,
    ) -> Vec<WorkingItem> {
        self.with_working(project, agent, |wm, now| {
            let mut evicted = Vec::new();
            for (id, content, score) in results {
                evicted.extend(wm.push(
                    WorkingItem {
                        id: *id,
                        kind: "recall".to_owned(),
                        content: content.clone(),
                        importance: score.max(1e-6),
                        expires_at: Some(now + ttl_secs),
                        vector: None,
                        last_touch: now,
                    },
                    now,
                ));
            }
            evicted
        })
    }

    fn check_dim(&self, v: &Hypervector) -> LedgerResult<()> {
        if v.dim() != self.dim {
            return Err(LedgerError::Invalid {
                what: "vector",
                reason: format!(
                    "dimension mismatch: expected {} bits, found {} bits",
                    self.dim.bits(),
                    v.dim().bits()
                ),
            });
        }
        Ok(())
    }

    fn decode(&self, bytes: &[u8]) -> LedgerResult<Hypervector> {
        Hypervector::from_le_bytes(self.dim, bytes).map_err(|_| LedgerError::Corrupt {
            what: "vector",
            detail: format!(
                "{} bytes, not the {} of a {}-bit vector",
                bytes.len(),
                self.dim.bits() / 8,
                self.dim.bits()
            ),
        })
    }

    /// Forgets the RAM state (working memories, open-episode counters) of `project`; the
    /// rows are removed by [`Ledger::forget_project`].
    pub fn forget_project_state(&self, project: &ProjectId) {
        self.working.locked().retain(|(p, _), _| p != project);
        self.open.locked().clear();
        self.topics.locked().remove(project);
        self.gists.locked().remove(project);
    }
}

/// Similarity in [−1, 1] of two vectors of equal dimension.
fn similarity(a: &Hypervector, b: &Hypervector) -> f64 {
    a.similarity(b)
}
