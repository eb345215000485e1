//! `advisor io` read straight from blktrace records: the figures of its
//! btt-style summary gathered while the records are merged, with no store.
//!
//! `advisor/io/summary.py` computes the same summary with SQL over a store
//! (stores, incidents with a trace.dat, blkparse text); this module is its
//! fast path for binary blktrace input and must answer exactly as it does
//! (tests/cli/test_io_paths.py compares both on every sample). Each figure
//! below names the SQL it follows.
//!
//! What it holds is bounded by `MAX_HELD_BYTES`: btt's phase values (for exact
//! percentiles), one entry per issued and completed request (for D2C per
//! request) and one per seek (for the median and mode). Past the bound the
//! caller is told (`Summary::over_bound`) and reads the capture into a store
//! instead.

mod output;
mod request_d2c;
mod stats;

use rustc_hash::FxHashMap;

use super::action::{self, ta, tc};
use super::btt::{end_sector, Phase, Sample};
use super::record::Record;
use super::tables::DeviceRow;
pub use output::render;

/// What the summary may hold in memory (phase values, requests, seeks).
pub const MAX_HELD_BYTES: usize = 160 << 20;

/// Consecutive D (or Q) records of one device, as btt's seek.c sees them.
#[derive(Default)]
struct Seeks {
    /// Start and end of the previous record; (0, 0) before the first
    /// (the SQL's `coalesce(lag(...), 0)`).
    prev: (u128, u128),
    dists: Vec<u128>,
}

impl Seeks {
    /// btt's seek_dist: 0 when this record overlaps the previous one, else
    /// the gap from the previous end (forward) or start (backward).
    fn add(&mut self, s: u128, e: u128) {
        let (ps, pe) = self.prev;
        let d = if (ps <= s && s <= pe) || (ps <= e && e <= pe) {
            0
        } else if s > pe {
            s - pe
        } else {
            ps - s
        };
        self.dists.push(d);
        self.prev = (s, e);
    }
}

/// Completed I/O of one kind: count and bytes.
#[derive(Default, Clone, Copy)]
struct Done {
    n: u64,
    bytes: u128,
}

/// Per device, from the records themselves.
#[derive(Default)]
struct Dev {
    /// Id of its first Q or A record: seeks and merges count from there on
    /// (`_FOLLOWED`: btt's pre-culling).
    follow_from: Option<u64>,
    /// Seeks of D records [0] and Q records [1].
    seeks: [Seeks; 2],
    /// Sizes (sectors) of the completions followed: (min, max, total).
    c_sectors: Option<(u64, u64, u128)>,
    /// Completions by kind: no data, discard, write, read.
    done: [Done; 4],
    /// Has records other than notes and packet commands (`blk_device_roles`
    /// lists only these).
    counted: bool,
    /// Q, D and X records (packet commands left out), for the device's role.
    queued: u64,
    issued: u64,
    splits: u64,
    /// A records whose bios came from this device, and the least name
    /// (`8,0` < `8,16` as strings) of the devices they went to.
    remapped_away: u64,
    remapped_to: Option<String>,
    /// btt's values of the bios queued here, by phase (`io_phases`).
    values: [Vec<u64>; 11],
    /// D2C [0] and Q2C [1] by the task that queued the bio (`io_phases` by comm).
    tasks: FxHashMap<u32, [Agg; 2]>,
}

/// The kinds of completion, in the order of their names' sort.
pub(crate) const DIRECTIONS: [&str; 4] = ["discard", "no data", "read", "write"];

/// Count, sum and max of one process's values.
#[derive(Default, Clone, Copy)]
pub(crate) struct Agg {
    pub n: u64,
    pub sum: u128,
    pub max: u64,
}

impl Agg {
    pub fn add(&mut self, v: u64) {
        self.n += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }

    pub fn merge(&mut self, o: &Agg) {
        self.n += o.n;
        self.sum += o.sum;
        self.max = self.max.max(o.max);
    }
}

#[derive(Default)]
pub struct Summary {
    devs: FxHashMap<u32, Dev>,
    /// D2C per issued request, from the D and C records with data.
    d2c: request_d2c::RequestD2c,
    held: usize,
    over: bool,
    /// Set by `close`: the parser's per-device rows and task names.
    facts: Vec<DeviceRow>,
    names: FxHashMap<u32, String>,
}

impl Summary {
    /// Past `MAX_HELD_BYTES`: the summary stopped gathering and is not valid.
    pub fn over_bound(&self) -> bool {
        self.over
    }

    fn hold(&mut self, bytes: usize) -> bool {
        self.held += bytes;
        if self.held > MAX_HELD_BYTES && !self.over {
            self.over = true;
            // Give back what was held: nothing of it will be shown.
            *self = Summary { over: true, held: self.held, ..Summary::default() };
        }
        !self.over
    }

