//! One segment file: a fixed-capacity, preallocated, append-only array of vectors plus their
//! ids, with a double-buffered header (`docs/FORMAT.md`, "Segment files").
//!
//! Appends write vectors and entries past the committed count, `fdatasync`, then write the
//! next header generation (with the new count) into the other header slot and `fdatasync`
//! again. A crash therefore leaves either the old or the new count, never a torn one, and a
//! vector is only acknowledged after both syncs. Readers see only committed slots, which are
//! never rewritten (a tombstone flips a flag word that readers take from a RAM bitmap).
#![allow(unsafe_code)] // the read-only mmap (see `map` below)

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use hdv::{Block, Dim, HvRef};
use memmap2::Mmap;
use xxhash_rust::xxh3::xxh3_64;

use super::VectorId;
use super::error::{IoContext, StoreError, StoreResult};
use crate::sync::RecoverRw;

/// Magic bytes at the start of both header copies.
pub(crate) const MAGIC: [u8; 8] = *b"HMSEG\0\0\x01";
/// Format version written by this code.
pub(crate) const VERSION: u32 = 1;
/// Bytes reserved for the two header copies; the vector area starts here (page aligned).
const HEADER_AREA: u64 = 4096;
/// Byte offsets of the two header copies (different disk sectors).
const HEADER_SLOTS: [u64; 2] = [0, 512];
/// Bytes of one header copy.
const HEADER_LEN: usize = 64;
/// Bytes of one id entry: id u64, checksum u32, flags u32 (all little-endian).
pub(crate) const ENTRY_LEN: u64 = 16;
/// Entry flag: the vector is deleted (tombstone).
const FLAG_DELETED: u32 = 1;

/// The decoded header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Header {
    dim_bits: u32,
    capacity: u64,
    committed: u64,
    seq: u64,
    number: u64,
}

impl Header {
    fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&VERSION.to_le_bytes());
        b[12..16].copy_from_slice(&self.dim_bits.to_le_bytes());
        b[16..24].copy_from_slice(&self.capacity.to_le_bytes());
        b[24..32].copy_from_slice(&self.committed.to_le_bytes());
        b[32..40].copy_from_slice(&self.seq.to_le_bytes());
        b[40..48].copy_from_slice(&self.number.to_le_bytes());
        let sum = xxh3_64(&b[..56]);
        b[56..64].copy_from_slice(&sum.to_le_bytes());
        b
    }

    /// `Ok(None)` for a blank or damaged copy, `Err` for a valid copy of another version.
    fn decode(b: &[u8]) -> Result<Option<Self>, String> {
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        if b[0..8] != MAGIC || xxh3_64(&b[..56]) != u64_at(56) {
            return Ok(None);
        }
        if u32_at(8) != VERSION {
            return Err(format!(
                "format version {} (this build reads {VERSION})",
                u32_at(8)
            ));
        }
        Ok(Some(Self {
            dim_bits: u32_at(12),
            capacity: u64_at(16),
            committed: u64_at(24),
            seq: u64_at(32),
            number: u64_at(40),
        }))
    }
}

/// Byte layout of a segment of a given dimension and capacity.
#[derive(Debug, Clone, Copy)]
struct Layout {
    vector_bytes: u64,
    capacity: u64,
}

impl Layout {
    fn vector_offset(&self, slot: u64) -> u64 {
        HEADER_AREA + slot * self.vector_bytes
    }
    fn entries_offset(&self) -> u64 {
        HEADER_AREA + self.capacity * self.vector_bytes
    }
    fn entry_offset(&self, slot: u64) -> u64 {
        self.entries_offset() + slot * ENTRY_LEN
    }
    fn file_len(&self) -> u64 {
        self.entries_offset() + self.capacity * ENTRY_LEN
    }
}

/// What opening a segment had to repair (also logged with `tracing`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SegmentRecovery {
    /// The header copy in use was damaged and the other one was used.
    pub header_repaired: bool,
    /// The file was shorter than its preallocated size (but held all committed data).
    pub restored_length: bool,
    /// Complete vectors found past the committed count (written, not yet acknowledged) and kept.
    pub adopted: u64,
    /// Uncommitted slots whose partial writes were cleared.
    pub cleared: u64,
}

impl SegmentRecovery {
    /// Whether anything was repaired.
    pub fn is_clean(&self) -> bool {
        *self == Self::default()
    }
}

