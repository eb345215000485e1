//! Reading records from one blktrace file (a per-CPU file, a merged file,
//! or stdin), and blkparse's merge of per-CPU streams.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, Read};

use super::action::{self, tn};
use super::record::{detect_endian, Header, Record, HEADER};
use crate::bytes::Endian;
use crate::error::Damage;

/// A process name from a notify record.
#[derive(Debug, Clone)]
pub struct TaskName {
    pub name: String,
    /// Id of the first record emitted after the name was read: records
    /// before it show no name (blkparse looks names up as it prints).
    pub known_from: u64,
}

/// Facts learnt from notify records while reading.
#[derive(Debug, Default)]
pub struct Notes {
    /// pid → process name. blkparse keeps the first name it reads for a pid.
    pub names: HashMap<u32, TaskName>,
    /// TIMESTAMP notify: (trace time, wall-clock seconds, nanoseconds).
    pub wallclock: Option<(u64, i64, i64)>,
    pub process_records: u64,
    /// Id the next emitted record will get (kept by the consumer).
    pub next_id: u64,
}

impl Notes {
    pub fn take(&mut self, r: &Record, e: Endian) {
        match action::code(r.h.action) {
            tn::PROCESS => {
                self.process_records += 1;
                let end = memchr::memchr(0, &r.pdu).unwrap_or(r.pdu.len());
                let name = String::from_utf8_lossy(&r.pdu[..end]).into_owned();
                let known_from = self.next_id;
                self.names.entry(r.h.pid).or_insert(TaskName { name, known_from });
            }
            tn::TIMESTAMP if r.pdu.len() == 8 => {
                // Two u32 in the trace's byte order: seconds, nanoseconds.
                let sec = e.u32(r.pdu[0..4].try_into().unwrap_or_default()) as i32 as i64;
                let nsec = e.u32(r.pdu[4..8].try_into().unwrap_or_default()) as i32 as i64;
                self.wallclock = Some((r.h.time, sec, nsec));
            }
            _ => {}
        }
    }
}

/// Reads records one at a time; stops at the first damage, recording it.
pub struct Reader {
    pub name: String,
    src: Box<dyn BufRead + Send>,
    pub endian: Option<Endian>,
    pub offset: u64,
    pub damage: Option<Damage>,
    pub truncated_bytes: u64,
    done: bool,
}

/// Longest payload a record may claim (pdu_len is a u16, so this only
/// documents the bound).
const MAX_PDU: usize = u16::MAX as usize;

impl Reader {
    pub fn new(name: String, src: Box<dyn BufRead + Send>) -> Reader {
        Reader { name, src, endian: None, offset: 0, damage: None, truncated_bytes: 0, done: false }
    }

