//! `hypermem mcp` spawned as a child process and driven by the official SDK's client, as an
//! agent's MCP client would: list tools, observe, recall, and refusals as tool errors
//! carrying their reason.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn lite() -> hypermem::Profile {
    hypermem::Profile::load(hypermem::Profile::bundled_path(hypermem::ProfileKind::Lite)).unwrap()
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[test]
fn an_agent_lists_tools_observes_recalls_and_sees_refusals_with_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime();
    runtime.block_on(async {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_hypermem"));
        cmd.arg("--data-dir").arg(dir.path()).args(["--create", "mcp"]);
        let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
        let tools = client.list_tools(Default::default()).await.unwrap().tools;
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        for want in [
            "observe", "observe_batch", "record_event", "recall", "pack", "belief_assert", "apply_plan",
            "candidates", "candidate_approve", "candidate_reject", "associations", "proposals",
            "pulse", "gaps", "map", "stats", "migrate", "forget_project",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        for t in &tools {
            let described = t.description.as_deref().unwrap_or("");
            assert!(described.len() >= 40, "{}: a description an agent can choose by: {described:?}", t.name);
        }
        let recall = tools.iter().find(|t| t.name == "recall").unwrap();
        assert!(recall.input_schema["properties"]["query"].is_object(), "{:?}", recall.input_schema);
        let call = |name: &'static str, a: Value| {
            CallToolRequestParams::new(name).with_arguments(args(a))
        };
        let text = |r: &rmcp::model::CallToolResult| -> Value {
            let t = r.content[0].as_text().unwrap().text.clone();
            serde_json::from_str(&t).unwrap()
        };
        let r = client
            .call_tool(call("observe", json!({"project": "acme", "text": "I prefer dark mode in every editor"})))
            .await
            .unwrap();
        assert_ne!(r.is_error, Some(true));
        let id = text(&r)["event_id"].as_u64().unwrap();
        let r = client
            .call_tool(call("recall", json!({"project": "acme", "query": "which editor theme"})))
            .await
            .unwrap();
        assert_eq!(text(&r)["items"][0]["event"]["id"], id);
        // A governance refusal is a tool error with its reason.
        let r = client
            .call_tool(call(
                "belief_assert",
                json!({"project": "acme", "key": "user.theme", "statement": "dark", "ownership": "user", "evidence": [id + 100]}),
            ))
            .await
            .unwrap();
        assert_eq!(r.is_error, Some(true));
        assert_eq!(text(&r)["error"]["reason"], "unknown_evidence");
        // A governance plan through its tool: applied, then already applied.
        let plan = json!({"plan": {"project": "acme", "idempotency_key": "p1", "ops": [
            {"op": "assert", "key": "user.editor", "statement": "uses dark mode", "ownership": "user", "evidence": [id]}
        ]}});
        let r = client.call_tool(call("apply_plan", plan.clone())).await.unwrap();
        assert_ne!(r.is_error, Some(true), "{:?}", r.content);
        assert_eq!(text(&r)["status"], "applied");
        let r = client.call_tool(call("apply_plan", plan)).await.unwrap();
        assert_eq!(text(&r)["status"], "already_applied");
        let schema = &tools.iter().find(|t| t.name == "apply_plan").unwrap().input_schema;
        assert!(schema["properties"]["plan"].is_object(), "{schema:?}");
        let r = client
            .call_tool(call("forget_project", json!({"project": "acme"})))
            .await
            .unwrap();
        assert_eq!(text(&r)["error"]["reason"], "confirmation_required");
        let r = client
            .call_tool(call("recall", json!({"project": "acme", "query": 42})))
            .await
            .unwrap();
        assert_eq!(text(&r)["error"]["reason"], "invalid_request");
        let r = client.call_tool(call("no_such_tool", json!({}))).await.unwrap();
        assert_eq!(text(&r)["error"]["reason"], "unknown_tool");
        client.cancel().await.unwrap();
    });
}

