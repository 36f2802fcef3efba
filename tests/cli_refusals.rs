//! Every verb does what it says or refuses with a named reason: run through the binary as
//! an operator would, `--json` errors are one document `{"error": {"reason", "message"}}`
//! on stdout and the exit code names the class.

use std::path::Path;
use std::process::Command;

/// (exit code, stdout, stderr).
fn hm(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hypermem"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Runs a `--json` command expected to fail; returns (exit code, reason, message).
fn refused(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (code, out, err) = hm(dir, &all);
    assert_ne!(code, 0, "{args:?} succeeded: {out}");
    let v = json(&out);
    let reason = v["error"]["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("{out} / {err}"));
    let message = v["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        !message.contains("SQLite") && !message.contains("sqlite"),
        "{message}"
    );
    (code, reason.to_owned(), message)
}

fn ok(dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (code, out, err) = hm(dir, &all);
    assert_eq!(code, 0, "{args:?}: {err}");
    json(&out)
}

fn observe(dir: &Path, project: &str, role: &str, text: &str) -> String {
    ok(
        dir,
        &["observe", "--project", project, "--role", role, text],
    )["event_id"]
        .to_string()
}

#[test]
fn the_data_directory_must_exist_unless_created() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let (code, reason, message) = refused(&missing, &["stats"]);
    assert_eq!((code, reason.as_str()), (3, "data_dir_missing"));
    assert!(message.contains("hypermem init"), "{message}");
    assert!(!missing.exists(), "a refused verb creates nothing");
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let (_, reason, message) = refused(&file, &["stats"]);
    assert_eq!(reason, "not_a_directory");
    assert!(message.contains("file"), "{message}");
    // A read on an existing directory that holds no store is refused and creates nothing.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for read in [&["stats"][..], &["recall", "--project", "p", "anything"]] {
        let (code, reason, message) = refused(&empty, read);
        assert_eq!((code, reason.as_str()), (3, "not_initialized"), "{message}");
    }
    assert_eq!(
        std::fs::read_dir(&empty).unwrap().count(),
        0,
        "a read wrote nothing"
    );
    ok(&missing, &["--create", "stats"]);
    assert!(missing.is_dir());
    let fresh = dir.path().join("fresh");
    ok(&fresh, &["init"]);
}

#[test]
fn usage_errors_under_json_are_one_document_too() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, _) = hm(dir.path(), &["--json", "observe", "--no-such-flag"]);
    assert_eq!(code, 2);
    assert_eq!(json(&out)["error"]["reason"], "invalid_argument");
    // The message names what is missing or allowed, not only that something is.
    for (args, named) in [
        (
            &["prospective", "confirm", "--project", "p", "--id", "1"][..],
            "--event",
        ),
        (
            &[
                "procedure",
                "outcome",
                "--project",
                "p",
                "--id",
                "1",
                "--success",
            ][..],
            "true, false",
        ),
    ] {
        let (code, out, _) = hm(dir.path(), &[&["--json"][..], args].concat());
        assert_eq!(code, 2, "{args:?}");
        let message = json(&out)["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(named), "{args:?}: {message}");
    }
    ok(dir.path(), &["init"]);
    let (code, reason, _) = refused(
        dir.path(),
        &[
            "belief",
            "at",
            "--project",
            "p",
            "--key",
            "k",
            "--at",
            "2025-02-30",
        ],
    );
    assert_eq!((code, reason.as_str()), (2, "invalid_argument"));
    // Every time argument reads RFC 3339 with an offset through one parser.
    let v = ok(
        dir.path(),
        &[
            "observe",
            "--project",
            "p",
            "--at",
            "2025-02-01T10:00:00+01:00",
            "hello",
        ],
    );
    let id = v["event_id"].as_u64().unwrap();
    let map = ok(dir.path(), &["map", "--project", "p"]);
    assert_eq!(map["span"][0], 1_738_400_400_000_i64, "{map}");
    assert!(id > 0);
}

