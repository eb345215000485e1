//! D2C per issued request (`_REQUEST_D2C` in advisor/io/summary.py): each D
//! record with data matched to the first completion (C) of the same device
//! and start sector at or after it, kept if that completion comes no later
//! than the next D there.
//!
//! Records usually come in time order, and then the match is made as they
//! come: a D waits under its (device, sector) until a C arrives there. Times
//! can go back in a merged file or a stream (`... 0.000102 D ...` after
//! `... 0.000105 C ...` from another CPU); from the first record that does,
//! the answer comes from the sorted lists of every D and C instead.

use rustc_hash::{FxHashMap, FxHashSet};

/// device, start sector.
type Key = (u32, u64);

pub struct RequestD2c {
    /// Every D and C with data: (device, sector, time, id) and (device, sector, time).
    issues: Vec<(u32, u64, u64, u64)>,
    completions: Vec<(u32, u64, u64)>,
    /// No record's time so far was below the one before it.
    in_order: bool,
    now: u64,
    /// D records waiting for their completion: time, and the time of the
    /// next D at the same place (a completion after that one is not theirs).
    waiting: FxHashMap<Key, Vec<(u64, Option<u64>)>>,
    /// Places completed at time `now`: a D there at the same time matches
    /// that completion (`c.ts >= d.ts`), though it came before the D.
    completed_now: FxHashSet<Key>,
    /// The values found so far, per device.
    values: FxHashMap<u32, Vec<u64>>,
}

impl Default for RequestD2c {
    fn default() -> Self {
        RequestD2c {
            issues: Vec::new(),
            completions: Vec::new(),
            in_order: true,
            now: 0,
            waiting: FxHashMap::default(),
            completed_now: FxHashSet::default(),
            values: FxHashMap::default(),
        }
    }
}

/// Bytes held per D and per C.
pub const ISSUE_BYTES: usize = 32 + 24;
pub const COMPLETION_BYTES: usize = 24;

impl RequestD2c {
    fn at(&mut self, t: u64) {
        if t < self.now {
            self.in_order = false;
        } else if t > self.now {
            self.now = t;
            if self.completed_now.capacity() > 4096 {
                self.completed_now = FxHashSet::default(); // clear() would walk the whole table each time
            } else {
                self.completed_now.clear();
            }
        }
    }

    pub fn issue(&mut self, dev: u32, sector: u64, t: u64, id: u64) {
        self.issues.push((dev, sector, t, id));
        self.at(t);
        if !self.in_order {
            return;
        }
        let key = (dev, sector);
        if let Some(prev) = self.waiting.get_mut(&key).and_then(|w| w.last_mut()) {
            prev.1 = Some(t);
        }
        if self.completed_now.contains(&key) {
            self.values.entry(dev).or_default().push(0);
        } else {
            self.waiting.entry(key).or_default().push((t, None));
        }
    }

    pub fn complete(&mut self, dev: u32, sector: u64, t: u64) {
        self.completions.push((dev, sector, t));
        self.at(t);
        if !self.in_order {
            return;
        }
        let key = (dev, sector);
        self.completed_now.insert(key);
        // Every D waiting here came at or before `t` and saw no completion since:
        // this is the first at or after each of them.
        if let Some(waiting) = self.waiting.remove(&key) {
            let out = self.values.entry(dev).or_default();
            out.extend(waiting.into_iter().filter(|&(_, next)| next.map_or(true, |n| t <= n)).map(|(d, _)| t - d));
        }
    }

    /// The values per device (in no particular order).
    pub fn finish(&mut self) -> FxHashMap<u32, Vec<u64>> {
        if self.in_order {
            return std::mem::take(&mut self.values);
        }
        sorted_match(&mut self.issues, &mut self.completions)
    }
}

/// The match on the lists sorted by (device, sector, time), walked together.
fn sorted_match(issues: &mut [(u32, u64, u64, u64)], completions: &mut [(u32, u64, u64)]) -> FxHashMap<u32, Vec<u64>> {
    issues.sort_unstable();
    completions.sort_unstable();
    let mut out: FxHashMap<u32, Vec<u64>> = FxHashMap::default();
    let mut c = 0;
    for (i, &(dev, sec, t, _)) in issues.iter().enumerate() {
        while c < completions.len() && completions[c] < (dev, sec, t) {
            c += 1;
        }
        let Some(&(cd, csec, ct)) = completions.get(c) else { break };
        if (cd, csec) != (dev, sec) {
            continue;
        }
        let next_d = issues.get(i + 1).filter(|n| (n.0, n.1) == (dev, sec)).map(|n| n.2);
        if next_d.map_or(true, |nd| ct <= nd) {
            out.entry(dev).or_default().push(ct - t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(mut m: FxHashMap<u32, Vec<u64>>) -> Vec<(u32, Vec<u64>)> {
        let mut v: Vec<_> = m
            .drain()
            .map(|(k, mut x)| {
                x.sort_unstable();
                (k, x)
            })
            .collect();
        v.sort();
        v
    }

    /// Records in time order: (is_d, dev, sector, time).
    fn both(records: &[(bool, u32, u64, u64)]) -> (Vec<(u32, Vec<u64>)>, Vec<(u32, Vec<u64>)>) {
        let mut m = RequestD2c::default();
        for (id, &(d, dev, sec, t)) in records.iter().enumerate() {
            if d {
                m.issue(dev, sec, t, id as u64)
            } else {
                m.complete(dev, sec, t)
            }
        }
        let streamed = sorted(m.finish());
        (streamed, sorted(sorted_match(&mut m.issues, &mut m.completions)))
    }

    #[test]
    fn streamed_equals_sorted_on_ties_and_requeues() {
        let (d, c) = (true, false);
        let records = [
            (d, 8, 100, 10), // D..C: 5
            (c, 8, 100, 15),
            (c, 8, 200, 20), // C, then a D at the same time: 0
            (d, 8, 200, 20),
            (d, 8, 300, 30), // two Ds, one C after the second: the first gets none
            (d, 8, 300, 31),
            (c, 8, 300, 35),
            (d, 8, 400, 40), // two Ds at one time, C at that time: both 0
            (d, 8, 400, 40),
            (c, 8, 400, 40),
            (d, 9, 100, 41), // another device, never completed
            (d, 8, 500, 50), // next D at the C's time: both match it
            (d, 8, 500, 52),
            (c, 8, 500, 52),
        ];
        let (streamed, want) = both(&records);
        assert_eq!(streamed, want);
        assert_eq!(want, vec![(8, vec![0, 0, 0, 0, 2, 4, 5])]);
    }

    #[test]
    fn time_going_back_falls_back_to_the_sorted_lists() {
        let mut m = RequestD2c::default();
        m.issue(8, 100, 10, 0);
        m.complete(8, 100, 30);
        m.issue(8, 100, 20, 2); // from another CPU, earlier: the C at 30 is the next one for it
        let got = sorted(m.finish());
        assert!(!m.in_order);
        // ASOF: both Ds take the C at 30; the first's next D (20) comes before it.
        assert_eq!(got, vec![(8, vec![10])]);
    }
}
