//! ftrace text captures: the tracefs `trace` and `trace_pipe` files and
//! `trace-cmd report` output.
//!
//! Two passes over the (memory-mapped) text: the first learns every event
//! type, its `key=value` fields and whether each field's values are all
//! integers; the second builds batches with those fixed, typed schemas, so
//! text captures load like trace.dat ones.

mod block;
mod dev_pairs;
pub mod fields;
mod layout;
pub mod line;

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};

use crate::columns::{push_text, IntCol};
use crate::error::{ParseError, Result};
use crate::source::{Limits, TraceSource};
use crate::stats::{Severity, Stat};
use crate::tables;
use crate::tracedat::decode::TableSpec;
use crate::tracedat::{lost_schema, RunReport, LOST_TABLE};
use line::{parse_event, parse_lost, parse_ts, EventLine};

/// What the values of one field turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValKind {
    /// Only empty values so far.
    Unset,
    /// Integers (decimal, or hex with 0x); `neg`: some are negative.
    Int {
        neg: bool,
        over_i64: bool,
    },
    Text,
}

/// The values of one field over the whole capture. Text has no event format
/// to say what a field is, so the lines vote: a field is an integer column
/// when its integer values are at least as many as the others, and one
/// hostile line (`dirty=AAAA...` among a thousand `dirty=1234`) cannot turn
/// the column into text; the values that do not fit are stored as NULL and
/// counted as damage (`bad_values`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Votes {
    int: ValKind,
    ints: u64,
    others: u64,
    /// Some integer was printed in hex (0x40).
    hex: bool,
    /// Non-integers that read as flag names (I_DIRTY_SYNC|I_DIRTY_PAGES).
    flag_names: u64,
}

impl Votes {
    fn new() -> Votes {
        Votes { int: ValKind::Unset, ints: 0, others: 0, hex: false, flag_names: 0 }
    }

    fn see(&mut self, v: &str) {
        if v.is_empty() {
            return;
        }
        match parse_int(v) {
            Some(_) => {
                self.ints += 1;
                self.hex |= v.starts_with("0x") || v.starts_with("0X");
                self.int = self.int.see(v);
            }
            None => {
                self.others += 1;
                self.flag_names += u64::from(is_flag_names(v));
            }
        }
    }

    fn kind(&self) -> ValKind {
        if self.ints == 0 && self.others == 0 {
            ValKind::Unset
        } else if self.others > 0 && self.hex && self.flag_names == self.others {
            // A flags field: trace-cmd prints `state=0x40` where no name is known and
            // `state=I_DIRTY_SYNC` where one is (writeback_mark_inode_dirty): text, not damage.
            ValKind::Text
        } else if self.ints >= self.others {
            self.int
        } else {
            ValKind::Text
        }
    }
}

/// What __print_flags / __print_symbolic print: names joined by '|', "I_DIRTY_SYNC|I_SYNC".
fn is_flag_names(v: &str) -> bool {
    v.split('|').all(|name| {
        let b = name.as_bytes();
        !b.is_empty() && (b[0].is_ascii_alphabetic() || b[0] == b'_') && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
    })
}

fn parse_int(v: &str) -> Option<(i128, bool)> {
    if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok().map(|x| (x as i128, false));
    }
    let b = v.as_bytes();
    let digits = if b.first() == Some(&b'-') { &b[1..] } else { b };
    if digits.is_empty() || digits.len() > 20 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let x: i128 = v.parse().ok()?;
    (x >= i64::MIN as i128 && x <= u64::MAX as i128).then_some((x, x < 0))
}

impl ValKind {
    fn see(self, v: &str) -> ValKind {
        if v.is_empty() {
            return self;
        }
        match (self, parse_int(v)) {
            (ValKind::Text, _) | (_, None) => ValKind::Text,
            (ValKind::Unset, Some((x, neg))) => ValKind::Int { neg, over_i64: x > i64::MAX as i128 },
            (ValKind::Int { neg, over_i64 }, Some((x, n))) => {
                let (neg, over) = (neg || n, over_i64 || x > i64::MAX as i128);
                if neg && over {
                    ValKind::Text
                } else {
                    ValKind::Int { neg, over_i64: over }
                }
            }
        }
    }
}

