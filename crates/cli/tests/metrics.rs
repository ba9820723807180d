//! `lever daemon --metrics` and `--metrics-textfile`: a real daemon on a
//! simulated qcs6490, a scripted sequence of requests, and the counters
//! read back over HTTP on a Unix socket; `promtool check metrics` (from
//! Debian's `prometheus`, installed by .ci/run) checks both formats. And
//! the endpoint under slow clients run as `nobody` (the test binary runs
//! itself as uid 65534 in the role `slow_metrics_client_role`), while root
//! scrapes beside them.

mod common;

use common::daemon::{is_root, state_dir, wait_until, Daemon};
use lever_client::{ClientError, Code, Lease, Priority};
use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SILVER_MIN: u32 = 0x44008100;

fn scrape(socket: &Path, accept: Option<&str>) -> String {
    let mut s = UnixStream::connect(socket).expect("metrics socket");
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    write!(s, "GET /metrics HTTP/1.1\r\nHost: lever\r\n{accept}\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    body.to_string()
}

/// The value of one sample line `NAME{LABELS} VALUE`.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {series} in\n{text}"))
        .parse()
        .unwrap()
}

/// Run `program args` with `text` on stdin: (success, stdout + stderr);
/// None where the program cannot be started.
fn pipe(program: &str, args: &[&str], text: &str) -> Option<(bool, String)> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(text.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    Some((out.status.success(), said))
}

/// `promtool check metrics` on `text`; None where promtool is missing.
fn promtool(text: &str) -> Option<(bool, String)> {
    pipe("promtool", &["check", "metrics"], text)
}

#[test]
fn counters_match_a_scripted_sequence_and_pass_promtool() {
    let dir = state_dir();
    let msock = dir.path().join("metrics.sock");
    let textdir = dir.path().join("textfile");
    std::fs::create_dir(&textdir).unwrap();
    let d = Daemon::start(
        dir.path(),
        &[
            "--metrics",
            msock.to_str().unwrap(),
            "--metrics-textfile",
            textdir.to_str().unwrap(),
            "--metrics-interval",
            "100ms",
        ],
    );
    let before = scrape(&msock, None);
    assert_eq!(sample(&before, "lever_acquires_total"), 0.0);

    // The script: 3 grants (one timed to expire), 1 release, 1 refusal,
    // 1 client that closes with a live request.
    let mut a = d.client();
    let h1 = a
        .acquire(
            None,
            Lease::UntilReleased,
            Priority::SystemLow,
            &[(SILVER_MIN, 1958400)],
        )
        .unwrap();
    a.acquire(
        None,
        Lease::from_ms(50),
        Priority::SystemLow,
        &[(SILVER_MIN, 1516800)],
    )
    .unwrap();
    a.release(h1).unwrap();
    let refused = a
        .acquire(
            None,
            Lease::UntilReleased,
            Priority::SystemLow,
            &[(0x7fff_0000, 1)],
        )
        .unwrap_err();
    assert!(
        matches!(
            refused,
            ClientError::Refused {
                code: Code::UnknownResource,
                ..
            }
        ),
        "{refused:?}"
    );
    {
        let mut gone = d.client();
        gone.acquire(
            None,
            Lease::UntilReleased,
            Priority::SystemLow,
            &[(SILVER_MIN, 1000000)],
        )
        .unwrap();
    }
    // The expiry and the closed client are seen by the daemon's loop.
    let settled = wait_until(Duration::from_secs(10), || {
        let m = scrape(&msock, None);
        sample(&m, "lever_expiries_total") == 1.0
            && sample(&m, "lever_client_gone_releases_total") == 1.0
            && sample(&m, "lever_requests_live") == 0.0
    });
    assert!(settled.is_some(), "{}\n{}", scrape(&msock, None), d.log());
    let m = scrape(&msock, None);
    assert_eq!(sample(&m, "lever_acquires_total"), 3.0);
    assert_eq!(sample(&m, "lever_releases_total"), 1.0);
    assert_eq!(sample(&m, "lever_refusals_total{code=\"3\"}"), 1.0);
    assert_eq!(sample(&m, "lever_requests_live"), 0.0);
    assert_eq!(
        sample(&m, "lever_clients"),
        1.0,
        "client `a` is still connected"
    );
    // The node is written when the winner changes: 1958400 set, 1516800
    // when h1 is released, the original back when the timed request
    // expires. The closed client's 1000000 never won (max policy), so it
    // wrote nothing.
    let writes = sample(
        &m,
        "lever_resource_writes_total{resource=\"cpu_min_freq.silver\"}",
    );
    assert_eq!(writes, 3.0, "{m}\n{}", d.log());
    assert_eq!(
        sample(
            &m,
            "lever_resource_write_errors_total{resource=\"cpu_min_freq.silver\"}"
        ),
        0.0
    );
    // Every request answered is in the histogram (the first scrape's
    // zero, then 5 frames of this script, no more: scrapes are not
    // requests).
    assert_eq!(sample(&m, "lever_request_seconds_count"), 5.0);
    assert_eq!(sample(&m, "lever_request_seconds_bucket{le=\"+Inf\"}"), 5.0);
    assert!(
        sample(&m, "lever_journal_bytes{journal=\"originals\"}") > 0.0,
        "{m}"
    );

    let om = scrape(&msock, Some("application/openmetrics-text; version=1.0.0"));
    assert!(om.ends_with("# EOF\n"), "{om}");
    assert_eq!(sample(&om, "lever_acquires_total"), 3.0);

    // The textfile follows within its interval.
    let prom = textdir.join("lever.prom");
    let caught_up = wait_until(Duration::from_secs(5), || {
        std::fs::read_to_string(&prom).is_ok_and(|t| t.contains("lever_acquires_total 3\n"))
    });
    assert!(caught_up.is_some(), "{:?}", std::fs::read_to_string(&prom));

    match promtool(&m) {
        None => eprintln!("skipped promtool: not installed here (Debian's `prometheus` package; .ci/run installs it)"),
        Some((ok, said)) => {
            assert!(ok, "promtool check metrics on the 0.0.4 text:\n{said}\n{m}");
            let file = std::fs::read_to_string(&prom).unwrap();
            let (ok, said) = promtool(&file).unwrap();
            assert!(ok, "promtool on lever.prom:\n{said}\n{file}");
        }
    }
    // promtool reads only the 0.0.4 format; the OpenMetrics text goes
    // through the Python client's strict OpenMetrics parser.
    match openmetrics_parse(&om) {
        None => eprintln!(
            "skipped the OpenMetrics parse: python3 has no prometheus_client (.ci/run installs it)"
        ),
        Some((ok, said)) => assert!(ok, "OpenMetrics parser:\n{said}\n{om}"),
    }
}

