//! Every operation's result decodes back into its response type: a Rust client can read
//! what the HTTP routes, the MCP tools and `--json` print (`Response::decode`), and the
//! decoded value serializes to the same JSON.

use hypermem::api::{Api, Request, Response};
use hypermem::{Memory, Profile, ProfileKind};
use serde_json::{Value, json};

/// Runs `request` (JSON with its `op`), checks that its JSON result decodes into the
/// operation's response type and re-encodes identically, and returns the JSON.
fn run(api: &Api<'_>, request: Value) -> Value {
    let request: Request = serde_json::from_value(request.clone())
        .unwrap_or_else(|e| panic!("request {request}: {e}"));
    let response = api
        .respond(&request)
        .unwrap_or_else(|e| panic!("{}: {e:?}", request.name()));
    let value = serde_json::to_value(&response).unwrap();
    let decoded = Response::decode(request.name(), value.clone())
        .unwrap_or_else(|e| panic!("{} does not decode: {e:?}\n{value:#}", request.name()));
    assert_eq!(
        serde_json::to_value(&decoded).unwrap(),
        value,
        "{} changes when decoded",
        request.name()
    );
    value
}

#[test]
fn every_operation_result_decodes_into_its_response_type() {
    let dir = tempfile::tempdir().unwrap();
    let mut profile = Profile::load(Profile::bundled_path(ProfileKind::Lite)).unwrap();
    profile.semantic.model = None;
    let memory = Memory::open(&profile, Some(dir.path())).unwrap();
    let api = Api::new(&memory);
    let p = "acme";

    let e1 = run(&api, json!({"op": "observe", "project": p, "text": "I prefer dark mode in every editor", "thread": "t1"}))["event_id"].as_u64().unwrap();
    let batch = run(
        &api,
        json!({"op": "observe_batch", "events": [
            {"project": p, "text": "Shall I remind you to renew the TLS certificate?", "role": "assistant", "thread": "t1"},
            {"project": p, "text": "yes please, renew it before Friday", "thread": "t1"},
        ]}),
    );
    let (ask, yes) = (
        batch["event_ids"][0].as_u64().unwrap(),
        batch["event_ids"][1].as_u64().unwrap(),
    );
    run(
        &api,
        json!({"op": "record_event", "project": p, "text": "the backup runs nightly at 2 am"}),
    );
    run(
        &api,
        json!({"op": "recall", "project": p, "query": "which editor theme", "k": 5}),
    );
    run(
        &api,
        json!({"op": "pack", "project": p, "query": "editor theme", "available": 2000}),
    );
    run(
        &api,
        json!({"op": "belief_assert", "project": p, "key": "user.theme", "statement": "prefers dark mode", "ownership": "user", "evidence": [e1]}),
    );
    run(
        &api,
        json!({"op": "belief_correct", "project": p, "key": "user.theme", "statement": "prefers dark mode, high contrast", "evidence": [yes]}),
    );
    run(
        &api,
        json!({"op": "belief_current", "project": p, "key": "user.theme"}),
    );
    for op in ["belief_current", "belief_history"] {
        let request: Request =
            serde_json::from_value(json!({"op": op, "project": p, "key": "no.such.key"})).unwrap();
        let missing = api.respond(&request);
        assert_eq!(
            missing.unwrap_err().reason,
            "not_found",
            "{op} of a key no belief has"
        );
    }
    run(
        &api,
        json!({"op": "belief_at", "project": p, "key": "user.theme", "at": "2100-01-01T00:00:00Z"}),
    );
    run(
        &api,
        json!({"op": "belief_history", "project": p, "key": "user.theme"}),
    );
    run(
        &api,
        json!({"op": "apply_plan", "plan": {"project": p, "idempotency_key": "plan-1", "ops": [
            {"op": "propose", "key": "user.editor", "statement": "uses a terminal editor", "ownership": "user", "evidence": [e1]},
            {"op": "propose", "key": "user.shell", "statement": "uses zsh", "ownership": "user", "evidence": [e1]},
        ]}}),
    );
    let candidates = run(&api, json!({"op": "candidates", "project": p}));
    let ids: Vec<u64> = candidates
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{candidates}");
    run(
        &api,
        json!({"op": "candidate_approve", "project": p, "id": ids[0]}),
    );
    run(
        &api,
        json!({"op": "candidate_reject", "project": p, "id": ids[1]}),
    );

    let episode = run(
        &api,
        json!({"op": "episode_start", "project": p, "agent": "a1"}),
    )["episode"]
        .as_u64()
        .unwrap();
    run(
        &api,
        json!({"op": "episode_append", "project": p, "episode": episode, "event": e1}),
    );
    run(
        &api,
        json!({"op": "episode_end", "project": p, "episode": episode, "outcome": "done", "reward": 1.0}),
    );
    let procedure = run(&api, json!({"op": "procedure_add", "project": p, "name": "renew-cert", "trigger": "certificate renewal", "steps": ["run certbot", "reload nginx"]}))["procedure"].as_u64().unwrap();
    run(
        &api,
        json!({"op": "procedure_suggest", "project": p, "query": "certificate renewal for TLS", "k": 3}),
    );
    run(
        &api,
        json!({"op": "procedure_outcome", "project": p, "id": procedure, "success": true}),
    );

    let item = run(&api, json!({"op": "prospective_propose", "project": p, "kind": "reminder", "text": "renew the TLS certificate", "event": ask, "due": "2100-01-01T00:00:00Z"}))["id"].as_u64().unwrap();
    run(
        &api,
        json!({"op": "prospective_confirm", "project": p, "id": item, "event": yes}),
    );
    run(
        &api,
        json!({"op": "prospective_defer", "project": p, "id": item, "until": "2100-02-01T00:00:00Z"}),
    );
    run(
        &api,
        json!({"op": "prospective_due", "project": p, "at": "2100-03-01T00:00:00Z"}),
    );
    run(
        &api,
        json!({"op": "prospective_show", "project": p, "id": item}),
    );
    run(
        &api,
        json!({"op": "prospective_complete", "project": p, "id": item}),
    );
    let other = run(&api, json!({"op": "prospective_propose", "project": p, "kind": "intention", "text": "call Ana", "event": ask}))["id"].as_u64().unwrap();
    run(
        &api,
        json!({"op": "prospective_reject", "project": p, "id": other}),
    );

    run(&api, json!({"op": "gaps", "project": p, "limit": 10}));
    run(
        &api,
        json!({"op": "associations", "project": p, "limit": 10}),
    );
    run(&api, json!({"op": "proposals", "project": p}));
    run(&api, json!({"op": "pulse", "project": p}));
    run(&api, json!({"op": "stats"}));
    run(&api, json!({"op": "map", "project": p, "limit": 5}));
    run(&api, json!({"op": "migrate", "dry_run": true}));
    let receipt = run(
        &api,
        json!({"op": "forget_project", "project": p, "confirm": true}),
    );
    assert!(receipt.is_object(), "{receipt}");

    // `execute` prints exactly the response's JSON.
    let stats: Request = serde_json::from_value(json!({"op": "stats"})).unwrap();
    assert_eq!(
        api.execute(&stats).unwrap(),
        serde_json::to_value(api.respond(&stats).unwrap()).unwrap()
    );

    // A value that is not the operation's result is refused with a named reason.
    let e = Response::decode("recall", json!({"event_id": 1})).unwrap_err();
    assert_eq!(e.reason, "invalid_json");
    let e = Response::decode("no_such_op", json!({})).unwrap_err();
    assert_eq!(e.reason, "invalid_argument");
}
