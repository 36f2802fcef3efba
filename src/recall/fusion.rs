//! The fusion stage of recall: candidate lists with raw scores from each source become
//! one ranking.
//!
//! 1. **Per-query normalization.** Each list's scores are mapped to `[0, 1]` by min-max
//!    over the list (its best candidate 1, its last 0), so a source whose raw scale is
//!    narrow (HDC similarity, 0.1–0.3) counts as much as one whose scale is wide (BM25).
//!    Reciprocal rank fusion threw the score gaps away; on the development sets it lost to
//!    linear fusion (`docs/EXPERIMENTS.md`).
//! 2. **Weighted sum** of the normalized lists of the *direct* sources (those that scored
//!    the query against the memory itself): a candidate's own evidence. A source's
//!    contribution is a non-decreasing function of the candidate's score in it, so never
//!    rises as its rank there falls.
//! 3. **Neighbour share.** In a conversation the answer is often the turn next to the one
//!    that matches (a question and its reply): a turn borrows `neighbour ×` the own
//!    evidence of the turns just before and after it in its session (counted in the
//!    sources it came from), bounded so that its direct evidence never exceeds its best
//!    lender's own (a borrower never passes the turn it borrows from; on a tie the lender,
//!    with more evidence of its own, ranks first). Measured against letting a turn already
//!    above its lenders keep its whole share: that lost on all three development sets.
//!    A turn that only asks ("How did it go?") is a bridge: the turn before it also lends
//!    to the turn after it, the reply (`FusionParams::bridge`, forward only). Shares pass
//!    only across a change of author: consecutive notes of one author are a list, not an
//!    exchange, and the note after a match is not about it (the chronology marks such
//!    runs; the three development sets alternate authors and are unchanged by it).
//! 4. **Session prior**: every candidate adds `session ×` the best own evidence of its
//!    session (the same amount for every turn of a session: it reorders sessions, never
//!    turns within one).
//! 5. **Bounded associative evidence.** Associative lists (ripple over synapses) and priors
//!    (role, time hint) add at most their weight. They may reorder candidates with direct
//!    evidence, or fill places no direct candidate takes, but never lift an item above one
//!    that every direct source scored higher ([`order`]).
//!
//! **Monotone.** If `A` scores at least as high as `B` in every direct source, borrows no
//! less, and has no lower prior, `A` ranks at or above `B` (a property test below checks
//! it over generated lists): the weighted sum is monotone, and [`order`]'s dominance is
//! closed under that comparison (what must stay below a candidate `C` because `C`
//! dominates it also keeps below `C` everything it is at least as good as).

use std::collections::HashMap;

/// Maps keyed by ids the engine assigned (no outsider chooses them): FxHash.
type FxMap<K, V> = HashMap<K, V, hdv::fasthash::FxBuild>;

use super::{Fused, Part, Signal};
use crate::index::lexical::Chronology;

/// Whether a source scored the query against the memory itself or only followed links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// Lexical, vector, semantic, phrase, episodic: the item's own content matched.
    Direct,
    /// Ripple, directives, priors: the item is linked to what matched.
    Associative,
}

/// One source's candidates with raw scores (higher is better), best first.
#[derive(Debug, Clone)]
pub struct Scored {
    /// The source, named in breakdowns and in `--sources` / `--weight`.
    pub source: Signal,
    /// Its weight in the sum.
    pub weight: f64,
    /// Direct or associative.
    pub evidence: Evidence,
    /// `(item, raw score)`, best first.
    pub hits: Vec<(u64, f64)>,
    /// Whether the list holds every item the source scored above zero (it returned fewer
    /// than it was asked for): then 0, not its last item, is what "no evidence" scores.
    pub exhaustive: bool,
}

