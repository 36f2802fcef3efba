//! Indexes derived from what is stored: the approximate HNSW graph ([`Hnsw`]) over
//! bit-level Hamming distance (the exact scan across tiers is the store's own,
//! `store::Exact`).

mod hnsw;

pub use hnsw::{GRAPH_FILE, Hnsw, HnswConfig, HnswError};
