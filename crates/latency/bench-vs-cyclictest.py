#!/usr/bin/env python3
"""Side by side with cyclictest: the same flags, one after the other, N runs
each (cyclictest, lever, cyclictest, lever, ...), as root.

Per run it prints each thread's min/avg/max (µs, from cyclictest's --json
file and lever's --json report) and the CPU time of the *measuring threads*,
taken the same way for both tools: /proc/PID/task/TID/schedstat (ns on CPU)
of every thread with a real-time policy, polled every 10 ms while the tool
runs (the last reading before the thread exits; a 5 s run loses < 0.2 %).
It ends with the medians and the load average before and after, and a
Markdown table for docs/latency.md with --markdown.

    sudo python3 crates/latency/bench-vs-cyclictest.py [--runs 5] [--lever target/release/lever]
        [--flags "-m -t 2 -a 0-1 -p 90 -i 1000 -l 5000 -h 400 -q"] [--markdown]
"""
import argparse, json, os, statistics, subprocess, tempfile, time


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def rt_thread_cpu_ns(pid, seen):
    """Update seen[tid] with the CPU ns of pid's real-time threads."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                on_cpu_ns = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        # Fields after "(comm)": state is field 3; policy is field 41.
        fields = stat[stat.rindex(")") + 2:].split()
        policy = int(fields[41 - 3])
        if policy in (1, 2):  # SCHED_FIFO, SCHED_RR: a measuring thread
            seen[tid] = max(seen.get(tid, 0), on_cpu_ns)


def run(cmd):
    seen = {}
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while p.poll() is None:
        rt_thread_cpu_ns(p.pid, seen)
        time.sleep(0.01)
    out, err = p.communicate()
    if p.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({p.returncode}): {err.strip()}")
    return out, sorted(v / 1e6 for v in seen.values())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lever", default=os.environ.get("LEVER", "target/release/lever"))
    ap.add_argument("--flags", default="-m -t 2 -a 0-1 -p 90 -i 1000 -l 5000 -h 400 -q")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    flags = a.flags.split()
    rows = []
    before = loadavg()
    with tempfile.TemporaryDirectory() as tmp:
        ct_json = os.path.join(tmp, "ct.json")
        for i in range(1, a.runs + 1):
            _, cpu = run(["cyclictest"] + flags + [f"--json={ct_json}"])
            with open(ct_json) as f:
                t = json.load(f)["thread"]
            ths = [t[k] for k in sorted(t, key=int)]
            rows.append(("cyclictest", i, [x["min"] for x in ths], [x["avg"] for x in ths],
                         [x["max"] for x in ths], cpu))
            out, cpu = run([a.lever, "latency"] + flags + ["--json"])
            ths = json.loads(out)["threads"]
            rows.append(("lever", i, [x["min_us"] for x in ths], [round(x["avg_us"], 2) for x in ths],
                         [x["max_us"] for x in ths], cpu))
            for r in rows[-2:]:
                print(f"{r[0]:10} run {r[1]}: min {r[2]} avg {r[3]} max {r[4]} "
                      f"measuring-thread CPU ms {[round(c, 1) for c in r[5]]}", flush=True)
    after = loadavg()
    print(f"\nflags: {a.flags}\nload average before: {before}; after: {after}")
    for tool in ("cyclictest", "lever"):
        rs = [r for r in rows if r[0] == tool]
        med = lambda f: statistics.median(v for r in rs for v in f(r))
        print(f"{tool:10} median over runs and threads: min {med(lambda r: r[2])} "
              f"avg {med(lambda r: r[3]):.2f} max {med(lambda r: r[4])} "
              f"measuring-thread CPU ms {med(lambda r: r[5]):.1f}")
    if a.markdown:
        print("\n| run | tool | min µs | avg µs | max µs | measuring-thread CPU ms |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            j = lambda v: ", ".join(str(round(x, 1) if isinstance(x, float) else x) for x in v)
            print(f"| {r[1]} | {r[0]} | {j(r[2])} | {j(r[3])} | {j(r[4])} | {j(r[5])} |")


main()
