//! Any bytes given to the input detection and the trace.dat reader give
//! events (damaged pages counted as malformed) or a typed error, never a
//! panic, a hang or an allocation sized by an untrusted field; and the
//! reader with its decompression thread gives exactly what it gives on
//! one thread (the same lines, the same summary or the same error).
#![no_main]
use lever_trace::LineSource;
use libfuzzer_sys::fuzz_target;

fn walk(bytes: &[u8], threads: usize) -> Option<(Vec<String>, Result<String, String>)> {
    let input = lever_trace_input::from_reader(std::io::Cursor::new(bytes.to_vec()), "fuzz").ok()?;
    let mut lines = Vec::new();
    let r = input.for_each_line_threaded(threads, |n, l| lines.push(format!("{n} {l:?}")), |_| {});
    Some((lines, r.map(|s| format!("{s:?}")).map_err(|e| e.to_string())))
}

fuzz_target!(|data: &[u8]| {
    // As given, and with the magic in front so most inputs reach the
    // header parser rather than the text path.
    let mut with_magic = b"\x17\x08\x44tracing".to_vec();
    with_magic.extend_from_slice(data);
    for bytes in [data, &with_magic[..]] {
        assert_eq!(walk(bytes, 1), walk(bytes, 2));
    }
});
