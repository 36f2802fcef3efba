//! The local sentence model measured: agreement with reference vectors and throughput.
//!
//! ```text
//! cargo run --release --features sentence --example sentence_model -- \
//!     [--model ../shared/models/minilm-l6-v2] [--data ../shared/data] [--turns 300]
//! cargo run --release --features sentence --example sentence_model -- \
//!     --pooling beam100k [--conversations N]
//! ```
//!
//! 1. Agreement: `--turns` turns of `beam100k` spread over the set, embedded as
//!    sentence-transformers does (truncated at the model's window), against
//!    `beam100k/embeddings/minilm-turns.npy`; prints the minimum and median cosine.
//! 2. Throughput on one thread and on all: short chat turns (LoCoMo, "Speaker: text"),
//!    long turns (beam100k, every window), and single questions (CPU ms per question, as
//!    recall embeds them). Rates per CPU-second beside wall rates.
//!
//! With `--pooling SET` it measures instead how a long turn's windows should make its
//! vector, by the semantic source alone: every turn of `SET` (the first `--conversations`)
//! is embedded window by window once, then each question ranks the turns of its own
//! conversation by cosine with the turn vector made three ways: the first window only
//! (truncation), the mean of the windows (the engine's default), and the best window (the
//! highest cosine of any window). Prints recall@10 and MRR of each, overall and for the
//! questions whose evidence includes a turn of more than one window.

mod common;

use std::path::PathBuf;
use std::time::Instant;

use common::cpu_seconds;
use hypermem::semantic::{SentenceModel, Windows};

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// Reads a little-endian `f32` `.npy` matrix: `(rows, cols, values)`.
fn read_npy(path: &std::path::Path) -> (usize, usize, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..6], b"\x93NUMPY", "not a .npy file");
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).expect("ascii header");
    assert!(header.contains("'<f4'"), "not little-endian f32: {header}");
    let shape = &header[header.find("'shape': (").expect("shape") + 10..];
    let dims: Vec<usize> = shape[..shape.find(')').expect(")")]
        .split(',')
        .filter_map(|d| d.trim().parse().ok())
        .collect();
    let values = bytes[10 + header_len..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (dims[0], dims[1], values)
}

