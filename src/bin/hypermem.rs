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
use hypermem::api::{self, ApiError, local};
use hypermem::{ErrorClass, Memory, Profile, ProfileKind};
use indicatif::{ProgressBar, ProgressStyle};

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
    /// One project at a glance: threads, episodes, concepts, hubs, beliefs, procedures.
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
    Import(hypermem::eval::ImportArgs),
    /// Serve the operations as JSON over HTTP until SIGINT/SIGTERM (then drain and flush).
    Serve(hypermem::api::http::ServeArgs),
    /// Serve the operations as MCP tools over stdin/stdout (for an agent's MCP client).
    Mcp,
    /// Retrieval evaluation: import a data set into a fresh memory and score recall.
    Eval(hypermem::eval::EvalArgs),
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
            Command::ObserveBatch { file } => R::ObserveBatch(api::ObserveBatch::from_file(&file)?),
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
                at_least: recall.at_least,
                wait_ms: recall.wait_ms,
            }),
            Command::Recall(r) => R::Recall(r.recall),
            Command::Pack(r) => R::Pack(r),
            Command::Belief(BeliefVerb::Propose(r)) => R::BeliefAssert(r),
            Command::Belief(BeliefVerb::Correct(r)) => R::BeliefCorrect(r),
            Command::Belief(BeliefVerb::Current(r)) => R::BeliefCurrent(r),
            Command::Belief(BeliefVerb::At(r)) => R::BeliefAt(r),
            Command::Belief(BeliefVerb::History(r)) => R::BeliefHistory(r),
            Command::Plan(PlanVerb::Apply { file }) => {
                R::ApplyPlan(api::ApplyPlan::from_file(&file)?)
            }
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
            | Command::Import(_)
            | Command::Serve(_)
            | Command::Mcp
            | Command::Eval(_) => return Ok(None),
        }))
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
    let profile = match &cli.profile {
        Some(path) => Profile::load(path)?,
        None => Profile::builtin(ProfileKind::Lite)?,
    }
    .with_env();
    let dir = cli
        .data_dir
        .clone()
        .or_else(|| std::env::var_os("HYPERMEM_DATA_DIR").map(PathBuf::from))
        .unwrap_or_else(|| profile.data_dir.clone());
    let json = cli.json;
    match cli.command {
        Command::Eval(args) => {
            let bar = progress_bar(json);
            let report = hypermem::eval::run(&args, profile, |done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            })?;
            bar.finish_and_clear();
            print(json, &report, || report.table())
        }
        Command::Migrate(api::Migrate { dry_run }) => {
            local::check_data_dir(&dir, cli.create)?;
            // On the ledger alone, unmigrated: opening the memory would apply the
            // migrations first, and a dry run would then report none. A dry run writes
            // nothing: with no ledger yet, it reports every migration from version 0 on a
            // ledger in memory instead of creating the file.
            let path = dir.join("ledger.db");
            let ledger = if let Some(url) = &profile.ledger.url {
                // The profile's PostgreSQL ledger, reached without migrating it first.
                #[cfg(feature = "postgres")]
                {
                    hypermem::ledger::Ledger::connect_unmigrated(
                        url,
                        profile.ledger.password().as_deref(),
                        hypermem::ledger::LedgerConfig::default(),
                    )?
                }
                #[cfg(not(feature = "postgres"))]
                {
                    return Err(hypermem::ledger::LedgerError::Invalid {
                        what: "ledger.url",
                        reason: format!(
                            "this binary has no PostgreSQL ledger (`{}`); build it with the scale profile",
                            hypermem::config::redact_url(url)
                        ),
                    }
                    .into());
                }
            } else if dry_run && !path.exists() {
                hypermem::ledger::Ledger::open_unmigrated(
                    ":memory:",
                    hypermem::ledger::LedgerConfig::default(),
                )?
            } else {
                hypermem::ledger::Ledger::open_unmigrated(
                    path,
                    hypermem::ledger::LedgerConfig::default(),
                )?
            };
            let r = ledger.migrate(dry_run)?;
            let response = api::Response::Migrate(api::Migrated {
                from: r.from,
                to: r.to,
                dry_run: r.dry_run,
                migrations: r.migrations,
            });
            print(json, &response, || api::text::render(&response))
        }
        Command::Serve(args) => {
            local::check_data_dir(&dir, cli.create)?;
            let config = api::http::ServeConfig::from_args(&args, &profile.server)?;
            let memory = Memory::open(&profile, Some(&dir))?;
            let memory = std::sync::Arc::new(memory);
            memory.spawn_embedder();
            let served = api::http::serve(memory, &config, |addr| {
                let url = format!("http://{addr}");
                local::announce(&dir, &url);
                let text = format!("listening on {url}");
                let _ = print(json, &api::Listening { listening: url }, || text);
                let _ = std::io::Write::flush(&mut std::io::stdout());
            });
            local::withdraw(&dir);
            served
        }
        Command::Init => {
            local::check_data_dir(&dir, true)?;
            let memory = local::open(&profile, &dir, false, true)?;
            let (data_dir, version) = (memory.data_dir(), memory.ledger().schema_version()?);
            let value = api::Initialized {
                data_dir: data_dir.to_owned(),
                schema_version: version,
            };
            print(json, &value, || {
                format!(
                    "initialized {} (schema version {version})",
                    memory.data_dir().display()
                )
            })
        }
        Command::Mcp => {
            // A memory that cannot be opened (another process holds it, the directory is
            // missing) is still served: every tool call answers the refusal, so an MCP
            // client reads its reason; the process then exits with it.
            let memory = local::check_data_dir(&dir, cli.create)
                .and_then(|()| local::open(&profile, &dir, false, cli.create))
                .map(std::sync::Arc::new);
            if let Ok(memory) = &memory {
                memory.spawn_embedder();
            }
            api::mcp::serve_stdio(memory)
        }
        Command::Import(hypermem::eval::ImportArgs { data, episodes }) => {
            local::check_data_dir(&dir, cli.create)?;
            let memory = local::open(&profile, &dir, false, cli.create)?;
            let bar = progress_bar(json);
            let r = hypermem::eval::import(&memory, &data, episodes, None, |done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            })?;
            bar.finish_and_clear();
            memory.flush()?;
            print(json, &r, || {
                format!(
                    "imported {} new turns of {} conversations ({} already stored, skipped; {} without text, left out)",
                    r.new, r.conversations, r.skipped, r.empty
                )
            })
        }
        verb => {
            local::check_data_dir(&dir, cli.create)?;
            let request = verb.request()?.expect("every other verb is an operation");
            let response = local::respond(&profile, &dir, &request, cli.create)?;
            print(json, &response, || api::text::render(&response))
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

/// The refusal a server gives the value a command line could not parse ("--k -3": `k`
/// must be at least 0), when the request's schema refuses it: the field it is, checked by
/// the catalog as a number when it reads as one, else as a string. `None` for any other
/// command-line error (clap's own message then).
fn value_refusal(e: &clap::Error) -> Option<ApiError> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if !matches!(
        e.kind(),
        ErrorKind::InvalidValue | ErrorKind::ValueValidation
    ) {
        return None;
    }
    let text = |kind| match e.get(kind)? {
        ContextValue::String(s) => Some(s.clone()),
        _ => None,
    };
    let arg = text(ContextKind::InvalidArg)?;
    let raw = text(ContextKind::InvalidValue)?;
    let field = arg
        .strip_prefix("--")?
        .split([' ', '='])
        .next()?
        .replace('-', "_");
    let value = serde_json::from_str::<serde_json::Value>(&raw)
        .ok()
        .filter(serde_json::Value::is_number)
        .unwrap_or(serde_json::Value::String(raw));
    let ops = api::catalog::catalog();
    let op = std::env::args()
        .skip(1)
        .map(|a| a.replace('-', "_"))
        .find(|a| ops.iter().any(|o| o.name == a.as_str()))?;
    // An option of the command line alone (`--embedding-file`) keeps clap's message.
    ops.iter()
        .find(|o| o.name == op)?
        .schema
        .get("properties")?
        .get(&field)?;
    let fields = serde_json::Map::from_iter([(field, value)]);
    let message = api::catalog::misfit(&op, &fields)?;
    Some(ApiError::new(
        hypermem::base::Reason::InvalidRequest,
        message,
    ))
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
            // A value the request's schema refuses is refused as over HTTP and MCP: the
            // same reason and message, naming the field.
            if let Some(refusal) = value_refusal(&e) {
                if json {
                    out!("{}", refusal.to_json());
                }
                eprintln!("error: {}", refusal.message);
            } else {
                if json {
                    out!("{}", ApiError::from(&e).to_json());
                }
                let _ = e.print();
            }
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
