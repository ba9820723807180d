//! `lever latency` and `lever rt check` end to end.
//!
//! Tests that measure need root (SCHED_FIFO, mlockall, cpu_dma_latency):
//! without it they print why they skip, and under CI=true (where `.ci/run`
//! runs as root) a skip is a failure.
mod common;
use common::{lever, ok};

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// True when the test may run; else prints why not (and fails under CI).
fn need_root(test: &str) -> bool {
    if is_root() {
        return true;
    }
    let why =
        format!("{test}: skipped: needs root for SCHED_FIFO, mlockall and /dev/cpu_dma_latency");
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{why} (CI=true)"
    );
    eprintln!("{why}");
    false
}

fn online() -> Vec<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    lever_kernel::parse_cpu_list(text.trim()).unwrap()
}

/// Tests that hold /dev/cpu_dma_latency (`-m`) or compare its value run
/// one at a time: one test's `-m` is another's "changed". Emulated
/// (scripts/cross-test.sh) the runs are long enough to overlap.
fn dma_latency_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// How long a started `lever latency` is given before its Ctrl-C: 700 ms,
/// or 7 s under qemu-user (LEVER_UNDER_QEMU, scripts/cross-test.sh), where
/// the emulated binary needs longer to install its handler and start.
fn settle() -> std::time::Duration {
    if std::env::var_os("LEVER_UNDER_QEMU").is_some() {
        std::time::Duration::from_secs(7)
    } else {
        std::time::Duration::from_millis(700)
    }
}

/// The PM QoS target as the kernel reports it (native-endian s32).
fn dma_latency() -> Option<i32> {
    let b = std::fs::read("/dev/cpu_dma_latency").ok()?;
    Some(i32::from_ne_bytes(b.get(..4)?.try_into().ok()?))
}

/// Run `lever ARGS`, expect exit status `code` and `want` in stderr.
fn refused(args: &[&str], code: i32, want: &str) {
    let out = lever(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: {err}");
}

fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(args)).expect("JSON on stdout")
}

/// A scratch directory and the path `NAME` in it (a `--trace-out` file);
/// the directory lives as long as the returned guard.
fn scratch(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    (dir, path)
}

/// `lever ARGS --json --trace-out TRACE`, its report.
fn json_traced(args: &[&str], trace: &std::path::Path) -> serde_json::Value {
    let mut all = args.to_vec();
    all.extend(["--json", "--trace-out", trace.to_str().unwrap()]);
    json(&all)
}

