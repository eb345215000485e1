//! One CPU's stream of ring-buffer pages and the events on them.
//!
//! Uncompressed data (v6, or v7 without compression) is read straight from
//! the memory-mapped file. Compressed v7 data is a chunk table:
//! `<u32 count>` then per chunk `<u32 compressed size><u32 size><data>`; each
//! chunk inflates to whole pages, one chunk in memory at a time (two when
//! threads inflate the next one ahead: see `prefetch.rs`).

use super::compress::{Codec, Inflater, MAX_BLOCK};
use super::prefetch::{Ahead, Pending, Pool};
use super::ring::{page_info, EntryCounts, Missed, PageWalker};
use crate::bytes::{ByteReader, Endian};
use crate::error::Damage;
use crate::format::PageHeader;

/// Counters for one CPU, reported in `parse_stats`.
#[derive(Debug, Default, Clone)]
pub struct CpuStats {
    pub pages: u64,
    pub events: u64,
    /// Sum of the lost-event counts the kernel stored.
    pub lost_events: u64,
    /// Pages flagged as following lost events.
    pub lost_markers: u64,
    /// Of those, pages where the kernel could not store the count.
    pub lost_unknown: u64,
    pub corrupt_pages: u64,
    pub bad_chunks: u64,
    /// Bytes of this CPU's data missing because the file is short.
    pub truncated_bytes: u64,
    pub entries: EntryCounts,
}

/// A data event as handed to the decoder.
#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub raw_ts: u64,
    /// Events lost just before this one (set on the first event of a page).
    pub missed: Missed,
    start: usize,
    len: usize,
}

enum Source<'a> {
    Mapped {
        data: &'a [u8],
        base: u64,
        next: usize,
    },
    Chunked {
        chunks: ByteReader<'a>,
        region_start: u64,
        left: u32,
        codec: Inflater,
        buf: Vec<u8>,
        buf_base: u64,
        next: usize,
        /// The next chunk, when a [`Pool`] is inflating it.
        ahead: Option<Ahead>,
        /// A buffer for the next chunk to go ahead into (the one read before the current).
        spare: Vec<u8>,
    },
}

pub struct CpuStream<'a> {
    pub cpu: u32,
    /// Largest decompressed chunk this CPU may hold ([`StreamConfig::chunk_budget`]).
    chunk_budget: usize,
    source: Source<'a>,
    /// Threads that inflate this CPU's next chunk while the merge reads this one.
    pool: Option<Pool<'a>>,
    page_size: usize,
    header: PageHeader,
    endian: Endian,
    /// Current page: start of its events area in the page buffer, and its
    /// records decoded in one go (raw ts, offset, length within the area).
    page_start: usize,
    records: Vec<(u64, u32, u32)>,
    next_record: usize,
    missed: Missed,
    page_file_offset: u64,
    page_ts: u64,
    has_page: bool,
    /// Losses flagged on pages that had no event to carry them:
    /// (raw page timestamp, what was lost).
    pub orphan_losses: Vec<(u64, Missed)>,
    pub stats: CpuStats,
    pub damage: Vec<Damage>,
}

pub struct StreamConfig {
    pub page_size: u32,
    pub header: PageHeader,
    pub endian: Endian,
    pub codec: Option<Codec>,
    /// Largest decompressed chunk one CPU stream may hold (each holds its
    /// current chunk while the merge runs): see [`chunk_budget`].
    pub chunk_budget: usize,
}

/// Decompressed chunk bytes all CPUs may hold at once (64 MiB), shared out
/// as one budget per CPU stream ([`chunk_budget`]).
pub const MAX_INFLATED_TOTAL: usize = 64 << 20;

/// Pages in a chunk as trace-cmd writes them: every chunk of the v7 samples
/// inflates to 40960 bytes with 4096-byte pages, or less at a CPU's end.
pub const CHUNK_PAGES: usize = 10;

