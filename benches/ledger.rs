//! The SQLite ledger: event appends in batches of 1,000 (WAL, `synchronous = FULL`), to a
//! project without and with a full-text index (built by its first search), FTS top-10
//! latency over 100,000 and 1,000,000 events of one project, and governance plans (belief
//! operations) per second.
//!
//! `cargo bench --bench ledger` (`HDV_BENCH_QUICK=1` skips the 1,000,000-event corpus).
//! Files go to `$HYPERMEM_BENCH_DIR` or the system temp directory.

mod common;

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hypermem::governance::{Op, Ownership, Plan};
use hypermem::hdv::SeededRng;
use hypermem::ledger::{EventKind, Ledger, LedgerConfig, NewEvent};
use hypermem::store::ProjectId;

/// A Zipf-like vocabulary sampler: word `i` drawn with probability ∝ 1/(i+1).
struct Corpus {
    words: Vec<String>,
    cumulative: Vec<f64>,
    rng: SeededRng,
}

impl Corpus {
    fn new(seed: u64) -> Self {
        let syllables = [
            "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "de",
        ];
        let words: Vec<String> = (0..20_000)
            .map(|i: usize| {
                let mut w = String::new();
                let mut x = i + 7;
                while x > 0 {
                    w.push_str(syllables[x % syllables.len()]);
                    x /= syllables.len();
                }
                w
            })
            .collect();
        let mut total = 0.0;
        let cumulative = (0..words.len())
            .map(|i| {
                total += 1.0 / (i as f64 + 1.0);
                total
            })
            .collect();
        Self {
            words,
            cumulative,
            rng: SeededRng::new(seed),
        }
    }

    fn word(&mut self) -> &str {
        let total = *self.cumulative.last().unwrap();
        let x = self.rng.unit_f64() * total;
        let i = self
            .cumulative
            .partition_point(|&c| c < x)
            .min(self.words.len() - 1);
        &self.words[i]
    }

    fn sentence(&mut self) -> String {
        let n = 12 + self.rng.below(14) as usize;
        (0..n)
            .map(|_| self.word().to_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn batch(corpus: &mut Corpus, project: &ProjectId, n: usize, start: usize) -> Vec<NewEvent> {
    (0..n)
        .map(|i| {
            let role = common::turn_role(start + i);
            NewEvent::new(project.clone(), role, EventKind::Message, corpus.sentence())
                .thread(format!("t{}", (start + i) / 50))
                .session(format!("s{}", (start + i) / 500))
        })
        .collect()
}

fn append(c: &mut Criterion) {
    let dir = common::bench_dir();
    let ledger = Ledger::open(dir.path().join("ledger.db"), LedgerConfig::default()).unwrap();
    let mut g = c.benchmark_group("ledger_append");
    g.sample_size(20);
    g.throughput(Throughput::Elements(1000));
    for (name, project, searched) in [
        ("batch", "bench", false),
        ("batch_full_text", "searched", true),
    ] {
        let p = ProjectId::new(project).unwrap();
        let mut corpus = Corpus::new(1);
        let batches: Vec<Vec<NewEvent>> = (0..20)
            .map(|b| batch(&mut corpus, &p, 1000, b * 1000))
            .collect();
        if searched {
            ledger.search(&p, "anything", 1).unwrap();
        }
        let next = AtomicU64::new(0);
        g.bench_function(BenchmarkId::new(name, 1000), |b| {
            b.iter(|| {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize % batches.len();
                ledger.append_batch(&batches[i]).unwrap()
            })
        });
    }
    g.finish();
}

fn search(c: &mut Criterion) {
    let sizes: &[usize] = if std::env::var_os("HDV_BENCH_QUICK").is_some() {
        &[100_000]
    } else {
        &[100_000, 1_000_000]
    };
    for &n in sizes {
        let dir = common::bench_dir();
        let ledger = Ledger::open(dir.path().join("ledger.db"), LedgerConfig::default()).unwrap();
        let p = ProjectId::new("bench").unwrap();
        let other = ProjectId::new("other").unwrap();
        let mut corpus = Corpus::new(2);
        let t0 = std::time::Instant::now();
        for start in (0..n).step_by(10_000) {
            ledger
                .append_batch(&batch(&mut corpus, &p, 10_000, start))
                .unwrap();
        }
        ledger
            .append_batch(&batch(&mut corpus, &other, 10_000, 0))
            .unwrap();
        eprintln!(
            "ledger: {} events appended in {:.1} s ({:.0} events/s, batches of 10,000)",
            n + 10_000,
            t0.elapsed().as_secs_f64(),
            (n + 10_000) as f64 / t0.elapsed().as_secs_f64()
        );
        // Queries: three mid-frequency words, as a user question would have.
        let mut rng = SeededRng::new(3);
        let queries: Vec<String> = (0..50)
            .map(|_| {
                (0..3)
                    .map(|_| corpus.words[50 + rng.below(2000) as usize].clone())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        // The first search builds the project's full-text index from its events.
        let t0 = std::time::Instant::now();
        assert!(!ledger.search(&p, &queries[0], 10).unwrap().is_empty());
        eprintln!(
            "ledger: the first search indexed {n} events in {:.1} s",
            t0.elapsed().as_secs_f64()
        );
        let next = AtomicU64::new(0);
        let mut g = c.benchmark_group(format!("ledger_fts_top10_n{n}"));
        g.sample_size(50);
        g.bench_function("three_word_query", |b| {
            b.iter(|| {
                let q = &queries[next.fetch_add(1, Ordering::Relaxed) as usize % queries.len()];
                ledger.search(&p, black_box(q), 10).unwrap()
            })
        });
        g.finish();
    }
}

fn beliefs(c: &mut Criterion) {
    let dir = common::bench_dir();
    let ledger = Ledger::open(dir.path().join("ledger.db"), LedgerConfig::default()).unwrap();
    let p = ProjectId::new("bench").unwrap();
    let mut corpus = Corpus::new(4);
    let evidence = ledger
        .append_batch(&batch(&mut corpus, &p, 100, 0))
        .unwrap();
    let next = AtomicU64::new(0);
    let mut g = c.benchmark_group("ledger_beliefs");
    g.throughput(Throughput::Elements(1));
    g.bench_function("assert_new_key", |b| {
        b.iter(|| {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let op = Op::Assert {
                key: format!("key.{i}"),
                statement: format!("statement {i}"),
                ownership: Ownership::User,
                agent: None,
                confidence: 0.9,
                evidence: vec![evidence[(i % 100) as usize & !1]],
            };
            ledger
                .apply_plan(&Plan::single(p.clone(), format!("a{i}"), op))
                .unwrap()
        })
    });
    g.bench_function("correct_same_key", |b| {
        b.iter(|| {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let op = if ledger.current_belief(&p, "hot.key").unwrap().is_none() {
                Op::Assert {
                    key: "hot.key".into(),
                    statement: "first".into(),
                    ownership: Ownership::Project,
                    agent: None,
                    confidence: 1.0,
                    evidence: vec![evidence[1]],
                }
            } else {
                Op::Correct {
                    key: "hot.key".into(),
                    statement: format!("value {i}"),
                    evidence: vec![evidence[1]],
                    expected_version: None,
                    confidence: 1.0,
                }
            };
            ledger
                .apply_plan(&Plan::single(p.clone(), format!("c{i}"), op))
                .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, append, search, beliefs);
criterion_main!(benches);
