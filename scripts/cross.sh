#!/usr/bin/env bash
# Cross-build Lever for a board: scripts/cross.sh TARGET [cargo flags...]
#   scripts/cross.sh aarch64-unknown-linux-gnu --release    # lever + liblever.so
#   scripts/cross.sh aarch64-unknown-linux-musl --release   # one static lever
# Targets: aarch64-unknown-linux-gnu, armv7-unknown-linux-gnueabihf,
# aarch64-unknown-linux-musl, x86_64-unknown-linux-musl. Linkers are set in
# .cargo/config.toml; what to install is in docs/install.md (and below,
# with --install). Output: target/TARGET/{debug,release}/.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/cross.sh [--install] TARGET [cargo build flags...]" >&2; exit 2; }
install=false
if [ "${1:-}" = --install ]; then install=true; shift; fi
target=${1:-}; [ -n "$target" ] || usage; shift

# The Debian packages each target needs (linker, emulator).
case $target in
aarch64-unknown-linux-gnu) pkgs="gcc-aarch64-linux-gnu qemu-user qemu-user-binfmt" ;;
armv7-unknown-linux-gnueabihf) pkgs="gcc-arm-linux-gnueabihf qemu-user qemu-user-binfmt" ;;
aarch64-unknown-linux-musl) pkgs="qemu-user qemu-user-binfmt" ;;
x86_64-unknown-linux-musl) pkgs="" ;;
*) echo "cross.sh: unknown target $target" >&2; usage ;;
esac
if $install; then
    rustup target add "$target"
    if [ -n "$pkgs" ]; then
        apt-get update -qq && apt-get install -y -qq $pkgs
    fi
fi

# The static musl builds are one binary; the C library (a shared object)
# is built for the glibc targets, where boards load it with dlopen.
case $target in
*-musl) packages=(-p lever) ;;
*) packages=(-p lever -p lever-capi) ;;
esac
cargo build --target "$target" "${packages[@]}" "$@"
