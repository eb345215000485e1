//! The trace.dat file header and metadata, file versions 6 and 7.
//!
//! Version 6 is one fixed sequence: initial header, header_page/header_event,
//! ftrace formats, event formats, kallsyms, printk formats, cmdlines, CPU
//! count, options, then `flyrecord` with a per-CPU (offset, size) table.
//! Version 7 adds a compression header and an offset to the first OPTIONS
//! section; every other piece is a section (`<u16 id><u16 flags><u32 string
//! id><u64 size>`), possibly compressed, located by an option.
//! See trace-cmd.dat.v6(5) and trace-cmd.dat.v7(5).

use std::collections::HashMap;

use super::compress::{Codec, Inflater};
use super::options::{self, BufferInstance, CpuData, TraceOptions};
use crate::bytes::{ByteReader, Endian};
use crate::error::Damage;
use crate::format::{parse_event_format, parse_header_page, EventFormat, PageHeader};

pub const MAGIC: &[u8; 10] = b"\x17\x08\x44tracing";

/// Caps on counts read from the file (far above anything real).
const MAX_FORMATS: u32 = 100_000;
const MAX_SYSTEMS: u32 = 10_000;
const MAX_FORMAT_TEXT: u64 = 1 << 20;
/// Formats in a whole file: a distribution kernel has ~3000 tracepoints,
/// and ring-buffer event ids are 16 bits anyway.
const MAX_TOTAL_FORMATS: usize = 16384;
const SECTION_COMPRESSED: u16 = 1;

#[derive(Debug, Clone)]
pub struct Metadata {
    pub version: u32,
    pub endian: Endian,
    pub long_size: u8,
    pub page_size: u32,
    pub compression: Option<(String, String)>,
    pub codec: Option<Codec>,
    pub page_header: PageHeader,
    pub header_event: String,
    pub formats: Vec<EventFormat>,
    /// Formats that failed to parse: (system, first line or name, reason, file offset).
    pub bad_formats: Vec<(String, String, String, u64)>,
    pub cmdlines: HashMap<i32, String>,
    pub kallsyms_bytes: u64,
    /// The kernel symbols of the kallsyms section, as libtraceevent registers
    /// them, in the file's order; `kallsyms_note` says why there are none when
    /// the section could not be read.
    pub kallsyms: Vec<Ksym>,
    pub kallsyms_note: Option<String>,
    /// Why the strings section (the names of the other sections, which trace-cmd
    /// writes last) could not be read: the file was cut short after its event data.
    pub strings_note: Option<String>,
    pub printk_bytes: u64,
    /// The printk formats section: (address, text) of the constant strings
    /// events point at (tracepoint_string(), trace_printk() formats).
    pub printk_strings: Vec<(u64, String)>,
    pub options: TraceOptions,
    /// The top instance's CPU data, and its page size.
    pub cpus: Vec<CpuData>,
    pub data_page_size: u32,
    /// True when the flyrecord data is compressed in chunks (v7).
    pub cpu_compressed: bool,
    /// Trace instances other than the top one (`trace-cmd record -B NAME`)
    /// whose CPU data is read with the top one's: name and CPU data.
    pub instances: Vec<(String, Vec<CpuData>)>,
    /// Trace instances that are not read (a latency-format one, one whose
    /// page size differs from the top instance's, a v6 one whose CPU table is
    /// not where its option points, those past MAX_CPUS streams in all).
    pub other_instances: Vec<String>,
    /// True for a latency-format (text) trace instead of flyrecord data.
    pub latency: bool,
    /// CPU data the header lists, or leaves out, that is read as no CPU's.
    pub unread: Vec<Unread>,
}

/// CPU data that cannot be read as any CPU's (a CPU id beyond the machine's,
/// a CPU listed twice, data the CPU table leaves out): counted as data loss
/// in `parse_stats` (`unread_cpu_bytes`), with where it is and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    pub offset: u64,
    pub bytes: u64,
    pub reason: String,
}

/// CPU ids accepted when the file has no CPUCOUNT option: below Linux's
/// largest CONFIG_NR_CPUS (8192, x86-64's MAXSMP), so any id stored fits
/// the `cpu` column (INTEGER): a BUFFER entry claiming CPU 2147483648 would
/// otherwise be stored as cpu -2147483648.
pub const MAX_CPUS: u32 = 8192;

/// The CPU entries whose data is read, and what is left unread: an id at or
/// beyond the CPU count (the CPUCOUNT option's, else [`MAX_CPUS`]), or an id
/// already listed (the first entry with data keeps it; the events of two
/// entries must not be merged into one CPU).
fn validate_cpus(cpus: Vec<CpuData>, cpu_count: Option<u32>, compressed: bool, file_len: u64) -> (Vec<CpuData>, Vec<Unread>) {
    let limit = cpu_count.filter(|&n| n > 0).map_or(MAX_CPUS, |n| n.min(MAX_CPUS));
    let whose = if cpu_count.is_some() { "the CPUCOUNT option's" } else { "Linux's largest" };
    let mut seen = std::collections::HashSet::new();
    let (mut kept, mut unread) = (Vec::new(), Vec::new());
    for c in cpus {
        let start = c.offset.min(file_len);
        // Compressed data has a 4-byte chunk count in front that the size leaves out.
        let end = c.offset.saturating_add(c.size).saturating_add(if compressed && c.size > 0 { 4 } else { 0 }).min(file_len);
        let bytes = end.saturating_sub(start);
        let why = if c.cpu >= limit {
            format!("the CPU table lists CPU {}, beyond {whose} {limit} CPUs", c.cpu)
        } else if c.size > 0 && !seen.insert(c.cpu) {
            format!("the CPU table lists CPU {} a second time", c.cpu)
        } else {
            kept.push(c);
            continue;
        };
        if c.size > 0 {
            unread.push(Unread { offset: c.offset, bytes, reason: format!("{why}: its {bytes} bytes of data are not read") });
        }
    }
    (kept, unread)
}

