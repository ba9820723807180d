#!/usr/bin/env bash
# Lever on Debian's real arm64 kernels under full-system emulation:
#   scripts/arm64-kernel.sh [--lever BIN] [--out DIR] [generic] [rt]
# Boots linux-image-$ABI-arm64-unsigned and its PREEMPT_RT flavour
# (linux-image-$ABI-rt-arm64-unsigned) under qemu-system-aarch64 -M virt
# (no KVM) with an initramfs of busybox-static:arm64, the static aarch64
# musl lever (BIN, default the board's: target/aarch64-unknown-linux-musl/board/lever,
# which scripts/cross.sh --install --board aarch64-unknown-linux-musl builds) and
# scripts/arm64-guest-init.sh as /init, which runs the checks on the real
# root. Each step's name, result and time comes back on the serial console
# (LEVER-STEP lines, printed here); the files the steps wrote come back on
# a second virtio disk. Then `lever report render` runs here on the
# guest's run.json, and crates/cli/tests/arm64_kernel.rs reads it all:
#   LEVER_ARM64_KERNEL_OUT=DIR cargo test -p lever --test arm64_kernel
# Packages are fetched with apt (arm64 added as a foreign architecture)
# and kept under /var/tmp/lever-ci/arm64-kernel. docs/install.md says what
# this proves and what it does not. Exits 1 when a check failed.
set -euo pipefail
cd "$(dirname "$0")/.."

# The one place the kernel is pinned: Debian bookworm's ABI and package
# version (both flavours are built from the same source package).
KERNEL_ABI=6.1.0-47
KERNEL_VERSION=6.1.170-3

CACHE=/var/tmp/lever-ci/arm64-kernel
lever=target/aarch64-unknown-linux-musl/board/lever
out=$CACHE/out
flavours=()
while [ $# -gt 0 ]; do
    case $1 in
    --lever) lever=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    generic | rt) flavours+=("$1"); shift ;;
    *) echo "usage: scripts/arm64-kernel.sh [--lever BIN] [--out DIR] [generic] [rt]" >&2; exit 2 ;;
    esac
