//! The boot loader phase from a serial console log (seed 000 §7.2,
//! "First-phase timelines"), and the kernel's own printk times after it.
//!
//! One log, three possible writers, told apart by what the log holds:
//!
//! - **Qualcomm XBL/UEFI** (a `UEFI Start`, `UEFI Total` or `Exit EBS`
//!   line): milestones with a millisecond timestamp since power-on in
//!   brackets, read here.
//! - **U-Boot** (a `U-Boot SPL 2023.04…` / `U-Boot 2024.04…` banner or a
//!   `Timer summary in microseconds` bootstage report): read by
//!   [`crate::uboot`].
//! - **the kernel** (`[    1.234567] …` printk lines): read by
//!   [`crate::printk`], after either loader or alone (a saved dmesg).
//!
//! Terminal programs prefix each line with the host's time, a date and
//! time or a time of day: `[2024-02-06 15:26:06.978] ` or `[15:26:06.978] `.
//! The prefix is stripped and kept (U-Boot stages without a bootstage
//! report are measured with it). Qualcomm's XBL often wraps the bracket
//! onto the next line:
//!
//! ```text
//! [2024-02-06 15:26:06.978] UEFI Start
//!                                          [ 1547]
//! [2024-02-06 15:26:08.543] UEFI Total : 1015 ms
//! [2024-02-06 15:26:08.543] POST Time [ 2562] OS Loader
//! [2024-02-06 15:26:08.593] Exit EBS
//!                                           [ 3136] UEFI End
//! ```
//!
//! Qualcomm stages: PBL+XBL = `UEFI Start`; Core UEFI = `UEFI Total`;
//! kernel loader = `Exit EBS` − (PBL+XBL + Core UEFI); total before the
//! kernel = `Exit EBS`. The bracketed value may sit on the marker's line or
//! on the next one. A log that holds several boots is read from its last
//! `UEFI Start`.
//!
//! **Garbled lines.** A UART drops and mangles bytes, so a milestone line
//! may be cut mid-number (`UEFI Total : 10`). Such a line is skipped and
//! kept as a [`Skipped`] warning (line, text, why), and the stage is filled
//! from the lines around it where the arithmetic allows: `POST Time` −
//! `UEFI Start` is Core UEFI (1015 ms in §7.2's log, the same as its
//! `UEFI Total`), `POST Time` − `UEFI Total` is PBL+XBL, `Exit EBS` −
//! `POST Time` is the kernel loader, and `Exit EBS` alone is the total
//! before the kernel. Only a log of which nothing at all could be read is
//! an error (it names the first bad line).

use serde::Serialize;

use crate::{decimal_us, BootError};

/// One marker's value and where it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Mark {
    /// Value in microseconds (the log prints ms).
    pub us: u64,
    /// 1-based line of the marker.
    pub line: usize,
}

/// A log line that was skipped because it could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The log file (as given).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The line as read (host time prefix included).
    pub text: String,
    /// Why it was skipped and what was expected.
    pub reason: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: skipped garbled line `{}`: {}",
            self.file, self.line, self.text, self.reason
        )
    }
}

/// Which boot loader wrote the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Loader {
    /// Qualcomm PBL/XBL and UEFI (`UEFI Start`, `UEFI Total`, `Exit EBS`).
    QualcommUefi,
    /// Das U-Boot, with or without SPL (TI, NXP, Raspberry Pi, …).
    UBoot,
}

/// One boot loader stage, as the stage table shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoaderStage {
    /// Stage name (`PBL+XBL`, `SPL`, `board_init_r → main_loop`).
    pub stage: String,
    /// Where it was read (`serial log`, `U-Boot bootstage`, `host clock`).
    pub source: String,
    /// The markers or formula the value comes from.
    pub calculation: String,
    /// Duration, µs.
    pub us: u64,
}

impl LoaderStage {
    pub(crate) fn new(stage: &str, source: &str, calculation: String, us: u64) -> Self {
        LoaderStage {
            stage: stage.to_string(),
            source: source.to_string(),
            calculation,
            us,
        }
    }
}

