//! cgroup v2 through one root prefix: Lever-managed cgroups, their `cpu.*`
//! and `cpuset.*` files, and moving processes and threads in and back.
//!
//! Paths are relative to the cgroup2 mount (`/sys/fs/cgroup` below the
//! [`KernelFs`] root): `lever/camera` is
//! `ROOT/sys/fs/cgroup/lever/camera`. Where a task is comes from
//! `/proc/PID/cgroup`, whose cgroup v2 line is
//!
//! ```text
//! 0::/user.slice/user-1000.slice/session-2.scope
//! ```

use crate::model::{CgroupKnob, Original, Restored};
use crate::TaskError;
use lever_kernel::{KernelError, KernelFs};

/// Where the unified hierarchy is mounted.
pub const CGROUP2_MOUNT: &str = "/sys/fs/cgroup";

/// The cgroup v2 hierarchy below a root prefix.
#[derive(Debug, Clone)]
pub struct Cgroups {
    fs: KernelFs,
    mount: String,
}

impl Cgroups {
    /// The hierarchy at [`CGROUP2_MOUNT`] below `fs`'s root.
    pub fn new(fs: KernelFs) -> Cgroups {
        Cgroups {
            fs,
            mount: CGROUP2_MOUNT.to_string(),
        }
    }

    /// The hierarchy mounted at kernel path `mount` below `fs`'s root.
    pub fn with_mount(fs: KernelFs, mount: &str) -> Cgroups {
        Cgroups {
            fs,
            mount: mount.trim_end_matches('/').to_string(),
        }
    }

    /// The hierarchy where `/proc/mounts` says cgroup2 is mounted (hybrid
    /// systems have it at `/sys/fs/cgroup/unified`), else
    /// [`CGROUP2_MOUNT`]. A mounts line:
    ///
    /// ```text
    /// cgroup2 /sys/fs/cgroup/unified cgroup2 rw,nosuid,nodev,noexec,relatime 0 0
    /// ```
    pub fn discover(fs: KernelFs) -> Cgroups {
        let mount = fs
            .read_optional("/proc/mounts")
            .ok()
            .flatten()
            .and_then(|text| {
                text.lines().find_map(|l| {
                    let mut f = l.split_whitespace();
                    let (_, dir, kind) = (f.next()?, f.next()?, f.next()?);
                    (kind == "cgroup2").then(|| dir.to_string())
                })
            })
            .unwrap_or_else(|| CGROUP2_MOUNT.to_string());
        Cgroups::with_mount(fs, &mount)
    }

    /// The kernel path of the cgroup2 mount.
    pub fn mount(&self) -> &str {
        &self.mount
    }

    /// The kernel path of `cgroup`'s file `file` (`""` = the cgroup itself).
    fn path(&self, cgroup: &str, file: &str) -> String {
        let mut p = self.mount.clone();
        for part in [cgroup.trim_matches('/'), file] {
            if !part.is_empty() {
                p.push('/');
                p.push_str(part);
            }
        }
        p
    }

    /// Ok when a cgroup2 hierarchy is there (its root has
    /// `cgroup.controllers`); otherwise why not.
    pub fn check(&self) -> Result<(), TaskError> {
        if self.fs.exists(&self.path("", "cgroup.controllers")) {
            Ok(())
        } else {
            Err(TaskError::NotAvailable {
                what: "cgroup v2".into(),
                why: format!(
                    "no cgroup2 hierarchy at {} (no cgroup.controllers; cgroup v1 or not mounted)",
                    self.mount
                ),
            })
        }
    }

    /// Why `controller` (`cpu`, `cpuset`) cannot be used here, if it
    /// cannot: no cgroup2 hierarchy ([`Cgroups::check`]), or one whose root
    /// does not offer it (the controller is bound to a cgroup v1 hierarchy,
    /// as on hybrid systems). Used to say why a cgroup change failed.
    pub fn controller_unavailable(&self, controller: &str) -> Option<TaskError> {
        if let Err(e) = self.check() {
            return Some(e);
        }
        let offered = self
            .fs
            .read_optional(&self.path("", "cgroup.controllers"))
            .ok()
            .flatten()
            .unwrap_or_default();
        (!offered.split_whitespace().any(|w| w == controller)).then(|| TaskError::NotAvailable {
            what: format!("the {controller} controller"),
            why: format!(
                "the cgroup2 hierarchy at {} does not offer it (cgroup.controllers: {:?}); it is bound to cgroup v1 or not built",
                self.mount,
                offered.trim()
            ),
        })
    }

