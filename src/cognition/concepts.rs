//! Concepts: sealed episodes consolidated into prototypes kept as counters.
//!
//! **What an episode is about** is judged on its *gist*, not on the bundle of its events:
//! text of one project shares many words (filler such as "today", "thanks", names, the
//! project's vocabulary), and a bundle of everything said is dominated by them. The gist is
//! a weighted bundle of hypervectors of the episode's content words (its user turns, else
//! all of it), each weighted by its term frequency and its Robertson–Spärck Jones inverse
//! episode frequency in the project (`ln((N − df + ½) / (df + ½))`, from up to
//! [`VOCABULARY_SAMPLE`] recent sealed episodes): a word in half the episodes or more says
//! nothing about any one of them (weight 0), and a word in one episode alone weighs most:
//! it keeps an off-topic episode apart from the others, which share only filler with it.
//! An episode with no word left has no gist and is compared by its topic vector.
//!
//! **Every similarity is judged against the project's own baseline**: for an episode, the
//! median `m` of its gist's similarity to up to [`BASELINE_SAMPLE`] other episodes' gists
//! and a one-sided robust deviation `σ` (1.4826 × the median deviation of the similarities
//! below `m`: same-topic episodes sit above the median and would inflate a two-sided one).
//!
//! **Clustering** is average linkage on that scale, one episode at a time, in id order:
//! - an episode joins the concept whose members (up to [`LINKAGE_SAMPLE`]) its gist is most
//!   similar to on average, when that mean reaches `m + concept_z · σ` (and the absolute
//!   `concept_similarity`); otherwise it starts a concept;
//! - then the concept it touched merges with the concept whose members are nearest on
//!   average when that mean reaches `m̄ + concept_z · σ̄` (the baseline of up to four of its
//!   members, averaged), and so on along the chain, which repairs the splits an online pass
//!   makes while a topic's first episodes are still alone;
//! - then a concept of one episode that attracted none of the next [`RETIRE_AFTER`]
//!   episodes consolidated is retired (its episode stays consolidated, in no concept), and
//!   the profile's `max_concepts` is a hard bound: past it, the concepts with the least
//!   support (the oldest first) are retired.
//!
//! Because each episode's merges and retirement run before the next episode is taken, the
//! concepts do not depend on how the work is cut into calls (a pulse's budget, a deadline):
//! the same input gives the same concepts, and calls with nothing new change nothing
//! (`tests/concepts.rs`). (Merging once per call, after all its episodes, made them depend
//! on the cut: a call of 7 episodes and one of 100 gave different concepts.)
//!
//! Measured on planted topics (`tests/concepts.rs`): uneven topics of 3 to 40 episodes in
//! varied wording, everyday filler in every sentence and 10 % off-topic episodes, where the
//! bundle of the events gave 81 concepts for 6 topics (adjusted Rand index 0.03).
//!
//! The prototype a concept keeps (its counters) is still the bundle of its episodes' topic
//! vectors, in the space recall's queries are encoded in (recall's episodic source and
//! associations compare queries and topics with it); the gists only decide membership.

use std::collections::HashMap;

use crate::sync::Recover as _;

use hdv::{Bundler, Hypervector};

use super::{Cognition, EpisodeId, similarity};
use crate::base::ProjectId;
use crate::ledger::{LedgerError, LedgerResult};

/// Other sealed episodes an episode's baseline is estimated from.
pub const BASELINE_SAMPLE: usize = 64;

/// Recent sealed episodes a project's word statistics (episode frequencies) come from.
pub const VOCABULARY_SAMPLE: usize = 256;

/// Later episodes a concept of one episode may fail to attract before it is retired: more
/// than the other topics a user may turn to before coming back to one (with merges run
/// per episode, 10 retired the first episode of topics interleaved eleven ways;
/// `tests/concepts.rs` interleaves up to twenty).
pub const RETIRE_AFTER: usize = 24;

/// Members of a concept sampled for average linkage (the most recent ones).
pub const LINKAGE_SAMPLE: usize = 16;

/// Words in a concept's label, at most (those scoring at least half the best one).
pub const LABEL_WORDS: usize = 3;

