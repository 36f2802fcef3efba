//! The scale profile end to end on a real Qdrant server (`common/qdrant_server.rs`) and a
//! real redis-server: `Memory` with Qdrant as the home of every vector observes, recalls,
//! packs and erases as on lite; projects sharing one collection never see each other;
//! Qdrant unreachable at open, killed mid-run or holding a collection of another shape is
//! a named error, and nothing acknowledged is lost across a restart.

mod common;
use common::all_of;

use common::qdrant_server::QdrantServer;
use common::redis_server;
use common::{chatter, project, user_says};
use hypermem::hdv::Dim;
use hypermem::store::{QdrantTier, VectorId, VectorTier};
use hypermem::{Memory, Profile, QdrantSettings};
use std::time::Duration;

const D: usize = 1024;

fn scale(qdrant: &str, collection: &str, redis: &str) -> Profile {
    let settings = QdrantSettings {
        url: qdrant.to_owned(),
        collection: collection.to_owned(),
        retries: 2,
        retry_backoff: Duration::from_millis(50),
        connect_timeout: Duration::from_millis(500),
        ..QdrantSettings::default()
    };
    let p = common::qdrant_server::scale_profile(settings, redis);
    assert_eq!(p.dim, Dim::new(D).unwrap());
    p
}

/// Qdrant and Redis for one test, or `None` (said loudly) without them.
fn services() -> Option<(QdrantServer, Option<redis_server::RedisServer>, String)> {
    let qdrant = QdrantServer::start()?;
    let mut keep = None;
    let redis = redis_server::shared(&mut keep)?;
    Some((qdrant, keep, redis))
}

/// The shared Qdrant and Redis (started here when the test script did not), for tests
/// that do not stop them.
fn shared_services() -> Option<(
    Option<QdrantServer>,
    Option<redis_server::RedisServer>,
    String,
    String,
)> {
    let mut qdrant = None;
    let qdrant_url = common::qdrant_server::shared(&mut qdrant)?;
    let mut redis = None;
    let redis_url = redis_server::shared(&mut redis)?;
    Some((qdrant, redis, qdrant_url, redis_url))
}

#[test]
fn observe_recall_pack_and_erase_on_the_scale_profile() {
    let Some((_qdrant, _redis, qdrant_url, redis_url)) = shared_services() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let profile = scale(&qdrant_url, &redis_server::unique_prefix("e2e"), &redis_url);
    let m = Memory::open(&profile, Some(dir.path())).unwrap();
    for p in ["alpha", "beta"] {
        m.observe_batch(&chatter(p, 0, 30)).unwrap();
    }
    let cat = m
        .observe(user_says(
            "alpha",
            "s2",
            "My cat is called Miso and she is allergic to fish.",
        ))
        .unwrap();
    // Every vector is in Qdrant: no local segment store on this profile.
    assert!(!dir.path().join("vectors").exists() && !dir.path().join("vectors-cold").exists());
    let home = QdrantTier::open(profile.dim, profile.qdrant.as_ref().unwrap()).unwrap();
    assert_eq!(home.count(&project("alpha")).unwrap(), 31);
    assert_eq!(home.count(&project("beta")).unwrap(), 30);
    let hits = m
        .recall(&project("alpha"), "what is the cat allergic to?", 5)
        .unwrap();
    assert_eq!(hits[0].event.id, cat, "{hits:?}");
    assert!(
        hits[0]
            .fused
            .breakdown
            .iter()
            .any(|b| b.signal.name() == "vector")
    );
    // Isolation inside one collection: beta's nearest to alpha's memory are beta's own.
    let v = m
        .vectors()
        .get(&project("alpha"), VectorId(cat.0))
        .unwrap()
        .unwrap();
    let beta = home
        .search(
            &project("beta"),
            &hypermem::store::SearchRequest::new(v.view(), 50),
        )
        .unwrap();
    assert_eq!(beta.len(), 30);
    assert!(all_of(beta.iter(), |h| h.distance > 0));
    let pack = m
        .recall_pack(&project("alpha"), "the cat's allergy", None, 400, None)
        .unwrap();
    assert!(pack.used <= pack.budget);
    assert!(pack.items.iter().any(|(_, text)| text.contains("Miso")));

    // Pulse places hot copies only (one durable home: nothing moves to a cold tier).
    let receipt = m.pulse_tick(&project("alpha")).unwrap();
    assert!(
        receipt
            .phases
            .iter()
            .any(|p| p.phase == "tiers" && p.produced.contains("0 moved to cold")),
        "{receipt:?}"
    );

    let erased = m.forget_project(&project("alpha")).unwrap();
    assert_eq!(erased.vectors, 31);
    assert_eq!(home.count(&project("alpha")).unwrap(), 0);
    assert_eq!(home.count(&project("beta")).unwrap(), 30);
    assert_eq!(home.projects(), vec![project("beta")]);
    assert_eq!(home.ids(&project("beta")).len(), 30);
    drop(m);
    // Reopened: everything acknowledged is still there, from Qdrant.
    let m = Memory::open(&profile, Some(dir.path())).unwrap();
    assert_eq!(m.vectors().len(&project("beta")), 30);
    assert!(
        m.recall(&project("beta"), "module 7 build", 3).unwrap()[0]
            .event
            .content
            .contains("module 7")
    );
}

