//! # hypermem
//!
//! Governed long-term memory for AI agents on a SIMD hyperdimensional-computing core.
//! This crate is the engine; the hypervector algebra is the [`hdv`] crate, re-exported here.
//!
//! The deployment profile is chosen at build time by cargo feature: `lite` (default,
//! embedded), `standard` (adds a Redis warm tier) or `scale` (adds Qdrant). See
//! `docs/ARCHITECTURE.md`.

#![deny(missing_docs)]
#![deny(unsafe_code)]

pub use hdv;

pub mod api;
pub mod base;
pub mod clock;
pub mod cognition;
pub mod config;
mod error;
pub mod eval;
#[doc(hidden)]
pub mod failpoint;
pub mod governance;
pub mod index;
pub mod input;
pub mod ledger;
mod memory;
pub mod recall;
pub mod semantic;
pub mod store;
mod sync;
pub mod text;

pub use base::{ErrorClass, Reason};
pub use config::{ConfigError, PROFILE, Profile, ProfileKind, QdrantSettings, RedisSettings};
pub use error::{Error, Result};
pub use memory::{
    ConceptSummary, DEFAULT_MAP_LIMIT, DEFERRED_FEEDBACK_LIMIT, EpisodeSummary, FEEDBACK_BATCH,
    ForgetReceipt, Hub, MAX_QUERY_CHARS, MAX_QUERY_TERMS, MAX_RECALL_K, Memory, MemoryMap,
    ProjectStats, RecallItem, RecallQuery, RecallResult, ThreadSummary, TierCensus,
};
pub use recall::query::time_hint;
