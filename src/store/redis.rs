//! [`RedisTier`]: the warm tier of the standard profile, shared by every process of a
//! deployment through one Redis.
//!
//! Redis holds the warm vectors; each process searches a local *mirror* of the projects it
//! searches (one contiguous block per project, scanned with the `hdv` kernel like the hot
//! tier) and keeps it current incrementally, so a search never fetches a project.
//!
//! Keys (`P` is the profile's `redis.prefix`, `p` a project; the project is a hash tag so
//! a project's keys share one slot):
//!
//! | key | type | holds |
//! |---|---|---|
//! | `P:epoch` | string | the deployment epoch: a random token set when the keys are created |
//! | `P:dim` | string | the dimension in bits (a deployment of another D is refused) |
//! | `P:owner` | string | the deployment token of the data directory whose ledger the vectors encode (another ledger is refused) |
//! | `P:projects` | set | names of the projects with at least one warm vector |
//! | `P:gens` | string | counter that numbers project generations |
//! | `P:{p}:gen` | string | this project's generation (new after the project was erased) |
//! | `P:{p}:vec` | hash | vector id (decimal) → packed vector (`D/8` bytes, little-endian words) |
//! | `P:{p}:seq` | string | change counter: incremented once per write batch |
//! | `P:{p}:chg` | sorted set | vector id → the change number of its last insert or delete |
//! | `P:{p}:acc` | hash | vector id → LTP accesses counted by every process ([`SharedTraces`]) |
//! | `P:{p}:last` | hash | vector id → last access (clock seconds) by any process |
//! | `P:{p}:wm:<agent>` | string | the agent's working memory: a JSON array of items ([`WorkingBoard`]) |
//! | `P:{p}:wml:<agent>` | string | a random token while one process changes that working memory (expires) |
//!
//! Every write is one Lua script (atomic): it checks the epoch, validates the batch, writes
//! the vectors, increments `seq` and scores the changed ids with it. A mirror at change
//! number `m` catches up by reading `seq` (`S`), the ids scored in `(m, S]`, and their
//! vectors (`HMGET`; an absent one was deleted) — a few pipelined round trips for any
//! number of changes. A different `gen` means the project was erased and recreated: the
//! mirror starts over.
//!
//! The ledger is the truth: a Redis restarted empty (no persistence, `FLUSHALL`) has no
//! epoch key or another one. The tier notices (on a write, a refresh or
//! [`VectorTier::lost_contents`]), starts a new epoch, and reports the loss once so the owner
//! re-encodes the warm vectors from the ledger.

use crate::sync::{Recover as _, RecoverRw as _};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use hdv::{Block, Dim, HvRef, Hypervector};
use redis::{Client, Connection, RedisError, Script};

use super::RedisSettings;
use super::error::{StoreError, StoreResult};
use super::{Hit, ProjectId, SearchRequest, SharedTraces, VectorId, VectorTier, scan_block};
use super::{WorkingBoard, WorkingItem};

/// Vectors per `HMGET` while a mirror catches up.
const FETCH_CHUNK: usize = 1_000;
/// Keys per `DEL` while a project is erased.
const DELETE_CHUNK: usize = 500;

