//! Client commands: `lever acquire`, `release`, `status`, `explain`,
//! `perflock` (the seed's `perflock_native_test --acq` form).

use crate::args::Global;
use crate::render::{print_json, Table};
use anyhow::{bail, Context};
use clap::Args;
use lever_client::Client;
use lever_protocol::Acquire;
use std::path::PathBuf;

/// Where to reach the daemon.
#[derive(Debug, Args)]
pub struct SocketArg {
    /// Daemon socket (default: $LEVER_SOCKET, else /run/lever/lever.sock).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
}

impl SocketArg {
    fn connect(&self) -> anyhow::Result<Client> {
        let path = self
            .socket
            .clone()
            .unwrap_or_else(lever_client::socket_path);
        Ok(Client::connect(&path)?)
    }
}

/// `lever acquire` flags.
#[derive(Debug, Args)]
pub struct AcquireArgs {
    /// Update this live request instead of making a new one.
    #[arg(long, value_name = "H", default_value_t = 0)]
    pub handle: u32,
    /// How long to hold, in ms; 0 = until Ctrl-C.
    #[arg(long, short = 'd', value_name = "MS")]
    pub duration: u32,
    /// Priority class: third-party-low (default), third-party-high,
    /// system-low, system-high.
    #[arg(long, short = 'p', default_value = "third-party-low")]
    pub priority: String,
    /// Leave a timed request with the daemon and return at once.
    #[arg(long)]
    pub detach: bool,
    /// RES=VALUE pairs; RES is an opcode (0x44008100) or a resource name
    /// (cpu_min_freq.silver); VALUE an integer or an enum value (performance).
    #[arg(required = true, value_name = "RES=VALUE")]
    pub pairs: Vec<String>,
    #[command(flatten)]
    pub socket: SocketArg,
}

/// `lever release` flags.
#[derive(Debug, Args)]
pub struct ReleaseArgs {
    /// Handle to release.
    pub handle: u32,
    #[command(flatten)]
    pub socket: SocketArg,
}

/// `lever status` flags.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Show only the resources Lever holds or that have votes.
    #[arg(long)]
    pub held: bool,
    #[command(flatten)]
    pub socket: SocketArg,
}

/// `lever explain` flags.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Resource name or opcode.
    pub resource: String,
    #[command(flatten)]
    pub socket: SocketArg,
}

/// `lever perflock` flags: `--acq <handle> <duration> <opcode,value,...>`.
#[derive(Debug, Args)]
pub struct PerflockArgs {
    /// Acquire: HANDLE DURATION_MS OPCODE,VALUE[,OPCODE,VALUE...]
    #[arg(long = "acq", num_args = 3, value_names = ["HANDLE", "DURATION", "LIST"], required_unless_present = "rel")]
    pub acq: Option<Vec<String>>,
    /// Release a handle.
    #[arg(long = "rel", value_name = "HANDLE")]
    pub rel: Option<u32>,
    #[command(flatten)]
    pub socket: SocketArg,
}

fn priority(name: &str) -> anyhow::Result<u8> {
    Ok(match name {
        "third-party-low" | "0" => 0,
        "third-party-high" | "1" => 1,
        "system-low" | "2" => 2,
        "system-high" | "3" => 3,
        other => bail!("unknown priority {other:?}: use third-party-low, third-party-high, system-low or system-high"),
    })
}

fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim();
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => i64::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    }
}