/// One event type as learnt in the first pass.
#[derive(Debug, Clone)]
struct Shape {
    name: String,
    keys: Vec<String>,
    kinds: Vec<Votes>,
    count: u64,
}

#[derive(Debug, Default, Clone)]
struct Header {
    variant: Option<&'static str>,
    tracer: Option<String>,
    cpus: Option<u32>,
    entries: Option<(u64, u64)>,
}

pub struct TextTrace {
    path: PathBuf,
    map: crate::data::Data,
    shapes: Vec<Shape>,
    header: Header,
    has_tgid: bool,
    has_flags: bool,
    ts_digits: usize,
    specs: Vec<TableSpec>,
    info_names: Vec<String>,
}

/// Most distinct event types (tables) a text capture may have. A capture of
/// chosen events has a few dozen (the samples 20); `trace-cmd record -e all`
/// printed with `trace-cmd report` has about 300 that fired. Each type is a
/// table and views, about 0.4 MB of ingest memory, so a text inventing
/// thousands of event names would cost gigabytes.
pub const MAX_EVENT_TYPES: usize = 512;

/// Longest line read: as the blkparse text parser (blktrace/text.rs). An
/// event line of the kernel's is a few hundred bytes; a longer one is counted
/// as damaged and never copied, whatever it holds (a 100 MB field cost
/// 650 MB of memory before).
pub const MAX_LINE: usize = crate::blktrace::text::MAX_LINE;

/// Longest task name: the kernel's is at most 15 bytes (TASK_COMM_LEN 16),
/// `<...>` when unknown; a line with a longer one is damaged.
pub const MAX_COMM: usize = 256;

/// How much of a file we look at to decide whether it is ftrace text.
const SNIFF: usize = 64 << 10;

/// True if the start of `head` looks like ftrace text.
pub fn looks_like_text(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(SNIFF)]);
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(first) = lines.next() else { return false };
    first.starts_with("# tracer:")
        || first.starts_with("cpus=")
        || first.starts_with("version =")
        || std::iter::once(first).chain(lines.take(50)).any(|l| parse_event(l).is_some())
}

/// The lines of `data`: (line number, offset, bytes without the line end).
///
/// What has been read is dropped from the resident set as the reading goes
/// (`Data::release`): a mapped file's pages count in RSS once touched, so a
/// 300 MB line would otherwise "use" 300 MB. A line is searched for its end
/// a few MiB at a time for the same reason.
fn lines(data: &crate::data::Data) -> impl Iterator<Item = (u64, usize, &[u8])> {
    const STEP: usize = 4 << 20;
    let mut pos = 0usize;
    let mut no = 0u64;
    let mut released = 0usize;
    std::iter::from_fn(move || {
        if pos >= data.len() {
            return None;
        }
        let start = pos;
        if start - released >= STEP {
            data.release(released as u64, start as u64);
            released = start & !((64 << 10) - 1);
        }
        // "\n", "\r\n", or a "\r" alone (a text saved with old Mac line
        // ends; before, all of it was one line).
        let mut from = start;
        let end = loop {
            let to = (from + STEP).min(data.len());
            if let Some(n) = memchr::memchr2(b'\n', b'\r', &data[from..to]) {
                break from + n;
            }
            if to == data.len() {
                break to;
            }
            if to - start > MAX_LINE {
                data.release(from as u64, to as u64); // an overlong line: never read again
            }
            from = to;
        };
        pos = end + 1;
        if data.get(end) == Some(&b'\r') && data.get(end + 1) == Some(&b'\n') {
            pos += 1;
        }
        no += 1;
        Some((no, start, &data[start..end]))
    })
}

