//! The `Speakers` stage of recall (its doc below says what it does and why).

#[allow(clippy::wildcard_imports)]
use super::*;

/// A question about a person the project knows as a speaker ("What does Calvin do to
/// relax?") is answered most often by that person's own words: in a conversation, what
/// someone does, owns or plans is said by them, and what others say to them (a turn that
/// opens "Thanks, Calvin!") asks or answers back. Every turn said by a speaker the query
/// names gets `speaker_weight` as a direct component, the others 0 (only when the query
/// names one: a project of `user` and `assistant` turns has no names to match). Measured
/// at 0.3 (`docs/EXPERIMENTS.md`).
pub(super) struct Speakers;

impl Stage for Speakers {
    fn on(&self, settings: &RecallSettings, _: &Plan<'_>) -> bool {
        settings.speaker_weight > 0.0
    }
    fn apply(&self, cx: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        let named: Vec<String> = {
            let text = cx.text.reading();
            lexical::query_terms(plan.query())
                .into_iter()
                .filter(|t| text.speakers.contains(t))
                .collect()
        };
        if named.is_empty() {
            return Ok(());
        }
        component(run, Signal::Speaker, cx.settings.speaker_weight, |e| {
            e.speaker
                .as_deref()
                .is_some_and(|name| crate::text::tokens(name).iter().any(|t| named.contains(t)))
        });
        Ok(())
    }
}
