//! cyclictest's own output formats, written from a [`LatencyReport`] so
//! that scripts made for cyclictest 2.4 keep working:
//!
//! - the status line, `T: 0 (14658) P:90 I:1000 C:    500 Min:     12 Act:   14 Avg:   14 Max:      34`
//!   (`T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld`);
//! - the `-h` histogram: `# Histogram`, one row per microsecond
//!   (`%06d` then each thread's `%06lu`, tab-separated), then `# Total:`
//!   (`%09llu` per thread: samples inside the histogram), `# Min/Avg/Max
//!   Latencies:` (`%05lu`, avg truncated), `# Histogram Overflows:` and the
//!   overflow cycle numbers per thread (`# Thread 0: 01683 … # 00009 others`);
//! - the `--json FILE` document: `file_version` 1, `cmdline:` (sic, with
//!   the colon), `rt_test_version:`, start/end time, `return_code`,
//!   `sysinfo`, `num_threads`, `resolution_in_ns`, and per thread
//!   `histogram` (only non-zero buckets, keyed by µs as a string; `{}`
//!   without `-h`), `cycles`, `min`, `max`, `avg` (two decimals), `cpu`,
//!   `node` (the CPU's NUMA node; -1 with `-S`, as cyclictest 2.40 writes).

use crate::report::{LatencyReport, ThreadReport};
use serde_json::{json, Map, Value};

/// cyclictest's status line for one thread.
pub fn status_line(t: &ThreadReport) -> String {
    format!(
        "T:{:2} ({:5}) P:{:2} I:{} C:{:7} Min:{:7} Act:{:5} Avg:{:5} Max:{:8}",
        t.index,
        t.tid.unwrap_or(0),
        t.priority.unwrap_or(0),
        t.interval_us.unwrap_or(0),
        t.cycles,
        t.min_us.unwrap_or(1_000_000),
        t.act_us.unwrap_or(0),
        t.avg_us.map_or(0, |a| a as u64),
        t.max_us.unwrap_or(0),
    )
}

/// The `-h` histogram text (`None` when the report has no histogram).
pub fn histogram_text(r: &LatencyReport) -> Option<String> {
    let size = r.histogram_us? as usize;
    let hists: Vec<_> = r.threads.iter().map(|t| t.histogram.as_ref()).collect();
    let mut out = String::from("# Histogram\n");
    for us in 0..size {
        let row: Vec<String> = hists
            .iter()
            .map(|h| {
                format!(
                    "{:06}",
                    h.and_then(|h| h.buckets.get(us)).copied().unwrap_or(0)
                )
            })
            .collect();
        out += &format!("{us:06} {}\n", row.join("\t"));
    }
    let line = |label: &str, f: &dyn Fn(&ThreadReport) -> String| {
        let cols: String = r.threads.iter().map(|t| format!(" {}", f(t))).collect();
        format!("# {label}:{cols}\n")
    };
    out += &line("Total", &|t| {
        format!("{:09}", t.histogram.as_ref().map_or(0, |h| h.in_range()))
    });
    out += &line("Min Latencies", &|t| {
        format!("{:05}", t.min_us.unwrap_or(1_000_000))
    });
    out += &line("Avg Latencies", &|t| {
        format!("{:05}", t.avg_us.map_or(0, |a| a as u64))
    });
    out += &line("Max Latencies", &|t| {
        format!("{:05}", t.max_us.unwrap_or(0))
    });
    out += &line("Histogram Overflows", &|t| format!("{:05}", t.overflows));
    out += "# Histogram Overflow at cycle number:\n";
    for t in &r.threads {
        out += &format!("# Thread {}:", t.index);
        for c in &t.overflow_cycles {
            out += &format!(" {c:05}");
        }
        let listed = t.overflow_cycles.len() as u64;
        if listed < t.overflows {
            out += &format!(" # {:05} others", t.overflows - listed);
        }
        out += "\n";
    }
    out += "\n";
    Some(out)
}

/// The machine, for the JSON document's `sysinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysInfo {
    /// `uname -s`.
    pub sysname: String,
    /// `uname -n`.
    pub nodename: String,
    /// `uname -r`.
    pub release: String,
    /// `uname -v`.
    pub version: String,
    /// `uname -m`.
    pub machine: String,
    /// `/sys/kernel/realtime` is 1 (a PREEMPT_RT kernel).
    pub realtime: bool,
    /// Each NUMA node's CPUs (`/sys/devices/system/node/nodeN/cpulist`);
    /// empty without NUMA information (every CPU on node 0).
    pub nodes: Vec<(u32, Vec<u32>)>,
}

impl SysInfo {
    /// The NUMA node of `cpu` (0 when unknown or unpinned, as cyclictest
    /// writes for a single-node machine).
    pub fn node_of(&self, cpu: Option<u32>) -> u32 {
        cpu.and_then(|c| {
            self.nodes
                .iter()
                .find(|(_, cpus)| cpus.contains(&c))
                .map(|(n, _)| *n)
        })
        .unwrap_or(0)
    }
}

