//! Trace inputs, told apart by their first bytes in one place for every
//! `lever trace` command:
//!
//! | first bytes | input | read as |
//! |---|---|---|
//! | `\x17\x08\x44tracing` | trace-cmd `trace.dat` v6/v7 | [`dat::ring::DatReader`]: decoded events |
//! | `1f 8b` / `28 b5 2f fd` | gzip / zstd | decompressed on the fly, then detected again |
//! | `cpus=N` line | `trace-cmd report` text | [`report::Report`]: the text parser, plugin formats typed |
//! | text | ftrace `trace`/`trace_pipe` text | `lever-trace`'s text parser |
//! | a directory with a `metadata` file (or such directories below it) | CTF: LTTng kernel/UST, perf's CTF | [`ctf::CtfInput`]: `lever-ctf`'s events, LTTng names mapped to ftrace's, several traces merged by time |
//! | anything else (NUL or control bytes) | not a trace | [`InputError::NotATrace`] |
//!
//! Every kind becomes a [`lever_trace::LineSource`], so the analyses
//! (`lever_trace_analysis::analyze_source`) run on any of them unchanged.
//!
//! ```
//! use lever_trace::LineSource;
//! use lever_trace_input::{from_reader, Kind};
//! let text = "  <idle>-0 [000] d..2. 1.000050: sched_switch: prev_comm=swapper/0 prev_pid=0 \
//!     prev_prio=120 prev_state=R ==> next_comm=a next_pid=7 next_prio=120\n";
//! let input = from_reader(text.as_bytes(), "example").unwrap();
//! assert_eq!(input.kind(), Kind::Text);
//! let summary = input.for_each_line(|_, _| {}, |_| {}).unwrap();
//! assert_eq!(summary.events, 1);
//! assert!(from_reader(&b"\x00\x01\x02garbage"[..], "junk").is_err());
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod ctf;
pub mod dat;
pub mod report;

use dat::ring::DatReader;
use dat::{DatError, Data};
use lever_trace::{Line, LineSource, Summary, Text};
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes looked at to tell the kind of input.
const SNIFF: usize = 4096;
/// Largest decompressed or piped trace.dat held in memory.
const MEM_CAP: u64 = 4 << 30;

/// What an input turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// ftrace text.
    Text,
    /// gzip-compressed ftrace text.
    GzipText,
    /// zstd-compressed ftrace text.
    ZstdText,
    /// `trace-cmd report` output (maybe compressed).
    TraceCmdReport,
    /// trace-cmd trace.dat (version; compressed inside, or the whole file
    /// compressed with gzip/zstd).
    Dat {
        /// File version.
        version: u32,
    },
    /// CTF trace directories (LTTng, perf's CTF output).
    Ctf {
        /// How many traces (an LTTng session may hold a kernel and a UST
        /// trace).
        traces: usize,
    },
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kind::Text => write!(f, "ftrace text"),
            Kind::GzipText => write!(f, "gzip-compressed ftrace text"),
            Kind::ZstdText => write!(f, "zstd-compressed ftrace text"),
            Kind::TraceCmdReport => write!(f, "trace-cmd report text"),
            Kind::Dat { version } => write!(f, "trace.dat v{version}"),
            Kind::Ctf { traces } => write!(f, "CTF ({traces} trace(s))"),
        }
    }
}

/// An input that could not be opened or is not a trace.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// Opening or reading the first bytes failed.
    #[error("cannot {op} {}", path.display())]
    Io {
        /// The input.
        path: PathBuf,
        /// `open` or `read`.
        op: &'static str,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Zero bytes.
    #[error("{} is empty (0 bytes), not a trace", path.display())]
    Empty {
        /// The input.
        path: PathBuf,
    },
    /// Binary bytes that are no trace format Lever knows.
    #[error("{}: not a trace: {why} (expected ftrace text, a trace-cmd trace.dat, or either gzip/zstd-compressed)", path.display())]
    NotATrace {
        /// The input.
        path: PathBuf,
        /// What the first bytes look like.
        why: String,
    },
    /// A CTF trace directory that does not read.
    #[error("{}: bad CTF trace", path.display())]
    Ctf {
        /// The directory.
        path: PathBuf,
        /// Where and what.
        #[source]
        source: lever_ctf::CtfError,
    },
    /// A symbol mapping file (`--symbols`) that does not read, or is
    /// given for a trace that is not CTF.
    #[error("{}: {why}", path.display())]
    Symbols {
        /// The mapping file.
        path: PathBuf,
        /// What.
        why: String,
    },
    /// A trace.dat whose metadata does not read.
    #[error("{}: bad trace.dat", path.display())]
    Dat {
        /// The input.
        path: PathBuf,
        /// Where and what.
        #[source]
        source: DatError,
    },
}

