//! `hypermem serve`: the operation layer as JSON over HTTP (axum on tokio). Many clients
//! share one [`Memory`]: every request runs on the blocking pool, recalls concurrently,
//! writes serialized inside `Memory`.
//!
//! Routes (all bodies and answers JSON; an error is `{"error": {"reason", "message"}}`
//! with the status of its class):
//! - `GET /healthz` (the process is up), `GET /readyz` (the memory is open);
//! - `POST /v1/projects/{project}/{op}`: the request of operation `op` (`recall`,
//!   `observe`, `pack`, `belief_assert`, ...; [`Request`]) without `op` and `project`;
//! - `POST /v1/ops`: any request, `op` and `project` in the body;
//! - `GET /v1/projects/{project}/beliefs/{key}`, `GET` or `POST /v1/projects/{project}/map`,
//!   `GET /v1/stats`;
//! - `GET /v1/openapi.json`: the OpenAPI 3.1 document of these routes ([`openapi`]),
//!   generated from the operation catalog.
//!
//! An unknown route or operation is 404 (`not_found`, `unknown_operation`), a wrong method
//! 405 (`method_not_allowed`), each with the JSON error document.
//!
//! Access: with a token file, every request needs `Authorization: Bearer <token>` (the
//! scheme in any case, RFC 7235); a token is scoped to projects (or `*`) and to `read` or
//! `read_write`. A project outside the token's scope gets the same answer as a project
//! that does not exist (404 `unknown_project`, the same message): a token learns nothing
//! of other projects. Without a token file the server listens only on loopback.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Api, ApiError, Request};
use crate::Memory;

/// Settings of the HTTP server.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Address to listen on (`127.0.0.1:7878` by default; port 0 picks a free port).
    pub listen: SocketAddr,
    /// Bearer tokens (none: loopback only, no authentication).
    pub tokens: Option<Tokens>,
    /// Largest request body in bytes (413 `payload_too_large` above it).
    pub max_body: usize,
    /// Longest a request may run, waiting for a worker included: after it, 503 `timeout`
    /// for an operation that has not begun to write (it never will: its first write is
    /// refused); one that began to write before then completes and its outcome is the
    /// answer, however late ([`crate::ledger::Deadline`]).
    pub timeout: Duration,
    /// Reads that run at once (twice the CPU count by default); more wait, first come
    /// first served. Writes have [`WRITERS`] workers of their own, so neither kind
    /// queues behind the other. Run all at once, requests share the cores unevenly: with 8
    /// clients recalling on 2 cores the slowest 1 % took twice the median (p99 40 ms);
    /// with 4 workers 1.5 times (31 ms) at the same throughput. As many workers as cores
    /// lost a quarter of the throughput (an operation also waits on I/O and locks).
    pub workers: usize,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 7878)),
            tokens: None,
            max_body: 16 << 20,
            timeout: Duration::from_secs(30),
            workers: 2 * std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        }
    }
}

/// A `--listen` address: an IP address and port, or a host name and port resolved to its
/// first address (IPv4 first: "localhost:0" is 127.0.0.1 with a free port).
fn listen_address(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    let resolved: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(text)
        .map_err(|e| format!("not an address (host:port): {e}"))?
        .collect();
    resolved
        .iter()
        .find(|a| a.is_ipv4())
        .or(resolved.first())
        .copied()
        .ok_or_else(|| format!("{text} resolves to no address"))
}

