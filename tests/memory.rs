//! End to end through `Memory`: observe, recall across sessions, isolation, packs within
//! budget with full receipts, erasure across every store, repair after an interrupted
//! observation.

mod common;
use common::all_of;
use hypermem::Reason;

use common::project;
use hypermem::hdv::Dim;
use hypermem::ledger::{EventKind, NewEvent, Role};
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
    let sources: Vec<&str> = hits[0]
        .fused
        .breakdown
        .iter()
        .map(|b| b.signal.name())
        .collect();
    assert!(
        sources.contains(&"vector") && sources.contains(&"bm25"),
        "found by both the vector and the full-text source: {sources:?}"
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
    assert!(all_of(hits.iter(), |h| h.event.project == "alpha"));
    for requested in [None, Some(50), Some(100_000)] {
        let pack = m
            .recall_pack(
                &project("alpha"),
                "database migration plan",
                None,
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
        assert!(all_of(pack.items.iter(), |(line, _)| line.tokens > 0
            && !line.reason.is_empty()));
        assert!(all_of(pack.suppressed.iter(), |l| l
            .reason
            .contains("over budget")));
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
    assert_eq!(
        hypermem::store::VectorTier::len(m.vectors().hot(), &project("gone")),
        0
    );
    assert!(!dir.path().join("vectors/projects/gone").exists());
    assert!(!dir.path().join("vectors-cold/projects/gone").exists());
    assert!(
        receipt.lexical >= 2,
        "the lexical index was loaded by the recall"
    );
    assert!(all_of(m.stats().unwrap().iter(), |s| s.project != "gone"));
    assert!(m.map(&project("gone"), 5).is_err());
    assert_eq!(m.map(&project("kept"), 5).unwrap().events, 2);
    // A read of the erased project is refused and writes nothing back.
    for err in [
        m.recall(&project("gone"), "tea", 5)
            .map(|_| ())
            .unwrap_err(),
        m.knowledge_gaps(&project("gone"), 5)
            .map(|_| ())
            .unwrap_err(),
        m.current(&project("gone"), "k").map(|_| ()).unwrap_err(),
        m.recall_pack(&project("gone"), "tea", None, 4000, None)
            .map(|_| ())
            .unwrap_err(),
    ] {
        assert_eq!(err.reason(), "unknown_project", "{err}");
    }
    m.flush().unwrap();
    let db = rusqlite::Connection::open(dir.path().join("ledger.db")).unwrap();
    let rows: i64 = db
        .query_row(
            "SELECT (SELECT COUNT(*) FROM query_log WHERE project = 'gone')
                  + (SELECT COUNT(*) FROM memory_traces WHERE project = 'gone')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 0, "no read recreated rows of the erased project");
    assert!(
        !dir.path().join("lexical/gone.lex").exists(),
        "the saved index went too"
    );
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

/// Child side of the crash test: observes batches until killed.
#[test]
fn crash_child_observer() {
    let Ok(dir) = std::env::var("HYPERMEM_MEMORY_CHILD") else {
        return;
    };
    use std::io::Write;
    let m = Memory::open(&profile(), Some(std::path::Path::new(&dir))).unwrap();
    let mut out = std::io::stdout().lock();
    for b in 0.. {
        let batch: Vec<_> = (0..20)
            .map(|i| {
                say(
                    "p",
                    &format!("b{b}"),
                    Role::User,
                    &format!("observation {i} of batch {b}"),
                )
            })
            .collect();
        m.observe_batch(&batch).unwrap();
        writeln!(out, "ACK {b}").unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn kill_9_loses_no_acknowledged_observation() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash_child_observer",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("HYPERMEM_MEMORY_CHILD", dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut acked = None;
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        if let Some(n) = line.unwrap().strip_prefix("ACK ") {
            acked = Some(n.parse::<u64>().unwrap());
            if acked == Some(15) {
                break;
            }
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    let events = m.ledger().count(&p).unwrap();
    assert_eq!(events % 20, 0, "whole batches only");
    assert!(
        events / 20 > acked.unwrap(),
        "every acknowledged batch is in the ledger"
    );
    assert_eq!(
        m.vectors().len(&p) as u64,
        events,
        "and every event has its vector (repaired on open)"
    );
    for b in 0..=acked.unwrap() {
        assert_eq!(
            m.ledger()
                .replay_thread(&p, &format!("b{b}"))
                .unwrap()
                .len(),
            20
        );
    }
}

#[test]
fn packs_carry_current_beliefs_never_superseded_ones() {
    use hypermem::governance::{Op, Ownership, Plan};
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let old = m
        .observe(say("p", "s1", Role::User, "My office is in Berlin"))
        .unwrap();
    let new = m
        .observe(say("p", "s2", Role::User, "I moved my office to Lisbon"))
        .unwrap();
    let p = project("p");
    let plan = |key: &str, op| Plan::single(p.clone(), key, op);
    m.ledger()
        .apply_plan(&plan(
            "1",
            Op::Assert {
                key: "user.office_city".into(),
                statement: "office in Berlin".into(),
                ownership: Ownership::User,
                agent: None,
                confidence: 1.0,
                evidence: vec![old],
            },
        ))
        .unwrap();
    m.ledger()
        .apply_plan(&plan(
            "2",
            Op::Correct {
                key: "user.office_city".into(),
                statement: "office in Lisbon".into(),
                evidence: vec![new],
                expected_version: None,
                confidence: 1.0,
            },
        ))
        .unwrap();
    let pack = m
        .recall_pack(&p, "where is the user's office city?", None, 2000, None)
        .unwrap();
    let beliefs: Vec<&String> = pack
        .items
        .iter()
        .filter(|(l, _)| l.slot == "belief")
        .map(|(_, t)| t)
        .collect();
    assert_eq!(beliefs.len(), 1);
    assert!(beliefs[0].contains("Lisbon") && !beliefs[0].contains("Berlin"));
    assert_eq!(pack.items[0].0.slot, "belief", "beliefs lead the pack");
    // The corrected statement itself stays out of the pack (only in history), with its
    // reason, while its correction is in.
    assert!(all_of(pack.items.iter(), |(l, _)| l.id != old.0
        || l.slot == "belief"));
    assert!(
        pack.items
            .iter()
            .any(|(l, _)| l.id == new.0 && l.slot == "direct")
    );
    assert!(
        pack.suppressed
            .iter()
            .any(|l| l.id == old.0 && l.reason.contains("user.office_city v1")),
        "{:?}",
        pack.suppressed
    );
    // Ranked recall keeps it, after the current evidence, saying what it backs.
    let hits = m.recall(&p, "office Berlin Lisbon", 5).unwrap();
    let rank = |id| hits.iter().position(|h| h.event.id == id).unwrap();
    assert!(rank(new) < rank(old));
    assert_eq!(
        hits[rank(old)].superseded_belief,
        Some(("user.office_city".to_owned(), 1))
    );
    assert_eq!(hits[rank(new)].superseded_belief, None);
    assert_eq!(m.belief_history(&p, "user.office_city").unwrap().len(), 2);
}

#[test]
fn time_hints_and_same_session_echo_are_filtered_with_reasons() {
    use hypermem::{RecallQuery, time_hint};
    const DAY: i64 = 86_400_000;
    let now = 20_000 * DAY + 5 * 3_600_000; // 05:00 on day 20,000
    assert_eq!(
        time_hint("what did I say yesterday?", now),
        Some((19_999 * DAY, 20_000 * DAY))
    );
    assert_eq!(
        time_hint("anything today", now),
        Some((20_000 * DAY, 20_001 * DAY))
    );
    assert_eq!(
        time_hint("in the last 3 days", now),
        Some((19_997 * DAY, now + 1))
    );
    assert_eq!(
        time_hint("notes from 1970-01-02", now),
        Some((DAY, 2 * DAY))
    );
    assert_eq!(
        time_hint("on 2024-02-30 or so", now).map(|w| w.0 % DAY),
        Some(0)
    );
    assert_eq!(time_hint("no dates here", now), None);

    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    m.observe(
        say(
            "p",
            "old",
            Role::User,
            "The release train leaves on Thursday",
        )
        .at(1_000),
    )
    .unwrap();
    m.observe(
        say(
            "p",
            "current",
            Role::User,
            "Is the release train on Thursday?",
        )
        .at(2_000),
    )
    .unwrap();
    // The current session's own question is an echo, not a memory.
    let pack = m
        .recall_pack(&p, "release train Thursday", Some("current"), 1000, None)
        .unwrap();
    assert!(all_of(pack.items.iter(), |(_, t)| !t.starts_with("Is the release")));
    assert!(
        pack.suppressed
            .iter()
            .any(|l| l.reason == "same-session echo"),
        "{:?}",
        pack.suppressed
    );
    let mut rq = RecallQuery::new("release train", 5);
    rq.since = Some(1_500);
    let r = m.recall_with(&p, &rq).unwrap();
    assert_eq!(r.items.len(), 1);
    assert!(r.items[0].event.content.starts_with("Is the release"));
    assert_eq!(
        r.suppressed[0].1.reason,
        hypermem::recall::SuppressReason::OutsideTimeWindow
    );
    // A time hint is soft: it lifts what happened in its window...
    let mut rq = RecallQuery::new("release train 1970-01-01", 5);
    let r = m.recall_with(&p, &rq).unwrap();
    assert_eq!((r.items.len(), r.time_hint_ignored), (2, false));
    m.observe(say(
        "p",
        "later",
        Role::User,
        "The release train is delayed",
    ))
    .unwrap();
    let r = m.recall_with(&p, &rq).unwrap();
    assert!(!r.time_hint_ignored);
    assert_eq!(
        r.items.len(),
        3,
        "a hint lifts what it names, it filters nothing"
    );
    assert!(
        all_of(r.items[..2].iter(), |h| h.event.created_at < DAY),
        "what happened in the hinted window comes first"
    );
    assert!(
        all_of(r.items[2].fused.breakdown.iter(), |b| b.signal.name()
            != "hint"),
        "{:?}",
        r.items[2].fused.breakdown
    );
    // ... and is ignored, saying so, when nothing did; an explicit bound always applies.
    rq.text = "release train 1999-01-01";
    let r = m.recall_with(&p, &rq).unwrap();
    assert_eq!((r.items.len(), r.time_hint_ignored), (3, true));
    rq.text = "release train since:1999-01-01 until:1999-01-02";
    let r = m.recall_with(&p, &rq).unwrap();
    assert_eq!((r.items.len(), r.time_hint_ignored), (0, false));
    let mut rq = RecallQuery::new("release train", 5);
    rq.thread = Some("old");
    assert!(all_of(m.recall_with(&p, &rq).unwrap().items.iter(), |h| h
        .event
        .thread
        .as_deref()
        == Some("old")));
}

/// Whether a recall for `query` returns an event containing `needle` found by BM25.
fn bm25_finds(m: &Memory, p: &hypermem::store::ProjectId, query: &str, needle: &str) -> bool {
    m.recall(p, query, 5).unwrap().iter().any(|h| {
        h.event.content.contains(needle)
            && h.fused.breakdown.iter().any(|b| b.signal.name() == "bm25")
    })
}

fn chatter(p: &str, n: usize) -> Vec<NewEvent> {
    (0..n)
        .map(|i| {
            say(
                p,
                "noise",
                if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                },
                &format!("unrelated chatter number {i} about lunch plans and the weather"),
            )
        })
        .collect()
}

#[test]
fn the_lexical_index_follows_the_ledger_across_loads_reopens_and_erasure() {
    let dir = tempfile::tempdir().unwrap();
    let p = project("p");
    let bm25_finds = |m: &Memory, q: &str, needle: &str| bm25_finds(m, &p, q, needle);
    {
        let m = Memory::open(&profile(), Some(dir.path())).unwrap();
        m.observe_batch(&chatter("p", 20)).unwrap();
        m.observe(say(
            "p",
            "s",
            Role::User,
            "The quokka enclosure opens at nine",
        ))
        .unwrap();
        // First recall builds the index from the ledger.
        assert!(bm25_finds(&m, "quokka", "quokka"));
        // Observed after the build: indexed by the observation itself.
        m.observe(say("p", "s", Role::User, "The axolotl tank needs cleaning"))
            .unwrap();
        assert!(bm25_finds(&m, "axolotl", "axolotl"));
        // Concurrent observers and readers: every event is indexed exactly once.
        std::thread::scope(|s| {
            for t in 0..3 {
                let m = &m;
                s.spawn(move || {
                    for i in 0..10 {
                        m.observe(say(
                            "p",
                            "c",
                            Role::User,
                            &format!("pangolin{t}x{i} sighting"),
                        ))
                        .unwrap();
                        m.recall(&project("p"), "pangolin", 3).unwrap();
                    }
                });
            }
        });
        for t in 0..3 {
            for i in 0..10 {
                let word = format!("pangolin{t}x{i}");
                assert!(bm25_finds(&m, &word, &word), "{word}");
            }
        }
        let receipt = m.forget_project(&project("q")).unwrap();
        assert_eq!(receipt.lexical, 0, "another project's index is untouched");
    }
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    assert!(bm25_finds(&m, "quokka", "quokka"), "rebuilt on reopen");
    assert!(bm25_finds(&m, "axolotl", "axolotl"));
    let receipt = m.forget_project(&p).unwrap();
    assert_eq!(receipt.lexical, 20 + 2 + 30);
    assert_eq!(
        (receipt.lexical_files, receipt.ledger.rows["events"]),
        (1, 52)
    );
    assert!(receipt.lexical_file_bytes > 0);
    assert!(m.recall(&p, "quokka", 5).is_err());
}

/// A process keeps at most `open_projects` projects' text indexes open: using another
/// closes the least recently used, whose index is saved and read back when it is used
/// again, caught up with what was observed while it was closed. Answers never change for
/// it, under concurrent use too.
#[test]
fn open_projects_are_bounded_and_a_closed_one_answers_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let mut profile = profile();
    profile.open_projects = 2;
    let m = Memory::open(&profile, Some(dir.path())).unwrap();
    let names = ["a", "b", "c", "d"];
    for name in names {
        let mut batch = chatter(name, 10);
        batch.push(say(
            name,
            "s",
            Role::User,
            &format!("The {name}-team kayak trip is on the 14th"),
        ));
        m.observe_batch(&batch).unwrap();
    }
    let answer = |m: &Memory, name: &str, q: &str| -> Vec<u64> {
        m.recall(&project(name), q, 5)
            .unwrap()
            .iter()
            .map(|h| h.event.id.0)
            .collect()
    };
    let before: Vec<Vec<u64>> = names
        .iter()
        .map(|n| answer(&m, n, "when is the kayak trip"))
        .collect();
    assert!(before.iter().all(|ids| !ids.is_empty()));
    assert_eq!(m.open_projects(), 2, "two of four open");
    assert!(
        dir.path().join("lexical/a.lex").exists(),
        "a closed project's index was saved"
    );
    // Closed while this is observed: its next opening catches up with it.
    m.observe(say(
        "a",
        "s",
        Role::User,
        "Bring the dry bags for the kayak trip",
    ))
    .unwrap();
    assert!(bm25_finds(&m, &project("a"), "dry bags", "dry bags"));
    assert_eq!(m.open_projects(), 2);
    // Used in turn from several threads: every answer as when all were open.
    std::thread::scope(|s| {
        for t in 0..3 {
            let (m, before) = (&m, &before);
            s.spawn(move || {
                for round in 0..8 {
                    let i = (t + round) % names.len();
                    let now = answer(m, names[i], "when is the kayak trip");
                    if i != 0 {
                        assert_eq!(&now, &before[i], "{}", names[i]);
                    }
                }
            });
        }
    });
    assert!(m.open_projects() <= 2);
    for (i, name) in names.iter().enumerate().skip(1) {
        assert_eq!(answer(&m, name, "when is the kayak trip"), before[i]);
    }
    // 0: no bound.
    profile.open_projects = 0;
    drop(m);
    let m = Memory::open(&profile, Some(dir.path())).unwrap();
    for name in names {
        answer(&m, name, "kayak");
    }
    assert_eq!(m.open_projects(), 4);
}

#[test]
fn standing_directives_take_their_slots_in_recall_and_packs() {
    let dir = tempfile::tempdir().unwrap();
    // The lite profile's dimension: slots go to directives 3 σ above chance (1/√D).
    let lite = Profile::load(Profile::bundled_path(ProfileKind::Lite)).unwrap();
    let m = Memory::open(&lite, Some(dir.path())).unwrap();
    let p = project("p");
    const QUERY: &str = "which dependency versions does the project pull in?";
    m.observe_batch(&[
        say(
            "p",
            "s1",
            Role::User,
            "Always include version numbers when I ask about libraries or dependencies.",
        ),
        say(
            "p",
            "s1",
            Role::Assistant,
            "Always happy to help! I will include version numbers.",
        ),
    ])
    .unwrap();
    m.observe_batch(&chatter("p", 200)).unwrap();
    m.observe_batch(
        &(0..30)
            .map(|i| {
                say(
                    "p",
                    "s2",
                    Role::User,
                    &format!("dependency {i} of the project: pull it in lazily"),
                )
            })
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let hits = m.recall(&p, QUERY, 10).unwrap();
    let directive: Vec<_> = hits
        .iter()
        .filter(|h| h.event.content.starts_with("Always include"))
        .collect();
    assert_eq!(
        directive.len(),
        1,
        "the standing instruction is among the results"
    );
    // By its slot (rank fusion alone misses it), shown no lower than the item after it.
    let own: Vec<_> = directive[0]
        .fused
        .breakdown
        .iter()
        .filter(|b| b.signal != hypermem::recall::Signal::Placed)
        .copied()
        .collect();
    assert_eq!(
        own,
        [hypermem::recall::Part::ranked(
            hypermem::recall::Signal::Directive,
            1,
            0.0
        )],
        "by its slot: rank fusion alone misses it"
    );
    assert_eq!(
        hits.iter()
            .position(|h| h.event.content.starts_with("Always include")),
        Some(5),
        "its slot follows the first five answers"
    );
    assert!(
        !hits
            .iter()
            .any(|h| h.event.content.starts_with("Always happy")),
        "what the assistant says is no directive"
    );
    // A directive unrelated to the query gets no slot.
    let unrelated = m.recall(&p, "lunch plans and the weather", 10).unwrap();
    assert!(all_of(unrelated.iter(), |h| !h
        .event
        .content
        .starts_with("Always include")));
    // Fewer results than three slots' worth: no slot.
    let two = m.recall(&p, QUERY, 2).unwrap();
    assert!(all_of(two.iter(), |h| h
        .fused
        .breakdown
        .iter()
        .all(|b| b.signal.name() != "directive")));
    let pack = m.recall_pack(&p, QUERY, None, 4000, None).unwrap();
    assert!(
        pack.items
            .iter()
            .any(|(l, t)| t.starts_with("Always include")
                && (l.slot == "directive" || l.slot == "direct")),
        "{:?}",
        pack.items
    );
}

#[test]
fn a_named_speakers_always_takes_no_directive_slot() {
    // Two people chatting (speaker names, as the importer records any role that is not
    // `user` or `assistant`): an "Always …" of theirs is said to the other participant,
    // not to the agent, and must not take reserved places from real results.
    let dir = tempfile::tempdir().unwrap();
    let lite = Profile::load(Profile::bundled_path(ProfileKind::Lite)).unwrap();
    let m = Memory::open(&lite, Some(dir.path())).unwrap();
    let p = project("p");
    let named = |speaker: &str, text: &str| {
        let mut e = say("p", "s1", Role::User, text);
        e.speaker = Some(speaker.to_owned());
        e
    };
    m.observe_batch(&[
        named(
            "Robin",
            "Always include version numbers when you talk about libraries.",
        ),
        named("Kai", "Never trust a dependency without a version, I say."),
        named(
            "Robin",
            "I'd rather pin every dependency version, honestly.",
        ),
    ])
    .unwrap();
    m.observe_batch(&chatter("p", 200)).unwrap();
    m.observe_batch(
        &(0..30)
            .map(|i| {
                named(
                    "Kai",
                    &format!("dependency {i} of the project: pull it in lazily"),
                )
            })
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let hits = m
        .recall(
            &p,
            "which dependency versions does the project pull in?",
            10,
        )
        .unwrap();
    assert_eq!(hits.len(), 10);
    assert!(
        all_of(hits.iter(), |h| h
            .fused
            .breakdown
            .iter()
            .all(|b| b.signal.name() != "directive")),
        "no reserved place: {:?}",
        hits.iter().map(|h| &h.event.content).collect::<Vec<_>>()
    );
    assert_eq!(
        m.map(&p, 10).unwrap().directives,
        0,
        "none is counted as a directive"
    );
}

/// What the user says in project "p" (session `session`): its id.
fn user_says(m: &Memory, session: &str, text: &str) -> hypermem::ledger::EventId {
    m.observe(say("p", session, Role::User, text)).unwrap()
}

#[test]
fn a_newer_value_outranks_the_older_one_which_stays_in_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    let old = user_says(
        &m,
        "s1",
        "Our first sprint deadline is April 1 2024 and the sprint covers the layout.",
    );
    m.observe_batch(&chatter("p", 40)).unwrap();
    let new = user_says(
        &m,
        "s2",
        "I moved the sprint deadline to April 5 2024 for accessibility work.",
    );
    let hits = m
        .recall(&p, "what is the first sprint deadline?", 10)
        .unwrap();
    let rank = |id| hits.iter().position(|h| h.event.id == id).unwrap();
    assert!(rank(new) < rank(old), "{hits:#?}");
    // Without the reordering the plainer, older statement leads: the test exercises it.
    let mut plain = profile();
    plain.recall.supersede = false;
    drop(m);
    let m = Memory::open(&plain, Some(dir.path())).unwrap();
    let hits = m
        .recall(&p, "what is the first sprint deadline?", 10)
        .unwrap();
    let rank = |id| hits.iter().position(|h| h.event.id == id).unwrap();
    assert!(rank(old) < rank(new));
}

#[test]
fn what_is_done_instead_is_found_and_comes_first_though_the_question_shares_no_word_with_it() {
    // The answer states no typed value; the turn right after it replaces what it said
    // with a bare "instead", and holds none of the question's words.
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    let old = user_says(
        &m,
        "s1",
        "The banner for the open day will use the navy serif font.",
    );
    let new = user_says(
        &m,
        "s1",
        "after the vote we're going with the coral one instead",
    );
    m.observe_batch(&chatter("p", 20)).unwrap();
    let hits = m
        .recall(&p, "which font is the open day banner using?", 10)
        .unwrap();
    assert_eq!(hits.first().map(|h| h.event.id), Some(new), "{hits:#?}");
    assert_eq!(hits[0].supersedes.map(|s| s.0), Some(old.0), "{hits:#?}");
    assert!(hits.iter().any(|h| h.event.id == old), "{hits:#?}");
}

#[test]
fn a_change_that_names_what_it_changes_or_is_announced_by_another_participant_comes_first() {
    // Each newer statement shares only some of the older one's subject words ("team" is
    // missing), so it is tied to the older one by the number it names as changed, by
    // "(was …)", or, from another participant, by an announced change of a shared thing.
    // Another participant's own limit revises nothing.
    let question = "what is the team's WIP limit?";
    for (newer, speaker, revises) in [
        ("Correction: the WIP limit is 12, not 10.", "Ravi", true),
        ("bumped the WIP limit from 10 to 12", "Ravi", true),
        ("WIP limit: 12 (was 10)", "Ravi", true),
        ("WIP limit raised to 12 after the retro", "Elif", true),
        ("my WIP limit raised to 12 after the retro", "Elif", false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let m = Memory::open(&profile(), Some(dir.path())).unwrap();
        let said = |text: &str, who: &str| {
            m.observe(say("p", "s1", Role::User, text).speaker(who))
                .unwrap()
        };
        let old = said("The team's WIP limit is 10.", "Ravi");
        m.observe_batch(&chatter("p", 20)).unwrap();
        let new = said(newer, speaker);
        let hits = m.recall(&project("p"), question, 10).unwrap();
        let (first, supersedes) = if revises {
            (new, Some(old.0))
        } else {
            (old, None)
        };
        assert_eq!(
            hits.first().map(|h| h.event.id),
            Some(first),
            "{newer}: {hits:#?}"
        );
        assert_eq!(
            hits[0].supersedes.map(|s| s.0),
            supersedes,
            "{newer}: {hits:#?}"
        );
    }
}

#[test]
fn a_run_of_one_authors_notes_links_nothing_and_a_reply_links_to_what_it_answers() {
    let dir = tempfile::tempdir().unwrap();
    let p = project("p");
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    m.observe_batch(&chatter("p", 30)).unwrap();
    // Unrelated notes of one author, one after another in a thread, then a question and
    // its reply.
    let notes: Vec<u64> = [
        "The kiln fires at 1200 degrees",
        "The billing service deploys every Tuesday",
        "Customer Acme renewed their contract",
    ]
    .iter()
    .map(|t| m.observe(say("p", "notes", Role::User, t)).unwrap().0)
    .collect();
    let question = m
        .observe(say(
            "p",
            "notes",
            Role::User,
            "Which glaze suits stoneware?",
        ))
        .unwrap();
    let reply = m
        .observe(say(
            "p",
            "notes",
            Role::Assistant,
            "A celadon, fired to cone 10.",
        ))
        .unwrap();
    let c = m.cognition();
    for pair in notes.windows(2) {
        assert_eq!(c.synapse(&p, pair[0], pair[1]).unwrap(), 0.0, "{pair:?}");
    }
    assert!(c.synapse(&p, question.0, reply.0).unwrap() > 0.0);
    // Recall: a match lends nothing to the note after it; the note is not returned.
    let hits = m.recall(&p, "kiln degrees", 10).unwrap();
    assert_eq!(hits[0].event.id.0, notes[0]);
    assert!(
        hits.iter().all(|h| h.event.id.0 != notes[1]),
        "{:?}",
        hits.iter().map(|h| &h.event.content).collect::<Vec<_>>()
    );
    // The reply to a matching question borrows from it.
    let hits = m.recall(&p, "glaze stoneware", 10).unwrap();
    let answer = hits
        .iter()
        .find(|h| h.event.id == reply)
        .expect("the reply");
    assert!(
        answer
            .fused
            .breakdown
            .iter()
            .any(|b| b.signal.name() == "neighbour" || b.signal.name() == "ripple"),
        "{:?}",
        answer.fused
    );
}

#[test]
fn recall_feedback_is_applied_in_batches_and_on_close() {
    let dir = tempfile::tempdir().unwrap();
    let p = project("p");
    let (a, b) = {
        let m = Memory::open(&profile(), Some(dir.path())).unwrap();
        let a = m
            .observe(say("p", "s", Role::User, "the kiln fires at 1200 degrees"))
            .unwrap();
        let b = m
            .observe(say("p", "s", Role::Assistant, "the kiln shelf cracked"))
            .unwrap();
        m.observe_batch(&chatter("p", 10)).unwrap();
        for _ in 0..3 {
            m.recall(&p, "kiln", 2).unwrap();
        }
        // Reading cognition applies what is pending.
        assert!(m.cognition().synapse(&p, a.0, b.0).unwrap() > 0.0);
        m.recall(&p, "kiln", 2).unwrap();
        (a, b)
    };
    // The recall after the last read was applied on close.
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    assert_eq!(m.ledger().count_rows("query_log", &p).unwrap(), 4);
    assert!(m.cognition().synapse(&p, a.0, b.0).unwrap() > 0.0);
}

#[test]
fn the_facade_covers_the_agent_api() {
    use hypermem::cognition::{AppendOutcome, Step};
    use hypermem::governance::{Ownership, PlanOutcome};
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    // Events and episodes (the episode takes the vector stored for the event).
    let first = m
        .record_event(say(
            "p",
            "s",
            Role::User,
            "I live in Berlin and cycle to work",
        ))
        .unwrap();
    assert_eq!(first.project, "p");
    let second = m
        .record_event(say(
            "p",
            "s",
            Role::User,
            "I cycle to work in Berlin every day",
        ))
        .unwrap();
    assert_eq!(second.prev, Some(first.id), "thread chronology");
    let ep = m.start_episode(&p, "agent").unwrap();
    assert_eq!(
        m.append_event(&p, ep, first.id).unwrap(),
        AppendOutcome::Appended(0)
    );
    let other = m
        .record_event(say("q", "s", Role::User, "another project"))
        .unwrap();
    let err = m.append_event(&p, ep, other.id).unwrap_err();
    assert_eq!(err.reason(), Reason::UnknownEvent, "{err}");
    let err = err.to_string();
    assert!(err.contains(&other.id.to_string()), "{err}");
    m.end_episode(&p, ep, Some("done"), Some(1.0)).unwrap();
    // Beliefs: propose, correct, current, history, at.
    let created = m
        .propose(
            &p,
            "home.city",
            "Berlin",
            Ownership::User,
            &[first.id],
            "k1",
        )
        .unwrap();
    assert!(
        matches!(created, PlanOutcome::Applied { .. }),
        "{created:?}"
    );
    assert!(matches!(
        m.propose(
            &p,
            "home.city",
            "Berlin",
            Ownership::User,
            &[first.id],
            "k1"
        )
        .unwrap(),
        PlanOutcome::AlreadyApplied { .. }
    ));
    let moved = m
        .record_event(say("p", "s2", Role::User, "I moved to Lisbon last month"))
        .unwrap();
    let before = m.ledger().now_ms();
    assert!(matches!(
        m.correct(&p, "home.city", "Lisbon", &[moved.id], Some(1), "k2")
            .unwrap(),
        PlanOutcome::Applied { .. }
    ));
    assert_eq!(
        m.current(&p, "home.city").unwrap().unwrap().statement,
        "Lisbon"
    );
    let history = m.belief_history(&p, "home.city").unwrap();
    assert_eq!(history.len(), 2);
    assert!(m.belief_at(&p, "home.city", before - 1).unwrap().is_some());
    // Procedures.
    let id = m
        .add_procedure(
            &p,
            "deploy",
            "deploy the web service to production",
            &[Step {
                instruction: "run tools/deploy.sh".into(),
                code: None,
                tool_call: None,
            }],
        )
        .unwrap();
    let s = m
        .suggest_procedures(&p, "how do I deploy the web service?", 3)
        .unwrap();
    assert_eq!(s[0].procedure.id, id);
    assert!(
        m.record_procedure_outcome(&p, id, true)
            .unwrap()
            .reliability
            > 0.5
    );
    assert!(m.add_procedure(&p, "empty", " ,; ", &[]).is_err());
    // Meta-memory and pulse.
    m.recall(&p, "zebra migration patterns in the serengeti", 3)
        .unwrap();
    assert!(
        !m.knowledge_gaps(&p, 10).unwrap().is_empty(),
        "a weak recall is a gap"
    );
    let receipt = m.pulse_tick(&p).unwrap();
    assert!(!receipt.phases.is_empty());
    m.associations(&p, 10).unwrap();
    m.proposals(&p).unwrap();
    // Stats cover every project.
    let stats = m.stats().unwrap();
    let ps = stats.iter().find(|s| s.project == "p").unwrap();
    assert_eq!((ps.events, ps.vectors, ps.active_beliefs), (3, 3, 1));
    assert!(stats.iter().any(|s| s.project == "q"));
    // The map: exact totals of this project only, lists cut to the limit. Two notes of
    // one author in a thread link nothing; used together, they do.
    assert_eq!(m.map(&p, 10).unwrap().synapse_count, 0);
    m.cognition()
        .strengthen(&p, &[first.id.0, second.id.0])
        .unwrap();
    let map = m.map(&p, 10).unwrap();
    assert_eq!(map.events, 3);
    assert_eq!(map.roles, [("user".to_owned(), 3)]);
    assert_eq!(map.tiers.warm + map.tiers.cold, 3);
    assert_eq!(map.thread_count, 2);
    assert_eq!(map.threads[0].thread, "s");
    assert_eq!(map.threads[0].events, 2);
    assert_eq!((map.episode_count, map.episodes[0].events), (1, 1));
    assert_eq!(map.episodes[0].status, "sealed");
    // The two lasting facts said ("I live in Berlin ...", "I cycle to work ... every
    // day") are candidates from the curator, each once (one is in the episode too); "I
    // moved to Lisbon last month" is an event of one moment.
    assert_eq!(
        map.beliefs,
        [
            ("candidate".to_owned(), 2),
            ("active".to_owned(), 1),
            ("superseded".to_owned(), 1)
        ]
    );
    assert_eq!(map.procedures, 1);
    assert!(map.synapse_count > 0 && !map.hubs.is_empty());
    for hub in &map.hubs {
        assert!(m.ledger().get(&p, hub.event).unwrap().is_some());
        assert!(!hub.preview.is_empty());
    }
    let (a, b) = map.span.unwrap();
    assert!(a <= b);
    let short = m.map(&p, 1).unwrap();
    assert_eq!((short.threads.len(), short.thread_count), (1, 2));
    assert_eq!(m.map(&project("q"), 10).unwrap().events, 1);
    let err = m.map(&project("nope"), 10).unwrap_err().to_string();
    // It names the project asked for, and none of the others.
    assert!(
        err.contains("nope") && !err.contains("`p`") && !err.contains("q"),
        "{err}"
    );
}

#[test]
fn query_text_compiles_to_phrases_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    let exact = m
        .observe(
            say(
                "p",
                "s1",
                Role::User,
                "The blue heron nests by the old mill",
            )
            .agent("ana"),
        )
        .unwrap();
    let scrambled = m
        .observe(say("p", "s1", Role::User, "The heron is blue; the mill is old").agent("ana"))
        .unwrap();
    let reply = m
        .observe(
            say(
                "p",
                "s1",
                Role::Assistant,
                "A blue heron by the old mill, noted",
            )
            .agent("bot"),
        )
        .unwrap();
    m.observe_batch(&chatter("p", 20)).unwrap();
    let mut from_doc = say("p", "s2", Role::Tool, "Field guide: the grey heron wades");
    from_doc.source = Some("guides/birds.pdf".to_owned());
    let from_doc = m.observe(from_doc).unwrap();
    let ids = |q: &str| -> Vec<_> {
        m.recall_with(&p, &hypermem::RecallQuery::new(q, 10))
            .unwrap()
            .items
            .iter()
            .map(|h| h.event.id)
            .collect()
    };
    let phrase = m
        .recall_with(
            &p,
            &hypermem::RecallQuery::new(r#"where does the "Blue  Heron" nest"#, 10),
        )
        .unwrap();
    let found: Vec<_> = phrase.items.iter().map(|h| h.event.id).collect();
    assert!(found.contains(&exact) && found.contains(&reply));
    assert!(!found.contains(&scrambled));
    assert!(
        phrase.suppressed.iter().any(|(id, why)| *id == scrambled
            && why.reason == hypermem::recall::SuppressReason::MissingPhrase
            && why.detail.contains("blue heron")),
        "{:?}",
        phrase.suppressed
    );
    assert_eq!(ids("heron mill role:user agent:ana \"old mill\""), [exact]);
    assert_eq!(ids("heron mill agent:bot"), [reply]);
    assert_eq!(ids(r#"heron source:"guides/birds.pdf""#), [from_doc]);
    assert_eq!(ids("heron collection:guides/birds.pdf"), [from_doc]);
    assert!(ids("heron source:other.pdf").is_empty());
    assert!(ids("heron thread:elsewhere").is_empty());
    assert!(ids("heron until:1970-01-02").is_empty());
    let err = m
        .recall(&p, "heron project:other", 5)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("other") && err.contains("never crosses projects"),
        "{err}"
    );
    let err = m.recall(&p, "heron role:robot", 5).unwrap_err();
    assert_eq!(err.reason(), Reason::InvalidArgument, "{err}");
    let err = err.to_string();
    assert!(err.contains("robot"), "{err}");
    let assistant = m.recall(&p, "heron project:p role:assistant", 10).unwrap();
    assert_eq!(assistant[0].event.id, reply);
    assert!(all_of(assistant.iter(), |h| h.event.role == Role::Assistant));
}

#[test]
fn sealed_episodes_and_concepts_are_a_recall_source() {
    let dir = tempfile::tempdir().unwrap();
    let mut with_episodes = profile();
    with_episodes.recall.episode_weight = 0.5;
    let m = Memory::open(&with_episodes, Some(dir.path())).unwrap();
    let p = project("p");
    m.observe_batch(&chatter("p", 30)).unwrap();
    let ep = m.start_episode(&p, "agent").unwrap();
    let lines = [
        "We repotted the fig tree into a larger terracotta pot",
        "The fig tree gets afternoon sun on the balcony",
        "Fig leaves yellow when the pot stays wet",
        "Watering the fig tree twice a week in summer",
    ];
    let mut ids = Vec::new();
    for l in lines {
        let e = m.record_event(say("p", "garden", Role::User, l)).unwrap();
        m.append_event(&p, ep, e.id).unwrap();
        ids.push(e.id);
    }
    let before = m.recall(&p, "fig tree care", 10).unwrap();
    assert!(all_of(before.iter(), |h| h
        .fused
        .breakdown
        .iter()
        .all(|b| b.signal.name() != "episode")));
    m.end_episode(&p, ep, Some("healthy tree"), Some(1.0))
        .unwrap();
    let after = m.recall(&p, "fig tree care", 10).unwrap();
    let episodic: Vec<_> = after
        .iter()
        .filter(|h| {
            h.fused
                .breakdown
                .iter()
                .any(|b| b.signal.name() == "episode")
        })
        .map(|h| h.event.id)
        .collect();
    assert_eq!(episodic.len(), lines.len(), "{after:#?}");
    assert!(all_of(episodic.iter(), |id| ids.contains(id)));
    // Consolidated into a concept, the episode is still reached (through its concept too).
    m.pulse_tick(&p).unwrap();
    assert!(!m.cognition().concepts(&p).unwrap().is_empty());
    let again = m.recall(&p, "fig tree care", 10).unwrap();
    assert!(again.iter().any(|h| {
        h.fused
            .breakdown
            .iter()
            .any(|b| b.signal.name() == "episode")
    }));
    // Erasure drops the cached topics with the rows.
    m.forget_project(&p).unwrap();
    assert_eq!(
        m.recall(&p, "fig tree care", 10).unwrap_err().reason(),
        "unknown_project"
    );
}

#[test]
fn recall_potentiates_memories_and_pulse_places_them_by_strength() {
    use hypermem::clock::ManualClock;
    use hypermem::store::{Tier, VectorId};
    use std::sync::Arc;
    const DAY: f64 = 86_400.0;
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(1.7e9));
    let p = project("p");
    let open = || Memory::open_with_clock(&profile(), Some(dir.path()), clock.clone()).unwrap();
    let (star, others) = {
        let m = open();
        let star = m
            .observe(say(
                "p",
                "s",
                Role::User,
                "The observatory dome opens at dusk",
            ))
            .unwrap();
        let others = m.observe_batch(&chatter("p", 20)).unwrap();
        for _ in 0..4 {
            assert_eq!(
                m.recall(&p, "observatory dome", 1).unwrap()[0].event.id,
                star
            );
        }
        let trace = m.vectors().trace(&p, VectorId(star.0)).unwrap();
        assert_eq!(trace.accesses, 5, "stored once, recalled four times");
        let receipt = m.pulse_tick(&p).unwrap();
        let tiers = receipt
            .phases
            .iter()
            .find(|ph| ph.phase == "tiers")
            .unwrap();
        assert!(
            tiers
                .produced
                .starts_with("this process's hot tier filled with 1;"),
            "{tiers:?}"
        );
        assert_eq!(
            tiers.items, 0,
            "filling this process's hot tier is not a move"
        );
        assert!(m.vectors().trace(&p, VectorId(star.0)).unwrap().in_hot);
        // The next tick of the same process has nothing new to say about the hot tier.
        let again = m.pulse_tick(&p).unwrap();
        let tiers = again.phases.iter().find(|ph| ph.phase == "tiers").unwrap();
        assert!(
            tiers
                .produced
                .starts_with("hot tier unchanged since this process's last tick"),
            "{tiers:?}"
        );
        (star, others)
    };
    // Reopened later: the accesses were persisted; a month without use weakens everything.
    clock.advance(30.0 * DAY);
    let m = open();
    let trace = m.vectors().trace(&p, VectorId(star.0)).unwrap();
    assert_eq!((trace.accesses, trace.in_hot), (5, false));
    let receipt = m.pulse_tick(&p).unwrap();
    let tiers = receipt
        .phases
        .iter()
        .find(|ph| ph.phase == "tiers")
        .unwrap();
    assert_eq!(tiers.items, 1 + others.len(), "{tiers:?}");
    for id in others.iter().chain([&star]) {
        assert_eq!(
            m.vectors().trace(&p, VectorId(id.0)).unwrap().home,
            Tier::Cold
        );
    }
    assert!(dir.path().join("vectors-cold").exists());
    // Cold is slower to reach, never invisible; and a recall warms the memory again.
    assert_eq!(
        m.recall(&p, "observatory dome", 1).unwrap()[0].event.id,
        star
    );
    drop(m);
    let m = open();
    assert_eq!(
        m.vectors().trace(&p, VectorId(star.0)).unwrap().home,
        Tier::Cold
    );
    assert_eq!(m.vectors().trace(&p, VectorId(star.0)).unwrap().accesses, 6);
    let receipt = m.forget_project(&p).unwrap();
    assert_eq!(receipt.vectors, 1 + others.len());
    assert_eq!(m.ledger().count_rows("memory_traces", &p).unwrap(), 0);
}

#[test]
fn observations_join_their_agents_open_episode_and_segment_on_topic_shifts() {
    let dir = tempfile::tempdir().unwrap();
    // Unrelated short texts share function words: their encodings sit around 0.03-0.1
    // similarity, above the profile's default shift threshold (calibrated on random
    // vectors); this test sets one between unrelated and related text.
    let mut lite = Profile::load(Profile::bundled_path(ProfileKind::Lite)).unwrap();
    lite.cognition.topic_shift_similarity = 0.06;
    let m = Memory::open(&lite, Some(dir.path())).unwrap();
    let p = project("p");
    // Without an open episode nothing is linked.
    m.observe(say("p", "s", Role::User, "before any episode").agent("bot"))
        .unwrap();
    let first = m.start_episode(&p, "bot").unwrap();
    let baking: Vec<_> = [
        "feed the sourdough starter with rye flour",
        "the sourdough starter doubled overnight",
        "knead the bread dough and fold the sourdough",
        "proof the sourdough loaf in a floured basket",
        "bake the sourdough bread in a hot dutch oven",
        "the sourdough crust came out dark and crisp",
    ]
    .iter()
    .map(|t| say("p", "s", Role::User, t).agent("bot"))
    .collect();
    let ids = m.observe_batch(&baking).unwrap();
    // Another agent's events and events without an agent stay out.
    m.observe(say("p", "s", Role::User, "sourdough too").agent("other"))
        .unwrap();
    let cognition = m.cognition();
    assert_eq!(cognition.episode(&p, first).unwrap().events, ids);
    // A different topic in the same batch: the episode soft-seals and a chained one continues.
    let taxes: Vec<_> = [
        "quarterly VAT return: invoices and receipts",
        "deductible expenses for the VAT return",
        "submit the VAT return before the deadline",
        "VAT invoices from the contractor are missing",
    ]
    .iter()
    .map(|t| say("p", "s", Role::User, t).agent("bot"))
    .collect();
    let tax_ids = m.observe_batch(&taxes).unwrap();
    let first_episode = cognition.episode(&p, first).unwrap();
    assert_eq!(first_episode.events, ids, "nothing off-topic joined it");
    let second = first_episode.next.expect("a chained episode took the rest");
    assert_eq!(cognition.episode(&p, second).unwrap().events, tax_ids);
    assert_eq!(cognition.open_episode(&p, "bot").unwrap(), Some(second));
}

#[test]
fn the_lexical_index_is_saved_caught_up_and_rebuilt_when_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let p = project("p");
    let file = dir.path().join("lexical/p.lex");
    let bm25_finds = |m: &Memory, word: &str| bm25_finds(m, &p, word, word);
    {
        let m = Memory::open(&profile(), Some(dir.path())).unwrap();
        m.observe_batch(&chatter("p", 20)).unwrap();
        m.observe(say("p", "s", Role::User, "the wombat burrow is deep"))
            .unwrap();
        assert!(bm25_finds(&m, "wombat"));
    }
    assert!(file.exists(), "saved on close");
    let saved = std::fs::read(&file).unwrap();
    {
        // Observed while the index is not loaded: the saved file does not know it.
        let m = Memory::open(&profile(), Some(dir.path())).unwrap();
        m.observe(say("p", "s", Role::User, "the platypus swims at dusk"))
            .unwrap();
    }
    assert_eq!(
        std::fs::read(&file).unwrap(),
        saved,
        "nothing loaded, nothing rewritten"
    );
    for _ in 0..2 {
        let m = Memory::open(&profile(), Some(dir.path())).unwrap();
        assert!(bm25_finds(&m, "platypus"), "caught up from the ledger");
        assert!(bm25_finds(&m, "wombat"), "read from the file");
    }
    assert_eq!(
        std::fs::read(&file).unwrap(),
        saved,
        "a small lag is caught up on each load, not rewritten"
    );
    // A damaged file is ignored and rebuilt.
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&file, &bytes).unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    assert!(bm25_finds(&m, "wombat") && bm25_finds(&m, "platypus"));
    m.flush().unwrap();
    assert_ne!(std::fs::read(&file).unwrap(), bytes, "rewritten whole");
    // Erasure removes the file with the project's words.
    m.forget_project(&p).unwrap();
    assert!(!file.exists());
    drop(m);
    assert!(!file.exists(), "not written back on close");
}

#[test]
fn recall_expands_the_best_candidates_over_synapses() {
    let dir = tempfile::tempdir().unwrap();
    let p = project("p");
    // Without reply context the reply below holds no query word: only its synapse
    // brings it in.
    let mut plain = profile();
    plain.recall.reply_context = false;
    let m = Memory::open(&plain, Some(dir.path())).unwrap();
    m.observe_batch(&chatter("p", 30)).unwrap();
    // Three clear matches take the three seed places; a thread links each turn to the
    // one before it when another author said that one (a reply), so the reply to the
    // first is one synapse away.
    let kiln = m
        .observe(say(
            "p",
            "studio",
            Role::User,
            "The kiln fires at 1200 degrees",
        ))
        .unwrap();
    let next = m
        .observe(say(
            "p",
            "studio",
            Role::Assistant,
            "Order a spare thermocouple",
        ))
        .unwrap();
    for text in [
        "kiln fires need dry pots",
        "two kiln fires per week at most",
    ] {
        m.observe(say("p", "notes", Role::User, text)).unwrap();
    }
    let query = "kiln fires degrees";
    let hits = m.recall(&p, query, 10).unwrap();
    assert_eq!(hits[0].event.id, kiln);
    let linked = hits.iter().find(|h| h.event.id == next).expect("recalled");
    assert!(
        linked
            .fused
            .breakdown
            .iter()
            .any(|b| b.signal.name() == "ripple"),
        "{:?}",
        linked.fused.breakdown
    );
    drop(m);
    let mut off = plain;
    off.recall.ripple_weight = 0.0;
    let m = Memory::open(&off, Some(dir.path())).unwrap();
    for h in m.recall(&p, query, 10).unwrap() {
        assert!(all_of(h.fused.breakdown.iter(), |b| b.signal.name() != "ripple"));
    }
}

#[test]
fn a_batch_whose_projections_fail_completes_on_retry_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let p = project("retry");
    let batch: Vec<NewEvent> = (0..6)
        .map(|i| {
            let mut e = NewEvent::new(
                p.clone(),
                Role::User,
                EventKind::Message,
                format!("the heron nests by the lake, note {i}"),
            )
            .thread("t")
            .session("s");
            e.source_id = Some(format!("turn-{i}"));
            e
        })
        .collect();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    hypermem::failpoint::fail_projections("retry", 1);
    assert!(
        m.observe_batch(&batch).is_err(),
        "the injected failure surfaces"
    );
    assert_eq!(m.ledger().count(&p).unwrap(), 6, "the ledger committed");
    // The retry completes the projections; nothing is stored twice.
    let ids = m.observe_batch(&batch).unwrap();
    assert_eq!(m.ledger().count(&p).unwrap(), 6);
    assert_eq!(m.vectors().len(&p), 6);
    let again = m.observe_batch(&batch).unwrap();
    assert_eq!(ids, again, "a retry returns the stored ids");
    let hits = m.recall(&p, "heron nests lake", 10).unwrap();
    assert_eq!(hits.len(), 6);
    // The same source id with other content is a conflict, not a second row.
    let mut other = batch[0].clone();
    other.content = "something else".into();
    assert_eq!(m.observe(other).unwrap_err().reason(), "conflict");
    // Without a retry, the next open re-encodes what is missing from the ledger.
    let q = project("repair");
    let more: Vec<NewEvent> = (0..4)
        .map(|i| {
            NewEvent::new(
                q.clone(),
                Role::User,
                EventKind::Message,
                format!("otters hold hands {i}"),
            )
        })
        .collect();
    hypermem::failpoint::fail_projections("repair", 1);
    // Without source ids a resend would store them twice: the error says they are stored
    // and is not retryable.
    let err = m.observe_batch(&more).unwrap_err();
    assert_eq!(err.reason(), "partially_committed", "{err}");
    assert!(!err.class().retryable());
    assert_eq!(m.ledger().count(&q).unwrap(), 4, "{err}");
    let stored = hypermem::api::ApiError::from(err);
    assert_eq!(
        stored.detail.unwrap()["event_ids"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    drop(m);
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    assert_eq!(m.vectors().len(&q), 4, "repaired on open");
    assert_eq!(m.recall(&q, "otters", 10).unwrap().len(), 4);
}

#[test]
fn a_view_reads_beside_the_holder_and_learns_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = project("v");
    let holder = Memory::open(&profile(), Some(dir.path())).unwrap();
    holder
        .observe(NewEvent::new(
            p.clone(),
            Role::User,
            EventKind::Message,
            "the kiln fires at dawn",
        ))
        .unwrap();
    let view = Memory::open_view(&profile(), Some(dir.path())).unwrap();
    assert!(view.is_read_only());
    assert_eq!(
        view.recall(&p, "when does the kiln fire", 5).unwrap().len(),
        1
    );
    let refused = view
        .observe(NewEvent::new(
            p.clone(),
            Role::User,
            EventKind::Message,
            "x",
        ))
        .unwrap_err();
    assert_eq!(refused.reason(), "read_only");
    assert_eq!(view.forget_project(&p).unwrap_err().reason(), "read_only");
    for _ in 0..40 {
        view.recall(&p, "kiln", 5).unwrap();
    }
    drop(view);
    let db = rusqlite::Connection::open(dir.path().join("ledger.db")).unwrap();
    let logged: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM query_log WHERE project = 'v'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        logged, 41,
        "a view logs the questions it answered (for gaps)"
    );
    let learned: i64 = db
        .query_row(
            "SELECT (SELECT COUNT(*) FROM memory_traces WHERE project = 'v')
                  + (SELECT COUNT(*) FROM synapses WHERE project = 'v')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(learned, 0, "a view does not learn");
    assert!(
        !dir.path().join("lexical/v.lex").exists(),
        "a view leaves the lexical index to the running writer"
    );
    assert_eq!(holder.ledger().count(&p).unwrap(), 1);
}

#[test]
fn a_view_saves_the_lexical_index_it_built_unless_the_ledger_moved_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = project("lx");
    let say = |m: &Memory, text: &str| {
        m.observe(NewEvent::new(
            p.clone(),
            Role::User,
            EventKind::Message,
            text,
        ))
        .unwrap();
    };
    let file = dir.path().join("lexical/lx.lex");
    {
        let writer = Memory::open(&profile(), Some(dir.path())).unwrap();
        say(&writer, "the kiln fires at dawn");
        say(&writer, "glaze the bowls on friday");
    }
    std::fs::remove_file(&file).ok();
    // No writer runs: the view saves what it built, and the next view loads it.
    let view = Memory::open_view(&profile(), Some(dir.path())).unwrap();
    assert_eq!(view.recall(&p, "kiln", 5).unwrap().len(), 1);
    drop(view);
    let saved = std::fs::read(&file).expect("the view saved its lexical index");
    let view = Memory::open_view(&profile(), Some(dir.path())).unwrap();
    assert_eq!(view.recall(&p, "glaze bowls", 5).unwrap().len(), 1);
    drop(view);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        saved,
        "loaded, not rewritten"
    );

    // A view that read the project before a writer erased it saves nothing of it.
    std::fs::remove_file(&file).unwrap();
    let view = Memory::open_view(&profile(), Some(dir.path())).unwrap();
    assert_eq!(view.recall(&p, "kiln", 5).unwrap().len(), 1);
    {
        let writer = Memory::open(&profile(), Some(dir.path())).unwrap();
        writer.forget_project(&p).unwrap();
        say(&writer, "a new start");
    }
    std::fs::remove_file(&file).ok();
    drop(view);
    assert!(
        !file.exists(),
        "an erased project's words are not written back"
    );
}

/// Words of planted topics (8 topics × 6 words), for consolidation on real text.
const TOPIC_WORDS: [[&str; 6]; 8] = [
    [
        "garden",
        "tomatoes",
        "compost",
        "watering",
        "seedlings",
        "soil",
    ],
    [
        "invoice",
        "payment",
        "refund",
        "billing",
        "receipt",
        "accountant",
    ],
    [
        "kubernetes",
        "deployment",
        "cluster",
        "rollout",
        "container",
        "helm",
    ],
    [
        "marathon",
        "training",
        "running",
        "pace",
        "stretching",
        "shoes",
    ],
    [
        "piano",
        "sonata",
        "practice",
        "chords",
        "metronome",
        "recital",
    ],
    [
        "flight", "passport", "airport", "luggage", "boarding", "visa",
    ],
    ["recipe", "oven", "flour", "butter", "dough", "baking"],
    [
        "puppy",
        "leash",
        "veterinarian",
        "vaccines",
        "kibble",
        "walks",
    ],
];

#[test]
fn consolidation_of_real_text_episodes_does_not_collapse() {
    // k topics × 12 episodes of English text that shares filler words, as conversations
    // do: unrelated episodes are far above chance similarity (about 0.48 here), so a fixed
    // threshold put all of them into one concept; the per-project baseline does not.
    let filler = [
        "okay so i think",
        "well anyway",
        "you know what",
        "by the way",
        "honestly",
    ];
    for k in [3usize, 5, 8] {
        let dir = tempfile::tempdir().unwrap();
        let m = Memory::open(&profile(), Some(dir.path())).unwrap();
        let p = project("c");
        let mut truth = std::collections::HashMap::new();
        for e in 0..12 * k {
            let t = e % k;
            let w = TOPIC_WORDS[t];
            let ep = m.start_episode(&p, "a").unwrap();
            let events: Vec<NewEvent> = (0..6)
                .map(|i| {
                    let text = format!(
                        "{} the {} and the {} need {} today, {} {}",
                        filler[(e + i) % 5],
                        w[i % 6],
                        w[(i + e) % 6],
                        w[(i + 2) % 6],
                        filler[(e * 3 + i) % 5],
                        w[(i * 5 + e) % 6]
                    );
                    let mut ev = NewEvent::new(p.clone(), Role::User, EventKind::Message, text);
                    ev.agent = Some("a".into());
                    ev
                })
                .collect();
            m.observe_batch(&events).unwrap();
            m.end_episode(&p, ep, None, None).unwrap();
            truth.insert(ep, t);
        }
        let cog = m.cognition();
        while cog.consolidate(&p, 100).unwrap().0 > 0 {}
        let concepts = cog.concepts(&p).unwrap();
        let largest = concepts.iter().map(|c| c.support.len()).max().unwrap();
        assert!(
            largest as f64 <= 12.0 * k as f64 * (1.0 / k as f64 + 0.1),
            "k = {k}: a concept holds {largest} of {} episodes",
            12 * k
        );
        // Every concept is about one planted topic.
        for c in &concepts {
            let topics: std::collections::HashSet<usize> =
                c.support.iter().map(|ep| truth[ep]).collect();
            assert_eq!(
                topics.len(),
                1,
                "k = {k}: concept {:?} mixes topics",
                c.label
            );
        }
        assert!(concepts.len() >= k, "k = {k}: {} concepts", concepts.len());
    }
}

#[test]
fn a_conversation_resumed_after_a_gap_in_event_time_is_a_new_episode() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("seg");
    let first = m.start_episode(&p, "a").unwrap();
    let t0 = 1_738_368_000_000; // 2025-02-01
    let say = |text: &str, at: i64| {
        let mut e = NewEvent::new(p.clone(), Role::User, EventKind::Message, text).at(at);
        e.agent = Some("a".into());
        e
    };
    let events = vec![
        say("planning the garden beds for spring", t0),
        say("tomatoes go in the sunny corner", t0 + 60_000),
        say("and basil next to them", t0 + 120_000),
        // The same subject two hours later: a new episode, chained to the first.
        say("back to the garden: the basil sprouted", t0 + 2 * 3_600_000),
        say("it needs more water", t0 + 2 * 3_600_000 + 60_000),
    ];
    let ids = m.observe_batch(&events).unwrap();
    let cog = m.cognition();
    let one = cog.episode(&p, first).unwrap();
    assert_eq!(one.events, ids[..3].to_vec());
    let second = one.next.expect("a chained episode");
    assert_eq!(cog.episode(&p, second).unwrap().events, ids[3..].to_vec());
}

