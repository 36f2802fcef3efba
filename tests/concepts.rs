//! Consolidation on real text (issue 14): k planted topics × m episodes from a seeded
//! generator whose sentences share a filler vocabulary, as one project's conversations do.
//! Consolidation must recover the topics (adjusted Rand index ≥ 0.9 for k = 3..20), no
//! concept may hold more than 1/k + 10 % of the episodes, concepts are labelled by their
//! distinctive words, and the curator proposes one summary per concept.

mod common;

use std::collections::{BTreeMap, HashMap};

use common::project;
use hypermem::hdv::{Dim, SeededRng};
use hypermem::ledger::{EventKind, NewEvent, Role};
use hypermem::{Memory, Profile, ProfileKind};

fn profile() -> Profile {
    let mut p = Profile::load(Profile::bundled_path(ProfileKind::Lite)).unwrap();
    p.dim = Dim::new(2048).unwrap();
    p
}

/// A pronounceable made-up word from `rng` (so topics never depend on a word list).
fn word(rng: &mut SeededRng) -> String {
    const C: &[u8] = b"bcdfghklmnprstvz";
    const V: &[u8] = b"aeiou";
    (0..3)
        .flat_map(|_| {
            [
                C[rng.below(C.len() as u64) as usize] as char,
                V[rng.below(V.len() as u64) as usize] as char,
            ]
        })
        .collect()
}

/// Filler every topic shares: function words and conversational padding.
const FILLER: &[&str] = &[
    "okay so i think",
    "well anyway",
    "you know what",
    "by the way",
    "honestly",
    "to be fair",
    "right so",
];

/// Adjusted Rand index of two labelings of the same items.
fn adjusted_rand(a: &[usize], b: &[usize]) -> f64 {
    let choose2 = |n: u64| (n * n.saturating_sub(1)) as f64 / 2.0;
    let mut table: HashMap<(usize, usize), u64> = HashMap::new();
    let (mut ra, mut rb): (HashMap<usize, u64>, HashMap<usize, u64>) = Default::default();
    for (&x, &y) in a.iter().zip(b) {
        *table.entry((x, y)).or_default() += 1;
        *ra.entry(x).or_default() += 1;
        *rb.entry(y).or_default() += 1;
    }
    let index: f64 = table.values().map(|&n| choose2(n)).sum();
    let sa: f64 = ra.values().map(|&n| choose2(n)).sum();
    let sb: f64 = rb.values().map(|&n| choose2(n)).sum();
    let expected = sa * sb / choose2(a.len() as u64);
    let max = (sa + sb) / 2.0;
    if (max - expected).abs() < f64::EPSILON {
        return 1.0;
    }
    (index - expected) / (max - expected)
}

/// Builds k topics × m episodes in a fresh memory, consolidates them, and returns the
/// memory, the planted topic of each episode and the topic words.
fn planted(
    dir: &std::path::Path,
    k: usize,
    m: usize,
    seed: u64,
) -> (Memory, HashMap<u64, usize>, Vec<Vec<String>>) {
    let mem = Memory::open(&profile(), Some(dir)).unwrap();
    let p = project("c");
    let mut rng = SeededRng::new(seed);
    let topics: Vec<Vec<String>> = (0..k)
        .map(|_| (0..8).map(|_| word(&mut rng)).collect())
        .collect();
    let mut truth = HashMap::new();
    // Episodes of different topics interleave, as a user switches subjects.
    for e in 0..k * m {
        let t = e % k;
        let w = &topics[t];
        let ep = mem.start_episode(&p, "a").unwrap();
        let events: Vec<NewEvent> = (0..6)
            .map(|_| {
                let pick = |rng: &mut SeededRng| w[rng.below(w.len() as u64) as usize].clone();
                let f = |rng: &mut SeededRng| FILLER[rng.below(FILLER.len() as u64) as usize];
                let text = format!(
                    "{} the {} and the {} need {} today, {} {}",
                    f(&mut rng),
                    pick(&mut rng),
                    pick(&mut rng),
                    pick(&mut rng),
                    f(&mut rng),
                    pick(&mut rng)
                );
                let mut ev = NewEvent::new(p.clone(), Role::User, EventKind::Message, text);
                ev.agent = Some("a".into());
                ev
            })
            .collect();
        mem.observe_batch(&events).unwrap();
        mem.end_episode(&p, ep, None, None).unwrap();
        truth.insert(ep.0, t);
    }
    let cog = mem.cognition();
    while cog.consolidate(&p, 100).unwrap().0 > 0 {}
    (mem, truth, topics)
}

