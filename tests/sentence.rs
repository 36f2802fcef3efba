//! The local sentence model (`--features sentence`): agreement with reference vectors,
//! embedding off the write path (queued with the event, resumed after a restart, dropped
//! with an erasure), caller embeddings beside it, and named refusals of bad model
//! directories. Tests that need `../shared/models/minilm-l6-v2` say loudly when they skip.

mod common;
use common::all_of;

use std::path::{Path, PathBuf};

use common::{project, say};
use hypermem::ledger::Role;
use hypermem::semantic::{Model, SentenceModel, Windows};
use hypermem::{Memory, RecallQuery};

fn shared(path: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(path);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("SKIPPED: {} is not here", p.display());
        None
    }
}

fn profile_with(model: &Path) -> hypermem::Profile {
    let mut p = common::small_profile();
    p.semantic.model = Some(model.to_owned());
    p
}

/// Reads a little-endian `f32` `.npy` matrix: `(columns, values)`.
fn read_npy(path: &Path) -> (usize, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap();
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert!(header.contains("'<f4'"), "{header}");
    let shape = &header[header.find("'shape': (").unwrap() + 10..];
    let cols: usize = shape[..shape.find(')').unwrap()]
        .split(',')
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let values = bytes[10 + header_len..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (cols, values)
}

#[test]
fn the_sentence_model_agrees_with_sentence_transformers() {
    let (Some(model_dir), Some(data)) = (
        shared("models/minilm-l6-v2"),
        shared("data/beam100k/embeddings/minilm-turns.npy"),
    ) else {
        return;
    };
    let model = SentenceModel::load(&model_dir)
        .unwrap()
        .with_windows(Windows::First);
    assert_eq!(model.dim(), 384);
    let (cols, reference) = read_npy(&data);
    // The turns in the reference's order (turns.tsv: conversation, session, turn).
    let set = data.parent().and_then(Path::parent).unwrap();
    let conversations = std::fs::read_to_string(set.join("conversations.jsonl")).unwrap();
    let mut turns = Vec::new();
    for line in conversations.lines().filter(|l| !l.trim().is_empty()) {
        let c: serde_json::Value = serde_json::from_str(line).unwrap();
        for s in c["sessions"].as_array().unwrap() {
            for t in s["turns"].as_array().unwrap() {
                turns.push(t["text"].as_str().unwrap_or("").to_owned());
            }
        }
    }
    assert_eq!(turns.len() * cols, reference.len());
    let picked: Vec<usize> = (0..turns.len()).step_by(turns.len() / 12).collect();
    let texts: Vec<&str> = picked.iter().map(|&i| turns[i].as_str()).collect();
    for (&i, e) in picked.iter().zip(model.embed_batch(&texts)) {
        let r = &reference[i * cols..(i + 1) * cols];
        let cosine: f32 = e.iter().zip(r).map(|(a, b)| a * b).sum();
        assert!(cosine >= 0.999, "turn {i}: cosine {cosine}");
    }
    // Batching does not change an embedding; a long text reads every window.
    let alone = model.embed(texts[1]);
    let batched = &model.embed_batch(&texts[..3])[1];
    let diff: f32 = alone.iter().zip(batched).map(|(a, b)| (a - b).abs()).sum();
    assert!(diff < 1e-4, "{diff}");
    // A question-sized text (its few rows take the direct product) embeds the same alone
    // as in a batch with long texts (the packed product).
    let short = "When did she start learning the piano?";
    let alone = model.embed(short);
    let batched = &model.embed_batch(&[texts[0], short, texts[2]])[1];
    let diff: f32 = alone.iter().zip(batched).map(|(a, b)| (a - b).abs()).sum();
    assert!(diff < 1e-4, "{diff}");
    let all = SentenceModel::load(&model_dir).unwrap();
    let long = turns.iter().find(|t| all.windows(t).len() > 1).unwrap();
    assert!(all_of(all.windows(long).iter(), |w| w.len() <= all.window()));
    let (first, mean) = (model.embed(long), all.embed(long));
    let cosine: f32 = first.iter().zip(&mean).map(|(a, b)| a * b).sum();
    assert!(cosine < 0.9999 && cosine > 0.5, "{cosine}");
}

#[test]
fn observations_are_embedded_off_the_write_path_and_resume_after_a_restart() {
    let Some(model) = shared("models/minilm-l6-v2") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let p = project("p");
    let texts = [
        "I adopted a golden retriever puppy last week",
        "The quarterly tax filing is due on April 15",
        "We repainted the kitchen a pale green",
        "My sister moved to Lisbon in the spring",
        "The printer in the office jams every morning",
        "We booked a cabin in the mountains for August",
        "The dentist appointment moved to Thursday",
        "I started learning Italian on my phone",
        "The car needs winter tyres before November",
        "Bought tickets for the jazz concert on Friday",
    ];
    {
        let m = Memory::open(&profile_with(&model), Some(dir.path())).unwrap();
        for t in texts {
            m.observe(say("s", Role::User, t)).unwrap();
        }
        // Acknowledged without a sentence vector: all queued.
        let stats = m.stats().unwrap();
        assert_eq!(stats[0].embedding_backlog, texts.len() as u64);
        let r = m
            .recall_with(&p, &RecallQuery::new("golden retriever puppy", 3))
            .unwrap();
        assert_eq!(r.unembedded, Some(r.items.len()), "{r:?}");
        let done = m.embed_pending(Some(&p), 4, None).unwrap();
        assert_eq!((done.embedded, done.left), (4, 6));
    }
    // A restart resumes with what is still queued.
    let m = Memory::open(&profile_with(&model), Some(dir.path())).unwrap();
    assert_eq!(m.stats().unwrap()[0].embedding_backlog, 6);
    let done = m.embed_pending(None, usize::MAX, None).unwrap();
    assert_eq!((done.embedded, done.left), (6, 0));
    assert_eq!(m.embed_pending(None, usize::MAX, None).unwrap().embedded, 0);
    assert_eq!(m.stats().unwrap()[0].embedding_backlog, 0);
    // Recall reads the sentence vectors: the semantic source scores the answer.
    let r = m
        .recall_with(&p, &RecallQuery::new("which puppy did we adopt", 3))
        .unwrap();
    assert_eq!(r.unembedded, Some(0));
    let top = r.items.first().unwrap_or_else(|| panic!("{r:?}"));
    assert!(top.event.content.contains("puppy"), "{r:?}");
    assert!(
        top.fused
            .breakdown
            .iter()
            .any(|b| b.signal.name() == "semantic"),
        "{:?}",
        top.fused
    );
    // Two recalls of the same question agree (the question's embedding is cached).
    let again = m
        .recall_with(&p, &RecallQuery::new("which puppy did we adopt", 3))
        .unwrap();
    assert_eq!(
        r.items.iter().map(|i| i.event.id).collect::<Vec<_>>(),
        again.items.iter().map(|i| i.event.id).collect::<Vec<_>>()
    );
}

#[test]
fn a_model_enabled_later_queues_what_was_stored_and_erasure_drops_the_queue() {
    let Some(model) = shared("models/minilm-l6-v2") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    {
        let m = Memory::open(&common::small_profile(), Some(dir.path())).unwrap();
        for t in ["first note about gardening", "second note about cycling"] {
            m.observe(say("s", Role::User, t)).unwrap();
        }
        assert_eq!(m.stats().unwrap()[0].embedding_backlog, 0);
    }
    let m = Memory::open(&profile_with(&model), Some(dir.path())).unwrap();
    assert_eq!(m.stats().unwrap()[0].embedding_backlog, 2);
    // A caller's own embedding of the model's size is stored with the event, not queued.
    let mut own = say("s", Role::User, "third note, embedded by the caller");
    own.embedding = Some(vec![0.05; 384]);
    m.observe(own).unwrap();
    assert_eq!(m.stats().unwrap()[0].embedding_backlog, 2);
    let receipt = m.forget_project(&project("p")).unwrap();
    assert_eq!(
        receipt.ledger.rows.get("semantic_pending"),
        Some(&2),
        "{receipt:?}"
    );
    assert_eq!(m.embed_pending(None, usize::MAX, None).unwrap().embedded, 0);
    // Reopening queues nothing of the erased project.
    drop(m);
    let m = Memory::open(&profile_with(&model), Some(dir.path())).unwrap();
    let backlog: u64 = m.stats().unwrap().iter().map(|s| s.embedding_backlog).sum();
    assert_eq!(backlog, 0, "nothing of the erased project is queued");
}

#[test]
fn a_bad_sentence_model_directory_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        r#"{"model_type": "gpt2", "hidden_size": 8}"#,
    )
    .unwrap();
    let err = Model::load(dir.path()).unwrap_err();
    assert!(err.path.ends_with("config.json"), "{err}");
    assert!(err.reason.contains("gpt2"), "{err}");
    let Some(model) = shared("models/minilm-l6-v2") else {
        return;
    };
    // A complete configuration whose weights are missing names the weights file.
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(model.join(f), dir.path().join(f)).unwrap();
    }
    let err = Model::load(dir.path()).unwrap_err();
    assert!(err.path.ends_with("model.safetensors"), "{err}");
    std::fs::write(dir.path().join("model.safetensors"), b"not tensors").unwrap();
    let err = Memory::open(
        &profile_with(dir.path()),
        Some(tempfile::tempdir().unwrap().path()),
    )
    .unwrap_err();
    assert_eq!(err.reason(), hypermem::Reason::ModelError, "{err}");
    let loaded = Model::load(&model).unwrap();
    assert_eq!((loaded.kind(), loaded.dim()), ("sentence", 384));
}

#[test]
fn a_served_memory_embeds_in_the_background_and_the_worker_ends_with_it() {
    let Some(model) = shared("models/minilm-l6-v2") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let m = std::sync::Arc::new(Memory::open(&profile_with(&model), Some(dir.path())).unwrap());
    m.spawn_embedder();
    for t in [
        "the boiler was serviced in May",
        "the roof gutter leaks again",
    ] {
        m.observe(say("s", Role::User, t)).unwrap();
    }
    let start = std::time::Instant::now();
    while m.stats().unwrap()[0].embedding_backlog > 0 {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "the background embedder did not drain the queue"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let weak = std::sync::Arc::downgrade(&m);
    drop(m);
    // The worker holds the memory only while it embeds a batch: it lets go.
    let start = std::time::Instant::now();
    while weak.upgrade().is_some() {
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Reopening (the lock is free) finds the vectors stored.
    let m = Memory::open(&profile_with(&model), Some(dir.path())).unwrap();
    assert_eq!(m.stats().unwrap()[0].embedding_backlog, 0);
}
