//! The properties recall promises, checked on conversations of our own, through `Memory`
//! and through the binary: a verbatim match is first, recall does not change later answers,
//! supersession stays within one subject and never overrides a time the question names,
//! the floor and the gap decision agree from the first event, one text takes one slot, and
//! a quoted phrase cannot silently empty an answer.

mod common;
use common::all_of;

use std::path::Path;
use std::process::Command;

use common::project;
use hypermem::ledger::{EventKind, NewEvent, Role};
use hypermem::recall::Slot;
use hypermem::{Memory, RecallQuery};

use common::say;

fn profile() -> hypermem::Profile {
    common::small_profile()
}

/// Three sessions of everyday conversation (about 40 turns).
const CONVERSATION: &[(&str, &str)] = &[
    ("a", "Can you suggest a recipe for a quick weeknight pasta?"),
    (
        "a",
        "Try garlic, olive oil, chili flakes and parsley over spaghetti.",
    ),
    ("a", "Do I need to salt the water?"),
    (
        "a",
        "Yes, generously: it seasons the pasta from the inside.",
    ),
    ("a", "What wine goes with it?"),
    ("a", "A crisp white such as a Vermentino works well."),
    ("a", "Great, I will pick one up on the way home."),
    ("a", "Enjoy your dinner!"),
    ("b", "What is a good stretch for a stiff lower back?"),
    (
        "b",
        "A gentle knee-to-chest stretch, held for thirty seconds, usually helps.",
    ),
    ("b", "How often should I do it?"),
    (
        "b",
        "Twice a day, morning and evening, for a couple of weeks.",
    ),
    ("b", "My physiotherapist also suggested swimming."),
    (
        "b",
        "Swimming is low impact and strengthens the muscles around the spine.",
    ),
    ("b", "The pool near the office opens at seven."),
    ("b", "An early swim before work is a good habit to build."),
    ("c", "Recommend a novel for a long train ride."),
    (
        "c",
        "A long mystery novel with short chapters suits a train ride.",
    ),
    ("c", "I finished the last one in two days."),
    (
        "c",
        "Then try a trilogy, so the story lasts the whole trip.",
    ),
    ("c", "The train leaves from the central station at nine."),
    (
        "c",
        "Bring snacks; the dining car is often closed on that line.",
    ),
    (
        "c",
        "My order ORD-88213 with the new headphones shipped today.",
    ),
    (
        "c",
        "Noise-cancelling headphones make a long ride much calmer.",
    ),
    ("c", "Order ORD-88214 was the charger, it comes next week."),
    ("c", "A spare charger is handy on long trips."),
];

/// A memory holding [`CONVERSATION`] (alternating user and assistant), in `dir`.
fn conversation(dir: &Path) -> Memory {
    let m = Memory::open(&profile(), Some(dir)).unwrap();
    for (i, (session, text)) in CONVERSATION.iter().enumerate() {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        m.observe(say(session, role, text)).unwrap();
    }
    m
}

fn first(m: &Memory, query: &str) -> String {
    m.recall(&project("p"), query, 10).unwrap()[0]
        .event
        .content
        .clone()
}

#[test]
fn a_verbatim_sentence_and_a_rare_token_come_first() {
    let dir = tempfile::tempdir().unwrap();
    let m = conversation(dir.path());
    for (_, text) in CONVERSATION {
        assert_eq!(first(&m, text), *text, "the query repeats it word for word");
    }
    assert!(first(&m, "ORD-88213").contains("ORD-88213"));
    assert!(first(&m, "ORD-88214").contains("ORD-88214"));
    // A turn with no word (only the HDC vector can find it) in a chat of short turns,
    // where the query's n-grams weigh more than the stored turns' do.
    m.observe(say("c", Role::User, "🎉🎉🎉")).unwrap();
    assert_eq!(first(&m, "🎉🎉🎉"), "🎉🎉🎉");
}

