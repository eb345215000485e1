//! Decoding on several threads.
//!
//! The merge of the per-CPU streams stays on one thread: it is what gives each event
//! its `id` (its place in capture order), and it is the cheap part. The decoding of
//! payloads into Arrow columns, the expensive part, is shared out: the merge copies
//! windows of consecutive events (their common fields and payload bytes) and hands
//! each window to one of the worker threads, which decodes it with its own
//! [`Decoder`]. Finished windows are taken back in window order, so every table's
//! rows stay in capture order, and each table's pieces are joined again into batches
//! of the usual size before they leave (a batch is a Parquet row group downstream:
//! one per window and table would make thousands of tiny ones).
//!
//! What stays serial: the merge, the copy into windows and the joining of batches.
//! Inflating each CPU's compressed chunks moved to threads of its own
//! (`prefetch.rs`). That bounds the gain (see benchmarks/).

use std::collections::{BTreeMap, HashMap};
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};

use super::decode::{Common, DecodeStats, Decoder, EventSink};

/// Events per window (at most a batch's rows): large enough that a window's fixed
/// costs (a channel hop, one batch per table it touches) vanish, small enough that
/// a few windows in flight stay within a few MiB each.
const WINDOW_EVENTS: usize = 32768;
/// A window also closes at this many payload bytes (events can be large).
const WINDOW_BYTES: usize = 4 << 20;

struct Window {
    seq: u64,
    commons: Vec<Common>,
    /// End offset of each event's payload in `bytes`.
    ends: Vec<u32>,
    bytes: Vec<u8>,
}

impl Window {
    fn new(seq: u64) -> Self {
        Window { seq, commons: Vec::with_capacity(WINDOW_EVENTS), ends: Vec::with_capacity(WINDOW_EVENTS), bytes: Vec::new() }
    }
}

type Finished = (u64, Vec<(String, RecordBatch)>);

/// An [`EventSink`] that decodes on `threads` worker threads (see the module doc).
pub struct ParallelDecoder {
    work: Option<Sender<Window>>,
    done: Receiver<Finished>,
    workers: Vec<JoinHandle<DecodeStats>>,
    current: Window,
    window_events: usize,
    /// Windows sent, and the next one to hand on.
    sent: u64,
    next: u64,
    waiting: BTreeMap<u64, Vec<(String, RecordBatch)>>,
    rebatch: Rebatch,
    stats: DecodeStats,
}

impl ParallelDecoder {
    /// `decoders`: one per worker, each built like the serial one.
    pub fn new(decoders: Vec<Decoder>, batch_rows: usize, max_pending_bytes: usize) -> std::io::Result<Self> {
        let threads = decoders.len().max(1);
        // One window queued per worker: the merge runs ahead by that much, no more.
        let (work_tx, work_rx) = bounded::<Window>(threads);
        let (done_tx, done_rx) = unbounded::<Finished>();
        let mut workers = Vec::with_capacity(threads);
        for (i, dec) in decoders.into_iter().enumerate() {
            let (rx, tx) = (work_rx.clone(), done_tx.clone());
            workers.push(std::thread::Builder::new().name(format!("advisor-decode-{i}")).spawn(move || decode_windows(dec, rx, tx))?);
        }
        Ok(ParallelDecoder {
            work: Some(work_tx),
            done: done_rx,
            workers,
            current: Window::new(0),
            window_events: WINDOW_EVENTS.min(batch_rows.max(1)),
            sent: 0,
            next: 0,
            waiting: BTreeMap::new(),
            rebatch: Rebatch::new(batch_rows, max_pending_bytes),
            stats: DecodeStats::default(),
        })
    }

    fn dispatch(&mut self, out: &mut dyn FnMut(&str, RecordBatch)) {
        if self.current.commons.is_empty() {
            return;
        }
        let w = std::mem::replace(&mut self.current, Window::new(self.sent + 1));
        self.sent += 1;
        if let Some(tx) = &self.work {
            // Fails only when every worker is gone (a panic): its window is lost,
            // and finish() reports the panic.
            let _ = tx.send(w);
        }
        self.hand_on(false, out);
    }

