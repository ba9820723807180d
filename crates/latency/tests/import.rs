//! Golden tests: real cyclictest 2.40 and stress-ng 0.15 outputs from this
//! VM (see fixtures/README.md) import to exactly the figures those tools
//! printed themselves.
use lever_latency::import::import_file;
use lever_latency::stats::Percentile;
use lever_testkit::fixture_path;

fn import(name: &str) -> lever_latency::LatencyReport {
    import_file(&fixture_path(env!("CARGO_MANIFEST_DIR"), name)).unwrap()
}

#[test]
fn cyclictest_text_and_json_of_one_run_agree_with_cyclictest() {
    let text = import("cyclictest-2.40-t2-h60-spike40.txt");
    let json = import("cyclictest-2.40-t2-h60-spike40.json");
    // What cyclictest printed: `# Min Latencies: 00011 00007`,
    // `# Avg Latencies: 00013 00014`, `# Max Latencies: 00118 00557`;
    // the JSON has avg 13.42 and 14.28.
    let mins: Vec<_> = text.threads.iter().map(|t| t.min_us.unwrap()).collect();
    let maxs: Vec<_> = text.threads.iter().map(|t| t.max_us.unwrap()).collect();
    let avgs: Vec<_> = text.threads.iter().map(|t| t.avg_us.unwrap()).collect();
    assert_eq!(
        (mins, maxs, avgs),
        (vec![11, 7], vec![118, 557], vec![13.0, 14.0])
    );
    assert_eq!(json.threads[0].avg_us, Some(13.42));
    assert_eq!(json.threads[1].avg_us, Some(14.28));
    for (t, j) in text.threads.iter().zip(&json.threads) {
        assert_eq!(
            (t.min_us, t.max_us, t.cycles),
            (j.min_us, j.max_us, j.cycles)
        );
        assert_eq!(t.cycles, 1500);
        // The histograms are the same, and so are the percentiles.
        assert_eq!(t.histogram, j.histogram);
        assert_eq!(t.percentiles, j.percentiles);
        // The smallest bucket is cyclictest's min.
        assert_eq!(
            t.histogram.as_ref().unwrap().range_us().unwrap().0,
            t.min_us.unwrap()
        );
    }
    assert_eq!(text.threads[1].overflows, 3);
    assert_eq!(text.threads[1].overflow_cycles, [584, 601, 1096]);
    assert_eq!(text.threads[0].tid, Some(29726));
    assert_eq!(text.histogram_us, Some(60));
    assert_eq!(json.histogram_us, Some(60));
    assert_eq!(text.spike_count, 4);
    assert_eq!(text.spikes[1].latency_us, 557);
    assert_eq!(text.spikes[1].timestamp_us, 3_957_230_341);
}

#[test]
fn quiet_cyclictest_histogram_imports_with_overflows() {
    let r = import("cyclictest-2.40-t2-h30-q.txt");
    let j = import("cyclictest-2.40-t2-h30.json");
    assert_eq!(r.threads.len(), 2);
    // `# Total: 000001999 000001961`, overflows 1 and 39: 2000 cycles each.
    assert_eq!(r.threads[1].overflows, 39);
    assert_eq!(r.threads[1].cycles, 2000);
    assert_eq!(r.threads[1].overflow_cycles.len(), 30); // plus "# 00009 others"
    assert_eq!(
        (r.threads[1].min_us, r.threads[1].max_us),
        (Some(7), Some(245))
    );
    assert_eq!(
        (j.threads[1].min_us, j.threads[1].max_us),
        (Some(7), Some(245))
    );
    assert_eq!(j.threads[1].overflows, 39);
    assert_eq!(
        r.threads[1].percentiles.unwrap().p99,
        Some(Percentile::AtLeastUs(30))
    );
    assert_eq!(
        r.threads[0].percentiles.unwrap().p50,
        Some(Percentile::Us(13))
    );
}

#[test]
fn stress_ng_cyclic() {
    let r = import("stress-ng-0.15-cyclic-clock_ns.txt");
    let t = &r.threads[0];
    // `min: 6979 ns, max: 999823 ns`, `mean: 15206.04 ns`, `99.90%: 88239 ns`.
    assert_eq!((t.min_us, t.max_us), (Some(6), Some(999)));
    assert!((t.avg_us.unwrap() - 15.20604).abs() < 1e-9);
    assert_eq!(t.percentiles.unwrap().p99_9, Some(Percentile::Us(88)));
    assert_eq!(t.cycles, 10000);
}

#[test]
fn rtla_timerlat_hist_documented_layout() {
    let r = import("rtla-timerlat-hist-documented.txt");
    assert_eq!(r.threads.len(), 2);
    assert_eq!(r.threads[0].cpu, Some(0));
    assert_eq!(
        (r.threads[0].min_us, r.threads[0].max_us),
        (Some(1), Some(160))
    );
    assert_eq!(r.threads[0].cycles, 10000);
    assert_eq!(r.threads[0].overflows, 1);
    assert_eq!(
        r.threads[1].percentiles.unwrap().p50,
        Some(Percentile::Us(1))
    );
}

#[test]
fn unknown_text_is_refused_with_the_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("notes.txt");
    std::fs::write(&p, "hello\n").unwrap();
    let e = import_file(&p).unwrap_err().to_string();
    assert!(
        e.contains("notes.txt") && e.contains("not a cyclictest"),
        "{e}"
    );
}