/// Each CPU's own budget: an equal share of [`MAX_INFLATED_TOTAL`], never
/// less than 1 MiB nor than one chunk trace-cmd writes (10 pages of 64 KiB
/// on a 64K-page kernel: 640 KiB). A chunk that claims more than its CPU's
/// share, or fails to inflate, costs that CPU that chunk and nothing else:
/// with one budget for all CPUs, a chunk claiming 64 MiB on CPU 0 took it
/// all, and CPU 1's intact chunks were dropped as damaged.
pub fn chunk_budget(streams: usize, data_page_size: u32) -> usize {
    (MAX_INFLATED_TOTAL / streams.max(1)).max(1 << 20).max(CHUNK_PAGES * data_page_size as usize)
}

impl<'a> CpuStream<'a> {
    /// `file` is the whole trace file; `offset`/`size` this CPU's region.
    pub fn new(file: &'a [u8], cpu: u32, offset: u64, size: u64, cfg: &StreamConfig) -> Self {
        let mut damage = Vec::new();
        let mut stats = CpuStats::default();
        let len = file.len() as u64;
        // For compressed data the stated size leaves out the 4-byte chunk
        // count in front of the chunk table (trace-cmd writes it that way).
        let stated_end = offset.saturating_add(size).saturating_add(if cfg.codec.is_some() && size > 0 { 4 } else { 0 });
        let start = offset.min(len);
        let end = stated_end.min(len);
        if stated_end > len {
            stats.truncated_bytes = stated_end - end.max(start);
            damage.push(Damage::new(
                end,
                format!(
                    "CPU {cpu} data is truncated: it needs {} bytes from offset {offset:#x} but the file ends at {len:#x}",
                    stated_end - offset
                ),
            ));
        }
        let region = &file[start as usize..end.max(start) as usize];
        let source = match cfg.codec {
            None => Source::Mapped { data: region, base: start, next: 0 },
            Some(codec) => {
                let mut chunks = ByteReader::new(region, start, cfg.endian);
                let left = if size == 0 {
                    0
                } else {
                    match chunks.u32("chunk count") {
                        Ok(n) => n,
                        Err(d) => {
                            damage.push(d);
                            0
                        }
                    }
                };
                Source::Chunked {
                    chunks,
                    region_start: start,
                    left,
                    codec: Inflater::new(codec),
                    buf: Vec::new(),
                    buf_base: start,
                    next: 0,
                    ahead: None,
                    spare: Vec::new(),
                }
            }
        };
        CpuStream {
            cpu,
            chunk_budget: cfg.chunk_budget,
            source,
            pool: None,
            page_size: cfg.page_size as usize,
            header: cfg.header,
            endian: cfg.endian,
            page_start: 0,
            records: Vec::with_capacity(256),
            next_record: 0,
            missed: Missed::None,
            page_file_offset: 0,
            page_ts: 0,
            has_page: false,
            orphan_losses: Vec::new(),
            stats,
            damage,
        }
    }

    /// Inflate the next chunk on `pool`'s threads while this one is read.
    pub fn with_pool(mut self, pool: Option<Pool<'a>>) -> Self {
        self.pool = pool;
        self
    }

    fn buffer(&self) -> &[u8] {
        match &self.source {
            Source::Mapped { data, .. } => data,
            Source::Chunked { buf, .. } => buf,
        }
    }

    /// The payload of an event returned by [`next_event`] (valid until the
    /// next call to `next_event`).
    pub fn payload(&self, e: &Event) -> &[u8] {
        &self.buffer()[e.start..e.start + e.len]
    }

    /// Bytes of this CPU's region consumed so far (for progress).
    pub fn consumed(&self) -> u64 {
        match &self.source {
            Source::Mapped { next, .. } => *next as u64,
            Source::Chunked { chunks, region_start, .. } => chunks.offset() - region_start,
        }
    }

    /// File offset before which this stream reads nothing more: the start of
    /// its current page, or of the compressed chunk it was inflated from.
    pub fn read_from(&self) -> u64 {
        self.page_file_offset
    }

