//! The summary's rows, as the queries of `advisor/io/summary.py` return
//! them: one JSON object per row, the same keys, the same order (devices by
//! their name as a string: "259,0" sorts before "8,0").

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{json, Value};

use super::stats::{average, bucket, phase_stats, seek_stats, PhaseStats, BUCKETS_MS};
use super::{Agg, Dev, Summary, DIRECTIONS};
use crate::blktrace::btt::{is_remapper, Phase};
use crate::blktrace::tables::{dev_name, DeviceRow};

/// btt's phases in the summary (`PHASES`); Q2Q_all stands in for Q2Q in the
/// all-devices table.
const PHASES: [Phase; 10] =
    [Phase::Q2Q, Phase::Q2A, Phase::Q2G, Phase::S2G, Phase::G2I, Phase::Q2M, Phase::I2D, Phase::M2D, Phase::D2C, Phase::Q2C];

/// The values of a device's phase as a mode reads them: btt's (a `Phase`
/// code), or D2C per issued request.
const REQUEST_D2C: u8 = u8::MAX;

/// Per (device, value set): the statistics, and the histogram's bucket counts
/// (for D2C and Q2C).
type Computed = FxHashMap<(u32, u8), (PhaseStats, Option<Vec<u64>>)>;

/// The rows of every query for `device` (None: all), with D2C per issued
/// request unless `btt_compat`. Err: the device is not in the capture (the
/// capture's devices).
pub fn render(s: &mut Summary, device: Option<&str>, btt_compat: bool) -> Result<Value, Vec<String>> {
    let mut facts = s.facts.clone();
    facts.sort_by_cached_key(|f| dev_name(f.device));
    let names: Vec<String> = facts.iter().map(|f| dev_name(f.device)).collect();
    let wanted = device.map(|d| d.replace(':', ","));
    if let Some(d) = &wanted {
        if !names.contains(d) {
            return Err(names);
        }
    }
    let devs: Vec<u32> = facts.iter().filter(|f| wanted.as_ref().map_or(true, |d| *d == dev_name(f.device))).map(|f| f.device).collect();
    // A set: a capture can name hundreds of thousands of devices (made-up numbers).
    let shown: FxHashSet<u32> = devs.iter().copied().collect();
    let keep = |dev: u32| shown.contains(&dev);
    let Summary { devs: records, d2c: requests, names: tasks, .. } = s;
    let mut sets: FxHashMap<(u32, u8), Vec<u64>> = FxHashMap::default();
    for (&d, dev) in records.iter_mut() {
        for (phase, v) in dev.values.iter_mut().enumerate().filter(|x| !x.1.is_empty()) {
            sets.insert((d, phase as u8), std::mem::take(v));
        }
    }
    // The seeks (a sort per device and kind) on one thread, the phase values on this one.
    let (seek_rows, (computed, all_devices)) = std::thread::scope(|scope| {
        let seek_rows = scope.spawn(|| seeks(records, &devs));
        for (dev, v) in requests.finish() {
            sets.insert((dev, REQUEST_D2C), v);
        }
        let computed = compute(&mut sets, &shown);
        let all = all_devices(&sets, &computed, &devs, btt_compat);
        (seek_rows.join().expect("seek thread"), (computed, all))
    });
    let d2c = if btt_compat { Phase::D2C as u8 } else { REQUEST_D2C };
    let per_dev = |d2c: u8| -> Vec<Value> {
        let mut rows = Vec::new();
        for &d in &devs {
            let mut named: Vec<(&str, u8)> = PHASES.iter().map(|&p| (p.name(), if p == Phase::D2C { d2c } else { p as u8 })).collect();
            named.sort_by_key(|x| x.0);
            rows.extend(named.into_iter().filter_map(|(name, key)| computed.get(&(d, key)).map(|c| stats_row(&dev_name(d), name, &c.0))));
        }
        rows
    };
    let mut histogram = Vec::new();
    for (name, key) in [("D2C", d2c), ("Q2C", Phase::Q2C as u8)] {
        let mut counts = [0u64; BUCKETS_MS.len() + 1];
        for d in &devs {
            for (i, n) in computed.get(&(*d, key)).and_then(|c| c.1.as_ref()).into_iter().flatten().enumerate() {
                counts[i] += n;
            }
        }
        for (i, &n) in counts.iter().enumerate().filter(|x| *x.1 > 0) {
            histogram.push(json!({"phase": name, "le_ms": BUCKETS_MS.get(i), "n": n}));
        }
    }
    Ok(json!({
        "devices": devs.iter().map(|&d| dev_name(d)).collect::<Vec<_>>(),
        "per_dev": per_dev(d2c),
        "all_phases": all_devices,
        "per_dev_btt": per_dev(Phase::D2C as u8),
        "roles": roles(records, &keep),
        "seeks": seek_rows,
        "merges": merges(records, &facts, &keep),
        "depth": facts.iter().filter(|f| keep(f.device)).map(|f| json!({
            "dev": dev_name(f.device), "first_ts": f.first_ts as i64, "last_ts": f.last_ts as i64,
            "max_depth_read": f.max_depth[0], "max_depth_write": f.max_depth[1],
            "btt_queued": f.btt_q, "btt_issued": f.btt_d, "avg_active_at_q": f.avg_active_at_q,
        })).collect::<Vec<_>>(),
        "throughput": throughput(records, &facts, &keep),
        "histogram": histogram,
        "processes": processes(records, tasks, &keep),
    }))
}

