//! Damaged CPU numbers (issue 29): one flipped byte turned a
//! `cpu_frequency` into `cpu_id=655384`, `4294967295` or `100000`, and
//! the analyses then scanned, or allocated for, that many CPUs per event
//! (minutes, or an abort on a 927 GB allocation). A CPU number past the
//! trace's own CPUs is counted as malformed; every analysis ends within a
//! few seconds and reports the trace's CPUs only. The text path caps CPU
//! numbers at 8192, and one `cpu_id=8191` must not slow every wake-up.
#![cfg(target_endian = "little")]

use lever_trace::{LineSource, Text};
use lever_trace_analysis::{analyze_source, Options, Report};
use lever_trace_input::dat::ring::DatReader;
use lever_trace_input::dat::write::{write, DatMeta, DatVersion};
use lever_trace_input::dat::Data;
use std::time::{Duration, Instant};

const PS: usize = 4096;
const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
const COMMON: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

fn formats() -> Vec<(String, Vec<String>)> {
    let waking = format!("name: sched_waking\nID: 373\nformat:\n{COMMON}\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\nprint fmt: \"x\"\n");
    let freq = format!("name: cpu_frequency\nID: 400\nformat:\n{COMMON}\tfield:u32 state;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:u32 cpu_id;\toffset:12;\tsize:4;\tsigned:0;\n\nprint fmt: \"x\"\n");
    vec![("sched".into(), vec![waking]), ("power".into(), vec![freq])]
}

fn waking(waker: i32, pid: i32, irq_flags: u8) -> Vec<u8> {
    let mut p = vec![0u8; 36];
    p[0..2].copy_from_slice(&373u16.to_le_bytes());
    p[2] = irq_flags;
    p[4..8].copy_from_slice(&waker.to_le_bytes());
    p[8..12].copy_from_slice(b"task");
    p[24..28].copy_from_slice(&pid.to_le_bytes());
    p[28..32].copy_from_slice(&120i32.to_le_bytes());
    p
}

fn freq(khz: u32, cpu: u32) -> Vec<u8> {
    let mut p = vec![0u8; 16];
    p[0..2].copy_from_slice(&400u16.to_le_bytes());
    p[8..12].copy_from_slice(&khz.to_le_bytes());
    p[12..16].copy_from_slice(&cpu.to_le_bytes());
    p
}

/// Pages holding `events` (1 µs apart).
fn pages(events: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut body: Vec<u8> = Vec::new();
    let flush = |out: &mut Vec<u8>, body: &mut Vec<u8>| {
        let mut p = vec![0u8; PS];
        p[0..8].copy_from_slice(&1_000_000_000u64.to_le_bytes());
        p[8..16].copy_from_slice(&(body.len() as u64).to_le_bytes());
        p[16..16 + body.len()].copy_from_slice(body);
        out.extend(p);
        body.clear();
    };
    for e in events {
        if 16 + body.len() + 4 + e.len() > PS {
            flush(&mut out, &mut body);
        }
        body.extend(((e.len() as u32 / 4) | (1000 << 5)).to_le_bytes());
        body.extend(e);
    }
    if !body.is_empty() {
        flush(&mut out, &mut body);
    }
    out
}

/// A 2-CPU trace.dat: frequencies for both CPUs, then `wakeups`
/// wake-ups, one frequency event naming `bad_cpu` among them.
fn dat(bad_cpu: u32, wakeups: usize) -> Vec<u8> {
    let mut cpu0 = vec![freq(1_000_000, 0), freq(1_000_000, 1)];
    for i in 0..wakeups {
        if i == wakeups / 2 {
            cpu0.push(freq(2_000_000, bad_cpu));
        }
        cpu0.push(waking(7, 100 + (i % 50) as i32, 0));
    }
    let cpu1 = vec![waking(8, 9, 0x10)];
    let meta = DatMeta {
        header_page: HEADER_PAGE.into(),
        header_event: "# compressed entry header\n".into(),
        systems: formats(),
        cmdlines: "7 task\n8 task\n".into(),
        page_size: PS as u32,
        ..DatMeta::default()
    };
    let (a, b) = (pages(&cpu0), pages(&cpu1));
    let mut file = std::io::Cursor::new(Vec::new());
    write(&mut file, &meta, &mut [&a[..], &b[..]], DatVersion::V6).unwrap();
    file.into_inner()
}

