//! Durability and fault handling of the mmap segment store: reopen, crash (kill -9 of a
//! writer process), truncation, corruption, wrong dimension, tombstones and compaction,
//! interrupted compaction, locking, read-only views, concurrent readers.

mod common;
use common::all_of;
use hypermem::Reason;

use std::fs::{self, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{project, vector_of};
use hypermem::hdv::Dim;
use hypermem::store::{
    SearchRequest, SegmentStore, SegmentStoreConfig, StoreError, VectorId, VectorTier,
};

const D: usize = 1024;

fn dim() -> Dim {
    Dim::new(D).unwrap()
}

/// A store that waits up to 2 s for its lock: a child process another test of this binary
/// spawns holds a copy of every open descriptor (the previous store's lock among them)
/// between its fork and its exec, so a reopen right after a drop may find it held for an
/// instant.
fn config(cap: usize) -> SegmentStoreConfig {
    SegmentStoreConfig {
        segment_capacity: cap,
        lock_wait_ms: 2000,
        ..SegmentStoreConfig::default()
    }
}

/// A store that refuses at once when the lock is held (for the tests of that refusal).
fn config_no_wait(cap: usize) -> SegmentStoreConfig {
    SegmentStoreConfig {
        lock_wait_ms: 0,
        ..config(cap)
    }
}

fn fill(store: &SegmentStore, name: &str, ids: std::ops::Range<u64>) {
    let p = project(name);
    let vs: Vec<_> = ids.clone().map(|i| vector_of(dim(), name, i)).collect();
    let batch: Vec<_> = ids.zip(&vs).map(|(i, v)| (VectorId(i), v.view())).collect();
    store.insert_batch(&p, &batch).unwrap();
}

fn assert_exactly(store: &SegmentStore, name: &str, ids: impl Iterator<Item = u64>) {
    let p = project(name);
    let want: Vec<VectorId> = ids.map(VectorId).collect();
    assert_eq!(store.ids(&p), want);
    for id in want {
        assert_eq!(
            store.get(&p, id).unwrap().unwrap(),
            vector_of(dim(), name, id.0),
            "id {id}"
        );
    }
}

/// Creates a store at `root` with segments of `cap` vectors, appends ids `0..ends[0]`,
/// `ends[0]..ends[1]`, ... to project `p` (one append each) and closes it.
fn written(root: &Path, cap: usize, ends: &[u64]) {
    let s = SegmentStore::create(root, dim(), config(cap)).unwrap();
    let mut start = 0;
    for &end in ends {
        fill(&s, "p", start..end);
        start = end;
    }
}

/// Opens a store file for in-place damage.
fn open_rw(file: &Path) -> std::fs::File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(file)
        .unwrap()
}

fn segment_files(root: &Path, name: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(root.join("projects").join(name))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

#[test]
fn vectors_survive_reopen_bit_identical() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    {
        let store = SegmentStore::create(&root, dim(), config(100)).unwrap();
        fill(&store, "p", 0..250);
        fill(&store, "q", 0..10);
    }
    let store = SegmentStore::open(&root, dim(), config(100)).unwrap();
    assert!(store.recovery().is_clean());
    assert_eq!(segment_files(&root, "p").len(), 3);
    assert_exactly(&store, "p", 0..250);
    assert_exactly(&store, "q", 0..10);
    assert!(matches!(
        SegmentStore::create(&root, dim(), config_no_wait(100)),
        Err(StoreError::Locked { .. } | StoreError::Corruption { .. })
    ));
}

#[test]
fn wrong_dimension_on_open_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    drop(SegmentStore::create(&root, dim(), config(10)).unwrap());
    let err = SegmentStore::open(&root, Dim::new(2048).unwrap(), config(10)).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("expected 2048 bits, found 1024 bits") && msg.contains("STORE"),
        "{msg}"
    );
}

#[test]
fn a_second_writer_is_locked_out_and_views_are_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    let store = SegmentStore::create(&root, dim(), config(10)).unwrap();
    fill(&store, "p", 0..5);
    let err = SegmentStore::open(&root, dim(), config_no_wait(10)).unwrap_err();
    assert!(matches!(err, StoreError::Locked { .. }), "{err}");
    let view = SegmentStore::view(&root, dim()).unwrap();
    assert_exactly(&view, "p", 0..5);
    let v = vector_of(dim(), "p", 9);
    assert!(matches!(
        view.insert(&project("p"), VectorId(9), v.view()),
        Err(StoreError::ReadOnly { .. })
    ));
}

