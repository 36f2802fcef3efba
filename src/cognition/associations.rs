//! Candidate associations ("subtle thoughts") between episodes and concepts, from
//! prototype similarity and ripple over synapses: candidates, never facts.

use super::synapses::RippleParams;
use super::{Cognition, EpisodeId};
use crate::base::ProjectId;
use crate::ledger::{EventId, LedgerResult};

/// A candidate association ("subtle thought"): never a fact.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Association {
    /// Id.
    pub id: u64,
    /// The episode it starts from.
    pub episode: EpisodeId,
    /// Suggestion text built from the linked memories.
    pub suggestion: String,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// Source ids (events, episodes, concepts) as JSON.
    pub sources: String,
}

impl Cognition {
    /// For up to `budget` recent sealed episodes without associations: the nearest concepts
    /// (other than the episode's own) and a ripple from its events over synapses become
    /// candidate associations, stored and returned. Candidates, never facts.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn generate_associations(
        &self,
        project: &ProjectId,
        budget: usize,
    ) -> LedgerResult<Vec<Association>> {
        let episodes = self
            .ledger
            .reading(|rows| rows.unassociated_episodes(project.as_str(), budget))?;
        let concepts = self.concepts(project)?;
        let mut out = Vec::new();
        for id in episodes {
            let ep = self.episode(project, EpisodeId(id))?;
            let topic = ep.topic.clone().expect("sealed episodes with a topic");
            let own: Vec<_> = concepts
                .iter()
                .filter(|c| c.support.contains(&ep.id))
                .map(|c| c.id)
                .collect();
            let related: Vec<_> = self
                .nearby_concepts(project, &topic, 3)?
                .into_iter()
                .filter(|(c, s)| !own.contains(c) && *s >= self.config.concept_similarity / 2.0)
                .collect();
            let seeds: Vec<u64> = ep.events.iter().map(|e| e.0).collect();
            let rippled: Vec<_> = self
                .ripple(
                    project,
                    &seeds,
                    RippleParams {
                        max_depth: 2,
                        max_nodes: 32,
                        ..RippleParams::default()
                    },
                )?
                .into_iter()
                .filter(|a| !seeds.contains(&a.id))
                .take(3)
                .collect();
            let mut parts = Vec::new();
            let mut sources = serde_json::Map::new();
            let mut confidence: f64 = 0.0;
            for (cid, sim) in &related {
                if let Some(c) = concepts.iter().find(|c| c.id == *cid) {
                    parts.push(format!(
                        "it resembles earlier episodes about \"{}\" (similarity {sim:.2})",
                        c.label
                    ));
                    confidence = confidence.max(*sim);
                }
            }
            for a in &rippled {
                if let Some(e) = self.ledger.get(project, EventId(a.id))? {
                    let snippet: String = e.content.chars().take(80).collect();
                    parts.push(format!(
                        "it is linked to \"{snippet}\" (activation {:.2})",
                        a.activation
                    ));
                    confidence = confidence.max(a.activation);
                }
            }
            if parts.is_empty() {
                continue;
            }
            sources.insert(
                "concepts".into(),
                serde_json::json!(related.iter().map(|c| c.0.0).collect::<Vec<_>>()),
            );
            sources.insert(
                "events".into(),
                serde_json::json!(rippled.iter().map(|a| a.id).collect::<Vec<_>>()),
            );
            let suggestion = format!("Episode {}: {}.", id, parts.join("; "));
            let sources = serde_json::Value::Object(sources).to_string();
            let confidence = confidence.clamp(0.0, 1.0);
            let now = self.ledger.now_ms();
            let aid = self.ledger.writing(|rows| {
                rows.add_association(
                    project.as_str(),
                    id,
                    (&suggestion, confidence),
                    &sources,
                    now,
                )
            })?;
            out.push(Association {
                id: aid,
                episode: ep.id,
                suggestion,
                confidence,
                sources,
            });
        }
        Ok(out)
    }

    /// Stored candidate associations of `project`, newest first.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn associations(
        &self,
        project: &ProjectId,
        limit: usize,
    ) -> LedgerResult<Vec<Association>> {
        let rows = self
            .ledger
            .reading(|rows| rows.candidate_associations(project.as_str(), limit))?;
        Ok(rows
            .into_iter()
            .map(|(id, ep, suggestion, confidence, sources)| Association {
                id,
                episode: EpisodeId(ep),
                suggestion,
                confidence,
                sources,
            })
            .collect())
    }
}
