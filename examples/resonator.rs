//! Operational capacity of `hdv::Resonator`: how large a search space (M^F combinations of
//! F codebooks of M random items) it factors with ≥ 99 % accuracy, at D = 10,048 and F = 3.
//! For each M it factors `TRIALS` seeded random products (at most 200 iterations) and
//! prints accuracy, mean iterations and time per factorization.
//!
//! `cargo run --release --example resonator [-- TRIALS]`

use std::time::Instant;

use hypermem::hdv::{Dim, Hypervector, Resonator, SeededRng};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let trials: u64 = std::env::args().nth(1).map_or(Ok(100), |a| a.parse())?;
    let dim = Dim::round_up(10_000)?;
    let factors = 3;
    println!("D = {}, F = {factors}, {trials} trials per M", dim.bits());
    println!(
        "{:>5} {:>14} {:>9} {:>10} {:>10}",
        "M", "search space", "accuracy", "iterations", "ms each"
    );
    let mut rng = SeededRng::new(11);
    for m in [16usize, 32, 64, 128, 256, 384, 512] {
        let (mut correct, mut iterations) = (0u64, 0usize);
        let t = Instant::now();
        for trial in 0..trials {
            let books: Vec<Vec<Hypervector>> = (0..factors)
                .map(|f| {
                    (0..m)
                        .map(|i| Hypervector::random(dim, (trial << 32) ^ ((f * m + i) as u64)))
                        .collect()
                })
                .collect();
            let resonator = Resonator::new(&books)?;
            let truth: Vec<usize> = (0..factors).map(|_| rng.below(m as u64) as usize).collect();
            let mut product = books[0][truth[0]].clone();
            for f in 1..factors {
                product.bind_assign(&books[f][truth[f]]);
            }
            let found = resonator.factor(&product, 200, trial)?;
            iterations += found.iterations;
            if found.exact && found.indices == truth {
                correct += 1;
            }
        }
        let ms = t.elapsed().as_secs_f64() * 1e3 / trials as f64;
        println!(
            "{m:>5} {:>14} {:>9.3} {:>10.1} {ms:>10.1}",
            (m as u64).pow(factors as u32),
            correct as f64 / trials as f64,
            iterations as f64 / trials as f64
        );
    }
    Ok(())
}
