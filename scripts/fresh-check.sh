#!/usr/bin/env bash
# Rehearses the README on a fresh Debian 12: debootstraps bookworm into a folder, clones this
# repository into its /root/zygote and, there as root, types the README's two commands in order
# in that one clone, as a newcomer does: `scripts/run.sh` (it installs what it needs, builds and
# starts zygoted; a `launchctl run` and `launchctl status` are served, then it is stopped with
# Ctrl-C's SIGINT), then `scripts/test.sh` (whatever run.sh left in build/). Run as root on a
# Debian or Ubuntu host.
#
#   scripts/fresh-check.sh [--root DIR] [--keep] [--rev REV] [--kvm none|broken|hang|host]
#                          [--ctest REGEX] [--dir PATH] [--log FILE] [--variant minbase|buildd|-]
#
#   --root DIR      the new system's folder (default /var/tmp/zygote-fresh). It must not exist
#                   unless --keep is given, in which case an existing one is reused (its packages
#                   and its kernel cache in /root/.cache stay; the clone is always made anew)
#   --keep          keep DIR afterwards (default: delete it after the run)
#   --rev REV       the commit, branch or tag to test (default: HEAD of the checkout this script
#                   is in; uncommitted changes are not part of the clone)
#   --kvm MODE      what /dev/kvm looks like inside: none (absent; the default when the host has
#                   none), host (the host's node; the default when it has one), broken (a writable
#                   /dev/kvm on which QEMU's KVM fails at once), hang (like broken, and QEMU under
#                   -accel kvm starts the guest paused, as a KVM that never gets past the firmware)
#   --no-run        skip scripts/run.sh: only scripts/test.sh, in a new clone
#   --ctest REGEX   instead of run.sh and test.sh, install the dependencies, build the main tree
#                   and run only the ctest entries matching REGEX; e.g. --ctest '^kernel-lane$'
#                   checks the accelerator choice cheaply once the root's kernel cache is warm
#   --dir PATH      where in the root the clone goes (default /root/zygote); another PATH lets a
#                   partial run (--ctest) share a kept root with a run in progress
#   --log FILE      also write everything to FILE (default DIR.log, next to the root)
#   --variant V     debootstrap's variant (default minbase, the smallest Debian; - for the full
#                   default set of a Debian installation)
#   --mirror URL    Debian mirror for debootstrap (default: debootstrap's own)
#
# The mounts (/proc, /sys, a /dev of copied nodes with /dev/pts and /dev/shm) live in a private
# mount namespace and are also unmounted by a trap on every exit. It prints the time of each step,
# test.sh's summary (one line per lane) and its closing `N passed, M failed, K skipped`, and exits
# with test.sh's status.
set -euo pipefail

args=("$@")
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=/var/tmp/zygote-fresh
keep=0
rev=HEAD
clone_dir=/root/zygote
kvm=
ctest_re=
run_first=1
log=
variant=minbase
mirror=

say() { printf 'fresh-check: %s\n' "$*"; }
die() { say "$*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

while (($#)); do
        case $1 in
        --root) root=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        --rev) rev=$2; shift 2 ;;
        --kvm) kvm=$2; shift 2 ;;
        --ctest) ctest_re=$2; shift 2 ;;
        --no-run) run_first=0; shift ;;
        --log) log=$2; shift 2 ;;
        --dir) clone_dir=$2; shift 2 ;;
        --variant) variant=$2; shift 2 ;;
        --mirror) mirror=$2; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
        esac
done
[[ $EUID == 0 ]] || die "run as root (debootstrap, chroot and mounts need it)"
[[ -n $kvm ]] || { [[ -e /dev/kvm ]] && kvm=host || kvm=none; }
case $kvm in
none | broken | hang) ;;
host) [[ -c /dev/kvm ]] || die "--kvm host: this machine has no /dev/kvm" ;;
*) die "--kvm is none, broken, hang or host, not '$kvm'" ;;
esac
root=$(realpath -m "$root")
[[ $root != / ]] || die "--root / is not a new system"
log=${log:-$root.log}

# Everything below runs in a private mount namespace: the mounts never show on the host and
# vanish with the last process in it, even if the trap below does not get to run.
if [[ ${ZYGOTE_FRESH_NS:-} != 1 ]]; then
        export ZYGOTE_FRESH_NS=1
        mkdir -p "$(dirname "$log")"
        : >"$log"
        say "log: $log"
        set +e
        unshare --mount --propagation private -- "$0" "${args[@]}" </dev/null 2>&1 | tee -a "$log"
        exit "${PIPESTATUS[0]}"
