//! Streaming over a trace: fixed-size reads into one reused buffer, lines
//! cut with `memchr`, each handed out as a `&str` borrowed from the buffer
//! (never the whole file in memory, no allocation per line).
//!
//! Bytes that are not UTF-8 (a comm can hold any bytes) are replaced by
//! `?` in place, so a line is always valid `&str` of the same length.

use crate::line::{parse_line_into, Header, Line};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Initial buffer size; grows only for a line longer than this.
const CHUNK: usize = 1 << 20;

/// How many malformed lines are kept with their line numbers.
pub const MALFORMED_KEPT: usize = 20;

/// A line reader over any `Read` (a file, `trace_pipe`, stdin).
pub struct TraceReader<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    line_no: u64,
    bytes: u64,
}

impl<R: Read> TraceReader<R> {
    /// Wrap a reader (no extra buffering needed; pass the file itself).
    pub fn new(inner: R) -> Self {
        TraceReader {
            inner,
            buf: vec![0; CHUNK],
            start: 0,
            end: 0,
            eof: false,
            line_no: 0,
            bytes: 0,
        }
    }

    /// Bytes consumed so far (for progress and MB/s).
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// The next line without its newline, with its 1-based number.
    pub fn next_line(&mut self) -> io::Result<Option<(u64, &str)>> {
        loop {
            if let Some(nl) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                let (s, e) = (self.start, self.start + nl);
                self.start = e + 1;
                self.line_no += 1;
                self.bytes += (nl + 1) as u64;
                return Ok(Some((self.line_no, fix_utf8(&mut self.buf[s..e]))));
            }
            if self.eof {
                if self.start < self.end {
                    let (s, e) = (self.start, self.end);
                    self.start = self.end;
                    self.line_no += 1;
                    self.bytes += (e - s) as u64;
                    return Ok(Some((self.line_no, fix_utf8(&mut self.buf[s..e]))));
                }
                return Ok(None);
            }
            // Move the partial line to the front; grow if it fills the buffer.
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                let n = self.buf.len() * 2;
                self.buf.resize(n, 0);
            }
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// `bytes` as `&str`, any byte that is not UTF-8 made `?` in place. The
/// check is SIMD (`simdutf8`: several times `std`'s on ASCII text, which
/// every block of a trace is checked as); only a block that fails it is
/// walked again to find the bad bytes.
pub(crate) fn fix_utf8(bytes: &mut [u8]) -> &str {
    if simdutf8::basic::from_utf8(bytes).is_err() {
        replace_invalid(bytes);
    }
    // Valid now: the replacement leaves only UTF-8. (Checked again
    // because the borrow checker cannot return the first check's `&str`
    // and mutate on the other branch; the mapped-file path checks once.)
    simdutf8::basic::from_utf8(bytes).unwrap_or("")
}

/// Every byte of `bytes` that is not part of a valid UTF-8 sequence → `?`.
fn replace_invalid(bytes: &mut [u8]) {
    loop {
        match std::str::from_utf8(bytes) {
            Ok(_) => break,
            Err(e) => {
                let bad = e.error_len().unwrap_or(bytes.len() - e.valid_up_to());
                for b in &mut bytes[e.valid_up_to()..e.valid_up_to() + bad] {
                    *b = b'?';
                }
            }
        }
    }
}

/// A malformed line: where and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Malformed {
    /// 1-based line number.
    pub line_no: u64,
    /// Why it did not parse.
    pub reason: &'static str,
    /// The line (cut to 200 bytes).
    pub text: String,
}

/// What a pass over a trace saw, besides the lines themselves.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    /// Lines read.
    pub lines: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Event lines (any tracer except function_graph).
    pub events: u64,
    /// function_graph lines.
    pub funcgraph_lines: u64,
    /// Malformed lines in total.
    pub malformed: u64,
    /// The first [`MALFORMED_KEPT`] malformed lines.
    pub malformed_samples: Vec<Malformed>,
    /// Events the kernel reports as lost (`[LOST n EVENTS]`), summed.
    pub lost_events: u64,
    /// CPUs whose buffer started late (`##### CPU n buffer started ####`)
    /// or that lost events (or had events overwritten).
    pub cpus_with_loss: Vec<u32>,
    /// Events the ring buffer overwrote before they were read (its
    /// per-CPU `overrun`, saved with the trace by `lever trace record`:
    /// a `# lever: cpu N overrun M` text line, a trace.dat's CPUSTAT
    /// option), summed: the trace starts later than the recording did.
    pub overwritten_events: u64,
    /// `# tracer: name`
    pub tracer: Option<String>,
    /// `# entries-in-buffer/entries-written: a/b`: (a, b).
    pub entries: Option<(u64, u64)>,
    /// Timestamp of the first and last clock-based event, in ns.
    pub first_ts_ns: Option<u64>,
    /// See `first_ts_ns`.
    pub last_ts_ns: Option<u64>,
}