/// The command line's `serve` arguments (each falls back to the profile's `[server]`
/// settings, then to [`ServeConfig::default`]).
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on, `host:port` with an IP or a host name (`localhost:0`)
    /// (default: the profile's `[server] listen`, else 127.0.0.1:7878; port 0 picks a
    /// free port; the address is printed).
    #[arg(long, value_parser = listen_address)]
    pub listen: Option<SocketAddr>,
    /// Bearer tokens (TOML `[[token]]` tables: secret, projects, access; default: the
    /// profile's `[server] tokens`); without them the server listens only on loopback.
    #[arg(long)]
    pub tokens: Option<std::path::PathBuf>,
    /// Largest request body in bytes.
    #[arg(long, default_value_t = 16 << 20)]
    pub max_body: usize,
    /// Longest a request may run, waiting for a worker included, in milliseconds.
    #[arg(long, default_value_t = 30_000)]
    pub timeout_ms: u64,
    /// Reads run at once (default: twice the CPU count); more wait their turn, first
    /// come first served. Writes have two workers of their own.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub workers: Option<u32>,
}

impl ServeConfig {
    /// The settings `args` and the profile's `[server]` table ask for, checked.
    ///
    /// # Errors
    /// An unreadable tokens file; settings [`check`](Self::check) refuses.
    pub fn from_args(
        args: &ServeArgs,
        server: &crate::config::ServerSettings,
    ) -> Result<Self, ApiError> {
        let default = Self::default();
        let config = Self {
            listen: args.listen.or(server.listen).unwrap_or(default.listen),
            tokens: args
                .tokens
                .as_deref()
                .or(server.tokens.as_deref())
                .map(Tokens::load)
                .transpose()?,
            max_body: args.max_body,
            timeout: Duration::from_millis(args.timeout_ms),
            workers: args.workers.map_or(default.workers, |w| w as usize),
        };
        config.check()?;
        Ok(config)
    }

    /// Refuses a configuration that would expose the memory: a non-loopback address
    /// without tokens (`insecure_listen`).
    ///
    /// # Errors
    /// `insecure_listen`.
    pub fn check(&self) -> Result<(), ApiError> {
        if self.tokens.is_none() && !self.listen.ip().is_loopback() {
            return Err(ApiError::new(
                crate::base::Reason::InsecureListen,
                format!(
                    "refusing to listen on {} without tokens: pass --tokens, or listen on loopback",
                    self.listen
                ),
            ));
        }
        Ok(())
    }
}

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Reads only (recall, packs, beliefs, maps, ...).
    Read,
    /// Reads and writes.
    ReadWrite,
}

/// One bearer token and its scope.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Token {
    /// The secret the client sends.
    pub secret: String,
    /// The projects it may touch; `"*"` is every project (and whole-memory verbs).
    pub projects: Vec<String>,
    /// Read or read-write.
    pub access: Access,
}

/// The tokens of a server (a TOML file of `[[token]]` tables).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tokens {
    /// The tokens.
    #[serde(rename = "token")]
    pub tokens: Vec<Token>,
}

impl Tokens {
    /// Reads a token file:
    ///
    /// ```toml
    /// [[token]]
    /// secret = "s3cret-for-agent-a"
    /// projects = ["acme"]
    /// access = "read_write"
    /// ```
    ///
    /// # Errors
    /// `invalid_argument` naming the file (unreadable, not TOML, an empty secret).
    pub fn load(path: &Path) -> Result<Self, ApiError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ApiError::invalid(format!("token file {}: {}", path.display(), e.kind()))
        })?;
        let tokens: Tokens = toml::from_str(&text).map_err(|e| {
            let line = e
                .span()
                .map(|s| format!(":{}", 1 + text[..s.start].matches('\n').count()))
                .unwrap_or_default();
            ApiError::invalid(format!(
                "token file {}{line}: {}",
                path.display(),
                e.message()
            ))
        })?;
        if tokens.tokens.iter().any(|t| t.secret.trim().len() < 8) {
            return Err(ApiError::invalid(format!(
                "token file {}: every secret needs at least 8 characters",
                path.display()
            )));
        }
        Ok(tokens)
    }

    /// Whether the `Authorization` header allows `request`.
    fn check(&self, headers: &HeaderMap, request: &Request) -> Result<(), ApiError> {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, secret)| secret.trim());
        let Some(presented) = presented else {
            return Err(ApiError::new(
                crate::base::Reason::Unauthorized,
                "this server needs `Authorization: Bearer <token>`",
            ));
        };
        let Some(token) = self
            .tokens
            .iter()
            .find(|t| constant_time_eq(t.secret.as_bytes(), presented.as_bytes()))
        else {
            return Err(ApiError::new(
                crate::base::Reason::Unauthorized,
                "unknown token",
            ));
        };
        let all = token.projects.iter().any(|p| p == "*");
        match request.projects() {
            None if !all => {
                return Err(ApiError::new(
                    crate::base::Reason::ProjectForbidden,
                    format!(
                        "`{}` covers the whole memory; this token is scoped to projects",
                        request.name()
                    ),
                ));
            }
            Some(projects) if !all => {
                // The same answer as for a project that does not exist: nothing leaks.
                if let Some(p) = projects
                    .iter()
                    .find(|p| !token.projects.iter().any(|q| q == *p))
                {
                    return Err(hidden_project(p));
                }
            }
            _ => {}
        }
        if request.writes() && token.access == Access::Read {
            return Err(ApiError::new(
                crate::base::Reason::ReadOnlyToken,
                format!("this token may only read; `{}` writes", request.name()),
            ));
        }
        Ok(())
    }
}

