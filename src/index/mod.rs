//! Indexes derived from what is stored: the approximate HNSW graph ([`Hnsw`]) over
//! bit-level Hamming distance and the per-project [`lexical`] index (BM25 postings,
//! chronology, directive marks) (the exact scan across tiers is the store's own,
//! `store::Exact`).

mod hnsw;
pub mod lexical;

pub use hnsw::{GRAPH_FILE, Hnsw, HnswConfig, HnswError};
