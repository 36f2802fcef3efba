//! The catalog of operations: the one table that declares each operation (its name, its
//! request and response types, whether it writes, and what it does in words an agent can
//! choose by). [`Request`], [`Response`] and its decoder, [`Request::name`],
//! [`Request::writes`], [`Request::projects`] and [`catalog`] (the MCP tools, the OpenAPI document, the field
//! check of [`misfit`]) are all generated from it, so none can drift from another; the CLI
//! takes its arguments from the same request types (`clap::Args` on them).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::response::{
    AuditLine, ConceptShown, EpisodeAppended, EpisodeEnded, EpisodeStarted, MemoryShown, Migrated,
    Observed, ObservedBatch, ProcedureAdded, ProspectiveShown,
};
use super::{
    ApiError, ApiResult, ApplyPlan, BeliefAssert, BeliefAt, BeliefCorrect, BeliefKey, Empty,
    EpisodeAppend, EpisodeEnd, EpisodeStart, ForgetProject, MapRequest, Migrate, Observe,
    ObserveBatch, Pack, PlanKey, ProcedureAdd, ProcedureOutcome, ProcedureSuggest, ProjectId64,
    ProjectLimit, ProjectOnly, ProspectiveConfirm, ProspectiveDefer, ProspectiveDue,
    ProspectivePropose, Recall,
};
use crate::cognition::{Association, Episode, Gap, Procedure, Proposal, PulseReceipt, Suggestion};
use crate::governance::{Belief, PlanOutcome, ProspectiveItem};
use crate::ledger::Event;
use crate::recall::Pack as RecallPack;
use crate::{ForgetReceipt, MemoryMap, ProjectStats, RecallResult};

/// One operation of the catalog.
#[derive(Debug, Clone)]
pub struct Operation {
    /// Its `op` tag: the MCP tool's name, the last segment of its HTTP route.
    pub name: &'static str,
    /// What it does.
    pub description: &'static str,
    /// Whether it writes (a read-only token may not call it; its MCP tool is marked
    /// read-only when it does not).
    pub writes: bool,
    /// The JSON Schema of its request (without `op`).
    pub schema: Value,
    /// The JSON Schema of its result: what a success answers, on every surface.
    pub response: Value,
}

/// Operation `name`, with the JSON Schemas of its request type `T` and its result type
/// `R`.
fn op<T: schemars::JsonSchema, R: schemars::JsonSchema>(
    name: &'static str,
    description: &'static str,
    writes: bool,
) -> Operation {
    Operation {
        name,
        description,
        writes,
        schema: serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default(),
        response: serde_json::to_value(schemars::schema_for!(R)).unwrap_or_default(),
    }
}

/// Declares every operation from one table: `Variant(RequestType) -> ResponseType =
/// "name", read|write, "description";`.
macro_rules! operations {
    (@writes read) => { false };
    (@writes write) => { true };
    ($($variant:ident($request:ty) -> $response:ty = $name:literal, $access:ident, $description:literal;)*) => {
        /// Every operation, tagged by `op` (`{"op": "recall", "project": ..., ...}`).
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "op")]
        pub enum Request {
            $(#[doc = $description] #[serde(rename = $name)] $variant($request),)*
        }

        /// The result of one operation; the variant is the operation's (see [`Request`]).
        /// It serializes as its payload alone: the JSON every surface prints.
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(untagged)]
        pub enum Response {
            $(#[doc = $description] $variant($response),)*
        }

        impl Request {
            /// The operation's name (its `op` tag).
            pub fn name(&self) -> &'static str {
                match self {
                    $(Request::$variant(_) => $name,)*
                }
            }

            /// The projects the request touches (`None`: the whole memory, as `stats`),
            /// as its request type says ([`super::Touches`]).
            pub fn projects(&self) -> Option<Vec<&str>> {
                match self {
                    $(Request::$variant(r) => super::Touches::projects(r),)*
                }
            }

            /// Whether the operation writes (access control: read-only tokens may not; a
            /// CLI read opens a view). Recalls potentiate what they return only when the
            /// profile opts in (`[recall] learn`), which is the memory's own learning, not
            /// a caller's write. A dry-run migration reads.
            pub fn writes(&self) -> bool {
                let declared = match self {
                    $(Request::$variant(_) => operations!(@writes $access),)*
                };
                declared && !matches!(self, Request::Migrate(m) if m.dry_run)
            }
        }

        impl Response {
            /// Reads the JSON of operation `op`'s result (its `op` tag, as in
            /// [`Request::name`]) back into its response type.
            ///
            /// # Errors
            /// `invalid_argument` for an unknown operation; `invalid_json` when the value
            /// is not that operation's result.
            pub fn decode(op: &str, value: Value) -> ApiResult<Self> {
                match op {
                    $($name => serde_json::from_value(value).map(Self::$variant).map_err(|e| {
                        ApiError::new(crate::base::Reason::InvalidJson, format!("not the result of `{op}`: {e}"))
                    }),)*
                    other => Err(ApiError::invalid(format!("unknown operation `{other}`"))),
                }
            }
        }

        /// Every operation: served as an MCP tool and an HTTP route, described in the
        /// OpenAPI document.
        pub fn catalog() -> Vec<Operation> {
            vec![$(op::<$request, $response>($name, $description, operations!(@writes $access)),)*]
        }

        /// Every operation's name, in catalog order (no schema is built).
        pub const OPERATION_NAMES: &[&str] = &[$($name,)*];
    };
}

