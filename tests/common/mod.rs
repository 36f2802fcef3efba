//! Helpers shared by the integration tests.
#![allow(dead_code)]

use hypermem::hdv::{Dim, Hypervector};
use hypermem::store::{Hit, ProjectId, VectorId};

/// The deterministic vector of an id (so any reader can check bit-identity).
pub fn vector_of(dim: Dim, project: &str, id: u64) -> Hypervector {
    let salt = project
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(131).wrapping_add(u64::from(b)));
    Hypervector::random(dim, id ^ salt.rotate_left(17))
}

pub fn project(name: &str) -> ProjectId {
    ProjectId::new(name).unwrap()
}

/// Brute-force top-k over (id, vector) pairs, nearest first, ties by id.
pub fn brute_force(items: &[(VectorId, Hypervector)], query: &Hypervector, k: usize) -> Vec<Hit> {
    let mut all: Vec<Hit> = items
        .iter()
        .map(|(id, v)| Hit {
            id: *id,
            distance: v.hamming(query),
        })
        .collect();
    all.sort_by_key(Hit::key);
    all.truncate(k);
    all
}

#[cfg(feature = "standard")]
pub mod redis_server;

#[cfg(feature = "scale")]
pub mod qdrant_server;
