//! The `Tells` stage of recall (its doc below says what it does and why).

#[allow(clippy::wildcard_imports)]
use super::*;

/// A turn that only asks tells nothing of what it names: "Wow! How long have you been
/// playing?" ([`statements::asks_only`]: a sentence of it asks, every sentence of
/// twelve words or more asks, no word of it is the speaker's own) matches a question
/// about that subject word for word, but the turn after it answers. Every other candidate
/// gets `tells_weight` as a direct component, an asking turn 0. Measured at 0.15 and 0.2
/// (`docs/EXPERIMENTS.md`, twenty-fourth session).
pub(super) struct Tells;

impl Stage for Tells {
    fn on(&self, settings: &RecallSettings, _: &Plan<'_>) -> bool {
        settings.tells_weight > 0.0
    }
    fn apply(&self, cx: &Context<'_>, _: &Plan<'_>, run: &mut Run) -> Result<()> {
        component(run, Signal::Tells, cx.settings.tells_weight, |e| {
            !statements::asks_only(&e.content)
        });
        Ok(())
    }
}