    /// Load the next page into place; false when the CPU's data is done.
    fn load_page(&mut self) -> bool {
        if self.missed != Missed::None {
            self.orphan_losses.push((self.page_ts, self.missed));
            self.missed = Missed::None;
        }
        let ps = self.page_size;
        loop {
            let (page_at, file_off) = match &mut self.source {
                Source::Mapped { data, base, next } => {
                    if *next >= data.len() {
                        return false;
                    }
                    if data.len() - *next < ps {
                        // A partial page at the end: count it, do not guess.
                        let at = *base + *next as u64;
                        self.damage
                            .push(Damage::new(at, format!("CPU {} ends with a partial page of {} bytes", self.cpu, data.len() - *next)));
                        self.stats.corrupt_pages += 1;
                        *next = data.len();
                        return false;
                    }
                    let at = *next;
                    *next += ps;
                    (at, *base + at as u64)
                }
                Source::Chunked { chunks, left, codec, buf, buf_base, next, ahead, spare, .. } => {
                    if *next + ps <= buf.len() {
                        let at = *next;
                        *next += ps;
                        (at, *buf_base)
                    } else {
                        if *left == 0 {
                            return false;
                        }
                        *left -= 1;
                        let chunk_at = chunks.offset();
                        let read = (|| -> Result<(&[u8], u32), Damage> {
                            let z = chunks.u32("chunk compressed size")?;
                            let u = chunks.u32("chunk size")?;
                            Ok((chunks.sized(z as u64, "compressed chunk")?, u))
                        })();
                        let (data, usize_) = match read {
                            Ok(x) => x,
                            Err(d) => {
                                // The chunk table itself is damaged: nothing after it can be found.
                                self.damage.push(d);
                                self.stats.bad_chunks += 1;
                                *left = 0;
                                return false;
                            }
                        };
                        // Within this CPU's own budget, before anything is inflated. A
                        // claim beyond MAX_BLOCK is the inflater's to refuse (it can never be right).
                        let need = usize_ as usize;
                        if need > self.chunk_budget && usize_ <= MAX_BLOCK {
                            self.damage.push(Damage::new(
                                chunk_at,
                                format!(
                                    "CPU {}: chunk of {need} bytes is more than this CPU's share of the decompression budget \
                                     ({} bytes)",
                                    self.cpu, self.chunk_budget
                                ),
                            ));
                            self.stats.bad_chunks += 1;
                            buf.clear();
                            *buf_base = chunk_at;
                            *next = 0;
                            continue;
                        }
                        let inflated = match ahead.take() {
                            // Sent ahead (admitted or refused when the chunk before it was read).
                            Some(Ahead { at, pending }) if at == chunk_at => match pending {
                                Pending::Inflating(result) => match result.recv() {
                                    Ok((bytes, r)) => {
                                        *spare = std::mem::replace(buf, bytes);
                                        r
                                    }
                                    // Its worker is gone: inflate it here.
                                    Err(_) => codec.decompress_admitted(data, usize_, buf),
                                },
                                Pending::Admitted => codec.decompress_admitted(data, usize_, buf),
                                Pending::Refused(why) => Err(why),
                            },
                            _ => codec.inflate(data, usize_, buf),
                        };
                        if let Err(e) = inflated {
                            self.damage.push(Damage::new(chunk_at, format!("CPU {}: {e}", self.cpu)));
                            self.stats.bad_chunks += 1;
                            // What a failed claim reserved is not held on to.
                            *buf = Vec::new();
                        } else if buf.len() % ps != 0 {
                            self.damage.push(Damage::new(
                                chunk_at,
                                format!("CPU {}: chunk of {} bytes is not a whole number of {ps}-byte pages", self.cpu, buf.len()),
                            ));
                            self.stats.corrupt_pages += 1;
                        }
                        if let (Some(pool), true) = (&self.pool, *left > 0) {
                            *ahead = send_ahead(pool, chunks, codec, buf.len(), self.chunk_budget, spare);
                        }
                        *buf_base = chunk_at;
                        *next = 0;
                        continue;
                    }
                }
            };
            let info = page_info(&self.buffer()[page_at..page_at + ps], &self.header, self.endian);
            self.stats.pages += 1;
            match info {
                Ok(info) => {
                    self.page_start = page_at + self.header.data_offset as usize;
                    self.page_ts = info.timestamp;
                    self.missed = info.missed;
                    self.page_file_offset = file_off;
                    self.has_page = true;
                    match info.missed {
                        Missed::None => {}
                        Missed::Count(n) => {
                            self.stats.lost_markers += 1;
                            self.stats.lost_events += n;
                        }
                        Missed::Unknown => {
                            self.stats.lost_markers += 1;
                            self.stats.lost_unknown += 1;
                        }
                    }
                    self.walk_page(info.size);
                    return true;
                }
                Err(e) => {
                    self.stats.corrupt_pages += 1;
                    self.damage.push(Damage::new(file_off, format!("CPU {}: corrupt page: {e}", self.cpu)));
                }
            }
        }
    }

