//! Stable-page waits: for each page dirtying, how long its write would wait
//! for the page's writeback under a policy that waits (the model around it:
//! `advisor/problems/stable_page_wait/model.py`).

use super::{py_max, py_min};

/// The page dirtyings, in the order their writes asked for the pages. Pages,
/// inodes and writers are dense numbers (`page < n_pages`, ...).
pub struct Dirtyings<'a> {
    /// When the write asked for the page (ns).
    pub ts: &'a [f64],
    pub inode: &'a [i64],
    pub page: &'a [i64],
    pub writer: &'a [i64],
    /// After a wait, how long the write takes to go on once its page left writeback.
    pub resume_ns: &'a [f64],
}

/// The writeback submissions, in time order: each takes its inode's dirty pages.
pub struct Submissions<'a> {
    /// When the IO starts (ns).
    pub ts: &'a [i64],
    /// The inode (-1: an inode nothing dirtied).
    pub inode: &'a [i64],
    /// The writer that submitted it (-1: the flusher).
    pub writer: &'a [i64],
    /// An fsync's return: its IO is done by then (-1: no bound).
    pub deadline: &'a [i64],
    /// When the capture shows the IO done (-1: not shown).
    pub done: &'a [i64],
    /// When its pages began to leave writeback (with `done`).
    pub first_done: &'a [i64],
    /// The device model's time for the whole IO, and for its transfer alone.
    pub service_ns: &'a [f64],
    pub transfer_ns: &'a [f64],
}

/// How the replay runs.
pub struct Setup {
    /// The capture's writers never waited inside a write: a wait the policy adds
    /// moves the writer's later events and own submissions by its length.
    pub closed_loop: bool,
    /// Queue depth 1: an IO starts when the previous one completed.
    pub serial: bool,
    pub n_pages: usize,
    pub n_inodes: usize,
    pub n_writers: usize,
    /// Pages per block request (a request's pages leave writeback together).
    pub pages_per_request: i64,
}

/// Per dirtying, into `out`: how long it would wait for its page's writeback (0: none).
///
/// Submission j's IO takes `service_ns[j]`; a serial device starts it when the
/// previous one completed. When the capture shows its end (`done[j] >= 0`) its
/// pages leave writeback in index order from `first_done[j]` to then; else
/// request by request over its service time.
///
/// Closed loop: each writer goes through its own events and submissions in
/// recorded order, and the writers and the flusher's submissions are merged by
/// their moved times (fio's sync_file_range after its 64th write stays right
/// after it). Open loop: the recorded timeline already holds the writers'
/// waits and nothing moves (dbench clients moved by the model's errors in
/// those waits met IO they never met).
///
/// A submission takes its inode's pending pages without looking at any other
/// inode's: each inode keeps a list (through `next_of`, newest first) of the
/// events that made a page pending for it; an entry is stale when a later
/// event moved its page to another inode (two inodes whose pages share a key),
/// so entries are checked against `pending_for` when taken.
pub fn page_waits(ev: &Dirtyings, sub: &Submissions, s: &Setup, out: &mut [f64]) {
    let n_ev = ev.ts.len();
    let nw = s.n_writers;
    assert_eq!(out.len(), n_ev, "one wait per dirtying");
    out.fill(0.0);
    let mut shift = vec![0.0f64; nw];
    let mut wb_until = vec![f64::NEG_INFINITY; s.n_pages]; // when the page's latest writeback completes
    // The fsync whose writeback the page is under: its writer and recorded return
    // (a writer's events after its own fsync returned cannot find its pages there).
    let mut fsync_writer = vec![-1i64; s.n_pages];
    let mut fsync_end = vec![0.0f64; s.n_pages];
    let mut pending_for = vec![-1i64; s.n_pages]; // dirty and not submitted: the inode it belongs to
    let mut newest = vec![-1i64; s.n_inodes];
    let mut next_of = vec![-1i64; n_ev];
    let mut batch: Vec<i64> = Vec::new();
    // Each writer's events and own submissions, in recorded order (CSR lists).
    let (ev_of, ev_first) = by_writer(ev.writer, nw);
    let (sub_of, sub_first) = by_writer(sub.writer, nw);
    let flusher: Vec<usize> = (0..sub.ts.len()).filter(|&j| sub.writer[j] < 0).collect();
    let mut ev_next: Vec<usize> = ev_first[..nw].to_vec();
    let mut sub_next: Vec<usize> = sub_first[..nw].to_vec();
    let mut fj = 0;
    let mut free = 0.0f64;
    loop {
        // The next step: the writer whose next item (event or own submission)
        // comes first in moved time, or the flusher's next submission.
        let (mut best, mut best_t, mut best_is_sub) = (usize::MAX, f64::INFINITY, false);
        for wr in 0..nw {
            let e = (ev_next[wr] < ev_first[wr + 1]).then(|| ev_of[ev_next[wr]]);
            let j = (sub_next[wr] < sub_first[wr + 1]).then(|| sub_of[sub_next[wr]]);
            let is_sub = match (j, e) {
                (None, None) => continue,
                (Some(j), Some(e)) => (sub.ts[j] as f64) <= ev.ts[e],
                (Some(_), None) => true,
                (None, Some(_)) => false,
            };
            let t = if is_sub { sub.ts[j.unwrap()] as f64 } else { ev.ts[e.unwrap()] } + shift[wr];
            if t < best_t {
                (best, best_t, best_is_sub) = (wr, t, is_sub);
            }
        }
        let (j, at) = if fj < flusher.len() && (sub.ts[flusher[fj]] as f64) <= best_t {
            fj += 1;
            (flusher[fj - 1], sub.ts[flusher[fj - 1]] as f64)
        } else if best != usize::MAX && best_is_sub {
            sub_next[best] += 1;
            (sub_of[sub_next[best] - 1], best_t)
        } else if best != usize::MAX {
            let i = ev_of[ev_next[best]];
            ev_next[best] += 1;
            let p = ev.page[i] as usize;
            let own_fsync_done = fsync_writer[p] == best as i64 && ev.ts[i] >= fsync_end[p];
            if wb_until[p] > best_t && !own_fsync_done {
                out[i] = wb_until[p] - best_t + ev.resume_ns[i];
            }
            if s.closed_loop {
                shift[best] += out[i];
            }
            let x = ev.inode[i];
            if pending_for[p] != x {
                next_of[i] = newest[x as usize];
                newest[x as usize] = i as i64;
            }
            pending_for[p] = x;
            continue;
        } else {
            break;
        };
        // Submit the inode's dirty pages: one FIFO transfer, completion after the latency.
        let x = sub.inode[j];
        let start = py_max(at, free);
        let since_recorded = at - sub.ts[j] as f64; // how far the replay moved it
        let mut done = start + sub.service_ns[j];
        if sub.done[j] >= 0 {
            done = sub.done[j] as f64 + since_recorded;
        }
        if sub.deadline[j] >= 0 {
            done = py_min(done, sub.deadline[j] as f64 + since_recorded);
        }
        batch.clear();
        if x >= 0 {
            let mut e = newest[x as usize];
            while e >= 0 {
                let p = ev.page[e as usize];
                if pending_for[p as usize] == x {
                    batch.push(p);
                    pending_for[p as usize] = -1;
                }
                e = next_of[e as usize];
            }
            newest[x as usize] = -1; // every entry was taken or stale
            // writepages submits in index order and each request completes on its
            // own: request r of n is done after the batch's fixed latency and r+1
            // n-ths of its transfer (a 50 MB inode's first pages are clean long
            // before its last). When the capture shows the batch's end, page k of n
            // leaves writeback k+1 n-ths of the way from its first page's end to it.
            batch.sort_unstable();
            let taken = batch.len() as i64;
            let (spread, per_step, steps) = if sub.done[j] >= 0 {
                (py_max(0.0, done - (sub.first_done[j] as f64 + since_recorded)), 1, taken)
            } else {
                let ppr = s.pages_per_request;
                (sub.transfer_ns[j], ppr, (taken + ppr - 1) / ppr)
            };
            let fixed = done - spread;
            let fsync_by = if sub.deadline[j] >= 0 { sub.writer[j] } else { -1 };
            for (k, &p) in batch.iter().enumerate() {
                let p = p as usize;
                wb_until[p] = py_min(done, fixed + spread * ((k as i64 / per_step + 1) as f64) / steps as f64);
                fsync_writer[p] = fsync_by;
                fsync_end[p] = sub.deadline[j] as f64;
            }
        }
        if !batch.is_empty() {
            // The transfers share the device's bandwidth and go one after another;
            // only the fixed latency overlaps, to the queue depth. A flusher pass of
            // 16 MB on a 40 MB/s device keeps the next one's pages under writeback ~400 ms.
            free = if s.serial { done } else { start + sub.transfer_ns[j] };
        }
    }
}

