//! The raw event ledger: migrations, append-only events with chronology, byte-exact
//! storage of hostile input, size limits, references, full-text search, crash atomicity.

mod common;
use common::all_of;
use hypermem::Reason;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use common::project;
use hypermem::ledger::{
    Causality, EventId, EventKind, Ledger, LedgerConfig, LedgerError, MIGRATIONS, NewEvent, Role,
};

fn ledger() -> Ledger {
    Ledger::open_in_memory(LedgerConfig::default()).unwrap()
}

fn msg(p: &str, role: Role, text: &str) -> NewEvent {
    NewEvent::new(project(p), role, EventKind::Message, text)
}

#[test]
fn migrations_dry_run_apply_once_and_rerun_as_no_op() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.db");
    let l = Ledger::open_unmigrated(&path, LedgerConfig::default()).unwrap();
    let dry = l.migrate(true).unwrap();
    assert_eq!(
        (dry.from, dry.to, dry.migrations.len(), dry.dry_run),
        (0, 0, MIGRATIONS.len(), true)
    );
    assert_eq!(l.schema_version().unwrap(), 0);
    assert!(
        !l.tables().unwrap().contains(&"events".to_owned()),
        "a dry run writes nothing"
    );
    let err = l.count(&project("p")).unwrap_err();
    assert!(
        matches!(err, LedgerError::NeedsMigration { found: 0, .. }),
        "{err}"
    );
    let applied = l.migrate(false).unwrap();
    assert_eq!(applied.to, MIGRATIONS.last().unwrap().version);
    assert_eq!(applied.migrations.len(), MIGRATIONS.len());
    let again = l.migrate(false).unwrap();
    assert!(again.migrations.is_empty() && again.from == again.to);
    drop(l);
    // Reopening migrates nothing new and keeps working.
    let l = Ledger::open(&path, LedgerConfig::default()).unwrap();
    assert_eq!(l.count(&project("p")).unwrap(), 0);
}

#[test]
fn migrations_never_rewrite_raw_events() {
    for m in MIGRATIONS {
        let sql = m.sql.to_uppercase().replace(';', " ; ");
        let words: Vec<&str> = sql.split_whitespace().collect();
        for bad in [
            &["UPDATE", "EVENTS"][..],
            &["DELETE", "FROM", "EVENTS"],
            &["DROP", "TABLE", "EVENTS"],
        ] {
            assert!(
                !words.windows(bad.len()).any(|w| w == bad),
                "migration {} contains {bad:?}",
                m.version
            );
        }
        // The one change allowed to `events`: a new nullable column with no default
        // (SQLite adds it without touching a stored row; old events read NULL there).
        for (i, w) in words.windows(3).enumerate() {
            if w == ["ALTER", "TABLE", "EVENTS"] {
                let statement: Vec<&str> = words[i..]
                    .iter()
                    .take_while(|w| **w != ";")
                    .copied()
                    .collect();
                assert!(
                    statement.len() == 7
                        && statement[3..5] == ["ADD", "COLUMN"]
                        && !statement.contains(&"DEFAULT"),
                    "migration {} alters events beyond adding a nullable column: {statement:?}",
                    m.version
                );
            }
        }
    }
    // Events written at schema version 1 are byte-identical after the later migrations.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.db");
    let l = Ledger::open_unmigrated(&path, LedgerConfig::default()).unwrap();
    l.migrate_to(1, false).unwrap();
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute(
        "INSERT INTO events (project, role, kind, content, content_hash, created_at, ingested_at)
         VALUES ('p', 'user', 'message', 'before migration', 'h', 1, 1)",
        [],
    )
    .unwrap();
    let dump = |c: &rusqlite::Connection| -> String {
        c.query_row("SELECT group_concat(quote(id) || quote(content) || quote(created_at), '|') FROM events", [], |r| r.get(0))
            .unwrap()
    };
    let before = dump(&raw);
    l.migrate(false).unwrap();
    assert_eq!(dump(&raw), before);
    assert_eq!(l.count(&project("p")).unwrap(), 1);
}