    /// Decode every record of the page just loaded (`size` bytes of events).
    fn walk_page(&mut self, size: usize) {
        self.records.clear();
        self.next_record = 0;
        let (start, endian, ts) = (self.page_start, self.endian, self.page_ts);
        let buf = match &self.source {
            Source::Mapped { data, .. } => &data[start..start + size],
            Source::Chunked { buf, .. } => &buf[start..start + size],
        };
        let mut w = PageWalker::new(buf, ts, endian);
        loop {
            match w.next_record() {
                Ok(Some(r)) => self.records.push((r.ts, r.start as u32, r.len as u32)),
                Ok(None) => break,
                Err(e) => {
                    self.stats.corrupt_pages += 1;
                    self.damage
                        .push(Damage::new(self.page_file_offset, format!("CPU {}: corrupt page, rest of it skipped: {e}", self.cpu)));
                    break;
                }
            }
        }
        self.stats.entries.add(&w.counts);
    }

    /// The next event on this CPU, in file order.
    #[inline]
    pub fn next_event(&mut self) -> Option<Event> {
        loop {
            if self.has_page {
                if let Some(&(ts, start, len)) = self.records.get(self.next_record) {
                    self.next_record += 1;
                    self.stats.events += 1;
                    let missed = std::mem::replace(&mut self.missed, Missed::None);
                    return Some(Event { raw_ts: ts, missed, start: self.page_start + start as usize, len: len as usize });
                }
                self.has_page = false;
            }
            if !self.load_page() {
                if self.missed != Missed::None {
                    self.orphan_losses.push((self.page_ts, self.missed));
                    self.missed = Missed::None;
                }
                return None;
            }
        }
    }
}

