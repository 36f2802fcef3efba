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
//! 7. [`Supersede`]: a newer value about the same subject moves above the older one.
//! 8. [`Governed`]: evidence only of corrected beliefs goes after the rest of the head.
//! 9. [`Directives`]: standing directives close to the query take slots after the first
//!    answers.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use super::plan::{Context, FLOOR_SIGMAS, Plan, outside};
use super::sources::Gathered;
use crate::Result;
use crate::base::VectorId;
use crate::config::RecallSettings;
use crate::governance::BeliefStatus;
use crate::index::lexical;
use crate::ledger::{Event, EventId, Role};
use crate::recall::fusion::{self, Candidate};
use crate::recall::{Fused, Signal, supersede, values};
use crate::sync::RecoverRw as _;
use crate::text::statements;

/// Places a directive slot comes after ([`Directives`]): the best answers keep the first
/// places, and a directive close to the query follows them instead of closing the list,
/// where a reader who takes the first few would miss it. Measured on the BEAM sets (LoCoMo
/// has no directives; recall@10 is the same wherever the slots go), MRR: at the end
/// 0.5324 / 0.4511, after 3 0.5338 / 0.4503, after 4 0.5337 / 0.4515, after 5 0.5335 /
/// 0.4516, after 6 0.5333 / 0.4514, after 7 0.5325 / 0.4511.
const DIRECTIVES_AFTER: usize = 5;

/// Head of the ranking that supersession (recall-time and governed) reorders.
const RERANK_WINDOW: usize = 10;

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
    pub suppressed: Vec<(EventId, String)>,
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
    pub fn suppresses(&self, plan: &Plan<'_>, event: &Event) -> Option<String> {
        let (rq, q) = (plan.rq, plan.compiled);
        if rq.session.is_some() && event.session.as_deref() == rq.session {
            return Some("same-session echo".to_owned());
        }
        // A time hint's window only lifts what falls inside it ([`Priors`]); explicit
        // `since:` / `until:` filter.
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
        if let Some(role) = q.role.filter(|&r| r != event.role) {
            return Some(format!("role {} is not {role}", event.role));
        }
        if let Some(kind) = q.kind.filter(|&k| k != event.kind) {
            return Some(format!("kind {} is not {kind}", event.kind));
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
                return Some(format!("does not contain the phrase \"{missing}\""));
            }
        }
        None
    }

    /// The `k` best items, the rest dropped.
    pub fn truncate(&mut self, k: usize) {
        self.ranked.truncate(k);
    }
}

/// Soft filters: a time hint is soft (it lifts what happened in its window; when no
/// candidate did, it is ignored and reported). A quoted phrase is a filter while some
/// candidate holds it; one that none holds (quoted from memory, in other words) would
/// empty the answer: it falls back to the lift its words give through the phrase source,
/// and is reported.
struct SoftFilters;

impl Stage for SoftFilters {
    fn apply(&self, _: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        let compiled = plan.compiled;
        run.hint_ignored =
            compiled.hinted && !run.candidates.iter().any(|a| plan.in_hint(&a.event));
        if !compiled.phrases.is_empty() {
            let contents: Vec<String> = run
                .candidates
                .iter()
                .map(|a| crate::recall::query::normalize(&a.event.content))
                .collect();
            run.phrases_ignored = compiled
                .phrases
                .iter()
                .filter(|p| !contents.iter().any(|c| c.contains(p.as_str())))
                .cloned()
                .collect();
        }
        Ok(())
    }
}

/// Admission: the filters, the knowledge gap and the relevance floor.
///
/// A knowledge gap: nothing answers the query. No candidate the filters let through
/// matches a word that tells memories apart, and none is more similar than the best of
/// the project's memories would be by chance (`chance_best`: the largest of N unrelated
/// ones), which for any sizeable project lies well above the floor's 2 σ. A gap returns
/// nothing; anything returned answers (floor and gaps agree).
///
/// The relevance floor: a candidate with no evidence of its own (a lexical match, or a
/// similarity above the spread of unrelated memories of this project) and no link to a
/// memory that has some (a synapse, or the turn next to a lexical match in its session)
/// is refused; one with a link and no evidence is a filler.
struct Admit;

