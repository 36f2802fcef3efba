//! The fusion stage of recall: candidate lists with raw scores from each source become
//! one ranking.
//!
//! 1. **Per-query normalization.** Each list's scores are mapped to `[0, 1]` by min-max
//!    over the list (its best candidate 1, its last 0), so a source whose raw scale is
//!    narrow (HDC similarity, 0.1–0.3) counts as much as one whose scale is wide (BM25).
//!    Reciprocal rank fusion threw the score gaps away; on the development sets it lost to
//!    linear fusion (`docs/EXPERIMENTS.md`).
//! 2. **Neighbour smoothing.** In a conversation the answer is often the turn next to the
//!    one that matches (a question and its reply): every normalized score also adds
//!    `neighbour ×` its score to the turns just before and after it in the same session,
//!    symmetrically.
//! 3. **Weighted sum** of the smoothed lists of the *direct* sources (those that scored the
//!    query against the memory itself), then a **session prior**: every candidate adds
//!    `session ×` the best direct score of its session.
//! 4. **Bounded associative evidence.** Associative lists (ripple over synapses) and priors
//!    (role, time hint) add at most their weight. They may reorder candidates with direct
//!    evidence, or fill places no direct candidate takes, but never lift an item above one
//!    that every direct source scored higher ([`order`]).

use std::collections::HashMap;

/// Maps keyed by ids the engine assigned (no outsider chooses them): FxHash.
type FxMap<K, V> = HashMap<K, V, hdv::fasthash::FxBuild>;

use super::Fused;

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
    /// Source name, used in breakdowns and in `--sources` / `--weight`.
    pub source: &'static str,
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

/// Where each item sits in its conversation: its session and the items just before and
/// after it there.
#[derive(Debug, Default, Clone)]
pub struct Chronology {
    /// Item → (session index, previous, next).
    place: FxMap<u64, (u32, Option<u64>, Option<u64>)>,
    /// Session name → (index, last item).
    sessions: HashMap<Box<str>, (u32, u64)>,
}

impl Chronology {
    /// Appends `id` (ids arrive in append order) to `session` (`None`: no session, no
    /// neighbours).
    pub fn push(&mut self, id: u64, session: Option<&str>) {
        let Some(name) = session else { return };
        let next_index = self.sessions.len() as u32;
        match self.sessions.get_mut(name) {
            Some((index, last)) => {
                let prev = *last;
                *last = id;
                let index = *index;
                if let Some(p) = self.place.get_mut(&prev) {
                    p.2 = Some(id);
                }
                self.place.insert(id, (index, Some(prev), None));
            }
            None => {
                self.sessions.insert(name.into(), (next_index, id));
                self.place.insert(id, (next_index, None, None));
            }
        }
    }

    /// The session index of `id`.
    pub fn session(&self, id: u64) -> Option<u32> {
        self.place.get(&id).map(|p| p.0)
    }

    /// The items just before and after `id` in its session.
    pub fn neighbours(&self, id: u64) -> [Option<u64>; 2] {
        self.place(id).map_or([None, None], |(_, n)| n)
    }

    /// The session index of `id` and its neighbours there, in one lookup.
    pub fn place(&self, id: u64) -> Option<(u32, [Option<u64>; 2])> {
        self.place.get(&id).map(|p| (p.0, [p.1, p.2]))
    }

