//! Understanding, measured through the public API on a labelled corpus written by others
//! (`../shared/data/understanding/`, its README gives the schema). This measures the
//! `duplicates.jsonl` kind: each group is observed into a project of its own (one event per
//! text, each in its own session) and recalled by its first text; a group labelled `same`
//! passes when exactly one result stands for all of its texts (the others folded into it,
//! listed as its `duplicates`), a group of near-twins passes when every text is a result of
//! its own. The other kinds of the corpus (updates, candidates, unknown questions) are not
//! measured here yet.
//!
//! `cargo run --release --example understanding -- ../shared/data/understanding [--json]`
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
    /// Groups labelled `same`: folded to one result.
    folded: Score,
    /// Groups labelled not `same`: every text kept apart.
    kept_apart: Score,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let data = std::path::PathBuf::from(
        args.iter()
            .find(|a| !a.starts_with("--"))
            .cloned()
            .unwrap_or_else(|| "../shared/data/understanding".into()),
    );
    let path = data.join("duplicates.jsonl");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{}: {e} (the corpus is in ../shared/data/understanding)",
            path.display()
        )
    })?;
    let dir = tempfile::tempdir()?;
    let profile = Profile::load(Profile::bundled_path(ProfileKind::Lite))?;
    let memory = Memory::open(&profile, Some(dir.path()))?;
    let mut report = Report::default();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let group: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
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
        println!(
            "duplicate groups folded to one slot: {} / {} = {:.2}",
            report.folded.passed, report.folded.groups, report.folded.rate
        );
        println!(
            "near-twins kept apart: {} / {} = {:.2}",
            report.kept_apart.passed, report.kept_apart.groups, report.kept_apart.rate
        );
        for id in report.folded.failed.iter().chain(&report.kept_apart.failed) {
            println!("  failed: {id}");
        }
    }
    Ok(())
}