/// A wordless turn is found again by repeating it: in a project too small to calibrate
/// its floor (the prior judges), then in the same project grown into a chat of short
/// turns (a calibrated floor, the query's n-grams weighing more than the turns'), at the
/// test dimension and at the lite profile's own.
#[test]
fn a_wordless_turn_is_found_again_in_a_small_and_in_a_grown_project() {
    let lite =
        hypermem::Profile::load(hypermem::Profile::bundled_path(hypermem::ProfileKind::Lite))
            .unwrap();
    for profile in [profile(), lite] {
        let dir = tempfile::tempdir().unwrap();
        let m = Memory::open(&profile, Some(dir.path())).unwrap();
        m.observe(say("a", Role::User, "deploy the blue build"))
            .unwrap();
        m.observe(say("a", Role::User, "🎉🎉🎉")).unwrap();
        assert_eq!(first(&m, "🎉🎉🎉"), "🎉🎉🎉");
        for (session, text) in CONVERSATION {
            m.observe(say(session, Role::User, text)).unwrap();
        }
        assert_eq!(first(&m, "🎉🎉🎉"), "🎉🎉🎉");
    }
}

#[test]
fn recall_does_not_change_later_answers_nor_depend_on_the_data_dir() {
    let queries = [
        "pasta recipe",
        "what wine goes with dinner",
        "stretch for my back",
        "when does the pool open",
        "a book for the train",
        "headphones order",
        "charger",
        "how often should I stretch",
        "swimming",
        "snacks for the trip",
    ];
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (m, other) = (conversation(a.path()), conversation(b.path()));
    let run = |m: &Memory| -> Vec<Vec<(u64, u64)>> {
        queries
            .iter()
            .map(|q| {
                let r = m
                    .recall_with(&project("p"), &RecallQuery::new(q, 10))
                    .unwrap();
                r.items
                    .iter()
                    .map(|i| (i.event.id.0, i.fused.score.to_bits()))
                    .collect()
            })
            .collect()
    };
    let once = run(&m);
    m.flush_feedback().unwrap();
    for _ in 0..3 {
        assert_eq!(run(&m), once, "identical ids and scores, pass after pass");
    }
    assert_eq!(run(&other), once, "another data dir fed the same events");
    drop(m);
    let reopened = Memory::open(&profile(), Some(a.path())).unwrap();
    assert_eq!(run(&reopened), once, "another process");
}

#[test]
fn a_later_turn_that_gives_a_value_by_reference_continues_what_it_refers_to() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    let said = |text: &str| m.observe(say("trip", Role::User, text)).unwrap();
    let fee = said("The ferry crossing for the van is £140 each way.");
    said("I'll pack the tent and the camping stove tonight.");
    // Names neither the ferry nor the van: found only by following the conversation.
    let later = said("just rang them, they've put it up to £165");
    let hits = m.recall(&p, "how much is the ferry crossing", 5).unwrap();
    assert_eq!(hits[0].event.id, later, "{hits:#?}");
    assert_eq!(hits[0].supersedes, Some(fee));
    assert_eq!(hits[1].event.id, fee);
    assert!(
        hits[0]
            .fused
            .breakdown
            .iter()
            .any(|b| b.signal == hypermem::recall::Signal::Continues),
        "{:#?}",
        hits[0]
    );
    for pair in hits.windows(2) {
        assert!(pair[0].fused.score >= pair[1].fused.score, "{hits:#?}");
    }
    for h in &hits {
        let parts: f64 = h.fused.breakdown.iter().map(|b| b.score).sum();
        assert!((parts - h.fused.score).abs() < 1e-9, "{h:#?}");
    }
    // A turn about someone else in between ends the thread: "she" is not the ferry.
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let said = |text: &str| m.observe(say("trip", Role::User, text)).unwrap();
    let fee = said("The ferry crossing for the van is £140 each way.");
    said("Did Harriet book her own crossing?");
    said("yes, she paid £90 for it");
    let hits = m.recall(&p, "how much is the ferry crossing", 5).unwrap();
    assert_eq!(hits[0].event.id, fee, "{hits:#?}");
    assert!(all_of(hits.iter(), |h| h.supersedes.is_none()));
}

