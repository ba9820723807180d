//! A seeded random sequence of everything that makes and ends requests —
//! perflocks, use cases, registered apps starting and exiting, releases,
//! clients that vanish, timed requests expiring — against a real daemon
//! on a simulated qcs6490. At the end every node, cgroup file and cgroup
//! of the board is back: the whole tree equals its snapshot byte for byte,
//! and the test process's own threads (which app-launch's thread rule
//! touches) have their affinity back.
//!
//! The seed is printed; `LEVER_SEED=N` replays one, `LEVER_STEPS=N` makes
//! the sequence longer.

mod common;

use common::daemon::{state_dir, wait_until, Daemon};
use lever_client::{Acquire, Client, Handle, Lease, Priority, Signal, SignalLease};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

/// Every file (content) and directory (`None`) below `root`. The daemon
/// may be writing while this walks (a file replaced by rename, a
/// directory removed): what vanishes between listing and reading is left
/// out, and the caller compares again until the trees settle.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && dir != root => continue,
            Err(e) => panic!("{}: {e}", dir.display()),
        };
        for e in entries {
            let Ok(e) = e else { continue };
            let path = e.path();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                out.insert(rel, None);
                todo.push(path);
            } else {
                out.insert(rel, Some(std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    out
}

fn diff(a: &BTreeMap<PathBuf, Option<Vec<u8>>>, b: &BTreeMap<PathBuf, Option<Vec<u8>>>) -> String {
    let show = |v: Option<&Option<Vec<u8>>>| match v {
        None => "(absent)".to_string(),
        Some(None) => "(dir)".to_string(),
        Some(Some(b)) => format!("{:?}", String::from_utf8_lossy(b)),
    };
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .take(20)
        .map(|k| {
            format!(
                "{}: {} -> {}\n",
                k.display(),
                show(a.get(k)),
                show(b.get(k))
            )
        })
        .collect()
}

/// xorshift64*: small, seeded, good enough to pick operations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The CPUs of each thread of this process.
fn own_affinities() -> Vec<(i32, Vec<u32>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc/self/task").unwrap() {
        let tid: i32 = e.unwrap().file_name().to_str().unwrap().parse().unwrap();
        let Some(pid) = rustix::process::Pid::from_raw(tid) else {
            continue;
        };
        if let Ok(set) = rustix::thread::sched_getaffinity(Some(pid)) {
            let cpus = (0..rustix::thread::CpuSet::MAX_CPU as u32)
                .filter(|&c| set.is_set(c as usize))
                .collect();
            out.push((tid, cpus));
        }
    }
    out.sort();
    out
}

#[test]
fn a_random_sequence_of_requests_apps_and_exits_leaves_the_board_as_it_was() {
    let seed: u64 = std::env::var("LEVER_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    let steps: usize = std::env::var("LEVER_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(80);
    println!("seed {seed} ({steps} steps; replay with LEVER_SEED={seed})");
    let mut rng = Rng(seed);
    let dir = state_dir();
    let d = Daemon::start(dir.path(), &["--no-apps"]);
    let sim = dir.path().join("sim");
    let before = snapshot(&sim);
    let threads_before = own_affinities();

    let mut clients: Vec<(Client, Vec<Handle>)> = Vec::new();
    let mut apps: Vec<Child> = Vec::new();
    let mut log = Vec::new();
    for step in 0..steps {
        let op = rng.below(8);
        if clients.is_empty() || (op == 0 && clients.len() < 4) {
            clients.push((d.client(), Vec::new()));
            log.push(format!("{step}: new client"));
            continue;
        }
        let ci = rng.below(clients.len());
        let timed = rng.below(2) == 0;
        let lease = if timed {
            Lease::from_ms(20 + rng.below(200) as u32)
        } else {
            Lease::UntilReleased
        };
        match op {
            1 => {
                let (op, values): (u32, &[i64]) = match rng.below(3) {
                    0 => (0x44008100, &[300000, 1152000, 1958400]),
                    1 => (0x44000000, &[0, 300, 1024]),
                    _ => (0x48400000, &[315000000, 450000000]),
                };
                let v = values[rng.below(values.len())];
                let r = clients[ci].0.acquire_with(Acquire {
                    handle: None,
                    lease,
                    priority: Priority::ThirdPartyLow,
                    detach: false,
                    report: false,
                    pairs: vec![(op, v)],
                });
                log.push(format!(
                    "{step}: client {ci} perflock 0x{op:08x}={v} {lease:?}: {r:?}"
                ));
                if let Ok(h) = r {
                    clients[ci].1.push(h);
                }
            }
            2 => {
                let names = ["app-launch", "camera-preview", "video-decode"];
                let name = names[rng.below(names.len())];
                let r = clients[ci].0.signal(Signal {
                    usecase: name.into(),
                    lease: if rng.below(2) == 0 {
                        SignalLease::UseCaseDefault
                    } else {
                        SignalLease::Given(lease)
                    },
                    priority: Priority::ThirdPartyLow,
                    detach: false,
                    report: false,
                    fps: std::num::NonZeroU32::new(30 * rng.below(3) as u32),
                    width: None,
                    height: None,
                });
                log.push(format!("{step}: client {ci} signal {name}: {r:?}"));
                if let Ok(h) = r {
                    clients[ci].1.push(h);
                }
            }
            3 => {
                let held = &mut clients[ci].1;
                if !held.is_empty() {
                    let h = held.swap_remove(rng.below(held.len()));
                    // A timed one may have ended already: refused, fine.
                    let r = clients[ci].0.release(h);
                    log.push(format!("{step}: client {ci} release {h}: {r:?}"));
                }
            }
            4 => {
                clients.swap_remove(ci);
                log.push(format!("{step}: client {ci} gone"));
            }
            5 => {
                let child = Command::new("sleep").arg("30").spawn().unwrap();
                let r = clients[ci].0.register(child.id(), "gst-camera");
                log.push(format!("{step}: app pid {} registered: {r:?}", child.id()));
                apps.push(child);
            }
            6 => {
                if !apps.is_empty() {
                    let mut child = apps.swap_remove(rng.below(apps.len()));
                    child.kill().unwrap();
                    child.wait().unwrap();
                    log.push(format!("{step}: app pid {} exited", child.id()));
                }
            }
            _ => std::thread::sleep(Duration::from_millis(rng.below(30) as u64)),
        }
    }
    drop(clients);
    for mut child in apps {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let mut after = snapshot(&sim);
    let back = wait_until(Duration::from_secs(10), || {
        after = snapshot(&sim);
        after == before
    });
    assert!(
        back.is_some(),
        "seed {seed}: the board differs:\n{}\nsteps:\n{}\ndaemon:\n{}",
        diff(&before, &after),
        log.join("\n"),
        d.log()
    );
    assert_eq!(own_affinities(), threads_before, "seed {seed}");
    assert_eq!(d.client().status().unwrap().live_requests, 0, "seed {seed}");
}
