//! The `Priors` stage of recall (its doc below says what it does and why).

#[allow(clippy::wildcard_imports)]
use super::*;

/// Priors: what a user said ranks above what was said to them (`user_bonus`, bounded like
/// every prior), and a time hint lifts what happened in its window (`hint_weight`, a
/// direct component every candidate gets, 0 outside, so the order's dominance compares
/// it).
pub(super) struct Priors;

impl Stage for Priors {
    fn apply(&self, cx: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        let hinted = plan.compiled.hinted && !run.hint_ignored;
        for a in &mut run.candidates {
            if a.event.role == Role::User {
                fusion::add_prior(&mut a.c, Signal::User, cx.settings.user_bonus);
            }
            if hinted {
                let inside = if plan.in_hint(&a.event) {
                    cx.settings.hint_weight
                } else {
                    0.0
                };
                fusion::add_component(&mut a.c, Signal::Hint, inside);
            }
        }
        Ok(())
    }
}