#[test]
fn an_acknowledgement_after_a_gap_stays_in_the_episode_it_answers() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("ack");
    let first = m.start_episode(&p, "a").unwrap();
    let t0 = 1_738_368_000_000; // 2025-02-01
    let say = |text: &str, at: i64| {
        let mut e = NewEvent::new(p.clone(), Role::User, EventKind::Message, text).at(at);
        e.agent = Some("a".into());
        e
    };
    let hour = 3_600_000;
    let events = vec![
        say("planning the garden beds for spring", t0),
        say("tomatoes go in the sunny corner", t0 + 60_000),
        say("and basil next to them", t0 + 120_000),
        // "thanks!" an hour later answers this episode; it starts nothing.
        say("thanks!", t0 + hour),
        say("ok", t0 + hour + 60_000),
        // Real content after the gap does start the next episode.
        say(
            "the invoice for the new laptop arrived today",
            t0 + 3 * hour,
        ),
    ];
    let ids = m.observe_batch(&events).unwrap();
    let cog = m.cognition();
    let one = cog.episode(&p, first).unwrap();
    assert_eq!(one.events, ids[..5].to_vec(), "acknowledgements attached");
    let second = one.next.expect("a chained episode");
    assert_eq!(cog.episode(&p, second).unwrap().events, ids[5..].to_vec());
}

