//! `lever dt opp|carveouts|show|customize`: the device tree's DVFS maps
//! (seed 000 §6.3), memory carveouts (§6.5, §8.3) and nodes, from the
//! live tree under `--root`, a `.dtb`, or a `.dts` (through `dtc`); and a
//! changed DVFS map as an overlay or a patch (§6.3 "customize").

use crate::args::Global;
use crate::render::num::mhz_from_khz;
use crate::render::{emit, out};
use clap::{Args, Subcommand};
use lever_dt::carveout::{CarveoutReport, Range};
use lever_dt::opp::{DvfsReport, IcPath, OppRow};
use lever_dt::{Tree, Widths};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// `lever dt ...`
#[derive(Debug, Subcommand)]
pub enum DtCommand {
    /// DVFS maps (seed 000 §6.3): per CPU cluster, each CPU frequency with
    /// its interconnect votes (peak/avg kBps) and the DDR / LLCC / L3
    /// frequency they imply (vote / w); the bwmon tables; which CPUs share
    /// which table.
    Opp(OppArgs),
    /// Memory carveouts (seed 000 §6.5, §8.3): every /reserved-memory
    /// region, who uses it, no-map and reusable totals, overlaps, regions
    /// outside /memory.
    Carveouts(SourceArgs),
    /// Print a node and its subtree (default: the whole tree) as source.
    Show(ShowArgs),
    /// Change the DVFS map (seed 000 §6.3 "customize"): new L3 / LLCC /
    /// DDR frequencies for some CPU frequencies of one cluster, printed as
    /// a device-tree overlay or a patch of dtc's source of the tree (vote
    /// kBps = target kHz × w). The board is never touched.
    Customize(CustomizeArgs),
}

/// `lever dt customize`
#[derive(Debug, Args)]
pub struct CustomizeArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The cluster: silver, gold or prime (the first, second, third by
    /// first CPU), a CPU number, or the OPP table's path or label.
    #[arg(long, value_name = "CLUSTER", value_parser = parse_cluster)]
    pub cluster: String,
    /// A CPU frequency of the cluster's table, kHz (1804800);
    /// repeatable, or comma-separated.
    #[arg(long = "freq", value_name = "KHZ", required = true, value_delimiter = ',', value_parser = parse_khz)]
    pub freqs_khz: Vec<u64>,
    /// New L3 frequency for those OPPs, kHz (1516800: vote 1516800 × 32).
    #[arg(long, value_name = "KHZ", value_parser = parse_khz)]
    pub l3: Option<u64>,
    /// New LLCC frequency, kHz (vote = kHz × 16).
    #[arg(long, value_name = "KHZ", value_parser = parse_khz)]
    pub llcc: Option<u64>,
    /// New DDR frequency, kHz (1555000: vote 1555000 × 4 = 6220000 kBps).
    #[arg(long, value_name = "KHZ", value_parser = parse_khz)]
    pub ddr: Option<u64>,
    /// Bytes per clock of a target (seed 000 §6.3: ddr=4, llcc=16,
    /// l3=32); repeatable.
    #[arg(long = "width", value_name = "TARGET=BYTES", value_parser = parse_width)]
    pub widths: Vec<(String, u32)>,
    /// overlay: a /plugin/ overlay (dtc -@ compiles it, fdtoverlay applies
    /// it); patch: a unified diff of `dtc -O dts`'s source of the tree
    /// (needs dtc).
    #[arg(long, value_enum, default_value = "overlay")]
    pub format: CustomizeFormat,
}

/// What `lever dt customize` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CustomizeFormat {
    /// A device-tree overlay.
    Overlay,
    /// A unified diff of the tree's source.
    Patch,
}

fn parse_khz(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(v) if v > 0 => Ok(v),
        _ => Err(format!(
            "{s:?}: not a frequency in kHz (a whole number above 0)"
        )),
    }
}

fn parse_cluster(s: &str) -> Result<String, String> {
    // A name, number, label or path: `@` only inside a node name.
    let ok = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '/')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/@,-_.".contains(c));
    if ok {
        Ok(s.to_string())
    } else {
        Err(format!(
            "{s:?}: not a cluster (silver, gold, prime, a CPU number, a table path or label)"
        ))
    }
}

/// Where the tree comes from.
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// A .dtb file, a .dts source (compiled with dtc), or a directory in
    /// the live tree's form (/sys/firmware/devicetree/base, or a copy of
    /// it). Default: the live tree, /sys/firmware/devicetree/base under
    /// --root.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Include directory for a .dts's #include (the source then goes
    /// through cpp, as the kernel's build does); repeatable.
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    pub include: Vec<PathBuf>,
}

