//! Pair distance per kernel tier at D = 8,192 / 10,048 / 16,384, plus bind and permute.
//!
//! `cargo bench --bench kernels`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hypermem::hdv::{Dim, Hypervector, Kernel};

const DIMS: [usize; 3] = [8_192, 10_048, 16_384];

fn pair_distance(c: &mut Criterion) {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let mut g = c.benchmark_group("pair_distance");
    for bits in DIMS {
        let dim = Dim::new(bits).unwrap();
        let (a, b) = (Hypervector::random(dim, 1), Hypervector::random(dim, 2));
        let expected = Kernel::scalar().hamming(a.words(), b.words());
        g.throughput(Throughput::Bytes(2 * dim.bytes() as u64));
        for kernel in Kernel::available() {
            assert_eq!(kernel.hamming(a.words(), b.words()), expected);
            g.bench_with_input(BenchmarkId::new(kernel.name(), bits), &(), |bench, _| {
                bench.iter(|| kernel.hamming(black_box(a.words()), black_box(b.words())))
            });
        }
    }
    g.finish();
}

fn bind_permute(c: &mut Criterion) {
    let mut g = c.benchmark_group("algebra");
    for bits in DIMS {
        let dim = Dim::new(bits).unwrap();
        let (a, b) = (Hypervector::random(dim, 1), Hypervector::random(dim, 2));
        g.throughput(Throughput::Bytes(dim.bytes() as u64));
        g.bench_with_input(BenchmarkId::new("bind", bits), &(), |bench, _| {
            bench.iter(|| black_box(&a).bind(black_box(&b)))
        });
        g.bench_with_input(BenchmarkId::new("bind_assign", bits), &(), |bench, _| {
            let mut x = a.clone();
            bench.iter(|| x.bind_assign(black_box(&b)))
        });
        g.bench_with_input(BenchmarkId::new("permute_1", bits), &(), |bench, _| {
            bench.iter(|| black_box(&a).permute(1))
        });
        g.bench_with_input(BenchmarkId::new("permute_777", bits), &(), |bench, _| {
            bench.iter(|| black_box(&a).permute(777))
        });
        assert_eq!(a.permute(777).inverse_permute(777), a);
    }
    g.finish();
}

criterion_group!(benches, pair_distance, bind_permute);
criterion_main!(benches);
