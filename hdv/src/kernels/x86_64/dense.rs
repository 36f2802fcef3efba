//! The AVX2 + FMA + F16C dense-layer kernel ([`crate::kernels::dense`]).

use std::arch::x86_64::{
    __m128i, __m256, _mm_add_ps, _mm_cvtss_f32, _mm_hadd_ps, _mm_loadu_si128,
    _mm256_castps256_ps128, _mm256_cvtph_ps, _mm256_extractf128_ps, _mm256_fmadd_ps,
    _mm256_loadu_ps, _mm256_setzero_ps,
};

use crate::kernels::dense::{Shape, Weights};

/// Whether this CPU can run it: AVX2, FMA and F16C.
pub(crate) fn supported() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("f16c")
}

/// `out = x Wᵀ + b`.
///
/// # Safety
/// The CPU has AVX2, FMA and F16C ([`supported`]); the operands suit
/// ([`crate::kernels::dense::suits`]).
#[target_feature(enable = "avx2,fma,f16c")]
pub(crate) unsafe fn linear(
    x: &[f32],
    weights: Weights<'_>,
    bias: &[f32],
    shape: Shape,
    out: &mut [f32],
) {
    match weights {
        // SAFETY: the caller's promise is passed on.
        Weights::F16(w) => unsafe { linear_by::<u16>(x, w, bias, shape, out) },
        // SAFETY: the caller's promise is passed on.
        Weights::F32(w) => unsafe { linear_by::<f32>(x, w, bias, shape, out) },
    }
}

/// A weight element loaded eight at a time as `f32` lanes.
trait Lanes: Copy {
    /// Eight values from `chunk`.
    ///
    /// # Safety
    /// The CPU has AVX2, FMA and F16C (`u16` is read as IEEE half precision).
    unsafe fn load(chunk: &[Self; 8]) -> __m256;
}

impl Lanes for f32 {
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn load(chunk: &[f32; 8]) -> __m256 {
        // SAFETY: `chunk` holds 8 floats.
        unsafe { _mm256_loadu_ps(chunk.as_ptr()) }
    }
}

impl Lanes for u16 {
    #[inline]
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn load(chunk: &[u16; 8]) -> __m256 {
        // SAFETY: `chunk` holds 8 halves (16 bytes); F16C is the caller's promise.
        unsafe { _mm256_cvtph_ps(_mm_loadu_si128(chunk.as_ptr().cast::<__m128i>())) }
    }
}

/// Two output columns at a time, each pair of weight rows read once and applied to every
/// row of `x` in blocks of up to four (eight independent accumulators).
///
/// # Safety
/// As [`linear`].
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn linear_by<W: Lanes>(
    x: &[f32],
    weight: &[W],
    bias: &[f32],
    shape: Shape,
    out: &mut [f32],
) {
    let Shape { input, output } = shape;
    let rows: Vec<&[f32]> = x.chunks_exact(input).collect();
    for (pair, w) in weight.chunks_exact(2 * input).enumerate() {
        let (w0, w1) = w.split_at(input);
        let o = 2 * pair;
        let mut r = 0;
        while r < rows.len() {
            let take = (rows.len() - r).min(4);
            let block = &rows[r..r + take];
            // SAFETY: the caller's promise is passed on.
            let sums: Vec<(f32, f32)> = unsafe {
                match take {
                    4 => dots::<4, W>(block, w0, w1).to_vec(),
                    3 => dots::<3, W>(block, w0, w1).to_vec(),
                    2 => dots::<2, W>(block, w0, w1).to_vec(),
                    _ => dots::<1, W>(block, w0, w1).to_vec(),
                }
            };
            for (i, (a, c)) in sums.into_iter().enumerate() {
                out[(r + i) * output + o] = bias[o] + a;
                out[(r + i) * output + o + 1] = bias[o + 1] + c;
            }
            r += take;
        }
    }
}

/// The dot products of `R` rows with `w0` and with `w1`.
///
/// # Safety
/// As [`linear`].
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn dots<const R: usize, W: Lanes>(rows: &[&[f32]], w0: &[W], w1: &[W]) -> [(f32, f32); R] {
    let (w0, _) = w0.as_chunks::<8>();
    let (w1, _) = w1.as_chunks::<8>();
    let n = w0.len().min(w1.len());
    let xs: [&[[f32; 8]]; R] = std::array::from_fn(|i| &rows[i].as_chunks::<8>().0[..n]);
    let mut a0 = [_mm256_setzero_ps(); R];
    let mut a1 = [_mm256_setzero_ps(); R];
    for k in 0..n {
        // SAFETY: the caller's promise covers `W::load`.
        let (wa, wc) = unsafe { (W::load(&w0[k]), W::load(&w1[k])) };
        for i in 0..R {
            // SAFETY: each chunk holds 8 floats.
            let xv = unsafe { _mm256_loadu_ps(xs[i][k].as_ptr()) };
            a0[i] = _mm256_fmadd_ps(xv, wa, a0[i]);
            a1[i] = _mm256_fmadd_ps(xv, wc, a1[i]);
        }
    }
    let mut out = [(0.0, 0.0); R];
    for i in 0..R {
        out[i] = (sum(a0[i]), sum(a1[i]));
    }
    out
}

/// The sum of eight lanes.
#[target_feature(enable = "avx2,fma,f16c")]
fn sum(v: __m256) -> f32 {
    let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let s = _mm_hadd_ps(s, s);
    _mm_cvtss_f32(_mm_hadd_ps(s, s))
}

/// The F16C conversion of eight halves, for tests of the portable one.
///
/// # Safety
/// The CPU has F16C.
#[cfg(test)]
#[target_feature(enable = "avx2,fma,f16c")]
pub(crate) unsafe fn f16_to_f32_x8(h: &[u16; 8]) -> [f32; 8] {
    // SAFETY: the caller's promise.
    let v = unsafe { <u16 as Lanes>::load(h) };
    let mut out = [0.0f32; 8];
    // SAFETY: `out` holds 8 floats.
    unsafe { std::arch::x86_64::_mm256_storeu_ps(out.as_mut_ptr(), v) };
    out
}
