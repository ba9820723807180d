#!/usr/bin/env bash
# The static musl aarch64 binary, the one file copied to a board, on a
# simulated board under qemu-aarch64:
#   scripts/musl-smoke.sh [BINARY] [--release]
# lever --version; lever sim create qcs6490 SIM && lever --root SIM
# resources; lever daemon --sim qcs6490 with a client (the same binary)
# acquiring the seed's perflock 0x44008100=1958400 (Silver cluster min
# frequency) and the node holding it; lever status; then the
# lever-syscalls tests built for musl (sched_setscheduler is a stub there).
set -euo pipefail
cd "$(dirname "$0")/.."
target=aarch64-unknown-linux-musl
bin=${1:-}
if [ -z "$bin" ] || [ "$bin" = --release ]; then
    scripts/cross.sh "$target" ${bin:+--release}
    bin=target/$target/$([ "$bin" = --release ] && echo release || echo debug)/lever
fi
grep -q 'statically linked' <<<"$(file "$bin")" || { echo "musl-smoke.sh: $bin is not static" >&2; exit 1; }
run() { qemu-aarch64 "$bin" "$@"; }
fail() { echo "musl-smoke.sh: FAIL: $*" >&2; exit 1; }
dir=$(mktemp -d)
daemon=
cleanup() {
    [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT

run --version
run sim create qcs6490 "$dir/sim" >/dev/null
grep -q '0x44008100' <<<"$(run --root "$dir/sim" resources)" || fail "resources lists no 0x44008100"
echo "lever --root SIM resources: $(run --root "$dir/sim" resources | wc -l) lines"

export LEVER_SOCKET=$dir/lever.sock
# qemu itself in the background (not through `run`), so $! is the daemon.
qemu-aarch64 "$bin" daemon --sim qcs6490 --state-dir "$dir/state" --socket "$LEVER_SOCKET" \
    >/dev/null 2>"$dir/daemon.log" &
daemon=$!
for _ in $(seq 200); do [ -S "$LEVER_SOCKET" ] && break; sleep 0.1; done
[ -S "$LEVER_SOCKET" ] || fail "the daemon did not start: $(cat "$dir/daemon.log")"
node=$dir/state/sim/sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq
before=$(cat "$node")
run acquire -d 30s --detach 0x44008100=1958400
[ "$(cat "$node")" = 1958400 ] || fail "scaling_min_freq is $(cat "$node"), not 1958400"
grep -q 1958400 <<<"$(run status --json)" || fail "status does not show the lock"
echo "daemon + client under qemu-aarch64: scaling_min_freq $before -> $(cat "$node") while held"
kill "$daemon"
wait "$daemon" 2>/dev/null || true
daemon=
[ "$(cat "$node")" = "$before" ] || fail "not restored after the daemon stopped: $(cat "$node")"
echo "restored to $before when the daemon stopped"

echo "== lever-syscalls tests for $target"
LEVER_UNDER_QEMU=qemu-aarch64 cargo test -q -p lever-syscalls --target "$target"
