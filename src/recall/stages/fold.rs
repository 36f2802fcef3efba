//! The `Fold` stage of recall (its doc below says what it does and why).

#[allow(clippy::wildcard_imports)]
use super::*;

/// One slot per text: texts equal once folded (Unicode form, case, whitespace) are one
/// item, the best ranked of them (candidates arrive best first); the others are listed as
/// its duplicates.
pub(super) struct Fold;

impl Stage for Fold {
    fn apply(&self, _: &Context<'_>, _: &Plan<'_>, run: &mut Run) -> Result<()> {
        let mut kept = Vec::with_capacity(run.candidates.len());
        for a in std::mem::take(&mut run.candidates) {
            match run.folded.entry(crate::text::fold(&a.event.content)) {
                Entry::Occupied(first) => {
                    run.duplicates
                        .entry(*first.get())
                        .or_default()
                        .push(a.event.id);
                }
                Entry::Vacant(slot) => {
                    slot.insert(a.event.id.0);
                    kept.push(a);
                }
            }
        }
        run.candidates = kept;
        Ok(())
    }
}