fi

t_start=$SECONDS
step_t0=$SECONDS
step() { # step NAME: prints the time of the step before
        local now=$SECONDS
        ((now > step_t0)) && say "  ($((now - step_t0)) s)"
        step_t0=$now
        say "--- $*"
}
fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

mounts=()
cleanup() {
        local i
        for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
                umount -l "${mounts[i]}" 2>/dev/null || true
        done
        mounts=()
        if ((!keep)) && [[ -n ${created_root:-} ]]; then
                say "removing $root (--keep keeps it)"
                rm -rf --one-file-system "$root"
        fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
mnt() { # mnt TARGET MOUNT-ARGS...
        local target=$1
        shift
        mkdir -p "$target"
        mount "$@" "$target"
        mounts+=("$target")
}

# --- the commit to test --------------------------------------------------------------------------
sha=$(git -C "$repo" rev-parse --verify "$rev^{commit}") || die "--rev $rev: no such commit in $repo"
[[ -z $(git -C "$repo" status --porcelain --untracked-files=no) ]] ||
        say "note: $repo has uncommitted changes; they are not tested (the clone is of $sha)"
say "testing $(git -C "$repo" log -1 --format='%h %s' "$sha") in $root (kvm: $kvm)"

# --- the new system ---------------------------------------------------------------------------------
step "debootstrap"
if [[ -e $root ]]; then
        ((keep)) || die "$root exists: remove it, or reuse it with --keep"
        [[ -e $root/etc/debian_version && -x $root/usr/bin/apt-get ]] ||
                die "$root exists but is not a finished debootstrap: remove it"
        say "reusing $root (Debian $(cat "$root/etc/debian_version"))"
else
        if ! command -v debootstrap >/dev/null; then
                say "installing debootstrap"
                DEBIAN_FRONTEND=noninteractive apt-get update -q
                DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
        fi
        created_root=1
        opts=()
        [[ $variant == - ]] || opts+=(--variant="$variant")
        debootstrap "${opts[@]}" bookworm "$root" ${mirror:+"$mirror"} >"$root.debootstrap.log" 2>&1 ||
                { tail -20 "$root.debootstrap.log"; die "debootstrap failed, see $root.debootstrap.log"; }
        # debootstrap lists only the release itself; an installed Debian 12 also has its updates
        # and security suites (the kernel source among them), from the same mirror.
        url=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' "$root/etc/apt/sources.list")
        if [[ -n $url ]]; then
                printf 'deb %s bookworm-updates main\ndeb %s-security bookworm-security main\n' \
                        "$url" "${url%/}" >>"$root/etc/apt/sources.list"
        fi
        say "bookworm ($variant) in $root, $(du -sh --one-file-system "$root" | cut -f1)"
fi
# Name resolution for apt inside, as the host has it.
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# --- mounts ---------------------------------------------------------------------------------------
step "mounts"
mount --make-rprivate / 2>/dev/null || true
# The new / must be a mount point, as on a real machine: unshare --propagation and the like
# change the propagation of / and fail with EINVAL on a plain folder.
mnt "$root" --bind "$root"
mnt "$root/proc" -t proc proc
mnt "$root/sys" --rbind /sys
# /dev: a tmpfs holding copies of the host's character devices and links, so that /dev/kvm can
# be absent, the host's, or a fake one without touching the host's /dev.
mnt "$root/dev" -t tmpfs -o mode=0755,nosuid tmpfs
find /dev -maxdepth 1 \( -type c -o -type l \) ! -name kvm -exec cp -a {} "$root/dev/" \;
mnt "$root/dev/pts" --bind /dev/pts
mnt "$root/dev/shm" -t tmpfs -o mode=1777,nosuid,nodev tmpfs
[[ -d /dev/mqueue ]] && mnt "$root/dev/mqueue" -t mqueue mqueue
mnt "$root/run" -t tmpfs -o mode=0755,nosuid,nodev tmpfs
case $kvm in
host) cp -a /dev/kvm "$root/dev/kvm" ;;
broken | hang)
        # Writable, but not KVM: QEMU's first KVM ioctl fails.
        install -m 0666 /dev/null "$root/dev/kvm"
        ;;
