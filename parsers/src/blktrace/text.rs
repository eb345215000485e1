//! blkparse's default text output, read back into blktrace records.
//!
//! ```text
//! 254,0    1        1     0.000000000   163  Q   W 294912 + 2112 [kworker/u4:3]
//! 254,0    1        2     0.000359160   163  X   W 294912 / 297008 [kworker/u4:3]
//! 254,0    0        0     0.000413420     0  m   N bfq [bfq_dispatch] ...
//! ```
//!
//! i.e. `MAJ,MIN CPU SEQ SECONDS.NANOS PID ACTION RWBS` then a tail that
//! depends on the action (blkparse_fmt.c, process_default). Times are
//! relative to the first event; the raw action word, cgroup ids and payloads
//! beyond what is printed are not in the text. The per-CPU statistics
//! blkparse appends are skipped.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::RecordBatch;

use super::action::{ta, tc, tn};
use super::record::{Header, Record, VERSION};
use super::run::Run;
use super::tables::Printed;
use crate::error::{ParseError, Result};
use crate::source::{Limits, TraceSource};
use crate::stats::{Severity, Stat};
use crate::tracedat::decode::TableSpec;
use crate::tracedat::RunReport;

/// A parsed event line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEvent {
    pub record: Record,
    pub printed: Printed,
    pub pc: bool,
}

fn code_of(letter: &str) -> Option<(u32, u32)> {
    // (action code, the category bit blktrace_api.h gives that action)
    Some(match letter {
        "Q" => (ta::QUEUE, tc::QUEUE),
        "M" => (ta::BACKMERGE, tc::QUEUE),
        "F" => (ta::FRONTMERGE, tc::QUEUE),
        "G" => (ta::GETRQ, tc::QUEUE),
        "S" => (ta::SLEEPRQ, tc::QUEUE),
        "R" => (ta::REQUEUE, tc::REQUEUE),
        "D" => (ta::ISSUE, tc::ISSUE),
        "C" => (ta::COMPLETE, tc::COMPLETE),
        "P" => (ta::PLUG, tc::QUEUE),
        "U" => (ta::UNPLUG_IO, tc::QUEUE),
        "UT" => (ta::UNPLUG_TIMER, tc::QUEUE),
        "I" => (ta::INSERT, tc::QUEUE),
        "X" => (ta::SPLIT, 0),
        "B" => (ta::BOUNCE, 0),
        "A" => (ta::REMAP, tc::QUEUE),
        "K" => (ta::ABORT, tc::QUEUE),
        "m" => (tn::MESSAGE, tc::NOTIFY),
        _ => return None,
    })
}

/// Category bits spelled by an RWBS string (the inverse of fill_rwbs).
fn rwbs_bits(rwbs: &str) -> u32 {
    let b = rwbs.as_bytes();
    let mut bits = 0;
    let mut i = 0;
    if b.first() == Some(&b'F') && b.len() > 1 && matches!(b[1], b'D' | b'W' | b'R' | b'N') {
        bits |= tc::FLUSH;
        i = 1;
    }
    match b.get(i) {
        Some(b'D') => bits |= tc::DISCARD | tc::WRITE,
        Some(b'W') => bits |= tc::WRITE,
        Some(b'R') => bits |= tc::READ,
        _ => {}
    }
    for c in &b[(i + 1).min(b.len())..] {
        bits |= match c {
            b'F' => tc::FUA,
            b'A' => tc::AHEAD,
            b'S' => tc::SYNC,
            b'M' => tc::META,
            _ => 0,
        };
    }
    bits
}

fn parse_time(s: &str) -> Option<u64> {
    let (sec, ns) = s.split_once('.')?;
    if ns.len() != 9 {
        return None;
    }
    Some(sec.parse::<u64>().ok()? * 1_000_000_000 + ns.parse::<u64>().ok()?)
}

