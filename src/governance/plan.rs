//! Governance plans: a list of belief operations with evidence, expected versions and an
//! idempotency key. A plan is validated completely — every decision resolved — before its
//! first write; then its writes and one audit row per operation commit in one transaction.
//! Re-running an applied plan reports [`PlanOutcome::AlreadyApplied`] and writes nothing.

use std::collections::{HashMap, HashSet};

use xxhash_rust::xxh3::xxh3_64;

use crate::base::ProjectId;
use crate::ledger::beliefs::{
    BeliefId, BeliefRows, BeliefStatus, NewBelief, Ownership, normalize_statement,
};
use crate::ledger::{EventId, Ledger, LedgerResult, Role};

fn one() -> f64 {
    1.0
}

/// One belief operation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Op {
    /// State a belief. No active belief for the key → it becomes active; the same
    /// (normalized) statement is active → reinforcement; a different one is active → stored
    /// as `possible_conflict` and the current belief stays active (an unsupported
    /// contradiction: replacing a belief takes an explicit `correct`).
    Assert {
        /// Canonical key.
        key: String,
        /// Statement.
        statement: String,
        /// Ownership.
        ownership: Ownership,
        /// Agent (agent-owned beliefs).
        #[serde(default)]
        agent: Option<String>,
        /// Confidence in [0, 1].
        #[serde(default = "one")]
        confidence: f64,
        /// Raw event ids of the same project.
        evidence: Vec<EventId>,
    },
    /// Add evidence to the active belief of `key` (version + 1).
    Reinforce {
        /// Canonical key.
        key: String,
        /// New evidence.
        evidence: Vec<EventId>,
        /// The version the caller saw.
        #[serde(default)]
        expected_version: Option<u64>,
    },
    /// Replace the active belief of `key`: the old one is superseded (its window closed)
    /// and both are linked.
    Correct {
        /// Canonical key.
        key: String,
        /// The corrected statement.
        statement: String,
        /// Evidence for the correction.
        evidence: Vec<EventId>,
        /// The version the caller saw.
        #[serde(default)]
        expected_version: Option<u64>,
        /// Confidence in [0, 1].
        #[serde(default = "one")]
        confidence: f64,
    },
    /// Record a contradicting statement as `possible_conflict`; the current belief stays.
    Contradict {
        /// Canonical key.
        key: String,
        /// The contradicting statement.
        statement: String,
        /// Its evidence.
        evidence: Vec<EventId>,
        /// Confidence in [0, 1].
        #[serde(default = "one")]
        confidence: f64,
    },
    /// Store a candidate (from consolidation or an agent) awaiting governance.
    Propose {
        /// Canonical key.
        key: String,
        /// Statement.
        statement: String,
        /// Ownership.
        ownership: Ownership,
        /// Agent.
        #[serde(default)]
        agent: Option<String>,
        /// Confidence in [0, 1].
        #[serde(default = "one")]
        confidence: f64,
        /// Raw event ids of the same project.
        evidence: Vec<EventId>,
    },
    /// Make a candidate / needs-confirmation / possible-conflict belief active (superseding
    /// the current one, if any). User-owned beliefs still need user evidence.
    Promote {
        /// The belief.
        belief: BeliefId,
        /// The version of the key's active belief the caller saw.
        #[serde(default)]
        expected_version: Option<u64>,
    },
    /// Refuse a candidate / needs-confirmation / possible-conflict belief.
    Reject {
        /// The belief.
        belief: BeliefId,
    },
}

impl Op {
    fn name(&self) -> &'static str {
        match self {
            Op::Assert { .. } => "assert",
            Op::Reinforce { .. } => "reinforce",
            Op::Correct { .. } => "correct",
            Op::Contradict { .. } => "contradict",
            Op::Propose { .. } => "propose",
            Op::Promote { .. } => "promote",
            Op::Reject { .. } => "reject",
        }
    }
}

/// One operation of a plan, optionally with its own idempotency key: applying an
/// operation whose key was applied before (in any plan of the project) reports
/// [`OpOutcome::AlreadyApplied`] for it and writes nothing for it. In JSON the key is a
/// field of the operation object (`{"op": "assert", ..., "idempotency_key": "k1"}`).
#[derive(Debug, Clone, PartialEq)]
pub struct PlanOp {
    /// The operation.
    pub op: Op,
    /// Its own idempotency key.
    pub idempotency_key: Option<String>,
}

impl From<Op> for PlanOp {
    fn from(op: Op) -> Self {
        Self {
            op,
            idempotency_key: None,
        }
    }
}

impl PlanOp {
    /// `op` with its own idempotency key.
    pub fn keyed(op: Op, key: impl Into<String>) -> Self {
        Self {
            op,
            idempotency_key: Some(key.into()),
        }
    }