/// `lever ARGS [--trace-out TRACE]` started in the background, its
/// output piped for `wait_with_output`.
fn start(args: &[&str], trace: Option<&std::path::Path>) -> std::process::Child {
    let mut cmd = std::process::Command::new(common::LEVER);
    cmd.args(args);
    if let Some(trace) = trace {
        cmd.arg("--trace-out").arg(trace);
    }
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Ctrl-C: SIGINT to a started `lever`, then its report (it must succeed).
fn interrupt(child: std::process::Child) -> serde_json::Value {
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn seed_command_lines_run_on_this_vm_with_its_cpus() {
    let _dma = dma_latency_lock();
    if !need_root("seed_command_lines_run_on_this_vm_with_its_cpus") {
        return;
    }
    let before = dma_latency();
    let last = online().last().copied().unwrap().to_string();
    // Seed 001: `cyclictest -a 7 -t 1 -m -l 100000000 -i 1000 -p 99 -h 100`,
    // with this VM's last CPU for 7 and a shorter -l.
    let r = json(&[
        "latency", "-a", &last, "-t", "1", "-m", "-l", "300", "-i", "1000", "-p", "99", "-h",
        "100", "--json",
    ]);
    let t = &r["threads"][0];
    assert_eq!(t["cycles"], 300);
    assert_eq!(t["priority"], 99);
    assert_eq!(t["cpu"].as_u64().unwrap().to_string(), last);
    assert_eq!(r["policy"], "fifo");
    assert_eq!(r["ended"]["reason"], "loops");
    assert_eq!(t["histogram"]["buckets"].as_array().unwrap().len(), 100);
    // Seed 000: `-a 1-3 -t 3 -m -l … -i 1000 -p 90 -h 800 --mainaffinity 4
    // --spike 100`, with the VM's CPUs (threads round-robin over them).
    // -h: stdout is cyclictest's (-q: the histogram only), Lever's report
    // with the status lines is on stderr.
    let run = lever(&words(
        "latency -a 0-1 -t 3 -m -l 200 -i 1000 -p 90 -h 800 --mainaffinity 0 --spike 100 -q",
    ));
    let (out, err) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{err}");
    assert!(
        out.starts_with(
            "# /dev/cpu_dma_latency set to 0us\n# Histogram\n000000 000000\t000000\t000000\n"
        ),
        "{out}"
    );
    assert!(out.contains("# Total:"), "{out}");
    // The first thread to reach -l stops the others (as cyclictest).
    assert_eq!(err.matches("P:90 I:1000 C:").count(), 3, "{err}");
    assert!(err.contains("P:90 I:1000 C:    200"), "{err}");
    assert_eq!(dma_latency(), before, "cpu_dma_latency must be released");
}

#[test]
fn seed_lines_verbatim_refuse_cpus_this_vm_lacks_and_change_nothing() {
    let _dma = dma_latency_lock();
    let before = dma_latency();
    let out = lever(&words(
        "latency -a 1-3 -t 3 -m -l 100 -i 1000 -p 90 -h 800 --mainaffinity 4 --spike 100",
    ));
    let err = String::from_utf8_lossy(&out.stderr);
    if online().len() >= 5 {
        return; // a bigger machine runs it; the other tests cover that.
    }
    assert!(!out.status.success());
    assert!(
        err.contains("-a/--affinity: CPU 2 does not exist or is offline (online CPUs: 0-1)")
            || err.contains("does not exist"),
        "{err}"
    );
    assert_eq!(dma_latency(), before);
}

#[test]
fn bad_values_are_precise_errors() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["latency", "-i", "0", "-l", "1"],
            "-i/--interval \"0\": expected an interval of at least 1 µs",
        ),
        (
            &["latency", "-a", "999", "-l", "1"],
            "CPU 999 does not exist",
        ),
        (
            &["latency", "--policy", "deadline"],
            "--policy \"deadline\": expected one of",
        ),
        (&["latency", "-l", "many"], "-l/--loops \"many\""),
        (&["latency", "-D", "soon"], "-D/--duration \"soon\""),
        (&["latency", "--bogus"], "unexpected argument '--bogus'"),
    ];
    for (args, want) in cases {
        let out = lever(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn help_lists_cyclictest_flags_and_h_is_the_histogram() {
    let out = ok(&["latency", "--help"]);
    for flag in [
        "--affinity",
        "--smp",
        "--histogram",
        "--histfile",
        "--mainaffinity",
        "--laptop",
        "--spike",
        "--breaktrace",
    ] {
        assert!(out.contains(flag), "{flag}: {out}");
    }
}

#[test]
fn json_file_is_cyclictests_schema_and_imports_back() {
    let _dma = dma_latency_lock();
    if !need_root("json_file_is_cyclictests_schema_and_imports_back") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ct.json");
    let hist = dir.path().join("hist.txt");
    ok(&[
        "latency",
        "-t",
        "2",
        "-a",
        "-p",
        "80",
        "-i",
        "500",
        "-l",
        "400",
        "-h",
        "50",
        "-q",
        "-m",
        "--json",
        file.to_str().unwrap(),
        "--histfile",
        hist.to_str().unwrap(),
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(doc["file_version"], 1);
    assert_eq!(doc["num_threads"], 2);
    assert!(doc["cmdline:"].as_str().unwrap().contains("-h 50"));
    let t0 = &doc["thread"]["0"];
    // The first thread to reach -l ends the run (as cyclictest).
    let cycles = |t: &str| doc["thread"][t]["cycles"].as_u64().unwrap();
    assert_eq!(cycles("0").max(cycles("1")), 400);
    for (f, want) in [(&file, "cyclictest-json"), (&hist, "cyclictest")] {
        let back = json(&["latency", "import", f.to_str().unwrap(), "--json"]);
        assert_eq!(back["source"]["format"], want);
        assert_eq!(back["threads"][0]["min_us"], t0["min"]);
        assert_eq!(back["threads"][0]["max_us"], t0["max"]);
    }
}

#[test]
fn policy_other_runs_and_ctrl_c_ends_with_a_report() {
    if !need_root("policy_other_runs_and_ctrl_c_ends_with_a_report") {
        return;
    }
    let child = start(
        &[
            "latency", "--policy", "other", "-i", "1000", "-q", "--laptop", "--json",
        ],
        None,
    );
    std::thread::sleep(settle());
    let r = interrupt(child);
    assert_eq!(r["ended"]["reason"], "interrupted");
    assert_eq!(r["policy"], "other");
    assert!(r["threads"][0]["cycles"].as_u64().unwrap() > 100);
}

#[test]
fn breaktrace_stops_at_the_first_sample_over_the_threshold() {
    if !need_root("breaktrace_stops_at_the_first_sample_over_the_threshold") {
        return;
    }
    // -b 0: the first wake-up is already later than 0 µs.
    let (_dir, trace) = scratch("b0.trace");
    let r = json_traced(
        &["latency", "-p", "90", "-b", "0", "-D", "5s", "-q"],
        &trace,
    );
    assert_eq!(r["ended"]["reason"], "breach");
    assert_eq!(r["threads"][0]["cycles"], 1);
}

fn fixture(name: &str) -> String {
    format!(
        "{}/../latency/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn import_prints_the_table() {
    let out = ok(&[
        "latency",
        "import",
        &fixture("cyclictest-2.40-t2-h60-spike40.txt"),
    ]);
    assert!(out.contains("imported cyclictest output"), "{out}");
    assert!(out.contains("spikes = 4"), "{out}");
}

#[test]
fn rt_check_on_the_default_simulated_board_explains_fails() {
    let dir = tempfile::tempdir().unwrap();
    ok(&["sim", "create", "qcs6490", dir.path().to_str().unwrap()]);
    let out = lever(&[
        "--root",
        dir.path().to_str().unwrap(),
        "rt",
        "check",
        "--rt-cpus",
        "1-3",
    ]);
    // A FAIL fails the command (exit 1), after the report.
    assert_eq!(out.status.code(), Some(1));
    let out = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.contains("RT CPUs 1-3 (--rt-cpus)"), "{out}");
    assert!(out.contains("how to fix:"), "{out}");
    assert!(
        out.contains("sched_rt_runtime_us: echo -1 > /proc/sys/kernel/sched_rt_runtime_us"),
        "{out}"
    );
}

fn tracefs_ready(test: &str) -> bool {
    if !need_root(test) {
        return false;
    }
    if std::path::Path::new("/sys/kernel/tracing/tracing_on").exists() {
        return true;
    }
    // Mount it as `lever trace record` would; skip (fail under CI) if not.
    let _ = std::process::Command::new("mount")
        .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
        .status();
    let ok = std::path::Path::new("/sys/kernel/tracing/tracing_on").exists();
    if !ok {
        let why = format!("{test}: skipped: no tracefs at /sys/kernel/tracing");
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{why} (CI=true)"
        );
        eprintln!("{why}");
    }
    ok
}

/// Whether process `pid`'s instance is still there (tests run in
/// parallel, so other runs' instances may exist meanwhile).
fn instance_left(pid: u32) -> bool {
    std::path::Path::new(&format!(
        "/sys/kernel/tracing/instances/lever-latency-{pid}"
    ))
    .exists()
}

fn output_of(cmd: &mut std::process::Command) -> (u32, std::process::Output) {
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    (child.id(), child.wait_with_output().unwrap())
}

#[test]
fn breach_with_a_fifo_hog_names_the_hog() {
    if !tracefs_ready("breach_with_a_fifo_hog_names_the_hog") {
        return;
    }
    let cpu = online().last().copied().unwrap().to_string();
    let (_dir, trace) = scratch("breach.trace");
    let child = start(
        &[
            "latency", "-a", &cpu, "-p", "50", "-b", "30000", "-D", "20", "-q", "--json",
            // Other tests check cpu_dma_latency is released: do not race them.
            "--laptop",
        ],
        Some(&trace),
    );
    // A SCHED_FIFO 60 busy loop of ~0.1 s pinned to the measured CPU, above
    // the measuring thread's FIFO 50: it wakes the thread ~0.1 s late. It
    // repeats every 0.5 s until Lever ends, so a slow start of Lever (a
    // loaded machine, a debug build) cannot make the hog run before the
    // measurement does.
    let hog = std::process::Command::new("chrt")
        .args(["-f", "60", "taskset", "-c", &cpu, "sh", "-c"])
        .arg("while :; do i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; sleep 0.5; done")
        .spawn()
        .expect("chrt and taskset (util-linux)");
    let hog_pid = hog.id() as i64;
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let mut hog = hog;
    let _ = hog.kill();
    let _ = hog.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["ended"]["reason"], "breach", "{r}");
    let a = &r["analyses"][0];
    let cause = &a["parts"][0];
    assert_eq!(cause["kind"], "higher-priority-task", "{a:#}");
    assert_eq!(cause["pid"].as_i64(), Some(hog_pid), "{a:#}");
    assert_eq!(cause["prio"], 39, "{a:#}");
    assert!(cause["share_pct"].as_f64().unwrap() > 80.0, "{a:#}");
    // The trace is kept, holds the marker, and the instance is gone.
    assert_eq!(r["trace_file"].as_str(), trace.to_str());
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.contains("lever-latency breach: thread=0"));
    assert!(!instance_left(pid));
}

#[test]
fn tracing_errors_are_precise_and_change_nothing() {
    // No tracefs under a simulated root: says so, exits 4, nothing made.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("sys/devices/system/cpu")).unwrap();
    std::fs::write(root.join("sys/devices/system/cpu/online"), "0-1\n").unwrap();
    std::fs::create_dir_all(root.join("sys/kernel/tracing")).unwrap();
    refused(
        &["latency", "--root", root.to_str().unwrap(), "-b", "100", "-l", "10", "-q"],
        4,
        "-b/--breaktrace: cannot record the trace for the breach analysis: tracefs is not available",
    );
    // A tracefs whose instances cannot be made (here a file, not a dir).
    let t = root.join("sys/kernel/tracing");
    std::fs::write(t.join("tracing_on"), "1\n").unwrap();
    std::fs::write(t.join("instances"), "").unwrap();
    for e in ["sched/sched_switch", "sched/sched_waking"] {
        std::fs::create_dir_all(t.join("events").join(e)).unwrap();
        std::fs::write(t.join("events").join(e).join("enable"), "0\n").unwrap();
    }
    let out = lever(&[
        "latency",
        "--root",
        root.to_str().unwrap(),
        "--analyze",
        "--spike",
        "50",
        "-l",
        "10",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("--analyze: cannot record the trace for the breach analysis")
            && err.contains("instances/lever-latency-")
            && err.contains("create instance failed"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(t.join("tracing_on")).unwrap(),
        "1\n"
    );
    // Flags that make no sense together.
    for (args, want) in [
        (
            &["latency", "--analyze", "-l", "1"][..],
            "--analyze \"\": expected --spike US or -b US",
        ),
        (
            &["latency", "--trace-out", "x", "-l", "1"][..],
            "--trace-out \"x\": expected -b US or --analyze",
        ),
        (
            &[
                "latency",
                "--analyze",
                "--no-trace",
                "--spike",
                "5",
                "-l",
                "1",
            ][..],
            "--no-trace",
        ),
    ] {
        refused(args, 3, want);
    }
}

#[test]
fn not_root_tracing_says_so_and_leaves_no_instance() {
    if !tracefs_ready("not_root_tracing_says_so_and_leaves_no_instance") {
        return;
    }
    let (pid, out) = output_of(
        std::process::Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                common::LEVER,
            ])
            .args([
                "latency", "--policy", "other", "-b", "100", "-l", "10", "-q",
            ]),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("/sys/kernel/tracing: permission denied (tracefs needs root; --no-trace"),
        "{err}"
    );
    assert!(!instance_left(pid));
    // --no-trace: the same run works without tracing.
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            common::LEVER,
        ])
        .args([
            "latency",
            "--policy",
            "other",
            "-b",
            "0",
            "--no-trace",
            "-l",
            "10",
            "-q",
            "--laptop",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_bad_value_is_a_usage_error_naming_its_flag() {
    let cases: [(&str, &str); 12] = [
        (
            "-p 100",
            "-p/--priority \"100\": expected a priority from 0 to 99",
        ),
        ("-t 0", "-t/--threads \"0\": expected at least 1 thread"),
        ("-t x", "-t/--threads \"x\": expected a number of threads"),
        (
            "-h 0",
            "-h/--histogram \"0\": expected a histogram size from 1 to 1000000 µs",
        ),
        ("-h 2000000", "-h/--histogram \"2000000\""),
        ("-l 0", "-l/--loops \"0\": expected at least 1 loop"),
        (
            "--mainaffinity 999",
            "--mainaffinity: CPU 999 does not exist or is offline",
        ),
        ("-i abc", "-i/--interval \"abc\""),
        ("-d xyz", "-d/--distance \"xyz\""),
        ("--spike q", "--spike \"q\""),
        ("-a 0-x", "-a/--affinity \"0-x\": expected a CPU list"),
        ("-b 100 -a 999", "-a/--affinity: CPU 999 does not exist"),
    ];
    for (args, want) in cases {
        let mut a = vec!["latency"];
        a.extend(args.split_whitespace());
        if !args.starts_with("-l") {
            a.extend(["-l", "1"]);
        }
        refused(&a, 3, want);
    }
}

/// Processes whose command line holds `needle` (to check a load is gone).
fn processes_with(needle: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(needle))
        .collect()
}

#[test]
fn loads_run_during_the_measurement_and_are_gone_after() {
    // SCHED_OTHER and --laptop: no privilege needed.
    let r = json(&[
        "latency",
        "--policy",
        "other",
        "--laptop",
        "-l",
        "200",
        "-q",
        "--load",
        "cpu:1:30",
        "--load",
        "msg:1",
        "--load",
        "sleep 31.77",
        "--json",
    ]);
    let loads: Vec<&str> = r["loads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(
        loads,
        [
            "cpu: 1 worker(s) busy 30% of every 10 ms",
            "msg: 1 thread pair(s) ping-ponging a byte",
            "command: sh -c \"sleep 31.77\""
        ]
    );
    assert_eq!(r["threads"][0]["cycles"], 200);
    assert!(processes_with("sleep 31.77").is_empty());
    // A load that cannot run is an error before anything is measured.
    refused(
        &[
            "latency",
            "--policy",
            "other",
            "-l",
            "5",
            "--load",
            "cmd:exit 7",
        ],
        1,
        "--load command: sh -c \"exit 7\": exited at once",
    );
    refused(
        &["latency", "-l", "5", "--load", "cpu:0"],
        3,
        "--load \"cpu:0\"",
    );
}

#[test]
fn kpi_prints_seed_000_blocks_and_a_verdict() {
    // SCHED_OTHER, no cpu_dma_latency: runs anywhere.
    let base = [
        "latency", "kpi", "-t", "2", "-l", "100", "-i", "500", "--policy", "other", "--laptop",
        "-q", "--load", "cpu:1:20",
    ];
    let out = ok(&base);
    assert!(
        out.contains("KPIs for lever latency with no load\nRT cores "),
        "{out}"
    );
    assert!(
        out.contains("KPIs for lever latency with cpu: 1 worker(s) busy 20% of every 10 ms\n"),
        "{out}"
    );
    assert_eq!(
        out.matches("Minimum latencies (in microseconds)").count(),
        2
    );
    assert_eq!(
        out.matches("Maximum latencies (in microseconds)").count(),
        2
    );
    // Markdown, and JSON with a criterion nobody fails (1 s).
    let mut md = base.to_vec();
    md.push("--markdown");
    let out = ok(&md);
    assert!(out.contains("### KPIs for lever latency with no load\n\n| RT cores | unpinned | unpinned |\n| --- | --- | --- |\n"), "{out}");
    let mut js = base.to_vec();
    js.extend(["--pass-us", "1000000", "--json"]);
    let k: serde_json::Value = serde_json::from_str(&ok(&js)).unwrap();
    assert_eq!(k["pass"], true);
    assert_eq!(k["blocks"].as_array().unwrap().len(), 2);
    assert_eq!(k["blocks"][0]["condition"], "no load");
    // Intervals 500 and 1000 µs: thread 0 reaches -l 100 first and stops
    // thread 1 (as cyclictest does).
    assert_eq!(k["blocks"][1]["cells"][0]["samples"], 100);
    assert!(k["blocks"][1]["cells"][1]["samples"].as_u64().unwrap() < 100);
    assert_eq!(
        k["blocks"][1]["report"]["loads"][0],
        "cpu: 1 worker(s) busy 20% of every 10 ms"
    );
    // A criterion of 1 µs fails (a wake-up is never that punctual here):
    // the table, then exit status 1.
    let mut fail = base.to_vec();
    fail.extend(["--pass-us", "1"]);
    let out = lever(&fail);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text.contains("Max < 1 µs") && text.contains("FAIL"),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("KPI failed"));
}

