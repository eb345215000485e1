//! trace-cmd `trace.dat` files (versions 6 and 7) to Arrow record batches.

pub mod compress;
pub mod cpu;
pub mod decode;
pub mod fields;
pub mod header;
pub mod options;
pub mod parallel;
pub mod prefetch;
pub mod ring;
pub mod spans;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::bytes::Endian;
use crate::columns::IntCol;
use crate::error::{ParseError, Result};
use crate::format::EventFormat;
use crate::stats::{Severity, Stat};
use cpu::{CpuStream, StreamConfig};
use decode::{Common, DecodeStats, Decoder, EventSink};
use header::Metadata;
use options::Tsc2Nsec;
use ring::Missed;
use rustc_hash::FxHashMap;

pub struct TraceDat {
    pub path: PathBuf,
    map: crate::data::Data,
    pub meta: Metadata,
    /// Mapped input is released in steps of at least this many bytes per CPU
    /// stream (one madvise call per step); see [`crate::data::Data::release`].
    pub release_step: u64,
    /// Threads that inflate compressed CPU data ahead of the merge (0: the
    /// merging thread inflates each chunk as it reaches it); see [`prefetch`].
    pub inflate_threads: usize,
}

/// What a run found besides the events.
#[derive(Debug, Default)]
pub struct RunReport {
    pub stats: Vec<Stat>,
    pub events: u64,
    pub first_ts: Option<i64>,
    pub last_ts: Option<i64>,
    /// True when some data could not be read (the store is partial).
    pub damaged: bool,
    /// One line per damaged place, for the user.
    pub damage: Vec<String>,
    /// Facts found while reading (for `trace_info`).
    pub info: Vec<(String, String)>,
    /// Bytes of the mapped input handed back to the kernel as they were read.
    pub released_bytes: u64,
}

pub const LOST_TABLE: &str = "lost_events";
pub const TASKS_TABLE: &str = "tasks";
pub const PRINTK_TABLE: &str = "printk_strings";
pub const KALLSYMS_TABLE: &str = "kallsyms";
/// The events read from a trace instance other than the top one: (id, instance).
pub const INSTANCE_TABLE: &str = "instance_events";
/// Rows per `syscall_spans` batch.
const SPAN_BATCH_ROWS: usize = 65536;
/// Default [`TraceDat::release_step`].
pub const RELEASE_STEP: u64 = 4 << 20;

pub fn tasks_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("pid", DataType::Int32, false),
        Field::new("comm", DataType::Utf8, true),
        Field::new("tgid", DataType::Int32, true),
    ]))
}

pub fn printk_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("address", DataType::UInt64, false), Field::new("text", DataType::Utf8, false)]))
}

pub fn kallsyms_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("address", DataType::UInt64, false),
        Field::new("type", DataType::Utf8, false),
        Field::new("name", DataType::Utf8, false),
        Field::new("module", DataType::Utf8, true),
        Field::new("line", DataType::UInt32, false),
        Field::new("next_address", DataType::UInt64, true),
    ]))
}

pub fn instance_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("id", DataType::UInt64, false), Field::new("instance", DataType::Utf8, false)]))
}

/// Rows of `instance_events`, handed out as they fill, and the events of each type
/// each buffer held (only when the capture has instances).
struct InstanceRows {
    names: Vec<String>,
    ids: Vec<u64>,
    which: Vec<usize>,
    /// (event type id, buffer: 0 the top one, k instance k - 1) → events.
    per_buffer: FxHashMap<(u16, usize), u64>,
}

impl InstanceRows {
    const BATCH: usize = 65536;

    fn push(&mut self, id: u64, instance: usize, out: &mut dyn FnMut(&str, RecordBatch)) {
        self.ids.push(id);
        self.which.push(instance);
        if self.ids.len() >= Self::BATCH {
            self.flush(out);
        }
    }

    #[inline]
    fn count(&mut self, buffer: usize, payload: &[u8], e: Endian) {
        if payload.len() >= 2 {
            *self.per_buffer.entry((e.u16([payload[0], payload[1]]), buffer)).or_default() += 1;
        }
    }

