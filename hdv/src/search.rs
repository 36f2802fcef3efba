//! Exact k-nearest-neighbour search over a contiguous [`Block`] of vectors: one query or a
//! batch, on one thread or in parallel with rayon.
//!
//! Results are ordered by `(distance, index)`: ties in distance go to the lower index, so a
//! search returns exactly the first `k` entries of a stable sort of all distances, on every
//! kernel and every thread count.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::hypervector::{AsHv, Dim, HvRef};
use crate::kernels::{self, Kernel};
use crate::words::WordBuf;

/// Vectors whose distances one scan step computes into a stack buffer before selection.
const SCAN_CHUNK: usize = 256;
/// Bytes of vectors per tile in a batch scan: the tile stays in L2 while every query of the
/// group passes over it.
const BATCH_TILE_BYTES: usize = 256 * 1024;
/// Bytes of queries per group in a batch scan (kept in L2 beside the tile).
const BATCH_QUERY_BYTES: usize = 192 * 1024;
/// Smallest number of vectors a parallel task scans (keeps task overhead negligible).
const MIN_PAR_CHUNK: usize = 4_096;

/// A search result: the position of a vector in its block and its Hamming distance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Neighbor {
    /// Position of the vector in the searched block.
    pub index: usize,
    /// Hamming distance to the query.
    pub distance: u32,
}

impl Ord for Neighbor {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.distance, self.index).cmp(&(other.distance, other.index))
    }
}

impl PartialOrd for Neighbor {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A bounded selection of the `k` best neighbours seen so far, with an optional distance
/// ceiling. Mergeable, so partial results from parallel chunks combine exactly.
#[derive(Debug, Clone)]
pub struct TopK {
    k: usize,
    max_distance: u32,
    heap: BinaryHeap<Neighbor>,
}

impl TopK {
    /// Keeps at most `k` neighbours, none farther than `max_distance` (inclusive).
    pub fn new(k: usize, max_distance: Option<u32>) -> Self {
        Self {
            k,
            max_distance: max_distance.unwrap_or(u32::MAX),
            heap: BinaryHeap::with_capacity(k.min(4096) + 1),
        }
    }

    /// Largest distance that may still enter (a cheap pre-filter before [`push`](Self::push)).
    #[inline]
    pub fn bound(&self) -> u32 {
        if self.heap.len() < self.k {
            self.max_distance
        } else {
            self.heap.peek().map_or(0, |worst| worst.distance)
        }
    }

    /// Offers a candidate.
    #[inline]
    pub fn push(&mut self, candidate: Neighbor) {
        if self.k == 0 || candidate.distance > self.max_distance {
            return;
        }
        if self.heap.len() < self.k {
            self.heap.push(candidate);
        } else if let Some(mut worst) = self.heap.peek_mut()
            && candidate < *worst
        {
            *worst = candidate;
        }
    }

    /// Offers `distances[j]` as the neighbour at index `first + j`, for every `j`.
    #[inline]
    pub fn offer_all(&mut self, distances: &[u32], first: usize) {
        let mut bound = self.bound();
        for (j, &distance) in distances.iter().enumerate() {
            if distance <= bound {
                self.push(Neighbor {
                    index: first + j,
                    distance,
                });
                bound = self.bound();
            }
        }
    }

    /// Adds every candidate of `other` (same `k` and ceiling expected).
    pub fn merge(&mut self, other: TopK) {
        for n in other.heap {
            self.push(n);
        }
    }

    /// Number of neighbours currently held.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing has been accepted.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// The neighbours, nearest first (ties by index).
    pub fn into_sorted_vec(self) -> Vec<Neighbor> {
        self.heap.into_sorted_vec()
    }
}

/// Owned storage for a [`Block`]: vectors appended back to back, for building a block from
/// individual [`Hypervector`]s without flattening them by hand. Held in a [`WordBuf`], so
/// a large block is scanned from transparent huge pages.
///
/// ```
/// use hdv::{BlockBuf, Dim, Hypervector, Scan};
/// let dim = Dim::new(1024).unwrap();
/// let vectors: Vec<Hypervector> = (0..100).map(|s| Hypervector::random(dim, s)).collect();
/// let buf = BlockBuf::from_vectors(dim, &vectors).unwrap();
/// let hits = Scan::new(1).top_k(&buf.block(), &vectors[42]).unwrap();
/// assert_eq!((hits[0].index, hits[0].distance), (42, 0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockBuf {
    words: WordBuf,
    dim: Dim,
}

