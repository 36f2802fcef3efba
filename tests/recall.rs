//! Recall as a user meets it: bounded priors, duplicates, the relevance floor, date hints,
//! speakers, caller-supplied embeddings and the built-in static model, packs that carry the
//! beliefs their evidence supports.

mod common;
use common::all_of;

use common::project;
use hypermem::ledger::{EventKind, NewEvent, Role};
use hypermem::{Memory, Profile, ProfileKind, RecallItem, RecallQuery};

use common::say;

fn profile() -> hypermem::Profile {
    common::small_profile()
}

/// A project with some unrelated conversation around what the tests look for.
fn background(m: &Memory) {
    let filler = [
        "Can you suggest a recipe for a quick weeknight pasta?",
        "Try garlic, olive oil, chili flakes and parsley over spaghetti.",
        "What is a good stretch for a stiff lower back?",
        "A gentle knee-to-chest stretch, held for thirty seconds, usually helps.",
        "Recommend a novel for a long train ride.",
        "A long mystery novel with short chapters suits a train ride.",
        "How do I water succulents in winter?",
        "Water them sparingly, about once a month, when the soil is dry.",
        "ok",
        "thanks!",
    ];
    for (i, t) in filler.iter().enumerate() {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        m.observe(say("bg", role, t)).unwrap();
    }
}

#[test]
fn an_answer_both_sources_rank_first_is_not_buried_by_the_role_prior() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    background(&m);
    let answer = m
        .observe(say(
            "s1",
            Role::Assistant,
            "The nightly database backups run at 02:00 UTC and are kept for 30 days.",
        ))
        .unwrap();
    let hits = m
        .recall(&project("p"), "when do the nightly database backups run", 5)
        .unwrap();
    assert_eq!(hits[0].event.id, answer, "{:?}", hits[0].event.content);
}

#[test]
fn repeating_a_query_keeps_its_top_three() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    background(&m);
    m.observe(say("s1", Role::User, "My sister Ana lives in Porto."))
        .unwrap();
    m.observe(say("s1", Role::User, "Ana is visiting me in June."))
        .unwrap();
    m.observe(say("s2", Role::User, "I call my sister every Sunday."))
        .unwrap();
    let top = |m: &Memory| -> Vec<u64> {
        m.recall(&project("p"), "where does my sister live", 5)
            .unwrap()
            .iter()
            .take(3)
            .map(|h| h.event.id.0)
            .collect()
    };
    let first = top(&m);
    for _ in 0..40 {
        assert_eq!(top(&m), first, "recalls alone must not change the answer");
    }
    m.flush_feedback().unwrap();
    assert_eq!(top(&m), first);
}

#[test]
fn identical_observations_collapse_into_one_item() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    background(&m);
    let ids: Vec<_> = (0..4)
        .map(|_| {
            m.observe(say(
                "s1",
                Role::User,
                "The office wifi password is Maple-42.",
            ))
            .unwrap()
        })
        .collect();
    let hits = m
        .recall(&project("p"), "what is the office wifi password", 5)
        .unwrap();
    let wifi: Vec<_> = hits
        .iter()
        .filter(|h| h.event.content.contains("wifi"))
        .collect();
    assert_eq!(wifi.len(), 1, "one item, not four");
    let mut all = vec![wifi[0].event.id];
    all.extend(&wifi[0].duplicates);
    all.sort();
    assert_eq!(all, ids);
}

#[test]
fn a_question_about_something_never_stored_returns_nothing_and_is_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    background(&m);
    let p = project("p");
    let r = m
        .recall_with(&p, &RecallQuery::new("quantum chromodynamics lattice", 5))
        .unwrap();
    assert!(
        r.items.is_empty(),
        "{:?}",
        r.items.iter().map(|i| &i.event.content).collect::<Vec<_>>()
    );
    assert!(
        all_of(r.suppressed.iter(), |s| s.1.reason
            == hypermem::recall::SuppressReason::KnowledgeGap),
        "{:?}",
        r.suppressed
    );
    m.flush_feedback().unwrap();
    let gaps = m.knowledge_gaps(&p, 10).unwrap();
    assert!(
        gaps.iter()
            .any(|g| format!("{g:?}").contains("quantum chromodynamics")),
        "{gaps:?}"
    );
    // Something that was stored is still found.
    assert!(
        !m.recall(&p, "stretch for a stiff back", 5)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_written_out_date_lifts_that_day_without_dropping_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let day = |d: i64| hypermem::clock::parse_when(&format!("2025-03-{d:02}")).unwrap();
    background(&m);
    let early = m
        .observe(say("a", Role::User, "I ran the spring 5k race today.").at(day(3) + 3_600_000))
        .unwrap();
    let late = m
        .observe(
            say("b", Role::User, "I ran the spring 10k race this morning.").at(day(24) + 3_600_000),
        )
        .unwrap();
    let p = project("p");
    let r = m
        .recall_with(
            &p,
            &RecallQuery::new("which race did I run on March 24, 2025", 5),
        )
        .unwrap();
    assert!(!r.time_hint_ignored);
    let ids: Vec<_> = r.items.iter().map(|i| i.event.id).collect();
    assert_eq!(ids.first(), Some(&late), "{ids:?}");
    assert!(ids.contains(&early), "a hint lifts, it does not filter");
    // An explicit bound does filter.
    let r = m
        .recall_with(&p, &RecallQuery::new("spring race since:2025-03-20", 5))
        .unwrap();
    assert!(all_of(r.items.iter(), |i| i.event.id != early));
}

