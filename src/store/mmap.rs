//! [`SegmentStore`]: the durable tier of the lite profile — per-project directories of
//! append-only mmap segment files.

use crate::sync::{Recover as _, RecoverRw as _};
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use hdv::{Dim, HvRef, Hypervector};
use rayon::prelude::*;

use super::error::{IoContext, StoreError, StoreResult};
use super::segment::{Segment, SegmentRecovery};
use super::{
    FirstStage, Hit, ProjectId, SearchRequest, VectorId, VectorTier, merge_hits, prefix_candidates,
    scan_block, scan_block_two_stage, scan_block_visiting,
};
use crate::index::{Hnsw, HnswConfig};

/// Name of the marker file that identifies a store root and records its dimension.
const MARKER: &str = "STORE";
/// Name of the advisory lock file.
const LOCK: &str = "LOCK";
/// Directory holding one sub-directory per project.
const PROJECTS: &str = "projects";

/// Settings of a [`SegmentStore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentStoreConfig {
    /// Vectors per segment file (files are preallocated to this size, sparsely).
    pub segment_capacity: usize,
    /// Verify the checksum of every committed vector when opening.
    pub verify_on_open: bool,
    /// A project with at least this many vectors is searched through an HNSW graph
    /// instead of an exact scan (`usize::MAX` disables HNSW).
    pub hnsw_threshold: usize,
    /// HNSW parameters.
    pub hnsw: HnswConfig,
    /// Bits of every vector the first stage of a two-stage scan compares (a multiple of
    /// 64 below the dimension; 0 scans every bit of every vector).
    pub prefix_bits: usize,
    /// A project with at least this many vectors (and no HNSW graph) is scanned in two
    /// stages: every vector's first `prefix_bits` bits, then the best candidates in full.
    pub prefix_threshold: usize,
    /// How long opening waits for another process to release the store before it
    /// refuses with [`StoreError::Locked`] (retryable), in milliseconds.
    pub lock_wait_ms: u64,
}

impl Default for SegmentStoreConfig {
    fn default() -> Self {
        Self {
            segment_capacity: 65_536,
            verify_on_open: true,
            hnsw_threshold: 50_000,
            hnsw: HnswConfig::default(),
            prefix_bits: 2048,
            prefix_threshold: 20_000,
            lock_wait_ms: 5_000,
        }
    }
}

/// Takes the advisory exclusive lock on `path` (created if missing) that makes this
/// process the owner of a store or data directory. Another process holds it: wait for it
/// (a CLI call takes milliseconds), bounded by `wait_ms`, then refuse with the retryable
/// [`StoreError::Locked`] naming the locked directory.
///
/// # Errors
/// [`StoreError::Locked`]; I/O errors.
pub fn lock_file(path: &Path, wait_ms: u64) -> StoreResult<File> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .at(path)?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(wait_ms);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(StoreError::Locked {
                    path: path.parent().unwrap_or(path).to_owned(),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e).at(path),
        }
    }
}

/// Directory (inside a project) of its saved HNSW graph.
const HNSW_DIR: &str = "hnsw";

/// What opening a store repaired (also logged).
#[derive(Debug, Clone, Default)]
pub struct StoreRecovery {
    /// Segments that needed repair, with what was done.
    pub segments: Vec<(PathBuf, SegmentRecovery)>,
    /// Interrupted compactions rolled forward (new segments were complete).
    pub compactions_finished: usize,
    /// Interrupted compactions rolled back (new segments were incomplete).
    pub compactions_discarded: usize,
    /// HNSW graphs started again on open because the saved one was missing or did not
    /// match the segments (their indexer rebuilds them in the background).
    pub indexes_rebuilt: usize,
}

impl StoreRecovery {
    /// Whether nothing needed repair.
    pub fn is_clean(&self) -> bool {
        self.segments.is_empty()
            && self.compactions_finished == 0
            && self.compactions_discarded == 0
            && self.indexes_rebuilt == 0
    }
}

/// A project's HNSW graph and how much of the project it holds: the first `covered` slots
/// in segment order (deleted ones included), point `i` being slot `i`. The slots after them
/// are the **tail**: every search scans it exactly beside the graph, and the project's
/// indexer thread adds it to the graph off the write path.
#[derive(Debug)]
struct Graph {
    index: Hnsw,
    covered: AtomicUsize,
}

impl Graph {
    fn empty(dim: Dim, config: HnswConfig, dir: &Path) -> StoreResult<Self> {
        Ok(Self {
            index: Hnsw::new(dim, config).map_err(|e| hnsw_error(dir, e))?,
            covered: AtomicUsize::new(0),
        })
    }
}

/// Tail slots the indexer adds to a graph at a time (with the project's writer lock held,
/// so an append waits at most one such step).
const INDEX_STEP: usize = 64;

