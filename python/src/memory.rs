//! `Memory`: a memory opened in this process, every operation of the catalog run through
//! [`Api`], the GIL released while it runs (so threads recall concurrently).

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use hypermem::api::{Api, ApiError, Request, catalog};
use hypermem::{Profile, ProfileKind, Reason};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;

use crate::errors::refused;
use crate::json::{from_py, to_py};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeMemory>()?;
    m.add_function(wrap_pyfunction!(operations, m)?)?;
    Ok(())
}

/// The catalog: one dict per operation (`name`, `description`, `writes`, `schema`, the
/// JSON Schema of its request). The package builds `Memory`'s methods and its type stubs
/// from it.
#[pyfunction]
fn operations(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for op in catalog::catalog() {
        let d = PyDict::new(py);
        d.set_item("name", op.name)?;
        d.set_item("description", op.description)?;
        d.set_item("writes", op.writes)?;
        d.set_item("schema", to_py(py, &op.schema)?)?;
        list.append(d)?;
    }
    Ok(list)
}

/// A profile by name (`lite`, `standard`, `scale`: the bundled ones) or by the path of a
/// TOML file; `None` is `lite`. Environment overrides apply as for the CLI.
fn profile(name: Option<&str>) -> Result<Profile, ApiError> {
    Ok(match name {
        None | Some("lite") => Profile::builtin(ProfileKind::Lite)?,
        Some("standard") => Profile::builtin(ProfileKind::Standard)?,
        Some("scale") => Profile::builtin(ProfileKind::Scale)?,
        Some(path) => Profile::load(path)?,
    }
    .with_env())
}

/// A memory opened by this process (it holds the store's lock until `close` or until it
/// is collected).
#[pyclass(module = "hypermem._native", name = "Memory", frozen)]
struct NativeMemory {
    memory: RwLock<Option<Arc<hypermem::Memory>>>,
    data_dir: PathBuf,
}

impl NativeMemory {
    fn memory(&self) -> PyResult<Arc<hypermem::Memory>> {
        let memory = self.memory.read().unwrap_or_else(|p| p.into_inner());
        memory.clone().ok_or_else(|| {
            refused(ApiError::new(
                Reason::Closed,
                format!(
                    "the memory at {} was closed: open it again",
                    self.data_dir.display()
                ),
            ))
        })
    }
}

#[pymethods]
impl NativeMemory {
    /// Opens the memory in `data_dir` with `profile`; a missing directory is created only
    /// with `create` (else refused with `data_dir_missing`, as the CLI refuses it).
    #[new]
    #[pyo3(signature = (data_dir, profile = None, create = false))]
    fn new(
        py: Python<'_>,
        data_dir: PathBuf,
        profile: Option<&str>,
        create: bool,
    ) -> PyResult<Self> {
        let profile = self::profile(profile).map_err(refused)?;
        let dir = data_dir.clone();
        let memory = py
            .detach(move || {
                hypermem::api::local::check_data_dir(&dir, create)?;
                hypermem::api::local::open(&profile, &dir, false, create)
            })
            .map_err(refused)?;
        let memory = Arc::new(memory);
        memory.spawn_embedder();
        Ok(Self {
            memory: RwLock::new(Some(memory)),
            data_dir,
        })
    }

    /// Runs operation `op` with the fields of `args` (as the JSON request
    /// `{"op": op, **args}`) and returns its result document.
    #[pyo3(signature = (op, args = None))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        op: &str,
        args: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut request = match args {
            Some(a) => from_py(a.as_any(), op)?,
            None => Value::Object(serde_json::Map::new()),
        };
        if let Value::Object(map) = &mut request {
            map.insert("op".to_owned(), Value::String(op.to_owned()));
        }
        let request = Request::from_json(request).map_err(|e| {
            if catalog::catalog().iter().any(|o| o.name == op) {
                refused(e)
            } else {
                refused(ApiError::new(
                    Reason::UnknownOperation,
                    format!("no operation `{op}`"),
                ))
            }
        })?;
        let memory = self.memory()?;
        let result = py
            .detach(move || Api::new(&memory).execute(&request))
            .map_err(refused)?;
        to_py(py, &result)
    }

    /// Closes the memory: its lock is released once calls in flight return. Later calls
    /// are refused with `closed`.
    fn close(&self, py: Python<'_>) {
        let taken = self
            .memory
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        py.detach(move || drop(taken));
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.memory
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }

    /// The data directory.
    #[getter]
    fn data_dir(&self) -> PathBuf {
        self.data_dir.clone()
    }
}
