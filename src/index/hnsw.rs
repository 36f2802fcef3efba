//! Approximate search: a hierarchical navigable small-world graph (Malkov & Yashunin) over
//! **bit-level** Hamming distance, written for binary hypervectors.
//!
//! Why not `hnsw_rs` (the first version of this module used it): its points are separate
//! heap allocations reached through `Arc`s and locks, its `DistHamming` counts differing
//! words rather than bits, its dump can only be reloaded with the data memory-mapped while
//! the loader stays mutably borrowed, and it exits the process on malformed files. Measured
//! on the same data (clustered 100k × 10,048 bits, M = 16, efC = 128) it built at ≈ 930
//! vectors per CPU-second and answered ≈ 3,300 queries per CPU-second at recall@10 0.994
//! with the `hdv` kernel as its distance. This graph keeps every vector in one contiguous
//! block, neighbour lists in flat `u32` arrays, prefetches all unvisited neighbours of a node
//! before comparing any (a 10,048-bit vector is 20 cache lines: memory latency, not
//! arithmetic, dominates graph search), and reuses a per-thread visited set.
//!
//! Deletions are tombstones: a deleted node still routes searches but is never returned;
//! a rebuild (compaction) drops it. A graph is saved as one checksummed file and reloaded
//! with its vectors memory-mapped in place, so a restart neither rebuilds nor copies.

use crate::sync::RecoverRw as _;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use hdv::{Dim, HvRef, Kernel, SeededRng};
use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use crate::base::{Hit, MappedFile, SearchRequest, VectorId};

/// HNSW parameters (from the profile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HnswConfig {
    /// Links per node on upper layers (`M`); layer 0 keeps `2 M`.
    pub m: usize,
    /// Candidate list size while building.
    pub ef_construction: usize,
    /// Candidate list size while searching (at least `k` is used).
    pub ef_search: usize,
    /// Expected number of points (allocation hint).
    pub max_elements: usize,
    /// Searches screen each node on the first `screen_bits` bits of its vector (a multiple
    /// of 64) and read the rest only when that prefix does not show it far beyond the
    /// current result list ([`SCREEN_Z`]); 0, or a width above half the dimension,
    /// compares whole vectors at once.
    pub screen_bits: usize,
}

impl Default for HnswConfig {
    fn default() -> Self {
        Self {
            m: 16,
            ef_construction: 400,
            ef_search: 400,
            max_elements: 100_000,
            screen_bits: 1024,
        }
    }
}

