//! Randomized stress test of a real daemon: thousands of acquire, update,
//! release, expiry and client-death steps from concurrent clients (threads
//! with their own connections, and real processes killed with SIGKILL).
//! It must end with the daemon alive and every node at its exact original.

mod common;

use common::{changed, snapshot, LEVER};
use lever_client::{Client, Handle, Lease, Priority};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Clone)]
struct Res {
    opcode: u32,
    low: i64,
    high: i64,
}

#[test]
fn thousands_of_random_steps_end_with_every_node_original() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("lever.sock");
    let mut daemon = Command::new(LEVER)
        .args(["daemon", "--quiet", "--sim", "qcs6490", "--state-dir"])
        .arg(dir.path())
        .arg("--socket")
        .arg(&socket)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(daemon.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("ready on") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "daemon exited early");
    }
    std::thread::spawn(move || {
        let mut sink = String::new();
        while err.read_line(&mut sink).unwrap_or(0) > 0 {
            if sink.contains("warning") {
                eprint!("{sink}");
            }
            sink.clear();
        }
    });
    let before = snapshot(&dir.path().join("sim"));

    // Every resource but the hold-fd ones (a simulated /dev file cannot
    // show a closed descriptor).
    let mut c = Client::connect(&socket).unwrap();
    let status = c.status().unwrap();
    let mut resources = Vec::new();
    for r in &status.resources {
        let ex = c.explain(&r.name).unwrap();
        if ex.spec.kind.as_str() == "hold-fd" {
            continue;
        }
        resources.push(Res {
            opcode: u32::from_str_radix(r.opcode.trim_start_matches("0x"), 16).unwrap(),
            low: ex.spec.low,
            high: ex.spec.high,
        });
    }
    assert!(resources.len() > 40);

    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let socket = socket.clone();
            let resources = resources.clone();
            std::thread::spawn(move || {
                let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ ((t + 1) * 0x1234_5678_9abc));
                let mut client = Client::connect(&socket).unwrap();
                let mut mine: Vec<Handle> = Vec::new();
                let mut steps = 0;
                for _ in 0..1000 {
                    steps += 1;
                    match rng.below(10) {
                        0..=4 => {
                            let n = 1 + rng.below(3) as usize;
                            let mut pairs: Vec<(u32, i64)> = Vec::new();
                            while pairs.len() < n {
                                let r = &resources[rng.below(resources.len() as u64) as usize];
                                if pairs.iter().all(|p| p.0 != r.opcode) {
                                    let span = (r.high - r.low).max(0) as u64 + 1;
                                    pairs.push((r.opcode, r.low + rng.below(span) as i64));
                                }
                            }
                            let lease = Lease::from_ms([0, 5, 20, 60, 150][rng.below(5) as usize]);
                            let prio = [
                                Priority::ThirdPartyLow,
                                Priority::ThirdPartyHigh,
                                Priority::SystemLow,
                                Priority::SystemHigh,
                            ][rng.below(4) as usize];
                            let handle = if !mine.is_empty() && rng.below(3) == 0 {
                                Some(mine[rng.below(mine.len() as u64) as usize])
                            } else {
                                None
                            };
                            if let Ok(h) = client.acquire(handle, lease, prio, &pairs) {
                                if !mine.contains(&h) {
                                    mine.push(h);
                                }
                            }
                        }
                        5..=7 if !mine.is_empty() => {
                            let h = mine.swap_remove(rng.below(mine.len() as u64) as usize);
                            // May already have expired: a refusal is fine.
                            let _ = client.release(h);
                        }
                        8 => {
                            // The client dies: its lease ends.
                            client = Client::connect(&socket).unwrap();
                            mine.clear();
                        }
                        _ => {
                            let _ = client.ping().unwrap();
                        }
                    }
                }
                steps
            })
        })
        .collect();

    // Meanwhile, real client processes are killed with SIGKILL.
    let mut rng = Rng(42);
    for i in 0..20 {
        let r = &resources[rng.below(resources.len() as u64) as usize];
        let mut child = Command::new(LEVER)
            .args([
                "acquire",
                "--socket",
                socket.to_str().unwrap(),
                "-p",
                "system-high",
                "-d",
                "0",
            ])
            .arg(format!(
                "0x{:08X}={}",
                r.opcode,
                if i % 2 == 0 { r.low } else { r.high }
            ))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut l = String::new();
        let _ = BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut l);
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let steps: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(steps, 4000);

    // Every lease ends with its connection; timed requests expire (<150 ms).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let status = c.status().unwrap();
        if status.live_requests == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "requests still live: {:?}",
            status.requests
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(c.ping().unwrap(), 1, "daemon alive");
    let after = snapshot(&dir.path().join("sim"));
    let diff = changed(&before, &after);
    assert!(diff.is_empty(), "not restored: {diff:#?}");
    let _ = daemon.kill();
    let _ = daemon.wait();
}