#[test]
fn raw_events_are_append_only_even_through_sql() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.db");
    let l = Ledger::open(&path, LedgerConfig::default()).unwrap();
    l.append(msg("p", Role::User, "original")).unwrap();
    let raw = rusqlite::Connection::open(&path).unwrap();
    let err = raw
        .execute("UPDATE events SET content = 'rewritten'", [])
        .unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");
    let err = raw.execute("DELETE FROM events", []).unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");
    assert_eq!(
        l.get(&project("p"), EventId(1)).unwrap().unwrap().content,
        "original"
    );
}

#[test]
fn hostile_content_is_stored_byte_exact_or_refused() {
    let l = ledger();
    let p = project("p");
    let nasty = [
        "Robert'); DROP TABLE events;--",
        "\"quoted\" 'single' `back` \\ backslash",
        "NUL\0inside\0text",
        "emoji 🧠 and RTL \u{202e}txet and combining e\u{301}",
        "line1\nline2\r\nline3\ttab",
        "SELECT * FROM beliefs WHERE 1=1 OR ''=''",
    ];
    for text in nasty {
        let e = l.append(msg("p", Role::User, text)).unwrap();
        assert_eq!(l.get(&p, e.id).unwrap().unwrap().content, text);
        assert_eq!(e.content_hash.len(), 32);
    }
    // Nothing to remember: refused, and the batch holding it writes nothing.
    let before = l.count(&p).unwrap();
    for empty in ["", " \n\t "] {
        let err = l
            .append_batch(&[msg("p", Role::User, "fine"), msg("p", Role::User, empty)])
            .unwrap_err();
        assert!(
            matches!(
                err,
                LedgerError::Invalid {
                    what: "content",
                    ..
                }
            ),
            "{err}"
        );
    }
    assert_eq!(l.count(&p).unwrap(), before);
    let big = "x".repeat(1 << 20);
    let e = l.append(msg("p", Role::Tool, &big)).unwrap();
    assert_eq!(l.get(&p, e.id).unwrap().unwrap().content.len(), 1 << 20);
    let before = l.count(&p).unwrap();
    let huge = "y".repeat((1 << 20) + 1);
    let err = l
        .append_batch(&[msg("p", Role::User, "fine"), msg("p", Role::User, &huge)])
        .unwrap_err();
    assert!(
        matches!(err, LedgerError::ContentTooLarge { size, limit } if size == (1 << 20) + 1 && limit == 1 << 20)
    );
    assert!(err.to_string().contains("nothing was written"));
    assert_eq!(common::reason_of(err), Reason::PayloadTooLarge);
    assert_eq!(l.count(&p).unwrap(), before, "the whole batch was refused");
    // Hostile FTS queries are text, not syntax.
    for q in [
        "\"unbalanced",
        "AND OR NOT",
        "NEAR(a b",
        "col:value",
        "*",
        "- -",
        "'; DROP",
    ] {
        l.search(&p, q, 5).unwrap();
    }
    assert_eq!(
        l.search(&p, "DROP TABLE events", 5).unwrap()[0]
            .event
            .content,
        nasty[0]
    );
}

