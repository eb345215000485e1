//! Writeback Advisor trace parsers: bytes in, Arrow record batches out; and the
//! replay's inner loops (`replay`), over the arrays the Python models build.
//!
//! The parsers are plain Rust (tested with `cargo test`); the `python`
//! feature adds the PyO3 module `advisor._parsers` (see `python.rs`).

pub mod blktrace;
pub mod bytes;
pub mod columns;
pub mod data;
pub mod error;
pub mod format;
pub mod parts;
pub mod replay;
pub mod fuzzing;
pub mod source;
pub mod sql_types;
pub mod stats;
pub mod tables;
pub mod text;
pub mod tracedat;

#[cfg(feature = "python")]
mod python;