/// Bytes in `[from, to)` that no CPU region covers, counting only gaps of a
/// page or more (smaller ones are the padding that page-aligns each CPU's
/// data): (offset of the first such gap, their total). With `aligned` (the
/// padding runs exactly to the next page boundary, where the next CPU starts),
/// any byte from that boundary on that no region covers is a gap, counted
/// from the boundary, where a left-out CPU's data starts.
fn uncovered(cpus: &[CpuData], compressed: bool, from: u64, to: u64, page_size: u32, aligned: bool) -> Option<(u64, u64)> {
    let mut spans: Vec<(u64, u64)> = cpus
        .iter()
        .filter(|c| c.size > 0)
        .map(|c| {
            // Compressed data has a 4-byte chunk count in front that the size leaves out.
            let end = c.offset.saturating_add(c.size).saturating_add(if compressed { 4 } else { 0 });
            (c.offset.min(to), end.min(to))
        })
        .collect();
    spans.sort();
    spans.push((to, to));
    let (mut at, mut bytes, mut first) = (from, 0u64, None);
    let page = page_size as u64;
    for (start, end) in spans {
        let gap_at = if aligned { at.div_ceil(page).saturating_mul(page) } else { at };
        let gap = if aligned { gap_at < start } else { start > at && start - at >= page };
        if gap {
            bytes += start - gap_at;
            first.get_or_insert(gap_at);
        }
        at = at.max(end);
    }
    first.map(|offset| (offset, bytes))
}

/// v6 CPU data follows the flyrecord table, each CPU's pages padded to a page
/// boundary. Bytes no CPU region covers (beyond that padding) belong to CPUs
/// the table leaves out: a CPU count of 0 would otherwise read as an empty
/// capture with megabytes of pages after its table.
fn unlisted_v6(cpus: &[CpuData], table_end: u64, file_len: u64, page_size: u32, ncpus: u32) -> Option<Unread> {
    uncovered(cpus, false, table_end, file_len, page_size, false).map(|(offset, bytes)| Unread {
        offset,
        bytes,
        reason: format!("{bytes} bytes after the flyrecord table are in no CPU's data (the table lists {ncpus} CPUs): not read"),
    })
}

/// v7 CPU data fills the buffer's flyrecord section: trace-cmd writes each
/// CPU's data from the next page boundary on and lists in the BUFFER option
/// only the CPUs that recorded something (lib/trace-cmd/trace-output.c,
/// out_write_cpu_data and out_add_buffer_option). So a listed CPU's padding
/// ends at the next page boundary, where the next listed CPU starts; a byte of
/// the section from such a boundary on that no listed CPU covers is the data
/// of a CPU the option leaves out. Example: a 2-CPU capture whose option was
/// rewritten to list CPU 0 only keeps CPU 1's compressed pages after CPU 0's,
/// read by nothing.
fn unlisted_v7(file: &[u8], top: &BufferInstance, compressed: bool, page_size: u32, endian: Endian) -> Option<Unread> {
    if top.latency || top.section_offset == 0 {
        return None;
    }
    let mut h = ByteReader::new(file.get(top.section_offset as usize..)?, top.section_offset, endian);
    h.skip(8, "flyrecord section id, flags and description").ok()?;
    let size = h.u64("flyrecord section size").ok()?;
    let body = h.offset();
    let end = body.saturating_add(size).min(file.len() as u64);
    uncovered(&top.cpus, compressed, body, end, page_size, true).map(|(offset, bytes)| Unread {
        offset,
        bytes,
        reason: format!(
            "{bytes} bytes of the flyrecord section are in no CPU's data (the BUFFER option lists {} CPUs): not read",
            top.cpus.len()
        ),
    })
}

pub fn parse(file: &[u8]) -> Result<Metadata, Damage> {
    if file.is_empty() {
        return Err(Damage::new(0, "empty file"));
    }
    if file.len() < MAGIC.len() || &file[..MAGIC.len()] != MAGIC {
        return Err(Damage::new(0, "no trace.dat magic (\\x17\\x08\\x44tracing)"));
    }
    let mut r = ByteReader::new(file, 0, Endian::Little);
    r.skip(MAGIC.len(), "magic")?;
    let vstr = r.cstr(16, "file version")?;
    let version: u32 = std::str::from_utf8(vstr)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Damage::new(10, format!("bad file version {:?}", String::from_utf8_lossy(vstr))))?;
    let endian = match r.u8("endianness")? {
        0 => Endian::Little,
        1 => Endian::Big,
        e => return Err(Damage::new(r.offset() - 1, format!("bad endianness byte {e}"))),
    };
    r.endian = endian;
    let long_size = r.u8("long size")?;
    if long_size != 4 && long_size != 8 {
        return Err(Damage::new(r.offset() - 1, format!("bad long size {long_size}")));
    }
    let page_size = r.u32("page size")?;
    check_page_size(page_size, r.offset() - 4)?;
    match version {
        6 => parse_v6(file, r, long_size, page_size),
        7 => parse_v7(file, r, long_size, page_size),
        v => Err(Damage::new(10, format!("unsupported trace.dat version {v} (6 and 7 are supported)"))),
    }
}

fn check_page_size(size: u32, offset: u64) -> Result<(), Damage> {
    if !(256..=(1 << 24)).contains(&size) || !size.is_power_of_two() {
        return Err(Damage::new(offset, format!("bad page size {size}")));
    }
    Ok(())
}