#[derive(Debug)]
struct ProjectDir {
    dir: PathBuf,
    segments: RwLock<Vec<Arc<Segment>>>,
    /// Live ids → (segment position, slot).
    index: RwLock<HashMap<VectorId, (usize, usize)>>,
    writer: Mutex<()>,
    /// The HNSW graph, once the project reached the threshold.
    hnsw: RwLock<Option<Arc<Graph>>>,
    /// Whether the graph changed since it was last saved.
    hnsw_dirty: AtomicBool,
    /// Whether an indexer thread is adding the tail to the graph.
    indexing: AtomicBool,
    /// Set when the store closes or drops the project: its indexer stops.
    closed: AtomicBool,
    /// When vectors were last appended (the indexer yields to a project being written).
    last_write: Mutex<Instant>,
}

impl ProjectDir {
    fn new(
        dir: PathBuf,
        segments: Vec<Arc<Segment>>,
        index: HashMap<VectorId, (usize, usize)>,
    ) -> Self {
        Self {
            dir,
            segments: RwLock::new(segments),
            index: RwLock::new(index),
            writer: Mutex::new(()),
            hnsw: RwLock::new(None),
            hnsw_dirty: AtomicBool::new(false),
            indexing: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            last_write: Mutex::new(Instant::now()),
        }
    }

    /// Total committed slots (deleted included): the number of points a graph must hold.
    fn committed(&self) -> usize {
        self.segments.reading().iter().map(|s| s.committed()).sum()
    }

    /// The id of every committed slot, in segment order (deleted ones included).
    fn slot_ids(&self) -> Vec<VectorId> {
        let segments = self.segments.reading();
        segments
            .iter()
            .flat_map(|seg| (0..seg.committed()).map(|slot| seg.id(slot)))
            .collect()
    }

    /// Loads the saved graph when its points are the project's first slots (then the
    /// slots after them are its tail); otherwise, once the project has reached the
    /// threshold, starts an empty graph that the indexer fills.
    fn attach_hnsw(
        &self,
        dim: Dim,
        config: &SegmentStoreConfig,
        recovery: &mut StoreRecovery,
    ) -> StoreResult<()> {
        let live = self.index.reading().len();
        let saved = self.dir.join(HNSW_DIR);
        if live < config.hnsw_threshold {
            return Ok(());
        }
        let slots = self.slot_ids();
        let loaded = Hnsw::load(&saved, dim, config.hnsw.ef_search, config.hnsw.screen_bits)
            .ok()
            .filter(|h| {
                let ids = h.ids();
                ids.len() <= slots.len() && ids[..] == slots[..ids.len()]
            });
        let graph = match loaded {
            Some(g) => {
                // Tombstones in the segments are authoritative.
                let covered = g.points();
                let mut rank = 0;
                for seg in self.segments.reading().iter() {
                    for slot in 0..seg.committed() {
                        if rank < covered && seg.is_deleted(slot) {
                            g.delete(seg.id(slot));
                        }
                        rank += 1;
                    }
                }
                Graph {
                    index: g,
                    covered: AtomicUsize::new(covered),
                }
            }
            None => {
                recovery.indexes_rebuilt += 1;
                self.hnsw_dirty.store(true, Ordering::Release);
                tracing::warn!(dir = %self.dir.display(), "HNSW graph missing or stale; rebuilt in the background");
                Graph::empty(dim, config.hnsw, &self.dir)?
            }
        };
        *self.hnsw.writing() = Some(Arc::new(graph));
        Ok(())
    }