fn bracketed(s: &str) -> Option<(&str, &str)> {
    let open = s.find('[')?;
    let close = s.rfind(']')?;
    (close > open).then(|| (&s[open + 1..close], s[close + 1..].trim()))
}

/// "SECTOR + NSEC" at the start of `s`: (sector, sectors, rest).
fn sector_len(s: &str) -> Option<(u64, u32, &str)> {
    let mut it = s.splitn(4, ' ');
    let sector = it.next()?.parse().ok()?;
    if it.next()? != "+" {
        return None;
    }
    let n = it.next()?.parse().ok()?;
    Some((sector, n, it.next().unwrap_or("")))
}

fn hex_pdu(s: &str) -> Vec<u8> {
    s.split_whitespace().filter_map(|x| u8::from_str_radix(x, 16).ok()).collect()
}

/// Parse one line; None when it is not an event line.
pub fn parse_line(line: &str) -> Option<TextEvent> {
    let mut f = line.split_whitespace();
    let dev = f.next()?;
    let (maj, min) = dev.split_once(',')?;
    let (maj, min): (u32, u32) = (maj.parse().ok()?, min.parse().ok()?);
    let cpu: u32 = f.next()?.parse().ok()?;
    let seq: u32 = f.next()?.parse().ok()?;
    let time = parse_time(f.next()?)?;
    let pid: u32 = f.next()?.parse().ok()?;
    let letter = f.next()?;
    let rwbs = f.next()?;
    let (code, cat) = code_of(letter)?;
    // The tail starts after the RWBS column (found by position, since a
    // message or a task name may hold any text).
    let tail = {
        let mut rest = line.trim_start();
        for _ in 0..7 {
            rest = rest.split_once(char::is_whitespace)?.1.trim_start();
        }
        rest.trim_end()
    };
    let mut h = Header {
        version: VERSION,
        sequence: seq,
        time,
        sector: 0,
        bytes: 0,
        action: ((cat | if letter == "m" { 0 } else { rwbs_bits(rwbs) }) << 16) | code,
        pid,
        device: (maj << 20) | min,
        cpu,
        error: 0,
        pdu_len: 0,
    };
    let mut comm = None;
    let mut pdu = Vec::new();
    let mut pc = false;
    // Which of sector and size the line shows (set where they are parsed).
    let (mut sector_shown, mut size_shown) = (false, false);
    match letter {
        "m" => pdu = tail.as_bytes().to_vec(),
        "C" | "R" => {
            let (body, after) = bracketed(tail)?;
            if !after.is_empty() {
                return None;
            }
            h.error = body.trim().parse().ok()?;
            let head = tail[..tail.find('[')?].trim();
            if let Some((sector, n, _)) = sector_len(head) {
                h.sector = sector;
                h.bytes = n << 9;
                (sector_shown, size_shown) = (true, true);
            } else if let Some(p) = head.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
                pc = true;
                pdu = hex_pdu(p);
            } else if !head.is_empty() {
                // "SECTOR [error]": a completion of zero sectors.
                h.sector = head.split_whitespace().next()?.parse().ok()?;
                (sector_shown, size_shown) = (true, true);
            } else {
                // "[error]" alone: a packet command.
                pc = true;
            }
        }
        "A" => {
            let (sl, rest) = tail.split_once(" <- ")?;
            let (sector, n, _) = sector_len(sl)?;
            h.sector = sector;
            h.bytes = n << 9;
            (sector_shown, size_shown) = (true, true);
            let rest = rest.strip_prefix('(')?;
            let (from_dev, from_sector) = rest.split_once(')')?;
            let (fm, fn_) = from_dev.split_once(',')?;
            let from: u32 = (fm.trim().parse::<u32>().ok()? << 20) | fn_.trim().parse::<u32>().ok()?;
            let from_sector: u64 = from_sector.trim().parse().ok()?;
            // The printed device of a remap is the target; the payload keeps both.
            pdu.extend_from_slice(&from.to_be_bytes());
            pdu.extend_from_slice(&h.device.to_be_bytes());
            pdu.extend_from_slice(&from_sector.to_be_bytes());
        }
        "X" => {
            let (head, _) = tail.split_once(" [")?;
            let (sector, new) = head.split_once(" / ")?;
            h.sector = sector.trim().parse().ok()?;
            sector_shown = true;
            pdu = new.trim().parse::<u64>().ok()?.to_be_bytes().to_vec();
            comm = Some(bracketed(tail)?.0.to_string());
        }
        "U" | "UT" => {
            let (name, after) = bracketed(tail)?;
            comm = Some(name.to_string());
            pdu = after.parse::<u64>().ok()?.to_be_bytes().to_vec();
        }
        _ => {
            let (name, _) = bracketed(tail)?;
            comm = Some(name.to_string());
            let head = tail[..tail.find('[')?].trim();
            if let Some((sector, n, _)) = sector_len(head) {
                h.sector = sector;
                h.bytes = n << 9;
                (sector_shown, size_shown) = (true, true);
            } else if !head.is_empty() && matches!(letter, "Q" | "D" | "I" | "B") {
                // Packet command: "BYTES (CDB) [comm]".
                pc = true;
                let (bytes, cdb) = head.split_once(' ').unwrap_or((head, ""));
                h.bytes = bytes.parse().ok()?;
                size_shown = true;
                pdu = hex_pdu(cdb.trim().trim_start_matches('(').trim_end_matches(')'));
            } else if letter != "P" {
                // "[comm]" alone: blkparse leaves out the sector of a record
                // of zero sectors (a flush, say).
                size_shown = true;
            }
        }
    }
    if pc {
        h.action |= tc::PC << 16;
    } else if letter != "m" && letter != "X" && letter != "B" {
        h.action |= tc::FS << 16;
    }
    h.pdu_len = pdu.len() as u16;
    let printed = Printed {
        comm: comm.filter(|c| c != "(null)"),
        rwbs: rwbs.to_string(),
        pid: letter != "m",
        sector: sector_shown,
        size: size_shown,
    };
    Some(TextEvent { record: Record { h, cgroup: None, pdu }, printed, pc })
}