/// Errors of the HNSW index.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HnswError {
    /// Saving or loading failed, or the saved file is damaged.
    #[error("HNSW index at {path}: {reason}")]
    Persist {
        /// The index file or directory.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
    /// A vector or query has another dimension than the index.
    #[error("HNSW dimension mismatch: expected {expected} bits, found {found} bits")]
    DimensionMismatch {
        /// Index dimension.
        expected: usize,
        /// Offending dimension.
        found: usize,
    },
    /// The parameters are unusable.
    #[error("invalid HNSW parameter: {0}")]
    Config(String),
    /// The kernel could not be selected.
    #[error(transparent)]
    Hdv(#[from] hdv::Error),
}

/// Standard deviations above its expected value a node's prefix distance must lie, for
/// the node's whole distance to be within the result list's worst, before the node is
/// dropped unread. The bits of a hypervector are exchangeable, so a prefix's distance is
/// a sample of the whole distance: at z = 4 a node that belongs in the list is dropped
/// about once in 30,000 comparisons.
pub const SCREEN_Z: f64 = 4.0;

/// Words of the screening prefix `config` asks for at `dim` (0: whole vectors at once).
fn screen_words(dim: Dim, config: &HnswConfig) -> usize {
    if config.screen_bits == 0 || 2 * config.screen_bits > dim.bits() {
        0
    } else {
        config.screen_bits / 64
    }
}

/// A screening width is whole words.
fn check_screen(screen_bits: usize) -> Result<(), HnswError> {
    if screen_bits.is_multiple_of(64) {
        Ok(())
    } else {
        Err(HnswError::Config(format!(
            "screen_bits must be a multiple of 64, got {screen_bits}"
        )))
    }
}

/// `bound[w]`: the largest prefix distance (over `prefix` of `bits` bits) still consistent
/// with a whole distance of at most `w`, for every `w` in `0..=bits`.
fn screen_bounds(bits: usize, prefix: usize) -> Vec<u32> {
    let (d, p) = (bits as f64, prefix as f64);
    (0..=bits)
        .map(|w| {
            let f = w as f64 / d;
            let mean = p * f;
            let sd = (p * f * (1.0 - f)).sqrt();
            (mean + SCREEN_Z * sd).ceil().min(p) as u32
        })
        .collect()
}

/// File name of a saved graph inside its directory.
pub const GRAPH_FILE: &str = "graph.hhnsw";
const MAGIC: [u8; 8] = *b"HMHNSW\0\x01";
const VERSION: u32 = 1;
const HEADER: usize = 4096;
const MAX_LEVEL: u8 = 15;
/// Seed of the level generator (levels are part of a deterministic build).
const LEVEL_SEED: u64 = 0x484E_5357;

/// Vector storage: a memory-mapped prefix (from a saved graph) plus vectors added since.
#[derive(Debug)]
struct Vectors {
    words: usize,
    mapped: Option<(MappedFile, usize, usize)>, // file, byte offset, count
    owned: Vec<u64>,
}

impl Vectors {
    fn mapped_count(&self) -> usize {
        self.mapped.as_ref().map_or(0, |m| m.2)
    }

    #[inline]
    fn get(&self, i: u32) -> &[u64] {
        let i = i as usize;
        let w = self.words;
        match &self.mapped {
            Some((file, off, count)) if i < *count => {
                let bytes = &file.bytes()[off + i * w * 8..off + (i + 1) * w * 8];
                bytemuck::cast_slice(bytes)
            }
            _ => {
                let j = i - self.mapped_count();
                &self.owned[j * w..(j + 1) * w]
            }
        }
    }
}

/// The graph proper.
#[derive(Debug)]
struct Graph {
    m: usize,
    m0: usize,
    level_mult: f64,
    ids: Vec<VectorId>,
    levels: Vec<u8>,
    /// `n × (m0 + 1)`: per node, a count then up to `m0` neighbours.
    layer0: Vec<u32>,
    /// Per node, `level × (m + 1)`: for layers 1..=level, a count then up to `m` neighbours.
    upper: Vec<Vec<u32>>,
    entry: Option<u32>,
    max_level: u8,
    deleted: Vec<u64>,
    deleted_count: usize,
    by_id: HashMap<VectorId, u32>,
    rng: SeededRng,
    vectors: Vectors,
    /// Words of a node's screening prefix (0: whole vectors at once).
    screen_words: usize,
    /// [`screen_bounds`] for this dimension and prefix (empty without screening).
    bounds: Vec<u32>,
}

/// What a search compares: the query's words, with the kernel, and how many leading words
/// screen a node before the rest is read (0: whole vectors at once; builds compare whole
/// vectors, so a graph does not depend on the screen).
#[derive(Clone, Copy)]
struct Probe<'q> {
    kernel: Kernel,
    words: &'q [u64],
    screen_words: usize,
}

/// Per-thread visited marks with generation stamps (no clearing between searches).
struct Visited {
    marks: Vec<u32>,
    generation: u32,
}

impl Visited {
    fn reset(&mut self, n: usize) {
        if self.marks.len() < n {
            self.marks.resize(n, 0);
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.marks.fill(0);
            self.generation = 1;
        }
    }

    /// Marks `i`; returns whether it was new.
    #[inline]
    fn insert(&mut self, i: u32) -> bool {
        let m = &mut self.marks[i as usize];
        let new = *m != self.generation;
        *m = self.generation;
        new
    }
}

thread_local! {
    static VISITED: RefCell<Visited> = const { RefCell::new(Visited { marks: Vec::new(), generation: 0 }) };
}

impl Graph {
    fn new(dim: Dim, config: &HnswConfig) -> Self {
        let screen = screen_words(dim, config);
        Self {
            m: config.m,
            m0: 2 * config.m,
            level_mult: 1.0 / (config.m as f64).ln(),
            ids: Vec::with_capacity(config.max_elements),
            levels: Vec::with_capacity(config.max_elements),
            layer0: Vec::with_capacity(config.max_elements * (2 * config.m + 1)),
            upper: Vec::with_capacity(config.max_elements),
            entry: None,
            max_level: 0,
            deleted: Vec::new(),
            deleted_count: 0,
            by_id: HashMap::with_capacity(config.max_elements),
            rng: SeededRng::new(LEVEL_SEED),
            vectors: Vectors {
                words: dim.words(),
                mapped: None,
                owned: Vec::with_capacity(config.max_elements * dim.words()),
            },
            screen_words: screen,
            bounds: match screen {
                0 => Vec::new(),
                w => screen_bounds(dim.bits(), w * 64),
            },
        }
    }

    fn len(&self) -> usize {
        self.ids.len()
    }

    #[inline]
    fn neighbors(&self, node: u32, layer: u8) -> &[u32] {
        let node = node as usize;
        if layer == 0 {
            let base = node * (self.m0 + 1);
            let count = self.layer0[base] as usize;
            &self.layer0[base + 1..base + 1 + count]
        } else {
            let base = (layer as usize - 1) * (self.m + 1);
            let list = &self.upper[node];
            let count = list[base] as usize;
            &list[base + 1..base + 1 + count]
        }
    }

