//! The bytes of an input file: memory-mapped from disk, or owned (the fuzz
//! targets and tests hand the parsers bytes without writing a file).

use std::ops::Deref;
use std::path::Path;

use crate::error::{ParseError, Result};

pub enum Data {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Data {
    /// Map `path` read-only. An empty file cannot be mapped, so it is an
    /// empty owned buffer.
    pub fn map(path: &Path) -> Result<Data> {
        let io = |source| ParseError::Io { path: path.to_path_buf(), source };
        let file = std::fs::File::open(path).map_err(io)?;
        if file.metadata().map_err(io)?.len() == 0 {
            return Ok(Data::Owned(Vec::new()));
        }
        // Safety: the map is read-only; a file truncated under us while
        // mapped would fault, which is why ingest hashes and reads promptly.
        Ok(Data::Mapped(unsafe { memmap2::Mmap::map(&file) }.map_err(io)?))
    }
}

impl Data {
    /// The mapped bytes in `from..to` will not be read again: drop them from
    /// this process's resident set. A mapped file's pages count in RSS once
    /// touched, so without this a sequential read of a 1 GB trace.dat would
    /// "use" 1 GB; the pages stay in the page cache, and reading them again
    /// is still correct (MADV_DONTNEED on a read-only file mapping only makes
    /// the next access fault them back in from the file).
    /// Returns the bytes released.
    pub fn release(&self, from: u64, to: u64) -> u64 {
        // 64 KiB: a multiple of every page size Linux uses, so `to` never
        // cuts into a page that is still being read.
        const ALIGN: u64 = 64 << 10;
        let (from, to) = (from & !(ALIGN - 1), to & !(ALIGN - 1));
        match self {
            Data::Mapped(m) if to > from && to <= m.len() as u64 => {
                // Safety: a read-only, private file mapping has no changes to
                // lose; no slice into this range is read again by the caller
                // (and would be refaulted correctly if it were).
                let done = unsafe { m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from as usize, (to - from) as usize) };
                if done.is_ok() { to - from } else { 0 }
            }
            _ => 0,
        }
    }
}

impl Deref for Data {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Data::Mapped(m) => m,
            Data::Owned(v) => v,
        }
    }
}