/// An opened trace, ready to walk once.
pub enum Input {
    /// Text (maybe decompressed on the fly).
    Text(Kind, Text<Box<dyn Read + Send>>),
    /// `trace-cmd report` text (maybe decompressed on the fly).
    Report(report::Report<Box<dyn Read + Send>>),
    /// A decoded trace.dat.
    Dat(Box<DatReader>),
    /// CTF trace directories.
    Ctf(Box<ctf::CtfInput>),
    /// Plain text in a file, mapped into memory: parsed where it lies,
    /// without copying it through read buffers (see [`Mapped`]).
    Mapped(Mapped),
}

/// A plain-text trace file mapped read-only (`lever-syscalls` owns the
/// `mmap`). A file that another process truncates while it is being read
/// would fault (SIGBUS); a saved trace is not rewritten in place, and
/// the read path, which copies, is used for stdin, pipes and anything
/// that is not a regular file.
pub struct Mapped(lever_syscalls::MemoryMap);

impl LineSource for Mapped {
    fn for_each_line<F, P>(self, f: F, progress: P) -> io::Result<Summary>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        self.for_each_line_threaded(1, f, progress)
    }

    fn for_each_line_threaded<F, P>(
        self,
        threads: usize,
        f: F,
        mut progress: P,
    ) -> io::Result<Summary>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        let map = &self.0;
        let mut released = 0;
        Ok(lever_trace::for_each_line_in(
            map.as_slice(),
            threads,
            f,
            |done| {
                // Every line before `done` is parsed and fed: its pages
                // need not stay resident. Advice only; an error is moot.
                let _ = map.release(released, done as usize);
                released = done as usize / 4096 * 4096;
                progress(done)
            },
        ))
    }
}

impl Input {
    /// What the input is.
    pub fn kind(&self) -> Kind {
        match self {
            Input::Text(k, _) => *k,
            Input::Mapped(_) => Kind::Text,
            Input::Report(_) => Kind::TraceCmdReport,
            Input::Dat(d) => Kind::Dat {
                version: d.info().version,
            },
            Input::Ctf(c) => Kind::Ctf {
                traces: c.traces().len(),
            },
        }
    }
}

impl LineSource for Input {
    fn for_each_line<F, P>(self, f: F, progress: P) -> io::Result<Summary>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        match self {
            Input::Text(_, t) => t.for_each_line(f, progress),
            Input::Mapped(m) => m.for_each_line(f, progress),
            Input::Report(r) => r.for_each_line(f, progress),
            Input::Dat(d) => d.for_each_line(f, progress),
            Input::Ctf(c) => c.for_each_line(f, progress),
        }
    }

    fn for_each_line_threaded<F, P>(self, threads: usize, f: F, progress: P) -> io::Result<Summary>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        match self {
            Input::Text(_, t) => t.for_each_line_threaded(threads, f, progress),
            Input::Mapped(m) => m.for_each_line_threaded(threads, f, progress),
            Input::Dat(d) => d.for_each_line_threaded(threads, f, progress),
            other => other.for_each_line(f, progress),
        }
    }
}

/// [`open`], with the file's length in bytes for a progress bar (`None`
/// for stdin and what cannot say).
pub fn open_sized(path: &Path) -> Result<(Input, Option<u64>), InputError> {
    let input = open(path)?;
    let len = match &input {
        _ if path == Path::new("-") => None,
        Input::Ctf(c) => Some(c.bytes()),
        _ => std::fs::metadata(path).ok().map(|m| m.len()),
    };
    Ok((input, len))
}

/// [`open_sized`], with a symbol mapping file (`nm` output) naming the
/// function addresses of a CTF cyg-profile trace.
pub fn open_sized_with_symbols(
    path: &Path,
    symbols: Option<&Path>,
) -> Result<(Input, Option<u64>), InputError> {
    let (input, len) = open_sized(path)?;
    let Some(sym) = symbols else {
        return Ok((input, len));
    };
    let bad = |why: String| InputError::Symbols {
        path: sym.to_path_buf(),
        why,
    };
    let Input::Ctf(c) = input else {
        return Err(bad(format!(
            "symbols name the function addresses of a CTF (LTTng cyg-profile) trace; {} is {}",
            path.display(),
            input.kind()
        )));
    };
    let text = std::fs::read_to_string(sym).map_err(|e| bad(format!("cannot read: {e}")))?;
    let table = ctf::Symbols::from_nm(&text).map_err(bad)?;
    Ok((Input::Ctf(Box::new(c.with_symbols(table))), len))
}