/// Every turn of a data set: `(conversation, turn id, speaker, text)` in file order.
fn turns(path: &std::path::Path) -> Vec<(String, String, Option<String>, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let c: serde_json::Value = serde_json::from_str(line).expect("JSON line");
        let conv = c["conversation_id"].as_str().unwrap_or("").to_owned();
        for s in c["sessions"].as_array().into_iter().flatten() {
            for t in s["turns"].as_array().into_iter().flatten() {
                let id = match &t["turn_id"] {
                    serde_json::Value::String(s) => s.clone(),
                    v => v.to_string(),
                };
                let role = t["role"].as_str().map(str::to_owned);
                let speaker = role.filter(|r| r != "user" && r != "assistant");
                out.push((
                    conv.clone(),
                    id,
                    speaker,
                    t["text"].as_str().unwrap_or("").to_owned(),
                ));
            }
        }
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let model_dir =
        PathBuf::from(arg("--model").unwrap_or_else(|| "../shared/models/minilm-l6-v2".into()));
    let data = PathBuf::from(arg("--data").unwrap_or_else(|| "../shared/data".into()));
    if let Some(set) = arg("--pooling") {
        let model = SentenceModel::load(&model_dir).unwrap_or_else(|e| panic!("{e}"));
        let conversations = arg("--conversations").map(|v| v.parse().expect("--conversations N"));
        pooling(&model, &data.join(set), conversations);
        return;
    }
    let sample: usize = arg("--turns").map_or(300, |v| v.parse().expect("--turns N"));
    let t0 = Instant::now();
    let model = SentenceModel::load(&model_dir).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "loaded {} in {:.2} s: {model:?}",
        model_dir.display(),
        t0.elapsed().as_secs_f64()
    );

    // 1. Agreement with the reference vectors.
    let beam = turns(&data.join("beam100k/conversations.jsonl"));
    let (rows, cols, reference) = read_npy(&data.join("beam100k/embeddings/minilm-turns.npy"));
    assert_eq!(rows, beam.len(), "one reference row per turn");
    let truncated = SentenceModel::load(&model_dir)
        .unwrap_or_else(|e| panic!("{e}"))
        .with_windows(Windows::First);
    let step = (rows / sample.max(1)).max(1);
    let picked: Vec<usize> = (0..rows).step_by(step).take(sample).collect();
    let texts: Vec<&str> = picked.iter().map(|&i| beam[i].3.as_str()).collect();
    let got = truncated.embed_batch(&texts);
    let cosines: Vec<f64> = picked
        .iter()
        .zip(&got)
        .map(|(&i, e)| {
            let r = &reference[i * cols..(i + 1) * cols];
            e.iter().zip(r).map(|(a, b)| f64::from(a * b)).sum()
        })
        .collect();
    let mut worst: Vec<(f64, usize)> = cosines
        .iter()
        .copied()
        .zip(picked.iter().copied())
        .collect();
    worst.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (c, i) in worst.iter().take(3) {
        let preview: String = beam[*i].3.chars().take(100).collect();
        println!(
            "  cosine {c:.6} turn {} {}: {preview:?}",
            beam[*i].0, beam[*i].1
        );
    }
    let min = worst[0].0;
    println!(
        "agreement with minilm-turns.npy over {} beam100k turns: min cosine {min:.6}, median {:.6}",
        cosines.len(),
        median(cosines.clone())
    );

    // 2. Throughput.
    let locomo = turns(&data.join("locomo/conversations.jsonl"));
    let short: Vec<String> = locomo
        .iter()
        .take(1000)
        .map(|(_, _, s, t)| match s {
            Some(s) => format!("{s}: {t}"),
            None => t.clone(),
        })
        .collect();
    let long: Vec<&str> = beam
        .iter()
        .step_by(step)
        .take(100)
        .map(|t| t.3.as_str())
        .collect();
    let questions: Vec<String> = std::fs::read_to_string(data.join("locomo/questions.jsonl"))
        .expect("questions")
        .lines()
        .take(200)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|q| q["question"].as_str().map(str::to_owned))
        .collect();
    let threads = rayon::current_num_threads();
    for (label, pool) in [("1 thread", 1), ("all threads", threads)] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(pool)
            .build()
            .expect("pool");
        pool.install(|| {
            let run = |texts: &[&str], batch: usize| {
                let (c0, w0) = (cpu_seconds(), Instant::now());
                for chunk in texts.chunks(batch) {
                    std::hint::black_box(model.embed_batch(chunk));
                }
                (w0.elapsed().as_secs_f64(), cpu_seconds() - c0)
            };
            let s: Vec<&str> = short.iter().map(String::as_str).collect();
            let (wall, cpu) = run(&s, 64);
            let tokens: usize = s
                .iter()
                .map(|t| model.windows(t).iter().map(Vec::len).sum::<usize>())
                .sum();
            println!(
                "{label}: short turns ({} turns, {:.1} tokens each): {:.0}/s wall, {:.0} per CPU-s",
                s.len(),
                tokens as f64 / s.len() as f64,
                s.len() as f64 / wall,
                s.len() as f64 / cpu
            );
            let (wall, cpu) = run(&long, 16);
            let windows: usize = long.iter().map(|t| model.windows(t).len()).sum();
            println!(
                "{label}: long turns ({} turns, {:.2} windows each): {:.1}/s wall, {:.1} per CPU-s",
                long.len(),
                windows as f64 / long.len() as f64,
                long.len() as f64 / wall,
                long.len() as f64 / cpu
            );
            let mut per = Vec::new();
            for q in &questions {
                let c0 = cpu_seconds();
                let w0 = Instant::now();
                std::hint::black_box(model.embed(q));
                per.push((w0.elapsed().as_secs_f64() * 1e3, (cpu_seconds() - c0) * 1e3));
            }
            let wall: Vec<f64> = per.iter().map(|p| p.0).collect();
            let cpu_total: f64 = per.iter().map(|p| p.1).sum();
            println!(
                "{label}: questions ({}): median {:.2} ms wall, {:.2} ms CPU per question (mean)",
                per.len(),
                median(wall),
                cpu_total / per.len() as f64
            );
        });
    }
}

