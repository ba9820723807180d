//! Serving [`Metrics`] to Prometheus: an HTTP endpoint on a Unix socket or
//! a loopback TCP port (`lever daemon --metrics PATH|ADDR`), and
//! node_exporter's textfile collector (`--metrics-textfile DIR`).
//!
//! Both run on threads of their own, reading the counters the event loop
//! keeps, so a slow or hostile scraper costs the loop nothing. The HTTP
//! side is the least a scraper needs: `GET /metrics` (OpenMetrics when the
//! `Accept` header asks for it, else the 0.0.4 text), one request per
//! connection, an 8 KiB request head that must arrive within 2 s of the
//! accept (one deadline for the whole head, not per read: a client
//! sending a byte now and then is closed when it passes), at most 8
//! connections served at once — a 9th closes the oldest one still sending
//! its head, so slow clients cannot keep a scraper out.
use crate::metrics::Metrics;
use std::io::{self, Read, Write};
use std::net::ToSocketAddrs;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where `--metrics` listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A loopback TCP address (`127.0.0.1:9464`, `[::1]:9464`,
    /// `localhost:9464` resolved).
    Tcp(SocketAddr),
    /// A Unix socket path (a value with a `/`).
    Unix(PathBuf),
}

impl std::str::FromStr for Endpoint {
    type Err = String;

    /// A value with a `/` is a socket path (`/run/lever/metrics.sock`,
    /// `./metrics.sock`); anything else must be `HOST:PORT` (`127.0.0.1:9464`,
    /// `[::1]:9464`, `localhost:9464`) and is a TCP address, served only
    /// when it is loopback: the daemon's counters are not for the network
    /// at large (put a proxy in front for that), so `0:9464`,
    /// `0.0.0.0:9464` and a name that resolves to another address are
    /// refused. Never a file created from a mistyped address.
    fn from_str(s: &str) -> Result<Endpoint, String> {
        if s.is_empty() {
            return Err("--metrics: empty address".into());
        }
        if s.contains('/') {
            return Ok(Endpoint::Unix(PathBuf::from(s)));
        }
        let refuse_network = |addr: &dyn std::fmt::Display| {
            format!(
                "--metrics {s}: {addr} is not loopback; only a loopback address (127.0.0.1, [::1], localhost) or a socket path is served"
            )
        };
        if let Ok(addr) = s.parse::<SocketAddr>() {
            return if addr.ip().is_loopback() {
                Ok(Endpoint::Tcp(addr))
            } else {
                Err(refuse_network(&addr.ip()))
            };
        }
        let Some((host, port)) = s.rsplit_once(':') else {
            return Err(format!(
                "--metrics {s}: neither HOST:PORT (127.0.0.1:9464) nor a socket path (a path has a `/`: ./{s})"
            ));
        };
        let port: u16 = port
            .parse()
            .map_err(|_| format!("--metrics {s}: `{port}` is not a TCP port (0-65535)"))?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(format!(
                "--metrics {s}: no host; give 127.0.0.1:{port} (only loopback is served)"
            ));
        }
        // `0` is the unspecified address to the resolver: every interface.
        if host == "0" {
            return Err(refuse_network(&"0 (every interface)"));
        }
        let resolved: Vec<SocketAddr> = match (host, port).to_socket_addrs() {
            Ok(found) => found.collect(),
            // A machine without /etc/hosts still knows what localhost is.
            Err(_) if host.eq_ignore_ascii_case("localhost") => {
                vec![SocketAddr::from(([127, 0, 0, 1], port))]
            }
            Err(e) => return Err(format!("--metrics {s}: cannot resolve {host}: {e}")),
        };
        if let Some(other) = resolved.iter().find(|a| !a.ip().is_loopback()) {
            return Err(refuse_network(&format!("{host} ({})", other.ip())));
        }
        // IPv4 first: what `localhost` means to most scrapers.
        resolved
            .iter()
            .find(|a| a.is_ipv4())
            .or_else(|| resolved.first())
            .map(|a| Endpoint::Tcp(*a))
            .ok_or_else(|| format!("--metrics {s}: {host} resolves to no address"))
    }
}

const MAX_HEAD: usize = 8192;
/// From accept to the end of the request head, in all (not per read).
const DEADLINE: Duration = Duration::from_secs(2);
/// Connections served at once; past it the oldest one still sending its
/// head is closed to make room.
const MAX_CONNS: usize = 8;
/// Connections alive at once, closed ones still finishing included; past
/// it a connection is answered 503.
const MAX_THREADS: usize = 2 * MAX_CONNS;

