//! Fsyncs through btrfs's shared log tree, on one clock (the model around it:
//! `advisor/problems/btrfs_full_fsync_fallback/model.py`).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::{py_floordiv, py_max};

/// The fsyncs, grouped by task and in time order within each task.
pub struct Fsyncs<'a> {
    pub pid: &'a [i64],
    /// When the task called it, as recorded (ns).
    pub start: &'a [i64],
    /// What the task did between its previous fsync's return and this call.
    pub think_ns: &'a [f64],
    /// The task keeps a schedule: it calls at its recorded time (or at the
    /// previous return, when later), not `think_ns` after the return.
    pub paced: &'a [bool],
    /// Writing its data.
    pub data_ns: &'a [f64],
    /// One checksum lookup per extent its inode has in the transaction.
    pub per_extent: &'a [f64],
    /// Its inode, as a dense number.
    pub inode_slot: &'a [i64],
    /// From ready to joining the log transaction (logging its inode).
    pub prep: &'a [f64],
}

/// Per commit (the k-th commit takes the k-th of each).
pub struct Commits<'a> {
    /// Writing the commit.
    pub commit_ns: &'a [f64],
    /// With `tick`: jiffy boundaries a batched commit waits after its last member was ready.
    pub batch_ticks: &'a [i64],
    /// From the previous commit's end to this one's start, for tasks that were waiting.
    pub wake: &'a [f64],
}

/// Each fsync's cost and its task's busy time up to its return, and the commits.
pub struct LogReplay {
    pub cost: Vec<f64>,
    pub busy: Vec<f64>,
    pub commits: i64,
}

/// A task's fsync waiting on a heap: (time, fsync), smallest first, ties by
/// index, as Python's heapq orders its `(time, index)` tuples.
#[derive(PartialEq)]
struct Waiting(f64, usize);

impl Eq for Waiting {}

impl Ord for Waiting {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap pops the largest.
        match other.0.partial_cmp(&self.0) {
            Some(Ordering::Equal) | None => other.1.cmp(&self.1),
            Some(o) => o,
        }
    }
}

impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

struct Log<'a> {
    f: &'a Fsyncs<'a>,
    txn_ns: f64,
    txn_of: Vec<i64>,
    extents: Vec<i64>,
    ready: Vec<f64>,
    taken: Vec<bool>,
    by_join: BinaryHeap<Waiting>,
    by_ready: BinaryHeap<Waiting>,
}

impl Log<'_> {
    /// Fsync j, called at `entry`, waits to sync: on both heaps.
    fn wait(&mut self, j: usize, entry: f64) {
        self.ready[j] = self.ready_at(entry, j);
        self.by_join.push(Waiting(self.ready[j] + self.f.prep[j], j));
        self.by_ready.push(Waiting(self.ready[j], j));
    }

    /// When fsync j, called at `entry`, has written its data and logged its inode.
    fn ready_at(&mut self, entry: f64, j: usize) -> f64 {
        let slot = self.f.inode_slot[j] as usize;
        let txn = py_floordiv(entry, self.txn_ns) as i64;
        if self.txn_of[slot] != txn {
            self.txn_of[slot] = txn;
            self.extents[slot] = 0;
        }
        self.extents[slot] += 1;
        entry + self.f.data_ns[j] + self.extents[slot] as f64 * self.f.per_extent[j]
    }

    /// Take every task joined by `begin` into the commit's members; the latest
    /// ready time among them.
    fn join(&mut self, begin: f64, members: &mut Vec<usize>, mut latest: f64) -> f64 {
        while self.by_join.peek().is_some_and(|w| w.0 <= begin) {
            let j = self.by_join.pop().unwrap().1;
            if self.taken[j] {
                continue;
            }
            self.taken[j] = true;
            members.push(j);
            latest = py_max(latest, self.ready[j]);
        }
        latest
    }
}

