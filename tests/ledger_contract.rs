//! The event log's contract (`hypermem::ledger::EventLog`), the same assertions on every
//! backend: SQLite always; PostgreSQL when the build has the `postgres` feature (the
//! scale build) and `HYPERMEM_TEST_POSTGRES_URL` names a server (the test command starts
//! one). Without one the PostgreSQL half says loudly that it skips;
//! `HYPERMEM_REQUIRE_POSTGRES=1` makes that a failure.
//!
//! Two handles on one store stand for two nodes (two connections to one PostgreSQL, two
//! connections to one SQLite file): concurrent appends through both number every event of
//! a thread exactly once.

mod common;

use std::collections::BTreeSet;

use common::project;
use hypermem::ledger::{
    Causality, EventId, EventKind, EventLog, Ledger, LedgerConfig, LedgerError, NewEvent, Role,
};

/// Opens a new handle on one store (a "node").
type Opener = Box<dyn Fn() -> Box<dyn EventLog> + Send + Sync>;

/// A short limit, so the size refusal is cheap to reach.
fn config() -> LedgerConfig {
    LedgerConfig {
        max_content_bytes: 4096,
        ..LedgerConfig::default()
    }
}

fn note(p: &str, thread: &str, text: &str) -> NewEvent {
    NewEvent::new(project(p), Role::User, EventKind::Message, text)
        .thread(thread)
        .session(thread)
}

