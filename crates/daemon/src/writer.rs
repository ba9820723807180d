//! The journal's disk thread: `fdatasync` and compaction's writes and
//! syncs run here, so the event loop never waits for the disk.
//!
//! The loop sends a [`Job`] and goes on serving; the thread does it and
//! sends back a [`Done`], then writes one byte to a pipe the loop watches
//! with epoll ([`Writer::wake_fd`]). Jobs run in the order sent.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::mpsc;

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};

/// Work for the disk thread.
#[derive(Debug)]
pub enum Job {
    /// Make everything written to `file` so far durable (and, first, the
    /// directory entry of a journal just renamed into place).
    Sync {
        /// A descriptor of the journal file (a clone).
        file: File,
        /// A directory to sync first.
        dir: Option<PathBuf>,
        /// Who waits for it.
        ticket: u64,
        /// The journal file generation it belongs to.
        generation: u64,
    },
    /// Write `text` to `tmp` and sync it (a compacted journal, renamed
    /// into place by the loop).
    Compact {
        /// The new file's path.
        tmp: PathBuf,
        /// Its content.
        text: String,
    },
}

/// What the disk thread did.
#[derive(Debug)]
pub enum Done {
    /// A [`Job::Sync`] returned.
    Synced {
        /// The job's ticket.
        ticket: u64,
        /// The job's generation.
        generation: u64,
        /// Whether the sync succeeded.
        result: io::Result<()>,
    },
    /// A [`Job::Compact`] returned the new file, open for writing at its
    /// end.
    Compacted(io::Result<File>),
}

/// The disk thread and its channels.
#[derive(Debug)]
pub struct Writer {
    jobs: Option<mpsc::Sender<Job>>,
    done: mpsc::Receiver<Done>,
    wake: OwnedFd,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Writer {
    /// Start the thread.
    pub fn start() -> io::Result<Writer> {
        let (wake, ring) = rustix::pipe::pipe_with(
            rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
        )?;
        let (jobs, rx) = mpsc::channel::<Job>();
        let (tx, done) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("lever-journal".into())
            .spawn(move || {
                for job in rx {
                    let out = match job {
                        Job::Sync {
                            file,
                            dir,
                            ticket,
                            generation,
                        } => {
                            let dir_synced = match dir {
                                Some(d) => File::open(d).and_then(|d| d.sync_all()),
                                None => Ok(()),
                            };
                            Done::Synced {
                                ticket,
                                generation,
                                result: dir_synced.and_then(|()| file.sync_data()),
                            }
                        }
                        Job::Compact { tmp, text } => Done::Compacted(write_synced(&tmp, &text)),
                    };
                    if tx.send(out).is_err() {
                        return;
                    }
                    // Full pipe: the loop has a wake-up pending already.
                    let _ = rustix::io::write(&ring, &[1]);
                }
            })?;
        Ok(Writer {
            jobs: Some(jobs),
            done,
            wake,
            thread: Some(thread),
        })
    }

    /// The descriptor that turns readable when something is done.
    pub fn wake_fd(&self) -> BorrowedFd<'_> {
        self.wake.as_fd()
    }

    /// Queue a job.
    pub fn send(&self, job: Job) {
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send(job);
        }
    }

    /// What is done so far (drains the wake pipe).
    pub fn take_done(&self) -> Vec<Done> {
        let mut b = [0u8; 64];
        while matches!(rustix::io::read(&self.wake, &mut b), Ok(n) if n > 0) {}
        self.done.try_iter().collect()
    }

    /// Wait for the next result (used to finish a compaction on a clean
    /// stop).
    pub fn wait_done(&self) -> Option<Done> {
        self.done.recv().ok()
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The compacted journal, readable by its owner only, synced.
fn write_synced(tmp: &std::path::Path, text: &str) -> io::Result<File> {
    let mut f = crate::journal::create_private(tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    Ok(f)
}