/// Fusion settings (profile `[recall]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionParams {
    /// Share of a turn's normalized score given to each neighbour in its session.
    pub neighbour: f64,
    /// Share of the best direct score of a session added to each of its candidates.
    pub session: f64,
    /// A turn also lends its neighbour share across a turn after it that only asks, to
    /// the reply (the question's answer is about what that turn said).
    pub bridge: bool,
}

/// Min-max normalization of one list: best 1, worst 0 (a list of equal scores: all 1); an
/// exhaustive list is scaled from 0 instead of from its worst item.
fn normalized(list: &Scored) -> Vec<(u64, f64)> {
    let hits = &list.hits;
    let max = hits.iter().map(|h| h.1).fold(f64::NEG_INFINITY, f64::max);
    let mut min = hits.iter().map(|h| h.1).fold(f64::INFINITY, f64::min);
    if list.exhaustive {
        min = min.min(0.0);
    }
    let span = max - min;
    hits.iter()
        .map(|&(id, s)| (id, if span > 0.0 { (s - min) / span } else { 1.0 }))
        .collect()
}

/// A fused candidate: its direct score per source (for [`order`]), its fused score.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The fused item, with its breakdown.
    pub fused: Fused,
    /// Weighted, normalized score of each direct source (in list order) with the share
    /// of it borrowed from a neighbouring turn, then the session prior, then components
    /// added by [`add_component`]: what [`order`]'s dominance compares.
    pub direct: Vec<f64>,
    /// The direct part of the score: the sum of `direct`.
    pub direct_score: f64,
    /// The candidate's own evidence: the direct sources' part of `direct_score` (no
    /// neighbour share, no session prior).
    pub own: f64,
    /// The share borrowed from neighbouring turns, and the best of them (its lender).
    pub borrowed: Option<(f64, u64)>,
    /// The most direct evidence a borrower may reach: its best lender's own.
    cap: f64,
    /// Its session in the chronology, when it has one.
    session: Option<u32>,
}

impl Candidate {
    /// A candidate with no evidence yet, with `components` direct components.
    fn empty(id: u64, components: usize) -> Self {
        Self {
            fused: Fused {
                id,
                score: 0.0,
                breakdown: Vec::new(),
            },
            direct: vec![0.0; components],
            direct_score: 0.0,
            own: 0.0,
            borrowed: None,
            cap: f64::INFINITY,
            session: None,
        }
    }

    /// Whether the item has direct lexical evidence of its own (a lexical source listed
    /// it, not only a neighbour's share).
    pub fn lexical(&self) -> bool {
        self.fused
            .breakdown
            .iter()
            .any(|b| b.signal.is_lexical() && b.rank().is_some())
    }
}

/// Best first: fused score, then own evidence (a lender above a borrower it ties with),
/// then the older item.
fn better(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    b.fused
        .score
        .total_cmp(&a.fused.score)
        .then(b.own.total_cmp(&a.own))
        .then(a.fused.id.cmp(&b.fused.id))
}

/// Fuses the lists (normalize, weigh, neighbour share, session prior, bounded associative
/// evidence); candidates best first by fused score (ties: more own evidence, then lower
/// id first). Associative contributions are capped at their weight. Use [`order`] for the
/// final ranking.
pub fn fuse(lists: &[Scored], chronology: &Chronology, params: FusionParams) -> Vec<Candidate> {
    let mut fusion = Fusion::direct(lists, chronology, params);
    for list in lists.iter().filter(|l| l.evidence == Evidence::Associative) {
        fusion.associate(list);
    }
    fusion.ranked()
}

/// [`fuse`] in steps, so a recall fuses its direct sources once, takes the seeds of its
/// associative sources from that ([`best`](Self::best)), and adds their lists after.
#[derive(Debug)]
pub struct Fusion {
    by_id: FxMap<u64, Candidate>,
    /// Direct components per candidate: one per direct list, then the session prior.
    components: usize,
}

