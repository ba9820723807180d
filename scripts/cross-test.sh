#!/usr/bin/env bash
# The workspace's tests for an ARM target, run under qemu-user:
#   scripts/cross-test.sh aarch64-unknown-linux-gnu [cargo test args...]
#   scripts/cross-test.sh armv7-unknown-linux-gnueabihf
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

# The capi tests build lever + liblever.so for this target and compile the
# C samples with its gcc (crates/capi/tests/common, c_sample.rs).
export LEVER_TEST_TARGET=$target LEVER_TEST_CC=$cc
t0=$(date +%s)
cargo test --target "$target" --workspace --no-run "$@"
t1=$(date +%s)
cargo test --target "$target" --workspace --no-fail-fast "$@"
t2=$(date +%s)
echo "cross-test.sh $target: build $((t1 - t0)) s, run under qemu $((t2 - t1)) s (load: $(cut -d' ' -f1-3 /proc/loadavg))"
