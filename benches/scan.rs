//! Exact top-10 scan of N = 100,000 and 1,000,000 vectors at D = 10,048: one query and a
//! batch of 100, on 1 and 2 threads, for the active kernel (and the scalar baseline at
//! 100,000). Throughput is reported in bytes of vectors scanned per query.
//!
//! `cargo bench --bench scan` (set `HDV_BENCH_QUICK=1` to skip N = 1,000,000)

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hypermem::hdv::{Block, BlockBuf, Dim, Kernel, Scan, SeededRng};
use rayon::prelude::*;

const DIM: usize = 10_048;
const K: usize = 10;
const BATCH: usize = 100;

/// `n` random vectors, held as the library holds a block it owns (huge pages when large).
fn random_vectors(n: usize, dim: Dim) -> BlockBuf {
    let w = dim.words();
    let mut data = BlockBuf::zeroed(dim, n);
    data.words_mut()
        .par_chunks_mut(w * 4096)
        .enumerate()
        .for_each(|(i, chunk)| {
            let mut rng = SeededRng::new(0xDA7A + i as u64);
            chunk.iter_mut().for_each(|x| *x = rng.next_u64());
        });
    data
}

fn scan(c: &mut Criterion) {
    let dim = Dim::new(DIM).unwrap();
    let active = hypermem::hdv::kernels::active();
    eprintln!("active kernel: {active}");
    let sizes: &[usize] = if std::env::var_os("HDV_BENCH_QUICK").is_some() {
        &[100_000]
    } else {
        &[100_000, 1_000_000]
    };
    let pools: Vec<(usize, rayon::ThreadPool)> = [1, 2]
        .into_iter()
        .map(|t| {
            (
                t,
                rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build()
                    .unwrap(),
            )
        })
        .collect();
    for &n in sizes {
        let data = random_vectors(n, dim);
        let block = data.block();
        // Queries are stored vectors with 20 % noise, so each has a known nearest neighbour.
        let planted: Vec<usize> = (0..BATCH).map(|i| (i * 7919) % n).collect();
        let queries: Vec<u64> = planted
            .iter()
            .flat_map(|&i| {
                block
                    .get(i)
                    .unwrap()
                    .to_owned()
                    .with_noise(0.2, i as u64)
                    .unwrap()
                    .into_words()
            })
            .collect();
        let qblock = Block::new(&queries, dim).unwrap();
        let q0 = qblock.get(0).unwrap();

        let mut g = c.benchmark_group(format!("scan_single_n{n}"));
        g.sample_size(10);
        g.throughput(Throughput::Bytes((n * dim.bytes()) as u64));
        let mut kernels = vec![active];
        if n <= 100_000 && active != Kernel::scalar() {
            kernels.push(Kernel::scalar());
        }
        for &kernel in &kernels {
            let s = Scan::new(K).kernel(kernel);
            assert_eq!(s.top_k(&block, &q0).unwrap()[0].index, planted[0]);
            for (threads, pool) in &pools {
                let id = BenchmarkId::new(format!("{kernel}/threads{threads}"), DIM);
                g.bench_function(id, |b| {
                    b.iter(|| {
                        pool.install(|| {
                            if *threads == 1 {
                                s.top_k(&block, black_box(&q0)).unwrap()
                            } else {
                                s.par_top_k(&block, black_box(&q0)).unwrap()
                            }
                        })
                    })
                });
            }
        }
        g.finish();

        let mut g = c.benchmark_group(format!("scan_batch{BATCH}_n{n}"));
        g.sample_size(10);
        // Per-batch throughput: BATCH queries each reading the whole block.
        g.throughput(Throughput::Elements(BATCH as u64));
        let s = Scan::new(K).kernel(active);
        let hits = s.top_k_batch(&block, &qblock).unwrap();
        for (h, &p) in hits.iter().zip(&planted) {
            assert_eq!(h[0].index, p);
        }
        for (threads, pool) in &pools {
            let id = BenchmarkId::new(format!("{active}/threads{threads}"), DIM);
            g.bench_function(id, |b| {
                b.iter(|| {
                    pool.install(|| {
                        if *threads == 1 {
                            s.top_k_batch(&block, black_box(&qblock)).unwrap()
                        } else {
                            s.par_top_k_batch(&block, black_box(&qblock)).unwrap()
                        }
                    })
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, scan);
criterion_main!(benches);
