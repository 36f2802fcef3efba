//! A time argument as callers give it, shared by the API's requests and the governance
//! operations they carry (read into an instant by `api`).

use serde::{Deserialize, Serialize};

/// A time argument: epoch milliseconds, or any text [`crate::clock::parse_instant`] reads
/// (RFC 3339 with seconds and offset, a date).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Time {
    /// Milliseconds since the Unix epoch.
    Ms(i64),
    /// Text.
    Text(String),
}

impl std::str::FromStr for Time {
    type Err = std::convert::Infallible;

    /// Any text: it is read (and refused, naming the field) by `api`'s `Time::ms`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Time::Text(text.to_owned()))
    }
}
