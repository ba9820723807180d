#!/usr/bin/env bash
# Builds the Debian package for ARCH, installs it, checks it, removes and
# purges it, and checks nothing is left:
#   packaging/deb/test-deb.sh amd64|arm64 [DEB]
# The package is installed into a scratch root (dpkg --root with
# --force-script-chrootless: the maintainer scripts run with DPKG_ROOT set
# and touch nothing outside it), so the test can run on a shared machine;
# arm64's lever runs under qemu-user. Without DEB the package is built
# first, unoptimised (LEVER_DEB_PROFILE=dev) unless LEVER_DEB_PROFILE says
# otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."
arch=${1:?usage: packaging/deb/test-deb.sh amd64|arm64 [DEB]}
deb=${2:-$(LEVER_DEB_PROFILE=${LEVER_DEB_PROFILE:-dev} packaging/deb/build-deb.sh "$arch" | tail -1)}
case $arch in
amd64) run() { "$@"; } ;;
arm64) scripts/qemu-binfmt.sh; run() { scripts/qemu-run.sh "$@"; } ;;
*) echo "test-deb.sh: arch is amd64 or arm64" >&2; exit 2 ;;
esac
fail() { echo "test-deb.sh $arch: FAIL: $*" >&2; exit 1; }
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
# /etc and /run as on a system (the group files and tmpfiles go there).
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/etc" "$root/run"
touch "$root/var/lib/dpkg/status"
dpkg_() { dpkg --root="$root" --force-script-chrootless --force-depends --force-architecture "$@"; }

echo "== $deb"
dpkg-deb --info "$deb" | sed -n 's/^ *\(Package\|Version\|Architecture\|Installed-Size\):/  &/p'
[ "$(dpkg-deb -f "$deb" Architecture)" = "$arch" ] || fail "Architecture is not $arch"

echo "== dpkg -i"
dpkg_ -i "$deb" >/dev/null
packaging/check-files.sh "$root"
[ "$(stat -c %a "$root/var/lib/lever")" = 700 ] || fail "/var/lib/lever is not 0700 (tmpfiles)"
if command -v systemd-sysusers >/dev/null; then
    grep -q '^lever:' "$root/etc/group" || fail "no lever group (sysusers)"
fi
lever=$root/usr/bin/lever
version=$(run "$lever" --version)
echo "  $version"
case $version in "lever "*"features: "*) ;; *) fail "lever --version: $version" ;; esac
sim=$root/tmp/board
run "$lever" sim create qcs6490 "$sim" >/dev/null
grep -q 0x44008100 <<<"$(run "$lever" --root "$sim" resources)" || fail "lever --root SIM resources lists no 0x44008100"
echo "  lever sim create qcs6490 DIR && lever --root DIR resources: ok"
rm -rf "$root/tmp"
bash -c "source '$root/usr/share/bash-completion/completions/lever' && complete -p lever" >/dev/null ||
    fail "bash completion does not load"
if command -v man >/dev/null; then
    MANPAGER=cat man -l "$root/usr/share/man/man1/lever.1" >/dev/null || fail "man -l lever.1"
fi
if [ "$arch" = amd64 ]; then
    PYTHONPATH=$root/usr/lib/python3/dist-packages python3 -c 'import lever_client' ||
        fail "the Python client does not import"
    flags=$(PKG_CONFIG_PATH=$root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags --libs lever)
    # shellcheck disable=SC2086 # flags are words
    gcc -o "$root/tune" clients/c/examples/tune.c $flags || fail "tune.c does not build with pkg-config lever"
    rm "$root/tune"
    echo "  python client imports; tune.c builds with \$(pkg-config --cflags --libs lever)"
    # A program written against URM's API builds with the installed
    # headers and links to libUrmClient.so.1 (URM's soname).
    flags=$(PKG_CONFIG_PATH=$root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags --libs UrmClient)
    printf '#include "UrmAPIs.h"\nint main(void) { SysResource r = {0}; r.mResCode = CONSTRUCT_RES_CODE(3, 0);\n  return sizeof r == 24 && tuneResources(0, REQ_PRIORITY_HIGH, 1, &r) == -1 ? 0 : 1; }\n' >"$root/urm.c"
    # shellcheck disable=SC2086 # flags are words
    gcc -o "$root/urm" "$root/urm.c" $flags || fail "a URM API program does not build with pkg-config UrmClient"
    grep -q 'NEEDED.*libUrmClient.so.1' <<<"$(readelf -d "$root/urm")" || fail "the URM program does not need libUrmClient.so.1"
    LD_LIBRARY_PATH=$root/usr/lib "$root/urm" || fail "tuneResources(0 ms) did not return -1 as URM's client does"
    rm "$root/urm" "$root/urm.c"
    echo "  a URM API program builds with \$(pkg-config --cflags --libs UrmClient) and runs on libUrmClient.so.1"
fi

echo "== dpkg -r"
dpkg_ -r lever >/dev/null
left=$(cd "$root" && find . \( -path ./var -o -path ./etc \) -prune -o \( -type f -o -type l \) -print)
[ -z "$left" ] || fail "dpkg -r left: $left"
echo "== dpkg --purge"
dpkg_ --purge lever >/dev/null
# What may remain: dpkg's own database, and /etc's group files (the group
# stays by Debian's rule for system groups).
left=$(cd "$root" && find . -mindepth 1 \( -path ./var/lib/dpkg -o -path ./etc \) -prune -o -print |
    grep -v -x -e ./var -e ./var/lib -e ./run || true)
[ -z "$left" ] || fail "dpkg --purge left: $left"
dpkg_ -s lever >/dev/null 2>&1 && fail "dpkg still knows lever"
echo "test-deb.sh $arch: ok (installed, checked, removed and purged; nothing left)"
