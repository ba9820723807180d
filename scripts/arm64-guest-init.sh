#!/bin/busybox sh
# /init of the arm64 kernel stage's guest (scripts/arm64-kernel.sh builds
# the initramfs: busybox-static:arm64, the static aarch64 musl lever, this
# file, /etc/lever/*). Runs Lever on the real kernel's root — /sys, /proc,
# tracefs, cgroup2, /dev/cpu_dma_latency, the PMU, the device tree — and
# reports each step on the serial console as one line:
#
#   LEVER-STEP|FLAVOUR|NAME|PASS or FAIL or SKIP|MILLISECONDS|DETAIL
#
# Every step's own output is kept in /out/NAME.txt (and the JSON and trace
# files it made), written as a tar stream onto the second virtio disk at
# the end; the host reads it back (crates/cli/tests/arm64_kernel.rs).
# Emulated timing means nothing: steps assert behaviour, and any figure
# printed is labelled "emulated".
/bin/busybox --install -s /bin
export PATH=/bin:/sbin PS4='+ ' HOME=/root TMPDIR=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /var
mount -t tracefs tracefs /sys/kernel/tracing
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mkdir -p /out /run/lever /var/lib/lever
FLAVOUR=$(cat /etc/lever/flavour)
export LEVER_SOCKET=/run/lever/lever.sock
STATE=/var/lib/lever
TARGET=/etc/lever/generic-arm64.yaml
for m in /lib/modules/*.ko; do insmod "$m" || echo "insmod $m failed"; done

say() { echo "LEVER-STEP|$FLAVOUR|$1|$2|$3|$4"; }
ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }

# step NAME FUNCTION: run FUNCTION with its output in /out/NAME.txt. It
# returns 0 (PASS), 2 (SKIP) or anything else (FAIL); the last line it
# writes to $DETAIL is the step's detail.
step() {
    name=$1
    shift
    DETAIL=/tmp/detail.$name
    : >"$DETAIL"
    t0=$(ms)
    "$@" >"/out/$name.txt" 2>&1
    rc=$?
    t=$(($(ms) - t0))
    detail=$(tail -n 1 "$DETAIL" | tr '|\n' '/ ')
    case $rc in
    0) say "$name" PASS "$t" "$detail" ;;
    2) say "$name" SKIP "$t" "$detail" ;;
    *)
        say "$name" FAIL "$t" "exit $rc: $detail"
        # The step's own output, for the console log.
        tail -n 15 "/out/$name.txt" | sed "s/^/  $name: /"
        ;;
    esac
}
detail() { echo "$*" >>"$DETAIL"; }
fail() {
    detail "$*"
    return 1
}
# `settle CHECK ARGS...`: CHECK passes within 5 s (the daemon acts on its
# own time; emulated, that can take a while). Its last failure stays.
settle() {
    for _ in $(seq 25); do
        "$@" 2>/dev/null && return 0
        sleep 0.2
    done
    "$@"
}
# `expect FILE VALUE WHAT`: the kernel's FILE holds VALUE.
expect() {
    v=$(cat "$1" 2>&1)
    [ "$v" = "$2" ] || fail "$3: $1 is '$v', not '$2'"
}
# /dev/cpu_dma_latency reads as the current PM QoS target, a native s32.
qos() { hexdump -e '1/4 "%d"' /dev/cpu_dma_latency; }
daemon_fds() { ls -l "/proc/$1/fd" 2>/dev/null | grep -c cpu_dma_latency; }
status_of() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
policy_of() { awk '{ print $41 }' "/proc/$1/stat"; }

DAEMON=
start_daemon() {
    lever daemon -t "$TARGET" --state-dir "$STATE" --socket "$LEVER_SOCKET" \
        >>/out/daemon.log 2>&1 &
    DAEMON=$!
    for _ in $(seq 100); do
        [ -S "$LEVER_SOCKET" ] && lever status >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    fail "the daemon did not start: $(tail -n 3 /out/daemon.log)"
}

check_kernel() {
    uname -a
    cat /proc/cmdline
    case $FLAVOUR in
    rt)
        expect /sys/kernel/realtime 1 "PREEMPT_RT kernel" || return 1
        uname -v | grep -q PREEMPT_RT || fail "uname -v has no PREEMPT_RT: $(uname -v)" || return 1
        ;;
    *) [ ! -e /sys/kernel/realtime ] || fail "/sys/kernel/realtime exists on the generic kernel" || return 1 ;;
    esac
    detail "$(uname -r) on $(grep -c ^processor /proc/cpuinfo) CPUs"
}

# The board-shaped guest: two clusters (qemu's cpu-map) with the DT's
# capacity-dmips-mhz 512 and 1024; lever cpu groups them by capacity.
check_topology() {
    for c in 0 1; do
        echo "cpu$c capacity $(cat /sys/devices/system/cpu/cpu$c/cpu_capacity)" \
            "cluster_id $(cat /sys/devices/system/cpu/cpu$c/topology/cluster_id)"
    done
    expect /sys/devices/system/cpu/cpu0/cpu_capacity 512 "little CPU" || return 1
    expect /sys/devices/system/cpu/cpu1/cpu_capacity 1024 "big CPU" || return 1
    expect /sys/devices/system/cpu/cpu0/topology/cluster_id 0 "cluster of cpu0" || return 1
    expect /sys/devices/system/cpu/cpu1/topology/cluster_id 1 "cluster of cpu1" || return 1
    lever cpu >/tmp/cpu.txt || return 1
    cat /tmp/cpu.txt
    lever cpu --json >/out/cpu.json || return 1
    grep -q '^cpus 0 .* 512 ' /tmp/cpu.txt || fail "lever cpu shows no cluster 'cpus 0' of capacity 512" || return 1
    grep -q '^cpus 1 .* 1024 ' /tmp/cpu.txt || fail "lever cpu shows no cluster 'cpus 1' of capacity 1024" || return 1
    detail "clusters cpus 0 (capacity 512), cpus 1 (1024)"
}

check_daemon_start() {
    start_daemon || return 1
    lever status
    lever resources >/out/resources.txt 2>&1
    detail "daemon pid $DAEMON, target $(lever status | awk '/^target/ { print $2 }')"
}

# PM QoS: /dev/cpu_dma_latency held by the daemon while the request lives.
check_pm_qos() {
    before=$(qos)
    h=$(lever acquire -d 60s --detach pm_qos_cpu_dma_latency=20)
    [ -n "$h" ] || fail "lever acquire printed no handle" || return 1
    [ "$(qos)" = 20 ] || fail "held: cpu_dma_latency is $(qos), not 20" || return 1
    [ "$(daemon_fds "$DAEMON")" = 1 ] || fail "the daemon holds no /dev/cpu_dma_latency fd" || return 1
    lever release "$h" || return 1
    qos_is() { [ "$(qos)" = "$1" ] || fail "$2: cpu_dma_latency is $(qos), not $1"; }
    fds_are() { [ "$(daemon_fds "$DAEMON")" = "$1" ] || fail "$2: the daemon holds $(daemon_fds "$DAEMON") cpu_dma_latency fds, not $1"; }
    settle qos_is "$before" released || return 1
    settle fds_are 0 released || return 1
    detail "20 us while held, $before after release, the fd closed"
}

check_uclamp() {
    f=/proc/sys/kernel/sched_util_clamp_min
    if [ ! -e "$f" ]; then
        # The generic target's optional resource is left out, not an error.
        if grep -q sched_util_clamp_min /out/resources.txt; then
            fail "lever resources lists sched_util_clamp_min, which this kernel lacks"
            return 1
        fi
        detail "not available here because this kernel is built without CONFIG_UCLAMP_TASK ($f is absent); lever resources leaves it out"
        return 2
    fi
    min0=$(cat $f) max0=$(cat /proc/sys/kernel/sched_util_clamp_max)
    h=$(lever acquire -d 60s --detach sched_util_clamp_min=512 sched_util_clamp_max=900)
    expect $f 512 "held" || return 1
    expect /proc/sys/kernel/sched_util_clamp_max 900 "held" || return 1
    lever release "$h"
    expect $f "$min0" "released" || return 1
    expect /proc/sys/kernel/sched_util_clamp_max "$max0" "released" || return 1
    detail "512/900 held, $min0/$max0 restored"
}

check_sysctl() {
    sw0=$(cat /proc/sys/vm/swappiness) tm0=$(cat /proc/sys/kernel/timer_migration)
    h=$(lever acquire -d 60s --detach vm_swappiness=10 timer_migration=0)
    [ -n "$h" ] || fail "lever acquire printed no handle" || return 1
    expect /proc/sys/vm/swappiness 10 "held" || return 1
    expect /proc/sys/kernel/timer_migration 0 "held" || return 1
    lever release "$h" || return 1
    expect /proc/sys/vm/swappiness "$sw0" "released" || return 1
    expect /proc/sys/kernel/timer_migration "$tm0" "released" || return 1
    detail "vm.swappiness 10, timer_migration 0 held; $sw0, $tm0 restored"
}

CG=/sys/fs/cgroup/lever/arm64
# The use case arm64-stage: cgroup lever/arm64 with cpu.weight 400 and
# cpuset.cpus 1; the requesting process's threads on CPU 1 at SCHED_FIFO 10.
cgroup_set() {
    expect $CG/cpu.weight 400 "use case" || return 1
    expect $CG/cpuset.cpus 1 "use case" || return 1
}
threads_set() {
    [ "$(status_of "$1" Cpus_allowed_list)" = 1 ] || fail "pid $1 may run on $(status_of "$1" Cpus_allowed_list), not 1" || return 1
    [ "$(policy_of "$1")" = 1 ] || fail "pid $1 has policy $(policy_of "$1"), not 1 (SCHED_FIFO)" || return 1
}
# A new process's CPUs are init's (0 where isolcpus=1 keeps CPU 1 apart).
threads_restored() {
    aff0=$(status_of 1 Cpus_allowed_list)
    [ "$(status_of "$1" Cpus_allowed_list)" = "$aff0" ] || fail "pid $1 may run on $(status_of "$1" Cpus_allowed_list), not $aff0 again" || return 1
    [ "$(policy_of "$1")" = 0 ] || fail "pid $1 has policy $(policy_of "$1"), not 0 (SCHED_OTHER) again" || return 1
}
# What Lever created goes again when empty; a cgroup left must be back at
# its defaults.
cgroup_restored() {
    [ ! -d $CG ] || expect $CG/cpu.weight 100 "restored" || return 1
}
handle_of() { sed -n 's/.*handle \([0-9][0-9]*\).*/\1/p' "$1" | head -n 1; }

