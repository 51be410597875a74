/* SPDX-License-Identifier: MIT */
/* Whose account a connection counts in (server-owner.c): the uid that owns the user namespace
 * chain of the process that connected, as zygoted's user namespace sees it. The transport's
 * facet; server.h exports what the layer above reads of it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Accounts that are not a uid of zygoted's user namespace. Neither is a uid a caller can run as
 * there ((uid_t)-1 is no uid at all; (uid_t)-2 is the overflow uid's neighbour, which no
 * distribution hands out); a caller mapped onto one only shares the account with others. */
#define ZD_ACCOUNT_UNKNOWN ((uid_t) -1) /* the connecting process was gone before it was looked at */
#define ZD_ACCOUNT_ROOT_NS ((uid_t) -2) /* a user namespace root made (a container's users) */

struct zd_owner {
        uid_t account; /* whose budgets the connection counts in */
        bool own_ns;   /* the process that connected is in zygoted's own user namespace */
};

/* zygoted's own user namespace, once at start: its inode number (0 when it cannot be read: then
 * every caller counts as in it, as before accounts). */
uint64_t zd_owner_own_userns(void);
/* The owner of the connection on conn_fd whose SO_PEERCRED is cred. With pidfd_ns, the kernel's
 * PIDFD_GET_USER_NAMESPACE on the SO_PEERPIDFD (Linux 6.11); without, or where it is missing,
 * /proc/PID/ns/user of SO_PEERCRED's pid, that process (the SO_PEERPIDFD's where the kernel has
 * it, Linux 6.5) alive throughout. Never fails: what cannot be read
 * makes the account ZD_ACCOUNT_UNKNOWN (never a caller's own uid: a process in a user namespace
 * of its own could otherwise count as one of its subordinate uids). */
struct zd_owner zd_owner_find(int conn_fd, const struct ucred *cred, uint64_t own_userns, bool pidfd_ns);
