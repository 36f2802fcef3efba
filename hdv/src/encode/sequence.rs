use crate::bundle::Bundler;
use crate::error::{Error, Result};
use crate::hypervector::{AsHv, Hypervector};

/// A sequence as a bundle of position-permuted items: `[ρ^0(x_0) + ρ^1(x_1) + …]`.
/// Item `i` can be recovered approximately with [`probe_sequence`]; two sequences sharing
/// items at the same positions are similar. Ties are broken by the coin of `seed`.
///
/// # Errors
/// [`Error::EmptyBundle`] for no items, [`Error::DimensionMismatch`] for mixed dimensions.
pub fn encode_sequence<V: AsHv>(items: &[V], seed: u64) -> Result<Hypervector> {
    let dim = items.first().ok_or(Error::EmptyBundle)?.as_hv().dim();
    let mut b = Bundler::new(dim);
    for (i, item) in items.iter().enumerate() {
        let item = item.as_hv();
        if item.dim() != dim {
            return Err(Error::DimensionMismatch {
                expected: dim.bits(),
                found: item.dim().bits(),
            });
        }
        b.add(&item.to_owned().permute(i));
    }
    b.binarize(seed)
}

/// Undoes the position permutation of slot `i` of a sequence vector; the result is similar to
/// the item stored at position `i` (clean it up with a [`Codebook`](crate::Codebook)).
pub fn probe_sequence(sequence: &Hypervector, i: usize) -> Hypervector {
    sequence.inverse_permute(i)
}

/// An n-gram as a binding of position-permuted items: `ρ^(n-1)(x_0) ⊕ … ⊕ ρ^0(x_(n-1))`.
/// Exact (no noise), order-sensitive, and dissimilar to every item and to other orders.
///
/// # Errors
/// [`Error::EmptyBundle`] for no items, [`Error::DimensionMismatch`] for mixed dimensions.
pub fn encode_ngram<V: AsHv>(items: &[V]) -> Result<Hypervector> {
    let dim = items.first().ok_or(Error::EmptyBundle)?.as_hv().dim();
    let n = items.len();
    let mut out = Hypervector::zeros(dim);
    for (i, item) in items.iter().enumerate() {
        let item = item.as_hv();
        if item.dim() != dim {
            return Err(Error::DimensionMismatch {
                expected: dim.bits(),
                found: item.dim().bits(),
            });
        }
        out.bind_assign(&item.to_owned().permute(n - 1 - i));
    }
    Ok(out)
}
