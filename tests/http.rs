//! `hypermem serve` driven through a real HTTP client, as agents would: routes, status
//! codes and reasons, tokens, and durability under concurrent load with SIGTERM and kill -9.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hypermem"))
            .arg("--data-dir")
            .arg(dir)
            .args(["--create", "serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("no address: {line:?}"))
            .to_owned();
        Self { child, url }
    }

    fn signal(&mut self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        self.child.wait().unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// (status, body) of a POST.
fn post(url: &str, token: Option<&str>, body: &str) -> (u16, Value) {
    let mut req = agent().post(url).header("Content-Type", "application/json");
    if let Some(t) = token {
        req = req.header("Authorization", &format!("Bearer {t}"));
    }
    let mut resp = req.send(body).unwrap();
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn get(url: &str) -> (u16, Value) {
    let mut resp = agent().get(url).call().unwrap();
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn reason(v: &Value) -> &str {
    v["error"]["reason"].as_str().unwrap_or("<none>")
}

#[test]
fn routes_answer_with_statuses_and_named_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &["--max-body", "4096"]);
    let u = |path: &str| format!("{}{path}", s.url);
    assert_eq!(get(&u("/healthz")).0, 200);
    assert_eq!(get(&u("/readyz")).0, 200);
    let (st, v) = post(
        &u("/v1/projects/acme/observe"),
        None,
        r#"{"text":"I prefer dark mode in every editor","thread":"t1"}"#,
    );
    assert_eq!(st, 200, "{v}");
    let e1 = v["event_id"].as_u64().unwrap();
    let (_, v) = post(
        &u("/v1/projects/other/observe"),
        None,
        r#"{"text":"light mode here"}"#,
    );
    let foreign = v["event_id"].as_u64().unwrap();
    let (st, v) = post(
        &u("/v1/projects/acme/recall"),
        None,
        r#"{"query":"which editor theme"}"#,
    );
    assert_eq!(st, 200);
    assert_eq!(v["items"][0]["event"]["id"], e1);
    let (st, v) = post(
        &u("/v1/projects/acme/pack"),
        None,
        r#"{"query":"editor theme","available":2000}"#,
    );
    assert_eq!(st, 200, "{v}");
    assert!(v["used"].as_u64().unwrap() <= 600);
    let assert_body = json!({"key": "user.theme", "statement": "prefers dark mode", "ownership": "user", "evidence": [e1]}).to_string();
    let (st, v) = post(&u("/v1/projects/acme/belief_assert"), None, &assert_body);
    assert_eq!((st, v["status"].as_str()), (200, Some("applied")), "{v}");
    let (st, v) = post(&u("/v1/projects/acme/belief_assert"), None, &assert_body);
    assert_eq!(
        (st, v["status"].as_str()),
        (200, Some("already_applied")),
        "{v}"
    );
    let (st, v) = get(&u("/v1/projects/acme/beliefs/user.theme"));
    assert_eq!(
        (st, v["statement"].as_str()),
        (200, Some("prefers dark mode"))
    );
    let (st, v) = get(&u("/v1/projects/acme/beliefs/no.such.key"));
    assert_eq!(
        (st, v["error"]["reason"].as_str()),
        (404, Some("not_found")),
        "a key without a belief is not a 200 with null: {v}"
    );
    let (st, v) = get(&u("/v1/projects/acme/map"));
    assert_eq!((st, v["events"].as_u64()), (200, Some(1)));
    let (st, v) = get(&u("/v1/stats"));
    assert_eq!((st, v.as_array().map(Vec::len)), (200, Some(2)));
    // Refusals.
    for (path, body, status, why) in [
        (
            "/v1/projects/acme/recall",
            "{\"query\":",
            400,
            "invalid_json",
        ),
        ("/v1/projects/acme/recall", "[1]", 400, "invalid_json"),
        (
            "/v1/projects/acme/recall",
            r#"{"query":"x","kk":1}"#,
            400,
            "invalid_request",
        ),
        (
            "/v1/projects/nope/recall",
            r#"{"query":"x"}"#,
            404,
            "unknown_project",
        ),
        (
            "/v1/projects/acme/prospective_complete",
            r#"{"id":999}"#,
            404,
            "unknown_item",
        ),
        (
            "/v1/projects/acme/belief_assert",
            &json!({"key": "k", "statement": "s", "evidence": [foreign]}).to_string(),
            404,
            "unknown_evidence",
        ),
        (
            "/v1/projects/acme/forget_project",
            "{}",
            400,
            "confirmation_required",
        ),
        (
            "/v1/projects/acme/observe",
            &json!({"text": "x".repeat(5000)}).to_string(),
            413,
            "payload_too_large",
        ),
        ("/v1/nothing/here", "{}", 404, "not_found"),
        (
            "/v1/projects/acme/no_such_op",
            "{}",
            404,
            "unknown_operation",
        ),
        (
            "/v1/ops",
            r#"{"op":"no_such_op"}"#,
            404,
            "unknown_operation",
        ),
        ("/v1/stats", "{}", 405, "method_not_allowed"),
        ("/v1/projects/acme/map", "{}", 200, "<none>"),
    ] {
        let (st, v) = post(&u(path), None, body);
        assert_eq!(
            (st, reason(&v)),
            (status, why),
            "{path} {}",
            &body[..body.len().min(60)]
        );
    }
    // A wrong JSON type names its field.
    let (st, v) = post(&u("/v1/projects/acme/observe"), None, r#"{"text":42}"#);
    let message = v["error"]["message"].as_str().unwrap();
    assert_eq!((st, reason(&v)), (400, "invalid_request"));
    assert!(
        message.contains("`text`") && message.contains("string"),
        "{message}"
    );
    let (st, v) = post(
        &u("/v1/projects/acme/forget_project"),
        None,
        r#"{"confirm":true}"#,
    );
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        reason(&post(&u("/v1/projects/acme/recall"), None, r#"{"query":"x"}"#).1),
        "unknown_project"
    );
}

#[test]
fn tokens_scope_projects_and_access_and_leak_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(
        &tokens,
        r#"
[[token]]
secret = "writer-of-acme-0001"
projects = ["acme"]
access = "read_write"

[[token]]
secret = "reader-of-acme-0002"
projects = ["acme"]
access = "read"

[[token]]
secret = "admin-token-0003"
projects = ["*"]
access = "read_write"
"#,
    )
    .unwrap();
    let data = dir.path().join("data");
    let s = Server::start(&data, &["--tokens", tokens.to_str().unwrap()]);
    let u = |path: &str| format!("{}{path}", s.url);
    let obs = r#"{"text":"the secret launch date is in May"}"#;
    assert_eq!(
        post(
            &u("/v1/projects/hidden/observe"),
            Some("admin-token-0003"),
            obs
        )
        .0,
        200
    );
    let (st, v) = post(&u("/v1/projects/acme/observe"), None, obs);
    assert_eq!((st, reason(&v)), (401, "unauthorized"));
    let (st, v) = post(
        &u("/v1/projects/acme/observe"),
        Some("not-a-token-at-all"),
        obs,
    );
    assert_eq!((st, reason(&v)), (401, "unauthorized"));
    assert_eq!(
        post(
            &u("/v1/projects/acme/observe"),
            Some("writer-of-acme-0001"),
            obs
        )
        .0,
        200
    );
    let (st, v) = post(
        &u("/v1/projects/acme/observe"),
        Some("reader-of-acme-0002"),
        obs,
    );
    assert_eq!((st, reason(&v)), (403, "read_only_token"));
    assert_eq!(
        post(
            &u("/v1/projects/acme/recall"),
            Some("reader-of-acme-0002"),
            r#"{"query":"launch"}"#
        )
        .0,
        200
    );
    // Out of scope: the same answer for a project that exists and one that does not.
    let existing = post(
        &u("/v1/projects/hidden/recall"),
        Some("writer-of-acme-0001"),
        r#"{"query":"launch"}"#,
    );
    let missing = post(
        &u("/v1/projects/ghost/recall"),
        Some("writer-of-acme-0001"),
        r#"{"query":"launch"}"#,
    );
    // ... and the same as a token that may read every project gets for a missing one.
    let absent = post(
        &u("/v1/projects/ghost/recall"),
        Some("admin-token-0003"),
        r#"{"query":"launch"}"#,
    );
    let unnamed = |(status, v): (u16, Value), name: &str| {
        let message = v["error"]["message"].as_str().unwrap().replace(name, "P");
        (status, reason(&v).to_owned(), message)
    };
    let existing = unnamed(existing, "hidden");
    assert_eq!(existing.0, 404, "{existing:?}");
    assert_eq!(existing.1, "unknown_project");
    assert_eq!(
        existing,
        unnamed(missing, "ghost"),
        "nothing about the other project leaks"
    );
    assert_eq!(
        existing,
        unnamed(absent, "ghost"),
        "nothing about the other project leaks"
    );
    // The scheme is case-insensitive (RFC 7235).
    let mut resp = agent()
        .post(&u("/v1/projects/acme/recall"))
        .header("Authorization", "bearer reader-of-acme-0002")
        .send(r#"{"query":"launch"}"#)
        .unwrap();
    assert_eq!(
        resp.status().as_u16(),
        200,
        "{}",
        resp.body_mut().read_to_string().unwrap()
    );
    let (st, v) = post(
        &u("/v1/ops"),
        Some("writer-of-acme-0001"),
        r#"{"op":"stats"}"#,
    );
    assert_eq!((st, reason(&v)), (403, "project_forbidden"));
    assert_eq!(
        post(&u("/v1/ops"), Some("admin-token-0003"), r#"{"op":"stats"}"#).0,
        200
    );
    // Without tokens, a non-loopback address is refused.
    let out = Command::new(env!("CARGO_BIN_EXE_hypermem"))
        .arg("--data-dir")
        .arg(&data)
        .args(["--json", "serve", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reason(&v), "insecure_listen");
}

/// 8 clients × `per_client` observes with concurrent recalls; returns the acknowledged
/// (source id, event id) pairs, stopping early when `stop_after` acknowledgements exist.
fn load(url: &str, per_client: usize, stop_after: Option<usize>) -> Vec<(String, u64)> {
    let acked = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for c in 0..8 {
            let acked = &acked;
            scope.spawn(move || {
                for i in 0..per_client {
                    if stop_after.is_some_and(|n| acked.lock().unwrap().len() >= n) {
                        return;
                    }
                    let sid = format!("c{c}-{i}");
                    let body = json!({"text": format!("client {c} note {i} about kestrels"), "source_id": sid, "thread": format!("t{c}")});
                    let Ok(mut resp) = agent()
                        .post(&format!("{url}/v1/projects/load/observe"))
                        .send(body.to_string())
                    else {
                        return; // the server went away
                    };
                    if resp.status() != 200 {
                        return;
                    }
                    let v: Value = serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap();
                    acked.lock().unwrap().push((sid, v["event_id"].as_u64().unwrap()));
                    if i % 25 == 0 {
                        let _ = agent()
                            .post(&format!("{url}/v1/projects/load/recall"))
                            .send(r#"{"query":"kestrels","k":5}"#);
                    }
                }
            });
        }
    });
    acked.into_inner().unwrap()
}

/// Every acknowledged event is stored exactly once, under its id.
fn check_stored(dir: &Path, acked: &[(String, u64)]) {
    let db = rusqlite::Connection::open(dir.join("ledger.db")).unwrap();
    for (sid, id) in acked {
        let rows: Vec<i64> = db
            .prepare("SELECT id FROM events WHERE project = 'load' AND source_id = ?1")
            .unwrap()
            .query_map([sid], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(rows, vec![*id as i64], "{sid}");
    }
}

#[test]
fn concurrent_load_then_sigterm_or_kill_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Full load: 8 × 500 observes with recalls, every id present once and recallable.
    let mut s = Server::start(d, &[]);
    let acked = load(&s.url, 500, None);
    assert_eq!(acked.len(), 4000);
    // Recall finds each acknowledged observation by its own words (8 clients at once).
    let missed = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for part in acked.chunks(acked.len().div_ceil(8)) {
            let (url, missed) = (&s.url, &missed);
            scope.spawn(move || {
                for (sid, id) in part {
                    let (c, i) = sid[1..].split_once('-').unwrap();
                    let body =
                        json!({"query": format!("client {c} note {i} about kestrels"), "k": 10});
                    let (_, v) = post(
                        &format!("{url}/v1/projects/load/recall"),
                        None,
                        &body.to_string(),
                    );
                    let found = v["items"].as_array().is_some_and(|items| {
                        items
                            .iter()
                            .any(|it| it["event"]["id"].as_u64() == Some(*id))
                    });
                    if !found {
                        missed.lock().unwrap().push(sid.clone());
                    }
                }
            });
        }
    });
    let missed = missed.into_inner().unwrap();
    assert!(
        missed.is_empty(),
        "recall missed {} acknowledged observations: {:?}",
        missed.len(),
        &missed[..missed.len().min(10)]
    );
    s.signal("-TERM");
    check_stored(d, &acked);
    // SIGTERM during load, then restart: nothing acknowledged is lost.
    for sig in ["-TERM", "-KILL"] {
        let mut s = Server::start(d, &[]);
        let url = s.url.clone();
        let acked = std::thread::scope(|scope| {
            let h = scope.spawn(|| load(&url, 10_000, Some(400)));
            std::thread::sleep(std::time::Duration::from_millis(300));
            s.signal(sig);
            h.join().unwrap()
        });
        assert!(!acked.is_empty(), "{sig}: the load ran");
        let s = Server::start(d, &[]);
        check_stored(d, &acked);
        let (st, _) = post(
            &format!("{}/v1/projects/load/recall", s.url),
            None,
            r#"{"query":"kestrels"}"#,
        );
        assert_eq!(st, 200, "{sig}: the restarted server answers");
    }
}

#[test]
fn the_profile_names_the_token_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tokens.toml"),
        "[[token]]\nsecret = \"profile-token-0001\"\nprojects = [\"*\"]\naccess = \"read\"\n",
    )
    .unwrap();
    let lite =
        std::fs::read_to_string(hypermem::Profile::bundled_path(hypermem::ProfileKind::Lite))
            .unwrap();
    let profile = dir.path().join("profile.toml");
    std::fs::write(
        &profile,
        lite.replace("# tokens = \"tokens.toml\"", "tokens = \"tokens.toml\""),
    )
    .unwrap();
    let s = Server::start(
        &dir.path().join("data"),
        &["--profile", profile.to_str().unwrap()],
    );
    let u = format!("{}/v1/ops", s.url);
    assert_eq!(
        reason(&post(&u, None, r#"{"op":"stats"}"#).1),
        "unauthorized"
    );
    assert_eq!(
        post(&u, Some("profile-token-0001"), r#"{"op":"stats"}"#).0,
        200
    );
    // A malformed token file is refused naming the file and the line.
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[token]]\nsecret = \"profile-token-0001\"\nprojects = \"*\"\naccess = \"read\"\n",
    )
    .unwrap();
    let e = hypermem::api::http::Tokens::load(&bad).unwrap_err();
    assert!(e.message.contains("bad.toml:3:"), "{e}");
}

#[test]
fn one_worker_serves_concurrent_clients_in_turn() {
    // With a single worker every operation waits for the one before it: eight clients
    // writing and recalling at once all succeed, and every write is found.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["--workers", "1"]);
    let url = format!("{}/v1/projects/queue", server.url);
    let threads: Vec<_> = (0..8)
        .map(|c| {
            let url = url.clone();
            std::thread::spawn(move || {
                for i in 0..10 {
                    let text = format!("client {c} note {i} about the queue");
                    let (status, body) = post(
                        &format!("{url}/observe"),
                        None,
                        &json!({"text": text}).to_string(),
                    );
                    assert_eq!(status, 200, "{body}");
                    let (status, body) = post(
                        &format!("{url}/recall"),
                        None,
                        &json!({"query": text, "k": 3}).to_string(),
                    );
                    assert_eq!(status, 200, "{body}");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let (status, body) = post(
        &format!("{url}/recall"),
        None,
        &json!({"query": "client 5 note 9 about the queue", "k": 1}).to_string(),
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.to_string().contains("client 5 note 9"), "{body}");
}

#[test]
fn zero_workers_is_refused_before_listening() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hypermem"))
        .arg("--data-dir")
        .arg(dir.path())
        .args([
            "--create",
            "--json",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--workers",
            "0",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("workers"), "{text}");
}

/// Every `$ref` of `v` points at a definition that exists in `doc`.
fn refs_resolve(doc: &Value, v: &Value) {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                let pointer = r.strip_prefix('#').expect("local reference");
                assert!(doc.pointer(pointer).is_some(), "{r} does not resolve");
            }
            map.values().for_each(|x| refs_resolve(doc, x));
        }
        Value::Array(items) => items.iter().for_each(|x| refs_resolve(doc, x)),
        _ => {}
    }
}

#[test]
fn the_openapi_document_describes_every_route_and_validates() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &[]);
    let u = |path: &str| format!("{}{path}", s.url);
    let (st, doc) = get(&u("/v1/openapi.json"));
    assert_eq!(st, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    refs_resolve(&doc, &doc);
    let ops: Vec<String> = doc["paths"]["/v1/ops"]["post"]["requestBody"]["content"]
        ["application/json"]["schema"]["properties"]["op"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap().to_owned())
        .collect();
    assert!(ops.len() >= 30, "{ops:?}");
    post(
        &u("/v1/projects/acme/observe"),
        None,
        r#"{"text":"the kettle is descaled monthly"}"#,
    );
    for op in &ops {
        if op == "stats" || op == "migrate" {
            continue;
        }
        let path = format!("/v1/projects/{{project}}/{op}");
        let described = &doc["paths"][&path]["post"];
        assert!(
            described["description"].as_str().unwrap().len() >= 40,
            "{op}"
        );
        // The route the document names exists: whatever an empty body gets, it is not an
        // unknown route or operation.
        let (st, v) = post(&u(&format!("/v1/projects/acme/{op}")), None, "{}");
        assert!(
            !matches!(reason(&v), "not_found" | "unknown_operation") && st != 405,
            "{op}: {st} {v}"
        );
    }
    // The official validator, where it is installed (pip install openapi-spec-validator).
    let file = dir.path().join("openapi.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let check = Command::new("python3")
        .args([
            "-c",
            "import json, sys\ntry:\n    from openapi_spec_validator import validate\nexcept ImportError:\n    sys.exit(3)\nvalidate(json.load(open(sys.argv[1])))",
        ])
        .arg(&file)
        .output();
    match check.map(|o| (o.status.code(), o)) {
        Ok((Some(0), _)) => {}
        Ok((Some(3), _)) | Err(_) => {
            eprintln!(
                "!! SKIP: openapi-spec-validator is not installed; the document was checked structurally only"
            );
        }
        Ok((_, o)) => panic!(
            "the OpenAPI document does not validate: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
    }
}

/// `v` without what differs between two runs of the same requests: wall-clock times.
fn timeless(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| {
                    !(k.ends_with("_at") || *k == "at" || k.starts_with("valid_") || *k == "span")
                })
                .map(|(k, x)| (k.clone(), timeless(x)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(timeless).collect()),
        other => other.clone(),
    }
}

#[test]
fn the_cli_and_http_answer_the_same_requests_with_the_same_documents() {
    let dir = tempfile::tempdir().unwrap();
    let cli_dir = dir.path().join("cli");
    let s = Server::start(&dir.path().join("http"), &[]);
    let cli = |args: &[&str]| -> (i32, Value) {
        let out = Command::new(env!("CARGO_BIN_EXE_hypermem"))
            .arg("--data-dir")
            .arg(&cli_dir)
            .args(["--create", "--json"])
            .args(args)
            .output()
            .unwrap();
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code().unwrap_or(-1), v)
    };
    let http = |op: &str, body: Value| {
        post(
            &format!("{}/v1/projects/acme/{op}", s.url),
            None,
            &body.to_string(),
        )
    };
    // (CLI arguments, HTTP operation and body), run in the same order on both.
    let cases: Vec<(Vec<&str>, &str, Value)> = vec![
        (
            vec![
                "observe",
                "--project",
                "acme",
                "--thread",
                "t1",
                "I prefer dark mode in every editor",
            ],
            "observe",
            json!({"text": "I prefer dark mode in every editor", "thread": "t1"}),
        ),
        (
            vec![
                "observe",
                "--project",
                "acme",
                "--thread",
                "t1",
                "--role",
                "assistant",
                "Noted: dark mode everywhere",
            ],
            "observe",
            json!({"text": "Noted: dark mode everywhere", "thread": "t1", "role": "assistant"}),
        ),
        (
            vec![
                "recall",
                "--project",
                "acme",
                "--k",
                "5",
                "which editor theme",
            ],
            "recall",
            json!({"query": "which editor theme", "k": 5}),
        ),
        (
            vec![
                "belief",
                "propose",
                "--project",
                "acme",
                "--key",
                "user.theme",
                "--ownership",
                "user",
                "--evidence",
                "1",
                "prefers dark mode",
            ],
            "belief_assert",
            json!({"key": "user.theme", "statement": "prefers dark mode", "ownership": "user", "evidence": [1]}),
        ),
        (
            vec!["episode", "start", "--project", "acme", "--agent", "a"],
            "episode_start",
            json!({"agent": "a"}),
        ),
        (
            vec![
                "episode",
                "event",
                "--project",
                "acme",
                "--episode",
                "1",
                "--event",
                "2",
            ],
            "episode_append",
            json!({"episode": 1, "event": 2}),
        ),
        (
            vec![
                "procedure",
                "add",
                "--project",
                "acme",
                "--name",
                "theme",
                "--trigger",
                "a new editor is installed",
                "--step",
                "switch to dark mode",
            ],
            "procedure_add",
            json!({"name": "theme", "trigger": "a new editor is installed", "steps": ["switch to dark mode"]}),
        ),
        // Refusals: the same document, and the exit code of the status's class.
        (
            vec!["recall", "--project", "acme", "--k", "0", "editor"],
            "recall",
            json!({"query": "editor", "k": 0}),
        ),
        (
            vec!["episode", "end", "--project", "acme", "--episode", "99"],
            "episode_end",
            json!({"episode": 99}),
        ),
        (
            vec![
                "episode",
                "end",
                "--project",
                "acme",
                "--episode",
                "1",
                "--reward",
                "3",
            ],
            "episode_end",
            json!({"episode": 1, "reward": 3.0}),
        ),
    ];
    for (args, op, body) in cases {
        let (code, from_cli) = cli(&args);
        let (status, from_http) = http(op, body);
        assert!(from_cli.is_object(), "{args:?}: not one JSON document");
        assert_eq!(timeless(&from_cli), timeless(&from_http), "{args:?}");
        let class = |status: u16| match status {
            200 => 0,
            400 | 413 => 2,
            404 => 3,
            409 => 4,
            503 => 5,
            401 | 403 => 6,
            _ => 1,
        };
        assert_eq!(code, class(status), "{args:?}: {from_cli}");
    }
}

#[test]
fn a_cli_write_beside_a_server_is_refused_at_once_naming_it_and_reads_work() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut s = Server::start(&data, &[]);
    post(
        &format!("{}/v1/projects/acme/observe", s.url),
        None,
        r#"{"text":"the lathe belt was replaced"}"#,
    );
    let cli = |args: &[&str]| {
        let started = std::time::Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_hypermem"))
            .arg("--data-dir")
            .arg(&data)
            .arg("--json")
            .args(args)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code(), v, started.elapsed())
    };
    let (code, v, took) = cli(&["observe", "--project", "acme", "a second note"]);
    assert_eq!((code, reason(&v)), (Some(5), "store_locked"), "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains(&s.url),
        "{v}"
    );
    assert!(
        took < std::time::Duration::from_secs(3),
        "it waited {took:?}"
    );
    let (code, v, _) = cli(&["recall", "--project", "acme", "lathe belt"]);
    assert_eq!(code, Some(0), "{v}");
    // Once the server is gone, the CLI writes again.
    s.signal("-TERM");
    assert!(!data.join("SERVING").exists());
    let (code, v, _) = cli(&["observe", "--project", "acme", "a second note"]);
    assert_eq!(code, Some(0), "{v}");
    // A server killed without a chance to clean up leaves its announcement: the next
    // writer finds the store free and proceeds.
    std::fs::write(data.join("SERVING"), "http://127.0.0.1:1\n").unwrap();
    let (code, v, _) = cli(&["observe", "--project", "acme", "a third note"]);
    assert_eq!(code, Some(0), "{v}");
    assert!(!data.join("SERVING").exists());
}
