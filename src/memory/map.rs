//! `map`: an overview of one project's memory, for operators and for agents orienting
//! themselves (what is in here, what it is about, what is connected to what).

use std::collections::HashMap;

use super::Memory;
use crate::Result;
use crate::base::ProjectId;
use crate::index::lexical;
use crate::index::lexical::common;
use crate::ledger::EventId;
use crate::ledger::rows::Census;
use crate::sync::RecoverRw as _;

/// How much of each list [`Memory::map`] returns.
pub const DEFAULT_MAP_LIMIT: usize = 10;

/// Characters of an event's content shown in a map.
const PREVIEW_CHARS: usize = 80;

/// Words an episode's topic shows.
const TOPIC_WORDS: usize = 4;

/// Events of an episode read to name its topic.
const TOPIC_EVENTS: usize = 400;

/// One project's memory at a glance. Lists are truncated to the requested limit; the
/// totals beside them are exact.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct MemoryMap {
    /// The project.
    pub project: String,
    /// Raw events in the ledger.
    pub events: u64,
    /// Creation time (ms since the epoch) of the first and the last event.
    pub span: Option<(i64, i64)>,
    /// Events per role, most first.
    pub roles: Vec<(String, u64)>,
    /// Threads in total.
    pub thread_count: u64,
    /// The busiest threads.
    pub threads: Vec<ThreadSummary>,
    /// Memories per vector tier.
    pub tiers: TierCensus,
    /// Episodes in total.
    pub episode_count: u64,
    /// The latest episodes.
    pub episodes: Vec<EpisodeSummary>,
    /// Concepts in total.
    pub concept_count: u64,
    /// The best-supported concepts.
    pub concepts: Vec<ConceptSummary>,
    /// Synapses in total.
    pub synapse_count: u64,
    /// The most connected memories (sum of their synapse weights).
    pub hubs: Vec<Hub>,
    /// Beliefs per status.
    pub beliefs: Vec<(String, u64)>,
    /// Standing directives recall keeps apart.
    pub directives: usize,
    /// Procedures.
    pub procedures: u64,
    /// Prospective items still pending or deferred.
    pub prospective_open: u64,
}

/// A thread and its size.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ThreadSummary {
    /// Thread name.
    pub thread: String,
    /// Events in it.
    pub events: u64,
    /// Creation time of its first and last event (ms).
    pub span: (i64, i64),
}

/// Where a project's memories live.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct TierCensus {
    /// Copies in RAM.
    pub hot: usize,
    /// Durable in the warm tier.
    pub warm: usize,
    /// Durable in the cold tier (still searched).
    pub cold: usize,
}

/// An episode, named by its most distinctive words.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct EpisodeSummary {
    /// Episode id.
    pub id: u64,
    /// Agent.
    pub agent: String,
    /// `open`, `soft_sealed` or `sealed`.
    pub status: String,
    /// Events in it.
    pub events: u64,
    /// When its first and its last event happened (their event time, ms; an episode
    /// without events: when it was started and last active).
    pub span: (i64, i64),
    /// Its most distinctive words (highest summed BM25 IDF over its events).
    pub topic: Vec<String>,
}

/// A consolidated concept.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ConceptSummary {
    /// Concept id.
    pub id: u64,
    /// Its label.
    pub label: String,
    /// Supporting episodes.
    pub support: u64,
}

/// A memory many synapses lead to.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Hub {
    /// The event.
    pub event: EventId,
    /// Synapses touching it.
    pub degree: u64,
    /// The sum of their weights.
    pub strength: f64,
    /// The start of its content.
    pub preview: String,
}