/// Lines blkparse writes besides events: input files, statistics.
pub fn is_known_other(line: &str) -> bool {
    let t = line.trim();
    t.is_empty()
        || t.starts_with("Input file ")
        || t.starts_with("CPU")
        || t.starts_with("Total (")
        || t.starts_with("Reads ")
        || t.starts_with("Read ")
        || t.starts_with("Writes ")
        || t.starts_with("Write ")
        || t.starts_with("IO unplugs")
        || t.starts_with("PC ")
        || t.starts_with("Throughput")
        || t.starts_with("Events (")
        || t.starts_with("Skips:")
        || t.starts_with("Allocation wait")
        || t.starts_with("Dispatch wait")
        || t.starts_with("Completion wait")
}

/// Longest line we read (64 KiB): blkparse lines are about 100 bytes,
/// message lines a few hundred; a longer one is skipped, not buffered.
pub const MAX_LINE: usize = 64 << 10;

/// Read one line (with its newline) into `line`, keeping at most `max`
/// bytes: the rest of a longer line is read past, not stored. Returns the
/// bytes consumed (0 at the end) and whether the line was cut.
fn read_line_bounded(r: &mut dyn BufRead, line: &mut Vec<u8>, max: usize) -> std::io::Result<(usize, bool)> {
    let (mut consumed, mut long) = (0, false);
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok((consumed, long));
        }
        let (n, end) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = max.saturating_sub(line.len());
        long |= n > room;
        line.extend_from_slice(&buf[..n.min(room)]);
        r.consume(n);
        consumed += n;
        if end {
            return Ok((consumed, long));
        }
    }
}

/// True if the start of a file looks like blkparse text.
pub fn looks_like_blkparse(head: &str) -> bool {
    head.lines().filter(|l| !l.trim().is_empty()).take(20).any(|l| parse_line(l).is_some())
}

