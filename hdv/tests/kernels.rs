//! Every kernel this CPU supports (not only the dispatched one) against a naive per-bit
//! reference, over every word count 0..=64 and misaligned slices; top-k against a full sort.

use hdv::{Block, Dim, Kernel, KernelKind, Neighbor, Scan};
use proptest::prelude::*;

/// Bit-by-bit Hamming distance: the definition, with no word tricks.
fn naive_hamming(a: &[u64], b: &[u64]) -> u32 {
    let mut d = 0;
    for (x, y) in a.iter().zip(b) {
        for bit in 0..64 {
            if (x >> bit) & 1 != (y >> bit) & 1 {
                d += 1;
            }
        }
    }
    d
}

fn kernels() -> Vec<Kernel> {
    let k = Kernel::available();
    assert_eq!(k[0].kind(), KernelKind::Scalar);
    k
}

/// Words from a seed with a controllable density so tiny and huge distances both occur.
fn words(seed: u64, n: usize, density: u8) -> Vec<u64> {
    let mut rng = hdv::SeededRng::new(seed);
    (0..n)
        .map(|_| match density % 4 {
            0 => rng.next_u64(),
            1 => rng.next_u64() & rng.next_u64() & rng.next_u64(),
            2 => !0,
            _ => 0,
        })
        .collect()
}

#[test]
fn this_machine_reports_its_tiers() {
    let names: Vec<_> = kernels().iter().map(|k| k.name()).collect();
    eprintln!(
        "available kernels: {names:?}, active: {}",
        hdv::kernel_name()
    );
    // A tier this CPU cannot run is not tested here: say so, never silently.
    for kind in KernelKind::ALL {
        if !kernels().iter().any(|k| k.kind() == kind) {
            eprintln!(
                "!! SKIP: this CPU cannot run the {} kernels: their tests run only on a machine that can",
                kind.name()
            );
        }
    }
    assert!(names.contains(&hdv::kernel_name()));
}

#[test]
fn pair_distance_every_word_count_and_offset() {
    for kernel in kernels() {
        for n in 0..=64 {
            for offset in 0..8 {
                for density in 0..4 {
                    let a = words(n as u64 * 31 + offset as u64, n + offset, density);
                    let b = words(n as u64 * 17 + 5, n + offset, density / 2);
                    let (a, b) = (&a[offset..], &b[offset..]);
                    assert_eq!(
                        kernel.hamming(a, b),
                        naive_hamming(a, b),
                        "{kernel} words={n} offset={offset} density={density}"
                    );
                }
            }
        }
    }
}

#[test]
fn block_distances_every_word_count_and_offset() {
    for kernel in kernels() {
        for w in 1..=64 {
            for offset in [0, 1, 3, 7] {
                let nv = 1 + (w * 7 + offset) % 13;
                let q = words(w as u64, w + offset, 0);
                let q = &q[offset..];
                let block = words(1000 + w as u64, nv * w + offset, w as u8);
                let block = &block[offset..];
                let mut out = vec![0; nv];
                kernel.distances(q, block, &mut out);
                for (v, &d) in out.iter().enumerate() {
                    assert_eq!(
                        d,
                        naive_hamming(q, &block[v * w..(v + 1) * w]),
                        "{kernel} w={w} v={v}"
                    );
                }
            }
        }
    }
}

/// Every bit different in every pair, over more words than a byte counter may hold before
/// it is folded (31 chunks of 4 words at 8 a byte): a kernel that folds too late wraps.
#[test]
fn maximal_distances_do_not_wrap_byte_counters() {
    for kernel in kernels() {
        for w in [124, 128, 157, 256, 1_000] {
            let (nq, nv) = (7, 3);
            let queries = vec![u64::MAX; nq * w];
            let block = vec![0u64; nv * w];
            let mut out = vec![0u32; nq * nv];
            kernel.distances_many(&queries, &block, w, &mut out);
            assert!(
                out.iter().all(|&d| d as usize == 64 * w),
                "{kernel} w={w}: {out:?}"
            );
            let mut single = vec![0u32; nv];
            kernel.distances(&queries[..w], &block, &mut single);
            assert!(
                single.iter().all(|&d| d as usize == 64 * w),
                "{kernel} w={w}"
            );
            assert_eq!(kernel.hamming(&queries[..w], &block[..w]) as usize, 64 * w);
        }
    }
}