/// The answer to a token about a project it may not see, or one that does not exist: the
/// same status, reason and message either way.
fn hidden_project(project: &str) -> ApiError {
    ApiError::new(
        crate::base::Reason::UnknownProject,
        format!("unknown project `{project}`: nothing this token may read is stored under it"),
    )
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

struct Shared {
    memory: Arc<Memory>,
    tokens: Option<Tokens>,
    timeout: Duration,
    /// One permit per worker for reads; tokio's semaphore serves waiters in order.
    workers: Arc<tokio::sync::Semaphore>,
    /// The writes' own permits ([`WRITERS`]): a write never queues behind reads, nor a
    /// read behind a long batch.
    writers: Arc<tokio::sync::Semaphore>,
    /// Whether a task is applying recall feedback now (one at a time).
    flushing: Arc<std::sync::atomic::AtomicBool>,
    /// What one observation of a batch costs this server, in nanoseconds of work.
    batch_rate: Arc<BatchRate>,
}

/// The time one observation of a batch costs this server, measured on the batches it ran
/// (a moving average), so a batch that cannot finish within the request's deadline is
/// refused before any work instead of timing out on every retry.
#[derive(Debug)]
struct BatchRate(std::sync::atomic::AtomicU64);

impl BatchRate {
    /// Before any measurement: a low estimate (this machine writes a 600-character turn
    /// in about 33 µs), so only a batch sure to miss its deadline is refused.
    const PRIOR_NS: u64 = 20_000;

    fn new() -> Self {
        Self(std::sync::atomic::AtomicU64::new(Self::PRIOR_NS))
    }

    fn per_event(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A write of `events` observations took `took`.
    fn measured(&self, events: usize, took: Duration) {
        if events == 0 {
            return;
        }
        let sample = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX) / events as u64;
        let _ = self.0.fetch_update(
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
            |old| Some((old.saturating_mul(3).saturating_add(sample)) / 4),
        );
    }

    /// A write of `events` observations did not finish within `limit`: each costs at
    /// least `limit / events`.
    fn exceeded(&self, events: usize, limit: Duration) {
        if events == 0 {
            return;
        }
        let floor = u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX) / events as u64;
        self.0
            .fetch_max(floor, std::sync::atomic::Ordering::Relaxed);
    }

    /// The refusal of a batch of `events` that would not finish within `limit`.
    fn refuse(&self, events: usize, limit: Duration) -> Option<ApiError> {
        let per = self.per_event().max(1);
        let expected = Duration::from_nanos(per.saturating_mul(events as u64));
        if expected <= limit {
            return None;
        }
        // Batches that use at most half of the deadline at the measured rate.
        let fits = (u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX) / 2 / per).max(1);
        Some(ApiError::new(
            crate::base::Reason::BatchExceedsDeadline,
            format!(
                "a batch of {events} observations takes about {} ms at this server's rate ({} µs each), over the {} ms deadline; nothing was written: split it into batches of at most {fits}",
                expected.as_millis(),
                per / 1_000,
                limit.as_millis()
            ),
        ))
    }
}

