//! End to end through `Memory` on the lite profile: observe throughput (ledger + encode +
//! vector store + synapse link, batches of 1,000) and recall latency (p50 / p99 over 200
//! distinct queries, on one core) at 10,000 and 100,000 memories (1,000,000 with
//! `HYPERMEM_BENCH_LARGE=1`), then the cost of a restart: reopening the data directory and
//! the first recall (which loads the lexical index saved on close).
//!
//! Before them, the ingest of 40,000 conversation turns of about 2 KB
//! (`HYPERMEM_BENCH_TURNS`, 0 skips it). Observation rates are given per wall second and
//! per CPU-second of the process.
//!
//! `cargo bench --bench recall`

use std::time::Instant;

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use hypermem::hdv::SeededRng;
use hypermem::ledger::{EventKind, NewEvent};
use hypermem::store::ProjectId;
use hypermem::{Memory, Profile, ProfileKind};

const SUBJECTS: &[&str] = &[
    "deploy", "database", "invoice", "editor", "backup", "meeting", "budget", "laptop", "garden",
    "flight",
];
const VERBS: &[&str] = &[
    "prefers",
    "scheduled",
    "moved",
    "fixed",
    "asked about",
    "cancelled",
    "approved",
    "reviewed",
];
const DETAILS: &[&str] = &[
    "on Tuesday",
    "for the Berlin office",
    "after the outage",
    "with the new vendor",
    "before the release",
    "at 9am",
    "in the staging cluster",
    "for next quarter",
];