    /// Adds up to `n` tail slots to the graph, under the writer lock; how many (0 when
    /// the graph holds every slot, or there is no graph).
    fn index_tail(&self, n: usize) -> StoreResult<usize> {
        let _writer = self.writer.locked();
        let Some(g) = self.hnsw.reading().clone() else {
            return Ok(0);
        };
        let segments = self.segments.reading().clone();
        let covered = g.covered.load(Ordering::Acquire);
        let mut items: Vec<(VectorId, HvRef<'_>)> = Vec::with_capacity(n);
        let mut deleted: Vec<VectorId> = Vec::new();
        let mut start = 0;
        for seg in &segments {
            let end = start + seg.committed();
            if end > covered && items.len() < n {
                let block = seg.block();
                for slot in covered.max(start) - start..seg.committed() {
                    if items.len() == n {
                        break;
                    }
                    let id = seg.id(slot);
                    // Deleted slots become deleted points: point `i` stays slot `i`.
                    if seg.is_deleted(slot) {
                        deleted.push(id);
                    } else {
                        deleted.retain(|&d| d != id);
                    }
                    items.push((id, block.get(slot).expect("a committed slot")));
                }
            }
            start = end;
        }
        if items.is_empty() {
            return Ok(0);
        }
        g.index
            .insert_batch(&items)
            .map_err(|e| hnsw_error(&self.dir, e))?;
        for id in deleted {
            g.index.delete(id);
        }
        g.covered.store(covered + items.len(), Ordering::Release);
        self.hnsw_dirty.store(true, Ordering::Release);
        Ok(items.len())
    }
}

/// Starts the indexer of `p` unless one runs: a thread that adds the tail to the graph
/// a step at a time until none is left, at a tenth of its time while the project is being
/// written to (appends come first), and stops when the store closes.
fn spawn_indexer(p: &Arc<ProjectDir>) {
    if p.indexing.swap(true, Ordering::AcqRel) {
        return;
    }
    let owned = p.clone();
    let run = move || {
        let p = owned;
        loop {
            while !p.closed.load(Ordering::Acquire) {
                let t = Instant::now();
                match p.index_tail(INDEX_STEP) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(dir = %p.dir.display(), error = %e, "indexing stopped");
                        p.indexing.store(false, Ordering::Release);
                        return;
                    }
                }
                if p.last_write.locked().elapsed() < Duration::from_millis(500) {
                    std::thread::sleep(t.elapsed() * 9);
                }
            }
            p.indexing.store(false, Ordering::Release);
            // An append between the last step and here found the flag set: look again.
            if p.closed.load(Ordering::Acquire)
                || p.tail() == 0
                || p.indexing.swap(true, Ordering::AcqRel)
            {
                return;
            }
        }
    };
    if std::thread::Builder::new()
        .name("hypermem-index".to_owned())
        .spawn(run)
        .is_err()
    {
        p.indexing.store(false, Ordering::Release);
    }
}

fn hnsw_error(dir: &Path, e: crate::index::HnswError) -> StoreError {
    match e {
        crate::index::HnswError::Hdv(e) => StoreError::Hdv(e),
        other => StoreError::Corruption {
            path: dir.join(HNSW_DIR),
            reason: other.to_string(),
        },
    }
}

/// Durable, crash-safe vector storage: `root/projects/<project>/seg-NNNNNNNN.hseg`.
///
/// One process owns a store at a time (advisory lock on `root/LOCK`). Appends are durable
/// once acknowledged; reads go through a read-only mmap and see only committed vectors, so
/// readers never observe a torn vector while a writer appends. Deletion writes a tombstone;
/// [`compact`](Self::compact) rewrites a project without its tombstoned vectors and removes
/// the old files (erasure removes their bytes).
#[derive(Debug)]
pub struct SegmentStore {
    root: PathBuf,
    dim: Dim,
    config: SegmentStoreConfig,
    read_only: bool,
    projects: RwLock<HashMap<ProjectId, Arc<ProjectDir>>>,
    recovery: StoreRecovery,
    _lock: Option<File>,
}

fn marker_text(dim: Dim) -> String {
    format!("hypermem segment store\nformat 1\ndim {}\n", dim.bits())
}

fn segment_name(number: u64) -> String {
    format!("seg-{number:08}.hseg")
}

fn sync_dir(dir: &Path) -> StoreResult<()> {
    File::open(dir).at(dir)?.sync_all().at(dir)
}

impl SegmentStore {
    /// The lock file a writer of the store at `root` holds for as long as it is open.
    pub fn lock_path(root: &Path) -> PathBuf {
        root.join(LOCK)
    }

    /// Creates a new store at `root` (which must not already hold one).
    ///
    /// # Errors
    /// I/O errors; [`StoreError::Corruption`] if `root` already holds a store.
    pub fn create(
        root: impl AsRef<Path>,
        dim: Dim,
        config: SegmentStoreConfig,
    ) -> StoreResult<Self> {
        let root = root.as_ref();
        if root.join(MARKER).exists() {
            return Err(StoreError::Corruption {
                path: root.join(MARKER),
                reason: "a store already exists here; use open".to_owned(),
            });
        }
        fs::create_dir_all(root.join(PROJECTS)).at(root)?;
        let marker = root.join(MARKER);
        fs::write(&marker, marker_text(dim)).at(&marker)?;
        File::open(&marker).at(&marker)?.sync_all().at(&marker)?;
        sync_dir(root)?;
        Self::open(root, dim, config)
    }

    /// Opens an existing store, repairing interrupted appends and compactions.
    ///
    /// # Errors
    /// [`StoreError::DimensionMismatch`] if the store was created with another dimension,
    /// [`StoreError::Corruption`] for damaged files, [`StoreError::Locked`] if another
    /// process holds it.
    pub fn open(root: impl AsRef<Path>, dim: Dim, config: SegmentStoreConfig) -> StoreResult<Self> {
        Self::open_mode(root.as_ref(), dim, config, false)
    }

