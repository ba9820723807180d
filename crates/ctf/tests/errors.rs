//! Malformed traces give an error naming the file and the byte (or the
//! metadata line), never a panic or a hang; packet indexes are used and
//! checked.

mod common;
use common::third_party;
use lever_ctf::{CtfError, Trace};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn glxgears() -> Option<PathBuf> {
    let d = third_party().join("cyg-profile/glxgears-cyg-profile");
    if d.is_dir() {
        Some(d)
    } else {
        assert!(!common::in_ci(), "{} missing", d.display());
        eprintln!("SKIP: {} not here", d.display());
        None
    }
}

/// A writable copy of a trace directory.
fn copy(dir: &Path) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), t.path().join(e.file_name())).unwrap();
        }
    }
    t
}

/// Decode everything; the number of events or the error.
fn walk(trace: &Trace) -> Result<u64, CtfError> {
    let mut ev = trace.events();
    let mut n = 0;
    while let Some(e) = ev.next()? {
        let _ = e.payload().members();
        n += 1;
    }
    Ok(n)
}

fn all(dir: &Path) -> Result<u64, CtfError> {
    walk(&Trace::open(dir)?)
}

#[test]
fn truncated_stream_names_file_and_byte() {
    let Some(src) = glxgears() else { return };
    let t = copy(&src);
    let f = t.path().join("channel0_2");
    let bytes = std::fs::read(&f).unwrap();
    std::fs::write(&f, &bytes[..bytes.len() - 5000]).unwrap();
    let e = all(t.path()).unwrap_err().to_string();
    assert!(e.contains("channel0_2: byte "), "{e}");
    assert!(e.contains("past the file's end"), "{e}");
}

#[test]
fn bad_magic_and_bad_event_id() {
    let Some(src) = glxgears() else { return };
    let t = copy(&src);
    let f = t.path().join("channel0_1");
    let mut bytes = std::fs::read(&f).unwrap();
    bytes[0] ^= 0xff;
    std::fs::write(&f, &bytes).unwrap();
    let e = all(t.path()).unwrap_err().to_string();
    assert!(
        e.ends_with("channel0_1: byte 0: bad packet magic 0xc1fc1f3e (expected 0xc1fc1fc1)"),
        "{e}"
    );

    // The first event header of channel0_0 (after the 24-byte header and
    // the 44-byte context): a 5-bit id of 5, which no event class has.
    let t = copy(&src);
    let f = t.path().join("channel0_0");
    let mut bytes = std::fs::read(&f).unwrap();
    bytes[68] = (bytes[68] & !0x1f) | 5;
    std::fs::write(&f, &bytes).unwrap();
    let e = all(t.path()).unwrap_err().to_string();
    assert!(
        e.contains("channel0_0: byte 68: event id 5 is not declared"),
        "{e}"
    );
}

#[test]
fn metadata_errors_name_the_line() {
    let Some(src) = glxgears() else { return };
    let t = copy(&src);
    let text = lever_ctf::metadata::metadata_text(
        &std::fs::read(src.join("metadata")).unwrap(),
        Path::new("m"),
    )
    .unwrap();
    let broken = text.replacen(
        "uint64_clock_monotonic_t timestamp_begin;",
        "no_such_type timestamp_begin;",
        1,
    );
    let line = broken
        .lines()
        .position(|l| l.contains("no_such_type"))
        .unwrap()
        + 1;
    std::fs::write(t.path().join("metadata"), broken).unwrap();
    let e = Trace::open(t.path()).err().unwrap().to_string();
    assert!(
        e.ends_with(&format!("metadata:{line}: unknown type `no_such_type`")),
        "{e}"
    );

    // Packetized metadata cut inside a packet header.
    let raw = std::fs::read(src.join("metadata")).unwrap();
    std::fs::write(t.path().join("metadata"), &raw[..20]).unwrap();
    let e = Trace::open(t.path()).err().unwrap().to_string();
    assert!(
        e.ends_with("metadata: byte 0: metadata packet header cut short (20 of 37 bytes)"),
        "{e}"
    );
}

fn be64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_be_bytes());
}

