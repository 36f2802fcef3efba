//! The semantic source: the query's embedding against the project's semantic space.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Embedding similarity in the project's semantic space (the caller's embeddings or the
/// static model's).
pub(super) struct SemanticSource;

impl Source for SemanticSource {
    fn name(&self) -> Signal {
        Signal::Semantic
    }
    fn weight(&self, s: &RecallSettings) -> f64 {
        s.semantic_weight
    }
    fn gather(&self, _: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        let Some((space, q)) = &probe.plan.semantic else {
            return Ok(Vec::new());
        };
        Ok(space.reading().search(q, SOURCE_DEPTH)?)
    }
}
