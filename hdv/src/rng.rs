//! The one seeded random number generator every random choice in `hdv` is drawn from.
//!
//! Stored vectors depend on this stream, so it is part of the on-disk contract
//! (`docs/FORMAT.md`): xoshiro256++ seeded from a `u64` through SplitMix64, exactly as
//! `rand_xoshiro` 0.8 implements `Xoshiro256PlusPlus::seed_from_u64`. A golden test pins
//! the first outputs so a dependency upgrade cannot silently change stored vectors.

use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng as _, SeedableRng as _};

/// A deterministic, seeded pseudo-random stream (xoshiro256++).
#[derive(Debug, Clone)]
pub struct SeededRng(Xoshiro256PlusPlus);

impl SeededRng {
    /// A stream fully determined by `seed`.
    pub fn new(seed: u64) -> Self {
        Self(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    /// The next 64 uniformly random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A uniform integer in `0..n` by Lemire's multiply-shift with rejection (unbiased).
    ///
    /// # Panics
    /// If `n == 0`.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "SeededRng::below(0): empty range");
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// A uniform `f64` in `[0, 1)` with 53 random bits.
    #[inline]
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A pair of independent standard normal deviates (Marsaglia's polar method).
    pub fn gaussian_pair(&mut self) -> (f64, f64) {
        loop {
            let u = 2.0 * self.unit_f64() - 1.0;
            let v = 2.0 * self.unit_f64() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                let f = (-2.0 * s.ln() / s).sqrt();
                return (u * f, v * f);
            }
        }
    }
}

/// SplitMix64 finalizer: a bijective 64-bit mixer used to derive independent sub-seeds
/// (for example the tie-breaking coin of a bundle from a caller's seed).
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_is_pinned() {
        // Golden values: changing them changes every stored random vector.
        let mut rng = SeededRng::new(0);
        let got: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        let mut again = SeededRng::new(0);
        let again: Vec<u64> = (0..3).map(|_| again.next_u64()).collect();
        assert_eq!(got, again);
        assert_eq!(got, GOLDEN_SEED0.to_vec());
    }

    // Cross-checked against an independent implementation of SplitMix64 + xoshiro256++.
    const GOLDEN_SEED0: [u64; 3] = [
        0x5317_5d61_490b_23df,
        0x61da_6f3d_c380_d507,
        0x5c0f_df91_ec9a_7bfc,
    ];

    #[test]
    fn below_is_in_range_and_covers_it() {
        let mut rng = SeededRng::new(7);
        let mut seen = [false; 10];
        for _ in 0..1000 {
            let x = rng.below(10) as usize;
            seen[x] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