#[test]
fn a_newer_value_of_another_entity_does_not_supersede_and_a_named_time_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let m = conversation(dir.path());
    let p = project("p");
    let garage = m
        .observe(say("d", Role::User, "The garage code is 1180."))
        .unwrap();
    m.observe(say("d", Role::Assistant, "Noted.")).unwrap();
    m.observe(say("e", Role::User, "The back-gate code is now 5521."))
        .unwrap();
    let hits = m.recall(&p, "what is the garage code", 5).unwrap();
    assert_eq!(hits[0].event.id, garage);
    assert!(all_of(hits.iter(), |h| h.supersedes.is_none()));
    // The same subject, changed: the new value comes first and says what it revises.
    let standup = m
        .observe(say(
            "f",
            Role::User,
            "The stand-up is at 9:15 every morning.",
        ))
        .unwrap();
    let moved = m
        .observe(say(
            "g",
            Role::User,
            "Sofia moved the stand-up; from now on it is at 10:30.",
        ))
        .unwrap();
    let hits = m.recall(&p, "what time is the stand-up", 5).unwrap();
    assert_eq!(hits[0].event.id, moved);
    assert_eq!(hits[0].supersedes, Some(standup));
    // Displayed scores never rise down the list, and each one's parts add up to it: the
    // revision moved up is shown at least as high as what it revises, by a `placed` part.
    for pair in hits.windows(2) {
        assert!(pair[0].fused.score >= pair[1].fused.score, "{hits:#?}");
    }
    for h in &hits {
        let parts: f64 = h.fused.breakdown.iter().map(|b| b.score).sum();
        assert!((parts - h.fused.score).abs() < 1e-9, "{h:#?}");
    }
    assert!(
        hits[0]
            .fused
            .breakdown
            .iter()
            .any(|b| b.signal == hypermem::recall::Signal::Placed),
        "{:#?}",
        hits[0]
    );
    // Another time for the same appointment on the same day, said without a cue, revises
    // the time asked for; another appointment that day does not.
    let booked = m
        .observe(say(
            "j",
            Role::User,
            "I booked the car inspection for Thursday at 9 AM at the garage on Elm Road.",
        ))
        .unwrap();
    m.observe(say(
        "k",
        Role::User,
        "My piano lesson is at 11 AM on Thursday this week.",
    ))
    .unwrap();
    let inspection = || {
        m.recall(&p, "what time is the car inspection on Thursday", 5)
            .unwrap()
    };
    let hits = inspection();
    assert_eq!(hits[0].event.id, booked);
    assert!(all_of(hits.iter(), |h| h.supersedes.is_none()));
    let later = m
        .observe(say(
            "l",
            Role::User,
            "They can only take me at 2 PM on Thursday for the car inspection, so I'll go then.",
        ))
        .unwrap();
    let hits = inspection();
    assert_eq!(hits[0].event.id, later);
    assert_eq!(hits[0].supersedes, Some(booked));
    // A time the question names selects the value valid then.
    let jan = hypermem::clock::parse_when("2025-01-10").unwrap();
    let mar = hypermem::clock::parse_when("2025-03-10").unwrap();
    let january = m
        .observe(say("h", Role::User, "The rent is 1,200 dollars a month.").at(jan))
        .unwrap();
    let march = m
        .observe(
            say(
                "i",
                Role::User,
                "The rent was raised to 1,350 dollars a month.",
            )
            .at(mar),
        )
        .unwrap();
    let r = m
        .recall_with(
            &p,
            &RecallQuery::new("what was the rent on January 10, 2025", 5),
        )
        .unwrap();
    assert!(!r.time_hint_ignored);
    assert_eq!(r.items[0].event.id, january);
    let hits = m.recall(&p, "what is the rent", 5).unwrap();
    assert_eq!(hits[0].event.id, march, "without a time, the newer value");
    // A month, with or without a year, names a time too; the value valid then is the last
    // one stated before its end, whether or not a statement falls inside it.
    for (question, valid) in [
        ("what was the rent in January 2025", january),
        ("what was the rent in February 2025", january),
        ("what was the rent in March 2025", march),
        ("what was the rent in June 2025", march),
    ] {
        let r = m.recall_with(&p, &RecallQuery::new(question, 5)).unwrap();
        assert_eq!(r.items[0].event.id, valid, "{question}");
    }
}

