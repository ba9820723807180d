//! A private `dbus-daemon` for tests, configured like a system bus (only
//! what a policy allows may be owned or called) plus Lever's shipped policy
//! (`packaging/dbus/lever-dbus.conf`), so the tests also check that file.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Lever's bus policy in the source tree.
pub fn shipped_policy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../packaging/dbus/lever-dbus.conf")
}

/// A running private bus; stopped when dropped.
#[derive(Debug)]
pub struct PrivateBus {
    child: Child,
    address: String,
}

impl PrivateBus {
    /// Start a bus listening in `dir`. `Err` says why there is none (no
    /// `dbus-daemon`, or it would not start): the caller skips with it.
    pub fn start(dir: &Path) -> Result<PrivateBus, String> {
        let config = dir.join("bus.conf");
        let socket = dir.join("bus.socket");
        // System-bus-like: nothing may be owned and no method called unless
        // a policy allows it; the bus's own methods and replies are open.
        let text = format!(
            r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Peer"/>
  </policy>
  <include>{policy}</include>
</busconfig>
"#,
            socket = socket.display(),
            policy = shipped_policy().display(),
        );
        std::fs::write(&config, text)
            .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
        let mut child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--nopidfile", "--print-address=1"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("no dbus-daemon ({e}): install Debian's dbus package"))?;
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        let read = BufReader::new(stdout).read_line(&mut line);
        let address = line.trim().to_string();
        if read.is_err() || address.is_empty() {
            let _ = child.kill();
            let status = child.wait();
            return Err(format!("dbus-daemon did not start ({status:?})"));
        }
        Ok(PrivateBus { child, address })
    }

    /// [`PrivateBus::start`], or `None` after printing why the caller
    /// skips; under `CI=true` (where `.ci/run` installs `dbus`) a missing
    /// bus fails instead.
    pub fn start_or_skip(dir: &Path) -> Option<PrivateBus> {
        match PrivateBus::start(dir) {
            Ok(bus) => Some(bus),
            Err(why) => {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "CI must have a bus: {why}"
                );
                eprintln!("skipping: {why}");
                None
            }
        }
    }

    /// The bus's address (`unix:path=...,guid=...`), for
    /// `DBUS_SYSTEM_BUS_ADDRESS` or [`crate::Bus::Address`].
    pub fn address(&self) -> &str {
        &self.address
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
