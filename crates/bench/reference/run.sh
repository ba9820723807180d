#!/bin/sh
# C references for `lever bench`'s CPU benchmarks, built here with gcc and
# run beside `lever bench --only 'dhrystone,whetstone,linpack-n100,linpack-n500'`.
#
#   crates/bench/reference/run.sh [path/to/lever]
#
# dhrystone.c, whetstone.c and linpack.c are Lever's own C versions of
# the published algorithms (same procedures and strings, same modules and
# loop counts, same matrix), so the comparison is compiler against
# compiler on identical work. The same comparison, interleaved and with
# stated bounds, is the test crates/bench/tests/reference.rs.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lever=${1:-"$here/../../../target/release/lever"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc=${CC:-gcc}
echo "compiler: $($cc --version | head -1); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for opt in -O2 -O3; do
    for b in dhrystone whetstone linpack; do
        $cc $opt -o "$work/$b" "$here/$b.c" -lm
    done
    echo "C $opt:"
    "$work/dhrystone" 20000000
    "$work/whetstone" 20000
    "$work/linpack"
done
echo "lever (same machine, same sitting):"
"$lever" bench --only 'dhrystone,whetstone,linpack-n100,linpack-n500' | grep -E "^(dhrystone|whetstone|linpack|DMIPS)"
