//! Pulse: an explicit, bounded maintenance tick with ordered phases, each with an item and a
//! time budget and a receipt; and an optional background runner that calls it on an
//! interval. No phase deletes raw events.

use crate::sync::Recover as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::Cognition;
use crate::base::ProjectId;
use crate::ledger::LedgerResult;

/// Budgets of one tick.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PulseBudget {
    /// Items each phase may process.
    pub items_per_phase: usize,
    /// Time each phase may take (checked between small batches).
    pub time_per_phase: Duration,
}

impl Default for PulseBudget {
    fn default() -> Self {
        Self {
            items_per_phase: 256,
            time_per_phase: Duration::from_millis(200),
        }
    }
}

/// What one phase did.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PhaseReceipt {
    /// The phase.
    pub phase: Phase,
    /// Items processed.
    pub items: usize,
    /// Time spent (ms).
    pub elapsed_ms: f64,
    /// What it produced.
    pub produced: String,
    /// Whether it stopped because a budget ran out.
    pub budget_exhausted: bool,
}

/// What one tick did.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PulseReceipt {
    /// The project.
    pub project: String,
    /// Events the project received since its previous tick (every event, for its first).
    #[serde(default)]
    pub new_events: u64,
    /// Phases, in order.
    pub phases: Vec<PhaseReceipt>,
    /// Total time (ms).
    pub elapsed_ms: f64,
}

/// The metric under which a tick records the project's newest event, for the next tick's
/// count of new events.
const LAST_EVENT_METRIC: &str = "pulse_last_event";

crate::base::names! {
    /// A phase of a pulse tick, named in receipts by its snake_case name.
    pub enum Phase {
        /// Expired working-memory items dropped.
        WorkingMemory = "working_memory",
        /// Episodes soft-sealed and chained.
        EpisodicChaining = "episodic_chaining",
        /// Concepts consolidated from sealed episodes.
        SemanticRefresh = "semantic_refresh",
        /// Knowledge gaps read from the query log.
        GapDetection = "gap_detection",
        /// Associations for sealed episodes.
        AssociationGeneration = "association_generation",
        /// Procedures' reliabilities refined.
        ProcedureRefinement = "procedure_refinement",
        /// Meta-memory rules evaluated.
        MetaReflection = "meta_reflection",
        /// Queued events embedded by the sentence model (the facade's phase).
        Embed = "embed",
        /// Traces placed in the tiers by strength (the facade's phase).
        Tiers = "tiers",
    }
}

/// The cognitive phases of a tick, in order (the facade adds `embed` and `tiers`).
pub const PHASES: [Phase; 7] = [
    Phase::WorkingMemory,
    Phase::EpisodicChaining,
    Phase::SemanticRefresh,
    Phase::GapDetection,
    Phase::AssociationGeneration,
    Phase::ProcedureRefinement,
    Phase::MetaReflection,
];

/// Events outside episodes the curator reads per transaction of its mark.
const LOOSE_BATCH: usize = 64;

/// Runs `step(1)` (which processes up to one item and returns how many it did) until
/// `items` are done, `deadline` has passed, or there is nothing left; returns what it did
/// and whether a budget stopped it. One item at a time, so a phase overruns its time by at
/// most one item.
fn bounded(
    items: usize,
    deadline: Instant,
    mut step: impl FnMut(usize) -> LedgerResult<usize>,
) -> LedgerResult<(usize, bool)> {
    let mut done = 0;
    loop {
        if done >= items || Instant::now() >= deadline {
            return Ok((done, true));
        }
        let n = step(1)?;
        done += n;
        if n == 0 {
            return Ok((done, false));
        }
    }
}