# lever signal holds the use case until killed; `lever unsignal` ends it
# from elsewhere while the process lives on, so its threads can be seen
# restored.
check_usecase() {
    lever signal arm64-stage -d 0 >/tmp/signal.out 2>&1 &
    s=$!
    for _ in $(seq 50); do grep -q handle /tmp/signal.out && break; sleep 0.2; done
    cat /tmp/signal.out
    h=$(handle_of /tmp/signal.out)
    [ -n "$h" ] || { kill $s; fail "lever signal printed no handle"; return 1; }
    grep -q "not applied" /tmp/signal.out && { kill $s; fail "part of the use case was not applied"; return 1; }
    { settle cgroup_set && settle threads_set $s; } || { kill $s; return 1; }
    lever unsignal "$h" || { kill $s; return 1; }
    { settle cgroup_restored && settle threads_restored $s; } || { kill $s; return 1; }
    kill $s
    detail "cpu.weight 400, cpuset.cpus 1, pid $s on CPU 1 at SCHED_FIFO 10; all back after unsignal with pid $s alive"
}

# kill -9 the daemon while it holds a sysctl, PM QoS and the app
# arm64-worker (its use case, and the process moved to lever/arm64); the
# kernel drops the PM QoS fd itself; `lever restore` replays the journal
# for the rest while the app lives on.
check_kill9_restore() {
    sw0=$(cat /proc/sys/vm/swappiness) q0=$(qos) cg0=$(cat /proc/1/cgroup)
    lever acquire -d 120s --detach vm_swappiness=10 pm_qos_cpu_dma_latency=30 || return 1
    lever run --app arm64-worker -- arm64-worker &
    r=$!
    w=
    for _ in $(seq 50); do
        w=$(pidof arm64-worker)
        [ -n "$w" ] && grep -qx "0::/lever/arm64" "/proc/$w/cgroup" 2>/dev/null && break
        sleep 0.2
    done
    [ -n "$w" ] || { kill $r; fail "arm64-worker did not start"; return 1; }
    echo "lever run pid $r, arm64-worker pid $w"
    grep -qx "0::/lever/arm64" "/proc/$w/cgroup" || { kill $r $w; fail "arm64-worker is in $(cat /proc/$w/cgroup), not lever/arm64"; return 1; }
    { settle cgroup_set && settle threads_set $w; } || { kill $r $w; return 1; }
    [ "$(qos)" = 30 ] || { kill $r $w; fail "held: cpu_dma_latency is $(qos)"; return 1; }
    kill -9 "$DAEMON"
    wait "$DAEMON" 2>/dev/null
    [ -d "/proc/$w" ] || { kill $r; fail "arm64-worker died with the daemon"; return 1; }
    expect /proc/sys/vm/swappiness 10 "after kill -9, before restore" || { kill $r $w; return 1; }
    cgroup_set || { kill $r $w; return 1; }
    qos_back() { [ "$(qos)" = "$q0" ] || fail "after kill -9 the kernel kept cpu_dma_latency $(qos)"; }
    settle qos_back || { kill $r $w; return 1; }
    lever restore --state-dir "$STATE" || { kill $r $w; return 1; }
    expect /proc/sys/vm/swappiness "$sw0" "after lever restore" || { kill $r $w; return 1; }
    grep -qx "$cg0" "/proc/$w/cgroup" || { kill $r $w; fail "after lever restore arm64-worker is in $(cat /proc/$w/cgroup), not $cg0"; return 1; }
    { threads_restored $w && cgroup_restored; } || { kill $r $w; return 1; }
    kill $w $r
    rm -f "$LEVER_SOCKET"
    start_daemon || return 1
    detail "vm.swappiness 10, arm64-worker $w in lever/arm64 on CPU 1 at FIFO 10 survived kill -9 while PM QoS went back to $q0 (the kernel); lever restore put back $sw0, $cg0, CPUs $(status_of 1 Cpus_allowed_list), SCHED_OTHER"
}

