#!/bin/sh
# Containers in the kernel lane's guest, run by its init after AppArmor's checks: zygote-runc on a
# pure cgroup v2 host with real controllers (the suite's host is hybrid, so elsewhere v2 is only
# emulated) and a kernel with AppArmor. One line per check: `ok NAME`, `FAIL NAME: why`,
# `skip NAME: why`.
#
# pivot_root refuses a caller whose root is the initramfs itself, so the runtime runs chrooted
# into a tmpfs copy of it (/ctr), as it would run from a disk. The bundle (/bundle: busybox and
# config.json from `zygote-runc spec`, with linux.resources and an absolute cgroupsPath) is made
# on the host by run.sh.
#
# Checked: the container's own cgroup files (memory.max, pids.max, cpu.max, cpuset.cpus) read
# inside its cgroup namespace, the pids limit enforced (forks past it fail, pids.events counts
# them), `update --memory` on a running container seen in the host's cgroup file, a container under
# process.apparmorProfile and an exec'd process under --apparmor, each in /proc/self/attr/current.

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }
skip() { echo "skip $1: $2"; }

checks="memory-max pids-max cpu-max cpuset-cpus pids-enforced update-memory apparmor-profile exec-apparmor exec-unconfined"
skip_all() {
        for c in $checks; do skip "container.$c" "$1"; done
        exit 0
}
fail_all() {
        for c in $checks; do fail "container.$c" "$1"; done
        exit 0
}

[ -x /zygote/bin/zygote-runc ] && [ -r /bundle/config.template.json ] ||
        skip_all "zygote-runc or the bundle is not in the initramfs"
grep -q cgroup2 /proc/filesystems || skip_all "the guest kernel has no cgroup2"

