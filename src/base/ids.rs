//! The names of what is stored: projects (the isolation boundary of every layer) and
//! vectors.

use std::fmt;

/// A project name: the isolation boundary of every store. Also a directory name, so it is
/// restricted to 1–64 ASCII letters, digits, `-` and `_`, not starting with `-`.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct ProjectId(String);

/// A project name that breaks the naming rule (a store turns it into its
/// `invalid_project` error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid project name {name:?}: {reason}")]
pub struct InvalidProject {
    /// The rejected name.
    pub name: String,
    /// Which rule it breaks.
    pub reason: &'static str,
}

impl TryFrom<String> for ProjectId {
    type Error = InvalidProject;
    fn try_from(name: String) -> Result<Self, InvalidProject> {
        Self::new(name)
    }
}

impl From<ProjectId> for String {
    fn from(p: ProjectId) -> String {
        p.0
    }
}

impl ProjectId {
    /// Validates a project name.
    ///
    /// # Errors
    /// [`InvalidProject`] naming the rule that was broken.
    pub fn new(name: impl Into<String>) -> Result<Self, InvalidProject> {
        let name = name.into();
        let reason = if name.is_empty() {
            Some("empty")
        } else if name.len() > 64 {
            Some("longer than 64 bytes")
        } else if name.starts_with('-') {
            Some("starts with '-'")
        } else if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            Some("only ASCII letters, digits, '-' and '_' are allowed")
        } else {
            None
        };
        match reason {
            Some(reason) => Err(InvalidProject { name, reason }),
            None => Ok(Self(name)),
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ProjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl schemars::JsonSchema for ProjectId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProjectId".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A project name: 1 to 128 letters, digits, `.`, `_` or `-`."
        })
    }
}

/// Identifier of a stored vector (the id of the raw event or memory it encodes).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct VectorId(pub u64);

impl std::fmt::Display for VectorId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Declares an identifier: a `u64` newtype, ordered and hashed, serialized (and described
/// in schemas) as its number. `$(#[...])*` before the name are kept (its doc).
macro_rules! number_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize,
            serde::Deserialize, schemars::JsonSchema,
        )]
        pub struct $name(pub u64);
    };
}
pub(crate) use number_id;
