//! Python values to and from the JSON documents of the operation layer.
//!
//! A request's arguments arrive as Python objects (dicts, lists, strings, numbers,
//! `None`, NumPy arrays and scalars, `datetime`s) and become the JSON value the catalog's
//! request types deserialize, so every check and default is the operation layer's. A
//! result's JSON document comes back as plain Python objects.

use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::errors::invalid;

/// The JSON value of `obj`; `field` names it in a refusal.
pub(crate) fn from_py(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    // bool before int: Python's bool is an int.
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        if let Ok(v) = i.extract::<i64>() {
            return Ok(Value::from(v));
        }
        if let Ok(v) = i.extract::<u64>() {
            return Ok(Value::from(v));
        }
        return Err(invalid(format!("{field}: {i} does not fit in 64 bits")));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let v = f.value();
        return Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| invalid(format!("{field}: {v} is not a finite number")));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.extract::<String>()?));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(invalid(format!("{field}: keys must be strings, not {k}")));
            };
            let key = key.extract::<String>()?;
            let value = from_py(&v, &format!("{field}.{key}"))?;
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    if obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok() {
        return obj
            .try_iter()?
            .enumerate()
            .map(|(i, v)| from_py(&v?, &format!("{field}[{i}]")))
            .collect();
    }
    // NumPy arrays and scalars (an embedding as a float32 array).
    if obj.hasattr("tolist")? {
        return from_py(&obj.call_method0("tolist")?, field);
    }
    // datetime.datetime and datetime.date: RFC 3339, as every time argument takes.
    if obj.hasattr("isoformat")? {
        return from_py(&obj.call_method0("isoformat")?, field);
    }
    let kind = obj.get_type().name()?;
    Err(invalid(format!(
        "{field}: a {kind} is not a JSON value (use str, int, float, bool, None, list, dict or a NumPy array)"
    )))
}

/// The Python object of a JSON document: dicts, lists, str, int, float, bool, None.
pub(crate) fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    match value {
        Value::Null => Ok(py.None().into_bound(py)),
        Value::Bool(b) => b.into_bound_py_any(py),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_bound_py_any(py)
            } else if let Some(u) = n.as_u64() {
                u.into_bound_py_any(py)
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py)
            }
        }
        Value::String(s) => s.into_bound_py_any(py),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            Ok(list.into_any())
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_py(py, v)?)?;
            }
            Ok(dict.into_any())
        }
    }
}
