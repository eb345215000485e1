//! Decoding one ring-buffer page ("sub-buffer") as the kernel wrote it.
//!
//! A page is `<u64 timestamp><local_t commit><events...>`. The low 27 bits of
//! `commit` are the bytes of event data; bit 31 says events were lost before
//! this page and bit 30 that their number is stored as a long right after the
//! data. Each event starts with a 32-bit header: 5 bits `type_len`, 27 bits
//! `time_delta` (type_len in the low bits on little-endian, the high bits on
//! big-endian):
//!
//! * 1..=28: a data event of `type_len * 4` bytes after the header;
//! * 0: a data event whose length (+4) is in the next 32-bit word;
//! * 29: padding (a discarded event) of `array[0]` bytes;
//! * 30: time extend: `delta = (array[0] << 27) | time_delta`;
//! * 31: absolute time stamp (59 bits; the top 5 bits come from the page).
//!
//! Timestamps accumulate deltas from the page timestamp exactly as
//! libtraceevent's kbuffer does (including the delta of padding events, which
//! the kernel's own reader skips), so our times match `trace-cmd report`.

use crate::bytes::Endian;
use crate::format::PageHeader;

pub const TYPE_PADDING: u32 = 29;
pub const TYPE_TIME_EXTEND: u32 = 30;
pub const TYPE_TIME_STAMP: u32 = 31;
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
const COMMIT_MASK: u64 = (1 << 27) - 1;
const TS_SHIFT: u32 = 27;
/// An absolute time stamp event carries 59 bits; the top 5 come from the
/// current time.
const TS_MSB: u64 = 0xf8 << 56;

/// Events lost before a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missed {
    None,
    Count(u64),
    /// The kernel flagged a loss but had no room to store the count.
    Unknown,
}

/// The parsed header of one page.
#[derive(Debug, Clone, Copy)]
pub struct PageInfo {
    pub timestamp: u64,
    /// Bytes of event data after the header.
    pub size: usize,
    pub missed: Missed,
}

/// Parse the page header; `Err` names what is wrong (offsets are relative
/// to the page start).
pub fn page_info(page: &[u8], hdr: &PageHeader, endian: Endian) -> Result<PageInfo, String> {
    let data_off = hdr.data_offset as usize;
    let cs = hdr.commit_size as usize;
    if page.len() < data_off || page.len() < hdr.commit_offset as usize + cs || page.len() < hdr.timestamp_offset as usize + 8 {
        return Err(format!("page of {} bytes is shorter than its header", page.len()));
    }
    let ts_off = hdr.timestamp_offset as usize;
    let timestamp = endian.uint(&page[ts_off..ts_off + 8], 8);
    let co = hdr.commit_offset as usize;
    let commit = endian.uint(&page[co..co + cs], cs);
    let size = (commit & COMMIT_MASK) as usize;
    if size > page.len() - data_off {
        return Err(format!("page commit says {size} bytes of events but the page holds {}", page.len() - data_off));
    }
    let missed = if commit & MISSED_EVENTS == 0 {
        Missed::None
    } else if commit & MISSED_STORED != 0 && data_off + size + cs <= page.len() {
        Missed::Count(endian.uint(&page[data_off + size..], cs))
    } else {
        Missed::Unknown
    };
    Ok(PageInfo { timestamp, size, missed })
}

/// One data event on a page: its (raw) timestamp and payload range within
/// the page's event area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRecord {
    pub ts: u64,
    pub start: usize,
    pub len: usize,
}

/// Counters of the non-data entries met on a page.
#[derive(Debug, Default, Clone, Copy)]
pub struct EntryCounts {
    pub padding: u64,
    pub time_extends: u64,
    pub time_stamps: u64,
}

impl EntryCounts {
    pub fn add(&mut self, o: &EntryCounts) {
        self.padding += o.padding;
        self.time_extends += o.time_extends;
        self.time_stamps += o.time_stamps;
    }
}