/// A new user's first project: eight short notes in one session, some of them a value and
/// its later update.
#[test]
fn a_small_project_of_notes_answers_questions_about_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    let notes = [
        "The garage code is 1180.",
        "We had pasta for dinner with the neighbours.",
        "The back-gate code is now 5521.",
        "Sofia runs the stand-up at 9:15 every morning.",
        "My rent in January was 1450 dollars.",
        "The rent went up; it is now 1600 dollars.",
        "Sofia moved the stand-up; from now on it is at 10:30.",
        "I ordered a replacement filter, order number ZX-99817.",
    ];
    let ids: Vec<_> = notes
        .iter()
        .map(|t| m.observe(say("s", Role::User, t)).unwrap())
        .collect();
    let top = |q: &str| {
        let r = m.recall_with(&p, &RecallQuery::new(q, 5)).unwrap();
        assert!(!r.items.is_empty(), "{q}: answered by nothing");
        (r.items[0].event.id, r.items[0].supersedes)
    };
    // "time" says how the question asks, and a subject two of eight notes share is not
    // common: neither makes these questions about something never stored.
    for q in [
        "what time is the stand-up?",
        "when is the stand-up?",
        "stand-up time",
    ] {
        let (first, _) = top(q);
        assert!(first == ids[3] || first == ids[6], "{q}");
    }
    // "when" asks for a time of day as well as a date: the moved stand-up revises it.
    assert_eq!(top("when is the stand-up?"), (ids[6], Some(ids[3])));
    // A month the question names picks the statement of that month over a later value.
    assert_eq!(top("what was the rent in January?").0, ids[4]);
    assert_eq!(top("how much is the rent now?").0, ids[5]);
    let r = m
        .recall_with(&p, &RecallQuery::new("what is the capital of Mongolia?", 5))
        .unwrap();
    assert!(r.items.is_empty(), "nothing here is about Mongolia");
}

/// A chat of short turns says a query's word in another inflection: it is found, and a
/// word that only looks like a stem ("planes" / "plan") is not taken for one.
#[test]
fn a_short_note_in_another_inflection_of_the_query_word_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    let mut ids = Vec::new();
    for t in [
        "I prefer window seats on flights.",
        "I switched my phone plan to the 20 GB one.",
        "The kids' school starts at 8:10.",
        "The spare key is under the blue flower pot.",
        "My blood type is O negative.",
        "Grandma's lasagna uses nutmeg in the sauce.",
        "The book club meets on the first Thursday.",
        "We deploy the billing service every Tuesday.",
        "I paid 1,240 euros for the new laptop.",
        "Lena's birthday is on June 3.",
        "Pixel chewed my running shoes this morning.",
        "We walked the dog by the river.",
    ] {
        ids.push(m.observe(say("s", Role::User, t)).unwrap());
    }
    // A query word the project never holds as written, only in another form, beside one
    // it holds: both are matched.
    let r = m
        .recall_with(&p, &RecallQuery::new("what did the dog chew?", 5))
        .unwrap();
    let chewed = r.items.iter().position(|i| i.event.id == ids[10]);
    assert!(
        chewed.is_some_and(|at| at < 2
            && r.items[at]
                .fused
                .breakdown
                .iter()
                .any(|b| b.signal == hypermem::recall::Signal::Bm25)),
        "{:?}",
        r.items.iter().map(|i| &i.event.content).collect::<Vec<_>>()
    );
    let r = m
        .recall_with(&p, &RecallQuery::new("which seat do I want on planes?", 5))
        .unwrap();
    assert_eq!(r.items[0].event.id, ids[0]);
    assert!(
        all_of(r.items.iter(), |i| i.event.id != ids[1]
            || i.fused
                .breakdown
                .iter()
                .all(|b| b.signal != hypermem::recall::Signal::Bm25)),
        "\"planes\" is not a form of \"plan\""
    );
}

/// In a project of three notes no word is rarer than another, so every query word is a
/// term; another inflection of one is a term too, and finds its note.
#[test]
fn a_handful_of_notes_is_found_by_another_inflection() {
    let (_dir, m, ids) = notes(&[
        "Weighed in at 92 kg.",
        "The boiler was serviced in May.",
        "Bins go out on Tuesday night.",
    ]);
    let r = m
        .recall_with(&project("p"), &RecallQuery::new("what did I weigh?", 3))
        .unwrap();
    assert_eq!(r.items.first().map(|i| i.event.id), Some(ids[0]));
}

/// A question none of whose words a project holds as written finds the note that holds
/// one of them in another form of its stem ("allergic" of "Allergy: ..."), where the gap
/// decision already counted that form as holding it; a question whose words are held
/// nowhere in any form stays a gap.
#[test]
fn a_question_held_only_in_another_form_of_its_stem_is_answered() {
    let (_dir, m, ids) = notes(&[
        "Allergy: shellfish.",
        "The boiler was serviced in May.",
        "Bins go out on Tuesday night.",
    ]);
    let ask = |q: &str| {
        m.recall_with(&project("p"), &RecallQuery::new(q, 3))
            .unwrap()
            .items
    };
    let items = ask("what is the user allergic to?");
    assert_eq!(items.first().map(|i| i.event.id), Some(ids[0]));
    assert!(ask("what is the user's blood type?").is_empty());
}

