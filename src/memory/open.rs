//! Opening a data directory: the profile's tiers (lite: mmap warm and cold; standard:
//! Redis warm; scale: Qdrant as the one home of every vector), the ledger, cognition and
//! the semantic model wired into one [`Memory`]; the repair of vectors an interrupted
//! observation did not store; read-only views beside a writer.

use super::*;

/// File of a data directory naming its deployment: a random token, written once, that
/// shared services (Redis) record so two data directories never share one key space.
const DEPLOYMENT: &str = "DEPLOYMENT";

/// Directory of a data directory holding the cold segment store (lite and standard).
const COLD_SEGMENTS: &str = "vectors-cold";

/// The data directory's deployment token, created if `create` and missing.
fn deployment_token(data_dir: &Path, create: bool) -> Result<String> {
    let path = data_dir.join(DEPLOYMENT);
    let io = |source| crate::store::StoreError::Io {
        path: path.clone(),
        source,
    };
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().to_owned()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e).into()),
    }
    if !create {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no deployment token: open the data directory for writing once first",
        ))
        .into());
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!("{nanos}-{}-{}", std::process::id(), data_dir.display());
    let token = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(seed.as_bytes()));
    let tmp = data_dir.join(format!("{DEPLOYMENT}.tmp"));
    std::fs::write(&tmp, format!("{token}\n")).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)?;
    Ok(token)
}

/// A warm tier, and where the deployment's processes share LTP accesses (if they do).
type WarmTier = (Arc<dyn VectorTier>, Option<Shared>);

/// What a deployment's processes share through Redis: LTP access counts and working
/// memories.
#[derive(Clone)]
struct Shared {
    traces: Arc<dyn crate::store::SharedTraces>,
    working: Arc<dyn crate::cognition::WorkingBoard>,
}

/// The durable vector tiers of a profile, opened for writing or as a view.
struct OpenedTiers {
    warm: Arc<dyn VectorTier>,
    cold: Arc<dyn VectorTier>,
    board: Option<Shared>,
    lock: Option<std::fs::File>,
}

/// The profile's ledger: its PostgreSQL server when the profile names one (every node of a
/// deployment shares it; the first to connect migrates it), else the SQLite file of
/// `data_dir` — migrated for a writer, checked for a `view` (an outdated schema is
/// `needs_migration`, a newer one `schema_too_new`: a view changes nothing).
fn open_ledger(profile: &Profile, data_dir: &Path, view: bool) -> Result<Ledger> {
    if let Some(url) = &profile.ledger.url {
        #[cfg(feature = "postgres")]
        return Ok(Ledger::connect_as(
            url,
            profile.ledger.password().as_deref(),
            LedgerConfig::default(),
        )?);
        #[cfg(not(feature = "postgres"))]
        return Err(crate::ledger::LedgerError::Invalid {
            what: "ledger.url",
            reason: format!(
                "this binary has no PostgreSQL ledger (`{}`); build it with the scale profile",
                crate::config::redact_url(url)
            ),
        }
        .into());
    }
    let path = data_dir.join("ledger.db");
    if !view {
        return Ok(Ledger::open(path, LedgerConfig::default())?);
    }
    let ledger = Ledger::open_unmigrated(path, LedgerConfig::default())?;
    let needed = crate::ledger::MIGRATIONS.last().map_or(0, |m| m.version);
    let found = ledger.schema_version()?;
    if found > needed {
        // Written by a newer build: migrating cannot help.
        return Err(crate::ledger::LedgerError::SchemaTooNew {
            found,
            supported: needed,
        }
        .into());
    }
    if found != needed {
        return Err(crate::ledger::LedgerError::NeedsMigration { found, needed }.into());
    }
    Ok(ledger)
}

/// The lock a process writing `data_dir` holds under `profile`: the cold segment store's
/// (lite and standard), `LOCK` in the data directory on scale.
pub(crate) fn writer_lock_path(profile: &Profile, data_dir: &Path) -> PathBuf {
    if profile.qdrant.is_some() {
        data_dir.join("LOCK")
    } else {
        crate::store::SegmentStore::lock_path(&data_dir.join(COLD_SEGMENTS))
    }
}

