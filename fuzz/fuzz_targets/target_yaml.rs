//! Any bytes given to the target-file parser produce a value or a
//! positioned error, never a panic or a hang.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = lever_targets::parse("fuzz.yaml", text);
    }
});
