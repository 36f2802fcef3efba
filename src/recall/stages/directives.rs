//! The `Directives` stage of recall (its doc below says what it does and why).

#[allow(clippy::wildcard_imports)]
use super::*;

/// Directive slots: the standing directives closest to the query (clearly above chance:
/// 3 standard deviations of the similarity of unrelated vectors, 1/√D) that fusion left
/// out of the top k take places right after the first [`DIRECTIVES_AFTER`] (the last
/// places when fewer remain), at most `directive_slots` and a third of k.
/// Filters apply to them too; a gap returns none; a directive whose text is already among
/// the top k is that item, and an item whose text a slot takes gives way to it.
pub(super) struct Directives;

impl Directives {
    /// Slots of a `k`-result recall.
    fn slots(settings: &RecallSettings, k: usize) -> usize {
        settings.directive_slots.min(k / 3)
    }
}

impl Stage for Directives {
    fn on(&self, settings: &RecallSettings, plan: &Plan<'_>) -> bool {
        Self::slots(settings, plan.rq.k) > 0 && plan.vector.is_some()
    }
    fn apply(&self, cx: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        let (Some(q), true) = (&plan.vector, run.answered) else {
            return Ok(());
        };
        let k = plan.rq.k;
        let ids = cx.text.reading().directives.clone();
        let mut directives = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(v) = cx.tiers.get(cx.project, VectorId(id))? {
                directives.push((id, q.similarity(&v)));
            }
        }
        directives.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let chance = 1.0 / (cx.bits as f64).sqrt();
        directives.retain(|&(_, sim)| sim >= 3.0 * chance);
        directives.truncate(Self::slots(&cx.settings, k));
        let mut slots: Vec<Ranked> = Vec::new();
        for (rank, &(id, sim)) in directives.iter().enumerate() {
            if run.ranked.iter().take(k).any(|r| r.fused.id == id) {
                continue;
            }
            let Some(event) = cx.ledger.get(cx.project, EventId(id))? else {
                continue;
            };
            if let Some(reason) = run.suppresses(plan, &event) {
                run.suppressed.push((event.id, reason));
                continue;
            }
            if let Some(&first) = run.folded.get(&crate::text::fold(&event.content))
                && run.ranked.iter().take(k).any(|r| r.fused.id == first)
            {
                run.duplicates.entry(first).or_default().push(event.id);
                continue;
            }
            run.similarity.insert(id, sim);
            slots.push(Ranked {
                fused: Fused {
                    id,
                    score: 0.0,
                    breakdown: vec![Part::ranked(Signal::Directive, rank + 1, 0.0)],
                },
                event,
                associative: false,
            });
        }
        // An item whose text a slot now holds gives way to it (`folded` names the item
        // that holds each text).
        let given_way: HashSet<u64> = slots
            .iter()
            .filter_map(|s| {
                run.folded
                    .get(&crate::text::fold(&s.event.content))
                    .copied()
            })
            .collect();
        run.ranked.retain(|r| {
            !slots.iter().any(|s| s.fused.id == r.fused.id) && !given_way.contains(&r.fused.id)
        });
        run.ranked.truncate(k.saturating_sub(slots.len()));
        let tail = run.ranked.split_off(DIRECTIVES_AFTER.min(run.ranked.len()));
        run.ranked.extend(slots);
        run.ranked.extend(tail);
        Ok(())
    }
}
