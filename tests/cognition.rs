//! Cognitive layers: every bound and invariant of issue 5 (working memory size, episode
//! order and chaining, sealed episodes stay sealed, episode vectors, consolidation purity,
//! procedure reliability, ripple budgets, pulse budgets, candidates' evidence, isolation).

mod common;
use common::all_of;

use std::sync::Arc;
use std::time::Duration;

use common::project;
use hypermem::clock::ManualClock;
use hypermem::cognition::{
    AppendOutcome, Cognition, CognitionConfig, EpisodeStatus, GapKind, ProposalStatus, PulseBudget,
    PulseRunner, RippleParams, Step, WorkingItem, WorkingMemory,
};
use hypermem::governance::{BeliefStatus, Op, Ownership, Plan, PlanOutcome};
use hypermem::hdv::encode::ItemMemory;
use hypermem::hdv::{Bundler, Dim, Hypervector, SeededRng};
use hypermem::ledger::{EventId, EventKind, Ledger, LedgerConfig, NewEvent, Role};

const DAY_MS: f64 = 86_400.0;

fn dim() -> Dim {
    Dim::new(4096).unwrap()
}

fn setup() -> (Arc<Ledger>, Cognition, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(1_000_000.0));
    let ledger = Arc::new(
        Ledger::open_in_memory(LedgerConfig::default())
            .unwrap()
            .with_clock(clock.clone()),
    );
    let cog = Cognition::new(ledger.clone(), dim(), CognitionConfig::default());
    (ledger, cog, clock)
}

fn event(l: &Ledger, p: &str, role: Role, text: &str) -> EventId {
    l.append(NewEvent::new(project(p), role, EventKind::Message, text))
        .unwrap()
        .id
}

/// A "sentence" about a topic: the bundle of 5 of the topic's 30 words.
fn topic_vector(words: &ItemMemory, topic: usize, rng: &mut SeededRng) -> Hypervector {
    let mut b = Bundler::new(dim());
    for _ in 0..5 {
        b.add(&words.vector(&format!("t{topic}-w{}", rng.below(30))));
    }
    b.binarize(rng.next_u64()).unwrap()
}

#[test]
fn working_memory_is_bounded_and_evicts_by_importance_and_recency() {
    let mut wm = WorkingMemory::new(4, 100.0);
    let item = |id, importance, ttl: Option<f64>| WorkingItem {
        id,
        kind: "event".into(),
        content: format!("item {id}"),
        importance,
        expires_at: ttl,
        vector: None,
        last_touch: 0.0,
    };
    for i in 0..4 {
        assert!(wm.push(item(i, 1.0 + i as f64, None), i as f64).is_empty());
    }
    // Full: the weakest (id 0: importance 1, oldest) goes.
    let evicted = wm.push(item(10, 1.0, None), 5.0);
    assert_eq!(evicted.iter().map(|e| e.id).collect::<Vec<_>>(), vec![0]);
    // Low importance and old: id 10 (importance 1) goes before ids 1–3.
    let evicted = wm.push(item(11, 1.0, None), 6.0);
    assert_eq!(evicted[0].id, 10);
    // Recency can beat importance: id 1 (importance 2) touched much later outlives id 2
    // (importance 3, untouched).
    wm.touch(1, 500.0);
    let evicted = wm.push(item(12, 5.0, None), 501.0);
    assert_eq!(evicted[0].id, 11, "importance 1, old");
    let evicted = wm.push(item(13, 5.0, None), 502.0);
    assert_eq!(evicted[0].id, 2);
    assert!(wm.contains(1));
    for i in 0..200 {
        wm.push(item(100 + i, (i % 7) as f64 + 0.5, None), 600.0 + i as f64);
        assert!(wm.len() <= 4);
    }
    // TTL expiry.
    let mut wm = WorkingMemory::new(8, 100.0);
    wm.push(item(1, 1.0, Some(10.0)), 0.0);
    wm.push(item(2, 1.0, None), 0.0);
    assert_eq!(wm.expire(9.0).len(), 0);
    assert_eq!(wm.expire(10.0)[0].id, 1);
    assert!(!wm.contains(1) && wm.contains(2));
}

