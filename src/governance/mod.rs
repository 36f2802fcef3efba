//! Governance: evidence-backed beliefs with ownership, versions, supersession and validity
//! windows; governance plans validated before any write and applied with their audit rows in
//! one transaction; prospective memory; project erasure. Everything lives in the ledger's
//! SQLite database (one belief store: temporal lookups, recall and promotion read the same
//! rows).

mod plan;
mod prospective;

pub use crate::ledger::ErasureReceipt;
pub use crate::ledger::{Belief, BeliefId, BeliefStatus, Ownership, normalize_statement};
pub use plan::{
    AuditRow, Op, OpOutcome, Plan, PlanOp, PlanOutcome, Rejection, RejectionReason, Transition,
};
pub use prospective::{
    ProspectiveChange, ProspectiveId, ProspectiveItem, ProspectiveKind, ProspectiveRefusal,
    ProspectiveStatus, is_affirmative,
};
