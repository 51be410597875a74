#!/bin/sh
# The zygote part of the kernel lane, run by the guest's init (busybox sh) on the patched kernel.
#
# Starts zygoted twice: first with --tier auto, where the probes must find both kernel features
# and pick the `clone` tier for `default`; then with --tier load. In each tier it runs the same
# checks of the daemon core: status, a sandboxed task's /proc status (one filter, Docker's
# bounding set, no_new_privs), a try-syscall matrix and a few workloads. One line per check:
# `ok NAME`, `FAIL NAME: why`, `skip NAME: why`. Until the zygote binaries are in the initramfs
# every check is reported as skipped, never as passed.
#
# Layout it expects (tests/kernel/run.sh builds it): /zygote/bin/{zygoted,launchctl,zygote-ref,
# try-syscall}, /zygote/profiles/*.json.

bin=/zygote/bin
profiles=/zygote/profiles
tiers="auto load"
# Docker's 14 capabilities, as /proc/PID/status prints a bounding set.
docker_capbnd=00000000a80425fb
# try-syscall NAME -> errno the `default` profile must give (0: allowed). Docker's default
# profile answers EPERM (1) to what it does not allow.
matrix="getpid:0 uname:0 getcwd:0 reboot:1 kexec_load:1 init_module:1 swapon:1 mount:1 umount2:1
unshare:1 setns:1 keyctl:1 add_key:1 bpf:1 perf_event_open:1 open_by_handle_at:1"
workloads="echo exit-status stdin pipeline not-found"

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }
skip() { echo "skip $1: $2"; }

skip_all() {
        for t in $tiers; do
                name=zygote.$t
                [ "$t" = auto ] && name=zygote.clone
                for c in status sandbox-proc; do skip "$name.$c" "$1"; done
                [ "$t" = auto ] && skip zygote.default-filter-step "$1"
                for m in $matrix; do skip "$name.try-syscall.${m%%:*}" "$1"; done
                for w in $workloads; do skip "$name.workload.$w" "$1"; done
                skip "$name.apparmor-caller" "$1"
        done
        exit 0
}

[ -x $bin/zygoted ] && [ -x $bin/launchctl ] && [ -x $bin/zygote-ref ] ||
        skip_all "zygoted, launchctl or zygote-ref not built yet (none in the build dir given to run.sh)"
ls $profiles/default.json >/dev/null 2>&1 || skip_all "no profiles/default.json yet"

# Starts zygoted with --tier $1 on socket $2 and returns once it listens, or fails when it exits
# first. Readiness is its "listening on" log line, read through a fifo: no polling, no sleeps.
start_zygoted() {
        tier=$1 sock=$2
        log=/tmp/zygoted-$tier.log fifo=/tmp/zygoted-$tier.ready
        rm -f "$fifo" "$sock"
        mkfifo "$fifo"
        # The reader keeps draining the log after "ready" so the daemon never blocks on stderr.
        sh -c 'echo $$ > /tmp/zygoted-'"$tier"'.pid; exec "$@" 2>&1' zygoted \
                $bin/zygoted --socket "$sock" --profiles $profiles --tier "$tier" |
                {
                        said=
                        while IFS= read -r line; do
                                echo "$line" >>"$log"
                                case $line in
                                *"listening on"*)
                                        if [ -z "$said" ]; then
                                                echo ready >"$fifo"
                                                said=1
                                        fi
                                        ;;
                                esac
                        done
                        [ -n "$said" ] || echo exited >"$fifo"
                } &
        # Bounded: a daemon that neither listens nor exits fails this tier, not the whole guest.
        state=$(timeout 120 head -n 1 "$fifo")
        [ "$state" = ready ]
}

stop_zygoted() {
        kill "$(cat /tmp/zygoted-"$1".pid)" 2>/dev/null
}

# Helpers below share the shell's global variables (busybox sh has no `local`): each uses its own
# names for what it sets.
# Every client call is bounded: a hung daemon fails a check instead of the whole guest.
lc() { timeout 60 $bin/launchctl "$@"; }

