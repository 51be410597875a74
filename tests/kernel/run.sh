#!/usr/bin/env bash
# The kernel lane: builds Debian's linux-source-6.1 with the patches in tests/kernel/patches/,
# boots it under QEMU with an initramfs of busybox, the kernel selftests, filter-bench and the
# zygote binaries, and sums the guest's check lines into `N passed, M failed, K skipped`.
#
#   tests/kernel/run.sh [--build-dir DIR] [--cache DIR] [--timeout SECS] [--jobs N]
#                       [--accel auto|kvm|tcg]
#
#   --build-dir DIR  where zygoted, launchctl, zygote-ref and try-syscall were built
#                    (default: ../../build from this script); checks that need them are skipped
#                    in the guest when they are missing
#   --cache DIR      kernel cache (default: ${XDG_CACHE_HOME:-~/.cache}/zygote-kernel)
#   --timeout SECS   wall-clock limit for the guest (default 300)
#   --jobs N         make -j for the kernel build (default: nproc)
#   --accel MODE     the QEMU accelerator (default: $ZYGOTE_KERNEL_ACCEL, else auto). auto uses
#                    KVM when /dev/kvm is writable and the guest's init prints its first line
#                    within $ZYGOTE_KERNEL_KVM_PROBE_SECS (default 20) seconds under it; else it
#                    stops that guest and boots again under software emulation (tcg). kvm and
#                    tcg force one, without fallback.
#
# The kernel, its uapi headers and the selftest binaries are cached in CACHE/kernel-KEY, KEY
# being a hash of the source tarball, the config fragment, the patches, the compiler and this
# script's build recipe. A miss rebuilds in CACHE/obj from the unpacked source in CACHE/src,
# which is kept: when only the patches change, the old ones are reversed and the new ones
# applied, so make rebuilds only what they touch.
#
# Exit status: 0 all checks passed (skips allowed), 1 a check failed or the guest did not finish,
# 77 a prerequisite is missing (the reason goes to stderr), 2 usage.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
build_dir=$repo/build
cache=${XDG_CACHE_HOME:-$HOME/.cache}/zygote-kernel
guest_timeout=300
jobs=$(nproc)
accel_mode=${ZYGOTE_KERNEL_ACCEL:-auto}
kvm_probe_secs=${ZYGOTE_KERNEL_KVM_PROBE_SECS:-20}
tarball=/usr/src/linux-source-6.1.tar.xz
srcname=linux-source-6.1
# Bump when the way the kernel or the selftests are built changes (part of the cache key).
recipe=3

log() { printf 'kernel-lane: %s\n' "$*" >&2; }
skip() { log "skipped: $*"; exit 77; }
die() { log "$*"; exit 1; }

while (($#)); do
        case $1 in
        --build-dir) build_dir=$(cd "$2" && pwd) || exit 2; shift 2 ;;
        --cache) cache=$2; shift 2 ;;
        --timeout) guest_timeout=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --accel) accel_mode=$2; shift 2 ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) log "unknown argument: $1"; exit 2 ;;
        esac
done

case $accel_mode in
auto | kvm | tcg) ;;
*) log "--accel (or ZYGOTE_KERNEL_ACCEL) is auto, kvm or tcg, not '$accel_mode'"; exit 2 ;;
esac

# --- prerequisites: a missing one is a skip, never a pass -----------------------------------
[[ -r $tarball ]] || skip "no $tarball (apt-get install linux-source-6.1)"
for tool in qemu-system-x86_64 gcc make bc bison flex cpio xz perl patch flock timeout; do
        command -v "$tool" >/dev/null || skip "no $tool on PATH (scripts/deps.sh --test installs it)"
done
[[ -e /usr/include/gelf.h ]] || skip "no libelf headers for objtool (apt-get install libelf-dev)"
busybox=/bin/busybox
bb_ldd=$(LC_ALL=C ldd "$busybox" 2>&1 || true)
[[ -x $busybox && $bb_ldd == *"not a dynamic executable"* ]] ||
        skip "no static busybox at $busybox (apt-get install busybox-static)"
[[ -x $build_dir/zygoted ]] ||
        skip "no zygoted in $build_dir (build first: it compiles profiles/default.json for filter-bench)"
for lib in libc.a libcap.a; do
        [[ -n $(gcc -print-file-name="$lib" | grep /) && -e $(gcc -print-file-name="$lib") ]] ||
                skip "no static $lib for the selftests (libc6-dev, libcap-dev)"
