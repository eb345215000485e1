//! The PyO3 module `advisor._parsers`: wiring only.
//!
//! `open_trace(path)` returns a `Trace` with the capture's facts and table
//! descriptions; `Trace.batches()` decodes on a background thread and yields
//! `(table_name, RecordBatchReader)` pairs whose readers export through the
//! Arrow PyCapsule stream interface (`__arrow_c_stream__`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::{RecordBatch, RecordBatchIterator};
use crossbeam_channel::{bounded, Receiver};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::PyRecordBatchReader;

use crate::error::ParseError;
use crate::parts::PartsError;
use crate::source::{self, Limits, TraceSource};
use crate::tracedat::decode::TableSpec;
use crate::tracedat::RunReport;

create_exception!(_parsers, ParseFailure, PyException, "A trace could not be parsed: args are (kind, message).");

fn to_py(e: ParseError) -> PyErr {
    ParseFailure::new_err((e.kind(), e.to_string()))
}

fn reader_of(batch: RecordBatch) -> PyRecordBatchReader {
    let schema = batch.schema();
    PyRecordBatchReader::new(Box::new(RecordBatchIterator::new(vec![Ok(batch)], schema)))
}

#[pyclass(module = "advisor._parsers")]
struct Trace {
    source: Mutex<Option<Box<dyn TraceSource>>>,
    #[pyo3(get)]
    format: &'static str,
    #[pyo3(get)]
    path: PathBuf,
    #[pyo3(get)]
    total_bytes: u64,
    specs: Vec<TableSpec>,
    side: Vec<(&'static str, arrow_schema::SchemaRef)>,
    info: Vec<(String, String)>,
}

impl Trace {
    fn new(src: Box<dyn TraceSource>, path: PathBuf) -> Trace {
        Trace {
            format: src.format(),
            total_bytes: src.total_bytes(),
            specs: src.specs(),
            side: src.side_tables(),
            info: src.info(),
            source: Mutex::new(Some(src)),
            path,
        }
    }
}

#[pymethods]
impl Trace {
    /// Facts about the capture, as (key, value) pairs.
    fn info(&self) -> Vec<(String, String)> {
        self.info.clone()
    }

    /// Every event type the capture describes: list of dicts.
    fn tables<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.specs
            .iter()
            .map(|s| {
                let d = PyDict::new(py);
                d.set_item("name", &s.name)?;
                d.set_item("system", &s.system)?;
                d.set_item("event", &s.event)?;
                d.set_item("event_id", s.event_id)?;
                d.set_item("print_fmt", &s.print_fmt)?;
                d.set_item("fields", s.fields.clone())?;
                d.set_item("common_names", s.common_names.clone())?;
                d.set_item("physical_common", s.physical_common.clone())?;
                d.set_item("empty", reader_of(RecordBatch::new_empty(s.schema.clone())))?;
                Ok(d)
            })
            .collect()
    }

    /// The format's other tables: list of (name, empty reader).
    fn side_tables(&self) -> Vec<(&'static str, PyRecordBatchReader)> {
        self.side.iter().map(|(name, schema)| (*name, reader_of(RecordBatch::new_empty(schema.clone())))).collect()
    }

    /// Start decoding; yields (table, reader) pairs. Can be called once.
    /// `threads`: how many threads read a trace.dat (1: the parser thread alone; more:
    /// it merges the CPUs' events and the others decode them, while as many again
    /// inflate the CPUs' next compressed chunks; other formats use one).
    #[pyo3(signature = (batch_rows=65536, max_pending_bytes=64 << 20, threads=1))]
    fn batches(&mut self, batch_rows: usize, max_pending_bytes: usize, threads: usize) -> PyResult<Batches> {
        let src = self
            .source
            .lock()
            .unwrap()
            .take()
            .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("batches() can only be called once"))?;
        // Two batches in flight keep the parser and DuckDB both busy; more would
        // only hold memory while DuckDB, the slower side, catches up.
        let (tx, rx) = bounded::<(String, RecordBatch)>(2);
        let progress = Arc::new(AtomicU64::new(0));
        let report: Arc<Mutex<Option<RunReport>>> = Arc::new(Mutex::new(None));
        let (p, r) = (progress.clone(), report.clone());
        let limits = Limits { batch_rows: batch_rows.max(1), max_pending_bytes, threads: threads.max(1) };
        let handle = std::thread::Builder::new()
            .name("advisor-parse".into())
            .spawn(move || {
                let mut cancelled = false;
                let rep = src.run(limits, &p, &mut |name, batch| {
                    // The consumer went away (error or Ctrl-C): stop sending.
                    if !cancelled && tx.send((name.to_string(), batch)).is_err() {
                        cancelled = true;
                    }
                });
                *r.lock().unwrap() = Some(rep);
            })
            .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(format!("cannot start parser thread: {e}")))?;
        Ok(Batches { rx, progress, report, handle: Some(handle) })
    }
}

