//! One contract, every vector tier: the RAM hot tier and the mmap segment store (Redis and
//! Qdrant tiers must pass the same suite when they arrive).

mod common;
use common::all_of;

use common::{brute_force, project, vector_of};
use hypermem::hdv::{Dim, Hypervector};
use hypermem::store::{
    HotTier, SearchRequest, SegmentStore, SegmentStoreConfig, StoreError, VectorId, VectorTier,
};

const D: usize = 512;

fn dim() -> Dim {
    Dim::new(D).unwrap()
}

fn contract(tier: &dyn VectorTier) {
    let (a, b) = (project("alpha"), project("beta"));
    assert_eq!(tier.dim(), dim());
    assert!(tier.is_empty(&a));
    let q = vector_of(dim(), "alpha", 3);
    assert!(
        tier.search(&a, &SearchRequest::new(q.view(), 5))
            .unwrap()
            .is_empty()
    );

    // Insert 300 vectors into alpha (in batches) and 50 into beta.
    let alpha: Vec<(VectorId, Hypervector)> = (0..300u64)
        .map(|i| (VectorId(i * 3 + 1), vector_of(dim(), "alpha", i * 3 + 1)))
        .collect();
    for chunk in alpha.chunks(64) {
        let batch: Vec<_> = chunk.iter().map(|(id, v)| (*id, v.view())).collect();
        tier.insert_batch(&a, &batch).unwrap();
    }
    for i in 0..50u64 {
        tier.insert(
            &b,
            VectorId(i * 3 + 1),
            vector_of(dim(), "beta", i * 3 + 1).view(),
        )
        .unwrap();
    }
    assert_eq!(tier.len(&a), 300);
    assert_eq!(tier.len(&b), 50);
    assert_eq!(tier.projects(), vec![a.clone(), b.clone()]);
    let mut want_ids: Vec<VectorId> = alpha.iter().map(|(id, _)| *id).collect();
    want_ids.sort();
    assert_eq!(tier.ids(&a), want_ids);

    // Get is bit-identical; unknown ids and projects are None.
    for (id, v) in alpha.iter().step_by(37) {
        assert_eq!(tier.get(&a, *id).unwrap().as_ref(), Some(v));
    }
    assert_eq!(tier.get(&a, VectorId(2)).unwrap(), None);
    assert_eq!(tier.get(&project("nobody"), VectorId(1)).unwrap(), None);
    // A read of many is what a read of each gives, in the order asked.
    let asked: Vec<VectorId> = alpha
        .iter()
        .step_by(37)
        .map(|(id, _)| *id)
        .rev()
        .chain([VectorId(2), alpha[0].0])
        .collect();
    let each: Vec<Option<Hypervector>> =
        asked.iter().map(|&id| tier.get(&a, id).unwrap()).collect();
    assert_eq!(tier.get_many(&a, &asked).unwrap(), each);
    assert!(each.iter().filter(|v| v.is_none()).count() == 1);
    assert!(tier.get_many(&a, &[]).unwrap().is_empty());
    assert_eq!(
        tier.get_many(&project("nobody"), &[VectorId(1)]).unwrap(),
        vec![None]
    );

    // Bad input writes nothing.
    let dup = tier.insert_batch(
        &a,
        &[(VectorId(100_000), q.view()), (VectorId(1), q.view())],
    );
    assert!(
        matches!(
            dup,
            Err(StoreError::DuplicateId {
                id: VectorId(1),
                ..
            })
        ),
        "{dup:?}"
    );
    let in_batch = tier.insert_batch(
        &a,
        &[(VectorId(100_001), q.view()), (VectorId(100_001), q.view())],
    );
    assert!(matches!(in_batch, Err(StoreError::DuplicateId { .. })));
    let wrong = Hypervector::random(Dim::new(D + 64).unwrap(), 1);
    let err = tier
        .insert(&a, VectorId(100_002), wrong.view())
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("expected 512 bits, found 576 bits"),
        "{err}"
    );
    assert_eq!(tier.len(&a), 300);
    assert_eq!(tier.get(&a, VectorId(100_000)).unwrap(), None);

    // Exact top-k equals brute force, within the project only.
    for qi in [0u64, 7, 123] {
        let query = vector_of(dim(), "alpha", qi * 3 + 1)
            .with_noise(0.2, qi)
            .unwrap();
        let got = tier
            .search(&a, &SearchRequest::new(query.view(), 10))
            .unwrap();
        assert_eq!(got, brute_force(&alpha, &query, 10), "query {qi}");
        assert_eq!(got[0].id, VectorId(qi * 3 + 1));
        // The same ids exist in beta with other vectors: never returned for alpha.
        let beta_hits = tier
            .search(&b, &SearchRequest::new(query.view(), 10))
            .unwrap();
        assert!(all_of(beta_hits.iter(), |h| h.id.0 <= 150), "beta ids only");
        assert_ne!(beta_hits[0].distance, 0);
    }
    let err = tier
        .search(&a, &SearchRequest::new(wrong.view(), 3))
        .unwrap_err();
    assert!(matches!(err, StoreError::DimensionMismatch { .. }));

    // Filters: max distance and id predicate.
    let exact = alpha[10].1.clone();
    let mut req = SearchRequest::new(exact.view(), 10);
    req.max_distance = Some(100);
    assert_eq!(
        tier.search(&a, &req).unwrap(),
        vec![hypermem::store::Hit {
            id: alpha[10].0,
            distance: 0
        }]
    );
    let odd = |id: VectorId| id.0 % 2 == 1;
    let mut req = SearchRequest::new(exact.view(), 20);
    req.filter = Some(&odd);
    let hits = tier.search(&a, &req).unwrap();
    assert_eq!(hits.len(), 20);
    assert!(all_of(hits.iter(), |h| h.id.0 % 2 == 1));

    // Delete: gone from get, search, len, ids; deleting twice reports false.
    let victim = alpha[10].0;
    assert!(tier.delete(&a, victim).unwrap());
    assert!(!tier.delete(&a, victim).unwrap());
    assert_eq!(tier.get(&a, victim).unwrap(), None);
    assert_eq!(tier.len(&a), 299);
    let hits = tier
        .search(&a, &SearchRequest::new(exact.view(), 5))
        .unwrap();
    assert!(all_of(hits.iter(), |h| h.id != victim));
    // A batch deletion counts what was present and removes every one of them.
    let batch = [alpha[20].0, alpha[21].0, victim, alpha[250].0];
    assert_eq!(tier.delete_batch(&a, &batch).unwrap(), 3);
    assert_eq!(tier.len(&a), 296);
    for id in batch {
        assert_eq!(tier.get(&a, id).unwrap(), None);
    }
    for i in [20, 21, 250] {
        tier.insert(&a, alpha[i].0, alpha[i].1.view()).unwrap();
    }
    assert_eq!(tier.len(&a), 299);
    // Re-inserting a deleted id is allowed.
    tier.insert(&a, victim, exact.view()).unwrap();
    assert_eq!(
        tier.search(&a, &SearchRequest::new(exact.view(), 1))
            .unwrap()[0]
            .id,
        victim
    );

    // Dropping a project removes it entirely and leaves the other intact.
    assert_eq!(tier.drop_project(&b).unwrap(), 50);
    assert_eq!(tier.len(&b), 0);
    assert_eq!(tier.projects(), vec![a.clone()]);
    assert!(
        tier.search(&b, &SearchRequest::new(q.view(), 5))
            .unwrap()
            .is_empty()
    );
    assert_eq!(tier.len(&a), 300);
    tier.flush().unwrap();
}