/// "I don't know" from evidence of its own: a question that shares only a speaker's name
/// or a name it gives with what is stored, or asks for an amount or a time that nothing matching it states, is
/// a knowledge gap (nothing returned); the same questions are answered once something
/// states it (a bare number may be the amount), and a question about when something happened is answered by when it was
/// said.
#[test]
fn a_speaker_name_or_a_subject_without_the_value_asked_is_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    let by = |who: &str, text: &str| say("s", Role::User, text).speaker(who);
    for (who, text) in [
        ("Noor", "Booked the big meeting room for the design review."),
        ("Tomas", "The printer on the second floor is jammed again."),
        ("Noor", "Our gym opens early on weekdays."),
        ("Tomas", "I started learning the cello."),
    ] {
        m.observe(by(who, text)).unwrap();
    }
    let gap = |q: &str| {
        let r = m.recall_with(&p, &RecallQuery::new(q, 5)).unwrap();
        r.items.is_empty()
    };
    assert!(
        gap("When is Noor's train home?"),
        "only Noor's name is shared"
    );
    assert!(gap("How much does the gym cost?"), "no amount is stated");
    assert!(
        !gap("When did Tomas start learning the cello?"),
        "when it was said answers"
    );
    assert!(!gap("Which room did Noor book?"));
    // A name the question gives is no more enough than a speaker's: a note naming Tomas's
    // plumber answers nothing of his shoe size; what the note does say it answers, in any
    // form of its words, and a question of names alone is about them.
    let plumber = m
        .observe(by("Noor", "Our plumber is Bastian, he comes on Fridays."))
        .unwrap();
    assert!(
        gap("What is Bastian's shoe size?"),
        "only the name is shared"
    );
    assert!(gap("Welche Schuhgröße hat Bastian?"), "in any language");
    let first = |q: &str| {
        m.recall_with(&p, &RecallQuery::new(q, 5))
            .unwrap()
            .items
            .first()
            .map(|i| i.event.id)
    };
    assert_eq!(first("When does Bastian come?"), Some(plumber));
    assert_eq!(first("Who is Bastian?"), Some(plumber));
    let fee = m.observe(by("Noor", "The gym is 30 a month.")).unwrap();
    let r = m
        .recall_with(&p, &RecallQuery::new("How much does the gym cost?", 5))
        .unwrap();
    assert!(
        r.items.iter().any(|i| i.event.id == fee),
        "the amount is stated now"
    );
}

/// A question about someone is answered by a text that names them, that they said, or
/// that leaves its subject to the notes just before it when one of those opens with them;
/// another owner's note of the same thing answers nothing, nor does a note after one that
/// names them only in passing. A name written one letter off still finds them.
#[test]
fn a_question_about_someone_is_answered_only_by_what_is_about_them() {
    let (_dir, m, ids) = notes(&[
        "My cousin Efua lands on Sunday.",
        "Flight number is BA 2204.",
        "Tunde plays in goal for the under-10s.",
        "Coach is Mr Adeyemi, training on Tuesdays.",
        "My dog turns four in May.",
        "Dinner with Ifeoma on Friday at the Thai place.",
        "Parking permit number is PX-2231.",
        "Ifeoma's sister starts school in September.",
        "She's allergic to peanuts.",
    ]);
    let p = project("p");
    let ask = |q: &str| {
        let r = m.recall_with(&p, &RecallQuery::new(q, 5)).unwrap();
        (r.items.first().map(|i| i.event.id), r.items.len())
    };
    let found = |q: &str| {
        let r = m.recall_with(&p, &RecallQuery::new(q, 5)).unwrap();
        r.items.iter().map(|i| i.event.id).collect::<Vec<_>>()
    };
    assert_eq!(
        ask("Who is Tunde's coach?").0,
        Some(ids[3]),
        "the subject carried over"
    );
    assert_eq!(
        ask("Who is Tundee's coach?").0,
        Some(ids[3]),
        "a name one letter off"
    );
    assert!(
        found("What is Ifeoma's sister allergic to?").contains(&ids[8]),
        "a pronoun after the note that opens with her"
    );
    assert_eq!(ask("How old is Tunde's dog?").1, 0, "the speaker's own dog");
    assert_eq!(
        ask("What is Ifeoma's parking permit number?").1,
        0,
        "named only in passing the note before"
    );
    assert_eq!(
        ask("What is Efua's flight number?").0,
        Some(ids[1]),
        "the subject of the note before names her after a possessive"
    );
    // The same questions without the names are answered.
    assert_eq!(ask("How old is the dog?").0, Some(ids[4]));
    assert_eq!(ask("What is the parking permit number?").0, Some(ids[6]));
}