/// A turn said the day after the day a question names, telling of it ("yesterday"), is
/// about that day: the hint lifts it as it lifts what was said then.
#[test]
fn a_turn_telling_of_the_day_asked_about_gets_the_hint() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let day = |d: i64| hypermem::clock::parse_when(&format!("2025-03-{d:02}")).unwrap();
    background(&m);
    let told = m
        .observe(
            say(
                "a",
                Role::User,
                "Yesterday I ran the spring race by the river.",
            )
            .at(day(25) + 3_600_000),
        )
        .unwrap();
    let other = m
        .observe(
            say(
                "b",
                Role::User,
                "I ran the spring race by the lake, a great morning.",
            )
            .at(day(10) + 3_600_000),
        )
        .unwrap();
    let p = project("p");
    let r = m
        .recall_with(
            &p,
            &RecallQuery::new("which spring race did I run on March 24, 2025", 5),
        )
        .unwrap();
    assert!(!r.time_hint_ignored, "a turn tells of that day");
    let hinted = |i: &RecallItem| {
        i.fused
            .breakdown
            .iter()
            .any(|b| b.signal.name() == "hint" && b.score > 0.0)
    };
    let first = &r.items[0];
    assert_eq!(first.event.id, told, "{:?}", r.items);
    assert!(hinted(first));
    let second = r
        .items
        .iter()
        .find(|i| i.event.id == other)
        .expect("a hint does not filter");
    assert!(!hinted(second));
}

/// Recalls `query` (top `k`) over `lines` (speaker, text: one session of role-user
/// turns, after the background chatter when `chatter`) with the recall settings `tune`
/// leaves: the ids of the lines, and the items.
fn recall_over(
    tune: impl FnOnce(&mut hypermem::config::RecallSettings),
    chatter: bool,
    lines: &[(Option<&str>, &str)],
    query: &str,
    k: usize,
) -> (Vec<hypermem::ledger::EventId>, Vec<RecallItem>) {
    let dir = tempfile::tempdir().unwrap();
    let mut profile = profile();
    tune(&mut profile.recall);
    let m = Memory::open(&profile, Some(dir.path())).unwrap();
    if chatter {
        background(&m);
    }
    let ids = lines
        .iter()
        .map(|&(speaker, text)| {
            let e = say("chat", Role::User, text);
            m.observe(match speaker {
                Some(name) => e.speaker(name),
                None => e,
            })
            .unwrap()
        })
        .collect();
    let items = m.recall(&project("p"), query, k).unwrap();
    (ids, items)
}

/// Two notes that match a "when" question about as well: the one that states a date
/// answers it, the other only mentions the subject.
fn when_question(answer_weight: f64) -> (Vec<hypermem::ledger::EventId>, Vec<RecallItem>) {
    recall_over(
        |r| r.answer_weight = answer_weight,
        true,
        &[
            (
                None,
                "Remind me to ask about the dentist appointment, the dentist appointment matters.",
            ),
            (None, "My dentist appointment is on April 14 after work."),
        ],
        "When is my dentist appointment?",
        5,
    )
}

#[test]
fn a_when_question_puts_the_note_that_states_a_date_first() {
    // Without the answer's kind, the note that repeats the subject comes first ...
    let (ids, items) = when_question(0.0);
    assert_eq!(items[0].event.id, ids[0], "{:?}", items[0].event.content);
    // ... with it (the default), the one that says when.
    let (ids, items) = when_question(profile().recall.answer_weight);
    assert_eq!(items[0].event.id, ids[1], "{:?}", items[0].event.content);
    let signals = |i: &RecallItem| -> Vec<&str> {
        i.fused.breakdown.iter().map(|b| b.signal.name()).collect()
    };
    assert!(
        signals(&items[0]).contains(&"answer"),
        "{:?}",
        items[0].fused
    );
    assert!(
        !signals(&items[1]).contains(&"answer"),
        "{:?}",
        items[1].fused
    );
}