/// The boot loader's stages, its total before the kernel, and why any
/// stage is missing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BeforeKernel {
    /// Stages in boot order; they add up to `total` when it is known.
    pub stages: Vec<LoaderStage>,
    /// Time from the loader's clock zero until the kernel starts.
    pub total: Option<LoaderStage>,
    /// What could not be computed, and why.
    pub notes: Vec<String>,
}

/// What a serial log says about the last boot it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct SerialTimes {
    /// The boot loader found in the log (`None`: kernel lines only).
    pub loader: Option<Loader>,
    /// `UEFI Start [ms]`: end of PBL + XBL (Qualcomm).
    pub uefi_start: Option<Mark>,
    /// `UEFI Total : N ms`: time spent in core UEFI (Qualcomm).
    pub uefi_total: Option<Mark>,
    /// `POST Time [ms] OS Loader` (Qualcomm).
    pub post_time: Option<Mark>,
    /// `Exit EBS [ms] UEFI End`: UEFI hands over to the kernel (Qualcomm).
    pub exit_ebs: Option<Mark>,
    /// How many boots the log holds (`UEFI Start` lines, U-Boot boots).
    pub boots: usize,
    /// U-Boot banners, bootstage report and host-clock milestones.
    pub uboot: Option<crate::uboot::UBootTimes>,
    /// The kernel's printk times, when the log goes on into the kernel.
    pub kernel: Option<crate::printk::KernelTimes>,
    /// Lines that could not be read and were skipped.
    pub warnings: Vec<Skipped>,
}

impl SerialTimes {
    /// PBL + XBL, µs: `UEFI Start`, else `POST Time` − `UEFI Total`.
    pub fn pbl_xbl_us(&self) -> Option<u64> {
        self.pbl_xbl().map(|(us, _)| us)
    }

    /// Core UEFI, µs: `UEFI Total`, else `POST Time` − `UEFI Start`.
    pub fn core_uefi_us(&self) -> Option<u64> {
        self.core_uefi().map(|(us, _)| us)
    }

    /// Kernel loader, µs: `Exit EBS` − (PBL+XBL + Core UEFI), else
    /// `Exit EBS` − `POST Time`.
    pub fn kernel_loader_us(&self) -> Option<u64> {
        self.kernel_loader().map(|(us, _)| us)
    }

    /// Total time before the kernel, µs: `Exit EBS` (Qualcomm) or U-Boot's
    /// handover to the kernel.
    pub fn before_kernel_us(&self) -> Option<u64> {
        self.before_kernel().total.map(|s| s.us)
    }

    fn pbl_xbl(&self) -> Option<(u64, String)> {
        if let Some(m) = self.uefi_start {
            return Some((m.us, format!("UEFI Start [{}]", ms(m.us))));
        }
        let (post, total) = (self.post_time?, self.uefi_total?);
        let us = post.us.checked_sub(total.us)?;
        Some((
            us,
            format!(
                "POST Time [{}] − UEFI Total {} ms",
                ms(post.us),
                ms(total.us)
            ),
        ))
    }

    fn core_uefi(&self) -> Option<(u64, String)> {
        if let Some(m) = self.uefi_total {
            return Some((m.us, format!("UEFI Total : {} ms", ms(m.us))));
        }
        let (post, start) = (self.post_time?, self.uefi_start?);
        let us = post.us.checked_sub(start.us)?;
        Some((
            us,
            format!(
                "POST Time [{}] − UEFI Start [{}]",
                ms(post.us),
                ms(start.us)
            ),
        ))
    }

    fn kernel_loader(&self) -> Option<(u64, String)> {
        let ebs = self.exit_ebs?;
        if let (Some((a, _)), Some((b, _))) = (self.pbl_xbl(), self.core_uefi()) {
            if let Some(us) = ebs.us.checked_sub(a + b) {
                return Some((
                    us,
                    format!("Exit EBS [{}] − (Core UEFI + PBL+XBL)", ms(ebs.us)),
                ));
            }
        }
        let post = self.post_time?;
        let us = ebs.us.checked_sub(post.us)?;
        Some((
            us,
            format!("Exit EBS [{}] − POST Time [{}]", ms(ebs.us), ms(post.us)),
        ))
    }

