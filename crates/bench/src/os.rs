//! Kernel entry and process tests: `lat_syscall-*`, `lat_sig-*`,
//! `lat_proc-*`, `lat_pagefault`, `lat_mmap`, `lat_fs-*`, and the file
//! read bandwidths `bw_file_rd` / `bw_mmap_rd`.

use crate::catalog::{Section, TestDef};
use crate::runner::{boxed, timed};
use crate::{io_err, BenchError};
use std::fs::File;
use std::hint::black_box;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A scratch file of `len` bytes (pattern, not zeros, so nothing is sparse).
pub(crate) fn scratch_file(dir: &Path, name: &str, len: usize) -> Result<PathBuf, BenchError> {
    let path = dir.join(name);
    let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, data).map_err(io_err(format!("write {}", path.display())))?;
    Ok(path)
}

pub(crate) fn open(path: &Path) -> Result<File, BenchError> {
    File::open(path).map_err(io_err(format!("open {}", path.display())))
}

/// Sum a buffer's 8-byte words, as LMBench sums what it reads so the read
/// cannot be skipped.
pub(crate) fn sum_words(buf: &[u8]) -> u64 {
    buf.chunks_exact(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
        .fold(0u64, u64::wrapping_add)
}

fn helper(env: &Env) -> Result<Vec<std::ffi::OsString>, BenchError> {
    env.helper.clone().ok_or(BenchError::NeedsHelper)
}

use crate::catalog::Env;

/// The tests of this module.
pub fn tests(quick: bool) -> Vec<TestDef> {
    let mut v = vec![
        // getppid: the cheapest real system call (LMBench's "null").
        TestDef::us("lat_syscall-null", Section::Syscalls, 1.0, |_| {
            boxed(|n| {
                timed(n, || {
                    black_box(rustix::process::getppid());
                    Ok(())
                })
            })
        }),
        TestDef::us("lat_syscall-read", Section::Syscalls, 1.0, |_| {
            let f = open(Path::new("/dev/zero"))?;
            let mut b = [0u8; 1];
            boxed(move |n| {
                timed(n, || {
                    rustix::io::read(&f, &mut b).map_err(sys_err("read /dev/zero"))?;
                    Ok(())
                })
            })
        }),
        TestDef::us("lat_syscall-write", Section::Syscalls, 1.0, |_| {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/null")
                .map_err(io_err("open /dev/null".into()))?;
            boxed(move |n| {
                timed(n, || {
                    rustix::io::write(&f, &[0u8]).map_err(sys_err("write /dev/null"))?;
                    Ok(())
                })
            })
        }),
        TestDef::us("lat_syscall-stat", Section::Syscalls, 1.0, |env| {
            let path = scratch_file(&env.dir, "stat-target", 16)?;
            boxed(move |n| {
                timed(n, || {
                    black_box(rustix::fs::stat(&path).map_err(sys_err("stat"))?);
                    Ok(())
                })
            })
        }),
        TestDef::us("lat_syscall-fstat", Section::Syscalls, 1.0, |env| {
            let f = open(&scratch_file(&env.dir, "fstat-target", 16)?)?;
            boxed(move |n| {
                timed(n, || {
                    black_box(rustix::fs::fstat(&f).map_err(sys_err("fstat"))?);
                    Ok(())
                })
            })
        }),
        // open + close, as LMBench's "open" (it cannot open without closing).
        TestDef::us("lat_syscall-open", Section::Syscalls, 1.0, |env| {
            let path = scratch_file(&env.dir, "open-target", 16)?;
            boxed(move |n| {
                timed(n, || {
                    let fd = rustix::fs::open(
                        &path,
                        rustix::fs::OFlags::RDONLY,
                        rustix::fs::Mode::empty(),
                    )
                    .map_err(sys_err("open"))?;
                    drop(fd);
                    Ok(())
                })
            })
        }),
        TestDef::us("lat_sig-install", Section::Signals, 1.0, |_| {
            boxed(|n| {
                timed(n, || {
                    lever_syscalls::install_counting_handler(rustix::process::Signal::USR1.as_raw())
                        .map_err(io_err("sigaction".into()))
                })
            })
        }),
        TestDef::us("lat_sig-catch", Section::Signals, 1.0, |_| {
            let sig = rustix::process::Signal::USR1.as_raw();
            lever_syscalls::install_counting_handler(sig).map_err(io_err("sigaction".into()))?;
            boxed(move |n| {
                let before = lever_syscalls::caught_signals();
                let d = timed(n, || {
                    lever_syscalls::raise_signal(sig).map_err(io_err("raise".into()))
                })?;
                if lever_syscalls::caught_signals() - before < n {
                    return Err(BenchError::Broken(
                        "lat_sig-catch: signals were not all caught".into(),
                    ));
                }
                Ok(d)
            })
        }),
        TestDef::us("lat_sig-prot", Section::Signals, 1.0, |_| {
            let mut page =
                lever_syscalls::ProtectedPage::new().map_err(io_err("protected page".into()))?;
            boxed(move |n| timed(n, || page.fault_once().map_err(io_err("mprotect".into()))))
        }),
        proc_test("lat_proc-fork", "fork"),
        proc_test("lat_proc-exec", "exec"),
        proc_test("lat_proc-shell", "shell"),
    ];
    v.extend(crate::pagefault::tests());
    // mmap + touch one byte every 16 KiB + munmap of a 1 MiB file.
    let mm_bytes = 1 << 20;
    v.push(TestDef::us(
        "lat_mmap-1m",
        Section::FileAndVm,
        1.0,
        move |env| {
            let f = open(&scratch_file(&env.dir, "mmap", mm_bytes)?)?;
            boxed(move |n| {
                timed(n, || {
                    let map = lever_syscalls::MemoryMap::file_read_only(f.as_fd(), mm_bytes)
                        .map_err(io_err("mmap".into()))?;
                    let s = map.as_slice();
                    let mut acc = 0u8;
                    for i in (0..s.len()).step_by(16 << 10) {
                        acc = acc.wrapping_add(s[i]);
                    }
                    black_box(acc);
                    Ok(())
                })
            })
        },
    ));
    for kb in [0usize, 1, 4, 10] {
        let files = if quick { 100 } else { 1000 };
        for (what, deleting) in [("create", false), ("delete", true)] {
            v.push(TestDef::rate(
                format!("lat_fs-{kb}k-{what}"),
                Section::FileAndVm,
                "files/s",
                files as f64,
                1.0,
                move |env| {
                    let dir = env.dir.join(format!("fs-{kb}k-{what}"));
                    boxed(move |n| lat_fs(&dir, n, files, kb << 10, deleting))
                },
            ));
        }
    }
    let file_bytes = 1 << 20;
    v.push(TestDef::mb_per_s(
        "bw_file_rd-io-1mb",
        Section::IoBandwidth,
        file_bytes as f64,
        move |env| {
            let mut f = open(&scratch_file(&env.dir, "bw-file", file_bytes)?)?;
            let mut buf = vec![0u8; 64 << 10];
            boxed(move |n| {
                timed(n, || {
                    use std::io::Seek;
                    f.rewind().map_err(io_err("seek".into()))?;
                    read_sum(&mut f, &mut buf)
                })
            })
        },
    ));
    v.push(TestDef::mb_per_s(
        "bw_file_rd-o2c-1mb",
        Section::IoBandwidth,
        file_bytes as f64,
        move |env| {
            let path = scratch_file(&env.dir, "bw-file-o2c", file_bytes)?;
            let mut buf = vec![0u8; 64 << 10];
            boxed(move |n| timed(n, || read_sum(&mut open(&path)?, &mut buf)))
        },
    ));
    v.push(TestDef::mb_per_s(
        "bw_mmap_rd-mo-1mb",
        Section::IoBandwidth,
        file_bytes as f64,
        move |env| {
            let f = open(&scratch_file(&env.dir, "bw-mmap", file_bytes)?)?;
            let map = lever_syscalls::MemoryMap::file_read_only(f.as_fd(), file_bytes)
                .map_err(io_err("mmap".into()))?;
            boxed(move |n| {
                timed(n, || {
                    black_box(sum_words(map.as_slice()));
                    Ok(())
                })
            })
        },
    ));
    v.push(TestDef::mb_per_s(
        "bw_mmap_rd-o2c-1mb",
        Section::IoBandwidth,
        file_bytes as f64,
        move |env| {
            let path = scratch_file(&env.dir, "bw-mmap-o2c", file_bytes)?;
            boxed(move |n| {
                timed(n, || {
                    let f = open(&path)?;
                    let map = lever_syscalls::MemoryMap::file_read_only(f.as_fd(), file_bytes)
                        .map_err(io_err("mmap".into()))?;
                    black_box(sum_words(map.as_slice()));
                    Ok(())
                })
            })
        },
    ));
    v
}

fn read_sum(f: &mut File, buf: &mut [u8]) -> Result<(), BenchError> {
    loop {
        let got = f.read(buf).map_err(io_err("read".into()))?;
        if got == 0 {
            return Ok(());
        }
        black_box(sum_words(&buf[..got]));
    }
}

/// LMBench's `lat_fs`: create `files` files of `bytes` each in a fresh
/// directory, then delete them; the timed part is creating or deleting.
fn lat_fs(
    dir: &Path,
    iters: u64,
    files: usize,
    bytes: usize,
    time_delete: bool,
) -> Result<Duration, BenchError> {
    let data = vec![7u8; bytes];
    let mut total = Duration::ZERO;
    std::fs::create_dir_all(dir).map_err(io_err(format!("mkdir {}", dir.display())))?;
    for _ in 0..iters {
        let start = Instant::now();
        for i in 0..files {
            let p = dir.join(format!("f{i}"));
            let mut f = File::create(&p).map_err(io_err(format!("create {}", p.display())))?;
            if bytes > 0 {
                f.write_all(&data)
                    .map_err(io_err(format!("write {}", p.display())))?;
            }
        }
        let created = start.elapsed();
        let start = Instant::now();
        for i in 0..files {
            let p = dir.join(format!("f{i}"));
            std::fs::remove_file(&p).map_err(io_err(format!("unlink {}", p.display())))?;
        }
        total += if time_delete {
            start.elapsed()
        } else {
            created
        };
    }
    Ok(total)
}

/// A `lat_proc` test: its iterations run in a fresh process of the
/// helper mode ([`proc_main`]), as LMBench's `lat_proc` is a small
/// process of its own. `fork` copies the page tables of the process that
/// forks: from a pass's process, which holds the machine-speed probes'
/// ~20 MiB and every earlier test's memory, a fork took 780-1,000 µs
/// against LMBench's 272 µs on the same VM, and moved with what that
/// process held.
fn proc_test(name: &str, kind: &'static str) -> TestDef {
    TestDef::us(name, Section::Processes, 1.0, move |env| {
        let argv = helper(env)?;
        boxed(move |n| in_small_process(&argv, kind, n))
    })
}

/// Run `n` iterations of `kind` in a fresh helper process
/// (`lever bench __helper proc KIND N`): its own timing of them.
fn in_small_process(
    argv: &[std::ffi::OsString],
    kind: &str,
    n: u64,
) -> Result<Duration, BenchError> {
    let what = format!("the lat_proc-{kind} process");
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .args(["proc", kind, &n.to_string()])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(io_err(format!("start {what}")))?;
    if !out.status.success() {
        return Err(BenchError::Broken(format!(
            "{what} exited with {}",
            out.status
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let ns: u64 = text
        .trim()
        .parse()
        .map_err(|_| BenchError::Broken(format!("{what} printed {text:?}, not a time in ns")))?;
    Ok(Duration::from_nanos(ns))
}

/// What `lat_proc-exec` and `-shell` start: LMBench's is `hello`, a small
/// dynamically linked program; `/bin/true` is this system's nearest (a
/// few KiB, or busybox's on most boards), else Lever's own helper `null`
/// (tens of MiB, whose start-up is then most of the figure).
fn exec_target() -> Result<Vec<std::ffi::OsString>, BenchError> {
    use std::os::unix::fs::PermissionsExt;
    let tiny = Path::new("/bin/true");
    if std::fs::metadata(tiny).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0) {
        return Ok(vec![tiny.into()]);
    }
    let me = std::env::current_exe().map_err(io_err("find the lever binary".into()))?;
    Ok(vec![
        me.into(),
        "bench".into(),
        "__helper".into(),
        "null".into(),
    ])
}

/// The helper mode `proc KIND N`: `N` forks (the child `_exit`s at once),
/// spawns of [`exec_target`], or `/bin/sh -c` of it, each waited for,
/// timed together in this small process; prints the nanoseconds.
pub(crate) fn proc_main(kind: &str, n: &str) -> Result<(), BenchError> {
    let n: u64 = n
        .parse()
        .map_err(|_| BenchError::Broken(format!("proc: bad count {n:?}")))?;
    let target = exec_target()?;
    let line = target
        .iter()
        .map(|a| shell_quote(&a.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ");
    let elapsed = match kind {
        "fork" => timed(n, || {
            lever_syscalls::fork_exit_wait().map_err(io_err("fork".into()))
        })?,
        "exec" => timed(n, || run_quiet(Command::new(&target[0]).args(&target[1..])))?,
        "shell" => timed(n, || {
            run_quiet(Command::new("/bin/sh").arg("-c").arg(&line))
        })?,
        _ => return Err(BenchError::Broken(format!("proc: unknown kind {kind:?}"))),
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", elapsed.as_nanos()).map_err(io_err("write stdout".into()))
}

fn run_quiet(cmd: &mut Command) -> Result<(), BenchError> {
    let status = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map_err(io_err("spawn the helper".into()))?;
    if status.success() {
        Ok(())
    } else {
        Err(BenchError::Broken(format!("helper exited with {status}")))
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn sys_err(what: &'static str) -> impl Fn(rustix::io::Errno) -> BenchError {
    move |e| BenchError::Io {
        what: what.into(),
        source: e.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting_and_word_sums() {
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
        let mut b = vec![0u8; 16];
        b[0] = 1;
        b[8] = 2;
        assert_eq!(sum_words(&b), 3);
    }
}
