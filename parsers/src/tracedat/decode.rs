//! Decoding event payloads into per-event-type Arrow record batches, using
//! the field layout from the event's format description.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, BooleanBuilder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::bytes::Endian;
use crate::columns::{int_type, push_text, Column, IntCol, IntListCol};
use crate::format::{Elem, EventFormat, FieldDef, FieldKind};
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

fn new_column(kind: &FieldKind, cap: usize) -> Column {
    match kind {
        FieldKind::Int { size, signed } => Column::Int(IntCol::new(*size, *signed, cap)),
        FieldKind::Bool => Column::Bool(BooleanBuilder::with_capacity(cap)),
        FieldKind::Str { .. } | FieldKind::DynStr { .. } | FieldKind::TailStr => {
            Column::Text(StringBuilder::with_capacity(cap, cap * 16))
        }
        FieldKind::Array { elem, .. } | FieldKind::DynArray { elem, .. } | FieldKind::TailArray { elem } => {
            Column::IntList(IntListCol::new(elem.size, elem.signed, cap))
        }
        FieldKind::Bytes { .. } => Column::Bytes(BinaryBuilder::with_capacity(cap, cap * 8)),
    }
}

/// Where the common header values sit in every payload of one event type.
#[derive(Clone, Copy)]
struct Slot {
    offset: usize,
    size: usize,
}

impl Slot {
    fn of(f: Option<&FieldDef>) -> Option<Slot> {
        f.map(|f| Slot { offset: f.offset as usize, size: f.size as usize })
    }
    #[inline]
    fn read(self, p: &[u8], e: Endian) -> Option<u64> {
        if matches!(self.size, 1 | 2 | 4 | 8) && self.offset + self.size <= p.len() {
            Some(e.uint(&p[self.offset..], self.size))
        } else {
            None
        }
    }
}

struct EventTable {
    spec: usize,
    id: IntCol,
    ts: IntCol,
    cpu: IntCol,
    pid: IntCol,
    flags: IntCol,
    preempt: IntCol,
    /// Only when the format has `common_tgid` (some vendor kernels).
    tgid: Option<IntCol>,
    pid_slot: Option<Slot>,
    tgid_slot: Option<Slot>,
    flags_slot: Option<Slot>,
    preempt_slot: Option<Slot>,
    /// Fields decoded into `columns`, in order (extra common fields first).
    fields: Vec<FieldDef>,
    columns: Vec<Column>,
    rows: usize,
    bytes: usize,
}

/// Counters of decoding problems.
#[derive(Debug, Default, Clone)]
pub struct DecodeStats {
    /// Field values that did not fit in their event's payload (stored NULL).
    pub truncated_fields: u64,
    /// Events whose type id has no format in the file, by id.
    pub unknown_ids: HashMap<u32, u64>,
}

/// Turns event payloads into record batches, one builder per event type.
pub struct Decoder {
    endian: Endian,
    pub specs: Vec<TableSpec>,
    tables: Vec<EventTable>,
    /// Event type id → index into `tables`.
    by_id: HashMap<u32, usize>,
    /// Fast path for ids below 64Ki (all real ones): id → table index + 1.
    by_id_small: Vec<u32>,
    batch_rows: usize,
    pending_bytes: usize,
    max_pending_bytes: usize,
    unknown: UnknownTable,
    pub stats: DecodeStats,
}

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

    fn finish(&mut self) -> Option<RecordBatch> {
        if self.id.is_empty() {
            return None;
        }
        let cols: Vec<ArrayRef> = vec![
            self.id.finish(),
            self.ts.finish(),
            self.cpu.finish(),
            self.type_id.finish(),
            Arc::new(self.data.finish()),
        ];
        Some(RecordBatch::try_new(Self::schema(), cols).expect("unknown_events batch"))
    }
}

pub const UNKNOWN_TABLE: &str = "unknown_events";

/// Common-column values of one event.
#[derive(Debug, Clone, Copy)]
pub struct Common {
    pub id: u64,
    pub ts: i64,
    pub cpu: i32,
}