    /// The loader, spelt for a report: `Qualcomm XBL/UEFI`, `U-Boot
    /// 2024.04-… (SPL 2024.04-…)`, `none (kernel lines only)`.
    pub fn loader_name(&self) -> Option<String> {
        match self.loader {
            Some(Loader::QualcommUefi) => Some("Qualcomm XBL/UEFI".into()),
            Some(Loader::UBoot) => {
                let u = self.uboot.as_ref();
                let mut name = match u.and_then(|u| u.version.as_deref()) {
                    Some(v) => format!("U-Boot {v}"),
                    None => "U-Boot".to_string(),
                };
                if let Some(spl) = u.and_then(|u| u.spl_version.as_deref()) {
                    name.push_str(&format!(" (SPL {spl})"));
                }
                Some(name)
            }
            None => self
                .kernel
                .as_ref()
                .map(|_| "none (kernel lines only)".to_string()),
        }
    }

    /// The loader's stages and total, whichever loader wrote the log.
    pub fn before_kernel(&self) -> BeforeKernel {
        match self.loader {
            Some(Loader::QualcommUefi) => self.uefi_before_kernel(),
            Some(Loader::UBoot) => self
                .uboot
                .as_ref()
                .map(crate::uboot::UBootTimes::before_kernel)
                .unwrap_or_default(),
            None => BeforeKernel {
                notes: vec![
                    "serial log: no boot loader lines (Qualcomm UEFI or U-Boot), only the kernel's"
                        .into(),
                ],
                ..BeforeKernel::default()
            },
        }
    }

    fn uefi_before_kernel(&self) -> BeforeKernel {
        const SRC: &str = "serial log";
        let mut out = BeforeKernel::default();
        let pbl = self.pbl_xbl();
        let core = self.core_uefi();
        let loader = self.kernel_loader();
        for (name, value) in [
            ("PBL+XBL", &pbl),
            ("Core UEFI", &core),
            ("Kernel loader", &loader),
        ] {
            if let Some((us, calc)) = value {
                out.stages
                    .push(LoaderStage::new(name, SRC, calc.clone(), *us));
            }
        }
        if let (Some((a, _)), None, None, Some(ebs)) = (&pbl, &core, &loader, self.exit_ebs) {
            // Neither UEFI Total nor POST Time: the two middle stages can
            // only be given together, so the rows still add up.
            if let Some(us) = ebs.us.checked_sub(*a) {
                out.stages.push(LoaderStage::new(
                    "Core UEFI + Kernel loader",
                    SRC,
                    format!("Exit EBS [{}] − PBL+XBL", ms(ebs.us)),
                    us,
                ));
            }
        }
        if let Some(ebs) = self.exit_ebs {
            out.total = Some(LoaderStage::new(
                "Total before kernel",
                SRC,
                format!("Exit EBS [{}]", ms(ebs.us)),
                ebs.us,
            ));
        }
        if loader.is_none() {
            out.notes.push(
                "serial log: kernel loader needs `UEFI Start`, `UEFI Total` and `Exit EBS` (or `POST Time` and `Exit EBS`); some are missing"
                    .into(),
            );
        }
        if self.exit_ebs.is_none() {
            out.notes.push(
                "serial log: no readable `Exit EBS`: total before kernel not measured".into(),
            );
        }
        out
    }
}

fn ms(us: u64) -> String {
    crate::format_ms(us)
}

/// A log line with the host terminal's time prefix taken off.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    /// 1-based line number.
    pub no: usize,
    /// The line as read.
    pub raw: &'a str,
    /// The line without the host time prefix.
    pub text: &'a str,
    /// The host's time, µs (since 1970 for a date, since the first
    /// midnight of the log for a time of day).
    pub host_us: Option<u64>,
}

impl Line<'_> {
    pub(crate) fn skipped(&self, file: &str, reason: String) -> Skipped {
        Skipped {
            file: file.to_string(),
            line: self.no,
            text: printable(self.raw.trim()),
            reason: printable(&reason),
        }
    }
}

/// UART noise (NUL, escape sequences) shown as `\u{fffd}`, so a warning
/// prints as one clean line.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

