import subprocess, resource, json, re
import os
# Side by side with cyclictest: same flags, one after the other, 5 runs each.
L = os.environ.get("LEVER", "target/release/lever")
flags="-m -t 2 -a 0-1 -p 90 -i 1000 -l 5000 -h 400 -q".split()
def run(cmd):
    r0=resource.getrusage(resource.RUSAGE_CHILDREN)
    out=subprocess.run(cmd,capture_output=True,text=True).stdout
    r1=resource.getrusage(resource.RUSAGE_CHILDREN)
    return out,(r1.ru_utime-r0.ru_utime+r1.ru_stime-r0.ru_stime)*1000
for i in range(5):
    out,cpu=run(["cyclictest"]+flags+["--json=/tmp/g-ct.json"])
    d=json.load(open("/tmp/g-ct.json"))
    t=d["thread"]
    print("cyclictest run",i+1,"min",[t[k]["min"] for k in "01"],"avg",[t[k]["avg"] for k in "01"],"max",[t[k]["max"] for k in "01"],"process CPU ms %.0f"%cpu, flush=True)
    out,cpu=run([L,"latency"]+flags+["--json"])
    d=json.loads(out)["threads"]
    print("lever      run",i+1,"min",[x["min_us"] for x in d],"avg",[round(x["avg_us"],2) for x in d],"max",[x["max_us"] for x in d],"process CPU ms %.0f"%cpu,"thread CPU ms",[round(x["cpu_time_ms"],1) for x in d], flush=True)