#[pyclass(module = "advisor._parsers")]
struct Batches {
    rx: Receiver<(String, RecordBatch)>,
    progress: Arc<AtomicU64>,
    report: Arc<Mutex<Option<RunReport>>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

#[pymethods]
impl Batches {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<(String, PyRecordBatchReader)>> {
        let rx = self.rx.clone();
        match py.detach(move || rx.recv()) {
            Ok((name, batch)) => Ok(Some((name, reader_of(batch)))),
            Err(_) => {
                if let Some(h) = self.handle.take() {
                    if h.join().is_err() {
                        return Err(pyo3::exceptions::PyRuntimeError::new_err("parser thread panicked"));
                    }
                }
                Ok(None)
            }
        }
    }

    /// Bytes of event data consumed so far.
    fn progress(&self) -> u64 {
        self.progress.load(Ordering::Relaxed)
    }

    /// After iteration: dict with events, first_ts, last_ts, damaged,
    /// damage (list of str) and stats (list of (name, cpu, severity, count, description)).
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let guard = self.report.lock().unwrap();
        guard.as_ref().map(|r| report_dict(py, r)).transpose()
    }
}

fn report_dict<'py>(py: Python<'py>, r: &RunReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("events", r.events)?;
    d.set_item("first_ts", r.first_ts)?;
    d.set_item("last_ts", r.last_ts)?;
    d.set_item("damaged", r.damaged)?;
    d.set_item("damage", r.damage.clone())?;
    d.set_item("info", r.info.clone())?;
    let stats: Vec<(String, Option<i32>, &'static str, u64, String)> =
        r.stats.iter().map(|s| (s.name.clone(), s.cpu, s.severity.as_str(), s.count, s.description.clone())).collect();
    d.set_item("stats", stats)?;
    Ok(d)
}

/// `advisor io`'s rows read straight from blktrace files (blktrace::summary),
/// on a thread; Python polls `wait` so that Ctrl-C and the progress bar work.
/// The summary's rows as JSON (None: past what it holds in memory), or the
/// capture's devices when the one asked for is not among them; and the report.
type SummaryDone = (Result<Option<String>, Vec<String>>, RunReport);

#[pyclass(module = "advisor._parsers")]
struct IoSummaryJob {
    rx: Receiver<SummaryDone>,
    progress: Arc<AtomicU64>,
    #[pyo3(get)]
    total_bytes: u64,
}

#[pymethods]
impl IoSummaryJob {
    fn progress(&self) -> u64 {
        self.progress.load(Ordering::Relaxed)
    }

    /// None while running; then a dict: `rows` (JSON text, or None when the
    /// capture was too big to summarise in memory), `devices` (set when the
    /// asked-for device is not in the capture: the ones that are) and `report`.
    fn wait<'py>(&self, py: Python<'py>, timeout_s: f64) -> PyResult<Option<Bound<'py, PyDict>>> {
        let rx = self.rx.clone();
        let got = py.detach(move || rx.recv_timeout(std::time::Duration::from_secs_f64(timeout_s.max(0.0))));
        let (rows, report) = match got {
            Ok(x) => x,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => return Ok(None),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                return Err(pyo3::exceptions::PyRuntimeError::new_err("io summary thread panicked"))
            }
        };
        let d = PyDict::new(py);
        match rows {
            Ok(json) => d.set_item("rows", json)?,
            Err(devices) => {
                d.set_item("rows", py.None())?;
                d.set_item("devices", devices)?;
            }
        }
        d.set_item("report", report_dict(py, &report)?)?;
        Ok(Some(d))
    }
}

