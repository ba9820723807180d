#!/usr/bin/env bash
# Lets the kernel run ARM executables through qemu-user (binfmt_misc), as
# the tests need: a test binary under qemu starts `lever`, another ARM
# executable, and qemu-user cannot follow an execve by itself. Registers
# only qemu-aarch64 and qemu-arm, from Debian's qemu-user-binfmt entries,
# and only if they are not registered yet. Needs root; in a container
# binfmt_misc must be mountable (a privileged one). Exits 1, saying why,
# when it cannot be done.
set -euo pipefail
dir=/proc/sys/fs/binfmt_misc
if [ ! -e "$dir/register" ]; then
    mount -t binfmt_misc binfmt_misc "$dir" 2>/dev/null || {
        echo "qemu-binfmt.sh: cannot mount binfmt_misc at $dir (not root, or an unprivileged container)" >&2
        exit 1
    }
fi
for m in aarch64 arm; do
    [ -e "$dir/qemu-$m" ] && continue
    conf=/usr/lib/binfmt.d/qemu-$m.conf
    [ -r "$conf" ] || {
        echo "qemu-binfmt.sh: $conf missing (apt-get install qemu-user-binfmt)" >&2
        exit 1
    }
    cat "$conf" >"$dir/register"
done
