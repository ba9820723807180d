//! The services on a real private `dbus-daemon` (system-bus-like policy
//! plus `packaging/dbus/lever-dbus.conf`) in front of a fake daemon: the
//! names are owned, properties read and written under both ppd names, a
//! hold ends when its caller leaves the bus, ProfileReleased reaches the
//! holder, and a GameMode game ends when its process exits. Skips, saying
//! why, where no bus can be started.

mod common;

use common::{eventually, Fake};
use lever_dbus::testbus::PrivateBus;
use lever_dbus::{Bus, PPD_LEGACY_NAME, PPD_LEGACY_PATH, PPD_NAME, PPD_PATH};
use std::collections::HashMap;
use std::time::Duration;
use zbus::blocking::{Connection, Proxy};
use zbus::proxy::CacheProperties;
use zbus::zvariant::OwnedValue;

const WAIT: Duration = Duration::from_secs(10);

struct Setup {
    _dir: tempfile::TempDir,
    bus: PrivateBus,
    fake: Fake,
}

fn setup() -> Option<Setup> {
    let dir = tempfile::tempdir().unwrap();
    let bus = match PrivateBus::start(dir.path()) {
        Ok(b) => b,
        Err(why) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must have a bus: {why}"
            );
            eprintln!("skipping: {why}");
            return None;
        }
    };
    let fake = Fake::default();
    let backend = fake.clone();
    let addr = Bus::Address(bus.address().to_string());
    std::thread::spawn(move || {
        if let Err(e) = lever_dbus::serve_with(&addr, Box::new(backend)) {
            eprintln!("serve: {e}");
        }
    });
    let s = Setup {
        _dir: dir,
        bus,
        fake,
    };
    let conn = s.connect();
    let dbus = zbus::blocking::fdo::DBusProxy::new(&conn).unwrap();
    let owned = eventually(WAIT, || {
        [PPD_NAME, PPD_LEGACY_NAME, lever_dbus::GAMEMODE_NAME]
            .iter()
            .all(|n| {
                dbus.name_has_owner((*n).try_into().unwrap())
                    .unwrap_or(false)
            })
    });
    assert!(owned, "the service did not own its three names");
    Some(s)
}

impl Setup {
    fn connect(&self) -> Connection {
        zbus::blocking::connection::Builder::address(self.bus.address())
            .unwrap()
            .build()
            .unwrap()
    }
}

fn proxy<'a>(conn: &Connection, name: &'a str, path: &'a str) -> Proxy<'a> {
    zbus::blocking::proxy::Builder::new(conn)
        .destination(name)
        .unwrap()
        .path(path)
        .unwrap()
        .interface(name)
        .unwrap()
        .cache_properties(CacheProperties::No)
        .build()
        .unwrap()
}

fn active(p: &Proxy<'_>) -> String {
    p.get_property::<String>("ActiveProfile").unwrap()
}

#[test]
fn ppd_properties_under_both_names() {
    let Some(s) = setup() else { return };
    let conn = s.connect();
    let new = proxy(&conn, PPD_NAME, PPD_PATH);
    let old = proxy(&conn, PPD_LEGACY_NAME, PPD_LEGACY_PATH);
    assert_eq!(active(&new), "balanced");
    old.set_property("ActiveProfile", "performance").unwrap();
    assert_eq!(s.fake.state().base.as_deref(), Some("performance"));
    assert_eq!(active(&new), "performance");
    let profiles: Vec<HashMap<String, OwnedValue>> = new.get_property("Profiles").unwrap();
    let names: Vec<String> = profiles
        .iter()
        .map(|p| String::try_from(p["Profile"].try_clone().unwrap()).unwrap())
        .collect();
    assert_eq!(names, ["power-saver", "balanced", "performance"]);
    assert!(profiles.iter().all(|p| p.contains_key("Driver")));
    assert_eq!(
        old.get_property::<String>("PerformanceDegraded").unwrap(),
        ""
    );
    assert!(old
        .get_property::<String>("Version")
        .unwrap()
        .starts_with("lever "));
    let bad = new.set_property("ActiveProfile", "turbo");
    assert!(bad.is_err(), "{bad:?}");
    assert_eq!(s.fake.state().base.as_deref(), Some("performance"));
}

