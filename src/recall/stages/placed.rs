//! The `Placed` stage of recall (its doc below says what it does and why).

#[allow(clippy::wildcard_imports)]
use super::*;

/// Displayed scores never rise down a list: where the ordering put an item above one of
/// a higher fused score (a newer value above the one it revises, a governed demotion, a
/// directive's slot), the item is shown with the score of the one below it, the
/// difference a `placed` part of its breakdown (a prior: no evidence), so its parts still
/// add up to what is shown. The order itself is not touched.
pub(super) struct Placed;

impl Stage for Placed {
    fn apply(&self, _: &Context<'_>, _: &Plan<'_>, run: &mut Run) -> Result<()> {
        let mut floor = f64::NEG_INFINITY;
        for r in run.ranked.iter_mut().rev() {
            if r.fused.score < floor {
                r.fused
                    .breakdown
                    .push(Part::prior(Signal::Placed, floor - r.fused.score));
                r.fused.score = floor;
            }
            floor = r.fused.score;
        }
        Ok(())
    }
}
