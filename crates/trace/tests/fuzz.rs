//! Arbitrary lines never panic the parser (the same property as the
//! cargo-fuzz target `fuzz/fuzz_targets/trace_line.rs`, run in CI).

use lever_trace::{for_each_line, parse_line};
use proptest::prelude::*;

const PIECES: &[&str] = &[
    " ",
    "  ",
    "-",
    "[",
    "]",
    "(",
    ")",
    "[000]",
    "(  12)",
    "d..2.",
    "....",
    ": ",
    ":",
    ".",
    "0",
    "12",
    "4294967295",
    "99999999999999999999999",
    "sched_switch: ",
    "prev_comm=",
    " prev_pid=",
    " ==> next_comm=",
    " next_pid=",
    "prev_state=R+",
    "comm=",
    " pid=",
    "target_cpu=",
    "cpu_idle: state=",
    " cpu_id=",
    "tracing_mark_write: ",
    "B|",
    "E|",
    "C|",
    "|",
    "B ",
    "E ",
    "S ",
    "0)",
    " | ",
    "+ 10.5 us",
    "! ",
    "$ ",
    "us",
    "us+:",
    "=>",
    " => ",
    "}",
    "{",
    "() {",
    "();",
    "/*",
    "*/",
    "==========>",
    "<==========",
    "#",
    "# tracer: ",
    "# latency: ",
    "CPU#",
    "CPU:",
    "[LOST ",
    " EVENTS]",
    "##### CPU ",
    "<...>",
    "<-",
    "é",
    "\u{0}",
    "\r",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]
    #[test]
    fn structured_lines_never_panic(parts in proptest::collection::vec(0..PIECES.len(), 0..30)) {
        let line: String = parts.iter().map(|&i| PIECES[i]).collect();
        let _ = parse_line(&line);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let s = for_each_line(&bytes[..], |_, _| {}, |_| {}).unwrap();
        prop_assert!(s.lines <= bytes.len() as u64 + 1);
    }

    #[test]
    fn arbitrary_strings_never_panic(line in ".{0,200}") {
        let _ = parse_line(&line);
    }
}