impl SysInfo {
    /// This machine (`uname`), with `realtime` read under `fs`'s root.
    pub fn here(fs: &lever_kernel::KernelFs) -> SysInfo {
        let u = rustix::system::uname();
        let s = |c: &std::ffi::CStr| c.to_string_lossy().into_owned();
        SysInfo {
            sysname: s(u.sysname()),
            nodename: s(u.nodename()),
            release: s(u.release()),
            version: s(u.version()),
            machine: s(u.machine()),
            realtime: fs
                .read("/sys/kernel/realtime")
                .is_ok_and(|v| v.trim() == "1"),
            nodes: numa_nodes(fs),
        }
    }
}

/// The `--json FILE` document. `cmdline` is the command line as typed,
/// `start`/`end` are RFC 2822 times as cyclictest writes them; `smp` is
/// `-S` (cyclictest then writes `node: -1`).
pub fn json_document(
    r: &LatencyReport,
    cmdline: &str,
    start: &str,
    end: &str,
    sys: &SysInfo,
    smp: bool,
) -> Value {
    let mut threads = Map::new();
    for t in &r.threads {
        let mut hist = Map::new();
        if let Some(h) = &t.histogram {
            for (us, n) in h.buckets.iter().enumerate() {
                if *n > 0 && r.histogram_us.is_some() {
                    hist.insert(us.to_string(), json!(n));
                }
            }
        }
        let mut obj = Map::new();
        // Always there, `{}` without -h, as cyclictest writes it.
        obj.insert("histogram".into(), Value::Object(hist));
        obj.insert("cycles".into(), json!(t.cycles));
        obj.insert("min".into(), json!(t.min_us.unwrap_or(1_000_000)));
        obj.insert("max".into(), json!(t.max_us.unwrap_or(0)));
        let avg = t.avg_us.unwrap_or(0.0);
        obj.insert("avg".into(), json!((avg * 100.0).round() / 100.0));
        obj.insert("cpu".into(), json!(t.cpu.map_or(-1, i64::from)));
        obj.insert(
            "node".into(),
            json!(if smp {
                -1
            } else {
                i64::from(sys.node_of(t.cpu))
            }),
        );
        threads.insert(t.index.to_string(), Value::Object(obj));
    }
    json!({
        "file_version": 1,
        "cmdline:": cmdline,
        "rt_test_version:": "2.40",
        "start_time": start,
        "end_time": end,
        "return_code": 0,
        "sysinfo": {
            "sysname": sys.sysname,
            "nodename": sys.nodename,
            "release": sys.release,
            "version": sys.version,
            "machine": sys.machine,
            "realtime": u8::from(sys.realtime),
        },
        "num_threads": r.threads.len(),
        "resolution_in_ns": 0,
        "thread": threads,
    })
}

/// `/sys/devices/system/node/nodeN/cpulist` for every node.
fn numa_nodes(fs: &lever_kernel::KernelFs) -> Vec<(u32, Vec<u32>)> {
    let dir = "/sys/devices/system/node";
    let mut nodes: Vec<(u32, Vec<u32>)> = fs
        .list_dir(dir)
        .unwrap_or_default()
        .iter()
        .filter_map(|n| {
            let id = n.strip_prefix("node")?.parse::<u32>().ok()?;
            let list = fs.read(&format!("{dir}/{n}/cpulist")).ok()?;
            Some((id, lever_kernel::parse_cpu_list(list.trim())?))
        })
        .collect();
    nodes.sort();
    nodes
}

/// Write the `--json` document to `path`.
pub fn write_json(path: &std::path::Path, doc: &Value) -> Result<(), crate::LatencyError> {
    let text = serde_json::to_string_pretty(doc).expect("a JSON value serializes");
    write_text(path, &(text + "\n"))
}

/// Write a text output (`--histfile`) to `path`.
pub fn write_text(path: &std::path::Path, text: &str) -> Result<(), crate::LatencyError> {
    std::fs::write(path, text).map_err(|source| crate::LatencyError::File {
        path: path.to_path_buf(),
        source,
    })
}

/// A UTC time as cyclictest's JSON writes it: `Mon, 23 Nov 2026 10:20:45 +0000`.
pub fn rfc2822_utc(unix_s: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} +0000",
        DAYS[(days % 7) as usize],
        day,
        MONTHS[(month - 1) as usize],
        year,
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_like_cyclictest() {
        // The start_time of a cyclictest 2.40 --json run on this VM.
        assert_eq!(
            rfc2822_utc(1_795_429_245),
            "Mon, 23 Nov 2026 10:20:45 +0000"
        );
        assert_eq!(rfc2822_utc(0), "Thu, 01 Jan 1970 00:00:00 +0000");
    }
}
