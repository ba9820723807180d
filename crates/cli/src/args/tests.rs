//! One exit-code rule over the whole command tree, walked from clap's own
//! definitions (a new subcommand or flag is covered without editing this
//! file): every subcommand takes `--help`; every argument that takes a
//! value, given one that does not parse, is refused by clap as bad input
//! (`exit::clap_class`: exit 3, what `main` exits with) and the message
//! names the argument — unless the argument is free-form (a path, a name
//! the daemon or a target resolves, a command), listed below with why.
//! Values that parse but make no sense where they land are refused later,
//! also with exit 3 (`exit::BadValue`; tests/errors.rs runs the binary).

use super::{command, parse_from, CLIENT_COMMANDS};
use crate::exit::{clap_class, Class};
use clap::error::ErrorKind;

/// A value no typed argument of Lever's accepts.
const BAD: &str = "@bad";

/// Arguments that take any text, by command path and argument id, with
/// the reason; the command checks the value when it uses it.
const FREE_FORM: &[(&str, &str, &str)] = &[
    (
        "lever",
        "root",
        "a directory (checked before every command: exit 3)",
    ),
    ("lever sim create", "dir", "the directory to create"),
    (
        "lever resources",
        "target",
        "a built-in target or a YAML file",
    ),
    (
        "lever target check",
        "target",
        "a built-in target or a YAML file",
    ),
    ("lever target import-urm", "dir", "a directory"),
    ("lever target import-urm", "output", "a file to write"),
    ("lever target import-urm", "name", "the new target's name"),
    (
        "lever usecases",
        "target",
        "a built-in target or a YAML file",
    ),
    ("lever usecases", "files", "a YAML file"),
    (
        "lever dt opp",
        "file",
        "a .dtb or .dts file (read: a bad one exits 3)",
    ),
    ("lever dt opp", "include", "an include directory for cpp"),
    ("lever top", "svg", "a file to write"),
    ("lever top", "command", "the command to run"),
    (
        "lever dt carveouts",
        "file",
        "a .dtb or .dts file (read: a bad one exits 3)",
    ),
    (
        "lever dt carveouts",
        "include",
        "an include directory for cpp",
    ),
    (
        "lever dt show",
        "file",
        "a .dtb or .dts file (read: a bad one exits 3)",
    ),
    ("lever dt show", "include", "an include directory for cpp"),
    (
        "lever dt customize",
        "file",
        "a .dtb or .dts file (read: a bad one exits 3)",
    ),
    (
        "lever dt customize",
        "include",
        "an include directory for cpp",
    ),
    (
        "lever dt show",
        "node",
        "a node path (an unknown one is refused when read)",
    ),
    (
        "lever usecases",
        "urm",
        "a URM configuration directory (read when listed)",
    ),
    ("lever daemon", "target", "a built-in target or a YAML file"),
    ("lever daemon", "socket", "a socket path"),
    ("lever daemon", "state_dir", "a directory"),
    (
        "lever daemon",
        "urm",
        "a URM configuration directory (refused at start: exit 3/4)",
    ),
    (
        "lever daemon",
        "system_group",
        "a group name (looked up at start)",
    ),
    ("lever daemon", "metrics_textfile", "a directory"),
    (
        "lever daemon",
        "dbus_address",
        "a D-Bus address (the bus checks it)",
    ),
    ("lever restore", "state_dir", "a directory"),
    ("lever acquire", "socket", "a socket path"),
    ("lever release", "socket", "a socket path"),
    ("lever status", "socket", "a socket path"),
    (
        "lever explain",
        "resource",
        "a name or opcode the daemon resolves",
    ),
    ("lever explain", "socket", "a socket path"),
    ("lever perflock", "socket", "a socket path"),
    (
        "lever signal",
        "usecase",
        "a use case name the daemon resolves",
    ),
    ("lever signal", "socket", "a socket path"),
    ("lever unsignal", "socket", "a socket path"),
    ("lever run", "app", "an app name the daemon resolves"),
    ("lever run", "socket", "a socket path"),
    ("lever run", "command", "the command to run"),
    (
        "lever bench",
        "only",
        "globs over test names (none matching: exit 3)",
    ),
    ("lever bench", "output", "a file to write"),
    (
        "lever bench",
        "dir",
        "a directory (checked before the run: exit 3)",
    ),
    ("lever bench compare", "base", "a report file"),
    ("lever bench compare", "new", "a report file"),
    ("lever bench compare", "base_rerun", "a report file"),
    ("lever bench-daemon", "serve_echo", "a socket path"),
    ("lever cpu ipc", "cmd", "the command to run"),
    ("lever boot", "serial", "a log file"),
    ("lever boot", "journal", "a log file"),
    ("lever boot", "systemd_time", "a file"),
    ("lever boot", "blame", "a file"),
    ("lever boot", "markers", "a YAML file"),
    ("lever mem map", "dmesg", "a log file"),
    ("lever mem map", "command", "the command to run"),
    ("lever mem thrash", "cgroup", "a cgroup directory"),
    ("lever mem thrash", "out", "a directory"),
    ("lever mem thrash", "command", "the command to run"),
    ("lever io", "command", "the command to run"),
    ("lever thermal", "command", "the command to run"),
    (
        "lever trace record",
        "events",
        "event names tracefs resolves (unknown: exit 3)",
    ),
    (
        "lever trace record",
        "tracer",
        "a tracer tracefs resolves (unknown: exit 3)",
    ),
    ("lever trace record", "output", "a file to write"),
    ("lever trace record", "command", "the command to run"),
    ("lever trace analyze", "file", "a trace file"),
    ("lever trace analyze", "baseline", "a trace file"),
    (
        "lever trace analyze",
        "symbols",
        "an nm mapping file (its lines are checked when read: exit 3)",
    ),
    ("lever trace analyze", "flamegraph", "an SVG file to write"),
    ("lever trace analyze", "ramp_task", "a task name"),
    ("lever trace export", "file", "a trace file"),
    ("lever trace export", "output", "a file to write"),
    (
        "lever trace export",
        "symbols",
        "an nm mapping file (its lines are checked when read: exit 3)",
    ),
    ("lever trace mark", "text", "the marker's text"),
    ("lever trace bench", "file", "a trace file"),
    ("lever flamegraph", "input", "a file"),
    ("lever flamegraph", "output", "a file to write"),
    ("lever flamegraph", "folded_out", "a file to write"),
    ("lever flamegraph", "title", "the SVG's title"),
    ("lever flamegraph", "command", "the command to run"),
    (
        "lever latency",
        "words",
        "cyclictest's flags, parsed by `lever latency` itself",
    ),
    (
        "lever profile show",
        "name",
        "a built-in profile or a YAML file",
    ),
    (
        "lever profile show",
        "target",
        "a built-in target or a YAML file",
    ),
    (
        "lever profile diff",
        "name",
        "a built-in profile or a YAML file",
    ),
    (
        "lever profile diff",
        "target",
        "a built-in target or a YAML file",
    ),
    (
        "lever profile verify",
        "name",
        "a built-in profile or a YAML file",
    ),
    (
        "lever profile verify",
        "target",
        "a built-in target or a YAML file",
    ),
    ("lever profile verify", "state", "a state file"),
    (
        "lever profile apply",
        "name",
        "a built-in profile or a YAML file",
    ),
    (
        "lever profile apply",
        "target",
        "a built-in target or a YAML file",
    ),
    ("lever profile apply", "state", "a state file"),
    ("lever profile apply", "socket", "a socket path"),
    ("lever profile off", "state", "a state file"),
    ("lever profile off", "socket", "a socket path"),
    (
        "lever profile hold",
        "name",
        "a built-in profile or a YAML file",
    ),
    ("lever profile hold", "socket", "a socket path"),
    ("lever profile hold", "command", "the command to run"),
    (
        "lever profile import-tuned",
        "dir",
        "a TuneD profile directory",
    ),
    ("lever profile import-tuned", "output", "a file to write"),
    (
        "lever results",
        "db",
        "an SQLite file (or a postgres:// URL, checked)",
    ),
    ("lever results list", "board", "a board name"),
    (
        "lever results trend",
        "metric",
        "a metric name (unknown: exit 1, did you mean)",
    ),
    ("lever results trend", "board", "a board name"),
    ("lever results export", "parquet", "a directory"),
    ("lever results import", "file", "a run document"),
    ("lever man", "out_dir", "a directory"),
    ("lever report collect", "output", "a file to write"),
    (
        "lever report collect",
        "boot_logs",
        "[KIND=]FILE: a bare FILE is guessed",
    ),
    ("lever report collect", "bench", "quick or a report file"),
    ("lever report collect", "trace", "a trace file"),
    ("lever report collect", "daemon_socket", "a socket path"),
    (
        "lever report collect",
        "db",
        "an SQLite file (or a postgres:// URL, checked)",
    ),
    ("lever report render", "runs", "run documents"),
    ("lever report render", "html", "a file to write"),
    ("lever report render", "md", "a file to write"),
    ("lever report render", "json_out", "a file to write"),
    ("lever report render", "base_rerun", "a run document"),
    (
        "lever report render",
        "db",
        "an SQLite file (or a postgres:// URL, checked)",
    ),
];

