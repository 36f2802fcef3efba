//! Cleanup memory: a codebook of labelled clean vectors that snaps a noisy vector (an
//! unbound filler, a probed sequence slot, a bundle member) to the nearest stored item.

use crate::error::{Error, Result};
use crate::hypervector::{AsHv, Dim, HvRef};
use crate::search::{Block, Neighbor, Scan};

/// A labelled set of clean vectors stored contiguously, searched by exact block scan.
#[derive(Debug, Clone)]
pub struct Codebook<L = String> {
    dim: Dim,
    words: Vec<u64>,
    labels: Vec<L>,
}

/// One cleanup answer: the label, its position in the codebook, and the distance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match<'a, L> {
    /// Label of the stored item.
    pub label: &'a L,
    /// Position of the item in insertion order.
    pub index: usize,
    /// Hamming distance from the query.
    pub distance: u32,
}

impl<L> Codebook<L> {
    /// An empty codebook of `dim`-bit vectors.
    pub fn new(dim: Dim) -> Self {
        Self {
            dim,
            words: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// The dimension.
    pub fn dim(&self) -> Dim {
        self.dim
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether the codebook is empty.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Stores `vector` under `label` and returns its index.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if the vector's dimension differs.
    pub fn insert(&mut self, label: L, vector: &impl AsHv) -> Result<usize> {
        let v = vector.as_hv();
        if v.dim() != self.dim {
            return Err(Error::DimensionMismatch {
                expected: self.dim.bits(),
                found: v.dim().bits(),
            });
        }
        self.words.extend_from_slice(v.words());
        self.labels.push(label);
        Ok(self.labels.len() - 1)
    }

    /// Item `index`: its label and vector.
    pub fn get(&self, index: usize) -> Option<(&L, HvRef<'_>)> {
        let label = self.labels.get(index)?;
        Some((label, self.block().get(index)?))
    }

    /// The stored vectors as one block.
    pub fn block(&self) -> Block<'_> {
        Block::new(&self.words, self.dim).expect("codebook words are whole vectors")
    }

    /// The `k` nearest items, nearest first.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if the query's dimension differs.
    pub fn top_k(&self, query: &impl AsHv, k: usize) -> Result<Vec<Match<'_, L>>> {
        let hits = Scan::new(k).top_k(&self.block(), query)?;
        Ok(hits.into_iter().map(|n| self.to_match(n)).collect())
    }

    /// The `k` nearest items of each query, nearest first: one batch scan, where each
    /// codebook vector loaded serves many queries (register-blocked all-pairs kernel), so
    /// cleaning up many vectors costs far less than a [`top_k`](Self::top_k) each.
    ///
    /// ```
    /// use hdv::{Codebook, Dim, Hypervector};
    /// let dim = Dim::new(1024).unwrap();
    /// let mut book = Codebook::new(dim);
    /// for s in 0..50u64 {
    ///     book.insert(s, &Hypervector::random(dim, s)).unwrap();
    /// }
    /// let queries: Vec<Hypervector> = [3u64, 17, 40].iter().map(|&s| Hypervector::random(dim, s)).collect();
    /// let answers = book.top_k_batch(&queries, 1).unwrap();
    /// let labels: Vec<u64> = answers.iter().map(|a| *a[0].label).collect();
    /// assert_eq!(labels, vec![3, 17, 40]);
    /// ```
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if a query's dimension differs.
    pub fn top_k_batch<V: AsHv>(&self, queries: &[V], k: usize) -> Result<Vec<Vec<Match<'_, L>>>> {
        let queries = crate::BlockBuf::from_vectors(self.dim, queries)?;
        let hits = Scan::new(k).top_k_batch(&self.block(), &queries.block())?;
        Ok(hits
            .into_iter()
            .map(|list| list.into_iter().map(|n| self.to_match(n)).collect())
            .collect())
    }

    /// Every item at the smallest distance from `query`, in insertion order: the ties
    /// [`cleanup`](Self::cleanup) resolves silently in favour of the earliest item.
    ///
    /// ```
    /// use hdv::{Codebook, Dim, Hypervector};
    /// let dim = Dim::new(512).unwrap();
    /// let v = Hypervector::random(dim, 1);
    /// let mut book = Codebook::new(dim);
    /// book.insert("first", &v).unwrap();
    /// book.insert("other", &Hypervector::random(dim, 2)).unwrap();
    /// book.insert("copy", &v).unwrap();
    /// let tied: Vec<&str> = book.nearest_with_ties(&v).unwrap().iter().map(|m| *m.label).collect();
    /// assert_eq!(tied, vec!["first", "copy"]);
    /// ```
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if the query's dimension differs.
    pub fn nearest_with_ties(&self, query: &impl AsHv) -> Result<Vec<Match<'_, L>>> {
        let Some(best) = self.cleanup(query)? else {
            return Ok(Vec::new());
        };
        let mut all = Scan::new(self.len())
            .max_distance(best.distance)
            .top_k(&self.block(), query)?;
        all.sort_by_key(|n| n.index);
        Ok(all.into_iter().map(|n| self.to_match(n)).collect())
    }

    /// The nearest item, or `None` if the codebook is empty.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if the query's dimension differs.
    pub fn cleanup(&self, query: &impl AsHv) -> Result<Option<Match<'_, L>>> {
        Ok(self.top_k(query, 1)?.into_iter().next())
    }

    fn to_match(&self, n: Neighbor) -> Match<'_, L> {
        Match {
            label: &self.labels[n.index],
            index: n.index,
            distance: n.distance,
        }
    }
}
