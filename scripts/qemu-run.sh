#!/usr/bin/env bash
# Cargo's runner for the ARM targets (.cargo/config.toml): runs one ARM
# executable under qemu-user, e.g.
#   scripts/qemu-run.sh target/aarch64-unknown-linux-gnu/debug/lever --version
# The machine (aarch64 or arm) comes from the ELF header. QEMU_LD_PREFIX
# (the cross sysroot, for glibc builds) and LEVER_UNDER_QEMU are exported,
# so ARM programs the tests start (the `lever` binary, through binfmt_misc,
# see scripts/qemu-binfmt.sh) run the same way and tests that need what
# qemu-user does not emulate (ptrace, perf events, some netlink) can say
# why they skip.
set -euo pipefail
exe=$1
shift
# Byte 18 of an ELF header is e_machine's low byte: 0xb7 aarch64, 0x28 arm.
case $(od -An -tx1 -j18 -N1 "$exe" | tr -d ' ') in
b7) qemu=qemu-aarch64 sysroot=/usr/aarch64-linux-gnu ;;
28) qemu=qemu-arm sysroot=/usr/arm-linux-gnueabihf ;;
*) exec "$exe" "$@" ;; # a host binary (build scripts never come here)
esac
command -v "$qemu" >/dev/null || {
    echo "qemu-run.sh: $qemu not found (apt-get install qemu-user)" >&2
    exit 127
}
export QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-$sysroot}
export LEVER_UNDER_QEMU=$qemu
exec "$qemu" "$exe" "$@"
