#!/bin/sh
# Containers started by zygoted (CreateContainer, through `launchctl create`) on the patched
# kernel, run by the guest's init after container-checks.sh (whose tmpfs copy of the initramfs,
# /ctr, they reuse: zygoted and its callers run chrooted there, as they would from a disk).
#
# The bundle's linux.seccomp is profiles/default.json's OCI object (run.sh writes
# /bundle/config.clone.json), so its compiled program is the `default` profile's. Twice:
#   clone  zygoted as it starts by default: the container's init must clone the filter of
#          `default`'s reference (SECCOMP_CLONE_FILTER), its task's tier `clone`;
#   load   the same with ZYGOTE_DISABLE_FEATURES=clone_filter: the init loads the program, tier
#          `load`.
# A tier `clone` cannot hide a load: a cloning init is given no program to fall back on
# (daemon/container-filter.c). Both ways the container runs try-syscall (static, in the rootfs)
# over the same matrix as the tasks' and prints its /proc/self/status: one filter, mode 2, and
# the same answers, compared across the two as well. One line per check: `ok NAME`,
# `FAIL NAME: why`, `skip NAME: why`.

modes="clone load"
checks="start tier filter-status try-syscall exit"
# try-syscall NAME -> errno the default profile gives (0: allowed), as zygote-checks.sh's
matrix="getpid:0 uname:0 getcwd:0 reboot:1 kexec_load:1 init_module:1 swapon:1 mount:1 umount2:1
unshare:1 setns:1 keyctl:1 add_key:1 bpf:1 perf_event_open:1 open_by_handle_at:1"

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }
skip() { echo "skip $1: $2"; }

skip_all() {
        for m in $modes; do for c in $checks; do skip "zygoted-container.$m.$c" "$1"; done; done
        skip zygoted-container.same-answers "$1"
        exit 0
}

[ -x /ctr/zygote/bin/zygoted ] && [ -x /ctr/zygote/bin/launchctl ] ||
        skip_all "no zygoted or launchctl in /ctr (container-checks.sh copies the initramfs there)"
[ -r /ctr/bundle/config.clone.json ] && [ -x /ctr/bundle/rootfs/bin/try-syscall ] ||
        skip_all "no clone bundle (run.sh writes config.clone.json and a static try-syscall)"

# zygoted chrooted into /ctr with the environment given, listening on /ctr$2 once it says so
# (its "listening on" line through a fifo: no polling, no sleeps); bounded.
start_zygoted() {
        mode=$1 sock=$2 env=$3
        log=/tmp/zdc-$mode.log fifo=/tmp/zdc-$mode.ready
        rm -f "$fifo"
        mkfifo "$fifo"
        sh -c 'echo $$ > /tmp/zdc-'"$mode"'.pid; exec env '"$env"' chroot /ctr /zygote/bin/zygoted "$@" 2>&1' \
                zygoted --socket "$sock" --profiles /zygote/profiles |
                {
                        said=
                        while IFS= read -r line; do
                                echo "$line" >>"$log"
                                case $line in
                                *"listening on"*)
                                        [ -n "$said" ] || echo ready >"$fifo"
                                        said=1
                                        ;;
                                esac
                        done
                        [ -n "$said" ] || echo exited >"$fifo"
                } &
        state=$(timeout 120 head -n 1 "$fifo")
        [ "$state" = ready ]
}

# launchctl in zygoted's root (a caller in another root is refused), bounded
lc() { timeout 120 chroot /ctr /zygote/bin/launchctl --socket "$sock" "$@"; }

names=
for m in $matrix; do names="$names ${m%%:*}"; done
script="grep -E '^Seccomp(_filters)?:' /proc/self/status; for s in $names; do try-syscall \$s; done"

for mode in $modes; do
        name=zygoted-container.$mode
        sock=/run/zdc-$mode.sock
        env=ZYGOTE_LOG_LEVEL=info
        [ $mode = load ] && env="$env ZYGOTE_DISABLE_FEATURES=clone_filter"
        if ! start_zygoted $mode $sock "$env"; then
                for c in $checks; do
                        fail "$name.$c" "zygoted did not listen (state '$state'): $(tail -5 /tmp/zdc-$mode.log | tr '\n' ' ')"
                done
                continue
        fi
        sed -e "s|\"ZYGOTE_LANE_SCRIPT\"|\"$script\"|" -e "s|ZYGOTE_LANE_CGROUP|/zygote-lane/zdc-$mode|" \
                /ctr/bundle/config.clone.json >/ctr/bundle/config.json
        id=zdc-$mode
        if lc create $id /bundle >/tmp/zdc-$mode.out 2>/tmp/zdc-$mode.err; then
                ok "$name.start"
                tier=$(lc state $id 2>&1 | sed -n 's/^tier: *//p')
                lc start $id >/dev/null 2>>/tmp/zdc-$mode.err
                lc wait $id >/dev/null 2>>/tmp/zdc-$mode.err
                rc=$?
                lc delete $id >/dev/null 2>>/tmp/zdc-$mode.err
        else
                fail "$name.start" "launchctl create: $(head -c 400 /tmp/zdc-$mode.err | tr '\n' ' ')"
                tier= rc=
        fi
        sed "s/^/| $id: /" /tmp/zdc-$mode.out
        [ "$tier" = $mode ] && ok "$name.tier" || fail "$name.tier" "the container's task has tier '$tier', want $mode"
        why=
        for field in "Seccomp:	2" "Seccomp_filters:	1"; do
                grep -qx "$field" /tmp/zdc-$mode.out || why="$why want '$field';"
        done
        [ -z "$why" ] && ok "$name.filter-status" || fail "$name.filter-status" "$why (output above)"
        why=
        for m in $matrix; do
                sc=${m%%:*} expect=${m#*:}
                grep -qx "$sc errno=$expect" /tmp/zdc-$mode.out || why="$why $sc: want errno=$expect;"
        done
        [ -z "$why" ] && ok "$name.try-syscall" || fail "$name.try-syscall" "$why (output above)"
        [ "$rc" = 0 ] && ok "$name.exit" || fail "$name.exit" "launchctl wait: '$rc' ($(head -c 300 /tmp/zdc-$mode.err))"
        kill "$(cat /tmp/zdc-$mode.pid)" 2>/dev/null
        grep -i "container\|clone\|tier" /tmp/zdc-$mode.log | sed "s/^/| zygoted $mode: /" | head -20
done

# The same calls denied both ways: the answers of the two containers, line for line.
a=$(grep errno= /tmp/zdc-clone.out 2>/dev/null)
b=$(grep errno= /tmp/zdc-load.out 2>/dev/null)
if [ -n "$a" ] && [ "$a" = "$b" ]; then
        ok zygoted-container.same-answers
else
        fail zygoted-container.same-answers "clone: '$(echo $a)'; load: '$(echo $b)'"
fi
