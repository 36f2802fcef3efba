//! The umbrella error of the engine: every subsystem's error converts into it.

use crate::config::ConfigError;
use crate::index::HnswError;
use crate::ledger::LedgerError;
use crate::store::StoreError;

/// Any error of the engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Profile loading or validation.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Vector tiers.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Ledger, governance and cognition (SQLite).
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// HNSW index.
    #[error(transparent)]
    Hnsw(#[from] HnswError),
    /// Hypervector algebra.
    #[error(transparent)]
    Hdv(#[from] hdv::Error),
    /// The profile's semantic model.
    #[error(transparent)]
    Model(#[from] crate::semantic::ModelError),
}

/// Result alias of the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;