#[test]
fn qdrant_killed_mid_run_is_a_named_error_and_nothing_acknowledged_is_lost() {
    let Some((mut qdrant, _redis, redis_url)) = services() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let profile = scale(&qdrant.url(), "kill", &redis_url);
    let m = Memory::open(&profile, Some(dir.path())).unwrap();
    let mut acknowledged = Vec::new();
    for round in 0..3 {
        acknowledged.extend(m.observe_batch(&chatter("p", round * 20, 20)).unwrap());
    }
    qdrant.kill();
    let batch = chatter("p", 60, 20);
    let err = m.observe_batch(&batch).unwrap_err();
    assert_eq!(err.reason(), "unavailable", "{err}");
    assert!(err.to_string().contains(&qdrant.url()), "{err}");
    let err = m.recall(&project("p"), "module 3", 3).unwrap_err();
    assert_eq!(err.reason(), "unavailable", "{err}");
    qdrant.restart();
    // The same process recovers; the failed batch retried by source id completes, and
    // every acknowledged vector survived the kill (Qdrant's WAL).
    m.observe_batch(&batch).unwrap();
    let home = QdrantTier::open(profile.dim, profile.qdrant.as_ref().unwrap()).unwrap();
    assert_eq!(home.count(&project("p")).unwrap(), 80);
    for id in &acknowledged {
        assert_eq!(
            home.get(&project("p"), VectorId(id.0)).unwrap(),
            m.vectors().get(&project("p"), VectorId(id.0)).unwrap()
        );
    }
    assert!(
        m.recall(&project("p"), "module 70 build", 3).unwrap()[0]
            .event
            .content
            .contains("module 70")
    );
}

#[test]
fn unreachable_qdrant_and_a_foreign_collection_are_refused_by_name() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let settings = QdrantSettings {
        url: url.clone(),
        retries: 1,
        retry_backoff: Duration::from_millis(10),
        connect_timeout: Duration::from_millis(300),
        ..QdrantSettings::default()
    };
    let err = QdrantTier::open(Dim::new(D).unwrap(), &settings).unwrap_err();
    assert!(
        matches!(err, hypermem::store::StoreError::Unavailable { .. }),
        "{err}"
    );
    assert!(err.to_string().contains(&url), "{err}");

    let Some((qdrant, _redis, qdrant_url, _)) = shared_services() else {
        return;
    };
    let ok = QdrantSettings {
        url: qdrant_url,
        collection: redis_server::unique_prefix("shape"),
        ..QdrantSettings::default()
    };
    QdrantTier::open(Dim::new(D).unwrap(), &ok).unwrap();
    // A first node that does not answer gives way to the next one listed, without error;
    // only when every node fails is the tier unavailable, naming them all.
    let failover = QdrantSettings {
        url: url.clone(),
        nodes: vec![ok.url.clone()],
        connect_timeout: Duration::from_millis(300),
        ..ok.clone()
    };
    let tier = QdrantTier::open(Dim::new(D).unwrap(), &failover).unwrap();
    assert_eq!(tier.count(&project("nobody")).unwrap(), 0);
    let all_dead = QdrantSettings {
        nodes: vec![url.replace("127.0.0.1", "127.0.0.2")],
        ..settings.clone()
    };
    let err = QdrantTier::open(Dim::new(D).unwrap(), &all_dead).unwrap_err();
    assert!(
        err.to_string().contains(&url) && err.to_string().contains("127.0.0.2"),
        "{err}"
    );
    let err = QdrantTier::open(Dim::new(2 * D).unwrap(), &ok).unwrap_err();
    assert!(
        err.to_string().contains("expected 2048 bits, found 1024"),
        "{err}"
    );
    // A collection someone else made with another distance (over REST, where the server
    // was started here).
    let http = match &qdrant {
        Some(q) => Some(format!("127.0.0.1:{}", q.http_port)),
        None => std::env::var("HYPERMEM_TEST_QDRANT_REST").ok(),
    };
    let Some(http) = http else {
        eprintln!(
            "!! SKIP (one case): HYPERMEM_TEST_QDRANT_URL is set without HYPERMEM_TEST_QDRANT_REST, so no foreign collection can be made"
        );
        return;
    };
    let body = r#"{"vectors":{"size":1024,"distance":"Cosine"}}"#;
    let request = format!(
        "PUT /collections/cosine HTTP/1.1\r\nHost: {http}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&http).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut reply = String::new();
        s.read_to_string(&mut reply).unwrap();
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    }
    let foreign = QdrantSettings {
        collection: "cosine".to_owned(),
        ..ok
    };
    let err = QdrantTier::open(Dim::new(D).unwrap(), &foreign).unwrap_err();
    assert!(err.to_string().contains("not created by hypermem"), "{err}");
}