#[test]
fn episodes_append_once_and_keep_outcome_and_reward() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let e1 = observe(d, "p", "user", "deploy the service to staging");
    let other = observe(d, "q", "user", "another project's event");
    let ep = ok(d, &["episode", "start", "--project", "p", "--agent", "a"])["episode"].to_string();
    let v = ok(
        d,
        &[
            "episode",
            "event",
            "--project",
            "p",
            "--episode",
            &ep,
            "--event",
            &e1,
        ],
    );
    assert_eq!(v["outcome"], "appended");
    // Appending it again is its membership, not an error: a script's start → event → end
    // works whether or not the observe joined the episode first.
    let again = ok(
        d,
        &[
            "episode",
            "event",
            "--project",
            "p",
            "--episode",
            &ep,
            "--event",
            &e1,
        ],
    );
    assert_eq!(
        (
            &again["already_in_episode"],
            &again["position"],
            &again["outcome"]
        ),
        (
            &serde_json::json!(true),
            &v["position"],
            &serde_json::json!("already_in_episode")
        )
    );
    let (_, reason, _) = refused(
        d,
        &[
            "episode",
            "event",
            "--project",
            "p",
            "--episode",
            &ep,
            "--event",
            &other,
        ],
    );
    // Another project's event is answered as one that does not exist.
    assert_eq!(reason, "unknown_event");
    let (code, reason, _) = refused(
        d,
        &[
            "episode",
            "event",
            "--project",
            "q",
            "--episode",
            &ep,
            "--event",
            &other,
        ],
    );
    // Another project's episode is answered as one that does not exist.
    assert_eq!((code, reason.as_str()), (3, "not_found"));
    let (code, reason, _) = refused(d, &["episode", "end", "--project", "p", "--episode", "999"]);
    assert_eq!((code, reason.as_str()), (3, "not_found"));
    let v = ok(
        d,
        &[
            "episode",
            "end",
            "--project",
            "p",
            "--episode",
            &ep,
            "--outcome",
            "deployed",
            "--reward",
            "0.5",
        ],
    );
    assert_eq!(
        (v["outcome"].as_str(), v["reward"].as_f64()),
        (Some("deployed"), Some(0.5))
    );
    let (_, reason, _) = refused(
        d,
        &[
            "episode",
            "end",
            "--project",
            "p",
            "--episode",
            &ep,
            "--outcome",
            "failed",
        ],
    );
    assert_eq!(reason, "episode_sealed");
    // A procedure outcome needs an explicit value.
    let id = ok(
        d,
        &[
            "procedure",
            "add",
            "--project",
            "p",
            "--name",
            "n",
            "--trigger",
            "t",
            "--step",
            "s",
        ],
    )["procedure"]
        .to_string();
    let (code, _, _) = hm(d, &["procedure", "outcome", "--project", "p", "--id", &id]);
    assert_eq!(code, 2);
    let v = ok(
        d,
        &[
            "procedure",
            "outcome",
            "--project",
            "p",
            "--id",
            &id,
            "--success",
            "false",
        ],
    );
    assert_eq!(v["failures"], 1, "{v}");
    let (_, reason, _) = refused(
        d,
        &[
            "procedure",
            "outcome",
            "--project",
            "q",
            "--id",
            &id,
            "--success",
            "true",
        ],
    );
    assert_eq!(reason, "not_found");
}