/// Nothing in a file was a trace event: the file is empty, holds only
/// the header (`trace` read right after it was cleared, or a capture
/// whose events were all filtered out), or is not ftrace text at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoEventsError {
    /// Zero bytes.
    #[error("{} is empty (0 bytes): not a trace", path.display())]
    EmptyFile {
        /// The file.
        path: PathBuf,
    },
    /// Only `#` header and blank lines.
    #[error("the trace is empty (header only): {} has {lines} header lines and no events", path.display())]
    HeaderOnly {
        /// The file.
        path: PathBuf,
        /// Lines read.
        lines: u64,
    },
    /// Lines, none of them an event.
    #[error("no trace events in {}: {lines} lines, none parsed{}", path.display(), first.as_ref().map_or(String::new(), |m| format!(" (line {}: {})", m.line_no, m.reason)))]
    NothingParsed {
        /// The file.
        path: PathBuf,
        /// Lines read.
        lines: u64,
        /// The first malformed line.
        first: Option<Malformed>,
    },
}

impl Summary {
    /// Count `events` overwritten in CPU `cpu`'s ring buffer.
    pub fn overwritten(&mut self, cpu: u32, events: u64) {
        self.overwritten_events += events;
        if events > 0 && !self.cpus_with_loss.contains(&cpu) {
            self.cpus_with_loss.push(cpu);
        }
    }

    /// `Err` when the pass saw no event and no function_graph line in
    /// `path` (named in the error): such a file is not a trace, and an
    /// analysis of it would print empty tables.
    pub fn require_events(&self, path: &Path) -> Result<(), NoEventsError> {
        if self.events > 0 || self.funcgraph_lines > 0 {
            return Ok(());
        }
        let path = path.to_path_buf();
        Err(if self.bytes == 0 {
            NoEventsError::EmptyFile { path }
        } else if self.malformed == 0 {
            NoEventsError::HeaderOnly {
                path,
                lines: self.lines,
            }
        } else {
            NoEventsError::NothingParsed {
                path,
                lines: self.lines,
                first: self.malformed_samples.first().cloned(),
            }
        })
    }