/// Each CPU's data is its own region of the file: regions that overlap
/// (say, a thousand CPUs all pointing at one compressed bomb) would make
/// us read and inflate the same bytes again and again. Regions running
/// past the end of the file are left to the CPU streams (a cut file keeps
/// its whole pages).
fn check_cpu_regions(cpus: &[CpuData], compressed: bool) -> Result<(), Damage> {
    let mut spans: Vec<(u64, u64, u32)> = cpus
        .iter()
        .filter(|c| c.size > 0)
        // Compressed data has a 4-byte chunk count in front that the size leaves out.
        .map(|c| (c.offset, c.offset.saturating_add(c.size).saturating_add(if compressed { 4 } else { 0 }), c.cpu))
        .collect();
    spans.sort();
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(Damage::new(
                w[1].0,
                format!("data of CPU {} (at {:#x}) overlaps the data of CPU {} ({:#x}..{:#x})", w[1].2, w[1].0, w[0].2, w[0].0, w[0].1),
            ));
        }
    }
    Ok(())
}

/// State shared by both versions while the metadata is assembled.
struct Builder {
    endian: Endian,
    long_size: u8,
    page_header: Option<PageHeader>,
    header_event: String,
    formats: Vec<EventFormat>,
    bad_formats: Vec<(String, String, String, u64)>,
    cmdlines: HashMap<i32, String>,
    kallsyms_bytes: u64,
    kallsyms: Vec<Ksym>,
    kallsyms_note: Option<String>,
    strings_note: Option<String>,
    printk_bytes: u64,
    printk_strings: Vec<(u64, String)>,
}

impl Builder {
    fn new(endian: Endian, long_size: u8) -> Self {
        Builder {
            endian,
            long_size,
            page_header: None,
            header_event: String::new(),
            formats: Vec::new(),
            bad_formats: Vec::new(),
            cmdlines: HashMap::new(),
            kallsyms_bytes: 0,
            kallsyms: Vec::new(),
            kallsyms_note: None,
            strings_note: None,
            printk_bytes: 0,
            printk_strings: Vec::new(),
        }
    }

    fn header_files(&mut self, r: &mut ByteReader) -> Result<(), Damage> {
        let at = r.offset();
        if r.bytes(12, "header_page tag")? != b"header_page\0" {
            return Err(Damage::new(at, "expected \"header_page\""));
        }
        let n = r.u64("header_page size")?;
        let page = r.sized(n.min(MAX_FORMAT_TEXT + 1), "header_page")?;
        if n > MAX_FORMAT_TEXT {
            return Err(Damage::new(at, format!("header_page of {n} bytes")));
        }
        let text = String::from_utf8_lossy(page);
        self.page_header = Some(parse_header_page(&text).map_err(|e| Damage::new(at, e))?);
        let at = r.offset();
        if r.bytes(13, "header_event tag")? != b"header_event\0" {
            return Err(Damage::new(at, "expected \"header_event\""));
        }
        let n = r.u64("header_event size")?;
        if n > MAX_FORMAT_TEXT {
            return Err(Damage::new(at, format!("header_event of {n} bytes")));
        }
        self.header_event = String::from_utf8_lossy(r.sized(n, "header_event")?).into_owned();
        // Kernels before 2.6.31 used another ring-buffer event header.
        if !self.header_event.contains("type_len") {
            return Err(Damage::new(at, "old (pre-2.6.31) ring buffer format is not supported"));
        }
        Ok(())
    }

    fn one_format(&mut self, r: &mut ByteReader, system: &str) -> Result<(), Damage> {
        let at = r.offset();
        if self.formats.len() + self.bad_formats.len() >= MAX_TOTAL_FORMATS {
            return Err(Damage::new(at, format!("more than {MAX_TOTAL_FORMATS} event formats")));
        }
        let n = r.u64("event format size")?;
        if n > MAX_FORMAT_TEXT {
            return Err(Damage::new(at, format!("event format of {n} bytes")));
        }
        let text = String::from_utf8_lossy(r.sized(n, "event format")?);
        match parse_event_format(&text, system, self.long_size) {
            Ok(f) => self.formats.push(f),
            // One odd format must not cost the whole trace: its events are
            // counted as unknown later.
            Err(e) => {
                let name = text.lines().next().unwrap_or("").to_string();
                let name: String = name.chars().take(80).collect();
                let e: String = e.chars().take(200).collect();
                self.bad_formats.push((system.to_string(), name, e, at));
            }
        }
        Ok(())
    }

    fn ftrace_formats(&mut self, r: &mut ByteReader) -> Result<(), Damage> {
        let count = r.u32("ftrace format count")?;
        if count > MAX_FORMATS {
            return Err(Damage::new(r.offset() - 4, format!("{count} ftrace formats")));
        }
        for _ in 0..count {
            self.one_format(r, "ftrace")?;
        }
        Ok(())
    }

    fn event_formats(&mut self, r: &mut ByteReader) -> Result<(), Damage> {
        let systems = r.u32("event system count")?;
        if systems > MAX_SYSTEMS {
            return Err(Damage::new(r.offset() - 4, format!("{systems} event systems")));
        }
        for _ in 0..systems {
            let system = String::from_utf8_lossy(r.cstr(4096, "event system name")?).into_owned();
            let count = r.u32("event count")?;
            if count > MAX_FORMATS {
                return Err(Damage::new(r.offset() - 4, format!("{count} events in system {system}")));
            }
            for _ in 0..count {
                self.one_format(r, &system)?;
            }
        }
        Ok(())
    }

    fn kallsyms(&mut self, r: &mut ByteReader) -> Result<(), Damage> {
        let n = r.u32("kallsyms size")?;
        let data = r.sized(n as u64, "kallsyms")?;
        self.kallsyms_bytes = n as u64;
        let (symbols, note) = kallsyms(data);
        self.kallsyms = symbols;
        self.kallsyms_note = note;
        Ok(())
    }

