//! Quick start on the lite profile: an agent's memories go into `Memory` (the governed
//! ledger, the vector store, synapses), a belief is asserted and then corrected through a
//! governance plan, a raw value is revised, and questions are answered by recall — ranked
//! lists with their score breakdown (a newer value first), a budgeted context pack with its
//! receipt — and the project is mapped.
//!
//! ```sh
//! cargo run --release --example quickstart
//! ```
//!
//! The data directory is the profile's (`./hypermem-data`); the `quickstart` project is
//! erased and rebuilt on every run. A role–filler record at the end shows structured
//! recall with the `hdv` algebra alone: unbinding a role and cleaning up the noisy result.

use std::time::Instant;

use hypermem::governance::{Op, Ownership, Plan, PlanOutcome};
use hypermem::hdv::Codebook;
use hypermem::hdv::encode::{ItemMemory, RecordEncoder};
use hypermem::ledger::{EventKind, NewEvent, Role};
use hypermem::store::ProjectId;
use hypermem::{Memory, Profile, ProfileKind};

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
    // Query syntax: a quoted phrase the results must contain, and a filter.
    "\"search endpoint\" role:user",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let profile = Profile::load(Profile::bundled_path(ProfileKind::Lite))?;
    println!(
        "hypermem quickstart: profile {}, D = {} bits, kernel {}",
        profile.kind.name(),
        profile.dim.bits(),
        hypermem::hdv::kernel_name()
    );
    let memory = Memory::open(&profile, None)?;
    let project = ProjectId::new("quickstart")?;
    memory.forget_project(&project)?;

    // Two sessions: the user states things, the assistant acknowledges.
    let start = Instant::now();
    let mut events = Vec::new();
    for (i, text) in MEMORIES.iter().enumerate() {
        let session = if i < MEMORIES.len() / 2 {
            "monday"
        } else {
            "friday"
        };
        events.push(
            NewEvent::new(project.clone(), Role::User, EventKind::Message, *text)
                .thread(session)
                .session(session),
        );
    }
    let ids = memory.observe_batch(&events)?;
    println!(
        "observed {} memories in {:.1} ms (ledger + encoding + vectors + synapses) under {}",
        ids.len(),
        start.elapsed().as_secs_f64() * 1e3,
        memory.data_dir().display()
    );

    // A governed belief: asserted from the user's own words, then corrected by a later one.
    let plan = Plan::single(
        project.clone(),
        "theme-1",
        Op::Assert {
            key: "user.editor_theme".into(),
            statement: "prefers dark mode".into(),
            ownership: Ownership::User,
            agent: None,
            confidence: 0.9,
            evidence: vec![ids[0]],
        },
    );
    memory.apply_plan(&plan)?;
    let switch = memory.observe(
        NewEvent::new(
            project.clone(),
            Role::User,
            EventKind::Message,
            "Actually I switched my editor to light mode.",
        )
        .thread("friday")
        .session("friday"),
    )?;
    let correction = Plan::single(
        project.clone(),
        "theme-2",
        Op::Correct {
            key: "user.editor_theme".into(),
            statement: "prefers light mode".into(),
            evidence: vec![switch],
            expected_version: Some(1),
            confidence: 1.0,
        },
    );
    if let PlanOutcome::Applied { results } = memory.apply_plan(&correction)? {
        println!("belief user.editor_theme corrected: {results:?}");
    }
    // A raw revision, with no governance plan: recall orders the newer value first
    // (recall-time supersession; the hit says which event it is newer than).
    memory.observe(
        NewEvent::new(
            project.clone(),
            Role::User,
            EventKind::Message,
            "The search endpoint rate limit was raised to 900 requests per minute.",
        )
        .thread("friday")
        .session("friday"),
    )?;

    for query in QUERIES {
        println!("\nquery: {query}");
        for hit in memory.recall(&project, query, 3)? {
            let mut parts: Vec<String> = hit
                .fused
                .breakdown
                .iter()
                .map(|b| format!("{}#{}", b.signal, b.number()))
                .collect();
            if let Some(old) = hit.supersedes {
                parts.push(format!("newer than #{old}"));
            }
            println!(
                "  {:.4} [{}] #{} {}",
                hit.fused.score,
                parts.join(" "),
                hit.event.id,
                hit.event.content
            );
        }
    }

    let pack = memory.recall_pack(
        &project,
        "what editor theme does the user like",
        None,
        1000,
        None,
    )?;
    println!(
        "\ncontext pack for \"what editor theme does the user like\": {} of {} tokens",
        pack.used, pack.budget
    );
    for (line, text) in &pack.items {
        println!(
            "  [{} #{} {} tok] {}   <- {}",
            line.slot, line.id, line.tokens, text, line.reason
        );
    }
    println!("  suppressed: {}", pack.suppressed.len());

    // The project at a glance.
    let map = memory.map(&project, 3)?;
    println!(
        "\nmap: {} events in {} threads, {} warm / {} cold vectors, {} synapses, beliefs {:?}",
        map.events,
        map.thread_count,
        map.tiers.warm,
        map.tiers.cold,
        map.synapse_count,
        map.beliefs
    );
    for hub in &map.hubs {
        println!(
            "  hub #{} ({} links): {}",
            hub.event, hub.degree, hub.preview
        );
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
