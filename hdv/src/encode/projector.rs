use crate::error::{Error, Result};
use crate::hypervector::{Dim, Hypervector};
use crate::rng::SeededRng;

/// Sign random projection of dense `f32` embeddings to bits: bit `i` is
/// `h_i · x >= 0` for `D` seeded Gaussian hyperplanes `h_i`. Two inputs at angle θ then
/// differ in each bit with probability θ/π, so Hamming distance estimates angle and the
/// angular order of neighbours is preserved (Charikar 2002).
#[derive(Debug, Clone)]
pub struct Projector {
    input: usize,
    dim: Dim,
    /// Row-major `D × input` hyperplane normals.
    planes: Vec<f32>,
}

impl Projector {
    /// A projector from `input`-dimensional embeddings to `dim` bits.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `input == 0`.
    pub fn new(input: usize, dim: Dim, seed: u64) -> Result<Self> {
        if input == 0 {
            return Err(Error::InvalidParameter {
                name: "input",
                reason: "embedding dimension must be positive".to_owned(),
            });
        }
        let mut rng = SeededRng::new(seed);
        let n = input * dim.bits();
        let mut planes = Vec::with_capacity(n + 1);
        while planes.len() < n {
            let (a, b) = rng.gaussian_pair();
            planes.push(a as f32);
            planes.push(b as f32);
        }
        planes.truncate(n);
        Ok(Self { input, dim, planes })
    }

    /// The embedding dimension this projector accepts.
    pub fn input_dim(&self) -> usize {
        self.input
    }

    /// The output dimension.
    pub fn dim(&self) -> Dim {
        self.dim
    }

    /// Projects one embedding.
    ///
    /// # Errors
    /// [`Error::EmbeddingLength`] for a wrong length,
    /// [`Error::InvalidParameter`] for NaN or infinite components.
    pub fn project(&self, embedding: &[f32]) -> Result<Hypervector> {
        if embedding.len() != self.input {
            return Err(Error::EmbeddingLength {
                expected: self.input,
                found: embedding.len(),
            });
        }
        if let Some(i) = embedding.iter().position(|x| !x.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "embedding",
                reason: format!("component {i} is not finite"),
            });
        }
        let mut hv = Hypervector::zeros(self.dim);
        for (i, row) in self.planes.chunks_exact(self.input).enumerate() {
            let dot: f32 = row.iter().zip(embedding).map(|(a, b)| a * b).sum();
            if dot >= 0.0 {
                hv.set_bit(i, true);
            }
        }
        Ok(hv)
    }
}