    fn printk(&mut self, r: &mut ByteReader) -> Result<(), Damage> {
        let n = r.u32("printk formats size")?;
        let data = r.sized(n as u64, "printk formats")?;
        self.printk_bytes = n as u64;
        self.printk_strings = printk_strings(data);
        Ok(())
    }

    /// saved_cmdlines: one `PID COMM` per line.
    fn cmdlines(&mut self, r: &mut ByteReader) -> Result<(), Damage> {
        let n = r.u64("cmdlines size")?;
        let data = r.sized(n, "cmdlines")?;
        for line in data.split(|&b| b == b'\n') {
            let line = String::from_utf8_lossy(line);
            if let Some((pid, comm)) = line.trim_end_matches('\0').split_once(' ') {
                if let Ok(pid) = pid.trim().parse::<i32>() {
                    self.cmdlines.insert(pid, comm.to_string());
                }
            }
        }
        Ok(())
    }

    fn finish(
        self,
        version: u32,
        page_size: u32,
        compression: Option<(String, String)>,
        codec: Option<Codec>,
        options: TraceOptions,
        cpus: Vec<CpuData>,
        data_page_size: u32,
        cpu_compressed: bool,
        latency: bool,
        file_len: u64,
        unlisted: Option<Unread>,
    ) -> Result<Metadata, Damage> {
        let page_header = self.page_header.ok_or_else(|| Damage::new(0, "no header_page description in the file"))?;
        if page_header.data_offset as u64 >= data_page_size as u64 {
            return Err(Damage::new(0, "header_page data offset beyond the page size"));
        }
        let (cpus, mut unread) = validate_cpus(cpus, options.cpu_count, cpu_compressed, file_len);
        unread.extend(unlisted);
        check_cpu_regions(&cpus, cpu_compressed)?;
        let (mut instances, mut other_instances) = (Vec::new(), Vec::new());
        // Every CPU of every instance is a stream read at once: at most as many
        // as one instance may have CPUs.
        let mut streams = cpus.len();
        for b in options.buffers.iter().filter(|b| !b.name.is_empty()) {
            // v7 lists an instance's CPU data in its BUFFER option, v6 in a
            // table the option points to (v6_instance_cpus); either in the top
            // instance's page size and compression (trace-cmd writes them alike).
            let readable = !b.latency && !b.cpus.is_empty() && b.page_size.unwrap_or(page_size) == data_page_size;
            let (kept, skipped) = validate_cpus(b.cpus.clone(), options.cpu_count, cpu_compressed, file_len);
            if readable && streams + kept.len() <= MAX_CPUS as usize && check_cpu_regions(&kept, cpu_compressed).is_ok() {
                streams += kept.len();
                unread.extend(skipped.into_iter().map(|u| Unread { reason: format!("instance {}: {}", b.name, u.reason), ..u }));
                instances.push((b.name.clone(), kept));
            } else {
                other_instances.push(b.name.clone());
            }
        }
        Ok(Metadata {
            version,
            endian: self.endian,
            long_size: self.long_size,
            page_size,
            compression,
            codec,
            page_header,
            header_event: self.header_event,
            formats: self.formats,
            bad_formats: self.bad_formats,
            cmdlines: self.cmdlines,
            kallsyms_bytes: self.kallsyms_bytes,
            kallsyms: self.kallsyms,
            kallsyms_note: self.kallsyms_note,
            strings_note: self.strings_note,
            printk_bytes: self.printk_bytes,
            printk_strings: self.printk_strings,
            options,
            cpus,
            data_page_size,
            cpu_compressed,
            instances,
            other_instances,
            latency,
            unread,
        })
    }
}

/// Symbols kept from one kallsyms (about 100 bytes each in memory): a 6.18
/// kernel lists 122,160, a distribution kernel with its modules loaded a few
/// hundred thousand; a hostile section of 64 MiB of short lines would list
/// millions.
const MAX_KSYMS: usize = 1_000_000;

/// A kernel symbol of /proc/kallsyms: `ffffffffa0c3e010 t xfs_ilock\t[xfs]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ksym {
    pub address: u64,
    pub kind: char,
    pub name: String,
    pub module: Option<String>,
    /// 1-based line in the kallsyms text.
    pub line: u32,
}

/// /proc/kallsyms as trace-cmd saved it, read the way libtraceevent registers
/// it (tep_parse_kallsyms): each line `ADDRESS TYPE NAME`, then `\t[MODULE]`
/// for a module's symbol; names starting with `$` (ARM's mapping symbols) and
/// absolute symbols (type A or a: x86-64's per-CPU offsets, `0000000000000000
/// A fixed_percpu_data`) are skipped. A line that is not of that form ends the
/// reading, as it does libtraceevent's: the symbols before it are kept and the
/// note says where it stopped.
pub fn kallsyms(data: &[u8]) -> (Vec<Ksym>, Option<String>) {
    let mut out = Vec::new();
    for (i, raw) in data.split(|&b| b == b'\n').enumerate() {
        if out.len() == MAX_KSYMS {
            return (out, Some(format!("kallsyms lists more than {MAX_KSYMS} symbols: those from line {} on are not read", i + 1)));
        }
        let line = String::from_utf8_lossy(raw);
        if line.trim().is_empty() {
            continue;
        }
        let t = line.trim_start();
        let (addr, rest) = t.split_once(|c: char| c.is_ascii_whitespace()).unwrap_or((t, ""));
        let address = u64::from_str_radix(addr.strip_prefix("0x").unwrap_or(addr), 16).ok();
        let rest = rest.trim_start();
        let mut chars = rest.chars();
        let kind = chars.next();
        let rest = chars.as_str().trim_start();
        let name_end = rest.find(|c: char| c.is_ascii_whitespace()).unwrap_or(rest.len());
        let (Some(address), Some(kind), false) = (address, kind, name_end == 0) else {
            return (
                out,
                Some(format!("kallsyms line {} is not `ADDRESS TYPE NAME`: {:?}; the symbols after it are not read", i + 1, line)),
            );
        };
        let name = &rest[..name_end];
        if name.starts_with('$') || kind == 'A' || kind == 'a' {
            continue;
        }
        // `\t[xfs]`: libtraceevent drops the last character, the `]`.
        let module = rest[name_end..].strip_prefix("\t[").map(|m| {
            let m = m.split(|c: char| c.is_ascii_whitespace()).next().unwrap_or("");
            m[..m.len().saturating_sub(1)].to_string()
        });
        out.push(Ksym { address, kind, name: name.to_string(), module, line: (i + 1) as u32 });
    }
    (out, None)
}

