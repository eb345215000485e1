//! The store's big tables as Parquet files, written from the parsers' batches
//! without leaving Rust: one file per table, one row group per batch, encoded
//! on threads of their own while the parser decodes the next batches.
//!
//! Encodings (https://parquet.apache.org/docs/file-format/data-pages/encodings/):
//! timestamps, ids, inode numbers and sectors are close to their neighbours, so
//! integer columns are delta-encoded (DELTA_BINARY_PACKED: 14 bits a timestamp
//! where a dictionary would keep 64); text and the few small integers in
//! [`DICTIONARY_INTS`] keep dictionary encoding; data pages are format v1, which
//! every Parquet reader takes, compressed as the caller asks ([`Codec`]).
//! Each column chunk carries its min and max but text columns (see [`properties`]).
//!
//! The files are made durable by [`PartsWriter::close`] (each file, then the
//! directory's entries) before the catalog that names them is renamed into place.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use crossbeam_channel::{bounded, Receiver, Sender};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::schema::types::ColumnPath;

/// Integer columns with few distinct values, which compress best as dictionaries
/// (a CPU number, the flags and preempt count of every event).
pub const DICTIONARY_INTS: [&str; 6] = ["cpu", "flags", "preempt_count", "common_flags", "common_preempt_count", "common_cpu"];

/// Why a Parquet file could not be written: the file and the cause.
#[derive(Debug, thiserror::Error)]
pub enum PartsError {
    /// The machine refused (a full disk, a read-only or vanished directory).
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    /// A batch the file cannot take (a column of another type that does not cast).
    #[error("{path}: {reason}")]
    Batch { path: PathBuf, reason: String },
}

impl PartsError {
    fn of(path: &Path, e: ParquetError) -> PartsError {
        // The parquet crate wraps the file's io::Error: "External: No space left on device".
        if let ParquetError::External(inner) = e {
            return match inner.downcast::<io::Error>() {
                Ok(io) => PartsError::Io { path: path.to_path_buf(), source: *io },
                Err(other) => PartsError::Batch { path: path.to_path_buf(), reason: other.to_string() },
            };
        }
        PartsError::Batch { path: path.to_path_buf(), reason: e.to_string() }
    }

    fn io(path: &Path, source: io::Error) -> PartsError {
        PartsError::Io { path: path.to_path_buf(), source }
    }
}

/// How the pages of a file are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// zstd level 1: the smaller files, for Parquet that leaves the machine (the
    /// fleet export), which any reader of the last years takes.
    Zstd,
    /// LZ4 (the LZ4_RAW codec): for the store's own files, which only DuckDB reads.
    /// On a 9.44 M-event capture the ingest took 2.9-3.1 instead of 3.2-3.35 s of
    /// CPU, for files a fifth larger (62 MB against 51); the same queries took as long.
    Lz4,
}

impl Codec {
    pub fn parse(name: &str) -> Option<Codec> {
        match name {
            "zstd" => Some(Codec::Zstd),
            "lz4" => Some(Codec::Lz4),
            _ => None,
        }
    }

    fn compression(self) -> Compression {
        match self {
            Codec::Zstd => Compression::ZSTD(ZstdLevel::try_new(1).expect("zstd level 1 exists")),
            Codec::Lz4 => Compression::LZ4_RAW,
        }
    }
}

/// The writer settings of a table's file.
pub fn properties(schema: &SchemaRef, codec: Codec) -> WriterProperties {
    let mut p = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(codec.compression())
        .set_dictionary_enabled(true)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        // The caller's batch is the row group (`write` flushes after each one).
        .set_max_row_group_row_count(None)
        .set_max_row_group_bytes(None);
    for f in schema.fields() {
        if matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary | DataType::LargeBinary) {
            // The parquet crate finds a text column's min and max by comparing every
            // value with both (memcmp was 15% of a 7.13 M-event ingest's CPU); a query
            // filters on times and numbers, which keep theirs.
            p = p.set_column_statistics_enabled(ColumnPath::from(f.name().as_str()), EnabledStatistics::None);
        }
        if f.data_type().is_integer() && !DICTIONARY_INTS.contains(&f.name().as_str()) {
            let col = ColumnPath::from(f.name().as_str());
            p = p.set_column_dictionary_enabled(col.clone(), false).set_column_encoding(col, Encoding::DELTA_BINARY_PACKED);
        }
    }
    p.build()
}

