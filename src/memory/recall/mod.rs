//! Recall on the `Memory` facade: the request and result types and the pipeline that
//! answers them, in stages one can read in order:
//!
//! - [`plan`]: the read-only [`Context`](plan::Context) of the project and the
//!   [`Plan`](plan::Plan) compiled once per request (terms, query vectors, baselines,
//!   floors);
//! - [`sources`]: each candidate source reads the context and the plan and returns a
//!   ranked list; fusion combines them ([`crate::recall::fusion`]);
//! - [`stages`]: filters, gap and floor, folding, priors, order, supersession, directive
//!   slots, each with its switch;
//! - [`pack`]: context packs, one more consumer of the same compiled query.
//!
//! See `docs/ARCHITECTURE.md` ("memory/, recall/, bin/") for the design and
//! `docs/EXPERIMENTS.md` for the measurements behind each stage.

mod pack;
mod plan;
mod sources;
mod stages;

use crate::cognition::RecallTrace;
use crate::ledger::{Event, EventId};
use crate::recall::query::CompiledQuery;
use crate::recall::{self, Fused};
use crate::store::{ProjectId, VectorId};
use crate::sync::Recover as _;
use crate::{Memory, Result};

/// A recalled memory with its score breakdown and source anchor.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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
    /// `(key, version)` of the superseded belief this event is evidence of, when it backs
    /// no current belief: what the user said was later corrected.
    pub superseded_belief: Option<(String, u64)>,
    /// Other events with the same text once folded (Unicode form, case, whitespace),
    /// collapsed into this item.
    pub duplicates: Vec<EventId>,
    /// It has no evidence of its own: it is here as the turn next to a lexical match or by
    /// a synapse to one (it fills places the others leave; a pack carries it as
    /// associative).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub associative: bool,
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
    /// The query's dense embedding (the model the project's events were embedded with):
    /// searched in the project's semantic space. Without it, the profile's static model
    /// embeds the query text, if there is one.
    pub embedding: Option<&'a [f32]>,
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
            embedding: None,
        }
    }
}

/// Recall results and the candidates the filters suppressed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RecallResult {
    /// Results, best first.
    pub items: Vec<RecallItem>,
    /// Suppressed candidates with the reason.
    pub suppressed: Vec<(EventId, String)>,
    /// The query's time hint ("yesterday", "last week", an ISO date) was ignored because
    /// none of the candidates happened in its window (an explicit `since:` / `until:`
    /// always applies).
    pub time_hint_ignored: bool,
    /// Quoted phrases that no candidate holds verbatim: instead of filtering every
    /// candidate out, they only lift what holds their words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phrases_ignored: Vec<String>,
    /// With a sentence model (embedding off the write path): how many of the results have
    /// no sentence vector yet (still queued for the background embedder), so the semantic
    /// source could not score them. Absent without a sentence model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unembedded: Option<usize>,
}

impl Memory {
    /// The `k` memories of `project` most relevant to `query` (see
    /// [`recall_with`](Self::recall_with)).
    ///
    /// # Errors
    /// Store, ledger and SQLite errors.
    pub fn recall(&self, project: &ProjectId, query: &str, k: usize) -> Result<Vec<RecallItem>> {
        Ok(self
            .recall_with(project, &RecallQuery::new(query, k))?
            .items)
    }

    /// Recall: the request compiles into a [`Plan`](plan::Plan); the **sources** (lexical
    /// BM25, word pairs, phrases, HDC vector, semantic, episodes; then ripple over synapses
    /// from the best of them) return ranked lists that **fusion** combines (per-query
    /// normalization, bounded neighbour and session evidence, a monotone order); the
    /// **stages** then filter (governance filters, knowledge gap, relevance floor), fold
    /// equal texts, add priors, order, supersede and give directives their slots. Every
    /// refused candidate is listed with its reason. Recall does not change later rankings
    /// unless the profile opts in (`[recall] learn`).
    ///
    /// # Errors
    /// As [`recall`](Self::recall).
    pub fn recall_with(&self, project: &ProjectId, rq: &RecallQuery<'_>) -> Result<RecallResult> {
        let compiled = self.compile_request(project, rq)?;
        self.recall_compiled(project, rq, &compiled)
    }

