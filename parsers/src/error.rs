//! The one error type of the parsing boundary.
//!
//! Every variant names where in the input the problem is (byte offset for
//! binary files, line number for text), so the CLI can print a one-line
//! message such as `trace.dat: offset 0x1a2c: truncated section (need 4096 bytes, 812 left)`.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The file is not a format we know (bad magic, empty, text that is not a trace).
    #[error("{path}: not a recognised trace file: {reason}")]
    UnknownFormat { path: PathBuf, reason: String },

    /// The file is of a known format but damaged or inconsistent at `offset`.
    #[error("{path}: offset {offset:#x}: {reason}")]
    Corrupt { path: PathBuf, offset: u64, reason: String },

    /// A text input is malformed at `line` (1-based).
    #[error("{path}: line {line}: {reason}")]
    BadLine { path: PathBuf, line: u64, reason: String },

    /// The file uses a feature this parser does not implement.
    #[error("{path}: {reason}")]
    Unsupported { path: PathBuf, reason: String },
}

impl ParseError {
    /// The short kind name handed to Python (selects the exception class).
    pub fn kind(&self) -> &'static str {
        match self {
            ParseError::Io { .. } => "io",
            ParseError::UnknownFormat { .. } => "format",
            ParseError::Corrupt { .. } => "corrupt",
            ParseError::BadLine { .. } => "format",
            ParseError::Unsupported { .. } => "unsupported",
        }
    }
}

pub type Result<T> = std::result::Result<T, ParseError>;

/// A problem found while reading a file, before the path is known to the
/// low-level reader. Converted into [`ParseError::Corrupt`] with the path by
/// the layer that owns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    pub offset: u64,
    pub reason: String,
}

impl Damage {
    pub fn new(offset: u64, reason: impl Into<String>) -> Self {
        Damage { offset, reason: reason.into() }
    }

    pub fn at(self, path: &std::path::Path) -> ParseError {
        ParseError::Corrupt { path: path.to_path_buf(), offset: self.offset, reason: self.reason }
    }
}
