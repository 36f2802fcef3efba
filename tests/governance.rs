//! Governance invariants (DESIGN.md 2–6, 10 and erasure), one test each, plus every named
//! rejection reason.

mod common;

use std::sync::Arc;

use common::project;
use hypermem::governance::{
    BeliefStatus, Op, OpOutcome, Ownership, Plan, PlanOutcome, ProspectiveKind, ProspectiveRefusal,
    ProspectiveStatus, RejectionReason, is_affirmative,
};
use hypermem::ledger::{EventId, EventKind, GLOBAL_TABLES, Ledger, LedgerConfig, NewEvent, Role};
use hypermem::store::ProjectId;

fn ledger() -> Ledger {
    Ledger::open_in_memory(LedgerConfig::default()).unwrap()
}

fn event(l: &Ledger, p: &str, role: Role, text: &str) -> EventId {
    l.append(NewEvent::new(project(p), role, EventKind::Message, text))
        .unwrap()
        .id
}

fn assert_op(key: &str, statement: &str, ownership: Ownership, evidence: Vec<EventId>) -> Op {
    Op::Assert {
        key: key.into(),
        statement: statement.into(),
        ownership,
        agent: None,
        confidence: 0.9,
        evidence,
    }
}

fn plan(p: &str, key: &str, ops: Vec<Op>, at: i64) -> Plan {
    Plan {
        project: project(p),
        idempotency_key: key.into(),
        ops: ops.into_iter().map(Into::into).collect(),
        at: Some(at),
    }
}