impl BlockBuf {
    /// An empty buffer of `dim`-bit vectors.
    pub fn new(dim: Dim) -> Self {
        Self {
            words: WordBuf::new(),
            dim,
        }
    }

    /// `n` all-zero vectors, to be filled in place through [`words_mut`](Self::words_mut).
    ///
    /// # Panics
    /// If `n` vectors of `dim` do not fit in the address space (as `Vec` does).
    pub fn zeroed(dim: Dim, n: usize) -> Self {
        Self {
            words: WordBuf::zeroed(n.checked_mul(dim.words()).expect("capacity overflow")),
            dim,
        }
    }

    /// The vectors' words, back to back, to write in place (every bit pattern is a vector).
    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    /// A buffer holding `vectors`, in order.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if a vector is not `dim` bits.
    pub fn from_vectors<V: AsHv>(dim: Dim, vectors: &[V]) -> Result<Self> {
        let mut buf = Self::new(dim);
        buf.words.reserve(vectors.len() * dim.words());
        for v in vectors {
            buf.push(v)?;
        }
        Ok(buf)
    }

    /// Appends `v`; returns its index.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if `v` is not of the buffer's dimension.
    pub fn push(&mut self, v: &impl AsHv) -> Result<usize> {
        let v = v.as_hv();
        if v.dim() != self.dim {
            return Err(Error::DimensionMismatch {
                expected: self.dim.bits(),
                found: v.dim().bits(),
            });
        }
        self.words.extend_from_slice(v.words());
        Ok(self.len() - 1)
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.words.len() / self.dim.words()
    }

    /// Whether the buffer holds no vector.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The vectors as a [`Block`] to search.
    pub fn block(&self) -> Block<'_> {
        Block {
            words: &self.words,
            dim: self.dim,
        }
    }
}

/// `N` vectors of one dimension stored back to back in one word slice (for example a RAM
/// tier or an mmap'd segment). Borrowed: building one never copies.
#[derive(Debug, Clone, Copy)]
pub struct Block<'a> {
    words: &'a [u64],
    dim: Dim,
}

impl<'a> Block<'a> {
    /// Views `words` as consecutive vectors of dimension `dim`.
    ///
    /// # Errors
    /// [`Error::RaggedBlock`] if `words.len()` is not a multiple of `dim.words()`.
    pub fn new(words: &'a [u64], dim: Dim) -> Result<Self> {
        if !words.len().is_multiple_of(dim.words()) {
            return Err(Error::RaggedBlock {
                len: words.len(),
                words: dim.words(),
            });
        }
        Ok(Self { words, dim })
    }

    /// Number of vectors.
    #[inline]
    pub fn len(&self) -> usize {
        self.words.len() / self.dim.words()
    }

    /// Whether the block holds no vector.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The dimension of every vector.
    #[inline]
    pub fn dim(&self) -> Dim {
        self.dim
    }

    /// The underlying words.
    #[inline]
    pub fn words(&self) -> &'a [u64] {
        self.words
    }

    /// Vector `i`, if it exists.
    pub fn get(&self, i: usize) -> Option<HvRef<'a>> {
        let w = self.dim.words();
        self.words
            .get(i * w..(i + 1) * w)
            .map(HvRef::from_words_unchecked)
    }

    /// Iterates over the vectors in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = HvRef<'a>> + 'a {
        self.words
            .chunks_exact(self.dim.words())
            .map(HvRef::from_words_unchecked)
    }

    /// Vectors `range` as a sub-block (indices in results are then relative to it).
    ///
    /// # Panics
    /// If the range is out of bounds.
    pub fn slice(&self, range: std::ops::Range<usize>) -> Block<'a> {
        let w = self.dim.words();
        Block {
            words: &self.words[range.start * w..range.end * w],
            dim: self.dim,
        }
    }
}

