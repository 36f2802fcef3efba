//! The `SoftFilters` stage of recall (its doc below says what it does and why).

#[allow(clippy::wildcard_imports)]
use super::*;

/// Soft filters: a time hint is soft (it lifts what happened in its window; when no
/// candidate did, it is ignored and reported). A quoted phrase is a filter while some
/// candidate holds it; one that none holds (quoted from memory, in other words) would
/// empty the answer: it falls back to the lift its words give through the phrase source,
/// and is reported.
pub(super) struct SoftFilters;

impl Stage for SoftFilters {
    fn apply(&self, _: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        let compiled = plan.compiled;
        run.hint_ignored =
            compiled.hinted && !run.candidates.iter().any(|a| plan.in_hint(&a.event));
        if !compiled.phrases.is_empty() {
            let contents: Vec<String> = run
                .candidates
                .iter()
                .map(|a| crate::recall::query::normalize(&a.event.content))
                .collect();
            run.phrases_ignored = compiled
                .phrases
                .iter()
                .filter(|p| !contents.iter().any(|c| c.contains(p.as_str())))
                .cloned()
                .collect();
        }
        Ok(())
    }
}