#[test]
fn episodes_keep_order_chain_and_stay_sealed() {
    let (l, cog, _) = setup();
    let p = project("p");
    let words = ItemMemory::new(dim(), 1);
    let mut rng = SeededRng::new(1);
    let e1 = cog.start_episode(&p, "agent").unwrap();
    let mut events = Vec::new();
    let mut vectors = Vec::new();
    for i in 0..5 {
        let id = event(&l, "p", Role::User, &format!("step {i}"));
        let v = topic_vector(&words, 0, &mut rng);
        assert_eq!(
            cog.append_to_episode(&p, e1, id, &v).unwrap(),
            AppendOutcome::Appended(i)
        );
        events.push(id);
        vectors.push(v);
    }
    cog.end_episode(&p, e1, Some("done"), Some(1.0)).unwrap();
    let ep = cog.episode(&p, e1).unwrap();
    assert_eq!(ep.events, events);
    assert_eq!(ep.status, EpisodeStatus::Sealed);
    // Episode vector: slot i probes back to event i; unrelated vectors are at chance.
    let vector = ep.vector.clone().unwrap();
    let unrelated = Hypervector::random(dim(), 999);
    for (i, v) in vectors.iter().enumerate() {
        assert!(vector.inverse_permute(i).similarity(v) > 0.2, "slot {i}");
    }
    assert!(vector.similarity(&unrelated).abs() < 0.06);
    assert!(ep.topic.as_ref().unwrap().similarity(&vectors[0]) > 0.2);
    // A sealed episode is not reopened, not even by an on-topic event.
    let late = event(&l, "p", Role::User, "late");
    assert!(cog.append_to_episode(&p, e1, late, &vectors[0]).is_err());
    // Chaining: starting the next episode links both ways; an open one is sealed first.
    let e2 = cog.start_episode(&p, "agent").unwrap();
    let e3 = cog.start_episode(&p, "agent").unwrap();
    assert_eq!(cog.episode(&p, e2).unwrap().status, EpisodeStatus::Sealed);
    assert_eq!(
        (
            cog.episode(&p, e1).unwrap().next,
            cog.episode(&p, e2).unwrap().prev
        ),
        (Some(e2), Some(e1))
    );
    assert_eq!(cog.episode(&p, e3).unwrap().prev, Some(e2));
    // Similar episodes by topic.
    let best = cog
        .similar_episodes(&p, &topic_vector(&words, 0, &mut rng), 1)
        .unwrap();
    assert_eq!(best[0].0, e1);
    // Another project sees none of it, and cannot append its events.
    assert!(cog.episode(&project("q"), e1).is_err());
    let foreign = event(&l, "q", Role::User, "foreign");
    assert!(cog.append_to_episode(&p, e3, foreign, &vectors[0]).is_err());
    assert!(
        cog.similar_episodes(&project("q"), &vectors[0], 5)
            .unwrap()
            .is_empty()
    );
    let wrong = Hypervector::random(Dim::new(64).unwrap(), 1);
    assert!(cog.append_to_episode(&p, e3, late, &wrong).is_err());
}

#[test]
fn topic_shifts_and_idleness_soft_seal_then_seal() {
    let (l, cog, clock) = setup();
    let p = project("p");
    let words = ItemMemory::new(dim(), 2);
    let mut rng = SeededRng::new(2);
    let ep = cog.start_episode(&p, "a").unwrap();
    for i in 0..4 {
        let id = event(&l, "p", Role::User, &format!("topic zero {i}"));
        cog.append_to_episode(&p, ep, id, &topic_vector(&words, 0, &mut rng))
            .unwrap();
    }
    let off = event(&l, "p", Role::User, "something else entirely");
    assert_eq!(
        cog.append_to_episode(&p, ep, off, &topic_vector(&words, 7, &mut rng))
            .unwrap(),
        AppendOutcome::TopicShift
    );
    assert_eq!(
        cog.episode(&p, ep).unwrap().status,
        EpisodeStatus::SoftSealed
    );
    assert_eq!(cog.episode(&p, ep).unwrap().events.len(), 4);
    // An on-topic event reopens a soft-sealed episode.
    let back = event(&l, "p", Role::User, "back to topic zero");
    assert_eq!(
        cog.append_to_episode(&p, ep, back, &topic_vector(&words, 0, &mut rng))
            .unwrap(),
        AppendOutcome::Appended(4)
    );
    assert_eq!(cog.episode(&p, ep).unwrap().status, EpisodeStatus::Open);
    // Idle: soft-sealed after 30 minutes, sealed after another 30.
    clock.advance(31.0 * 60.0);
    assert_eq!(cog.seal_idle(&p, 10).unwrap(), 1);
    assert_eq!(
        cog.episode(&p, ep).unwrap().status,
        EpisodeStatus::SoftSealed
    );
    clock.advance(31.0 * 60.0);
    assert_eq!(cog.seal_idle(&p, 10).unwrap(), 1);
    assert_eq!(cog.episode(&p, ep).unwrap().status, EpisodeStatus::Sealed);
}

/// A consolidation pass whose deadline has passed takes no episode (its vocabulary count
/// stops too), and the work is all there for the next pass: nothing is lost or half done.
#[test]
fn consolidation_past_its_deadline_defers_and_loses_nothing() {
    let (l, cog, _) = setup();
    let p = project("p");
    let words = ItemMemory::new(dim(), 3);
    let mut rng = SeededRng::new(4);
    for i in 0..12 {
        let ep = cog.start_episode(&p, "a").unwrap();
        for j in 0..3 {
            let text = format!(
                "the {} harvest needs {} crates",
                ["apple", "pear"][i % 2],
                j
            );
            let id = event(&l, "p", Role::User, &text);
            cog.append_to_episode(&p, ep, id, &topic_vector(&words, i % 2, &mut rng))
                .unwrap();
        }
        cog.end_episode(&p, ep, None, None).unwrap();
    }
    let past = std::time::Instant::now();
    assert_eq!(cog.consolidate_until(&p, 100, Some(past)).unwrap(), (0, 0));
    assert_eq!(cog.unconsolidated(&p).unwrap(), 12);
    assert!(cog.concepts(&p).unwrap().is_empty());
    let (done, created) = cog.consolidate(&p, 100).unwrap();
    assert_eq!(done, 12);
    assert_eq!(cog.unconsolidated(&p).unwrap(), 0);
    assert_eq!(cog.concepts(&p).unwrap().len(), created);
    assert!(created >= 1);
}

