//! Understanding, measured through the public API on a labelled corpus written by others
//! (`../shared/data/understanding/`, its README gives the schema), one project per
//! scenario, every figure per kind:
//!
//! - `updates.jsonl`: the statements are observed at their own times (`user` and
//!   `assistant` as roles, any other speaker as a named user), then each question is
//!   recalled; it passes when the first result is the expected statement (or one the
//!   label lists as carrying the same value). Reported for `change`, `no_change` and
//!   `dated` scenarios.
//! - `unknown.jsonl`: an unanswerable question passes when recall returns nothing; an
//!   answerable control when its answer is first.
//! - `duplicates.jsonl`: each group is observed (one event per text, each in its own
//!   session) and recalled by its first text; a group labelled `same` passes when exactly
//!   one result stands for all of its texts (the others folded into it, listed as its
//!   `duplicates`), a group of near-twins when every text is a result of its own.
//!
//! - `candidates.jsonl`: every turn is observed by plain `observe` (no agent, no episode)
//!   into one project, each in its own session; three pulse ticks run; the turns cited as
//!   evidence by a candidate belief are the predicted candidates, scored as precision and
//!   recall against the labels.
//!
//! Each `Score` counts questions (groups for duplicates) and lists the scenarios that
//! failed.
//!
//! `cargo run --release --example understanding -- ../shared/data/understanding [--json]
//! [--explain] [--profile FILE]`
//!
//! The corpus is a test set, not a phrase book: nothing in the engine is written from it.

use std::collections::BTreeSet;

use hypermem::ledger::{EventKind, NewEvent, Role};
use hypermem::store::ProjectId;
use hypermem::{Memory, Profile, ProfileKind, RecallQuery};

/// What one kind of group scored.
#[derive(Debug, Default, serde::Serialize)]
struct Score {
    groups: usize,
    passed: usize,
    rate: f64,
    /// Ids of the groups that failed.
    failed: Vec<String>,
}

impl Score {
    fn add(&mut self, id: &str, ok: bool) {
        self.groups += 1;
        if ok {
            self.passed += 1;
        } else {
            self.failed.push(id.to_owned());
        }
        self.rate = self.passed as f64 / self.groups as f64;
    }
}

#[derive(Debug, Default, serde::Serialize)]
struct Report {
    /// Change scenarios: the current value first.
    change: Score,
    /// No-change scenarios: the original value (or a restatement of it) first.
    no_change: Score,
    /// Dated questions: the value of the named time first.
    dated: Score,
    /// Unanswerable questions: nothing returned.
    unanswerable: Score,
    /// Answerable controls: the answer first.
    answerable: Score,
    /// Groups labelled `same`: folded to one result.
    folded: Score,
    /// Groups labelled not `same`: every text kept apart.
    kept_apart: Score,
    /// Candidate beliefs from plain observation.
    candidates: Candidates,
}

/// Candidate beliefs against the labels.
#[derive(Debug, Default, serde::Serialize)]
struct Candidates {
    /// Turns labelled as candidates.
    labelled: usize,
    /// Turns cited as evidence by a candidate belief.
    produced: usize,
    /// Of those, labelled ones.
    correct: usize,
    precision: f64,
    recall: f64,
}

/// The candidate statements: all observed into one project, three pulse ticks, then the
/// candidate beliefs' evidence against the labels.
fn candidates(
    memory: &Memory,
    data: &std::path::Path,
    report: &mut Report,
) -> Result<(), Box<dyn std::error::Error>> {
    let project = ProjectId::new("cand")?;
    let mut labelled = std::collections::HashMap::new();
    let mut ids_in_order = Vec::new();
    for (n, turn) in lines(&data.join("candidates.jsonl"))? {
        let role = match turn["speaker_role"].as_str() {
            Some("assistant") => Role::Assistant,
            _ => Role::User,
        };
        let text = turn["text"].as_str().unwrap_or_default();
        let id = memory.observe(
            NewEvent::new(project.clone(), role, EventKind::Message, text).session(format!("c{n}")),
        )?;
        labelled.insert(id.0, turn["label"].as_bool().unwrap_or(false));
        ids_in_order.push(id.0);
    }
    for _ in 0..3 {
        memory.pulse_tick(&project)?;
    }
    let produced: BTreeSet<u64> = memory
        .ledger()
        .beliefs_with_status(&project, hypermem::governance::BeliefStatus::Candidate)?
        .into_iter()
        .flat_map(|b| b.evidence.into_iter().map(|e| e.0))
        .filter(|e| labelled.contains_key(e))
        .collect();
    if EXPLAIN.load(std::sync::atomic::Ordering::Relaxed) {
        for ((_, turn), &id) in lines(&data.join("candidates.jsonl"))?
            .iter()
            .zip(&ids_in_order)
        {
            let (label, got) = (labelled[&id], produced.contains(&id));
            if label != got {
                eprintln!(
                    "{} {} [{}] {}",
                    if got { "FALSE+" } else { "MISSED" },
                    turn["id"].as_str().unwrap_or_default(),
                    turn["kind"].as_str().unwrap_or_default(),
                    turn["text"].as_str().unwrap_or_default()
                );
            }
        }
    }
    let c = &mut report.candidates;
    c.labelled = labelled.values().filter(|&&l| l).count();
    c.produced = produced.len();
    c.correct = produced.iter().filter(|e| labelled[*e]).count();
    c.precision = if c.produced == 0 {
        0.0
    } else {
        c.correct as f64 / c.produced as f64
    };
    c.recall = if c.labelled == 0 {
        0.0
    } else {
        c.correct as f64 / c.labelled as f64
    };
    Ok(())
}