    /// Add the summary of the lines that follow the ones `self` saw
    /// (`other`'s line numbers counted from 1 after `line_offset`), as if
    /// `self` had noted them itself; `bytes` is left to the caller.
    pub(crate) fn absorb(&mut self, other: Summary, line_offset: u64) {
        self.lines += other.lines;
        self.events += other.events;
        self.funcgraph_lines += other.funcgraph_lines;
        self.malformed += other.malformed;
        let room = MALFORMED_KEPT.saturating_sub(self.malformed_samples.len());
        self.malformed_samples
            .extend(other.malformed_samples.into_iter().take(room).map(|mut m| {
                m.line_no += line_offset;
                m
            }));
        self.lost_events += other.lost_events;
        self.overwritten_events += other.overwritten_events;
        for cpu in other.cpus_with_loss {
            if !self.cpus_with_loss.contains(&cpu) {
                self.cpus_with_loss.push(cpu);
            }
        }
        if other.tracer.is_some() {
            self.tracer = other.tracer;
        }
        if other.entries.is_some() {
            self.entries = other.entries;
        }
        self.first_ts_ns = match (self.first_ts_ns, other.first_ts_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_ts_ns = self.last_ts_ns.max(other.last_ts_ns);
    }

    /// Account for one parsed line.
    #[inline]
    pub fn note(&mut self, line_no: u64, text: &str, line: &Line<'_>) {
        self.lines += 1;
        if let Line::Event(e) = line {
            self.events += 1;
            if e.time_base == crate::TimeBase::Clock {
                let t = e.ts_ns;
                self.first_ts_ns = Some(self.first_ts_ns.map_or(t, |f| f.min(t)));
                self.last_ts_ns = Some(self.last_ts_ns.map_or(t, |l| l.max(t)));
            }
        } else {
            self.note_other(line_no, text, line);
        }
    }

    /// [`Summary::note`] for a line that is not an event (rare: kept out
    /// of the line loop).
    #[inline(never)]
    fn note_other(&mut self, line_no: u64, text: &str, line: &Line<'_>) {
        match line {
            Line::FuncGraph(_) => self.funcgraph_lines += 1,
            Line::Malformed(reason) => {
                self.malformed += 1;
                if self.malformed_samples.len() < MALFORMED_KEPT {
                    let mut cut = text.len().min(200);
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    self.malformed_samples.push(Malformed {
                        line_no,
                        reason,
                        text: text[..cut].to_string(),
                    });
                }
            }
            Line::Lost { cpu, events } => {
                self.lost_events += events.unwrap_or(0);
                if !self.cpus_with_loss.contains(cpu) {
                    self.cpus_with_loss.push(*cpu);
                }
            }
            Line::Header(Header::Overrun { cpu, events }) => self.overwritten(*cpu, *events),
            Line::Header(Header::Tracer(t)) => self.tracer = Some(t.to_string()),
            Line::Header(Header::Entries {
                in_buffer, written, ..
            }) => self.entries = Some((*in_buffer, *written)),
            _ => {}
        }
    }
}

/// Parse every line of `input`, calling `f(line_no, &line)` for each, and
/// return the summary. `progress(bytes_read)` is called about every 4 MiB.
///
/// Reads go into one reused buffer; each read's complete lines are made
/// valid UTF-8 once as a block (not line by line) and cut with `memchr`.
/// A line never straddles a block: blocks end after a newline, and a
/// newline byte is never inside a UTF-8 sequence.
pub fn for_each_line<R: Read>(
    mut input: R,
    mut f: impl FnMut(u64, &Line<'_>),
    mut progress: impl FnMut(u64),
) -> io::Result<Summary> {
    let mut buf = vec![0u8; CHUNK];
    let (mut start, mut end, mut eof) = (0usize, 0usize, false);
    let mut summary = Summary::default();
    let (mut line_no, mut bytes, mut next_progress) = (0u64, 0u64, 4u64 << 20);
    loop {
        if !eof {
            if start > 0 {
                buf.copy_within(start..end, 0);
                end -= start;
                start = 0;
            }
            if end == buf.len() {
                let n = buf.len() * 2;
                buf.resize(n, 0);
            }
            match input.read(&mut buf[end..]) {
                Ok(0) => eof = true,
                Ok(n) => end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        let block_end = match memchr::memrchr(b'\n', &buf[start..end]) {
            _ if eof => end,
            Some(i) => start + i + 1,
            None => continue,
        };
        let text = fix_utf8(&mut buf[start..block_end]);
        feed_lines(text, &mut line_no, &mut summary, &mut f);
        bytes += (block_end - start) as u64;
        start = block_end;
        if bytes >= next_progress {
            progress(bytes);
            next_progress = bytes + (4 << 20);
        }
        if eof {
            break;
        }
    }
    summary.bytes = bytes;
    Ok(summary)
}

/// Lines per parsed piece handed from a worker to the caller.
pub(crate) type Parsed<'a> = Vec<(&'a str, Line<'a>)>;

/// Bytes read per round of [`for_each_line_parallel`].
pub const PARALLEL_BLOCK: usize = 8 << 20;

/// [`for_each_line`] with the parsing spread over `threads` threads:
/// each round reads a block of about `PARALLEL_BLOCK` bytes, cuts it at
/// line boundaries into pieces, parses the pieces at the same time, and
/// calls `f` for every line in file order on the calling thread — so
/// whatever `f` feeds sees exactly the sequence [`for_each_line`] would
/// give. The calling thread parses the first (smaller) piece itself and
/// feeds it while the others are still parsing. `threads <= 1` is
/// [`for_each_line`].
pub fn for_each_line_parallel<R: Read>(
    input: R,
    threads: usize,
    f: impl FnMut(u64, &Line<'_>),
    progress: impl FnMut(u64),
) -> io::Result<Summary> {
    for_each_line_blocks(input, threads, PARALLEL_BLOCK, f, progress)
}

#[doc(hidden)]
/// [`for_each_line_parallel`] with the block size as a parameter (tests
/// use tiny blocks to cut lines at every possible place).
pub fn for_each_line_blocks<R: Read>(
    mut input: R,
    threads: usize,
    block: usize,
    mut f: impl FnMut(u64, &Line<'_>),
    mut progress: impl FnMut(u64),
) -> io::Result<Summary> {
    if threads <= 1 {
        return for_each_line(input, f, progress);
    }
    let mut summary = Summary::default();
    let (mut line_no, mut bytes) = (0u64, 0u64);
    let mut carry: Vec<u8> = Vec::new();
    let mut eof = false;
    while !eof {
        // One block: what was left after the last newline, then new bytes.
        let mut buf = std::mem::take(&mut carry);
        let want = buf.len() + block.max(1);
        while buf.len() < want {
            let at = buf.len();
            buf.resize(want, 0);
            match input.read(&mut buf[at..]) {
                Ok(0) => {
                    buf.truncate(at);
                    eof = true;
                    break;
                }
                Ok(n) => buf.truncate(at + n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => buf.truncate(at),
                Err(e) => return Err(e),
            }
        }
        let cut = match memchr::memrchr(b'\n', &buf) {
            _ if eof => buf.len(),
            Some(i) => i + 1,
            None => {
                carry = buf;
                continue;
            }
        };
        carry = buf[cut..].to_vec();
        buf.truncate(cut);
        bytes += cut as u64;
        let text = fix_utf8(&mut buf);
        feed_parallel(text, threads, &mut line_no, &mut summary, &mut f);
        progress(bytes);
    }
    summary.bytes = bytes;
    Ok(summary)
}

/// Parse every line of `text` (whole lines; the last may lack its
/// newline) on this thread, in order.
pub(crate) fn feed_lines(
    text: &str,
    line_no: &mut u64,
    summary: &mut Summary,
    f: &mut impl FnMut(u64, &Line<'_>),
) {
    // One slot for every line: an event is parsed into the previous one.
    let mut parsed = Line::Blank;
    lines_of(text, |line| {
        *line_no += 1;
        parse_and_note(line, *line_no, summary, &mut parsed);
        f(*line_no, &parsed);
    });
}

/// Parse one line into `out` and account for it: the body of
/// [`feed_lines`]' loop, kept out of line on purpose. `feed_lines` is
/// generic (its callback), so Rust compiles it in the crate that calls it
/// with a concrete callback, the CLI, which the board profile optimises
/// for size (opt-level "z": little inlined, short string compares left as
/// `memcmp` calls; the parse was 1.4x slower there). This function is not
/// generic and not `#[inline]`, so it is compiled here, at the opt-level
/// this crate is built with (3, in every profile).
#[inline(never)]
fn parse_and_note<'a>(line: &'a str, line_no: u64, summary: &mut Summary, out: &mut Line<'a>) {
    parse_line_into(line, out);
    summary.note(line_no, line, out);
}

/// `each` line of `text` without its newline, in order (the last may lack
/// its newline; an empty tail is no line).
#[inline(always)]
pub(crate) fn lines_of<'a>(text: &'a str, mut each: impl FnMut(&'a str)) {
    let mut from = 0;
    for nl in memchr::memchr_iter(b'\n', text.as_bytes()) {
        each(crate::line::slice(text, from, nl));
        from = nl + 1;
    }
    if from < text.len() {
        each(&text[from..]);
    }
}

/// [`feed_lines`] with the parsing of `text` spread over `threads`
/// threads (see [`for_each_line_parallel`]).
fn feed_parallel(
    text: &str,
    threads: usize,
    line_no: &mut u64,
    summary: &mut Summary,
    f: &mut impl FnMut(u64, &Line<'_>),
) {
    let pieces = split_pieces(text, threads);
    std::thread::scope(|s| {
        let workers: Vec<_> = pieces[1..]
            .iter()
            .map(|p| s.spawn(move || parse_piece(p)))
            .collect();
        let mut feed = |parsed: Parsed<'_>| {
            for (text, line) in &parsed {
                *line_no += 1;
                summary.note(*line_no, text, line);
                f(*line_no, line);
            }
        };
        feed(parse_piece(pieces[0]));
        for w in workers {
            // A worker only parses; it cannot panic on any input (the
            // parser never does), so a join error is a bug.
            feed(w.join().unwrap_or_default());
        }
    });
}

/// `text` (whole lines) cut into `n` pieces at newlines; the first is
/// half the size of the others, since its thread also feeds every line.
fn split_pieces(text: &str, n: usize) -> Vec<&str> {
    let mut pieces = Vec::with_capacity(n);
    let share = text.len() / (2 * n - 1).max(1);
    let mut from = 0;
    for i in 0..n - 1 {
        let target = (from + if i == 0 { share } else { 2 * share }).min(text.len());
        let end = match memchr::memchr(b'\n', &text.as_bytes()[target..]) {
            Some(j) => target + j + 1,
            None => text.len(),
        };
        pieces.push(&text[from..end]);
        from = end;
    }
    pieces.push(&text[from..]);
    pieces
}

fn parse_piece(piece: &str) -> Parsed<'_> {
    let mut out = Vec::with_capacity(piece.len() / 100);
    parse_into(piece, &mut out);
    out
}

/// Every line of `text` with its parse, appended to `out` (parsed in its
/// slot: a push of a parsed line would copy it).
pub(crate) fn parse_into<'a>(text: &'a str, out: &mut Parsed<'a>) {
    lines_of(text, |line| {
        out.push((line, Line::Blank));
        if let Some((_, slot)) = out.last_mut() {
            parse_line_into(line, slot);
        }
    });
}

pub use crate::mapped::for_each_line_in;
#[doc(hidden)]
pub use crate::mapped::for_each_line_in_blocks;
