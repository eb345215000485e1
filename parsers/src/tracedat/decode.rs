//! Decoding event payloads into per-event-type Arrow record batches, using
//! the field layout from the event's format description.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::builder::BinaryBuilder;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::fields::FieldCol;
use crate::bytes::Endian;
use crate::columns::{int_type, IntCol, IntListCol, Ints};
use crate::format::{EventFormat, FieldDef, FieldKind};
use crate::tables;

/// What a finished table describes, for the store and the user.
#[derive(Debug, Clone)]
pub struct TableSpec {
    pub name: String,
    pub system: String,
    pub event: String,
    pub event_id: u32,
    pub schema: SchemaRef,
    pub print_fmt: String,
    /// (name, C type, offset, size, signed) of every field, common ones included.
    pub fields: Vec<(String, String, u32, u32, bool)>,
    /// Name of each common column (see `tables::COMMON`) in this table,
    /// after giving way to event fields of the same name.
    pub common_names: Vec<String>,
    /// The common columns the batches carry; the others (`comm`, and `tgid`
    /// unless the format has `common_tgid`) come from the `tasks` table.
    pub physical_common: Vec<String>,
}

pub fn arrow_type(kind: &FieldKind) -> DataType {
    match kind {
        FieldKind::Int { size, signed } => int_type(*size, *signed),
        FieldKind::Bool => DataType::Boolean,
        FieldKind::Str { .. } | FieldKind::DynStr { .. } | FieldKind::TailStr => DataType::Utf8,
        FieldKind::Array { elem, .. } | FieldKind::DynArray { elem, .. } | FieldKind::TailArray { elem } => {
            IntListCol::data_type(elem.size, elem.signed)
        }
        FieldKind::Bytes { .. } => DataType::Binary,
    }
}

/// Where a common header value sits in every payload of one event type.
#[derive(Clone, Copy)]
struct Slot {
    offset: usize,
    size: usize,
}

impl Slot {
    fn of(f: Option<&FieldDef>) -> Option<Slot> {
        f.map(|f| Slot { offset: f.offset as usize, size: f.size as usize })
    }

    #[inline(always)]
    fn read(self, p: &[u8], e: Endian) -> Option<u64> {
        if matches!(self.size, 1 | 2 | 4 | 8) && self.offset + self.size <= p.len() {
            Some(e.uint(&p[self.offset..], self.size))
        } else {
            None
        }
    }
}

/// Common header fields we read (`common_type` selects the table).
const HEADER_FIELDS: &[&str] = &["common_type", "common_pid", "common_flags", "common_preempt_count", "common_tgid"];

struct EventTable {
    id: Ints<u64>,
    ts: Ints<i64>,
    cpu: Ints<i32>,
    pid: Ints<i32>,
    flags: Ints<u8>,
    preempt: Ints<u8>,
    /// Only when the format has `common_tgid` (some vendor kernels).
    tgid: Option<Ints<i32>>,
    pid_slot: Option<Slot>,
    flags_slot: Option<Slot>,
    preempt_slot: Option<Slot>,
    tgid_slot: Option<Slot>,
    /// The usual header layout (flags at 2, preempt count at 3, pid at 4):
    /// read it directly instead of through the slots.
    std_header: bool,
    /// Extra common fields (first) and event fields, each with its column.
    fields: Vec<FieldCol>,
    rows: usize,
    bytes: usize,
}

