//! `blk_events` as stored: one row per record, numbers as the record holds
//! them, and `blk_details` for the few records with more. The store's
//! `blk_events` view joins them and derives `dev`, `major`, `minor`, the
//! action letter, `rwbs`, `nr_sectors`, `write`, `pc` and `comm` (from
//! `blk_tasks`) in SQL; the PDU's meaning is decoded here into `arg`,
//! `remap_from`, `remap_to` and `message`.

use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use std::sync::Arc;

use super::{f, schema};
use crate::blktrace::action::{self, ta, tn};
use crate::blktrace::record::Record;
use crate::columns::{push_text, Ints};

pub fn events_schema() -> SchemaRef {
    use DataType::*;
    schema(vec![
        f("id", UInt64, false),
        f("ts", Int64, false),
        f("seq", UInt32, false),
        f("cpu", Int32, false),
        f("pid", Int32, true),
        f("device", UInt32, false),
        f("action", UInt32, false),
        f("sector", UInt64, true),
        f("bytes", UInt32, true),
        f("error", UInt16, false),
    ])
}

/// What few records have, kept apart so the big table stays lean: one row
/// per record that has any of it (splits, unplugs, remaps, messages,
/// payloads, cgroup ids, and what a blkparse text line printed).
pub fn details_schema() -> SchemaRef {
    use DataType::*;
    schema(vec![
        f("id", UInt64, false),
        // X: split sector, U/UT: unplug depth, A: source sector.
        f("arg", UInt64, true),
        f("remap_from", UInt32, true),
        f("remap_to", UInt32, true),
        f("message", Utf8, true),
        f("pdu", Binary, true),
        f("cgroup", UInt64, true),
        f("printed_comm", Utf8, true),
        f("printed_rwbs", Utf8, true),
    ])
}

/// What a blkparse text line showed of its record. Values the line does not
/// print are stored NULL rather than guessed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Printed {
    pub comm: Option<String>,
    /// As printed: blkparse spells R only when the record has bytes, which a
    /// split line does not show.
    pub rwbs: String,
    /// Message lines print pid 0 whatever the record holds.
    pub pid: bool,
    pub sector: bool,
    pub size: bool,
}

/// Builds `blk_events` and `blk_details` batches.
pub struct EventBuilder {
    cols: EventColumns,
    details: Details,
    rows: usize,
    /// Rows a batch holds: every batch's columns are reserved at this size
    /// up front, so they never grow by copying (and faulting in) themselves.
    capacity: usize,
}

/// The `blk_events` columns of one batch.
struct EventColumns {
    id: Ints<u64>,
    ts: Ints<u64>,
    seq: Ints<u32>,
    cpu: Ints<u32>,
    pid: Ints<u32>,
    device: Ints<u32>,
    action: Ints<u32>,
    sector: Ints<u64>,
    bytes: Ints<u32>,
    error: Ints<u16>,
}

impl EventColumns {
    fn new(cap: usize) -> Self {
        use DataType::*;
        EventColumns {
            id: Ints::new(UInt64, cap),
            ts: Ints::new(Int64, cap),
            seq: Ints::new(UInt32, cap),
            cpu: Ints::new(Int32, cap),
            pid: Ints::new(Int32, cap),
            device: Ints::new(UInt32, cap),
            action: Ints::new(UInt32, cap),
            sector: Ints::new(UInt64, cap),
            bytes: Ints::new(UInt32, cap),
            error: Ints::new(UInt16, cap),
        }
    }

    fn finish(mut self) -> RecordBatch {
        let cols: Vec<ArrayRef> = vec![
            self.id.finish(),
            self.ts.finish(),
            self.seq.finish(),
            self.cpu.finish(),
            self.pid.finish(),
            self.device.finish(),
            self.action.finish(),
            self.sector.finish(),
            self.bytes.finish(),
            self.error.finish(),
        ];
        RecordBatch::try_new(events_schema(), cols).expect("blk_events batch")
    }
}

struct Details {
    id: Ints<u64>,
    arg: Ints<u64>,
    remap_from: Ints<u32>,
    remap_to: Ints<u32>,
    message: StringBuilder,
    pdu: BinaryBuilder,
    cgroup: Ints<u64>,
    printed_comm: StringBuilder,
    printed_rwbs: StringBuilder,
}

