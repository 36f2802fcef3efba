//! Synapses: Hebbian links between memories, strengthened when used together, decaying with
//! time, and ripple — bounded spreading activation over them.

use std::collections::{BinaryHeap, HashMap};

use rusqlite::{OptionalExtension, params};

use super::Cognition;
use crate::base::ProjectId;
use crate::ledger::LedgerResult;

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
            .write(|tx| self.strengthen_in(tx, project, pairs, now))
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
        self.ledger.read(|c| {
            let mut get = c
                .prepare_cached("SELECT 1 FROM synapses WHERE project = ?1 AND a = ?2 AND b = ?3")
                .map_err(|e| self.ledger.sql(e))?;
            let mut out = Vec::new();
            for &(x, y) in pairs {
                let (a, b) = (x.min(y), x.max(y));
                let linked = get
                    .exists(params![project.as_str(), a as i64, b as i64])
                    .map_err(|e| self.ledger.sql(e))?;
                if !linked {
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

    /// Strengthens `pairs` inside `tx` as of `now`.
    pub(crate) fn strengthen_in(
        &self,
        tx: &rusqlite::Transaction<'_>,
        project: &ProjectId,
        pairs: &[(u64, u64)],
        now: i64,
    ) -> LedgerResult<usize> {
        let rate = self.config.synapse_rate;
        let mut n = 0;
        let mut get = tx
            .prepare_cached(
                "SELECT weight, updated_at FROM synapses WHERE project = ?1 AND a = ?2 AND b = ?3",
            )
            .map_err(|e| self.ledger.sql(e))?;
        // A synapse that exists is updated in place (its key, and so its entry in
        // `synapses_b`, stays); a new one is inserted.
        let mut insert = tx
            .prepare_cached("INSERT INTO synapses (project, a, b, weight, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)")
            .map_err(|e| self.ledger.sql(e))?;
        let mut update = tx
            .prepare_cached("UPDATE synapses SET weight = ?4, updated_at = ?5 WHERE project = ?1 AND a = ?2 AND b = ?3")
            .map_err(|e| self.ledger.sql(e))?;
        for &(x, y) in pairs {
            if x == y {
                continue;
            }
            let (a, b) = (x.min(y), x.max(y));
            let old: Option<(f64, i64)> = get
                .query_row(params![project.as_str(), a as i64, b as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()
                .map_err(|e| self.ledger.sql(e))?;
            let w = old.map_or(0.0, |(w, t)| self.decayed(w, t, now));
            let put = if old.is_some() {
                &mut update
            } else {
                &mut insert
            };
            put.execute(params![
                project.as_str(),
                a as i64,
                b as i64,
                w + rate * (1.0 - w),
                now
            ])
            .map_err(|e| self.ledger.sql(e))?;
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
        let row: Option<(f64, i64)> = self.ledger.read(|c| {
            c.query_row(
                "SELECT weight, updated_at FROM synapses WHERE project = ?1 AND a = ?2 AND b = ?3",
                params![project.as_str(), a as i64, b as i64],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.ledger.sql(e))
        })?;
        Ok(row.map_or(0.0, |(w, t)| self.decayed(w, t, now)))
    }

    fn neighbours(&self, project: &ProjectId, id: u64, now: i64) -> LedgerResult<Vec<(u64, f64)>> {
        self.ledger.read(|c| {
            c.prepare_cached(
                "SELECT b, weight, updated_at FROM synapses WHERE project = ?1 AND a = ?2
                 UNION ALL SELECT a, weight, updated_at FROM synapses INDEXED BY synapses_b WHERE project = ?1 AND b = ?2",
            )
            .and_then(|mut s| {
                s.query_map(params![project.as_str(), id as i64], |r| {
                    Ok((r.get::<_, i64>(0)? as u64, self.decayed(r.get(1)?, r.get(2)?, now)))
                })?
                .collect()
            })
            .map_err(|e| self.ledger.sql(e))
        })
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
