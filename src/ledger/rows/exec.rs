//! One statement text, two database engines. The boundary's operations are written once
//! ([`portable`](super::portable)) against [`Exec`]: a statement with `?N` placeholders,
//! arguments as [`Arg`]s, rows as [`Cell`]s. Each backend runs them in its own terms —
//! SQLite binds and reads its dynamic values; PostgreSQL rewrites the placeholders and
//! converts each argument to the type the server inferred for it (an id bound where the
//! column is a flag, a count where it is a real) and each column by its declared type.
//!
//! The SQL is the common subset of both: `RETURNING id` for new ids, `CASE` for the
//! larger of two values, an alias on every subquery in `FROM`, quoted `"window"`. The one
//! hint only SQLite knows (`INDEXED BY`) the PostgreSQL backend drops.

use crate::ledger::{LedgerError, LedgerResult};

/// An argument of a statement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Arg<'a> {
    /// SQL `NULL`.
    Null,
    /// An integer (ids, times in ms, counts).
    Int(i64),
    /// A real number.
    Real(f64),
    /// A flag (stored as an integer 0 / 1 where the column is one).
    Bool(bool),
    /// Text.
    Text(&'a str),
    /// Bytes.
    Blob(&'a [u8]),
}

impl From<i64> for Arg<'_> {
    fn from(v: i64) -> Self {
        Self::Int(v)
    }
}

impl From<u64> for Arg<'_> {
    /// Ids and counts are stored as signed 64-bit integers (both engines' integer).
    fn from(v: u64) -> Self {
        Self::Int(v as i64)
    }
}

impl From<f64> for Arg<'_> {
    fn from(v: f64) -> Self {
        Self::Real(v)
    }
}

impl From<bool> for Arg<'_> {
    fn from(v: bool) -> Self {
        Self::Bool(v)
    }
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(v: &'a str) -> Self {
        Self::Text(v)
    }
}

impl<'a> From<&'a String> for Arg<'a> {
    fn from(v: &'a String) -> Self {
        Self::Text(v)
    }
}

impl<'a> From<&'a [u8]> for Arg<'a> {
    fn from(v: &'a [u8]) -> Self {
        Self::Blob(v)
    }
}

impl<'a, T: Into<Arg<'a>>> From<Option<T>> for Arg<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Self::Null, Into::into)
    }
}

/// The arguments of one statement, each converted by [`Arg::from`].
macro_rules! args {
    ($($a:expr),* $(,)?) => {
        &[$($crate::ledger::rows::exec::Arg::from($a)),*][..]
    };
}
pub(crate) use args;

/// One value of a result row (a PostgreSQL boolean comes as the integer 0 / 1, as
/// SQLite gives it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    /// SQL `NULL`.
    Null,
    /// An integer.
    Int(i64),
    /// A real number.
    Real(f64),
    /// Text.
    Text(String),
    /// Bytes (also PostgreSQL's event content, stored as UTF-8 bytes).
    Blob(Vec<u8>),
}

impl Cell {
    fn kind(&self) -> &'static str {
        match self {
            Self::Null => "NULL",
            Self::Int(_) => "an integer",
            Self::Real(_) => "a real",
            Self::Text(_) => "text",
            Self::Blob(_) => "bytes",
        }
    }
}

/// A Rust value a [`Cell`] converts to (`None` when it cannot).
pub(crate) trait FromCell: Sized {
    /// The type's name in a refusal.
    const NAME: &'static str;
    /// The value of `cell`, if it has this type.
    fn from_cell(cell: Cell) -> Option<Self>;
}

impl FromCell for i64 {
    const NAME: &'static str = "an integer";
    fn from_cell(cell: Cell) -> Option<Self> {
        match cell {
            Cell::Int(v) => Some(v),
            _ => None,
        }
    }
}

impl FromCell for u64 {
    const NAME: &'static str = "an id or count";
    fn from_cell(cell: Cell) -> Option<Self> {
        i64::from_cell(cell).and_then(|v| u64::try_from(v).ok())
    }
}

impl FromCell for f64 {
    const NAME: &'static str = "a real";
    fn from_cell(cell: Cell) -> Option<Self> {
        match cell {
            Cell::Real(v) => Some(v),
            Cell::Int(v) => Some(v as f64),
            _ => None,
        }
    }
}

impl FromCell for bool {
    const NAME: &'static str = "a flag";
    fn from_cell(cell: Cell) -> Option<Self> {
        match cell {
            Cell::Int(v) => Some(v != 0),
            _ => None,
        }
    }
}

impl FromCell for String {
    const NAME: &'static str = "text";
    fn from_cell(cell: Cell) -> Option<Self> {
        match cell {
            Cell::Text(s) => Some(s),
            Cell::Blob(b) => String::from_utf8(b).ok(),
            _ => None,
        }
    }
}

impl FromCell for Vec<u8> {
    const NAME: &'static str = "bytes";
    fn from_cell(cell: Cell) -> Option<Self> {
        match cell {
            Cell::Blob(b) => Some(b),
            Cell::Text(s) => Some(s.into_bytes()),
            _ => None,
        }
    }
}

