//! `lever completions SHELL` loads into the shells and `lever man` pages
//! open in man(1).

mod common;

use std::process::Command;

/// The tool exists, or (outside CI) the test says why it skips.
fn have(tool: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{tool} is missing under CI=true (.ci/run installs it)"
        );
        println!("skipped: {tool} is not installed");
    }
    found
}

#[test]
fn bash_completion_registers_lever() {
    if !have("bash") {
        return;
    }
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source <('{}' completions bash) && complete -p lever",
            common::LEVER
        ))
        .output()
        .unwrap();
    common::assert_success(&out);
    let line = String::from_utf8_lossy(&out.stdout);
    assert!(line.contains("-F _lever lever"), "{line}");
}

#[test]
fn bash_completes_subcommands_and_shells() {
    if !have("bash") {
        return;
    }
    // What bash offers after `lever re` and after `lever completions `.
    let script = format!(
        "source <('{}' completions bash)
         COMP_WORDS=(lever re); COMP_CWORD=1; _lever lever re lever; echo \"${{COMPREPLY[@]}}\"
         COMP_WORDS=(lever completions ''); COMP_CWORD=2; _lever lever '' completions; echo \"${{COMPREPLY[@]}}\"",
        common::LEVER
    );
    let out = Command::new("bash").arg("-c").arg(script).output().unwrap();
    common::assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    for word in ["resources", "restore", "release"] {
        assert!(first.split(' ').any(|w| w == word), "{word} not in {first}");
    }
    let second = lines.next().unwrap_or_default();
    for word in ["bash", "zsh", "fish"] {
        assert!(
            second.split(' ').any(|w| w == word),
            "{word} not in {second}"
        );
    }
}