fn parse_header_line(l: &str, h: &mut Header) {
    if let Some(t) = l.strip_prefix("# tracer:") {
        h.variant.get_or_insert("tracefs trace");
        h.tracer = Some(t.trim().to_string());
    } else if let Some(r) = l.strip_prefix("# entries-in-buffer/entries-written:") {
        let mut it = r.split_whitespace();
        if let Some((a, b)) = it.next().and_then(|x| x.split_once('/')) {
            if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                h.entries = Some((a, b));
            }
        }
        if let Some(p) = it.find_map(|x| x.strip_prefix("#P:")) {
            h.cpus = p.parse().ok();
        }
    } else if let Some(c) = l.strip_prefix("cpus=") {
        h.variant.get_or_insert("trace-cmd report");
        h.cpus = c.trim().parse().ok();
    }
}

/// The caller lines after a stack event, each as "\n=> caller": the kernel's `trace` file
/// prints ` => ext4_writepages` under `<stack trace>`, `trace-cmd report`
/// `=> ffffffff81b34462` (or `=> ext4_writepages (ffffffff81b34462)`) under
/// `kernel_stack: <stack trace >`. At most MAX_LINE bytes are taken; caller lines
/// past that are left to the main loop, which counts them as malformed. Also returns
/// how many lines were taken.
fn stack_callers<'a, I: Iterator<Item = (u64, usize, &'a [u8])>>(text_lines: &mut std::iter::Peekable<I>) -> (String, u64) {
    let (mut out, mut taken) = (String::new(), 0);
    while let Some((_, _, next)) = text_lines.peek() {
        let t = String::from_utf8_lossy(next);
        let t = t.trim();
        if !t.starts_with("=> ") || out.len() + t.len() >= MAX_LINE {
            break;
        }
        out.push('\n');
        out.push_str(t);
        text_lines.next();
        taken += 1;
    }
    (out, taken)
}

fn is_known_noise(l: &str) -> bool {
    let t = l.trim();
    t.is_empty() || t.starts_with('#') || t.starts_with("version =") || t.starts_with("cpus=")
}

impl TextTrace {
    pub fn open(path: &Path) -> Result<TextTrace> {
        TextTrace::from_data(path, crate::data::Data::map(path)?)
    }

    /// Read ftrace text held in `map`; `path` names it in errors.
    pub fn from_data(path: &Path, map: crate::data::Data) -> Result<TextTrace> {
        let mut t = TextTrace {
            path: path.to_path_buf(),
            map,
            shapes: Vec::new(),
            header: Header::default(),
            has_tgid: false,
            has_flags: false,
            ts_digits: 0,
            specs: Vec::new(),
            info_names: Vec::new(),
        };
        t.learn()?;
        Ok(t)
    }

    /// First pass: event types, their fields and value kinds.
    fn learn(&mut self) -> Result<()> {
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut events = 0u64;
        let mut header = Header::default();
        for (_, _, raw) in lines(&self.map) {
            if raw.len() > MAX_LINE {
                continue; // damaged (counted by `decode`)
            }
            let l = String::from_utf8_lossy(raw);
            if l.starts_with('#') || l.starts_with("cpus=") {
                parse_header_line(&l, &mut header);
                continue;
            }
            let Some(ev) = parse_event(&l) else { continue };
            if ev.comm.len() > MAX_COMM {
                continue;
            }
            events += 1;
            self.has_tgid |= ev.tgid.is_some();
            self.has_flags |= ev.flags.is_some();
            if let Some((_, d)) = parse_ts(ev.ts) {
                self.ts_digits = self.ts_digits.max(d);
            }
            let (name, pairs) = fields::event_fields(&ev.kind);
            let i = match index.get(&name) {
                Some(&i) => i,
                // Each event type is a table: a text inventing more names
                // than any kernel has is damaged from there on (the lines
                // of further types are counted as malformed by `run`).
                None if self.shapes.len() >= MAX_EVENT_TYPES => continue,
                None => {
                    index.insert(name.clone(), self.shapes.len());
                    self.shapes.push(Shape { name, keys: Vec::new(), kinds: Vec::new(), count: 0 });
                    self.shapes.len() - 1
                }
            };
            let s = &mut self.shapes[i];
            s.count += 1;
            for (k, v) in pairs {
                match s.keys.iter().position(|x| x == k) {
                    Some(j) => s.kinds[j].see(&v),
                    None => {
                        let mut votes = Votes::new();
                        votes.see(&v);
                        s.keys.push(k.to_string());
                        s.kinds.push(votes);
                    }
                }
            }
        }
        if events == 0 && header.variant.is_none() && !looks_like_text(&self.map[..self.map.len().min(SNIFF)]) {
            return Err(ParseError::UnknownFormat { path: self.path.clone(), reason: "no ftrace event lines found".into() });
        }
        if header.variant.is_none() {
            header.variant = Some("trace_pipe or tracefs text without header");
        }
        self.header = header;
        self.build_specs();
        Ok(())
    }