/// The lines of /sys/kernel/tracing/printk_formats as trace-cmd saved them,
/// `0xffffffff8281b774 : "Start context switch"`, read the way libtraceevent
/// registers them (tep_register_print_string): the quotes and a trailing `\n`
/// (backslash, n) dropped, other escapes kept as written. A line without an
/// address is skipped; one address may be listed twice.
pub fn printk_strings(data: &[u8]) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    for line in data.split(|&b| b == b'\n') {
        let line = String::from_utf8_lossy(line);
        let Some((addr, text)) = line.split_once(':') else { continue };
        let addr = addr.trim();
        let Ok(addr) = u64::from_str_radix(addr.strip_prefix("0x").unwrap_or(addr), 16) else { continue };
        let text = text.strip_prefix(' ').unwrap_or(text);
        let text = text.strip_prefix('"').unwrap_or(text);
        let text = match text.strip_suffix('"') {
            Some(t) => t.strip_suffix("\\n").unwrap_or(t),
            None => text,
        };
        out.push((addr, text.to_string()));
    }
    out
}

fn parse_v6(file: &[u8], mut r: ByteReader, long_size: u8, page_size: u32) -> Result<Metadata, Damage> {
    let mut b = Builder::new(r.endian, long_size);
    b.header_files(&mut r)?;
    b.ftrace_formats(&mut r)?;
    b.event_formats(&mut r)?;
    b.kallsyms(&mut r)?;
    b.printk(&mut r)?;
    b.cmdlines(&mut r)?;
    let ncpus = r.u32("cpu count")?;
    let mut opts = TraceOptions::default();
    let mut latency = false;
    let mut cpus = Vec::new();
    let mut unlisted = None;
    loop {
        let at = r.offset();
        let tag = r.bytes(10, "data type tag")?;
        match tag {
            b"options  \0" => loop {
                let id = r.u16("option id")?;
                if id == options::DONE {
                    break;
                }
                let size = r.u32("option size")?;
                let data_at = r.offset();
                let data = r.sized(size as u64, "option")?;
                opts.apply(id, data, data_at, r.endian, false)?;
            },
            b"latency  \0" => {
                latency = true;
                break;
            }
            b"flyrecord\0" => {
                cpus = v6_cpu_table(&mut r, ncpus)?;
                let table_end = r.offset();
                for b in opts.buffers.iter_mut().filter(|b| !b.name.is_empty()) {
                    b.cpus = v6_instance_cpus(file, b.section_offset, r.endian, ncpus).unwrap_or_default();
                }
                // An instance's table (a page of its own, then its CPUs' pages)
                // is not a gap: `flyrecord\0` and 16 bytes per CPU.
                let tables = opts.buffers.iter().filter(|b| !b.cpus.is_empty()).map(|b| CpuData {
                    cpu: u32::MAX,
                    offset: b.section_offset,
                    size: 10 + 16 * b.cpus.len() as u64,
                });
                let covered: Vec<CpuData> = cpus.iter().chain(opts.buffers.iter().flat_map(|b| &b.cpus)).cloned().chain(tables).collect();
                unlisted = unlisted_v6(&covered, table_end, file.len() as u64, page_size, ncpus);
                break;
            }
            _ => return Err(Damage::new(at, format!("expected options/latency/flyrecord, found {:?}", String::from_utf8_lossy(tag)))),
        }
    }
    b.finish(6, page_size, None, None, opts, cpus, page_size, false, latency, file.len() as u64, unlisted)
}

/// A v6 BUFFER option (`trace-cmd record -B NAME`) holds only the instance's
/// name and the offset of its CPU table. There trace-cmd wrote `flyrecord\0`
/// and one (offset, size) pair of u64 per CPU (lib/trace-cmd/trace-output.c,
/// tcmd_out_write_cpu_data), read back with the file's CPU count
/// (trace-input.c, tracecmd_buffer_instance_handle, then read_cpu_data), e.g.
/// `flyrecord\0` (0x54000, 0x2000) (0x56000, 0x1000) on 2 CPUs. trace-cmd's
/// reader also accepts an `options  \0` block before the tag. None when the
/// table is not there: the instance is then reported as not read.
fn v6_instance_cpus(file: &[u8], offset: u64, endian: Endian, ncpus: u32) -> Option<Vec<CpuData>> {
    let mut r = ByteReader::new(file.get(usize::try_from(offset).ok()?..)?, offset, endian);
    let mut tag = r.bytes(10, "instance data type tag").ok()?;
    if tag == b"options  \0" {
        loop {
            let id = r.u16("option id").ok()?;
            if id == options::DONE {
                break;
            }
            let size = r.u32("option size").ok()?;
            r.sized(size as u64, "option").ok()?;
        }
        tag = r.bytes(10, "instance data type tag").ok()?;
    }
    if tag != b"flyrecord\0" {
        return None;
    }
    v6_cpu_table(&mut r, ncpus).ok()
}