/// A question that says whose thing it asks about ("the user's", "Radek's") is answered
/// first by that owner's note, not by another owner's note of the same kind of thing that
/// shares more of its words.
#[test]
fn a_question_about_ones_own_thing_is_answered_before_another_owners() {
    let (_dir, m, ids) = notes(&[
        "My gym membership renews in March, £38 a month.",
        "Need to pick up the dry cleaning.",
        "Ingeborg's gym membership is going up to £45 a month, she's annoyed",
    ]);
    let p = project("p");
    let first = |q: &str| {
        let r = m.recall_with(&p, &RecallQuery::new(q, 5)).unwrap();
        r.items.first().map(|i| i.event.id)
    };
    assert_eq!(
        first("How much is the user's gym membership a month?"),
        Some(ids[0])
    );
    assert_eq!(
        first("How much is Ingeborg's gym membership a month?"),
        Some(ids[2])
    );
}

/// A project `p` of one user's `notes`, in a fresh directory, and their event ids.
/// Notes about nothing the held-form tests ask, to give their projects a background.
const UNRELATED: [&str; 4] = [
    "My sister is visiting in June.",
    "I drink my coffee black, no sugar.",
    "The plane to Lisbon leaves at 7:40.",
    "Our landlord fixed the heating on Monday.",
];

fn notes(texts: &[&str]) -> (tempfile::TempDir, Memory, Vec<hypermem::ledger::EventId>) {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let ids = texts
        .iter()
        .map(|t| m.observe(say("s", Role::User, t)).unwrap())
        .collect();
    (dir, m, ids)
}

/// Each query of `cases` finds its note first, matched by its words (a lexical source),
/// and none of them is a knowledge gap, while "zebra", which the project holds in no
/// form, returns nothing and is one. Returns each query's result.
fn found_by_a_held_form(
    m: &Memory,
    cases: &[(&str, hypermem::ledger::EventId)],
) -> Vec<hypermem::RecallResult> {
    let p = project("p");
    let results: Vec<hypermem::RecallResult> = cases
        .iter()
        .map(|&(q, want)| {
            let r = m.recall_with(&p, &RecallQuery::new(q, 3)).unwrap();
            assert_eq!(
                r.items.first().map(|i| i.event.id),
                Some(want),
                "{q}: {:?} {:?}",
                r.items.iter().map(|i| &i.event.content).collect::<Vec<_>>(),
                r.suppressed
            );
            assert!(
                r.items[0]
                    .fused
                    .breakdown
                    .iter()
                    .any(|b| b.signal.is_lexical()),
                "{q}: matched by its words"
            );
            r
        })
        .collect();
    assert!(m.recall(&p, "zebra", 3).unwrap().is_empty());
    m.flush_feedback().unwrap();
    let gaps = format!("{:?}", m.knowledge_gaps(&p, 10).unwrap());
    assert!(gaps.contains("zebra"), "{gaps}");
    for (q, _) in cases {
        assert!(!gaps.contains(q), "{q}: {gaps}");
    }
    results
}

#[test]
fn a_word_held_only_in_a_longer_or_shorter_form_is_found_and_is_not_a_gap() {
    let (_dir, m, ids) = notes(&[
        "I live in Paris, in a small flat near the canal.",
        "My manager is Tom; he runs the platform team.",
        "I drink my coffee black, no sugar.",
        "We use PostgreSQL 14 for the billing service.",
        "I started learning the cello this autumn.",
        "The band played music from the sixties all night.",
        "My sister is visiting in June.",
        "The plane to Lisbon leaves at 7:40.",
    ]);
    let by_bm25 = |r: &hypermem::RecallResult, id| {
        r.items.iter().any(|i| {
            i.event.id == id
                && i.fused
                    .breakdown
                    .iter()
                    .any(|b| b.signal == hypermem::recall::Signal::Bm25)
        })
    };
    // Held only longer ("postgresql"), then only shorter ("music"): found by the word
    // itself, as a term.
    let cases = [
        ("which postgres version", ids[3]),
        ("postgres", ids[3]),
        ("what musical style did the band play", ids[5]),
    ];
    for (r, (q, want)) in found_by_a_held_form(&m, &cases).iter().zip(cases) {
        assert!(by_bm25(r, want), "{q}: matched by its word");
    }
    // A short word is not taken for the start of a longer one: "plan" is not "plane".
    let r = m
        .recall_with(&project("p"), &RecallQuery::new("which plan", 3))
        .unwrap();
    assert!(!by_bm25(&r, ids[7]), "{:?}", r.items);
}

