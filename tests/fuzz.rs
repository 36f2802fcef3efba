//! Property (fuzz) tests for every decoder of external bytes: segment files, HNSW files,
//! the saved lexical index, profiles, plan JSON, import files and query strings. Each
//! mutates a valid input (or generates one) and requires that decoding never panics: it
//! returns a value or a named error, and a value it returns can be used without a panic.
//!
//! Cases per property: `HYPERMEM_FUZZ_CASES` (default 48, small enough for the default
//! suite; e.g. `HYPERMEM_FUZZ_CASES=5000 cargo test --release --test fuzz` for a long run).

mod common;

use std::path::Path;
use std::sync::OnceLock;

use common::{project, vector_of};
use hypermem::hdv::Dim;
use hypermem::index::Hnsw;
use hypermem::ledger::{EventKind, NewEvent, Role};
use hypermem::store::{SearchRequest, SegmentStore, SegmentStoreConfig, VectorId, VectorTier};
use hypermem::{Memory, Profile, ProfileKind};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("HYPERMEM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

fn dim() -> Dim {
    Dim::new(512).unwrap()
}

/// A byte-level mutation: set `(position fraction, value)` pairs, then maybe truncate.
#[derive(Debug, Clone)]
struct Mutation {
    writes: Vec<(f64, u8)>,
    truncate: Option<f64>,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    (
        prop::collection::vec((0.0..1.0f64, any::<u8>()), 1..8),
        prop::option::weighted(0.2, 0.0..1.0f64),
    )
        .prop_map(|(writes, truncate)| Mutation { writes, truncate })
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation, from: usize) {
    if bytes.len() <= from {
        return;
    }
    let span = bytes.len() - from;
    for &(at, v) in &m.writes {
        let i = from + ((at * span as f64) as usize).min(span - 1);
        bytes[i] = v;
    }
    if let Some(t) = m.truncate {
        bytes.truncate((t * bytes.len() as f64) as usize);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A store of two segments and an HNSW graph, built once.
fn pristine_store() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let config = SegmentStoreConfig {
            segment_capacity: 64,
            hnsw_threshold: 50,
            ..SegmentStoreConfig::default()
        };
        let store = SegmentStore::create(dir.path().join("s"), dim(), config).unwrap();
        let vectors: Vec<_> = (0..100).map(|i| vector_of(dim(), "p", i)).collect();
        let items: Vec<_> = vectors
            .iter()
            .enumerate()
            .map(|(i, v)| (VectorId(i as u64), v.view()))
            .collect();
        store.insert_batch(&project("p"), &items).unwrap();
        store.flush().unwrap();
        dir
    })
    .path()
}

fn store_config() -> SegmentStoreConfig {
    SegmentStoreConfig {
        segment_capacity: 64,
        hnsw_threshold: 50,
        ..SegmentStoreConfig::default()
    }
}

/// A memory of a few conversations (its lexical index saved), built once; tests copy it.
fn pristine_memory() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let m = Memory::open(
            &Profile::builtin(ProfileKind::Lite).unwrap(),
            Some(dir.path()),
        )
        .unwrap();
        let p = project("p");
        let events: Vec<_> = (0..40)
            .map(|i| {
                NewEvent::new(
                    p.clone(),
                    if i % 2 == 0 {
                        Role::User
                    } else {
                        Role::Assistant
                    },
                    EventKind::Message,
                    format!(
                        "turn {i}: the deploy window moved to {} am on day {}",
                        i % 12,
                        i % 7
                    ),
                )
                .thread(format!("t{}", i / 10))
                .session(format!("s{}", i / 10))
            })
            .collect();
        m.observe_batch(&events).unwrap();
        m.recall(&p, "deploy window", 5).unwrap();
        m.flush().unwrap();
        drop(m);
        dir
    })
    .path()
}