    fn build_specs(&mut self) {
        let names = tables::table_names(&self.shapes.iter().map(|s| (String::new(), s.name.clone())).collect::<Vec<_>>());
        for (s, name) in self.shapes.iter().zip(names) {
            let keyset: std::collections::HashSet<String> = s.keys.iter().cloned().collect();
            let common = tables::common_names(&keyset);
            let mut physical = vec![0usize, 1, 2, 3];
            if self.has_tgid {
                physical.push(4);
            }
            physical.push(5);
            if self.has_flags {
                physical.extend([6, 7]);
            }
            let types = [
                DataType::UInt64,
                DataType::Int64,
                DataType::Int32,
                DataType::Int32,
                DataType::Int32,
                DataType::Utf8,
                DataType::Utf8,
                DataType::UInt8,
            ];
            let mut fields: Vec<Field> = physical.iter().map(|&r| Field::new(&common[r], types[r].clone(), r > 2)).collect();
            for (k, votes) in s.keys.iter().zip(&s.kinds) {
                let t = match votes.kind() {
                    ValKind::Int { neg: false, over_i64: true } => DataType::UInt64,
                    ValKind::Int { .. } => DataType::Int64,
                    ValKind::Unset | ValKind::Text => DataType::Utf8,
                };
                fields.push(Field::new(k, t, true));
            }
            let mut info = "info".to_string();
            while keyset.contains(&info) || common.contains(&info) {
                info.insert(0, '_');
            }
            fields.push(Field::new(&info, DataType::Utf8, true));
            self.info_names.push(info);
            self.specs.push(TableSpec {
                name,
                system: String::new(),
                event: s.name.clone(),
                event_id: 0,
                schema: Arc::new(Schema::new(fields)),
                print_fmt: String::new(),
                fields: Vec::new(),
                physical_common: physical.iter().map(|&r| common[r].clone()).collect(),
                common_names: common,
            });
        }
    }

