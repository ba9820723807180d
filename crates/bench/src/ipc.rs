//! Communication latencies and bandwidths: `lat_pipe`, `lat_unix`,
//! `lat_tcp`, `lat_udp`, `lat_connect`, `lat_select`, `lat_sem`,
//! `lat_ctx-N-SIZEk`, `bw_pipe`, `bw_unix`, `bw_tcp`.
//!
//! The echo peer is a thread (LMBench forks a process); with `--cpu N`
//! both run on that CPU, as `taskset` would put LMBench's two processes,
//! and without it the runner pins the test with its peers to the CPU it
//! started on ([`crate::catalog::TestDef::peers`]), so that every sample
//! and every rerun has both ends on one CPU.
//! `lat_ctx` needs separate address spaces to mean anything, so its ring
//! members are processes: the `lever` binary's helper mode.

use crate::catalog::{Env, Section, TestDef};
use crate::runner::{boxed, timed, Bench};
use crate::{io_err, BenchError};
use std::fs::File;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A thread that answers every byte it reads with a byte, until EOF.
fn echo_thread<R: Read + Send + 'static, W: Write + Send + 'static>(mut r: R, mut w: W) {
    std::thread::spawn(move || {
        let mut b = [0u8; 1];
        while matches!(r.read(&mut b), Ok(1)) {
            if w.write_all(&b).is_err() {
                break;
            }
        }
    });
}

/// A thread that reads and drops everything until EOF.
fn sink_thread<R: Read + Send + 'static>(mut r: R, chunk: usize) {
    std::thread::spawn(move || {
        let mut b = vec![0u8; chunk];
        while matches!(r.read(&mut b), Ok(n) if n > 0) {}
    });
}

fn round_trips<R: Read, W: Write>(r: &mut R, w: &mut W, n: u64) -> Result<Duration, BenchError> {
    let mut b = [0u8; 1];
    timed(n, || {
        w.write_all(&b).map_err(io_err("write".into()))?;
        r.read_exact(&mut b).map_err(io_err("read".into()))
    })
}

/// A pipe as two `File`s (read end, write end), close-on-exec so the
/// helper processes of `lat_ctx` hold only the ends they are given.
fn pipe() -> Result<(File, File), BenchError> {
    let (r, w) =
        rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| BenchError::Io {
            what: "pipe".into(),
            source: e.into(),
        })?;
    Ok((File::from(r), File::from(w)))
}

fn tcp_pair() -> Result<(TcpStream, TcpStream), BenchError> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(io_err("bind".into()))?;
    let c = TcpStream::connect(l.local_addr().map_err(io_err("addr".into()))?)
        .map_err(io_err("connect".into()))?;
    let (s, _) = l.accept().map_err(io_err("accept".into()))?;
    c.set_nodelay(true).map_err(io_err("nodelay".into()))?;
    s.set_nodelay(true).map_err(io_err("nodelay".into()))?;
    Ok((c, s))
}

fn stream_bw<W: Write>(
    w: &mut W,
    chunk: &[u8],
    total: usize,
    n: u64,
) -> Result<Duration, BenchError> {
    let start = Instant::now();
    for _ in 0..n {
        let mut sent = 0;
        while sent < total {
            w.write_all(chunk).map_err(io_err("write".into()))?;
            sent += chunk.len();
        }
    }
    Ok(start.elapsed())
}

