//! Vector tiers: where hypervectors live, behind one [`VectorTier`] trait.
//!
//! - [`HotTier`]: RAM, one contiguous block per project, bounded capacity.
//! - [`SegmentStore`]: durable append-only mmap segment files, one directory per project.
//! - [`RedisTier`] (feature `standard`): the warm tier on a Redis shared by a deployment's
//!   processes, searched through a local mirror kept current incrementally.
//! - [`TierManager`]: places traces in hot / warm / cold by LTP strength and searches all
//!   of them (a demoted memory is slower to reach, never invisible).
//!
//! Every tier scopes everything by [`ProjectId`]; a search never crosses projects.

mod board;
mod error;
mod exact;
mod hot;
mod mmap;
#[cfg(feature = "scale")]
mod qdrant;
#[cfg(feature = "standard")]
mod redis;
mod segment;
mod settings;
mod tiers;

use hdv::{Dim, HvRef, Hypervector};

pub use crate::base::MappedFile;
pub use crate::base::{Hit, InvalidProject, ProjectId, SearchRequest, VectorId};
pub use crate::clock::{Clock, ManualClock, SystemClock};
pub use board::{WorkingBoard, WorkingItem};
pub use error::{StoreError, StoreResult};
pub use exact::Exact;
pub use hot::HotTier;
pub use mmap::{SegmentStore, SegmentStoreConfig, StoreRecovery, lock_file};
#[cfg(feature = "scale")]
pub use qdrant::QdrantTier;
#[cfg(feature = "standard")]
pub use redis::RedisTier;
pub use segment::SegmentRecovery;
pub use settings::{QdrantSettings, RedisSettings, redact_url};
pub use tiers::{Ltp, Rebalance, SharedTraces, Tier, TierManager, TierPolicy, Trace};

/// The contract every vector tier implements (RAM, mmap segments, later Redis and Qdrant);
/// `tests/tier_contract.rs` runs one suite against each.
pub trait VectorTier: Send + Sync {
    /// Short name for errors and logs (`hot`, `mmap`, ...).
    fn name(&self) -> &'static str;

    /// The dimension of every vector.
    fn dim(&self) -> Dim;

