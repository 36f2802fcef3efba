//! The `hypermem` binary, run as an operator would.

use std::path::Path;
use std::process::Command;

fn hm(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hypermem"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// `hypermem --json observe --project <project> <options...> <text>`: the new event id.
fn observe(dir: &Path, project: &str, options: &[&str], text: &str) -> u64 {
    let mut args = vec!["--json", "observe", "--project", project];
    args.extend_from_slice(options);
    args.push(text);
    let (ok, out, err) = hm(dir, &args);
    assert!(ok, "{err}");
    json(&out)["event_id"].as_u64().unwrap()
}

#[test]
fn observe_recall_beliefs_plans_and_erasure() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (ok, out, _) = hm(d, &["--json", "init"]);
    assert!(ok);
    assert_eq!(
        json(&out)["schema_version"],
        hypermem::ledger::MIGRATIONS.len()
    );
    let event = observe(
        d,
        "acme",
        &["--thread", "t1"],
        "I prefer dark mode in every editor",
    );
    observe(
        d,
        "acme",
        &["--role", "assistant", "--thread", "t1"],
        "Noted, dark mode.",
    );
    observe(d, "other", &[], "I prefer light mode");
    let (ok, out, _) = hm(
        d,
        &[
            "--json",
            "recall",
            "--project",
            "acme",
            "--k",
            "5",
            "dark mode",
        ],
    );
    assert!(ok);
    let result = json(&out);
    let hits = result["items"].as_array().unwrap();
    assert_eq!(
        hits.len(),
        2,
        "both acme events, nothing of the other project"
    );
    assert!(
        hits.iter()
            .any(|h| h["event"]["id"].as_u64() == Some(event))
    );
    assert!(hits.iter().all(|h| h["event"]["project"] == "acme"));
    // Query syntax and context windows.
    let (ok, out, _) = hm(
        d,
        &[
            "--json",
            "recall",
            "--project",
            "acme",
            "--context",
            "1",
            "mode role:assistant",
        ],
    );
    assert!(ok);
    let result = json(&out);
    let items = result["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["event"]["content"], "Noted, dark mode.");
    assert_eq!(items[0]["context"]["before"][0]["id"].as_u64(), Some(event));
    assert!(
        result["suppressed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s[1]["reason"] == "another_role"
                && s[1]["detail"].as_str().unwrap().contains("role user"))
    );
    let (ok, _, err) = hm(d, &["recall", "--project", "acme", "mode since:someday"]);
    assert!(!ok && err.contains("since:someday"), "{err}");
    let (ok, out, _) = hm(
        d,
        &[
            "--json",
            "recall",
            "--project",
            "acme",
            "--pack",
            "--available",
            "100",
            "--budget",
            "1000",
            "dark mode",
        ],
    );
    assert!(ok);
    let pack = json(&out);
    assert!(
        pack["budget"].as_u64().unwrap() <= 30 && pack["used"].as_u64() <= pack["budget"].as_u64()
    );
    // A governance plan from a file: applied, then already applied; a bad one is refused.
    let plan = d.join("plan.json");
    std::fs::write(
        &plan,
        format!(r#"{{"project":"acme","idempotency_key":"p1","ops":[{{"op":"assert","key":"user.theme","statement":"prefers dark mode","ownership":"user","evidence":[{event}]}}]}}"#),
    )
    .unwrap();
    let (ok, out, _) = hm(
        d,
        &["--json", "plan", "apply", "--file", plan.to_str().unwrap()],
    );
    assert!(ok, "{out}");
    assert_eq!(json(&out)["status"], "applied");
    let (ok, out, _) = hm(
        d,
        &["--json", "plan", "apply", "--file", plan.to_str().unwrap()],
    );
    assert!(ok);
    assert_eq!(json(&out)["status"], "already_applied");
    std::fs::write(&plan, r#"{"project":"acme","idempotency_key":"p2","ops":[{"op":"assert","key":"k","statement":"s","ownership":"user","evidence":[999]}]}"#).unwrap();
    let (ok, out, err) = hm(
        d,
        &["--json", "plan", "apply", "--file", plan.to_str().unwrap()],
    );
    assert!(!ok && err.contains("rejected"));
    assert_eq!(json(&out)["error"]["reason"], "unknown_evidence");
    assert_eq!(json(&out)["error"]["detail"]["op_index"], 0);
    std::fs::write(&plan, "{not json").unwrap();
    let (ok, _, err) = hm(d, &["plan", "apply", "--file", plan.to_str().unwrap()]);
    assert!(!ok && err.contains("is not valid JSON"), "{err}");
    let (ok, out, _) = hm(
        d,
        &[
            "--json",
            "belief",
            "current",
            "--project",
            "acme",
            "--key",
            "user.theme",
        ],
    );
    assert!(ok);
    assert_eq!(json(&out)["statement"], "prefers dark mode");
    let (ok, out, _) = hm(d, &["--json", "migrate", "--dry-run"]);
    assert!(ok);
    assert_eq!(json(&out)["migrations"].as_array().unwrap().len(), 0);
    let (ok, out, _) = hm(d, &["--json", "pulse", "--project", "acme"]);
    assert!(ok);
    let phases = json(&out)["phases"].as_array().unwrap().clone();
    assert_eq!(phases.len(), 8);
    assert_eq!(phases[7]["phase"], "tiers");
    let (ok, out, _) = hm(d, &["--json", "map", "--project", "acme"]);
    assert!(ok);
    let map = json(&out);
    assert_eq!(map["events"], 2);
    assert_eq!(map["tiers"]["warm"], 2);
    assert_eq!(map["beliefs"][0][0], "active");
    let (ok, out, _) = hm(d, &["map", "--project", "acme", "--limit", "1"]);
    assert!(ok && out.starts_with("project acme: 2 events"), "{out}");
    let (ok, _, err) = hm(d, &["map", "--project", "nope"]);
    // The refusal names the project asked for and no other.
    assert!(
        !ok && err.contains("`nope`") && !err.contains("acme"),
        "{err}"
    );
    let (ok, out, _) = hm(d, &["--json", "forget-project", "--project", "acme"]);
    assert!(!ok, "an unconfirmed erasure is refused");
    assert_eq!(json(&out)["error"]["reason"], "confirmation_required");
    let (ok, out, _) = hm(d, &["--json", "map", "--project", "acme"]);
    assert!(ok, "and erased nothing: {out}");
    let (ok, out, _) = hm(
        d,
        &["--json", "forget-project", "--project", "acme", "--confirm"],
    );
    assert!(ok);
    assert_eq!(json(&out)["vectors"], 2);
    let (_, out, _) = hm(d, &["--json", "stats"]);
    let stats = json(&out);
    assert_eq!(stats.as_array().unwrap().len(), 1);
    assert_eq!(stats[0]["project"], "other");
}

#[test]
fn bad_input_is_a_clear_error_with_a_non_zero_exit() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = hm(dir.path(), &["observe", "--project", "../etc", "x"]);
    assert!(!ok && err.contains("invalid project name"), "{err}");
    let (ok, _, err) = hm(
        dir.path(),
        &["observe", "--project", "p", "--role", "robot", "x"],
    );
    assert!(
        !ok && err.contains("robot") && err.contains("user, assistant"),
        "{err}"
    );
    let (ok, _, err) = hm(
        dir.path(),
        &["observe", "--project", "p", "--at", "someday", "x"],
    );
    assert!(!ok && err.contains("`someday` is not a time"), "{err}");
    // A time out of any calendar, as a number too big for milliseconds, a fraction or
    // an instant past the year 9999, is refused naming its field.
    for at in [
        "1e20",
        "100000000000000000000",
        "1.5",
        "-9223372036854775808",
    ] {
        let file = dir.path().join("at.json");
        std::fs::write(&file, format!(r#"{{"project":"p","text":"x","at":{at}}}"#)).unwrap();
        let (ok, out, _) = hm(
            dir.path(),
            &[
                "--json",
                "--create",
                "observe-batch",
                "--file",
                file.to_str().unwrap(),
            ],
        );
        let v = json(&out);
        assert!(!ok, "{at}: {out}");
        assert_eq!(v["error"]["reason"], "invalid_argument", "{at}: {out}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("at: "), "{at}: {message}");
        assert!(!message.contains("untagged"), "{at}: {message}");
    }
    let (ok, _, err) = hm(dir.path(), &["--profile", "/nonexistent.toml", "stats"]);
    assert!(!ok && err.contains("/nonexistent.toml"), "{err}");
    let (ok, _, err) = hm(dir.path(), &["eval", "--data", "/nonexistent"]);
    assert!(!ok && err.contains("conversations.jsonl"), "{err}");
}

#[test]
fn eval_scores_a_data_set_and_ends_with_the_summary_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(
        data.join("conversations.jsonl"),
        r#"{"conversation_id":"c1","sessions":[{"session_id":"s1","date":null,"turns":[{"turn_id":"0","role":"user","text":"My sister Alice lives in Lisbon"},{"turn_id":"1","role":"assistant","text":"Lisbon is lovely"},{"turn_id":"2","role":"user","text":"Alice moved to Porto last month"},{"turn_id":"3","role":"user","text":"I am learning the cello"}]}]}
{"conversation_id":"c2","sessions":[{"session_id":"s1","date":null,"turns":[{"turn_id":"0","role":"Caroline","text":"I research coral reefs at the marine lab"},{"turn_id":"1","role":"Melanie","text":"I research coral bleaching in the field"},{"turn_id":"2","role":"Melanie","text":"The lab has a new microscope"}]}]}
"#,
    )
    .unwrap();
    std::fs::write(
        data.join("questions.jsonl"),
        r#"{"conversation_id":"c1","question_id":"q1","category":"knowledge_update","question":"Where does Alice live now?","answer":"Porto","evidence":["2"],"superseded_evidence":["0"]}
{"conversation_id":"c1","question_id":"q2","category":"information_extraction","question":"Which instrument am I learning?","answer":"cello","evidence":["3"]}
{"conversation_id":"c1","question_id":"q3","category":"abstention","question":"What is my salary?","answer":"unknown","evidence":[]}
{"conversation_id":"c2","question_id":"q4","category":"speakers","question":"What does Caroline research?","answer":"coral reefs","evidence":["0"]}
"#,
    )
    .unwrap();
    let report = dir.path().join("q.jsonl");
    let (ok, out, err) = hm(
        dir.path(),
        &[
            "eval",
            "--data",
            data.to_str().unwrap(),
            "--k",
            "10",
            "--episodes",
            "--per-question",
            report.to_str().unwrap(),
        ],
    );
    assert!(ok, "{err}");
    // The speaker is indexed beside the text, so a question naming her finds her turn first.
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(&report)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3, "questions with evidence only");
    let q4 = rows.iter().find(|r| r["question_id"] == "q4").unwrap();
    assert_eq!(q4["evidence_ranks"][0][1], 1, "{q4}");
    let last = out.lines().last().unwrap();
    assert!(last.starts_with("overall recall@10 "), "{last}");
    let fields: Vec<&str> = last.split_whitespace().collect();
    assert_eq!(fields.len(), 7);
    let recall: f64 = fields[2].parse().unwrap();
    assert!(
        recall > 0.99,
        "both evidence turns are in the top 10 of 4: {last}"
    );
    assert!(out.contains("information_extraction"));
    // The question without evidence is asked and counted apart: nothing is stored about a
    // salary, so it returns nothing.
    assert!(
        out.contains("questions without evidence (nothing answers them): 1 of 1 returned nothing"),
        "{out}"
    );
    // Ablations: one source only, a weight override; `--json` prints one document.
    let run = |extra: &[&str]| {
        let mut args = vec!["--json", "eval", "--data", data.to_str().unwrap()];
        args.extend_from_slice(extra);
        hm(dir.path(), &args)
    };
    let (ok, out, err) = run(&["--sources", "bm25", "--weight", "neighbour=0"]);
    assert!(ok, "{err}");
    let doc = json(&out);
    assert_eq!(doc["overall"]["questions"], 3);
    assert_eq!(doc["no_evidence"]["asked"], 1, "{doc}");
    assert_eq!(doc["no_evidence"]["returned_nothing"], 1, "{doc}");
    let q1 = doc["questions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["question_id"] == "q1")
        .unwrap()
        .clone();
    assert!(q1["evidence_ranks"][0][1].as_u64().is_some(), "{q1}");
    for (bad, reason) in [
        (
            &["--sources", "bm25,telepathy"][..],
            "unknown source `telepathy`",
        ),
        (&["--weight", "vector"], "is not NAME=X"),
        (&["--weight", "vector=-1"], "must be a number >= 0"),
        (
            &["--weight", "colour=1"],
            "unknown source or prior `colour`",
        ),
        (&["--embeddings", "minilm"], "minilm-turns.npy"),
    ] {
        let (ok, out, err) = run(bad);
        assert!(!ok, "{bad:?} must be refused");
        assert!(err.contains(reason), "{bad:?}: {err}");
        assert!(out.trim().is_empty() || out.contains("error"), "{out}");
    }
}

#[test]
fn episodes_procedures_prospective_and_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let id = |out: &str, key: &str| json(out)[key].as_u64().unwrap();
    let e1 = observe(
        d,
        "p",
        &["--thread", "t"],
        "I prefer short answers. Remind me to renew the TLS certificate?",
    );
    let e2 = observe(d, "p", &["--thread", "t"], "Yes please, go ahead.");
    // Episodes.
    let (ok, out, _) = hm(
        d,
        &[
            "--json",
            "episode",
            "start",
            "--project",
            "p",
            "--agent",
            "a",
        ],
    );
    assert!(ok);
    let ep = id(&out, "episode").to_string();
    for e in [e1, e2] {
        let (ok, out, err) = hm(
            d,
            &[
                "--json",
                "episode",
                "event",
                "--project",
                "p",
                "--episode",
                &ep,
                "--event",
                &e.to_string(),
            ],
        );
        assert!(ok, "{err}");
        assert_eq!(json(&out)["outcome"], "appended");
    }
    let (ok, _, _) = hm(
        d,
        &[
            "episode",
            "end",
            "--project",
            "p",
            "--episode",
            &ep,
            "--reward",
            "1",
        ],
    );
    assert!(ok);
    // A sealed episode takes no new event; one it holds is answered with its membership.
    let later = observe(d, "p", &["--thread", "t"], "One more thing about the plan.");
    let (ok, _, err) = hm(
        d,
        &[
            "episode",
            "event",
            "--project",
            "p",
            "--episode",
            &ep,
            "--event",
            &later.to_string(),
        ],
    );
    assert!(!ok && err.contains("sealed"), "{err}");
    let (ok, out, err) = hm(
        d,
        &[
            "--json",
            "episode",
            "event",
            "--project",
            "p",
            "--episode",
            &ep,
            "--event",
            &e1.to_string(),
        ],
    );
    assert!(
        ok && out.contains("\"already_in_episode\":true"),
        "{out} {err}"
    );
    // The pulse curates the sealed episode into candidates.
    hm(d, &["pulse", "--project", "p"]);
    let (_, out, _) = hm(d, &["--json", "candidates", "list", "--project", "p"]);
    let candidates = json(&out);
    let pref = candidates
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["key"].as_str().unwrap().starts_with("user.preference"))
        .unwrap();
    let (ok, out, _) = hm(
        d,
        &[
            "--json",
            "candidates",
            "approve",
            "--project",
            "p",
            "--id",
            &pref["id"].to_string(),
        ],
    );
    assert!(ok, "{out}");
    let (_, out, _) = hm(
        d,
        &[
            "--json",
            "belief",
            "current",
            "--project",
            "p",
            "--key",
            pref["key"].as_str().unwrap(),
        ],
    );
    assert_eq!(json(&out)["status"], "active");
    // Procedures.
    let (ok, out, _) = hm(
        d,
        &[
            "--json",
            "procedure",
            "add",
            "--project",
            "p",
            "--name",
            "renew-cert",
            "--trigger",
            "renew the TLS certificate",
            "--step",
            "run certbot renew",
            "--step",
            "reload nginx",
        ],
    );
    assert!(ok);
    let proc_id = id(&out, "procedure").to_string();
    let (ok, out, _) = hm(
        d,
        &[
            "--json",
            "procedure",
            "outcome",
            "--project",
            "p",
            "--id",
            &proc_id,
            "--success",
            "true",
        ],
    );
    assert!(ok);
    assert!((json(&out)["reliability"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9);
    let (_, out, _) = hm(
        d,
        &[
            "--json",
            "procedure",
            "suggest",
            "--project",
            "p",
            "certificate renewal for TLS",
        ],
    );
    assert_eq!(json(&out)[0]["procedure"]["name"], "renew-cert");
    // Prospective memory: confirmed only by the later affirmative user event.
    let (ok, out, _) = hm(
        d,
        &[
            "--json",
            "prospective",
            "propose",
            "--project",
            "p",
            "--event",
            &e1.to_string(),
            "--due",
            "1000",
            "renew the TLS certificate",
        ],
    );
    assert!(ok);
    let item = id(&out, "id").to_string();
    let (ok, _, err) = hm(
        d,
        &[
            "prospective",
            "confirm",
            "--project",
            "p",
            "--id",
            &item,
            "--event",
            &e1.to_string(),
        ],
    );
    assert!(!ok && err.contains("refused"), "{err}");
    let (ok, out, _) = hm(
        d,
        &[
            "--json",
            "prospective",
            "confirm",
            "--project",
            "p",
            "--id",
            &item,
            "--event",
            &e2.to_string(),
        ],
    );
    assert!(ok);
    assert_eq!(json(&out)["status"], "confirmed");
    let (_, out, _) = hm(
        d,
        &[
            "--json",
            "prospective",
            "due",
            "--project",
            "p",
            "--at",
            "2000",
        ],
    );
    assert_eq!(json(&out).as_array().unwrap().len(), 1);
    let (ok, _, _) = hm(d, &["--json", "associations", "--project", "p"]);
    assert!(ok);
}

#[test]
fn belief_propose_and_correct_are_governed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let e1 = observe(d, "p", &[], "My office is in Berlin").to_string();
    let e2 = observe(
        d,
        "p",
        &["--role", "assistant"],
        "Your office is in Paris, I think",
    )
    .to_string();
    let e3 = observe(d, "p", &[], "I moved to the Lisbon office").to_string();
    let (ok, out, _) = hm(
        d,
        &[
            "--json",
            "belief",
            "propose",
            "--project",
            "p",
            "--key",
            "user.office",
            "--ownership",
            "user",
            "--evidence",
            &e1,
            "office in Berlin",
        ],
    );
    assert!(ok, "{out}");
    assert_eq!(json(&out)["results"][0]["outcome"], "created");
    // An assistant-only correction of a user-owned belief is refused, nothing written.
    let (ok, out, err) = hm(
        d,
        &[
            "--json",
            "belief",
            "correct",
            "--project",
            "p",
            "--key",
            "user.office",
            "--evidence",
            &e2,
            "office in Paris",
        ],
    );
    assert!(!ok && err.contains("rejected"));
    assert_eq!(
        json(&out)["error"]["reason"],
        "user_ownership_requires_user_evidence"
    );
    let (ok, out, _) = hm(
        d,
        &[
            "--json",
            "belief",
            "correct",
            "--project",
            "p",
            "--key",
            "user.office",
            "--expected-version",
            "1",
            "--evidence",
            &e3,
            "office in Lisbon",
        ],
    );
    assert!(ok, "{out}");
    assert_eq!(json(&out)["results"][0]["outcome"], "superseded");
    let (_, out, _) = hm(
        d,
        &[
            "--json",
            "belief",
            "history",
            "--project",
            "p",
            "--key",
            "user.office",
        ],
    );
    let history = json(&out);
    assert_eq!(history.as_array().unwrap().len(), 2);
    assert_eq!(history[0]["status"], "superseded");
    assert_eq!(history[1]["statement"], "office in Lisbon");
}

#[test]
fn eval_of_more_conversations_than_the_soft_open_file_limit() {
    // One project per conversation, one open descriptor per segment: the binary raises its
    // soft limit instead of failing at the first few hundred projects.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let (mut conversations, mut questions) = (String::new(), String::new());
    for c in 0..300 {
        conversations.push_str(&format!(
            r#"{{"conversation_id":"c{c}","sessions":[{{"session_id":"s","date":null,"turns":[{{"turn_id":"0","role":"user","text":"note {c} about the garden"}},{{"turn_id":"1","role":"user","text":"marker{c} is the answer"}}]}}]}}"#
        ));
        conversations.push('\n');
        questions.push_str(&format!(
            r#"{{"conversation_id":"c{c}","question_id":"q{c}","category":"x","question":"where is marker{c}","answer":"","evidence":["1"]}}"#
        ));
        questions.push('\n');
    }
    std::fs::write(data.join("conversations.jsonl"), conversations).unwrap();
    std::fs::write(data.join("questions.jsonl"), questions).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -S -n 128 && exec {} eval --data {} --k 10",
            env!("CARGO_BIN_EXE_hypermem"),
            data.display()
        ))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout
            .trim_end()
            .ends_with("overall recall@10 1.000 mrr 1.000 update_order 0.000"),
        "{stdout}"
    );
}