/// A question someone asked and the reply that answers it, both about the drums.
fn asked_and_answered(tells_weight: f64) -> (Vec<hypermem::ledger::EventId>, Vec<RecallItem>) {
    recall_over(
        |r| {
            r.tells_weight = tells_weight;
            r.answer_weight = 0.0;
        },
        true,
        &[
            (
                Some("Maria"),
                "Nice! How long have you been playing the drums, John?",
            ),
            (
                Some("Dev"),
                "Playing the drums for a long while now, John says: tough but fun.",
            ),
        ],
        "How long has John been playing the drums?",
        5,
    )
}

#[test]
fn a_turn_that_only_asks_gives_way_to_the_one_that_tells() {
    let (ids, items) = asked_and_answered(0.0);
    assert_eq!(items[0].event.id, ids[0], "{:?}", items[0].event.content);
    let (ids, items) = asked_and_answered(profile().recall.tells_weight);
    assert_eq!(items[0].event.id, ids[1], "{:?}", items[0].event.content);
    let tells = |i: &RecallItem| i.fused.breakdown.iter().any(|b| b.signal.name() == "tells");
    assert!(tells(&items[0]), "{:?}", items[0].fused);
    assert!(!tells(&items[1]), "{:?}", items[1].fused);
}

#[test]
fn the_speaker_is_a_field_of_its_own_and_recall_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    background(&m);
    let said = m
        .observe(say("s1", Role::User, "I finally adopted a rescue greyhound!").speaker("Marisol"))
        .unwrap();
    m.observe(say("s1", Role::User, "We adopted a kitten last spring.").speaker("Teodor"))
        .unwrap();
    let stored = m.ledger().get(&project("p"), said).unwrap().unwrap();
    assert_eq!(
        stored.content, "I finally adopted a rescue greyhound!",
        "raw stays raw"
    );
    assert_eq!(stored.speaker.as_deref(), Some("Marisol"));
    let hits = m
        .recall(&project("p"), "what pet did Marisol adopt", 3)
        .unwrap();
    assert_eq!(hits[0].event.id, said);
}

#[test]
fn caller_embeddings_are_a_semantic_source_of_one_dimension_per_project() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let axis = |i: usize| {
        let mut v = vec![0.05f32; 8];
        v[i] = 1.0;
        v
    };
    let texts = [
        "alpha text one",
        "beta text two",
        "gamma text three",
        "delta text four",
    ];
    let mut ids = Vec::new();
    for (i, t) in texts.iter().enumerate() {
        let mut e = say("s", Role::User, t);
        e.embedding = Some(axis(i));
        ids.push(m.observe(e).unwrap());
    }
    let p = project("p");
    let emb = axis(2);
    let mut rq = RecallQuery::new("unrelated words entirely", 4);
    rq.embedding = Some(&emb);
    let r = m.recall_with(&p, &rq).unwrap();
    assert_eq!(r.items[0].event.id, ids[2], "{:?}", r.items[0].fused);
    assert!(
        r.items[0]
            .fused
            .breakdown
            .iter()
            .any(|b| b.signal.name() == "semantic")
    );
    // Another dimension is refused with a reason naming both, for events and queries.
    let mut bad = say("s", Role::User, "epsilon");
    bad.embedding = Some(vec![1.0; 5]);
    let err = m.observe(bad).unwrap_err().to_string();
    assert!(
        err.contains("5 dimensions") && err.contains("8-dimensional"),
        "{err}"
    );
    let short = vec![1.0f32; 3];
    rq.embedding = Some(&short);
    let err = m.recall_with(&p, &rq).unwrap_err();
    assert_eq!(err.reason(), hypermem::Reason::InvalidArgument, "{err}");
    let err = err.to_string();
    assert!(err.contains("3 dimensions"), "{err}");
    let mut nan = say("s", Role::User, "zeta");
    nan.embedding = Some(vec![f32::NAN; 8]);
    assert!(
        m.observe(nan)
            .unwrap_err()
            .to_string()
            .contains("embedding")
    );
    assert_eq!(
        m.ledger().count(&p).unwrap(),
        4,
        "refused events are not stored"
    );
    // The vectors live in the ledger: a reopened memory still has them.
    drop(m);
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    rq.embedding = Some(&emb);
    assert_eq!(m.recall_with(&p, &rq).unwrap().items[0].event.id, ids[2]);
}

