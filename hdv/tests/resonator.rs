//! The resonator network: exact factorization inside its capacity, a clean "did not
//! converge" far outside it, and refusals of bad input.

use hdv::{Dim, Error, Hypervector, Resonator, SeededRng};

fn books(dim: Dim, factors: usize, items: usize, seed: u64) -> Vec<Vec<Hypervector>> {
    (0..factors)
        .map(|f| {
            (0..items)
                .map(|m| Hypervector::random(dim, seed * 1_000_003 + (f * items + m) as u64))
                .collect()
        })
        .collect()
}

#[test]
fn factors_seeded_products_inside_its_capacity() {
    let dim = Dim::new(4096).unwrap();
    let mut rng = SeededRng::new(1);
    for trial in 0..20u64 {
        let b = books(dim, 3, 20, trial);
        let r = Resonator::new(&b).unwrap();
        let truth: Vec<usize> = (0..3).map(|_| rng.below(20) as usize).collect();
        let product = b[0][truth[0]].bind(&b[1][truth[1]]).bind(&b[2][truth[2]]);
        let found = r.factor(&product, 100, trial).unwrap();
        assert!(found.converged && found.exact, "trial {trial}: {found:?}");
        assert_eq!(found.indices, truth, "trial {trial}");
        assert!(found.similarities.iter().all(|&s| (s - 1.0).abs() < 1e-12));
    }
}

#[test]
fn far_outside_its_capacity_it_says_it_did_not_converge() {
    // 128 bits cannot separate 64^3 = 262,144 combinations.
    let dim = Dim::new(128).unwrap();
    let mut failures = 0;
    for trial in 0..10u64 {
        let b = books(dim, 3, 64, trial + 50);
        let r = Resonator::new(&b).unwrap();
        let product = b[0][3].bind(&b[1][9]).bind(&b[2][27]);
        let found = r.factor(&product, 30, trial).unwrap();
        assert!(found.iterations <= 30);
        if !(found.converged && found.exact) {
            failures += 1;
        }
        // `exact` is never claimed falsely.
        if found.exact {
            let mut bound = product.clone();
            for (book, &m) in b.iter().zip(&found.indices) {
                bound.bind_assign(&book[m]);
            }
            assert_eq!(bound.count_ones(), 0);
        }
    }
    assert!(
        failures >= 5,
        "only {failures} of 10 failed far outside capacity"
    );
}

#[test]
fn bad_codebooks_and_products_are_refused() {
    let dim = Dim::new(256).unwrap();
    assert!(matches!(
        Resonator::new::<Hypervector>(&[]),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        Resonator::new(&[vec![Hypervector::random(dim, 1)], vec![]]),
        Err(Error::InvalidParameter { .. })
    ));
    let other = Dim::new(512).unwrap();
    assert!(matches!(
        Resonator::new(&[vec![
            Hypervector::random(dim, 1),
            Hypervector::random(other, 2)
        ]]),
        Err(Error::DimensionMismatch { .. })
    ));
    let r = Resonator::new(&[vec![Hypervector::random(dim, 1)]]).unwrap();
    assert!(matches!(
        r.factor(&Hypervector::random(other, 3), 5, 0),
        Err(Error::DimensionMismatch { .. })
    ));
}