/// Open the trace file `path` (`-` for stdin) and tell what it is.
pub fn open(path: &Path) -> Result<Input, InputError> {
    let io_err = |op| {
        move |source| InputError::Io {
            path: path.to_path_buf(),
            op,
            source,
        }
    };
    if path == Path::new("-") {
        return from_reader(io::stdin(), path);
    }
    if path.is_dir() {
        return ctf::CtfInput::open(path)
            .map(|c| Input::Ctf(Box::new(c)))
            .map_err(|source| InputError::Ctf {
                path: path.to_path_buf(),
                source,
            });
    }
    let mut file = File::open(path).map_err(io_err("open"))?;
    let mut head = [0u8; 10];
    let n = read_full(&mut file, &mut head).map_err(io_err("read"))?;
    // A trace.dat needs random access: a regular file is read where it
    // lies; a FIFO, `<(…)` or a character device is read into memory,
    // the bytes already taken in front (as stdin is).
    let seekable = file.metadata().is_ok_and(|m| m.is_file());
    if n == head.len() && &head == dat::MAGIC && seekable {
        let reader =
            DatReader::new(Data::File(Arc::new(file))).map_err(|source| InputError::Dat {
                path: path.to_path_buf(),
                source,
            })?;
        return Ok(Input::Dat(Box::new(reader)));
    }
    if let Some(mapped) = map_text(&file, &head[..n]) {
        return Ok(Input::Mapped(mapped));
    }
    // Not seekable back cheaply in general: put the bytes read in front.
    from_reader(io::Cursor::new(head[..n].to_vec()).chain(file), path)
}

/// A regular, non-empty file whose first bytes say plain text, mapped;
/// `None` for anything else (the caller reads it the usual way).
fn map_text(file: &File, head: &[u8]) -> Option<Mapped> {
    use std::os::fd::AsFd;
    let meta = file.metadata().ok()?;
    let len = usize::try_from(meta.len()).ok()?;
    if !meta.is_file() || len == 0 || head.starts_with(dat::MAGIC) {
        return None;
    }
    let map = lever_syscalls::MemoryMap::file_read_only(file.as_fd(), len).ok()?;
    let bytes = map.as_slice();
    let head = &bytes[..bytes.len().min(SNIFF)];
    let compressed = head.starts_with(&[0x1f, 0x8b]) || head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
    let text = !compressed && binary(head).is_none() && !report::looks_like(head);
    text.then_some(Mapped(map))
}

/// Tell what `input` holds and wrap it; `name` is for messages. A
/// trace.dat is read into memory here (it needs random access).
pub fn from_reader<R: Read + Send + 'static>(
    input: R,
    name: impl AsRef<Path>,
) -> Result<Input, InputError> {
    detect(Box::new(input), name.as_ref(), 0)
}

fn detect(mut input: Box<dyn Read + Send>, path: &Path, depth: u32) -> Result<Input, InputError> {
    let io_err = |source| InputError::Io {
        path: path.to_path_buf(),
        op: "read",
        source,
    };
    let mut head = vec![0u8; SNIFF];
    let n = read_full(&mut input, &mut head).map_err(io_err)?;
    head.truncate(n);
    if n == 0 {
        return Err(InputError::Empty {
            path: path.to_path_buf(),
        });
    }
    let whole: Box<dyn Read + Send> = Box::new(io::Cursor::new(head.clone()).chain(input));
    if head.starts_with(dat::MAGIC) {
        let mut bytes = Vec::new();
        whole
            .take(MEM_CAP + 1)
            .read_to_end(&mut bytes)
            .map_err(io_err)?;
        if bytes.len() as u64 > MEM_CAP {
            return Err(InputError::NotATrace {
                path: path.to_path_buf(),
                why: format!(
                    "a piped or compressed trace.dat over {MEM_CAP} bytes; decompress it to a file"
                ),
            });
        }
        let reader = DatReader::new(Data::Mem(bytes.into())).map_err(|source| InputError::Dat {
            path: path.to_path_buf(),
            source,
        })?;
        return Ok(Input::Dat(Box::new(reader)));
    }
    let gzip = head.starts_with(&[0x1f, 0x8b]);
    let zstd = head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
    if (gzip || zstd) && depth == 0 {
        let inner: Box<dyn Read + Send> = if gzip {
            Box::new(flate2::read::MultiGzDecoder::new(whole))
        } else {
            Box::new(zstd::stream::read::Decoder::new(whole).map_err(io_err)?)
        };
        return match detect(inner, path, 1)? {
            Input::Text(_, t) => Ok(Input::Text(
                if gzip { Kind::GzipText } else { Kind::ZstdText },
                t,
            )),
            dat => Ok(dat),
        };
    }
    if let Some(why) = binary(&head) {
        return Err(InputError::NotATrace {
            path: path.to_path_buf(),
            why,
        });
    }
    if report::looks_like(&head) {
        return Ok(Input::Report(report::Report(whole)));
    }
    Ok(Input::Text(Kind::Text, Text(whole)))
}

/// Why `head` is not text: ftrace text has no NUL bytes and few control
/// characters (a comm may hold odd bytes, so not all must be UTF-8).
fn binary(head: &[u8]) -> Option<String> {
    if let Some(i) = head.iter().position(|&b| b == 0) {
        return Some(format!("a NUL byte at offset {i}"));
    }
    let ctrl = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t'))
        .count();
    (ctrl * 20 > head.len()).then(|| format!("{ctrl} control bytes in the first {}", head.len()))
}

/// Read until `buf` is full or `r` ends; the bytes read.
pub(crate) fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