/// Writes a static model (WordPiece vocabulary, a 3-d table) the way model2vec lays it out.
fn tiny_model(dir: &std::path::Path) {
    let vocab = ["[PAD]", "[UNK]", "puppy", "dog", "tax", "filing", "cat"];
    let entries: Vec<String> = vocab
        .iter()
        .enumerate()
        .map(|(i, t)| format!("\"{t}\": {i}"))
        .collect();
    let tokenizer = format!(
        r###"{{"normalizer": {{"type": "BertNormalizer", "lowercase": true}},
            "pre_tokenizer": {{"type": "BertPreTokenizer"}},
            "model": {{"type": "WordPiece", "unk_token": "[UNK]",
                       "continuing_subword_prefix": "##", "vocab": {{{}}}}}}}"###,
        entries.join(", ")
    );
    std::fs::write(dir.join("tokenizer.json"), tokenizer).unwrap();
    let rows: [[f32; 3]; 7] = [
        [0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0],
        [1.0, 0.1, 0.0],
        [0.9, 0.2, 0.0],
        [0.0, 1.0, 0.1],
        [0.1, 0.9, 0.0],
        [0.0, 0.1, 1.0],
    ];
    let data: Vec<u8> = rows
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let header = format!(
        r#"{{"embeddings":{{"dtype":"F32","shape":[7,3],"data_offsets":[0,{}]}}}}"#,
        data.len()
    );
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&data);
    std::fs::write(dir.join("model.safetensors"), file).unwrap();
}

#[test]
fn the_static_model_makes_recall_semantic_and_a_bad_model_is_named() {
    let models = tempfile::tempdir().unwrap();
    let mut p = profile();
    p.semantic.model = Some(models.path().join("missing"));
    let dir = tempfile::tempdir().unwrap();
    let err = Memory::open(&p, Some(dir.path())).unwrap_err().to_string();
    assert!(
        err.contains("missing") && err.contains("not a directory"),
        "{err}"
    );
    let broken = models.path().join("broken");
    std::fs::create_dir(&broken).unwrap();
    std::fs::write(broken.join("tokenizer.json"), "{").unwrap();
    p.semantic.model = Some(broken);
    let err = Memory::open(&p, Some(dir.path())).unwrap_err();
    assert_eq!(err.reason(), hypermem::Reason::ModelError, "{err}");
    let err = err.to_string();
    assert!(err.contains("tokenizer.json"), "{err}");

    let good = models.path().join("tiny");
    std::fs::create_dir(&good).unwrap();
    tiny_model(&good);
    p.semantic.model = Some(good);
    let m = Memory::open(&p, Some(dir.path())).unwrap();
    let dog = m.observe(say("s", Role::User, "my dog")).unwrap();
    m.observe(say("s", Role::User, "tax filing")).unwrap();
    m.observe(say("s", Role::User, "the cat")).unwrap();
    let hits = m.recall(&project("p"), "puppy", 3).unwrap();
    assert_eq!(
        hits[0].event.id, dog,
        "no shared word: only the model relates them"
    );
    assert!(
        hits[0]
            .fused
            .breakdown
            .iter()
            .any(|b| b.signal.name() == "semantic")
    );
}

/// A sentence-transformers directory in a build without the `sentence` feature is refused
/// at open, naming its `config.json` and the feature that runs it.
#[cfg(not(feature = "sentence"))]
#[test]
fn a_sentence_model_without_the_feature_is_refused_by_name() {
    let models = tempfile::tempdir().unwrap();
    std::fs::write(
        models.path().join("config.json"),
        r#"{"model_type": "bert"}"#,
    )
    .unwrap();
    let mut p = profile();
    p.semantic.model = Some(models.path().to_owned());
    let dir = tempfile::tempdir().unwrap();
    let err = Memory::open(&p, Some(dir.path())).unwrap_err();
    assert_eq!(err.reason(), hypermem::Reason::ModelError);
    let text = err.to_string();
    assert!(
        text.contains("config.json") && text.contains("--features sentence"),
        "{text}"
    );
}

#[test]
fn a_pack_carries_the_beliefs_its_recalled_evidence_supports() {
    use hypermem::governance::{Op, Ownership, Plan};
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    background(&m);
    let p = project("p");
    let e = m
        .observe(say("s1", Role::User, "I live in Lisbon these days."))
        .unwrap();
    m.ledger()
        .apply_plan(&Plan::single(
            p.clone(),
            "k1",
            Op::Assert {
                key: "user.home_city".into(),
                statement: "Lisbon".into(),
                ownership: Ownership::User,
                agent: None,
                confidence: 1.0,
                evidence: vec![e],
            },
        ))
        .unwrap();
    let pack = m
        .recall_pack(&p, "where does the user live", None, 4000, None)
        .unwrap();
    let (line, text) = &pack.items[0];
    assert_eq!(line.slot, "belief");
    assert!(text.contains("Lisbon"), "{text}");
    assert!(line.reason.contains("evidence"), "{}", line.reason);
    let direct = pack
        .items
        .iter()
        .find(|(l, _)| l.id == e.0 && l.slot == "direct")
        .expect("the evidence itself");
    assert_eq!(direct.0.role, Some(Role::User));
    let anchor = direct.0.anchor.as_ref().unwrap();
    assert_eq!((anchor.event, anchor.session.as_deref()), (e.0, Some("s1")));
}