    fn set_neighbors(&mut self, node: u32, layer: u8, nbrs: &[u32]) {
        let node = node as usize;
        let (slot, cap) = if layer == 0 {
            (
                &mut self.layer0[node * (self.m0 + 1)..(node + 1) * (self.m0 + 1)],
                self.m0,
            )
        } else {
            let base = (layer as usize - 1) * (self.m + 1);
            (&mut self.upper[node][base..base + self.m + 1], self.m)
        };
        let n = nbrs.len().min(cap);
        slot[0] = n as u32;
        slot[1..1 + n].copy_from_slice(&nbrs[..n]);
    }

    fn is_deleted(&self, node: u32) -> bool {
        let i = node as usize;
        self.deleted
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    fn mark_deleted(&mut self, node: u32) {
        let i = node as usize;
        if self.deleted.len() <= i / 64 {
            self.deleted.resize(i / 64 + 1, 0);
        }
        if !self.is_deleted(node) {
            self.deleted[i / 64] |= 1 << (i % 64);
            self.deleted_count += 1;
        }
    }

    #[inline]
    fn dist(&self, kernel: Kernel, q: &[u64], node: u32) -> u32 {
        kernel.hamming(q, self.vectors.get(node))
    }

    /// Node `i`'s screening prefix: the first words of its vector.
    #[inline]
    fn prefix(&self, i: u32) -> &[u64] {
        &self.vectors.get(i)[..self.screen_words]
    }

    /// Best-first search of one layer from `entry`, keeping `ef` results that pass
    /// `accept` (all nodes route; only accepted ones are returned). Sorted nearest first.
    ///
    /// With a screening prefix, a node's prefix is compared first (all of a node's
    /// unvisited neighbours' prefixes are fetched together);
    /// one whose prefix distance shows it cannot be within the list's worst is dropped,
    /// and only the others' remaining words are fetched and compared. Distances returned
    /// are always whole.
    fn search_layer(
        &self,
        probe: Probe<'_>,
        entry: &[(u32, u32)],
        ef: usize,
        layer: u8,
        accept: &dyn Fn(u32) -> bool,
    ) -> Vec<(u32, u32)> {
        let (kernel, sw) = (probe.kernel, probe.screen_words);
        let (q_prefix, q_rest) = probe.words.split_at(sw);
        VISITED.with(|v| {
            let mut visited = v.borrow_mut();
            visited.reset(self.len());
            let mut candidates: BinaryHeap<Reverse<(u32, u32)>> = BinaryHeap::with_capacity(ef * 4);
            let mut results: BinaryHeap<(u32, u32)> = BinaryHeap::with_capacity(ef + 1);
            let mut fresh: Vec<u32> = Vec::with_capacity(self.m0);
            let mut screened: Vec<(u32, u32)> = Vec::with_capacity(self.m0);
            for &(d, node) in entry {
                if visited.insert(node) {
                    candidates.push(Reverse((d, node)));
                    if accept(node) {
                        results.push((d, node));
                    }
                }
            }
            while results.len() > ef {
                results.pop();
            }
            let worst_of = |results: &BinaryHeap<(u32, u32)>| {
                if results.len() >= ef {
                    results.peek().map_or(u32::MAX, |r| r.0)
                } else {
                    u32::MAX
                }
            };
            while let Some(Reverse((d, c))) = candidates.pop() {
                if d > worst_of(&results) {
                    break;
                }
                fresh.clear();
                fresh.extend(
                    self.neighbors(c, layer)
                        .iter()
                        .filter(|&&e| visited.insert(e)),
                );
                screened.clear();
                if sw == 0 {
                    for &e in &fresh {
                        hdv::kernels::prefetch(self.vectors.get(e));
                    }
                    screened.extend(fresh.iter().map(|&e| (e, 0)));
                } else {
                    for &e in &fresh {
                        hdv::kernels::prefetch(self.prefix(e));
                    }
                    let worst = worst_of(&results);
                    let bound = self.bounds.get(worst as usize).copied().unwrap_or(u32::MAX);
                    for &e in &fresh {
                        let near = kernel.hamming(q_prefix, self.prefix(e));
                        if near <= bound {
                            hdv::kernels::prefetch(&self.vectors.get(e)[sw..]);
                            screened.push((e, near));
                        }
                    }
                }
                for &(e, near) in &screened {
                    let de = near + kernel.hamming(q_rest, &self.vectors.get(e)[sw..]);
                    let worst = worst_of(&results);
                    if de < worst || results.len() < ef {
                        candidates.push(Reverse((de, e)));
                        if accept(e) {
                            results.push((de, e));
                            if results.len() > ef {
                                results.pop();
                            }
                        }
                    }
                }
            }
            let mut out = results.into_vec();
            out.sort_unstable();
            out
        })
    }

    /// The neighbour-selection heuristic: walk candidates nearest first and keep one only if
    /// it is not closer to an already kept neighbour than to the base point (keeps links
    /// spread in different directions).
    fn select(&self, kernel: Kernel, candidates: &[(u32, u32)], m: usize) -> Vec<(u32, u32)> {
        let mut kept: Vec<(u32, u32)> = Vec::with_capacity(m);
        for &(d, e) in candidates {
            if kept.len() >= m {
                break;
            }
            let ve = self.vectors.get(e);
            if kept
                .iter()
                .all(|&(_, s)| kernel.hamming(ve, self.vectors.get(s)) >= d)
            {
                kept.push((d, e));
            }
        }
        kept
    }

    /// `from`'s list on `layer` with the links `incoming` (node, distance) added, pruned by
    /// the heuristic once if it overflows (reads the graph only, so the lists of many
    /// nodes are worked out in parallel).
    fn connected(&self, kernel: Kernel, from: u32, layer: u8, incoming: &[(u32, u32)]) -> Vec<u32> {
        let cap = if layer == 0 { self.m0 } else { self.m };
        let current = self.neighbors(from, layer);
        if current.len() + incoming.len() <= cap {
            let mut next = current.to_vec();
            next.extend(incoming.iter().map(|&(n, _)| n));
            return next;
        }
        let vf = self.vectors.get(from);
        let mut candidates: Vec<(u32, u32)> = current
            .iter()
            .map(|&e| (kernel.hamming(vf, self.vectors.get(e)), e))
            .collect();
        candidates.extend(incoming.iter().map(|&(n, d)| (d, n)));
        candidates.sort_unstable();
        candidates.dedup();
        self.select(kernel, &candidates, cap)
            .iter()
            .map(|p| p.1)
            .collect()
    }

    /// Adds the back links `links` (target, layer, new node, distance) of a group of
    /// inserted points: each target's new list is worked out once, for all its incoming
    /// links, in parallel over the targets, then written.
    fn connect_all(&mut self, kernel: Kernel, mut links: Vec<BackLink>) {
        links.sort_unstable();
        // Each (target, layer) with its incoming (node, distance) links.
        let mut targets: Vec<Incoming> = Vec::new();
        for link in links {
            let key = (link.target, link.layer);
            match targets.last_mut() {
                Some((k, v)) if *k == key => v.push((link.node, link.d)),
                _ => targets.push((key, vec![(link.node, link.d)])),
            }
        }
        let lists: Vec<Vec<u32>> = targets
            .par_iter()
            .map(|((t, l), incoming)| self.connected(kernel, *t, *l, incoming))
            .collect();
        for (((t, l), _), list) in targets.iter().zip(lists) {
            self.set_neighbors(*t, *l, &list);
        }
    }

    fn random_level(&mut self) -> u8 {
        let u = 1.0 - self.rng.unit_f64(); // (0, 1]
        ((-u.ln() * self.level_mult).floor() as u64).min(u64::from(MAX_LEVEL)) as u8
    }

    /// The first half of an insert that only reads the graph: for a point of `level`, the
    /// `ef` nearest nodes found on each layer it will live on that the graph has
    /// (`out[layer]`, nearest first; empty where the graph has no such layer yet).
    fn candidates(&self, kernel: Kernel, ef: usize, q: &[u64], level: u8) -> Vec<Vec<(u32, u32)>> {
        let mut out = vec![Vec::new(); level as usize + 1];
        let Some(entry) = self.entry else {
            return out;
        };
        let all = |_: u32| true;
        let whole = Probe {
            kernel,
            words: q,
            screen_words: 0,
        };
        let mut eps = vec![(self.dist(kernel, q, entry), entry)];
        for layer in (level + 1..=self.max_level).rev() {
            eps = self.search_layer(whole, &eps, 1, layer, &all);
        }
        for layer in (0..=level.min(self.max_level)).rev() {
            let found = self.search_layer(whole, &eps, ef, layer, &all);
            eps = found.clone();
            out[layer as usize] = found;
        }
        out
    }

    /// The second half: appends the point and links it on every layer to the best of
    /// `found` (from [`candidates`](Self::candidates) over the graph as it was) and of the
    /// `batch` nodes appended since then (which that search could not see). The links
    /// back to it are added to `back`, for [`connect_all`](Self::connect_all) at the end
    /// of the group.
    fn link(
        &mut self,
        kernel: Kernel,
        ef: usize,
        (id, v, level): (VectorId, &[u64], u8),
        mut found: Vec<Vec<(u32, u32)>>,
        batch: &[(u32, u8)],
        back: &mut Vec<BackLink>,
    ) -> u32 {
        let node = self.len() as u32;
        self.ids.push(id);
        self.levels.push(level);
        self.layer0.extend(std::iter::repeat_n(0, self.m0 + 1));
        self.upper.push(vec![0; level as usize * (self.m + 1)]);
        self.vectors.owned.extend_from_slice(v);
        self.by_id.insert(id, node);
        if self.entry.is_none() {
            self.entry = Some(node);
            self.max_level = level;
            return node;
        }
        for layer in (0..=level).rev() {
            let mut cands = std::mem::take(&mut found[layer as usize]);
            for &(b, bl) in batch {
                if bl >= layer {
                    cands.push((self.dist(kernel, v, b), b));
                }
            }
            cands.sort_unstable();
            cands.dedup();
            cands.truncate(ef);
            if cands.is_empty() {
                continue;
            }
            let chosen = self.select(kernel, &cands, self.m);
            let ids: Vec<u32> = chosen.iter().map(|p| p.1).collect();
            self.set_neighbors(node, layer, &ids);
            back.extend(chosen.iter().map(|&(d, target)| BackLink {
                target,
                layer,
                node,
                d,
            }));
        }
        if level > self.max_level {
            self.entry = Some(node);
            self.max_level = level;
        }
        node
    }
}

/// A link back to a newly inserted node: from `target` on `layer` to `node`, at `d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct BackLink {
    target: u32,
    layer: u8,
    node: u32,
    d: u32,
}

