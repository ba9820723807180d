//! Detection by the first bytes: each kind of input is recognised, and
//! inputs that are no trace fail with a message that says why.

use lever_trace::LineSource;
use lever_trace_input::{from_reader, open, InputError, Kind};
use std::io::Write;

const TEXT: &str = "# tracer: nop\n  <idle>-0 [000] d..2. 1.000050: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=7 next_prio=120\n";

fn kind_and_events(bytes: Vec<u8>) -> (Kind, u64) {
    let input = from_reader(std::io::Cursor::new(bytes), "t").unwrap();
    let k = input.kind();
    (k, input.for_each_line(|_, _| {}, |_| {}).unwrap().events)
}

#[test]
fn plain_gzip_and_zstd_text() {
    assert_eq!(kind_and_events(TEXT.into()), (Kind::Text, 1));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(TEXT.as_bytes()).unwrap();
    assert_eq!(kind_and_events(gz.finish().unwrap()), (Kind::GzipText, 1));
    let zst = zstd::encode_all(TEXT.as_bytes(), 1).unwrap();
    assert_eq!(kind_and_events(zst), (Kind::ZstdText, 1));
}

#[test]
fn a_compressed_dat_is_decoded_in_memory() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/v6.dat.zst");
    let input = open(std::path::Path::new(path)).unwrap();
    assert_eq!(input.kind(), Kind::Dat { version: 6 });
}

#[test]
fn empty_binary_and_bad_dat_are_errors_naming_the_input() {
    let err = |b: &[u8]| {
        from_reader(std::io::Cursor::new(b.to_vec()), "in.bin")
            .err()
            .unwrap()
    };
    assert!(matches!(err(b""), InputError::Empty { .. }));
    let e = err(b"abc\0def");
    assert!(matches!(e, InputError::NotATrace { .. }));
    assert_eq!(
        e.to_string(),
        "in.bin: not a trace: a NUL byte at offset 3 (expected ftrace text, a trace-cmd trace.dat, or either gzip/zstd-compressed)"
    );
    assert!(matches!(
        err(&[1, 2, 3, 4, 5, 6, 7, 8]),
        InputError::NotATrace { .. }
    ));
    let e = err(b"\x17\x08\x44tracing9\0\0\x08\0\x10\0\0");
    assert!(matches!(e, InputError::Dat { .. }));
    let msg = format!("{e}: {}", std::error::Error::source(&e).unwrap());
    assert_eq!(
        msg,
        "in.bin: bad trace.dat: at offset 10: trace.dat version 9; versions 6 and 7 are read"
    );
    // A header cut short says where.
    let e = err(b"\x17\x08\x44tracing6\0\0\x08\0\x10\0\0header_pa");
    let msg = std::error::Error::source(&e).unwrap().to_string();
    assert!(
        msg.starts_with("at offset 18: a section name: 12 bytes would end past"),
        "{msg}"
    );
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let e = open(std::path::Path::new("/nonexistent/x.dat"))
        .err()
        .unwrap();
    assert!(matches!(e, InputError::Io { .. }));
    assert_eq!(e.to_string(), "cannot open /nonexistent/x.dat");
}

/// A text file is mapped, not read through buffers; its events and
/// summary are the streaming reader's, and a compressed or empty file
/// still takes the usual path.
#[test]
fn a_text_file_is_mapped_and_reads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.txt");
    let mut text = TEXT.as_bytes().to_vec();
    text.extend_from_slice(b"  a-7 [000] d..2. 1.000060: sched_waking: comm=b pid=8 prio=120 target_cpu=000\nlast line \xff");
    std::fs::write(&file, &text).unwrap();
    let input = open(&file).unwrap();
    assert!(matches!(input, lever_trace_input::Input::Mapped(_)));
    assert_eq!(input.kind(), Kind::Text);
    let mapped = input.for_each_line(|_, _| {}, |_| {}).unwrap();
    let streamed = from_reader(std::io::Cursor::new(text), "t")
        .unwrap()
        .for_each_line(|_, _| {}, |_| {})
        .unwrap();
    assert_eq!(mapped, streamed);
    assert_eq!((mapped.events, mapped.malformed), (2, 1));

    let gz = dir.path().join("t.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(TEXT.as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    assert_eq!(open(&gz).unwrap().kind(), Kind::GzipText);
    let empty = dir.path().join("e.txt");
    std::fs::write(&empty, b"").unwrap();
    assert!(matches!(
        open(&empty).err().unwrap(),
        InputError::Empty { .. }
    ));
}

/// A trace.dat from a FIFO (or `<(zstdcat x.dat.zst)`) cannot be read at
/// random offsets: it is read into memory, as stdin is, not refused.
#[test]
fn a_dat_from_a_fifo_reads_like_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("trace.dat");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let dat = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/v7z.dat"
    ))
    .unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, dat))
    };
    let input = open(&fifo).unwrap();
    assert_eq!(input.kind(), Kind::Dat { version: 7 });
    let summary = input.for_each_line(|_, _| {}, |_| {}).unwrap();
    assert_eq!(summary.events, 9620);
    writer.join().unwrap().unwrap();
}
