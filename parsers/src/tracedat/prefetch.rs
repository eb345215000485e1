//! Inflating each CPU's next chunk on other threads while the merge reads the
//! current one.
//!
//! A v7 trace.dat compresses every CPU's pages in independent frames of 10 pages
//! (`<u32 compressed size><u32 size><frame>`, trace-cmd.dat.v7(5)), so a CPU's next
//! chunk can be inflated before the merge needs it. The merging thread still walks
//! the chunk table itself and makes every check in the same order as without
//! threads (the chunk's claimed size against its CPU's budget, then
//! [`Inflater::admit`]'s limits, which a chunk passes before it is sent, right
//! after the chunk before it: a file of many small bombs is refused chunk by chunk
//! without inflating them); only the decompression moves. Each CPU has at most one
//! chunk in flight, and only a chunk of at most half its CPU's budget goes ahead,
//! so a CPU holds no more inflated bytes than its budget.
//!
//! [`Inflater::admit`]: super::compress::Inflater::admit

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_channel::{bounded, Receiver, Sender};

use super::compress::{Codec, Decompressor};

/// One chunk to inflate: the frame (borrowed from the mapped file), its stated
/// size, and a buffer to inflate into (the CPU's previous one, reused).
pub struct Job<'a> {
    input: &'a [u8],
    expected: u32,
    codec: Codec,
    out: Vec<u8>,
    reply: Sender<Inflated>,
}

/// The inflated bytes (or, on failure, the emptied buffer) and what went wrong.
pub type Inflated = (Vec<u8>, Result<(), String>);

/// The next chunk of one CPU, admitted or refused already: the file offset of its
/// header, to be matched when the merge reaches it.
pub struct Ahead {
    pub at: u64,
    pub pending: Pending,
}

pub enum Pending {
    /// On a worker.
    Inflating(Receiver<Inflated>),
    /// Admitted, but the workers are gone: the merging thread inflates it.
    Admitted,
    /// Refused by [`Inflater::admit`](super::compress::Inflater::admit), with why.
    Refused(String),
}

/// Where a CPU stream sends its next chunk.
#[derive(Clone)]
pub struct Pool<'a> {
    jobs: Sender<Job<'a>>,
    /// Chunks sent to the workers, by every stream.
    sent: Arc<AtomicU64>,
}

impl<'a> Pool<'a> {
    /// A pool whose jobs `workers` threads of `scope` take; None when no
    /// thread could be started (a process limit): the streams then inflate
    /// on the merging thread, as with one thread.
    pub fn start<'scope>(scope: &'scope std::thread::Scope<'scope, '_>, workers: usize) -> Option<Pool<'a>>
    where
        'a: 'scope,
    {
        let (jobs, taken) = bounded::<Job<'a>>(workers.max(1) * 4);
        let mut started = 0;
        for n in 0..workers {
            let taken = taken.clone();
            let spawned = std::thread::Builder::new().name(format!("advisor-inflate-{n}")).spawn_scoped(scope, move || work(taken));
            started += spawned.is_ok() as usize;
        }
        (started > 0).then_some(Pool { jobs, sent: Arc::default() })
    }

    /// Send an admitted chunk to be inflated.
    pub fn submit(&self, input: &'a [u8], expected: u32, codec: Codec, out: Vec<u8>) -> Pending {
        let (reply, result) = bounded(1);
        match self.jobs.send(Job { input, expected, codec, out, reply }) {
            Ok(()) => {
                self.sent.fetch_add(1, Ordering::Relaxed);
                Pending::Inflating(result)
            }
            Err(_) => Pending::Admitted,
        }
    }
}

impl Pool<'_> {
    /// How many chunks went to the workers.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}

fn work(jobs: Receiver<Job<'_>>) {
    let mut blocks = Decompressor::default();
    for mut job in jobs {
        let r = blocks.decompress(job.codec, job.input, job.expected, &mut job.out);
        // The stream may have stopped reading (damage before this chunk): nobody waits.
        let _ = job.reply.send((job.out, r));
    }
}
