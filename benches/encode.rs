//! Encoders: text (IDF-weighted words, character trigrams, order; a 2 KB turn also over a
//! warm arena of 2,000 words, as during an import), item memory, levels and the
//! dense-embedding projector, at D = 8,192.
//!
//! `cargo bench --bench encode`

mod common; // the binary's allocator

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hypermem::hdv::Bundler;
use hypermem::hdv::encode::{
    ItemMemory, LevelEncoder, NgramEncoder, Projector, TextConfig, TextEncoder, encode_ngram,
};
use hypermem::hdv::{Dim, SeededRng};

const SENTENCE: &str = "The deployment pipeline for the billing service runs nightly \
    integration tests against a staging Postgres database before promoting the build.";

fn encode(c: &mut Criterion) {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let dim = Dim::default();
    let mut g = c.benchmark_group("encode");

    let idf = |t: &str| if t.len() <= 3 { 0.3 } else { 2.0 };
    let mut text = TextEncoder::new(dim, TextConfig::default());
    let first = text.encode(SENTENCE, &idf).unwrap();
    g.throughput(Throughput::Bytes(SENTENCE.len() as u64));
    g.bench_function("text_sentence_warm_cache", |b| {
        b.iter(|| text.encode(black_box(SENTENCE), &idf).unwrap())
    });
    assert_eq!(text.encode(SENTENCE, &idf).unwrap(), first);

    // A 2 KB conversational turn (the BEAM-500K average): the same sentence vocabulary
    // repeated with variations, as long turns are.
    let mut turn = String::new();
    let mut i = 0;
    while turn.len() < 2048 {
        turn.push_str(&format!(
            "{SENTENCE} Step {i} checks replica {} of shard {}. ",
            i * 7,
            i % 5
        ));
        i += 1;
    }
    g.throughput(Throughput::Bytes(turn.len() as u64));
    g.bench_function("text_2kb_turn", |b| {
        b.iter(|| text.encode(black_box(&turn), &idf).unwrap())
    });

    // 2 KB turns over a vocabulary of 2,000 words, every word already cached: an arena of
    // about 12 MB (as an import's), so each text's slots lie far apart in it.
    let mut rng = SeededRng::new(11);
    let syllables = [
        "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "de",
    ];
    let vocabulary: Vec<String> = (0..2000)
        .map(|i: usize| {
            let (mut w, mut x) = (String::new(), i + 150);
            while x > 0 {
                w.push_str(syllables[x % syllables.len()]);
                x /= syllables.len();
            }
            w
        })
        .collect();
    let turns: Vec<String> = (0..64)
        .map(|_| {
            let mut t = String::new();
            while t.len() < 2048 {
                t.push_str(&vocabulary[rng.below(vocabulary.len() as u64) as usize]);
                t.push(' ');
            }
            t
        })
        .collect();
    let mut wide = TextEncoder::new(dim, TextConfig::default());
    wide.encode(&vocabulary.join(" "), &idf).unwrap();
    g.throughput(Throughput::Bytes(2048));
    let mut next = 0;
    g.bench_function("text_2kb_turn_large_arena", |b| {
        b.iter(|| {
            next = (next + 1) % turns.len();
            wide.encode(black_box(&turns[next]), &idf).unwrap()
        })
    });

    // The same two texts on the portable bit-sliced path (what CPUs without AVX-512 run).
    for (name, input) in [("sentence", SENTENCE), ("2kb_turn", turn.as_str())] {
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_function(format!("text_{name}_bit_sliced"), |b| {
            b.iter(|| {
                let mut bundler = Bundler::new(dim);
                text.encode_into_bit_sliced(black_box(input), &idf, &mut bundler)
                    .unwrap();
                bundler.binarize(text.tie_seed(input)).unwrap()
            })
        });
    }

    // Letter trigrams of a 1,000-character text (the language-identification protocol):
    // the cached-permutation bundler beside a loop of `encode_ngram` + `add`.
    let mut rng = SeededRng::new(3);
    let letters: Vec<char> = "abcdefghijklmnopqrstuvwxyz     ".chars().collect();
    let text: String = (0..1000)
        .map(|_| letters[rng.below(letters.len() as u64) as usize])
        .collect();
    g.throughput(Throughput::Elements(text.chars().count() as u64));
    let mut trigrams = NgramEncoder::new(dim, 1, 3).unwrap();
    g.bench_function("char_trigrams_1000_bundled", |b| {
        b.iter(|| {
            let mut bundler = Bundler::new(dim);
            trigrams.add_chars(black_box(&text), &mut bundler);
            bundler
        })
    });
    let mut items = ItemMemory::new(dim, 1);
    let chars: Vec<String> = text.chars().map(String::from).collect();
    for c in &chars {
        items.get(c);
    }
    g.bench_function("char_trigrams_1000_per_ngram_add", |b| {
        b.iter(|| {
            let mut bundler = Bundler::new(dim);
            for w in chars.windows(3) {
                let v = [
                    items.lookup(&w[0]).unwrap(),
                    items.lookup(&w[1]).unwrap(),
                    items.lookup(&w[2]).unwrap(),
                ];
                bundler.add(&encode_ngram(&v).unwrap());
            }
            bundler
        })
    });

    g.throughput(Throughput::Elements(1));
    let items = ItemMemory::new(dim, 1);
    g.bench_function("item_memory_uncached", |b| {
        b.iter(|| items.vector(black_box("customer_id")))
    });
    let mut cached = ItemMemory::new(dim, 1);
    g.bench_function("item_memory_cached", |b| {
        b.iter(|| cached.get(black_box("customer_id")).count_ones())
    });

    let levels = LevelEncoder::new(dim, 0.0, 1.0, 100, 3).unwrap();
    g.bench_function("level", |b| {
        b.iter(|| levels.encode(black_box(0.37)).unwrap())
    });

    let projector = Projector::new(384, dim, 5).unwrap();
    let mut rng = SeededRng::new(9);
    let embedding: Vec<f32> = (0..384).map(|_| rng.gaussian_pair().0 as f32).collect();
    g.bench_function("projector_384_to_8192", |b| {
        b.iter(|| projector.project(black_box(&embedding)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, encode);
criterion_main!(benches);
