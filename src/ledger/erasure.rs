//! Project erasure: every row of a project leaves every table, in one transaction.

use std::collections::BTreeMap;

use rusqlite::params;

use super::{GLOBAL_TABLES, Ledger, LedgerResult};
use crate::base::ProjectId;

/// Rows removed per table by [`Ledger::forget_project`].
#[derive(
    Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct ErasureReceipt {
    /// The erased project.
    pub project: String,
    /// Table name → rows deleted (`fts` counts the entries of the dropped full-text table).
    pub rows: BTreeMap<String, u64>,
}

impl ErasureReceipt {
    /// Total rows removed.
    pub fn total(&self) -> u64 {
        self.rows.values().sum()
    }
}

impl Ledger {
    /// Deletes every row of `project` from every table that has a `project` column (found
    /// by inspecting the schema, so a table added later is covered), plus its full-text
    /// table, in one transaction (with `secure_delete`, the freed pages are zeroed). The only way raw events are ever deleted.
    ///
    /// # Errors
    /// SQLite errors (the transaction rolls back; nothing is half-erased).
    pub fn forget_project(&self, project: &ProjectId) -> LedgerResult<ErasureReceipt> {
        let tables = self.tables()?;
        let mut scoped = Vec::new();
        for t in &tables {
            if GLOBAL_TABLES.contains(&t.as_str()) {
                continue;
            }
            if self.has_project_column(t)? {
                scoped.push(t.clone());
            }
        }
        // Children before parents: tables referenced by others go last.
        let rank = |t: &str| match t {
            "events" => 3,
            "episodes" => 2,
            "beliefs" | "concepts" => 1,
            _ => 0,
        };
        scoped.sort_by_key(|t| (rank(t), t.clone()));
        let p = project.as_str();
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.postgres() {
            // No full-text table and no append-only trigger to lift on PostgreSQL.
            let mut receipt = ErasureReceipt {
                project: p.to_owned(),
                rows: pg.erase(p, &scoped)?.into_iter().collect(),
            };
            receipt.rows.insert("fts".to_owned(), 0);
            return Ok(receipt);
        }
        self.write(|tx| {
            let sql = |e| self.sql(e);
            let mut receipt = ErasureReceipt {
                project: p.to_owned(),
                rows: BTreeMap::new(),
            };
            // The project's full-text table goes entirely; count its rows first.
            let fts_table = super::fts_table(p);
            let fts: i64 = if super::fts_exists(tx, p).map_err(sql)? {
                let n = tx
                    .query_row(&format!("SELECT COUNT(*) FROM {fts_table}"), [], |r| {
                        r.get(0)
                    })
                    .map_err(sql)?;
                tx.execute_batch(&format!("DROP TABLE {fts_table};"))
                    .map_err(sql)?;
                n
            } else {
                0
            };
            tx.execute(
                "INSERT OR IGNORE INTO erasure_in_progress (project) VALUES (?1)",
                [p],
            )
            .map_err(sql)?;
            for t in &scoped {
                if t == "erasure_in_progress" {
                    continue;
                }
                let n = tx
                    .execute(
                        &format!("DELETE FROM \"{t}\" WHERE project = ?1"),
                        params![p],
                    )
                    .map_err(sql)?;
                receipt.rows.insert(t.clone(), n as u64);
            }
            tx.execute("DELETE FROM erasure_in_progress WHERE project = ?1", [p])
                .map_err(sql)?;
            receipt.rows.insert("fts".to_owned(), fts as u64);
            Ok(receipt)
        })
    }
}
