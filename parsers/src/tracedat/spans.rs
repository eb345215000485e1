//! Syscalls paired from enter to exit while the capture is read.
//!
//! `syscalls:sys_enter_write` and `syscalls:sys_exit_write` are two events; what a
//! user waits on is the span between them. Pairing them afterwards in SQL means a
//! window over every enter and exit (on a dd trace with 2.6 M write(2) calls, 5.2 M
//! rows held at once: 0.7 GiB). Here they are paired as the merge hands the events
//! on in capture order, holding only the calls still open: one per task and syscall.
//!
//! The rule, per task and syscall: an enter opens a span; the task's next event of
//! that syscall closes it. An exit completes it (its `ret` is kept); another enter
//! means the exit was lost, and the first span stays open (no end) rather than
//! borrowing a later exit. An exit with nothing open is dropped (its enter was before
//! the capture began). Spans still open when the capture ends have no end either.
//!
//! The enter's arguments are kept positionally (`arg0` is the first field after
//! `__syscall_nr`), each read with its own field's size and sign: `sys_enter_write`
//! has `fd`, `buf`, `count`, so `count` is `arg2`. The event's format, kept in the
//! store, names them. User-space pointers (`const char * buf`) are left NULL: they
//! mean nothing outside the traced process, and their bits compress worst; the
//! enter event's own table keeps them.
//!
//! `raw_syscalls:sys_enter`/`sys_exit` carry every call of every task by number
//! (`id`, and `args[6]`: the argument registers; `trace-cmd report` prints "NR 74
//! (3, ...)"). They are paired by the same rule, per task and number, as syscall
//! "#74": the number names a call only on one architecture, so the views name it.

use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use rustc_hash::FxHashMap;

use crate::bytes::Endian;
use crate::columns::Ints;
use crate::format::{EventFormat, FieldDef, FieldKind};

pub const SPANS_TABLE: &str = "syscall_spans";
/// Rows per batch at most (each batch's columns are allocated whole up front).
const MAX_BATCH_ROWS: usize = 65536;
/// Arguments kept per call: the most any syscall has.
pub const MAX_ARGS: usize = 6;
/// Tasks (and syscalls) followed at most. A real system has a few thousand; past this
/// (only a damaged or crafted file gets there), every open call is handed on as open
/// and the pairing starts afresh, so memory stays bounded.
const MAX_OPEN: usize = 1 << 18;

pub fn spans_schema() -> SchemaRef {
    let mut f = vec![
        Field::new("syscall", DataType::Utf8, false),
        Field::new("pid", DataType::Int32, false),
        // Only kernels whose events carry common_tgid (some vendor kernels) fill it.
        Field::new("tgid", DataType::Int32, true),
        Field::new("enter_id", DataType::UInt64, false),
        Field::new("start_ts", DataType::Int64, false),
        Field::new("end_ts", DataType::Int64, true),
        Field::new("ret", DataType::Int64, true),
    ];
    f.extend((0..MAX_ARGS).map(|i| Field::new(format!("arg{i}"), DataType::Int64, true)));
    Arc::new(Schema::new(f))
}

/// Where an integer sits in one event type's payload, and how to read it.
#[derive(Clone, Copy)]
struct IntField {
    offset: usize,
    size: usize,
    signed: bool,
}

impl IntField {
    fn of(f: &FieldDef) -> Option<IntField> {
        if f.type_name.contains('*') {
            return None;
        }
        match f.kind {
            FieldKind::Int { size, signed } if matches!(size, 1 | 2 | 4 | 8) => {
                Some(IntField { offset: f.offset as usize, size: size as usize, signed })
            }
            _ => None,
        }
    }