/// `lever dt opp`
#[derive(Debug, Args)]
pub struct OppArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Bytes per clock of a target, dividing its kBps votes into kHz
    /// (seed 000 §6.3: ddr=4, llcc=16, l3=32); repeatable.
    #[arg(long = "width", value_name = "TARGET=BYTES", value_parser = parse_width)]
    pub widths: Vec<(String, u32)>,
}

/// `lever dt show`
#[derive(Debug, Args)]
pub struct ShowArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The node to print (a full path such as /reserved-memory).
    #[arg(long, value_name = "PATH", default_value = "/")]
    pub node: String,
}

fn parse_width(s: &str) -> Result<(String, u32), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: expected TARGET=BYTES (ddr=4)"))?;
    let v: u32 = v
        .parse()
        .map_err(|_| format!("{v:?}: not a number of bytes"))?;
    let mut w = Widths::SEED;
    w.set(k, v)?;
    Ok((k.to_string(), v))
}

/// Run `lever dt ...`.
pub fn run(global: &Global, cmd: DtCommand) -> anyhow::Result<()> {
    match cmd {
        DtCommand::Opp(args) => opp(global, args),
        DtCommand::Customize(args) => customize(global, args),
        DtCommand::Carveouts(args) => {
            let (tree, _) = load(global, &args)?;
            let report = lever_dt::carveouts(&tree)?;
            emit(global.json, &report, carveouts_text)
        }
        DtCommand::Show(args) => {
            let (tree, _) = load(global, &args.source)?;
            let id = tree.find(&args.node).ok_or_else(|| {
                crate::exit::bad_value(format!("--node {}: no such node", args.node))
            })?;
            if global.json {
                crate::render::print_json(&node_json(&tree, id))
            } else {
                let mut s = String::new();
                show_node(&tree, id, 0, &mut s);
                out(&s)
            }
        }
    }
}

/// Load the tree; the second value says whether it is the live tree.
pub fn load(global: &Global, args: &SourceArgs) -> anyhow::Result<(Tree, bool)> {
    let Some(file) = &args.file else {
        let base = global.root.join(lever_dt::source::LIVE_TREE);
        if !base.is_dir() {
            anyhow::bail!(
                "no device tree at {} (this machine has none; give a .dtb or .dts file)",
                base.display()
            );
        }
        return Ok((lever_dt::source::read_live(&global.root)?, true));
    };
    if file.is_dir() {
        // The running board's own tree when it is --root's live tree
        // (then its current frequencies may be shown beside it).
        let live = global.root.join(lever_dt::source::LIVE_TREE);
        let is_live = matches!(
            (file.canonicalize(), live.canonicalize()),
            (Ok(a), Ok(b)) if a == b
        );
        return Ok((lever_dt::source::read_dir_tree(file)?, is_live));
    }
    let tree = if is_dtb(file)? {
        lever_dt::source::read_dtb(file)?
    } else {
        lever_dt::source::read_dts(file, &args.include)?
    };
    Ok((tree, false))
}

fn is_dtb(file: &Path) -> anyhow::Result<bool> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    let mut f = std::fs::File::open(file)
        .map_err(|e| anyhow::Error::new(e).context(format!("cannot read {}", file.display())))?;
    let n = f.read(&mut magic)?;
    Ok(n == 4 && magic == [0xd0, 0x0d, 0xfe, 0xed])
}

#[derive(Serialize)]
struct CustomizeOutput {
    changes: Vec<lever_dt::customize::OppChange>,
    format: &'static str,
    text: String,
}

