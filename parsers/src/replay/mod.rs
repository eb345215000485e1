//! The replay's inner loops: the per-page and per-fsync simulations that run
//! once per policy over every event of a capture (tens of millions of page
//! dirtyings). The models around them stay in Python (`advisor/problems/`);
//! these take their arrays and give back the same numbers to the last bit:
//! every float operation is the one the Python model's arithmetic does, in
//! its order (no fused multiply-add, no reassociation).

pub mod fsync_log;
pub mod page_sweep;
pub mod page_waits;

#[cfg(feature = "python")]
pub(crate) mod python;

/// Python's `max(a, b)`: `b` only when it is greater (ties keep `a`, so
/// `max(0.0, -0.0)` is `0.0`, where `f64::max` may give either).
#[inline]
pub(crate) fn py_max(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// Python's `min(a, b)`: `b` only when it is smaller.
#[inline]
pub(crate) fn py_min(a: f64, b: f64) -> f64 {
    if b < a {
        b
    } else {
        a
    }
}

/// Python's float floor division `a // b`, which is not `(a / b).floor()`:
/// it divides `a - fmod(a, b)` and snaps to the nearest integer, so
/// `1.0 // 0.1` is 9.0 where `(1.0 / 0.1).floor()` is 10.0 (CPython's
/// float_divmod, which numba and NumPy's `//` follow too).
pub(crate) fn py_floordiv(a: f64, b: f64) -> f64 {
    let m = a % b; // C's fmod
    let mut div = (a - m) / b;
    if m != 0.0 && (b < 0.0) != (m < 0.0) {
        div -= 1.0; // the remainder takes the divisor's sign
    }
    if div != 0.0 {
        let mut floordiv = div.floor();
        if div - floordiv > 0.5 {
            floordiv += 1.0;
        }
        floordiv
    } else {
        // zero with the sign of the true quotient
        (div * div) * a / b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floordiv_is_pythons() {
        assert_eq!(py_floordiv(1.0, 0.1), 9.0);
        assert_eq!(py_floordiv(7.0, 2.0), 3.0);
        assert_eq!(py_floordiv(-7.0, 2.0), -4.0);
        assert_eq!(py_floordiv(7.0, -2.0), -4.0);
        assert_eq!(py_floordiv(61e9, 30e9), 2.0);
        assert!(py_floordiv(-0.0, 3.0).is_sign_negative());
    }

    #[test]
    fn max_and_min_keep_the_first_on_ties() {
        assert!(py_max(0.0, -0.0).is_sign_positive());
        assert!(py_min(0.0, -0.0).is_sign_positive());
        assert_eq!(py_max(1.0, 2.0), 2.0);
        assert_eq!(py_min(1.0, 2.0), 1.0);
    }
}