fn rejected(outcome: PlanOutcome) -> RejectionReason {
    match outcome {
        PlanOutcome::Rejected(r) => r.reason,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

fn rows(l: &Ledger, p: &ProjectId) -> (usize, usize) {
    let beliefs: usize = [
        BeliefStatus::Active,
        BeliefStatus::PossibleConflict,
        BeliefStatus::Candidate,
        BeliefStatus::Superseded,
    ]
    .iter()
    .map(|s| l.beliefs_with_status(p, *s).unwrap().len())
    .sum();
    (beliefs, l.plan_audit(p, "any").unwrap().len())
}

#[test]
fn invariant2_user_ownership_needs_user_evidence() {
    let l = ledger();
    let p = project("p");
    let said_by_assistant = event(&l, "p", Role::Assistant, "I think you prefer dark mode");
    let said_by_tool = event(&l, "p", Role::Tool, "theme=dark");
    let out = l
        .apply_plan(&plan(
            "p",
            "k1",
            vec![assert_op(
                "user.theme",
                "prefers dark mode",
                Ownership::User,
                vec![said_by_assistant, said_by_tool],
            )],
            10,
        ))
        .unwrap();
    assert_eq!(
        rejected(out),
        RejectionReason::UserOwnershipRequiresUserEvidence {
            roles: "assistant,tool".into()
        }
    );
    assert!(l.current_belief(&p, "user.theme").unwrap().is_none());
    // The same assistant-only evidence can support a project observation.
    let out = l
        .apply_plan(&plan(
            "p",
            "k2",
            vec![assert_op(
                "project.theme_seen",
                "dark theme configured",
                Ownership::Project,
                vec![said_by_tool],
            )],
            10,
        ))
        .unwrap();
    assert!(matches!(out, PlanOutcome::Applied { .. }));
    // With a user event it is accepted.
    let said_by_user = event(&l, "p", Role::User, "I prefer dark mode");
    let out = l
        .apply_plan(&plan(
            "p",
            "k3",
            vec![assert_op(
                "user.theme",
                "prefers dark mode",
                Ownership::User,
                vec![said_by_assistant, said_by_user],
            )],
            11,
        ))
        .unwrap();
    assert!(matches!(out, PlanOutcome::Applied { .. }));
    let b = l.current_belief(&p, "user.theme").unwrap().unwrap();
    assert_eq!(b.source_roles, vec![Role::Assistant, Role::User]);
    assert_eq!(b.evidence, vec![said_by_assistant, said_by_user]);
}

#[test]
fn invariant3_evidence_must_exist_in_the_same_project_and_nothing_is_written() {
    let l = ledger();
    let p = project("p");
    let ok = event(&l, "p", Role::User, "fact");
    let foreign = event(&l, "q", Role::User, "other project's fact");
    let cases = [
        (vec![], RejectionReason::MissingEvidence),
        (
            vec![EventId(9999)],
            RejectionReason::UnknownEvidence {
                event: EventId(9999),
            },
        ),
        // Another project's event is refused as one that does not exist.
        (
            vec![ok, foreign],
            RejectionReason::UnknownEvidence { event: foreign },
        ),
    ];
    for (i, (evidence, reason)) in cases.into_iter().enumerate() {
        // A valid first operation must not be written when a later one is refused.
        let ops = vec![
            assert_op("a", "first", Ownership::Project, vec![ok]),
            assert_op("b", "second", Ownership::Project, evidence),
        ];
        let out = l.apply_plan(&plan("p", &format!("k{i}"), ops, 5)).unwrap();
        match out {
            PlanOutcome::Rejected(r) => {
                assert_eq!(r.op_index, Some(1));
                assert_eq!(r.reason, reason);
            }
            other => panic!("{other:?}"),
        }
        assert!(
            l.current_belief(&p, "a").unwrap().is_none(),
            "case {i}: nothing written"
        );
        assert!(l.plan_audit(&p, &format!("k{i}")).unwrap().is_empty());
    }
    assert_eq!(rows(&l, &p).0, 0);
}

#[test]
fn invariant4_plans_commit_with_audit_and_rerun_is_already_applied() {
    let l = ledger();
    let p = project("p");
    let e1 = event(&l, "p", Role::User, "deploys go out on Tuesday");
    let e2 = event(&l, "p", Role::User, "actually deploys moved to Thursday");
    let pl = plan(
        "p",
        "plan-1",
        vec![
            assert_op(
                "deploy.day",
                "deploys on Tuesday",
                Ownership::Project,
                vec![e1],
            ),
            Op::Correct {
                key: "deploy.day".into(),
                statement: "deploys on Thursday".into(),
                evidence: vec![e2],
                expected_version: Some(1),
                confidence: 1.0,
            },
        ],
        100,
    );
    let out = l.apply_plan(&pl).unwrap();
    let PlanOutcome::Applied { results } = out else {
        panic!("{out:?}")
    };
    assert!(matches!(results[0], OpOutcome::Created { .. }));
    assert!(matches!(results[1], OpOutcome::Superseded { .. }));
    let audit = l.plan_audit(&p, "plan-1").unwrap();
    assert_eq!(
        audit.iter().map(|a| a.op.as_str()).collect::<Vec<_>>(),
        vec!["assert", "correct"]
    );
    assert_eq!(
        l.apply_plan(&pl).unwrap(),
        PlanOutcome::AlreadyApplied {
            idempotency_key: "plan-1".into()
        }
    );
    assert_eq!(
        l.plan_audit(&p, "plan-1").unwrap().len(),
        2,
        "no new audit rows"
    );
    assert_eq!(
        l.belief_history(&p, "deploy.day").unwrap().len(),
        2,
        "no new beliefs"
    );
    // The same key with different content is a duplicate idempotency key.
    let mut other = pl.clone();
    other.ops.truncate(1);
    assert_eq!(
        rejected(l.apply_plan(&other).unwrap()),
        RejectionReason::DuplicateIdempotencyKey {
            key: "plan-1".into()
        }
    );
    // Plans round-trip as JSON (the CLI's `plan apply --file`).
    let json = serde_json::to_string(&pl).unwrap();
    assert_eq!(serde_json::from_str::<Plan>(&json).unwrap(), pl);
    assert!(
        serde_json::from_str::<Plan>(r#"{"project":"../etc","idempotency_key":"x","ops":[]}"#)
            .is_err()
    );
}

#[test]
fn invariant5_correction_supersedes_and_contradiction_is_a_possible_conflict() {
    let l = ledger();
    let p = project("p");
    let e1 = event(&l, "p", Role::User, "my editor is vim");
    let e2 = event(&l, "p", Role::Assistant, "you use emacs, right?");
    let e3 = event(&l, "p", Role::User, "I switched to helix");
    l.apply_plan(&plan(
        "p",
        "a",
        vec![assert_op(
            "user.editor",
            "uses vim",
            Ownership::User,
            vec![e1],
        )],
        10,
    ))
    .unwrap();
    let first = l.current_belief(&p, "user.editor").unwrap().unwrap();
    // An unsupported contradiction (different statement asserted while one is active).
    let out = l
        .apply_plan(&plan(
            "p",
            "b",
            vec![assert_op(
                "user.editor",
                "uses emacs",
                Ownership::Project,
                vec![e2],
            )],
            20,
        ))
        .unwrap();
    let PlanOutcome::Applied { results } = out else {
        panic!("{out:?}")
    };
    assert!(
        matches!(results[0], OpOutcome::ConflictRecorded { current, .. } if current == first.id)
    );
    assert_eq!(
        l.current_belief(&p, "user.editor").unwrap().unwrap().id,
        first.id,
        "current stays active"
    );
    assert_eq!(
        l.beliefs_with_status(&p, BeliefStatus::PossibleConflict)
            .unwrap()
            .len(),
        1
    );
    // A correction supersedes and links both ways.
    let out = l
        .apply_plan(&plan(
            "p",
            "c",
            vec![Op::Correct {
                key: "user.editor".into(),
                statement: "uses helix".into(),
                evidence: vec![e3],
                expected_version: None,
                confidence: 1.0,
            }],
            30,
        ))
        .unwrap();
    let PlanOutcome::Applied { results } = out else {
        panic!("{out:?}")
    };
    let OpOutcome::Superseded { old, belief } = results[0] else {
        panic!()
    };
    let old_row = l.belief(&p, old).unwrap().unwrap();
    let new_row = l.belief(&p, belief).unwrap().unwrap();
    assert_eq!(
        (old_row.status, old_row.valid_to, old_row.superseded_by),
        (BeliefStatus::Superseded, Some(30), Some(belief))
    );
    assert_eq!(
        (new_row.status, new_row.valid_from, new_row.supersedes),
        (BeliefStatus::Active, 30, Some(old))
    );
    assert!(new_row.version > old_row.version);
    assert_eq!(
        l.beliefs_with_status(&p, BeliefStatus::Active)
            .unwrap()
            .len(),
        1
    );
    // Correcting a user-owned belief still needs user evidence.
    let out = l
        .apply_plan(&plan(
            "p",
            "d",
            vec![Op::Correct {
                key: "user.editor".into(),
                statement: "uses nano".into(),
                evidence: vec![e2],
                expected_version: None,
                confidence: 1.0,
            }],
            40,
        ))
        .unwrap();
    assert!(matches!(
        rejected(out),
        RejectionReason::UserOwnershipRequiresUserEvidence { .. }
    ));
    // Corrections need something to correct.
    let out = l
        .apply_plan(&plan(
            "p",
            "e",
            vec![Op::Correct {
                key: "nothing".into(),
                statement: "x".into(),
                evidence: vec![e3],
                expected_version: None,
                confidence: 1.0,
            }],
            40,
        ))
        .unwrap();
    assert_eq!(
        rejected(out),
        RejectionReason::NoActiveBelief {
            key: "nothing".into()
        }
    );
}

#[test]
fn invariant6_belief_at_returns_the_version_valid_then() {
    let l = ledger();
    let p = project("p");
    let e = [
        event(&l, "p", Role::User, "v1"),
        event(&l, "p", Role::User, "v2"),
        event(&l, "p", Role::User, "v3"),
    ];
    l.apply_plan(&plan(
        "p",
        "1",
        vec![assert_op("k", "one", Ownership::User, vec![e[0]])],
        100,
    ))
    .unwrap();
    let correct = |key: &str, s: &str, ev, at| {
        l.apply_plan(&plan(
            "p",
            key,
            vec![Op::Correct {
                key: "k".into(),
                statement: s.into(),
                evidence: vec![ev],
                expected_version: None,
                confidence: 1.0,
            }],
            at,
        ))
        .unwrap()
    };
    correct("2", "two", e[1], 200);
    correct("3", "three", e[2], 300);
    let at = |t| l.belief_at(&p, "k", t).unwrap().map(|b| b.statement);
    assert_eq!(at(99), None, "before the first version");
    assert_eq!(at(100).as_deref(), Some("one"), "at its start");
    assert_eq!(at(150).as_deref(), Some("one"), "between versions");
    assert_eq!(at(199).as_deref(), Some("one"));
    assert_eq!(at(200).as_deref(), Some("two"), "windows are [from, to)");
    assert_eq!(at(10_000).as_deref(), Some("three"));
    assert_eq!(
        l.current_belief(&p, "k").unwrap().unwrap().statement,
        "three"
    );
    let history = l.belief_history(&p, "k").unwrap();
    assert_eq!(
        history.iter().map(|b| b.status).collect::<Vec<_>>(),
        vec![
            BeliefStatus::Superseded,
            BeliefStatus::Superseded,
            BeliefStatus::Active
        ]
    );
}

#[test]
fn reinforcement_keeps_the_belief_and_versions_guard_concurrent_edits() {
    let l = ledger();
    let p = project("p");
    let e1 = event(&l, "p", Role::User, "I like tea");
    let e2 = event(&l, "p", Role::User, "tea, definitely");
    l.apply_plan(&plan(
        "p",
        "1",
        vec![assert_op(
            "user.drink",
            "Likes tea.",
            Ownership::User,
            vec![e1],
        )],
        1,
    ))
    .unwrap();
    let b1 = l.current_belief(&p, "user.drink").unwrap().unwrap();
    // Same normalized statement: reinforced, same row, version + 1, evidence appended.
    let out = l
        .apply_plan(&plan(
            "p",
            "2",
            vec![assert_op(
                "user.drink",
                "  likes TEA ",
                Ownership::User,
                vec![e2],
            )],
            2,
        ))
        .unwrap();
    let PlanOutcome::Applied { results } = out else {
        panic!()
    };
    assert_eq!(
        results[0],
        OpOutcome::Reinforced {
            belief: b1.id,
            version: 2
        }
    );
    let b2 = l.current_belief(&p, "user.drink").unwrap().unwrap();
    assert_eq!(
        (b2.id, b2.version, b2.evidence.clone()),
        (b1.id, 2, vec![e1, e2])
    );
    let stale = Op::Reinforce {
        key: "user.drink".into(),
        evidence: vec![e2],
        expected_version: Some(1),
    };
    assert_eq!(
        rejected(l.apply_plan(&plan("p", "3", vec![stale], 3)).unwrap()),
        RejectionReason::VersionConflict {
            key: "user.drink".into(),
            expected: 1,
            current: 2
        }
    );
    let out = l
        .apply_plan(&plan(
            "p",
            "4",
            vec![assert_op("", "x", Ownership::User, vec![e1])],
            3,
        ))
        .unwrap();
    assert!(matches!(
        rejected(out),
        RejectionReason::InvalidValue { .. }
    ));
    let out = l
        .apply_plan(&plan(
            "p",
            "5",
            vec![Op::Reinforce {
                key: "none".into(),
                evidence: vec![e1],
                expected_version: None,
            }],
            3,
        ))
        .unwrap();
    assert_eq!(
        rejected(out),
        RejectionReason::NoActiveBelief { key: "none".into() }
    );
}

#[test]
fn candidates_stay_candidates_until_governed_promotion() {
    let l = ledger();
    let p = project("p");
    let assistant = event(
        &l,
        "p",
        Role::Assistant,
        "the user seems to like short answers",
    );
    let user = event(&l, "p", Role::User, "keep answers short please");
    let propose = |key: &str, ev| Op::Propose {
        key: "user.style".into(),
        statement: format!("prefers short answers {key}"),
        ownership: Ownership::User,
        agent: None,
        confidence: 0.6,
        evidence: vec![ev],
    };
    let out = l
        .apply_plan(&plan("p", "c1", vec![propose("a", assistant)], 1))
        .unwrap();
    let PlanOutcome::Applied { results } = out else {
        panic!()
    };
    let OpOutcome::Proposed { belief: inferred } = results[0] else {
        panic!()
    };
    assert!(
        l.current_belief(&p, "user.style").unwrap().is_none(),
        "a candidate is not a belief"
    );
    // Promotion of an inference-only user claim is refused.
    let out = l
        .apply_plan(&plan(
            "p",
            "c2",
            vec![Op::Promote {
                belief: inferred,
                expected_version: None,
            }],
            2,
        ))
        .unwrap();
    assert!(matches!(
        rejected(out),
        RejectionReason::UserOwnershipRequiresUserEvidence { .. }
    ));
    let out = l
        .apply_plan(&plan("p", "c3", vec![propose("b", user)], 2))
        .unwrap();
    let PlanOutcome::Applied { results } = out else {
        panic!()
    };
    let OpOutcome::Proposed { belief: supported } = results[0] else {
        panic!()
    };
    let out = l
        .apply_plan(&plan(
            "p",
            "c4",
            vec![
                Op::Promote {
                    belief: supported,
                    expected_version: None,
                },
                Op::Reject { belief: inferred },
            ],
            3,
        ))
        .unwrap();
    assert!(matches!(out, PlanOutcome::Applied { .. }), "{out:?}");
    assert_eq!(
        l.current_belief(&p, "user.style").unwrap().unwrap().id,
        supported
    );
    assert_eq!(
        l.belief(&p, inferred).unwrap().unwrap().status,
        BeliefStatus::Rejected
    );
    let out = l
        .apply_plan(&plan("p", "c5", vec![Op::Reject { belief: supported }], 4))
        .unwrap();
    assert_eq!(
        rejected(out),
        RejectionReason::InvalidTransition {
            op: hypermem::governance::Transition::Reject,
            status: BeliefStatus::Active
        }
    );
    let out = l
        .apply_plan(&plan("q", "c6", vec![Op::Reject { belief: inferred }], 4))
        .unwrap();
    assert_eq!(
        rejected(out),
        RejectionReason::UnknownBelief { belief: inferred },
        "another project's belief is refused as one that does not exist"
    );
    let out = l
        .apply_plan(&plan(
            "p",
            "c7",
            vec![Op::Reject {
                belief: hypermem::governance::BeliefId(999),
            }],
            4,
        ))
        .unwrap();
    assert!(matches!(
        rejected(out),
        RejectionReason::UnknownBelief { .. }
    ));
}

#[test]
fn concurrent_writers_never_produce_two_active_versions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l.db");
    let shared = Arc::new(Ledger::open(&path, LedgerConfig::default()).unwrap());
    let second = Arc::new(Ledger::open(&path, LedgerConfig::default()).unwrap()); // another connection
    let p = project("p");
    let e = event(&shared, "p", Role::User, "evidence");
    let threads: Vec<_> = [
        shared.clone(),
        shared.clone(),
        second.clone(),
        second.clone(),
    ]
    .into_iter()
    .enumerate()
    .map(|(t, l)| {
        std::thread::spawn(move || {
            for i in 0..25 {
                let op = if i % 2 == 0 {
                    assert_op(
                        "shared.key",
                        &format!("value {t}-{i}"),
                        Ownership::Project,
                        vec![e],
                    )
                } else {
                    Op::Correct {
                        key: "shared.key".into(),
                        statement: format!("corrected {t}-{i}"),
                        evidence: vec![e],
                        expected_version: None,
                        confidence: 1.0,
                    }
                };
                let out = l
                    .apply_plan(&plan("p", &format!("t{t}-{i}"), vec![op], i))
                    .unwrap();
                assert!(!matches!(out, PlanOutcome::AlreadyApplied { .. }));
            }
        })
    })
    .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        shared
            .beliefs_with_status(&p, BeliefStatus::Active)
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        second
            .beliefs_with_status(&p, BeliefStatus::Active)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn invariant10_prospective_items_activate_only_on_a_later_affirmative_user_event() {
    let l = ledger();
    let p = project("p");
    let ask = event(
        &l,
        "p",
        Role::Assistant,
        "Shall I remind you to renew the certificate on Friday?",
    );
    let item = l
        .propose_prospective(
            &p,
            ProspectiveKind::Reminder,
            "renew the certificate",
            ask,
            Some(5_000),
        )
        .unwrap();
    let item2 = l
        .propose_prospective(
            &p,
            ProspectiveKind::Intention,
            "rotate keys",
            ask,
            Some(6_000),
        )
        .unwrap();
    assert_eq!(item.status, ProspectiveStatus::Pending);
    let no = event(&l, "p", Role::User, "No, don't remind me.");
    let assistant_yes = event(&l, "p", Role::Assistant, "Yes, I will.");
    let foreign_yes = event(&l, "q", Role::User, "yes");
    let yes = event(&l, "p", Role::User, "Yes please, go ahead.");
    assert_eq!(
        l.confirm_prospective(&p, item.id, no).unwrap(),
        Err(ProspectiveRefusal::NotAffirmative { event: no })
    );
    assert_eq!(
        l.confirm_prospective(&p, item.id, assistant_yes).unwrap(),
        Err(ProspectiveRefusal::NotUserEvent {
            event: assistant_yes
        })
    );
    assert!(
        l.confirm_prospective(&p, item.id, foreign_yes).is_err(),
        "cross-project event"
    );
    let early = l
        .propose_prospective(&p, ProspectiveKind::Plan, "late plan", yes, None)
        .unwrap();
    assert_eq!(
        l.confirm_prospective(&p, early.id, yes).unwrap(),
        Err(ProspectiveRefusal::ConfirmedBySourceEvent { event: yes })
    );
    assert_eq!(
        l.due_prospective(&p, 10_000).unwrap(),
        vec![],
        "nothing confirmed, nothing due"
    );
    let confirmed = l.confirm_prospective(&p, item.id, yes).unwrap().unwrap();
    assert_eq!(
        (confirmed.status, confirmed.confirmed_by),
        (ProspectiveStatus::Confirmed, Some(yes))
    );
    assert_eq!(
        l.confirm_prospective(&p, item2.id, yes).unwrap(),
        Err(ProspectiveRefusal::EventAlreadyUsed {
            event: yes,
            item: item.id.0
        })
    );
    assert_eq!(l.due_prospective(&p, 4_999).unwrap(), vec![]);
    assert_eq!(l.due_prospective(&p, 5_000).unwrap()[0].id, item.id);
    let deferred = l.defer_prospective(&p, item.id, 9_000).unwrap().unwrap();
    assert_eq!(deferred.status, ProspectiveStatus::Deferred);
    assert!(l.due_prospective(&p, 8_000).unwrap().is_empty());
    assert_eq!(
        l.complete_prospective(&p, item.id).unwrap().unwrap().status,
        ProspectiveStatus::Completed
    );
    assert!(matches!(
        l.complete_prospective(&p, item.id).unwrap(),
        Err(ProspectiveRefusal::InvalidTransition { .. })
    ));
    assert_eq!(
        l.expire_prospective(&p, 7_000).unwrap(),
        1,
        "item2 was never confirmed"
    );
    assert_eq!(
        l.prospective(&p, item2.id).unwrap().unwrap().status,
        ProspectiveStatus::Expired
    );
}

#[test]
fn affirmation_is_explicit_and_negation_wins() {
    for yes in [
        "yes",
        "Yes please",
        "ok, go ahead",
        "Sounds good!",
        "sure",
        "Confirmed.",
        "yep do it",
    ] {
        assert!(is_affirmative(yes), "{yes}");
    }
    for no in [
        "no",
        "not yes",
        "yes, but don't",
        "I don't think so",
        "maybe",
        "wait, yes",
        "cancel that",
        "yes... not now",
        "isn't that ok",
        "hmm",
        "",
    ] {
        assert!(!is_affirmative(no), "{no}");
    }
}

#[test]
fn erasure_removes_every_row_of_the_project_from_every_table() {
    let l = ledger();
    let (p, q) = (project("gone"), project("kept"));
    assert!(l.fts_tables().unwrap().is_empty());
    for name in ["gone", "kept"] {
        let e = event(
            &l,
            name,
            Role::User,
            &format!("{name} likes rust; please remind me"),
        );
        l.apply_plan(&plan(
            name,
            "k",
            vec![assert_op(
                "user.lang",
                "likes rust",
                Ownership::User,
                vec![e],
            )],
            1,
        ))
        .unwrap();
        l.apply_plan(&plan(
            name,
            "k2",
            vec![Op::Propose {
                key: "x".into(),
                statement: "y".into(),
                ownership: Ownership::Project,
                agent: None,
                confidence: 0.5,
                evidence: vec![e],
            }],
            1,
        ))
        .unwrap();
        l.propose_prospective(
            &project(name),
            ProspectiveKind::Reminder,
            "remind",
            e,
            Some(1),
        )
        .unwrap();
    }
    // Every table is either global or scoped by project: a new table cannot be forgotten.
    let tables = l.tables().unwrap();
    assert!(tables.len() >= 8, "{tables:?}");
    for t in &tables {
        assert!(
            GLOBAL_TABLES.contains(&t.as_str()) || l.has_project_column(t).unwrap(),
            "table {t} has no project column and is not declared global"
        );
    }
    assert!(
        l.fts_tables().unwrap().is_empty(),
        "no full-text table before a search"
    );
    for name in ["gone", "kept"] {
        assert_eq!(l.search(&project(name), "rust", 5).unwrap().len(), 1);
    }
    assert_eq!(
        l.fts_tables().unwrap().len(),
        2,
        "one full-text table per searched project"
    );
    let receipt = l.forget_project(&p).unwrap();
    assert_eq!(receipt.rows["events"], 1);
    assert_eq!(receipt.rows["beliefs"], 2);
    assert_eq!(receipt.rows["belief_evidence"], 2);
    assert_eq!(receipt.rows["governance_audit"], 2);
    assert_eq!(receipt.rows["governance_plans"], 2);
    assert_eq!(receipt.rows["prospective"], 1);
    assert_eq!(receipt.rows["fts"], 1);
    assert_eq!(
        l.fts_tables().unwrap().len(),
        1,
        "the erased project's full-text table is gone"
    );
    let db = |project: &ProjectId| {
        tables
            .iter()
            .filter(|t| l.has_project_column(t).unwrap())
            .map(|t| l.count_rows(t, project).unwrap())
            .sum::<u64>()
    };
    assert_eq!(db(&p), 0, "no row of the erased project anywhere");
    assert!(l.search(&p, "rust", 10).unwrap().is_empty());
    assert!(db(&q) > 0);
    assert_eq!(l.search(&q, "rust", 10).unwrap().len(), 1);
    assert!(l.current_belief(&q, "user.lang").unwrap().is_some());
    assert_eq!(
        l.forget_project(&p).unwrap().total(),
        0,
        "erasing twice is harmless"
    );
}

#[test]
fn every_refusal_and_outcome_serializes_for_the_cli() {
    use hypermem::governance::{BeliefId, OpOutcome, Rejection};
    let e = EventId(3);
    for r in [
        ProspectiveRefusal::UnknownItem { item: 1 },
        ProspectiveRefusal::NotUserEvent { event: e },
        ProspectiveRefusal::ConfirmedBySourceEvent { event: e },
        ProspectiveRefusal::EarlierThanSourceEvent {
            event: e,
            source_event: EventId(4),
        },
        ProspectiveRefusal::NotAffirmative { event: e },
        ProspectiveRefusal::EventAlreadyUsed { event: e, item: 2 },
        ProspectiveRefusal::InvalidTransition {
            op: "confirm",
            status: ProspectiveStatus::Completed,
        },
    ] {
        let v = serde_json::to_value(&r).unwrap();
        assert!(v["reason"].is_string(), "{v}");
        // The tag it serializes with is its typed reason's name.
        assert_eq!(r.reason().as_str(), v["reason"], "{v}");
    }
    let reasons = [
        RejectionReason::MissingEvidence,
        RejectionReason::UnknownEvidence { event: e },
        RejectionReason::ProjectBoundaryViolation { what: "x".into() },
        RejectionReason::UserOwnershipRequiresUserEvidence {
            roles: "tool".into(),
        },
        RejectionReason::DuplicateIdempotencyKey { key: "k".into() },
        RejectionReason::VersionConflict {
            key: "k".into(),
            expected: 1,
            current: 2,
        },
        RejectionReason::NoActiveBelief { key: "k".into() },
        RejectionReason::UnknownBelief {
            belief: BeliefId(1),
        },
        RejectionReason::InvalidTransition {
            op: hypermem::governance::Transition::Reject,
            status: BeliefStatus::Active,
        },
        RejectionReason::InvalidValue { detail: "d".into() },
    ];
    for reason in reasons {
        assert_eq!(
            reason.reason().as_str(),
            serde_json::to_value(&reason).unwrap()["reason"]
        );
        let v = serde_json::to_value(PlanOutcome::Rejected(Rejection {
            op_index: Some(0),
            reason,
        }))
        .unwrap();
        assert_eq!(v["status"], "rejected");
        assert!(v["reason"]["reason"].is_string(), "{v}");
    }
    let v = serde_json::to_value(PlanOutcome::Applied {
        results: vec![OpOutcome::Created {
            belief: BeliefId(1),
        }],
    })
    .unwrap();
    assert_eq!(v["results"][0]["outcome"], "created");
}

fn event_at(l: &Ledger, p: &str, role: Role, text: &str, at: i64) -> EventId {
    l.append(NewEvent::new(project(p), role, EventKind::Message, text).at(at))
        .unwrap()
        .id
}

fn only(outcome: PlanOutcome) -> Vec<OpOutcome> {
    match outcome {
        PlanOutcome::Applied { results } => results,
        other => panic!("expected an applied plan, got {other:?}"),
    }
}

#[test]
fn a_reinforcement_folds_case_whitespace_and_punctuation() {
    let l = ledger();
    let p = project("p");
    let a = event(&l, "p", Role::User, "the test-suite runs nightly");
    let b = event(&l, "p", Role::User, "yes, the test suite runs nightly");
    only(
        l.apply_plan(&plan(
            "p",
            "k1",
            vec![assert_op(
                "p.ci",
                "The test-suite runs nightly.",
                Ownership::User,
                vec![a],
            )],
            10,
        ))
        .unwrap(),
    );
    let out = only(
        l.apply_plan(&plan(
            "p",
            "k2",
            vec![assert_op(
                "p.ci",
                "the  TEST suite runs nightly",
                Ownership::User,
                vec![b],
            )],
            20,
        ))
        .unwrap(),
    );
    assert!(
        matches!(out[0], OpOutcome::Reinforced { version: 2, .. }),
        "{out:?}"
    );
    assert!(
        l.beliefs_with_status(&p, BeliefStatus::PossibleConflict)
            .unwrap()
            .is_empty()
    );
    // A changed word is a different statement.
    let c = event(&l, "p", Role::User, "the test suite runs weekly");
    let out = only(
        l.apply_plan(&plan(
            "p",
            "k3",
            vec![assert_op(
                "p.ci",
                "the test suite runs weekly",
                Ownership::User,
                vec![c],
            )],
            30,
        ))
        .unwrap(),
    );
    assert!(matches!(out[0], OpOutcome::ConflictRecorded { .. }));
}

#[test]
fn evidence_already_cited_changes_nothing() {
    let l = ledger();
    let p = project("p");
    let a = event(&l, "p", Role::User, "I use vim");
    let b = event(&l, "p", Role::User, "vim, always");
    only(
        l.apply_plan(&plan(
            "p",
            "k1",
            vec![assert_op(
                "user.editor",
                "uses vim",
                Ownership::User,
                vec![a],
            )],
            10,
        ))
        .unwrap(),
    );
    for (key, op) in [
        (
            "k2",
            assert_op("user.editor", "uses vim", Ownership::User, vec![a]),
        ),
        (
            "k3",
            Op::Reinforce {
                key: "user.editor".into(),
                evidence: vec![a, a],
                expected_version: None,
            },
        ),
    ] {
        let out = only(l.apply_plan(&plan("p", key, vec![op], 20)).unwrap());
        assert!(
            matches!(out[0], OpOutcome::Unchanged { version: 1, .. }),
            "{out:?}"
        );
    }
    assert_eq!(
        l.current_belief(&p, "user.editor")
            .unwrap()
            .unwrap()
            .version,
        1
    );
    // New evidence (with an old one beside it) reinforces once.
    let out = only(
        l.apply_plan(&plan(
            "p",
            "k4",
            vec![Op::Reinforce {
                key: "user.editor".into(),
                evidence: vec![a, b],
                expected_version: Some(1),
            }],
            30,
        ))
        .unwrap(),
    );
    assert!(matches!(out[0], OpOutcome::Reinforced { version: 2, .. }));
    let current = l.current_belief(&p, "user.editor").unwrap().unwrap();
    assert_eq!(current.version, 2);
    assert_eq!(current.evidence.len(), 2);
}

#[test]
fn an_operation_key_makes_a_resubmitted_operation_already_applied() {
    use hypermem::governance::PlanOp;
    let l = ledger();
    let p = project("p");
    let a = event(&l, "p", Role::User, "deploys go out on Tuesdays");
    let op = assert_op("p.deploy", "deploys on Tuesdays", Ownership::User, vec![a]);
    let keyed = |op: Op, key: &str| Plan {
        project: p.clone(),
        idempotency_key: key.into(),
        ops: vec![PlanOp::keyed(op, "assert-deploy-1")],
        at: Some(10),
    };
    let first = only(l.apply_plan(&keyed(op.clone(), "plan-1")).unwrap());
    let OpOutcome::Created { belief } = first[0] else {
        panic!("{first:?}")
    };
    let again = only(l.apply_plan(&keyed(op, "plan-2")).unwrap());
    assert_eq!(
        again[0],
        OpOutcome::AlreadyApplied {
            idempotency_key: "assert-deploy-1".into(),
            belief: Some(belief)
        }
    );
    let other = assert_op("p.deploy", "deploys on Fridays", Ownership::User, vec![a]);
    match l.apply_plan(&keyed(other, "plan-3")).unwrap() {
        PlanOutcome::Rejected(r) => {
            assert_eq!(r.op_index, Some(0));
            assert!(matches!(
                r.reason,
                RejectionReason::DuplicateIdempotencyKey { .. }
            ));
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(
        l.current_belief(&p, "p.deploy").unwrap().unwrap().version,
        1
    );
    // The key is a field of the operation object in JSON, and round-trips.
    let json = r#"{"project":"p","idempotency_key":"plan-4","at":"2025-02-01T00:00:00Z",
        "ops":[{"op":"reinforce","key":"p.deploy","evidence":[1],"idempotency_key":"r1"}]}"#;
    let parsed: Plan = serde_json::from_str(json).unwrap();
    assert_eq!(parsed.ops[0].idempotency_key.as_deref(), Some("r1"));
    assert_eq!(parsed.at, Some(1_738_368_000_000));
    let back: Plan = serde_json::from_str(&serde_json::to_string(&parsed).unwrap()).unwrap();
    assert_eq!(back, parsed);
    for bad in [
        r#"{"project":"p","idempotency_key":"x","ops":[{"op":"reinforce","key":"k","evidence":[1],"idempotency_key":7}]}"#,
        r#"{"project":"p","idempotency_key":"x","ops":[],"at":"someday"}"#,
    ] {
        assert!(serde_json::from_str::<Plan>(bad).is_err(), "{bad}");
    }
}

#[test]
fn validity_windows_are_in_event_time_by_default() {
    let l = ledger();
    let p = project("p");
    let day = |d: i64| 1_738_368_000_000 + d * 86_400_000; // 2025-02-01 + d days
    let jan = event_at(&l, "p", Role::User, "I live in Lyon", day(-10));
    let mar = event_at(&l, "p", Role::User, "I moved to Porto", day(28));
    let at_none = |key: &str, op: Op| Plan {
        project: p.clone(),
        idempotency_key: key.into(),
        ops: vec![op.into()],
        at: None,
    };
    only(
        l.apply_plan(&at_none(
            "k1",
            assert_op("user.city", "lives in Lyon", Ownership::User, vec![jan]),
        ))
        .unwrap(),
    );
    only(
        l.apply_plan(&at_none(
            "k2",
            Op::Correct {
                key: "user.city".into(),
                statement: "lives in Porto".into(),
                evidence: vec![mar],
                expected_version: None,
                confidence: 1.0,
            },
        ))
        .unwrap(),
    );
    let on = |t| {
        l.belief_at(&p, "user.city", t)
            .unwrap()
            .map(|b| b.statement)
    };
    assert_eq!(on(day(-20)), None);
    assert_eq!(on(day(0)).as_deref(), Some("lives in Lyon"));
    assert_eq!(on(day(30)).as_deref(), Some("lives in Porto"));
}

#[test]
fn prospective_state_machine_is_enforced_and_recorded() {
    let l = ledger();
    let p = project("p");
    let before = event(&l, "p", Role::User, "yes, sounds good");
    let ask = event(
        &l,
        "p",
        Role::Assistant,
        "Shall I remind you to water the plants?",
    );
    let item = l
        .propose_prospective(
            &p,
            ProspectiveKind::Reminder,
            "water the plants",
            ask,
            Some(1_000),
        )
        .unwrap();
    // Confirming with an earlier event has its own reason, distinct from the source event.
    assert_eq!(
        l.confirm_prospective(&p, item.id, before).unwrap(),
        Err(ProspectiveRefusal::EarlierThanSourceEvent {
            event: before,
            source_event: ask
        })
    );
    // Deferring a pending item reschedules it; it stays pending and is never due.
    let d = l.defer_prospective(&p, item.id, 2_000).unwrap().unwrap();
    assert_eq!(
        (d.status, d.due_at),
        (ProspectiveStatus::Pending, Some(2_000))
    );
    assert!(l.due_prospective(&p, 10_000).unwrap().is_empty());
    // Rejected; proposing again from the same event returns the rejected record.
    l.reject_prospective(&p, item.id).unwrap().unwrap();
    let again = l
        .propose_prospective(
            &p,
            ProspectiveKind::Reminder,
            "water the plants!",
            ask,
            None,
        )
        .unwrap();
    assert_eq!(
        (again.id, again.status),
        (item.id, ProspectiveStatus::Rejected)
    );
    // Another project's item is refused as one that does not exist: ids leak nothing.
    assert_eq!(
        l.complete_prospective(&project("q"), item.id).unwrap(),
        Err(ProspectiveRefusal::UnknownItem { item: item.id.0 })
    );
    assert_eq!(
        l.complete_prospective(&p, hypermem::governance::ProspectiveId(999))
            .unwrap(),
        Err(ProspectiveRefusal::UnknownItem { item: 999 })
    );
    // Confirmed, then deferred: due at the new time, with the whole history recorded.
    let ask2 = event(&l, "p", Role::Assistant, "Remind you about the dentist?");
    let yes = event(&l, "p", Role::User, "yes please");
    let two = l
        .propose_prospective(&p, ProspectiveKind::Reminder, "dentist", ask2, Some(3_000))
        .unwrap();
    l.confirm_prospective(&p, two.id, yes).unwrap().unwrap();
    let d = l.defer_prospective(&p, two.id, 4_000).unwrap().unwrap();
    assert_eq!(d.status, ProspectiveStatus::Deferred);
    assert!(l.due_prospective(&p, 3_500).unwrap().is_empty());
    assert_eq!(l.due_prospective(&p, 4_000).unwrap()[0].id, two.id);
    let (shown, history) = l.prospective_history(&p, two.id).unwrap().unwrap();
    assert_eq!(shown.status, ProspectiveStatus::Deferred);
    let ops: Vec<&str> = history.iter().map(|h| h.op.as_str()).collect();
    assert_eq!(ops, ["propose", "confirm", "defer"]);
    assert_eq!(history[1].event, Some(yes));
    assert_eq!(history[2].from, Some(ProspectiveStatus::Confirmed));
}