/// The file of a table: hex-escapes what is not safe in a path component (a
/// text capture names its tables after what the lines say).
pub fn file_name(table: &str) -> String {
    let mut s = String::with_capacity(table.len() + 8);
    for c in table.chars() {
        if c.is_alphanumeric() || c == '_' || c == '-' {
            s.push(c);
        } else {
            s.push_str(&format!("%{:02x}", c as u32));
        }
    }
    s.push_str(".parquet");
    s
}

struct PartFile {
    path: PathBuf,
    writer: ArrowWriter<File>,
    schema: SchemaRef,
}

impl PartFile {
    fn create(path: PathBuf, schema: SchemaRef, codec: Codec) -> Result<PartFile, PartsError> {
        let file = File::create_new(&path).map_err(|e| PartsError::io(&path, e))?;
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(properties(&schema, codec))).map_err(|e| PartsError::of(&path, e))?;
        Ok(PartFile { path, writer, schema })
    }

    /// One batch as one row group.
    fn append(&mut self, batch: RecordBatch) -> Result<(), PartsError> {
        let batch = conform(batch, &self.schema).map_err(|reason| PartsError::Batch { path: self.path.clone(), reason })?;
        self.writer.write(&batch).and_then(|()| self.writer.flush()).map_err(|e| PartsError::of(&self.path, e))
    }

    /// The footer, then the file synced to disk.
    fn finish(self) -> Result<(), PartsError> {
        let path = self.path;
        let file = self.writer.into_inner().map_err(|e| PartsError::of(&path, e))?;
        file.sync_all().map_err(|e| PartsError::io(&path, e))
    }
}

/// What the encoder threads share: the first failure, and whether to give up.
#[derive(Default)]
struct Shared {
    failed: Mutex<Option<PartsError>>,
    aborted: AtomicBool,
}

impl Shared {
    fn fail(&self, e: PartsError) {
        self.failed.lock().unwrap().get_or_insert(e);
    }

    fn has_failed(&self) -> bool {
        self.failed.lock().unwrap().is_some()
    }
}

/// An encoder thread: the files of the tables routed to it, written in the order
/// their batches arrive, finished when the channel closes.
fn encode(jobs: Receiver<(PathBuf, RecordBatch)>, shared: Arc<Shared>, codec: Codec) {
    let mut files: HashMap<PathBuf, PartFile> = HashMap::new();
    for (path, batch) in jobs {
        if shared.aborted.load(Ordering::Relaxed) || shared.has_failed() {
            continue; // drain: the sender must never block on a thread that stopped
        }
        let f = match files.entry(path) {
            Entry::Occupied(f) => f.into_mut(),
            Entry::Vacant(new) => match PartFile::create(new.key().clone(), batch.schema(), codec) {
                Ok(f) => new.insert(f),
                Err(e) => {
                    shared.fail(e);
                    continue;
                }
            },
        };
        if let Err(e) = f.append(batch) {
            shared.fail(e);
        }
    }
    if shared.aborted.load(Ordering::Relaxed) {
        return; // the files are dropped without footers; the caller removes them
    }
    for (_, f) in files {
        if let Err(e) = f.finish() {
            shared.fail(e);
        }
    }
}

struct Encoder {
    jobs: Sender<(PathBuf, RecordBatch)>,
    handle: JoinHandle<()>,
    rows: u64,
}