/// A node on a layer and the links to add to it: (new node, distance).
type Incoming = ((u32, u8), Vec<(u32, u32)>);

/// An HNSW index of hypervectors keyed by [`VectorId`]. Searches take a read lock and run
/// concurrently; inserts and deletions take the write lock.
pub struct Hnsw {
    dim: Dim,
    config: HnswConfig,
    kernel: Kernel,
    graph: RwLock<Graph>,
}

impl std::fmt::Debug for Hnsw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hnsw")
            .field("dim", &self.dim)
            .field("config", &self.config)
            .field("points", &self.points())
            .finish()
    }
}

fn persist(path: &Path, reason: impl Into<String>) -> HnswError {
    HnswError::Persist {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

fn pad8(buf: &mut Vec<u8>) {
    while !buf.len().is_multiple_of(8) {
        buf.push(0);
    }
}

impl Hnsw {
    /// An empty index.
    ///
    /// # Errors
    /// [`HnswError::Config`] for `m < 2` or `ef_construction < 1`; an invalid `HDV_KERNEL`.
    pub fn new(dim: Dim, config: HnswConfig) -> Result<Self, HnswError> {
        if config.m < 2 || config.m > 1024 {
            return Err(HnswError::Config(format!(
                "m must be 2..=1024, got {}",
                config.m
            )));
        }
        if config.ef_construction == 0 {
            return Err(HnswError::Config(
                "ef_construction must be at least 1".to_owned(),
            ));
        }
        check_screen(config.screen_bits)?;
        Ok(Self {
            dim,
            config,
            kernel: hdv::kernels::try_active()?,
            graph: RwLock::new(Graph::new(dim, &config)),
        })
    }

    /// Builds an index from `items`.
    ///
    /// # Errors
    /// As [`new`](Self::new) and [`insert_batch`](Self::insert_batch).
    pub fn build(
        dim: Dim,
        config: HnswConfig,
        items: &[(VectorId, HvRef<'_>)],
    ) -> Result<Self, HnswError> {
        let config = HnswConfig {
            max_elements: items.len().max(16),
            ..config
        };
        let index = Self::new(dim, config)?;
        index.insert_batch(items)?;
        Ok(index)
    }

    /// The dimension.
    pub fn dim(&self) -> Dim {
        self.dim
    }

    /// The parameters.
    pub fn config(&self) -> HnswConfig {
        self.config
    }

    /// Changes the search candidate list size.
    pub fn set_ef_search(&mut self, ef_search: usize) {
        self.config.ef_search = ef_search.max(1);
    }

    /// Points in the graph (deleted ones included until a rebuild).
    pub fn points(&self) -> usize {
        self.graph.reading().len()
    }

    /// The id of every point, in the order the points were added (deleted ones included).
    pub fn ids(&self) -> Vec<VectorId> {
        self.graph.reading().ids.clone()
    }

    /// Number of deleted points still in the graph.
    pub fn deleted(&self) -> usize {
        self.graph.reading().deleted_count
    }

    fn check(&self, v: HvRef<'_>) -> Result<(), HnswError> {
        if v.dim() != self.dim {
            return Err(HnswError::DimensionMismatch {
                expected: self.dim.bits(),
                found: v.dim().bits(),
            });
        }
        Ok(())
    }

    /// Adds vectors. An id already present (and not deleted) is replaced: the old point is
    /// tombstoned.
    ///
    /// # Errors
    /// Dimension mismatch (nothing is inserted).
    pub fn insert_batch(&self, items: &[(VectorId, HvRef<'_>)]) -> Result<(), HnswError> {
        for (_, v) in items {
            self.check(*v)?;
        }
        // In groups: every point's neighbour search runs in parallel under the read lock
        // (searches go on meanwhile), then the points are linked one after another under
        // the write lock, each also against the points of its group linked before it, and
        // the links back to them are added at the end of the group, each node's list
        // pruned once for all it gains, nodes in parallel (serially, one link at a time,
        // the build took 10 % longer and answered fewer queries per CPU-second at equal
        // recall: `docs/EXPERIMENTS.md`). A group is at most an eighth of the graph (so
        // the points it cannot see through the graph are few) and 256 points.
        let ef = self.config.ef_construction;
        let mut rest = items;
        while !rest.is_empty() {
            let size = (self.points() / 8).clamp(1, 256).min(rest.len());
            let (group, tail) = rest.split_at(size);
            rest = tail;
            let levels: Vec<u8> = {
                let mut g = self.graph.writing();
                group.iter().map(|_| g.random_level()).collect()
            };
            let found: Vec<Vec<Vec<(u32, u32)>>> = {
                let g = self.graph.reading();
                let kernel = self.kernel;
                group
                    .par_iter()
                    .zip(&levels)
                    .map(|((_, v), &level)| g.candidates(kernel, ef, v.words(), level))
                    .collect()
            };
            let mut batch: Vec<(u32, u8)> = Vec::with_capacity(group.len());
            let mut back = Vec::new();
            let mut g = self.graph.writing();
            for (((id, v), &level), found) in group.iter().zip(&levels).zip(found) {
                if let Some(&old) = g.by_id.get(id) {
                    g.mark_deleted(old);
                }
                let node = g.link(
                    self.kernel,
                    ef,
                    (*id, v.words(), level),
                    found,
                    &batch,
                    &mut back,
                );
                batch.push((node, level));
            }
            g.connect_all(self.kernel, back);
        }
        Ok(())
    }

    /// Tombstones an id: it routes searches but is never returned.
    pub fn delete(&self, id: VectorId) {
        let mut g = self.graph.writing();
        if let Some(node) = g.by_id.remove(&id) {
            g.mark_deleted(node);
        }
    }

    /// Approximate `k` nearest neighbours (nearest first, ties by id), after filters.
    ///
    /// # Errors
    /// Dimension mismatch.
    pub fn search(&self, request: &SearchRequest<'_>) -> Result<Vec<Hit>, HnswError> {
        self.check(request.query)?;
        let g = self.graph.reading();
        let Some(entry) = g.entry else {
            return Ok(Vec::new());
        };
        if request.k == 0 {
            return Ok(Vec::new());
        }
        let q = request.query.words();
        let all = |_: u32| true;
        let probe = Probe {
            kernel: self.kernel,
            words: q,
            screen_words: g.screen_words,
        };
        let mut eps = vec![(g.dist(self.kernel, q, entry), entry)];
        for layer in (1..=g.max_level).rev() {
            eps = g.search_layer(probe, &eps, 1, layer, &all);
        }
        let max = request.max_distance.unwrap_or(u32::MAX);
        let accept = |node: u32| !g.is_deleted(node) && request.accepts(g.ids[node as usize]);
        let ef = self.config.ef_search.max(request.k);
        let found = g.search_layer(probe, &eps, ef, 0, &accept);
        let mut hits: Vec<Hit> = found
            .into_iter()
            .filter(|&(d, _)| d <= max)
            .map(|(d, node)| Hit {
                id: g.ids[node as usize],
                distance: d,
            })
            .collect();
        hits.sort_by_key(Hit::key);
        hits.truncate(request.k);
        Ok(hits)
    }

    /// Writes the graph and its vectors to `dir/graph.hhnsw` (a new file renamed over the
    /// old one, so a mapped previous version stays valid for its readers).
    ///
    /// # Errors
    /// I/O failures.
    pub fn save(&self, dir: &Path) -> Result<(), HnswError> {
        let g = self.graph.reading();
        let n = g.len();
        let mut body: Vec<u8> =
            Vec::with_capacity(n * self.dim.bytes() + n * (g.m0 + 1) * 4 + 4096);
        for i in 0..n as u32 {
            body.extend_from_slice(bytemuck::cast_slice(g.vectors.get(i)));
        }
        for id in &g.ids {
            body.extend_from_slice(&id.0.to_le_bytes());
        }
        body.extend_from_slice(&g.levels);
        pad8(&mut body);
        for x in &g.layer0 {
            body.extend_from_slice(&x.to_le_bytes());
        }
        pad8(&mut body);
        for list in &g.upper {
            for x in list {
                body.extend_from_slice(&x.to_le_bytes());
            }
        }
        pad8(&mut body);
        let words = n.div_ceil(64);
        for i in 0..words {
            body.extend_from_slice(&g.deleted.get(i).copied().unwrap_or(0).to_le_bytes());
        }
        let mut header = vec![0u8; HEADER];
        header[0..8].copy_from_slice(&MAGIC);
        let fields: [u64; 9] = [
            u64::from(VERSION),
            self.dim.bits() as u64,
            g.m as u64,
            self.config.ef_construction as u64,
            n as u64,
            g.entry.map_or(u64::MAX, u64::from),
            u64::from(g.max_level),
            body.len() as u64,
            xxh3_64(&body),
        ];
        for (i, f) in fields.iter().enumerate() {
            header[8 + 8 * i..16 + 8 * i].copy_from_slice(&f.to_le_bytes());
        }
        let head_sum = xxh3_64(&header[..88]);
        header[88..96].copy_from_slice(&head_sum.to_le_bytes());
        fs::create_dir_all(dir).map_err(|e| persist(dir, e.to_string()))?;
        let tmp = dir.join(format!("{GRAPH_FILE}.tmp"));
        let path = dir.join(GRAPH_FILE);
        let mut f = fs::File::create(&tmp).map_err(|e| persist(&tmp, e.to_string()))?;
        f.write_all(&header)
            .and_then(|()| f.write_all(&body))
            .and_then(|()| f.sync_all())
            .map_err(|e| persist(&tmp, e.to_string()))?;
        fs::rename(&tmp, &path).map_err(|e| persist(&path, e.to_string()))?;
        Ok(())
    }

    /// Reloads a saved index: the graph is read, the vectors stay memory-mapped.
    ///
    /// # Errors
    /// [`HnswError::Persist`] for a missing, truncated or damaged file (checksums),
    /// [`HnswError::DimensionMismatch`] for another dimension; [`HnswError::Config`] for a
    /// screening width that is not whole words.
    pub fn load(
        dir: &Path,
        dim: Dim,
        ef_search: usize,
        screen_bits: usize,
    ) -> Result<Self, HnswError> {
        check_screen(screen_bits)?;
        let path = dir.join(GRAPH_FILE);
        let file = MappedFile::open(&path)
            .map_err(|e| persist(&path, format!("I/O error on {}: {e}", path.display())))?;
        let bytes = file.bytes();
        if bytes.len() < HEADER || bytes[0..8] != MAGIC {
            return Err(persist(
                &path,
                "not a hypermem HNSW file (bad magic or too short)",
            ));
        }
        if xxh3_64(&bytes[..88]).to_le_bytes() != bytes[88..96] {
            return Err(persist(&path, "header checksum mismatch"));
        }
        let field = |i: usize| {
            u64::from_le_bytes(bytes[8 + 8 * i..16 + 8 * i].try_into().expect("8 bytes"))
        };
        if field(0) != u64::from(VERSION) {
            return Err(persist(
                &path,
                format!("format version {} (this build reads {VERSION})", field(0)),
            ));
        }
        if field(1) as usize != dim.bits() {
            return Err(HnswError::DimensionMismatch {
                expected: dim.bits(),
                found: field(1) as usize,
            });
        }
        // Sizes from the file are bounded before any arithmetic on them: a damaged header
        // that passes its checksum is an error, never an overflow or a huge allocation.
        if field(6) > u64::from(MAX_LEVEL)
            || field(2) == 0
            || field(2) > 1 << 16
            || field(4) > bytes.len() as u64
            || field(7) > bytes.len() as u64
        {
            return Err(persist(&path, "header fields out of range"));
        }
        let (m, efc, n, entry, max_level, body_len) = (
            field(2) as usize,
            field(3) as usize,
            field(4) as usize,
            field(5),
            field(6) as u8,
            field(7) as usize,
        );
        if bytes.len() != HEADER + body_len {
            return Err(persist(
                &path,
                format!(
                    "truncated: {} bytes, header says {}",
                    bytes.len(),
                    HEADER + body_len
                ),
            ));
        }
        let body = &bytes[HEADER..];
        if xxh3_64(body) != field(8) {
            return Err(persist(&path, "body checksum mismatch"));
        }
        let config = HnswConfig {
            m,
            ef_construction: efc,
            ef_search,
            max_elements: n,
            screen_bits,
        };
        let mut g = Graph::new(
            dim,
            &HnswConfig {
                max_elements: 0,
                ..config
            },
        );
        let bad = || persist(&path, "inconsistent sizes");
        let mut at = 0usize;
        let mut take = |len: usize| -> Result<&[u8], HnswError> {
            let end = at.checked_add(len).ok_or_else(bad)?;
            let s = body.get(at..end).ok_or_else(bad)?;
            at = end;
            Ok(s)
        };
        let vec_bytes = n * dim.bytes();
        take(vec_bytes)?;
        g.ids = take(n * 8)?
            .chunks_exact(8)
            .map(|c| VectorId(u64::from_le_bytes(c.try_into().expect("8"))))
            .collect();
        g.levels = take(n)?.to_vec();
        take((8 - n % 8) % 8)?;
        let m0 = 2 * m;
        let u32s = |b: &[u8]| -> Vec<u32> {
            b.chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4")))
                .collect()
        };
        g.layer0 = u32s(take(n * (m0 + 1) * 4)?);
        take((8 - (n * (m0 + 1) * 4) % 8) % 8)?;
        let mut upper_len = 0;
        for &l in &g.levels {
            upper_len += l as usize * (m + 1) * 4;
        }
        let upper = u32s(take(upper_len)?);
        take((8 - upper_len % 8) % 8)?;
        let mut pos = 0;
        g.upper = g
            .levels
            .iter()
            .map(|&l| {
                let len = l as usize * (m + 1);
                let v = upper[pos..pos + len].to_vec();
                pos += len;
                v
            })
            .collect();
        g.deleted = take(n.div_ceil(64) * 8)?
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
            .collect();
        g.deleted_count = g.deleted.iter().map(|w| w.count_ones() as usize).sum();
        // Validate every link before trusting it as an index.
        let valid = (0..n).all(|i| {
            let l0 = &g.layer0[i * (m0 + 1)..(i + 1) * (m0 + 1)];
            (l0[0] as usize) <= m0
                && l0[1..=l0[0] as usize].iter().all(|&e| (e as usize) < n)
                && (0..g.levels[i] as usize).all(|l| {
                    // Slot `l` holds layer `l + 1`: every neighbour there must reach it.
                    let s = &g.upper[i][l * (m + 1)..(l + 1) * (m + 1)];
                    (s[0] as usize) <= m
                        && s[1..=s[0] as usize]
                            .iter()
                            .all(|&e| (e as usize) < n && g.levels[e as usize] as usize > l)
                })
        });
        if !valid || (n > 0 && entry as usize >= n) || max_level > MAX_LEVEL {
            return Err(persist(&path, "links point outside the graph"));
        }
        // Node levels must match the layers: none above the graph's top, the entry on it.
        let top = g.levels.iter().copied().max().unwrap_or(0);
        if n > 0 && (top != max_level || g.levels[entry as usize] != max_level) {
            return Err(persist(
                &path,
                "node levels do not match the graph's layers (top level or entry point)",
            ));
        }
        g.entry = (n > 0).then_some(entry as u32);
        g.max_level = max_level;
        for (i, id) in g.ids.iter().enumerate() {
            if !g.is_deleted(i as u32) {
                g.by_id.insert(*id, i as u32);
            }
        }
        // Keep the level generator deterministic relative to the points already drawn.
        for _ in 0..n {
            g.rng.unit_f64();
        }
        g.vectors.mapped = Some((file, HEADER, n));
        Ok(Self {
            dim,
            config,
            kernel: hdv::kernels::try_active()?,
            graph: RwLock::new(g),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fraction of `pairs` pairs at whole distance exactly `whole` (of `bits` bits)
    /// whose distance on the first `prefix` bits exceeds `bound`.
    fn beyond(bits: usize, prefix: usize, whole: usize, bound: u32, pairs: usize) -> f64 {
        let mut rng = SeededRng::new(whole as u64);
        let mut positions: Vec<usize> = (0..bits).collect();
        let mut over = 0;
        for _ in 0..pairs {
            // `whole` distinct positions differ: a partial Fisher–Yates shuffle.
            for i in 0..whole {
                let j = i + rng.below((bits - i) as u64) as usize;
                positions.swap(i, j);
            }
            let near = positions[..whole].iter().filter(|&&p| p < prefix).count();
            over += usize::from(near as u32 > bound);
        }
        over as f64 / pairs as f64
    }

    #[test]
    fn a_prefix_screens_out_far_nodes_and_keeps_near_ones() {
        let (bits, prefix) = (10_048, 1024);
        let bounds = screen_bounds(bits, prefix);
        assert_eq!(bounds.len(), bits + 1);
        assert!(bounds.windows(2).all(|w| w[0] <= w[1]), "monotone");
        assert!(bounds.iter().all(|&b| b as usize <= prefix));
        // A node within the list's worst passes the screen (z = 4: about 3e-5 fail).
        for worst in [500, 2300, 4000, 5024] {
            let lost = beyond(bits, prefix, worst, bounds[worst], 4000);
            assert!(
                lost <= 0.001,
                "worst {worst}: {lost} of near nodes screened out"
            );
        }
        // A node at half the dimension is screened out against a list of near ones.
        let kept = 1.0 - beyond(bits, prefix, bits / 2, bounds[2300], 4000);
        assert!(kept <= 0.001, "{kept} of far nodes read in full");
        // Without a prefix narrow enough, nothing screens.
        let config = |screen_bits| HnswConfig {
            screen_bits,
            ..HnswConfig::default()
        };
        let dim = Dim::new(bits).unwrap();
        assert_eq!(screen_words(dim, &config(1024)), 16);
        assert_eq!(screen_words(dim, &config(0)), 0);
        assert_eq!(screen_words(Dim::new(1024).unwrap(), &config(1024)), 0);
    }
}