/// The items of each writer (`writer[i]` in `0..n`; negative: no writer) in
/// their order: the indices grouped by writer, and where each writer's run starts.
fn by_writer(writer: &[i64], n: usize) -> (Vec<usize>, Vec<usize>) {
    let mut first = vec![0usize; n + 1];
    for &w in writer {
        if w >= 0 {
            first[w as usize + 1] += 1;
        }
    }
    for w in 0..n {
        first[w + 1] += first[w];
    }
    let mut fill = first.clone();
    let mut of = vec![0usize; first[n]];
    for (i, &w) in writer.iter().enumerate() {
        if w >= 0 {
            of[fill[w as usize]] = i;
            fill[w as usize] += 1;
        }
    }
    (of, first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_rewritten_under_writeback_waits_for_it_then_resumes() {
        // Page 0 dirtied at 0; the flusher submits it at 10 (service 100: done at 110);
        // the writer dirties it again at 50 and waits 60 ns, plus 5 to resume.
        let ev = Dirtyings { ts: &[0.0, 50.0], inode: &[0, 0], page: &[0, 0], writer: &[0, 0], resume_ns: &[0.0, 5.0] };
        let sub = Submissions { ts: &[10], inode: &[0], writer: &[-1], deadline: &[-1], done: &[-1], first_done: &[-1],
                                service_ns: &[100.0], transfer_ns: &[50.0] };
        let setup = Setup { closed_loop: true, serial: true, n_pages: 1, n_inodes: 1, n_writers: 1, pages_per_request: 1 };
        let mut out = [1.0; 2];
        page_waits(&ev, &sub, &setup, &mut out);
        assert_eq!(out, [0.0, 65.0]);
    }

    #[test]
    fn an_fsync_bounds_its_io_by_its_recorded_return() {
        // The same, but the writer's own fsync at 10 returned at 30: the page is clean by then.
        let ev = Dirtyings { ts: &[0.0, 50.0], inode: &[0, 0], page: &[0, 0], writer: &[0, 0], resume_ns: &[0.0, 5.0] };
        let sub = Submissions { ts: &[10], inode: &[0], writer: &[0], deadline: &[30], done: &[-1], first_done: &[-1],
                                service_ns: &[100.0], transfer_ns: &[50.0] };
        let setup = Setup { closed_loop: true, serial: true, n_pages: 1, n_inodes: 1, n_writers: 1, pages_per_request: 1 };
        let mut out = [1.0; 2];
        page_waits(&ev, &sub, &setup, &mut out);
        assert_eq!(out, [0.0, 0.0]);
    }
}