check_status() { # name expected_tier
        name=$1 tier_want=$2
        json=$(lc status --json 2>/tmp/status.err)
        rc=$?
        if [ $rc != 0 ]; then
                fail "$name.status" "launchctl status --json exited $rc: $(head -c 300 /tmp/status.err)"
                return
        fi
        echo "| $json"
        flat=$(echo "$json" | tr -d ' \t\n')
        why=
        case $flat in *'"clone_filter":true'*) ;; *) why="$why clone_filter is not true;" ;; esac
        case $flat in *'"capbset_drop_mask":true'*) ;; *) why="$why capbset_drop_mask is not true;" ;; esac
        prof=$(echo "$flat" | grep -o '{[^{}]*"name":"default"[^{}]*}' | head -1)
        case $prof in
        "") why="$why no profile named default;" ;;
        *"\"tier\":\"$tier_want\""*) ;;
        *) why="$why default's tier is not $tier_want ($prof);" ;;
        esac
        if [ -z "$why" ]; then ok "$name.status"; else fail "$name.status" "$why"; fi
}

check_sandbox_proc() {
        name=$1
        status=$(lc run --profile default -- /bin/cat /proc/self/status 2>/tmp/run.err)
        rc=$?
        if [ $rc != 0 ]; then
                fail "$name.sandbox-proc" "launchctl run exited $rc: $(head -c 300 /tmp/run.err)"
                return
        fi
        why=
        for field in "Seccomp:	2" "Seccomp_filters:	1" "CapBnd:	$docker_capbnd" "NoNewPrivs:	1"; do
                echo "$status" | grep -qx "$field" ||
                        why="$why want '$field', got '$(echo "$status" | grep "^${field%%:*}:")';"
        done
        if [ -z "$why" ]; then ok "$name.sandbox-proc"; else fail "$name.sandbox-proc" "$why"; fi
}

# The task lives in its profile's pid namespace (pidns.h): a small pid, and a /proc that shows
# the namespace (its init, the shell, ls) and nothing of the guest's.
check_pidns() {
        name=$1
        out=$(lc run --profile default -- /bin/sh -c 'readlink /proc/self; ls -d /proc/[0-9]* | wc -l' 2>/tmp/run.err)
        rc=$?
        set -- $out
        if [ $rc != 0 ]; then
                fail "$name.pidns" "launchctl run exited $rc: $(head -c 300 /tmp/run.err)"
        elif [ "${1:-999}" -lt 100 ] 2>/dev/null && [ "${2:-999}" -lt 10 ]; then
                ok "$name.pidns"
        else
                fail "$name.pidns" "pid $1 and $2 processes in /proc: not a pid namespace of its own"
        fi
}

