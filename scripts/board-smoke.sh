#!/usr/bin/env bash
# The board's lever (scripts/cross.sh --board: `--no-default-features
# --features board`, the board profile) under qemu-aarch64, for what sets
# it apart from the host build (docs/install.md "Features"):
#   scripts/board-smoke.sh [BINARY]
# - `lever --version` names the board's features and no host extra;
# - the SQLite results store works: a run collected on a simulated board
#   stored, listed, shown, followed with trend, and rendered as Markdown;
# - every host extra asked of it (D-Bus, PostgreSQL, Parquet, the HTML
#   page, flame graphs) exits 4 naming its feature, and the subcommands
#   are still known (no "unrecognized subcommand").
# The daemon and its clients on the same binary: scripts/musl-smoke.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
target=aarch64-unknown-linux-musl
bin=${1:-target/$target/board/lever}
[ -x "$bin" ] || scripts/cross.sh --board "$target"
grep -q 'statically linked' <<<"$(file "$bin")" || { echo "board-smoke.sh: $bin is not static" >&2; exit 1; }
run() { qemu-aarch64 "$bin" "$@"; }
fail() { echo "board-smoke.sh: FAIL: $*" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

version=$(run --version)
echo "$version"
case $version in
*"features: board)") ;;
*) fail "--version does not name the board's features alone: $version" ;;
esac

run sim create qcs6490 "$dir/sim" >/dev/null
run --root "$dir/sim" report collect -o "$dir/run.json" --no-store >/dev/null
db=$dir/results.db
run results --db "$db" import "$dir/run.json" >/dev/null
grep -q qcs6490 <<<"$(run results --db "$db" list)" || fail "results list has no qcs6490 run"
run results --db "$db" show 1 >/dev/null || fail "results show 1"
metric=$(run --json results --db "$db" show 1 |
    sed -n 's/.*"name": *"\([^"]*\)".*/\1/p' | awk '/\./ && m == "" { m = $0 } END { print m }')
[ -n "$metric" ] || fail "the stored run has no metric"
grep -q qcs6490 <<<"$(run results --db "$db" trend "$metric")" || fail "results trend $metric"
run report render "$dir/run.json" --md "$dir/run.md" >/dev/null
[ -s "$dir/run.md" ] || fail "report render --md wrote nothing"
echo "SQLite store: run stored, listed, shown, trend of $metric; Markdown rendered"

# Each host extra: exit 4, naming its feature.
extra() {
    local feature=$1 rc=0
    shift
    run "$@" >/dev/null 2>"$dir/err" || rc=$?
    [ "$rc" = 4 ] || fail "lever $* exited $rc, not 4: $(cat "$dir/err")"
    grep -q "needs the \`$feature\` feature" "$dir/err" || fail "lever $*: $(cat "$dir/err")"
    echo "lever $*: exit 4, needs the \`$feature\` feature"
}
extra dbus daemon --dbus --sim qcs6490 --state-dir "$dir/state" --socket "$dir/lever.sock"
extra postgres results --db postgres://lab@db.invalid/results list
extra parquet results --db "$db" export --parquet "$dir/parquet"
extra html report render "$dir/run.json" --html "$dir/run.html"
extra flamegraph flamegraph -i "$dir/run.json" -o "$dir/flame.svg"
[ ! -e "$dir/run.html" ] && [ ! -e "$dir/parquet" ] && [ ! -e "$dir/flame.svg" ] ||
    fail "a refused extra left a file behind"
echo "board-smoke.sh: ok"
