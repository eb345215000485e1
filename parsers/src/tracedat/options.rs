//! trace.dat options (both file versions use the same option ids).
//!
//! Each option is `<u16 id><u32 size><size bytes>`. We keep what a user or a
//! timestamp needs and count the rest.

use crate::bytes::{ByteReader, Endian};
use crate::error::Damage;

pub const DONE: u16 = 0;
pub const DATE: u16 = 1;
pub const CPUSTAT: u16 = 2;
pub const BUFFER: u16 = 3;
pub const TRACECLOCK: u16 = 4;
pub const UNAME: u16 = 5;
pub const HOOK: u16 = 6;
pub const OFFSET: u16 = 7;
pub const CPUCOUNT: u16 = 8;
pub const VERSION: u16 = 9;
pub const PROCMAPS: u16 = 10;
pub const TRACEID: u16 = 11;
pub const TIME_SHIFT: u16 = 12;
pub const GUEST: u16 = 13;
pub const TSC2NSEC: u16 = 14;
pub const STRINGS: u16 = 15;
pub const HEADER_INFO: u16 = 16;
pub const FTRACE_EVENTS: u16 = 17;
pub const EVENT_FORMATS: u16 = 18;
pub const KALLSYMS: u16 = 19;
pub const PRINTK: u16 = 20;
pub const CMDLINES: u16 = 21;
pub const BUFFER_TEXT: u16 = 22;
pub const BTF_FILE: u16 = 23;
pub const LAST_BOOT_INFO: u16 = 24;
pub const MODULES_FILE: u16 = 25;

/// Where one CPU's ring-buffer pages are in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuData {
    pub cpu: u32,
    pub offset: u64,
    pub size: u64,
}

/// A BUFFER option: one trace instance's flyrecord data (v7 carries the
/// CPU table in the option; v6 only the name and an offset).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BufferInstance {
    pub name: String,
    pub section_offset: u64,
    pub clock: Option<String>,
    pub page_size: Option<u32>,
    pub cpus: Vec<CpuData>,
    pub latency: bool,
}

/// The TSC2NSEC option: `ns = (cycles * mult) >> shift`, plus `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tsc2Nsec {
    pub mult: u32,
    pub shift: u32,
    pub offset: u64,
}

#[derive(Debug, Clone, Default)]
pub struct TraceOptions {
    pub uname: Option<String>,
    pub clock: Option<String>,
    pub tracer_version: Option<String>,
    pub cpu_count: Option<u32>,
    /// DATE (µs, converted to ns) and OFFSET options, summed as trace-cmd does.
    pub ts_offset: i64,
    pub date: Option<String>,
    pub tsc2nsec: Option<Tsc2Nsec>,
    pub time_shift: bool,
    pub trace_id: Option<u64>,
    pub cpustats: Vec<String>,
    pub buffers: Vec<BufferInstance>,
    /// v7: offsets of the metadata sections, by section id.
    pub sections: Vec<(u16, u64)>,
    pub unknown: Vec<u16>,
    pub guests: u32,
    pub procmaps: bool,
}

/// Longest string option we keep (uname, clock, version, ...).
const MAX_STR: usize = 1 << 20;

fn text(data: &[u8]) -> String {
    let end = memchr::memchr(0, data).unwrap_or(data.len());
    String::from_utf8_lossy(&data[..end]).trim_end().to_string()
}

/// `trace_clock` lists every clock with the active one in brackets:
/// `[local] global counter uptime ...`. A v7 BUFFER option names it directly.
pub fn active_clock(s: &str) -> String {
    match (s.find('['), s.find(']')) {
        (Some(a), Some(b)) if b > a => s[a + 1..b].to_string(),
        _ => s.trim().to_string(),
    }
}

