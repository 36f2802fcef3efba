//! Encoders: determinism, similarity structure, and projector angle preservation.

use hdv::encode::{
    ItemMemory, LevelEncoder, Projector, RecordEncoder, TextConfig, TextEncoder, UniformWeights,
    encode_ngram, encode_sequence, probe_sequence,
};
use hdv::{Codebook, Dim, Error, Hypervector, SeededRng};

fn dim() -> Dim {
    Dim::new(8192).unwrap()
}

#[test]
fn item_memory_is_deterministic_and_documented() {
    let mut a = ItemMemory::new(dim(), 7);
    let b = ItemMemory::new(dim(), 7);
    assert_eq!(a.get("apple").clone(), b.vector("apple"));
    assert_eq!(a.len(), 1);
    // The documented derivation (docs/FORMAT.md).
    let seed = xxhash_rust_seed("apple", 7);
    assert_eq!(b.vector("apple"), Hypervector::random(dim(), seed));
    assert_ne!(b.vector("apple"), b.vector("apples"));
    assert_ne!(b.vector("apple"), ItemMemory::new(dim(), 8).vector("apple"));
    let s = b.vector("apple").similarity(&b.vector("pear"));
    assert!(s.abs() < 0.06, "unrelated symbols are near-orthogonal: {s}");
}

fn xxhash_rust_seed(s: &str, seed: u64) -> u64 {
    ItemMemory::new(dim(), seed).symbol_seed(s.as_bytes())
}

#[test]
fn text_same_input_same_vector_and_normalization() {
    let mut enc = TextEncoder::new(dim(), TextConfig::default());
    let a = enc
        .encode("The user prefers dark mode.", &UniformWeights)
        .unwrap();
    let b = enc
        .encode("The user prefers dark mode.", &UniformWeights)
        .unwrap();
    assert_eq!(a, b);
    // NFKC + lowercase: full-width letters and case fold to the same tokens.
    assert_eq!(
        TextEncoder::tokens("ＴＨＥ User, prefers!"),
        vec!["the", "user", "prefers"]
    );
    let c = enc
        .encode("the USER prefers dark mode", &UniformWeights)
        .unwrap();
    assert_eq!(a, c);
    let mut fresh = TextEncoder::new(dim(), TextConfig::default());
    assert_eq!(
        fresh
            .encode("The user prefers dark mode.", &UniformWeights)
            .unwrap(),
        a
    );
}

#[test]
fn texts_sharing_most_words_are_much_closer_than_unrelated() {
    let mut enc = TextEncoder::new(dim(), TextConfig::default());
    let w = &UniformWeights;
    let base = enc
        .encode("the deployment uses postgres with nightly backups to s3", w)
        .unwrap();
    let near = enc
        .encode("the deployment uses postgres with weekly backups to s3", w)
        .unwrap();
    let far = enc
        .encode("my cat enjoys sleeping on the warm windowsill", w)
        .unwrap();
    let (s_near, s_far) = (base.similarity(&near), base.similarity(&far));
    assert!(s_near > 0.5, "near {s_near}");
    eprintln!("near {s_near} far {s_far}");
    assert!(s_far < 0.15, "far {s_far}");
    // Character n-grams make an inflected form closer than an unrelated word.
    let run = enc.encode("running", w).unwrap();
    let runs = enc.encode("runner", w).unwrap();
    let other = enc.encode("banana", w).unwrap();
    eprintln!(
        "running~runner {} running~banana {}",
        run.similarity(&runs),
        run.similarity(&other)
    );
    assert!(run.similarity(&runs) > run.similarity(&other) + 0.08);
    // Order: the same words in another order are close but not identical.
    let ab = enc.encode("alice pays bob", w).unwrap();
    let ba = enc.encode("bob pays alice", w).unwrap();
    assert!(ab != ba && ab.similarity(&ba) > 0.3 && ab.similarity(&ba) < 0.95);
}