    /// Fill `buf` completely; Ok(false) at a clean end of input, Err(n) after
    /// reading only n bytes.
    fn fill(&mut self, buf: &mut [u8]) -> Result<bool, usize> {
        let mut got = 0;
        while got < buf.len() {
            match self.src.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        if got == buf.len() {
            Ok(true)
        } else if got == 0 {
            Ok(false)
        } else {
            Err(got)
        }
    }

    /// "FILE: offset 0x..: reason" for the damage met, if any.
    pub fn damage_line(&self) -> Option<String> {
        self.damage.as_ref().map(|d| format!("{}: offset {:#x}: {}", self.name, d.offset, d.reason))
    }

    fn fail(&mut self, at: u64, reason: String) -> Option<Record> {
        self.damage = Some(Damage::new(at, reason));
        self.done = true;
        None
    }

    /// The next record when all of it is already in the read buffer (nearly
    /// always): parsed where it lies, without copying it out first. None
    /// leaves the input untouched for `next`'s careful path (the first
    /// record, a record across a buffer refill, damage).
    #[inline]
    fn next_buffered(&mut self) -> Option<Record> {
        let e = self.endian?;
        let buf = self.src.fill_buf().ok()?;
        let header = Header::parse(buf.get(..HEADER)?.try_into().ok()?, e).ok()?;
        let len = HEADER + header.pdu_len as usize;
        let r = Record::from_parts(header, buf.get(HEADER..len)?, e);
        self.src.consume(len);
        self.offset += len as u64;
        Some(r)
    }

    /// The next record, or None at the end or at damage.
    pub fn next(&mut self) -> Option<Record> {
        if self.done {
            return None;
        }
        if let Some(r) = self.next_buffered() {
            return Some(r);
        }
        let mut h = [0u8; HEADER];
        let at = self.offset;
        match self.fill(&mut h) {
            Ok(true) => {}
            Ok(false) => {
                self.done = true;
                return None;
            }
            Err(n) => {
                self.truncated_bytes += n as u64;
                return self.fail(at, format!("truncated record: {n} of {HEADER} header bytes"));
            }
        }
        let e = match self.endian {
            Some(e) => e,
            None => match detect_endian([h[0], h[1], h[2], h[3]]) {
                Some(e) => {
                    self.endian = Some(e);
                    e
                }
                None => return self.fail(at, format!("not blktrace data (bad magic {:02x}{:02x}{:02x}{:02x})", h[0], h[1], h[2], h[3])),
            },
        };
        let header = match Header::parse(&h, e) {
            Ok(x) => x,
            Err(why) => return self.fail(at, why),
        };
        let mut payload = vec![0u8; (header.pdu_len as usize).min(MAX_PDU)];
        match self.fill(&mut payload) {
            Ok(true) => {}
            Ok(false) if payload.is_empty() => {}
            Ok(false) => {
                self.truncated_bytes += HEADER as u64;
                return self.fail(at, format!("truncated record: payload of {} bytes missing", header.pdu_len));
            }
            Err(n) => {
                self.truncated_bytes += (HEADER + n) as u64;
                return self.fail(at, format!("truncated record: {n} of {} payload bytes", header.pdu_len));
            }
        }
        self.offset += (HEADER + payload.len()) as u64;
        Some(Record::from_parts(header, &payload, e))
    }
}

/// Records blkparse reads ahead per stream before looking at them again.
pub const BATCH: usize = 512;

/// One per-CPU file of one device, as a queue refilled in batches of 512
/// records the way blkparse primes its streams (notify records other than
/// messages are taken when read, not queued).
pub struct CpuStream {
    pub reader: Reader,
    pub cpu: u32,
    queue: VecDeque<Record>,
    pub wrong_cpu: u64,
    pub records: u64,
}

impl CpuStream {
    pub fn new(reader: Reader, cpu: u32) -> Self {
        CpuStream { reader, cpu, queue: VecDeque::new(), wrong_cpu: 0, records: 0 }
    }

    /// ms_prime: read up to BATCH queued records; returns how many.
    pub fn prime(&mut self, notes: &mut Notes) -> usize {
        let mut n = 0;
        while n < BATCH {
            let Some(r) = self.reader.next() else { break };
            if action::is_notify(r.h.action) && action::code(r.h.action) != tn::MESSAGE {
                notes.take(&r, self.reader.endian.unwrap_or(Endian::Little));
                continue;
            }
            if r.h.cpu != self.cpu {
                // blkparse: "cpu %d trace info has error cpu %d" — skipped.
                self.wrong_cpu += 1;
                n += 1;
                continue;
            }
            self.records += 1;
            self.queue.push_back(r);
            n += 1;
        }
        self.queue.len()
    }