/// The tasks' fsyncs on one clock through the shared log. A task's fsync is
/// ready when its data is written and its extents looked up (one lookup per
/// extent its inode has in the transaction when the whole transaction is
/// logged: one per fsync of the inode since the last commit, every `txn_ns`);
/// it joins the open log transaction `prep` later. The first to join commits,
/// no earlier than the previous commit's end. Tasks ready while the previous
/// commit was written all join the next commit, which starts `wake` after the
/// previous one ends (or when another task joins first). With `tick`, a commit
/// more than one task joined starts `batch_ticks` jiffy boundaries after its
/// last member was ready (or the previous commit ended). Every task joined by
/// the commit's start returns at its end, and calls its next fsync `think_ns`
/// after (or, `paced`, at its recorded time if that is later).
///
/// The waiting tasks are two heaps, on their join and on their ready time (an
/// fsync taken from one is skipped in the other): a commit costs the log of
/// the tasks, not a scan of them (captures hold thousands of one-fsync tasks).
pub fn shared_log(f: &Fsyncs, c: &Commits, txn_ns: f64, tick: i64) -> LogReplay {
    let n = f.pid.len();
    let n_slots = f.inode_slot.iter().max().map_or(0, |&m| m as usize + 1);
    let mut cost = vec![0.0f64; n];
    let mut busy = vec![0.0f64; n];
    let mut entry = vec![0.0f64; n]; // when its task called it
    let mut origin = vec![0.0f64; n]; // its task's first call
    let mut log = Log {
        f,
        txn_ns,
        txn_of: vec![-1; n_slots],
        extents: vec![0; n_slots],
        ready: vec![0.0; n],
        taken: vec![false; n],
        by_join: BinaryHeap::new(),
        by_ready: BinaryHeap::new(),
    };
    for j in 0..n {
        if j == 0 || f.pid[j] != f.pid[j - 1] {
            entry[j] = f.start[j] as f64;
            origin[j] = entry[j];
            log.wait(j, entry[j]);
        }
    }
    let mut members: Vec<usize> = Vec::with_capacity(n);
    let mut prev_end = -1e30f64;
    let mut commits = 0usize;
    let mut waiting = log.by_join.len();
    while waiting > 0 {
        // The tasks that became ready while the previous commit was written.
        members.clear();
        let mut latest = prev_end;
        while log.by_ready.peek().is_some_and(|w| w.0 <= prev_end) {
            let j = log.by_ready.pop().unwrap().1;
            if !log.taken[j] {
                log.taken[j] = true;
                members.push(j);
                latest = py_max(latest, log.ready[j]);
            }
        }
        while log.by_join.peek().is_some_and(|w| log.taken[w.1]) {
            log.by_join.pop();
        }
        let mut begin = if !members.is_empty() {
            let wake = prev_end + c.wake[commits];
            match log.by_join.peek() {
                Some(w) if w.0 < wake => w.0,
                _ => wake,
            }
        } else {
            log.by_join.peek().expect("a waiting fsync is on the join heap").0
        };
        latest = log.join(begin, &mut members, latest);
        if tick > 0 && members.len() > 1 {
            let k = c.batch_ticks[commits] as f64;
            loop {
                let later = ((latest / tick as f64).floor() + k) * tick as f64;
                if later <= begin {
                    break;
                }
                begin = later;
                latest = log.join(begin, &mut members, latest);
            }
        }
        let done = begin + c.commit_ns[commits];
        commits += 1;
        waiting -= members.len();
        for &j in &members {
            cost[j] = done - entry[j];
            busy[j] = done - origin[j];
            if j + 1 < n && f.pid[j + 1] == f.pid[j] {
                entry[j + 1] = if f.paced[j + 1] { py_max(f.start[j + 1] as f64, done) } else { done + f.think_ns[j + 1] };
                origin[j + 1] = origin[j];
                log.wait(j + 1, entry[j + 1]);
                waiting += 1;
            }
        }
        prev_end = done;
    }
    LogReplay { cost, busy, commits: commits as i64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_each(pid: &[i64], start: &[i64]) -> LogReplay {
        let n = pid.len();
        let z = vec![0.0; n];
        let f = Fsyncs { pid, start, think_ns: &z, paced: &vec![false; n], data_ns: &vec![100.0; n], per_extent: &z,
                         inode_slot: &(0..n as i64).collect::<Vec<_>>(), prep: &vec![10.0; n] };
        let c = Commits { commit_ns: &vec![1000.0; n], batch_ticks: &vec![0; n], wake: &vec![5.0; n] };
        shared_log(&f, &c, 30e9, 0)
    }

    #[test]
    fn tasks_ready_during_a_commit_share_the_next() {
        // Task 1 commits alone (joins at 110, done 1110); tasks 2 and 3, ready at
        // 300 and 400, share the next commit: 5 ns after, done at 2115.
        let r = one_each(&[1, 2, 3], &[0, 200, 300]);
        assert_eq!(r.commits, 2);
        assert_eq!(r.cost, vec![1110.0, 1915.0, 1815.0]);
    }

    #[test]
    fn a_tasks_next_fsync_follows_its_return() {
        let r = one_each(&[7, 7], &[0, 50]);
        assert_eq!(r.commits, 2);
        assert_eq!(r.cost, vec![1110.0, 1110.0]);
        assert_eq!(r.busy, vec![1110.0, 2220.0]);
    }
}