/// The tests of this module.
pub fn tests(quick: bool) -> Vec<TestDef> {
    let mut v = vec![
        // Round trip of one byte: write to the peer, read its answer.
        TestDef::us("lat_pipe", Section::Ipc, 1.0, |_| {
            let (mut r1, w1) = pipe()?;
            let (r2, mut w2) = pipe()?;
            echo_thread(r2, w1);
            boxed(move |n| round_trips(&mut r1, &mut w2, n))
        }),
        TestDef::us("lat_unix", Section::Ipc, 1.0, |_| {
            let (mut a, b) = UnixStream::pair().map_err(io_err("socketpair".into()))?;
            echo_thread(b.try_clone().map_err(io_err("dup".into()))?, b);
            let mut w = a.try_clone().map_err(io_err("dup".into()))?;
            boxed(move |n| round_trips(&mut a, &mut w, n))
        }),
        TestDef::us("lat_tcp", Section::Ipc, 1.0, |_| {
            let (mut c, s) = tcp_pair()?;
            echo_thread(s.try_clone().map_err(io_err("dup".into()))?, s);
            let mut w = c.try_clone().map_err(io_err("dup".into()))?;
            boxed(move |n| round_trips(&mut c, &mut w, n))
        }),
        TestDef::us("lat_udp", Section::Ipc, 1.0, |_| {
            let server =
                UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).map_err(io_err("bind".into()))?;
            let client =
                UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).map_err(io_err("bind".into()))?;
            client
                .connect(server.local_addr().map_err(io_err("addr".into()))?)
                .map_err(io_err("connect".into()))?;
            std::thread::spawn(move || {
                let mut b = [0u8; 4];
                // A 0-byte datagram ends the peer (sent on drop below).
                while let Ok((n, from)) = server.recv_from(&mut b) {
                    if n == 0 || server.send_to(&b[..n], from).is_err() {
                        break;
                    }
                }
            });
            let c = Closer(client);
            boxed(move |n| {
                let mut b = [1u8; 4];
                timed(n, || {
                    c.0.send(&b).map_err(io_err("send".into()))?;
                    c.0.recv(&mut b).map_err(io_err("recv".into()))?;
                    Ok(())
                })
            })
        }),
        // connect + accept + close of a localhost TCP connection.
        TestDef::us("lat_connect", Section::Ipc, 1.0, |_| {
            let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(io_err("bind".into()))?;
            let addr = l.local_addr().map_err(io_err("addr".into()))?;
            boxed(move |n| {
                timed(n, || {
                    let c = TcpStream::connect(addr).map_err(io_err("connect".into()))?;
                    let (s, _) = l.accept().map_err(io_err("accept".into()))?;
                    drop((c, s));
                    Ok(())
                })
            })
        }),
        // select() on 200 TCP descriptors (100 connections, both ends).
        TestDef::us("lat_select-200tcp", Section::Ipc, 1.0, |_| {
            let mut socks = Vec::new();
            for _ in 0..100 {
                let (a, b) = tcp_pair()?;
                socks.push(a);
                socks.push(b);
            }
            boxed(move |n| {
                let fds: Vec<_> = socks.iter().map(|s| s.as_fd()).collect();
                timed(n, || {
                    lever_syscalls::select_readable(&fds).map_err(io_err("select".into()))?;
                    Ok(())
                })
            })
        }),
        // Two SysV semaphores passed back and forth with a peer thread.
        TestDef::us("lat_sem", Section::Ipc, 1.0, |_| {
            let ping = std::sync::Arc::new(
                lever_syscalls::SysvSemaphore::new().map_err(io_err("semget".into()))?,
            );
            let pong = std::sync::Arc::new(
                lever_syscalls::SysvSemaphore::new().map_err(io_err("semget".into()))?,
            );
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (pi, po, st) = (ping.clone(), pong.clone(), stop.clone());
            std::thread::spawn(move || {
                while pi.op(-1).is_ok() && !st.load(std::sync::atomic::Ordering::Relaxed) {
                    if po.op(1).is_err() {
                        break;
                    }
                }
            });
            let guard = SemStop {
                ping: ping.clone(),
                stop,
            };
            boxed(move |n| {
                let _keep = &guard;
                timed(n, || {
                    ping.op(1).map_err(io_err("semop".into()))?;
                    pong.op(-1).map_err(io_err("semop".into()))
                })
            })
        }),
    ];
    v.push(stream_test("bw_pipe", || {
        let (r, w) = pipe()?;
        Ok((w, r))
    }));
    v.push(stream_test("bw_unix", || {
        UnixStream::pair().map_err(io_err("socketpair".into()))
    }));
    v.push(stream_test("bw_tcp", tcp_pair));
    let combos: &[(usize, usize)] = if quick {
        &[(2, 0), (2, 16), (4, 64), (8, 0), (16, 0)]
    } else {
        &[
            (2, 0),
            (2, 16),
            (2, 64),
            (2, 128),
            (2, 256),
            (4, 0),
            (4, 64),
            (4, 128),
            (4, 256),
            (8, 0),
            (8, 64),
            (16, 0),
            (16, 64),
        ]
    };
    for &(procs, kb) in combos {
        v.push(TestDef::us(
            format!("lat_ctx-{procs}-{kb}k"),
            Section::ContextSwitch,
            procs as f64,
            move |env| boxed(Ring::new(env, procs, kb)?),
        ));
    }
    // Every test here but connect and select talks to a peer thread or
    // process: pinned with it to one CPU by the runner.
    v.into_iter()
        .map(|t| match t.name.as_str() {
            "lat_connect" | "lat_select-200tcp" => t,
            _ => t.with_peers(),
        })
        .collect()
}

/// Bytes per iteration of the `bw_*` stream tests, and per write.
const STREAM_BYTES: usize = 4 << 20;
const STREAM_CHUNK: usize = 64 << 10;

/// A `bw_*` test: `connect` makes (our write end, the reader's end); a
/// thread drains the reader.
fn stream_test<W, R>(name: &str, connect: fn() -> Result<(W, R), BenchError>) -> TestDef
where
    W: Write + 'static,
    R: Read + Send + 'static,
{
    TestDef::mb_per_s(name, Section::IoBandwidth, STREAM_BYTES as f64, move |_| {
        let (mut w, r) = connect()?;
        sink_thread(r, STREAM_CHUNK);
        let buf = vec![3u8; STREAM_CHUNK];
        boxed(move |n| stream_bw(&mut w, &buf, STREAM_BYTES, n))
    })
}

