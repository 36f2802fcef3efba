//! [`QdrantTier`]: the scale profile's vector tier on a Qdrant server (gRPC), the durable
//! home of every vector of a deployment that has outgrown one machine.
//!
//! Layout (measured choices in `docs/ARCHITECTURE.md`, bytes in `docs/FORMAT.md`): one
//! collection for every project. Each point's dense vector is the first `n = min(D,
//! qdrant.index_bits)` bits of the hypervector as bipolar ±1 (`bit 1 → +1`), with
//! `Distance::Dot`, stored as `float16` (exact for ±1), on disk when `on_disk`, with binary
//! quantization always in RAM. The binary quantization of a ±1 vector is its own bits, so
//! Qdrant's quantized score is exactly `n − 2·Hamming` over those bits, asked for without
//! rescoring (a rescore would read the float vectors from disk to compute the same
//! number). The full hypervector is in the payload (`bits`, base64 of the packed words):
//! when `n < D`, a search takes `oversample · k` candidates from Qdrant and re-ranks them
//! exactly with the `hdv` kernel; when `n = D` the scores are the exact distances. Dense
//! vectors travel as `f32` (32 KB for 8,192 bits), and Qdrant's write cost grows with
//! their length, so `index_bits` sets the insert rate. A `project` keyword payload index
//! marked as the tenant key scopes every request; the point id is a UUID derived from
//! `(project, vector id)` (ids repeat across projects); the payload also carries `vid`.
//! The collection's metadata records `D` and `n`.
//!
//! The client is async; this tier owns a small tokio runtime and waits on a channel, so
//! it can be called from any thread, inside an async runtime or not. Every write waits for
//! Qdrant's acknowledgement (`wait = true`: in the WAL of `write_consistency_factor`
//! replicas) before it returns.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use hdv::{Dim, HvRef, Hypervector};
use qdrant_client::qdrant::{
    BinaryQuantizationBuilder, Condition, CountPointsBuilder, CreateCollectionBuilder,
    CreateFieldIndexCollectionBuilder, DeletePointsBuilder, Distance, FacetCountsBuilder,
    FieldType, Filter, GetPointsBuilder, HnswConfigDiffBuilder, KeywordIndexParamsBuilder,
    PayloadIncludeSelector, PointId, PointStruct, PointsIdsList, QuantizationSearchParamsBuilder,
    QueryPointsBuilder, ScrollPointsBuilder, SearchParamsBuilder, UpsertPointsBuilder, Value,
    VectorParamsBuilder, facet_value, value,
};
use qdrant_client::{Qdrant, QdrantError};

use super::error::{StoreError, StoreResult};
use super::{Hit, ProjectId, SearchRequest, VectorId, VectorTier, push_hit};
use super::{QdrantSettings, redact_url};

/// Bytes of points one upsert request carries at most (the indexed bits as `f32`s and the
/// packed vector): a batch goes in as few requests as fit, each far below gRPC's limit.
const UPSERT_BYTES: usize = 8 << 20;
/// Points per scroll page when listing ids.
const SCROLL_PAGE: u32 = 10_000;
/// Projects a facet lists at most.
const MAX_PROJECTS: u64 = 1_000_000;

/// The scale profile's vector tier; see the module documentation.
pub struct QdrantTier {
    dim: Dim,
    settings: QdrantSettings,
    /// Every endpoint redacted, for messages (the nodes in order).
    url: String,
    /// One client per endpoint of the cluster (`url`, then `nodes`).
    clients: Vec<Arc<Qdrant>>,
    /// The client requests go to: the first that answered, moved on when it stops.
    active: std::sync::atomic::AtomicUsize,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for QdrantTier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QdrantTier")
            .field("url", &self.url)
            .field("collection", &self.settings.collection)
            .field("dim", &self.dim)
            .finish()
    }
}

/// Whether a failed request may succeed when repeated (server down or restarting, a
/// timeout, a rate limit).
fn transient(e: &QdrantError) -> bool {
    match e {
        // gRPC status codes (the client's `tonic::Code` by number, so this tier does not
        // name the client's tonic version).
        QdrantError::ResponseError { status } => match status.code() as i32 {
            // cancelled, unknown, deadline exceeded, aborted, unavailable
            1 | 2 | 4 | 10 | 14 => true,
            // internal, failed precondition: by what the message says.
            9 | 13 => transient_internal(status.message()),
            _ => false,
        },
        QdrantError::ResourceExhaustedError { .. } | QdrantError::Io(_) => true,
        _ => false,
    }
}

