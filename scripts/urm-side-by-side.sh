#!/usr/bin/env bash
# URM's own daemon and `lever daemon --urm`, side by side, with one client
# binary (docs/urm.md, issue 28 item 4):
#   scripts/urm-side-by-side.sh [N]
# Builds URM's daemon (`urm`) and client library from URM_SRC with cmake,
# and crates/urm-capi/c/urm_bench.c once, linked against libUrmClient.so.1
# without an rpath: LD_LIBRARY_PATH chooses URM's library or Lever's. On a
# simulated qcs6490 (lever sim create) whose /etc/urm holds URM's
# configs/ (common), tests/Configs (custom) and test nodes, in a private
# mount namespace where /etc/urm, /sys, /proc/sys and /run are the
# board's (the machine's own tunables are never touched), it runs the
# client N times (default 500) against URM's daemon, then against Lever's
# daemon from the same directory: tuneResources of URM's TEST_RESOURCE_3
# (ResType 0xff, ResID 2, /etc/urm/tests/nodes/scaling_min_freq.txt) →
# node written → reply, and untune → node restored, p50 and p99 in µs.
# Then `lever bench-daemon --clients 1` in the same run, closed loop and
# paced like urm_bench: its acquire row and the echo floor (a bare epoll
# echo loop, the machine's floor for one request and reply). Prints
# Markdown tables.
#
# URM_SRC   URM's source tree (default ../shared/third-party/userspace-resource-manager)
# WORK      build and run directory (default a fresh one under /dev/shm)
# LEVER     the lever binary, LIBURM Lever's libUrmClient.so (both given:
#           nothing is built on Lever's side)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
n=${1:-500}
src=${URM_SRC:-$repo/../shared/third-party/userspace-resource-manager}
fail() { echo "urm-side-by-side.sh: FAIL: $*" >&2; exit 1; }
[ -f "$src/urm.cpp" ] || fail "no URM source tree at $src (set URM_SRC)"
for tool in cmake g++ pkg-config unshare; do
    command -v $tool >/dev/null || fail "$tool is not installed"
done
[ "$(id -u)" = 0 ] || fail "URM's daemon runs as root (it writes its nodes and /run/restune_sock); run as root"
# On tmpfs when there is one (as lever bench-daemon puts its board), so
# the figures measure the daemons rather than the disk.
tmp=/tmp; [ -d /dev/shm ] && tmp=/dev/shm
work=${WORK:-$(mktemp -d $tmp/lever-urm-sbs.XXXXXX)}
mkdir -p "$work"
[ -n "${WORK:-}" ] || trap 'rm -rf "$work"' EXIT
if [ -z "${LEVER:-}" ] || [ -z "${LIBURM:-}" ]; then
    cargo build -q -p lever -p lever-urm-capi
fi
lever=${LEVER:-$repo/target/debug/lever}
liburm=${LIBURM:-$repo/target/debug/libUrmClient.so}

s=$SECONDS
if [ ! -x "$work/urm-build/urm" ]; then
    cmake -S "$src" -B "$work/urm-build" -DBUILD_TESTS=OFF -DBUILD_CLASSIFIER=OFF \
        -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 || { tail -20 "$work/cmake.log"; fail "cmake"; }
    make -C "$work/urm-build" -j2 urm UrmClient >"$work/make.log" 2>&1 || { tail -20 "$work/make.log"; fail "make urm UrmClient"; }
fi
mkdir -p "$work/lib-urm" "$work/lib-lever"
cp "$work/urm-build/client/libUrmClient.so.1.0.0" "$work/lib-urm/libUrmClient.so.1"
cp "$work/urm-build/modula/libUrmAuxUtils.so.1.0.0" "$work/lib-urm/libUrmAuxUtils.so.1"
cp "$liburm" "$work/lib-lever/libUrmClient.so.1"
ln -sf libUrmClient.so.1 "$work/lib-lever/libUrmClient.so"
gcc -O2 -o "$work/urm_bench" crates/urm-capi/c/urm_bench.c -Icrates/urm-capi/include/Urm \
    -L"$work/lib-lever" -lUrmClient
echo "built URM's daemon and client library, and urm_bench, in $((SECONDS - s)) s"

