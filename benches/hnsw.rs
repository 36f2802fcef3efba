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

const EFS: [usize; 5] = [16, 32, 64, 128, 256];

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
    for ef in EFS {
        index.set_ef_search(ef);
        let (cpu0, t0) = (cpu_seconds(), Instant::now());
        let mut correct = 0usize;
        for (q, &tenth) in data.queries.iter().zip(&data.tenth) {
            let hits = index.search(&SearchRequest::new(q.view(), 10)).unwrap();
            correct += hits.iter().filter(|h| h.distance <= tenth).count();
        }
        let (cpu, wall) = (cpu_seconds() - cpu0, t0.elapsed().as_secs_f64());
        let nq = data.queries.len() as f64;
        println!(
            "hnsw {} ef={ef:<3} recall@10 {:.4}  {:.0} queries per CPU-second  ({:.0} QPS wall, 1 thread)",
            data.name,
            correct as f64 / (10.0 * nq),
            nq / cpu.max(1e-9),
            nq / wall
        );
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
