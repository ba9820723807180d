#!/usr/bin/env bash
# Installs Lever into a staging directory, the one list of files every
# package shares (packaging/files.txt): the Debian package, the Yocto
# recipe and the Buildroot package all call this, so they cannot drift.
#
#   packaging/install.sh DESTDIR LEVER LIBLEVER GEN [PYTHONDIR]
#
# LEVER     the lever binary for the board
# LIBLEVER  liblever.so for the board ("" for a build without the C libraries);
#           libUrmClient.so (crates/urm-capi, URM's client library) is taken
#           from the same directory
# GEN       a lever that runs on the build machine (the host build, or the
#           board's binary through qemu: "scripts/qemu-run.sh path/to/lever"),
#           which writes the completions and man pages: they come from the
#           same clap definitions whatever the architecture
# PYTHONDIR where the Python client goes, below DESTDIR (default
#           usr/lib/python3/dist-packages, Debian's; Yocto and Buildroot
#           pass their site-packages)
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,17p' "$0" >&2; exit 2; }
destdir=$1 lever=$2 liblever=$3 gen=$4
pythondir=${5:-usr/lib/python3/dist-packages}
src=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$src/Cargo.toml" | sed -n 1p)
d() { install -d "$destdir/$1"; }

d usr/bin
install -m 0755 "$lever" "$destdir/usr/bin/lever"

d usr/lib/systemd/system
install -m 0644 "$src/packaging/systemd/lever.service" "$destdir/usr/lib/systemd/system/lever.service"
d usr/lib/sysusers.d
install -m 0644 "$src/packaging/systemd/lever.sysusers.conf" "$destdir/usr/lib/sysusers.d/lever.conf"
d usr/lib/tmpfiles.d
install -m 0644 "$src/packaging/tmpfiles/lever.conf" "$destdir/usr/lib/tmpfiles.d/lever.conf"
# The system bus policy of `lever daemon --dbus` (docs/dbus.md).
d usr/share/dbus-1/system.d
install -m 0644 "$src/packaging/dbus/lever-dbus.conf" "$destdir/usr/share/dbus-1/system.d/lever-dbus.conf"

if [ -n "$liblever" ]; then
    # /usr/lib, not a multiarch directory: the seed's programs dlopen
    # /usr/lib/libqti-perfd-client.so by that path (docs/clients.md).
    install -m 0755 "$liblever" "$destdir/usr/lib/liblever.so"
    install -m 0755 "$liblever" "$destdir/usr/lib/libqti-perfd-client.so"
    d usr/include
    install -m 0644 "$src/crates/capi/include/lever.h" "$destdir/usr/include/lever.h"
    d usr/lib/pkgconfig
    sed -e "s|@PREFIX@|/usr|" -e "s|@VERSION@|$version|" "$src/packaging/pkgconfig/lever.pc.in" |
        grep -v '^#' >"$destdir/usr/lib/pkgconfig/lever.pc"
    chmod 0644 "$destdir/usr/lib/pkgconfig/lever.pc"
    # The drop-in for URM's client library (docs/urm.md): URM's file
    # names, soname libUrmClient.so.1, and its headers under include/Urm.
    liburm=$(dirname "$liblever")/libUrmClient.so
    [ -f "$liburm" ] || { echo "install.sh: no $liburm (cargo build -p lever-urm-capi)" >&2; exit 1; }
    install -m 0755 "$liburm" "$destdir/usr/lib/libUrmClient.so.1"
    ln -sf libUrmClient.so.1 "$destdir/usr/lib/libUrmClient.so"
    d usr/include/Urm
    install -m 0644 "$src"/crates/urm-capi/include/Urm/*.h "$destdir/usr/include/Urm/"
    sed -e "s|@PREFIX@|/usr|" -e "s|@VERSION@|$version|" "$src/packaging/pkgconfig/UrmClient.pc.in" |
        grep -v '^#' >"$destdir/usr/lib/pkgconfig/UrmClient.pc"
    chmod 0644 "$destdir/usr/lib/pkgconfig/UrmClient.pc"
fi

d "$pythondir/lever_client"
install -m 0644 "$src"/clients/python/lever_client/*.py "$destdir/$pythondir/lever_client/"

d usr/share/bash-completion/completions
d usr/share/zsh/vendor-completions
d usr/share/fish/vendor_completions.d
# $gen may be a command with arguments (the qemu runner and the binary).
$gen completions bash >"$destdir/usr/share/bash-completion/completions/lever"
$gen completions zsh >"$destdir/usr/share/zsh/vendor-completions/_lever"
$gen completions fish >"$destdir/usr/share/fish/vendor_completions.d/lever.fish"
# `lever man -o` creates no missing parent (a typo must not make a tree).
d usr/share/man/man1
$gen man -o "$destdir/usr/share/man/man1" >/dev/null
chmod 0644 "$destdir"/usr/share/bash-completion/completions/lever \
    "$destdir"/usr/share/zsh/vendor-completions/_lever \
    "$destdir"/usr/share/fish/vendor_completions.d/lever.fish \
    "$destdir"/usr/share/man/man1/*.1

d usr/share/doc/lever
install -m 0644 "$src/docs/daemon.md" "$destdir/usr/share/doc/lever/daemon.md"