/// An episode's baseline: median and one-sided robust deviation of its similarity to the
/// project's other sealed episodes.
#[derive(Debug, Clone, Copy)]
struct Baseline {
    median: f64,
    sigma: f64,
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// An episode as consolidation compares it: its gist, when its words tell it apart, and
/// its topic vector (the bundle of its events), compared when either side has no gist (an
/// episode of caller-supplied vectors, or of words every episode uses).
#[derive(Debug, Clone)]
struct Rep {
    gist: Option<Hypervector>,
    topic: Hypervector,
}

impl Rep {
    fn similarity(&self, other: &Rep) -> f64 {
        match (&self.gist, &other.gist) {
            (Some(a), Some(b)) => similarity(a, b),
            _ => similarity(&self.topic, &other.topic),
        }
    }
}

fn mean_similarity(a: &[Rep], b: &[Rep]) -> f64 {
    let mut sum = 0.0;
    for x in a {
        for y in b {
            sum += x.similarity(y);
        }
    }
    sum / (a.len() * b.len()).max(1) as f64
}

/// Identifier of a concept.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct ConceptId(pub u64);

/// A consolidated concept.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Concept {
    /// Id.
    pub id: ConceptId,
    /// Label: the words most distinctive of its episodes' user events against the
    /// project's other episodes.
    pub label: String,
    /// Supporting episodes.
    pub support: Vec<EpisodeId>,
    /// Reliability: Beta(1, 1) posterior mean of the support's outcomes.
    pub reliability: f64,
    /// Successes and failures of supporting episodes.
    pub outcomes: (u64, u64),
    /// The binarized prototype.
    #[serde(skip)]
    pub prototype: Hypervector,
}

/// What consolidation knows of one project's words, kept between calls (in
/// [`Cognition`]): the episode frequencies, and each episode's comparison form computed
/// with them. Counted again when the project's sealed episodes have grown by a quarter
/// since the frequencies were counted (a count a deadline stops goes on in the next call;
/// the old frequencies serve until it is done).
#[derive(Debug, Default)]
pub(super) struct GistState {
    /// Whether a count completed: before, consolidation waits for one.
    counted: bool,
    /// A count in progress.
    counting: Option<Counting>,
    /// Sealed episodes when the frequencies were counted.
    sealed: usize,
    /// Episodes the frequencies come from, newest first.
    sample: Vec<u64>,
    /// Per content word, in how many of them it occurs.
    df: HashMap<String, usize>,
    reps: HashMap<u64, Option<Rep>>,
    words: HashMap<String, Hypervector>,
    /// Each episode's content words with their counts ([`Cognition::episode_terms`]).
    terms: HashMap<u64, std::sync::Arc<HashMap<String, usize>>>,
    /// What a pass's labels take (the last pass's time, or three quarters of the estimate
    /// before it if that is more: labelling waits on the ledger's writer, so it varies with
    /// the load): a pass with a deadline stops taking episodes that long before it (a
    /// quarter of its time before any pass was timed), so its labels fit too.
    labels: std::time::Duration,
}

/// A count of episode frequencies that a deadline may stop and the next call resume.
#[derive(Debug, Default)]
struct Counting {
    /// Sealed episodes when it began.
    sealed: usize,
    /// The episodes it counts, newest first, and how many of them are counted.
    sample: Vec<u64>,
    counted: usize,
    df: HashMap<String, usize>,
}

impl Counting {
    fn start(cognition: &Cognition, project: &ProjectId, sealed: usize) -> LedgerResult<Self> {
        let sample = cognition
            .ledger
            .reading(|rows| rows.newest_sealed_episodes(project.as_str(), VOCABULARY_SAMPLE))?;
        Ok(Self {
            sealed,
            sample,
            ..Self::default()
        })
    }

    /// Counts until the sample is done (true) or `deadline` has passed (false).
    fn advance(
        &mut self,
        cognition: &Cognition,
        project: &ProjectId,
        deadline: Option<std::time::Instant>,
    ) -> LedgerResult<bool> {
        while let Some(&id) = self.sample.get(self.counted) {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return Ok(false);
            }
            for w in cognition.episode_terms(project, id)?.into_keys() {
                *self.df.entry(w).or_default() += 1;
            }
            self.counted += 1;
        }
        Ok(true)
    }
}

