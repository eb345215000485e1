//! The `key=value` fields of an event's printed text.
//!
//! Print formats are free text (`bdi 7:0: ino=12 index=0`), so only
//! `key=value` tokens become fields (and the fields of two kinds of formats
//! whose shape is known: the block events' positional ones, in `block.rs`, and
//! the `dev 7,0 ino 12 ...` pairs of ext4, jbd2, xfs and writeback's inode
//! events, in `dev_pairs.rs`); everything else stays in the printed text.
//! When the text is made of pairs only (it starts with `key=`, as in
//! `trace-cmd report -R`), a value runs on over following tokens that have
//! no `=` (`comm=opt cgu.2`), and `ARRAY[..]` values are kept whole.
//! Syscall entries print `name: value` pairs (`fd: 1, buf: 0x55..`).

use std::borrow::Cow;

use super::block::block_fields;
use super::dev_pairs::dev_pairs;
use super::line::EventKind;

/// Most `key=value` pairs of one line that become columns (real events
/// print a few dozen; the rest of a longer line stays in the `info` text).
/// Keeps a hostile line of a million pairs from costing a million columns
/// or a quadratic key search.
pub const MAX_PAIRS: usize = 256;

/// Event name and (key, value) pairs of one line (at most [`MAX_PAIRS`]). A value is
/// the printed text, or where the print format transformed it the value the kernel
/// stored: a device `7,0` as its dev_t, a priority `be,0,4` as its number, an octal
/// mode as its value (see [`block_fields`], [`dev_pairs`]).
pub fn event_fields<'a>(kind: &EventKind<'a>) -> (String, Vec<(&'a str, Cow<'a, str>)>) {
    if let EventKind::Named { name, info } = kind {
        let positional = if *name == "writeback_pages_written" && is_int(info) {
            Some(vec![("pages", Cow::Borrowed(*info))]) // print fmt "%ld"
        } else {
            block_fields(name, info).or_else(|| dev_pairs(info))
        };
        if let Some(mut pairs) = positional {
            pairs.truncate(MAX_PAIRS);
            return (name.to_string(), pairs);
        }
    }
    let (name, mut pairs) = all_fields(kind);
    pairs.truncate(MAX_PAIRS);
    (name, pairs.into_iter().map(|(k, v)| (k, Cow::Borrowed(v))).collect())
}

fn all_fields<'a>(kind: &EventKind<'a>) -> (String, Vec<(&'a str, &'a str)>) {
    match kind {
        EventKind::Named { name, info } => {
            let pairs = if name.starts_with("sys_enter_") && !info.contains('=') {
                colon_pairs(info)
            } else if name.starts_with("sys_exit_") && !info.contains('=') && !info.is_empty() && !info.contains(' ') {
                // trace-cmd prints a syscall exit as just its return value.
                vec![("ret", *info)]
            } else {
                let mut pairs = kv_pairs(info);
                if let Some(bdi) = leading_bdi(info) {
                    // track_foreign_dirty prints "bdi %s[%llu]: ": the name, then bdi_id.
                    match bdi.strip_suffix(']').and_then(|b| b.rsplit_once('[')) {
                        Some((bdi, id)) if !id.is_empty() && id.bytes().all(|c| c.is_ascii_digit()) => {
                            pairs.splice(0..0, [(bdi_field(name), bdi), ("bdi_id", id)]);
                        }
                        _ => pairs.insert(0, (bdi_field(name), bdi)),
                    }
                }
                pairs
            };
            (name.to_string(), pairs)
        }
        EventKind::SyscallEnter { call, args } => (format!("sys_enter_{}", &call[4..]), colon_pairs(args)),
        EventKind::SyscallExit { call, ret } => (format!("sys_exit_{}", &call[4..]), vec![("ret", *ret)]),
        EventKind::Function { func, parent } => ("function".to_string(), vec![("ip", *func), ("parent_ip", *parent)]),
    }
}