/// Every clause of the contract on the store `open` opens; `tag` keeps this run's
/// projects apart from any other run's on a shared server.
fn contract(open: &Opener, tag: &str) {
    let log = open();
    let backend = log.backend();
    let p = format!("{tag}-p");
    let q = format!("{tag}-q");

    // A batch: ids grow, threads and sessions are numbered, each links to the previous.
    let ids = log
        .append_batch(&[
            note(&p, "t", "The boat leaves at nine."),
            note(&q, "t", "Another project's note."),
            note(&p, "t", "Bring the red bag.")
                .speaker("Radek")
                .agent("planner"),
            note(&p, "t", "Tickets: 4 × €12, NUL \u{0} inside, ünïcödé ✓").at(1_700_000_000_000),
        ])
        .unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{backend}: ids grow");
    let get = |pr: &str, id: EventId| log.get(&project(pr), id).unwrap();
    let first = get(&p, ids[0]).unwrap();
    let third = get(&p, ids[2]).unwrap();
    let fourth = get(&p, ids[3]).unwrap();
    assert_eq!(first.content, "The boat leaves at nine.");
    assert_eq!(
        (first.thread_seq, third.thread_seq, fourth.thread_seq),
        (Some(1), Some(2), Some(3)),
        "{backend}: a project's thread numbered apart from another project's"
    );
    assert_eq!(third.session_seq, Some(2));
    assert_eq!(
        (first.prev, third.prev, fourth.prev),
        (None, Some(ids[0]), Some(ids[2]))
    );
    assert_eq!(third.speaker.as_deref(), Some("Radek"));
    assert_eq!(third.agent.as_deref(), Some("planner"));
    assert_eq!(
        fourth.content,
        "Tickets: 4 × €12, NUL \u{0} inside, ünïcödé ✓"
    );
    assert_eq!(fourth.created_at, 1_700_000_000_000);
    assert_eq!(get(&q, ids[1]).unwrap().thread_seq, Some(1));
    // Projects never see each other's events.
    assert!(get(&p, ids[1]).is_none(), "{backend}");
    assert!(get(&q, ids[0]).is_none(), "{backend}");
    assert_eq!(log.count(&project(&p)).unwrap(), 3);
    assert_eq!(log.last_id(&project(&p)).unwrap(), Some(ids[3]));
    assert_eq!(log.last_id(&project(&format!("{tag}-none"))).unwrap(), None);

    // Reading the log forward.
    let page: Vec<EventId> = log
        .after(&project(&p), None, 2)
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(page, [ids[0], ids[2]]);
    let rest: Vec<EventId> = log
        .after(&project(&p), Some(ids[2]), 10)
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(rest, [ids[3]]);

    // A reply links to its parent; a parent of another project is unknown and the whole
    // batch is refused.
    let reply = log
        .append_batch(&[
            note(&p, "t", "Noted.").reply_to(ids[0], hypermem::ledger::Causality::RepliesTo)
        ])
        .unwrap()[0];
    assert_eq!(get(&p, reply).unwrap().parent, Some(ids[0]));
    // The log's sequence has reached the newest write (of any project).
    let sequence = log.sequence().unwrap();
    assert!(
        sequence >= reply.0,
        "{backend}: sequence {sequence} < {}",
        reply.0
    );
    let before = log.count(&project(&p)).unwrap();
    let refused = log.append_batch(&[
        note(&p, "t", "This one is fine."),
        note(&p, "t", "Reply to a stranger.")
            .reply_to(ids[1], hypermem::ledger::Causality::RepliesTo),
    ]);
    assert!(
        matches!(refused, Err(LedgerError::UnknownEvent(id)) if id == ids[1]),
        "{backend}: {refused:?}"
    );
    assert_eq!(
        log.count(&project(&p)).unwrap(),
        before,
        "{backend}: nothing written"
    );
    assert_eq!(
        log.sequence().unwrap(),
        sequence,
        "{backend}: a refused batch does not move the sequence"
    );

    // A source id is unique within its project, not across projects.
    let mut keyed = note(&p, "k", "Imported line 1.");
    keyed.source_id = Some("line-1".into());
    log.append_batch(std::slice::from_ref(&keyed)).unwrap();
    let mut again = note(&p, "k", "Imported line 1, twice.");
    again.source_id = Some("line-1".into());
    let refused = log.append_batch(&[note(&p, "k", "A good one first."), again]);
    assert!(
        matches!(
            &refused,
            Err(LedgerError::Invalid {
                what: "source_id",
                ..
            })
        ),
        "{backend}: {refused:?}"
    );
    assert_eq!(
        log.count(&project(&p)).unwrap(),
        before + 1,
        "{backend}: nothing written"
    );
    let mut elsewhere = note(&q, "k", "Imported line 1 of another project.");
    elsewhere.source_id = Some("line-1".into());
    log.append_batch(&[elsewhere]).unwrap();
    // The refused batch left no gap in the numbering.
    let next = log.append_batch(&[note(&p, "k", "Line 2.")]).unwrap()[0];
    assert_eq!(get(&p, next).unwrap().thread_seq, Some(2), "{backend}");

    // Refused before anything is written.
    let count = log.count(&project(&p)).unwrap();
    let big = "x".repeat(5000);
    assert!(matches!(
        log.append_batch(&[note(&p, "t", "ok"), note(&p, "t", &big)]),
        Err(LedgerError::ContentTooLarge {
            size: 5000,
            limit: 4096
        })
    ));
    assert!(matches!(
        log.append_batch(&[note(&p, "t", "  \n")]),
        Err(LedgerError::Invalid {
            what: "content",
            ..
        })
    ));
    let mut nan = note(&p, "t", "odd");
    nan.ordering_confidence = f64::NAN;
    assert!(matches!(
        log.append_batch(&[nan]),
        Err(LedgerError::Invalid {
            what: "ordering_confidence",
            ..
        })
    ));
    assert_eq!(log.count(&project(&p)).unwrap(), count, "{backend}");

    // Two nodes append to one thread at once: every event numbered exactly once.
    let r = format!("{tag}-r");
    std::thread::scope(|s| {
        for node in 0..2 {
            let (open, r) = (&open, &r);
            s.spawn(move || {
                let log = open();
                for i in 0..25 {
                    let batch = [
                        note(r, "shared", &format!("node {node} note {i}a")),
                        note(r, "shared", &format!("node {node} note {i}b")),
                    ];
                    log.append_batch(&batch).unwrap();
                }
            });
        }
    });
    let all = log.after(&project(&r), None, 1000).unwrap();
    assert_eq!(all.len(), 100, "{backend}");
    let seqs: BTreeSet<i64> = all.iter().filter_map(|e| e.thread_seq).collect();
    assert_eq!(seqs, (1..=100).collect(), "{backend}: each number once");
    for pair in all.windows(2) {
        assert_eq!(
            pair[1].prev,
            Some(pair[0].id),
            "{backend}: links in id order"
        );
        assert_eq!(pair[1].thread_seq, pair[0].thread_seq.map(|s| s + 1));
    }
}

#[test]
fn the_event_log_contract_holds_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.db");
    Ledger::open(&path, config()).unwrap();
    let open: Opener = Box::new(move || Box::new(Ledger::open(&path, config()).unwrap()));
    contract(&open, "sqlite");
}

