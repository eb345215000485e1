//! The `key value` fields of the events whose print formats begin with the device:
//! ext4, jbd2, xfs, and writeback's inode events.
//!
//! ```text
//! ext4_sync_file_enter:          dev 7,0 ino 12 parent 2 datasync 0
//! jbd2_start_commit:             dev 7,0 transaction 41 sync 0
//! sb_mark_inode_writeback:       dev 7,0 ino 12 dirtied 4295231623 state I_DIRTY_PAGES mode 0100644
//! xfs_file_fsync:                dev 7:0 ino 0x83 iflags 0x0
//! ```
//!
//! `dev` comes out as the dev_t a trace.dat holds (7,0 is 7 << 20 = 7340032), a `mode`
//! printed in octal (`0%o`: 0100644) as its value (33188), and every other value as
//! printed, under the name it is printed with (jbd2 prints its `sync_commit` as `sync`,
//! writeback its `dirtied_when` as `dirtied`). Reading stops at the first key (every other
//! token) that is not a name (`dev 7,0 ino 12 found 1 [0/1) 1234 W`: dev, ino and found;
//! a value is taken as printed); a comma after a value is punctuation (`dev 7,0, t_tid 5, ino 12`). `key=value` tokens after them are
//! read as in any line (`dev 7:0 ino 83 pfn=0x1f ofs=0`).

use std::borrow::Cow;

use super::block::dev_t;
use super::fields::{is_key, kv_pairs, MAX_PAIRS};

/// The fields of a line that begins `dev MAJ,MIN` or `dev MAJ:MIN`, or None.
pub fn dev_pairs(info: &str) -> Option<Vec<(&str, Cow<'_, str>)>> {
    let mut tokens = info.split_ascii_whitespace();
    if tokens.next()? != "dev" {
        return None;
    }
    let dev = tokens.next()?;
    let dev = dev.strip_suffix(',').unwrap_or(dev);
    let dev = dev_t(dev, ',').or_else(|| dev_t(dev, ':'))?;
    let mut out: Vec<(&str, Cow<str>)> = vec![("dev", dev.to_string().into())];
    while let (true, Some(key), Some(value)) = (out.len() < MAX_PAIRS, tokens.next(), tokens.next()) {
        let value = value.strip_suffix(',').unwrap_or(value);
        if !is_key(key) || value.is_empty() {
            break;
        }
        let value = match octal_mode(key, value) {
            Some(mode) => mode.to_string().into(),
            None => value.into(),
        };
        out.push((key, value));
    }
    // Bounded: a hostile line of thousands of pairs costs no quadratic search.
    for (k, v) in kv_pairs(info).into_iter().take(MAX_PAIRS) {
        if !out.iter().any(|(have, _)| *have == k) {
            out.push((k, v.into()));
        }
    }
    Some(out)
}

/// A file mode as print formats give it (`mode 0%o`): `0100644` is 33188.
fn octal_mode(key: &str, value: &str) -> Option<u32> {
    let digits = value.strip_prefix('0').filter(|_| key == "mode")?;
    if digits.is_empty() {
        return Some(0);
    }
    u32::from_str_radix(digits, 8).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(info: &str) -> Option<Vec<(String, String)>> {
        dev_pairs(info).map(|v| v.into_iter().map(|(k, v)| (k.to_string(), v.into_owned())).collect())
    }

    fn own(p: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn ext4_jbd2_xfs_and_writeback() {
        assert_eq!(
            pairs("dev 7,0 ino 12 parent 2 datasync 0 "),
            own(&[("dev", "7340032"), ("ino", "12"), ("parent", "2"), ("datasync", "0")])
        );
        assert_eq!(pairs("dev 7:0 ino 0x83 iflags 0x0"), own(&[("dev", "7340032"), ("ino", "0x83"), ("iflags", "0x0")]));
        assert_eq!(
            pairs("dev 7,0 ino 12 dirtied 4295231623 state I_DIRTY_PAGES mode 0100644"),
            own(&[("dev", "7340032"), ("ino", "12"), ("dirtied", "4295231623"), ("state", "I_DIRTY_PAGES"), ("mode", "33188")])
        );
        assert_eq!(pairs("dev 8,16 wait 1"), own(&[("dev", "8388624"), ("wait", "1")]));
        assert_eq!(pairs("dev 7,0 ino 5 mode 0"), own(&[("dev", "7340032"), ("ino", "5"), ("mode", "0")]));
    }

    #[test]
    fn reading_stops_where_the_names_stop() {
        assert_eq!(pairs("dev 7,0 ino 12 found 1 [0/1) 1234 W"), own(&[("dev", "7340032"), ("ino", "12"), ("found", "1")]));
        assert_eq!(pairs("dev 7,0, t_tid 5, ino 12, error 0"), own(&[("dev", "7340032"), ("t_tid", "5"), ("ino", "12"), ("error", "0")]));
        assert_eq!(pairs("dev 7,0 ino 12 len: 4"), own(&[("dev", "7340032"), ("ino", "12")]));
        assert_eq!(pairs("dev 7,0 ino"), own(&[("dev", "7340032")]));
        assert_eq!(pairs("dev 7:0 ino 83 pfn=0x1f ofs=0"), own(&[("dev", "7340032"), ("ino", "83"), ("pfn", "0x1f"), ("ofs", "0")]));
    }

    #[test]
    fn other_lines_are_not_read_here() {
        assert_eq!(pairs("dev=7340032 ino=12"), None);
        assert_eq!(pairs("dev = (7,0), nid = 3"), None);
        assert_eq!(pairs("dev eth0 addr 00:11"), None);
        assert_eq!(pairs("bdi 7:0: ino=12"), None);
        assert_eq!(pairs("dev 5000,0 ino 1"), None);
    }

    #[test]
    fn a_long_line_keeps_a_bounded_number_of_pairs() {
        let line = format!("dev 7,0 {}{}", "k 1 ".repeat(5000), "x=1 ".repeat(5000));
        assert!(dev_pairs(&line).unwrap().len() <= 2 * MAX_PAIRS);
    }
}