#[test]
fn a_hold_ends_when_its_caller_leaves_the_bus() {
    let Some(s) = setup() else { return };
    let watcher = s.connect();
    let p = proxy(&watcher, PPD_LEGACY_NAME, PPD_LEGACY_PATH);
    {
        let holder = s.connect();
        let h = proxy(&holder, PPD_LEGACY_NAME, PPD_LEGACY_PATH);
        let cookie: u32 = h
            .call("HoldProfile", &("performance", "test", "lever-tests"))
            .unwrap();
        assert!(cookie > 0);
        assert_eq!(active(&p), "performance");
        let holds: Vec<HashMap<String, OwnedValue>> = p.get_property("ActiveProfileHolds").unwrap();
        assert_eq!(holds.len(), 1);
        assert_eq!(
            String::try_from(holds[0]["ApplicationId"].try_clone().unwrap()).unwrap(),
            "lever-tests"
        );
        let bad: zbus::Result<u32> = h.call("HoldProfile", &("balanced", "t", "a"));
        assert!(bad.is_err());
    }
    // The holder's connection is gone: the bus says so, the hold ends.
    assert!(eventually(WAIT, || s.fake.state().holds.is_empty()));
    assert_eq!(active(&p), "balanced");
}

#[test]
fn setting_active_profile_releases_holds_and_tells_the_holder() {
    let Some(s) = setup() else { return };
    let holder = s.connect();
    let h = proxy(&holder, PPD_NAME, PPD_PATH);
    let released = h.receive_signal("ProfileReleased").unwrap();
    let saver: u32 = h
        .call("HoldProfile", &("power-saver", "battery", "shell"))
        .unwrap();
    let _perf: u32 = h
        .call("HoldProfile", &("performance", "game", "steam"))
        .unwrap();
    // power-saver beats performance.
    assert_eq!(active(&h), "power-saver");
    let user = s.connect();
    proxy(&user, PPD_NAME, PPD_PATH)
        .set_property("ActiveProfile", "performance")
        .unwrap();
    assert!(s.fake.state().holds.is_empty());
    let mut cookies = Vec::new();
    for msg in released.take(2) {
        let cookie: u32 = msg.body().deserialize().unwrap();
        cookies.push(cookie);
    }
    assert!(cookies.contains(&saver), "{cookies:?}");
    assert_eq!(active(&h), "performance");
    // ReleaseProfile of a cancelled cookie is an error.
    let gone: zbus::Result<()> = h.call("ReleaseProfile", &(saver,));
    assert!(gone.is_err());
}

#[test]
fn a_game_ends_when_its_process_exits() {
    let Some(s) = setup() else { return };
    let conn = s.connect();
    let gm = proxy(&conn, lever_dbus::GAMEMODE_NAME, lever_dbus::GAMEMODE_PATH);
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    let r: i32 = gm.call("RegisterGame", &(pid,)).unwrap();
    assert_eq!(r, 0);
    assert_eq!(s.fake.state().games.len(), 1);
    let again: i32 = gm.call("RegisterGame", &(pid,)).unwrap();
    assert_eq!(again, -1);
    let q: i32 = gm.call("QueryStatus", &(pid,)).unwrap();
    assert_eq!(q, 2);
    let q: i32 = gm.call("QueryStatusByPID", &(1, 1)).unwrap();
    assert_eq!(q, 1);
    assert_eq!(gm.get_property::<i32>("ClientCount").unwrap(), 1);
    // The caller the service acted for is the bus's: this process's uid.
    let me_uid = rustix::process::getuid().as_raw();
    assert!(s.fake.state().callers.iter().all(|c| c.uid == me_uid));
    child.kill().unwrap();
    child.wait().unwrap();
    // The daemon ends the use case (its event loop watches the process);
    // the service forgets the game without a thread of its own.
    assert!(eventually(WAIT, || gm
        .get_property::<i32>("ClientCount")
        .unwrap()
        == 0));
    s.fake.state().games.clear();
    let q: i32 = gm.call("QueryStatus", &(pid,)).unwrap();
    assert_eq!(q, 0);
    let r: i32 = gm.call("UnregisterGame", &(pid,)).unwrap();
    assert_eq!(r, -1);
    // A pid that is no process is refused.
    let r: i32 = gm.call("RegisterGame", &(i32::MAX,)).unwrap();
    assert_eq!(r, -1);
    // By PID, then unregistered by PID.
    let me = i32::try_from(std::process::id()).unwrap();
    let r: i32 = gm.call("RegisterGameByPID", &(me, me)).unwrap();
    assert_eq!(r, 0);
    let r: i32 = gm.call("UnregisterGameByPID", &(me, me)).unwrap();
    assert_eq!(r, 0);
    assert!(s.fake.state().games.is_empty());
}

