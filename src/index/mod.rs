//! Search over the vector tiers: exact parallel scan ([`Exact`]) and approximate HNSW
//! ([`Hnsw`]) over bit-level Hamming distance.

mod exact;
mod hnsw;

pub use exact::Exact;
pub use hnsw::{GRAPH_FILE, Hnsw, HnswConfig, HnswError};
