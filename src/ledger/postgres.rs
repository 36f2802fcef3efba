//! The event log on PostgreSQL (feature `postgres`): the [`EventLog`] contract over a
//! server many nodes share, through the synchronous `postgres` client.
//!
//! Schema: its own migrations (`hypermem_schema` records the version), applied by the
//! first node that connects under a transaction-scoped advisory lock, so nodes starting
//! together migrate once. Appends run in one transaction that first takes an advisory
//! lock per project it writes (in a fixed order: no deadlock between two batches), so the
//! per-thread and per-session numbering and the previous-event links stay exact with
//! writers on several nodes; ids come from one `BIGSERIAL`, growing with commit order per
//! project. Content is stored as its UTF-8 bytes (`BYTEA`: PostgreSQL's text cannot hold a
//! NUL character, an event's content may); another text field holding a NUL is refused by
//! name. The password is never in a profile: the caller builds the URL (the scale
//! profile names the environment variable that holds it).

use std::sync::Mutex;

use postgres::error::SqlState;
use postgres::{Client, NoTls, Row, Statement, Transaction};

use super::events::{Cursors, Sequence, check_new_events, content_hash};
use super::log::EventLog;
use super::{
    Causality, Event, EventId, EventKind, LedgerConfig, LedgerError, LedgerResult, NewEvent, Role,
};
use crate::base::{ProjectId, Reason};
use crate::sync::Recover as _;

/// The schema, one migration per version (applied in order, each in the migrating
/// transaction).
const MIGRATIONS: &[&str] = &["CREATE TABLE events (
        id BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        source_id TEXT,
        agent TEXT,
        thread TEXT,
        thread_seq BIGINT,
        session TEXT,
        session_seq BIGINT,
        turn BIGINT,
        turn_seq BIGINT,
        role TEXT NOT NULL,
        kind TEXT NOT NULL,
        content BYTEA NOT NULL,
        content_hash TEXT NOT NULL,
        parent_id BIGINT,
        causality TEXT,
        prev_id BIGINT,
        created_at BIGINT NOT NULL,
        ingested_at BIGINT NOT NULL,
        source TEXT,
        source_offset BIGINT,
        source_len BIGINT,
        ordering_confidence DOUBLE PRECISION NOT NULL,
        speaker TEXT,
        CONSTRAINT events_project_source_id UNIQUE (project, source_id)
    );
    CREATE INDEX events_project_id ON events (project, id);
    CREATE INDEX events_thread ON events (project, thread, thread_seq);
    CREATE INDEX events_session ON events (project, session, session_seq);"];

/// The key of the advisory lock migrations take (any constant of this application).
const MIGRATION_LOCK: i64 = 0x6879_7065_726d_656d;

const COLUMNS: &str = "id, project, source_id, agent, thread, thread_seq, session, session_seq, turn, \
    turn_seq, role, kind, content, content_hash, parent_id, causality, prev_id, created_at, \
    ingested_at, source, source_offset, source_len, ordering_confidence, speaker";

/// The event log of a PostgreSQL database.
pub struct PgEventLog {
    client: Mutex<Client>,
    config: LedgerConfig,
}

impl std::fmt::Debug for PgEventLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgEventLog").finish_non_exhaustive()
    }
}

impl PgEventLog {
    /// Connects to `url` (`postgres://user:password@host:port/database`) and brings the
    /// schema up to date.
    ///
    /// # Errors
    /// [`LedgerError::Postgres`] when the server cannot be reached or refuses;
    /// [`LedgerError::SchemaTooNew`] for a database a newer hypermem migrated.
    pub fn connect(url: &str, config: LedgerConfig) -> LedgerResult<Self> {
        let mut client = Client::connect(url, NoTls).map_err(pg)?;
        migrate(&mut client)?;
        Ok(Self {
            client: Mutex::new(client),
            config,
        })
    }

    /// Runs `f` on the connection.
    fn with<T>(&self, f: impl FnOnce(&mut Client) -> LedgerResult<T>) -> LedgerResult<T> {
        f(&mut self.client.locked())
    }
}

