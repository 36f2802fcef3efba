//! The episodic source: events of the sealed episodes (and the concept) nearest the query.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Events of the episodes (and concept) nearest the query.
pub(super) struct EpisodicSource;

impl Source for EpisodicSource {
    fn name(&self) -> Signal {
        Signal::Episode
    }
    fn weight(&self, s: &RecallSettings) -> f64 {
        s.episode_weight
    }
    /// Events of the sealed episodes whose topic is nearest the query, and of the episodes
    /// supporting the nearest concept (each only above [`EPISODE_SIMILARITY`]), best first
    /// by their own similarity to the query.
    fn gather(&self, cx: &Context<'_>, probe: &Probe<'_>) -> Result<Vec<(u64, f64)>> {
        let Some(query) = &probe.plan.vector else {
            return Ok(Vec::new());
        };
        let mut episodes: Vec<EpisodeId> = cx
            .cognition
            .similar_episodes(cx.project, query, EPISODES)?
            .into_iter()
            .filter(|(_, s)| *s >= EPISODE_SIMILARITY)
            .map(|(id, _)| id)
            .collect();
        let best_concept = cx
            .cognition
            .concepts(cx.project)?
            .into_iter()
            .map(|c| (query.similarity(&c.prototype), c))
            .filter(|(s, _)| *s >= EPISODE_SIMILARITY)
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.id.0.cmp(&a.1.id.0)));
        if let Some((_, concept)) = best_concept {
            episodes.extend(concept.support.iter().take(EPISODES));
        }
        episodes.sort_unstable();
        episodes.dedup();
        let mut scored = Vec::new();
        for id in episodes {
            for event in cx.cognition.episode(cx.project, id)?.events {
                if let Some(v) = cx.tiers.get(cx.project, VectorId(event.0))? {
                    scored.push((query.hamming(&v), event.0));
                }
            }
        }
        scored.sort_unstable();
        scored.dedup_by_key(|s| s.1);
        Ok(scored
            .into_iter()
            .take(EPISODE_EVENTS)
            .map(|(h, id)| (id, cx.similarity(h)))
            .collect())
    }
}
