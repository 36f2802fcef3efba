//! Recall's stages: what happens to the fused candidates between the sources and the
//! answer, in order ([`STAGES`]). Each stage owns its settings and its switch; each
//! reads the read-only [`Context`] and the [`Plan`] and changes only the [`Run`].
//!
//! 1. [`SoftFilters`]: a time hint no candidate falls inside, a quoted phrase no
//!    candidate holds, are ignored (and reported) instead of emptying the answer.
//! 2. [`Admit`]: the governance filters, the knowledge-gap decision and the relevance
//!    floor; every refusal is listed with its reason.
//! 3. [`Fold`]: one slot per text (texts equal once folded are one item).
//! 4. [`Priors`]: the role prior and the time hint's window.
//! 5. [`Speakers`], [`Tells`], [`Answers`]: what a person the question names said, what
//!    tells something (not only asks), what states a value of the kind the question asks
//!    for.
//! 6. [`Order`]: fusion's monotone order, items with evidence of their own before
//!    associative fillers.
//! 7. [`Supersede`]: a newer value about the same subject moves above the older one;
//!    another owner's value of what the question asks about goes after the rest.
//! 8. [`Governed`]: evidence only of corrected beliefs goes after the rest of the head.
//! 9. [`Directives`]: standing directives close to the query take slots after the first
//!    answers.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use super::plan::{Context, FLOOR_SIGMAS, Plan, SUBJECT_TURNS, outside};
use super::sources::Gathered;
use crate::Result;
use crate::base::VectorId;
use crate::config::RecallSettings;
use crate::governance::BeliefStatus;
use crate::index::lexical;
use crate::ledger::{Event, EventId, Role};
use crate::recall::fusion::{self, Candidate};
use crate::recall::{Fused, Part, Signal, SuppressReason, Suppression, supersede};
use crate::sync::RecoverRw as _;
use crate::text::statements;

mod admit;
mod answers;
mod directives;
mod fold;
mod governed;
mod order;
mod placed;
mod priors;
mod soft_filters;
mod speakers;
mod supersession;
mod tells;

use admit::Admit;
use answers::Answers;
use directives::Directives;
use fold::Fold;
use governed::Governed;
use order::Order;
use placed::Placed;
use priors::Priors;
use soft_filters::SoftFilters;
use speakers::Speakers;
use supersession::Supersede;
use tells::Tells;

/// Places a directive slot comes after ([`Directives`]): the best answers keep the first
/// places, and a directive close to the query follows them instead of closing the list,
/// where a reader who takes the first few would miss it (positions 3 to 7 and the end
/// measured: `docs/EXPERIMENTS.md`).
pub(super) const DIRECTIVES_AFTER: usize = 5;

/// Head of the ranking that supersession (recall-time and governed) reorders.
pub(super) const RERANK_WINDOW: usize = 10;

/// A stage of recall.
pub(super) trait Stage: Sync {
    /// Whether the profile (or the plan) turns it on.
    fn on(&self, _settings: &RecallSettings, _plan: &Plan<'_>) -> bool {
        true
    }
    /// Applies it to the run.
    ///
    /// # Errors
    /// Ledger and store errors.
    fn apply(&self, cx: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()>;
}

/// The stages in the order they run.
pub(super) const STAGES: &[&dyn Stage] = &[
    &SoftFilters,
    &Admit,
    &Fold,
    &Priors,
    &Speakers,
    &Tells,
    &Answers,
    &Order,
    &Supersede,
    &Governed,
    &Directives,
    &Placed,
];

/// A candidate with its event, before [`Order`].
pub(super) struct Admitted {
    pub c: Candidate,
    pub event: Event,
    /// No evidence of its own: it is here by a link to evidence (a filler).
    pub filler: bool,
}

/// A ranked item, after [`Order`].
pub(super) struct Ranked {
    pub fused: Fused,
    pub event: Event,
    /// It has no evidence of its own (see [`super::RecallItem::associative`]).
    pub associative: bool,
}

/// One recall in progress: the candidates the stages work on and what they found.
#[derive(Default)]
pub(super) struct Run {
    /// Candidates with their events, best fused first (until [`Order`]).
    pub candidates: Vec<Admitted>,
    /// The ranking (from [`Order`] on).
    pub ranked: Vec<Ranked>,
    /// HDC similarity to the query of each candidate that has a vector.
    pub similarity: HashMap<u64, f64>,
    /// Every candidate a lexical source returned.
    pub lexical: HashSet<u64>,
    /// Refused candidates with the reason.
    pub suppressed: Vec<(EventId, Suppression)>,
    /// The time hint's window was ignored (no candidate fell inside it).
    pub hint_ignored: bool,
    /// Quoted phrases no candidate holds verbatim (a lift, not a filter).
    pub phrases_ignored: Vec<String>,
    /// Some admitted candidate answers the query (otherwise it is a knowledge gap).
    pub answered: bool,
    /// Folded text → the item holding it.
    pub folded: HashMap<String, u64>,
    /// Item → the other events with its text.
    pub duplicates: HashMap<u64, Vec<EventId>>,
    /// Item → the older event it was moved above (recall-time supersession).
    pub supersedes: HashMap<u64, u64>,
    /// Item → `(key, version)` of the superseded belief it is evidence of.
    pub outdated: HashMap<u64, (String, u64)>,
}

impl Run {
    /// Reads the events of the gathered candidates (those the ledger still holds) and the
    /// HDC similarity to the query of those the vector source did not score.
    ///
    /// # Errors
    /// Ledger and store errors.
    pub fn fetch(cx: &Context<'_>, plan: &Plan<'_>, gathered: Gathered) -> Result<Self> {
        let Gathered {
            candidates,
            mut similarity,
            lexical,
        } = gathered;
        let ids: Vec<EventId> = candidates.iter().map(|c| EventId(c.fused.id)).collect();
        let events = cx.ledger.get_many(cx.project, &ids)?;
        let mut fetched = Vec::with_capacity(candidates.len());
        for (c, event) in candidates.into_iter().zip(events) {
            let Some(event) = event else { continue };
            if let Some(q) = &plan.vector
                && !similarity.contains_key(&c.fused.id)
                && let Some(v) = cx.tiers.get(cx.project, VectorId(c.fused.id))?
            {
                similarity.insert(c.fused.id, q.similarity(&v));
            }
            fetched.push(Admitted {
                c,
                event,
                filler: false,
            });
        }
        Ok(Self {
            candidates: fetched,
            similarity,
            lexical,
            ..Self::default()
        })
    }