root=$work/root
rm -rf "$root" "$work/state" "$work/etc" "$work/lever.sock"
[ ! -d "$work/realetc" ] || rmdir "$work/realetc"
"$lever" sim create qcs6490 "$root" >/dev/null
mkdir -p "$root/etc/urm/tests/nodes" "$root/etc/urm/common" "$root/etc/urm/custom" "$root/run"
cp "$src"/tests/Configs/ResourceSysFsNodes/*.txt "$root/etc/urm/tests/nodes/"
cp "$src"/configs/*.yaml "$root/etc/urm/common/"
for f in ResourcesConfig SignalsConfig InitConfig PropertiesConfig; do
    cp "$src/tests/Configs/$f.yaml" "$root/etc/urm/custom/"
done
node=/etc/urm/tests/nodes/scaling_min_freq.txt

cat >"$work/inner.sh" <<'EOF'
set -euo pipefail
work=$1 lever=$2 n=$3 node=$4
root=$work/root
mkdir -p "$work/realetc" "$work/etc"
mount --bind /etc "$work/realetc"
for e in /etc/* /etc/.[!.]*; do
    [ -e "$e" ] || [ -L "$e" ] || continue
    ln -s "$work/realetc/${e#/etc/}" "$work/etc/${e#/etc/}"
done
ln -s "$root/etc/urm" "$work/etc/urm"
mount --bind "$work/etc" /etc
mount --bind "$root/sys" /sys
mount --bind "$root/proc/sys" /proc/sys
mount --bind "$root/run" /run
bench() { LD_LIBRARY_PATH=$1 "$work/urm_bench" "$node" 0x00ff0002 "$n"; }

# URM's daemon (its socket is /run/restune_sock).
"$work/urm-build/urm" >"$work/urm.log" 2>&1 &
urm=$!
for _ in $(seq 200); do [ -S /run/restune_sock ] && break; sleep 0.05; done
[ -S /run/restune_sock ] || { cat "$work/urm.log"; echo "URM's daemon did not start" >&2; exit 1; }
bench "$work/lib-urm" >"$work/urm.txt"
# URM's daemon does not always exit on SIGTERM: a second later, SIGKILL.
kill "$urm"; sleep 1; kill -KILL "$urm" 2>/dev/null || true; wait "$urm" || true

# Lever's, from the same directory.
"$lever" daemon --root "$root" --urm "$root/etc/urm" --socket "$work/lever.sock" \
    --state-dir "$work/state" --no-apps --quiet 2>"$work/lever.log" &
lv=$!
for _ in $(seq 200); do [ -S "$work/lever.sock" ] && break; sleep 0.05; done
[ -S "$work/lever.sock" ] || { cat "$work/lever.log"; echo "lever daemon did not start" >&2; exit 1; }
LEVER_SOCKET=$work/lever.sock bench "$work/lib-lever" >"$work/lever.txt"
kill "$lv"; wait "$lv" || true
EOF
unshare -m --propagation private bash "$work/inner.sh" "$work" "$lever" "$n" "$node" ||
    fail "the namespace run failed (logs in $work)"
# Closed loop (the next request as soon as the reply is in), and paced
# one every 30 ms as urm_bench's rounds are: a paced request also pays
# for waking the idle daemon and client.
"$lever" bench-daemon --clients 1 --operations 4000 --idle-secs 0 >"$work/floor.txt"
"$lever" bench-daemon --clients 1 --operations 500 --interval-us 30ms --idle-secs 0 >"$work/paced.txt"

cell() { awk -v m="$2" '$1 == m { printf "%s | %s", $3, $4 }' "$1"; }
row() { awk -v w="$1" '$1 == w && $2 == 1 { printf "%s | %s", $4, $6 }' "$2"; }
echo
echo "| daemon (client: urm_bench, $n rounds, one client) | tune → reply p50 µs | p99 µs | tune → node written p50 µs | p99 µs | untune → node restored p50 µs | p99 µs |"
echo "|---|---|---|---|---|---|---|"
echo "| URM's \`urm\` ($(cd "$src" && git log -1 --format=%h 2>/dev/null || echo "tree")) | $(cell "$work/urm.txt" tune_reply) | $(cell "$work/urm.txt" tune_written) | $(cell "$work/urm.txt" untune_restored) |"
echo "| \`lever daemon --urm\` | $(cell "$work/lever.txt" tune_reply) | $(cell "$work/lever.txt" tune_written) | $(cell "$work/lever.txt" untune_restored) |"
echo
echo "| \`lever bench-daemon --clients 1\`, same run | closed loop p50 µs | p99 µs | one every 30 ms p50 µs | p99 µs |"
echo "|---|---|---|---|---|"
echo "| acquire (call → node written and read back → reply) | $(row acquire "$work/floor.txt") | $(row acquire "$work/paced.txt") |"
echo "| echo floor (bare epoll echo loop, 32-byte messages) | $(row floor "$work/floor.txt") | $(row floor "$work/paced.txt") |"