    /// Whether `cgroup` exists.
    pub fn exists(&self, cgroup: &str) -> bool {
        self.fs.exists(&self.path(cgroup, ""))
    }

    /// Create `cgroup` and any missing parents; true if it was created.
    pub fn create(&self, cgroup: &str) -> Result<bool, TaskError> {
        let kpath = self.path(cgroup, "");
        if self.fs.exists(&kpath) {
            return Ok(false);
        }
        if let Some((parent, _)) = cgroup.trim_matches('/').rsplit_once('/') {
            self.create(parent)?;
        }
        let dir = self.fs.resolve(&kpath)?;
        std::fs::create_dir(&dir).map_err(|source| TaskError::Cgroup {
            cgroup: cgroup.to_string(),
            op: "create",
            source,
        })?;
        if !self.fs.is_system() {
            self.populate(cgroup)?;
        }
        Ok(true)
    }

    /// On a fake tree, do what the kernel does on mkdir: give the new
    /// cgroup the interface files of the controllers its parent enables
    /// (`cgroup.subtree_control`), at their defaults.
    fn populate(&self, cgroup: &str) -> Result<(), TaskError> {
        let parent = cgroup
            .trim_matches('/')
            .rsplit_once('/')
            .map_or("", |(p, _)| p);
        let enabled = self
            .fs
            .read_optional(&self.path(parent, "cgroup.subtree_control"))?
            .unwrap_or_default();
        let mut files: Vec<(&str, &str)> = vec![
            ("cgroup.controllers", enabled.trim()),
            ("cgroup.subtree_control", ""),
            ("cgroup.procs", ""),
            ("cgroup.threads", ""),
            ("cgroup.type", "domain"),
            ("cgroup.freeze", "0"),
        ];
        let on = |c: &str| enabled.split_whitespace().any(|w| w == c);
        if on("cpu") {
            files.extend([
                ("cpu.weight", "100"),
                ("cpu.weight.nice", "0"),
                ("cpu.max", "max 100000"),
                ("cpu.idle", "0"),
                ("cpu.uclamp.min", "0.00"),
                ("cpu.uclamp.max", "max"),
            ]);
        }
        if on("cpuset") {
            files.extend([("cpuset.cpus", ""), ("cpuset.cpus.partition", "member")]);
        }
        if on("memory") {
            files.extend([
                ("memory.min", "0"),
                ("memory.low", "0"),
                ("memory.high", "max"),
                ("memory.max", "max"),
                ("memory.swap.max", "max"),
            ]);
        }
        if on("io") {
            files.push(("io.weight", "default 100"));
        }
        for (file, value) in files {
            // The kernel prints an empty list of pids as nothing, any other
            // empty value as an empty line.
            let text = if file == "cgroup.procs" || file == "cgroup.threads" {
                String::new()
            } else {
                format!("{value}\n")
            };
            self.fs.create_node(&self.path(cgroup, file), &text)?;
        }
        Ok(())
    }

    /// Remove an empty `cgroup` (rmdir; on a fake tree its files go too).
    pub fn remove(&self, cgroup: &str) -> Result<(), TaskError> {
        let dir = self.fs.resolve(&self.path(cgroup, ""))?;
        // A real cgroup is removed with rmdir (its interface files are not
        // files to delete); a fake tree's directory holds real files.
        let result = if self.fs.is_system() {
            std::fs::remove_dir(&dir)
        } else {
            std::fs::remove_dir_all(&dir)
        };
        result.map_err(|source| TaskError::Cgroup {
            cgroup: cgroup.to_string(),
            op: "remove",
            source,
        })
    }

