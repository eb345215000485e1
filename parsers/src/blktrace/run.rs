//! What every blktrace input does with its records once they are in order:
//! number them, check sequence numbers, build `blk_events`, follow requests
//! for `io_requests` / `io_phases`, and report.

use std::collections::BTreeMap;

use arrow_array::RecordBatch;
use rustc_hash::FxHashMap;

use super::action;
use super::btt::Tracker;
use super::record::Record;
use super::stream::Notes;
use super::summary::Summary;
use super::tables;
use crate::source::Limits;
use crate::stats::{Severity, Stat};
use crate::tracedat::RunReport;

/// Rows reserved per batch column at most (a caller asking for huge batches
/// gets columns that grow past this instead).
const MAX_RESERVED_ROWS: usize = 1 << 20;

/// Records of one device and CPU, and the last sequence number they had.
#[derive(Default)]
struct CpuCount {
    records: u64,
    last_seq: Option<u32>,
}

pub struct Run<'a> {
    pub notes: Notes,
    tracker: Tracker,
    /// Finished requests waiting for a full batch.
    requests: tables::RequestBuilder,
    /// btt's phase samples waiting for a full batch.
    phases: tables::PhaseBuilder,
    events: tables::EventBuilder,
    limits: Limits,
    out: &'a mut dyn FnMut(&str, RecordBatch),
    id: u64,
    first_ts: Option<u64>,
    last_ts: Option<u64>,
    /// (device, cpu) → (gaps, records missing).
    gaps: BTreeMap<(u32, u32), (u64, u64)>,
    per_cpu: FxHashMap<(u32, u32), CpuCount>,
    lost: tables::LostBuilder,
    /// device → (current, max) dispatched-but-not-completed requests, read
    /// and write, as blkparse counts its "Read depth" / "Write depth".
    depth: FxHashMap<u32, ([u32; 2], [u32; 2], u64, u64)>,
    /// `advisor io`'s summary instead of the tables: no batches are built.
    summary: Option<&'a mut Summary>,
}

impl<'a> Run<'a> {
    pub fn new(limits: Limits, out: &'a mut dyn FnMut(&str, RecordBatch)) -> Self {
        Run {
            notes: Notes::default(),
            tracker: Tracker::default(),
            requests: tables::RequestBuilder::new(limits.batch_rows.min(MAX_RESERVED_ROWS)),
            phases: tables::PhaseBuilder::new(limits.batch_rows.min(MAX_RESERVED_ROWS)),
            events: tables::EventBuilder::new(limits.batch_rows.min(MAX_RESERVED_ROWS)),
            limits,
            out,
            id: 0,
            first_ts: None,
            last_ts: None,
            gaps: BTreeMap::new(),
            per_cpu: FxHashMap::default(),
            lost: tables::LostBuilder::default(),
            depth: FxHashMap::default(),
            summary: None,
        }
    }

    /// A run that gathers `advisor io`'s summary and builds no table.
    pub fn summarize(limits: Limits, out: &'a mut dyn FnMut(&str, RecordBatch), summary: &'a mut Summary) -> Self {
        Run { summary: Some(summary), ..Run::new(limits, out) }
    }

    fn track_depth(&mut self, r: &Record) {
        let w = (action::category(r.h.action) & action::tc::WRITE != 0) as usize;
        let e = self.depth.entry(r.h.device).or_insert(([0; 2], [0; 2], r.h.time, r.h.time));
        e.3 = r.h.time;
        match action::code(r.h.action) {
            action::ta::ISSUE => {
                e.0[w] += 1;
                e.1[w] = e.1[w].max(e.0[w]);
            }
            action::ta::COMPLETE | action::ta::REQUEUE => e.0[w] = e.0[w].saturating_sub(1),
            _ => {}
        }
    }

    /// Add the next record in blkparse's order; `printed` is what a blkparse
    /// text line showed of it (binary input takes task names from the
    /// process notify records, like blkparse).
    pub fn emit(&mut self, r: Record, printed: Option<&tables::Printed>) {
        let key = (r.h.device, r.h.cpu);
        let count = self.per_cpu.entry(key).or_default();
        count.records += 1;
        if !action::is_notify(r.h.action) {
            // Sequence numbers count per device and CPU; a jump is records
            // the relay buffers dropped (blkparse's "Skips").
            if let Some(last) = count.last_seq {
                let expect = last.wrapping_add(1);
                if r.h.sequence > expect {
                    let missing = (r.h.sequence - expect) as u64;
                    let g = self.gaps.entry(key).or_default();
                    g.0 += 1;
                    g.1 += missing;
                    self.lost.push(r.h.device, r.h.cpu, r.h.time, missing, self.id);
                }
            }
            count.last_seq = Some(r.h.sequence);
            self.track_depth(&r);
        }
        self.first_ts.get_or_insert(r.h.time);
        self.last_ts = Some(r.h.time);
        self.tracker.add(self.id, &r);
        match self.summary.as_deref_mut() {
            Some(s) => s.record(self.id, &r),
            None => self.events.push(self.id, &r, printed),
        }
        self.id += 1;
        self.notes.next_id = self.id;
        if self.events.rows() >= self.limits.batch_rows {
            self.flush_events();
        }
        if self.id % 4096 == 0 {
            self.flush_requests(false);
        }
    }

