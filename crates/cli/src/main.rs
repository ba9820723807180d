//! `lever`: the command-line front end. `main` only parses the arguments,
//! builds the context and runs one command; each command lives in `cmd/`.
#![forbid(unsafe_code)]

mod args;
mod cmd;
mod render;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = args::Cli::parse();
    match cmd::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let top = err.to_string();
            eprintln!("lever: error: {top}");
            // Library errors often embed their source already; print only
            // the causes that add something.
            for cause in err.chain().skip(1) {
                let cause = cause.to_string();
                if !top.contains(&cause) {
                    eprintln!("  caused by: {cause}");
                }
            }
            ExitCode::from(1)
        }
    }
}