/// Applies a due batch of recall feedback in a blocking task of its own, after the
/// response that filled it: no request waits on its write and sync.
fn flush_feedback_behind(shared: &Shared) {
    use std::sync::atomic::Ordering;
    if !shared.memory.feedback_due() || shared.flushing.swap(true, Ordering::AcqRel) {
        return;
    }
    let (memory, flushing) = (shared.memory.clone(), shared.flushing.clone());
    tokio::task::spawn_blocking(move || {
        if let Err(e) = memory.flush_feedback() {
            tracing::warn!(error = %e, "recall feedback not applied");
        }
        flushing.store(false, Ordering::Release);
    });
}

/// The refusal of an operation whose time ran out before it began: nothing was done.
fn timed_out() -> ApiError {
    ApiError::new(
        crate::base::Reason::Timeout,
        "the operation's time ran out before a worker took it; nothing was done, and a retry is safe",
    )
}

fn error_response(e: &ApiError) -> Response {
    let status =
        StatusCode::from_u16(e.class.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, axum::Json(e.to_json())).into_response()
}

/// The body as a JSON object (an empty body is `{}`).
fn body_object(
    body: Result<Bytes, BytesRejection>,
) -> Result<serde_json::Map<String, Value>, ApiError> {
    let bytes = body.map_err(|r| {
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                crate::base::Reason::PayloadTooLarge,
                "the request body exceeds the server's limit",
            )
        } else {
            ApiError::invalid("the request body could not be read")
        }
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(serde_json::Map::new());
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::new(
            crate::base::Reason::InvalidJson,
            "the body must be a JSON object",
        )),
        Err(e) => Err(ApiError::new(
            crate::base::Reason::InvalidJson,
            crate::input::json_error("request body", &e),
        )),
    }
}