    /// Enable `controllers` (`cpu`, `cpuset`) for `cgroup`'s children by
    /// writing `+NAME` to its `cgroup.subtree_control`. Controllers already
    /// enabled are left alone.
    pub fn enable_controllers(&self, cgroup: &str, controllers: &[&str]) -> Result<(), TaskError> {
        let path = self.path(cgroup, "cgroup.subtree_control");
        let current = self.fs.read_optional(&path)?.unwrap_or_default();
        let mut words: Vec<&str> = current.split_whitespace().collect();
        // On a fake tree, refuse what the kernel refuses (ENOENT): a
        // controller the cgroup itself does not have (its
        // `cgroup.controllers`, when the tree has one).
        let offered = if self.fs.is_system() {
            None
        } else {
            self.fs
                .read_optional(&self.path(cgroup, "cgroup.controllers"))?
        };
        for c in controllers {
            if !words.contains(c) {
                if self.fs.is_system() {
                    self.fs.write_raw(&path, &format!("+{c}"))?;
                } else if offered
                    .as_deref()
                    .is_some_and(|o| !o.split_whitespace().any(|w| w == *c))
                {
                    return Err(TaskError::Cgroup {
                        cgroup: cgroup.to_string(),
                        op: "enable a controller for",
                        source: std::io::Error::from_raw_os_error(2),
                    });
                }
                words.push(c);
            }
        }
        if !self.fs.is_system() {
            // A fake file keeps what is written; store the list the kernel
            // would show.
            self.fs.write_raw(&path, &words.join(" "))?;
        }
        Ok(())
    }

    /// What `cgroup`'s `knob` holds now, trimmed.
    pub fn read(&self, cgroup: &str, knob: CgroupKnob) -> Result<String, TaskError> {
        Ok(self
            .fs
            .read(&self.path(cgroup, knob.file()))?
            .trim()
            .to_string())
    }

    /// Write `value` to `cgroup`'s `knob`; returns what it held.
    pub fn write(
        &self,
        cgroup: &str,
        knob: CgroupKnob,
        value: &str,
    ) -> Result<Original, TaskError> {
        let before = self.read(cgroup, knob)?;
        self.fs.write_raw(&self.path(cgroup, knob.file()), value)?;
        Ok(Original::CgroupFile {
            cgroup: cgroup.trim_matches('/').to_string(),
            knob,
            value: before,
        })
    }

    /// The cgroup (below the mount, `` for the root) that process `pid` is
    /// in, or with `thread`, that thread `pid` is in.
    pub fn cgroup_of(&self, pid: i32, thread: bool) -> Result<String, TaskError> {
        let path = if thread {
            format!("/proc/{pid}/task/{pid}/cgroup")
        } else {
            format!("/proc/{pid}/cgroup")
        };
        let text = match self.fs.read(&path) {
            Err(e) if e.is_missing() => return Err(TaskError::Gone { tid: pid }),
            other => other?,
        };
        // The v2 entry: hierarchy 0, no controller list.
        text.lines()
            .find_map(|l| l.strip_prefix("0::"))
            .map(|p| p.trim().trim_matches('/').to_string())
            .ok_or_else(|| TaskError::NotAvailable {
                what: "cgroup v2".into(),
                why: format!(
                    "{path} has no `0::` line (the process is not in a cgroup2 hierarchy)"
                ),
            })
    }

    /// Create `cgroup` and its parents, enabling `controllers` in each
    /// parent's `cgroup.subtree_control` so the child gets their files.
    ///
    /// The hierarchy's root is a parent too: on a board whose init does not
    /// enable controllers there (busybox init, unlike systemd), the first
    /// level would otherwise get no `cpu.*` or `cpuset.*` files.
    pub fn ensure(&self, cgroup: &str, controllers: &[&str]) -> Result<(), TaskError> {
        let parts: Vec<&str> = cgroup.trim_matches('/').split('/').collect();
        self.enable_controllers("", controllers)?;
        for n in 1..parts.len() {
            let parent = parts[..n].join("/");
            self.create(&parent)?;
            self.enable_controllers(&parent, controllers)?;
        }
        self.create(cgroup)?;
        Ok(())
    }

