//! One writeback pass over a file's pages in index order (the snapshot
//! livelock's sweep; `advisor/replay/pages.py` `sweep()` sets it up).

/// What one pass did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sweep {
    /// When the pass's last write ended (ns).
    pub end: f64,
    /// Pages it wrote.
    pub written: i64,
    /// Of those, pages dirtied after the pass started.
    pub late: i64,
    /// Index of the first dirtying event the pass did not consume.
    pub consumed: i64,
}

/// The pass over page ranks `0..n_pages`. It starts at `t0` with the ranks
/// `start_rank` dirty and writes the next dirty rank at or after `first`, one
/// page per `page_ns`. Untagged, a page dirtied while the pass runs (`ev_ts`
/// in time order, `ev_rank` its rank) is written too when it lies ahead of
/// the cursor, as PAGECACHE_TAG_DIRTY lookups find it; tagged
/// (tag_pages_for_writeback), only the start set is written. The cursor only
/// moves forward, so the next page is the next flagged rank after it: one
/// forward scan, linear in the pages. A page dirty at `t0` and dirtied again
/// later is written once, and not late.
pub fn sweep_ranks(n_pages: usize, start_rank: &[i64], ev_ts: &[i64], ev_rank: &[i64], first: usize, t0: i64, page_ns: f64,
                   tagged: bool) -> Sweep {
    let mut dirty = vec![false; n_pages];
    let mut at_start = vec![false; n_pages];
    for &r in start_rank {
        dirty[r as usize] = true;
        at_start[r as usize] = true;
    }
    let mut t = t0 as f64;
    let (mut written, mut late) = (0i64, 0i64);
    let n = ev_ts.len();
    let mut i = 0;
    while i < n && ev_ts[i] <= t0 {
        i += 1;
    }
    let mut pos = first; // every rank before it is behind the cursor
    loop {
        while pos < n_pages && !dirty[pos] {
            pos += 1;
        }
        if pos >= n_pages {
            break;
        }
        let cursor = pos;
        pos += 1;
        t += page_ns;
        written += 1;
        late += i64::from(!at_start[cursor]);
        if !tagged {
            while i < n && ev_ts[i] as f64 <= t {
                if ev_rank[i] > cursor as i64 {
                    dirty[ev_rank[i] as usize] = true;
                }
                i += 1;
            }
        }
    }
    Sweep { end: t, written, late, consumed: i as i64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untagged_pass_writes_pages_dirtied_ahead_of_its_cursor() {
        // Ranks 0 and 2 dirty at t0 = 0; rank 3 dirtied at 15 (ahead), rank 1 at 16 (behind).
        let s = sweep_ranks(4, &[0, 2], &[15, 16], &[3, 1], 0, 0, 10.0, false);
        assert_eq!(s, Sweep { end: 30.0, written: 3, late: 1, consumed: 2 });
    }

    #[test]
    fn tagged_pass_writes_only_its_start_set() {
        let s = sweep_ranks(4, &[0, 2], &[15, 16], &[3, 1], 0, 0, 10.0, true);
        assert_eq!(s, Sweep { end: 20.0, written: 2, late: 0, consumed: 0 });
    }

    #[test]
    fn events_before_the_pass_are_skipped_and_ranks_before_first_never_written() {
        let s = sweep_ranks(3, &[0, 1, 2], &[-5, 0], &[2, 2], 1, 0, 1.0, false);
        assert_eq!(s, Sweep { end: 2.0, written: 2, late: 0, consumed: 2 });
    }
}