/// Applies the migrations this database lacks, once across nodes.
fn migrate(client: &mut Client) -> LedgerResult<()> {
    let mut tx = client.transaction().map_err(pg)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(pg)?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS hypermem_schema (version INTEGER NOT NULL)")
        .map_err(pg)?;
    let found: Option<i32> = tx
        .query_opt("SELECT max(version) FROM hypermem_schema", &[])
        .map_err(pg)?
        .and_then(|r| r.get(0));
    let found = found.unwrap_or(0) as usize;
    if found > MIGRATIONS.len() {
        return Err(LedgerError::SchemaTooNew {
            found: found as u32,
            supported: MIGRATIONS.len() as u32,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found) {
        tx.batch_execute(sql).map_err(pg)?;
        tx.execute(
            "INSERT INTO hypermem_schema (version) VALUES ($1)",
            &[&(i as i32 + 1)],
        )
        .map_err(pg)?;
    }
    tx.commit().map_err(pg)
}

/// A driver error in hypermem's words ([`postgres_failure`]).
fn pg(source: postgres::Error) -> LedgerError {
    LedgerError::Postgres { source }
}

/// The stable reason and hypermem's words for a PostgreSQL failure; the driver's own text
/// stays in the error's source.
pub fn postgres_failure(e: &postgres::Error) -> (Reason, &'static str) {
    let Some(code) = e.code() else {
        return (
            Reason::Unavailable,
            "the PostgreSQL server cannot be reached or closed the connection; retry",
        );
    };
    let class = &code.code()[..2];
    if *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED {
        (
            Reason::LedgerBusy,
            "a concurrent write conflicted in the PostgreSQL ledger; nothing was written; retry",
        )
    } else if class == "23" {
        (
            Reason::Conflict,
            "the write conflicts with a stored record (a uniqueness or reference rule); nothing was written",
        )
    } else if class == "08" || class == "57" || class == "53" {
        (
            Reason::Unavailable,
            "the PostgreSQL server is unavailable (connection, shutdown or resources); retry",
        )
    } else if class == "28" {
        (
            Reason::ServiceAuth,
            "the PostgreSQL server refused the credentials",
        )
    } else {
        (
            Reason::Internal,
            "the PostgreSQL ledger failed an operation (internal error)",
        )
    }
}

/// Refuses a NUL character in a text field PostgreSQL stores as text.
fn no_nul(events: &[NewEvent]) -> LedgerResult<()> {
    for e in events {
        let fields: [(&'static str, Option<&str>); 8] = [
            ("project", Some(e.project.as_str())),
            ("source_id", e.source_id.as_deref()),
            ("agent", e.agent.as_deref()),
            ("thread", e.thread.as_deref()),
            ("session", e.session.as_deref()),
            ("source", e.source.as_deref()),
            ("speaker", e.speaker.as_deref()),
            ("content", None),
        ];
        if let Some((what, _)) = fields
            .iter()
            .find(|(_, v)| v.is_some_and(|v| v.contains('\0')))
        {
            return Err(LedgerError::Invalid {
                what,
                reason: "it holds a NUL character, which the PostgreSQL ledger cannot store"
                    .to_owned(),
            });
        }
    }
    Ok(())
}

/// The statements an append runs per event, prepared once per batch (each is parsed and
/// planned once, not once per event).
struct Statements {
    parent: Statement,
    thread: Statement,
    session: Statement,
    turn: Statement,
    insert: Statement,
}

impl Statements {
    fn prepare(tx: &mut Transaction<'_>) -> LedgerResult<Self> {
        Ok(Self {
            parent: tx
                .prepare("SELECT project FROM events WHERE id = $1")
                .map_err(pg)?,
            thread: tx
                .prepare("SELECT thread_seq, id FROM events WHERE project = $1 AND thread = $2 ORDER BY thread_seq DESC LIMIT 1")
                .map_err(pg)?,
            session: tx
                .prepare("SELECT session_seq, id FROM events WHERE project = $1 AND session = $2 ORDER BY session_seq DESC LIMIT 1")
                .map_err(pg)?,
            turn: tx
                .prepare("SELECT turn_seq, id FROM events WHERE project = $1 AND thread = $2 AND turn = $3 ORDER BY turn_seq DESC LIMIT 1")
                .map_err(pg)?,
            insert: tx
                .prepare(
                    "INSERT INTO events (project, source_id, agent, thread, thread_seq, session, session_seq,
                        turn, turn_seq, role, kind, content, content_hash, parent_id, causality, prev_id,
                        created_at, ingested_at, source, source_offset, source_len, ordering_confidence,
                        speaker)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                        $18, $19, $20, $21, $22, $23)
                     RETURNING id",
                )
                .map_err(pg)?,
        })
    }
}

/// Inserts one event in `tx`; its id.
fn insert_event(
    tx: &mut Transaction<'_>,
    st: &Statements,
    e: &NewEvent,
    now: i64,
    cursors: &mut Cursors,
) -> LedgerResult<EventId> {
    let project = e.project.as_str();
    if let Some(parent) = e.parent {
        let owner: Option<String> = tx
            .query_opt(&st.parent, &[&(parent.0 as i64)])
            .map_err(pg)?
            .map(|r| r.get(0));
        if owner.as_deref() != Some(project) {
            return Err(LedgerError::UnknownEvent(parent));
        }
    }
    let place = cursors.place(e, |seq, name, turn| {
        let row = match seq {
            Sequence::Thread => tx.query_opt(&st.thread, &[&project, &name]),
            Sequence::Session => tx.query_opt(&st.session, &[&project, &name]),
            Sequence::Turn => tx.query_opt(&st.turn, &[&project, &name, &turn]),
        }
        .map_err(pg)?;
        Ok(row.map(|r| (r.get::<_, Option<i64>>(0).unwrap_or(0), r.get(1))))
    })?;
    let created = e.created_at.unwrap_or(now);
    let row = tx
        .query_one(
            &st.insert,
            &[
                &project,
                &e.source_id,
                &e.agent,
                &e.thread,
                &place.thread_seq,
                &e.session,
                &place.session_seq,
                &e.turn,
                &place.turn_seq,
                &e.role.as_str(),
                &e.kind.as_str(),
                &e.content.as_bytes(),
                &content_hash(&e.content),
                &e.parent.map(|p| p.0 as i64),
                &e.causality.map(Causality::as_str),
                &place.prev,
                &created,
                &now,
                &e.source,
                &e.source_offset,
                &e.source_len,
                &e.ordering_confidence,
                &e.speaker,
            ],
        )
        .map_err(|err| {
            if err.code() == Some(&SqlState::UNIQUE_VIOLATION)
                && err
                    .as_db_error()
                    .and_then(|d| d.constraint())
                    .is_some_and(|c| c == "events_project_source_id")
            {
                LedgerError::Invalid {
                    what: "source_id",
                    reason: format!(
                        "{:?} already exists in project `{project}`",
                        e.source_id.as_deref().unwrap_or("")
                    ),
                }
            } else {
                pg(err)
            }
        })?;
    let id: i64 = row.get(0);
    cursors.record(e, &place, id);
    Ok(EventId(id as u64))
}

/// An event from a row of [`COLUMNS`].
fn row_to_event(r: &Row) -> LedgerResult<Event> {
    let content: Vec<u8> = r.get(12);
    Ok(Event {
        id: EventId(r.get::<_, i64>(0) as u64),
        project: r.get(1),
        source_id: r.get(2),
        agent: r.get(3),
        thread: r.get(4),
        thread_seq: r.get(5),
        session: r.get(6),
        session_seq: r.get(7),
        turn: r.get(8),
        turn_seq: r.get(9),
        role: Role::parse(r.get(10))?,
        kind: EventKind::parse(r.get(11))?,
        content: String::from_utf8(content).map_err(|_| LedgerError::Corrupt {
            what: "event content",
            detail: "its bytes are not UTF-8".to_owned(),
        })?,
        content_hash: r.get(13),
        parent: r.get::<_, Option<i64>>(14).map(|v| EventId(v as u64)),
        causality: r
            .get::<_, Option<&str>>(15)
            .map(Causality::parse)
            .transpose()?,
        prev: r.get::<_, Option<i64>>(16).map(|v| EventId(v as u64)),
        created_at: r.get(17),
        ingested_at: r.get(18),
        source: r.get(19),
        source_offset: r.get(20),
        source_len: r.get(21),
        ordering_confidence: r.get(22),
        speaker: r.get(23),
    })
}

impl EventLog for PgEventLog {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn append_batch(&self, events: &[NewEvent]) -> LedgerResult<Vec<EventId>> {
        check_new_events(events, self.config.max_content_bytes)?;
        no_nul(events)?;
        let now = crate::clock::now_ms(&crate::clock::SystemClock);
        self.with(|client| {
            let mut tx = client.transaction().map_err(pg)?;
            let mut projects: Vec<&str> = events.iter().map(|e| e.project.as_str()).collect();
            projects.sort_unstable();
            projects.dedup();
            for p in projects {
                tx.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                    &[&p],
                )
                .map_err(pg)?;
            }
            let st = Statements::prepare(&mut tx)?;
            let mut cursors = Cursors::default();
            let mut ids = Vec::with_capacity(events.len());
            for e in events {
                ids.push(insert_event(&mut tx, &st, e, now, &mut cursors)?);
            }
            tx.commit().map_err(pg)?;
            Ok(ids)
        })
    }

    fn get(&self, project: &ProjectId, id: EventId) -> LedgerResult<Option<Event>> {
        self.with(|client| {
            client
                .query_opt(
                    &format!("SELECT {COLUMNS} FROM events WHERE id = $1 AND project = $2"),
                    &[&(id.0 as i64), &project.as_str()],
                )
                .map_err(pg)?
                .as_ref()
                .map(row_to_event)
                .transpose()
        })
    }

    fn last_id(&self, project: &ProjectId) -> LedgerResult<Option<EventId>> {
        self.with(|client| {
            let row = client
                .query_one(
                    "SELECT max(id) FROM events WHERE project = $1",
                    &[&project.as_str()],
                )
                .map_err(pg)?;
            Ok(row.get::<_, Option<i64>>(0).map(|i| EventId(i as u64)))
        })
    }

    fn count(&self, project: &ProjectId) -> LedgerResult<u64> {
        self.with(|client| {
            let row = client
                .query_one(
                    "SELECT count(*) FROM events WHERE project = $1",
                    &[&project.as_str()],
                )
                .map_err(pg)?;
            Ok(row.get::<_, i64>(0) as u64)
        })
    }

    fn after(
        &self,
        project: &ProjectId,
        after: Option<EventId>,
        limit: usize,
    ) -> LedgerResult<Vec<Event>> {
        self.with(|client| {
            client
                .query(
                    &format!(
                        "SELECT {COLUMNS} FROM events WHERE project = $1 AND id > $2 ORDER BY id LIMIT $3"
                    ),
                    &[
                        &project.as_str(),
                        &after.map_or(0, |a| a.0 as i64),
                        &i64::try_from(limit).unwrap_or(i64::MAX),
                    ],
                )
                .map_err(pg)?
                .iter()
                .map(row_to_event)
                .collect()
        })
    }
}