#[test]
fn hot_tier_meets_the_contract() {
    contract(&HotTier::new(dim(), 10_000));
}

#[test]
fn hot_tier_refuses_past_capacity() {
    let hot = HotTier::new(dim(), 2);
    let p = project("p");
    let v = vector_of(dim(), "p", 1);
    hot.insert_batch(&p, &[(VectorId(1), v.view()), (VectorId(2), v.view())])
        .unwrap();
    let err = hot.insert(&p, VectorId(3), v.view()).unwrap_err();
    assert!(matches!(err, StoreError::Full { capacity: 2, .. }), "{err}");
    assert_eq!(hot.len(&p), 2);
}

#[test]
fn segment_store_meets_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    // Small segments so the suite crosses segment boundaries.
    let config = SegmentStoreConfig {
        segment_capacity: 64,
        ..SegmentStoreConfig::default()
    };
    let store = SegmentStore::create(dir.path().join("store"), dim(), config).unwrap();
    contract(&store);
}

#[cfg(feature = "standard")]
#[test]
fn redis_tier_meets_the_contract() {
    use common::redis_server;
    use hypermem::store::RedisTier;
    let mut server = None;
    let Some(url) = redis_server::shared(&mut server) else {
        return;
    };
    let settings = hypermem::RedisSettings {
        url,
        prefix: redis_server::unique_prefix("contract"),
        ..hypermem::RedisSettings::default()
    };
    let tier = RedisTier::open(dim(), &settings, "contract-test").unwrap();
    contract(&tier);
    // Two processes' view: a second tier on the same keys sees the same state, and a write
    // of one reaches the other's next search.
    let other = RedisTier::open(dim(), &settings, "contract-test").unwrap();
    let a = project("alpha");
    assert_eq!(other.len(&a), 300);
    let q = vector_of(dim(), "alpha", 999_999);
    assert!(
        other
            .search(&a, &SearchRequest::new(q.view(), 1))
            .unwrap()
            .first()
            .is_some_and(|h| h.distance > 0)
    );
    tier.insert(&a, VectorId(999_999), q.view()).unwrap();
    std::thread::sleep(settings.refresh);
    let hit = other.search(&a, &SearchRequest::new(q.view(), 1)).unwrap()[0];
    assert_eq!((hit.id, hit.distance), (VectorId(999_999), 0));
    assert!(tier.delete(&a, VectorId(999_999)).unwrap());
    std::thread::sleep(settings.refresh);
    let hit = other.search(&a, &SearchRequest::new(q.view(), 1)).unwrap()[0];
    assert_ne!(hit.id, VectorId(999_999));
    // Another ledger may not write under the same prefix.
    let err = RedisTier::open(dim(), &settings, "another-ledger").unwrap_err();
    assert!(err.to_string().contains("another data directory"), "{err}");
    // Another dimension is refused.
    let err = RedisTier::open(Dim::new(D * 2).unwrap(), &settings, "contract-test").unwrap_err();
    assert!(matches!(err, StoreError::DimensionMismatch { .. }), "{err}");
}