#[test]
fn consolidation_recovers_synthetic_topics_with_high_purity() {
    let (l, cog, _) = setup();
    let p = project("p");
    let words = ItemMemory::new(dim(), 3);
    let mut rng = SeededRng::new(3);
    let topics = 5;
    let mut truth = std::collections::HashMap::new();
    for i in 0..60 {
        let topic = (i * 7 + 3) % topics;
        let ep = cog.start_episode(&p, "a").unwrap();
        for j in 0..(3 + i % 4) {
            let id = event(&l, "p", Role::User, &format!("episode {i} event {j}"));
            cog.append_to_episode(&p, ep, id, &topic_vector(&words, topic, &mut rng))
                .unwrap();
        }
        cog.end_episode(&p, ep, None, Some(if topic == 4 { -1.0 } else { 1.0 }))
            .unwrap();
        truth.insert(ep, topic);
    }
    let (done, created) = cog.consolidate(&p, 1000).unwrap();
    assert_eq!(done, 60);
    let concepts = cog.concepts(&p).unwrap();
    assert_eq!(concepts.len(), created);
    let majority: usize = concepts
        .iter()
        .map(|c| {
            let mut counts = [0usize; 5];
            for e in &c.support {
                counts[truth[e]] += 1;
            }
            *counts.iter().max().unwrap()
        })
        .sum();
    let purity = majority as f64 / 60.0;
    eprintln!("{} concepts, purity {purity:.3}", concepts.len());
    assert!(purity >= 0.9, "purity {purity}");
    assert!(
        concepts.len() <= 2 * topics,
        "concepts must not fragment: {}",
        concepts.len()
    );
    assert!(
        concepts.len() >= topics - 1,
        "concepts must not collapse: {}",
        concepts.len()
    );
    // Reliability follows outcomes: topic 4 always failed.
    let worst = concepts
        .iter()
        .min_by(|a, b| a.reliability.total_cmp(&b.reliability))
        .unwrap();
    assert!(worst.reliability < 0.3);
    // Nearby concepts for a fresh topic-2 vector is the topic-2 concept.
    let q = topic_vector(&words, 2, &mut rng);
    let (best, _) = cog.nearby_concepts(&p, &q, 1).unwrap()[0];
    let c = concepts.iter().find(|c| c.id == best).unwrap();
    assert!(c.support.iter().filter(|e| truth[e] == 2).count() * 2 > c.support.len());
    // Cleanup is exact: refreshing changes nothing for prototypes built incrementally.
    assert_eq!(cog.refresh_concepts(&p, 100).unwrap(), 0);
    // Failing concept shows up as a knowledge gap.
    let gaps = cog.knowledge_gaps(&p, 10).unwrap();
    assert!(gaps.iter().any(|g| g.kind == GapKind::FailingConcept));
}

#[test]
fn procedure_reliability_converges_and_ranks_suggestions() {
    let (_, cog, _) = setup();
    let p = project("p");
    let trigger = Hypervector::random(dim(), 1);
    let steps = [Step {
        instruction: "run the migration".into(),
        code: Some("cargo run -- migrate".into()),
        tool_call: None,
    }];
    let good = cog
        .add_procedure(&p, "good", "deploy the service", &trigger, &steps)
        .unwrap();
    let bad = cog
        .add_procedure(&p, "bad", "deploy the service", &trigger, &steps)
        .unwrap();
    let mut rng = SeededRng::new(5);
    for _ in 0..200 {
        cog.record_procedure_outcome(&p, good, rng.unit_f64() < 0.8)
            .unwrap();
        cog.record_procedure_outcome(&p, bad, rng.unit_f64() < 0.2)
            .unwrap();
    }
    let g = cog.procedure(&p, good).unwrap().unwrap();
    assert!((g.reliability - 0.8).abs() < 0.07, "{}", g.reliability);
    let s = cog
        .suggest_procedures(&p, &trigger.with_noise(0.1, 1).unwrap(), 2)
        .unwrap();
    assert_eq!(s[0].procedure.id, good);
    assert!(s[0].score > s[1].score);
    assert_eq!(cog.unreliable_procedures(&p, 5, 0.3).unwrap()[0].id, bad);
    assert!(cog.add_procedure(&p, "empty", "x", &trigger, &[]).is_err());
    assert!(
        cog.record_procedure_outcome(&project("q"), good, true)
            .is_err(),
        "another project's id"
    );
}

