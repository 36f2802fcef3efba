//! The ledger's PostgreSQL engine (feature `postgres`): what `Ledger` runs on when the
//! nodes of a scale deployment share one server, through the synchronous `postgres`
//! client. The boundary's statements are the portable ones (`rows::portable`, run by
//! `rows::postgres`); this module holds what is the engine's own: schema and migrations,
//! transactions and their locks, the batched append, full-text search, the sequence,
//! erasure and the deployment's token.
//!
//! Schema: its own migrations (`hypermem_schema` records the version), applied by the
//! first node that connects under a transaction-scoped advisory lock, so nodes starting
//! together migrate once. Appends run in one transaction that first takes an advisory
//! lock per project it writes (in a fixed order: no deadlock between two batches), so the
//! per-thread and per-session numbering and the previous-event links stay exact with
//! writers on several nodes; ids come from one `BIGSERIAL`, growing with commit order per
//! project. Content is stored as its UTF-8 bytes (`BYTEA`: PostgreSQL's text cannot hold a
//! NUL character, an event's content may); another text field holding a NUL is refused by
//! name. The password is never in a profile: it is passed apart from the URL (the scale
//! profile names the environment variable that holds it).

use std::sync::Mutex;

use postgres::error::SqlState;
use std::collections::HashMap;

use postgres::{Client, IsolationLevel, NoTls, Transaction};

use super::beliefs::BeliefRows;
use super::events::{Cursors, Sequence, content_hash};
use super::rows::Rows;
use super::rows::exec::{Exec, ExecExt as _, args};
use super::rows::postgres::{Postgres, Prepared};
use super::{Causality, EventId, LedgerError, LedgerResult, NewEvent};
use crate::base::Reason;
use crate::sync::Recover as _;

