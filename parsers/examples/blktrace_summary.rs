//! Parse blktrace input and print per-table row counts and timing:
//! `cargo run --release --example blktrace_summary -- NAME_OR_FILE...`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;

use advisor_parsers::source::{open_blktrace, Limits};

fn main() {
    let paths: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let t0 = std::time::Instant::now();
    let src = match open_blktrace(&paths) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let progress = AtomicU64::new(0);
    let limits = Limits { batch_rows: 262_144, max_pending_bytes: 64 << 20, threads: 1 };
    let report = src.run(limits, &progress, &mut |name, batch| {
        *counts.entry(name.to_string()).or_default() += batch.num_rows();
    });
    for (k, v) in &counts {
        println!("table {k} {v}");
    }
    for d in &report.damage {
        println!("damage {d}");
    }
    eprintln!("{} records in {:?}", report.events, t0.elapsed());
}
