//! Past one machine, through the binary: three `hypermem serve` nodes (each with its own
//! data directory) over one PostgreSQL ledger, a three-node Qdrant cluster and one Redis,
//! all real servers on loopback. Clients spread keyed writes and recalls over the nodes
//! and retry a refused or unanswered write on the next node with the same source id. One
//! hypermem node is killed with SIGKILL and restarted, then one Qdrant node, then Redis.
//! Asserted: no acknowledged write is lost (the ledger and Qdrant hold every one), none is
//! stored twice, and after catching up every node gives the same recall, scores included.
//!
//! Needs the PostgreSQL server the test command starts (`HYPERMEM_TEST_POSTGRES_URL`),
//! the Qdrant binary and `redis-server`; without one it says loudly that it skips (a
//! failure under `HYPERMEM_REQUIRE_POSTGRES=1`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::qdrant_server::{QdrantServer, replicas_active};
use common::redis_server;
use common::serve::{Server, post, reason, try_post};
use hypermem::ledger::{EventId, Ledger, LedgerConfig};
use hypermem::store::QdrantTier;
use serde_json::{Value, json};

/// Writing clients, each its own source ids.
const CLIENTS: usize = 2;

/// A scale profile for every node: the cluster, Redis, the ledger on PostgreSQL.
fn profile_file(dir: &Path, nodes: &[QdrantServer], redis: &str, pg: &str, name: &str) -> PathBuf {
    let others: Vec<String> = nodes[1..]
        .iter()
        .map(|n| format!("{:?}", n.url()))
        .collect();
    let text = format!(
        r#"[profile]
name = "scale"
data_dir = "./unused"

[vectors]
dim = 1024

[store]
prefix_bits = 512

[qdrant]
url = {first:?}
nodes = [{others}]
collection = {name:?}
shard_number = 3
replication_factor = 3
write_consistency_factor = 2
retries = 4
retry_backoff_ms = 100
connect_timeout_ms = 500

[redis]
url = {redis:?}
prefix = {name:?}

[ledger]
url = {pg:?}
"#,
        first = nodes[0].url(),
        others = others.join(", "),
    );
    let path = dir.join("scale.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The nodes' addresses, as clients know them (a restarted node answers on a new port).
struct Cluster {
    urls: Mutex<Vec<String>>,
}

impl Cluster {
    fn url(&self, node: usize) -> String {
        self.urls.lock().unwrap()[node % 3].clone()
    }
}

/// Writes keyed notes of client `c` until `stop`, node after node; a write refused or
/// unanswered goes to the next node with the same source id. Every acknowledgement is
/// recorded as (source id, event id).
fn client(
    c: usize,
    cluster: &Cluster,
    project: &str,
    stop: &AtomicBool,
    acked: &Mutex<Vec<(String, u64)>>,
) -> usize {
    let mut retried = 0;
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        let key = format!("c{c}-{i}");
        let body = json!({
            "text": format!("client {c} note {i}: the nightly build of module {i} took {} minutes", i % 50 + 3),
            "thread": format!("client-{c}"),
            "source_id": key,
        })
        .to_string();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut node = c + i;
        let id = loop {
            let url = format!("{}/v1/projects/{project}/observe", cluster.url(node));
            match try_post(&url, &body) {
                Some((200, v)) => break v["event_id"].as_u64().unwrap(),
                Some((status, v)) => {
                    assert!(
                        status >= 500
                            && ["unavailable", "ledger_busy", "timeout"].contains(&reason(&v)),
                        "a write was refused for another reason: {status} {v}"
                    );
                }
                // The node is down (connection refused or cut).
                None => {}
            }
            retried += 1;
            assert!(Instant::now() < deadline, "no node took {key} for 60 s");
            node += 1;
            std::thread::sleep(Duration::from_millis(50));
        };
        acked.lock().unwrap().push((key, id));
        i += 1;
        std::thread::sleep(Duration::from_millis(5));
    }
    retried
}

/// The items of a recall on `url`, once its node has seen `at_least`.
fn recall_items(url: &str, project: &str, query: &str, at_least: u64) -> Vec<Value> {
    let (status, v) = post(
        &format!("{url}/v1/projects/{project}/recall"),
        None,
        &json!({"query": query, "k": 5, "at_least": at_least, "wait_ms": 30_000}).to_string(),
    );
    assert_eq!(status, 200, "{v}");
    v["items"].as_array().unwrap().clone()
}

/// The ids of recall items.
fn ids_of(items: &[Value]) -> Vec<u64> {
    items
        .iter()
        .map(|i| i["event"]["id"].as_u64().unwrap())
        .collect()
}

/// One line per item: its id, its fused score and each source's share, its similarity,
/// its text (what tells two nodes' answers apart when they differ).
fn explained(items: &[Value]) -> String {
    items
        .iter()
        .map(|i| {
            format!(
                "  {} fused={} similarity={} text={}",
                i["event"]["id"], i["fused"], i["similarity"], i["event"]["content"]
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn wait_for_replicas(port: u16, collection: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !replicas_active(port, collection) {
        assert!(
            Instant::now() < deadline,
            "the replicas of {collection} stayed inactive"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn three_nodes_lose_nothing_when_a_node_qdrant_and_redis_fail() {
    let Some(pg) = common::postgres_url("the multi-node fault test is") else {
        return;
    };
    let pg = common::fresh_database(&pg, "nodes");
    let Some(mut qdrant) = QdrantServer::start_cluster(3) else {
        return;
    };
    let Some(mut redis) = redis_server::RedisServer::start() else {
        return;
    };
    let name = redis_server::unique_prefix("nodes");
    let project = name.clone();
    let dir = tempfile::tempdir().unwrap();
    let profile = profile_file(dir.path(), &qdrant, &redis.url(), &pg, &name);
    let profile_arg = profile.to_str().unwrap().to_owned();
    let data = |n: usize| dir.path().join(format!("node{n}"));
    let start = |n: usize| Server::start(&data(n), &["--profile", &profile_arg]);
    // `--profile` is global; it may follow the subcommand.
    let mut servers: Vec<Server> = (0..3).map(start).collect();
    let cluster = Cluster {
        urls: Mutex::new(servers.iter().map(|s| s.url.clone()).collect()),
    };
    wait_for_replicas(qdrant[1].http_port, &name);

    let acked: Mutex<Vec<(String, u64)>> = Mutex::new(Vec::new());
    let stop = AtomicBool::new(false);
    let retried = std::thread::scope(|s| {
        let writers: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (cluster, project, stop, acked) = (&cluster, &project, &stop, &acked);
                s.spawn(move || client(c, cluster, project, stop, acked))
            })
            .collect();
        let count = || acked.lock().unwrap().len();
        let wait_for = |n: usize| {
            let deadline = Instant::now() + Duration::from_secs(90);
            while count() < n {
                assert!(Instant::now() < deadline, "the clients stalled at {n}");
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        wait_for(30);
        // A hypermem node dies without warning, and comes back on its data directory.
        servers[0].signal("-KILL");
        wait_for(count() + 30);
        servers[0] = start(0);
        cluster.urls.lock().unwrap()[0] = servers[0].url.clone();
        wait_for(count() + 30);
        // A Qdrant node dies, the others carry the writes; back, it catches up.
        qdrant[1].kill();
        wait_for(count() + 30);
        qdrant[1].restart();
        wait_for_replicas(qdrant[1].http_port, &name);
        // Redis dies and comes back empty.
        redis.kill();
        std::thread::sleep(Duration::from_millis(300));
        redis.restart();
        wait_for(count() + 20);
        stop.store(true, Ordering::Relaxed);
        writers
            .into_iter()
            .map(|w| w.join().unwrap())
            .sum::<usize>()
    });
    let acked = acked.into_inner().unwrap();
    eprintln!(
        "nodes: {} writes acknowledged over 3 nodes, {retried} attempts refused or unanswered and retried",
        acked.len()
    );

    // No write twice: each source id has one event, each event one source id.
    let by_key: BTreeMap<&str, u64> = acked.iter().map(|(k, id)| (k.as_str(), *id)).collect();
    let ids: BTreeSet<u64> = acked.iter().map(|(_, id)| *id).collect();
    assert_eq!(by_key.len(), acked.len(), "a source id acknowledged twice");
    assert_eq!(ids.len(), acked.len(), "one event for two source ids");
    // Nothing acknowledged is lost: the ledger holds every one, under its key, and no
    // other; Qdrant holds every vector.
    let ledger = Ledger::connect(&pg, LedgerConfig::default()).unwrap();
    let p = common::project(&project);
    assert_eq!(ledger.count(&p).unwrap(), acked.len() as u64);
    for (key, id) in &acked {
        let e = ledger
            .get(&p, EventId(*id))
            .unwrap()
            .expect("an acknowledged event");
        assert_eq!(e.source_id.as_deref(), Some(key.as_str()));
    }
    let mut settings = hypermem::Profile::load(&profile).unwrap().qdrant.unwrap();
    settings.url = qdrant[2].url();
    settings.nodes = vec![qdrant[0].url()];
    let home = QdrantTier::open(hypermem::hdv::Dim::new(1024).unwrap(), &settings).unwrap();
    assert_eq!(home.count(&p).unwrap(), acked.len() as u64);

    // After catching up, the same question gets the same answer from every node.
    let newest = *ids.last().unwrap();
    for query in [
        "module 7 nightly build",
        "client 1 note 12",
        "how many minutes did module 30 take",
    ] {
        let items: Vec<Vec<Value>> = (0..3)
            .map(|n| recall_items(&cluster.url(n), &project, query, newest))
            .collect();
        let answers: Vec<Vec<u64>> = items.iter().map(|i| ids_of(i)).collect();
        assert!(!answers[0].is_empty(), "{query}");
        // The same items with the same scores and similarities (JSON numbers print
        // exactly), not only the same ids.
        let scored = |i: &[Value]| -> Vec<String> {
            i.iter()
                .map(|i| format!("{} {} {}", i["event"]["id"], i["fused"], i["similarity"]))
                .collect()
        };
        if items.iter().any(|i| scored(i) != scored(&items[0])) {
            for (n, i) in items.iter().enumerate() {
                eprintln!("node {n} answers {query:?}:\n{}", explained(i));
            }
            panic!("{query}: {answers:?}");
        }
    }
    drop(servers);
    drop(qdrant);
}

/// `hypermem migrate` on a profile whose ledger is on PostgreSQL: a dry run reports what is
/// pending and applies nothing; a migration applies it once; a second reports nothing.
#[test]
fn migrate_reports_and_applies_the_postgres_schema_through_the_binary() {
    let Some(pg) = common::postgres_url("`migrate` on PostgreSQL is") else {
        return;
    };
    let pg = common::fresh_database(&pg, "migrate");
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("scale.toml");
    std::fs::write(
        &profile,
        format!(
            "[profile]\nname = \"scale\"\ndata_dir = \"./unused\"\n[vectors]\ndim = 1024\n[store]\nprefix_bits = 512\n[ledger]\nurl = {pg:?}\n"
        ),
    )
    .unwrap();
    let run = |args: &[&str]| -> Value {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hypermem"))
            .arg("--profile")
            .arg(&profile)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(["--create", "--json", "migrate"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let dry = run(&["--dry-run"]);
    assert_eq!(
        (dry["from"].as_u64(), dry["to"].as_u64()),
        (Some(0), Some(0)),
        "{dry}"
    );
    assert_eq!(dry["migrations"].as_array().unwrap().len(), 4, "{dry}");
    let again = run(&["--dry-run"]);
    assert_eq!(
        again["from"].as_u64(),
        Some(0),
        "a dry run applied nothing: {again}"
    );
    let applied = run(&[]);
    assert_eq!(
        (applied["from"].as_u64(), applied["to"].as_u64()),
        (Some(0), Some(4)),
        "{applied}"
    );
    let after = run(&[]);
    assert_eq!(
        (after["from"].as_u64(), after["to"].as_u64()),
        (Some(4), Some(4)),
        "{after}"
    );
    assert!(
        after["migrations"].as_array().unwrap().is_empty(),
        "{after}"
    );
    assert!(
        !dir.path().join("data/ledger.db").exists(),
        "no SQLite ledger beside a PostgreSQL one"
    );
}