    /// The value as i64 (an unsigned 8-byte value keeps its bits), None when the
    /// payload is too short.
    #[inline]
    fn read(self, p: &[u8], e: Endian) -> Option<i64> {
        let b = p.get(self.offset..self.offset + self.size)?;
        if self.size == 8 {
            let b: [u8; 8] = b.try_into().ok()?;
            return Some(match e {
                Endian::Little => i64::from_le_bytes(b),
                Endian::Big => i64::from_be_bytes(b),
            });
        }
        let v = e.uint(b, self.size);
        let shift = 64 - 8 * self.size as u32;
        Some(if self.signed && shift > 0 { ((v << shift) as i64) >> shift } else { v as i64 })
    }
}

enum Kind {
    Enter {
        call: u16,
        pid: IntField,
        tgid: Option<IntField>,
        args: Vec<Option<IntField>>,
    },
    Exit {
        call: u16,
        pid: IntField,
        ret: Option<IntField>,
    },
    /// raw_syscalls: the call is the event's `id` field, named "#<id>" when first seen.
    RawEnter {
        nr: IntField,
        pid: IntField,
        tgid: Option<IntField>,
        args: Vec<Option<IntField>>,
    },
    RawExit {
        nr: IntField,
        pid: IntField,
        ret: Option<IntField>,
    },
}

/// Distinct raw_syscalls numbers followed at most (a kernel has fewer than 600 calls;
/// more only in a damaged or crafted file, whose further numbers are not paired).
const MAX_RAW_CALLS: usize = 1024;

/// A task's latest call of one syscall.
struct Open {
    /// Entered, and no exit seen yet.
    open: bool,
    enter_id: u64,
    ts: i64,
    tgid: Option<i32>,
    /// Bit i: args[i] was read.
    have: u8,
    args: [i64; MAX_ARGS],
}

impl Open {
    const CLOSED: Open = Open { open: false, enter_id: 0, ts: 0, tgid: None, have: 0, args: [0; MAX_ARGS] };
}

/// Pairs syscall enters and exits; see the module doc.
pub struct SpanPairer {
    endian: Endian,
    /// Event type id → index into `kinds` + 1 (0: not a paired syscall event).
    by_id: Vec<u16>,
    kinds: Vec<Kind>,
    names: Vec<String>,
    calls: FxHashMap<(i32, u16), Open>,
    /// raw_syscalls number → its index in `names`.
    raw_calls: FxHashMap<i64, u16>,
    rows: Rows,
    batch_rows: usize,
    /// Open calls handed on early because `MAX_OPEN` was reached.
    pub evicted: u64,
}

impl SpanPairer {
    /// Pairs every syscall whose enter and exit formats are both in `formats`.
    pub fn new(formats: &[EventFormat], endian: Endian, batch_rows: usize) -> Self {
        let name_of = |f: &EventFormat, prefix: &str| -> Option<String> {
            (f.system == "syscalls").then(|| f.name.strip_prefix(prefix).map(str::to_string)).flatten()
        };
        let exits: Vec<String> = formats.iter().filter_map(|f| name_of(f, "sys_exit_")).collect();
        let mut names: Vec<String> = formats.iter().filter_map(|f| name_of(f, "sys_enter_")).filter(|n| exits.contains(n)).collect();
        names.sort();
        names.dedup();
        names.truncate(u16::MAX as usize);
        // raw_syscalls are paired only when the file has both their enter and exit formats.
        let raw_pair = [true, false].into_iter().all(|enter| formats.iter().any(|f| raw_side(f) == Some(enter)));
        let mut by_id = vec![0u16; 65536];
        let mut kinds = Vec::new();
        for f in formats {
            // A later format with the same id wins, as in the decoder (even when it is
            // not a syscall's).
            let Some(slot) = by_id.get_mut(f.id as usize) else { continue };
            *slot = 0;
            let Some(pid) = f.field("common_pid").and_then(IntField::of) else { continue };
            if let Some(kind) = raw_kind(f, pid).filter(|_| raw_pair) {
                if kinds.len() < u16::MAX as usize {
                    kinds.push(kind);
                    *slot = kinds.len() as u16;
                }
                continue;
            }
            let (enter, name) = match (name_of(f, "sys_enter_"), name_of(f, "sys_exit_")) {
                (Some(n), _) => (true, n),
                (_, Some(n)) => (false, n),
                _ => continue,
            };
            let Some(call) = names.iter().position(|n| *n == name) else { continue };
            let call = call as u16;
            let kind = if enter {
                let args =
                    f.fields.iter().filter(|x| !x.is_common() && x.name != "__syscall_nr").take(MAX_ARGS).map(IntField::of).collect();
                Kind::Enter { call, pid, tgid: f.field("common_tgid").and_then(IntField::of), args }
            } else {
                Kind::Exit { call, pid, ret: f.field("ret").and_then(IntField::of) }
            };
            if kinds.len() < u16::MAX as usize {
                kinds.push(kind);
                *slot = kinds.len() as u16;
            }
        }
        SpanPairer {
            endian,
            by_id,
            kinds,
            names,
            calls: FxHashMap::default(),
            raw_calls: FxHashMap::default(),
            rows: Rows::new(batch_rows.clamp(1, MAX_BATCH_ROWS)),
            batch_rows: batch_rows.clamp(1, MAX_BATCH_ROWS),
            evicted: 0,
        }
    }

