#!/usr/bin/env bash
# Cross-build Lever for a board: scripts/cross.sh TARGET [cargo flags...]
#   scripts/cross.sh aarch64-unknown-linux-gnu --release    # lever + liblever.so
#   scripts/cross.sh aarch64-unknown-linux-musl --release   # one static lever
#   scripts/cross.sh --board aarch64-unknown-linux-musl      # the board's lever
# --board builds the board's `lever` alone: the board's features
# (`--no-default-features --features board`; add extras with `--features
# dbus,...`) in the `board` profile (LTO, panic=abort, stripped; root
# Cargo.toml), into target/TARGET/board/lever, and prints its size; with
# LEVER_BOARD_MAX_BYTES set, a larger binary fails (CI's limit).
# Targets: aarch64-unknown-linux-gnu, armv7-unknown-linux-gnueabihf,
# aarch64-unknown-linux-musl, x86_64-unknown-linux-musl. Linkers and C
# compilers are set in .cargo/config.toml; --install installs the rustup
# target and the Debian packages of every tool named there for TARGET
# (and qemu-user for ARM). CROSS_PRINT_PACKAGES=1 prints those packages
# and exits. Output: target/TARGET/{debug,release}/.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: scripts/cross.sh [--install] [--board] TARGET [cargo build flags...]" >&2; exit 2; }
install=false
board=false
while :; do
    case ${1:-} in
    --install) install=true; shift ;;
    --board) board=true; shift ;;
    *) break ;;
    esac
done
target=${1:-}; [ -n "$target" ] || usage; shift

# The C tools .cargo/config.toml names for the target: its linker and the
# CC_/AR_ the C code inside dependencies is built with (zstd-sys, the
# bundled sqlite), rust-lld aside (it ships with rustup's toolchain). One
# source: a tool added there is installed and checked here.
cargo_tools() {
    local t=$1 env=${1//-/_}
    awk -v sect="[target.$t]" -v env="$env" '
        /^\[/ { in_t = ($0 == sect); in_env = ($0 == "[env]"); next }
        in_t && $1 == "linker" { print }
        in_env && ($1 == "CC_" env || $1 == "AR_" env) { print }
    ' .cargo/config.toml | sed -E 's/^[^=]*= *"([^"]*)".*/\1/' | grep -vx rust-lld || true
}

# The Debian packages of a GNU cross tool: PREFIX-gcc is in gcc-PREFIX,
# with the target's C headers and libraries (libc6-dev-ARCH-cross, only a
# recommendation of gcc-PREFIX: not there under --no-install-recommends);
# PREFIX-ar (and the rest of binutils) is in binutils-PREFIX.
tool_package() {
    local arch
    case $1 in
    aarch64-linux-gnu-*) arch=arm64 ;;
    arm-linux-gnueabihf-*) arch=armhf ;;
    esac
    case $1 in
    *-gcc) echo "gcc-${1%-gcc}${arch:+ libc6-dev-$arch-cross}" ;;
    *-ar) echo "binutils-${1%-ar}" ;;
    *) echo "cross.sh: no Debian package known for $1 (named in .cargo/config.toml)" >&2; return 1 ;;
    esac
}

# qemu-user runs the ARM binaries (cargo's runner, the tests).
case $target in
aarch64-unknown-linux-gnu | armv7-unknown-linux-gnueabihf | aarch64-unknown-linux-musl)
    emulator="qemu-user qemu-user-binfmt" ;;
x86_64-unknown-linux-musl) emulator="" ;;
*) echo "cross.sh: unknown target $target" >&2; usage ;;
esac
tools=$(cargo_tools "$target")
pkgs=$emulator
for tool in $tools; do
    pkgs="$pkgs $(tool_package "$tool")"
done
if [ "${CROSS_PRINT_PACKAGES:-}" = 1 ]; then
    echo $pkgs
    exit 0
fi
if $install; then
    rustup target add "$target"
    if [ -n "${pkgs// /}" ]; then
        apt-get update -qq && apt-get install -y -qq $pkgs
    fi
fi
# Said before cargo starts, not as cc-rs's "failed to find tool" deep in
# a dependency's build.
for tool in $tools; do
    if ! command -v "$tool" >/dev/null; then
        echo "cross.sh: $tool (from .cargo/config.toml) is not installed;" \
            "scripts/cross.sh --install $target installs $(tool_package "$tool")" >&2
        exit 1
    fi
done

if $board; then
    # The binary alone: the board profile's panic=abort is not for the C
    # libraries, whose every entry point catches panics (their release
    # builds are the packages' as before). With panic=abort no unwinding
    # tables are needed for Lever's own code (a panic still prints its
    # message); rust-lld folds identical functions. The bundled SQLite is
    # built without what the results store never uses (full-text search,
    # R-trees, JSON functions, extensions, statistics tables).
    rustflags="-C force-unwind-tables=no"
    case $target in *-musl) rustflags="$rustflags -C link-arg=--icf=all" ;; esac
    env_target=$(echo "${target//-/_}" | tr a-z A-Z)
    export "CARGO_TARGET_${env_target}_RUSTFLAGS=$rustflags"
    # The C code inside dependencies (SQLite, zstd) without unwinding
    # tables either: nothing unwinds through it. Its CFLAGS_ from
    # .cargo/config.toml are kept (an environment variable wins there).
    cflags_var=CFLAGS_${target//-/_}
    cflags=$(awk -v key="$cflags_var" '/^\[/ { in_env = ($0 == "[env]"); next }
        in_env && $1 == key { sub(/^[^=]*= *"/, ""); sub(/".*$/, ""); print }' .cargo/config.toml)
    export "$cflags_var=${cflags:+$cflags }-fno-asynchronous-unwind-tables -fno-unwind-tables"
    export LIBSQLITE3_FLAGS="-USQLITE_ENABLE_FTS3 -USQLITE_ENABLE_FTS3_PARENTHESIS -USQLITE_ENABLE_FTS5
        -USQLITE_ENABLE_RTREE -USQLITE_ENABLE_DBSTAT_VTAB -USQLITE_ENABLE_STAT4 -USQLITE_SOUNDEX
        -USQLITE_ENABLE_JSON1 -DSQLITE_OMIT_JSON -USQLITE_ENABLE_LOAD_EXTENSION -DSQLITE_OMIT_LOAD_EXTENSION
        -DSQLITE_OMIT_DEPRECATED -DSQLITE_OMIT_SHARED_CACHE"
    cargo build --target "$target" -p lever --profile board \
        --no-default-features --features board "$@"
    bin=target/$target/board/lever
    bytes=$(stat -c %s "$bin")
    echo "board build: $bin, $bytes bytes stripped ($(awk -v b="$bytes" 'BEGIN { printf "%.2f", b / 1048576 }') MiB)"
    max=${LEVER_BOARD_MAX_BYTES:-}
    if [ -n "$max" ] && [ "$bytes" -gt "$max" ]; then
        echo "cross.sh: the board's lever is $bytes bytes, over the limit of $max" \
            "(LEVER_BOARD_MAX_BYTES; docs/install.md \"Size\" says what each part costs)" >&2
        exit 1
    fi
    exit 0
fi

# The static musl builds are one binary; the C library (a shared object)
# is built for the glibc targets, where boards load it with dlopen.
case $target in
*-musl) packages=(-p lever) ;;
*) packages=(-p lever -p lever-capi) ;;
esac
cargo build --target "$target" "${packages[@]}" "$@"