#[test]
fn the_event_log_contract_holds_on_postgres() {
    #[cfg(not(feature = "postgres"))]
    {
        assert!(
            std::env::var("HYPERMEM_REQUIRE_POSTGRES").as_deref() != Ok("1"),
            "HYPERMEM_REQUIRE_POSTGRES=1 but this build has no `postgres` feature"
        );
        eprintln!(
            "!! SKIP: built without the `postgres` feature: the PostgreSQL event log is not tested here (the scale build tests it)"
        );
    }
    #[cfg(feature = "postgres")]
    {
        let Some(url) = common::postgres_url("the PostgreSQL event log is") else {
            return;
        };
        let tag = format!(
            "pg{}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        );
        let open: Opener = Box::new(move || Box::new(Ledger::connect(&url, config()).unwrap()));
        contract(&open, &tag);
    }
}

/// A server that cannot be reached is a named refusal, not a hang or a panic.
#[cfg(feature = "postgres")]
#[test]
fn an_unreachable_postgres_is_a_named_refusal() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let err = hypermem::ledger::Ledger::connect(
        &format!("postgres://hm@127.0.0.1:{port}/postgres?connect_timeout=5"),
        config(),
    )
    .unwrap_err();
    let err = hypermem::Error::from(err);
    assert_eq!(err.reason(), hypermem::Reason::Unavailable);
    let text = err.to_string();
    assert!(text.contains("cannot be reached"), "{text}");
}