impl TraceOptions {
    /// Apply one option. `has_sections` is true for file version 7, whose
    /// BUFFER option carries the clock, page size and CPU table.
    pub fn apply(&mut self, id: u16, data: &[u8], data_offset: u64, endian: Endian, has_sections: bool) -> Result<(), Damage> {
        let mut r = ByteReader::new(data, data_offset, endian);
        match id {
            DATE => {
                // Hex or decimal µs between trace timestamps and wall time.
                let s = text(data);
                let v = parse_c_integer(&s).ok_or_else(|| Damage::new(data_offset, format!("bad DATE option {s:?}")))?;
                self.ts_offset = self.ts_offset.wrapping_add(v.wrapping_mul(1000));
                self.date = Some(s);
            }
            OFFSET => {
                let s = text(data);
                let v = parse_c_integer(&s).ok_or_else(|| Damage::new(data_offset, format!("bad OFFSET option {s:?}")))?;
                self.ts_offset = self.ts_offset.wrapping_add(v);
            }
            CPUSTAT => self.cpustats.push(text(&data[..data.len().min(MAX_STR)])),
            BUFFER | BUFFER_TEXT => {
                let mut b = BufferInstance {
                    section_offset: r.u64("BUFFER option offset")?,
                    name: String::from_utf8_lossy(r.cstr(4096, "BUFFER option name")?).into_owned(),
                    latency: id == BUFFER_TEXT,
                    ..Default::default()
                };
                if has_sections {
                    b.clock = Some(String::from_utf8_lossy(r.cstr(4096, "BUFFER option clock")?).into_owned());
                    if id == BUFFER {
                        b.page_size = Some(r.u32("BUFFER option page size")?);
                        let n = r.u32("BUFFER option cpu count")?;
                        // 20 bytes per CPU entry: never trust a count the
                        // option's own size cannot hold.
                        if n as usize > r.remaining() / 20 {
                            return Err(Damage::new(
                                r.offset(),
                                format!("BUFFER option claims {n} CPUs but holds {} bytes", r.remaining()),
                            ));
                        }
                        for _ in 0..n {
                            b.cpus.push(CpuData {
                                cpu: r.u32("BUFFER cpu id")?,
                                offset: r.u64("BUFFER cpu offset")?,
                                size: r.u64("BUFFER cpu size")?,
                            });
                        }
                    }
                }
                self.buffers.push(b);
            }
            TRACECLOCK => self.clock = Some(active_clock(&text(data))),
            UNAME => self.uname = Some(text(&data[..data.len().min(MAX_STR)])),
            VERSION => self.tracer_version = Some(text(&data[..data.len().min(MAX_STR)])),
            CPUCOUNT => self.cpu_count = Some(r.u32("CPUCOUNT option")?),
            TRACEID => self.trace_id = Some(r.u64("TRACEID option")?),
            TSC2NSEC => {
                self.tsc2nsec =
                    Some(Tsc2Nsec { mult: r.u32("TSC2NSEC mult")?, shift: r.u32("TSC2NSEC shift")?, offset: r.u64("TSC2NSEC offset")? })
            }
            TIME_SHIFT => self.time_shift = true,
            GUEST => self.guests += 1,
            PROCMAPS => self.procmaps = true,
            HOOK | STRINGS | LAST_BOOT_INFO => {}
            HEADER_INFO | FTRACE_EVENTS | EVENT_FORMATS | KALLSYMS | PRINTK | CMDLINES | BTF_FILE | MODULES_FILE => {
                self.sections.push((id, r.u64("section offset option")?));
            }
            _ => self.unknown.push(id),
        }
        Ok(())
    }
}

/// Parse an integer the way C's `strtoll(s, NULL, 0)` would: optional sign,
/// `0x` hex, leading-zero octal, or decimal.
pub fn parse_c_integer(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = if let Some(h) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()? as i64
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse::<i64>().ok()?
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_integers() {
        assert_eq!(parse_c_integer("0x10"), Some(16));
        assert_eq!(parse_c_integer("-0x10"), Some(-16));
        assert_eq!(parse_c_integer("010"), Some(8));
        assert_eq!(parse_c_integer("1700000000"), Some(1_700_000_000));
        assert_eq!(parse_c_integer("zz"), None);
    }

    #[test]
    fn clock_in_brackets() {
        assert_eq!(active_clock("[local] global counter\n"), "local");
        assert_eq!(active_clock("mono"), "mono");
    }

    #[test]
    fn buffer_option_v7() {
        let mut d = Vec::new();
        d.extend_from_slice(&4096u64.to_le_bytes());
        d.extend_from_slice(b"\0local\0");
        d.extend_from_slice(&4096u32.to_le_bytes());
        d.extend_from_slice(&1u32.to_le_bytes());
        d.extend_from_slice(&1u32.to_le_bytes());
        d.extend_from_slice(&8192u64.to_le_bytes());
        d.extend_from_slice(&4096u64.to_le_bytes());
        let mut o = TraceOptions::default();
        o.apply(BUFFER, &d, 0, Endian::Little, true).unwrap();
        let b = &o.buffers[0];
        assert_eq!(b.clock.as_deref(), Some("local"));
        assert_eq!(b.cpus, vec![CpuData { cpu: 1, offset: 8192, size: 4096 }]);
        // A CPU count the option cannot hold is refused.
        d[4 + 8 + 7..4 + 8 + 7 + 4].copy_from_slice(&1_000_000u32.to_le_bytes());
        assert!(TraceOptions::default().apply(BUFFER, &d, 0, Endian::Little, true).is_err());
    }
}
