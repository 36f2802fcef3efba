//! A resonator network (Frady, Kent, Olshausen & Sommer, "Resonator networks", Neural
//! Computation 2020): factors a bound product `s = x₁ ⊕ x₂ ⊕ … ⊕ x_F` back into one item
//! of each of F codebooks, without trying the `M^F` combinations.
//!
//! Binary vectors are bipolar ones under `0 ↦ +1, 1 ↦ −1`, where XOR is the element-wise
//! product and majority bundling is the sign of a sum. Each factor keeps an estimate `x̂_f`,
//! initialised to the bundle of its whole codebook; one iteration updates every factor in
//! turn (the paper's ordinary-least-squares-free "OLS-less" update with a sign):
//!
//! 1. unbind the other estimates: `u = s ⊕ (⊕_{g ≠ f} x̂_g)`;
//! 2. score every item of codebook f: `a_m = D − 2·Hamming(u, X_f[m])` (the bipolar dot);
//! 3. `x̂_f = sign(Σ_m a_m · X_f[m])`, a weighted majority with seeded ties.
//!
//! It stops when no estimate changed in an iteration (converged) or after `max_iterations`
//! (reported as not converged, with the best guesses so far). Each factor's answer is the
//! item of largest |a_m|: complementing two estimates leaves their product unchanged, so the
//! dynamics can settle on the complements of two true items (the sign degeneracy of the
//! bipolar model, which Kent et al. resolve the same way); their similarities are then
//! negative. Inside its capacity the answer is the true factorization; outside, the dynamics
//! wander and the report says so.
//!
//! Capacity, measured by `examples/resonator.rs` against the figures published with the
//! paper's reference implementation, is written up in `docs/EXPERIMENTS.md`.

use crate::bundle::Bundler;
use crate::error::{Error, Result};
use crate::hypervector::{AsHv, Dim, HvRef, Hypervector};

/// One factor's codebook: its items, back to back.
#[derive(Debug, Clone)]
struct Book {
    words: Vec<u64>,
    len: usize,
}

/// The outcome of [`Resonator::factor`].
#[derive(Debug, Clone, PartialEq)]
pub struct Factorization {
    /// Per factor, the index of the chosen item in its codebook.
    pub indices: Vec<usize>,
    /// Per factor, the similarity (−1..1) of the unbound product to the chosen item in the
    /// last iteration; negative when the estimate settled on the item's complement (always
    /// for an even number of factors at once, see the module documentation).
    pub similarities: Vec<f64>,
    /// Iterations run.
    pub iterations: usize,
    /// Whether the estimates stopped changing before the iteration bound.
    pub converged: bool,
    /// Whether binding the chosen items reproduces the product exactly.
    pub exact: bool,
}

/// A resonator network over F codebooks of one dimension.
///
/// ```
/// use hdv::{Dim, Hypervector, Resonator};
/// let dim = Dim::new(4096).unwrap();
/// // Three codebooks of 10 random items each (roles, fillers, positions, ...).
/// let books: Vec<Vec<Hypervector>> = (0..3)
///     .map(|f| (0..10).map(|m| Hypervector::random(dim, 100 * f + m)).collect())
///     .collect();
/// let resonator = Resonator::new(&books).unwrap();
/// let product = books[0][4].bind(&books[1][7]).bind(&books[2][1]);
/// let found = resonator.factor(&product, 50, 9).unwrap();
/// assert!(found.converged && found.exact);
/// assert_eq!(found.indices, vec![4, 7, 1]);
/// ```
#[derive(Debug, Clone)]
pub struct Resonator {
    dim: Dim,
    books: Vec<Book>,
}

impl Resonator {
    /// A resonator over `codebooks` (each a non-empty list of items of one dimension).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for no codebook or an empty one,
    /// [`Error::DimensionMismatch`] for items of different dimensions.
    pub fn new<V: AsHv>(codebooks: &[Vec<V>]) -> Result<Self> {
        let dim = codebooks
            .first()
            .and_then(|b| b.first())
            .map(|v| v.as_hv().dim())
            .ok_or_else(|| Error::InvalidParameter {
                name: "codebooks",
                reason: "a resonator needs at least one non-empty codebook".into(),
            })?;
        let mut books = Vec::with_capacity(codebooks.len());
        for (f, items) in codebooks.iter().enumerate() {
            if items.is_empty() {
                return Err(Error::InvalidParameter {
                    name: "codebooks",
                    reason: format!("codebook {f} is empty"),
                });
            }
            let mut words = Vec::with_capacity(items.len() * dim.words());
            for v in items {
                let v = v.as_hv();
                if v.dim() != dim {
                    return Err(Error::DimensionMismatch {
                        expected: dim.bits(),
                        found: v.dim().bits(),
                    });
                }
                words.extend_from_slice(v.words());
            }
            books.push(Book {
                words,
                len: items.len(),
            });
        }
        Ok(Self { dim, books })
    }