impl Decoder {
    pub fn new(
        formats: &[EventFormat],
        endian: Endian,
        batch_rows: usize,
        max_pending_bytes: usize,
    ) -> Self {
        let keys: Vec<(String, String)> = formats.iter().map(|f| (f.system.clone(), f.name.clone())).collect();
        let names = tables::table_names(&keys);
        let mut specs = Vec::new();
        let mut tables_ = Vec::new();
        let mut by_id = HashMap::new();
        let mut by_id_small = Vec::new();
        let cap = batch_rows.min(4096);
        for (f, name) in formats.iter().zip(names) {
            let event_fields: Vec<FieldDef> = f.fields.iter().filter(|x| !x.is_common()).cloned().collect();
            let extra_common: Vec<FieldDef> = f
                .fields
                .iter()
                .filter(|x| x.is_common() && !matches!(x.name.as_str(), "common_type" | "common_pid" | "common_flags" | "common_preempt_count" | "common_tgid"))
                .cloned()
                .collect();
            let field_names: HashSet<String> = event_fields.iter().chain(extra_common.iter()).map(|x| x.name.clone()).collect();
            let common = tables::common_names(&field_names);
            let has_tgid = f.field("common_tgid").is_some();
            // id, ts, cpu, pid, flags, preempt_count (+ tgid): roles 0,1,2,3,6,7 (+4).
            let mut physical: Vec<usize> = vec![0, 1, 2, 3, 6, 7];
            if has_tgid {
                physical.push(4);
            }
            let types = [DataType::UInt64, DataType::Int64, DataType::Int32, DataType::Int32, DataType::Int32, DataType::Utf8, DataType::UInt8, DataType::UInt8];
            let mut schema_fields: Vec<Field> = physical
                .iter()
                .map(|&r| Field::new(&common[r], types[r].clone(), r > 2))
                .collect();
            let fields: Vec<FieldDef> = extra_common.into_iter().chain(event_fields).collect();
            for x in &fields {
                schema_fields.push(Field::new(&x.name, arrow_type(&x.kind), true));
            }
            let schema = Arc::new(Schema::new(schema_fields));
            let idx = tables_.len();
            if by_id.insert(f.id, idx).is_some() {
                // Two formats with one id: the later one wins, as in libtraceevent.
            }
            if f.id < 65536 {
                if by_id_small.len() <= f.id as usize {
                    by_id_small.resize(f.id as usize + 1, 0);
                }
                by_id_small[f.id as usize] = idx as u32 + 1;
            }
            specs.push(TableSpec {
                name,
                system: f.system.clone(),
                event: f.name.clone(),
                event_id: f.id,
                schema,
                print_fmt: f.print_fmt.clone(),
                fields: f.fields.iter().map(|x| (x.name.clone(), x.declared_type(), x.offset, x.size, x.signed)).collect(),
                physical_common: physical.iter().map(|&r| common[r].clone()).collect(),
                common_names: common,
            });
            tables_.push(EventTable {
                spec: idx,
                id: IntCol::new(8, false, cap),
                ts: IntCol::new(8, true, cap),
                cpu: IntCol::new(4, true, cap),
                pid: IntCol::new(4, true, cap),
                flags: IntCol::new(1, false, cap),
                preempt: IntCol::new(1, false, cap),
                tgid: has_tgid.then(|| IntCol::new(4, true, cap)),
                pid_slot: Slot::of(f.field("common_pid")),
                tgid_slot: Slot::of(f.field("common_tgid")),
                flags_slot: Slot::of(f.field("common_flags")),
                preempt_slot: Slot::of(f.field("common_preempt_count")),
                columns: fields.iter().map(|x| new_column(&x.kind, cap)).collect(),
                fields,
                rows: 0,
                bytes: 0,
            });
        }
        Decoder {
            endian,
            specs,
            tables: tables_,
            by_id,
            by_id_small,
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

    /// The table index an event payload belongs to, from its `common_type`.
    #[inline]
    fn table_of(&self, type_id: u32) -> Option<usize> {
        match self.by_id_small.get(type_id as usize) {
            Some(&v) if v != 0 => Some(v as usize - 1),
            _ => self.by_id.get(&type_id).copied(),
        }
    }

    /// Decode one event. Finished batches are handed to `out` as
    /// (table name, batch).
    pub fn push(&mut self, c: Common, payload: &[u8], out: &mut dyn FnMut(&str, RecordBatch)) {
        let type_id = if payload.len() >= 2 { self.endian.u16([payload[0], payload[1]]) as u32 } else { u32::MAX };
        let Some(t) = self.table_of(type_id) else {
            *self.stats.unknown_ids.entry(type_id).or_default() += 1;
            let u = &mut self.unknown;
            u.id.push(c.id);
            u.ts.push(c.ts as u64);
            u.cpu.push(c.cpu as u32 as u64);
            u.type_id.push(type_id as u64);
            u.data.append_value(payload);
            return;
        };
        let endian = self.endian;
        let tbl = &mut self.tables[t];
        tbl.id.push(c.id);
        tbl.ts.push(c.ts as u64);
        tbl.cpu.push(c.cpu as u32 as u64);
        match tbl.pid_slot.and_then(|s| s.read(payload, endian)) {
            Some(p) => tbl.pid.push(p),
            None => tbl.pid.push_null(),
        }
        match tbl.flags_slot.and_then(|s| s.read(payload, endian)) {
            Some(v) => tbl.flags.push(v),
            None => tbl.flags.push_null(),
        }
        match tbl.preempt_slot.and_then(|s| s.read(payload, endian)) {
            Some(v) => tbl.preempt.push(v),
            None => tbl.preempt.push_null(),
        }
        if let Some(tg) = &mut tbl.tgid {
            match tbl.tgid_slot.and_then(|s| s.read(payload, endian)) {
                Some(v) => tg.push(v),
                None => tg.push_null(),
            }
        }
        let mut truncated = 0u64;
        for (f, col) in tbl.fields.iter().zip(tbl.columns.iter_mut()) {
            if !decode_field(f, payload, endian, col) {
                truncated += 1;
            }
        }
        self.stats.truncated_fields += truncated;
        tbl.rows += 1;
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
        let spec = &self.specs[tbl.spec];
        let mut cols: Vec<ArrayRef> = vec![
            tbl.id.finish(),
            tbl.ts.finish(),
            tbl.cpu.finish(),
            tbl.pid.finish(),
            tbl.flags.finish(),
            tbl.preempt.finish(),
        ];
        if let Some(tg) = &mut tbl.tgid {
            cols.push(tg.finish());
        }
        for c in tbl.columns.iter_mut() {
            cols.push(c.finish());
        }
        let batch = RecordBatch::try_new(spec.schema.clone(), cols).expect("event batch matches its schema");
        self.pending_bytes -= tbl.bytes;
        tbl.rows = 0;
        tbl.bytes = 0;
        out(&spec.name, batch);
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

/// Read `len` bytes at `off`, or None if they are not all in the payload.
#[inline]
fn slice(p: &[u8], off: usize, len: usize) -> Option<&[u8]> {
    p.get(off..off.checked_add(len)?)
}

/// Resolve a `__data_loc` / `__rel_loc` field to its bytes.
fn dynamic<'p>(f: &FieldDef, p: &'p [u8], e: Endian, relative: bool) -> Option<&'p [u8]> {
    let off = f.offset as usize;
    let loc = e.u32(slice(p, off, 4)?.try_into().ok()?);
    let mut start = (loc & 0xffff) as usize;
    let len = (loc >> 16) as usize;
    if relative {
        // __rel_loc offsets count from the end of the field itself.
        start += off + f.size as usize;
    }
    slice(p, start, len)
}

fn until_nul(b: &[u8]) -> &[u8] {
    match memchr::memchr(0, b) {
        Some(n) => &b[..n],
        None => b,
    }
}

fn push_ints(col: &mut Column, data: &[u8], elem: Elem, e: Endian) {
    if let Column::IntList(l) = col {
        let w = elem.size as usize;
        for chunk in data.chunks_exact(w) {
            l.push_value(e.uint(chunk, w));
        }
        l.end_list();
    }
}

/// Decode one field into its column. Returns false (and appends NULL) when
/// the field does not fit in the payload.
fn decode_field(f: &FieldDef, p: &[u8], e: Endian, col: &mut Column) -> bool {
    let off = f.offset as usize;
    let ok = match (&f.kind, &mut *col) {
        (FieldKind::Int { size, .. }, Column::Int(c)) => match slice(p, off, *size as usize) {
            Some(b) => {
                c.push(e.uint(b, *size as usize));
                true
            }
            None => false,
        },
        (FieldKind::Bool, Column::Bool(c)) => match p.get(off) {
            Some(&b) => {
                c.append_value(b != 0);
                true
            }
            None => false,
        },
        (FieldKind::Str { len }, Column::Text(c)) => match slice(p, off, *len as usize) {
            Some(b) => {
                push_text(c, until_nul(b));
                true
            }
            None => false,
        },
        (FieldKind::DynStr { relative }, Column::Text(c)) => match dynamic(f, p, e, *relative) {
            Some(b) => {
                push_text(c, until_nul(b));
                true
            }
            None => false,
        },
        (FieldKind::TailStr, Column::Text(c)) => match p.get(off..) {
            Some(b) => {
                push_text(c, until_nul(b));
                true
            }
            None => false,
        },
        (FieldKind::Array { elem, count }, col @ Column::IntList(_)) => {
            match slice(p, off, *count as usize * elem.size as usize) {
                Some(b) => {
                    push_ints(col, b, *elem, e);
                    true
                }
                None => false,
            }
        }
        (FieldKind::DynArray { elem, relative }, col @ Column::IntList(_)) => match dynamic(f, p, e, *relative) {
            Some(b) => {
                push_ints(col, b, *elem, e);
                true
            }
            None => false,
        },
        (FieldKind::TailArray { elem }, col @ Column::IntList(_)) => match p.get(off..) {
            Some(b) => {
                push_ints(col, b, *elem, e);
                true
            }
            None => false,
        },
        (FieldKind::Bytes { len }, Column::Bytes(c)) => match slice(p, off, *len as usize) {
            Some(b) => {
                c.append_value(b);
                true
            }
            None => false,
        },
        _ => false,
    };
    if !ok {
        match col {
            Column::Int(c) => c.push_null(),
            Column::Bool(c) => c.append_null(),
            Column::Text(c) => c.append_null(),
            Column::IntList(c) => c.push_null(),
            Column::Bytes(c) => c.append_null(),
        }
    }
    ok
}

/// An empty batch of a table, for creating it with its schema.
pub fn empty_batch(schema: &SchemaRef) -> RecordBatch {
    RecordBatch::new_empty(schema.clone())
}
