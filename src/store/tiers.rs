//! [`TierManager`]: places each memory trace by its LTP strength and searches every tier.
//!
//! Strength follows `S = I · ln(1 + A) · e^(−λ·T)` (importance `I`, accesses `A`, seconds
//! since the last access `T`). Storing a vector counts as its first access, so a new trace
//! starts at `I · ln 2`. Every trace has one durable home (warm or cold); the hot tier holds
//! RAM copies of the strongest traces. [`TierManager::rebalance`] promotes traces whose
//! strength reaches `promote` into hot (re-homing cold ones to warm), drops hot copies below
//! `demote`, and moves warm traces below `cold` to the cold tier. Every tier is searched, so
//! a demoted memory is slower to reach, never invisible.
//!
//! Trace statistics live in RAM for now; on open they are rebuilt from the durable tiers
//! with default importance (they move to the SQLite ledger with the memory-trace table).

use crate::sync::RecoverRw as _;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use hdv::{HvRef, Hypervector};

use super::error::StoreResult;
use super::{Hit, HotTier, ProjectId, SearchRequest, VectorId, VectorTier};
use crate::clock::Clock;

/// The LTP strength formula.
#[derive(Debug, Clone, Copy)]
pub struct Ltp;

impl Ltp {
    /// `S = I · ln(1 + A) · e^(−λ·T)`; a negative age counts as 0.
    pub fn strength(importance: f64, accesses: u64, age_secs: f64, lambda: f64) -> f64 {
        importance * (1.0 + accesses as f64).ln() * (-lambda * age_secs.max(0.0)).exp()
    }
}

/// Thresholds and decay of the tier manager (from the profile).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TierPolicy {
    /// Decay rate λ per second.
    pub lambda: f64,
    /// Strength at or above which a trace is copied into hot.
    pub promote: f64,
    /// Strength below which a hot copy is dropped.
    pub demote: f64,
    /// Strength below which a warm trace moves to cold.
    pub cold: f64,
}

impl Default for TierPolicy {
    fn default() -> Self {
        Self {
            lambda: 1.0 / (7.0 * 86_400.0),
            promote: 1.5,
            demote: 0.5,
            cold: 0.1,
        }
    }
}

/// Where a trace's durable copy lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    /// RAM (only ever a copy).
    Hot,
    /// The warm durable tier.
    Warm,
    /// The cold durable tier.
    Cold,
}

/// Warm → cold moves written per synced slice in a rebalance.
const COLD_SLICE: usize = 64;

/// Bookkeeping of one stored memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Importance `I`.
    pub importance: f64,
    /// Accesses `A` (storing counts as the first).
    pub accesses: u64,
    /// Time of the last access, in clock seconds.
    pub last_access: f64,
    /// Durable home (warm or cold).
    pub home: Tier,
    /// Whether a copy is in the hot tier.
    pub in_hot: bool,
}

/// What a [`TierManager::rebalance`] moved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rebalance {
    /// Copied into hot.
    pub promoted: usize,
    /// Hot copies dropped.
    pub demoted_from_hot: usize,
    /// Moved from warm to cold.
    pub demoted_to_cold: usize,
    /// Moved from cold back to warm (on promotion).
    pub rehomed_to_warm: usize,
    /// Moves still due when the move or time budget ran out (done by a later pass).
    pub left: usize,
}

/// LTP statistics shared by the processes of a deployment (the standard profile keeps them
/// in Redis beside the warm vectors), so a memory recalled through one process is
/// potentiated for all.
pub trait SharedTraces: Send + Sync {
    /// Counts one access at `now` for each `(id, base)`: an id the board does not know yet
    /// starts from `base` accesses (what this process knew). Returns each id's total.
    ///
    /// # Errors
    /// The board's service is unavailable.
    fn touch(
        &self,
        project: &ProjectId,
        items: &[(VectorId, u64)],
        now: f64,
    ) -> StoreResult<Vec<u64>>;

    /// `(id, accesses, last access)` of every id of `project` the board knows.
    ///
    /// # Errors
    /// The board's service is unavailable.
    fn pull(&self, project: &ProjectId) -> StoreResult<Vec<(VectorId, u64, f64)>>;
}

