//! Beliefs as the ledger stores them: evidence-backed statements with ownership, versions,
//! supersession and validity windows (`beliefs`, `belief_evidence`), and the reads of
//! them. Governance (`crate::governance`) decides what a plan does to them; the rows and
//! their statements live here, behind the ledger boundary.

use crate::base::ProjectId;
use crate::ledger::rows::exec::{Arg, Exec, ExecExt as _, FromCell, Row, args};
use crate::ledger::rows::sqlite::Sqlite;
use crate::ledger::{EventId, Ledger, LedgerError, LedgerResult, Role};

crate::ledger::string_enum!(
    /// Whose belief it is. User-owned beliefs (preferences, goals, boundaries) need user
    /// evidence.
    Ownership {
        /// The user's own preference, goal or boundary.
        User = "user",
        /// A fact about the project.
        Project = "project",
        /// The agent's own working belief.
        Agent = "agent",
    }
);

crate::ledger::string_enum!(
    /// Lifecycle of a belief row.
    BeliefStatus {
        /// Proposed (e.g. by consolidation), not yet governed.
        Candidate = "candidate",
        /// Waiting for the user.
        NeedsConfirmation = "needs_confirmation",
        /// The current belief for its key (at most one per project and key).
        Active = "active",
        /// A contradiction without the support to replace the current belief.
        PossibleConflict = "possible_conflict",
        /// Replaced by a correction; its validity window is closed.
        Superseded = "superseded",
        /// Refused.
        Rejected = "rejected",
    }
);

crate::base::number_id!(
    /// Identifier of a belief row.
    BeliefId
);

impl std::fmt::Display for BeliefId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One belief version.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Belief {
    /// Row id.
    pub id: BeliefId,
    /// Project.
    pub project: String,
    /// Canonical key (e.g. `user.preference.editor_theme`).
    pub key: String,
    /// The statement as given.
    pub statement: String,
    /// Ownership.
    pub ownership: Ownership,
    /// The agent, for agent-owned beliefs.
    pub agent: Option<String>,
    /// Roles of the evidence events.
    pub source_roles: Vec<Role>,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// Status.
    pub status: BeliefStatus,
    /// Version within the key's lineage (each reinforcement or correction adds one).
    pub version: u64,
    /// Start of validity (ms).
    pub valid_from: i64,
    /// End of validity (ms, exclusive), once superseded.
    pub valid_to: Option<i64>,
    /// The belief this one replaced.
    pub supersedes: Option<BeliefId>,
    /// The belief that replaced this one.
    pub superseded_by: Option<BeliefId>,
    /// Evidence: raw event ids of the same project.
    pub evidence: Vec<EventId>,
}

/// Normalization used to decide that two statements say the same thing: Unicode NFKC +
/// lowercase; apostrophes dropped (`don't` = `dont`); every other character that is not a
/// letter or digit (punctuation, hyphens, symbols, any whitespace) is a word break, and
/// breaks collapse to one space. So `Test-suite  runs nightly.` and `test suite runs
/// nightly` are one statement (a reinforcement), while a changed word or number is not.
pub fn normalize_statement(s: &str) -> String {
    let lowered = crate::text::normalize(s);
    let mut out = String::with_capacity(lowered.len());
    let mut pending_space = false;
    for c in lowered.chars() {
        if matches!(c, '\'' | '\u{2019}' | '\u{02bc}') {
            continue;
        }
        if c.is_alphanumeric() {
            if pending_space && !out.is_empty() {
                out.push(' ');
            }
            pending_space = false;
            out.push(c);
        } else {
            pending_space = true;
        }
    }
    out
}

const BELIEF_COLUMNS: &str = "id, project, key, statement, ownership, agent, source_roles, \
    confidence, status, version, valid_from, valid_to, supersedes, superseded_by";