/// Parameters of an exact top-k search: `k`, an optional distance ceiling and the kernel.
///
/// ```
/// use hdv::{Block, Dim, Hypervector, Scan};
/// let dim = Dim::new(1024).unwrap();
/// let stored: Vec<u64> = (0..100).flat_map(|s| Hypervector::random(dim, s).into_words()).collect();
/// let block = Block::new(&stored, dim).unwrap();
/// let query = Hypervector::random(dim, 42).with_noise(0.1, 7).unwrap();
/// let hits = Scan::new(3).top_k(&block, &query).unwrap();
/// assert_eq!(hits[0].index, 42);
/// assert_eq!(hits[0].distance, 102); // round(0.1 * 1024) flipped bits
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Scan {
    k: usize,
    max_distance: Option<u32>,
    kernel: Option<Kernel>,
}

impl Scan {
    /// The `k` nearest vectors, no ceiling, the process's active kernel.
    pub fn new(k: usize) -> Self {
        Self {
            k,
            max_distance: None,
            kernel: None,
        }
    }

    /// Only return vectors at distance `<= max_distance`.
    pub fn max_distance(mut self, max_distance: u32) -> Self {
        self.max_distance = Some(max_distance);
        self
    }

    /// Use a specific kernel instead of the active one (tests, benchmarks).
    pub fn kernel(mut self, kernel: Kernel) -> Self {
        self.kernel = Some(kernel);
        self
    }

    fn resolve_kernel(&self) -> Result<Kernel> {
        match self.kernel {
            Some(k) => Ok(k),
            None => kernels::try_active(),
        }
    }

    fn check_query(block: &Block<'_>, query: HvRef<'_>) -> Result<()> {
        if query.dim() != block.dim {
            return Err(Error::DimensionMismatch {
                expected: block.dim.bits(),
                found: query.dim().bits(),
            });
        }
        Ok(())
    }

    fn check_queries(block: &Block<'_>, queries: &Block<'_>) -> Result<()> {
        if queries.dim != block.dim {
            return Err(Error::DimensionMismatch {
                expected: block.dim.bits(),
                found: queries.dim.bits(),
            });
        }
        Ok(())
    }

    /// The `k` nearest vectors of `block` to `query`, nearest first, on this thread.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if the query's dimension differs from the block's;
    /// [`Error::UnavailableKernel`] if no kernel was set and `HDV_KERNEL` is invalid.
    pub fn top_k(&self, block: &Block<'_>, query: &impl AsHv) -> Result<Vec<Neighbor>> {
        let query = query.as_hv();
        Self::check_query(block, query)?;
        let mut top = TopK::new(self.k, self.max_distance);
        scan_into(
            self.resolve_kernel()?,
            query.words(),
            block.words,
            0,
            &mut top,
        );
        Ok(top.into_sorted_vec())
    }

    /// Like [`top_k`](Self::top_k), split over rayon's current thread pool.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if the query's dimension differs from the block's;
    /// [`Error::UnavailableKernel`] if no kernel was set and `HDV_KERNEL` is invalid.
    pub fn par_top_k(&self, block: &Block<'_>, query: &impl AsHv) -> Result<Vec<Neighbor>> {
        let query = query.as_hv();
        Self::check_query(block, query)?;
        let kernel = self.resolve_kernel()?;
        let chunk = par_chunk_len(block.len());
        let w = block.dim.words();
        let top = block
            .words
            .par_chunks(chunk * w)
            .enumerate()
            .map(|(i, words)| {
                let mut top = TopK::new(self.k, self.max_distance);
                scan_into(kernel, query.words(), words, i * chunk, &mut top);
                top
            })
            .reduce(
                || TopK::new(self.k, self.max_distance),
                |mut a, b| {
                    a.merge(b);
                    a
                },
            );
        Ok(top.into_sorted_vec())
    }

