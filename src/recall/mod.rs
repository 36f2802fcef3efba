//! Recall: from a question to ranked, explained memories or a budgeted context pack. One
//! recall reads in order:
//!
//! - [`query`]: the text compiles into words, quoted phrases, filters and a time hint;
//! - [`plan`]: the read-only [`Context`](plan::Context) of the project (built by the
//!   facade) and the [`Plan`](plan::Plan) compiled from it once per request (terms, query
//!   vectors, baselines, floors);
//! - [`sources`]: each candidate source returns a ranked list; [`fusion`] combines them
//!   (per-query normalization, bounded neighbour and session evidence, a monotone order);
//! - [`stages`]: filters, gap and floor, folding, priors, order, supersession
//!   ([`supersede`], reading typed [`values`]), directive slots, each with its switch;
//! - [`pack`]: context packs, one more consumer of the same compiled query, filled under a
//!   token budget (25 % of the caller's available tokens by default, never more than 30 %,
//!   invariant 8) with a receipt for every candidate.
//!
//! Recall reads the lexical index (`index::lexical`), the ledger, the vector tiers,
//! cognition and the semantic space; it writes nothing (the facade logs the trace).

pub mod fusion;
pub mod pack;
mod plan;
pub mod query;
mod sources;
mod stages;
pub mod supersede;
pub mod values;

use crate::error::Result;
use crate::index::lexical::{TurnLength, TurnRegime};
use crate::ledger::{Event, EventId};
pub(crate) use plan::Context;
use plan::Plan;
use query::CompiledQuery;

pub use pack::{
    Anchor, DEFAULT_BUDGET_SHARE, EXCERPT_MIN_TOKENS, MAX_BUDGET_SHARE, Pack, PackCandidate,
    ReceiptLine, Slot, estimate_tokens, fill, pack_budget,
};

crate::base::names! {
    /// What a part of a fused score comes from: a source that scored the item, evidence it
    /// borrowed from the turns around it, or a prior. Serialized by name (`"bm25"`, …), the
    /// names `--weight` and `--sources` take.
    pub enum Signal {
        /// BM25 over the lexical index.
        Bm25 = "bm25",
        /// BM25 over word pairs.
        Bigram = "bigram",
        /// BM25 over the words of quoted phrases.
        Phrase = "phrase",
        /// HDC similarity in the vector tiers.
        Vector = "vector",
        /// Embedding similarity in the semantic space.
        Semantic = "semantic",
        /// Events of the nearest episodes and concept.
        Episode = "episode",
        /// Spreading activation over synapses (associative).
        Ripple = "ripple",
        /// A share of the direct evidence of the turn before or after it in its session; its
        /// rank field holds the lending turn's id.
        Neighbour = "neighbour",
        /// A share of the best direct evidence of its session.
        Session = "session",
        /// Role prior: the user said it.
        User = "user",
        /// It happened inside the window of a time hint in the query.
        Hint = "hint",
        /// It states a value of the kind the question asks for (a date for "when").
        Answer = "answer",
        /// It tells something: it does not only ask.
        Tells = "tells",
        /// A speaker the query names said it.
        Speaker = "speaker",
        /// A quoted phrase of the query that no candidate contains verbatim, counted as a
        /// boost for the items that do hold it nearly (its words) instead of a filter.
        PhraseBoost = "phrase_boost",
        /// A standing directive given its own slot.
        Directive = "directive",
        /// It continues the answer it follows in their conversation: a later statement
        /// that gives another value of the same kind without saying what it is of ("make
        /// that 5 kg" after "need 3 kg of flour"); its rank field holds that answer's id,
        /// and its contribution is that answer's evidence.
        Continues = "continues",
        /// What the ordering added to show the item no lower than the one below it
        /// (displayed scores never rise down a list; not evidence).
        Placed = "placed",
    }
}

impl Signal {
    /// A source that scored the query against the item itself (its rank in the
    /// breakdown is its place in that source's list).
    pub const fn is_direct_source(self) -> bool {
        matches!(
            self,
            Self::Bm25
                | Self::Bigram
                | Self::Phrase
                | Self::Vector
                | Self::Semantic
                | Self::Episode
        )
    }

    /// A direct component a stage adds to every candidate ([`fusion::add_component`]):
    /// evidence about the item itself that the order's dominance and unanimity compare.
    pub const fn is_component(self) -> bool {
        matches!(
            self,
            Self::Hint | Self::Answer | Self::Tells | Self::Speaker
        )
    }

    /// Lexical evidence of the item's own text.
    pub const fn is_lexical(self) -> bool {
        matches!(self, Self::Bm25 | Self::Bigram | Self::Phrase)
    }

    /// A prior: not evidence that the item matches the query's words or meaning (its
    /// role, its time, its session, the kind of value it states, a phrase it nearly
    /// holds). A neighbour's share is borrowed evidence, not a prior.
    pub const fn is_prior(self) -> bool {
        matches!(
            self,
            Self::User
                | Self::Hint
                | Self::Answer
                | Self::Tells
                | Self::Speaker
                | Self::Session
                | Self::PhraseBoost
                | Self::Placed
        )
    }
}