/// Opens the tiers the profile's table in DESIGN.md names: lite, mmap warm and cold;
/// standard, Redis warm and mmap cold; scale, Qdrant as the one home of every vector
/// (warm and cold at once) with Redis sharing access counts. A writer first takes the
/// data directory's lock (the cold segment store's, or `LOCK` on scale), so it is the
/// writer before the deployment token is read or created.
/// A data directory on a shared ledger (PostgreSQL) takes the deployment token the ledger
/// keeps, so every node of one deployment is the one owner of its Redis keys.
fn open_tiers(
    profile: &Profile,
    data_dir: &Path,
    read_only: bool,
    ledger: &Ledger,
) -> Result<OpenedTiers> {
    let token = || -> Result<String> {
        match ledger.deployment_token()? {
            Some(token) => Ok(token),
            None => deployment_token(data_dir, !read_only),
        }
    };
    let segments = |dir: &str| -> Result<Arc<dyn VectorTier>> {
        let path = data_dir.join(dir);
        Ok(if read_only {
            Arc::new(SegmentStore::view(path, profile.dim)?)
        } else {
            Arc::new(SegmentStore::open_or_create(
                path,
                profile.dim,
                profile.store,
            )?)
        })
    };
    if let Some(qdrant) = &profile.qdrant {
        let lock = if read_only {
            None
        } else {
            Some(crate::store::lock_file(
                &writer_lock_path(profile, data_dir),
                profile.store.lock_wait_ms,
            )?)
        };
        let home = open_qdrant(profile, qdrant)?;
        let board = match &profile.redis {
            Some(redis) => open_redis(profile, redis, &token()?)?.1,
            None => None,
        };
        return Ok(OpenedTiers {
            warm: home.clone(),
            cold: home,
            board,
            lock,
        });
    }
    let cold = segments(COLD_SEGMENTS)?;
    let (warm, board) = match &profile.redis {
        Some(redis) => open_redis(profile, redis, &token()?)?,
        None => (segments("vectors")?, None),
    };
    Ok(OpenedTiers {
        warm,
        cold,
        board,
        lock: None,
    })
}

/// The Qdrant tier of the scale profile.
#[cfg(feature = "scale")]
fn open_qdrant(profile: &Profile, qdrant: &crate::QdrantSettings) -> Result<Arc<dyn VectorTier>> {
    Ok(Arc::new(crate::store::QdrantTier::open(
        profile.dim,
        qdrant,
    )?))
}

/// Without the `scale` feature no profile with Qdrant settings parses; a hand-built one is
/// refused the same way.
#[cfg(not(feature = "scale"))]
fn open_qdrant(profile: &Profile, _: &crate::QdrantSettings) -> Result<Arc<dyn VectorTier>> {
    Err(crate::ConfigError::NotBuilt {
        profile: profile.kind.name().to_owned(),
        built: crate::PROFILE,
    }
    .into())
}

/// The Redis warm tier of a standard or scale profile; it also holds the shared accesses.
#[cfg(feature = "standard")]
fn open_redis(profile: &Profile, redis: &crate::RedisSettings, owner: &str) -> Result<WarmTier> {
    let tier = Arc::new(crate::store::RedisTier::open(profile.dim, redis, owner)?);
    let shared = Shared {
        traces: tier.clone(),
        working: tier.clone(),
    };
    Ok((tier, Some(shared)))
}

/// Without the `standard` feature no profile with Redis settings parses; a hand-built one
/// is refused the same way.
#[cfg(not(feature = "standard"))]
fn open_redis(profile: &Profile, _: &crate::RedisSettings, _: &str) -> Result<WarmTier> {
    Err(crate::ConfigError::NotBuilt {
        profile: profile.kind.name().to_owned(),
        built: crate::PROFILE,
    }
    .into())
}

impl Memory {
    /// Opens (creating if needed) the memory in `data_dir` (or the profile's), and
    /// re-encodes any event whose vector an interrupted observation did not store.
    ///
    /// # Errors
    /// Ledger or store errors (wrong dimension, corruption, lock held by another process).
    pub fn open(profile: &Profile, data_dir: Option<&Path>) -> Result<Self> {
        Self::open_with_clock(profile, data_dir, Arc::new(crate::clock::SystemClock))
    }