    /// Does this capture have any syscall to pair?
    pub fn is_active(&self) -> bool {
        !self.kinds.is_empty()
    }

    /// One event: its id (capture order), timestamp and payload.
    #[inline]
    pub fn push(&mut self, id: u64, ts: i64, p: &[u8], out: &mut dyn FnMut(&str, RecordBatch)) {
        if p.len() < 2 {
            return;
        }
        let k = self.by_id[self.endian.u16([p[0], p[1]]) as usize];
        if k == 0 {
            return;
        }
        // Each task's entry stays in the map between its calls and is updated in place:
        // a write-heavy capture does one lookup per event, not an insert and a removal.
        let call = match &self.kinds[k as usize - 1] {
            Kind::Enter { call, .. } | Kind::Exit { call, .. } => Ok(*call),
            Kind::RawEnter { nr, .. } | Kind::RawExit { nr, .. } => Err(*nr),
        };
        let call = match call {
            Ok(call) => call,
            Err(nr) => {
                let Some(call) = nr.read(p, self.endian).and_then(|nr| self.raw_call(nr)) else { return };
                call
            }
        };
        match &self.kinds[k as usize - 1] {
            Kind::Enter { pid, tgid, args, .. } | Kind::RawEnter { pid, tgid, args, .. } => {
                let Some(pid) = pid.read(p, self.endian) else { return };
                let key = (pid as i32, call);
                let o = self.calls.entry(key).or_insert(Open::CLOSED);
                if o.open {
                    // The task entered again: the earlier call's exit was lost.
                    self.rows.push(&self.names[key.1 as usize], key.0, o, None);
                }
                *o = Open { open: true, enter_id: id, ts, tgid: None, have: 0, args: [0; MAX_ARGS] };
                for (i, a) in args.iter().enumerate() {
                    if let Some(v) = a.and_then(|a| a.read(p, self.endian)) {
                        o.args[i] = v;
                        o.have |= 1 << i;
                    }
                }
                o.tgid = tgid.and_then(|t| t.read(p, self.endian)).map(|t| t as i32);
                if self.calls.len() > MAX_OPEN {
                    self.evicted += self.hand_on_open(out);
                }
            }
            Kind::Exit { pid, ret, .. } | Kind::RawExit { pid, ret, .. } => {
                let Some(pid) = pid.read(p, self.endian) else { return };
                let key = (pid as i32, call);
                match self.calls.get_mut(&key) {
                    Some(o) if o.open => {
                        o.open = false;
                        let ret = ret.and_then(|r| r.read(p, self.endian));
                        self.rows.push(&self.names[key.1 as usize], key.0, o, Some((ts, ret)));
                    }
                    _ => return,
                }
            }
        }
        self.hand_on_full(out);
    }

