//! `lever`: the command-line front end. `main` only parses the arguments,
//! runs one command and turns its outcome into an exit code; each command
//! parses and calls in `cmd/`, and prints in `render/`.
#![forbid(unsafe_code)]
// Results go through `render::out` (EPIPE ends quietly); `println!` would
// panic on a closed pipe.
#![deny(clippy::print_stdout)]

mod args;
mod cmd;
mod exit;
mod manual;
mod render;

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match args::parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let json = cli.global.json;
    let Err(err) = cmd::run(cli) else {
        return ExitCode::SUCCESS;
    };
    // `lever … | head -1`: the reader has what it wanted; end quietly.
    if err.chain().any(|c| c.is::<render::StdoutClosed>()) {
        return ExitCode::SUCCESS;
    }
    if let Some(exit::CommandExit(code)) = err.downcast_ref() {
        return ExitCode::from(*code);
    }
    // The result is printed (a JSON document on stdout with --json); the
    // failed checks are said on stderr, and the exit code is 1.
    if let Some(exit::ChecksFailed(message)) = err.downcast_ref() {
        eprintln!("lever: error: {message}");
        return ExitCode::from(exit::Class::Failed.exit_code());
    }
    // A check that could not be made: said on stderr, exit 9.
    if let Some(exit::NotJudged(message)) = err.downcast_ref() {
        eprintln!("lever: error: {message}");
        return ExitCode::from(exit::Class::NotJudged.exit_code());
    }
    // A parser of a command's own (`lever latency`'s cyclictest flags):
    // clap's message and code, as for the top-level line.
    if let Some(e) = err.downcast_ref::<clap::Error>() {
        return usage_error(e);
    }
    let class = exit::classify(&err);
    eprintln!("lever: error: {err}");
    for cause in exit::causes(&err) {
        eprintln!("  caused by: {cause}");
    }
    if json {
        // Best effort: stdout may be the thing that is gone.
        let _ = render::print_json(&exit::error_doc(&err, class));
    }
    ExitCode::from(class.exit_code())
}

/// A command line clap refused: its own message, and exit 3 for a value
/// that does not parse or 2 for the rest (`exit::clap_class`); with
/// `--json` anywhere on the line, the error object as well.
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        e.exit();
    }
    let _ = e.print();
    let class = exit::clap_class(e.kind());
    if std::env::args().any(|a| a == "--json") {
        let message = e.kind().as_str().unwrap_or("bad command line").to_string();
        let doc = exit::ErrorDoc {
            error: exit::ErrorBody {
                code: class.code(),
                exit_code: class.exit_code(),
                message,
                causes: vec![e.to_string().trim().to_string()],
            },
        };
        let _ = render::print_json(&doc);
    }
    ExitCode::from(class.exit_code())
}
