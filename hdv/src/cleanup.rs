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
