//! The originals journal reader must never panic, whatever the state
//! directory holds after a crash or a disk error, and whatever it accepts
//! must name nodes and originals that survive a write and re-read.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(parsed) = lever_daemon::journal::parse(&text) {
        // No node is pending twice.
        let mut nodes: Vec<&String> = parsed.pending.iter().map(|(n, _)| n).collect();
        nodes.sort();
        let before = nodes.len();
        nodes.dedup();
        assert_eq!(before, nodes.len());
    }
});
