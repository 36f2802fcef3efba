//! `map`: an overview of one project's memory, for operators and for agents orienting
//! themselves (what is in here, what it is about, what is connected to what).

use std::collections::HashMap;

use rusqlite::params;

use super::Memory;
use crate::Result;
use crate::base::ProjectId;
use crate::index::lexical;
use crate::index::lexical::common;
use crate::ledger::{EventId, LedgerError};
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
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let p = project.as_str();
        let ledger = &self.ledger;
        let sql = |e| ledger.sql(e);
        let mut map = ledger.read(|c| {
            let count = |query: &str| -> Result<u64, LedgerError> {
                c.query_row(query, [p], |r| r.get::<_, i64>(0))
                    .map(|n| n as u64)
                    .map_err(sql)
            };
            let span = c
                .query_row(
                    "SELECT MIN(created_at), MAX(created_at) FROM events WHERE project = ?1",
                    [p],
                    |r| Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<i64>>(1)?)),
                )
                .map_err(sql)?;
            let pairs = |query: &str| -> Result<Vec<(String, u64)>, LedgerError> {
                let mut s = c.prepare(query).map_err(sql)?;
                s.query_map([p], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))
                    .and_then(Iterator::collect)
                    .map_err(sql)
            };
            let mut s = c
                .prepare(
                    "SELECT thread, COUNT(*), MIN(created_at), MAX(created_at) FROM events
                     WHERE project = ?1 AND thread IS NOT NULL
                     GROUP BY thread ORDER BY COUNT(*) DESC, thread LIMIT ?2",
                )
                .map_err(sql)?;
            let threads = s
                .query_map(params![p, limit], |r| {
                    Ok(ThreadSummary {
                        thread: r.get(0)?,
                        events: r.get::<_, i64>(1)? as u64,
                        span: (r.get(2)?, r.get(3)?),
                    })
                })
                .and_then(Iterator::collect)
                .map_err(sql)?;
            let mut s = c
                .prepare(
                    "SELECT e.id, e.agent, e.status,
                            COALESCE((SELECT MIN(v.created_at) FROM episode_events x JOIN events v ON v.id = x.event_id WHERE x.episode_id = e.id), e.started_at),
                            COALESCE((SELECT MAX(v.created_at) FROM episode_events x JOIN events v ON v.id = x.event_id WHERE x.episode_id = e.id), e.last_event_at),
                            (SELECT COUNT(*) FROM episode_events x WHERE x.episode_id = e.id)
                     FROM episodes e WHERE e.project = ?1 ORDER BY e.id DESC LIMIT ?2",
                )
                .map_err(sql)?;
            let episodes = s
                .query_map(params![p, limit], |r| {
                    Ok(EpisodeSummary {
                        id: r.get::<_, i64>(0)? as u64,
                        agent: r.get(1)?,
                        status: r.get(2)?,
                        span: (r.get(3)?, r.get(4)?),
                        events: r.get::<_, i64>(5)? as u64,
                        topic: Vec::new(),
                    })
                })
                .and_then(Iterator::collect)
                .map_err(sql)?;
            let mut s = c
                .prepare(
                    "SELECT id, label, support FROM concepts WHERE project = ?1
                     ORDER BY support DESC, id LIMIT ?2",
                )
                .map_err(sql)?;
            let concepts = s
                .query_map(params![p, limit], |r| {
                    Ok(ConceptSummary {
                        id: r.get::<_, i64>(0)? as u64,
                        label: r.get(1)?,
                        support: r.get::<_, i64>(2)? as u64,
                    })
                })
                .and_then(Iterator::collect)
                .map_err(sql)?;
            let mut s = c
                .prepare(
                    "SELECT id, COUNT(*), SUM(weight) FROM (
                         SELECT a AS id, weight FROM synapses WHERE project = ?1
                         UNION ALL SELECT b, weight FROM synapses WHERE project = ?1)
                     GROUP BY id ORDER BY SUM(weight) DESC, id LIMIT ?2",
                )
                .map_err(sql)?;
            let hubs = s
                .query_map(params![p, limit], |r| {
                    Ok(Hub {
                        event: EventId(r.get::<_, i64>(0)? as u64),
                        degree: r.get::<_, i64>(1)? as u64,
                        strength: r.get(2)?,
                        preview: String::new(),
                    })
                })
                .and_then(Iterator::collect)
                .map_err(sql)?;
            Ok(MemoryMap {
                project: p.to_owned(),
                events,
                span: span.0.zip(span.1),
                roles: pairs(
                    "SELECT role, COUNT(*) FROM events WHERE project = ?1
                     GROUP BY role ORDER BY COUNT(*) DESC, role",
                )?,
                thread_count: count(
                    "SELECT COUNT(DISTINCT thread) FROM events WHERE project = ?1",
                )?,
                threads,
                tiers: TierCensus { hot, warm, cold },
                episode_count: count("SELECT COUNT(*) FROM episodes WHERE project = ?1")?,
                episodes,
                concept_count: count("SELECT COUNT(*) FROM concepts WHERE project = ?1")?,
                concepts,
                synapse_count: count("SELECT COUNT(*) FROM synapses WHERE project = ?1")?,
                hubs,
                beliefs: pairs(
                    "SELECT status, COUNT(*) FROM beliefs WHERE project = ?1
                     GROUP BY status ORDER BY COUNT(*) DESC, status",
                )?,
                directives: 0,
                procedures: count("SELECT COUNT(*) FROM procedures WHERE project = ?1")?,
                prospective_open: count(
                    "SELECT COUNT(*) FROM prospective
                     WHERE project = ?1 AND status IN ('pending', 'deferred')",
                )?,
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
            let contents: Vec<String> = ledger.read(|c| {
                let mut s = c
                    .prepare(
                        "SELECT e.content FROM episode_events x JOIN events e ON e.id = x.event_id
                         WHERE x.episode_id = ?1 AND x.project = ?2
                         ORDER BY x.position LIMIT ?3",
                    )
                    .map_err(sql)?;
                s.query_map(params![episode.id as i64, p, TOPIC_EVENTS as i64], |r| {
                    r.get(0)
                })
                .and_then(Iterator::collect)
                .map_err(sql)
            })?;
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
