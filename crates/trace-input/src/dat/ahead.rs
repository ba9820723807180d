//! Decompression ahead of decoding: one worker thread decompresses the
//! next chunks of every CPU of a compressed v7 file into a few buffers
//! per CPU (reused: a buffer the decoder is done with goes back to its
//! CPU's free list), while the calling thread decodes and merges.
//!
//! The decoder takes each CPU's chunks in file order, as the one-thread
//! path reads them, so every event and every error comes out where it
//! would have: a chunk that does not decompress is queued as its error
//! and that CPU reads no further. Which CPU the worker serves next: the
//! one the decoder waits for, else the one with the fewest chunks ready.

use super::{read_chunk, ChunkBufs, Codec, DatError, DatInfo, Data};
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};

/// Chunks decompressed ahead per CPU (besides the one being decoded and
/// the one being decompressed).
const DEPTH: usize = 2;

/// A decompressed chunk and the file offset after it, or why not.
type Ready = Result<(Vec<u8>, u64), DatError>;

/// One CPU's chunks.
struct Queue {
    /// File offset of the next chunk not yet taken by the worker.
    next_off: u64,
    chunks_left: u32,
    ready: VecDeque<Ready>,
    free: Vec<Vec<u8>>,
    /// The worker is decompressing a chunk of this CPU.
    busy: bool,
    /// A chunk failed: nothing more is read for this CPU.
    failed: bool,
}

impl Queue {
    fn more_to_come(&self) -> bool {
        self.busy || (self.chunks_left > 0 && !self.failed)
    }
}

struct State {
    queues: Vec<Queue>,
    /// The CPU (stream index) the decoder is blocked on.
    waiting: Option<usize>,
    /// The decoder is gone: the worker ends.
    stop: bool,
}

/// The queues shared by the worker and the decoder.
pub(crate) struct Ahead {
    state: Mutex<State>,
    changed: Condvar,
}

impl Ahead {
    /// Queues for streams whose chunks start at the given offsets, with
    /// the given chunk counts (0 for a CPU without data).
    pub fn new(starts: impl IntoIterator<Item = (u64, u32)>) -> Ahead {
        let queues = starts
            .into_iter()
            .map(|(next_off, chunks_left)| Queue {
                next_off,
                chunks_left,
                ready: VecDeque::with_capacity(DEPTH),
                free: Vec::new(),
                busy: false,
                failed: false,
            })
            .collect();
        Ahead {
            state: Mutex::new(State {
                queues,
                waiting: None,
                stop: false,
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere leaves the queues consistent (they change
        // under the lock in whole steps): carry on with them.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(&self, g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed.wait(g).unwrap_or_else(|p| p.into_inner())
    }

    /// The worker: decompress until every chunk is done or [`Ahead::stop`].
    pub fn work(&self, info: &DatInfo, data: &Data, codec: Codec) {
        let mut zctx = None;
        let mut src = Vec::new();
        let mut st = self.lock();
        loop {
            if st.stop {
                return;
            }
            let Some(i) = pick(&st) else {
                if st.queues.iter().all(|q| !q.more_to_come()) {
                    return;
                }
                st = self.wait(st);
                continue;
            };
            let q = &mut st.queues[i];
            q.chunks_left -= 1;
            q.busy = true;
            let off = q.next_off;
            let out = q.free.pop().unwrap_or_default();
            drop(st);
            let mut bufs = ChunkBufs { src, out };
            let res = read_chunk(data, off, codec, info.endian, &mut zctx, &mut bufs);
            src = bufs.src;
            st = self.lock();
            let q = &mut st.queues[i];
            q.busy = false;
            match res {
                Ok(next) => {
                    q.next_off = next;
                    q.ready.push_back(Ok((bufs.out, next)));
                }
                Err(e) => {
                    q.failed = true;
                    q.ready.push_back(Err(e));
                }
            }
            self.changed.notify_all();
        }
    }

    /// Stream `i`'s next chunk into `buf` (its old content is kept for
    /// reuse): the file offset after the chunk, `None` after the last.
    pub fn next(&self, i: usize, buf: &mut Vec<u8>) -> Result<Option<u64>, DatError> {
        let mut st = self.lock();
        loop {
            let q = &mut st.queues[i];
            if let Some(item) = q.ready.pop_front() {
                let (chunk, next) = item?;
                let old = std::mem::replace(buf, chunk);
                if old.capacity() > 0 {
                    q.free.push(old);
                }
                st.waiting = None;
                self.changed.notify_all();
                return Ok(Some(next));
            }
            if !q.more_to_come() {
                return Ok(None);
            }
            st.waiting = Some(i);
            self.changed.notify_all();
            st = self.wait(st);
        }
    }

    /// End the worker (the decoder is done, or failed).
    pub fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }
}

/// The CPU to decompress for next: the one the decoder waits for, else
/// the one with the fewest chunks ready (the lowest index on ties).
fn pick(st: &State) -> Option<usize> {
    let open = |q: &Queue| q.chunks_left > 0 && !q.failed && !q.busy && q.ready.len() < DEPTH;
    if let Some(w) = st.waiting.filter(|&w| open(&st.queues[w])) {
        return Some(w);
    }
    st.queues
        .iter()
        .enumerate()
        .filter(|(_, q)| open(q))
        .min_by_key(|(i, q)| (q.ready.len(), *i))
        .map(|(i, _)| i)
}

/// Stops the worker when the decoder leaves, by any way (an error, a
/// panic in the caller's closure): the scope it runs in can then join it.
pub(crate) struct StopOnDrop<'a>(pub &'a Ahead);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}
