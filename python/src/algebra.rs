//! `hypermem.hdv`: binary hypervectors as NumPy `uint64` arrays, one vector per row of
//! `D/64` words (shape `(n, D/64)`, or `(D/64,)` for one vector), bit `i` of a vector
//! being bit `i % 64` of word `i / 64`, as `hdv` stores them.
//!
//! No copy in: an argument array that is C-contiguous `uint64` is read where it lies
//! ([`words_address`] shows it), as is any object exposing the buffer protocol with 64-bit
//! unsigned items (viewed through `numpy.asarray`). No copy out: results are built in `Vec`s the engine
//! allocates and handed to NumPy as the array's buffer. Every kernel runs with the GIL
//! released.

use std::sync::Mutex;

use hdv::encode::{
    LevelEncoder, NgramEncoder, Projector, RecordEncoder, TextConfig, TextEncoder, UniformWeights,
};
use hdv::{Block, Bundler, Dim, HvRef, Hypervector, Kernel, Scan, SeededRng};
use numpy::ndarray::{Array1, Array2};
use numpy::{PyArray1, PyArray2, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use hypermem::Reason;
use hypermem::api::ApiError;

use crate::errors::{hdv as hdv_err, invalid, refused};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("DEFAULT_DIM", hdv::DEFAULT_DIM)?;
    m.add_function(wrap_pyfunction!(kernel, m)?)?;
    m.add_function(wrap_pyfunction!(words_address, m)?)?;
    m.add_function(wrap_pyfunction!(random, m)?)?;
    m.add_function(wrap_pyfunction!(bind, m)?)?;
    m.add_function(wrap_pyfunction!(permute, m)?)?;
    m.add_function(wrap_pyfunction!(bundle, m)?)?;
    m.add_function(wrap_pyfunction!(hamming, m)?)?;
    m.add_function(wrap_pyfunction!(similarity, m)?)?;
    m.add_function(wrap_pyfunction!(top_k, m)?)?;
    m.add_class::<PyTextEncoder>()?;
    m.add_class::<PyNgramEncoder>()?;
    m.add_class::<PyLevelEncoder>()?;
    m.add_class::<PyRecordEncoder>()?;
    m.add_class::<PyProjector>()?;
    m.add_class::<PyResonator>()?;
    Ok(())
}

/// Vectors read in place from a NumPy array.
struct Vectors<'py> {
    array: PyReadonlyArrayDyn<'py, u64>,
    /// Rows (1 for a 1-D array).
    rows: usize,
    /// Words per vector.
    words: usize,
    /// Whether the array was 1-D (one vector).
    single: bool,
}

