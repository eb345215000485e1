//! `io_requests` and `io_phases` as stored. The store's views add device and
//! task names, RWBS and the remapper flag; `io_phases` takes its device and
//! pid from its request (`q_id`), and the phase columns of `io_requests`
//! (the last value of each phase) come from `io_phases`: stored once.

use arrow_array::builder::BooleanBuilder;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use std::sync::Arc;

use super::events::opt;
use super::{f, schema};
use crate::blktrace::btt::{Request, Sample};
use crate::columns::Ints;

/// Times and phases of a request, in column order.
const TIMES: [&str; 7] = ["q_ts", "g_ts", "s_ts", "i_ts", "m_ts", "d_ts", "c_ts"];

pub fn requests_schema() -> SchemaRef {
    use DataType::*;
    let mut fields = vec![
        f("id", UInt64, false),
        f("device", UInt32, false),
        f("pid", Int32, false),
        f("action", UInt32, false),
        f("sector", UInt64, false),
        f("bytes", UInt32, false),
    ];
    fields.extend(TIMES.iter().map(|n| f(n, Int64, *n != "q_ts")));
    fields.push(f("d_sector", UInt64, true));
    fields.push(f("d_nr_sectors", UInt32, true));
    fields.push(f("c_sector", UInt64, true));
    fields.push(f("d_matches", UInt32, false));
    fields.push(f("replaced", Boolean, false));
    schema(fields)
}

/// Builds `io_requests` batches one finished request at a time (requests
/// go straight into the columns: the tracker's structs are never queued).
pub struct RequestBuilder {
    cols: RequestColumns,
    capacity: usize,
}

struct RequestColumns {
    id: Ints<u64>,
    device: Ints<u32>,
    pid: Ints<u32>,
    action: Ints<u32>,
    sector: Ints<u64>,
    bytes: Ints<u32>,
    times: [Ints<u64>; TIMES.len()],
    d_sector: Ints<u64>,
    d_nr: Ints<u32>,
    c_sector: Ints<u64>,
    d_matches: Ints<u32>,
    replaced: BooleanBuilder,
}

impl RequestColumns {
    fn new(n: usize) -> Self {
        use DataType::*;
        RequestColumns {
            id: Ints::new(UInt64, n),
            device: Ints::new(UInt32, n),
            pid: Ints::new(Int32, n),
            action: Ints::new(UInt32, n),
            sector: Ints::new(UInt64, n),
            bytes: Ints::new(UInt32, n),
            times: std::array::from_fn(|_| Ints::new(Int64, n)),
            d_sector: Ints::new(UInt64, n),
            d_nr: Ints::new(UInt32, n),
            c_sector: Ints::new(UInt64, n),
            d_matches: Ints::new(UInt32, n),
            replaced: BooleanBuilder::with_capacity(n),
        }
    }

    fn finish(mut self) -> RecordBatch {
        let mut cols: Vec<ArrayRef> =
            vec![self.id.finish(), self.device.finish(), self.pid.finish(), self.action.finish(), self.sector.finish(), self.bytes.finish()];
        cols.extend(self.times.iter_mut().map(|c| c.finish()));
        cols.extend([self.d_sector.finish(), self.d_nr.finish(), self.c_sector.finish()]);
        cols.push(self.d_matches.finish());
        cols.push(Arc::new(self.replaced.finish()));
        RecordBatch::try_new(requests_schema(), cols).expect("io_requests batch")
    }
}

impl RequestBuilder {
    /// Batches of up to `capacity` rows, reserved up front.
    pub fn new(capacity: usize) -> Self {
        RequestBuilder { cols: RequestColumns::new(capacity), capacity }
    }

    pub fn rows(&self) -> usize {
        self.cols.id.len()
    }

    pub fn push(&mut self, r: &Request) {
        let c = &mut self.cols;
        c.id.push(r.q_id);
        c.device.push(r.device);
        c.pid.push(r.pid);
        c.action.push(r.action);
        c.sector.push(r.sector);
        c.bytes.push(r.bytes);
        for (col, v) in c.times.iter_mut().zip([Some(r.q_time), r.g_time, r.s_time, r.i_time, r.m_time, r.d_time, r.c_time]) {
            opt(col, v);
        }
        opt(&mut c.d_sector, r.d_sector);
        opt(&mut c.d_nr, r.d_nr_sectors);
        opt(&mut c.c_sector, r.c_sector);
        c.d_matches.push(r.d_matches);
        c.replaced.append_value(r.replaced);
    }

    pub fn finish(&mut self) -> RecordBatch {
        std::mem::replace(&mut self.cols, RequestColumns::new(self.capacity)).finish()
    }
}

pub fn phases_schema() -> SchemaRef {
    use DataType::*;
    schema(vec![f("id", UInt64, false), f("q_id", UInt64, false), f("phase", UInt8, false), f("ns", Int64, false)])
}

/// Builds `io_phases` batches; the tracker's samples are moved in while
/// they are still in cache (every few thousand records).
pub struct PhaseBuilder {
    cols: PhaseColumns,
    capacity: usize,
}

struct PhaseColumns {
    id: Ints<u64>,
    q_id: Ints<u64>,
    phase: Ints<u8>,
    ns: Ints<u64>,
}

impl PhaseColumns {
    fn new(n: usize) -> Self {
        use DataType::*;
        PhaseColumns { id: Ints::new(UInt64, n), q_id: Ints::new(UInt64, n), phase: Ints::new(UInt8, n), ns: Ints::new(Int64, n) }
    }
}

impl PhaseBuilder {
    pub fn new(capacity: usize) -> Self {
        PhaseBuilder { cols: PhaseColumns::new(capacity), capacity }
    }

    pub fn rows(&self) -> usize {
        self.cols.id.len()
    }

    pub fn extend(&mut self, samples: &[Sample]) {
        let c = &mut self.cols;
        for s in samples {
            c.id.push(s.event_id);
            c.q_id.push(s.q_id);
            c.phase.push(s.phase as u8);
            c.ns.push(s.ns);
        }
    }

    pub fn finish(&mut self) -> RecordBatch {
        let mut c = std::mem::replace(&mut self.cols, PhaseColumns::new(self.capacity));
        RecordBatch::try_new(phases_schema(), vec![c.id.finish(), c.q_id.finish(), c.phase.finish(), c.ns.finish()]).expect("io_phases batch")
    }
}
