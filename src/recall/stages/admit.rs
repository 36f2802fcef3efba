//! The `Admit` stage of recall (its doc below says what it does and why).

#[allow(clippy::wildcard_imports)]
use super::*;

/// Admission: the filters, the knowledge gap and the relevance floor.
///
/// A knowledge gap: nothing answers the query ([`Plan::answers`]). No candidate the
/// filters let through matches a word that tells memories apart in its own text (its
/// speaker's name or a name the question gives alone does not answer), and none is more
/// similar than the best of the project's memories would be by chance (`chance_best`:
/// the largest of N unrelated ones), which for any sizeable project lies well above the
/// floor's 2 σ; or none that
/// does states a value at all where the question asks for one ("how much", "when is"),
/// or is about whom or what the question names ([`Plan::about_named`]: it holds the name,
/// was said by them, or leaves its subject to the turns just before it that name them).
/// A gap returns nothing; anything returned answers (floor and gaps agree).
///
/// The relevance floor: a candidate with no evidence of its own (a lexical match, or a
/// similarity above the spread of unrelated memories of this project) and no link to a
/// memory that has some (a synapse, or the turn next to a lexical match in its session)
/// is refused; one with a link and no evidence is a filler.
pub(super) struct Admit;

impl Stage for Admit {
    fn apply(&self, cx: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        run.answered = false;
        for a in &run.candidates {
            if run.suppresses(plan, &a.event).is_some()
                || !plan.answers(&a.c, &a.event, run.similarity.get(&a.c.fused.id).copied())
            {
                continue;
            }
            if plan.about_named(&a.event, || {
                cx.ledger.preceding(cx.project, &a.event, SUBJECT_TURNS)
            })? {
                run.answered = true;
                break;
            }
        }
        let linked = |c: &Candidate| {
            c.fused.breakdown.iter().any(|b| {
                b.signal == Signal::Ripple || b.lender().is_some_and(|l| run.lexical.contains(&l))
            })
        };
        let mut admitted = Vec::with_capacity(run.candidates.len());
        let mut suppressed = Vec::new();
        for mut a in std::mem::take(&mut run.candidates) {
            let reason = if let Some(reason) = run.suppresses(plan, &a.event) {
                Some(reason)
            } else if !run.answered {
                Some(Suppression::new(
                    SuppressReason::KnowledgeGap,
                    "knowledge gap: no candidate matches a distinctive query word or is more similar than the project's unrelated memories reach by chance",
                ))
            } else {
                let similarity = run.similarity.get(&a.c.fused.id).copied();
                a.filler = !plan.supported(&a.c, similarity);
                (a.filler && !linked(&a.c)).then(|| {
                    Suppression::new(SuppressReason::BelowFloor, format!(
                        "below the relevance floor (no lexical match; similarity {:.3} under {:.3}, {})",
                        similarity.unwrap_or(0.0),
                        plan.vector_floors.item,
                        plan.baseline.map_or(
                            "the prior of a project too small to sample".to_owned(),
                            |(mean, sd)| format!(
                                "the project's unrelated baseline {mean:.3} + {FLOOR_SIGMAS} x {sd:.3}"
                            )
                        )
                    ))
                })
            };
            match reason {
                Some(reason) => suppressed.push((a.event.id, reason)),
                None => admitted.push(a),
            }
        }
        run.candidates = admitted;
        run.suppressed.extend(suppressed);
        Ok(())
    }
}