impl<'py> Vectors<'py> {
    /// `obj` as vectors; `name` names it in a refusal.
    fn read(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Self> {
        // A NumPy array as it is; any other object through `numpy.asarray`, which views
        // a buffer-protocol object of 64-bit unsigned items (a `memoryview`, an
        // `array.array('Q')`) without copying it.
        let array = obj
            .extract::<PyReadonlyArrayDyn<'py, u64>>()
            .or_else(|_| {
                let viewed = obj.py().import("numpy")?.call_method1("asarray", (obj,))?;
                viewed.extract::<PyReadonlyArrayDyn<'py, u64>>()
            })
            .map_err(|_| {
                invalid(format!(
                    "{name}: expected uint64 vectors of shape (n, D/64) or (D/64,) (a NumPy array or a buffer of 64-bit unsigned items), got {}",
                    describe(obj)
                ))
            })?;
        let shape = array.shape().to_vec();
        let (rows, words, single) = match shape.as_slice() {
            [w] => (1, *w, true),
            [n, w] => (*n, *w, false),
            _ => {
                return Err(invalid(format!(
                    "{name}: expected 1 or 2 dimensions, got shape {shape:?}"
                )));
            }
        };
        if words == 0 {
            return Err(invalid(format!(
                "{name}: a vector needs at least one 64-bit word (shape {shape:?})"
            )));
        }
        if !array.is_c_contiguous() {
            return Err(invalid(format!(
                "{name}: the array is not C-contiguous; pass numpy.ascontiguousarray({name})"
            )));
        }
        Ok(Self {
            array,
            rows,
            words,
            single,
        })
    }

    fn slice(&self) -> &[u64] {
        // A C-contiguous array always has a slice.
        self.array.as_slice().unwrap_or(&[])
    }

    fn dim(&self) -> Dim {
        Dim::from_words(self.words).expect("words > 0 was checked")
    }

    fn same_dim(&self, other: &Vectors<'_>, what: &str) -> PyResult<()> {
        if self.words == other.words {
            return Ok(());
        }
        Err(refused(ApiError::new(
            Reason::DimensionMismatch,
            format!(
                "{what}: vectors of {} bits against vectors of {} bits",
                self.words * 64,
                other.words * 64
            ),
        )))
    }
}

fn describe(obj: &Bound<'_, PyAny>) -> String {
    match obj.getattr("dtype") {
        Ok(dtype) => format!("an array of {dtype}"),
        Err(_) => obj
            .get_type()
            .name()
            .map_or_else(|_| "another type".to_owned(), |n| format!("a {n}")),
    }
}

/// A `(rows, words)` array (or `(words,)` when `single`) owning `data`, without a copy.
fn vectors_out(py: Python<'_>, data: Vec<u64>, words: usize, single: bool) -> Bound<'_, PyAny> {
    if single {
        PyArray1::from_owned_array(py, Array1::from_vec(data)).into_any()
    } else {
        let rows = data.len() / words;
        let array = Array2::from_shape_vec((rows, words), data).expect("rows * words words");
        PyArray2::from_owned_array(py, array).into_any()
    }
}

fn dim_of(bits: usize) -> PyResult<Dim> {
    Dim::new(bits).map_err(hdv_err)
}

/// The kernel tier this process runs (`avx512`, `avx2` or `scalar`; `HDV_KERNEL` picks
/// another).
#[pyfunction]
fn kernel() -> &'static str {
    hdv::kernel_name()
}

/// The address of the words the kernels read for `vectors`: equal to
/// `vectors.ctypes.data` (no copy is ever made of an argument).
#[pyfunction]
fn words_address(vectors: &Bound<'_, PyAny>) -> PyResult<usize> {
    let v = Vectors::read(vectors, "vectors")?;
    Ok(v.slice().as_ptr() as usize)
}

/// `n` random vectors of `dim` bits (shape `(n, dim/64)`; `n=None` gives one vector of
/// shape `(dim/64,)`), reproducible from `seed`.
#[pyfunction]
#[pyo3(signature = (n = None, dim = hdv::DEFAULT_DIM, seed = 0))]
fn random(py: Python<'_>, n: Option<usize>, dim: usize, seed: u64) -> PyResult<Bound<'_, PyAny>> {
    let d = dim_of(dim)?;
    let rows = n.unwrap_or(1);
    let data = py.detach(|| {
        let mut rng = SeededRng::new(seed);
        let mut data = Vec::with_capacity(rows * d.words());
        for _ in 0..rows {
            data.extend_from_slice(Hypervector::random_from(d, &mut rng).words());
        }
        data
    });
    Ok(vectors_out(py, data, d.words(), n.is_none()))
}

/// Row-wise XOR of `a` and `b` (same shape, or one of them a single vector bound to every
/// row of the other). Binding is its own inverse: `bind(bind(a, b), b) == a`.
#[pyfunction]
fn bind<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let (a, b) = (Vectors::read(a, "a")?, Vectors::read(b, "b")?);
    a.same_dim(&b, "bind")?;
    let (big, small) = if a.rows >= b.rows { (&a, &b) } else { (&b, &a) };
    if small.rows != big.rows && !small.single {
        return Err(invalid(format!(
            "bind: {} rows against {} rows (pass equal shapes, or one vector)",
            a.rows, b.rows
        )));
    }
    let (x, y, w) = (big.slice(), small.slice(), big.words);
    let data = py.detach(|| {
        let mut out = x.to_vec();
        for row in out.chunks_exact_mut(w).enumerate() {
            let other = if y.len() == w {
                y
            } else {
                &y[row.0 * w..(row.0 + 1) * w]
            };
            for (o, v) in row.1.iter_mut().zip(other) {
                *o ^= v;
            }
        }
        out
    });
    Ok(vectors_out(py, data, w, a.single && b.single))
}

/// Each vector rotated by `k` bit positions (negative `k` rotates back):
/// `permute(permute(a, k), -k) == a`.
#[pyfunction]
#[pyo3(signature = (a, k = 1))]
fn permute<'py>(py: Python<'py>, a: &Bound<'py, PyAny>, k: i64) -> PyResult<Bound<'py, PyAny>> {
    let a = Vectors::read(a, "a")?;
    let (x, w) = (a.slice(), a.words);
    let data = py.detach(|| {
        let mut out = Vec::with_capacity(x.len());
        for row in x.chunks_exact(w) {
            let v = HvRef::new(row).expect("a non-empty row").to_owned();
            out.extend_from_slice(v.permute_by(k).words());
        }
        out
    });
    Ok(vectors_out(py, data, w, a.single))
}

/// The majority vector of the rows of `vectors` (each bit set where more than half of
/// them set it); ties of an even count are broken by the coin of `seed`, reproducibly.
#[pyfunction]
#[pyo3(signature = (vectors, seed = 0))]
fn bundle<'py>(
    py: Python<'py>,
    vectors: &Bound<'py, PyAny>,
    seed: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let v = Vectors::read(vectors, "vectors")?;
    let (x, d) = (v.slice(), v.dim());
    let out = py
        .detach(|| {
            let views: Vec<HvRef<'_>> = Block::new(x, d)?.iter().collect();
            hdv::bundle(&views, seed)
        })
        .map_err(hdv_err)?;
    Ok(vectors_out(py, out.into_words(), d.words(), true))
}

