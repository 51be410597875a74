/* SPDX-License-Identifier: MIT */
/*
 * Step 7a of the sandbox-setup module (sandbox.h): the container's NUMA memory policy
 * (linux.memoryPolicy), set on the process itself before it runs anything of the container, as
 * runc 1.3 and crun set it. Between clone and execve: one raw system call.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox.h"

int ze_sb_set_mempolicy(const struct ze_sb_mempolicy *p) {
        if (!p->set)
                return 0;
        /* the mode's flags travel in the mode argument; maxnode 0 is an empty set of nodes */
        if (syscall(SYS_set_mempolicy, p->mode | (int) p->flags, p->maxnode ? p->nodes : NULL, p->maxnode) < 0)
                return -errno;
        return 0;
}
