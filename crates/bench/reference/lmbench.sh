#!/bin/sh
# LMBench's own bw_mem and lat_mem_rd, built from its source, beside
# `lever bench`'s tests of the same name, each pair back to back, the load
# average before each (docs/bench.md, "LMBench side by side").
#
#   crates/bench/reference/lmbench.sh LMBENCH_SOURCE_DIR [path/to/lever [PARTS]]
#
# PARTS: any of bw1 (bw_mem at 1 MiB), bw16 (at 16 MiB), lat (lat_mem_rd),
# proc (lat_proc fork, exec, shell), comma-separated; default all four
# (about 25 minutes).
#
# LMBENCH_SOURCE_DIR is a checkout of LMBench 3 (github intel/lmbench; it
# is not packaged by Debian). Only its src/ is used: bw_mem and lat_mem_rd
# are compiled with gcc -O2 into a temporary directory (libtirpc-dev for
# the rpc header its bench.h includes). Prints one line per pair:
#   test  lmbench  lever  lever/lmbench
# MB/s for bw_mem (LMBench's MB: 2^20 bytes), ns per load for lat_mem_rd
# (stride 128, `-t`: the shuffled order Lever's test uses).
set -eu
src=${1:?usage: lmbench.sh LMBENCH_SOURCE_DIR [lever]}/src
lever=${2:-target/release/lever}
parts=${3:-bw1,bw16,lat,proc}
want() { case ",$parts," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
[ -f "$src/bw_mem.c" ] || { echo "lmbench.sh: no LMBench source at $src" >&2; exit 2; }
[ -f /usr/include/tirpc/rpc/rpc.h ] || { echo "lmbench.sh: needs libtirpc-dev (apt-get install libtirpc-dev)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for p in bw_mem lat_mem_rd lat_proc; do
    (cd "$src" && gcc -O2 -w -I/usr/include/tirpc -DHAVE_socklen_t -DHAVE_DRAND48 \
        -o "$work/$p" "$p.c" lib_timing.c lib_mem.c lib_stats.c lib_debug.c \
        lib_sched.c getopt.c lib_tcp.c lib_udp.c lib_unix.c -lm -ltirpc)
done
load() { cut -d' ' -f1 /proc/loadavg; }
# lever's median for one test, in its unit.
lever_median() {
    "$lever" --json bench --only "$1" --repeat "${2:-11}" |
        python3 -c 'import json,sys; t=json.load(sys.stdin)["tests"]; print(t[0]["summary"]["median"])'
}
row() { # NAME LMBENCH LEVER
    python3 -c 'import sys; n,a,b=sys.argv[1],float(sys.argv[2]),float(sys.argv[3]); print(f"{n:28} {a:10.2f} {b:10.2f} {b/a:6.2f}   load {sys.argv[4]}")' "$@"
}
echo "test                            lmbench      lever  ratio"
for mb in 1 16; do
    want "bw$mb" || continue
    for k in rd wr rdwr cp fcp frd fwr bzero bcopy; do
        l=$(load)
        a=$("$work/bw_mem" -N 11 "${mb}m" "$k" 2>&1 | awk '{print $2}')
        b=$(lever_median "bw_mem-$k-${mb}mb")
        row "bw_mem-$k-${mb}mb" "$a" "$b" "$l"
    done
done
if want proc; then
    # lat_proc execs /tmp/hello (its PROG): LMBench's hello.c, which
    # includes bench.h only for its headers, built on its own.
    [ -e /tmp/hello ] && { echo "lmbench.sh: /tmp/hello exists; remove it first" >&2; exit 2; }
    printf '#include <unistd.h>\nint main(void) { write(1, "Hello world\\n", 12); return 0; }\n' >"$work/hello.c"
    gcc -O2 -o /tmp/hello "$work/hello.c"
    trap 'rm -rf "$work" /tmp/hello' EXIT
    for k in fork exec shell; do
        l=$(load)
        # "Process fork+exit: 272.6681 microseconds"
        a=$("$work/lat_proc" "$k" 2>&1 >/dev/null | awk '/microseconds/ { print $(NF - 1) }')
        b=$(lever_median "lat_proc-$k")
        row "lat_proc-$k" "$a" "$b" "$l"
    done
fi
want lat || exit 0
# lat_mem_rd: LMBench prints "size_MB ns" pairs for one sweep up to the
# given size; the sizes Lever names are taken from that sweep.
l=$(load)
"$work/lat_mem_rd" -t -N 5 64 128 2>&1 | awk 'NF == 2 && $1 + 0 > 0 { print $1, $2 }' >"$work/lat"
for kb in 16 32 64 256 1024 1536 2048 3072 4096 8192 16384 32768; do
    a=$(awk -v mb="$(echo "$kb / 1024" | bc -l)" '
        { d = $1 - mb; if (d < 0) d = -d; if (best == "" || d < bd) { bd = d; best = $2 } }
        END { print best }' "$work/lat")
    b=$(lever_median "lat_mem_rd-stride128-sz${kb}k" 5)
    row "lat_mem_rd-stride128-sz${kb}k" "$a" "$b" "$l"
done
echo "lat_mem_rd levels as lever names them (--only 'lat_mem_rd-*'):"
"$lever" --json bench --only 'lat_mem_rd-*' --repeat 5 |
    python3 -c 'import json,sys
d=json.load(sys.stdin)
for p in d.get("plateaus", []):
    print("  %-5s %s-%s KiB  %.1f ns  cache %s KiB" % (p["level"], p["from_kb"], p["to_kb"], p["latency_ns"], p.get("cache_kb")))'
