//! HNSW over bit-level Hamming distance: recall@10 against exact search on clustered data
//! (fixed seeds), deletions filtered, save and mmap reload, damaged files, project isolation.

mod common;
use common::all_of;
use hypermem::Reason;

use common::project;
use hypermem::hdv::{Block, Dim, HvRef, Hypervector, Scan};
use hypermem::index::{Hnsw, HnswConfig};
use hypermem::store::{SearchRequest, SegmentStore, SegmentStoreConfig, VectorId, VectorTier};

const D: usize = 1024;

fn dim() -> Dim {
    Dim::new(D).unwrap()
}

/// `n` points around `clusters` random centres (each point flips 15 % of its centre's bits)
/// and `nq` queries drawn the same way.
fn clustered(
    n: usize,
    nq: usize,
    clusters: u64,
    seed: u64,
) -> (Vec<Hypervector>, Vec<Hypervector>) {
    let centres: Vec<_> = (0..clusters)
        .map(|c| Hypervector::random(dim(), seed * 1000 + c))
        .collect();
    let point = |i: usize, salt: u64| {
        centres[i % clusters as usize]
            .with_noise(0.15, seed ^ (salt << 32) ^ i as u64)
            .unwrap()
    };
    (
        (0..n).map(|i| point(i, 1)).collect(),
        (0..nq).map(|i| point(i * 7 + 3, 2)).collect(),
    )
}

/// recall@10 with ties counted: an approximate hit is correct when it is no farther than
/// the exact 10th neighbour (several vectors can share that distance).
fn recall_at_10(index: &Hnsw, data: &[Hypervector], queries: &[Hypervector]) -> f64 {
    let words: Vec<u64> = data.iter().flat_map(|v| v.words().to_vec()).collect();
    let block = Block::new(&words, dim()).unwrap();
    let mut found = 0;
    for q in queries {
        let tenth = Scan::new(10).top_k(&block, q).unwrap()[9].distance;
        let approx = index.search(&SearchRequest::new(q.view(), 10)).unwrap();
        found += approx.iter().filter(|h| h.distance <= tenth).count();
    }
    found as f64 / (10 * queries.len()) as f64
}

fn build(data: &[Hypervector], config: HnswConfig) -> Hnsw {
    let items = numbered(data, 0);
    Hnsw::build(dim(), config, &items).unwrap()
}

/// `data` as store items, ids `first, first + 1, …`.
fn numbered(data: &[Hypervector], first: u64) -> Vec<(VectorId, HvRef<'_>)> {
    data.iter()
        .enumerate()
        .map(|(i, v)| (VectorId(first + i as u64), v.view()))
        .collect()
}

#[test]
fn recall_at_10_on_clustered_data_is_high() {
    let (data, queries) = clustered(4000, 100, 40, 1);
    let config = HnswConfig {
        m: 16,
        ef_construction: 128,
        ef_search: 128,
        max_elements: 4000,
        ..HnswConfig::default()
    };
    let index = build(&data, config);
    assert_eq!(index.points(), 4000);
    let recall = recall_at_10(&index, &data, &queries);
    eprintln!("recall@10 = {recall:.3}");
    assert!(recall >= 0.95, "recall@10 {recall}");
    // Distances are bit-level Hamming distances.
    let hit = index
        .search(&SearchRequest::new(data[17].view(), 1))
        .unwrap()[0];
    assert_eq!((hit.id, hit.distance), (VectorId(17), 0));
    let other = index
        .search(&SearchRequest::new(queries[0].view(), 1))
        .unwrap()[0];
    assert_eq!(
        other.distance,
        data[other.id.0 as usize].hamming(&queries[0])
    );
}

