//! Serving [`Metrics`] to Prometheus: an HTTP endpoint on a Unix socket or
//! a loopback TCP port (`lever daemon --metrics PATH|ADDR`), and
//! node_exporter's textfile collector (`--metrics-textfile DIR`).
//!
//! Both run on threads of their own, reading the counters the event loop
//! keeps, so a slow or hostile scraper costs the loop nothing. The HTTP
//! side is the least a scraper needs: `GET /metrics` (OpenMetrics when the
//! `Accept` header asks for it, else the 0.0.4 text), one request per
//! connection, a 2 s deadline and an 8 KiB request head, at most 8
//! connections served at once.
use crate::metrics::Metrics;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Where `--metrics` listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A loopback TCP address (`127.0.0.1:9464`, `[::1]:9464`).
    Tcp(SocketAddr),
    /// A Unix socket path.
    Unix(PathBuf),
}

impl std::str::FromStr for Endpoint {
    type Err = String;

    /// `ADDR:PORT` is TCP and must be loopback (the daemon's counters are
    /// not for the network at large; put a proxy in front for that);
    /// anything else is a socket path.
    fn from_str(s: &str) -> Result<Endpoint, String> {
        match s.parse::<SocketAddr>() {
            Ok(addr) if addr.ip().is_loopback() => Ok(Endpoint::Tcp(addr)),
            Ok(addr) => Err(format!(
                "--metrics {addr}: only a loopback address (127.0.0.1, [::1]) or a socket path is served"
            )),
            Err(_) if s.is_empty() => Err("--metrics: empty address".into()),
            Err(_) => Ok(Endpoint::Unix(PathBuf::from(s))),
        }
    }
}

const MAX_HEAD: usize = 8192;
const DEADLINE: Duration = Duration::from_secs(2);
const MAX_CONNS: usize = 8;

/// Bind `endpoint` and serve `metrics` on a thread until the process
/// ends. Returns the bound address as text (a TCP port of 0 becomes the
/// real one).
pub fn serve(endpoint: &Endpoint, metrics: Arc<Metrics>) -> io::Result<String> {
    let busy = Arc::new(AtomicUsize::new(0));
    match endpoint {
        Endpoint::Tcp(addr) => {
            let listener = TcpListener::bind(addr)?;
            let shown = listener.local_addr()?.to_string();
            accept_loop(move || with_deadline(listener.accept()?.0), metrics, busy)?;
            Ok(shown)
        }
        Endpoint::Unix(path) => {
            if let Ok(meta) = std::fs::symlink_metadata(path) {
                use std::os::unix::fs::FileTypeExt;
                if !meta.file_type().is_socket() {
                    return Err(io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        format!("{}: exists and is not a socket", path.display()),
                    ));
                }
                std::fs::remove_file(path)?;
            }
            let listener = UnixListener::bind(path)?;
            accept_loop(move || with_deadline(listener.accept()?.0), metrics, busy)?;
            Ok(path.display().to_string())
        }
    }
}

/// A stream whose reads and writes can be given a deadline.
trait Deadline: Sized {
    fn deadline(&self, d: Duration) -> io::Result<()>;
}

impl Deadline for std::net::TcpStream {
    fn deadline(&self, d: Duration) -> io::Result<()> {
        self.set_read_timeout(Some(d))?;
        self.set_write_timeout(Some(d))
    }
}

impl Deadline for std::os::unix::net::UnixStream {
    fn deadline(&self, d: Duration) -> io::Result<()> {
        self.set_read_timeout(Some(d))?;
        self.set_write_timeout(Some(d))
    }
}

/// `stream` with [`DEADLINE`] on its reads and writes.
fn with_deadline<S: Deadline>(stream: S) -> io::Result<S> {
    stream.deadline(DEADLINE)?;
    Ok(stream)
}