    /// A stable hash of the operation alone (its key excluded).
    fn hash(&self) -> String {
        format!(
            "{:016x}",
            xxh3_64(&serde_json::to_vec(&self.op).expect("operations serialize"))
        )
    }
}

/// An operation object with an optional `idempotency_key` of its own: the schema of
/// [`Op`], each variant with that field added.
impl schemars::JsonSchema for PlanOp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PlanOp".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = Op::json_schema(generator);
        let key = serde_json::json!({"type": ["string", "null"], "description": "This operation's own idempotency key."});
        if let Some(variants) = schema
            .get_mut("oneOf")
            .and_then(serde_json::Value::as_array_mut)
        {
            for variant in variants {
                if let Some(properties) = variant
                    .get_mut("properties")
                    .and_then(serde_json::Value::as_object_mut)
                {
                    properties.insert("idempotency_key".to_owned(), key.clone());
                }
            }
        }
        schema
    }
}

impl serde::Serialize for PlanOp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut value = serde_json::to_value(&self.op).map_err(serde::ser::Error::custom)?;
        if let (Some(key), Some(map)) = (&self.idempotency_key, value.as_object_mut()) {
            map.insert("idempotency_key".to_owned(), key.clone().into());
        }
        value.serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for PlanOp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let mut value = serde_json::Value::deserialize(deserializer)?;
        let key = match value.as_object_mut() {
            Some(map) => match map.remove("idempotency_key") {
                None | Some(serde_json::Value::Null) => None,
                Some(serde_json::Value::String(k)) => Some(k),
                Some(_) => {
                    return Err(D::Error::custom(
                        "an operation's `idempotency_key` must be a string",
                    ));
                }
            },
            None => return Err(D::Error::custom("an operation must be a JSON object")),
        };
        let op = Op::deserialize(value).map_err(D::Error::custom)?;
        Ok(Self {
            op,
            idempotency_key: key,
        })
    }
}

/// A plan's `at`: epoch ms or any time text [`crate::clock::parse_instant`] reads.
fn plan_time<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    use serde::de::Error as _;
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| D::Error::custom("`at` must be whole epoch milliseconds")),
        Some(serde_json::Value::String(t)) => crate::clock::parse_instant(&t)
            .map(Some)
            .map_err(D::Error::custom),
        Some(_) => Err(D::Error::custom(
            "`at` must be epoch milliseconds or an RFC 3339 time",
        )),
    }
}

use serde::Deserialize as _;

/// A governance plan.
///
/// Two clocks: every row records when it was written (transaction time, the ledger's
/// clock); a belief's validity window is in event time. An operation's `valid_from` is the
/// plan's `at` when given, else the time of its latest evidence event (so imported history
/// can be asked "what was true on 2025-02-01"), never before the start of the belief it
/// supersedes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The project every operation and every evidence event must belong to.
    pub project: ProjectId,
    /// Identifies the plan: applying the same plan again is a no-op.
    pub idempotency_key: String,
    /// The operations, applied in order.
    pub ops: Vec<PlanOp>,
    /// Event time of the operations (ms, or RFC 3339 text in JSON); defaults to each
    /// operation's evidence time.
    #[serde(default, deserialize_with = "plan_time")]
    #[schemars(with = "Option<crate::base::Time>")]
    pub at: Option<i64>,
}

impl Plan {
    /// A plan of one operation.
    pub fn single(project: ProjectId, idempotency_key: impl Into<String>, op: Op) -> Self {
        Self {
            project,
            idempotency_key: idempotency_key.into(),
            ops: vec![op.into()],
            at: None,
        }
    }
}