#[test]
fn one_text_typed_three_ways_is_one_memory_and_its_receipt_lists_every_id() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    let ids = m
        .observe_batch(&[
            say("p", "a", Role::User, "The boiler pressure is low"),
            say("p", "b", Role::User, "the boiler pressure is low!! 😩"),
            say("p", "c", Role::User, "*The boiler\u{00A0}pressure is low…*"),
            say("p", "d", Role::User, "The boiler pressure is not low"),
            say("p", "e", Role::User, "The garden hose is leaking"),
        ])
        .unwrap();
    let hits = m.recall(&p, "boiler pressure", 10).unwrap();
    let same: Vec<_> = hits
        .iter()
        .filter(|h| ids[..3].contains(&h.event.id))
        .collect();
    assert_eq!(same.len(), 1, "{hits:#?}");
    let mut all: Vec<hypermem::ledger::EventId> = same[0].duplicates.clone();
    all.push(same[0].event.id);
    all.sort_unstable();
    assert_eq!(all, ids[..3], "every typing is folded into the one slot");
    assert!(
        hits.iter().any(|h| h.event.id == ids[3]),
        "a negation never folds: {hits:#?}"
    );
    let pack = m
        .recall_pack(&p, "boiler pressure", None, 4_000, None)
        .unwrap();
    let (line, _) = pack
        .items
        .iter()
        .find(|(l, _)| ids[..3].iter().any(|i| i.0 == l.id))
        .expect("the boiler note is in the pack");
    let mut receipt: Vec<u64> = line.folded.clone();
    receipt.push(line.id);
    receipt.sort_unstable();
    assert_eq!(receipt, ids[..3].iter().map(|i| i.0).collect::<Vec<_>>());
}