impl Details {
    fn new() -> Self {
        use DataType::*;
        Details {
            id: Ints::new(UInt64, 0),
            arg: Ints::new(UInt64, 0),
            remap_from: Ints::new(UInt32, 0),
            remap_to: Ints::new(UInt32, 0),
            message: StringBuilder::new(),
            pdu: BinaryBuilder::new(),
            cgroup: Ints::new(UInt64, 0),
            printed_comm: StringBuilder::new(),
            printed_rwbs: StringBuilder::new(),
        }
    }

    fn push(&mut self, id: u64, r: &Record, printed: Option<&Printed>) {
        let h = &r.h;
        let notify = action::is_notify(h.action);
        let code = action::code(h.action);
        let (arg, remap) = match (notify, code) {
            (false, ta::REMAP) => match r.remap() {
                Some((from, to, sector)) => (Some(sector), Some((from, to))),
                None => (None, None),
            },
            (false, ta::SPLIT | ta::UNPLUG_IO | ta::UNPLUG_TIMER) => (r.pdu_u64(), None),
            _ => (None, None),
        };
        let message = notify && code == tn::MESSAGE;
        if r.pdu.is_empty() && r.cgroup.is_none() && printed.is_none() && arg.is_none() && !message {
            return;
        }
        self.id.push(id);
        opt(&mut self.arg, arg);
        opt(&mut self.remap_from, remap.map(|x| x.0));
        opt(&mut self.remap_to, remap.map(|x| x.1));
        if message {
            let end = memchr::memchr(0, &r.pdu).unwrap_or(r.pdu.len());
            push_text(&mut self.message, &r.pdu[..end]);
        } else {
            self.message.append_null();
        }
        if r.pdu.is_empty() {
            self.pdu.append_null();
        } else {
            self.pdu.append_value(&r.pdu);
        }
        opt(&mut self.cgroup, r.cgroup);
        match printed.and_then(|p| p.comm.as_deref()) {
            Some(c) => self.printed_comm.append_value(c),
            None => self.printed_comm.append_null(),
        }
        // Only where the view's RWBS (from the action bits and the size)
        // would differ from what was printed.
        match printed {
            Some(p) if p.rwbs != action::rwbs(h.action, if p.size { h.bytes } else { 0 }) => self.printed_rwbs.append_value(&p.rwbs),
            _ => self.printed_rwbs.append_null(),
        }
    }

    fn finish(&mut self) -> Option<RecordBatch> {
        if self.id.is_empty() {
            return None;
        }
        let cols: Vec<ArrayRef> = vec![
            self.id.finish(),
            self.arg.finish(),
            self.remap_from.finish(),
            self.remap_to.finish(),
            Arc::new(self.message.finish()),
            Arc::new(self.pdu.finish()),
            self.cgroup.finish(),
            Arc::new(self.printed_comm.finish()),
            Arc::new(self.printed_rwbs.finish()),
        ];
        Some(RecordBatch::try_new(details_schema(), cols).expect("blk_details batch"))
    }
}

impl EventBuilder {
    pub fn new(capacity: usize) -> Self {
        EventBuilder { cols: EventColumns::new(capacity), details: Details::new(), rows: 0, capacity }
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    #[inline]
    pub fn push(&mut self, id: u64, r: &Record, printed: Option<&Printed>) {
        let h = &r.h;
        let shown = |f: fn(&Printed) -> bool| printed.map_or(true, f);
        let c = &mut self.cols;
        c.id.push(id);
        c.ts.push(h.time);
        c.seq.push(h.sequence);
        c.cpu.push(h.cpu);
        opt(&mut c.pid, shown(|p| p.pid).then_some(h.pid));
        c.device.push(h.device);
        c.action.push(h.action);
        opt(&mut c.sector, shown(|p| p.sector).then_some(h.sector));
        opt(&mut c.bytes, shown(|p| p.size).then_some(h.bytes));
        c.error.push(h.error);
        self.details.push(id, r, printed);
        self.rows += 1;
    }

    /// The `blk_events` batch, and the `blk_details` one when any record
    /// had details.
    pub fn finish(&mut self) -> (RecordBatch, Option<RecordBatch>) {
        let cols = std::mem::replace(&mut self.cols, EventColumns::new(self.capacity));
        self.rows = 0;
        (cols.finish(), self.details.finish())
    }
}

#[inline(always)]
pub(super) fn opt<T: arrow_buffer::ArrowNativeType>(c: &mut Ints<T>, v: Option<T>) {
    match v {
        Some(v) => c.push(v),
        None => c.push_null(),
    }
}