/// Episodes whose comparison forms a project's [`GistState`] keeps at most.
const REPS_KEPT: usize = 8192;

/// Word vectors a project's [`GistState`] keeps at most.
const WORDS_KEPT: usize = 65_536;

/// What distinguishes the episodes of one project (module documentation), for one
/// consolidation call, over the project's [`GistState`].
struct Gists<'a> {
    cognition: &'a Cognition,
    project: &'a ProjectId,
    state: GistState,
}

impl<'a> Gists<'a> {
    /// The project's kept state, counted again when its sealed episodes grew by a quarter
    /// (as far as `deadline` lets it); `None` while the project's first count is not done,
    /// and when a count done in this call took more than half the time to `deadline` (the
    /// first episodes after a count compare every concept's members afresh: the next call
    /// takes them with its whole time).
    fn new(
        cognition: &'a Cognition,
        project: &'a ProjectId,
        deadline: Option<std::time::Instant>,
    ) -> LedgerResult<Option<Self>> {
        let sealed = cognition
            .ledger
            .reading(|rows| rows.sealed_count(project.as_str()))? as usize;
        let began = std::time::Instant::now();
        let mut yields = false;
        let mut state = cognition.gists.locked().remove(project).unwrap_or_default();
        if !state.counted || sealed > state.sealed + state.sealed / 4 {
            let mut counting = match state.counting.take() {
                Some(c) => c,
                None => Counting::start(cognition, project, sealed)?,
            };
            if counting.advance(cognition, project, deadline)? {
                state = GistState {
                    counted: true,
                    sealed: counting.sealed,
                    sample: counting.sample,
                    df: counting.df,
                    // Word vectors and episode word counts do not depend on the
                    // frequencies: only the comparison forms are made again.
                    words: state.words,
                    terms: state.terms,
                    labels: state.labels,
                    ..GistState::default()
                };
                yields = deadline
                    .is_some_and(|d| began.elapsed() > d.saturating_duration_since(began) / 2);
            } else {
                state.counting = Some(counting);
            }
        }
        if !state.counted || yields {
            cognition.gists.locked().insert(project.clone(), state);
            return Ok(None);
        }
        if state.reps.len() > REPS_KEPT {
            state.reps.clear();
        }
        if state.words.len() > WORDS_KEPT {
            state.words.clear();
        }
        if state.terms.len() > REPS_KEPT {
            state.terms.clear();
        }
        Ok(Some(Self {
            cognition,
            project,
            state,
        }))
    }

    /// The content words of `episode` with their counts, read once.
    fn terms(&mut self, episode: u64) -> LedgerResult<std::sync::Arc<HashMap<String, usize>>> {
        if let Some(t) = self.state.terms.get(&episode) {
            return Ok(t.clone());
        }
        let t = std::sync::Arc::new(self.cognition.episode_terms(self.project, episode)?);
        self.state.terms.insert(episode, t.clone());
        Ok(t)
    }

    /// Hands the state back to the project's cache.
    fn keep(self) {
        self.cognition
            .gists
            .locked()
            .insert(self.project.clone(), self.state);
    }

    /// A word's weight: its Robertson–Spärck Jones inverse episode frequency, 0 for a
    /// word in half the episodes or more (a word the sample lacks counts as in one).
    fn weight(&self, word: &str) -> f64 {
        let n = self.state.sample.len() as f64;
        let df = self.state.df.get(word).copied().unwrap_or(0);
        let df = df.max(1) as f64;
        ((n - df + 0.5) / (df + 0.5)).ln().max(0.0)
    }