/// Why a plan was refused (nothing was written).
#[derive(
    Debug,
    Clone,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    thiserror::Error,
    schemars::JsonSchema,
)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum RejectionReason {
    /// An operation that needs evidence has none.
    #[error("missing evidence")]
    MissingEvidence,
    /// An evidence event does not exist.
    #[error("unknown evidence event {event}")]
    UnknownEvidence {
        /// The event.
        event: EventId,
    },
    /// An evidence event or belief belongs to another project. No longer produced (a
    /// reference to another project's record is refused as unknown, so ids leak nothing
    /// across projects); kept so plan audits written by older versions still read.
    #[error("project boundary violation: {what} belongs to another project")]
    ProjectBoundaryViolation {
        /// The offending reference.
        what: String,
    },
    /// A user-owned belief without any user-role evidence.
    #[error("user ownership requires user evidence (evidence roles: {roles})")]
    UserOwnershipRequiresUserEvidence {
        /// Roles of the evidence given.
        roles: String,
    },
    /// The idempotency key was used for a different plan, or twice in one request.
    #[error("duplicate idempotency key {key:?} (already used for a different plan)")]
    DuplicateIdempotencyKey {
        /// The key.
        key: String,
    },
    /// The expected version does not match the current one.
    #[error("version conflict on {key:?}: expected {expected}, current {current}")]
    VersionConflict {
        /// The key.
        key: String,
        /// What the caller expected.
        expected: u64,
        /// What is current (0 = no active belief).
        current: u64,
    },
    /// The operation needs an active belief and the key has none.
    #[error("no active belief for {key:?}")]
    NoActiveBelief {
        /// The key.
        key: String,
    },
    /// The belief does not exist.
    #[error("unknown belief {belief}")]
    UnknownBelief {
        /// The belief.
        belief: BeliefId,
    },
    /// The belief's status does not allow the operation.
    #[error("cannot {op} a belief in status {status}")]
    InvalidTransition {
        /// The operation.
        op: Transition,
        /// The current status.
        status: BeliefStatus,
    },
    /// A field is invalid (empty key or statement, confidence outside [0, 1]).
    #[error("invalid value: {detail}")]
    InvalidValue {
        /// What is wrong.
        detail: String,
    },
}

crate::base::names! {
    /// A change of a candidate belief's status that its status may refuse.
    pub enum Transition {
        /// A candidate made active.
        Promote = "promote",
        /// A candidate rejected.
        Reject = "reject",
    }
}

impl RejectionReason {
    /// Its stable reason (the `reason` tag it serializes with).
    pub fn reason(&self) -> crate::base::Reason {
        use crate::base::Reason as R;
        match self {
            RejectionReason::MissingEvidence => R::MissingEvidence,
            RejectionReason::UnknownEvidence { .. } => R::UnknownEvidence,
            RejectionReason::ProjectBoundaryViolation { .. } => R::ProjectBoundaryViolation,
            RejectionReason::UserOwnershipRequiresUserEvidence { .. } => {
                R::UserOwnershipRequiresUserEvidence
            }
            RejectionReason::DuplicateIdempotencyKey { .. } => R::DuplicateIdempotencyKey,
            RejectionReason::VersionConflict { .. } => R::VersionConflict,
            RejectionReason::NoActiveBelief { .. } => R::NoActiveBelief,
            RejectionReason::UnknownBelief { .. } => R::UnknownBelief,
            RejectionReason::InvalidTransition { .. } => R::InvalidTransition,
            RejectionReason::InvalidValue { .. } => R::InvalidValue,
        }
    }
}

/// The refused operation and why.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Rejection {
    /// Index of the operation in the plan (`None` for plan-level reasons).
    pub op_index: Option<usize>,
    /// The reason.
    pub reason: RejectionReason,
}

/// What one applied operation did.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum OpOutcome {
    /// A new active belief.
    Created {
        /// The belief.
        belief: BeliefId,
    },
    /// Evidence added to the active belief (version + 1).
    Reinforced {
        /// The belief.
        belief: BeliefId,
        /// Its new version.
        version: u64,
    },
    /// `old` superseded by the new `belief`.
    Superseded {
        /// The closed belief.
        old: BeliefId,
        /// The new active belief.
        belief: BeliefId,
    },
    /// Stored as `possible_conflict`; the active belief is unchanged.
    ConflictRecorded {
        /// The conflict row.
        belief: BeliefId,
        /// The belief that stays active.
        current: BeliefId,
    },
    /// Stored as a candidate.
    Proposed {
        /// The candidate.
        belief: BeliefId,
    },
    /// A candidate became active.
    Promoted {
        /// The belief.
        belief: BeliefId,
        /// The belief it superseded, if any.
        superseded: Option<BeliefId>,
    },
    /// A belief was rejected.
    Rejected {
        /// The belief.
        belief: BeliefId,
    },
    /// A reinforcement whose evidence the belief already cites: nothing changed (no new
    /// version).
    Unchanged {
        /// The belief.
        belief: BeliefId,
        /// Its version, unchanged.
        version: u64,
    },
    /// The operation's own idempotency key was applied before with the same operation;
    /// nothing was written for it.
    AlreadyApplied {
        /// The operation's key.
        idempotency_key: String,
        /// The belief it wrote then.
        belief: Option<BeliefId>,
    },
}

impl OpOutcome {
    /// The belief the outcome names.
    fn belief(&self) -> Option<BeliefId> {
        match self {
            OpOutcome::Created { belief }
            | OpOutcome::Reinforced { belief, .. }
            | OpOutcome::Superseded { belief, .. }
            | OpOutcome::ConflictRecorded { belief, .. }
            | OpOutcome::Proposed { belief }
            | OpOutcome::Promoted { belief, .. }
            | OpOutcome::Rejected { belief }
            | OpOutcome::Unchanged { belief, .. } => Some(*belief),
            OpOutcome::AlreadyApplied { belief, .. } => *belief,
        }
    }
}