/// Every subcommand with its path (`lever mem thrash`), parents first,
/// built so global flags are on each; clap's `help` and hidden helpers out.
fn commands() -> Vec<(Vec<String>, clap::Command)> {
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<(Vec<String>, clap::Command)>) {
        out.push((path.clone(), cmd.clone()));
        for sub in cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            walk(sub, p, out);
        }
    }
    let root = command();
    let mut out = Vec::new();
    walk(&root, vec!["lever".to_string()], &mut out);
    out
}

/// The command line giving `BAD` to `arg` of the command at `path`.
fn bad_line(path: &[String], cmd: &clap::Command, arg: &clap::Arg) -> Vec<String> {
    let mut argv = path.to_vec();
    if arg.is_positional() {
        // Earlier positionals get a value every one of them takes.
        let index = arg.get_index().unwrap_or(1);
        for p in cmd
            .get_positionals()
            .filter(|p| p.get_index().is_some_and(|i| i < index))
        {
            let value = p
                .get_possible_values()
                .first()
                .map(|v| v.get_name().to_string());
            argv.push(value.unwrap_or_else(|| "1".into()));
        }
        if arg.is_last_set() {
            argv.push("--".into());
        }
        argv.push(BAD.into());
        return argv;
    }
    let flag = match arg.get_long() {
        Some(long) => format!("--{long}"),
        None => format!("-{}", arg.get_short().expect("a flag has a name")),
    };
    let n = arg.get_num_args().map_or(1, |r| r.min_values().max(1));
    if n == 1 && arg.get_long().is_some() {
        // `=` also suits the flags whose value is optional.
        argv.push(format!("{flag}={BAD}"));
    } else {
        argv.push(flag);
        argv.extend(std::iter::repeat_n(BAD.to_string(), n));
    }
    argv
}

