//! The standard profile end to end on a real redis-server (see `common/redis_server.rs`):
//! `Memory` with its warm tier in Redis observes, recalls, packs and erases as on lite; a
//! second instance on the same data directory and Redis sees the writer's new memories
//! within one refresh, adds to the same access counts and shares working memory; Redis unreachable, killed mid-run or flushed is a named error or a
//! rebuild from the ledger, never a loss.

mod common;
use common::all_of;

use common::redis_server::{self, RedisServer};
use common::{chatter, project, user_says};
use hypermem::hdv::Dim;
use hypermem::store::{VectorId, VectorTier};
use hypermem::{Memory, Profile, ProfileKind, RedisSettings};
use std::time::Duration;

fn standard(url: &str, prefix: &str) -> Profile {
    let mut p = Profile::load(Profile::bundled_path(ProfileKind::Standard)).unwrap();
    p.dim = Dim::new(2048).unwrap();
    p.redis = Some(RedisSettings {
        url: url.to_owned(),
        prefix: prefix.to_owned(),
        refresh: Duration::ZERO,
        retries: 2,
        retry_backoff: Duration::from_millis(20),
        connect_timeout: Duration::from_millis(300),
        command_timeout: Duration::from_millis(1_000),
        ..RedisSettings::default()
    });
    p
}

#[test]
fn observe_recall_pack_and_erase_on_the_standard_profile() {
    let mut keep = None;
    let Some(url) = redis_server::shared(&mut keep) else {
        return;
    };
    let prefix = redis_server::unique_prefix("e2e");
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&standard(&url, &prefix), Some(dir.path())).unwrap();
    assert_eq!(m.vectors().hot().name(), "hot");
    for p in ["alpha", "beta"] {
        m.observe_batch(&chatter(p, 0, 30)).unwrap();
    }
    m.observe(user_says(
        "alpha",
        "s2",
        "My cat is called Miso and she is allergic to fish.",
    ))
    .unwrap();
    // The vectors are in Redis, not in a local warm segment store.
    assert!(!dir.path().join("vectors").exists());
    assert!(
        redis_server::keys(&url, &prefix)
            .iter()
            .any(|k| k.ends_with("{alpha}:vec"))
    );
    let hits = m
        .recall(&project("alpha"), "what is the cat allergic to?", 5)
        .unwrap();
    assert!(hits[0].event.content.contains("Miso"), "{hits:?}");
    let sources: Vec<&str> = hits[0]
        .fused
        .breakdown
        .iter()
        .map(|b| b.signal.name())
        .collect();
    assert!(sources.contains(&"vector"), "{sources:?}");
    let pack = m
        .recall_pack(&project("alpha"), "the cat's allergy", None, 400, None)
        .unwrap();
    assert!(pack.used <= pack.budget);
    assert!(pack.items.iter().any(|(_, text)| text.contains("Miso")));
    let map = m.map(&project("alpha"), 10).unwrap();
    assert_eq!(map.tiers.warm + map.tiers.cold, 31);

    let receipt = m.forget_project(&project("alpha")).unwrap();
    assert_eq!(receipt.vectors, 31);
    let left = redis_server::keys(&url, &prefix);
    assert!(
        all_of(left.iter(), |k| !k.contains("{alpha}")),
        "keys of the erased project: {left:?}"
    );
    assert!(left.iter().any(|k| k.contains("{beta}")), "{left:?}");
    assert_eq!(m.vectors().len(&project("beta")), 30);
    assert!(
        m.recall(&project("beta"), "module 7 build", 3).unwrap()[0]
            .event
            .content
            .contains("module 7")
    );
}