done
[ ${#flavours[@]} -gt 0 ] || flavours=(generic rt)
[ -x "$lever" ] || { echo "arm64-kernel.sh: no $lever; build it with scripts/cross.sh --install --board aarch64-unknown-linux-musl" >&2; exit 1; }
grep -q 'ARM aarch64.*statically linked' <<<"$(file -L "$lever")" ||
    { echo "arm64-kernel.sh: $lever is not a static aarch64 binary" >&2; exit 1; }

# Tools: qemu-system-arm (qemu-system-aarch64), dtc, cpio, the aarch64 strip.
need=()
command -v qemu-system-aarch64 >/dev/null || need+=(qemu-system-arm)
command -v dtc >/dev/null || need+=(device-tree-compiler)
command -v cpio >/dev/null || need+=(cpio)
command -v aarch64-linux-gnu-strip >/dev/null || need+=(binutils-aarch64-linux-gnu)
grep -qx arm64 <<<"$(dpkg --print-foreign-architectures)" || { dpkg --add-architecture arm64; fresh=1; }
if [ ${#need[@]} -gt 0 ] || [ -n "${fresh:-}" ]; then
    apt-get update -qq
    [ ${#need[@]} -eq 0 ] || apt-get install -y -qq "${need[@]}" >/dev/null
fi

# Packages, cached: each flavour's kernel and busybox-static:arm64.
mkdir -p "$CACHE/debs"
pkg_generic=linux-image-$KERNEL_ABI-arm64-unsigned
pkg_rt=linux-image-$KERNEL_ABI-rt-arm64-unsigned
fetch() { # fetch PACKAGE[=VERSION] GLOB
    local found
    found=$(find "$CACHE/debs" -name "$2" -print -quit)
    if [ -z "$found" ]; then
        (cd "$CACHE/debs" && apt-get download -qq "$1" 2>/dev/null) ||
            { apt-get update -qq && (cd "$CACHE/debs" && apt-get download -qq "$1"); } ||
            { echo "arm64-kernel.sh: apt cannot download $1: move KERNEL_ABI/KERNEL_VERSION in $0 to a version apt-cache policy '$pkg_generic:arm64' lists" >&2; exit 1; }
        found=$(find "$CACHE/debs" -name "$2" -print -quit)
    fi
    echo "$found"
}
deb_generic=$(fetch "$pkg_generic:arm64=$KERNEL_VERSION" "${pkg_generic}_${KERNEL_VERSION}_arm64.deb")
deb_rt=$(fetch "$pkg_rt:arm64=$KERNEL_VERSION" "${pkg_rt}_${KERNEL_VERSION}_arm64.deb")
deb_busybox=$(fetch busybox-static:arm64 'busybox-static_*_arm64.deb')

# qemu's machine: two clusters of one CPU (its cpu-map), 1 GiB, the output
# disk. pauth-impdef: qemu's default QARMA pointer authentication is costly
# to emulate (boot 26 s instead of 8 s here); the CPU is still `max`.
MACHINE=(-M virt -cpu max,pauth-impdef=on -smp 2,sockets=1,clusters=2,cores=1,threads=1 -m 1024)
disk_args() { echo "-drive file=$1,format=raw,if=none,id=out -device virtio-blk-device,drive=out"; }

# The DT qemu generates, with the board's big.LITTLE capacities
# (capacity-dmips-mhz 512 on the cluster-0 CPU, 1024 on cluster 1), so
# the kernel's arch_topology and Lever's clusters meet a real kernel's view.
work=$CACHE/work
rm -rf "$work" && mkdir -p "$work" "$out"
# The extracted packages and images (~900 MB) go at the end; the .debs and
# the output stay.
[ -n "${LEVER_ARM64_KEEP_WORK:-}" ] || trap 'rm -rf "$work"' EXIT
truncate -s 1M "$work/dump.img"
# shellcheck disable=SC2046
qemu-system-aarch64 "${MACHINE[@]}" $(disk_args "$work/dump.img") -nographic \
    -machine dumpdtb="$work/virt.dtb" >/dev/null 2>&1 || true
[ -s "$work/virt.dtb" ] || { echo "arm64-kernel.sh: qemu did not dump its device tree" >&2; exit 1; }
dtc -q -I dtb -O dts "$work/virt.dtb" |
    awk '/^\t\tcpu@0 \{/ { print; print "\t\t\tcapacity-dmips-mhz = <512>;"; next }
         /^\t\tcpu@1 \{/ { print; print "\t\t\tcapacity-dmips-mhz = <1024>;"; next }
         { print }' >"$work/board.dts"
grep -q 'capacity-dmips-mhz = <512>' "$work/board.dts" ||
    { echo "arm64-kernel.sh: qemu's DT has no cpu@0 node to give a capacity" >&2; exit 1; }
dtc -q -I dts -O dtb -o "$work/board.dtb" "$work/board.dts"

# What every initramfs holds.
common=$work/common
mkdir -p "$common"/{bin,sbin,etc/lever,lib/modules,proc,sys,dev,run,tmp,var,out,root}
dpkg-deb -x "$deb_busybox" "$work/busybox"
cp "$work/busybox/bin/busybox" "$common/bin/busybox"
aarch64-linux-gnu-strip -o "$common/bin/lever" "$lever"
install -m 755 scripts/arm64-guest-init.sh "$common/init"
# The latency step's hog, in bursts: a script, so its comm is its name.
# Each burst is 0.3 s busy by the clock (/proc/uptime, hundredths of a
# second), past the step's 100 ms breach threshold however fast the
# emulation runs: a count of 3,000 loop turns was 94 ms on a faster host
# and the breach never came.
cat >"$common/bin/fifo-hog" <<'HOG'
#!/bin/sh
now() { read -r up _ </proc/uptime; t=$((${up%.*} * 100 + 1${up#*.} - 100)); }
while :; do
    now; end=$((t + 30))
    while [ "$t" -lt "$end" ]; do now; done
    sleep 0.3
done
HOG
chmod 755 "$common/bin/fifo-hog"
# The app of the kill -9 step: lives on while the daemon dies.
printf '#!/bin/sh\nwhile :; do sleep 1; done\n' >"$common/bin/arm64-worker"
chmod 755 "$common/bin/fifo-hog" "$common/bin/arm64-worker"
# The generic target with the stage's use case (docs/usecases.md).
{
    cat crates/targets/targets/generic.yaml
    cat <<'EOF'

usecases:
  - name: arm64-stage
    id: 0x000A0001
    description: The arm64 kernel stage's use case (scripts/arm64-kernel.sh)
    duration: 0
    cgroups:
      lever/arm64:
        cpu.weight: "400"
        cpuset.cpus: "1"
    threads:
      - affinity: 1
        policy: fifo
        priority: 10

apps:
  - name: arm64-worker
    exec: arm64-worker
    usecases: [arm64-stage]
    move_to: lever/arm64
  # The latency step's hog: Lever itself makes it SCHED_FIFO 60 on CPU 1
  # (busybox has no chrt), above the measuring thread's 50.
  - name: fifo-hog
    exec: fifo-hog
    threads:
      - affinity: 1
        policy: fifo
        priority: 60
EOF
} >"$common/etc/lever/generic-arm64.yaml"

summary=()
failed=0
for flavour in "${flavours[@]}"; do
    case $flavour in
    generic) deb=$deb_generic release=$KERNEL_ABI-arm64 append="" ;;
    rt) deb=$deb_rt release=$KERNEL_ABI-rt-arm64 append="isolcpus=1 nohz_full=1 rcu_nocbs=1 irqaffinity=0" ;;
    esac
    x=$work/$flavour
    mkdir -p "$x"
    # Only the kernel and the output disk's drivers (modules in Debian's
    # kernels), not the 400 MB of modules.
    mods=(drivers/virtio/virtio_mmio.ko drivers/block/virtio_blk.ko)
    mkdir -p "$x/pkg"
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$x/pkg" "./boot/vmlinuz-$release" \
        "${mods[@]/#/./lib/modules/$release/kernel/}"
    root=$x/root
    cp -a "$common" "$root"
    echo "$flavour" >"$root/etc/lever/flavour"
    for m in "${mods[@]}"; do
        cp "$x/pkg/lib/modules/$release/kernel/$m" "$root/lib/modules/"
    done
    (cd "$root" && find . | cpio -o -H newc --quiet) >"$x/initramfs.cpio"
    truncate -s 256M "$x/out.img"
    fd=$out/$flavour
    rm -rf "$fd" && mkdir -p "$fd/files"
    echo "== arm64 $flavour kernel $release (qemu-system-aarch64, emulated: times are not the board's)"
    echo "initramfs $(($(stat -c %s "$x/initramfs.cpio") / 1048576)) MiB; $SECONDS s since the script started"
    s=$SECONDS
    # shellcheck disable=SC2046
    timeout 300 qemu-system-aarch64 "${MACHINE[@]}" $(disk_args "$x/out.img") \
        -nographic -no-reboot -dtb "$work/board.dtb" \
        -kernel "$x/pkg/boot/vmlinuz-$release" -initrd "$x/initramfs.cpio" \
        -append "console=ttyAMA0 quiet panic=-1 $append" </dev/null >"$fd/console.log" 2>&1 ||
        echo "qemu exited $? (300 s limit)" >>"$fd/console.log"
    wall=$((SECONDS - s))
    tar -xf "$x/out.img" -C "$fd/files" 2>/dev/null || echo "no files came back on the output disk" >>"$fd/console.log"
    tr -d '\r' <"$fd/console.log" | grep '^LEVER-STEP|' >"$fd/steps.txt" || true
    echo "$wall" >"$fd/wall_s"
    while IFS='|' read -r _ fl name result t detail; do
        printf '%-8s %-16s %-4s %7s ms  %s\n' "$fl" "$name" "$result" "$t" "$detail"
    done <"$fd/steps.txt"
    tr -d '\r' <"$fd/console.log" | grep -E '^  [a-z0-9_]+: ' || true
    n_fail=$(grep -c '|FAIL|' "$fd/steps.txt" || true)
    n_steps=$(wc -l <"$fd/steps.txt")
    grep -q "^LEVER-STAGE|$flavour|saved" <(tr -d '\r' <"$fd/console.log") || { n_fail=$((n_fail + 1)); echo "the guest did not save its files (console: $fd/console.log)"; }
    [ "$n_steps" -gt 0 ] || { n_fail=$((n_fail + 1)); echo "no step reported (console: $fd/console.log)"; tail -n 20 "$fd/console.log"; }
    # report render on the host, with this tree's lever.
    if [ -s "$fd/files/run.json" ]; then
        host_lever=${LEVER_HOST_BIN:-target/debug/lever}
        [ -x "$host_lever" ] || cargo build -q -p lever
        "$host_lever" report render "$fd/files/run.json" --html "$fd/report.html" --md "$fd/report.md" >/dev/null &&
            echo "report render (host): $fd/report.html, $fd/report.md" ||
            { n_fail=$((n_fail + 1)); echo "report render failed on the guest's run.json"; }
    fi
    summary+=("$flavour: $n_steps steps, $n_fail failed, $wall s wall (boot to power-off)")
    failed=$((failed + n_fail))
done
printf '%s\n' "${summary[@]}"
echo "output: $out (read by LEVER_ARM64_KERNEL_OUT=$out cargo test -p lever --test arm64_kernel)"
[ "$failed" = 0 ]
