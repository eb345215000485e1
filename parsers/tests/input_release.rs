//! Mapped trace.dat bytes are handed back to the kernel (MADV_DONTNEED) as
//! the parser moves past them, so resident memory does not grow with the
//! file. The decoded events must not change: run the real samples with a
//! release after every 64 KiB and without any, and compare every batch.

use std::path::Path;
use std::sync::atomic::AtomicU64;

use advisor_parsers::tracedat::TraceDat;
use arrow_array::RecordBatch;

fn decode(sample: &str, release_step: u64) -> (Vec<(String, RecordBatch)>, u64) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample_traces").join(sample);
    let mut trace = TraceDat::open(&path).unwrap();
    trace.release_step = release_step;
    let mut dec = trace.decoder(4096, 1 << 20);
    let mut batches = Vec::new();
    let report = trace.run(&mut dec, &AtomicU64::new(0), &mut |name, b| batches.push((name.to_string(), b)));
    (batches, report.released_bytes)
}

fn check(sample: &str) {
    let (kept, none) = decode(sample, u64::MAX);
    let (released, bytes) = decode(sample, 64 << 10);
    assert_eq!(none, 0);
    assert!(bytes > 0, "{sample}: nothing was released");
    assert_eq!(kept.len(), released.len(), "{sample}: batch count");
    for ((a_name, a), (b_name, b)) in kept.iter().zip(&released) {
        assert_eq!(a_name, b_name);
        assert_eq!(a, b, "{sample}: table {a_name} differs after releasing input");
    }
}

#[test]
fn uncompressed_v6_pages_are_read_in_place() {
    check("sync-xfs-v6.dat");
}

#[test]
fn compressed_v7_chunks() {
    check("fio-ext4-v7-zstd.dat");
}
