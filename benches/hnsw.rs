//! HNSW over bit-level Hamming distance: build rate (vectors per CPU-second), query rate
//! (queries per CPU-second, one thread) and tie-aware recall@10 at several `ef_search`,
//! printed as a report, plus criterion timings of single queries.
//!
//! Data: the sets written by `../shared/bench/make_data.py` (`clustered_100000`,
//! `random_100000`) in `$HYPERMEM_ANN_DATA`; without it, an in-process clustered set of
//! 20,000 vectors (same recipe: 1,000-centre-style noise 10–20 %) so the bench always runs.
//!
//! ```sh
//! python make_data.py --kind clustered --n 100000 --nq 1000 --out /tmp/anndata
//! HYPERMEM_ANN_DATA=/tmp/anndata cargo bench --bench hnsw
//! ```

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use hypermem::hdv::{Dim, Hypervector, SeededRng};
use hypermem::index::{Hnsw, HnswConfig};
use hypermem::store::{SearchRequest, VectorId};

const EFS: [usize; 8] = [16, 24, 32, 48, 64, 96, 128, 256];
/// Recall levels at which query rates are compared (interpolated over `ef`).
const LEVELS: [f64; 3] = [0.98, 0.99, 0.998];
/// Passes over the queries per `ef`; the median pass is reported.
const PASSES: usize = 3;

struct DataSet {
    name: String,
    dim: Dim,
    base: Vec<Hypervector>,
    queries: Vec<Hypervector>,
    /// Exact distance of each query's 10th neighbour.
    tenth: Vec<u32>,
}

/// Process CPU seconds (user + system) from /proc/self/stat.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// This thread's CPU time in seconds (nanosecond resolution, from the scheduler).
fn thread_cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or_else(cpu_seconds, |ns| ns / 1e9)
}

/// Bits searches route on (`HYPERMEM_SCREEN_BITS`, default the index's own default).
fn screen_bits() -> usize {
    std::env::var("HYPERMEM_SCREEN_BITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(HnswConfig::default().screen_bits)
}

/// Queries per CPU-second at `level` recall, linearly interpolated between the measured
/// `(recall, rate)` points (None when no point reaches it).
fn rate_at(points: &[(f64, f64)], level: f64) -> Option<f64> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let hi = sorted.iter().position(|p| p.0 >= level)?;
    if hi == 0 {
        return Some(sorted[0].1);
    }
    let (a, b) = (sorted[hi - 1], sorted[hi]);
    Some(a.1 + (b.1 - a.1) * (level - a.0) / (b.0 - a.0).max(1e-12))
}

fn load(dir: &Path, name: &str) -> Option<DataSet> {
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).ok()?)
            .ok()?;
    let (nb, k, bits) = (
        meta["nbytes"].as_u64()? as usize,
        meta["k"].as_u64()? as usize,
        meta["dbits"].as_u64()? as usize,
    );
    let dim = Dim::new(bits).ok()?;
    let read = |suffix: &str| std::fs::read(dir.join(format!("{name}_{suffix}.bin"))).ok();
    let vectors = |bytes: Vec<u8>| -> Vec<Hypervector> {
        bytes
            .chunks_exact(nb)
            .map(|c| Hypervector::from_le_bytes(dim, c).unwrap())
            .collect()
    };
    let gt = read("gt_dist")?;
    let tenth = gt
        .chunks_exact(4 * k)
        .map(|row| u32::from_le_bytes(row[4 * 9..4 * 10].try_into().unwrap()))
        .collect();
    Some(DataSet {
        name: name.to_owned(),
        dim,
        base: vectors(read("base")?),
        queries: vectors(read("query")?),
        tenth,
    })
}