    fn decode(&self, limits: Limits, progress: &AtomicU64, out: &mut dyn FnMut(&str, RecordBatch)) -> RunReport {
        let index: HashMap<&str, usize> = self.shapes.iter().enumerate().map(|(i, s)| (s.name.as_str(), i)).collect();
        let mut tables: Vec<TextTable> =
            self.specs.iter().zip(&self.shapes).map(|(sp, sh)| TextTable::new(sp, sh, limits.batch_rows)).collect();
        let mut lost: Vec<(i32, Option<u64>, Option<u64>)> = Vec::new(); // cpu, count, next id
        let mut lost_ts: Vec<i64> = Vec::new();
        let mut pending_lost = 0usize;
        let (mut id, mut malformed, mut bad_ts, mut bad_values, mut too_long) = (0u64, 0u64, 0u64, 0u64, 0u64);
        // Events of the types past MAX_EVENT_TYPES: (events, first such type).
        let (mut beyond, mut beyond_types, mut first_beyond) = (0u64, std::collections::HashSet::new(), None);
        let mut pending_bytes = 0usize;
        let mut damage = Vec::new();
        let (mut first_ts, mut last_ts) = (None, None);
        let mut ties = Ties::new(self.ts_digits);
        let mut lines_seen = 0u64;
        let mut text_lines = lines(&self.map).peekable();
        while let Some((no, start, raw)) = text_lines.next() {
            lines_seen += 1;
            if no & 0xfff == 0 {
                progress.store(start as u64, Ordering::Relaxed);
            }
            if raw.len() > MAX_LINE {
                too_long += 1;
                if damage.len() < 20 {
                    damage.push(format!("line {no}: longer than {MAX_LINE} bytes ({} bytes, skipped)", raw.len()));
                }
                continue;
            }
            let l = String::from_utf8_lossy(raw);
            if let Some(ll) = parse_lost(&l) {
                lost.push((ll.cpu, ll.count, None));
                pending_lost += 1;
                continue;
            }
            let Some(ev) = parse_event(&l) else {
                if !is_known_noise(&l) {
                    malformed += 1;
                    if damage.len() < 20 {
                        damage.push(match layout::unreadable_layout(&l) {
                            Some(layout) => format!("line {no}: {layout}: {:?}", truncate(&l, 120)),
                            None => format!("line {no}: not an event line: {:?}", truncate(&l, 120)),
                        });
                    }
                }
                continue;
            };
            if ev.comm.len() > MAX_COMM {
                malformed += 1;
                if damage.len() < 20 {
                    damage.push(format!("line {no}: task name of {} bytes (the kernel's are at most 15; skipped)", ev.comm.len()));
                }
                continue;
            }
            let Some((printed, _)) = parse_ts(ev.ts) else {
                bad_ts += 1;
                if damage.len() < 20 {
                    damage.push(format!("line {no}: bad timestamp {:?}", ev.ts));
                }
                continue;
            };
            let ts = ties.ts(printed);
            for _ in 0..pending_lost {
                let i = lost.len() - pending_lost;
                lost[i].2 = Some(id);
                lost_ts.push(ts);
                pending_lost -= 1;
            }
            first_ts.get_or_insert(ts);
            last_ts = Some(ts);
            let (name, pairs) = fields::event_fields(&ev.kind);
            // A type beyond MAX_EVENT_TYPES (or a file changing between the passes).
            let Some(&t) = index.get(name.as_str()) else {
                malformed += 1;
                beyond += 1;
                if beyond_types.len() < MAX_EVENT_TYPES {
                    beyond_types.insert(name.clone());
                }
                first_beyond.get_or_insert((no, name));
                continue;
            };
            let mut info = Cow::Borrowed(match &ev.kind {
                line::EventKind::Named { info, .. } => *info,
                _ => l.split_once(": ").map_or("", |x| x.1),
            });
            if line::is_stack_event(&name) {
                let (callers, taken) = stack_callers(&mut text_lines);
                lines_seen += taken;
                if !callers.is_empty() {
                    pending_bytes += callers.len();
                    info = Cow::Owned(format!("{info}{callers}"));
                }
            }
            let bad = tables[t].push(id, ts, &ev, &pairs, &info);
            if bad > 0 {
                bad_values += bad;
                if damage.len() < 20 {
                    damage.push(format!("line {no}: {bad} field value(s) not of their column's type (stored as NULL)"));
                }
            }
            id += 1;
            pending_bytes += raw.len();
            if tables[t].rows >= limits.batch_rows {
                out(&self.specs[t].name, tables[t].finish(&self.specs[t]));
            }
            // What the tables hold, whatever the batch sizes: lines of up
            // to MAX_LINE bytes would otherwise make batches of gigabytes.
            if pending_bytes >= limits.max_pending_bytes {
                for (t, tbl) in tables.iter_mut().enumerate() {
                    if tbl.rows > 0 {
                        out(&self.specs[t].name, tbl.finish(&self.specs[t]));
                    }
                }
                pending_bytes = 0;
            }
        }
        let end_ts = last_ts.unwrap_or(0);
        while lost_ts.len() < lost.len() {
            lost_ts.push(end_ts);
        }
        for (t, tbl) in tables.iter_mut().enumerate() {
            if tbl.rows > 0 {
                out(&self.specs[t].name, tbl.finish(&self.specs[t]));
            }
        }
        if !lost.is_empty() {
            let n = lost.len();
            let (mut cpu, mut ts, mut count, mut next) =
                (IntCol::new(4, true, n), IntCol::new(8, true, n), IntCol::new(8, false, n), IntCol::new(8, false, n));
            for ((c, k, x), t) in lost.iter().zip(&lost_ts) {
                cpu.push(*c as u32 as u64);
                ts.push(*t as u64);
                match k {
                    Some(k) => count.push(*k),
                    None => count.push_null(),
                }
                match x {
                    Some(x) => next.push(*x),
                    None => next.push_null(),
                }
            }
            let cols: Vec<ArrayRef> = vec![cpu.finish(), ts.finish(), count.finish(), next.finish()];
            out(LOST_TABLE, RecordBatch::try_new(lost_schema(), cols).expect("lost batch"));
        }
        progress.store(self.map.len() as u64, Ordering::Relaxed);
        if let Some((no, name)) = &first_beyond {
            // First: it costs whole event types, where other damage costs a line or a value.
            let types = if beyond_types.len() >= MAX_EVENT_TYPES { format!("{MAX_EVENT_TYPES} or more") } else { beyond_types.len().to_string() };
            damage.insert(
                0,
                format!(
                    "line {no}: event type {:?} beyond the limit of {MAX_EVENT_TYPES} types: {beyond} events of {types} types skipped",
                    truncate(name, 60)
                ),
            );
        }
        let mut stats = vec![
            Stat::new("lines", None, Severity::Info, lines_seen, "lines read"),
            Stat::new("events", None, Severity::Info, id, "event lines decoded"),
            Stat::new(
                "malformed_lines",
                None,
                Severity::Error,
                malformed,
                "lines that are neither events, headers nor lost-event markers (skipped)",
            ),
            Stat::new(
                "events_beyond_type_limit",
                None,
                Severity::DataLoss,
                beyond,
                "events of the types past the limit of distinct event types a text capture may have (skipped; counted in malformed_lines too)",
            ),
            Stat::new("bad_timestamps", None, Severity::Error, bad_ts, "event lines whose timestamp could not be read (skipped)"),
            Stat::new("long_lines", None, Severity::Error, too_long, "lines longer than 65536 bytes (skipped, never stored)"),
            Stat::new(
                "bad_values",
                None,
                Severity::Error,
                bad_values,
                "field values that are not of the type most of the field's values have (stored as NULL)",
            ),
        ];
        let mut by_cpu: std::collections::BTreeMap<i32, (u64, u64, u64)> = Default::default();
        for (c, k, _) in &lost {
            let e = by_cpu.entry(*c).or_default();
            e.0 += k.unwrap_or(0);
            e.1 += 1;
            e.2 += k.is_none() as u64;
        }
        for (c, (n, markers, unknown)) in by_cpu {
            stats.push(Stat::new(
                "lost_events",
                Some(c),
                Severity::DataLoss,
                n,
                "events the kernel dropped (from the text's lost-event markers)",
            ));
            stats.push(Stat::new("lost_event_markers", Some(c), Severity::DataLoss, markers, "lost-event markers in the text"));
            stats.push(Stat::new(
                "lost_events_uncounted",
                Some(c),
                Severity::DataLoss,
                unknown,
                "markers that do not say how many events were lost",
            ));
        }
        if let Some((inbuf, written)) = self.header.entries {
            stats.push(Stat::new("overwritten_entries", None, Severity::DataLoss, written.saturating_sub(inbuf), "events written to the ring buffer but overwritten before it was read (tracefs header entries-written minus entries-in-buffer)"));
        }
        RunReport { damaged: malformed + bad_ts + too_long + bad_values > 0, stats, events: id, first_ts, last_ts, damage, ..RunReport::default() }
    }
}

