//! `hypermem`: the operator's command line over one data directory.
//!
//! The data directory comes from `--data-dir`, else `HYPERMEM_DATA_DIR`, else the profile.
//! Every command prints JSON with `--json`. Errors go to stderr with a non-zero exit code.
//!
//! Each operation verb takes its arguments from the API's own request type (`clap::Args`
//! on it, [`hypermem::api`]) and prints the API's response ([`api::text::render`] without
//! `--json`): what is here is only what is truly the command line's (global flags, the
//! verbs' grouping, files, the server, import and evaluation).

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

use api::Request;
use clap::{Args, CommandFactory as _, FromArgMatches as _, Parser, Subcommand};
use hypermem::api::{self, Api, ApiError};
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
    Observe(api::Observe),
    /// Record one observation and print the whole stored event.
    RecordEvent(api::Observe),
    /// Record several observations in one transaction (all or none).
    ObserveBatch {
        /// The observations: a JSON array of objects, or one object per line, each with
        /// the fields of `observe` (`project`, `text`, ...).
        #[arg(long)]
        file: PathBuf,
    },
    /// Recall memories for a query (or a budgeted context pack with --pack).
    Recall(RecallArgs),
    /// Build a budgeted context pack for a query.
    Pack(api::Pack),
    /// Beliefs: propose, correct, read.
    #[command(subcommand)]
    Belief(BeliefVerb),
    /// Governance plans: apply one, read what one changed.
    #[command(subcommand)]
    Plan(PlanVerb),
    /// Apply pending schema migrations (or list them with --dry-run).
    Migrate(api::Migrate),
    /// Counts per project.
    Stats,
    /// One project at a glance: sizes, span, threads, episodes (latest first, with their
    /// topics), concepts, synapse hubs, beliefs, directives, procedures.
    Map(api::MapRequest),
    /// Run one pulse tick for a project.
    Pulse(api::ProjectOnly),
    /// Knowledge gaps of a project.
    Gaps(api::ProjectLimit),
    /// Self-improvement proposals of a project.
    Proposals(api::ProjectOnly),
    /// Erase a project from every store (--confirm, or --yes).
    ForgetProject(api::ForgetProject),
    /// Episodes: start, add an event, end, show.
    #[command(subcommand)]
    Episode(EpisodeVerb),
    /// Procedures: add, suggest, record an outcome.
    #[command(subcommand)]
    Procedure(ProcedureVerb),
    /// Prospective memory: intentions, reminders, ...
    #[command(subcommand)]
    Prospective(ProspectiveVerb),
    /// Candidate beliefs (from the curator or agents) awaiting governance.
    #[command(subcommand)]
    Candidates(CandidateVerb),
    /// One stored memory: its event, access count, LTP strength, tier and citing beliefs.
    Show(api::ProjectId64),
    /// Concepts consolidation made of the episodes: list, or show one with its episodes.
    #[command(subcommand)]
    Concepts(ConceptVerb),
    /// Candidate associations of a project.
    Associations(api::ProjectLimit),
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

/// `recall`, or with `--pack` a context pack of the same query.
#[derive(Args)]
struct RecallArgs {
    #[command(flatten)]
    recall: api::Recall,
    /// Build a context pack instead of a ranked list.
    #[arg(long)]
    pack: bool,
    /// Tokens available to the caller (for --pack).
    #[arg(long, default_value_t = api::DEFAULT_AVAILABLE)]
    available: usize,
    /// Requested budget in tokens (for --pack; capped at 30 % of --available).
    #[arg(long)]
    budget: Option<usize>,
}

#[derive(Subcommand)]
enum BeliefVerb {
    /// Assert a belief backed by evidence events (a one-operation governance plan).
    Propose(api::BeliefAssert),
    /// Correct the active belief of a key (it is superseded, its window closed).
    Correct(api::BeliefCorrect),
    /// The active belief of a key.
    Current(api::BeliefKey),
    /// The belief valid at a time.
    At(api::BeliefAt),
    /// Every version of a key.
    History(api::BeliefKey),
}

#[derive(Subcommand)]
enum EpisodeVerb {
    /// Start an episode for an agent (its open one is sealed and chained).
    Start(api::EpisodeStart),
    /// Append a recorded event to an episode.
    Event(api::EpisodeAppend),
    /// Seal an episode.
    End(api::EpisodeEnd),
    /// One episode: its events, status, outcome, reward, previous and next.
    Show(api::ProjectId64),
}