    /// The call index of raw_syscalls number `nr` ("#nr"), None past `MAX_RAW_CALLS`.
    fn raw_call(&mut self, nr: i64) -> Option<u16> {
        if let Some(&call) = self.raw_calls.get(&nr) {
            return Some(call);
        }
        if self.raw_calls.len() >= MAX_RAW_CALLS || self.names.len() >= u16::MAX as usize {
            return None;
        }
        self.names.push(format!("#{nr}"));
        let call = (self.names.len() - 1) as u16;
        self.raw_calls.insert(nr, call);
        Some(call)
    }

    /// Hand on a full batch. The next one gets its whole capacity up front, not a
    /// growing buffer copied at every doubling.
    fn hand_on_full(&mut self, out: &mut dyn FnMut(&str, RecordBatch)) {
        if self.rows.len >= self.batch_rows {
            out(SPANS_TABLE, std::mem::replace(&mut self.rows, Rows::new(self.batch_rows)).finish());
        }
    }

    /// Hand on every open call, oldest first, and forget every task; returns how many
    /// were open.
    fn hand_on_open(&mut self, out: &mut dyn FnMut(&str, RecordBatch)) -> u64 {
        let mut open: Vec<((i32, u16), Open)> = self.calls.drain().filter(|(_, o)| o.open).collect();
        open.sort_by_key(|(_, o)| o.enter_id);
        for ((pid, call), o) in &open {
            self.rows.push(&self.names[*call as usize], *pid, o, None);
            self.hand_on_full(out);
        }
        open.len() as u64
    }

    /// Hand on the calls still open (the capture ended before they returned).
    pub fn finish(&mut self, out: &mut dyn FnMut(&str, RecordBatch)) {
        self.hand_on_open(out);
        if self.rows.len > 0 {
            out(SPANS_TABLE, std::mem::replace(&mut self.rows, Rows::new(0)).finish());
        }
    }
}

/// Is `f` raw_syscalls:sys_enter (true) or sys_exit (false), with its number field `id`?
fn raw_side(f: &EventFormat) -> Option<bool> {
    if f.system != "raw_syscalls" || f.field("id").and_then(IntField::of).is_none() {
        return None;
    }
    match f.name.as_str() {
        "sys_enter" => Some(true),
        "sys_exit" => Some(false),
        _ => None,
    }
}

/// raw_syscalls:sys_enter (with `id` and `args[]`) or sys_exit (with `id` and `ret`).
fn raw_kind(f: &EventFormat, pid: IntField) -> Option<Kind> {
    let nr = f.field("id").and_then(IntField::of)?;
    if !raw_side(f)? {
        return Some(Kind::RawExit { nr, pid, ret: f.field("ret").and_then(IntField::of) });
    }
    let args = match f.field("args").map(|a| (a.offset as usize, &a.kind)) {
        // `unsigned long args[6]`: each register, as the element's width reads it.
        Some((offset, FieldKind::Array { elem, count })) if matches!(elem.size, 4 | 8) => (0..(*count as usize).min(MAX_ARGS))
            .map(|i| Some(IntField { offset: offset + i * elem.size as usize, size: elem.size as usize, signed: false }))
            .collect(),
        _ => return None,
    };
    Some(Kind::RawEnter { nr, pid, tgid: f.field("common_tgid").and_then(IntField::of), args })
}

/// The `syscall_spans` columns being filled.
struct Rows {
    len: usize,
    syscall: StringBuilder,
    pid: Ints<i32>,
    tgid: Ints<i32>,
    enter_id: Ints<u64>,
    start_ts: Ints<i64>,
    end_ts: Ints<i64>,
    ret: Ints<i64>,
    args: Vec<Ints<i64>>,
}

impl Rows {
    fn new(cap: usize) -> Self {
        Rows {
            len: 0,
            syscall: StringBuilder::with_capacity(cap, cap * 8),
            pid: Ints::new(DataType::Int32, cap),
            tgid: Ints::new(DataType::Int32, cap),
            enter_id: Ints::new(DataType::UInt64, cap),
            start_ts: Ints::new(DataType::Int64, cap),
            end_ts: Ints::new(DataType::Int64, cap),
            ret: Ints::new(DataType::Int64, cap),
            args: (0..MAX_ARGS).map(|_| Ints::new(DataType::Int64, cap)).collect(),
        }
    }

