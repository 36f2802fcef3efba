//! Working memory: a small, bounded set of items per agent, evicted by importance-weighted
//! recency.
//!
//! An item's retention score at time `t` is `importance · e^(−(t − last_touch)/τ)`. Every
//! score decays at the same rate, so the order between items never changes with time:
//! ordering by `ln(importance) + last_touch/τ` is the same as ordering by the score at any
//! `t`. That key is time-invariant, so items sit in a `BTreeSet` and insert, touch, evict
//! and expire are all `O(log n)`.

use std::collections::{BTreeSet, HashMap};

use crate::store::WorkingItem;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Key(f64);
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A bounded working memory (default capacity 64).
#[derive(Debug, Clone)]
pub struct WorkingMemory {
    capacity: usize,
    tau: f64,
    items: HashMap<u64, WorkingItem>,
    by_retention: BTreeSet<(Key, u64)>,
    by_expiry: BTreeSet<(Key, u64)>,
}

impl WorkingMemory {
    /// An empty working memory of `capacity` items with recency time constant `tau` seconds.
    ///
    /// # Panics
    /// If `capacity == 0` or `tau` is not positive.
    pub fn new(capacity: usize, tau: f64) -> Self {
        assert!(
            capacity > 0 && tau > 0.0,
            "working memory needs capacity > 0 and tau > 0"
        );
        Self {
            capacity,
            tau,
            items: HashMap::new(),
            by_retention: BTreeSet::new(),
            by_expiry: BTreeSet::new(),
        }
    }

    fn key(&self, item: &WorkingItem) -> Key {
        Key(item.importance.max(f64::MIN_POSITIVE).ln() + item.last_touch / self.tau)
    }

    fn unlink(&mut self, id: u64) -> Option<WorkingItem> {
        let item = self.items.remove(&id)?;
        self.by_retention.remove(&(self.key(&item), id));
        if let Some(e) = item.expires_at {
            self.by_expiry.remove(&(Key(e), id));
        }
        Some(item)
    }

    /// Adds (or replaces) an item at time `now`; returns the items evicted to make room.
    pub fn push(&mut self, mut item: WorkingItem, now: f64) -> Vec<WorkingItem> {
        let mut evicted = self.expire(now);
        self.unlink(item.id);
        item.last_touch = now;
        while self.items.len() >= self.capacity {
            let Some(&(_, weakest)) = self.by_retention.iter().next() else {
                break;
            };
            evicted.extend(self.unlink(weakest));
        }
        let id = item.id;
        self.by_retention.insert((self.key(&item), id));
        if let Some(e) = item.expires_at {
            self.by_expiry.insert((Key(e), id));
        }
        self.items.insert(id, item);
        evicted
    }

    /// Marks an item used at `now` (refreshes its recency).
    pub fn touch(&mut self, id: u64, now: f64) -> bool {
        match self.unlink(id) {
            Some(mut item) => {
                item.last_touch = now;
                self.by_retention.insert((self.key(&item), id));
                if let Some(e) = item.expires_at {
                    self.by_expiry.insert((Key(e), id));
                }
                self.items.insert(id, item);
                true
            }
            None => false,
        }
    }

    /// Removes items whose TTL passed; returns them.
    pub fn expire(&mut self, now: f64) -> Vec<WorkingItem> {
        let mut out = Vec::new();
        while let Some(&(Key(t), id)) = self.by_expiry.iter().next() {
            if t > now {
                break;
            }
            out.extend(self.unlink(id));
        }
        out
    }

    /// Removes one item.
    pub fn remove(&mut self, id: u64) -> Option<WorkingItem> {
        self.unlink(id)
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Whether `id` is held.
    pub fn contains(&self, id: u64) -> bool {
        self.items.contains_key(&id)
    }

    /// The items in no particular order, moved out (to store them elsewhere; see
    /// [`restore`](Self::restore)).
    pub fn into_items(self) -> Vec<WorkingItem> {
        self.items.into_values().collect()
    }

    /// A working memory holding `items` as they were stored (their last touch and
    /// expiry kept; past capacity, the weakest are dropped).
    ///
    /// # Panics
    /// As [`new`](Self::new).
    pub fn restore(capacity: usize, tau: f64, items: Vec<WorkingItem>) -> Self {
        let mut wm = Self::new(capacity, tau);
        for item in items {
            let id = item.id;
            wm.unlink(id);
            wm.by_retention.insert((wm.key(&item), id));
            if let Some(e) = item.expires_at {
                wm.by_expiry.insert((Key(e), id));
            }
            wm.items.insert(id, item);
        }
        while wm.items.len() > wm.capacity {
            let Some(&(_, weakest)) = wm.by_retention.iter().next() else {
                break;
            };
            wm.unlink(weakest);
        }
        wm
    }

    /// Items, most retained first.
    pub fn items(&self) -> Vec<&WorkingItem> {
        self.by_retention
            .iter()
            .rev()
            .map(|(_, id)| &self.items[id])
            .collect()
    }
}