/// A v6 flyrecord table, after its `flyrecord\0` tag: an (offset, size) pair
/// of u64 for each of the file's `ncpus` CPUs.
fn v6_cpu_table(r: &mut ByteReader, ncpus: u32) -> Result<Vec<CpuData>, Damage> {
    // The table needs 16 bytes per CPU: check before looping.
    if ncpus as usize > r.remaining() / 16 {
        return Err(Damage::new(r.offset(), format!("flyrecord table for {ncpus} CPUs does not fit in the file")));
    }
    (0..ncpus).map(|cpu| Ok(CpuData { cpu, offset: r.u64("cpu data offset")?, size: r.u64("cpu data size")? })).collect()
}

/// Read a v7 section header at `offset`; return (id, flags, payload).
/// A compressed payload is inflated into `scratch`.
fn section<'a>(
    file: &'a [u8],
    offset: u64,
    endian: Endian,
    codec: &mut Option<Inflater>,
    scratch: &'a mut Vec<u8>,
) -> Result<(u16, u16, ByteReader<'a>), Damage> {
    if offset >= file.len() as u64 {
        return Err(Damage::new(
            offset,
            format!(
                "truncated file: a section is at offset {offset:#x} but the file ends at {:#x} \
                 (trace-cmd writes the index of the CPU data last, so nothing can be located)",
                file.len()
            ),
        ));
    }
    let mut r = ByteReader::new(&file[offset as usize..], offset, endian);
    let id = r.u16("section id")?;
    let flags = r.u16("section flags")?;
    let _desc = r.u32("section description")?;
    let size = r.u64("section size")?;
    let body_at = r.offset();
    let body = r.sized(size, "section")?;
    if flags & SECTION_COMPRESSED == 0 {
        return Ok((id, flags, ByteReader::new(body, body_at, endian)));
    }
    let codec = codec.as_mut().ok_or_else(|| Damage::new(offset, "compressed section in a file without compression"))?;
    let mut c = ByteReader::new(body, body_at, endian);
    let zsize = c.u32("compressed size")?;
    let usize_ = c.u32("uncompressed size")?;
    let z = c.sized(zsize as u64, "compressed section data")?;
    codec.inflate(z, usize_, scratch).map_err(|e| Damage::new(body_at, e))?;
    Ok((id, flags, ByteReader::new(scratch, body_at, endian)))
}

/// A reader at a section's header (id, flags, description, size), or why the file
/// has none there.
fn section_header(file: &[u8], offset: u64, endian: Endian) -> Result<ByteReader<'_>, Damage> {
    let start = usize::try_from(offset).ok().filter(|&o| o < file.len()).ok_or_else(|| {
        Damage::new(offset, format!("truncated file: a section is at offset {offset:#x} but the file ends at {:#x}", file.len()))
    })?;
    Ok(ByteReader::new(&file[start..], offset, endian))
}

/// Where a section ends in the file: its 16-byte header (id, flags, description,
/// size) and the size it declares.
fn section_end(file: &[u8], offset: u64, endian: Endian) -> Result<u64, Damage> {
    let mut r = section_header(file, offset, endian)?;
    r.skip(8, "section id, flags and description")?;
    Ok(offset.saturating_add(16).saturating_add(r.u64("section size")?))
}

/// The (uncompressed) payload size of a section, read from its headers only.
fn section_size(file: &[u8], offset: u64, endian: Endian) -> Result<u64, Damage> {
    let mut r = section_header(file, offset, endian)?;
    let mut at_flags = r.clone();
    r.skip(4, "section id and flags")?;
    at_flags.skip(2, "section id")?;
    let flags = at_flags.u16("section flags")?;
    r.skip(4, "section description")?;
    let size = r.u64("section size")?;
    if flags & SECTION_COMPRESSED == 0 {
        return Ok(size);
    }
    r.skip(4, "compressed size")?;
    Ok(r.u32("uncompressed size")? as u64)
}