    fn push(&mut self, name: &str, pid: i32, o: &Open, exit: Option<(i64, Option<i64>)>) {
        self.len += 1;
        self.syscall.append_value(name);
        self.pid.push(pid);
        match o.tgid {
            Some(t) => self.tgid.push(t),
            None => self.tgid.push_null(),
        }
        self.enter_id.push(o.enter_id);
        self.start_ts.push(o.ts);
        match exit {
            Some((end, ret)) => {
                self.end_ts.push(end);
                match ret {
                    Some(r) => self.ret.push(r),
                    None => self.ret.push_null(),
                }
            }
            None => {
                self.end_ts.push_null();
                self.ret.push_null();
            }
        }
        for (i, (col, v)) in self.args.iter_mut().zip(o.args).enumerate() {
            if o.have & (1 << i) != 0 {
                col.push(v);
            } else {
                col.push_null();
            }
        }
    }

    fn finish(mut self) -> RecordBatch {
        let mut cols: Vec<ArrayRef> = vec![
            Arc::new(self.syscall.finish()),
            self.pid.finish(),
            self.tgid.finish(),
            self.enter_id.finish(),
            self.start_ts.finish(),
            self.end_ts.finish(),
            self.ret.finish(),
        ];
        cols.extend(self.args.iter_mut().map(|a| a.finish()));
        RecordBatch::try_new(spans_schema(), cols).expect("syscall_spans batch")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::parse_event_format;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int64Type, UInt64Type};
    use arrow_array::Array;

    /// An event format of `system`: the common fields, then `fields` from offset 8.
    fn format_of(system: &str, name: &str, id: u32, fields: &str) -> EventFormat {
        let text = format!(
            "name: {name}\nID: {id}\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
             \tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
             \tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
             \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n{fields}\nprint fmt: \"x\"\n"
        );
        parse_event_format(&text, system, 8).unwrap()
    }

    fn format(name: &str, id: u32, fields: &str) -> EventFormat {
        format_of("syscalls", name, id, &format!("\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n{fields}"))
    }

    fn formats() -> Vec<EventFormat> {
        vec![
            format("sys_enter_fsync", 10, "\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n"),
            format("sys_exit_fsync", 11, "\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n"),
            format(
                "sys_enter_lseek",
                12,
                "\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:off_t offset;\toffset:24;\tsize:8;\tsigned:1;\n",
            ),
            format(
                "sys_enter_write",
                20,
                "\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:const char * buf;\toffset:24;\tsize:8;\tsigned:0;\n\
                 \tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n",
            ),
            format("sys_exit_write", 21, "\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n"),
            // An enter whose exit was not recorded: never paired.
            format("sys_enter_sync", 14, ""),
        ]
    }

    fn payload(type_id: u16, pid: i32, args: &[i64]) -> Vec<u8> {
        let mut p = vec![0u8; 16];
        p[0..2].copy_from_slice(&type_id.to_le_bytes());
        p[4..8].copy_from_slice(&pid.to_le_bytes());
        for a in args {
            p.extend_from_slice(&a.to_le_bytes());
        }
        p
    }

    fn run(events: &[(i64, u16, i32, &[i64])]) -> RecordBatch {
        pair(&formats(), events.iter().map(|&(ts, type_id, pid, args)| (ts, payload(type_id, pid, args))))
    }

    /// The spans of these (timestamp, payload) events, in capture order: one batch.
    fn pair(formats: &[EventFormat], events: impl Iterator<Item = (i64, Vec<u8>)>) -> RecordBatch {
        let mut pairer = SpanPairer::new(formats, Endian::Little, 1000);
        let mut out = Vec::new();
        for (id, (ts, p)) in events.enumerate() {
            pairer.push(id as u64, ts, &p, &mut |_, b| out.push(b));
        }
        pairer.finish(&mut |_, b| out.push(b));
        assert_eq!(out.len(), 1);
        out.pop().unwrap()
    }

