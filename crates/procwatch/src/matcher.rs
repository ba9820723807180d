//! Which `apps:` entry a process is, read from `/proc/PID` below a root:
//!
//! ```text
//! /proc/PID/comm      camera-app\n                      (15 bytes at most)
//! /proc/PID/cmdline   camera-app\0--preview\0
//! /proc/PID/cgroup    0::/user.slice/user-1000.slice/session-2.scope
//! /proc/PID/status    Uid:\t1000\t1000\t1000\t1000
//! /proc/PID/stat      4242 (camera-app) S 1 4242 4242 34816 ...   (7th field: tty_nr)
//! /proc/PID/environ   ...\0WAYLAND_DISPLAY=wayland-1\0...
//! ```
//!
//! An exec event only says which pid; the comm is read first and
//! compared to every pattern, so the usual exec (no app has that name)
//! costs one small read.

use crate::WatchError;
use lever_kernel::KernelFs;
use regex::Regex;
use serde::Serialize;

/// Longest `comm` the kernel keeps (TASK_COMM_LEN - 1).
pub const COMM_LEN: usize = 15;

/// How one `apps:` entry recognises its process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppPattern {
    /// The entry's name.
    pub name: String,
    /// The executable's name; compared with `comm`, so only its first 15
    /// bytes count.
    pub exec: String,
    /// A regular expression the NUL-joined-by-spaces command line must
    /// match, if given.
    pub cmdline: Option<String>,
    /// A cgroup path prefix (below the cgroup2 mount) the process must be
    /// in, if given.
    pub cgroup: Option<String>,
}

impl AppPattern {
    /// The comm a process of this executable has.
    pub fn comm(&self) -> &str {
        let mut end = self.exec.len().min(COMM_LEN);
        while !self.exec.is_char_boundary(end) {
            end -= 1;
        }
        &self.exec[..end]
    }
}

/// Which processes are considered at all, like URM's: an interactive app
/// has a controlling terminal or a display.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct AppFilter {
    /// Only processes with a controlling tty or `DISPLAY` /
    /// `WAYLAND_DISPLAY` in their environment.
    pub require_tty_or_display: bool,
    /// Only processes of these real uids (empty = any).
    pub uids: Vec<u32>,
    /// Executable names never matched (daemons, shells).
    pub blocklist: Vec<String>,
}

/// What Lever read about one process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessInfo {
    /// Its pid.
    pub pid: i32,
    /// Its comm.
    pub comm: String,
    /// Its command line, arguments joined by spaces.
    pub cmdline: String,
    /// Its cgroup v2 path (no leading `/`), if it has one.
    pub cgroup: Option<String>,
    /// Its real uid.
    pub uid: Option<u32>,
    /// True when it has a controlling terminal.
    pub tty: bool,
    /// True when its environment names a display (readable by root or
    /// the owner only; false when unreadable).
    pub display: bool,
}

/// Why a process that has an app's name was not matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Skip {
    /// Its name is on the blocklist.
    Blocklisted,
    /// Neither a tty nor a display, and the filter requires one.
    NoTtyOrDisplay,
    /// Its uid is not one of the filter's.
    Uid(Option<u32>),
    /// Its command line or cgroup does not fit any entry with its name.
    NoEntry,
}

/// A process with an app's name: what was read, and the entry it is or
/// why it is none.
pub type Matched<'m> = (ProcessInfo, Result<&'m AppPattern, Skip>);

/// Compiled `apps:` entries plus the filter.
#[derive(Debug, Clone)]
pub struct AppMatcher {
    apps: Vec<(AppPattern, Option<Regex>)>,
    filter: AppFilter,
}

/// `Err(message)` when `pattern` is not a regular expression (for target
/// file errors).
pub fn check_regex(pattern: &str) -> Result<(), String> {
    Regex::new(pattern).map(|_| ()).map_err(|e| e.to_string())
}

impl AppMatcher {
    /// Compile the patterns. A bad regex is [`WatchError::BadPattern`].
    pub fn new(apps: Vec<AppPattern>, filter: AppFilter) -> Result<AppMatcher, WatchError> {
        let mut out = Vec::with_capacity(apps.len());
        for a in apps {
            let re = match &a.cmdline {
                None => None,
                Some(p) => Some(Regex::new(p).map_err(|e| WatchError::BadPattern {
                    app: a.name.clone(),
                    message: e.to_string(),
                })?),
            };
            out.push((a, re));
        }
        Ok(AppMatcher { apps: out, filter })
    }