/// Start summarising blktrace inputs for `advisor io` (see IoSummaryJob).
#[pyfunction]
#[pyo3(signature = (paths, device=None, btt_compat=false))]
fn blktrace_io_summary(py: Python<'_>, paths: Vec<PathBuf>, device: Option<String>, btt_compat: bool) -> PyResult<IoSummaryJob> {
    let p = paths.clone();
    let trace = py.detach(move || crate::blktrace::BlkTrace::open_many(&p)).map_err(to_py)?;
    let total_bytes = trace.total_bytes();
    let (tx, rx) = bounded(1);
    let progress = Arc::new(AtomicU64::new(0));
    let prog = progress.clone();
    std::thread::Builder::new()
        .name("advisor-io".into())
        .spawn(move || {
            let mut summary = crate::blktrace::summary::Summary::default();
            let report = trace.summarize(&prog, &mut summary);
            let rows = if summary.over_bound() {
                Ok(None)
            } else {
                crate::blktrace::summary::render(&mut summary, device.as_deref(), btt_compat).map(|v| Some(v.to_string()))
            };
            let _ = tx.send((rows, report));
        })
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(format!("cannot start io summary thread: {e}")))?;
    Ok(IoSummaryJob { rx, progress, total_bytes })
}

/// The store's Parquet files (parts.rs): `write(table, reader)` hands every
/// batch of an Arrow stream to the thread encoding the table's file, outside the
/// GIL; `close()` finishes and syncs them all. A full disk raises OSError naming
/// the file, at the write or close that follows it.
#[pyclass(module = "advisor._parsers", name = "PartsWriter")]
struct PyPartsWriter {
    inner: Mutex<crate::parts::PartsWriter>,
}

fn parts_err(e: PartsError) -> PyErr {
    match e {
        PartsError::Io { path, source } => {
            // OSError(errno, strerror, filename): Python picks the subclass from the errno.
            let errno = source.raw_os_error().unwrap_or(0);
            let text = source.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text).to_string();
            pyo3::exceptions::PyOSError::new_err((errno, text, path))
        }
        e @ PartsError::Batch { .. } => pyo3::exceptions::PyValueError::new_err(e.to_string()),
    }
}

#[pymethods]
impl PyPartsWriter {
    /// `threads`: how many threads encode the files (a table is on one of them);
    /// `compression`: "zstd" or "lz4" (advisor/store/parts.py picks it).
    #[new]
    #[pyo3(signature = (dir, threads, compression))]
    fn new(dir: PathBuf, threads: usize, compression: &str) -> PyResult<Self> {
        let codec = crate::parts::Codec::parse(compression)
            .ok_or_else(|| pyo3::exceptions::PyValueError::new_err(format!("unknown compression {compression:?}: zstd or lz4")))?;
        Ok(PyPartsWriter { inner: Mutex::new(crate::parts::PartsWriter::new(&dir, threads, codec).map_err(parts_err)?) })
    }

    /// Append every batch of `reader` to `table`'s file; the rows written.
    fn write(&self, py: Python<'_>, table: &str, reader: PyRecordBatchReader) -> PyResult<u64> {
        let reader = reader.into_reader()?;
        py.detach(|| {
            let mut w = self.inner.lock().unwrap();
            let mut rows = 0;
            for batch in reader {
                let batch = batch.map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("{table}: {e}")))?;
                rows += w.write(table, batch).map_err(parts_err)?;
            }
            Ok(rows)
        })
    }

    /// (table, file, rows) of every file created.
    fn written(&self) -> Vec<(String, PathBuf, u64)> {
        self.inner.lock().unwrap().written().to_vec()
    }

    /// Every file's footer, each file and the directory synced.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.inner.lock().unwrap().close()).map_err(parts_err)
    }

    /// Drop the open files without footers (the caller removes the directory).
    fn abort(&self) {
        self.inner.lock().unwrap().abort();
    }
}