#[test]
fn idf_weights_shift_similarity_toward_rare_terms() {
    let mut enc = TextEncoder::new(dim(), TextConfig::default());
    let idf = |t: &str| match t {
        "the" | "a" | "is" | "of" => 0.1,
        _ => 3.0,
    };
    let q = enc.encode("the color of the sky", &idf).unwrap();
    let shares_rare = enc.encode("a sky is blue", &idf).unwrap();
    let shares_common = enc.encode("the weight of the box", &idf).unwrap();
    assert!(q.similarity(&shares_rare) > q.similarity(&shares_common));
    // Zero-weight text has no features.
    assert_eq!(
        enc.encode("the of", &|_: &str| 0.0),
        Err(Error::EmptyBundle)
    );
    assert_eq!(enc.encode("", &UniformWeights), Err(Error::EmptyBundle));
}

#[test]
fn level_encoder_is_linear_in_the_level_gap() {
    let enc = LevelEncoder::new(dim(), 0.0, 100.0, 11, 3).unwrap();
    let l0 = enc.encode(0.0).unwrap();
    for j in 0..11 {
        let d = enc.level(j).hamming(&l0) as usize;
        assert_eq!(d, (j * 4096 + 5) / 10, "level {j}");
    }
    assert_eq!(enc.encode(-5.0).unwrap(), l0, "clamped");
    assert_eq!(enc.encode(1e9).unwrap(), enc.level(10));
    assert_eq!(enc.level_of(49.0).unwrap(), 5);
    assert!(enc.encode(f64::NAN).is_err());
    assert!(LevelEncoder::new(dim(), 1.0, 1.0, 4, 0).is_err());
    assert!(LevelEncoder::new(dim(), 0.0, 1.0, 1, 0).is_err());
}

#[test]
fn sequences_and_ngrams_are_order_sensitive_and_probeable() {
    let mem = ItemMemory::new(dim(), 11);
    let items: Vec<_> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|s| mem.vector(s))
        .collect();
    let mut book = Codebook::new(dim());
    for (i, v) in items.iter().enumerate() {
        book.insert(i, v).unwrap();
    }
    let seq = encode_sequence(&items, 1).unwrap();
    for i in 0..items.len() {
        let hit = book.cleanup(&probe_sequence(&seq, i)).unwrap().unwrap();
        assert_eq!(*hit.label, i, "slot {i}");
    }
    let abc = encode_ngram(&items[..3]).unwrap();
    let reversed: Vec<_> = items[..3].iter().rev().cloned().collect();
    let cba = encode_ngram(&reversed).unwrap();
    assert!(abc.similarity(&cba).abs() < 0.06);
    assert_eq!(encode_ngram(&items[..3]).unwrap(), abc);
    let empty: [Hypervector; 0] = [];
    assert_eq!(encode_ngram(&empty), Err(Error::EmptyBundle));
}

#[test]
fn records_unbind_to_their_fillers() {
    let mem = ItemMemory::new(dim(), 5);
    let mut book = Codebook::new(dim());
    for name in ["paris", "france", "euro", "tokyo", "japan", "yen"] {
        book.insert(name.to_owned(), &mem.vector(name)).unwrap();
    }
    let mut rec = RecordEncoder::new(dim(), 99);
    let fields = [
        ("capital", mem.vector("paris")),
        ("country", mem.vector("france")),
        ("currency", mem.vector("euro")),
    ];
    let r = rec.encode(&fields, 0).unwrap();
    for (role, want) in [
        ("capital", "paris"),
        ("country", "france"),
        ("currency", "euro"),
    ] {
        let noisy = rec.unbind(&r, role).unwrap();
        assert_eq!(book.cleanup(&noisy).unwrap().unwrap().label, want);
    }
    let wrong = Hypervector::zeros(Dim::new(64).unwrap());
    assert!(rec.unbind(&wrong, "capital").is_err());
}

fn angle(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    (dot / (na * nb)).clamp(-1.0, 1.0).acos()
}