#[test]
fn truncation_inside_uncommitted_space_is_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    written(&root, 100, &[40]);
    let file = &segment_files(&root, "p")[0];
    let full = fs::metadata(file).unwrap().len();
    // Cut the unused tail of the id area (power loss before preallocation reached disk).
    let committed_end = 4096 + 100 * (D as u64 / 8) + 40 * 16;
    open_rw(file).set_len(committed_end).unwrap();
    let store = SegmentStore::open(&root, dim(), config(100)).unwrap();
    let rec = &store.recovery().segments;
    assert_eq!(rec.len(), 1);
    assert!(rec[0].1.restored_length);
    assert_eq!(fs::metadata(file).unwrap().len(), full);
    assert_exactly(&store, "p", 0..40);
}

#[test]
fn truncation_into_committed_data_is_corruption_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    written(&root, 100, &[40]);
    let file = &segment_files(&root, "p")[0];
    let cut = 4096 + 100 * (D as u64 / 8) + 20 * 16;
    open_rw(file).set_len(cut).unwrap();
    let err = SegmentStore::open(&root, dim(), config(100)).unwrap_err();
    match &err {
        StoreError::Corruption { path, reason } => {
            assert_eq!(path, file);
            assert!(reason.contains("truncated"), "{reason}");
        }
        other => panic!("{other}"),
    }
    // Shorter than the header area.
    open_rw(file).set_len(100).unwrap();
    let err = SegmentStore::open(&root, dim(), config(100)).unwrap_err();
    assert!(err.to_string().contains("shorter than the header"), "{err}");
    assert_eq!(common::reason_of(err), Reason::Corruption);
}

#[test]
fn a_flipped_bit_in_a_committed_vector_is_a_checksum_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    written(&root, 100, &[10]);
    let file = &segment_files(&root, "p")[0];
    let f = open_rw(file);
    let at = 4096 + 7 * (D as u64 / 8) + 5;
    let mut byte = [0u8];
    f.read_exact_at(&mut byte, at).unwrap();
    f.write_all_at(&[byte[0] ^ 0x10], at).unwrap();
    let err = SegmentStore::open(&root, dim(), config(100)).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("checksum mismatch in committed slot 7") && msg.contains("seg-00000001.hseg"),
        "{msg}"
    );
    // A read-only view (what the CLI's reads open) verifies too.
    let err = SegmentStore::view(&root, dim()).unwrap_err();
    assert!(
        err.to_string()
            .contains("checksum mismatch in committed slot 7"),
        "{err}"
    );
    assert_eq!(common::reason_of(err), Reason::Corruption);
}

#[test]
fn headers_one_damaged_copy_recovers_both_damaged_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    written(&root, 100, &[10, 20]);
    let file = &segment_files(&root, "p")[0];
    let f = open_rw(file);
    // The newest header generation is 3 (create = 1, two appends): slot 3 % 2 = 1 at 512.
    f.write_all_at(&[0xFF; 8], 512 + 20).unwrap();
    drop(f);
    let store = SegmentStore::open(&root, dim(), config(100)).unwrap();
    // The older copy says 10 committed; the 10 complete vectors after it are adopted.
    let rec = &store.recovery().segments[0].1;
    assert!(rec.header_repaired);
    assert_eq!(rec.adopted, 10);
    assert_exactly(&store, "p", 0..20);
    drop(store);
    let f = open_rw(file);
    f.write_all_at(&[0xFF; 8], 20).unwrap();
    f.write_all_at(&[0xFF; 8], 512 + 20).unwrap();
    drop(f);
    let err = SegmentStore::open(&root, dim(), config(100)).unwrap_err();
    assert!(err.to_string().contains("no valid header"), "{err}");
    assert_eq!(common::reason_of(err), Reason::Corruption);
    // Never a panic on garbage: a file of random bytes.
    fs::write(file, vec![0xA5u8; 10_000]).unwrap();
    assert!(matches!(
        SegmentStore::open(&root, dim(), config(100)),
        Err(StoreError::Corruption { .. })
    ));
}