/// Hot + warm + cold tiers with LTP-driven placement.
pub struct TierManager {
    /// Where the accesses of every process add up, if the deployment shares them.
    board: Option<Arc<dyn SharedTraces>>,
    /// Warm and cold are one tier (the scale profile's Qdrant, the home of every vector):
    /// placement only moves hot copies, and the tier is searched once.
    single_home: bool,
    hot: HotTier,
    warm: Arc<dyn VectorTier>,
    cold: Arc<dyn VectorTier>,
    policy: TierPolicy,
    clock: Arc<dyn Clock>,
    traces: RwLock<HashMap<ProjectId, HashMap<VectorId, Trace>>>,
}

impl std::fmt::Debug for TierManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TierManager")
            .field("hot", &self.hot)
            .field("warm", &self.warm.name())
            .field("cold", &self.cold.name())
            .field("policy", &self.policy)
            .finish()
    }
}

impl TierManager {
    /// Manages `hot`, `warm` and `cold`; traces are rebuilt from what warm and cold hold.
    pub fn new(
        hot: HotTier,
        warm: Arc<dyn VectorTier>,
        cold: Arc<dyn VectorTier>,
        policy: TierPolicy,
        clock: Arc<dyn Clock>,
    ) -> StoreResult<Self> {
        let now = clock.now();
        let mut traces: HashMap<ProjectId, HashMap<VectorId, Trace>> = HashMap::new();
        let homes: &[(&Arc<dyn VectorTier>, Tier)] = if Arc::ptr_eq(&warm, &cold) {
            &[(&warm, Tier::Warm)]
        } else {
            &[(&warm, Tier::Warm), (&cold, Tier::Cold)]
        };
        for &(tier, home) in homes {
            for project in tier.list_projects()? {
                let map = traces.entry(project.clone()).or_default();
                for id in tier.list_ids(&project)? {
                    map.insert(
                        id,
                        Trace {
                            importance: 1.0,
                            accesses: 1,
                            last_access: now,
                            home,
                            in_hot: false,
                        },
                    );
                }
            }
        }
        Ok(Self {
            board: None,
            single_home: Arc::ptr_eq(&warm, &cold),
            hot,
            warm,
            cold,
            policy,
            clock,
            traces: RwLock::new(traces),
        })
    }

    /// Shares accesses through `board`: every touch is counted there too, and
    /// [`pull_shared`](Self::pull_shared) (run before each rebalance) takes in what other
    /// processes counted.
    #[must_use]
    pub fn with_shared_traces(mut self, board: Arc<dyn SharedTraces>) -> Self {
        self.board = Some(board);
        self
    }

    /// Takes in the accesses other processes counted on the shared board (a no-op without
    /// one): each trace gets the larger of its own and the board's count and last access.
    /// Returns how many traces changed.
    ///
    /// # Errors
    /// The board is unavailable.
    pub fn pull_shared(&self, project: &ProjectId) -> StoreResult<usize> {
        let Some(board) = &self.board else {
            return Ok(0);
        };
        let shared = board.pull(project)?;
        let mut traces = self.traces.writing();
        let Some(map) = traces.get_mut(project) else {
            return Ok(0);
        };
        let mut changed = 0;
        for (id, accesses, last) in shared {
            if let Some(t) = map.get_mut(&id)
                && (accesses > t.accesses || last > t.last_access)
            {
                t.accesses = t.accesses.max(accesses);
                t.last_access = t.last_access.max(last);
                changed += 1;
            }
        }
        Ok(changed)
    }

    /// The policy.
    pub fn policy(&self) -> TierPolicy {
        self.policy
    }

    /// The hot tier.
    pub fn hot(&self) -> &HotTier {
        &self.hot
    }

    /// Stores a vector durably (warm) with an importance; it counts as one access.
    ///
    /// # Errors
    /// The warm tier's errors (dimension, duplicate id, I/O).
    pub fn insert(
        &self,
        project: &ProjectId,
        id: VectorId,
        vector: HvRef<'_>,
        importance: f64,
    ) -> StoreResult<()> {
        self.insert_batch(project, &[(id, vector)], importance)
    }