/// A fused item: total score and each source's contribution.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Fused {
    /// The item.
    pub id: u64,
    /// Fused score (sum of contributions).
    pub score: f64,
    /// Each part of the score, in the order they were added.
    pub breakdown: Vec<Part>,
}

/// What a part of a fused score is tied to besides its signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Its 1-based place in the list of the source that scored the item (a direct source,
    /// ripple, a directive's slot).
    Rank(usize),
    /// The turn whose evidence the item borrowed (its neighbour share).
    Lender(u64),
    /// None: a prior or a component every candidate is given.
    Prior,
}

/// One part of a fused score: its signal, what it is tied to, and its contribution.
/// Serialized as `[signal, n, contribution]`, `n` the rank, the lending turn's id, or 0.
#[derive(
    Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(from = "(Signal, u64, f64)", into = "(Signal, u64, f64)")]
pub struct Part {
    /// Where it comes from.
    pub signal: Signal,
    /// What it is tied to.
    pub place: Place,
    /// Its contribution to the fused score.
    pub score: f64,
}

impl Part {
    /// A part from a source's list, at 1-based `rank`.
    pub const fn ranked(signal: Signal, rank: usize, score: f64) -> Self {
        Self {
            signal,
            place: Place::Rank(rank),
            score,
        }
    }

    /// A prior or component.
    pub const fn prior(signal: Signal, score: f64) -> Self {
        Self {
            signal,
            place: Place::Prior,
            score,
        }
    }

    /// The evidence of `antecedent`, which the item continues ([`Signal::Continues`]).
    pub const fn continues(antecedent: u64, score: f64) -> Self {
        Self {
            signal: Signal::Continues,
            place: Place::Lender(antecedent),
            score,
        }
    }

    /// A neighbour share borrowed from `lender`.
    pub const fn lent(lender: u64, score: f64) -> Self {
        Self {
            signal: Signal::Neighbour,
            place: Place::Lender(lender),
            score,
        }
    }

    /// Its rank in its source's list, when it has one.
    pub const fn rank(&self) -> Option<usize> {
        match self.place {
            Place::Rank(r) => Some(r),
            _ => None,
        }
    }

    /// The turn it was borrowed from, when it is a neighbour share.
    pub const fn lender(&self) -> Option<u64> {
        match self.place {
            Place::Lender(id) => Some(id),
            _ => None,
        }
    }

    /// Its number in the serialized form: the rank, the lender's id, or 0.
    pub const fn number(&self) -> u64 {
        match self.place {
            Place::Rank(r) => r as u64,
            Place::Lender(id) => id,
            Place::Prior => 0,
        }
    }
}

impl From<(Signal, u64, f64)> for Part {
    fn from((signal, n, score): (Signal, u64, f64)) -> Self {
        let place = match (signal, n) {
            (Signal::Neighbour, id) => Place::Lender(id),
            (_, 0) => Place::Prior,
            (_, rank) => Place::Rank(usize::try_from(rank).unwrap_or(usize::MAX)),
        };
        Self {
            signal,
            place,
            score,
        }
    }
}

impl From<Part> for (Signal, u64, f64) {
    fn from(p: Part) -> Self {
        (p.signal, p.number(), p.score)
    }
}

/// A recalled memory with its score breakdown and source anchor.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RecallItem {
    /// The raw event (the anchor: id, thread, turn, content).
    pub event: Event,
    /// Fused score and each source's contribution.
    pub fused: Fused,
    /// HDC similarity to the query, when the vector source found it.
    pub similarity: Option<f64>,
    /// The older event this one was moved above because it states a newer value
    /// (recall-time supersession, [`supersede`]).
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
    /// Read-your-writes: the sequence (the id a write returned) the ledger this node reads
    /// must have reached before the recall runs; it waits up to `wait` for it, then
    /// refuses as `not_caught_up`.
    pub at_least: Option<u64>,
    /// How long a recall waits for `at_least` (at most [`MAX_SEQUENCE_WAIT`]).
    pub wait: std::time::Duration,
}

/// How long a read waits at most for the sequence it asks to see (requests asking for
/// longer are refused as invalid).
pub const MAX_SEQUENCE_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// How long a read waits for its sequence when it does not say.
pub const DEFAULT_SEQUENCE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

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
            at_least: None,
            wait: DEFAULT_SEQUENCE_WAIT,
        }
    }
}

crate::base::names! {
    /// Why recall did not return a candidate, by a stable snake_case name.
    pub enum SuppressReason {
        /// An event of the caller's own session.
        SameSessionEcho = "same_session_echo",
        /// Outside the `since:` / `until:` window (or the time hint's, with no candidate
        /// inside it).
        OutsideTimeWindow = "outside_time_window",
        /// Another agent than the one asked for.
        AnotherAgent = "another_agent",
        /// Another thread than the one asked for.
        AnotherThread = "another_thread",
        /// Another session than the one asked for.
        AnotherSession = "another_session",
        /// Another source than the one asked for.
        AnotherSource = "another_source",
        /// Another role than the one asked for.
        AnotherRole = "another_role",
        /// Another kind than the one asked for.
        AnotherKind = "another_kind",
        /// It does not hold a quoted phrase verbatim.
        MissingPhrase = "missing_phrase",
        /// Nothing in the project answers the query (a knowledge gap).
        KnowledgeGap = "knowledge_gap",
        /// No evidence of its own above the project's relevance floor.
        BelowFloor = "below_floor",
    }
}

