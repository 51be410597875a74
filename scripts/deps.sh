#!/usr/bin/env bash
# Installs everything zygote needs to build, run and test on Debian 12 (run as root).
#   scripts/deps.sh          build and run dependencies
#   scripts/deps.sh --test   also the test, fuzzing, benchmark and kernel-lane tools
set -euo pipefail

# scdoc: the man pages (man/*.scd); bash-completion: where its completions install (pkg-config);
# protobuf-c and the .proto files of containerd, its cgroups library, gogo and protobuf:
# containerd-shim-zygote-v2's messages, compiled at build time (client/containerd-shim/CMakeLists.txt); file: what
# cpack's DEB generator needs to find the programs' library dependencies (README: the Debian
# package); clang, libbpf-dev, bpftool: zygoted's BPF programs, built into libbpf skeletons
# (cmake/ZygoteBpf.cmake).
pkgs=(build-essential cmake pkg-config
      libseccomp-dev libcap-dev libsystemd-dev libev-dev libjson-c-dev
      scdoc bash-completion file clang libbpf-dev bpftool
      protobuf-c-compiler libprotobuf-c-dev libprotobuf-dev
      golang-github-containerd-containerd-dev golang-github-containerd-cgroups-dev
      golang-github-gogo-protobuf-dev)
if [[ "${1:-}" == "--test" ]]; then
  # procps: /bin/kill, which the systemd unit's ExecReload names (systemd-analyze verify checks
  # it exists); golang-github-containers-common: Podman's seccomp.json for unit-profile-diff;
  # clang-format: version 14, which scripts/check-format.sh (ctest lint-format) needs;
  # python3-grpcio, python3-protobuf: test_cri.py's CRI client (containerd's CRI plugin);
  # systemd-container (systemd-nspawn), debootstrap: the boot under a real systemd
  # (tests/system/test_systemd_boot.py); docker.io: test_docker.py's dockerd and its client
  # (/usr/bin/docker); apparmor: apparmor_parser and aa-exec, which the kernel lane's guest
  # (an AppArmor kernel) loads its profiles and runs a caller under one with; uidmap: newuidmap
  # and newgidmap, with which rootless podman maps a user's subordinate ids
  # (tests/runtime/test_podman_rootless.py); bats, jq, dpkg-dev: runc 1.1.5's own suite, fetched
  # from Debian's source archive at test time and run against zygote-runc and runc
  # (tests/runtime/conformance/runc-bats.sh, ctest runtime-conformance-runc); crun 1.8.1's suite
  # takes the same dpkg-dev and the crun package, and links its init statically with
  # libseccomp-dev's libseccomp.a (crun-py.sh, ctest runtime-conformance-crun); golang-go and the
  # golang-*-dev sources the OCI runtime-tools validation programs import, built offline at test
  # time (runtime-tools.sh, ctest runtime-conformance-oci); gawk: runc's suite's helpers.bash finds
  # the cgroup mounts with it (every cgroup test fails without).
  pkgs+=(libcmocka-dev python3 python3-pytest python3-pytest-timeout libclang-rt-14-dev
         systemd util-linux mount procps valgrind strace clang-format
         golang-github-containers-common
         python3-yaml python3-grpcio python3-protobuf systemd-container debootstrap
         hyperfine bubblewrap crun runc podman conmon containerd docker.io gnuplot-nox
         linux-source-6.1 bc bison flex libelf-dev cpio xz-utils rsync busybox-static qemu-system-x86
         apparmor uidmap bats jq dpkg-dev
         golang-go golang-github-google-uuid-dev golang-github-mrunalp-fileutils-dev
         golang-github-opencontainers-specs-dev golang-github-opencontainers-selinux-dev
         golang-github-hashicorp-go-multierror-dev golang-github-sirupsen-logrus-dev
         golang-github-urfave-cli-dev golang-gocapability-dev golang-golang-x-sys-dev gawk)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
fi
