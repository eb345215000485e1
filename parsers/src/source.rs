//! The interface every trace format implements, so the binding and the
//! store treat trace.dat and text captures alike.

use std::path::Path;
use std::sync::atomic::AtomicU64;

use arrow_array::RecordBatch;

use crate::error::{ParseError, Result};
use crate::tracedat::decode::TableSpec;
use crate::tracedat::{RunReport, TraceDat};

/// Rows per record batch handed to the store, and the cap on decoded bytes
/// buffered across all event types before the biggest is flushed.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub batch_rows: usize,
    pub max_pending_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { batch_rows: 65536, max_pending_bytes: 64 << 20 }
    }
}

pub trait TraceSource: Send {
    /// `trace.dat`, `ftrace-text`, ...
    fn format(&self) -> &'static str;
    /// Facts for the `trace_info` table.
    fn info(&self) -> Vec<(String, String)>;
    /// Tables known before reading the events (every described event type).
    fn specs(&self) -> Vec<TableSpec>;
    /// Bytes `run` will report progress against.
    fn total_bytes(&self) -> u64;
    /// Decode everything, handing (table, batch) to `out` as batches fill.
    fn run(self: Box<Self>, limits: Limits, progress: &AtomicU64, out: &mut dyn FnMut(&str, RecordBatch)) -> RunReport;
}

impl TraceSource for TraceDat {
    fn format(&self) -> &'static str {
        "trace.dat"
    }
    fn info(&self) -> Vec<(String, String)> {
        TraceDat::info(self)
    }
    fn specs(&self) -> Vec<TableSpec> {
        self.decoder(1, 1).specs
    }
    fn total_bytes(&self) -> u64 {
        self.meta.cpus.iter().map(|c| c.size).sum()
    }
    fn run(self: Box<Self>, limits: Limits, progress: &AtomicU64, out: &mut dyn FnMut(&str, RecordBatch)) -> RunReport {
        let mut dec = self.decoder(limits.batch_rows, limits.max_pending_bytes);
        TraceDat::run(&self, &mut dec, progress, out)
    }
}

/// Open `path` with the parser its first bytes call for.
pub fn open(path: &Path) -> Result<Box<dyn TraceSource>> {
    use std::io::Read;
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|source| ParseError::Io { path: path.to_path_buf(), source })?;
    if n == 0 {
        return Err(ParseError::UnknownFormat { path: path.to_path_buf(), reason: "empty file".into() });
    }
    if head[..n].starts_with(&crate::tracedat::header::MAGIC[..n.min(10)]) {
        return Ok(Box::new(TraceDat::open(path)?));
    }
    if crate::text::looks_like_text(&sniff(path)?) {
        return Ok(Box::new(crate::text::TextTrace::open(path)?));
    }
    Err(ParseError::UnknownFormat {
        path: path.to_path_buf(),
        reason: "neither a trace.dat (magic \\x17\\x08\\x44tracing) nor ftrace text".into(),
    })
}

fn sniff(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(64 << 10).read_to_end(&mut buf))
        .map_err(|source| ParseError::Io { path: path.to_path_buf(), source })?;
    Ok(buf)
}
