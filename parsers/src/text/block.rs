//! The block events' fields, which their print formats give by position, not as
//! `key=value`. The fields come out under the names of the trace.dat's format, with
//! the values it stores: `7,0` is `dev` = 7 << 20 | 0 = 7340032 (the kernel's dev_t),
//! and the priority `be,0,4` is `ioprio` = 2 << 13 | 0 << 3 | 4 = 16388.
//!
//! The shapes (include/trace/events/block.h; the priority `be,0,4` since commit
//! aa6ff4eb7c10 "block: Add ioprio to block_rq tracepoint"; before it, none):
//!
//! ```text
//! block_rq_issue:     7,0 WS 8192 () 4753472 + 16 be,0,4 [fio]   insert, merge alike
//! block_rq_complete:  7,0 WS () 4753472 + 16 be,0,4 [0]          requeue, error alike
//! block_bio_queue:    7,0 WS 4753472 + 16 [fio]                  backmerge, frontmerge, getrq
//! block_bio_complete: 7,0 WS 4753472 + 16 [0]
//! block_bio_remap:    253,0 W 2048 + 8 <- (7,0) 4096             rq_remap adds its nr_bios
//! block_split:        7,0 W 4753472 / 4753480 [fio]
//! block_plug:         [fio]                                      unplug adds its nr_rq
//! block_dirty_buffer: 7,0 sector=1234 size=4096                  touch_buffer alike
//! ```
//!
//! The command in parentheses is empty for file system I/O and a hex dump with spaces
//! for a passthrough request (`(12 00 00 00 24 00 )`). `trace-cmd report` prints the
//! priority class it cannot resolve as a number (`0x2,0,4`). A line of another shape
//! (`trace-cmd report -R` prints `dev=7340032 sector=...`) is left to the `key=value`
//! reader.

use std::borrow::Cow;

use super::fields::is_int;

/// The fields of a block event's printed text, or None when the text is not the
/// event's positional shape.
pub fn block_fields<'a>(event: &str, info: &'a str) -> Option<Vec<(&'a str, Cow<'a, str>)>> {
    if !event.starts_with("block_") {
        return None;
    }
    let mut s = Cursor { rest: info, out: Vec::new() };
    match event {
        "block_plug" | "block_unplug" => {
            let (comm, rest) = bracketed_then(info)?;
            s.out.push(("comm", comm.into()));
            if event == "block_unplug" {
                s.out.push(("nr_rq", int_token(rest.trim())?.into()));
            } else if !rest.trim().is_empty() {
                return None;
            }
            return Some(s.out);
        }
        "block_dirty_buffer" | "block_touch_buffer" => {
            s.dev("dev")?;
            s.out.extend(super::fields::kv_pairs(s.rest).into_iter().map(|(k, v)| (k, v.into())));
            return Some(s.out);
        }
        _ => {}
    }
    s.dev("dev")?;
    s.field("rwbs")?;
    match event {
        "block_rq_issue" | "block_rq_insert" | "block_rq_merge" => {
            s.int("bytes")?;
            s.cmd()?;
            s.extent()?;
            s.last_bracket("comm")?;
        }
        "block_rq_complete" | "block_rq_requeue" | "block_rq_error" | "block_rq_abort" => {
            s.cmd()?;
            s.extent()?;
            s.last_bracket("error")?;
        }
        "block_bio_queue" | "block_bio_backmerge" | "block_bio_frontmerge" | "block_getrq" | "block_sleeprq" | "block_bio_bounce" => {
            s.sectors()?;
            s.last_bracket("comm")?;
        }
        "block_bio_complete" => {
            s.sectors()?;
            s.last_bracket("error")?;
        }
        "block_bio_remap" | "block_rq_remap" => {
            s.sectors()?;
            s.word("<-")?;
            let inner = s.rest.trim_start().strip_prefix('(')?;
            let (dev, rest) = inner.split_once(')')?;
            s.rest = dev;
            s.dev("old_dev")?;
            s.rest = rest;
            s.int("old_sector")?;
            if event == "block_rq_remap" {
                s.int("nr_bios")?;
            }
        }
        "block_split" => {
            s.int("sector")?;
            s.word("/")?;
            s.int("new_sector")?;
            s.last_bracket("comm")?;
        }
        _ => return None,
    }
    s.rest.trim().is_empty().then_some(s.out)
}