/// `15:26:06.978` → µs since midnight.
fn time_of_day_us(text: &str) -> Option<u64> {
    let mut parts = text.split(':');
    let (h, m, s) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || h.len() > 2 || m.len() != 2 {
        return None;
    }
    let (h, m): (u64, u64) = (h.parse().ok()?, m.parse().ok()?);
    if h > 23 || m > 59 {
        return None;
    }
    Some((h * 60 + m) * 60_000_000 + decimal_us(s, 1_000_000)?)
}

/// Days from 1970-01-01 to a civil date (proleptic Gregorian).
fn days_since_epoch(y: u64, m: u64, d: u64) -> Option<u64> {
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || y < 1970 {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let (era, yoe) = (y / 400, y % 400);
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe).checked_sub(719_468)
}

/// `2024-02-06 15:26:06.978` or `15:26:06.978` → µs; `Err(())` for a
/// bracket that looks like a host time but cannot be read (garbled).
fn host_time_us(inside: &str) -> Result<(u64, bool), ()> {
    let inside = inside.trim();
    match inside.split_once([' ', 'T']) {
        Some((date, time)) => {
            let mut d = date.split('-').map(|p| p.parse::<u64>().ok());
            let (y, m, dd) = (d.next().flatten(), d.next().flatten(), d.next().flatten());
            let days = days_since_epoch(y.ok_or(())?, m.ok_or(())?, dd.ok_or(())?).ok_or(())?;
            let tod = time_of_day_us(time).ok_or(())?;
            Ok((days * 86_400_000_000 + tod, true))
        }
        None => time_of_day_us(inside).map(|us| (us, false)).ok_or(()),
    }
}

/// Cut a log into lines, taking off the host time prefix (a bracket that
/// holds a date or a time of day, not a bare number as printk's does).
pub(crate) fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    // A time of day wraps at midnight: count the days it went round.
    let (mut last_tod, mut day_us) = (None::<u64>, 0u64);
    for (i, raw) in text.lines().enumerate() {
        let mut line = Line {
            no: i + 1,
            raw,
            text: raw,
            host_us: None,
        };
        let t = raw.trim_start();
        if let Some((inside, after)) = t.strip_prefix('[').and_then(|r| r.split_once(']')) {
            if inside.contains(':') || inside.contains('-') {
                line.text = after;
                line.host_us = match host_time_us(inside) {
                    Ok((us, true)) => Some(us),
                    Ok((tod, false)) => {
                        if last_tod.is_some_and(|last| tod + 43_200_000_000 < last) {
                            day_us += 86_400_000_000;
                        }
                        last_tod = Some(tod);
                        Some(day_us + tod)
                    }
                    Err(()) => None,
                };
            }
        }
        out.push(line);
    }
    out
}

/// The first `[ 1547]` in `text`: `Some(Ok(ms))`, `Some(Err(why))` for a
/// bracket that holds no number or is cut off, `None` without a bracket.
fn bracket_ms(marker: &str, text: &str) -> Option<Result<u64, String>> {
    let start = text.find('[')?;
    let rest = &text[start + 1..];
    Some(match rest.split_once(']') {
        Some((inside, _)) => decimal_us(inside.trim(), 1000).ok_or_else(|| {
            format!("`{marker}` is followed by [{inside}], expected milliseconds such as [ 1547]")
        }),
        None => Err(format!(
            "`{marker}` value `[{}` is cut off (no closing `]`)",
            rest.trim_end()
        )),
    })
}

/// Which Qualcomm milestone a line holds, and the text after its name.
fn uefi_marker(text: &str) -> Option<(&'static str, &str)> {
    ["UEFI Start", "UEFI Total", "POST Time", "Exit EBS"]
        .into_iter()
        .find_map(|m| text.find(m).map(|pos| (m, &text[pos + m.len()..])))
}

