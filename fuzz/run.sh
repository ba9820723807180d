#!/usr/bin/env bash
# Run every fuzz target for SECS seconds each (default 300), two at a time,
# starting from the seed inputs kept in the repository.
#   cargo install cargo-fuzz   (once; needs a nightly toolchain)
#   fuzz/run.sh [SECS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(protocol_decode journal_parse target_yaml trace_line)
seeds() {
    case $1 in
        protocol_decode) echo fuzz/seeds/protocol_decode ;;
        journal_parse) echo fuzz/seeds/journal_parse ;;
        target_yaml) echo crates/targets/targets ;;
        trace_line) echo crates/trace/tests/fixtures ;;
    esac
}
mkdir -p fuzz/logs
run() {
    mkdir -p "fuzz/corpus/$1"
    cargo +nightly fuzz run "$1" "fuzz/corpus/$1" "$(seeds "$1")" -- \
        -max_total_time="$secs" -max_len=4096 -print_final_stats=1 > "fuzz/logs/$1.log" 2>&1
    echo "$1: $(grep -E '^stat::number_of_executed_units' "fuzz/logs/$1.log" | awk '{print $2}') runs, no crash"
}
cargo +nightly fuzz build
pids=()
for t in "${targets[@]}"; do
    run "$t" &
    pids+=($!)
    if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
wait
