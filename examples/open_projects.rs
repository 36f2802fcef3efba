//! What an open project costs a process, and what bounding them saves.
//!
//! Imports a data set (one project per conversation; default beam500k: 35 projects of
//! about 1,087 turns of 2 KB) into a data directory, then, in this process, asks one
//! question of every project in turn and reports the resident set after each, with the
//! profile's `open_projects` set to `--open N` (0: no bound). A second pass asks again, so
//! with a bound below the number of projects every question reopens a closed project
//! (its lexical index read back from its file): the report gives the median time of a
//! question on an open and on a reopened project.
//!
//! ```sh
//! cargo run --release --example open_projects -- --data ../shared/data/beam500k --dir /tmp/op --open 0
//! cargo run --release --example open_projects -- --data ../shared/data/beam500k --dir /tmp/op --open 8
//! ```
//! A directory that already holds the import is reused (run both against the same
//! `--dir`; each run is its own process, so its resident set is its own).

mod common;

use std::path::PathBuf;
use std::time::Instant;

use hypermem::{Memory, Profile, ProfileKind, RecallQuery};

/// The resident set of this process, in MB.
fn rss_mb() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / 1e6
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(0.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut data, mut dir, mut open) = (
        PathBuf::from("../shared/data/beam500k"),
        PathBuf::from("/tmp/hypermem-open-projects"),
        0usize,
    );
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--data" => data = value.into(),
            "--dir" => dir = value.into(),
            "--open" => open = value.parse()?,
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let mut profile = Profile::builtin(ProfileKind::Lite)?;
    if !dir.join("ledger.db").exists() {
        let memory = Memory::open(&profile, Some(&dir))?;
        let t = Instant::now();
        hypermem::eval::import(&memory, &data, false, None, |_, _| {})?;
        eprintln!(
            "imported {} in {:.1} s",
            data.display(),
            t.elapsed().as_secs_f64()
        );
    }
    let text = std::fs::read_to_string(data.join("conversations.jsonl"))?;
    let projects: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| -> Result<String, Box<dyn std::error::Error>> {
            let v: serde_json::Value = serde_json::from_str(l)?;
            Ok(v["conversation_id"].as_str().unwrap_or_default().to_owned())
        })
        .collect::<Result<_, _>>()?;
    profile.open_projects = open;
    let memory = Memory::open(&profile, Some(&dir))?;
    let base = rss_mb();
    println!(
        "open_projects {open} projects {} rss_at_open_mb {base:.1}",
        projects.len()
    );
    let question = "what did we decide about the schedule";
    let ask = |name: &str| -> Result<f64, Box<dyn std::error::Error>> {
        let p = hypermem::eval::project_of(name)?;
        let t = Instant::now();
        memory.recall_with(&p, &RecallQuery::new(question, 10))?;
        Ok(t.elapsed().as_secs_f64() * 1e3)
    };
    let cpu = common::cpu_seconds();
    let mut first = Vec::new();
    for name in &projects {
        first.push(ask(name)?);
    }
    memory.flush_feedback()?;
    let after = rss_mb();
    let open_now = memory.open_projects();
    println!(
        "first_pass rss_mb {after:.1} grew_mb {:.1} open {open_now} per_open_project_mb {:.2} question_ms_median {:.1} cpu_s {:.2}",
        after - base,
        (after - base) / open_now.max(1) as f64,
        median(first),
        common::cpu_seconds() - cpu
    );
    let mut second = Vec::new();
    for name in &projects {
        second.push(ask(name)?);
    }
    memory.flush_feedback()?;
    println!(
        "second_pass rss_mb {:.1} open {} question_ms_median {:.1}",
        rss_mb(),
        memory.open_projects(),
        median(second)
    );
    Ok(())
}
