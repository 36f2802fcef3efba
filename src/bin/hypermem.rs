//! `hypermem`: the operator's command line over one data directory.
//!
//! The data directory comes from `--data-dir`, else `HYPERMEM_DATA_DIR`, else the profile.
//! Every command prints JSON with `--json`. Errors go to stderr with a non-zero exit code.

use std::path::PathBuf;
use std::process::ExitCode;

/// `println!` that ends quietly when the reader closed stdout (`hypermem … | head`): it
/// has what it wanted, and a panic on the broken pipe would be noise. Other write errors
/// are reported on stderr.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        if let Err(e) = writeln!(stdout, $($arg)*)
            && e.kind() != std::io::ErrorKind::BrokenPipe
        {
            eprintln!("error: cannot write to stdout: {e}");
        }
    }};
}

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};
use hypermem::api::{self, Api, ApiError};
use hypermem::governance::Plan;
use hypermem::{ErrorClass, Memory, Profile, ProfileKind, Reason};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

/// jemalloc instead of the system allocator (for SQLite's allocations too): the write path
/// allocates on one core and frees on the other (the ledger append beside the parallel
/// encode), where glibc's arena locks cost ≈ 10 % of ingest, and concurrent recalls spend
/// less in it (`docs/EXPERIMENTS.md`; mimalloc was measured too and left a 50 ms tail
/// under eight concurrent HTTP clients).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(
    name = "hypermem",
    version,
    about = "Governed long-term memory for AI agents"
)]
struct Cli {
    /// Data directory (default: $HYPERMEM_DATA_DIR, else the profile's data_dir).
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    /// Profile file (default: the built-in lite profile).
    #[arg(long, global = true)]
    profile: Option<PathBuf>,
    /// Print JSON (one document on stdout, errors included).
    #[arg(long, global = true)]
    json: bool,
    /// Create the data directory if it does not exist (`init` always does).
    #[arg(long, global = true)]
    create: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create (or open) the data directory and apply migrations.
    Init,
    /// Record one observation.
    Observe {
        /// Project.
        #[arg(long)]
        project: String,
        /// Role: user, assistant, tool, system.
        #[arg(long, default_value = "user")]
        role: String,
        /// Kind: message, observation, action, ...
        #[arg(long, default_value = "message")]
        kind: String,
        /// Thread.
        #[arg(long)]
        thread: Option<String>,
        /// Session.
        #[arg(long)]
        session: Option<String>,
        /// Agent.
        #[arg(long)]
        agent: Option<String>,
        /// The document or collection the content comes from (`source:` in queries).
        #[arg(long)]
        source: Option<String>,
        /// Who spoke, by name (a conversation of named participants): a field of its own,
        /// indexed for recall beside the text.
        #[arg(long)]
        speaker: Option<String>,
        /// When it happened: RFC 3339 (`2025-02-01T09:30:00+01:00`), a date (`2024-03-15`,
        /// `May 8, 2023 2:30 pm`) or epoch ms; default now.
        #[arg(long)]
        at: Option<String>,
        /// The content's dense embedding (any model, one dimension per project): a file
        /// holding a JSON array of numbers.
        #[arg(long)]
        embedding_file: Option<PathBuf>,
        /// The content.
        text: String,
    },
    /// Recall memories for a query (or a budgeted context pack with --pack).
    Recall {
        /// Project.
        #[arg(long)]
        project: String,
        /// Results.
        #[arg(long, default_value_t = 10)]
        k: usize,
        /// Build a context pack instead of a ranked list.
        #[arg(long)]
        pack: bool,
        /// Tokens available to the caller (for --pack).
        #[arg(long, default_value_t = 4000)]
        available: usize,
        /// Requested budget in tokens (for --pack; capped at 30 % of --available).
        #[arg(long)]
        budget: Option<usize>,
        /// The caller's current session: its own events are suppressed as echo.
        #[arg(long)]
        session: Option<String>,
        /// Attach this many chronological neighbours on each side of every result.
        #[arg(long, default_value_t = 0)]
        context: usize,
        /// The query's dense embedding: a file holding a JSON array of numbers (the model
        /// the project's observations were embedded with).
        #[arg(long)]
        embedding_file: Option<PathBuf>,
        /// The query: free text, "quoted phrases", and filters agent:, thread:, session:,
        /// role:, kind:, since:, until:, project:.
        query: String,
    },
    /// Read beliefs.
    Belief {
        #[command(subcommand)]
        action: BeliefAction,
    },
    /// Governance plans.
    Plan {
        #[command(subcommand)]
        action: PlanAction,
    },
    /// Apply pending schema migrations (or list them with --dry-run).
    Migrate {
        /// Only report what would run.
        #[arg(long)]
        dry_run: bool,
    },
    /// Counts per project.
    Stats,
    /// One project at a glance: sizes, time span, threads, tiers, episodes and their
    /// topics, concepts, synapse hubs, beliefs, directives, procedures.
    Map {
        /// Project.
        #[arg(long)]
        project: String,
        /// Longest list shown.
        #[arg(long, default_value_t = hypermem::DEFAULT_MAP_LIMIT)]
        limit: usize,
    },
    /// Run one pulse tick for a project.
    Pulse {
        /// Project.
        #[arg(long)]
        project: String,
    },
    /// Knowledge gaps of a project.
    Gaps {
        /// Project.
        #[arg(long)]
        project: String,
        /// Longest list returned.
        #[arg(long, default_value_t = api::DEFAULT_LIMIT)]
        limit: usize,
    },
    /// Self-improvement proposals of a project.
    Proposals {
        /// Project.
        #[arg(long)]
        project: String,
    },
    /// Erase a project from every store.
    ForgetProject {
        /// Project.
        #[arg(long)]
        project: String,
        /// Confirm the erasure: it cannot be undone (without it, nothing is erased and the
        /// verb refuses with `confirmation_required`). `--confirm` is the same flag, named
        /// as the HTTP and MCP requests' `confirm` field.
        #[arg(long, visible_alias = "confirm")]
        yes: bool,
    },
    /// Episodes: start, add an event, end.
    Episode {
        #[command(subcommand)]
        action: EpisodeAction,
    },
    /// Procedures: add, suggest, record an outcome.
    Procedure {
        #[command(subcommand)]
        action: ProcedureAction,
    },
    /// Prospective memory: intentions, reminders, ...
    Prospective {
        #[command(subcommand)]
        action: ProspectiveAction,
    },
    /// Candidate beliefs (from the curator or agents) awaiting governance.
    Candidates {
        #[command(subcommand)]
        action: CandidateAction,
    },
    /// One stored memory: its event, access count, LTP strength, tier and citing beliefs.
    Show {
        /// Project.
        #[arg(long)]
        project: String,
        /// Event id.
        #[arg(long)]
        id: u64,
    },
    /// Concepts consolidation made of the episodes: list, or show one with its episodes.
    Concepts {
        #[command(subcommand)]
        action: ConceptAction,
    },
    /// Candidate associations of a project.
    Associations {
        /// Project.
        #[arg(long)]
        project: String,
        /// Longest list returned.
        #[arg(long, default_value_t = api::DEFAULT_LIMIT)]
        limit: usize,
    },
    /// Import conversations in the evaluation format (one project per conversation).
    Import {
        /// Directory holding conversations.jsonl.
        #[arg(long)]
        data: PathBuf,
        /// Make each session an episode (agent `eval`), sealed at its end.
        #[arg(long)]
        episodes: bool,
    },
    /// Serve the operations as JSON over HTTP until SIGINT/SIGTERM (then drain and flush).
    Serve {
        /// Address to listen on (default: the profile's `[server] listen`, else
        /// 127.0.0.1:7878; port 0 picks a free port; the address is printed).
        #[arg(long)]
        listen: Option<std::net::SocketAddr>,
        /// Bearer tokens (TOML `[[token]]` tables: secret, projects, access; default: the
        /// profile's `[server] tokens`); without them the server listens only on loopback.
        #[arg(long)]
        tokens: Option<PathBuf>,
        /// Largest request body in bytes.
        #[arg(long, default_value_t = 16 << 20)]
        max_body: usize,
        /// Longest a request may run, waiting for a worker included, in milliseconds.
        #[arg(long, default_value_t = 30_000)]
        timeout_ms: u64,
        /// Operations run at once (default: twice the CPU count); more wait their turn,
        /// first come first served.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
        workers: Option<u32>,
    },
    /// Serve the operations as MCP tools over stdin/stdout (for an agent's MCP client).
    Mcp,
    /// Retrieval evaluation: import a data set into a fresh memory and score recall.
    Eval {
        /// Directory holding conversations.jsonl and questions.jsonl.
        #[arg(long)]
        data: PathBuf,
        /// Results per question.
        #[arg(long, default_value_t = 10)]
        k: usize,
        /// Also write each question's evidence ranks to this file (JSON Lines).
        #[arg(long)]
        per_question: Option<PathBuf>,
        /// Make each session an episode (agent `eval`), sealed at its end.
        #[arg(long)]
        episodes: bool,
        /// Only these candidate sources (comma-separated: bm25, vector, episode, ripple);
        /// the others' weights become 0 for this run.
        #[arg(long, value_delimiter = ',')]
        sources: Option<Vec<String>>,
        /// Override a source or prior weight for this run, `name=x` (bm25, vector,
        /// episode, ripple, neighbour, session, user, hint); repeatable.
        #[arg(long = "weight", value_name = "NAME=X")]
        weights: Vec<String>,
        /// Recall with the data set's own embeddings of this model (`embeddings/<MODEL>-turns.npy`
        /// and `-questions.npy`): the semantic source on caller-supplied vectors.
        #[arg(long, value_name = "MODEL")]
        embeddings: Option<String>,
        /// Recall with this static embedding model (model2vec format) as the semantic
        /// source, instead of the profile's.
        #[arg(long, value_name = "DIR")]
        semantic_model: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum BeliefAction {
    /// Assert a belief backed by evidence events (a one-operation governance plan).
    Propose {
        /// Project.
        #[arg(long)]
        project: String,
        /// Canonical key.
        #[arg(long)]
        key: String,
        /// Ownership: user, project, agent.
        #[arg(long, default_value = "project")]
        ownership: String,
        /// Evidence event ids (repeat).
        #[arg(long = "evidence", required = true)]
        evidence: Vec<u64>,
        /// Confidence in [0, 1].
        #[arg(long, default_value_t = 1.0)]
        confidence: f64,
        /// Idempotency key (default: derived from the request).
        #[arg(long)]
        idempotency_key: Option<String>,
        /// The statement.
        statement: String,
    },
    /// Correct the active belief of a key (it is superseded, its window closed).
    Correct {
        /// Project.
        #[arg(long)]
        project: String,
        /// Canonical key.
        #[arg(long)]
        key: String,
        /// Evidence event ids (repeat).
        #[arg(long = "evidence", required = true)]
        evidence: Vec<u64>,
        /// The version being corrected (optimistic concurrency).
        #[arg(long)]
        expected_version: Option<u64>,
        /// Idempotency key (default: derived from the request).
        #[arg(long)]
        idempotency_key: Option<String>,
        /// The corrected statement.
        statement: String,
    },
    /// The active belief of a key.
    Current {
        /// Project.
        #[arg(long)]
        project: String,
        /// Key.
        #[arg(long)]
        key: String,
    },
    /// The belief valid at a time (ms since the epoch).
    At {
        /// Project.
        #[arg(long)]
        project: String,
        /// Key.
        #[arg(long)]
        key: String,
        /// The time: RFC 3339, a date, or epoch ms.
        #[arg(long)]
        at: String,
    },
    /// Every version of a key.
    History {
        /// Project.
        #[arg(long)]
        project: String,
        /// Key.
        #[arg(long)]
        key: String,
    },
}

#[derive(Subcommand)]
enum EpisodeAction {
    /// Start an episode for an agent (its open one is sealed and chained).
    Start {
        /// Project.
        #[arg(long)]
        project: String,
        /// Agent.
        #[arg(long, default_value = "agent")]
        agent: String,
    },
    /// Append a recorded event to an episode.
    Event {
        /// Project.
        #[arg(long)]
        project: String,
        /// Episode id.
        #[arg(long)]
        episode: u64,
        /// Event id.
        #[arg(long)]
        event: u64,
    },
    /// One episode: its events, status, outcome, reward, previous and next.
    Show {
        /// Project.
        #[arg(long)]
        project: String,
        /// Episode id.
        #[arg(long)]
        id: u64,
    },
    /// Seal an episode.
    End {
        /// Project.
        #[arg(long)]
        project: String,
        /// Episode id.
        #[arg(long)]
        episode: u64,
        /// Outcome text.
        #[arg(long)]
        outcome: Option<String>,
        /// Reward in [-1, 1]: -1 a failure, 1 a success, 0 neither.
        #[arg(long)]
        reward: Option<f64>,
    },
}

#[derive(Subcommand)]
enum ProcedureAction {
    /// Add a procedure; steps are given as repeated --step.
    Add {
        /// Project.
        #[arg(long)]
        project: String,
        /// Name.
        #[arg(long)]
        name: String,
        /// When to use it.
        #[arg(long)]
        trigger: String,
        /// A step instruction (repeat for several).
        #[arg(long = "step", required = true)]
        steps: Vec<String>,
    },
    /// Procedures for a situation, by trigger similarity x reliability.
    Suggest {
        /// Project.
        #[arg(long)]
        project: String,
        /// How many.
        #[arg(long, default_value_t = 3)]
        k: usize,
        /// The situation.
        query: String,
    },
    /// Record an outcome.
    Outcome {
        /// Project.
        #[arg(long)]
        project: String,
        /// Procedure id.
        #[arg(long)]
        id: u64,
        /// Whether it worked: `true` (success) or `false` (failure); required.
        #[arg(long, action = clap::ArgAction::Set, required = true)]
        success: bool,
    },
}

#[derive(Subcommand)]
enum ProspectiveAction {
    /// Record a pending item created by an event.
    Propose {
        /// Project.
        #[arg(long)]
        project: String,
        /// Kind: intention, commitment, reminder, open_loop, plan.
        #[arg(long, default_value = "reminder")]
        kind: String,
        /// The event that created it.
        #[arg(long)]
        event: u64,
        /// Due time: RFC 3339, a date, or epoch ms.
        #[arg(long)]
        due: Option<String>,
        /// What it is about.
        text: String,
    },
    /// Confirm an item by a later, affirmative user event.
    Confirm {
        /// Project.
        #[arg(long)]
        project: String,
        /// Item id.
        #[arg(long)]
        id: u64,
        /// The confirming event.
        #[arg(long)]
        event: u64,
    },
    /// Postpone an item.
    Defer {
        /// Project.
        #[arg(long)]
        project: String,
        /// Item id.
        #[arg(long)]
        id: u64,
        /// New due time: RFC 3339, a date, or epoch ms.
        #[arg(long)]
        until: String,
    },
    /// Mark an item done.
    Complete {
        /// Project.
        #[arg(long)]
        project: String,
        /// Item id.
        #[arg(long)]
        id: u64,
    },
    /// Refuse an item.
    Reject {
        /// Project.
        #[arg(long)]
        project: String,
        /// Item id.
        #[arg(long)]
        id: u64,
    },
    /// One item: its status and the history of its transitions.
    Show {
        /// Project.
        #[arg(long)]
        project: String,
        /// Item id.
        #[arg(long)]
        id: u64,
    },
    /// Items due at a time (ms; default now).
    Due {
        /// Project.
        #[arg(long)]
        project: String,
        /// The time: RFC 3339, a date, or epoch ms (default now).
        #[arg(long)]
        at: Option<String>,
    },
}

#[derive(Subcommand)]
enum CandidateAction {
    /// Candidate beliefs of a project.
    List {
        /// Project.
        #[arg(long)]
        project: String,
    },
    /// Promote a candidate (governed: user-owned claims still need user evidence).
    Approve {
        /// Project.
        #[arg(long)]
        project: String,
        /// Belief id.
        #[arg(long)]
        id: u64,
    },
    /// Reject a candidate.
    Reject {
        /// Project.
        #[arg(long)]
        project: String,
        /// Belief id.
        #[arg(long)]
        id: u64,
    },
}

#[derive(Subcommand)]
enum ConceptAction {
    /// The project's concepts: label, support, reliability.
    List {
        /// Project.
        #[arg(long)]
        project: String,
    },
    /// One concept with each supporting episode and its events.
    Show {
        /// Project.
        #[arg(long)]
        project: String,
        /// Concept id.
        #[arg(long)]
        id: u64,
    },
}

#[derive(Subcommand)]
enum PlanAction {
    /// Validate and apply a governance plan from a JSON file.
    Apply {
        /// The plan (JSON; see docs/FORMAT.md).
        #[arg(long)]
        file: PathBuf,
    },
    /// What an applied plan changed, operation by operation.
    Audit {
        /// Project.
        #[arg(long)]
        project: String,
        /// The plan's idempotency key.
        #[arg(long)]
        key: String,
    },
}

/// The file in a data directory where `hypermem serve` announces its URL while it holds
/// the store: a CLI write then refuses at once, naming the server, instead of waiting for
/// the lock.
const SERVING: &str = "SERVING";

/// Whether the verb only reads: it reads a view ([`Memory::open_view`]), which takes no
/// lock (so it never waits for another process) and writes nothing.
fn reads_only(command: &Command) -> bool {
    match command {
        Command::Stats
        | Command::Map { .. }
        | Command::Recall { .. }
        | Command::Gaps { .. }
        | Command::Associations { .. }
        | Command::Proposals { .. } => true,
        Command::Belief { action } => matches!(
            action,
            BeliefAction::Current { .. } | BeliefAction::At { .. } | BeliefAction::History { .. }
        ),
        Command::Procedure { action } => matches!(action, ProcedureAction::Suggest { .. }),
        Command::Prospective { action } => {
            matches!(
                action,
                ProspectiveAction::Due { .. } | ProspectiveAction::Show { .. }
            )
        }
        Command::Candidates { action } => matches!(action, CandidateAction::List { .. }),
        Command::Episode { action } => matches!(action, EpisodeAction::Show { .. }),
        Command::Concepts { .. } | Command::Show { .. } => true,
        Command::Plan { action } => matches!(action, PlanAction::Audit { .. }),
        _ => false,
    }
}

/// The data directory must exist and be a directory, unless the verb may create it.
fn check_data_dir(dir: &std::path::Path, may_create: bool) -> Result<(), ApiError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(ApiError::new(
            Reason::NotADirectory,
            format!("data directory {} is not a directory", dir.display()),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if may_create {
                Ok(())
            } else {
                Err(ApiError::new(
                    Reason::DataDirMissing,
                    format!(
                        "data directory {} does not exist: run `hypermem init` (or pass --create)",
                        dir.display()
                    ),
                ))
            }
        }
        Err(e) => Err(ApiError::new(
            Reason::IoError,
            format!("data directory {}: {e}", dir.display()),
        )),
    }
}

/// A time argument through the one parser ([`hypermem::clock::parse_instant`]).
fn instant(flag: &str, text: &str) -> Result<i64, ApiError> {
    hypermem::clock::parse_instant(text).map_err(|e| ApiError::invalid(format!("{flag}: {e}")))
}

/// A dense embedding from a file holding a JSON array of numbers.
fn read_embedding(path: &std::path::Path) -> Result<Vec<f32>, ApiError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ApiError::invalid(format!("--embedding-file {}: {e}", path.display())))?;
    let values: Vec<f32> = serde_json::from_str(&text).map_err(|_| {
        ApiError::invalid(format!(
            "--embedding-file {}: not a JSON array of numbers",
            path.display()
        ))
    })?;
    if values.is_empty() {
        return Err(ApiError::invalid(format!(
            "--embedding-file {}: the array is empty",
            path.display()
        )));
    }
    Ok(values)
}