impl Cognition {
    /// One pulse tick for `project`: every phase in order, each bounded by `budget`.
    ///
    /// # Errors
    /// SQLite errors (earlier phases' work stays committed).
    pub fn tick(&self, project: &ProjectId, budget: PulseBudget) -> LedgerResult<PulseReceipt> {
        let start = Instant::now();
        let new_events = self.events_since_last_tick(project)?;
        let mut phases = Vec::with_capacity(PHASES.len());
        for phase in PHASES {
            let t = Instant::now();
            // One deadline for everything the phase does.
            let deadline = t + budget.time_per_phase;
            let items = budget.items_per_phase;
            let (items, exhausted, produced) = match phase {
                Phase::WorkingMemory => {
                    let mut expired = 0;
                    if let Some(board) = &self.board {
                        match board.agents(project) {
                            Ok(agents) => {
                                for agent in agents {
                                    expired += self.with_working(project, &agent, |wm, now| {
                                        wm.expire(now).len()
                                    });
                                }
                            }
                            Err(e) => {
                                tracing::warn!(error = %e, "shared working memories not expired")
                            }
                        }
                    }
                    let now = self.now_secs();
                    let mut all = self.working.locked();
                    for ((p, _), wm) in all.iter_mut() {
                        if p == project {
                            expired += wm.expire(now).len();
                        }
                    }
                    (expired, false, format!("{expired} expired items removed"))
                }
                Phase::EpisodicChaining => {
                    let (n, ex) = bounded(items, deadline, |n| self.seal_idle(project, n))?;
                    (n, ex, format!("{n} idle episodes soft-sealed or sealed"))
                }
                Phase::SemanticRefresh => {
                    let (n, created) = self.consolidate_until(project, items, Some(deadline))?;
                    let mut candidates = 0;
                    let (m, ex2) = bounded(items.saturating_sub(n), deadline, |k| {
                        let curated = self.curate(project, k)?;
                        candidates += curated.iter().map(|c| c.candidates.len()).sum::<usize>();
                        Ok(curated.len())
                    })?;
                    // Events outside episodes, in batches, with what the budget leaves.
                    let (mut loose, mut loose_candidates, mut ex3) = (0, 0, false);
                    while loose < items.saturating_sub(n + m) {
                        if Instant::now() >= deadline {
                            ex3 = true;
                            break;
                        }
                        let batch = LOOSE_BATCH.min(items - n - m - loose);
                        let (read, made) = self.curate_loose(project, batch)?;
                        loose += read;
                        loose_candidates += made.len();
                        if read < batch {
                            break;
                        }
                    }
                    ex3 |= loose >= items.saturating_sub(n + m) && items > n + m;
                    let summaries = self
                        .propose_concept_summaries_until(
                            project,
                            items.saturating_sub(n + m + loose),
                            Some(deadline),
                        )?
                        .len();
                    let pending = self.unconsolidated(project)?;
                    (
                        n + m + loose + summaries,
                        pending > 0 || ex2 || ex3,
                        format!(
                            "{n} episodes consolidated ({created} new concepts); {m} curated ({candidates} candidates); {loose} events outside episodes curated ({loose_candidates} candidates); {summaries} concept summaries proposed; {pending} episodes left to consolidate"
                        ),
                    )
                }
                Phase::GapDetection => {
                    let gaps = self.knowledge_gaps(project, budget.items_per_phase)?;
                    self.record_metric(project, "gap_count", gaps.len() as f64, "tick")?;
                    (gaps.len(), false, format!("{} gaps", gaps.len()))
                }
                Phase::AssociationGeneration => {
                    let (n, ex) = bounded(items, deadline, |n| {
                        Ok(self.generate_associations(project, n)?.len())
                    })?;
                    (n, ex, format!("{n} candidate associations"))
                }
                Phase::ProcedureRefinement => {
                    let weak = self.unreliable_procedures(project, 5, 0.3)?;
                    let names: Vec<&str> = weak.iter().map(|p| p.name.as_str()).collect();
                    (
                        weak.len(),
                        false,
                        format!("unreliable procedures: {names:?}"),
                    )
                }
                // Meta-reflection (the facade's own phases are never in `PHASES`).
                _ => {
                    let raised = self.reflect(project)?;
                    (
                        raised.len(),
                        false,
                        format!("{} proposals raised", raised.len()),
                    )
                }
            };
            phases.push(PhaseReceipt {
                phase,
                items,
                elapsed_ms: t.elapsed().as_secs_f64() * 1e3,
                produced,
                budget_exhausted: exhausted,
            });
        }
        Ok(PulseReceipt {
            project: project.to_string(),
            new_events,
            phases,
            elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// How many events `project` received since its previous tick, recording its newest
    /// event for the next (in `metrics`, so any process's next tick counts from it).
    fn events_since_last_tick(&self, project: &ProjectId) -> LedgerResult<u64> {
        let p = project.as_str();
        let (last, newest, since) = self.ledger.reading(|rows| {
            let last = rows.latest_metric(p, LAST_EVENT_METRIC)? as i64;
            let (newest, since) = rows.events_after(p, last)?;
            Ok((last, newest, since))
        })?;
        if newest > last {
            let now = self.ledger.now_ms();
            self.ledger.writing(|rows| {
                rows.put_metric(p, (LAST_EVENT_METRIC, newest as f64), "tick", now)
            })?;
        }
        Ok(since)
    }
}

/// A background thread calling [`Cognition::tick`] for some projects on an interval. Only
/// runs when started explicitly (the profile opts in); stops on [`stop`](Self::stop) or drop.
pub struct PulseRunner {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    receipts: Arc<Mutex<Vec<PulseReceipt>>>,
}

impl std::fmt::Debug for PulseRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PulseRunner").finish_non_exhaustive()
    }
}

impl PulseRunner {
    /// Starts ticking `projects` every `interval`.
    pub fn start(
        cognition: Arc<Cognition>,
        projects: Vec<ProjectId>,
        interval: Duration,
        budget: PulseBudget,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let receipts = Arc::new(Mutex::new(Vec::new()));
        let (s, r) = (stop.clone(), receipts.clone());
        let handle = std::thread::Builder::new()
            .name("hypermem-pulse".into())
            .spawn(move || {
                while !s.load(Ordering::Acquire) {
                    for p in &projects {
                        match cognition.tick(p, budget) {
                            Ok(receipt) => r.locked().push(receipt),
                            Err(e) => tracing::warn!(project = %p, error = %e, "pulse tick failed"),
                        }
                    }
                    let until = Instant::now() + interval;
                    while !s.load(Ordering::Acquire) && Instant::now() < until {
                        std::thread::park_timeout(until.saturating_duration_since(Instant::now()));
                    }
                }
            })
            .expect("spawn the pulse thread");
        Self {
            stop,
            handle: Some(handle),
            receipts,
        }
    }

    /// Receipts of the ticks so far.
    pub fn receipts(&self) -> Vec<PulseReceipt> {
        self.receipts.locked().clone()
    }

    /// Stops the thread and waits for it.
    pub fn stop(mut self) -> Vec<PulseReceipt> {
        self.halt();
        self.receipts()
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

impl Drop for PulseRunner {
    fn drop(&mut self) {
        self.halt();
    }
}
