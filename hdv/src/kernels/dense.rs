//! A dense layer's product for a few rows, `out = x Wᵀ + b`, with the weight matrix read
//! where it lies (`f32`, or IEEE half precision as a sentence model stores it): the
//! matrix kernel of `hypermem`'s local sentence model, under the same dispatch and
//! `HDV_KERNEL` override as the Hamming kernels. The scalar tier runs the portable
//! reference ([`linear_scalar`]); the AVX2 and AVX-512 tiers run the AVX2 + FMA + F16C
//! kernel where the CPU has FMA and F16C (every CPU with AVX2 has them in practice; both
//! are checked), else the reference.

/// The weights of a dense layer, `output × input`, row-major, as stored.
#[derive(Debug, Clone, Copy)]
pub enum Weights<'a> {
    /// Single precision.
    F32(&'a [f32]),
    /// IEEE 754 half precision, as raw bits.
    F16(&'a [u16]),
}

impl Weights<'_> {
    fn len(&self) -> usize {
        match self {
            Weights::F32(w) => w.len(),
            Weights::F16(w) => w.len(),
        }
    }
}

/// The shape of a dense layer: `input` values in, `output` values out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Values per input row.
    pub input: usize,
    /// Values per output row.
    pub output: usize,
}

/// Whether the kernels take these operands: `x` whole rows of `input`, `out` the same
/// rows of `output`, a weight per input and output, a bias per output, `input` a
/// multiple of 8 and `output` even (the AVX2 kernel reads eight inputs and two outputs
/// at a time; the reference takes the same shapes so both tiers answer alike).
pub(crate) fn suits(
    x: &[f32],
    weights: &Weights<'_>,
    bias: &[f32],
    shape: Shape,
    out: &[f32],
) -> bool {
    let Shape { input, output } = shape;
    input > 0
        && input.is_multiple_of(8)
        && output.is_multiple_of(2)
        && x.len().is_multiple_of(input)
        && out.len() == x.len() / input * output
        && weights.len() == input * output
        && bias.len() == output
}

/// The `f32` value of IEEE half-precision bits `h` (exact: every half is a float).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exponent = u32::from((h >> 10) & 0x1f);
    let mantissa = u32::from(h & 0x3ff);
    let bits = match (exponent, mantissa) {
        (0, 0) => sign,
        // Subnormal: normalise the mantissa into a float's range.
        (0, m) => {
            let shift = m.leading_zeros() - 21;
            let m = (m << shift) & 0x3ff;
            sign | ((127 - 15 + 1 - shift) << 23) | (m << 13)
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// The portable reference: each output the bias plus the dot product of the row with the
/// weight row, accumulated in eight lanes (input `i` into lane `i mod 8`, as the AVX2
/// kernel does; plain code the compiler vectorizes for the baseline CPU) and the lanes
/// summed.
pub(crate) fn linear_scalar(
    x: &[f32],
    weights: Weights<'_>,
    bias: &[f32],
    shape: Shape,
    out: &mut [f32],
) {
    let Shape { input, output } = shape;
    fn dot<W: Copy>(row: &[f32], w: &[W], value: impl Fn(W) -> f32) -> f32 {
        let mut lanes = [0.0f32; 8];
        for (xs, ws) in row.chunks_exact(8).zip(w.chunks_exact(8)) {
            for i in 0..8 {
                lanes[i] += xs[i] * value(ws[i]);
            }
        }
        lanes.iter().sum()
    }
    for (row, o) in x.chunks_exact(input).zip(out.chunks_exact_mut(output)) {
        for (j, value) in o.iter_mut().enumerate() {
            let span = j * input..(j + 1) * input;
            let d = match weights {
                Weights::F32(w) => dot(row, &w[span], |v| v),
                Weights::F16(w) => dot(row, &w[span], f16_to_f32),
            };
            *value = bias[j] + d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_reads_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x03ff), 1023.0 * 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x8000).to_bits(), 0x8000_0000);
    }

    /// Every one of the 65,536 halves converts as the CPU's F16C does, bit for bit (NaNs
    /// as NaNs), where the CPU has it.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_half_converts_as_f16c_does() {
        if !crate::kernels::x86_64::dense::supported() {
            eprintln!(
                "SKIPPED: no F16C on this CPU: the portable conversion is checked by value only"
            );
            return;
        }
        for base in (0..=u16::MAX).step_by(8) {
            let halves: [u16; 8] = std::array::from_fn(|i| base + i as u16);
            // SAFETY: F16C was detected above.
            let cpu = unsafe { crate::kernels::x86_64::dense::f16_to_f32_x8(&halves) };
            for (h, c) in halves.iter().zip(cpu) {
                let ours = f16_to_f32(*h);
                assert!(
                    ours.to_bits() == c.to_bits() || (ours.is_nan() && c.is_nan()),
                    "{h:#06x}: {ours} vs {c}"
                );
            }
        }
    }

    #[test]
    fn operands_that_do_not_fit_are_refused_and_nothing_is_written() {
        let k = crate::kernels::Kernel::scalar();
        let x = [1.0f32; 16];
        let w = [0.5f32; 16];
        let mut out = [f32::NAN; 2];
        // input 8, output 2, two rows: out must hold 4.
        let shape = Shape {
            input: 8,
            output: 2,
        };
        assert!(!k.linear(&x, Weights::F32(&w), &[0.0, 0.0], shape, &mut out));
        assert!(out.iter().all(|v| v.is_nan()));
        // input not a multiple of 8.
        let shape = Shape {
            input: 4,
            output: 4,
        };
        let mut out = [f32::NAN; 16];
        assert!(!k.linear(&x, Weights::F32(&w), &[0.0; 4], shape, &mut out));
        // Fits: each output is 8 × 0.5 plus its bias.
        let shape = Shape {
            input: 8,
            output: 2,
        };
        let mut out = [f32::NAN; 4];
        assert!(k.linear(&x, Weights::F32(&w), &[1.0, -1.0], shape, &mut out));
        assert_eq!(out, [5.0, 3.0, 5.0, 3.0]);
    }
}