    /// Event types recorded in more than one buffer. The kernel writes an event to
    /// every buffer that enables it, so `trace-cmd record -e sched_switch -B wa -e
    /// sched_switch` stores each switch twice and `trace-cmd report` prints both.
    fn doubled(&self, formats: &[EventFormat], buffer_name: impl Fn(usize) -> String) -> Vec<Stat> {
        let mut by_type: FxHashMap<u16, Vec<(usize, u64)>> = FxHashMap::default();
        for (&(t, b), &n) in &self.per_buffer {
            by_type.entry(t).or_default().push((b, n));
        }
        let mut out = Vec::new();
        for (t, mut held) in by_type.into_iter().filter(|(_, h)| h.len() > 1) {
            held.sort();
            let Some(f) = formats.iter().find(|f| f.id == t as u32) else { continue };
            let most = held.iter().map(|h| h.1).max().unwrap_or(0);
            let extra = held.iter().map(|h| h.1).sum::<u64>() - most;
            let each = held.iter().map(|&(b, n)| format!("{} {n}", buffer_name(b))).collect::<Vec<_>>().join(", ");
            out.push(Stat::new(
                &format!("in_two_buffers:{}:{}", f.system, f.name),
                None,
                Severity::Warning,
                extra,
                &format!(
                    "{}:{} was recorded in {} trace buffers ({each}): the kernel writes an event to every buffer \
                     that enables it, so its table holds each occurrence up to {} times (instance_events names the \
                     buffer of each event; the domain views read only the fullest buffer's); the count is the events \
                     beyond the fullest buffer's",
                    f.system,
                    f.name,
                    held.len(),
                    held.len()
                ),
            ));
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    fn flush(&mut self, out: &mut dyn FnMut(&str, RecordBatch)) {
        if self.ids.is_empty() {
            return;
        }
        let ids = arrow_array::UInt64Array::from(std::mem::take(&mut self.ids));
        let names = arrow_array::StringArray::from_iter_values(self.which.drain(..).map(|i| self.names[i].as_str()));
        out(INSTANCE_TABLE, RecordBatch::try_new(instance_schema(), vec![Arc::new(ids), Arc::new(names)]).expect("instance batch"));
    }
}

pub fn lost_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("cpu", DataType::Int32, false),
        Field::new("ts", DataType::Int64, false),
        Field::new("count", DataType::UInt64, true),
        Field::new("next_event_id", DataType::UInt64, true),
    ]))
}

/// Convert a raw ring-buffer timestamp the way trace-cmd report does:
/// TSC cycles to ns when the file has a TSC2NSEC option, then the DATE /
/// OFFSET shift.
#[derive(Debug, Clone, Copy)]
pub struct TimeConv {
    tsc: Option<Tsc2Nsec>,
    offset: i64,
}

impl TimeConv {
    #[inline]
    pub fn ns(&self, raw: u64) -> i64 {
        let t = match self.tsc {
            // trace-cmd's mul_u64_u32_shr: split to avoid 128-bit math, same wrap.
            Some(c) => {
                let (al, ah) = (raw & 0xffff_ffff, raw >> 32);
                let mul = c.mult as u64;
                let mut r = al.wrapping_mul(mul) >> c.shift;
                if ah != 0 {
                    r = r.wrapping_add(ah.wrapping_mul(mul) << (32 - c.shift));
                }
                r
            }
            None => raw,
        };
        (t as i64).wrapping_add(self.offset)
    }
}

impl TraceDat {
    pub fn open(path: &Path) -> Result<TraceDat> {
        TraceDat::from_data(path, crate::data::Data::map(path)?)
    }

    /// Parse the metadata of a trace.dat held in `map`; `path` names it in errors.
    pub fn from_data(path: &Path, map: crate::data::Data) -> Result<TraceDat> {
        if map.is_empty() {
            return Err(ParseError::UnknownFormat { path: path.to_path_buf(), reason: "empty file".into() });
        }
        let meta = header::parse(&map).map_err(|d| {
            if d.offset == 0 && d.reason.starts_with("no trace.dat magic") {
                ParseError::UnknownFormat { path: path.to_path_buf(), reason: d.reason }
            } else {
                d.at(path)
            }
        })?;
        if meta.latency {
            return Err(ParseError::Unsupported {
                path: path.to_path_buf(),
                reason: "latency-format trace.dat (text data) is not supported; ingest `trace-cmd report` output instead".into(),
            });
        }
        Ok(TraceDat { path: path.to_path_buf(), map, meta, release_step: RELEASE_STEP, inflate_threads: 0 })
    }

    pub fn file_len(&self) -> u64 {
        self.map.len() as u64
    }