/// Bind `endpoint` and serve `metrics` on a thread until the process
/// ends. Returns the bound address as text (a TCP port of 0 becomes the
/// real one).
pub fn serve(endpoint: &Endpoint, metrics: Arc<Metrics>) -> io::Result<String> {
    let slots = Arc::new(Mutex::new(Slots::default()));
    match endpoint {
        Endpoint::Tcp(addr) => {
            let listener = TcpListener::bind(addr)?;
            let shown = listener.local_addr()?.to_string();
            accept_loop(move || Ok(listener.accept()?.0), metrics, slots)?;
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
            accept_loop(move || Ok(listener.accept()?.0), metrics, slots)?;
            Ok(path.display().to_string())
        }
    }
}

/// A connection the endpoint serves: its reads and writes take timeouts,
/// and another thread can close it.
trait Stream: Read + Write + Send + Sized + 'static {
    fn set_timeouts(&self, read: Option<Duration>, write: Option<Duration>) -> io::Result<()>;
    /// A handle that shuts the connection down (its blocked read returns).
    fn closer(&self) -> io::Result<Closer>;
}

/// Shuts one connection down from the accept thread.
type Closer = Box<dyn Fn() + Send>;

/// The two socket types have the same calls under the same names.
macro_rules! stream_impl {
    ($t:ty) => {
        impl Stream for $t {
            fn set_timeouts(
                &self,
                read: Option<Duration>,
                write: Option<Duration>,
            ) -> io::Result<()> {
                if read.is_some() {
                    self.set_read_timeout(read)?;
                }
                if write.is_some() {
                    self.set_write_timeout(write)?;
                }
                Ok(())
            }
            fn closer(&self) -> io::Result<Closer> {
                let twin = self.try_clone()?;
                Ok(Box::new(move || {
                    let _ = twin.shutdown(std::net::Shutdown::Both);
                }))
            }
        }
    };
}

stream_impl!(std::net::TcpStream);
stream_impl!(std::os::unix::net::UnixStream);

/// The connections being served: those still sending their request head
/// (oldest first, each with a way to close it), those being answered, and
/// those closed to make room whose threads have not ended yet.
#[derive(Default)]
struct Slots {
    next: u64,
    reading: std::collections::VecDeque<(u64, Closer)>,
    answering: usize,
    closing: usize,
}

impl Slots {
    fn serving(&self) -> usize {
        self.reading.len() + self.answering
    }

    /// Admit a new connection: its id, or None (answer 503). At
    /// [`MAX_CONNS`] the oldest connection still sending its head is
    /// closed to make room — a slow client cannot keep a scraper out.
    fn admit(&mut self, closer: Closer) -> Option<u64> {
        if self.serving() + self.closing >= MAX_THREADS {
            return None;
        }
        if self.serving() >= MAX_CONNS {
            let (_, close) = self.reading.pop_front()?;
            close();
            self.closing += 1;
        }
        self.next += 1;
        self.reading.push_back((self.next, closer));
        Some(self.next)
    }

    /// Connection `id` has its head: false if it was closed meanwhile.
    fn head_done(&mut self, id: u64) -> bool {
        match self.reading.iter().position(|(i, _)| *i == id) {
            Some(at) => {
                self.reading.remove(at);
                self.answering += 1;
                true
            }
            None => false,
        }
    }

    /// Connection `id`'s thread ends (`answered`: after [`Slots::head_done`]
    /// said true).
    fn end(&mut self, id: u64, answered: bool) {
        if answered {
            self.answering -= 1;
        } else if let Some(at) = self.reading.iter().position(|(i, _)| *i == id) {
            self.reading.remove(at);
        } else {
            self.closing -= 1;
        }
    }
}

/// Accept connections on a thread and answer each on a thread of its own.
fn accept_loop<S, F>(
    mut accept: F,
    metrics: Arc<Metrics>,
    slots: Arc<Mutex<Slots>>,
) -> io::Result<()>
where
    S: Stream,
    F: FnMut() -> io::Result<S> + Send + 'static,
{
    std::thread::Builder::new()
        .name("lever-metrics".into())
        .spawn(move || loop {
            match accept() {
                Ok(stream) => spawn_answer(stream, Instant::now(), &metrics, &slots),
                // Out of descriptors and the like: do not spin.
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        })?;
    Ok(())
}

fn lock(slots: &Mutex<Slots>) -> std::sync::MutexGuard<'_, Slots> {
    slots.lock().unwrap_or_else(|e| e.into_inner())
}