    /// Take finished windows in order; with `all`, wait for every window sent.
    fn hand_on(&mut self, all: bool, out: &mut dyn FnMut(&str, RecordBatch)) {
        loop {
            while let Some(batches) = self.waiting.remove(&self.next) {
                self.next += 1;
                for (name, b) in batches {
                    self.rebatch.push(name, b, out);
                }
            }
            if self.next == self.sent {
                return;
            }
            let got = if all { self.done.recv().ok() } else { self.done.try_recv().ok() };
            match got {
                Some((seq, batches)) => {
                    self.waiting.insert(seq, batches);
                }
                None => return,
            }
        }
    }
}

fn decode_windows(mut dec: Decoder, rx: Receiver<Window>, tx: Sender<Finished>) -> DecodeStats {
    for w in rx.iter() {
        let mut batches = Vec::new();
        let mut keep = |name: &str, b: RecordBatch| batches.push((name.to_string(), b));
        let mut start = 0usize;
        for (c, &end) in w.commons.iter().zip(&w.ends) {
            dec.push(*c, &w.bytes[start..end as usize], &mut keep);
            start = end as usize;
        }
        dec.finish(&mut keep);
        if tx.send((w.seq, batches)).is_err() {
            break;
        }
    }
    dec.stats
}

impl EventSink for ParallelDecoder {
    #[inline]
    fn push(&mut self, c: Common, payload: &[u8], out: &mut dyn FnMut(&str, RecordBatch)) {
        let w = &mut self.current;
        w.commons.push(c);
        w.bytes.extend_from_slice(payload);
        w.ends.push(w.bytes.len() as u32);
        if w.commons.len() >= self.window_events || w.bytes.len() >= WINDOW_BYTES {
            self.dispatch(out);
        }
    }

    fn finish(&mut self, out: &mut dyn FnMut(&str, RecordBatch)) {
        self.dispatch(out);
        self.work = None; // the workers see the end of their queue
        self.hand_on(true, out);
        for h in self.workers.drain(..) {
            match h.join() {
                Ok(s) => self.stats.add(&s),
                Err(_) => panic!("a decoding thread panicked"),
            }
        }
        self.rebatch.finish(out);
    }

    fn decode_stats(&self) -> &DecodeStats {
        &self.stats
    }
}

/// Joins each table's per-window pieces into batches of `batch_rows` rows (or fewer,
/// when the pieces of all tables together pass `max_pending_bytes`: the biggest
/// table goes first, as in the serial decoder).
struct Rebatch {
    batch_rows: usize,
    max_pending_bytes: usize,
    tables: HashMap<String, Pieces>,
    pending: usize,
}

#[derive(Default)]
struct Pieces {
    batches: Vec<RecordBatch>,
    rows: usize,
    bytes: usize,
}

impl Rebatch {
    fn new(batch_rows: usize, max_pending_bytes: usize) -> Self {
        Rebatch { batch_rows: batch_rows.max(1), max_pending_bytes, tables: HashMap::new(), pending: 0 }
    }

    fn push(&mut self, name: String, b: RecordBatch, out: &mut dyn FnMut(&str, RecordBatch)) {
        let bytes = b.get_array_memory_size();
        let p = self.tables.entry(name.clone()).or_default();
        p.rows += b.num_rows();
        p.bytes += bytes;
        p.batches.push(b);
        self.pending += bytes;
        if p.rows >= self.batch_rows {
            self.flush(&name, out);
        } else if self.pending > self.max_pending_bytes {
            let biggest = self.tables.iter().max_by_key(|(_, p)| p.bytes).map(|(n, _)| n.clone());
            if let Some(n) = biggest {
                self.flush(&n, out);
            }
        }
    }

    fn flush(&mut self, name: &str, out: &mut dyn FnMut(&str, RecordBatch)) {
        let Some(p) = self.tables.get_mut(name) else { return };
        if p.batches.is_empty() {
            return;
        }
        self.pending -= p.bytes;
        let pieces = std::mem::take(&mut p.batches);
        p.rows = 0;
        p.bytes = 0;
        let b = if pieces.len() == 1 {
            pieces.into_iter().next().expect("one piece")
        } else {
            arrow_select::concat::concat_batches(&pieces[0].schema(), &pieces).expect("pieces of one table share its schema")
        };
        out(name, b);
    }

    fn finish(&mut self, out: &mut dyn FnMut(&str, RecordBatch)) {
        let mut names: Vec<String> = self.tables.keys().cloned().collect();
        names.sort();
        for n in names {
            self.flush(&n, out);
        }
    }
}