impl Fusion {
    /// The direct lists of `lists` (associative ones are left out) normalized, weighed and
    /// summed, with the neighbour share and the session prior.
    pub fn direct(lists: &[Scored], chronology: &Chronology, params: FusionParams) -> Self {
        let directs: Vec<&Scored> = lists
            .iter()
            .filter(|l| l.evidence == Evidence::Direct)
            .collect();
        let prior = directs.len();
        let components = directs.len() + 1;
        let room: usize = directs.iter().map(|l| l.hits.len()).sum();
        let mut by_id: FxMap<u64, Candidate> = FxMap::default();
        by_id.reserve(room * 2);
        for (d, list) in directs.iter().enumerate() {
            for (i, (id, s)) in normalized(list).into_iter().enumerate() {
                let w = list.weight * s;
                if w <= 0.0 {
                    continue;
                }
                let c = by_id
                    .entry(id)
                    .or_insert_with(|| Candidate::empty(id, components));
                // A list names an item once; a repeat is ignored.
                if c.direct[d] == 0.0 {
                    c.direct[d] = w;
                    c.own += w;
                    c.fused.breakdown.push(Part::ranked(list.source, i + 1, w));
                }
            }
        }
        // The neighbour share. Per borrower: the share of each source it is lent, its best
        // lender's own evidence and id, its session (looked up once per listed item: a
        // random access into a map of the whole project).
        // Per borrower: the share of each source it is lent, its lenders' own evidence and
        // ids (at most three: the turns before and after it, and the turn two before it
        // when the turn between only asks), its session.
        type Lent = (Vec<f64>, Vec<(f64, u64)>, u32);
        let mut lent: FxMap<u64, Lent> = FxMap::default();
        for c in by_id.values_mut() {
            let Some((session, neighbours)) = chronology.reach(c.fused.id, params.bridge) else {
                continue;
            };
            c.session = Some(session);
            if params.neighbour <= 0.0 {
                continue;
            }
            for n in neighbours.into_iter().flatten() {
                let e = lent
                    .entry(n)
                    .or_insert_with(|| (vec![0.0; prior], Vec::new(), session));
                for (share, own) in e.0.iter_mut().zip(&c.direct) {
                    *share += params.neighbour * own;
                }
                e.1.push((c.own, c.fused.id));
            }
        }
        for (id, (shares, lenders, session)) in lent {
            let c = by_id
                .entry(id)
                .or_insert_with(|| Candidate::empty(id, components));
            // Bounded: the borrower's direct evidence stays at most its best lender's own
            // (a turn with more evidence of its own than its lenders borrows nothing).
            let cap = lenders
                .iter()
                .map(|l| l.0)
                .fold(f64::NEG_INFINITY, f64::max);
            let lender = lenders
                .iter()
                .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
                .map_or(0, |l| l.1);
            let total: f64 = shares.iter().sum();
            let share = total.min(cap - c.own);
            if share > 0.0 {
                // Each source's share scaled alike, so borrowed evidence counts in the
                // source it came from (where [`order`]'s dominance compares it).
                let scale = share / total;
                for (d, s) in c.direct.iter_mut().zip(&shares) {
                    *d += scale * s;
                }
                c.borrowed = Some((share, lender));
                c.cap = cap;
                c.session = Some(session);
                c.fused.breakdown.push(Part::lent(lender, share));
            }
        }
        for c in by_id.values_mut() {
            // (The cap again, against rounding in the scaled shares' sum.)
            c.direct_score = c.direct.iter().sum::<f64>().min(c.cap);
        }
        if params.session > 0.0 {
            let mut best: FxMap<u32, f64> = FxMap::default();
            for c in by_id.values() {
                if let Some(s) = c.session {
                    let b = best.entry(s).or_default();
                    *b = b.max(c.own);
                }
            }
            for c in by_id.values_mut() {
                if let Some(s) = c.session {
                    let share = params.session * best[&s];
                    if share > 0.0 {
                        c.direct_score += share;
                        c.direct[prior] = share;
                        c.fused.breakdown.push(Part::prior(Signal::Session, share));
                    }
                }
            }
        }
        for c in by_id.values_mut() {
            c.fused.score = c.direct_score;
        }
        Self { by_id, components }
    }