/// The result of applying a plan.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum PlanOutcome {
    /// Every operation applied, with its audit row, in one transaction.
    Applied {
        /// One outcome per operation.
        results: Vec<OpOutcome>,
    },
    /// This plan (same key, same content) was applied before; nothing was written.
    AlreadyApplied {
        /// The idempotency key.
        idempotency_key: String,
    },
    /// Validation refused the plan; nothing was written.
    Rejected(Rejection),
}

/// One audit row: which operation of a plan did what, committed with it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AuditRow {
    /// Index of the operation in its plan.
    pub op_index: usize,
    /// Operation name (`assert`, `correct`, ...).
    pub op: String,
    /// The belief it wrote.
    pub belief: Option<BeliefId>,
    /// The outcome, as JSON.
    pub detail: String,
}

/// A reference to a belief resolved during validation: a stored row or one created by an
/// earlier operation of the same plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Target {
    Stored(BeliefId),
    Created(usize),
}

/// The active belief of a key as validation sees it (stored state plus earlier operations).
#[derive(Debug, Clone)]
struct Active {
    target: Target,
    version: u64,
    normalized: String,
    ownership: Ownership,
}

#[derive(Debug, Clone, Default)]
struct KeyState {
    active: Option<Active>,
    max_version: u64,
}

/// A fully resolved write.
#[derive(Debug, Clone)]
enum Action {
    Insert {
        key: String,
        statement: String,
        ownership: Ownership,
        agent: Option<String>,
        confidence: f64,
        status: BeliefStatus,
        version: u64,
        evidence: Vec<EventId>,
        roles: Vec<Role>,
        /// Event time of the latest evidence.
        evidence_at: i64,
        supersede: Option<Target>,
        conflict_with: Option<Target>,
    },
    Reinforce {
        target: Target,
        version: u64,
        evidence: Vec<EventId>,
        roles: Vec<Role>,
    },
    Unchanged {
        target: Target,
        version: u64,
    },
    Promote {
        belief: BeliefId,
        version: u64,
        evidence_at: i64,
        supersede: Option<Target>,
    },
    Reject {
        belief: BeliefId,
    },
    /// The operation's own key was applied before.
    Replayed {
        key: String,
        belief: Option<BeliefId>,
    },
}

/// What the evidence of one operation says: its roles and the time of its latest event.
struct Evidence {
    roles: Vec<Role>,
    latest: i64,
}

struct Validator<'a> {
    rows: &'a BeliefRows<'a>,
    project: &'a str,
    keys: HashMap<String, KeyState>,
    statuses: HashMap<BeliefId, BeliefStatus>,
    /// Evidence each belief cites (stored rows loaded on first use, plus this plan's).
    cited: HashMap<Target, HashSet<EventId>>,
}

type Check<T> = Result<T, RejectionReason>;

