//! Recall's candidate sources and their fusion: each [`Source`] reads the read-only
//! [`Context`] and the [`Plan`] and returns a ranked list; [`gather`] runs them in order
//! (direct ones first, then the associative ones from the best fused candidates) and
//! fuses the lists ([`crate::recall::fusion`]).

use std::collections::{HashMap, HashSet};

use super::plan::{Context, Plan};
use crate::Result;
use crate::cognition::{EpisodeId, RippleParams};
use crate::config::RecallSettings;
use crate::index::lexical::ProjectText;
use crate::recall::Signal;
use crate::recall::fusion::{self, Candidate, Evidence, Scored};
use crate::store::{SearchRequest, VectorId};
use crate::sync::RecoverRw as _;

/// Candidates each direct source of recall returns to fusion: deep enough that the last
/// one (normalized to 0) is background, not a near miss; 100 and 400 were measured on
/// the three development sets and lost (nineteenth session, `docs/EXPERIMENTS.md`).
const SOURCE_DEPTH: usize = 200;
/// Events the episodic source returns.
const EPISODE_EVENTS: usize = 50;
/// Episodes (and concept-supporting episodes) whose events join recall as a source.
const EPISODES: usize = 2;
/// Topic (or prototype) similarity an episode (or concept) needs to be a source: about
/// 4.5 standard deviations of chance (1/√D) at D = 8,192.
const EPISODE_SIMILARITY: f64 = 0.05;
/// Fused candidates read past the sources (at least 1.5 × k): the stages work on these.
const FETCH_WINDOW: usize = 60;
/// The best fused direct candidates the associative sources start from.
const SEEDS: usize = 3;

/// What a source reads besides the context: the plan, the project's lexical index (read
/// locked for the duration of the sources) and, for associative sources, the seeds.
pub(super) struct Probe<'a> {
    pub plan: &'a Plan<'a>,
    pub text: &'a ProjectText,
    /// The best fused candidates of the direct sources (where associative ones start).
    pub seeds: Vec<u64>,
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
    fn weight(&self, settings: &RecallSettings) -> f64;
    /// Its candidates.
    fn gather(&self, cx: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>>;
}

/// The fused candidates of one recall, best first, with what the stages need of the
/// source lists.
pub(super) struct Gathered {
    /// At most [`FETCH_WINDOW`] (or 1.5 × k) candidates, best first.
    pub candidates: Vec<Candidate>,
    /// Exact HDC similarities of the vector source's hits.
    pub similarity: HashMap<u64, f64>,
    /// Every candidate a lexical source returned (a neighbour of one is linked to
    /// evidence).
    pub lexical: HashSet<u64>,
}

/// Runs every source with a weight and fuses their lists.
///
/// # Errors
/// Store and cognition errors of a source.
pub(super) fn gather(cx: &Context<'_>, plan: &Plan<'_>) -> Result<Gathered> {
    let text = cx.text.reading();
    let mut probe = Probe {
        plan,
        text: &text,
        seeds: Vec::new(),
    };
    let mut lists = Vec::new();
    // The direct sources are fused once; the associative ones start from its best
    // candidates and are added to it.
    let mut fused: Option<fusion::Fusion> = None;
    let (direct, associative): (Vec<&dyn Source>, Vec<&dyn Source>) = SOURCES
        .iter()
        .partition(|s| s.evidence() == Evidence::Direct);
    for source in direct.into_iter().chain(associative) {
        let weight = source.weight(&cx.settings);
        if weight <= 0.0 {
            continue;
        }
        let is_associative = source.evidence() == Evidence::Associative;
        if is_associative && fused.is_none() {
            let direct = fusion::Fusion::direct(&lists, &text.chronology, plan.fusion);
            probe.seeds = direct.best(SEEDS);
            fused = Some(direct);
        }
        let hits = source.gather(cx, &probe)?;
        if !hits.is_empty() {
            let list = Scored {
                source: source.name(),
                weight,
                evidence: source.evidence(),
                exhaustive: hits.len() < SOURCE_DEPTH,
                hits,
            };
            match &mut fused {
                Some(f) if is_associative => f.associate(&list),
                _ => lists.push(list),
            }
        }
    }
    let fused =
        fused.unwrap_or_else(|| fusion::Fusion::direct(&lists, &text.chronology, plan.fusion));
    let mut candidates = fused.ranked();
    candidates.truncate(FETCH_WINDOW.max(plan.rq.k + plan.rq.k / 2));
    Ok(Gathered {
        candidates,
        similarity: lists
            .iter()
            .filter(|l| l.source == Signal::Vector)
            .flat_map(|l| l.hits.iter().copied())
            .collect(),
        lexical: lists
            .iter()
            .filter(|l| l.source.is_lexical())
            .flat_map(|l| l.hits.iter().map(|h| h.0))
            .collect(),
    })
}

