//! The boundary's contract: every operation of [`Rows`] with the same assertions on each
//! backend — the SQLite file always; PostgreSQL when the build has the `postgres` feature
//! and `HYPERMEM_TEST_POSTGRES_URL` names a server (the test command starts one; without
//! it the PostgreSQL half says loudly that it skips, and `HYPERMEM_REQUIRE_POSTGRES=1`
//! makes that a failure).

use super::{Census, Rows, Transition};
use crate::base::{ProjectId, Reason};
use crate::ledger::beliefs::{BeliefRows, NewBelief};
use crate::ledger::{BeliefId, BeliefStatus, Ownership};
use crate::ledger::{
    EventId, EventKind, EventLog, Ledger, LedgerConfig, LedgerError, LedgerResult, NewEvent, Role,
};

/// A ledger under test: its event log and its boundary.
trait Backend: Sync {
    fn log(&self) -> &dyn EventLog;
    fn write<R>(&self, f: impl FnOnce(&dyn Rows) -> LedgerResult<R>) -> LedgerResult<R>;
    fn read<R>(&self, f: impl FnOnce(&dyn Rows) -> LedgerResult<R>) -> LedgerResult<R>;
    fn govern<R>(
        &self,
        project: &str,
        f: impl FnOnce(&BeliefRows<'_>) -> LedgerResult<R>,
    ) -> LedgerResult<R>;
    fn beliefs<R>(
        &self,
        project: &str,
        f: impl FnOnce(&BeliefRows<'_>) -> LedgerResult<R>,
    ) -> LedgerResult<R>;
}

impl Backend for Ledger {
    fn log(&self) -> &dyn EventLog {
        self
    }
    fn write<R>(&self, f: impl FnOnce(&dyn Rows) -> LedgerResult<R>) -> LedgerResult<R> {
        self.writing(f)
    }
    fn read<R>(&self, f: impl FnOnce(&dyn Rows) -> LedgerResult<R>) -> LedgerResult<R> {
        self.reading(f)
    }
    fn govern<R>(
        &self,
        project: &str,
        f: impl FnOnce(&BeliefRows<'_>) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        self.governing(project, f)
    }
    fn beliefs<R>(
        &self,
        project: &str,
        f: impl FnOnce(&BeliefRows<'_>) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        self.reading_beliefs(project, f)
    }
}

fn event(p: &str, role: Role, agent: Option<&str>, text: &str, at: i64) -> NewEvent {
    let e = NewEvent::new(ProjectId::new(p).unwrap(), role, EventKind::Message, text)
        .thread("t")
        .session("s")
        .at(at);
    match agent {
        Some(a) => e.agent(a),
        None => e,
    }
}

/// The reason a failed write gives.
fn reason(e: &LedgerError) -> Option<Reason> {
    match e {
        LedgerError::Sqlite { source, .. } => Some(crate::ledger::sqlite_failure(source).0),
        #[cfg(feature = "postgres")]
        LedgerError::Postgres { source } => {
            Some(crate::ledger::postgres::postgres_failure(source).0)
        }
        _ => None,
    }
}

/// Every clause, on projects named after `tag` (a shared server keeps runs apart).
#[allow(clippy::too_many_lines)]
fn contract(b: &impl Backend, backend: &str, tag: &str) {
    let p = format!("{tag}-p");
    let q = format!("{tag}-q");
    let (p, q) = (p.as_str(), q.as_str());
    let r = |f: &dyn Fn(&dyn Rows) -> LedgerResult<()>| b.write(f).unwrap();

    // Nothing of a project before its first write.
    assert!(!b.read(|x| x.project_held(p)).unwrap(), "{backend}");
    let ids: Vec<u64> = b
        .log()
        .append_batch(&[
            event(p, Role::User, Some("ag"), "Where is the key? ", 1_000),
            event(p, Role::Assistant, Some("ag"), "Under the mat.", 2_000),
            event(p, Role::User, None, "Bread is 2 € now.", 3_000),
            event(q, Role::User, None, "Another project.", 4_000),
        ])
        .unwrap()
        .into_iter()
        .map(|EventId(i)| i)
        .collect();
    let (ask, answer, loose, other) = (ids[0], ids[1], ids[2], ids[3]);
    assert!(b.read(|x| x.project_held(p)).unwrap(), "{backend}");

    // Synapses: inserted, updated in place, found from either end, per project.
    r(&|x| {
        x.put_synapse(p, (1, 2), (0.5, 10), false)?;
        x.put_synapse(p, (1, 2), (0.75, 20), true)?;
        x.put_synapse(p, (2, 3), (0.25, 30), false)?;
        x.put_synapse(q, (1, 2), (0.9, 40), false)
    });
    b.read(|x| {
        assert_eq!(x.synapse(p, 1, 2)?, Some((0.75, 20)), "{backend}");
        assert_eq!(x.synapse(p, 1, 3)?, None);
        let mut of2 = x.synapses_of(p, 2)?;
        of2.sort_by_key(|s| s.0);
        assert_eq!(of2, vec![(1, (0.75, 20)), (3, (0.25, 30))], "{backend}");
        assert_eq!(x.census(p, Census::Synapses)?, 2);
        assert_eq!(
            x.synapse_hubs(p, 1)?,
            vec![(2, 2, 1.0)],
            "{backend}: memory 2 holds both synapses"
        );
        Ok(())
    })
    .unwrap();

    // The query log keeps gaps apart; an access counts two the first time, then one, and
    // the last access never goes back.
    r(&|x| {
        x.log_query(p, "what key", (0.4, false), "[1]", 100)?;
        x.log_query(p, "blood type", (0.01, true), "[]", 200)?;
        x.count_accesses(p, &[ask, ask], 500)?;
        x.count_accesses(p, &[ask], 300)?;
        x.count_accesses(p, &[], 300)
    });
    b.read(|x| {
        assert_eq!(
            x.gap_queries(p)?,
            vec![("blood type".to_owned(), 200, 0.01, "[]".to_owned())],
            "{backend}"
        );
        let traces = x.traces()?;
        let mine: Vec<_> = traces.iter().filter(|t| t.0 == p).collect();
        assert_eq!(mine.len(), 3, "{backend}: every event of the project");
        let t = mine.iter().find(|t| t.1 == ask).unwrap();
        assert_eq!(
            (t.3, t.4, t.5),
            (Some(1.0), Some(3), Some(500)),
            "{backend}"
        );
        let untouched = mine.iter().find(|t| t.1 == answer).unwrap();
        assert_eq!((untouched.3, untouched.4), (None, None));
        assert_eq!(
            x.events_after(p, ask as i64)?,
            (loose as i64, 2),
            "{backend}"
        );
        assert_eq!(x.events_after(p, loose as i64)?, (0, 0));
        Ok(())
    })
    .unwrap();

    // Metrics and proposals.
    r(&|x| {
        x.put_metric(p, ("hit", 1.0), "w", 1)?;
        x.put_metric(p, ("hit", 0.5), "w", 2)?;
        x.put_metric(p, ("hit", 0.0), "w", 3)?;
        let id = x.add_proposal(p, ("r", "t", "why"), "{}", 5)?;
        assert_eq!(x.pending_proposal(p, "r")?, Some(id));
        x.set_proposal_status(p, id, "accepted", 6)
    });
    b.read(|x| {
        assert_eq!(
            x.metric_mean(p, "hit", 2)?,
            Some(0.25),
            "{backend}: the newest two"
        );
        assert_eq!(x.metric_mean(p, "miss", 2)?, None);
        assert_eq!(x.latest_metric(p, "hit")?, 0.0);
        assert_eq!(x.pending_proposal(p, "r")?, None, "{backend}");
        let props = x.proposals(p)?;
        assert_eq!(props.len(), 1);
        assert_eq!(props[0].5, "accepted");
        Ok(())
    })
    .unwrap();

    // Procedures: outcomes counted, an unknown one reported, one or all listed.
    let proc_id = b
        .write(|x| {
            let id = x.add_procedure(p, ("deploy", "ship it"), &[1, 2, 3], "[\"a\"]", 7)?;
            assert!(x.procedure_outcome(p, id, true, 8)?);
            assert!(x.procedure_outcome(p, id, false, 9)?);
            assert!(x.procedure_outcome(p, id, true, 9)?);
            assert!(!x.procedure_outcome(q, id, true, 9)?, "another project's");
            x.add_procedure(p, ("other", "x"), &[], "[]", 7)?;
            Ok(id)
        })
        .unwrap();
    b.read(|x| {
        let one = x.procedures(p, Some(proc_id))?;
        assert_eq!(one.len(), 1, "{backend}");
        assert_eq!(
            one[0],
            (
                proc_id,
                "deploy".into(),
                "ship it".into(),
                vec![1, 2, 3],
                "[\"a\"]".into(),
                2,
                1
            )
        );
        assert_eq!(x.procedures(p, None)?.len(), 2);
        Ok(())
    })
    .unwrap();

    // Episodes: started, linked, events placed, questions opened and answered, sealed.
    let (e1, e2) = b
        .write(|x| {
            let e1 = x.start_episode(p, "ag", 1_000, None)?;
            x.add_episode_event(p, e1, (0, ask), &[0xaa])?;
            x.add_open_question(p, e1, (0, ask))?;
            x.add_episode_event(p, e1, (1, answer), &[0xbb])?;
            x.episode_activity(e1, "open", 2_000, true)?;
            x.episode_activity(e1, "soft_sealed", 9_999, false)?;
            let e2 = x.start_episode(p, "ag", 5_000, Some(e1))?;
            Ok((e1, e2))
        })
        .unwrap();
    b.read(|x| {
        assert_eq!(
            x.last_episode(p, "ag")?,
            Some((e2, "open".into())),
            "{backend}"
        );
        assert_eq!(x.open_episode(p, "ag")?, Some(e2));
        assert_eq!(x.episode_status(p, e1)?, Some(("soft_sealed".into(), 2)));
        assert_eq!(
            x.episode_status(q, e1)?,
            None,
            "{backend}: another project's"
        );
        let rec = x.episode_record(p, e1)?.unwrap();
        assert_eq!((rec.4, rec.5), (None, Some(e2)), "{backend}: linked");
        assert_eq!(x.episode_events(e1)?, vec![ask, answer]);
        assert_eq!(
            x.episode_vectors(e1)?,
            vec![(0, vec![0xaa]), (1, vec![0xbb])]
        );
        assert_eq!(x.position_in(e1, answer)?, Some(1));
        assert_eq!(x.event_project(other)?, Some(q.to_owned()));
        assert_eq!(
            x.event_time_and_content(answer)?,
            Some((2_000, "Under the mat.".into()))
        );
        assert_eq!(
            x.event_asks(ask)?,
            Some((true, true)),
            "{backend}: a trailing space"
        );
        assert_eq!(x.event_asks(answer)?, Some((false, false)));
        assert_eq!(x.last_event_time(e1)?, Some(2_000));
        assert_eq!(
            x.open_questions(p, 5)?,
            vec![(e1, ask, "Where is the key? ".into())]
        );
        assert_eq!(
            x.idle_episodes(p, 3_000, 10)?,
            vec![(e1, "soft_sealed".into(), 2_000)],
            "{backend}: untouched activity keeps the time"
        );
        assert_eq!(
            x.episode_contents(p, e1, 1)?,
            vec!["Where is the key? ".to_owned()]
        );
        let newest = x.newest_episodes(p, 1)?;
        assert_eq!(newest[0].0, e2);
        assert_eq!(x.census(p, Census::Episodes)?, 2);
        assert_eq!(x.census(p, Census::Threads)?, 1);
        Ok(())
    })
    .unwrap();
    r(&|x| {
        x.answer_open_questions(e1, 1)?;
        x.seal_episode(e1, 3_000, (Some("ok"), None), (Some(&[1]), Some(&[9, 9])))?;
        x.complete_outcome(e1, Some("ignored"), Some(0.5))?;
        x.set_episode_status(p, e2, "soft_sealed")
    });
    b.read(|x| {
        assert!(x.open_questions(p, 5)?.is_empty(), "{backend}: answered");
        assert_eq!(
            x.episode_outcome(e1)?,
            (Some("ok".into()), Some(0.5)),
            "{backend}: only what was missing is completed"
        );
        assert_eq!(x.sealed_topics(p)?, vec![(e1, vec![9, 9])]);
        assert_eq!(x.sealed_count(p)?, 1);
        assert_eq!(x.newest_sealed_episodes(p, 5)?, vec![e1]);
        assert_eq!(x.unconsolidated_count(p)?, 1);
        assert_eq!(
            x.unconsolidated_episodes(p, 5)?,
            vec![(e1, vec![9, 9], Some(0.5))]
        );
        assert_eq!(x.uncurated_episodes(p, 5)?, vec![e1]);
        assert_eq!(x.unassociated_episodes(p, 5)?, vec![e1]);
        let texts = x.episode_texts(p, e1)?;
        assert!(texts[0].0, "{backend}: a user's turn");
        assert_eq!(texts[1], (false, "Under the mat.".into()));
        Ok(())
    })
    .unwrap();

    // Concepts: made, joined, merged, labelled, retired.
    let (c1, c2, e3) = b
        .write(|x| {
            let c1 = x.new_concept(p, ("keys", e1), (&[1], &[2]), (1, 0), 10)?;
            let e3 = x.start_episode(p, "ag", 6_000, Some(e2))?;
            x.seal_episode(e3, 6_500, (None, None), (None, Some(&[7])))?;
            let c2 = x.new_concept(p, ("mats", e3), (&[3], &[4]), (0, 1), 11)?;
            x.join_concept(p, (c1, e2), (&[5], &[6]), (1, 0), 12)?;
            Ok((c1, c2, e3))
        })
        .unwrap();
    b.read(|x| {
        assert_eq!(
            x.unconsolidated_count(p)?,
            0,
            "{backend}: every episode taken up"
        );
        assert_eq!(x.concept_ids(p)?, vec![c1, c2]);
        let mut members = x.concept_members(c1)?;
        members.sort_unstable();
        assert_eq!(members, vec![e1, e2]);
        assert_eq!(x.concept_counters(c1)?, Some(vec![5]));
        assert_eq!(x.supported_concepts(p, 1)?, vec![(c1, "keys".into(), 2)]);
        assert_eq!(
            x.concepts_beyond(p, 1)?,
            vec![c2],
            "{backend}: beyond the best one"
        );
        assert_eq!(x.unsummarized_concepts(p, 5)?, vec![(c1, "keys".into())]);
        assert_eq!(x.concept_episodes(c1)?, vec![e1, e2]);
        assert_eq!(x.lonely_concepts(p, 1)?, Vec::<u64>::new(), "{backend}");
        Ok(())
    })
    .unwrap();
    r(&|x| {
        x.merge_concepts((c2, c1), (&[8], &[9]), 3, 13)?;
        x.label_concepts(&[(c1, "keys and mats".into())])?;
        x.set_concept_vectors(c1, (&[10], &[11]))
    });
    b.read(|x| {
        let recs = x.concept_records(p)?;
        assert_eq!(
            recs,
            vec![(c1, "keys and mats".into(), vec![11], 2, 1)],
            "{backend}: outcomes summed"
        );
        assert_eq!(x.concept_prototypes(p)?, vec![(c1, vec![11])]);
        assert_eq!(x.census(p, Census::Concepts)?, 1);
        Ok(())
    })
    .unwrap();
    r(&|x| x.delete_concepts(&[c1]));
    assert_eq!(b.read(|x| x.concept_ids(p)).unwrap(), Vec::<u64>::new());

    // Associations and curation.
    r(&|x| {
        x.add_association(p, e1, ("keys relate to mats", 0.7), "[1]", 20)?;
        x.mark_curated(e1)
    });
    b.read(|x| {
        assert_eq!(x.unassociated_episodes(p, 5)?, vec![e3], "{backend}");
        let a = x.candidate_associations(p, 5)?;
        assert_eq!((a[0].1, a[0].3), (e1, 0.7));
        assert_eq!(
            x.uncurated_episodes(p, 5)?,
            vec![e3],
            "{backend}: e1 curated"
        );
        assert_eq!(
            x.loose_events(p, 5)?,
            vec![(loose, "user".into(), "Bread is 2 € now.".into())],
            "{backend}: an event without an agent, outside every episode"
        );
        Ok(())
    })
    .unwrap();
    r(&|x| {
        x.move_curation_mark(p, loose)?;
        x.move_curation_mark(p, ask)
    });
    assert!(
        b.read(|x| x.loose_events(p, 5)).unwrap().is_empty(),
        "{backend}: the mark never moves back"
    );

    // The map and the store's listings.
    b.read(|x| {
        assert_eq!(x.event_span(p)?, Some((1_000, 3_000)), "{backend}");
        assert_eq!(x.event_span(&format!("{tag}-none"))?, None);
        assert_eq!(
            x.role_counts(p)?,
            vec![("user".into(), 2), ("assistant".into(), 1)]
        );
        assert!(x.belief_status_counts(p)?.is_empty());
        assert_eq!(
            x.largest_threads(p, 5)?,
            vec![("t".into(), 3, (1_000, 3_000))]
        );
        assert!(x.event_projects()?.iter().any(|n| n == p));
        assert_eq!(x.event_ids(p)?, vec![ask, answer, loose]);
        assert_eq!(x.census(p, Census::Procedures)?, 2);
        assert_eq!(x.plan_belief(p, "nothing")?, None);
        Ok(())
    })
    .unwrap();

    // Prospective items: added, confirmed, deferred, due, expired, every change kept.
    let (i1, i2) = b
        .write(|x| {
            let i1 = x.add_prospective(p, ("reminder", "call"), ask, Some(50), 40)?;
            let i2 = x.add_prospective(p, ("intention", "paint"), ask, Some(10), 40)?;
            x.confirm_prospective(p, i1, answer, 41)?;
            x.record_prospective(
                p,
                &Transition {
                    item: i1,
                    at: 41,
                    op: "confirm",
                    from: Some("pending"),
                    to: "confirmed",
                    event: Some(answer),
                    due_at: Some(50),
                },
            )?;
            x.set_prospective(p, i1, ("deferred", Some(60)), 42)?;
            Ok((i1, i2))
        })
        .unwrap();
    b.read(|x| {
        let item = x.prospective_item(p, i1)?.unwrap();
        assert_eq!(
            (item.4.as_str(), item.6, item.7),
            ("deferred", Some(60), Some(answer))
        );
        assert_eq!(
            x.prospective_item(q, i1)?,
            None,
            "{backend}: another project's"
        );
        assert_eq!(x.items_from(p, ask, "intention")?[0].0, i2);
        assert_eq!(x.confirmed_by(answer)?, Some(i1));
        assert_eq!(x.due_prospective(p, 59)?, vec![], "{backend}: not yet due");
        assert_eq!(x.due_prospective(p, 60)?[0].0, i1);
        assert_eq!(x.census(p, Census::OpenProspective)?, 2);
        Ok(())
    })
    .unwrap();
    assert_eq!(
        b.write(|x| x.expire_prospective(p, 20)).unwrap(),
        1,
        "{backend}"
    );
    b.read(|x| {
        assert_eq!(x.prospective_item(p, i2)?.unwrap().4, "expired");
        let changes = x.prospective_changes(p, i2)?;
        assert_eq!(
            changes,
            vec![(
                20,
                "expire".into(),
                Some("pending".into()),
                "expired".into(),
                None,
                Some(10)
            )],
            "{backend}"
        );
        assert_eq!(x.prospective_changes(p, i1)?.len(), 1);
        Ok(())
    })
    .unwrap();

    // Beliefs: inserted with evidence, activated, superseded, audited; plans and
    // operation keys recorded once.
    let new = |key: &'static str, statement: &'static str, version: u64, status| NewBelief {
        key,
        statement,
        ownership: Ownership::User,
        agent: None,
        roles: "user",
        confidence: 0.9,
        status,
        version,
        valid_from: 1_000,
        supersedes: None,
    };
    let (b1, b2) = b
        .govern(p, |x| {
            let b1 = x.insert_belief(
                &new("bread", "Bread is 1 €.", 1, BeliefStatus::Candidate),
                50,
            )?;
            x.add_evidence(b1, &[EventId(ask), EventId(ask)])?;
            x.activate(b1, 1, 1_000, None, 51)?;
            let b2 = x.insert_belief(
                &new("bread", "Bread is 2 €!", 2, BeliefStatus::Candidate),
                52,
            )?;
            x.add_evidence(b2, &[EventId(loose)])?;
            x.supersede(b1, 3_000, None, 53)?;
            x.superseded_by(b1, b2)?;
            x.activate(b2, 2, 3_000, Some(b1), 53)?;
            x.reinforce(b2, 3, "user,assistant", 54)?;
            x.audit("plan-1", &(0, "add".into(), Some(b2), "{}".into()), 54)?;
            x.audit("plan-1", &(1, "note".into(), None, "{\"n\":1}".into()), 54)?;
            x.put_op_key("op-1", "h1", ("plan-1", 0), Some(b2), 54)?;
            x.put_plan("plan-1", "hash-1", 54)?;
            Ok((b1, b2))
        })
        .unwrap();
    b.beliefs(p, |x| {
        let active = x.active("bread")?.unwrap();
        assert_eq!((active.id, active.version), (b2, 3), "{backend}");
        assert_eq!(active.statement, "Bread is 2 €!");
        assert_eq!(active.source_roles, vec![Role::User, Role::Assistant]);
        assert_eq!(active.supersedes, Some(b1));
        let old = x.belief(b1)?.unwrap();
        assert_eq!(
            (old.status, old.valid_to, old.superseded_by),
            (BeliefStatus::Superseded, Some(3_000), Some(b2)),
            "{backend}"
        );
        assert_eq!(
            old.evidence,
            vec![EventId(ask)],
            "{backend}: evidence kept once"
        );
        assert_eq!(
            x.valid_at("bread", 2_000)?.unwrap().id,
            b1,
            "{backend}: then"
        );
        assert_eq!(
            x.valid_at("bread", 3_000)?.unwrap().id,
            b2,
            "{backend}: now"
        );
        assert_eq!(x.valid_at("bread", 500)?, None);
        assert_eq!(x.history("bread")?.len(), 2);
        assert_eq!(x.max_version("bread")?, 3);
        assert_eq!(x.max_version("milk")?, 0);
        assert_eq!(x.valid_from(b2)?, 3_000);
        assert_eq!(x.source_roles(b2)?, "user,assistant");
        assert!(matches!(
            x.valid_from(BeliefId(987_654_321)),
            Err(LedgerError::NotFound { what: "belief", .. })
        ));
        assert!(x.any_with_status(BeliefStatus::Superseded)?);
        assert!(!x.any_with_status(BeliefStatus::Rejected)?);
        assert_eq!(x.with_status(BeliefStatus::Active)?.len(), 1);
        assert_eq!(
            x.citing(EventId(loose))?,
            vec![(b2, "bread".into(), 3, BeliefStatus::Active)]
        );
        assert_eq!(
            x.event_facts(EventId(loose))?,
            Some((p.to_owned(), Role::User, 3_000))
        );
        assert_eq!(x.event_facts(EventId(987_654_321))?, None);
        assert_eq!(x.plan_hash("plan-1")?.as_deref(), Some("hash-1"));
        assert_eq!(x.plan_hash("plan-2")?, None);
        assert_eq!(x.op_key("op-1")?, Some(("h1".into(), Some(b2))));
        assert_eq!(
            x.audit_rows("plan-1")?,
            vec![
                (0, "add".into(), Some(b2), "{}".into()),
                (1, "note".into(), None, "{\"n\":1}".into())
            ],
            "{backend}"
        );
        Ok(())
    })
    .unwrap();
    b.beliefs(q, |x| {
        assert_eq!(x.active("bread")?, None, "{backend}: another project's");
        assert_eq!(x.belief(b2)?, None);
        Ok(())
    })
    .unwrap();
    b.read(|x| {
        assert_eq!(x.plan_belief(p, "plan-1")?, Some(b2.0), "{backend}");
        assert_eq!(
            x.belief_status_counts(p)?,
            vec![("active".into(), 1), ("superseded".into(), 1)]
        );
        Ok(())
    })
    .unwrap();
    // A second active belief for a key, or a plan key used twice, is a named conflict.
    for (what, err) in [
        (
            "two active",
            b.govern(p, |x| {
                let b3 = x.insert_belief(
                    &new("bread", "Bread is 3 €.", 4, BeliefStatus::Candidate),
                    60,
                )?;
                x.activate(b3, 4, 4_000, None, 60)
            }),
        ),
        (
            "a plan key twice",
            b.govern(p, |x| x.put_plan("plan-1", "other", 61)),
        ),
    ] {
        let err = err.unwrap_err();
        assert_eq!(
            reason(&err),
            Some(Reason::Conflict),
            "{backend}: {what}: {err}"
        );
    }
    assert_eq!(
        b.beliefs(p, |x| x.history("bread")).unwrap().len(),
        2,
        "{backend}: the refused plan left nothing"
    );
    b.govern(p, |x| x.reject(b1, 70)).unwrap();
    assert_eq!(
        b.beliefs(p, |x| x.belief(b1)).unwrap().unwrap().status,
        BeliefStatus::Rejected
    );

    // A failed operation writes nothing; a broken reference is a named conflict.
    let before = b.read(|x| x.procedures(p, None)).unwrap().len();
    let refused = b.write(|x| {
        x.add_procedure(p, ("half", "x"), &[], "[]", 1)?;
        x.add_association(p, 987_654_321, ("no such episode", 0.1), "[]", 1)
    });
    let err = refused.unwrap_err();
    assert_eq!(reason(&err), Some(Reason::Conflict), "{backend}: {err}");
    assert_eq!(
        b.read(|x| x.procedures(p, None)).unwrap().len(),
        before,
        "{backend}: the whole transaction rolled back"
    );
    let err = b
        .write(|x| -> LedgerResult<()> {
            x.add_procedure(p, ("half", "x"), &[], "[]", 1)?;
            Err(LedgerError::Invalid {
                what: "test",
                reason: "the caller gave up".into(),
            })
        })
        .unwrap_err();
    assert!(matches!(err, LedgerError::Invalid { .. }));
    assert_eq!(b.read(|x| x.procedures(p, None)).unwrap().len(), before);
}

/// Two nodes (two handles on one store) apply plans to one project at once, each reading
/// the highest version and writing the next: the plans run one at a time, so no version
/// is written twice.
fn plans_apply_one_at_a_time(nodes: [&impl Backend; 2], backend: &str, tag: &str) {
    let p = format!("{tag}-plans");
    let p = p.as_str();
    const EACH: u64 = 15;
    std::thread::scope(|s| {
        for node in nodes {
            s.spawn(move || {
                for _ in 0..EACH {
                    node.govern(p, |x| {
                        let next = x.max_version("k")? + 1;
                        // Widen the window between the read and the write.
                        std::thread::sleep(std::time::Duration::from_millis(2));
                        x.insert_belief(
                            &NewBelief {
                                key: "k",
                                statement: "v",
                                ownership: Ownership::Project,
                                agent: None,
                                roles: "user",
                                confidence: 0.5,
                                status: BeliefStatus::Candidate,
                                version: next,
                                valid_from: 0,
                                supersedes: None,
                            },
                            0,
                        )
                        .map(|_| ())
                    })
                    .unwrap();
                }
            });
        }
    });
    let mut versions: Vec<u64> = nodes[0]
        .beliefs(p, |x| x.history("k"))
        .unwrap()
        .iter()
        .map(|b| b.version)
        .collect();
    versions.sort_unstable();
    assert_eq!(
        versions,
        (1..=2 * EACH).collect::<Vec<_>>(),
        "{backend}: every plan saw the one before"
    );
}

#[test]
fn the_boundary_contract_holds_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.db");
    let ledger = Ledger::open(&path, LedgerConfig::default()).unwrap();
    contract(&ledger, "sqlite", "c");
    let other = Ledger::open(&path, LedgerConfig::default()).unwrap();
    plans_apply_one_at_a_time([&ledger, &other], "sqlite", "c");
}

#[cfg(feature = "postgres")]
#[test]
fn the_boundary_contract_holds_on_postgres() {
    let Ok(url) = std::env::var("HYPERMEM_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var("HYPERMEM_REQUIRE_POSTGRES").as_deref() != Ok("1"),
            "HYPERMEM_REQUIRE_POSTGRES=1 but HYPERMEM_TEST_POSTGRES_URL is not set"
        );
        eprintln!(
            "!! SKIP: HYPERMEM_TEST_POSTGRES_URL is not set: the PostgreSQL ledger boundary is NOT tested (scripts/test.sh starts a server)"
        );
        return;
    };
    let pg = Ledger::connect(&url, LedgerConfig::default()).unwrap();
    let tag = format!(
        "rows-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    contract(&pg, "postgres", &tag);
    let other = Ledger::connect(&url, LedgerConfig::default()).unwrap();
    plans_apply_one_at_a_time([&pg, &other], "postgres", &tag);
}
