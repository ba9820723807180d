//! The `daemon` section: the resource manager's status (`lever status`,
//! through `lever-client`), if a daemon answers on the socket.

use super::skipped;
use crate::model::{Metric, Section};
use std::path::Path;
use std::time::Duration;

/// Ask the daemon at `socket` for its status.
pub fn collect(socket: &Path) -> Section {
    let status = lever_client::Client::connect(socket).and_then(|mut c| {
        c.set_timeout(Some(Duration::from_secs(2)))?;
        c.status_json()
    });
    let text = match status {
        Ok(t) => t,
        Err(e) => {
            return skipped(
                "daemon",
                format!("no daemon answered at {}: {e}", socket.display()),
            )
        }
    };
    let doc: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => return skipped("daemon", format!("the daemon's status is not JSON: {e}")),
    };
    let mut s = Section::measured(
        "daemon",
        &format!(
            "lever-client STATUS request to {} (`lever status --json`)",
            socket.display()
        ),
    );
    let count = |key: &str| doc.get(key).and_then(|v| v.as_array()).map_or(0, Vec::len);
    let live = doc
        .get("live_requests")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    s.metrics
        .push(Metric::new("daemon.live_requests", "requests", live as f64));
    s.metrics.push(Metric::new(
        "daemon.resources",
        "resources",
        count("resources") as f64,
    ));
    s.metrics.push(Metric::new(
        "daemon.unrestored",
        "nodes",
        count("unrestored") as f64,
    ));
    s.detail = doc;
    s
}