    /// Opens a store, creating it if `root` holds none.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_or_create(
        root: impl AsRef<Path>,
        dim: Dim,
        config: SegmentStoreConfig,
    ) -> StoreResult<Self> {
        let root = root.as_ref();
        if root.join(MARKER).exists() {
            Self::open(root, dim, config)
        } else {
            Self::create(root, dim, config)
        }
    }

    /// Opens a store read-only: no lock, no repair, writes are refused. Vectors past a
    /// segment's committed count (an interrupted append) are simply not shown; committed
    /// ones are verified against their checksums.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn view(root: impl AsRef<Path>, dim: Dim) -> StoreResult<Self> {
        Self::open_mode(
            root.as_ref(),
            dim,
            SegmentStoreConfig {
                verify_on_open: false,
                ..SegmentStoreConfig::default()
            },
            true,
        )
    }

    fn open_mode(
        root: &Path,
        dim: Dim,
        config: SegmentStoreConfig,
        read_only: bool,
    ) -> StoreResult<Self> {
        let marker = root.join(MARKER);
        let text = fs::read_to_string(&marker).at(&marker)?;
        let stored_dim = text
            .lines()
            .find_map(|l| l.strip_prefix("dim "))
            .and_then(|d| d.trim().parse::<usize>().ok())
            .ok_or_else(|| StoreError::Corruption {
                path: marker.clone(),
                reason: "no `dim` line in the store marker".to_owned(),
            })?;
        if stored_dim != dim.bits() {
            return Err(StoreError::DimensionMismatch {
                path: Some(marker),
                expected: dim.bits(),
                found: stored_dim,
            });
        }
        let lock = if read_only {
            None
        } else {
            Some(lock_file(&Self::lock_path(root), config.lock_wait_ms)?)
        };
        let mut recovery = StoreRecovery::default();
        let projects_dir = root.join(PROJECTS);
        if !read_only {
            Self::finish_compactions(&projects_dir, &mut recovery)?;
        }
        let mut projects = HashMap::new();
        for entry in fs::read_dir(&projects_dir).at(&projects_dir)? {
            let entry = entry.at(&projects_dir)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let project = ProjectId::new(name.clone()).map_err(|_| StoreError::Corruption {
                path: entry.path(),
                reason: "directory name is not a valid project name".to_owned(),
            })?;
            let dir = Self::load_project(&entry.path(), dim, config, read_only, &mut recovery)?;
            projects.insert(project, Arc::new(dir));
        }
        let store = Self {
            root: root.to_owned(),
            dim,
            config,
            read_only,
            projects: RwLock::new(projects),
            recovery,
            _lock: lock,
        };
        if !read_only {
            // Graphs saved before their indexer caught up (or missing): it goes on.
            for p in store.projects.reading().values() {
                if p.tail() > 0 {
                    spawn_indexer(p);
                }
            }
        }
        Ok(store)
    }

    /// Rolls interrupted compactions forward or back (see [`compact`](Self::compact)).
    fn finish_compactions(projects_dir: &Path, recovery: &mut StoreRecovery) -> StoreResult<()> {
        for entry in fs::read_dir(projects_dir).at(projects_dir)? {
            let entry = entry.at(projects_dir)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if let Some(project) = name.strip_prefix(".compact-") {
                let live = projects_dir.join(project);
                if live.exists() {
                    // Crashed before the swap: the old directory is intact; discard the new.
                    fs::remove_dir_all(&path).at(&path)?;
                    recovery.compactions_discarded += 1;
                } else {
                    // Crashed between the two renames: the new directory is complete.
                    fs::rename(&path, &live).at(&path)?;
                    recovery.compactions_finished += 1;
                }
                tracing::warn!(project, "finished an interrupted compaction");
            }
        }
        for entry in fs::read_dir(projects_dir).at(projects_dir)? {
            let entry = entry.at(projects_dir)?;
            if entry.file_name().to_string_lossy().starts_with(".trash-") {
                fs::remove_dir_all(entry.path()).at(&entry.path())?;
            }
        }
        sync_dir(projects_dir)
    }

    fn load_project(
        dir: &Path,
        dim: Dim,
        config: SegmentStoreConfig,
        read_only: bool,
        recovery: &mut StoreRecovery,
    ) -> StoreResult<ProjectDir> {
        let mut files: Vec<(u64, PathBuf)> = Vec::new();
        for entry in fs::read_dir(dir).at(dir)? {
            let entry = entry.at(dir)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !read_only && name.starts_with("seg-") && name.ends_with(".hseg.tmp") {
                // A segment whose creation a crash interrupted: it never held data.
                fs::remove_file(entry.path()).at(&entry.path())?;
                tracing::warn!(path = %entry.path().display(), "removed a segment file whose creation was interrupted");
                continue;
            }
            let Some(num) = name
                .strip_prefix("seg-")
                .and_then(|n| n.strip_suffix(".hseg"))
            else {
                continue;
            };
            let number = num.parse::<u64>().map_err(|_| StoreError::Corruption {
                path: entry.path(),
                reason: "unparseable segment number".to_owned(),
            })?;
            files.push((number, entry.path()));
        }
        files.sort();
        let mut segments = Vec::with_capacity(files.len());
        let mut index = HashMap::new();
        for (pos, (number, path)) in files.iter().enumerate() {
            let (seg, rec) = if read_only {
                Segment::view(path, dim)?
            } else {
                Segment::open(path, dim, config.verify_on_open)?
            };
            if seg.number() != *number {
                return Err(StoreError::Corruption {
                    path: path.clone(),
                    reason: format!(
                        "header says segment {}, file name says {number}",
                        seg.number()
                    ),
                });
            }
            if !rec.is_clean() {
                recovery.segments.push((path.clone(), rec));
            }
            for slot in 0..seg.committed() {
                if !seg.is_deleted(slot) {
                    let id = seg.id(slot);
                    if index.insert(id, (pos, slot)).is_some() {
                        return Err(StoreError::Corruption {
                            path: path.clone(),
                            reason: format!("vector id {id} is stored twice"),
                        });
                    }
                }
            }
            segments.push(Arc::new(seg));
        }
        let project = ProjectDir::new(dir.to_owned(), segments, index);
        project.attach_hnsw(dim, &config, recovery)?;
        Ok(project)
    }

    /// The store root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What opening the store repaired.
    pub fn recovery(&self) -> &StoreRecovery {
        &self.recovery
    }

    /// The settings.
    pub fn config(&self) -> SegmentStoreConfig {
        self.config
    }

    fn project(&self, project: &ProjectId) -> Option<Arc<ProjectDir>> {
        self.projects.reading().get(project).cloned()
    }

    fn project_or_create(&self, project: &ProjectId) -> StoreResult<Arc<ProjectDir>> {
        if let Some(p) = self.project(project) {
            return Ok(p);
        }
        let mut projects = self.projects.writing();
        if let Some(p) = projects.get(project) {
            return Ok(p.clone());
        }
        let parent = self.root.join(PROJECTS);
        let dir = parent.join(project.as_str());
        fs::create_dir_all(&dir).at(&dir)?;
        sync_dir(&parent)?;
        let p = Arc::new(ProjectDir::new(dir, Vec::new(), HashMap::new()));
        projects.insert(project.clone(), p.clone());
        Ok(p)
    }

    fn check_writable(&self) -> StoreResult<()> {
        if self.read_only {
            return Err(StoreError::ReadOnly {
                path: self.root.clone(),
            });
        }
        Ok(())
    }

    /// The segments of `project` (a snapshot), for index builders.
    pub(crate) fn segments(&self, project: &ProjectId) -> Vec<Arc<Segment>> {
        self.project(project)
            .map(|p| p.segments.reading().clone())
            .unwrap_or_default()
    }

    /// Number of tombstoned (deleted, not yet compacted) vectors in `project`.
    pub fn tombstones(&self, project: &ProjectId) -> usize {
        self.segments(project)
            .iter()
            .map(|s| (0..s.committed()).filter(|&i| s.is_deleted(i)).count())
            .sum()
    }

    /// Whether `project` is searched through its HNSW graph.
    pub fn uses_hnsw(&self, project: &ProjectId) -> bool {
        self.project(project)
            .is_some_and(|p| p.hnsw.reading().is_some())
    }

    /// Saves every HNSW graph that changed since it was last saved (inside the project's
    /// directory), so the next open reloads instead of rebuilding. Also done by `flush`.
    ///
    /// # Errors
    /// I/O errors.
    pub fn save_indexes(&self) -> StoreResult<()> {
        if self.read_only {
            return Ok(());
        }
        let projects: Vec<Arc<ProjectDir>> = self.projects.reading().values().cloned().collect();
        for p in projects {
            let _writer = p.writer.locked();
            if !p.hnsw_dirty.load(Ordering::Acquire) {
                continue;
            }
            // A graph saved before the indexer caught up holds the first slots; the next
            // open scans the rest as its tail and indexes it.
            if let Some(g) = p.hnsw.reading().clone() {
                g.index
                    .save(&p.dir.join(HNSW_DIR))
                    .map_err(|e| hnsw_error(&p.dir, e))?;
            }
            p.hnsw_dirty.store(false, Ordering::Release);
        }
        Ok(())
    }

    /// Rewrites `project` without its tombstoned vectors and deletes the old files, so the
    /// bytes of deleted vectors leave the store. Crash-safe: new segments are written to
    /// `projects/.compact-<p>/` and synced, then swapped in by two renames; an interrupted
    /// compaction is rolled forward or back on the next open. Returns the number of vectors
    /// physically removed.
    ///
    /// # Errors
    /// I/O errors.
    pub fn compact(&self, project: &ProjectId) -> StoreResult<usize> {
        self.check_writable()?;
        let Some(p) = self.project(project) else {
            return Ok(0);
        };
        let _writer = p.writer.locked();
        let old = p.segments.reading().clone();
        let removed: usize = old
            .iter()
            .map(|s| (0..s.committed()).filter(|&i| s.is_deleted(i)).count())
            .sum();
        if removed == 0 {
            return Ok(0);
        }
        let parent = self.root.join(PROJECTS);
        let tmp = parent.join(format!(".compact-{project}"));
        if tmp.exists() {
            fs::remove_dir_all(&tmp).at(&tmp)?;
        }
        fs::create_dir(&tmp).at(&tmp)?;
        let mut new_segments: Vec<Segment> = Vec::new();
        for seg in &old {
            let block = seg.block();
            let live: Vec<(VectorId, HvRef<'_>)> = (0..seg.committed())
                .filter(|&i| !seg.is_deleted(i))
                .map(|i| (seg.id(i), block.get(i).expect("committed slot")))
                .collect();
            let mut rest = &live[..];
            while !rest.is_empty() {
                if new_segments.last().is_none_or(Segment::is_full) {
                    let number = new_segments.len() as u64 + 1;
                    let path = tmp.join(segment_name(number));
                    new_segments.push(Segment::create(
                        &path,
                        self.dim,
                        self.config.segment_capacity,
                        number,
                    )?);
                }
                let n = new_segments.last().expect("just pushed").append(rest)?;
                rest = &rest[n..];
            }
        }
        sync_dir(&tmp)?;
        drop(new_segments);
        let trash = parent.join(format!(".trash-{project}"));
        fs::rename(&p.dir, &trash).at(&p.dir)?;
        fs::rename(&tmp, &p.dir).at(&tmp)?;
        sync_dir(&parent)?;
        // Readers holding old segments keep their mappings until they finish.
        let mut recovery = StoreRecovery::default();
        let fresh = Self::load_project(&p.dir, self.dim, self.config, false, &mut recovery)?;
        *p.segments.writing() = fresh
            .segments
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *p.index.writing() = fresh
            .index
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The old graph still holds the erased vectors: a new one is built from the
        // compacted segments by the indexer.
        *p.hnsw.writing() = fresh
            .hnsw
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        p.hnsw_dirty.store(true, Ordering::Release);
        if p.hnsw.reading().is_some() {
            spawn_indexer(&p);
        }
        fs::remove_dir_all(&trash).at(&trash)?;
        sync_dir(&parent)?;
        Ok(removed)
    }
}