/// Whether an internal or failed-precondition error's message says the cluster is passing
/// through a state, not that anything is wrong with the data: the client reports a
/// refused or dropped connection so, with the transport error as the message; so does a
/// cluster node whose peer (a shard's replica or leader) is down, until the cluster marks
/// it dead, and one whose shard has no target while its replica set changes after a node
/// died ("No target shard 0 found for update", as an internal error or a failed
/// precondition: seen in CI and in local runs with a node killed mid-write), or whose
/// replicas are not active yet ("does not have enough active replicas").
fn transient_internal(message: &str) -> bool {
    [
        "Failed to connect",
        "transport error",
        "tcp connect error",
        "currently unavailable",
        "No target shard",
        "does not have enough active replicas",
    ]
    .iter()
    .any(|cause| message.contains(cause))
}

/// The point id of `(project, id)`: a UUID from a 128-bit hash (ids repeat across the
/// projects of one collection).
fn point_id(project: &ProjectId, id: VectorId) -> PointId {
    let mut key = Vec::with_capacity(project.as_str().len() + 9);
    key.extend_from_slice(project.as_str().as_bytes());
    key.push(0);
    key.extend_from_slice(&id.0.to_le_bytes());
    let h = xxhash_rust::xxh3::xxh3_128(&key);
    let b = h.to_be_bytes();
    let hex =
        |r: std::ops::Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
    PointId::from(format!(
        "{}-{}-{}-{}-{}",
        hex(0..4),
        hex(4..6),
        hex(6..8),
        hex(8..10),
        hex(10..16)
    ))
}

/// The ±1 form of the first `n` bits of a hypervector (`bit 1 → +1`, `bit 0 → −1`).
fn bipolar(v: HvRef<'_>, n: usize) -> Vec<f32> {
    let words = v.words();
    (0..n.min(v.dim().bits()))
        .map(|i| {
            if words[i / 64] >> (i % 64) & 1 == 1 {
                1.0
            } else {
                -1.0
            }
        })
        .collect()
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The packed words, little-endian, in standard base64 with padding.
fn encode_words(words: &[u64]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(BASE64[(n >> shift & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The words [`encode_words`] wrote, if `text` is base64 of exactly `words` words.
fn decode_words(text: &str, words: usize) -> Option<Vec<u64>> {
    let mut bytes = Vec::with_capacity(words * 8);
    let digits = text.trim_end_matches('=').as_bytes();
    let value = |c: u8| BASE64.iter().position(|&b| b == c).map(|p| p as u32);
    for chunk in digits.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i as u32);
        }
        let produced = chunk.len().saturating_sub(1);
        for i in 0..produced {
            bytes.push((n >> (16 - 8 * i as u32)) as u8);
        }
    }
    if bytes.len() != words * 8 {
        return None;
    }
    Some(
        bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect(),
    )
}

fn project_filter(project: &ProjectId) -> Filter {
    Filter::must([Condition::matches("project", project.as_str().to_owned())])
}

fn payload_str<'a>(
    payload: &'a std::collections::HashMap<String, Value>,
    key: &str,
) -> Option<&'a str> {
    match payload.get(key)?.kind.as_ref()? {
        value::Kind::StringValue(s) => Some(s),
        _ => None,
    }
}

fn payload_vid(payload: &std::collections::HashMap<String, Value>) -> Option<VectorId> {
    match payload.get("vid")?.kind.as_ref()? {
        value::Kind::IntegerValue(n) => u64::try_from(*n).ok().map(VectorId),
        _ => None,
    }
}