#[test]
fn synapses_are_bounded_decay_and_ripple_respects_its_budget() {
    let (_, cog, clock) = setup();
    let p = project("p");
    for _ in 0..50 {
        cog.strengthen(&p, &[1, 2]).unwrap();
    }
    let w = cog.synapse(&p, 2, 1).unwrap();
    assert!(w > 0.99 && w < 1.0, "{w}");
    clock.advance(10.0 * DAY_MS);
    let decayed = cog.synapse(&p, 1, 2).unwrap();
    assert!((decayed - w * (-0.05f64 * 10.0).exp()).abs() < 1e-6);
    // A chain 1-2-3-...-40 and a star around 100.
    for i in 2..40u64 {
        cog.strengthen(&p, &[i, i + 1]).unwrap();
        cog.strengthen(&p, &[100, 200 + i]).unwrap();
    }
    let r = cog
        .ripple(
            &p,
            &[1],
            RippleParams {
                max_depth: 3,
                max_nodes: 100,
                hop_decay: 0.9,
                min_activation: 0.0,
                decay: true,
            },
        )
        .unwrap();
    assert!(all_of(r.iter(), |a| a.path.len() <= 4), "depth bound");
    assert_eq!(r.iter().map(|a| a.id).max(), Some(4));
    for a in &r {
        assert!(a.activation <= 1.0);
        assert_eq!(a.path.first(), Some(&1));
    }
    let r = cog
        .ripple(
            &p,
            &[100],
            RippleParams {
                max_depth: 5,
                max_nodes: 10,
                hop_decay: 0.9,
                min_activation: 0.0,
                decay: true,
            },
        )
        .unwrap();
    assert_eq!(r.len(), 10, "node bound");
    assert!(
        cog.ripple(&project("q"), &[1], RippleParams::default())
            .unwrap()
            .len()
            == 1,
        "only the seed in another project"
    );
}

#[test]
fn meta_memory_raises_proposals_once_and_tracks_their_status() {
    let (_, cog, _) = setup();
    let p = project("p");
    for _ in 0..5 {
        cog.record_metric(&p, "recall_latency_ms", 250.0, "1m")
            .unwrap();
        cog.record_metric(&p, "hot_hit_rate", 0.9, "1m").unwrap();
    }
    let raised = cog.reflect(&p).unwrap();
    assert_eq!(raised.len(), 1);
    assert_eq!(raised[0].rule, "slow_recall");
    assert!(raised[0].rationale.contains("250.000"));
    assert!(
        cog.reflect(&p).unwrap().is_empty(),
        "not raised twice while pending"
    );
    cog.set_proposal_status(&p, raised[0].id, ProposalStatus::Accepted)
        .unwrap();
    cog.set_proposal_status(&p, raised[0].id, ProposalStatus::Implemented)
        .unwrap();
    assert!(
        cog.set_proposal_status(&p, raised[0].id, ProposalStatus::Pending)
            .is_err()
    );
    assert!(cog.record_metric(&p, "x", f64::NAN, "1m").is_err());
    assert_eq!(
        cog.proposals(&p).unwrap()[0].status,
        ProposalStatus::Implemented
    );
}

#[test]
fn gaps_cover_weak_recalls_and_open_questions() {
    let (l, cog, _) = setup();
    let p = project("p");
    for q in ["what is the wifi password", "What is the  wifi password"] {
        cog.record_query(&p, q, 0.01, &[], true).unwrap();
    }
    cog.record_query(&p, "deploy day", 0.6, &[3], false)
        .unwrap();
    let ep = cog.start_episode(&p, "a").unwrap();
    let answered = event(&l, "p", Role::User, "What time is it?");
    let reply = event(&l, "p", Role::Assistant, "Noon.");
    let q = event(&l, "p", Role::User, "Which region hosts the database?");
    for e in [answered, reply, q] {
        cog.append_to_episode(&p, ep, e, &Hypervector::random(dim(), 1))
            .unwrap();
    }
    let gaps = cog.knowledge_gaps(&p, 10).unwrap();
    let weak: Vec<_> = gaps
        .iter()
        .filter(|g| g.kind == GapKind::WeakRecall)
        .collect();
    assert_eq!(weak.len(), 1, "identical gap queries aggregate");
    assert!(weak[0].description.contains("wifi"));
    assert_eq!(weak[0].count, 2);
    assert!(weak[0].first_at <= weak[0].last_at);
    let open: Vec<_> = gaps
        .iter()
        .filter(|g| g.kind == GapKind::OpenQuestion)
        .collect();
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0].evidence, vec![q.0]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Open questions are kept as episodes grow: whatever the interleaving of user and
    /// other turns across episodes, they are exactly the user questions of each episode
    /// after its last non-user event, newest first, at most `limit`.
    #[test]
    fn open_questions_are_the_unanswered_user_questions(
        steps in proptest::collection::vec((0usize..3, proptest::bool::ANY, proptest::bool::ANY), 0..40),
        limit in 1usize..12,
    ) {
        let (l, cog, _) = setup();
        let p = project("p");
        let episodes: Vec<_> = (0..3)
            .map(|i| cog.start_episode(&p, &format!("agent{i}")).unwrap())
            .collect();
        let vectors: Vec<_> = (0..3).map(|i| Hypervector::random(dim(), i)).collect();
        // Per episode, its events in order: (id, a user's, a question).
        let mut held: Vec<Vec<(EventId, bool, bool)>> = vec![Vec::new(); 3];
        for (n, (e, user, question)) in steps.into_iter().enumerate() {
            let role = if user { Role::User } else { Role::Assistant };
            let text = if question {
                format!("Where did the parcel number {n} go?")
            } else {
                format!("The parcel number {n} went north.")
            };
            let id = event(&l, "p", role, &text);
            cog.append_to_episode(&p, episodes[e], id, &vectors[e]).unwrap();
            held[e].push((id, user, question));
        }
        let mut expected: Vec<u64> = held
            .iter()
            .flat_map(|events| {
                let answered = events.iter().rposition(|e| !e.1).map_or(0, |i| i + 1);
                events[answered..].iter().filter(|e| e.1 && e.2).map(|e| e.0.0)
            })
            .collect();
        expected.sort_unstable_by(|a, b| b.cmp(a));
        expected.truncate(limit);
        let found: Vec<u64> = cog
            .knowledge_gaps(&p, limit)
            .unwrap()
            .into_iter()
            .filter(|g| g.kind == GapKind::OpenQuestion)
            .map(|g| g.evidence[0])
            .collect();
        proptest::prop_assert_eq!(found, expected);
    }
}

