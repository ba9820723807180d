//! Where lines come from: text through [`for_each_line`], or any other
//! decoder (a binary trace.dat, in `lever-trace-input`) that hands out the
//! same typed [`Line`]s, so every analysis runs on either unchanged.

use crate::line::Line;
use crate::reader::{for_each_line, for_each_line_parallel, Summary};
use std::io::{self, Read};

/// A trace that can be walked once, line by line, in time order per CPU.
pub trait LineSource {
    /// Call `f(line_no, &line)` for every line or event, then return the
    /// summary. `progress(bytes_read)` is called every few MiB.
    fn for_each_line<F, P>(self, f: F, progress: P) -> io::Result<Summary>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64);

    /// [`LineSource::for_each_line`] with the decoding spread over up to
    /// `threads` threads where the source can split its input (text: see
    /// [`for_each_line_parallel`]); the lines reach `f` in the same order.
    fn for_each_line_threaded<F, P>(self, threads: usize, f: F, progress: P) -> io::Result<Summary>
    where
        Self: Sized,
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        let _ = threads;
        self.for_each_line(f, progress)
    }
}

/// ftrace text from any reader (a file, a pipe, a decompressor).
pub struct Text<R>(pub R);

impl<R: Read> LineSource for Text<R> {
    fn for_each_line<F, P>(self, f: F, progress: P) -> io::Result<Summary>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        for_each_line(self.0, f, progress)
    }

    fn for_each_line_threaded<F, P>(self, threads: usize, f: F, progress: P) -> io::Result<Summary>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        for_each_line_parallel(self.0, threads, f, progress)
    }
}

/// A source whose events' times are rounded to microseconds, as the
/// kernel's text output prints them (`ns2usecs` rounds to nearest): a
/// binary trace.dat seen this way holds the same numbers as its text
/// twin, so the two can be compared analysis for analysis.
pub struct RoundedToMicros<S>(pub S);

impl<S: LineSource> LineSource for RoundedToMicros<S> {
    fn for_each_line<F, P>(self, mut f: F, progress: P) -> io::Result<Summary>
    where
        F: FnMut(u64, &Line<'_>),
        P: FnMut(u64),
    {
        self.0.for_each_line(
            |n, l| match l {
                Line::Event(e) => f(
                    n,
                    &Line::Event(crate::Event {
                        ts_ns: (e.ts_ns + 500) / 1000 * 1000,
                        ..e.clone()
                    }),
                ),
                other => f(n, other),
            },
            progress,
        )
    }
}