    /// True when some entry has this comm (the cheap first test).
    pub fn wants_comm(&self, comm: &str) -> bool {
        self.apps.iter().any(|(a, _)| a.comm() == comm)
    }

    /// The entry `p` is, or why none is.
    pub fn classify(&self, p: &ProcessInfo) -> Result<&AppPattern, Skip> {
        if !self.wants_comm(&p.comm) {
            return Err(Skip::NoEntry);
        }
        if self.filter.blocklist.iter().any(|b| b.as_str() == p.comm) {
            return Err(Skip::Blocklisted);
        }
        if self.filter.require_tty_or_display && !(p.tty || p.display) {
            return Err(Skip::NoTtyOrDisplay);
        }
        if !self.filter.uids.is_empty() && !p.uid.is_some_and(|u| self.filter.uids.contains(&u)) {
            return Err(Skip::Uid(p.uid));
        }
        self.apps
            .iter()
            .find(|(a, re)| {
                a.comm() == p.comm
                    && re.as_ref().is_none_or(|r| r.is_match(&p.cmdline))
                    && a.cgroup.as_ref().is_none_or(|c| {
                        p.cgroup
                            .as_deref()
                            .is_some_and(|g| g == c || g.starts_with(&format!("{c}/")))
                    })
            })
            .map(|(a, _)| a)
            .ok_or(Skip::NoEntry)
    }

    /// Read process `pid` below `fs` and classify it. `Ok(None)` when no
    /// entry has its comm (one read) or it exited meanwhile.
    pub fn match_pid(&self, fs: &KernelFs, pid: i32) -> Result<Option<Matched<'_>>, WatchError> {
        let Some(comm) = read(fs, pid, "comm")? else {
            return Ok(None);
        };
        let comm = comm.trim_end_matches('\n').to_string();
        if !self.wants_comm(&comm) {
            return Ok(None);
        }
        let Some(info) = process_info(fs, pid)? else {
            return Ok(None);
        };
        let class = self.classify(&info);
        Ok(Some((info, class)))
    }
}

fn read(fs: &KernelFs, pid: i32, file: &str) -> Result<Option<String>, WatchError> {
    match fs.read(&format!("/proc/{pid}/{file}")) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.is_missing() => Ok(None),
        // environ of another user's process without root: not an error,
        // just unknown.
        Err(lever_kernel::KernelError::NotAllowed { .. }) if file == "environ" => Ok(None),
        Err(e) => Err(WatchError::Proc(e)),
    }
}

