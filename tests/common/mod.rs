//! Helpers shared by the integration tests.
#![allow(dead_code)]

use hypermem::hdv::{Dim, Hypervector};
use hypermem::store::{Hit, ProjectId, VectorId};

/// The deterministic vector of an id (so any reader can check bit-identity).
pub fn vector_of(dim: Dim, project: &str, id: u64) -> Hypervector {
    let salt = project
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(131).wrapping_add(u64::from(b)));
    Hypervector::random(dim, id ^ salt.rotate_left(17))
}

/// A user message in `session` (also its thread).
pub fn user_says(project_name: &str, session: &str, text: &str) -> hypermem::ledger::NewEvent {
    use hypermem::ledger::{EventKind, NewEvent, Role};
    NewEvent::new(project(project_name), Role::User, EventKind::Message, text)
        .thread(session)
        .session(session)
}

/// `n` distinct build notes from number `from` on, each with a source id, so a retried
/// batch is recognised as the stored one.
pub fn chatter(project_name: &str, from: usize, n: usize) -> Vec<hypermem::ledger::NewEvent> {
    (from..from + n)
        .map(|i| {
            let mut e = user_says(
                project_name,
                "s",
                &format!("note {i}: the build of module {i} finished after {i} retries"),
            );
            e.source_id = Some(format!("chatter-{i}"));
            e
        })
        .collect()
}

pub fn project(name: &str) -> ProjectId {
    ProjectId::new(name).unwrap()
}

/// Brute-force top-k over (id, vector) pairs, nearest first, ties by id.
pub fn brute_force(items: &[(VectorId, Hypervector)], query: &Hypervector, k: usize) -> Vec<Hit> {
    let mut all: Vec<Hit> = items
        .iter()
        .map(|(id, v)| Hit {
            id: *id,
            distance: v.hamming(query),
        })
        .collect();
    all.sort_by_key(Hit::key);
    all.truncate(k);
    all
}

pub mod ports;
pub mod serve;

#[cfg(feature = "standard")]
pub mod redis_server;

#[cfg(feature = "scale")]
pub mod qdrant_server;

/// The lite profile at 2,048 bits (small and quick for recall tests).
pub fn small_profile() -> hypermem::Profile {
    let mut p =
        hypermem::Profile::load(hypermem::Profile::bundled_path(hypermem::ProfileKind::Lite))
            .unwrap();
    p.dim = Dim::new(2048).unwrap();
    p
}

/// A message of `role` in project `p`, in `session` (also its thread).
pub fn say(session: &str, role: hypermem::ledger::Role, text: &str) -> hypermem::ledger::NewEvent {
    hypermem::ledger::NewEvent::new(
        project("p"),
        role,
        hypermem::ledger::EventKind::Message,
        text,
    )
    .thread(session)
    .session(session)
}

/// `items.all(f)`, after asserting that there is at least one item: an `all` over an
/// empty list passes whatever it checks, so a test that asserts one must see something.
#[track_caller]
pub fn all_of<I: IntoIterator>(items: I, f: impl FnMut(I::Item) -> bool) -> bool {
    let mut items = items.into_iter().peekable();
    assert!(
        items.peek().is_some(),
        "an `all` over an empty list checks nothing"
    );
    items.all(f)
}

/// The stable reason of any error of the engine's layers (what every surface reports).
pub fn reason_of(e: impl Into<hypermem::Error>) -> hypermem::Reason {
    e.into().reason()
}

/// A new, empty database on the PostgreSQL server `url` names, and the URL of it: one
/// deployment's ledger of its own, so a test's nodes meet no other test's projects (a
/// deployment is one ledger with one vector collection).
#[cfg(feature = "postgres")]
pub fn fresh_database(url: &str, test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let name = format!("hm_{test}_{}_{}", std::process::id(), nanos % 1_000_000_000);
    let mut admin = postgres::Client::connect(url, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    let (head, tail) = url
        .split_once('?')
        .map_or((url, None), |(h, t)| (h, Some(t)));
    let base = head.rsplit_once('/').map_or(head, |(b, _)| b);
    match tail {
        Some(t) => format!("{base}/{name}?{t}"),
        None => format!("{base}/{name}"),
    }
}

/// The PostgreSQL server the test command started (`HYPERMEM_TEST_POSTGRES_URL`), or
/// `None` after saying loudly that `what` is not tested; a failure under
/// `HYPERMEM_REQUIRE_POSTGRES=1`.
pub fn postgres_url(what: &str) -> Option<String> {
    let url = std::env::var("HYPERMEM_TEST_POSTGRES_URL").ok();
    if url.is_none() {
        assert!(
            std::env::var("HYPERMEM_REQUIRE_POSTGRES").as_deref() != Ok("1"),
            "HYPERMEM_REQUIRE_POSTGRES=1 but HYPERMEM_TEST_POSTGRES_URL is not set"
        );
        eprintln!(
            "!! SKIP: HYPERMEM_TEST_POSTGRES_URL is not set: {what} NOT tested (scripts/test.sh starts a server)"
        );
    }
    url
}