impl Stage for Admit {
    fn apply(&self, _: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        run.answered = run.candidates.iter().any(|a| {
            run.suppresses(plan, &a.event).is_none()
                && plan.answers(&a.c, run.similarity.get(&a.c.fused.id).copied())
        });
        let linked = |c: &Candidate| {
            c.fused.breakdown.iter().any(|b| {
                b.0 == Signal::Ripple
                    || (b.0 == Signal::Neighbour && run.lexical.contains(&(b.1 as u64)))
            })
        };
        let mut admitted = Vec::with_capacity(run.candidates.len());
        let mut suppressed = Vec::new();
        for mut a in std::mem::take(&mut run.candidates) {
            let reason = if let Some(reason) = run.suppresses(plan, &a.event) {
                Some(reason)
            } else if !run.answered {
                Some("knowledge gap: no candidate matches a distinctive query word or is more similar than the project's unrelated memories reach by chance".to_owned())
            } else {
                let similarity = run.similarity.get(&a.c.fused.id).copied();
                a.filler = !plan.supported(&a.c, similarity);
                (a.filler && !linked(&a.c)).then(|| {
                    format!(
                        "below the relevance floor (no lexical match; similarity {:.3} under {:.3}, {})",
                        similarity.unwrap_or(0.0),
                        plan.vector_floors.item,
                        plan.baseline.map_or(
                            "the prior of a project too small to sample".to_owned(),
                            |(mean, sd)| format!(
                                "the project's unrelated baseline {mean:.3} + {FLOOR_SIGMAS} x {sd:.3}"
                            )
                        )
                    )
                })
            };
            match reason {
                Some(reason) => suppressed.push((a.event.id, reason)),
                None => admitted.push(a),
            }
        }
        run.candidates = admitted;
        run.suppressed.extend(suppressed);
        Ok(())
    }
}

/// One slot per text: texts equal once folded (Unicode form, case, whitespace) are one
/// item, the best ranked of them (candidates arrive best first); the others are listed as
/// its duplicates.
struct Fold;

impl Stage for Fold {
    fn apply(&self, _: &Context<'_>, _: &Plan<'_>, run: &mut Run) -> Result<()> {
        let mut kept = Vec::with_capacity(run.candidates.len());
        for a in std::mem::take(&mut run.candidates) {
            match run.folded.entry(crate::text::fold(&a.event.content)) {
                Entry::Occupied(first) => {
                    run.duplicates
                        .entry(*first.get())
                        .or_default()
                        .push(a.event.id);
                }
                Entry::Vacant(slot) => {
                    slot.insert(a.event.id.0);
                    kept.push(a);
                }
            }
        }
        run.candidates = kept;
        Ok(())
    }
}

/// Priors: what a user said ranks above what was said to them (`user_bonus`, bounded like
/// every prior), and a time hint lifts what happened in its window (`hint_weight`, a
/// direct component every candidate gets, 0 outside, so the order's dominance compares
/// it).
struct Priors;

impl Stage for Priors {
    fn apply(&self, cx: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        let hinted = plan.compiled.hinted && !run.hint_ignored;
        for a in &mut run.candidates {
            if a.event.role == Role::User {
                fusion::add_prior(&mut a.c, Signal::User, cx.settings.user_bonus);
            }
            if hinted {
                let inside = if plan.in_hint(&a.event) {
                    cx.settings.hint_weight
                } else {
                    0.0
                };
                fusion::add_component(&mut a.c, Signal::Hint, inside);
            }
        }
        Ok(())
    }
}

/// Adds `signal` as a direct component to every candidate: `weight` where `has` holds of
/// its event, 0 elsewhere (every candidate of a recall gets the component, so the order's
/// dominance compares them on it).
fn component(run: &mut Run, signal: Signal, weight: f64, has: impl Fn(&Event) -> bool) {
    for a in &mut run.candidates {
        let w = if has(&a.event) { weight } else { 0.0 };
        fusion::add_component(&mut a.c, signal, w);
    }
}

/// A question about a person the project knows as a speaker ("What does Calvin do to
/// relax?") is answered most often by that person's own words: in a conversation, what
/// someone does, owns or plans is said by them, and what others say to them (a turn that
/// opens "Thanks, Calvin!") asks or answers back. Every turn said by a speaker the query
/// names gets `speaker_weight` as a direct component, the others 0 (only when the query
/// names one: a project of `user` and `assistant` turns has no names to match). Measured
/// at 0.3 (`docs/EXPERIMENTS.md`): LoCoMo 0.7588 / 0.5355 → 0.7749 / 0.5533, every
/// category up but the adversarial one (built to ask about one person what the other
/// said); both BEAM sets identical.
struct Speakers;

impl Stage for Speakers {
    fn on(&self, settings: &RecallSettings, _: &Plan<'_>) -> bool {
        settings.speaker_weight > 0.0
    }
    fn apply(&self, cx: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        let named: Vec<String> = {
            let text = cx.text.reading();
            lexical::query_terms(plan.query())
                .into_iter()
                .filter(|t| text.speakers.contains(t))
                .collect()
        };
        if named.is_empty() {
            return Ok(());
        }
        component(run, Signal::Speaker, cx.settings.speaker_weight, |e| {
            e.speaker
                .as_deref()
                .is_some_and(|name| crate::text::tokens(name).iter().any(|t| named.contains(t)))
        });
        Ok(())
    }
}