#[test]
fn import_with_episodes_makes_exactly_one_episode_per_session() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let data = tempfile::tempdir().unwrap();
    // Written for this test: two sessions, the first with a hard change of topic halfway
    // (segmentation by topic would cut it in two).
    let garden = [
        "the tomatoes need staking before the wind picks up",
        "compost the bean haulms and turn the heap",
        "net the brassicas against pigeons",
        "sow the broad beans in the raised bed",
        "water the greenhouse peppers twice a week",
        "prune the gooseberry bushes into an open cup",
    ];
    let servers = [
        "the replica lags four seconds behind the primary",
        "rotate the TLS certificates on the load balancer",
        "vacuum the events table after the migration",
        "the kernel upgrade needs a reboot of node three",
        "page the on-call engineer when disk passes ninety percent",
        "pin the container image digest in the deploy manifest",
    ];
    let turns = |texts: &[&str], from: usize| -> Vec<serde_json::Value> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| serde_json::json!({"turn_id": format!("t{}", from + i), "role": if i % 2 == 0 { "user" } else { "assistant" }, "text": t}))
            .collect()
    };
    let mut first = turns(&garden, 0);
    first.extend(turns(&servers, garden.len()));
    let conversation = serde_json::json!({"conversation_id": "c", "sessions": [
        {"session_id": "s1", "date": "2024-03-01", "turns": first},
        {"session_id": "s2", "date": "2024-03-09", "turns": turns(&garden[..3], 100)},
    ]});
    std::fs::write(
        data.path().join("conversations.jsonl"),
        conversation.to_string(),
    )
    .unwrap();
    let report = hypermem::eval::import(&m, data.path(), true, None, |_, _| {}).unwrap();
    assert_eq!(report.new, 15);
    let map = m.map(&project("c"), 100).unwrap();
    assert_eq!(map.episode_count, 2, "{:?}", map.episodes);
    let mut sizes: Vec<u64> = map.episodes.iter().map(|e| e.events).collect();
    sizes.sort_unstable();
    assert_eq!(sizes, vec![3, 12]);
    assert!(map.episodes.iter().all(|e| e.status == "sealed"));
    // Spans are the events' time (the sessions' dates), not when they were imported.
    let day = |d: &str| hypermem::clock::parse_instant(d).unwrap();
    let mut spans: Vec<(i64, i64)> = map.episodes.iter().map(|e| e.span).collect();
    spans.sort_unstable();
    assert_eq!(spans[0].0, day("2024-03-01"));
    assert_eq!(spans[1], (day("2024-03-09"), day("2024-03-09")));
    // Re-running the import stores nothing and makes no episode.
    let again = hypermem::eval::import(&m, data.path(), true, None, |_, _| {}).unwrap();
    assert_eq!((again.new, again.skipped), (0, 15));
    assert_eq!(m.map(&project("c"), 100).unwrap().episode_count, 2);
}

