//! The classic letter-trigram language identification on synthetic languages: each
//! "language" is a first-order letter Markov chain over one 12-letter alphabet in which
//! every letter is followed by one of its own 3 preferred successors with probability 0.9
//! (chosen per language by a seeded generator), else by any letter. A letter's preferred
//! set is shared by two languages with probability 1/220, and a transition preferred by
//! one language is preferred by another with probability 1/4: of the ~180 preferred
//! transitions in a 200-letter text, a wrong language expects only ~45, so the trigram
//! statistics of 8 such languages are far apart and a profile classifier must be right
//! almost always (the bound asserted: 0.95).

use hdv::encode::NgramEncoder;
use hdv::{Bundler, Codebook, Dim, SeededRng};

const LETTERS: &[u8] = b"abcdefghijkl";

struct Language {
    preferred: Vec<[usize; 3]>,
}

impl Language {
    fn new(rng: &mut SeededRng) -> Self {
        let preferred = (0..LETTERS.len())
            .map(|_| {
                let mut picks = [0usize; 3];
                let mut k = 0;
                while k < 3 {
                    let c = rng.below(LETTERS.len() as u64) as usize;
                    if !picks[..k].contains(&c) {
                        picks[k] = c;
                        k += 1;
                    }
                }
                picks
            })
            .collect();
        Self { preferred }
    }

    fn text(&self, len: usize, rng: &mut SeededRng) -> String {
        let mut c = rng.below(LETTERS.len() as u64) as usize;
        let mut out = String::with_capacity(len);
        for _ in 0..len {
            out.push(LETTERS[c] as char);
            c = if rng.below(10) < 9 {
                self.preferred[c][rng.below(3) as usize]
            } else {
                rng.below(LETTERS.len() as u64) as usize
            };
        }
        out
    }
}

#[test]
fn trigram_profiles_identify_synthetic_languages() {
    let dim = Dim::round_up(10_000).unwrap();
    let mut rng = SeededRng::new(2016);
    let languages: Vec<Language> = (0..8).map(|_| Language::new(&mut rng)).collect();
    let mut encoder = NgramEncoder::new(dim, 5, 3).unwrap();
    let mut profiles = Codebook::new(dim);
    for (i, l) in languages.iter().enumerate() {
        let mut b = Bundler::new(dim);
        encoder.add_chars(&l.text(20_000, &mut rng), &mut b);
        profiles.insert(i, &b.binarize(i as u64).unwrap()).unwrap();
    }
    let (mut hits, mut total) = (0, 0);
    for (i, l) in languages.iter().enumerate() {
        for _ in 0..50 {
            let mut b = Bundler::new(dim);
            encoder.add_chars(&l.text(200, &mut rng), &mut b);
            let found = profiles.cleanup(&b.binarize(1).unwrap()).unwrap().unwrap();
            hits += usize::from(*found.label == i);
            total += 1;
        }
    }
    let accuracy = hits as f64 / total as f64;
    assert!(accuracy >= 0.95, "accuracy {accuracy:.3}");
}