/// The rest of what the engine reads and writes through a [`Ledger`], the same on each
/// engine: context, full-text search, retries by source id, the embedder's queue, erasure.
fn ledger_contract(l: &Ledger, tag: &str) {
    let backend = l.backend();
    let p = project(&format!("{tag}-lp"));
    let q = project(&format!("{tag}-lq"));
    let at = |n: &str| note(p.as_str(), "t", n);
    let ids = l
        .append_batch(&[
            at("The ferry to the island leaves at nine."),
            at("Pack the red bag for the ferry ferry.").speaker("Radek"),
            at("Lunch is at the harbour café.").speaker("Ines"),
            NewEvent::new(q.clone(), Role::User, EventKind::Message, "The ferry of q."),
        ])
        .unwrap();
    let reply = l
        .append(at("Which ferry?").reply_to(ids[0], Causality::RepliesTo))
        .unwrap();

    // Context: neighbours of the thread, the parent, the children.
    let ctx = l.event_context(&p, ids[1], 1, 1).unwrap();
    assert_eq!(
        ctx.before.iter().map(|e| e.id).collect::<Vec<_>>(),
        vec![ids[0]],
        "{backend}"
    );
    assert_eq!(
        ctx.after.iter().map(|e| e.id).collect::<Vec<_>>(),
        vec![ids[2]]
    );
    let ctx = l.event_context(&p, ids[0], 0, 0).unwrap();
    assert_eq!(
        ctx.children.iter().map(|e| e.id).collect::<Vec<_>>(),
        vec![reply.id]
    );
    assert_eq!(
        l.event_context(&p, reply.id, 0, 0)
            .unwrap()
            .parent
            .map(|e| e.id),
        Some(ids[0])
    );
    assert!(matches!(
        l.event_context(&q, ids[0], 0, 0),
        Err(LedgerError::UnknownEvent(_))
    ));

    // Full-text search: matches of this project only, best first, query syntax read as
    // text.
    let hits = l.search(&p, "ferry", 10).unwrap();
    let mut found: Vec<EventId> = hits.iter().map(|h| h.event.id).collect();
    found.sort_unstable();
    assert_eq!(found, vec![ids[0], ids[1], reply.id], "{backend}");
    assert!(
        hits.windows(2).all(|w| w[0].score <= w[1].score),
        "{backend}"
    );
    assert!(!found.contains(&ids[3]), "{backend}: another project's");
    assert!(l.search(&p, "\" OR * AND ( ' ; --", 10).unwrap().is_empty());
    assert!(l.search(&p, "   ", 10).unwrap().is_empty());
    let later = l.append(at("One more ferry note.")).unwrap();
    assert!(
        l.search(&p, "ferry", 10)
            .unwrap()
            .iter()
            .any(|h| h.event.id == later.id),
        "{backend}: an append after the first search is found"
    );

    // Reads of what derived indexes are built from.
    let mut speakers = l.speakers(&p).unwrap();
    speakers.sort();
    assert_eq!(speakers, vec!["Ines".to_owned(), "Radek".to_owned()]);
    let texts = l.contents_after(&p, ids[1]).unwrap();
    assert_eq!(texts[0].0, ids[2]);
    assert_eq!(texts[0].3.as_deref(), Some("Ines"));
    let places = l.sessions_after(&p, EventId(0)).unwrap();
    assert_eq!(places.len(), 5);
    assert!(places.iter().all(|(_, s)| s.as_deref() == Some("t")));
    assert_eq!(
        l.get_many(&p, &[ids[2], ids[3]]).unwrap()[1],
        None,
        "{backend}"
    );

    // A retry by source id is the stored event; other content under it is a conflict.
    let keyed = |text: &str| {
        let mut e = at(text);
        e.source_id = Some("turn-7".into());
        e
    };
    l.append_batch(&[keyed("Keyed once.")]).unwrap();
    let stored = l
        .stored_by_source(&[keyed("Keyed once."), at("no key")])
        .unwrap();
    assert!(stored[0].is_some() && stored[1].is_none(), "{backend}");
    let err = l.stored_by_source(&[keyed("Keyed twice.")]).unwrap_err();
    assert_eq!(
        hypermem::Error::from(err).reason(),
        hypermem::Reason::Conflict
    );
    assert_eq!(
        l.source_contents(&p)
            .unwrap()
            .get("turn-7")
            .map(String::as_str),
        Some("Keyed once.")
    );

    // The embedder's queue: vectors stored with their events or queued, stored later once.
    let appended = l
        .append_batch_with(
            &[at("with a vector"), at("queued")],
            &[Some((384, vec![1, 2, 3]))],
            true,
        )
        .unwrap();
    assert_eq!(l.semantic_backlog(&p).unwrap(), 1, "{backend}");
    let pending = l.semantic_pending(Some(&p), 10).unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].id, pending[0].content.as_str()),
        (appended[1].id, "queued")
    );
    let done = l
        .store_semantic(&[(pending[0].clone(), Some((384, vec![9])))])
        .unwrap();
    assert_eq!(done, vec![appended[1].id]);
    assert!(
        l.store_semantic(&[(pending[0].clone(), Some((384, vec![8])))])
            .unwrap()
            .is_empty(),
        "{backend}: stored once"
    );
    assert_eq!(
        l.semantic_vectors_after(&p, later.id).unwrap(),
        vec![
            (appended[0].id, 384, vec![1, 2, 3]),
            (appended[1].id, 384, vec![9])
        ]
    );
    // Events stored without a vector are queued once, past the mark.
    assert!(l.queue_unembedded().unwrap() > 0, "{backend}");
    assert_eq!(l.queue_unembedded().unwrap(), 0, "{backend}: nothing new");

    // Erasure: every row of the project goes, another's stays, the sequence never goes back.
    let sequence = l.sequence().unwrap();
    let receipt = l.forget_project(&p).unwrap();
    assert_eq!(
        receipt.rows.get("events"),
        Some(&8),
        "{backend}: {receipt:?}"
    );
    assert_eq!(l.count(&p).unwrap(), 0);
    assert!(l.search(&p, "ferry", 10).unwrap().is_empty(), "{backend}");
    assert_eq!(l.semantic_backlog(&p).unwrap(), 0);
    assert_eq!(
        l.count(&q).unwrap(),
        1,
        "{backend}: another project untouched"
    );
    assert!(
        l.sequence().unwrap() >= sequence,
        "{backend}: the sequence never goes back"
    );
    for table in l.tables().unwrap() {
        if l.has_project_column(&table).unwrap() {
            assert_eq!(l.count_rows(&table, &p).unwrap(), 0, "{backend}: {table}");
        }
    }
    assert!(l.tables().unwrap().iter().any(|t| t == "events"));
}

#[test]
fn the_ledger_contract_holds_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(dir.path().join("ledger.db"), config()).unwrap();
    ledger_contract(&ledger, "sqlite");
}

#[cfg(feature = "postgres")]
#[test]
fn the_ledger_contract_holds_on_postgres() {
    let Some(url) = common::postgres_url("the PostgreSQL ledger is") else {
        return;
    };
    let tag = format!(
        "lg{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    // A database of its own: the embedder's queue is the whole ledger's, and the other
    // tests of this file append to the shared one meanwhile.
    let url = common::fresh_database(&url, "ledger");
    ledger_contract(&Ledger::connect(&url, config()).unwrap(), &tag);
}
