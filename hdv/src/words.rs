//! [`WordBuf`]: a growable word buffer that lives in transparent huge pages once it is
//! large.
//!
//! A single-query scan reads its block once, front to back, with software prefetch a few
//! vectors ahead. On 4 KiB pages that stream crosses a page every three 10,048-bit vectors,
//! and each crossing costs a TLB miss and a page walk that the prefetch has to wait for.
//! On 2 MiB pages the same block needs a few dozen TLB entries. On a Zen 5 with AVX-512
//! (`docs/EXPERIMENTS.md`, thirty-ninth session): 1–22 % more bytes per second, the same
//! data held both ways and alternated in one process; 2–9 % for the scan benchmark as a
//! whole binary, before and after. Random access (graph search) did not gain, so only
//! blocks that are scanned use this buffer.
//!
//! Below [`HUGE_FROM`] bytes the words sit in an ordinary `Vec`; from there on, in an
//! anonymous mapping whose length is a multiple of 2 MiB, advised `MADV_HUGEPAGE` (Linux;
//! elsewhere the `Vec` is kept). The advice is a hint: where transparent huge pages are
//! off the mapping simply holds 4 KiB pages. Either way the buffer behaves as a `Vec<u64>`.

use std::fmt;
use std::ops::{Deref, DerefMut};

/// Size of a huge page on x86-64 and of most arm64 configurations.
const HUGE_PAGE: usize = 2 << 20;

/// Bytes from which a buffer moves into a huge-page mapping: one huge page.
pub const HUGE_FROM: usize = HUGE_PAGE;

#[derive(Default)]
enum Storage {
    #[default]
    Empty,
    Heap(Vec<u64>),
    #[cfg(target_os = "linux")]
    Mapped(memmap2::MmapMut),
}

/// A growable buffer of `u64` words (the storage of many hypervectors back to back) that
/// keeps large contents in transparent huge pages; it dereferences to `[u64]`. Like a
/// `Vec`, it panics ("capacity overflow") when asked to grow past the address space.
///
/// ```
/// use hdv::WordBuf;
/// let mut buf = WordBuf::new();
/// buf.extend_from_slice(&[1, 2, 3]);
/// buf.truncate(2);
/// assert_eq!(&buf[..], &[1, 2]);
/// let big = WordBuf::zeroed(1 << 20); // 8 MiB: mapped, huge pages advised (Linux)
/// assert_eq!(big.len(), 1 << 20);
/// assert!(big.iter().all(|&w| w == 0));
/// ```
#[derive(Default)]
pub struct WordBuf {
    storage: Storage,
    len: usize,
}

impl WordBuf {
    /// An empty buffer (allocates nothing).
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty buffer with room for `words` words.
    pub fn with_capacity(words: usize) -> Self {
        let mut buf = Self::new();
        buf.reserve(words);
        buf
    }

    /// A buffer of `words` zero words.
    pub fn zeroed(words: usize) -> Self {
        let mut buf = Self::with_capacity(words);
        buf.resize_zeroed(words);
        buf
    }

    /// Words held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no word is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Words the buffer holds without growing.
    pub fn capacity(&self) -> usize {
        match &self.storage {
            Storage::Empty => 0,
            Storage::Heap(v) => v.capacity(),
            #[cfg(target_os = "linux")]
            Storage::Mapped(m) => m.len() / 8,
        }
    }

    /// Whether the words live in a mapping advised for huge pages (the kernel decides
    /// whether it backs it with them).
    pub fn huge_pages_advised(&self) -> bool {
        match &self.storage {
            #[cfg(target_os = "linux")]
            Storage::Mapped(_) => true,
            _ => false,
        }
    }

    /// Makes room for at least `additional` more words.
    pub fn reserve(&mut self, additional: usize) {
        let needed = self.len.checked_add(additional).expect("capacity overflow");
        if needed <= self.capacity() {
            return;
        }
        // Doubling keeps appends amortised O(1), as a Vec's do.
        let target = needed.max(self.capacity().saturating_mul(2));
        self.regrow(target);
    }

