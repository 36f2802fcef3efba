//! Deployment profiles: typed, validated settings loaded from `profiles/<name>.toml`.
//!
//! A profile names its deployment (`lite`, `standard`, `scale`); loading one whose cargo
//! feature is not compiled in is an error, never a silent fallback. Every key is checked:
//! unknown keys and invalid values are errors that name the key.

use std::path::{Path, PathBuf};

use hdv::Dim;
use hdv::encode::TextConfig;

use crate::cognition::{CognitionConfig, PulseBudget};
use crate::index::HnswConfig;
mod recall;

pub use crate::store::{QdrantSettings, RedisSettings, redact_url};
use crate::store::{SegmentStoreConfig, TierPolicy};
pub use recall::{RecallSettings, TurnRegime};
use serde::Deserialize;

/// The deployment profile this build was compiled for.
pub const PROFILE: &str = if cfg!(feature = "scale") {
    "scale"
} else if cfg!(feature = "standard") {
    "standard"
} else {
    "lite"
};

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
    #[serde(default)]
    cognition: RawCognition,
    #[serde(default)]
    pulse: RawPulse,
    #[serde(default)]
    recall: RecallSettings,
    #[serde(default)]
    semantic: RawSemantic,
    #[serde(default)]
    server: RawServer,
    redis: Option<RawRedis>,
    qdrant: Option<RawQdrant>,
    ledger: Option<RawLedger>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawLedger {
    url: String,
    password_env: String,
}

impl Default for RawLedger {
    fn default() -> Self {
        Self {
            url: String::new(),
            password_env: LedgerSettings::DEFAULT_PASSWORD_ENV.to_owned(),
        }
    }
}

/// Where the scale profile keeps its ledger: a PostgreSQL server every node shares, or
/// (no `url`) the SQLite file in the data directory, as lite and standard do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerSettings {
    /// `postgres://user@host:port/database`, without the password; `None`: SQLite.
    pub url: Option<String>,
    /// The environment variable holding the password (unset: none is sent).
    pub password_env: String,
}

impl LedgerSettings {
    /// The variable read for the password when the profile names none.
    pub const DEFAULT_PASSWORD_ENV: &'static str = "HYPERMEM_LEDGER_PASSWORD";

    /// The password from [`password_env`](Self::password_env), if it is set and not empty.
    pub fn password(&self) -> Option<String> {
        overriding(std::env::var(&self.password_env).ok())
    }
}