    /// `episode` as consolidation compares it (`None`: it has no topic vector).
    fn of(&mut self, episode: u64) -> LedgerResult<Option<Rep>> {
        if let Some(r) = self.state.reps.get(&episode) {
            return Ok(r.clone());
        }
        let Some(topic) = self
            .cognition
            .episode(self.project, EpisodeId(episode))?
            .topic
        else {
            self.state.reps.insert(episode, None);
            return Ok(None);
        };
        let dim = self.cognition.dim;
        let mut bundle = Bundler::new(dim);
        for (word, &tf) in self.terms(episode)?.iter() {
            let idf = self.weight(word);
            if idf <= 0.0 {
                continue;
            }
            let weight = (8.0 * idf * (1.0 + (tf as f64).ln())).round() as i64;
            let v = self
                .state
                .words
                .entry(word.clone())
                .or_insert_with_key(|w| {
                    Hypervector::random(dim, xxhash_rust::xxh3::xxh3_64(w.as_bytes()))
                });
            bundle.add_weighted(v, weight.max(1));
        }
        let gist = if bundle.is_empty() {
            None
        } else {
            Some(bundle.binarize(episode)?)
        };
        let rep = Some(Rep { gist, topic });
        self.state.reps.insert(episode, rep.clone());
        Ok(rep)
    }

    /// Up to [`LINKAGE_SAMPLE`] members of `concept`, newest first.
    fn members(&mut self, concept: ConceptId) -> LedgerResult<Vec<Rep>> {
        let mut ids = self.cognition.member_ids(concept)?;
        ids.sort_unstable_by(|a, b| b.cmp(a));
        let mut out = Vec::new();
        for id in ids.into_iter().take(LINKAGE_SAMPLE) {
            if let Some(g) = self.of(id)? {
                out.push(g);
            }
        }
        Ok(out)
    }

    /// The baseline of `g`: its similarity to up to [`BASELINE_SAMPLE`] other recent
    /// episodes (those in `exclude` left out); `None` with fewer than four.
    fn baseline(&mut self, exclude: &[u64], g: &Rep) -> LedgerResult<Option<Baseline>> {
        let others: Vec<u64> = self
            .state
            .sample
            .iter()
            .filter(|id| !exclude.contains(id))
            .copied()
            .collect();
        let mut sims = Vec::new();
        for id in others {
            if let Some(o) = self.of(id)? {
                sims.push(o.similarity(g));
                if sims.len() == BASELINE_SAMPLE {
                    break;
                }
            }
        }
        if sims.len() < 4 {
            return Ok(None);
        }
        let m = median(&mut sims);
        let mut below: Vec<f64> = sims.iter().filter(|&&s| s <= m).map(|s| m - s).collect();
        // Never narrower than chance: two independent gists differ by 1/√D in similarity,
        // and a deviation estimated from a handful of episodes can be far below it.
        let chance = 1.0 / (self.cognition.dim.bits() as f64).sqrt();
        Ok(Some(Baseline {
            median: m,
            sigma: (1.4826 * median(&mut below)).max(chance),
        }))
    }
}

