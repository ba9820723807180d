//! The seed's perflock sample (clients/c/examples/perflock_sample.c),
//! compiled with gcc, against a real daemon on a simulated qcs6490: it
//! acquires 0x44008100=1958400, the Silver `scaling_min_freq` holds it
//! while locked, and it is restored after release. Also tune.c (lever.h)
//! and a C client killed with SIGKILL.
//!
//! The sample dlopens `/usr/lib/libqti-perfd-client.so`; rather than
//! install there, the test compiles it unchanged with a forced-include
//! shim (`-include`) that maps that path to the freshly built library and
//! reads the node at the moment the program calls perf_lock_rel.
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SILVER_MIN: &str = "sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq";

const SHIM: &str = r#"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void *lever_test_dlopen(const char *path, int flags) {
    const char *lib = getenv("LEVER_TEST_LIB");
    if (lib && strcmp(path, "/usr/lib/libqti-perfd-client.so") == 0)
        path = lib;
    return dlopen(path, flags);
}
static int (*lever_test_real_rel)(int);
static int lever_test_rel(int h) {
    char buf[64] = {0};
    FILE *f = fopen(getenv("LEVER_TEST_NODE"), "r");
    if (f) { if (!fgets(buf, sizeof buf, f)) buf[0] = 0; fclose(f); }
    printf("node while held: %s\n", strtok(buf, "\n") ? buf : "");
    int r = lever_test_real_rel(h);
    printf("perf_lock_rel returned %d\n", r);
    return r;
}
static void *lever_test_dlsym(void *h, const char *name) {
    void *s = dlsym(h, name);
    if (s && strcmp(name, "perf_lock_rel") == 0) {
        lever_test_real_rel = (int (*)(int))s;
        return (void *)lever_test_rel;
    }
    return s;
}
#define dlopen lever_test_dlopen
#define dlsym lever_test_dlsym
"#;

fn cc() -> Option<String> {
    // A cross run (scripts/cross-test.sh) names the target's gcc.
    if let Ok(cc) = std::env::var("LEVER_TEST_CC") {
        return Some(cc);
    }
    for cc in ["gcc", "cc"] {
        if Command::new(cc)
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
        {
            return Some(cc.to_string());
        }
    }
    None
}

struct Setup {
    daemon: Daemon,
    cc: String,
    lib: PathBuf,
}

fn setup(test: &str) -> Option<Setup> {
    // The binary and the library are this workspace's own: not having them
    // is a failure, never a skip.
    let built = built().unwrap_or_else(|e| panic!("{test}: {e}"));
    let bin = lever_with_daemon().unwrap_or_else(|e| panic!("{test}: {e}"));
    let Some(cc) = cc() else {
        skip(test, "no C compiler (gcc or cc) on PATH");
        return None;
    };
    let lib = built.liblever;
    Some(Setup {
        daemon: Daemon::start(&bin),
        cc,
        lib,
    })
}

fn compile(cc: &str, out: &Path, args: &[&str]) {
    let o = Command::new(cc)
        .args(args)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{cc} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Build `source` as `name` against liblever and run it with the daemon's
/// socket and `LEVER_TEST_NODE` (the board path of `node`); its stdout,
/// after checking it succeeded.
fn run_c(s: &Setup, name: &str, source: &str, node: &str) -> String {
    let work = s.daemon.dir.path();
    let libdir = s.lib.parent().unwrap();
    let include = repo_root().join("crates/capi/include");
    let src = work.join(format!("{name}.c"));
    std::fs::write(&src, source).unwrap();
    let exe = work.join(name);
    compile(
        &s.cc,
        &exe,
        &[
            "-Wall",
            "-I",
            include.to_str().unwrap(),
            src.to_str().unwrap(),
            "-L",
            libdir.to_str().unwrap(),
            "-llever",
        ],
    );
    let out = Command::new(&exe)
        .env("LEVER_SOCKET", &s.daemon.socket)
        .env("LD_LIBRARY_PATH", libdir)
        .env("LEVER_TEST_NODE", s.daemon.node(node))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}");
    stdout
}