    /// Appends `words`.
    pub fn extend_from_slice(&mut self, words: &[u64]) {
        if words.is_empty() {
            return;
        }
        self.reserve(words.len());
        let start = self.len;
        match &mut self.storage {
            Storage::Heap(v) => v.extend_from_slice(words),
            Storage::Empty => unreachable!("reserve allocated"),
            #[cfg(target_os = "linux")]
            Storage::Mapped(m) => {
                let all: &mut [u64] = bytemuck::cast_slice_mut(&mut m[..]);
                all[start..start + words.len()].copy_from_slice(words);
            }
        }
        self.len = start + words.len();
    }

    /// Shortens the buffer to `len` words (nothing happens if it holds fewer). Capacity is
    /// kept.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        if let Storage::Heap(v) = &mut self.storage {
            v.truncate(len);
        }
        self.len = len;
    }

    /// Grows (with zero words) or shrinks the buffer to `len` words.
    fn resize_zeroed(&mut self, len: usize) {
        if len <= self.len {
            self.truncate(len);
            return;
        }
        self.reserve(len - self.len);
        match &mut self.storage {
            Storage::Heap(v) => v.resize(len, 0),
            Storage::Empty => unreachable!("reserve allocated"),
            #[cfg(target_os = "linux")]
            Storage::Mapped(m) => {
                // A fresh mapping reads as zeros; words dropped by `truncate` may not.
                let all: &mut [u64] = bytemuck::cast_slice_mut(&mut m[..]);
                all[self.len..len].fill(0);
            }
        }
        self.len = len;
    }

    /// Moves the contents into storage for `capacity` words.
    fn regrow(&mut self, capacity: usize) {
        #[cfg(target_os = "linux")]
        if capacity.saturating_mul(8) >= HUGE_FROM
            && let Some(mut map) = huge_mapping(capacity)
        {
            let all: &mut [u64] = bytemuck::cast_slice_mut(&mut map[..]);
            all[..self.len].copy_from_slice(self);
            self.storage = Storage::Mapped(map);
            return;
        }
        match &mut self.storage {
            Storage::Heap(v) => v.reserve_exact(capacity - v.len()),
            _ => {
                let mut v = Vec::with_capacity(capacity);
                v.extend_from_slice(self);
                self.storage = Storage::Heap(v);
            }
        }
    }
}

/// An anonymous mapping of at least `words` words, its length a multiple of a huge page,
/// advised for huge pages; `None` if the system refuses the mapping (the caller keeps a
/// `Vec`, whose allocation reports the shortage its own way).
#[cfg(target_os = "linux")]
fn huge_mapping(words: usize) -> Option<memmap2::MmapMut> {
    let bytes = words.checked_mul(8)?.checked_next_multiple_of(HUGE_PAGE)?;
    let map = memmap2::MmapMut::map_anon(bytes).ok()?;
    // Only a hint: a kernel without transparent huge pages refuses it, and the mapping
    // works the same on 4 KiB pages.
    let _ = map.advise(memmap2::Advice::HugePage);
    Some(map)
}

impl Deref for WordBuf {
    type Target = [u64];

    fn deref(&self) -> &[u64] {
        match &self.storage {
            Storage::Empty => &[],
            Storage::Heap(v) => v,
            #[cfg(target_os = "linux")]
            Storage::Mapped(m) => &bytemuck::cast_slice(&m[..])[..self.len],
        }
    }
}

impl DerefMut for WordBuf {
    fn deref_mut(&mut self) -> &mut [u64] {
        match &mut self.storage {
            Storage::Empty => &mut [],
            Storage::Heap(v) => v,
            #[cfg(target_os = "linux")]
            Storage::Mapped(m) => &mut bytemuck::cast_slice_mut(&mut m[..])[..self.len],
        }
    }
}

