//! Pulse phases against their time budget (issues 14 and 34): a store of 20,000 events
//! (or `EVENTS`) in sealed episodes of 10 turns each, about 40 topics that share filler
//! words, one turn in five a question and one episode in three answered by the assistant;
//! then 20 ticks of the lite profile's budget (256 items, 200 ms per phase) while another
//! thread keeps observing new episodes as fast as it can (the load). Prints, per tick and
//! phase, the time spent against the budget, the items done and whether a budget stopped
//! it; ends with the worst phase's time over its budget (target ≤ 50 ms) and the events the
//! writer added meanwhile.
//!
//! `cargo run --release --example pulse [-- EVENTS]`

mod common;
use common::cpu_seconds;

use std::time::Instant;

use hypermem::hdv::SeededRng;
use hypermem::ledger::{EventKind, NewEvent, Role};
use hypermem::store::ProjectId;
use hypermem::{Memory, Profile, ProfileKind};

const FILLER: &[&str] = &["okay so", "well", "by the way", "honestly", "right"];

fn word(rng: &mut SeededRng) -> String {
    const C: &[u8] = b"bcdfghklmnprstvz";
    const V: &[u8] = b"aeiou";
    (0..3)
        .flat_map(|_| {
            [
                C[rng.below(C.len() as u64) as usize] as char,
                V[rng.below(V.len() as u64) as usize] as char,
            ]
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let events: usize = std::env::args().nth(1).map_or(Ok(20_000), |a| a.parse())?;
    let dir = tempfile::tempdir()?;
    let profile = Profile::builtin(ProfileKind::Lite)?;
    let budget = profile.pulse.budget;
    let memory = Memory::open(&profile, Some(dir.path()))?;
    let p = ProjectId::new("pulse")?;
    let mut rng = SeededRng::new(5);
    let topics: Vec<Vec<String>> = (0..40)
        .map(|_| (0..8).map(|_| word(&mut rng)).collect())
        .collect();
    // One sealed episode of 10 turns on a random topic.
    let episode = |e: usize, rng: &mut SeededRng| -> Result<(), hypermem::Error> {
        let w = &topics[rng.below(topics.len() as u64) as usize];
        let ep = memory.start_episode(&p, "a")?;
        let answered = rng.below(3) == 0;
        let batch: Vec<NewEvent> = (0..10)
            .map(|i| {
                let pick = |rng: &mut SeededRng| w[rng.below(8) as usize].clone();
                let ask = rng.below(5) == 0;
                let text = format!(
                    "{} the {} and the {} need {} today, {}{}",
                    FILLER[rng.below(5) as usize],
                    pick(rng),
                    pick(rng),
                    pick(rng),
                    pick(rng),
                    if ask { "?" } else { "" }
                );
                let role = if answered && i == 9 {
                    Role::Assistant
                } else {
                    Role::User
                };
                let mut ev = NewEvent::new(p.clone(), role, EventKind::Message, text)
                    .thread(format!("s{e}"));
                ev.agent = Some("a".into());
                ev
            })
            .collect();
        memory.observe_batch(&batch)?;
        memory.end_episode(&p, ep, None, None)?;
        Ok(())
    };
    let t = Instant::now();
    for e in 0..events / 10 {
        episode(e, &mut rng)?;
    }
    println!(
        "built {events} events in {} episodes in {:.1} s",
        events / 10,
        t.elapsed().as_secs_f64()
    );
    let limit_ms = budget.time_per_phase.as_secs_f64() * 1e3;
    println!(
        "budget: {} items, {limit_ms:.0} ms per phase",
        budget.items_per_phase
    );
    let mut worst: (f64, &str) = (0.0, "");
    let stop = std::sync::atomic::AtomicBool::new(false);
    let added = std::thread::scope(|scope| -> Result<usize, Box<dyn std::error::Error>> {
        let writer = scope.spawn(|| {
            let mut rng = SeededRng::new(6);
            let mut e = events / 10;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                episode(e, &mut rng).expect("observe under load");
                e += 1;
            }
            (e - events / 10) * 10
        });
        let ticks = ticks(&memory, &p, limit_ms, &mut worst);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let added = writer.join().expect("the writer thread");
        ticks?;
        Ok(added)
    })?;
    println!(
        "worst phase: {} at {:.1} ms = {:+.1} ms over its {limit_ms:.0} ms budget (target <= +50 ms); the writer added {added} events meanwhile",
        worst.1,
        worst.0,
        worst.0 - limit_ms
    );
    Ok(())
}

/// 20 ticks, printed; the slowest phase goes to `worst`.
fn ticks(
    memory: &Memory,
    p: &ProjectId,
    limit_ms: f64,
    worst: &mut (f64, &'static str),
) -> Result<(), hypermem::Error> {
    for tick in 1..=20 {
        let cpu = cpu_seconds();
        let receipt = memory.pulse_tick(p)?;
        let cpu = cpu_seconds() - cpu;
        println!(
            "tick {tick}: {:.0} ms wall, {:.0} ms CPU",
            receipt.elapsed_ms,
            cpu * 1e3
        );
        for ph in &receipt.phases {
            println!(
                "  {:<24} {:>7.1} ms ({:.2} x budget) {:>4} items{}  {}",
                ph.phase,
                ph.elapsed_ms,
                ph.elapsed_ms / limit_ms,
                ph.items,
                if ph.budget_exhausted {
                    ", budget spent"
                } else {
                    ""
                },
                ph.produced
            );
            if ph.elapsed_ms > worst.0 {
                *worst = (ph.elapsed_ms, ph.phase.name());
            }
        }
    }
    Ok(())
}