/// A turn that only asks tells nothing of what it names: "Wow! How long have you been
/// playing?" ([`statements::asks_only`]: it ends with a question, every sentence of
/// twelve words or more asks, no word of it is the speaker's own) matches a question
/// about that subject word for word, but the turn after it answers. Every other candidate
/// gets `tells_weight` as a direct component, an asking turn 0. Measured at 0.15
/// (`docs/EXPERIMENTS.md`, twenty-fourth session): LoCoMo 0.7579 / 0.5257 → 0.7588 /
/// 0.5355, BEAM-500K 0.5481 / 0.4488 → 0.5497 / 0.4500, BEAM-100K identical; at 0.2
/// BEAM-100K's MRR falls.
struct Tells;

impl Stage for Tells {
    fn on(&self, settings: &RecallSettings, _: &Plan<'_>) -> bool {
        settings.tells_weight > 0.0
    }
    fn apply(&self, cx: &Context<'_>, _: &Plan<'_>, run: &mut Run) -> Result<()> {
        component(run, Signal::Tells, cx.settings.tells_weight, |e| {
            !statements::asks_only(&e.content)
        });
        Ok(())
    }
}

/// The answer's kind: a question that asks for a kind of value ("when", "how long", "how
/// much ... cost"; [`values::Wanted`]) is answered by a turn that states one, so a
/// candidate stating a value of that kind gets `answer_weight` as a direct component
/// (0 for the others, so every candidate of the recall is compared on it). At the
/// default 0.25, under the order's dominance margin, it settles near ties and never
/// overturns what every source agrees on. Measured on all three development sets
/// (`docs/EXPERIMENTS.md`, twenty-fourth session): LoCoMo 0.7571 / 0.5166 → 0.7580 /
/// 0.5201, BEAM-100K 0.5913 / 0.5318 → 0.5923 / 0.5324, BEAM-500K 0.5423 / 0.4488 →
/// 0.5481 / 0.4488 (recall@10 / MRR).
struct Answers;

impl Stage for Answers {
    fn on(&self, settings: &RecallSettings, _: &Plan<'_>) -> bool {
        settings.answer_weight > 0.0
    }
    fn apply(&self, cx: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        let wanted = values::Wanted::of(plan.query());
        if wanted.is_empty() {
            return Ok(());
        }
        component(run, Signal::Answer, cx.settings.answer_weight, |e| {
            wanted.answered_by(&e.content)
        });
        Ok(())
    }
}

/// The order ([`fusion::order`]: monotone in every source), items with evidence of their
/// own first, then the fillers (they fill the places the others leave).
struct Order;

impl Stage for Order {
    fn apply(&self, _: &Context<'_>, _: &Plan<'_>, run: &mut Run) -> Result<()> {
        let (fillers, kept): (Vec<Admitted>, Vec<Admitted>) = std::mem::take(&mut run.candidates)
            .into_iter()
            .partition(|a| a.filler);
        for (group, associative) in [(kept, false), (fillers, true)] {
            let mut events: HashMap<u64, Event> = group
                .iter()
                .map(|a| (a.c.fused.id, a.event.clone()))
                .collect();
            let ordered = fusion::order(group.into_iter().map(|a| a.c).collect());
            run.ranked.extend(ordered.into_iter().map(|c| Ranked {
                event: events.remove(&c.fused.id).expect("fetched"),
                fused: c.fused,
                associative,
            }));
        }
        Ok(())
    }
}

/// Recall-time supersession ([`supersede`]): in the head of the ranking, a newer
/// statement (said later) of a different value about the same subject moves above the
/// older one. A time the question names selects the value valid then: a statement made
/// after the time hint's window supersedes nothing (the value it revises, stated before,
/// moves above it), one made before its end still does ("the rent in March" is the rent
/// last set before April).
struct Supersede;

impl Stage for Supersede {
    fn on(&self, settings: &RecallSettings, _: &Plan<'_>) -> bool {
        settings.supersede
    }
    fn apply(&self, cx: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        // Even a hint no candidate falls inside names the time asked about.
        let horizon = plan.compiled.until.filter(|_| plan.compiled.hinted);
        let head = run.ranked.len().min(RERANK_WINDOW);
        let mut ranked: Vec<supersede::Candidate> = run.ranked[..head]
            .iter()
            .map(|r| {
                let evidence = r
                    .fused
                    .breakdown
                    .iter()
                    .filter(|b| !b.0.is_prior())
                    .map(|b| b.2)
                    .sum();
                supersede::Candidate::new(
                    r.fused.id,
                    r.event.role,
                    r.event.agent.as_deref(),
                    &r.event.content,
                    evidence,
                )
                .at(r.event.created_at)
                .speaker(r.event.speaker.as_deref())
            })
            .collect();
        let query = plan.query();
        let moves = supersede::reorder(
            &supersede::Query::new(query, &lexical::query_terms(query)).valid_until(horizon),
            &mut ranked,
            cx.settings.supersede_ratio,
        );
        if !moves.is_empty() {
            let order: HashMap<u64, usize> =
                ranked.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
            run.ranked[..head].sort_by_key(|r| order[&r.fused.id]);
            run.supersedes.extend(moves);
        }
        Ok(())
    }
}