#[test]
fn plot_writes_an_svg_with_a_line_per_thread() {
    let _dma = dma_latency_lock();
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("h.svg");
    ok(&[
        "latency",
        "import",
        &fixture("cyclictest-2.40-t2-h60-spike40.txt"),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_eq!(text.matches("<path class=\"thread\"").count(), 2);
    assert!(text.contains("latency (µs)") && text.contains("samples (log scale)"));
    if !is_root() {
        return;
    }
    // A measurement draws its own histograms.
    ok(&[
        "latency",
        "-t",
        "2",
        "-a",
        "-p",
        "80",
        "-l",
        "300",
        "-h",
        "200",
        "-q",
        "-m",
        "--laptop",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(text.matches("<path class=\"thread\"").count(), 2);
    assert!(text.contains("T1 CPU 1"), "{text}");
}

#[test]
fn all_seed_command_lines_verbatim_with_a_shorter_l() {
    let _dma = dma_latency_lock();
    // Seed 000 §3.6 (line 686) and seed 001's four lines, `-l 100000000`
    // shortened to 300. Where this machine has the CPUs they name (and we
    // are root) they run; else they must be refused precisely, exit 3.
    let lines = [
        (
            "-a 1-3 -t 3 -m -l 300 -i 1000 -p 90 -h 800 --mainaffinity 4 --spike 100",
            4,
            3,
        ),
        ("-a 7 -t 1 -m -l 300 -i 1000 -p 99 -h 100", 7, 1),
        ("-a 3 -t 1 -m -l 300 -i 1000 -p 99 -h 100", 3, 1),
        (
            "-a 7 -t 1 -m -l 300 -i 1000 -p 99 -h 100 --mainaffinity 6",
            7,
            1,
        ),
        (
            "-a 3 -t 1 -m -l 300 -i 1000 -p 99 -h 100 --mainaffinity 2",
            3,
            1,
        ),
    ];
    let online = online();
    for (line, highest_cpu, threads) in lines {
        let mut args = vec!["latency"];
        args.extend(line.split_whitespace());
        args.extend(["-q", "--json"]);
        let out = lever(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        if online.contains(&highest_cpu) {
            if !need_root(line) {
                continue;
            }
            assert!(out.status.success(), "{line}: {err}");
            let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let t = r["threads"].as_array().unwrap();
            assert_eq!(t.len(), threads, "{line}");
            assert!(t.iter().all(|t| t["cycles"] == 300), "{line}");
        } else {
            eprintln!("{line}: this machine lacks CPU {highest_cpu}; checking the refusal");
            assert_eq!(out.status.code(), Some(3), "{line}: {err}");
            assert!(
                err.contains("does not exist or is offline (online CPUs: "),
                "{line}: {err}"
            );
        }
    }
}

#[test]
fn analyze_explains_every_spike_in_one_trace() {
    if !tracefs_ready("analyze_explains_every_spike_in_one_trace") {
        return;
    }
    let (_dir, trace) = scratch("all.trace");
    // --spike 0: every wake-up is a spike; the last 32 are explained.
    let r = json_traced(
        &[
            "latency",
            "-a",
            "0",
            "-p",
            "60",
            "-l",
            "100",
            "--spike",
            "0",
            "--analyze",
            "-q",
            "--laptop",
        ],
        &trace,
    );
    assert_eq!(r["ended"]["reason"], "loops");
    let analyses = r["analyses"].as_array().unwrap();
    assert_eq!(analyses.len(), 32);
    let tid = r["threads"][0]["tid"].as_i64().unwrap();
    // The last ones: the final wake-up's deadline is among them.
    let last_ts_us = r["spikes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["timestamp_us"].as_u64().unwrap())
        .max()
        .unwrap();
    let last_woke_us = analyses
        .iter()
        .map(|a| a["wakeup"]["woke_ns"].as_u64().unwrap() / 1000)
        .max()
        .unwrap();
    assert_eq!(last_woke_us, last_ts_us);
    for a in analyses {
        assert_eq!(a["wakeup"]["tid"].as_i64(), Some(tid));
        let sum: u64 = a["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["duration_ns"].as_u64().unwrap())
            .sum();
        assert_eq!(sum, a["window_ns"].as_u64().unwrap(), "{a:#}");
        // Each window holds events of its CPU (its timer callback at least).
        assert!(a["events"].as_u64().unwrap() > 0, "{a:#}");
    }
    assert!(std::fs::metadata(&trace).unwrap().len() > 0);
}

#[test]
fn ctrl_c_while_tracing_saves_the_trace_and_removes_the_instance() {
    if !tracefs_ready("ctrl_c_while_tracing_saves_the_trace_and_removes_the_instance") {
        return;
    }
    let (_dir, trace) = scratch("int.trace");
    let child = start(
        &[
            "latency", "-p", "50", "-b", "10s", "-D", "30", "-q", "--json", "--laptop",
        ],
        Some(&trace),
    );
    let pid = child.id();
    std::thread::sleep(settle());
    assert!(instance_left(pid), "the instance exists while measuring");
    let r = interrupt(child);
    assert_eq!(r["ended"]["reason"], "interrupted");
    assert!(r["analyses"].as_array().unwrap().is_empty());
    assert!(std::fs::read_to_string(&trace)
        .unwrap()
        .contains("sched_switch"));
    assert!(!instance_left(pid));
}

/// `cyclictest ARGS`' stdout, or `None` (with the reason printed; a
/// failure under CI=true, where `.ci/run` installs rt-tests) without it.
fn cyclictest(test: &str, args: &[&str]) -> Option<String> {
    match std::process::Command::new("cyclictest").args(args).output() {
        Ok(out) => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        Err(e) => {
            let why = format!("{test}: no comparison with cyclictest: {e} (rt-tests)");
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
            eprintln!("{why}");
            None
        }
    }
}

#[test]
fn the_first_thread_to_reach_l_stops_every_thread_as_in_cyclictest() {
    // Intervals 1000 and 1500 µs (-d 500): thread 1 has about 2/3 of
    // thread 0's samples when thread 0 reaches -l, and stops there.
    let r = json(&[
        "latency", "-t", "2", "-l", "200", "-i", "1000", "--policy", "other", "--laptop", "-q",
        "--json",
    ]);
    let cycles: Vec<u64> = r["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["cycles"].as_u64().unwrap())
        .collect();
    assert_eq!(cycles[0], 200, "{cycles:?}");
    assert!(cycles[1] < 190, "thread 1 ran on to -l: {cycles:?}");
    assert_eq!(r["ended"]["reason"], "loops");
}

#[test]
fn json_file_has_cyclictests_histogram_and_node_keys() {
    let dir = tempfile::tempdir().unwrap();
    let doc = |args: &[&str]| -> serde_json::Value {
        let file = dir.path().join("l.json");
        let mut all = vec!["latency", "-l", "20", "--policy", "other", "--laptop", "-q"];
        all.extend_from_slice(args);
        all.extend(["--json", file.to_str().unwrap()]);
        ok(&all);
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap()
    };
    let plain = doc(&[]);
    let t0 = &plain["thread"]["0"];
    // No -h: the key is there, empty, as cyclictest 2.40 writes it.
    assert_eq!(t0["histogram"], serde_json::json!({}), "{t0}");
    assert_eq!(t0["node"], 0, "{t0}");
    // -S: cyclictest writes node -1 for every thread.
    let smp = doc(&["-S"]);
    for (_, t) in smp["thread"].as_object().unwrap() {
        assert_eq!(t["node"], -1, "{t}");
    }
    // The same keys as cyclictest's own document.
    let file = dir.path().join("ct.json");
    let arg = format!("--json={}", file.display());
    if cyclictest(
        "json_file_has_cyclictests_histogram_and_node_keys",
        &["-l", "20", "-q", &arg],
    )
    .is_some()
    {
        let ct: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let keys = |v: &serde_json::Value| {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(keys(t0), keys(&ct["thread"]["0"]));
        assert_eq!(t0["node"], ct["thread"]["0"]["node"]);
    }
}

/// Each stdout line's shape: `#` and its label, a histogram row, or empty.
fn shapes(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with("# /dev/cpu_dma_latency"))
        .map(|l| {
            if l.is_empty() {
                "empty".to_string()
            } else if let Some(rest) = l.strip_prefix('#') {
                format!("#{}", rest.split(':').next().unwrap())
            } else {
                let cols: Vec<&str> = l.split(['\t', ' ']).collect();
                assert!(
                    cols.iter()
                        .all(|c| c.len() == 6 && c.bytes().all(|b| b.is_ascii_digit())),
                    "not a histogram row: {l:?}"
                );
                format!("row of {}", cols.len())
            }
        })
        .collect()
}

#[test]
fn h_on_stdout_is_what_cyclictest_prints_there() {
    // Lever's table goes to stderr; stdout is cyclictest's: a script that
    // takes every line not starting with # as a histogram row works.
    let out = lever(&[
        "latency", "-h", "20", "-l", "100", "-t", "2", "--policy", "other", "--laptop", "-q",
    ]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ours = shapes(&stdout);
    assert!(
        ours.starts_with(&["# Histogram".into(), "row of 3".into()]),
        "{stdout}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("measured 2 thread(s)"));
    if let Some(ct) = cyclictest(
        "h_on_stdout_is_what_cyclictest_prints_there",
        &["-h", "20", "-l", "100", "-t", "2", "-q"],
    ) {
        assert_eq!(ours, shapes(&ct), "lever:\n{stdout}\ncyclictest:\n{ct}");
    }
}

#[test]
fn b_leaves_tracefs_as_found_and_keeps_no_trace_without_a_breach() {
    if !tracefs_ready("b_leaves_tracefs_as_found_and_keeps_no_trace_without_a_breach") {
        return;
    }
    // In a private mount namespace, tracefs unmounted first: lever mounts
    // it for -b and must unmount it, breach or not; the rest of the
    // machine (other tests' tracefs) is not touched.
    let tmp = tempfile::tempdir().unwrap();
    let script = format!(
        "umount /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug 2>/dev/null; \
         grep -c ' tracefs ' /proc/self/mounts; \
         {lever} latency -p 50 -b 10000000 -l 50 -q --laptop --json > {dir}/none.json || exit 9; \
         grep -c ' tracefs ' /proc/self/mounts; \
         {lever} latency -p 50 -b 0 -D 5s -q --laptop --json > {dir}/breach.json || exit 9; \
         grep -c ' tracefs ' /proc/self/mounts; true",
        lever = common::LEVER,
        dir = tmp.path().display()
    );
    let out = std::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let counts = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{counts}{err}");
    assert_eq!(
        counts.split_whitespace().collect::<Vec<_>>(),
        ["0", "0", "0"],
        "{err}"
    );
    let none: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("none.json")).unwrap()).unwrap();
    assert_eq!(none["ended"]["reason"], "loops");
    assert!(none["trace_file"].is_null(), "{none}");
    assert!(none["notes"].to_string().contains("the trace was not kept"));
    let breach: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("breach.json")).unwrap()).unwrap();
    assert_eq!(breach["ended"]["reason"], "breach");
    assert!(
        !breach["analyses"].as_array().unwrap().is_empty(),
        "{breach}"
    );
    // Only the breach's trace is in the temporary directory.
    let traces: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".trace"))
        .collect();
    assert_eq!(traces.len(), 1);
}

#[test]
fn a_load_on_a_cpu_that_is_not_online_is_refused_naming_the_flag() {
    let past = online().iter().max().unwrap() + 1;
    refused(
        &[
            "latency",
            "--load",
            &format!("cpu:1@{past}"),
            "-l",
            "5",
            "-q",
        ],
        3,
        &format!("--load: CPU {past} does not exist or is offline"),
    );
}

#[test]
fn mlockall_as_a_normal_user_exits_5_with_a_hint() {
    if !need_root("mlockall_as_a_normal_user_exits_5_with_a_hint") {
        return;
    }
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            common::LEVER,
        ])
        .args([
            "latency", "-m", "--policy", "other", "-l", "5", "-q", "--laptop",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("-m/--mlockall") && err.contains("run as root, or measure without -m"),
        "{err}"
    );
}

#[test]
fn sigterm_ends_with_a_report_that_says_interrupted() {
    let child = start(
        &[
            "latency", "--policy", "other", "-i", "1000", "-q", "--laptop",
        ],
        None,
    );
    std::thread::sleep(settle());
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("ended: interrupted\n"), "{text}");
    assert!(text.contains("note: interrupted by SIGTERM"), "{text}");
    assert!(!text.contains("Ctrl-C"), "{text}");
}