/// How the argument is named in clap's messages.
fn shown(arg: &clap::Arg) -> String {
    match arg.get_long() {
        Some(long) if !arg.is_positional() => format!("--{long}"),
        _ => {
            let names = arg
                .get_value_names()
                .map(|v| v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .unwrap_or_else(|| vec![arg.get_id().to_string().to_uppercase()]);
            format!("<{}>", names[0])
        }
    }
}

#[test]
fn every_subcommand_takes_help() {
    let commands = commands();
    assert!(commands.len() > 50, "{}", commands.len());
    for (path, cmd) in commands {
        if cmd.is_disable_help_flag_set() {
            // `lever latency`: cyclictest's -h; its own parser answers
            // --help (tests/errors.rs runs it).
            assert_eq!(path, ["lever", "latency"]);
            continue;
        }
        let mut argv = path.clone();
        argv.push("--help".into());
        let err = parse_from(&argv).expect_err("help is an early exit");
        assert_eq!(err.kind(), ErrorKind::DisplayHelp, "{argv:?}: {err}");
    }
}

#[test]
fn every_bad_value_is_bad_input_naming_its_argument() {
    let mut free_seen = Vec::new();
    let mut checked = 0;
    let commands = commands();
    for (path, cmd) in &commands {
        let name = path.join(" ");
        let parent = commands
            .iter()
            .find(|(p, _)| p.len() + 1 == path.len() && path.starts_with(p));
        for arg in cmd.get_arguments() {
            if !arg.get_action().takes_values() {
                continue;
            }
            // A global flag (`--root`, `results --db`) is tested where it
            // is declared, not on every command below.
            let inherited = parent.is_some_and(|(_, p)| {
                p.get_arguments()
                    .any(|a| a.get_id() == arg.get_id() && a.is_global_set())
            });
            if arg.is_global_set() && inherited {
                continue;
            }
            let id = arg.get_id().as_str();
            let argv = bad_line(path, cmd, arg);
            let free = FREE_FORM.iter().find(|(p, i, _)| *p == name && *i == id);
            let refused = parse_from(&argv).err().filter(|e| {
                matches!(
                    e.kind(),
                    ErrorKind::ValueValidation | ErrorKind::InvalidValue
                )
            });
            match (free, refused) {
                (Some(_), None) => free_seen.push((name.clone(), id.to_string())),
                (Some(_), Some(e)) => panic!(
                    "{argv:?}: clap refuses the value, so {name} {id} is no longer \
                     free-form; take it out of FREE_FORM: {e}"
                ),
                (None, None) => panic!(
                    "{argv:?}: {name} {id} accepts {BAD:?}: give it a value_parser that \
                     checks its form, or list it in FREE_FORM with why"
                ),
                (None, Some(e)) => {
                    assert_eq!(clap_class(e.kind()), Class::BadInput, "{argv:?}");
                    assert_eq!(Class::BadInput.exit_code(), 3);
                    let text = e.to_string();
                    assert!(
                        text.contains(&shown(arg)),
                        "{argv:?} does not name {}: {text}",
                        shown(arg)
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 50, "{checked} typed arguments");
    for (p, i, _) in FREE_FORM {
        assert!(
            free_seen.iter().any(|(n, id)| n == p && id == i),
            "FREE_FORM lists {p} {i}, which no command has"
        );
    }
}

/// An unknown flag or a missing argument stays a usage error (exit 2).
#[test]
fn a_wrong_command_line_is_usage() {
    for argv in [
        &["lever", "mem", "procs", "--no-such-flag"][..],
        &["lever", "sim", "create"],
        &["lever", "nosuchcommand"],
    ] {
        let e = parse_from(argv).unwrap_err();
        assert_eq!(clap_class(e.kind()), Class::Usage, "{argv:?}: {e}");
    }
}

/// `--root` is on every command but shown only where it means something:
/// the commands that talk to the daemon do not offer it.
#[test]
fn client_commands_do_not_offer_root() {
    for (path, cmd) in commands() {
        let root = cmd.get_arguments().find(|a| a.get_id() == "root");
        let root = root.unwrap_or_else(|| panic!("{path:?} has no --root"));
        let client = path.len() == 2 && CLIENT_COMMANDS.contains(&path[1].as_str());
        assert_eq!(root.is_hide_set(), client, "{path:?}");
        if client {
            let help = parse_from(path.iter().map(String::as_str).chain(["--help"]))
                .unwrap_err()
                .to_string();
            assert!(!help.contains("--root"), "{path:?}: {help}");
        }
    }
    // Still parsed, before or after the subcommand, so the command can
    // refuse it by name.
    for argv in [
        ["lever", "status", "--root", "/tmp"],
        ["lever", "--root", "/tmp", "status"],
    ] {
        let cli = parse_from(argv).unwrap();
        assert_eq!(cli.global.root, std::path::Path::new("/tmp"), "{argv:?}");
    }
    assert_eq!(
        parse_from(["lever", "status"]).unwrap().global.root,
        std::path::Path::new("/")
    );
}
