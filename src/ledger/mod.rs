//! The governed ledger in SQLite: append-only raw events with chronology and full-text
//! search, plus the tables of the governance layer (`crate::governance`), all in one
//! database file with one writer connection.
//!
//! Connection settings: WAL journal, `synchronous = FULL` (a committed append survives power
//! loss), foreign keys on, `secure_delete` (erased rows are overwritten, not left in free
//! pages), a 64 MiB page cache, reads through a 1 GiB mmap window, WAL
//! checkpoints every 10,000 pages, a busy timeout so a second process waits instead of
//! failing.
//! Every write runs in a short `BEGIN IMMEDIATE` transaction.

pub(crate) mod beliefs;
mod deadline;
mod erasure;
mod error;
mod events;
mod log;
#[cfg(feature = "postgres")]
pub mod postgres;
pub(crate) mod rows;
mod schema;

use crate::sync::Recover as _;
use rows::exec::ExecExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior};

pub use beliefs::{Belief, BeliefId, BeliefStatus, Ownership, normalize_statement};
pub use deadline::{Deadline, go_on};
pub use erasure::ErasureReceipt;
pub use error::{LedgerError, LedgerResult, sqlite_failure};
pub use events::{
    Appended, Causality, Event, EventContext, EventId, EventKind, FtsHit, NewEvent,
    PendingEmbedding, Role, SemanticBits,
};
pub(crate) use events::{fts_exists, fts_table, string_enum};
pub use log::EventLog;
pub use schema::{GLOBAL_TABLES, MIGRATIONS, Migration};

use crate::clock::{Clock, SystemClock, now_ms};

/// Whether the ledger holds anything of project `?1` (an event, a belief, an episode, a
/// procedure, a prospective item): one boolean column.
pub const PROJECT_HELD_SQL: &str = "SELECT EXISTS (SELECT 1 FROM events WHERE project = ?1)
     OR EXISTS (SELECT 1 FROM beliefs WHERE project = ?1)
     OR EXISTS (SELECT 1 FROM episodes WHERE project = ?1)
     OR EXISTS (SELECT 1 FROM procedures WHERE project = ?1)
     OR EXISTS (SELECT 1 FROM prospective WHERE project = ?1)";

/// Settings of a [`Ledger`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LedgerConfig {
    /// Largest accepted event content, in bytes.
    pub max_content_bytes: usize,
    /// How long a writer waits for another connection's lock.
    pub busy_timeout_ms: u64,
}

impl Default for LedgerConfig {
    fn default() -> Self {
        Self {
            max_content_bytes: 1 << 20,
            busy_timeout_ms: 5_000,
        }
    }
}

/// What [`Ledger::migrate`] did or, for a dry run, would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationReport {
    /// Schema version before.
    pub from: u32,
    /// Schema version after (equal to `from` for a dry run).
    pub to: u32,
    /// `(version, name)` of each migration applied (or pending, for a dry run).
    pub migrations: Vec<(u32, String)>,
    /// Whether this was a dry run.
    pub dry_run: bool,
}

/// The ledger: raw events and the tables behind the boundary, in one SQLite file (lite
/// and standard) or on a PostgreSQL server many nodes share (scale, feature `postgres`).
pub struct Ledger {
    engine: Engine,
    config: LedgerConfig,
    clock: Arc<dyn Clock>,
}

/// The database a [`Ledger`] runs on.
enum Engine {
    /// One SQLite file (or memory), one connection.
    Sqlite {
        conn: Mutex<Connection>,
        path: Option<PathBuf>,
    },
    /// A PostgreSQL server.
    #[cfg(feature = "postgres")]
    Postgres(Box<postgres::PgEngine>),
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("backend", &self.backend())
            .field("path", &self.path())
            .field("config", &self.config)
            .finish()
    }
}

impl Ledger {
    /// Opens (creating if needed) the ledger at `path` and applies pending migrations.
    ///
    /// # Errors
    /// SQLite errors naming the file; [`LedgerError::SchemaTooNew`].
    pub fn open(path: impl AsRef<Path>, config: LedgerConfig) -> LedgerResult<Self> {
        let ledger = Self::open_unmigrated(path, config)?;
        ledger.migrate(false)?;
        Ok(ledger)
    }

    /// Opens the ledger without migrating (to inspect or dry-run migrations). Operations on
    /// an outdated schema fail with [`LedgerError::NeedsMigration`].
    ///
    /// # Errors
    /// SQLite errors naming the file.
    pub fn open_unmigrated(path: impl AsRef<Path>, config: LedgerConfig) -> LedgerResult<Self> {
        let path = path.as_ref().to_owned();
        let conn = Connection::open(&path).map_err(|source| LedgerError::Sqlite {
            path: Some(path.clone()),
            source,
        })?;
        Self::init(conn, Some(path), config)
    }