    /// Validates a recall request and compiles its query (filters, phrases, time hints),
    /// once per request: a pack reads the same compiled query as its recall.
    fn compile_request(
        &self,
        project: &ProjectId,
        rq: &RecallQuery<'_>,
    ) -> Result<recall::query::CompiledQuery> {
        if rq.k > super::MAX_RECALL_K {
            return Err(crate::ledger::LedgerError::Invalid {
                what: "k",
                reason: format!(
                    "{} results were asked for; one recall returns at most {}",
                    rq.k,
                    super::MAX_RECALL_K
                ),
            }
            .into());
        }
        if rq.k == 0 {
            return Err(crate::ledger::LedgerError::Invalid {
                what: "k",
                reason: "0 results were asked for; ask for at least 1".to_owned(),
            }
            .into());
        }
        let compiled = recall::query::compile(rq.text, self.ledger.now_ms())?;
        // Filters alone rank nothing: a recall needs words, a phrase or an embedding.
        if compiled.text.trim().is_empty() && compiled.phrases.is_empty() && rq.embedding.is_none()
        {
            return Err(crate::ledger::LedgerError::Invalid {
                what: "query",
                reason: if rq.text.trim().is_empty() {
                    "the query is empty: give the words to recall by".to_owned()
                } else {
                    format!(
                        "`{}` holds only filters: give the words to recall by as well",
                        rq.text.trim()
                    )
                },
            }
            .into());
        }
        self.require_project(project)?;
        self.recover_warm()?;
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
        Ok(compiled)
    }

    /// [`recall_with`](Self::recall_with) on a validated, compiled request.
    fn recall_compiled(
        &self,
        project: &ProjectId,
        rq: &RecallQuery<'_>,
        compiled: &CompiledQuery,
    ) -> Result<RecallResult> {
        let cx = self.context(project)?;
        let plan = self.plan(&cx, rq, compiled)?;
        let mut run = stages::Run::fetch(&cx, &plan, sources::gather(&cx, &plan)?)?;
        for stage in stages::STAGES {
            if stage.on(&cx.settings, &plan) {
                stage.apply(&cx, &plan, &mut run)?;
            }
        }
        run.truncate(rq.k);
        let items = self.items(&cx, &plan, &mut run)?;
        self.trace(&cx, &plan, &run, &items)?;
        let unembedded = if self.embedder.deferred() {
            let space = self.space(project)?;
            let space = crate::sync::RecoverRw::reading(&*space);
            Some(
                items
                    .iter()
                    .filter(|i| !space.contains(i.event.id.0))
                    .count(),
            )
        } else {
            None
        };
        Ok(RecallResult {
            items,
            suppressed: run.suppressed,
            time_hint_ignored: run.hint_ignored,
            phrases_ignored: run.phrases_ignored,
            unembedded,
        })
    }

    /// The run's ranking as recall items, each with its context window when asked for.
    fn items(
        &self,
        cx: &plan::Context<'_>,
        plan: &plan::Plan<'_>,
        run: &mut stages::Run,
    ) -> Result<Vec<RecallItem>> {
        let width = plan.rq.context;
        let mut items = Vec::with_capacity(run.ranked.len());
        for r in std::mem::take(&mut run.ranked) {
            let id = r.fused.id;
            let context = if width > 0 {
                Some(
                    cx.ledger
                        .event_context(cx.project, r.event.id, width, width)?,
                )
            } else {
                None
            };
            items.push(RecallItem {
                superseded_belief: run.outdated.remove(&id),
                context,
                supersedes: run.supersedes.get(&id).map(|&id| EventId(id)),
                similarity: run.similarity.get(&id).copied(),
                duplicates: run.duplicates.remove(&id).unwrap_or_default(),
                associative: r.associative,
                event: r.event,
                fused: r.fused,
            });
        }
        Ok(items)
    }

    /// What a recall leaves behind, none of which changes its ranking unless the profile
    /// opts in: the top results count an access (long-term potentiation, for tier
    /// placement; in RAM, persisted with the feedback batch), and the query is logged for
    /// knowledge gaps, with the results' synapses strengthened under `[recall] learn`.
    fn trace(
        &self,
        cx: &plan::Context<'_>,
        plan: &plan::Plan<'_>,
        run: &stages::Run,
        items: &[RecallItem],
    ) -> Result<()> {
        let project = cx.project;
        let best = items
            .iter()
            .filter_map(|i| i.similarity)
            .fold(0.0f64, f64::max);
        let top: Vec<u64> = items.iter().take(5).map(|i| i.event.id.0).collect();
        let accessed: Vec<VectorId> = top.iter().map(|&id| VectorId(id)).collect();
        self.tiers.touch(project, &accessed);
        let pending = {
            let mut feedback = self.feedback.locked();
            feedback.push(RecallTrace {
                project: project.clone(),
                query: plan.query().to_owned(),
                best_similarity: best,
                // Nothing with evidence of its own: a question the memory cannot answer.
                gap: !run.answered && !plan.query().trim().is_empty(),
                hits: top,
                strengthen: self.profile.recall.learn,
                at: self.ledger.now_ms(),
            });
            feedback.len()
        };
        if self.feedback_now(pending) {
            self.flush_feedback()?;
        }
        Ok(())
    }
}