/// A belief from a row of [`BELIEF_COLUMNS`] (its evidence read apart).
fn row_to_belief(r: &Row) -> LedgerResult<Belief> {
    let ownership: String = r.get(4)?;
    let roles: String = r.get(6)?;
    let status: String = r.get(8)?;
    Ok(Belief {
        id: BeliefId(r.get(0)?),
        project: r.get(1)?,
        key: r.get(2)?,
        statement: r.get(3)?,
        ownership: Ownership::parse(&ownership)?,
        agent: r.get(5)?,
        source_roles: roles
            .split(',')
            .filter(|s| !s.is_empty())
            .map(Role::parse)
            .collect::<LedgerResult<_>>()?,
        confidence: r.get(7)?,
        status: BeliefStatus::parse(&status)?,
        version: r.get(9)?,
        valid_from: r.get(10)?,
        valid_to: r.get(11)?,
        supersedes: r.get::<Option<u64>>(12)?.map(BeliefId),
        superseded_by: r.get::<Option<u64>>(13)?.map(BeliefId),
        evidence: Vec::new(),
    })
}

impl Ledger {
    /// The active belief for `key` (never a superseded one).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn current_belief(&self, project: &ProjectId, key: &str) -> LedgerResult<Option<Belief>> {
        self.reading_beliefs(project.as_str(), |rows| rows.active(key))
    }

    /// The belief for `key` that was valid at time `at` (ms): the version whose window
    /// `[valid_from, valid_to)` contains it.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn belief_at(
        &self,
        project: &ProjectId,
        key: &str,
        at: i64,
    ) -> LedgerResult<Option<Belief>> {
        self.reading_beliefs(project.as_str(), |rows| rows.valid_at(key, at))
    }

    /// Every row for `key` (all statuses), oldest first.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn belief_history(&self, project: &ProjectId, key: &str) -> LedgerResult<Vec<Belief>> {
        self.reading_beliefs(project.as_str(), |rows| rows.history(key))
    }

    /// One belief row by id (`None` if absent or of another project).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn belief(&self, project: &ProjectId, id: BeliefId) -> LedgerResult<Option<Belief>> {
        self.reading_beliefs(project.as_str(), |rows| rows.belief(id))
    }

    /// `(belief id, key, version, status)` of every belief of `project` that cites `event`
    /// as evidence, oldest first (recall uses it to recognise evidence of superseded
    /// beliefs).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn beliefs_citing(
        &self,
        project: &ProjectId,
        event: crate::ledger::EventId,
    ) -> LedgerResult<Vec<(BeliefId, String, u64, BeliefStatus)>> {
        self.reading_beliefs(project.as_str(), |rows| rows.citing(event))
    }

    /// Whether `project` has any belief with `status` (one indexed lookup).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn has_beliefs_with_status(
        &self,
        project: &ProjectId,
        status: BeliefStatus,
    ) -> LedgerResult<bool> {
        self.reading_beliefs(project.as_str(), |rows| rows.any_with_status(status))
    }

    /// Beliefs of `project` with `status`, oldest first.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn beliefs_with_status(
        &self,
        project: &ProjectId,
        status: BeliefStatus,
    ) -> LedgerResult<Vec<Belief>> {
        self.reading_beliefs(project.as_str(), |rows| rows.with_status(status))
    }
}

/// A new belief row ([`BeliefRows::insert_belief`]).
pub(crate) struct NewBelief<'a> {
    pub key: &'a str,
    pub statement: &'a str,
    pub ownership: Ownership,
    pub agent: Option<&'a str>,
    pub roles: &'a str,
    pub confidence: f64,
    pub status: BeliefStatus,
    pub version: u64,
    pub valid_from: i64,
    pub supersedes: Option<BeliefId>,
}

/// One governance audit row as stored: operation index, operation name, belief, detail
/// (JSON).
pub(crate) type AuditFields = (usize, String, Option<BeliefId>, String);

/// The belief and governance-plan tables (`beliefs`, `belief_evidence`,
/// `governance_plans`, `governance_op_keys`, `governance_audit`) as typed operations,
/// inside one transaction ([`Ledger::governing`]) or one read ([`Ledger::reading_beliefs`]):
/// what a governance plan reads while it is validated and writes once it is.
pub(crate) struct BeliefRows<'c> {
    exec: &'c dyn Exec,
    project: &'c str,
}

impl Ledger {
    /// Runs `f` over the belief tables of `project` in one write transaction, committed
    /// when it succeeds.
    pub(crate) fn governing<R>(
        &self,
        project: &str,
        f: impl FnOnce(&BeliefRows<'_>) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            return pg.governing(project, f);
        }
        self.write(|tx| f(&BeliefRows::new(&Sqlite::new(tx, self.path()), project)))
    }

