//! Folding and drawing a real `perf script` capture.
use lever_flamegraph::*;

const SCRIPT: &str = include_str!("fixtures/python-json.perf-script");

/// Sum of the sample periods in perf script text: one header line per
/// sample, e.g. `python3 28416  3374.465396:    1001001 cpu-clock:ppp: `.
fn total_period(script: &str) -> u64 {
    script
        .lines()
        .filter(|l| !l.starts_with('\t') && l.contains("cpu-clock"))
        .map(|l| {
            let before = l.split("cpu-clock").next().unwrap();
            before
                .split_whitespace()
                .last()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum()
}

#[test]
fn folding_keeps_every_sample_of_a_real_capture() {
    let folded = collapse_perf_script(SCRIPT.as_bytes()).unwrap();
    let profile = Profile::from_folded(&folded).unwrap();
    assert_eq!(profile.weight, total_period(SCRIPT));
    assert_eq!(profile.weight, 156 * 1_001_001, "156 samples of 1.001 ms");
    assert!(profile.stacks > 10, "{}", profile.stacks);
    // Every stack starts at its process name (the header's first word).
    let comms: Vec<&str> = SCRIPT
        .lines()
        .filter(|l| l.contains("cpu-clock"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for line in folded.lines() {
        let root = line.split(';').next().unwrap();
        assert!(comms.contains(&root), "{line}");
    }
    // The kernel's exec path is in the capture's first sample.
    assert!(folded.contains("do_execveat_common"));
    let hot = profile.hottest(5);
    assert_eq!(hot.len(), 5);
    assert!(hot.windows(2).all(|w| w[0].self_weight >= w[1].self_weight));
    assert!(hot.iter().all(|f| f.total_weight >= f.self_weight));
}

#[test]
fn renders_an_svg_with_the_title_and_frames() {
    let folded = collapse_perf_script(SCRIPT.as_bytes()).unwrap();
    let mut svg = Vec::new();
    render_svg(&folded, "python json round trips", &mut svg).unwrap();
    let svg = String::from_utf8(svg).unwrap();
    assert!(svg.starts_with("<?xml"));
    assert!(svg.contains("python json round trips"));
    assert!(svg.contains("do_execveat_common"));
}

#[test]
fn empty_and_malformed_input_are_precise_errors() {
    assert!(matches!(
        collapse_perf_script(&b""[..]),
        Err(FlameError::Empty)
    ));
    let err = Profile::from_folded("a;b 3\nno-count-here\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "folded stacks line 2: \"no-count-here\" is not `frame;frame;... COUNT`"
    );
    assert!(matches!(Profile::from_folded("\n"), Err(FlameError::Empty)));
}
