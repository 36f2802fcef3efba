//! Every operation's result as text for a person at a terminal (the CLI without
//! `--json`): one function over [`Response`], so the command line renders what the API
//! returned and never builds a result of its own.

use serde_json::Value;

use super::Response;
use crate::MemoryMap;
use crate::clock::format_utc;

/// `response` as lines of text.
pub fn render(response: &Response) -> String {
    let lines = |items: Vec<String>| items.join("\n");
    match response {
        Response::Observe(o) => format!("observed event {}", o.event_id),
        Response::ObserveBatch(o) => format!("observed events {:?}", o.event_ids),
        Response::RecordEvent(e) => format!("recorded event {}", e.id.0),
        Response::Recall(result) => {
            let mut out = Vec::new();
            for (i, h) in result.items.iter().enumerate() {
                let sources: Vec<String> = h
                    .fused
                    .breakdown
                    .iter()
                    .map(|b| format!("{}#{}", b.signal, b.number()))
                    .collect();
                out.push(format!(
                    "{:>2}. {:.4} #{} [{}] ({}){} {}",
                    i + 1,
                    h.fused.score,
                    h.event.id,
                    h.event.thread.as_deref().unwrap_or("-"),
                    sources.join(" "),
                    h.supersedes
                        .map(|old| format!(" newer than #{old}"))
                        .unwrap_or_default(),
                    h.event.content
                ));
                if let Some(c) = &h.context {
                    for e in c.before.iter().chain(&c.after) {
                        out.push(format!("      #{} {}: {}", e.id, e.role, e.content));
                    }
                }
            }
            for (id, why) in &result.suppressed {
                out.push(format!("    suppressed #{id}: {why}"));
            }
            if result.time_hint_ignored {
                out.push("    time hint ignored: no candidate happened in its window".to_owned());
            }
            if let Some(n) = result.unembedded.filter(|&n| n > 0) {
                out.push(format!(
                    "    {n} of these not yet embedded by the sentence model (queued)"
                ));
            }
            lines(out)
        }
        Response::Pack(pack) => format!(
            "pack: {} of {} tokens, {}, {} suppressed\n{}",
            pack.used,
            pack.budget,
            counted(pack.items.len(), "item"),
            pack.suppressed.len(),
            lines(
                pack.items
                    .iter()
                    .map(|(l, t)| format!("[{} #{} {} tok] {t}", l.slot, l.id, l.tokens))
                    .collect()
            )
        ),
        Response::BeliefAssert(o)
        | Response::BeliefCorrect(o)
        | Response::ApplyPlan(o)
        | Response::CandidateApprove(o)
        | Response::CandidateReject(o) => pretty(o),
        Response::BeliefCurrent(b) | Response::BeliefAt(b) => pretty(b),
        Response::BeliefHistory(list) => pretty(list),
        Response::PlanAudit(audit) => lines(
            audit
                .iter()
                .map(|l| {
                    let belief = l.belief.map_or("-".to_owned(), |b| b.to_string());
                    format!("#{} {} belief {belief}: {}", l.op_index, l.op, l.detail)
                })
                .collect(),
        ),
        Response::MemoryShow(m) => format!(
            "event {}: {}\naccesses {}, strength {}, tier {}{}; beliefs {}",
            m.event.id,
            m.event.content,
            m.accesses.map_or("-".to_owned(), |a| a.to_string()),
            m.strength.map_or("-".to_owned(), |s| format!("{s:.3}")),
            m.tier.as_deref().unwrap_or("-"),
            if m.hot { " (hot copy)" } else { "" },
            m.beliefs
                .iter()
                .map(|(id, key, version, status)| format!("#{id} {key} v{version} {status:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Response::EpisodeStart(e) => format!("started episode {}", e.episode),
        Response::EpisodeAppend(a) if a.already_in_episode => format!(
            "event {} is already in episode {}, at position {}",
            a.event, a.episode, a.position
        ),
        Response::EpisodeAppend(a) => format!(
            "appended event {} to episode {} at position {}",
            a.event, a.episode, a.position
        ),
        Response::EpisodeEnd(e) => format!("sealed episode {}", e.episode),
        Response::EpisodeShow(e) => {
            let v = to_value(e);
            format!(
                "episode {} ({}, agent {}): events {}, outcome {}, reward {}, previous {}, next {}",
                v["id"],
                v["status"],
                v["agent"],
                v["events"],
                v["outcome"],
                v["reward"],
                v["prev"],
                v["next"]
            )
        }
        Response::ProcedureAdd(p) => format!("added procedure {}", p.procedure),
        Response::ProcedureSuggest(list) => lines(
            list.iter()
                .map(|s| {
                    format!(
                        "{:.3} #{} {} (reliability {:.2})",
                        s.score, s.procedure.id.0, s.procedure.name, s.procedure.reliability
                    )
                })
                .collect(),
        ),
        Response::ProcedureOutcome(p) => format!("{} reliability {:.3}", p.name, p.reliability),
        Response::ProspectivePropose(i)
        | Response::ProspectiveConfirm(i)
        | Response::ProspectiveDefer(i)
        | Response::ProspectiveComplete(i)
        | Response::ProspectiveReject(i) => item(&to_value(i)),
        Response::ProspectiveShow(shown) => {
            let v = to_value(shown);
            let history = v["history"].as_array().into_iter().flatten().map(|h| {
                format!(
                    "  {} {:<8} {} -> {}",
                    h["at"].as_i64().map(format_utc).unwrap_or_default(),
                    h["op"].as_str().unwrap_or_default(),
                    h["from"].as_str().unwrap_or("-"),
                    h["to"].as_str().unwrap_or_default()
                )
            });
            lines(std::iter::once(item(&v)).chain(history).collect())
        }
        Response::ProspectiveDue(items) => lines(
            items
                .iter()
                .map(|i| {
                    let v = to_value(i);
                    format!(
                        "#{} [{}] {}",
                        v["id"],
                        v["status"].as_str().unwrap_or_default(),
                        i.text
                    )
                })
                .collect(),
        ),
        Response::Concepts(list) => lines(list.iter().map(concept).collect()),
        Response::ConceptShow(c) => lines(
            std::iter::once(concept(c))
                .chain(
                    c.episodes
                        .iter()
                        .map(|e| format!("  episode {}: events {}", e.id.0, to_value(&e.events))),
                )
                .collect(),
        ),
        Response::Candidates(list) => lines(
            list.iter()
                .map(|b| {
                    format!(
                        "#{} {} = {} ({}, evidence {})",
                        b.id,
                        b.key,
                        b.statement,
                        b.ownership,
                        to_value(&b.evidence)
                    )
                })
                .collect(),
        ),
        Response::Gaps(gaps) => lines(
            gaps.iter()
                .map(|g| format!("[{:?} {:.2}] {}", g.kind, g.score, g.description))
                .collect(),
        ),
        Response::Associations(list) => lines(
            list.iter()
                .map(|a| format!("[{:.2}] {}", a.confidence, a.suggestion))
                .collect(),
        ),
        Response::Proposals(list) => lines(
            list.iter()
                .map(|p| format!("#{} [{}] {} — {}", p.id, p.status, p.title, p.rationale))
                .collect(),
        ),
        Response::Pulse(receipt) => lines(
            std::iter::once(format!(
                "{} new events since the last tick",
                receipt.new_events
            ))
            .chain(receipt.phases.iter().map(|ph| {
                format!(
                    "{:<24} {:>5} items {:>8.1} ms  {}",
                    ph.phase, ph.items, ph.elapsed_ms, ph.produced
                )
            }))
            .collect(),
        ),
        Response::Stats(stats) if stats.is_empty() => "no projects".to_owned(),
        Response::Stats(stats) => lines(
            stats
                .iter()
                .map(|s| {
                    let backlog = if s.embedding_backlog > 0 {
                        format!(", {} waiting for the sentence model", s.embedding_backlog)
                    } else {
                        String::new()
                    };
                    format!(
                        "{}: {}, {} ({} hot copies, {} warm, {} cold), {}, {}{backlog}",
                        s.project,
                        counted(s.events, "event"),
                        counted(s.vectors, "vector"),
                        s.tiers.hot,
                        s.tiers.warm,
                        s.tiers.cold,
                        counted(s.active_beliefs, "active belief"),
                        counted(s.directives, "standing directive")
                    )
                })
                .collect(),
        ),
        Response::Map(m) => map(m),
        Response::Migrate(r) => format!(
            "schema {} -> {}{}: {:?}",
            r.from,
            r.to,
            if r.dry_run { " (dry run)" } else { "" },
            r.migrations
        ),
        Response::ForgetProject(r) => {
            format!("erased: {} vectors, rows {:?}", r.vectors, r.ledger.rows)
        }
    }
}

/// Pretty JSON of a result whose fields are the text.
fn pretty<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn item(v: &Value) -> String {
    format!(
        "item {} {}",
        v["id"],
        v["status"].as_str().unwrap_or_default()
    )
}

fn concept(c: &super::ConceptShown) -> String {
    format!(
        "#{} {} (support {}, reliability {:.2})",
        c.id,
        c.label,
        c.support.len(),
        c.reliability
    )
}

/// The text form of `map`.
fn map(m: &MemoryMap) -> String {
    let span = |(a, b): (i64, i64)| format!("{} → {}", format_utc(a), format_utc(b));
    let counts = |pairs: &[(String, u64)]| {
        pairs
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = vec![
        format!(
            "project {}: {} ({}){}",
            m.project,
            counted(m.events, "event"),
            counts(&m.roles),
            m.span.map(|s| format!(", {}", span(s))).unwrap_or_default()
        ),
        format!(
            "tiers: {} warm, {} cold, {} hot copies",
            m.tiers.warm, m.tiers.cold, m.tiers.hot
        ),
        format!(
            "beliefs: {}; {}; {}; {} open prospective {}",
            if m.beliefs.is_empty() {
                "none".to_owned()
            } else {
                counts(&m.beliefs)
            },
            counted(m.directives, "standing directive"),
            counted(m.procedures, "procedure"),
            m.prospective_open,
            if m.prospective_open == 1 {
                "item"
            } else {
                "items"
            }
        ),
        format!("threads ({}):", m.thread_count),
    ];
    for t in &m.threads {
        out.push(format!(
            "  {:<24} {:>6} events  {}",
            t.thread,
            t.events,
            span(t.span)
        ));
    }
    out.push(format!("episodes ({}), latest first:", m.episode_count));
    for e in &m.episodes {
        out.push(format!(
            "  #{:<5} {:<12} {:<11} {:>5} events  {}  {}",
            e.id,
            e.agent,
            e.status,
            e.events,
            span(e.span),
            e.topic.join(" ")
        ));
    }
    out.push(format!("concepts ({}):", m.concept_count));
    for c in &m.concepts {
        out.push(format!(
            "  #{:<5} support {:<4} {}",
            c.id, c.support, c.label
        ));
    }
    out.push(format!(
        "synapses ({}), most connected memories:",
        m.synapse_count
    ));
    for h in &m.hubs {
        out.push(format!(
            "  event {:<8} {:>4} links  strength {:>7.3}  {}",
            h.event.0, h.degree, h.strength, h.preview
        ));
    }
    out.join("\n")
}

/// `n` and the noun, plural unless `n` is 1 ("1 event", "2 events").
fn counted(n: impl TryInto<u64>, noun: &str) -> String {
    let n = n.try_into().unwrap_or(u64::MAX);
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}