#[test]
fn a_compound_is_found_written_open_closed_or_hyphenated() {
    let (_dir, m, ids) = notes(
        &[
            &[
                "The wi-fi password for the office is Kestrel.",
                "My workout is a 5 km run every morning.",
                "I set up the smart watch to track my sleep.",
            ][..],
            &UNRELATED,
        ]
        .concat(),
    );
    found_by_a_held_form(
        &m,
        &[
            ("wifi", ids[0]),
            ("when do I work out", ids[1]),
            ("what does my smartwatch track", ids[2]),
        ],
    );
}

#[test]
fn a_misspelled_query_word_finds_the_word_it_misspells() {
    let (_dir, m, ids) = notes(
        &[
            &[
                "Our accommodation in Porto is a flat near the river.",
                "The chess tournament starts on Saturday.",
            ][..],
            &UNRELATED,
        ]
        .concat(),
    );
    found_by_a_held_form(
        &m,
        &[
            ("where is our accomodation", ids[0]),
            ("when is the torunament", ids[1]),
        ],
    );
}

#[test]
fn floor_and_gaps_agree_from_the_first_event() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    m.observe(say("a", Role::User, "The garage code is 1180."))
        .unwrap();
    for q in ["zebra", "quantum chromodynamics", "x"] {
        let r = m.recall_with(&p, &RecallQuery::new(q, 5)).unwrap();
        assert!(
            r.items.is_empty(),
            "{q}: one event is not an answer to anything"
        );
    }
    assert_eq!(m.recall(&p, "garage", 5).unwrap().len(), 1);
    m.flush_feedback().unwrap();
    let gaps: Vec<String> = m
        .knowledge_gaps(&p, 10)
        .unwrap()
        .iter()
        .map(|g| format!("{g:?}"))
        .collect();
    assert!(gaps.iter().any(|g| g.contains("zebra")), "{gaps:?}");
    assert!(!gaps.iter().any(|g| g.contains("garage")), "{gaps:?}");
    // On a conversation: every query returns nothing exactly when it is logged as a gap.
    let dir = tempfile::tempdir().unwrap();
    let m = conversation(dir.path());
    let queries = [
        "pasta",
        "train ride",
        "quantum chromodynamics lattice",
        "volcano eruption insurance",
        "headphones",
    ];
    let mut empty = Vec::new();
    for q in queries {
        let r = m.recall_with(&p, &RecallQuery::new(q, 10)).unwrap();
        if r.items.is_empty() {
            empty.push(q);
        }
    }
    m.flush_feedback().unwrap();
    let gaps = format!("{:?}", m.knowledge_gaps(&p, 50).unwrap());
    for q in queries {
        assert_eq!(empty.contains(&q), gaps.contains(q), "{q}: {gaps}");
    }
    assert!(empty.contains(&"volcano eruption insurance"));
}

#[test]
fn one_text_takes_one_slot_in_recall_and_in_packs() {
    let dir = tempfile::tempdir().unwrap();
    let m = conversation(dir.path());
    let p = project("p");
    let ids: Vec<_> = [
        "The office wifi password is Café-42.",
        "The office wifi password is Cafe\u{301}-42.\n",
        "the office  wifi password is café-42. ",
    ]
    .iter()
    .map(|t| m.observe(say("w", Role::User, t)).unwrap())
    .collect();
    let hits = m.recall(&p, "office wifi password", 10).unwrap();
    let wifi: Vec<_> = hits
        .iter()
        .filter(|h| h.event.content.contains("wifi"))
        .collect();
    assert_eq!(wifi.len(), 1);
    let mut all = vec![wifi[0].event.id];
    all.extend(&wifi[0].duplicates);
    all.sort();
    assert_eq!(all, ids);
    let pack = m
        .recall_pack(&p, "office wifi password", None, 1_000_000, None)
        .unwrap();
    let texts: Vec<String> = pack
        .items
        .iter()
        .map(|(_, t)| hypermem::text::fold(t))
        .collect();
    let mut unique = texts.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), texts.len(), "{texts:?}");
}

