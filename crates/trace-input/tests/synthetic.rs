//! Ring-buffer corners the real captures may not hold, on pages built by
//! hand and written with `dat::write` (so the writer is checked too):
//! time extends, absolute time stamps, a discarded event (padding with a
//! length), a length-word event, the end-of-page padding, and a page
//! whose events were lost with the count stored after its data. Pages
//! are built little-endian, as the writer's host is.
#![cfg(target_endian = "little")]

use lever_trace::{EventKind, Line, LineSource};
use lever_trace_input::dat::ring::DatReader;
use lever_trace_input::dat::write::{write, write_v6, DatMeta, DatVersion};
use lever_trace_input::dat::Data;

const PS: usize = 4096;
const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
const SWITCH: &str = "name: sched_switch\nID: 372\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\nprint fmt: \"prev_comm=%s\"\n";
const OTHER: &str = "name: sched_stat_runtime\nID: 300\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:u64 runtime;\toffset:32;\tsize:8;\tsigned:0;\n\nprint fmt: \"x\"\n";

fn switch(prev: i32, next: i32, state: i64) -> Vec<u8> {
    switch_named(prev, b"prev", next, b"next", state)
}

/// A sched_switch payload with the given comm fields (up to 16 bytes).
fn switch_named(prev: i32, prev_comm: &[u8], next: i32, next_comm: &[u8], state: i64) -> Vec<u8> {
    let mut p = vec![0u8; 64];
    p[0..2].copy_from_slice(&372u16.to_le_bytes());
    p[4..8].copy_from_slice(&prev.to_le_bytes());
    p[8..8 + prev_comm.len()].copy_from_slice(prev_comm);
    p[24..28].copy_from_slice(&prev.to_le_bytes());
    p[28..32].copy_from_slice(&120i32.to_le_bytes());
    p[32..40].copy_from_slice(&state.to_le_bytes());
    p[40..40 + next_comm.len()].copy_from_slice(next_comm);
    p[56..60].copy_from_slice(&next.to_le_bytes());
    p[60..64].copy_from_slice(&120i32.to_le_bytes());
    p
}

fn word(type_len: u32, delta: u32) -> [u8; 4] {
    (type_len | delta << 5).to_le_bytes()
}

fn page(ts: u64, flags: u64, body: &[u8], after: &[u8]) -> Vec<u8> {
    let mut p = vec![0u8; PS];
    p[0..8].copy_from_slice(&ts.to_le_bytes());
    p[8..16].copy_from_slice(&(body.len() as u64 | flags).to_le_bytes());
    p[16..16 + body.len()].copy_from_slice(body);
    p[16 + body.len()..16 + body.len() + after.len()].copy_from_slice(after);
    p
}

#[test]
fn time_extends_stamps_padding_and_lost_events() {
    let mut b = Vec::new();
    b.extend(word(16, 10)); // data, 64 bytes, +10
    b.extend(switch(1, 2, 1));
    b.extend(word(30, 5)); // time extend: + (1 << 27) + 5
    b.extend(1u32.to_le_bytes());
    b.extend(word(16, 0));
    b.extend(switch(2, 3, 0x100));
    b.extend(word(29, 7)); // a discarded event: 8 bytes, no time
    b.extend(8u32.to_le_bytes());
    b.extend([0xee; 4]);
    let abs: u64 = 5_000_000_000;
    b.extend(word(31, (abs & ((1 << 27) - 1)) as u32)); // absolute stamp
    b.extend(((abs >> 27) as u32).to_le_bytes());
    let mut other = vec![0u8; 40];
    other[0..2].copy_from_slice(&300u16.to_le_bytes());
    other[4..8].copy_from_slice(&9i32.to_le_bytes());
    other[8..12].copy_from_slice(b"wrk\0");
    other[24..28].copy_from_slice(&9i32.to_le_bytes());
    other[32..40].copy_from_slice(&123_456u64.to_le_bytes());
    b.extend(word(0, 3)); // length word (counts itself)
    b.extend((4 + other.len() as u32).to_le_bytes());
    b.extend(&other);
    let p1 = page(1_000_000, 0, &b, &[]);
    // Second page: 7 events lost before it, count stored after the data.
    let mut b2 = Vec::new();
    b2.extend(word(16, 1));
    b2.extend(switch(3, 0, 2));
    let p2 = page(
        6_000_000_000,
        (1 << 31) | (1 << 30),
        &b2,
        &7u64.to_le_bytes(),
    );

    let meta = DatMeta {
        cmdlines: "1 prev\n9 wrk\n".into(),
        ..sched_meta()
    };
    let mut file = std::io::Cursor::new(Vec::new());
    let cpu0 = [p1, p2].concat();
    let w = write_v6(&mut file, &meta, &mut [&cpu0[..], &[][..]]).unwrap();
    assert_eq!(w.cpu_bytes, vec![2 * PS as u64, 0]);

    let reader = DatReader::new(Data::Mem(file.into_inner().into())).unwrap();
    assert_eq!(reader.info().version, 6);
    let mut got = Vec::new();
    let sum = reader
        .for_each_line(
            |_, l| match l {
                Line::Event(e) => {
                    let what = match &e.kind {
                        EventKind::SchedSwitch(s) => {
                            format!("{}>{} {}", s.prev_pid, s.next_pid, s.prev_state)
                        }
                        EventKind::Other => e.body.to_string(),
                        k => format!("{k:?}"),
                    };
                    got.push(format!("{} {} {} {}", e.ts_ns, e.comm, e.name, what));
                }
                Line::Lost { cpu, events } => got.push(format!("lost cpu{cpu} {events:?}")),
                _ => {}
            },
            |_| {},
        )
        .unwrap();
    let t2 = 1_000_010 + (1u64 << 27) + 5;
    assert_eq!(
        got,
        [
            "1000010 prev sched_switch 1>2 S".to_string(),
            format!("{t2} <...> sched_switch 2>3 R+"),
            // Typed from its generic `field=value` body, as the text parser does.
            "5000000003 wrk sched_stat_runtime SchedStatRuntime { comm: \"wrk\", pid: 9, runtime_ns: 123456 }".into(),
            "lost cpu0 Some(7)".into(),
            "6000000001 <...> sched_switch 3>0 D".into(),
        ]
    );
    assert_eq!((sum.events, sum.malformed, sum.lost_events), (4, 0, 7));
}

