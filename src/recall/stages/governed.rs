//! The `Governed` stage of recall (its doc below says what it does and why).

#[allow(clippy::wildcard_imports)]
use super::*;

/// Governed supersession: an event that is evidence only of superseded beliefs (a fact
/// the user corrected) goes after the other results of the head, and says which belief
/// version it backs.
pub(super) struct Governed;

impl Stage for Governed {
    fn apply(&self, cx: &Context<'_>, _: &Plan<'_>, run: &mut Run) -> Result<()> {
        if !cx
            .ledger
            .has_beliefs_with_status(cx.project, BeliefStatus::Superseded)?
        {
            return Ok(());
        }
        let head = run.ranked.len().min(RERANK_WINDOW);
        for r in &run.ranked[..head] {
            let cited = cx.ledger.beliefs_citing(cx.project, r.event.id)?;
            let current = cited.iter().any(|b| b.3 != BeliefStatus::Superseded);
            if let Some((_, key, version, _)) = cited.last()
                && !current
            {
                run.outdated.insert(r.fused.id, (key.clone(), *version));
            }
        }
        if !run.outdated.is_empty() {
            let outdated = &run.outdated;
            run.ranked[..head].sort_by_key(|r| outdated.contains_key(&r.fused.id));
        }
        Ok(())
    }
}
