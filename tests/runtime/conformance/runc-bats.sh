#!/bin/bash
# SPDX-License-Identifier: MIT
# runc 1.1.5's own integration suite (bats), fetched at test time from Debian's source archive
# (never kept in this repository), run against build/zygote-runc and against Debian's runc on
# the same machine. Fails when a test runc passes fails for zygote-runc and runc-known.txt does
# not name it with its reason. Exit 77 (skip) without bats, jq, dpkg-dev, Debian's runc or the
# archive.
#
#   tests/runtime/conformance/runc-bats.sh BUILD_DIR [FILE.bats ...]
#
# The sources come through apt with a private deb-src list and state (below BUILD_DIR), so the
# host's apt configuration is not touched. runc's suite downloads its busybox image from GitHub
# (get-images.sh): here the image is made from Debian's busybox-static instead, and
# get-images.sh replaced by one that names it; runc's console-socket helper (recvtty, Go) is
# recvtty.py here. The tests that need its other Go helpers (sd-helper, seccompagent) fail for
# both runtimes and so count for neither.
set -euo pipefail

build=$(realpath "${1:?usage: runc-bats.sh BUILD_DIR [FILE.bats ...]}")
shift
here=$(dirname "$(realpath "$0")")
version=1.1.5+ds1-1+deb12u1
runc_bin=/usr/sbin/runc
work=$build/conformance/runc
skip() { echo "SKIP: $*" >&2; exit 77; }

for tool in bats jq gawk dpkg-source apt-get script; do
	command -v "$tool" >/dev/null || skip "no $tool (Debian packages bats, jq, gawk, dpkg-dev)"
done
[[ -x $runc_bin ]] || skip "no $runc_bin (Debian's runc package): nothing to compare with"
[[ -x /bin/busybox ]] || skip "no /bin/busybox (busybox-static)"
[[ $(id -u) == 0 ]] || skip "runc's suite runs here as root"
[[ $("$runc_bin" --version | sed -n 's/^runc version //p') == 1.1.5* ]] || skip "Debian's runc is not 1.1.5"

# ---- the suite, from Debian's source archive (once per build directory) -------------------------
src=$work/src/runc
if [[ ! -d $src/tests/integration ]]; then
	apt_dir=$work/apt
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache" "$work/src"
	printf 'deb-src http://deb.debian.org/debian bookworm main\n' >"$apt_dir/sources.list"
	apt_opts=(-q -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache")
	apt-get "${apt_opts[@]}" update >"$work/apt.log" 2>&1 || skip "Debian's source archive unreachable ($work/apt.log)"
	(cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only "runc=$version") >>"$work/apt.log" 2>&1 ||
		skip "runc $version not in Debian's source archive ($work/apt.log)"
	(cd "$work/src" && dpkg-source -x --skip-debianization "runc_$version.dsc" runc) >>"$work/apt.log" 2>&1
fi
it=$src/tests/integration

# ---- runc's busybox image, from Debian's busybox-static -----------------------------------------
image=$it/testdata/busybox.tar.xz
if [[ ! -e $image ]]; then
	rootfs=$(mktemp -d)
	chmod 0755 "$rootfs" # the image's "/", as runc's busybox image has it (mktemp makes it 0700)
	mkdir -p "$rootfs"/{bin,etc,tmp,root,proc,sys,dev,home,var}
	cp /bin/busybox "$rootfs/bin/"
	for a in $(/bin/busybox --list); do [[ $a == busybox ]] || ln -s busybox "$rootfs/bin/$a"; done
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' >"$rootfs/etc/passwd"
	printf 'root:x:0:\ntty:x:5:\nnobody:x:65534:\n' >"$rootfs/etc/group"
	chmod 1777 "$rootfs/tmp"
	tar -C "$rootfs" -cJf "$image" .
	rm -rf "$rootfs"
fi
printf '#!/bin/sh\necho BUSYBOX_IMAGE=%s\necho DEBIAN_IMAGE=%s\n' "$image" "$image" >"$it/get-images.sh"
# runc's console-socket helper (Go, not in Debian's binary packages): one of ours in its place
mkdir -p "$src/contrib/cmd/recvtty"
ln -sf "$here/recvtty.py" "$src/contrib/cmd/recvtty/recvtty"
# started in the background by the suite, it could still be starting when the runtime connects:
# the suite's call waits until it listens instead (once per fetched tree)
sed -i 's|("$RECVTTY" --pid-file "$dir/pid" --mode null "$CONSOLE_SOCKET" &) &|"$RECVTTY" --fork-when-listening --pid-file "$dir/pid" --mode null "$CONSOLE_SOCKET"|' \
	"$it/helpers.bash"
grep -q -- '--fork-when-listening' "$it/helpers.bash" || { echo "runc-bats.sh: helpers.bash's setup_recvtty not found" >&2; exit 1; }

# ---- both runtimes, then the comparison ----------------------------------------------------------
if (($# == 0)); then
	set -- $(sed -n 's/^suite: //p' "$here/runc-known.txt")
fi
out=$work/results
rm -rf "$out"
for side in runc zygote-runc; do
	bin=$runc_bin
	[[ $side == zygote-runc ]] && bin=$build/zygote-runc
	mkdir -p "$out/$side"
	for f; do
		# each run its own tmp: the suite's state roots and bundles; a+x as runc's CI's /tmp is, so
		# that the container's root in a user namespace reaches its bundle (userns.bats)
		tmp=$(mktemp -d)
		chmod a+x "$tmp"
		mkdir "$tmp/recvtty"
		# under a terminal of its own, as runc's CI runs it (runc's foreground run opens
		# /dev/tty): script(1) gives the session one
		RUNC=$bin TMPDIR=$tmp ZYGOTE_RECVTTY_PIDS=$tmp/recvtty timeout 600 \
			script -qec "bats --tap '$it/$f' >'$out/$side/$f.tap' 2>'$out/$side/$f.err'" /dev/null \
			</dev/null >/dev/null || true
		# the console sockets' helpers a teardown missed (one that wrote its pid file late)
		for p in "$tmp"/recvtty/*; do [[ -e $p ]] && { kill -9 "${p##*/}" 2>/dev/null || true; }; done
		rm -rf "$tmp"
	done
done
python3 "$here/compare-tap.py" "$out" "$here/runc-known.txt" "$@"