#[test]
fn a_batch_retried_after_a_partial_write_completes_and_a_real_duplicate_is_refused() {
    let Some((_qdrant, _redis, qdrant_url, _)) = shared_services() else {
        return;
    };
    let settings = QdrantSettings {
        url: qdrant_url,
        collection: redis_server::unique_prefix("retry"),
        ..QdrantSettings::default()
    };
    let dim = Dim::new(D).unwrap();
    let tier = QdrantTier::open(dim, &settings).unwrap();
    let p = project("p");
    let vectors: Vec<_> = (0..600u64)
        .map(|i| common::vector_of(dim, "p", i))
        .collect();
    let items: Vec<_> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| (VectorId(i as u64), v.view()))
        .collect();
    // The first request of a 600-vector batch landed (a batch goes in requests of up to
    // 8 MB), then the call failed.
    tier.insert_batch(&p, &items[..256]).unwrap();
    // The retry of the whole batch completes.
    tier.insert_batch(&p, &items).unwrap();
    assert_eq!(tier.count(&p).unwrap(), 600);
    assert_eq!(
        tier.get(&p, VectorId(599)).unwrap().as_ref(),
        Some(&vectors[599])
    );
    // A stored id with another vector is a duplicate, and nothing of that batch lands.
    let other = common::vector_of(dim, "q", 7);
    let err = tier
        .insert_batch(
            &p,
            &[(VectorId(1_000), other.view()), (VectorId(7), other.view())],
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            hypermem::store::StoreError::DuplicateId {
                id: VectorId(7),
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(tier.count(&p).unwrap(), 600);
    assert_eq!(
        tier.get(&p, VectorId(7)).unwrap().as_ref(),
        Some(&vectors[7])
    );
}

/// Two nodes of one deployment (two processes' worth of `Memory`, each with its own data
/// directory) over one PostgreSQL ledger, one Qdrant collection and one Redis: either
/// serves any project, sees what the other wrote at its next read, answers the same
/// recall the same way, and sees the other's erasure.
/// Both nodes give the same answer to each of `questions`: the same items with the same
/// scores and similarities.
fn same_answers(a: &Memory, b: &Memory, p: &hypermem::store::ProjectId, questions: &[&str]) {
    for q in questions {
        let answer = |m: &Memory| -> Vec<_> {
            m.recall(p, q, 5)
                .unwrap()
                .iter()
                .map(|h| (h.event.id, h.fused.score.to_bits(), h.similarity))
                .collect()
        };
        assert_eq!(answer(a), answer(b), "{q}");
    }
}

#[test]
fn two_nodes_on_one_postgres_ledger_serve_any_project() {
    let Some(pg) = common::postgres_url("nodes sharing a PostgreSQL ledger are") else {
        return;
    };
    let Some((_qdrant, _redis, qdrant_url, redis_url)) = shared_services() else {
        return;
    };
    let mut profile = scale(
        &qdrant_url,
        &redis_server::unique_prefix("nodes"),
        &redis_url,
    );
    profile.ledger.url = Some(common::fresh_database(&pg, "two_nodes"));
    // The static model, when the shared folder has it: each node's semantic space follows
    // the vectors the other node stores with its events.
    let model =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/models/m2v-minilm-256");
    if model.join("model.safetensors").is_file() {
        profile.semantic.model = Some(model);
    } else {
        eprintln!(
            "!! SKIP (one part): {} is missing: the semantic spaces of two nodes are not tested",
            model.display()
        );
    }
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Memory::open(&profile, Some(dir_a.path())).unwrap();
    let b = Memory::open(&profile, Some(dir_b.path())).unwrap();
    let name = redis_server::unique_prefix("shared");
    let p = project(&name);
    assert!(
        !dir_a.path().join("ledger.db").exists(),
        "the ledger is on the server, not in the data directory"
    );

    a.observe_batch(&chatter(&name, 0, 20)).unwrap();
    // B never saw the project: its first read builds from the shared ledger.
    let hits = b.recall(&p, "module 7 build", 3).unwrap();
    assert!(hits[0].event.content.contains("module 7"), "{hits:?}");
    // Writes interleave on both nodes; each node's next read sees the other's.
    let cat = b
        .observe(user_says(
            &name,
            "s2",
            "The office cat is called Miso and she naps on the printer.",
        ))
        .unwrap();
    a.observe_batch(&chatter(&name, 20, 5)).unwrap();
    let kettle = b
        .observe(user_says(
            &name,
            "s3",
            "The kettle on the third floor is broken since Monday.",
        ))
        .unwrap();
    let hits = a.recall(&p, "where does the cat nap?", 3).unwrap();
    assert_eq!(hits[0].event.id, cat, "{hits:?}");
    if profile.semantic.model.is_some() {
        assert!(
            hits[0]
                .fused
                .breakdown
                .iter()
                .any(|b| b.signal.name() == "semantic"),
            "node A's semantic space holds what node B stored: {:?}",
            hits[0].fused.breakdown
        );
    }
    let hits = a.recall(&p, "is the kettle broken?", 3).unwrap();
    assert_eq!(hits[0].event.id, kettle, "{hits:?}");
    // The same question, the same answer, from either node: the same items with the same
    // scores. B loaded the project after A had stored most of it; every memory B indexed
    // can be read back by id there too (the relevance floor judges a query against a
    // sample of the project read by id), as on A.
    assert_eq!(a.vectors().len(&p), 27);
    assert_eq!(b.vectors().len(&p), 27, "B traces what A stored");
    same_answers(
        &a,
        &b,
        &p,
        &[
            "module 22 retries",
            "module 7 build",
            "the cat on the printer",
            "which floor kettle",
        ],
    );
    // A retry on the other node is the stored event, not a second one.
    let again = b.observe_batch(&chatter(&name, 20, 5)).unwrap();
    assert_eq!(a.ledger().count(&p).unwrap(), 27);
    assert_eq!(again.len(), 5);
    // An erasure on one node: the other's next read finds nothing of it.
    b.forget_project(&p).unwrap();
    assert!(a.recall(&p, "module 7 build", 3).unwrap().is_empty());
    assert_eq!(a.ledger().count(&p).unwrap(), 0);
}

/// Two nodes with a sentence model over one shared ledger: the vectors one node's
/// background worker embeds reach the other node's semantic space at its next read, with
/// no new event to bring them, even those older than what that space already held (it had
/// a later event embedded by its caller); both nodes then give the same answers, scores
/// included.
#[cfg(feature = "sentence")]
#[test]
fn a_node_takes_in_the_sentence_vectors_another_node_embedded() {
    let Some(pg) = common::postgres_url("nodes sharing a sentence model's vectors are") else {
        return;
    };
    let model =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/models/minilm-l6-v2");
    if !model.is_dir() {
        eprintln!(
            "!! SKIP: {} is missing: the sentence vectors two nodes share are not tested",
            model.display()
        );
        return;
    }
    let Some((_qdrant, _redis, qdrant_url, redis_url)) = shared_services() else {
        return;
    };
    let mut profile = scale(
        &qdrant_url,
        &redis_server::unique_prefix("late"),
        &redis_url,
    );
    profile.ledger.url = Some(common::fresh_database(&pg, "embedded_late"));
    profile.semantic.model = Some(model);
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Memory::open(&profile, Some(dir_a.path())).unwrap();
    let b = Memory::open(&profile, Some(dir_b.path())).unwrap();
    let name = redis_server::unique_prefix("late");
    let p = project(&name);

    // Queued for the model, not embedded: B loads the project and its space meanwhile.
    a.observe_batch(&chatter(&name, 0, 12)).unwrap();
    assert!(!b.recall(&p, "module 3 build", 3).unwrap().is_empty());
    // B stores a later event with the caller's own embedding (the model's 384 dimensions):
    // its space's newest is now past every queued event.
    let mut kettle = user_says(
        &name,
        "s2",
        "The kettle on the third floor is broken since Monday.",
    );
    kettle.embedding = Some((0..384).map(|i| ((i * 37 % 11) as f32) - 5.0).collect());
    b.observe(kettle).unwrap();
    // A's worker embeds the queue: the older events.
    let done = a.embed_pending(Some(&p), 100, None).unwrap();
    assert_eq!((done.embedded, done.left), (12, 0));
    same_answers(
        &a,
        &b,
        &p,
        &[
            "which module needed 7 retries",
            "module 3 build",
            "broken kettle",
        ],
    );
    let hits = b.recall(&p, "which module needed 7 retries", 3).unwrap();
    assert!(
        hits[0]
            .fused
            .breakdown
            .iter()
            .any(|part| part.signal.name() == "semantic"),
        "node B's space holds what node A's worker embedded: {:?}",
        hits[0].fused.breakdown
    );
}