#[test]
fn import_keeps_the_data_sets_own_times() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(
        data.join("conversations.jsonl"),
        r#"{"conversation_id":"c1","sessions":[{"session_id":"s1","date":"May 8, 2023","turns":[{"turn_id":"0","role":"user","text":"first","time":"1:56 pm on 8 May, 2023"},{"turn_id":"1","role":"user","text":"second"}]},{"session_id":"s2","date":"not a date","turns":[{"turn_id":"2","role":"user","text":"third"}]}]}
"#,
    )
    .unwrap();
    let d = dir.path().join("mem");
    let (ok, _, err) = hm(&d, &["import", "--data", data.to_str().unwrap()]);
    assert!(!ok && err.contains("does not exist"), "{err}");
    let (ok, _, err) = hm(
        &d,
        &["--create", "import", "--data", data.to_str().unwrap()],
    );
    assert!(ok, "{err}");
    let (ok, out, err) = hm(&d, &["--json", "map", "--project", "c1"]);
    assert!(ok, "{err}");
    let threads = json(&out)["threads"].clone();
    let span = |name: &str| {
        let t = threads
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["thread"] == name)
            .unwrap();
        (
            t["span"][0].as_i64().unwrap(),
            t["span"][1].as_i64().unwrap(),
        )
    };
    let may8 = 1_683_504_000_000; // 2023-05-08 00:00 UTC
    // The turn's own time, then the session's date for a turn without one.
    assert_eq!(span("s1"), (may8, may8 + 13 * 3_600_000 + 56 * 60_000));
    // An unreadable date: the latest earlier time of the conversation (not "now").
    assert_eq!(span("s2").0, may8 + 13 * 3_600_000 + 56 * 60_000);
}