#[test]
fn a_read_sees_the_sequence_it_asks_for_or_refuses_by_name() {
    use hypermem::RecallQuery;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let p = project("ryw");
    let writer = Memory::open(&profile(), Some(dir.path())).unwrap();
    let view = Memory::open_view(&profile(), Some(dir.path())).unwrap();
    let ask = |at_least: Option<u64>, wait_ms: u64| {
        let mut rq = RecallQuery::new("greenhouse vents", 5);
        rq.at_least = at_least;
        rq.wait = Duration::from_millis(wait_ms);
        view.recall_with(&p, &rq)
    };
    // A write's id is its sequence: a read asking for it sees the write.
    let first = writer
        .observe(say(
            "ryw",
            "s",
            Role::User,
            "The greenhouse vents open at 28 degrees.",
        ))
        .unwrap();
    let found = ask(Some(first.0), 0).unwrap();
    assert_eq!(found.items[0].event.id, first);
    // A sequence no write has reached: refused by name after the wait, nothing changed.
    let err = ask(Some(first.0 + 1), 50).unwrap_err();
    assert_eq!(err.reason(), Reason::NotCaughtUp, "{err}");
    assert!(err.class().retryable());
    // A write that lands while the read waits is seen by it.
    let later = std::thread::scope(|s| {
        let read = s.spawn(|| ask(Some(first.0 + 1), 5_000));
        std::thread::sleep(Duration::from_millis(100));
        writer
            .observe(say(
                "ryw",
                "s",
                Role::User,
                "The greenhouse vents now open at 26 degrees.",
            ))
            .unwrap();
        read.join().unwrap()
    })
    .unwrap();
    assert!(
        later.items.iter().any(|i| i.event.id.0 == first.0 + 1),
        "{later:?}"
    );
    // A wait past the bound is refused before any work; so is bad input that asks to wait.
    let err = ask(None, 61_000).unwrap_err();
    assert_eq!(err.reason(), Reason::InvalidArgument, "{err}");
    let mut empty = RecallQuery::new("", 5);
    empty.at_least = Some(first.0 + 1_000);
    empty.wait = Duration::from_millis(200);
    let err = view.recall_with(&p, &empty).unwrap_err();
    assert_eq!(err.reason(), Reason::InvalidArgument, "{err}");
}

