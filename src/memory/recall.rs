//! Recall on the `Memory` facade: the request and result types, the filters, the
//! candidate pipeline (`recall_with`) and context packs (`recall_pack`). See
//! `docs/ARCHITECTURE.md` ("memory/, recall/, bin/") for the design and its measurements.

use crate::sync::{Recover as _, RecoverRw as _};
use std::collections::HashMap;

use hdv::Hypervector;

use std::sync::{Arc, RwLock};

use super::{
    BASELINE_SAMPLE, CANDIDATES, COMMON_IDF, EPISODE_SIMILARITY, EPISODES, ProjectText,
    RERANK_WINDOW, SOURCE_DEPTH,
};
use crate::cognition::{RecallTrace, RippleParams};
use crate::governance::BeliefStatus;
use crate::ledger::{Event, EventId};
use crate::recall::fusion::{self, Evidence, FusionParams, Scored};
use crate::recall::query::CompiledQuery;
use crate::recall::{self, Fused, Pack, PackCandidate, Signal, lexical, supersede};
use crate::store::{ProjectId, SearchRequest, VectorId};
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
    /// Quoted phrases no candidate holds verbatim: they lift what holds their words (the
    /// phrase source) instead of filtering everything out.
    phrases_ignored: Vec<String>,
}

impl Filters<'_> {
    /// Why `event` must not be returned, if it must not.
    fn suppresses(&self, event: &Event) -> Option<String> {
        let (rq, q) = (self.rq, self.compiled);
        if rq.session.is_some() && event.session.as_deref() == rq.session {
            return Some("same-session echo".to_owned());
        }
        // A time hint's window only lifts what falls inside it (recall adds the prior);
        // explicit `since:` / `until:` filter.
        if outside(event, rq.since, rq.until) || (!q.hinted && outside(event, q.since, q.until)) {
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
        if let Some(missing) = self.missing_phrase(event) {
            return Some(format!("does not contain the phrase \"{missing}\""));
        }
        None
    }

    /// The first quoted phrase that filters and that `event` does not hold.
    fn missing_phrase(&self, event: &Event) -> Option<&str> {
        let mut filtering = self
            .compiled
            .phrases
            .iter()
            .filter(|p| !self.phrases_ignored.contains(p))
            .peekable();
        filtering.peek()?;
        let content = recall::query::normalize(&event.content);
        filtering
            .find(|p| !content.contains(p.as_str()))
            .map(String::as_str)
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
}

impl Memory {
    /// Events of the sealed episodes whose topic is nearest `query`, and of the episodes
    /// supporting the nearest concept (each only above [`EPISODE_SIMILARITY`]), best first
    /// by their own similarity to the query, as `(event, similarity)`.
    fn episodic_candidates(
        &self,
        project: &ProjectId,
        query: &Hypervector,
    ) -> Result<Vec<(u64, f64)>> {
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
        let d = self.profile.dim.bits() as f64;
        Ok(scored
            .into_iter()
            .take(CANDIDATES)
            .map(|(h, id)| (id, 1.0 - 2.0 * f64::from(h) / d))
            .collect())
    }

    /// The project's semantic space and the bits of the query in it: the caller's
    /// `embedding`, else the static model's embedding of `text`; `None` when the project
    /// has no semantic vectors or there is nothing to embed.
    ///
    /// # Errors
    /// An embedding of another dimension than the project's space, or not finite.
    fn semantic_query(
        &self,
        project: &ProjectId,
        embedding: Option<&[f32]>,
        text: &str,
    ) -> Result<Option<(Arc<RwLock<crate::semantic::Space>>, Hypervector)>> {
        if embedding.is_none() && self.embedder.model().is_none() {
            return Ok(None);
        }
        let space = self.space(project)?;
        let input = space.reading().input;
        let owned;
        let query = match embedding {
            Some(v) => v,
            None => match self.embedder.embed_text(text) {
                Some(v) => {
                    owned = v;
                    &owned
                }
                None => return Ok(None),
            },
        };
        if input == 0 {
            return Ok(None);
        }
        if query.len() != input {
            return Err(crate::ledger::LedgerError::Invalid {
                what: "embedding",
                reason: format!(
                    "the query embedding has {} dimensions; the semantic space of project `{project}` holds {input}-dimensional embeddings",
                    query.len()
                ),
            }
            .into());
        }
        let bits =
            self.embedder
                .project(query)
                .map_err(|e| crate::ledger::LedgerError::Invalid {
                    what: "embedding",
                    reason: e.to_string(),
                })?;
        Ok(Some((space, bits)))
    }

    /// Directive slots of a `k`-result recall: the profile's number, at most a third of `k`.
    fn directive_slots(&self, k: usize) -> usize {
        self.profile.recall.directive_slots.min(k / 3)
    }

    /// The mean and standard deviation of the similarity of `query` to the project's
    /// baseline sample (memories drawn evenly over the project: for almost every query,
    /// unrelated ones), drawing or refreshing the sample when the project has doubled.
    fn baseline(
        &self,
        project: &ProjectId,
        text: &RwLock<ProjectText>,
        query: &Hypervector,
    ) -> Result<Option<(f64, f64)>> {
        let documents = text.reading().postings.documents();
        let stale = text
            .reading()
            .baseline
            .as_ref()
            .is_none_or(|(n, _)| documents >= 2 * n.max(&1) || *n == 0);
        if stale && documents > 0 {
            let ids = text.reading().postings.ids_spread(BASELINE_SAMPLE);
            let mut sample = Vec::with_capacity(ids.len());
            for id in ids {
                if let Some(v) = self.tiers.get(project, VectorId(id))? {
                    sample.push(v);
                }
            }
            text.writing().baseline = Some((documents, sample));
        }
        let guard = text.reading();
        let Some((_, sample)) = guard.baseline.as_ref().filter(|(_, s)| s.len() >= 8) else {
            return Ok(None);
        };
        let sims: Vec<f64> = sample.iter().map(|v| query.similarity(v)).collect();
        let n = sims.len() as f64;
        let mean = sims.iter().sum::<f64>() / n;
        let var = sims.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1.0);
        Ok(Some((mean, var.sqrt())))
    }

    /// The `k` memories of `project` most relevant to `query` (see
    /// [`recall_with`](Self::recall_with)). The top results strengthen their synapses, and
    /// the query is logged for gap detection.
    ///
    /// # Errors
    /// Store, ledger and SQLite errors.
    pub fn recall(&self, project: &ProjectId, query: &str, k: usize) -> Result<Vec<RecallItem>> {
        Ok(self
            .recall_with(project, &RecallQuery::new(query, k))?
            .items)
    }

    /// Recall in stages: the candidate **sources** ([`Source`]: lexical BM25, HDC vector,
    /// phrases, episodes; then ripple over synapses from the best of them), **fusion**
    /// ([`fusion`]: per-query normalization, neighbour smoothing, session prior, bounded
    /// associative evidence and priors), the **governance filters** (candidates outside the
    /// time window, of another agent or thread, or from the caller's own session are
    /// suppressed and listed with the reason; exact duplicates collapse into one item; a
    /// memory with no lexical support and a similarity within the project's unrelated
    /// baseline is below the relevance floor) and the **rerank** (supersession by newer
    /// values, governed supersession by corrected beliefs, directive slots).
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
        let settings = self.profile.recall;
        let mut filters = Filters {
            rq,
            compiled,
            hint_ignored: false,
            phrases_ignored: Vec::new(),
        };
        let (query, k) = (compiled.text.as_str(), rq.k);
        let text_lock = self.project_text(project)?;
        let vector = {
            let idf = self.idf(&text_lock.reading().postings, query);
            self.encode_idf(query, &idf)
        };
        let baseline = match &vector {
            Some(v) => self.baseline(project, &text_lock, v)?,
            None => None,
        };
        let text = text_lock.reading();
        let documents = text.postings.documents();
        // Words in more than a quarter of the project's events add almost nothing to BM25
        // (idf ≤ ln 4) but make it score nearly every event. A speaker's name stays
        // distinctive: it matches a field, whoever said most of the turns.
        let distinctive = |t: &str, df: u64| {
            df > 0 && (lexical::idf(documents, df) >= COMMON_IDF || text.speakers.contains(t))
        };
        // The query's lexical terms: its distinctive words (all of them when it has none).
        let (terms, any_distinctive) = {
            let terms = lexical::query_terms(query);
            let kept: Vec<String> = terms
                .iter()
                .filter(|t| distinctive(t, text.postings.df(t)))
                .cloned()
                .collect();
            if kept.is_empty() {
                (terms, false)
            } else {
                (kept, true)
            }
        };
        // Whether a lexical match says the query is answered (the gap decision below; the
        // relevance floor counts every match). A query naming something the project never
        // saw, in any form sharing the word's stem ("allergy" is held by "allergic"), whose
        // known words are all common asks about a subject never stored: a match on the
        // common words answers nothing, and counting it made every such question look
        // answered (`docs/EXPERIMENTS.md`, synthetic gaps). A query whose words are all held
        // counts its matches, common or not, and so does every query of a project too small
        // for a baseline (there every word is "common"). Forms are looked at only when no
        // query word is distinctive as it is.
        let lexical_answers = baseline.is_none() || any_distinctive || {
            let mut unseen = false;
            let mut form_distinctive = false;
            for t in &terms {
                let held: Vec<(String, u64)> = crate::text::word_forms(t)
                    .into_iter()
                    .map(|f| {
                        let df = text.postings.df(&f);
                        (f, df)
                    })
                    .filter(|&(_, df)| df > 0)
                    .collect();
                unseen |= held.is_empty();
                form_distinctive |= held.iter().any(|(f, df)| distinctive(f, *df));
            }
            form_distinctive || !unseen
        };
        let semantic = self.semantic_query(project, rq.embedding, query)?;
        let mut probe = Probe {
            semantic: semantic.as_ref(),
            project,
            compiled,
            text: &text,
            vector: vector.as_ref(),
            terms,
            seeds: Vec::new(),
        };
        let params = FusionParams {
            neighbour: settings.neighbour_weight,
            session: settings.session_weight,
        };
        let mut lists = Vec::new();
        // The direct sources are fused once; the associative ones start from its three
        // best candidates and are added to it.
        let mut fusion: Option<fusion::Fusion> = None;
        let (direct, associative): (Vec<&dyn Source>, Vec<&dyn Source>) = SOURCES
            .iter()
            .partition(|s| s.evidence() == Evidence::Direct);
        for source in direct.into_iter().chain(associative) {
            let weight = source.weight(&settings);
            if weight <= 0.0 {
                continue;
            }
            let is_associative = source.evidence() == Evidence::Associative;
            if is_associative && fusion.is_none() {
                let direct = fusion::Fusion::direct(&lists, &text.chronology, params);
                probe.seeds = direct.best(3);
                fusion = Some(direct);
            }
            let hits = source.gather(self, &probe)?;
            if !hits.is_empty() {
                let list = Scored {
                    source: source.name(),
                    weight,
                    evidence: source.evidence(),
                    exhaustive: hits.len() < SOURCE_DEPTH,
                    hits,
                };
                match &mut fusion {
                    Some(f) if is_associative => f.associate(&list),
                    _ => lists.push(list),
                }
            }
        }
        let fusion =
            fusion.unwrap_or_else(|| fusion::Fusion::direct(&lists, &text.chronology, params));
        // Standing directives most similar to the query (their own slots, below).
        let mut directives: Vec<(u64, f64)> = Vec::new();
        let slots = self.directive_slots(k);
        if let Some(q) = &vector
            && slots > 0
        {
            for &id in &text.directives {
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
        let mut candidates = fusion.ranked();
        drop(text);
        candidates.truncate(FETCH_WINDOW.max(k + k / 2));
        // The semantic side of the relevance floor: the query's similarity to memories
        // spread over the project's semantic space.
        let semantic_baseline = semantic
            .as_ref()
            .and_then(|(space, q)| space.reading().baseline(q, BASELINE_SAMPLE));
        // The vector source's similarities are exact (every tier compares its hits in
        // full): the others are computed below.
        let mut similarity: HashMap<u64, f64> = lists
            .iter()
            .filter(|l| l.source == VectorSource.name())
            .flat_map(|l| l.hits.iter().copied())
            .collect();
        let mut fetched = Vec::new();
        let ids: Vec<EventId> = candidates.iter().map(|c| EventId(c.fused.id)).collect();
        let events = self.ledger.get_many(project, &ids)?;
        for (c, event) in candidates.into_iter().zip(events) {
            if let Some(event) = event {
                if let Some(q) = &vector
                    && !similarity.contains_key(&c.fused.id)
                    && let Some(v) = self.tiers.get(project, VectorId(c.fused.id))?
                {
                    similarity.insert(c.fused.id, q.similarity(&v));
                }
                fetched.push((c, event));
            }
        }
        // A time hint is soft: it lifts what happened in its window; when no candidate did,
        // it is ignored (and reported).
        let in_hint = |e: &Event| compiled.hinted && !outside(e, compiled.since, compiled.until);
        filters.hint_ignored = compiled.hinted && !fetched.iter().any(|(_, e)| in_hint(e));
        // A quoted phrase is a filter while some candidate holds it; one that none holds
        // (quoted from memory, in other words) would empty the answer: it falls back to
        // the lift its words give through the phrase source, and is reported.
        let contents: Vec<String> = if compiled.phrases.is_empty() {
            Vec::new()
        } else {
            fetched
                .iter()
                .map(|(_, e)| recall::query::normalize(&e.content))
                .collect()
        };
        filters.phrases_ignored = compiled
            .phrases
            .iter()
            .filter(|p| !contents.iter().any(|c| c.contains(p.as_str())))
            .cloned()
            .collect();
        // A lexical match of its own (a neighbour's score passed on by smoothing has rank
        // 0), or an HDC or semantic similarity above mean + 2 σ of the query's
        // similarity to the project's baseline sample.
        let lexical_evidence = |c: &fusion::Candidate| c.lexical();
        // A knowledge gap: nothing answers the query. No candidate the filters let through
        // matches a word that tells memories apart, and none is more similar than the best
        // of the project's memories would be by chance ([`chance_best`]: the largest of N
        // unrelated ones), which for any sizeable project lies well above the floor's 2 σ.
        // A gap returns nothing; anything returned answers (floor and gaps agree).
        let chance_best = chance_best(documents, GAP_CONFIDENCE);
        // Each similarity source's (similarity, item floor, answer floor). A project too
        // small to sample a baseline (fewer than 8 memories) uses the prior instead:
        // [`PRIOR_SIMILARITY`] for both.
        let floors = |b: Option<(f64, f64)>| {
            b.map_or((PRIOR_SIMILARITY, PRIOR_SIMILARITY), |(mean, sd)| {
                (
                    mean + FLOOR_SIGMAS * sd,
                    mean + chance_best.max(FLOOR_SIGMAS) * sd,
                )
            })
        };
        let (semantic_floors, vector_floors) = (floors(semantic_baseline), floors(baseline));
        let similarities = |c: &fusion::Candidate| {
            let semantic = semantic.as_ref().and_then(|(space, q)| {
                let s = space.reading().similarity(q, c.fused.id)?;
                Some((s, semantic_floors.0, semantic_floors.1))
            });
            let vector = similarity
                .get(&c.fused.id)
                .map(|&s| (s, vector_floors.0, vector_floors.1));
            [semantic, vector]
        };
        let evidence = |c: &fusion::Candidate| {
            lexical_evidence(c)
                || similarities(c)
                    .into_iter()
                    .flatten()
                    .any(|(s, floor, _)| s >= floor)
        };
        let answered = fetched.iter().any(|(c, e)| {
            filters.suppresses(e).is_none()
                && ((lexical_answers && lexical_evidence(c))
                    || similarities(c)
                        .into_iter()
                        .flatten()
                        .any(|(s, _, answer)| s >= answer))
        });
        let supported = |c: &fusion::Candidate| evidence(c);
        // Linked to evidence: by a synapse (ripple), or as the turn next to a lexical match
        // in its session (it borrows a share of that turn's evidence).
        let lexical_ids: std::collections::HashSet<u64> = lists
            .iter()
            .filter(|l| l.source.is_lexical())
            .flat_map(|l| l.hits.iter().map(|h| h.0))
            .collect();
        let linked = |c: &fusion::Candidate| {
            c.fused.breakdown.iter().any(|b| {
                b.0 == Signal::Ripple
                    || (b.0 == Signal::Neighbour && lexical_ids.contains(&(b.1 as u64)))
            })
        };
        let mut suppressed = Vec::new();
        let mut kept: Vec<(fusion::Candidate, Event)> = Vec::new();
        // Memories with only a synapse to evidence: they fill the places the others leave.
        let mut fillers: Vec<(fusion::Candidate, Event)> = Vec::new();
        let mut duplicates: HashMap<u64, Vec<EventId>> = HashMap::new();
        let mut folded: HashMap<String, u64> = HashMap::new();
        for (mut c, event) in fetched {
            if let Some(reason) = filters.suppresses(&event) {
                suppressed.push((event.id, reason));
                continue;
            }
            // Relevance floor: no evidence of its own (a lexical match, or a similarity
            // above the spread of unrelated memories of this project), and no synapse to
            // a memory that has some.
            if !answered {
                suppressed.push((
                    event.id,
                    "knowledge gap: no candidate matches a distinctive query word or is more similar than the project's unrelated memories reach by chance".to_owned(),
                ));
                continue;
            }
            let filler = !supported(&c);
            if filler && !linked(&c) {
                suppressed.push((
                    event.id,
                    format!(
                        "below the relevance floor (no lexical match; similarity {:.3} under {:.3}, {})",
                        similarity.get(&c.fused.id).copied().unwrap_or(0.0),
                        vector_floors.0,
                        baseline.map_or(
                            "the prior of a project too small to sample".to_owned(),
                            |(mean, sd)| format!(
                                "the project's unrelated baseline {mean:.3} + {FLOOR_SIGMAS} x {sd:.3}"
                            )
                        )
                    ),
                ));
                continue;
            }
            // One slot per text: texts equal once folded (Unicode form, case, whitespace)
            // are one item, the best ranked of them (candidates arrive best first).
            match folded.entry(crate::text::fold(&event.content)) {
                std::collections::hash_map::Entry::Occupied(first) => {
                    duplicates.entry(*first.get()).or_default().push(event.id);
                    continue;
                }
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(event.id.0);
                }
            }
            if event.role == crate::ledger::Role::User {
                fusion::add_prior(&mut c, Signal::User, settings.user_bonus);
            }
            if compiled.hinted && !filters.hint_ignored {
                let inside = if in_hint(&event) {
                    settings.hint_weight
                } else {
                    0.0
                };
                fusion::add_component(&mut c, Signal::Hint, inside);
            }
            if filler {
                fillers.push((c, event));
            } else {
                kept.push((c, event));
            }
        }
        let mut all: Vec<(Fused, Event)> = Vec::new();
        let associative: std::collections::HashSet<u64> =
            fillers.iter().map(|(c, _)| c.fused.id).collect();
        for group in [kept, fillers] {
            let mut events: HashMap<u64, Event> =
                group.iter().map(|(c, e)| (c.fused.id, e.clone())).collect();
            all.extend(
                fusion::order(group.into_iter().map(|(c, _)| c).collect())
                    .into_iter()
                    .map(|c| {
                        let e = events.remove(&c.fused.id).expect("fetched");
                        (c.fused, e)
                    }),
            );
        }
        let mut supersedes = HashMap::new();
        // A time the question names selects the value valid then: a newer value never
        // overrides it.
        let time_named = compiled.hinted && !filters.hint_ignored;
        if settings.supersede && !time_named {
            let mut ranked: Vec<supersede::Candidate> = all
                .iter()
                .take(RERANK_WINDOW)
                .map(|(f, e)| {
                    supersede::Candidate::new(
                        f.id,
                        e.role,
                        e.agent.as_deref(),
                        &e.content,
                        f.breakdown
                            .iter()
                            .filter(|b| !b.0.is_prior())
                            .map(|b| b.2)
                            .sum(),
                    )
                    .speaker(e.speaker.as_deref())
                })
                .collect();
            let moves = supersede::reorder(
                &supersede::Query::new(query, &lexical::query_terms(query)),
                &mut ranked,
                settings.supersede_ratio,
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
        // Directive slots: the standing directives closest to the query that fusion left
        // out of the top k take the last places (filters apply to them too).
        let mut slot_items = Vec::new();
        // A gap returns nothing, directives included.
        directives.retain(|_| answered);
        for (rank, &(id, sim)) in directives.iter().enumerate() {
            if all.iter().take(k).any(|(f, _)| f.id == id) {
                continue;
            }
            if let Some(event) = self.ledger.get(project, EventId(id))? {
                if let Some(reason) = filters.suppresses(&event) {
                    suppressed.push((event.id, reason));
                    continue;
                }
                // The same text already among the top k is that item, not a second slot.
                let key = crate::text::fold(&event.content);
                if let Some(&first) = folded.get(&key)
                    && all.iter().take(k).any(|(f, _)| f.id == first)
                {
                    duplicates.entry(first).or_default().push(event.id);
                    continue;
                }
                similarity.insert(id, sim);
                let fused = Fused {
                    id,
                    score: 0.0,
                    breakdown: vec![(Signal::Directive, rank + 1, 0.0)],
                };
                slot_items.push((fused, event));
            }
        }
        // An item whose text a slot now holds gives way to it (the texts were folded once,
        // above: `folded` names the item that holds each).
        let given_way: std::collections::HashSet<u64> = slot_items
            .iter()
            .filter_map(|(_, e): &(Fused, Event)| {
                folded.get(&crate::text::fold(&e.content)).copied()
            })
            .collect();
        all.retain(|(f, _)| {
            !slot_items.iter().any(|(s, _)| s.id == f.id) && !given_way.contains(&f.id)
        });
        all.truncate(k.saturating_sub(slot_items.len()));
        all.extend(slot_items);
        let mut out = Vec::with_capacity(k);
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
                duplicates: duplicates.remove(&fused.id).unwrap_or_default(),
                associative: associative.contains(&fused.id),
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
            let mut feedback = self.feedback.locked();
            feedback.push(RecallTrace {
                project: project.clone(),
                query: query.to_owned(),
                best_similarity: best,
                // Nothing with evidence of its own: a question the memory cannot answer.
                gap: !answered && !compiled.text.trim().is_empty(),
                hits: top,
                strengthen: settings.learn,
                at: self.ledger.now_ms(),
            });
            feedback.len()
        };
        if self.feedback_now(pending) {
            self.flush_feedback()?;
        }
        Ok(RecallResult {
            items: out,
            suppressed,
            time_hint_ignored: filters.hint_ignored,
            phrases_ignored: filters.phrases_ignored,
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
        let mut pack = recall::fill(budget, candidates);
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
                }),
        );
        Ok(pack)
    }
}