async fn run(shared: Arc<Shared>, headers: HeaderMap, request: Request) -> Response {
    if let Some(tokens) = &shared.tokens
        && let Err(e) = tokens.check(&headers, &request)
    {
        return error_response(&e);
    }
    let op = request.name();
    // With tokens, a missing project is answered as an out-of-scope one.
    let hidden = shared
        .tokens
        .as_ref()
        .and_then(|_| request.projects())
        .and_then(|p| p.first().map(|p| (*p).to_owned()));
    let started = Instant::now();
    // Batches only: a single observation's cost is mostly its commit's sync, which a
    // batch pays once, so it would overstate what one more observation of a batch costs.
    let batch = match &request {
        Request::ObserveBatch(b) if b.events.len() > 1 => b.events.len(),
        _ => 0,
    };
    if let Some(refused) = shared.batch_rate.refuse(batch, shared.timeout) {
        tracing::info!(op, status = refused.class.http_status(), reason = %refused.reason, "request");
        return error_response(&refused);
    }
    let rate = shared.batch_rate.clone();
    // When the operation got its worker (µs after `started`; 0 until then): only the time
    // it worked says what its observations cost.
    let began = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let began_at = began.clone();
    let memory = shared.memory.clone();
    let workers = if request.writes() {
        shared.writers.clone()
    } else {
        shared.workers.clone()
    };
    // The request's deadline, claimed by the operation's first write: a timeout is
    // answered only for an operation that has not written and never will; one that began
    // to write is waited for and its outcome answered, however late.
    let deadline = crate::ledger::Deadline::new(started + shared.timeout);
    let claimed = deadline.clone();
    let work = async move {
        // The permit travels with the operation: it is returned when the operation ends.
        let permit = workers
            .acquire_owned()
            .await
            .expect("the worker semaphore is never closed");
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            // Answered already (its time ran out while it waited for a worker): nothing
            // of it runs.
            if claimed.abandoned() {
                return Err(timed_out());
            }
            // Serialized here, straight from the typed result (no JSON tree in between),
            // while the operation still holds its worker.
            let working = Instant::now();
            let since = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            began_at.store(since.max(1), std::sync::atomic::Ordering::Relaxed);
            let answer = crate::ledger::Deadline::run(&claimed, || {
                let response = Api::new(&memory).respond(&request)?;
                serde_json::to_vec(&response).map_err(ApiError::from)
            });
            if answer.is_ok() {
                rate.measured(batch, working.elapsed());
            }
            answer
        })
        .await
    };
    tokio::pin!(work);
    let joined = match tokio::time::timeout(shared.timeout, &mut work).await {
        Ok(joined) => Some(joined),
        Err(_) if deadline.abandon() => {
            let began = began.load(std::sync::atomic::Ordering::Relaxed);
            if began > 0 {
                let worked = shared.timeout.saturating_sub(Duration::from_micros(began));
                shared.batch_rate.exceeded(batch, worked);
            }
            None
        }
        // It began to write before its time ran out: its outcome is the answer.
        Err(_) => Some(work.await),
    };
    let result = match joined {
        Some(Ok(result)) => result,
        Some(Err(join)) => Err(ApiError::new(
            crate::base::Reason::Internal,
            format!("the operation failed inside the server: {join}"),
        )),
        None => Err(ApiError::new(
            crate::base::Reason::Timeout,
            format!(
                "the operation did not finish within {} ms; it wrote nothing and never will, so a retry is safe",
                shared.timeout.as_millis()
            ),
        )),
    };
    let ms = started.elapsed().as_secs_f64() * 1e3;
    flush_feedback_behind(&shared);
    match result {
        Ok(body) => {
            tracing::info!(op, status = 200, ms, "request");
            (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/json")],
                body,
            )
                .into_response()
        }
        Err(e) => {
            tracing::info!(op, status = e.class.http_status(), reason = %e.reason, ms, "request");
            match hidden {
                Some(project) if e.reason == crate::base::Reason::UnknownProject => {
                    error_response(&hidden_project(&project))
                }
                _ => error_response(&e),
            }
        }
    }
}

async fn project_op(
    State(shared): State<Arc<Shared>>,
    UrlPath((project, op)): UrlPath<(String, String)>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    route_op(shared, project, op, headers, body).await
}

async fn map_post(
    State(shared): State<Arc<Shared>>,
    UrlPath(project): UrlPath<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    route_op(shared, project, "map".to_owned(), headers, body).await
}

/// A request from a route's project and operation and its body.
fn request_of(object: serde_json::Map<String, Value>) -> Result<Request, ApiError> {
    Request::from_json(Value::Object(object))
}

async fn route_op(
    shared: Arc<Shared>,
    project: String,
    op: String,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let mut object = match body_object(body) {
        Ok(o) => o,
        Err(e) => return error_response(&e),
    };
    object.insert("op".to_owned(), Value::String(op));
    if object.contains_key("plan") {
        // A plan names its project itself; the route's must agree.
        if object["plan"].get("project").and_then(Value::as_str) != Some(project.as_str()) {
            return error_response(&ApiError::invalid(
                "the plan's `project` differs from the route's",
            ));
        }
    } else if object.contains_key("events") {
        // A batch: each event names its project or takes the route's; one that names
        // another is refused (nothing is stored in a project the caller did not name).
        if let Some(events) = object.get_mut("events").and_then(Value::as_array_mut) {
            for e in events.iter_mut().filter_map(Value::as_object_mut) {
                let named = e
                    .entry("project")
                    .or_insert_with(|| Value::String(project.clone()));
                if named.as_str() != Some(project.as_str()) {
                    return error_response(&ApiError::invalid(
                        "an event's `project` differs from the route's",
                    ));
                }
            }
        }
    } else {
        // The body may repeat the route's project, never contradict it.
        if object
            .get("project")
            .is_some_and(|p| p.as_str() != Some(project.as_str()))
        {
            return error_response(&ApiError::invalid(
                "the body's `project` differs from the route's",
            ));
        }
        object.insert("project".to_owned(), Value::String(project));
    }
    match request_of(object) {
        Ok(r) => run(shared, headers, r).await,
        Err(e) => error_response(&e),
    }
}

