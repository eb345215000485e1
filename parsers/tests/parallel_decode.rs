//! Decoding on worker threads must give exactly what decoding on the merging thread
//! gives: every table's rows in the same order, the same ids, the same report. Every
//! trace.dat sample, with small batches (many windows, joined again out of order of
//! arrival) and with the store's batch size.

use std::path::Path;

use advisor_parsers::fuzzing::assert_threads_agree;
use advisor_parsers::source::Limits;
use advisor_parsers::tracedat::TraceDat;

fn samples() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample_traces");
    let mut v: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "dat")).collect();
    v.sort();
    assert!(v.len() >= 10, "trace.dat samples in {}", dir.display());
    v
}

fn same(path: &Path, batch_rows: usize, threads: usize) {
    let limits = Limits { batch_rows, max_pending_bytes: 1 << 20, threads: 1 };
    let (serial, parallel) = (TraceDat::open(path).unwrap(), TraceDat::open(path).unwrap());
    assert_threads_agree(serial, parallel, limits, threads, &path.file_name().unwrap().to_string_lossy());
}

#[test]
fn small_batches_many_windows() {
    for p in samples() {
        same(&p, 1000, 3);
    }
}

#[test]
fn store_batches() {
    for p in samples() {
        same(&p, 262_144, 2);
    }
}