    /// Stores `items` in `project`, all or nothing for validation errors (dimension,
    /// duplicate ids within the batch or the project): nothing is written if one is bad.
    ///
    /// # Errors
    /// [`StoreError::DimensionMismatch`], [`StoreError::DuplicateId`], [`StoreError::Full`],
    /// I/O errors.
    fn insert_batch(&self, project: &ProjectId, items: &[(VectorId, HvRef<'_>)])
    -> StoreResult<()>;

    /// Stores one vector.
    ///
    /// # Errors
    /// As [`insert_batch`](Self::insert_batch).
    fn insert(&self, project: &ProjectId, id: VectorId, vector: HvRef<'_>) -> StoreResult<()> {
        self.insert_batch(project, &[(id, vector)])
    }

    /// A copy of the vector, if present and not deleted.
    ///
    /// # Errors
    /// I/O or corruption errors.
    fn get(&self, project: &ProjectId, id: VectorId) -> StoreResult<Option<Hypervector>>;

    /// Copies of the vectors `ids`, in the order asked (`None` where one is absent or
    /// deleted): what [`get`](Self::get) gives for each, in one round trip where the tier
    /// is a remote service.
    ///
    /// # Errors
    /// I/O or corruption errors.
    fn get_many(
        &self,
        project: &ProjectId,
        ids: &[VectorId],
    ) -> StoreResult<Vec<Option<Hypervector>>> {
        ids.iter().map(|&id| self.get(project, id)).collect()
    }

    /// Whether the vector is present.
    ///
    /// # Errors
    /// I/O errors.
    fn contains(&self, project: &ProjectId, id: VectorId) -> StoreResult<bool> {
        Ok(self.get(project, id)?.is_some())
    }

    /// Deletes a vector; returns whether it was present.
    ///
    /// # Errors
    /// I/O errors.
    fn delete(&self, project: &ProjectId, id: VectorId) -> StoreResult<bool>;

    /// Deletes several vectors (a tier with synced writes syncs once for all of them);
    /// returns how many were present.
    ///
    /// # Errors
    /// I/O errors.
    fn delete_batch(&self, project: &ProjectId, ids: &[VectorId]) -> StoreResult<usize> {
        let mut present = 0;
        for &id in ids {
            present += usize::from(self.delete(project, id)?);
        }
        Ok(present)
    }

    /// The nearest vectors of `project` (nearest first, ties by id).
    ///
    /// # Errors
    /// [`StoreError::DimensionMismatch`] for a query of another dimension.
    fn search(&self, project: &ProjectId, request: &SearchRequest<'_>) -> StoreResult<Vec<Hit>>;

    /// Number of live vectors in `project`.
    fn len(&self, project: &ProjectId) -> usize;

    /// Whether `project` holds no live vector.
    fn is_empty(&self, project: &ProjectId) -> bool {
        self.len(project) == 0
    }

    /// Every project with at least one stored vector.
    fn projects(&self) -> Vec<ProjectId>;

    /// Live ids of `project`.
    fn ids(&self, project: &ProjectId) -> Vec<VectorId>;

    /// [`projects`](Self::projects), or the error of a tier whose listing can fail (a
    /// remote service): what must be complete, such as the traces built at open, uses this.
    ///
    /// # Errors
    /// The tier's service is unavailable.
    fn list_projects(&self) -> StoreResult<Vec<ProjectId>> {
        Ok(self.projects())
    }

    /// [`ids`](Self::ids), or the error of a tier whose listing can fail.
    ///
    /// # Errors
    /// The tier's service is unavailable.
    fn list_ids(&self, project: &ProjectId) -> StoreResult<Vec<VectorId>> {
        Ok(self.ids(project))
    }

    /// Removes every vector of `project`, physically; returns how many were removed.
    ///
    /// # Errors
    /// I/O errors.
    fn drop_project(&self, project: &ProjectId) -> StoreResult<usize>;

    /// Makes every acknowledged write durable (a no-op for tiers that sync on write).
    ///
    /// # Errors
    /// I/O errors.
    fn flush(&self) -> StoreResult<()>;

    /// Brings derived search indexes up to date with what is stored (the part of a
    /// project an HNSW graph does not hold yet, which searches scan exactly meanwhile),
    /// until `deadline`; returns the vectors still outside them. Tiers without such work
    /// return 0.
    ///
    /// # Errors
    /// Index errors.
    fn catch_up(&self, deadline: Option<std::time::Instant>) -> StoreResult<usize> {
        let _ = deadline;
        Ok(0)
    }

    /// Whether the tier found, since it was last asked, that it lost what it held (a Redis
    /// restarted empty or flushed): the owner must then rebuild it from the durable home.
    /// Reported once per loss. Tiers that cannot lose acknowledged writes say `false`.
    ///
    /// # Errors
    /// The tier's service is unavailable.
    fn lost_contents(&self) -> StoreResult<bool> {
        Ok(false)
    }
}

/// Checks the dimension of every item and that ids are unique within the batch.
pub(crate) fn validate_batch(
    dim: Dim,
    project: &ProjectId,
    items: &[(VectorId, HvRef<'_>)],
) -> StoreResult<()> {
    let mut seen = std::collections::HashSet::with_capacity(items.len());
    for (id, v) in items {
        if v.dim() != dim {
            return Err(StoreError::DimensionMismatch {
                path: None,
                expected: dim.bits(),
                found: v.dim().bits(),
            });
        }
        if !seen.insert(*id) {
            return Err(StoreError::DuplicateId {
                project: project.clone(),
                id: *id,
            });
        }
    }
    Ok(())
}

/// Checks the query dimension of a search.
pub(crate) fn validate_query(dim: Dim, request: &SearchRequest<'_>) -> StoreResult<()> {
    if request.query.dim() != dim {
        return Err(StoreError::DimensionMismatch {
            path: None,
            expected: dim.bits(),
            found: request.query.dim().bits(),
        });
    }
    Ok(())
}

/// Scans `block` (whose slot `i` has id `id_of(i)`) into `top`, skipping slots `skip(i)`.
pub(crate) fn scan_block(
    kernel: hdv::Kernel,
    block: &hdv::Block<'_>,
    request: &SearchRequest<'_>,
    id_of: impl Fn(usize) -> VectorId,
    skip: impl Fn(usize) -> bool,
    top: &mut Vec<Hit>,
) {
    scan_block_visiting(kernel, block, request, (id_of, skip), top, &mut |_, _| {});
}

/// [`scan_block`] (`slots` = `(id_of, skip)`) that also hands each chunk of vectors it has
/// scanned, in order, to `visit(first_slot, vectors)` while the chunk is in cache.
pub(crate) fn scan_block_visiting(
    kernel: hdv::Kernel,
    block: &hdv::Block<'_>,
    request: &SearchRequest<'_>,
    slots: (impl Fn(usize) -> VectorId, impl Fn(usize) -> bool),
    top: &mut Vec<Hit>,
    visit: &mut dyn FnMut(usize, &[u64]),
) {
    let (id_of, skip) = slots;
    const CHUNK: usize = 256;
    let max = request.max_distance.unwrap_or(u32::MAX);
    let w = block.dim().words();
    let mut dist = [0u32; CHUNK];
    let mut bound = worst(top, request.k).min(max);
    for (c, chunk) in block.words().chunks(CHUNK * w).enumerate() {
        let n = chunk.len() / w;
        kernel.distances(request.query.words(), chunk, &mut dist[..n]);
        visit(c * CHUNK, chunk);
        for (j, &d) in dist[..n].iter().enumerate() {
            if d > bound {
                continue;
            }
            let slot = c * CHUNK + j;
            if skip(slot) {
                continue;
            }
            let id = id_of(slot);
            if !request.accepts(id) {
                continue;
            }
            push_hit(top, request.k, Hit { id, distance: d });
            bound = worst(top, request.k).min(max);
        }
    }
}

/// Candidates a two-stage scan takes from the first stage for a request of `k`.
pub(crate) fn prefix_candidates(k: usize) -> usize {
    (k * 8).max(1024)
}

/// The first stage of a two-stage scan: the prefixes of a block's vectors and how many
/// candidates to keep.
pub(crate) struct FirstStage<'a> {
    /// The first words of every vector, contiguous.
    pub(crate) sketch: &'a [u64],
    /// Eligible slots to compare in full (more where prefix distances tie at the cut).
    pub(crate) candidates: usize,
    /// Whether some slot may be skipped (tombstones): if not, and the request has no id
    /// filter, every slot is eligible and the cut is found without asking.
    pub(crate) may_skip: bool,
}

/// [`scan_block`] in two stages: the distances of the vectors' first words (`first.sketch`,
/// the first `sketch.len() / block.len()` words of every vector, contiguous) pick the
/// `first.candidates` nearest (ties at the cut included), and only those are measured in full.
/// Reads a fifth of the bytes at 2,048 of 10,048 bits; approximate: a vector whose prefix
/// looks farther than it is can be missed (measured in `examples/two_stage.rs`).
pub(crate) fn scan_block_two_stage(
    kernel: hdv::Kernel,
    block: &hdv::Block<'_>,
    first: &FirstStage<'_>,
    request: &SearchRequest<'_>,
    id_of: impl Fn(usize) -> VectorId,
    skip: impl Fn(usize) -> bool,
    top: &mut Vec<Hit>,
) {
    const CHUNK: usize = 256;
    let n = block.len();
    if n == 0 {
        return;
    }
    let FirstStage {
        sketch,
        candidates,
        may_skip,
    } = *first;
    let pw = sketch.len() / n;
    assert_eq!(
        sketch.len(),
        n * pw,
        "a sketch is whole prefixes of the block"
    );
    let query = request.query.words();
    // The prefix distances and their histogram live in buffers of the thread's, kept
    // between scans (a segment's worth of u32): no page faults per scan.
    let chosen = FIRST_STAGE.with_borrow_mut(|(dist, histogram)| {
        dist.resize(n, 0);
        for (part, out) in sketch.chunks(CHUNK * pw).zip(dist.chunks_mut(CHUNK)) {
            kernel.distances(&query[..pw], part, out);
        }
        // The cut: the smallest prefix distance with `candidates` eligible slots at or
        // below it (a histogram over the 64 · pw + 1 possible distances; no sort).
        let eligible =
            |slot: usize| !skip(slot) && (request.filter.is_none() || request.accepts(id_of(slot)));
        histogram.clear();
        histogram.resize(pw * 64 + 1, 0);
        if may_skip || request.filter.is_some() {
            for (slot, &d) in dist.iter().enumerate() {
                if eligible(slot) {
                    histogram[d as usize] += 1;
                }
            }
        } else {
            for &d in dist.iter() {
                histogram[d as usize] += 1;
            }
        }
        let mut cut = pw * 64;
        let mut seen = 0;
        for (d, &count) in histogram.iter().enumerate() {
            seen += count;
            if seen >= candidates {
                cut = d;
                break;
            }
        }
        dist.iter()
            .enumerate()
            .filter(|&(slot, &d)| d as usize <= cut && eligible(slot))
            .map(|(slot, _)| slot)
            .collect::<Vec<usize>>()
    });
    let max = request.max_distance.unwrap_or(u32::MAX);
    let mut bound = worst(top, request.k).min(max);
    let row = |slot: usize| block.get(slot).expect("slot in block").words();
    for (i, &slot) in chosen.iter().enumerate() {
        // The candidates are scattered over the block: fetch a few rows ahead.
        if let Some(&ahead) = chosen.get(i + PREFETCH_AHEAD) {
            hdv::kernels::prefetch(row(ahead));
        }
        let full = kernel.hamming(query, row(slot));
        if full > bound {
            continue;
        }
        push_hit(
            top,
            request.k,
            Hit {
                id: id_of(slot),
                distance: full,
            },
        );
        bound = worst(top, request.k).min(max);
    }
}

thread_local! {
    /// A two-stage scan's prefix distances and their histogram, on this thread.
    static FIRST_STAGE: std::cell::RefCell<(Vec<u32>, Vec<usize>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Rows a two-stage scan's full comparisons fetch ahead of the one they compare.
const PREFETCH_AHEAD: usize = 4;

/// The distance a new hit must not exceed to enter a full top-`k` list.
fn worst(top: &[Hit], k: usize) -> u32 {
    if top.len() < k {
        u32::MAX
    } else {
        top.last().map_or(0, |h| h.distance)
    }
}

/// Inserts `hit` into the sorted list `top` of at most `k` hits.
pub(crate) fn push_hit(top: &mut Vec<Hit>, k: usize, hit: Hit) {
    if k == 0 {
        return;
    }
    let pos = top.partition_point(|h| h.key() <= hit.key());
    if pos >= k {
        return;
    }
    top.insert(pos, hit);
    top.truncate(k);
}

/// Merges sorted hit lists, keeping the best hit per id and the first `k`.
pub fn merge_hits(lists: impl IntoIterator<Item = Vec<Hit>>, k: usize) -> Vec<Hit> {
    let mut all: Vec<Hit> = lists.into_iter().flatten().collect();
    all.sort_by_key(Hit::key);
    let mut seen = std::collections::HashSet::new();
    all.retain(|h| seen.insert(h.id));
    all.truncate(k);
    all
}
