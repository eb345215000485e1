//! The small blktrace tables, stored as users see them.

use arrow_array::builder::StringBuilder;
use arrow_array::{ArrayRef, Float64Array, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use std::sync::Arc;

use super::{dev_name, f, schema};
use crate::blktrace::stream::TaskName;
use crate::columns::Ints;

pub fn lost_schema() -> SchemaRef {
    use DataType::*;
    schema(vec![
        f("dev", Utf8, false),
        f("cpu", Int32, false),
        f("ts", Int64, false),
        f("count", UInt64, false),
        f("next_event_id", UInt64, false),
    ])
}

/// Sequence gaps: (device, cpu, time, records missing, id of the next record).
#[derive(Default)]
pub struct LostBuilder {
    rows: Vec<(u32, u32, u64, u64, u64)>,
}

impl LostBuilder {
    pub fn push(&mut self, device: u32, cpu: u32, ts: u64, count: u64, next: u64) {
        self.rows.push((device, cpu, ts, count, next));
    }

    pub fn finish(&mut self) -> Option<RecordBatch> {
        use DataType::*;
        if self.rows.is_empty() {
            return None;
        }
        let n = self.rows.len();
        let mut dev = StringBuilder::new();
        let (mut cpu, mut ts, mut count, mut next) = (Ints::new(Int32, n), Ints::new(Int64, n), Ints::new(UInt64, n), Ints::new(UInt64, n));
        for &(d, c, t, k, x) in &self.rows {
            dev.append_value(dev_name(d));
            cpu.push(c);
            ts.push(t);
            count.push(k);
            next.push(x);
        }
        let cols: Vec<ArrayRef> = vec![Arc::new(dev.finish()), cpu.finish(), ts.finish(), count.finish(), next.finish()];
        Some(RecordBatch::try_new(lost_schema(), cols).expect("blk_lost_events batch"))
    }
}

pub fn tasks_schema() -> SchemaRef {
    use DataType::*;
    // known_from: the first record emitted after the name was read; earlier
    // records of the pid print no name (blkparse reads it at that point too).
    schema(vec![f("pid", Int32, false), f("comm", Utf8, false), f("known_from", UInt64, false)])
}

pub fn tasks_batch(names: &[(u32, &TaskName)]) -> RecordBatch {
    use DataType::*;
    let mut pid = Ints::new(Int32, names.len());
    let mut known = Ints::new(UInt64, names.len());
    let mut comm = StringBuilder::new();
    for (p, t) in names {
        pid.push(*p);
        comm.append_value(&t.name);
        known.push(t.known_from);
    }
    RecordBatch::try_new(tasks_schema(), vec![pid.finish(), Arc::new(comm.finish()), known.finish()]).expect("blk_tasks batch")
}

/// Per-device facts that need the whole ordered stream to compute.
#[derive(Clone)]
pub struct DeviceRow {
    pub device: u32,
    pub first_ts: u64,
    pub last_ts: u64,
    pub max_depth: [u32; 2],
    pub btt_q: u64,
    pub btt_d: u64,
    pub avg_active_at_q: f64,
}

pub fn devices_schema() -> SchemaRef {
    use DataType::*;
    schema(vec![
        f("dev", Utf8, false),
        f("first_ts", Int64, false),
        f("last_ts", Int64, false),
        f("max_depth_read", UInt32, false),
        f("max_depth_write", UInt32, false),
        f("btt_queued", UInt64, false),
        f("btt_issued", UInt64, false),
        f("avg_active_at_q", Float64, false),
    ])
}

pub fn devices_batch(rows: &[DeviceRow]) -> RecordBatch {
    use DataType::*;
    let n = rows.len();
    let mut dev = StringBuilder::new();
    let (mut first, mut last) = (Ints::new(Int64, n), Ints::new(Int64, n));
    let (mut mr, mut mw) = (Ints::new(UInt32, n), Ints::new(UInt32, n));
    let (mut q, mut d) = (Ints::new(UInt64, n), Ints::new(UInt64, n));
    for r in rows {
        dev.append_value(dev_name(r.device));
        first.push(r.first_ts);
        last.push(r.last_ts);
        mr.push(r.max_depth[0]);
        mw.push(r.max_depth[1]);
        q.push(r.btt_q);
        d.push(r.btt_d);
    }
    let active: ArrayRef = Arc::new(Float64Array::from(rows.iter().map(|r| r.avg_active_at_q).collect::<Vec<_>>()));
    let cols: Vec<ArrayRef> =
        vec![Arc::new(dev.finish()), first.finish(), last.finish(), mr.finish(), mw.finish(), q.finish(), d.finish(), active];
    RecordBatch::try_new(devices_schema(), cols).expect("blk_devices batch")
}
