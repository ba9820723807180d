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

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
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

/// A command line clap refused: its own message and exit code 2, or with
/// `--json` anywhere on the line, the error object as well.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let wants_json = std::env::args().any(|a| a == "--json");
    if !wants_json || matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        e.exit();
    }
    let _ = e.print();
    let class = exit::Class::Usage;
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
    ExitCode::from(class.exit_code())
}