done

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
# One lane at a time per cache: the source tree and the object directory are shared.
exec 9>"$cache/lock"
flock 9

cflags=(-std=gnu11 -O2 -Wall -Wextra -Werror=implicit-function-declaration -Werror=format=2
        -Werror=missing-prototypes -Werror=shadow -Werror=strict-prototypes -Wno-unused-parameter
        -D_GNU_SOURCE)

# --- the kernel ------------------------------------------------------------------------------
patches=("$here"/patches/*.patch)
[[ -e ${patches[0]} ]] || die "no patches in $here/patches"

key=$( {
        echo "recipe $recipe"
        sha256sum "$tarball" | cut -d' ' -f1
        sha256sum "$here/kernel.config" | cut -d' ' -f1
        for p in "${patches[@]}"; do sha256sum "$p" | cut -d' ' -f1; done
        gcc --version | head -1
} | sha256sum | cut -c1-16)
kdir=$cache/kernel-$key
src=$cache/src/$srcname
applied=$cache/src/applied
obj=$cache/obj

# Makes $src hold the pristine source plus exactly the current patches. Patches that are already
# applied and unchanged, in order, stay applied; files that the re-applied ones leave with the
# same content get their old times back. Either way make rebuilds only what really changed
# (touching uapi/linux/seccomp.h alone would rebuild 625 objects).
prepare_source() {
        local p i f n=0 keep=0 old=() stash=$cache/src/stash
        rm -rf "$stash"
        if [[ -d $src && -d $applied ]]; then
                old=("$applied"/*.patch)
                [[ -e ${old[0]} ]] || old=()
                while ((keep < ${#old[@]} && keep < ${#patches[@]})) &&
                        cmp -s "${old[keep]}" "${patches[keep]}" &&
                        [[ $(basename "${old[keep]}") == $(basename "${patches[keep]}") ]]; do
                        keep=$((keep + 1))
                done
                mkdir -p "$stash"
                for ((i = keep; i < ${#old[@]}; i++)); do
                        sed -n 's|^+++ b/||p' "${old[i]}"
                done | sort -u | while IFS= read -r f; do
                        [[ -f $src/$f ]] || continue
                        n=$((n + 1))
                        cp -p "$src/$f" "$stash/$n" # keeps content and time
                        printf '%s %s\n' "$n" "$f" >>"$stash/index"
                done
                for ((i = ${#old[@]} - 1; i >= keep; i--)); do
                        log "reversing $(basename "${old[i]}")"
                        if ! patch -R -p1 -s -d "$src" <"${old[i]}" >/dev/null; then
                                log "could not reverse it: unpacking the source again"
                                rm -rf "$src"
                                keep=0
                                break
                        fi
                        rm -f "${old[i]}"
                done
        fi
        if [[ ! -d $src ]]; then
                log "unpacking $tarball"
                rm -rf "$cache/src"
                mkdir -p "$cache/src"
                tar -xf "$tarball" -C "$cache/src"
                keep=0
        fi
        ((keep > 0)) || { rm -rf "$applied"; mkdir -p "$applied"; }
        for ((i = keep; i < ${#patches[@]}; i++)); do
                p=${patches[i]}
                log "applying $(basename "$p")"
                patch -p1 -s -N -d "$src" <"$p" >/dev/null || die "$(basename "$p") does not apply to $srcname"
                cp "$p" "$applied/"
        done
        if [[ -e $stash/index ]]; then
                while read -r n f; do
                        if cmp -s "$stash/$n" "$src/$f"; then touch -r "$stash/$n" "$src/$f"; fi
                done <"$stash/index"
        fi
        rm -rf "$stash"
}

build_kernel() {
        local t0=$SECONDS tmp=$kdir.tmp opt st=(-static) hdr sel
        prepare_source
        mkdir -p "$obj"
        log "configuring (tinyconfig + $(basename "$here")/kernel.config)"
        {
                make -C "$src" O="$obj" ARCH=x86_64 tinyconfig
                "$src"/scripts/kconfig/merge_config.sh -m -O "$obj" "$obj/.config" "$here/kernel.config"
                make -C "$src" O="$obj" ARCH=x86_64 olddefconfig
        } >"$cache/config.log" 2>&1 || die "configuring failed, see $cache/config.log"
        while IFS= read -r opt; do
                [[ $opt == CONFIG_* ]] || continue
                grep -qx -- "$opt" "$obj/.config" || die "config: $opt did not stick (a dependency is missing), see $cache/config.log"
        done <"$here/kernel.config"

        log "building bzImage with -j$jobs (log: $cache/build.log; about 8 minutes when cold)"
        make -C "$src" O="$obj" ARCH=x86_64 -j"$jobs" bzImage >"$cache/build.log" 2>&1 ||
                { tail -30 "$cache/build.log" >&2; die "kernel build failed, see $cache/build.log"; }

        rm -rf "$tmp"
        mkdir -p "$tmp/selftests"
        hdr=$tmp/headers
        make -C "$src" O="$obj" ARCH=x86_64 INSTALL_HDR_PATH="$hdr" headers_install >>"$cache/build.log" 2>&1 ||
                die "headers_install failed, see $cache/build.log"

        # The selftests, static, against this kernel's uapi headers (they come first on the path).
        sel=$src/tools/testing/selftests
        gcc -O2 -Wall "${st[@]}" -I "$hdr/include" -o "$tmp/selftests/seccomp_clone_filter" \
                "$sel/seccomp/seccomp_clone_filter.c" &&
        gcc -O2 -Wall "${st[@]}" -pthread -I "$hdr/include" -o "$tmp/selftests/capbset_drop_mask" \
                "$sel/capabilities/capbset_drop_mask.c" &&
        gcc -O2 -Wall -Wno-unused-result "${st[@]}" -pthread -I "$hdr/include" -o "$tmp/selftests/seccomp_bpf" \
                "$sel/seccomp/seccomp_bpf.c" -lcap >"$cache/selftests.log" 2>&1 ||
                { cat "$cache/selftests.log" >&2; die "building the selftests failed"; }

        cp "$obj/arch/x86/boot/bzImage" "$tmp/bzImage"
        cp "$obj/.config" "$tmp/config"
        rm -rf "$kdir"
        mv "$tmp" "$kdir"
        log "kernel $key built in $((SECONDS - t0)) s"
        # Keep the three newest kernels (each with its headers and selftests: not small).
        ls -dt "$cache"/kernel-*/ | tail -n +4 | xargs -r rm -rf
}

