//! The settings of the service-backed tiers, owned by the store that reads them (the
//! profile, `config`, parses and validates them from `[redis]` and `[qdrant]`).

/// Settings of the Qdrant vector tier (`[qdrant]`, scale profile).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QdrantSettings {
    /// The gRPC endpoint, e.g. `http://127.0.0.1:6334` (`HYPERMEM_QDRANT_URL` overrides it
    /// in the CLI).
    pub url: String,
    /// Further gRPC endpoints of the same Qdrant cluster (any node answers for the whole
    /// collection): when the node in use is unreachable, a request goes to the next one
    /// before any backoff. Empty for a single server.
    pub nodes: Vec<String>,
    /// Name of the environment variable holding the API key (never the key itself); an
    /// unset variable means no key.
    pub api_key_env: String,
    /// The collection every project shares (a `project` keyword payload index marked as
    /// the tenant key scopes every request).
    pub collection: String,
    /// Shards of the collection when hypermem creates it.
    pub shard_number: u32,
    /// Copies of each shard.
    pub replication_factor: u32,
    /// Copies that must acknowledge a write.
    pub write_consistency_factor: u32,
    /// Keep the full-precision vectors on disk (the binary quantization stays in RAM).
    pub on_disk: bool,
    /// HNSW links per node.
    pub hnsw_m: u64,
    /// HNSW candidate list while building.
    pub hnsw_ef_construct: u64,
    /// HNSW candidate list while searching (at least k is used).
    pub ef_search: u64,
    /// Bits of each hypervector Qdrant indexes and searches (its first `index_bits`, as
    /// ±1): candidates come from them, and the full vector kept beside them re-ranks the
    /// candidates exactly. `index_bits >= D` indexes the whole vector (scores exact, no
    /// re-rank). Dense vectors travel as `f32`, so this sets the write cost.
    pub index_bits: usize,
    /// Candidates fetched per result when `index_bits < D` (at least k + 64).
    pub oversample: usize,
    /// Time one request may take.
    pub timeout: std::time::Duration,
    /// Time to connect.
    pub connect_timeout: std::time::Duration,
    /// Retries after a transport failure (unavailable, deadline) before `unavailable`.
    pub retries: u32,
    /// Pause before the first retry; doubled before each next one.
    pub retry_backoff: std::time::Duration,
}

impl QdrantSettings {
    /// Every endpoint, `url` first.
    pub fn endpoints(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.url.as_str()).chain(self.nodes.iter().map(String::as_str))
    }

    /// Sets the endpoints from a comma-separated list (`HYPERMEM_QDRANT_URL`): the first is
    /// `url`, the rest the `nodes`, tried in that order. A list without an entry changes
    /// nothing.
    pub fn set_endpoints(&mut self, list: &str) {
        let mut urls = list.split(',').map(str::trim).filter(|u| !u.is_empty());
        if let Some(first) = urls.next() {
            self.url = first.to_owned();
            self.nodes = urls.map(str::to_owned).collect();
        }
    }
}

impl Default for QdrantSettings {
    fn default() -> Self {
        use std::time::Duration;
        Self {
            url: "http://127.0.0.1:6334".to_owned(),
            nodes: Vec::new(),
            api_key_env: "QDRANT_API_KEY".to_owned(),
            collection: "hypermem".to_owned(),
            shard_number: 1,
            replication_factor: 1,
            write_consistency_factor: 1,
            on_disk: true,
            hnsw_m: 16,
            hnsw_ef_construct: 128,
            ef_search: 128,
            index_bits: 1024,
            oversample: 10,
            timeout: Duration::from_millis(10_000),
            connect_timeout: Duration::from_millis(2_000),
            retries: 3,
            retry_backoff: Duration::from_millis(100),
        }
    }
}

/// Settings of the Redis warm tier (`[redis]`, standard and scale profiles).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisSettings {
    /// `redis://[user:password@]host:port[/db]` or `unix:///path/to/socket`
    /// (`HYPERMEM_REDIS_URL` overrides it in the CLI).
    pub url: String,
    /// Prefix of every key, so several deployments can share one Redis.
    pub prefix: String,
    /// Connections kept open per process.
    pub pool_size: usize,
    /// Time to establish a connection.
    pub connect_timeout: std::time::Duration,
    /// Time one command may take (read and write timeouts of the socket).
    pub command_timeout: std::time::Duration,
    /// Retries of an operation after a connection failure (0: fail at once).
    pub retries: u32,
    /// Pause before the first retry; doubled before each next one.
    pub retry_backoff: std::time::Duration,
    /// How old a project's local mirror may be before a search asks Redis what changed
    /// (0: every search asks).
    pub refresh: std::time::Duration,
}

impl Default for RedisSettings {
    fn default() -> Self {
        use std::time::Duration;
        Self {
            url: "redis://127.0.0.1:6379".to_owned(),
            prefix: "hypermem".to_owned(),
            pool_size: 8,
            connect_timeout: Duration::from_millis(2_000),
            command_timeout: Duration::from_millis(5_000),
            retries: 3,
            retry_backoff: Duration::from_millis(50),
            refresh: Duration::from_millis(50),
        }
    }
}

impl RedisSettings {
    /// The URL with any password replaced by `***` (for messages and logs).
    pub fn redacted_url(&self) -> String {
        redact_url(&self.url)
    }
}

/// `url` with the password of its user-info part (`user:password@`) replaced by `***`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => {
            let info = &rest[..at];
            let user = info.split_once(':').map_or(info, |(u, _)| u);
            let masked = if info.contains(':') {
                format!("{user}:***")
            } else {
                "***".to_owned()
            };
            format!("{scheme}://{masked}{}", &rest[at..])
        }
        None => url.to_owned(),
    }
}
