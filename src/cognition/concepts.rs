//! Concepts: sealed episodes consolidated into prototypes kept as counters.
//!
//! Text of one project shares many words (filler, names, the project's vocabulary), so
//! unrelated episodes are far above chance similarity, and how far depends on the project.
//! Consolidation therefore judges every similarity against the project's own baseline:
//! for an episode, the median `m` of its similarity to up to [`BASELINE_SAMPLE`] other
//! sealed episodes and a one-sided robust deviation `σ` (1.4826 × the median deviation of
//! the similarities below `m`: same-topic episodes sit above the median and would inflate
//! a two-sided one).
//!
//! Clustering is average linkage on that scale, in one online pass plus merges:
//! - an episode joins the concept (among the [`CANDIDATES`] nearest prototypes) whose
//!   members (up to [`LINKAGE_SAMPLE`]) it is most similar to on average, when that mean
//!   reaches `m + concept_z · σ` (and the absolute `concept_similarity`); otherwise it
//!   starts a concept. The mean is compared on the scale of single pairs, not narrowed
//!   by `√n`: an episode's similarities to the members of one concept move together
//!   (they share the episode's own words), and the narrowed rule merged planted topics
//!   (`tests/concepts.rs`: ARI down to 0.13 with `σ/√n`, 0.90 with `σ/n^¼`, ≥ 0.97 without);
//! - after the pass, each concept it touched merges with its nearest concept when the mean
//!   similarity between their members reaches `m̄ + concept_z · σ̄` (the baseline of up to
//!   four of its members, averaged; the join rule is the case of one member), which
//!   repairs the splits an online pass makes while a topic's first episodes are still
//!   alone (without merges: ARI 0.36 at k = 3, ten concepts for three topics).
//!
//! Comparing with members rather than with the prototype keeps both sides of the test on
//! one scale: a bundle is more similar to its members than they are to each other, so a
//! prototype test against a pairwise baseline splits young concepts and absorbs into old
//! ones.
//!
//! Nothing lets one prototype absorb everything: joining is a test against unrelated
//! episodes of the same project, never against a fixed number.

use rusqlite::params;

use hdv::{Bundler, Hypervector};

use super::{Cognition, EpisodeId, similarity};
use crate::ledger::{LedgerError, LedgerResult, Role};
use crate::store::ProjectId;

/// Other sealed episodes an episode's baseline is estimated from.
pub const BASELINE_SAMPLE: usize = 64;

/// Nearest prototypes an episode is compared with, member by member.
pub const CANDIDATES: usize = 3;

/// Members of a concept sampled for average linkage (the most recent ones).
pub const LINKAGE_SAMPLE: usize = 16;

/// Words in a concept's label.
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