#[test]
fn torn_slots_past_the_count_are_cleared_not_adopted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    written(&root, 100, &[5]);
    let file = &segment_files(&root, "p")[0];
    let f = open_rw(file);
    // Simulate a crash mid-append: an id entry at slot 5 whose vector never arrived.
    let entries = 4096 + 100 * (D as u64 / 8);
    f.write_all_at(&99u64.to_le_bytes(), entries + 5 * 16)
        .unwrap();
    f.write_all_at(&0xDEADu32.to_le_bytes(), entries + 5 * 16 + 8)
        .unwrap();
    drop(f);
    let store = SegmentStore::open(&root, dim(), config(100)).unwrap();
    let rec = &store.recovery().segments[0].1;
    assert_eq!((rec.adopted, rec.cleared), (0, 1));
    assert_exactly(&store, "p", 0..5);
    // The next append reuses the slot normally.
    fill(&store, "p", 5..8);
    drop(store);
    let store = SegmentStore::open(&root, dim(), config(100)).unwrap();
    assert!(store.recovery().is_clean());
    assert_exactly(&store, "p", 0..8);
}

#[test]
fn tombstones_filter_and_compaction_erases_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    let p = project("p");
    let secret = vector_of(dim(), "p", 13);
    {
        let store = SegmentStore::create(&root, dim(), config(16)).unwrap();
        fill(&store, "p", 0..40);
        assert!(store.delete(&p, VectorId(13)).unwrap());
        assert_eq!(store.tombstones(&p), 1);
        drop(store);
        // Tombstones persist across reopen.
        let store = SegmentStore::open(&root, dim(), config(16)).unwrap();
        assert_eq!(store.get(&p, VectorId(13)).unwrap(), None);
        let hits = store
            .search(&p, &SearchRequest::new(secret.view(), 3))
            .unwrap();
        assert!(all_of(hits.iter(), |h| h.id != VectorId(13)));
        // The bytes are still on disk until compaction.
        assert!(contains_bytes(&root, &secret.to_le_bytes()));
        assert_eq!(store.compact(&p).unwrap(), 1);
        assert_eq!(store.tombstones(&p), 0);
        assert!(!contains_bytes(&root, &secret.to_le_bytes()));
        assert_exactly(&store, "p", (0..40).filter(|&i| i != 13));
        fill(&store, "p", 40..45);
    }
    let store = SegmentStore::open(&root, dim(), config(16)).unwrap();
    assert_exactly(&store, "p", (0..45).filter(|&i| i != 13));
}

fn contains_bytes(root: &Path, needle: &[u8]) -> bool {
    fn walk(dir: &Path, needle: &[u8]) -> bool {
        fs::read_dir(dir).unwrap().any(|e| {
            let path = e.unwrap().path();
            if path.is_dir() {
                walk(&path, needle)
            } else {
                let data = fs::read(&path).unwrap();
                data.windows(needle.len()).any(|w| w == needle)
            }
        })
    }
    walk(root, needle)
}

#[test]
fn interrupted_compactions_roll_back_or_forward() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    written(&root, 16, &[20]);
    let projects = root.join("projects");
    // Crash before the swap: a half-written .compact dir beside the live one.
    fs::create_dir(projects.join(".compact-p")).unwrap();
    fs::write(
        projects.join(".compact-p").join("seg-00000001.hseg"),
        b"partial",
    )
    .unwrap();
    let store = SegmentStore::open(&root, dim(), config(16)).unwrap();
    assert_eq!(store.recovery().compactions_discarded, 1);
    assert_exactly(&store, "p", 0..20);
    drop(store);
    // Crash between the renames: live dir moved to trash, new dir complete.
    fs::rename(projects.join("p"), projects.join(".compact-p")).unwrap();
    fs::create_dir(projects.join(".trash-p")).unwrap();
    let store = SegmentStore::open(&root, dim(), config(16)).unwrap();
    assert_eq!(store.recovery().compactions_finished, 1);
    assert!(!projects.join(".trash-p").exists());
    assert_exactly(&store, "p", 0..20);
}

