//! The two-stage scan and the HNSW graph against the exact scan on real text: every turn
//! of a data set's conversations in **one** project (38,058 turns for beam500k, past the
//! two-stage threshold), encoded by the text encoder with IDF weights; every question
//! searched for its 200 nearest (the recall vector source's depth) in a store that scans
//! every bit and in one per arm given: a number is a first stage of that many bits,
//! `hnsw:EF[:M[:EF_CONSTRUCTION[:SCREEN_BITS]]]` a graph of every vector (caught up before
//! searching) searched with that candidate list (and that screening prefix). Prints the overlap of the top 200 and top 10 with the
//! exact ones, the share of questions whose exact top 10 is kept whole, and the median and
//! p99 search time.
//!
//! `cargo run --release --example two_stage -- ../shared/data/beam500k 2048 hnsw:400:16:400`

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use hypermem::hdv::encode::{TextConfig, TextEncoder};
use hypermem::hdv::{Dim, Hypervector};
use hypermem::index::HnswConfig;
use hypermem::store::{
    ProjectId, SearchRequest, SegmentStore, SegmentStoreConfig, VectorId, VectorTier,
};

const DEPTH: usize = 200;

type Res<T> = Result<T, Box<dyn std::error::Error>>;
/// Per query its hit ids, best first; and the search times (ms), sorted.
type Run = (Vec<Vec<u64>>, Vec<f64>);

/// One way of searching, compared with the exact scan.
#[derive(Clone, Copy)]
enum Arm {
    /// A two-stage scan with a first stage of this many bits (0: exact).
    Prefix(usize),
    /// An HNSW graph: candidate list while searching, links per node, candidate list
    /// while building, screening prefix bits.
    Graph(usize, usize, usize, usize),
}

impl Arm {
    fn parse(arg: &str) -> Res<Self> {
        let Some(spec) = arg.strip_prefix("hnsw:") else {
            return Ok(Self::Prefix(arg.parse()?));
        };
        let d = HnswConfig::default();
        let mut parts = spec.split(':');
        let mut next = |default: usize| -> Res<usize> {
            Ok(parts.next().map(str::parse).transpose()?.unwrap_or(default))
        };
        Ok(Self::Graph(
            next(d.ef_search)?,
            next(d.m)?,
            next(d.ef_construction)?,
            next(d.screen_bits)?,
        ))
    }

    fn config(self) -> SegmentStoreConfig {
        match self {
            Self::Prefix(prefix_bits) => SegmentStoreConfig {
                prefix_bits,
                prefix_threshold: 1,
                hnsw_threshold: usize::MAX,
                ..SegmentStoreConfig::default()
            },
            Self::Graph(ef_search, m, ef_construction, screen_bits) => SegmentStoreConfig {
                hnsw_threshold: 1,
                hnsw: HnswConfig {
                    m,
                    ef_construction,
                    ef_search,
                    screen_bits,
                    ..HnswConfig::default()
                },
                ..SegmentStoreConfig::default()
            },
        }
    }

    fn label(self) -> String {
        match self {
            Self::Prefix(bits) => format!("prefix {bits} bits"),
            Self::Graph(ef, m, efc, screen) => {
                format!("hnsw ef {ef}, m {m}, ef_construction {efc}, screen {screen} bits")
            }
        }
    }
}

