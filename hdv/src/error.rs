//! The error type of the `hdv` crate.

/// Result alias used throughout `hdv`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong when building or combining hypervectors from untrusted input.
///
/// Programmer errors on already-validated values (for example binding two vectors of
/// different dimensions) panic instead, and say so in a `# Panics` section.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A dimension of zero bits was requested.
    #[error("dimension must be positive, got 0 bits")]
    ZeroDimension,
    /// The dimension is not a multiple of 64 bits.
    #[error("dimension must be a multiple of 64 bits, got {bits}")]
    DimensionNotMultipleOf64 {
        /// The rejected dimension in bits.
        bits: usize,
    },
    /// Two operands (or an operand and a container) disagree on the dimension.
    #[error("dimension mismatch: expected {expected} bits, found {found} bits")]
    DimensionMismatch {
        /// Dimension in bits that was required.
        expected: usize,
        /// Dimension in bits that was supplied.
        found: usize,
    },
    /// A word slice does not hold a whole number of vectors.
    #[error("a block of {words}-word vectors cannot hold {len} words (not a multiple)")]
    RaggedBlock {
        /// Number of words supplied.
        len: usize,
        /// Words per vector.
        words: usize,
    },
    /// A dense embedding has the wrong number of components.
    #[error("embedding has {found} components, the projector expects {expected}")]
    EmbeddingLength {
        /// Components the projector was built for.
        expected: usize,
        /// Components supplied.
        found: usize,
    },
    /// A bundle was binarized without any input.
    #[error("cannot binarize an empty bundle (no vectors were added)")]
    EmptyBundle,
    /// A parameter is outside its valid range.
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter {
        /// Name of the parameter.
        name: &'static str,
        /// What was wrong and what was expected.
        reason: String,
    },
    /// `HDV_KERNEL` names a kernel that does not exist or this CPU cannot run.
    #[error("HDV_KERNEL={requested:?}: {reason}")]
    UnavailableKernel {
        /// The value of the environment variable.
        requested: String,
        /// Why it cannot be used.
        reason: String,
    },
}