#[test]
fn drop_project_removes_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    let store = SegmentStore::create(&root, dim(), config(16)).unwrap();
    fill(&store, "gone", 0..20);
    fill(&store, "kept", 0..3);
    assert_eq!(store.drop_project(&project("gone")).unwrap(), 20);
    assert!(!root.join("projects").join("gone").exists());
    drop(store);
    let store = SegmentStore::open(&root, dim(), config(16)).unwrap();
    assert_eq!(store.projects(), vec![project("kept")]);
}

#[test]
fn readers_never_see_torn_vectors_while_a_writer_appends() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SegmentStore::create(dir.path().join("s"), dim(), config(128)).unwrap());
    let p = project("p");
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|r| {
            let (store, done, p) = (store.clone(), done.clone(), p.clone());
            std::thread::spawn(move || {
                let mut searches = 0;
                while !done.load(Ordering::Acquire) {
                    let probe = (searches * 7 + r) % 400;
                    let q = vector_of(dim(), "p", probe);
                    let hits = store.search(&p, &SearchRequest::new(q.view(), 5)).unwrap();
                    for h in &hits {
                        // Every returned vector is whole: its stored bits are its id's vector.
                        let v = store.get(&p, h.id).unwrap().unwrap();
                        assert_eq!(v, vector_of(dim(), "p", h.id.0));
                        assert_eq!(v.hamming(&q), h.distance);
                    }
                    if let Some(first) = hits.first()
                        && first.distance == 0
                    {
                        assert_eq!(first.id.0, probe);
                    }
                    searches += 1;
                }
                searches
            })
        })
        .collect();
    for start in (0..400u64).step_by(10) {
        fill(&store, "p", start..start + 10);
    }
    done.store(true, Ordering::Release);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    assert_eq!(store.len(&p), 400);
}

/// The child side of the crash test: appends batches forever, printing each acknowledged
/// batch, until the parent kills it with SIGKILL.
#[test]
fn crash_child_writer() {
    let Ok(root) = std::env::var("HYPERMEM_CRASH_CHILD_ROOT") else {
        return;
    };
    let store = SegmentStore::open_or_create(&root, dim(), config(64)).unwrap();
    let mut out = std::io::stdout().lock();
    let first = store.len(&project("p")) as u64 / 7;
    for batch in first.. {
        let ids = batch * 7..batch * 7 + 7;
        fill(&store, "p", ids.clone());
        writeln!(out, "ACK {}", ids.end).unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn kill_9_during_appends_loses_no_acknowledged_vector() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s");
    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "crash_child_writer",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("HYPERMEM_CRASH_CHILD_ROOT", &root)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut acked = 0u64;
        // Let it acknowledge a varying number of batches, then SIGKILL mid-stream.
        let target = 20 + round * 13;
        let mut seen = 0;
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(n) = line.strip_prefix("ACK ") {
                acked = n.parse().unwrap();
                seen += 1;
                if seen == target {
                    break;
                }
            }
        }
        assert_eq!(
            seen, target,
            "round {round}: the child stopped acknowledging early"
        );
        child.kill().unwrap();
        child.wait().unwrap();
        // Drain what the child printed after our last read (it may have acked more).
        for line in lines.map_while(Result::ok) {
            if let Some(n) = line.strip_prefix("ACK ") {
                acked = n.parse().unwrap();
            }
        }
        let store = SegmentStore::open(&root, dim(), config(64)).unwrap();
        let ids = store.ids(&project("p"));
        // Every acknowledged vector is present and bit-identical ...
        assert!(
            ids.len() as u64 >= acked,
            "round {round}: {} < {acked}",
            ids.len()
        );
        // ... and nothing else: only whole batches' ids, each with its exact vector.
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(id.0, i as u64, "round {round}: ids are a dense prefix");
            assert_eq!(
                store.get(&project("p"), *id).unwrap().unwrap(),
                vector_of(dim(), "p", id.0)
            );
        }
        // A batch split across two segments may keep a prefix (each part is whole):
        // top it up so the next child continues on a batch boundary.
        let next = ids.len() as u64;
        if !next.is_multiple_of(7) {
            fill(&store, "p", next..next.div_ceil(7) * 7);
        }
        eprintln!("round {round}: acked {acked}, found {next}");
    }
}

/// A store scanning in two stages (a 256-bit prefix first) from its first vector.
fn two_stage(cap: usize) -> SegmentStoreConfig {
    SegmentStoreConfig {
        prefix_bits: 256,
        prefix_threshold: 1,
        ..config(cap)
    }
}