    /// The `n` best candidates so far (fused score, ties: more own evidence, then lower
    /// id first).
    pub fn best(&self, n: usize) -> Vec<u64> {
        let mut all: Vec<&Candidate> = self.by_id.values().collect();
        let cmp = |a: &&Candidate, b: &&Candidate| better(a, b);
        if all.len() > n && n > 0 {
            all.select_nth_unstable_by(n - 1, cmp);
        }
        all.truncate(n);
        all.sort_unstable_by(cmp);
        all.into_iter().map(|c| c.fused.id).collect()
    }

    /// Adds an associative list: each item adds at most the list's weight, once per source.
    pub fn associate(&mut self, list: &Scored) {
        for (i, (id, s)) in normalized(list).into_iter().enumerate() {
            let c = self
                .by_id
                .entry(id)
                .or_insert_with(|| Candidate::empty(id, self.components));
            let w = list.weight * s;
            if w > 0.0 && c.fused.breakdown.iter().all(|b| b.signal != list.source) {
                c.fused.score += w;
                c.fused.breakdown.push(Part::ranked(list.source, i + 1, w));
            }
        }
    }

    /// Every candidate, best first.
    pub fn ranked(self) -> Vec<Candidate> {
        let mut out: Vec<Candidate> = self.by_id.into_values().collect();
        out.sort_unstable_by(better);
        out
    }
}

/// Adds a bounded prior (`bonus ≥ 0`) to a candidate's fused score, recorded in its
/// breakdown as `signal`.
pub fn add_prior(c: &mut Candidate, signal: Signal, bonus: f64) {
    if bonus > 0.0 {
        c.fused.score += bonus;
        c.fused.breakdown.push(Part::prior(signal, bonus));
    }
}

/// How much higher (in normalized, weighted units: a source's best candidate scores its
/// weight) every direct source that tells two candidates apart must score one for it to
/// dominate the other: near ties are not agreement (0.1, 0.2, 0.4 and 0.5 measured on the
/// three development sets: `docs/EXPERIMENTS.md`). An item first by every source stays
/// above one every source puts near the bottom.
pub const DOMINANCE_MARGIN: f64 = 0.3;

/// Adds query-derived evidence about the item itself (it happened in the window a date in
/// the query names) as a direct component of its own: it counts in the fused score and in
/// [`order`]'s dominance test. Every candidate of one recall must get the component (0 when
/// it does not apply) so they stay comparable.
pub fn add_component(c: &mut Candidate, signal: Signal, score: f64) {
    c.direct.push(score);
    if score > 0.0 {
        c.fused.score += score;
        c.direct_score += score;
        c.fused.breakdown.push(Part::prior(signal, score));
    }
}

/// Whether `a` dominates `b`: every direct component that tells them apart is at least
/// [`DOMINANCE_MARGIN`] higher in `a` (and one does).
fn dominates(a: &Candidate, b: &Candidate) -> bool {
    let mut strict = false;
    for (x, y) in a.direct.iter().zip(&b.direct) {
        if x == y {
            continue;
        }
        if *x < *y + DOMINANCE_MARGIN {
            return false;
        }
        strict = true;
    }
    strict
}

/// Whether `a` is at least as good as `b` everywhere: every direct component, and what it
/// has besides (priors, associative evidence).
fn at_least(a: &Candidate, b: &Candidate) -> bool {
    a.direct.iter().zip(&b.direct).all(|(x, y)| x >= y)
        && a.fused.score - a.direct_score >= b.fused.score - b.direct_score
}