/// The lines of a corpus file, parsed, with their line numbers.
fn lines(
    path: &std::path::Path,
) -> Result<Vec<(usize, serde_json::Value)>, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "{}: {e} (the corpus is in ../shared/data/understanding)",
            path.display()
        )
    })?;
    let mut out = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
        out.push((n, v));
    }
    Ok(out)
}

/// A statement of the corpus as an event of `project`: `user` and `assistant` are roles,
/// any other speaker a named participant.
fn statement(
    project: &ProjectId,
    s: &serde_json::Value,
) -> Result<NewEvent, Box<dyn std::error::Error>> {
    let text = s["text"].as_str().unwrap_or_default();
    let speaker = s["speaker"].as_str().unwrap_or("user");
    let mut e = match speaker {
        "assistant" => NewEvent::new(project.clone(), Role::Assistant, EventKind::Message, text),
        "user" => NewEvent::new(project.clone(), Role::User, EventKind::Message, text),
        name => NewEvent::new(project.clone(), Role::User, EventKind::Message, text).speaker(name),
    };
    if let Some(at) = s["at"].as_str() {
        e = e.at(hypermem::clock::parse_instant(at)?);
    }
    Ok(e)
}

/// A scenario's statements observed into a project of its own (`<prefix>-<line>`): the
/// scenario's id, the project and the statements' event ids in order.
fn observe_scenario(
    memory: &Memory,
    prefix: &str,
    line: usize,
    scenario: &serde_json::Value,
) -> Result<(String, ProjectId, Vec<hypermem::ledger::EventId>), Box<dyn std::error::Error>> {
    let id = scenario["id"].as_str().unwrap_or_default().to_owned();
    let project = ProjectId::new(format!("{prefix}-{line}"))?;
    let events = scenario["statements"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| statement(&project, s))
        .collect::<Result<Vec<_>, _>>()?;
    let ids = memory.observe_batch(&events)?;
    // A sentence model embeds in the background: finish it before asking (nothing to do
    // without one).
    memory.embed_pending(Some(&project), usize::MAX, None)?;
    Ok((id, project, ids))
}

/// Set by `--explain`: every failed question is printed to stderr with its results.
static EXPLAIN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Under `--explain`, a failed question and the results it got (text and score parts).
fn explain(id: &str, question: &str, ok: bool, items: &[hypermem::RecallItem]) {
    if ok || !EXPLAIN.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    eprintln!("FAIL {id}: {question}");
    for i in items.iter().take(4) {
        let parts: Vec<String> = i
            .fused
            .breakdown
            .iter()
            .map(|p| format!("{}={:.2}", p.signal, p.score))
            .collect();
        eprintln!(
            "    {:.2} [{}] {}",
            i.fused.score,
            parts.join(" "),
            i.event.content
        );
    }
}

/// The updates scenarios.
fn updates(
    memory: &Memory,
    data: &std::path::Path,
    report: &mut Report,
) -> Result<(), Box<dyn std::error::Error>> {
    for (n, scenario) in lines(&data.join("updates.jsonl"))? {
        let (id, project, ids) = observe_scenario(memory, "upd", n, &scenario)?;
        for q in scenario["questions"].as_array().into_iter().flatten() {
            let text = q["text"].as_str().unwrap_or_default();
            let mut want: Vec<u64> = Vec::new();
            for i in std::iter::once(&q["expect_first"])
                .chain(q["also_ok"].as_array().into_iter().flatten())
            {
                if let Some(e) = i.as_u64().and_then(|i| ids.get(i as usize)) {
                    want.push(e.0);
                }
            }
            let first = memory
                .recall(&project, text, 10)?
                .first()
                .map(|i| i.event.id.0);
            let ok = first.is_some_and(|f| want.contains(&f));
            if EXPLAIN.load(std::sync::atomic::Ordering::Relaxed) {
                explain(&id, text, ok, &memory.recall(&project, text, 10)?);
            }
            match scenario["kind"].as_str() {
                Some("change") => report.change.add(&id, ok),
                Some("no_change") => report.no_change.add(&id, ok),
                _ => report.dated.add(&id, ok),
            }
        }
    }
    Ok(())
}