operations! {
    Observe(Observe) -> Observed = "observe", write,
        "Record one observation (a message, a fact, an action) in a project's long-term memory. Returns its event id, which beliefs cite as evidence.";
    ObserveBatch(ObserveBatch) -> ObservedBatch = "observe_batch", write,
        "Record several observations in one transaction (each names its project): all are stored or none. Returns their event ids in order.";
    RecordEvent(Observe) -> Box<Event> = "record_event", write,
        "Record one observation, as `observe`, and return the whole stored event (id, time, session, thread) instead of its id alone.";
    Recall(Recall) -> Box<RecallResult> = "recall", read,
        "Find the memories of a project that answer a query (free text, \"quoted phrases\", filters such as role:user since:2025-01-01). Returns ranked items with their score breakdown and source anchor.";
    Pack(Pack) -> Box<RecallPack> = "pack", read,
        "Build a context pack for a query within a token budget (25 % of `available` by default, never above 30 %), with a receipt for every candidate.";
    BeliefAssert(BeliefAssert) -> PlanOutcome = "belief_assert", write,
        "Assert a belief under a key, backed by evidence event ids of the same project (user-owned beliefs need a user event). The same statement again reinforces it; a different one is recorded as a possible conflict.";
    ApplyPlan(ApplyPlan) -> PlanOutcome = "apply_plan", write,
        "Apply a governance plan: belief operations (assert, reinforce, correct, contradict, propose, promote, reject) with evidence, expected versions and an idempotency key, all validated before the first write and committed together; the same plan again is `already_applied`.";
    MemoryShow(ProjectId64) -> Box<MemoryShown> = "memory_show", read,
        "One stored memory (by event id) with what the engine keeps about it: its access count and long-term-potentiation strength, its tier, and the beliefs citing it.";
    PlanAudit(PlanKey) -> Vec<AuditLine> = "plan_audit", read,
        "What an applied governance plan changed, one line per operation in order: the operation, the belief it wrote and its outcome, as committed with the plan.";
    BeliefCorrect(BeliefCorrect) -> PlanOutcome = "belief_correct", write,
        "Correct the active belief of a key: the old version is superseded and its validity window closed.";
    BeliefCurrent(BeliefKey) -> Box<Belief> = "belief_current", read,
        "The active belief of a key; a key without one is a `not_found` error saying whether it has older versions.";
    BeliefAt(BeliefAt) -> Box<Belief> = "belief_at", read,
        "The belief of a key that was valid at a time (RFC 3339, a date, or epoch ms); none valid then is `not_found`.";
    BeliefHistory(BeliefKey) -> Vec<Belief> = "belief_history", read,
        "Every version of a key, oldest first; a key no belief ever had is `not_found`.";
    EpisodeStart(EpisodeStart) -> EpisodeStarted = "episode_start", write,
        "Start an episode for an agent (its open one is sealed and chained).";
    EpisodeAppend(EpisodeAppend) -> EpisodeAppended = "episode_append", write,
        "Append a recorded event to an episode (once per event).";
    EpisodeEnd(EpisodeEnd) -> EpisodeEnded = "episode_end", write,
        "Seal an episode with its outcome and reward.";
    EpisodeShow(ProjectId64) -> Box<Episode> = "episode_show", read,
        "One episode as stored: its events in order, status, outcome, reward, and the previous and next episodes of its agent.";
    Concepts(ProjectOnly) -> Vec<ConceptShown> = "concepts", read,
        "The concepts consolidation made of a project's episodes: label, supporting episodes, reliability and outcome counts.";
    ConceptShow(ProjectId64) -> Box<ConceptShown> = "concept_show", read,
        "One concept with each supporting episode and its events, so what a concept stands for can be checked against what was said.";
    ProcedureAdd(ProcedureAdd) -> ProcedureAdded = "procedure_add", write,
        "Store a procedure: a name, a trigger (when to use it) and its steps.";
    ProcedureSuggest(ProcedureSuggest) -> Vec<Suggestion> = "procedure_suggest", read,
        "Procedures whose trigger matches a situation, weighted by their reliability.";
    ProcedureOutcome(ProcedureOutcome) -> Box<Procedure> = "procedure_outcome", write,
        "Record whether a procedure worked (success true or false).";
    ProspectivePropose(ProspectivePropose) -> Box<ProspectiveItem> = "prospective_propose", write,
        "Record a pending intention, commitment, reminder, open loop or plan created by an event; it becomes active only when a later user event confirms it.";
    ProspectiveConfirm(ProspectiveConfirm) -> Box<ProspectiveItem> = "prospective_confirm", write,
        "Confirm a pending item by a later, explicitly affirmative user event.";
    ProspectiveDefer(ProspectiveDefer) -> Box<ProspectiveItem> = "prospective_defer", write,
        "Postpone a prospective item to a new due time (`until`): a confirmed item becomes deferred, a pending one stays pending (deferring never confirms).";
    ProspectiveComplete(ProjectId64) -> Box<ProspectiveItem> = "prospective_complete", write,
        "Mark a confirmed prospective item done; its history keeps every transition.";
    ProspectiveReject(ProjectId64) -> Box<ProspectiveItem> = "prospective_reject", write,
        "Refuse a pending or confirmed prospective item; it stays in history as rejected.";
    ProspectiveShow(ProjectId64) -> Box<ProspectiveShown> = "prospective_show", read,
        "One prospective item with its status and history.";
    ProspectiveDue(ProspectiveDue) -> Vec<ProspectiveItem> = "prospective_due", read,
        "Confirmed items due at a time (default now).";
    Gaps(ProjectLimit) -> Vec<Gap> = "gaps", read,
        "Knowledge gaps of a project: questions its memory could not answer well.";
    Candidates(ProjectOnly) -> Vec<Belief> = "candidates", read,
        "Candidate beliefs the curator drew from what users said, waiting for approval: approve one with `candidate_approve` or drop it with `candidate_reject`.";
    CandidateApprove(ProjectId64) -> PlanOutcome = "candidate_approve", write,
        "Promote a candidate belief to an active one, through a governed plan (refused with the rule it breaks, nothing written).";
    CandidateReject(ProjectId64) -> PlanOutcome = "candidate_reject", write,
        "Reject a candidate belief, through a governed plan; it stays in history as rejected.";
    Associations(ProjectLimit) -> Vec<Association> = "associations", read,
        "Candidate associations pulse ticks found between episodes and concepts (by prototype similarity and ripple over synapses), newest first: candidates, never facts.";
    Proposals(ProjectOnly) -> Vec<Proposal> = "proposals", read,
        "Self-improvement proposals the meta-memory raised for a project (a rule over its metrics was crossed), with the metrics that triggered each, oldest first.";
    Pulse(ProjectOnly) -> Box<PulseReceipt> = "pulse", write,
        "Run one maintenance tick on a project now (tier moves, consolidation, decay, curation) within the profile's time budget; returns what each phase did.";
    Migrate(Migrate) -> Migrated = "migrate", write,
        "Apply the pending schema migrations of this memory and report them (from and to versions); `dry_run: true` only reports.";
    Map(MapRequest) -> Box<MemoryMap> = "map", read,
        "One project at a glance: sizes, time span, threads, episodes, concepts, beliefs, procedures.";
    Stats(Empty) -> Vec<ProjectStats> = "stats", read,
        "Counts per project of this memory: events, vectors per tier, beliefs, episodes, procedures.";
    ForgetProject(ForgetProject) -> Box<ForgetReceipt> = "forget_project", write,
        "Erase a project from every store. Cannot be undone: requires confirm = true.";
}