impl Clone for WordBuf {
    fn clone(&self) -> Self {
        let mut copy = Self::with_capacity(self.len);
        copy.extend_from_slice(self);
        copy
    }
}

impl PartialEq for WordBuf {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}

impl Eq for WordBuf {}

impl fmt::Debug for WordBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WordBuf")
            .field("len", &self.len)
            .field("huge_pages_advised", &self.huge_pages_advised())
            .finish()
    }
}

impl From<Vec<u64>> for WordBuf {
    fn from(words: Vec<u64>) -> Self {
        let len = words.len();
        if len.saturating_mul(8) >= HUGE_FROM {
            let mut buf = Self::with_capacity(len);
            buf.extend_from_slice(&words);
            return buf;
        }
        Self {
            storage: Storage::Heap(words),
            len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Extend(Vec<u64>),
        Bulk(usize, u64),
        Truncate(usize),
        Reserve(usize),
        Write(usize, u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            proptest::collection::vec(any::<u64>(), 0..40).prop_map(Op::Extend),
            // Large appends cross the huge-page threshold (262,144 words) within a few ops.
            (0usize..200_000, any::<u64>()).prop_map(|(n, w)| Op::Bulk(n, w)),
            (0usize..600_000).prop_map(Op::Truncate),
            (0usize..300_000).prop_map(Op::Reserve),
            (any::<usize>(), any::<u64>()).prop_map(|(i, w)| Op::Write(i, w)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Whatever the sequence of operations, the buffer holds what a `Vec` would, on
        /// either side of the move into a mapping.
        #[test]
        fn behaves_as_a_vec(ops in proptest::collection::vec(op(), 1..12)) {
            let (mut buf, mut model) = (WordBuf::new(), Vec::<u64>::new());
            for op in ops {
                match op {
                    Op::Extend(ws) => {
                        buf.extend_from_slice(&ws);
                        model.extend_from_slice(&ws);
                    }
                    Op::Bulk(n, w) => {
                        let ws = vec![w; n];
                        buf.extend_from_slice(&ws);
                        model.extend_from_slice(&ws);
                    }
                    Op::Truncate(n) => {
                        buf.truncate(n);
                        model.truncate(n);
                    }
                    Op::Reserve(n) => {
                        buf.reserve(n);
                        prop_assert!(buf.capacity() >= buf.len() + n);
                    }
                    Op::Write(i, w) if !model.is_empty() => {
                        let i = i % model.len();
                        buf[i] = w;
                        model[i] = w;
                    }
                    Op::Write(..) => {}
                }
                prop_assert_eq!(buf.len(), model.len());
                prop_assert_eq!(&buf[..], &model[..]);
                prop_assert!(buf.capacity() >= buf.len());
            }
            prop_assert_eq!(buf.clone(), buf);
        }
    }

    #[test]
    fn small_buffers_stay_on_the_heap_and_large_ones_are_mapped() {
        let small = WordBuf::zeroed(HUGE_FROM / 8 - 1);
        assert!(!small.huge_pages_advised());
        let large = WordBuf::zeroed(HUGE_FROM / 8);
        assert_eq!(large.huge_pages_advised(), cfg!(target_os = "linux"));
        assert_eq!(large.len(), HUGE_FROM / 8);
        assert!(large.iter().all(|&w| w == 0));
        let from_vec = WordBuf::from(vec![7u64; HUGE_FROM / 8 + 1]);
        assert_eq!(from_vec.huge_pages_advised(), cfg!(target_os = "linux"));
        assert!(from_vec.iter().all(|&w| w == 7));
    }

    #[test]
    fn words_regrown_after_a_truncate_read_as_zero() {
        let mut buf = WordBuf::from(vec![u64::MAX; HUGE_FROM / 8 + 5]);
        buf.truncate(3);
        buf.resize_zeroed(HUGE_FROM / 8);
        assert_eq!(&buf[..3], &[u64::MAX; 3]);
        assert!(buf[3..].iter().all(|&w| w == 0));
    }
}