#[test]
fn zsh_and_fish_scripts_parse() {
    for (shell, check) in [("zsh", "-n"), ("fish", "--no-execute")] {
        let script = common::ok(&["completions", shell]);
        assert!(script.contains("lever"), "{shell}: {script}");
        // Syntax-checked by the shell itself where it is installed (neither
        // is in CI's image; bash above is the one the packages rely on).
        let exists = Command::new("sh")
            .args(["-c", &format!("command -v {shell}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !exists {
            println!("{shell} syntax check skipped: {shell} is not installed");
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("lever.completion");
        std::fs::write(&file, script).unwrap();
        let out = Command::new(shell).arg(check).arg(&file).output().unwrap();
        assert!(out.status.success(), "{shell}: {out:?}");
    }
}

#[test]
fn unknown_shell_is_a_bad_value() {
    let out = common::lever(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn man_pages_open_in_man() {
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("man1");
    let listed = common::ok(&["man", "-o", pages.to_str().unwrap()]);
    let mut files: Vec<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    for name in [
        "lever.1",
        "lever-daemon.1",
        "lever-sim-create.1",
        "lever-completions.1",
    ] {
        assert!(files.iter().any(|f| f == name), "{name} not in {files:?}");
        assert!(listed.contains(name), "{name} not listed: {listed}");
    }
    // `lever man` alone prints lever.1 itself.
    let stdout = common::ok(&["man"]);
    assert_eq!(
        stdout,
        std::fs::read_to_string(pages.join("lever.1")).unwrap()
    );
    if !have("man") {
        return;
    }
    for page in ["lever.1", "lever-sim-create.1"] {
        let out = Command::new("man")
            .args(["--warnings", "-l"])
            .arg(pages.join(page))
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .output()
            .unwrap();
        assert!(out.status.success(), "man -l {page}: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("SYNOPSIS"), "{text}");
        assert!(out.stderr.is_empty(), "groff warnings in {page}: {out:?}");
    }
}

#[test]
fn man_into_an_unwritable_place_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = common::lever(&["man", "-o", file.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a-file"), "{err}");
}

/// `man -o DIR` creates DIR, not a tree of mistyped parents: a missing
/// parent is an error naming the path (exit 4), and nothing is created.
#[test]
fn man_into_a_missing_parent_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("nonexistent/man1");
    let out = common::lever(&["man", "-o", typo.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("nonexistent/man1"));
    assert!(!dir.path().join("nonexistent").exists());
    // An existing directory is fine, twice.
    let pages = dir.path().to_str().unwrap();
    common::ok(&["man", "-o", pages]);
    common::ok(&["man", "-o", pages]);
}

/// Completion offers the simulated boards where a board is asked for
/// (`sim create`, `daemon --sim`).
#[test]
fn bash_completes_boards() {
    if !have("bash") {
        return;
    }
    let script = format!(
        "source <('{}' completions bash)
         COMP_WORDS=(lever daemon --sim ''); COMP_CWORD=3; _lever lever '' --sim; echo \"${{COMPREPLY[@]}}\"
         COMP_WORDS=(lever sim create ''); COMP_CWORD=3; _lever lever '' create; echo \"${{COMPREPLY[@]}}\"",
        common::LEVER
    );
    let out = Command::new("bash").arg("-c").arg(script).output().unwrap();
    common::assert_success(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for line in &lines {
        for board in ["qcs6490", "qcs5430-fp1", "am437x"] {
            assert!(line.split(' ').any(|w| w == board), "{board} not in {line}");
        }
    }
}

/// What bash offers for each `(words, current word)` after `lever`.
fn bash_offers(lines: &[(&str, &str)]) -> Vec<Vec<String>> {
    let mut script = format!("source <('{}' completions bash)\n", common::LEVER);
    for (words, cur) in lines {
        let words: Vec<&str> = words.split_whitespace().collect();
        let prev = words.last().copied().unwrap_or("lever");
        script.push_str(&format!(
            "COMP_WORDS=(lever {} '{cur}'); COMP_CWORD={}; _lever lever '{cur}' '{prev}'; echo \"${{COMPREPLY[@]}}\"\n",
            words.join(" "),
            words.len() + 1
        ));
    }
    let out = Command::new("bash").arg("-c").arg(script).output().unwrap();
    common::assert_success(&out);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split(' ').map(str::to_string).collect())
        .collect()
}

/// Completion offers the built-in profiles (`profile show/diff/verify/
/// apply/hold`), the built-in targets' use cases (`signal`), resources
/// (`acquire` as `NAME=`, `explain`), apps (`run --app`) and the targets
/// themselves (`--target`, `target check`); help and man pages do not list
/// them, and other values (a file, an opcode) are still taken (issue 27
/// item 7).
#[test]
fn bash_completes_profiles_usecases_resources_apps_and_targets() {
    let script = common::ok(&["completions", "bash"]);
    let profiles = lever_profiles::builtin_names();
    let targets: Vec<lever_targets::TargetFile> = lever_targets::builtin_names()
        .iter()
        .map(|n| lever_targets::load_builtin(n).unwrap())
        .collect();
    let usecases: Vec<&str> = targets
        .iter()
        .flat_map(|t| t.usecases.iter().map(|u| u.name.as_str()))
        .collect();
    let qcs6490 = &targets[0];
    assert_eq!(qcs6490.name, "qcs6490");
    let resources: Vec<String> = qcs6490
        .resource_names()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(resources.len() > 50, "{resources:?}");
    for name in profiles.iter().chain(&usecases) {
        assert!(script.contains(name), "{name} not in the bash script");
    }
    for name in &resources {
        assert!(
            script.contains(&format!("{name}=")),
            "{name}= not in the bash script"
        );
    }
    if !have("bash") {
        return;
    }
    let offers = bash_offers(&[
        ("profile show", ""),
        ("profile diff", ""),
        ("profile verify", ""),
        ("profile apply", ""),
        ("profile hold", ""),
        ("signal", ""),
        ("acquire", ""),
        ("explain", ""),
        ("run --app", ""),
        ("resources --target", ""),
        ("target check", ""),
        ("daemon -t", ""),
        ("signal", "camera-p"),
        ("acquire", "cpu_min_freq.s"),
    ]);
    // profile show, diff, verify, apply, hold
    for offer in &offers[..5] {
        for p in &profiles {
            assert!(offer.iter().any(|w| w == p), "{p}: {offer:?}");
        }
    }
    for u in &usecases {
        assert!(offers[5].iter().any(|w| w == u), "{u}: {:?}", offers[5]);
    }
    for r in &resources {
        let pair = format!("{r}=");
        assert!(offers[6].contains(&pair), "{pair}: {:?}", offers[6]);
        assert!(offers[7].contains(r), "{r}: {:?}", offers[7]);
    }
    assert!(
        offers[8].iter().any(|w| w == "gst-camera"),
        "{:?}",
        offers[8]
    );
    // --target of resources and daemon, target check
    for offer in &offers[9..12] {
        for t in lever_targets::builtin_names() {
            assert!(offer.iter().any(|w| w == t), "{t}: {offer:?}");
        }
    }
    assert_eq!(offers[12], ["camera-preview"]);
    assert_eq!(offers[13], ["cpu_min_freq.silver="]);
    // Not listed in help or man pages; a value of one's own still parses.
    for cmd in [
        &["signal", "--help"][..],
        &["acquire", "--help"],
        &["profile", "show", "--help"],
        &["run", "--help"],
    ] {
        let help = common::ok(cmd);
        assert!(!help.contains("possible values"), "{cmd:?}: {help}");
        assert!(!help.contains("camera-preview,"), "{cmd:?}: {help}");
    }
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("board");
    common::ok(&["sim", "create", "qcs6490", board.to_str().unwrap()]);
    let own = dir.path().join("mine.yaml");
    std::fs::write(
        &own,
        "profile: mine\ndescription: one of my own\nresources:\n  cpu_min_freq: max\n",
    )
    .unwrap();
    let shown = common::ok(&[
        "--root",
        board.to_str().unwrap(),
        "profile",
        "show",
        own.to_str().unwrap(),
    ]);
    assert!(shown.contains("mine"), "{shown}");
}
