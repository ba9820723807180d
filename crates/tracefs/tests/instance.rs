//! `Capture::start_instance`: a named private instance or an error, never
//! the top level, and nothing left behind either way.

use lever_kernel::KernelFs;
use lever_testkit::FakeTree;
use lever_tracefs::{Capture, CaptureConfig, Tracefs};

const T: &str = "/sys/kernel/tracing";

fn tree_with(instances_dir: bool) -> FakeTree {
    let tree = FakeTree::new();
    tree.node(&format!("{T}/tracing_on"), "1\n");
    tree.node(&format!("{T}/events/sched/sched_switch/enable"), "0\n");
    if instances_dir {
        std::fs::create_dir_all(tree.host_path(&format!("{T}/instances"))).unwrap();
    }
    tree
}

#[test]
fn no_instances_is_an_error_not_the_top_level() {
    let tree = tree_with(false);
    let tfs = Tracefs::locate(tree.fs()).unwrap();
    let e = Capture::start_instance(&tfs, "x", None, &CaptureConfig::default()).unwrap_err();
    assert!(e.to_string().contains("no tracefs instances"), "{e}");
    assert_eq!(tree.fs().read(&format!("{T}/tracing_on")).unwrap(), "1");
}

#[test]
fn a_directory_that_is_no_instance_is_removed() {
    let tree = tree_with(true);
    let tfs = Tracefs::locate(tree.fs()).unwrap();
    let e = Capture::start_instance(&tfs, "lever-x", Some("mono"), &CaptureConfig::default())
        .unwrap_err();
    assert!(e.to_string().contains("not a tracefs instance"), "{e}");
    assert!(tree
        .fs()
        .list_dir(&format!("{T}/instances"))
        .unwrap()
        .is_empty());
    assert!(Capture::start_instance(&tfs, "../x", None, &CaptureConfig::default()).is_err());
}

#[test]
fn real_instance_marks_stops_and_goes_away() {
    let fs = KernelFs::new("/");
    let Some(tfs) = Tracefs::locate(&fs).filter(|_| rustix_is_root()) else {
        let why = "real_instance_marks_stops_and_goes_away: skipped: needs root and tracefs";
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{why} (CI=true)"
        );
        eprintln!("{why}");
        return;
    };
    let name = format!("lever-test-{}", std::process::id());
    let cfg = CaptureConfig {
        events: vec!["sched:sched_switch".into()],
        ..Default::default()
    };
    let cap = Capture::start_instance(&tfs, &name, Some("mono"), &cfg).unwrap();
    let dir = format!("{T}/instances/{name}");
    assert_eq!(cap.dir(), dir);
    assert!(fs
        .read(&format!("{dir}/trace_clock"))
        .unwrap()
        .contains("[mono]"));
    cap.mark("lever instance test").unwrap();
    cap.stop().unwrap();
    assert_eq!(fs.read(&format!("{dir}/tracing_on")).unwrap(), "0");
    let out = tempfile::NamedTempFile::new().unwrap();
    cap.finish(out.path()).unwrap();
    assert!(std::fs::read_to_string(out.path())
        .unwrap()
        .contains("lever instance test"));
    assert!(!fs.exists(&dir));
}

fn rustix_is_root() -> bool {
    // Without a process crate here: root owns /proc/self.
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}