    /// Appends the session of each of `ids` (in the order they were pushed) to `out`: the
    /// session names in index order (count u64, then byte length u32 and UTF-8 bytes each),
    /// then per id its session index (u32, `u32::MAX` for none); little-endian.
    pub fn write_to(&self, ids: &[u64], out: &mut Vec<u8>) {
        let mut names: Vec<(&str, u32)> = self
            .sessions
            .iter()
            .map(|(name, &(index, _))| (name.as_ref(), index))
            .collect();
        names.sort_unstable_by_key(|&(_, index)| index);
        out.extend_from_slice(&(names.len() as u64).to_le_bytes());
        for (name, _) in names {
            out.extend_from_slice(&(name.len() as u32).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
        }
        out.extend_from_slice(&(ids.len() as u64).to_le_bytes());
        for id in ids {
            let index = self.session(*id).unwrap_or(u32::MAX);
            out.extend_from_slice(&index.to_le_bytes());
        }
    }

    /// Rebuilds a chronology written by [`write_to`](Self::write_to) for `ids`, reading
    /// from the front of `input`; `None` if it is malformed or holds another number of ids.
    pub fn read_from(input: &mut &[u8], ids: &[u64]) -> Option<Self> {
        let mut take = |n: usize| -> Option<&[u8]> {
            let (head, rest) = input.split_at_checked(n)?;
            *input = rest;
            Some(head)
        };
        let count = u64::from_le_bytes(take(8)?.try_into().ok()?);
        let mut names = Vec::new();
        for _ in 0..count {
            let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
            names.push(std::str::from_utf8(take(len)?).ok()?.to_owned());
        }
        if u64::from_le_bytes(take(8)?.try_into().ok()?) != ids.len() as u64 {
            return None;
        }
        let mut chronology = Self::default();
        for &id in ids {
            let index = u32::from_le_bytes(take(4)?.try_into().ok()?);
            let name = match index {
                u32::MAX => None,
                i => Some(names.get(i as usize)?.as_str()),
            };
            chronology.push(id, name);
        }
        Some(chronology)
    }
}

/// Fusion settings (profile `[recall]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionParams {
    /// Share of a turn's normalized score given to each neighbour in its session.
    pub neighbour: f64,
    /// Share of the best direct score of a session added to each of its candidates.
    pub session: f64,
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
    /// Weighted, smoothed, normalized score of each direct source (in list order), then
    /// the session prior.
    pub direct: Vec<f64>,
    /// The direct part of the score (sum of `direct` plus the session prior).
    pub direct_score: f64,
    /// Its session in the chronology, when it has one and a direct source listed it or
    /// its neighbour.
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
            session: None,
        }
    }
}

/// Fuses the lists (normalize, smooth, weigh, session prior, bounded associative
/// evidence); candidates best first by fused score (ties: lower id first). Associative
/// contributions are capped at their weight. Use [`order`] for the final ranking.
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
    /// The direct lists of `lists` (associative ones are left out) normalized, smoothed,
    /// weighed and summed, with the session prior.
    pub fn direct(lists: &[Scored], chronology: &Chronology, params: FusionParams) -> Self {
        let directs: Vec<&Scored> = lists
            .iter()
            .filter(|l| l.evidence == Evidence::Direct)
            .collect();
        let components = directs.len() + 1;
        let room: usize = directs.iter().map(|l| l.hits.len()).sum();
        let mut by_id: FxMap<u64, Candidate> = FxMap::default();
        by_id.reserve(room * 2);
        // Per item of one list: its smoothed score, its rank in the list (0: only a
        // neighbour's share) and its session. The chronology is looked up once per listed
        // item (a random access into a map of the whole project): its neighbours share
        // its session.
        let mut smoothed: FxMap<u64, (f64, usize, Option<u32>)> = FxMap::default();
        for (d, list) in directs.iter().enumerate() {
            smoothed.clear();
            for (i, (id, s)) in normalized(list).into_iter().enumerate() {
                let place = chronology.place(id);
                let own = smoothed.entry(id).or_default();
                own.0 += s;
                own.1 = i + 1;
                own.2 = place.map(|p| p.0);
                if params.neighbour > 0.0
                    && let Some((session, neighbours)) = place
                {
                    for n in neighbours.into_iter().flatten() {
                        let theirs = smoothed.entry(n).or_default();
                        theirs.0 += params.neighbour * s;
                        theirs.2 = Some(session);
                    }
                }
            }
            for (&id, &(s, rank, session)) in &smoothed {
                if s <= 0.0 {
                    continue;
                }
                let c = by_id
                    .entry(id)
                    .or_insert_with(|| Candidate::empty(id, components));
                let w = list.weight * s;
                c.direct[d] = w;
                c.direct_score += w;
                c.fused.breakdown.push((list.source, rank, w));
                c.session = session;
            }
        }
        if params.session > 0.0 {
            let mut best: FxMap<u32, f64> = FxMap::default();
            for c in by_id.values() {
                if let Some(s) = c.session {
                    let b = best.entry(s).or_default();
                    *b = b.max(c.direct_score);
                }
            }
            for c in by_id.values_mut() {
                if let Some(s) = c.session {
                    let prior = params.session * best[&s];
                    if prior > 0.0 {
                        c.direct_score += prior;
                        *c.direct
                            .last_mut()
                            .expect("one place per direct source and the prior") = prior;
                        c.fused.breakdown.push(("session", 0, prior));
                    }
                }
            }
        }
        for c in by_id.values_mut() {
            c.fused.score = c.direct_score;
        }
        Self { by_id, components }
    }

    /// The `n` best candidates so far (fused score, ties: lower id first).
    pub fn best(&self, n: usize) -> Vec<u64> {
        let mut all: Vec<(f64, u64)> = self
            .by_id
            .values()
            .map(|c| (c.fused.score, c.fused.id))
            .collect();
        let better = |a: &(f64, u64), b: &(f64, u64)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if all.len() > n && n > 0 {
            all.select_nth_unstable_by(n - 1, better);
        }
        all.truncate(n);
        all.sort_unstable_by(better);
        all.into_iter().map(|(_, id)| id).collect()
    }

    /// Adds an associative list: each item adds at most the list's weight, once per source.
    pub fn associate(&mut self, list: &Scored) {
        for (i, (id, s)) in normalized(list).into_iter().enumerate() {
            let c = self
                .by_id
                .entry(id)
                .or_insert_with(|| Candidate::empty(id, self.components));
            let w = list.weight * s;
            if w > 0.0 && c.fused.breakdown.iter().all(|b| b.0 != list.source) {
                c.fused.score += w;
                c.fused.breakdown.push((list.source, i + 1, w));
            }
        }
    }

    /// Every candidate, best first by fused score (ties: lower id first).
    pub fn ranked(self) -> Vec<Candidate> {
        let mut out: Vec<Candidate> = self.by_id.into_values().collect();
        out.sort_unstable_by(|a, b| {
            b.fused
                .score
                .total_cmp(&a.fused.score)
                .then(a.fused.id.cmp(&b.fused.id))
        });
        out
    }
}