#[derive(Subcommand)]
enum ProcedureVerb {
    /// Add a procedure; steps are given as repeated --step.
    Add(api::ProcedureAdd),
    /// Procedures for a situation, by trigger similarity x reliability.
    Suggest(api::ProcedureSuggest),
    /// Record an outcome.
    Outcome(api::ProcedureOutcome),
}

#[derive(Subcommand)]
enum ProspectiveVerb {
    /// Record a pending item created by an event.
    Propose(api::ProspectivePropose),
    /// Confirm an item by a later, affirmative user event.
    Confirm(api::ProspectiveConfirm),
    /// Postpone an item.
    Defer(api::ProspectiveDefer),
    /// Mark an item done.
    Complete(api::ProjectId64),
    /// Refuse an item.
    Reject(api::ProjectId64),
    /// One item: its status and the history of its transitions.
    Show(api::ProjectId64),
    /// Items due at a time (default now).
    Due(api::ProspectiveDue),
}

#[derive(Subcommand)]
enum CandidateVerb {
    /// Candidate beliefs of a project.
    List(api::ProjectOnly),
    /// Promote a candidate (governed: user-owned claims still need user evidence).
    Approve(api::ProjectId64),
    /// Reject a candidate.
    Reject(api::ProjectId64),
}

#[derive(Subcommand)]
enum ConceptVerb {
    /// The project's concepts: label, support, reliability.
    List(api::ProjectOnly),
    /// One concept with each supporting episode and its events.
    Show(api::ProjectId64),
}

#[derive(Subcommand)]
enum PlanVerb {
    /// Validate and apply a governance plan from a JSON file.
    Apply {
        /// The plan (JSON; see docs/FORMAT.md).
        #[arg(long)]
        file: PathBuf,
    },
    /// What an applied plan changed, operation by operation.
    Audit(api::PlanKey),
}

impl Command {
    /// The operation this verb is, when it is one (`None`: a verb of the command line's
    /// own: init, import, serve, mcp, eval).
    fn request(self) -> Result<Option<Request>, ApiError> {
        use Request as R;
        Ok(Some(match self {
            Command::Observe(r) => R::Observe(r),
            Command::RecordEvent(r) => R::RecordEvent(r),
            Command::ObserveBatch { file } => R::ObserveBatch(read_batch(&file)?),
            Command::Recall(RecallArgs {
                recall,
                pack: true,
                available,
                budget,
            }) => R::Pack(api::Pack {
                project: recall.project,
                query: recall.query,
                available,
                budget,
                session: recall.session,
                embedding: recall.embedding,
            }),
            Command::Recall(r) => R::Recall(r.recall),
            Command::Pack(r) => R::Pack(r),
            Command::Belief(BeliefVerb::Propose(r)) => R::BeliefAssert(r),
            Command::Belief(BeliefVerb::Correct(r)) => R::BeliefCorrect(r),
            Command::Belief(BeliefVerb::Current(r)) => R::BeliefCurrent(r),
            Command::Belief(BeliefVerb::At(r)) => R::BeliefAt(r),
            Command::Belief(BeliefVerb::History(r)) => R::BeliefHistory(r),
            Command::Plan(PlanVerb::Apply { file }) => R::ApplyPlan(api::ApplyPlan {
                plan: read_plan(&file)?,
            }),
            Command::Plan(PlanVerb::Audit(r)) => R::PlanAudit(r),
            Command::Migrate(r) => R::Migrate(r),
            Command::Stats => R::Stats(api::Empty {}),
            Command::Map(r) => R::Map(r),
            Command::Pulse(r) => R::Pulse(r),
            Command::Gaps(r) => R::Gaps(r),
            Command::Proposals(r) => R::Proposals(r),
            Command::ForgetProject(r) => R::ForgetProject(r),
            Command::Episode(EpisodeVerb::Start(r)) => R::EpisodeStart(r),
            Command::Episode(EpisodeVerb::Event(r)) => R::EpisodeAppend(r),
            Command::Episode(EpisodeVerb::End(r)) => R::EpisodeEnd(r),
            Command::Episode(EpisodeVerb::Show(r)) => R::EpisodeShow(r),
            Command::Procedure(ProcedureVerb::Add(r)) => R::ProcedureAdd(r),
            Command::Procedure(ProcedureVerb::Suggest(r)) => R::ProcedureSuggest(r),
            Command::Procedure(ProcedureVerb::Outcome(r)) => R::ProcedureOutcome(r),
            Command::Prospective(ProspectiveVerb::Propose(r)) => R::ProspectivePropose(r),
            Command::Prospective(ProspectiveVerb::Confirm(r)) => R::ProspectiveConfirm(r),
            Command::Prospective(ProspectiveVerb::Defer(r)) => R::ProspectiveDefer(r),
            Command::Prospective(ProspectiveVerb::Complete(r)) => R::ProspectiveComplete(r),
            Command::Prospective(ProspectiveVerb::Reject(r)) => R::ProspectiveReject(r),
            Command::Prospective(ProspectiveVerb::Show(r)) => R::ProspectiveShow(r),
            Command::Prospective(ProspectiveVerb::Due(r)) => R::ProspectiveDue(r),
            Command::Candidates(CandidateVerb::List(r)) => R::Candidates(r),
            Command::Candidates(CandidateVerb::Approve(r)) => R::CandidateApprove(r),
            Command::Candidates(CandidateVerb::Reject(r)) => R::CandidateReject(r),
            Command::Show(r) => R::MemoryShow(r),
            Command::Concepts(ConceptVerb::List(r)) => R::Concepts(r),
            Command::Concepts(ConceptVerb::Show(r)) => R::ConceptShow(r),
            Command::Associations(r) => R::Associations(r),
            Command::Init
            | Command::Import { .. }
            | Command::Serve { .. }
            | Command::Mcp
            | Command::Eval { .. } => return Ok(None),
        }))
    }
}