#[test]
fn projector_preserves_angles_per_sign_random_projection_theory() {
    let n = 96;
    let proj = Projector::new(n, dim(), 1).unwrap();
    let mut rng = SeededRng::new(4);
    let mut gauss = || rng.gaussian_pair().0 as f32;
    let q: Vec<f32> = (0..n).map(|_| gauss()).collect();
    let noise: Vec<f32> = (0..n).map(|_| gauss()).collect();
    // Points at increasing angles from q: q + t * noise for decreasing t... here mix weights.
    let mut pts: Vec<(f64, Vec<f32>)> = (0..12)
        .map(|i| {
            let t = 0.1 + i as f32 * 0.35;
            let p: Vec<f32> = q.iter().zip(&noise).map(|(a, b)| a + t * b).collect();
            (angle(&q, &p), p)
        })
        .collect();
    pts.push((
        angle(&q, &q.iter().map(|x| -x).collect::<Vec<_>>()),
        q.iter().map(|x| -x).collect(),
    ));
    let hq = proj.project(&q).unwrap();
    let mut last = 0;
    for (theta, p) in &pts {
        let d = hq.hamming(&proj.project(p).unwrap());
        let expected = theta / std::f64::consts::PI * 8192.0;
        let sd =
            (8192.0 * (theta / std::f64::consts::PI) * (1.0 - theta / std::f64::consts::PI)).sqrt();
        assert!(
            (f64::from(d) - expected).abs() < 5.0 * sd + 1.0,
            "theta={theta} d={d} want {expected}"
        );
        assert!(d >= last, "angular order preserved");
        last = d;
    }
    assert_eq!(last, 8192, "the antipode flips every bit");
    assert_eq!(proj.project(&q).unwrap(), hq, "deterministic");
    assert_eq!(
        proj.project(&q[1..]).unwrap_err(),
        Error::EmbeddingLength {
            expected: 96,
            found: 95
        }
    );
    let mut bad = q.clone();
    bad[3] = f32::NAN;
    assert!(
        proj.project(&bad)
            .unwrap_err()
            .to_string()
            .contains("component 3")
    );
}

#[test]
fn codebook_cleans_up_noisy_vectors() {
    let mut book = Codebook::new(dim());
    for i in 0..200u64 {
        book.insert(format!("sym{i}"), &Hypervector::random(dim(), i))
            .unwrap();
    }
    for i in (0..200u64).step_by(17) {
        let noisy = Hypervector::random(dim(), i).with_noise(0.4, i).unwrap();
        let m = book.cleanup(&noisy).unwrap().unwrap();
        assert_eq!(m.label, &format!("sym{i}"));
        assert_eq!(m.distance, (0.4f64 * 8192.0).round() as u32);
    }
    assert!(
        book.insert("bad".into(), &Hypervector::zeros(Dim::new(64).unwrap()))
            .is_err()
    );
    assert!(
        Codebook::<u8>::new(dim())
            .cleanup(&Hypervector::zeros(dim()))
            .unwrap()
            .is_none()
    );
}

/// A semantic item memory that gives two synonyms one vector.
#[derive(Debug)]
struct Synonyms;

impl hdv::encode::WordVectors for Synonyms {
    fn vector(&self, word: &str, dim: Dim) -> Option<Hypervector> {
        matches!(word, "car" | "automobile").then(|| Hypervector::random(dim, 777))
    }
}

#[test]
fn a_semantic_item_memory_makes_synonyms_shared_features() {
    let config = TextConfig {
        ngram: 0,
        order_weight: 0.0,
        ..TextConfig::default()
    };
    let mut plain = TextEncoder::new(dim(), config);
    let mut semantic =
        TextEncoder::new(dim(), config).with_word_vectors(std::sync::Arc::new(Synonyms));
    let sim = |e: &mut TextEncoder| {
        let a = e.encode("red car parked", &UniformWeights).unwrap();
        let b = e.encode("red automobile parked", &UniformWeights).unwrap();
        a.similarity(&b)
    };
    let (p, s) = (sim(&mut plain), sim(&mut semantic));
    assert!(s > p + 0.2, "synonyms share a feature: {s} vs {p}");
    // Words the memory has no vector for keep their item vectors.
    let mut again =
        TextEncoder::new(dim(), config).with_word_vectors(std::sync::Arc::new(Synonyms));
    assert_eq!(
        again.encode("blue house", &UniformWeights).unwrap(),
        plain.encode("blue house", &UniformWeights).unwrap()
    );
}