#[test]
fn consolidation_recovers_planted_topics_for_k_3_to_20() {
    let m = 8;
    let mut report = BTreeMap::new();
    for k in 3..=20 {
        let dir = tempfile::tempdir().unwrap();
        let (mem, truth, _) = planted(dir.path(), k, m, 40 + k as u64);
        let concepts = mem.cognition().concepts(&project("c")).unwrap();
        let mut found = vec![usize::MAX; k * m];
        let ids: Vec<u64> = {
            let mut v: Vec<u64> = truth.keys().copied().collect();
            v.sort_unstable();
            v
        };
        let position: HashMap<u64, usize> = ids.iter().enumerate().map(|(i, &e)| (e, i)).collect();
        for (ci, c) in concepts.iter().enumerate() {
            for ep in &c.support {
                found[position[&ep.0]] = ci;
            }
        }
        assert!(
            found.iter().all(|&c| c != usize::MAX),
            "k = {k}: every episode is consolidated"
        );
        let planted: Vec<usize> = ids.iter().map(|e| truth[e]).collect();
        let ari = adjusted_rand(&planted, &found);
        let largest = concepts.iter().map(|c| c.support.len()).max().unwrap();
        report.insert(k, (ari, concepts.len(), largest));
    }
    eprintln!("k -> (ARI, concepts, largest): {report:?}");
    for (k, (ari, _, largest)) in &report {
        assert!(*ari >= 0.9, "k = {k}: ARI {ari:.3} ({report:?})");
        let bound = (m * k) as f64 * (1.0 / *k as f64 + 0.1);
        assert!(
            *largest as f64 <= bound,
            "k = {k}: a concept holds {largest}"
        );
    }
}

#[test]
fn adjusted_rand_is_one_for_equal_partitions_and_near_zero_for_unrelated() {
    assert!((adjusted_rand(&[0, 0, 1, 1], &[5, 5, 7, 7]) - 1.0).abs() < 1e-12);
    let mut rng = SeededRng::new(3);
    let a: Vec<usize> = (0..2000).map(|_| rng.below(5) as usize).collect();
    let b: Vec<usize> = (0..2000).map(|_| rng.below(5) as usize).collect();
    assert!(adjusted_rand(&a, &b).abs() < 0.02);
}

#[test]
fn concepts_are_labelled_by_their_topic_words_and_summarised_once_each() {
    let dir = tempfile::tempdir().unwrap();
    let (mem, truth, topics) = planted(dir.path(), 4, 6, 11);
    let p = project("c");
    let cog = mem.cognition();
    let concepts = cog.concepts(&p).unwrap();
    assert_eq!(concepts.len(), 4);
    for c in &concepts {
        let topic = truth[&c.support[0].0];
        let words: Vec<&str> = c.label.split(' ').collect();
        assert_eq!(words.len(), 3, "{:?}", c.label);
        for w in words {
            assert!(
                topics[topic].iter().any(|t| t == w),
                "label {:?} of topic {topic} names {w:?}, not one of {:?}",
                c.label,
                topics[topic]
            );
        }
    }
    let first = cog.propose_concept_summaries(&p, 100).unwrap();
    assert_eq!(first.len(), 4, "one summary per concept");
    assert!(
        cog.propose_concept_summaries(&p, 100).unwrap().is_empty(),
        "each concept is summarised once"
    );
    let ledger = mem.ledger();
    for (id, c) in first.iter().zip(&concepts) {
        let belief = ledger.belief(&p, *id).unwrap().unwrap();
        assert_eq!(belief.key, format!("concept.{}.summary", c.id.0));
        assert!(
            belief.statement.starts_with(&c.label),
            "{}",
            belief.statement
        );
        // Every cited event belongs to an episode of the concept.
        for e in &belief.evidence {
            assert!(
                c.support
                    .iter()
                    .any(|ep| cog.episode(&p, *ep).unwrap().events.contains(e)),
                "{e:?} is outside concept {:?}",
                c.label
            );
        }
    }
}
