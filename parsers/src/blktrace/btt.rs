//! Following each request from queue to completion the way btt does, so the
//! phase times we store aggregate to btt's own numbers.
//!
//! btt (blktrace 1.2.0, btt/trace_*.c) keeps, per device, the queued bios
//! (Q) in a red-black tree keyed by start sector (`SectorTree`); a later Q
//! with the same start sector replaces the earlier one. G, S, I and M find
//! "their" Q as one whose sector range holds their sector; D and C take the
//! Qs lying wholly inside their own range; C removes them from the tree. Phase times use tdelta(a, b) = b - a, or 1 when b <= a.
//! Records with zero bytes and packet commands are ignored, and a device is
//! only followed from its first Q or A record on ("pre-culling").

use rustc_hash::FxHashMap;
use slab::Slab;

use super::action::{self, ta, tc};
use super::record::Record;
use super::sector_tree::{NodeId, SectorTree};

/// dm (253), md (9) and 254: btt counts their Q2Q/Q2C/Q2A separately.
pub fn is_remapper(device: u32) -> bool {
    matches!(device >> 20, 9 | 253 | 254)
}

/// One past a record's last sector. In u128, because a record near the top
/// of the u64 sector space can end past it (sector 2^64 - 4, 4096 bytes:
/// end 2^64 + 4); in u64 that wraps to 4 (btt's BIT_END, where the bio then
/// covers nothing and is never completed) or, in a debug build, panics.
/// `advisor io` computes the same ends exactly (HUGEINT).
#[inline]
pub fn end_sector(sector: u64, bytes: u32) -> u128 {
    sector as u128 + (bytes >> 9) as u128
}

#[inline]
fn tdelta(from: u64, to: u64) -> u64 {
    if from < to {
        to - from
    } else {
        1
    }
}

/// btt's phases, in the order of its output tables (and of the codes
/// `io_phases.phase` stores).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    Q2Q,
    Q2QAll,
    Q2A,
    Q2G,
    S2G,
    G2I,
    Q2M,
    I2D,
    M2D,
    D2C,
    Q2C,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Q2Q => "Q2Q",
            Phase::Q2QAll => "Q2Q_all",
            Phase::Q2A => "Q2A",
            Phase::Q2G => "Q2G",
            Phase::S2G => "S2G",
            Phase::G2I => "G2I",
            Phase::Q2M => "Q2M",
            Phase::I2D => "I2D",
            Phase::M2D => "M2D",
            Phase::D2C => "D2C",
            Phase::Q2C => "Q2C",
        }
    }
}

/// One value btt adds to a phase average (a row of `io_phases`). One bio can
/// give several: after a split, both halves' G records find the same Q.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// blk_events id of the record that ended the phase.
    pub event_id: u64,
    pub q_id: u64,
    /// The queued bio's device and task (`advisor io` groups by them).
    pub device: u32,
    pub pid: u32,
    pub phase: Phase,
    pub ns: u64,
}

/// One queued bio as btt tracks it: a row of `io_requests`.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// blk_events id of the Q record.
    pub q_id: u64,
    pub device: u32,
    pub pid: u32,
    pub action: u32,
    pub sector: u64,
    pub bytes: u32,
    pub q_time: u64,
    pub g_time: Option<u64>,
    pub s_time: Option<u64>,
    pub i_time: Option<u64>,
    pub m_time: Option<u64>,
    pub d_time: Option<u64>,
    pub c_time: Option<u64>,
    pub d_sector: Option<u64>,
    pub d_nr_sectors: Option<u32>,
    pub c_sector: Option<u64>,
    /// The last value of each phase, indexed by `Phase`.
    pub phases: [Option<u64>; 11],
    /// How many D records matched it (btt counts each match).
    pub d_matches: u32,
    /// Replaced in btt's tree by a later Q with the same start sector.
    pub replaced: bool,
}

impl Request {
    pub fn phase(&self, p: Phase) -> Option<u64> {
        self.phases[p as usize]
    }
}

#[derive(Default)]
struct Device {
    followed: bool,
    last_q: Option<u64>,
    /// btt's counters: queued (Q and R), issued (D), and the running count
    /// of requests queued but not yet merged or issued, summed at each Q
    /// ("Active Requests At Q").
    n_qs: u64,
    n_ds: u64,
    n_act_q: u64,
    t_act_q: u64,
    /// Queued bios by start sector; items are keys of `Tracker::requests`.
    queued: SectorTree,
}