/// The unknown-question scenarios.
fn unknown(
    memory: &Memory,
    data: &std::path::Path,
    report: &mut Report,
) -> Result<(), Box<dyn std::error::Error>> {
    for (n, scenario) in lines(&data.join("unknown.jsonl"))? {
        let (id, project, ids) = observe_scenario(memory, "unk", n, &scenario)?;
        for q in scenario["questions"].as_array().into_iter().flatten() {
            let text = q["text"].as_str().unwrap_or_default();
            let items = memory.recall(&project, text, 10)?;
            if q["answerable"].as_bool().unwrap_or(false) {
                let want = q["answer_index"].as_u64().and_then(|i| ids.get(i as usize));
                let ok = items.first().map(|i| i.event.id) == want.copied();
                explain(&id, text, ok, &items);
                report.answerable.add(&id, ok);
            } else {
                explain(&id, text, items.is_empty(), &items);
                report.unanswerable.add(&id, items.is_empty());
            }
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    EXPLAIN.store(
        args.iter().any(|a| a == "--explain"),
        std::sync::atomic::Ordering::Relaxed,
    );
    let data = std::path::PathBuf::from(
        args.iter()
            .enumerate()
            .find(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--profile"))
            .map(|(_, a)| a)
            .cloned()
            .unwrap_or_else(|| "../shared/data/understanding".into()),
    );
    let dir = tempfile::tempdir()?;
    // `--profile FILE` measures another profile (a semantic model, other weights).
    let profile = match args.iter().position(|a| a == "--profile") {
        Some(i) => Profile::load(args.get(i + 1).ok_or("--profile needs a file")?)?,
        None => Profile::load(Profile::bundled_path(ProfileKind::Lite))?,
    };
    let memory = Memory::open(&profile, Some(dir.path()))?;
    let mut report = Report::default();
    updates(&memory, &data, &mut report)?;
    unknown(&memory, &data, &mut report)?;
    candidates(&memory, &data, &mut report)?;
    for (n, group) in lines(&data.join("duplicates.jsonl"))? {
        let id = group["id"].as_str().unwrap_or_default().to_owned();
        let same = group["same"].as_bool().unwrap_or(false);
        let texts: Vec<&str> = group["texts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str())
            .collect();
        if texts.len() < 2 {
            continue;
        }
        let project = ProjectId::new(format!("dup-{n}"))?;
        let events: Vec<NewEvent> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                NewEvent::new(project.clone(), Role::User, EventKind::Message, *t)
                    .session(format!("s{i}"))
            })
            .collect();
        let ids: BTreeSet<u64> = memory
            .observe_batch(&events)?
            .into_iter()
            .map(|e| e.0)
            .collect();
        let result = memory.recall_with(&project, &RecallQuery::new(texts[0], 10))?;
        // Each result that stands for some of the group's texts, with the texts it holds.
        let slots: Vec<BTreeSet<u64>> = result
            .items
            .iter()
            .filter(|i| ids.contains(&i.event.id.0))
            .map(|i| {
                std::iter::once(i.event.id.0)
                    .chain(i.duplicates.iter().map(|d| d.0))
                    .collect()
            })
            .collect();
        let ok = if same {
            slots.len() == 1 && slots[0] == ids
        } else {
            slots.len() == ids.len() && slots.iter().all(|s| s.len() == 1)
        };
        if same {
            report.folded.add(&id, ok);
        } else {
            report.kept_apart.add(&id, ok);
        }
    }
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        for (what, s) in [
            ("change scenarios: the current value first", &report.change),
            (
                "no-change scenarios: the original value first",
                &report.no_change,
            ),
            (
                "dated questions: the value of the named time first",
                &report.dated,
            ),
            (
                "unanswerable questions: nothing returned",
                &report.unanswerable,
            ),
            ("answerable controls: the answer first", &report.answerable),
            ("duplicate groups folded to one slot", &report.folded),
            ("near-twins kept apart", &report.kept_apart),
        ] {
            println!("{what}: {} / {} = {:.2}", s.passed, s.groups, s.rate);
        }
        let c = &report.candidates;
        println!(
            "candidate statements through plain observe + pulse: {} produced, {} correct of {} labelled: precision {:.2}, recall {:.2}",
            c.produced, c.correct, c.labelled, c.precision, c.recall
        );
    }
    Ok(())
}