/// Admit the chunk `chunks` is at and hand it to `pool`, when its header reads and
/// it and the current chunk (`held` bytes) fit in half the CPU's budget each; the
/// merging thread reads any other chunk itself, as without threads. The limits are
/// counted here, right after the chunk before it, as they would be when the merge
/// reaches it: a chunk they refuse is never inflated.
fn send_ahead<'a>(
    pool: &Pool<'a>,
    chunks: &ByteReader<'a>,
    codec: &mut Inflater,
    held: usize,
    budget: usize,
    spare: &mut Vec<u8>,
) -> Option<Ahead> {
    let mut peek = chunks.clone();
    let at = peek.offset();
    let z = peek.u32("chunk compressed size").ok()?;
    let u = peek.u32("chunk size").ok()?;
    let data = peek.sized(z as u64, "compressed chunk").ok()?;
    if u as usize > budget / 2 || held > budget / 2 || u > MAX_BLOCK {
        return None;
    }
    let pending = match codec.admit(data.len(), u) {
        Ok(()) => pool.submit(data, u, codec.codec(), std::mem::take(spare)),
        Err(why) => Pending::Refused(why),
    };
    Some(Ahead { at, pending })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One CPU's chunk table: each chunk a zstd frame of `pages` empty 4 KiB pages
    /// (a bomb when `pages` is large: a few hundred bytes that claim MiBs).
    fn chunk_table(chunks: &[usize]) -> Vec<u8> {
        let mut v = (chunks.len() as u32).to_le_bytes().to_vec();
        for &pages in chunks {
            let z = zstd::bulk::compress(&vec![0u8; pages * 4096], 19).unwrap();
            v.extend((z.len() as u32).to_le_bytes());
            v.extend(((pages * 4096) as u32).to_le_bytes());
            v.extend(z);
        }
        v
    }

    /// Counters and damage lines of the whole stream, read with `workers` threads
    /// inflating ahead (0: none), and how many chunks went to them.
    fn read_all(file: &[u8], budget: usize, workers: usize) -> (String, Vec<String>, u64) {
        let cfg = StreamConfig {
            page_size: 4096,
            header: PageHeader { timestamp_offset: 0, commit_offset: 8, commit_size: 8, data_offset: 16 },
            endian: Endian::Little,
            codec: Some(Codec::Zstd),
            chunk_budget: budget,
        };
        std::thread::scope(|scope| {
            let pool = if workers > 0 { Pool::start(scope, workers) } else { None };
            assert_eq!(pool.is_some(), workers > 0);
            let sent = pool.clone();
            let mut s = CpuStream::new(file, 0, 0, file.len() as u64 - 4, &cfg).with_pool(pool);
            while s.next_event().is_some() {}
            let damage = s.damage.iter().map(|d| format!("{:#x} {}", d.offset, d.reason)).collect();
            (format!("{:?}", s.stats), damage, sent.map_or(0, |p| p.sent()))
        })
    }

    #[test]
    fn chunks_inflated_ahead_read_as_inflated_in_place() {
        // 10-page chunks, then 300 bombs of 1 MiB each: the ratio limit refuses 222
        // of them (those past 64 MiB, but one now and then as the bytes read add up),
        // ahead or not, and the pages read are the same.
        let mut sizes = vec![10; 5];
        sizes.extend([256; 300]);
        sizes.extend([10; 5]);
        let file = chunk_table(&sizes);
        let (stats, damage, _) = read_all(&file, 4 << 20, 0);
        let refused = damage.iter().filter(|d| d.contains("more than 1024 times")).count();
        assert!(refused > 200, "{damage:?}");
        for workers in [1, 2] {
            let (s, d, sent) = read_all(&file, 4 << 20, workers);
            assert_eq!((&s, &d), (&stats, &damage), "{workers} workers");
            // Every chunk but the first (read before anything is ahead) and the refused ones.
            assert_eq!(sent as usize, sizes.len() - 1 - refused, "{workers} workers");
        }
        // Within 1 MiB, the 1 MiB chunks are more than half the budget: read in place.
        let (stats, damage, _) = read_all(&file, 1 << 20, 0);
        let (s, d, sent) = read_all(&file, 1 << 20, 1);
        assert_eq!((s, d), (stats, damage));
        assert!(sent <= 10, "{sent}");
    }

    #[test]
    fn each_cpu_has_its_own_budget() {
        // Two CPUs: half of the 64 MiB each, so one CPU's 64 MiB claim is its own loss.
        assert_eq!(chunk_budget(2, 4096), 32 << 20);
        assert_eq!(chunk_budget(1, 4096), 64 << 20);
        assert_eq!(chunk_budget(0, 4096), 64 << 20);
        // Many CPUs: never less than 1 MiB, nor than a chunk of 10 pages.
        assert_eq!(chunk_budget(4096, 4096), 1 << 20);
        assert_eq!(chunk_budget(4096, 1 << 20), 10 << 20);
    }
}
