//! U-Boot's part of a serial log: banners, the bootstage report and the
//! kernel handover (TI AM6x, NXP i.MX, Raspberry Pi and other U-Boot
//! boards).
//!
//! U-Boot prints, in this order (U-Boot `common/spl/spl.c`,
//! `common/board_f.c`, `boot/bootm_final.c` / `arch/arm/lib/bootm.c`):
//!
//! ```text
//! U-Boot SPL 2024.04-ti-ga970f6e51043 (Nov 13 2024 - 14:26:23 +0000)
//! U-Boot 2024.04-ti-ga970f6e51043 (Nov 13 2024 - 14:26:23 +0000)
//! Starting kernel ...
//! ```
//!
//! TI's AM6x boot prints the SPL banner twice (R5 SPL, then A53 SPL); a
//! Raspberry Pi has no SPL (its GPU firmware loads U-Boot). With
//! `CONFIG_BOOTSTAGE_REPORT=y`, U-Boot prints its bootstage report right
//! after `Starting kernel ...` (`common/bootstage.c`, `bootstage_report()`:
//! `%11s%11s  %s`, numbers grouped by `print_grouped_ull()`):
//!
//! ```text
//! Timer summary in microseconds (8 records):
//!        Mark    Elapsed  Stage
//!           0          0  reset
//!     583,401    583,401  board_init_f
//!     727,725    144,324  board_init_r
//!   1,083,507    355,782  main_loop
//!   3,680,827  2,597,320  start_kernel
//!
//! Accumulated time:
//!                 36,047  dm_f
//!                 41,718  dm_r
//! ```
//!
//! Stages, best source first:
//!
//! - **bootstage report**: the marks `board_init_f`, `board_init_r`,
//!   `main_loop` and `start_kernel` cut U-Boot into `reset → board_init_f`
//!   (ROM, SPL, early U-Boot), `board_init_f → board_init_r` (before
//!   relocation), `board_init_r → main_loop` (drivers), `main_loop →
//!   start_kernel` (autoboot delay, loading kernel and device tree). A
//!   garbled mark drops out and its neighbours join (`board_init_f →
//!   main_loop`), so the rows still add up to `start_kernel`, the total
//!   before the kernel. The clock is U-Boot's `timer_get_boot_us()`; on
//!   most ARM SoCs that counts from reset.
//! - **host clock** (no report, but the terminal's time on each line): SPL
//!   = first `U-Boot SPL` banner → `U-Boot` banner; U-Boot = banner →
//!   `Starting kernel ...`. The time before the first banner (boot ROM, a
//!   Raspberry Pi's firmware) is not in the log.
//!
//! A log with several boots is read from the banner that follows the last
//! handover to a kernel.

use serde::Serialize;

use crate::serial::{BeforeKernel, Line, LoaderStage, Skipped};

/// One bootstage record (`   727,725    144,324  board_init_r`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BootstageRecord {
    /// Stage name as printed (`board_init_r`, `id=64`, may be empty).
    pub name: String,
    /// Mark (time since U-Boot's clock zero) or accumulated time, µs.
    pub us: u64,
    /// 1-based line in the log.
    pub line: usize,
}

/// A line that marks a milestone, and the host's time on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostMark {
    /// 1-based line.
    pub line: usize,
    /// The terminal's time on that line, µs (see [`crate::serial`]).
    pub host_us: Option<u64>,
}

/// What a U-Boot log says about the last boot in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct UBootTimes {
    /// Version of the first `U-Boot SPL` banner (`2024.04-ti-ga970f6e51043`).
    pub spl_version: Option<String>,
    /// Version of the `U-Boot` banner.
    pub version: Option<String>,
    /// The first `U-Boot SPL` banner of the boot.
    pub spl_banner: Option<HostMark>,
    /// The `U-Boot` banner.
    pub banner: Option<HostMark>,
    /// `Starting kernel ...`.
    pub starting_kernel: Option<HostMark>,
    /// `Timer summary in microseconds`: marks in time order.
    pub bootstage: Vec<BootstageRecord>,
    /// `Accumulated time:` records (`dm_f`, `dm_r`, …).
    pub accumulated: Vec<BootstageRecord>,
    /// How many boots the log holds.
    pub boots: usize,
    /// 1-based first line of the last boot.
    pub first_line: usize,
}