/// Read Qualcomm's milestones into `times`, from the last `UEFI Start` on;
/// returns the index of that line.
fn read_uefi(file: &str, lines: &[Line<'_>], times: &mut SerialTimes) -> usize {
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].text.contains("UEFI Start"))
        .collect();
    times.boots = starts.len();
    let from = starts.last().copied().unwrap_or(0);
    // A bracketed ms value after the marker on line i, or at the start of
    // line i+1 (wrapped).
    let value_after = |i: usize, marker: &str, rest: &str| -> Result<Mark, String> {
        let found = bracket_ms(marker, rest).or_else(|| {
            lines
                .get(i + 1)
                .filter(|next| next.text.trim_start().starts_with('['))
                .and_then(|next| bracket_ms(marker, next.text))
        });
        match found {
            Some(Ok(us)) => Ok(Mark { us, line: i + 1 }),
            Some(Err(why)) => Err(why),
            None => Err(format!(
                "`{marker}` has no [ms] value on this or the next line"
            )),
        }
    };
    for (i, line) in lines.iter().enumerate().skip(from) {
        let Some((marker, rest)) = uefi_marker(line.text) else {
            continue;
        };
        let read = if marker == "UEFI Total" {
            // `UEFI Total : 1015 ms`
            let value = rest.trim_start().trim_start_matches(':').trim();
            let number: String = value
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let unit = value[number.len()..].trim();
            decimal_us(&number, 1000)
                .filter(|_| unit.starts_with("ms") || unit.starts_with("milli"))
                .map(|us| Mark { us, line: i + 1 })
                .ok_or_else(|| {
                    let cut = if !number.is_empty() && !unit.starts_with('m') {
                        " (cut off after the number?)"
                    } else {
                        ""
                    };
                    format!("cannot read `UEFI Total{rest}`: expected `UEFI Total : <N> ms`{cut}")
                })
        } else {
            value_after(i, marker, rest)
        };
        match read {
            Ok(mark) => {
                let slot = match marker {
                    "UEFI Start" => &mut times.uefi_start,
                    "UEFI Total" => &mut times.uefi_total,
                    "POST Time" => &mut times.post_time,
                    _ => &mut times.exit_ebs,
                };
                *slot = Some(mark);
            }
            Err(why) => times.warnings.push(line.skipped(file, why)),
        }
    }
    from
}

fn parse_err(file: &str, line: usize, message: String) -> BootError {
    BootError::Parse {
        file: file.to_string(),
        line,
        message,
    }
}

