use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::base::ProjectId;
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

pub(crate) const BELIEF_COLUMNS: &str = "id, project, key, statement, ownership, agent, source_roles, \
    confidence, status, version, valid_from, valid_to, supersedes, superseded_by";

pub(crate) fn row_to_belief(r: &Row<'_>) -> rusqlite::Result<Belief> {
    let err = |i: usize, e: LedgerError| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    };
    let ownership: String = r.get(4)?;
    let roles: String = r.get(6)?;
    let status: String = r.get(8)?;
    Ok(Belief {
        id: BeliefId(r.get::<_, i64>(0)? as u64),
        project: r.get(1)?,
        key: r.get(2)?,
        statement: r.get(3)?,
        ownership: Ownership::parse(&ownership).map_err(|e| err(4, e))?,
        agent: r.get(5)?,
        source_roles: roles
            .split(',')
            .filter(|s| !s.is_empty())
            .map(Role::parse)
            .collect::<LedgerResult<_>>()
            .map_err(|e| err(6, e))?,
        confidence: r.get(7)?,
        status: BeliefStatus::parse(&status).map_err(|e| err(8, e))?,
        version: r.get::<_, i64>(9)? as u64,
        valid_from: r.get(10)?,
        valid_to: r.get(11)?,
        supersedes: r.get::<_, Option<i64>>(12)?.map(|v| BeliefId(v as u64)),
        superseded_by: r.get::<_, Option<i64>>(13)?.map(|v| BeliefId(v as u64)),
        evidence: Vec::new(),
    })
}

pub(crate) fn evidence_of(c: &Connection, id: BeliefId) -> rusqlite::Result<Vec<EventId>> {
    let mut stmt = c.prepare_cached(
        "SELECT event_id FROM belief_evidence WHERE belief_id = ?1 ORDER BY event_id",
    )?;
    stmt.query_map([id.0 as i64], |r| Ok(EventId(r.get::<_, i64>(0)? as u64)))?
        .collect()
}

pub(crate) fn query_beliefs(
    c: &Connection,
    sql: &str,
    args: impl rusqlite::Params,
) -> rusqlite::Result<Vec<Belief>> {
    let mut stmt = c.prepare_cached(sql)?;
    let mut beliefs: Vec<Belief> = stmt
        .query_map(args, row_to_belief)?
        .collect::<rusqlite::Result<_>>()?;
    for b in &mut beliefs {
        b.evidence = evidence_of(c, b.id)?;
    }
    Ok(beliefs)
}

pub(crate) fn active_of(
    c: &Connection,
    project: &str,
    key: &str,
) -> rusqlite::Result<Option<Belief>> {
    let sql = format!(
        "SELECT {BELIEF_COLUMNS} FROM beliefs WHERE project = ?1 AND key = ?2 AND status = 'active'"
    );
    let mut stmt = c.prepare_cached(&sql)?;
    let found = stmt
        .query_row(params![project, key], row_to_belief)
        .optional()?;
    match found {
        Some(mut b) => {
            b.evidence = evidence_of(c, b.id)?;
            Ok(Some(b))
        }
        None => Ok(None),
    }
}

impl Ledger {
    /// The active belief for `key` (never a superseded one).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn current_belief(&self, project: &ProjectId, key: &str) -> LedgerResult<Option<Belief>> {
        self.read(|c| active_of(c, project.as_str(), key).map_err(|e| self.sql(e)))
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
        self.read(|c| {
            let sql = format!(
                "SELECT {BELIEF_COLUMNS} FROM beliefs WHERE project = ?1 AND key = ?2
                 AND status IN ('active', 'superseded') AND valid_from <= ?3
                 AND (valid_to IS NULL OR valid_to > ?3)
                 ORDER BY valid_from DESC, id DESC LIMIT 1"
            );
            Ok(query_beliefs(c, &sql, params![project.as_str(), key, at])
                .map_err(|e| self.sql(e))?
                .into_iter()
                .next())
        })
    }

    /// Every row for `key` (all statuses), oldest first.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn belief_history(&self, project: &ProjectId, key: &str) -> LedgerResult<Vec<Belief>> {
        self.read(|c| {
            let sql = format!(
                "SELECT {BELIEF_COLUMNS} FROM beliefs WHERE project = ?1 AND key = ?2 ORDER BY id"
            );
            query_beliefs(c, &sql, params![project.as_str(), key]).map_err(|e| self.sql(e))
        })
    }

    /// One belief row by id (`None` if absent or of another project).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn belief(&self, project: &ProjectId, id: BeliefId) -> LedgerResult<Option<Belief>> {
        self.read(|c| {
            let sql =
                format!("SELECT {BELIEF_COLUMNS} FROM beliefs WHERE project = ?1 AND id = ?2");
            Ok(
                query_beliefs(c, &sql, params![project.as_str(), id.0 as i64])
                    .map_err(|e| self.sql(e))?
                    .into_iter()
                    .next(),
            )
        })
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
        self.read(|c| {
            let rows: Vec<(i64, String, i64, String)> = c
                .prepare_cached(
                    "SELECT b.id, b.key, b.version, b.status FROM belief_evidence e
                     JOIN beliefs b ON b.id = e.belief_id
                     WHERE e.event_id = ?2 AND e.project = ?1 AND b.project = ?1 ORDER BY b.id",
                )
                .and_then(|mut s| {
                    s.query_map(params![project.as_str(), event.0 as i64], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                    })?
                    .collect()
                })
                .map_err(|e| self.sql(e))?;
            rows.into_iter()
                .map(|(id, key, version, status)| {
                    Ok((
                        BeliefId(id as u64),
                        key,
                        version as u64,
                        BeliefStatus::parse(&status)?,
                    ))
                })
                .collect()
        })
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
        self.read(|c| {
            c.prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM beliefs WHERE project = ?1 AND status = ?2)",
            )
            .and_then(|mut s| s.query_row(params![project.as_str(), status.as_str()], |r| r.get(0)))
            .map_err(|e| self.sql(e))
        })
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
        self.read(|c| {
            let sql = format!("SELECT {BELIEF_COLUMNS} FROM beliefs WHERE project = ?1 AND status = ?2 ORDER BY id");
            query_beliefs(c, &sql, params![project.as_str(), status.as_str()]).map_err(|e| self.sql(e))
        })
    }
}
