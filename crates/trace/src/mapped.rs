//! Parsing a trace that is already in memory (a mapped file): no read
//! copies, blocks borrowed where they lie, and with more than one thread
//! the parsing spread over them while the calling thread feeds every line
//! in file order.
//!
//! The file is cut into blocks of about [`MEM_BLOCK`] bytes at newlines,
//! one after another as they are taken (cutting them all first would
//! touch a page of every block, and the kernel maps its neighbours with
//! it: tens of MB of resident pages for nothing). Each thread takes the
//! next block; the others parse theirs into a buffer and send it; the
//! calling thread feeds the block it is at, parsing it in place when
//! nobody has taken it, and while the block it waits for is still being
//! parsed elsewhere it takes and parses the next one into a buffer
//! itself. So the split adapts to what the caller's `f` costs, with no
//! fixed share, and no thread waits while a block is left. The parsing
//! threads run at most [`AHEAD`] blocks in front of the feeding, the
//! feeder itself twice that (bounded memory).

use crate::line::parse_line_into;
use crate::line::Line;
use crate::reader::{feed_lines, fix_utf8, lines_of, Summary};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

/// Bytes per block: small enough that a block's parsed lines (about 1.4
/// times its size) stay in the caches between the thread that parses
/// them and the one that feeds them.
const MEM_BLOCK: usize = 256 << 10;

/// Blocks taken ahead of the one being fed.
const AHEAD: usize = 6;

/// Every line of a trace in memory, as [`crate::for_each_line`] gives it
/// for the same bytes (the same lines, numbers and summary): each block
/// that is valid UTF-8 (any ASCII trace) is parsed in place; one that is
/// not is copied once and its bad bytes become `?`, as the streaming
/// reader does. `threads > 1` spreads the parsing (see the module);
/// `f` always runs on the calling thread, in file order.
pub fn for_each_line_in(
    bytes: &[u8],
    threads: usize,
    f: impl FnMut(u64, &Line<'_>),
    progress: impl FnMut(u64),
) -> Summary {
    for_each_line_in_blocks(bytes, threads, MEM_BLOCK, f, progress)
}

#[doc(hidden)]
/// [`for_each_line_in`] with the block size as a parameter (tests cut
/// lines at every place).
pub fn for_each_line_in_blocks(
    bytes: &[u8],
    threads: usize,
    block: usize,
    mut f: impl FnMut(u64, &Line<'_>),
    mut progress: impl FnMut(u64),
) -> Summary {
    let cutter = Cutter::new(bytes, block.max(1));
    let mut summary = Summary::default();
    let mut line_no = 0u64;
    let mut next_progress = 4usize << 20;
    let mut scratch = Vec::new();
    let mut report = |end: usize| {
        if end >= next_progress {
            progress(end as u64);
            next_progress = end + (4 << 20);
        }
    };
    let mut feed = |piece: Piece<'_, '_>| match piece {
        Piece::Raw(b) => {
            let text = block_text(cutter.text(b), &mut scratch);
            feed_lines(text, &mut line_no, &mut summary, &mut f);
            report(b.end);
        }
        Piece::Parsed(b, parsed) => {
            let offset = line_no;
            for line in &parsed.lines {
                line_no += 1;
                f(line_no, line);
            }
            summary.absorb(std::mem::take(&mut parsed.summary), offset);
            report(b.end);
        }
    };
    if threads <= 1 {
        while let Taken::Block(b) = cutter.take(usize::MAX) {
            feed(Piece::Raw(b));
        }
    } else {
        feed_parallel(&cutter, threads, feed);
    }
    summary.bytes = bytes.len() as u64;
    summary
}

/// A block as text: in place when it is UTF-8, else a copy in `scratch`
/// with the bad bytes made `?`.
fn block_text<'a>(raw: &'a [u8], scratch: &'a mut Vec<u8>) -> &'a str {
    match simdutf8::basic::from_utf8(raw) {
        Ok(t) => t,
        Err(_) => {
            scratch.clear();
            scratch.extend_from_slice(raw);
            fix_utf8(scratch)
        }
    }
}

/// One block: its number and where it lies.
#[derive(Debug, Clone, Copy)]
struct Block {
    index: usize,
    start: usize,
    end: usize,
}

/// What [`Cutter::take`] gives.
enum Taken {
    /// The next block, now the taker's.
    Block(Block),
    /// The next block is not below the limit: wait.
    Later,
    /// No block is left; this many were cut.
    Done(usize),
}

/// Cuts the blocks, in order, as they are taken.
struct Cutter<'a> {
    bytes: &'a [u8],
    size: usize,
    /// (index of the next block, where it starts).
    next: Mutex<(usize, usize)>,
}

impl<'a> Cutter<'a> {
    fn new(bytes: &'a [u8], size: usize) -> Self {
        Cutter {
            bytes,
            size,
            next: Mutex::new((0, 0)),
        }
    }

    fn text(&self, b: Block) -> &'a [u8] {
        &self.bytes[b.start..b.end]
    }

    /// Take the next block if its index is below `limit`: it ends after
    /// the last newline within `size` bytes (a longer line: at its end).
    fn take(&self, limit: usize) -> Taken {
        // A poisoned lock means a taker panicked while cutting, which
        // memchr and slicing within bounds cannot do; go on with the state.
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        let (index, start) = *next;
        let bytes = self.bytes;
        if start >= bytes.len() {
            return Taken::Done(index);
        }
        if index >= limit {
            return Taken::Later;
        }
        let cap = (start + self.size).min(bytes.len());
        let end = if cap == bytes.len() {
            cap
        } else {
            match memchr::memrchr(b'\n', &bytes[start..cap]) {
                Some(i) => start + i + 1,
                None => memchr::memchr(b'\n', &bytes[cap..]).map_or(bytes.len(), |i| cap + i + 1),
            }
        };
        *next = (index + 1, end);
        Taken::Block(Block { index, start, end })
    }
}