if [[ -e $kdir/bzImage && -x $kdir/selftests/seccomp_clone_filter ]]; then
        log "kernel $key from the cache"
else
        build_kernel
fi

# --- the initramfs ---------------------------------------------------------------------------
work=$cache/last-run
rm -rf "$work"
mkdir -p "$work"
root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,tmp,run,root,etc,selftests,zygote/bin,zygote/profiles}
cp "$busybox" "$root/bin/busybox"
install -m 0755 "$here/guest/init" "$root/init"
install -m 0755 "$here/guest/zygote-checks.sh" "$root/zygote-checks.sh"
cp "$kdir"/selftests/* "$root/selftests/"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"

gcc "${cflags[@]}" -static -o "$root/bin/filter-bench" "$here/guest/filter-bench.c" ||
        die "building filter-bench failed"

# The program filter-bench times: the BPF of profiles/default.json, compiled by zygoted.
"$build_dir/zygoted" --check-profile "$repo/profiles/default.json" --dump-bpf "$root/zygote/default.bpf" \
        >"$work/dump-bpf.log" 2>&1 || die "zygoted --dump-bpf failed: $(cat "$work/dump-bpf.log")"
bpf_source="profiles/default.json (zygoted --dump-bpf)"

# zygote's binaries and helpers with the shared libraries they need, at the same paths.
copy_libs() {
        local lib
        for lib in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*'); do
                [[ -e $root$lib ]] || { mkdir -p "$root$(dirname "$lib")"; cp -L "$lib" "$root$lib"; }
        done
}
zygote_bins=()
for b in zygoted launchctl zygote-ref try-syscall; do
        if [[ -x $build_dir/$b ]]; then
                cp "$build_dir/$b" "$root/zygote/bin/"
                copy_libs "$build_dir/$b"
                zygote_bins+=("$b")
        fi
done
cp "$repo"/profiles/*.json "$root/zygote/profiles/" 2>/dev/null || true
# AppArmor's checks: the parser that loads the guest's profiles (and aa-exec, which puts a caller
# under one), and the engine's unit test of the profile step
apparmor_tools=()
for b in /usr/sbin/apparmor_parser /usr/bin/aa-exec "$build_dir/test-sandbox-lsm"; do
        if [[ -x $b ]]; then
                cp "$b" "$root/zygote/bin/"
                copy_libs "$b"
                apparmor_tools+=("$(basename "$b")")
        fi
done
# Containers (guest/container-checks.sh): zygote-runc and a busybox bundle whose config.json is
# `zygote-runc spec`'s with linux.resources, a cgroupsPath, a cgroup namespace and the script
# left to the guest
bundle=none
if [[ -x $build_dir/zygote-runc ]]; then
        cp "$build_dir/zygote-runc" "$root/zygote/bin/"
        copy_libs "$build_dir/zygote-runc"
        install -m 0755 "$here/guest/container-checks.sh" "$root/container-checks.sh"
        install -m 0755 "$here/guest/zygoted-container-checks.sh" "$root/zygoted-container-checks.sh"
        mkdir -p "$root/bundle/rootfs"/{bin,proc,sys,dev,tmp,etc,root}
        cp "$busybox" "$root/bundle/rootfs/bin/busybox"
        for a in sh cat sleep grep echo; do ln -s busybox "$root/bundle/rootfs/bin/$a"; done
        # what zygoted's containers run under their filter (zygoted-container-checks.sh)
        gcc "${cflags[@]}" -static -o "$root/bundle/rootfs/bin/try-syscall" "$repo/tests/helpers/try-syscall.c" ||
                die "building a static try-syscall failed"
        "$build_dir/zygote-runc" spec --bundle "$root/bundle" || die "zygote-runc spec failed"
        python3 - "$root/bundle" "$repo/profiles/default.json" <<'PY' || die "making the bundle's config failed"
import json, os, sys
path = os.path.join(sys.argv[1], "config.json")
cfg = json.load(open(path))
cfg["process"]["args"] = ["sh", "-c", "ZYGOTE_LANE_SCRIPT"]
cfg["process"]["terminal"] = False
cfg["linux"]["cgroupsPath"] = "ZYGOTE_LANE_CGROUP"
# its own cgroup at /sys/fs/cgroup, as Docker runs containers on v2 hosts
cfg["linux"]["namespaces"].append({"type": "cgroup"})
cfg["linux"]["resources"] = {"memory": {"limit": 67108864}, "pids": {"limit": 32},
                             "cpu": {"quota": 50000, "period": 100000, "cpus": "0"},
                             "devices": cfg["linux"].get("resources", {}).get("devices", [])}
json.dump(cfg, open(os.path.join(sys.argv[1], "config.template.json"), "w"), indent=1)
# zygoted's containers: the default profile's OCI object, whose program is that profile's
cfg["linux"]["seccomp"] = json.load(open(sys.argv[2]))["seccomp"]
json.dump(cfg, open(os.path.join(sys.argv[1], "config.clone.json"), "w"), indent=1)
os.remove(path)
PY
        bundle="busybox, config.json of zygote-runc spec"
fi
log "initramfs: busybox, 3 selftests, filter-bench on $bpf_source, zygote: ${zygote_bins[*]:-none}," \
        "AppArmor: ${apparmor_tools[*]:-none}, bundle: $bundle"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) >"$work/initramfs.cpio"

# --- boot ------------------------------------------------------------------------------------
# A /dev/kvm that exists and is writable does not prove that KVM runs a guest: on some virtual
# machines (nested virtualisation) QEMU starts and the guest never gets past the firmware, or
# QEMU fails at once. So in auto mode the real guest boots under KVM first, and the first line its
# init prints (`zygote-kernel-lane: start`) is the proof; without it within the probe time, that
# guest is stopped and the lane boots again under tcg. When KVM works this costs nothing.
start_marker='zygote-kernel-lane: start'
qemu_pid=
boot() { # boot ACCEL-ARGS...: starts the guest in the background, serial log in $work/serial.log
        : >"$work/serial.log"
        timeout -k 10 "$guest_timeout" qemu-system-x86_64 "$@" -nodefaults -nographic -no-reboot \
                -m 1024 -smp 2 -kernel "$kdir/bzImage" -initrd "$work/initramfs.cpio" \
                -append 'console=ttyS0 loglevel=5 panic=-1 lsm=apparmor' \
                -serial file:"$work/serial.log" -monitor none -display none >"$work/qemu.log" 2>&1 &
        qemu_pid=$!
}
# Waits (inotify, through tail -f) until the serial log shows the start marker, QEMU exits or
# SECS pass; true when the marker came. probe_timed_out=1 when the time ran out.
saw_start() {
        local secs=$1 st
        set +o pipefail
        timeout "$secs" tail -n +1 -f --pid="$qemu_pid" "$work/serial.log" 2>/dev/null | grep -q -m1 -F "$start_marker"
        st=("${PIPESTATUS[@]}")
        set -o pipefail
        probe_timed_out=$((st[0] == 124))
        return "${st[1]}"
}

kvm_state=
if [[ ! -e /dev/kvm ]]; then
        kvm_state="no /dev/kvm"
elif [[ ! -r /dev/kvm || ! -w /dev/kvm ]]; then
        kvm_state="/dev/kvm is not readable and writable"
fi
accel_name='' accel_why=''
t0=$SECONDS
case $accel_mode in
tcg)
        accel_name=tcg accel_why="forced (--accel tcg or ZYGOTE_KERNEL_ACCEL=tcg)"
        ;;
kvm)
        [[ -z $kvm_state ]] || die "--accel kvm: $kvm_state"
        accel_name=kvm accel_why="forced (--accel kvm or ZYGOTE_KERNEL_ACCEL=kvm)"
        ;;
auto)
        if [[ -n $kvm_state ]]; then
                accel_name=tcg accel_why="$kvm_state"
        else
                log "trying KVM: the guest must print its first line within ${kvm_probe_secs}s"
                boot -accel kvm -cpu host
                if saw_start "$kvm_probe_secs"; then
                        accel_name=kvm accel_why="/dev/kvm is writable and the guest's init started under it in $((SECONDS - t0))s"
                else
                        # Time ran out: the guest is stuck; else QEMU gave up by itself.
                        if ((probe_timed_out)); then
                                why="its serial console stayed silent for ${kvm_probe_secs}s"
                                kill "$qemu_pid" 2>/dev/null || true
                                wait "$qemu_pid" || true
                        else
                                set +e
                                wait "$qemu_pid"
                                why="QEMU exited with status $? after $((SECONDS - t0))s"
                                set -e
                                qemu_said=$(grep -m1 . "$work/qemu.log" || true)
                                why+=${qemu_said:+ (QEMU: $qemu_said)}
                        fi
                        cp "$work/serial.log" "$work/kvm-probe-serial.log"
                        cp "$work/qemu.log" "$work/kvm-probe-qemu.log"
                        accel_name=tcg
                        accel_why="/dev/kvm is writable but KVM did not run the guest: $why; logs in $work/kvm-probe-*.log"
                        qemu_pid=
                fi
        fi
        ;;
esac
log "accelerator: $accel_name, because $accel_why"
if [[ -z $qemu_pid ]]; then
        t0=$SECONDS
        if [[ $accel_name == kvm ]]; then boot -accel kvm -cpu host; else boot -accel tcg -cpu max; fi
fi
log "guest running under $accel_name (limit ${guest_timeout}s)"
set +e
wait "$qemu_pid"
qemu_rc=$?
set -e
guest_s=$((SECONDS - t0))

# --- results ---------------------------------------------------------------------------------
tr -d '\r' <"$work/serial.log" >"$work/serial.txt"
results=$work/results.txt
grep -E '^(ok|FAIL|skip) ' "$work/serial.txt" >"$results" || true
if ! grep -q '^zygote-kernel-lane: done' "$work/serial.txt"; then
        echo "FAIL guest: did not finish (qemu exit status $qemu_rc after ${guest_s}s); serial log tail:" >>"$results"
        tail -20 "$work/serial.txt" | sed 's/^/    /' >>"$results"
fi
# A kernel warning, oops or lockdep report fails the lane even when every test passed.
if grep -nE 'BUG:|Oops|WARNING:|Kernel panic|circular locking|possible recursive locking|INFO: task .* blocked' \
        "$work/serial.txt" >"$work/kernel-problems.txt"; then
        echo "FAIL kernel-log: $(head -1 "$work/kernel-problems.txt")" >>"$results"
fi

cat "$results"
grep -E '^(info|filter step)' "$work/serial.txt" || true
passed=$(grep -c '^ok ' "$results" || true)
failed=$(grep -c '^FAIL ' "$results" || true)
skipped=$(grep -c '^skip ' "$results" || true)
echo "info accel $accel_name: $accel_why"
echo "guest ran ${guest_s}s under $accel_name; serial log: $work/serial.log"
echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0 && passed > 0))