#[test]
fn chronology_threads_sessions_turns_and_context() {
    let l = ledger();
    let p = project("p");
    let mut ids = Vec::new();
    for i in 0..6 {
        let mut e = msg(
            "p",
            if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            &format!("t1 message {i}"),
        )
        .thread("t1")
        .session("s1");
        e.turn = Some(i / 2);
        ids.push(l.append(e).unwrap().id);
    }
    let other = l
        .append(msg("p", Role::User, "t2 first").thread("t2").session("s1"))
        .unwrap();
    let reply = l
        .append(
            msg("p", Role::Assistant, "t1 reply to 2")
                .thread("t1")
                .reply_to(ids[2], Causality::RepliesTo),
        )
        .unwrap();
    let replay = l.replay_thread(&p, "t1").unwrap();
    let seqs: Vec<i64> = replay.iter().map(|e| e.thread_seq.unwrap()).collect();
    assert_eq!(seqs, vec![1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(replay[6].id, reply.id);
    assert_eq!(replay[3].turn_seq, Some(2), "second event of turn 1");
    assert_eq!(replay[1].prev, Some(ids[0]));
    assert_eq!(other.thread_seq, Some(1));
    assert_eq!(other.session_seq, Some(7));
    assert_eq!(other.prev, None, "first of its thread");
    let ctx = l.event_context(&p, ids[2], 2, 2).unwrap();
    assert_eq!(
        ctx.before.iter().map(|e| e.id).collect::<Vec<_>>(),
        vec![ids[0], ids[1]]
    );
    assert_eq!(
        ctx.after.iter().map(|e| e.id).collect::<Vec<_>>(),
        vec![ids[3], ids[4]]
    );
    assert!(
        all_of(ctx.before.iter().chain(&ctx.after), |e| e.id != ids[2]),
        "anchor excluded"
    );
    assert_eq!(
        ctx.children.iter().map(|e| e.id).collect::<Vec<_>>(),
        vec![reply.id]
    );
    let ctx = l.event_context(&p, reply.id, 1, 1).unwrap();
    assert_eq!(ctx.parent.unwrap().id, ids[2]);
    assert!(ctx.after.is_empty());
    assert!(matches!(
        l.event_context(&project("q"), ids[0], 1, 1),
        Err(LedgerError::UnknownEvent(_))
    ));
    // What follows an event in its conversation: its thread's next events (not the other
    // thread's, though the session is shared), at most `n`; a session without a thread
    // orders by the session; an event with neither by the project.
    let ids_of = |v: Vec<hypermem::ledger::Event>| v.iter().map(|e| e.id).collect::<Vec<_>>();
    let anchor = l.get(&p, ids[3]).unwrap().unwrap();
    assert_eq!(
        ids_of(l.following(&p, &anchor, 2).unwrap()),
        vec![ids[4], ids[5]]
    );
    let last = l.get(&p, ids[5]).unwrap().unwrap();
    assert_eq!(ids_of(l.following(&p, &last, 9).unwrap()), vec![reply.id]);
    let a = l
        .append(msg("p", Role::User, "loose one").session("s9"))
        .unwrap();
    let b = l.append(msg("p", Role::User, "loose two")).unwrap();
    let c = l
        .append(msg("p", Role::User, "loose three").session("s9"))
        .unwrap();
    assert_eq!(ids_of(l.following(&p, &a, 5).unwrap()), vec![c.id]);
    assert_eq!(ids_of(l.following(&p, &b, 5).unwrap()), vec![c.id]);
    assert!(
        l.following(&project("q"), &a, 5).unwrap().is_empty(),
        "another project"
    );
}

#[test]
fn references_must_exist_in_the_same_project_and_batches_are_atomic() {
    let l = ledger();
    let (p, q) = (project("p"), project("q"));
    let a = l.append(msg("p", Role::User, "in p")).unwrap();
    let err = l
        .append_batch(&[
            msg("q", Role::User, "ok"),
            msg("q", Role::User, "bad").reply_to(a.id, Causality::RepliesTo),
        ])
        .unwrap_err();
    // Another project's event is refused as one that does not exist.
    assert!(
        matches!(err, LedgerError::UnknownEvent(event) if event == a.id),
        "{err}"
    );
    let err = l
        .append(msg("p", Role::User, "x").reply_to(EventId(999), Causality::TriggeredBy))
        .unwrap_err();
    assert!(matches!(err, LedgerError::UnknownEvent(EventId(999))));
    assert_eq!(l.count(&q).unwrap(), 0, "the failed batch left nothing");
    assert_eq!(l.count(&p).unwrap(), 1);
    assert!(
        l.get(&q, a.id).unwrap().is_none(),
        "ids of another project are invisible"
    );
    let mut e = msg("p", Role::User, "imported");
    e.source_id = Some("conv-1#3".to_owned());
    l.append(e.clone()).unwrap();
    let err = l.append(e).unwrap_err();
    assert!(err.to_string().contains("conv-1#3"), "{err}");
    assert_eq!(common::reason_of(err), Reason::InvalidArgument);
}

#[test]
fn a_projects_first_search_indexes_what_it_holds_and_appends_keep_the_index_current() {
    let l = ledger();
    let (p, q) = (project("searched"), project("never"));
    l.append(msg(
        "searched",
        Role::User,
        "the kestrel nests on the tower",
    ))
    .unwrap();
    l.append(msg("never", Role::User, "a kestrel in another project"))
        .unwrap();
    assert!(
        l.fts_tables().unwrap().is_empty(),
        "appends alone build no full-text index"
    );
    let hits = l.search(&p, "kestrel", 10).unwrap();
    assert_eq!(
        hits.len(),
        1,
        "the first search sees the events stored before it"
    );
    assert_eq!(hits[0].event.content, "the kestrel nests on the tower");
    assert_eq!(
        l.fts_tables().unwrap().len(),
        1,
        "only the searched project"
    );
    l.append_batch(&[
        msg("searched", Role::User, "a second kestrel hunts at dawn"),
        msg("never", Role::User, "still not searched"),
    ])
    .unwrap();
    let hits = l.search(&p, "kestrel", 10).unwrap();
    assert_eq!(
        hits.len(),
        2,
        "an append after the first search is indexed: {hits:?}"
    );
    assert_eq!(l.fts_tables().unwrap().len(), 1);
    assert_eq!(l.search(&q, "kestrel", 10).unwrap().len(), 1);
    assert_eq!(l.fts_tables().unwrap().len(), 2);
}

#[test]
fn full_text_search_ranks_by_bm25_within_the_project() {
    let l = ledger();
    let p = project("alpha");
    l.append(msg("alpha", Role::User, "the postgres backups run nightly"))
        .unwrap();
    l.append(msg(
        "alpha",
        Role::User,
        "postgres postgres postgres replication lag",
    ))
    .unwrap();
    l.append(msg("alpha", Role::User, "the cat sat on the mat"))
        .unwrap();
    l.append(msg(
        "alphab",
        Role::User,
        "postgres in a similarly named project",
    ))
    .unwrap();
    l.append(msg(
        "alpha-b",
        Role::User,
        "postgres in a project whose name tokenizes to alpha",
    ))
    .unwrap();
    let hits = l.search(&p, "postgres backups", 10).unwrap();
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(all_of(hits.iter(), |h| h.event.project == "alpha"));
    assert_eq!(hits[0].event.content, "the postgres backups run nightly");
    assert!(hits[0].score <= hits[1].score);
    assert!(l.search(&p, "", 10).unwrap().is_empty());
    assert_eq!(
        l.search(&project("alphab"), "postgres", 10).unwrap().len(),
        1
    );
}

/// Child side of the crash test: appends batches of 50 tagged events until killed.
#[test]
fn crash_child_appender() {
    let Ok(path) = std::env::var("HYPERMEM_LEDGER_CHILD") else {
        return;
    };
    let l = Ledger::open(&path, LedgerConfig::default()).unwrap();
    let mut out = std::io::stdout().lock();
    for batch in 0.. {
        let events: Vec<_> = (0..50)
            .map(|i| {
                msg("p", Role::User, &format!("batch{batch} event{i}")).thread(format!("b{batch}"))
            })
            .collect();
        l.append_batch(&events).unwrap();
        writeln!(out, "ACK {batch}").unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn a_process_killed_during_batches_leaves_whole_batches_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash_child_appender",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("HYPERMEM_LEDGER_CHILD", &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut acked = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        if let Some(n) = line.unwrap().strip_prefix("ACK ") {
            acked = Some(n.parse::<u64>().unwrap());
            if acked == Some(30) {
                break;
            }
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let l = Ledger::open(&path, LedgerConfig::default()).unwrap();
    let p = project("p");
    let total = l.count(&p).unwrap();
    assert_eq!(total % 50, 0, "only whole batches: {total}");
    let batches = total / 50;
    eprintln!("acked {acked:?}, found {batches} whole batches");
    assert!(
        batches > acked.unwrap(),
        "every acknowledged batch is present ({batches} batches)"
    );
    for b in 0..batches {
        assert_eq!(
            l.replay_thread(&p, &format!("b{b}")).unwrap().len(),
            50,
            "batch {b}"
        );
    }
}