fn validate_ledger(raw: RawLedger, origin: &str) -> Result<LedgerSettings, ConfigError> {
    let invalid = |key, reason: String| ConfigError::Invalid {
        origin: origin.to_owned(),
        key,
        reason,
    };
    if raw.password_env.is_empty()
        || !raw
            .password_env
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return Err(invalid(
            "ledger.password_env",
            format!(
                "must name an environment variable (letters, digits, '_'), got {:?}",
                raw.password_env
            ),
        ));
    }
    let url = raw.url.trim();
    if url.is_empty() {
        return Ok(LedgerSettings {
            url: None,
            password_env: raw.password_env,
        });
    }
    let Some(rest) = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
    else {
        return Err(invalid(
            "ledger.url",
            format!(
                "`{}` is not a URL such as postgres://hypermem@127.0.0.1:5432/hypermem",
                redact_url(url)
            ),
        ));
    };
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    if let Some((user, _)) = authority.rsplit_once('@')
        && user.contains(':')
    {
        return Err(invalid(
            "ledger.url",
            format!(
                "holds a password: it never goes in a profile; set it in the environment variable {} (ledger.password_env)",
                raw.password_env
            ),
        ));
    }
    Ok(LedgerSettings {
        url: Some(url.to_owned()),
        password_env: raw.password_env,
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawQdrant {
    url: String,
    nodes: Vec<String>,
    api_key_env: String,
    collection: String,
    shard_number: u32,
    replication_factor: u32,
    write_consistency_factor: u32,
    on_disk: bool,
    hnsw_m: u64,
    hnsw_ef_construct: u64,
    ef_search: u64,
    index_bits: usize,
    oversample: usize,
    timeout_ms: u64,
    connect_timeout_ms: u64,
    retries: u32,
    retry_backoff_ms: u64,
}

impl Default for RawQdrant {
    fn default() -> Self {
        let q = QdrantSettings::default();
        Self {
            url: q.url,
            nodes: q.nodes,
            api_key_env: q.api_key_env,
            collection: q.collection,
            shard_number: q.shard_number,
            replication_factor: q.replication_factor,
            write_consistency_factor: q.write_consistency_factor,
            on_disk: q.on_disk,
            hnsw_m: q.hnsw_m,
            hnsw_ef_construct: q.hnsw_ef_construct,
            ef_search: q.ef_search,
            index_bits: q.index_bits,
            oversample: q.oversample,
            timeout_ms: q.timeout.as_millis() as u64,
            connect_timeout_ms: q.connect_timeout.as_millis() as u64,
            retries: q.retries,
            retry_backoff_ms: q.retry_backoff.as_millis() as u64,
        }
    }
}

/// `value` within `range` (inclusive), else an error naming `key`: "must be a..=b
/// <unit>, got v".
fn in_range<T: PartialOrd + std::fmt::Display>(
    origin: &str,
    key: &'static str,
    value: T,
    range: std::ops::RangeInclusive<T>,
    unit: &str,
) -> Result<(), ConfigError> {
    if range.contains(&value) {
        return Ok(());
    }
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    Err(ConfigError::Invalid {
        origin: origin.to_owned(),
        key,
        reason: format!(
            "must be {}..={}{unit}, got {value}",
            range.start(),
            range.end()
        ),
    })
}

/// The retry settings every service section has.
fn check_retries(
    origin: &str,
    keys: [&'static str; 2],
    retries: u32,
    backoff_ms: u64,
) -> Result<(), ConfigError> {
    in_range(origin, keys[0], retries, 0..=100, "")?;
    in_range(origin, keys[1], backoff_ms, 0..=60_000, "milliseconds")
}

fn validate_qdrant(raw: RawQdrant, origin: &str) -> Result<QdrantSettings, ConfigError> {
    use std::time::Duration;
    let invalid = |key, reason: String| ConfigError::Invalid {
        origin: origin.to_owned(),
        key,
        reason,
    };
    let grpc = |url: &str| url.starts_with("http://") || url.starts_with("https://");
    if !grpc(&raw.url) {
        return Err(invalid(
            "qdrant.url",
            format!(
                "`{}` is not a gRPC URL such as http://127.0.0.1:6334",
                redact_url(&raw.url)
            ),
        ));
    }
    if let Some(bad) = raw.nodes.iter().find(|u| !grpc(u)) {
        return Err(invalid(
            "qdrant.nodes",
            format!(
                "`{}` is not a gRPC URL such as http://127.0.0.2:6334",
                redact_url(bad)
            ),
        ));
    }
    if raw.nodes.len() > 64 {
        return Err(invalid(
            "qdrant.nodes",
            format!("lists at most 64 further nodes, got {}", raw.nodes.len()),
        ));
    }
    if raw.api_key_env.is_empty()
        || !raw
            .api_key_env
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return Err(invalid(
            "qdrant.api_key_env",
            format!(
                "must name an environment variable (letters, digits, '_'), got {:?}; the key itself never goes in the file",
                raw.api_key_env
            ),
        ));
    }
    if raw.collection.is_empty()
        || raw.collection.len() > 255
        || !raw
            .collection
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    {
        return Err(invalid(
            "qdrant.collection",
            format!(
                "must be 1-255 ASCII letters, digits, '-', '_' or '.', got {:?}",
                raw.collection
            ),
        ));
    }
    for (key, value) in [
        ("qdrant.shard_number", raw.shard_number),
        ("qdrant.replication_factor", raw.replication_factor),
        (
            "qdrant.write_consistency_factor",
            raw.write_consistency_factor,
        ),
    ] {
        in_range(origin, key, value, 1..=1024, "")?;
    }
    if raw.write_consistency_factor > raw.replication_factor {
        return Err(invalid(
            "qdrant.write_consistency_factor",
            format!(
                "must be at most replication_factor ({}), got {}",
                raw.replication_factor, raw.write_consistency_factor
            ),
        ));
    }
    in_range(origin, "qdrant.hnsw_m", raw.hnsw_m, 4..=256, "")?;
    in_range(
        origin,
        "qdrant.hnsw_ef_construct",
        raw.hnsw_ef_construct,
        4..=10_000,
        "",
    )?;
    in_range(origin, "qdrant.ef_search", raw.ef_search, 4..=10_000, "")?;
    if raw.index_bits < 64 || !raw.index_bits.is_multiple_of(64) || raw.index_bits > 1 << 20 {
        return Err(invalid(
            "qdrant.index_bits",
            format!(
                "must be a positive multiple of 64 (up to 1048576), got {}",
                raw.index_bits
            ),
        ));
    }
    in_range(origin, "qdrant.oversample", raw.oversample, 1..=1_000, "")?;
    for (key, value) in [
        ("qdrant.timeout_ms", raw.timeout_ms),
        ("qdrant.connect_timeout_ms", raw.connect_timeout_ms),
    ] {
        in_range(origin, key, value, 1..=600_000, "milliseconds")?;
    }
    check_retries(
        origin,
        ["qdrant.retries", "qdrant.retry_backoff_ms"],
        raw.retries,
        raw.retry_backoff_ms,
    )?;
    Ok(QdrantSettings {
        url: raw.url,
        nodes: raw.nodes,
        api_key_env: raw.api_key_env,
        collection: raw.collection,
        shard_number: raw.shard_number,
        replication_factor: raw.replication_factor,
        write_consistency_factor: raw.write_consistency_factor,
        on_disk: raw.on_disk,
        hnsw_m: raw.hnsw_m,
        hnsw_ef_construct: raw.hnsw_ef_construct,
        ef_search: raw.ef_search,
        index_bits: raw.index_bits,
        oversample: raw.oversample,
        timeout: Duration::from_millis(raw.timeout_ms),
        connect_timeout: Duration::from_millis(raw.connect_timeout_ms),
        retries: raw.retries,
        retry_backoff: Duration::from_millis(raw.retry_backoff_ms),
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawRedis {
    url: String,
    prefix: String,
    pool_size: usize,
    connect_timeout_ms: u64,
    command_timeout_ms: u64,
    retries: u32,
    retry_backoff_ms: u64,
    refresh_ms: u64,
}

impl Default for RawRedis {
    fn default() -> Self {
        let r = RedisSettings::default();
        Self {
            url: r.url,
            prefix: r.prefix,
            pool_size: r.pool_size,
            connect_timeout_ms: r.connect_timeout.as_millis() as u64,
            command_timeout_ms: r.command_timeout.as_millis() as u64,
            retries: r.retries,
            retry_backoff_ms: r.retry_backoff.as_millis() as u64,
            refresh_ms: r.refresh.as_millis() as u64,
        }
    }
}

fn validate_redis(raw: RawRedis, origin: &str) -> Result<RedisSettings, ConfigError> {
    use std::time::Duration;
    let invalid = |key, reason: String| ConfigError::Invalid {
        origin: origin.to_owned(),
        key,
        reason,
    };
    let scheme = raw.url.split_once("://").map(|(s, _)| s);
    match scheme {
        Some("redis" | "unix" | "redis+unix") => {}
        Some("rediss") => {
            return Err(invalid(
                "redis.url",
                "TLS (`rediss://`) is not built into this binary; use `redis://` or a unix socket"
                    .to_owned(),
            ));
        }
        _ => {
            return Err(invalid(
                "redis.url",
                format!(
                    "`{}` is not a URL such as redis://127.0.0.1:6379 or unix:///run/redis.sock",
                    redact_url(&raw.url)
                ),
            ));
        }
    }
    if raw.prefix.is_empty()
        || raw.prefix.len() > 64
        || !raw
            .prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
    {
        return Err(invalid(
            "redis.prefix",
            format!(
                "must be 1-64 ASCII letters, digits, '-', '_', '.' or ':', got {:?}",
                raw.prefix
            ),
        ));
    }
    in_range(
        origin,
        "redis.pool_size",
        raw.pool_size,
        1..=256,
        "connections",
    )?;
    for (key, value) in [
        ("redis.connect_timeout_ms", raw.connect_timeout_ms),
        ("redis.command_timeout_ms", raw.command_timeout_ms),
    ] {
        in_range(origin, key, value, 1..=600_000, "milliseconds")?;
    }
    check_retries(
        origin,
        ["redis.retries", "redis.retry_backoff_ms"],
        raw.retries,
        raw.retry_backoff_ms,
    )?;
    in_range(
        origin,
        "redis.refresh_ms",
        raw.refresh_ms,
        0..=60_000,
        "milliseconds",
    )?;
    Ok(RedisSettings {
        url: raw.url,
        prefix: raw.prefix,
        pool_size: raw.pool_size,
        connect_timeout: Duration::from_millis(raw.connect_timeout_ms),
        command_timeout: Duration::from_millis(raw.command_timeout_ms),
        retries: raw.retries,
        retry_backoff: Duration::from_millis(raw.retry_backoff_ms),
        refresh: Duration::from_millis(raw.refresh_ms),
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawServer {
    listen: Option<String>,
    tokens: Option<PathBuf>,
}

/// Settings of `hypermem serve` (`[server]`); command-line flags override them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerSettings {
    /// Address to listen on (default `127.0.0.1:7878`).
    pub listen: Option<std::net::SocketAddr>,
    /// Bearer-token file (TOML `[[token]]` tables); relative paths are relative to the
    /// profile's directory when loaded from a file.
    pub tokens: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawSemantic {
    model: Option<PathBuf>,
    bits: usize,
    item_memory: bool,
    windows: crate::semantic::Windows,
}

impl Default for RawSemantic {
    fn default() -> Self {
        Self {
            model: None,
            bits: SemanticSettings::default().bits.bits(),
            item_memory: false,
            windows: crate::semantic::Windows::default(),
        }
    }
}

/// Semantic recall settings of a profile (`[semantic]`).
#[derive(Debug, Clone, PartialEq)]
pub struct SemanticSettings {
    /// A local embedding model directory: a static model (model2vec) or a sentence model
    /// (BERT family, sentence-transformers layout, `--features sentence`); `None`: only
    /// caller-supplied embeddings are semantic. A relative path is read from the working
    /// directory.
    pub model: Option<PathBuf>,
    /// Bits of the sign projection every embedding is stored as.
    pub bits: Dim,
    /// Whether the model is also the HDC text encoder's item memory for words (each word's
    /// hypervector the sign projection of its embedding instead of a random vector).
    pub item_memory: bool,
    /// How a sentence model reads a text longer than its window: every window averaged,
    /// or the first only.
    pub windows: crate::semantic::Windows,
}

impl Default for SemanticSettings {
    fn default() -> Self {
        Self {
            model: None,
            bits: Dim::new(8192).expect("a multiple of 64"),
            item_memory: false,
            windows: crate::semantic::Windows::default(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawCognition {
    working_capacity: usize,
    working_tau_secs: f64,
    episode_idle_secs: f64,
    topic_shift_similarity: f64,
    concept_similarity: f64,
    concept_z: f64,
    max_concepts: usize,
    synapse_rate: f64,
    synapse_decay_per_day: f64,
}

impl Default for RawCognition {
    fn default() -> Self {
        let c = CognitionConfig::default();
        Self {
            working_capacity: c.working_capacity,
            working_tau_secs: c.working_tau_secs,
            episode_idle_secs: c.episode_idle_ms as f64 / 1000.0,
            topic_shift_similarity: c.topic_shift_similarity,
            concept_similarity: c.concept_similarity,
            concept_z: c.concept_z,
            max_concepts: c.max_concepts,
            synapse_rate: c.synapse_rate,
            synapse_decay_per_day: c.synapse_decay_per_day,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawPulse {
    background: bool,
    interval_secs: f64,
    items_per_phase: usize,
    time_per_phase_ms: u64,
}

impl Default for RawPulse {
    fn default() -> Self {
        let b = PulseBudget::default();
        Self {
            background: false,
            interval_secs: 300.0,
            items_per_phase: b.items_per_phase,
            time_per_phase_ms: b.time_per_phase.as_millis() as u64,
        }
    }
}

/// Pulse settings of a profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PulseSettings {
    /// Whether a background runner ticks on its own (otherwise the host calls `tick`).
    pub background: bool,
    /// Interval between background ticks.
    pub interval: std::time::Duration,
    /// Budgets of one tick.
    pub budget: PulseBudget,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawStore {
    segment_capacity: usize,
    verify_on_open: bool,
    prefix_bits: usize,
    prefix_threshold: usize,
}

impl Default for RawStore {
    fn default() -> Self {
        let s = SegmentStoreConfig::default();
        Self {
            segment_capacity: s.segment_capacity,
            verify_on_open: s.verify_on_open,
            prefix_bits: s.prefix_bits,
            prefix_threshold: s.prefix_threshold,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawTiers {
    hot_capacity: usize,
    open_projects: usize,
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
            open_projects: DEFAULT_OPEN_PROJECTS,
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
/// Default bound on the projects whose in-RAM text indexes one process keeps open
/// ([`Profile::open_projects`]).
pub const DEFAULT_OPEN_PROJECTS: usize = 256;

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
    /// Projects whose derived in-RAM indexes (the lexical index and the semantic space,
    /// about 15 MB for a project of a thousand 2 KB turns) one process keeps open at once:
    /// opening one more closes the least recently used (its lexical index saved first; it
    /// is read back from that file when the project is next used). 0: no bound.
    pub open_projects: usize,
    /// LTP decay and tier thresholds.
    pub tiers: TierPolicy,
    /// Cognitive layer settings.
    pub cognition: CognitionConfig,
    /// Pulse settings.
    pub pulse: PulseSettings,
    /// Recall fusion settings.
    pub recall: RecallSettings,
    /// The semantic space: model and projection.
    pub semantic: SemanticSettings,
    /// The HTTP server.
    pub server: ServerSettings,
    /// The Redis warm tier: set on the standard and scale profiles (defaults when the
    /// profile has no `[redis]` section), `None` on lite.
    pub redis: Option<RedisSettings>,
    /// The Qdrant vector tier: set on the scale profile (defaults without a `[qdrant]`
    /// section), `None` otherwise.
    pub qdrant: Option<QdrantSettings>,
    /// Where the ledger is: on the scale profile, a PostgreSQL server when `[ledger] url`
    /// is set; otherwise (every other profile) the SQLite file of the data directory.
    pub ledger: LedgerSettings,
}

/// An environment override's value: none when unset or empty (`HYPERMEM_REDIS_URL=`).
fn overriding(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
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
        let mut profile = Self::parse(&text, &path.display().to_string())?;
        if let (Some(tokens), Some(dir)) = (&profile.server.tokens, path.parent())
            && tokens.is_relative()
        {
            profile.server.tokens = Some(dir.join(tokens));
        }
        Ok(profile)
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
                built: PROFILE,
            });
        }
        let redis = match (kind, raw.redis) {
            (ProfileKind::Lite, Some(_)) => {
                return Err(invalid(
                    "redis",
                    "the lite profile has no Redis tier (use the standard profile)".to_owned(),
                ));
            }
            (ProfileKind::Lite, None) => None,
            (_, section) => Some(validate_redis(section.unwrap_or_default(), origin)?),
        };
        let qdrant = match (kind, raw.qdrant) {
            (ProfileKind::Scale, section) => {
                Some(validate_qdrant(section.unwrap_or_default(), origin)?)
            }
            (_, Some(_)) => {
                return Err(invalid(
                    "qdrant",
                    format!(
                        "the {} profile has no Qdrant tier (use the scale profile)",
                        kind.name()
                    ),
                ));
            }
            (_, None) => None,
        };
        let ledger = match (kind, raw.ledger) {
            (ProfileKind::Scale, section) => validate_ledger(section.unwrap_or_default(), origin)?,
            (_, Some(section)) if !section.url.trim().is_empty() => {
                return Err(invalid(
                    "ledger.url",
                    format!(
                        "the {} profile keeps its ledger in its data directory (a shared PostgreSQL ledger is the scale profile's)",
                        kind.name()
                    ),
                ));
            }
            (_, section) => validate_ledger(section.unwrap_or_default(), origin)?,
        };
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
        if !st.prefix_bits.is_multiple_of(64) || st.prefix_bits >= dim.bits() {
            return Err(invalid(
                "store.prefix_bits",
                format!(
                    "must be a multiple of 64 below vectors.dim ({}), or 0 to scan every bit; got {}",
                    dim.bits(),
                    st.prefix_bits
                ),
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
        let cg = raw.cognition;
        if cg.working_capacity == 0 {
            return Err(invalid(
                "cognition.working_capacity",
                "must be at least 1".to_owned(),
            ));
        }
        for (key, value) in [
            ("cognition.working_tau_secs", cg.working_tau_secs),
            ("cognition.episode_idle_secs", cg.episode_idle_secs),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(invalid(
                    key,
                    format!("must be a positive number, got {value}"),
                ));
            }
        }
        for (key, value) in [
            (
                "cognition.topic_shift_similarity",
                cg.topic_shift_similarity,
            ),
            ("cognition.concept_similarity", cg.concept_similarity),
        ] {
            if !(-1.0..=1.0).contains(&value) {
                return Err(invalid(
                    key,
                    format!("must be a similarity in [-1, 1], got {value}"),
                ));
            }
        }
        if !(cg.synapse_rate > 0.0 && cg.synapse_rate < 1.0) {
            return Err(invalid(
                "cognition.synapse_rate",
                format!("must be in (0, 1), got {}", cg.synapse_rate),
            ));
        }
        if !(cg.synapse_decay_per_day.is_finite() && cg.synapse_decay_per_day >= 0.0) {
            return Err(invalid(
                "cognition.synapse_decay_per_day",
                format!(
                    "must be a finite number >= 0, got {}",
                    cg.synapse_decay_per_day
                ),
            ));
        }
        if let Some((key, value)) = raw.recall.invalid_weight() {
            return Err(invalid(
                key,
                format!("must be a finite number >= 0, got {value}"),
            ));
        }
        let recall = raw.recall;
        let pu = raw.pulse;
        if !(pu.interval_secs.is_finite() && pu.interval_secs > 0.0) {
            return Err(invalid(
                "pulse.interval_secs",
                format!("must be positive, got {}", pu.interval_secs),
            ));
        }
        if pu.items_per_phase == 0 {
            return Err(invalid(
                "pulse.items_per_phase",
                "must be at least 1".to_owned(),
            ));
        }
        if cg.max_concepts == 0 {
            return Err(invalid(
                "cognition.max_concepts",
                "must be at least 1".to_owned(),
            ));
        }
        if !(0.0..=20.0).contains(&cg.concept_z) {
            return Err(invalid(
                "cognition.concept_z",
                format!("must be a z-score in [0, 20], got {}", cg.concept_z),
            ));
        }
        Ok(Self {
            kind,
            redis,
            qdrant,
            ledger,
            data_dir: raw.profile.data_dir,
            dim,
            cognition: CognitionConfig {
                working_capacity: cg.working_capacity,
                working_tau_secs: cg.working_tau_secs,
                episode_idle_ms: (cg.episode_idle_secs * 1000.0) as i64,
                topic_shift_similarity: cg.topic_shift_similarity,
                topic_min_events: CognitionConfig::default().topic_min_events,
                concept_similarity: cg.concept_similarity,
                concept_z: cg.concept_z,
                max_concepts: cg.max_concepts,
                synapse_rate: cg.synapse_rate,
                synapse_decay_per_day: cg.synapse_decay_per_day,
            },
            recall,
            semantic: SemanticSettings {
                model: raw.semantic.model,
                item_memory: raw.semantic.item_memory,
                windows: raw.semantic.windows,
                bits: Dim::new(raw.semantic.bits).map_err(|e| {
                    invalid(
                        "semantic.bits",
                        format!("{e} (a positive multiple of 64, e.g. 8192)"),
                    )
                })?,
            },
            server: ServerSettings {
                listen: raw
                    .server
                    .listen
                    .as_deref()
                    .map(|a| {
                        a.parse().map_err(|_| {
                            invalid(
                                "server.listen",
                                format!("`{a}` is not an address such as 127.0.0.1:7878"),
                            )
                        })
                    })
                    .transpose()?,
                tokens: raw.server.tokens,
            },
            pulse: PulseSettings {
                background: pu.background,
                interval: std::time::Duration::from_secs_f64(pu.interval_secs),
                budget: PulseBudget {
                    items_per_phase: pu.items_per_phase,
                    time_per_phase: std::time::Duration::from_millis(pu.time_per_phase_ms),
                },
            },
            store: SegmentStoreConfig {
                segment_capacity: st.segment_capacity,
                verify_on_open: st.verify_on_open,
                hnsw_threshold: h.threshold,
                hnsw: HnswConfig {
                    m: h.m,
                    ef_construction: h.ef_construction,
                    ef_search: h.ef_search,
                    max_elements: HnswConfig::default().max_elements,
                    screen_bits: HnswConfig::default().screen_bits,
                },
                prefix_bits: st.prefix_bits,
                prefix_threshold: st.prefix_threshold,
                lock_wait_ms: SegmentStoreConfig::default().lock_wait_ms,
            },
            hot_capacity: ti.hot_capacity,
            open_projects: ti.open_projects,
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

    /// The profile with the operator's environment overrides: `HYPERMEM_LOCK_WAIT_MS`
    /// (how long a writer waits for another process's store lock), `HYPERMEM_REDIS_URL`,
    /// `HYPERMEM_QDRANT_URL` and, on scale, `HYPERMEM_LEDGER_URL` (where the profile's
    /// services are; for Qdrant, a comma-separated list names the nodes of a cluster); an
    /// empty value overrides nothing.
    #[must_use]
    pub fn with_env(mut self) -> Self {
        if let Some(ms) = std::env::var("HYPERMEM_LOCK_WAIT_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            self.store.lock_wait_ms = ms;
        }
        // A variable set but empty (`HYPERMEM_REDIS_URL=`) overrides nothing.
        let set = |name: &str| overriding(std::env::var(name).ok());
        if let (Some(redis), Some(url)) = (&mut self.redis, set("HYPERMEM_REDIS_URL")) {
            redis.url = url;
        }
        // A comma-separated list names the nodes of a cluster, the first tried first.
        if let (Some(qdrant), Some(urls)) = (&mut self.qdrant, set("HYPERMEM_QDRANT_URL")) {
            qdrant.set_endpoints(&urls);
        }
        if let (ProfileKind::Scale, Some(url)) = (self.kind, set("HYPERMEM_LEDGER_URL")) {
            self.ledger.url = Some(url);
        }
        self
    }

    /// The profile compiled into this binary for `kind` (the repository's
    /// `profiles/<name>.toml` at build time), for installs without the repository.
    ///
    /// # Errors
    /// [`ConfigError::NotBuilt`] if this binary lacks the profile's feature.
    pub fn builtin(kind: ProfileKind) -> Result<Self, ConfigError> {
        let text = match kind {
            ProfileKind::Lite => include_str!("../../profiles/lite.toml"),
            ProfileKind::Standard => include_str!("../../profiles/standard.toml"),
            ProfileKind::Scale => include_str!("../../profiles/scale.toml"),
        };
        Self::parse(text, &format!("<built-in {}>", kind.name()))
    }

    /// The profile file shipped in this repository for `kind` (`profiles/<name>.toml`).
    pub fn bundled_path(kind: ProfileKind) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("profiles")
            .join(format!("{}.toml", kind.name()))
    }
}

#[cfg(test)]
mod tests {
    use super::overriding;

    #[test]
    fn an_empty_environment_override_overrides_nothing() {
        assert_eq!(overriding(None), None);
        assert_eq!(overriding(Some(String::new())), None);
        assert_eq!(overriding(Some("  ".into())), None);
        assert_eq!(
            overriding(Some("redis://127.0.0.1:6380".into())).as_deref(),
            Some("redis://127.0.0.1:6380")
        );
    }
}