/// A governance plan from a JSON file.
fn read_plan(file: &std::path::Path) -> Result<hypermem::governance::Plan, ApiError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| ApiError::invalid(format!("cannot read plan {}: {e}", file.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        ApiError::new(
            Reason::InvalidPlan,
            hypermem::input::json_error(&format!("plan {}", file.display()), &e),
        )
    })
}

/// Observations from a file: a JSON array of `observe` objects, or one per line.
fn read_batch(file: &std::path::Path) -> Result<api::ObserveBatch, ApiError> {
    let name = format!("observations {}", file.display());
    let text = std::fs::read_to_string(file)
        .map_err(|e| ApiError::invalid(format!("cannot read {name}: {e}")))?;
    let refused = |what: String| ApiError::new(Reason::InvalidRequest, what);
    let events = if text.trim_start().starts_with('[') {
        serde_json::from_str(&text).map_err(|e| refused(hypermem::input::json_error(&name, &e)))?
    } else {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l).map_err(|e| {
                    refused(hypermem::input::json_error(
                        &format!("{name} line {}", i + 1),
                        &e,
                    ))
                })
            })
            .collect::<Result<_, _>>()?
    };
    Ok(api::ObserveBatch { events })
}

/// The file in a data directory where `hypermem serve` announces its URL while it holds
/// the store: a CLI write then refuses at once, naming the server, instead of waiting for
/// the lock.
const SERVING: &str = "SERVING";

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

/// The profile, with the environment's overrides.
fn profile(cli: &Cli) -> Result<Profile, ApiError> {
    let mut profile = match &cli.profile {
        Some(path) => Profile::load(path)?,
        None => Profile::builtin(ProfileKind::Lite)?,
    };
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
    Ok(profile)
}

/// Prints `value` under `--json`, else `text`.
fn print(
    json: bool,
    value: &impl serde::Serialize,
    text: impl FnOnce() -> String,
) -> Result<(), ApiError> {
    if json {
        out!("{}", serde_json::to_string(value)?);
    } else {
        out!("{}", text());
    }
    Ok(())
}

