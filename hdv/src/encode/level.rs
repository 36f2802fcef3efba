use crate::error::{Error, Result};
use crate::hypervector::{Dim, Hypervector};
use crate::rng::SeededRng;

/// Level (thermometer) encoder for scalars: `L` levels over `[min, max]`; level 0 is a random
/// vector and level `j` flips the first `round(j * (D/2) / (L-1))` positions of a fixed
/// random order. Distance therefore grows linearly with the level gap, from 0 to `D/2`
/// between the extremes (which are unrelated), so near values have near vectors.
#[derive(Debug, Clone)]
pub struct LevelEncoder {
    min: f64,
    max: f64,
    levels: usize,
    base: Hypervector,
    order: Vec<u32>,
}

impl LevelEncoder {
    /// An encoder of `levels >= 2` levels over `[min, max]`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `levels < 2`, `levels > D/2 + 1`, or the range is not
    /// finite and increasing.
    pub fn new(dim: Dim, min: f64, max: f64, levels: usize, seed: u64) -> Result<Self> {
        if !(min.is_finite() && max.is_finite() && min < max) {
            return Err(Error::InvalidParameter {
                name: "range",
                reason: format!("need finite min < max, got [{min}, {max}]"),
            });
        }
        if levels < 2 || levels > dim.bits() / 2 + 1 {
            return Err(Error::InvalidParameter {
                name: "levels",
                reason: format!(
                    "need 2 <= levels <= D/2 + 1 = {}, got {levels}",
                    dim.bits() / 2 + 1
                ),
            });
        }
        let mut rng = SeededRng::new(seed);
        let base = Hypervector::random_from(dim, &mut rng);
        // Fisher-Yates over bit positions; only the first D/2 are ever used.
        let mut order: Vec<u32> = (0..dim.bits() as u32).collect();
        for i in (1..order.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            order.swap(i, j);
        }
        order.truncate(dim.bits() / 2);
        Ok(Self {
            min,
            max,
            levels,
            base,
            order,
        })
    }

    /// Number of levels.
    pub fn levels(&self) -> usize {
        self.levels
    }

    /// The level of `x` (values outside the range are clamped to the extremes).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for NaN.
    pub fn level_of(&self, x: f64) -> Result<usize> {
        if x.is_nan() {
            return Err(Error::InvalidParameter {
                name: "x",
                reason: "cannot encode NaN".to_owned(),
            });
        }
        let t = ((x - self.min) / (self.max - self.min)).clamp(0.0, 1.0);
        Ok((t * (self.levels - 1) as f64).round() as usize)
    }

    /// The vector of level `j`.
    ///
    /// # Panics
    /// If `j >= levels`.
    pub fn level(&self, j: usize) -> Hypervector {
        assert!(j < self.levels, "level {j} out of range 0..{}", self.levels);
        let flips = (j * self.order.len() + (self.levels - 1) / 2) / (self.levels - 1);
        let mut hv = self.base.clone();
        for &pos in &self.order[..flips] {
            let pos = pos as usize;
            hv.set_bit(pos, !hv.bit(pos));
        }
        hv
    }

    /// The vector of the level nearest to `x`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for NaN.
    pub fn encode(&self, x: f64) -> Result<Hypervector> {
        Ok(self.level(self.level_of(x)?))
    }
}