/// Feeds records in blkparse order; finished requests come out of `drain`.
#[derive(Default)]
pub struct Tracker {
    devices: FxHashMap<u32, Device>,
    last_q_global: Option<u64>,
    /// Requests that may still change (memory stays bounded by the
    /// requests in flight, not the trace).
    requests: Slab<Request>,
    /// Keys of requests that can no longer change (completed or replaced).
    done: Vec<usize>,
    pub samples: Vec<Sample>,
    /// The nodes a D or C record covers (kept between records: no allocation each).
    hits: Vec<NodeId>,
}

impl Tracker {
    /// Set a phase on request `i` and record the sample btt would add.
    fn sample(&mut self, i: usize, event_id: u64, phase: Phase, ns: u64) {
        let q = &mut self.requests[i];
        q.phases[phase as usize] = Some(ns);
        self.samples.push(Sample { event_id, q_id: q.q_id, device: q.device, pid: q.pid, phase, ns });
    }

    pub fn add(&mut self, id: u64, r: &Record) {
        let a = r.h.action;
        if action::is_notify(a) || action::category(a) & tc::PC != 0 {
            return;
        }
        let kind = action::code(a);
        if !matches!(
            kind,
            ta::QUEUE
                | ta::REMAP
                | ta::INSERT
                | ta::GETRQ
                | ta::BACKMERGE
                | ta::FRONTMERGE
                | ta::ISSUE
                | ta::COMPLETE
                | ta::SLEEPRQ
                | ta::REQUEUE
        ) {
            return;
        }
        // btt ignores zero-byte Q, G, S, I, M, D and C records.
        if kind != ta::REMAP && kind != ta::REQUEUE && r.h.bytes == 0 {
            return;
        }
        let device = r.h.device;
        let dev = self.devices.entry(device).or_default();
        if !dev.followed {
            if kind == ta::QUEUE || kind == ta::REMAP {
                dev.followed = true;
            } else {
                return;
            }
        }
        let t = r.h.time;
        match kind {
            ta::QUEUE | ta::REQUEUE => {
                dev.n_qs += 1;
                dev.t_act_q += dev.n_act_q;
                dev.n_act_q += 1;
            }
            ta::BACKMERGE | ta::FRONTMERGE => dev.n_act_q = dev.n_act_q.saturating_sub(1),
            ta::ISSUE => {
                dev.n_ds += 1;
                dev.n_act_q = dev.n_act_q.saturating_sub(1);
            }
            _ => {}
        }
        match kind {
            ta::QUEUE => self.queue(id, r),
            ta::REMAP => {
                let Some((from, _, sector_from)) = r.remap() else { return };
                let Some(i) = self.devices.get(&from).and_then(|d| d.queued.find_sec(sector_from)) else { return };
                let q_time = self.requests[i].q_time;
                self.sample(i, id, Phase::Q2A, tdelta(q_time, t));
            }
            ta::GETRQ | ta::SLEEPRQ | ta::INSERT | ta::BACKMERGE | ta::FRONTMERGE => {
                let Some(i) = self.devices[&device].queued.find_sec(r.h.sector) else { return };
                let q = &mut self.requests[i];
                let (q_time, g_time, s_time) = (q.q_time, q.g_time, q.s_time);
                match kind {
                    ta::GETRQ => {
                        q.g_time = Some(t);
                        self.sample(i, id, Phase::Q2G, tdelta(q_time, t));
                        if let Some(s) = s_time {
                            self.sample(i, id, Phase::S2G, tdelta(s, t));
                        }
                    }
                    ta::SLEEPRQ => q.s_time = Some(t),
                    ta::INSERT => {
                        q.i_time = Some(t);
                        if let Some(g) = g_time {
                            self.sample(i, id, Phase::G2I, tdelta(g, t));
                        }
                    }
                    _ => {
                        q.m_time = Some(t);
                        self.sample(i, id, Phase::Q2M, tdelta(q_time, t));
                    }
                }
            }
            ta::ISSUE => {
                let end = end_sector(r.h.sector, r.h.bytes);
                let mut hits = std::mem::take(&mut self.hits);
                let queued = &self.devices[&device].queued;
                queued.covered_into(r.h.sector, end, &mut hits);
                for &node in &hits {
                    let i = self.devices[&device].queued.item(node);
                    let q = &mut self.requests[i];
                    let (i_time, m_time) = (q.i_time, q.m_time);
                    q.d_time = Some(t);
                    q.d_sector = Some(r.h.sector);
                    q.d_nr_sectors = Some(r.h.bytes >> 9);
                    q.d_matches += 1;
                    if let Some(it) = i_time {
                        self.sample(i, id, Phase::I2D, tdelta(it, t));
                    } else if let Some(m) = m_time {
                        self.sample(i, id, Phase::M2D, tdelta(m, t));
                    }
                }
                self.hits = hits;
            }
            ta::COMPLETE => {
                let end = end_sector(r.h.sector, r.h.bytes);
                let mut hits = std::mem::take(&mut self.hits);
                self.devices[&device].queued.covered_into(r.h.sector, end, &mut hits);
                for &node in &hits {
                    let i = self.devices[&device].queued.item(node);
                    let q = &mut self.requests[i];
                    let (q_time, d_time) = (q.q_time, q.d_time);
                    q.c_time = Some(t);
                    q.c_sector = Some(r.h.sector);
                    self.sample(i, id, Phase::Q2C, tdelta(q_time, t));
                    if let Some(d) = d_time {
                        self.sample(i, id, Phase::D2C, tdelta(d, t));
                    }
                    // Erased one by one in visiting order, as btt releases them:
                    // the order shapes the tree that later lookups walk.
                    self.devices.get_mut(&device).expect("device seen").queued.erase(node);
                    self.done.push(i);
                }
                self.hits = hits;
            }
            _ => {}
        }
    }