#[test]
fn a_note_longer_than_the_budget_is_packed_as_its_best_excerpt() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    let long = format!(
        "{} The kiln schedule: bisque at 900 degrees, glaze firing at 1240 degrees. {}",
        "Notes on the studio move and the new shelving. ".repeat(80),
        "The van is booked for Saturday morning. ".repeat(80)
    );
    let id = m.observe(say("s1", Role::User, &long)).unwrap();
    let short = m
        .observe(say("s2", Role::User, "The kiln needs a new thermocouple."))
        .unwrap();
    let pack = m
        .recall_pack(&p, "kiln glaze firing schedule", None, 1_000, None)
        .unwrap();
    assert!(pack.used <= pack.budget, "{} of {}", pack.used, pack.budget);
    let (line, text) = pack
        .items
        .iter()
        .find(|(l, _)| l.id == id.0)
        .expect("the long note, in part");
    let (start, end) = line.excerpt.expect("an excerpt");
    assert!(text.contains("glaze firing at 1240 degrees"), "{text}");
    assert!(text.contains(&long[start..end]));
    assert!(
        pack.items
            .iter()
            .any(|(l, _)| l.id == short.0 && l.excerpt.is_none())
    );
    // With room for the whole note, the whole note.
    let pack = m
        .recall_pack(&p, "kiln glaze firing schedule", None, 100_000, None)
        .unwrap();
    let (line, text) = pack.items.iter().find(|(l, _)| l.id == id.0).unwrap();
    assert_eq!((line.excerpt, text.as_str()), (None, long.as_str()));
}

#[test]
fn neighbour_smoothing_reads_the_same_conversation_after_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let p = project("p");
    let query = "which harbour town for the sailing trip";
    let ranked = |m: &Memory| -> Vec<(u64, Vec<&'static str>)> {
        m.recall(&p, query, 6)
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h.event.id.0,
                    h.fused.breakdown.iter().map(|b| b.signal.name()).collect(),
                )
            })
            .collect()
    };
    let before = {
        let m = Memory::open(&profile(), Some(dir.path())).unwrap();
        background(&m);
        m.observe(say(
            "trip",
            Role::User,
            "Where should we start the sailing trip?",
        ))
        .unwrap();
        m.observe(say(
            "trip",
            Role::Assistant,
            "Start from the harbour town of Kas.",
        ))
        .unwrap();
        m.observe(say("trip", Role::User, "Great, book two nights there."))
            .unwrap();
        ranked(&m)
    };
    assert!(
        before
            .iter()
            .any(|(_, b)| b.contains(&"bm25") && b.len() > 1),
        "{before:?}"
    );
    assert!(
        dir.path().join("lexical").join("p.lex").exists(),
        "saved on close"
    );
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    assert_eq!(
        ranked(&m),
        before,
        "the saved chronology places every turn as before"
    );
}

/// The reply to a turn that only asks borrows from the turn the question was about, and
/// the saved lexical index keeps which turns only ask.
#[test]
fn the_reply_to_a_question_borrows_from_what_it_asked_about_after_a_reopen_too() {
    let dir = tempfile::tempdir().unwrap();
    let p = project("p");
    let query = "what happened at the lakeside cabin";
    let lines = [
        (
            "Ann",
            "We spent the long weekend at the lakeside cabin near the pines.",
        ),
        ("Ben", "Oh nice! What did you do there?"),
        (
            "Ann",
            "Kayaking at sunrise and a campfire every single night.",
        ),
        ("Ben", "Sounds relaxing."),
    ];
    // The id of the turn the reply borrowed from, and the ranking.
    let lent = |m: &Memory, reply: u64| -> (Option<u64>, Vec<u64>) {
        let items = m.recall(&p, query, 6).unwrap();
        let lender = items
            .iter()
            .find(|i| i.event.id.0 == reply)
            .and_then(|i| {
                i.fused
                    .breakdown
                    .iter()
                    .find(|b| b.signal.name() == "neighbour")
            })
            .and_then(hypermem::recall::Part::lender);
        (lender, items.iter().map(|i| i.event.id.0).collect())
    };
    let (ids, before) = {
        let m = Memory::open(&profile(), Some(dir.path())).unwrap();
        background(&m);
        let ids: Vec<u64> = lines
            .iter()
            .map(|(speaker, text)| {
                m.observe(say("cabin", Role::User, text).speaker(*speaker))
                    .unwrap()
                    .0
            })
            .collect();
        let before = lent(&m, ids[2]);
        (ids, before)
    };
    assert_eq!(before.0, Some(ids[0]), "{before:?}");
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    assert_eq!(lent(&m, ids[2]), before, "the saved index keeps the bridge");
    drop(m);
    let mut off = profile();
    off.recall.question_bridge = false;
    let m = Memory::open(&off, Some(dir.path())).unwrap();
    assert_ne!(lent(&m, ids[2]).0, Some(ids[0]), "switched off");
}

