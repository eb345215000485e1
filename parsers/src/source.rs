//! The interface every trace format implements, so the binding and the
//! store treat trace.dat and text captures alike.

use std::path::Path;
use std::sync::atomic::AtomicU64;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::error::{ParseError, Result};
use crate::tracedat::decode::TableSpec;
use crate::tracedat::parallel::ParallelDecoder;
use crate::tracedat::{RunReport, TraceDat};

/// Rows per record batch handed to the store, the cap on decoded bytes
/// buffered across all event types before the biggest is flushed, and the
/// threads that decode (trace.dat; 1: on the merging thread itself; more: the
/// merging thread and `threads - 1` decoding, and `threads - 1` inflating chunks).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub batch_rows: usize,
    pub max_pending_bytes: usize,
    pub threads: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { batch_rows: 65536, max_pending_bytes: 64 << 20, threads: 1 }
    }
}

pub trait TraceSource: Send {
    /// `trace.dat`, `ftrace-text`, ...
    fn format(&self) -> &'static str;
    /// Facts for the `trace_info` table.
    fn info(&self) -> Vec<(String, String)>;
    /// Tables known before reading the events (every described event type).
    fn specs(&self) -> Vec<TableSpec>;
    /// The format's other tables (tasks, lost events, ...): they exist in
    /// every store of this format, empty when the capture has no rows.
    fn side_tables(&self) -> Vec<(&'static str, SchemaRef)>;
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
    fn side_tables(&self) -> Vec<(&'static str, SchemaRef)> {
        use crate::tracedat::{
            decode, instance_schema, kallsyms_schema, lost_schema, printk_schema, spans, tasks_schema, INSTANCE_TABLE, KALLSYMS_TABLE,
            LOST_TABLE, PRINTK_TABLE, TASKS_TABLE,
        };
        vec![
            (TASKS_TABLE, tasks_schema()),
            (PRINTK_TABLE, printk_schema()),
            (KALLSYMS_TABLE, kallsyms_schema()),
            (INSTANCE_TABLE, instance_schema()),
            (LOST_TABLE, lost_schema()),
            (decode::UNKNOWN_TABLE, decode::Decoder::unknown_schema()),
            (spans::SPANS_TABLE, spans::spans_schema()),
        ]
    }
    fn total_bytes(&self) -> u64 {
        self.regions().iter().map(|(c, _)| c.size).sum()
    }
    fn run(mut self: Box<Self>, limits: Limits, progress: &AtomicU64, out: &mut dyn FnMut(&str, RecordBatch)) -> RunReport {
        if limits.threads > 1 {
            // As many threads inflate the CPUs' next chunks as decode windows.
            self.inflate_threads = limits.threads - 1;
            // The merging thread is one of the threads; the others decode. Each worker's
            // decoder buffers at most one window: the budget is the joiner's.
            let decoders = (1..limits.threads).map(|_| self.decoder(limits.batch_rows, limits.max_pending_bytes)).collect();
            // Without threads to be had (a process limit), decode on this one.
            if let Ok(mut dec) = ParallelDecoder::new(decoders, limits.batch_rows, limits.max_pending_bytes) {
                return TraceDat::run(&self, &mut dec, progress, out);
            }
        }
        let mut dec = self.decoder(limits.batch_rows, limits.max_pending_bytes);
        TraceDat::run(&self, &mut dec, progress, out)
    }
}

/// True when `path` is blktrace data: `-` (stdin), a per-CPU file
/// `NAME.blktrace.N`, a device set name whose per-CPU files exist, or a file
/// starting with the blktrace magic.
pub fn is_blktrace(path: &Path) -> bool {
    use std::io::Read;
    if path.as_os_str() == "-" || crate::blktrace::split_cpu_file(path).is_some() {
        return true;
    }
    if !path.exists() {
        return !crate::blktrace::cpu_files(path).is_empty();
    }
    let mut head = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && crate::blktrace::record::detect_endian(head).is_some()
}

/// Open blktrace inputs parsed together (several device sets merge like
/// `blkparse -i a -i b`).
pub fn open_blktrace(paths: &[std::path::PathBuf]) -> Result<Box<dyn TraceSource>> {
    Ok(Box::new(crate::blktrace::BlkTrace::open_many(paths)?))
}

/// The format of `path`, from its first bytes: "blktrace", "blkparse-text",
/// "trace.dat" or "ftrace-text".
pub fn detect(path: &Path) -> Result<&'static str> {
    if is_blktrace(path) {
        return Ok("blktrace");
    }
    let head = sniff(path)?;
    if head.is_empty() {
        return Err(ParseError::UnknownFormat { path: path.to_path_buf(), reason: "empty file".into() });
    }
    let magic = &crate::tracedat::header::MAGIC[..];
    if head.starts_with(&magic[..head.len().min(magic.len())]) {
        return Ok("trace.dat");
    }
    if crate::blktrace::text::looks_like_blkparse(&String::from_utf8_lossy(&head)) {
        return Ok("blkparse-text");
    }
    if crate::text::looks_like_text(&head) {
        return Ok("ftrace-text");
    }
    Err(ParseError::UnknownFormat {
        path: path.to_path_buf(),
        reason: "neither a trace.dat (magic \\x17\\x08\\x44tracing), ftrace text, blktrace data nor blkparse text".into(),
    })
}

/// Open `path` with the parser its first bytes call for.
pub fn open(path: &Path) -> Result<Box<dyn TraceSource>> {
    Ok(match detect(path)? {
        "blktrace" => open_blktrace(&[path.to_path_buf()])?,
        "blkparse-text" => Box::new(crate::blktrace::text::BlkParseText::open(path)?),
        "trace.dat" => Box::new(TraceDat::open(path)?),
        _ => Box::new(crate::text::TextTrace::open(path)?),
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
