//! Operational capacity of `hdv::Resonator`, measured the way Kent et al. (Resonator
//! Networks 2, Neural Computation 2020) define it: the largest search space `M^F` (F
//! codebooks of M random items) factored with accuracy ≥ 0.99 when the network may run
//! `k = 0.001 · M^F` iterations.
//!
//! For each (F, D) below, `PUBLISHED` holds the capacity the paper's reference
//! implementation lists for outer-product weights (its `operational_capacity.yaml`), read at
//! the two published dimensions around D and interpolated linearly (D is a multiple of 64,
//! the published N are round numbers). The example factors `TRIALS` seeded random products at
//! 0.8, 1.0 and (where affordable) 1.2 × that M and prints accuracy, mean iterations and time per product: an
//! accuracy ≥ 0.99 at 1.0 × means this implementation's capacity is at least the paper's.
//!
//! `cargo run --release --example resonator [-- TRIALS]` (default 100; about 10 minutes)

use std::time::Instant;

use hypermem::hdv::{Dim, Hypervector, Resonator, SeededRng};

/// A published capacity: F, (N, M_max) below D and above D, D, and the multiples of the
/// interpolated M to run (the largest problems run only at 0.8 and 1.0 ×: a failure there
/// spends the whole budget of tens of thousands of iterations).
type Published = (usize, (f64, f64), (f64, f64), usize, &'static [f64]);

/// The paper's OP-weight capacities around a few dimensions.
const PUBLISHED: &[Published] = &[
    (3, (1500.0, 79.0), (1750.0, 104.0), 1536, &[0.8, 1.0, 1.2]),
    (3, (2000.0, 128.0), (2250.0, 150.0), 2048, &[0.8, 1.0, 1.2]),
    (3, (3000.0, 205.0), (3500.0, 238.0), 3008, &[0.8, 1.0, 1.2]),
    (4, (2000.0, 41.0), (2500.0, 49.0), 2048, &[0.8, 1.0, 1.2]),
    (4, (4000.0, 67.0), (4250.0, 70.0), 4032, &[0.8, 1.0]),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let trials: u64 = std::env::args().nth(1).map_or(Ok(100), |a| a.parse())?;
    println!("{trials} trials per row; k = 0.001 · M^F iterations (at least 100)");
    println!(
        "{:>2} {:>6} {:>9} {:>5} {:>14} {:>9} {:>10} {:>9}",
        "F", "D", "paper M", "M", "search space", "accuracy", "iterations", "ms each"
    );
    let mut rng = SeededRng::new(11);
    for &(factors, (n0, m0), (n1, m1), bits, scales) in PUBLISHED {
        let dim = Dim::new(bits)?;
        let paper = m0 + (m1 - m0) * (bits as f64 - n0) / (n1 - n0);
        for &scale in scales {
            let m = (paper * scale).round() as usize;
            let space = (m as f64).powi(factors as i32);
            let budget = ((0.001 * space).ceil() as usize).max(100);
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
                let truth: Vec<usize> =
                    (0..factors).map(|_| rng.below(m as u64) as usize).collect();
                let mut product = books[0][truth[0]].clone();
                for f in 1..factors {
                    product.bind_assign(&books[f][truth[f]]);
                }
                let found = resonator.factor(&product, budget, trial)?;
                iterations += found.iterations;
                if found.exact && found.indices == truth {
                    correct += 1;
                }
            }
            let ms = t.elapsed().as_secs_f64() * 1e3 / trials as f64;
            println!(
                "{factors:>2} {bits:>6} {paper:>9.1} {m:>5} {space:>14.0} {:>9.3} {:>10.1} {ms:>9.1}",
                correct as f64 / trials as f64,
                iterations as f64 / trials as f64
            );
        }
    }
    Ok(())
}
