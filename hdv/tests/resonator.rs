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
fn near_the_published_capacity_complemented_pairs_still_name_the_true_factors() {
    // Kent et al. (2020) list an operational capacity of about 83 items per codebook for
    // F = 3 at N = 1,536 (interpolated); at 80 % of it every product must factor. The
    // dynamics often settle on the complements of two true items (their product is the
    // same): the answer must still name the true items, with negative similarities.
    let dim = Dim::new(1536).unwrap();
    let mut rng = SeededRng::new(5);
    let mut complemented = 0;
    for trial in 0..30u64 {
        let b = books(dim, 3, 66, trial + 500);
        let r = Resonator::new(&b).unwrap();
        let truth: Vec<usize> = (0..3).map(|_| rng.below(66) as usize).collect();
        let product = b[0][truth[0]].bind(&b[1][truth[1]]).bind(&b[2][truth[2]]);
        let found = r.factor(&product, 300, trial).unwrap();
        assert!(found.converged && found.exact, "trial {trial}: {found:?}");
        assert_eq!(found.indices, truth, "trial {trial}");
        let negative = found.similarities.iter().filter(|&&s| s < 0.0).count();
        assert!(negative % 2 == 0, "trial {trial}: {found:?}");
        complemented += usize::from(negative > 0);
    }
    assert!(
        complemented > 0,
        "no run settled on complements: the test lost its point"
    );
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

#[test]
fn a_role_filler_record_is_read_without_knowing_its_fillers() {
    use hdv::encode::{ItemMemory, RecordEncoder};
    let dim = Dim::new(8192).unwrap();
    let symbols = ItemMemory::new(dim, 7);
    let mut records = RecordEncoder::new(dim, 42);
    let fillers: Vec<String> = (0..12).map(|i| format!("filler-{i}")).collect();
    let record = records
        .encode(
            &[
                ("who", symbols.vector(&fillers[3])),
                ("event", symbols.vector(&fillers[8])),
                ("when", symbols.vector(&fillers[0])),
            ],
            1,
        )
        .unwrap();
    let filler_vectors: Vec<Hypervector> = fillers.iter().map(|f| symbols.vector(f)).collect();
    let mut roles = vec!["who", "event", "when", "where", "tool"];
    let mut read = Vec::new();
    let chance = 5.0 / (dim.bits() as f64).sqrt();
    loop {
        let role_vectors: Vec<Hypervector> =
            roles.iter().map(|r| records.role(r).clone()).collect();
        let r = Resonator::new(&[role_vectors, filler_vectors.clone()]).unwrap();
        // A record is a superposition: the default start can settle on a mixture of its
        // terms, so random restarts follow until a pair stands out of the record.
        let pair = (0..16u64).find_map(|seed| {
            let found = if seed == 0 {
                r.factor(&record, 100, 0)
            } else {
                r.factor_from_random(&record, 100, seed)
            }
            .unwrap();
            let role = roles[found.indices[0]];
            let term = records.role(role).bind(&filler_vectors[found.indices[1]]);
            (record.similarity(&term) >= chance).then_some((role, found.indices[1]))
        });
        let Some((role, filler)) = pair else { break };
        read.push((role, filler));
        roles.retain(|x| *x != role);
    }
    read.sort_unstable();
    assert_eq!(read, vec![("event", 8), ("when", 0), ("who", 3)]);
}