#[test]
fn a_commit_past_the_page_is_counted_and_skipped() {
    let meta = DatMeta {
        header_page: HEADER_PAGE.into(),
        systems: vec![("sched".into(), vec![SWITCH.into()])],
        page_size: PS as u32,
        ..DatMeta::default()
    };
    let mut bad = page(1, 0, &[], &[]);
    bad[8..16].copy_from_slice(&(PS as u64 * 2).to_le_bytes());
    let mut body = Vec::new();
    body.extend(word(16, 1));
    body.extend(switch(1, 2, 1));
    let good = page(100, 0, &body, &[]);
    let mut file = std::io::Cursor::new(Vec::new());
    write_v6(&mut file, &meta, &mut [&[bad, good].concat()[..]]).unwrap();
    let reader = DatReader::new(Data::Mem(file.into_inner().into())).unwrap();
    let sum = reader.for_each_line(|_, _| {}, |_| {}).unwrap();
    assert_eq!((sum.events, sum.malformed), (1, 1));
    assert_eq!(
        sum.malformed_samples[0].reason,
        "page commit larger than the page"
    );
}

/// The same pages written as v6, uncompressed v7 and zstd v7 read back
/// event-equal; 25 pages on CPU 0 make three 10-page chunks, CPU 1 has
/// none, CPU 2 one page.
#[test]
fn v7_with_and_without_zstd_reads_back_like_v6() {
    let meta = DatMeta {
        header_page: HEADER_PAGE.into(),
        header_event: "# compressed entry header\n".into(),
        systems: vec![("sched".into(), vec![SWITCH.into()])],
        cmdlines: "1 prev\n".into(),
        page_size: PS as u32,
        trace_clock: "[local] global counter\n".into(),
        ..DatMeta::default()
    };
    let pages = |cpu: u64, n: u64| -> Vec<u8> {
        (0..n)
            .flat_map(|i| {
                let mut b = Vec::new();
                b.extend(word(16, 1));
                b.extend(switch(1 + i as i32, 2, 1));
                page(1_000 * (i + 1) + cpu, 0, &b, &[])
            })
            .collect()
    };
    let (cpu0, cpu2) = (pages(0, 25), pages(2, 1));
    let read = |version| {
        let mut file = std::io::Cursor::new(Vec::new());
        let w = write(
            &mut file,
            &meta,
            &mut [&cpu0[..], &[][..], &cpu2[..]],
            version,
        )
        .unwrap();
        let bytes = file.into_inner();
        assert_eq!(w.bytes, bytes.len() as u64);
        let reader = DatReader::new(Data::Mem(bytes.into())).unwrap();
        let v = reader.info().version;
        let mut got = Vec::new();
        reader
            .for_each_line(
                |_, l| {
                    if let Line::Event(e) = l {
                        got.push(format!("{} {} {} {:?}", e.cpu, e.ts_ns, e.comm, e.kind));
                    }
                },
                |_| {},
            )
            .unwrap();
        (v, w, got)
    };
    let (v6, w6, six) = read(DatVersion::V6);
    let (v7, w7, seven) = read(DatVersion::V7 { zstd: false });
    let (v7z, w7z, zst) = read(DatVersion::V7 { zstd: true });
    assert_eq!((v6, v7, v7z), (6, 7, 7));
    assert_eq!(six.len(), 26);
    assert_eq!(seven, six);
    assert_eq!(zst, six);
    assert_eq!(w7.cpu_bytes, w6.cpu_bytes);
    // Compressed: the chunks, without their count (as trace-cmd records).
    assert_eq!(w7z.cpu_bytes[1], 0);
    assert!(
        w7z.cpu_bytes[0] < w6.cpu_bytes[0] / 4,
        "{:?}",
        w7z.cpu_bytes
    );
    assert!(w7z.bytes < w7.bytes);
}

