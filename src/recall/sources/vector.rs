//! The HDC vector source: the query's IDF-weighted hypervector against every tier.

#[allow(clippy::wildcard_imports)]
use super::*;

/// HDC similarity of the query vector, searched in the vector tiers.
pub(super) struct VectorSource;

impl Source for VectorSource {
    fn name(&self) -> Signal {
        Signal::Vector
    }
    fn weight(&self, s: &RecallSettings) -> f64 {
        s.vector_weight
    }
    fn gather(&self, cx: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        let Some(q) = &probe.plan.vector else {
            return Ok(Vec::new());
        };
        let hits = cx
            .tiers
            .search(cx.project, &SearchRequest::new(q.view(), SOURCE_DEPTH))?;
        Ok(hits
            .iter()
            .map(|h| (h.id.0, cx.similarity(h.distance)))
            .collect())
    }
}