#[test]
fn observe_takes_a_source_and_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (text, source, at) in [
        (
            "the grey heron wades at dawn",
            "guides/birds.pdf",
            "May 8, 2023 2:30 pm",
        ),
        ("the heron statue in the park", "notes.txt", "2024-01-02"),
    ] {
        observe(d, "p", &["--source", source, "--at", at], text);
    }
    let (ok, out, err) = hm(
        d,
        &[
            "--json",
            "recall",
            "--project",
            "p",
            "heron source:guides/birds.pdf",
        ],
    );
    assert!(ok, "{err}");
    let items = json(&out)["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["event"]["source"], "guides/birds.pdf");
    // 2023-05-08 14:30 UTC.
    assert_eq!(items[0]["event"]["created_at"], 1_683_556_200_000_i64);
}

#[test]
fn observe_and_recall_take_a_speaker_and_an_embedding_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = |name: &str, body: &str| {
        let path = d.join(name);
        std::fs::write(&path, body).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let (a, b) = (
        file("a.json", "[1, 0, 0, 0.1]"),
        file("b.json", "[0, 1, 0, 0.1]"),
    );
    let first = observe(
        d,
        "p",
        &["--embedding-file", &a, "--speaker", "Ines"],
        "first note",
    );
    let second = observe(d, "p", &["--embedding-file", &b], "second note");
    let recall_by = |file: &str| {
        let (ok, out, err) = hm(
            d,
            &[
                "--json",
                "recall",
                "--project",
                "p",
                "--embedding-file",
                file,
                "unrelated",
            ],
        );
        assert!(ok, "{err}");
        json(&out)["items"].as_array().unwrap().clone()
    };
    let items = recall_by(&b);
    assert_eq!(items[0]["event"]["id"], second);
    // The first note's embedding is unrelated to the query's: below the relevance floor
    // (in a project too small to sample, the prior), never returned as a filler.
    assert_eq!(items.len(), 1, "{items:?}");
    let items = recall_by(&a);
    assert_eq!(items[0]["event"]["id"], first);
    assert_eq!(items[0]["event"]["speaker"], "Ines");
    for (body, reason) in [
        ("[1, 2]", "has 2 dimensions"),
        ("{\"x\": 1}", "not a JSON array of numbers"),
        ("[]", "the array is empty"),
    ] {
        let bad = file("bad.json", body);
        let (ok, _, err) = hm(
            d,
            &[
                "--json",
                "observe",
                "--project",
                "p",
                "--embedding-file",
                &bad,
                "third",
            ],
        );
        assert!(!ok && err.contains(reason), "{body}: {err}");
    }
    let (ok, _, err) = hm(
        d,
        &[
            "recall",
            "--project",
            "p",
            "--embedding-file",
            "/nonexistent.json",
            "x",
        ],
    );
    assert!(!ok && err.contains("/nonexistent.json"), "{err}");
}

