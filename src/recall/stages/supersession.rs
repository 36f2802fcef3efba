//! The `Supersede` stage of recall (its doc below says what it does and why).

#[allow(clippy::wildcard_imports)]
use super::*;

/// Recall-time supersession ([`supersede`]): in the head of the ranking, a newer
/// statement (said later) of a different value about the same subject moves above the
/// older one. A time the question names selects the value valid then: a statement made
/// after the time hint's window supersedes nothing (the value it revises, stated before,
/// moves above it), one made before its end still does ("the rent in March" is the rent
/// last set before April).
pub(super) struct Supersede;

impl Stage for Supersede {
    fn on(&self, settings: &RecallSettings, _: &Plan<'_>) -> bool {
        settings.supersede
    }
    fn apply(&self, cx: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        // Even a hint no candidate falls inside names the time asked about.
        let horizon = plan.compiled.until.filter(|_| plan.compiled.hinted);
        let head = run.ranked.len().min(RERANK_WINDOW);
        let mut ranked: Vec<supersede::Candidate> = run.ranked[..head]
            .iter()
            .map(|r| {
                let evidence = r
                    .fused
                    .breakdown
                    .iter()
                    .filter(|b| !b.signal.is_prior())
                    .map(|b| b.score)
                    .sum();
                supersede::Candidate::new(
                    r.fused.id,
                    r.event.role,
                    r.event.agent.as_deref(),
                    &r.event.content,
                    evidence,
                )
                .at(r.event.created_at)
                .speaker(r.event.speaker.as_deref())
            })
            .collect();
        let query = plan.query();
        let moves = supersede::reorder(
            &supersede::Query::new(query, &lexical::query_terms(query)).valid_until(horizon),
            &mut ranked,
            cx.settings.supersede_ratio,
        );
        if !moves.is_empty() {
            let order: HashMap<u64, usize> =
                ranked.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
            run.ranked[..head].sort_by_key(|r| order[&r.fused.id]);
            run.supersedes.extend(moves);
        }
        Ok(())
    }
}
