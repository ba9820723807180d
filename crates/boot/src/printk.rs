//! The kernel stage from the kernel's own printk times on the serial
//! console (or in a saved `dmesg`).
//!
//! With `CONFIG_PRINTK_TIME` every console line starts with the seconds
//! since the kernel's clock started, printed by `print_time()` in
//! `kernel/printk/printk.c` as `[%5lu.%06lu]`:
//!
//! ```text
//! [    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd034]
//! [    1.878049] Freeing unused kernel memory: 4928K
//! [    1.896317] Run /sbin/init as init process
//! ```
//!
//! Kernel stage = the `Run <init> as init process` line (`init/main.c`,
//! `run_init_process()`: the kernel hands over to userspace) − the first
//! printk line. Without a `Run` line the last `Freeing unused kernel …`
//! line (`free_initmem()`, just before it) ends the stage. Time spent
//! before the kernel's clock starts (decompression, the first
//! `[    0.000000]` lines) is not counted; systemd's `(kernel)` has the
//! same blind spot.

use serde::Serialize;

use crate::serial::{Line, Skipped};

/// A printk line and its time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PrintkLine {
    /// Seconds since the kernel's clock started, as µs.
    pub us: u64,
    /// 1-based line in the log.
    pub line: usize,
    /// The message after the time.
    pub text: String,
}

/// The kernel's start and hand-over to userspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelTimes {
    /// The first printk line.
    pub first: PrintkLine,
    /// `Run /sbin/init as init process`, else the last `Freeing unused
    /// kernel …` line.
    pub init: Option<PrintkLine>,
    /// How many printk lines were read.
    pub lines: usize,
}

impl KernelTimes {
    /// The kernel stage, µs: `init` − `first`.
    pub fn kernel_us(&self) -> Option<u64> {
        self.init.as_ref()?.us.checked_sub(self.first.us)
    }
}

/// `[    1.896317] Run /sbin/init …` → (µs, message). The bracket must
/// start the line and hold seconds with a decimal point.
pub(crate) fn stamp(text: &str) -> Option<(u64, &str)> {
    let (inside, rest) = text.trim_start().strip_prefix('[')?.split_once(']')?;
    let inside = inside.trim();
    let (int, frac) = inside.split_once('.')?;
    if int.is_empty() || frac.is_empty() {
        return None;
    }
    Some((crate::decimal_us(inside, 1_000_000)?, rest.trim_start()))
}

fn is_init_run(text: &str) -> bool {
    text.starts_with("Run ") && text.contains(" as init process")
}

fn is_free_initmem(text: &str) -> bool {
    text.starts_with("Freeing unused kernel")
}

/// Read the kernel's printk lines; `None` when there are none. A line that
/// names the hand-over but lost its time goes to `warnings`.
pub(crate) fn read(
    file: &str,
    lines: &[Line<'_>],
    warnings: &mut Vec<Skipped>,
) -> Option<KernelTimes> {
    let mut out: Option<KernelTimes> = None;
    let (mut run, mut freeing) = (None, None);
    for l in lines {
        match stamp(l.text) {
            Some((us, text)) => {
                let p = PrintkLine {
                    us,
                    line: l.no,
                    text: text.to_string(),
                };
                if is_init_run(text) && run.is_none() {
                    run = Some(p.clone());
                } else if is_free_initmem(text) && run.is_none() {
                    freeing = Some(p.clone());
                }
                match &mut out {
                    Some(k) => k.lines += 1,
                    None => {
                        out = Some(KernelTimes {
                            first: p,
                            init: None,
                            lines: 1,
                        })
                    }
                }
            }
            None if out.is_some()
                && (l.text.contains(" as init process")
                    || l.text.contains("Freeing unused kernel")) =>
            {
                warnings.push(l.skipped(
                    file,
                    "kernel line without a readable `[    1.234567]` time".into(),
                ));
            }
            None => {}
        }
    }
    if let Some(k) = &mut out {
        k.init = run.or(freeing);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serial::lines;

    #[test]
    fn stamps() {
        assert_eq!(
            stamp("[    1.896317] Run /sbin/init as init process"),
            Some((1_896_317, "Run /sbin/init as init process"))
        );
        assert_eq!(stamp("[    1.8"), None);
        assert_eq!(stamp("[ 1547] UEFI End"), None);
        assert_eq!(stamp("text [    1.0] late"), None);
    }

    #[test]
    fn run_line_wins_and_freeing_is_the_fallback() {
        let log = "[    0.000000] Booting Linux\n[    1.878049] Freeing unused kernel memory: 4928K\n[    1.896317] Run /sbin/init as init process\n";
        let mut w = Vec::new();
        let k = read("d", &lines(log), &mut w).unwrap();
        assert_eq!(k.kernel_us(), Some(1_896_317));
        assert_eq!(k.lines, 3);
        let cut = log.replace("[    1.896317] Run", "[    1.8Run");
        let k = read("d", &lines(&cut), &mut w).unwrap();
        assert_eq!(k.kernel_us(), Some(1_878_049));
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].line, 3);
    }
}
