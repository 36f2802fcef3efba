//! Recall on the `Memory` facade: the request and result types, the filters, the
//! candidate pipeline (`recall_with`) and context packs (`recall_pack`). See
//! `docs/ARCHITECTURE.md` ("memory/, recall/, bin/") for the design and its measurements.

use std::collections::HashMap;

use hdv::Hypervector;
use hdv::encode::TextEncoder;

use super::{
    CANDIDATES, COMMON_IDF, EPISODE_SIMILARITY, EPISODES, FEEDBACK_BATCH, RELEVANCE_FLOOR,
    RERANK_WINDOW, lock, read_lock,
};
use crate::cognition::{RecallTrace, RippleParams};
use crate::governance::BeliefStatus;
use crate::ledger::{Event, EventId};
use crate::recall::query::CompiledQuery;
use crate::recall::{self, Fused, Pack, Ranked, lexical, supersede};
use crate::store::{ProjectId, SearchRequest, VectorId};
use crate::{Memory, Result};

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
    /// `(key, version)` of the superseded belief this event is evidence of, when it backs
    /// no current belief: what the user said was later corrected.
    pub superseded_belief: Option<(String, u64)>,
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

/// Whether `event` happened outside the window `[since, until)`.
fn outside(event: &Event, since: Option<i64>, until: Option<i64>) -> bool {
    since.is_some_and(|t| event.created_at < t) || until.is_some_and(|t| event.created_at >= t)
}

/// The filters of one recall: the caller's ([`RecallQuery`]) and those compiled from the
/// query text ([`CompiledQuery`]); an event must pass both.
struct Filters<'a> {
    rq: &'a RecallQuery<'a>,
    compiled: &'a CompiledQuery,
    /// The window of a time hint is ignored (no candidate fell inside it).
    hint_ignored: bool,
}

impl Filters<'_> {
    /// Why `event` must not be returned, if it must not.
    fn suppresses(&self, event: &Event) -> Option<String> {
        let (rq, q) = (self.rq, self.compiled);
        if rq.session.is_some() && event.session.as_deref() == rq.session {
            return Some("same-session echo".to_owned());
        }
        let hinted = !(q.hinted && self.hint_ignored);
        if outside(event, rq.since, rq.until) || (hinted && outside(event, q.since, q.until)) {
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
        if differs(q.source.as_deref(), event.source.as_deref()) {
            return Some("another source".to_owned());
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
    /// The query's time hint ("yesterday", "last week", an ISO date) was ignored because
    /// none of the candidates happened in its window (an explicit `since:` / `until:`
    /// always applies).
    pub time_hint_ignored: bool,
}

impl Memory {
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
        let mut filters = Filters {
            rq,
            compiled: &compiled,
            hint_ignored: false,
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
                for id in ids {
                    if let Some(v) = self.tiers.get(project, VectorId(id))? {
                        directives.push((id, q.similarity(&v)));
                    }
                }
                directives.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                // Only directives clearly above chance (3 standard deviations of the
                // similarity of unrelated vectors, 1/√D) take a slot.
                let chance = 1.0 / (self.profile.dim.bits() as f64).sqrt();
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
        if self.profile.recall.ripple_weight > 0.0 {
            // Spreading activation from the three best candidates of the other sources:
            // what the memory links to them (thread neighbours, co-recalled memories).
            let seeds: Vec<u64> = recall::fuse(&lists).iter().take(3).map(|f| f.id).collect();
            let mut linked: Vec<(u64, f64)> = self
                .cognition
                .ripple(
                    project,
                    &seeds,
                    // One hop: deeper hops gave the same results on BEAM, at more queries.
                    RippleParams {
                        max_depth: 1,
                        ..RippleParams::default()
                    },
                )?
                .into_iter()
                .filter(|a| !seeds.contains(&a.id))
                .map(|a| (a.id, a.activation))
                .collect();
            linked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            lists.push(Ranked {
                source: "ripple",
                weight: self.profile.recall.ripple_weight,
                ids: linked.into_iter().map(|(id, _)| id).collect(),
            });
        }
        let mut out = Vec::with_capacity(k);
        // Role prior: what the user said outranks what was said back to the user, among the
        // top fused candidates (additive and bounded, like every boost).
        let user_bonus = self.profile.recall.user_bonus;
        let mut all = Vec::new();
        let mut suppressed = Vec::new();
        let mut fetched = Vec::new();
        for fused in recall::fuse(&lists).into_iter().take(k.max(40)) {
            if let Some(event) = self.ledger.get(project, EventId(fused.id))? {
                fetched.push((fused, event));
            }
        }
        // A time hint is soft: when no candidate happened in its window, it is ignored.
        filters.hint_ignored = compiled.hinted
            && !fetched
                .iter()
                .any(|(_, e)| !outside(e, compiled.since, compiled.until));
        for (mut fused, event) in fetched {
            if let Some(reason) = filters.suppresses(&event) {
                suppressed.push((event.id, reason));
                continue;
            }
            if event.role == crate::ledger::Role::User {
                fused.score += user_bonus;
            }
            all.push((fused, event));
        }
        all.sort_by(|a, b| b.0.score.total_cmp(&a.0.score).then(a.0.id.cmp(&b.0.id)));
        let mut supersedes = HashMap::new();
        if self.profile.recall.supersede {
            let mut ranked: Vec<supersede::Candidate> = all
                .iter()
                .take(RERANK_WINDOW)
                .map(|(f, e)| {
                    supersede::Candidate::new(
                        f.id,
                        e.role,
                        e.agent.as_deref(),
                        &e.content,
                        f.breakdown.iter().map(|b| b.2).sum(),
                    )
                })
                .collect();
            let moves = supersede::reorder(
                &supersede::Query::new(query, &query_terms),
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
        // Governed supersession: an event that is evidence only of superseded beliefs (a
        // fact the user corrected) goes after the other results of the reranked head, and
        // says which belief version it backs.
        let mut outdated: HashMap<u64, (String, u64)> = HashMap::new();
        let head = all.len().min(RERANK_WINDOW);
        let any_superseded = self
            .ledger
            .has_beliefs_with_status(project, BeliefStatus::Superseded)?;
        for (f, _) in all[..head].iter().filter(|_| any_superseded) {
            let cited = self.ledger.beliefs_citing(project, EventId(f.id))?;
            let current = cited.iter().any(|b| b.3 != BeliefStatus::Superseded);
            if let Some((_, key, version, _)) = cited.last()
                && !current
            {
                outdated.insert(f.id, (key.clone(), *version));
            }
        }
        if !outdated.is_empty() {
            all[..head].sort_by_key(|(f, _)| outdated.contains_key(&f.id));
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
                superseded_belief: outdated.remove(&fused.id),
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
            time_hint_ignored: filters.hint_ignored,
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
            time_hint_ignored,
        } = self.recall_with(project, &rq)?;
        let compiled = recall::query::compile(query, self.ledger.now_ms())?;
        let filters = Filters {
            rq: &rq,
            compiled: &compiled,
            hint_ignored: time_hint_ignored,
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
            if let Some((key, version)) = &item.superseded_belief {
                below_floor.push(recall::ReceiptLine {
                    id: item.event.id.0,
                    slot: "direct",
                    tokens: recall::estimate_tokens(&item.event.content),
                    reason: format!(
                        "evidence of belief {key} v{version}, since superseded (the current version is governed; history keeps the old one)"
                    ),
                });
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
}