    /// Where `pid` (or thread `pid`) is now, as the original a move would
    /// replace; nothing changes.
    pub fn membership_of(&self, pid: i32, thread: bool) -> Result<Original, TaskError> {
        Ok(Original::Membership {
            pid,
            thread,
            cgroup: self.cgroup_of(pid, thread)?,
        })
    }

    /// What `cgroup`'s `knob` holds, as the original a write would
    /// replace; nothing changes.
    pub fn file_original(&self, cgroup: &str, knob: CgroupKnob) -> Result<Original, TaskError> {
        Ok(Original::CgroupFile {
            cgroup: cgroup.trim_matches('/').to_string(),
            knob,
            value: self.read(cgroup, knob)?,
        })
    }

    /// Write `value` to `cgroup`'s `knob` without reading it first.
    pub fn write_value(
        &self,
        cgroup: &str,
        knob: CgroupKnob,
        value: &str,
    ) -> Result<(), TaskError> {
        Ok(self.fs.write_raw(&self.path(cgroup, knob.file()), value)?)
    }

    /// Move `pid` (or thread `pid`) into `cgroup` without reading where it
    /// was.
    pub fn attach_task(&self, pid: i32, thread: bool, cgroup: &str) -> Result<(), TaskError> {
        self.attach(pid, thread, cgroup)
    }

    /// The root prefix.
    pub fn fs(&self) -> &KernelFs {
        &self.fs
    }

    /// Move process `pid` (all its threads) into `cgroup`; returns where it
    /// was.
    pub fn move_process(&self, pid: i32, cgroup: &str) -> Result<Original, TaskError> {
        self.move_task(pid, false, cgroup)
    }

    /// Move only thread `tid` into `cgroup` (`cgroup.threads`; the kernel
    /// allows it within a threaded subtree); returns where it was.
    pub fn move_thread(&self, tid: i32, cgroup: &str) -> Result<Original, TaskError> {
        self.move_task(tid, true, cgroup)
    }

    fn move_task(&self, pid: i32, thread: bool, cgroup: &str) -> Result<Original, TaskError> {
        let before = self.membership_of(pid, thread)?;
        self.attach(pid, thread, cgroup)?;
        Ok(before)
    }