impl SegmentStore {
    /// After an append: starts the project's graph when it reaches the threshold, and its
    /// indexer, which adds the new vectors to the graph off the write path (they are
    /// scanned exactly until then).
    fn index_new(&self, p: &Arc<ProjectDir>) -> StoreResult<()> {
        *p.last_write.locked() = Instant::now();
        if p.hnsw.reading().is_none() {
            if p.index.reading().len() < self.config.hnsw_threshold {
                return Ok(());
            }
            let graph = Graph::empty(self.dim, self.config.hnsw, &p.dir)?;
            *p.hnsw.writing() = Some(Arc::new(graph));
            p.hnsw_dirty.store(true, Ordering::Release);
        }
        spawn_indexer(p);
        Ok(())
    }

    /// Adds every project's tail to its graph now (or until `deadline`); returns the tail
    /// slots left. Searches are exact over the tail either way: this only makes them
    /// faster, sooner.
    ///
    /// # Errors
    /// Refused on a read-only store; HNSW errors.
    pub fn catch_up_indexes(&self, deadline: Option<Instant>) -> StoreResult<usize> {
        self.check_writable()?;
        let projects: Vec<Arc<ProjectDir>> = self.projects.reading().values().cloned().collect();
        for p in &projects {
            while deadline.is_none_or(|d| Instant::now() < d) {
                if p.index_tail(INDEX_STEP * 4)? == 0 {
                    break;
                }
            }
        }
        Ok(projects.iter().map(|p| p.tail()).sum())
    }

