//! A read-only memory map of a whole file, for derived files (saved HNSW graphs) that are
//! read in place after loading.
#![allow(unsafe_code)] // the mmap call below

use std::fs::File;
use std::path::Path;

use memmap2::Mmap;

/// A file mapped read-only. The file must not be modified while mapped: the owners of such
/// files (the HNSW index) only ever replace them by writing a new file and renaming it.
#[derive(Debug)]
pub struct MappedFile {
    map: Mmap,
}

impl MappedFile {
    /// Maps `path` read-only.
    ///
    /// # Errors
    /// The I/O error of opening or mapping the file (the caller names the file).
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = File::open(path)?;
        // SAFETY: the file is only ever replaced by rename, never written in place, so the
        // mapped bytes do not change under the reader (see the type's documentation).
        let map = unsafe { Mmap::map(&file) }?;
        Ok(Self { map })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }
}
