//! Prospective memory: intentions, commitments, reminders, open loops and plans. hypermem
//! stores and reports them; it never executes anything. An item becomes active
//! (`confirmed`) only through a later, distinct, explicitly affirmative **user** event of
//! the same project, and one event can confirm only one item.

use rusqlite::{OptionalExtension, Row, params};

use crate::ledger::{EventId, Ledger, LedgerError, LedgerResult, Role};
use crate::store::ProjectId;

crate::ledger::string_enum!(
    /// What kind of future-directed item.
    ProspectiveKind {
        /// Something the user or agent intends to do.
        Intention = "intention",
        /// Something promised.
        Commitment = "commitment",
        /// Something to bring up at a time.
        Reminder = "reminder",
        /// An unresolved question or task.
        OpenLoop = "open_loop",
        /// A multi-step plan.
        Plan = "plan",
    }
);

crate::ledger::string_enum!(
    /// Lifecycle of a prospective item.
    ProspectiveStatus {
        /// Recorded, not yet confirmed.
        Pending = "pending",
        /// Confirmed by a user event: active.
        Confirmed = "confirmed",
        /// Postponed to a new due time.
        Deferred = "deferred",
        /// Refused.
        Rejected = "rejected",
        /// Done.
        Completed = "completed",
        /// Passed its due time unconfirmed.
        Expired = "expired",
    }
);

/// Identifier of a prospective item.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct ProspectiveId(pub u64);

/// A prospective item.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ProspectiveItem {
    /// Id.
    pub id: ProspectiveId,
    /// Project.
    pub project: String,
    /// Kind.
    pub kind: ProspectiveKind,
    /// What it is about.
    pub text: String,
    /// Status.
    pub status: ProspectiveStatus,
    /// The event that created it.
    pub source_event: EventId,
    /// When it is due (ms).
    pub due_at: Option<i64>,
    /// The user event that confirmed it.
    pub confirmed_by: Option<EventId>,
}

/// Why a prospective operation was refused (nothing was written).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, thiserror::Error)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum ProspectiveRefusal {
    /// No such item in this project.
    #[error("unknown prospective item {item}")]
    UnknownItem {
        /// The item id.
        item: u64,
    },
    /// The confirming event is not a user event.
    #[error("event {event} is not a user event")]
    NotUserEvent {
        /// The event.
        event: EventId,
    },
    /// The confirming event is the item's own source event, or earlier.
    #[error("event {event} is not later than the item's source event")]
    NotLater {
        /// The event.
        event: EventId,
    },
    /// The confirming event is not explicitly affirmative (or is negated).
    #[error("event {event} is not an explicit affirmation")]
    NotAffirmative {
        /// The event.
        event: EventId,
    },
    /// The event already confirmed another item.
    #[error("event {event} already confirmed item {item}")]
    EventAlreadyUsed {
        /// The event.
        event: EventId,
        /// The item it confirmed.
        item: u64,
    },
    /// The item's status does not allow the operation.
    #[error("cannot {op} an item in status {status}")]
    InvalidTransition {
        /// The operation.
        op: &'static str,
        /// The current status.
        status: ProspectiveStatus,
    },
}

const AFFIRMATIONS: &[&str] = &[
    "yes",
    "yeah",
    "yep",
    "yup",
    "sure",
    "ok",
    "okay",
    "confirm",
    "confirmed",
    "agreed",
    "absolutely",
    "definitely",
    "correct",
    "please do",
    "go ahead",
    "do it",
    "sounds good",
    "let's do it",
    "that works",
    "approved",
];
const NEGATIONS: &[&str] = &[
    "no", "not", "don't", "dont", "never", "nope", "nah", "cancel", "stop", "without", "neither",
    "nor", "later", "wait", "hold",
];

/// Whether `text` explicitly affirms: it contains an affirmation (`yes`, `go ahead`, ...)
/// and no negation or hedge (`no`, `not`, `don't`, `…n't`, `cancel`, `wait`, ...). Deliberately
/// conservative: anything ambiguous does not confirm.
pub fn is_affirmative(text: &str) -> bool {
    let tokens: Vec<String> = crate::hdv::encode::TextEncoder::tokens(text)
        .into_iter()
        .map(|t| t.replace('’', "'"))
        .collect();
    if tokens
        .iter()
        .any(|t| NEGATIONS.contains(&t.as_str()) || t.ends_with("n't"))
    {
        return false;
    }
    let joined = format!(" {} ", tokens.join(" "));
    AFFIRMATIONS
        .iter()
        .any(|a| joined.contains(&format!(" {a} ")))
}