/// Candidates fusion reads from the best of the fused list before the filters (at least
/// 1.5 × k).
const FETCH_WINDOW: usize = 60;
/// The relevance floor: standard deviations above the mean similarity of the project's
/// unrelated baseline a memory without lexical evidence must reach.
const FLOOR_SIGMAS: f64 = 2.0;
/// The similarity (HDC or semantic bits) that counts as evidence, for the floor and for a
/// gap, in a project too small to sample its unrelated memories (fewer than 8): half the
/// bits agreeing beyond chance (for sign-projected embeddings, a cosine of about 0.7),
/// which unrelated texts never reach and a restatement does. Measured nowhere on the
/// development sets (their projects are all large): a prior, not a fitted constant.
const PRIOR_SIMILARITY: f64 = 0.5;

/// How sure a knowledge gap must be that its best candidate is no better than chance.
const GAP_CONFIDENCE: f64 = 0.95;

/// The similarity, in standard deviations above the mean of a project's unrelated
/// baseline, that the most similar of `n` unrelated memories stays below with probability
/// `confidence`: the extreme-value (Gumbel) limit of the maximum of `n` normal draws,
/// location `a = √(2 ln n) − (ln ln n + ln 4π) / (2 √(2 ln n))`, scale `b = 1 / √(2 ln n)`,
/// quantile `a − b · ln(−ln confidence)`. Recall's best candidate is the maximum over the
/// whole project, so comparing it with the baseline's 2 σ would call almost every
/// question answered; comparing it with this does not.
fn chance_best(n: u64, confidence: f64) -> f64 {
    let n = n.max(3) as f64;
    let root = (2.0 * n.ln()).sqrt();
    let location = root - (n.ln().ln() + (4.0 * std::f64::consts::PI).ln()) / (2.0 * root);
    location - (-confidence.ln()).ln() / root
}

