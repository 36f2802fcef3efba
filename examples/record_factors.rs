//! Taking a role–filler record apart without knowing its fillers, with `hdv::Resonator`.
//!
//! The quick start builds `{who: maya, event: school, when: september}` and reads it by
//! unbinding a role it already knows. Here neither the roles present nor their fillers are
//! given: a resonator over two codebooks (every role name, every candidate filler) factors
//! the record. A record is a bundle of `role ⊕ filler` terms, so each run settles on one
//! term (the record is similar to each of its terms); that role is then taken out of the
//! role codebook and the resonator runs again, until the best pair is no more similar to
//! the record than chance allows (5 σ of random pairs).
//!
//! A record is a superposition, and a run from the default start (every codebook's
//! superposition) can settle on a mixture of its terms instead of one of them: on another
//! three-field record (8,192 bits, other names) the first run found nothing above chance
//! whatever the tie seed. So when a run's best pair is within chance, the loop restarts
//! from random estimates ([`Resonator::factor_from_random`], up to 15 seeds) before it
//! concludes that nothing is left; `hdv/tests/resonator.rs` reads that record this way.
//!
//! `cargo run --release --example record_factors`

use hypermem::hdv::encode::{ItemMemory, RecordEncoder};
use hypermem::hdv::{Dim, Hypervector, Resonator};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    eprintln!("active kernel: {}", hypermem::hdv::kernel_name());
    let dim = Dim::round_up(10_000)?;
    let symbols = ItemMemory::new(dim, 7);
    let mut records = RecordEncoder::new(dim, 42);
    let fillers = [
        "maya",
        "september",
        "school",
        "python",
        "dark mode",
        "berlin",
        "dentist",
        "tuesday",
        "invoice",
        "garden",
        "piano",
        "marathon",
    ];
    let mut roles = vec!["who", "event", "when", "where", "tool", "topic"];
    let record = records.encode(
        &[
            ("who", symbols.vector("maya")),
            ("event", symbols.vector("school")),
            ("when", symbols.vector("september")),
        ],
        1,
    )?;
    println!("record {{who: maya, event: school, when: september}}, read blind:");
    let filler_vectors: Vec<Hypervector> = fillers.iter().map(|f| symbols.vector(f)).collect();
    let chance = 5.0 / (dim.bits() as f64).sqrt();
    while !roles.is_empty() {
        let role_vectors: Vec<Hypervector> =
            roles.iter().map(|r| records.role(r).clone()).collect();
        let resonator = Resonator::new(&[role_vectors, filler_vectors.clone()])?;
        // The default start first, then random restarts, until a pair stands out.
        let mut attempt = None;
        for seed in 0..16u64 {
            let found = if seed == 0 {
                resonator.factor(&record, 100, 0)?
            } else {
                resonator.factor_from_random(&record, 100, seed)?
            };
            let (role, filler) = (roles[found.indices[0]], fillers[found.indices[1]]);
            // How similar the record is to the pair's binding: its share of the bundle.
            let term = records.role(role).bind(&symbols.vector(filler));
            let similarity = record.similarity(&term);
            let stands_out = similarity >= chance;
            attempt = Some((found, role, filler, similarity, seed));
            if stands_out {
                break;
            }
        }
        let Some((found, role, filler, similarity, restarts)) = attempt else {
            break;
        };
        if similarity < chance {
            println!(
                "  nothing more: the best pair ({role}: {filler}) scores {similarity:+.3}, within chance (< {chance:.3})"
            );
            break;
        }
        println!(
            "  {role:<6} -> {filler:<10} (similarity {similarity:+.3}, {} iterations, {restarts} random restarts{})",
            found.iterations,
            if found.converged {
                ""
            } else {
                ", not converged"
            }
        );
        roles.retain(|r| *r != role);
    }
    Ok(())
}