async fn any_op(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    match body_object(body).and_then(request_of) {
        Ok(r) => run(shared, headers, r).await,
        Err(e) => error_response(&e),
    }
}

async fn belief(
    State(shared): State<Arc<Shared>>,
    UrlPath((project, key)): UrlPath<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let r = Request::BeliefCurrent(super::BeliefKey { project, key });
    run(shared, headers, r).await
}

async fn map(
    State(shared): State<Arc<Shared>>,
    UrlPath(project): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    let r = Request::Map(super::MapRequest {
        project,
        limit: crate::DEFAULT_MAP_LIMIT,
    });
    run(shared, headers, r).await
}

async fn stats(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    run(shared, headers, Request::Stats(super::Empty {})).await
}

/// Moves the `$defs` of a request schema into `components/schemas` and points its
/// references there; drops the root's `$schema` (the document declares its dialect).
fn hoist(mut schema: Value, components: &mut serde_json::Map<String, Value>) -> Value {
    fn repoint(v: &mut Value) {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get_mut("$ref")
                    && let Some(name) = r.strip_prefix("#/$defs/")
                {
                    *r = format!("#/components/schemas/{name}");
                }
                map.values_mut().for_each(repoint);
            }
            Value::Array(items) => items.iter_mut().for_each(repoint),
            _ => {}
        }
    }
    repoint(&mut schema);
    if let Some(map) = schema.as_object_mut() {
        map.remove("$schema");
        if let Some(Value::Object(defs)) = map.remove("$defs") {
            // Two types of one name would overwrite each other: the catalog's types are
            // named apart (`catalog`'s tests check every operation's).
            components.extend(defs);
        }
    }
    schema
}

