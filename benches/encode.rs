//! Encoders: text (IDF-weighted words, character trigrams, order), item memory, levels and
//! the dense-embedding projector, at D = 8,192.
//!
//! `cargo bench --bench encode`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hypermem::hdv::encode::{ItemMemory, LevelEncoder, Projector, TextConfig, TextEncoder};
use hypermem::hdv::{Dim, SeededRng};

const SENTENCE: &str = "The deployment pipeline for the billing service runs nightly \
    integration tests against a staging Postgres database before promoting the build.";

fn encode(c: &mut Criterion) {
    let dim = Dim::default();
    let mut g = c.benchmark_group("encode");

    let idf = |t: &str| if t.len() <= 3 { 0.3 } else { 2.0 };
    let mut text = TextEncoder::new(dim, TextConfig::default());
    let first = text.encode(SENTENCE, &idf).unwrap();
    g.throughput(Throughput::Bytes(SENTENCE.len() as u64));
    g.bench_function("text_sentence_warm_cache", |b| {
        b.iter(|| text.encode(black_box(SENTENCE), &idf).unwrap())
    });
    assert_eq!(text.encode(SENTENCE, &idf).unwrap(), first);

    g.throughput(Throughput::Elements(1));
    let items = ItemMemory::new(dim, 1);
    g.bench_function("item_memory_uncached", |b| {
        b.iter(|| items.vector(black_box("customer_id")))
    });
    let mut cached = ItemMemory::new(dim, 1);
    g.bench_function("item_memory_cached", |b| {
        b.iter(|| cached.get(black_box("customer_id")).count_ones())
    });

    let levels = LevelEncoder::new(dim, 0.0, 1.0, 100, 3).unwrap();
    g.bench_function("level", |b| {
        b.iter(|| levels.encode(black_box(0.37)).unwrap())
    });

    let projector = Projector::new(384, dim, 5).unwrap();
    let mut rng = SeededRng::new(9);
    let embedding: Vec<f32> = (0..384).map(|_| rng.gaussian_pair().0 as f32).collect();
    g.bench_function("projector_384_to_8192", |b| {
        b.iter(|| projector.project(black_box(&embedding)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, encode);
criterion_main!(benches);
