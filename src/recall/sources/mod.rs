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

mod episodic;
mod lexical;
mod ripple;
mod semantic;
mod vector;

use episodic::EpisodicSource;
use lexical::{BigramSource, LexicalSource, PhraseSource};
use ripple::RippleSource;
use semantic::SemanticSource;
use vector::VectorSource;

/// Candidates each direct source of recall returns to fusion: deep enough that the last
/// one (normalized to 0) is background, not a near miss; 100 and 400 were measured on
/// the three development sets and lost (nineteenth session, `docs/EXPERIMENTS.md`).
pub(super) const SOURCE_DEPTH: usize = 200;
/// Events the episodic source returns.
pub(super) const EPISODE_EVENTS: usize = 50;
/// Episodes (and concept-supporting episodes) whose events join recall as a source.
pub(super) const EPISODES: usize = 2;
/// Topic (or prototype) similarity an episode (or concept) needs to be a source: about
/// 4.5 standard deviations of chance (1/√D) at D = 8,192.
pub(super) const EPISODE_SIMILARITY: f64 = 0.05;
/// Fused candidates read past the sources (at least 1.5 × k): the stages work on these.
const FETCH_WINDOW: usize = 60;
/// The best fused direct candidates the associative sources start from.
pub(super) const SEEDS: usize = 3;

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
pub(super) trait Source: Sync {
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