/// A printer rounds each time to its last digit (trace-cmd report: the microsecond), and
/// events of the same microsecond keep their order only in the file, which is the order
/// the kernel recorded them in (per-CPU buffers merged by time). A writeback episode of
/// ext4's journal commit is three events in two microseconds:
///
/// ```text
/// jbd2/loop0-8-28025 [000] 43525.819733: writeback_dirty_folio: bdi 7:0: ino=131305 index=15
/// jbd2/loop0-8-28025 [000] 43525.819734: sb_mark_inode_writeback: dev 7,0 ino 131305 ...
/// jbd2/loop0-8-28025 [000] 43525.819734: sb_clear_inode_writeback: dev 7,0 ino 131305 ...
/// ```
///
/// Sorted by a time that ties, the clear may come before its mark. So the k-th line of a
/// run printed at the same time is stored k ns later (at most one unit less than the
/// printed unit): 43525.819734000 and 43525.819734001. A time stays within its printed
/// unit, and a sort by time keeps the file's order. Times printed in ns or in clock
/// ticks are stored as printed.
struct Ties {
    unit: i64,
    last: Option<i64>,
    rank: i64,
}

impl Ties {
    fn new(digits: usize) -> Ties {
        let unit = if (1..9).contains(&digits) { 10i64.pow(9 - digits as u32) } else { 1 };
        Ties { unit, last: None, rank: 0 }
    }