/// Hamming distances: an `int` for two vectors; a `uint32` array for rows against one
/// vector, or row by row for two arrays of the same shape.
#[pyfunction]
fn hamming<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let (a, b) = (Vectors::read(a, "a")?, Vectors::read(b, "b")?);
    let (distances, single) = distances(py, &a, &b)?;
    if single {
        distances[0].into_bound_py_any(py)
    } else {
        Ok(PyArray1::from_owned_array(py, Array1::from_vec(distances)).into_any())
    }
}

use pyo3::IntoPyObjectExt;

fn distances(py: Python<'_>, a: &Vectors<'_>, b: &Vectors<'_>) -> PyResult<(Vec<u32>, bool)> {
    a.same_dim(b, "hamming")?;
    let (big, small) = if a.rows >= b.rows { (a, b) } else { (b, a) };
    if small.rows != big.rows && !small.single {
        return Err(invalid(format!(
            "hamming: {} rows against {} rows (pass equal shapes, or one vector)",
            a.rows, b.rows
        )));
    }
    let (x, y, w, rows) = (big.slice(), small.slice(), big.words, big.rows);
    let k = hdv::kernels::try_active().map_err(hdv_err)?;
    let out = py.detach(|| {
        let mut out = vec![0u32; rows];
        if y.len() == w {
            Kernel::distances(k, y, x, &mut out);
        } else {
            for (i, d) in out.iter_mut().enumerate() {
                *d = k.hamming(&x[i * w..(i + 1) * w], &y[i * w..(i + 1) * w]);
            }
        }
        out
    });
    Ok((out, a.single && b.single))
}

/// `1 - 2 * hamming / D`: 1 for equal vectors, about 0 for unrelated ones, -1 for
/// complements; shaped as [`hamming`].
#[pyfunction]
fn similarity<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let (a, b) = (Vectors::read(a, "a")?, Vectors::read(b, "b")?);
    let bits = (a.words * 64) as f64;
    let (distances, single) = distances(py, &a, &b)?;
    let sims: Vec<f64> = distances
        .iter()
        .map(|&d| 1.0 - 2.0 * f64::from(d) / bits)
        .collect();
    if single {
        sims[0].into_bound_py_any(py)
    } else {
        Ok(PyArray1::from_owned_array(py, Array1::from_vec(sims)).into_any())
    }
}

