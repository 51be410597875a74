#!/usr/bin/env bash
# Builds the offline busybox image that podman and containerd run in tests/runtime, with no
# registry: a rootfs tar of Debian's busybox-static (its applet links made here, as
# `busybox --install -s` would) and the static try-syscall, `podman import`ed into a throwaway
# store and written out with `podman save --format oci-archive`; `ctr image import` and
# `podman load` both read that archive. A second archive of the same rootfs, the "pause" image,
# has `sleep` for ever as its entrypoint: the long-running process of a Kubernetes pod sandbox
# (containerd's CRI plugin, test_cri.py). The rootfs tar itself is what `docker import` reads
# (test_docker.py: Docker 20.10 loads no OCI archive), and needs no podman.
#
#   tests/runtime/make-image.sh BUILD_DIR            prints the archive's path (BUILD_DIR/runtime-image/)
#   tests/runtime/make-image.sh BUILD_DIR --pause    prints the pause image's archive path
#   tests/runtime/make-image.sh BUILD_DIR --rootfs   prints the rootfs tar's path
#
# The files are cached: they are rebuilt only when busybox, try-syscall-static or this script
# is newer. Exit 77 (a skip) without busybox-static, or without podman for the archives; needs
# root (podman's store, the rootfs tar's owners).
set -euo pipefail

build=$(cd "${1:?usage: make-image.sh BUILD_DIR [--pause|--rootfs]}" && pwd)
busybox=/bin/busybox
trysys=$build/try-syscall-static
name=localhost/zygote-busybox:latest
pause_name=localhost/zygote-pause:latest
out=$build/runtime-image
archive=$out/busybox.oci.tar
pause_archive=$out/pause.oci.tar
rootfs_tar=$out/rootfs.tar
case "${2:-}" in
  "") print=$archive; made=("$archive" "$pause_archive") ;;
  --pause) print=$pause_archive; made=("$archive" "$pause_archive") ;;
  --rootfs) print=$rootfs_tar; made=("$rootfs_tar") ;;
  *) echo "usage: make-image.sh BUILD_DIR [--pause|--rootfs]" >&2; exit 2 ;;
esac

[[ -x $busybox ]] || { echo "make-image: no $busybox (Debian package busybox-static)" >&2; exit 77; }
[[ $print == "$rootfs_tar" ]] || command -v podman >/dev/null ||
  { echo "make-image: no podman (Debian package podman)" >&2; exit 77; }

fresh=1
for f in "$busybox" "$0" ${trysys:+$( [[ -x $trysys ]] && echo "$trysys")}; do
  for a in "${made[@]}"; do
    [[ -f $a && ! $f -nt $a ]] || fresh=0
  done
done
if ((fresh)); then echo "$print"; exit 0; fi

mkdir -p "$out"
# in /tmp: podman refuses a runroot path longer than 50 characters
work=$(mktemp -d /tmp/zygote-image.XXXXXX)
cleanup() {
  # podman's store may hold overlay mounts of its own even after an import: unmount before rm
  podman --root "$work/store" --runroot "$work/run" --storage-driver vfs system reset --force \
    >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

root=$work/rootfs
mkdir -p "$root"/{bin,proc,sys,dev,tmp,etc,root,run}
chmod 1777 "$root/tmp"
cp "$busybox" "$root/bin/busybox"
for a in $("$busybox" --list); do
  [[ $a == busybox ]] || ln -s busybox "$root/bin/$a"
done
[[ -x $trysys ]] && cp "$trysys" "$root/bin/try-syscall"
echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"
tar -C "$root" --numeric-owner -cf "$work/rootfs.tar" .
if [[ $print == "$rootfs_tar" ]]; then
  mv "$work/rootfs.tar" "$rootfs_tar"
  echo "$print"
  exit 0
fi

# A store of its own (vfs: no mounts to leave behind), not the machine's configuration
printf '[storage]\ndriver = "vfs"\ngraphroot = "%s"\nrunroot = "%s"\n' "$work/store" "$work/run" >"$work/storage.conf"
export CONTAINERS_CONF=/dev/null CONTAINERS_STORAGE_CONF=$work/storage.conf
p=(podman --root "$work/store" --runroot "$work/run" --storage-driver vfs --events-backend file)
"${p[@]}" import -q --change 'CMD ["/bin/sh"]' --change 'ENV PATH=/bin' "$work/rootfs.tar" "$name" >/dev/null
"${p[@]}" save --format oci-archive -o "$work/image.tar" "$name" >/dev/null 2>&1
# sleep's largest argument busybox takes: a pod sandbox is killed, it never ends by itself
"${p[@]}" import -q --change 'ENTRYPOINT ["/bin/sleep", "2147483647"]' --change 'ENV PATH=/bin' \
  "$work/rootfs.tar" "$pause_name" >/dev/null
"${p[@]}" save --format oci-archive -o "$work/pause.tar" "$pause_name" >/dev/null 2>&1
mv "$work/image.tar" "$archive"
mv "$work/pause.tar" "$pause_archive"
echo "$print"