    /// Stores vectors durably (warm), all with the same importance.
    ///
    /// # Errors
    /// The warm tier's errors; ids already stored in the cold tier are duplicates too.
    pub fn insert_batch(
        &self,
        project: &ProjectId,
        items: &[(VectorId, HvRef<'_>)],
        importance: f64,
    ) -> StoreResult<()> {
        if let Some((id, _)) = items
            .iter()
            .find(|(id, _)| self.trace(project, *id).is_some())
        {
            return Err(super::StoreError::DuplicateId {
                project: project.clone(),
                id: *id,
            });
        }
        self.warm.insert_batch(project, items)?;
        let now = self.clock.now();
        let mut traces = self.traces.writing();
        let map = traces.entry(project.clone()).or_default();
        for (id, _) in items {
            map.insert(
                *id,
                Trace {
                    importance,
                    accesses: 1,
                    last_access: now,
                    home: Tier::Warm,
                    in_hot: false,
                },
            );
        }
        Ok(())
    }

    /// The trace of a stored vector.
    pub fn trace(&self, project: &ProjectId, id: VectorId) -> Option<Trace> {
        self.traces.reading().get(project)?.get(&id).cloned()
    }

    /// Gives untraced `ids` a new trace homed in the warm tier (importance 1, one access
    /// now): vectors another process stored in a shared warm tier.
    pub fn adopt(&self, project: &ProjectId, ids: &[VectorId]) {
        if ids.is_empty() {
            return;
        }
        let now = self.clock.now();
        let mut traces = self.traces.writing();
        let map = traces.entry(project.clone()).or_default();
        for id in ids {
            map.entry(*id).or_insert(Trace {
                importance: 1.0,
                accesses: 1,
                last_access: now,
                home: Tier::Warm,
                in_hot: false,
            });
        }
    }

    /// Ids whose durable home is the warm tier, ascending.
    pub fn warm_homed(&self, project: &ProjectId) -> Vec<VectorId> {
        let mut ids: Vec<VectorId> = self
            .traces
            .reading()
            .get(project)
            .map(|m| {
                m.iter()
                    .filter(|(_, t)| t.home == Tier::Warm)
                    .map(|(id, _)| *id)
                    .collect()
            })
            .unwrap_or_default();
        ids.sort_unstable();
        ids
    }

    /// The current strength of a trace.
    pub fn strength(&self, project: &ProjectId, id: VectorId) -> Option<f64> {
        let t = self.trace(project, id)?;
        Some(self.strength_of(&t, self.clock.now()))
    }

    fn strength_of(&self, t: &Trace, now: f64) -> f64 {
        Ltp::strength(
            t.importance,
            t.accesses,
            now - t.last_access,
            self.policy.lambda,
        )
    }

    /// Restores the statistics of a stored trace (persisted by the caller: importance,
    /// accesses, last access in clock seconds); returns whether the trace exists.
    pub fn restore(
        &self,
        project: &ProjectId,
        id: VectorId,
        importance: f64,
        accesses: u64,
        last_access: f64,
    ) -> bool {
        let mut traces = self.traces.writing();
        match traces.get_mut(project).and_then(|m| m.get_mut(&id)) {
            Some(t) => {
                t.importance = importance;
                t.accesses = accesses.max(1);
                t.last_access = last_access;
                true
            }
            None => false,
        }
    }

    /// Records an access (a recall or use): `A += 1`, last access = now; with a shared
    /// board the access is counted there too and the trace takes the board's total. A
    /// board that cannot be reached costs only the sharing of this access (logged): the
    /// statistics are derived, never a reason to fail a recall.
    pub fn touch(&self, project: &ProjectId, ids: &[VectorId]) {
        let now = self.clock.now();
        let mut seeds = Vec::with_capacity(ids.len());
        {
            let mut traces = self.traces.writing();
            if let Some(map) = traces.get_mut(project) {
                for id in ids {
                    if let Some(t) = map.get_mut(id) {
                        seeds.push((*id, t.accesses));
                        t.accesses += 1;
                        t.last_access = now;
                    }
                }
            }
        }
        let Some(board) = &self.board else {
            return;
        };
        if seeds.is_empty() {
            return;
        }
        match board.touch(project, &seeds, now) {
            Ok(totals) => {
                let mut traces = self.traces.writing();
                if let Some(map) = traces.get_mut(project) {
                    for ((id, _), total) in seeds.iter().zip(totals) {
                        if let Some(t) = map.get_mut(id) {
                            t.accesses = t.accesses.max(total);
                        }
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "shared access counts not updated"),
        }
    }

    /// The vector, from the fastest tier holding it.
    ///
    /// # Errors
    /// Tier I/O errors.
    pub fn get(&self, project: &ProjectId, id: VectorId) -> StoreResult<Option<Hypervector>> {
        Ok(self.get_many(project, &[id])?.pop().flatten())
    }

    /// The vectors `ids`, in the order asked, each from the fastest tier holding it: its hot
    /// copy, else its durable home, read for all of them in one call per tier (one round
    /// trip to a remote tier). An untraced id has none.
    ///
    /// # Errors
    /// Tier I/O errors.
    pub fn get_many(
        &self,
        project: &ProjectId,
        ids: &[VectorId],
    ) -> StoreResult<Vec<Option<Hypervector>>> {
        let mut out: Vec<Option<Hypervector>> = vec![None; ids.len()];
        let (mut warm, mut cold): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
        for (i, &id) in ids.iter().enumerate() {
            let Some(t) = self.trace(project, id) else {
                continue;
            };
            if t.in_hot
                && let Some(v) = self.hot.get(project, id)?
            {
                out[i] = Some(v);
                continue;
            }
            match t.home {
                Tier::Cold => cold.push(i),
                _ => warm.push(i),
            }
        }
        for (tier, at) in [(&self.warm, warm), (&self.cold, cold)] {
            if at.is_empty() {
                continue;
            }
            let asked: Vec<VectorId> = at.iter().map(|&i| ids[i]).collect();
            for (i, v) in at.into_iter().zip(tier.get_many(project, &asked)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// Exact search across hot, warm and cold (see [`super::Exact`]).
    ///
    /// # Errors
    /// Dimension mismatch or tier errors.
    pub fn search(
        &self,
        project: &ProjectId,
        request: &SearchRequest<'_>,
    ) -> StoreResult<Vec<Hit>> {
        let all: [&dyn VectorTier; 3] = [&self.hot, self.warm.as_ref(), self.cold.as_ref()];
        let tiers = if self.single_home {
            &all[..2]
        } else {
            &all[..]
        };
        super::Exact::search(tiers, project, request)
    }

    /// Deletes a vector from every tier; returns whether it existed.
    ///
    /// # Errors
    /// Tier I/O errors.
    pub fn delete(&self, project: &ProjectId, id: VectorId) -> StoreResult<bool> {
        let a = self.hot.delete(project, id)?;
        let b = self.warm.delete(project, id)?;
        let c = !self.single_home && self.cold.delete(project, id)?;
        if let Some(map) = self.traces.writing().get_mut(project) {
            map.remove(&id);
        }
        Ok(a || b || c)
    }

    /// Removes every vector of `project` from every tier; returns the number of traces.
    ///
    /// # Errors
    /// Tier I/O errors.
    pub fn drop_project(&self, project: &ProjectId) -> StoreResult<usize> {
        self.hot.drop_project(project)?;
        self.warm.drop_project(project)?;
        if !self.single_home {
            self.cold.drop_project(project)?;
        }
        Ok(self.traces.writing().remove(project).map_or(0, |m| m.len()))
    }

    /// Forgets this process's traces and hot copies of `project` without touching the
    /// durable tiers (a view whose writer erased the project).
    pub fn forget_local(&self, project: &ProjectId) {
        if let Err(e) = self.hot.drop_project(project) {
            tracing::warn!(error = %e, "dropping hot copies failed");
        }
        self.traces.writing().remove(project);
    }

    /// Number of traces in `project`.
    pub fn len(&self, project: &ProjectId) -> usize {
        self.traces.reading().get(project).map_or(0, HashMap::len)
    }

    /// How many memories of `project` live in each tier: `(hot copies, warm, cold)`.
    pub fn census(&self, project: &ProjectId) -> (usize, usize, usize) {
        let traces = self.traces.reading();
        traces.get(project).map_or((0, 0, 0), |m| {
            m.values().fold((0, 0, 0), |(h, w, c), t| {
                (
                    h + usize::from(t.in_hot),
                    w + usize::from(t.home == Tier::Warm),
                    c + usize::from(t.home == Tier::Cold),
                )
            })
        })
    }

    /// Whether `project` has no trace.
    pub fn is_empty(&self, project: &ProjectId) -> bool {
        self.len(project) == 0
    }

    /// Writes gathered warm → cold moves: the cold copies durable first (one synced
    /// append), then the warm ones deleted (one sync), so a vector never has zero copies.
    fn demote_to_cold(
        &self,
        project: &ProjectId,
        to_cold: &mut Vec<(VectorId, hdv::Hypervector)>,
    ) -> StoreResult<()> {
        if to_cold.is_empty() {
            return Ok(());
        }
        let batch: Vec<(VectorId, hdv::HvRef<'_>)> =
            to_cold.iter().map(|(id, v)| (*id, v.view())).collect();
        self.cold.insert_batch(project, &batch)?;
        let ids: Vec<VectorId> = to_cold.iter().map(|(id, _)| *id).collect();
        self.warm.delete_batch(project, &ids)?;
        to_cold.clear();
        Ok(())
    }

    /// Applies the policy to every trace of `project` (strongest first for hot places).
    ///
    /// # Errors
    /// Tier I/O errors; a failure leaves every vector in at least one durable tier.
    pub fn rebalance(&self, project: &ProjectId) -> StoreResult<Rebalance> {
        self.rebalance_bounded(project, usize::MAX, None)
    }

    /// [`rebalance`](Self::rebalance) stopping after `max_moves` moves (a bounded pulse
    /// phase). Traces are visited strongest first, so promotions come before demotions and a
    /// later call continues with what this one left.
    ///
    /// # Errors
    /// As [`rebalance`](Self::rebalance).
    pub fn rebalance_bounded(
        &self,
        project: &ProjectId,
        max_moves: usize,
        deadline: Option<std::time::Instant>,
    ) -> StoreResult<Rebalance> {
        self.pull_shared(project)?;
        let now = self.clock.now();
        let mut report = Rebalance::default();
        let mut ranked: Vec<(VectorId, f64, Trace)> = self
            .traces
            .reading()
            .get(project)
            .map(|m| {
                m.iter()
                    .map(|(id, t)| (*id, self.strength_of(t, now), t.clone()))
                    .collect()
            })
            .unwrap_or_default();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        // Warm → cold moves are gathered and written as one batch (one synced append)
        // after the loop; the warm copies are deleted only once the cold ones are durable.
        let mut to_cold: Vec<(VectorId, hdv::Hypervector)> = Vec::new();
        let mut updates: Vec<(VectorId, Trace)> = Vec::new();
        let due = |s: f64, t: &Trace| {
            if s >= self.policy.promote {
                t.home == Tier::Cold || !t.in_hot
            } else {
                (t.in_hot && s < self.policy.demote)
                    || (!self.single_home && t.home == Tier::Warm && s < self.policy.cold)
            }
        };
        for (i, (id, s, t)) in ranked.iter().enumerate() {
            let moves = report.promoted
                + report.demoted_from_hot
                + report.demoted_to_cold
                + report.rehomed_to_warm;
            if moves >= max_moves || deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                report.left = ranked[i..].iter().filter(|(_, s, t)| due(*s, t)).count();
                break;
            }
            let (id, s) = (*id, *s);
            let mut t2 = t.clone();
            if s >= self.policy.promote {
                if t.home == Tier::Cold {
                    // Durable copy first, then remove the old one: never zero copies.
                    if let Some(v) = self.cold.get(project, id)? {
                        self.warm.insert(project, id, v.view())?;
                        self.cold.delete(project, id)?;
                        t2.home = Tier::Warm;
                        report.rehomed_to_warm += 1;
                    }
                }
                if !t.in_hot
                    && self.hot.total_len() < self.hot.capacity()
                    && let Some(v) = self.warm.get(project, id)?
                {
                    self.hot.insert(project, id, v.view())?;
                    t2.in_hot = true;
                    report.promoted += 1;
                }
            } else {
                if t.in_hot && s < self.policy.demote {
                    self.hot.delete(project, id)?;
                    t2.in_hot = false;
                    report.demoted_from_hot += 1;
                }
                if !self.single_home
                    && t.home == Tier::Warm
                    && s < self.policy.cold
                    && let Some(v) = self.warm.get(project, id)?
                {
                    to_cold.push((id, v));
                    t2.home = Tier::Cold;
                    report.demoted_to_cold += 1;
                }
            }
            if t2 != *t {
                updates.push((id, t2));
            }
            // Warm → cold moves are written a slice at a time (one synced append and one
            // synced deletion each), so the deadline checked per item holds for them too.
            if to_cold.len() >= COLD_SLICE {
                self.demote_to_cold(project, &mut to_cold)?;
            }
        }
        self.demote_to_cold(project, &mut to_cold)?;
        if let Some(m) = self.traces.writing().get_mut(project) {
            for (id, t2) in updates {
                if let Some(slot) = m.get_mut(&id) {
                    slot.home = t2.home;
                    slot.in_hot = t2.in_hot;
                }
            }
        }
        Ok(report)
    }
}