/// Resolve `RES=VALUE` with the daemon's own resource table (names and
/// enum values), so the CLI never disagrees with the daemon's target.
fn resolve_pair(client: &mut Client, pair: &str) -> anyhow::Result<(u32, i64)> {
    let (res, value) = pair
        .split_once('=')
        .with_context(|| format!("{pair:?}: expected RES=VALUE, e.g. 0x44008100=1958400"))?;
    let doc: serde_json::Value = serde_json::from_str(&client.explain_json(res.trim())?)?;
    let opcode = doc["opcode"]
        .as_str()
        .and_then(parse_int)
        .with_context(|| format!("daemon returned no opcode for {res}"))? as u32;
    let value = match parse_int(value) {
        Some(v) => v,
        None => {
            let values = doc["spec"]["kind"]["values"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let idx = values.iter().position(|v| v.as_str() == Some(value.trim()));
            match idx {
                Some(i) => i as i64,
                None if values.is_empty() => bail!("{pair:?}: {value:?} is not an integer"),
                None => bail!(
                    "{pair:?}: {value:?} is not one of {}",
                    values
                        .iter()
                        .filter_map(|v| v.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
    };
    Ok((opcode, value))
}

fn hold(duration_ms: u32, handle: u32, json: bool) -> anyhow::Result<()> {
    if json {
        print_json(&serde_json::json!({ "handle": handle, "duration_ms": duration_ms }))?;
    } else if duration_ms == 0 {
        println!("acquired handle {handle}; holding until Ctrl-C");
    } else {
        println!("acquired handle {handle}; holding for {duration_ms} ms (Ctrl-C releases it)");
    }
    use std::io::Write;
    std::io::stdout().flush()?;
    // The lease is this process's connection: Ctrl-C ends the process, the
    // connection closes and the daemon releases everything it held.
    if duration_ms == 0 {
        loop {
            std::thread::park();
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(u64::from(duration_ms)));
    Ok(())
}

pub fn acquire(global: &Global, args: AcquireArgs) -> anyhow::Result<()> {
    if args.detach && args.duration == 0 {
        bail!("--detach needs --duration > 0: an indefinite request must stay tied to a running client");
    }
    let mut client = args.socket.connect()?;
    let pairs = args
        .pairs
        .iter()
        .map(|p| resolve_pair(&mut client, p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let handle = client.acquire_with(Acquire {
        handle: args.handle,
        duration_ms: args.duration,
        priority: priority(&args.priority)?,
        detach: args.detach,
        pairs,
    })?;
    if args.detach {
        if global.json {
            print_json(
                &serde_json::json!({ "handle": handle, "duration_ms": args.duration, "detached": true }),
            )?;
        } else {
            println!("{handle}");
        }
        return Ok(());
    }
    hold(args.duration, handle, global.json)
}

pub fn release(global: &Global, args: ReleaseArgs) -> anyhow::Result<()> {
    args.socket.connect()?.release(args.handle)?;
    if global.json {
        print_json(&serde_json::json!({ "released": args.handle }))?;
    } else {
        println!("released {}", args.handle);
    }
    Ok(())
}

fn cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "-".into(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub fn status(global: &Global, args: StatusArgs) -> anyhow::Result<()> {
    let text = args.socket.connect()?.status_json()?;
    let doc: serde_json::Value = serde_json::from_str(&text)?;
    if global.json {
        return print_json(&doc);
    }
    println!(
        "target {} ({}), root {}, {} live request(s)",
        cell(&doc["target"]),
        cell(&doc["source"]),
        cell(&doc["root"]),
        cell(&doc["live_requests"])
    );
    let mut t = Table::new(&["OPCODE", "NAME", "CURRENT", "ORIGINAL", "WINNER", "NODE"]);
    let mut shown = 0;
    for r in doc["resources"].as_array().into_iter().flatten() {
        if args.held && !r["held"].as_bool().unwrap_or(false) && r["winner"].is_null() {
            continue;
        }
        shown += 1;
        t.row(vec![
            cell(&r["opcode"]),
            cell(&r["name"]),
            r["current"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| "(unreadable)".into()),
            cell(&r["original"]),
            cell(&r["winner"]),
            cell(&r["node"]),
        ]);
    }
    if shown > 0 {
        t.print()?;
    } else {
        println!("no resource is held");
    }
    let requests = doc["requests"].as_array().cloned().unwrap_or_default();
    if !requests.is_empty() {
        println!();
        let mut t = Table::new(&[
            "HANDLE",
            "PID",
            "UID",
            "PRIORITY",
            "EXPIRES_IN_MS",
            "PAIRS",
            "EXE",
        ]);
        for r in &requests {
            let pairs: Vec<String> = r["pairs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| {
                    format!(
                        "{}={}",
                        p["name"].as_str().unwrap_or("?"),
                        cell(&p["shown"])
                    )
                })
                .collect();
            t.row(vec![
                cell(&r["handle"]),
                cell(&r["pid"]),
                cell(&r["uid"]),
                cell(&r["priority"]),
                match &r["expires_in_ms"] {
                    serde_json::Value::Null => "never".into(),
                    v => cell(v),
                },
                pairs.join(" "),
                cell(&r["exe"]),
            ]);
        }
        t.print()?;
    }
    Ok(())
}

pub fn explain(global: &Global, args: ExplainArgs) -> anyhow::Result<()> {
    let text = args.socket.connect()?.explain_json(&args.resource)?;
    let doc: serde_json::Value = serde_json::from_str(&text)?;
    if global.json {
        return print_json(&doc);
    }
    println!(
        "{} ({}) — {}",
        cell(&doc["name"]),
        cell(&doc["opcode"]),
        cell(&doc["spec"]["description"])
    );
    println!("  node:        {}", cell(&doc["node"]));
    println!(
        "  unit:        {}  range {}..{}",
        cell(&doc["unit"]),
        cell(&doc["spec"]["low"]),
        cell(&doc["spec"]["high"])
    );
    println!(
        "  kind:        {}  aggregation {}  access {}",
        cell(&doc["spec"]["kind"]["type"]),
        cell(&doc["aggregation"]),
        cell(&doc["permission"])
    );
    if !doc["pair"].is_null() {
        println!(
            "  paired with: {} (min <= max kept at every write)",
            cell(&doc["pair"])
        );
    }
    println!("  current:     {}", cell(&doc["current"]));
    println!(
        "  original:    {}",
        if doc["held"].as_bool() == Some(true) {
            cell(&doc["original"])
        } else {
            "(not held: current is the original)".into()
        }
    );
    println!("  rule:        {}", cell(&doc["rule"]));
    let votes = doc["votes"].as_array().cloned().unwrap_or_default();
    if votes.is_empty() {
        println!("  votes:       none");
    } else {
        println!("  votes (strongest first):");
        for v in votes {
            println!(
                "    handle {:<14} {:<12} priority {:<16} expires {}",
                cell(&v["handle"]),
                cell(&v["shown"]),
                cell(&v["priority"]),
                match &v["expires_in_ms"] {
                    serde_json::Value::Null => "never".into(),
                    e => format!("in {} ms", cell(e)),
                }
            );
        }
        println!("  applied:     {}", cell(&doc["applied"]));
    }
    Ok(())
}

pub fn perflock(global: &Global, args: PerflockArgs) -> anyhow::Result<()> {
    let mut client = args.socket.connect()?;
    if let Some(h) = args.rel {
        client.release(h)?;
        println!("released {h}");
        return Ok(());
    }
    let acq = args.acq.unwrap_or_default();
    let [handle, duration, list] = acq.as_slice() else {
        bail!("usage: lever perflock --acq <handle> <duration> <opcode,value,...>");
    };
    let handle: i64 =
        parse_int(handle).with_context(|| format!("handle {handle:?} is not an integer"))?;
    let duration: u32 = duration
        .parse()
        .with_context(|| format!("duration {duration:?} is not a number of ms"))?;
    let ints = list
        .split(',')
        .map(|x| parse_int(x).with_context(|| format!("{x:?} in {list:?} is not an integer")))
        .collect::<anyhow::Result<Vec<i64>>>()?;
    if ints.is_empty() || ints.len() % 2 != 0 {
        bail!("{list:?}: expected opcode,value pairs");
    }
    for (i, w) in ints.chunks(2).enumerate() {
        eprintln!("resource_list[{}] = {:x}", 2 * i, w[0]);
        eprintln!("resource_list[{}] = {:x}", 2 * i + 1, w[1]);
    }
    let pairs = ints.chunks(2).map(|w| (w[0] as u32, w[1])).collect();
    let handle = client.acquire_with(Acquire {
        handle: u32::try_from(handle).unwrap_or(0),
        duration_ms: duration,
        priority: 0,
        detach: false,
        pairs,
    })?;
    hold(duration, handle, global.json)
}