/// Accept connections (with their deadlines set) on a thread and answer
/// each on a thread of its own.
fn accept_loop<S, F>(mut accept: F, metrics: Arc<Metrics>, busy: Arc<AtomicUsize>) -> io::Result<()>
where
    S: Read + Write + Send + 'static,
    F: FnMut() -> io::Result<S> + Send + 'static,
{
    std::thread::Builder::new()
        .name("lever-metrics".into())
        .spawn(move || loop {
            match accept() {
                Ok(stream) => spawn_answer(stream, &metrics, &busy),
                // Out of descriptors and the like: do not spin.
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        })?;
    Ok(())
}

fn spawn_answer<S: Read + Write + Send + 'static>(
    mut stream: S,
    metrics: &Arc<Metrics>,
    busy: &Arc<AtomicUsize>,
) {
    if busy.fetch_add(1, Ordering::AcqRel) >= MAX_CONNS {
        busy.fetch_sub(1, Ordering::AcqRel);
        let _ = stream.write_all(&response(503, "text/plain", "busy\n"));
        return;
    }
    let metrics = Arc::clone(metrics);
    let done = Arc::clone(busy);
    let spawned = std::thread::Builder::new()
        .name("lever-metrics-conn".into())
        .spawn(move || {
            let _ = answer(&mut stream, &metrics);
            done.fetch_sub(1, Ordering::AcqRel);
        });
    if spawned.is_err() {
        // The closure, and its decrement, never ran.
        busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Read one request head and answer it.
fn answer<S: Read + Write>(stream: &mut S, metrics: &Metrics) -> io::Result<()> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        if head.len() > MAX_HEAD {
            return stream.write_all(&response(431, "text/plain", "request head too large\n"));
        }
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    let mut first = text.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let reply = match (method, path) {
        ("GET" | "HEAD", "/metrics") => {
            let wants_om = text.lines().any(|l| {
                let l = l.to_ascii_lowercase();
                l.starts_with("accept:") && l.contains("application/openmetrics-text")
            });
            let (kind, body) = if wants_om {
                (
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    metrics.openmetrics(),
                )
            } else {
                (
                    "text/plain; version=0.0.4; charset=utf-8",
                    metrics.prometheus_text(),
                )
            };
            let mut r = response(200, kind, &body);
            if method == "HEAD" {
                let end = r
                    .windows(4)
                    .position(|w| w == b"\r\n\r\n")
                    .map_or(r.len(), |p| p + 4);
                r.truncate(end);
            }
            r
        }
        ("GET" | "HEAD", _) => response(404, "text/plain", "only /metrics is served\n"),
        _ => response(405, "text/plain", "only GET /metrics is served\n"),
    };
    stream.write_all(&reply)
}

fn response(status: u16, kind: &str, body: &str) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        _ => "Service Unavailable",
    };
    let mut r = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body.as_bytes());
    r
}

/// Write `lever.prom` in `dir` for node_exporter's textfile collector now
/// and every `every`, on a thread; each write goes to a temporary file
/// first and is renamed into place, so the collector never reads half a
/// file. The first write happens before this returns (its error is the
/// caller's); later failures are retried at the next interval.
pub fn textfile(dir: &Path, every: Duration, metrics: Arc<Metrics>) -> io::Result<PathBuf> {
    let path = dir.join("lever.prom");
    write_textfile(&path, &metrics)?;
    let thread_path = path.clone();
    std::thread::Builder::new()
        .name("lever-textfile".into())
        .spawn(move || loop {
            std::thread::sleep(every);
            let _ = write_textfile(&thread_path, &metrics);
        })?;
    Ok(path)
}

fn write_textfile(path: &Path, metrics: &Metrics) -> io::Result<()> {
    let tmp = path.with_extension(format!("prom.{}", std::process::id()));
    std::fs::write(&tmp, metrics.prometheus_text())?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_and_refuse_the_network() {
        assert_eq!(
            "127.0.0.1:9464".parse::<Endpoint>().unwrap(),
            Endpoint::Tcp("127.0.0.1:9464".parse().unwrap())
        );
        assert_eq!(
            "/run/lever/metrics.sock".parse::<Endpoint>().unwrap(),
            Endpoint::Unix("/run/lever/metrics.sock".into())
        );
        let err = "0.0.0.0:9464".parse::<Endpoint>().unwrap_err();
        assert!(err.contains("only a loopback address"), "{err}");
    }

    #[test]
    fn http_answers_metrics_and_refuses_the_rest() {
        let m = Metrics::new("0.1.0", "qcs6490", vec![]);
        let ask = |req: &str| {
            let mut io = Duplex(std::io::Cursor::new(req.as_bytes().to_vec()), Vec::new());
            answer(&mut io, &m).unwrap();
            String::from_utf8(io.1).unwrap()
        };
        let plain = ask("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(plain.starts_with("HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4"));
        assert!(plain.contains("lever_requests_live 0\n"));
        let om = ask(
            "GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text;version=1.0.0\r\n\r\n",
        );
        assert!(om.contains("application/openmetrics-text") && om.ends_with("# EOF\n"));
        assert!(ask("GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(ask("POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        let huge = format!("GET /metrics HTTP/1.1\r\nX: {}", "a".repeat(10_000));
        assert!(ask(&huge).starts_with("HTTP/1.1 431"));
        let head = ask("HEAD /metrics HTTP/1.1\r\n\r\n");
        assert!(head.ends_with("\r\n\r\n"), "{head}");
    }

    #[test]
    fn a_loopback_port_serves_and_a_socket_path_is_not_clobbered() {
        let m = Arc::new(Metrics::new("0.1.0", "qcs6490", vec![]));
        let at = serve(&Endpoint::Tcp("127.0.0.1:0".parse().unwrap()), m.clone()).unwrap();
        let mut s = std::net::TcpStream::connect(&at).unwrap();
        s.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        assert!(
            out.starts_with("HTTP/1.1 200 OK") && out.contains("lever_clients 0"),
            "{out}"
        );

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-socket");
        std::fs::write(&file, "keep me").unwrap();
        let err = serve(&Endpoint::Unix(file.clone()), m).unwrap_err();
        assert!(
            err.to_string().contains("exists and is not a socket"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
    }

    /// Reads from one buffer, writes to another.
    struct Duplex(std::io::Cursor<Vec<u8>>, Vec<u8>);
    impl Read for Duplex {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            self.0.read(b)
        }
    }
    impl Write for Duplex {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.1.write(b)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
}
