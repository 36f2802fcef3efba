//! Cognitive layers: episode append and seal, consolidation of 10,000 episodes, ripple over
//! a 1,000,000-edge synapse graph, and a full pulse tick on a store of 100,000 memories
//! (checked against its time budget). Setup-heavy numbers are printed as a report; the
//! repeatable operations are criterion benchmarks.
//!
//! `cargo bench --bench cognition` (`HDV_BENCH_QUICK=1` uses 1,000 episodes and 100,000
//! edges). Files go to `$HYPERMEM_BENCH_DIR` or the system temp directory.

mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use hypermem::cognition::{Cognition, CognitionConfig, PulseBudget, RippleParams};
use hypermem::hdv::encode::ItemMemory;
use hypermem::hdv::{Bundler, Dim, Hypervector, SeededRng};
use hypermem::ledger::{EventKind, Ledger, LedgerConfig, NewEvent};
use hypermem::store::ProjectId;

fn topic_vector(words: &ItemMemory, dim: Dim, topic: u64, rng: &mut SeededRng) -> Hypervector {
    let mut b = Bundler::new(dim);
    for _ in 0..5 {
        b.add(&words.vector(&format!("t{topic}-w{}", rng.below(30))));
    }
    b.binarize(rng.next_u64()).unwrap()
}

fn cognition(c: &mut Criterion) {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let quick = std::env::var_os("HDV_BENCH_QUICK").is_some();
    let (episodes, edges) = if quick {
        (1_000, 100_000)
    } else {
        (10_000, 1_000_000)
    };
    let dim = Dim::default();
    let dir = common::bench_dir();
    let ledger = Arc::new(Ledger::open(dir.path().join("l.db"), LedgerConfig::default()).unwrap());
    let cog = Cognition::new(ledger.clone(), dim, CognitionConfig::default());
    let p = ProjectId::new("bench").unwrap();
    let words = ItemMemory::new(dim, 1);
    let mut rng = SeededRng::new(1);

    // 100,000 memories: raw events appended in batches (the store a pulse walks over).
    let t = Instant::now();
    let mut event_ids = Vec::new();
    for b in 0..100 {
        let batch: Vec<_> = (0..1000)
            .map(|i| {
                NewEvent::new(
                    p.clone(),
                    common::turn_role(i),
                    EventKind::Message,
                    format!("memory {b}-{i} about topic {}", i % 50),
                )
            })
            .collect();
        event_ids.extend(ledger.append_batch(&batch).unwrap());
    }
    println!(
        "cognition: 100,000 events appended in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    // Episodes of 3 events from 50 topics, sealed.
    let t = Instant::now();
    for e in 0..episodes {
        let ep = cog.start_episode(&p, &format!("agent{}", e % 8)).unwrap();
        let topic = (e % 50) as u64;
        for j in 0..3 {
            let v = topic_vector(&words, dim, topic, &mut rng);
            cog.append_to_episode(&p, ep, event_ids[(e * 3 + j) % event_ids.len()], &v)
                .unwrap();
        }
        cog.end_episode(&p, ep, None, Some(if e % 3 == 0 { -1.0 } else { 1.0 }))
            .unwrap();
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "cognition: {episodes} episodes of 3 events started, appended, sealed in {secs:.1} s ({:.0} episodes/s; each step its own synced transaction)",
        episodes as f64 / secs
    );

    let t = Instant::now();
    let (done, created) = cog.consolidate(&p, episodes).unwrap();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "cognition: consolidated {done} episodes into {created} concepts in {secs:.2} s ({:.0} episodes/s)",
        done as f64 / secs
    );

    // A synapse graph of `edges` edges over 100,000 memories.
    let t = Instant::now();
    let nodes = 100_000u64;
    let mut pairs = Vec::with_capacity(10_000);
    for _ in 0..edges {
        pairs.push((rng.below(nodes), rng.below(nodes)));
        if pairs.len() == 10_000 {
            cog.strengthen_pairs(&p, &pairs).unwrap();
            pairs.clear();
        }
    }
    cog.strengthen_pairs(&p, &pairs).unwrap();
    println!(
        "cognition: {edges} synapse strengthenings written in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    // The first pulse tick on this store, against its budget.
    let budget = PulseBudget::default();
    let receipt = cog.tick(&p, budget).unwrap();
    let limit = budget.time_per_phase.as_secs_f64() * 1e3 * receipt.phases.len() as f64;
    println!(
        "cognition: first pulse tick {:.1} ms (budget {limit:.0} ms = {} phases x {:?}) -> {}",
        receipt.elapsed_ms,
        receipt.phases.len(),
        budget.time_per_phase,
        if receipt.elapsed_ms <= limit {
            "within budget"
        } else {
            "OVER BUDGET"
        }
    );
    for ph in &receipt.phases {
        println!(
            "    {:<24} {:>5} items {:>8.1} ms  {}",
            ph.phase, ph.items, ph.elapsed_ms, ph.produced
        );
    }

    let mut g = c.benchmark_group("cognition");
    g.sample_size(20);
    let ep = cog.start_episode(&p, "bench-agent").unwrap();
    let v = topic_vector(&words, dim, 1, &mut rng);
    let mut k = 0;
    g.bench_function("episode_append", |b| {
        b.iter(|| {
            k += 1;
            cog.append_to_episode(&p, ep, event_ids[k % event_ids.len()], black_box(&v))
                .unwrap()
        })
    });
    g.bench_function("episode_start_append3_seal", |b| {
        b.iter(|| {
            let ep = cog.start_episode(&p, "sealer").unwrap();
            for &id in &event_ids[..3] {
                cog.append_to_episode(&p, ep, id, &v).unwrap();
            }
            cog.end_episode(&p, ep, None, None).unwrap();
        })
    });
    let params = RippleParams::default();
    let mut s = 0u64;
    g.bench_function(format!("ripple_{edges}_edges_depth3_nodes64"), |b| {
        b.iter(|| {
            s = (s + 7919) % nodes;
            cog.ripple(&p, &[s], params).unwrap()
        })
    });
    g.bench_function("pulse_tick_steady_state", |b| {
        b.iter(|| cog.tick(&p, budget).unwrap())
    });
    g.finish();
}

criterion_group!(benches, cognition);
criterion_main!(benches);