    /// The `k` nearest vectors for each query of `queries`, on this thread. Queries are
    /// processed in groups against L2-sized tiles of the block with the register-blocked
    /// all-pairs kernel, so each vector loaded from memory serves many queries.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if the dimensions differ; [`Error::UnavailableKernel`]
    /// if no kernel was set and `HDV_KERNEL` is invalid.
    pub fn top_k_batch(
        &self,
        block: &Block<'_>,
        queries: &Block<'_>,
    ) -> Result<Vec<Vec<Neighbor>>> {
        Self::check_queries(block, queries)?;
        let mut tops = vec![TopK::new(self.k, self.max_distance); queries.len()];
        batch_into(self.resolve_kernel()?, queries, block.words, 0, &mut tops);
        Ok(tops.into_iter().map(TopK::into_sorted_vec).collect())
    }

    /// Like [`top_k_batch`](Self::top_k_batch), with the block split over rayon's current
    /// thread pool.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if the dimensions differ; [`Error::UnavailableKernel`]
    /// if no kernel was set and `HDV_KERNEL` is invalid.
    pub fn par_top_k_batch(
        &self,
        block: &Block<'_>,
        queries: &Block<'_>,
    ) -> Result<Vec<Vec<Neighbor>>> {
        Self::check_queries(block, queries)?;
        let kernel = self.resolve_kernel()?;
        let chunk = par_chunk_len(block.len());
        let w = block.dim.words();
        let empty = || vec![TopK::new(self.k, self.max_distance); queries.len()];
        let tops = block
            .words
            .par_chunks(chunk * w)
            .enumerate()
            .map(|(i, words)| {
                let mut tops = empty();
                batch_into(kernel, queries, words, i * chunk, &mut tops);
                tops
            })
            .reduce(empty, |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    x.merge(y);
                }
                a
            });
        Ok(tops.into_iter().map(TopK::into_sorted_vec).collect())
    }
}

/// Vectors per parallel task: about four tasks per thread, never tiny.
fn par_chunk_len(n: usize) -> usize {
    let tasks = rayon::current_num_threads().max(1) * 4;
    n.div_ceil(tasks).max(MIN_PAR_CHUNK)
}

/// Scans `block` (vectors of `query.len()` words, the first at index `base`) into `top`.
fn scan_into(kernel: Kernel, query: &[u64], block: &[u64], base: usize, top: &mut TopK) {
    let w = query.len();
    let mut dist = [0u32; SCAN_CHUNK];
    kernels::measured(kernel, std::mem::size_of_val(block), || {
        for (c, chunk) in block.chunks(SCAN_CHUNK * w).enumerate() {
            let n = chunk.len() / w;
            kernel.distances(query, chunk, &mut dist[..n]);
            top.offer_all(&dist[..n], base + c * SCAN_CHUNK);
        }
    });
}

/// Scans `block` for every query of `queries` into `tops` (one per query).
fn batch_into(kernel: Kernel, queries: &Block<'_>, block: &[u64], base: usize, tops: &mut [TopK]) {
    let w = queries.dim.words();
    let bytes = w * 8;
    let tile = (BATCH_TILE_BYTES / bytes).max(1);
    let group = (BATCH_QUERY_BYTES / bytes).max(1);
    let mut dist = vec![0u32; group.min(queries.len()) * tile];
    for (qwords, tops) in queries.words.chunks(group * w).zip(tops.chunks_mut(group)) {
        let nq = qwords.len() / w;
        for (t, vwords) in block.chunks(tile * w).enumerate() {
            let nv = vwords.len() / w;
            let dist = &mut dist[..nq * nv];
            kernel.distances_many(qwords, vwords, w, dist);
            for (top, row) in tops.iter_mut().zip(dist.chunks_exact(nv)) {
                top.offer_all(row, base + t * tile);
            }
        }
    }
}