    fn flush_events(&mut self) {
        let (events, details) = self.events.finish();
        (self.out)(tables::BLK_EVENTS, events);
        if let Some(d) = details {
            (self.out)(tables::BLK_DETAILS, d);
        }
    }

    /// Take the requests that can no longer change out of the tracker, and
    /// hand over full batches (all of them at the end).
    fn flush_requests(&mut self, all: bool) {
        if let Some(s) = self.summary.as_deref_mut() {
            self.tracker.drain_each(all, |_| {});
            s.samples(&self.tracker.samples);
            self.tracker.samples.clear();
            return;
        }
        let requests = &mut self.requests;
        self.tracker.drain_each(all, |r| requests.push(r));
        if requests.rows() > 0 && (all || requests.rows() >= self.limits.batch_rows) {
            (self.out)(tables::IO_REQUESTS, requests.finish());
        }
        self.phases.extend(&self.tracker.samples);
        self.tracker.samples.clear();
        if self.phases.rows() > 0 && (all || self.phases.rows() >= self.limits.batch_rows) {
            (self.out)(tables::IO_PHASES, self.phases.finish());
        }
    }

    /// Flush everything and build the report.
    pub fn finish(mut self, mut stats: Vec<Stat>, damage: Vec<String>, mut info: Vec<(String, String)>) -> RunReport {
        if self.events.rows() > 0 {
            self.flush_events();
        }
        self.flush_requests(true);
        if let Some(b) = self.lost.finish() {
            (self.out)(tables::BLK_LOST, b);
        }
        let mut names: Vec<(u32, &super::stream::TaskName)> = self.notes.names.iter().map(|(p, t)| (*p, t)).collect();
        names.sort_unstable_by_key(|x| x.0);
        (self.out)(tables::BLK_TASKS, tables::tasks_batch(&names));
        let counts: std::collections::HashMap<u32, (u64, u64, f64)> =
            self.tracker.device_counts().into_iter().map(|(d, q, n, a)| (d, (q, n, a))).collect();
        let mut depth: Vec<_> = self.depth.iter().collect();
        depth.sort_unstable_by_key(|x| *x.0);
        let rows: Vec<tables::DeviceRow> = depth
            .into_iter()
            .map(|(&dev, &(_, max, first, last))| {
                let (q, d, a) = counts.get(&dev).copied().unwrap_or((0, 0, 0.0));
                tables::DeviceRow { device: dev, first_ts: first, last_ts: last, max_depth: max, btt_q: q, btt_d: d, avg_active_at_q: a }
            })
            .collect();
        match self.summary.take() {
            Some(s) => s.close(rows, self.notes.names.iter().map(|(&p, t)| (p, t.name.clone())).collect()),
            None => (self.out)(tables::BLK_DEVICES, tables::devices_batch(&rows)),
        }
        let mut per_cpu: Vec<_> = self.per_cpu.iter().map(|(&k, n)| (k, n.records)).collect();
        per_cpu.sort_unstable();
        for &((dev, cpu), n) in &per_cpu {
            stats.push(Stat::new(
                &format!("blk_records:{}", tables::dev_name(dev)),
                Some(cpu as i32),
                Severity::Info,
                n,
                "blktrace records for this device and CPU",
            ));
        }
        // Zero rows too: "no gaps" is a finding. Records blktrace itself
        // dropped (its "dropped" count: relay buffers full) never got a
        // sequence number, so they leave no gap and no trace in the files.
        for &((dev, cpu), _) in &per_cpu {
            let (gaps, missing) = self.gaps.get(&(dev, cpu)).copied().unwrap_or((0, 0));
            stats.push(Stat::new(
                &format!("blk_lost_events:{}", tables::dev_name(dev)),
                Some(cpu as i32),
                Severity::DataLoss,
                missing,
                &format!("records missing where sequence numbers jump ({gaps} gaps; blkparse's Skips)"),
            ));
        }
        info.push((
            "blktrace_unseen_drops".into(),
            "records blktrace could not write (relay buffers full; blktrace prints them as 'dropped') take no sequence number and are invisible in the files".into(),
        ));
        stats.push(Stat::new("blk_process_records", None, Severity::Info, self.notes.process_records, "process-name notify records"));
        if let Some((t, sec, nsec)) = self.notes.wallclock {
            info.push(("blktrace_wallclock_start".into(), format!("{sec}.{nsec:09} (unix time at trace time {t})")));
        }
        let devices: std::collections::BTreeSet<String> = self.per_cpu.keys().map(|(d, _)| tables::dev_name(*d)).collect();
        info.push(("blktrace_devices".into(), devices.into_iter().collect::<Vec<_>>().join(" ")));
        // Every input that stopped at damage (bad magic, version, a cut
        // record, an unreadable file, a malformed text line) counts once.
        stats.push(Stat::new(
            "blk_damaged_inputs",
            None,
            Severity::Error,
            damage.len() as u64,
            "places where reading an input stopped or skipped because the data is damaged (trace_info.damage says where)",
        ));
        RunReport {
            damaged: !damage.is_empty(),
            damage,
            events: self.id,
            first_ts: self.first_ts.map(|t| t as i64),
            last_ts: self.last_ts.map(|t| t as i64),
            stats,
            info,
            ..RunReport::default()
        }
    }
}