check_try_syscall() {
        name=$1
        if [ ! -x $bin/try-syscall ]; then
                for m in $matrix; do skip "$name.try-syscall.${m%%:*}" "try-syscall not built yet"; done
                return
        fi
        # One sandboxed shell tries every call (its children inherit the sandbox): one spawn
        # instead of one per system call, which matters under emulation.
        names=
        for m in $matrix; do names="$names ${m%%:*}"; done
        lc run --profile default -- /bin/sh -c 'for s in "$@"; do '$bin'/try-syscall "$s"; done' \
                sh $names >/tmp/try-syscall.out 2>&1
        for m in $matrix; do
                sc=${m%%:*} expect=${m#*:}
                got=$(grep "^$sc errno=" /tmp/try-syscall.out)
                if [ "$got" = "$sc errno=$expect" ]; then
                        ok "$name.try-syscall.$sc"
                else
                        fail "$name.try-syscall.$sc" "want '$sc errno=$expect', got '$got' ($(head -c 200 /tmp/try-syscall.out | tr '\n' ' '))"
                fi
        done
}

check_workloads() {
        w=$1.workload
        out=$(lc run --profile default -- /bin/echo hello 2>&1)
        [ "$out" = hello ] && ok "$w.echo" || fail "$w.echo" "got '$out'"

        lc run --profile default -- /bin/sh -c 'exit 7' >/dev/null 2>&1
        rc=$?
        [ $rc = 7 ] && ok "$w.exit-status" || fail "$w.exit-status" "want 7, got $rc"

        out=$(echo through-stdin | lc run --profile default -- /bin/cat 2>&1)
        [ "$out" = through-stdin ] && ok "$w.stdin" || fail "$w.stdin" "got '$out'"

        # fork and exec inside the sandbox, under the profile's clone argument checks.
        out=$(lc run --profile default -- /bin/sh -c 'echo abc | tr b x' 2>&1)
        [ "$out" = axc ] && ok "$w.pipeline" || fail "$w.pipeline" "got '$out'"

        lc run --profile default -- /nonexistent >/dev/null 2>&1
        rc=$?
        [ $rc = 127 ] && ok "$w.not-found" || fail "$w.not-found" "want 127, got $rc"
}

# Tasks carry their caller's AppArmor label (daemon/caller-lsm.c): an unconfined caller's task is
# unconfined, one under zytest-caller (loaded by the guest's init, complain mode) runs under it.
check_apparmor_caller() {
        name=$1.apparmor-caller
        if [ ! -e /tmp/zytest-caller.loaded ] || [ ! -x $bin/aa-exec ]; then
                skip "$name" "no AppArmor profile zytest-caller loaded, or no aa-exec (see apparmor.load)"
                return
        fi
        plain=$(lc run --profile default -- /bin/cat /proc/self/attr/current 2>/tmp/aa-run.err)
        under=$(timeout 60 $bin/aa-exec -p zytest-caller -- $bin/launchctl run --profile default -- \
                /bin/cat /proc/self/attr/current 2>>/tmp/aa-run.err)
        rc=$?
        set -- $under
        if [ $rc = 0 ] && [ "${1:-}" = zytest-caller ] && [ "$plain" = unconfined ]; then
                ok "$name"
        else
                fail "$name" "exit $rc; tasks labelled '$plain' (unconfined caller) and '$under' (caller under zytest-caller): $(head -c 300 /tmp/aa-run.err)"
        fi
}

# Wall time of 10 spawns of /bin/true, for the log only (speed is never asserted).
time_spawns() {
        tier_label=$1
        t0=$(cut -d' ' -f1 /proc/uptime)
        i=0
        while [ $i -lt 10 ]; do
                lc run --profile default -- /bin/true || break
                i=$((i + 1))
        done
        t1=$(cut -d' ' -f1 /proc/uptime)
        echo "info zygote $tier_label tier: $i spawns of /bin/true in $(echo "$t1 - $t0" | bc 2>/dev/null || echo "$t0..$t1") s"
}

for t in $tiers; do
        sock=/run/zygote-$t.sock
        if [ "$t" = auto ]; then name=zygote.clone want=clone; else name=zygote.$t want=$t; fi
        if ! start_zygoted "$t" "$sock"; then
                fail "$name.start" "zygoted --tier $t did not listen (state '$state'): $(tail -5 /tmp/zygoted-$t.log | tr '\n' ' ')"
                continue
        fi
        export ZYGOTE_SOCKET=$sock
        check_status "$name" "$want"
        # The filter step of both tiers on the default profile's own program and reference.
        if [ "$t" = auto ]; then
                ref=$(echo "$flat" | grep -o '{[^{}]*"name":"default"[^{}]*}' |
                        grep -o '"reference_pid":[0-9]*' | cut -d: -f2)
                if [ -n "$ref" ] && [ -x /bin/filter-bench ]; then
                        filter-bench --label zygote.default-filter-step --pid "$ref" 1000
                else
                        fail zygote.default-filter-step "no reference_pid for default in the status"
                fi
        fi
        check_sandbox_proc "$name"
        check_pidns "$name"
        check_try_syscall "$name"
        check_workloads "$name"
        check_apparmor_caller "$name"
        time_spawns "$want"
        stop_zygoted "$t"
        sed 's/^/| zygoted: /' /tmp/zygoted-$t.log
done