fn parse_v7(file: &[u8], mut r: ByteReader, long_size: u8, page_size: u32) -> Result<Metadata, Damage> {
    let at = r.offset();
    let name = String::from_utf8_lossy(r.cstr(64, "compression name")?).into_owned();
    let cversion = String::from_utf8_lossy(r.cstr(64, "compression version")?).into_owned();
    let codec = match name.as_str() {
        "none" => None,
        n => Some(Codec::from_name(n).ok_or_else(|| Damage::new(at, format!("unknown compression {n:?}")))?),
    };
    let mut next_options = r.u64("options offset")?;
    let endian = r.endian;
    let mut b = Builder::new(endian, long_size);
    let mut opts = TraceOptions::default();
    let mut scratch = Vec::new();
    // One inflater for every metadata section: their total is bounded too.
    let mut inflater = codec.map(Inflater::new);
    let mut seen = std::collections::HashSet::new();
    let mut options_end = 0u64;
    // Options sections form a chain through the DONE option's offset.
    while next_options != 0 {
        if !seen.insert(next_options) {
            return Err(Damage::new(next_options, "options sections form a loop"));
        }
        let (id, _, mut o) = section(file, next_options, endian, &mut inflater, &mut scratch)?;
        if id != options::DONE {
            return Err(Damage::new(next_options, format!("expected an options section, found section id {id}")));
        }
        options_end = options_end.max(section_end(file, next_options, endian)?);
        next_options = 0;
        while !o.is_empty() {
            let oid = o.u16("option id")?;
            let size = o.u32("option size")?;
            let data_at = o.offset();
            let data = o.sized(size as u64, "option")?;
            if oid == options::DONE {
                next_options = ByteReader::new(data, data_at, endian).u64("next options offset")?;
                break;
            }
            opts.apply(oid, data, data_at, endian, true)?;
        }
    }
    // trace-cmd writes one more section after the last options section as it closes
    // the file: the strings section (the other sections' names; `trace-cmd dump
    // --sections` lists it last). Nothing decodes from it, so a file cut short there
    // loses no event; but the file is short, and that is said.
    // Only past everything the options point at: a writer that put its last options
    // section before the CPU data would have us read event data as a section header.
    let data_end = opts.buffers.iter().flat_map(|b| &b.cpus).map(|c| c.offset.saturating_add(c.size)).max().unwrap_or(0);
    let pointed = opts.sections.iter().map(|&(_, o)| o).chain(opts.buffers.iter().map(|b| b.section_offset)).max().unwrap_or(0);
    if (options_end as usize) < file.len() && options_end >= data_end && options_end > pointed {
        if let Err(d) = section(file, options_end, endian, &mut inflater, &mut scratch) {
            b.strings_note = Some(format!("offset {:#x}: {}", d.offset, d.reason));
        }
    }
    let sections = std::mem::take(&mut opts.sections);
    // trace-cmd writes each section once; options repeating one (thousands
    // of times, pointing at one big section) must not make us read it again.
    let mut read_ids = std::collections::HashSet::new();
    for &(sid, offset) in &sections {
        if !read_ids.insert(sid) {
            continue;
        }
        if matches!(sid, options::BTF_FILE | options::MODULES_FILE) {
            // Not needed to decode events: not inflated.
            section_size(file, offset, endian)?;
            continue;
        }
        if sid == options::KALLSYMS {
            // Only for printing pointers as symbols: a section that cannot be
            // read costs the symbols, not the capture.
            let size = section_size(file, offset, endian)?;
            // kallsyms starts with a u32 size of the text that follows.
            b.kallsyms_bytes = size.saturating_sub(4);
            match section(file, offset, endian, &mut inflater, &mut scratch) {
                Ok((options::KALLSYMS, _, mut s)) => {
                    if let Err(d) = b.kallsyms(&mut s) {
                        b.kallsyms_note = Some(format!("offset {:#x}: {}", d.offset, d.reason));
                    }
                }
                Ok((id, ..)) => {
                    b.kallsyms_note = Some(format!("offset {offset:#x}: option points to section {sid} but found section {id}"))
                }
                Err(d) => b.kallsyms_note = Some(format!("offset {:#x}: {}", d.offset, d.reason)),
            }
            continue;
        }
        let (id, _, mut s) = section(file, offset, endian, &mut inflater, &mut scratch)?;
        if id != sid {
            return Err(Damage::new(offset, format!("option points to section {sid} but found section {id}")));
        }
        match sid {
            options::HEADER_INFO => b.header_files(&mut s)?,
            options::FTRACE_EVENTS => b.ftrace_formats(&mut s)?,
            options::EVENT_FORMATS => b.event_formats(&mut s)?,
            options::CMDLINES => b.cmdlines(&mut s)?,
            options::KALLSYMS => b.kallsyms(&mut s)?,
            options::PRINTK => b.printk(&mut s)?,
            _ => {}
        }
    }
    opts.sections = sections;
    let top: Option<BufferInstance> = opts.buffers.iter().find(|x| x.name.is_empty()).cloned();
    let mut unlisted = None;
    let (cpus, data_page_size, cpu_compressed, latency) = match top {
        Some(top) => {
            if top.clock.is_some() && opts.clock.is_none() {
                opts.clock = top.clock.clone();
            }
            let ps = top.page_size.unwrap_or(page_size);
            if !top.latency {
                check_page_size(ps, top.section_offset)?;
            }
            // The flyrecord section's own header says whether its data is compressed.
            let mut flags = 0;
            if top.section_offset != 0 {
                let mut h = ByteReader::new(file.get(top.section_offset as usize..).unwrap_or(&[]), top.section_offset, endian);
                h.u16("flyrecord section id")?;
                flags = h.u16("flyrecord section flags")?;
            }
            let compressed = flags & SECTION_COMPRESSED != 0;
            unlisted = unlisted_v7(file, &top, compressed, ps, endian);
            (top.cpus.clone(), ps, compressed, top.latency)
        }
        None => (Vec::new(), page_size, false, false),
    };
    b.finish(7, page_size, Some((name, cversion)), codec, opts, cpus, data_page_size, cpu_compressed, latency, file.len() as u64, unlisted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(cpu: u32, offset: u64, size: u64) -> CpuData {
        CpuData { cpu, offset, size }
    }

    #[test]
    fn printk_formats_are_read_as_libtraceevent_registers_them() {
        let text = b"0xffffffff8281b774 : \"Start context switch\"\n\
0xffffffff8281a8ff : \"thaw_processes\"\n\
0xffffffff8281a8ff : \"thaw_processes\"\n\
0xffffffff82900000 : \"%s: %d\\n\"\n\
garbage line\n\
0xffffffff82900010 : unquoted\n";
        let got = printk_strings(text);
        assert_eq!(
            got,
            vec![
                (0xffffffff8281b774, "Start context switch".to_string()),
                (0xffffffff8281a8ff, "thaw_processes".to_string()),
                (0xffffffff8281a8ff, "thaw_processes".to_string()),
                // trace_printk() formats end in a written "\n", which is dropped
                (0xffffffff82900000, "%s: %d".to_string()),
                (0xffffffff82900010, "unquoted".to_string()),
            ]
        );
    }

    #[test]
    fn a_cpu_id_beyond_the_count_is_not_read() {
        let (kept, unread) = validate_cpus(vec![cpu(0, 4096, 8192), cpu(1 << 31, 12288, 4096)], Some(2), false, 1 << 20);
        assert_eq!(kept, vec![cpu(0, 4096, 8192)]);
        assert_eq!(unread.len(), 1);
        assert_eq!((unread[0].offset, unread[0].bytes), (12288, 4096));
        assert!(unread[0].reason.contains("CPU 2147483648, beyond the CPUCOUNT option's 2 CPUs"), "{}", unread[0].reason);
        // Without CPUCOUNT the bound is Linux's largest CPU count.
        let (kept, unread) = validate_cpus(vec![cpu(8191, 0, 10), cpu(8192, 10, 10)], None, false, 100);
        assert_eq!((kept.len(), unread.len()), (1, 1));
    }

    #[test]
    fn a_cpu_listed_twice_keeps_its_first_data() {
        // Compressed: 4 bytes of chunk count in front of the stated size.
        let (kept, unread) = validate_cpus(vec![cpu(0, 100, 50), cpu(0, 200, 60), cpu(1, 0, 0), cpu(1, 300, 10)], None, true, 1000);
        assert_eq!(kept, vec![cpu(0, 100, 50), cpu(1, 0, 0), cpu(1, 300, 10)]);
        assert_eq!((unread[0].offset, unread[0].bytes), (200, 64));
        assert!(unread[0].reason.contains("CPU 0 a second time"));
    }

    #[test]
    fn v6_bytes_in_no_cpu_are_counted() {
        // Table ends at 1000; pages start at the next 4096 boundary: padding, not loss.
        assert_eq!(unlisted_v6(&[cpu(0, 4096, 8192), cpu(1, 12288, 4096)], 1000, 16384, 4096, 2), None);
        // ncpus = 0: everything after the table is unread.
        let u = unlisted_v6(&[], 1000, 3_000_000, 4096, 0).unwrap();
        assert_eq!((u.offset, u.bytes), (1000, 2_999_000));
        // ncpus = 1 of 2: the second CPU's pages.
        let u = unlisted_v6(&[cpu(0, 4096, 8192)], 1000, 16384, 4096, 1).unwrap();
        assert_eq!((u.offset, u.bytes), (12288, 4096));
    }

    #[test]
    fn kallsyms_are_read_as_libtraceevent_registers_them() {
        let text = b"ffffffff81000000 T _stext\n\
0000000000000000 A fixed_percpu_data\n\
ffffffff81000010 t $x\n\
\n\
ffffffffa0c3e010 t xfs_ilock\t[xfs]\n\
ffffffff81000020 W weak_fn\n";
        let (got, note) = kallsyms(text);
        assert_eq!(note, None);
        let ksym = |address, kind, name: &str, module: Option<&str>, line| Ksym {
            address,
            kind,
            name: name.into(),
            module: module.map(Into::into),
            line,
        };
        assert_eq!(
            got,
            vec![
                ksym(0xffffffff81000000, 'T', "_stext", None, 1),
                ksym(0xffffffffa0c3e010, 't', "xfs_ilock", Some("xfs"), 5),
                ksym(0xffffffff81000020, 'W', "weak_fn", None, 6),
            ]
        );
        // A line without a name ends the reading; what came before stays.
        let (got, note) = kallsyms(b"ffffffff81000000 T _stext\nffffffff81000010 T\nffffffff81000020 T after\n");
        assert_eq!(got.len(), 1);
        assert!(note.unwrap().starts_with("kallsyms line 2 is not"));
        // Memory stays bounded whatever the section lists.
        let (got, note) = kallsyms(&b"1 T a\n".repeat(MAX_KSYMS + 5));
        assert_eq!(got.len(), MAX_KSYMS);
        assert!(note.unwrap().contains("those from line 1000001 on are not read"));
    }

    #[test]
    fn a_v6_instance_table_is_read_where_its_option_points() {
        let pair = |o: u64, n: u64| [o.to_le_bytes(), n.to_le_bytes()].concat();
        let mut file = vec![0u8; 100];
        file.extend_from_slice(b"flyrecord\0");
        file.extend(pair(0x5000, 0x2000));
        file.extend(pair(0x7000, 0));
        assert_eq!(v6_instance_cpus(&file, 100, Endian::Little, 2), Some(vec![cpu(0, 0x5000, 0x2000), cpu(1, 0x7000, 0)]));
        // trace-cmd's reader takes an options block before the tag.
        let mut with_options = b"options  \0".to_vec();
        with_options.extend_from_slice(&[8, 0, 3, 0, 0, 0, b'a', b'b', b'c', 0, 0]);
        with_options.extend_from_slice(&file[100..]);
        assert_eq!(v6_instance_cpus(&with_options, 0, Endian::Little, 2), v6_instance_cpus(&file, 100, Endian::Little, 2));
        // Pointing elsewhere, past the end, or at a table cut short: not read.
        assert_eq!(v6_instance_cpus(&file, 99, Endian::Little, 2), None);
        assert_eq!(v6_instance_cpus(&file, 1 << 40, Endian::Little, 2), None);
        assert_eq!(v6_instance_cpus(&file[..file.len() - 1], 100, Endian::Little, 2), None);
    }

    #[test]
    fn v7_gaps_are_counted_from_their_page_boundary() {
        // Compressed regions: a 4-byte chunk count, then `size` bytes; the next
        // CPU starts at the next 4096 boundary. CPU 0 ends at 4096 + 704 + 4.
        let listed = [cpu(0, 4096, 700), cpu(1, 8192, 300)];
        assert_eq!(uncovered(&listed, true, 4000, 8192 + 304, 4096, true), None);
        // CPU 1 left out: counted from 8192, where its data starts.
        assert_eq!(uncovered(&listed[..1], true, 4000, 8192 + 304, 4096, true), Some((8192, 304)));
        // CPU 0 left out: from the section's first page boundary to CPU 1 (its padding too).
        assert_eq!(uncovered(&listed[1..], true, 4000, 8192 + 304, 4096, true), Some((4096, 4096)));
    }
}