    /// [`open`](Self::open) on another clock (event times, LTP ages, synapse decay; tests
    /// and simulations inject a [`crate::clock::ManualClock`]).
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_with_clock(
        profile: &Profile,
        data_dir: Option<&Path>,
        clock: Arc<dyn crate::clock::Clock>,
    ) -> Result<Self> {
        // A bad `HDV_KERNEL` is an error here, at open, never a panic in a kernel call.
        hdv::kernels::try_active()?;
        let data_dir = data_dir.map_or_else(|| profile.data_dir.clone(), Path::to_path_buf);
        // A directory that held nothing before is left as it was when the open fails (a
        // Redis or Qdrant that cannot be reached, a bad profile): no ledger, no token.
        let existed = data_dir.exists();
        let fresh = std::fs::read_dir(&data_dir).map_or(true, |mut d| d.next().is_none());
        let opened = (|| {
            std::fs::create_dir_all(&data_dir).map_err(|source| crate::store::StoreError::Io {
                path: data_dir.clone(),
                source,
            })?;
            let ledger = Arc::new(open_ledger(profile, &data_dir, false)?.with_clock(clock));
            let tiers = open_tiers(profile, &data_dir, false, &ledger)?;
            let memory = Self::assemble(profile, data_dir.clone(), ledger, tiers, false)?;
            memory.repair()?;
            memory.restore_traces()?;
            if memory.embedder.deferred() {
                let queued = memory.ledger.queue_unembedded()?;
                if queued > 0 {
                    tracing::info!(
                        queued,
                        "events without a semantic vector queued for the sentence model"
                    );
                }
            }
            Ok(memory)
        })();
        if opened.is_err() && fresh {
            let undone = if existed {
                std::fs::read_dir(&data_dir).and_then(|entries| {
                    entries.flatten().try_for_each(|e| {
                        if e.file_type()?.is_dir() {
                            std::fs::remove_dir_all(e.path())
                        } else {
                            std::fs::remove_file(e.path())
                        }
                    })
                })
            } else {
                std::fs::remove_dir_all(&data_dir)
            };
            if let Err(e) = undone {
                tracing::warn!(dir = %data_dir.display(), error = %e, "a failed open left files behind");
            }
        }
        opened
    }