/// Pages of `(delta, payload)` events, as many as fit in each page.
fn pages_of(ts0: u64, events: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut body = Vec::new();
    for (delta, p) in events {
        if 16 + body.len() + 4 + p.len() > PS {
            out.extend(page(ts0, 0, &body, &[]));
            body.clear();
        }
        body.extend(word(p.len() as u32 / 4, *delta));
        body.extend(p);
    }
    if !body.is_empty() {
        out.extend(page(ts0, 0, &body, &[]));
    }
    out
}

fn sched_meta() -> DatMeta {
    DatMeta {
        header_page: HEADER_PAGE.into(),
        header_event: "# compressed entry header\n".into(),
        systems: vec![("sched".into(), vec![SWITCH.into(), OTHER.into()])],
        cmdlines: "1 prev\n".into(),
        page_size: PS as u32,
        ..DatMeta::default()
    }
}

fn written(cpus: &[Vec<u8>], version: DatVersion) -> Vec<u8> {
    let mut file = std::io::Cursor::new(Vec::new());
    let mut readers: Vec<&[u8]> = cpus.iter().map(|c| &c[..]).collect();
    write(&mut file, &sched_meta(), &mut readers, version).unwrap();
    file.into_inner()
}

/// Every line (numbered, as Debug), the summary or the error, and the
/// progress calls of one walk with `threads`.
fn walk(bytes: &[u8], threads: usize) -> (Vec<String>, Result<String, String>, Vec<u64>) {
    let mut lines = Vec::new();
    let mut progress = Vec::new();
    let res = DatReader::new(Data::Mem(bytes.to_vec().into()))
        .map_err(|e| e.to_string())
        .and_then(|r| {
            r.for_each_line_threaded(
                threads,
                |n, l| lines.push(format!("{n} {l:?}")),
                |b| progress.push(b),
            )
            .map(|s| format!("{s:?}"))
            .map_err(|e| e.to_string())
        });
    (lines, res, progress)
}

/// The comm fields of sched events come from a per-pid cache: one pid
/// whose comm changes (an exec) and back, a comm that is not UTF-8 (its
/// bad bytes become `?`, as the text reader makes them), bytes after the
/// NUL that differ (the same comm), and a data_loc comm at the very end
/// of an event (sched_stat_runtime on newer kernels), all read right.
#[test]
fn comm_fields_of_one_pid_follow_its_changes() {
    const RUNTIME: &str = "name: sched_stat_runtime\nID: 300\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\tfield:__data_loc char[] comm;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n\tfield:u64 runtime;\toffset:16;\tsize:8;\tsigned:0;\n\nprint fmt: \"x\"\n";
    let runtime = |pid: i32, comm: &[u8]| {
        let mut p = vec![0u8; 24];
        p[0..2].copy_from_slice(&300u16.to_le_bytes());
        p[4..8].copy_from_slice(&pid.to_le_bytes());
        p[8..12].copy_from_slice(&(24u32 | (comm.len() as u32) << 16).to_le_bytes());
        p[12..16].copy_from_slice(&pid.to_le_bytes());
        p[16..24].copy_from_slice(&5u64.to_le_bytes());
        p.extend(comm);
        p.resize(p.len().div_ceil(4) * 4, 0);
        p
    };
    let events = [
        switch_named(7, b"sh", 8, b"worker", 1),
        switch_named(8, b"worker", 7, b"sh", 1),
        switch_named(7, b"make", 8, b"worker", 1), // pid 7 exec'd
        switch_named(8, b"worker", 7, b"make", 1),
        switch_named(7, b"sh", 8, b"w\xffrk\xe2\x82", 1), // back; not UTF-8
        switch_named(8, b"w\xffrk\xe2\x82", 7, b"sh\0junk", 1), // after the NUL
        switch_named(7, b"sh\0other", 8 + 256, b"x", 1),  // another pid, another comm
        runtime(8, b"worker\0"),
        runtime(8, b"cc12"), // no NUL, ends the event: the next event follows
        runtime(8, b"worker\0"),
        runtime(7, b"a-very-long-comm-name"), // longer than any kernel comm
    ]
    .map(|p| (1, p));
    let cpu0 = pages_of(100, &events);
    let mut meta = sched_meta();
    meta.systems[0].1[1] = RUNTIME.into();
    let mut file = std::io::Cursor::new(Vec::new());
    write(
        &mut file,
        &meta,
        &mut [&cpu0[..]],
        DatVersion::V7 { zstd: true },
    )
    .unwrap();
    let reader = DatReader::new(Data::Mem(file.into_inner().into())).unwrap();
    let mut got = Vec::new();
    reader
        .for_each_line(
            |_, l| match l {
                Line::Event(e) => match &e.kind {
                    EventKind::SchedSwitch(s) => got.push(format!(
                        "{}:{} {}:{}",
                        s.prev_pid, s.prev_comm, s.next_pid, s.next_comm
                    )),
                    EventKind::SchedStatRuntime { comm, pid, .. } => {
                        got.push(format!("{pid}:{comm}"))
                    }
                    k => got.push(format!("{k:?}")),
                },
                other => got.push(format!("{other:?}")),
            },
            |_| {},
        )
        .unwrap();
    assert_eq!(
        got,
        [
            "7:sh 8:worker",
            "8:worker 7:sh",
            "7:make 8:worker",
            "8:worker 7:make",
            "7:sh 8:w?rk??",
            "8:w?rk?? 7:sh",
            "7:sh 264:x",
            "8:worker",
            "8:cc12",
            "8:worker",
            "7:a-very-long-comm-name",
        ]
    );
}