#[test]
fn a_speaker_named_in_the_question_counts_even_when_they_said_half_the_turns() {
    for reply_context in [false, true] {
        speaker_named_in_the_question(reply_context);
    }
}

fn speaker_named_in_the_question(reply_context: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut profile = profile();
    profile.recall.reply_context = reply_context;
    let m = Memory::open(&profile, Some(dir.path())).unwrap();
    let lines = [
        ("Marisol", "Morning! Coffee first, then emails."),
        ("Teodor", "Same here, the kettle is already on."),
        (
            "Marisol",
            "I did the ridge trail on Sunday, long but worth the hike.",
        ),
        ("Teodor", "The ridge hike is my favourite hike of all."),
        ("Marisol", "Did you see the match last night?"),
        ("Teodor", "Only the second half, it was a great finish."),
        ("Marisol", "My sister visits next weekend."),
        ("Teodor", "Nice, tell her I said hello."),
    ];
    let mut ids = Vec::new();
    for (speaker, text) in lines {
        ids.push(
            m.observe(say("chat", Role::User, text).speaker(speaker))
                .unwrap(),
        );
    }
    let hits = m
        .recall(&project("p"), "which hike did Marisol do", 3)
        .unwrap();
    // "hike" is in a quarter of the turns here, so the name decides: Marisol's turns come
    // first (her name is a field: it scores each of her turns alike, whatever its
    // length), and her account of the hike is among the first two.
    let said = |h: &hypermem::RecallItem| h.event.speaker.as_deref() == Some("Marisol");
    assert!(
        all_of(hits.iter().take(2), said) && hits.iter().take(2).any(|h| h.event.id == ids[2]),
        "reply context {reply_context}: {:?}",
        hits.iter().map(|h| &h.event.content).collect::<Vec<_>>()
    );
    let hits = m
        .recall(&project("p"), "what is Teodor's favourite hike", 3)
        .unwrap();
    assert_eq!(hits[0].event.id, ids[3], "{:?}", hits[0].event.content);
}

/// What a person the question names said comes before what was said to them (the
/// telling component off: the turn said to Calvin asks).
fn testimony(speaker_weight: f64) -> (Vec<hypermem::ledger::EventId>, Vec<RecallItem>) {
    recall_over(
        |r| {
            r.speaker_weight = speaker_weight;
            r.tells_weight = 0.0;
        },
        false,
        &[
            (
                Some("Calvin"),
                "Long drives along the coast help me unwind after work.",
            ),
            (
                Some("Dave"),
                "Thanks, Calvin! Do long drives help you unwind after work too?",
            ),
            (Some("Calvin"), "Sometimes, yes."),
            (Some("Dave"), "I mostly play guitar in the evening."),
        ],
        "How does Calvin unwind after work?",
        4,
    )
}

#[test]
fn a_question_naming_a_speaker_puts_their_own_words_first() {
    // Without the component, the turn that names Calvin twice comes first ...
    let (ids, items) = testimony(0.0);
    assert_eq!(items[0].event.id, ids[1], "{:?}", items[0].event.content);
    // ... with it, Calvin's own account.
    let (ids, items) = testimony(profile().recall.speaker_weight);
    assert_eq!(items[0].event.id, ids[0], "{:?}", items[0].event.content);
    let by = |i: &RecallItem| {
        i.fused
            .breakdown
            .iter()
            .any(|b| b.signal.name() == "speaker")
    };
    assert!(by(&items[0]), "{:?}", items[0].fused);
    assert!(
        all_of(
            items
                .iter()
                .filter(|i| i.event.speaker.as_deref() == Some("Dave")),
            |i| !by(i)
        ),
        "only the named speaker's turns"
    );
}