    /// The number of factors.
    pub fn factors(&self) -> usize {
        self.books.len()
    }

    /// Factors `product` in at most `max_iterations` iterations; `seed` breaks ties of
    /// the weighted majorities.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] for a product of another dimension.
    pub fn factor(
        &self,
        product: &impl AsHv,
        max_iterations: usize,
        seed: u64,
    ) -> Result<Factorization> {
        self.run(product, max_iterations, seed, false)
    }

    /// [`factor`](Self::factor) from random estimates (seeded by `seed`) instead of the
    /// codebooks' superpositions: a restart that can leave an attractor the default start
    /// falls into, as when the target is itself a superposition of products (a record).
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] for a product of another dimension.
    pub fn factor_from_random(
        &self,
        product: &impl AsHv,
        max_iterations: usize,
        seed: u64,
    ) -> Result<Factorization> {
        self.run(product, max_iterations, seed, true)
    }

    fn run(
        &self,
        product: &impl AsHv,
        max_iterations: usize,
        seed: u64,
        random_start: bool,
    ) -> Result<Factorization> {
        let s = product.as_hv();
        if s.dim() != self.dim {
            return Err(Error::DimensionMismatch {
                expected: self.dim.bits(),
                found: s.dim().bits(),
            });
        }
        let w = self.dim.words();
        let bits = self.dim.bits() as f64;
        let dim = self.dim;
        let item = |book: &Book, m: usize| -> Hypervector {
            HvRef::with_dim(&book.words[m * w..(m + 1) * w], dim)
                .expect("stored items")
                .to_owned()
        };
        // Start from the superposition of every item of each codebook.
        let mut estimates: Vec<Hypervector> = Vec::with_capacity(self.books.len());
        for (f, book) in self.books.iter().enumerate() {
            if random_start {
                estimates.push(Hypervector::random(
                    self.dim,
                    crate::mix64(seed ^ (f as u64).wrapping_mul(0x9e37_79b9)),
                ));
                continue;
            }
            let mut b = Bundler::new(self.dim);
            for m in 0..book.len {
                b.add(&item(book, m));
            }
            estimates.push(b.binarize(seed ^ f as u64)?);
        }
        let mut best = vec![(0usize, 0.0f64); self.books.len()];
        let mut unbound = Hypervector::zeros(self.dim);
        let kernel = crate::kernels::active();
        for iteration in 1..=max_iterations {
            let mut changed = false;
            for f in 0..self.books.len() {
                unbound.words_mut().copy_from_slice(s.words());
                for (g, e) in estimates.iter().enumerate() {
                    if g != f {
                        unbound.bind_assign(e);
                    }
                }
                let book = &self.books[f];
                let mut b = Bundler::new(self.dim);
                let mut top = (0usize, 0i64);
                for m in 0..book.len {
                    let x = item(book, m);
                    let a = self.dim.bits() as i64
                        - 2 * i64::from(kernel.hamming(unbound.words(), x.words()));
                    if a.abs() > top.1.abs() {
                        top = (m, a);
                    }
                    b.add_weighted(&x, a);
                }
                best[f] = (top.0, top.1 as f64 / bits);
                let next = if b.is_empty() {
                    item(book, top.0)
                } else {
                    b.binarize(seed.wrapping_add(iteration as u64 * 31 + f as u64))?
                };
                if next != estimates[f] {
                    changed = true;
                    estimates[f] = next;
                }
            }
            if !changed {
                return Ok(self.report(s, &best, iteration, true));
            }
        }
        Ok(self.report(s, &best, max_iterations, false))
    }

    fn report(
        &self,
        product: HvRef<'_>,
        best: &[(usize, f64)],
        iterations: usize,
        converged: bool,
    ) -> Factorization {
        let w = self.dim.words();
        let mut bound = product.to_owned();
        for (book, &(m, _)) in self.books.iter().zip(best) {
            let x = HvRef::with_dim(&book.words[m * w..(m + 1) * w], self.dim).expect("stored");
            bound.bind_assign(&x);
        }
        Factorization {
            indices: best.iter().map(|b| b.0).collect(),
            similarities: best.iter().map(|b| b.1).collect(),
            iterations,
            converged,
            exact: bound.count_ones() == 0,
        }
    }
}
