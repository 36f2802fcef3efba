//! The catalog of operations: each operation's name (its `op` tag), what it does in words
//! an agent can choose by, and the JSON Schema of its request (derived from the request
//! type, so it cannot drift from what is accepted). The MCP tools and the OpenAPI document
//! are generated from it.

use serde_json::{Map, Value};

/// One operation of the catalog.
#[derive(Debug, Clone)]
pub struct Operation {
    /// Its `op` tag: the MCP tool's name, the last segment of its HTTP route.
    pub name: &'static str,
    /// What it does.
    pub description: &'static str,
    /// The JSON Schema of its request (without `op`).
    pub schema: Value,
}

/// Operation `name`, with the JSON Schema of its request type `T`.
fn op<T: schemars::JsonSchema>(name: &'static str, description: &'static str) -> Operation {
    Operation {
        name,
        description,
        schema: serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default(),
    }
}

/// Every operation served as an MCP tool and described in the OpenAPI document.
pub fn catalog() -> Vec<Operation> {
    use super::*;
    vec![
        op::<Observe>(
            "observe",
            "Record one observation (a message, a fact, an action) in a project's long-term memory. Returns its event id, which beliefs cite as evidence.",
        ),
        op::<ObserveBatch>(
            "observe_batch",
            "Record several observations in one transaction (each names its project): all are stored or none. Returns their event ids in order.",
        ),
        op::<Observe>(
            "record_event",
            "Record one observation, as `observe`, and return the whole stored event (id, time, session, thread) instead of its id alone.",
        ),
        op::<Recall>(
            "recall",
            "Find the memories of a project that answer a query (free text, \"quoted phrases\", filters such as role:user since:2025-01-01). Returns ranked items with their score breakdown and source anchor.",
        ),
        op::<Pack>(
            "pack",
            "Build a context pack for a query within a token budget (25 % of `available` by default, never above 30 %), with a receipt for every candidate.",
        ),
        op::<BeliefAssert>(
            "belief_assert",
            "Assert a belief under a key, backed by evidence event ids of the same project (user-owned beliefs need a user event). The same statement again reinforces it; a different one is recorded as a possible conflict.",
        ),
        op::<ApplyPlan>(
            "apply_plan",
            "Apply a governance plan: belief operations (assert, reinforce, correct, contradict, propose, promote, reject) with evidence, expected versions and an idempotency key, all validated before the first write and committed together; the same plan again is `already_applied`.",
        ),
        op::<ProjectId64>(
            "memory_show",
            "One stored memory (by event id) with what the engine keeps about it: its access count and long-term-potentiation strength, its tier, and the beliefs citing it.",
        ),
        op::<PlanKey>(
            "plan_audit",
            "What an applied governance plan changed, one line per operation in order: the operation, the belief it wrote and its outcome, as committed with the plan.",
        ),
        op::<BeliefCorrect>(
            "belief_correct",
            "Correct the active belief of a key: the old version is superseded and its validity window closed.",
        ),
        op::<BeliefKey>(
            "belief_current",
            "The active belief of a key; a key without one is a `not_found` error saying whether it has older versions.",
        ),
        op::<BeliefAt>(
            "belief_at",
            "The belief of a key that was valid at a time (RFC 3339, a date, or epoch ms); none valid then is `not_found`.",
        ),
        op::<BeliefKey>(
            "belief_history",
            "Every version of a key, oldest first; a key no belief ever had is `not_found`.",
        ),
        op::<EpisodeStart>(
            "episode_start",
            "Start an episode for an agent (its open one is sealed and chained).",
        ),
        op::<EpisodeAppend>(
            "episode_append",
            "Append a recorded event to an episode (once per event).",
        ),
        op::<EpisodeEnd>(
            "episode_end",
            "Seal an episode with its outcome and reward.",
        ),
        op::<ProjectId64>(
            "episode_show",
            "One episode as stored: its events in order, status, outcome, reward, and the previous and next episodes of its agent.",
        ),
        op::<ProjectOnly>(
            "concepts",
            "The concepts consolidation made of a project's episodes: label, supporting episodes, reliability and outcome counts.",
        ),
        op::<ProjectId64>(
            "concept_show",
            "One concept with each supporting episode and its events, so what a concept stands for can be checked against what was said.",
        ),
        op::<ProcedureAdd>(
            "procedure_add",
            "Store a procedure: a name, a trigger (when to use it) and its steps.",
        ),
        op::<ProcedureSuggest>(
            "procedure_suggest",
            "Procedures whose trigger matches a situation, weighted by their reliability.",
        ),
        op::<ProcedureOutcome>(
            "procedure_outcome",
            "Record whether a procedure worked (success true or false).",
        ),
        op::<ProspectivePropose>(
            "prospective_propose",
            "Record a pending intention, commitment, reminder, open loop or plan created by an event; it becomes active only when a later user event confirms it.",
        ),
        op::<ProspectiveConfirm>(
            "prospective_confirm",
            "Confirm a pending item by a later, explicitly affirmative user event.",
        ),
        op::<ProspectiveDefer>(
            "prospective_defer",
            "Postpone a prospective item to a new due time (`until`): a confirmed item becomes deferred, a pending one stays pending (deferring never confirms).",
        ),
        op::<ProjectId64>(
            "prospective_complete",
            "Mark a confirmed prospective item done; its history keeps every transition.",
        ),
        op::<ProjectId64>(
            "prospective_reject",
            "Refuse a pending or confirmed prospective item; it stays in history as rejected.",
        ),
        op::<ProjectId64>(
            "prospective_show",
            "One prospective item with its status and history.",
        ),
        op::<ProspectiveDue>(
            "prospective_due",
            "Confirmed items due at a time (default now).",
        ),
        op::<ProjectLimit>(
            "gaps",
            "Knowledge gaps of a project: questions its memory could not answer well.",
        ),
        op::<ProjectOnly>(
            "candidates",
            "Candidate beliefs the curator drew from what users said, waiting for approval: approve one with `candidate_approve` or drop it with `candidate_reject`.",
        ),
        op::<ProjectId64>(
            "candidate_approve",
            "Promote a candidate belief to an active one, through a governed plan (refused with the rule it breaks, nothing written).",
        ),
        op::<ProjectId64>(
            "candidate_reject",
            "Reject a candidate belief, through a governed plan; it stays in history as rejected.",
        ),
        op::<ProjectLimit>(
            "associations",
            "Candidate associations pulse ticks found between episodes and concepts (by prototype similarity and ripple over synapses), newest first: candidates, never facts.",
        ),
        op::<ProjectOnly>(
            "proposals",
            "Self-improvement proposals the meta-memory raised for a project (a rule over its metrics was crossed), with the metrics that triggered each, oldest first.",
        ),
        op::<ProjectOnly>(
            "pulse",
            "Run one maintenance tick on a project now (tier moves, consolidation, decay, curation) within the profile's time budget; returns what each phase did.",
        ),
        op::<Migrate>(
            "migrate",
            "Apply the pending schema migrations of this memory and report them (from and to versions); `dry_run: true` only reports.",
        ),
        op::<MapRequest>(
            "map",
            "One project at a glance: sizes, time span, threads, episodes, concepts, beliefs, procedures.",
        ),
        op::<Empty>(
            "stats",
            "Counts per project of this memory: events, vectors per tier, beliefs, episodes, procedures.",
        ),
        op::<ForgetProject>(
            "forget_project",
            "Erase a project from every store. Cannot be undone: requires confirm = true.",
        ),
    ]
}

/// Why `object` does not fit the request of operation `op`, naming the field: an unknown
/// field, a field of the wrong JSON type, or a missing one (`None` when the top-level
/// fields fit, or `op` is not in the catalog). serde's own message for a tagged request
/// names no field.
pub fn misfit(op: &str, object: &Map<String, Value>) -> Option<String> {
    let schema = catalog().into_iter().find(|o| o.name == op)?.schema;
    let properties = schema.get("properties")?.as_object()?;
    for (key, value) in object.iter().filter(|(k, _)| *k != "op") {
        let Some(field) = properties.get(key) else {
            let known: Vec<&str> = properties.keys().map(String::as_str).collect();
            return Some(format!(
                "`{op}` has no field `{key}` (its fields: {})",
                known.join(", ")
            ));
        };
        let allowed: Vec<&str> = match field.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            // A reference or a union: its shape is checked by the operation itself.
            _ => continue,
        };
        if !allowed.iter().any(|t| fits(t, value)) {
            return Some(format!(
                "field `{key}` of `{op}` must be {}, not {}",
                allowed.join(" or "),
                kind(value)
            ));
        }
    }
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|r| !object.contains_key(*r))
        .map(|r| format!("`{op}` needs the field `{r}`"))
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
}