#[test]
fn a_host_that_defers_feedback_applies_it_and_a_lagging_one_loses_none() {
    use hypermem::{DEFERRED_FEEDBACK_LIMIT, FEEDBACK_BATCH};
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    background(&m);
    let p = project("p");
    let gap = |m: &Memory| {
        m.recall_with(&p, &RecallQuery::new("quantum chromodynamics lattice", 5))
            .unwrap();
    };
    // Inline: a recall that fills the batch applies it.
    for _ in 0..FEEDBACK_BATCH {
        gap(&m);
    }
    assert!(!m.feedback_due());
    // Deferred: recalls only buffer, until the host applies the batch...
    m.defer_feedback();
    for _ in 0..FEEDBACK_BATCH {
        gap(&m);
    }
    assert!(m.feedback_due(), "a deferred batch waits for the host");
    m.flush_feedback().unwrap();
    assert!(!m.feedback_due());
    // ...or a host that falls behind has it applied by the recall that reaches the limit.
    for _ in 0..DEFERRED_FEEDBACK_LIMIT {
        gap(&m);
    }
    assert!(!m.feedback_due(), "applied at the limit");
    let gaps = m.knowledge_gaps(&p, 10).unwrap();
    let asked = gaps
        .iter()
        .find(|g| g.description.contains("quantum chromodynamics"))
        .unwrap_or_else(|| panic!("{gaps:?}"));
    assert_eq!(
        asked.count,
        (2 * FEEDBACK_BATCH + DEFERRED_FEEDBACK_LIMIT) as u64,
        "every recall counted once"
    );
}

/// A seeded project of made-up topics over a shared filler vocabulary, and two kinds of
/// questions in the same frame: about subjects it holds, and about subjects it never saw.
/// The first must not be knowledge gaps (≥ 95 %), the second must be (≥ 90 %).
#[test]
fn on_a_seeded_synthetic_set_unstored_subjects_are_gaps_and_stored_ones_are_not() {
    use hypermem::cognition::GapKind;
    use hypermem::hdv::SeededRng;
    use std::collections::HashSet;

    // Made-up subject words: two consonant-vowel-consonant syllables (1,445 syllables, so
    // two subjects rarely share more than a letter pair, as two real ones rarely do).
    const CONSONANTS: &[u8] = b"bcdfghjklmnprstvz";
    const VOWELS: &[u8] = b"aeiou";
    // Words every kind of sentence shares (each in a large share of the events).
    const FILLER: &[&str] = &[
        "today", "really", "think", "remember", "update", "plan", "maybe", "again",
    ];
    let mut rng = SeededRng::new(41);
    let mut used = HashSet::new();
    let mut word = |rng: &mut SeededRng| loop {
        let mut w = String::new();
        for _ in 0..2 {
            for letters in [CONSONANTS, VOWELS, CONSONANTS] {
                w.push(char::from(
                    letters[rng.below(letters.len() as u64) as usize],
                ));
            }
        }
        if used.insert(w.clone()) {
            return w;
        }
    };
    let pick = |rng: &mut SeededRng, xs: &[String]| xs[rng.below(xs.len() as u64) as usize].clone();
    let filler = |rng: &mut SeededRng| FILLER[rng.below(FILLER.len() as u64) as usize];

    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(
        &Profile::load(Profile::bundled_path(ProfileKind::Lite)).unwrap(),
        Some(dir.path()),
    )
    .unwrap();
    let p = project("p");
    let topics: Vec<Vec<String>> = (0..12)
        .map(|_| (0..4).map(|_| word(&mut rng)).collect())
        .collect();
    let mut events = Vec::new();
    for (t, subjects) in topics.iter().enumerate() {
        for i in 0..15 {
            let text = format!(
                "I {} the {} {} needs another {} {} {}, {} {}.",
                filler(&mut rng),
                pick(&mut rng, subjects),
                pick(&mut rng, subjects),
                filler(&mut rng),
                filler(&mut rng),
                rng.below(1000),
                filler(&mut rng),
                filler(&mut rng),
            );
            let role = if i % 3 == 2 {
                Role::Assistant
            } else {
                Role::User
            };
            let session = format!("topic-{t}");
            events.push(
                NewEvent::new(p.clone(), role, EventKind::Message, text)
                    .thread(session.as_str())
                    .session(session.as_str()),
            );
        }
    }
    // Topics interleave as conversations do.
    for i in (1..events.len()).rev() {
        events.swap(i, rng.below(i as u64 + 1) as usize);
    }
    m.observe_batch(&events).unwrap();

    let question = |rng: &mut SeededRng, a: &str, b: &str| {
        format!("what did we {} about the {a} {b}", filler(rng))
    };
    let stored: Vec<String> = (0..60)
        .map(|i| {
            let subjects = &topics[i % topics.len()];
            let (a, b) = (pick(&mut rng, subjects), pick(&mut rng, subjects));
            format!("{} (q{i})", question(&mut rng, &a, &b))
        })
        .collect();
    let unstored: Vec<String> = (0..60)
        .map(|i| {
            let (a, b) = (word(&mut rng), word(&mut rng));
            format!("{} (q{})", question(&mut rng, &a, &b), 100 + i)
        })
        .collect();
    for q in stored.iter().chain(&unstored) {
        m.recall(&p, q, 5).unwrap();
    }
    m.flush_feedback().unwrap();
    let gaps: Vec<String> = m
        .knowledge_gaps(&p, 1000)
        .unwrap()
        .into_iter()
        .filter(|g| g.kind == GapKind::WeakRecall)
        .map(|g| g.description)
        .collect();
    let is_gap = |q: &String| gaps.iter().any(|g| g.contains(q.as_str()));
    let flagged = unstored.iter().filter(|q| is_gap(q)).count();
    let kept = stored.iter().filter(|q| !is_gap(q)).count();
    eprintln!(
        "synthetic gaps: unstored flagged {flagged}/60, stored kept {kept}/60 ({} gaps listed)",
        gaps.len()
    );
    assert!(
        flagged >= 54,
        "never-stored subjects flagged {flagged} / 60"
    );
    assert!(kept >= 57, "stored subjects kept {kept} / 60");
}

