//! Bundling n = 3, 11, 101, 1,001 vectors of D = 10,048 bits: `hdv::bundle` (counts block
//! by block in registers) and the bit-sliced accumulator (`add_all` and one-by-one `add`)
//! against a byte-per-bit counter loop, each followed by majority binarization with a
//! seeded coin; and reading all counters back at once
//! against a loop of `counter(i)`.
//!
//! `cargo bench --bench bundle`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hypermem::hdv::{self, Bundler, Dim, Hypervector, SeededRng};

const DIM: usize = 10_048;

/// The baseline: one counter per bit, incremented bit by bit.
fn byte_per_bit(vectors: &[Hypervector], dim: Dim, seed: u64) -> Hypervector {
    let mut counts = vec![0u16; dim.bits()];
    for v in vectors {
        for (i, c) in counts.iter_mut().enumerate() {
            *c += ((v.words()[i / 64] >> (i % 64)) & 1) as u16;
        }
    }
    let n = vectors.len() as u16;
    let mut rng = SeededRng::new(seed);
    let mut out = Hypervector::zeros(dim);
    let mut coin = 0;
    for (i, &c) in counts.iter().enumerate() {
        if i % 64 == 0 {
            coin = rng.next_u64();
        }
        let bit = if 2 * c > n {
            true
        } else if 2 * c == n {
            (coin >> (i % 64)) & 1 == 1
        } else {
            false
        };
        out.set_bit(i, bit);
    }
    out
}

fn bundle(c: &mut Criterion) {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let dim = Dim::new(DIM).unwrap();
    let mut g = c.benchmark_group("bundle");
    for n in [3usize, 11, 101, 1001] {
        let vectors: Vec<_> = (0..n as u64).map(|s| Hypervector::random(dim, s)).collect();
        let mut b = Bundler::new(dim);
        b.add_all(&vectors);
        let sliced = b.binarize(7).unwrap();
        assert_eq!(
            sliced,
            byte_per_bit(&vectors, dim, 7),
            "same majority, same coin"
        );
        assert_eq!(hdv::bundle(&vectors, 7).unwrap(), sliced);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("bundle", n), &n, |bench, _| {
            bench.iter(|| hdv::bundle(black_box(&vectors), 7).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("bitsliced_add_all", n), &n, |bench, _| {
            bench.iter(|| {
                let mut b = Bundler::new(dim);
                b.add_all(black_box(&vectors));
                b.binarize(7).unwrap()
            })
        });
        g.bench_with_input(BenchmarkId::new("bitsliced_add", n), &n, |bench, _| {
            bench.iter(|| {
                let mut b = Bundler::new(dim);
                for v in black_box(&vectors) {
                    b.add(v);
                }
                b.binarize(7).unwrap()
            })
        });
        g.bench_with_input(BenchmarkId::new("byte_per_bit", n), &n, |bench, _| {
            bench.iter(|| byte_per_bit(black_box(&vectors), dim, 7))
        });
    }
    // Reading every counter back (101 votes): one pass over the planes against a loop of
    // `counter(i)`.
    let vectors: Vec<_> = (0..101u64).map(|s| Hypervector::random(dim, s)).collect();
    let mut b = Bundler::new(dim);
    b.add_all(&vectors);
    g.throughput(Throughput::Elements(DIM as u64));
    g.bench_function("counters_all_101", |bench| {
        bench.iter(|| black_box(&b).counters())
    });
    g.bench_function("counter_loop_101", |bench| {
        bench.iter(|| (0..DIM).map(|i| black_box(&b).counter(i)).sum::<i64>())
    });
    g.finish();
}

criterion_group!(benches, bundle);
criterion_main!(benches);
