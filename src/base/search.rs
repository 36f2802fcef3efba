//! What a vector search asks and answers, shared by the tiers (`store`) and the graph
//! index (`index`).

use hdv::HvRef;

use super::VectorId;

/// One search result of a tier: a vector id and its Hamming distance to the query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hit {
    /// The vector.
    pub id: VectorId,
    /// Hamming distance to the query.
    pub distance: u32,
}

impl Hit {
    /// Orders hits nearest first, ties by id (deterministic merging across tiers).
    pub fn key(&self) -> (u32, VectorId) {
        (self.distance, self.id)
    }
}

/// A search request: the query, `k`, and optional filters.
#[derive(Clone, Copy)]
pub struct SearchRequest<'a> {
    /// The query vector.
    pub query: HvRef<'a>,
    /// How many results at most.
    pub k: usize,
    /// Only vectors at distance `<=` this.
    pub max_distance: Option<u32>,
    /// Only ids for which this returns true.
    pub filter: Option<&'a (dyn Fn(VectorId) -> bool + Sync)>,
}

impl<'a> SearchRequest<'a> {
    /// The `k` nearest to `query`, no filters.
    pub fn new(query: HvRef<'a>, k: usize) -> Self {
        Self {
            query,
            k,
            max_distance: None,
            filter: None,
        }
    }

    /// Whether `id` passes the id filter.
    pub fn accepts(&self, id: VectorId) -> bool {
        self.filter.is_none_or(|f| f(id))
    }
}

impl std::fmt::Debug for SearchRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchRequest")
            .field("k", &self.k)
            .field("max_distance", &self.max_distance)
            .field("filtered", &self.filter.is_some())
            .finish()
    }
}