/// The `k` nearest rows of `block` to each query, nearest first (ties by row): a pair
/// `(indices, distances)` of shape `(q, k)` (`(k,)` for one query), `int64` and
/// `uint32`. Rows past the last neighbour found (a block smaller than `k`, or
/// `max_distance`) hold index -1 and distance 2**32-1. `threads=1` scans on the calling
/// thread; `threads=0` uses every core (rayon's pool).
#[pyfunction]
#[pyo3(signature = (block, queries, k = 10, max_distance = None, threads = 1))]
fn top_k<'py>(
    py: Python<'py>,
    block: &Bound<'py, PyAny>,
    queries: &Bound<'py, PyAny>,
    k: usize,
    max_distance: Option<u32>,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let (b, q) = (
        Vectors::read(block, "block")?,
        Vectors::read(queries, "queries")?,
    );
    b.same_dim(&q, "top_k")?;
    if k == 0 {
        return Err(invalid("top_k: k must be at least 1"));
    }
    let (x, y, d) = (b.slice(), q.slice(), b.dim());
    let mut scan = Scan::new(k);
    if let Some(m) = max_distance {
        scan = scan.max_distance(m);
    }
    let parallel = threads != 1;
    let found = py
        .detach(|| {
            let block = Block::new(x, d)?;
            let queries = Block::new(y, d)?;
            if queries.len() == 1 {
                let query = queries.get(0).expect("one query");
                let hits = if parallel {
                    scan.par_top_k(&block, &query)?
                } else {
                    scan.top_k(&block, &query)?
                };
                Ok(vec![hits])
            } else if parallel {
                scan.par_top_k_batch(&block, &queries)
            } else {
                scan.top_k_batch(&block, &queries)
            }
        })
        .map_err(hdv_err)?;
    let mut indices = vec![-1i64; found.len() * k];
    let mut dists = vec![u32::MAX; found.len() * k];
    for (row, hits) in found.iter().enumerate() {
        for (j, h) in hits.iter().enumerate() {
            indices[row * k + j] = h.index as i64;
            dists[row * k + j] = h.distance;
        }
    }
    let (indices, dists) = if q.single {
        (
            PyArray1::from_owned_array(py, Array1::from_vec(indices)).into_any(),
            PyArray1::from_owned_array(py, Array1::from_vec(dists)).into_any(),
        )
    } else {
        let shape = (found.len(), k);
        (
            PyArray2::from_owned_array(py, Array2::from_shape_vec(shape, indices).expect("q * k"))
                .into_any(),
            PyArray2::from_owned_array(py, Array2::from_shape_vec(shape, dists).expect("q * k"))
                .into_any(),
        )
    };
    (indices, dists).into_bound_py_any(py)
}

/// Texts as bundles of their words, word pairs and character n-grams (the encoder behind
/// the memory's vectors), every feature weighted 1.
#[pyclass(module = "hypermem.hdv", name = "TextEncoder", frozen)]
struct PyTextEncoder {
    encoder: Mutex<TextEncoder>,
    dim: Dim,
}

#[pymethods]
impl PyTextEncoder {
    #[new]
    #[pyo3(signature = (dim = hdv::DEFAULT_DIM, seed = None, ngram = 3))]
    fn new(dim: usize, seed: Option<u64>, ngram: usize) -> PyResult<Self> {
        let dim = dim_of(dim)?;
        let mut config = TextConfig {
            ngram,
            ..TextConfig::default()
        };
        if let Some(seed) = seed {
            config.seed = seed;
        }
        Ok(Self {
            encoder: Mutex::new(TextEncoder::new(dim, config)),
            dim,
        })
    }

    /// One text (shape `(D/64,)`), or a list of texts (shape `(n, D/64)`).
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        encode_texts(py, text, self.dim, |t| {
            let mut enc = self.encoder.lock().unwrap_or_else(|p| p.into_inner());
            enc.encode(t, &UniformWeights)
        })
    }
}

/// One text (a vector) or a list of texts (an `(n, D/64)` array), each through `encode`,
/// with the GIL released.
fn encode_texts<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    dim: Dim,
    encode: impl Fn(&str) -> hdv::Result<Hypervector> + Sync,
) -> PyResult<Bound<'py, PyAny>> {
    let (texts, single) = texts(text)?;
    let data = py
        .detach(|| {
            let mut out = Vec::with_capacity(texts.len() * dim.words());
            for t in &texts {
                out.extend_from_slice(encode(t)?.words());
            }
            Ok(out)
        })
        .map_err(hdv_err)?;
    Ok(vectors_out(py, data, dim.words(), single))
}

fn texts(obj: &Bound<'_, PyAny>) -> PyResult<(Vec<String>, bool)> {
    if let Ok(s) = obj.extract::<String>() {
        return Ok((vec![s], true));
    }
    obj.extract::<Vec<String>>()
        .map(|v| (v, false))
        .map_err(|_| invalid("expected a str or a list of str"))
}

/// Texts as the majority of their character n-grams (each the binding of its characters'
/// item vectors, permuted by position): the classic encoder of language identification.
#[pyclass(module = "hypermem.hdv", name = "NgramEncoder", frozen)]
struct PyNgramEncoder {
    encoder: Mutex<NgramEncoder>,
    dim: Dim,
    seed: u64,
}

