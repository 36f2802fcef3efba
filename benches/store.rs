//! The mmap segment store: append throughput with the production durability setting
//! (every batch `fdatasync`ed twice before it is acknowledged), and exact search through the
//! store at N = 100,000 and 1,000,000 vectors of 10,048 bits.
//!
//! `cargo bench --bench store` (`HDV_BENCH_QUICK=1` skips N = 1,000,000). Files go to
//! `$HYPERMEM_BENCH_DIR` or the system temp directory.

mod common;

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hypermem::hdv::{Dim, Hypervector, SeededRng};
use hypermem::store::{
    ProjectId, SearchRequest, SegmentStore, SegmentStoreConfig, VectorId, VectorTier,
};

const DIM: usize = 10_048;

fn random_batch(dim: Dim, n: usize, seed: u64) -> Vec<Hypervector> {
    let mut rng = SeededRng::new(seed);
    (0..n)
        .map(|_| Hypervector::random_from(dim, &mut rng))
        .collect()
}

fn no_hnsw() -> SegmentStoreConfig {
    SegmentStoreConfig {
        hnsw_threshold: usize::MAX,
        ..SegmentStoreConfig::default()
    }
}

fn append(c: &mut Criterion) {
    let dim = Dim::new(DIM).unwrap();
    let dir = common::bench_dir();
    let store = SegmentStore::create(dir.path().join("s"), dim, no_hnsw()).unwrap();
    let p = ProjectId::new("bench").unwrap();
    let next = AtomicU64::new(0);
    let mut g = c.benchmark_group("store_append");
    g.sample_size(20);
    for batch in [1usize, 100, 1000] {
        let vectors = random_batch(dim, batch, batch as u64);
        g.throughput(Throughput::Elements(batch as u64));
        g.bench_function(BenchmarkId::new("synced_batch", batch), |b| {
            b.iter(|| {
                let first = next.fetch_add(batch as u64, Ordering::Relaxed);
                let items: Vec<_> = vectors
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (VectorId(first + i as u64), v.view()))
                    .collect();
                store.insert_batch(&p, &items).unwrap();
            })
        });
    }
    g.finish();
    eprintln!(
        "appended {} vectors ({:.2} GB) during the append benchmarks",
        store.len(&p),
        (store.len(&p) * dim.bytes()) as f64 / 1e9
    );
}

fn search(c: &mut Criterion) {
    let dim = Dim::new(DIM).unwrap();
    let sizes: &[usize] = if std::env::var_os("HDV_BENCH_QUICK").is_some() {
        &[100_000]
    } else {
        &[100_000, 1_000_000]
    };
    for &n in sizes {
        let dir = common::bench_dir();
        let store = SegmentStore::create(dir.path().join("s"), dim, no_hnsw()).unwrap();
        let p = ProjectId::new("bench").unwrap();
        for start in (0..n).step_by(10_000) {
            let vs = random_batch(dim, 10_000, start as u64);
            let items: Vec<_> = vs
                .iter()
                .enumerate()
                .map(|(i, v)| (VectorId((start + i) as u64), v.view()))
                .collect();
            store.insert_batch(&p, &items).unwrap();
        }
        let target = store.get(&p, VectorId(n as u64 / 2)).unwrap().unwrap();
        let query = target.with_noise(0.2, 1).unwrap();
        let request = SearchRequest::new(query.view(), 10);
        assert_eq!(
            store.search(&p, &request).unwrap()[0].id,
            VectorId(n as u64 / 2)
        );
        let mut g = c.benchmark_group(format!("store_search_n{n}"));
        g.sample_size(10);
        g.throughput(Throughput::Bytes((n * dim.bytes()) as u64));
        g.bench_function(BenchmarkId::new(hypermem::hdv::kernel_name(), DIM), |b| {
            b.iter(|| store.search(&p, black_box(&request)).unwrap())
        });
        g.finish();
    }
}

criterion_group!(benches, append, search);
criterion_main!(benches);