#[test]
fn all_pairs_distances_every_shape() {
    for kernel in kernels() {
        for w in [1, 2, 3, 7, 8, 9, 15, 16, 17, 64, 157] {
            for nq in 0..10 {
                for nv in 0..7 {
                    let queries = words(w as u64 * 3 + nq as u64, nq * w + 1, 0);
                    let queries = &queries[1..];
                    let block = words(w as u64 * 5 + nv as u64, nv * w, 1);
                    let mut out = vec![u32::MAX; nq * nv];
                    kernel.distances_many(queries, &block, w, &mut out);
                    for q in 0..nq {
                        for v in 0..nv {
                            assert_eq!(
                                out[q * nv + v],
                                naive_hamming(
                                    &queries[q * w..(q + 1) * w],
                                    &block[v * w..(v + 1) * w]
                                ),
                                "{kernel} w={w} nq={nq} nv={nv} q={q} v={v}"
                            );
                        }
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn pair_distance_matches_reference(
        a in prop::collection::vec(any::<u64>(), 0..=64),
        seed in any::<u64>(),
        offset in 0usize..8,
    ) {
        let mut b = words(seed, a.len(), (seed % 4) as u8);
        // Make some words equal so partial agreement is exercised.
        for (i, w) in b.iter_mut().enumerate() {
            if (seed >> (i % 64)) & 1 == 1 { *w = a[i]; }
        }
        let off = offset.min(a.len());
        for kernel in kernels() {
            prop_assert_eq!(kernel.hamming(&a[off..], &b[off..]), naive_hamming(&a[off..], &b[off..]));
        }
    }
}

/// The definition of top-k: a stable sort of all (distance, index) pairs, ceiling applied.
fn reference_top_k(block: &Block<'_>, q: &[u64], k: usize, max: Option<u32>) -> Vec<Neighbor> {
    let mut all: Vec<Neighbor> = block
        .iter()
        .enumerate()
        .map(|(index, v)| Neighbor {
            index,
            distance: naive_hamming(q, v.words()),
        })
        .filter(|n| max.is_none_or(|m| n.distance <= m))
        .collect();
    all.sort_by_key(|n| (n.distance, n.index));
    all.truncate(k);
    all
}

#[test]
fn top_k_equals_sorted_distances_with_ties() {
    // One-word vectors with few set bits: distances collide constantly, so ties decide.
    let dim = Dim::new(64).unwrap();
    for seed in 0..6u64 {
        let n = [0, 1, 5, 300, 5000, 20_000][seed as usize];
        let data = words(seed, n, 1);
        let block = Block::new(&data, dim).unwrap();
        let queries = words(seed + 100, 7, 1);
        let qblock = Block::new(&queries, dim).unwrap();
        for kernel in kernels() {
            for k in [0, 1, 3, 10, 1000] {
                for max in [None, Some(8), Some(0)] {
                    let mut scan = Scan::new(k).kernel(kernel);
                    if let Some(m) = max {
                        scan = scan.max_distance(m);
                    }
                    let batch = scan.top_k_batch(&block, &qblock).unwrap();
                    let par_batch = scan.par_top_k_batch(&block, &qblock).unwrap();
                    for (qi, q) in queries.chunks(1).enumerate() {
                        let want = reference_top_k(&block, q, k, max);
                        let ctx = format!("{kernel} n={n} k={k} max={max:?} q={qi}");
                        let q = hdv::HvRef::new(q).unwrap();
                        assert_eq!(scan.top_k(&block, &q).unwrap(), want, "single {ctx}");
                        assert_eq!(scan.par_top_k(&block, &q).unwrap(), want, "parallel {ctx}");
                        assert_eq!(batch[qi], want, "batch {ctx}");
                        assert_eq!(par_batch[qi], want, "parallel batch {ctx}");
                    }
                }
            }
        }
    }
}

#[test]
fn top_k_at_production_dimension() {
    // D = 10,048 (157 words: a partial last AVX-512 chunk) with planted near neighbours.
    let dim = Dim::new(10_048).unwrap();
    let n = 3_000;
    let data: Vec<u64> = (0..n as u64)
        .flat_map(|s| hdv::Hypervector::random(dim, s).into_words())
        .collect();
    let block = Block::new(&data, dim).unwrap();
    let queries: Vec<u64> = (0..13u64)
        .flat_map(|i| {
            hdv::Hypervector::random(dim, i * 200)
                .with_noise(0.05 * (i % 5) as f64, i)
                .unwrap()
                .into_words()
        })
        .collect();
    let qblock = Block::new(&queries, dim).unwrap();
    for kernel in kernels() {
        let scan = Scan::new(10).kernel(kernel);
        let batch = scan.top_k_batch(&block, &qblock).unwrap();
        for (qi, q) in qblock.iter().enumerate() {
            let want = reference_top_k(&block, q.words(), 10, None);
            assert_eq!(want[0].index, qi * 200);
            assert_eq!(scan.top_k(&block, &q).unwrap(), want, "{kernel} q={qi}");
            assert_eq!(batch[qi], want, "{kernel} batch q={qi}");
        }
    }
}

#[test]
fn forcing_an_unknown_or_unsupported_kernel_is_an_error() {
    let err = hdv::kernels::select(Some("neon9000")).unwrap_err();
    assert!(err.to_string().contains("unknown kernel"), "{err}");
    assert_eq!(
        hdv::kernels::select(Some("scalar")).unwrap().kind(),
        KernelKind::Scalar
    );
    assert_eq!(
        hdv::kernels::select(Some(" AVX2 ")).map(|k| k.kind()).ok(),
        Kernel::new(KernelKind::Avx2).map(|k| k.kind())
    );
    assert_eq!(hdv::kernels::select(None).unwrap(), Kernel::best());
    for kind in KernelKind::ALL {
        if !kind.is_supported() {
            let err = hdv::kernels::select(Some(kind.name())).unwrap_err();
            assert!(err.to_string().contains("does not support"), "{err}");
        }
    }
}

#[test]
fn search_rejects_wrong_dimension_and_ragged_blocks() {
    let dim = Dim::new(128).unwrap();
    let data = vec![0u64; 2 * 10];
    let block = Block::new(&data, dim).unwrap();
    let q = hdv::Hypervector::zeros(Dim::new(192).unwrap());
    let err = Scan::new(1).top_k(&block, &q).unwrap_err();
    assert_eq!(
        err,
        hdv::Error::DimensionMismatch {
            expected: 128,
            found: 192
        }
    );
    let err = Block::new(&data[..3], dim).unwrap_err();
    assert!(err.to_string().contains("cannot hold 3 words"), "{err}");
}

#[test]
fn fold_xor_is_the_xor_of_every_word_on_every_tier() {
    for kernel in kernels() {
        for n in 0..=200 {
            let w = words(n as u64, n, n as u8);
            let expected = w.iter().fold(0, |x, y| x ^ y);
            assert_eq!(kernel.fold_xor(&w), expected, "{kernel} n={n}");
            // Misaligned too.
            if n > 1 {
                let tail = &w[1..];
                assert_eq!(
                    kernel.fold_xor(tail),
                    tail.iter().fold(0, |x, y| x ^ y),
                    "{kernel} n={n} offset 1"
                );
            }
        }
    }
}

/// Operands of a dense layer: rows of `input` values (a multiple of 8), `output` (even)
/// outputs, f32 weights and the same weights in half precision.
fn dense_case() -> impl Strategy<Value = (usize, usize, Vec<f32>, Vec<u16>, Vec<f32>)> {
    (1usize..=6, 1usize..=5, 1usize..=9).prop_flat_map(|(eighths, pairs, rows)| {
        let (input, output) = (8 * eighths, 2 * pairs);
        (
            Just(input),
            Just(output),
            prop::collection::vec(-1.0f32..1.0, rows * input),
            // Halves of magnitude 2^-7 to 2, either sign.
            prop::collection::vec((0x2000u16..0x4000, any::<bool>()), input * output).prop_map(
                |v| {
                    v.into_iter()
                        .map(|(h, s)| h | (u16::from(s) << 15))
                        .collect()
                },
            ),
            prop::collection::vec(-1.0f32..1.0, output),
        )
    })
}

proptest! {
    /// Every tier's dense product agrees with the scalar reference, with f32 and with half
    /// precision weights, for every shape the kernels take.
    #[test]
    fn dense_tiers_agree_with_the_reference((input, output, x, half, bias) in dense_case()) {
        use hdv::kernels::dense::{Shape, Weights, f16_to_f32};
        let weight: Vec<f32> = half.iter().map(|&h| f16_to_f32(h)).collect();
        let shape = Shape { input, output };
        let rows = x.len() / input;
        for weights in [Weights::F32(&weight), Weights::F16(&half)] {
            let mut want = vec![0.0f32; rows * output];
            prop_assert!(Kernel::scalar().linear(&x, weights, &bias, shape, &mut want));
            for k in Kernel::available() {
                let mut got = vec![f32::NAN; rows * output];
                prop_assert!(k.linear(&x, weights, &bias, shape, &mut got));
                for (a, b) in got.iter().zip(&want) {
                    prop_assert!((a - b).abs() <= 1e-4 * (1.0 + b.abs()), "{} {a} vs {b}", k.name());
                }
            }
        }
    }
}