/// The bdi that the writeback events' print formats put first, outside `key=value`
/// (`"bdi %s: ino=%lu index=%lu"`): `trace-cmd report` prints `bdi 7:0: ino=12 index=0`
/// and `bdi btrfs-1: ...` where `-R` prints `name=7:0 ino=12 index=0`. Only in a line
/// that is not pairs only (`-R` text already has the field).
fn leading_bdi(info: &str) -> Option<&str> {
    let rest = info.strip_prefix("bdi ")?;
    let (bdi, _) = rest.split_once(": ")?;
    (!bdi.is_empty() && !bdi.contains(char::is_whitespace) && !bdi.contains('=')).then_some(bdi)
}

/// The field the leading bdi is printed from: `bdi[32]` in balance_dirty_pages and
/// bdi_dirty_ratelimit, `name[32]` in the other writeback events.
fn bdi_field(event: &str) -> &'static str {
    if matches!(event, "balance_dirty_pages" | "bdi_dirty_ratelimit") {
        "bdi"
    } else {
        "name"
    }
}

/// A decimal integer, maybe negative: `9`, `-5`.
pub(super) fn is_int(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
}

/// A name as print formats use one: `ino`, `_flags`, `nr_to_write`.
pub(super) fn is_key(k: &str) -> bool {
    let b = k.as_bytes();
    !b.is_empty() && (b[0].is_ascii_alphabetic() || b[0] == b'_') && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// `fd: 1, buf: 0x55, count: 0x10`.
fn colon_pairs(s: &str) -> Vec<(&str, &str)> {
    s.split(", ")
        .filter_map(|p| {
            let (k, v) = p.split_once(": ")?;
            let k = k.trim();
            is_key(k).then_some((k, v.trim()))
        })
        .collect()
}

/// Whitespace-separated `key=value` tokens (see the module comment).
pub fn kv_pairs(info: &str) -> Vec<(&str, &str)> {
    let pairs_only = info.split_once('=').is_some_and(|(k, _)| is_key(k));
    let mut out: Vec<(&str, &str)> = Vec::new();
    // Byte offsets into `info` of the current pair's value.
    let mut open: Option<(usize, usize, usize)> = None; // (key index in out, start, end)
    let mut in_array = false;
    for (start, tok) in tokens(info) {
        let end = start + tok.len();
        if let Some((i, vstart, _)) = open {
            if in_array || (pairs_only && !tok.contains('=')) {
                in_array = in_array && !tok.ends_with(']');
                open = Some((i, vstart, end));
                out[i].1 = &info[vstart..end];
                continue;
            }
        }
        open = None;
        in_array = false;
        let Some((k, v)) = tok.split_once('=') else { continue };
        if !is_key(k) {
            continue;
        }
        let vstart = start + k.len() + 1;
        let mut v = v;
        if !pairs_only {
            // "nr=3," in a sentence: the comma is punctuation.
            v = v.strip_suffix(',').unwrap_or(v);
        }
        in_array = v.starts_with("ARRAY[") && !v.ends_with(']');
        out.push((k, v));
        open = Some((out.len() - 1, vstart, vstart + v.len()));
    }
    out
}

/// (byte offset, token) for each whitespace-separated token.
fn tokens(s: &str) -> impl Iterator<Item = (usize, &str)> {
    s.split_ascii_whitespace().map(move |t| (t.as_ptr() as usize - s.as_ptr() as usize, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_leading_bdi_of_writeback_events() {
        let named = |name, info| all_fields(&EventKind::Named { name, info }).1;
        assert_eq!(named("writeback_dirty_folio", "bdi 7:0: ino=12 index=0"), vec![("name", "7:0"), ("ino", "12"), ("index", "0")]);
        assert_eq!(named("writeback_written", "bdi btrfs-1: sb_dev 0:47 nr_pages=9"), vec![("name", "btrfs-1"), ("nr_pages", "9")]);
        assert_eq!(named("balance_dirty_pages", "bdi 8:16: limit=1 setpoint=2"), vec![("bdi", "8:16"), ("limit", "1"), ("setpoint", "2")]);
        // -R text has the field as a pair; a sentence without "bdi X: " has none.
        assert_eq!(named("writeback_dirty_folio", "name=7:0 ino=12 index=0"), vec![("name", "7:0"), ("ino", "12"), ("index", "0")]);
        assert_eq!(named("sched_switch", "prev_comm=a prev_pid=1"), vec![("prev_comm", "a"), ("prev_pid", "1")]);
        assert_eq!(named("writeback_dirty_folio", "bdi : ino=1"), vec![("ino", "1")]);
        assert_eq!(
            named("track_foreign_dirty", "bdi btrfs-17[27]: ino=258 memcg_id=2"),
            vec![("name", "btrfs-17"), ("bdi_id", "27"), ("ino", "258"), ("memcg_id", "2")]
        );
    }

    #[test]
    fn sentence_style() {
        assert_eq!(kv_pairs("bdi 7:0: ino=12 index=0"), vec![("ino", "12"), ("index", "0")]);
        assert_eq!(
            kv_pairs("prev_comm=bash prev_pid=1 prev_state=S ==> next_comm=x y=1"),
            vec![("prev_comm", "bash"), ("prev_pid", "1"), ("prev_state", "S"), ("next_comm", "x"), ("y", "1")]
        );
    }

    #[test]
    fn raw_style_values_with_spaces_and_arrays() {
        assert_eq!(
            kv_pairs("comm=opt cgu.2 pid=5 data=ARRAY[00, 01, 02] x=1"),
            vec![("comm", "opt cgu.2"), ("pid", "5"), ("data", "ARRAY[00, 01, 02]"), ("x", "1")]
        );
        assert_eq!(kv_pairs("cmd= next=1"), vec![("cmd", ""), ("next", "1")]);
    }

    #[test]
    fn syscalls() {
        let fields = |kind| {
            let (n, f) = event_fields(&kind);
            (n, f.into_iter().map(|(k, v)| (k, v.into_owned())).collect::<Vec<_>>())
        };
        let own = |p: &[(&'static str, &str)]| p.iter().map(|(k, v)| (*k, v.to_string())).collect::<Vec<_>>();
        let (n, f) = fields(EventKind::SyscallEnter { call: "sys_write", args: "fd: 1, buf: 0x56, count: 0x10000" });
        assert_eq!(n, "sys_enter_write");
        assert_eq!(f, own(&[("fd", "1"), ("buf", "0x56"), ("count", "0x10000")]));
        let (n, f) = fields(EventKind::Named { name: "sys_exit_write", info: "0x10000" });
        assert_eq!((n.as_str(), f), ("sys_exit_write", own(&[("ret", "0x10000")])));
        let (_, f) = fields(EventKind::Named { name: "sys_enter_write", info: "fd: 0x00000001, buf: 0x5602, count: 0x00010000" });
        assert_eq!(f, own(&[("fd", "0x00000001"), ("buf", "0x5602"), ("count", "0x00010000")]));
        // A block event's positional fields, under the trace.dat's names.
        let (_, f) = fields(EventKind::Named { name: "block_dirty_buffer", info: "7,0 sector=1234 size=4096" });
        assert_eq!(f, own(&[("dev", "7340032"), ("sector", "1234"), ("size", "4096")]));
        // The device-first formats, and writeback_pages_written's bare count.
        let (_, f) = fields(EventKind::Named { name: "ext4_sync_fs", info: "dev 7,0 wait 1" });
        assert_eq!(f, own(&[("dev", "7340032"), ("wait", "1")]));
        let (_, f) = fields(EventKind::Named { name: "writeback_pages_written", info: "9" });
        assert_eq!(f, own(&[("pages", "9")]));
    }
}