/// What is left of the text, and the fields read so far.
struct Cursor<'a> {
    rest: &'a str,
    out: Vec<(&'a str, Cow<'a, str>)>,
}

impl<'a> Cursor<'a> {
    fn token(&mut self) -> Option<&'a str> {
        let s = self.rest.trim_start();
        let end = s.find(' ').unwrap_or(s.len());
        (end > 0).then(|| {
            self.rest = &s[end..];
            &s[..end]
        })
    }

    fn word(&mut self, w: &str) -> Option<()> {
        (self.token()? == w).then_some(())
    }

    fn field(&mut self, key: &'static str) -> Option<()> {
        let t = self.token()?;
        self.out.push((key, t.into()));
        Some(())
    }

    fn int(&mut self, key: &'static str) -> Option<()> {
        let t = self.token()?;
        self.out.push((key, int_token(t)?.into()));
        Some(())
    }

    fn dev(&mut self, key: &'static str) -> Option<()> {
        let dev = dev_t(self.token()?, ',')?;
        self.out.push((key, dev.to_string().into()));
        Some(())
    }

    /// `(cmd)`: up to the first `)`, spaces included.
    fn cmd(&mut self) -> Option<()> {
        let (cmd, rest) = self.rest.trim_start().strip_prefix('(')?.split_once(')')?;
        self.out.push(("cmd", cmd.into()));
        self.rest = rest;
        Some(())
    }

    /// `sector + nr_sector`.
    fn sectors(&mut self) -> Option<()> {
        self.int("sector")?;
        self.word("+")?;
        self.int("nr_sector")
    }

    /// `sector + nr_sector`, then the priority when the kernel prints it.
    fn extent(&mut self) -> Option<()> {
        self.sectors()?;
        let s = self.rest.trim_start();
        if !s.starts_with('[') {
            let prio = self.token()?;
            self.out.push(("ioprio", ioprio(prio)?.to_string().into()));
        }
        Some(())
    }

    /// `[text]` ending the line; the text may hold spaces and brackets (`[opt cgu.2]`).
    fn last_bracket(&mut self, key: &'static str) -> Option<()> {
        let inner = self.rest.trim().strip_prefix('[')?.strip_suffix(']')?;
        let value: Cow<'a, str> = if key == "error" { int_token(inner)?.into() } else { inner.into() };
        self.out.push((key, value));
        self.rest = "";
        Some(())
    }
}

/// `MAJ,MIN` (`MAJ:MIN` in xfs's events) as the dev_t the kernel stores: MAJ << 20 | MIN
/// (MINORBITS = 20), the value a trace.dat holds.
pub(super) fn dev_t(t: &str, sep: char) -> Option<u32> {
    let (major, minor) = t.split_once(sep)?;
    let (major, minor): (u32, u32) = (major.parse().ok()?, minor.parse().ok()?);
    (major < 1 << 12 && minor < 1 << 20).then_some(major << 20 | minor)
}

/// A decimal integer, possibly negative (an errno).
fn int_token(t: &str) -> Option<&str> {
    is_int(t).then_some(t)
}

/// `[comm] rest`: the bracketed text (to the last `]`) and what follows it.
fn bracketed_then(info: &str) -> Option<(&str, &str)> {
    let inner = info.strip_prefix('[')?;
    let close = inner.rfind(']')?;
    Some((&inner[..close], &inner[close + 1..]))
}