/// A suppressed candidate's reason and what it was in words.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Suppression {
    /// The stable reason.
    pub reason: SuppressReason,
    /// The detail in words (the filter's value, the floor and the similarity).
    pub detail: String,
}

impl Suppression {
    /// A suppression for `reason` with `detail`.
    pub fn new(reason: SuppressReason, detail: impl Into<String>) -> Self {
        Self {
            reason,
            detail: detail.into(),
        }
    }
}

impl std::fmt::Display for Suppression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.detail)
    }
}

/// Recall results and the candidates the filters suppressed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RecallResult {
    /// Results, best first.
    pub items: Vec<RecallItem>,
    /// Suppressed candidates with the reason.
    pub suppressed: Vec<(EventId, Suppression)>,
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
    /// Which of the turn-length rules the project got.
    #[serde(default)]
    pub turn_regime: RegimeReport,
}

/// Which of the rules that depend on turn length a project gets: the profile's
/// `[recall] turn_regime`, the project's average turn length and what they select
/// ([`crate::index::lexical::TurnRegime`]).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub struct RegimeReport {
    /// The setting.
    pub setting: TurnRegime,
    /// The project's average turn length in tokens (a short reply's context at half
    /// weight), to two decimals.
    pub average_tokens: f64,
    /// The rules applied.
    pub reads_as: TurnLength,
}

impl RegimeReport {
    /// The report for `postings` (whose regime is the profile's).
    pub fn of(postings: &crate::index::lexical::Postings) -> Self {
        Self {
            setting: postings.regime(),
            average_tokens: (f64::from(postings.average_tokens()) * 100.0).round() / 100.0,
            reads_as: TurnRegime::reads_as(postings.turn_tokens()),
        }
    }
}

/// One recall's answer and whether anything in it answers the query (the knowledge-gap
/// decision the facade logs).
pub(crate) struct Recalled {
    /// The answer.
    pub result: RecallResult,
    /// Some candidate held evidence of its own above the answer floors.
    pub answered: bool,
}

/// Runs one recall on a validated, compiled request: the plan, the sources and their
/// fusion, every stage that is on, the first `k`, each as an item with its context window
/// when asked for.
///
/// # Errors
/// Store, ledger and cognition errors of the plan, a source or a stage.
pub(crate) fn run(
    cx: &Context<'_>,
    rq: &RecallQuery<'_>,
    compiled: &CompiledQuery,
) -> Result<Recalled> {
    // A recall its caller abandoned (a server answered `timeout`) stops at the next step.
    let plan = Plan::compile(cx, rq, compiled)?;
    crate::ledger::go_on()?;
    let gathered = sources::gather(cx, &plan)?;
    crate::ledger::go_on()?;
    let mut run = stages::Run::fetch(cx, &plan, gathered)?;
    for stage in stages::STAGES {
        if stage.on(&cx.settings, &plan) {
            crate::ledger::go_on()?;
            stage.apply(cx, &plan, &mut run)?;
        }
    }
    run.truncate(rq.k);
    let items = items(cx, &plan, &mut run)?;
    Ok(Recalled {
        result: RecallResult {
            items,
            suppressed: std::mem::take(&mut run.suppressed),
            time_hint_ignored: run.hint_ignored,
            phrases_ignored: std::mem::take(&mut run.phrases_ignored),
            unembedded: None,
            turn_regime: RegimeReport::of(&crate::sync::RecoverRw::reading(&*cx.text).postings),
        },
        answered: run.answered,
    })
}

/// The run's ranking as recall items, each with its context window when asked for.
fn items(cx: &Context<'_>, plan: &Plan<'_>, run: &mut stages::Run) -> Result<Vec<RecallItem>> {
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

#[cfg(test)]
mod tests {
    use super::{Part, Place, Signal};

    #[test]
    fn a_part_says_what_its_number_means_and_serializes_as_before() {
        let parts = [
            Part::ranked(Signal::Bm25, 3, 0.5),
            Part::lent(42, 0.25),
            Part::prior(Signal::Session, 0.125),
            Part::ranked(Signal::Directive, 1, 0.0),
        ];
        assert_eq!(parts[0].rank(), Some(3));
        assert_eq!(parts[0].lender(), None);
        assert_eq!(parts[1].lender(), Some(42));
        assert_eq!(parts[1].rank(), None);
        assert_eq!(parts[2].place, Place::Prior);
        let json = serde_json::to_string(&parts).unwrap();
        assert_eq!(
            json,
            r#"[["bm25",3,0.5],["neighbour",42,0.25],["session",0,0.125],["directive",1,0.0]]"#
        );
        let back: Vec<Part> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, parts);
    }
}
