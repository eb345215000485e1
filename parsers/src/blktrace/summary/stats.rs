//! The aggregates `advisor io` shows, computed the way DuckDB computes them
//! for `advisor/io/summary.py`, so both paths print the same digits.

/// count, min, avg, the 50th/90th/99th percentiles, max and sum of a group.
pub struct PhaseStats {
    pub n: u64,
    pub min: u64,
    pub avg: f64,
    pub q: [f64; 3],
    pub max: u64,
    pub total: u128,
}

pub const QUANTILES: [f64; 3] = [0.5, 0.9, 0.99];

/// `quantile_cont(ns, [0.5, 0.9, 0.99])` and the rest of `_PHASE_STATS`.
/// DuckDB interpolates between the order statistics around (n - 1) * q:
/// lo + (hi - lo) * frac, in doubles. The slice is reordered.
pub fn phase_stats(v: &mut [u64]) -> Option<PhaseStats> {
    let n = v.len();
    if n == 0 {
        return None;
    }
    let total: u128 = v.iter().map(|&x| x as u128).sum();
    let (min, max) = v.iter().fold((u64::MAX, 0), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    let mut q = [0.0; 3];
    // Each selection narrows the next: after placing the k-th value, every
    // later index lies in the part above it (the percentiles ascend).
    let mut from = 0;
    for (slot, &p) in q.iter_mut().zip(QUANTILES.iter()) {
        let rn = (n - 1) as f64 * p;
        let (lo_i, hi_i) = (rn.floor() as usize, rn.ceil() as usize);
        let lo = *v[from..].select_nth_unstable(lo_i - from).1;
        from = lo_i;
        *slot = if lo_i == hi_i {
            lo as f64
        } else {
            // The next order statistic: the least value above the k-th.
            let hi = v[lo_i + 1..].iter().copied().min().expect("hi_i < n");
            lo as f64 + (hi as f64 - lo as f64) * (rn - lo_i as f64)
        };
    }
    Some(PhaseStats { n: n as u64, min, avg: average(total, n as u64), q, max, total })
}

/// DuckDB's avg of integers: the exact sum divided by the count.
pub fn average(sum: u128, n: u64) -> f64 {
    sum as f64 / n as f64
}

/// Seek distances of one device and record kind: count, mean, median
/// (`quantile_disc(dist, 0.5)`: the value at index floor((n - 1) / 2)) and
/// mode (the most frequent distance; of equally frequent ones, the shortest).
pub struct SeekStats {
    pub n: u64,
    pub mean: f64,
    pub median: u128,
    pub mode: u128,
    pub mode_count: u64,
}

pub fn seek_stats(v: &mut [u128]) -> Option<SeekStats> {
    let n = v.len();
    if n == 0 {
        return None;
    }
    let sum: u128 = v.iter().sum();
    // Sorted once: the median is read off it and the mode is the longest run.
    // As u64 when every distance fits (all but captures of the last 2^64 sectors):
    // half the bytes to move.
    let (median, mode, mode_count) = if v.iter().all(|&d| d <= u64::MAX as u128) {
        let mut narrow: Vec<u64> = v.iter().map(|&d| d as u64).collect();
        let (m, mode, c) = sorted_median_mode(&mut narrow);
        (m as u128, mode as u128, c)
    } else {
        sorted_median_mode(v)
    };
    Some(SeekStats { n: n as u64, mean: average(sum, n as u64), median, mode, mode_count })
}

/// Median (lower middle) and mode (of equally frequent values, the least) of a
/// non-empty slice, which is sorted.
fn sorted_median_mode<T: Ord + Copy>(v: &mut [T]) -> (T, T, u64) {
    v.sort_unstable();
    let median = v[(v.len() - 1) / 2];
    let (mut mode, mut mode_count) = (v[0], 0u64);
    let mut i = 0;
    while i < v.len() {
        let j = i + v[i..].iter().take_while(|&&x| x == v[i]).count();
        // Ascending order: a later run of equal length is a longer distance.
        if (j - i) as u64 > mode_count {
            (mode, mode_count) = (v[i], (j - i) as u64);
        }
        i = j;
    }
    (median, mode, mode_count)
}

/// The bucket edges (ms) of the latency histogram: `BUCKETS_MS` in
/// advisor/io/summary.py.
pub const BUCKETS_MS: [f64; 13] = [0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0];

/// The first edge at or above `ns` in ms (`list_filter(edges, x -> x >= ns / 1e6)[1]`);
/// None past the last.
pub fn bucket(ns: u64) -> Option<usize> {
    let ms = ns as f64 / 1e6;
    BUCKETS_MS.iter().position(|&e| e >= ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_like_duckdb() {
        // quantile_cont([1, 2, 3, 4], 0.5) = 2.5; 0.9: rn 2.7 → 3.7.
        let s = phase_stats(&mut [4, 1, 3, 2]).unwrap();
        assert_eq!((s.n, s.min, s.max, s.total), (4, 1, 4, 10));
        assert_eq!(s.avg, 2.5);
        assert_eq!(s.q[0], 2.5);
        assert!((s.q[1] - 3.7).abs() < 1e-12);
        let one = phase_stats(&mut [7]).unwrap();
        assert_eq!(one.q, [7.0; 3]);
        assert!(phase_stats(&mut []).is_none());
    }

    #[test]
    fn seek_mode_takes_the_shortest_of_equal_counts() {
        let s = seek_stats(&mut [9, 3, 9, 3, 1]).unwrap();
        assert_eq!((s.n, s.median, s.mode, s.mode_count), (5, 3, 3, 2));
        assert_eq!(s.mean, 5.0);
        // Even count: quantile_disc takes the lower middle.
        assert_eq!(seek_stats(&mut [1, 2, 3, 4]).unwrap().median, 2);
    }

    #[test]
    fn buckets_are_upper_edges() {
        assert_eq!(bucket(100_000), Some(0)); // exactly 0.1 ms
        assert_eq!(bucket(100_001), Some(1));
        assert_eq!(bucket(2_000_000_000), None);
    }
}