/// Parse a serial log: find which loader wrote it, read its milestones and
/// the kernel's printk times. Unreadable lines become
/// [`SerialTimes::warnings`]; only a log with nothing readable is an error.
pub fn parse(file: &str, text: &str) -> Result<SerialTimes, BootError> {
    let lines = lines(text);
    let mut times = SerialTimes::default();
    let is_uefi = lines.iter().any(|l| uefi_marker(l.text).is_some());
    let kernel_from = if is_uefi {
        times.loader = Some(Loader::QualcommUefi);
        // The kernel lines of the last boot come after its `UEFI Start`.
        read_uefi(file, &lines, &mut times)
    } else if crate::uboot::is_uboot(&lines) {
        times.loader = Some(Loader::UBoot);
        let u = crate::uboot::read(file, &lines, &mut times.warnings);
        times.boots = u.boots;
        let from = u.first_line.saturating_sub(1);
        times.uboot = Some(u);
        from
    } else {
        0
    };
    times.kernel = crate::printk::read(
        file,
        &lines[kernel_from.min(lines.len())..],
        &mut times.warnings,
    );

    let read_any = times.uefi_start.is_some()
        || times.uefi_total.is_some()
        || times.post_time.is_some()
        || times.exit_ebs.is_some()
        || times.uboot.as_ref().is_some_and(|u| u.has_times())
        || times.kernel.is_some();
    if !read_any {
        return Err(match times.warnings.first() {
            Some(w) => parse_err(file, w.line, w.reason.clone()),
            None if times.loader == Some(Loader::UBoot) => BootError::Empty {
                file: file.to_string(),
                message: "U-Boot log without times: enable CONFIG_BOOTSTAGE_REPORT or save the log with the terminal's timestamps".into(),
            },
            None => BootError::Empty {
                file: file.to_string(),
                message: "no `UEFI Start`, `UEFI Total` or `Exit EBS` line: not a Qualcomm UEFI serial log; \
                          no `U-Boot` banner or bootstage report either, nor `[    1.234567]` kernel lines"
                    .into(),
            },
        });
    }
    if let (Some(ebs), Some(a), Some(b)) = (times.exit_ebs, times.uefi_start, times.uefi_total) {
        if ebs.us < a.us + b.us {
            return Err(parse_err(
                file,
                ebs.line,
                format!(
                    "Exit EBS [{}] is earlier than UEFI Start [{}] + UEFI Total {} ms",
                    ebs.us / 1000,
                    a.us / 1000,
                    b.us / 1000
                ),
            ));
        }
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_on_the_same_line() {
        let t = parse(
            "s",
            "UEFI Start [ 1818]\nUEFI Total : 1071 ms\nExit EBS [ 3469] UEFI End\n",
        )
        .unwrap();
        assert_eq!(t.pbl_xbl_us(), Some(1_818_000));
        assert_eq!(t.kernel_loader_us(), Some(580_000));
        assert_eq!(t.boots, 1);
        assert_eq!(t.loader, Some(Loader::QualcommUefi));
        assert!(t.warnings.is_empty());
    }

    #[test]
    fn last_boot_wins() {
        let t = parse(
            "s",
            "UEFI Start [ 9999]\nUEFI Total : 5 ms\nUEFI Start [ 100]\nUEFI Total : 50 ms\nExit EBS [ 200]\n",
        )
        .unwrap();
        assert_eq!(t.boots, 2);
        assert_eq!(t.kernel_loader_us(), Some(50_000));
    }

    #[test]
    fn missing_value_names_the_line() {
        // Nothing readable at all: an error naming the first bad line.
        let e = parse("boot.log", "junk\nUEFI Start\nsomething else\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "boot.log:2: `UEFI Start` has no [ms] value on this or the next line"
        );
        // One good line: the bad one is a warning that names its line.
        let t = parse("boot.log", "UEFI Start [ 12]\nUEFI Total : lots ms\n").unwrap();
        let w = t.warnings[0].to_string();
        assert!(
            w.starts_with(
                "boot.log:2: skipped garbled line `UEFI Total : lots ms`: cannot read `UEFI Total"
            ),
            "{w}"
        );
        assert_eq!(t.pbl_xbl_us(), Some(12_000));
        let e = parse("b", "Exit EBS\n  [ abc] UEFI End\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("b:1: `Exit EBS` is followed by [ abc]"),
            "{e}"
        );
    }

    #[test]
    fn inconsistent_times_are_rejected() {
        let e = parse(
            "b",
            "UEFI Start [ 2000]\nUEFI Total : 1500 ms\nExit EBS [ 3000]\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("b:3: Exit EBS [3000] is earlier"), "{e}");
    }

    #[test]
    fn not_a_serial_log() {
        let e = parse("x.txt", "hello\n").unwrap_err().to_string();
        assert!(e.contains("not a Qualcomm UEFI serial log"), "{e}");
    }

    #[test]
    fn cut_bracket_and_fallbacks() {
        // `[ 15` cut: PBL+XBL from POST Time − UEFI Total.
        let t = parse(
            "s",
            "UEFI Start\n   [ 15\nUEFI Total : 1015 ms\nPOST Time [ 2562] OS Loader\nExit EBS [ 3136]\n",
        )
        .unwrap();
        assert_eq!(t.pbl_xbl_us(), Some(1_547_000));
        assert_eq!(t.kernel_loader_us(), Some(574_000));
        assert_eq!(
            t.warnings[0].reason,
            "`UEFI Start` value `[ 15` is cut off (no closing `]`)"
        );
    }

    #[test]
    fn host_times() {
        let l = lines("[2024-02-06 15:26:06.978] UEFI Start\n[23:59:59.5] a\n[00:00:00.25] b\n[    1.0] k\n[2024-02-0");
        assert_eq!(l[0].text, " UEFI Start");
        assert_eq!(
            l[0].host_us,
            Some((19_759 * 86_400 + 15 * 3600 + 26 * 60 + 6) * 1_000_000 + 978_000)
        );
        // A time of day goes round midnight.
        assert_eq!(l[2].host_us.unwrap() - l[1].host_us.unwrap(), 750_000);
        // printk's bracket is not a host time.
        assert_eq!(l[3].host_us, None);
        assert_eq!(l[3].text, "[    1.0] k");
        assert_eq!(days_since_epoch(1970, 1, 1), Some(0));
        assert_eq!(days_since_epoch(1980, 1, 6), Some(3_657));
    }
}