#[test]
fn a_second_instance_recalls_what_the_writer_stores_after_it_opened() {
    let mut keep = None;
    let Some(url) = redis_server::shared(&mut keep) else {
        return;
    };
    let prefix = redis_server::unique_prefix("two");
    let dir = tempfile::tempdir().unwrap();
    let profile = standard(&url, &prefix);
    let writer = Memory::open(&profile, Some(dir.path())).unwrap();
    writer.observe_batch(&chatter("p", 0, 20)).unwrap();
    let reader = Memory::open_view(&profile, Some(dir.path())).unwrap();
    assert_eq!(reader.vectors().len(&project("p")), 20);
    assert!(
        reader.recall(&project("p"), "module 3 build", 3).unwrap()[0]
            .event
            .content
            .contains("module 3")
    );
    // Written after the reader opened and searched: seen on its next recall.
    let id = writer
        .observe(user_says(
            "p",
            "s9",
            "The staging database password rotates every Tuesday at noon.",
        ))
        .unwrap();
    let hits = reader
        .recall(&project("p"), "when does the staging password rotate?", 3)
        .unwrap();
    assert_eq!(hits[0].event.id, id, "{hits:?}");
    assert!(
        reader
            .vectors()
            .get(&project("p"), VectorId(id.0))
            .unwrap()
            .is_some()
    );
    // Accesses add up across processes: the reader's recalls potentiate the writer's trace.
    let before = writer
        .vectors()
        .trace(&project("p"), VectorId(id.0))
        .unwrap();
    for m in [&writer, &reader, &reader, &writer, &reader] {
        let hits = m
            .recall(&project("p"), "when does the staging password rotate?", 3)
            .unwrap();
        assert_eq!(hits[0].event.id, id);
    }
    writer.pulse_tick(&project("p")).unwrap();
    let after = writer
        .vectors()
        .trace(&project("p"), VectorId(id.0))
        .unwrap();
    // One access from the reader's first recall above, then five.
    assert_eq!(
        after.accesses,
        before.accesses + 6,
        "{before:?} -> {after:?}"
    );
    // Working memory is shared: what the writer's agent holds, the reader's sees and
    // changes, and the writer sees the change.
    writer.cognition().push_recall_snapshot(
        &project("p"),
        "agent-7",
        &[(1, "first".to_owned(), 2.0), (2, "second".to_owned(), 1.0)],
        600.0,
    );
    let ids = |m: &Memory| {
        m.cognition()
            .with_working(&project("p"), "agent-7", |wm, _| {
                wm.items().iter().map(|i| i.id).collect::<Vec<_>>()
            })
    };
    assert_eq!(ids(&reader), vec![1, 2]);
    reader
        .cognition()
        .with_working(&project("p"), "agent-7", |wm, _| wm.remove(1));
    assert_eq!(ids(&writer), vec![2]);
    assert_eq!(ids(&writer), ids(&reader));
    // Erasure by the writer is seen by the reader.
    let held = redis_server::keys(&url, &prefix);
    assert!(held.iter().any(|k| k.contains("{p}")), "{held:?}");
    writer.forget_project(&project("p")).unwrap();
    let left = redis_server::keys(&url, &prefix);
    assert!(!left.iter().any(|k| k.contains("{p}")), "{left:?}");
    assert!(warm_vectors(&profile, dir.path(), "p").is_empty());
    match reader.recall(&project("p"), "staging password", 3) {
        Ok(hits) => assert!(hits.is_empty(), "{hits:?}"),
        Err(e) => assert_eq!(e.reason(), "unknown_project", "{e}"),
    }
    assert_eq!(reader.vectors().len(&project("p")), 0);
}

#[test]
fn unreachable_redis_at_open_is_an_error_naming_the_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("redis://:s3cret@127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let err = Memory::open(&standard(&url, "unreachable"), Some(dir.path())).unwrap_err();
    let text = err.to_string();
    assert_eq!(err.reason(), "unavailable", "{text}");
    assert!(
        text.contains(&format!("redis://:***@127.0.0.1:{port}")),
        "{text}"
    );
    assert!(!text.contains("s3cret"), "{text}");
    // The refused open leaves the empty directory as it found it (no ledger, no token),
    // and a directory it would have created does not appear.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let missing = dir.path().join("new");
    assert!(Memory::open(&standard(&url, "unreachable"), Some(&missing)).is_err());
    assert!(!missing.exists());
}

/// The warm vectors of `project` as Redis holds them, by id (read through a tier of its
/// own, as another process would).
fn warm_vectors(profile: &Profile, dir: &std::path::Path, p: &str) -> Vec<(u64, Vec<u64>)> {
    let p = project(p);
    let owner = std::fs::read_to_string(dir.join("DEPLOYMENT")).unwrap();
    let tier = hypermem::store::RedisTier::open(
        profile.dim,
        profile.redis.as_ref().unwrap(),
        owner.trim(),
    )
    .unwrap();
    tier.ids(&p)
        .into_iter()
        .map(|id| (id.0, tier.get(&p, id).unwrap().unwrap().words().to_vec()))
        .collect()
}

#[test]
fn a_flushed_redis_is_detected_and_rebuilt_from_the_ledger_bit_identical() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let profile = standard(&server.url(), "flush");
    let m = Memory::open(&profile, Some(dir.path())).unwrap();
    m.observe_batch(&chatter("p", 0, 50)).unwrap();
    let before = warm_vectors(&profile, dir.path(), "p");
    assert_eq!(before.len(), 50);
    let mut c = redis_server::connect(&server.url());
    redis::cmd("FLUSHALL").query::<()>(&mut c).unwrap();
    // The next operation notices and rebuilds before it searches.
    let hits = m.recall(&project("p"), "module 17 build", 3).unwrap();
    assert!(hits[0].event.content.contains("module 17"), "{hits:?}");
    assert_eq!(warm_vectors(&profile, dir.path(), "p"), before);
    // A second flush noticed by a write: the write lands and the rest is rebuilt.
    redis::cmd("FLUSHALL").query::<()>(&mut c).unwrap();
    m.observe_batch(&chatter("p", 50, 5)).unwrap();
    let after = warm_vectors(&profile, dir.path(), "p");
    assert_eq!(after.len(), 55);
    assert_eq!(after[..50], before[..]);
}

