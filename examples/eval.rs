//! Retrieval evaluation on a data set in the format of `../shared/eval/FORMAT.md`: every
//! conversation is ingested into its own project through `Memory::observe_batch`, every
//! question with evidence is asked through `Memory::recall`, and recall@1/5/10, hit@10, MRR
//! and the update-order rate are printed per category and overall. The last line is
//! `overall recall@10 <x> mrr <y> update_order <z>`.
//!
//! ```sh
//! cargo run --release --example eval -- ../shared/data/beam100k [k]
//! ```
//! (The `hypermem eval --data DIR --k 10` CLI of issue 6 will wrap the same steps.)

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use hypermem::ledger::{EventKind, NewEvent, Role};
use hypermem::store::ProjectId;
use hypermem::{Memory, Profile, ProfileKind};
use serde_json::Value;

#[derive(Default)]
struct Score {
    n: usize,
    r1: f64,
    r5: f64,
    r10: f64,
    hit10: f64,
    mrr: f64,
    updates: usize,
    ordered: usize,
}

fn project_of(conversation: &str) -> ProjectId {
    let clean: String = conversation
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    ProjectId::new(clean.trim_start_matches('-').to_owned()).expect("sanitized project name")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().ok_or("usage: eval DATA_DIR [k]")?);
    let k: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(10);
    let profile = Profile::load(Profile::bundled_path(ProfileKind::Lite))?;
    let work = tempfile::tempdir()?;
    let memory = Memory::open(&profile, Some(work.path()))?;

    let t = Instant::now();
    let mut turns = 0usize;
    for line in std::fs::read_to_string(dir.join("conversations.jsonl"))?.lines() {
        let conv: Value = serde_json::from_str(line)?;
        let project = project_of(conv["conversation_id"].as_str().ok_or("conversation_id")?);
        let mut batch = Vec::new();
        for session in conv["sessions"].as_array().ok_or("sessions")? {
            let sid = session["session_id"].as_str().unwrap_or("session");
            for turn in session["turns"].as_array().ok_or("turns")? {
                let role = match turn["role"].as_str() {
                    Some("assistant") => Role::Assistant,
                    _ => Role::User,
                };
                let mut e = NewEvent::new(
                    project.clone(),
                    role,
                    EventKind::Message,
                    turn["text"].as_str().unwrap_or(""),
                )
                .thread(sid)
                .session(sid);
                e.source_id = turn["turn_id"].as_str().map(str::to_owned);
                batch.push(e);
            }
        }
        turns += batch.len();
        for chunk in batch.chunks(1000) {
            memory.observe_batch(chunk)?;
        }
    }
    let ingest = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let mut scores: BTreeMap<String, Score> = BTreeMap::new();
    let mut asked = 0;
    for line in std::fs::read_to_string(dir.join("questions.jsonl"))?.lines() {
        let q: Value = serde_json::from_str(line)?;
        let evidence: Vec<&str> = q["evidence"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if evidence.is_empty() {
            continue;
        }
        let superseded: Vec<&str> = q["superseded_evidence"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let project = project_of(q["conversation_id"].as_str().ok_or("conversation_id")?);
        let hits = memory.recall(&project, q["question"].as_str().unwrap_or(""), k.max(10))?;
        asked += 1;
        let ranked: Vec<String> = hits
            .iter()
            .filter_map(|h| h.event.source_id.clone())
            .collect();
        let rank_of: HashMap<&str, usize> = ranked
            .iter()
            .enumerate()
            .map(|(i, s)| (s.as_str(), i + 1))
            .collect();
        let found = |n: usize| {
            evidence
                .iter()
                .filter(|e| rank_of.get(*e).is_some_and(|&r| r <= n))
                .count() as f64
                / evidence.len() as f64
        };
        let first = evidence
            .iter()
            .filter_map(|e| rank_of.get(e))
            .min()
            .copied();
        let category = q["category"].as_str().unwrap_or("unknown").to_owned();
        for key in [category, "overall".to_owned()] {
            let s = scores.entry(key).or_default();
            s.n += 1;
            s.r1 += found(1);
            s.r5 += found(5);
            s.r10 += found(10);
            s.hit10 += f64::from(u8::from(first.is_some_and(|r| r <= 10)));
            s.mrr += first.map_or(0.0, |r| 1.0 / r as f64);
            if !superseded.is_empty() {
                s.updates += 1;
                let best_old = superseded
                    .iter()
                    .filter_map(|e| rank_of.get(e))
                    .min()
                    .copied();
                if first.is_some_and(|f| best_old.is_none_or(|o| f < o)) {
                    s.ordered += 1;
                }
            }
        }
    }
    let query = t.elapsed().as_secs_f64();
    println!(
        "ingested {turns} turns in {ingest:.1} s ({:.0} turns/s); {asked} questions in {query:.2} s ({:.1} ms each)",
        turns as f64 / ingest,
        query * 1e3 / asked.max(1) as f64
    );
    println!(
        "{:<28} {:>4} {:>9} {:>9} {:>10} {:>7} {:>6} {:>12}",
        "category", "n", "recall@1", "recall@5", "recall@10", "hit@10", "mrr", "update_order"
    );
    let overall = scores.remove("overall").unwrap_or_default();
    let line = |name: &str, s: &Score| {
        let n = s.n.max(1) as f64;
        let uo = if s.updates == 0 {
            "-".to_owned()
        } else {
            format!("{:.3}", s.ordered as f64 / s.updates as f64)
        };
        println!(
            "{name:<28} {:>4} {:>9.3} {:>9.3} {:>10.3} {:>7.3} {:>6.3} {uo:>12}",
            s.n,
            s.r1 / n,
            s.r5 / n,
            s.r10 / n,
            s.hit10 / n,
            s.mrr / n
        );
    };
    for (name, s) in &scores {
        line(name, s);
    }
    line("overall", &overall);
    let n = overall.n.max(1) as f64;
    println!(
        "overall recall@10 {:.3} mrr {:.3} update_order {:.3}",
        overall.r10 / n,
        overall.mrr / n,
        if overall.updates == 0 {
            0.0
        } else {
            overall.ordered as f64 / overall.updates as f64
        }
    );
    Ok(())
}