impl<T: FromCell> FromCell for Option<T> {
    const NAME: &'static str = T::NAME;
    fn from_cell(cell: Cell) -> Option<Self> {
        match cell {
            Cell::Null => Some(None),
            c => T::from_cell(c).map(Some),
        }
    }
}

/// One result row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row(pub(crate) Vec<Cell>);

impl Row {
    /// Column `i` as a `T`.
    ///
    /// # Errors
    /// [`LedgerError::Corrupt`] when the column is missing or holds another type: the
    /// stored row is not what this version of hypermem wrote.
    pub(crate) fn get<T: FromCell>(&self, i: usize) -> LedgerResult<T> {
        let cell = self.0.get(i).cloned().ok_or_else(|| LedgerError::Corrupt {
            what: "ledger row",
            detail: format!("column {i} is missing"),
        })?;
        let kind = cell.kind();
        T::from_cell(cell).ok_or_else(|| LedgerError::Corrupt {
            what: "ledger row",
            detail: format!("column {i} holds {kind} where {} belongs", T::NAME),
        })
    }
}

/// What a backend does with one statement of the portable subset, inside the caller's
/// transaction.
pub(crate) trait Exec {
    /// Runs `sql` with `args`; the number of rows it changed.
    ///
    /// # Errors
    /// The engine's failure in hypermem's words.
    fn run(&self, sql: &str, args: &[Arg<'_>]) -> LedgerResult<usize>;

    /// Every row `sql` gives with `args`.
    ///
    /// # Errors
    /// The engine's failure in hypermem's words.
    fn rows(&self, sql: &str, args: &[Arg<'_>]) -> LedgerResult<Vec<Row>>;
}

/// What every [`Exec`] (and `dyn Exec`) offers on top of its two statements.
pub(crate) trait ExecExt: Exec {
    /// Runs an `INSERT … RETURNING id`; the new row's id.
    ///
    /// # Errors
    /// As [`rows`](Self::rows); [`LedgerError::Corrupt`] when no id came back.
    fn insert(&self, sql: &str, args: &[Arg<'_>]) -> LedgerResult<u64> {
        self.one(sql, args, |r| r.get(0))?
            .ok_or_else(|| LedgerError::Corrupt {
                what: "ledger insert",
                detail: "no id came back".to_owned(),
            })
    }

    /// The rows of one query, each read by `row`.
    ///
    /// # Errors
    /// As [`rows`](Self::rows), and `row`'s.
    fn all<T>(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        row: impl FnMut(&Row) -> LedgerResult<T>,
    ) -> LedgerResult<Vec<T>> {
        self.rows(sql, args)?.iter().map(row).collect()
    }

    /// The first row of a query, read by `row` (`None` without any).
    ///
    /// # Errors
    /// As [`rows`](Self::rows), and `row`'s.
    fn one<T>(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        row: impl FnOnce(&Row) -> LedgerResult<T>,
    ) -> LedgerResult<Option<T>> {
        self.rows(sql, args)?.first().map(row).transpose()
    }
}

impl<E: Exec + ?Sized> ExecExt for E {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_convert_across_the_engines_representations() {
        let row = Row(vec![
            Cell::Int(7),
            Cell::Int(1),
            Cell::Blob("ünï".as_bytes().to_vec()),
            Cell::Null,
            Cell::Int(3),
            Cell::Int(-1),
        ]);
        assert_eq!(row.get::<u64>(0).unwrap(), 7);
        assert!(row.get::<bool>(1).unwrap());
        assert_eq!(row.get::<i64>(1).unwrap(), 1);
        assert_eq!(row.get::<String>(2).unwrap(), "ünï");
        assert_eq!(row.get::<Option<String>>(3).unwrap(), None);
        assert_eq!(row.get::<f64>(4).unwrap(), 3.0);
        assert!(row.get::<bool>(4).unwrap());
        // A negative integer is no id; a NULL is no text; a column past the end is missing.
        for err in [
            row.get::<u64>(5).unwrap_err(),
            row.get::<String>(3).unwrap_err(),
            row.get::<i64>(9).unwrap_err(),
        ] {
            assert!(matches!(err, LedgerError::Corrupt { .. }), "{err:?}");
        }
        // Bytes that are not UTF-8 are no text.
        let bad = Row(vec![Cell::Blob(vec![0xff, 0xfe])]);
        assert!(bad.get::<String>(0).is_err());
    }

    #[test]
    fn arguments_convert_from_the_callers_types() {
        let name = String::from("p");
        let bytes = [1u8, 2];
        assert_eq!(
            args![
                &name,
                5u64,
                -2i64,
                0.5,
                true,
                None::<&str>,
                Some(3u64),
                &bytes[..]
            ],
            &[
                Arg::Text("p"),
                Arg::Int(5),
                Arg::Int(-2),
                Arg::Real(0.5),
                Arg::Bool(true),
                Arg::Null,
                Arg::Int(3),
                Arg::Blob(&[1, 2]),
            ][..]
        );
    }
}