impl Memory {
    /// An overview of `project`: sizes, time span, busiest threads, tiers, latest episodes
    /// with their topics, concepts, synapse hubs, beliefs by status, directives,
    /// procedures and open prospective items; each list at most `limit` long.
    ///
    /// # Errors
    /// [`LedgerError::UnknownProject`] naming the project when this memory holds nothing of
    /// it (and which projects it does hold); SQLite errors.
    pub fn map(&self, project: &ProjectId, limit: usize) -> Result<MemoryMap> {
        self.require_project(project)?;
        let events = self.ledger.count(project)?;
        let (hot, warm, cold) = self.tiers.census(project);
        let p = project.as_str();
        let mut map = self.ledger.reading(|rows| {
            Ok(MemoryMap {
                project: p.to_owned(),
                events,
                span: rows.event_span(p)?,
                roles: rows.role_counts(p)?,
                thread_count: rows.census(p, Census::Threads)?,
                threads: rows
                    .largest_threads(p, limit)?
                    .into_iter()
                    .map(|(thread, events, span)| ThreadSummary {
                        thread,
                        events,
                        span,
                    })
                    .collect(),
                tiers: TierCensus { hot, warm, cold },
                episode_count: rows.census(p, Census::Episodes)?,
                episodes: rows
                    .newest_episodes(p, limit)?
                    .into_iter()
                    .map(|(id, agent, status, span, events)| EpisodeSummary {
                        id,
                        agent,
                        status,
                        events,
                        span,
                        topic: Vec::new(),
                    })
                    .collect(),
                concept_count: rows.census(p, Census::Concepts)?,
                concepts: rows
                    .supported_concepts(p, limit)?
                    .into_iter()
                    .map(|(id, label, support)| ConceptSummary { id, label, support })
                    .collect(),
                synapse_count: rows.census(p, Census::Synapses)?,
                hubs: rows
                    .synapse_hubs(p, limit)?
                    .into_iter()
                    .map(|(id, degree, strength)| Hub {
                        event: EventId(id),
                        degree,
                        strength,
                        preview: String::new(),
                    })
                    .collect(),
                beliefs: rows.belief_status_counts(p)?,
                directives: 0,
                procedures: rows.census(p, Census::Procedures)?,
                prospective_open: rows.census(p, Census::OpenProspective)?,
            })
        })?;
        for hub in &mut map.hubs {
            if let Some(event) = self.ledger.get(project, hub.event)? {
                hub.preview = preview(&event.content);
            }
        }
        let text = self.project_text(project)?;
        map.directives = text.reading().directives.len();
        for episode in &mut map.episodes {
            let contents = self
                .ledger
                .reading(|rows| rows.episode_contents(p, episode.id, TOPIC_EVENTS))?;
            episode.topic = topic(&text.reading().postings, &contents);
        }
        Ok(map)
    }
}

/// The first [`PREVIEW_CHARS`] characters of `content`, on one line.
fn preview(content: &str) -> String {
    let line: String = content.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(PREVIEW_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// The [`TOPIC_WORDS`] words of `contents` with the highest IDF summed over their
/// occurrences: frequent in these events, rare in the project. Words in a quarter or more
/// of the project's events and words that are not content words (function words, numbers,
/// months, units) are left out.
fn topic(postings: &lexical::Postings, contents: &[String]) -> Vec<String> {
    let n = postings.documents();
    let mut score: HashMap<String, f64> = HashMap::new();
    for content in contents {
        for t in crate::text::tokens(content) {
            if !crate::text::is_content_word(&t) {
                continue;
            }
            let df = postings.df(&t);
            if df > 0 && !common(n, df) {
                *score.entry(t).or_default() += lexical::idf(n, df);
            }
        }
    }
    let mut ranked: Vec<(String, f64)> = score.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked
        .into_iter()
        .take(TOPIC_WORDS)
        .map(|(t, _)| t)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_are_one_bounded_line() {
        assert_eq!(preview("a\n b\tc"), "a b c");
        let long = "é".repeat(200);
        let p = preview(&long);
        assert_eq!(p.chars().count(), PREVIEW_CHARS + 1);
        assert!(p.ends_with('…'));
    }

    #[test]
    fn a_topic_is_what_is_frequent_here_and_rare_elsewhere() {
        let mut postings = lexical::Postings::default();
        let docs = [
            "the kiln fires at 1200 degrees",
            "the kiln shelf cracked",
            "the glaze ran on the kiln shelf",
            "the weather is nice",
            "the bus was late",
            "the cat sleeps",
            "the tea is hot",
            "the plan is set",
            "the door is open",
            "the road is long",
            "the sky is blue",
            "the phone rang",
            "the river froze",
            "the garden grew",
            "the train left",
            "the music stopped",
        ];
        for (i, d) in docs.iter().enumerate() {
            postings.add(i as u64 + 1, &crate::text::tokens(d));
        }
        let contents: Vec<String> = docs[..3].iter().map(|s| (*s).to_owned()).collect();
        let t = topic(&postings, &contents);
        assert_eq!(t[0], "kiln");
        assert_eq!(t[1], "shelf");
        assert!(!t.contains(&"the".to_owned()));
        assert!(!t.contains(&"1200".to_owned()));
    }
}