/// Parse `text` with prometheus_client's OpenMetrics parser, printing the
/// families; None where the module is missing.
fn openmetrics_parse(text: &str) -> Option<(bool, String)> {
    let probe = Command::new("python3")
        .args(["-c", "import prometheus_client.openmetrics.parser"])
        .output()
        .ok()?;
    if !probe.status.success() {
        return None;
    }
    let script = "import sys\n\
from prometheus_client.openmetrics.parser import text_string_to_metric_families as p\n\
for f in p(sys.stdin.read()):\n    print(f.name, f.type, len(f.samples))\n";
    pipe("python3", &["-c", script], text)
}

#[test]
fn a_non_loopback_address_is_refused_before_start() {
    let out = Command::new(common::LEVER)
        .args(["daemon", "--sim", "qcs6490", "--metrics", "0.0.0.0:9464"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "a bad flag value: {out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("only a loopback address"), "{err}");
}

/// `0:PORT` is every interface, not a socket file named `0:PORT`; a value
/// with neither a port nor a `/` is refused, not created as a file.
#[test]
fn host_port_forms_are_tcp_and_never_become_files() {
    let dir = state_dir();
    for (value, says) in [
        ("0:9464", "only a loopback address"),
        ("metrics.sock", "a path has a `/`"),
    ] {
        let out = Command::new(common::LEVER)
            .current_dir(dir.path())
            .args(["daemon", "--sim", "qcs6490", "--metrics", value])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{value}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--metrics") && err.contains(says),
            "{value}: {err}"
        );
        assert!(!dir.path().join(value).exists(), "{value} became a file");
    }
}

const NOBODY: u32 = 65534;
/// Slow connections the attacker keeps open (the endpoint's cap).
const SLOW_CONNS: usize = 8;
/// How often each sends one more byte of its request head.
const SLOW_EVERY: Duration = Duration::from_millis(1500);

/// The role the test binary plays as `nobody`: keep `SLOW_CONNS`
/// connections to `LEVER_SLOW_METRICS_ADDR` sending one header byte every
/// 1.5 s each, for `LEVER_SLOW_METRICS_SECS`, reconnecting at once
/// whenever the daemon closes one. Prints `LEVER_SLOW ready`, then a
/// `LEVER_SLOW closed MS AGE_MS` line per connection the daemon closed
/// (when, and how long after its connect). A no-op in a normal run.
#[test]
fn slow_metrics_client_role() {
    let Some(addr) = std::env::var("LEVER_SLOW_METRICS_ADDR").ok() else {
        return;
    };
    let secs: f64 = std::env::var("LEVER_SLOW_METRICS_SECS")
        .unwrap()
        .parse()
        .unwrap();
    let head = b"GET /metrics HTTP/1.1\r\nHost: lever\r\nX-Slow: ";
    let connect = || {
        let s = TcpStream::connect(&addr).expect("connect as nobody");
        s.set_nonblocking(true).unwrap();
        // (stream, connected at, bytes sent, last byte at)
        (s, Instant::now(), 0usize, None::<Instant>)
    };
    let start = Instant::now();
    let mut conns: Vec<_> = (0..SLOW_CONNS).map(|_| connect()).collect();
    println!("LEVER_SLOW ready");
    while start.elapsed().as_secs_f64() < secs {
        for c in conns.iter_mut() {
            let mut b = [0u8; 512];
            let gone = match c.0.read(&mut b) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
                _ => true, // EOF, an answer (408) or a reset
            };
            let due = c.3.is_none_or(|t| t.elapsed() >= SLOW_EVERY);
            let gone = gone
                || (due && {
                    let byte = head[c.2 % head.len()];
                    c.2 += 1;
                    c.3 = Some(Instant::now());
                    c.0.write_all(&[byte]).is_err()
                });
            if gone {
                println!(
                    "LEVER_SLOW closed {} {}",
                    start.elapsed().as_millis(),
                    c.1.elapsed().as_millis()
                );
                *c = connect();
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    println!("LEVER_SLOW done");
}

/// One scrape over TCP: the status code (0 when the connection broke).
fn scrape_tcp(addr: &str) -> u16 {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return 0;
    };
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    if s.write_all(b"GET /metrics HTTP/1.1\r\nHost: lever\r\n\r\n")
        .is_err()
    {
        return 0;
    }
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

#[test]
fn slow_clients_as_nobody_cannot_keep_scrapers_out() {
    use std::os::unix::process::CommandExt;
    if !is_root() {
        eprintln!("skipped: needs root to run the slow clients as `nobody`");
        return;
    }
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &["--metrics", "localhost:0"]);
    let log = d.log();
    let addr = log
        .lines()
        .find_map(|l| l.split("metrics on ").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no `metrics on` line in {log}"))
        .to_string();
    assert!(
        addr.starts_with("127.0.0.1:"),
        "localhost resolved to {addr}"
    );
    assert_eq!(scrape_tcp(&addr), 200);

    const ATTACK_SECS: f64 = 8.0;
    let mut attacker = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "slow_metrics_client_role",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("LEVER_SLOW_METRICS_ADDR", &addr)
        .env("LEVER_SLOW_METRICS_SECS", ATTACK_SECS.to_string())
        .uid(NOBODY)
        .gid(NOBODY)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(attacker.stdout.take().unwrap()).lines();
    let ready = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|l| l.ends_with("LEVER_SLOW ready"));
    assert!(ready, "the attacker did not start");
    let reader = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>());

    // First the attack alone, for 2.5 s: the deadline must close every
    // slow connection by itself. Then root scrapes every 100 ms beside it.
    let start = Instant::now();
    let quiet = Duration::from_millis(2500);
    std::thread::sleep(quiet);
    let mut scrapes: Vec<(Duration, u16)> = Vec::new();
    while start.elapsed().as_secs_f64() < ATTACK_SECS - 0.5 {
        let t = start.elapsed();
        scrapes.push((t, scrape_tcp(&addr)));
        std::thread::sleep(Duration::from_millis(100));
    }
    let said = reader.join().unwrap();
    assert!(attacker.wait().unwrap().success(), "{said:?}");
    assert!(
        said.iter().any(|l| l.contains("LEVER_SLOW done")),
        "{said:?}"
    );
    // When each closed connection was closed (ms into the attack), and
    // how long it had lived.
    let closed: Vec<(u64, u64)> = said
        .iter()
        .filter_map(|l| {
            // libtest may print the role's first line after its own `test … `.
            let mut w = l.split("LEVER_SLOW closed ").nth(1)?.split(' ');
            Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?))
        })
        .collect();
    let by_deadline: Vec<u64> = closed
        .iter()
        .filter(|(at, _)| *at < quiet.as_millis() as u64)
        .map(|c| c.1)
        .collect();
    let longest = closed.iter().map(|c| c.1).max().unwrap_or(0);
    let ok = scrapes.iter().filter(|(_, code)| *code == 200).count();
    eprintln!(
        "{SLOW_CONNS} slow clients of uid {NOBODY} (a byte every {} ms each, reconnecting when closed) for {ATTACK_SECS} s: \
         before any scrape, {} closed by the head's deadline after {:?} ms; \
         {} closed in all, the longest after {longest} ms; \
         root's scrapes every 100 ms from {} ms on: {ok} ok of {}",
        SLOW_EVERY.as_millis(),
        by_deadline.len(),
        by_deadline,
        closed.len(),
        quiet.as_millis(),
        scrapes.len()
    );
    // Slow clients are closed: one 2 s deadline covers the whole head (a
    // byte every 1.5 s kept a per-read deadline happy for ever).
    assert!(by_deadline.len() >= SLOW_CONNS, "{said:?}");
    assert!(
        by_deadline.iter().all(|age| (1900..2500).contains(age)),
        "closed after {by_deadline:?} ms; the head's deadline is 2 s"
    );
    assert!(
        longest < 2500,
        "a slow connection lived {longest} ms: the head's deadline is 2 s"
    );
    // After at most ~2 s of the attack, every scrape succeeds though the
    // attacker takes every slot again as soon as it is closed.
    assert!(scrapes.len() >= 30, "only {} scrapes", scrapes.len());
    assert_eq!(ok, scrapes.len(), "{scrapes:?}\n{}", d.log());
}
