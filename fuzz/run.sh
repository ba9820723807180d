#!/usr/bin/env bash
# Run every fuzz target for SECS seconds each (default 300), two at a time,
# starting from the seed inputs kept in the repository.
#   cargo install cargo-fuzz   (once; needs a nightly toolchain)
#   fuzz/run.sh [SECS] [TARGET...]
# Exits non-zero, naming the target, when a target crashes (its reproducer
# is under fuzz/artifacts/TARGET/, its log in fuzz/logs/TARGET.log), and
# when cargo-fuzz or the nightly toolchain is missing: a fuzz run that did
# not happen must not read as one that found nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(protocol_decode journal_parse target_yaml trace_line trace_dat trace_dat_analyze dt_parse ctf_decode)
seeds() {
    case $1 in
        protocol_decode) echo fuzz/seeds/protocol_decode ;;
        journal_parse) echo fuzz/seeds/journal_parse ;;
        target_yaml) echo crates/targets/targets ;;
        trace_line) echo crates/trace/tests/fixtures ;;
        trace_dat) echo fuzz/seeds/trace_dat ;;
        # Edits of the embedded seed capture: an empty input is the capture.
        trace_dat_analyze) echo fuzz/seeds/trace_dat_analyze ;;
        dt_parse) echo fuzz/seeds/dt_parse ;;
        ctf_decode) echo fuzz/seeds/ctf_decode ;;
        *) return 1 ;;
    esac
}
# The fuzz crate's feature that brings a target's crate (fuzz/Cargo.toml).
feature() {
    case $1 in
        protocol_decode) echo protocol ;;
        journal_parse) echo journal ;;
        target_yaml) echo targets ;;
        trace_line) echo trace ;;
        trace_dat) echo trace-dat ;;
        trace_dat_analyze) echo analysis ;;
        dt_parse) echo dt ;;
        ctf_decode) echo ctf ;;
    esac
}
fail() {
    echo "fuzz/run.sh: $*" >&2
    exit 1
}
for t in "${targets[@]}"; do
    seeds "$t" >/dev/null || fail "unknown target $t"
done
cargo +nightly --version >/dev/null 2>&1 ||
    fail "no nightly toolchain (rustup toolchain install nightly --profile minimal)"
cargo +nightly fuzz --version >/dev/null 2>&1 ||
    fail "cargo-fuzz is missing (cargo install cargo-fuzz)"
mkdir -p fuzz/logs
for t in "${targets[@]}"; do
    cargo +nightly fuzz build --no-default-features --features "$(feature "$t")" "$t" >>fuzz/logs/build.log 2>&1 ||
        fail "$t: cargo fuzz build failed; see fuzz/logs/build.log"
done
# A trace.dat seed needs its formats and a few pages to reach the decoder.
max_len() {
    case $1 in
        trace_dat) echo 131072 ;;
        dt_parse) echo 16384 ;;
        *) echo 4096 ;;
    esac
}
# trace_dat_analyze: an allocation over 512 MB (sized by a damaged
# field) is a crash, and so is an input that takes over 10 s.
extra() {
    case $1 in
        trace_dat_analyze) echo "-malloc_limit_mb=512 -timeout=10" ;;
        *) echo "" ;;
    esac
}
run() {
    mkdir -p "fuzz/corpus/$1"
    if ! cargo +nightly fuzz run --no-default-features --features "$(feature "$1")" "$1" "fuzz/corpus/$1" "$(seeds "$1")" -- \
        -max_total_time="$secs" -max_len="$(max_len "$1")" $(extra "$1") -print_final_stats=1 >"fuzz/logs/$1.log" 2>&1; then
        echo "$1: FAILED (crash or error; see fuzz/logs/$1.log and fuzz/artifacts/$1/)" >&2
        return 1
    fi
    echo "$1: $(grep -E '^stat::number_of_executed_units' "fuzz/logs/$1.log" | awk '{print $2}') runs, no crash"
}
# Two at a time; each target's exit status is collected by name.
declare -A pid_of=()
failed=()
reap() {
    local t=$1
    wait "${pid_of[$t]}" || failed+=("$t")
    unset "pid_of[$t]"
}
running=()
for t in "${targets[@]}"; do
    run "$t" &
    pid_of[$t]=$!
    running+=("$t")
    if [ ${#running[@]} -ge 2 ]; then
        reap "${running[0]}"
        running=("${running[@]:1}")
    fi
done
for t in "${running[@]}"; do reap "$t"; done
[ ${#failed[@]} -eq 0 ] || fail "target(s) failed: ${failed[*]}"
