//! `lever daemon --metrics` and `--metrics-textfile`: a real daemon on a
//! simulated qcs6490, a scripted sequence of requests, and the counters
//! read back over HTTP on a Unix socket; `promtool check metrics` (from
//! Debian's `prometheus`, installed by .ci/run) checks both formats.

mod common;

use common::daemon::{state_dir, wait_until, Daemon};
use lever_client::{ClientError, Code, Lease, Priority};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

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
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("only a loopback address"), "{err}");
}