    fn col(b: &RecordBatch, name: &str) -> Vec<Option<i64>> {
        let c = b.column_by_name(name).unwrap();
        match c.data_type() {
            DataType::UInt64 => c.as_primitive::<UInt64Type>().iter().map(|v| v.map(|v| v as i64)).collect(),
            DataType::Int32 => c.as_primitive::<arrow_array::types::Int32Type>().iter().map(|v| v.map(i64::from)).collect(),
            _ => c.as_primitive::<Int64Type>().iter().collect(),
        }
    }

    #[test]
    fn each_enter_takes_its_tasks_next_exit() {
        // pid 7: fsync(3) returns -5; pid 8's fsync interleaves; pid 7's exit with
        // nothing open (its enter was before the capture) is dropped.
        let b = run(&[(100, 11, 7, &[-1]), (110, 10, 7, &[3]), (120, 10, 8, &[4]), (130, 11, 7, &[-5]), (140, 11, 8, &[0])]);
        assert_eq!(col(&b, "pid"), vec![Some(7), Some(8)]);
        assert_eq!(col(&b, "enter_id"), vec![Some(1), Some(2)]);
        assert_eq!(col(&b, "end_ts"), vec![Some(130), Some(140)]);
        assert_eq!(col(&b, "ret"), vec![Some(-5), Some(0)]);
        assert_eq!(col(&b, "arg0"), vec![Some(3), Some(4)]);
        assert_eq!(col(&b, "tgid"), vec![None, None]);
    }

    #[test]
    fn a_lost_exit_and_the_capture_end_leave_spans_open() {
        let b = run(&[(100, 10, 7, &[3]), (200, 10, 7, &[3]), (210, 11, 7, &[0]), (300, 10, 7, &[9])]);
        let syscalls: Vec<&str> = b.column_by_name("syscall").unwrap().as_string::<i32>().iter().map(Option::unwrap).collect();
        assert_eq!(syscalls, vec!["fsync"; 3]);
        assert_eq!(col(&b, "start_ts"), vec![Some(100), Some(200), Some(300)]);
        assert_eq!(col(&b, "end_ts"), vec![None, Some(210), None]);
        assert_eq!(col(&b, "ret"), vec![None, Some(0), None]);
    }

    #[test]
    fn arguments_keep_their_sign_and_calls_without_an_exit_format_are_not_paired() {
        // lseek has no exit format here, sync neither: nothing to pair for them.
        let p = SpanPairer::new(&formats(), Endian::Little, 10);
        assert_eq!(p.names, vec!["fsync".to_string(), "write".to_string()]);
        let f = IntField { offset: 0, size: 4, signed: true };
        assert_eq!(f.read(&(-100i32).to_le_bytes(), Endian::Little), Some(-100));
        let u = IntField { offset: 0, size: 4, signed: false };
        assert_eq!(u.read(&(-100i32).to_le_bytes(), Endian::Little), Some(4294967196));
        assert_eq!(u.read(&[1, 2], Endian::Little), None);
    }

    #[test]
    fn a_later_format_with_the_same_id_wins() {
        let mut f = formats();
        let mut other = format("sys_enter_fsync", 10, "");
        other.system = "other".into();
        f.push(other);
        let p = SpanPairer::new(&f, Endian::Little, 10);
        assert_eq!(p.by_id[10], 0);
        assert_ne!(p.by_id[11], 0);
    }

    #[test]
    fn user_space_pointers_are_not_kept() {
        let b = run(&[(100, 20, 7, &[1, 0x7ffd_1234_5678, 4096]), (110, 21, 7, &[4096])]);
        assert_eq!(col(&b, "arg0"), vec![Some(1)]);
        assert_eq!(col(&b, "arg1"), vec![None]);
        assert_eq!(col(&b, "arg2"), vec![Some(4096)]);
        assert_eq!(col(&b, "arg3"), vec![None]);
    }