/// Walks the events area of one page.
pub struct PageWalker<'a> {
    events: &'a [u8],
    pos: usize,
    ts: u64,
    endian: Endian,
    pub counts: EntryCounts,
}

impl<'a> PageWalker<'a> {
    pub fn new(events: &'a [u8], timestamp: u64, endian: Endian) -> Self {
        Self::resume(events, 0, timestamp, endian)
    }

    /// Continue a walk at entry offset `pos` with running time `ts`.
    pub fn resume(events: &'a [u8], pos: usize, ts: u64, endian: Endian) -> Self {
        PageWalker { events, pos, ts, endian, counts: EntryCounts::default() }
    }

    pub fn ts(&self) -> u64 {
        self.ts
    }

    /// Offset of the next entry within the events area.
    pub fn pos(&self) -> usize {
        self.pos
    }

    fn word(&self, at: usize) -> Option<u32> {
        let b = self.events.get(at..at + 4)?;
        Some(self.endian.u32([b[0], b[1], b[2], b[3]]))
    }

    /// The next data event, `Ok(None)` at the end of the page, or `Err` if
    /// an entry runs past the committed data (the rest of the page is lost).
    pub fn next_record(&mut self) -> Result<Option<RawRecord>, String> {
        loop {
            if self.pos >= self.events.len() {
                return Ok(None);
            }
            let at = self.pos;
            let head = self.word(at).ok_or_else(|| format!("event header at +{at} runs past the page data"))?;
            let (type_len, delta) = match self.endian {
                Endian::Little => (head & 0x1f, (head >> 5) as u64),
                Endian::Big => (head >> 27, (head & 0x7ff_ffff) as u64),
            };
            let arg = || self.word(at + 4).ok_or_else(|| format!("event at +{at} (type {type_len}) runs past the page data"));
            match type_len {
                TYPE_PADDING => {
                    let len = arg()? as usize;
                    self.ts = self.ts.wrapping_add(delta);
                    self.pos = at + 4 + len;
                    self.counts.padding += 1;
                }
                TYPE_TIME_EXTEND => {
                    let ext = arg()? as u64;
                    self.ts = self.ts.wrapping_add((ext << TS_SHIFT) + delta);
                    self.pos = at + 8;
                    self.counts.time_extends += 1;
                }
                TYPE_TIME_STAMP => {
                    let ext = arg()? as u64;
                    self.ts = ((ext << TS_SHIFT) + delta) | (self.ts & TS_MSB);
                    self.pos = at + 8;
                    self.counts.time_stamps += 1;
                }
                0 => {
                    let stated = arg()? as usize;
                    if stated < 4 {
                        return Err(format!("event at +{at} has a length word of {stated}"));
                    }
                    let len = (stated - 4 + 3) & !3;
                    let start = at + 8;
                    return self.data(start, len, delta, at);
                }
                n => {
                    let len = n as usize * 4;
                    return self.data(at + 4, len, delta, at);
                }
            }
        }
    }