/// A ledger written before open questions were kept finds its open questions after the
/// migration that adds them.
#[test]
fn the_migration_finds_the_open_questions_already_stored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.db");
    let l = Arc::new(Ledger::open_unmigrated(&path, LedgerConfig::default()).unwrap());
    l.migrate_to(8, false).unwrap();
    let raw = rusqlite::Connection::open(&path).unwrap();
    let stored = |role: &str, text: &str| -> i64 {
        raw.execute(
            "INSERT INTO events (project, role, kind, content, content_hash, created_at, ingested_at)
             VALUES ('p', ?1, 'message', ?2, 'h', 1, 1)",
            [role, text],
        )
        .unwrap();
        raw.last_insert_rowid()
    };
    let asked = stored("user", "Which port does the proxy use?");
    let reply = stored("assistant", "Port 8080.");
    let open = stored("user", "And the admin console? ");
    raw.execute(
        "INSERT INTO episodes (id, project, agent, status, started_at, last_event_at) VALUES (1, 'p', 'a', 'open', 1, 1)",
        [],
    )
    .unwrap();
    for (position, e) in [asked, reply, open].into_iter().enumerate() {
        raw.execute(
            "INSERT INTO episode_events (episode_id, position, event_id, vector, project) VALUES (1, ?1, ?2, x'00', 'p')",
            [position as i64, e],
        )
        .unwrap();
    }
    l.migrate(false).unwrap();
    let cog = Cognition::new(l.clone(), dim(), CognitionConfig::default());
    let found: Vec<u64> = cog
        .knowledge_gaps(&project("p"), 10)
        .unwrap()
        .into_iter()
        .filter(|g| g.kind == GapKind::OpenQuestion)
        .map(|g| g.evidence[0])
        .collect();
    assert_eq!(found, vec![open as u64]);
}