/// The weight a generated test gives token `t`: `weights[i]` for the `i`-th of [`WORDS`],
/// 1 for any other token.
/// A generated case: the dimension of `words` words, the text of `picks` (indexes into
/// [`WORDS`]), and an encoder with or without `order` pairs.
fn text_case(picks: &[usize], words: usize, order: bool) -> (Dim, String, TextEncoder) {
    let dim = Dim::from_words(words).unwrap();
    let text: Vec<&str> = picks.iter().map(|&i| WORDS[i]).collect();
    let config = TextConfig {
        order_weight: if order { 0.5 } else { 0.0 },
        ..TextConfig::default()
    };
    (dim, text.join(" "), TextEncoder::new(dim, config))
}

/// `n` words of [`WORDS`] drawn with `seed`, as one text.
fn random_text(seed: u64, n: usize) -> String {
    let mut rng = SeededRng::new(seed);
    let text: Vec<&str> = (0..n)
        .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
        .collect();
    text.join(" ")
}

fn weight_of(weights: &[f32], t: &str) -> f32 {
    WORDS
        .iter()
        .position(|w| TextEncoder::normalize(w) == t)
        .map_or(1.0, |i| weights[i])
}

/// Words for generated texts: short and long, repeated, and non-ASCII ones.
const WORDS: &[&str] = &[
    "the",
    "deploy",
    "pipeline",
    "billing",
    "runs",
    "nightly",
    "Postgres",
    "a",
    "café",
    "naïve",
    "über",
    "staging",
    "build",
    "x",
    "integration",
    "tests",
    "日本",
    "ok",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

    /// The text encoder's fast path (dense votes on AVX-512) gives exactly the counters and
    /// the vector of the portable bit-sliced path, for any text, weights and dimension.
    #[test]
    fn text_encoding_is_bit_identical_on_every_path(
        picks in proptest::collection::vec(0usize..WORDS.len(), 1..120),
        weights in proptest::collection::vec(0.0f32..9.0, WORDS.len()),
        words in 1usize..200,
        order in proptest::bool::ANY,
        prefill in proptest::bool::ANY,
    ) {
        let (dim, text, mut encoder) = text_case(&picks, words, order);
        let weight = |t: &str| weight_of(&weights, t);
        let (mut fast, mut slow) = (hdv::Bundler::new(dim), hdv::Bundler::new(dim));
        if prefill {
            // Counters that already hold votes, as an open episode's do.
            let v = Hypervector::random(dim, 7);
            fast.add_weighted(&v, 5);
            slow.add_weighted(&v, 5);
        }
        let a = encoder.encode_into(&text, &weight, &mut fast).unwrap();
        let b = encoder.encode_into_bit_sliced(&text, &weight, &mut slow).unwrap();
        proptest::prop_assert_eq!(a, b);
        proptest::prop_assert_eq!(fast.to_bytes(), slow.to_bytes());
        if !fast.is_empty() {
            proptest::prop_assert_eq!(fast.binarize(3).unwrap(), slow.binarize(3).unwrap());
        }
    }

    /// `encode` (read from the carry-save sum planes where the votes fit them) gives the
    /// vector the bit-sliced counters give, ties broken by the text's own seed.
    #[test]
    fn encode_equals_the_bit_sliced_majority(
        picks in proptest::collection::vec(0usize..WORDS.len(), 1..120),
        weights in proptest::collection::vec(0.0f32..9.0, WORDS.len()),
        words in 1usize..200,
        order in proptest::bool::ANY,
    ) {
        let (dim, text, mut encoder) = text_case(&picks, words, order);
        let weight = |t: &str| weight_of(&weights, t);
        let mut slow = hdv::Bundler::new(dim);
        encoder.encode_into_bit_sliced(&text, &weight, &mut slow).unwrap();
        let expected = if slow.is_empty() {
            Err(hdv::Error::EmptyBundle)
        } else {
            slow.binarize(encoder.tie_seed(&text))
        };
        proptest::prop_assert_eq!(encoder.encode(&text, &weight), expected);
    }
}

