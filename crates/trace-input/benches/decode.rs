//! trace.dat decoding beside text parsing of the same events (criterion
//! reports events/s): the real capture in tests/fixtures by default, or
//! `LEVER_BENCH_DAT=x.dat LEVER_BENCH_TEXT=x.txt` for a bigger pair (the
//! figures in docs/trace.md).
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use lever_trace::{Line, LineSource, Text};
use lever_trace_input::dat::{ring::DatReader, Data};
use std::io::Read;

fn fixture(env: &str, name: &str) -> Vec<u8> {
    let path = std::env::var(env)
        .unwrap_or_else(|_| format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR")));
    let raw = std::fs::read(&path).unwrap();
    if raw.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        let mut out = Vec::new();
        zstd::stream::read::Decoder::new(&raw[..])
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        return out;
    }
    raw
}

fn count(src: impl LineSource) -> u64 {
    let mut n = 0u64;
    src.for_each_line(|_, l| n += matches!(l, Line::Event(_)) as u64, |_| {})
        .unwrap();
    n
}

fn decode(c: &mut Criterion) {
    let dat: std::sync::Arc<[u8]> = fixture("LEVER_BENCH_DAT", "v6.dat.zst").into();
    let text = fixture("LEVER_BENCH_TEXT", "v7z.txt.zst");
    let events = count(DatReader::new(Data::Mem(dat.clone())).unwrap());
    assert_eq!(events, count(Text(&text[..])), "the same events both ways");
    let mut g = c.benchmark_group("same_events");
    g.throughput(Throughput::Elements(events));
    // The metadata (event formats: 2 MB of text in a trace-cmd file) is
    // read once per file; timed apart from the events.
    g.bench_function("dat_decode", |b| {
        b.iter_batched(
            || DatReader::new(Data::Mem(dat.clone())).unwrap(),
            count,
            BatchSize::PerIteration,
        )
    });
    g.bench_function("dat_metadata", |b| {
        b.iter(|| DatReader::new(Data::Mem(dat.clone())).unwrap())
    });
    g.bench_function("text_parse", |b| b.iter(|| count(Text(&text[..]))));
    g.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