    fn peek_time(&self) -> u64 {
        self.queue.front().map_or(u64::MAX, |r| r.h.time)
    }
}

/// blkparse's merge of per-CPU streams (ms_sort / ms_resort / ms_deq): the
/// stream list is kept ordered by the time of each stream's next record; a
/// stream is put back after every stream whose next record is strictly
/// earlier, and the current stream keeps going on ties. Reproducing this
/// exactly keeps our order (and so btt's matching) equal to blkparse's.
pub struct Merge {
    pub streams: Vec<CpuStream>,
    order: Vec<usize>,
}

impl Merge {
    pub fn new(mut streams: Vec<CpuStream>, notes: &mut Notes) -> Merge {
        let mut m = Merge { streams: Vec::new(), order: Vec::new() };
        for s in streams.iter_mut() {
            s.prime(notes);
        }
        m.streams = streams;
        for i in 0..m.streams.len() {
            if !m.streams[i].queue.is_empty() {
                m.sort_in(i);
            }
        }
        m
    }

    /// ms_sort: insert stream `i` by its next record's time.
    fn sort_in(&mut self, i: usize) {
        let t = self.streams[i].peek_time();
        if self.order.is_empty() || t < self.streams[self.order[0]].peek_time() {
            self.order.insert(0, i);
            return;
        }
        let mut at = 0;
        while at + 1 < self.order.len() && self.streams[self.order[at + 1]].peek_time() < t {
            at += 1;
        }
        self.order.insert(at + 1, i);
    }

    /// The earliest time of any queued record (blkparse's genesis).
    pub fn first_time(&self) -> Option<u64> {
        self.order.first().map(|&i| self.streams[i].peek_time())
    }

    /// The next record in blkparse's order, with the CPU stream it came from.
    pub fn next(&mut self, notes: &mut Notes) -> Option<(usize, Record)> {
        let &head = self.order.first()?;
        let r = self.streams[head].queue.pop_front()?;
        // ms_deq: refill an empty stream, drop it when its file is done.
        if self.streams[head].queue.is_empty() && self.streams[head].prime(notes) == 0 {
            self.order.remove(0);
            return Some((head, r));
        }
        // ms_resort: move the head back only if it is now strictly later.
        if self.order.len() > 1 && self.streams[head].peek_time() > self.streams[self.order[1]].peek_time() {
            self.order.remove(0);
            self.sort_in(head);
        }
        Some((head, r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blktrace::record::encode;

    fn rec(seq: u32, time: u64, cpu: u32) -> Vec<u8> {
        let h = Header {
            version: 7,
            sequence: seq,
            time,
            sector: seq as u64,
            bytes: 512,
            action: (0x11 << 16) | 1,
            pid: 1,
            device: 8 << 20,
            cpu,
            error: 0,
            pdu_len: 0,
        };
        encode(&h, &[], Endian::Little)
    }

    fn stream(cpu: u32, times: &[u64]) -> CpuStream {
        let data: Vec<u8> = times.iter().enumerate().flat_map(|(i, &t)| rec(i as u32 + 1, t, cpu)).collect();
        CpuStream::new(Reader::new(format!("cpu{cpu}"), Box::new(std::io::Cursor::new(data))), cpu)
    }

    #[test]
    fn merges_by_time_ties_stay_on_the_current_stream() {
        let mut notes = Notes::default();
        let mut m = Merge::new(vec![stream(0, &[1, 5, 5, 9]), stream(1, &[2, 5, 7])], &mut notes);
        let mut got = Vec::new();
        while let Some((_, r)) = m.next(&mut notes) {
            got.push((r.h.time, r.h.cpu));
        }
        assert_eq!(got, vec![(1, 0), (2, 1), (5, 1), (5, 0), (5, 0), (7, 1), (9, 0)]);
    }

    #[test]
    fn truncated_tail_is_damage() {
        let mut data = rec(1, 10, 0);
        data.extend_from_slice(&rec(2, 11, 0)[..20]);
        let mut r = Reader::new("x".into(), Box::new(std::io::Cursor::new(data)));
        assert!(r.next().is_some());
        assert!(r.next().is_none());
        let d = r.damage.clone().unwrap();
        assert_eq!(d.offset, 48);
        assert!(d.reason.contains("truncated"));
        assert_eq!(r.damage_line().unwrap(), "x: offset 0x30: truncated record: 20 of 48 header bytes");
        assert_eq!(r.truncated_bytes, 20);
    }
}