#[test]
fn screening_on_a_prefix_keeps_the_answers_and_their_whole_distances() {
    // 4,096 bits, 40 clusters: a query's neighbours are its cluster (about 0.26 D away)
    // and the rest of the graph (about D / 2), which a 1,024-bit prefix screens out.
    let dim = Dim::new(4096).unwrap();
    let centres: Vec<_> = (0..40u64)
        .map(|c| Hypervector::random(dim, 900 + c))
        .collect();
    let point = |i: usize, salt: u64| {
        let noise = 0.10 + 0.05 * (i % 3) as f64;
        centres[i % 40]
            .with_noise(noise, (salt << 32) ^ i as u64)
            .unwrap()
    };
    let data: Vec<_> = (0..3000).map(|i| point(i, 1)).collect();
    let queries: Vec<_> = (0..60).map(|i| point(i * 7 + 3, 2)).collect();
    let items = numbered(&data, 0);
    let config = |screen_bits| HnswConfig {
        m: 16,
        ef_construction: 64,
        ef_search: 32,
        max_elements: 3000,
        screen_bits,
    };
    let screened = Hnsw::build(dim, config(1024), &items).unwrap();
    let whole = Hnsw::build(dim, config(0), &items).unwrap();
    let mut same = 0;
    for q in &queries {
        let a = screened.search(&SearchRequest::new(q.view(), 10)).unwrap();
        let b = whole.search(&SearchRequest::new(q.view(), 10)).unwrap();
        assert_eq!(a.len(), 10);
        for h in &a {
            assert_eq!(
                h.distance,
                data[h.id.0 as usize].hamming(q),
                "whole distances"
            );
        }
        same += usize::from(a == b);
    }
    // The screen drops a node that belongs in the list about once in 30,000 comparisons.
    assert!(
        same >= 58,
        "{same} of 60 queries answered as without the screen"
    );
    let odd = HnswConfig {
        screen_bits: 100,
        ..HnswConfig::default()
    };
    assert!(matches!(
        Hnsw::new(dim, odd),
        Err(hypermem::index::HnswError::Config(_))
    ));
    let dir = tempfile::tempdir().unwrap();
    screened.save(dir.path()).unwrap();
    assert!(matches!(
        Hnsw::load(dir.path(), dim, 32, 100),
        Err(hypermem::index::HnswError::Config(_))
    ));
    let reloaded = Hnsw::load(dir.path(), dim, 32, 1024).unwrap();
    let q = queries[0].view();
    assert_eq!(
        reloaded.search(&SearchRequest::new(q, 10)).unwrap(),
        screened.search(&SearchRequest::new(q, 10)).unwrap()
    );
}

#[test]
fn deleted_ids_are_filtered_and_filters_apply() {
    let (data, _) = clustered(500, 0, 5, 2);
    let index = build(&data, HnswConfig::default());
    index.delete(VectorId(42));
    let hits = index
        .search(&SearchRequest::new(data[42].view(), 5))
        .unwrap();
    assert_eq!(hits.len(), 5);
    assert!(all_of(hits.iter(), |h| h.id != VectorId(42)));
    let even = |id: VectorId| id.0.is_multiple_of(2);
    let mut req = SearchRequest::new(data[43].view(), 5);
    req.filter = Some(&even);
    assert!(all_of(index.search(&req).unwrap().iter(), |h| h.id.0 % 2 == 0));
    let wrong = Hypervector::random(Dim::new(2048).unwrap(), 1);
    assert!(index.search(&SearchRequest::new(wrong.view(), 1)).is_err());
}