    /// Slots of `project` not yet in its graph (0 without a graph).
    pub fn index_tail(&self, project: &ProjectId) -> usize {
        self.project(project).map_or(0, |p| p.tail())
    }
}

impl SegmentStore {
    /// Scans the slots of `p` from `from` on (in segment order): exactly, or in two stages
    /// when they are many.
    fn scan(
        &self,
        p: &ProjectDir,
        request: &SearchRequest<'_>,
        from: usize,
    ) -> StoreResult<Vec<Hit>> {
        let segments = p.segments.reading().clone();
        // Each segment's first slot in segment order, and its first slot to scan.
        let mut starts = Vec::with_capacity(segments.len());
        let mut start = 0;
        for seg in &segments {
            starts.push(from.saturating_sub(start).min(seg.committed()));
            start += seg.committed();
        }
        let kernel = hdv::kernels::try_active()?;
        let prefix_words = self.config.prefix_bits / 64;
        let slots: usize = segments
            .iter()
            .zip(&starts)
            .map(|(s, &first)| s.committed() - first)
            .sum();
        let two_stage = prefix_words > 0
            && prefix_words < self.dim.words()
            && slots >= self.config.prefix_threshold;
        // The first stage's candidates are shared among the segments by their size.
        let candidates = |seg: &Segment, first: usize| {
            (prefix_candidates(request.k) * (seg.committed() - first))
                .div_ceil(slots.max(1))
                .max(request.k)
        };
        let lists: Vec<Vec<Hit>> = segments
            .par_iter()
            .zip(&starts)
            .map(|(seg, &first)| {
                let new_top = || Vec::with_capacity(request.k.min(1024) + 1);
                if first == seg.committed() {
                    return Vec::new();
                }
                let skip = |i: usize| i < first || seg.is_deleted(i);
                if !two_stage {
                    let mut top = new_top();
                    scan_block(kernel, &seg.block(), request, |i| seg.id(i), skip, &mut top);
                    return top;
                }
                seg.scan_with_sketch(
                    prefix_words,
                    |block, sketch| {
                        let mut top = new_top();
                        let first = FirstStage {
                            sketch,
                            candidates: candidates(seg, first),
                            may_skip: first > 0 || seg.has_tombstones(),
                        };
                        scan_block_two_stage(
                            kernel,
                            block,
                            &first,
                            request,
                            |i| seg.id(i),
                            skip,
                            &mut top,
                        );
                        top
                    },
                    |block, visit| {
                        // The sketch is missing or stale: an exact scan builds it.
                        let mut top = new_top();
                        scan_block_visiting(
                            kernel,
                            block,
                            request,
                            (|i| seg.id(i), skip),
                            &mut top,
                            visit,
                        );
                        top
                    },
                )
            })
            .collect();
        Ok(merge_hits(lists, request.k))
    }
}