/// Adds a bounded prior (`bonus ≥ 0`) to a candidate's fused score, recorded in its
/// breakdown under `name`.
pub fn add_prior(c: &mut Candidate, name: &'static str, bonus: f64) {
    if bonus > 0.0 {
        c.fused.score += bonus;
        c.fused.breakdown.push((name, 0, bonus));
    }
}

/// How much higher (in normalized, weighted units: a source's best candidate scores its
/// weight) every direct source that tells two candidates apart must score one for it to
/// dominate the other: near ties are not agreement. Measured on BEAM-100K: 0.1 cost 0.01
/// recall@10 against 0.3; 0.3 and 0.5 scored the same (`docs/EXPERIMENTS.md`). An item
/// first by every source stays above one every source puts near the bottom.
pub const DOMINANCE_MARGIN: f64 = 0.3;

/// Adds query-derived evidence about the item itself (it happened in the window a date in
/// the query names) as a direct component of its own: it counts in the fused score and in
/// [`order`]'s dominance test. Every candidate of one recall must get the component (0 when
/// it does not apply) so they stay comparable.
pub fn add_component(c: &mut Candidate, name: &'static str, score: f64) {
    c.direct.push(score);
    if score > 0.0 {
        c.fused.score += score;
        c.direct_score += score;
        c.fused.breakdown.push((name, 0, score));
    }
}

/// Whether `a` dominates `b`: every direct source that tells them apart scored `a` at
/// least [`DOMINANCE_MARGIN`] higher than `b` (and one does).
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