#[test]
fn a_long_on_topic_note_is_packed_and_nothing_below_the_floor_pads_a_pack() {
    let dir = tempfile::tempdir().unwrap();
    let m = conversation(dir.path());
    let p = project("p");
    let long = format!(
        "Notes on the lower back routine: {}",
        "the knee-to-chest stretch, the cat-cow stretch and the child's pose, each held \
         for thirty seconds, then a short walk to loosen the lower back. "
            .repeat(12)
    );
    let id = m.observe(say("n", Role::User, &long)).unwrap();
    let pack = m
        .recall_pack(&p, "lower back stretch routine", None, 4_000_000, None)
        .unwrap();
    assert!(
        pack.items.iter().any(|(line, _)| line.id == id.0),
        "{:?}",
        pack.suppressed
    );
    // A pack carries only what recall returned (above its floor): never the unrelated
    // sessions, however large the budget.
    let r = m
        .recall_with(&p, &RecallQuery::new("lower back stretch routine", 20))
        .unwrap();
    for (line, text) in &pack.items {
        if matches!(line.slot, Slot::Direct | Slot::Associative) {
            assert!(r.items.iter().any(|i| i.event.id.0 == line.id), "{text}");
        }
        assert!(!text.contains("pasta") && !text.contains("novel"), "{text}");
    }
}

#[test]
fn a_quoted_phrase_no_memory_holds_lifts_instead_of_emptying_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let m = conversation(dir.path());
    let p = project("p");
    let r = m
        .recall_with(&p, &RecallQuery::new("\"mystery novel\" train", 5))
        .unwrap();
    assert!(r.phrases_ignored.is_empty());
    assert!(r.items[0].event.content.contains("mystery novel"));
    assert!(all_of(r.items.iter(), |i| i
        .event
        .content
        .contains("mystery novel")));
    let r = m
        .recall_with(&p, &RecallQuery::new("\"novel of mystery\" train", 5))
        .unwrap();
    assert_eq!(r.phrases_ignored, ["novel of mystery"]);
    assert!(
        r.items
            .iter()
            .take(3)
            .any(|i| i.event.content.contains("mystery novel"))
    );
}

#[test]
fn a_turn_that_only_names_its_speaker_gains_nothing_from_being_short() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile(), Some(dir.path())).unwrap();
    let p = project("p");
    let turn = |speaker: &str, text: &str| {
        m.observe(
            NewEvent::new(p.clone(), Role::User, EventKind::Message, text)
                .session("s")
                .speaker(speaker),
        )
        .unwrap()
    };
    for i in 0..6 {
        turn(
            "Robin",
            &format!("I repaired bike number {i} at the workshop today."),
        );
    }
    let short = turn("Sam", "Scrambled.");
    let long = turn(
        "Sam",
        "I went to the market this morning and bought apples for the pie we planned.",
    );
    let pottery = turn(
        "Sam",
        "My pottery class moved to Thursdays; I glazed two bowls last week.",
    );
    let hits = m.recall(&p, "What did Sam say about pottery?", 5).unwrap();
    assert_eq!(hits[0].event.id, pottery);
    let bm25 = |id| {
        hits.iter()
            .find(|h| h.event.id == id)
            .and_then(|h| {
                h.fused
                    .breakdown
                    .iter()
                    .find(|b| b.signal == hypermem::recall::Signal::Bm25)
            })
            .map_or(0.0, |b| b.score)
    };
    assert!(
        bm25(long) > 0.0,
        "the name matches every turn of its speaker"
    );
    assert!(
        (bm25(short) - bm25(long)).abs() < 1e-9,
        "the name scores every turn of its speaker alike: {} vs {}",
        bm25(short),
        bm25(long)
    );
}

/// Through the binary, as a new user: `--json` recall of a verbatim sentence puts it first
/// and a second identical run gives an identical document.
#[test]
fn the_binary_gives_the_same_answer_twice() {
    let dir = tempfile::tempdir().unwrap();
    let hm = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_hypermem"))
            .arg("--data-dir")
            .arg(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    for (session, text) in &CONVERSATION[..12] {
        hm(&[
            "--json",
            "observe",
            "--create",
            "--project",
            "p",
            "--session",
            session,
            text,
        ]);
    }
    let query = CONVERSATION[9].1;
    let once = hm(&["--json", "recall", "--project", "p", query]);
    assert_eq!(once["items"][0]["event"]["content"], query);
    assert_eq!(hm(&["--json", "recall", "--project", "p", query]), once);
}
