//! No input panics the trace.dat reader or the detection: damaged copies
//! of a real capture (bytes changed, cut short) and random bytes behind
//! the magic either decode (damaged pages counted as malformed) or give
//! an error. The cargo-fuzz target `trace_dat` runs the same property
//! for millions of inputs.

use lever_trace::LineSource;
use lever_trace_input::from_reader;
use proptest::prelude::*;
use std::sync::OnceLock;

fn real() -> &'static [u8] {
    static DAT: OnceLock<Vec<u8>> = OnceLock::new();
    DAT.get_or_init(|| {
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/v7z.dat"
        ))
        .unwrap()
    })
}

fn walk(bytes: Vec<u8>) {
    if let Ok(input) = from_reader(std::io::Cursor::new(bytes), "fuzz") {
        let _ = input.for_each_line(|_, _| {}, |_| {});
    }
}

/// Every line, the summary or the error, of one walk with `threads`.
fn lines(bytes: Vec<u8>, threads: usize) -> (Vec<String>, Result<String, String>) {
    let mut v = Vec::new();
    let res = match from_reader(std::io::Cursor::new(bytes), "fuzz") {
        Ok(input) => input
            .for_each_line_threaded(threads, |n, l| v.push(format!("{n} {l:?}")), |_| {})
            .map(|s| format!("{s:?}"))
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    (v, res)
}

#[test]
fn the_real_dat_decodes_alike_with_and_without_decompression_ahead() {
    let one = lines(real().to_vec(), 1);
    assert!(one.0.len() > 9_000, "{}", one.0.len());
    assert_eq!(lines(real().to_vec(), 2), one);
}

/// A caller that panics mid-walk does not leave the decompression
/// worker waiting for it: the walk unwinds instead of hanging in the
/// scope that joins the worker (a hang fails here after a minute).
#[test]
fn a_panic_in_the_caller_ends_the_worker_too() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let input = from_reader(std::io::Cursor::new(real().to_vec()), "fuzz").unwrap();
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            input.for_each_line_threaded(2, |n, _| assert!(n < 100, "stop at line {n}"), |_| {})
        }));
        let _ = tx.send(res.is_err());
    });
    let unwound = rx.recv_timeout(std::time::Duration::from_secs(60));
    assert_eq!(unwound, Ok(true), "the walk did not end");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Damaged copies (chunks that do not decompress, sizes past the
    /// file): the worker thread gives the same lines and the same error
    /// at the same point as the one-thread path.
    #[test]
    fn damaged_real_dat_decodes_alike_with_and_without_decompression_ahead(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let mut b = real().to_vec();
        // The chunks are the last fifth of the file (metadata before).
        for (i, v) in edits {
            let i = b.len() * 4 / 5 + i.index(b.len() / 5);
            b[i] = v;
        }
        // Cut short, the file's CPU data ends past its end: an error
        // before any chunk is read. Half the cases keep it whole.
        if let Some(cut) = cut {
            let keep = cut.index(b.len()).max(b.len() * 4 / 5);
            b.truncate(keep);
        }
        prop_assert_eq!(lines(b.clone(), 2), lines(b, 1));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]


    #[test]
    fn damaged_real_dat_never_panics(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut b = real().to_vec();
        for (i, v) in edits {
            let i = i.index(b.len());
            b[i] = v;
        }
        let keep = cut.index(b.len()).max(b.len() / 2);
        b.truncate(keep);
        walk(b);
    }

    #[test]
    fn random_bytes_behind_the_magic_never_panic(
        version in prop::sample::select(vec![&b"6\0"[..], &b"7\0"[..]]),
        tail in prop::collection::vec(any::<u8>(), 0..2048),
    ) {
        let mut b = b"\x17\x08\x44tracing".to_vec();
        b.extend_from_slice(version);
        b.extend_from_slice(&tail);
        walk(b);
    }
}

#[test]
fn a_cut_real_dat_is_an_error_or_fewer_events_not_a_panic() {
    for keep in [11, 20, 100, 4096, 40_000, 135_200, real().len() - 1] {
        walk(real()[..keep].to_vec());
    }
}