#[test]
fn seed_sample_program_acquires_and_releases() {
    let Some(s) = setup("seed_sample_program_acquires_and_releases") else {
        return;
    };
    let original = s.daemon.read(SILVER_MIN);
    assert_ne!(original, "1958400");
    let work = s.daemon.dir.path();
    let shim = work.join("shim.h");
    std::fs::write(&shim, SHIM).unwrap();
    let exe = work.join("perflock_sample");
    let src = repo_root().join("clients/c/examples/perflock_sample.c");
    compile(
        &s.cc,
        &exe,
        &[
            "-Wall",
            "-include",
            shim.to_str().unwrap(),
            src.to_str().unwrap(),
            "-ldl",
        ],
    );
    let out = Command::new(&exe)
        .env("LEVER_SOCKET", &s.daemon.socket)
        .env("LEVER_TEST_LIB", &s.lib)
        .env("LEVER_TEST_NODE", s.daemon.node(SILVER_MIN))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(out.status.success());
    let handle: i32 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("perflock acquired "))
        .expect("acquired line")
        .trim()
        .parse()
        .unwrap();
    assert!(handle > 0, "perf_lock_acq failed:\n{stdout}");
    assert!(stdout.contains("node while held: 1958400"), "{stdout}");
    assert!(stdout.contains(&format!("perf_lock_rel returned {handle}")));
    assert_eq!(
        s.daemon.read(SILVER_MIN),
        original,
        "restored after release"
    );
}