/// A recall through the CLI reads a view of the store, yet what it could not answer is a
/// knowledge gap `gaps` lists, as for a server's recalls; an erased project gets no row back.
#[test]
fn a_question_the_cli_could_not_answer_is_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    observe(d, "home", &[], "The garage code is 1180.");
    observe(d, "home", &[], "Emma is allergic to peanuts.");
    let (ok, out, err) = hm(
        d,
        &[
            "--json",
            "recall",
            "--project",
            "home",
            "favourite football team",
        ],
    );
    assert!(ok, "{err}");
    assert_eq!(json(&out)["items"].as_array().unwrap().len(), 0);
    let (ok, out, err) = hm(d, &["--json", "recall", "--project", "home", "garage code"]);
    assert!(ok, "{err}");
    assert_eq!(json(&out)["items"].as_array().unwrap().len(), 1);
    let (ok, out, err) = hm(d, &["--json", "gaps", "--project", "home"]);
    assert!(ok, "{err}");
    let gaps = json(&out);
    let gaps = gaps.as_array().unwrap();
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    assert!(
        gaps[0]["description"]
            .as_str()
            .unwrap()
            .contains("favourite football team")
    );
    let (ok, _, err) = hm(
        d,
        &["--json", "forget-project", "--project", "home", "--yes"],
    );
    assert!(ok, "{err}");
    let (ok, out, _) = hm(d, &["--json", "gaps", "--project", "home"]);
    assert!(!ok, "an erased project is unknown: {out}");
}