/// A BM25 hit as a source score.
fn bm25_score((id, score): (u64, f32)) -> (u64, f64) {
    (id, f64::from(score))
}

/// What the sources of one recall read.
struct Probe<'a> {
    project: &'a ProjectId,
    compiled: &'a CompiledQuery,
    text: &'a ProjectText,
    /// The query's HDC vector (IDF-weighted), when it has words.
    vector: Option<&'a Hypervector>,
    /// Its lexical terms: stop words and words common in the project left out.
    terms: Vec<String>,
    /// The best fused candidates of the direct sources (where associative ones start).
    seeds: Vec<u64>,
    /// The project's semantic space and the query's bits in it, when both exist.
    semantic: Option<&'a (Arc<RwLock<crate::semantic::Space>>, Hypervector)>,
}

/// A candidate source of recall: scores memories for a query, best first, as
/// `(event id, raw score)` (higher is better; fusion normalizes per query).
trait Source: Sync {
    /// Its signal in score breakdowns (named in `--sources` and `--weight`).
    fn name(&self) -> Signal;
    /// Direct (the memory's own content matched) or associative (linked to what did).
    fn evidence(&self) -> Evidence {
        Evidence::Direct
    }
    /// Its weight in the profile (0: off).
    fn weight(&self, settings: &crate::config::RecallSettings) -> f64;
    /// Its candidates.
    fn gather(&self, memory: &Memory, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>>;
}

/// BM25 over the in-memory postings ([`lexical`]).
struct LexicalSource;
/// BM25 over the query's word pairs ([`lexical::bigrams`]): phrasing the query shares
/// with a memory beyond its single words.
struct BigramSource;
/// BM25 over the words of the quoted phrases, among events holding all of them (the
/// filter then checks each phrase itself).
struct PhraseSource;
/// HDC similarity of the query vector, searched in the vector tiers.
struct VectorSource;
/// Embedding similarity in the project's semantic space (the caller's embeddings or the
/// static model's).
struct SemanticSource;
/// Events of the episodes (and concept) nearest the query.
struct EpisodicSource;
/// Spreading activation over synapses from the seeds (thread neighbours, co-recalled
/// memories), one hop.
struct RippleSource;

/// The sources in the order they run (direct ones first: ripple starts from them).
const SOURCES: &[&dyn Source] = &[
    &LexicalSource,
    &BigramSource,
    &PhraseSource,
    &VectorSource,
    &SemanticSource,
    &EpisodicSource,
    &RippleSource,
];

impl Source for LexicalSource {
    fn name(&self) -> Signal {
        Signal::Bm25
    }
    fn weight(&self, s: &crate::config::RecallSettings) -> f64 {
        s.fts_weight
    }
    fn gather(&self, _: &Memory, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        Ok(probe
            .text
            .postings
            .search(&probe.terms, SOURCE_DEPTH)
            .into_iter()
            .map(bm25_score)
            .collect())
    }
}

impl Source for BigramSource {
    fn name(&self) -> Signal {
        Signal::Bigram
    }
    fn weight(&self, s: &crate::config::RecallSettings) -> f64 {
        s.bigram_weight
    }
    fn gather(&self, _: &Memory, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        let pairs = lexical::bigrams(&crate::text::tokens(&probe.compiled.text));
        Ok(probe
            .text
            .bigrams
            .search(&pairs, SOURCE_DEPTH)
            .into_iter()
            .map(bm25_score)
            .collect())
    }
}

impl Source for PhraseSource {
    fn name(&self) -> Signal {
        Signal::Phrase
    }
    fn weight(&self, s: &crate::config::RecallSettings) -> f64 {
        s.fts_weight
    }
    fn gather(&self, _: &Memory, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        if probe.compiled.phrases.is_empty() {
            return Ok(Vec::new());
        }
        let words: Vec<String> = probe
            .compiled
            .phrases
            .iter()
            .flat_map(|p| crate::text::tokens(p))
            .collect();
        Ok(probe
            .text
            .postings
            .search_all(&words, SOURCE_DEPTH)
            .into_iter()
            .map(bm25_score)
            .collect())
    }
}

impl Source for VectorSource {
    fn name(&self) -> Signal {
        Signal::Vector
    }
    fn weight(&self, s: &crate::config::RecallSettings) -> f64 {
        s.vector_weight
    }
    fn gather(&self, memory: &Memory, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        let Some(q) = probe.vector else {
            return Ok(Vec::new());
        };
        let hits = memory
            .tiers
            .search(probe.project, &SearchRequest::new(q.view(), SOURCE_DEPTH))?;
        let d = memory.profile.dim.bits() as f64;
        Ok(hits
            .iter()
            .map(|h| (h.id.0, 1.0 - 2.0 * f64::from(h.distance) / d))
            .collect())
    }
}

impl Source for SemanticSource {
    fn name(&self) -> Signal {
        Signal::Semantic
    }
    fn weight(&self, s: &crate::config::RecallSettings) -> f64 {
        s.semantic_weight
    }
    fn gather(&self, _: &Memory, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        let Some((space, q)) = probe.semantic else {
            return Ok(Vec::new());
        };
        Ok(space.reading().search(q, SOURCE_DEPTH)?)
    }
}

impl Source for EpisodicSource {
    fn name(&self) -> Signal {
        Signal::Episode
    }
    fn weight(&self, s: &crate::config::RecallSettings) -> f64 {
        s.episode_weight
    }
    fn gather(&self, memory: &Memory, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        match probe.vector {
            Some(q) => memory.episodic_candidates(probe.project, q),
            None => Ok(Vec::new()),
        }
    }
}

impl Source for RippleSource {
    fn name(&self) -> Signal {
        Signal::Ripple
    }
    fn evidence(&self) -> Evidence {
        Evidence::Associative
    }
    fn weight(&self, s: &crate::config::RecallSettings) -> f64 {
        s.ripple_weight
    }
    fn gather(&self, memory: &Memory, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        let mut linked: Vec<(u64, f64)> = memory
            .cognition
            .ripple(
                probe.project,
                &probe.seeds,
                // One hop: deeper hops gave the same results on BEAM, at more queries.
                RippleParams {
                    max_depth: 1,
                    decay: false,
                    ..RippleParams::default()
                },
            )?
            .into_iter()
            .filter(|a| !probe.seeds.contains(&a.id))
            .map(|a| (a.id, a.activation))
            .collect();
        linked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(linked)
    }
}

#[cfg(test)]
mod tests {
    use super::chance_best;
    use hdv::SeededRng;

    #[test]
    fn chance_best_bounds_the_largest_of_n_normal_draws_at_its_confidence() {
        let mut rng = SeededRng::new(5);
        for n in [64u64, 1_000, 10_000] {
            let threshold = chance_best(n, 0.95);
            let trials = 1_000;
            let below = (0..trials)
                .filter(|_| {
                    let mut best = f64::MIN;
                    for _ in 0..n.div_ceil(2) {
                        let (a, b) = rng.gaussian_pair();
                        best = best.max(a).max(b);
                    }
                    best < threshold
                })
                .count();
            let share = below as f64 / trials as f64;
            // The extreme-value limit is slightly conservative at finite n.
            assert!(
                (0.93..=0.99).contains(&share),
                "n {n}: {share} below {threshold}"
            );
        }
        assert!(chance_best(100_000, 0.95) > chance_best(1_000, 0.95));
        assert!(chance_best(1_000, 0.99) > chance_best(1_000, 0.95));
        assert!(chance_best(0, 0.95).is_finite());
    }
}