impl EventTable {
    fn new(f: &EventFormat, fields: &[FieldDef], cap: usize) -> Self {
        let slot_layout = |n: &str| f.field(n).map(|x| (x.offset, x.size));
        EventTable {
            id: Ints::new(DataType::UInt64, cap),
            ts: Ints::new(DataType::Int64, cap),
            cpu: Ints::new(DataType::Int32, cap),
            pid: Ints::new(DataType::Int32, cap),
            flags: Ints::new(DataType::UInt8, cap),
            preempt: Ints::new(DataType::UInt8, cap),
            tgid: f.field("common_tgid").map(|_| Ints::new(DataType::Int32, cap)),
            pid_slot: Slot::of(f.field("common_pid")),
            flags_slot: Slot::of(f.field("common_flags")),
            preempt_slot: Slot::of(f.field("common_preempt_count")),
            tgid_slot: Slot::of(f.field("common_tgid")),
            std_header: (slot_layout("common_flags"), slot_layout("common_preempt_count"), slot_layout("common_pid"))
                == (Some((2, 1)), Some((3, 1)), Some((4, 4))),
            fields: fields.iter().map(|x| FieldCol::new(x, cap)).collect(),
            rows: 0,
            bytes: 0,
        }
    }

    /// Append one event; returns how many fields did not fit the payload.
    #[inline]
    fn push(&mut self, c: Common, p: &[u8], e: Endian) -> u64 {
        self.id.push(c.id);
        self.ts.push(c.ts);
        self.cpu.push(c.cpu);
        if self.std_header && p.len() >= 8 {
            self.flags.push(p[2]);
            self.preempt.push(p[3]);
            self.pid.push(e.u32([p[4], p[5], p[6], p[7]]) as i32);
        } else {
            push_slot(&mut self.pid, self.pid_slot, p, e, |v| v as u32 as i32);
            push_slot(&mut self.flags, self.flags_slot, p, e, |v| v as u8);
            push_slot(&mut self.preempt, self.preempt_slot, p, e, |v| v as u8);
        }
        if let Some(tg) = &mut self.tgid {
            push_slot(tg, self.tgid_slot, p, e, |v| v as u32 as i32);
        }
        let mut missing = 0;
        for f in &mut self.fields {
            missing += !f.decode(p, e) as u64;
        }
        self.rows += 1;
        missing
    }

    fn finish(&mut self, schema: &SchemaRef) -> RecordBatch {
        let mut cols: Vec<ArrayRef> =
            vec![self.id.finish(), self.ts.finish(), self.cpu.finish(), self.pid.finish(), self.flags.finish(), self.preempt.finish()];
        if let Some(tg) = &mut self.tgid {
            cols.push(tg.finish());
        }
        cols.extend(self.fields.iter_mut().map(FieldCol::finish));
        self.rows = 0;
        self.bytes = 0;
        RecordBatch::try_new(schema.clone(), cols).expect("event batch matches its schema")
    }
}

#[inline(always)]
fn push_slot<T: arrow_buffer::ArrowNativeType>(col: &mut Ints<T>, slot: Option<Slot>, p: &[u8], e: Endian, conv: impl Fn(u64) -> T) {
    match slot.and_then(|s| s.read(p, e)) {
        Some(v) => col.push(conv(v)),
        None => col.push_null(),
    }
}

/// Counters of decoding problems.
#[derive(Debug, Default, Clone)]
pub struct DecodeStats {
    /// Field values that did not fit in their event's payload (stored NULL).
    pub truncated_fields: u64,
    /// Events whose type id has no format in the file, by id.
    pub unknown_ids: HashMap<u32, u64>,
}

impl DecodeStats {
    /// Add another decoder's counts (one per decoding thread).
    pub fn add(&mut self, other: &DecodeStats) {
        self.truncated_fields += other.truncated_fields;
        for (id, n) in &other.unknown_ids {
            *self.unknown_ids.entry(*id).or_default() += n;
        }
    }
}

/// Where the merged events go: a [`Decoder`] on the merging thread, or
/// [`super::parallel::ParallelDecoder`] sharing the decoding out to threads.
pub trait EventSink {
    fn push(&mut self, c: Common, payload: &[u8], out: &mut dyn FnMut(&str, RecordBatch));
    /// Flush everything still buffered.
    fn finish(&mut self, out: &mut dyn FnMut(&str, RecordBatch));
    fn decode_stats(&self) -> &DecodeStats;
}