/// The schema, one migration per version (applied in order, each in the migrating
/// transaction); [`MIGRATION_NAMES`] names them.
const MIGRATIONS: &[&str] = &[
    "CREATE TABLE events (
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
    CREATE INDEX events_session ON events (project, session, session_seq);",
    // The tables behind the ledger boundary (`ledger::rows`) and governance, as the
    // SQLite schema has them (`ledger::schema`, versions 2–11), in PostgreSQL's types.
    // Flags stay integers 0 / 1, as the portable statements compare them.
    "CREATE TABLE beliefs (
        id BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        key TEXT NOT NULL,
        statement TEXT NOT NULL,
        normalized TEXT NOT NULL,
        ownership TEXT NOT NULL CHECK (ownership IN ('user','project','agent')),
        agent TEXT,
        source_roles TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
        status TEXT NOT NULL CHECK (status IN ('candidate','needs_confirmation','active',
            'possible_conflict','superseded','rejected')),
        version BIGINT NOT NULL,
        valid_from BIGINT NOT NULL,
        valid_to BIGINT,
        supersedes BIGINT REFERENCES beliefs(id),
        superseded_by BIGINT REFERENCES beliefs(id),
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    );
    CREATE UNIQUE INDEX beliefs_one_active ON beliefs (project, key) WHERE status = 'active';
    CREATE INDEX beliefs_key ON beliefs (project, key, valid_from);
    CREATE INDEX beliefs_version ON beliefs (project, key, version);
    CREATE INDEX beliefs_supersedes ON beliefs (supersedes);
    CREATE INDEX beliefs_superseded_by ON beliefs (superseded_by);
    CREATE TABLE belief_evidence (
        belief_id BIGINT NOT NULL REFERENCES beliefs(id),
        event_id BIGINT NOT NULL REFERENCES events(id),
        project TEXT NOT NULL,
        PRIMARY KEY (belief_id, event_id)
    );
    CREATE INDEX belief_evidence_event ON belief_evidence (event_id);
    CREATE TABLE governance_plans (
        project TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        plan_hash TEXT NOT NULL,
        applied_at BIGINT NOT NULL,
        PRIMARY KEY (project, idempotency_key)
    );
    CREATE TABLE governance_audit (
        id BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        plan_key TEXT NOT NULL,
        op_index BIGINT NOT NULL,
        op TEXT NOT NULL,
        belief_id BIGINT,
        detail TEXT NOT NULL,
        at BIGINT NOT NULL
    );
    CREATE INDEX governance_audit_plan ON governance_audit (project, plan_key);
    CREATE TABLE governance_op_keys (
        project TEXT NOT NULL,
        op_key TEXT NOT NULL,
        op_hash TEXT NOT NULL,
        plan_key TEXT NOT NULL,
        op_index BIGINT NOT NULL,
        belief_id BIGINT,
        applied_at BIGINT NOT NULL,
        PRIMARY KEY (project, op_key)
    );
    CREATE TABLE prospective (
        id BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('intention','commitment','reminder','open_loop','plan')),
        text TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending','confirmed','deferred','rejected',
            'completed','expired')),
        source_event BIGINT NOT NULL REFERENCES events(id),
        due_at BIGINT,
        confirmed_by BIGINT REFERENCES events(id),
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    );
    CREATE INDEX prospective_due ON prospective (project, status, due_at);
    CREATE UNIQUE INDEX prospective_one_confirmation ON prospective (confirmed_by)
        WHERE confirmed_by IS NOT NULL;
    CREATE INDEX prospective_source ON prospective (source_event);
    CREATE TABLE prospective_history (
        id BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        item_id BIGINT NOT NULL,
        at BIGINT NOT NULL,
        op TEXT NOT NULL,
        from_status TEXT,
        to_status TEXT NOT NULL,
        event_id BIGINT,
        due_at BIGINT
    );
    CREATE INDEX prospective_history_item ON prospective_history (project, item_id);
    CREATE TABLE episodes (
        id BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        agent TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('open','soft_sealed','sealed')),
        started_at BIGINT NOT NULL,
        last_event_at BIGINT NOT NULL,
        ended_at BIGINT,
        outcome TEXT,
        reward DOUBLE PRECISION,
        prev_id BIGINT REFERENCES episodes(id),
        next_id BIGINT REFERENCES episodes(id),
        vector BYTEA,
        topic BYTEA,
        consolidated BIGINT NOT NULL DEFAULT 0,
        curated BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX episodes_agent ON episodes (project, agent, id);
    CREATE INDEX episodes_status ON episodes (project, status);
    CREATE INDEX episodes_prev ON episodes (prev_id);
    CREATE INDEX episodes_next ON episodes (next_id);
    CREATE INDEX episodes_consolidated ON episodes (project, consolidated, id);
    CREATE INDEX episodes_to_consolidate ON episodes (project, id)
        WHERE status = 'sealed' AND consolidated = 0 AND topic IS NOT NULL;
    CREATE TABLE episode_events (
        episode_id BIGINT NOT NULL REFERENCES episodes(id),
        position BIGINT NOT NULL,
        event_id BIGINT NOT NULL REFERENCES events(id),
        vector BYTEA NOT NULL,
        project TEXT NOT NULL,
        PRIMARY KEY (episode_id, position)
    );
    CREATE INDEX episode_events_event ON episode_events (event_id);
    CREATE TABLE open_questions (
        project TEXT NOT NULL,
        event_id BIGINT NOT NULL REFERENCES events(id),
        episode_id BIGINT NOT NULL REFERENCES episodes(id),
        position BIGINT NOT NULL,
        PRIMARY KEY (episode_id, position)
    );
    CREATE INDEX open_questions_project ON open_questions (project, event_id);
    CREATE INDEX open_questions_event ON open_questions (event_id);
    CREATE TABLE concepts (
        id BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        label TEXT NOT NULL,
        prototype BYTEA NOT NULL,
        counters BYTEA NOT NULL,
        support BIGINT NOT NULL,
        successes BIGINT NOT NULL DEFAULT 0,
        failures BIGINT NOT NULL DEFAULT 0,
        updated_at BIGINT NOT NULL
    );
    CREATE TABLE concept_support (
        concept_id BIGINT NOT NULL REFERENCES concepts(id),
        episode_id BIGINT NOT NULL REFERENCES episodes(id),
        project TEXT NOT NULL,
        PRIMARY KEY (concept_id, episode_id)
    );
    CREATE TABLE procedures (
        id BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        name TEXT NOT NULL,
        trigger_text TEXT NOT NULL,
        trigger_vector BYTEA NOT NULL,
        steps TEXT NOT NULL,
        successes BIGINT NOT NULL DEFAULT 0,
        failures BIGINT NOT NULL DEFAULT 0,
        updated_at BIGINT NOT NULL
    );
    CREATE TABLE metrics (
        id BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        name TEXT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        \"window\" TEXT NOT NULL,
        at BIGINT NOT NULL
    );
    CREATE INDEX metrics_name ON metrics (project, name, at);
    CREATE TABLE proposals (
        id BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        rule TEXT NOT NULL,
        title TEXT NOT NULL,
        rationale TEXT NOT NULL,
        metrics TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending','accepted','rejected','implemented')),
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    );
    CREATE TABLE synapses (
        project TEXT NOT NULL,
        a BIGINT NOT NULL,
        b BIGINT NOT NULL,
        weight DOUBLE PRECISION NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (project, a, b)
    );
    CREATE INDEX synapses_b ON synapses (project, b);
    CREATE TABLE query_log (
        id BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        query TEXT NOT NULL,
        best_similarity DOUBLE PRECISION NOT NULL,
        hits TEXT NOT NULL,
        at BIGINT NOT NULL,
        gap BIGINT NOT NULL DEFAULT 0
    );
    CREATE TABLE associations (
        id BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        episode_id BIGINT NOT NULL REFERENCES episodes(id),
        suggestion TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL,
        sources TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'candidate' CHECK (status IN ('candidate','dismissed')),
        created_at BIGINT NOT NULL
    );
    CREATE INDEX associations_episode ON associations (episode_id);
    CREATE TABLE memory_traces (
        project TEXT NOT NULL,
        id BIGINT NOT NULL,
        importance DOUBLE PRECISION NOT NULL,
        accesses BIGINT NOT NULL,
        last_access BIGINT NOT NULL,
        PRIMARY KEY (project, id)
    );
    CREATE TABLE semantic_vectors (
        project TEXT NOT NULL,
        event_id BIGINT NOT NULL REFERENCES events(id),
        input_dim BIGINT NOT NULL,
        bits BYTEA NOT NULL,
        PRIMARY KEY (project, event_id)
    );
    CREATE INDEX semantic_vectors_event ON semantic_vectors (event_id);
    CREATE TABLE semantic_pending (
        project TEXT NOT NULL,
        event_id BIGINT NOT NULL REFERENCES events(id),
        PRIMARY KEY (project, event_id)
    );
    CREATE INDEX semantic_pending_event ON semantic_pending (event_id);
    CREATE TABLE semantic_queue_mark (
        id BIGINT PRIMARY KEY CHECK (id = 1),
        after BIGINT NOT NULL
    );
    CREATE TABLE curation_mark (
        project TEXT PRIMARY KEY,
        after BIGINT NOT NULL
    );",
    // The highest event id an erasure saw: the sequence never goes back.
    "CREATE TABLE sequence_mark (
        id BIGINT PRIMARY KEY CHECK (id = 1),
        after BIGINT NOT NULL
    );",
    // The deployment every node of this ledger belongs to (the owner of its Redis keys).
    "CREATE TABLE deployment (
        id BIGINT PRIMARY KEY CHECK (id = 1),
        token TEXT NOT NULL
    );",
];

