//! The Redis warm tier (feature `standard`) beside the mmap segment store in the same run:
//! inserts in batches of 1,000 (one atomic script per batch: pipelined; the mmap store
//! `fdatasync`s every batch), top-10 exact search at 100,000 warm vectors (Redis through
//! its local mirror, refreshed on every search: `refresh = 0`), and the mirror catching up
//! with 1,000 vectors another process wrote.
//!
//! `cargo bench --features standard --bench redis`. Uses `$HYPERMEM_BENCH_REDIS_URL`, else
//! starts `redis-server` (no persistence) on a free loopback port and stops it at the end.

mod common;

use std::hint::black_box;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hypermem::RedisSettings;
use hypermem::hdv::{Dim, Hypervector, SeededRng};
use hypermem::store::{
    ProjectId, RedisTier, SearchRequest, SegmentStore, SegmentStoreConfig, VectorId, VectorTier,
};

const DIM: usize = 8_192;
const N: usize = 100_000;

struct Server(Option<Child>, String);

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn server() -> Server {
    if let Ok(url) = std::env::var("HYPERMEM_BENCH_REDIS_URL") {
        return Server(None, url);
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = std::env::temp_dir();
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .arg("--dir")
        .arg(&dir)
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-server on the PATH (or set HYPERMEM_BENCH_REDIS_URL)");
    let url = format!("redis://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if redis::Client::open(url.as_str())
            .and_then(|c| c.get_connection())
            .is_ok()
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Server(Some(child), url)
}

fn tier(url: &str, prefix: &str) -> RedisTier {
    let settings = RedisSettings {
        url: url.to_owned(),
        prefix: prefix.to_owned(),
        refresh: Duration::ZERO,
        ..RedisSettings::default()
    };
    RedisTier::open(Dim::new(DIM).unwrap(), &settings, "bench").unwrap()
}

fn vectors(n: usize, seed: u64) -> Vec<Hypervector> {
    let dim = Dim::new(DIM).unwrap();
    let mut rng = SeededRng::new(seed);
    (0..n)
        .map(|_| Hypervector::random_from(dim, &mut rng))
        .collect()
}

fn fill(t: &dyn VectorTier, p: &ProjectId, first: u64, vs: &[Hypervector]) {
    for (c, chunk) in vs.chunks(1_000).enumerate() {
        let items: Vec<_> = chunk
            .iter()
            .enumerate()
            .map(|(i, v)| (VectorId(first + (c * 1_000 + i) as u64), v.view()))
            .collect();
        t.insert_batch(p, &items).unwrap();
    }
}

fn bench(c: &mut Criterion) {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let server = server();
    let dim = Dim::new(DIM).unwrap();
    let p = ProjectId::new("bench").unwrap();
    let prefix = format!("bench{}", std::process::id());
    let redis = tier(&server.1, &prefix);
    let dir = common::bench_dir();
    let mmap = SegmentStore::create(
        dir.path().join("s"),
        dim,
        SegmentStoreConfig {
            hnsw_threshold: usize::MAX,
            ..SegmentStoreConfig::default()
        },
    )
    .unwrap();

    // Inserts: batches of 1,000 into an empty project of each tier.
    let batch = vectors(1_000, 1);
    let next = AtomicU64::new(10_000_000);
    let mut g = c.benchmark_group("tier_insert");
    g.sample_size(20);
    g.throughput(Throughput::Elements(1_000));
    let ins = ProjectId::new("inserts").unwrap();
    for (name, t) in [("redis", &redis as &dyn VectorTier), ("mmap", &mmap)] {
        g.bench_function(BenchmarkId::new(name, 1_000), |b| {
            b.iter(|| {
                let first = next.fetch_add(1_000, Ordering::Relaxed);
                fill(t, &ins, first, &batch);
            })
        });
    }
    g.finish();
    redis.drop_project(&ins).unwrap();

    // Search: the same 100,000 vectors in each tier.
    let all = vectors(N, 2);
    let t0 = Instant::now();
    fill(&redis, &p, 0, &all);
    let load = t0.elapsed();
    fill(&mmap, &p, 0, &all);
    let t0 = Instant::now();
    let cold_reader = tier(&server.1, &prefix);
    let synced = cold_reader.sync(&p).unwrap();
    eprintln!(
        "loaded {N} vectors into Redis in {:.2} s ({:.0}/s); a new process mirrored {synced} in {:.2} s",
        load.as_secs_f64(),
        N as f64 / load.as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
    let queries: Vec<Hypervector> = (0..16)
        .map(|i| all[i * 997].with_noise(0.1, i as u64).unwrap())
        .collect();
    let mut g = c.benchmark_group("tier_search_100k");
    g.sample_size(30);
    for (name, t) in [("redis", &cold_reader as &dyn VectorTier), ("mmap", &mmap)] {
        let mut qi = 0;
        g.bench_function(name, |b| {
            b.iter(|| {
                qi = (qi + 1) % queries.len();
                black_box(
                    t.search(&p, &SearchRequest::new(queries[qi].view(), 10))
                        .unwrap(),
                )
            })
        });
    }
    g.finish();

    // Mirror refresh: another process wrote 1,000 new vectors; one sync applies them.
    let writer = tier(&server.1, &prefix);
    let fresh = vectors(1_000, 3);
    let next = AtomicU64::new(20_000_000);
    let mut g = c.benchmark_group("redis_mirror_refresh");
    g.sample_size(20);
    g.throughput(Throughput::Elements(1_000));
    g.bench_function("1000_new", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                fill(
                    &writer,
                    &p,
                    next.fetch_add(1_000, Ordering::Relaxed),
                    &fresh,
                );
                let t = Instant::now();
                assert_eq!(cold_reader.sync(&p).unwrap(), 1_000);
                total += t.elapsed();
            }
            total
        })
    });
    g.finish();
    redis.drop_project(&p).unwrap();
}

criterion_group!(benches, bench);
criterion_main!(benches);