/// Ten CPUs (past the linear merge's eight: the heap) with every event
/// at one of three times: ties go to the lower CPU, whatever order the
/// CPUs are in the file; the same with three CPUs (the linear merge).
#[test]
fn ties_across_many_cpus_go_to_the_lower_cpu() {
    for ncpu in [3usize, 10] {
        let cpus: Vec<Vec<u8>> = (0..ncpu)
            .map(|c| {
                let ev: Vec<(u32, Vec<u8>)> = (0..3)
                    .map(|k| (u32::from(k > 0), switch(c as i32 + 1, k, 1)))
                    .collect();
                pages_of(10, &ev)
            })
            .collect();
        let bytes = written(&cpus, DatVersion::V7 { zstd: true });
        let (lines, res, _) = walk(&bytes, 1);
        res.unwrap();
        let order: Vec<(u64, u32)> = lines
            .iter()
            .map(|l| {
                let ts = l
                    .split("ts_ns: ")
                    .nth(1)
                    .unwrap()
                    .split(',')
                    .next()
                    .unwrap();
                let cpu = l.split("cpu: ").nth(1).unwrap().split(',').next().unwrap();
                (ts.parse().unwrap(), cpu.parse().unwrap())
            })
            .collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order.len(), 3 * ncpu);
        assert_eq!(order, sorted, "{ncpu} CPUs");
        assert_eq!(walk(&bytes, 4), walk(&bytes, 1), "{ncpu} CPUs, threaded");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Random files of 1 to 12 CPUs, up to 40 pages each (several 10-page
    /// zstd chunks), timestamps with ties across CPUs: the worker thread
    /// gives every line, the summary and the progress calls of the
    /// one-thread path; so do the v6 and uncompressed v7 copies.
    #[test]
    fn decompression_ahead_gives_what_one_thread_gives(
        cpus in proptest::collection::vec(
            (0u64..4, proptest::collection::vec((0u32..3, 0i32..6, 0i32..6), 0..2000)),
            1..13,
        ),
    ) {
        let comms: [&[u8]; 6] = [b"a", b"bb", b"c\xff", b"sh", b"worker", b"x\0y"];
        let data: Vec<Vec<u8>> = cpus
            .iter()
            .map(|(ts0, ev)| {
                let ev: Vec<(u32, Vec<u8>)> = ev
                    .iter()
                    .map(|&(d, a, b)| (d, switch_named(a, comms[a as usize], b, comms[b as usize], 1)))
                    .collect();
                pages_of(*ts0, &ev)
            })
            .collect();
        let z = written(&data, DatVersion::V7 { zstd: true });
        let one = walk(&z, 1);
        proptest::prop_assert!(one.1.is_ok(), "{:?}", one.1);
        proptest::prop_assert_eq!(&walk(&z, 2), &one);
        for v in [DatVersion::V6, DatVersion::V7 { zstd: false }] {
            let (lines, res, _) = walk(&written(&data, v), 4);
            proptest::prop_assert_eq!(&lines, &one.0);
            proptest::prop_assert!(res.is_ok());
        }
    }
}