#[test]
fn observations_outside_episodes_become_candidates_once_by_the_same_reader() {
    let (l, cog, _) = setup();
    let p = project("p");
    // Written for this test: lasting items and decoys of the same surface.
    let lasting = [
        event(
            &l,
            "p",
            Role::User,
            "I'm vegetarian and I cook most evenings.",
        ),
        event(
            &l,
            "p",
            Role::User,
            "We've decided the book club meets on Thursdays.",
        ),
        event(
            &l,
            "p",
            Role::User,
            "From now on, write dates as YYYY-MM-DD.",
        ),
        event(
            &l,
            "p",
            Role::Assistant,
            "Noted: from now on I'll always reply in Dutch.",
        ),
    ];
    let decoys = [
        event(
            &l,
            "p",
            Role::User,
            "Am I vegetarian or was that my cousin?",
        ),
        event(&l, "p", Role::User, "If I were vegetarian I'd miss bacon."),
        event(&l, "p", Role::User, "My uncle says he never eats fish."),
        event(&l, "p", Role::User, "I'm stuck on a delayed bus right now."),
        event(
            &l,
            "p",
            Role::Assistant,
            "You could try a vegetarian lasagne.",
        ),
        event(&l, "p", Role::User, "We haven't decided on the venue yet."),
    ];
    // Budgets smaller than the events: the mark moves on in id order, nothing twice.
    let (mut read, mut made) = (0, Vec::new());
    loop {
        let (n, c) = cog.curate_loose(&p, 3).unwrap();
        if n == 0 {
            break;
        }
        read += n;
        made.extend(c);
    }
    assert_eq!(read, lasting.len() + decoys.len());
    let cited: Vec<EventId> = made
        .iter()
        .flat_map(|b| l.belief(&p, *b).unwrap().unwrap().evidence)
        .collect();
    assert_eq!(cited, lasting.to_vec(), "every lasting item, no decoy");
    for b in &made {
        assert_eq!(
            l.belief(&p, *b).unwrap().unwrap().status,
            BeliefStatus::Candidate
        );
    }
    // An event in an episode is read when the episode is sealed, not as a loose one.
    let ep = cog.start_episode(&p, "a").unwrap();
    let inside = l
        .append(
            NewEvent::new(
                p.clone(),
                Role::User,
                EventKind::Message,
                "I'm allergic to kiwis.",
            )
            .agent("a"),
        )
        .unwrap()
        .id;
    cog.append_to_episode(&p, ep, inside, &Hypervector::random(dim(), 7))
        .unwrap();
    assert_eq!(cog.curate_loose(&p, 10).unwrap(), (0, Vec::new()));
    cog.end_episode(&p, ep, None, None).unwrap();
    assert_eq!(cog.curate(&p, 10).unwrap()[0].candidates.len(), 1);
    // The pulse curates loose events too.
    let later = event(&l, "p", Role::User, "My sister Ines is a pilot.");
    let receipt = cog.tick(&p, PulseBudget::default()).unwrap();
    assert!(
        receipt.phases.iter().any(|ph| ph
            .produced
            .contains("1 events outside episodes curated (1 candidates)")),
        "{receipt:?}"
    );
    assert!(
        l.beliefs_with_status(&p, BeliefStatus::Candidate)
            .unwrap()
            .iter()
            .any(|b| b.evidence == vec![later])
    );
}

#[test]
fn curator_candidates_cite_their_own_episode_and_wait_for_governance() {
    let (l, cog, _) = setup();
    let p = project("p");
    let ep = cog.start_episode(&p, "a").unwrap();
    let pref = event(&l, "p", Role::User, "I prefer tabs over spaces.");
    let plain = event(&l, "p", Role::User, "Let's look at the build.");
    let claim = event(&l, "p", Role::Assistant, "I like to use spaces.");
    for e in [pref, plain, claim] {
        cog.append_to_episode(&p, ep, e, &Hypervector::random(dim(), e.0))
            .unwrap();
    }
    cog.end_episode(&p, ep, None, None).unwrap();
    let other_ep = cog.start_episode(&p, "b").unwrap();
    let curated = cog.curate(&p, 10).unwrap();
    assert_eq!(curated.len(), 1);
    let candidates: Vec<_> = curated[0]
        .candidates
        .iter()
        .map(|id| l.belief(&p, *id).unwrap().unwrap())
        .collect();
    assert_eq!(
        candidates.len(),
        1,
        "a preference; the assistant's claim proposes nothing, and summaries are per concept"
    );
    let episode_events = cog.episode(&p, ep).unwrap().events;
    for c in &candidates {
        assert_eq!(c.status, BeliefStatus::Candidate);
        assert!(!c.evidence.is_empty() && c.evidence.iter().all(|e| episode_events.contains(e)));
    }
    assert!(
        l.current_belief(&p, &candidates[0].key).unwrap().is_none(),
        "candidates are not beliefs"
    );
    assert!(
        cog.curate(&p, 10).unwrap().is_empty(),
        "each episode is curated once"
    );
    // Candidates without exact evidence of their own episode are refused.
    let propose = |evidence: Vec<EventId>| Op::Propose {
        key: "x".into(),
        statement: "y".into(),
        ownership: Ownership::Project,
        agent: None,
        confidence: 0.5,
        evidence,
    };
    use hypermem::cognition::CandidateRefusal;
    assert_eq!(
        cog.submit_candidate(&p, ep, "c1", propose(vec![])).unwrap(),
        Err(CandidateRefusal::NoEvidence)
    );
    let outside = event(&l, "p", Role::User, "unrelated");
    assert_eq!(
        cog.submit_candidate(&p, ep, "c2", propose(vec![outside]))
            .unwrap(),
        Err(CandidateRefusal::EvidenceOutsideEpisode(outside))
    );
    assert_eq!(
        cog.submit_candidate(&p, other_ep, "c3", propose(vec![pref]))
            .unwrap(),
        Err(CandidateRefusal::EvidenceOutsideEpisode(pref))
    );
    let not_propose = Op::Reject {
        belief: candidates[0].id,
    };
    assert_eq!(
        cog.submit_candidate(&p, ep, "c4", not_propose).unwrap(),
        Err(CandidateRefusal::NotAProposal)
    );
    // Governed promotion of the user preference (user evidence) succeeds.
    let out = l
        .apply_plan(&Plan::single(
            p.clone(),
            "promote",
            Op::Promote {
                belief: candidates[0].id,
                expected_version: None,
            },
        ))
        .unwrap();
    assert!(matches!(out, PlanOutcome::Applied { .. }), "{out:?}");
}

