//! A time argument as callers give it, shared by the API's requests and the governance
//! operations they carry (read into an instant by `api`).

use serde::{Deserialize, Serialize};

/// A time argument: epoch milliseconds, or any text [`crate::clock::parse_instant`] reads
/// (RFC 3339 with seconds and offset, a date).
///
/// Any JSON number or string deserializes: a number that is not a whole `i64` (`1e20`,
/// `1.5`) is kept as its text, so the operation refuses it naming its field, as it does a
/// text that is not a time, instead of failing to parse the request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Time {
    /// Milliseconds since the Unix epoch.
    Ms(i64),
    /// Text.
    Text(String),
}

/// The first and last millisecond a time may name: years 0000 to 9999, what RFC 3339
/// writes.
pub const TIME_RANGE_MS: std::ops::RangeInclusive<i64> = -62_167_219_200_000..=253_402_300_799_999;

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Time;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("epoch milliseconds or a time as text")
            }

            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Time, E> {
                Ok(Time::Ms(v))
            }

            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Time, E> {
                Ok(i64::try_from(v).map_or_else(|_| Time::Text(v.to_string()), Time::Ms))
            }

            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Time, E> {
                Ok(Time::Text(v.to_string()))
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Time, E> {
                Ok(Time::Text(v.to_owned()))
            }

            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Time, E> {
                Ok(Time::Text(v))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl std::str::FromStr for Time {
    type Err = std::convert::Infallible;

    /// Any text: it is read (and refused, naming the field) by `api`'s `Time::ms`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Time::Text(text.to_owned()))
    }
}