/// Why `object` does not fit the request of operation `op`, naming the field: an unknown
/// field, a value of the wrong JSON type or outside its enumeration, or a missing field,
/// at any depth (`events[2].text`, `embedding[3]`); `None` when it fits the schema as far
/// as these checks reach, or `op` is not in the catalog. serde's own message for a tagged
/// request names no field.
pub fn misfit(op: &str, object: &Map<String, Value>) -> Option<String> {
    let schema = catalog().into_iter().find(|o| o.name == op)?.schema;
    let mut fields = object.clone();
    fields.remove("op");
    Misfit { op, root: &schema }.object(&schema, &fields, "")
}

/// The schema of one operation's request, checked against a value.
struct Misfit<'a> {
    op: &'a str,
    root: &'a Value,
}

impl Misfit<'_> {
    /// `schema` with a `$ref` into the root's `$defs` followed.
    fn resolve<'s>(&'s self, schema: &'s Value) -> &'s Value {
        schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .and_then(|name| self.root.get("$defs")?.get(name))
            .unwrap_or(schema)
    }

    /// The fields of an object against an object schema.
    fn object(&self, schema: &Value, object: &Map<String, Value>, path: &str) -> Option<String> {
        let op = self.op;
        let empty = Map::new();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let at = |key: &str| {
            if path.is_empty() {
                key.to_owned()
            } else {
                format!("{path}.{key}")
            }
        };
        for (key, value) in object {
            let Some(field) = properties.get(key) else {
                if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                    let known: Vec<&str> = properties.keys().map(String::as_str).collect();
                    let whose = if path.is_empty() {
                        format!("`{op}`")
                    } else {
                        format!("`{path}` of `{op}`")
                    };
                    return Some(format!(
                        "{whose} has no field `{key}` (its fields: {})",
                        known.join(", ")
                    ));
                }
                continue;
            };
            if let Some(m) = self.value(field, value, &at(key)) {
                return Some(m);
            }
        }
        schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find(|r| !object.contains_key(*r))
            .map(|r| format!("`{op}` needs the field `{}`", at(r)))
    }

    /// One value against its schema.
    fn value(&self, schema: &Value, value: &Value, path: &str) -> Option<String> {
        let op = self.op;
        let schema = self.resolve(schema);
        if let Some(Value::Array(alternatives)) = schema.get("anyOf").or(schema.get("oneOf")) {
            // A union (an optional object is one with null): the value is checked against
            // the first alternative of its JSON type; of none, it is left to the operation.
            return alternatives
                .iter()
                .find(|a| match self.resolve(a).get("type") {
                    Some(Value::String(t)) => fits(t, value),
                    Some(Value::Array(ts)) => {
                        ts.iter().filter_map(Value::as_str).any(|t| fits(t, value))
                    }
                    _ => false,
                })
                .and_then(|a| self.value(a, value, path));
        }
        let allowed: Vec<&str> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !allowed.is_empty() && !allowed.iter().any(|t| fits(t, value)) {
            return Some(format!(
                "field `{path}` of `{op}` must be {}, not {}",
                allowed.join(" or "),
                kind(value)
            ));
        }
        if let Some(Value::Array(choices)) = schema.get("enum")
            && !choices.contains(value)
        {
            let names: Vec<String> = choices.iter().map(Value::to_string).collect();
            return Some(format!(
                "field `{path}` of `{op}` must be one of {}, not {value}",
                names.join(", ")
            ));
        }
        if let Some(n) = value.as_f64() {
            let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
            if let Some(min) = bound("minimum").filter(|&min| n < min) {
                return Some(format!(
                    "field `{path}` of `{op}` must be at least {min}, not {value}"
                ));
            }
            if let Some(max) = bound("maximum").filter(|&max| n > max) {
                return Some(format!(
                    "field `{path}` of `{op}` must be at most {max}, not {value}"
                ));
            }
        }
        match value {
            Value::Array(items) => {
                let item = schema.get("items")?;
                items
                    .iter()
                    .enumerate()
                    .find_map(|(i, v)| self.value(item, v, &format!("{path}[{i}]")))
            }
            Value::Object(object) if schema.get("properties").is_some() => {
                self.object(schema, object, path)
            }
            _ => None,
        }
    }
}