/// What each of [`MIGRATIONS`] does, in its order.
pub(crate) const MIGRATION_NAMES: &[&str] = &[
    "raw event ledger",
    "beliefs, governance, prospective memory, cognition and the semantic queue (SQLite versions 2-11)",
    "a sequence that never goes back across erasure",
    "the deployment's token",
];

const _: () = assert!(MIGRATION_NAMES.len() == MIGRATIONS.len());

/// The key of the advisory lock migrations take (any constant of this application).
const MIGRATION_LOCK: i64 = 0x6879_7065_726d_656d;

/// A PostgreSQL database as the ledger's engine: its events and the tables behind the
/// ledger boundary ([`writing`](Self::writing), [`reading`](Self::reading)).
pub(crate) struct PgEngine {
    conn: Mutex<Conn>,
}

/// One connection and the statements prepared on it.
struct Conn {
    client: Client,
    prepared: Prepared,
}

impl std::fmt::Debug for PgEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgEngine").finish_non_exhaustive()
    }
}

impl PgEngine {
    /// Connects without migrating (to report or apply migrations by hand).
    pub(crate) fn connect_unmigrated(url: &str, password: Option<&str>) -> LedgerResult<Self> {
        let mut config: postgres::Config = url.parse().map_err(pg)?;
        if let Some(password) = password {
            config.password(password);
        }
        let client = config.connect(NoTls).map_err(pg)?;
        Ok(Self {
            conn: Mutex::new(Conn {
                client,
                prepared: Prepared::new(),
            }),
        })
    }