    fn queue(&mut self, id: u64, r: &Record) {
        let t = r.h.time;
        let device = r.h.device;
        let q2q_global = self.last_q_global.map(|l| tdelta(l, t));
        self.last_q_global = Some(t);
        let dev = self.devices.get_mut(&device).expect("device seen");
        let q2q = dev.last_q.map(|l| tdelta(l, t));
        dev.last_q = Some(t);
        let idx = self.requests.insert(Request {
            q_id: id,
            device,
            pid: r.h.pid,
            action: r.h.action,
            sector: r.h.sector,
            bytes: r.h.bytes,
            q_time: t,
            ..Default::default()
        });
        if let Some(v) = q2q {
            self.sample(idx, id, Phase::Q2Q, v);
        }
        if let Some(v) = q2q_global {
            self.sample(idx, id, Phase::Q2QAll, v);
        }
        let end = end_sector(r.h.sector, r.h.bytes);
        let dev = self.devices.get_mut(&device).expect("device seen");
        if let Some(old) = dev.queued.insert(r.h.sector, end, idx) {
            // rb_replace_node: the earlier bio is forgotten, never completed.
            self.requests[old].replaced = true;
            self.done.push(old);
        }
    }

    /// `drain_each` as a list (for tests).
    #[cfg(test)]
    pub fn drain(&mut self, all: bool) -> Vec<Request> {
        let mut out = Vec::new();
        self.drain_each(all, |r| out.push(r.clone()));
        out
    }

    /// Hand `f` the requests that will not change any more (completed or
    /// replaced), ordered by their Q; with `all`, every remaining one too
    /// (end of input). Each is read where it lies: a request is a few hundred
    /// bytes, and moving every one into a list cost more than following it.
    pub fn drain_each(&mut self, all: bool, mut f: impl FnMut(&Request)) {
        if all {
            for dev in self.devices.values_mut() {
                self.done.extend(dev.queued.take_all());
            }
        }
        let requests = &self.requests;
        // q_ids are unique: the unstable sort has one result.
        self.done.sort_unstable_by_key(|&i| requests[i].q_id);
        for &i in &self.done {
            f(&self.requests[i]);
        }
        for i in self.done.drain(..) {
            self.requests.remove(i);
        }
    }

    /// Requests still being followed.
    pub fn in_flight(&self) -> usize {
        self.requests.len()
    }