/// Everything [`AppMatcher::classify`] looks at, or `None` when the
/// process is gone.
pub fn process_info(fs: &KernelFs, pid: i32) -> Result<Option<ProcessInfo>, WatchError> {
    let (Some(comm), Some(stat)) = (read(fs, pid, "comm")?, read(fs, pid, "stat")?) else {
        return Ok(None);
    };
    let cmdline = read(fs, pid, "cmdline")?.unwrap_or_default();
    let cgroup = read(fs, pid, "cgroup")?.and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("0::"))
            .map(|p| p.trim().trim_start_matches('/').to_string())
    });
    let uid = read(fs, pid, "status")?.and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
    });
    // Fields after the `(comm)`, which may hold spaces: state ppid pgrp
    // session tty_nr ...
    let tty = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().nth(4)?.parse::<i64>().ok())
        .is_some_and(|t| t != 0);
    let display = read(fs, pid, "environ")?.is_some_and(|env| {
        env.split('\0')
            .any(|v| v.starts_with("DISPLAY=") || v.starts_with("WAYLAND_DISPLAY="))
    });
    Ok(Some(ProcessInfo {
        pid,
        comm: comm.trim_end_matches('\n').to_string(),
        cmdline: cmdline
            .trim_end_matches('\0')
            .split('\0')
            .collect::<Vec<_>>()
            .join(" "),
        cgroup,
        uid,
        tty,
        display,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_process(fs: &KernelFs, pid: i32, comm: &str, tty: u32, env: &str, uid: u32) {
        fs.create_node(&format!("/proc/{pid}/comm"), &format!("{comm}\n"))
            .unwrap();
        fs.create_node(
            &format!("/proc/{pid}/stat"),
            &format!("{pid} ({comm}) S 1 {pid} {pid} {tty} -1 4194560 0 0"),
        )
        .unwrap();
        fs.create_node(
            &format!("/proc/{pid}/cmdline"),
            &format!("/usr/bin/{comm}\0--preview\0"),
        )
        .unwrap();
        fs.create_node(
            &format!("/proc/{pid}/cgroup"),
            "0::/user.slice/session-2.scope\n",
        )
        .unwrap();
        fs.create_node(
            &format!("/proc/{pid}/status"),
            &format!("Name:\t{comm}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n"),
        )
        .unwrap();
        fs.create_node(&format!("/proc/{pid}/environ"), env)
            .unwrap();
    }

    fn app(name: &str, exec: &str, cmdline: Option<&str>, cgroup: Option<&str>) -> AppPattern {
        AppPattern {
            name: name.into(),
            exec: exec.into(),
            cmdline: cmdline.map(String::from),
            cgroup: cgroup.map(String::from),
        }
    }

    #[test]
    fn matches_by_comm_cmdline_cgroup_and_filter() {
        let dir = tempfile::tempdir().unwrap();
        let fs = KernelFs::new(dir.path());
        fake_process(
            &fs,
            10,
            "camera-app",
            0,
            "HOME=/root\0WAYLAND_DISPLAY=wayland-1\0",
            1000,
        );
        fake_process(&fs, 11, "camera-app", 0, "HOME=/root\0", 1000);
        fake_process(&fs, 12, "camera-app", 34816, "", 0);
        fake_process(&fs, 13, "sshd", 34816, "", 0);
        let filter = AppFilter {
            require_tty_or_display: true,
            uids: vec![],
            blocklist: vec!["sshd".into()],
        };
        let m = AppMatcher::new(
            vec![
                app("cam-record", "camera-app", Some("--record"), None),
                app("cam", "camera-app", Some("--preview$"), Some("user.slice")),
                app("ssh", "sshd", None, None),
            ],
            filter.clone(),
        )
        .unwrap();
        let (info, class) = m.match_pid(&fs, 10).unwrap().unwrap();
        assert!(info.display && !info.tty);
        assert_eq!(info.cmdline, "/usr/bin/camera-app --preview");
        assert_eq!(class.unwrap().name, "cam");
        assert_eq!(
            m.match_pid(&fs, 11).unwrap().unwrap().1,
            Err(Skip::NoTtyOrDisplay)
        );
        let (info, class) = m.match_pid(&fs, 12).unwrap().unwrap();
        assert!(info.tty);
        assert_eq!(class.unwrap().name, "cam");
        assert_eq!(
            m.match_pid(&fs, 13).unwrap().unwrap().1,
            Err(Skip::Blocklisted)
        );
        assert_eq!(m.match_pid(&fs, 99).unwrap(), None);

        let only_1000 = AppMatcher::new(
            vec![app("cam", "camera-app", None, Some("system.slice"))],
            AppFilter {
                uids: vec![1000],
                ..filter
            },
        )
        .unwrap();
        assert_eq!(
            only_1000.match_pid(&fs, 12).unwrap().unwrap().1,
            Err(Skip::Uid(Some(0)))
        );
        assert_eq!(
            only_1000.match_pid(&fs, 10).unwrap().unwrap().1,
            Err(Skip::NoEntry)
        );
    }

    #[test]
    fn long_names_compare_as_comm() {
        let a = app("x", "a-very-long-executable-name", None, None);
        assert_eq!(a.comm(), "a-very-long-exe");
        assert!(check_regex("(").is_err());
        let e = AppMatcher::new(vec![app("x", "x", Some("("), None)], AppFilter::default())
            .unwrap_err();
        assert!(e.to_string().contains("app x"), "{e}");
    }

    /// The syntax the board's regex build keeps: Unicode \w, \d, \s, \b
    /// and case folding. (Its property tables, `\p{Greek}`, are left out of
    /// the board's build only: the test build has them through other
    /// crates' regex features, so their absence is not testable here.)
    #[test]
    fn patterns_keep_perl_classes_and_case_folding() {
        for ok in [r"\w+\s+\d", r"\bgst-launch\b", "(?i)CAMERA", "ä+"] {
            assert!(check_regex(ok).is_ok(), "{ok}");
        }
        assert!(Regex::new("(?i)émile").unwrap().is_match("ÉMILE"));
        assert!(Regex::new(r"^\w+$").unwrap().is_match("naïve"));
    }
}