    /// Every record, in blkparse's order, with its `blk_events` id.
    pub fn record(&mut self, id: u64, r: &Record) {
        if self.over || action::is_notify(r.h.action) {
            return;
        }
        let known = self.devs.len();
        let seek = self.count(id, r);
        // What this record added to memory: devices first seen (a capture of
        // made-up device numbers must not grow it unseen), a seek distance, a request.
        let request = match action::code(r.h.action) {
            ta::ISSUE if r.h.bytes > 0 && action::category(r.h.action) & tc::PC == 0 => request_d2c::ISSUE_BYTES,
            ta::COMPLETE if r.h.bytes > 0 && action::category(r.h.action) & tc::PC == 0 => request_d2c::COMPLETION_BYTES,
            _ => 0,
        };
        let devices = (self.devs.len() - known) * std::mem::size_of::<Dev>();
        if !self.hold(devices + if seek { 16 } else { 0 } + request) || request == 0 {
            return;
        }
        if action::code(r.h.action) == ta::ISSUE {
            self.d2c.issue(r.h.device, r.h.sector, r.h.time, id);
        } else {
            self.d2c.complete(r.h.device, r.h.sector, r.h.time);
        }
    }

    /// The per-device counts of one record (not a note); true when it added a seek.
    fn count(&mut self, id: u64, r: &Record) -> bool {
        let a = r.h.action;
        let code = action::code(a);
        let pc = action::category(a) & tc::PC != 0;
        if code == ta::REMAP {
            if let Some((from, _, _)) = r.remap().filter(|x| x.0 != r.h.device) {
                let to = super::tables::dev_name(r.h.device);
                let src = self.devs.entry(from).or_default();
                src.remapped_away += 1;
                if src.remapped_to.as_ref().map_or(true, |t| to < *t) {
                    src.remapped_to = Some(to);
                }
            }
        }
        let dev = self.devs.entry(r.h.device).or_default();
        if dev.follow_from.is_none() && (code == ta::QUEUE || code == ta::REMAP) {
            dev.follow_from = Some(id);
        }
        dev.counted |= !pc;
        if pc || code == ta::REMAP {
            return false;
        }
        match code {
            ta::QUEUE => dev.queued += 1,
            ta::ISSUE => dev.issued += 1,
            ta::SPLIT => dev.splits += 1,
            _ => {}
        }
        if code == ta::COMPLETE {
            let kind = if r.h.bytes == 0 {
                1
            } else if action::category(a) & tc::DISCARD != 0 {
                0
            } else if action::category(a) & tc::WRITE != 0 {
                3
            } else {
                2
            };
            dev.done[kind].n += 1;
            dev.done[kind].bytes += r.h.bytes as u128;
        }
        if r.h.bytes == 0 || dev.follow_from.is_none() {
            return false;
        }
        let (s, e) = (r.h.sector as u128, end_sector(r.h.sector, r.h.bytes));
        match code {
            ta::ISSUE | ta::QUEUE => {
                dev.seeks[(code == ta::QUEUE) as usize].add(s, e);
                return true;
            }
            ta::COMPLETE => {
                let n = (r.h.bytes >> 9) as u64;
                dev.c_sectors = Some(match dev.c_sectors {
                    None => (n, n, n as u128),
                    Some((lo, hi, t)) => (lo.min(n), hi.max(n), t + n as u128),
                });
            }
            _ => {}
        }
        false
    }

    /// btt's phase values as the tracker finds them.
    pub fn samples(&mut self, samples: &[Sample]) {
        if self.over || !self.hold(samples.len() * 8) {
            return;
        }
        // Runs of one device and task: one lookup each, not one per value.
        for run in samples.chunk_by(|a, b| a.device == b.device) {
            let dev = self.devs.entry(run[0].device).or_default();
            for s in run {
                dev.values[s.phase as usize].push(s.ns);
            }
            for task in run.chunk_by(|a, b| a.pid == b.pid) {
                let mut aggs = [Agg::default(); 2];
                for s in task {
                    match s.phase {
                        Phase::D2C => aggs[0].add(s.ns),
                        Phase::Q2C => aggs[1].add(s.ns),
                        _ => {}
                    }
                }
                if aggs.iter().any(|a| a.n > 0) {
                    let slot = dev.tasks.entry(task[0].pid).or_default();
                    slot[0].merge(&aggs[0]);
                    slot[1].merge(&aggs[1]);
                }
            }
        }
    }

    /// End of input: the per-device rows and task names the store would hold.
    pub fn close(&mut self, facts: Vec<DeviceRow>, names: FxHashMap<u32, String>) {
        self.facts = facts;
        self.names = names;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blktrace::record::Header;

    fn rec(code: u32, t: u64, sector: u64) -> Record {
        let h = Header {
            version: 7,
            sequence: 0,
            time: t,
            sector,
            bytes: 4096,
            action: ((tc::READ | tc::QUEUE) << 16) | code,
            pid: 1,
            device: 8 << 20,
            cpu: 0,
            error: 0,
            pdu_len: 0,
        };
        Record { h, cgroup: None, pdu: vec![] }
    }

    #[test]
    fn past_the_bound_it_lets_go_and_says_so() {
        let mut s = Summary::default();
        s.record(0, &rec(ta::QUEUE, 1, 8));
        s.record(1, &rec(ta::ISSUE, 2, 8));
        assert!(!s.over_bound() && s.held > 0);
        s.held = MAX_HELD_BYTES - 8;
        s.record(2, &rec(ta::COMPLETE, 3, 8));
        assert!(s.over_bound());
        assert!(s.devs.is_empty(), "what was held is given back");
        s.record(3, &rec(ta::QUEUE, 4, 16));
        assert!(s.devs.is_empty(), "and nothing more is gathered");
    }
}
