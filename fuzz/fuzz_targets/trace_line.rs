//! Any bytes given to the ftrace text reader and line parser produce
//! lines (events, headers or counted malformed lines), never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = lever_trace::for_each_line(data, |_, _| {}, |_| {});
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = lever_trace::parse_line(text);
    }
});