#[cfg(feature = "scale")]
#[test]
fn qdrant_tier_meets_the_contract() {
    use common::qdrant_server;
    use hypermem::store::QdrantTier;
    let mut server = None;
    let Some(url) = qdrant_server::shared(&mut server) else {
        return;
    };
    let settings = hypermem::QdrantSettings {
        url,
        collection: format!("contract-{}", std::process::id()),
        ..hypermem::QdrantSettings::default()
    };
    let tier = QdrantTier::open(dim(), &settings).unwrap();
    contract(&tier);
    // Reopening finds the collection; another dimension is refused, never re-created.
    assert_eq!(
        QdrantTier::open(dim(), &settings)
            .unwrap()
            .len(&common::project("alpha")),
        300
    );
    let err = QdrantTier::open(Dim::new(D * 2).unwrap(), &settings).unwrap_err();
    assert!(matches!(err, StoreError::DimensionMismatch { .. }), "{err}");
    // Indexing only the first 64 bits: candidates from Qdrant, re-ranked exactly on the
    // full vectors (enough candidates that the result must equal brute force).
    let prefix = hypermem::QdrantSettings {
        collection: format!("contract-prefix-{}", std::process::id()),
        index_bits: 64,
        oversample: 1_000,
        ..settings
    };
    let tier = QdrantTier::open(dim(), &prefix).unwrap();
    assert_eq!(tier.index_bits(), 64);
    contract(&tier);
}
