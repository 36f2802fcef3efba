//! End to end through `Memory`: observe, recall across sessions, isolation, packs within
//! budget with full receipts, erasure across every store, repair after an interrupted
//! observation.

mod common;

use common::project;
use hypermem::hdv::Dim;
use hypermem::ledger::{EventKind, NewEvent, Role};
use hypermem::store::VectorTier;
use hypermem::{Memory, Profile, ProfileKind};

fn profile() -> Profile {
    let mut p = Profile::load(Profile::bundled_path(ProfileKind::Lite)).unwrap();
    p.dim = Dim::new(2048).unwrap();
    p
}

fn say(p: &str, session: &str, role: Role, text: &str) -> NewEvent {
    NewEvent::new(project(p), role, EventKind::Message, text)
        .thread(session)
        .session(session)
}

#[test]
fn a_preference_from_one_session_is_recalled_in_a_later_one() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    m.observe_batch(&[
        say(
            "p",
            "s1",
            Role::User,
            "For all my projects I prefer tabs over spaces, four wide.",
        ),
        say("p", "s1", Role::Assistant, "Noted: tabs, width four."),
        say(
            "p",
            "s1",
            Role::User,
            "Also the deploy script lives in tools/deploy.sh.",
        ),
    ])
    .unwrap();
    for i in 0..30 {
        m.observe(say(
            "p",
            "s2",
            if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            &format!("unrelated chatter number {i} about lunch plans"),
        ))
        .unwrap();
    }
    let hits = m
        .recall(&project("p"), "does the user prefer tabs or spaces?", 5)
        .unwrap();
    assert!(
        hits[0].event.content.contains("tabs over spaces"),
        "{:?}",
        hits[0].event.content
    );
    assert!(
        hits[0].fused.breakdown.len() == 2,
        "found by both the vector and the full-text source"
    );
    assert_eq!(hits[0].event.thread.as_deref(), Some("s1"));
}

#[test]
fn nothing_crosses_projects_and_packs_stay_within_budget() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    for p in ["alpha", "beta"] {
        let events: Vec<_> = (0..40)
            .map(|i| say(p, "s", Role::User, &format!("{p} shares the same words: the database migration plan step {i} is long enough to need tokens")))
            .collect();
        m.observe_batch(&events).unwrap();
    }
    let hits = m
        .recall(&project("alpha"), "database migration plan", 20)
        .unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| h.event.project == "alpha"));
    for requested in [None, Some(50), Some(100_000)] {
        let pack = m
            .recall_pack(
                &project("alpha"),
                "database migration plan",
                1000,
                requested,
            )
            .unwrap();
        assert!(
            pack.budget <= 300,
            "never above 30 % of the available tokens"
        );
        assert!(pack.used <= pack.budget);
        let accounted = pack.items.len() + pack.suppressed.len();
        assert!(
            accounted >= 20,
            "every candidate is in the receipt: {accounted}"
        );
        assert!(
            pack.items
                .iter()
                .all(|(line, _)| line.tokens > 0 && !line.reason.is_empty())
        );
        assert!(
            pack.suppressed
                .iter()
                .all(|l| l.reason.contains("over budget"))
        );
    }
}

#[test]
fn forget_project_erases_every_store_and_spares_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    for p in ["gone", "kept"] {
        m.observe_batch(&[
            say(p, "s", Role::User, "I like green tea"),
            say(p, "s", Role::Assistant, "Green tea it is"),
        ])
        .unwrap();
        m.recall(&project(p), "tea", 5).unwrap();
    }
    let receipt = m.forget_project(&project("gone")).unwrap();
    assert_eq!(receipt.vectors, 2);
    assert_eq!(receipt.ledger.rows["events"], 2);
    assert!(receipt.ledger.rows["synapses"] >= 1);
    assert!(receipt.ledger.rows["query_log"] >= 1);
    let ledger = m.ledger();
    for t in ledger.tables().unwrap() {
        if ledger.has_project_column(&t).unwrap() {
            assert_eq!(
                ledger.count_rows(&t, &project("gone")).unwrap(),
                0,
                "table {t}"
            );
        }
    }
    assert_eq!(m.vectors().len(&project("gone")), 0);
    assert!(!dir.path().join("vectors/projects/gone").exists());
    assert!(m.recall(&project("gone"), "tea", 5).unwrap().is_empty());
    assert_eq!(m.recall(&project("kept"), "green tea", 5).unwrap().len(), 2);
}

#[test]
fn reopening_repairs_events_whose_vectors_were_not_stored() {
    let dir = tempfile::tempdir().unwrap();
    {
        let m = Memory::open(&profile(), Some(dir.path())).unwrap();
        m.observe(say("p", "s", Role::User, "kept through a crash"))
            .unwrap();
        // Simulate a crash between the ledger commit and the vector append.
        m.ledger()
            .append(say(
                "p",
                "s",
                Role::User,
                "ledger only: the vector was lost",
            ))
            .unwrap();
        assert_eq!(m.vectors().len(&project("p")), 1);
    }
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    assert_eq!(m.vectors().len(&project("p")), 2);
    let hits = m.recall(&project("p"), "vector was lost", 1).unwrap();
    assert!(
        hits[0].similarity.is_some(),
        "found by the vector source too"
    );
}