/// The same question over the same memories gets the same answer, whatever the process
/// answered before: one that answered a question when the project was smaller (and drew
/// its relevance floor's sample of the project then) and one opened afresh on the same
/// data give the same items with the same scores.
#[test]
fn an_answer_does_not_depend_on_what_the_process_was_asked_before() {
    let dir = tempfile::tempdir().unwrap();
    let p = project("history");
    let subjects = [
        "kiln",
        "glaze",
        "clay",
        "wheel",
        "trim",
        "slip",
        "bisque",
        "stoneware",
    ];
    let note = |i: usize| {
        let s = subjects[i % subjects.len()];
        say(
            "history",
            &format!("s{}", i / 6),
            Role::User,
            &format!(
                "note {i}: the {s} batch number {i} took {} hours",
                i % 7 + 2
            ),
        )
    };
    let question = "how long did the glaze batch take";
    let answer = |m: &Memory| {
        m.recall(&p, question, 10)
            .unwrap()
            .into_iter()
            .map(|i| (i.event.id, i.fused.score.to_bits(), i.similarity))
            .collect::<Vec<_>>()
    };
    let asked_before = {
        let m = Memory::open(&profile(), Some(dir.path())).unwrap();
        m.observe_batch(&(0..40).map(note).collect::<Vec<_>>())
            .unwrap();
        answer(&m);
        m.observe_batch(&(40..70).map(note).collect::<Vec<_>>())
            .unwrap();
        answer(&m)
    };
    let fresh = Memory::open(&profile(), Some(dir.path())).unwrap();
    assert!(!asked_before.is_empty());
    assert_eq!(asked_before, answer(&fresh));
}
