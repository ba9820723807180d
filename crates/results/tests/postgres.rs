//! The store on a real PostgreSQL server: a throwaway cluster in a temp
//! dir, reached over a Unix socket there (no TCP), run as `nobody` when
//! the test is root (postgres refuses to run as root).
mod common;

use lever_results::{Filter, Store, TrendQuery};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A running cluster, stopped (immediately) when dropped.
struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    socket_dir: PathBuf,
    as_nobody: bool,
    _dir: tempfile::TempDir,
}

impl Cluster {
    fn cmd(&self, tool: &str) -> Command {
        command(&self.bin, tool, self.as_nobody)
    }

    /// The `--db` string for database `db`.
    fn url(&self, db: &str) -> String {
        format!("host={} user=lever dbname={db}", self.socket_dir.display())
    }

    fn create_db(&self, name: &str) {
        let out = self
            .cmd("createdb")
            .args(["-h"])
            .arg(&self.socket_dir)
            .args(["-U", "lever", name])
            .output()
            .unwrap();
        assert_success("createdb", &out);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self
            .cmd("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "stop"])
            .output();
    }
}

fn command(bin: &Path, tool: &str, as_nobody: bool) -> Command {
    if as_nobody {
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--"]).arg(bin.join(tool));
        c
    } else {
        Command::new(bin.join(tool))
    }
}

fn assert_success(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Start a cluster, or say why not (CI has the server, so there it fails).
fn start() -> Option<Cluster> {
    let bin = std::fs::read_dir("/usr/lib/postgresql").ok().and_then(|d| {
        d.filter_map(Result::ok)
            .map(|e| e.path().join("bin"))
            .filter(|b| b.join("initdb").is_file())
            .max()
    });
    let Some(bin) = bin else {
        let why = "no /usr/lib/postgresql/*/bin/initdb (Debian's postgresql package)";
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "under CI: {why}"
        );
        println!("skipping the PostgreSQL tests: {why}");
        return None;
    };
    let as_nobody = rustix::process::geteuid().is_root();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let socket_dir = dir.path().to_path_buf();
    if as_nobody {
        // nobody owns the cluster's directory; the temp dir is ours.
        let status = Command::new("chown")
            .args(["nobody:nogroup"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(status.success(), "chown nobody the temp dir");
    }
    let out = command(&bin, "initdb", as_nobody)
        .arg("-D")
        .arg(&data)
        .args(["-U", "lever", "-A", "trust", "--no-sync", "-E", "UTF8"])
        .output()
        .unwrap();
    assert_success("initdb", &out);
    let opts = format!(
        "-c listen_addresses='' -k {} -c fsync=off -c max_connections=20",
        socket_dir.display()
    );
    let out = command(&bin, "pg_ctl", as_nobody)
        .arg("-D")
        .arg(&data)
        .args(["-o", &opts, "-w", "-t", "60", "-l"])
        .arg(dir.path().join("log"))
        .arg("start")
        .output()
        .unwrap();
    let cluster = Cluster {
        bin,
        data,
        socket_dir,
        as_nobody,
        _dir: dir,
    };
    if !out.status.success() {
        let log = std::fs::read_to_string(cluster.socket_dir.join("log")).unwrap_or_default();
        panic!(
            "pg_ctl start: {}\n{log}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Some(cluster)
}

#[test]
fn the_store_on_postgresql() {
    let Some(pg) = start() else {
        return;
    };

    // The same checks as on SQLite, each in its own database.
    pg.create_db("roundtrip");
    common::round_trip(&mut Store::open(Some(&pg.url("roundtrip"))).unwrap());
    pg.create_db("trend");
    common::trend(&mut Store::open(Some(&pg.url("trend"))).unwrap());

    // The URL form of a Unix socket reaches the same database.
    let url = format!(
        "postgresql:///roundtrip?host={}&user=lever",
        pg.socket_dir.display()
    );
    let mut by_url = Store::open(Some(&url)).unwrap();
    assert_eq!(by_url.list(&Filter::default()).unwrap().len(), 1);
    assert_eq!(by_url.location(), url);

    // A database holding a lab's other tables is fine; one with a `runs`
    // table that is not ours is refused.
    pg.create_db("shared");
    let mut admin = postgres::Client::connect(&pg.url("shared"), postgres::NoTls).unwrap();
    admin
        .batch_execute("CREATE TABLE inventory (x int)")
        .unwrap();
    Store::open(Some(&pg.url("shared"))).unwrap();
    pg.create_db("foreign");
    let mut admin = postgres::Client::connect(&pg.url("foreign"), postgres::NoTls).unwrap();
    admin.batch_execute("CREATE TABLE runs (x int)").unwrap();
    let err = Store::open(Some(&pg.url("foreign"))).unwrap_err();
    assert!(
        matches!(err, lever_results::StoreError::Foreign { .. }),
        "{err:?}"
    );

    // No such database: the server is there, the store is not.
    let err = Store::open(Some(&pg.url("nosuchdb"))).unwrap_err();
    assert_eq!(err.kind(), lever_results::ErrorKind::NotAvailable, "{err}");

    // Two writers from different boards (and one board they share) store
    // runs at once into a fresh database, racing on its first migration
    // too: nothing is lost, no id is handed out twice.
    pg.create_db("lab");
    let url = pg.url("lab");
    const EACH: usize = 60;
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut store = Store::open(Some(&url)).unwrap();
                let mut ids = Vec::new();
                for i in 0..EACH {
                    let board = if i % 3 == 0 {
                        "shared".to_string()
                    } else {
                        format!("board-{w}")
                    };
                    let at = format!("2026-11-{:02}T{:02}:00:00Z", i % 28 + 1, w + 10);
                    let run = common::run(&board, &at, (w * 1000 + i) as f64);
                    ids.push((store.save(&run).unwrap(), run));
                }
                ids
            })
        })
        .collect();
    let saved: Vec<_> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    let mut store = Store::open(Some(&url)).unwrap();
    let listed = store.list(&Filter::default()).unwrap();
    assert_eq!(listed.len(), 2 * EACH);
    let mut ids: Vec<i64> = saved.iter().map(|(id, _)| id.0).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 2 * EACH, "every run has its own id");
    for (id, run) in &saved {
        assert_eq!(&store.get(*id).unwrap(), run);
    }
    let shared = store
        .list(&Filter {
            board: Some("shared".into()),
            since: None,
        })
        .unwrap();
    assert_eq!(shared.len(), 2 * EACH.div_ceil(3));
    let points = store
        .trend(&TrendQuery {
            metric: "latency.max".into(),
            labels: [("cpu".to_string(), "0".to_string())].into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(points.len(), 2 * EACH);
    let mut boards: Vec<i64> = admin_count(&url, "SELECT COUNT(*) FROM boards");
    boards.extend(admin_count(&url, "SELECT COUNT(*) FROM metrics"));
    boards.extend(admin_count(&url, "SELECT COUNT(*) FROM samples"));
    assert_eq!(boards, [3, 2 * EACH as i64 * 3, 2 * EACH as i64 * 8]);
}

fn admin_count(url: &str, sql: &str) -> Vec<i64> {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.query(sql, &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}