/// A question worded differently from the fact that answers it ("allergy" against
/// "allergic") is not a knowledge gap; one about a subject never stored is.
#[test]
fn a_fact_in_other_words_is_no_gap_and_a_subject_never_stored_is() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(
        &Profile::load(Profile::bundled_path(ProfileKind::Lite)).unwrap(),
        Some(dir.path()),
    )
    .unwrap();
    for t in [
        "The user is allergic to peanuts.",
        "Database backups run nightly at 2am.",
        "Data retention policy: logs are kept 30 days.",
        "The user prefers window seats on flights.",
        "Standup is at 9 AM every weekday.",
        "The user's dog is named Biscuit.",
        "Migrations never run on Fridays.",
        "The office wifi password is Maple-42.",
        "The user lives in Lisbon.",
        "Quarterly report is due on March 31.",
    ] {
        m.observe(say("s", Role::User, t)).unwrap();
    }
    let p = project("p");
    let hits = m
        .recall(&p, "what food allergy does the user have", 3)
        .unwrap();
    assert!(hits[0].event.content.contains("peanuts"));
    m.recall(&p, "which seat does the user like", 3).unwrap();
    m.recall(&p, "what is the user's favourite opera", 3)
        .unwrap();
    m.flush_feedback().unwrap();
    let gaps: Vec<String> = m
        .knowledge_gaps(&p, 100)
        .unwrap()
        .into_iter()
        .map(|g| g.description)
        .collect();
    assert!(!gaps.iter().any(|g| g.contains("allergy")), "{gaps:?}");
    assert!(!gaps.iter().any(|g| g.contains("seat")), "{gaps:?}");
    assert!(gaps.iter().any(|g| g.contains("opera")), "{gaps:?}");
}

#[test]
fn every_recall_reports_the_turn_regime_its_project_got() {
    use hypermem::config::TurnRegime;
    use hypermem::index::lexical::TurnLength;
    let query = RecallQuery::new("how do I water succulents", 5);
    let mut reports = Vec::new();
    for regime in [TurnRegime::Auto, TurnRegime::Short, TurnRegime::Long] {
        let dir = tempfile::tempdir().unwrap();
        let mut p = profile();
        p.recall.turn_regime = regime;
        let m = Memory::open(&p, Some(dir.path())).unwrap();
        background(&m);
        let r = m.recall_with(&project("p"), &query).unwrap();
        assert!(!r.items.is_empty());
        assert_eq!(r.turn_regime.setting, regime);
        assert!(
            r.turn_regime.average_tokens > 0.0 && r.turn_regime.average_tokens < 60.0,
            "{:?}",
            r.turn_regime
        );
        // It is in the JSON every surface returns.
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["turn_regime"]["setting"], regime.name());
        reports.push(r.turn_regime.reads_as);
    }
    // Short chat turns read as short unless the profile fixes the long rules.
    assert_eq!(
        reports,
        [TurnLength::Short, TurnLength::Short, TurnLength::Long]
    );
}

#[test]
fn a_query_past_the_limits_is_refused_whole_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    m.observe(say("chat", Role::User, "the kiln fires at 1200 degrees"))
        .unwrap();
    let words = |n: usize| -> String {
        (0..n)
            .map(|i| format!("kiln{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    // At the limit of distinct words, and long by repetition: answered.
    let at = format!(
        "{} {}",
        words(hypermem::MAX_QUERY_TERMS - 1),
        "kiln ".repeat(5_000)
    );
    assert!(at.chars().count() <= hypermem::MAX_QUERY_CHARS);
    assert!(!m.recall(&p, &at, 3).unwrap().is_empty());
    // One distinct word more, or one character more than the limit: refused, named.
    let over = words(hypermem::MAX_QUERY_TERMS + 1);
    let long = "a".repeat(hypermem::MAX_QUERY_CHARS + 1);
    for q in [over, long] {
        let e = m.recall(&p, &q, 3).unwrap_err();
        assert_eq!(e.reason(), hypermem::base::Reason::QueryTooLong, "{e}");
    }
}
