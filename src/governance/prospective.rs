//! Prospective memory: intentions, commitments, reminders, open loops and plans. hypermem
//! stores and reports them; it never executes anything. An item becomes active
//! (`confirmed`) only through a later, distinct, explicitly affirmative **user** event of
//! the same project, and one event can confirm only one item.

use rusqlite::{OptionalExtension, Row, params};

use crate::base::ProjectId;
use crate::ledger::{EventId, Ledger, LedgerError, LedgerResult, Role};

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

crate::base::number_id!(
    /// Identifier of a prospective item.
    ProspectiveId
);

/// One transition of a prospective item, as recorded.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct ProspectiveChange {
    /// When (ms, ledger clock).
    pub at: i64,
    /// The operation: `propose`, `confirm`, `defer`, `complete`, `reject`, `expire`.
    pub op: String,
    /// Status before (`None` for the proposal).
    pub from: Option<ProspectiveStatus>,
    /// Status after.
    pub to: ProspectiveStatus,
    /// The event of the operation (the source event, the confirming event).
    pub event: Option<EventId>,
    /// The due time after the operation.
    pub due_at: Option<i64>,
}

/// A prospective item.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, thiserror::Error)]
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
    /// The confirming event is the item's own source event: an item cannot confirm itself.
    #[error("event {event} is the item's own source event; confirmation needs a later user event")]
    ConfirmedBySourceEvent {
        /// The event.
        event: EventId,
    },
    /// The confirming event is earlier than the item's source event.
    #[error("event {event} is earlier than the item's source event {source_event}")]
    EarlierThanSourceEvent {
        /// The event.
        event: EventId,
        /// The item's source event.
        source_event: EventId,
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

impl ProspectiveRefusal {
    /// Its stable reason (the `reason` tag it serializes with).
    pub fn reason(&self) -> crate::base::Reason {
        use crate::base::Reason as R;
        match self {
            ProspectiveRefusal::UnknownItem { .. } => R::UnknownItem,
            ProspectiveRefusal::NotUserEvent { .. } => R::NotUserEvent,
            ProspectiveRefusal::ConfirmedBySourceEvent { .. } => R::ConfirmedBySourceEvent,
            ProspectiveRefusal::EarlierThanSourceEvent { .. } => R::EarlierThanSourceEvent,
            ProspectiveRefusal::NotAffirmative { .. } => R::NotAffirmative,
            ProspectiveRefusal::EventAlreadyUsed { .. } => R::EventAlreadyUsed,
            ProspectiveRefusal::InvalidTransition { .. } => R::InvalidTransition,
        }
    }
}

/// Whether `text` explicitly affirms: it contains an affirmation (`yes`, `go ahead`, ...)
/// and no negation or hedge (`no`, `not`, `don't`, `…n't`, `cancel`, `wait`, ...). Deliberately
/// conservative: anything ambiguous does not confirm.
pub fn is_affirmative(text: &str) -> bool {
    let tokens: Vec<String> = crate::text::words(text)
        .into_iter()
        .map(|t| t.replace('’', "'"))
        .collect();
    if tokens
        .iter()
        .any(|t| crate::text::en::CONFIRMATION_HOLDS.contains(&t.as_str()) || t.ends_with("n't"))
    {
        return false;
    }
    let joined = format!(" {} ", tokens.join(" "));
    crate::text::en::AFFIRMATIONS
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

/// Records one transition in the item's history (inside the transition's transaction).
fn record(
    tx: &rusqlite::Connection,
    item: &ProspectiveItem,
    op: &str,
    from: Option<ProspectiveStatus>,
    event: Option<EventId>,
    at: i64,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO prospective_history (project, item_id, at, op, from_status, to_status, event_id, due_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        item.project,
        item.id.0 as i64,
        at,
        op,
        from.map(|s| s.as_str()),
        item.status.as_str(),
        event.map(|e| e.0 as i64),
        item.due_at,
    ])
    .map(|_| ())
}

impl Ledger {
    /// Records a pending item created by `source_event` (an event of the same project).
    /// Proposing again from the same source event returns the item it created (the same
    /// kind and text, whatever its status), and a rejected item of that kind from that
    /// event stands: the user's refusal is not undone by re-proposing.
    ///
    /// # Errors
    /// [`LedgerError::UnknownEvent`] / [`LedgerError::CrossProject`] for a bad source event;
    /// an empty text is `invalid_argument`.
    pub fn propose_prospective(
        &self,
        project: &ProjectId,
        kind: ProspectiveKind,
        text: &str,
        source_event: EventId,
        due_at: Option<i64>,
    ) -> LedgerResult<ProspectiveItem> {
        if text.trim().is_empty() {
            return Err(LedgerError::Invalid {
                what: "prospective text",
                reason: "it is empty".to_owned(),
            });
        }
        let now = self.now_ms();
        let normalized = crate::governance::normalize_statement(text);
        let id = self.write(|tx| {
            let owner: Option<String> = tx
                .query_row("SELECT project FROM events WHERE id = ?1", [source_event.0 as i64], |r| r.get(0))
                .optional()
                .map_err(|e| self.sql(e))?;
            // An event of another project is answered as one that does not exist: a
            // project learns nothing of another's ids.
            if owner.as_deref() != Some(project.as_str()) {
                return Err(LedgerError::UnknownEvent(source_event));
            }
            let earlier: Vec<ProspectiveItem> = tx
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM prospective WHERE project = ?1 AND source_event = ?2 AND kind = ?3 ORDER BY id"
                ))
                .and_then(|mut st| {
                    st.query_map(params![project.as_str(), source_event.0 as i64, kind.as_str()], row_to_item)?
                        .collect()
                })
                .map_err(|e| self.sql(e))?;
            if let Some(same) = earlier.iter().find(|i| {
                i.status == ProspectiveStatus::Rejected
                    || crate::governance::normalize_statement(&i.text) == normalized
            }) {
                return Ok(same.id.0 as i64);
            }
            tx.execute(
                "INSERT INTO prospective (project, kind, text, status, source_event, due_at, created_at, updated_at)
                 VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?6)",
                params![project.as_str(), kind.as_str(), text, source_event.0 as i64, due_at, now],
            )
            .map_err(|e| self.sql(e))?;
            let id = tx.last_insert_rowid();
            let item = self
                .load_item(tx, project, ProspectiveId(id as u64))?
                .ok_or(LedgerError::UnknownEvent(source_event))?;
            record(tx, &item, "propose", None, Some(source_event), now).map_err(|e| self.sql(e))?;
            Ok(id)
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

    /// One item and its history (oldest first), or the refusal naming why there is none
    /// (`unknown_item`, `project_boundary_violation`).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn prospective_history(
        &self,
        project: &ProjectId,
        id: ProspectiveId,
    ) -> LedgerResult<Result<(ProspectiveItem, Vec<ProspectiveChange>), ProspectiveRefusal>> {
        self.read(|c| {
            let Some(item) = self.load_item(c, project, id)? else {
                return Ok(Err(self.missing_item(c, id)?));
            };
            let rows = c
                .prepare_cached(
                    "SELECT at, op, from_status, to_status, event_id, due_at FROM prospective_history
                     WHERE project = ?1 AND item_id = ?2 ORDER BY id",
                )
                .and_then(|mut st| {
                    st.query_map(params![project.as_str(), id.0 as i64], |r| {
                        Ok((
                            r.get::<_, i64>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, Option<String>>(2)?,
                            r.get::<_, String>(3)?,
                            r.get::<_, Option<i64>>(4)?,
                            r.get::<_, Option<i64>>(5)?,
                        ))
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| self.sql(e))?;
            let mut history = Vec::with_capacity(rows.len());
            for (at, op, from, to, event, due_at) in rows {
                history.push(ProspectiveChange {
                    at,
                    op,
                    from: from.as_deref().map(ProspectiveStatus::parse).transpose()?,
                    to: ProspectiveStatus::parse(&to)?,
                    event: event.map(|e| EventId(e as u64)),
                    due_at,
                });
            }
            Ok(Ok((item, history)))
        })
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

    /// `id` is not an item of the project (`unknown_item`): another project's item is
    /// answered as one that does not exist, so a project learns nothing of another's ids.
    fn missing_item(
        &self,
        _: &rusqlite::Connection,
        id: ProspectiveId,
    ) -> LedgerResult<ProspectiveRefusal> {
        Ok(ProspectiveRefusal::UnknownItem { item: id.0 })
    }

    /// Confirms a pending item by a user event: same project, later than and distinct
    /// from the item's source event, explicitly affirmative, not used to confirm another
    /// item.
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
            return Err(LedgerError::UnknownEvent(event));
        };
        let now = self.now_ms();
        self.write(|tx| {
            let Some(item) = self.load_item(tx, project, id)? else {
                return Ok(Err(self.missing_item(tx, id)?));
            };
            // Pending, or deferred before it was ever confirmed (recorded by older builds).
            let unconfirmed = item.status == ProspectiveStatus::Pending
                || (item.status == ProspectiveStatus::Deferred && item.confirmed_by.is_none());
            if !unconfirmed {
                return Ok(Err(ProspectiveRefusal::InvalidTransition { op: "confirm", status: item.status }));
            }
            if ev.role != Role::User {
                return Ok(Err(ProspectiveRefusal::NotUserEvent { event }));
            }
            if event == item.source_event {
                return Ok(Err(ProspectiveRefusal::ConfirmedBySourceEvent { event }));
            }
            if event < item.source_event {
                return Ok(Err(ProspectiveRefusal::EarlierThanSourceEvent { event, source_event: item.source_event }));
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
            let from = item.status;
            let item = ProspectiveItem {
                status: ProspectiveStatus::Confirmed,
                confirmed_by: Some(event),
                ..item
            };
            record(tx, &item, "confirm", Some(from), Some(event), now).map_err(|e| self.sql(e))?;
            Ok(Ok(item))
        })
    }

    /// Applies one state-machine transition ([`ProspectiveStatus`]; see
    /// `docs/ARCHITECTURE.md`): `to` picks the new status from the current item.
    fn transition(
        &self,
        project: &ProjectId,
        id: ProspectiveId,
        op: &'static str,
        to: impl Fn(&ProspectiveItem) -> Option<ProspectiveStatus>,
        due_at: Option<Option<i64>>,
    ) -> ProspectiveResult {
        let now = self.now_ms();
        self.write(|tx| {
            let Some(item) = self.load_item(tx, project, id)? else {
                return Ok(Err(self.missing_item(tx, id)?));
            };
            let Some(status) = to(&item) else {
                return Ok(Err(ProspectiveRefusal::InvalidTransition { op, status: item.status }));
            };
            let due = due_at.unwrap_or(item.due_at);
            tx.execute(
                "UPDATE prospective SET status = ?3, due_at = ?4, updated_at = ?5 WHERE project = ?1 AND id = ?2",
                params![project.as_str(), id.0 as i64, status.as_str(), due, now],
            )
            .map_err(|e| self.sql(e))?;
            let from = item.status;
            let item = ProspectiveItem { status, due_at: due, ..item };
            record(tx, &item, op, Some(from), None, now).map_err(|e| self.sql(e))?;
            Ok(Ok(item))
        })
    }

    /// Postpones an item to `until` (ms). A confirmed (or confirmed-then-deferred) item
    /// becomes `deferred`; a pending item is rescheduled and stays `pending`: deferring
    /// never confirms, so it never puts an unconfirmed item on the due list.
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
            |item| match item.status {
                Pending => Some(Pending),
                Confirmed => Some(Deferred),
                Deferred if item.confirmed_by.is_some() => Some(Deferred),
                Deferred => Some(Pending),
                _ => None,
            },
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
            |item| matches!(item.status, Pending | Confirmed | Deferred).then_some(Rejected),
            None,
        )
    }

    /// Marks a confirmed (or confirmed-then-deferred) item done.
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
            |item| {
                (matches!(item.status, Confirmed | Deferred) && item.confirmed_by.is_some())
                    .then_some(Completed)
            },
            None,
        )
    }

    /// Items that are due at `at` (ms): confirmed, or confirmed and then deferred, with
    /// `due_at <= at`, earliest first. Pending items are not due: they were never
    /// confirmed.
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
                 AND confirmed_by IS NOT NULL AND due_at IS NOT NULL AND due_at <= ?2 ORDER BY due_at, id"
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
                "INSERT INTO prospective_history (project, item_id, at, op, from_status, to_status, event_id, due_at)
                 SELECT project, id, ?2, 'expire', 'pending', 'expired', NULL, due_at FROM prospective
                 WHERE project = ?1 AND status = 'pending' AND due_at IS NOT NULL AND due_at < ?2",
                params![project.as_str(), at],
            )
            .map_err(|e| self.sql(e))?;
            tx.execute(
                "UPDATE prospective SET status = 'expired', updated_at = ?2
                 WHERE project = ?1 AND status = 'pending' AND due_at IS NOT NULL AND due_at < ?2",
                params![project.as_str(), at],
            )
            .map_err(|e| self.sql(e))
        })
    }
}
