//! Episode segmentation against session boundaries: every conversation of a data set is
//! observed as one stream by one agent (sessions concatenated, their ids withheld; turns
//! keep their times, as `import` records them), with automatic segmentation on; a predicted boundary is the first event of each episode, a
//! true one the first turn of each session. Prints precision, recall and F1 over all
//! conversations.
//!
//! `cargo run --release --example segmentation -- ../shared/data/beam100k`

use std::collections::HashSet;

use hypermem::eval::project_of;
use hypermem::ledger::{EventKind, NewEvent, Role};
use hypermem::{Memory, Profile, ProfileKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let data = std::path::PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "../shared/data/beam100k".into()),
    );
    let dir = tempfile::tempdir()?;
    let memory = Memory::open(&Profile::builtin(ProfileKind::Lite)?, Some(dir.path()))?;
    let (mut tp, mut predicted, mut truth) = (0usize, 0usize, 0usize);
    for line in std::fs::read_to_string(data.join("conversations.jsonl"))?.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let c: serde_json::Value = serde_json::from_str(line)?;
        let project = project_of(c["conversation_id"].as_str().unwrap_or("c"))?;
        memory.start_episode(&project, "agent")?;
        let mut starts = HashSet::new();
        let mut events = Vec::new();
        let mut known: Option<i64> = None;
        for s in c["sessions"].as_array().into_iter().flatten() {
            for (i, t) in s["turns"].as_array().into_iter().flatten().enumerate() {
                let role = if t["role"] == "assistant" {
                    Role::Assistant
                } else {
                    Role::User
                };
                let mut e = NewEvent::new(
                    project.clone(),
                    role,
                    EventKind::Message,
                    t["text"].as_str().unwrap_or(""),
                );
                e.agent = Some("agent".into());
                // Event time as `import` records it: the turn's time, else the session's
                // date, else the latest earlier time of the conversation.
                let at = t["time"]
                    .as_str()
                    .and_then(hypermem::clock::parse_when)
                    .or_else(|| s["date"].as_str().and_then(hypermem::clock::parse_when))
                    .or(known);
                known = known.max(at);
                if let Some(at) = at.filter(|_| std::env::var_os("SEG_NO_TIMES").is_none()) {
                    e = e.at(at);
                }
                if i == 0 {
                    starts.insert(events.len());
                }
                events.push(e);
            }
        }
        let mut ids = Vec::new();
        for chunk in events.chunks(200) {
            ids.extend(memory.observe_batch(chunk)?);
        }
        // The first event of every episode after the first is a predicted boundary.
        let first_id = ids.first().map(|i| i.0).unwrap_or(0);
        let mut boundaries = HashSet::new();
        let cog = memory.cognition();
        let map = memory.map(&project, 100_000)?;
        for ep in &map.episodes {
            let e = cog.episode(&project, hypermem::cognition::EpisodeId(ep.id))?;
            if let Some(first) = e.events.first()
                && first.0 != first_id
            {
                boundaries.insert((first.0 - first_id) as usize);
            }
        }
        starts.remove(&0);
        if std::env::var_os("SEG_DEBUG").is_some() {
            let mut b: Vec<_> = boundaries.iter().collect();
            b.sort();
            let mut t: Vec<_> = starts.iter().collect();
            t.sort();
            eprintln!("predicted {b:?}\ntrue {t:?}");
        }
        tp += boundaries.intersection(&starts).count();
        predicted += boundaries.len();
        truth += starts.len();
    }
    let p = tp as f64 / predicted.max(1) as f64;
    let r = tp as f64 / truth.max(1) as f64;
    println!(
        "{}: boundaries predicted {predicted}, true {truth}, hit {tp}: precision {p:.3} recall {r:.3} F1 {:.3}",
        data.display(),
        if p + r > 0.0 {
            2.0 * p * r / (p + r)
        } else {
            0.0
        }
    );
    Ok(())
}
