//! The HTTP path measured against the in-process one, in one run: a memory of N short
//! memories (default 100,000) is built (and, past the HNSW threshold, its graph caught
//! up: the steady state a server reaches a few seconds after its writes), then
//! - `Memory::recall` p50 / p99 in process (one thread) and `POST /v1/projects/{p}/recall`
//!   with one client, alternating query by query,
//! - the same with 8 concurrent clients,
//! - observe over HTTP in batches of 1,000 (`observe_batch`), observations per second,
//!
//! and the ratio HTTP / in-process at p50 with the milliseconds the HTTP path adds.
//!
//! ```sh
//! cargo run --release --example http_load -- 100000
//! ```

mod common;
#[path = "common/notes.rs"]
mod notes;
use common::cpu_seconds;
use notes::{observe_notes, percentiles, query, sentence};

use std::sync::Arc;
use std::time::Instant;

use hypermem::hdv::SeededRng;
use hypermem::store::ProjectId;
use hypermem::{Memory, Profile, ProfileKind};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let n: usize = std::env::args().nth(1).map_or(Ok(100_000), |a| a.parse())?;
    let dir = tempfile::tempdir()?;
    let profile = Profile::builtin(ProfileKind::Lite)?;
    let memory = Arc::new(Memory::open(&profile, Some(dir.path()))?);
    let p = ProjectId::new("bench")?;
    let t = Instant::now();
    observe_notes(&memory, &p, n)?;
    // The questions and the later notes draw from a stream of their own.
    let mut rng = SeededRng::new(8);
    println!("built {n} memories in {:.1} s", t.elapsed().as_secs_f64());
    // Steady state: a project past the HNSW threshold is searched through its graph once
    // the background indexer has caught up (until then its tail is scanned).
    let t = Instant::now();
    memory.catch_up_indexes(None)?;
    println!("graph caught up in {:.1} s", t.elapsed().as_secs_f64());
    let queries: Vec<String> = (0..200).map(|_| query(&mut rng)).collect();
    for q in queries.iter().take(20) {
        memory.recall(&p, q, 10)?; // warm: the lexical index, caches
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let server_memory = memory.clone();
    std::thread::spawn(move || {
        let config = hypermem::api::http::ServeConfig {
            listen: "127.0.0.1:0".parse().expect("address"),
            ..Default::default()
        };
        hypermem::api::http::serve(server_memory, &config, |addr| {
            tx.send(addr).expect("send");
        })
        .expect("serve");
    });
    let url = format!("http://{}/v1/projects/bench", rx.recv()?);
    let agent: ureq::Agent = ureq::Agent::config_builder().build().into();
    let recall_http = |agent: &ureq::Agent, q: &str| -> f64 {
        let t = Instant::now();
        let mut r = agent
            .post(&format!("{url}/recall"))
            .send(json!({"query": q, "k": 10}).to_string())
            .expect("http recall");
        let _ = r.body_mut().read_to_string().expect("body");
        t.elapsed().as_secs_f64() * 1e3
    };
    for q in queries.iter().take(20) {
        recall_http(&agent, q);
    }
    // In process and over HTTP query by query, alternating: both sides see the machine in
    // the same state (on a shared machine, two phases minutes apart do not).
    let (mut in_process, mut one) = (Vec::new(), Vec::new());
    for q in &queries {
        let t = Instant::now();
        memory.recall(&p, q, 10).expect("recall");
        in_process.push(t.elapsed().as_secs_f64() * 1e3);
        one.push(recall_http(&agent, q));
    }
    let (ip50, ip99) = percentiles(in_process);
    println!("in process   recall p50 {ip50:.2} ms  p99 {ip99:.2} ms");
    // The bare round trip (no operation, no body): what any request pays.
    let health = format!("{}/healthz", url.split("/v1/").next().expect("base url"));
    let bare: Vec<f64> = (0..200)
        .map(|_| {
            let t = Instant::now();
            let mut r = agent.get(&health).call().expect("healthz");
            let _ = r.body_mut().read_to_string().expect("body");
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let (b50, _) = percentiles(bare);
    println!("HTTP round trip alone (GET /healthz) p50 {b50:.3} ms");
    let (h50, h99) = percentiles(one);
    println!(
        "HTTP, 1 client   recall p50 {h50:.2} ms  p99 {h99:.2} ms   (HTTP / in-process p50 {:.3}, +{:.2} ms)",
        h50 / ip50,
        h50 - ip50
    );
    let (t8, cpu8) = (Instant::now(), cpu_seconds());
    let eight: Vec<f64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|c| {
                let queries = &queries;
                let recall_http = &recall_http;
                s.spawn(move || {
                    let agent: ureq::Agent = ureq::Agent::config_builder().build().into();
                    queries
                        .iter()
                        .skip(c * 25)
                        .take(25)
                        .chain(queries.iter().take(25))
                        .map(|q| recall_http(&agent, q))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("client"))
            .collect()
    });
    let (wall8, cpu8) = (t8.elapsed().as_secs_f64(), cpu_seconds() - cpu8);
    let count8 = eight.len() as f64;
    let (e50, e99) = percentiles(eight);
    println!(
        "HTTP, 8 clients  recall p50 {e50:.2} ms  p99 {e99:.2} ms  ({:.0} recalls/s wall, {:.0} per CPU-second)",
        count8 / wall8,
        count8 / cpu8.max(1e-9)
    );
    let batches = 10;
    let (t, cpu) = (Instant::now(), cpu_seconds());
    for b in 0..batches {
        let events: Vec<_> = (0..1000)
            .map(|i| json!({"text": sentence(&mut rng, n + b * 1000 + i), "thread": format!("h{b}"), "source_id": format!("h{b}-{i}")}))
            .collect();
        let mut r = agent
            .post(&format!("{url}/observe_batch"))
            .send(json!({"events": events}).to_string())?;
        let _ = r.body_mut().read_to_string()?;
    }
    let (secs, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    println!(
        "HTTP observe_batch of 1,000: {:.0} observations/s wall, {:.0} per CPU-second",
        (batches * 1000) as f64 / secs,
        (batches * 1000) as f64 / cpu.max(1e-9)
    );
    std::process::exit(0);
}
