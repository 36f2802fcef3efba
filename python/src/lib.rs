//! `hypermem._native`: the Python extension module behind the `hypermem` package.
//!
//! Two parts, both thin:
//! - [`memory`]: one class, `Memory`, whose `call(op, args)` runs any operation of the
//!   catalog ([`hypermem::api::catalog`]) through the same [`hypermem::api::Api`] the CLI,
//!   HTTP and MCP use. The Python package generates its methods from `operations()`, the
//!   same catalog, so no operation, field or default is declared twice.
//! - [`algebra`]: the `hdv` algebra over NumPy `uint64` arrays of shape `(n, D/64)`, read
//!   in place (no copy in) and returned in buffers the engine allocated (no copy out),
//!   with the GIL released around every kernel.
//!
//! Errors cross as exceptions carrying the stable reason ([`errors`]).

mod algebra;
mod errors;
mod json;
mod memory;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    memory::register(m)?;
    let hdv = PyModule::new(m.py(), "hdv")?;
    algebra::register(&hdv)?;
    m.add_submodule(&hdv)?;
    Ok(())
}