impl ProjectDir {
    /// Committed slots after the graph's (0 without a graph).
    fn tail(&self) -> usize {
        self.hnsw.reading().as_ref().map_or(0, |g| {
            self.committed()
                .saturating_sub(g.covered.load(Ordering::Acquire))
        })
    }
}

impl Drop for SegmentStore {
    fn drop(&mut self) {
        for p in self.projects.reading().values() {
            p.closed.store(true, Ordering::Release);
        }
    }
}

impl VectorTier for SegmentStore {
    fn name(&self) -> &'static str {
        "mmap"
    }

    fn dim(&self) -> Dim {
        self.dim
    }

    fn insert_batch(
        &self,
        project: &ProjectId,
        items: &[(VectorId, HvRef<'_>)],
    ) -> StoreResult<()> {
        self.check_writable()?;
        super::validate_batch(self.dim, project, items)?;
        if items.is_empty() {
            return Ok(());
        }
        let p = self.project_or_create(project)?;
        let _writer = p.writer.locked();
        {
            let index = p.index.reading();
            if let Some((id, _)) = items.iter().find(|(id, _)| index.contains_key(id)) {
                return Err(StoreError::DuplicateId {
                    project: project.clone(),
                    id: *id,
                });
            }
        }
        let mut rest = items;
        while !rest.is_empty() {
            let (pos, seg) = {
                let segments = p.segments.reading();
                match segments.last() {
                    Some(s) if !s.is_full() => (segments.len() - 1, s.clone()),
                    last => {
                        let number = last.map_or(1, |s| s.number() + 1);
                        let path = p.dir.join(segment_name(number));
                        drop(segments);
                        let seg = Arc::new(Segment::create(
                            &path,
                            self.dim,
                            self.config.segment_capacity,
                            number,
                        )?);
                        sync_dir(&p.dir)?;
                        let mut segments = p.segments.writing();
                        segments.push(seg.clone());
                        (segments.len() - 1, seg)
                    }
                }
            };
            // The index lock is held across the append: a reader that sees the new vectors
            // in a scan (the committed count is published inside `append`) and then asks
            // for one by id waits here instead of missing it.
            let mut index = p.index.writing();
            let first = seg.committed();
            let n = seg.append(rest)?;
            for (j, (id, _)) in rest[..n].iter().enumerate() {
                index.insert(*id, (pos, first + j));
            }
            rest = &rest[n..];
        }
        self.index_new(&p)
    }

    fn get(&self, project: &ProjectId, id: VectorId) -> StoreResult<Option<Hypervector>> {
        let Some(p) = self.project(project) else {
            return Ok(None);
        };
        let Some(&(pos, slot)) = p.index.reading().get(&id) else {
            return Ok(None);
        };
        let seg = p.segments.reading()[pos].clone();
        Ok(seg.block().get(slot).map(|v| v.to_owned()))
    }

    fn delete(&self, project: &ProjectId, id: VectorId) -> StoreResult<bool> {
        self.check_writable()?;
        let Some(p) = self.project(project) else {
            return Ok(false);
        };
        let _writer = p.writer.locked();
        let Some(&(pos, slot)) = p.index.reading().get(&id) else {
            return Ok(false);
        };
        let seg = p.segments.reading()[pos].clone();
        seg.delete(slot)?;
        p.index.writing().remove(&id);
        if let Some(g) = p.hnsw.reading().as_ref() {
            // A tail slot is not a point yet: the indexer adds it as a deleted one.
            g.index.delete(id);
            p.hnsw_dirty.store(true, Ordering::Release);
        }
        Ok(true)
    }

    fn delete_batch(&self, project: &ProjectId, ids: &[VectorId]) -> StoreResult<usize> {
        self.check_writable()?;
        let Some(p) = self.project(project) else {
            return Ok(0);
        };
        let _writer = p.writer.locked();
        // Slots by segment: one sync per segment touched.
        let mut by_segment: std::collections::BTreeMap<usize, Vec<(VectorId, usize)>> =
            std::collections::BTreeMap::new();
        {
            let index = p.index.reading();
            for id in ids {
                if let Some(&(pos, slot)) = index.get(id) {
                    by_segment.entry(pos).or_default().push((*id, slot));
                }
            }
        }
        let mut present = 0;
        for (pos, items) in by_segment {
            let seg = p.segments.reading()[pos].clone();
            let slots: Vec<usize> = items.iter().map(|&(_, slot)| slot).collect();
            seg.delete_all(&slots)?;
            let mut index = p.index.writing();
            for (id, _) in &items {
                index.remove(id);
            }
            drop(index);
            if let Some(g) = p.hnsw.reading().as_ref() {
                for (id, _) in &items {
                    g.index.delete(*id);
                }
                p.hnsw_dirty.store(true, Ordering::Release);
            }
            present += items.len();
        }
        Ok(present)
    }

    fn search(&self, project: &ProjectId, request: &SearchRequest<'_>) -> StoreResult<Vec<Hit>> {
        super::validate_query(self.dim, request)?;
        let Some(p) = self.project(project) else {
            return Ok(Vec::new());
        };
        let Some(g) = p.hnsw.reading().clone() else {
            return self.scan(&p, request, 0);
        };
        // The graph holds the first `covered` slots; the tail after them is scanned
        // exactly. (A slot the indexer adds meanwhile may come from both: counted once.)
        let covered = g.covered.load(Ordering::Acquire);
        let graph = g
            .index
            .search(request)
            .map_err(|e| hnsw_error(&self.root, e))?;
        if covered >= p.committed() {
            return Ok(graph);
        }
        let tail = self.scan(&p, request, covered)?;
        Ok(merge_hits([graph, tail], request.k))
    }

    fn len(&self, project: &ProjectId) -> usize {
        self.project(project).map_or(0, |p| p.index.reading().len())
    }

    fn projects(&self) -> Vec<ProjectId> {
        let mut v: Vec<ProjectId> = self
            .projects
            .reading()
            .iter()
            .filter(|(_, p)| !p.index.reading().is_empty())
            .map(|(k, _)| k.clone())
            .collect();
        v.sort();
        v
    }

    fn ids(&self, project: &ProjectId) -> Vec<VectorId> {
        let mut ids: Vec<VectorId> = self
            .project(project)
            .map(|p| p.index.reading().keys().copied().collect())
            .unwrap_or_default();
        ids.sort();
        ids
    }

    fn drop_project(&self, project: &ProjectId) -> StoreResult<usize> {
        self.check_writable()?;
        let Some(p) = self.projects.writing().remove(project) else {
            return Ok(0);
        };
        p.closed.store(true, Ordering::Release);
        let _writer = p.writer.locked();
        let n = p.index.reading().len();
        p.segments.writing().clear();
        fs::remove_dir_all(&p.dir).at(&p.dir)?;
        sync_dir(&self.root.join(PROJECTS))?;
        Ok(n)
    }

    fn flush(&self) -> StoreResult<()> {
        // Every append and tombstone is synced before it is acknowledged; what remains is
        // the HNSW graphs, which are derived data and can always be rebuilt.
        self.save_indexes()
    }

    fn catch_up(&self, deadline: Option<Instant>) -> StoreResult<usize> {
        if self.read_only {
            let projects = self.projects.reading();
            return Ok(projects.values().map(|p| p.tail()).sum());
        }
        self.catch_up_indexes(deadline)
    }
}