    /// Runs `f` on the connection.
    fn with<T>(&self, f: impl FnOnce(&mut Client) -> LedgerResult<T>) -> LedgerResult<T> {
        f(&mut self.conn.locked().client)
    }

    /// Runs `f` on the boundary's [`Rows`] in one transaction, committed if `f` succeeds
    /// and rolled back otherwise. Under a [`Deadline`](super::Deadline) the first write
    /// claims it, as on SQLite: an operation past its time writes nothing.
    ///
    /// # Errors
    /// `f`'s error; [`LedgerError::Postgres`]; `timeout` when the deadline passed.
    pub(crate) fn writing<R>(
        &self,
        f: impl FnOnce(&dyn Rows) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        self.transaction(Access::Write, |x| f(x))
    }

    /// Runs a read-only `f` on the boundary's [`Rows`] (one read-only transaction: every
    /// statement sees the same snapshot).
    ///
    /// # Errors
    /// `f`'s error; [`LedgerError::Postgres`].
    pub(crate) fn reading<R>(
        &self,
        f: impl FnOnce(&dyn Rows) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        self.transaction(Access::Read, |x| f(x))
    }

    /// Runs `f` over the belief tables of `project` in one write transaction that holds
    /// the project's governance lock: plans of one project apply one at a time across
    /// every node, as with SQLite's single writer.
    ///
    /// # Errors
    /// As [`writing`](Self::writing).
    pub(crate) fn governing<R>(
        &self,
        project: &str,
        f: impl FnOnce(&BeliefRows<'_>) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        self.transaction(Access::Govern(project), |x| f(&BeliefRows::new(x, project)))
    }

    /// Runs `f` over the belief tables of `project`, reading.
    ///
    /// # Errors
    /// As [`reading`](Self::reading).
    pub(crate) fn reading_beliefs<R>(
        &self,
        project: &str,
        f: impl FnOnce(&BeliefRows<'_>) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        self.transaction(Access::Read, |x| f(&BeliefRows::new(x, project)))
    }

    /// Runs `f` on the ledger's statements in one write transaction.
    pub(crate) fn exec_write<R>(
        &self,
        f: impl FnOnce(&dyn Exec) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        self.transaction(Access::Write, |x| f(x))
    }

    /// Runs `f`'s reads on the connection, each statement on its own snapshot (no
    /// transaction: a read of one statement, or of rows that only grow, needs none, and
    /// saves the two round trips of one).
    pub(crate) fn exec_read<R>(
        &self,
        f: impl FnOnce(&dyn Exec) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        let mut conn = self.conn.locked();
        let Conn { client, prepared } = &mut *conn;
        f(&Postgres::new(client, prepared))
    }

    /// The schema version this database is at (0 before the first migration).
    pub(crate) fn schema_version(&self) -> LedgerResult<u32> {
        self.with(|client| {
            let exists: bool = client
                .query_one("SELECT to_regclass('hypermem_schema') IS NOT NULL", &[])
                .map_err(pg)?
                .get(0);
            if !exists {
                return Ok(0);
            }
            let v: Option<i32> = client
                .query_one("SELECT max(version) FROM hypermem_schema", &[])
                .map_err(pg)?
                .get(0);
            Ok(v.unwrap_or(0).max(0) as u32)
        })
    }

    /// Applies the migrations up to version `target` this database lacks, once across
    /// nodes; the versions it applied.
    pub(crate) fn migrate_to(&self, target: u32) -> LedgerResult<Vec<u32>> {
        self.with(|client| migrate(client, target))
    }

    /// The ledger's tables (the schema record excluded), sorted.
    pub(crate) fn tables(&self) -> LedgerResult<Vec<String>> {
        self.with(|client| {
            Ok(client
                .query(
                    "SELECT table_name::text FROM information_schema.tables
                     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
                     AND table_name <> 'hypermem_schema' ORDER BY 1",
                    &[],
                )
                .map_err(pg)?
                .iter()
                .map(|r| r.get(0))
                .collect())
        })
    }

    /// Whether `table` has a `project` column.
    pub(crate) fn has_project_column(&self, table: &str) -> LedgerResult<bool> {
        self.with(|client| {
            Ok(client
                .query_opt(
                    "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
                     AND table_name = $1 AND column_name = 'project'",
                    &[&table],
                )
                .map_err(pg)?
                .is_some())
        })
    }

    /// Appends `events` in one transaction that holds their projects' append locks, and
    /// in it the semantic vector of each event that has one (or, with `queue_rest`, a
    /// place in the embedder's queue): the PostgreSQL side of
    /// [`Ledger::append_batch_with`](super::Ledger::append_batch_with).
    pub(crate) fn append_with(
        &self,
        events: &[NewEvent],
        semantic: &[Option<(u32, Vec<u8>)>],
        queue_rest: bool,
        now: i64,
    ) -> LedgerResult<Vec<super::Appended>> {
        no_nul(events)?;
        if !super::deadline::claim() {
            return Err(super::deadline::timed_out());
        }
        let mut conn = self.conn.locked();
        let Conn { client, prepared } = &mut *conn;
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
        let placed = insert_batch(&mut tx, events, now)?;
        {
            let x = Postgres::new(&mut tx, prepared);
            for (i, (e, (id, _))) in events.iter().zip(&placed).enumerate() {
                if let Some(Some((input, bits))) = semantic.get(i) {
                    x.run(
                        "INSERT INTO semantic_vectors (project, event_id, input_dim, bits) VALUES (?1, ?2, ?3, ?4)",
                        args![e.project.as_str(), id.0, i64::from(*input), &bits[..]],
                    )?;
                } else if queue_rest {
                    x.run(
                        "INSERT INTO semantic_pending (project, event_id) VALUES (?1, ?2)",
                        args![e.project.as_str(), id.0],
                    )?;
                }
            }
        }
        tx.commit().map_err(pg)?;
        Ok(placed
            .into_iter()
            .map(|(id, prev)| super::Appended { id, prev })
            .collect())
    }

    /// Full-text search over the raw content of `project`, best first: PostgreSQL's own
    /// ranking (`ts_rank` of the `simple` configuration: every word, no stemming) over
    /// the terms of `query` OR-ed, each quoted so user text is never query syntax; the
    /// score is the rank negated (lower is better, as SQLite's bm25). The text is read
    /// from the project's events at query time (no second inverted index on the write
    /// path, as on SQLite until the first search).
    pub(crate) fn search(
        &self,
        project: &str,
        terms: &[String],
        k: usize,
    ) -> LedgerResult<Vec<(super::Event, f64)>> {
        let query = terms
            .iter()
            .map(|t| format!("'{}'", t.replace('\'', "''")))
            .collect::<Vec<_>>()
            .join(" | ");
        self.exec_read(|x| {
            x.all(
                &format!(
                    "SELECT {cols}, -f.score FROM (
                         SELECT id, ts_rank(to_tsvector('simple', convert_from(content, 'UTF8')), q) AS score
                         FROM events, to_tsquery('simple', ?2) AS q
                         WHERE project = ?1 AND to_tsvector('simple', convert_from(content, 'UTF8')) @@ q
                         ORDER BY score DESC, id LIMIT ?3) AS f
                     JOIN events e ON e.id = f.id ORDER BY f.score DESC, e.id",
                    cols = super::events::COLUMNS
                        .split(", ")
                        .map(|c| format!("e.{c}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                args![project, query.as_str(), k as u64],
                |r| Ok((super::events::event_of(r)?, r.get(24)?)),
            )
        })
    }

    /// The deployment's token: made by the first node that asks, the same for all after.
    pub(crate) fn deployment_token(&self) -> LedgerResult<String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let seed = format!("{nanos}-{}-postgres", std::process::id());
        let token = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(seed.as_bytes()));
        self.exec_write(|x| {
            x.run(
                "INSERT INTO deployment (id, token) VALUES (1, ?1) ON CONFLICT DO NOTHING",
                args![token.as_str()],
            )?;
            x.one("SELECT token FROM deployment WHERE id = 1", args![], |r| {
                r.get(0)
            })?
            .ok_or_else(|| LedgerError::Corrupt {
                what: "deployment token",
                detail: "the row written in this transaction is missing".to_owned(),
            })
        })
    }

    /// The ledger's sequence: the highest event id committed in any project, never lower
    /// than it was before an erasure (the mark an erasure leaves).
    pub(crate) fn sequence(&self) -> LedgerResult<u64> {
        self.with(|client| {
            let row = client
                .query_one(
                    "SELECT GREATEST(COALESCE((SELECT max(id) FROM events), 0),
                                     COALESCE((SELECT after FROM sequence_mark WHERE id = 1), 0))",
                    &[],
                )
                .map_err(pg)?;
            Ok(row.get::<_, i64>(0).max(0) as u64)
        })
    }

    /// Deletes every row of `project` from `tables` (children first) in one transaction
    /// holding the project's append lock, and keeps the sequence from going back; rows
    /// deleted per table.
    pub(crate) fn erase(
        &self,
        project: &str,
        tables: &[String],
    ) -> LedgerResult<Vec<(String, u64)>> {
        if !super::deadline::claim() {
            return Err(super::deadline::timed_out());
        }
        let mut conn = self.conn.locked();
        let Conn { client, prepared } = &mut *conn;
        let mut tx = client.transaction().map_err(pg)?;
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
            &[&project],
        )
        .map_err(pg)?;
        let mut removed = Vec::with_capacity(tables.len());
        {
            let x = Postgres::new(&mut tx, prepared);
            x.run(
                "INSERT INTO sequence_mark (id, after) SELECT 1, COALESCE(MAX(id), 0) FROM events
                 ON CONFLICT (id) DO UPDATE SET after = GREATEST(sequence_mark.after, excluded.after)",
                args![],
            )?;
            for t in tables {
                let escaped = t.replace('"', "\"\"");
                let n = x.run(
                    &format!("DELETE FROM \"{escaped}\" WHERE project = ?1"),
                    args![project],
                )?;
                removed.push((t.clone(), n as u64));
            }
        }
        tx.commit().map_err(pg)?;
        Ok(removed)
    }