/// `powerprofilesctl` (ppd's own client, on the legacy name) against the
/// service: get, set, list, list-holds and launch, seen by the fake daemon.
#[test]
fn powerprofilesctl_drives_the_service() {
    let have = std::process::Command::new("powerprofilesctl")
        .arg("version")
        .output()
        .is_ok();
    if !have {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have powerprofilesctl"
        );
        eprintln!("skipping: no powerprofilesctl (Debian's power-profiles-daemon)");
        return;
    }
    let Some(s) = setup() else { return };
    let ppctl = |args: &[&str]| {
        let out = std::process::Command::new("powerprofilesctl")
            .args(args)
            .env("DBUS_SYSTEM_BUS_ADDRESS", s.bus.address())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "powerprofilesctl {args:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    assert_eq!(ppctl(&["get"]).trim(), "balanced");
    ppctl(&["set", "power-saver"]);
    assert_eq!(s.fake.state().base.as_deref(), Some("powersave"));
    assert_eq!(ppctl(&["get"]).trim(), "power-saver");
    let list = ppctl(&["list"]);
    assert!(
        list.contains("* power-saver:") && list.contains("  performance:"),
        "{list}"
    );
    assert!(list.contains("Driver:     lever"), "{list}");
    // launch holds while its command runs, then releases.
    let fake = s.fake.clone();
    let seen = std::thread::spawn(move || {
        eventually(WAIT, || {
            fake.state().holds.iter().any(|(_, p)| p == "performance")
        })
    });
    ppctl(&[
        "launch",
        "-p",
        "performance",
        "-r",
        "test",
        "-i",
        "lever",
        "--",
        "sleep",
        "1",
    ]);
    assert!(seen.join().unwrap(), "no hold while launch ran");
    assert!(eventually(WAIT, || s.fake.state().holds.is_empty()));
    assert!(ppctl(&["list-holds"]).trim().is_empty());
}

/// PropertiesChanged for ActiveProfile: after a D-Bus write, and after a
/// change made behind the service's back (another Lever client), which the
/// once-a-second re-read finds.
#[test]
fn active_profile_changes_are_announced() {
    let Some(s) = setup() else { return };
    let conn = s.connect();
    let props = zbus::blocking::fdo::PropertiesProxy::builder(&conn)
        .destination(PPD_NAME)
        .unwrap()
        .path(PPD_PATH)
        .unwrap()
        .build()
        .unwrap();
    let changes = props.receive_properties_changed().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for change in changes {
            let args = change.args().unwrap();
            if let Some(v) = args.changed_properties().get("ActiveProfile") {
                let v = <&str>::try_from(v).unwrap().to_string();
                if tx.send(v).is_err() {
                    return;
                }
            }
        }
    });
    proxy(&conn, PPD_NAME, PPD_PATH)
        .set_property("ActiveProfile", "performance")
        .unwrap();
    assert_eq!(rx.recv_timeout(WAIT).unwrap(), "performance");
    s.fake.state().base = Some("powersave".into());
    let mut last = String::new();
    let seen = eventually(WAIT, || {
        while let Ok(v) = rx.try_recv() {
            last = v;
        }
        last == "power-saver"
    });
    assert!(seen, "last announced: {last}");
}

/// The shipped policy: anyone may read and call, only root may own the
/// names. Needs root (to run gdbus as nobody) and gdbus.
#[test]
fn the_policy_lets_anyone_call_but_only_root_own() {
    use std::os::unix::process::CommandExt;
    let root = rustix::process::getuid().is_root();
    let gdbus = std::process::Command::new("gdbus")
        .arg("help")
        .output()
        .is_ok();
    if !root || !gdbus {
        eprintln!("skipping: needs root and gdbus (root {root}, gdbus {gdbus})");
        return;
    }
    let Some(s) = setup() else { return };
    // The bus socket is in the test's private directory: let nobody in.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(s._dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let as_nobody = |args: &[&str]| {
        std::process::Command::new("gdbus")
            .args(["call", "--address", s.bus.address()])
            .args(args)
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap()
    };
    let read = as_nobody(&[
        "--dest",
        PPD_LEGACY_NAME,
        "--object-path",
        PPD_LEGACY_PATH,
        "--method",
        "org.freedesktop.DBus.Properties.Get",
        PPD_LEGACY_NAME,
        "ActiveProfile",
    ]);
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&read.stdout).trim(),
        "(<'balanced'>,)"
    );
    for name in [PPD_NAME, lever_dbus::GAMEMODE_NAME, "org.example.Other"] {
        let own = as_nobody(&[
            "--dest",
            "org.freedesktop.DBus",
            "--object-path",
            "/org/freedesktop/DBus",
            "--method",
            "org.freedesktop.DBus.RequestName",
            name,
            "4",
        ]);
        let err = String::from_utf8_lossy(&own.stderr);
        assert!(
            !own.status.success() && err.contains("AccessDenied"),
            "{name}: {err}"
        );
    }
}