fn spawn_answer<S: Stream>(
    mut stream: S,
    accepted: Instant,
    metrics: &Arc<Metrics>,
    slots: &Arc<Mutex<Slots>>,
) {
    let busy = |mut stream: S| {
        let _ = stream.set_timeouts(None, Some(Duration::from_millis(100)));
        let _ = stream.write_all(&response(503, "text/plain", "busy\n"));
    };
    if stream.set_timeouts(None, Some(DEADLINE)).is_err() {
        return;
    }
    let Ok(closer) = stream.closer() else {
        return busy(stream);
    };
    let Some(id) = lock(slots).admit(closer) else {
        return busy(stream);
    };
    let metrics = Arc::clone(metrics);
    let thread_slots = Arc::clone(slots);
    let spawned = std::thread::Builder::new()
        .name("lever-metrics-conn".into())
        .spawn(move || {
            let mut answered = false;
            let _ = answer(&mut stream, &metrics, accepted + DEADLINE, || {
                answered = lock(&thread_slots).head_done(id);
                answered
            });
            lock(&thread_slots).end(id, answered);
        });
    if spawned.is_err() {
        // The closure, and its `end`, never ran.
        lock(slots).end(id, false);
    }
}

/// Read one request head, within `deadline` in all (a client sending a
/// byte now and then is closed when it passes, however often it sends),
/// and answer it — if `head_done` says the connection was not closed
/// meanwhile to make room.
fn answer<S: Stream>(
    stream: &mut S,
    metrics: &Metrics,
    deadline: Instant,
    head_done: impl FnOnce() -> bool,
) -> io::Result<()> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        if head.len() > MAX_HEAD {
            return stream.write_all(&response(431, "text/plain", "request head too large\n"));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            let _ = stream.write_all(&response(408, "text/plain", "request head too slow\n"));
            return Err(io::ErrorKind::TimedOut.into());
        }
        stream.set_timeouts(Some(left), None)?;
        let n = match stream.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // The timeout of the last read: the deadline passed.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    if !head_done() {
        return Ok(());
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
        408 => "Request Timeout",
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
        let tcp = |s: &str| s.parse::<Endpoint>();
        assert_eq!(
            tcp("127.0.0.1:9464").unwrap(),
            Endpoint::Tcp("127.0.0.1:9464".parse().unwrap())
        );
        assert_eq!(
            tcp("[::1]:9464").unwrap(),
            Endpoint::Tcp("[::1]:9464".parse().unwrap())
        );
        assert_eq!(
            tcp("/run/lever/metrics.sock").unwrap(),
            Endpoint::Unix("/run/lever/metrics.sock".into())
        );
        assert_eq!(
            tcp("./metrics.sock").unwrap(),
            Endpoint::Unix("./metrics.sock".into())
        );
        // localhost is resolved (to a loopback address), not a file name.
        match tcp("localhost:9464").unwrap() {
            Endpoint::Tcp(a) => assert!(a.ip().is_loopback() && a.port() == 9464, "{a}"),
            other => panic!("{other:?}"),
        }
        match tcp("LOCALHOST:0").unwrap() {
            Endpoint::Tcp(a) => assert!(a.ip().is_loopback() && a.port() == 0, "{a}"),
            other => panic!("{other:?}"),
        }
        // Every interface, or the network: refused, naming the flag.
        for s in ["0.0.0.0:9464", "0:9464", "[::]:9464", "192.168.1.20:9464"] {
            let err = tcp(s).unwrap_err();
            assert!(
                err.starts_with("--metrics ") && err.contains("only a loopback address"),
                "{s}: {err}"
            );
        }
        // Neither HOST:PORT nor a path: refused, saying a path has a `/`.
        for s in ["metrics.sock", "localhost", "9464"] {
            let err = tcp(s).unwrap_err();
            assert!(
                err.starts_with("--metrics ") && err.contains("a path has a `/`"),
                "{s}: {err}"
            );
        }
        let err = tcp("localhost:http").unwrap_err();
        assert!(err.contains("not a TCP port"), "{err}");
        let err = tcp("localhost:70000").unwrap_err();
        assert!(err.contains("not a TCP port"), "{err}");
        let err = tcp(":9464").unwrap_err();
        assert!(err.contains("no host"), "{err}");
        assert!(tcp("").is_err());
    }

    #[test]
    fn the_deadline_covers_the_whole_head_not_each_read() {
        let m = Arc::new(Metrics::new("0.1.0", "qcs6490", vec![]));
        let at = serve(&Endpoint::Tcp("127.0.0.1:0".parse().unwrap()), m).unwrap();
        let mut s = std::net::TcpStream::connect(&at).unwrap();
        let start = Instant::now();
        // A byte every 300 ms: each read is quick, the head never ends.
        let mut closed = None;
        for b in b"GET /metrics HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaa"
            .iter()
            .cycle()
            .take(40)
        {
            if s.write_all(&[*b]).is_err() {
                closed = Some(start.elapsed());
                break;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        let took = closed.unwrap_or_else(|| start.elapsed());
        assert!(out.starts_with("HTTP/1.1 408"), "{out:?}");
        assert!(
            took < DEADLINE + Duration::from_secs(2),
            "a slow head held its connection {took:?}"
        );
    }

    #[test]
    fn a_full_house_closes_the_oldest_slow_head_not_the_newcomer() {
        let m = Arc::new(Metrics::new("0.1.0", "qcs6490", vec![]));
        let at = serve(&Endpoint::Tcp("127.0.0.1:0".parse().unwrap()), m).unwrap();
        let mut slow: Vec<_> = (0..MAX_CONNS)
            .map(|_| {
                let mut s = std::net::TcpStream::connect(&at).unwrap();
                s.write_all(b"G").unwrap();
                s
            })
            .collect();
        std::thread::sleep(Duration::from_millis(100));
        for _ in 0..3 {
            let mut s = std::net::TcpStream::connect(&at).unwrap();
            s.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            assert!(out.starts_with("HTTP/1.1 200 OK"), "{out}");
        }
        // The first scraper closed the oldest slow one, quietly; the slots
        // it freed served the next two, so the other slow ones stay.
        let mut oldest = &slow[0];
        oldest
            .set_read_timeout(Some(Duration::from_secs(1)))
            .unwrap();
        let mut out = Vec::new();
        let n = oldest.read_to_end(&mut out).unwrap();
        assert_eq!(n, 0, "{:?}", String::from_utf8_lossy(&out));
        for s in &mut slow[1..] {
            s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
            let err = s.read(&mut [0u8; 16]).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        }
    }

    #[test]
    fn slots_bound_threads_and_evict_only_heads() {
        let mut slots = Slots::default();
        let closed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let closer = || -> Closer {
            let c = closed.clone();
            Box::new(move || {
                c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            })
        };
        let ids: Vec<u64> = (0..MAX_CONNS)
            .map(|_| slots.admit(closer()).unwrap())
            .collect();
        // All answering: nothing to evict, the newcomer is refused.
        for &id in &ids {
            assert!(slots.head_done(id));
        }
        assert!(slots.admit(closer()).is_none());
        for &id in &ids {
            slots.end(id, true);
        }
        // All reading: each newcomer closes the oldest, up to MAX_THREADS.
        let first: Vec<u64> = (0..MAX_CONNS)
            .map(|_| slots.admit(closer()).unwrap())
            .collect();
        let more: Vec<u64> = (0..MAX_THREADS - MAX_CONNS)
            .map(|_| slots.admit(closer()).unwrap())
            .collect();
        assert_eq!(
            closed.load(std::sync::atomic::Ordering::SeqCst),
            MAX_THREADS - MAX_CONNS
        );
        assert!(
            slots.admit(closer()).is_none(),
            "closed ones still count as threads"
        );
        // An evicted one finds out when its head is done, and ends.
        assert!(!slots.head_done(first[0]));
        slots.end(first[0], false);
        assert!(slots.admit(closer()).is_some());
        for id in first.into_iter().skip(1).chain(more) {
            let answered = slots.head_done(id);
            slots.end(id, answered);
        }
        assert!(
            slots.serving() <= 1 && slots.closing == 0,
            "{} {}",
            slots.serving(),
            slots.closing
        );
    }

    #[test]
    fn http_answers_metrics_and_refuses_the_rest() {
        let m = Metrics::new("0.1.0", "qcs6490", vec![]);
        let ask = |req: &str| {
            let mut io = Duplex(std::io::Cursor::new(req.as_bytes().to_vec()), Vec::new());
            answer(&mut io, &m, Instant::now() + DEADLINE, || true).unwrap();
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
    impl Stream for Duplex {
        fn set_timeouts(&self, _: Option<Duration>, _: Option<Duration>) -> io::Result<()> {
            Ok(())
        }
        fn closer(&self) -> io::Result<Closer> {
            Ok(Box::new(|| {}))
        }
    }
}
