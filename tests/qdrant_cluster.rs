//! The scale profile on a three-node Qdrant cluster (real servers in cluster mode on
//! loopback, `common/qdrant_server.rs`): the collection is created with the profile's
//! shards and replicas, the tier knows every node, and a node killed with SIGKILL while a
//! writer keeps observing loses nothing acknowledged, writes nothing twice, and leaves
//! recall answering; the node restarted catches up, and then another can die; then Redis
//! dies and comes back, and writes retried by their source ids go on.

mod common;

use common::qdrant_server::{QdrantServer, replicas_active};
use common::redis_server;
use common::{chatter, project, user_says};
use hypermem::ledger::EventId;
use hypermem::store::{QdrantTier, VectorId, VectorTier};
use hypermem::{Memory, Profile, QdrantSettings};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn cluster_profile(nodes: &[QdrantServer], collection: &str, redis: &str) -> Profile {
    let settings = QdrantSettings {
        url: nodes[0].url(),
        nodes: nodes[1..].iter().map(QdrantServer::url).collect(),
        collection: collection.to_owned(),
        // Every shard on every node; a write acknowledged by two of them.
        shard_number: 3,
        replication_factor: 3,
        write_consistency_factor: 2,
        retries: 4,
        retry_backoff: Duration::from_millis(100),
        connect_timeout: Duration::from_millis(500),
        ..QdrantSettings::default()
    };
    common::qdrant_server::scale_profile(settings, redis)
}

/// Waits until the node on REST port `port` reports every replica of `collection` active.
fn wait_for_replicas(port: u16, collection: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !replicas_active(port, collection) {
        assert!(
            Instant::now() < deadline,
            "the replicas of {collection} did not become active again"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Observes batches of 10 notes (numbered from `from`) until `stop`, each retried by its
/// source ids when it fails, as a client does; returns every acknowledged id and how many
/// attempts failed.
fn keep_writing(m: &Memory, from: usize, stop: &AtomicBool, done: &Mutex<Vec<EventId>>) -> usize {
    let mut failed = 0;
    let mut next = from;
    while !stop.load(Ordering::Relaxed) {
        let batch = chatter("p", next, 10);
        let mut tries = 0;
        let ids = loop {
            match m.observe_batch(&batch) {
                Ok(ids) => break ids,
                Err(e) => {
                    assert_eq!(e.reason(), "unavailable", "{e}");
                    eprintln!("a batch failed (it is retried): {e}");
                    failed += 1;
                    tries += 1;
                    assert!(tries < 20, "the cluster stayed unavailable: {e}");
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        };
        done.lock().unwrap().extend(ids);
        next += 10;
        // A steady client, not a flood: the test's checks stay short.
        std::thread::sleep(Duration::from_millis(5));
    }
    failed
}

#[test]
fn a_cluster_node_killed_mid_write_loses_nothing_and_recall_keeps_answering() {
    let Some(mut nodes) = QdrantServer::start_cluster(3) else {
        return;
    };
    // Redis of its own: it is killed too.
    let Some(mut redis) = redis_server::RedisServer::start() else {
        return;
    };
    let redis_url = redis.url();
    let collection = redis_server::unique_prefix("cluster");
    let profile = cluster_profile(&nodes, &collection, &redis_url);
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(&profile, Some(dir.path())).unwrap();
    // Created with the profile's layout: three shards, each on all three nodes.
    wait_for_replicas(nodes[1].http_port, &collection);
    let info = common::qdrant_server::get(
        nodes[1].http_port,
        &format!("/collections/{collection}/cluster"),
    )
    .unwrap();
    let info: serde_json::Value = serde_json::from_str(&info).unwrap();
    let shards = info["result"]["local_shards"].as_array().unwrap().len()
        + info["result"]["remote_shards"].as_array().unwrap().len();
    assert_eq!(shards, 9, "3 shards x 3 replicas: {info}");

    let fact = m
        .observe(user_says(
            "p",
            "s2",
            "Tamsin's ferret is called Wobbleton and sleeps in a sock drawer.",
        ))
        .unwrap();
    let done = Mutex::new(vec![fact]);
    let stop = AtomicBool::new(false);
    let failed = std::thread::scope(|s| {
        let writer = s.spawn(|| keep_writing(&m, 0, &stop, &done));
        let acknowledged = || done.lock().unwrap().len();
        let wait_for = |n: usize| {
            let deadline = Instant::now() + Duration::from_secs(60);
            while acknowledged() < n {
                assert!(Instant::now() < deadline, "the writer stalled at {n}");
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        wait_for(40);
        // The node requests go to dies mid-write; the writer carries on against the others,
        // and recall keeps answering.
        nodes[0].kill();
        let before = acknowledged();
        wait_for(before + 60);
        let hits = m
            .recall(&project("p"), "what is the ferret called?", 3)
            .unwrap();
        assert_eq!(hits[0].event.id, fact, "{hits:?}");
        // Back, it catches up from its peers; then another node dies.
        nodes[0].restart();
        wait_for_replicas(nodes[0].http_port, &collection);
        nodes[1].kill();
        let before = acknowledged();
        wait_for(before + 60);
        // Then Redis (the shared access board) dies and comes back empty: writes are
        // refused as unavailable while it is down, retried, and go on after.
        redis.kill();
        std::thread::sleep(Duration::from_millis(300));
        redis.restart();
        let before = acknowledged();
        wait_for(before + 30);
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap()
    });
    let acknowledged = done.into_inner().unwrap();
    eprintln!(
        "cluster: {} events acknowledged, {failed} attempts failed and retried",
        acknowledged.len()
    );
    // No duplicates: every batch retried by its source ids got the ids it had.
    let mut unique = acknowledged.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), acknowledged.len());
    // Nothing acknowledged is lost: Qdrant (read through the surviving nodes) holds every
    // vector, bit for bit, and no other.
    let mut survivors = profile.qdrant.clone().unwrap();
    survivors.url = nodes[2].url();
    survivors.nodes = vec![nodes[0].url()];
    let home = QdrantTier::open(profile.dim, &survivors).unwrap();
    assert_eq!(
        home.count(&project("p")).unwrap(),
        acknowledged.len() as u64
    );
    for id in &acknowledged {
        let stored = home.get(&project("p"), VectorId(id.0)).unwrap();
        assert!(stored.is_some(), "event {} lost", id.0);
        assert_eq!(
            stored,
            m.vectors().get(&project("p"), VectorId(id.0)).unwrap()
        );
    }
    let hits = m
        .recall(&project("p"), "the build of module 17", 3)
        .unwrap();
    assert!(hits[0].event.content.contains("module 17"), "{hits:?}");
    nodes[1].restart();
}
