//! Refusals as Python exceptions: `hypermem.Refused` carries the stable `reason` (as on
//! every other surface), the `message` and the structured `detail`; one subclass per
//! error class ([`ErrorClass`]), so `except hypermem.NotFound` catches every
//! `not_found`-class reason.

use hypermem::api::ApiError;
use hypermem::{ErrorClass, Reason};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    hypermem,
    Refused,
    PyException,
    "An operation was refused: `.reason` is the stable name (`unknown_project`, `version_conflict`, ...), `.message` says what was wrong, `.detail` holds a refusal's own fields or None."
);
create_exception!(
    hypermem,
    InvalidInput,
    Refused,
    "The request is malformed or names something invalid."
);
create_exception!(
    hypermem,
    NotFound,
    Refused,
    "A named record, project or directory does not exist."
);
create_exception!(
    hypermem,
    Conflict,
    Refused,
    "The request conflicts with stored state (a version, an idempotency key, a governance rule, a closed memory)."
);
create_exception!(
    hypermem,
    TooLarge,
    Refused,
    "The input exceeds a configured limit."
);
create_exception!(
    hypermem,
    Unavailable,
    Refused,
    "A resource is busy or unreachable; retrying can succeed."
);
create_exception!(
    hypermem,
    Internal,
    Refused,
    "Stored data is damaged or an internal step failed."
);
create_exception!(
    hypermem,
    Forbidden,
    Refused,
    "The credentials do not allow the request."
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Refused", py.get_type::<Refused>())?;
    m.add("InvalidInput", py.get_type::<InvalidInput>())?;
    m.add("NotFound", py.get_type::<NotFound>())?;
    m.add("Conflict", py.get_type::<Conflict>())?;
    m.add("TooLarge", py.get_type::<TooLarge>())?;
    m.add("Unavailable", py.get_type::<Unavailable>())?;
    m.add("Internal", py.get_type::<Internal>())?;
    m.add("Forbidden", py.get_type::<Forbidden>())?;
    Ok(())
}

/// The exception of `e`: its class's subclass of `Refused`, with `reason`, `message` and
/// `detail` set.
pub(crate) fn refused(e: ApiError) -> PyErr {
    let message = e.message.clone();
    let err = match e.class {
        ErrorClass::InvalidInput | ErrorClass::MethodNotAllowed => InvalidInput::new_err(message),
        ErrorClass::NotFound => NotFound::new_err(message),
        ErrorClass::Conflict => Conflict::new_err(message),
        ErrorClass::TooLarge => TooLarge::new_err(message),
        ErrorClass::Unavailable => Unavailable::new_err(message),
        ErrorClass::Internal => Internal::new_err(message),
        ErrorClass::Unauthorized | ErrorClass::Forbidden => Forbidden::new_err(message),
    };
    Python::attach(|py| {
        let value = err.value(py);
        let detail = match &e.detail {
            Some(d) => crate::json::to_py(py, d).map(Bound::unbind).ok(),
            None => None,
        };
        // Setting attributes on a fresh exception instance cannot fail.
        let _ = value.setattr("reason", e.reason.as_str());
        let _ = value.setattr("message", &e.message);
        let _ = value.setattr("detail", detail);
    });
    err
}

/// An `invalid_argument` refusal from the bindings themselves (a wrong array shape or
/// type), named like the engine's own.
pub(crate) fn invalid(message: impl Into<String>) -> PyErr {
    refused(ApiError::new(Reason::InvalidArgument, message))
}

/// A refusal of the `hdv` algebra (a dimension mismatch, an empty bundle), with the
/// reason the engine gives it. What the engine reads as its own failure (nothing to
/// bundle, words that are not whole vectors) is, here, the caller's argument.
pub(crate) fn hdv(e: hdv::Error) -> PyErr {
    match e {
        hdv::Error::EmptyBundle => {
            invalid("nothing to bundle: no vector, or no feature in the text")
        }
        hdv::Error::RaggedBlock { .. } => invalid(e.to_string()),
        e => refused(ApiError::from(hypermem::Error::from(e))),
    }
}