/// Governed supersession: an event that is evidence only of superseded beliefs (a fact
/// the user corrected) goes after the other results of the head, and says which belief
/// version it backs.
struct Governed;

impl Stage for Governed {
    fn apply(&self, cx: &Context<'_>, _: &Plan<'_>, run: &mut Run) -> Result<()> {
        if !cx
            .ledger
            .has_beliefs_with_status(cx.project, BeliefStatus::Superseded)?
        {
            return Ok(());
        }
        let head = run.ranked.len().min(RERANK_WINDOW);
        for r in &run.ranked[..head] {
            let cited = cx.ledger.beliefs_citing(cx.project, r.event.id)?;
            let current = cited.iter().any(|b| b.3 != BeliefStatus::Superseded);
            if let Some((_, key, version, _)) = cited.last()
                && !current
            {
                run.outdated.insert(r.fused.id, (key.clone(), *version));
            }
        }
        if !run.outdated.is_empty() {
            let outdated = &run.outdated;
            run.ranked[..head].sort_by_key(|r| outdated.contains_key(&r.fused.id));
        }
        Ok(())
    }
}

/// Directive slots: the standing directives closest to the query (clearly above chance:
/// 3 standard deviations of the similarity of unrelated vectors, 1/√D) that fusion left
/// out of the top k take places right after the first [`DIRECTIVES_AFTER`] (the last
/// places when fewer remain), at most `directive_slots` and a third of k.
/// Filters apply to them too; a gap returns none; a directive whose text is already among
/// the top k is that item, and an item whose text a slot takes gives way to it.
struct Directives;

impl Directives {
    /// Slots of a `k`-result recall.
    fn slots(settings: &RecallSettings, k: usize) -> usize {
        settings.directive_slots.min(k / 3)
    }
}

impl Stage for Directives {
    fn on(&self, settings: &RecallSettings, plan: &Plan<'_>) -> bool {
        Self::slots(settings, plan.rq.k) > 0 && plan.vector.is_some()
    }
    fn apply(&self, cx: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        let (Some(q), true) = (&plan.vector, run.answered) else {
            return Ok(());
        };
        let k = plan.rq.k;
        let ids = cx.text.reading().directives.clone();
        let mut directives = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(v) = cx.tiers.get(cx.project, VectorId(id))? {
                directives.push((id, q.similarity(&v)));
            }
        }
        directives.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let chance = 1.0 / (cx.bits as f64).sqrt();
        directives.retain(|&(_, sim)| sim >= 3.0 * chance);
        directives.truncate(Self::slots(&cx.settings, k));
        let mut slots: Vec<Ranked> = Vec::new();
        for (rank, &(id, sim)) in directives.iter().enumerate() {
            if run.ranked.iter().take(k).any(|r| r.fused.id == id) {
                continue;
            }
            let Some(event) = cx.ledger.get(cx.project, EventId(id))? else {
                continue;
            };
            if let Some(reason) = run.suppresses(plan, &event) {
                run.suppressed.push((event.id, reason));
                continue;
            }
            if let Some(&first) = run.folded.get(&crate::text::fold(&event.content))
                && run.ranked.iter().take(k).any(|r| r.fused.id == first)
            {
                run.duplicates.entry(first).or_default().push(event.id);
                continue;
            }
            run.similarity.insert(id, sim);
            slots.push(Ranked {
                fused: Fused {
                    id,
                    score: 0.0,
                    breakdown: vec![(Signal::Directive, rank + 1, 0.0)],
                },
                event,
                associative: false,
            });
        }
        // An item whose text a slot now holds gives way to it (`folded` names the item
        // that holds each text).
        let given_way: HashSet<u64> = slots
            .iter()
            .filter_map(|s| {
                run.folded
                    .get(&crate::text::fold(&s.event.content))
                    .copied()
            })
            .collect();
        run.ranked.retain(|r| {
            !slots.iter().any(|s| s.fused.id == r.fused.id) && !given_way.contains(&r.fused.id)
        });
        run.ranked.truncate(k.saturating_sub(slots.len()));
        let tail = run.ranked.split_off(DIRECTIVES_AFTER.min(run.ranked.len()));
        run.ranked.extend(slots);
        run.ranked.extend(tail);
        Ok(())
    }
}