fn progress_bar(json: bool) -> ProgressBar {
    if json {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} turns ({per_sec}, eta {eta})")
            .expect("valid template"),
    );
    bar
}

fn run(cli: Cli) -> Result<(), ApiError> {
    let profile = match &cli.profile {
        Some(path) => Profile::load(path)?,
        None => Profile::builtin(ProfileKind::Lite)?,
    };
    let mut profile = profile;
    // How long a writer waits for another process's store lock (default 5 s).
    if let Some(ms) = std::env::var("HYPERMEM_LOCK_WAIT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        profile.store.lock_wait_ms = ms;
    }
    // Where the standard profile's Redis is (overrides `redis.url`).
    if let (Some(redis), Ok(url)) = (&mut profile.redis, std::env::var("HYPERMEM_REDIS_URL")) {
        redis.url = url;
    }
    // Where the scale profile's Qdrant is (overrides `qdrant.url`).
    if let (Some(qdrant), Ok(url)) = (&mut profile.qdrant, std::env::var("HYPERMEM_QDRANT_URL")) {
        qdrant.url = url;
    }
    let data_dir = cli
        .data_dir
        .clone()
        .or_else(|| std::env::var_os("HYPERMEM_DATA_DIR").map(PathBuf::from));
    let print = |value: serde_json::Value, text: String| {
        if cli.json {
            out!("{value}");
        } else {
            out!("{text}");
        }
    };
    if let Command::Eval {
        data,
        k,
        per_question,
        episodes,
        sources,
        weights,
        embeddings,
        semantic_model,
    } = &cli.command
    {
        let mut profile = profile.clone();
        hypermem::eval::ablate(&mut profile.recall, sources.as_deref(), weights)?;
        if semantic_model.is_some() {
            profile.semantic.model.clone_from(semantic_model);
        }
        let embeddings = embeddings
            .as_deref()
            .map(|model| hypermem::eval::Embeddings::load(data, model))
            .transpose()?;
        let scratch = tempfile::tempdir()?;
        let memory = Memory::open(&profile, Some(scratch.path()))?;
        let bar = progress_bar(cli.json);
        let report = hypermem::eval::evaluate(
            &memory,
            data,
            *k,
            *episodes,
            embeddings.as_ref(),
            |done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            },
        )?;
        bar.finish_and_clear();
        if let Some(path) = per_question {
            let mut out = String::new();
            for q in &report.questions {
                out.push_str(&serde_json::to_string(q)?);
                out.push('\n');
            }
            std::fs::write(path, out).map_err(|e| {
                ApiError::new(
                    Reason::IoError,
                    format!("cannot write {}: {e}", path.display()),
                )
            })?;
        }
        if cli.json {
            out!("{}", serde_json::to_string(&report)?);
            return Ok(());
        }
        out!(
            "ingested {} turns in {:.1} s ({:.0} turns/s); {} questions in {:.2} s ({:.1} ms each)",
            report.turns,
            report.ingest_secs,
            report.turns as f64 / report.ingest_secs.max(1e-9),
            report.overall.questions,
            report.query_secs,
            report.query_secs * 1e3 / report.overall.questions.max(1) as f64
        );
        out!(
            "{:<28} {:>4} {:>9} {:>9} {:>10} {:>7} {:>6} {:>12}",
            "category",
            "n",
            "recall@1",
            "recall@5",
            "recall@10",
            "hit@10",
            "mrr",
            "update_order"
        );
        for (name, s) in report
            .categories
            .iter()
            .chain([(&"overall".to_owned(), &report.overall)])
        {
            let uo = if s.updates == 0 {
                "-".to_owned()
            } else {
                format!("{:.3}", s.update_order)
            };
            out!(
                "{name:<28} {:>4} {:>9.3} {:>9.3} {:>10.3} {:>7.3} {:>6.3} {uo:>12}",
                s.questions,
                s.recall_at_1,
                s.recall_at_5,
                s.recall_at_10,
                s.hit_at_10,
                s.mrr
            );
        }
        let o = &report.overall;
        out!(
            "overall recall@10 {:.3} mrr {:.3} update_order {:.3}",
            o.recall_at_10,
            o.mrr,
            o.update_order
        );
        return Ok(());
    }
    let dir = data_dir.clone().unwrap_or_else(|| profile.data_dir.clone());
    check_data_dir(&dir, cli.create || matches!(cli.command, Command::Init))?;
    if let Command::Migrate { dry_run } = cli.command {
        // On the ledger alone, unmigrated: opening the memory would apply the migrations
        // first, and a dry run would then report none.
        let ledger = hypermem::ledger::Ledger::open_unmigrated(
            dir.join("ledger.db"),
            hypermem::ledger::LedgerConfig::default(),
        )?;
        let r = ledger.migrate(dry_run)?;
        print(
            serde_json::to_value(api::Migrated {
                from: r.from,
                to: r.to,
                dry_run: r.dry_run,
                migrations: r.migrations.clone(),
            })?,
            format!(
                "schema {} -> {}{}: {:?}",
                r.from,
                r.to,
                if r.dry_run { " (dry run)" } else { "" },
                r.migrations
            ),
        );
        return Ok(());
    }
    if let Command::Serve {
        listen,
        tokens,
        max_body,
        timeout_ms,
        workers,
    } = &cli.command
    {
        let config = hypermem::api::http::ServeConfig {
            listen: listen
                .or(profile.server.listen)
                .unwrap_or_else(|| hypermem::api::http::ServeConfig::default().listen),
            tokens: tokens
                .as_deref()
                .or(profile.server.tokens.as_deref())
                .map(hypermem::api::http::Tokens::load)
                .transpose()?,
            max_body: *max_body,
            timeout: std::time::Duration::from_millis(*timeout_ms),
            workers: workers.map_or_else(
                || hypermem::api::http::ServeConfig::default().workers,
                |w| w as usize,
            ),
        };
        config.check()?;
        let memory = Memory::open(&profile, Some(&dir))?;
        let json = cli.json;
        let announced = dir.join(SERVING);
        let served = hypermem::api::http::serve(std::sync::Arc::new(memory), &config, |addr| {
            use std::io::Write as _;
            // Other processes on this store learn where its writer is (see `SERVING`).
            let url = format!("http://{addr}");
            if let Err(e) = std::fs::write(&announced, format!("{url}\n")) {
                tracing::warn!(error = %e, "could not announce the server in the data directory");
            }
            if json {
                out!("{}", json!({"listening": url}));
            } else {
                out!("listening on {url}");
            }
            let _ = std::io::stdout().flush();
        });
        let _ = std::fs::remove_file(&announced);
        return served;
    }
    // A read on a directory that holds no store creates none: it is refused.
    if reads_only(&cli.command) && !cli.create && !dir.join("ledger.db").exists() {
        return Err(ApiError::new(
            Reason::NotInitialized,
            format!(
                "data directory {} holds no memory yet: `hypermem init` creates one (or any write, with --create); a read creates nothing",
                dir.display()
            ),
        ));
    }
    let memory = if reads_only(&cli.command) && dir.join("ledger.db").exists() {
        // A read writes nothing and never waits on a writer: it reads a view (no lock, no
        // repair, no migration, no query log); repairs are a writer's, on open.
        Memory::open_view(&profile, Some(&dir))?
    } else if let Ok(url) = std::fs::read_to_string(dir.join(SERVING)) {
        // A server announced itself as this store's writer: no use waiting for its lock.
        let mut now = profile.clone();
        now.store.lock_wait_ms = 0;
        match Memory::open(&now, Some(&dir)) {
            Err(e) if e.reason() == Reason::StoreLocked => {
                let url = url.trim();
                return Err(ApiError::new(
                    Reason::StoreLocked,
                    format!(
                        "`hypermem serve` at {url} holds {}: send writes to it (`POST {url}/v1/projects/<project>/<op>`) or stop it first; reads work beside it",
                        dir.display()
                    ),
                ));
            }
            // The server is gone (its announcement outlived it): the store is ours.
            other => {
                let _ = std::fs::remove_file(dir.join(SERVING));
                other?
            }
        }
    } else {
        Memory::open(&profile, Some(&dir))?
    };
    if let Command::Mcp = cli.command {
        return hypermem::api::mcp::serve_stdio(std::sync::Arc::new(memory));
    }
    match cli.command {
        Command::Init => print(
            json!({"data_dir": memory.data_dir(), "schema_version": memory.ledger().schema_version()?}),
            format!(
                "initialized {} (schema version {})",
                memory.data_dir().display(),
                memory.ledger().schema_version()?
            ),
        ),
        Command::Observe {
            project,
            role,
            kind,
            thread,
            session,
            agent,
            source,
            speaker,
            at,
            embedding_file,
            text,
        } => {
            let request = api::Request::Observe(api::Observe {
                project,
                text,
                role,
                kind,
                thread,
                session,
                agent,
                source,
                source_id: None,
                speaker,
                at: at.map(api::Time::Text),
                embedding: embedding_file.as_deref().map(read_embedding).transpose()?,
            });
            let v = serde_json::to_value(Api::new(&memory).respond(&request)?)?;
            let text = format!("observed event {}", v["event_id"]);
            print(v, text);
        }
        Command::Recall {
            project: p,
            k,
            pack,
            available,
            budget,
            session,
            context,
            embedding_file,
            query,
        } => {
            let embedding = embedding_file.as_deref().map(read_embedding).transpose()?;
            let ops = Api::new(&memory);
            if pack {
                let pack = ops.pack(&api::Pack {
                    project: p,
                    query,
                    available,
                    budget,
                    session,
                    embedding,
                })?;
                let text = format!(
                    "pack: {} of {} tokens, {} items, {} suppressed\n{}",
                    pack.used,
                    pack.budget,
                    pack.items.len(),
                    pack.suppressed.len(),
                    pack.items
                        .iter()
                        .map(|(l, t)| format!("[{} #{} {} tok] {t}", l.slot, l.id, l.tokens))
                        .collect::<Vec<_>>()
                        .join("\n")
                );
                print(serde_json::to_value(&pack)?, text);
            } else {
                let result = ops.recall(&api::Recall {
                    project: p,
                    query,
                    k,
                    session,
                    context,
                    embedding,
                })?;
                let hits = &result.items;
                let mut lines = Vec::new();
                for (i, h) in hits.iter().enumerate() {
                    let sources: Vec<String> = h
                        .fused
                        .breakdown
                        .iter()
                        .map(|(s, r, _)| format!("{s}#{r}"))
                        .collect();
                    lines.push(format!(
                        "{:>2}. {:.4} #{} [{}] ({}){} {}",
                        i + 1,
                        h.fused.score,
                        h.event.id,
                        h.event.thread.as_deref().unwrap_or("-"),
                        sources.join(" "),
                        h.supersedes
                            .map(|old| format!(" newer than #{old}"))
                            .unwrap_or_default(),
                        h.event.content
                    ));
                    if let Some(c) = &h.context {
                        for e in c.before.iter().chain(&c.after) {
                            lines.push(format!("      #{} {}: {}", e.id, e.role, e.content));
                        }
                    }
                }
                for (id, why) in &result.suppressed {
                    lines.push(format!("    suppressed #{id}: {why}"));
                }
                if result.time_hint_ignored {
                    lines.push(
                        "    time hint ignored: no candidate happened in its window".to_owned(),
                    );
                }
                let text = lines.join("\n");
                print(serde_json::to_value(&result)?, text);
            }
        }
        Command::Belief { action } => {
            let write = match action {
                BeliefAction::Propose {
                    project,
                    key,
                    ownership,
                    evidence,
                    confidence,
                    idempotency_key,
                    statement,
                } => Some(Api::new(&memory).belief_assert(&api::BeliefAssert {
                    project,
                    key,
                    statement,
                    ownership,
                    evidence,
                    confidence,
                    idempotency_key,
                })?),
                BeliefAction::Correct {
                    project,
                    key,
                    evidence,
                    expected_version,
                    idempotency_key,
                    statement,
                } => Some(Api::new(&memory).belief_correct(&api::BeliefCorrect {
                    project,
                    key,
                    statement,
                    evidence,
                    expected_version,
                    idempotency_key,
                })?),
                BeliefAction::Current { project: p, key } => {
                    let value = serde_json::to_value(
                        Api::new(&memory).belief_current(&api::BeliefKey { project: p, key })?,
                    )?;
                    print(value.clone(), serde_json::to_string_pretty(&value)?);
                    None
                }
                BeliefAction::At {
                    project: p,
                    key,
                    at,
                } => {
                    let value =
                        serde_json::to_value(Api::new(&memory).belief_at(&api::BeliefAt {
                            project: p,
                            key,
                            at: api::Time::Ms(instant("--at", &at)?),
                        })?)?;
                    print(value.clone(), serde_json::to_string_pretty(&value)?);
                    None
                }
                BeliefAction::History { project: p, key } => {
                    let value = serde_json::to_value(
                        Api::new(&memory).belief_history(&api::BeliefKey { project: p, key })?,
                    )?;
                    print(value.clone(), serde_json::to_string_pretty(&value)?);
                    None
                }
            };
            if let Some(outcome) = write {
                let value = serde_json::to_value(&outcome)?;
                print(value.clone(), serde_json::to_string_pretty(&value)?);
            }
        }
        Command::Plan {
            action: PlanAction::Apply { file },
        } => {
            let text = std::fs::read_to_string(&file).map_err(|e| {
                ApiError::invalid(format!("cannot read plan {}: {e}", file.display()))
            })?;
            let plan: Plan = serde_json::from_str(&text).map_err(|e| {
                ApiError::new(
                    Reason::InvalidPlan,
                    hypermem::input::json_error(&format!("plan {}", file.display()), &e),
                )
            })?;
            let outcome = Api::new(&memory).apply_plan(&plan)?;
            let value = serde_json::to_value(&outcome)?;
            print(value.clone(), serde_json::to_string_pretty(&value)?);
        }
        Command::Plan {
            action: PlanAction::Audit { project, key },
        } => {
            let request = api::Request::PlanAudit(api::PlanKey {
                project,
                idempotency_key: key,
            });
            let v = serde_json::to_value(Api::new(&memory).respond(&request)?)?;
            let text = v
                .as_array()
                .into_iter()
                .flatten()
                .map(|l| {
                    format!(
                        "#{} {} belief {}: {}",
                        l["op_index"],
                        l["op"].as_str().unwrap_or(""),
                        l["belief"],
                        l["detail"]
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            print(v, text);
        }
        Command::Migrate { .. } => unreachable!("handled above"),
        Command::Stats => {
            let stats = Api::new(&memory).stats()?;
            let text = stats
                .iter()
                .map(|s| {
                    format!(
                        "{}: {} events, {} vectors ({} hot copies, {} warm, {} cold), {} active beliefs, {} standing directives",
                        s.project,
                        s.events,
                        s.vectors,
                        s.tiers.hot,
                        s.tiers.warm,
                        s.tiers.cold,
                        s.active_beliefs,
                        s.directives
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            print(
                serde_json::to_value(&stats)?,
                if text.is_empty() {
                    "no projects".into()
                } else {
                    text
                },
            );
        }
        Command::Map { project: p, limit } => {
            let map = Api::new(&memory).map(&api::MapRequest { project: p, limit })?;
            print(serde_json::to_value(&map)?, map_text(&map));
        }
        Command::Pulse { project: p } => {
            let receipt = Api::new(&memory).pulse(&api::ProjectOnly { project: p })?;
            let text = receipt
                .phases
                .iter()
                .map(|ph| {
                    format!(
                        "{:<24} {:>5} items {:>8.1} ms  {}",
                        ph.phase, ph.items, ph.elapsed_ms, ph.produced
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            print(serde_json::to_value(&receipt)?, text);
        }
        Command::Gaps { project: p, limit } => {
            let gaps = Api::new(&memory).gaps(&api::ProjectLimit { project: p, limit })?;
            let text = gaps
                .iter()
                .map(|g| format!("[{:?} {:.2}] {}", g.kind, g.score, g.description))
                .collect::<Vec<_>>()
                .join("\n");
            print(serde_json::to_value(&gaps)?, text);
        }
        Command::Proposals { project: p } => {
            let proposals = Api::new(&memory).proposals(&api::ProjectOnly { project: p })?;
            let text = proposals
                .iter()
                .map(|p| format!("#{} [{}] {} — {}", p.id, p.status, p.title, p.rationale))
                .collect::<Vec<_>>()
                .join("\n");
            print(serde_json::to_value(&proposals)?, text);
        }
        Command::ForgetProject { project: p, yes } => {
            let receipt = Api::new(&memory).forget_project(&api::ForgetProject {
                project: p,
                confirm: yes,
            })?;
            print(
                serde_json::to_value(&receipt)?,
                format!(
                    "erased: {} vectors, rows {:?}",
                    receipt.vectors, receipt.ledger.rows
                ),
            );
        }
        Command::Import { data, episodes } => {
            let bar = progress_bar(cli.json);
            let r = hypermem::eval::import(&memory, &data, episodes, None, |done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            })?;
            bar.finish_and_clear();
            memory.flush()?;
            print(
                serde_json::to_value(r)?,
                format!(
                    "imported {} new turns of {} conversations ({} already stored, skipped; {} without text, left out)",
                    r.new, r.conversations, r.skipped, r.empty
                ),
            );
        }
        Command::Show { project, id } => {
            let request = api::Request::MemoryShow(api::ProjectId64 { project, id });
            let v = serde_json::to_value(Api::new(&memory).respond(&request)?)?;
            let text = format!(
                "event {}: {}\naccesses {}, strength {}, tier {}{}; beliefs {}",
                id,
                v["event"]["content"].as_str().unwrap_or(""),
                v["accesses"],
                v["strength"],
                v["tier"].as_str().unwrap_or("-"),
                if v["hot"] == true { " (hot copy)" } else { "" },
                v["beliefs"]
            );
            print(v, text);
        }
        Command::Concepts { action } => {
            let request = match action {
                ConceptAction::List { project } => {
                    api::Request::Concepts(api::ProjectOnly { project })
                }
                ConceptAction::Show { project, id } => {
                    api::Request::ConceptShow(api::ProjectId64 { project, id })
                }
            };
            let v = serde_json::to_value(Api::new(&memory).respond(&request)?)?;
            let line = |c: &serde_json::Value| {
                format!(
                    "#{} {} (support {}, reliability {:.2})",
                    c["id"],
                    c["label"].as_str().unwrap_or(""),
                    c["support"].as_array().map_or(0, Vec::len),
                    c["reliability"].as_f64().unwrap_or(0.0)
                )
            };
            let text = match v.as_array() {
                Some(list) => list.iter().map(line).collect::<Vec<_>>().join("\n"),
                None => std::iter::once(line(&v))
                    .chain(
                        v["episodes"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|e| format!("  episode {}: events {}", e["id"], e["events"])),
                    )
                    .collect::<Vec<_>>()
                    .join("\n"),
            };
            print(v, text);
        }
        Command::Episode { action } => match action {
            EpisodeAction::Show { project, id } => {
                let request = api::Request::EpisodeShow(api::ProjectId64 { project, id });
                let v = serde_json::to_value(Api::new(&memory).respond(&request)?)?;
                let text = format!(
                    "episode {} ({}, agent {}): events {}, outcome {}, reward {}, previous {}, next {}",
                    v["id"],
                    v["status"],
                    v["agent"],
                    v["events"],
                    v["outcome"],
                    v["reward"],
                    v["prev"],
                    v["next"]
                );
                print(v, text);
            }
            EpisodeAction::Start { project: p, agent } => {
                let request = api::Request::EpisodeStart(api::EpisodeStart { project: p, agent });
                let v = serde_json::to_value(Api::new(&memory).respond(&request)?)?;
                let text = format!("started episode {}", v["episode"]);
                print(v, text);
            }
            EpisodeAction::Event {
                project,
                episode,
                event,
            } => {
                let request = api::Request::EpisodeAppend(api::EpisodeAppend {
                    project,
                    episode,
                    event,
                });
                let v = serde_json::to_value(Api::new(&memory).respond(&request)?)?;
                let text = if v["already_in_episode"] == true {
                    format!(
                        "event {event} is already in episode {episode}, at position {}",
                        v["position"]
                    )
                } else {
                    format!(
                        "appended event {event} to episode {episode} at position {}",
                        v["position"]
                    )
                };
                print(v, text);
            }
            EpisodeAction::End {
                project,
                episode,
                outcome,
                reward,
            } => {
                let value = Api::new(&memory).episode_end(&api::EpisodeEnd {
                    project,
                    episode,
                    outcome,
                    reward,
                })?;
                print(
                    serde_json::to_value(&value)?,
                    format!("sealed episode {episode}"),
                );
            }
        },
        Command::Procedure { action } => match action {
            ProcedureAction::Add {
                project,
                name,
                trigger,
                steps,
            } => {
                let request = api::Request::ProcedureAdd(api::ProcedureAdd {
                    project,
                    name,
                    trigger,
                    steps,
                });
                let v = serde_json::to_value(Api::new(&memory).respond(&request)?)?;
                let text = format!("added procedure {}", v["procedure"]);
                print(v, text);
            }
            ProcedureAction::Suggest {
                project: p,
                k,
                query,
            } => {
                let s = Api::new(&memory).procedure_suggest(&api::ProcedureSuggest {
                    project: p,
                    query,
                    k,
                })?;
                let text = s
                    .iter()
                    .map(|s| {
                        format!(
                            "{:.3} #{} {} (reliability {:.2})",
                            s.score, s.procedure.id.0, s.procedure.name, s.procedure.reliability
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                print(serde_json::to_value(&s)?, text);
            }
            ProcedureAction::Outcome {
                project,
                id,
                success,
            } => {
                let value = Api::new(&memory).execute(&api::Request::ProcedureOutcome(
                    api::ProcedureOutcome {
                        project,
                        id,
                        success,
                    },
                ))?;
                print(
                    value.clone(),
                    format!(
                        "{} reliability {:.3}",
                        value["name"].as_str().unwrap_or_default(),
                        value["reliability"].as_f64().unwrap_or_default()
                    ),
                );
            }
        },
        Command::Prospective { action } => {
            let ops = Api::new(&memory);
            let item_text = |v: &serde_json::Value| {
                format!(
                    "item {} {}",
                    v["id"],
                    v["status"].as_str().unwrap_or_default()
                )
            };
            let time = |t: Option<String>| t.map(api::Time::Text);
            let request = match action {
                ProspectiveAction::Propose {
                    project,
                    kind,
                    event,
                    due,
                    text,
                } => api::Request::ProspectivePropose(api::ProspectivePropose {
                    project,
                    kind,
                    text,
                    event,
                    due: time(due),
                }),
                ProspectiveAction::Confirm { project, id, event } => {
                    api::Request::ProspectiveConfirm(api::ProspectiveConfirm { project, id, event })
                }
                ProspectiveAction::Defer { project, id, until } => {
                    api::Request::ProspectiveDefer(api::ProspectiveDefer {
                        project,
                        id,
                        until: api::Time::Text(until),
                    })
                }
                ProspectiveAction::Complete { project, id } => {
                    api::Request::ProspectiveComplete(api::ProjectId64 { project, id })
                }
                ProspectiveAction::Reject { project, id } => {
                    api::Request::ProspectiveReject(api::ProjectId64 { project, id })
                }
                ProspectiveAction::Show { project, id } => {
                    api::Request::ProspectiveShow(api::ProjectId64 { project, id })
                }
                ProspectiveAction::Due { project, at } => {
                    api::Request::ProspectiveDue(api::ProspectiveDue {
                        project,
                        at: time(at),
                    })
                }
            };
            let value = ops.execute(&request)?;
            let text = match &request {
                api::Request::ProspectiveDue(_) => value
                    .as_array()
                    .map(|items| {
                        items
                            .iter()
                            .map(|i| {
                                format!(
                                    "#{} [{}] {}",
                                    i["id"],
                                    i["status"].as_str().unwrap_or_default(),
                                    i["text"].as_str().unwrap_or_default()
                                )
                            })
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                    .unwrap_or_default(),
                api::Request::ProspectiveShow(_) => std::iter::once(item_text(&value))
                    .chain(value["history"].as_array().into_iter().flatten().map(|h| {
                        format!(
                            "  {} {:<8} {} -> {}",
                            h["at"]
                                .as_i64()
                                .map(hypermem::clock::format_utc)
                                .unwrap_or_default(),
                            h["op"].as_str().unwrap_or_default(),
                            h["from"].as_str().unwrap_or("-"),
                            h["to"].as_str().unwrap_or_default()
                        )
                    }))
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => item_text(&value),
            };
            print(value, text);
        }
        Command::Candidates { action } => {
            let approve = matches!(action, CandidateAction::Approve { .. });
            match action {
                CandidateAction::List { project: p } => {
                    let list = Api::new(&memory).candidates(&api::ProjectOnly { project: p })?;
                    let text = list
                        .iter()
                        .map(|b| {
                            format!(
                                "#{} {} = {} ({}, evidence {:?})",
                                b.id, b.key, b.statement, b.ownership, b.evidence
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("\n");
                    print(serde_json::to_value(&list)?, text);
                }
                CandidateAction::Approve { project, id }
                | CandidateAction::Reject { project, id } => {
                    let outcome =
                        Api::new(&memory).candidate(&api::ProjectId64 { project, id }, approve)?;
                    let value = serde_json::to_value(&outcome)?;
                    print(value.clone(), serde_json::to_string_pretty(&value)?);
                }
            }
        }
        Command::Associations { project: p, limit } => {
            let list = Api::new(&memory).associations(&api::ProjectLimit { project: p, limit })?;
            let text = list
                .iter()
                .map(|a| format!("[{:.2}] {}", a.confidence, a.suggestion))
                .collect::<Vec<_>>()
                .join("\n");
            print(serde_json::to_value(&list)?, text);
        }
        Command::Eval { .. } | Command::Serve { .. } | Command::Mcp => {
            unreachable!("handled above")
        }
    }
    Ok(())
}

/// Logs on stderr, so repairs on open (a fallback header copy, a restored preallocation,
/// a rebuilt index) reach the operator while stdout stays one document. The level comes
/// from `HYPERMEM_LOG` (`error`, `warn`, `info`, `debug`, `trace`; default `warn`).
fn install_logging() {
    let raw = std::env::var("HYPERMEM_LOG").unwrap_or_default();
    let (level, bad) = match raw.trim().to_ascii_lowercase().as_str() {
        "" | "warn" | "warning" => (tracing::Level::WARN, false),
        "error" => (tracing::Level::ERROR, false),
        "info" => (tracing::Level::INFO, false),
        "debug" => (tracing::Level::DEBUG, false),
        "trace" => (tracing::Level::TRACE, false),
        _ => (tracing::Level::WARN, true),
    };
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .with_target(false)
        .try_init();
    if bad {
        tracing::warn!(value = %raw, "HYPERMEM_LOG is not a level (error, warn, info, debug, trace); using warn");
    }
}

/// The command line, every subcommand taking negative numbers as values (`--reward -1`
/// is a reward, not an unknown flag; the range checks name what is wrong).
fn command() -> clap::Command {
    fn negative(c: clap::Command) -> clap::Command {
        c.allow_negative_numbers(true).mut_subcommands(negative)
    }
    negative(Cli::command())
}

fn main() -> ExitCode {
    // Every segment file of every project keeps its descriptor open (mapped for reads,
    // written in place); a data set of a thousand conversations is a thousand projects.
    // Raise the soft limit to the hard one, as databases do, instead of failing at 1,024.
    if let Err(e) = rlimit::increase_nofile_limit(u64::MAX) {
        eprintln!("warning: could not raise the open-file limit: {e}");
    }
    install_logging();
    let json = std::env::args().skip(1).any(|a| a == "--json");
    let cli = match command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help, --version: printed as asked, exit 0.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            if json {
                // clap's first paragraph: the problem and, on its next lines, what it names
                // (the missing arguments, the possible values).
                let detail = e.to_string();
                let message = detail
                    .lines()
                    .take_while(|l| !l.trim().is_empty())
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join(" ");
                let message = message.trim_start_matches("error: ");
                let f = ApiError::invalid(if message.is_empty() {
                    e.kind().to_string()
                } else {
                    message.to_owned()
                });
                out!("{}", f.to_json());
            }
            let _ = e.print();
            return ExitCode::from(ErrorClass::InvalidInput.exit_code());
        }
    };
    let json = cli.json;
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            if json {
                out!("{}", f.to_json());
            }
            eprintln!("error [{}]: {}", f.reason, f.message);
            ExitCode::from(f.class.exit_code())
        }
    }
}

/// The text form of `hypermem map`.
fn map_text(m: &hypermem::MemoryMap) -> String {
    let utc = hypermem::clock::format_utc;
    let span = |(a, b): (i64, i64)| format!("{} → {}", utc(a), utc(b));
    let counts = |pairs: &[(String, u64)]| {
        pairs
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = vec![
        format!(
            "project {}: {} event{} ({}){}",
            m.project,
            m.events,
            if m.events == 1 { "" } else { "s" },
            counts(&m.roles),
            m.span.map(|s| format!(", {}", span(s))).unwrap_or_default()
        ),
        format!(
            "tiers: {} warm, {} cold, {} hot copies",
            m.tiers.warm, m.tiers.cold, m.tiers.hot
        ),
        format!(
            "beliefs: {}; {} standing directives; {} procedures; {} open prospective items",
            if m.beliefs.is_empty() {
                "none".to_owned()
            } else {
                counts(&m.beliefs)
            },
            m.directives,
            m.procedures,
            m.prospective_open
        ),
        format!("threads ({}):", m.thread_count),
    ];
    for t in &m.threads {
        out.push(format!(
            "  {:<24} {:>6} events  {}",
            t.thread,
            t.events,
            span(t.span)
        ));
    }
    out.push(format!("episodes ({}), latest first:", m.episode_count));
    for e in &m.episodes {
        out.push(format!(
            "  #{:<5} {:<12} {:<11} {:>5} events  {}  {}",
            e.id,
            e.agent,
            e.status,
            e.events,
            span(e.span),
            e.topic.join(" ")
        ));
    }
    out.push(format!("concepts ({}):", m.concept_count));
    for c in &m.concepts {
        out.push(format!(
            "  #{:<5} support {:<4} {}",
            c.id, c.support, c.label
        ));
    }
    out.push(format!(
        "synapses ({}), most connected memories:",
        m.synapse_count
    ));
    for h in &m.hubs {
        out.push(format!(
            "  event {:<8} {:>4} links  strength {:>7.3}  {}",
            h.event.0, h.degree, h.strength, h.preview
        ));
    }
    out.join("\n")
}
