#!/usr/bin/env bash
# The workspace's tests for an ARM target, run under qemu-user:
#   scripts/cross-test.sh aarch64-unknown-linux-gnu [cargo test args...]
#   scripts/cross-test.sh armv7-unknown-linux-gnueabihf -p lever-protocol   # some crates
# Cross-builds every test in the `cross-test` profile (Cargo.toml: opt-level
# 1, no debug info; emulated code runs several times faster than at
# opt-level 0 and links faster), then runs the test executables under
# qemu-user (scripts/qemu-run.sh), LEVER_CROSS_JOBS (default 2) at a time,
# longest first, and the doc tests through cargo's runner. ARM programs the
# tests start themselves (the `lever` binary, the C samples built with the
# cross gcc) run through binfmt_misc (scripts/qemu-binfmt.sh). Tests that
# need what qemu-user does not emulate are skipped by name below, each with
# why (docs/install.md lists them). Prints each executable's time and the
# build's and the run's wall and CPU seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
target=${1:?usage: scripts/cross-test.sh TARGET [cargo test args...]}
shift
case $target in
aarch64-unknown-linux-gnu) cc=aarch64-linux-gnu-gcc ;;
armv7-unknown-linux-gnueabihf) cc=arm-linux-gnueabihf-gcc ;;
*) echo "cross-test.sh: $target is not an emulated ARM glibc target" >&2; exit 2 ;;
esac
for tool in "$cc" qemu-aarch64 qemu-arm python3; do
    command -v "$tool" >/dev/null || {
        echo "cross-test.sh: $tool missing: scripts/cross.sh --install $target" >&2
        exit 1
    }
done
grep -qx "$target" <<<"$(rustup target list --installed 2>/dev/null)" || rustup target add "$target"
scripts/qemu-binfmt.sh
profile=${LEVER_CROSS_PROFILE:-cross-test}
jobs=${LEVER_CROSS_JOBS:-2}
# A hung test must not hang CI: one executable gets this many seconds.
limit=${LEVER_CROSS_TIMEOUT:-1200}

# Tests that cannot pass under qemu-user, each with why; skipped by name
# (libtest's --skip) and listed at the end. Everything else runs.
skips=(
    # Time bounds of native tests take ten times as long under qemu
    # (crates/cli/tests/common/daemon.rs, `bound`); these cannot:
    "mem_thrash_on_sim_writes_series|sampling intervals of 100 ms; emulated, samples arrive late"
    # qemu-user does not implement perf_event_open (ENOSYS).
    "ipc_of_true_counts_or_says_why|qemu-user has no perf_event_open (ENOSYS)"
    "ipc_runs_the_command_and_passes_its_exit_status|qemu-user has no perf_event_open (ENOSYS)"
    # Measurements of the CPU or memory system, which emulation changes.
    "every_touch_of_lat_pagefault_is_one_fault|the page faults counted are qemu's, not the emulated touches (59 for 64)"
    "cpu_benchmarks_agree_with_the_c_references|Rust emulated against C references built and run natively: the ratio is qemu's (whetstone 0.08)"
    "a_pinned_stress_ng_run_is_flagged_on_every_test_it_slowed|qemu's translation cache speeds a test up from run to run (lat_ops-int-add 60 % faster beside stress-ng): the slowdown is hidden"
    # A program of the host's compiler linked against the target's library.
    "urm_cli_unchanged_against_lever|urmCli is compiled with the host's g++ against libUrmClient.so, which this run built for the target; the host suite runs it"
)
skip_args=()
for s in "${skips[@]}"; do skip_args+=(--skip "${s%%|*}"); done

# cpu_s VAR: the children's CPU seconds (user + system) so far into VAR.
# Bash's `times` must run in this shell, not in a $(...) subshell, which
# has no children of its own.
cpu_s() {
    local f=$logs/times.$BASHPID
    times >"$f"
    printf -v "$1" %s "$(sed -n 2p "$f" | awk '{
        t = 0
        for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); t += p[1] * 60 + p[2] }
        printf "%.0f", t }')"
}

