#!/bin/sh
# The side-by-side sitting of docs/bench.md: each Lever test right after
# the tool that measures the same thing, load average printed before each
# pair. Needs sysbench, mbw, perf, stress-ng (apt: sysbench mbw
# linux-perf stress-ng).
#
#   crates/bench/reference/sitting.sh [path/to/lever]
set -u
lever=${1:-target/release/lever}
load() { echo "== $1 (load average $(cut -d' ' -f1-3 /proc/loadavg))"; }
lb() { "$lever" bench --only "$1" --repeat "${2:-20}" | grep -E "^$1 " ; }

load "null syscall"
perf bench syscall basic -l 2000000 2>&1 | grep usecs/op
lb lat_syscall-null
load "pipe round trip"
perf bench sched pipe -l 50000 2>&1 | grep usecs/op
perf bench sched pipe -T -l 50000 2>&1 | grep usecs/op
lb lat_pipe
load "context switch"
stress-ng --switch 1 -t 5 --metrics-brief 2>&1 | grep -E "switch +[0-9]"
lb lat_ctx-2-0k
load "fork"
stress-ng --fork 1 -t 5 --metrics-brief 2>&1 | grep -E "fork +[0-9]"
lb lat_proc-fork
load "memcpy 16 MiB"
perf bench mem memcpy -s 16MB -l 50 2>&1 | grep -E "B/sec"
mbw -n 10 -t0 16 | grep AVG
lb bw_mem-bcopy-16mb
load "memcpy 1 MiB"
perf bench mem memcpy -s 1MB -l 500 2>&1 | grep -E "B/sec"
lb bw_mem-bcopy-1mb
load "memset 16 MiB"
perf bench mem memset -s 16MB -l 50 2>&1 | grep -E "B/sec"
lb bw_mem-bzero-16mb
load "memory read 1 MiB blocks"
sysbench memory --memory-oper=read --memory-block-size=1M --memory-total-size=20G run | grep -E "MiB/sec"
lb bw_mem-frd-1mb
load "memory write 1 MiB blocks"
sysbench memory --memory-oper=write --memory-block-size=1M --memory-total-size=20G run | grep -E "MiB/sec"
lb bw_mem-fwr-1mb
load "page faults"
lb lat_pagefault
lb lat_pagefault-touch
load "no Lever counterpart"
sysbench cpu run | grep "events per second"
sysbench threads run | grep -E "avg:"
hackbench -p -g 2 -l 2000 2>&1 | grep Time
load "CPU benchmarks (C references: crates/bench/tests/reference.rs)"
"$lever" bench --only 'dhrystone,whetstone,linpack-n100,linpack-n500,nbench-*' --repeat 10 | grep -E "^(dhrystone|whetstone|linpack|nbench|DMIPS)"
