//! The boundary's SQLite backend: [`Exec`] on the ledger's one connection, inside the
//! caller's transaction, through prepared (cached) statements. The operations themselves
//! are [`portable`](super::portable).

use std::path::Path;

use rusqlite::Connection;
use rusqlite::types::{ToSqlOutput, ValueRef};

use super::exec::{Arg, Cell, Exec, Row};
use crate::ledger::{LedgerError, LedgerResult};

/// The ledger's connection (or a transaction on it) as [`Rows`](super::Rows).
pub(crate) struct Sqlite<'c> {
    conn: &'c Connection,
    path: Option<&'c Path>,
}

impl<'c> Sqlite<'c> {
    /// Operations on `conn`, errors naming the database file `path`.
    pub(crate) fn new(conn: &'c Connection, path: Option<&'c Path>) -> Self {
        Self { conn, path }
    }

    fn sql(&self, source: rusqlite::Error) -> LedgerError {
        LedgerError::Sqlite {
            path: self.path.map(Path::to_owned),
            source,
        }
    }
}

impl rusqlite::ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match *self {
            Arg::Null => ValueRef::Null,
            Arg::Int(v) => ValueRef::Integer(v),
            Arg::Real(v) => ValueRef::Real(v),
            Arg::Bool(b) => ValueRef::Integer(i64::from(b)),
            Arg::Text(s) => ValueRef::Text(s.as_bytes()),
            Arg::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

/// A stored value as a [`Cell`]; text that is not UTF-8 stays bytes.
fn cell(v: ValueRef<'_>) -> Cell {
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Real(r) => Cell::Real(r),
        ValueRef::Text(t) => match std::str::from_utf8(t) {
            Ok(s) => Cell::Text(s.to_owned()),
            Err(_) => Cell::Blob(t.to_vec()),
        },
        ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
    }
}

impl Exec for Sqlite<'_> {
    fn run(&self, sql: &str, args: &[Arg<'_>]) -> LedgerResult<usize> {
        self.conn
            .prepare_cached(sql)
            .and_then(|mut s| s.execute(rusqlite::params_from_iter(args)))
            .map_err(|e| self.sql(e))
    }

    fn rows(&self, sql: &str, args: &[Arg<'_>]) -> LedgerResult<Vec<Row>> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.sql(e))?;
        let width = stmt.column_count();
        let mut rows = stmt
            .query(rusqlite::params_from_iter(args))
            .map_err(|e| self.sql(e))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(|e| self.sql(e))? {
            let cells = (0..width)
                .map(|i| r.get_ref(i).map(cell))
                .collect::<rusqlite::Result<_>>()
                .map_err(|e| self.sql(e))?;
            out.push(Row(cells));
        }
        Ok(out)
    }
}
