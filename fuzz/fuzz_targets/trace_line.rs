//! Any bytes given to the ftrace text reader and line parser produce
//! lines (events, headers or counted malformed lines), never a panic; the
//! fast paths (fixed columns, sched payloads read from their ends) give
//! exactly what the general parser gives (also for lines parsed one
//! after another into the same slot), and the in-memory reader on two
//! threads feeds what the streaming one does.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut streamed = Vec::new();
    let s1 = lever_trace::for_each_line(data, |n, l| streamed.push(format!("{n} {l:?}")), |_| {});
    let mut mapped = Vec::new();
    let s2 = lever_trace::reader::for_each_line_in_blocks(
        data,
        2,
        64,
        |n, l| mapped.push(format!("{n} {l:?}")),
        |_| {},
    );
    assert_eq!(streamed, mapped);
    assert_eq!(s1.ok(), Some(s2));
    if let Ok(text) = std::str::from_utf8(data) {
        // The reader parses each line into the slot the line before left:
        // every line must still be what a fresh general parse gives.
        let mut pieces: Vec<&str> = text.split('\n').collect();
        if text.is_empty() || text.ends_with('\n') {
            pieces.pop();
        }
        let fresh: Vec<String> = pieces
            .iter()
            .enumerate()
            .map(|(i, l)| format!("{} {:?}", i + 1, lever_trace::parse_line_general(l)))
            .collect();
        assert_eq!(streamed, fresh);
        for line in text.lines() {
            let fast = lever_trace::parse_line(line);
            assert_eq!(fast, lever_trace::parse_line_general(line));
            if let lever_trace::Line::Event(e) = fast {
                assert_eq!(
                    lever_trace::EventKind::try_parse(e.name, e.body),
                    lever_trace::EventKind::try_parse_general(e.name, e.body)
                );
            }
        }
    }
});