    /// Per followed device: (device, Qs incl. requeues, Ds, average requests
    /// active at each Q), as btt's merge and active-request tables count them.
    pub fn device_counts(&self) -> Vec<(u32, u64, u64, f64)> {
        let mut v: Vec<_> = self
            .devices
            .iter()
            .filter(|(_, d)| d.followed)
            .map(|(&k, d)| (k, d.n_qs, d.n_ds, if d.n_qs > 0 { d.t_act_q as f64 / d.n_qs as f64 } else { 0.0 }))
            .collect();
        v.sort_by_key(|x| x.0);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blktrace::record::{Header, Record};

    fn rec(code: u32, cat: u32, t: u64, sector: u64, bytes: u32) -> Record {
        Record {
            h: Header {
                version: 7,
                sequence: 0,
                time: t,
                sector,
                bytes,
                action: (cat << 16) | code,
                pid: 1,
                device: 8 << 20,
                cpu: 0,
                error: 0,
                pdu_len: 0,
            },
            cgroup: None,
            pdu: vec![],
        }
    }

    #[test]
    fn follows_q_g_i_d_c() {
        let w = tc::WRITE | tc::QUEUE;
        let mut t = Tracker::default();
        t.add(0, &rec(ta::GETRQ, w, 5, 0, 4096)); // before any Q: culled
        t.add(1, &rec(ta::QUEUE, w, 10, 100, 4096));
        t.add(2, &rec(ta::GETRQ, w, 12, 100, 4096));
        t.add(3, &rec(ta::INSERT, w, 15, 100, 4096));
        t.add(4, &rec(ta::QUEUE, w, 16, 108, 4096));
        t.add(5, &rec(ta::BACKMERGE, w, 17, 108, 4096));
        t.add(6, &rec(ta::ISSUE, tc::WRITE | tc::ISSUE, 20, 100, 8192));
        t.add(7, &rec(ta::COMPLETE, tc::WRITE | tc::COMPLETE, 50, 100, 8192));
        let r = t.drain(true);
        assert_eq!(r.len(), 2);
        let (a, b) = (&r[0], &r[1]);
        let p = |r: &Request, ps: [Phase; 6]| ps.map(|x| r.phase(x));
        assert_eq!(
            p(a, [Phase::Q2G, Phase::G2I, Phase::I2D, Phase::D2C, Phase::Q2C, Phase::Q2Q]),
            [Some(2), Some(3), Some(5), Some(30), Some(40), None]
        );
        assert_eq!(
            p(b, [Phase::Q2M, Phase::M2D, Phase::I2D, Phase::D2C, Phase::Q2C, Phase::Q2Q]),
            [Some(1), Some(3), None, Some(30), Some(34), Some(6)]
        );
    }

    #[test]
    fn same_start_sector_replaces_and_zero_bytes_ignored() {
        let w = tc::WRITE | tc::QUEUE;
        let mut t = Tracker::default();
        t.add(1, &rec(ta::QUEUE, w, 10, 100, 4096));
        t.add(2, &rec(ta::QUEUE, w, 11, 100, 4096));
        t.add(3, &rec(ta::QUEUE, w, 12, 200, 0));
        t.add(4, &rec(ta::COMPLETE, tc::WRITE, 30, 100, 4096));
        let r = t.drain(true);
        assert_eq!(r.len(), 2);
        assert!(r[0].replaced && r[0].phase(Phase::Q2C).is_none());
        assert_eq!(r[1].phase(Phase::Q2C), Some(19));
        // A completion before the issue: tdelta gives 1, not a negative time.
        let mut t = Tracker::default();
        t.add(1, &rec(ta::QUEUE, w, 10, 0, 512));
        t.add(2, &rec(ta::COMPLETE, tc::READ, 10, 0, 512));
        assert_eq!(t.drain(true)[0].phase(Phase::Q2C), Some(1));
    }

    #[test]
    fn a_bio_ending_past_the_last_sector_is_followed() {
        // 4 KiB (8 sectors) at 2^64 - 4 ends at 2^64 + 4: past u64. The
        // 4 KiB just below it ends at exactly 2^64.
        let (top, below) = (u64::MAX - 3, u64::MAX - 7);
        assert_eq!(end_sector(top, 4096), (1u128 << 64) + 4);
        assert_eq!(end_sector(below, 4096), 1u128 << 64);
        let w = tc::WRITE | tc::QUEUE;
        let mut t = Tracker::default();
        t.add(1, &rec(ta::QUEUE, w, 10, top, 4096));
        t.add(2, &rec(ta::GETRQ, w, 11, u64::MAX, 4096)); // the last sector lies inside it
        t.add(3, &rec(ta::QUEUE, w, 12, below, 4096));
        t.add(4, &rec(ta::ISSUE, tc::WRITE | tc::ISSUE, 20, top, 4096));
        t.add(5, &rec(ta::ISSUE, tc::WRITE | tc::ISSUE, 21, below, 4096));
        t.add(6, &rec(ta::COMPLETE, tc::WRITE | tc::COMPLETE, 50, top, 4096));
        t.add(7, &rec(ta::COMPLETE, tc::WRITE | tc::COMPLETE, 60, below, 4096));
        let r = t.drain(true);
        assert_eq!(r.len(), 2);
        let p = |r: &Request| [Phase::Q2G, Phase::D2C, Phase::Q2C].map(|x| r.phase(x));
        assert_eq!(p(&r[0]), [Some(1), Some(30), Some(40)]);
        assert_eq!(p(&r[1]), [None, Some(39), Some(48)]);
        assert_eq!((r[0].c_sector, r[1].c_sector), (Some(top), Some(below)));
    }
}