    pub fn time_conv(&self) -> TimeConv {
        TimeConv { tsc: self.meta.options.tsc2nsec, offset: self.meta.options.ts_offset }
    }

    /// Facts about the capture for the `trace_info` table.
    pub fn info(&self) -> Vec<(String, String)> {
        let m = &self.meta;
        let o = &m.options;
        let mut v: Vec<(String, String)> = Vec::new();
        let mut put = |k: &str, val: String| v.push((k.to_string(), val));
        put("format", "trace.dat".into());
        put("file_version", m.version.to_string());
        put(
            "compression",
            match &m.compression {
                Some((n, ver)) if n != "none" => format!("{n} {ver}"),
                _ => "none".into(),
            },
        );
        put("endian", format!("{:?}", m.endian).to_lowercase());
        put("long_size", m.long_size.to_string());
        put("page_size", m.page_size.to_string());
        put("data_page_size", m.data_page_size.to_string());
        if let Some(u) = &o.uname {
            put("uname", u.clone());
            // trace-cmd writes "sysname nodename release version machine".
            if let Some(r) = u.split_whitespace().nth(2) {
                put("kernel_release", r.to_string());
            }
        }
        let clock = o.clock.clone().unwrap_or_else(|| "local".into());
        // The kernel's trace_clocks[] marks which clocks count nanoseconds (in_ns): not
        // "counter", "x86-tsc" nor "uptime" (trace_clock_jiffies: jiffies as clock_t,
        // hundredths of a second; 84050.04 s of uptime is 8405004, which `trace-cmd
        // report` prints as if it were nanoseconds, 0.008405004).
        let ns_clocks = ["local", "global", "perf", "mono", "mono_raw", "boot", "tai", "x86-tsc-nsec"];
        let unit = if o.tsc2nsec.is_some() || ns_clocks.contains(&clock.as_str()) { "ns" } else { "clock ticks" };
        put("clock", clock);
        put("ts_unit", unit.into());
        if let Some(t) = &o.tracer_version {
            put("tool", format!("trace-cmd {t}"));
        }
        if let Some(c) = o.cpu_count {
            put("cpus", c.to_string());
        }
        put("cpus_with_data", m.cpus.iter().filter(|c| c.size > 0).count().to_string());
        if !m.instances.is_empty() {
            put("instances", m.instances.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(","));
        }
        if let Some(id) = o.trace_id {
            put("trace_id", format!("{id:#x}"));
        }
        if let Some(d) = &o.date {
            put("date_option", d.clone());
        }
        if o.ts_offset != 0 {
            put("ts_offset_ns", o.ts_offset.to_string());
        }
        if let Some(t) = o.tsc2nsec {
            put("tsc2nsec", format!("mult={} shift={} offset={}", t.mult, t.shift, t.offset));
        }
        if o.time_shift {
            put("time_shift", "present in the file; guest/host time synchronisation is not applied".into());
        }
        if !m.other_instances.is_empty() {
            put("instances_not_ingested", m.other_instances.join(","));
        }
        put("kallsyms_bytes", m.kallsyms_bytes.to_string());
        put("kallsyms_symbols", m.kallsyms.len().to_string());
        if let Some(n) = &m.kallsyms_note {
            put("kallsyms_unread", n.clone());
        }
        if let Some(n) = &m.strings_note {
            put("strings_unread", n.clone());
        }
        put("saved_cmdlines", m.cmdlines.len().to_string());
        put("printk_strings", m.printk_strings.len().to_string());
        put("event_formats", m.formats.len().to_string());
        v
    }

    pub fn decoder(&self, batch_rows: usize, max_pending_bytes: usize) -> Decoder {
        Decoder::new(&self.meta.formats, self.meta.endian, batch_rows, max_pending_bytes)
    }

    /// Decode every event, merged across CPUs in time order (ties by CPU, as
    /// trace-cmd does), handing finished batches to `out`. `progress` counts
    /// bytes of CPU data consumed.
    pub fn run<S: EventSink>(&self, dec: &mut S, progress: &AtomicU64, out: &mut dyn FnMut(&str, RecordBatch)) -> RunReport {
        if self.inflate_threads == 0 || !self.meta.cpu_compressed {
            return self.run_streams(dec, progress, out, None);
        }
        // The workers borrow the mapped file: they end with the scope, once
        // the streams (which hold the pool's only senders) are dropped.
        std::thread::scope(|scope| {
            let pool = prefetch::Pool::start(scope, self.inflate_threads);
            self.run_streams(dec, progress, out, pool)
        })
    }

