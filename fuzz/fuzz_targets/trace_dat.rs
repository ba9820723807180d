//! Any bytes given to the input detection and the trace.dat reader give
//! events (damaged pages counted as malformed) or a typed error, never a
//! panic, a hang or an allocation sized by an untrusted field.
#![no_main]
use lever_trace::LineSource;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // As given, and with the magic in front so most inputs reach the
    // header parser rather than the text path.
    let mut with_magic = b"\x17\x08\x44tracing".to_vec();
    with_magic.extend_from_slice(data);
    for bytes in [data.to_vec(), with_magic] {
        if let Ok(input) = lever_trace_input::from_reader(std::io::Cursor::new(bytes), "fuzz") {
            let _ = input.for_each_line(|_, _| {}, |_| {});
        }
    }
});
