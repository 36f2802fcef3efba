//! The Qdrant tier (feature `scale`) beside the mmap segment store in one run, printed as a
//! report: inserts in batches of 1,000 (wall, and CPU seconds of this process and of the
//! Qdrant server), the time Qdrant takes to index them, top-10 search latency p50 / p99
//! over 200 queries, and recall@10 of Qdrant's HNSW over binary quantization against the
//! exact scan, on clustered data made like `../shared/bench/make_data.py --kind clustered`
//! (1,000 centres, each member a centre with bits flipped with p ~ U[0.10, 0.20], queries
//! fresh members), at D = 8,192; and, once Qdrant has indexed them, the same points upserted
//! by a bare qdrant-client in batches of 1,000 into a collection of the same layout (the
//! tier's insert rate as a ratio of it).
//!
//! `cargo bench --features scale --bench qdrant` (`HYPERMEM_BENCH_N`, default 100,000).
//! Starts `../shared/qdrant/qdrant` (or `$HYPERMEM_QDRANT_BIN`) on free loopback ports with
//! storage in a temp directory, or uses `$HYPERMEM_BENCH_QDRANT_URL`.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hypermem::QdrantSettings;
use hypermem::hdv::{Dim, HvRef, Hypervector, SeededRng};
use hypermem::store::{
    ProjectId, QdrantTier, SearchRequest, SegmentStore, SegmentStoreConfig, VectorId, VectorTier,
};

const DIM: usize = 8_192;
const CENTRES: usize = 1_000;
const QUERIES: usize = 200;

