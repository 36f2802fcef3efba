//! End to end through `Memory` on the lite profile: observe throughput (ledger + encode +
//! vector store + synapse link, batches of 1,000) and recall latency (p50 / p99 over 200
//! distinct queries, on one core) at 10,000 and 100,000 memories (1,000,000 with
//! `HYPERMEM_BENCH_LARGE=1`), then the cost of a restart: reopening the data directory and
//! the first recall (which loads the lexical index saved on close).
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

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn recall(c: &mut Criterion) {
    let mut profile = Profile::load(Profile::bundled_path(ProfileKind::Lite)).unwrap();
    // HYPERMEM_BENCH_MODEL=<dir>: the same with a static embedding model (model2vec format)
    // embedding every observation and query for the semantic source.
    if let Some(dir) = std::env::var_os("HYPERMEM_BENCH_MODEL") {
        profile.semantic.model = Some(dir.into());
        println!(
            "recall bench: with the static model in {:?}",
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
    for n in sizes {
        let dir = tempfile::tempdir().unwrap();
        let memory = Memory::open(&profile, Some(dir.path())).unwrap();
        let p = ProjectId::new("bench").unwrap();
        let mut rng = SeededRng::new(1);
        let t = Instant::now();
        for start in (0..n).step_by(1000) {
            let batch: Vec<_> = (start..start + 1000)
                .map(|i| {
                    NewEvent::new(
                        p.clone(),
                        common::turn_role(i),
                        EventKind::Message,
                        sentence(&mut rng, i),
                    )
                    .thread(format!("t{}", i / 20))
                })
                .collect();
            memory.observe_batch(&batch).unwrap();
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "recall bench: observed {n} memories in {secs:.1} s = {:.0} observations/s end to end (batches of 1,000, 2 cores)",
            n as f64 / secs
        );
        let queries: Vec<String> = (0..200)
            .map(|_| {
                let s = SUBJECTS[rng.below(SUBJECTS.len() as u64) as usize];
                let d = DETAILS[rng.below(DETAILS.len() as u64) as usize];
                format!("what did the user decide about the {s} {d}")
            })
            .collect();
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
