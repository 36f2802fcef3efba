//! The `Order` stage of recall (its doc below says what it does and why).

#[allow(clippy::wildcard_imports)]
use super::*;

/// The order ([`fusion::order`]: monotone in every source), items with evidence of their
/// own first, then the fillers (they fill the places the others leave).
pub(super) struct Order;

impl Stage for Order {
    fn apply(&self, _: &Context<'_>, _: &Plan<'_>, run: &mut Run) -> Result<()> {
        let (fillers, kept): (Vec<Admitted>, Vec<Admitted>) = std::mem::take(&mut run.candidates)
            .into_iter()
            .partition(|a| a.filler);
        for (group, associative) in [(kept, false), (fillers, true)] {
            let mut events: HashMap<u64, Event> = group
                .iter()
                .map(|a| (a.c.fused.id, a.event.clone()))
                .collect();
            let ordered = fusion::order(group.into_iter().map(|a| a.c).collect());
            run.ranked.extend(ordered.into_iter().map(|c| Ranked {
                event: events.remove(&c.fused.id).expect("fetched"),
                fused: c.fused,
                associative,
            }));
        }
        Ok(())
    }
}