check_trace() {
    lever trace record -o /out/trace.txt --duration 2 || return 1
    lever trace record -o /out/trace.dat --duration 2 || return 1
    lever trace analyze --sched --wakeups /out/trace.txt >/out/trace-analyze-txt.txt || return 1
    lever trace analyze --sched --wakeups /out/trace.dat || return 1
    lever trace analyze --sched --wakeups --json /out/trace.dat >/out/trace-analyze-dat.json || return 1
    n=$(grep -c sched_switch /out/trace.txt)
    [ "$n" -gt 0 ] || fail "the text trace has no sched_switch" || return 1
    detail "text trace with $n sched_switch lines, dat $(wc -c </out/trace.dat) bytes; analyze --sched --wakeups read both"
}

# A SCHED_FIFO 60 hog in bursts on CPU 1, above the measuring thread's
# 50: the app fifo-hog, whose thread rule Lever's daemon applies.
check_latency_breach() {
    lever run --app fifo-hog -- fifo-hog &
    run=$!
    hog=
    for _ in $(seq 50); do
        hog=$(pidof fifo-hog)
        [ -n "$hog" ] && [ "$(policy_of "$hog")" = 1 ] && break
        sleep 0.2
    done
    [ -n "$hog" ] && [ "$(policy_of "$hog")" = 1 ] || { kill $run; fail "fifo-hog is not SCHED_FIFO: $(cat /proc/$hog/stat)"; return 1; }
    echo "fifo-hog pid $hog at SCHED_FIFO, CPUs $(status_of "$hog" Cpus_allowed_list)"
    lever latency -a 1 -p 50 -i 5000 -b 100000 -D 60 -q --json --trace-out /out/breach.trace >/out/latency.json
    rc=$?
    kill $hog
    wait $run
    echo "$hog" >/out/hog.pid
    cat /out/latency.json
    [ $rc = 0 ] || fail "lever latency exited $rc" || return 1
    tr -d ' \n' </out/latency.json >/tmp/lat.compact
    grep -q '"reason":"breach"' /tmp/lat.compact || fail "no breach" || return 1
    # The cause (the first part) is the hog: a higher-priority task, or,
    # when the emulated vCPU took the timer interrupt late, the task that
    # ran meanwhile (crates/cli/tests/arm64_kernel.rs checks the JSON).
    cause=$(sed -n 's/.*"parts":\[{"kind":"\([a-z-]*\)","name":"\([^"]*\)","pid":\([0-9]*\),.*/\1 \2 \3/p' /tmp/lat.compact)
    case $cause in
    "higher-priority-task fifo-hog:$hog $hog" | "timer-irq-late fifo-hog:$hog $hog") ;;
    *) fail "the cause is '$cause', not the hog fifo-hog:$hog"; return 1 ;;
    esac
    detail "breach: $cause (emulated latency $(sed -n 's/.*"latency_us":\([0-9]*\).*/\1/p' /tmp/lat.compact) us, meaningless)"
}

