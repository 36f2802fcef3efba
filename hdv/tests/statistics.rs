//! Statistics against theory, with fixed seeds and tolerances of a few standard errors.

use hdv::encode::ItemMemory;
use hdv::{Block, Bundler, Dim, Hypervector, Scan};

/// p(n) = 1/2 + C(n-1, (n-1)/2) / 2^n: how often the majority of n random vectors (odd n)
/// agrees with one of them at a given bit.
fn majority_agreement(n: u64) -> f64 {
    assert!(n % 2 == 1);
    let m = (n - 1) / 2;
    // C(n-1, m) / 2^n computed in logs to stay finite for large n.
    let mut log_c = 0.0f64;
    for i in 0..m {
        log_c += ((n - 1 - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    0.5 + (log_c - n as f64 * std::f64::consts::LN_2).exp()
}

#[test]
fn theory_table_matches_the_issue() {
    for (n, p) in [
        (3, 0.75),
        (5, 0.6875),
        (11, 0.6230),
        (21, 0.5881),
        (51, 0.5561),
        (101, 0.5398),
    ] {
        assert!((majority_agreement(n) - p).abs() < 5e-4, "n={n}");
    }
}

#[test]
fn random_pairs_have_mean_half_and_sd_one_over_two_root_d() {
    for bits in [1024usize, 8192, 10_048] {
        let dim = Dim::new(bits).unwrap();
        let m = 2000;
        let xs: Vec<f64> = (0..m)
            .map(|i| {
                let a = Hypervector::random(dim, 2 * i);
                let b = Hypervector::random(dim, 2 * i + 1);
                f64::from(a.hamming(&b)) / bits as f64
            })
            .collect();
        let mean = xs.iter().sum::<f64>() / m as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (m - 1) as f64).sqrt();
        let sigma = 1.0 / (2.0 * (bits as f64).sqrt());
        assert!(
            (mean - 0.5).abs() < 4.0 * sigma / (m as f64).sqrt(),
            "D={bits} mean={mean}"
        );
        // SE of a sample SD is about sigma / sqrt(2m).
        assert!(
            (sd - sigma).abs() < 4.0 * sigma / (2.0 * m as f64).sqrt(),
            "D={bits} sd={sd} want {sigma}"
        );
    }
}

/// Mean agreement of the majority bundle with its inputs, and the bundle's density.
fn agreement(dim: Dim, n: usize, trials: u64) -> (f64, f64, usize) {
    let (mut agree, mut ones, mut measures) = (0.0, 0.0, 0);
    for t in 0..trials {
        let inputs: Vec<_> = (0..n as u64)
            .map(|i| Hypervector::random(dim, t * 10_000 + i))
            .collect();
        let mut b = Bundler::new(dim);
        b.add_all(&inputs);
        let out = b.binarize(t + 77).unwrap();
        for v in &inputs {
            agree += 1.0 - f64::from(out.hamming(v)) / dim.bits() as f64;
            measures += 1;
        }
        ones += f64::from(out.count_ones()) / dim.bits() as f64;
    }
    (agree / measures as f64, ones / trials as f64, measures)
}

#[test]
fn majority_of_odd_n_agrees_with_theory() {
    let dim = Dim::new(8192).unwrap();
    for n in [3usize, 5, 11, 21, 51, 101] {
        let trials = (300 / n as u64).max(2);
        let (p, density, measures) = agreement(dim, n, trials);
        let want = majority_agreement(n as u64);
        let se = (want * (1.0 - want) / (dim.bits() * measures) as f64).sqrt();
        assert!(
            (p - want).abs() < 5.0 * se + 1e-3,
            "n={n}: p={p:.4} want {want:.4}"
        );
        let dse = 0.5 / ((dim.bits() as f64) * trials as f64).sqrt();
        assert!(
            (density - 0.5).abs() < 5.0 * dse,
            "n={n}: density {density}"
        );
    }
}

#[test]
fn even_n_with_the_coin_behaves_like_n_plus_one() {
    let dim = Dim::new(8192).unwrap();
    for n in [2usize, 4, 10, 20] {
        let trials = (300 / n as u64).max(2);
        let (p, density, measures) = agreement(dim, n, trials);
        let want = majority_agreement(n as u64 + 1);
        let se = (want * (1.0 - want) / (dim.bits() * measures) as f64).sqrt();
        assert!(
            (p - want).abs() < 5.0 * se + 1e-3,
            "n={n}: p={p:.4} want p(n+1)={want:.4}"
        );
        // A fixed tie rule (ties -> 0) would give 0.25 at n = 2.
        let dse = 0.5 / ((dim.bits() as f64) * trials as f64).sqrt();
        assert!(
            (density - 0.5).abs() < 5.0 * dse,
            "n={n}: density {density}"
        );
    }
}

#[test]
fn bundle_of_101_retrieves_members_from_an_item_memory_of_1000() {
    // D = 4,096, M = 1,000 items; bundle n = 101 of them. A member is retrieved when it is
    // nearer to the bundle than every non-member: theory says about 96 % of the time.
    let dim = Dim::new(4096).unwrap();
    let (mut hits, mut tries) = (0, 0);
    // Independent item memories per trial: members of one bundle share the nearest
    // outsider, so trials, not members, are the independent samples.
    for trial in 0..24u64 {
        let memory = ItemMemory::new(dim, 2024 + trial);
        let items: Vec<Hypervector> = (0..1000)
            .map(|i| memory.vector(&format!("item-{i}")))
            .collect();
        let members: Vec<usize> = (0..101)
            .map(|j| (j * 9 + trial as usize * 37) % 1000)
            .collect();
        let mut b = Bundler::new(dim);
        b.add_all(members.iter().map(|&m| &items[m]));
        let bundle = b.binarize(trial).unwrap();
        let non_members: Vec<u64> = (0..1000)
            .filter(|i| !members.contains(i))
            .flat_map(|i| items[i].words().to_vec())
            .collect();
        let block = Block::new(&non_members, dim).unwrap();
        let nearest_outsider = Scan::new(1).top_k(&block, &bundle).unwrap()[0].distance;
        for &m in &members {
            tries += 1;
            if bundle.hamming(&items[m]) < nearest_outsider {
                hits += 1;
            }
        }
    }
    let rate = f64::from(hits) / f64::from(tries);
    eprintln!("member top-1 rate: {rate:.3} over {tries}");
    // Exact binomial theory: 0.960 (strict wins).
    assert!((0.93..=0.985).contains(&rate), "rate {rate}");
}