/// The final order: by fused score (ties: more own evidence, then lower id), except that
/// no candidate is placed above one that dominates it on direct evidence: associative
/// evidence and priors can reorder, never overturn what every direct source agrees on; and
/// the candidate every direct source ranks first is first.
/// Greedy: each place goes to the best remaining candidate that no remaining candidate
/// holds below itself, where `C` holds `B` below when it dominates `B` or anything at
/// least as good as `B` (so what is better everywhere never ends up below what it beats).
pub fn order(mut candidates: Vec<Candidate>) -> Vec<Candidate> {
    candidates.sort_by(better);
    let n = candidates.len();
    let words = n.div_ceil(64);
    // held[b]: the candidates that hold b below them (bit sets over the sorted list).
    let mut dominated_by = vec![0u64; n * words];
    for (a, ca) in candidates.iter().enumerate() {
        for (b, cb) in candidates.iter().enumerate() {
            if a != b && dominates(ca, cb) {
                dominated_by[b * words + a / 64] |= 1 << (a % 64);
            }
        }
    }
    let mut held = dominated_by.clone();
    for b in 0..n {
        for a in 0..n {
            if a != b && at_least(&candidates[a], &candidates[b]) {
                for w in 0..words {
                    held[b * words + w] |= dominated_by[a * words + w];
                }
            }
        }
    }
    let mut remaining = vec![0u64; words];
    for i in 0..n {
        remaining[i / 64] |= 1 << (i % 64);
    }
    let mut picked = Vec::with_capacity(n);
    for _ in 0..n {
        let free = |i: usize| {
            remaining[i / 64] & (1 << (i % 64)) != 0
                && (0..words).all(|w| held[i * words + w] & remaining[w] == 0)
        };
        let pick = (0..n).find(|&i| free(i)).unwrap_or_else(|| {
            (0..n)
                .find(|&i| remaining[i / 64] & (1 << (i % 64)) != 0)
                .expect("one remains")
        });
        remaining[pick / 64] &= !(1 << (pick % 64));
        picked.push(pick);
    }
    // Unanimity: the candidate every direct source ranks first is first, whatever
    // priors, borrowed shares and associations say of the others.
    let sources: Vec<Signal> = {
        let mut all: Vec<Signal> = candidates
            .iter()
            .flat_map(|c| c.fused.breakdown.iter())
            .filter(|b| b.signal.is_direct_source() && b.rank().is_some())
            .map(|b| b.signal)
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    };
    // In each source: the best own score and whether one candidate alone holds it.
    let best: Vec<(f64, usize)> = sources
        .iter()
        .map(|s| {
            candidates
                .iter()
                .flat_map(|c| {
                    c.fused
                        .breakdown
                        .iter()
                        .filter(|b| b.signal == *s && b.rank().is_some())
                })
                .fold((f64::NEG_INFINITY, 0), |(top, n), b| {
                    if b.score > top {
                        (b.score, 1)
                    } else if b.score == top {
                        (top, n + 1)
                    } else {
                        (top, n)
                    }
                })
        })
        .collect();
    // The direct components are evidence too (a time the question names, the kind of
    // value it asks for, a turn that tells rather than only asks, a speaker it names):
    // with one in play, only a candidate that has it (inside the hint's window, stating
    // such a value, telling something, said by that speaker) can be unanimous.
    let has = |c: &Candidate, s: Signal| c.fused.breakdown.iter().any(|b| b.signal == s);
    let mut in_play: Vec<Signal> = candidates
        .iter()
        .flat_map(|c| c.fused.breakdown.iter().map(|b| b.signal))
        .filter(|s| s.is_component())
        .collect();
    in_play.sort_unstable();
    in_play.dedup();
    let unanimous = |c: &Candidate| {
        !sources.is_empty()
            && in_play.iter().all(|&s| has(c, s))
            && sources.iter().zip(&best).all(|(s, &(top, n))| {
                n == 1
                    && c.fused
                        .breakdown
                        .iter()
                        .any(|b| b.signal == *s && b.rank().is_some() && b.score == top)
            })
    };
    if let Some(at) = picked.iter().position(|&i| unanimous(&candidates[i])) {
        picked[..=at].rotate_right(1);
    }
    let mut slots: Vec<Option<Candidate>> = candidates.into_iter().map(Some).collect();
    picked
        .into_iter()
        .map(|i| slots[i].take().expect("picked once"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(source: Signal, evidence: Evidence, hits: &[(u64, f64)]) -> Scored {
        Scored {
            source,
            weight: 1.0,
            evidence,
            hits: hits.to_vec(),
            exhaustive: false,
        }
    }

    const NONE: FusionParams = FusionParams {
        bridge: false,
        neighbour: 0.0,
        session: 0.0,
    };

    #[test]
    fn agreement_wins_and_fusion_is_deterministic() {
        let lists = [
            list(
                Signal::Vector,
                Evidence::Direct,
                &[(1, 0.3), (2, 0.2), (3, 0.1)],
            ),
            list(
                Signal::Bm25,
                Evidence::Direct,
                &[(3, 9.0), (4, 1.0), (1, 0.5)],
            ),
        ];
        let f = order(fuse(&lists, &Chronology::default(), NONE));
        assert_eq!(f[0].fused.id, 1, "first by one source, present in both");
        let again = order(fuse(&lists, &Chronology::default(), NONE));
        let ids = |v: &[Candidate]| v.iter().map(|c| c.fused.id).collect::<Vec<_>>();
        assert_eq!(ids(&f), ids(&again));
    }

    #[test]
    fn neighbours_in_a_session_share_their_score() {
        let mut chron = Chronology::default();
        for (id, s) in [(1, "a"), (2, "a"), (3, "b"), (4, "a")] {
            chron.push(id, Some(s));
        }
        assert_eq!(chron.neighbours(2), [Some(1), Some(4)]);
        assert_eq!(chron.neighbours(3), [None, None]);
        let lists = [list(Signal::Bm25, Evidence::Direct, &[(2, 5.0), (3, 1.0)])];
        let params = FusionParams {
            neighbour: 0.5,
            session: 0.0,
            bridge: false,
        };
        let f = fuse(&lists, &chron, params);
        let score = |id| f.iter().find(|c| c.fused.id == id).map(|c| c.fused.score);
        assert_eq!(score(2), Some(1.0));
        assert_eq!(score(1), Some(0.5), "the turn before gets half");
        assert_eq!(score(4), Some(0.5), "the turn after, in the same session");
        assert_eq!(score(3), None, "min-max puts the last of the list at 0");
    }

    #[test]
    fn a_turn_that_only_asks_carries_the_share_forward_to_the_reply() {
        // 1 says something, 2 only asks about it, 3 answers, 4 follows.
        let mut chron = Chronology::default();
        for id in 1..=4 {
            chron.push(id, Some("a"));
        }
        chron.bridge(2);
        let share = |bridge: bool, listed: u64| {
            let lists = [list(Signal::Bm25, Evidence::Direct, &[(listed, 5.0)])];
            let params = FusionParams {
                neighbour: 0.5,
                session: 0.0,
                bridge,
            };
            let f = fuse(&lists, &chron, params);
            (1..=4)
                .map(|id| {
                    f.iter()
                        .find(|c| c.fused.id == id)
                        .map_or(0.0, |c| c.fused.score)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(share(false, 1), [1.0, 0.5, 0.0, 0.0]);
        assert_eq!(
            share(true, 1),
            [1.0, 0.5, 0.5, 0.0],
            "the reply borrows too"
        );
        // Forward only: the reply lends to the question, not past it.
        assert_eq!(share(true, 3), [0.0, 0.5, 1.0, 0.5]);
    }

    #[test]
    fn the_session_prior_reaches_every_candidate_of_the_session_and_no_other() {
        let mut chron = Chronology::default();
        for (id, s) in [(1, "a"), (2, "a"), (3, "a"), (4, "b"), (5, "b")] {
            chron.push(id, Some(s));
        }
        // 2 is listed (its neighbours 1 and 3 come in by smoothing only), 4 is listed in
        // another session, 6 has no session at all.
        let lists = [list(
            Signal::Bm25,
            Evidence::Direct,
            &[(2, 4.0), (4, 2.0), (6, 1.0), (9, 0.0)],
        )];
        let params = FusionParams {
            neighbour: 0.5,
            session: 0.25,
            bridge: false,
        };
        let f = fuse(&lists, &chron, params);
        let prior = |id| {
            f.iter()
                .find(|c| c.fused.id == id)
                .and_then(|c| {
                    c.fused
                        .breakdown
                        .iter()
                        .find(|b| b.signal == Signal::Session)
                })
                .map(|b| b.score)
        };
        // Normalized: 2 → 1.0, 4 → 0.5, 6 → 0.25. Session a's best direct score is 2's
        // (1 and 3 get half of it by smoothing), session b's is 4's (5 gets half of it).
        assert_eq!(prior(2), Some(0.25));
        assert_eq!(
            prior(1),
            Some(0.25),
            "a neighbour takes its session's prior"
        );
        assert_eq!(prior(3), Some(0.25));
        assert_eq!(prior(4), Some(0.125));
        assert_eq!(
            prior(5),
            Some(0.125),
            "the neighbour in session b takes b's"
        );
        assert_eq!(prior(6), None, "no session, no prior");
    }

    #[test]
    fn associative_evidence_never_overturns_direct_agreement() {
        let lists = [
            list(
                Signal::Vector,
                Evidence::Direct,
                &[(1, 0.3), (2, 0.2), (9, 0.0)],
            ),
            list(
                Signal::Bm25,
                Evidence::Direct,
                &[(1, 9.0), (2, 3.0), (9, 0.0)],
            ),
            list(
                Signal::Ripple,
                Evidence::Associative,
                &[(2, 5.0), (7, 1.0), (8, 0.0)],
            ),
        ];
        let mut c = fuse(&lists, &Chronology::default(), NONE);
        for cand in &mut c {
            if cand.fused.id == 2 {
                add_prior(cand, Signal::User, 10.0);
            }
        }
        let ids: Vec<u64> = order(c).iter().map(|c| c.fused.id).collect();
        assert_eq!(ids[0], 1, "both direct sources rank 1 above 2: {ids:?}");
        assert!(ids.contains(&7), "an associative-only item fills a place");
    }

    #[test]
    fn a_borrower_stays_below_the_turn_it_borrows_from() {
        // 2 is first; 3, its reply, was fourth in the source: with a large share it would
        // pass 2 (0.25 + 0.9 × 1.0), bounded it ties 2 at most and 2 keeps first place.
        let mut chron = Chronology::default();
        for id in 1..=6 {
            chron.push(id, Some("a"));
        }
        let lists = [list(
            Signal::Bm25,
            Evidence::Direct,
            &[(2, 10.0), (5, 8.0), (6, 6.0), (3, 4.0), (9, 2.0)],
        )];
        let params = FusionParams {
            neighbour: 0.9,
            session: 0.3,
            bridge: false,
        };
        let ranked = order(fuse(&lists, &chron, params));
        let ids: Vec<u64> = ranked.iter().map(|c| c.fused.id).collect();
        assert_eq!(ids[0], 2, "{ids:?}");
        let pos = |id| ids.iter().position(|&x| x == id).unwrap();
        assert!(pos(3) > pos(2));
        let three = &ranked[pos(3)];
        let share = three
            .fused
            .breakdown
            .iter()
            .find(|b| b.signal == Signal::Neighbour)
            .unwrap();
        assert_eq!(share.lender(), Some(2), "the lender is named");
    }

    use proptest::prelude::*;

    /// Generated direct lists over items 0..12 (scores in steps, so ties happen), priors,
    /// and an associative list.
    /// Hits as `(item, score step)`.
    type Hits = Vec<(u64, u8)>;

    fn scenario() -> impl Strategy<Value = (Vec<Hits>, Hits, Hits)> {
        let hits = proptest::collection::vec((0u64..12, 0u8..8), 0..12);
        (
            proptest::collection::vec(hits.clone(), 1..4),
            proptest::collection::vec((0u64..12, 0u8..4), 0..6),
            hits,
        )
    }

    fn scored(source: Signal, evidence: Evidence, hits: &[(u64, u8)]) -> Scored {
        let mut hits: Vec<(u64, f64)> = hits.iter().map(|&(id, s)| (id, f64::from(s))).collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.dedup_by_key(|h| h.0);
        Scored {
            source,
            weight: 1.0,
            evidence,
            hits,
            exhaustive: true,
        }
    }

    proptest! {
        /// If A scores at least as high as B in every direct source and has no lower prior,
        /// A ranks at or above B.
        #[test]
        fn fusion_is_monotone_in_every_source(
            (directs, priors, ripple) in scenario(),
        ) {
            const SOURCES: [Signal; 3] = [Signal::Bm25, Signal::Vector, Signal::Semantic];
            let mut lists: Vec<Scored> = directs
                .iter()
                .zip(SOURCES)
                .map(|(h, s)| scored(s, Evidence::Direct, h))
                .collect();
            lists.push(scored(Signal::Ripple, Evidence::Associative, &ripple));
            let mut fused = fuse(&lists, &Chronology::default(), NONE);
            for c in &mut fused {
                let bonus: f64 = priors
                    .iter()
                    .filter(|p| p.0 == c.fused.id)
                    .map(|p| f64::from(p.1) / 4.0)
                    .sum();
                add_prior(c, Signal::User, bonus);
            }
            let ranked = order(fused);
            for (i, a) in ranked.iter().enumerate() {
                for b in &ranked[..i] {
                    // b is placed above a: a must not beat b everywhere.
                    let extra = |c: &Candidate| c.fused.score - c.direct_score;
                    let beats = a.direct.iter().zip(&b.direct).all(|(x, y)| x >= y)
                        && extra(a) >= extra(b)
                        && (a.direct != b.direct || extra(a) > extra(b));
                    prop_assert!(
                        !beats,
                        "{} is above {} though the latter beats it everywhere",
                        b.fused.id,
                        a.fused.id
                    );
                }
            }
        }

        /// An item every source puts first is first, whatever its neighbours borrow.
        #[test]
        fn what_every_source_puts_first_is_first(
            (directs, _, _) in scenario(),
            top in 0u64..12,
            neighbour in 0.0f64..1.0,
            session in 0.0f64..1.0,
        ) {
            let mut chron = Chronology::default();
            for id in 0..12 {
                chron.push(id, Some(if id < 6 { "a" } else { "b" }));
            }
            const SOURCES: [Signal; 3] = [Signal::Bm25, Signal::Vector, Signal::Semantic];
            let lists: Vec<Scored> = directs
                .iter()
                .zip(SOURCES)
                .map(|(h, s)| {
                    let mut h: Vec<(u64, u8)> = h.iter().copied().filter(|x| x.0 != top).collect();
                    h.push((top, 9));
                    scored(s, Evidence::Direct, &h)
                })
                .collect();
            let ranked = order(fuse(&lists, &chron, FusionParams { neighbour, session, bridge: false }));
            prop_assert_eq!(ranked[0].fused.id, top);
            for c in &ranked {
                if let Some((_, lender)) = c.borrowed {
                    let lender = ranked.iter().find(|l| l.fused.id == lender).unwrap();
                    prop_assert!(c.direct_score <= lender.direct_score + 1e-12);
                }
            }
        }
    }
}