    /// Runs `f` on one transaction of the connection: committed when `f` succeeds.
    fn transaction<R>(
        &self,
        access: Access<'_>,
        f: impl FnOnce(&Postgres<'_, Transaction<'_>>) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        let read_only = matches!(access, Access::Read);
        if !read_only && !super::deadline::claim() {
            return Err(super::deadline::timed_out());
        }
        let mut conn = self.conn.locked();
        let Conn { client, prepared } = &mut *conn;
        let mut tx = client
            .build_transaction()
            .read_only(read_only)
            .isolation_level(if read_only {
                IsolationLevel::RepeatableRead
            } else {
                IsolationLevel::ReadCommitted
            })
            .start()
            .map_err(pg)?;
        if let Access::Govern(project) = access {
            tx.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, $2))",
                &[&project, &GOVERNANCE_LOCK],
            )
            .map_err(pg)?;
        }
        let out = f(&Postgres::new(&mut tx, prepared))?;
        tx.commit().map_err(pg)?;
        Ok(out)
    }
}

/// What a transaction does.
#[derive(Clone, Copy)]
enum Access<'p> {
    /// Reads one snapshot.
    Read,
    /// Writes.
    Write,
    /// Writes a governance plan of this project.
    Govern(&'p str),
}

/// The seed of a project's governance lock key (its appends lock with seed 0).
const GOVERNANCE_LOCK: i64 = 1;