    fn attach(&self, pid: i32, thread: bool, cgroup: &str) -> Result<(), TaskError> {
        let file = if thread {
            "cgroup.threads"
        } else {
            "cgroup.procs"
        };
        if !self.fs.is_system() {
            return self.fake_attach(pid, thread, cgroup, file);
        }
        match self
            .fs
            .write_raw(&self.path(cgroup, file), &pid.to_string())
        {
            Ok(()) => Ok(()),
            Err(KernelError::Io { source, .. }) if source.raw_os_error() == Some(libc::ESRCH) => {
                Err(TaskError::Gone { tid: pid })
            }
            // cgroup v2 refuses a lone thread outside a threaded subtree
            // (EOPNOTSUPP from cgroup.threads of a domain cgroup).
            Err(KernelError::Io { source, .. })
                if thread && source.raw_os_error() == Some(libc::EOPNOTSUPP) =>
            {
                let kind = self
                    .fs
                    .read_optional(&self.path(cgroup, "cgroup.type"))
                    .ok()
                    .flatten()
                    .unwrap_or_else(|| "unknown".into());
                Err(TaskError::NotAvailable {
                    what: format!("moving thread {pid} alone into {cgroup}"),
                    why: format!(
                        "cgroup v2 moves a single thread only inside a threaded subtree and \
                         {cgroup} is of cgroup.type `{}` ({source}); move the whole process \
                         instead (an app's `move_to`)",
                        kind.trim()
                    ),
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// On a fake tree, do what the kernel does when a pid is written to
    /// `cgroup.procs`: the pid leaves its old cgroup's list, joins the new
    /// one's, and `/proc/PID/cgroup` names the new cgroup.
    fn fake_attach(
        &self,
        pid: i32,
        thread: bool,
        cgroup: &str,
        file: &str,
    ) -> Result<(), TaskError> {
        let old = self.cgroup_of(pid, thread)?;
        let line = pid.to_string();
        let old_path = self.path(&old, file);
        if let Some(text) = self.fs.read_optional(&old_path)? {
            let kept: String = text
                .lines()
                .filter(|l| l.trim() != line)
                .map(|l| format!("{l}\n"))
                .collect();
            // create_node writes exactly the text (an empty list stays
            // empty); a fake tree is never the system root.
            self.fs.create_node(&old_path, &kept)?;
        }
        let new_path = self.path(cgroup, file);
        let mut text = self.fs.read_optional(&new_path)?.unwrap_or_default();
        if !text.lines().any(|l| l.trim() == line) {
            text.push_str(&format!("{line}\n"));
        }
        self.fs.create_node(&new_path, &text)?;
        let proc_file = if thread {
            format!("/proc/{pid}/task/{pid}/cgroup")
        } else {
            format!("/proc/{pid}/cgroup")
        };
        self.fs
            .write_raw(&proc_file, &format!("0::/{}\n", cgroup.trim_matches('/')))?;
        Ok(())
    }

    /// Put a cgroup original back: a file's old content, or a task back in
    /// its old cgroup. A task that exited, or a cgroup that was removed, is
    /// [`Restored::Skipped`].
    pub fn restore(&self, original: &Original) -> Result<Restored, TaskError> {
        match original {
            Original::CgroupFile {
                cgroup,
                knob,
                value,
            } => {
                if !self.exists(cgroup) {
                    return Ok(Restored::Skipped {
                        why: format!("cgroup {cgroup} was removed"),
                    });
                }
                self.fs.write_raw(&self.path(cgroup, knob.file()), value)?;
                Ok(Restored::Done)
            }
            Original::Membership {
                pid,
                thread,
                cgroup,
            } => {
                if !self.fs.exists(&format!("/proc/{pid}")) {
                    return Ok(Restored::Skipped {
                        why: format!("task {pid} exited"),
                    });
                }
                if !self.exists(cgroup) {
                    return Ok(Restored::Skipped {
                        why: format!("cgroup {cgroup} was removed"),
                    });
                }
                match self.attach(*pid, *thread, cgroup) {
                    Ok(()) => Ok(Restored::Done),
                    Err(TaskError::Gone { .. }) => Ok(Restored::Skipped {
                        why: format!("task {pid} exited"),
                    }),
                    Err(e) => Err(e),
                }
            }
            Original::Created { cgroup } => {
                if !self.exists(cgroup) {
                    return Ok(Restored::Skipped {
                        why: format!("cgroup {cgroup} was removed already"),
                    });
                }
                if let Some(why) = self.busy(cgroup)? {
                    return Ok(Restored::Skipped {
                        why: format!("cgroup {cgroup} is left in place: {why}"),
                    });
                }
                self.remove(cgroup)?;
                Ok(Restored::Done)
            }
            _ => Err(TaskError::WrongRestorer),
        }
    }

    /// Why `cgroup` may not be removed (it holds tasks or child cgroups),
    /// or `None` when it is empty.
    pub fn busy(&self, cgroup: &str) -> Result<Option<String>, TaskError> {
        for file in ["cgroup.procs", "cgroup.threads"] {
            let tasks = self
                .fs
                .read_optional(&self.path(cgroup, file))?
                .unwrap_or_default();
            if !tasks.trim().is_empty() {
                return Ok(Some(format!("{file} lists tasks")));
            }
        }
        let dir = self.fs.resolve(&self.path(cgroup, ""))?;
        let child = std::fs::read_dir(&dir)
            .map_err(|source| TaskError::Cgroup {
                cgroup: cgroup.to_string(),
                op: "list",
                source,
            })?
            .filter_map(Result::ok)
            .find(|e| e.file_type().is_ok_and(|t| t.is_dir()));
        Ok(child.map(|c| format!("it has a child cgroup {}", c.file_name().to_string_lossy())))
    }
}
