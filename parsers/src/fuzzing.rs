//! Entry points of the fuzz targets (`parsers/fuzz`) and of the regression
//! tests that replay what they found: each runs one parser over bytes held
//! in memory to the end, the way ingest does, and drops the batches.
//!
//! A parser may return an error for any input; it must never panic, hang,
//! or allocate what the input merely claims. Small batch limits make the
//! flush paths run on small inputs too.

use std::path::Path;
use std::sync::atomic::AtomicU64;

use crate::data::Data;
use crate::source::{Limits, TraceSource};

const LIMITS: Limits = Limits { batch_rows: 512, max_pending_bytes: 1 << 20, threads: 1 };

fn drain(src: Box<dyn TraceSource>) {
    let _ = (src.format(), src.info(), src.specs(), src.side_tables(), src.total_bytes());
    let progress = AtomicU64::new(0);
    let report = src.run(LIMITS, &progress, &mut |_, b| {
        std::hint::black_box(b.num_rows());
    });
    std::hint::black_box(report);
}

/// A trace.dat (any version, any compression), decoded on the merging thread and
/// on two decoding threads: both must give the same rows, table by table, and the
/// same report.
pub fn tracedat(data: &[u8]) {
    let open = || crate::tracedat::TraceDat::from_data(Path::new("fuzz.dat"), Data::Owned(data.to_vec()));
    let Ok(t) = open() else { return };
    let _ = (t.format(), t.info(), t.specs(), t.side_tables(), t.total_bytes());
    let again = open().expect("the same bytes opened once and not twice");
    assert_threads_agree(t, again, LIMITS, 2, "fuzz.dat");
}

/// Decode one opening of a trace on one thread and another opening of it on `threads`
/// (with `limits`' batch sizes): the same tables, each with the same rows in the same
/// order, and the same report.
pub fn assert_threads_agree(
    serial: crate::tracedat::TraceDat,
    parallel: crate::tracedat::TraceDat,
    limits: Limits,
    threads: usize,
    what: &str,
) {
    let serial_limits = Limits { threads: 1, ..limits };
    let (serial, serial_report) = collect(Box::new(serial), serial_limits);
    let (parallel, parallel_report) = collect(Box::new(parallel), Limits { threads, ..serial_limits });
    assert_eq!(serial.keys().collect::<Vec<_>>(), parallel.keys().collect::<Vec<_>>(), "{what}: tables decoded");
    for (table, rows) in &serial {
        assert!(rows == &parallel[table], "{what}: table {table} differs with {threads} decoding threads");
    }
    assert_eq!(format!("{serial_report:?}"), format!("{parallel_report:?}"), "{what}: run reports");
}

/// Every table's rows in one batch, and the run's report.
pub fn collect(
    src: Box<dyn TraceSource>,
    limits: Limits,
) -> (std::collections::BTreeMap<String, arrow_array::RecordBatch>, crate::tracedat::RunReport) {
    let mut parts: std::collections::BTreeMap<String, Vec<arrow_array::RecordBatch>> = Default::default();
    let progress = AtomicU64::new(0);
    let report = src.run(limits, &progress, &mut |name, b| parts.entry(name.to_string()).or_default().push(b));
    let whole = parts
        .into_iter()
        .map(|(n, v)| {
            let b = arrow_select::concat::concat_batches(&v[0].schema(), &v).expect("one table's batches share its schema");
            (n, b)
        })
        .collect();
    (whole, report)
}

/// One event format description (as in `events/<system>/<event>/format`)
/// for each long size, and the text as a `header_page`.
pub fn event_format(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for long_size in [4, 8] {
        if let Ok(f) = crate::format::parse_event_format(&text, "fuzz", long_size) {
            // Building the decoder turns every field into a column.
            let mut dec = crate::tracedat::decode::Decoder::new(&[f], crate::bytes::Endian::Little, 4, 1 << 16);
            dec.finish(&mut |_, b| {
                std::hint::black_box(b.num_rows());
            });
        }
    }
    let _ = crate::format::parse_header_page(&text);
}

/// ftrace text (tracefs `trace`, `trace_pipe`, `trace-cmd report`).
pub fn ftrace_text(data: &[u8]) {
    if let Ok(t) = crate::text::TextTrace::from_data(Path::new("fuzz.txt"), Data::Owned(data.to_vec())) {
        drain(Box::new(t));
    }
}

/// blktrace binary data. The first byte picks the shape: a merged file, a
/// `blktrace -o -` stream, or per-CPU files (the rest split in two at the
/// offset in the next two bytes).
/// The same records also go through `advisor io`'s summary (blktrace::summary),
/// which must read as many records as the tables do; bit 2 of the first byte
/// picks btt's rules for it.
pub fn blktrace(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else { return };
    let open = || match mode % 3 {
        0 => crate::blktrace::BlkTrace::from_memory("fuzz", vec![rest.to_vec()], false),
        1 => crate::blktrace::BlkTrace::from_memory("fuzz", vec![rest.to_vec()], true),
        _ => {
            let cut = rest.get(..2).map_or(0, |b| u16::from_le_bytes([b[0], b[1]]) as usize);
            let body = rest.get(2..).unwrap_or(&[]);
            let (a, b) = body.split_at(cut.min(body.len()));
            crate::blktrace::BlkTrace::from_memory("fuzz", vec![a.to_vec(), b.to_vec()], false)
        }
    };
    let progress = AtomicU64::new(0);
    let tables = Box::new(open()).run(LIMITS, &progress, &mut |_, b| {
        std::hint::black_box(b.num_rows());
    });
    let mut summary = crate::blktrace::summary::Summary::default();
    let report = open().summarize(&progress, &mut summary);
    assert_eq!(report.events, tables.events, "the summary read other records than the tables");
    if !summary.over_bound() {
        let _ = std::hint::black_box(crate::blktrace::summary::render(&mut summary, None, mode & 4 != 0).map(|v| v.to_string()));
    }
}

/// blkparse's default text output.
pub fn blkparse_text(data: &[u8]) {
    drain(Box::new(crate::blktrace::text::BlkParseText::from_bytes(Path::new("fuzz.txt"), data.to_vec())));
}

/// One compressed block: byte 0 picks the codec, bytes 1..5 are the size
/// the block header states, the rest is the compressed data.
pub fn inflate(data: &[u8]) {
    use crate::tracedat::compress::{Codec, Inflater};
    if data.len() < 5 {
        return;
    }
    let codec = if data[0] & 1 == 0 { Codec::Zlib } else { Codec::Zstd };
    let expected = u32::from_le_bytes([data[1], data[2], data[3], data[4]]);
    let mut out = Vec::new();
    if Inflater::new(codec).inflate(&data[5..], expected, &mut out).is_ok() {
        assert_eq!(out.len(), expected as usize);
    }
}
