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

pub fn requests_batch(reqs: &[Request]) -> RecordBatch {
    use DataType::*;
    let n = reqs.len();
    let (mut id, mut device, mut pid, mut action) = (Ints::new(UInt64, n), Ints::new(UInt32, n), Ints::new(Int32, n), Ints::new(UInt32, n));
    let (mut sector, mut bytes) = (Ints::<u64>::new(UInt64, n), Ints::<u32>::new(UInt32, n));
    let mut times: Vec<Ints<u64>> = TIMES.iter().map(|_| Ints::new(Int64, n)).collect();
    let (mut d_sector, mut d_nr, mut c_sector) = (Ints::new(UInt64, n), Ints::new(UInt32, n), Ints::new(UInt64, n));
    let mut d_matches = Ints::new(UInt32, n);
    let mut replaced = BooleanBuilder::with_capacity(n);
    for r in reqs {
        id.push(r.q_id);
        device.push(r.device);
        pid.push(r.pid);
        action.push(r.action);
        sector.push(r.sector);
        bytes.push(r.bytes);
        for (c, v) in times.iter_mut().zip([Some(r.q_time), r.g_time, r.s_time, r.i_time, r.m_time, r.d_time, r.c_time]) {
            opt(c, v);
        }
        opt(&mut d_sector, r.d_sector);
        opt(&mut d_nr, r.d_nr_sectors);
        opt(&mut c_sector, r.c_sector);
        d_matches.push(r.d_matches);
        replaced.append_value(r.replaced);
    }
    let mut cols: Vec<ArrayRef> = vec![id.finish(), device.finish(), pid.finish(), action.finish(), sector.finish(), bytes.finish()];
    cols.extend(times.iter_mut().map(|c| c.finish()));
    cols.extend([d_sector.finish(), d_nr.finish(), c_sector.finish()]);
    cols.push(d_matches.finish());
    cols.push(Arc::new(replaced.finish()));
    RecordBatch::try_new(requests_schema(), cols).expect("io_requests batch")
}

pub fn phases_schema() -> SchemaRef {
    use DataType::*;
    schema(vec![f("id", UInt64, false), f("q_id", UInt64, false), f("phase", UInt8, false), f("ns", Int64, false)])
}

pub fn phases_batch(samples: &[Sample]) -> RecordBatch {
    use DataType::*;
    let n = samples.len();
    let (mut id, mut q_id, mut phase, mut ns) = (Ints::new(UInt64, n), Ints::new(UInt64, n), Ints::new(UInt8, n), Ints::new(Int64, n));
    for s in samples {
        id.push(s.event_id);
        q_id.push(s.q_id);
        phase.push(s.phase as u8);
        ns.push(s.ns);
    }
    RecordBatch::try_new(phases_schema(), vec![id.finish(), q_id.finish(), phase.finish(), ns.finish()]).expect("io_phases batch")
}