/// Statistics of every value set of the devices shown (each set read once,
/// reordered in place), with bucket counts for D2C and Q2C.
fn compute(sets: &mut FxHashMap<(u32, u8), Vec<u64>>, shown: &FxHashSet<u32>) -> Computed {
    let mut out = Computed::default();
    for (&(dev, key), v) in sets.iter_mut().filter(|(k, _)| shown.contains(&k.0)) {
        let histogram = [Phase::D2C as u8, Phase::Q2C as u8, REQUEST_D2C].contains(&key).then(|| {
            let mut counts = vec![0u64; BUCKETS_MS.len() + 1];
            for &ns in v.iter() {
                counts[bucket(ns).unwrap_or(BUCKETS_MS.len())] += 1;
            }
            counts
        });
        if let Some(st) = phase_stats(v) {
            out.insert((dev, key), (st, histogram));
        }
    }
    out
}

/// `_PHASE_STATS` with key 'ALL': every device's values together, Q2Q_all for Q2Q.
fn all_devices(sets: &FxHashMap<(u32, u8), Vec<u64>>, computed: &Computed, devs: &[u32], btt_compat: bool) -> Vec<Value> {
    let mut named: Vec<(&str, u8)> = PHASES
        .iter()
        .map(|&p| match p {
            Phase::Q2Q => (Phase::Q2QAll.name(), Phase::Q2QAll as u8),
            Phase::D2C if !btt_compat => (p.name(), REQUEST_D2C),
            _ => (p.name(), p as u8),
        })
        .collect();
    named.sort_by_key(|x| x.0);
    let mut rows = Vec::new();
    for (name, key) in named {
        if let [d] = devs {
            // One device: its own figures.
            rows.extend(computed.get(&(*d, key)).map(|c| stats_row("ALL", name, &c.0)));
        } else {
            let mut v: Vec<u64> = devs.iter().flat_map(|d| sets.get(&(*d, key)).into_iter().flatten().copied()).collect();
            rows.extend(phase_stats(&mut v).map(|st| stats_row("ALL", name, &st)));
        }
    }
    rows
}

fn stats_row(dev: &str, phase: &str, st: &PhaseStats) -> Value {
    json!({
        "dev": dev, "phase": phase, "n": st.n, "min_ns": st.min, "avg_ns": st.avg,
        "p50_ns": st.q[0], "p90_ns": st.q[1], "p99_ns": st.q[2], "max_ns": st.max, "total_ns": big(st.total),
    })
}

/// A sum as a JSON integer (u128 sums of u64 values; serde_json writes u64).
fn big(v: u128) -> Value {
    match u64::try_from(v) {
        Ok(x) => json!(x),
        // Past u64 only for sums of billions of hour-long phases; as a float then.
        Err(_) => json!(v as f64),
    }
}