#[pymethods]
impl PyNgramEncoder {
    #[new]
    #[pyo3(signature = (n = 3, dim = hdv::DEFAULT_DIM, seed = 0))]
    fn new(n: usize, dim: usize, seed: u64) -> PyResult<Self> {
        let dim = dim_of(dim)?;
        Ok(Self {
            encoder: Mutex::new(NgramEncoder::new(dim, seed, n).map_err(hdv_err)?),
            dim,
            seed,
        })
    }

    /// One text (shape `(D/64,)`), or a list of texts (shape `(n, D/64)`). A text shorter
    /// than `n` characters has no n-gram and is refused (`invalid_argument`).
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        encode_texts(py, text, self.dim, |t| {
            let mut enc = self.encoder.lock().unwrap_or_else(|p| p.into_inner());
            let mut bundler = Bundler::new(self.dim);
            enc.add_chars(t, &mut bundler);
            bundler.binarize(self.seed)
        })
    }
}

/// Numbers in `[min, max]` as `levels` vectors whose similarity falls linearly with the
/// distance between levels.
#[pyclass(module = "hypermem.hdv", name = "LevelEncoder", frozen)]
struct PyLevelEncoder {
    encoder: LevelEncoder,
    dim: Dim,
}

#[pymethods]
impl PyLevelEncoder {
    #[new]
    #[pyo3(signature = (min, max, levels, dim = hdv::DEFAULT_DIM, seed = 0))]
    fn new(min: f64, max: f64, levels: usize, dim: usize, seed: u64) -> PyResult<Self> {
        let dim = dim_of(dim)?;
        Ok(Self {
            encoder: LevelEncoder::new(dim, min, max, levels, seed).map_err(hdv_err)?,
            dim,
        })
    }

    /// One number (shape `(D/64,)`), or a sequence of numbers (shape `(n, D/64)`); a
    /// number outside `[min, max]` takes the nearest extreme, NaN is refused.
    fn encode<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let (xs, single) = match x.extract::<f64>() {
            Ok(v) => (vec![v], true),
            Err(_) => (
                x.extract::<Vec<f64>>()
                    .map_err(|_| invalid("expected a number or a sequence of numbers"))?,
                false,
            ),
        };
        let mut out = Vec::with_capacity(xs.len() * self.dim.words());
        for v in xs {
            out.extend_from_slice(self.encoder.encode(v).map_err(hdv_err)?.words());
        }
        Ok(vectors_out(py, out, self.dim.words(), single))
    }

    /// The level index of `x`.
    fn level_of(&self, x: f64) -> PyResult<usize> {
        self.encoder.level_of(x).map_err(hdv_err)
    }
}

/// Records as the bundle of `role ⊗ value` pairs; `unbind` recovers a role's (noisy)
/// value.
#[pyclass(module = "hypermem.hdv", name = "RecordEncoder", frozen)]
struct PyRecordEncoder {
    encoder: Mutex<RecordEncoder>,
    dim: Dim,
}

#[pymethods]
impl PyRecordEncoder {
    #[new]
    #[pyo3(signature = (dim = hdv::DEFAULT_DIM, seed = 0))]
    fn new(dim: usize, seed: u64) -> PyResult<Self> {
        let dim = dim_of(dim)?;
        Ok(Self {
            encoder: Mutex::new(RecordEncoder::new(dim, seed)),
            dim,
        })
    }

    /// The record of `fields` (role name → one vector), ties broken by `seed`.
    #[pyo3(signature = (fields, seed = 0))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        fields: &Bound<'py, PyDict>,
        seed: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut values = Vec::with_capacity(fields.len());
        for (role, value) in fields.iter() {
            let role: String = role
                .extract()
                .map_err(|_| invalid("fields: role names must be str"))?;
            let v = Vectors::read(&value, &role)?;
            if !v.single || v.words != self.dim.words() {
                return Err(invalid(format!(
                    "fields[{role:?}]: expected one vector of shape ({},)",
                    self.dim.words()
                )));
            }
            values.push((role, v.slice().to_vec()));
        }
        let pairs: Vec<(&str, HvRef<'_>)> = values
            .iter()
            .map(|(r, w)| (r.as_str(), HvRef::new(w).expect("non-empty")))
            .collect();
        let mut enc = self.encoder.lock().unwrap_or_else(|p| p.into_inner());
        let record = enc.encode(&pairs, seed).map_err(hdv_err)?;
        Ok(vectors_out(py, record.into_words(), self.dim.words(), true))
    }

