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

/// The uncompressed v6 capture (its pages as the kernel wrote them, so a
/// changed byte lands in an event, not in a zstd frame that fails).
fn real_v6() -> &'static [u8] {
    static DAT: OnceLock<Vec<u8>> = OnceLock::new();
    DAT.get_or_init(|| {
        let z = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/v6.dat.zst"
        ))
        .unwrap();
        zstd::stream::decode_all(&z[..]).unwrap()
    })
}

/// Where the ring-buffer pages of [`real_v6`] start (the formats and
/// the other metadata come first).
fn pages_start() -> usize {
    let input = from_reader(std::io::Cursor::new(real_v6().to_vec()), "fuzz").unwrap();
    let lever_trace_input::Input::Dat(reader) = input else {
        panic!("a dat")
    };
    let start = reader.info().cpus.iter().map(|c| c.offset).min().unwrap();
    start as usize
}

/// Every analysis over `bytes` on another thread; a failure when it has
/// not ended within `limit` (a hang or a scan per event over a damaged
/// CPU number). An abort (an allocation sized by a damaged field) ends
/// the test process.
fn every_analysis_within(
    bytes: Vec<u8>,
    limit: std::time::Duration,
) -> Result<Option<lever_trace::Summary>, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let opts = lever_trace_analysis::Options {
            wakeups: true,
            locks: true,
            ramp: true,
            critical_path: Some(lever_trace_analysis::critical::CriticalPathSpec {
                tid: 1,
                from_ns: None,
                to_ns: None,
            }),
            ..lever_trace_analysis::Options::all()
        };
        let summary = from_reader(std::io::Cursor::new(bytes), "fuzz")
            .ok()
            .and_then(|input| lever_trace_analysis::analyze_source(input, &opts, |_| {}).ok())
            .map(|r| r.summary);
        let _ = tx.send(summary);
    });
    rx.recv_timeout(limit)
        .map_err(|_| format!("no report after {limit:?}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Damaged copies of the real capture — bytes and whole 4-byte words
    /// changed in its ring-buffer pages (a CPU number, a pid, a length
    /// becoming anything) — run every analysis to the end in bounded
    /// time, as the fuzz target `trace_dat_analyze` checks for millions
    /// of inputs.
    #[test]
    fn damaged_real_dat_runs_every_analysis_in_bounded_time(
        bytes in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        words in prop::collection::vec((any::<prop::sample::Index>(), any::<u32>()), 0..8),
    ) {
        let mut b = real_v6().to_vec();
        let data = pages_start();
        for (i, v) in bytes {
            let i = data + i.index(b.len() - data);
            b[i] = v;
        }
        for (i, v) in words {
            let i = (data + i.index(b.len() - data - 4)) & !3;
            b[i..i + 4].copy_from_slice(&v.to_le_bytes());
        }
        let ended = every_analysis_within(b, std::time::Duration::from_secs(10));
        prop_assert!(ended.is_ok(), "{:?}", ended);
    }
}

/// The damaged values written over every sched_waking's
/// `target_cpu` in the real capture: each such event is malformed (a
/// CPU the trace does not have), and every analysis ends in bounded
/// time.
#[test]
fn damaged_cpu_numbers_in_the_real_dat_end_in_bounded_time() {
    let input = from_reader(std::io::Cursor::new(real_v6().to_vec()), "fuzz").unwrap();
    let lever_trace_input::Input::Dat(reader) = input else {
        panic!("a dat")
    };
    let fmt = reader
        .info()
        .formats
        .iter()
        .find(|f| f.name == "sched_waking")
        .unwrap();
    let (id, at) = (fmt.id, fmt.field("target_cpu").unwrap().offset);
    for bad in [655_384u32, u32::MAX, 100_000, 8191] {
        let mut b = real_v6().to_vec();
        let data = pages_start();
        let mut hits = 0;
        // An event's payload starts with its common_type after the
        // 4-byte event header: patch each sched_waking found that way.
        let mut i = data;
        while i + at + 8 <= b.len() {
            if u16::from_le_bytes([b[i], b[i + 1]]) == id && b[i + 4..i + 8] != [0; 4] {
                b[i + at..i + at + 4].copy_from_slice(&bad.to_le_bytes());
                hits += 1;
            }
            i += 4;
        }
        assert!(hits > 100, "{hits}");
        let sum = every_analysis_within(b, std::time::Duration::from_secs(10))
            .unwrap()
            .unwrap();
        // Each is a CPU the trace does not have: malformed, not a CPU.
        assert!(sum.malformed >= 100, "target_cpu={bad}: {sum:?}");
        assert!(
            sum.malformed_samples
                .iter()
                .all(|m| m.reason.contains("CPU number")),
            "target_cpu={bad}: {:?}",
            sum.malformed_samples
        );
    }
}