    fn run_streams<'a, S: EventSink>(
        &'a self,
        dec: &mut S,
        progress: &AtomicU64,
        out: &mut dyn FnMut(&str, RecordBatch),
        pool: Option<prefetch::Pool<'a>>,
    ) -> RunReport {
        let m = &self.meta;
        // Each stream is one CPU of the top instance (0) or of another instance
        // (1..): `trace-cmd report` merges them all in time order, and so do we.
        let regions = self.regions();
        let instance_of: Vec<usize> = regions.iter().map(|(_, k)| *k).collect();
        let mut instances = InstanceRows {
            names: m.instances.iter().map(|(n, _)| n.clone()).collect(),
            ids: Vec::new(),
            which: Vec::new(),
            per_buffer: FxHashMap::default(),
        };
        let has_instances = !m.instances.is_empty();
        let cfg = StreamConfig {
            page_size: m.data_page_size,
            header: m.page_header,
            endian: m.endian,
            codec: if m.cpu_compressed { m.codec } else { None },
            chunk_budget: cpu::chunk_budget(regions.len(), m.data_page_size),
        };
        let mut streams: Vec<CpuStream> =
            regions.iter().map(|(c, _)| CpuStream::new(&self.map, c.cpu, c.offset, c.size, &cfg).with_pool(pool.clone())).collect();
        drop(pool);
        let conv = self.time_conv();
        let mut merge = Merge::new(streams.iter_mut().map(|s| s.next_event().map(|e| (conv.ns(e.raw_ts), e))).collect());
        let mut lost = LostBuilder::default();
        let mut spans = spans::SpanPairer::new(&m.formats, m.endian, SPAN_BATCH_ROWS);
        // Per stream: the file offset up to which its mapped bytes were released.
        let mut released: Vec<u64> = regions.iter().map(|(c, _)| c.offset).collect();
        let mut id: u64 = 0;
        let mut report = RunReport::default();
        while let Some((i, ts, e)) = merge.pop() {
            let s = &streams[i];
            if e.missed != Missed::None {
                lost.push(s.cpu, ts, e.missed, Some(id));
            }
            if spans.is_active() {
                spans.push(id, ts, s.payload(&e), out);
            }
            dec.push(Common { id, ts, cpu: s.cpu as i32 }, s.payload(&e), out);
            if has_instances {
                instances.count(instance_of[i], s.payload(&e), m.endian);
                if instance_of[i] > 0 {
                    instances.push(id, instance_of[i] - 1, out);
                }
            }
            if report.first_ts.is_none() {
                report.first_ts = Some(ts);
            }
            report.last_ts = Some(ts);
            id += 1;
            if id & 0xfff == 0 {
                progress.store(streams.iter().map(|s| s.consumed()).sum(), Ordering::Relaxed);
                // Keep resident memory independent of the trace's size.
                for (s, done) in streams.iter().zip(released.iter_mut()) {
                    let upto = s.read_from();
                    if upto >= done.saturating_add(self.release_step) {
                        report.released_bytes += self.map.release(*done, upto);
                        *done = upto;
                    }
                }
            }
            merge.refill(i, streams[i].next_event().map(|n| (conv.ns(n.raw_ts), n)));
        }
        progress.store(streams.iter().map(|s| s.consumed()).sum(), Ordering::Relaxed);
        dec.finish(out);
        spans.finish(out);
        instances.flush(out);
        report.events = id;
        // Losses flagged on pages that had no event to carry them.
        for s in &streams {
            for &(page_ts, m) in &s.orphan_losses {
                lost.push(s.cpu, conv.ns(page_ts), m, None);
            }
        }
        if let Some(b) = lost.finish() {
            out(LOST_TABLE, b);
        }
        out(TASKS_TABLE, self.tasks_batch());
        out(PRINTK_TABLE, self.printk_batch());
        out(KALLSYMS_TABLE, self.kallsyms_batch());
        report.stats = self.stats(&streams, &instance_of, dec.decode_stats());
        report.stats.extend(instances.doubled(&m.formats, |b| {
            if b == 0 {
                "top".into()
            } else {
                format!("instance {}", m.instances[b - 1].0)
            }
        }));
        if spans.evicted > 0 {
            report.stats.push(Stat::new(
                "syscall_spans_unpaired",
                None,
                Severity::DataLoss,
                spans.evicted,
                "syscalls left unpaired (no end) because more calls were open at once than a system runs tasks",
            ));
        }
        for (sys, first, why, at) in &self.meta.bad_formats {
            report.damage.push(format!("offset {at:#x}: event format {sys} {first:?} cannot be read, its events are kept raw: {why}"));
        }
        for (s, &k) in streams.iter().zip(&instance_of) {
            // A trace instance's CPU 1 is not the top buffer's CPU 1: name it.
            let whose = if k > 0 { format!("instance {}: ", m.instances[k - 1].0) } else { String::new() };
            for d in &s.damage {
                report.damage.push(format!("offset {:#x}: {whose}{}", d.offset, d.reason));
            }
        }
        // After the damage: a CPU whose table entry is wrong also leaves its
        // real pages unclaimed, and the wrong entry is the cause to name first.
        for u in &self.meta.unread {
            report.damage.push(format!("offset {:#x}: {}", u.offset, u.reason));
        }
        report.damaged = report.stats.iter().any(|s| s.severity == Severity::Error && s.count > 0);
        report
    }

    /// pid → comm from saved_cmdlines (the last name the kernel saw for
    /// each pid), plus pid 0 as `<idle>` as trace-cmd shows it. trace.dat
    /// has no thread-group ids, so `tgid` is NULL.
    pub fn tasks_batch(&self) -> RecordBatch {
        let mut rows: Vec<(i32, &str)> = self.meta.cmdlines.iter().map(|(p, c)| (*p, c.as_str())).collect();
        if !self.meta.cmdlines.contains_key(&0) {
            rows.push((0, "<idle>"));
        }
        rows.sort();
        let mut pid = IntCol::new(4, true, rows.len());
        let mut comm = arrow_array::builder::StringBuilder::new();
        let mut tgid = IntCol::new(4, true, rows.len());
        for (p, c) in rows {
            pid.push(p as u32 as u64);
            comm.append_value(c);
            tgid.push_null();
        }
        RecordBatch::try_new(tasks_schema(), vec![pid.finish(), Arc::new(comm.finish()), tgid.finish()]).expect("tasks batch")
    }

    /// The constant strings of the printk formats section, by address: what
    /// trace-cmd prints for a pointer field under %s (rcu_utilization's `s`,
    /// wbt_step's `msg`).
    pub fn printk_batch(&self) -> RecordBatch {
        let rows = &self.meta.printk_strings;
        let address = arrow_array::UInt64Array::from_iter_values(rows.iter().map(|(a, _)| *a));
        let text = arrow_array::StringArray::from_iter_values(rows.iter().map(|(_, t)| t.as_str()));
        RecordBatch::try_new(printk_schema(), vec![Arc::new(address), Arc::new(text)]).expect("printk batch")
    }

    /// The kernel symbols, in the file's order, each with the next greater
    /// address of any symbol: libtraceevent prints a pointer under %ps/%pS as
    /// the symbol at the greatest address not above it, and only when it lies
    /// below the next one (`xfs_ilock+0x19`); past the last symbol, only an
    /// exact address is named.
    pub fn kallsyms_batch(&self) -> RecordBatch {
        let rows = &self.meta.kallsyms;
        let mut starts: Vec<u64> = rows.iter().map(|k| k.address).collect();
        starts.sort_unstable();
        starts.dedup();
        let next = |a: u64| starts.get(starts.partition_point(|&x| x <= a)).copied();
        let cols: Vec<arrow_array::ArrayRef> = vec![
            Arc::new(arrow_array::UInt64Array::from_iter_values(rows.iter().map(|k| k.address))),
            Arc::new(arrow_array::StringArray::from_iter_values(rows.iter().map(|k| k.kind.to_string()))),
            Arc::new(arrow_array::StringArray::from_iter_values(rows.iter().map(|k| k.name.as_str()))),
            Arc::new(arrow_array::StringArray::from_iter(rows.iter().map(|k| k.module.as_deref()))),
            Arc::new(arrow_array::UInt32Array::from_iter_values(rows.iter().map(|k| k.line))),
            Arc::new(arrow_array::UInt64Array::from_iter(rows.iter().map(|k| next(k.address)))),
        ];
        RecordBatch::try_new(kallsyms_schema(), cols).expect("kallsyms batch")
    }

    /// The CPU data read: the top instance's CPUs in order, then each other
    /// instance's, with the instance's number (0 for the top one).
    pub fn regions(&self) -> Vec<(options::CpuData, usize)> {
        let m = &self.meta;
        let buffers = std::iter::once(&m.cpus).chain(m.instances.iter().map(|(_, c)| c));
        let mut out = Vec::new();
        for (k, cpus) in buffers.enumerate() {
            let mut cpus: Vec<_> = cpus.iter().filter(|c| c.size > 0).cloned().collect();
            cpus.sort_by_key(|c| c.cpu);
            out.extend(cpus.into_iter().map(|c| (c, k)));
        }
        out
    }

    fn stats(&self, streams: &[CpuStream], instance_of: &[usize], decoded: &DecodeStats) -> Vec<Stat> {
        let mut v = Vec::new();
        for (s, &k) in streams.iter().zip(instance_of) {
            let c = Some(s.cpu as i32);
            let first = v.len();
            let st = &s.stats;
            v.push(Stat::new("events", c, Severity::Info, st.events, "events decoded from this CPU's ring buffer"));
            v.push(Stat::new("pages", c, Severity::Info, st.pages, "ring-buffer pages read"));
            v.push(Stat::new(
                "lost_events",
                c,
                Severity::DataLoss,
                st.lost_events,
                "events the kernel dropped before a page (count stored in the page header)",
            ));
            v.push(Stat::new("lost_event_markers", c, Severity::DataLoss, st.lost_markers, "pages flagged as following dropped events"));
            v.push(Stat::new(
                "lost_events_uncounted",
                c,
                Severity::DataLoss,
                st.lost_unknown,
                "pages flagged as following dropped events whose number the kernel could not store",
            ));
            v.push(Stat::new(
                "corrupt_pages",
                c,
                Severity::Error,
                st.corrupt_pages,
                "pages whose header or events are inconsistent (skipped from the damage on)",
            ));
            v.push(Stat::new("bad_chunks", c, Severity::Error, st.bad_chunks, "compressed chunks that could not be decompressed"));
            v.push(Stat::new(
                "truncated_bytes",
                c,
                Severity::Error,
                st.truncated_bytes,
                "bytes of this CPU's data missing because the file is short",
            ));
            v.push(Stat::new("padding_entries", c, Severity::Info, st.entries.padding, "discarded-event padding entries"));
            v.push(Stat::new("time_extends", c, Severity::Info, st.entries.time_extends, "time-extend entries"));
            v.push(Stat::new("time_stamps", c, Severity::Info, st.entries.time_stamps, "absolute time-stamp entries"));
            if k > 0 {
                for stat in &mut v[first..] {
                    stat.description = format!("{} (trace instance {})", stat.description, self.meta.instances[k - 1].0);
                }
            }
        }
        for (i, text) in self.meta.options.cpustats.iter().enumerate() {
            for (key, name, sev, desc) in [
                (
                    "overrun:",
                    "kernel_overrun",
                    Severity::DataLoss,
                    "events overwritten in the kernel ring buffer (per_cpu stats at the end of recording)",
                ),
                ("commit overrun:", "kernel_commit_overrun", Severity::DataLoss, "events lost to commit overrun (per_cpu stats)"),
                ("dropped events:", "kernel_dropped_events", Severity::DataLoss, "events the kernel dropped (per_cpu stats)"),
                ("entries:", "kernel_entries_unread", Severity::Info, "entries still in the kernel buffer when trace-cmd read its stats"),
            ] {
                if let Some(n) = cpustat_value(text, key) {
                    v.push(Stat::new(name, Some(cpustat_cpu(text).unwrap_or(i as i32)), sev, n, desc));
                }
            }
        }
        let mut ids: Vec<_> = decoded.unknown_ids.iter().collect();
        ids.sort();
        for (id, n) in ids {
            v.push(Stat::new(
                &format!("unknown_event_id_{id}"),
                None,
                Severity::DataLoss,
                *n,
                "events whose type id has no format in the file (kept raw in unknown_events)",
            ));
        }
        v.push(Stat::new(
            "truncated_fields",
            None,
            Severity::Error,
            decoded.truncated_fields,
            "field values that did not fit in their event's payload (stored as NULL)",
        ));
        for (sys, first, why, _) in &self.meta.bad_formats {
            v.push(Stat::new(&format!("bad_format:{sys}:{first}"), None, Severity::Error, 1, why));
        }
        if let Some(n) = &self.meta.strings_note {
            v.push(Stat::new(
                "strings_section_unread",
                None,
                Severity::Warning,
                1,
                &format!(
                    "the file's last section (the names of its sections) cannot be read ({n}): the file was probably cut \
                     short after its event data, which was all read"
                ),
            ));
        }
        let unread: u64 = self.meta.unread.iter().map(|u| u.bytes).sum();
        if !self.meta.unread.is_empty() {
            v.push(Stat::new(
                "unread_cpu_bytes",
                None,
                Severity::DataLoss,
                unread,
                "bytes of CPU data read as no CPU's: an id beyond the CPU count, a CPU listed twice, data the CPU table leaves out \
                 (where and why: trace_info.damage)",
            ));
        }
        if let Some(note) = &self.meta.kallsyms_note {
            v.push(Stat::new(
                "kallsyms_unread",
                None,
                Severity::DataLoss,
                1,
                &format!("the kallsyms section could not be read, so pointers stay addresses (ksym() gives them in hex): {note}"),
            ));
        }
        if !self.meta.other_instances.is_empty() {
            v.push(Stat::new(
                "instances_not_ingested",
                None,
                Severity::DataLoss,
                self.meta.other_instances.len() as u64,
                &format!(
                    "trace instances that are not read (a latency-format one, another page size, a CPU table that is not there, past 8192 CPU streams in all): {}",
                    self.meta.other_instances.join(", ")
                ),
            ));
        }
        v
    }
}

