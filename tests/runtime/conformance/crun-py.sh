#!/bin/bash
# SPDX-License-Identifier: MIT
# crun 1.8.1's own integration suite (tests/test_*.py), fetched at test time from Debian's source
# archive (never kept in this repository), run against build/zygote-runc and against Debian's crun
# on the same machine. Fails when a test crun passes fails for zygote-runc and crun-known.txt does
# not name it with its reason. Exit 77 (skip) without Debian's crun 1.8.1, dpkg-dev, a static C
# library or the archive.
#
#   tests/runtime/conformance/crun-py.sh BUILD_DIR [test_FILE.py ...]
#
# The suite takes its runtime from $OCI_RUNTIME and the container's program from $INIT (its
# tests/init.c, built here statically with the one config.h it needs). Each file runs in a mount
# and pid namespace of its own: a container a test leaves behind ends with it, and on a hybrid
# host the cgroup2 hierarchy is unmounted there, as crun 1.8.1 refuses the hybrid layout (both
# runtimes then see the same cgroup v1 view). The sources come through apt with a private deb-src
# list and state (below BUILD_DIR), as runc-bats.sh fetches runc's.
set -euo pipefail

build=$(realpath "${1:?usage: crun-py.sh BUILD_DIR [test_FILE.py ...]}")
shift
here=$(dirname "$(realpath "$0")")
version=1.8.1-1+deb12u1
crun_bin=/usr/bin/crun
work=$build/conformance/crun
skip() { echo "SKIP: $*" >&2; exit 77; }

for tool in python3 cc dpkg-source apt-get unshare timeout; do
	command -v "$tool" >/dev/null || skip "no $tool (Debian packages python3, build-essential, dpkg-dev, util-linux)"
done
[[ -x $crun_bin ]] || skip "no $crun_bin (Debian's crun package): nothing to compare with"
[[ $(id -u) == 0 ]] || skip "crun's suite runs here as root"
[[ $("$crun_bin" --version | sed -n 's/^crun version //p') == 1.8.1 ]] || skip "Debian's crun is not 1.8.1"
[[ -e /usr/lib/x86_64-linux-gnu/libseccomp.a || -e /usr/lib/libseccomp.a ]] ||
	skip "no static libseccomp (libseccomp-dev) for the suite's init"

# ---- the suite, from Debian's source archive (once per build directory) -------------------------
src=$work/src/crun
if [[ ! -d $src/tests ]]; then
	apt_dir=$work/apt
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache" "$work/src"
	printf 'deb-src http://deb.debian.org/debian bookworm main\n' >"$apt_dir/sources.list"
	apt_opts=(-q -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache")
	apt-get "${apt_opts[@]}" update >"$work/apt.log" 2>&1 || skip "Debian's source archive unreachable ($work/apt.log)"
	(cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only "crun=$version") >>"$work/apt.log" 2>&1 ||
		skip "crun $version not in Debian's source archive ($work/apt.log)"
	(cd "$work/src" && dpkg-source -x --skip-debianization "crun_$version.dsc" crun) >>"$work/apt.log" 2>&1
fi

# ---- the container's program: tests/init.c, static, with seccomp (its seccomp-listener probe) ---
init=$work/init
if [[ ! -x $init ]]; then
	mkdir -p "$work/include"
	printf '#define HAVE_SECCOMP 1\n#define HAVE_ERROR_H 1\n' >"$work/include/config.h"
	cc -static -O2 -I"$work/include" "$src/tests/init.c" -o "$init" -lseccomp >"$work/init.log" 2>&1 ||
		skip "the suite's init does not link statically ($work/init.log)"
fi

# sd-notify-proxy asks ./tests/init itself (check-feature open_tree) before it runs a container
[[ -x $src/tests/init ]] || cp "$init" "$src/tests/init"

# ---- both runtimes, then the comparison ----------------------------------------------------------
if (($# == 0)); then
	set -- $(sed -n 's/^suite: //p' "$here/crun-known.txt")
fi
# crun refuses a hybrid host (cgroup2 mounted beside the v1 hierarchies): the suite's namespace
# goes without it
hybrid=0
[[ $(stat -f -c %T /sys/fs/cgroup) == tmpfs && $(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null) == cgroup2fs ]] &&
	hybrid=1
frozen=/sys/fs/cgroup/freezer/frozen
thaw() {
	[[ -d $frozen ]] || return 0
	echo THAWED >"$frozen/freezer.state" 2>/dev/null || true
	rmdir "$frozen" 2>/dev/null || true
}
in_ns='[ "$HYBRID" = 0 ] || umount /sys/fs/cgroup/unified
python3 -u "$0"
[ -d '"$frozen"' ] && echo THAWED >'"$frozen"'/freezer.state
exit 0'
out=$work/results
rm -rf "$out"
for side in crun zygote-runc; do
	bin=$crun_bin
	[[ $side == zygote-runc ]] && bin=$build/zygote-runc
	mkdir -p "$out/$side"
	for f; do
		# the suite makes its bundles below its working directory: each run its own
		tmp=$(mktemp -d)
		ln -s "$src/tests" "$tmp/tests"
		# test_delete.py freezes a container's init in a v1 freezer cgroup "frozen" of the host's
		# and may leave it there: thawed after the file, or the namespace's end could not kill it
		(cd "$tmp" && OCI_RUNTIME=$bin INIT=$init HYBRID=$hybrid timeout 120 \
			unshare --mount --propagation private --pid --fork --mount-proc sh -c "$in_ns" "tests/$f" \
			</dev/null >"$out/$side/$f.tap" 2>"$out/$side/$f.err") || true
		thaw
		rm -rf "$tmp"
	done
done
python3 "$here/compare-tap.py" --peer crun --suite "crun 1.8.1's suite" "$out" "$here/crun-known.txt" "$@"
