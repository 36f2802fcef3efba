//! Deployment profiles: typed, validated settings loaded from `profiles/<name>.toml`.
//!
//! A profile names its deployment (`lite`, `standard`, `scale`); loading one whose cargo
//! feature is not compiled in is an error, never a silent fallback. Every key is checked:
//! unknown keys and invalid values are errors that name the key.

use std::path::{Path, PathBuf};

use hdv::Dim;
use hdv::encode::TextConfig;

use crate::index::HnswConfig;
use crate::store::{SegmentStoreConfig, TierPolicy};
use serde::Deserialize;

/// Everything that can be wrong with a profile.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The profile file could not be read.
    #[error("cannot read profile {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML or does not match the schema (unknown or mistyped key).
    #[error("profile {origin}: {message}")]
    Parse {
        /// The file (or `<string>`).
        origin: String,
        /// The parser's message, which names the key and line.
        message: String,
    },
    /// A value is out of range.
    #[error("profile {origin}: invalid `{key}`: {reason}")]
    Invalid {
        /// The file (or `<string>`).
        origin: String,
        /// Dotted key, e.g. `vectors.dim`.
        key: &'static str,
        /// What was wrong and what is expected.
        reason: String,
    },
    /// The profile needs a cargo feature this binary was built without.
    #[error(
        "profile `{profile}` is not built in this binary: rebuild with `--features {profile}` \
         (this build has `{built}`)"
    )]
    NotBuilt {
        /// The requested profile.
        profile: String,
        /// The profile this binary was compiled for.
        built: &'static str,
    },
}

/// Which deployment a profile describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProfileKind {
    /// Embedded: RAM + mmap segments + SQLite.
    Lite,
    /// Adds a Redis warm tier.
    Standard,
    /// Adds Redis and a Qdrant cold tier.
    Scale,
}