fn row_to_item(r: &Row<'_>) -> rusqlite::Result<ProspectiveItem> {
    let err = |i: usize, e: LedgerError| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    };
    let kind: String = r.get(2)?;
    let status: String = r.get(4)?;
    Ok(ProspectiveItem {
        id: ProspectiveId(r.get::<_, i64>(0)? as u64),
        project: r.get(1)?,
        kind: ProspectiveKind::parse(&kind).map_err(|e| err(2, e))?,
        text: r.get(3)?,
        status: ProspectiveStatus::parse(&status).map_err(|e| err(4, e))?,
        source_event: EventId(r.get::<_, i64>(5)? as u64),
        due_at: r.get(6)?,
        confirmed_by: r.get::<_, Option<i64>>(7)?.map(|v| EventId(v as u64)),
    })
}

const COLUMNS: &str = "id, project, kind, text, status, source_event, due_at, confirmed_by";

/// Result of a prospective operation: the item, or a named refusal.
pub type ProspectiveResult = LedgerResult<Result<ProspectiveItem, ProspectiveRefusal>>;

impl Ledger {
    /// Records a pending item created by `source_event` (an event of the same project).
    ///
    /// # Errors
    /// [`LedgerError::UnknownEvent`] / [`LedgerError::CrossProject`] for a bad source event.
    pub fn propose_prospective(
        &self,
        project: &ProjectId,
        kind: ProspectiveKind,
        text: &str,
        source_event: EventId,
        due_at: Option<i64>,
    ) -> LedgerResult<ProspectiveItem> {
        let now = self.now_ms();
        let id = self.write(|tx| {
            let owner: Option<String> = tx
                .query_row("SELECT project FROM events WHERE id = ?1", [source_event.0 as i64], |r| r.get(0))
                .optional()
                .map_err(|e| self.sql(e))?;
            match owner {
                None => return Err(LedgerError::UnknownEvent(source_event)),
                Some(p) if p != project.as_str() => {
                    return Err(LedgerError::CrossProject {
                        event: source_event,
                        project: project.to_string(),
                    });
                }
                Some(_) => {}
            }
            tx.execute(
                "INSERT INTO prospective (project, kind, text, status, source_event, due_at, created_at, updated_at)
                 VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?6)",
                params![project.as_str(), kind.as_str(), text, source_event.0 as i64, due_at, now],
            )
            .map_err(|e| self.sql(e))?;
            Ok(tx.last_insert_rowid())
        })?;
        self.prospective(project, ProspectiveId(id as u64))?
            .ok_or(LedgerError::UnknownEvent(source_event))
    }

    /// One item.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn prospective(
        &self,
        project: &ProjectId,
        id: ProspectiveId,
    ) -> LedgerResult<Option<ProspectiveItem>> {
        self.read(|c| self.load_item(c, project, id))
    }

    /// One item, read inside a transaction or on the connection.
    fn load_item(
        &self,
        c: &rusqlite::Connection,
        project: &ProjectId,
        id: ProspectiveId,
    ) -> LedgerResult<Option<ProspectiveItem>> {
        c.query_row(
            &format!("SELECT {COLUMNS} FROM prospective WHERE project = ?1 AND id = ?2"),
            params![project.as_str(), id.0 as i64],
            row_to_item,
        )
        .optional()
        .map_err(|e| self.sql(e))
    }

    /// Confirms an item by a user event: same project, later than and distinct from the
    /// item's source event, explicitly affirmative, not used to confirm another item.
    ///
    /// # Errors
    /// SQLite errors; [`LedgerError::UnknownEvent`] / [`LedgerError::CrossProject`].
    pub fn confirm_prospective(
        &self,
        project: &ProjectId,
        id: ProspectiveId,
        event: EventId,
    ) -> ProspectiveResult {
        let Some(ev) = self.get(project, event)? else {
            return Err(if self.event_exists(event)? {
                LedgerError::CrossProject {
                    event,
                    project: project.to_string(),
                }
            } else {
                LedgerError::UnknownEvent(event)
            });
        };
        let now = self.now_ms();
        self.write(|tx| {
            let Some(item) = self.load_item(tx, project, id)? else {
                return Ok(Err(ProspectiveRefusal::UnknownItem { item: id.0 }));
            };
            if !matches!(item.status, ProspectiveStatus::Pending | ProspectiveStatus::Deferred) {
                return Ok(Err(ProspectiveRefusal::InvalidTransition { op: "confirm", status: item.status }));
            }
            if ev.role != Role::User {
                return Ok(Err(ProspectiveRefusal::NotUserEvent { event }));
            }
            if event <= item.source_event {
                return Ok(Err(ProspectiveRefusal::NotLater { event }));
            }
            if !is_affirmative(&ev.content) {
                return Ok(Err(ProspectiveRefusal::NotAffirmative { event }));
            }
            let used: Option<i64> = tx
                .query_row("SELECT id FROM prospective WHERE confirmed_by = ?1", [event.0 as i64], |r| r.get(0))
                .optional()
                .map_err(|e| self.sql(e))?;
            if let Some(other) = used {
                return Ok(Err(ProspectiveRefusal::EventAlreadyUsed { event, item: other as u64 }));
            }
            tx.execute(
                "UPDATE prospective SET status = 'confirmed', confirmed_by = ?3, updated_at = ?4 WHERE project = ?1 AND id = ?2",
                params![project.as_str(), id.0 as i64, event.0 as i64, now],
            )
            .map_err(|e| self.sql(e))?;
            Ok(Ok(ProspectiveItem {
                status: ProspectiveStatus::Confirmed,
                confirmed_by: Some(event),
                ..item
            }))
        })
    }

    fn event_exists(&self, event: EventId) -> LedgerResult<bool> {
        self.read(|c| {
            c.query_row(
                "SELECT 1 FROM events WHERE id = ?1",
                [event.0 as i64],
                |_| Ok(()),
            )
            .optional()
            .map(|o| o.is_some())
            .map_err(|e| self.sql(e))
        })
    }

    fn transition(
        &self,
        project: &ProjectId,
        id: ProspectiveId,
        op: &'static str,
        from: &[ProspectiveStatus],
        to: ProspectiveStatus,
        due_at: Option<Option<i64>>,
    ) -> ProspectiveResult {
        let now = self.now_ms();
        self.write(|tx| {
            let Some(item) = self.load_item(tx, project, id)? else {
                return Ok(Err(ProspectiveRefusal::UnknownItem { item: id.0 }));
            };
            if !from.contains(&item.status) {
                return Ok(Err(ProspectiveRefusal::InvalidTransition { op, status: item.status }));
            }
            let due = due_at.unwrap_or(item.due_at);
            tx.execute(
                "UPDATE prospective SET status = ?3, due_at = ?4, updated_at = ?5 WHERE project = ?1 AND id = ?2",
                params![project.as_str(), id.0 as i64, to.as_str(), due, now],
            )
            .map_err(|e| self.sql(e))?;
            Ok(Ok(ProspectiveItem { status: to, due_at: due, ..item }))
        })
    }

    /// Postpones an item to `until` (ms).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn defer_prospective(
        &self,
        project: &ProjectId,
        id: ProspectiveId,
        until: i64,
    ) -> ProspectiveResult {
        use ProspectiveStatus::*;
        self.transition(
            project,
            id,
            "defer",
            &[Pending, Confirmed, Deferred],
            Deferred,
            Some(Some(until)),
        )
    }

    /// Refuses an item.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn reject_prospective(&self, project: &ProjectId, id: ProspectiveId) -> ProspectiveResult {
        use ProspectiveStatus::*;
        self.transition(
            project,
            id,
            "reject",
            &[Pending, Confirmed, Deferred],
            Rejected,
            None,
        )
    }

    /// Marks a confirmed (or deferred) item done.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn complete_prospective(
        &self,
        project: &ProjectId,
        id: ProspectiveId,
    ) -> ProspectiveResult {
        use ProspectiveStatus::*;
        self.transition(
            project,
            id,
            "complete",
            &[Confirmed, Deferred],
            Completed,
            None,
        )
    }

    /// Items that are due at `at` (ms): confirmed or deferred, with `due_at <= at`, earliest
    /// first. Pending items are not due: they were never confirmed.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn due_prospective(
        &self,
        project: &ProjectId,
        at: i64,
    ) -> LedgerResult<Vec<ProspectiveItem>> {
        self.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM prospective WHERE project = ?1 AND status IN ('confirmed', 'deferred')
                 AND due_at IS NOT NULL AND due_at <= ?2 ORDER BY due_at, id"
            ))
            .and_then(|mut s| s.query_map(params![project.as_str(), at], row_to_item)?.collect())
            .map_err(|e| self.sql(e))
        })
    }

    /// Marks pending items whose due time passed before `at` as expired; returns how many.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn expire_prospective(&self, project: &ProjectId, at: i64) -> LedgerResult<usize> {
        self.write(|tx| {
            tx.execute(
                "UPDATE prospective SET status = 'expired', updated_at = ?2
                 WHERE project = ?1 AND status = 'pending' AND due_at IS NOT NULL AND due_at < ?2",
                params![project.as_str(), at],
            )
            .map_err(|e| self.sql(e))
        })
    }
}