#[test]
fn pulse_runs_its_phases_in_order_within_budget_and_never_deletes_events() {
    let (l, cog, clock) = setup();
    let p = project("p");
    let words = ItemMemory::new(dim(), 9);
    let mut rng = SeededRng::new(9);
    for i in 0..30 {
        // One agent per episode, so the unended ones stay open until they idle out.
        let ep = cog.start_episode(&p, &format!("agent{i}")).unwrap();
        for j in 0..3 {
            let id = event(
                &l,
                "p",
                Role::User,
                &format!("I prefer option {i}-{j}. Why?"),
            );
            cog.append_to_episode(&p, ep, id, &topic_vector(&words, i % 3, &mut rng))
                .unwrap();
        }
        if i % 2 == 0 {
            cog.end_episode(&p, ep, None, Some(1.0)).unwrap();
        }
    }
    cog.with_working(&p, "a", |wm, now| {
        wm.push(
            WorkingItem {
                id: 1,
                kind: "goal".into(),
                content: "x".into(),
                importance: 1.0,
                expires_at: Some(now + 1.0),
                vector: None,
                last_touch: now,
            },
            now,
        )
    });
    clock.advance(2.0 * 3600.0);
    let events_before = l.count(&p).unwrap();
    let receipt = cog
        .tick(
            &p,
            PulseBudget {
                items_per_phase: 5,
                time_per_phase: Duration::from_secs(5),
            },
        )
        .unwrap();
    let names: Vec<hypermem::cognition::Phase> = receipt.phases.iter().map(|r| r.phase).collect();
    assert_eq!(names, hypermem::cognition::PHASES.to_vec());
    assert_eq!(
        receipt.phases[0].items, 1,
        "the expired working-memory item"
    );
    for r in &receipt.phases {
        if r.phase != "gap_detection" {
            assert!(r.items <= 5 + 5, "{} processed {}", r.phase, r.items);
        }
    }
    assert!(
        receipt.phases[1].budget_exhausted,
        "15 idle episodes, budget 5"
    );
    assert_eq!(
        l.count(&p).unwrap(),
        events_before,
        "no phase deletes raw events"
    );
    // A zero time budget stops every bounded phase at once.
    let quick = cog
        .tick(
            &p,
            PulseBudget {
                items_per_phase: 1000,
                time_per_phase: Duration::ZERO,
            },
        )
        .unwrap();
    assert!(quick.phases.iter().filter(|r| r.budget_exhausted).count() >= 3);
    // Drain with generous budgets: everything sealed, consolidated, curated, associated.
    for _ in 0..10 {
        cog.tick(
            &p,
            PulseBudget {
                items_per_phase: 100,
                time_per_phase: Duration::from_secs(5),
            },
        )
        .unwrap();
    }
    assert_eq!(
        cog.concepts(&p)
            .unwrap()
            .iter()
            .map(|c| c.support.len())
            .sum::<usize>(),
        30
    );
    assert_eq!(l.count(&p).unwrap(), events_before);
}

#[test]
fn background_runner_ticks_until_stopped() {
    let (_, cog, _) = setup();
    let cog = Arc::new(cog);
    let runner = PulseRunner::start(
        cog.clone(),
        vec![project("p")],
        Duration::from_millis(10),
        PulseBudget::default(),
    );
    std::thread::sleep(Duration::from_millis(120));
    let receipts = runner.stop();
    assert!(receipts.len() >= 2, "{} ticks", receipts.len());
    assert!(all_of(receipts.iter(), |r| r.phases.len() == 7));
}

#[test]
fn associations_are_candidates_with_sources() {
    let (l, cog, _) = setup();
    let p = project("p");
    let words = ItemMemory::new(dim(), 11);
    let mut rng = SeededRng::new(11);
    let mut last_events = Vec::new();
    for i in 0..6 {
        let ep = cog.start_episode(&p, "a").unwrap();
        last_events.clear();
        for j in 0..3 {
            let id = event(&l, "p", Role::User, &format!("note {i}-{j}"));
            cog.append_to_episode(&p, ep, id, &topic_vector(&words, i % 2, &mut rng))
                .unwrap();
            last_events.push(id.0);
        }
        cog.end_episode(&p, ep, None, None).unwrap();
    }
    cog.consolidate(&p, 100).unwrap();
    let linked = event(&l, "p", Role::User, "the linked memory about caching");
    cog.strengthen(&p, &[last_events[0], linked.0]).unwrap();
    let assoc = cog.generate_associations(&p, 10).unwrap();
    assert!(!assoc.is_empty());
    let newest = assoc.iter().max_by_key(|a| a.episode).unwrap();
    assert!(
        newest.suggestion.contains("caching"),
        "{}",
        newest.suggestion
    );
    assert!(newest.sources.contains(&linked.0.to_string()));
    assert!((0.0..=1.0).contains(&newest.confidence));
    assert!(
        cog.generate_associations(&p, 10).unwrap().is_empty(),
        "one pass per episode"
    );
    assert_eq!(cog.associations(&p, 100).unwrap().len(), assoc.len());
    assert!(cog.associations(&project("q"), 100).unwrap().is_empty());
}

