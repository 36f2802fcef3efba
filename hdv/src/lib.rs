//! # hdv — binary hyperdimensional computing with SIMD kernels
//!
//! `hdv` is the algebra under hypermem: dense binary hypervectors of a run-time dimension
//! `D` (a multiple of 64, default 8,192) packed into `u64` words, with
//!
//! - **binding** (XOR), **permutation** (cyclic shift), **bundling** (majority over
//!   bit-sliced counters, seeded coin on ties), seeded random vectors and noise;
//! - **Hamming kernels** — scalar, AVX2 and AVX-512 `VPOPCNTDQ` — chosen once at run time
//!   (`HDV_KERNEL` forces one; [`kernel_name`] reports it), applied to one query against a
//!   contiguous [`Block`] of vectors or to a batch of queries, optionally in parallel;
//! - **encoders** for symbols, text, scalars, sequences, role–filler records and dense
//!   embeddings, and a cleanup [`Codebook`].
//!
//! ```
//! use hdv::{Block, Bundler, Dim, Hypervector, Scan};
//!
//! let dim = Dim::new(8192)?;
//! let (role, filler) = (Hypervector::random(dim, 1), Hypervector::random(dim, 2));
//! let bound = role.bind(&filler);
//! assert_eq!(bound.bind(&role), filler); // XOR is self-inverse
//!
//! // A memory of 1,000 items searched exactly for a noisy probe.
//! let items: Vec<u64> = (0..1000).flat_map(|s| Hypervector::random(dim, s).into_words()).collect();
//! let block = Block::new(&items, dim)?;
//! let probe = Hypervector::random(dim, 123).with_noise(0.3, 9)?;
//! let hits = Scan::new(5).top_k(&block, &probe)?;
//! assert_eq!(hits[0].index, 123);
//! println!("kernel: {}", hdv::kernel_name());
//! # Ok::<(), hdv::Error>(())
//! ```
//!
//! No I/O happens in this crate; `unsafe` is confined to [`kernels`].

#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

mod bundle;
mod cleanup;
pub mod encode;
mod error;
pub mod fasthash;
mod hypervector;
pub mod kernels;
mod resonator;
mod rng;
mod search;
mod words;

pub use bundle::{Bundler, bundle};
pub use cleanup::{Codebook, Match};
pub use error::{Error, Result};
pub use hypervector::{AsHv, DEFAULT_DIM, Dim, HvRef, Hypervector, sample_bit_mask};
pub use kernels::{Kernel, KernelKind};
pub use resonator::{Factorization, Resonator};
pub use rng::{SeededRng, mix64};
pub use search::{Block, BlockBuf, Neighbor, Scan, TopK};
pub use words::WordBuf;

/// Name of the kernel tier this process uses (`scalar`, `avx2` or `avx512`).
///
/// # Panics
/// If `HDV_KERNEL` names an unknown tier or one this CPU cannot run.
pub fn kernel_name() -> &'static str {
    kernels::active().name()
}