/// A segment file, mapped read-only.
#[derive(Debug)]
pub(crate) struct Segment {
    path: PathBuf,
    file: File,
    map: Mmap,
    dim: Dim,
    layout: Layout,
    number: u64,
    seq: AtomicU64,
    committed: AtomicUsize,
    deleted: Vec<AtomicU64>,
    /// How many slots carry a tombstone.
    tombstones: AtomicUsize,
    /// The first words of every committed vector, one after another (see
    /// [`Segment::scan_with_sketch`]): built by the first scan that asks for it, extended
    /// as slots are committed, kept in RAM only.
    sketch: RwLock<Sketch>,
}

/// The prefixes of a segment's vectors, contiguous, for the first stage of a scan.
#[derive(Debug, Default)]
struct Sketch {
    /// Words per vector.
    words: usize,
    /// `slots * words` words.
    prefixes: Vec<u64>,
}

fn checksum(vector: &[u8], id: u64) -> u32 {
    let mut buf = Vec::with_capacity(vector.len() + 8);
    buf.extend_from_slice(vector);
    buf.extend_from_slice(&id.to_le_bytes());
    xxh3_64(&buf) as u32
}

fn corruption(path: &Path, reason: impl Into<String>) -> StoreError {
    StoreError::Corruption {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

/// Where a segment is built before it is renamed into place.
pub(crate) fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

impl Segment {
    /// Creates a new, empty, preallocated segment file (which must not exist). The file is
    /// built under a temporary name (`<name>.tmp`: preallocated, header written, synced)
    /// and renamed into place, so a crash never leaves a segment without a valid header;
    /// the caller syncs the directory. A stale temporary file (from a crash during
    /// creation) is replaced: it never held data.
    pub(crate) fn create(path: &Path, dim: Dim, capacity: usize, number: u64) -> StoreResult<Self> {
        let layout = Layout {
            vector_bytes: dim.bytes() as u64,
            capacity: capacity as u64,
        };
        if path.exists() {
            return Err(corruption(
                path,
                "a segment with this number already exists",
            ));
        }
        let tmp = temp_path(path);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .at(&tmp)?;
        file.set_len(layout.file_len()).at(&tmp)?;
        let header = Header {
            dim_bits: dim.bits() as u32,
            capacity: capacity as u64,
            committed: 0,
            seq: 1,
            number,
        };
        file.write_all_at(&header.encode(), HEADER_SLOTS[1])
            .at(&tmp)?;
        file.sync_all().at(&tmp)?;
        std::fs::rename(&tmp, path).at(path)?;
        Self::map(path.to_owned(), file, dim, layout, number, 1, 0)
    }

    fn map(
        path: PathBuf,
        file: File,
        dim: Dim,
        layout: Layout,
        number: u64,
        seq: u64,
        committed: u64,
    ) -> StoreResult<Self> {
        // SAFETY: the file is held under an exclusive advisory lock by this store (see
        // `ProjectDir`), it is only ever written through `write_all_at` on regions no reader
        // looks at (slots past the committed count, header slots, flag words read from the
        // RAM bitmap instead), and its length is never reduced while mapped.
        let map = unsafe { Mmap::map(&file) }.at(&path)?;
        let words = (layout.capacity as usize).div_ceil(64);
        Ok(Self {
            path,
            file,
            map,
            dim,
            layout,
            number,
            seq: AtomicU64::new(seq),
            committed: AtomicUsize::new(committed as usize),
            deleted: (0..words).map(|_| AtomicU64::new(0)).collect(),
            tombstones: AtomicUsize::new(0),
            sketch: RwLock::new(Sketch::default()),
        })
    }

    /// Opens an existing segment, repairing what a crash can leave behind and refusing
    /// (with [`StoreError::Corruption`]) what it cannot.
    pub(crate) fn open(
        path: &Path,
        dim: Dim,
        verify: bool,
    ) -> StoreResult<(Self, SegmentRecovery)> {
        Self::open_impl(path, dim, verify, false)
    }

    /// Opens a segment read-only: nothing is repaired or written; slots past the committed
    /// count are ignored. Every committed slot's checksum is checked, as a writer's open
    /// does (a damaged vector is a corruption, never a silent answer; 125 MB of vectors
    /// hash in milliseconds).
    pub(crate) fn view(path: &Path, dim: Dim) -> StoreResult<(Self, SegmentRecovery)> {
        Self::open_impl(path, dim, true, true)
    }

    fn open_impl(
        path: &Path,
        dim: Dim,
        verify: bool,
        read_only: bool,
    ) -> StoreResult<(Self, SegmentRecovery)> {
        let file = OpenOptions::new()
            .read(true)
            .write(!read_only)
            .open(path)
            .at(path)?;
        let len = file.metadata().at(path)?.len();
        if len < HEADER_AREA {
            return Err(corruption(
                path,
                format!("{len} bytes is shorter than the header area"),
            ));
        }
        let mut recovery = SegmentRecovery::default();
        let mut headers = Vec::new();
        for (i, off) in HEADER_SLOTS.into_iter().enumerate() {
            let mut b = [0u8; HEADER_LEN];
            file.read_exact_at(&mut b, off).at(path)?;
            match Header::decode(&b) {
                Ok(Some(h)) => headers.push((i, h)),
                Ok(None) => {}
                Err(reason) => return Err(corruption(path, reason)),
            }
        }
        let Some(&(_, header)) = headers.iter().max_by_key(|(_, h)| h.seq) else {
            return Err(corruption(
                path,
                "no valid header (bad magic or checksum in both copies)",
            ));
        };
        if headers.len() == 1 && header.seq > 1 {
            recovery.header_repaired = true;
            tracing::warn!(path = %path.display(), "one segment header copy is damaged; using the other");
        }
        if header.dim_bits as usize != dim.bits() {
            return Err(StoreError::DimensionMismatch {
                path: Some(path.to_owned()),
                expected: dim.bits(),
                found: header.dim_bits as usize,
            });
        }
        if header.capacity == 0 || header.committed > header.capacity {
            return Err(corruption(
                path,
                format!(
                    "header says {} committed of capacity {}",
                    header.committed, header.capacity
                ),
            ));
        }
        let layout = Layout {
            vector_bytes: dim.bytes() as u64,
            capacity: header.capacity,
        };
        let need = layout.entry_offset(header.committed);
        if len < need {
            return Err(corruption(
                path,
                format!(
                    "truncated to {len} bytes; its {} committed vectors need {need}",
                    header.committed
                ),
            ));
        }
        if len != layout.file_len() && !read_only {
            // Only uncommitted space is missing (or extra): restore the preallocated size.
            file.set_len(layout.file_len()).at(path)?;
            recovery.restored_length = true;
            tracing::warn!(path = %path.display(), len, "segment length restored to its preallocated size");
        }
        let seg = Self::map(
            path.to_owned(),
            file,
            dim,
            layout,
            header.number,
            header.seq,
            header.committed,
        )?;
        if verify {
            for slot in 0..header.committed {
                if !seg.slot_is_valid(slot) {
                    return Err(corruption(
                        path,
                        format!("checksum mismatch in committed slot {slot}"),
                    ));
                }
            }
        }
        if read_only {
            for slot in 0..header.committed {
                if seg.entry_flags(slot) & FLAG_DELETED != 0 {
                    seg.mark_deleted_in_ram(slot as usize);
                }
            }
            return Ok((seg, recovery));
        }
        // Complete vectors past the count were written before a crash cut the header
        // update: keep them (they are whole; they were simply never acknowledged).
        let mut committed = header.committed;
        while committed < header.capacity
            && seg.entry_is_nonzero(committed)
            && seg.slot_is_valid(committed)
        {
            committed += 1;
        }
        recovery.adopted = committed - header.committed;
        // Anything after that is a torn write: clear it so it can never be adopted later.
        let dirty: Vec<u64> = (committed..header.capacity)
            .filter(|&s| seg.entry_is_nonzero(s))
            .collect();
        if !dirty.is_empty() {
            let zero = [0u8; ENTRY_LEN as usize];
            for &s in &dirty {
                seg.file
                    .write_all_at(&zero, layout.entry_offset(s))
                    .at(path)?;
            }
            recovery.cleared = dirty.len() as u64;
        }
        if recovery.adopted > 0 || recovery.header_repaired || !dirty.is_empty() {
            seg.commit_header(committed)?;
            tracing::warn!(
                path = %path.display(),
                adopted = recovery.adopted,
                cleared = recovery.cleared,
                "segment recovered after an interrupted append"
            );
        }
        seg.committed.store(committed as usize, Ordering::Release);
        for slot in 0..committed {
            if seg.entry_flags(slot) & FLAG_DELETED != 0 {
                seg.mark_deleted_in_ram(slot as usize);
            }
        }
        Ok((seg, recovery))
    }

    fn entry_bytes(&self, slot: u64) -> &[u8] {
        let off = self.layout.entry_offset(slot) as usize;
        &self.map[off..off + ENTRY_LEN as usize]
    }

    fn entry_is_nonzero(&self, slot: u64) -> bool {
        self.entry_bytes(slot).iter().any(|&b| b != 0)
    }

    fn entry_flags(&self, slot: u64) -> u32 {
        u32::from_le_bytes(self.entry_bytes(slot)[12..16].try_into().expect("4 bytes"))
    }

    fn vector_bytes(&self, slot: u64) -> &[u8] {
        let off = self.layout.vector_offset(slot) as usize;
        &self.map[off..off + self.layout.vector_bytes as usize]
    }

    fn slot_is_valid(&self, slot: u64) -> bool {
        let e = self.entry_bytes(slot);
        let id = u64::from_le_bytes(e[0..8].try_into().expect("8 bytes"));
        let sum = u32::from_le_bytes(e[8..12].try_into().expect("4 bytes"));
        checksum(self.vector_bytes(slot), id) == sum
    }

    /// Writes the next header generation with `committed` and syncs it.
    fn commit_header(&self, committed: u64) -> StoreResult<()> {
        let seq = self.seq.load(Ordering::Acquire) + 1;
        let header = Header {
            dim_bits: self.dim.bits() as u32,
            capacity: self.layout.capacity,
            committed,
            seq,
            number: self.number,
        };
        self.file
            .write_all_at(&header.encode(), HEADER_SLOTS[(seq % 2) as usize])
            .at(&self.path)?;
        self.file.sync_data().at(&self.path)?;
        self.seq.store(seq, Ordering::Release);
        Ok(())
    }

    /// Appends as many of `items` as fit; returns how many. Durable when it returns.
    /// The caller serializes writers.
    pub(crate) fn append(&self, items: &[(VectorId, HvRef<'_>)]) -> StoreResult<usize> {
        let start = self.committed.load(Ordering::Acquire) as u64;
        let n = items.len().min((self.layout.capacity - start) as usize);
        if n == 0 {
            return Ok(0);
        }
        let vb = self.layout.vector_bytes as usize;
        let mut vectors = Vec::with_capacity(n * vb);
        let mut entries = Vec::with_capacity(n * ENTRY_LEN as usize);
        for (id, v) in &items[..n] {
            let at = vectors.len();
            for w in v.words() {
                vectors.extend_from_slice(&w.to_le_bytes());
            }
            let sum = checksum(&vectors[at..], id.0);
            entries.extend_from_slice(&id.0.to_le_bytes());
            entries.extend_from_slice(&sum.to_le_bytes());
            entries.extend_from_slice(&0u32.to_le_bytes());
        }
        self.file
            .write_all_at(&vectors, self.layout.vector_offset(start))
            .at(&self.path)?;
        self.file
            .write_all_at(&entries, self.layout.entry_offset(start))
            .at(&self.path)?;
        self.file.sync_data().at(&self.path)?;
        self.commit_header(start + n as u64)?;
        self.committed
            .store((start + n as u64) as usize, Ordering::Release);
        Ok(n)
    }

    /// Marks `slot` deleted on disk (synced) and in RAM.
    pub(crate) fn delete(&self, slot: usize) -> StoreResult<()> {
        let off = self.layout.entry_offset(slot as u64) + 12;
        self.file
            .write_all_at(&FLAG_DELETED.to_le_bytes(), off)
            .at(&self.path)?;
        self.file.sync_data().at(&self.path)?;
        self.mark_deleted_in_ram(slot);
        Ok(())
    }

    /// Tombstones every slot of `slots` with one sync for all of them.
    pub(crate) fn delete_all(&self, slots: &[usize]) -> StoreResult<()> {
        if slots.is_empty() {
            return Ok(());
        }
        for &slot in slots {
            let off = self.layout.entry_offset(slot as u64) + 12;
            self.file
                .write_all_at(&FLAG_DELETED.to_le_bytes(), off)
                .at(&self.path)?;
        }
        self.file.sync_data().at(&self.path)?;
        for &slot in slots {
            self.mark_deleted_in_ram(slot);
        }
        Ok(())
    }

    fn mark_deleted_in_ram(&self, slot: usize) {
        let before = self.deleted[slot / 64].fetch_or(1 << (slot % 64), Ordering::AcqRel);
        if before >> (slot % 64) & 1 == 0 {
            self.tombstones.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Whether any slot carries a tombstone.
    pub(crate) fn has_tombstones(&self) -> bool {
        self.tombstones.load(Ordering::Acquire) > 0
    }

    /// Whether `slot` carries a tombstone.
    pub(crate) fn is_deleted(&self, slot: usize) -> bool {
        self.deleted[slot / 64].load(Ordering::Acquire) >> (slot % 64) & 1 == 1
    }

    /// Number of committed slots (deleted ones included).
    pub(crate) fn committed(&self) -> usize {
        self.committed.load(Ordering::Acquire)
    }

    /// Whether no slot is free.
    pub(crate) fn is_full(&self) -> bool {
        self.committed() as u64 == self.layout.capacity
    }

    /// The id stored in `slot` (committed).
    pub(crate) fn id(&self, slot: usize) -> VectorId {
        VectorId(u64::from_le_bytes(
            self.entry_bytes(slot as u64)[0..8]
                .try_into()
                .expect("8 bytes"),
        ))
    }

    /// The committed vectors as one block (tombstoned ones included; filter with
    /// [`is_deleted`](Self::is_deleted)).
    pub(crate) fn block(&self) -> Block<'_> {
        let n = self.committed();
        let start = HEADER_AREA as usize;
        let bytes = &self.map[start..start + n * self.layout.vector_bytes as usize];
        let words: &[u64] = bytemuck::cast_slice(bytes);
        Block::new(words, self.dim).expect("whole vectors")
    }

    /// A two-stage scan of this segment through its sketch: the committed vectors' first
    /// `words` words, contiguous (`block.len() * words` words; 20 % of the bytes at 2,048 of
    /// 10,048 bits), kept in RAM. Where the sketch covers at least 7/8 of the committed
    /// slots, the rest is added and `staged` runs with the block and the sketch. Otherwise
    /// (the first scan since the segment was opened, or many slots since) `exact` runs with
    /// the block and a `visit(first_slot, vectors)` to call on each chunk it scans in order:
    /// the sketch is built from the chunks while they are in cache, so the scan that builds
    /// it costs no more than an exact scan.
    pub(crate) fn scan_with_sketch<R>(
        &self,
        words: usize,
        staged: impl FnOnce(&Block<'_>, &[u64]) -> R,
        exact: impl FnOnce(&Block<'_>, &mut dyn FnMut(usize, &[u64])) -> R,
    ) -> R {
        let block = self.block();
        let n = block.len();
        let w = self.dim.words();
        assert!(words > 0 && words <= w, "sketch of {words} words of {w}");
        let covered = |s: &Sketch| {
            if s.words == words {
                s.prefixes.len() / words
            } else {
                0
            }
        };
        let have = covered(&self.sketch.reading());
        if have < n - n / 8 {
            let mut s = self.sketch.writing();
            if s.words != words {
                *s = Sketch {
                    words,
                    prefixes: Vec::new(),
                };
            }
            let missing = n.saturating_sub(s.prefixes.len() / words);
            s.prefixes.reserve(missing * words);
            let mut visit = |first: usize, vectors: &[u64]| {
                for (j, v) in vectors.chunks_exact(w).enumerate() {
                    if first + j == s.prefixes.len() / words {
                        s.prefixes.extend_from_slice(&v[..words]);
                    }
                }
            };
            return exact(&block, &mut visit);
        }
        if have < n {
            let mut s = self.sketch.writing();
            let have = covered(&s);
            for v in block.words()[have.min(n) * w..n * w].chunks_exact(w) {
                s.prefixes.extend_from_slice(&v[..words]);
            }
        }
        let s = self.sketch.reading();
        staged(&block, &s.prefixes[..n * words])
    }

    /// The segment's sequence number within its project.
    pub(crate) fn number(&self) -> u64 {
        self.number
    }
}
