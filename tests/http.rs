//! `hypermem serve` driven through a real HTTP client, as agents would: routes, status
//! codes and reasons, tokens, and durability under concurrent load with SIGTERM and kill -9.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

mod common;
use common::serve::{Server, agent, get, post, reason};

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
    // A body whose project contradicts the route is refused and stores nothing.
    for (path, body) in [
        (
            "/v1/projects/acme/observe",
            r#"{"project":"other","text":"misrouted"}"#,
        ),
        (
            "/v1/projects/acme/observe_batch",
            r#"{"events":[{"text":"fine"},{"project":"other","text":"misrouted"}]}"#,
        ),
    ] {
        let (st, v) = post(&u(path), None, body);
        assert_eq!((st, reason(&v)), (400, "invalid_argument"), "{v}");
    }
    let (st, v) = post(
        &u("/v1/projects/other/observe"),
        None,
        r#"{"project":"other","text":"the route's project repeated is fine"}"#,
    );
    assert_eq!(st, 200, "{v}");
    let repeated = v["event_id"].as_u64().unwrap();
    assert_eq!(repeated, foreign + 1, "the refused writes stored nothing");
    let (st, v) = post(
        &u("/v1/projects/acme/recall"),
        None,
        r#"{"query":"which editor theme"}"#,
    );
    assert_eq!(st, 200);
    assert_eq!(v["items"][0]["event"]["id"], e1);
    // Read-your-writes: a recall asking for the sequence a write returned sees it; one
    // asking for a sequence nothing reached is a retryable refusal by name.
    let (st, v) = post(
        &u("/v1/projects/acme/recall"),
        None,
        &format!(r#"{{"query":"which editor theme","at_least":{repeated}}}"#),
    );
    assert_eq!(
        (st, v["items"][0]["event"]["id"].as_u64()),
        (200, Some(e1)),
        "{v}"
    );
    let (st, v) = post(
        &u("/v1/projects/acme/recall"),
        None,
        &format!(
            r#"{{"query":"which editor theme","at_least":{},"wait_ms":20}}"#,
            repeated + 1000
        ),
    );
    assert_eq!((st, reason(&v)), (503, "not_caught_up"), "{v}");
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
    // So does one inside an array, in the caller's words, not serde's.
    let (st, v) = post(
        &u("/v1/projects/acme/observe"),
        None,
        r#"{"text":"x","embedding":[0.5,"a"]}"#,
    );
    let message = v["error"]["message"].as_str().unwrap();
    assert_eq!((st, reason(&v)), (400, "invalid_request"));
    assert!(
        message.contains("`embedding[1]`") && !message.contains("f32"),
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
fn a_batch_that_cannot_finish_in_time_is_refused_before_any_work_with_the_size_to_split_to() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &["--timeout-ms", "40"]);
    let events: Vec<Value> = (0..3000)
        .map(
            |i| json!({"text": format!("note {i} on the kiln rota"), "source_id": format!("k{i}")}),
        )
        .collect();
    let (st, v) = post(
        &format!("{}/v1/projects/kiln/observe_batch", s.url),
        None,
        &json!({ "events": events }).to_string(),
    );
    assert_eq!((st, reason(&v)), (413, "batch_exceeds_deadline"), "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    let fits: usize = message
        .rsplit("at most ")
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no size to split to: {message}"));
    assert!((1..3000).contains(&fits), "{message}");
    // Refused, not retryable, and nothing of it was written.
    let (_, stats) = post(&format!("{}/v1/ops", s.url), None, r#"{"op":"stats"}"#);
    assert!(
        stats
            .as_array()
            .is_some_and(|projects| projects.iter().all(|p| p["project"] != "kiln")),
        "{stats}"
    );
    // One observation is never refused for its size.
    let (st, v) = post(
        &format!("{}/v1/projects/kiln/observe", s.url),
        None,
        r#"{"text":"the kiln fires at dawn"}"#,
    );
    assert!(st == 200 || reason(&v) == "timeout", "{st} {v}");
}

#[test]
fn a_write_does_not_queue_behind_slow_reads() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &["--workers", "1"]);
    // A project large enough that a maximal query takes a while.
    let words: Vec<String> = (0..2000).map(|i| format!("w{i:04}x")).collect();
    for b in 0..6 {
        let events: Vec<Value> = (0..5000)
            .map(|i| {
                let n = b * 5000 + i;
                let text = (0..12)
                    .map(|j| words[(n * 7 + j * 131) % words.len()].as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                json!({ "text": text, "source_id": format!("s{n}") })
            })
            .collect();
        let (st, v) = post(
            &format!("{}/v1/projects/big/observe_batch", s.url),
            None,
            &json!({ "events": events }).to_string(),
        );
        assert_eq!(st, 200, "{v}");
    }
    let query = json!({ "query": words.join(" "), "k": 10 }).to_string();
    let (url, query) = (&s.url, &query);
    let (reads, write) = std::thread::scope(|scope| {
        let reads: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(move || {
                    let (st, v) = post(&format!("{url}/v1/projects/big/recall"), None, query);
                    assert_eq!(st, 200, "{v}");
                    std::time::Instant::now()
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let (st, v) = post(
            &format!("{url}/v1/projects/big/observe"),
            None,
            r#"{"text":"a quick note"}"#,
        );
        assert_eq!(st, 200, "{v}");
        let write = std::time::Instant::now();
        let reads: Vec<std::time::Instant> = reads.into_iter().map(|h| h.join().unwrap()).collect();
        (reads, write)
    });
    // One read worker runs the four slow recalls one after another; the write has a
    // worker of its own and is answered before the last of them.
    let last = reads.into_iter().max().unwrap();
    assert!(
        write < last,
        "the write was answered {:?} after the last read",
        write - last
    );
}

#[test]
fn sigterm_does_not_wait_for_a_client_that_never_finishes_its_request() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start(dir.path(), &[]);
    let (st, _) = post(
        &format!("{}/v1/projects/slow/observe", s.url),
        None,
        r#"{"text":"the kiln fires at dawn"}"#,
    );
    assert_eq!(st, 200);
    // A request whose body trickles in and never ends.
    let addr = s.url.trim_start_matches("http://").to_owned();
    let mut slow = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        slow,
        "POST /v1/projects/slow/recall HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{\"query\":\"kiln "
    )
    .unwrap();
    slow.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let start = std::time::Instant::now();
    assert!(
        Command::new("kill")
            .args(["-TERM", &s.child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    // Not a speed check: the drain is bounded (documented as 10 s), so the process ends
    // rather than waiting on the client for ever; 60 s is the hang limit.
    let status = loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "SIGTERM waited on a client that never finished its request"
        );
        let _ = slow.write_all(b"kiln ");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    eprintln!(
        "stopped {:.1} s after SIGTERM",
        start.elapsed().as_secs_f64()
    );
    assert!(status.success(), "{status}");
    // What was acknowledged is there after the stop.
    let s = Server::start(dir.path(), &[]);
    let (_, v) = post(
        &format!("{}/v1/projects/slow/recall", s.url),
        None,
        r#"{"query":"kiln"}"#,
    );
    assert_eq!(v["items"].as_array().map(Vec::len), Some(1), "{v}");
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
fn a_write_answered_timeout_was_never_stored_and_one_stored_is_acknowledged() {
    // A timeout far shorter than a batch takes, one worker, clients racing: every
    // unkeyed batch is either acknowledged (200, however late: it had begun to write) or
    // refused with `timeout` or `batch_exceeds_deadline` and then stored nowhere, never
    // both and never half.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["--workers", "1", "--timeout-ms", "5"]);
    let url = format!("{}/v1/projects/race/observe_batch", server.url);
    let threads: Vec<_> = (0..4)
        .map(|c| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut outcomes = Vec::new();
                for b in 0..5 {
                    let tag = format!("c{c}b{b}");
                    let events: Vec<Value> = (0..150)
                        .map(
                            |i| json!({"text": format!("{tag} line {i} about the racing batches")}),
                        )
                        .collect();
                    let (status, body) = post(&url, None, &json!({ "events": events }).to_string());
                    let acked = match status {
                        200 => {
                            assert_eq!(
                                body["event_ids"].as_array().map(Vec::len),
                                Some(150),
                                "{body}"
                            );
                            true
                        }
                        503 => {
                            assert_eq!(reason(&body), "timeout", "{body}");
                            assert_eq!(body["error"]["retryable"], true, "{body}");
                            false
                        }
                        // Refused before any work: at the rate the server measured (a
                        // timed-out batch raises it) it cannot finish in time.
                        413 => {
                            assert_eq!(reason(&body), "batch_exceeds_deadline", "{body}");
                            assert_ne!(body["error"]["retryable"], true, "{body}");
                            false
                        }
                        other => panic!("{other}: {body}"),
                    };
                    outcomes.push((tag, acked));
                }
                outcomes
            })
        })
        .collect();
    let outcomes: Vec<(String, bool)> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    drop(server);
    let db = rusqlite::Connection::open(dir.path().join("ledger.db")).unwrap();
    for (tag, acked) in &outcomes {
        let stored: i64 = db
            .query_row(
                "SELECT count(*) FROM events WHERE project = 'race' AND content LIKE ?1",
                [format!("{tag} line %")],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(stored, if *acked { 150 } else { 0 }, "{tag} acked {acked}");
    }
    eprintln!(
        "{} of {} batches acknowledged under a 5 ms timeout",
        outcomes.iter().filter(|(_, a)| *a).count(),
        outcomes.len()
    );
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

/// `v` without what differs between two runs of the same requests: wall-clock times (an
/// event's own time is given; a belief's validity and a pulse's phases are timed by the
/// clock), an LTP strength, which decays with the time since the last access, and access
/// counts: a recall by a server counts the accesses of what it returned (they drive the
/// tiers), a CLI recall reads a view and writes nothing.
fn timeless(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| {
                    !(k.ends_with("_at")
                        || k.ends_with("_ms")
                        || *k == "at"
                        || k.starts_with("valid_")
                        || *k == "span"
                        || *k == "strength"
                        || *k == "accesses")
                })
                .map(|(k, x)| (k.clone(), timeless(x)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(timeless).collect()),
        other => other.clone(),
    }
}

/// One step of [`every_operation_answers_the_same_on_the_cli_http_and_mcp`]: the CLI's
/// arguments and the same request as JSON. `$NAME` in either is replaced by a value an
/// earlier step returned.
struct Step {
    cli: Vec<String>,
    request: Value,
}

fn step(cli: &[&str], request: Value) -> Step {
    Step {
        cli: cli.iter().map(|s| (*s).to_owned()).collect(),
        request,
    }
}

#[test]
fn every_operation_answers_the_same_on_the_cli_http_and_mcp() {
    use rmcp::ServiceExt as _;
    let dir = tempfile::tempdir().unwrap();
    let cli_dir = dir.path().join("cli");
    let s = Server::start(&dir.path().join("http"), &[]);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mcp = runtime.block_on(async {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_hypermem"));
        cmd.arg("--data-dir")
            .arg(dir.path().join("mcp"))
            .args(["--create", "mcp"]);
        ().serve(rmcp::transport::TokioChildProcess::new(cmd).unwrap())
            .await
            .unwrap()
    });
    let files = dir.path();
    std::fs::write(
        files.join("batch.jsonl"),
        [
            json!({"project": "acme", "text": "Yes, please remind me", "thread": "t1", "at": "2025-01-01T10:03:00Z"}),
            json!({"project": "acme", "text": "The licence renewal is due in March", "thread": "t2", "at": "2025-01-01T10:04:00Z"}),
        ]
        .map(|v| v.to_string())
        .join("\n"),
    )
    .unwrap();
    let batch: Vec<Value> = std::fs::read_to_string(files.join("batch.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let plan = json!({"project": "acme", "idempotency_key": "p1", "ops": [
        {"op": "assert", "key": "project.deploy", "statement": "deploys on Fridays", "ownership": "project", "evidence": [3]}
    ]});
    std::fs::write(files.join("plan.json"), plan.to_string()).unwrap();
    let (batch_file, plan_file) = (
        files.join("batch.jsonl").display().to_string(),
        files.join("plan.json").display().to_string(),
    );
    fn with<'a>(head: &[&'a str], tail: &[&'a str]) -> Vec<&'a str> {
        [head, &["--project", "acme"], tail].concat()
    }
    let steps = vec![
        step(
            &with(
                &["observe"],
                &[
                    "--thread",
                    "t1",
                    "--at",
                    "2025-01-01T10:00:00Z",
                    "I prefer dark mode in every editor",
                ],
            ),
            json!({"op": "observe", "thread": "t1", "at": "2025-01-01T10:00:00Z", "text": "I prefer dark mode in every editor"}),
        ),
        step(
            &with(
                &["observe"],
                &[
                    "--thread",
                    "t1",
                    "--role",
                    "assistant",
                    "--at",
                    "2025-01-01T10:01:00Z",
                    "Noted: dark mode everywhere",
                ],
            ),
            json!({"op": "observe", "thread": "t1", "role": "assistant", "at": "2025-01-01T10:01:00Z", "text": "Noted: dark mode everywhere"}),
        ),
        step(
            &with(
                &["record-event"],
                &[
                    "--thread",
                    "t2",
                    "--at",
                    "2025-01-01T10:02:00Z",
                    "The staging deploy runs on Fridays",
                ],
            ),
            json!({"op": "record_event", "thread": "t2", "at": "2025-01-01T10:02:00Z", "text": "The staging deploy runs on Fridays"}),
        ),
        step(
            &["observe-batch", "--file", &batch_file],
            json!({"op": "observe_batch", "events": batch}),
        ),
        // Before any recall: a server's recall counts accesses, which keep a memory warm,
        // and a CLI recall (a view) writes none.
        step(&with(&["pulse"], &[]), json!({"op": "pulse"})),
        step(&with(&["map"], &[]), json!({"op": "map"})),
        step(&["stats"], json!({"op": "stats"})),
        step(
            &with(&["recall"], &["--k", "5", "which editor theme"]),
            json!({"op": "recall", "query": "which editor theme", "k": 5}),
        ),
        step(
            &with(&["pack"], &["--available", "2000", "editor theme"]),
            json!({"op": "pack", "query": "editor theme", "available": 2000}),
        ),
        step(
            &with(
                &["belief", "propose"],
                &[
                    "--key",
                    "user.theme",
                    "--ownership",
                    "user",
                    "--evidence",
                    "1",
                    "prefers dark mode",
                ],
            ),
            json!({"op": "belief_assert", "key": "user.theme", "statement": "prefers dark mode", "ownership": "user", "evidence": [1]}),
        ),
        step(
            &with(
                &["belief", "correct"],
                &[
                    "--key",
                    "user.theme",
                    "--evidence",
                    "1",
                    "prefers dark mode in editors",
                ],
            ),
            json!({"op": "belief_correct", "key": "user.theme", "statement": "prefers dark mode in editors", "evidence": [1]}),
        ),
        step(
            &with(&["belief", "current"], &["--key", "user.theme"]),
            json!({"op": "belief_current", "key": "user.theme"}),
        ),
        step(
            &with(
                &["belief", "at"],
                &["--key", "user.theme", "--at", "2999-01-01"],
            ),
            json!({"op": "belief_at", "key": "user.theme", "at": "2999-01-01"}),
        ),
        step(
            &with(&["belief", "history"], &["--key", "user.theme"]),
            json!({"op": "belief_history", "key": "user.theme"}),
        ),
        step(
            &["plan", "apply", "--file", &plan_file],
            json!({"op": "apply_plan", "plan": plan}),
        ),
        step(
            &with(&["plan", "audit"], &["--key", "p1"]),
            json!({"op": "plan_audit", "idempotency_key": "p1"}),
        ),
        step(
            &with(&["show"], &["--id", "1"]),
            json!({"op": "memory_show", "id": 1}),
        ),
        step(
            &with(&["episode", "start"], &["--agent", "a"]),
            json!({"op": "episode_start", "agent": "a"}),
        ),
        step(
            &with(
                &["episode", "event"],
                &["--episode", "$episode", "--event", "2"],
            ),
            json!({"op": "episode_append", "episode": "$episode", "event": 2}),
        ),
        step(
            &with(
                &["episode", "end"],
                &[
                    "--episode",
                    "$episode",
                    "--outcome",
                    "done",
                    "--reward",
                    "1",
                ],
            ),
            json!({"op": "episode_end", "episode": "$episode", "outcome": "done", "reward": 1.0}),
        ),
        step(
            &with(&["episode", "show"], &["--id", "$episode"]),
            json!({"op": "episode_show", "id": "$episode"}),
        ),
        step(
            &with(
                &["procedure", "add"],
                &[
                    "--name",
                    "theme",
                    "--trigger",
                    "a new editor is installed",
                    "--step",
                    "switch to dark mode",
                ],
            ),
            json!({"op": "procedure_add", "name": "theme", "trigger": "a new editor is installed", "steps": ["switch to dark mode"]}),
        ),
        step(
            &with(&["procedure", "suggest"], &["a new editor is installed"]),
            json!({"op": "procedure_suggest", "query": "a new editor is installed"}),
        ),
        step(
            &with(
                &["procedure", "outcome"],
                &["--id", "$procedure", "--success", "true"],
            ),
            json!({"op": "procedure_outcome", "id": "$procedure", "success": true}),
        ),
        step(
            &with(
                &["prospective", "propose"],
                &["--event", "3", "--due", "2999-01-01", "renew the licence"],
            ),
            json!({"op": "prospective_propose", "event": 3, "due": "2999-01-01", "text": "renew the licence"}),
        ),
        step(
            &with(
                &["prospective", "confirm"],
                &["--id", "$id", "--event", "4"],
            ),
            json!({"op": "prospective_confirm", "id": "$id", "event": 4}),
        ),
        step(
            &with(
                &["prospective", "defer"],
                &["--id", "$id", "--until", "2999-02-01"],
            ),
            json!({"op": "prospective_defer", "id": "$id", "until": "2999-02-01"}),
        ),
        step(
            &with(&["prospective", "due"], &["--at", "2999-03-01"]),
            json!({"op": "prospective_due", "at": "2999-03-01"}),
        ),
        step(
            &with(&["prospective", "show"], &["--id", "$id"]),
            json!({"op": "prospective_show", "id": "$id"}),
        ),
        step(
            &with(&["prospective", "complete"], &["--id", "$id"]),
            json!({"op": "prospective_complete", "id": "$id"}),
        ),
        // A refusal: a completed item cannot be rejected.
        step(
            &with(&["prospective", "reject"], &["--id", "$id"]),
            json!({"op": "prospective_reject", "id": "$id"}),
        ),
        step(&with(&["concepts", "list"], &[]), json!({"op": "concepts"})),
        step(
            &with(&["concepts", "show"], &["--id", "1"]),
            json!({"op": "concept_show", "id": 1}),
        ),
        step(
            &with(&["candidates", "list"], &[]),
            json!({"op": "candidates"}),
        ),
        step(
            &with(&["candidates", "approve"], &["--id", "99"]),
            json!({"op": "candidate_approve", "id": 99}),
        ),
        step(
            &with(&["candidates", "reject"], &["--id", "99"]),
            json!({"op": "candidate_reject", "id": 99}),
        ),
        step(&with(&["gaps"], &[]), json!({"op": "gaps"})),
        step(
            &with(&["associations"], &["--limit", "5"]),
            json!({"op": "associations", "limit": 5}),
        ),
        step(&with(&["proposals"], &[]), json!({"op": "proposals"})),
        step(
            &["migrate", "--dry-run"],
            json!({"op": "migrate", "dry_run": true}),
        ),
        // Refusals: the same document, and the exit code of the status's class.
        step(
            &with(&["recall"], &["--k", "0", "editor"]),
            json!({"op": "recall", "query": "editor", "k": 0}),
        ),
        // A value the command line cannot parse is refused as the schema refuses it.
        step(
            &with(&["recall"], &["--k", "-3", "editor"]),
            json!({"op": "recall", "query": "editor", "k": -3}),
        ),
        step(
            &with(&["recall"], &["--k", "many", "editor"]),
            json!({"op": "recall", "query": "editor", "k": "many"}),
        ),
        step(
            &with(&["episode", "end"], &["--episode", "99"]),
            json!({"op": "episode_end", "episode": 99}),
        ),
        step(
            &with(
                &["episode", "end"],
                &["--episode", "$episode", "--reward", "3"],
            ),
            json!({"op": "episode_end", "episode": "$episode", "reward": 3.0}),
        ),
        step(
            &with(&["forget-project"], &[]),
            json!({"op": "forget_project"}),
        ),
        step(
            &with(&["forget-project"], &["--confirm"]),
            json!({"op": "forget_project", "confirm": true}),
        ),
    ];
    let covered: std::collections::BTreeSet<&str> = steps
        .iter()
        .filter_map(|s| s.request["op"].as_str())
        .collect();
    for op in hypermem::api::catalog::catalog() {
        assert!(
            covered.contains(op.name),
            "`{}` is not tried on every surface",
            op.name
        );
    }
    let class = |status: u16| match status {
        200 => 0,
        400 | 413 => 2,
        404 => 3,
        409 => 4,
        503 => 5,
        401 | 403 => 6,
        _ => 1,
    };
    // Ids earlier steps returned, by the name later steps use.
    let mut ids: Vec<(&str, Value)> = Vec::new();
    // Every HTTP answer, to check against the OpenAPI document's schemas.
    let mut answers: Vec<Value> = Vec::new();
    for Step { cli, request } in steps {
        let args: Vec<String> = cli
            .iter()
            .map(|a| {
                ids.iter().fold(a.clone(), |t, (k, v)| {
                    t.replace(&format!("${k}"), &v.to_string())
                })
            })
            .collect();
        let mut request: Value =
            serde_json::from_str(&ids.iter().fold(request.to_string(), |t, (k, v)| {
                t.replace(&format!("\"${k}\""), &v.to_string())
            }))
            .unwrap();
        let op = request["op"].as_str().unwrap().to_owned();
        if !matches!(
            op.as_str(),
            "stats" | "migrate" | "observe_batch" | "apply_plan"
        ) {
            request["project"] = json!("acme");
        }
        let out = Command::new(env!("CARGO_BIN_EXE_hypermem"))
            .arg("--data-dir")
            .arg(&cli_dir)
            .args(["--create", "--json"])
            .args(&args)
            .output()
            .unwrap();
        let from_cli: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
            panic!(
                "{args:?}: not one JSON document: {}",
                String::from_utf8_lossy(&out.stdout)
            )
        });
        let code = out.status.code().unwrap_or(-1);
        let (status, from_http) = post(&format!("{}/v1/ops", s.url), None, &request.to_string());
        // The route of the operation's own path, or `/v1/ops` for the whole-memory ones.
        let path = if matches!(op.as_str(), "stats" | "migrate") {
            "/v1/ops".to_owned()
        } else {
            format!("/v1/projects/{{project}}/{op}")
        };
        let pointer = format!(
            "#/paths/{}/post/responses/{}/content/application~1json/schema",
            path.replace('/', "~1")
                .replace('{', "%7B")
                .replace('}', "%7D"),
            if status == 200 { "200" } else { "default" }
        );
        answers
            .push(json!({"op": op, "status": status, "pointer": pointer, "instance": from_http}));
        let mut arguments = request.as_object().unwrap().clone();
        arguments.remove("op");
        let called = runtime
            .block_on(mcp.call_tool(
                rmcp::model::CallToolRequestParams::new(op.clone()).with_arguments(arguments),
            ))
            .unwrap();
        let from_mcp: Value =
            serde_json::from_str(&called.content[0].as_text().unwrap().text).unwrap();
        let same = |v: &Value| {
            let mut v = timeless(v);
            if op == "forget_project" && v.get("ledger").is_some() {
                // What the reads left behind: a server logs its recalls' queries and
                // persists their accesses, and holds the lexical index in memory until it
                // flushes; a CLI read learns nothing and saves the lexical index it built.
                v["ledger"]["rows"]["query_log"] = Value::Null;
                v["ledger"]["rows"]["memory_traces"] = Value::Null;
                v["lexical"] = Value::Null;
                v["lexical_files"] = Value::Null;
                v["lexical_file_bytes"] = Value::Null;
            }
            v
        };
        assert_eq!(
            same(&from_cli),
            same(&from_http),
            "{args:?} against {request}"
        );
        assert_eq!(
            same(&from_cli),
            same(&from_mcp),
            "{args:?} against MCP {request}"
        );
        assert_eq!(code, class(status), "{args:?}: {from_cli}");
        assert_eq!(
            called.is_error == Some(true),
            status != 200,
            "{op}: {from_mcp}"
        );
        for (name, key) in [("episode", "episode"), ("procedure", "procedure")] {
            if let Some(v) = from_cli
                .get(key)
                .filter(|_| op.ends_with("_start") || op.ends_with("_add"))
            {
                ids.retain(|(n, _)| *n != name);
                ids.push((name, v.clone()));
            }
        }
        if op == "prospective_propose" {
            ids.push(("id", from_cli["id"].clone()));
        }
    }
    drop(runtime.block_on(mcp.cancel()));
    // Every answer fits the schema the document gives for it: results by the types they
    // are serialized from, refusals by the error document.
    let successes = answers.iter().filter(|a| a["status"] == 200).count();
    assert!(successes >= 20, "{successes} successes");
    let (_, doc) = get(&format!("{}/v1/openapi.json", s.url));
    let (doc_file, answers_file) = (files.join("openapi.json"), files.join("answers.json"));
    std::fs::write(&doc_file, doc.to_string()).unwrap();
    std::fs::write(&answers_file, Value::Array(answers).to_string()).unwrap();
    let check = Command::new("python3")
        .args(["-c", VALIDATE_ANSWERS])
        .arg(&doc_file)
        .arg(&answers_file)
        .output();
    match check.map(|o| (o.status.code(), o)) {
        Ok((Some(0), o)) => eprintln!("{}", String::from_utf8_lossy(&o.stdout).trim()),
        Ok((Some(3), _)) | Err(_) => eprintln!(
            "!! SKIP: the Python package jsonschema is not installed; answers were not checked against the OpenAPI document"
        ),
        Ok((_, o)) => panic!(
            "answers that do not fit the OpenAPI document:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    }
}

/// Validates answers (`[{op, status, pointer, instance}]`, argv[2]) against the schemas
/// of an OpenAPI document (argv[1]) they point to, with the JSON Schema 2020-12 validator
/// of the Python package `jsonschema`; exit 3 when it is not installed.
const VALIDATE_ANSWERS: &str = r#"
import json, sys
try:
    from jsonschema import Draft202012Validator
except ImportError:
    sys.exit(3)
doc = json.load(open(sys.argv[1]))
answers = json.load(open(sys.argv[2]))
bad = []
for a in answers:
    root = dict(doc)
    root["$ref"] = a["pointer"]
    for e in Draft202012Validator(root).iter_errors(a["instance"]):
        at = "/".join(map(str, e.absolute_path))
        bad.append(f"{a['op']} ({a['status']}) at /{at}: {e.message[:300]}")
print("\n".join(bad) if bad else f"{len(answers)} answers fit the OpenAPI document")
sys.exit(1 if bad else 0)
"#;

#[test]
fn a_cli_write_beside_a_server_is_made_by_the_server_and_reads_work() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(
        &tokens,
        "[[token]]\nsecret = \"writer-of-acme-0001\"\nprojects = [\"acme\"]\naccess = \"read_write\"\n",
    )
    .unwrap();
    let mut s = Server::start(&data, &["--tokens", tokens.to_str().unwrap()]);
    let token = Some("writer-of-acme-0001");
    post(
        &format!("{}/v1/projects/acme/observe", s.url),
        token,
        r#"{"text":"the lathe belt was replaced"}"#,
    );
    let cli = |args: &[&str], token: Option<&str>| {
        let started = std::time::Instant::now();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hypermem"));
        cmd.arg("--data-dir").arg(&data).arg("--json").args(args);
        cmd.env_remove("HYPERMEM_TOKEN");
        if let Some(t) = token {
            cmd.env("HYPERMEM_TOKEN", t);
        }
        let out = cmd.output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code(), v, started.elapsed())
    };
    // Without the server's token the write is refused by the server, which is named.
    let (code, v, took) = cli(&["observe", "--project", "acme", "a second note"], None);
    assert_eq!((code, reason(&v)), (Some(6), "unauthorized"), "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&s.url) && message.contains("HYPERMEM_TOKEN"),
        "{v}"
    );
    assert!(
        took < std::time::Duration::from_secs(3),
        "it waited {took:?}"
    );
    // With it, the server makes the write and the CLI prints the server's answer.
    let (code, v, _) = cli(
        &["observe", "--project", "acme", "the drill press needs oil"],
        token,
    );
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["event_id"], 2, "{v}");
    let (_, found) = post(
        &format!("{}/v1/projects/acme/recall", s.url),
        token,
        r#"{"query":"drill press oil"}"#,
    );
    assert_eq!(found["items"][0]["event"]["id"], 2, "{found}");
    // A write sent to the server carries an idempotency key, so the write the CLI would
    // make itself after a lost answer finds the stored event instead of a second one.
    let key = found["items"][0]["event"]["source_id"]
        .as_str()
        .unwrap_or_default();
    assert!(key.starts_with("cli-"), "{found}");
    // A refusal comes back with the server's reason.
    let (code, v, _) = cli(
        &["episode", "end", "--project", "acme", "--episode", "99"],
        token,
    );
    assert_eq!((code, reason(&v)), (Some(3), "not_found"), "{v}");
    // Without a token for it, a read opens a view beside the server (it counts nothing).
    let accesses = || {
        let (code, v, _) = cli(&["show", "--project", "acme", "--id", "1"], token);
        assert_eq!(code, Some(0), "{v}");
        v["accesses"].as_u64().unwrap()
    };
    let before = accesses();
    let (code, v, _) = cli(&["recall", "--project", "acme", "lathe belt"], None);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["items"][0]["event"]["id"], 1, "{v}");
    assert_eq!(accesses(), before);
    // With one, the server makes the read too, and counts it as any read it answers.
    let (code, v, _) = cli(&["recall", "--project", "acme", "lathe belt"], token);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["items"][0]["event"]["id"], 1, "{v}");
    assert_eq!(accesses(), before + 1);
    // Once the server is gone, the CLI writes itself.
    s.signal("-TERM");
    assert!(!data.join("SERVING").exists());
    let (code, v, _) = cli(&["observe", "--project", "acme", "a second note"], None);
    assert_eq!(code, Some(0), "{v}");
    // A server killed without a chance to clean up leaves its announcement: the next
    // writer finds nobody answering there, takes the store and clears it.
    std::fs::write(data.join("SERVING"), "http://127.0.0.1:1\n").unwrap();
    let (code, v, _) = cli(&["observe", "--project", "acme", "a third note"], None);
    assert_eq!(code, Some(0), "{v}");
    assert!(!data.join("SERVING").exists());
}
