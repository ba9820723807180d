//! The `daemon` section: the resource manager's status (`lever status`,
//! through `lever-client`), if a daemon answers on the socket, and the
//! round trip of a request: [`PINGS`] PING requests on the open
//! connection, each timed from send to reply, the median reported with
//! every sample.
//!
//! A daemon may serve a simulated board (`lever daemon --root DIR`): its
//! status names the root, and when that root is a `lever sim` tree the
//! detail says which board (`simulated_board`), so the page can say the
//! section is not this machine's.

use super::skipped;
use crate::model::{Better, Metric, Section};
use std::path::Path;
use std::time::{Duration, Instant};

/// PING requests timed for the round trip.
pub const PINGS: usize = 50;

/// Ask the daemon at `socket` for its status.
pub fn collect(socket: &Path) -> Section {
    let status = lever_client::Client::connect(socket).and_then(|mut c| {
        c.set_timeout(Some(Duration::from_secs(2)))?;
        let text = c.status_json()?;
        let mut round_trips_us = Vec::with_capacity(PINGS);
        for _ in 0..PINGS {
            let t = Instant::now();
            c.ping()?;
            round_trips_us.push(t.elapsed().as_secs_f64() * 1e6);
        }
        Ok((text, round_trips_us))
    });
    let (text, round_trips_us) = match status {
        Ok(t) => t,
        Err(e) => {
            return skipped(
                "daemon",
                format!("no daemon answered at {}: {e}", socket.display()),
            )
        }
    };
    let mut doc: serde_json::Value = match serde_json::from_str(&text) {
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
    if let Some(median) = lever_bench::stats::Summary::new(&round_trips_us).map(|s| s.median) {
        let mut m = Metric::new("daemon.round_trip", "us", median);
        m.samples = round_trips_us;
        m.better = Some(Better::Lower);
        s.metrics.push(m);
        s.method.push_str(&format!(
            "; round trip: {PINGS} PING requests on the open connection, the median"
        ));
    }
    let board = doc
        .get("root")
        .and_then(|r| r.as_str())
        .filter(|r| *r != "/")
        .and_then(|r| lever_sim::board_in(Path::new(r)));
    if let (Some(board), Some(obj)) = (board, doc.as_object_mut()) {
        s.method.push_str(&format!(
            "; the daemon serves the simulated board {board}, not this machine"
        ));
        obj.insert("simulated_board".into(), board.into());
    }
    s.detail = doc;
    s
}