/// User + system CPU seconds of process `pid` ("self" for this one), from /proc.
/// The server process (if started here), its gRPC URL, and its storage (removed on drop).
struct Server(Option<Child>, String, #[allow(dead_code)] tempfile::TempDir);

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn server() -> Server {
    let dir = tempfile::tempdir().unwrap();
    if let Ok(url) = std::env::var("HYPERMEM_BENCH_QDRANT_URL") {
        return Server(None, url, dir);
    }
    let bin = std::env::var("HYPERMEM_QDRANT_BIN").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/qdrant/qdrant").to_owned()
    });
    let (http, grpc) = (port(), port());
    let d = dir.path();
    let child = Command::new(&bin)
        .arg("--disable-telemetry")
        .current_dir(d)
        .env("QDRANT__SERVICE__HOST", "127.0.0.1")
        .env("QDRANT__SERVICE__HTTP_PORT", http.to_string())
        .env("QDRANT__SERVICE__GRPC_PORT", grpc.to_string())
        .env("QDRANT__SERVICE__ENABLE_STATIC_CONTENT", "false")
        .env("QDRANT__STORAGE__STORAGE_PATH", d.join("storage"))
        .env("QDRANT__STORAGE__SNAPSHOTS_PATH", d.join("snapshots"))
        .env("QDRANT__STORAGE__TEMP_PATH", d.join("tmp"))
        .env("QDRANT__TELEMETRY_DISABLED", "true")
        .env("QDRANT_INIT_FILE_PATH", d.join(".qdrant-initialized"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {bin}: {e} (set HYPERMEM_QDRANT_BIN)"));
    std::thread::sleep(Duration::from_millis(300));
    Server(Some(child), format!("http://127.0.0.1:{grpc}"), dir)
}

fn clustered(n: usize, seed: u64) -> (Vec<Hypervector>, Vec<Hypervector>) {
    let dim = Dim::new(DIM).unwrap();
    let mut rng = SeededRng::new(seed);
    let centres: Vec<Hypervector> = (0..CENTRES)
        .map(|_| Hypervector::random_from(dim, &mut rng))
        .collect();
    let member = |i: usize, salt: u64| {
        let p = 0.10 + 0.10 * ((i as u64 * 2_654_435_761 + salt) % 1_000) as f64 / 1_000.0;
        centres[(i * 7_919 + salt as usize) % CENTRES]
            .with_noise(p, seed ^ (i as u64) << 1 ^ salt)
            .unwrap()
    };
    let base = (0..n).map(|i| member(i, 0)).collect();
    let queries = (0..QUERIES).map(|i| member(i, 1_000_003)).collect();
    (base, queries)
}

/// `vs` in batches of 1,000, each vector with its index as its id.
fn batches(vs: &[Hypervector]) -> impl Iterator<Item = Vec<(VectorId, HvRef<'_>)>> {
    vs.chunks(1_000).enumerate().map(|(c, chunk)| {
        chunk
            .iter()
            .enumerate()
            .map(|(i, v)| (VectorId((c * 1_000 + i) as u64), v.view()))
            .collect()
    })
}

fn insert_all(t: &dyn VectorTier, p: &ProjectId, vs: &[Hypervector]) -> f64 {
    let t0 = Instant::now();
    for items in batches(vs) {
        t.insert_batch(p, &items).unwrap();
    }
    t0.elapsed().as_secs_f64()
}

/// Upserts `vs` into `collection` with a bare client (the points built by `tier`), in
/// requests of 1,000 that wait for the server's acknowledgement; the seconds it took.
fn bare_upsert(
    url: &str,
    tier: &QdrantTier,
    collection: &str,
    p: &ProjectId,
    vs: &[Hypervector],
) -> f64 {
    use qdrant_client::Qdrant;
    use qdrant_client::qdrant::UpsertPointsBuilder;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let client = Qdrant::from_url(url)
        .skip_compatibility_check()
        .build()
        .unwrap();
    let t0 = Instant::now();
    for items in batches(vs) {
        let points = tier.points(p, &items);
        runtime
            .block_on(client.upsert_points(UpsertPointsBuilder::new(collection, points).wait(true)))
            .unwrap();
    }
    t0.elapsed().as_secs_f64()
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    if std::env::args().any(|a| a == "--list") {
        println!("qdrant: report");
        return;
    }
    let n: usize = std::env::var("HYPERMEM_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let server = server();
    let qdrant_pid = server.0.as_ref().map(|c| c.id().to_string());
    let dim = Dim::new(DIM).unwrap();
    let p = ProjectId::new("bench").unwrap();
    let (base, queries) = clustered(n, 7);
    let dir = common::bench_dir();
    let mmap = SegmentStore::create(
        dir.path().join("s"),
        dim,
        SegmentStoreConfig {
            hnsw_threshold: usize::MAX,
            ..SegmentStoreConfig::default()
        },
    )
    .unwrap();
    let settings = QdrantSettings {
        url: server.1.clone(),
        collection: format!("bench{}", std::process::id()),
        ..QdrantSettings::default()
    };
    let mut qdrant = None;
    for _ in 0..100 {
        match QdrantTier::open(dim, &settings) {
            Ok(t) => {
                qdrant = Some(t);
                break;
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
    let qdrant = qdrant.expect("Qdrant answers");

    println!("N = {n} clustered vectors of {DIM} bits, inserts in batches of 1,000");
    let mmap_secs = insert_all(&mmap, &p, &base);
    let (cpu0, srv0) = (
        common::cpu_seconds(),
        qdrant_pid
            .as_deref()
            .map_or(0.0, common::process_cpu_seconds),
    );
    let q_secs = insert_all(&qdrant, &p, &base);
    let (cpu1, srv1) = (
        common::cpu_seconds(),
        qdrant_pid
            .as_deref()
            .map_or(0.0, common::process_cpu_seconds),
    );
    println!(
        "insert   mmap   {:>9.0} vectors/s wall (2 fdatasync per batch)",
        n as f64 / mmap_secs
    );
    println!(
        "insert   qdrant {:>9.0} vectors/s wall, {:.0} per client CPU-second, {:.0} per (client + server) CPU-second",
        n as f64 / q_secs,
        n as f64 / (cpu1 - cpu0).max(1e-9),
        n as f64 / ((cpu1 - cpu0) + (srv1 - srv0)).max(1e-9)
    );
    let t0 = Instant::now();
    let indexed = qdrant
        .wait_until_indexed(Duration::from_secs(1_800))
        .unwrap();
    println!(
        "indexing qdrant {:.1} s after the last insert: {indexed:?} (points, indexed vectors)",
        t0.elapsed().as_secs_f64()
    );
    // Once Qdrant has indexed them (so neither run shares the server with the other's
    // indexing): the same points (as the tier builds them) into a collection of the same layout,
    // upserted by a bare qdrant-client in batches of 1,000 with `wait`: what the tier's
    // checks (ids already stored) and chunking cost.
    let bare_settings = QdrantSettings {
        collection: format!("bare{}", std::process::id()),
        ..settings.clone()
    };
    let bare_tier = QdrantTier::open(dim, &bare_settings).unwrap();
    let bare_secs = bare_upsert(&server.1, &bare_tier, &bare_settings.collection, &p, &base);
    println!(
        "insert   bare qdrant-client upsert of the same points {:>9.0} vectors/s wall; the tier {:.2} x of it",
        n as f64 / bare_secs,
        bare_secs / q_secs
    );
    bare_tier.drop_project(&p).unwrap();

    let lat = |t: &dyn VectorTier| -> (Vec<f64>, Vec<Vec<hypermem::store::Hit>>) {
        let mut ms = Vec::new();
        let mut hits = Vec::new();
        for q in &queries {
            let t0 = Instant::now();
            let h = t.search(&p, &SearchRequest::new(q.view(), 10)).unwrap();
            ms.push(t0.elapsed().as_secs_f64() * 1e3);
            hits.push(h);
        }
        ms.sort_by(f64::total_cmp);
        (ms, hits)
    };
    let (mmap_ms, exact) = lat(&mmap);
    let (q_ms, approx) = lat(&qdrant);
    let mut found = 0;
    for (e, a) in exact.iter().zip(&approx) {
        let bound = e.last().map_or(0, |h| h.distance);
        found += a
            .iter()
            .filter(|h| h.distance <= bound)
            .count()
            .min(e.len());
    }
    let recall = found as f64 / (exact.iter().map(Vec::len).sum::<usize>()) as f64;
    println!(
        "search   mmap   p50 {:.2} ms  p99 {:.2} ms (exact scan)",
        percentile(&mmap_ms, 0.5),
        percentile(&mmap_ms, 0.99)
    );
    println!(
        "search   qdrant p50 {:.2} ms  p99 {:.2} ms  ratio p50 {:.2} x mmap",
        percentile(&q_ms, 0.5),
        percentile(&q_ms, 0.99),
        percentile(&q_ms, 0.5) / percentile(&mmap_ms, 0.5)
    );
    let mut exact_distances = true;
    for (q, a) in queries.iter().zip(&approx) {
        for h in a {
            exact_distances &= base[h.id.0 as usize].hamming(q) == h.distance;
        }
    }
    println!(
        "recall@10 qdrant (HNSW over binary quantization, ef = {}) vs exact: {recall:.4}; distances exact: {exact_distances}",
        settings.ef_search
    );
    qdrant.drop_project(&p).unwrap();
}