    /// The value bound to `role` in `record`, with the other fields' noise.
    fn unbind<'py>(
        &self,
        py: Python<'py>,
        record: &Bound<'py, PyAny>,
        role: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let r = Vectors::read(record, "record")?;
        let record = Hypervector::from_words(r.slice().to_vec()).map_err(hdv_err)?;
        let mut enc = self.encoder.lock().unwrap_or_else(|p| p.into_inner());
        let v = enc.unbind(&record, role).map_err(hdv_err)?;
        Ok(vectors_out(py, v.into_words(), self.dim.words(), true))
    }
}

/// Dense float embeddings as binary vectors: the signs of a seeded random projection, so
/// that Hamming similarity tracks cosine similarity.
#[pyclass(module = "hypermem.hdv", name = "Projector", frozen)]
struct PyProjector {
    projector: Projector,
}

#[pymethods]
impl PyProjector {
    #[new]
    #[pyo3(signature = (input, dim = hdv::DEFAULT_DIM, seed = 0))]
    fn new(input: usize, dim: usize, seed: u64) -> PyResult<Self> {
        Ok(Self {
            projector: Projector::new(input, dim_of(dim)?, seed).map_err(hdv_err)?,
        })
    }

    /// One embedding (shape `(input,)`) or a batch (shape `(n, input)`), `float32`, read in
    /// place.
    fn project<'py>(
        &self,
        py: Python<'py>,
        embeddings: PyReadonlyArrayDyn<'py, f32>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let shape = embeddings.shape().to_vec();
        let input = self.projector.input_dim();
        let single = match shape.as_slice() {
            [n] if *n == input => true,
            [_, n] if *n == input => false,
            _ => {
                return Err(invalid(format!(
                    "embeddings: expected shape ({input},) or (n, {input}), got {shape:?}"
                )));
            }
        };
        let x = embeddings
            .as_slice()
            .map_err(|_| invalid("embeddings: the array is not C-contiguous"))?;
        let words = self.projector.dim().words();
        let data = py
            .detach(|| {
                let mut out = Vec::with_capacity(x.len() / input * words);
                for e in x.chunks_exact(input) {
                    out.extend_from_slice(self.projector.project(e)?.words());
                }
                Ok(out)
            })
            .map_err(hdv_err)?;
        Ok(vectors_out(py, data, words, single))
    }
}

/// A resonator network: finds the item of each codebook whose binding is a given product.
#[pyclass(module = "hypermem.hdv", name = "Resonator", frozen)]
struct PyResonator {
    resonator: hdv::Resonator,
}

#[pymethods]
impl PyResonator {
    /// `codebooks`: a list of arrays of shape `(m_f, D/64)`, one per factor.
    #[new]
    fn new(codebooks: &Bound<'_, PyList>) -> PyResult<Self> {
        let mut books: Vec<Vec<Hypervector>> = Vec::with_capacity(codebooks.len());
        for (f, book) in codebooks.iter().enumerate() {
            let v = Vectors::read(&book, &format!("codebooks[{f}]"))?;
            let items = v
                .slice()
                .chunks_exact(v.words)
                .map(|w| Hypervector::from_words(w.to_vec()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(hdv_err)?;
            books.push(items);
        }
        Ok(Self {
            resonator: hdv::Resonator::new(&books).map_err(hdv_err)?,
        })
    }

    /// Factors `product`: a dict with `indices` (one per codebook), `similarities`,
    /// `iterations`, `converged` and `exact` (binding the chosen items gives the product).
    #[pyo3(signature = (product, max_iterations = 100, seed = 0, random_start = false))]
    fn factor<'py>(
        &self,
        py: Python<'py>,
        product: &Bound<'py, PyAny>,
        max_iterations: usize,
        seed: u64,
        random_start: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let p = Vectors::read(product, "product")?;
        let product = Hypervector::from_words(p.slice().to_vec()).map_err(hdv_err)?;
        let f = py
            .detach(|| {
                if random_start {
                    self.resonator
                        .factor_from_random(&product, max_iterations, seed)
                } else {
                    self.resonator.factor(&product, max_iterations, seed)
                }
            })
            .map_err(hdv_err)?;
        let d = PyDict::new(py);
        d.set_item("indices", f.indices)?;
        d.set_item("similarities", f.similarities)?;
        d.set_item("iterations", f.iterations)?;
        d.set_item("converged", f.converged)?;
        d.set_item("exact", f.exact)?;
        Ok(d)
    }
}