/// `class,hint,level` (IOPRIO_PRIO_VALUE_HINT): `be,0,4` or, unresolved, `0x2,0,4`.
fn ioprio(t: &str) -> Option<u32> {
    let mut parts = t.split(',');
    let class = match parts.next()? {
        "none" => 0,
        "rt" => 1,
        "be" => 2,
        "idle" => 3,
        "invalid" => 7,
        c => match c.strip_prefix("0x") {
            Some(h) => u32::from_str_radix(h, 16).ok()?,
            None => c.parse().ok()?,
        },
    };
    let hint: u32 = parts.next()?.parse().ok()?;
    let level: u32 = parts.next()?.parse().ok()?;
    (parts.next().is_none() && class < 8 && hint < 1 << 10 && level < 8).then_some(class << 13 | hint << 3 | level)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(event: &str, info: &str) -> Option<Vec<(String, String)>> {
        block_fields(event, info).map(|v| v.into_iter().map(|(k, v)| (k.to_string(), v.into_owned())).collect())
    }

    fn pairs(p: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn requests_with_and_without_the_priority() {
        assert_eq!(
            fields("block_rq_issue", "7,0 WS 8192 () 4753472 + 16 be,0,4 [fio]"),
            pairs(&[
                ("dev", "7340032"),
                ("rwbs", "WS"),
                ("bytes", "8192"),
                ("cmd", ""),
                ("sector", "4753472"),
                ("nr_sector", "16"),
                ("ioprio", "16388"),
                ("comm", "fio")
            ])
        );
        assert_eq!(
            fields("block_rq_complete", "7,0 RM () 33928 + 8 0x2,0,4 [0]"),
            pairs(&[
                ("dev", "7340032"),
                ("rwbs", "RM"),
                ("cmd", ""),
                ("sector", "33928"),
                ("nr_sector", "8"),
                ("ioprio", "16388"),
                ("error", "0")
            ])
        );
        // Before the priority was added: an error; a comm with a space; a passthrough command.
        assert_eq!(
            fields("block_rq_insert", "8,16 R 36 (12 00 00 00 24 00 ) 0 + 0 [opt cgu.2]"),
            pairs(&[
                ("dev", "8388624"),
                ("rwbs", "R"),
                ("bytes", "36"),
                ("cmd", "12 00 00 00 24 00 "),
                ("sector", "0"),
                ("nr_sector", "0"),
                ("comm", "opt cgu.2")
            ])
        );
        assert_eq!(
            fields("block_rq_complete", "259,0 FF () 18446744073709551615 + 0 [-5]"),
            pairs(&[
                ("dev", "271581184"),
                ("rwbs", "FF"),
                ("cmd", ""),
                ("sector", "18446744073709551615"),
                ("nr_sector", "0"),
                ("error", "-5")
            ])
        );
    }

    #[test]
    fn bios_remaps_splits_and_plugs() {
        assert_eq!(
            fields("block_bio_queue", "7,0 WS 4753472 + 16 [fio]"),
            pairs(&[("dev", "7340032"), ("rwbs", "WS"), ("sector", "4753472"), ("nr_sector", "16"), ("comm", "fio")])
        );
        assert_eq!(
            fields("block_bio_remap", "253,0 W 2048 + 8 <- (7,0) 4096"),
            pairs(&[
                ("dev", "265289728"),
                ("rwbs", "W"),
                ("sector", "2048"),
                ("nr_sector", "8"),
                ("old_dev", "7340032"),
                ("old_sector", "4096")
            ])
        );
        assert_eq!(
            fields("block_rq_remap", "253,0 W 2048 + 8 <- (7,0) 4096 2").unwrap().last(),
            Some(&("nr_bios".to_string(), "2".to_string()))
        );
        assert_eq!(
            fields("block_split", "7,0 W 100 / 108 [kworker/u4:1]"),
            pairs(&[("dev", "7340032"), ("rwbs", "W"), ("sector", "100"), ("new_sector", "108"), ("comm", "kworker/u4:1")])
        );
        assert_eq!(fields("block_plug", "[fio]"), pairs(&[("comm", "fio")]));
        assert_eq!(fields("block_unplug", "[fio] 3"), pairs(&[("comm", "fio"), ("nr_rq", "3")]));
        assert_eq!(
            fields("block_dirty_buffer", "7,0 sector=1234 size=4096"),
            pairs(&[("dev", "7340032"), ("sector", "1234"), ("size", "4096")])
        );
    }

    #[test]
    fn other_shapes_are_left_to_the_pair_reader() {
        assert_eq!(fields("block_rq_issue", "dev=7340032 sector=33928 nr_sector=8 rwbs=RM comm=dd cmd="), None);
        assert_eq!(fields("block_rq_issue", "7,0 WS 8192 () 4753472 + 16 be,0,4 [fio] trailing"), None);
        assert_eq!(fields("block_rq_issue", "7,0 WS x () 1 + 1 [fio]"), None);
        assert_eq!(fields("block_rq_complete", "7,0 W () 1 + 1 be,0,4 [x]"), None);
        assert_eq!(fields("block_bio_queue", "4096,0 W 1 + 1 [a]"), None);
        assert_eq!(fields("block_rq_issue", "7,0 W 1 () 1 + 1 zz,0,4 [a]"), None);
        assert_eq!(fields("sched_switch", "7,0 W 1 + 1 [a]"), None);
        assert_eq!(fields("block_plug", "fio"), None);
    }
}