    fn data(&mut self, start: usize, len: usize, delta: u64, at: usize) -> Result<Option<RawRecord>, String> {
        if start + len > self.events.len() {
            return Err(format!("event at +{at} of {len} bytes runs past the page data ({} bytes)", self.events.len()));
        }
        self.ts = self.ts.wrapping_add(delta);
        self.pos = start + len;
        Ok(Some(RawRecord { ts: self.ts, start, len }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr() -> PageHeader {
        PageHeader { timestamp_offset: 0, commit_offset: 8, commit_size: 8, data_offset: 16 }
    }

    fn ev(type_len: u32, delta: u32) -> [u8; 4] {
        ((delta << 5) | type_len).to_le_bytes()
    }

    fn page(events: &[u8], commit_flags: u64, extra: &[u8]) -> Vec<u8> {
        let mut p = vec![0u8; 4096];
        p[0..8].copy_from_slice(&1000u64.to_le_bytes());
        p[8..16].copy_from_slice(&(events.len() as u64 | commit_flags).to_le_bytes());
        p[16..16 + events.len()].copy_from_slice(events);
        p[16 + events.len()..16 + events.len() + extra.len()].copy_from_slice(extra);
        p
    }

    #[test]
    fn walks_all_entry_types() {
        let mut e = Vec::new();
        e.extend_from_slice(&ev(2, 5)); // 8-byte event, +5
        e.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
        e.extend_from_slice(&ev(TYPE_TIME_EXTEND, 3)); // +(1<<27)+3
        e.extend_from_slice(&1u32.to_le_bytes());
        e.extend_from_slice(&ev(0, 0)); // length-word event of 6 bytes (+pad to 8)
        e.extend_from_slice(&10u32.to_le_bytes());
        e.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]);
        // A discarded event: array[0] counts the bytes after the header.
        e.extend_from_slice(&ev(TYPE_PADDING, 7)); // +7 (kbuffer adds it)
        e.extend_from_slice(&8u32.to_le_bytes());
        e.extend_from_slice(&[0, 0, 0, 0]);
        e.extend_from_slice(&ev(1, 1));
        e.extend_from_slice(&[3, 0, 0, 0]);
        let p = page(&e, 0, &[]);
        let info = page_info(&p, &hdr(), Endian::Little).unwrap();
        assert_eq!(info.missed, Missed::None);
        let mut w = PageWalker::new(&p[16..16 + info.size], info.timestamp, Endian::Little);
        let a = w.next_record().unwrap().unwrap();
        assert_eq!((a.ts, a.len), (1005, 8));
        let b = w.next_record().unwrap().unwrap();
        assert_eq!((b.ts, b.len), (1005 + (1 << 27) + 3, 8));
        let c = w.next_record().unwrap().unwrap();
        assert_eq!(c.ts, 1005 + (1 << 27) + 3 + 7 + 1);
        assert!(w.next_record().unwrap().is_none());
        assert_eq!(w.counts.padding, 1);
    }

    #[test]
    fn missed_events_stored_and_unknown() {
        let e = ev(1, 1);
        let mut full = e.to_vec();
        full.extend_from_slice(&[0; 4]);
        let p = page(&full, MISSED_EVENTS | MISSED_STORED, &42u64.to_le_bytes());
        assert_eq!(page_info(&p, &hdr(), Endian::Little).unwrap().missed, Missed::Count(42));
        let p = page(&full, MISSED_EVENTS, &[]);
        assert_eq!(page_info(&p, &hdr(), Endian::Little).unwrap().missed, Missed::Unknown);
    }

    #[test]
    fn corrupt_entries_are_errors() {
        let mut e = ev(0, 0).to_vec();
        e.extend_from_slice(&5000u32.to_le_bytes());
        let p = page(&e, 0, &[]);
        let info = page_info(&p, &hdr(), Endian::Little).unwrap();
        let mut w = PageWalker::new(&p[16..16 + info.size], 0, Endian::Little);
        assert!(w.next_record().is_err());
        let mut bad = page(&[], 0, &[]);
        bad[8..16].copy_from_slice(&9000u64.to_le_bytes());
        assert!(page_info(&bad, &hdr(), Endian::Little).is_err());
    }

    #[test]
    fn absolute_time_stamp_keeps_top_bits() {
        let mut e = ev(TYPE_TIME_STAMP, 5).to_vec();
        e.extend_from_slice(&2u32.to_le_bytes());
        e.extend_from_slice(&ev(1, 0));
        e.extend_from_slice(&[0; 4]);
        let mut w = PageWalker::new(&e, 0xf800_0000_0000_0000 | 77, Endian::Little);
        let r = w.next_record().unwrap().unwrap();
        assert_eq!(r.ts, 0xf800_0000_0000_0000 | ((2u64 << 27) + 5));
    }
}