/// `U-Boot SPL 2024.04-ti-… (…)` → (is SPL, version).
fn banner(text: &str) -> Option<(bool, &str)> {
    let rest = text.trim_start().strip_prefix("U-Boot ")?;
    let (spl, rest) = match rest.strip_prefix("SPL ") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let version = rest.split_whitespace().next()?;
    version
        .starts_with(|c: char| c.is_ascii_digit())
        .then_some((spl, version))
}

const SUMMARY: &str = "Timer summary in microseconds";

/// Whether the log holds a U-Boot banner or bootstage report.
pub(crate) fn is_uboot(lines: &[Line<'_>]) -> bool {
    lines
        .iter()
        .any(|l| banner(l.text).is_some() || l.text.contains(SUMMARY))
}

/// `1,974,190` → 1974190 (groups of three after the first comma).
fn grouped(text: &str) -> Option<u64> {
    let mut groups = text.split(',');
    let first = groups.next()?;
    if first.is_empty() || first.len() > 3 && text.contains(',') {
        return None;
    }
    let mut digits = first.to_string();
    for g in groups {
        if g.len() != 3 {
            return None;
        }
        digits.push_str(g);
    }
    if !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `   727,725    144,324  board_init_r` → (mark, elapsed, name).
fn summary_row(text: &str) -> Option<(u64, u64, String)> {
    let mut words = text.split_whitespace();
    let mark = grouped(words.next()?)?;
    let elapsed = grouped(words.next()?)?;
    Some((mark, elapsed, words.collect::<Vec<_>>().join(" ")))
}

/// `                36,047  dm_f` → (µs, name).
fn accumulated_row(text: &str) -> Option<(u64, String)> {
    let mut words = text.split_whitespace();
    let us = grouped(words.next()?)?;
    let name = words.collect::<Vec<_>>().join(" ");
    (!name.is_empty()).then_some((us, name))
}

#[derive(PartialEq)]
enum Section {
    Out,
    Summary,
    Accumulated,
}

/// Read the last boot of a U-Boot log; unreadable report rows go to
/// `warnings`.
pub(crate) fn read(file: &str, lines: &[Line<'_>], warnings: &mut Vec<Skipped>) -> UBootTimes {
    // Where each boot starts: the first banner after a kernel handover.
    let (mut boots, mut from, mut handed_over) = (0, 0, true);
    for (i, l) in lines.iter().enumerate() {
        if banner(l.text).is_some() && handed_over {
            boots += 1;
            from = i;
            handed_over = false;
        } else if l.text.contains("Starting kernel") || crate::printk::stamp(l.text).is_some() {
            handed_over = true;
        }
    }
    let mut out = UBootTimes {
        boots,
        first_line: from + 1,
        ..UBootTimes::default()
    };
    let mark = |l: &Line<'_>| HostMark {
        line: l.no,
        host_us: l.host_us,
    };
    let mut section = Section::Out;
    for l in &lines[from..] {
        let text = l.text.trim();
        if let Some((spl, version)) = banner(text) {
            if spl && out.spl_banner.is_none() {
                out.spl_banner = Some(mark(l));
                out.spl_version = Some(version.to_string());
            } else if !spl && out.banner.is_none() {
                out.banner = Some(mark(l));
                out.version = Some(version.to_string());
            }
            continue;
        }
        if text.starts_with("Starting kernel") && out.starting_kernel.is_none() {
            out.starting_kernel = Some(mark(l));
            continue;
        }
        if text.starts_with(SUMMARY) {
            section = Section::Summary;
            out.bootstage.clear();
            continue;
        }
        if text.starts_with("Accumulated time") {
            section = Section::Accumulated;
            continue;
        }
        match section {
            Section::Out => {}
            _ if text.is_empty() || text.starts_with('[') => section = Section::Out,
            Section::Summary => {
                if text.starts_with("Mark")
                    || text.starts_with("Overflowed")
                    || text.starts_with("Please increase")
                {
                    continue;
                }
                let prev = out.bootstage.last();
                let checked = summary_row(text).ok_or_else(|| {
                    "bootstage row cut off or garbled: expected `<mark> <elapsed>  <stage>` with numbers grouped like 1,974,190".to_string()
                }).and_then(|(us, elapsed, name)| match prev {
                    // Elapsed is measured from the row above, so a row whose
                    // digits were mangled into another valid number is caught.
                    Some(p) if p.line + 1 == l.no && us.checked_sub(p.us) != Some(elapsed) => Err(format!(
                        "bootstage mark {us} µs − previous {} µs is not the elapsed {elapsed} µs printed beside it",
                        p.us
                    )),
                    _ => Ok(BootstageRecord { name, us, line: l.no }),
                });
                match checked {
                    Ok(r) => out.bootstage.push(r),
                    Err(why) => warnings.push(l.skipped(file, why)),
                }
            }
            Section::Accumulated => match accumulated_row(text) {
                Some((us, name)) => out.accumulated.push(BootstageRecord {
                    name,
                    us,
                    line: l.no,
                }),
                // The report is over; the kernel or the prompt follows.
                None => section = Section::Out,
            },
        }
    }
    out
}

/// The marks that cut U-Boot into stages, in boot order.
const KEY_MARKS: [&str; 4] = ["board_init_f", "board_init_r", "main_loop", "start_kernel"];

fn host_span(to: &HostMark, from: &HostMark) -> Option<u64> {
    to.host_us?.checked_sub(from.host_us?)
}

impl UBootTimes {
    /// Whether any time (bootstage or host clock) was read.
    pub fn has_times(&self) -> bool {
        !self.bootstage.is_empty()
            || [&self.spl_banner, &self.banner, &self.starting_kernel]
                .iter()
                .any(|m| m.as_ref().is_some_and(|m| m.host_us.is_some()))
    }

    /// A bootstage mark by name (`board_init_r`, or old U-Boot's
    /// `board_init_r start`).
    pub fn mark(&self, name: &str) -> Option<&BootstageRecord> {
        self.bootstage.iter().find(|r| {
            r.name == name
                || r.name
                    .strip_prefix(name)
                    .is_some_and(|s| s.starts_with(' '))
        })
    }

    /// U-Boot's stages and the total before the kernel.
    pub fn before_kernel(&self) -> BeforeKernel {
        if self.mark("start_kernel").is_some() {
            return self.bootstage_stages();
        }
        let host = self.host_stages();
        if host.total.is_some() || self.bootstage.is_empty() {
            return host;
        }
        self.bootstage_stages()
    }

    fn bootstage_stages(&self) -> BeforeKernel {
        const SRC: &str = "U-Boot bootstage";
        let mut out = BeforeKernel::default();
        let (mut prev_name, mut prev_us) = ("reset", 0);
        for key in KEY_MARKS {
            let Some(r) = self.mark(key) else { continue };
            let Some(us) = r.us.checked_sub(prev_us) else {
                continue;
            };
            out.stages.push(LoaderStage::new(
                &format!("{prev_name} → {key}"),
                SRC,
                format!("bootstage {key} {} − {prev_name} {prev_us} µs", r.us),
                us,
            ));
            (prev_name, prev_us) = (key, r.us);
        }
        match self.mark("start_kernel") {
            Some(r) => {
                out.total = Some(LoaderStage::new(
                    "Total before kernel",
                    SRC,
                    format!("bootstage start_kernel {} µs", r.us),
                    r.us,
                ));
            }
            None => out.notes.push(
                "U-Boot bootstage report has no `start_kernel` mark (printed by `bootstage report` at the prompt?): total before kernel not measured".into(),
            ),
        }
        let missing: Vec<&str> = KEY_MARKS
            .into_iter()
            .filter(|k| self.mark(k).is_none())
            .collect();
        if !missing.is_empty() && out.total.is_some() {
            out.notes.push(format!(
                "U-Boot bootstage report has no readable {} mark: the stages around it are joined",
                missing.join(", ")
            ));
        }
        out
    }

    fn host_stages(&self) -> BeforeKernel {
        const SRC: &str = "host clock";
        let mut out = BeforeKernel::default();
        let first = self.spl_banner.as_ref().or(self.banner.as_ref());
        // (stage, from, its text, to, its text): consecutive milestones.
        let spans = [
            (
                "SPL",
                &self.spl_banner,
                "`U-Boot SPL` banner",
                &self.banner,
                "`U-Boot` banner",
            ),
            (
                "U-Boot",
                &self.banner,
                "`U-Boot` banner",
                &self.starting_kernel,
                "`Starting kernel ...`",
            ),
        ];
        for (stage, from, from_text, to, to_text) in spans {
            let (Some(f), Some(t)) = (from, to) else {
                continue;
            };
            if let Some(us) = host_span(t, f) {
                out.stages.push(LoaderStage::new(
                    stage,
                    SRC,
                    format!(
                        "{to_text} (line {}) − {from_text} (line {})",
                        t.line, f.line
                    ),
                    us,
                ));
            }
        }
        match (first, &self.starting_kernel) {
            (Some(f), Some(k)) if host_span(k, f).is_some() => {
                let us = host_span(k, f).unwrap_or(0);
                // Keep the rows adding up when a banner's time was unreadable.
                let shown: u64 = out.stages.iter().map(|s| s.us).sum();
                if shown != us {
                    out.stages = vec![LoaderStage::new(
                        "SPL + U-Boot",
                        SRC,
                        format!("`Starting kernel ...` (line {}) − first banner (line {})", k.line, f.line),
                        us,
                    )];
                }
                out.total = Some(LoaderStage::new(
                    "Total before kernel",
                    SRC,
                    format!("`Starting kernel ...` (line {}) − first banner (line {})", k.line, f.line),
                    us,
                ));
                out.notes.push(
                    "U-Boot log without a bootstage report: stages timed by the terminal's clock, from the first banner (boot ROM and firmware before it are not in the log)".into(),
                );
            }
            _ => out.notes.push(
                "U-Boot log: no bootstage report (CONFIG_BOOTSTAGE_REPORT) and no terminal timestamps on the banners and `Starting kernel ...`: U-Boot stages not measured".into(),
            ),
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_numbers() {
        assert_eq!(grouped("0"), Some(0));
        assert_eq!(grouped("29,743"), Some(29_743));
        assert_eq!(grouped("30,361,327"), Some(30_361_327));
        assert_eq!(grouped("1,97"), None);
        assert_eq!(grouped("1,974,1"), None);
        assert_eq!(grouped(",974"), None);
        assert_eq!(grouped("9x"), None);
    }

    #[test]
    fn banners() {
        assert_eq!(
            banner("U-Boot SPL 2021.01-00001-g3e29ce144c-dirty (Jan 18 2023 - 08:35:34 +0100)"),
            Some((true, "2021.01-00001-g3e29ce144c-dirty"))
        );
        assert_eq!(
            banner("U-Boot 2023.07.02 (Aug 01 2023 - 12:00:00 +0000)"),
            Some((false, "2023.07.02"))
        );
        assert_eq!(banner("U-Boot environment"), None);
    }
}
