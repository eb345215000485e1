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

impl Deref for Data {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Data::Mapped(m) => m,
            Data::Owned(v) => v,
        }
    }
}
