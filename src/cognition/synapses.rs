//! Synapses: Hebbian links between memories, strengthened when used together, decaying with
//! time, and ripple — bounded spreading activation over them.

use std::collections::{BinaryHeap, HashMap};

use super::Cognition;
use crate::base::ProjectId;
use crate::ledger::LedgerResult;
use crate::ledger::rows::Rows;

/// Most memories strengthened pairwise in one co-activation (pairs grow quadratically).
const MAX_COACTIVE: usize = 16;

/// Bounds of a ripple.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RippleParams {
    /// Hops from the seeds.
    pub max_depth: usize,
    /// Memories activated at most (seeds included).
    pub max_nodes: usize,
    /// Factor per hop (activation = parent · weight · decay).
    pub hop_decay: f64,
    /// Activations below this are not propagated.
    pub min_activation: f64,
    /// Whether synapse weights decay with the time since their last use, as of now (the
    /// wall clock). Recall turns it off: its ranking depends on no clock.
    pub decay: bool,
}

impl Default for RippleParams {
    fn default() -> Self {
        Self {
            max_depth: 3,
            max_nodes: 64,
            hop_decay: 0.5,
            min_activation: 0.01,
            decay: true,
        }
    }
}

/// An activated memory.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Activation {
    /// The memory.
    pub id: u64,
    /// Activation in (0, 1]; seeds have 1. Always ≤ its parent's (weights < 1).
    pub activation: f64,
    /// Path from a seed (seed first, this memory last).
    pub path: Vec<u64>,
}

#[derive(PartialEq)]
struct Frontier(f64, u64);
impl Eq for Frontier {}
impl PartialOrd for Frontier {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Frontier {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

impl Cognition {
    fn decayed(&self, weight: f64, updated_at: i64, now: i64) -> f64 {
        let days = now.saturating_sub(updated_at).max(0) as f64 / 86_400_000.0;
        weight * (-self.config.synapse_decay_per_day * days).exp()
    }

    /// Strengthens the synapse between every pair of `ids` (the first 16): after decay to
    /// now, `w ← w + rate · (1 − w)`, so weights stay below 1.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn strengthen(&self, project: &ProjectId, ids: &[u64]) -> LedgerResult<usize> {
        self.strengthen_pairs(project, &Self::coactive_pairs(ids))
    }

    /// Strengthens each listed synapse once, all in one transaction (bulk co-activation,
    /// imports). Pairs of a memory with itself are ignored.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn strengthen_pairs(
        &self,
        project: &ProjectId,
        pairs: &[(u64, u64)],
    ) -> LedgerResult<usize> {
        let now = self.ledger.now_ms();
        self.ledger
            .writing(|rows| self.strengthen_in(rows, project, pairs, now))
    }

    /// Those of `pairs` that have no synapse yet (a retried observation links only what
    /// its interrupted attempt did not).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn unlinked(
        &self,
        project: &ProjectId,
        pairs: &[(u64, u64)],
    ) -> LedgerResult<Vec<(u64, u64)>> {
        self.ledger.reading(|rows| {
            let mut out = Vec::new();
            for &(x, y) in pairs {
                let (a, b) = (x.min(y), x.max(y));
                if rows.synapse(project.as_str(), a, b)?.is_none() {
                    out.push((x, y));
                }
            }
            Ok(out)
        })
    }

    /// The pairs of the first 16 of `ids`, each once.
    pub(crate) fn coactive_pairs(ids: &[u64]) -> Vec<(u64, u64)> {
        let mut ids: Vec<u64> = ids.iter().copied().take(MAX_COACTIVE).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.iter()
            .enumerate()
            .flat_map(|(i, &a)| ids[i + 1..].iter().map(move |&b| (a, b)))
            .collect()
    }

    /// Strengthens `pairs` inside a transaction's `rows` as of `now`.
    pub(crate) fn strengthen_in(
        &self,
        rows: &dyn Rows,
        project: &ProjectId,
        pairs: &[(u64, u64)],
        now: i64,
    ) -> LedgerResult<usize> {
        let rate = self.config.synapse_rate;
        let mut n = 0;
        for &(x, y) in pairs {
            if x == y {
                continue;
            }
            let (a, b) = (x.min(y), x.max(y));
            let old = rows.synapse(project.as_str(), a, b)?;
            let w = old.map_or(0.0, |(w, t)| self.decayed(w, t, now));
            rows.put_synapse(
                project.as_str(),
                (a, b),
                (w + rate * (1.0 - w), now),
                old.is_some(),
            )?;
            n += 1;
        }
        Ok(n)
    }

    /// Current (decayed) weight of the synapse between `a` and `b`.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn synapse(&self, project: &ProjectId, a: u64, b: u64) -> LedgerResult<f64> {
        let (a, b) = (a.min(b), a.max(b));
        let now = self.ledger.now_ms();
        let row = self
            .ledger
            .reading(|rows| rows.synapse(project.as_str(), a, b))?;
        Ok(row.map_or(0.0, |(w, t)| self.decayed(w, t, now)))
    }

    fn neighbours(&self, project: &ProjectId, id: u64, now: i64) -> LedgerResult<Vec<(u64, f64)>> {
        let linked = self
            .ledger
            .reading(|rows| rows.synapses_of(project.as_str(), id))?;
        Ok(linked
            .into_iter()
            .map(|(other, (w, t))| (other, self.decayed(w, t, now)))
            .collect())
    }

    /// Ripple: best-first spreading activation from `seeds` over synapses, within
    /// `max_depth` hops and `max_nodes` memories. Seeds are returned too (activation 1).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn ripple(
        &self,
        project: &ProjectId,
        seeds: &[u64],
        params: RippleParams,
    ) -> LedgerResult<Vec<Activation>> {
        // Without decay every weight is read as of its own last update.
        let now = if params.decay {
            self.ledger.now_ms()
        } else {
            i64::MIN
        };
        let mut best: HashMap<u64, (f64, Vec<u64>, usize)> = HashMap::new();
        let mut heap = BinaryHeap::new();
        for &s in seeds.iter().take(params.max_nodes) {
            best.insert(s, (1.0, vec![s], 0));
            heap.push(Frontier(1.0, s));
        }
        let mut expanded = std::collections::HashSet::new();
        while let Some(Frontier(act, id)) = heap.pop() {
            if !expanded.insert(id) {
                continue;
            }
            let (_, path, depth) = best[&id].clone();
            if depth >= params.max_depth {
                continue;
            }
            for (n, w) in self.neighbours(project, id, now)? {
                let a = act * w * params.hop_decay;
                if a < params.min_activation {
                    continue;
                }
                let better = best.get(&n).is_none_or(|(old, _, _)| a > *old);
                if !better {
                    continue;
                }
                if !best.contains_key(&n) && best.len() >= params.max_nodes {
                    continue;
                }
                let mut p = path.clone();
                p.push(n);
                best.insert(n, (a, p, depth + 1));
                heap.push(Frontier(a, n));
            }
        }
        let mut out: Vec<Activation> = best
            .into_iter()
            .map(|(id, (activation, path, _))| Activation {
                id,
                activation,
                path,
            })
            .collect();
        out.sort_by(|a, b| b.activation.total_cmp(&a.activation).then(a.id.cmp(&b.id)));
        Ok(out)
    }
}
