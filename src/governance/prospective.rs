//! Prospective memory: intentions, commitments, reminders, open loops and plans. hypermem
//! stores and reports them; it never executes anything. An item becomes active
//! (`confirmed`) only through a later, distinct, explicitly affirmative **user** event of
//! the same project, and one event can confirm only one item.

use crate::base::ProjectId;
use crate::ledger::rows::{ProspectiveRow, Rows, Transition};
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

/// An item as the ledger stores it.
fn item_of(row: ProspectiveRow) -> LedgerResult<ProspectiveItem> {
    let (id, project, kind, text, status, source_event, due_at, confirmed_by) = row;
    Ok(ProspectiveItem {
        id: ProspectiveId(id),
        project,
        kind: ProspectiveKind::parse(&kind)?,
        text,
        status: ProspectiveStatus::parse(&status)?,
        source_event: EventId(source_event),
        due_at,
        confirmed_by: confirmed_by.map(EventId),
    })
}

/// Result of a prospective operation: the item, or a named refusal.
pub type ProspectiveResult = LedgerResult<Result<ProspectiveItem, ProspectiveRefusal>>;

/// Records one transition in the item's history (inside the transition's transaction).
fn record(
    rows: &dyn Rows,
    item: &ProspectiveItem,
    (op, from): (&str, Option<ProspectiveStatus>),
    event: Option<EventId>,
    at: i64,
) -> LedgerResult<()> {
    rows.record_prospective(
        &item.project,
        &Transition {
            item: item.id.0,
            at,
            op,
            from: from.map(|s| s.as_str()),
            to: item.status.as_str(),
            event: event.map(|e| e.0),
            due_at: item.due_at,
        },
    )
}

/// One item, read inside a transaction or on its own.
fn load_item(
    rows: &dyn Rows,
    project: &ProjectId,
    id: ProspectiveId,
) -> LedgerResult<Option<ProspectiveItem>> {
    rows.prospective_item(project.as_str(), id.0)?
        .map(item_of)
        .transpose()
}

/// `id` is not an item of the project (`unknown_item`): another project's item is
/// answered as one that does not exist, so a project learns nothing of another's ids.
fn missing_item(id: ProspectiveId) -> ProspectiveRefusal {
    ProspectiveRefusal::UnknownItem { item: id.0 }
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
        let p = project.as_str();
        let id = self.writing(|rows| {
            // An event of another project is answered as one that does not exist: a
            // project learns nothing of another's ids.
            if rows.event_project(source_event.0)?.as_deref() != Some(p) {
                return Err(LedgerError::UnknownEvent(source_event));
            }
            let earlier = rows
                .items_from(p, source_event.0, kind.as_str())?
                .into_iter()
                .map(item_of)
                .collect::<LedgerResult<Vec<_>>>()?;
            if let Some(same) = earlier.iter().find(|i| {
                i.status == ProspectiveStatus::Rejected
                    || crate::governance::normalize_statement(&i.text) == normalized
            }) {
                return Ok(same.id);
            }
            let id = ProspectiveId(rows.add_prospective(
                p,
                (kind.as_str(), text),
                source_event.0,
                due_at,
                now,
            )?);
            let item =
                load_item(rows, project, id)?.ok_or(LedgerError::UnknownEvent(source_event))?;
            record(rows, &item, ("propose", None), Some(source_event), now)?;
            Ok(id)
        })?;
        self.prospective(project, id)?
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
        self.reading(|rows| load_item(rows, project, id))
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
        self.reading(|rows| {
            let Some(item) = load_item(rows, project, id)? else {
                return Ok(Err(missing_item(id)));
            };
            let rows = rows.prospective_changes(project.as_str(), id.0)?;
            let mut history = Vec::with_capacity(rows.len());
            for (at, op, from, to, event, due_at) in rows {
                history.push(ProspectiveChange {
                    at,
                    op,
                    from: from.as_deref().map(ProspectiveStatus::parse).transpose()?,
                    to: ProspectiveStatus::parse(&to)?,
                    event: event.map(EventId),
                    due_at,
                });
            }
            Ok(Ok((item, history)))
        })
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
        self.writing(|rows| {
            let Some(item) = load_item(rows, project, id)? else {
                return Ok(Err(missing_item(id)));
            };
            // Pending, or deferred before it was ever confirmed (recorded by older builds).
            let unconfirmed = item.status == ProspectiveStatus::Pending
                || (item.status == ProspectiveStatus::Deferred && item.confirmed_by.is_none());
            if !unconfirmed {
                return Ok(Err(ProspectiveRefusal::InvalidTransition {
                    op: "confirm",
                    status: item.status,
                }));
            }
            if ev.role != Role::User {
                return Ok(Err(ProspectiveRefusal::NotUserEvent { event }));
            }
            if event == item.source_event {
                return Ok(Err(ProspectiveRefusal::ConfirmedBySourceEvent { event }));
            }
            if event < item.source_event {
                return Ok(Err(ProspectiveRefusal::EarlierThanSourceEvent {
                    event,
                    source_event: item.source_event,
                }));
            }
            if !is_affirmative(&ev.content) {
                return Ok(Err(ProspectiveRefusal::NotAffirmative { event }));
            }
            if let Some(other) = rows.confirmed_by(event.0)? {
                return Ok(Err(ProspectiveRefusal::EventAlreadyUsed {
                    event,
                    item: other,
                }));
            }
            rows.confirm_prospective(project.as_str(), id.0, event.0, now)?;
            let from = item.status;
            let item = ProspectiveItem {
                status: ProspectiveStatus::Confirmed,
                confirmed_by: Some(event),
                ..item
            };
            record(rows, &item, ("confirm", Some(from)), Some(event), now)?;
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
        self.writing(|rows| {
            let Some(item) = load_item(rows, project, id)? else {
                return Ok(Err(missing_item(id)));
            };
            let Some(status) = to(&item) else {
                return Ok(Err(ProspectiveRefusal::InvalidTransition {
                    op,
                    status: item.status,
                }));
            };
            let due = due_at.unwrap_or(item.due_at);
            rows.set_prospective(project.as_str(), id.0, (status.as_str(), due), now)?;
            let from = item.status;
            let item = ProspectiveItem {
                status,
                due_at: due,
                ..item
            };
            record(rows, &item, (op, Some(from)), None, now)?;
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
        self.reading(|rows| rows.due_prospective(project.as_str(), at))?
            .into_iter()
            .map(item_of)
            .collect()
    }

    /// Marks pending items whose due time passed before `at` as expired; returns how many.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn expire_prospective(&self, project: &ProjectId, at: i64) -> LedgerResult<usize> {
        self.writing(|rows| rows.expire_prospective(project.as_str(), at))
    }
}