/// A held-out set may hold a conversation with no text to store or a question with no
/// words: those questions return nothing and are named, and the rest are scored.
#[test]
fn eval_scores_what_it_can_and_names_the_questions_recall_refused() {
    let data = tempfile::tempdir().unwrap();
    let conversations = [
        serde_json::json!({"conversation_id": "c1", "sessions": [{"session_id": "s1", "date": null, "turns": [
            {"turn_id": "0", "role": "Alice", "text": "I adopted a cat named Miso.", "time": null},
            {"turn_id": "1", "role": "Bob", "text": "", "time": null}]}]}),
        serde_json::json!({"conversation_id": "c2", "sessions": [{"session_id": "s1", "date": null, "turns": [
            {"turn_id": "0", "role": "Alice", "text": "  ", "time": null}]}]}),
    ];
    let questions = [
        serde_json::json!({"conversation_id": "c1", "question_id": "q1", "category": "a", "question": "What is the cat called?", "answer": "Miso", "evidence": ["0"]}),
        serde_json::json!({"conversation_id": "c2", "question_id": "q2", "category": "a", "question": "Anything?", "answer": "x", "evidence": ["0"]}),
        serde_json::json!({"conversation_id": "c1", "question_id": "q3", "category": "a", "question": "", "answer": "x", "evidence": ["0"]}),
    ];
    let lines = |values: &[serde_json::Value]| {
        values
            .iter()
            .map(|v| v.to_string() + "\n")
            .collect::<String>()
    };
    std::fs::write(
        data.path().join("conversations.jsonl"),
        lines(&conversations),
    )
    .unwrap();
    std::fs::write(data.path().join("questions.jsonl"), lines(&questions)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, err) = hm(
        dir.path(),
        &[
            "--json",
            "eval",
            "--create",
            "--data",
            data.path().to_str().unwrap(),
        ],
    );
    assert!(ok, "{err}");
    let report = json(&out);
    assert_eq!(report["overall"]["questions"], 3, "{report}");
    assert!((report["overall"]["recall_at_10"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-9);
    let unasked: Vec<(&str, &str)> = report["unasked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["question_id"].as_str().unwrap(),
                u["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        unasked,
        [("q2", "unknown_project"), ("q3", "invalid_argument")]
    );
}

/// Ids written as integers are ids; a malformed question is refused before anything is
/// written, naming its line and field.
#[test]
fn eval_reads_integer_ids_and_refuses_a_malformed_question_up_front() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path();
    std::fs::write(
        d.join("conversations.jsonl"),
        serde_json::json!({"conversation_id": 7, "sessions": [{"session_id": "s", "date": null, "turns": [
            {"turn_id": 0, "role": "user", "text": "I adopted a cat named Miso."},
            {"turn_id": 1, "role": "assistant", "text": "What a lovely name."}]}]})
        .to_string()
            + "\n",
    )
    .unwrap();
    let question = |evidence: serde_json::Value| {
        serde_json::json!({"conversation_id": 7, "question_id": 1, "category": "a",
            "question": "What is the cat called?", "answer": "Miso", "evidence": evidence})
        .to_string()
            + "\n"
    };
    std::fs::write(d.join("questions.jsonl"), question(serde_json::json!([0]))).unwrap();
    let store = tempfile::tempdir().unwrap();
    let args = ["--json", "eval", "--create", "--data", d.to_str().unwrap()];
    let (ok, out, err) = hm(store.path(), &args);
    assert!(ok, "{err}");
    let report = json(&out);
    assert_eq!(report["overall"]["questions"], 1, "{report}");
    assert_eq!(report["overall"]["recall_at_1"], 1.0, "{report}");
    std::fs::write(
        d.join("questions.jsonl"),
        question(serde_json::json!([0])) + &question(serde_json::json!({"turn": 0})),
    )
    .unwrap();
    let fresh = tempfile::tempdir().unwrap();
    let (ok, out, _) = hm(fresh.path(), &args);
    assert!(!ok);
    let error = json(&out);
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("questions.jsonl:2") && message.contains("`evidence`"),
        "{message}"
    );
    assert!(
        !fresh.path().join("ledger.db").exists()
            || hm(fresh.path(), &["--json", "stats"]).1.trim() == "[]",
        "nothing was written"
    );
}

#[test]
fn a_plain_observation_becomes_a_candidate_at_the_next_pulse() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Written for this test: two lasting items, a hypothetical and an assistant's offer.
    let allergy = observe(d, "p", &[], "I'm allergic to shellfish.");
    observe(d, "p", &[], "If I lived by the sea I'd swim daily.");
    observe(
        d,
        "p",
        &["--role", "assistant"],
        "You might like the harbour walk.",
    );
    let rule = observe(d, "p", &[], "From now on, reply in Spanish.");
    let (ok, out, _) = hm(d, &["--json", "pulse", "--project", "p"]);
    assert!(ok);
    let receipt = json(&out);
    assert!(
        receipt["phases"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["produced"]
                .as_str()
                .unwrap()
                .contains("4 events outside episodes curated (2 candidates)")),
        "{receipt}"
    );
    let (ok, out, _) = hm(d, &["--json", "candidates", "list", "--project", "p"]);
    assert!(ok);
    let cited: Vec<u64> = json(&out)
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["evidence"][0].as_u64().unwrap())
        .collect();
    assert_eq!(cited, vec![allergy, rule]);
    // A second pulse reads nothing again and proposes nothing twice.
    let (ok, _, _) = hm(d, &["pulse", "--project", "p"]);
    assert!(ok);
    let (_, out, _) = hm(d, &["--json", "candidates", "list", "--project", "p"]);
    assert_eq!(json(&out).as_array().unwrap().len(), 2);
}

#[test]
fn a_dry_run_migration_of_an_empty_directory_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (ok, out, _) = hm(d, &["--json", "migrate", "--dry-run"]);
    assert!(ok);
    let report = json(&out);
    assert_eq!(report["from"], 0);
    assert_eq!(
        report["migrations"].as_array().unwrap().len(),
        hypermem::ledger::MIGRATIONS.len()
    );
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "nothing written");
    // A read still says the directory holds no memory, not that it needs a migration.
    let (ok, out, _) = hm(d, &["--json", "stats"]);
    assert!(!ok);
    assert_eq!(json(&out)["error"]["reason"], "not_initialized");
}
