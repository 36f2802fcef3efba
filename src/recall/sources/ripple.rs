//! The associative ripple source: spreading activation over synapses from the best fused candidates.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Spreading activation over synapses from the seeds (thread neighbours, co-recalled
/// memories), one hop.
pub(super) struct RippleSource;

impl Source for RippleSource {
    fn name(&self) -> Signal {
        Signal::Ripple
    }
    fn evidence(&self) -> Evidence {
        Evidence::Associative
    }
    fn weight(&self, s: &RecallSettings) -> f64 {
        s.ripple_weight
    }
    fn gather(&self, cx: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        let mut linked: Vec<(u64, f64)> = cx
            .cognition
            .ripple(
                cx.project,
                &probe.seeds,
                // One hop: deeper hops gave the same results, at more queries.
                RippleParams {
                    max_depth: 1,
                    decay: false,
                    ..RippleParams::default()
                },
            )?
            .into_iter()
            .filter(|a| !probe.seeds.contains(&a.id))
            .map(|a| (a.id, a.activation))
            .collect();
        linked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(linked)
    }
}
