//! The facade's reads: recall and context packs. Here a request is validated and compiled,
//! the project's read-only [`Context`] is built from the memory's parts, [`crate::recall`]
//! answers, and what a recall leaves behind (access counts, the query log, synapses under
//! `[recall] learn`) is recorded.

use crate::base::{ProjectId, VectorId};
use crate::cognition::RecallTrace;
use crate::recall::query::CompiledQuery;
use crate::recall::{self, Context, Pack, RecallItem, RecallQuery, RecallResult};
use crate::sync::Recover as _;
use crate::{Memory, Result};

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

    /// Read-your-writes: returns once the ledger this node reads has reached the sequence
    /// `rq.at_least` (at once without one), polling with a growing pause; after `rq.wait`
    /// without it, [`crate::Error::NotCaughtUp`]. What the ledger holds, recall reads: a
    /// writer indexes its own appends as it makes them, and a view catches up with the
    /// ledger at every read.
    fn await_sequence(&self, rq: &RecallQuery<'_>) -> Result<()> {
        use std::time::{Duration, Instant};
        if rq.wait > recall::MAX_SEQUENCE_WAIT {
            return Err(crate::ledger::LedgerError::Invalid {
                what: "wait_ms",
                reason: format!(
                    "a read waits at most {} ms for its sequence, {} ms were asked",
                    recall::MAX_SEQUENCE_WAIT.as_millis(),
                    rq.wait.as_millis()
                ),
            }
            .into());
        }
        let Some(asked) = rq.at_least else {
            return Ok(());
        };
        let start = Instant::now();
        let mut pause = Duration::from_millis(2);
        loop {
            let seen = self.ledger.sequence()?;
            if seen >= asked {
                return Ok(());
            }
            let waited = start.elapsed();
            if waited >= rq.wait {
                return Err(crate::Error::NotCaughtUp {
                    asked,
                    seen,
                    waited_ms: waited.as_millis() as u64,
                });
            }
            std::thread::sleep(pause.min(rq.wait - waited));
            pause = (pause * 2).min(Duration::from_millis(100));
        }
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
        let chars = rq.text.chars().count();
        let terms = if chars <= super::MAX_QUERY_CHARS {
            crate::text::tokens(rq.text)
                .into_iter()
                .collect::<std::collections::HashSet<_>>()
                .len()
        } else {
            0
        };
        if chars > super::MAX_QUERY_CHARS || terms > super::MAX_QUERY_TERMS {
            return Err(crate::ledger::LedgerError::Refused {
                reason: crate::base::Reason::QueryTooLong,
                message: if chars > super::MAX_QUERY_CHARS {
                    format!(
                        "the query is {chars} characters long; a recall reads at most {}: ask with fewer",
                        super::MAX_QUERY_CHARS
                    )
                } else {
                    format!(
                        "the query holds {terms} distinct words; a recall reads at most {}: ask with fewer",
                        super::MAX_QUERY_TERMS
                    )
                },
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
        // Bad input is refused before any wait; the project may arrive with the write.
        self.await_sequence(rq)?;
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

    /// The read-only view of `project` one recall runs on (the semantic space is loaded
    /// when the query has an embedding or the profile a model to embed it with).
    fn context<'a>(&'a self, project: &'a ProjectId, rq: &RecallQuery<'_>) -> Result<Context<'a>> {
        let text = self.project_text(project)?;
        let space = if rq.embedding.is_none() && self.embedder.model().is_none() {
            None
        } else {
            Some(self.space(project)?)
        };
        Ok(Context {
            project,
            ledger: &self.ledger,
            tiers: &self.tiers,
            cognition: &self.cognition,
            text,
            settings: self.profile.recall,
            bits: self.profile.dim.bits(),
            encoders: &self.encoders,
            ngram_weight: self.profile.text.ngram_weight,
            embedder: &self.embedder,
            space,
        })
    }

    /// [`recall_with`](Self::recall_with) on a validated, compiled request.
    fn recall_compiled(
        &self,
        project: &ProjectId,
        rq: &RecallQuery<'_>,
        compiled: &CompiledQuery,
    ) -> Result<RecallResult> {
        let cx = self.context(project, rq)?;
        self.recall_in(&cx, rq, compiled)
    }

    /// Runs the recall on `cx` and records its trace.
    fn recall_in(
        &self,
        cx: &Context<'_>,
        rq: &RecallQuery<'_>,
        compiled: &CompiledQuery,
    ) -> Result<RecallResult> {
        let recall::Recalled {
            mut result,
            answered,
        } = recall::run(cx, rq, compiled)?;
        self.trace(cx.project, &compiled.text, answered, &result.items)?;
        if self.embedder.deferred() {
            let space = self.space(cx.project)?;
            let space = crate::sync::RecoverRw::reading(&*space);
            result.unembedded = Some(
                result
                    .items
                    .iter()
                    .filter(|i| !space.contains(i.event.id.0))
                    .count(),
            );
        }
        Ok(result)
    }

    /// What a recall leaves behind, none of which changes its ranking unless the profile
    /// opts in: the top results count an access (long-term potentiation, for tier
    /// placement; in RAM, persisted with the feedback batch), and the query is logged for
    /// knowledge gaps, with the results' synapses strengthened under `[recall] learn`.
    fn trace(
        &self,
        project: &ProjectId,
        query: &str,
        answered: bool,
        items: &[RecallItem],
    ) -> Result<()> {
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
                query: query.to_owned(),
                best_similarity: best,
                // Nothing with evidence of its own: a question the memory cannot answer.
                gap: !answered && !query.trim().is_empty(),
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
        let mut rq = RecallQuery::new(query, 20);
        rq.session = session;
        self.recall_pack_with(project, &rq, available_tokens, requested)
    }

    /// As [`recall_pack`](Self::recall_pack), for a full [`RecallQuery`] (its text, the
    /// caller's session, filters and query embedding; its `k` direct candidates, 20 when
    /// it asks for fewer).
    ///
    /// # Errors
    /// As [`recall`](Self::recall).
    pub fn recall_pack_with(
        &self,
        project: &ProjectId,
        rq: &RecallQuery<'_>,
        available_tokens: usize,
        requested: Option<usize>,
    ) -> Result<Pack> {
        let budget = recall::pack_budget(available_tokens, requested);
        if budget == 0 {
            return Err(crate::ledger::LedgerError::Invalid {
                what: "budget",
                reason: format!(
                    "a pack of {available_tokens} available tokens{} has a budget of 0 tokens and could hold nothing (at most 30 % of the available tokens, 25 % by default)",
                    requested.map_or(String::new(), |r| format!(" and a requested budget of {r}"))
                ),
            }
            .into());
        }
        let mut rq = *rq;
        rq.k = rq.k.max(20);
        let compiled = self.compile_request(project, &rq)?;
        let cx = self.context(project, &rq)?;
        let recalled = self.recall_in(&cx, &rq, &compiled)?;
        recall::pack::assemble(&cx, &compiled.text, budget, recalled)
    }
}
