//! Runs to store and the checks every backend must pass.
#![allow(dead_code)] // each test file uses a subset

use lever_results::model::*;
use lever_results::{Filter, Store, TrendQuery};
use std::collections::BTreeMap;

/// A run of `board` at `at` with a latency metric per CPU (value `v`,
/// `v + 1`), samples (CPU 0's taken in two passes of 1 and 3), and a
/// section that could not be measured.
pub fn run(board: &str, at: &str, v: f64) -> Run {
    let device = Device {
        board: Some(board.to_string()),
        soc: Some("QCS6490".into()),
        arch: Some("aarch64".into()),
        kernel_release: Some("6.6.28-rt".into()),
        cmdline: Some("console=ttyMSM0 isolcpus=1-3".into()),
        cpus: vec![Cpu {
            cpu: 0,
            cluster: Some(0),
            model: Some("Cortex-A55".into()),
            max_khz: Some(1_958_400),
            capacity: Some(408),
        }],
        ..Device::default()
    };
    let mut run = Run::new(at, device);
    run.lever_version = "0.1.0".into();
    let mut lat = Section::measured("latency", "lever latency -t -l 1000");
    for cpu in 0..2 {
        let mut m =
            Metric::new("latency.max", "us", v + f64::from(cpu)).label("cpu", &cpu.to_string());
        m.samples = vec![0.1 + 0.2, v, 1e-300, 123_456_789.123_456_78];
        m.better = Some(Better::Lower);
        if cpu == 0 {
            m.pass_samples = vec![1, 3];
        }
        lat.metrics.push(m);
    }
    lat.detail = serde_json::json!({"histogram": [[1, 10], [2, 3]]});
    run.sections.push(lat);
    let mut mem = Section::measured("memory", "lever mem map");
    mem.metrics
        .push(Metric::new("memory.used", "kB", 123_456.0).label("usecase", "boot"));
    run.sections.push(mem);
    run.sections
        .push(Section::not_measured("boot", "no --boot-log given"));
    run
}

/// Save → get returns the same run, exactly; list and the metric rows agree.
pub fn round_trip(store: &mut Store) {
    let original = run("rb3gen2", "2026-11-23T14:00:00Z", 0.1 + 0.7);
    let id = store.save(&original).unwrap();
    let back = store.get(id).unwrap();
    assert_eq!(back, original);
    assert_eq!(
        serde_json::to_value(&back).unwrap(),
        serde_json::to_value(&original).unwrap()
    );
    // The metric rows hold the same bits as the document.
    let points = store
        .trend(&TrendQuery {
            metric: "latency.max".into(),
            ..Default::default()
        })
        .unwrap();
    let mine: Vec<_> = points.iter().filter(|p| p.run == id).collect();
    assert_eq!(mine.len(), 2);
    assert_eq!(mine[0].value.to_bits(), (0.1f64 + 0.7).to_bits());
    assert_eq!(mine[0].labels.get("cpu").map(String::as_str), Some("0"));
    assert_eq!(mine[0].better, Some(Better::Lower));
    let listed = store.list(&Filter::default()).unwrap();
    let row = listed.iter().find(|r| r.id == id).unwrap();
    assert_eq!(row.board, "rb3gen2");
    assert_eq!(row.metrics, 3);
    assert_eq!(row.kernel_release.as_deref(), Some("6.6.28-rt"));
    let err = store.get(lever_results::RunId(id.0 + 1000)).unwrap_err();
    assert!(
        matches!(err, lever_results::StoreError::NoSuchRun { .. }),
        "{err}"
    );
    assert_eq!(err.kind(), lever_results::ErrorKind::NotAvailable);
}

/// `trend` over runs of two boards stored out of time order.
pub fn trend(store: &mut Store) {
    // Stored out of order: trend orders by collection time.
    let runs = [
        ("board-a", "2026-11-03T10:00:00Z", 30.0),
        ("board-b", "2026-11-01T10:00:00Z", 99.0),
        ("board-a", "2026-11-01T10:00:00Z", 10.0),
        ("board-a", "2026-11-02T10:00:00Z", 20.0),
        ("board-b", "2026-11-04T10:00:00Z", 98.0),
    ];
    for (b, at, v) in runs {
        store.save(&run(b, at, v)).unwrap();
    }
    let q = |board: Option<&str>, since: Option<&str>, labels: &[(&str, &str)]| TrendQuery {
        metric: "latency.max".into(),
        board: board.map(str::to_string),
        since: since.map(str::to_string),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
    };
    let values = |points: Vec<lever_results::TrendPoint>| -> Vec<(String, f64)> {
        points.into_iter().map(|p| (p.board, p.value)).collect()
    };
    let a = store
        .trend(&q(Some("board-a"), None, &[("cpu", "0")]))
        .unwrap();
    assert!(a.windows(2).all(|w| w[0].collected_at < w[1].collected_at));
    assert_eq!(
        values(a),
        [
            ("board-a".into(), 10.0),
            ("board-a".into(), 20.0),
            ("board-a".into(), 30.0)
        ]
    );
    let cpu1 = store
        .trend(&q(Some("board-a"), Some("2026-11-02"), &[("cpu", "1")]))
        .unwrap();
    assert_eq!(
        values(cpu1),
        [("board-a".into(), 21.0), ("board-a".into(), 31.0)]
    );
    let all = store
        .trend(&q(None, Some("2026-11-01"), &[("cpu", "0")]))
        .unwrap();
    let boards: Vec<(String, f64)> = values(all);
    assert_eq!(
        boards,
        [
            ("board-b".into(), 99.0),
            ("board-a".into(), 10.0),
            ("board-a".into(), 20.0),
            ("board-a".into(), 30.0),
            ("board-b".into(), 98.0)
        ]
    );
    // Both CPUs of a run, in storage order, without a label filter.
    let b = store
        .trend(&q(Some("board-b"), Some("2026-11-04T00:00:00Z"), &[]))
        .unwrap();
    assert_eq!(
        values(b),
        [("board-b".into(), 98.0), ("board-b".into(), 99.0)]
    );
    assert!(store
        .trend(&q(None, None, &[("cpu", "7")]))
        .unwrap()
        .is_empty());
    assert!(store
        .trend(&q(Some("board-c"), None, &[]))
        .unwrap()
        .is_empty());
    let other = TrendQuery {
        metric: "memory.used".into(),
        labels: [("usecase".to_string(), "boot".to_string())].into(),
        ..Default::default()
    };
    assert_eq!(store.trend(&other).unwrap()[0].unit, "kB");
    let listed = store
        .list(&Filter {
            board: Some("board-a".into()),
            since: Some("2026-11-02".into()),
        })
        .unwrap();
    let times: Vec<&str> = listed.iter().map(|r| r.collected_at.as_str()).collect();
    assert_eq!(times, ["2026-11-02T10:00:00Z", "2026-11-03T10:00:00Z"]);
}