    /// The memory over opened stores (the tiers, cognition and the semantic model are
    /// built here, for a writable memory and a view alike).
    fn assemble(
        profile: &Profile,
        data_dir: PathBuf,
        ledger: Arc<Ledger>,
        tiers: OpenedTiers,
        read_only: bool,
    ) -> Result<Self> {
        let OpenedTiers {
            warm,
            cold,
            board,
            lock,
        } = tiers;
        let mut tiers = TierManager::new(
            HotTier::new(profile.dim, profile.hot_capacity),
            warm.clone(),
            cold.clone(),
            profile.tiers,
            ledger.clock(),
        )?;
        let mut cognition = Cognition::new(ledger.clone(), profile.dim, profile.cognition);
        if let Some(shared) = board {
            tiers = tiers.with_shared_traces(shared.traces);
            cognition = cognition.with_working_board(shared.working);
        }
        let cognition = Arc::new(cognition);
        let model = match &profile.semantic.model {
            Some(dir) => {
                Some(crate::semantic::Model::load(dir)?.with_windows(profile.semantic.windows))
            }
            None => None,
        };
        let embedder = crate::semantic::Embedder::new(model, profile.semantic.bits);
        let words = embedder
            .word_vectors()
            .filter(|_| profile.semantic.item_memory);
        Ok(Self {
            encoders: crate::semantic::Encoders::new(profile.dim, profile.text, words),
            embedder,
            spaces: RwLock::new(HashMap::new()),
            profile: profile.clone(),
            data_dir,
            ledger,
            tiers,
            warm,
            cold,
            _lock: lock,
            cognition,
            lexicon: RwLock::new(HashMap::new()),
            last_used: Mutex::new(HashMap::new()),
            uses: std::sync::atomic::AtomicU64::new(0),
            append_lock: Mutex::new(()),
            ticked: Mutex::new(std::collections::HashSet::new()),
            read_only,
            feedback: Mutex::new(Vec::new()),
            feedback_deferred: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Opens a data directory for reading only, beside a process that holds it (a server,
    /// a writer): no lock is taken and nothing stored is changed — no repair, no migration
    /// (an outdated schema is `needs_migration`), no learning from recalls (no
    /// potentiation, no synapses), no saved indexes. Its one write is the query log of the
    /// recalls it answers (rows of `query_log`, what knowledge gaps are made of), applied
    /// when it is flushed or dropped. It sees what was committed when it opened.
    ///
    /// # Errors
    /// `needs_migration`, a missing or damaged store, SQLite errors.
    pub fn open_view(profile: &Profile, data_dir: Option<&Path>) -> Result<Self> {
        hdv::kernels::try_active()?;
        let data_dir = data_dir.map_or_else(|| profile.data_dir.clone(), Path::to_path_buf);
        let ledger = Arc::new(open_ledger(profile, &data_dir, true)?);
        let tiers = open_tiers(profile, &data_dir, true, &ledger)?;
        let memory = Self::assemble(profile, data_dir, ledger, tiers, true)?;
        memory.restore_traces()?;
        Ok(memory)
    }

    /// Restores the LTP statistics of every stored memory: persisted ones from
    /// `memory_traces`, else importance 1, one access, last access = when it was stored
    /// (`ingested_at`), as the process that stored it counted it: a memory's strength, and
    /// so its tier, does not depend on whether the process restarted since (an imported
    /// conversation of 2023 was still accessed when it was stored).
    pub(super) fn restore_traces(&self) -> Result<()> {
        let rows = self.ledger.reading(|rows| rows.traces())?;
        let mut project: Option<ProjectId> = None;
        for (name, id, stored, importance, accesses, last) in rows {
            if project.as_ref().is_none_or(|p| p.as_str() != name) {
                project = Some(ProjectId::new(name)?);
            }
            let p = project.as_ref().expect("set above");
            self.tiers.restore(
                p,
                VectorId(id),
                importance.unwrap_or(1.0),
                accesses.unwrap_or(1),
                last.unwrap_or(stored) as f64 / 1000.0,
            );
        }
        Ok(())
    }

    /// Events appended to the ledger whose vectors are missing (an observation interrupted
    /// between its ledger commit and its vector append) are encoded and stored now.
    pub(super) fn repair(&self) -> Result<usize> {
        let projects = self.ledger.reading(|rows| rows.event_projects())?;
        let mut repaired = 0;
        for name in projects {
            let project = ProjectId::new(name)?;
            let ids = self
                .ledger
                .reading(|rows| rows.event_ids(project.as_str()))?;
            let missing: Vec<EventId> = ids
                .into_iter()
                .map(EventId)
                .filter(|i| self.tiers.trace(&project, VectorId(i.0)).is_none())
                .collect();
            for chunk in missing.chunks(1000) {
                let mut items = Vec::new();
                for id in chunk {
                    if let Some(e) = self.ledger.get(&project, *id)?
                        && let Some(v) = self.encode(&e.content)
                    {
                        items.push((VectorId(id.0), v));
                    }
                }
                let batch: Vec<_> = items.iter().map(|(id, v)| (*id, v.view())).collect();
                match self.tiers.insert_batch(&project, &batch, 1.0) {
                    Ok(()) => repaired += batch.len(),
                    // The tier holds some of them but did not list them (a service that
                    // answered the listing partially): those are adopted, not re-stored.
                    Err(crate::store::StoreError::DuplicateId { .. }) => {
                        for item in &batch {
                            match self
                                .tiers
                                .insert_batch(&project, std::slice::from_ref(item), 1.0)
                            {
                                Ok(()) => repaired += 1,
                                Err(crate::store::StoreError::DuplicateId { .. }) => {
                                    tracing::warn!(
                                        project = project.as_str(),
                                        id = item.0.0,
                                        "a stored vector the warm tier did not list; adopted"
                                    );
                                    self.tiers.adopt(&project, &[item.0]);
                                }
                                Err(e) => return Err(e.into()),
                            }
                        }
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        if repaired > 0 {
            tracing::warn!(repaired, "re-encoded events whose vectors were not stored");
        }
        Ok(repaired)
    }

    /// Rebuilds the warm tier from the ledger if it reports that it lost its contents (a
    /// Redis restarted empty or flushed): every event whose durable home is the warm tier
    /// and whose vector is missing there is re-encoded (bit-identical: encoding is
    /// deterministic) and stored again. Another process may be restoring the same vectors:
    /// an id it stored first is not an error. Returns how many were restored. A view
    /// leaves the rebuild to the writer.
    ///
    /// # Errors
    /// The warm tier is unavailable; SQLite errors.
    pub fn recover_warm(&self) -> Result<usize> {
        if self.read_only || !self.warm.lost_contents()? {
            return Ok(0);
        }
        let _append = self.append_lock.locked();
        let projects = self.ledger.reading(|rows| rows.event_projects())?;
        let mut restored = 0;
        for name in projects {
            let project = ProjectId::new(name)?;
            let present: std::collections::HashSet<VectorId> =
                self.warm.ids(&project).into_iter().collect();
            let missing: Vec<VectorId> = self
                .tiers
                .warm_homed(&project)
                .into_iter()
                .filter(|id| !present.contains(id))
                .collect();
            for chunk in missing.chunks(1000) {
                let mut items = Vec::with_capacity(chunk.len());
                for id in chunk {
                    if let Some(e) = self.ledger.get(&project, EventId(id.0))?
                        && let Some(v) = self.encode(&e.content)
                    {
                        items.push((*id, v));
                    }
                }
                let batch: Vec<_> = items.iter().map(|(id, v)| (*id, v.view())).collect();
                match self.warm.insert_batch(&project, &batch) {
                    Ok(()) => restored += batch.len(),
                    Err(crate::store::StoreError::DuplicateId { .. }) => {
                        for item in &batch {
                            match self.warm.insert_batch(&project, std::slice::from_ref(item)) {
                                Ok(()) => restored += 1,
                                Err(crate::store::StoreError::DuplicateId { .. }) => {}
                                Err(e) => return Err(e.into()),
                            }
                        }
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        }
        tracing::warn!(restored, "warm tier rebuilt from the ledger");
        Ok(restored)
    }
}
