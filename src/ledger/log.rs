//! The event log's contract: what the engine asks of the ledger's append-only events,
//! as one trait with a backend per store — SQLite ([`Ledger`], lite and standard) and
//! PostgreSQL ([`super::postgres::PgEngine`], feature `postgres`). The contract suite
//! (`tests/ledger_contract.rs`) runs the same assertions on both.
//!
//! The contract: an append of a batch is atomic (every event, or on any refusal none);
//! ids grow with append order across the whole log and never repeat; within a project,
//! each named thread and session numbers its events 1, 2, … and each event links to the
//! previous event of its thread (else of its session); a parent must be an event of the
//! same project (another project's is answered as unknown); a `source_id` is unique
//! within its project; content over the configured limit, empty content and a
//! non-finite ordering confidence are refused before anything is written; projects never
//! see each other's events.

use super::{Event, EventId, Ledger, LedgerResult, NewEvent};
use crate::base::ProjectId;

/// The append-only events of a ledger, whichever store holds them.
pub trait EventLog: Send + Sync {
    /// Which store holds the log ("sqlite", "postgres").
    fn backend(&self) -> &'static str;

    /// Appends `events` in one transaction: all of them, or (on any error) none. Their
    /// ids, in order.
    ///
    /// # Errors
    /// [`super::LedgerError::ContentTooLarge`], [`super::LedgerError::Invalid`] (empty
    /// content, a non-finite ordering confidence, a duplicate `source_id`),
    /// [`super::LedgerError::UnknownEvent`] for a parent that is not in the project, the
    /// store's failures.
    fn append_batch(&self, events: &[NewEvent]) -> LedgerResult<Vec<EventId>>;

    /// The event `id` of `project` (`None` if absent or of another project).
    ///
    /// # Errors
    /// The store's failures.
    fn get(&self, project: &ProjectId, id: EventId) -> LedgerResult<Option<Event>>;

    /// The log's sequence: the highest event id it has committed, in any project (0 when
    /// nothing was ever appended). The id a write returns is its sequence, so a reader that
    /// finds the sequence at or above it sees that write.
    ///
    /// # Errors
    /// The store's failures.
    fn sequence(&self) -> LedgerResult<u64>;

    /// The newest event id of `project`, if it has any.
    ///
    /// # Errors
    /// The store's failures.
    fn last_id(&self, project: &ProjectId) -> LedgerResult<Option<EventId>>;

    /// How many events `project` holds.
    ///
    /// # Errors
    /// The store's failures.
    fn count(&self, project: &ProjectId) -> LedgerResult<u64>;

    /// Up to `limit` events of `project` with ids above `after` (from the first with
    /// `None`), oldest first: what a reader catching up with the log reads.
    ///
    /// # Errors
    /// The store's failures.
    fn after(
        &self,
        project: &ProjectId,
        after: Option<EventId>,
        limit: usize,
    ) -> LedgerResult<Vec<Event>>;
}

impl EventLog for Ledger {
    fn backend(&self) -> &'static str {
        Ledger::backend(self)
    }

    fn append_batch(&self, events: &[NewEvent]) -> LedgerResult<Vec<EventId>> {
        Ledger::append_batch(self, events)
    }

    fn get(&self, project: &ProjectId, id: EventId) -> LedgerResult<Option<Event>> {
        Ledger::get(self, project, id)
    }

    fn sequence(&self) -> LedgerResult<u64> {
        Ledger::sequence(self)
    }

    fn last_id(&self, project: &ProjectId) -> LedgerResult<Option<EventId>> {
        Ledger::last_id(self, project)
    }

    fn count(&self, project: &ProjectId) -> LedgerResult<u64> {
        Ledger::count(self, project)
    }

    fn after(
        &self,
        project: &ProjectId,
        after: Option<EventId>,
        limit: usize,
    ) -> LedgerResult<Vec<Event>> {
        self.events_after(project, after, limit)
    }
}
