//! How well recall's gap judgement separates answerable from unanswerable questions on a
//! conversational data set: every question with evidence is asked in its own conversation
//! (the answer is stored: it should not be a gap) and in the next conversation of the file
//! (another user's memory: usually a gap). A recall is a gap when no candidate has a lexical
//! match or a similarity above its project's unrelated baseline.
//!
//! ```sh
//! cargo run --release --example gaps -- ../shared/data/beam100k
//! ```

use std::path::PathBuf;

use hypermem::eval::{import, project_of};
use hypermem::{Memory, Profile, ProfileKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let data = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "../shared/data/beam100k".into()),
    );
    let dir = tempfile::tempdir()?;
    let memory = Memory::open(&Profile::builtin(ProfileKind::Lite)?, Some(dir.path()))?;
    import(&memory, &data, false, None, |_, _| {})?;
    let text = std::fs::read_to_string(data.join("questions.jsonl"))?;
    let questions: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let mut conversations: Vec<String> = Vec::new();
    for q in &questions {
        let c = q["conversation_id"].as_str().unwrap_or_default().to_owned();
        if !conversations.contains(&c) {
            conversations.push(c);
        }
    }
    let (mut own, mut own_gap, mut other, mut other_gap) = (0, 0, 0, 0);
    let is_gap = |project: &str, question: &str| -> Result<bool, Box<dyn std::error::Error>> {
        let p = project_of(project)?;
        let r = memory.recall_with(&p, &hypermem::RecallQuery::new(question, 10))?;
        // The judgement recall logs: no item kept with evidence of its own.
        memory.flush_feedback()?;
        let gaps = memory.knowledge_gaps(&p, 100_000)?;
        let _ = r;
        Ok(gaps
            .iter()
            .any(|g| g.description.contains(&format!("{question:?}"))))
    };
    for q in &questions {
        let has_evidence = q["evidence"].as_array().is_some_and(|e| !e.is_empty());
        if !has_evidence {
            continue;
        }
        let c = q["conversation_id"].as_str().unwrap_or_default();
        let question = q["question"].as_str().unwrap_or_default();
        let i = conversations.iter().position(|x| x == c).unwrap_or(0);
        let next = &conversations[(i + 1) % conversations.len()];
        own += 1;
        own_gap += usize::from(is_gap(c, question)?);
        other += 1;
        other_gap += usize::from(is_gap(next, question)?);
    }
    println!(
        "{}: answer stored, not a gap: {:.3} ({} of {}); asked of another conversation, a gap: {:.3} ({} of {})",
        data.display(),
        (own - own_gap) as f64 / own.max(1) as f64,
        own - own_gap,
        own,
        other_gap as f64 / other.max(1) as f64,
        other_gap,
        other
    );
    Ok(())
}