#[test]
fn a_turn_past_the_i16_range_encodes_as_the_bit_sliced_counters_do() {
    // 600 tokens at weight 3: about 100,000 votes in all, far past what the `i16`
    // counters hold, each feature well inside it (the sum planes' path).
    let text = random_text(9, 600);
    let mut encoder = TextEncoder::new(dim(), TextConfig::default());
    let weight = |_: &str| 3.0;
    let mut slow = hdv::Bundler::new(dim());
    encoder
        .encode_into_bit_sliced(&text, &weight, &mut slow)
        .unwrap();
    assert!(slow.total_weight() > i64::from(i16::MAX));
    assert_eq!(
        encoder.encode(&text, &weight).unwrap(),
        slow.binarize(encoder.tie_seed(&text)).unwrap()
    );
}

#[test]
fn a_long_heavy_text_encodes_identically_across_dense_overflow() {
    // 3,000 tokens at weight 8 (128 votes each plus n-grams and pairs): far past the
    // 2^15 a dense counter holds, so the fast path drains into the bundler repeatedly.
    let text = random_text(4, 3000);
    let mut encoder = TextEncoder::new(dim(), TextConfig::default());
    let heavy = |_: &str| 8.0;
    let (mut fast, mut slow) = (hdv::Bundler::new(dim()), hdv::Bundler::new(dim()));
    encoder.encode_into(&text, &heavy, &mut fast).unwrap();
    encoder
        .encode_into_bit_sliced(&text, &heavy, &mut slow)
        .unwrap();
    assert_eq!(fast.to_bytes(), slow.to_bytes());
    // `encode` takes the counters' path for a text this heavy: the same vector.
    assert_eq!(
        encoder.encode(&text, &heavy).unwrap(),
        slow.binarize(encoder.tie_seed(&text)).unwrap()
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Sequence n-gram bundling gives exactly the votes of adding `encode_ngram` of every
    /// window on its own.
    #[test]
    fn ngram_bundling_equals_the_sum_of_its_ngrams(
        picks in proptest::collection::vec(0usize..WORDS.len(), 0..60),
        n in 1usize..6,
        words in 1usize..100,
        seed in 0u64..1000,
    ) {
        let dim = Dim::from_words(words).unwrap();
        let symbols: Vec<&str> = picks.iter().map(|&i| WORDS[i]).collect();
        let mut fast = hdv::Bundler::new(dim);
        let mut encoder = hdv::encode::NgramEncoder::new(dim, seed, n).unwrap();
        let added = encoder.add_symbols(&symbols, &mut fast);
        let expected = if symbols.len() >= n { symbols.len() - n + 1 } else { 0 };
        proptest::prop_assert_eq!(added, expected);
        let items = ItemMemory::new(dim, seed);
        let mut slow = hdv::Bundler::new(dim);
        for w in symbols.windows(n) {
            let v: Vec<Hypervector> = w.iter().map(|s| items.vector(s)).collect();
            slow.add(&encode_ngram(&v).unwrap());
        }
        proptest::prop_assert_eq!(fast.to_bytes(), slow.to_bytes());
    }
}

#[test]
fn ngram_encoder_refuses_n_zero_and_counts_short_sequences_as_nothing() {
    assert!(hdv::encode::NgramEncoder::new(dim(), 1, 0).is_err());
    let mut e = hdv::encode::NgramEncoder::new(dim(), 1, 3).unwrap();
    let mut b = hdv::Bundler::new(dim());
    assert_eq!(e.add_chars("ab", &mut b), 0);
    assert!(b.is_empty());
    assert_eq!(e.add_chars("abcd", &mut b), 2);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// ASCII text skips the NFKC tables: its normal form is the full NFKC-then-lowercase
    /// form, for any printable or control ASCII.
    #[test]
    fn ascii_normalization_is_the_full_nfkc_form(text in "[\\x00-\\x7f]{0,200}") {
        use unicode_normalization::UnicodeNormalization;
        let full = text.nfkc().collect::<String>().to_lowercase();
        proptest::prop_assert_eq!(TextEncoder::normalize(&text), full);
    }
}

/// The word caches are bounded (a long-lived encoder meets an unbounded vocabulary): an
/// encoder that has cleared them gives exactly the vectors of a fresh one.
#[test]
fn an_encoder_past_its_cache_bound_encodes_like_a_fresh_one() {
    let dim = dim();
    let mut used = TextEncoder::new(dim, TextConfig::default());
    let many: Vec<String> = (0..40_000).map(|i| format!("w{i}x")).collect();
    let long = many.join(" ");
    let once = used.encode(&long, &UniformWeights).unwrap();
    for text in [
        long.as_str(),
        "the quick brown fox jumps over the lazy dog",
        "w17x w39999x w5x and then some",
    ] {
        let mut fresh = TextEncoder::new(dim, TextConfig::default());
        assert_eq!(
            used.encode(text, &UniformWeights).unwrap(),
            fresh.encode(text, &UniformWeights).unwrap(),
            "{}",
            &text[..text.len().min(40)]
        );
    }
    assert_eq!(used.encode(&long, &UniformWeights).unwrap(), once);
}

/// The text encoder's documented derivation, written out plainly (`TextEncoder`'s
/// documentation, `docs/FORMAT.md`): every feature built from item vectors, permuted and
/// bound, added to a bit-sliced [`hdv::Bundler`] one occurrence at a time, ties broken by
/// the coin of XXH3 of the tokens joined by U+001F. The reference the encoder's fast paths
/// (cached slots, grouped features, dense votes, direct majority) are checked against.
fn reference_encoding(
    text: &str,
    weight: &dyn Fn(&str) -> f32,
    config: TextConfig,
    dim: Dim,
) -> Option<Hypervector> {
    let items = ItemMemory::new(dim, config.seed);
    let tokens = TextEncoder::tokens(text);
    let votes = |w: f32| {
        if w.is_finite() && w > 0.0 {
            (w * config.quantum).round() as i64
        } else {
            0
        }
    };
    let word = |t: &str| items.vector(&format!("w\u{1f}{t}"));
    let char_item = |c: char| items.vector(&format!("c\u{1f}{c}"));
    let mut bundle = hdv::Bundler::new(dim);
    for t in &tokens {
        let w = weight(t).max(0.0);
        if votes(w) == 0 {
            continue;
        }
        bundle.add_weighted(&word(t), votes(w));
        let n = config.ngram;
        let ngram_votes = votes(config.ngram_weight * w);
        let framed: Vec<char> = std::iter::once('\u{2}')
            .chain(t.chars())
            .chain(std::iter::once('\u{3}'))
            .collect();
        if n == 0 || ngram_votes == 0 || framed.len() < n {
            continue;
        }
        for gram in framed.windows(n) {
            let mut acc = char_item(gram[0]).permute(n - 1);
            for (i, &c) in gram.iter().enumerate().skip(1) {
                acc = acc.bind(&char_item(c).permute(n - 1 - i));
            }
            bundle.add_weighted(&acc, ngram_votes);
        }
    }
    if config.order_weight > 0.0 {
        for pair in tokens.windows(2) {
            let w = weight(&pair[0]).max(0.0).min(weight(&pair[1]).max(0.0));
            let v = votes(config.order_weight * w);
            if v > 0 {
                bundle.add_weighted(&word(&pair[0]).permute(1).bind(&word(&pair[1])), v);
            }
        }
    }
    let seed = xxhash_rust_seed(&tokens.join("\u{1f}"), config.seed);
    bundle.binarize(seed).ok()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// `TextEncoder::encode` is the documented derivation, bit for bit, for any text,
    /// weights, n-gram length (longer than 3 included) and dimension, on an encoder that
    /// has already encoded other texts (its caches warm).
    #[test]
    fn text_encoding_is_the_documented_derivation(
        picks in proptest::collection::vec(0usize..WORDS.len(), 1..80),
        weights in proptest::collection::vec(0.0f32..9.0, WORDS.len()),
        words in 1usize..200,
        ngram in 0usize..6,
        order in proptest::bool::ANY,
    ) {
        let dim = Dim::from_words(words).unwrap();
        let config = TextConfig {
            ngram,
            order_weight: if order { 0.5 } else { 0.0 },
            ..TextConfig::default()
        };
        let weight = |t: &str| weight_of(&weights, t);
        let mut encoder = TextEncoder::new(dim, config);
        for (i, take) in [picks.len() / 2, picks.len()].into_iter().enumerate() {
            let text: Vec<&str> = picks[i..take.max(i + 1).min(picks.len())]
                .iter()
                .map(|&p| WORDS[p])
                .collect();
            let text = text.join(" ");
            let want = reference_encoding(&text, &weight, config, dim);
            match encoder.encode(&text, &weight) {
                Ok(v) => proptest::prop_assert_eq!(Some(v), want),
                Err(e) => {
                    proptest::prop_assert!(matches!(e, Error::EmptyBundle));
                    proptest::prop_assert_eq!(want, None);
                }
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// `encode_with_ngram_weight` is `encode` on an encoder configured with that n-gram
    /// weight, bit for bit, and leaves the encoder as it was: a text encoded afterwards
    /// (its words' slots made during the call) gets the configured encoding.
    #[test]
    fn a_per_call_ngram_weight_is_the_configured_encoding_at_that_weight(
        picks in proptest::collection::vec(0usize..WORDS.len(), 1..60),
        weights in proptest::collection::vec(0.0f32..9.0, WORDS.len()),
        words in 1usize..160,
        ngram_weight in 0.0f32..3.0,
        order in proptest::bool::ANY,
    ) {
        let (dim, text, mut encoder) = text_case(&picks, words, order);
        let weight = |t: &str| weight_of(&weights, t);
        let configured = *encoder.config();
        let mut at_weight = TextEncoder::new(dim, TextConfig { ngram_weight, ..configured });
        let mut fresh = TextEncoder::new(dim, configured);
        proptest::prop_assert_eq!(
            encoder.encode_with_ngram_weight(&text, &weight, ngram_weight),
            at_weight.encode(&text, &weight)
        );
        proptest::prop_assert_eq!(encoder.encode(&text, &weight), fresh.encode(&text, &weight));
    }
}

/// A query whose n-grams weigh more is closer to a text that shares its words' stems but
/// not the words themselves, and no closer to an unrelated one.
#[test]
fn heavier_query_ngrams_favour_a_text_with_other_forms_of_its_words() {
    let mut enc = TextEncoder::new(dim(), TextConfig::default());
    let inflected = enc
        .encode("she painted landscapes near harbours", &UniformWeights)
        .unwrap();
    let unrelated = enc
        .encode("the invoice total was wrong", &UniformWeights)
        .unwrap();
    let query = |enc: &mut TextEncoder, w: f32| {
        enc.encode_with_ngram_weight("painting a landscape at the harbour", &UniformWeights, w)
            .unwrap()
    };
    let (light, heavy) = (query(&mut enc, 0.5), query(&mut enc, 1.0));
    assert!(
        heavy.similarity(&inflected) > light.similarity(&inflected) + 0.01,
        "{} vs {}",
        heavy.similarity(&inflected),
        light.similarity(&inflected)
    );
    assert!((heavy.similarity(&unrelated) - light.similarity(&unrelated)).abs() < 0.03);
}
