//! The boundary's PostgreSQL backend (feature `postgres`): [`Exec`] on one transaction of
//! the scale profile's server. The operations are [`portable`](super::portable); here
//! each statement is rewritten once (`?N` → `$N` outside quoted text, SQLite's `INDEXED
//! BY` hint dropped), prepared once per connection (the server then names each
//! parameter's type) and run with every argument converted to that type: an id where the
//! server expects an `int4` (`OFFSET ?2 - 1`), a flag where it expects an integer, an
//! integer where it expects a real. Columns come back by their declared types.

use std::cell::RefCell;
use std::collections::HashMap;

use postgres::types::{ToSql, Type};
use postgres::{GenericClient, Statement};

use super::exec::{Arg, Cell, Exec, Row};
use crate::base::Reason;
use crate::ledger::{LedgerError, LedgerResult};

/// Statements prepared on one connection, by their portable text.
pub(crate) type Prepared = HashMap<String, Statement>;

/// One PostgreSQL transaction (or, for a lone read, the connection itself) as
/// [`Rows`](super::Rows).
pub(crate) struct Postgres<'a, C: GenericClient> {
    tx: RefCell<&'a mut C>,
    prepared: RefCell<&'a mut Prepared>,
}

impl<'a, C: GenericClient> Postgres<'a, C> {
    /// Operations in `tx`, reusing (and adding to) its connection's `prepared` statements.
    pub(crate) fn new(tx: &'a mut C, prepared: &'a mut Prepared) -> Self {
        Self {
            tx: RefCell::new(tx),
            prepared: RefCell::new(prepared),
        }
    }

    /// `sql` prepared on this connection.
    fn statement(&self, sql: &str) -> LedgerResult<Statement> {
        if let Some(s) = self.prepared.borrow().get(sql) {
            return Ok(s.clone());
        }
        let s = self
            .tx
            .borrow_mut()
            .prepare(&dialect(sql))
            .map_err(|source| LedgerError::Postgres { source })?;
        self.prepared.borrow_mut().insert(sql.to_owned(), s.clone());
        Ok(s)
    }

    /// `args` converted to the types `stmt`'s parameters have.
    fn bind<'v>(
        stmt: &Statement,
        args: &[Arg<'v>],
    ) -> LedgerResult<Vec<Box<dyn ToSql + Sync + 'v>>> {
        let types = stmt.params();
        if types.len() != args.len() {
            return Err(internal(format!(
                "a statement takes {} arguments, {} were given",
                types.len(),
                args.len()
            )));
        }
        types
            .iter()
            .zip(args)
            .map(|(ty, a)| value(ty, *a))
            .collect()
    }
}

/// The portable text in PostgreSQL's terms: `?N` → `$N` outside quoted text, and SQLite's
/// `INDEXED BY <index>` hint dropped (the planner chooses alone).
fn dialect(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quoted: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quoted {
            Some(q) => {
                out.push(c);
                if c == q {
                    quoted = None;
                }
            }
            None if c == '\'' || c == '"' => {
                quoted = Some(c);
                out.push(c);
            }
            None if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) => out.push('$'),
            None => out.push(c),
        }
    }
    const HINT: &str = " INDEXED BY ";
    while let Some(at) = out.find(HINT) {
        let rest = &out[at + HINT.len()..];
        let name = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        out.replace_range(at..at + HINT.len() + name, "");
    }
    out
}

/// A refusal of hypermem's own making (a statement and its arguments disagree): a bug,
/// reported as one.
fn internal(message: String) -> LedgerError {
    LedgerError::Refused {
        reason: Reason::Internal,
        message: format!("the PostgreSQL ledger could not run an operation: {message}"),
    }
}