impl EventSink for Decoder {
    #[inline]
    fn push(&mut self, c: Common, payload: &[u8], out: &mut dyn FnMut(&str, RecordBatch)) {
        Decoder::push(self, c, payload, out)
    }

    fn finish(&mut self, out: &mut dyn FnMut(&str, RecordBatch)) {
        Decoder::finish(self, out)
    }

    fn decode_stats(&self) -> &DecodeStats {
        &self.stats
    }
}

/// Common-column values of one event.
#[derive(Debug, Clone, Copy)]
pub struct Common {
    pub id: u64,
    pub ts: i64,
    pub cpu: i32,
}

pub const UNKNOWN_TABLE: &str = "unknown_events";

/// Events of a type the file has no format for: kept raw, not dropped.
struct UnknownTable {
    id: IntCol,
    ts: IntCol,
    cpu: IntCol,
    type_id: IntCol,
    data: BinaryBuilder,
}

impl UnknownTable {
    fn new() -> Self {
        UnknownTable {
            id: IntCol::new(8, false, 16),
            ts: IntCol::new(8, true, 16),
            cpu: IntCol::new(4, true, 16),
            type_id: IntCol::new(4, false, 16),
            data: BinaryBuilder::new(),
        }
    }

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::UInt64, false),
            Field::new("ts", DataType::Int64, false),
            Field::new("cpu", DataType::Int32, false),
            Field::new("type_id", DataType::UInt32, false),
            Field::new("data", DataType::Binary, false),
        ]))
    }

    fn push(&mut self, c: Common, type_id: u32, payload: &[u8]) {
        self.id.push(c.id);
        self.ts.push(c.ts as u64);
        self.cpu.push(c.cpu as u32 as u64);
        self.type_id.push(type_id as u64);
        self.data.append_value(payload);
    }

    fn finish(&mut self) -> Option<RecordBatch> {
        if self.id.is_empty() {
            return None;
        }
        let cols: Vec<ArrayRef> =
            vec![self.id.finish(), self.ts.finish(), self.cpu.finish(), self.type_id.finish(), Arc::new(self.data.finish())];
        Some(RecordBatch::try_new(Self::schema(), cols).expect("unknown_events batch"))
    }
}

/// Turns event payloads into record batches, one builder per event type.
pub struct Decoder {
    endian: Endian,
    pub specs: Vec<TableSpec>,
    tables: Vec<EventTable>,
    /// Event type id → table index + 1 (0: no format). Ids are u16 in the
    /// ring buffer, so a flat table covers them all.
    by_id: Vec<u32>,
    batch_rows: usize,
    pending_bytes: usize,
    max_pending_bytes: usize,
    unknown: UnknownTable,
    pub stats: DecodeStats,
}

