//! Times one exact top-k query on this thread, as `hypermem.hdv.top_k(block, query, k)`
//! runs it from Python: the Rust side of `python/bench/bench_hdv.py`'s ratio.
//!
//! ```text
//! cargo run --release -p hypermem-hdv --example top_k -- [n] [dim] [k] [reps]
//! ```
//!
//! The block is `n` random vectors drawn as `hdv.random(n, dim, seed=1)` draws them; the
//! query is its row 7 with 20 % noise. Prints one JSON line: the median and minimum in
//! microseconds.

use std::hint::black_box;
use std::time::Instant;

use hdv::{Block, Dim, HvRef, Hypervector, Scan, SeededRng};

fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let (n, bits, k, reps) = (arg(1, 100_000), arg(2, 10_048), arg(3, 10), arg(4, 50));
    let dim = Dim::new(bits).expect("a multiple of 64 bits");
    let mut rng = SeededRng::new(1);
    let mut words = Vec::with_capacity(n * dim.words());
    for _ in 0..n {
        words.extend_from_slice(Hypervector::random_from(dim, &mut rng).words());
    }
    let block = Block::new(&words, dim).expect("whole vectors");
    let row = &words[7 * dim.words()..8 * dim.words()];
    let query = HvRef::new(row)
        .expect("a row")
        .to_owned()
        .with_noise(0.2, 7)
        .expect("a fraction");
    let scan = Scan::new(k);
    assert_eq!(scan.top_k(&block, &query).expect("a scan")[0].index, 7);
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            black_box(scan.top_k(&block, black_box(&query)).expect("a scan"));
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!(
        "{{\"kernel\": \"{}\", \"n\": {n}, \"dim\": {bits}, \"k\": {k}, \"median_us\": {:.1}, \"min_us\": {:.1}}}",
        hdv::kernel_name(),
        times[times.len() / 2],
        times[0]
    );
}
