//! The order `blkparse -i -` (pipe mode, blkparse.c do_pipe) gives a stream
//! of records from several CPUs, reproduced so that stdin input lands in the
//! same order as blkparse prints it.
//!
//! blkparse reads the stream in batches of 512 records and sorts them in a
//! tree by (time - genesis, device, sequence). After each batch it prints
//! from the front of the tree and stops at the first record that is not the
//! next sequence number of its CPU (the missing one may still come). At the
//! end everything left is printed. (Its test for "read in an earlier batch"
//! never holds a record back in pipe mode: records are tagged with the batch
//! counter before it is incremented.)
//! Quirks kept on purpose: genesis is the earliest time of the first batch,
//! computed again for every batch while it is 0 (blkparse -d output starts
//! at 0), and an earlier record arriving later wraps below genesis and sorts
//! last, as blkparse's unsigned subtraction does.

use std::collections::{BTreeMap, HashMap};

use super::action::{self, tn};
use super::record::Record;

/// blkparse's RB_BATCH_DEFAULT.
const BATCH: usize = 512;
/// A record missing from a CPU's sequence holds everything behind it until
/// the end, in blkparse. We stop holding at this many records (about 100
/// MB) and release the oldest half, so memory stays bounded on long streams
/// that lost records; only then can our order differ from blkparse's.
const MAX_HELD: usize = 1 << 20;

type Key = (u64, u32, u32, u64);

#[derive(Default)]
pub struct PipeSort {
    batch: Vec<Record>,
    tree: BTreeMap<Key, Record>,
    genesis: u64,
    /// (device, cpu) → sequence of the last record released.
    last_seq: HashMap<(u32, u32), u32>,
    arrival: u64,
    /// Times the cap forced records out ahead of blkparse's order.
    pub forced_out: u64,
}

/// Only exact BLK_TN_MESSAGE records skip the sequence check (blkparse
/// compares the whole action word); cgroup-flagged ones it drops as unknown
/// notes, and here they are let through like messages.
fn is_message(r: &Record) -> bool {
    action::is_notify(r.h.action) && action::code(r.h.action) == tn::MESSAGE
}

impl PipeSort {
    /// Add the next record of the stream; released records go to `out`.
    pub fn push(&mut self, r: Record, out: &mut dyn FnMut(Record)) {
        self.batch.push(r);
        if self.batch.len() == BATCH {
            self.end_batch(out);
        }
    }

    /// End of the stream: release everything.
    pub fn finish(&mut self, out: &mut dyn FnMut(Record)) {
        self.end_batch(out);
        self.release(true, out);
    }

    fn end_batch(&mut self, out: &mut dyn FnMut(Record)) {
        if self.batch.is_empty() {
            return;
        }
        if self.genesis == 0 {
            self.genesis = self.batch.iter().map(|r| r.h.time).min().unwrap_or(u64::MAX);
        }
        for r in self.batch.drain(..) {
            let key = (r.h.time.wrapping_sub(self.genesis), r.h.device, r.h.sequence, self.arrival);
            self.arrival += 1;
            self.tree.insert(key, r);
        }
        self.release(false, out);
        while self.tree.len() > MAX_HELD {
            self.pop(out);
            self.forced_out += 1;
        }
    }

    /// show_entries_rb: release from the front while blkparse would.
    fn release(&mut self, force: bool, out: &mut dyn FnMut(Record)) {
        while let Some((_, r)) = self.tree.first_key_value() {
            if !is_message(r) {
                if let Some(&last) = self.last_seq.get(&(r.h.device, r.h.cpu)) {
                    if r.h.sequence as u64 != last as u64 + 1 && !force {
                        break;
                    }
                }
            }
            self.pop(out);
        }
    }

    fn pop(&mut self, out: &mut dyn FnMut(Record)) {
        if let Some((_, r)) = self.tree.pop_first() {
            if !is_message(&r) {
                self.last_seq.insert((r.h.device, r.h.cpu), r.h.sequence);
            }
            out(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blktrace::record::Header;

    fn rec(cpu: u32, seq: u32, time: u64) -> Record {
        let h = Header {
            version: 7,
            sequence: seq,
            time,
            sector: 0,
            bytes: 512,
            action: (0x11 << 16) | 1,
            pid: 1,
            device: 8 << 20,
            cpu,
            error: 0,
            pdu_len: 0,
        };
        Record { h, cgroup: None, pdu: vec![] }
    }

    fn order(records: Vec<Record>) -> Vec<(u32, u32)> {
        let mut s = PipeSort::default();
        let mut got = Vec::new();
        for r in records {
            s.push(r, &mut |r| got.push((r.h.cpu, r.h.sequence)));
        }
        s.finish(&mut |r| got.push((r.h.cpu, r.h.sequence)));
        got
    }

    #[test]
    fn sorts_each_batch_into_what_is_held() {
        // CPU 0's chunk, then CPU 1's, interleaved in time: the first batch
        // of 512 holds only CPU 0 and goes out as it is; the second sorts
        // CPU 1's early records before CPU 0's remaining ones.
        let mut v: Vec<Record> = (1..=600).map(|i| rec(0, i, 10 * i as u64)).collect();
        v.extend((1..=600).map(|i| rec(1, i, 10 * i as u64 + 5)));
        let got = order(v);
        assert_eq!(got.len(), 1200);
        assert_eq!((got[511], got[512], got[935], got[936]), ((0, 512), (1, 1), (1, 424), (0, 513)));
        assert_eq!((got[1023], got[1024]), ((0, 600), (1, 425)));
    }

    #[test]
    fn a_sequence_hole_holds_the_rest_until_the_end() {
        // Sequence 3 of CPU 0 never comes: blkparse keeps waiting for it, so
        // CPU 1's later records are printed after CPU 0's earlier ones only
        // at the end, in time order.
        let mut v = vec![rec(0, 1, 10), rec(0, 2, 20), rec(0, 4, 40)];
        v.extend((1..=600).map(|i| rec(1, i, 30 + i as u64)));
        let got = order(v);
        assert_eq!(got.len(), 603);
        assert_eq!(&got[..4], &[(0, 1), (0, 2), (1, 1), (1, 2)]);
    }
}