/// blkparse text as a source of blktrace records.
pub struct BlkParseText {
    path: PathBuf,
    total_bytes: u64,
    /// The text itself when it is held in memory (fuzz targets, tests).
    data: Option<Vec<u8>>,
}

impl BlkParseText {
    pub fn open(path: &Path) -> Result<BlkParseText> {
        let m = std::fs::metadata(path).map_err(|source| ParseError::Io { path: path.to_path_buf(), source })?;
        Ok(BlkParseText { path: path.to_path_buf(), total_bytes: m.len(), data: None })
    }

    /// blkparse text held in memory; `path` names it in messages.
    pub fn from_bytes(path: &Path, data: Vec<u8>) -> BlkParseText {
        BlkParseText { path: path.to_path_buf(), total_bytes: data.len() as u64, data: Some(data) }
    }
}

impl TraceSource for BlkParseText {
    fn format(&self) -> &'static str {
        "blktrace"
    }

    fn info(&self) -> Vec<(String, String)> {
        vec![
            ("blktrace_format".into(), "blkparse text".into()),
            ("blktrace_inputs".into(), self.path.display().to_string()),
            ("blktrace_ts_origin".into(), "the first event (blkparse prints times relative to it)".into()),
        ]
    }

    fn specs(&self) -> Vec<TableSpec> {
        Vec::new()
    }

    fn side_tables(&self) -> Vec<(&'static str, arrow_schema::SchemaRef)> {
        super::tables::side_tables()
    }

    fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    fn run(self: Box<Self>, limits: Limits, progress: &AtomicU64, out: &mut dyn FnMut(&str, RecordBatch)) -> RunReport {
        let mut run = Run::new(limits, out);
        let mut damage = Vec::new();
        let (mut malformed, mut read) = (0u64, 0u64);
        let src: std::io::Result<Box<dyn BufRead>> = match self.data {
            Some(d) => Ok(Box::new(std::io::Cursor::new(d))),
            None => std::fs::File::open(&self.path).map(|f| Box::new(std::io::BufReader::with_capacity(1 << 20, f)) as Box<dyn BufRead>),
        };
        match src {
            Ok(mut r) => {
                let mut line = Vec::new();
                let mut no = 0u64;
                loop {
                    line.clear();
                    let long = match read_line_bounded(&mut r, &mut line, MAX_LINE) {
                        Ok((0, _)) => break,
                        Ok((n, long)) => {
                            read += n as u64;
                            long
                        }
                        Err(e) => {
                            damage.push(format!("{}: {e}", self.path.display()));
                            break;
                        }
                    };
                    no += 1;
                    if long {
                        malformed += 1;
                        if damage.len() < 20 {
                            damage.push(format!("{}: line {no}: longer than {MAX_LINE} bytes (skipped)", self.path.display()));
                        }
                        continue;
                    }
                    let text = String::from_utf8_lossy(&line);
                    let text = text.trim_end_matches(['\n', '\r']);
                    match parse_line(text) {
                        // Lines that print no task name (C, R, A, m) leave comm NULL.
                        Some(ev) => run.emit(ev.record, Some(&ev.printed)),
                        None if is_known_other(text) => {}
                        None => {
                            malformed += 1;
                            if damage.len() < 20 {
                                damage.push(format!(
                                    "{}: line {no}: not a blkparse event line: {:?}",
                                    self.path.display(),
                                    text.chars().take(120).collect::<String>()
                                ));
                            }
                        }
                    }
                    if no % 8192 == 0 {
                        progress.store(read, Ordering::Relaxed);
                    }
                }
            }
            Err(e) => damage.push(format!("{}: {e}", self.path.display())),
        }
        progress.store(self.total_bytes, Ordering::Relaxed);
        let stats = vec![Stat::new(
            "blkparse_malformed_lines",
            None,
            Severity::Error,
            malformed,
            "lines that are neither blkparse events nor its statistics (skipped)",
        )];
        run.finish(stats, damage, Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blktrace::action::{letter, rwbs};

    #[test]
    fn long_lines_are_read_past_not_stored() {
        let mut text = vec![b'x'; 3 * MAX_LINE];
        text.extend_from_slice(b"\nnext\n");
        let mut r = std::io::Cursor::new(text);
        let mut line = Vec::new();
        assert_eq!(read_line_bounded(&mut r, &mut line, MAX_LINE).unwrap(), (3 * MAX_LINE + 1, true));
        assert_eq!(line.len(), MAX_LINE);
        line.clear();
        assert_eq!(read_line_bounded(&mut r, &mut line, MAX_LINE).unwrap(), (5, false));
        assert_eq!(line, b"next\n");
    }

    #[test]
    fn event_lines() {
        let e = parse_line("254,0    1        1     0.000000000   163  Q   W 294912 + 2112 [kworker/u4:3]").unwrap();
        let h = e.record.h;
        assert_eq!((h.device >> 20, h.device & 0xfffff, h.cpu, h.sequence, h.time, h.pid), (254, 0, 1, 1, 0, 163));
        assert_eq!((letter(h.action), rwbs(h.action, h.bytes).as_str(), h.sector, h.bytes >> 9), ("Q", "W", 294912, 2112));
        assert_eq!(e.printed.comm.as_deref(), Some("kworker/u4:3"));
        assert!(e.printed.sector && e.printed.size);

        let x = parse_line("254,0    1        2     0.000359160   163  X   W 294912 / 297008 [kworker/u4:3]").unwrap();
        assert_eq!(x.record.pdu_u64(), Some(297008));
        assert!(x.printed.sector && !x.printed.size);
        let c = parse_line("  8,0    0       55     1.000000001     0  C  WS 123 + 8 [0]").unwrap();
        assert_eq!((c.record.h.error, c.record.h.sector, c.record.h.time), (0, 123, 1_000_000_001));
        let u = parse_line("254,0    1       40     0.2   163  UT   N [kworker/u4:3] 1");
        assert!(u.is_none()); // the time needs its nine digits
        let u = parse_line("254,0    1       40     0.200000000   163  UT   N [kworker/u4:3] 1").unwrap();
        assert_eq!(u.record.pdu_u64(), Some(1));
        let a = parse_line("  8,0    1        3     0.000000100  1000  A   W 2048 + 8 <- (253,1) 0").unwrap();
        assert_eq!(a.record.remap(), Some(((253 << 20) | 1, 8 << 20, 0)));
        let m = parse_line("254,0    0        0     0.000413420     0  m   N bfq1231S hello world").unwrap();
        assert_eq!(String::from_utf8(m.record.pdu).unwrap(), "bfq1231S hello world");
        assert!(!m.printed.pid && !m.printed.sector && !m.printed.size);
        let p = parse_line("  8,0    0        9     0.100000000   50  D   R 36 (12 00 00 00 24 00 ..) [sg_inq]").unwrap();
        assert!(p.pc);
        assert_eq!(p.record.h.bytes, 36);
        assert_eq!(p.record.pdu, vec![0x12, 0, 0, 0, 0x24, 0]);
    }

    #[test]
    fn non_events() {
        for l in [
            "CPU0 (blk):",
            " Reads Queued:           0,        0KiB\t Writes Queued:        1148,    41440KiB",
            "Input file /tmp/x.blktrace.0 added",
            "Skips: 0 forward (0 -   0.0%)",
            "hello",
        ] {
            assert!(parse_line(l).is_none(), "{l}");
        }
        assert!(is_known_other("Throughput (R/W): 0KiB/s / 11158KiB/s"));
        assert_eq!(rwbs_bits("FWFS"), tc::FLUSH | tc::WRITE | tc::FUA | tc::SYNC);
    }
}