#[test]
fn prospective_refusals_are_json_errors_and_show_reports_history() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ask = observe(d, "p", "assistant", "Shall I remind you to call Ana?");
    let yes = observe(d, "p", "user", "yes please");
    let item = ok(
        d,
        &[
            "prospective",
            "propose",
            "--project",
            "p",
            "--event",
            &ask,
            "--due",
            "2025-03-01",
            "call Ana",
        ],
    );
    let id = item["id"].to_string();
    let (_, reason, _) = refused(
        d,
        &[
            "prospective",
            "confirm",
            "--project",
            "p",
            "--id",
            &id,
            "--event",
            &ask,
        ],
    );
    assert_eq!(reason, "not_user_event");
    let (code, reason, _) = refused(
        d,
        &["prospective", "complete", "--project", "p", "--id", "999"],
    );
    assert_eq!((code, reason.as_str()), (3, "unknown_item"));
    let (_, reason, _) = refused(
        d,
        &["prospective", "complete", "--project", "q", "--id", &id],
    );
    assert_eq!(reason, "unknown_item");
    let v = ok(
        d,
        &[
            "prospective",
            "defer",
            "--project",
            "p",
            "--id",
            &id,
            "--until",
            "2025-03-02T09:00:00Z",
        ],
    );
    assert_eq!(v["status"], "pending");
    let due = ok(
        d,
        &["prospective", "due", "--project", "p", "--at", "2030-01-01"],
    );
    assert_eq!(
        due.as_array().unwrap().len(),
        0,
        "never confirmed, never due"
    );
    ok(
        d,
        &[
            "prospective",
            "confirm",
            "--project",
            "p",
            "--id",
            &id,
            "--event",
            &yes,
        ],
    );
    let due = ok(
        d,
        &["prospective", "due", "--project", "p", "--at", "2030-01-01"],
    );
    assert_eq!(due.as_array().unwrap().len(), 1);
    let shown = ok(d, &["prospective", "show", "--project", "p", "--id", &id]);
    assert_eq!(shown["status"], "confirmed");
    let ops: Vec<&str> = shown["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["op"].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["propose", "defer", "confirm"]);
}