fn every_analysis() -> Options {
    Options {
        wakeups: true,
        locks: true,
        ramp: true,
        ..Options::all()
    }
}

/// Run every analysis on another thread: its report, or a failure after
/// `limit` (a hang must fail the test, not stall it).
fn within<S: LineSource + Send + 'static>(src: S, limit: Duration) -> Report {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(analyze_source(src, &every_analysis(), |_| {}).unwrap());
    });
    let t = Instant::now();
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("no report after {:?}", t.elapsed()))
}

#[test]
fn a_damaged_cpu_number_in_a_dat_is_malformed_not_a_cpu() {
    for bad in [655_384, u32::MAX, 100_000, 8191, 2] {
        let bytes = dat(bad, 20_000);
        let r = within(
            DatReader::new(Data::Mem(bytes.into())).unwrap(),
            Duration::from_secs(10),
        );
        assert_eq!(r.summary.malformed, 1, "cpu_id={bad}");
        let sample = &r.summary.malformed_samples[0];
        assert!(
            format!("{sample:?}").contains("CPU number"),
            "cpu_id={bad}: {sample:?}"
        );
        let freq: Vec<u32> = r.freq.unwrap().iter().map(|c| c.cpu).collect();
        assert_eq!(freq, [0, 1], "cpu_id={bad}");
        assert!(r.sched.unwrap().cpus.len() <= 2, "cpu_id={bad}");
    }
}

/// `lever trace bench` aborted on `cpu_id=4294967295` (a 927 GB
/// allocation): its passes, with and without parsing threads, end too.
#[test]
fn bench_ends_on_a_damaged_cpu_number() {
    for bad in [u32::MAX, 655_384] {
        let bytes = dat(bad, 20_000);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let open = || Ok(DatReader::new(Data::Mem(bytes.clone().into())).unwrap());
            let _ = tx.send(lever_trace_analysis::bench::bench(open, 2).map(|b| b.events));
        });
        let events = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("cpu_id={bad}: no bench result after 20 s"));
        // Two frequencies and 20,000 wake-ups on CPU 0, one on CPU 1; the
        // damaged one is malformed.
        assert_eq!(events.unwrap(), 20_003, "cpu_id={bad}");
    }
}

#[test]
fn a_softirq_waker_in_a_dat_is_the_softirq() {
    let r = within(
        DatReader::new(Data::Mem(dat(0, 10).into())).unwrap(),
        Duration::from_secs(10),
    );
    let edges = serde_json::to_value(r.wakeups.unwrap()).unwrap()["edges"].clone();
    let of_9 = edges
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["wakee_tid"] == 9)
        .cloned()
        .unwrap();
    assert_eq!(of_9["waker"], "softirq", "{of_9}");
}

/// One `cpu_id=8191` (below the text parser's cap) among 100,000
/// wake-ups: every wake-up used to check all 8,192 CPUs for the wakee.
#[test]
fn one_high_cpu_number_in_text_does_not_slow_every_wake_up() {
    let mut text = String::new();
    let line = |t: u64, body: &str| {
        format!(
            "          task-7     [000] d..2.  {}.{:06}: {body}\n",
            t / 1_000_000,
            t % 1_000_000
        )
    };
    text += &line(1_000_000, "cpu_frequency: state=1000000 cpu_id=8191");
    for i in 0..100_000u64 {
        text += &line(
            1_000_001 + i,
            &format!(
                "sched_waking: comm=t pid={} prio=120 target_cpu=000",
                100 + i % 50
            ),
        );
    }
    let t = Instant::now();
    let r = within(
        Text(std::io::Cursor::new(text.into_bytes())),
        Duration::from_secs(30),
    );
    assert_eq!(r.summary.events, 100_001);
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "{:?} for 100,000 wake-ups",
        t.elapsed()
    );
}