fn main() -> Res<()> {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let mut args = std::env::args().skip(1);
    let data = std::path::PathBuf::from(
        args.next()
            .unwrap_or_else(|| "../shared/data/beam500k".into()),
    );
    // A number is a first stage of that many bits; `hnsw:EF` searches an HNSW graph of
    // every vector with that candidate list (at least the depth is used).
    let arms: Vec<Arm> = args.map(|a| Arm::parse(&a)).collect::<Res<_>>()?;
    let arms = if arms.is_empty() {
        vec![Arm::Prefix(2048)]
    } else {
        arms
    };
    let mut turns = Vec::new();
    for line in std::fs::read_to_string(data.join("conversations.jsonl"))?.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let c: serde_json::Value = serde_json::from_str(line)?;
        for s in c["sessions"].as_array().into_iter().flatten() {
            for t in s["turns"].as_array().into_iter().flatten() {
                if let Some(text) = t["text"].as_str().filter(|x| !x.trim().is_empty()) {
                    turns.push(text.to_owned());
                }
            }
        }
    }
    let mut questions = Vec::new();
    for line in std::fs::read_to_string(data.join("questions.jsonl"))?.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let q: serde_json::Value = serde_json::from_str(line)?;
        questions.push(q["question"].as_str().unwrap_or_default().to_owned());
    }
    // IDF over the turns, as a project's lexical statistics would give.
    let mut df: HashMap<String, usize> = HashMap::new();
    for t in &turns {
        for w in TextEncoder::tokens(t).into_iter().collect::<HashSet<_>>() {
            *df.entry(w).or_default() += 1;
        }
    }
    let n = turns.len() as f32;
    let idf = |t: &str| df.get(t).map_or(n.ln(), |&d| (n / d as f32).ln());
    let dim = Dim::default();
    let mut encoder = TextEncoder::new(dim, TextConfig::default());
    let t0 = Instant::now();
    let vectors: Vec<Hypervector> = turns
        .iter()
        .map(|t| encoder.encode(t, &idf))
        .collect::<Result<_, _>>()?;
    let queries: Vec<Hypervector> = questions
        .iter()
        .filter_map(|q| encoder.encode(q, &idf).ok())
        .collect();
    eprintln!(
        "{} turns, {} questions encoded in {:.1} s",
        vectors.len(),
        queries.len(),
        t0.elapsed().as_secs_f64()
    );
    let project = ProjectId::new("all")?;
    let items: Vec<(VectorId, _)> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| (VectorId(i as u64), v.into()))
        .collect();
    let open = |arm: Arm| -> Res<(tempfile::TempDir, SegmentStore)> {
        let dir = tempfile::tempdir()?;
        let store = SegmentStore::create(dir.path(), dim, arm.config())?;
        for chunk in items.chunks(1000) {
            store.insert_batch(&project, chunk)?;
        }
        let t = Instant::now();
        store.catch_up_indexes(None)?;
        if let Arm::Graph(..) = arm {
            eprintln!(
                "graph caught up {:.1} s after the inserts",
                t.elapsed().as_secs_f64()
            );
        }
        Ok((dir, store))
    };
    let run = |store: &SegmentStore| -> Res<Run> {
        let mut lists = Vec::new();
        let mut times = Vec::new();
        for q in &queries {
            let t = Instant::now();
            let hits = store.search(&project, &SearchRequest::new(q.into(), DEPTH))?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            lists.push(hits.iter().map(|h| h.id.0).collect());
        }
        times.sort_by(f64::total_cmp);
        Ok((lists, times))
    };
    let pct = |t: &[f64], p: f64| t[((t.len() - 1) as f64 * p).round() as usize];
    let (_d, exact_store) = open(Arm::Prefix(0))?;
    run(&exact_store)?; // warm the page cache
    let (exact, times) = run(&exact_store)?;
    println!(
        "exact scan of {} vectors: p50 {:.2} ms, p99 {:.2} ms",
        vectors.len(),
        pct(&times, 0.5),
        pct(&times, 0.99)
    );
    for arm in arms {
        let (_d, store) = open(arm)?;
        run(&store)?;
        let (lists, times) = run(&store)?;
        let (mut o200, mut o10, mut whole) = (0.0, 0.0, 0usize);
        for (a, b) in exact.iter().zip(&lists) {
            let at = |l: &[u64], k: usize| l.iter().take(k).copied().collect::<HashSet<_>>();
            o200 +=
                at(a, DEPTH).intersection(&at(b, DEPTH)).count() as f64 / a.len().min(DEPTH) as f64;
            let common = at(a, 10).intersection(&at(b, 10)).count();
            o10 += common as f64 / a.len().min(10) as f64;
            whole += usize::from(common == a.len().min(10));
        }
        let q = exact.len() as f64;
        println!(
            "{}: top-200 overlap {:.4}, top-10 overlap {:.4}, exact top 10 kept whole {:.3}; p50 {:.2} ms, p99 {:.2} ms",
            arm.label(),
            o200 / q,
            o10 / q,
            whole as f64 / q,
            pct(&times, 0.5),
            pct(&times, 0.99)
        );
    }
    Ok(())
}