/// The OpenAPI 3.1 document of this server (`GET /v1/openapi.json`), generated from the
/// [catalog](super::catalog): one `POST /v1/projects/{project}/{op}` per operation with
/// its request schema, `POST /v1/ops` for any operation, the `GET` routes, and the one
/// error document of every refusal.
pub fn openapi() -> Value {
    let mut components = serde_json::Map::new();
    components.insert(
        "Error".to_owned(),
        json!({
            "type": "object",
            "required": ["error"],
            "properties": {"error": {
                "type": "object",
                "required": ["reason", "message"],
                "properties": {
                    "reason": {"type": "string", "description": "The stable reason (snake_case)."},
                    "message": {"type": "string"},
                    "detail": {"description": "The refusal's own fields."},
                    "retryable": {"type": "boolean"}
                }
            }}
        }),
    );
    let responses = |what: &str, schema: Value| {
        json!({
            "200": {"description": what, "content": {"application/json": {"schema": schema}}},
            "default": {
                "description": "A refusal: its status follows the reason's class.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
            }
        })
    };
    let project =
        json!({"name": "project", "in": "path", "required": true, "schema": {"type": "string"}});
    let mut paths = serde_json::Map::new();
    let catalog = super::catalog::catalog();
    // Each operation's result schema, by operation.
    let results: std::collections::HashMap<&str, Value> = catalog
        .iter()
        .map(|op| (op.name, hoist(op.response.clone(), &mut components)))
        .collect();
    let result = |name: &str| results.get(name).cloned().unwrap_or_default();
    for op in &catalog {
        if matches!(op.name, "stats" | "migrate") {
            // Whole-memory operations: `GET /v1/stats` and `POST /v1/ops`.
            continue;
        }
        let mut schema = hoist(op.schema.clone(), &mut components);
        // The route names the project.
        if let Some(map) = schema.as_object_mut() {
            if let Some(Value::Object(p)) = map.get_mut("properties") {
                p.remove("project");
            }
            if let Some(Value::Array(r)) = map.get_mut("required") {
                r.retain(|f| f != "project");
            }
        }
        paths.insert(
            format!("/v1/projects/{{project}}/{}", op.name),
            json!({"post": {
                "operationId": op.name,
                "description": op.description,
                "parameters": [project],
                "requestBody": {"content": {"application/json": {"schema": schema}}},
                "responses": responses("The operation's result.", result(op.name)),
            }}),
        );
    }
    let names: Vec<&str> = catalog.iter().map(|o| o.name).collect();
    paths.insert(
        "/v1/ops".to_owned(),
        json!({"post": {
            "operationId": "ops",
            "description": "Any operation: `op` and its fields, `project` included, in the body.",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
                "type": "object",
                "required": ["op"],
                "properties": {"op": {"type": "string", "enum": names}}
            }}}},
            "responses": responses(
                "The operation's result: the result of the operation `op` names.",
                json!({"anyOf": names.iter().map(|n| result(n)).collect::<Vec<_>>()}),
            ),
        }}),
    );
    if let Some(Value::Object(map)) = paths.get_mut("/v1/projects/{project}/map") {
        map.insert(
            "get".to_owned(),
            json!({
                "operationId": "map_get",
                "description": "One project at a glance, with the default limit.",
                "parameters": [project],
                "responses": responses("The project's map.", result("map")),
            }),
        );
    }
    let key = json!({"name": "key", "in": "path", "required": true, "schema": {"type": "string"}});
    let status = |word: &str| json!({"type": "object", "required": ["status"], "properties": {"status": {"const": word}}});
    for (path, id, what, parameters, schema) in [
        (
            "/v1/stats",
            "stats",
            "Counts per project of this memory.",
            json!([]),
            result("stats"),
        ),
        (
            "/v1/projects/{project}/beliefs/{key}",
            "belief_get",
            "The active belief of a key (404 `not_found` when it has none).",
            json!([project, key]),
            result("belief_current"),
        ),
        (
            "/healthz",
            "healthz",
            "The process is up.",
            json!([]),
            status("ok"),
        ),
        (
            "/readyz",
            "readyz",
            "The memory is open.",
            json!([]),
            status("ready"),
        ),
        (
            "/v1/openapi.json",
            "openapi",
            "This document.",
            json!([]),
            json!({"type": "object", "required": ["openapi", "paths"]}),
        ),
    ] {
        paths.insert(
            path.to_owned(),
            json!({"get": {"operationId": id, "description": what, "parameters": parameters, "responses": responses(what, schema)}}),
        );
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "hypermem",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Governed long-term memory for AI agents. With a token file, every route but `healthz`, `readyz` and this document needs `Authorization: Bearer <token>`."
        },
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}
        }
    })
}

async fn method_not_allowed() -> Response {
    error_response(&ApiError::new(
        crate::base::Reason::MethodNotAllowed,
        "this route does not take this method (operations are POST; `beliefs/{key}`, `map`, `stats`, `healthz` and `readyz` are GET)",
    ))
}

async fn not_found() -> Response {
    error_response(&ApiError::new(
        crate::base::Reason::NotFound,
        "no such route (see `hypermem serve --help` and the README)",
    ))
}

