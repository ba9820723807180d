//! Flag parsing of the client commands (no daemon needed).

use crate::args::{Cli, Command};
use clap::Parser;
use lever_client::{Handle, Priority};
use std::time::Duration;

fn acquire(args: &[&str]) -> super::AcquireArgs {
    let argv = ["lever", "acquire"]
        .iter()
        .chain(args)
        .chain(&["0x44008100=1"]);
    match Cli::try_parse_from(argv).unwrap().command {
        Command::Acquire(a) => a,
        other => panic!("{other:?}"),
    }
}

#[test]
fn durations_take_units_and_bare_numbers_stay_milliseconds() {
    assert_eq!(acquire(&["-d", "10s"]).duration, Duration::from_secs(10));
    assert_eq!(
        acquire(&["-d", "500ms"]).duration,
        Duration::from_millis(500)
    );
    assert_eq!(
        acquire(&["--duration", "2000"]).duration,
        Duration::from_secs(2)
    );
    assert_eq!(
        acquire(&["--duration-ms", "250"]).duration,
        Duration::from_millis(250)
    );
    assert_eq!(acquire(&["-d", "0"]).duration, Duration::ZERO);
    let err = Cli::try_parse_from(["lever", "acquire", "-d", "10 parsecs", "x=1"]).unwrap_err();
    assert!(err.to_string().contains("unknown unit"), "{err}");
}

#[test]
fn priority_and_handle_are_typed() {
    let a = acquire(&["-d", "1", "-p", "system-high", "--handle", "42"]);
    assert_eq!(
        (a.priority, a.handle),
        (Priority::SystemHigh, Handle::new(42))
    );
    assert_eq!(
        acquire(&["-d", "1", "-p", "1"]).priority,
        Priority::ThirdPartyHigh
    );
    assert_eq!(acquire(&["-d", "1"]).priority, Priority::ThirdPartyLow);
    assert_eq!(acquire(&["-d", "1"]).handle, None);
    for bad in [
        &["-d", "1", "-p", "urgent"][..],
        &["-d", "1", "--handle", "0"],
    ] {
        let argv = ["lever", "acquire"].iter().chain(bad).chain(&["x=1"]);
        assert!(Cli::try_parse_from(argv).is_err(), "{bad:?}");
    }
}

#[test]
fn root_is_refused_by_client_commands() {
    for argv in [
        &["lever", "--root", "/tmp/board", "status"][..],
        &["lever", "explain", "--root", "/tmp/board", "x"],
        &["lever", "release", "--root", "/tmp/board", "5"],
        &["lever", "acquire", "--root", "/tmp/board", "-d", "1", "x=1"],
        &["lever", "perflock", "--root", "/tmp/board", "--rel", "5"],
    ] {
        let cli = Cli::try_parse_from(argv).unwrap();
        let socket = super::SocketArg {
            socket: Some("/nonexistent/lever.sock".into()),
        };
        let name = argv
            .iter()
            .find(|a| !a.starts_with('-') && **a != "lever" && **a != "/tmp/board")
            .unwrap();
        let err = socket.connect(&cli.global, name).unwrap_err().to_string();
        assert!(
            err.contains(&format!("--root has no meaning for `lever {name}`"))
                && err.contains("/nonexistent/lever.sock"),
            "{err}"
        );
    }
    // Without --root the connection itself is tried (and fails here).
    let cli = Cli::try_parse_from(["lever", "status"]).unwrap();
    let socket = super::SocketArg {
        socket: Some("/nonexistent/lever.sock".into()),
    };
    let err = socket
        .connect(&cli.global, "status")
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot connect"), "{err}");
}

#[test]
fn zero_holds_until_released() {
    assert_eq!(
        super::lease(Duration::ZERO).unwrap(),
        lever_client::Lease::UntilReleased
    );
    assert_eq!(super::lease(Duration::from_secs(3)).unwrap().ms(), 3000);
}