#[test]
fn save_and_reload_answers_identically_without_rebuilding() {
    let dir = tempfile::tempdir().unwrap();
    let (data, queries) = clustered(1500, 30, 15, 3);
    let index = build(&data, HnswConfig::default());
    index.delete(VectorId(7));
    index.save(&dir.path().join("idx")).unwrap();
    let loaded = Hnsw::load(
        &dir.path().join("idx"),
        dim(),
        HnswConfig::default().ef_search,
        HnswConfig::default().screen_bits,
    )
    .unwrap();
    assert_eq!(loaded.points(), 1500);
    assert_eq!(loaded.deleted(), 1);
    for q in queries.iter().chain([&data[7]]) {
        let req = SearchRequest::new(q.view(), 10);
        assert_eq!(loaded.search(&req).unwrap(), index.search(&req).unwrap());
    }
    // The reloaded graph still takes inserts.
    let extra = Hypervector::random(dim(), 99);
    loaded
        .insert_batch(&[(VectorId(5000), extra.view())])
        .unwrap();
    assert_eq!(
        loaded.search(&SearchRequest::new(extra.view(), 1)).unwrap()[0].id,
        VectorId(5000)
    );
    // Wrong dimension and missing files are clear errors.
    let err = Hnsw::load(&dir.path().join("idx"), Dim::new(2048).unwrap(), 64, 0).unwrap_err();
    assert!(err.to_string().contains("expected 2048 bits"), "{err}");
    assert_eq!(common::reason_of(err), Reason::DimensionMismatch);
    let err = Hnsw::load(&dir.path().join("nothing"), dim(), 64, 0).unwrap_err();
    assert!(err.to_string().contains("graph.hhnsw"), "{err}");
    assert_eq!(common::reason_of(err), Reason::Corruption);
}

#[test]
fn segment_store_switches_to_hnsw_above_its_threshold_and_keeps_projects_apart() {
    let dir = tempfile::tempdir().unwrap();
    let config = SegmentStoreConfig {
        hnsw_threshold: 1000,
        ..SegmentStoreConfig::default()
    };
    let (a, b) = (project("a"), project("b"));
    let (data_a, queries) = clustered(1500, 20, 15, 4);
    let (data_b, _) = clustered(300, 0, 15, 4); // same centres: B's vectors look like A's
    {
        let store = SegmentStore::create(dir.path().join("s"), dim(), config).unwrap();
        let items = numbered(&data_a, 0);
        store.insert_batch(&a, &items).unwrap();
        let items = numbered(&data_b, 10_000);
        store.insert_batch(&b, &items).unwrap();
        assert!(store.uses_hnsw(&a));
        assert!(!store.uses_hnsw(&b));
        for q in &queries {
            let hits = store.search(&a, &SearchRequest::new(q.view(), 10)).unwrap();
            assert!(
                all_of(hits.iter(), |h| h.id.0 < 10_000),
                "A never returns B's ids"
            );
            let hits = store.search(&b, &SearchRequest::new(q.view(), 10)).unwrap();
            assert!(
                all_of(hits.iter(), |h| h.id.0 >= 10_000),
                "B never returns A's ids"
            );
        }
        assert!(store.delete(&a, VectorId(3)).unwrap());
        let hits = store
            .search(&a, &SearchRequest::new(data_a[3].view(), 5))
            .unwrap();
        assert!(all_of(hits.iter(), |h| h.id != VectorId(3)));
        store.save_indexes().unwrap();
    }
    // Reopen: the saved graph is reloaded, not rebuilt, and still filters the deletion.
    let store = SegmentStore::open(dir.path().join("s"), dim(), config).unwrap();
    assert!(store.uses_hnsw(&a));
    assert_eq!(store.recovery().indexes_rebuilt, 0);
    let hits = store
        .search(&a, &SearchRequest::new(data_a[3].view(), 5))
        .unwrap();
    assert!(all_of(hits.iter(), |h| h.id != VectorId(3)));
    assert_eq!(
        store
            .search(&a, &SearchRequest::new(data_a[4].view(), 1))
            .unwrap()[0]
            .id,
        VectorId(4)
    );
}