/// The final order: by fused score (ties: lower id), except that no candidate is placed
/// above one that dominates it on direct evidence: associative evidence and priors can
/// reorder, never overturn what every direct source agrees on. Greedy: each place goes to
/// the best remaining candidate that no remaining candidate dominates.
pub fn order(mut candidates: Vec<Candidate>) -> Vec<Candidate> {
    candidates.sort_by(|a, b| {
        b.fused
            .score
            .total_cmp(&a.fused.score)
            .then(a.fused.id.cmp(&b.fused.id))
    });
    let mut out = Vec::with_capacity(candidates.len());
    while !candidates.is_empty() {
        let pick = (0..candidates.len())
            .find(|&i| {
                !candidates
                    .iter()
                    .enumerate()
                    .any(|(j, other)| j != i && dominates(other, &candidates[i]))
            })
            .unwrap_or(0);
        out.push(candidates.remove(pick));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(source: &'static str, evidence: Evidence, hits: &[(u64, f64)]) -> Scored {
        Scored {
            source,
            weight: 1.0,
            evidence,
            hits: hits.to_vec(),
            exhaustive: false,
        }
    }

    const NONE: FusionParams = FusionParams {
        neighbour: 0.0,
        session: 0.0,
    };

    #[test]
    fn agreement_wins_and_fusion_is_deterministic() {
        let lists = [
            list("vector", Evidence::Direct, &[(1, 0.3), (2, 0.2), (3, 0.1)]),
            list("bm25", Evidence::Direct, &[(3, 9.0), (4, 1.0), (1, 0.5)]),
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
        let lists = [list("bm25", Evidence::Direct, &[(2, 5.0), (3, 1.0)])];
        let params = FusionParams {
            neighbour: 0.5,
            session: 0.0,
        };
        let f = fuse(&lists, &chron, params);
        let score = |id| f.iter().find(|c| c.fused.id == id).map(|c| c.fused.score);
        assert_eq!(score(2), Some(1.0));
        assert_eq!(score(1), Some(0.5), "the turn before gets half");
        assert_eq!(score(4), Some(0.5), "the turn after, in the same session");
        assert_eq!(score(3), None, "min-max puts the last of the list at 0");
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
            "bm25",
            Evidence::Direct,
            &[(2, 4.0), (4, 2.0), (6, 1.0), (9, 0.0)],
        )];
        let params = FusionParams {
            neighbour: 0.5,
            session: 0.25,
        };
        let f = fuse(&lists, &chron, params);
        let prior = |id| {
            f.iter()
                .find(|c| c.fused.id == id)
                .and_then(|c| c.fused.breakdown.iter().find(|b| b.0 == "session"))
                .map(|b| b.2)
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
    fn a_chronology_reads_back_as_written() {
        let mut chron = Chronology::default();
        let ids = [3, 4, 7, 9, 12];
        for (&id, s) in ids
            .iter()
            .zip([Some("a"), Some("b"), None, Some("a"), Some("b")])
        {
            chron.push(id, s);
        }
        let mut bytes = Vec::new();
        chron.write_to(&ids, &mut bytes);
        let mut input = bytes.as_slice();
        let back = Chronology::read_from(&mut input, &ids).unwrap();
        assert!(input.is_empty());
        for id in ids {
            assert_eq!(back.neighbours(id), chron.neighbours(id), "{id}");
            assert_eq!(back.session(id), chron.session(id), "{id}");
        }
        let mut short = &bytes[..bytes.len() - 1];
        assert!(Chronology::read_from(&mut short, &ids).is_none());
        let mut input = bytes.as_slice();
        assert!(
            Chronology::read_from(&mut input, &ids[1..]).is_none(),
            "another id count"
        );
    }

    #[test]
    fn associative_evidence_never_overturns_direct_agreement() {
        let lists = [
            list("vector", Evidence::Direct, &[(1, 0.3), (2, 0.2), (9, 0.0)]),
            list("bm25", Evidence::Direct, &[(1, 9.0), (2, 3.0), (9, 0.0)]),
            list(
                "ripple",
                Evidence::Associative,
                &[(2, 5.0), (7, 1.0), (8, 0.0)],
            ),
        ];
        let mut c = fuse(&lists, &Chronology::default(), NONE);
        for cand in &mut c {
            if cand.fused.id == 2 {
                add_prior(cand, "user", 10.0);
            }
        }
        let ids: Vec<u64> = order(c).iter().map(|c| c.fused.id).collect();
        assert_eq!(ids[0], 1, "both direct sources rank 1 above 2: {ids:?}");
        assert!(ids.contains(&7), "an associative-only item fills a place");
    }
}
