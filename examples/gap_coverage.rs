//! Calibration data for the gap rule: for every question with evidence, the best lexical
//! coverage (share of the query's IDF mass one turn holds) among the top 10 BM25 turns of
//! its own conversation and of the next conversation, as quantiles.
//!
//! `cargo run --release --example gap_coverage -- ../shared/data/beam100k`

use std::collections::HashMap;

use hypermem::index::lexical::{self, Postings};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let data = std::path::PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "../shared/data/beam100k".into()),
    );
    let mut index: HashMap<String, Postings> = HashMap::new();
    let mut order = Vec::new();
    let mut id = 0u64;
    for line in std::fs::read_to_string(data.join("conversations.jsonl"))?.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let c: serde_json::Value = serde_json::from_str(line)?;
        let cid = c["conversation_id"].as_str().unwrap_or_default().to_owned();
        let p = index.entry(cid.clone()).or_default();
        order.push(cid);
        for s in c["sessions"].as_array().into_iter().flatten() {
            for t in s["turns"].as_array().into_iter().flatten() {
                id += 1;
                let speaker = t["role"]
                    .as_str()
                    .filter(|r| *r != "user" && *r != "assistant");
                let name = speaker.map(hypermem::text::tokens).unwrap_or_default();
                p.add_with_context(
                    id,
                    &hypermem::text::tokens(t["text"].as_str().unwrap_or("")),
                    &[],
                    &name,
                );
            }
        }
    }
    let best = |p: &Postings, q: &str| -> f64 {
        let all = lexical::query_terms(q);
        let n = p.documents().max(1) as f64;
        let rare: Vec<String> = all
            .iter()
            .filter(|t| (p.df(t) as f64) / n <= 0.25)
            .cloned()
            .collect();
        let terms = if rare.is_empty() { all } else { rare };
        p.search(&terms, 10)
            .iter()
            .filter_map(|(d, _)| p.coverage(&terms, *d))
            .fold(0.0, f64::max)
    };
    let (mut own, mut other) = (Vec::new(), Vec::new());
    for line in std::fs::read_to_string(data.join("questions.jsonl"))?.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let q: serde_json::Value = serde_json::from_str(line)?;
        if q["evidence"].as_array().is_none_or(|e| e.is_empty()) {
            continue;
        }
        let cid = q["conversation_id"].as_str().unwrap_or_default();
        let text = q["question"].as_str().unwrap_or_default();
        let i = order.iter().position(|c| c == cid).unwrap_or(0);
        let next = &order[(i + 1) % order.len()];
        own.push(best(&index[cid], text));
        other.push(best(&index[next], text));
    }
    for (name, v) in [("own", &mut own), ("other", &mut other)] {
        v.sort_by(f64::total_cmp);
        let q = |p: f64| v[((v.len() - 1) as f64 * p) as usize];
        println!(
            "{name:>5}: n {} p05 {:.2} p10 {:.2} p25 {:.2} p50 {:.2} p75 {:.2} p90 {:.2} p95 {:.2}",
            v.len(),
            q(0.05),
            q(0.10),
            q(0.25),
            q(0.5),
            q(0.75),
            q(0.9),
            q(0.95)
        );
    }
    for th in [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6] {
        let kept = own.iter().filter(|&&c| c >= th).count() as f64 / own.len() as f64;
        let gaps = other.iter().filter(|&&c| c < th).count() as f64 / other.len() as f64;
        println!("threshold {th:.2}: answerable kept {kept:.3}, foreign flagged {gaps:.3}");
    }
    Ok(())
}