/// One Parquet file per table under `dir` (which must exist), appended batch by
/// batch, each batch a row group. The files are encoded on `threads` threads,
/// each table on one of them (the one with the fewest rows so far when the table
/// first comes): the parser's thread and the caller's keep decoding meanwhile.
pub struct PartsWriter {
    dir: PathBuf,
    encoders: Vec<Encoder>,
    /// A table's place in `written` and its encoder.
    route: HashMap<String, (usize, usize)>,
    shared: Arc<Shared>,
    /// Every file written, finished or not, with its table and rows.
    written: Vec<(String, PathBuf, u64)>,
}

impl PartsWriter {
    pub fn new(dir: &Path, threads: usize, codec: Codec) -> Result<PartsWriter, PartsError> {
        let shared = Arc::new(Shared::default());
        let mut encoders = Vec::new();
        for i in 0..threads.max(1) {
            // One batch waits for each thread while it encodes another, so the
            // caller can go on to the next batch (perhaps another thread's), and
            // no more than two batches a thread are held.
            let (jobs, rx) = bounded(1);
            let sh = shared.clone();
            let handle = std::thread::Builder::new()
                .name(format!("advisor-parquet-{i}"))
                .spawn(move || encode(rx, sh, codec))
                .map_err(|e| PartsError::io(dir, e))?;
            encoders.push(Encoder { jobs, handle, rows: 0 });
        }
        Ok(PartsWriter { dir: dir.to_path_buf(), encoders, route: HashMap::new(), shared, written: Vec::new() })
    }

    /// Hand one batch of `table` to its encoder (its file is created with the
    /// batch's schema at its first batch); the rows. A failure of any earlier
    /// batch is returned here, so the caller stops at once.
    pub fn write(&mut self, table: &str, batch: RecordBatch) -> Result<u64, PartsError> {
        self.check()?;
        if batch.num_rows() == 0 {
            return Ok(0);
        }
        let (i, k) = match self.route.get(table) {
            Some(&r) => r,
            None => {
                let k = (0..self.encoders.len()).min_by_key(|&k| self.encoders[k].rows).unwrap_or(0);
                let r = (self.written.len(), k);
                self.written.push((table.to_string(), self.dir.join(file_name(table)), 0));
                self.route.insert(table.to_string(), r);
                r
            }
        };
        let rows = batch.num_rows() as u64;
        let w = &mut self.written[i];
        if self.encoders[k].jobs.send((w.1.clone(), batch)).is_err() {
            return Err(PartsError::Batch { path: w.1.clone(), reason: "the Parquet encoder thread stopped".into() });
        }
        w.2 += rows;
        self.encoders[k].rows += rows;
        Ok(rows)
    }

    /// The first failure, once; after it every file is abandoned.
    fn check(&self) -> Result<(), PartsError> {
        if let Some(e) = self.shared.failed.lock().unwrap().take() {
            self.shared.aborted.store(true, Ordering::Relaxed);
            return Err(e);
        }
        if self.shared.aborted.load(Ordering::Relaxed) {
            return Err(PartsError::Batch { path: self.dir.clone(), reason: "abandoned after an earlier failure".into() });
        }
        Ok(())
    }

    /// (table, file, rows) of every file, in the order they were created.
    pub fn written(&self) -> &[(String, PathBuf, u64)] {
        &self.written
    }

    /// Every file's footer, each file synced to disk, then the directory's
    /// entries. Every file is closed either way; the first failure is returned.
    pub fn close(&mut self) -> Result<(), PartsError> {
        self.join();
        self.check()?;
        if !self.written.is_empty() {
            File::open(&self.dir).and_then(|d| d.sync_all()).map_err(|e| PartsError::io(&self.dir, e))?;
        }
        Ok(())
    }

    /// Stop: the open files are dropped without footers (the caller removes the directory).
    pub fn abort(&mut self) {
        self.shared.aborted.store(true, Ordering::Relaxed);
        self.join();
    }

    fn join(&mut self) {
        for enc in self.encoders.drain(..) {
            drop(enc.jobs);
            if enc.handle.join().is_err() {
                self.shared.fail(PartsError::Batch { path: self.dir.clone(), reason: "a Parquet encoder thread panicked".into() });
            }
        }
    }
}

