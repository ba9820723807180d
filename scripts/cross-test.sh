#!/usr/bin/env bash
# The workspace's tests for an ARM target, run under qemu-user:
#   scripts/cross-test.sh aarch64-unknown-linux-gnu [cargo test args...]
#   scripts/cross-test.sh armv7-unknown-linux-gnueabihf -p lever-protocol   # some crates
# Cross-builds every test (`cargo test --no-run`), then runs them through
# the runner of .cargo/config.toml (scripts/qemu-run.sh). ARM programs the
# tests start themselves (the `lever` binary, the C samples built with the
# cross gcc) run through binfmt_misc (scripts/qemu-binfmt.sh). Tests that
# need what qemu-user does not emulate see LEVER_UNDER_QEMU and say why
# they skip (docs/install.md lists them). Prints how long each step took.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/cross-test.sh TARGET [cargo test args...]}
shift
case $target in
aarch64-unknown-linux-gnu) cc=aarch64-linux-gnu-gcc ;;
armv7-unknown-linux-gnueabihf) cc=arm-linux-gnueabihf-gcc ;;
*) echo "cross-test.sh: $target is not an emulated ARM glibc target" >&2; exit 2 ;;
esac
for tool in "$cc" qemu-aarch64 qemu-arm; do
    command -v "$tool" >/dev/null || {
        echo "cross-test.sh: $tool missing: scripts/cross.sh --install $target" >&2
        exit 1
    }
done
rustup target list --installed 2>/dev/null | grep -qx "$target" || rustup target add "$target"
scripts/qemu-binfmt.sh

# Tests that cannot pass under qemu-user, each with why; skipped by name
# (libtest's --skip) and listed at the end. Everything else runs.
skips=(
    # Wall-clock bounds for a native board: emulation on a shared build
    # machine is 10-50x slower (measured 59 ms, 148 ms, 7 s against 50 ms,
    # 50 ms, 5 s).
    "sigkill_of_a_client_releases_its_requests_within_50ms|a 50 ms bound on the daemon's reaction; emulated, it is slower"
    "timed_request_reverts_within_50ms_under_200_live_timed_requests|a 50 ms bound on a lease's revert; emulated, it is slower"
    "silent_and_half_frame_connections_do_not_delay_others|per-ping time bound; emulated, it is slower"
    "a_status_larger_than_the_backlog_is_delivered|a time bound on a large STATUS; emulated, it is slower"
    "policy_other_runs_and_ctrl_c_ends_with_a_report|sends SIGINT after 700 ms, before the emulated lever has installed its handler"
    "mem_thrash_on_sim_writes_series|sampling intervals of 100 ms; emulated, samples arrive late"
    # The daemon's RSS bound: qemu's own memory (translated code) is in
    # the emulated process's VmRSS.
    "one_connection_flooding_status_neither_slows_others_nor_grows_the_daemon|VmRSS includes qemu's own translation cache"
    # qemu-user does not implement perf_event_open (ENOSYS).
    "ipc_of_true_counts_or_says_why|qemu-user has no perf_event_open (ENOSYS)"
    "ipc_runs_the_command_and_passes_its_exit_status|qemu-user has no perf_event_open (ENOSYS)"
    # qemu-user reports a failed execve in the child, not to the parent.
    "command_errors_name_the_program|qemu-user reports exec failures late: spawning a missing program succeeds"
)
skip_args=()
for s in "${skips[@]}"; do skip_args+=(--skip "${s%%|*}"); done

# The capi tests build lever + liblever.so for this target and compile the
# C samples with its gcc (crates/capi/tests/common, c_sample.rs).
export LEVER_TEST_TARGET=$target LEVER_TEST_CC=$cc
# The whole workspace, unless packages are named (-p CRATE ...).
scope=(--workspace)
for a in "$@"; do case $a in -p | --package) scope=() ;; esac; done
t0=$(date +%s)
cargo test --target "$target" "${scope[@]}" --no-run "$@"
t1=$(date +%s)
status=0
cargo test --target "$target" "${scope[@]}" --no-fail-fast "$@" -- "${skip_args[@]}" || status=$?
t2=$(date +%s)
echo "skipped under qemu-user (docs/install.md):"
for s in "${skips[@]}"; do echo "  ${s%%|*}: ${s#*|}"; done
echo "cross-test.sh $target: build $((t1 - t0)) s, run under qemu $((t2 - t1)) s (load: $(cut -d' ' -f1-3 /proc/loadavg))"
exit $status