fn customize(global: &Global, args: CustomizeArgs) -> anyhow::Result<()> {
    use lever_dt::customize;
    use lever_dt::opp::PathKind;
    let (tree, _) = load(global, &args.source)?;
    let mut widths = Widths::for_soc(&tree.strings(tree.root(), "compatible"));
    for (k, v) in &args.widths {
        widths.set(k, *v).map_err(crate::exit::bad_value)?;
    }
    let report = lever_dt::dvfs(&tree, widths)?;
    let bad = |e: customize::CustomizeError| crate::exit::bad_value(e.to_string());
    let cluster = customize::find_cluster(&report, &args.cluster).map_err(bad)?;
    let targets: Vec<(PathKind, u64)> = [
        (PathKind::L3, args.l3),
        (PathKind::Llcc, args.llcc),
        (PathKind::Ddr, args.ddr),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| (k, v)))
    .collect();
    let changes = customize::plan(cluster, &args.freqs_khz, &targets, widths, |path| {
        tree.find(path)
            .and_then(|id| tree.labels(id).first().cloned())
    })
    .map_err(bad)?;
    let live = global.root.join(lever_dt::source::LIVE_TREE);
    let input = args.source.file.clone().unwrap_or_else(|| live.clone());
    let name = match &args.source.file {
        Some(f) if !f.is_dir() => f
            .file_stem()
            .map(|s| format!("{}.dts", s.to_string_lossy()))
            .unwrap_or_else(|| "devicetree.dts".into()),
        _ => "devicetree.dts".to_string(),
    };
    let (format, text) = match args.format {
        CustomizeFormat::Overlay => (
            "overlay",
            customize::overlay(&changes, &input.display().to_string(), widths),
        ),
        CustomizeFormat::Patch => {
            if !args.source.include.is_empty() {
                return Err(crate::exit::bad_value(
                    "--format patch: a .dts with #include has no single source to patch; \
                     give its .dtb, or use --format overlay",
                ));
            }
            let dts = lever_dt::source::dtc_source(&input)?;
            (
                "patch",
                customize::patch(&dts, &name, &changes).map_err(bad)?,
            )
        }
    };
    if global.json {
        return crate::render::print_json(&CustomizeOutput {
            changes,
            format,
            text,
        });
    }
    for c in &changes {
        eprintln!("{}", customize::describe(c));
    }
    out(&text)
}

#[derive(Serialize)]
struct OppOutput {
    #[serde(flatten)]
    report: DvfsReport,
    /// Per cluster, the first CPU's scaling_cur_freq (kHz) on a running board.
    current_khz: Vec<Option<u64>>,
}

fn opp(global: &Global, args: OppArgs) -> anyhow::Result<()> {
    let (tree, live) = load(global, &args.source)?;
    let mut widths = Widths::for_soc(&tree.strings(tree.root(), "compatible"));
    for (k, v) in &args.widths {
        widths.set(k, *v).map_err(crate::exit::bad_value)?;
    }
    let report = lever_dt::dvfs(&tree, widths)?;
    let current_khz = report
        .clusters
        .iter()
        .map(|c| {
            let cpu = c.cpus.first()?.cpu;
            if !live {
                return None;
            }
            let p = global.root.join(format!(
                "sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_cur_freq"
            ));
            std::fs::read_to_string(p).ok()?.trim().parse().ok()
        })
        .collect();
    emit(
        global.json,
        &OppOutput {
            report,
            current_khz,
        },
        opp_text,
    )
}