/// `blk_device_roles`: how each device was read (disk or remapper).
fn roles(records: &FxHashMap<u32, Dev>, keep: &dyn Fn(u32) -> bool) -> Vec<Value> {
    let mut devs: Vec<(&u32, &Dev)> = records.iter().filter(|(&d, v)| v.counted && keep(d)).collect();
    devs.sort_by_cached_key(|x| dev_name(*x.0));
    devs.into_iter()
        .map(|(&d, v)| {
            let remapper = v.remapped_away > 0 || (v.queued > 0 && v.issued == 0);
            let role = if v.remapped_away > 0 {
                format!("remapper: {} bios remapped to {} (A records)", v.remapped_away, v.remapped_to.as_deref().unwrap_or(""))
            } else if v.queued > 0 && v.issued == 0 {
                format!("remapper: queues bios ({} Q) but issues no request (no D)", v.queued)
            } else {
                let splits = if v.splits > 0 { format!(", {} splits (X)", v.splits) } else { String::new() };
                format!("disk: issues its own requests ({} D){splits}", v.issued)
            };
            json!({"dev": dev_name(d), "role": role, "remapper": remapper, "btt_remapper": is_remapper(d)})
        })
        .collect()
}

/// `_SEEKS`: D2D and Q2Q seek distances per device.
fn seeks(records: &mut FxHashMap<u32, Dev>, devs: &[u32]) -> Vec<Value> {
    let mut rows = Vec::new();
    for d in devs {
        let Some(dev) = records.get_mut(d) else { continue };
        for (i, action) in ["D", "Q"].iter().enumerate() {
            if let Some(st) = seek_stats(&mut dev.seeks[i].dists) {
                rows.push(json!({
                    "action": action, "dev": dev_name(*d), "nseeks": st.n, "mean": st.mean,
                    "median": big(st.median), "mode": big(st.mode), "mode_count": st.mode_count,
                }));
            }
        }
    }
    rows
}

/// `_merges`: btt's #Q / #D and the sizes of what completed.
fn merges(records: &FxHashMap<u32, Dev>, facts: &[DeviceRow], keep: &dyn Fn(u32) -> bool) -> Vec<Value> {
    let mut rows = Vec::new();
    for f in facts.iter().filter(|f| keep(f.device) && f.btt_d > 0) {
        let Some((lo, hi, total)) = records.get(&f.device).and_then(|d| d.c_sectors) else { continue };
        let q = f.btt_q.max(f.btt_d);
        rows.push(json!({
            "dev": dev_name(f.device), "q": q, "d": f.btt_d, "ratio": q as f64 / f.btt_d as f64,
            "blk_min": lo, "blk_avg": total as f64 / f.btt_d as f64, "blk_max": hi, "blk_total": big(total),
        }));
    }
    rows
}

/// `_throughput`: completions per device and kind over the device's span.
fn throughput(records: &FxHashMap<u32, Dev>, facts: &[DeviceRow], keep: &dyn Fn(u32) -> bool) -> Vec<Value> {
    let mut rows = Vec::new();
    for f in facts.iter().filter(|f| keep(f.device)) {
        let Some(dev) = records.get(&f.device) else { continue };
        let span = ((f.last_ts as i64).wrapping_sub(f.first_ts as i64)).max(1) as f64;
        for (kind, done) in DIRECTIONS.iter().zip(dev.done.iter()).filter(|x| x.1.n > 0) {
            rows.push(json!({
                "dev": dev_name(f.device), "direction": kind, "completions": done.n, "bytes": big(done.bytes),
                "iops": done.n as f64 * 1e9 / span, "bytes_per_s": done.bytes as f64 * 1e9 / span,
            }));
        }
    }
    rows
}

/// The per-process table: btt's Q2C and D2C by the task that queued each bio
/// (its name from the process notes, else `pid N`), devices and tasks of one
/// name together.
fn processes(records: &FxHashMap<u32, Dev>, tasks: &FxHashMap<u32, String>, keep: &dyn Fn(u32) -> bool) -> Vec<Value> {
    let mut by_name: BTreeMap<(String, &str), Agg> = BTreeMap::new();
    let by_task = records.iter().filter(|x| keep(*x.0)).flat_map(|(_, d)| d.tasks.iter());
    for (&pid, aggs) in by_task {
        let name = tasks.get(&pid).cloned().unwrap_or_else(|| format!("pid {}", pid as i32));
        for (phase, a) in ["D2C", "Q2C"].iter().zip(aggs.iter()).filter(|x| x.1.n > 0) {
            by_name.entry((name.clone(), phase)).or_default().merge(a);
        }
    }
    by_name
        .into_iter()
        .map(|((process, phase), a)| json!({"process": process, "phase": phase, "n": a.n, "avg_ns": average(a.sum, a.n), "max_ns": a.max}))
        .collect()
}