fn synthetic() -> DataSet {
    let dim = Dim::new(10_048).unwrap();
    let mut rng = SeededRng::new(7);
    let centres: Vec<_> = (0..200)
        .map(|_| Hypervector::random_from(dim, &mut rng))
        .collect();
    let member = |rng: &mut SeededRng| {
        let c = &centres[rng.below(200) as usize];
        let p = 0.10 + 0.10 * rng.unit_f64();
        c.with_noise(p, rng.next_u64()).unwrap()
    };
    let base: Vec<_> = (0..20_000).map(|_| member(&mut rng)).collect();
    let queries: Vec<_> = (0..200).map(|_| member(&mut rng)).collect();
    let tenth = queries
        .iter()
        .map(|q| {
            let mut d: Vec<u32> = base.iter().map(|v| v.hamming(q)).collect();
            d.sort_unstable();
            d[9]
        })
        .collect();
    DataSet {
        name: "synthetic_clustered_20000".to_owned(),
        dim,
        base,
        queries,
        tenth,
    }
}

fn report_and_bench(c: &mut Criterion, data: &DataSet) {
    let config = HnswConfig {
        m: 16,
        ef_construction: 128,
        ef_search: 64,
        max_elements: data.base.len(),
        screen_bits: screen_bits(),
    };
    let items: Vec<_> = data
        .base
        .iter()
        .enumerate()
        .map(|(i, v)| (VectorId(i as u64), v.view()))
        .collect();
    let (cpu0, t0) = (cpu_seconds(), Instant::now());
    let mut index = Hnsw::build(data.dim, config, &items).unwrap();
    let (cpu, wall) = (cpu_seconds() - cpu0, t0.elapsed().as_secs_f64());
    println!(
        "hnsw {} n={} M=16 efC=128 build (2 threads: parallel neighbour search): {:.1} s wall, {:.1} CPU-s, {:.0} vectors per CPU-second",
        data.name,
        data.base.len(),
        wall,
        cpu,
        data.base.len() as f64 / cpu,
    );
    println!("screen_bits = {} (0: whole vectors)", config.screen_bits);
    let mut points = Vec::new();
    for ef in EFS {
        index.set_ef_search(ef);
        let mut passes = Vec::with_capacity(PASSES);
        let mut correct = 0usize;
        for _ in 0..PASSES {
            correct = 0;
            let (cpu0, t0) = (thread_cpu_seconds(), Instant::now());
            for (q, &tenth) in data.queries.iter().zip(&data.tenth) {
                let hits = index.search(&SearchRequest::new(q.view(), 10)).unwrap();
                correct += hits.iter().filter(|h| h.distance <= tenth).count();
            }
            passes.push((thread_cpu_seconds() - cpu0, t0.elapsed().as_secs_f64()));
        }
        passes.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (cpu, wall) = passes[PASSES / 2];
        let nq = data.queries.len() as f64;
        let recall = correct as f64 / (10.0 * nq);
        points.push((recall, nq / cpu.max(1e-9)));
        println!(
            "hnsw {} ef={ef:<3} recall@10 {recall:.4}  {:.0} queries per CPU-second  ({:.0} QPS wall, 1 thread, median of {PASSES})",
            data.name,
            nq / cpu.max(1e-9),
            nq / wall
        );
    }
    for level in LEVELS {
        match rate_at(&points, level) {
            Some(rate) => println!(
                "hnsw {} at recall@10 {level}: {rate:.0} queries per CPU-second (interpolated over ef)",
                data.name
            ),
            None => println!("hnsw {} never reaches recall@10 {level}", data.name),
        }
    }
    let mut g = c.benchmark_group(format!("hnsw_search_{}", data.name));
    for ef in [32, 64] {
        index.set_ef_search(ef);
        let q = &data.queries[0];
        g.bench_function(BenchmarkId::new("ef", ef), |b| {
            b.iter(|| {
                index
                    .search(&SearchRequest::new(black_box(q.view()), 10))
                    .unwrap()
            })
        });
    }
    g.finish();
}

fn hnsw(c: &mut Criterion) {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let sets: Vec<DataSet> = match std::env::var_os("HYPERMEM_ANN_DATA") {
        Some(dir) => ["clustered_100000", "random_100000"]
            .iter()
            .filter_map(|n| load(Path::new(&dir), n))
            .collect(),
        None => Vec::new(),
    };
    if sets.is_empty() {
        eprintln!("HYPERMEM_ANN_DATA not set or empty: using an in-process clustered set");
        report_and_bench(c, &synthetic());
    }
    for data in &sets {
        report_and_bench(c, data);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = hnsw
}
criterion_main!(benches);