/// What the feeding thread is given, block by block in order.
enum Piece<'p, 'a> {
    /// Not parsed yet: parse and feed it here.
    Raw(Block),
    /// Parsed by a thread (this one or another).
    Parsed(Block, &'p mut Parsed<'a>),
}

/// A block's lines, parsed, and what noting them gave (line numbers
/// counted from the block's first line): the feeding thread then only
/// calls `f` and adds the summary.
#[derive(Default)]
struct Parsed<'a> {
    lines: Vec<Line<'a>>,
    summary: Summary,
}

/// A parsed block (`None`: not UTF-8, left to the feeding thread).
type Done<'a> = (Block, Option<Parsed<'a>>);

/// Parse block `b` into a buffer from `pool`.
fn parse_block<'a>(cutter: &Cutter<'a>, b: Block, pool: &Mutex<Vec<Parsed<'a>>>) -> Done<'a> {
    let parsed = simdutf8::basic::from_utf8(cutter.text(b)).ok().map(|text| {
        let mut parsed = pool
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_default();
        let mut no = 0;
        lines_of(text, |line| {
            no += 1;
            // Parsed into its slot: a push would build the line on the
            // stack and copy its 168 bytes into the vector.
            parsed.lines.push(Line::Blank);
            if let Some(slot) = parsed.lines.last_mut() {
                parse_line_into(line, slot);
                parsed.summary.note(no, line, slot);
            }
        });
        parsed
    });
    (b, parsed)
}

/// Call `feed` for every block in order, with `threads - 1` other
/// threads parsing (see the module).
fn feed_parallel<'a>(cutter: &Cutter<'a>, threads: usize, mut feed: impl FnMut(Piece<'_, 'a>)) {
    let fed = AtomicUsize::new(0);
    let pool: Mutex<Vec<Parsed<'a>>> = Mutex::new(Vec::new());
    let (tx, rx) = mpsc::channel::<Done<'a>>();
    std::thread::scope(|s| {
        let workers: Vec<_> = (1..threads)
            .map(|_| {
                let (tx, fed, pool) = (tx.clone(), &fed, &pool);
                s.spawn(move || loop {
                    match cutter.take(fed.load(Ordering::Acquire) + AHEAD) {
                        Taken::Block(b) => {
                            if tx.send(parse_block(cutter, b, pool)).is_err() {
                                return;
                            }
                        }
                        Taken::Later => {
                            std::thread::park_timeout(std::time::Duration::from_millis(1))
                        }
                        Taken::Done(_) => return,
                    }
                })
            })
            .collect();
        drop(tx);
        let mut early: Vec<Done<'a>> = Vec::new();
        let mut next = 0;
        let mut total = None;
        while total != Some(next) {
            let ready = early.iter().position(|(b, _)| b.index == next);
            if let Some(k) = ready {
                match early.swap_remove(k) {
                    (b, Some(mut parsed)) => {
                        feed(Piece::Parsed(b, &mut parsed));
                        parsed.lines.clear();
                        if let Ok(mut p) = pool.lock() {
                            p.push(parsed);
                        }
                    }
                    (b, None) => feed(Piece::Raw(b)),
                }
            } else {
                if let Ok(done) = rx.try_recv() {
                    early.push(done);
                    continue;
                }
                // The feeder may go further ahead than the parsers: when
                // they have taken the whole window, it parses beyond it
                // instead of waiting.
                match cutter.take(next + 2 * AHEAD) {
                    Taken::Block(b) if b.index == next => feed(Piece::Raw(b)),
                    Taken::Block(b) => {
                        early.push(parse_block(cutter, b, &pool));
                        continue;
                    }
                    taken => {
                        if let Taken::Done(n) = taken {
                            total = Some(n);
                            if n == next {
                                break;
                            }
                        }
                        // The block to feed is another thread's: wait.
                        match rx.recv() {
                            Ok(done) => early.push(done),
                            // Every other thread has stopped, and each
                            // sends every block it takes: unreachable.
                            Err(_) => break,
                        }
                        continue;
                    }
                }
            }
            next += 1;
            fed.store(next, Ordering::Release);
            for w in &workers {
                w.thread().unpark();
            }
        }
        // Joined, not left to the scope: a scope only waits for the
        // closures, and the threads' own exit (their thread-local
        // destructors) would still be running when this returns.
        for w in workers {
            w.thread().unpark();
            // A parser cannot panic (the parser never does); if one did,
            // its blocks were never sent and the loop above stopped.
            let _ = w.join();
        }
    });
}