impl Drop for PartsWriter {
    fn drop(&mut self) {
        if !self.encoders.is_empty() {
            self.abort();
        }
    }
}

/// A later batch of a table in the file's schema: a text capture types its
/// columns from the lines it has read, so a later batch may say Int64 where the
/// file says Utf8; each such column is cast.
fn conform(batch: RecordBatch, schema: &SchemaRef) -> Result<RecordBatch, String> {
    if batch.schema() == *schema {
        return Ok(batch);
    }
    if batch.num_columns() != schema.fields().len() {
        return Err(format!("a batch of {} columns for a file of {}", batch.num_columns(), schema.fields().len()));
    }
    let columns: Vec<ArrayRef> = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| cast_to(c, f.data_type()).map_err(|e| format!("column {}: {e}", f.name())))
        .collect::<Result<_, _>>()?;
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())
}

fn cast_to(column: &ArrayRef, to: &DataType) -> Result<ArrayRef, arrow_schema::ArrowError> {
    if column.data_type() == to {
        Ok(Arc::clone(column))
    } else {
        arrow_cast::cast(column, to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray, UInt32Array, UInt64Array};
    use arrow_schema::{Field, Schema};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    fn batch(ts: Vec<u64>, cpu: Vec<u32>, comm: Vec<&str>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("ts", DataType::UInt64, false),
            Field::new("cpu", DataType::UInt32, false),
            Field::new("comm", DataType::Utf8, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![Arc::new(UInt64Array::from(ts)), Arc::new(UInt32Array::from(cpu)), Arc::new(StringArray::from(comm))],
        )
        .unwrap()
    }

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("advisor-parts-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_row_group_per_batch_and_the_rows_read_back() {
        let dir = tmpdir("rows");
        let mut w = PartsWriter::new(&dir, 2, Codec::Zstd).unwrap();
        assert_eq!(w.write("raw.sched_switch", batch(vec![10, 20], vec![0, 1], vec!["a", "b"])).unwrap(), 2);
        assert_eq!(w.write("raw.sched_switch", batch(vec![30], vec![1], vec!["c"])).unwrap(), 1);
        w.close().unwrap();
        let path = dir.join("raw%2esched_switch.parquet");
        assert_eq!(w.written(), &[("raw.sched_switch".to_string(), path.clone(), 3)]);
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
        let meta = reader.metadata().clone();
        assert_eq!(meta.num_row_groups(), 2);
        let cols = meta.row_group(0).columns();
        assert!(cols[0].encodings().any(|e| e == Encoding::DELTA_BINARY_PACKED), "ts is delta-encoded");
        assert!(cols[1].encodings().any(|e| e == Encoding::RLE_DICTIONARY), "cpu keeps a dictionary");
        assert!(cols[2].encodings().any(|e| e == Encoding::RLE_DICTIONARY), "text keeps a dictionary");
        let rows: Vec<RecordBatch> = reader.build().unwrap().collect::<Result<_, _>>().unwrap();
        let ts: Vec<u64> =
            rows.iter().flat_map(|b| b.column(0).as_any().downcast_ref::<UInt64Array>().unwrap().values().to_vec()).collect();
        assert_eq!(ts, vec![10, 20, 30]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn each_codec_reads_back() {
        for (codec, name) in [(Codec::Zstd, "ZSTD(ZstdLevel(1))"), (Codec::Lz4, "LZ4_RAW")] {
            let dir = tmpdir(&format!("{codec:?}"));
            let mut w = PartsWriter::new(&dir, 1, codec).unwrap();
            w.write("t", batch((0..5000).collect(), vec![3; 5000], vec!["kworker/u4:1"; 5000])).unwrap();
            w.close().unwrap();
            let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(dir.join("t.parquet")).unwrap()).unwrap();
            for c in reader.metadata().row_group(0).columns() {
                assert_eq!(c.compression().to_string(), name, "{codec:?}");
            }
            let rows: usize = reader.build().unwrap().map(|b| b.unwrap().num_rows()).sum();
            assert_eq!(rows, 5000);
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn a_later_batch_of_another_type_is_cast_to_the_file() {
        let dir = tmpdir("cast");
        let mut w = PartsWriter::new(&dir, 2, Codec::Zstd).unwrap();
        let text = Arc::new(Schema::new(vec![Field::new("v", DataType::Utf8, true)]));
        let ints = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, true)]));
        w.write("t", RecordBatch::try_new(text, vec![Arc::new(StringArray::from(vec!["x"]))]).unwrap()).unwrap();
        w.write("t", RecordBatch::try_new(ints, vec![Arc::new(Int64Array::from(vec![7]))]).unwrap()).unwrap();
        w.close().unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(dir.join("t.parquet")).unwrap()).unwrap().build().unwrap();
        let vals: Vec<String> = reader
            .flat_map(|b| {
                let b = b.unwrap();
                let a = b.column(0).as_any().downcast_ref::<StringArray>().unwrap().clone();
                a.iter().map(|v| v.unwrap().to_string()).collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(vals, vec!["x", "7"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_vanished_directory_names_the_file() {
        let dir = tmpdir("gone");
        std::fs::remove_dir_all(&dir).unwrap();
        let mut w = PartsWriter::new(&dir, 2, Codec::Zstd).unwrap();
        w.write("t", batch(vec![1], vec![0], vec!["a"])).unwrap();
        let e = w.close().unwrap_err();
        assert!(matches!(e, PartsError::Io { .. }));
        assert!(e.to_string().starts_with(&dir.join("t.parquet").display().to_string()), "{e}");
    }

    #[test]
    fn tables_spread_over_the_threads_keep_their_batch_order() {
        let dir = tmpdir("threads");
        let mut w = PartsWriter::new(&dir, 3, Codec::Zstd).unwrap();
        for i in 0..40u64 {
            let table = format!("t{}", i % 5);
            w.write(&table, batch(vec![i, i + 100], vec![0, 0], vec!["x", "y"])).unwrap();
        }
        w.close().unwrap();
        assert_eq!(w.written().len(), 5);
        for (k, (table, path, rows)) in w.written().iter().enumerate() {
            assert_eq!(table, &format!("t{k}"));
            assert_eq!(*rows, 16);
            let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
            assert_eq!(reader.metadata().num_row_groups(), 8);
            let ts: Vec<u64> = reader
                .build()
                .unwrap()
                .flat_map(|b| b.unwrap().column(0).as_any().downcast_ref::<UInt64Array>().unwrap().values().to_vec())
                .collect();
            let want: Vec<u64> = (0..40u64).filter(|i| i % 5 == k as u64).flat_map(|i| [i, i + 100]).collect();
            assert_eq!(ts, want);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failure_stops_the_writes_that_follow() {
        let dir = tmpdir("stops");
        let mut w = PartsWriter::new(&dir, 1, Codec::Zstd).unwrap();
        // A file already there: creating it fails on the encoder thread.
        std::fs::write(dir.join("t.parquet"), b"taken").unwrap();
        w.write("t", batch(vec![1], vec![0], vec!["a"])).unwrap();
        let mut failed = None;
        for _ in 0..100 {
            if let Err(e) = w.write("u", batch(vec![1], vec![0], vec!["a"])) {
                failed = Some(e);
                break;
            }
        }
        let e = failed.expect("a later write reports the failure");
        assert!(e.to_string().contains("t.parquet"), "{e}");
        assert!(w.close().is_err(), "a writer that failed does not close cleanly");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn file_names_escape_what_is_unsafe_in_a_path() {
        assert_eq!(file_name("raw.a/b c"), "raw%2ea%2fb%20c.parquet");
        assert_eq!(file_name("main.tasks"), "main%2etasks.parquet");
    }
}