esac
rm -f "$root/usr/local/bin/qemu-system-x86_64"
if [[ $kvm == hang ]]; then
        # A KVM that never gets past the firmware: the guest is started paused (-S) and so never
        # prints a line; the lane must give up on it and boot under tcg.
        cat >"$root/usr/local/bin/qemu-system-x86_64" <<'WRAP'
#!/bin/sh
# fresh-check --kvm hang: a guest asked to run under KVM is started paused, under tcg (this
# /dev/kvm is fake), so it never prints a line, as on a KVM that hangs in the firmware.
paused=
for a in "$@"; do
        shift
        case $a in
        kvm) set -- "$@" tcg; paused=-S ;;
        host) set -- "$@" max ;;
        *) set -- "$@" "$a" ;;
        esac
done
exec /usr/bin/qemu-system-x86_64 $paused "$@"
WRAP
        chmod 0755 "$root/usr/local/bin/qemu-system-x86_64"
fi

# --- the clone ------------------------------------------------------------------------------------
step "clone"
chmod 0700 "$root/root"
clone=$root/${clone_dir#/}
rm -rf "$clone"
git clone -q --no-hardlinks "$repo" "$clone"
git -C "$clone" checkout -q --detach "$sha"
chown -R 0:0 "$clone"
say "$clone_dir at $(git -C "$clone" rev-parse --short HEAD); /root is $(stat -c %a "$root/root")"

# --- the README's command -------------------------------------------------------------------------
if [[ -n $ctest_re ]]; then
        step "ctest -R $ctest_re"
        cmd="scripts/deps.sh --test &&
             cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZYGOTE_KERNEL_LANE=ON &&
             cmake --build build -j\"\$(nproc)\" &&
             cd build && ctest -R $(printf %q "$ctest_re") --output-on-failure -V"
else
        # The README's first command, in the background as a user's first terminal, until its
        # zygoted serves; a second terminal's `launchctl run` and `status`; Ctrl-C (SIGINT: run.sh
        # execs zygoted); then the second command in the same clone.
        cmd=
        if ((run_first)); then
                step "scripts/run.sh, launchctl run, stop; then scripts/test.sh"
                cmd='set -u
scripts/run.sh >/root/run.sh.log 2>&1 &
run=$!
export ZYGOTE_SOCKET=$PWD/build/zygoted.sock
served=0
for ((i = 0; i < 1200; i++)); do
        kill -0 $run 2>/dev/null || break
        if [[ -S $ZYGOTE_SOCKET ]] && build/launchctl status >/root/status.out 2>&1; then served=1; break; fi
        sleep 1
done
if ((!served)); then
        echo "fresh-check: scripts/run.sh did not serve within 20 minutes:"; tail -30 /root/run.sh.log
        kill -INT $run 2>/dev/null; wait $run; exit 1
fi
out=$(timeout 60 build/launchctl run -- /bin/echo hello from the sandbox 2>&1); rc=$?
strict=$(timeout 60 build/launchctl run --profile strict -- sh -c "grep Seccomp: /proc/self/status" 2>&1)
echo "fresh-check: run.sh served after $SECONDS s (dependencies, build, start): launchctl run -> \"$out\" (exit $rc); strict -> $strict"
kill -INT $run
timeout 60 tail --pid=$run -f /dev/null || { echo "fresh-check: zygoted did not stop on SIGINT"; kill -KILL $run; exit 1; }
wait $run; echo "fresh-check: run.sh stopped (exit $?); scripts/test.sh starts at $SECONDS s"
if [[ $out != "hello from the sandbox" || $rc != 0 || $strict != *"Seccomp:"*2 ]]; then
        echo "fresh-check: launchctl run failed after scripts/run.sh"; cat /root/status.out; exit 1
fi
'
        else
                step "scripts/test.sh"
        fi
        cmd+='scripts/test.sh'
fi
out=$root/${clone_dir#/}.out
set +e
chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/bash -c "cd $(printf %q "$clone_dir") && $cmd" </dev/null 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e
step "done"

echo
say "result on $(git -C "$repo" log -1 --format=%h "$sha"), kvm $kvm, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg):"
grep -E '^lane |kernel-lane: accelerator|(^|: )[0-9]+ passed, [0-9]+ failed|[0-9]+% tests passed' "$out" | sed 's/^/  /' || true
say "exit status $rc after $(fmt_time $((SECONDS - t_start)))"
exit "$rc"