    fn raw_format(name: &str, id: u32, fields: &str) -> EventFormat {
        format_of("raw_syscalls", name, id, &format!("\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n{fields}"))
    }

    fn raw_formats() -> Vec<EventFormat> {
        let mut f = formats();
        f.push(raw_format("sys_enter", 30, "\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n"));
        f.push(raw_format("sys_exit", 31, "\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n"));
        f
    }

    /// A raw_syscalls payload: the number at offset 8, then `rest` (args, or ret).
    fn raw_payload(type_id: u16, pid: i32, nr: i64, rest: &[i64]) -> Vec<u8> {
        let mut p = payload(type_id, pid, rest);
        p[8..16].copy_from_slice(&nr.to_le_bytes());
        p
    }

    #[test]
    fn raw_syscalls_pair_per_task_and_number() {
        // pid 7: fsync (74) by number, returning -5; pid 7's write (1) interleaves and
        // its exit was lost (the next write's enter comes first); pid 8's exit of a call
        // entered before the capture is dropped.
        let events: &[(i64, u16, i32, i64, &[i64])] = &[
            (100, 30, 7, 74, &[3, 0, 0, 0, 0, 0]),
            (105, 31, 8, 1, &[4096]),
            (110, 30, 7, 1, &[1, 0x7ffd_0000, 4096, 0, 0, 0]),
            (120, 31, 7, 74, &[-5]),
            (130, 30, 7, 1, &[1, 0x7ffd_0000, -1, 0, 0, 0]),
            (140, 31, 7, 1, &[512]),
        ];
        let b = pair(&raw_formats(), events.iter().map(|&(ts, type_id, pid, nr, rest)| (ts, raw_payload(type_id, pid, nr, rest))));
        let syscalls: Vec<&str> = b.column_by_name("syscall").unwrap().as_string::<i32>().iter().map(Option::unwrap).collect();
        assert_eq!(syscalls, vec!["#74", "#1", "#1"]);
        assert_eq!(col(&b, "start_ts"), vec![Some(100), Some(110), Some(130)]);
        assert_eq!(col(&b, "end_ts"), vec![Some(120), None, Some(140)]);
        assert_eq!(col(&b, "ret"), vec![Some(-5), None, Some(512)]);
        assert_eq!(col(&b, "arg0"), vec![Some(3), Some(1), Some(1)]);
        // Registers are unsigned longs: every bit kept (-1 is 0xffff_ffff_ffff_ffff).
        assert_eq!(col(&b, "arg2"), vec![Some(0), Some(4096), Some(-1)]);
    }

    #[test]
    fn raw_syscalls_without_their_exit_format_are_not_paired() {
        let mut f = formats();
        f.push(raw_format("sys_enter", 30, "\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n"));
        let p = SpanPairer::new(&f, Endian::Little, 10);
        assert_eq!(p.by_id[30], 0);
    }

    #[test]
    fn raw_numbers_stay_bounded() {
        let mut pairer = SpanPairer::new(&raw_formats(), Endian::Little, 1 << 20);
        for nr in 0..(MAX_RAW_CALLS as i64 + 10) {
            pairer.push(nr as u64, 0, &raw_payload(30, 7, nr, &[0; 6]), &mut |_, _| {});
        }
        assert_eq!(pairer.raw_calls.len(), MAX_RAW_CALLS);
    }

    #[test]
    fn open_calls_stay_bounded() {
        let mut pairer = SpanPairer::new(&formats(), Endian::Little, 1 << 20);
        let mut rows = 0;
        for pid in 0..(MAX_OPEN as i32 + 2) {
            pairer.push(pid as u64, 0, &payload(10, pid, &[1]), &mut |_, b| rows += b.num_rows());
        }
        assert!(pairer.calls.len() <= MAX_OPEN);
        assert_eq!(pairer.evicted, MAX_OPEN as u64 + 1);
        pairer.finish(&mut |_, b| rows += b.num_rows());
        assert_eq!(rows, MAX_OPEN + 2);
    }
}