/// (name, DuckDB type) of each column of an Arrow schema (anything with
/// `__arrow_c_schema__`: a reader the parsers hand over), without reading a row.
#[pyfunction]
fn duckdb_columns(schema: pyo3_arrow::PySchema) -> PyResult<Vec<(String, String)>> {
    schema
        .into_inner()
        .fields()
        .iter()
        .map(|f| {
            crate::sql_types::duckdb_type(f.data_type())
                .map(|t| (f.name().clone(), t))
                .ok_or_else(|| pyo3::exceptions::PyTypeError::new_err(format!("no DuckDB type for Arrow {}", f.data_type())))
        })
        .collect()
}

/// Open a trace file (format detected from its contents).
#[pyfunction]
fn open_trace(py: Python<'_>, path: PathBuf) -> PyResult<Trace> {
    let p = path.clone();
    let src = py.detach(move || source::open(&p)).map_err(to_py)?;
    Ok(Trace::new(src, path))
}

/// Open blktrace inputs together (per-CPU sets, a merged file, or "-").
#[pyfunction]
fn open_blktrace(py: Python<'_>, paths: Vec<PathBuf>) -> PyResult<Trace> {
    let p = paths.clone();
    let src = py.detach(move || source::open_blktrace(&p)).map_err(to_py)?;
    Ok(Trace::new(src, paths.first().cloned().unwrap_or_default()))
}

/// The files a blktrace argument stands for: the per-CPU files of a device
/// set, or the file itself (empty for "-").
#[pyfunction]
fn blktrace_files(path: PathBuf) -> Vec<PathBuf> {
    if path.as_os_str() == "-" {
        return Vec::new();
    }
    let base = crate::blktrace::split_cpu_file(&path).map(|(b, _)| b).unwrap_or_else(|| path.clone());
    let files = crate::blktrace::cpu_files(&base);
    if files.is_empty() {
        vec![path]
    } else {
        files.into_iter().map(|(_, p)| p).collect()
    }
}

/// "blktrace", "blkparse-text", "trace.dat" or "ftrace-text" (see source::detect).
#[pyfunction]
fn detect_format(py: Python<'_>, path: PathBuf) -> PyResult<&'static str> {
    py.detach(move || source::detect(&path)).map_err(to_py)
}

/// Whether a path names blktrace data (see source::is_blktrace).
#[pyfunction]
fn is_blktrace(path: PathBuf) -> bool {
    source::is_blktrace(&path)
}

/// BLAKE3 hex digest of a file (the store's cache key).
#[pyfunction]
fn file_digest(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    py.detach(move || {
        // Read, not mapped: a mapped file's pages would count in the
        // process's RSS, a 1 GB capture as 1 GB of memory.
        let mut h = blake3::Hasher::new();
        std::fs::File::open(&path).and_then(|f| h.update_reader(f)).map(|h| h.finalize().to_hex().to_string())
    })
    .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))
}

/// BLAKE3 hex digest of a text (the cache key of several inputs).
#[pyfunction]
fn text_digest(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

#[pymodule]
fn _parsers(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(open_trace, m)?)?;
    m.add_function(wrap_pyfunction!(file_digest, m)?)?;
    m.add_function(wrap_pyfunction!(text_digest, m)?)?;
    m.add_function(wrap_pyfunction!(open_blktrace, m)?)?;
    m.add_function(wrap_pyfunction!(is_blktrace, m)?)?;
    m.add_function(wrap_pyfunction!(blktrace_files, m)?)?;
    m.add_function(wrap_pyfunction!(detect_format, m)?)?;
    m.add_function(wrap_pyfunction!(blktrace_io_summary, m)?)?;
    m.add_function(wrap_pyfunction!(duckdb_columns, m)?)?;
    m.add_function(wrap_pyfunction!(crate::replay::python::py_sweep_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(crate::replay::python::py_page_waits, m)?)?;
    m.add_function(wrap_pyfunction!(crate::replay::python::py_shared_log, m)?)?;
    m.add_class::<Trace>()?;
    m.add_class::<Batches>()?;
    m.add_class::<IoSummaryJob>()?;
    m.add_class::<PyPartsWriter>()?;
    m.add("ParseFailure", m.py().get_type::<ParseFailure>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