/// Picks the earliest head event across CPUs; ties go to the lower CPU, as
/// in trace-cmd (its loop over CPUs keeps the first strictly smaller ts).
/// A linear scan: traces have a handful of CPUs with data, and this beats a
/// heap there; with many CPUs a heap would win.
struct Merge {
    heads: Vec<Option<(i64, cpu::Event)>>,
}

impl Merge {
    fn new(heads: Vec<Option<(i64, cpu::Event)>>) -> Self {
        Merge { heads }
    }

    #[inline]
    fn pop(&mut self) -> Option<(usize, i64, cpu::Event)> {
        let mut best: Option<(usize, i64)> = None;
        for (i, h) in self.heads.iter().enumerate() {
            if let Some((ts, _)) = h {
                if best.map_or(true, |(_, b)| *ts < b) {
                    best = Some((i, *ts));
                }
            }
        }
        let (i, ts) = best?;
        let (_, e) = self.heads[i].take()?;
        Some((i, ts, e))
    }

    #[inline]
    fn refill(&mut self, i: usize, next: Option<(i64, cpu::Event)>) {
        self.heads[i] = next;
    }
}

/// `overrun: 12` in a per_cpu stats text.
fn cpustat_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| l.trim().strip_prefix(key).and_then(|v| v.trim().parse().ok()))
}