fn mean_similarity(a: &[Hypervector], b: &[Hypervector]) -> f64 {
    let mut sum = 0.0;
    for x in a {
        for y in b {
            sum += similarity(x, y);
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

    /// [`consolidate`](Self::consolidate), stopping before the next episode once
    /// `deadline` has passed (the merges and labels of what it did still run).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn consolidate_until(
        &self,
        project: &ProjectId,
        budget: usize,
        deadline: Option<std::time::Instant>,
    ) -> LedgerResult<(usize, usize)> {
        let pending: Vec<(i64, Vec<u8>, Option<f64>)> = self.ledger.read(|c| {
            c.prepare_cached(
                "SELECT id, topic, reward FROM episodes WHERE project = ?1 AND status = 'sealed' AND consolidated = 0 AND topic IS NOT NULL ORDER BY id LIMIT ?2",
            )
            .and_then(|mut s| s.query_map(params![project.as_str(), budget as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect())
            .map_err(|e| self.ledger.sql(e))
        })?;
        let mut touched: Vec<ConceptId> = Vec::new();
        let mut created: Vec<ConceptId> = Vec::new();
        let mut done = 0;
        for (episode, blob, reward) in pending {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                break;
            }
            let v = self.decode(&blob)?;
            let baseline = self.topic_baseline(project, &[episode], &v)?;
            let mut best: Option<(ConceptId, f64)> = None;
            for (cid, proto_sim) in self.nearby_concepts(project, &v, CANDIDATES)? {
                let (margin, _) = match baseline {
                    Some(b) => {
                        let members = self.member_topics(cid)?;
                        let link = mean_similarity(std::slice::from_ref(&v), &members);
                        let need = (b.median + self.config.concept_z * b.sigma)
                            .max(self.config.concept_similarity);
                        (link - need, link)
                    }
                    // Too few other episodes for a baseline: the absolute floor decides.
                    None => (proto_sim - self.config.concept_similarity, proto_sim),
                };
                if margin >= 0.0 && best.is_none_or(|(_, m)| margin > m) {
                    best = Some((cid, margin));
                }
            }
            let (success, failure) = match reward {
                Some(r) if r > 0.0 => (1, 0),
                Some(r) if r < 0.0 => (0, 1),
                _ => (0, 0),
            };
            let cid = match best {
                Some((cid, _)) => {
                    self.join_concept(project, cid, episode, &v, success, failure)?;
                    cid
                }
                None => {
                    let cid = self.new_concept(project, episode, &v, success, failure)?;
                    created.push(cid);
                    cid
                }
            };
            if !touched.contains(&cid) {
                touched.push(cid);
            }
            done += 1;
        }
        let (mut merged_away, mut merge_targets) = (Vec::new(), Vec::new());
        for cid in &touched {
            let mut current = *cid;
            while !merged_away.contains(&current) {
                match self.merge_partner(project, current)? {
                    Some(into) => {
                        self.merge_concepts(project, current, into)?;
                        merged_away.push(current);
                        merge_targets.push(into);
                        current = into;
                    }
                    None => break,
                }
            }
        }
        // What the merges kept, touched directly or as a merge target.
        let mut live: Vec<ConceptId> = Vec::new();
        for cid in &touched {
            let mut c = *cid;
            while let Some(i) = merged_away.iter().position(|m| *m == c) {
                c = merge_targets[i];
            }
            if !live.contains(&c) {
                live.push(c);
            }
        }
        self.relabel(project, &live)?;
        let created = created.iter().filter(|c| !merged_away.contains(c)).count();
        Ok((done, created))
    }

    /// How many sealed episodes of `project` wait for consolidation.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn unconsolidated(&self, project: &ProjectId) -> LedgerResult<usize> {
        self.ledger.read(|c| {
            c.query_row(
                "SELECT COUNT(*) FROM episodes WHERE project = ?1 AND status = 'sealed' AND consolidated = 0 AND topic IS NOT NULL",
                [project.as_str()],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as usize)
            .map_err(|e| self.ledger.sql(e))
        })
    }

    /// The baseline of `topic` in `project`: its similarity to up to [`BASELINE_SAMPLE`]
    /// other sealed episodes (those in `exclude` left out); `None` with fewer than four.
    fn topic_baseline(
        &self,
        project: &ProjectId,
        exclude: &[i64],
        topic: &Hypervector,
    ) -> LedgerResult<Option<Baseline>> {
        let rows: Vec<(i64, Vec<u8>)> = self.ledger.read(|c| {
            c.prepare_cached(
                "SELECT id, topic FROM episodes WHERE project = ?1 AND status = 'sealed' AND topic IS NOT NULL ORDER BY id DESC LIMIT ?2",
            )
            .and_then(|mut s| s.query_map(params![project.as_str(), (BASELINE_SAMPLE + exclude.len()) as i64], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
            .map_err(|e| self.ledger.sql(e))
        })?;
        let mut sims = Vec::with_capacity(rows.len());
        for (_, b) in rows.iter().filter(|(id, _)| !exclude.contains(id)) {
            sims.push(similarity(&self.decode(b)?, topic));
            if sims.len() == BASELINE_SAMPLE {
                break;
            }
        }
        if sims.len() < 4 {
            return Ok(None);
        }
        let m = median(&mut sims);
        let mut below: Vec<f64> = sims.iter().filter(|&&s| s <= m).map(|s| m - s).collect();
        Ok(Some(Baseline {
            median: m,
            sigma: 1.4826 * median(&mut below),
        }))
    }

    /// Topic vectors of up to [`LINKAGE_SAMPLE`] members of `concept`, newest first.
    fn member_topics(&self, concept: ConceptId) -> LedgerResult<Vec<Hypervector>> {
        let blobs: Vec<Vec<u8>> = self.ledger.read(|c| {
            c.prepare_cached(
                "SELECT e.topic FROM concept_support s JOIN episodes e ON e.id = s.episode_id WHERE s.concept_id = ?1 AND e.topic IS NOT NULL ORDER BY s.episode_id DESC LIMIT ?2",
            )
            .and_then(|mut s| s.query_map(params![concept.0 as i64, LINKAGE_SAMPLE as i64], |r| r.get(0))?.collect())
            .map_err(|e| self.ledger.sql(e))
        })?;
        blobs.iter().map(|b| self.decode(b)).collect()
    }

    /// The concept `concept` should merge into, if any: its nearest other concept, when the
    /// mean similarity between their members reaches the members' baseline (module
    /// documentation).
    fn merge_partner(
        &self,
        project: &ProjectId,
        concept: ConceptId,
    ) -> LedgerResult<Option<ConceptId>> {
        let ours = self.member_topics(concept)?;
        if ours.is_empty() {
            return Ok(None);
        }
        let proto = self.concept_prototype(concept)?;
        let Some((other, _)) = self
            .nearby_concepts(project, &proto, 2)?
            .into_iter()
            .find(|(c, _)| *c != concept)
        else {
            return Ok(None);
        };
        let theirs = self.member_topics(other)?;
        if theirs.is_empty() {
            return Ok(None);
        }
        // The baseline of our members (up to four of them), averaged.
        let ids = self.member_ids(concept)?;
        let mut sum = (0.0, 0.0, 0usize);
        for v in ours.iter().take(4) {
            if let Some(b) = self.topic_baseline(project, &ids, v)? {
                sum = (sum.0 + b.median, sum.1 + b.sigma, sum.2 + 1);
            }
        }
        if sum.2 == 0 {
            return Ok(None);
        }
        let (m, sigma) = (sum.0 / sum.2 as f64, sum.1 / sum.2 as f64);
        let need = (m + self.config.concept_z * sigma).max(self.config.concept_similarity);
        Ok((mean_similarity(&ours, &theirs) >= need).then_some(other))
    }

    fn member_ids(&self, concept: ConceptId) -> LedgerResult<Vec<i64>> {
        self.ledger.read(|c| {
            c.prepare_cached("SELECT episode_id FROM concept_support WHERE concept_id = ?1")
                .and_then(|mut s| s.query_map([concept.0 as i64], |r| r.get(0))?.collect())
                .map_err(|e| self.ledger.sql(e))
        })
    }

    fn concept_prototype(&self, concept: ConceptId) -> LedgerResult<Hypervector> {
        let blob: Vec<u8> = self.ledger.read(|c| {
            c.query_row(
                "SELECT prototype FROM concepts WHERE id = ?1",
                [concept.0 as i64],
                |r| r.get(0),
            )
            .map_err(|e| self.ledger.sql(e))
        })?;
        self.decode(&blob)
    }

    /// Adds `episode` (topic `v`) to `concept`.
    fn join_concept(
        &self,
        project: &ProjectId,
        concept: ConceptId,
        episode: i64,
        v: &Hypervector,
        success: i64,
        failure: i64,
    ) -> LedgerResult<()> {
        let counters: Vec<u8> = self.ledger.read(|c| {
            c.query_row(
                "SELECT counters FROM concepts WHERE id = ?1",
                [concept.0 as i64],
                |r| r.get(0),
            )
            .map_err(|e| self.ledger.sql(e))
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
        self.ledger.write(|tx| {
            tx.execute(
                "UPDATE concepts SET counters = ?2, prototype = ?3, support = support + 1, successes = successes + ?4, failures = failures + ?5, updated_at = ?6 WHERE id = ?1",
                params![concept.0 as i64, b.to_bytes(), proto.to_le_bytes(), success, failure, now],
            )
            .map_err(|e| self.ledger.sql(e))?;
            tx.execute("INSERT INTO concept_support (concept_id, episode_id, project) VALUES (?1, ?2, ?3)", params![concept.0 as i64, episode, project.as_str()])
                .map_err(|e| self.ledger.sql(e))?;
            tx.execute("UPDATE episodes SET consolidated = 1 WHERE id = ?1", [episode]).map(|_| ()).map_err(|e| self.ledger.sql(e))
        })
    }

    /// Starts a concept from `episode` (topic `v`).
    fn new_concept(
        &self,
        project: &ProjectId,
        episode: i64,
        v: &Hypervector,
        success: i64,
        failure: i64,
    ) -> LedgerResult<ConceptId> {
        let mut b = Bundler::new(self.dim);
        b.add(v);
        let now = self.ledger.now_ms();
        let label = format!("episode-{episode}");
        self.ledger.write(|tx| {
            tx.execute(
                "INSERT INTO concepts (project, label, prototype, counters, support, successes, failures, updated_at) VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6, ?7)",
                params![project.as_str(), label, v.to_le_bytes(), b.to_bytes(), success, failure, now],
            )
            .map_err(|e| self.ledger.sql(e))?;
            let cid = tx.last_insert_rowid();
            tx.execute("INSERT INTO concept_support (concept_id, episode_id, project) VALUES (?1, ?2, ?3)", params![cid, episode, project.as_str()])
                .map_err(|e| self.ledger.sql(e))?;
            tx.execute("UPDATE episodes SET consolidated = 1 WHERE id = ?1", [episode]).map_err(|e| self.ledger.sql(e))?;
            Ok(ConceptId(cid as u64))
        })
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
            if let Some(t) = self.episode(project, EpisodeId(*id as u64))?.topic {
                b.add(&t);
            }
        }
        let proto = b.binarize(into.0)?;
        let now = self.ledger.now_ms();
        self.ledger.write(|tx| {
            let sql = |e| self.ledger.sql(e);
            tx.execute(
                "UPDATE concepts SET counters = ?2, prototype = ?3, support = ?4, successes = successes + (SELECT successes FROM concepts WHERE id = ?5), failures = failures + (SELECT failures FROM concepts WHERE id = ?5), updated_at = ?6 WHERE id = ?1",
                params![into.0 as i64, b.to_bytes(), proto.to_le_bytes(), ids.len() as i64, from.0 as i64, now],
            )
            .map_err(sql)?;
            tx.execute(
                "UPDATE concept_support SET concept_id = ?2 WHERE concept_id = ?1",
                params![from.0 as i64, into.0 as i64],
            )
            .map_err(sql)?;
            tx.execute("DELETE FROM concepts WHERE id = ?1", [from.0 as i64])
                .map(|_| ())
                .map_err(sql)
        })
    }

    /// Labels `concepts` by their most distinctive words: per word, the share of the
    /// concept's episodes whose user events use it times its inverse episode frequency in
    /// the project's recent sealed episodes (words every topic uses score near zero).
    fn relabel(&self, project: &ProjectId, concepts: &[ConceptId]) -> LedgerResult<()> {
        if concepts.is_empty() {
            return Ok(());
        }
        let sample: Vec<i64> = self.ledger.read(|c| {
            c.prepare_cached("SELECT id FROM episodes WHERE project = ?1 AND status = 'sealed' ORDER BY id DESC LIMIT ?2")
                .and_then(|mut s| s.query_map(params![project.as_str(), BASELINE_SAMPLE as i64], |r| r.get(0))?.collect())
                .map_err(|e| self.ledger.sql(e))
        })?;
        let mut df: std::collections::HashMap<String, usize> = Default::default();
        for id in &sample {
            for w in self.episode_words(project, *id)? {
                *df.entry(w).or_default() += 1;
            }
        }
        let n = sample.len().max(1) as f64;
        for &concept in concepts {
            let members = self.member_ids(concept)?;
            let mut ef: std::collections::HashMap<String, usize> = Default::default();
            let mut sampled = 0;
            for id in members.iter().rev().take(LINKAGE_SAMPLE) {
                sampled += 1;
                for w in self.episode_words(project, *id)? {
                    *ef.entry(w).or_default() += 1;
                }
            }
            let mut ranked: Vec<(String, f64)> = ef
                .into_iter()
                .map(|(w, k)| {
                    let idf = ((n + 1.0) / (*df.get(&w).unwrap_or(&0) as f64 + 0.5)).ln();
                    let score = k as f64 / sampled.max(1) as f64 * idf;
                    (w, score)
                })
                .filter(|(_, s)| *s > 0.0)
                .collect();
            ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let label = if ranked.is_empty() {
                format!("concept-{}", concept.0)
            } else {
                ranked
                    .into_iter()
                    .take(LABEL_WORDS)
                    .map(|(w, _)| w)
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            self.ledger.write(|tx| {
                tx.execute(
                    "UPDATE concepts SET label = ?2 WHERE id = ?1",
                    params![concept.0 as i64, label],
                )
                .map(|_| ())
                .map_err(|e| self.ledger.sql(e))
            })?;
        }
        Ok(())
    }

    /// The distinct content words of an episode's user events.
    fn episode_words(
        &self,
        project: &ProjectId,
        episode: i64,
    ) -> LedgerResult<std::collections::HashSet<String>> {
        let ep = self.episode(project, EpisodeId(episode as u64))?;
        let mut out = std::collections::HashSet::new();
        for id in &ep.events {
            if let Some(e) = self.ledger.get(project, *id)?
                && e.role == Role::User
            {
                for t in crate::text::tokens(&e.content) {
                    if crate::recall::values::is_content_word(&t) && !crate::text::is_stop_word(&t)
                    {
                        out.insert(t);
                    }
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
        let rows: Vec<(i64, Vec<u8>)> = self.ledger.read(|c| {
            c.prepare_cached("SELECT id, prototype FROM concepts WHERE project = ?1 ORDER BY id")
                .and_then(|mut s| {
                    s.query_map([project.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))?
                        .collect()
                })
                .map_err(|e| self.ledger.sql(e))
        })?;
        self.rank(rows, vector, k)
            .map(|v| v.into_iter().map(|(id, s)| (ConceptId(id), s)).collect())
    }

    /// Every concept of `project`.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn concepts(&self, project: &ProjectId) -> LedgerResult<Vec<Concept>> {
        let rows: Vec<(i64, String, Vec<u8>, i64, i64)> = self.ledger.read(|c| {
            c.prepare_cached("SELECT id, label, prototype, successes, failures FROM concepts WHERE project = ?1 ORDER BY id")
                .and_then(|mut s| s.query_map([project.as_str()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?.collect())
                .map_err(|e| self.ledger.sql(e))
        })?;
        rows.into_iter()
            .map(|(id, label, proto, s, f)| {
                let support = self.ledger.read(|c| {
                    c.prepare_cached("SELECT episode_id FROM concept_support WHERE concept_id = ?1 ORDER BY episode_id")
                        .and_then(|mut st| st.query_map([id], |r| Ok(EpisodeId(r.get::<_, i64>(0)? as u64)))?.collect())
                        .map_err(|e| self.ledger.sql(e))
                })?;
                Ok(Concept {
                    id: ConceptId(id as u64),
                    label,
                    support,
                    reliability: (s as f64 + 1.0) / ((s + f) as f64 + 2.0),
                    outcomes: (s as u64, f as u64),
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
            self.ledger.write(|tx| {
                tx.execute(
                    "UPDATE concepts SET counters = ?2, prototype = ?3 WHERE id = ?1",
                    params![concept.id.0 as i64, b.to_bytes(), proto.to_le_bytes()],
                )
                .map(|_| ())
                .map_err(|e| self.ledger.sql(e))
            })?;
        }
        Ok(changed)
    }
}