#[test]
fn tune_example_and_killed_client() {
    let Some(s) = setup("tune_example_and_killed_client") else {
        return;
    };
    let original = s.daemon.read(SILVER_MIN);
    let work = s.daemon.dir.path();
    let libdir = s.lib.parent().unwrap();
    let include = repo_root().join("crates/capi/include");
    let tune = work.join("tune");
    compile(
        &s.cc,
        &tune,
        &[
            "-Wall",
            "-I",
            include.to_str().unwrap(),
            repo_root()
                .join("clients/c/examples/tune.c")
                .to_str()
                .unwrap(),
            "-L",
            libdir.to_str().unwrap(),
            "-llever",
        ],
    );
    let out = Command::new(&tune)
        .arg("5000")
        .env("LEVER_SOCKET", &s.daemon.socket)
        .env("LD_LIBRARY_PATH", libdir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("retuned: handle") && stdout.contains("status: {"));
    assert!(stdout.contains("released"));
    assert_eq!(s.daemon.read(SILVER_MIN), original);

    // A C program holding an indefinite lock is killed: the lease ends.
    let holder = work.join("holder.c");
    std::fs::write(
        &holder,
        r#"#include <stdio.h>
#include <unistd.h>
#include "lever.h"
int main(void) {
    int list[] = {0x44008100, 1958400};
    int h = perf_lock_acq(0, 0, list, 2);
    printf("%d\n", h);
    fflush(stdout);
    if (h < 0) { fprintf(stderr, "%s\n", lever_last_error()); return 1; }
    pause();
    return 0;
}
"#,
    )
    .unwrap();
    let holder_exe = work.join("holder");
    compile(
        &s.cc,
        &holder_exe,
        &[
            "-I",
            include.to_str().unwrap(),
            holder.to_str().unwrap(),
            "-L",
            libdir.to_str().unwrap(),
            "-llever",
        ],
    );
    let mut child = Command::new(&holder_exe)
        .env("LEVER_SOCKET", &s.daemon.socket)
        .env("LD_LIBRARY_PATH", libdir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert!(line.trim().parse::<i32>().unwrap() > 0, "{line}");
    assert_eq!(s.daemon.read(SILVER_MIN), "1958400");
    child.kill().unwrap();
    child.wait().unwrap();
    let t = Instant::now();
    while s.daemon.read(SILVER_MIN) != original {
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "not restored after SIGKILL"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The Gold cluster's minimum frequency, which camera-preview raises.
const GOLD_MIN: &str = "sys/devices/system/cpu/cpufreq/policy4/scaling_min_freq";

/// lever_signal / lever_unsignal from C: camera-preview's Gold floor is set
/// while held and back after lever_unsignal; an unknown use case is -1
/// with the daemon's reason.
#[test]
fn lever_signal_from_c_triggers_and_ends_a_use_case() {
    let Some(s) = setup("lever_signal_from_c_triggers_and_ends_a_use_case") else {
        return;
    };
    let original = s.daemon.read(GOLD_MIN);
    assert_ne!(original, "1228800");
    let stdout = run_c(
        &s,
        "signal",
        r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lever.h"
static void node(const char *path) {
    char buf[64] = {0};
    FILE *f = fopen(path, "r");
    if (f) { if (!fgets(buf, sizeof buf, f)) buf[0] = 0; fclose(f); }
    printf("node: %s", buf);
}
int main(void) {
    int h = lever_signal("camera-preview", LEVER_UNTIL_RELEASED,
                         LEVER_PRIO_THIRD_PARTY_LOW, 0, 0, 0);
    if (h <= 0) { printf("failed: %s\n", lever_last_error()); return 1; }
    printf("handle %d\n", h);
    node(getenv("LEVER_TEST_NODE"));
    printf("unsignal %d\n", lever_unsignal(h));
    node(getenv("LEVER_TEST_NODE"));
    int bad = lever_signal("no-such-case", 0, LEVER_PRIO_THIRD_PARTY_LOW, 30, 0, 0);
    printf("unknown %d: %s\n", bad, lever_last_error());
    int null = lever_signal(NULL, 0, 0, 0, 0, 0);
    printf("null %d: %s\n", null, lever_last_error());
    return 0;
}
"#,
        GOLD_MIN,
    );
    let nodes: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("node: "))
        .collect();
    assert_eq!(nodes, ["1228800", original.as_str()], "{stdout}");
    assert!(stdout.contains("unsignal 0"), "{stdout}");
    assert!(
        stdout.contains("unknown -1: lever_signal: lever daemon refused: no use case named or numbered \"no-such-case\""),
        "{stdout}"
    );
    assert!(
        stdout.contains("null -1: lever_signal: usecase is NULL"),
        "{stdout}"
    );
}

/// lever_register_app from C: the program registers itself as app
/// gst-camera, sees camera-preview's Gold floor set, and exits; the floor
/// is back after its exit. An unknown app is -1 with the daemon's reason.
#[test]
fn lever_register_app_from_c_holds_the_apps_configuration_until_exit() {
    let Some(s) = setup("lever_register_app_from_c_holds_the_apps_configuration_until_exit") else {
        return;
    };
    let original = s.daemon.read(GOLD_MIN);
    assert_ne!(original, "1228800");
    let stdout = run_c(
        &s,
        "register",
        r#"#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "lever.h"
int main(void) {
    int bad = lever_register_app(0, "no-such-app");
    printf("unknown %d: %s\n", bad, lever_last_error());
    int ok = lever_register_app(0, "gst-camera");
    if (ok != 0) { printf("failed: %s\n", lever_last_error()); return 1; }
    /* The daemon applies before it answers. */
    char buf[64] = {0};
    FILE *f = fopen(getenv("LEVER_TEST_NODE"), "r");
    if (f) { if (!fgets(buf, sizeof buf, f)) buf[0] = 0; fclose(f); }
    printf("node: %s", buf);
    return 0;
}
"#,
        GOLD_MIN,
    );
    assert!(stdout.contains("node: 1228800"), "{stdout}");
    assert!(
        stdout.contains(
            "unknown -1: lever_register_app: lever daemon refused: no app named \"no-such-app\""
        ),
        "{stdout}"
    );
    let t = Instant::now();
    while s.daemon.read(GOLD_MIN) != original {
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "not restored after the registered process exited"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}