impl Decoder {
    pub fn new(formats: &[EventFormat], endian: Endian, batch_rows: usize, max_pending_bytes: usize) -> Self {
        let keys: Vec<(String, String)> = formats.iter().map(|f| (f.system.clone(), f.name.clone())).collect();
        let names = tables::table_names(&keys);
        // Builders are pre-sized for a batch, within a budget (64 MiB of
        // 8-byte values) over every column of every format: a file with
        // thousands of formats or fields gets small builders that grow
        // with the events really seen.
        let columns: usize = formats.iter().map(|f| f.fields.len() + 8).sum::<usize>().max(1);
        let cap = batch_rows.clamp(1, 16384).min(((64usize << 20) / 8 / columns).max(16));
        let mut specs = Vec::new();
        let mut tables_ = Vec::new();
        let mut by_id = vec![0u32; 65536];
        for (f, name) in formats.iter().zip(names) {
            // Extra common fields (common_lock_depth, ...) first, then the event's own.
            let fields: Vec<FieldDef> = f
                .fields
                .iter()
                .filter(|x| x.is_common() && !HEADER_FIELDS.contains(&x.name.as_str()))
                .chain(f.fields.iter().filter(|x| !x.is_common()))
                .cloned()
                .collect();
            let field_names: HashSet<String> = fields.iter().map(|x| x.name.clone()).collect();
            let common = tables::common_names(&field_names);
            // Roles (tables::COMMON): id, ts, cpu, pid, flags, preempt_count, then tgid if present.
            let mut physical: Vec<usize> = vec![0, 1, 2, 3, 6, 7];
            if f.field("common_tgid").is_some() {
                physical.push(4);
            }
            let types = [
                DataType::UInt64,
                DataType::Int64,
                DataType::Int32,
                DataType::Int32,
                DataType::Int32,
                DataType::Utf8,
                DataType::UInt8,
                DataType::UInt8,
            ];
            let mut schema_fields: Vec<Field> = physical.iter().map(|&r| Field::new(&common[r], types[r].clone(), r > 2)).collect();
            schema_fields.extend(fields.iter().map(|x| Field::new(&x.name, arrow_type(&x.kind), true)));
            let idx = tables_.len();
            // A later format with the same id wins, as in libtraceevent.
            if let Some(slot) = by_id.get_mut(f.id as usize) {
                *slot = idx as u32 + 1;
            }
            specs.push(TableSpec {
                name,
                system: f.system.clone(),
                event: f.name.clone(),
                event_id: f.id,
                schema: Arc::new(Schema::new(schema_fields)),
                print_fmt: f.print_fmt.clone(),
                fields: f.fields.iter().map(|x| (x.name.clone(), x.declared_type(), x.offset, x.size, x.signed)).collect(),
                physical_common: physical.iter().map(|&r| common[r].clone()).collect(),
                common_names: common,
            });
            tables_.push(EventTable::new(f, &fields, cap));
        }
        Decoder {
            endian,
            specs,
            tables: tables_,
            by_id,
            batch_rows: batch_rows.max(1),
            pending_bytes: 0,
            max_pending_bytes,
            unknown: UnknownTable::new(),
            stats: DecodeStats::default(),
        }
    }

    /// Schema of the `unknown_events` table.
    pub fn unknown_schema() -> SchemaRef {
        UnknownTable::schema()
    }

    /// Decode one event. Finished batches are handed to `out` as
    /// (table name, batch).
    #[inline]
    pub fn push(&mut self, c: Common, payload: &[u8], out: &mut dyn FnMut(&str, RecordBatch)) {
        let type_id = if payload.len() >= 2 { self.endian.u16([payload[0], payload[1]]) as usize } else { usize::MAX };
        let t = match self.by_id.get(type_id) {
            Some(&v) if v != 0 => v as usize - 1,
            _ => {
                *self.stats.unknown_ids.entry(type_id as u32).or_default() += 1;
                self.unknown.push(c, type_id as u32, payload);
                return;
            }
        };
        let tbl = &mut self.tables[t];
        self.stats.truncated_fields += tbl.push(c, payload, self.endian);
        let cost = payload.len() + 40;
        tbl.bytes += cost;
        self.pending_bytes += cost;
        if tbl.rows >= self.batch_rows {
            self.flush_table(t, out);
        } else if self.pending_bytes > self.max_pending_bytes {
            // Bound memory across many event types: flush the biggest.
            let biggest = (0..self.tables.len()).max_by_key(|&i| self.tables[i].bytes).unwrap_or(t);
            self.flush_table(biggest, out);
        }
    }

    fn flush_table(&mut self, t: usize, out: &mut dyn FnMut(&str, RecordBatch)) {
        let tbl = &mut self.tables[t];
        if tbl.rows == 0 {
            return;
        }
        self.pending_bytes -= tbl.bytes;
        let spec = &self.specs[t];
        out(&spec.name, tbl.finish(&spec.schema));
    }

    /// Flush everything still buffered.
    pub fn finish(&mut self, out: &mut dyn FnMut(&str, RecordBatch)) {
        for t in 0..self.tables.len() {
            self.flush_table(t, out);
        }
        if let Some(b) = self.unknown.finish() {
            out(UNKNOWN_TABLE, b);
        }
    }
}
