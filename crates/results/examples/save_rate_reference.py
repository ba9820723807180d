# Reference: the same rows through Python's sqlite3 module (the C library
# directly), one transaction per run, same statements and indexes.
import sqlite3, sys, time, json
db, n = sys.argv[1], int(sys.argv[2])
c = sqlite3.connect(db, isolation_level=None)
c.executescript("""
CREATE TABLE boards (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, soc TEXT, arch TEXT);
CREATE TABLE runs (id INTEGER PRIMARY KEY, board_id BIGINT NOT NULL REFERENCES boards (id), collected_at TEXT NOT NULL, kernel_release TEXT, lever_version TEXT NOT NULL, document TEXT NOT NULL);
CREATE INDEX runs_by_board_time ON runs (board_id, collected_at);
CREATE INDEX runs_by_time ON runs (collected_at);
CREATE TABLE metrics (id INTEGER PRIMARY KEY, run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, section TEXT NOT NULL, name TEXT NOT NULL, unit TEXT NOT NULL, value DOUBLE PRECISION NOT NULL, labels TEXT NOT NULL, better TEXT);
CREATE INDEX metrics_by_name ON metrics (name, run_id);
CREATE INDEX metrics_by_run ON metrics (run_id);
CREATE TABLE samples (metric_id BIGINT NOT NULL REFERENCES metrics (id) ON DELETE CASCADE, seq BIGINT NOT NULL, value DOUBLE PRECISION NOT NULL, PRIMARY KEY (metric_id, seq));
PRAGMA foreign_keys = ON;
""")
start = time.perf_counter()
for i in range(n):
    doc = {"schema": 1, "collected_at": "2026-11-23T14:00:00Z", "lever_version": "", "device": {"board": f"board-{i%10}"},
           "sections": [{"name": "latency", "method": "lever latency", "status": {"state": "measured"},
                         "metrics": [{"name": "latency.max", "unit": "us", "value": float(i), "labels": {"cpu": str(cpu)}, "samples": [1.0, 2.0, 3.0, 4.0]} for cpu in range(3)]}]}
    c.execute("BEGIN IMMEDIATE")
    b = c.execute("INSERT INTO boards (name, soc, arch) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET soc = COALESCE(excluded.soc, boards.soc), arch = COALESCE(excluded.arch, boards.arch) RETURNING id", (f"board-{i%10}", None, None)).fetchone()[0]
    r = c.execute("INSERT INTO runs (board_id, collected_at, kernel_release, lever_version, document) VALUES (?, ?, ?, ?, ?) RETURNING id", (b, doc["collected_at"], None, "", json.dumps(doc))).fetchone()[0]
    for m in doc["sections"][0]["metrics"]:
        mid = c.execute("INSERT INTO metrics (run_id, section, name, unit, value, labels, better) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id", (r, "latency", m["name"], m["unit"], m["value"], json.dumps(m["labels"]), None)).fetchone()[0]
        for k, v in enumerate(m["samples"]):
            c.execute("INSERT INTO samples (metric_id, seq, value) VALUES (?, ?, ?)", (mid, k, v))
    c.execute("COMMIT")
secs = time.perf_counter() - start
print(f"{n} runs in {secs:.3f} s: {n/secs:.0f} runs/s (python sqlite3 {sqlite3.sqlite_version})")