fn sentence(rng: &mut SeededRng, i: usize) -> String {
    let pick = |rng: &mut SeededRng, xs: &[&'static str]| xs[rng.below(xs.len() as u64) as usize];
    format!(
        "Note {i}: the user {} the {} {} (ticket {}).",
        pick(rng, VERBS),
        pick(rng, SUBJECTS),
        pick(rng, DETAILS),
        rng.below(100_000)
    )
}

/// Ingest of `HYPERMEM_BENCH_TURNS` (default 40,000) conversation turns of about 2 KB
/// (the size of BEAM-500K's turns), in batches of 1,000: wall and CPU rates.
fn long_turns(profile: &Profile) {
    let n: usize = std::env::var("HYPERMEM_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40_000);
    if n == 0 {
        return;
    }
    let dir = common::bench_dir();
    let memory = Memory::open(profile, Some(dir.path())).unwrap();
    let p = ProjectId::new("turns").unwrap();
    let mut rng = SeededRng::new(2);
    let mut turn = |i: usize| {
        let mut text = String::with_capacity(2_100);
        let mut k = 0;
        while text.len() < 2_000 {
            text.push_str(&sentence(&mut rng, i * 100 + k));
            text.push(' ');
            k += 1;
        }
        text
    };
    let mut bytes = 0;
    let (secs, cpu) = observe_all(&memory, n, |i| {
        let text = turn(i);
        bytes += text.len();
        NewEvent::new(p.clone(), common::turn_role(i), EventKind::Message, text)
            .session(format!("s{}", i / 50))
    });
    println!(
        "recall bench: observed {n} turns of {:.0} bytes on average in {secs:.1} s = {:.0} turns/s end to end, {:.0} per CPU-second (batches of 1,000, 2 cores)",
        bytes as f64 / n as f64,
        n as f64 / secs,
        n as f64 / cpu.max(1e-9)
    );
}

/// Observes events `0..n` made by `event`, in batches of 1,000; returns the wall and CPU
/// seconds it took.
fn observe_all(memory: &Memory, n: usize, mut event: impl FnMut(usize) -> NewEvent) -> (f64, f64) {
    let (t, cpu) = (Instant::now(), common::cpu_seconds());
    for start in (0..n).step_by(1000) {
        let batch: Vec<_> = (start..(start + 1000).min(n)).map(&mut event).collect();
        memory.observe_batch(&batch).unwrap();
    }
    (t.elapsed().as_secs_f64(), common::cpu_seconds() - cpu)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn recall(c: &mut Criterion) {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let mut profile = Profile::load(Profile::bundled_path(ProfileKind::Lite)).unwrap();
    // HYPERMEM_BENCH_MODEL=<dir>: the same with an embedding model for the semantic
    // source. A static model (model2vec) embeds every observation and query. A sentence
    // model (`--features sentence`) embeds queries; its observations would wait for the
    // background embedder (hours at 100,000), so they carry a caller embedding of the
    // model's size instead (the semantic scan costs the same whoever made the vectors),
    // and each query's embedding time is reported apart from recall's.
    let mut sentence_dim = None;
    if let Some(dir) = std::env::var_os("HYPERMEM_BENCH_MODEL") {
        let model = hypermem::semantic::Model::load(std::path::Path::new(&dir)).unwrap();
        if model.kind() == "sentence" {
            sentence_dim = Some(model.dim());
        }
        profile.semantic.model = Some(dir.into());
        println!(
            "recall bench: with the {} model in {:?}",
            model.kind(),
            profile.semantic.model
        );
    }
    let mut sizes = vec![10_000, 100_000];
    if std::env::var_os("HYPERMEM_BENCH_LARGE").is_some() {
        sizes.push(1_000_000);
    }
    let one_core = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    long_turns(&profile);
    for n in sizes {
        let dir = tempfile::tempdir().unwrap();
        let memory = Memory::open(&profile, Some(dir.path())).unwrap();
        let p = ProjectId::new("bench").unwrap();
        let mut rng = SeededRng::new(1);
        let (secs, cpu) = observe_all(&memory, n, |i| {
            let mut e = NewEvent::new(
                p.clone(),
                common::turn_role(i),
                EventKind::Message,
                sentence(&mut rng, i),
            )
            .thread(format!("t{}", i / 20));
            if let Some(dim) = sentence_dim {
                let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                e.embedding = Some(
                    (0..dim)
                        .map(|_| {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                        })
                        .collect(),
                );
            }
            e
        });
        println!(
            "recall bench: observed {n} memories in {secs:.1} s = {:.0} observations/s end to end, {:.0} per CPU-second (batches of 1,000, 2 cores)",
            n as f64 / secs,
            n as f64 / cpu.max(1e-9)
        );
        // Past the HNSW threshold the graph is extended off the write path; bring it up to
        // date before measuring recall (the time it takes is reported).
        let (t, cpu) = (Instant::now(), common::cpu_seconds());
        let left = memory.catch_up_indexes(None).unwrap();
        assert_eq!(left, 0);
        if t.elapsed().as_secs_f64() > 0.05 {
            println!(
                "recall bench: the search graph took {:.1} s ({:.1} CPU-seconds) to catch up with {n} memories",
                t.elapsed().as_secs_f64(),
                common::cpu_seconds() - cpu
            );
        }
        let queries: Vec<String> = (0..200)
            .map(|_| {
                let s = SUBJECTS[rng.below(SUBJECTS.len() as u64) as usize];
                let d = DETAILS[rng.below(DETAILS.len() as u64) as usize];
                format!("what did the user decide about the {s} {d}")
            })
            .collect();
        if sentence_dim.is_some() {
            // The questions' embeddings, once each (recall keeps them for repeats).
            let (t, cpu) = (Instant::now(), common::cpu_seconds());
            one_core.install(|| {
                for q in &queries {
                    memory.recall(&p, q, 10).unwrap();
                }
            });
            println!(
                "recall bench: n = {n}: first recall of each of the {} queries, question embedding included: {:.2} ms mean, {:.2} CPU-ms",
                queries.len(),
                t.elapsed().as_secs_f64() * 1e3 / queries.len() as f64,
                (common::cpu_seconds() - cpu) * 1e3 / queries.len() as f64
            );
        }
        let mut times: Vec<f64> = one_core.install(|| {
            queries
                .iter()
                .map(|q| {
                    let t = Instant::now();
                    let hits = memory.recall(&p, q, 10).unwrap();
                    assert!(!hits.is_empty());
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect()
        });
        times.sort_by(f64::total_cmp);
        println!(
            "recall bench: n = {n}: recall latency p50 {:.2} ms, p99 {:.2} ms (one core, 200 queries)",
            percentile(&times, 0.5),
            percentile(&times, 0.99)
        );
        // A restart: open (repair check, trace restore) and the first recall, which loads
        // the project's lexical index saved on close.
        drop(memory);
        let t = Instant::now();
        let memory = Memory::open(&profile, Some(dir.path())).unwrap();
        let open_secs = t.elapsed().as_secs_f64();
        let t = Instant::now();
        one_core.install(|| memory.recall(&p, &queries[0], 10).unwrap());
        println!(
            "recall bench: n = {n}: reopen {open_secs:.2} s, first recall after reopen {:.1} ms (loads the saved lexical index)",
            t.elapsed().as_secs_f64() * 1e3
        );
        let mut g = c.benchmark_group(format!("recall_n{n}"));
        g.sample_size(20);
        let mut i = 0;
        g.bench_function("recall_top10_one_core", |b| {
            b.iter(|| {
                i += 1;
                one_core.install(|| memory.recall(&p, &queries[i % queries.len()], 10).unwrap())
            })
        });
        g.finish();
    }
}

criterion_group!(benches, recall);
criterion_main!(benches);