/// Inserts a batch: `KEYS` epoch, vec, chg, seq, projects, gen, gens; `ARGV` epoch, retry
/// flag, project, then id/vector pairs. Replies `{"ok", seq, gen}`, `{"dup", id}` or
/// `{"epoch"}`. On a retry (the reply of an earlier attempt may have been lost) an id
/// already holding the same bytes is not a duplicate.
const INSERT: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {'epoch'} end
local n = (#ARGV - 3) / 2
local chunk = 256
for first = 0, n - 1, chunk do
  local last = math.min(first + chunk, n) - 1
  local ids = {}
  for i = first, last do ids[#ids + 1] = ARGV[4 + 2 * i] end
  local old = redis.call('HMGET', KEYS[2], unpack(ids))
  for j = 1, #ids do
    if old[j] and not (ARGV[2] == '1' and old[j] == ARGV[5 + 2 * (first + j - 1)]) then
      return {'dup', ids[j]}
    end
  end
end
if redis.call('EXISTS', KEYS[6]) == 0 then
  redis.call('SET', KEYS[6], redis.call('INCR', KEYS[7]))
end
local seq = redis.call('INCR', KEYS[4])
for first = 0, n - 1, chunk do
  local last = math.min(first + chunk, n) - 1
  local fields, scores = {}, {}
  for i = first, last do
    fields[#fields + 1] = ARGV[4 + 2 * i]
    fields[#fields + 1] = ARGV[5 + 2 * i]
    scores[#scores + 1] = seq
    scores[#scores + 1] = ARGV[4 + 2 * i]
  end
  redis.call('HSET', KEYS[2], unpack(fields))
  redis.call('ZADD', KEYS[3], unpack(scores))
end
redis.call('SADD', KEYS[5], ARGV[3])
return {'ok', tostring(seq), redis.call('GET', KEYS[6])}
";

/// Deletes one id: `KEYS` epoch, vec, chg, seq, projects, gen; `ARGV` epoch, project, id.
/// Replies `{"ok", deleted (0/1), seq, gen}` or `{"epoch"}`.
const DELETE: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {'epoch'} end
if redis.call('HDEL', KEYS[2], ARGV[3]) == 0 then return {'ok', '0', '0', ''} end
local seq = redis.call('INCR', KEYS[4])
redis.call('ZADD', KEYS[3], seq, ARGV[3])
if redis.call('HLEN', KEYS[2]) == 0 then redis.call('SREM', KEYS[5], ARGV[2]) end
return {'ok', '1', tostring(seq), redis.call('GET', KEYS[6]) or ''}
";

/// Counts accesses: `KEYS` acc, last; `ARGV` now, then id/base pairs. An id not on the board
/// starts at its base. Replies the totals.
const TOUCH: &str = r"
local out = {}
for i = 2, #ARGV, 2 do
  local id = ARGV[i]
  if redis.call('HEXISTS', KEYS[1], id) == 0 then redis.call('HSET', KEYS[1], id, ARGV[i + 1]) end
  out[#out + 1] = redis.call('HINCRBY', KEYS[1], id, 1)
  local last = redis.call('HGET', KEYS[2], id)
  if not last or tonumber(last) < tonumber(ARGV[1]) then redis.call('HSET', KEYS[2], id, ARGV[1]) end
end
return out
";

/// Releases a working-memory lock if this process still holds it: `KEYS` lock; `ARGV`
/// token.
const UNLOCK: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
";

/// A process-local copy of one project's warm vectors.
#[derive(Debug, Default)]
struct Mirror {
    words: Vec<u64>,
    ids: Vec<VectorId>,
    slots: HashMap<VectorId, usize>,
    /// The project generation the copy belongs to.
    generation: Option<String>,
    /// The change number the copy is complete up to.
    seq: u64,
    /// When Redis was last asked for changes.
    checked: Option<Instant>,
}

impl Mirror {
    fn upsert(&mut self, id: VectorId, words: &[u64]) {
        let w = words.len();
        match self.slots.get(&id) {
            Some(&slot) => self.words[slot * w..(slot + 1) * w].copy_from_slice(words),
            None => {
                self.slots.insert(id, self.ids.len());
                self.ids.push(id);
                self.words.extend_from_slice(words);
            }
        }
    }

    fn remove(&mut self, id: VectorId, w: usize) {
        let Some(slot) = self.slots.remove(&id) else {
            return;
        };
        let last = self.ids.len() - 1;
        if slot != last {
            self.words.copy_within(last * w..(last + 1) * w, slot * w);
            let moved = self.ids[last];
            self.ids[slot] = moved;
            self.slots.insert(moved, slot);
        }
        self.ids.pop();
        self.words.truncate(last * w);
    }

    fn clear(&mut self) {
        *self = Self::default();
    }

    /// Records a write of this process with change number `seq` of generation `generation`:
    /// the copy stays complete only if nothing else changed in between.
    fn advance(&mut self, seq: u64, generation: &str) {
        let same_generation = self.generation.as_deref() == Some(generation)
            || (self.generation.is_none() && self.seq == 0 && seq == 1);
        if same_generation && seq == self.seq + 1 {
            self.seq = seq;
            self.generation = Some(generation.to_owned());
        }
    }
}

/// Whether a failed command may succeed on a new connection (the server restarted, the
/// network dropped, a timeout, a server still loading its data).
fn transient(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || matches!(e.code(), Some("LOADING" | "TRYAGAIN" | "MASTERDOWN"))
}

/// The warm tier on Redis; see the module documentation for the key layout.
pub struct RedisTier {
    dim: Dim,
    settings: RedisSettings,
    /// The URL with its password masked.
    url: String,
    client: Client,
    pool: Mutex<Vec<Connection>>,
    /// The deployment token of the ledger this tier serves (restored after a reset).
    owner: Mutex<String>,
    /// The epoch this process's mirrors and traces belong to.
    epoch: Mutex<String>,
    /// When the epoch was last compared with Redis.
    epoch_checked: Mutex<Instant>,
    /// Set when Redis was found reset; taken by [`VectorTier::lost_contents`].
    lost: AtomicBool,
    mirrors: RwLock<HashMap<ProjectId, Arc<RwLock<Mirror>>>>,
    insert: Script,
    delete: Script,
    touch: Script,
    unlock: Script,
}

impl std::fmt::Debug for RedisTier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTier")
            .field("url", &self.url)
            .field("prefix", &self.settings.prefix)
            .field("dim", &self.dim)
            .finish()
    }
}

impl RedisTier {
    /// Connects to the Redis of `settings`, checks that the deployment under its prefix
    /// has dimension `dim` and belongs to the ledger `owner` names (vector ids are event
    /// ids: two ledgers under one prefix would overwrite each other), and joins (or
    /// starts) its epoch.
    ///
    /// # Errors
    /// [`StoreError::Foreign`] when the prefix belongs to another ledger;
    /// [`StoreError::Unavailable`] naming the URL when Redis cannot be reached within the
    /// retries; [`StoreError::DimensionMismatch`] when the prefix holds vectors of another
    /// dimension.
    pub fn open(dim: Dim, settings: &RedisSettings, owner: &str) -> StoreResult<Self> {
        let url = settings.redacted_url();
        let client = Client::open(settings.url.as_str()).map_err(|e| StoreError::Unavailable {
            service: "redis",
            url: url.clone(),
            reason: format!("not a usable Redis URL: {e}"),
        })?;
        let tier = Self {
            dim,
            settings: settings.clone(),
            url,
            client,
            pool: Mutex::new(Vec::new()),
            owner: Mutex::new(String::new()),
            epoch: Mutex::new(String::new()),
            epoch_checked: Mutex::new(Instant::now()),
            lost: AtomicBool::new(false),
            mirrors: RwLock::new(HashMap::new()),
            insert: Script::new(INSERT),
            delete: Script::new(DELETE),
            touch: Script::new(TOUCH),
            unlock: Script::new(UNLOCK),
        };
        let dim_key = tier.global("dim");
        let bits = dim.bits().to_string();
        let (_, stored): (Option<String>, String) = tier.run(|c, _| {
            redis::pipe()
                .cmd("SET")
                .arg(&dim_key)
                .arg(&bits)
                .arg("NX")
                .cmd("GET")
                .arg(&dim_key)
                .query(c)
        })?;
        if stored != bits {
            return Err(StoreError::DimensionMismatch {
                path: None,
                expected: dim.bits(),
                found: stored.parse().unwrap_or(0),
            });
        }
        let owner_key = tier.global("owner");
        let (_, stored): (Option<String>, String) = tier.run(|c, _| {
            redis::pipe()
                .cmd("SET")
                .arg(&owner_key)
                .arg(owner)
                .arg("NX")
                .cmd("GET")
                .arg(&owner_key)
                .query(c)
        })?;
        if stored != owner {
            return Err(tier.foreign(
                &owner_key,
                format!(
                    "the prefix `{}` holds the vectors of another data directory's ledger; \
                     give each deployment its own `redis.prefix`",
                    settings.prefix
                ),
            ));
        }
        *tier.owner.locked() = owner.to_owned();
        let epoch = tier.join_epoch()?;
        *tier.epoch.locked() = epoch;
        Ok(tier)
    }

    /// The settings.
    pub fn settings(&self) -> &RedisSettings {
        &self.settings
    }

    /// The URL with its password masked.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The current deployment epoch.
    pub fn epoch(&self) -> String {
        self.epoch.locked().clone()
    }

    /// Catches this process's mirror of `project` up with Redis now, whatever its age
    /// (creating it if needed); returns how many changes were applied.
    ///
    /// # Errors
    /// [`StoreError::Unavailable`]; [`StoreError::Foreign`] for data hypermem did not write.
    pub fn sync(&self, project: &ProjectId) -> StoreResult<usize> {
        let mirror = match self.existing_mirror(project) {
            Some(m) => m,
            None => self
                .mirrors
                .writing()
                .entry(project.clone())
                .or_default()
                .clone(),
        };
        let mut m = mirror.writing();
        self.refresh(project, &mut m)
    }

    /// Every key of `project` (found by `SCAN` over its key pattern).
    ///
    /// # Errors
    /// [`StoreError::Unavailable`].
    pub fn project_keys(&self, project: &ProjectId) -> StoreResult<Vec<String>> {
        let pattern = format!("{}:{{{}}}:*", self.settings.prefix, project);
        self.run(|c, _| {
            let mut keys = Vec::new();
            let mut cursor = 0u64;
            loop {
                let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(1_000)
                    .query(c)?;
                keys.extend(batch);
                if next == 0 {
                    break;
                }
                cursor = next;
            }
            keys.sort();
            keys.dedup();
            Ok(keys)
        })
    }

    fn global(&self, what: &str) -> String {
        format!("{}:{what}", self.settings.prefix)
    }

    /// The keys of the write scripts, in their `KEYS` order: epoch, vec, chg, seq,
    /// projects, gen, gens (the delete script takes the first six).
    fn script_keys(&self, project: &ProjectId) -> [String; 7] {
        [
            self.global("epoch"),
            self.key(project, "vec"),
            self.key(project, "chg"),
            self.key(project, "seq"),
            self.global("projects"),
            self.key(project, "gen"),
            self.global("gens"),
        ]
    }

    fn key(&self, project: &ProjectId, what: &str) -> String {
        format!("{}:{{{}}}:{what}", self.settings.prefix, project)
    }

    /// Sets the epoch key if it is missing and returns the one Redis holds.
    fn join_epoch(&self) -> StoreResult<String> {
        let key = self.global("epoch");
        let fresh = new_epoch();
        let (_, epoch): (Option<String>, String) = self.run(|c, _| {
            redis::pipe()
                .cmd("SET")
                .arg(&key)
                .arg(&fresh)
                .arg("NX")
                .cmd("GET")
                .arg(&key)
                .query(c)
        })?;
        Ok(epoch)
    }

    /// Redis no longer holds this process's epoch: it was reset. Join the new epoch, drop
    /// every mirror and report the loss.
    fn renew_epoch(&self) -> StoreResult<()> {
        // The dimension and owner keys went with the reset; restore them for the next
        // process.
        let (dim_key, owner_key) = (self.global("dim"), self.global("owner"));
        let bits = self.dim.bits().to_string();
        let owner = self.owner.locked().clone();
        self.run(|c, _| {
            redis::pipe()
                .cmd("SET")
                .arg(&dim_key)
                .arg(&bits)
                .arg("NX")
                .ignore()
                .cmd("SET")
                .arg(&owner_key)
                .arg(&owner)
                .arg("NX")
                .ignore()
                .query::<()>(c)
        })?;
        let epoch = self.join_epoch()?;
        let mut current = self.epoch.locked();
        if *current != epoch {
            tracing::warn!(url = %self.url, prefix = %self.settings.prefix,
                "Redis lost the warm tier (restarted empty or flushed); it is rebuilt from the ledger");
            *current = epoch;
            self.mirrors.writing().clear();
            self.lost.store(true, Ordering::Release);
        }
        *self.epoch_checked.locked() = Instant::now();
        Ok(())
    }

    /// A pooled connection, or a new one.
    fn connection(&self) -> Result<Connection, RedisError> {
        if let Some(c) = self.pool.locked().pop() {
            return Ok(c);
        }
        let c = self
            .client
            .get_connection_with_timeout(self.settings.connect_timeout)?;
        c.set_read_timeout(Some(self.settings.command_timeout))?;
        c.set_write_timeout(Some(self.settings.command_timeout))?;
        Ok(c)
    }

    /// Runs `op` on a connection, retrying transient failures on a new connection up to
    /// the profile's retry budget (the attempt number is passed to `op`).
    fn run<T>(
        &self,
        mut op: impl FnMut(&mut Connection, u32) -> Result<T, RedisError>,
    ) -> StoreResult<T> {
        let mut attempt = 0u32;
        let mut backoff = self.settings.retry_backoff;
        loop {
            let result = self.connection().and_then(|mut c| {
                let r = op(&mut c, attempt);
                if r.as_ref().err().is_none_or(|e| !transient(e)) {
                    let mut pool = self.pool.locked();
                    if pool.len() < self.settings.pool_size {
                        pool.push(c);
                    }
                }
                r
            });
            match result {
                Ok(v) => return Ok(v),
                Err(e) if transient(&e) && attempt < self.settings.retries => {
                    tracing::debug!(url = %self.url, attempt, error = %e, "Redis call failed; retrying");
                    std::thread::sleep(backoff);
                    backoff = backoff.saturating_mul(2);
                    attempt += 1;
                }
                Err(e) => return Err(self.failure(&e, attempt)),
            }
        }
    }

    fn failure(&self, e: &RedisError, attempt: u32) -> StoreError {
        if e.code() == Some("WRONGTYPE") {
            return StoreError::Foreign {
                service: "redis",
                url: self.url.clone(),
                key: format!("{}:*", self.settings.prefix),
                reason: e.to_string(),
            };
        }
        if matches!(e.code(), Some("NOAUTH" | "WRONGPASS" | "NOPERM"))
            || e.kind() == redis::ErrorKind::AuthenticationFailed
        {
            return StoreError::Auth {
                service: "redis",
                url: self.url.clone(),
                setting: "the user and password of the profile's `[redis] url`".to_owned(),
                reason: e.to_string(),
            };
        }
        let tries = if transient(e) {
            format!(" (after {} attempts)", attempt + 1)
        } else {
            String::new()
        };
        StoreError::Unavailable {
            service: "redis",
            url: self.url.clone(),
            reason: format!("{e}{tries}"),
        }
    }

    fn decode(&self, key: &str, bytes: &[u8]) -> StoreResult<Vec<u64>> {
        if bytes.len() != self.dim.words() * 8 {
            return Err(StoreError::Foreign {
                service: "redis",
                url: self.url.clone(),
                key: key.to_owned(),
                reason: format!(
                    "a vector of {} bytes where {} were expected",
                    bytes.len(),
                    self.dim.words() * 8
                ),
            });
        }
        Ok(bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect())
    }

    fn foreign(&self, key: &str, reason: String) -> StoreError {
        StoreError::Foreign {
            service: "redis",
            url: self.url.clone(),
            key: key.to_owned(),
            reason,
        }
    }

    /// The mirror of `project` if this process keeps one (the map lock is released before
    /// the mirror is locked: a refresh holds a mirror while it may clear the map).
    fn existing_mirror(&self, project: &ProjectId) -> Option<Arc<RwLock<Mirror>>> {
        self.mirrors.reading().get(project).cloned()
    }

    /// The mirror of `project`, caught up with Redis if it is older than the refresh
    /// interval.
    fn mirror(&self, project: &ProjectId) -> StoreResult<Arc<RwLock<Mirror>>> {
        let mirror = match self.existing_mirror(project) {
            Some(m) => m,
            None => self
                .mirrors
                .writing()
                .entry(project.clone())
                .or_default()
                .clone(),
        };
        let due = mirror
            .reading()
            .checked
            .is_none_or(|t| t.elapsed() >= self.settings.refresh);
        if due {
            let mut m = mirror.writing();
            if m.checked
                .is_none_or(|t| t.elapsed() >= self.settings.refresh)
            {
                self.refresh(project, &mut m)?;
            }
        }
        Ok(mirror)
    }

    /// Catches `mirror` up with every change Redis has recorded since its change number;
    /// returns how many changed ids were read.
    fn refresh(&self, project: &ProjectId, mirror: &mut Mirror) -> StoreResult<usize> {
        let (epoch_key, gen_key, seq_key) = (
            self.global("epoch"),
            self.key(project, "gen"),
            self.key(project, "seq"),
        );
        let (epoch, generation, seq): (Option<String>, Option<String>, Option<u64>) =
            self.run(|c, _| {
                redis::pipe()
                    .get(&epoch_key)
                    .get(&gen_key)
                    .get(&seq_key)
                    .query(c)
            })?;
        if epoch.as_deref() != Some(self.epoch().as_str()) {
            self.renew_epoch()?;
            mirror.clear();
            return self.refresh(project, mirror);
        }
        *self.epoch_checked.locked() = Instant::now();
        if generation != mirror.generation {
            mirror.clear();
            mirror.generation = generation;
        }
        let seq = seq.unwrap_or(0);
        let mut applied = 0;
        if seq > mirror.seq {
            let chg = self.key(project, "chg");
            let changed: Vec<String> = self.run(|c, _| {
                redis::cmd("ZRANGEBYSCORE")
                    .arg(&chg)
                    .arg(format!("({}", mirror.seq))
                    .arg(seq)
                    .query(c)
            })?;
            let vec_key = self.key(project, "vec");
            let w = self.dim.words();
            for chunk in changed.chunks(FETCH_CHUNK) {
                let values: Vec<Option<Vec<u8>>> = self.run(|c, _| {
                    let mut cmd = redis::cmd("HMGET");
                    cmd.arg(&vec_key);
                    for id in chunk {
                        cmd.arg(id);
                    }
                    cmd.query(c)
                })?;
                for (id, value) in chunk.iter().zip(values) {
                    let id = VectorId(id.parse().map_err(|_| {
                        self.foreign(&chg, format!("member {id:?} is not a vector id"))
                    })?);
                    match value {
                        Some(bytes) => mirror.upsert(id, &self.decode(&vec_key, &bytes)?),
                        None => mirror.remove(id, w),
                    }
                    applied += 1;
                }
            }
            mirror.seq = seq;
        } else if seq < mirror.seq {
            // The counter went back: the project was erased and recreated under the same
            // generation number (cannot happen while `gens` survives); start over.
            mirror.clear();
            return self.refresh(project, mirror);
        }
        mirror.checked = Some(Instant::now());
        Ok(applied)
    }

    fn insert_attempt(
        &self,
        project: &ProjectId,
        items: &[(VectorId, HvRef<'_>)],
        renewed: bool,
    ) -> StoreResult<()> {
        let keys = self.script_keys(project);
        let payloads: Vec<(String, Vec<u8>)> = items
            .iter()
            .map(|(id, v)| {
                (
                    id.0.to_string(),
                    v.words().iter().flat_map(|w| w.to_le_bytes()).collect(),
                )
            })
            .collect();
        let epoch = self.epoch();
        let reply: Vec<String> = self.run(|c, attempt| {
            let mut call = self.insert.prepare_invoke();
            for k in &keys {
                call.key(k);
            }
            call.arg(&epoch)
                .arg(if attempt > 0 { "1" } else { "0" })
                .arg(project.as_str());
            for (id, bytes) in &payloads {
                call.arg(id).arg(bytes.as_slice());
            }
            call.invoke(c)
        })?;
        match reply.first().map(String::as_str) {
            Some("ok") if reply.len() == 3 => {
                if let Some(mirror) = self.existing_mirror(project) {
                    let mut m = mirror.writing();
                    for (id, v) in items {
                        m.upsert(*id, v.words());
                    }
                    m.advance(reply[1].parse().unwrap_or(0), &reply[2]);
                }
                Ok(())
            }
            Some("dup") if reply.len() == 2 => Err(StoreError::DuplicateId {
                project: project.clone(),
                id: VectorId(reply[1].parse().unwrap_or(0)),
            }),
            Some("epoch") if !renewed => {
                self.renew_epoch()?;
                self.insert_attempt(project, items, true)
            }
            _ => Err(self.foreign(&keys[1], format!("unexpected script reply {reply:?}"))),
        }
    }
}

/// A fresh random epoch token (time, process and a counter, hashed).
fn new_epoch() -> String {
    use std::sync::atomic::AtomicU64;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!(
        "{nanos}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(seed.as_bytes()))
}

impl VectorTier for RedisTier {
    fn name(&self) -> &'static str {
        "redis"
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
        self.insert_attempt(project, items, false)
    }

    fn get(&self, project: &ProjectId, id: VectorId) -> StoreResult<Option<Hypervector>> {
        let key = self.key(project, "vec");
        let bytes: Option<Vec<u8>> =
            self.run(|c, _| redis::cmd("HGET").arg(&key).arg(id.0).query(c))?;
        bytes
            .map(|b| {
                let words = self.decode(&key, &b)?;
                Ok(Hypervector::from_words(words)?)
            })
            .transpose()
    }

    fn get_many(
        &self,
        project: &ProjectId,
        ids: &[VectorId],
    ) -> StoreResult<Vec<Option<Hypervector>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let key = self.key(project, "vec");
        let found: Vec<Option<Vec<u8>>> = self.run(|c, _| {
            let mut cmd = redis::cmd("HMGET");
            cmd.arg(&key);
            for id in ids {
                cmd.arg(id.0);
            }
            cmd.query(c)
        })?;
        found
            .into_iter()
            .map(|bytes| {
                bytes
                    .map(|b| {
                        let words = self.decode(&key, &b)?;
                        Ok(Hypervector::from_words(words)?)
                    })
                    .transpose()
            })
            .collect()
    }

    fn contains(&self, project: &ProjectId, id: VectorId) -> StoreResult<bool> {
        let key = self.key(project, "vec");
        self.run(|c, _| redis::cmd("HEXISTS").arg(&key).arg(id.0).query(c))
    }

    fn delete(&self, project: &ProjectId, id: VectorId) -> StoreResult<bool> {
        let all = self.script_keys(project);
        let keys = &all[..6];
        for renewed in [false, true] {
            let epoch = self.epoch();
            let reply: Vec<String> = self.run(|c, _| {
                let mut call = self.delete.prepare_invoke();
                for k in keys {
                    call.key(k);
                }
                call.arg(&epoch).arg(project.as_str()).arg(id.0);
                call.invoke(c)
            })?;
            match reply.first().map(String::as_str) {
                Some("ok") if reply.len() == 4 => {
                    let deleted = reply[1] == "1";
                    if deleted && let Some(mirror) = self.existing_mirror(project) {
                        let mut m = mirror.writing();
                        m.remove(id, self.dim.words());
                        m.advance(reply[2].parse().unwrap_or(0), &reply[3]);
                    }
                    return Ok(deleted);
                }
                Some("epoch") if !renewed => self.renew_epoch()?,
                _ => {
                    return Err(
                        self.foreign(&keys[1], format!("unexpected script reply {reply:?}"))
                    );
                }
            }
        }
        // A second epoch change within one call: the deleted vector is gone either way.
        Ok(false)
    }

    fn search(&self, project: &ProjectId, request: &SearchRequest<'_>) -> StoreResult<Vec<Hit>> {
        super::validate_query(self.dim, request)?;
        let kernel = hdv::kernels::try_active()?;
        let mirror = self.mirror(project)?;
        let m = mirror.reading();
        let mut top = Vec::new();
        if m.ids.is_empty() {
            return Ok(top);
        }
        let view = Block::new(&m.words, self.dim)?;
        scan_block(kernel, &view, request, |i| m.ids[i], |_| false, &mut top);
        Ok(top)
    }

    fn len(&self, project: &ProjectId) -> usize {
        let key = self.key(project, "vec");
        match self.run(|c, _| redis::cmd("HLEN").arg(&key).query::<usize>(c)) {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!(error = %e, "counting warm vectors failed; reporting the local mirror");
                self.mirrors
                    .reading()
                    .get(project)
                    .map_or(0, |m| m.reading().ids.len())
            }
        }
    }

    fn projects(&self) -> Vec<ProjectId> {
        self.list_projects().unwrap_or_else(|e| {
            tracing::warn!(error = %e, "listing warm projects failed; reporting the local mirrors");
            let mut v: Vec<ProjectId> = self.mirrors.reading().keys().cloned().collect();
            v.sort();
            v
        })
    }

    fn list_projects(&self) -> StoreResult<Vec<ProjectId>> {
        let key = self.global("projects");
        let names: Vec<String> = self.run(|c, _| redis::cmd("SMEMBERS").arg(&key).query(c))?;
        let mut v: Vec<ProjectId> = names
            .into_iter()
            .filter_map(|n| ProjectId::new(n).ok())
            .collect();
        v.sort();
        Ok(v)
    }

    fn ids(&self, project: &ProjectId) -> Vec<VectorId> {
        self.list_ids(project).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "listing warm ids failed; reporting the local mirror");
            let mut v = self
                .existing_mirror(project)
                .map(|m| m.reading().ids.clone())
                .unwrap_or_default();
            v.sort();
            v
        })
    }

    fn list_ids(&self, project: &ProjectId) -> StoreResult<Vec<VectorId>> {
        let key = self.key(project, "vec");
        let ids: Vec<String> = self.run(|c, _| redis::cmd("HKEYS").arg(&key).query(c))?;
        let mut v: Vec<VectorId> = ids
            .iter()
            .filter_map(|s| s.parse().ok())
            .map(VectorId)
            .collect();
        v.sort();
        Ok(v)
    }

    fn drop_project(&self, project: &ProjectId) -> StoreResult<usize> {
        let vec_key = self.key(project, "vec");
        let projects = self.global("projects");
        let count: usize = self.run(|c, _| redis::cmd("HLEN").arg(&vec_key).query(c))?;
        let keys = self.project_keys(project)?;
        self.run(|c, _| {
            let mut pipe = redis::pipe();
            for chunk in keys.chunks(DELETE_CHUNK) {
                pipe.cmd("DEL").arg(chunk).ignore();
            }
            pipe.cmd("SREM")
                .arg(&projects)
                .arg(project.as_str())
                .ignore();
            pipe.query::<()>(c)
        })?;
        self.mirrors.writing().remove(project);
        Ok(count)
    }

    fn flush(&self) -> StoreResult<()> {
        // Redis persistence is the server's setting; the ledger can rebuild everything.
        Ok(())
    }

    fn lost_contents(&self) -> StoreResult<bool> {
        let due = self.epoch_checked.locked().elapsed() >= self.settings.refresh;
        if due {
            let key = self.global("epoch");
            let stored: Option<String> = self.run(|c, _| redis::cmd("GET").arg(&key).query(c))?;
            if stored.as_deref() != Some(self.epoch().as_str()) {
                self.renew_epoch()?;
            } else {
                *self.epoch_checked.locked() = Instant::now();
            }
        }
        Ok(self.lost.swap(false, Ordering::AcqRel))
    }
}

impl SharedTraces for RedisTier {
    fn touch(
        &self,
        project: &ProjectId,
        items: &[(VectorId, u64)],
        now: f64,
    ) -> StoreResult<Vec<u64>> {
        let (acc, last) = (self.key(project, "acc"), self.key(project, "last"));
        self.run(|c, _| {
            let mut call = self.touch.prepare_invoke();
            call.key(&acc).key(&last).arg(now);
            for (id, base) in items {
                call.arg(id.0).arg(*base);
            }
            call.invoke(c)
        })
    }

    fn pull(&self, project: &ProjectId) -> StoreResult<Vec<(VectorId, u64, f64)>> {
        let (acc, last) = (self.key(project, "acc"), self.key(project, "last"));
        let (accesses, lasts): (HashMap<u64, u64>, HashMap<u64, f64>) = self.run(|c, _| {
            redis::pipe()
                .cmd("HGETALL")
                .arg(&acc)
                .cmd("HGETALL")
                .arg(&last)
                .query(c)
        })?;
        let mut out: Vec<(VectorId, u64, f64)> = accesses
            .into_iter()
            .map(|(id, a)| (VectorId(id), a, lasts.get(&id).copied().unwrap_or(0.0)))
            .collect();
        out.sort_unstable_by_key(|t| t.0);
        Ok(out)
    }
}

impl WorkingBoard for RedisTier {
    fn update(
        &self,
        project: &ProjectId,
        agent: &str,
        f: &mut dyn FnMut(&mut Vec<WorkingItem>),
    ) -> StoreResult<()> {
        let key = self.key(project, &format!("wm:{agent}"));
        let lock = self.key(project, &format!("wml:{agent}"));
        let token = new_epoch();
        let hold_ms = self.settings.command_timeout.as_millis().max(1) as u64;
        let deadline = Instant::now() + self.settings.command_timeout;
        loop {
            let taken: Option<String> = self.run(|c, _| {
                redis::cmd("SET")
                    .arg(&lock)
                    .arg(&token)
                    .arg("NX")
                    .arg("PX")
                    .arg(hold_ms)
                    .query(c)
            })?;
            if taken.is_some() {
                break;
            }
            if Instant::now() >= deadline {
                return Err(StoreError::Unavailable {
                    service: "redis",
                    url: self.url.clone(),
                    reason: format!(
                        "the working memory of agent {agent:?} in project `{project}` stayed locked by another process"
                    ),
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let result = (|| {
            let stored: Option<Vec<u8>> = self.run(|c, _| redis::cmd("GET").arg(&key).query(c))?;
            let mut items: Vec<WorkingItem> = match stored {
                Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                    self.foreign(&key, format!("not a working memory hypermem wrote: {e}"))
                })?,
                None => Vec::new(),
            };
            f(&mut items);
            if items.is_empty() {
                self.run(|c, _| redis::cmd("DEL").arg(&key).query::<()>(c))
            } else {
                let bytes = serde_json::to_vec(&items).map_err(|e| {
                    self.foreign(&key, format!("working memory cannot be written: {e}"))
                })?;
                self.run(|c, _| {
                    redis::cmd("SET")
                        .arg(&key)
                        .arg(bytes.as_slice())
                        .query::<()>(c)
                })
            }
        })();
        let unlocked = self.run(|c, _| {
            self.unlock
                .prepare_invoke()
                .key(&lock)
                .arg(&token)
                .invoke::<i64>(c)
        });
        result.and(unlocked.map(|_| ()))
    }

    fn agents(&self, project: &ProjectId) -> StoreResult<Vec<String>> {
        let marker = format!("{}:{{{}}}:wm:", self.settings.prefix, project);
        Ok(self
            .project_keys(project)?
            .into_iter()
            .filter_map(|k| k.strip_prefix(&marker).map(str::to_owned))
            .collect())
    }
}