# The tmpfs copy of the initramfs the runtime runs in.
mkdir -p /ctr
mount -t tmpfs -o mode=0755 tmpfs /ctr
for d in /*; do
        case $d in
        /proc | /sys | /dev | /tmp | /run | /ctr | /selftests) ;;
        *) cp -a "$d" /ctr/ ;;
        esac
done
mkdir -p /ctr/proc /ctr/sys /ctr/dev /ctr/tmp /ctr/run
mount -t proc proc /ctr/proc
mount -t sysfs sysfs /ctr/sys
mount -t cgroup2 cgroup2 /ctr/sys/fs/cgroup
mount -t devtmpfs devtmpfs /ctr/dev
mount -t tmpfs -o mode=1777 tmpfs /ctr/tmp
mount -t tmpfs -o mode=0755 tmpfs /ctr/run
cg=/ctr/sys/fs/cgroup
if ! echo "+memory +pids +cpu +cpuset" >$cg/cgroup.subtree_control 2>/tmp/ctr.err; then
        fail_all "the root cgroup takes no controllers (kernel.config): $(cat /tmp/ctr.err)"
fi

# zygote-runc, bounded: a hung runtime fails a check, not the guest.
zrc() { timeout 120 chroot /ctr /zygote/bin/zygote-runc --root /run/zrc "$@"; }
# The bundle's config.json with process.args replaced (busybox sh, one script) and, optionally,
# another file's members: "$1" is the script, the rest `sed` expressions over the JSON.
bundle_with() {
        script=$1
        shift
        sed "s|\"ZYGOTE_LANE_SCRIPT\"|\"$script\"|" /ctr/bundle/config.template.json >/ctr/bundle/config.json
        for e in "$@"; do sed -i "$e" /ctr/bundle/config.json; done
}

# 1. resources in the container's own cgroup (its cgroup namespace's root)
# The forks run in a subshell, which busybox sh leaves at the first that fails; what follows is
# builtins only, since no process can be made then.
bundle_with 'cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max /sys/fs/cgroup/cpu.max /sys/fs/cgroup/cpuset.cpus; (i=0; while [ $i -lt 40 ]; do sleep 3 \& i=$((i+1)); done) 2>/dev/null; read l </sys/fs/cgroup/pids.events; echo $l' \
        's|ZYGOTE_LANE_CGROUP|/zygote-lane/c-res|'
out=$(zrc run --bundle /bundle c-res 2>/tmp/ctr.err)
rc=$?
echo "$out" | sed 's/^/| c-res: /'
set -- $out
if [ $rc != 0 ] && [ -z "$out" ]; then
        fail_all "zygote-runc run failed (exit $rc): $(head -c 400 /tmp/ctr.err | tr '\n' ' ')"
fi
[ "${1:-}" = 67108864 ] && ok container.memory-max || fail container.memory-max "want 67108864, got '${1:-}'"
[ "${2:-}" = 32 ] && ok container.pids-max || fail container.pids-max "want 32, got '${2:-}'"
[ "${3:-} ${4:-}" = "50000 100000" ] && ok container.cpu-max || fail container.cpu-max "want '50000 100000', got '${3:-} ${4:-}'"
[ "${5:-}" = 0 ] && ok container.cpuset-cpus || fail container.cpuset-cpus "want 0, got '${5:-}'"
if [ "${6:-}" = max ] && [ "${7:-0}" -gt 0 ] 2>/dev/null; then
        ok container.pids-enforced
else
        fail container.pids-enforced "want 'max N' with N > 0 in pids.events after 40 forks, got '${6:-} ${7:-}' (exit $rc: $(head -c 200 /tmp/ctr.err))"
fi

# 2. update of a running container, and exec's AppArmor profile
bundle_with 'sleep 60' 's|ZYGOTE_LANE_CGROUP|/zygote-lane/c-upd|'
if zrc run --detach --bundle /bundle c-upd </dev/null >/dev/null 2>/tmp/ctr.err; then
        if zrc update --memory 33554432 c-upd 2>/tmp/ctr.err; then
                got=$(cat $cg/zygote-lane/c-upd/memory.max 2>&1)
                [ "$got" = 33554432 ] && ok container.update-memory || fail container.update-memory "memory.max is '$got'"
        else
                fail container.update-memory "update failed: $(head -c 300 /tmp/ctr.err)"
        fi
        if [ -e /tmp/zytest-caller.loaded ]; then
                got=$(zrc exec --apparmor zytest-lane c-upd cat /proc/self/attr/current 2>/tmp/ctr.err)
                [ "$got" = "zytest-lane (enforce)" ] && ok container.exec-apparmor ||
                        fail container.exec-apparmor "got '$got': $(head -c 300 /tmp/ctr.err)"
                got=$(zrc exec c-upd cat /proc/self/attr/current 2>/tmp/ctr.err)
                [ "$got" = unconfined ] && ok container.exec-unconfined ||
                        fail container.exec-unconfined "got '$got': $(head -c 300 /tmp/ctr.err)"
        else
                skip container.exec-apparmor "no AppArmor profiles loaded (apparmor.load)"
                skip container.exec-unconfined "no AppArmor profiles loaded (apparmor.load)"
        fi
        zrc delete --force c-upd 2>/dev/null
else
        for c in update-memory exec-apparmor exec-unconfined; do
                fail "container.$c" "run --detach failed: $(head -c 300 /tmp/ctr.err)"
        done
fi

# 3. process.apparmorProfile
if [ -e /tmp/zytest-caller.loaded ]; then
        bundle_with 'cat /proc/self/attr/current' 's|ZYGOTE_LANE_CGROUP|/zygote-lane/c-aa|' \
                's|"args"|"apparmorProfile": "zytest-lane", "args"|'
        got=$(zrc run --bundle /bundle c-aa 2>/tmp/ctr.err)
        [ "$got" = "zytest-lane (enforce)" ] && ok container.apparmor-profile ||
                fail container.apparmor-profile "got '$got': $(head -c 300 /tmp/ctr.err)"
else
        skip container.apparmor-profile "no AppArmor profiles loaded (apparmor.load)"
fi

left=$(ls /ctr/run/zrc 2>/dev/null)
[ -z "$left" ] || echo "| containers left in the state root: $left"
