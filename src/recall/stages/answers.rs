//! The `Answers` stage of recall (its doc below says what it does and why).

#[allow(clippy::wildcard_imports)]
use super::*;

/// The answer's kind: a question that asks for a kind of value ("when", "how long", "how
/// much ... cost"; [`values::Wanted`]) is answered by a turn that states one, so a
/// candidate stating a value of that kind gets `answer_weight` as a direct component
/// (0 for the others, so every candidate of the recall is compared on it). At the
/// default 0.25, under the order's dominance margin, it settles near ties and never
/// overturns what every source agrees on. It gained on all three development sets
/// (`docs/EXPERIMENTS.md`, twenty-fourth session).
pub(super) struct Answers;

impl Stage for Answers {
    fn on(&self, settings: &RecallSettings, _: &Plan<'_>) -> bool {
        settings.answer_weight > 0.0
    }
    fn apply(&self, cx: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        if plan.wanted.is_empty() {
            return Ok(());
        }
        component(run, Signal::Answer, cx.settings.answer_weight, |e| {
            plan.wanted.answered_by(&e.content)
        });
        Ok(())
    }
}
