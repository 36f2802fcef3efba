//! Quick start on the lite profile: encode an agent's memories as hypervectors, store them
//! durably in the mmap segment store, and answer recall queries by Hamming search.
//!
//! ```sh
//! cargo run --release --example quickstart
//! ```
//!
//! Steps: load `profiles/lite.toml`; compute IDF weights over the memories (rare words count
//! more); encode every memory with the text encoder (words, character trigrams, word order);
//! append the vectors to the store under `<data_dir>/vectors` (project `quickstart`, replaced
//! on every run); for each query, search the store for the top 3 and print them with their
//! similarity (0 = unrelated, 1 = identical). A role–filler record then shows
//! structured recall: unbinding a role and cleaning up the noisy result.

use std::collections::HashMap;
use std::time::Instant;

use hypermem::hdv::encode::{ItemMemory, RecordEncoder, TextEncoder};
use hypermem::hdv::{Codebook, Hypervector};
use hypermem::store::{ProjectId, SearchRequest, SegmentStore, VectorId, VectorTier};
use hypermem::{Profile, ProfileKind};

const MEMORIES: &[&str] = &[
    "User prefers dark mode in every editor and terminal.",
    "The billing service deploys from the release branch every Tuesday.",
    "Postgres backups run nightly at 02:00 UTC and are copied to cold storage.",
    "User's daughter is called Maya and starts school in September.",
    "The staging cluster was migrated from Kubernetes 1.28 to 1.30 last week.",
    "Never run database migrations on Friday afternoons; the team agreed on this.",
    "The API rate limit for the search endpoint is 600 requests per minute.",
    "User is allergic to peanuts; avoid recommending recipes that contain them.",
    "The on-call rotation changes every Monday at 09:00 local time.",
    "Integration tests are flaky when the Redis container starts slowly.",
    "User wants weekly summaries on Friday instead of daily emails.",
    "The mobile app crash on login was caused by an expired OAuth token cache.",
    "Grafana dashboards for latency live in the observability folder.",
    "User's preferred programming language for scripts is Python.",
    "The data retention policy keeps raw logs for 30 days.",
    "Customer Acme renewed their contract for two more years in March.",
];

const QUERIES: &[&str] = &[
    "which theme does the user like for the editor",
    "when do database backups run",
    "what food allergy does the user have",
    "rate limit of the search API",
    "why did the mobile app crash at login",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let profile = Profile::load(Profile::bundled_path(ProfileKind::Lite))?;
    println!(
        "hypermem quickstart: profile {}, D = {} bits, kernel {}",
        profile.kind.name(),
        profile.dim.bits(),
        hypermem::hdv::kernel_name()
    );

    // IDF over the memories: ln(1 + N / df).
    let docs: Vec<Vec<String>> = MEMORIES.iter().map(|m| TextEncoder::tokens(m)).collect();
    let mut df: HashMap<&str, usize> = HashMap::new();
    for doc in &docs {
        let mut seen: Vec<&str> = doc.iter().map(String::as_str).collect();
        seen.sort_unstable();
        seen.dedup();
        for t in seen {
            *df.entry(t).or_default() += 1;
        }
    }
    let n = MEMORIES.len() as f32;
    let idf = |t: &str| (1.0 + n / df.get(t).copied().unwrap_or(0).max(1) as f32).ln();

    let mut encoder = TextEncoder::new(profile.dim, profile.text);
    let start = Instant::now();
    let vectors: Vec<Hypervector> = MEMORIES
        .iter()
        .map(|m| encoder.encode(m, &idf))
        .collect::<Result<_, _>>()?;
    let root = profile.data_dir.join("vectors");
    let store = SegmentStore::open_or_create(&root, profile.dim, profile.store)?;
    let project = ProjectId::new("quickstart")?;
    store.drop_project(&project)?;
    let batch: Vec<_> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| (VectorId(i as u64), v.view()))
        .collect();
    store.insert_batch(&project, &batch)?;
    println!(
        "encoded and durably stored {} memories in {:.2} ms under {}",
        MEMORIES.len(),
        start.elapsed().as_secs_f64() * 1e3,
        root.display()
    );

    for query in QUERIES {
        let q = encoder.encode(query, &idf)?;
        println!("\nquery: {query}");
        for hit in store.search(&project, &SearchRequest::new(q.view(), 3))? {
            let similarity = 1.0 - 2.0 * f64::from(hit.distance) / profile.dim.bits() as f64;
            let i = hit.id.0 as usize;
            println!("  {similarity:+.3}  #{i:<2} {}", MEMORIES[i]);
        }
    }

    // Structured memory: a role-filler record, queried by unbinding a role.
    let symbols = ItemMemory::new(profile.dim, profile.text.seed);
    let mut book = Codebook::new(profile.dim);
    for s in ["maya", "september", "school", "python", "dark mode"] {
        book.insert(s.to_owned(), &symbols.vector(s))?;
    }
    let mut records = RecordEncoder::new(profile.dim, 42);
    let fact = records.encode(
        &[
            ("who", symbols.vector("maya")),
            ("event", symbols.vector("school")),
            ("when", symbols.vector("september")),
        ],
        1,
    )?;
    println!("\nrecord {{who: maya, event: school, when: september}}");
    for role in ["who", "event", "when"] {
        let noisy = records.unbind(&fact, role)?;
        let m = book.cleanup(&noisy)?.expect("codebook is not empty");
        let similarity = 1.0 - 2.0 * f64::from(m.distance) / profile.dim.bits() as f64;
        println!(
            "  unbind {role:<5} -> {} (similarity {similarity:+.3})",
            m.label
        );
    }
    Ok(())
}
