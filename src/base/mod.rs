//! The base types every layer names: project and vector ids, what a vector search asks and
//! answers, a read-only mapped file, the stable error reasons and their classes, and a time
//! argument, the `names!` macro that declares the closed sets of names results carry, and the
//! `number_id!` macro that declares the numeric identifiers of the ledger's records.
//! A leaf: it imports nothing of the crate.

mod ids;
mod mapped;
mod names;
mod reason;
mod search;
mod time;

pub(crate) use ids::number_id;
pub use ids::{InvalidProject, ProjectId, VectorId};
pub use mapped::MappedFile;
pub(crate) use names::names;
pub use reason::{ErrorClass, Reason};
pub use search::{Hit, SearchRequest};
pub use time::{TIME_RANGE_MS, Time};
