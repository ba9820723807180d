#!/bin/sh
# C references for `lever bench`'s CPU benchmarks, built here with gcc -O2
# and run beside `lever bench --only 'whetstone,linpack*,dhrystone'`.
#
#   crates/bench/reference/run.sh [path/to/lever]
#
# linpack.c and whetstone.c are Lever's own C versions of the same
# published algorithms (same matrix, same modules and loop counts), so
# the comparison is compiler against compiler on identical work.
# Dhrystone 2.1's original C source is not redistributable here: the
# script fetches it (DHRY_URL, a shar of dhry.h/dhry_1.c/dhry_2.c) when
# the network allows and skips it with a message otherwise.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lever=${1:-"$here/../../../target/release/lever"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc=${CC:-gcc}
echo "compiler: $($cc --version | head -1), flags: -O2"
$cc -O2 -o "$work/linpack" "$here/linpack.c" -lm
$cc -O2 -o "$work/whetstone" "$here/whetstone.c" -lm
"$work/linpack"
"$work/whetstone"
DHRY_URL=${DHRY_URL:-https://www.netlib.org/benchmark/dhry-c}
if curl -fsSL --max-time 20 -o "$work/dhry.shar" "$DHRY_URL" 2>/dev/null; then
    (cd "$work" && sh dhry.shar >/dev/null 2>&1 &&
        $cc -O2 -DTIME -o dhry dhry_1.c dhry_2.c 2>/dev/null &&
        printf '50000000\n' | ./dhry | grep -iE "Dhrystones per Second|Microseconds")
else
    echo "dhrystone: C source not reachable at $DHRY_URL (no network?); not compared"
fi
echo "lever (same machine, same sitting):"
"$lever" bench --only 'dhrystone,whetstone,linpack-n100,linpack-n500' | grep -E "^(dhrystone|whetstone|linpack)"