#[test]
fn a_two_stage_scan_with_every_slot_a_candidate_answers_as_the_exact_scan() {
    // 900 vectors in one segment: the first stage keeps at least 1,024 candidates, so
    // every slot reaches the full comparison and the answers must be the exact ones,
    // tombstones, id filters and distance limits included.
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let exact = SegmentStore::create(
        a.path(),
        dim(),
        SegmentStoreConfig {
            prefix_bits: 0,
            ..config(1000)
        },
    )
    .unwrap();
    let staged = SegmentStore::create(b.path(), dim(), two_stage(1000)).unwrap();
    let p = project("p");
    for s in [&exact, &staged] {
        fill(s, "p", 0..900);
        for id in (0..900).step_by(7) {
            assert!(s.delete(&p, VectorId(id)).unwrap());
        }
    }
    let odd = |id: VectorId| id.0 % 2 == 1;
    for q in 0..20u64 {
        let query = vector_of(dim(), "p", q * 31).with_noise(0.3, q).unwrap();
        for k in [1, 10, 200] {
            let mut request = SearchRequest::new(query.view(), k);
            assert_eq!(
                staged.search(&p, &request).unwrap(),
                exact.search(&p, &request).unwrap(),
                "query {q}, k {k}"
            );
            request.filter = Some(&odd);
            request.max_distance = Some(500);
            let want = exact.search(&p, &request).unwrap();
            assert!(all_of(want.iter(), |h| h.id.0 % 2 == 1
                && h.distance <= 500
                && h.id.0 % 7 != 0));
            assert_eq!(
                staged.search(&p, &request).unwrap(),
                want,
                "query {q}, k {k}, filtered"
            );
        }
    }
}

#[test]
fn a_two_stage_scan_finds_planted_neighbours_at_their_exact_distance() {
    // 5,000 vectors in five segments, more than the first stage keeps: each query is a
    // stored vector with 20 % of its bits flipped, and its original must come first, at
    // its full-length distance.
    let dir = tempfile::tempdir().unwrap();
    let store = SegmentStore::create(dir.path(), dim(), two_stage(1000)).unwrap();
    fill(&store, "p", 0..5000);
    let p = project("p");
    for i in (0..5000).step_by(97) {
        let original = vector_of(dim(), "p", i);
        let query = original.with_noise(0.2, i).unwrap();
        let hits = store
            .search(&p, &SearchRequest::new(query.view(), 10))
            .unwrap();
        assert_eq!(hits.len(), 10);
        assert_eq!(hits[0].id, VectorId(i), "query {i}");
        for h in &hits {
            let v = store.get(&p, h.id).unwrap().unwrap();
            assert_eq!(h.distance, query.hamming(&v), "id {}", h.id);
        }
        assert!(all_of(hits.windows(2), |w| w[0].distance <= w[1].distance));
    }
}

#[test]
fn a_two_stage_scan_sees_vectors_appended_after_its_sketch() {
    // The first scan builds the sketch; vectors appended afterwards (a few: the sketch is
    // extended; many: it is rebuilt by an exact scan) are found like the others.
    let dir = tempfile::tempdir().unwrap();
    let store = SegmentStore::create(dir.path(), dim(), two_stage(10_000)).unwrap();
    let p = project("p");
    fill(&store, "p", 0..4000);
    let nearest = |store: &SegmentStore, i: u64| {
        let query = vector_of(dim(), "p", i).with_noise(0.2, i).unwrap();
        store
            .search(&p, &SearchRequest::new(query.view(), 5))
            .unwrap()[0]
            .id
    };
    assert_eq!(nearest(&store, 17), VectorId(17));
    fill(&store, "p", 4000..4100);
    for i in [4000, 4050, 4099, 18] {
        assert_eq!(nearest(&store, i), VectorId(i), "after a few appends");
    }
    fill(&store, "p", 4100..9000);
    for i in [4100, 8999, 19] {
        assert_eq!(nearest(&store, i), VectorId(i), "after many appends");
    }
    for i in [5000, 20] {
        assert_eq!(
            nearest(&store, i),
            VectorId(i),
            "through the rebuilt sketch"
        );
    }
}