/// Columns aligned, two spaces apart, the last not padded.
fn align(rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = Vec::new();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if widths.len() <= i {
                widths.push(0);
            }
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut s = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            line.push_str(c);
            if i + 1 < r.len() {
                line.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
            }
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

fn cpu_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

fn paths_text(paths: &[IcPath]) -> String {
    let mut s = String::new();
    for p in paths {
        let w = p
            .width_bytes
            .map_or("no w: kBps only".to_string(), |w| format!("w = {w}"));
        s.push_str(&format!(
            "  path {}: {} -> {} ({}, {w})\n",
            p.name,
            p.source,
            p.destination,
            p.kind.label()
        ));
    }
    s
}

fn table_rows(paths: &[IcPath], rows: &[OppRow], first: &str, current_khz: Option<u64>) -> String {
    let any_avg = rows
        .iter()
        .any(|r| r.votes.iter().any(|v| v.avg_kbps.is_some()));
    let any_req = rows.iter().any(|r| !r.required_opps.is_empty());
    let any_flag = rows.iter().any(|r| r.turbo || r.suspend);
    let n = rows.iter().map(|r| r.votes.len()).max().unwrap_or(0);
    let mut header = vec![first.to_string()];
    for i in 0..n {
        let name = paths
            .get(i)
            .map_or_else(|| format!("vote {i}"), |p| p.name.clone());
        header.push(format!("{name} peak kBps"));
        if any_avg {
            header.push(format!("{name} avg kBps"));
        }
        if paths.get(i).is_some_and(|p| p.width_bytes.is_some()) {
            header.push(format!("{name} MHz"));
        }
    }
    if any_flag {
        header.push("flags".into());
    }
    if any_req {
        header.push("required-opps".into());
    }
    let mut out = vec![header];
    for r in rows {
        let mut row = vec![if first == "CPU MHz" {
            mhz_from_khz(r.freq_hz.map(|h| h / 1000))
        } else {
            r.node.rsplit('/').next().unwrap_or("").to_string()
        }];
        for i in 0..n {
            let v = r.votes.get(i);
            row.push(
                v.and_then(|v| v.peak_kbps)
                    .map_or("-".into(), |k| k.to_string()),
            );
            if any_avg {
                row.push(
                    v.and_then(|v| v.avg_kbps)
                        .map_or("-".into(), |k| k.to_string()),
                );
            }
            if paths.get(i).is_some_and(|p| p.width_bytes.is_some()) {
                row.push(mhz_from_khz(v.and_then(|v| v.implied_khz)));
            }
        }
        if any_flag {
            let mut f = Vec::new();
            if r.turbo {
                f.push("turbo");
            }
            if r.suspend {
                f.push("suspend");
            }
            row.push(f.join(","));
        }
        if any_req {
            row.push(r.required_opps.join(" "));
        }
        if let (Some(cur), Some(hz)) = (current_khz, r.freq_hz) {
            if hz == cur * 1000 {
                row.push(format!("<- current {} MHz", mhz_from_khz(Some(cur))));
            }
        }
        out.push(row);
    }
    align(&out)
}

fn opp_text(o: &OppOutput) -> String {
    let r = &o.report;
    let mut s = String::new();
    let w = r.widths;
    s.push_str(&format!(
        "widths (bytes per clock; implied MHz = peak kBps / w / 1000): DDR w = {}, LLCC w = {}, L3 w = {}\n",
        w.ddr_bytes, w.llcc_bytes, w.l3_bytes
    ));
    if r.clusters.is_empty() {
        s.push_str("\nno CPU has an operating-points-v2 table\n");
    }
    for (i, c) in r.clusters.iter().enumerate() {
        let cpus: Vec<usize> = c.cpus.iter().map(|c| c.cpu).collect();
        let label = c
            .labels
            .first()
            .map(|l| format!(" ({l})"))
            .unwrap_or_default();
        s.push_str(&format!(
            "\ncluster {i}: CPUs {} share {}{label}{}\n",
            cpu_list(&cpus),
            c.table,
            if c.opp_shared { ", opp-shared" } else { "" }
        ));
        let cur = o.current_khz.get(i).copied().flatten();
        if let Some(k) = cur {
            s.push_str(&format!(
                "  current frequency: {} MHz\n",
                mhz_from_khz(Some(k))
            ));
        }
        s.push_str(&paths_text(&c.paths));
        s.push_str(&table_rows(&c.paths, &c.rows, "CPU MHz", cur));
    }
    if !r.cpus_without_table.is_empty() {
        s.push_str(&format!(
            "\nCPUs without an OPP table: {}\n",
            r.cpus_without_table.join(" ")
        ));
    }
    for b in &r.bwmons {
        s.push_str(&format!(
            "\nbwmon {} ({}){}: table {}\n",
            b.node,
            b.compatible.join(", "),
            if b.enabled { "" } else { ", disabled" },
            b.table
        ));
        s.push_str(&paths_text(&b.paths));
        s.push_str(&table_rows(&b.paths, &b.rows, "level", None));
    }
    s
}

fn hex(v: u64) -> String {
    format!("{v:#x}")
}

fn size_text(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    } else if bytes >= 1 << 10 && bytes % (1 << 10) == 0 {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

fn ranges_text(r: &[Range]) -> String {
    r.iter()
        .map(|x| format!("{}+{}", hex(x.base), hex(x.size_bytes)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn carveouts_text(r: &CarveoutReport) -> String {
    let mut rows = vec![vec![
        "region".to_string(),
        "label".into(),
        "base".into(),
        "size".into(),
        "size (hex)".into(),
        "kind".into(),
        "compatible".into(),
        "used by".into(),
    ]];
    for g in &r.regions {
        let (base, size_hex) = if g.ranges.is_empty() {
            let mut b = "dynamic".to_string();
            if !g.alloc_ranges.is_empty() {
                b = format!("dynamic in {}", ranges_text(&g.alloc_ranges));
            }
            (b, g.dynamic_size_bytes.map_or("-".into(), hex))
        } else {
            (
                g.ranges
                    .iter()
                    .map(|x| hex(x.base))
                    .collect::<Vec<_>>()
                    .join(" "),
                g.ranges
                    .iter()
                    .map(|x| hex(x.size_bytes))
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        };
        let mut kind = Vec::new();
        if g.no_map {
            kind.push("no-map");
        }
        if g.reusable {
            kind.push("reusable");
        }
        if !g.enabled {
            kind.push("disabled");
        }
        if g.outside_memory {
            kind.push("OUTSIDE /memory");
        }
        let users: Vec<String> = g
            .users
            .iter()
            .map(|u| {
                let mut name = u.labels.first().cloned().unwrap_or_else(|| u.node.clone());
                if let Some(c) = u.compatible.first() {
                    name.push_str(&format!(" ({c})"));
                }
                if !u.enabled {
                    name.push_str(" (disabled)");
                }
                name
            })
            .collect();
        rows.push(vec![
            g.name.clone(),
            g.labels.join(" "),
            base,
            size_text(g.size_bytes()),
            size_hex,
            kind.join(","),
            g.compatible.join(" "),
            users.join(" "),
        ]);
    }
    let mut s = align(&rows);
    let t = &r.totals;
    s.push_str(&format!(
        "\nno-map total: {} ({} bytes) — seed 000 §8.3's non-Linux memory\nreusable total: {} ({} bytes)\nother reserved: {} ({} bytes)\n",
        size_text(t.no_map_bytes),
        t.no_map_bytes,
        size_text(t.reusable_bytes),
        t.reusable_bytes,
        size_text(t.other_bytes),
        t.other_bytes
    ));
    if t.dynamic_bytes > 0 {
        s.push_str(&format!(
            "  of which dynamic (placed at boot): {}\n",
            size_text(t.dynamic_bytes)
        ));
    }
    if t.disabled_bytes > 0 {
        s.push_str(&format!(
            "disabled regions (given to Linux): {}\n",
            size_text(t.disabled_bytes)
        ));
    }
    if !r.has_symbols {
        s.push_str("labels: none (the tree has no __symbols__; compile with dtc -@)\n");
    }
    if r.memory_known {
        s.push_str(&format!("/memory: {}\n", ranges_text(&r.memory)));
    } else {
        s.push_str("/memory: no size in the tree (the bootloader fills it in): regions not checked against it\n");
    }
    for m in &r.mem_reserve {
        s.push_str(&format!(
            "/memreserve/: {}+{}\n",
            hex(m.address),
            hex(m.size)
        ));
    }
    if r.overlaps.is_empty() {
        s.push_str("overlaps: none\n");
    }
    for o in &r.overlaps {
        s.push_str(&format!(
            "OVERLAP: {} and {} share {}+{}\n",
            o.first,
            o.second,
            hex(o.shared.base),
            hex(o.shared.size_bytes)
        ));
    }
    s
}

/// A property value as dtc prints it: strings, cells, or bytes.
fn value_text(v: &[u8]) -> Option<String> {
    if v.is_empty() {
        return None;
    }
    let printable = v.last() == Some(&0)
        && v[0] != 0
        && !v.windows(2).any(|w| w == [0, 0])
        && v.iter().all(|b| *b == 0 || (0x20..0x7f).contains(b));
    if printable {
        let parts: Vec<String> = v[..v.len() - 1]
            .split(|b| *b == 0)
            .map(|p| format!("{:?}", String::from_utf8_lossy(p)))
            .collect();
        return Some(parts.join(", "));
    }
    if v.len() % 4 == 0 {
        let cells: Vec<String> = v
            .chunks_exact(4)
            .map(|c| format!("{:#x}", u32::from_be_bytes([c[0], c[1], c[2], c[3]])))
            .collect();
        return Some(format!("<{}>", cells.join(" ")));
    }
    let bytes: Vec<String> = v.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("[{}]", bytes.join(" ")))
}

fn show_node(tree: &Tree, id: usize, depth: usize, s: &mut String) {
    let n = tree.node(id);
    let ind = "\t".repeat(depth);
    let labels: String = tree.labels(id).iter().map(|l| format!("{l}: ")).collect();
    let name = if n.path == "/" { "/" } else { &n.name };
    s.push_str(&format!("{ind}{labels}{name} {{\n"));
    for p in &n.properties {
        match value_text(&p.value) {
            None => s.push_str(&format!("{ind}\t{};\n", p.name)),
            Some(v) => s.push_str(&format!("{ind}\t{} = {v};\n", p.name)),
        }
    }
    for &c in &n.children {
        s.push('\n');
        show_node(tree, c, depth + 1, s);
    }
    s.push_str(&format!("{ind}}};\n"));
}

fn node_json(tree: &Tree, id: usize) -> serde_json::Value {
    let n = tree.node(id);
    let props: serde_json::Map<String, serde_json::Value> = n
        .properties
        .iter()
        .map(|p| {
            (
                p.name.clone(),
                serde_json::Value::from(value_text(&p.value).unwrap_or_default()),
            )
        })
        .collect();
    serde_json::json!({
        "path": n.path,
        "labels": tree.labels(id),
        "properties": props,
        "children": n.children.iter().map(|c| node_json(tree, *c)).collect::<Vec<_>>(),
    })
}