    fn ts(&mut self, printed: i64) -> i64 {
        if self.unit == 1 {
            return printed;
        }
        self.rank = if self.last == Some(printed) { self.rank + 1 } else { 0 };
        self.last = Some(printed);
        printed.saturating_add(self.rank.min(self.unit - 1))
    }
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

enum TextCol {
    Int(IntCol),
    Text(StringBuilder),
}

struct TextTable {
    keys: Vec<String>,
    id: IntCol,
    ts: IntCol,
    cpu: IntCol,
    pid: IntCol,
    tgid: Option<IntCol>,
    comm: StringBuilder,
    flags: Option<(StringBuilder, IntCol)>,
    cols: Vec<TextCol>,
    info: StringBuilder,
    rows: usize,
}

impl TextTable {
    fn new(spec: &TableSpec, shape: &Shape, cap: usize) -> Self {
        let cap = cap.min(4096);
        let has = |role: usize| spec.physical_common.contains(&spec.common_names[role]);
        TextTable {
            keys: shape.keys.clone(),
            id: IntCol::new(8, false, cap),
            ts: IntCol::new(8, true, cap),
            cpu: IntCol::new(4, true, cap),
            pid: IntCol::new(4, true, cap),
            tgid: has(4).then(|| IntCol::new(4, true, cap)),
            comm: StringBuilder::new(),
            flags: has(6).then(|| (StringBuilder::new(), IntCol::new(1, false, cap))),
            cols: spec.schema.fields()[spec.physical_common.len()..spec.schema.fields().len() - 1]
                .iter()
                .map(|f| match f.data_type() {
                    DataType::Int64 => TextCol::Int(IntCol::new(8, true, cap)),
                    DataType::UInt64 => TextCol::Int(IntCol::new(8, false, cap)),
                    _ => TextCol::Text(StringBuilder::new()),
                })
                .collect(),
            info: StringBuilder::new(),
            rows: 0,
        }
    }

    /// Append one event; returns how many of its values did not fit their column.
    fn push(&mut self, id: u64, ts: i64, ev: &EventLine, pairs: &[(&str, Cow<str>)], info: &str) -> u64 {
        let mut bad = 0u64;
        self.id.push(id);
        self.ts.push(ts as u64);
        self.cpu.push(ev.cpu as u32 as u64);
        self.pid.push(ev.pid as u32 as u64);
        if let Some(t) = &mut self.tgid {
            match ev.tgid.flatten() {
                Some(g) => t.push(g as u32 as u64),
                None => t.push_null(),
            }
        }
        self.comm.append_value(ev.comm);
        if let Some((f, p)) = &mut self.flags {
            match ev.flags {
                Some(s) => {
                    f.append_value(s);
                    // The 4th flag column is the preempt depth: '.' or a hex digit.
                    match s.as_bytes().get(3) {
                        Some(b'.') => p.push(0),
                        Some(c) if c.is_ascii_hexdigit() => p.push((*c as char).to_digit(16).unwrap_or(0) as u64),
                        _ => p.push_null(),
                    }
                }
                None => {
                    f.append_null();
                    p.push_null();
                }
            }
        }
        for (key, col) in self.keys.iter().zip(self.cols.iter_mut()) {
            let v = pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_ref());
            match (col, v) {
                (TextCol::Int(c), Some(v)) => match parse_int(v) {
                    Some((x, _)) => c.push(x as u64),
                    None => {
                        bad += !v.is_empty() as u64;
                        c.push_null()
                    }
                },
                (TextCol::Int(c), None) => c.push_null(),
                (TextCol::Text(c), Some(v)) => push_text(c, v.as_bytes()),
                (TextCol::Text(c), None) => c.append_null(),
            }
        }
        self.info.append_value(info);
        self.rows += 1;
        bad
    }