/// The router over `memory` (exposed for tests and embedding in another server).
pub fn router(memory: Arc<Memory>, config: &ServeConfig) -> Router {
    // Recall feedback is applied behind the responses (`flush_feedback_behind`).
    memory.defer_feedback();
    let shared = Arc::new(Shared {
        memory,
        tokens: config.tokens.clone(),
        timeout: config.timeout,
        workers: Arc::new(tokio::sync::Semaphore::new(config.workers.max(1))),
        writers: Arc::new(tokio::sync::Semaphore::new(WRITERS)),
        flushing: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        batch_rate: Arc::new(BatchRate::new()),
    });
    Router::new()
        .route(
            "/healthz",
            get(|| async { axum::Json(json!({"status": "ok"})) }),
        )
        .route(
            "/readyz",
            get(|| async { axum::Json(json!({"status": "ready"})) }),
        )
        .route("/v1/ops", post(any_op))
        .route(
            "/v1/openapi.json",
            get(|| async {
                static DOCUMENT: std::sync::LazyLock<Value> = std::sync::LazyLock::new(openapi);
                axum::Json(DOCUMENT.clone())
            }),
        )
        .route("/v1/stats", get(stats))
        .route("/v1/projects/{project}/map", get(map).post(map_post))
        .route("/v1/projects/{project}/beliefs/{key}", get(belief))
        .route("/v1/projects/{project}/{op}", post(project_op))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(config.max_body))
        .with_state(shared)
}

/// Serves `memory` until SIGINT or SIGTERM, then drains in-flight requests and flushes
/// every store. `ready` is called with the bound address once the server accepts
/// connections.
///
/// # Errors
/// `insecure_listen` (a non-loopback address without tokens), `io_error` (the address
/// cannot be bound), store errors of the final flush.
pub fn serve(
    memory: Arc<Memory>,
    config: &ServeConfig,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ApiError> {
    config.check()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            ApiError::new(
                crate::base::Reason::Internal,
                format!("cannot start the runtime: {e}"),
            )
        })?;
    let app = router(memory.clone(), config);
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|e| {
                ApiError::new(
                    crate::base::Reason::IoError,
                    format!("cannot listen on {}: {e}", config.listen),
                )
            })?;
        let addr = listener
            .local_addr()
            .map_err(|e| ApiError::new(crate::base::Reason::IoError, e.to_string()))?;
        ready(addr);
        // Responses go out as soon as they are written (no Nagle delay on a reply that
        // spans more than one segment).
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::warn!(error = %e, "TCP_NODELAY not set");
            }
        });
        let (stopping, mut stop) = tokio::sync::watch::channel(false);
        let server = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                shutdown_signal().await;
                tracing::info!("stopping: draining requests in flight");
                stopping.send_replace(true);
            })
            .into_future();
        // A client that never finishes its request (a body trickling in) does not hold
        // the process: past the drain deadline what is still in flight is dropped
        // unanswered (no write of it was acknowledged; work already handed to a worker
        // thread finishes before the stores are flushed).
        let deadline = async move {
            if stop.wait_for(|s| *s).await.is_err() {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(DRAIN).await;
        };
        tokio::select! {
            served = server => served.map_err(|e| {
                ApiError::new(crate::base::Reason::IoError, format!("server failed: {e}"))
            }),
            () = deadline => {
                tracing::warn!(
                    seconds = DRAIN.as_secs(),
                    "requests still in flight at the drain deadline were dropped"
                );
                Ok(())
            }
        }
    })?;
    drop(runtime);
    tracing::info!("shutting down: flushing every store");
    memory.flush()?;
    Ok(())
}

/// Writes that run at once, beside the read workers: the ledger commits one at a time,
/// and a second lets one write encode its vectors while another commits.
const WRITERS: usize = 2;

/// How long a stopping server waits for requests in flight before dropping them: with
/// the final flush, SIGTERM ends the process within 10 s.
const DRAIN: std::time::Duration = std::time::Duration::from_secs(6);

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let terminate = async {
            match term.as_mut() {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = interrupt => {},
            () = terminate => {},
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