/// trace-cmd prefixes each CPUSTAT with `CPU: N`.
fn cpustat_cpu(text: &str) -> Option<i32> {
    text.lines().find_map(|l| l.trim().strip_prefix("CPU:").and_then(|v| v.trim().parse().ok()))
}

#[derive(Default)]
struct LostBuilder {
    rows: Vec<(i32, i64, Option<u64>, Option<u64>)>,
}

impl LostBuilder {
    fn push(&mut self, cpu: u32, ts: i64, m: Missed, next: Option<u64>) {
        let count = match m {
            Missed::Count(n) => Some(n),
            _ => None,
        };
        self.rows.push((cpu as i32, ts, count, next));
    }

    fn finish(&mut self) -> Option<RecordBatch> {
        if self.rows.is_empty() {
            return None;
        }
        let n = self.rows.len();
        let (mut cpu, mut ts, mut count, mut next) =
            (IntCol::new(4, true, n), IntCol::new(8, true, n), IntCol::new(8, false, n), IntCol::new(8, false, n));
        for &(c, t, k, x) in &self.rows {
            cpu.push(c as u32 as u64);
            ts.push(t as u64);
            match k {
                Some(k) => count.push(k),
                None => count.push_null(),
            }
            match x {
                Some(x) => next.push(x),
                None => next.push_null(),
            }
        }
        Some(
            RecordBatch::try_new(lost_schema(), vec![cpu.finish(), ts.finish(), count.finish(), next.finish()]).expect("lost_events batch"),
        )
    }
}