check_cpu_ipc() {
    lever cpu ipc -- sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done'
    rc=$?
    lever cpu ipc --json -- sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done' >/out/ipc.json
    [ $rc = 0 ] || fail "lever cpu ipc exited $rc" || return 1
    grep -q "no hardware counter" /out/cpu_ipc.txt && fail "says there is no hardware counter while armv8_pmuv3 is listed" && return 1
    ls /sys/bus/event_source/devices/*/events/
    detail "$(grep -o 'cycles *[0-9]*' /out/cpu_ipc.txt | head -n 1) (emulated); $(grep -o 'does not implement [A-Z_]*' /out/cpu_ipc.txt | head -n 1)"
}

check_mem_map() {
    lever mem map >/tmp/mem-map.txt || return 1
    cat /tmp/mem-map.txt
    lever mem map --json >/out/mem-map.json || return 1
    grep -q 'total RAM .* kB from device tree memory nodes' /tmp/mem-map.txt ||
        fail "total RAM is not taken from the device tree's memory node" || return 1
    detail "$(grep 'total RAM' /tmp/mem-map.txt | head -n 1 | tr -s ' ')"
}

check_dt() {
    lever dt show --node /cpus >/tmp/dt-live.txt || return 1
    cat /tmp/dt-live.txt
    lever dt show /sys/firmware/devicetree/base --node /cpus >/tmp/dt-dir.txt || return 1
    cmp /tmp/dt-live.txt /tmp/dt-dir.txt || fail "dt show DIR differs from the live tree" || return 1
    grep -q 'capacity-dmips-mhz = <0x200>' /tmp/dt-live.txt || fail "no capacity-dmips-mhz = <0x200> (512) in /cpus" || return 1
    echo "== dt opp"
    lever dt opp
    echo "exit $?"
    echo "== dt carveouts"
    lever dt carveouts
    echo "exit $?"
    lever dt carveouts --json >/out/dt-carveouts.json
    detail "show (live and as a directory), opp, carveouts on /sys/firmware/devicetree/base"
}

# On the RT kernel (booted with the seed's isolcpus/nohz_full/rcu_nocbs/
# irqaffinity) the runtime fixes rt check prints are run as printed, and
# it checks again (rt-check-fixed.json).
check_rt_check() {
    lever rt check
    rc=$?
    lever rt check --json >/out/rt-check.json
    echo "exit $rc"
    if [ "$FLAVOUR" = rt ]; then
        lever rt check >/tmp/rt-check.txt 2>&1
        for n in sched_rt_runtime_us timer_migration irq_affinity workqueue_cpumask; do
            fix=$(sed -n "s/^  $n: //p" /tmp/rt-check.txt)
            [ -n "$fix" ] || continue
            echo "fix $n: $fix"
            sh -c "$fix" || echo "the fix of $n failed"
        done
        lever rt check
        rc2=$?
        lever rt check --json >/out/rt-check-fixed.json
        echo "exit $rc2"
        detail "exit $rc, $rc2 after the runtime fixes (cmdline: $(cat /proc/cmdline))"
    else
        detail "exit $rc (cmdline: $(cat /proc/cmdline))"
    fi
    return 0
}

check_report_collect() {
    lever report collect -o /out/run.json --no-store || return 1
    detail "run.json $(wc -c </out/run.json) bytes"
}

# A step that killed the daemon and failed before starting it again: the
# next steps still get one.
ensure_daemon() {
    [ -n "$DAEMON" ] && [ -d "/proc/$DAEMON" ] && return 0
    rm -f "$LEVER_SOCKET"
    start_daemon >/dev/null 2>&1
}

echo "LEVER-STAGE|$FLAVOUR|start|$(ms)"
step kernel check_kernel
step topology check_topology
step daemon_start check_daemon_start
step pm_qos check_pm_qos
step uclamp check_uclamp
step sysctl check_sysctl
step usecase check_usecase
step kill9_restore check_kill9_restore
step trace check_trace
ensure_daemon
step latency_breach check_latency_breach
step cpu_ipc check_cpu_ipc
step mem_map check_mem_map
step dt check_dt
step rt_check check_rt_check
step report_collect check_report_collect
[ -n "$DAEMON" ] && kill "$DAEMON"
echo "LEVER-STAGE|$FLAVOUR|end|$(ms)"
cp /tmp/detail.* /out/ 2>/dev/null
if [ -b /dev/vda ]; then
    tar -cf /dev/vda -C /out . && sync && echo "LEVER-STAGE|$FLAVOUR|saved|/dev/vda"
else
    echo "LEVER-STAGE|$FLAVOUR|unsaved|no /dev/vda"
fi
poweroff -f