# The capi tests build lever + liblever.so for this target and profile
# (crates/capi/tests/common) and compile the C samples with its gcc.
export LEVER_TEST_TARGET=$target LEVER_TEST_CC=$cc
# The whole workspace, unless packages are named (-p CRATE ...).
scope=(--workspace)
for a in "$@"; do case $a in -p | --package) scope=() ;; esac; done
logs=$(mktemp -d)
cleanup() {
    for f in "$logs"/*.pid; do [ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
    rm -rf "$logs"
}
trap cleanup EXIT

t0=$(date +%s)
cpu_s c0
# Every test executable: path, package directory (libtest runs there
# under cargo too), name.
cargo test --target "$target" --profile "$profile" "${scope[@]}" --no-run \
    --message-format=json-render-diagnostics "$@" |
    python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"], os.path.dirname(m["manifest_path"]), m["target"]["name"], sep="\t")
' >"$logs/list"
# What the capi tests would build on their first call, built now: no
# cargo runs while the executables share the target directory.
if grep -q "/crates/capi	" "$logs/list"; then
    cargo build --target "$target" --profile "$profile" -p lever -p lever-capi
fi
t1=$(date +%s)
cpu_s c1

# Executables that use the machine's tracefs or /dev/cpu_dma_latency and
# check that they leave it as they found it (no instance of anyone's left,
# the PM QoS target back) run one after another, in one job of the pool;
# the others run longest first (measured), so the last to end is short.
shared=" closed_stdout latency trace profile resolve capture dat_capture instance "
first="variants python bench c_sample consistency fuzz daemon lever_bench_daemon signal"
others() {
    for n in $first; do awk -F'\t' -v n="$n" '$3 == n' "$logs/list"; done
    awk -F'\t' -v f=" $first $shared " 'index(f, " " $3 " ") == 0' "$logs/list"
}
run_one() { # EXE DIR NAME: its output, exit status and times in $logs
    local log=$logs/$(basename "$1")
    local s0
    s0=$(date +%s)
    (
        cd "$2"
        rc=0
        # timeout runs in a process group of its own; its pid is kept so
        # an interrupted run can end it (and with it the test's children).
        timeout -k 10 "$limit" "$root/scripts/qemu-run.sh" "$1" "${skip_args[@]}" >"$log.out" 2>&1 &
        echo $! >"$log.pid"
        wait $! || rc=$?
        rm "$log.pid"
        cpu_s c
        echo "$rc $(($(date +%s) - s0)) $c $3" >"$log.sum"
    )
}
awk -F'\t' -v s="$shared" 'index(s, " " $3 " ")' "$logs/list" >"$logs/shared"
(while IFS=$'\t' read -r exe dir name; do run_one "$exe" "$dir" "$name"; done <"$logs/shared") &
running=1
while IFS=$'\t' read -r exe dir name; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
    run_one "$exe" "$dir" "$name" &
    running=$((running + 1))
done < <(others)
wait
status=0
echo "test executables under qemu (exit status, wall s, CPU s, name, result):"
for sum in "$logs"/*.sum; do
    out=${sum%.sum}.out
    read -r rc wall cpu name <"$sum"
    result=$(grep -h '^test result:' "$out" | tail -1 || true)
    printf '  %3s %5s %5s  %-22s %s\n' "$rc" "$wall" "$cpu" "$name" "${result#test result: }"
done | sort -k3,3nr
for sum in "$logs"/*.sum; do
    read -r rc _ _ name <"$sum"
    [ "$rc" = 0 ] && continue
    status=1
    echo "== $name failed (exit status $rc$([ "$rc" = 124 ] && echo ": timed out after $limit s")):"
    # libtest's failure report, or the end of the output where there is
    # none (a crash, a timeout).
    if grep -q '^failures:$' "${sum%.sum}.out"; then
        sed -n '/^failures:$/,$p' "${sum%.sum}.out" | sed -n 1,200p
    else
        tail -40 "${sum%.sum}.out"
    fi
done
t2=$(date +%s)
cpu_s c2
# Doc tests: cargo compiles each with rustdoc and runs it through the runner.
cargo test --target "$target" --profile "$profile" "${scope[@]}" --doc "$@" -- "${skip_args[@]}" ||
    status=1
t3=$(date +%s)
cpu_s c3
echo "skipped under qemu-user (docs/install.md):"
for s in "${skips[@]}"; do echo "  ${s%%|*}: ${s#*|}"; done
echo "cross-test.sh $target: build $((t1 - t0)) s (CPU $((c1 - c0)) s)," \
    "executables under qemu $((t2 - t1)) s (CPU $((c2 - c1)) s)," \
    "doc tests $((t3 - t2)) s (CPU $((c3 - c2)) s); load $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
