//! Any bytes as a CTF trace (metadata and streams) give events or a
//! typed error naming the file and byte, never a panic or a hang.
//!
//! Input framing: a little-endian u32 length, that many bytes of
//! metadata (TSDL text or LTTng's packetized form), then streams, each a
//! u32 length and its bytes (the rest is one last stream).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

fn take<'a>(data: &mut &'a [u8]) -> Option<&'a [u8]> {
    let n = u32::from_le_bytes(data.get(..4)?.try_into().ok()?) as usize;
    let rest = &data[4..];
    let n = n.min(rest.len());
    let (head, tail) = rest.split_at(n);
    *data = tail;
    Some(head)
}

fuzz_target!(|data: &[u8]| {
    let mut d = data;
    let Some(metadata) = take(&mut d) else { return };
    let mut streams = Vec::new();
    while !d.is_empty() && streams.len() < 8 {
        let s = take(&mut d).unwrap_or_else(|| std::mem::take(&mut d));
        streams.push((PathBuf::from(format!("stream_{}", streams.len())), s.to_vec()));
    }
    if let Ok(trace) = lever_ctf::Trace::from_bytes(metadata, streams) {
        let mut events = trace.events();
        while let Ok(Some(e)) = events.next() {
            let _ = (e.name(), e.timestamp_ns(), e.payload().members());
        }
    }
});