impl QdrantTier {
    /// Connects to the Qdrant of `settings` (API key from the environment variable it
    /// names), and creates the collection with the profile's layout if it does not exist;
    /// an existing one must have dimension `dim` and the dot distance.
    ///
    /// # Errors
    /// [`StoreError::Unavailable`] naming the URL when Qdrant cannot be reached within
    /// the retries; [`StoreError::DimensionMismatch`] or [`StoreError::Foreign`] for a
    /// collection of another shape (never re-created).
    pub fn open(dim: Dim, settings: &QdrantSettings) -> StoreResult<Self> {
        let url = settings
            .endpoints()
            .map(redact_url)
            .collect::<Vec<_>>()
            .join(", ");
        let unavailable = |reason: String| StoreError::Unavailable {
            service: "qdrant",
            url: url.clone(),
            reason,
        };
        let api_key = std::env::var(&settings.api_key_env).ok();
        let clients = settings
            .endpoints()
            .map(|endpoint| {
                Qdrant::from_url(endpoint)
                    .api_key(api_key.clone())
                    .timeout(settings.timeout)
                    .connect_timeout(settings.connect_timeout)
                    .skip_compatibility_check()
                    .build()
                    .map(Arc::new)
                    .map_err(|e| {
                        unavailable(format!(
                            "`{}` is not a usable Qdrant URL: {e}",
                            redact_url(endpoint)
                        ))
                    })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("hypermem-qdrant")
            .enable_all()
            .build()
            .map_err(|e| unavailable(format!("cannot start the client runtime: {e}")))?;
        let tier = Self {
            dim,
            settings: settings.clone(),
            url,
            clients,
            active: std::sync::atomic::AtomicUsize::new(0),
            runtime,
        };
        tier.call(|c| async move { c.health_check().await })?;
        tier.ensure_collection()?;
        Ok(tier)
    }

    /// The settings.
    pub fn settings(&self) -> &QdrantSettings {
        &self.settings
    }

    /// Bits of each vector Qdrant indexes: the first `min(D, index_bits)`.
    pub fn index_bits(&self) -> usize {
        self.settings.index_bits.min(self.dim.bits())
    }

    /// The points `items` are stored as: the first [`index_bits`](Self::index_bits) as
    /// ±1 (what Qdrant indexes), the whole vector packed in the payload beside the project
    /// and the id. Public for the benchmark that upserts the same points with a bare
    /// client (`benches/qdrant.rs`).
    #[doc(hidden)]
    pub fn points(&self, project: &ProjectId, items: &[(VectorId, HvRef<'_>)]) -> Vec<PointStruct> {
        let n = self.index_bits();
        items
            .iter()
            .map(|(id, v)| {
                let mut payload = qdrant_client::Payload::new();
                payload.insert("project", project.as_str());
                payload.insert("vid", id.0 as i64);
                payload.insert("bits", encode_words(v.words()));
                PointStruct::new(point_id(project, *id), bipolar(*v, n), payload)
            })
            .collect()
    }

    /// The full hypervector a point's payload carries.
    fn payload_words(
        &self,
        payload: &std::collections::HashMap<String, Value>,
    ) -> StoreResult<Vec<u64>> {
        payload_str(payload, "bits")
            .and_then(|b| decode_words(b, self.dim.words()))
            .ok_or_else(|| {
                self.foreign(format!(
                    "a point's `bits` payload is not {} base64-packed words",
                    self.dim.words()
                ))
            })
    }

    /// Points of `project` Qdrant counts (exact).
    ///
    /// # Errors
    /// [`StoreError::Unavailable`].
    pub fn count(&self, project: &ProjectId) -> StoreResult<u64> {
        let collection = self.settings.collection.clone();
        let filter = project_filter(project);
        self.call(move |c| {
            let request = CountPointsBuilder::new(collection.clone())
                .filter(filter.clone())
                .exact(true);
            async move { Ok(c.count(request).await?.result.map_or(0, |r| r.count)) }
        })
    }

    /// Waits until Qdrant has finished optimizing and indexing the collection (status
    /// green), polling every 100 ms; returns `(points, indexed vectors)`, or `None` when
    /// `timeout` passed first.
    ///
    /// # Errors
    /// [`StoreError::Unavailable`].
    pub fn wait_until_indexed(
        &self,
        timeout: std::time::Duration,
    ) -> StoreResult<Option<(u64, u64)>> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let name = self.settings.collection.clone();
            let info = self.call(move |c| {
                let name = name.clone();
                async move { c.collection_info(name).await }
            })?;
            if let Some(r) = info.result
                && r.status == qdrant_client::qdrant::CollectionStatus::Green as i32
            {
                return Ok(Some((
                    r.points_count.unwrap_or(0),
                    r.indexed_vectors_count.unwrap_or(0),
                )));
            }
            if std::time::Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// Runs a request built by `make` on the tier's runtime. A transient failure sends it
    /// to the cluster's next node at once; when every node failed in turn, it is retried
    /// up to the profile's budget with doubling backoff. Every request is idempotent
    /// (points are keyed by project and id), so one sent again after a lost answer writes
    /// nothing twice.
    fn call<T, F, Fut>(&self, make: F) -> StoreResult<T>
    where
        F: Fn(Arc<Qdrant>) -> Fut,
        Fut: Future<Output = Result<T, QdrantError>> + Send + 'static,
        T: Send + 'static,
    {
        use std::sync::atomic::Ordering;
        let nodes = self.clients.len();
        let mut attempt = 0;
        let mut failed_in_turn = 0;
        let mut backoff = self.settings.retry_backoff;
        loop {
            let node = self.active.load(Ordering::Relaxed) % nodes;
            let future = make(self.clients[node].clone());
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            self.runtime.spawn(async move {
                let _ = tx.send(future.await);
            });
            let result = rx.recv().map_err(|_| StoreError::Unavailable {
                service: "qdrant",
                url: self.url.clone(),
                reason: "the client runtime stopped".to_owned(),
            })?;
            let e = match result {
                Ok(v) => return Ok(v),
                Err(e) if transient(&e) => e,
                Err(e) => return Err(self.failure(&e, attempt)),
            };
            // The next node takes the requests (unless another thread moved on already).
            let _ = self.active.compare_exchange(
                node,
                (node + 1) % nodes,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            failed_in_turn += 1;
            if failed_in_turn < nodes {
                tracing::info!(url = %self.url, node, error = %e, "a Qdrant node failed; trying the next");
                continue;
            }
            if attempt >= self.settings.retries {
                return Err(self.failure(&e, attempt));
            }
            tracing::debug!(url = %self.url, attempt, error = %e, "Qdrant call failed; retrying");
            std::thread::sleep(backoff);
            backoff = backoff.saturating_mul(2);
            attempt += 1;
            failed_in_turn = 0;
        }
    }

    fn failure(&self, e: &QdrantError, attempt: u32) -> StoreError {
        let reason = match e {
            QdrantError::ResponseError { status } => {
                format!("{:?}: {}", status.code(), status.message())
            }
            other => other.to_string(),
        };
        // gRPC unauthenticated (16) or permission denied (7): the API key.
        let refused = matches!(e, QdrantError::ResponseError { status } if matches!(status.code() as i32, 7 | 16));
        if refused {
            let env = &self.settings.api_key_env;
            StoreError::Auth {
                service: "qdrant",
                url: self.url.clone(),
                setting: if std::env::var_os(env).is_some() {
                    format!("the environment variable `{env}`, which is set")
                } else {
                    format!("the environment variable `{env}`, which is not set")
                },
                reason,
            }
        } else if transient(e) {
            StoreError::Unavailable {
                service: "qdrant",
                url: self.url.clone(),
                reason: format!("{reason} (after {} attempts)", attempt + 1),
            }
        } else {
            StoreError::Foreign {
                service: "qdrant",
                url: self.url.clone(),
                key: self.settings.collection.clone(),
                reason,
            }
        }
    }

    /// Creates the collection (and its tenant index) if missing; checks an existing one.
    fn ensure_collection(&self) -> StoreResult<()> {
        let name = self.settings.collection.clone();
        let exists = {
            let name = name.clone();
            self.call(move |c| {
                let name = name.clone();
                async move { c.collection_exists(name).await }
            })?
        };
        if exists {
            return self.check_collection();
        }
        let s = self.settings.clone();
        let n = self.index_bits() as u64;
        let metadata: std::collections::HashMap<String, serde_json::Value> = [
            (
                "hypermem_dim".to_owned(),
                serde_json::json!(self.dim.bits()),
            ),
            ("hypermem_index_bits".to_owned(), serde_json::json!(n)),
        ]
        .into_iter()
        .collect();
        let created = self.call(move |c| {
            let request = CreateCollectionBuilder::new(s.collection.clone())
                .metadata(metadata.clone())
                .vectors_config(
                    VectorParamsBuilder::new(n, Distance::Dot)
                        .on_disk(s.on_disk)
                        .datatype(qdrant_client::qdrant::Datatype::Float16),
                )
                .quantization_config(BinaryQuantizationBuilder::new(true))
                .hnsw_config(
                    HnswConfigDiffBuilder::default()
                        .m(s.hnsw_m)
                        .ef_construct(s.hnsw_ef_construct)
                        .payload_m(s.hnsw_m),
                )
                .shard_number(s.shard_number)
                .replication_factor(s.replication_factor)
                .write_consistency_factor(s.write_consistency_factor)
                .on_disk_payload(true);
            async move { c.create_collection(request).await }
        });
        match created {
            Ok(_) => {}
            // Another process created it first.
            Err(StoreError::Foreign { reason, .. }) if reason.contains("already exists") => {
                return self.check_collection();
            }
            Err(e) => return Err(e),
        }
        let name2 = name.clone();
        self.call(move |c| {
            let request = CreateFieldIndexCollectionBuilder::new(
                name2.clone(),
                "project",
                FieldType::Keyword,
            )
            .field_index_params(KeywordIndexParamsBuilder::default().is_tenant(true))
            .wait(true);
            async move { c.create_field_index(request).await }
        })?;
        tracing::info!(collection = %name, url = %self.url, "created the Qdrant collection");
        Ok(())
    }

    /// An existing collection must hold `D`-dimensional dot-product vectors.
    fn check_collection(&self) -> StoreResult<()> {
        use qdrant_client::qdrant::vectors_config::Config;
        let name = self.settings.collection.clone();
        let info = self.call(move |c| {
            let name = name.clone();
            async move { c.collection_info(name).await }
        })?;
        let config = info.result.and_then(|r| r.config);
        let stored = |key: &str| {
            config
                .as_ref()
                .and_then(|c| c.metadata.get(key))
                .and_then(|v| match v.kind.as_ref()? {
                    value::Kind::IntegerValue(n) => usize::try_from(*n).ok(),
                    value::Kind::DoubleValue(x) => Some(*x as usize),
                    _ => None,
                })
        };
        let Some(dim) = stored("hypermem_dim") else {
            return Err(self.foreign(
                "the collection has no `hypermem_dim` metadata: it was not created by hypermem; \
                 choose another `qdrant.collection`"
                    .to_owned(),
            ));
        };
        if dim != self.dim.bits() {
            return Err(StoreError::DimensionMismatch {
                path: None,
                expected: self.dim.bits(),
                found: dim,
            });
        }
        let params = config
            .and_then(|c| c.params)
            .and_then(|p| p.vectors_config)
            .and_then(|v| v.config);
        match params {
            Some(Config::Params(p)) => {
                if p.size != self.index_bits() as u64 {
                    return Err(self.foreign(format!(
                        "the collection indexes {} bits of each vector; this profile's \
                         `qdrant.index_bits` gives {}",
                        p.size,
                        self.index_bits()
                    )));
                }
                if p.distance != Distance::Dot as i32 {
                    return Err(self.foreign(format!(
                        "the collection uses distance {:?}, not Dot: it was not created by hypermem; \
                         choose another `qdrant.collection`",
                        Distance::try_from(p.distance).unwrap_or(Distance::UnknownDistance)
                    )));
                }
                Ok(())
            }
            _ => Err(self.foreign(
                "the collection has named vectors: it was not created by hypermem; choose another `qdrant.collection`"
                    .to_owned(),
            )),
        }
    }

    /// A search over the first `n < D` bits: `oversample · k` candidates from Qdrant (at
    /// least k + 64), re-ranked exactly on the full vectors their payloads carry; more are
    /// fetched while an id predicate leaves fewer than k and the project has more.
    fn search_reranked(
        &self,
        project: &ProjectId,
        request: &SearchRequest<'_>,
        n: usize,
    ) -> StoreResult<Vec<Hit>> {
        let kernel = hdv::kernels::try_active()?;
        let query = bipolar(request.query, n);
        let filter = project_filter(project);
        let mut limit = request
            .k
            .saturating_mul(self.settings.oversample)
            .max(request.k + 64);
        loop {
            let collection = self.settings.collection.clone();
            let (q, f) = (query.clone(), filter.clone());
            let ef = self.settings.ef_search.max(limit as u64);
            let found = self.call(move |c| {
                let request =
                    QueryPointsBuilder::new(collection.clone())
                        .query(q.clone())
                        .filter(f.clone())
                        .limit(limit as u64)
                        .with_payload(PayloadIncludeSelector::new(vec![
                            "vid".to_owned(),
                            "bits".to_owned(),
                        ]))
                        .params(SearchParamsBuilder::default().hnsw_ef(ef).quantization(
                            QuantizationSearchParamsBuilder::default().rescore(false),
                        ));
                async move { c.query(request).await }
            })?;
            let exhausted = found.result.len() < limit;
            let mut top = Vec::new();
            let max = request.max_distance.unwrap_or(u32::MAX);
            for p in &found.result {
                let Some(id) = payload_vid(&p.payload) else {
                    continue;
                };
                if !request.accepts(id) {
                    continue;
                }
                let words = self.payload_words(&p.payload)?;
                let distance = kernel.hamming(request.query.words(), &words);
                if distance <= max {
                    push_hit(&mut top, request.k, Hit { id, distance });
                }
            }
            let widest = request.k.saturating_mul(16).saturating_add(4_096);
            if exhausted || top.len() >= request.k || limit >= widest {
                return Ok(top);
            }
            limit = limit.saturating_mul(2);
        }
    }

    fn foreign(&self, reason: String) -> StoreError {
        StoreError::Foreign {
            service: "qdrant",
            url: self.url.clone(),
            key: self.settings.collection.clone(),
            reason,
        }
    }

    /// Which of `ids` exist in `project`, with their stored `bits` payload when `bits`.
    fn existing(
        &self,
        project: &ProjectId,
        ids: &[VectorId],
        bits: bool,
    ) -> StoreResult<HashMap<VectorId, Option<String>>> {
        let collection = self.settings.collection.clone();
        let points: Vec<PointId> = ids.iter().map(|id| point_id(project, *id)).collect();
        let mut fields = vec!["vid".to_owned()];
        if bits {
            fields.push("bits".to_owned());
        }
        let found = self.call(move |c| {
            let request = GetPointsBuilder::new(collection.clone(), points.clone())
                .with_payload(PayloadIncludeSelector::new(fields.clone()))
                .with_vectors(false);
            async move { c.get_points(request).await }
        })?;
        Ok(found
            .result
            .iter()
            .filter_map(|p| {
                let id = payload_vid(&p.payload)?;
                Some((id, payload_str(&p.payload, "bits").map(str::to_owned)))
            })
            .collect())
    }
}

impl VectorTier for QdrantTier {
    fn name(&self) -> &'static str {
        "qdrant"
    }

    fn dim(&self) -> Dim {
        self.dim
    }

    fn insert_batch(
        &self,
        project: &ProjectId,
        items: &[(VectorId, HvRef<'_>)],
    ) -> StoreResult<()> {
        super::validate_batch(self.dim, project, items)?;
        if items.is_empty() {
            return Ok(());
        }
        let ids: Vec<VectorId> = items.iter().map(|(id, _)| *id).collect();
        let stored = self.existing(project, &ids, true)?;
        // An id already holding the same vector is the earlier, partly acknowledged
        // attempt of this batch (chunks are separate requests): it is kept, not refused, so
        // a retry completes. Any other stored id refuses the whole batch.
        let mut fresh = Vec::with_capacity(items.len());
        for (id, v) in items {
            match stored.get(id) {
                None => fresh.push((*id, *v)),
                Some(Some(bits)) if *bits == encode_words(v.words()) => {}
                Some(_) => {
                    return Err(StoreError::DuplicateId {
                        project: project.clone(),
                        id: *id,
                    });
                }
            }
        }
        let point_bytes = 4 * self.index_bits() + self.dim.bytes() * 4 / 3 + 64;
        for chunk in fresh.chunks((UPSERT_BYTES / point_bytes).max(1)) {
            let points = self.points(project, chunk);
            let collection = self.settings.collection.clone();
            let consistency = self.settings.write_consistency_factor;
            self.call(move |c| {
                let mut request =
                    UpsertPointsBuilder::new(collection.clone(), points.clone()).wait(true);
                if consistency > 1 {
                    // Through the shard's elected leader, which the cluster replaces when
                    // its node dies (strong ordering pins the first replica and fails
                    // until that node is marked dead).
                    request = request.ordering(qdrant_client::qdrant::WriteOrdering {
                        r#type: qdrant_client::qdrant::WriteOrderingType::Medium as i32,
                    });
                }
                async move { c.upsert_points(request).await }
            })?;
        }
        Ok(())
    }

    fn get(&self, project: &ProjectId, id: VectorId) -> StoreResult<Option<Hypervector>> {
        let collection = self.settings.collection.clone();
        let point = point_id(project, id);
        let found = self.call(move |c| {
            let request = GetPointsBuilder::new(collection.clone(), vec![point.clone()])
                .with_payload(true)
                .with_vectors(false);
            async move { c.get_points(request).await }
        })?;
        let Some(p) = found.result.into_iter().next() else {
            return Ok(None);
        };
        Ok(Some(Hypervector::from_words(
            self.payload_words(&p.payload)?,
        )?))
    }

    fn get_many(
        &self,
        project: &ProjectId,
        ids: &[VectorId],
    ) -> StoreResult<Vec<Option<Hypervector>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let found = self.existing(project, ids, true)?;
        ids.iter()
            .map(|id| match found.get(id) {
                Some(Some(bits)) => {
                    let words = decode_words(bits, self.dim.words()).ok_or_else(|| {
                        self.foreign(format!(
                            "a point's `bits` payload is not {} base64-packed words",
                            self.dim.words()
                        ))
                    })?;
                    Ok(Some(Hypervector::from_words(words)?))
                }
                _ => Ok(None),
            })
            .collect()
    }

    fn delete(&self, project: &ProjectId, id: VectorId) -> StoreResult<bool> {
        if self.existing(project, &[id], false)?.is_empty() {
            return Ok(false);
        }
        let collection = self.settings.collection.clone();
        let point = point_id(project, id);
        self.call(move |c| {
            let request = DeletePointsBuilder::new(collection.clone())
                .points(PointsIdsList {
                    ids: vec![point.clone()],
                })
                .wait(true);
            async move { c.delete_points(request).await }
        })?;
        Ok(true)
    }

    fn search(&self, project: &ProjectId, request: &SearchRequest<'_>) -> StoreResult<Vec<Hit>> {
        super::validate_query(self.dim, request)?;
        if request.k == 0 {
            return Ok(Vec::new());
        }
        let n = self.index_bits();
        if n < self.dim.bits() {
            return self.search_reranked(project, request, n);
        }
        let d = self.dim.bits() as f64;
        let query = bipolar(request.query, n);
        let filter = project_filter(project);
        let threshold = request
            .max_distance
            .map(|m| (d - 2.0 * f64::from(m)) as f32 - 0.5);
        // An id predicate cannot travel to the server, and Qdrant orders equal scores as it
        // likes: ask for more until k pass the predicate and the k-th distance is not tied
        // with what was left unread (ties go by id, as in every tier), or the project is
        // exhausted.
        let mut limit = if request.filter.is_some() {
            request.k.saturating_mul(4).max(64)
        } else {
            request.k + 8
        };
        loop {
            let collection = self.settings.collection.clone();
            let (query, filter) = (query.clone(), filter.clone());
            let ef = self.settings.ef_search.max(limit as u64);
            let found = self.call(move |c| {
                let mut q =
                    QueryPointsBuilder::new(collection.clone())
                        .query(query.clone())
                        .filter(filter.clone())
                        .limit(limit as u64)
                        .with_payload(PayloadIncludeSelector::new(vec!["vid".to_owned()]))
                        .params(SearchParamsBuilder::default().hnsw_ef(ef).quantization(
                            QuantizationSearchParamsBuilder::default().rescore(false),
                        ));
                if let Some(t) = threshold {
                    q = q.score_threshold(t);
                }
                async move { c.query(q).await }
            })?;
            let exhausted = found.result.len() < limit;
            let mut top = Vec::new();
            let mut farthest = 0;
            for p in &found.result {
                // score = D − 2·Hamming exactly (binary quantization of ±1 vectors).
                let distance = ((d - f64::from(p.score)) / 2.0).round().max(0.0) as u32;
                farthest = farthest.max(distance);
                let Some(id) = payload_vid(&p.payload) else {
                    continue;
                };
                if !request.accepts(id) || request.max_distance.is_some_and(|m| distance > m) {
                    continue;
                }
                push_hit(&mut top, request.k, Hit { id, distance });
            }
            let settled =
                top.len() >= request.k && top.last().is_some_and(|h| h.distance < farthest);
            // A tie wider than this is cut where Qdrant cut it.
            let widest = request.k.saturating_mul(16).saturating_add(1_024);
            if exhausted || settled || limit >= widest {
                return Ok(top);
            }
            limit = limit.saturating_mul(2);
        }
    }

    fn len(&self, project: &ProjectId) -> usize {
        match self.count(project) {
            Ok(n) => n as usize,
            Err(e) => {
                tracing::warn!(error = %e, "counting Qdrant points failed");
                0
            }
        }
    }

    fn projects(&self) -> Vec<ProjectId> {
        self.list_projects().unwrap_or_else(|e| {
            tracing::warn!(error = %e, "listing Qdrant projects failed");
            Vec::new()
        })
    }

    fn list_projects(&self) -> StoreResult<Vec<ProjectId>> {
        let collection = self.settings.collection.clone();
        let r = self.call(move |c| {
            let request = FacetCountsBuilder::new(collection.clone(), "project")
                .limit(MAX_PROJECTS)
                .exact(true);
            async move { c.facet(request).await }
        })?;
        let mut v: Vec<ProjectId> = r
            .hits
            .into_iter()
            .filter(|h| h.count > 0)
            .filter_map(|h| match h.value?.variant? {
                facet_value::Variant::StringValue(s) => ProjectId::new(s).ok(),
                _ => None,
            })
            .collect();
        v.sort();
        Ok(v)
    }

    fn ids(&self, project: &ProjectId) -> Vec<VectorId> {
        self.list_ids(project).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "listing Qdrant ids failed");
            Vec::new()
        })
    }

    fn list_ids(&self, project: &ProjectId) -> StoreResult<Vec<VectorId>> {
        let mut out = Vec::new();
        let mut offset: Option<PointId> = None;
        loop {
            let collection = self.settings.collection.clone();
            let filter = project_filter(project);
            let from = offset.clone();
            let page = self.call(move |c| {
                let mut request = ScrollPointsBuilder::new(collection.clone())
                    .filter(filter.clone())
                    .limit(SCROLL_PAGE)
                    .with_payload(PayloadIncludeSelector::new(vec!["vid".to_owned()]))
                    .with_vectors(false);
                if let Some(o) = from.clone() {
                    request = request.offset(o);
                }
                async move { c.scroll(request).await }
            })?;
            out.extend(page.result.iter().filter_map(|p| payload_vid(&p.payload)));
            match page.next_page_offset {
                Some(next) if next.point_id_options.is_some() => offset = Some(next),
                _ => break,
            }
        }
        out.sort_unstable();
        Ok(out)
    }

    fn drop_project(&self, project: &ProjectId) -> StoreResult<usize> {
        let before = self.count(project)?;
        let collection = self.settings.collection.clone();
        let filter = project_filter(project);
        self.call(move |c| {
            let request = DeletePointsBuilder::new(collection.clone())
                .points(filter.clone())
                .wait(true);
            async move { c.delete_points(request).await }
        })?;
        let left = self.count(project)?;
        if left != 0 {
            return Err(self.foreign(format!(
                "{left} points of project `{project}` remain after erasing it"
            )));
        }
        Ok(before as usize)
    }

    fn flush(&self) -> StoreResult<()> {
        // Every write waited for Qdrant's WAL.
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_ids_are_uuids_that_differ_across_projects() {
        let (a, b) = (ProjectId::new("a").unwrap(), ProjectId::new("b").unwrap());
        let id = |p, v| match point_id(p, VectorId(v)).point_id_options {
            Some(qdrant_client::qdrant::point_id::PointIdOptions::Uuid(s)) => s,
            other => panic!("{other:?}"),
        };
        assert_eq!(id(&a, 7).len(), 36);
        assert_eq!(id(&a, 7), id(&a, 7));
        assert_ne!(id(&a, 7), id(&b, 7));
        assert_ne!(id(&a, 7), id(&a, 8));
    }

    #[test]
    fn a_cluster_between_states_is_unavailable_not_corrupt() {
        for message in [
            "Service internal error: 1 out of 3 shards failed to apply operation. First error \
             captured: Precondition failed: No target shard 0 found for update",
            "Pre-condition failure: 1 out of 3 shards failed to apply operation. First error \
             captured: Precondition failed: No target shard 0 found for update",
            "transport error",
            "Service internal error: peer 7 is currently unavailable",
            "Service internal error: The replica set for shard 0 on peer 34 does not have \
             enough active replicas",
        ] {
            assert!(transient_internal(message), "{message}");
        }
        for message in [
            "Wrong input: Vector dimension error: expected dim: 8192, got 4096",
            "Not found: Collection `x` doesn't exist!",
        ] {
            assert!(!transient_internal(message), "{message}");
        }
    }

    #[test]
    fn packed_words_round_trip_through_base64() {
        for words in [1usize, 2, 3, 16, 157] {
            let v = Hypervector::random(Dim::new(words * 64).unwrap(), words as u64);
            let text = encode_words(v.words());
            assert_eq!(text.len(), (words * 8).div_ceil(3) * 4);
            assert_eq!(decode_words(&text, words).as_deref(), Some(v.words()));
            assert_eq!(decode_words(&text, words + 1), None);
        }
        assert_eq!(encode_words(&[0x004d_616e]), "bmFNAAAAAAA=");
        assert_eq!(decode_words("not base64!", 1), None);
    }

    #[test]
    fn bipolar_maps_bit_one_to_plus_one() {
        let v = Hypervector::random(Dim::new(128).unwrap(), 3);
        let x = bipolar(v.view(), 128);
        assert_eq!(bipolar(v.view(), 64).len(), 64);
        for (i, s) in x.iter().enumerate() {
            assert_eq!(*s > 0.0, v.words()[i / 64] >> (i % 64) & 1 == 1);
        }
    }
}