    /// A private in-memory ledger (tests, tools), migrated.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn open_in_memory(config: LedgerConfig) -> LedgerResult<Self> {
        let conn = Connection::open_in_memory()
            .map_err(|source| LedgerError::Sqlite { path: None, source })?;
        let ledger = Self::init(conn, None, config)?;
        ledger.migrate(false)?;
        Ok(ledger)
    }

    /// The ledger on the PostgreSQL server at `url` (`postgres://user:password@host:port/db`),
    /// its schema brought up to date by the first node that connects.
    ///
    /// # Errors
    /// [`LedgerError::Postgres`] when the server cannot be reached or refuses;
    /// [`LedgerError::SchemaTooNew`] for a database a newer hypermem migrated.
    #[cfg(feature = "postgres")]
    pub fn connect(url: &str, config: LedgerConfig) -> LedgerResult<Self> {
        Self::connect_as(url, None, config)
    }

    /// The PostgreSQL ledger at `url` without applying its migrations (to report them, or
    /// apply them with [`migrate`](Self::migrate)).
    ///
    /// # Errors
    /// As [`connect`](Self::connect).
    #[cfg(feature = "postgres")]
    pub fn connect_unmigrated(
        url: &str,
        password: Option<&str>,
        config: LedgerConfig,
    ) -> LedgerResult<Self> {
        Ok(Self {
            engine: Engine::Postgres(Box::new(postgres::PgEngine::connect_unmigrated(
                url, password,
            )?)),
            config,
            clock: Arc::new(SystemClock),
        })
    }

    /// [`connect`](Self::connect) with a password kept apart from the URL (a profile
    /// names the environment variable that holds it).
    ///
    /// # Errors
    /// As [`connect`](Self::connect).
    #[cfg(feature = "postgres")]
    pub fn connect_as(
        url: &str,
        password: Option<&str>,
        config: LedgerConfig,
    ) -> LedgerResult<Self> {
        let ledger = Self::connect_unmigrated(url, password, config)?;
        ledger.migrate(false)?;
        Ok(ledger)
    }

    /// Which database holds the ledger: `"sqlite"` or `"postgres"`.
    pub fn backend(&self) -> &'static str {
        match self.engine {
            Engine::Sqlite { .. } => "sqlite",
            #[cfg(feature = "postgres")]
            Engine::Postgres(_) => "postgres",
        }
    }

    /// The token naming the deployment a shared ledger belongs to (made by its first
    /// node, the same for every node after); `None` for a SQLite ledger, whose data
    /// directory names its deployment itself.
    ///
    /// # Errors
    /// The store's failures.
    pub fn deployment_token(&self) -> LedgerResult<Option<String>> {
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            return pg.deployment_token().map(Some);
        }
        Ok(None)
    }

    /// The PostgreSQL engine, if the ledger runs on one.
    #[cfg(feature = "postgres")]
    pub(crate) fn postgres(&self) -> Option<&postgres::PgEngine> {
        match &self.engine {
            Engine::Postgres(pg) => Some(pg),
            Engine::Sqlite { .. } => None,
        }
    }

    /// The PostgreSQL engine, if the ledger runs on one (never, in a build without it).
    #[cfg(not(feature = "postgres"))]
    pub(crate) fn postgres(&self) -> Option<&std::convert::Infallible> {
        None
    }

    fn init(conn: Connection, path: Option<PathBuf>, config: LedgerConfig) -> LedgerResult<Self> {
        let ledger = Self {
            engine: Engine::Sqlite {
                conn: Mutex::new(conn),
                path,
            },
            config,
            clock: Arc::new(SystemClock),
        };
        {
            let conn = ledger.lock()?;
            conn.busy_timeout(std::time::Duration::from_millis(config.busy_timeout_ms))
                .map_err(|e| ledger.sql(e))?;
            conn.execute_batch(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = FULL;
                 PRAGMA foreign_keys = ON;
                 PRAGMA secure_delete = ON;
                 PRAGMA cache_size = -65536;
                 PRAGMA temp_store = MEMORY;
                 PRAGMA mmap_size = 1073741824;
                 PRAGMA wal_autocheckpoint = 10000;
                 CREATE TABLE IF NOT EXISTS schema_migrations (
                     version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);",
            )
            .map_err(|e| ledger.sql(e))?;
        }
        Ok(ledger)
    }

    /// Replaces the clock (tests inject a manual one).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The settings.
    pub fn config(&self) -> LedgerConfig {
        self.config
    }

    /// The database file, if any.
    pub fn path(&self) -> Option<&Path> {
        match &self.engine {
            Engine::Sqlite { path, .. } => path.as_deref(),
            #[cfg(feature = "postgres")]
            Engine::Postgres(_) => None,
        }
    }

    /// The ledger's clock.
    pub fn clock(&self) -> Arc<dyn Clock> {
        self.clock.clone()
    }

    /// Current time in milliseconds on the ledger's clock.
    pub fn now_ms(&self) -> i64 {
        now_ms(self.clock.as_ref())
    }

    pub(crate) fn sql(&self, source: rusqlite::Error) -> LedgerError {
        LedgerError::Sqlite {
            path: self.path().map(Path::to_owned),
            source,
        }
    }

    /// The SQLite connection. Only the SQLite engine's own statements take it; on
    /// PostgreSQL it is a bug, refused as one.
    pub(crate) fn lock(&self) -> LedgerResult<MutexGuard<'_, Connection>> {
        match &self.engine {
            // A poisoned lock only means another thread panicked mid-call; SQLite rolled
            // back its transaction, so the connection is still consistent.
            Engine::Sqlite { conn, .. } => Ok(conn.locked()),
            #[cfg(feature = "postgres")]
            Engine::Postgres(_) => Err(LedgerError::Refused {
                reason: crate::base::Reason::Internal,
                message: "a SQLite statement was sent to the PostgreSQL ledger".to_owned(),
            }),
        }
    }

    /// The schema version recorded in the database.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn schema_version(&self) -> LedgerResult<u32> {
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            return pg.schema_version();
        }
        let conn = self.lock()?;
        Self::version_of(&conn).map_err(|e| self.sql(e))
    }

    fn version_of(conn: &Connection) -> rusqlite::Result<u32> {
        // Every read checks the schema (another process may have migrated it): a cached
        // statement, not a parse per read.
        conn.prepare_cached("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")?
            .query_row([], |r| r.get(0))
    }

    /// Applies every pending migration in one transaction (or, with `dry_run`, only reports
    /// them). Re-running is a no-op.
    ///
    /// # Errors
    /// SQLite errors (the transaction is rolled back: nothing is half-applied);
    /// [`LedgerError::SchemaTooNew`].
    pub fn migrate(&self, dry_run: bool) -> LedgerResult<MigrationReport> {
        self.migrate_to(MIGRATIONS.last().map_or(0, |m| m.version), dry_run)
    }

    /// Applies the pending migrations up to version `target` (see [`migrate`](Self::migrate)).
    ///
    /// # Errors
    /// As [`migrate`](Self::migrate).
    pub fn migrate_to(&self, target: u32, dry_run: bool) -> LedgerResult<MigrationReport> {
        // A PostgreSQL ledger has its own migrations; a node that connects applies them
        // (under a lock, once across nodes).
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            let from = pg.schema_version()?;
            let known = postgres::MIGRATION_NAMES.len() as u32;
            if from > known {
                return Err(LedgerError::SchemaTooNew {
                    found: from,
                    supported: known,
                });
            }
            let latest = target.min(known).max(from);
            let migrations = (from + 1..=latest)
                .map(|v| (v, postgres::MIGRATION_NAMES[v as usize - 1].to_owned()))
                .collect();
            if !dry_run {
                pg.migrate_to(latest)?;
            }
            return Ok(MigrationReport {
                from,
                to: if dry_run { from } else { latest },
                migrations,
                dry_run,
            });
        }
        let mut conn = self.lock()?;
        let from = Self::version_of(&conn).map_err(|e| self.sql(e))?;
        let known = MIGRATIONS.last().map_or(0, |m| m.version);
        if from > known {
            return Err(LedgerError::SchemaTooNew {
                found: from,
                supported: known,
            });
        }
        let latest = target.min(known).max(from);
        let pending: Vec<&Migration> = MIGRATIONS
            .iter()
            .filter(|m| m.version > from && m.version <= latest)
            .collect();
        let report = |to| MigrationReport {
            from,
            to,
            migrations: pending
                .iter()
                .map(|m| (m.version, m.name.to_owned()))
                .collect(),
            dry_run,
        };
        if dry_run || pending.is_empty() {
            return Ok(report(from));
        }
        let now = self.now_ms();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.sql(e))?;
        for m in &pending {
            tx.execute_batch(m.sql).map_err(|e| self.sql(e))?;
            tx.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?1, ?2, ?3)",
                rusqlite::params![m.version, m.name, now],
            )
            .map_err(|e| self.sql(e))?;
        }
        tx.commit().map_err(|e| self.sql(e))?;
        Ok(report(latest))
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction; commits if it returns `Ok`. Under a
    /// [`Deadline`] the first write claims it: an operation abandoned by its caller, or
    /// past its time, writes nothing.
    ///
    /// # Errors
    /// `f`'s error (after rollback) or SQLite errors; [`LedgerError::NeedsMigration`];
    /// `timeout` when the operation's deadline passed before it wrote anything.
    pub(crate) fn write<R>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        if !deadline::claim() {
            return Err(deadline::timed_out());
        }
        let mut conn = self.lock()?;
        self.check_schema(&conn)?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.sql(e))?;
        let out = f(&tx)?;
        tx.commit().map_err(|e| self.sql(e))?;
        Ok(out)
    }

    /// Runs `f` on the ledger's [`Rows`](rows::Rows) in one write transaction (committed
    /// if `f` succeeds, rolled back otherwise): [`write`](Self::write) behind the boundary.
    ///
    /// # Errors
    /// As [`write`](Self::write).
    pub(crate) fn writing<R>(
        &self,
        f: impl FnOnce(&dyn rows::Rows) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            return pg.writing(f);
        }
        self.write(|tx| f(&rows::sqlite::Sqlite::new(tx, self.path())))
    }

    /// Runs `f` on the ledger's statements in one write transaction (committed if `f`
    /// succeeds), whichever engine holds it.
    ///
    /// # Errors
    /// As [`write`](Self::write).
    pub(crate) fn exec_write<R>(
        &self,
        f: impl FnOnce(&dyn rows::exec::Exec) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            return pg.exec_write(f);
        }
        self.write(|tx| f(&rows::sqlite::Sqlite::new(tx, self.path())))
    }

    /// Runs a read-only `f` on the ledger's statements (one snapshot), whichever engine
    /// holds it.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub(crate) fn exec_read<R>(
        &self,
        f: impl FnOnce(&dyn rows::exec::Exec) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            return pg.exec_read(f);
        }
        self.read(|c| f(&rows::sqlite::Sqlite::new(c, self.path())))
    }

    /// Runs a read-only `f` on the ledger's [`Rows`](rows::Rows).
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub(crate) fn reading<R>(
        &self,
        f: impl FnOnce(&dyn rows::Rows) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            return pg.reading(f);
        }
        self.read(|c| f(&rows::sqlite::Sqlite::new(c, self.path())))
    }

    /// Runs a read-only `f` on the connection.
    pub(crate) fn read<R>(
        &self,
        f: impl FnOnce(&Connection) -> LedgerResult<R>,
    ) -> LedgerResult<R> {
        let conn = self.lock()?;
        self.check_schema(&conn)?;
        f(&conn)
    }

    fn check_schema(&self, conn: &Connection) -> LedgerResult<()> {
        let latest = MIGRATIONS.last().map_or(0, |m| m.version);
        let found = Self::version_of(conn).map_err(|e| self.sql(e))?;
        if found != latest {
            return Err(if found > latest {
                LedgerError::SchemaTooNew {
                    found,
                    supported: latest,
                }
            } else {
                LedgerError::NeedsMigration {
                    found,
                    needed: latest,
                }
            });
        }
        Ok(())
    }

    /// Every table of the schema except the per-project full-text tables (see
    /// [`fts_tables`](Self::fts_tables)), sorted.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn tables(&self) -> LedgerResult<Vec<String>> {
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            return pg.tables();
        }
        let conn = self.lock()?;
        let mut stmt = conn
            .prepare(
                "SELECT name FROM sqlite_schema WHERE type = 'table'
                 AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'fts_p%' ORDER BY name",
            )
            .map_err(|e| self.sql(e))?;
        let names = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.sql(e))?;
        Ok(names)
    }

    /// The per-project full-text tables (`fts_p<hex>`, their FTS5 shadow tables excluded).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn fts_tables(&self) -> LedgerResult<Vec<String>> {
        if self.postgres().is_some() {
            return Ok(Vec::new());
        }
        let conn = self.lock()?;
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%' AND name LIKE 'fts_p%' ORDER BY name")
            .map_err(|e| self.sql(e))?;
        stmt.query_map([], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.sql(e))
    }

    /// Rows of `project` in `table` (which must have a `project` column).
    ///
    /// # Errors
    /// SQLite errors (for example an unknown table).
    pub fn count_rows(&self, table: &str, project: &crate::base::ProjectId) -> LedgerResult<u64> {
        let escaped = table.replace('"', "\"\"");
        self.exec_read(|x| {
            Ok(x.one(
                &format!("SELECT COUNT(*) FROM \"{escaped}\" WHERE project = ?1"),
                rows::exec::args![project.as_str()],
                |r| r.get(0),
            )?
            .unwrap_or(0))
        })
    }

    /// Whether `table` has a `project` column.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn has_project_column(&self, table: &str) -> LedgerResult<bool> {
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            return pg.has_project_column(table);
        }
        let conn = self.lock()?;
        let found: Option<String> = conn
            .query_row(
                "SELECT name FROM pragma_table_info(?1) WHERE name = 'project'",
                [table],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        Ok(found.is_some())
    }
}