/// BM25 over the in-memory postings ([`lexical`]).
struct LexicalSource;
/// BM25 over the query's word pairs ([`crate::index::lexical::bigrams`]): phrasing the query shares
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

/// A BM25 hit as a source score.
fn bm25_score((id, score): (u64, f32)) -> (u64, f64) {
    (id, f64::from(score))
}

impl Source for LexicalSource {
    fn name(&self) -> Signal {
        Signal::Bm25
    }
    fn weight(&self, s: &RecallSettings) -> f64 {
        s.fts_weight
    }
    fn gather(&self, _: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        Ok(probe
            .text
            .postings
            .search_weighted(&probe.plan.terms, SOURCE_DEPTH)
            .into_iter()
            .map(bm25_score)
            .collect())
    }
}

impl Source for BigramSource {
    fn name(&self) -> Signal {
        Signal::Bigram
    }
    fn weight(&self, s: &RecallSettings) -> f64 {
        s.bigram_weight
    }
    fn gather(&self, _: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        Ok(probe
            .text
            .bigrams
            .search_weighted(&probe.plan.pairs, SOURCE_DEPTH)
            .into_iter()
            .map(bm25_score)
            .collect())
    }
}

impl Source for PhraseSource {
    fn name(&self) -> Signal {
        Signal::Phrase
    }
    fn weight(&self, s: &RecallSettings) -> f64 {
        s.fts_weight
    }
    fn gather(&self, _: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        let phrases = &probe.plan.compiled.phrases;
        if phrases.is_empty() {
            return Ok(Vec::new());
        }
        let words: Vec<String> = phrases
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
    fn weight(&self, s: &RecallSettings) -> f64 {
        s.vector_weight
    }
    fn gather(&self, cx: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        let Some(q) = &probe.plan.vector else {
            return Ok(Vec::new());
        };
        let hits = cx
            .tiers
            .search(cx.project, &SearchRequest::new(q.view(), SOURCE_DEPTH))?;
        Ok(hits
            .iter()
            .map(|h| (h.id.0, cx.similarity(h.distance)))
            .collect())
    }
}

impl Source for SemanticSource {
    fn name(&self) -> Signal {
        Signal::Semantic
    }
    fn weight(&self, s: &RecallSettings) -> f64 {
        s.semantic_weight
    }
    fn gather(&self, _: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        let Some((space, q)) = &probe.plan.semantic else {
            return Ok(Vec::new());
        };
        Ok(space.reading().search(q, SOURCE_DEPTH)?)
    }
}

impl Source for EpisodicSource {
    fn name(&self) -> Signal {
        Signal::Episode
    }
    fn weight(&self, s: &RecallSettings) -> f64 {
        s.episode_weight
    }
    /// Events of the sealed episodes whose topic is nearest the query, and of the episodes
    /// supporting the nearest concept (each only above [`EPISODE_SIMILARITY`]), best first
    /// by their own similarity to the query.
    fn gather(&self, cx: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        let Some(query) = &probe.plan.vector else {
            return Ok(Vec::new());
        };
        let mut episodes: Vec<EpisodeId> = cx
            .cognition
            .similar_episodes(cx.project, query, EPISODES)?
            .into_iter()
            .filter(|(_, s)| *s >= EPISODE_SIMILARITY)
            .map(|(id, _)| id)
            .collect();
        let best_concept = cx
            .cognition
            .concepts(cx.project)?
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
            for event in cx.cognition.episode(cx.project, id)?.events {
                if let Some(v) = cx.tiers.get(cx.project, VectorId(event.0))? {
                    scored.push((query.hamming(&v), event.0));
                }
            }
        }
        scored.sort_unstable();
        scored.dedup_by_key(|s| s.1);
        Ok(scored
            .into_iter()
            .take(EPISODE_EVENTS)
            .map(|(h, id)| (id, cx.similarity(h)))
            .collect())
    }
}

impl Source for RippleSource {
    fn name(&self) -> Signal {
        Signal::Ripple
    }
    fn evidence(&self) -> Evidence {
        Evidence::Associative
    }
    fn weight(&self, s: &RecallSettings) -> f64 {
        s.ripple_weight
    }
    fn gather(&self, cx: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        let mut linked: Vec<(u64, f64)> = cx
            .cognition
            .ripple(
                cx.project,
                &probe.seeds,
                // One hop: deeper hops gave the same results, at more queries.
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