impl Validator<'_> {
    fn key(&mut self, key: &str) -> LedgerResult<&mut KeyState> {
        if !self.keys.contains_key(key) {
            let active = self.rows.active(key)?.map(|b| Active {
                target: Target::Stored(b.id),
                version: b.version,
                normalized: normalize_statement(&b.statement),
                ownership: b.ownership,
            });
            let max_version = self.rows.max_version(key)?;
            self.keys.insert(
                key.to_owned(),
                KeyState {
                    active,
                    max_version,
                },
            );
        }
        Ok(self.keys.get_mut(key).expect("inserted"))
    }

    /// Evidence must be non-empty, exist, be of this project; user ownership needs a user
    /// event. Returns the evidence roles.
    fn evidence(
        &self,
        evidence: &[EventId],
        ownership: Ownership,
    ) -> LedgerResult<Check<Evidence>> {
        if evidence.is_empty() {
            return Ok(Err(RejectionReason::MissingEvidence));
        }
        let mut roles = Vec::new();
        let mut latest = i64::MIN;
        for &e in evidence {
            match self.rows.event_facts(e)? {
                // Another project's event is answered as one that does not exist: a
                // project learns nothing of another's ids.
                None => return Ok(Err(RejectionReason::UnknownEvidence { event: e })),
                Some((p, _, _)) if p != self.project => {
                    return Ok(Err(RejectionReason::UnknownEvidence { event: e }));
                }
                Some((_, role, at)) => {
                    latest = latest.max(at);
                    if !roles.contains(&role) {
                        roles.push(role);
                    }
                }
            }
        }
        if ownership == Ownership::User && !roles.contains(&Role::User) {
            let names: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
            return Ok(Err(RejectionReason::UserOwnershipRequiresUserEvidence {
                roles: names.join(","),
            }));
        }
        Ok(Ok(Evidence { roles, latest }))
    }

    /// The evidence `target` cites, loaded from the ledger on first use.
    fn cited(&mut self, target: Target) -> LedgerResult<&mut HashSet<EventId>> {
        if !self.cited.contains_key(&target) {
            let stored = match target {
                Target::Stored(id) => self.rows.evidence(id)?.into_iter().collect(),
                Target::Created(_) => HashSet::new(),
            };
            self.cited.insert(target, stored);
        }
        Ok(self.cited.get_mut(&target).expect("inserted"))
    }

    /// A reinforcement of `target` by `evidence`: only evidence it does not cite yet counts;
    /// with none, the belief is unchanged (no version bump).
    fn reinforce(
        &mut self,
        key: &str,
        target: Target,
        evidence: &[EventId],
        roles: Vec<Role>,
    ) -> LedgerResult<Action> {
        let cited = self.cited(target)?;
        let new: Vec<EventId> = evidence
            .iter()
            .copied()
            .filter(|e| !cited.contains(e))
            .collect::<Vec<_>>();
        let mut unique = Vec::with_capacity(new.len());
        for e in new {
            if cited.insert(e) {
                unique.push(e);
            }
        }
        let state = self.key(key)?;
        let active = state.active.as_mut().expect("reinforced belief is active");
        if unique.is_empty() {
            return Ok(Action::Unchanged {
                target,
                version: active.version,
            });
        }
        state.max_version += 1;
        let version = state.max_version;
        state.active.as_mut().expect("active").version = version;
        Ok(Action::Reinforce {
            target,
            version,
            evidence: unique,
            roles,
        })
    }

    fn stored_belief(&self, id: BeliefId) -> LedgerResult<Check<super::Belief>> {
        // Another project's belief is answered as one that does not exist.
        Ok(match self.rows.belief(id)? {
            None => Err(RejectionReason::UnknownBelief { belief: id }),
            Some(mut b) => {
                if let Some(s) = self.statuses.get(&id) {
                    b.status = *s;
                }
                Ok(b)
            }
        })
    }

    fn check_version(key: &str, expected: Option<u64>, current: Option<&Active>) -> Check<()> {
        match expected {
            Some(e) if Some(e) != current.map(|a| a.version) => {
                Err(RejectionReason::VersionConflict {
                    key: key.to_owned(),
                    expected: e,
                    current: current.map_or(0, |a| a.version),
                })
            }
            _ => Ok(()),
        }
    }

    fn values(key: &str, statement: Option<&str>, confidence: f64) -> Check<()> {
        if key.trim().is_empty() {
            return Err(RejectionReason::InvalidValue {
                detail: "empty key".to_owned(),
            });
        }
        if statement.is_some_and(|s| normalize_statement(s).is_empty()) {
            return Err(RejectionReason::InvalidValue {
                detail: "empty statement".to_owned(),
            });
        }
        if !(0.0..=1.0).contains(&confidence) {
            return Err(RejectionReason::InvalidValue {
                detail: format!("confidence {confidence} outside [0, 1]"),
            });
        }
        Ok(())
    }

    /// Resolves operation `i` into an action, updating the virtual state.
    fn resolve(&mut self, i: usize, op: &Op) -> LedgerResult<Check<Action>> {
        macro_rules! check {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(reason) => return Ok(Err(reason)),
                }
            };
        }
        Ok(Ok(match op {
            Op::Assert {
                key,
                statement,
                ownership,
                agent,
                confidence,
                evidence,
            } => {
                check!(Self::values(key, Some(statement), *confidence));
                let ev = check!(self.evidence(evidence, *ownership)?);
                let norm = normalize_statement(statement);
                let state = self.key(key)?;
                match state.active.clone() {
                    Some(a) if a.normalized == norm => {
                        self.reinforce(key, a.target, evidence, ev.roles)?
                    }
                    Some(a) => {
                        state.max_version += 1;
                        Action::Insert {
                            key: key.clone(),
                            statement: statement.clone(),
                            ownership: *ownership,
                            agent: agent.clone(),
                            confidence: *confidence,
                            status: BeliefStatus::PossibleConflict,
                            version: state.max_version,
                            evidence: evidence.clone(),
                            roles: ev.roles.clone(),
                            evidence_at: ev.latest,
                            supersede: None,
                            conflict_with: Some(a.target),
                        }
                    }
                    None => {
                        state.max_version += 1;
                        self.cited
                            .insert(Target::Created(i), evidence.iter().copied().collect());
                        let state = self.key(key)?;
                        state.active = Some(Active {
                            target: Target::Created(i),
                            version: state.max_version,
                            normalized: norm,
                            ownership: *ownership,
                        });
                        Action::Insert {
                            key: key.clone(),
                            statement: statement.clone(),
                            ownership: *ownership,
                            agent: agent.clone(),
                            confidence: *confidence,
                            status: BeliefStatus::Active,
                            version: state.max_version,
                            evidence: evidence.clone(),
                            roles: ev.roles.clone(),
                            evidence_at: ev.latest,
                            supersede: None,
                            conflict_with: None,
                        }
                    }
                }
            }
            Op::Reinforce {
                key,
                evidence,
                expected_version,
            } => {
                check!(Self::values(key, None, 0.0));
                let active = self.key(key)?.active.clone();
                let Some(a) = active else {
                    return Ok(Err(RejectionReason::NoActiveBelief { key: key.clone() }));
                };
                check!(Self::check_version(key, *expected_version, Some(&a)));
                let ev = check!(self.evidence(evidence, a.ownership)?);
                self.reinforce(key, a.target, evidence, ev.roles)?
            }
            Op::Correct {
                key,
                statement,
                evidence,
                expected_version,
                confidence,
            } => {
                check!(Self::values(key, Some(statement), *confidence));
                let active = self.key(key)?.active.clone();
                let Some(a) = active else {
                    return Ok(Err(RejectionReason::NoActiveBelief { key: key.clone() }));
                };
                check!(Self::check_version(key, *expected_version, Some(&a)));
                let ev = check!(self.evidence(evidence, a.ownership)?);
                self.cited
                    .insert(Target::Created(i), evidence.iter().copied().collect());
                let state = self.key(key)?;
                state.max_version += 1;
                let version = state.max_version;
                state.active = Some(Active {
                    target: Target::Created(i),
                    version,
                    normalized: normalize_statement(statement),
                    ownership: a.ownership,
                });
                Action::Insert {
                    key: key.clone(),
                    statement: statement.clone(),
                    ownership: a.ownership,
                    agent: None,
                    confidence: *confidence,
                    status: BeliefStatus::Active,
                    version,
                    evidence: evidence.clone(),
                    roles: ev.roles,
                    evidence_at: ev.latest,
                    supersede: Some(a.target),
                    conflict_with: None,
                }
            }
            Op::Contradict {
                key,
                statement,
                evidence,
                confidence,
            } => {
                check!(Self::values(key, Some(statement), *confidence));
                let active = self.key(key)?.active.clone();
                let Some(a) = active else {
                    return Ok(Err(RejectionReason::NoActiveBelief { key: key.clone() }));
                };
                let ev = check!(self.evidence(evidence, a.ownership)?);
                let state = self.key(key)?;
                state.max_version += 1;
                Action::Insert {
                    key: key.clone(),
                    statement: statement.clone(),
                    ownership: a.ownership,
                    agent: None,
                    confidence: *confidence,
                    status: BeliefStatus::PossibleConflict,
                    version: state.max_version,
                    evidence: evidence.clone(),
                    roles: ev.roles,
                    evidence_at: ev.latest,
                    supersede: None,
                    conflict_with: Some(a.target),
                }
            }
            Op::Propose {
                key,
                statement,
                ownership,
                agent,
                confidence,
                evidence,
            } => {
                check!(Self::values(key, Some(statement), *confidence));
                // Candidates need exact evidence ids of this project, but not yet user
                // evidence: promotion checks ownership.
                let ev = check!(self.evidence(evidence, Ownership::Project)?);
                let state = self.key(key)?;
                state.max_version += 1;
                Action::Insert {
                    key: key.clone(),
                    statement: statement.clone(),
                    ownership: *ownership,
                    agent: agent.clone(),
                    confidence: *confidence,
                    status: BeliefStatus::Candidate,
                    version: state.max_version,
                    evidence: evidence.clone(),
                    roles: ev.roles,
                    evidence_at: ev.latest,
                    supersede: None,
                    conflict_with: None,
                }
            }
            Op::Promote {
                belief,
                expected_version,
            } => {
                let b = check!(self.stored_belief(*belief)?);
                if !matches!(
                    b.status,
                    BeliefStatus::Candidate
                        | BeliefStatus::NeedsConfirmation
                        | BeliefStatus::PossibleConflict
                ) {
                    return Ok(Err(RejectionReason::InvalidTransition {
                        op: Transition::Promote,
                        status: b.status,
                    }));
                }
                let ev = check!(self.evidence(&b.evidence, b.ownership)?);
                let active = self.key(&b.key)?.active.clone();
                check!(Self::check_version(
                    &b.key,
                    *expected_version,
                    active.as_ref()
                ));
                let state = self.key(&b.key)?;
                state.max_version += 1;
                let version = state.max_version;
                state.active = Some(Active {
                    target: Target::Stored(*belief),
                    version,
                    normalized: normalize_statement(&b.statement),
                    ownership: b.ownership,
                });
                self.statuses.insert(*belief, BeliefStatus::Active);
                Action::Promote {
                    belief: *belief,
                    version,
                    evidence_at: ev.latest,
                    supersede: active.map(|a| a.target),
                }
            }
            Op::Reject { belief } => {
                let b = check!(self.stored_belief(*belief)?);
                if !matches!(
                    b.status,
                    BeliefStatus::Candidate
                        | BeliefStatus::NeedsConfirmation
                        | BeliefStatus::PossibleConflict
                ) {
                    return Ok(Err(RejectionReason::InvalidTransition {
                        op: Transition::Reject,
                        status: b.status,
                    }));
                }
                self.statuses.insert(*belief, BeliefStatus::Rejected);
                Action::Reject { belief: *belief }
            }
        }))
    }
}

