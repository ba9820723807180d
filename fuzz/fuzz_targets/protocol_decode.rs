//! Any bytes a client or daemon sends decode to frames or a precise error,
//! never a panic, and a decoded frame re-encodes to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut at = 0;
    while at < data.len() {
        match lever_protocol::decode_request(&data[at..]) {
            Ok(Some((req, used))) => {
                assert!(used > 0 && at + used <= data.len());
                assert_eq!(req.encode(), data[at..at + used]);
                at += used;
            }
            _ => break,
        }
    }
    if let Ok(Some((_, used))) = lever_protocol::decode_reply(data) {
        assert!(used <= data.len());
    }
});