/// One shared memory for the text decoders (plans, imports, queries): each case runs
/// against whatever earlier cases stored, as a long-lived server would.
fn shared_memory() -> &'static (tempfile::TempDir, Memory) {
    static M: OnceLock<(tempfile::TempDir, Memory)> = OnceLock::new();
    M.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let m = Memory::open(
            &Profile::builtin(ProfileKind::Lite).unwrap(),
            Some(dir.path()),
        )
        .unwrap();
        m.observe(NewEvent::new(
            project("p"),
            Role::User,
            EventKind::Message,
            "I prefer tea",
        ))
        .unwrap();
        (dir, m)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn damaged_segment_files_never_panic(m in mutation(), which in 0usize..2) {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(pristine_store(), dir.path());
        let seg = dir.path().join(format!("s/projects/p/seg-{:08}.hseg", which + 1));
        let mut bytes = std::fs::read(&seg).unwrap();
        apply(&mut bytes, &m, 0);
        std::fs::write(&seg, &bytes).unwrap();
        if let Ok(store) = SegmentStore::open(dir.path().join("s"), dim(), store_config()) {
            let q = vector_of(dim(), "p", 7);
            let _ = store.search(&project("p"), &SearchRequest::new(q.view(), 5));
            let _ = store.ids(&project("p"));
            let _ = store.get(&project("p"), VectorId(3));
        }
    }

    #[test]
    fn damaged_hnsw_files_never_panic_even_with_valid_checksums(m in mutation()) {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&pristine_store().join("s/projects/p/hnsw"), dir.path());
        let file = dir.path().join(hypermem::index::GRAPH_FILE);
        let mut bytes = std::fs::read(&file).unwrap();
        // Damage the body past the vectors and the header fields, then recompute both
        // checksums so the structural checks (links, levels, sizes) are what is tested.
        let header = 96;
        apply(&mut bytes, &m, 8 + 8);
        if bytes.len() >= header {
            let body = xxhash_rust::xxh3::xxh3_64(&bytes[header..]);
            bytes[8 + 8 * 8..16 + 8 * 8].copy_from_slice(&body.to_le_bytes());
            let head = xxhash_rust::xxh3::xxh3_64(&bytes[..88]);
            bytes[88..96].copy_from_slice(&head.to_le_bytes());
        }
        std::fs::write(&file, &bytes).unwrap();
        if let Ok(index) = Hnsw::load(dir.path(), dim(), 32, 0) {
            let q = vector_of(dim(), "p", 11);
            let _ = index.search(&SearchRequest::new(q.view(), 5));
            let _ = index.insert_batch(&[(VectorId(1000), q.view())]);
            let _ = index.search(&SearchRequest::new(q.view(), 5));
        }
    }

    #[test]
    fn damaged_lexical_index_files_never_panic(m in mutation()) {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(pristine_memory(), dir.path());
        let file = dir.path().join("lexical/p.lex");
        let mut bytes = std::fs::read(&file).unwrap();
        apply(&mut bytes, &m, 0);
        std::fs::write(&file, &bytes).unwrap();
        let memory = Memory::open(&Profile::builtin(ProfileKind::Lite).unwrap(), Some(dir.path())).unwrap();
        let hits = memory.recall(&project("p"), "deploy window day 3", 5).unwrap();
        prop_assert!(!hits.is_empty(), "a damaged index is rebuilt from the ledger");
    }

    #[test]
    fn profile_text_never_panics(m in mutation(), junk in "[ -~\\n]{0,80}") {
        let base = std::fs::read_to_string(Profile::bundled_path(ProfileKind::Lite)).unwrap();
        let mut bytes = base.into_bytes();
        apply(&mut bytes, &m, 0);
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        text.push_str(&junk);
        if let Ok(profile) = Profile::parse(&text, "<fuzz>") {
            // A profile that parses is valid: a memory opens on it.
            let dir = tempfile::tempdir().unwrap();
            let _ = Memory::open(&profile, Some(dir.path()));
        }
    }

    #[test]
    fn plan_json_never_panics(m in mutation()) {
        let base = br#"{"project":"p","idempotency_key":"k","at":"2025-02-01T00:00:00Z","ops":[{"op":"assert","key":"user.drink","statement":"prefers tea","ownership":"user","evidence":[1],"confidence":0.9,"idempotency_key":"o1"},{"op":"reinforce","key":"user.drink","evidence":[1],"expected_version":1},{"op":"promote","belief":3}]}"#;
        let mut bytes = base.to_vec();
        apply(&mut bytes, &m, 0);
        let text = String::from_utf8_lossy(&bytes);
        match serde_json::from_str::<hypermem::governance::Plan>(&text) {
            Ok(plan) => {
                let _ = shared_memory().1.apply_plan(&plan);
            }
            Err(e) => {
                let message = hypermem::input::json_error("plan", &e);
                prop_assert!(message.starts_with("plan"));
            }
        }
    }

    #[test]
    fn import_files_never_panic_and_refusals_write_nothing(m in mutation()) {
        let base = br#"{"conversation_id":"c1","sessions":[{"session_id":"s1","date":"May 8, 2023","turns":[{"turn_id":"0","role":"user","text":"first turn","time":"1:56 pm on 8 May, 2023"},{"turn_id":1,"role":"Ana","text":"second"}]}]}"#;
        let mut bytes = base.to_vec();
        apply(&mut bytes, &m, 0);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("conversations.jsonl"), &bytes).unwrap();
        let memory = &shared_memory().1;
        let before: u64 = memory.stats().unwrap().iter().map(|s| s.events).sum();
        match hypermem::eval::import(memory, dir.path(), false, None, |_, _| {}) {
            Ok(r) => prop_assert!(r.new + r.skipped <= 2),
            Err(_) => {
                let after: u64 = memory.stats().unwrap().iter().map(|s| s.events).sum();
                prop_assert_eq!(before, after, "a refused import wrote nothing");
            }
        }
    }

    #[test]
    fn query_strings_never_panic(q in "[ -~]{0,60}", word in prop::sample::select(vec![
        "since:", "until:", "role:", "kind:", "\"", "last 99999999999999999 days",
        "2025-02-30", "March 24, 2025", "project:q", "thread:\"a b", "k:", "session:",
    ]), u in "\\PC{0,12}") {
        // Any characters before an inflectional ending: recall reads each word's other
        // inflections.
        let text = format!("{q} {word} {u}ed {u}ing {q}");
        let _ = hypermem::recall::query::compile(&text, 1_738_368_000_000);
        let memory = &shared_memory().1;
        let _ = memory.recall(&project("p"), &text, 5);
        let _ = memory.recall_pack(&project("p"), &text, None, 2_000, None);
    }
}