#[test]
fn import_is_rerunnable_and_refuses_malformed_files_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let d = dir.path().join("mem");
    ok(&d, &["init"]);
    let file = data.join("conversations.jsonl");
    let import = |content: &str| {
        std::fs::write(&file, content).unwrap();
        hm(&d, &["--json", "import", "--data", data.to_str().unwrap()])
    };
    let good = r#"{"conversation_id":"c1","sessions":[{"session_id":"s1","date":null,"turns":[{"turn_id":"0","role":"user","text":"first"},{"turn_id":"1","role":"assistant","text":"second"}]}]}"#;
    let bad_text = good.replace(r#""text":"second""#, r#""text":42"#);
    let null_text = good.replace(r#""text":"second""#, r#""text":null"#);
    let no_sessions = r#"{"conversation_id":"c1"}"#;
    let twice = good.replace(r#""turn_id":"1""#, r#""turn_id":"0""#);
    let huge = good.replace("second", &"x".repeat((1 << 20) + 1));
    let no_role = good.replace(r#""role":"assistant""#, r#""role":"""#);
    // Latin-1 bytes on line 2 (é as 0xE9).
    std::fs::write(
        &file,
        [good.as_bytes(), b"\n{\"conversation_id\":\"caf\xe9\"}\n"].concat(),
    )
    .unwrap();
    let (code, out, _) = hm(&d, &["--json", "import", "--data", data.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    let message = json(&out)["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("conversations.jsonl:2:") && message.contains("not UTF-8"),
        "{message}"
    );
    for (content, want) in [
        (no_role, "`sessions[0].turns[1].role` is empty"),
        (
            format!("{good}\n{bad_text}\n"),
            ":2: `sessions[0].turns[1].text` must be a string, not a number",
        ),
        (
            null_text,
            "`sessions[0].turns[1].text` must be a string, not null",
        ),
        (no_sessions.to_owned(), "`sessions` is missing"),
        (String::new(), "holds no conversation"),
        ("{not json".to_owned(), "is not valid JSON"),
        (twice, "turn \"0\""),
        (huge, "turn \"1\" is 1048577 bytes"),
    ] {
        let (code, out, _) = import(&content);
        assert_eq!(code, 2, "{out}");
        let message = json(&out)["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(want), "{message} (want {want})");
        assert!(message.contains("conversations.jsonl"), "{message}");
    }
    assert_eq!(
        ok(&d, &["stats"]).as_array().unwrap().len(),
        0,
        "nothing was written"
    );
    // A BOM and CRLF line ends are accepted; a re-run skips what is stored.
    let (code, out, err) = import(&format!("\u{feff}{good}\r\n"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        (json(&out)["new"].as_u64(), json(&out)["skipped"].as_u64()),
        (Some(2), Some(0))
    );
    let (_, out, _) = import(&format!("{good}\n"));
    assert_eq!(
        (json(&out)["new"].as_u64(), json(&out)["skipped"].as_u64()),
        (Some(0), Some(2))
    );
    // An interrupted import resumes: only the turns not stored are written.
    let more = good.replace(
        r#"{"turn_id":"1","role":"assistant","text":"second"}"#,
        r#"{"turn_id":"1","role":"assistant","text":"second"},{"turn_id":"2","role":"user","text":"third"}"#,
    );
    let (_, out, _) = import(&format!("{more}\n"));
    assert_eq!(
        (json(&out)["new"].as_u64(), json(&out)["skipped"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(ok(&d, &["stats"])[0]["events"], 3);
    // A stored turn whose text changed is an edit the append-only ledger refuses, naming
    // the turn, before anything of the file is written.
    let edited = more.replace(r#""text":"second""#, r#""text":"second, edited""#);
    let extra = good.replace("c1", "c2");
    let (code, out, _) = import(&format!("{extra}\n{edited}\n"));
    assert_eq!(code, 4, "{out}");
    let error = &json(&out)["error"];
    assert_eq!(error["reason"], "changed_turn");
    assert!(
        error["message"].as_str().unwrap().contains(r#"turn "1""#),
        "{error}"
    );
    assert_eq!(
        ok(&d, &["stats"]).as_array().unwrap().len(),
        1,
        "c2 was not written"
    );
    assert_eq!(ok(&d, &["stats"])[0]["events"], 3);
}

#[test]
fn numbers_have_ranges_negative_ones_parse_and_symbols_are_recallable() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ev = observe(d, "p", "user", "deploy the blue build");
    let ep = ok(d, &["episode", "start", "--project", "p", "--agent", "a"])["episode"].to_string();
    ok(
        d,
        &[
            "episode",
            "event",
            "--project",
            "p",
            "--episode",
            &ep,
            "--event",
            &ev,
        ],
    );
    let (code, reason, message) = refused(
        d,
        &[
            "episode",
            "end",
            "--project",
            "p",
            "--episode",
            &ep,
            "--reward",
            "7",
        ],
    );
    assert_eq!((code, reason.as_str()), (2, "invalid_argument"));
    assert!(message.contains("[-1, 1]"), "{message}");
    ok(
        d,
        &[
            "episode",
            "end",
            "--project",
            "p",
            "--episode",
            &ep,
            "--reward",
            "-1",
        ],
    );
    // A negative number is a value with a named error, not an unknown flag.
    let (code, reason, message) = refused(
        d,
        &[
            "recall",
            "--project",
            "p",
            "--pack",
            "--available",
            "-5",
            "blue build",
        ],
    );
    assert_eq!((code, reason.as_str()), (2, "invalid_argument"));
    assert!(message.contains("-5"), "{message}");
    assert!(!message.contains("unexpected argument"), "{message}");
    // Content without words is still encoded, and found again.
    let party = observe(d, "p", "user", "🎉🎉🎉");
    let v = ok(d, &["recall", "--project", "p", "🎉🎉🎉"]);
    assert_eq!(v["items"][0]["event"]["id"].to_string(), party, "{v}");
    // A reader that closes the pipe ends the command quietly.
    let mut child = Command::new(env!("CARGO_BIN_EXE_hypermem"))
        .arg("--data-dir")
        .arg(d)
        .args(["--json", "recall", "--project", "p", "blue"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("panicked"), "{err}");
}

#[test]
fn migrate_dry_run_reports_pending_migrations_without_applying_them() {
    let dir = tempfile::tempdir().unwrap();
    {
        let l = hypermem::ledger::Ledger::open_unmigrated(
            dir.path().join("ledger.db"),
            hypermem::ledger::LedgerConfig::default(),
        )
        .unwrap();
        l.migrate_to(5, false).unwrap();
    }
    let latest = hypermem::ledger::MIGRATIONS.last().unwrap().version;
    for _ in 0..2 {
        let v = ok(dir.path(), &["migrate", "--dry-run"]);
        assert_eq!(
            (v["from"].as_u64(), v["dry_run"].as_bool()),
            (Some(5), Some(true)),
            "{v}"
        );
        assert_eq!(v["migrations"].as_array().unwrap().len() as u32, latest - 5);
    }
    let v = ok(dir.path(), &["migrate"]);
    assert_eq!(
        (v["from"].as_u64(), v["to"].as_u64()),
        (Some(5), Some(u64::from(latest)))
    );
    let v = ok(dir.path(), &["migrate", "--dry-run"]);
    assert_eq!(v["migrations"].as_array().unwrap().len(), 0);
}

#[test]
fn oversized_k_and_a_bad_kernel_are_refused_not_aborts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    observe(d, "p", "user", "hello world");
    let (code, reason, _) = refused(
        d,
        &["recall", "--project", "p", "--k", "1000000000000", "hello"],
    );
    assert_eq!((code, reason.as_str()), (2, "invalid_argument"));
    let v = ok(
        d,
        &[
            "recall",
            "--project",
            "p",
            "hello in the last 200000000000 days",
        ],
    );
    assert_eq!(v["items"].as_array().unwrap().len(), 1);
    let (code, reason, _) = refused(d, &["recall", "--project", "nope", "hello"]);
    assert_eq!((code, reason.as_str()), (3, "unknown_project"));
    for verb in [&["stats"][..], &["recall", "--project", "p", "hello"][..]] {
        let mut args = vec!["--data-dir", d.to_str().unwrap(), "--json"];
        args.extend_from_slice(verb);
        let out = Command::new(env!("CARGO_BIN_EXE_hypermem"))
            .args(&args)
            .env("HDV_KERNEL", "bogus")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{verb:?}");
        assert_eq!(
            json(&String::from_utf8_lossy(&out.stdout))["error"]["reason"],
            "unavailable_kernel"
        );
    }
}

#[test]
fn requests_that_would_do_nothing_are_refused_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    observe(d, "p", "user", "the deploy window is Tuesday at noon");
    for text in ["", "   \n\t "] {
        let (code, reason, message) = refused(d, &["observe", "--project", "p", text]);
        assert_eq!((code, reason.as_str()), (2, "invalid_argument"), "{text:?}");
        assert!(message.contains("content is empty"), "{message}");
    }
    let stats = ok(d, &["stats"]);
    assert_eq!(stats[0]["events"], 1, "nothing half-written: {stats}");
    for (args, says) in [
        (&["recall", "--project", "p", ""][..], "the query is empty"),
        (
            &["recall", "--project", "p", "  "][..],
            "the query is empty",
        ),
        (
            &["recall", "--project", "p", "since:2024-01-01 role:user"][..],
            "holds only filters",
        ),
        (
            &["recall", "--project", "p", "--k", "0", "deploy"][..],
            "ask for at least 1",
        ),
    ] {
        let (code, reason, message) = refused(d, args);
        assert_eq!((code, reason.as_str()), (2, "invalid_argument"), "{args:?}");
        assert!(message.contains(says), "{args:?}: {message}");
    }
    let (code, reason, _) = refused(d, &["procedure", "suggest", "--project", "p", " "]);
    assert_eq!((code, reason.as_str()), (2, "invalid_argument"));
    for budget in [
        &["--available", "0"][..],
        &["--available", "3"][..],
        &["--available", "1000", "--budget", "0"][..],
    ] {
        let mut args = vec!["recall", "--project", "p", "--pack", "deploy"];
        args.extend_from_slice(budget);
        let (code, reason, message) = refused(d, &args);
        assert_eq!(
            (code, reason.as_str()),
            (2, "invalid_argument"),
            "{budget:?}"
        );
        assert!(message.contains("budget of 0 tokens"), "{message}");
    }
    // A quoted phrase alone is words to recall by.
    let v = ok(d, &["recall", "--project", "p", "\"deploy window\""]);
    assert_eq!(v["items"].as_array().unwrap().len(), 1);
    // Reading a belief that does not exist is `not_found` (exit 3), not a null.
    for verb in ["current", "history"] {
        let (code, reason, message) = refused(
            d,
            &["belief", verb, "--project", "p", "--key", "user.nothing"],
        );
        assert_eq!((code, reason.as_str()), (3, "not_found"), "{verb}");
        assert!(message.contains("user.nothing"), "{message}");
    }
    let (code, reason, _) = refused(
        d,
        &[
            "belief",
            "at",
            "--project",
            "p",
            "--key",
            "user.nothing",
            "--at",
            "2024-01-01",
        ],
    );
    assert_eq!((code, reason.as_str()), (3, "not_found"));
    // Erasure is done only when confirmed.
    observe(d, "gone", "user", "soon erased");
    let (code, reason, _) = refused(d, &["forget-project", "--project", "gone"]);
    assert_eq!((code, reason.as_str()), (2, "confirmation_required"));
    assert_eq!(ok(d, &["stats"]).as_array().unwrap().len(), 2);
    ok(d, &["forget-project", "--project", "gone", "--yes"]);
    assert_eq!(ok(d, &["stats"]).as_array().unwrap().len(), 1);
}

#[test]
fn repairs_on_open_are_logged_on_stderr_and_stdout_stays_one_document() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    observe(d, "p", "user", "hello world");
    // A stale temporary segment from an interrupted creation: a read leaves it (reads
    // never write); the next writer removes and reports it.
    let stale = d.join("vectors/projects/p/seg-00000099.hseg.tmp");
    std::fs::write(&stale, b"").unwrap();
    let (code, out, _) = hm(d, &["--json", "stats"]);
    assert_eq!(code, 0);
    json(&out);
    assert!(stale.exists(), "a read repaired");
    let (code, out, err) = hm(d, &["--json", "observe", "--project", "p", "hello again"]);
    assert_eq!(code, 0);
    json(&out);
    assert!(err.contains("interrupted"), "{err}");
    assert!(!stale.exists());
    // Reads change nothing stored: every file of the store but the ledger (where a recall
    // logs its query, for knowledge gaps) is as it was.
    fn files(dir: &Path, out: &mut Vec<(std::path::PathBuf, u64, std::time::SystemTime)>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let m = e.metadata().unwrap();
            if m.is_dir() {
                files(&e.path(), out);
            } else if !e.file_name().to_string_lossy().starts_with("ledger.db") {
                out.push((e.path(), m.len(), m.modified().unwrap()));
            }
        }
        out.sort();
    }
    let mut before = Vec::new();
    files(d, &mut before);
    std::thread::sleep(std::time::Duration::from_millis(20));
    for read in [
        &["--json", "recall", "--project", "p", "hello"][..],
        &["--json", "stats"],
        &["--json", "map", "--project", "p"],
        &["--json", "gaps", "--project", "p"],
    ] {
        assert_eq!(hm(d, read).0, 0, "{read:?}");
    }
    let mut after = Vec::new();
    files(d, &mut after);
    assert_eq!(before, after, "a read wrote");
    let stats = ok(d, &["stats"]);
    assert_eq!(stats[0]["events"], 2, "{stats}");
}

#[test]
fn concurrent_cli_writers_wait_for_each_other_and_a_held_store_is_retryable() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(d, &["init"]);
    std::thread::scope(|scope| {
        for w in 0..2 {
            scope.spawn(move || {
                for i in 0..10 {
                    observe(d, "p", "user", &format!("writer {w} line {i}"));
                }
            });
        }
    });
    assert_eq!(
        ok(d, &["stats"])[0]["events"],
        20,
        "every write of both processes landed"
    );
    // A store held past the wait is the named, retryable `store_locked` (exit 5).
    let mut server = Command::new(env!("CARGO_BIN_EXE_hypermem"))
        .arg("--data-dir")
        .arg(d)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    // A holder that did not announce itself (a server announces itself, and writes are
    // sent to it: `tests/http.rs`).
    std::fs::remove_file(d.join("SERVING")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hypermem"))
        .arg("--data-dir")
        .arg(d)
        .args(["--json", "observe", "--project", "p", "late"])
        .env("HYPERMEM_LOCK_WAIT_MS", "200")
        .output()
        .unwrap();
    // A reader does not wait: it reads a view of what the holder committed.
    let started = std::time::Instant::now();
    let stats = ok(d, &["stats"]);
    let recall = ok(d, &["recall", "--project", "p", "writer 1 line 3"]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "readers waited"
    );
    server.kill().unwrap();
    server.wait().unwrap();
    assert_eq!(out.status.code(), Some(5));
    let v = json(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(v["error"]["reason"], "store_locked");
    assert_eq!(v["error"]["retryable"], true);
    assert_eq!(stats[0]["events"], 20);
    assert!(!recall["items"].as_array().unwrap().is_empty());
}

#[test]
fn damaged_stored_data_is_corruption_not_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let id = ok(
        d,
        &[
            "procedure",
            "add",
            "--project",
            "p",
            "--name",
            "deploy",
            "--trigger",
            "when a release is tagged",
            "--step",
            "build",
        ],
    )["procedure"]
        .to_string();
    let db = rusqlite::Connection::open(d.join("ledger.db")).unwrap();
    db.execute("UPDATE procedures SET steps = '{' WHERE id = ?1", [&id])
        .unwrap();
    drop(db);
    let (code, reason, message) = refused(
        d,
        &[
            "procedure",
            "suggest",
            "--project",
            "p",
            "a release is tagged",
        ],
    );
    assert_eq!((code, reason.as_str()), (1, "corruption"), "{message}");
    assert!(message.contains(&format!("procedure {id}")), "{message}");
    assert!(
        !message.contains("EOF") && !message.contains("line 1"),
        "no serde text: {message}"
    );
}

#[test]
fn what_cognition_made_is_readable_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let first =
        ok(d, &["episode", "start", "--project", "p", "--agent", "a"])["episode"].to_string();
    let e1 = observe(
        d,
        "p",
        "user",
        "the kiln needs a new thermocouple before the firing",
    );
    let e2 = observe(
        d,
        "p",
        "assistant",
        "order a type K thermocouple for the kiln",
    );
    for e in [&e1, &e2] {
        ok(
            d,
            &[
                "episode",
                "event",
                "--project",
                "p",
                "--episode",
                &first,
                "--event",
                e,
            ],
        );
    }
    ok(
        d,
        &[
            "episode",
            "end",
            "--project",
            "p",
            "--episode",
            &first,
            "--reward",
            "1",
        ],
    );
    let second =
        ok(d, &["episode", "start", "--project", "p", "--agent", "a"])["episode"].to_string();
    let shown = ok(d, &["episode", "show", "--project", "p", "--id", &first]);
    assert_eq!(
        shown["events"],
        serde_json::json!([e1.parse::<u64>().unwrap(), e2.parse::<u64>().unwrap()]),
        "{shown}"
    );
    assert_eq!(
        (&shown["status"], &shown["reward"]),
        (&serde_json::json!("sealed"), &serde_json::json!(1.0))
    );
    assert_eq!(shown["next"].to_string(), second, "{shown}");
    let later = ok(d, &["episode", "show", "--project", "p", "--id", &second]);
    assert_eq!(later["prev"].to_string(), first, "{later}");
    // Another project's episode is answered as one that does not exist.
    observe(d, "q", "user", "unrelated");
    let (code, reason, _) = refused(d, &["episode", "show", "--project", "q", "--id", &first]);
    assert_eq!((code, reason.as_str()), (3, "not_found"));
    // Consolidation turns the sealed episode into a concept, readable with its episodes.
    ok(d, &["pulse", "--project", "p"]);
    let concepts = ok(d, &["concepts", "list", "--project", "p"]);
    let list = concepts.as_array().unwrap();
    assert!(!list.is_empty(), "{concepts}");
    let id = list[0]["id"].to_string();
    let concept = ok(d, &["concepts", "show", "--project", "p", "--id", &id]);
    assert_eq!(concept["support"], list[0]["support"], "{concept}");
    assert_eq!(
        concept["episodes"][0]["events"], shown["events"],
        "{concept}"
    );
    let (code, reason, _) = refused(d, &["concepts", "show", "--project", "p", "--id", "999"]);
    assert_eq!((code, reason.as_str()), (3, "not_found"));
    // What a plan changed, operation by operation.
    let applied = ok(
        d,
        &[
            "belief",
            "propose",
            "--project",
            "p",
            "--key",
            "kiln.part",
            "--evidence",
            &e1,
            "--idempotency-key",
            "k1",
            "the kiln needs a type K thermocouple",
        ],
    );
    let audit = ok(d, &["plan", "audit", "--project", "p", "--key", "k1"]);
    assert_eq!(audit[0]["op"], "assert", "{audit}");
    assert!(audit[0]["belief"].is_u64(), "{audit}");
    assert_eq!(
        audit[0]["belief"], applied["results"][0]["belief"],
        "{audit} / {applied}"
    );
    let (code, reason, _) = refused(d, &["plan", "audit", "--project", "p", "--key", "nope"]);
    assert_eq!((code, reason.as_str()), (3, "not_found"));
    // One memory with its access count, strength, tier and the beliefs citing it.
    let memory = ok(d, &["show", "--project", "p", "--id", &e1]);
    assert_eq!(memory["event"]["id"].to_string(), e1, "{memory}");
    assert!(memory["accesses"].as_u64().unwrap() >= 1, "{memory}");
    assert!(memory["strength"].as_f64().unwrap() > 0.0, "{memory}");
    assert_eq!(memory["tier"], "warm", "{memory}");
    assert_eq!(memory["beliefs"][0][1], "kiln.part", "{memory}");
    let (code, reason, _) = refused(d, &["show", "--project", "q", "--id", &e1]);
    assert_eq!((code, reason.as_str()), (3, "unknown_event"));
    // An observe by an agent with an open episode says which episode it joined.
    let open = ok(d, &["episode", "start", "--project", "p", "--agent", "b"])["episode"].clone();
    let joined = ok(
        d,
        &[
            "observe",
            "--project",
            "p",
            "--agent",
            "b",
            "glaze the bowls next",
        ],
    );
    assert_eq!(joined["episode"], open, "{joined}");
    let alone = ok(d, &["observe", "--project", "p", "no agent here"]);
    assert!(alone.get("episode").is_none(), "{alone}");
    // Segmentation runs for an agent that never started an episode too.
    let auto = ok(
        d,
        &[
            "observe",
            "--project",
            "p",
            "--agent",
            "c",
            "trim the glaze drips",
        ],
    );
    let episode = auto["episode"].to_string();
    assert_ne!(episode, "null", "{auto}");
    let shown = ok(d, &["episode", "show", "--project", "p", "--id", &episode]);
    assert_eq!(
        (&shown["agent"], &shown["events"][0]),
        (&serde_json::json!("c"), &auto["event_id"]),
        "{shown}"
    );
}

#[test]
fn a_recall_asking_for_an_unreached_sequence_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    ok(dir.path(), &["init"]);
    let id = observe(
        dir.path(),
        "p",
        "user",
        "The loft ladder folds away after use.",
    );
    // The sequence a write answered is seen: the recall finds it.
    let found = ok(
        dir.path(),
        &["recall", "--project", "p", "--at-least", &id, "loft ladder"],
    );
    assert_eq!(found["items"][0]["event"]["id"].to_string(), id);
    // One no write reached: a retryable refusal after the wait, as one JSON document.
    let ahead = (id.parse::<u64>().unwrap() + 5).to_string();
    let behind = |verb: &str| {
        refused(
            dir.path(),
            &[
                verb,
                "--project",
                "p",
                "--at-least",
                &ahead,
                "--wait-ms",
                "30",
                "loft ladder",
            ],
        )
    };
    let (code, reason, message) = behind("recall");
    assert_eq!((code, reason.as_str()), (5, "not_caught_up"), "{message}");
    assert!(message.contains(&ahead), "{message}");
    // So is a pack; a wait past the bound is bad input.
    let (code, reason, _) = behind("pack");
    assert_eq!((code, reason.as_str()), (5, "not_caught_up"));
    let (code, reason, _) = refused(
        dir.path(),
        &[
            "recall",
            "--project",
            "p",
            "--wait-ms",
            "90000",
            "loft ladder",
        ],
    );
    assert_eq!((code, reason.as_str()), (2, "invalid_argument"));
}