fn roles_text(roles: &[Role]) -> String {
    roles
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

impl Ledger {
    /// Validates `plan` completely, then applies it with one audit row per operation in one
    /// transaction. Nothing is written for a rejected or already-applied plan.
    ///
    /// # Errors
    /// SQLite errors (the transaction rolls back). Refusals are not errors: they are
    /// [`PlanOutcome::Rejected`] with a named reason.
    pub fn apply_plan(&self, plan: &Plan) -> LedgerResult<PlanOutcome> {
        let project = plan.project.as_str();
        let hash = format!(
            "{:016x}",
            xxh3_64(&serde_json::to_vec(&(&plan.ops, plan.at)).expect("plans serialize"))
        );
        let now = self.now_ms();
        let rejected = |op_index, reason| Ok(PlanOutcome::Rejected(Rejection { op_index, reason }));
        self.governing(project, |rows| {
            match rows.plan_hash(&plan.idempotency_key)? {
                Some(h) if h == hash => {
                    return Ok(PlanOutcome::AlreadyApplied {
                        idempotency_key: plan.idempotency_key.clone(),
                    });
                }
                Some(_) => {
                    return rejected(
                        None,
                        RejectionReason::DuplicateIdempotencyKey {
                            key: plan.idempotency_key.clone(),
                        },
                    );
                }
                None => {}
            }
            if plan.idempotency_key.trim().is_empty() {
                return rejected(
                    None,
                    RejectionReason::InvalidValue {
                        detail: "empty idempotency key".to_owned(),
                    },
                );
            }
            // Phase 1: resolve every operation; no writes. An operation whose own key was
            // applied before is replayed (same operation) or refused (another one).
            let mut v = Validator {
                rows,
                project,
                keys: HashMap::new(),
                statuses: HashMap::new(),
                cited: HashMap::new(),
            };
            let mut op_keys = HashSet::new();
            let mut actions = Vec::with_capacity(plan.ops.len());
            for (i, planned) in plan.ops.iter().enumerate() {
                if let Some(key) = &planned.idempotency_key {
                    if key.trim().is_empty() {
                        return rejected(
                            Some(i),
                            RejectionReason::InvalidValue {
                                detail: "empty operation idempotency key".to_owned(),
                            },
                        );
                    }
                    if !op_keys.insert(key.as_str()) {
                        return rejected(
                            Some(i),
                            RejectionReason::DuplicateIdempotencyKey { key: key.clone() },
                        );
                    }
                    match rows.op_key(key)? {
                        Some((h, belief)) if h == planned.hash() => {
                            actions.push(Action::Replayed {
                                key: key.clone(),
                                belief,
                            });
                            continue;
                        }
                        Some(_) => {
                            return rejected(
                                Some(i),
                                RejectionReason::DuplicateIdempotencyKey { key: key.clone() },
                            );
                        }
                        None => {}
                    }
                }
                match v.resolve(i, &planned.op)? {
                    Ok(a) => actions.push(a),
                    Err(reason) => return rejected(Some(i), reason),
                }
            }
            // Phase 2: execute the resolved actions and audit them.
            let mut created: HashMap<usize, BeliefId> = HashMap::new();
            let resolve = |t: Target, created: &HashMap<usize, BeliefId>| match t {
                Target::Stored(id) => id,
                Target::Created(i) => created[&i],
            };
            // Event time of a write: the plan's `at`, else its evidence's time, never before
            // the start of the belief it supersedes.
            let valid_from = |evidence_at: i64, old: Option<BeliefId>| -> LedgerResult<i64> {
                let mut from = plan.at.unwrap_or(evidence_at);
                if let Some(old) = old {
                    from = from.max(rows.valid_from(old)?);
                }
                Ok(from)
            };
            let mut results = Vec::with_capacity(actions.len());
            for (i, action) in actions.into_iter().enumerate() {
                let outcome = match action {
                    Action::Insert {
                        key,
                        statement,
                        ownership,
                        agent,
                        confidence,
                        status,
                        version,
                        evidence,
                        roles,
                        evidence_at,
                        supersede,
                        conflict_with,
                    } => {
                        let old = supersede.map(|t| resolve(t, &created));
                        let from = valid_from(evidence_at, old)?;
                        if let Some(old) = old {
                            rows.supersede(old, from, None, now)?;
                        }
                        let id = rows.insert_belief(
                            &NewBelief {
                                key: &key,
                                statement: &statement,
                                ownership,
                                agent: agent.as_deref(),
                                roles: &roles_text(&roles),
                                confidence,
                                status,
                                version,
                                valid_from: from,
                                supersedes: old,
                            },
                            now,
                        )?;
                        created.insert(i, id);
                        rows.add_evidence(id, &evidence)?;
                        if let Some(old) = old {
                            rows.superseded_by(old, id)?;
                            OpOutcome::Superseded { old, belief: id }
                        } else if let Some(current) = conflict_with {
                            OpOutcome::ConflictRecorded {
                                belief: id,
                                current: resolve(current, &created),
                            }
                        } else if status == BeliefStatus::Candidate {
                            OpOutcome::Proposed { belief: id }
                        } else {
                            OpOutcome::Created { belief: id }
                        }
                    }
                    Action::Reinforce {
                        target,
                        version,
                        evidence,
                        roles,
                    } => {
                        let id = resolve(target, &created);
                        rows.add_evidence(id, &evidence)?;
                        let merged = rows.source_roles(id)?;
                        let mut all: Vec<String> = merged
                            .split(',')
                            .filter(|s| !s.is_empty())
                            .map(str::to_owned)
                            .collect();
                        for r in roles {
                            if !all.iter().any(|x| x == r.as_str()) {
                                all.push(r.as_str().to_owned());
                            }
                        }
                        rows.reinforce(id, version, &all.join(","), now)?;
                        OpOutcome::Reinforced {
                            belief: id,
                            version,
                        }
                    }
                    Action::Unchanged { target, version } => OpOutcome::Unchanged {
                        belief: resolve(target, &created),
                        version,
                    },
                    Action::Promote {
                        belief,
                        version,
                        evidence_at,
                        supersede,
                    } => {
                        let old = supersede.map(|t| resolve(t, &created));
                        let from = valid_from(evidence_at, old)?;
                        if let Some(old) = old {
                            rows.supersede(old, from, Some(belief), now)?;
                        }
                        rows.activate(belief, version, from, old, now)?;
                        OpOutcome::Promoted {
                            belief,
                            superseded: old,
                        }
                    }
                    Action::Reject { belief } => {
                        rows.reject(belief, now)?;
                        OpOutcome::Rejected { belief }
                    }
                    Action::Replayed { key, belief } => OpOutcome::AlreadyApplied {
                        idempotency_key: key,
                        belief,
                    },
                };
                let belief_id = outcome.belief();
                rows.audit(
                    &plan.idempotency_key,
                    &(
                        i,
                        plan.ops[i].op.name().to_owned(),
                        belief_id,
                        serde_json::to_string(&outcome).expect("outcomes serialize"),
                    ),
                    now,
                )?;
                if let (Some(key), false) = (
                    &plan.ops[i].idempotency_key,
                    matches!(outcome, OpOutcome::AlreadyApplied { .. }),
                ) {
                    rows.put_op_key(
                        key,
                        &plan.ops[i].hash(),
                        (&plan.idempotency_key, i),
                        belief_id,
                        now,
                    )?;
                }
                results.push(outcome);
            }
            rows.put_plan(&plan.idempotency_key, &hash, now)?;
            Ok(PlanOutcome::Applied { results })
        })
    }

    /// Audit rows of `project` for one plan, in operation order.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn plan_audit(&self, project: &ProjectId, plan_key: &str) -> LedgerResult<Vec<AuditRow>> {
        let rows = self.reading_beliefs(project.as_str(), |rows| rows.audit_rows(plan_key))?;
        Ok(rows
            .into_iter()
            .map(|(op_index, op, belief, detail)| AuditRow {
                op_index,
                op,
                belief,
                detail,
            })
            .collect())
    }
}