    fn finish(&mut self, spec: &TableSpec) -> RecordBatch {
        let mut cols: Vec<ArrayRef> = vec![self.id.finish(), self.ts.finish(), self.cpu.finish(), self.pid.finish()];
        if let Some(t) = &mut self.tgid {
            cols.push(t.finish());
        }
        cols.push(Arc::new(self.comm.finish()));
        if let Some((f, p)) = &mut self.flags {
            cols.push(Arc::new(f.finish()));
            cols.push(p.finish());
        }
        for c in &mut self.cols {
            cols.push(match c {
                TextCol::Int(c) => c.finish(),
                TextCol::Text(c) => Arc::new(c.finish()),
            });
        }
        cols.push(Arc::new(self.info.finish()));
        self.rows = 0;
        RecordBatch::try_new(spec.schema.clone(), cols).expect("text batch matches its schema")
    }
}

impl TraceSource for TextTrace {
    fn format(&self) -> &'static str {
        "ftrace-text"
    }

    fn side_tables(&self) -> Vec<(&'static str, arrow_schema::SchemaRef)> {
        // Text has no saved cmdlines: `tasks` is what the lines themselves show.
        vec![(LOST_TABLE, lost_schema()), (crate::tracedat::TASKS_TABLE, crate::tracedat::tasks_schema())]
    }

    fn info(&self) -> Vec<(String, String)> {
        let mut v = vec![
            ("format".to_string(), "ftrace-text".to_string()),
            ("text_variant".to_string(), self.header.variant.unwrap_or("").to_string()),
            (
                "ts_precision".to_string(),
                match self.ts_digits {
                    0 => "clock ticks (no decimal point)".to_string(),
                    9 => "ns".to_string(),
                    6 => "us (rounded to the nearest microsecond by the printer; the k-th line of one microsecond is stored k ns after it, to keep the file's order)".to_string(),
                    d @ 1..=8 => format!("{d} decimal digits (the k-th line of one printed time is stored k ns after it, to keep the file's order)"),
                    d => format!("{d} decimal digits"),
                },
            ),
            ("ts_unit".to_string(), if self.ts_digits == 0 { "clock ticks" } else { "ns" }.to_string()),
        ];
        if let Some(t) = &self.header.tracer {
            v.push(("tracer".into(), t.clone()));
        }
        if let Some(c) = self.header.cpus {
            v.push(("cpus".into(), c.to_string()));
        }
        if let Some((a, b)) = self.header.entries {
            v.push(("entries_in_buffer".into(), a.to_string()));
            v.push(("entries_written".into(), b.to_string()));
        }
        v
    }

    fn specs(&self) -> Vec<TableSpec> {
        self.specs.clone()
    }

    fn total_bytes(&self) -> u64 {
        self.map.len() as u64
    }

    fn run(self: Box<Self>, limits: Limits, progress: &AtomicU64, out: &mut dyn FnMut(&str, RecordBatch)) -> RunReport {
        self.decode(limits, progress, out)
    }
}

#[cfg(test)]
mod tests {
    use super::Ties;

    #[test]
    fn lines_of_one_microsecond_keep_their_order() {
        let mut t = Ties::new(6);
        let printed = [733_000, 734_000, 734_000, 734_000, 735_000, 734_000];
        assert_eq!(printed.map(|p| t.ts(p)), [733_000, 734_000, 734_001, 734_002, 735_000, 734_000]);
        let mut ns = Ties::new(9);
        assert_eq!([5, 5].map(|p| ns.ts(p)), [5, 5]);
        let mut ms = Ties::new(3);
        assert_eq!([7_000_000; 3].map(|p| ms.ts(p)), [7_000_000, 7_000_001, 7_000_002]);
    }
}