impl Cognition {
    /// Consolidates up to `budget` sealed, not yet consolidated episodes into concepts (see
    /// the module documentation), then merges the concepts it touched with their nearest
    /// neighbours where average linkage says they are one topic. Returns `(episodes
    /// consolidated, concepts created)`; a concept created and merged away in the same
    /// call is not counted.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn consolidate(&self, project: &ProjectId, budget: usize) -> LedgerResult<(usize, usize)> {
        self.consolidate_until(project, budget, None)
    }

    /// [`consolidate`](Self::consolidate) within `deadline`: it stops taking episodes
    /// (each with its merges and retirement) early enough for the labels of what it
    /// touched to fit, as long as they took lately; the concept limit holds after every
    /// episode.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn consolidate_until(
        &self,
        project: &ProjectId,
        budget: usize,
        deadline: Option<std::time::Instant>,
    ) -> LedgerResult<(usize, usize)> {
        let pending = self
            .ledger
            .reading(|rows| rows.unconsolidated_episodes(project.as_str(), budget))?;
        let Some(mut gists) = Gists::new(self, project, deadline)? else {
            return Ok((0, 0));
        };
        // One episode at a time, each with its merges and the retirement it brings
        // before the next is taken: the concepts are the same however the work is cut
        // into calls (a budget, a deadline), and the same for the same input.
        let mut live: Vec<ConceptId> = Vec::new();
        let mut created: Vec<ConceptId> = Vec::new();
        let mut done = 0;
        // Before any pass was timed, a quarter of the time left is kept for the labels.
        let finish = match gists.state.labels {
            std::time::Duration::ZERO => deadline.map_or(std::time::Duration::ZERO, |d| {
                d.saturating_duration_since(std::time::Instant::now()) / 4
            }),
            measured => measured,
        };
        let take_until = deadline.map(|d| d.checked_sub(finish).unwrap_or(d));
        for (episode, blob, reward) in pending {
            if take_until.is_some_and(|d| std::time::Instant::now() >= d) {
                break;
            }
            let v = self.decode(&blob)?;
            let best = match gists.of(episode)? {
                Some(rep) => self.best_concept(project, &mut gists, episode, &rep)?,
                None => None,
            };
            let (success, failure) = match reward {
                Some(r) if r > 0.0 => (1, 0),
                Some(r) if r < 0.0 => (0, 1),
                _ => (0, 0),
            };
            let cid = match best {
                Some(cid) => {
                    self.join_concept(project, cid, episode, &v, success, failure)?;
                    cid
                }
                None => {
                    let cid = self.new_concept(project, episode, &v, success, failure)?;
                    created.push(cid);
                    cid
                }
            };
            live.extend(self.merge_chain(project, &mut gists, cid)?);
            self.retire(project)?;
            done += 1;
        }
        let labelling = std::time::Instant::now();
        // What this pass touched and still exists.
        let existing = self.concept_ids(project)?;
        live.retain(|c| existing.contains(c));
        live.sort_unstable_by_key(|c| c.0);
        live.dedup();
        self.relabel(&mut gists, &live)?;
        gists.state.labels = labelling.elapsed().max(gists.state.labels * 3 / 4);
        gists.keep();
        let created = created.iter().filter(|c| existing.contains(c)).count();
        Ok((done, created))
    }

    /// Merges `cid` into its nearest concept while one is near enough (module
    /// documentation), and that one into its own, and so on: the concepts it touched,
    /// the last one being where `cid`'s episodes now are.
    fn merge_chain(
        &self,
        project: &ProjectId,
        gists: &mut Gists<'_>,
        cid: ConceptId,
    ) -> LedgerResult<Vec<ConceptId>> {
        let mut chain = vec![cid];
        let mut current = cid;
        while let Some(into) = self.merge_partner(project, gists, current)? {
            self.merge_concepts(project, current, into)?;
            if chain.contains(&into) {
                break;
            }
            chain.push(into);
            current = into;
        }
        Ok(chain)
    }

    /// The concept `episode` (gist `g`) joins: the one whose members its gist is most
    /// similar to on average, if that reaches the episode's baseline (module
    /// documentation).
    fn best_concept(
        &self,
        project: &ProjectId,
        gists: &mut Gists<'_>,
        episode: u64,
        g: &Rep,
    ) -> LedgerResult<Option<ConceptId>> {
        let need = match gists.baseline(&[episode], g)? {
            Some(b) => self.floor(g, b.median + self.config.concept_z * b.sigma),
            None => self.config.concept_similarity,
        };
        let mut best: Option<(ConceptId, f64)> = None;
        for cid in self.concept_ids(project)? {
            let members = gists.members(cid)?;
            if members.is_empty() {
                continue;
            }
            let link = mean_similarity(std::slice::from_ref(g), &members);
            if link >= need && best.is_none_or(|(_, l)| link > l) {
                best = Some((cid, link));
            }
        }
        Ok(best.map(|(c, _)| c))
    }

    /// What a comparison of `rep` needs at least, beside its baseline: gists of distinct
    /// words are near chance when unrelated, so the baseline decides; topic vectors (the
    /// bundle of everything said) share the project's vocabulary, and also need the
    /// absolute `concept_similarity`.
    fn floor(&self, rep: &Rep, need: f64) -> f64 {
        if rep.gist.is_some() {
            need
        } else {
            need.max(self.config.concept_similarity)
        }
    }

    /// Retires concepts of one episode that attracted none of the [`RETIRE_AFTER`]
    /// episodes consolidated after theirs, then, past the profile's `max_concepts`, the
    /// concepts with the least support (the oldest first). Returns the retired concepts.
    fn retire(&self, project: &ProjectId) -> LedgerResult<Vec<ConceptId>> {
        let p = project.as_str();
        let (lonely, over) = self.ledger.reading(|rows| {
            Ok((
                rows.lonely_concepts(p, RETIRE_AFTER)?,
                rows.concepts_beyond(p, self.config.max_concepts)?,
            ))
        })?;
        let mut retired: Vec<u64> = lonely;
        retired.extend(
            over.into_iter()
                .filter(|c| !retired.contains(c))
                .collect::<Vec<_>>(),
        );
        if retired.is_empty() {
            return Ok(Vec::new());
        }
        self.ledger.writing(|rows| rows.delete_concepts(&retired))?;
        Ok(retired.into_iter().map(ConceptId).collect())
    }

    /// The ids of `project`'s concepts, oldest first.
    fn concept_ids(&self, project: &ProjectId) -> LedgerResult<Vec<ConceptId>> {
        Ok(self
            .ledger
            .reading(|rows| rows.concept_ids(project.as_str()))?
            .into_iter()
            .map(ConceptId)
            .collect())
    }

    /// How many sealed episodes of `project` wait for consolidation.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn unconsolidated(&self, project: &ProjectId) -> LedgerResult<usize> {
        Ok(self
            .ledger
            .reading(|rows| rows.unconsolidated_count(project.as_str()))? as usize)
    }

    /// The concept `concept` should merge into, if any: the concept whose members its
    /// members are nearest to on average, when that mean reaches their baseline (module
    /// documentation).
    fn merge_partner(
        &self,
        project: &ProjectId,
        gists: &mut Gists<'_>,
        concept: ConceptId,
    ) -> LedgerResult<Option<ConceptId>> {
        let ours = gists.members(concept)?;
        if ours.is_empty() {
            return Ok(None);
        }
        // (concept, mean link, members compared).
        let mut links: Vec<(ConceptId, f64, usize)> = Vec::new();
        for other in self.concept_ids(project)? {
            if other == concept {
                continue;
            }
            let theirs = gists.members(other)?;
            if !theirs.is_empty() {
                links.push((other, mean_similarity(&ours, &theirs), theirs.len()));
            }
        }
        let nearest = links.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((other, link, theirs)) = nearest else {
            return Ok(None);
        };
        // The baseline of our members (up to four of them), averaged.
        let ids = self.member_ids(concept)?;
        let mut sum = (0.0, 0.0, 0usize);
        for g in ours.iter().take(4) {
            if let Some(b) = gists.baseline(&ids, g)? {
                sum = (sum.0 + b.median, sum.1 + b.sigma, sum.2 + 1);
            }
        }
        if sum.2 == 0 {
            return Ok(None);
        }
        let (m, sigma) = (sum.0 / sum.2 as f64, sum.1 / sum.2 as f64);
        let n = ours.len().min(theirs) as f64;
        let need = self.floor(&ours[0], m + self.config.concept_z * sigma / n.powf(0.25));
        // ... and the nearest concept stands out among all of them: the members of two
        // concepts of one topic are each near-duplicates, so a mean over their pairs is not
        // narrower than one pair, and among many unrelated concepts one is near by chance.
        if links.len() >= 4 {
            let mut others: Vec<f64> = links.iter().map(|l| l.1).collect();
            let mid = median(&mut others);
            let mut below: Vec<f64> = others
                .iter()
                .filter(|&&s| s <= mid)
                .map(|s| mid - s)
                .collect();
            let chance = 1.0 / (self.dim.bits() as f64).sqrt();
            let spread = (1.4826 * median(&mut below)).max(chance);
            if link < mid + self.config.concept_z * spread {
                return Ok(None);
            }
        }
        Ok((link >= need).then_some(other))
    }

    fn member_ids(&self, concept: ConceptId) -> LedgerResult<Vec<u64>> {
        self.ledger.reading(|rows| rows.concept_members(concept.0))
    }

    /// Adds `episode` (topic `v`) to `concept`.
    fn join_concept(
        &self,
        project: &ProjectId,
        concept: ConceptId,
        episode: u64,
        v: &Hypervector,
        success: u64,
        failure: u64,
    ) -> LedgerResult<()> {
        let counters = self
            .ledger
            .reading(|rows| rows.concept_counters(concept.0))?
            .ok_or(LedgerError::NotFound {
                what: "concept",
                id: concept.0,
            })?;
        let mut b = Bundler::from_bytes(self.dim, &counters).map_err(|_| LedgerError::Corrupt {
            what: "concept counters",
            detail: format!(
                "{} bytes that are not the vote counters of a {}-bit concept",
                counters.len(),
                self.dim.bits()
            ),
        })?;
        b.add(v);
        let proto = b.binarize(concept.0)?;
        let now = self.ledger.now_ms();
        let vectors = (b.to_bytes(), proto.to_le_bytes());
        self.ledger.writing(|rows| {
            rows.join_concept(
                project.as_str(),
                (concept.0, episode),
                (&vectors.0, &vectors.1),
                (success, failure),
                now,
            )
        })
    }

    /// Starts a concept from `episode` (topic `v`).
    fn new_concept(
        &self,
        project: &ProjectId,
        episode: u64,
        v: &Hypervector,
        success: u64,
        failure: u64,
    ) -> LedgerResult<ConceptId> {
        let mut b = Bundler::new(self.dim);
        b.add(v);
        let now = self.ledger.now_ms();
        let label = format!("episode-{episode}");
        let counters = b.to_bytes();
        let prototype = v.to_le_bytes();
        self.ledger
            .writing(|rows| {
                rows.new_concept(
                    project.as_str(),
                    (&label, episode),
                    (&counters, &prototype),
                    (success, failure),
                    now,
                )
            })
            .map(ConceptId)
    }

    /// Moves every episode of `from` into `into`, rebuilding `into`'s counters from its
    /// members' topics, and deletes `from`; one transaction.
    fn merge_concepts(
        &self,
        project: &ProjectId,
        from: ConceptId,
        into: ConceptId,
    ) -> LedgerResult<()> {
        let mut ids = self.member_ids(from)?;
        ids.extend(self.member_ids(into)?);
        let mut b = Bundler::new(self.dim);
        for id in &ids {
            if let Some(t) = self.episode(project, EpisodeId(*id))?.topic {
                b.add(&t);
            }
        }
        let proto = b.binarize(into.0)?;
        let now = self.ledger.now_ms();
        let vectors = (b.to_bytes(), proto.to_le_bytes());
        self.ledger.writing(|rows| {
            rows.merge_concepts(
                (from.0, into.0),
                (&vectors.0, &vectors.1),
                ids.len() as u64,
                now,
            )
        })
    }

    /// Labels `concepts` by their most distinctive words: per word, the share of the
    /// concept's episodes whose user events use it times its weight in the project
    /// ([`Gists::weight`]: a word in half the episodes or more scores zero).
    fn relabel(&self, gists: &mut Gists<'_>, concepts: &[ConceptId]) -> LedgerResult<()> {
        let mut labels = Vec::with_capacity(concepts.len());
        for &concept in concepts {
            let members = self.member_ids(concept)?;
            // Per word: in how many of the sampled episodes, and how often in all.
            let mut ef: HashMap<String, (usize, usize)> = HashMap::new();
            let mut sampled = 0;
            for id in members.iter().rev().take(LINKAGE_SAMPLE) {
                sampled += 1;
                for (w, &tf) in gists.terms(*id)?.iter() {
                    let e = ef.entry(w.clone()).or_default();
                    *e = (e.0 + 1, e.1 + tf);
                }
            }
            // A word of one episode alone does not describe a concept of several.
            let least = sampled.min(2);
            let mut ranked: Vec<(String, f64, usize)> = ef
                .into_iter()
                .filter(|(_, (k, _))| *k >= least)
                .map(|(w, (k, tf))| {
                    let score = k as f64 / sampled.max(1) as f64 * gists.weight(&w);
                    (w, score, tf)
                })
                .filter(|(_, s, _)| *s > 0.0)
                .collect();
            // Ties (words as rare as each other) go to the word said most often.
            ranked.sort_by(|a, b| {
                b.1.total_cmp(&a.1)
                    .then_with(|| b.2.cmp(&a.2))
                    .then_with(|| a.0.cmp(&b.0))
            });
            // A label names what dominates: words far below the best one are padding.
            let best = ranked.first().map_or(0.0, |r| r.1);
            let label = if ranked.is_empty() {
                format!("concept-{}", concept.0)
            } else {
                ranked
                    .into_iter()
                    .take(LABEL_WORDS)
                    .filter(|(_, score, _)| *score >= best / 2.0)
                    .map(|(w, _, _)| w)
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            labels.push((concept, label));
        }
        // One transaction for all: each write waits for the ledger's writer.
        let labels: Vec<(u64, String)> = labels.into_iter().map(|(c, l)| (c.0, l)).collect();
        self.ledger.writing(|rows| rows.label_concepts(&labels))
    }

    /// The content words of an episode with how often each occurs: those of its user
    /// events, or of all its events when it has none (an agent's own episode).
    fn episode_terms(
        &self,
        project: &ProjectId,
        episode: u64,
    ) -> LedgerResult<HashMap<String, usize>> {
        // (is the user's, content) of each event, in one read.
        let events = self
            .ledger
            .reading(|rows| rows.episode_texts(project.as_str(), episode))?;
        let users = events.iter().any(|e| e.0);
        let mut out: HashMap<String, usize> = HashMap::new();
        for (_, content) in events.iter().filter(|e| !users || e.0) {
            for t in crate::text::tokens(content) {
                if crate::text::is_content_word(&t) && !crate::text::is_stop_word(&t) {
                    *out.entry(t).or_default() += 1;
                }
            }
        }
        Ok(out)
    }

    /// Concepts nearest to `vector` (id, similarity), best first.
    ///
    /// # Errors
    /// Wrong dimension, SQLite errors.
    pub fn nearby_concepts(
        &self,
        project: &ProjectId,
        vector: &Hypervector,
        k: usize,
    ) -> LedgerResult<Vec<(ConceptId, f64)>> {
        self.check_dim(vector)?;
        let rows = self
            .ledger
            .reading(|rows| rows.concept_prototypes(project.as_str()))?;
        self.rank(rows, vector, k)
            .map(|v| v.into_iter().map(|(id, s)| (ConceptId(id), s)).collect())
    }

    /// Every concept of `project`.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn concepts(&self, project: &ProjectId) -> LedgerResult<Vec<Concept>> {
        let rows = self
            .ledger
            .reading(|rows| rows.concept_records(project.as_str()))?;
        rows.into_iter()
            .map(|(id, label, proto, s, f)| {
                let support = self
                    .ledger
                    .reading(|rows| rows.concept_episodes(id))?
                    .into_iter()
                    .map(EpisodeId)
                    .collect();
                Ok(Concept {
                    id: ConceptId(id),
                    label,
                    support,
                    reliability: (s as f64 + 1.0) / ((s + f) as f64 + 2.0),
                    outcomes: (s, f),
                    prototype: self.decode(&proto)?,
                })
            })
            .collect()
    }

    /// Cleanup: rebuilds up to `budget` concepts' counters exactly from their supporting
    /// episodes' vectors, pulling drifted prototypes back to their support. Returns how many
    /// prototypes changed.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn refresh_concepts(&self, project: &ProjectId, budget: usize) -> LedgerResult<usize> {
        let mut changed = 0;
        for concept in self.concepts(project)?.into_iter().take(budget) {
            let mut b = Bundler::new(self.dim);
            for ep in &concept.support {
                if let Some(v) = self.episode(project, *ep)?.topic {
                    b.add(&v);
                }
            }
            if b.is_empty() {
                continue;
            }
            let proto = b.binarize(concept.id.0)?;
            if proto != concept.prototype {
                changed += 1;
            }
            let vectors = (b.to_bytes(), proto.to_le_bytes());
            self.ledger
                .writing(|rows| rows.set_concept_vectors(concept.id.0, (&vectors.0, &vectors.1)))?;
        }
        Ok(changed)
    }
}
