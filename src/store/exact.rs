use rayon::prelude::*;

use super::{StoreResult, VectorTier, merge_hits};
use crate::base::{Hit, ProjectId, SearchRequest};

/// Exact top-k across several tiers: each tier scans its blocks (segments in parallel) with
/// the `hdv` kernel under the project filter; results are merged nearest first, one hit per
/// id (a hot copy and its durable original count once).
#[derive(Debug, Clone, Copy, Default)]
pub struct Exact;

impl Exact {
    /// Searches `tiers` for `project`.
    ///
    /// # Errors
    /// The first tier error (for example a query of the wrong dimension).
    pub fn search(
        tiers: &[&dyn VectorTier],
        project: &ProjectId,
        request: &SearchRequest<'_>,
    ) -> StoreResult<Vec<Hit>> {
        let lists = tiers
            .par_iter()
            .map(|t| t.search(project, request))
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(merge_hits(lists, request.k))
    }
}