/// An LTTng index for a glxgears stream: packets found by their
/// contexts' packet_size (bytes 48..56 of each packet, little endian).
fn index_for(stream: &[u8], corrupt: bool) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0xC1F1_DCC1u32.to_be_bytes());
    out.extend_from_slice(&1u32.to_be_bytes());
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(&56u32.to_be_bytes());
    let mut off = 0usize;
    let mut first = true;
    while off < stream.len() {
        let content = u64::from_le_bytes(stream[off + 40..off + 48].try_into().unwrap());
        let packet = u64::from_le_bytes(stream[off + 48..off + 56].try_into().unwrap());
        be64(&mut out, off as u64);
        be64(&mut out, packet);
        be64(
            &mut out,
            if corrupt && !first {
                content - 8
            } else {
                content
            },
        );
        for _ in 0..4 {
            be64(&mut out, 0);
        }
        first = false;
        off += packet as usize / 8;
    }
    out
}

#[test]
fn packet_index_is_used_and_checked() {
    let Some(src) = glxgears() else { return };
    let want = all(&src).unwrap();
    let t = copy(&src);
    std::fs::create_dir(t.path().join("index")).unwrap();
    for s in ["channel0_0", "channel0_1", "channel0_2", "channel0_3"] {
        let b = std::fs::read(src.join(s)).unwrap();
        std::fs::write(
            t.path().join(format!("index/{s}.idx")),
            index_for(&b, false),
        )
        .unwrap();
    }
    assert_eq!(all(t.path()).unwrap(), want);
    let b = std::fs::read(src.join("channel0_3")).unwrap();
    std::fs::write(t.path().join("index/channel0_3.idx"), index_for(&b, true)).unwrap();
    let e = all(t.path()).unwrap_err().to_string();
    assert!(
        e.contains("index/channel0_3.idx") && e.contains("index says"),
        "{e}"
    );
    // An index cut inside an entry.
    std::fs::write(
        t.path().join("index/channel0_3.idx"),
        &index_for(&b, false)[..30],
    )
    .unwrap();
    let e = Trace::open(t.path()).err().unwrap().to_string();
    assert!(
        e.contains("index/channel0_3.idx: byte 16: index ends inside an entry"),
        "{e}"
    );
}

#[test]
fn discarded_events_are_counted() {
    // channel0_2's second packet says 7 events were discarded before it
    // (packet context: events_discarded at bytes 56..64, little endian).
    let Some(src) = glxgears() else { return };
    let t = copy(&src);
    let f = t.path().join("channel0_2");
    let mut b = std::fs::read(&f).unwrap();
    let first = u64::from_le_bytes(b[48..56].try_into().unwrap()) as usize / 8;
    b[first + 56..first + 64].copy_from_slice(&7u64.to_le_bytes());
    std::fs::write(&f, &b).unwrap();
    let trace = Trace::open(t.path()).unwrap();
    let mut ev = trace.events();
    while ev.next().unwrap().is_some() {}
    let d = ev.discarded();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!((d[0].events, d[0].cpu), (7, Some(2)));
    assert!(d[0].stream.ends_with("channel0_2"));
    if common::have("babeltrace2") {
        let o = std::process::Command::new("babeltrace2")
            .arg(t.path())
            .args(["-c", "sink.text.details", "-p", "with-metadata=no"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains("Discarded events (7 events)"),
            "babeltrace2 sees it too"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Random byte changes in a stream or the metadata: an error or
    /// events, never a panic, and quickly.
    #[test]
    fn mutations_never_panic_or_hang(
        which in 0usize..5,
        edits in proptest::collection::vec((any::<u32>(), any::<u8>()), 1..16),
        cut in proptest::option::of(any::<u32>()),
    ) {
        let dir = third_party().join("cyg-profile/glxgears-cyg-profile");
        if !dir.is_dir() {
            return Ok(());
        }
        let names = ["channel0_0", "channel0_1", "channel0_2", "channel0_3", "metadata"];
        let mut md = std::fs::read(dir.join("metadata")).unwrap();
        let mut streams: Vec<(PathBuf, Vec<u8>)> = names[..4]
            .iter()
            .map(|n| (PathBuf::from(n), std::fs::read(dir.join(n)).unwrap()))
            .collect();
        let target = if which == 4 { &mut md } else { &mut streams[which].1 };
        for (pos, byte) in edits {
            let len = target.len();
            if len > 0 {
                target[pos as usize % len] = byte;
            }
        }
        if let Some(c) = cut {
            let len = target.len();
            target.truncate(c as usize % (len + 1));
        }
        let t0 = Instant::now();
        if let Ok(trace) = Trace::from_bytes(&md, streams) {
            let _ = walk(&trace);
        }
        prop_assert!(t0.elapsed() < Duration::from_secs(5), "took {:?}", t0.elapsed());
    }
}