/// Recall@10 and MRR of the semantic source alone with three ways of pooling a long
/// turn's windows (see the module's documentation).
fn pooling(model: &SentenceModel, set: &std::path::Path, conversations: Option<usize>) {
    let mut all = turns(&set.join("conversations.jsonl"));
    let kept: Vec<String> = {
        let mut seen: Vec<String> = Vec::new();
        for t in &all {
            if seen.last() != Some(&t.0) {
                seen.push(t.0.clone());
            }
        }
        seen.truncate(conversations.unwrap_or(usize::MAX));
        seen
    };
    all.retain(|t| kept.contains(&t.0));
    let texts: Vec<String> = all
        .iter()
        .map(|(_, _, s, t)| match s {
            Some(s) => format!("{s}: {t}"),
            None => t.clone(),
        })
        .collect();
    let (c0, w0) = (cpu_seconds(), Instant::now());
    let mut windows: Vec<Vec<Vec<f32>>> = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(64) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        windows.extend(model.embed_windows(&refs));
    }
    let count: usize = windows.iter().map(Vec::len).sum();
    println!(
        "embedded {} turns ({count} windows) of {} conversations in {:.0} s wall, {:.0} CPU-s",
        texts.len(),
        kept.len(),
        w0.elapsed().as_secs_f64(),
        cpu_seconds() - c0
    );
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| f64::from(x * y)).sum::<f64>();
    let unit = |v: Vec<f32>| {
        let n = v
            .iter()
            .map(|x| x * x)
            .sum::<f32>()
            .sqrt()
            .max(f32::EPSILON);
        v.into_iter().map(|x| x / n).collect::<Vec<f32>>()
    };
    let questions: Vec<serde_json::Value> = std::fs::read_to_string(set.join("questions.jsonl"))
        .expect("questions")
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|q: &serde_json::Value| {
            q["conversation_id"]
                .as_str()
                .is_some_and(|c| kept.iter().any(|k| k == c))
                && q["evidence"].as_array().is_some_and(|e| !e.is_empty())
        })
        .collect();
    // A turn's vector as a weighted mean of its windows (weight by position and count):
    // the plain mean, the first window counted as much as all the others together, and
    // windows weighted 1 / (position + 1) (a long turn read whole, its opening, where the
    // topic is named, weighing most).
    let pooled = |weight: &dyn Fn(usize, usize) -> f32| -> Vec<Vec<f32>> {
        windows
            .iter()
            .map(|w| {
                let mut s = vec![0.0f32; w[0].len()];
                for (i, v) in w.iter().enumerate() {
                    let k = weight(i, w.len());
                    s.iter_mut().zip(v).for_each(|(a, b)| *a += k * b);
                }
                unit(s)
            })
            .collect()
    };
    let mean = pooled(&|_, _| 1.0);
    let opening = pooled(&|i, n| if i == 0 { (n - 1).max(1) as f32 } else { 1.0 });
    let decaying = pooled(&|i, _| 1.0 / (i + 1) as f32);
    /// A turn's score for a question: (turn index, question vector) → cosine.
    type Score<'a> = &'a dyn Fn(usize, &[f32]) -> f64;
    let ways: [(&str, Score<'_>); 5] = [
        ("first window", &|i, q| dot(&windows[i][0], q)),
        ("mean of windows", &|i, q| dot(&mean[i], q)),
        ("best window", &|i, q| {
            windows[i]
                .iter()
                .map(|w| dot(w, q))
                .fold(f64::MIN, f64::max)
        }),
        ("first = rest", &|i, q| dot(&opening[i], q)),
        ("1/(i+1) weights", &|i, q| dot(&decaying[i], q)),
    ];
    // (recall@10 sum, MRR sum, questions) overall and over questions with a long evidence turn.
    let mut totals = [[(0.0f64, 0.0f64, 0usize); 2]; 5];
    for q in &questions {
        let conv = q["conversation_id"].as_str().unwrap_or("");
        let evidence: Vec<String> = q["evidence"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_owned))
            .collect();
        let qv = model.embed(q["question"].as_str().unwrap_or(""));
        let own: Vec<usize> = (0..all.len()).filter(|&i| all[i].0 == conv).collect();
        let long = own
            .iter()
            .any(|&i| windows[i].len() > 1 && evidence.contains(&all[i].1));
        for (way, (_, score)) in ways.iter().enumerate() {
            let mut ranked: Vec<(f64, usize)> = own.iter().map(|&i| (score(i, &qv), i)).collect();
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
            let found = ranked
                .iter()
                .take(10)
                .filter(|(_, i)| evidence.contains(&all[*i].1))
                .count();
            let first = ranked
                .iter()
                .position(|(_, i)| evidence.contains(&all[*i].1))
                .map_or(0.0, |r| 1.0 / (r + 1) as f64);
            let recall = found as f64 / evidence.len() as f64;
            for (slot, counts) in [true, long].into_iter().enumerate() {
                if counts {
                    let t = &mut totals[way][slot];
                    *t = (t.0 + recall, t.1 + first, t.2 + 1);
                }
            }
        }
    }
    for (way, (name, _)) in ways.iter().enumerate() {
        let [all_q, long_q] = totals[way];
        println!(
            "{name:>16}: recall@10 {:.3}, MRR {:.3} over {} questions; with a long evidence turn {:.3} / {:.3} over {}",
            all_q.0 / all_q.2.max(1) as f64,
            all_q.1 / all_q.2.max(1) as f64,
            all_q.2,
            long_q.0 / long_q.2.max(1) as f64,
            long_q.1 / long_q.2.max(1) as f64,
            long_q.2
        );
    }
}
