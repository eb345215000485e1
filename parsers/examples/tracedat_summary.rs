//! Decode a trace.dat and print per-table row counts and parse stats:
//! `cargo run --release --example tracedat_summary -- FILE [THREADS]`
//! (THREADS decoding threads; default 1, decoding on the merging thread).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;

use advisor_parsers::source::{Limits, TraceSource};
use advisor_parsers::tracedat::TraceDat;

fn main() {
    let path = std::env::args().nth(1).expect("usage: tracedat_summary FILE");
    let t0 = std::time::Instant::now();
    let td = match TraceDat::open(path.as_ref()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    for (k, v) in td.info() {
        println!("info {k} = {v}");
    }
    let threads = std::env::args().nth(2).map_or(1, |t| t.parse().expect("THREADS is a number"));
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let progress = AtomicU64::new(0);
    let limits = Limits { batch_rows: 65536, max_pending_bytes: 64 << 20, threads };
    let report = Box::new(td).run(limits, &progress, &mut |name, batch| {
        *counts.entry(name.to_string()).or_default() += batch.num_rows();
    });
    for (k, v) in &counts {
        println!("table {k} {v}");
    }
    for s in &report.stats {
        if s.count > 0 && s.severity != advisor_parsers::stats::Severity::Info {
            println!("stat {} cpu={:?} {} {}", s.name, s.cpu, s.severity.as_str(), s.count);
        }
    }
    for d in &report.damage {
        println!("damage {d}");
    }
    eprintln!("{} events in {:?}", report.events, t0.elapsed());
}
