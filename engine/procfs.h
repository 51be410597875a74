/* SPDX-License-Identifier: MIT */
/*
 * A procfs of our own, for writes that must reach the kernel's file and nothing put in its
 * place (the CVE-2019-16884 and CVE-2025-52881 classes): the runtime's writes (id maps,
 * oom_score_adj, sysctls: container/procfs-write.c) and a container process's AppArmor profile
 * (sandbox-lsm.c). Raw system calls only: usable between fork and execve.
 */
#pragma once

/* A fresh procfs instance (fsopen/fsmount, detached: nobody can mount on it) of the caller's pid
 * namespace; where that is refused (no CAP_SYS_ADMIN over it: rootless), the mount namespace's
 * /proc, reached without a symlink and checked to be procfs (else -EXDEV). An O_PATH fd or
 * -errno. */
int ze_procfs_open(void);
/* path below proc_fd opened with flags by openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
 * RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV): no symlink followed, no mount crossed (a bind over the
 * file or a directory on its way is refused), and the file checked to be on procfs (-EXDEV if
 * not). The fd or -errno. */
int ze_procfs_open_at(int proc_fd, const char *path, int flags);