#[test]
fn recall_snapshots_enter_working_memory_bounded_and_expire() {
    let (_, cog, clock) = setup();
    let p = project("p");
    let results: Vec<(u64, String, f64)> = (0..100)
        .map(|i| (i, format!("hit {i}"), 1.0 + (i % 10) as f64))
        .collect();
    cog.push_recall_snapshot(&p, "a", &results, 60.0);
    let (len, strongest) = cog.with_working(&p, "a", |wm, _| (wm.len(), wm.items()[0].importance));
    assert_eq!(len, 64, "default capacity");
    assert_eq!(strongest, 10.0);
    assert_eq!(
        cog.with_working(&project("q"), "a", |wm, _| wm.len()),
        0,
        "per project"
    );
    clock.advance(61.0);
    let receipt = cog.tick(&p, PulseBudget::default()).unwrap();
    assert_eq!(
        receipt.phases[0].items, 64,
        "expired by the working-memory phase"
    );
}

#[test]
fn a_phase_whose_time_is_spent_leaves_its_items_for_the_next_tick() {
    let (l, cog, _) = setup();
    let p = project("p");
    for i in 0..6u64 {
        let ep = cog.start_episode(&p, "a").unwrap();
        for j in 0..3u64 {
            let e = event(&l, "p", Role::User, &format!("episode {i} turn {j}"));
            cog.append_to_episode(&p, ep, e, &Hypervector::random(dim(), 100 * i + j))
                .unwrap();
        }
        cog.end_episode(&p, ep, None, None).unwrap();
    }
    let spent = PulseBudget {
        items_per_phase: 100,
        time_per_phase: Duration::ZERO,
    };
    let receipt = cog.tick(&p, spent).unwrap();
    let refresh = receipt
        .phases
        .iter()
        .find(|ph| ph.phase == "semantic_refresh")
        .unwrap();
    assert_eq!(refresh.items, 0, "{refresh:?}");
    assert!(refresh.budget_exhausted);
    assert!(
        refresh.produced.contains("6 episodes left to consolidate"),
        "{refresh:?}"
    );
    // With time, the next tick does them.
    let receipt = cog.tick(&p, PulseBudget::default()).unwrap();
    let refresh = receipt
        .phases
        .iter()
        .find(|ph| ph.phase == "semantic_refresh")
        .unwrap();
    assert!(
        refresh.produced.starts_with("6 episodes consolidated")
            && refresh.produced.contains("0 episodes left"),
        "{refresh:?}"
    );
}

#[test]
fn a_working_memory_moved_out_and_restored_keeps_its_order_expiry_and_bound() {
    use hypermem::cognition::{WorkingItem, WorkingMemory};
    let item = |id: u64, importance: f64, expires_at: Option<f64>| WorkingItem {
        id,
        kind: "note".into(),
        content: format!("item {id}"),
        importance,
        expires_at,
        vector: None,
        last_touch: 0.0,
    };
    let mut wm = WorkingMemory::new(3, 600.0);
    wm.push(item(1, 1.0, None), 10.0);
    wm.push(item(2, 5.0, Some(100.0)), 20.0);
    wm.push(item(3, 2.0, None), 30.0);
    let order: Vec<u64> = wm.items().iter().map(|i| i.id).collect();
    let mut back = WorkingMemory::restore(3, 600.0, wm.clone().into_items());
    assert_eq!(back.items().iter().map(|i| i.id).collect::<Vec<_>>(), order);
    assert_eq!(back.expire(150.0).len(), 1, "expiry kept");
    // Restored into a smaller bound: the weakest go.
    let small = WorkingMemory::restore(2, 600.0, wm.into_items());
    assert_eq!(small.len(), 2);
    assert_eq!(
        small.items().iter().map(|i| i.id).collect::<Vec<_>>(),
        order[..2]
    );
}

#[test]
fn a_tick_counts_the_events_received_since_the_previous_one() {
    let (l, cog, _) = setup();
    let p = project("p");
    for i in 0..3 {
        event(&l, "p", Role::User, &format!("note {i} about the lathe"));
    }
    event(&l, "other", Role::User, "another project's note");
    let budget = PulseBudget::default();
    assert_eq!(
        cog.tick(&p, budget).unwrap().new_events,
        3,
        "every event, first"
    );
    assert_eq!(cog.tick(&p, budget).unwrap().new_events, 0);
    event(&l, "p", Role::User, "one more note");
    event(&l, "other", Role::User, "not this project's");
    assert_eq!(cog.tick(&p, budget).unwrap().new_events, 1);
    // A second process (another Cognition over the same ledger) counts from the same mark.
    let again = Cognition::new(l.clone(), dim(), CognitionConfig::default());
    assert_eq!(again.tick(&p, budget).unwrap().new_events, 0);
}