/// Whether `value` is of JSON Schema type `t`.
fn fits(t: &str, value: &Value) -> bool {
    match t {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// The JSON type of `value`, in words.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::misfit;
    use serde_json::json;

    #[test]
    fn no_two_types_of_the_catalog_share_a_schema_name() {
        // The OpenAPI document gathers every operation's definitions into one table by
        // name: two types of one name would overwrite each other there.
        let mut seen: std::collections::HashMap<String, (&str, serde_json::Value)> =
            std::collections::HashMap::new();
        for op in super::catalog() {
            for schema in [&op.schema, &op.response] {
                let Some(defs) = schema.get("$defs").and_then(|d| d.as_object()) else {
                    continue;
                };
                for (name, def) in defs {
                    if let Some((first, earlier)) = seen.get(name) {
                        assert_eq!(
                            earlier, def,
                            "`{name}` of `{}` is not the `{name}` of `{first}`",
                            op.name
                        );
                    } else {
                        seen.insert(name.clone(), (op.name, def.clone()));
                    }
                }
            }
        }
        assert!(
            seen.contains_key("Event") && seen.contains_key("Belief"),
            "{:?}",
            seen.keys()
        );
    }

    #[test]
    fn a_misfit_names_its_field() {
        let object = |v: serde_json::Value| v.as_object().unwrap().clone();
        let m = misfit("observe", &object(json!({"project": "p", "text": 42}))).unwrap();
        assert!(
            m.contains("`text`") && m.contains("string") && m.contains("integer"),
            "{m}"
        );
        let m = misfit(
            "recall",
            &object(json!({"project": "p", "query": "x", "kk": 1})),
        )
        .unwrap();
        assert!(m.contains("`kk`"), "{m}");
        let m = misfit("observe", &object(json!({"project": "p"}))).unwrap();
        assert!(m.contains("needs the field `text`"), "{m}");
        assert_eq!(
            misfit(
                "observe",
                &object(json!({"project": "p", "text": "t", "thread": null}))
            ),
            None
        );
    }

    #[test]
    fn a_misfit_inside_an_array_or_a_nested_object_names_its_place() {
        let object = |v: serde_json::Value| v.as_object().unwrap().clone();
        let m = misfit(
            "observe",
            &object(json!({"project": "p", "text": "t", "embedding": [1, 2, "a"]})),
        )
        .unwrap();
        assert!(
            m.contains("`embedding[2]`") && m.contains("number") && m.contains("a string"),
            "{m}"
        );
        let m = misfit(
            "observe_batch",
            &object(
                json!({"events": [{"project": "p", "text": "t"}, {"project": "p", "text": 5}]}),
            ),
        )
        .unwrap();
        assert!(m.contains("`events[1].text`"), "{m}");
        let m = misfit(
            "observe_batch",
            &object(json!({"events": [{"project": "p", "text": "t", "colour": "red"}]})),
        )
        .unwrap();
        assert!(m.contains("`colour`"), "{m}");
        let m = misfit(
            "observe_batch",
            &object(json!({"events": [{"project": "p"}]})),
        )
        .unwrap();
        assert!(m.contains("`events[0].text`"), "{m}");
        let m = misfit(
            "recall",
            &object(json!({"project": "p", "query": "q", "k": -1})),
        )
        .unwrap();
        assert!(m.contains("`k`") && m.contains("at least 1"), "{m}");
        assert_eq!(
            misfit(
                "observe_batch",
                &object(json!({"events": [{"project": "p", "text": "t", "embedding": [0.5]}]}))
            ),
            None
        );
    }
}