/// Applies the migrations this database lacks, once across nodes.
fn migrate(client: &mut Client, target: u32) -> LedgerResult<Vec<u32>> {
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
    let mut applied = Vec::new();
    for (i, sql) in MIGRATIONS
        .iter()
        .enumerate()
        .skip(found)
        .take((target as usize).saturating_sub(found))
    {
        tx.batch_execute(sql).map_err(pg)?;
        tx.execute(
            "INSERT INTO hypermem_schema (version) VALUES ($1)",
            &[&(i as i32 + 1)],
        )
        .map_err(pg)?;
        applied.push(i as u32 + 1);
    }
    tx.commit().map_err(pg)?;
    Ok(applied)
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

/// Appends `events` in `tx`, whose projects it has locked: the checks first (parents of
/// the same project, source ids new to their project), then ids taken from the events'
/// sequence in one round trip, each event placed in its thread, session and turn (the
/// store is read once per sequence the batch continues), and every row written by one
/// `INSERT … SELECT FROM UNNEST` of column arrays — a handful of round trips per batch,
/// not one per event. Ids grow in batch order.
fn insert_batch(
    tx: &mut Transaction<'_>,
    events: &[NewEvent],
    now: i64,
) -> LedgerResult<Vec<(EventId, Option<EventId>)>> {
    // A parent in another project is answered as one that does not exist.
    let parents: Vec<i64> = events
        .iter()
        .filter_map(|e| e.parent.map(|p| p.0 as i64))
        .collect();
    if !parents.is_empty() {
        let owners: HashMap<i64, String> = tx
            .query(
                "SELECT id, project FROM events WHERE id = ANY($1)",
                &[&parents],
            )
            .map_err(pg)?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        if let Some(parent) = events.iter().find_map(|e| {
            e.parent.filter(|p| {
                owners.get(&(p.0 as i64)).map(String::as_str) != Some(e.project.as_str())
            })
        }) {
            return Err(LedgerError::UnknownEvent(parent));
        }
    }
    // A source id is unique within its project: in this batch and against what is stored
    // (the unique constraint still guards a race with another node).
    let mut keyed: HashMap<&str, Vec<&str>> = HashMap::new();
    for e in events {
        if let Some(id) = e.source_id.as_deref() {
            let ids = keyed.entry(e.project.as_str()).or_default();
            if ids.contains(&id) {
                return Err(source_id_taken(id, e.project.as_str()));
            }
            ids.push(id);
        }
    }
    for (project, ids) in &keyed {
        if let Some(row) = tx
            .query_opt(
                "SELECT source_id FROM events WHERE project = $1 AND source_id = ANY($2) LIMIT 1",
                &[project, ids],
            )
            .map_err(pg)?
        {
            return Err(source_id_taken(row.get(0), project));
        }
    }
    let mut ids: Vec<i64> = tx
        .query(
            "SELECT nextval('events_id_seq') FROM generate_series(1, $1::bigint)",
            &[&(events.len() as i64)],
        )
        .map_err(pg)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    ids.sort_unstable();
    let lookups = [
        "SELECT thread_seq, id FROM events WHERE project = $1 AND thread = $2 ORDER BY thread_seq DESC LIMIT 1",
        "SELECT session_seq, id FROM events WHERE project = $1 AND session = $2 ORDER BY session_seq DESC LIMIT 1",
        "SELECT turn_seq, id FROM events WHERE project = $1 AND thread = $2 AND turn = $3 ORDER BY turn_seq DESC LIMIT 1",
    ];
    let mut cursors = Cursors::default();
    let mut places = Vec::with_capacity(events.len());
    for (e, &id) in events.iter().zip(&ids) {
        let project = e.project.as_str();
        let place = cursors.place(e, |seq, name, turn| {
            let row = match seq {
                Sequence::Thread => tx.query_opt(lookups[0], &[&project, &name]),
                Sequence::Session => tx.query_opt(lookups[1], &[&project, &name]),
                Sequence::Turn => tx.query_opt(lookups[2], &[&project, &name, &turn]),
            }
            .map_err(pg)?;
            Ok(row.map(|r| (r.get::<_, Option<i64>>(0).unwrap_or(0), r.get(1))))
        })?;
        cursors.record(e, &place, id);
        places.push(place);
    }
    let text =
        |f: fn(&NewEvent) -> Option<&str>| -> Vec<Option<&str>> { events.iter().map(f).collect() };
    let hashes: Vec<String> = events.iter().map(|e| content_hash(&e.content)).collect();
    tx.execute(
        "INSERT INTO events (id, project, source_id, agent, thread, thread_seq, session,
            session_seq, turn, turn_seq, role, kind, content, content_hash, parent_id, causality,
            prev_id, created_at, ingested_at, source, source_offset, source_len,
            ordering_confidence, speaker)
         SELECT * FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[],
            $6::bigint[], $7::text[], $8::bigint[], $9::bigint[], $10::bigint[], $11::text[],
            $12::text[], $13::bytea[], $14::text[], $15::bigint[], $16::text[], $17::bigint[],
            $18::bigint[], $19::bigint[], $20::text[], $21::bigint[], $22::bigint[],
            $23::float8[], $24::text[])",
        &[
            &ids,
            &text(|e| Some(e.project.as_str())),
            &text(|e| e.source_id.as_deref()),
            &text(|e| e.agent.as_deref()),
            &text(|e| e.thread.as_deref()),
            &places.iter().map(|p| p.thread_seq).collect::<Vec<_>>(),
            &text(|e| e.session.as_deref()),
            &places.iter().map(|p| p.session_seq).collect::<Vec<_>>(),
            &events.iter().map(|e| e.turn).collect::<Vec<_>>(),
            &places.iter().map(|p| p.turn_seq).collect::<Vec<_>>(),
            &text(|e| Some(e.role.as_str())),
            &text(|e| Some(e.kind.as_str())),
            &events
                .iter()
                .map(|e| e.content.as_bytes())
                .collect::<Vec<_>>(),
            &hashes,
            &events
                .iter()
                .map(|e| e.parent.map(|p| p.0 as i64))
                .collect::<Vec<_>>(),
            &text(|e| e.causality.map(Causality::as_str)),
            &places.iter().map(|p| p.prev).collect::<Vec<_>>(),
            &events
                .iter()
                .map(|e| e.created_at.unwrap_or(now))
                .collect::<Vec<_>>(),
            &vec![now; events.len()],
            &text(|e| e.source.as_deref()),
            &events.iter().map(|e| e.source_offset).collect::<Vec<_>>(),
            &events.iter().map(|e| e.source_len).collect::<Vec<_>>(),
            &events
                .iter()
                .map(|e| e.ordering_confidence)
                .collect::<Vec<_>>(),
            &text(|e| e.speaker.as_deref()),
        ],
    )
    .map_err(pg)?;
    Ok(ids
        .into_iter()
        .zip(&places)
        .map(|(id, place)| (EventId(id as u64), place.prev.map(|p| EventId(p as u64))))
        .collect())
}

/// The refusal of a source id its project already holds.
fn source_id_taken(id: &str, project: &str) -> LedgerError {
    LedgerError::Invalid {
        what: "source_id",
        reason: format!("{id:?} already exists in project `{project}`"),
    }
}
