//! How a local process (the command line) works on a data directory: a read opens a view
//! (no lock, nothing written), a write opens the store, and a running `hypermem serve`
//! announces itself in the directory so a write is sent to it ([`forward`]) instead of
//! waiting for its lock.

use std::path::Path;

use super::{ApiError, Request, Response};
use crate::{ErrorClass, Memory, Profile, Reason};

/// The file in a data directory where `hypermem serve` announces its URL while it holds
/// the store: a CLI write then refuses at once, naming the server, instead of waiting for
/// the lock.
pub const SERVING: &str = "SERVING";

/// The data directory must exist and be a directory, unless the verb may create it.
///
/// # Errors
/// `not_a_directory`, `data_dir_missing` (naming `hypermem init`), `io_error`.
pub fn check_data_dir(dir: &Path, may_create: bool) -> Result<(), ApiError> {
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

/// `serve` announces itself as the writer of `dir` at `url` (see [`SERVING`]).
pub fn announce(dir: &Path, url: &str) {
    if let Err(e) = std::fs::write(dir.join(SERVING), format!("{url}\n")) {
        tracing::warn!(error = %e, "could not announce the server in the data directory");
    }
}

/// `serve` withdraws its announcement when it stops.
pub fn withdraw(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(SERVING));
}

/// The memory a verb works on: a view for a read (no lock, so it never waits for another
/// process, and it changes nothing stored: no repair, no migration, no learning, only the
/// query log its recalls leave for knowledge gaps; repairs are a
/// writer's, on open), else the store itself, refused at once when a running `serve`
/// holds it.
///
/// # Errors
/// `not_initialized` for a read of a directory without a store (unless `create`), a
/// store another process holds (`store_locked`, naming a running server), the memory's
/// errors on open.
pub fn open(profile: &Profile, dir: &Path, reads: bool, create: bool) -> Result<Memory, ApiError> {
    // A read on a directory that holds no store creates none: it is refused.
    if reads && !create && !dir.join("ledger.db").exists() {
        return Err(ApiError::new(
            Reason::NotInitialized,
            format!(
                "data directory {} holds no memory yet: `hypermem init` creates one (or any write, with --create); a read creates nothing",
                dir.display()
            ),
        ));
    }
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

/// Runs `request` on the memory in `dir` as a local process should: beside a running
/// server, the server makes it ([`forward`]) — a write, and a read too, so a read counts
/// its access as every read the server answers does and uses the indexes it keeps warm;
/// otherwise a read opens a view (which writes nothing: no access is counted) and a write
/// the store ([`open`]).
///
/// # Errors
/// The operation's refusal (the server's, when it made it), or [`open`]'s.
pub fn respond(
    profile: &Profile,
    dir: &Path,
    request: &Request,
    create: bool,
) -> Result<Response, ApiError> {
    // A write sent to a server carries an idempotency key: if its answer is lost (the
    // server dies after the commit), the write made here instead finds the stored event
    // under that key rather than storing it twice.
    let keyed;
    let request = if dir.join(SERVING).exists() {
        keyed = keyed_writes(request);
        &keyed
    } else {
        request
    };
    match forward(dir, request) {
        // A read the server will not make for this caller (no token for it) needs no
        // server: it opens a view, as with no server at all.
        Some(Err(e))
            if !request.writes()
                && matches!(e.class, ErrorClass::Unauthorized | ErrorClass::Forbidden) => {}
        Some(answer) => return answer,
        None => {}
    }
    let memory = open(profile, dir, !request.writes(), create)?;
    super::Api::new(&memory).respond(request)
}

/// `request` with a source id (the events' idempotency key, unique per project) on every
/// observation that has none: `cli-<32 hex>-<index>`, random per call.
fn keyed_writes(request: &Request) -> Request {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!("{nanos}-{}", std::process::id());
    let call = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(seed.as_bytes()));
    let key = |o: &mut super::Observe, i: usize| {
        o.source_id.get_or_insert_with(|| format!("cli-{call}-{i}"));
    };
    let mut request = request.clone();
    match &mut request {
        Request::Observe(o) | Request::RecordEvent(o) => key(o, 0),
        Request::ObserveBatch(b) => b.events.iter_mut().enumerate().for_each(|(i, o)| key(o, i)),
        _ => {}
    }
    request
}

/// How long a forwarded request may take: the server's own limit (30 s by default) and
/// the round trip.
const FORWARD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(40);

/// Sends `request` to the `hypermem serve` that announced itself as the writer of `dir`
/// (`POST <url>/v1/ops`, with the bearer token in `HYPERMEM_TOKEN` if set) and returns
/// its answer: the response, or its refusal with the server's reason. `None` when no
/// server announced itself or the one that did does not answer (it is gone: the caller
/// opens the store, and clears the stale announcement).
pub fn forward(dir: &Path, request: &Request) -> Option<Result<Response, ApiError>> {
    let url = std::fs::read_to_string(dir.join(SERVING)).ok()?;
    let url = url.trim();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(FORWARD_TIMEOUT))
        .build()
        .into();
    let mut call = agent
        .post(&format!("{url}/v1/ops"))
        .header("Content-Type", "application/json");
    if let Ok(token) = std::env::var("HYPERMEM_TOKEN") {
        call = call.header("Authorization", &format!("Bearer {token}"));
    }
    let body = match serde_json::to_string(request) {
        Ok(body) => body,
        Err(e) => return Some(Err(e.into())),
    };
    // A server that does not answer is gone (a refused connection, a dead process).
    let mut answer = call.send(&body).ok()?;
    let status = answer.status().as_u16();
    let value: Result<serde_json::Value, _> =
        answer.body_mut().with_config().limit(u64::MAX).read_json();
    let Ok(value) = value else {
        return Some(Err(ApiError::new(
            Reason::Unavailable,
            format!(
                "the server at {url} (which holds {}) answered {status} with no JSON document",
                dir.display()
            ),
        )));
    };
    if status == 200 {
        return Some(Response::decode(request.name(), value));
    }
    let error = &value["error"];
    let reason = error["reason"]
        .as_str()
        .and_then(Reason::parse)
        .unwrap_or(Reason::Internal);
    let mut message = error["message"].as_str().unwrap_or_default().to_owned();
    if matches!(status, 401 | 403) {
        message.push_str(&format!(
            " (the server at {url} holds {}: give a token for this write in HYPERMEM_TOKEN)",
            dir.display()
        ));
    }
    let mut refused = ApiError::new(reason, message);
    refused.detail = error.get("detail").cloned();
    Some(Err(refused))
}
