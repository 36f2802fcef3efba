//! The `Supersede` stage of recall (its doc below says what it does and why).

#[allow(clippy::wildcard_imports)]
use super::*;

/// Recall-time supersession ([`supersede`]): in the head of the ranking, a newer
/// statement (said later) of a different value about the same subject moves above the
/// older one, and another owner's value of what the question asks about goes after the
/// rest ([`supersede::owned_by_another`]). A time the question names selects the value
/// valid then: a statement made after the time hint's window supersedes nothing (the value
/// it revises, stated before, moves above it), one made before its end still does ("the
/// rent in March" is the rent last set before April).
pub(super) struct Supersede;

impl Stage for Supersede {
    fn on(&self, settings: &RecallSettings, _: &Plan<'_>) -> bool {
        settings.supersede
    }
    fn apply(&self, cx: &Context<'_>, plan: &Plan<'_>, run: &mut Run) -> Result<()> {
        // Even a hint no candidate falls inside names the time asked about.
        let horizon = plan.compiled.until.filter(|_| plan.compiled.hinted);
        let head = run.ranked.len().min(RERANK_WINDOW);
        let mut ranked: Vec<supersede::Candidate> = run.ranked[..head]
            .iter()
            .map(|r| candidate(&r.event, evidence(&r.fused)))
            .collect();
        let query = plan.query();
        let query = supersede::Query::new(query, &lexical::query_terms(query)).valid_until(horizon);
        // Another owner's value of what the question asks about goes after the rest of
        // the head ([`supersede::owned_by_another`]): "Ingeborg's bike is £90" answers nothing
        // about Radek's bike.
        let another: HashSet<u64> = ranked
            .iter()
            .filter(|c| supersede::owned_by_another(&query, c))
            .map(|c| c.id)
            .collect();
        if !another.is_empty() {
            ranked.sort_by_key(|c| another.contains(&c.id));
            run.ranked[..head].sort_by_key(|r| another.contains(&r.fused.id));
        }
        for antecedent in ranked
            .iter()
            .take(FOLLOWED)
            .map(|c| c.id)
            .collect::<Vec<_>>()
        {
            follow(cx, plan, run, &query, &mut ranked, antecedent, horizon)?;
        }
        let moves = supersede::reorder(&query, &mut ranked, cx.settings.supersede_ratio);
        if !moves.is_empty() {
            let order: HashMap<u64, usize> =
                ranked.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
            run.ranked[..ranked.len()].sort_by_key(|r| order[&r.fused.id]);
            run.supersedes.extend(moves);
        }
        Ok(())
    }
}

/// Answers at the head of the ranking whose conversation is read forward for statements
/// continuing them ([`follow`]): the first (the first three gave the same results on the
/// understanding corpus and the three development sets, at twice the reads), whether it
/// states a value or not (what it says can be replaced "instead": one more read of a few
/// turns per recall, LoCoMo's query time 2.55 → 2.68 s; `docs/EXPERIMENTS.md`).
const FOLLOWED: usize = 1;

/// Rank-fusion evidence of an item: its parts but the priors.
fn evidence(fused: &Fused) -> f64 {
    fused
        .breakdown
        .iter()
        .filter(|b| !b.signal.is_prior())
        .map(|b| b.score)
        .sum()
}

/// An event as supersession reads it.
fn candidate(event: &Event, evidence: f64) -> supersede::Candidate {
    supersede::Candidate::new(
        event.id.0,
        event.role,
        event.agent.as_deref(),
        &event.content,
        evidence,
    )
    .at(event.created_at)
    .speaker(event.speaker.as_deref())
}

/// Reads the [`supersede::FOLLOW_TURNS`] turns after `antecedent` in its conversation
/// (its thread, else its session, else its project) for statements that revise it one
/// after another ([`supersede::follow`]): "make that 5 kg" after "need 3 kg of flour"
/// names no flour, so the question about flour does not find it; it is the flour's new
/// value all the same. Each such statement the caller's filters let through joins the
/// head of the ranking (as continuing `antecedent`, with its evidence: a `continues` part
/// lent by it) or, already there, is read as continuing it; the reordering then moves it
/// above what it revises. A statement made after the time the question asks about is not
/// brought in (it was not valid then).
fn follow(
    cx: &Context<'_>,
    plan: &Plan<'_>,
    run: &mut Run,
    query: &supersede::Query,
    ranked: &mut Vec<supersede::Candidate>,
    antecedent: u64,
    horizon: Option<i64>,
) -> Result<()> {
    let Some(at) = ranked.iter().position(|c| c.id == antecedent) else {
        return Ok(());
    };
    let answers: HashSet<u64> = ranked.iter().map(|c| c.id).collect();
    // Only a short turn gives a value by reference: a long one states a subject of its own,
    // so the conversation has moved on there unless it is an answer already (reading every
    // long turn after an answer would cost as much as recall itself).
    let later: Vec<Event> = cx
        .ledger
        .following(cx.project, &run.ranked[at].event, supersede::FOLLOW_TURNS)?
        .into_iter()
        .take_while(|e| {
            answers.contains(&e.id.0) || e.content.chars().count() <= lexical::CONTEXT_CHARS
        })
        .filter(|e| run.suppresses(plan, e).is_none() && horizon.is_none_or(|h| e.created_at < h))
        .collect();
    let lent = ranked[at].evidence;
    let read = later.iter().map(|e| candidate(e, lent));
    let mut place = at;
    for (i, continuing) in supersede::follow(query, &ranked[at], read, |id| answers.contains(&id)) {
        let id = later[i].id.0;
        if let Some(j) = ranked.iter().position(|c| c.id == id) {
            // Already an answer: read as continuing, with its own evidence.
            let evidence = ranked[j].evidence;
            ranked[j] = continuing;
            ranked[j].evidence = evidence;
            place = place.max(j);
            continue;
        }
        let item = match run.ranked.iter().position(|r| r.fused.id == id) {
            // Ranked below the head: moved into it.
            Some(j) => run.ranked.remove(j),
            None => {
                run.suppressed.retain(|(e, _)| e.0 != id);
                // Its score is its one part (the placing stage shows it no lower than
                // what it is ordered above, by a `placed` part).
                Ranked {
                    fused: Fused {
                        id,
                        score: lent,
                        breakdown: vec![Part::continues(antecedent, lent)],
                    },
                    event: later[i].clone(),
                    associative: false,
                }
            }
        };
        place += 1;
        run.ranked.insert(place, item);
        ranked.insert(place, continuing);
    }
    Ok(())
}