    /// Runs `f` over the belief tables of `project`, reading.
    pub(crate) fn reading_beliefs<R>(
        &self,
        project: &str,
        f: impl FnOnce(&BeliefRows<'_>) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            return pg.reading_beliefs(project, f);
        }
        self.read(|c| f(&BeliefRows::new(&Sqlite::new(c, self.path()), project)))
    }
}

impl<'c> BeliefRows<'c> {
    /// The belief tables of `project` through `exec` (inside the caller's transaction).
    pub(crate) fn new(exec: &'c dyn Exec, project: &'c str) -> Self {
        Self { exec, project }
    }

    fn run(&self, sql: &str, args: &[Arg<'_>]) -> LedgerResult<()> {
        self.exec.run(sql, args).map(|_| ())
    }

    /// The beliefs a `SELECT {BELIEF_COLUMNS} …` gives, each with its evidence.
    fn beliefs(&self, sql: &str, args: &[Arg<'_>]) -> LedgerResult<Vec<Belief>> {
        let mut beliefs = self.exec.all(sql, args, row_to_belief)?;
        for b in &mut beliefs {
            b.evidence = self.evidence(b.id)?;
        }
        Ok(beliefs)
    }

    /// The first belief a `SELECT {BELIEF_COLUMNS} …` gives, with its evidence.
    fn first(&self, sql: &str, args: &[Arg<'_>]) -> LedgerResult<Option<Belief>> {
        Ok(self.beliefs(sql, args)?.into_iter().next())
    }

    /// The active belief of the project for `key`.
    pub fn active(&self, key: &str) -> LedgerResult<Option<Belief>> {
        self.first(
            &format!(
                "SELECT {BELIEF_COLUMNS} FROM beliefs WHERE project = ?1 AND key = ?2 AND status = 'active'"
            ),
            args![self.project, key],
        )
    }

    /// The belief for `key` valid at `at` (ms): the newest whose window holds it.
    pub fn valid_at(&self, key: &str, at: i64) -> LedgerResult<Option<Belief>> {
        self.first(
            &format!(
                "SELECT {BELIEF_COLUMNS} FROM beliefs WHERE project = ?1 AND key = ?2
                 AND status IN ('active', 'superseded') AND valid_from <= ?3
                 AND (valid_to IS NULL OR valid_to > ?3)
                 ORDER BY valid_from DESC, id DESC LIMIT 1"
            ),
            args![self.project, key, at],
        )
    }

    /// Every row for `key`, oldest first.
    pub fn history(&self, key: &str) -> LedgerResult<Vec<Belief>> {
        self.beliefs(
            &format!(
                "SELECT {BELIEF_COLUMNS} FROM beliefs WHERE project = ?1 AND key = ?2 ORDER BY id"
            ),
            args![self.project, key],
        )
    }

    /// The beliefs with `status`, oldest first.
    pub fn with_status(&self, status: BeliefStatus) -> LedgerResult<Vec<Belief>> {
        self.beliefs(
            &format!("SELECT {BELIEF_COLUMNS} FROM beliefs WHERE project = ?1 AND status = ?2 ORDER BY id"),
            args![self.project, status.as_str()],
        )
    }

    /// Whether any belief has `status`.
    pub fn any_with_status(&self, status: BeliefStatus) -> LedgerResult<bool> {
        Ok(self
            .exec
            .one(
                "SELECT EXISTS (SELECT 1 FROM beliefs WHERE project = ?1 AND status = ?2)",
                args![self.project, status.as_str()],
                |r| r.get(0),
            )?
            .unwrap_or(false))
    }

    /// `(belief id, key, version, status)` of every belief citing `event`, oldest first.
    pub fn citing(
        &self,
        event: EventId,
    ) -> LedgerResult<Vec<(BeliefId, String, u64, BeliefStatus)>> {
        self.exec.all(
            "SELECT b.id, b.key, b.version, b.status FROM belief_evidence e
             JOIN beliefs b ON b.id = e.belief_id
             WHERE e.event_id = ?2 AND e.project = ?1 AND b.project = ?1 ORDER BY b.id",
            args![self.project, event.0],
            |r| {
                let status: String = r.get(3)?;
                Ok((
                    BeliefId(r.get(0)?),
                    r.get(1)?,
                    r.get(2)?,
                    BeliefStatus::parse(&status)?,
                ))
            },
        )
    }

    /// The highest version any row of the project for `key` has (0 for none).
    pub fn max_version(&self, key: &str) -> LedgerResult<u64> {
        Ok(self
            .exec
            .one(
                "SELECT COALESCE(MAX(version), 0) FROM beliefs WHERE project = ?1 AND key = ?2",
                args![self.project, key],
                |r| r.get(0),
            )?
            .unwrap_or(0))
    }

    /// An event's project, role and time, if it exists.
    pub fn event_facts(&self, event: EventId) -> LedgerResult<Option<(String, Role, i64)>> {
        self.exec.one(
            "SELECT project, role, created_at FROM events WHERE id = ?1",
            args![event.0],
            |r| {
                let role: String = r.get(1)?;
                Ok((r.get(0)?, Role::parse(&role)?, r.get(2)?))
            },
        )
    }

    /// The events a stored belief cites, in id order.
    pub fn evidence(&self, belief: BeliefId) -> LedgerResult<Vec<EventId>> {
        self.exec.all(
            "SELECT event_id FROM belief_evidence WHERE belief_id = ?1 ORDER BY event_id",
            args![belief.0],
            |r| Ok(EventId(r.get(0)?)),
        )
    }

    /// A stored belief of the project with its evidence (`None` if absent or another
    /// project's).
    pub fn belief(&self, id: BeliefId) -> LedgerResult<Option<Belief>> {
        self.first(
            &format!("SELECT {BELIEF_COLUMNS} FROM beliefs WHERE project = ?1 AND id = ?2"),
            args![self.project, id.0],
        )
    }

    /// The hash a plan applied under `key` had, if one was.
    pub fn plan_hash(&self, key: &str) -> LedgerResult<Option<String>> {
        self.exec.one(
            "SELECT plan_hash FROM governance_plans WHERE project = ?1 AND idempotency_key = ?2",
            args![self.project, key],
            |r| r.get(0),
        )
    }

    /// The hash and belief of an operation applied under its own `key`, if one was.
    pub fn op_key(&self, key: &str) -> LedgerResult<Option<(String, Option<BeliefId>)>> {
        self.exec.one(
            "SELECT op_hash, belief_id FROM governance_op_keys WHERE project = ?1 AND op_key = ?2",
            args![self.project, key],
            |r| Ok((r.get(0)?, r.get::<Option<u64>>(1)?.map(BeliefId))),
        )
    }

    /// One column of a stored belief (refused as not found when there is none).
    fn column<T: FromCell>(&self, column: &str, id: BeliefId) -> LedgerResult<T> {
        self.exec
            .one(
                &format!("SELECT {column} FROM beliefs WHERE id = ?1"),
                args![id.0],
                |r| r.get(0),
            )?
            .ok_or(LedgerError::NotFound {
                what: "belief",
                id: id.0,
            })
    }

    /// The start of a stored belief's validity.
    pub fn valid_from(&self, id: BeliefId) -> LedgerResult<i64> {
        self.column("valid_from", id)
    }

    /// A stored belief's evidence roles, as stored (comma-separated).
    pub fn source_roles(&self, id: BeliefId) -> LedgerResult<String> {
        self.column("source_roles", id)
    }

    /// Closes `old`'s validity at `valid_to` (superseded), naming what replaced it when
    /// known (kept as it was otherwise).
    pub fn supersede(
        &self,
        old: BeliefId,
        valid_to: i64,
        by: Option<BeliefId>,
        now: i64,
    ) -> LedgerResult<()> {
        self.run(
            "UPDATE beliefs SET status = 'superseded', valid_to = ?2, updated_at = ?4,
                superseded_by = COALESCE(?3, superseded_by) WHERE id = ?1",
            args![old.0, valid_to, by.map(|b| b.0), now],
        )
    }

    /// Names the belief that replaced `old`.
    pub fn superseded_by(&self, old: BeliefId, by: BeliefId) -> LedgerResult<()> {
        self.run(
            "UPDATE beliefs SET superseded_by = ?2 WHERE id = ?1",
            args![old.0, by.0],
        )
    }

    /// Inserts a belief row of the project; returns its id.
    pub fn insert_belief(&self, b: &NewBelief<'_>, now: i64) -> LedgerResult<BeliefId> {
        let normalized = normalize_statement(b.statement);
        self.exec
            .insert(
                "INSERT INTO beliefs (project, key, statement, normalized, ownership, agent,
                    source_roles, confidence, status, version, valid_from, supersedes,
                    created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13) RETURNING id",
                args![
                    self.project,
                    b.key,
                    b.statement,
                    &normalized,
                    b.ownership.as_str(),
                    b.agent,
                    b.roles,
                    b.confidence,
                    b.status.as_str(),
                    b.version,
                    b.valid_from,
                    b.supersedes.map(|o| o.0),
                    now,
                ],
            )
            .map(BeliefId)
    }

    /// Adds evidence to a belief (evidence it cites already is kept once).
    pub fn add_evidence(&self, belief: BeliefId, evidence: &[EventId]) -> LedgerResult<()> {
        for e in evidence {
            self.run(
                "INSERT INTO belief_evidence (belief_id, event_id, project) VALUES (?1, ?2, ?3)
                 ON CONFLICT DO NOTHING",
                args![belief.0, e.0, self.project],
            )?;
        }
        Ok(())
    }

    /// Sets a belief's version and evidence roles (a reinforcement).
    pub fn reinforce(&self, id: BeliefId, version: u64, roles: &str, now: i64) -> LedgerResult<()> {
        self.run(
            "UPDATE beliefs SET version = ?2, source_roles = ?3, updated_at = ?4 WHERE id = ?1",
            args![id.0, version, roles, now],
        )
    }

    /// Makes a candidate belief the active one for its key.
    pub fn activate(
        &self,
        id: BeliefId,
        version: u64,
        valid_from: i64,
        supersedes: Option<BeliefId>,
        now: i64,
    ) -> LedgerResult<()> {
        self.run(
            "UPDATE beliefs SET status = 'active', version = ?2, valid_from = ?3, supersedes = ?4, updated_at = ?5 WHERE id = ?1",
            args![id.0, version, valid_from, supersedes.map(|o| o.0), now],
        )
    }

    /// Marks a belief rejected.
    pub fn reject(&self, id: BeliefId, now: i64) -> LedgerResult<()> {
        self.run(
            "UPDATE beliefs SET status = 'rejected', updated_at = ?2 WHERE id = ?1",
            args![id.0, now],
        )
    }

    /// Appends one audit row of plan `plan_key`.
    pub fn audit(&self, plan_key: &str, row: &AuditFields, at: i64) -> LedgerResult<()> {
        let (op_index, op, belief, detail) = row;
        self.run(
            "INSERT INTO governance_audit (project, plan_key, op_index, op, belief_id, detail, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            args![
                self.project,
                plan_key,
                *op_index as u64,
                op,
                belief.map(|b| b.0),
                detail,
                at
            ],
        )
    }

    /// Records an operation applied under its own key `op_key`.
    pub fn put_op_key(
        &self,
        op_key: &str,
        op_hash: &str,
        (plan_key, op_index): (&str, usize),
        belief: Option<BeliefId>,
        at: i64,
    ) -> LedgerResult<()> {
        self.run(
            "INSERT INTO governance_op_keys (project, op_key, op_hash, plan_key, op_index, belief_id, applied_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            args![self.project, op_key, op_hash, plan_key, op_index as u64, belief.map(|b| b.0), at],
        )
    }

    /// Records a plan applied under `key` with `hash`.
    pub fn put_plan(&self, key: &str, hash: &str, at: i64) -> LedgerResult<()> {
        self.run(
            "INSERT INTO governance_plans (project, idempotency_key, plan_hash, applied_at) VALUES (?1, ?2, ?3, ?4)",
            args![self.project, key, hash, at],
        )
    }

    /// The audit rows of plan `plan_key`, in operation order.
    pub fn audit_rows(&self, plan_key: &str) -> LedgerResult<Vec<AuditFields>> {
        self.exec.all(
            "SELECT op_index, op, belief_id, detail FROM governance_audit
             WHERE project = ?1 AND plan_key = ?2 ORDER BY op_index",
            args![self.project, plan_key],
            |r| {
                Ok((
                    r.get::<u64>(0)? as usize,
                    r.get(1)?,
                    r.get::<Option<u64>>(2)?.map(BeliefId),
                    r.get(3)?,
                ))
            },
        )
    }
}