/// The ring buffer's per-CPU overrun saved with a capture: a trace.dat's
/// CPUSTAT options (as trace-cmd writes them) and the text's
/// `# lever: cpu N overrun M` lines are counted as overwritten events.
#[test]
fn overwritten_events_are_read_from_cpustat_and_text_headers() {
    let stats = |cpu: u32, overrun: u64| {
        format!("CPU: {cpu}\nentries: 10\noverrun: {overrun}\ncommit overrun: 0\nbytes: 0\n")
    };
    for version in [DatVersion::V6, DatVersion::V7 { zstd: false }] {
        let meta = DatMeta {
            header_page: HEADER_PAGE.into(),
            header_event: "# compressed entry header\n".into(),
            systems: formats(),
            page_size: PS as u32,
            cpu_stats: vec![stats(0, 43_000), stats(1, 640)],
            ..DatMeta::default()
        };
        let a = pages(&[waking(7, 9, 0)]);
        let mut file = std::io::Cursor::new(Vec::new());
        write(&mut file, &meta, &mut [&a[..], &[][..]], version).unwrap();
        let r = DatReader::new(Data::Mem(file.into_inner().into())).unwrap();
        assert_eq!(r.info().overruns, [(0, 43_000), (1, 640)], "{version:?}");
        let sum = r.for_each_line(|_, _| {}, |_| {}).unwrap();
        assert_eq!(sum.overwritten_events, 43_640, "{version:?}");
        assert_eq!(sum.cpus_with_loss, [0, 1], "{version:?}");
    }
    let text = "# lever: cpu 0 overrun 43000\n# lever: cpu 1 overrun 640\n# lever: cpu 2 overrun 0\n# tracer: nop\n#\n  <idle>-0 [000] d..2. 1.000050: sched_waking: comm=a pid=7 prio=120 target_cpu=000\n";
    let sum = Text(text.as_bytes())
        .for_each_line(|_, _| {}, |_| {})
        .unwrap();
    assert_eq!((sum.overwritten_events, sum.events), (43_640, 1));
    assert_eq!(sum.cpus_with_loss, [0, 1]);
}

/// The kernel's text says its CPU count (`#P:2`): a `cpu_id` past it is
/// malformed, as in a trace.dat; without the header the text's own cap
/// (8192) is all there is to go by.
#[test]
fn a_cpu_number_past_the_text_s_cpu_count_is_malformed() {
    let body = "  <idle>-0 [000] d..2. 1.000000: cpu_frequency: state=1000000 cpu_id=0\n\
                \x20 <idle>-0 [001] d..2. 1.000100: cpu_frequency: state=1000000 cpu_id=1\n\
                \x20 <idle>-0 [000] d..2. 1.000200: cpu_frequency: state=2000000 cpu_id=5\n";
    let with_count =
        format!("# tracer: nop\n#\n# entries-in-buffer/entries-written: 3/3   #P:2\n#\n{body}");
    let r = within(
        Text(std::io::Cursor::new(with_count.into_bytes())),
        Duration::from_secs(10),
    );
    assert_eq!((r.summary.malformed, r.summary.events), (1, 2));
    assert!(r.summary.malformed_samples[0].reason.contains("CPU number"));
    let freq: Vec<u32> = r.freq.unwrap().iter().map(|c| c.cpu).collect();
    assert_eq!(freq, [0, 1]);
    let r = within(
        Text(std::io::Cursor::new(body.as_bytes().to_vec())),
        Duration::from_secs(10),
    );
    assert_eq!((r.summary.malformed, r.summary.events), (0, 3));
}