fn run(cli: Cli) -> Result<(), ApiError> {
    let profile = profile(&cli)?;
    let dir = cli
        .data_dir
        .clone()
        .or_else(|| std::env::var_os("HYPERMEM_DATA_DIR").map(PathBuf::from))
        .unwrap_or_else(|| profile.data_dir.clone());
    let json = cli.json;
    match cli.command {
        Command::Eval {
            data,
            k,
            per_question,
            episodes,
            sources,
            weights,
            embeddings,
            semantic_model,
        } => {
            let mut profile = profile;
            hypermem::eval::ablate(&mut profile.recall, sources.as_deref(), &weights)?;
            if semantic_model.is_some() {
                profile.semantic.model = semantic_model;
            }
            let embeddings = embeddings
                .as_deref()
                .map(|model| hypermem::eval::Embeddings::load(&data, model))
                .transpose()?;
            let scratch = tempfile::tempdir()?;
            let memory = Memory::open(&profile, Some(scratch.path()))?;
            let bar = progress_bar(json);
            let report = hypermem::eval::evaluate(
                &memory,
                &data,
                k,
                episodes,
                embeddings.as_ref(),
                |done, total| {
                    bar.set_length(total as u64);
                    bar.set_position(done as u64);
                },
            )?;
            bar.finish_and_clear();
            if let Some(path) = per_question {
                let mut lines = String::new();
                for q in &report.questions {
                    lines.push_str(&serde_json::to_string(q)?);
                    lines.push('\n');
                }
                std::fs::write(&path, lines).map_err(|e| {
                    ApiError::new(
                        Reason::IoError,
                        format!("cannot write {}: {e}", path.display()),
                    )
                })?;
            }
            return print(json, &report, || report.table());
        }
        Command::Migrate(api::Migrate { dry_run }) => {
            check_data_dir(&dir, cli.create)?;
            // On the ledger alone, unmigrated: opening the memory would apply the
            // migrations first, and a dry run would then report none.
            let ledger = hypermem::ledger::Ledger::open_unmigrated(
                dir.join("ledger.db"),
                hypermem::ledger::LedgerConfig::default(),
            )?;
            let r = ledger.migrate(dry_run)?;
            let response = api::Response::Migrate(api::Migrated {
                from: r.from,
                to: r.to,
                dry_run: r.dry_run,
                migrations: r.migrations,
            });
            return print(json, &response, || api::text::render(&response));
        }
        _ => {}
    }
    check_data_dir(&dir, cli.create || matches!(cli.command, Command::Init))?;
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
    let (init, import, mcp) = (
        matches!(cli.command, Command::Init),
        matches!(cli.command, Command::Import { .. }),
        matches!(cli.command, Command::Mcp),
    );
    let import_args = match &cli.command {
        Command::Import { data, episodes } => Some((data.clone(), *episodes)),
        _ => None,
    };
    let request = cli.command.request()?;
    let reads = request.as_ref().is_some_and(|r| !r.writes());
    // A read on a directory that holds no store creates none: it is refused.
    if reads && !cli.create && !dir.join("ledger.db").exists() {
        return Err(ApiError::new(
            Reason::NotInitialized,
            format!(
                "data directory {} holds no memory yet: `hypermem init` creates one (or any write, with --create); a read creates nothing",
                dir.display()
            ),
        ));
    }
    let memory = open(&profile, &dir, reads)?;
    if mcp {
        return hypermem::api::mcp::serve_stdio(std::sync::Arc::new(memory));
    }
    if init {
        let version = memory.ledger().schema_version()?;
        let value = json!({"data_dir": memory.data_dir(), "schema_version": version});
        return print(json, &value, || {
            format!(
                "initialized {} (schema version {version})",
                memory.data_dir().display()
            )
        });
    }
    if let (true, Some((data, episodes))) = (import, import_args) {
        let bar = progress_bar(json);
        let r = hypermem::eval::import(&memory, &data, episodes, None, |done, total| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        })?;
        bar.finish_and_clear();
        memory.flush()?;
        return print(json, &r, || {
            format!(
                "imported {} new turns of {} conversations ({} already stored, skipped; {} without text, left out)",
                r.new, r.conversations, r.skipped, r.empty
            )
        });
    }
    let request = request.expect("every other verb is an operation");
    let response = Api::new(&memory).respond(&request)?;
    print(json, &response, || api::text::render(&response))
}

/// The memory a verb works on: a view for a read (no lock, so it never waits for another
/// process, and it writes nothing: no repair, no migration, no query log; repairs are a
/// writer's, on open), else the store itself, refused at once when a running `serve`
/// holds it.
fn open(profile: &Profile, dir: &std::path::Path, reads: bool) -> Result<Memory, ApiError> {
    if reads && dir.join("ledger.db").exists() {
        return Ok(Memory::open_view(profile, Some(dir))?);
    }
    let Ok(url) = std::fs::read_to_string(dir.join(SERVING)) else {
        return Ok(Memory::open(profile, Some(dir))?);
    };
    // A server announced itself as this store's writer: no use waiting for its lock.
    let mut now = profile.clone();
    now.store.lock_wait_ms = 0;
    match Memory::open(&now, Some(dir)) {
        Err(e) if e.reason() == Reason::StoreLocked => {
            let url = url.trim();
            Err(ApiError::new(
                Reason::StoreLocked,
                format!(
                    "`hypermem serve` at {url} holds {}: send writes to it (`POST {url}/v1/projects/<project>/<op>`) or stop it first; reads work beside it",
                    dir.display()
                ),
            ))
        }
        // The server is gone (its announcement outlived it): the store is ours.
        other => {
            let _ = std::fs::remove_file(dir.join(SERVING));
            Ok(other?)
        }
    }
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