#[test]
fn redis_killed_mid_run_is_a_named_error_and_nothing_acknowledged_is_lost() {
    let Some(mut server) = RedisServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let profile = standard(&server.url(), "kill");
    let m = Memory::open(&profile, Some(dir.path())).unwrap();
    let mut acknowledged = Vec::new();
    for round in 0..4 {
        acknowledged.extend(m.observe_batch(&chatter("p", round * 25, 25)).unwrap());
    }
    let before = warm_vectors(&profile, dir.path(), "p");
    server.kill();
    // Every operation that needs Redis fails with `unavailable` after the bounded retries.
    let batch = chatter("p", 100, 25);
    let err = m.observe_batch(&batch).unwrap_err();
    assert_eq!(err.reason(), "unavailable", "{err}");
    assert!(err.to_string().contains(&server.url()), "{err}");
    let err = m.recall(&project("p"), "module 3", 3).unwrap_err();
    assert_eq!(err.reason(), "unavailable", "{err}");
    // Redis comes back empty (no persistence): the same process recovers without a
    // restart, rebuilds what was acknowledged, and the failed batch retried by source id
    // completes.
    server.restart();
    let retried = m.observe_batch(&batch).unwrap();
    let mut after = warm_vectors(&profile, dir.path(), "p");
    assert_eq!(after.len(), 125);
    after.retain(|(id, _)| acknowledged.iter().any(|a| a.0 == *id));
    assert_eq!(after, before);
    let hits = m.recall(&project("p"), "module 110 build", 3).unwrap();
    assert!(
        hits.iter().any(|h| retried.contains(&h.event.id)),
        "{hits:?}"
    );
    assert_eq!(m.ledger().count(&project("p")).unwrap(), 125);
}

#[test]
fn a_thousand_keyed_observes_through_two_redis_restarts_store_each_once() {
    let Some(mut server) = RedisServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let profile = standard(&server.url(), "keyed");
    let m = Memory::open(&profile, Some(dir.path())).unwrap();
    let p = project("keyed");
    let mut acknowledged = std::collections::HashMap::new();
    let mut refused = 0;
    for i in 0..1_000 {
        if i == 300 || i == 650 {
            server.kill();
        }
        let mut e = user_says(
            "keyed",
            "s",
            &format!("keyed note {i} about the heron survey"),
        );
        e.source_id = Some(format!("k-{i}"));
        // A client that retries what it is told is retryable, the same request each time.
        let mut failures = 0;
        let id = loop {
            match m.observe(e.clone()) {
                Ok(id) => break id,
                Err(err) => {
                    assert!(err.class().retryable(), "{err}");
                    failures += 1;
                    refused += 1;
                    if failures == 2 {
                        server.restart();
                    }
                }
            }
        };
        assert!(
            acknowledged.insert(id, i).is_none(),
            "event {id} acknowledged twice"
        );
    }
    assert!(refused >= 4, "both outages were met ({refused} refusals)");
    assert_eq!(
        m.ledger().count(&p).unwrap(),
        1_000,
        "no observation stored twice"
    );
    assert_eq!(acknowledged.len(), 1_000);
    let hits = m.recall(&p, "keyed note 999 heron", 3).unwrap();
    assert_eq!(acknowledged[&hits[0].event.id], 999, "{hits:?}");
}

/// The `hypermem` binary (built with `standard`) on a profile file of its own.
fn cli(
    profile: &std::path::Path,
    dir: &std::path::Path,
    url: &str,
    args: &[&str],
) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hypermem"))
        .arg("--profile")
        .arg(profile)
        .arg("--data-dir")
        .arg(dir)
        .arg("--json")
        .args(args)
        .env("HYPERMEM_REDIS_URL", url)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn the_cli_runs_on_the_standard_profile_and_refuses_an_unreachable_redis() {
    let mut keep = None;
    let Some(url) = redis_server::shared(&mut keep) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let prefix = redis_server::unique_prefix("cli");
    let text = std::fs::read_to_string(Profile::bundled_path(ProfileKind::Standard)).unwrap();
    let profile = tmp.path().join("standard.toml");
    std::fs::write(
        &profile,
        text.replace("prefix = \"hypermem\"", &format!("prefix = \"{prefix}\"")),
    )
    .unwrap();
    let data = tmp.path().join("data");
    let (code, out) = cli(&profile, &data, &url, &["init"]);
    assert_eq!(code, 0, "{out}");
    for line in [
        "Our on-call rotation changes every Monday at 9am.",
        "The coffee machine on floor 3 is broken again.",
    ] {
        let (code, out) = cli(
            &profile,
            &data,
            &url,
            &["observe", "--project", "ops", line],
        );
        assert_eq!(code, 0, "{out}");
    }
    let (code, out) = cli(
        &profile,
        &data,
        &url,
        &["recall", "--project", "ops", "when does on-call rotate?"],
    );
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(v.to_string().contains("on-call rotation"), "{v}");
    assert_eq!(
        redis_server::keys(&url, &prefix)
            .iter()
            .filter(|k| k.contains("{ops}"))
            .count(),
        6,
        "gen, vec, seq, chg, and the recall's accesses: acc, last"
    );
    let (code, out) = cli(&profile, &data, "redis://127.0.0.1:1", &["stats"]);
    assert_ne!(code, 0);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["error"]["reason"], "unavailable", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("redis://127.0.0.1:1"),
        "{v}"
    );
}
