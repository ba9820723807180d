#!/usr/bin/env bash
# A Debian package of Lever, hand-made with dpkg-deb (no debhelper):
#   packaging/deb/build-deb.sh amd64|arm64 [OUTDIR]
# Builds lever, liblever.so and libUrmClient.so (for arm64 with the cross linker of
# .cargo/config.toml), stages packaging/install.sh's file list, adds the
# maintainer scripts of packaging/deb/debian/ and writes
# OUTDIR/lever_VERSION_ARCH.deb (default target/deb). The profile is
# release; LEVER_DEB_PROFILE=dev makes a quicker unoptimised one for tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
arch=${1:?usage: packaging/deb/build-deb.sh amd64|arm64 [OUTDIR]}
outdir=${2:-target/deb}
profile=${LEVER_DEB_PROFILE:-release}
case $arch in
amd64) target=x86_64-unknown-linux-gnu strip=strip ;;
arm64) target=aarch64-unknown-linux-gnu strip=aarch64-linux-gnu-strip ;;
*) echo "build-deb.sh: arch is amd64 or arm64, not $arch" >&2; exit 2 ;;
esac
host=$(rustc -vV | sed -n 's/^host: //p')
dir=$([ "$profile" = dev ] && echo debug || echo "$profile")
if [ "$target" = "$host" ]; then
    cargo build --profile "$profile" -p lever -p lever-capi -p lever-urm-capi
    bin=target/$dir
    gen=$bin/lever
else
    cargo build --profile "$profile" --target "$target" -p lever -p lever-capi -p lever-urm-capi
    bin=target/$target/$dir
    # The board's binary writes the completions and man pages, under qemu.
    gen="scripts/qemu-run.sh $bin/lever"
fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | sed -n 1p)
stage=target/deb/stage-$arch
rm -rf "$stage"
packaging/install.sh "$stage" "$bin/lever" "$bin/liblever.so" "$gen"
"$strip" --strip-unneeded "$stage/usr/bin/lever" "$stage/usr/lib/liblever.so" \
    "$stage/usr/lib/libqti-perfd-client.so" "$stage/usr/lib/libUrmClient.so.1"

install -d "$stage/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" \
    packaging/deb/debian/control.in >"$stage/DEBIAN/control"
for script in postinst prerm postrm; do
    install -m 0755 "packaging/deb/debian/$script" "$stage/DEBIAN/$script"
done
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' |
    sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
mkdir -p "$outdir"
deb=$outdir/lever_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