/// `arg` as the value the server expects for a parameter of type `ty`.
fn value<'v>(ty: &Type, arg: Arg<'v>) -> LedgerResult<Box<dyn ToSql + Sync + 'v>> {
    let int = match arg {
        Arg::Int(v) => Some(v),
        Arg::Bool(b) => Some(i64::from(b)),
        _ => None,
    };
    let mismatch = || internal(format!("{arg:?} cannot be a {ty} parameter"));
    Ok(match (ty, arg) {
        (_, Arg::Null) => match *ty {
            Type::INT8 => Box::new(None::<i64>),
            Type::INT4 => Box::new(None::<i32>),
            Type::INT2 => Box::new(None::<i16>),
            Type::FLOAT8 => Box::new(None::<f64>),
            Type::FLOAT4 => Box::new(None::<f32>),
            Type::BOOL => Box::new(None::<bool>),
            Type::BYTEA => Box::new(None::<&[u8]>),
            _ => Box::new(None::<&str>),
        },
        (&Type::INT8, _) => Box::new(int.ok_or_else(mismatch)?),
        (&Type::INT4, _) => Box::new(
            int.and_then(|v| i32::try_from(v).ok())
                .ok_or_else(mismatch)?,
        ),
        (&Type::INT2, _) => Box::new(
            int.and_then(|v| i16::try_from(v).ok())
                .ok_or_else(mismatch)?,
        ),
        (&Type::FLOAT8, Arg::Real(v)) => Box::new(v),
        (&Type::FLOAT8, Arg::Int(v)) => Box::new(v as f64),
        (&Type::FLOAT4, Arg::Real(v)) => Box::new(v as f32),
        (&Type::BOOL, _) => Box::new(int.map(|v| v != 0).ok_or_else(mismatch)?),
        (&Type::BYTEA, Arg::Blob(b)) => Box::new(b),
        (&Type::BYTEA, Arg::Text(s)) => Box::new(s.as_bytes()),
        (&Type::TEXT | &Type::VARCHAR | &Type::BPCHAR | &Type::NAME, Arg::Text(s)) => Box::new(s),
        _ => return Err(mismatch()),
    })
}

/// Column `i` of `row` as a [`Cell`], by its declared type.
fn cell(row: &postgres::Row, i: usize) -> LedgerResult<Cell> {
    let pg = |source| LedgerError::Postgres { source };
    let ty = row.columns()[i].type_();
    Ok(match *ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(i).map_err(pg)?.map(Cell::Int),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)
            .map_err(pg)?
            .map(|v| Cell::Int(v.into())),
        Type::INT2 => row
            .try_get::<_, Option<i16>>(i)
            .map_err(pg)?
            .map(|v| Cell::Int(v.into())),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)
            .map_err(pg)?
            .map(|v| Cell::Int(v.into())),
        Type::FLOAT8 => row
            .try_get::<_, Option<f64>>(i)
            .map_err(pg)?
            .map(Cell::Real),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(i)
            .map_err(pg)?
            .map(|v| Cell::Real(v.into())),
        Type::BYTEA => row
            .try_get::<_, Option<Vec<u8>>>(i)
            .map_err(pg)?
            .map(Cell::Blob),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => row
            .try_get::<_, Option<String>>(i)
            .map_err(pg)?
            .map(Cell::Text),
        _ => {
            return Err(internal(format!(
                "column {} has the type {ty}, which the boundary does not read",
                row.columns()[i].name()
            )));
        }
    }
    .unwrap_or(Cell::Null))
}

impl<C: GenericClient> Exec for Postgres<'_, C> {
    fn run(&self, sql: &str, args: &[Arg<'_>]) -> LedgerResult<usize> {
        let stmt = self.statement(sql)?;
        let values = Self::bind(&stmt, args)?;
        let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(AsRef::as_ref).collect();
        let n = self
            .tx
            .borrow_mut()
            .execute(&stmt, &refs)
            .map_err(|source| LedgerError::Postgres { source })?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn rows(&self, sql: &str, args: &[Arg<'_>]) -> LedgerResult<Vec<Row>> {
        let stmt = self.statement(sql)?;
        let values = Self::bind(&stmt, args)?;
        let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(AsRef::as_ref).collect();
        let rows = self
            .tx
            .borrow_mut()
            .query(&stmt, &refs)
            .map_err(|source| LedgerError::Postgres { source })?;
        rows.iter()
            .map(|r| {
                (0..r.len())
                    .map(|i| cell(r, i))
                    .collect::<LedgerResult<_>>()
                    .map(Row)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::dialect;

    #[test]
    fn placeholders_and_the_index_hint_are_rewritten_outside_quoted_text() {
        assert_eq!(
            dialect("SELECT a FROM t INDEXED BY t_b WHERE p = ?1 AND s = '?2' AND \"w?3\" = ?12"),
            "SELECT a FROM t WHERE p = $1 AND s = '?2' AND \"w?3\" = $12"
        );
        assert_eq!(dialect("SELECT '%?' LIKE ?1"), "SELECT '%?' LIKE $1");
    }
}