#[test]
fn a_damaged_saved_graph_is_an_error_and_the_store_rebuilds_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = SegmentStoreConfig {
        hnsw_threshold: 100,
        ..SegmentStoreConfig::default()
    };
    let (data, _) = clustered(300, 0, 5, 5);
    let p = project("p");
    {
        let store = SegmentStore::create(dir.path().join("s"), dim(), config).unwrap();
        let items = numbered(&data, 0);
        store.insert_batch(&p, &items).unwrap();
        assert_eq!(store.catch_up_indexes(None).unwrap(), 0);
        store.flush().unwrap();
    }
    let graph_dir = dir.path().join("s/projects/p/hnsw");
    let data_file = graph_dir.join(hypermem::index::GRAPH_FILE);
    let mut bytes = std::fs::read(&data_file).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xFF;
    std::fs::write(&data_file, bytes).unwrap();
    let err = Hnsw::load(&graph_dir, dim(), 64, 0).unwrap_err();
    assert!(err.to_string().contains("checksum"), "{err}");
    assert_eq!(common::reason_of(err), Reason::Corruption);
    let store = SegmentStore::open(dir.path().join("s"), dim(), config).unwrap();
    assert_eq!(store.recovery().indexes_rebuilt, 1);
    let hit = store
        .search(&p, &SearchRequest::new(data[9].view(), 1))
        .unwrap()[0];
    assert_eq!((hit.id, hit.distance), (VectorId(9), 0));
}

#[test]
fn the_graph_tail_is_searched_exactly_and_the_indexer_adds_it_off_the_write_path() {
    let dir = tempfile::tempdir().unwrap();
    let config = SegmentStoreConfig {
        hnsw_threshold: 100,
        ..SegmentStoreConfig::default()
    };
    let (data, _) = clustered(400, 0, 8, 6);
    let p = project("p");
    let items = numbered(&data, 0);
    let exact = |store: &SegmentStore, i: usize| {
        let hit = store
            .search(&p, &SearchRequest::new(data[i].view(), 1))
            .unwrap()[0];
        (hit.id, hit.distance)
    };
    {
        let store = SegmentStore::create(dir.path().join("s"), dim(), config).unwrap();
        store.insert_batch(&p, &items[..300]).unwrap();
        assert!(
            store.uses_hnsw(&p),
            "past the threshold the project has a graph"
        );
        // Whatever the indexer has done so far, every vector is found at distance 0:
        // what the graph lacks is scanned.
        for i in (0..300).step_by(7) {
            assert_eq!(exact(&store, i), (VectorId(i as u64), 0));
        }
        assert_eq!(store.catch_up_indexes(None).unwrap(), 0);
        assert_eq!(store.index_tail(&p), 0);
        store.flush().unwrap();
        // Appended after the save, and one of them deleted before it is indexed.
        store.insert_batch(&p, &items[300..]).unwrap();
        assert!(store.delete(&p, VectorId(350)).unwrap());
        for i in (300..400).step_by(3).filter(|&i| i != 350) {
            assert_eq!(exact(&store, i), (VectorId(i as u64), 0));
        }
        let hits = store
            .search(&p, &SearchRequest::new(data[350].view(), 5))
            .unwrap();
        assert!(all_of(hits.iter(), |h| h.id != VectorId(350)));
    }
    // The saved graph holds the first 300 slots: reopened as it is, not rebuilt, with the
    // rest as its tail; indexing it changes no answer.
    let store = SegmentStore::open(dir.path().join("s"), dim(), config).unwrap();
    assert_eq!(store.recovery().indexes_rebuilt, 0);
    for i in (0..400).step_by(11).filter(|&i| i != 350) {
        assert_eq!(exact(&store, i), (VectorId(i as u64), 0));
    }
    assert_eq!(store.catch_up_indexes(None).unwrap(), 0);
    for i in (0..400).step_by(11).filter(|&i| i != 350) {
        assert_eq!(exact(&store, i), (VectorId(i as u64), 0));
    }
    let hits = store
        .search(&p, &SearchRequest::new(data[350].view(), 5))
        .unwrap();
    assert!(
        all_of(hits.iter(), |h| h.id != VectorId(350)),
        "a slot deleted before it was indexed stays deleted in the graph"
    );
}
