#!/bin/bash
# SPDX-License-Identifier: MIT
# The OCI runtime-tools validation suite (its validation/* programs and the runtimetest binary they
# run inside each container), fetched at test time from Debian's source archive (never kept in this
# repository), built offline with Debian's Go against Debian's golang-*-dev sources, and run
# against Debian's runc and crun and build/zygote-runc on the same machine. Fails when an
# assertion runc or crun passes fails for zygote-runc and runtime-tools-known.txt does not name it
# with its reason. Exit 77 (skip) without Go, the -dev sources, runc, crun or the archive.
#
#   tests/runtime/conformance/runtime-tools.sh BUILD_DIR [PROGRAM ...]
#
# Debian 12's golang-github-opencontainers-runtime-tools-dev carries the library only (no
# validation/ nor cmd/), and its source package's tarball is no longer in the archive this host
# reaches: the source comes from Debian 13's package (0.9.0.109, a later snapshot of the same
# tree), through apt with a private deb-src list and state (below BUILD_DIR). The programs import
# github.com/mndrix/tap-go, which Debian does not package: tap-go/ here is a small TAP writer of
# our own under that import path. Each program runs in a mount and pid namespace of its own (a
# container a program leaves behind ends with it); on a hybrid host the cgroup2 hierarchy is
# unmounted there, as crun 1.8.1 refuses the hybrid layout, so that all three runtimes see the
# same cgroup v1 view. The build (about 45 s) is kept in BUILD_DIR; the runs take about 100 s
# for each runtime.
set -euo pipefail

build=$(realpath "${1:?usage: runtime-tools.sh BUILD_DIR [PROGRAM ...]}")
shift
here=$(dirname "$(realpath "$0")")
package=golang-github-opencontainers-runtime-tools
version=0.9.0.109.ge931285-1
work=$build/conformance/runtime-tools
declare -A runtimes=([runc]=/usr/sbin/runc [crun]=/usr/bin/crun [zygote-runc]=$build/zygote-runc)
skip() { echo "SKIP: $*" >&2; exit 77; }

for tool in go apt-get unshare timeout tar python3; do
	command -v "$tool" >/dev/null || skip "no $tool (Debian packages golang-go, apt, util-linux, tar, python3)"
done
for side in runc crun; do
	[[ -x ${runtimes[$side]} ]] || skip "no ${runtimes[$side]} (Debian's $side package): nothing to compare with"
done
[[ $(id -u) == 0 ]] || skip "the validation programs run containers as root"
arch=$(go env GOARCH)
[[ $arch == amd64 || $arch == 386 ]] || skip "the suite ships a rootfs for amd64 and 386 only, not $arch"
# the packages the programs import, from Debian's golang-*-dev (scripts/deps.sh --test)
gocode=/usr/share/gocode/src
for dir in github.com/google/uuid github.com/mrunalp/fileutils github.com/opencontainers/runtime-spec/specs-go \
	github.com/opencontainers/selinux github.com/hashicorp/go-multierror github.com/sirupsen/logrus \
	github.com/urfave/cli github.com/syndtr/gocapability golang.org/x/sys; do
	[[ -d $gocode/$dir ]] || skip "no $gocode/$dir (scripts/deps.sh --test installs the golang-*-dev sources)"
done

# ---- the suite, from Debian's source archive (once per build directory) -------------------------
src=$work/src/runtime-tools
if [[ ! -d $src/validation ]]; then
	apt_dir=$work/apt
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache" "$work/src"
	printf 'deb-src http://deb.debian.org/debian trixie main\n' >"$apt_dir/sources.list"
	apt_opts=(-q -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache")
	apt-get "${apt_opts[@]}" update >"$work/apt.log" 2>&1 || skip "Debian's source archive unreachable ($work/apt.log)"
	# apt checks each file against the archive's signed index; the .dsc is not always served
	# here, and only the upstream tarball is needed (Debian's one patch skips Go unit tests)
	(cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only "$package=$version") >>"$work/apt.log" 2>&1 || true
	tarball=$work/src/${package}_${version%-*}.orig.tar.xz
	[[ -f $tarball ]] || skip "$package $version not in Debian's source archive ($work/apt.log)"
	mkdir -p "$src.tmp"
	tar -C "$src.tmp" --strip-components=1 -xf "$tarball"
	mv "$src.tmp" "$src"
fi

# ---- the programs and runtimetest, offline (GOPATH mode: the fetched tree, tap-go, Debian's) -----
bin=$work/bin
# rebuilt when tap-go, Go or this recipe changes
stamp=$(cat "$here/tap-go/tap.go" "$(command -v go)" "$0" | sha256sum | cut -c1-16)
if [[ $(cat "$bin/.stamp" 2>/dev/null) != "$stamp" ]]; then
	rm -rf "$bin" "$work/gopath"
	mkdir -p "$bin/programs" "$work/gopath/src/github.com/opencontainers" "$work/gopath/src/github.com/mndrix"
	ln -s "$src" "$work/gopath/src/github.com/opencontainers/runtime-tools"
	ln -s "$here/tap-go" "$work/gopath/src/github.com/mndrix/tap-go"
	export GO111MODULE=off GOFLAGS='' GOPATH=$work/gopath:/usr/share/gocode GOCACHE=$work/gocache CGO_ENABLED=0
	(cd "$work/gopath/src/github.com/opencontainers/runtime-tools" &&
		go build -o "$bin/runtimetest" ./cmd/runtimetest &&
		for d in validation/*/; do
			n=$(basename "$d")
			[[ $n == util ]] || go build -o "$bin/programs/$n" "./$d" || exit 1
		done) >"$work/build.log" 2>&1 || { echo "runtime-tools.sh: the suite does not build ($work/build.log)" >&2; exit 1; }
	echo "$stamp" >"$bin/.stamp"
fi

# ---- the three runtimes, then the comparison ------------------------------------------------------
if (($# == 0)); then
	mapfile -t programs < <(cd "$bin/programs" && ls)
	set -- "${programs[@]}"
fi
hybrid=0
[[ $(stat -f -c %T /sys/fs/cgroup) == tmpfs && $(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null) == cgroup2fs ]] &&
	hybrid=1
# the programs untar rootfs-ARCH.tar.gz and copy runtimetest from their working directory
run=$work/run
mkdir -p "$run"
cp "$bin/runtimetest" "$src/rootfs-$arch.tar.gz" "$run/"
in_ns='[ "$HYBRID" = 0 ] || umount /sys/fs/cgroup/unified
exec "$0"'
out=$work/results
rm -rf "$out"
for side in runc crun zygote-runc; do
	mkdir -p "$out/$side"
	for p; do
		rc=0
		# each program's bundles in a TMPDIR of its own, gone with it; searchable by all, as /tmp
		# is (linux_uid_mappings' root in a user namespace is no owner of it)
		tmp=$(mktemp -d)
		chmod 0755 "$tmp"
		(cd "$run" && RUNTIME=${runtimes[$side]} TMPDIR=$tmp HYBRID=$hybrid timeout 120 \
			unshare --mount --propagation private --pid --fork --mount-proc sh -c "$in_ns" "$bin/programs/$p" \
			</dev/null >"$out/$side/$p.tap" 2>"$out/$side/$p.err") || rc=$?
		echo "$rc" >"$out/$side/$p.rc"
		rm -rf "$tmp"
	done
done
python3 "$here/compare-oci.py" "$out" "$here/runtime-tools-known.txt" "$@"
