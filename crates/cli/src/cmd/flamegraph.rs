//! `lever flamegraph`: an SVG flame graph from `perf script` output, from a
//! `perf.data` file, or by profiling a command with `perf record -g`.

use crate::args::Global;
use crate::render::{print_json, Table};
use anyhow::{bail, Context};
use clap::Args;
use lever_flamegraph::{collapse_perf_script, read_folded, render_svg, Profile};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `lever flamegraph` flags.
#[derive(Debug, Args)]
pub struct FlamegraphArgs {
    /// Input: `perf script` text, a `perf.data` file (read with `perf
    /// script`), or folded stacks with --folded; `-` for stdin. Without it,
    /// profile the command after `--`.
    #[arg(short, long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// The input is already folded (`a;b;c COUNT` per line).
    #[arg(long)]
    pub folded: bool,
    /// Output SVG.
    #[arg(short, long, value_name = "SVG", default_value = "flamegraph.svg")]
    pub output: PathBuf,
    /// Also write the folded stacks here.
    #[arg(long, value_name = "FILE")]
    pub folded_out: Option<PathBuf>,
    /// Title of the graph (default: the input or the command).
    #[arg(long)]
    pub title: Option<String>,
    /// Sampling frequency for `perf record`, in Hz.
    #[arg(short = 'F', long, default_value_t = 999)]
    pub frequency: u32,
    /// How many hot functions to list.
    #[arg(long, default_value_t = 15)]
    pub top: usize,
    /// Command to profile (after `--`).
    #[arg(last = true)]
    pub command: Vec<String>,
}

fn perf_script(data: &Path) -> anyhow::Result<String> {
    let out = Command::new("perf")
        .args(["script", "-i"])
        .arg(data)
        .stderr(Stdio::piped())
        .output()
        .context("cannot run `perf script` (install linux-perf)")?;
    if !out.status.success() {
        bail!(
            "perf script -i {} failed: {}",
            data.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn record(command: &[String], frequency: u32) -> anyhow::Result<String> {
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("perf.data");
    let status = Command::new("perf")
        .args(["record", "-g", "-F", &frequency.to_string(), "-o"])
        .arg(&data)
        .arg("--")
        .args(command)
        .status()
        .context("not available here because `perf` is not installed (apt-get install linux-perf); or give -i FILE")?;
    if !status.success() && !data.exists() {
        bail!("perf record failed ({status}); check /proc/sys/kernel/perf_event_paranoid or run as root");
    }
    perf_script(&data)
}

pub fn run(global: &Global, args: FlamegraphArgs) -> anyhow::Result<()> {
    let (text, source) = match (&args.input, args.command.is_empty()) {
        (Some(_), false) => bail!("give either -i FILE or a command after `--`, not both"),
        (None, true) => bail!("nothing to draw: give -i FILE (perf script output or perf.data) or a command after `--`"),
        (None, false) => (record(&args.command, args.frequency)?, args.command.join(" ")),
        (Some(p), true) if p == Path::new("-") => {
            let mut t = String::new();
            std::io::stdin().read_to_string(&mut t)?;
            (t, "stdin".to_string())
        }
        (Some(p), true) => {
            let bytes = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
            // perf.data files start with the magic "PERFILE2".
            let text = if bytes.starts_with(b"PERFILE2") {
                perf_script(p)?
            } else {
                String::from_utf8_lossy(&bytes).into_owned()
            };
            (text, p.display().to_string())
        }
    };
    let folded = if args.folded {
        read_folded(text.as_bytes())?
    } else {
        collapse_perf_script(text.as_bytes()).with_context(|| format!("folding {source}"))?
    };
    let profile = Profile::from_folded(&folded)?;
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("lever flamegraph: {source}"));
    let file = std::fs::File::create(&args.output)
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    render_svg(&folded, &title, std::io::BufWriter::new(file))?;
    if let Some(p) = &args.folded_out {
        std::fs::write(p, &folded).with_context(|| format!("cannot write {}", p.display()))?;
    }
    if global.json {
        return print_json(&serde_json::json!({
            "source": source,
            "svg": args.output,
            "weight": profile.weight,
            "stacks": profile.stacks,
            "hottest": profile.hottest(args.top),
        }));
    }
    println!(
        "{}: {} stacks, weight {} (sum of perf sample periods: ns for cpu-clock, cycles for cycles) -> {}",
        source,
        profile.stacks,
        profile.weight,
        args.output.display()
    );
    let mut t = Table::new(&["SELF%", "TOTAL%", "FUNCTION"]);
    for f in profile.hottest(args.top) {
        let pct = |w: u64| format!("{:.1}", 100.0 * w as f64 / profile.weight as f64);
        t.row(vec![
            pct(f.self_weight),
            pct(f.total_weight),
            f.name.clone(),
        ]);
    }
    t.print()?;
    Ok(())
}