/// `hypermem mcp` on `dir` with piped stdin and stdout, for tests that write the
/// protocol's lines themselves.
fn spawn_stdio(dir: &std::path::Path) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_hypermem"))
        .arg("--data-dir")
        .arg(dir)
        .args(["--create", "mcp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn arguments_that_are_not_an_object_are_invalid_params() {
    use std::io::{BufRead, BufReader, Write};
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_stdio(dir.path());
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // A JSON string is sent as the raw line it holds (and always answered).
    let mut ask = |message: Value| -> Value {
        match &message {
            Value::String(raw) => writeln!(stdin, "{raw}").unwrap(),
            _ => writeln!(stdin, "{message}").unwrap(),
        }
        stdin.flush().unwrap();
        if message.get("id").is_none() && !message.is_string() {
            return Value::Null;
        }
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    };
    ask(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    ask(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let r = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "recall", "arguments": 5}}));
    assert_eq!(
        (r["id"].as_u64(), r["error"]["code"].as_i64()),
        (Some(2), Some(-32602)),
        "{r}"
    );
    // A line that is not JSON gets JSON-RPC's parse error, with a null id.
    let r = ask(json!("this is not json {"));
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].as_i64()),
        (Value::Null, Some(-32700)),
        "{r}"
    );
    // The session goes on.
    let r = ask(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "observe", "arguments": {"project": "a", "text": "still here"}}}));
    assert_eq!(r["result"]["structuredContent"]["event_id"], 1, "{r}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_call_sent_before_the_answer_to_an_earlier_write_sees_that_write() {
    use std::io::{BufRead as _, BufReader, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_stdio(dir.path());
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    // Everything in one burst, as a client that pipelines its calls sends it: each recall
    // follows the observe it must see without waiting for the observe's answer.
    let mut burst = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    const ROUNDS: u64 = 12;
    for i in 0..ROUNDS {
        burst.push(json!({"jsonrpc": "2.0", "id": 2 * i + 1, "method": "tools/call", "params": {
            "name": "observe", "arguments": {"project": "p", "text": format!("the locker code for room {i} is zq{i}x")}}}));
        burst.push(
            json!({"jsonrpc": "2.0", "id": 2 * i + 2, "method": "tools/call", "params": {
            "name": "recall", "arguments": {"project": "p", "query": format!("zq{i}x"), "k": 1}}}),
        );
    }
    for message in &burst {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    drop(stdin);
    let mut answers = std::collections::HashMap::new();
    for line in stdout.lines() {
        let r: Value = serde_json::from_str(&line.unwrap()).unwrap();
        answers.insert(r["id"].as_u64().unwrap(), r);
    }
    assert!(child.wait().unwrap().success());
    for i in 0..ROUNDS {
        let r = &answers[&(2 * i + 2)];
        let items = &r["result"]["structuredContent"]["items"];
        assert_eq!(
            items[0]["event"]["content"],
            format!("the locker code for room {i} is zq{i}x"),
            "round {i}: {r}"
        );
    }
}

#[test]
fn a_memory_held_by_another_process_is_refused_on_every_call_with_its_reason() {
    // Another writer holds the store: a second `hypermem mcp` still answers the handshake
    // and the tool list, and every call is a tool error naming `store_locked`; the process
    // then exits non-zero.
    let dir = tempfile::tempdir().unwrap();
    let holder = hypermem::Memory::open(&lite(), Some(dir.path())).unwrap();
    let runtime = runtime();
    runtime.block_on(async {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_hypermem"));
        cmd.arg("--data-dir").arg(dir.path()).arg("mcp");
        let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
        let tools = client.list_tools(Default::default()).await.unwrap().tools;
        assert!(tools.iter().any(|t| t.name == "recall"));
        for (name, a) in [
            ("stats", json!({})),
            (
                "observe",
                json!({"project": "acme", "text": "kept nowhere"}),
            ),
        ] {
            let r = client
                .call_tool(CallToolRequestParams::new(name).with_arguments(args(a)))
                .await
                .unwrap();
            assert_eq!(r.is_error, Some(true), "{name}: {r:?}");
            let doc: Value = serde_json::from_str(&r.content[0].as_text().unwrap().text).unwrap();
            assert_eq!(doc["error"]["reason"], "store_locked", "{doc}");
        }
        client.cancel().await.unwrap();
    });
    drop(holder);
    // Nothing was stored by the refused calls.
    let m = hypermem::Memory::open(&lite(), Some(dir.path())).unwrap();
    assert!(m.stats().unwrap().is_empty());
}