    /// Why `event` must not be returned, if it must not: the caller's filters
    /// ([`super::RecallQuery`]) and those compiled from the query text.
    pub fn suppresses(&self, plan: &Plan<'_>, event: &Event) -> Option<Suppression> {
        let (rq, q) = (plan.rq, plan.compiled);
        if rq.session.is_some() && event.session.as_deref() == rq.session {
            return Some(Suppression::new(
                SuppressReason::SameSessionEcho,
                "same-session echo",
            ));
        }
        // A time hint's window only lifts what falls inside it ([`Priors`]); explicit
        // `since:` / `until:` filter.
        if outside(event, rq.since, rq.until) || (!q.hinted && outside(event, q.since, q.until)) {
            return Some(Suppression::new(
                SuppressReason::OutsideTimeWindow,
                "outside the time window",
            ));
        }
        let differs = |want: Option<&str>, have: Option<&str>| want.is_some() && want != have;
        if differs(rq.agent, event.agent.as_deref())
            || differs(q.agent.as_deref(), event.agent.as_deref())
        {
            return Some(Suppression::new(
                SuppressReason::AnotherAgent,
                "another agent",
            ));
        }
        if differs(rq.thread, event.thread.as_deref())
            || differs(q.thread.as_deref(), event.thread.as_deref())
        {
            return Some(Suppression::new(
                SuppressReason::AnotherThread,
                "another thread",
            ));
        }
        if differs(q.session.as_deref(), event.session.as_deref()) {
            return Some(Suppression::new(
                SuppressReason::AnotherSession,
                "another session",
            ));
        }
        if differs(q.source.as_deref(), event.source.as_deref()) {
            return Some(Suppression::new(
                SuppressReason::AnotherSource,
                "another source",
            ));
        }
        if let Some(role) = q.role.filter(|&r| r != event.role) {
            return Some(Suppression::new(
                SuppressReason::AnotherRole,
                format!("role {} is not {role}", event.role),
            ));
        }
        if let Some(kind) = q.kind.filter(|&k| k != event.kind) {
            return Some(Suppression::new(
                SuppressReason::AnotherKind,
                format!("kind {} is not {kind}", event.kind),
            ));
        }
        // The first quoted phrase that filters and that the event does not hold.
        let mut filtering = q
            .phrases
            .iter()
            .filter(|p| !self.phrases_ignored.contains(p))
            .peekable();
        if filtering.peek().is_some() {
            let content = crate::recall::query::normalize(&event.content);
            if let Some(missing) = filtering.find(|p| !content.contains(p.as_str())) {
                return Some(Suppression::new(
                    SuppressReason::MissingPhrase,
                    format!("does not contain the phrase \"{missing}\""),
                ));
            }
        }
        None
    }

    /// The `k` best items, the rest dropped.
    pub fn truncate(&mut self, k: usize) {
        self.ranked.truncate(k);
    }
}

/// Adds `signal` as a direct component to every candidate: `weight` where `has` holds of
/// its event, 0 elsewhere (every candidate of a recall gets the component, so the order's
/// dominance compares them on it).
pub(super) fn component(run: &mut Run, signal: Signal, weight: f64, has: impl Fn(&Event) -> bool) {
    for a in &mut run.candidates {
        let w = if has(&a.event) { weight } else { 0.0 };
        fusion::add_component(&mut a.c, signal, w);
    }
}