impl ProfileKind {
    /// The profile's name (also its cargo feature).
    pub const fn name(self) -> &'static str {
        match self {
            ProfileKind::Lite => "lite",
            ProfileKind::Standard => "standard",
            ProfileKind::Scale => "scale",
        }
    }

    /// Whether this binary was compiled with the feature the profile needs.
    pub const fn is_built(self) -> bool {
        match self {
            ProfileKind::Lite => true,
            ProfileKind::Standard => cfg!(feature = "standard"),
            ProfileKind::Scale => cfg!(feature = "scale"),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    profile: RawHeader,
    vectors: RawVectors,
    #[serde(default)]
    text: RawText,
    #[serde(default)]
    store: RawStore,
    #[serde(default)]
    tiers: RawTiers,
    #[serde(default)]
    hnsw: RawHnsw,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawStore {
    segment_capacity: usize,
    verify_on_open: bool,
}

impl Default for RawStore {
    fn default() -> Self {
        let s = SegmentStoreConfig::default();
        Self {
            segment_capacity: s.segment_capacity,
            verify_on_open: s.verify_on_open,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawTiers {
    hot_capacity: usize,
    lambda_per_day: f64,
    promote: f64,
    demote: f64,
    cold: f64,
}

impl Default for RawTiers {
    fn default() -> Self {
        let t = TierPolicy::default();
        Self {
            hot_capacity: DEFAULT_HOT_CAPACITY,
            lambda_per_day: t.lambda * SECONDS_PER_DAY,
            promote: t.promote,
            demote: t.demote,
            cold: t.cold,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawHnsw {
    threshold: usize,
    m: usize,
    ef_construction: usize,
    ef_search: usize,
}

impl Default for RawHnsw {
    fn default() -> Self {
        let s = SegmentStoreConfig::default();
        Self {
            threshold: s.hnsw_threshold,
            m: s.hnsw.m,
            ef_construction: s.hnsw.ef_construction,
            ef_search: s.hnsw.ef_search,
        }
    }
}

const SECONDS_PER_DAY: f64 = 86_400.0;
/// Default hot-tier capacity in vectors.
pub const DEFAULT_HOT_CAPACITY: usize = 100_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeader {
    name: ProfileKind,
    data_dir: PathBuf,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVectors {
    dim: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawText {
    seed: u64,
    ngram: usize,
    ngram_weight: f32,
    order_weight: f32,
    quantum: f32,
}

impl Default for RawText {
    fn default() -> Self {
        let t = TextConfig::default();
        Self {
            seed: t.seed,
            ngram: t.ngram,
            ngram_weight: t.ngram_weight,
            order_weight: t.order_weight,
            quantum: t.quantum,
        }
    }
}

/// A validated deployment profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// Which deployment.
    pub kind: ProfileKind,
    /// Where the profile keeps its files.
    pub data_dir: PathBuf,
    /// Hypervector dimension.
    pub dim: Dim,
    /// Text encoder settings.
    pub text: TextConfig,
    /// Segment store settings (including when and how HNSW is used).
    pub store: SegmentStoreConfig,
    /// Hot-tier capacity in vectors.
    pub hot_capacity: usize,
    /// LTP decay and tier thresholds.
    pub tiers: TierPolicy,
}

impl Profile {
    /// Loads and validates a profile file.
    ///
    /// # Errors
    /// [`ConfigError`] naming the file and, for bad values, the key.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses and validates profile TOML; `origin` names it in errors.
    ///
    /// # Errors
    /// [`ConfigError`] naming the key.
    pub fn parse(toml_text: &str, origin: &str) -> Result<Self, ConfigError> {
        let raw: RawProfile = toml::from_str(toml_text).map_err(|e| ConfigError::Parse {
            origin: origin.to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        let invalid = |key, reason: String| ConfigError::Invalid {
            origin: origin.to_owned(),
            key,
            reason,
        };
        let kind = raw.profile.name;
        if !kind.is_built() {
            return Err(ConfigError::NotBuilt {
                profile: kind.name().to_owned(),
                built: crate::PROFILE,
            });
        }
        if raw.profile.data_dir.as_os_str().is_empty() {
            return Err(invalid("profile.data_dir", "must not be empty".to_owned()));
        }
        let dim = Dim::new(raw.vectors.dim).map_err(|e| invalid("vectors.dim", e.to_string()))?;
        let t = raw.text;
        if t.ngram > 8 {
            return Err(invalid(
                "text.ngram",
                format!("must be 0..=8, got {}", t.ngram),
            ));
        }
        for (key, value) in [
            ("text.ngram_weight", t.ngram_weight),
            ("text.order_weight", t.order_weight),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(invalid(
                    key,
                    format!("must be a finite number >= 0, got {value}"),
                ));
            }
        }
        if !(t.quantum.is_finite() && t.quantum >= 1.0) {
            return Err(invalid(
                "text.quantum",
                format!("must be >= 1, got {}", t.quantum),
            ));
        }
        let st = raw.store;
        if st.segment_capacity == 0 || st.segment_capacity > 1 << 24 {
            return Err(invalid(
                "store.segment_capacity",
                format!("must be 1..=16777216 vectors, got {}", st.segment_capacity),
            ));
        }
        let ti = raw.tiers;
        for (key, value) in [
            ("tiers.lambda_per_day", ti.lambda_per_day),
            ("tiers.promote", ti.promote),
            ("tiers.demote", ti.demote),
            ("tiers.cold", ti.cold),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(invalid(
                    key,
                    format!("must be a finite number >= 0, got {value}"),
                ));
            }
        }
        if ti.demote > ti.promote {
            return Err(invalid(
                "tiers.demote",
                format!(
                    "must not exceed tiers.promote ({} > {})",
                    ti.demote, ti.promote
                ),
            ));
        }
        if ti.cold > ti.demote {
            return Err(invalid(
                "tiers.cold",
                format!("must not exceed tiers.demote ({} > {})", ti.cold, ti.demote),
            ));
        }
        let h = raw.hnsw;
        if !(2..=256).contains(&h.m) {
            return Err(invalid("hnsw.m", format!("must be 2..=256, got {}", h.m)));
        }
        if h.ef_construction < h.m {
            return Err(invalid(
                "hnsw.ef_construction",
                format!(
                    "must be at least hnsw.m ({}), got {}",
                    h.m, h.ef_construction
                ),
            ));
        }
        if h.ef_search == 0 {
            return Err(invalid("hnsw.ef_search", "must be at least 1".to_owned()));
        }
        if h.threshold == 0 {
            return Err(invalid(
                "hnsw.threshold",
                "must be at least 1 vector".to_owned(),
            ));
        }
        Ok(Self {
            kind,
            data_dir: raw.profile.data_dir,
            dim,
            store: SegmentStoreConfig {
                segment_capacity: st.segment_capacity,
                verify_on_open: st.verify_on_open,
                hnsw_threshold: h.threshold,
                hnsw: HnswConfig {
                    m: h.m,
                    ef_construction: h.ef_construction,
                    ef_search: h.ef_search,
                    max_elements: HnswConfig::default().max_elements,
                },
            },
            hot_capacity: ti.hot_capacity,
            tiers: TierPolicy {
                lambda: ti.lambda_per_day / SECONDS_PER_DAY,
                promote: ti.promote,
                demote: ti.demote,
                cold: ti.cold,
            },
            text: TextConfig {
                seed: t.seed,
                ngram: t.ngram,
                ngram_weight: t.ngram_weight,
                order_weight: t.order_weight,
                quantum: t.quantum,
            },
        })
    }

    /// The profile file shipped in this repository for `kind` (`profiles/<name>.toml`).
    pub fn bundled_path(kind: ProfileKind) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("profiles")
            .join(format!("{}.toml", kind.name()))
    }
}