/// Closes the UDP peer by sending it an empty datagram.
struct Closer(UdpSocket);

impl Drop for Closer {
    fn drop(&mut self) {
        let _ = self.0.send(&[]);
    }
}

/// Lets the semaphore peer thread end when the test is dropped.
struct SemStop {
    ping: std::sync::Arc<lever_syscalls::SysvSemaphore>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for SemStop {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = self.ping.op(1);
    }
}

/// `lat_ctx`: we and `procs - 1` helper processes form a ring of pipes; a
/// token goes round, and each member sums its `kb` KiB working set when it
/// holds the token. A sample is `procs` hops; the cost of one hop within a
/// single process (pipe write + read + the sum) is measured first and
/// taken off, leaving the context switch, as LMBench does.
struct Ring {
    to_next: Option<File>,
    from_last: File,
    children: Vec<Child>,
    work: Vec<u64>,
    overhead_per_hop: Duration,
    procs: usize,
}

impl Ring {
    fn new(env: &Env, procs: usize, kb: usize) -> Result<Ring, BenchError> {
        let argv = env.helper.clone().ok_or(BenchError::NeedsHelper)?;
        let (first_r, to_next) = pipe()?;
        let mut prev_r = first_r;
        let mut children = Vec::new();
        for _ in 1..procs {
            let (r, w) = pipe()?;
            let child = Command::new(&argv[0])
                .args(&argv[1..])
                .args(["ctx", &kb.to_string()])
                .stdin(Stdio::from(OwnedFd::from(prev_r)))
                .stdout(Stdio::from(OwnedFd::from(w)))
                .spawn()
                .map_err(io_err("spawn the helper".into()))?;
            children.push(child);
            prev_r = r;
        }
        let mut ring = Ring {
            to_next: Some(to_next),
            from_last: prev_r,
            children,
            work: vec![1; kb * 1024 / 8],
            overhead_per_hop: Duration::ZERO,
            procs,
        };
        ring.overhead_per_hop = ring.hop_overhead()?;
        Ok(ring)
    }

    /// One hop without a switch: write and read a pipe of our own, and sum.
    /// The least of five batches: a preemption during one batch (a busy
    /// machine) would otherwise inflate what is taken off every sample.
    fn hop_overhead(&self) -> Result<Duration, BenchError> {
        let (mut r, mut w) = pipe()?;
        let mut b = [0u8; 1];
        let n = 400;
        let mut best = Duration::MAX;
        for _ in 0..5 {
            let d = timed(n, || {
                w.write_all(&b).map_err(io_err("write".into()))?;
                r.read_exact(&mut b).map_err(io_err("read".into()))?;
                std::hint::black_box(sum(&self.work));
                Ok(())
            })?;
            best = best.min(d / n as u32);
        }
        Ok(best)
    }
}

pub(crate) fn sum(work: &[u64]) -> u64 {
    work.iter().fold(0u64, |a, &b| a.wrapping_add(b))
}

impl Bench for Ring {
    fn run(&mut self, iters: u64) -> Result<Duration, BenchError> {
        let mut b = [0u8; 1];
        let Some(to_next) = self.to_next.as_mut() else {
            return Err(BenchError::Broken("lat_ctx: the ring is closed".into()));
        };
        let start = Instant::now();
        for _ in 0..iters {
            std::hint::black_box(sum(&self.work));
            to_next.write_all(&b).map_err(io_err("write".into()))?;
            self.from_last
                .read_exact(&mut b)
                .map_err(io_err("read from the ring".into()))?;
        }
        let d = start.elapsed();
        let overhead =
            self.overhead_per_hop * (self.procs as u32) * iters.min(u32::MAX as u64) as u32;
        Ok(d.saturating_sub(overhead))
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // Closing our write end lets EOF travel round the ring.
        drop(self.to_next.take());
        for c in &mut self.children {
            let _ = c.wait();
        }
    }
}

/// The helper side of `lat_ctx`: read a byte from stdin, sum the working
/// set, write it to stdout, until EOF.
pub fn ctx_member(kb: usize) -> Result<(), BenchError> {
    let work = vec![1u64; kb * 1024 / 8];
    let mut input = std::io::stdin().lock();
    let mut output = std::io::stdout().lock();
    let mut b = [0u8; 1];
    while input.read(&mut b).map_err(io_err("read stdin".into()))? == 1 {
        std::hint::black_box(sum(&work));
        output
            .write_all(&b)
            .map_err(io_err("write stdout".into()))?;
        output.flush().map_err(io_err("flush".into()))?;
    }
    Ok(())
}
