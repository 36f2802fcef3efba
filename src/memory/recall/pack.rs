//! Context packs: one more consumer of a recall's compiled query. Current beliefs the
//! query touches, suggested procedures, then the recalled items (direct, directive,
//! associative), greedily filled under the token budget ([`recall::fill`]).

use super::{RecallQuery, RecallResult};
use crate::index::lexical;
use crate::recall::{self, Pack, PackCandidate, Signal};
use crate::base::ProjectId;
use crate::{Memory, Result};

impl Memory {
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
        let RecallResult {
            items: direct,
            suppressed,
            ..
        } = self.recall_compiled(project, &rq, &compiled)?;
        let query = compiled.text.as_str();
        let mut candidates = Vec::new();
        // Current beliefs come first: concise and governed (only active rows, never
        // superseded ones; user-owned ones exist only with user evidence). First those the
        // recalled events are evidence for, best recalled first; then those whose key or
        // statement shares a word with the query.
        let active = self
            .ledger
            .beliefs_with_status(project, crate::governance::BeliefStatus::Active)?;
        let mut chosen: Vec<(usize, String)> = Vec::new();
        for (rank, item) in direct.iter().enumerate() {
            for (id, _, _, status) in self.ledger.beliefs_citing(project, item.event.id)? {
                if status != crate::governance::BeliefStatus::Active {
                    continue;
                }
                if let Some(i) = active.iter().position(|b| b.id == id)
                    && chosen.iter().all(|c| c.0 != i)
                {
                    chosen.push((
                        i,
                        format!(
                            "current belief {} v{} (evidence: recalled event {} at rank {})",
                            active[i].key,
                            active[i].version,
                            item.event.id,
                            rank + 1
                        ),
                    ));
                }
            }
        }
        let words: std::collections::HashSet<String> = lexical::query_terms(query)
            .into_iter()
            .map(|t| crate::text::stem(&t).to_owned())
            .collect();
        for (i, b) in active.iter().enumerate() {
            if chosen.iter().any(|c| c.0 == i) {
                continue;
            }
            let text = format!("{} {}", b.key.replace(['.', '_'], " "), b.statement);
            let overlap: Vec<String> = crate::text::tokens(&text)
                .into_iter()
                .filter(|t| !crate::text::is_stop_word(t) && words.contains(crate::text::stem(t)))
                .collect();
            if !overlap.is_empty() {
                chosen.push((
                    i,
                    format!(
                        "current belief {} v{} (matches {:?})",
                        b.key, b.version, overlap
                    ),
                ));
            }
        }
        for (i, reason) in chosen {
            let b = &active[i];
            candidates.push(PackCandidate {
                id: b.id.0,
                slot: "belief",
                reason,
                text: format!("{}: {}", b.key, b.statement),
                role: None,
                anchor: b.evidence.first().map(|e| recall::Anchor {
                    event: e.0,
                    ..recall::Anchor::default()
                }),
            });
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
                    candidates.push(PackCandidate {
                        id: s.procedure.id.0,
                        slot: "procedure",
                        reason: format!(
                            "procedure score {:.3} (similarity x reliability)",
                            s.score
                        ),
                        text: format!("{}: {}", s.procedure.name, steps.join("; ")),
                        role: None,
                        anchor: None,
                    });
                }
            }
        }
        // The recalled items, in rank order: every one passed recall's relevance floor (its
        // own evidence, or a link to a lexical match), whatever its length; a pack adds no
        // floor of its own and no item recall did not return.
        let mut outdated = Vec::new();
        for (i, item) in direct.iter().enumerate() {
            let (slot, reason) = if let Some(&(Signal::Directive, rank, _)) =
                item.fused.breakdown.first()
            {
                (
                    "directive",
                    format!(
                        "standing directive, #{rank} by similarity ({:.3})",
                        item.similarity.unwrap_or(0.0)
                    ),
                )
            } else if let Some((key, version)) = &item.superseded_belief {
                outdated.push(recall::ReceiptLine {
                    id: item.event.id.0,
                    slot: "direct",
                    role: Some(item.event.role),
                    anchor: Some((&item.event).into()),
                    tokens: recall::estimate_tokens(&item.event.content),
                    reason: format!(
                        "evidence of belief {key} v{version}, since superseded (the current version is governed; history keeps the old one)"
                    ),
                    excerpt: None,
                });
                continue;
            } else if item.associative {
                (
                    "associative",
                    format!(
                        "rank {}: linked to a match ({})",
                        i + 1,
                        item.fused
                            .breakdown
                            .iter()
                            .map(|b| match b.0 {
                                Signal::Neighbour => format!("the turn next to event {}", b.1),
                                other => other.name().to_owned(),
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            } else {
                (
                    "direct",
                    format!("rank {} (fused {:.4})", i + 1, item.fused.score),
                )
            };
            candidates.push(PackCandidate {
                id: item.event.id.0,
                slot,
                reason,
                text: item.event.content.clone(),
                role: Some(item.event.role),
                anchor: Some((&item.event).into()),
            });
        }
        let mut pack = recall::fill(budget, candidates, &words);
        pack.suppressed.extend(outdated);
        pack.suppressed.extend(
            suppressed
                .into_iter()
                .map(|(id, reason)| recall::ReceiptLine {
                    id: id.0,
                    slot: "direct",
                    role: None,
                    anchor: Some(recall::Anchor {
                        event: id.0,
                        ..recall::Anchor::default()
                    }),
                    tokens: 0,
                    reason,
                    excerpt: None,
                }),
        );
        Ok(pack)
    }
}
