//! Pulse phases against their time budget on a store of 20,000 events (issue 14): 2,000
//! sealed episodes of 10 user turns each, about 40 topics that share filler words, then
//! ticks of the lite profile's budget (256 items, 200 ms per phase) until no phase has
//! work left. Prints, per tick and phase, the time spent against the budget, the items
//! done and whether a budget stopped it; ends with the worst phase time as a multiple of
//! the budget (target ≤ 1.5 ×).
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
    let t = Instant::now();
    for e in 0..events / 10 {
        let w = &topics[rng.below(topics.len() as u64) as usize];
        let ep = memory.start_episode(&p, "a")?;
        let batch: Vec<NewEvent> = (0..10)
            .map(|_| {
                let pick = |rng: &mut SeededRng| w[rng.below(8) as usize].clone();
                let text = format!(
                    "{} the {} and the {} need {} today, {}",
                    FILLER[rng.below(5) as usize],
                    pick(&mut rng),
                    pick(&mut rng),
                    pick(&mut rng),
                    pick(&mut rng)
                );
                let mut ev = NewEvent::new(p.clone(), Role::User, EventKind::Message, text)
                    .thread(format!("s{e}"));
                ev.agent = Some("a".into());
                ev
            })
            .collect();
        memory.observe_batch(&batch)?;
        memory.end_episode(&p, ep, None, None)?;
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
    for tick in 1..=40 {
        let cpu = cpu_seconds();
        let receipt = memory.pulse_tick(&p)?;
        let cpu = cpu_seconds() - cpu;
        println!(
            "tick {tick}: {:.0} ms wall, {:.0} ms CPU",
            receipt.elapsed_ms,
            cpu * 1e3
        );
        let mut busy = false;
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
            busy |= ph.budget_exhausted;
            if ph.elapsed_ms > worst.0 {
                worst = (ph.elapsed_ms, ph.phase);
            }
        }
        if !busy {
            break;
        }
    }
    println!(
        "worst phase: {} at {:.1} ms = {:.2} x its {limit_ms:.0} ms budget (target <= 1.5 x)",
        worst.1,
        worst.0,
        worst.0 / limit_ms
    );
    Ok(())
}
