/* SPDX-License-Identifier: MIT */
/*
 * zygote-ref: a profile's reference process (protocol in reference.h).
 *
 *   zygote-ref               serve the control socket on fd 3 (started by zygoted only)
 *   zygote-ref --probe-exec  exit 0: what the daemon's inherit-tier probe worker execs
 *   zygote-ref --init        the init of a profile's pid namespace (zygote-init.c, pidns.h)
 *
 * It loads the profile's filter on itself once (INIT), then makes workers that inherit it
 * (SPAWN): sharing its memory until their exec (worker-nocopy.h), or forked. With the profile's pid namespace (two fds with INIT), it joins that namespace for its
 * children and its mount namespace first, before the filter: its workers are born there, while
 * it keeps its own pid in zygoted's namespace (CLONE_PARENT needs a parent that is not an init). It keeps its own capabilities: the workers drop theirs in child.c. It says nothing on
 * stderr unless it cannot go on; a malformed request gets an ERROR reply and is forgotten.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"
#include "fd-closer.h"
#include "pidfd-util.h"
#include "plan.h"
#include "reference.h"
#include "signal-util.h"
#include "util.h"
#include "worker-nocopy.h"
#include "zygote-init.h"

/* The largest request, static: the reference never grows. */
static char msg[ZR_REF_MAX_MSG] __attribute__((aligned(16)));

_Noreturn static void die(const char *what, int err) {
        fprintf(stderr, "zygote-ref: %s: %s\n", what, strerror(err));
        _exit(1);
}

static void reply(int ctl, uint32_t type, int32_t arg, int32_t err, const int *fds, size_t n_fds) {
        struct zr_ref_header h = { .magic = ZR_REF_MAGIC, .type = type, .arg = arg, .err = err };
        int r = zr_ref_send(ctl, &h, NULL, 0, fds, n_fds);

        /* the daemon went away (EPIPE) or stopped reading: nothing left to serve */
        if (r == -EPIPE || r == -ECONNRESET)
                _exit(0);
        if (r < 0)
                die("reply", -r);
}

/* Returns 0 so that a handler can end with return reply_error(...). */
static int reply_error(int ctl, enum ze_step step, int err) {
        reply(ctl, ZR_REF_ERROR, (int32_t) step, err, NULL, 0);
        return 0;
}

/* Whether a worker that switches ids may share our memory. Its setresuid resets the dumpable flag
 * of its memory, ours, to fs.suid_dumpable: 1 would let any process of its new uid ptrace it
 * before its exec, and through it write our memory (a root process's); 0 and 2 leave ptrace to
 * CAP_SYS_PTRACE. Read at each such spawn (an administrator may change it); unreadable: no. */
static bool ids_switch_safe(const struct ze_plan *p) {
        char c = 0;
        ssize_t n;
        int fd;

        if (!p->set_ids)
                return true;
        fd = open("/proc/sys/fs/suid_dumpable", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return false;
        n = read(fd, &c, 1);
        close(fd);
        return n == 1 && (c == '0' || c == '2');
}

static int handle_init(int ctl, const char *payload, size_t len, const int *fds, size_t n_fds, bool *initialized) {
        struct zr_ref_init init;
        struct sock_fprog prog;
        int r;

        if (*initialized)
                return reply_error(ctl, ZE_STEP_NONE, EALREADY);
        if (len < sizeof(init))
                return reply_error(ctl, ZE_STEP_NONE, EBADMSG);
        memcpy(&init, payload, sizeof(init));
        if ((n_fds != 0 && n_fds != 2) || init.n_insns == 0 || init.n_insns > ZE_PLAN_MAX_INSNS ||
            len != sizeof(init) + (size_t) init.n_insns * sizeof(struct sock_filter))
                return reply_error(ctl, ZE_STEP_NONE, EBADMSG);

        /* The profile's pid namespace (for our children: pid_for_children) and its mount
         * namespace, before the filter, which allows no setns. */
        if (n_fds == 2 && (syscall(SYS_setns, fds[0], CLONE_NEWPID) < 0 || syscall(SYS_setns, fds[1], CLONE_NEWNS) < 0))
                return reply_error(ctl, ZE_STEP_MNTNS, errno);
        /* before the filter, which may refuse mmap: the slots of workers that share our memory */
        if (!(init.flags & ZR_REF_INIT_FORK_WORKERS))
                (void) zr_nocopy_init();
        /* before the filter: the bounding set every worker starts from */
        r = ze_capbset_drop(init.capbset_drop, false, 0);
        if (r < 0)
                return reply_error(ctl, ZE_STEP_CAPBSET, -r);
        r = init.nnp ? ze_step_nnp() : 0;
        if (r < 0)
                return reply_error(ctl, ZE_STEP_NNP, -r);
        /* msg is static and 8-byte aligned; the program follows the 16-byte header and init */
        prog = (struct sock_fprog){
                .len = (unsigned short) init.n_insns,
                .filter = (struct sock_filter *) (void *) (payload + sizeof(init)),
        };
        r = ze_step_filter_load(&prog, init.filter_flags);
        if (r < 0)
                return reply_error(ctl, ZE_STEP_FILTER, -r);
        *initialized = true;
        reply(ctl, ZR_REF_READY, 0, 0, NULL, 0);
        return 0;
}

/* Set at start-up when every disposition is SIG_DFL and the mask empty, as child.c left them for
 * us: our workers then need not reset them, and may share our memory (worker-nocopy.h). Nothing
 * here installs a handler later. */
static bool signals_pristine;

static bool check_signals_pristine(void) {
        sigset_t handled, mask;

        zc_signals_handled(&handled);
        if (!sigisemptyset(&handled) || sigprocmask(SIG_SETMASK, NULL, &mask) < 0)
                return false;
        return sigisemptyset(&mask);
}

/* *n_caller: how many of fds (the first ones: the fd map's, ze_plan_pack()'s order) are the
 * caller's; the rest are the daemon's own pipes, pidfd and cgroup directories. Left alone (all
 * of them, as the caller's) when the plan does not unpack. */
static int handle_spawn(int ctl, const char *payload, size_t len, int *fds, size_t n_fds, size_t *n_caller,
                        struct zc_fd_closer *closer) {
        struct ze_plan_storage s = { 0 };
        struct zr_nocopy_slot *slot = NULL;
        struct ze_plan *plan = NULL;
        bool dumpable_reset = false;
        int pidfd = -1, r;
        long pid;

        /* A slot for a worker sharing our memory, unless a handler of ours could run in it: the
         * plan is unpacked there, where such a worker may read it while we serve on. */
        if (signals_pristine)
                slot = zr_nocopy_free_slot(&dumpable_reset);
        /* a worker that left switched ids, which set our dumpable flag to fs.suid_dumpable (2) */
        if (dumpable_reset)
                (void) prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
        r = slot ? zr_nocopy_unpack(slot, payload, len, fds, n_fds, &plan)
                 : ze_plan_unpack(payload, len, fds, n_fds, &s);
        if (r < 0)
                return reply_error(ctl, ZE_STEP_NONE, -r);
        if (!slot)
                plan = &s.plan;
        *n_caller = plan->n_fds;
        /* Whatever the daemon asked: this process's filter is the one the worker must have. */
        plan->filter_mode = ZE_FILTER_INHERITED;
        plan->filter_early = false;
        plan->signals_default = signals_pristine;

        /* The worker copies our fd table: the fds of earlier requests handed to the closer must
         * have left it first (a copy's close could wait on their caller). Bounded; past that the
         * clone goes on, as before. */
        (void) zc_fd_closer_settle(closer, ZC_FD_CLOSER_STUCK_MS);
        /* Sharing our memory (worker-nocopy.h), unless the worker may wait at a hold for long (a
         * create's Start: it would keep its slot) or its ids switch could make our memory
         * ptrace-able. Refused by the kernel or by our filter: forked from then on. */
        pid = -ENOEXEC;
        if (slot && (plan->hold_fd < 0 || plan->hold_quiet) && ids_switch_safe(plan)) {
                pid = zr_nocopy_clone(slot);
                if (pid == -EPERM || pid == -EACCES || pid == -ENOSYS || pid == -EINVAL)
                        zr_nocopy_disable();
                if (pid < 0)
                        pid = -ENOEXEC;
        }
        /* CLONE_PARENT: the worker is the daemon's child (its SIGCHLD, its waitid). A plain clone
         * (not clone3, which Docker's profile answers with ENOSYS and a caller's profile might
         * kill for; these flags pass its 0x7E020000 mask) with no new stack: the child returns
         * here on a copy of ours. */
        if (pid == -ENOEXEC)
                pid = clone_with_pidfd(CLONE_PARENT | CLONE_WITH_PIDFD_NO_CLONE3, &pidfd);
        if (pid == 0) {
                /* the control socket is CLOEXEC; child.c closes it with every other fd */
                ze_child_run(plan);
        }
        r = pid < 0 ? (int) -pid : 0;
        ze_plan_storage_done(&s);
        if (r)
                return reply_error(ctl, ZE_STEP_NONE, r);
        /* The pid alone: the worker is the daemon's unreaped child, so the daemon opens its pidfd
         * by pid, exactly, and an fd it could not receive (EMFILE) never loses the worker. */
        safe_close(pidfd);
        reply(ctl, ZR_REF_SPAWNED, (int32_t) pid, 0, NULL, 0);
        return 0;
}

/* A pool worker's plan, unpacked: static like msg, so that nothing is allocated once its request
 * is there. */
static char pool_mem[ZE_PLAN_UNPACK_MAX] __attribute__((aligned(16)));

/* What a pool worker touches before it blocks: its copies of these pages are made then, not after
 * its request came. A page of each buffer (an ordinary plan fits) and two of stack: every page
 * more is a fault the request may never need. */
#define POOL_PREFAULT 4096u

/* The stack the worker's steps run on, touched before the request (below the frame that calls
 * this): its copy-on-write faults are taken while idle. */
__attribute__((noinline)) static void prefault_stack(void) {
        volatile char area[POOL_PREFAULT * 2];

        for (size_t i = 0; i < sizeof(area); i += 4096)
                area[i] = 0;
}

_Noreturn static void pool_worker_fail(int status_fd, int err) {
        const struct ze_reporter to = { .fd = status_fd };

        ze_fail(&to, ZE_STEP_NONE, err, -1, ZE_EXIT_SETUP_FAILED);
}

/* A pool worker: forked ahead of demand, it holds nothing but its channel until its one request
 * comes, then is what handle_spawn()'s worker is: the same plan checks, the same filter (ours,
 * inherited), the same ze_child_run(). Once the request is there: no allocation, no fd but those
 * of the request. */
_Noreturn static void pool_worker_run(int chan) {
        struct ze_plan_storage s;
        struct zr_ref_header h;
        int fds[ZE_PLAN_MAX_FDS], status_fd = -1;
        size_t n_fds = 0;
        ssize_t n;
        int r;

        /* not the control socket, nor any fd of an earlier request the closer still holds */
        if (ze_step_close_all_but(0, &chan, 1) < 0)
                _exit(ZE_EXIT_SETUP_FAILED);
        memset(msg, 0, POOL_PREFAULT);
        memset(pool_mem, 0, POOL_PREFAULT);
        prefault_stack();
        do
                n = zr_ref_recv(chan, msg, sizeof(msg), fds, ELEMENTSOF(fds), &n_fds);
        while (n == -EINTR);
        if (n == 0)
                _exit(0); /* the daemon let it go (a smaller pool, a reload, its exit) */
        if (n < 0)
                _exit(ZE_EXIT_SETUP_FAILED); /* whatever came is closed: its status pipe sees EOF */
        if ((size_t) n >= sizeof(h)) {
                memcpy(&h, msg, sizeof(h));
                if (h.arg >= 0 && (size_t) h.arg < n_fds)
                        status_fd = fds[h.arg];
        }
        if ((size_t) n < sizeof(h) || h.magic != ZR_REF_MAGIC || h.type != ZR_REF_SPAWN)
                pool_worker_fail(status_fd, EBADMSG);
        r = ze_plan_unpack_into(msg + sizeof(h), (size_t) n - sizeof(h), fds, n_fds, pool_mem, sizeof(pool_mem), &s);
        if (r < 0)
                pool_worker_fail(status_fd, -r);
        /* as handle_spawn(): our filter is the one the worker must have */
        s.plan.filter_mode = ZE_FILTER_INHERITED;
        s.plan.filter_early = false;
        s.plan.signals_default = signals_pristine;
        /* the channel is CLOEXEC; child.c closes it with every other fd */
        ze_child_run(&s.plan);
}

/* POOL: a pool worker, forked as handle_spawn()'s workers are (after the closer settled, with
 * CLONE_PARENT), with only its channel (the one fd). */
static int handle_pool(int ctl, const int *fds, size_t n_fds, struct zc_fd_closer *closer) {
        int pidfd = -1;
        long pid;

        if (n_fds != 1)
                return reply_error(ctl, ZE_STEP_NONE, EBADMSG);
        (void) zc_fd_closer_settle(closer, ZC_FD_CLOSER_STUCK_MS);
        pid = clone_with_pidfd(CLONE_PARENT | CLONE_WITH_PIDFD_NO_CLONE3, &pidfd);
        if (pid == 0)
                pool_worker_run(fds[0]);
        if (pid < 0)
                return reply_error(ctl, ZE_STEP_NONE, (int) -pid);
        safe_close(pidfd);
        reply(ctl, ZR_REF_SPAWNED, (int32_t) pid, 0, NULL, 0);
        return 0;
}

int main(int argc, char **argv) {
        const int ctl = ZR_REF_CTL_FD;
        bool initialized = false;
        int type = 0;
        socklen_t sl = sizeof(type);

        /* _exit: under a sanitizer build, exit() would run LeakSanitizer, which needs ptrace,
         * which the profile's filter (inherited here) may block: the probe must not fail for
         * that. Nothing is buffered on stdio. */
        if (argc == 2 && strcmp(argv[1], "--probe-exec") == 0)
                _exit(0);
        if (argc == 2 && strcmp(argv[1], "--init") == 0)
                return zr_init_main();
        if (argc != 1) {
                fprintf(stderr, "usage: zygote-ref [--probe-exec | --init]\n"
                                "zygote-ref is started by zygoted; it serves a control socket on fd 3.\n");
                return 2;
        }
        if (getsockopt(ctl, SOL_SOCKET, SO_TYPE, &type, &sl) < 0 || type != SOCK_SEQPACKET)
                die("fd 3 is not the control socket", errno ? errno : ENOTSOCK);
        /* Not for the workers: they get it closed anyway, but never across an exec. */
        if (fcntl(ctl, F_SETFD, FD_CLOEXEC) < 0)
                die("fcntl", errno);
        /* Dies with the daemon (EOF on fd 3 covers the rest). Not dumpable: workers of the same
         * uid cannot ptrace it or read its memory. Both are inherited by nothing past exec. */
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL, 0UL, 0UL, 0UL);
        (void) prctl(PR_SET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
        signals_pristine = check_signals_pristine();

        /* Caller fds come with SPAWN; their close may wait on the caller (a FUSE file's FLUSH)
         * and this loop serves every caller of the profile: helpers close them (fd-closer.h).
         * Started before INIT's filter; without one (or without poll() under a caller's filter),
         * fds are closed here as before. */
        struct zc_fd_closer *closer = NULL;
        int timeout = -1;
        (void) zc_fd_closer_new(CLONE_WITH_PIDFD_NO_CLONE3, &closer);

        for (;;) {
                struct zr_ref_header h;
                int fds[ZE_PLAN_MAX_FDS];
                size_t n_fds = 0;
                ssize_t n;

                if (closer) {
                        struct pollfd p[2] = {
                                { .fd = ctl, .events = POLLIN },
                                { .fd = zc_fd_closer_fd(closer), .events = POLLIN },
                        };
                        int k = poll(p, 2, timeout);

                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k < 0) {
                                zc_fd_closer_free(closer); /* what it holds is closed or sent */
                                closer = NULL;
                        } else if (k == 0 || p[1].revents)
                                timeout = zc_fd_closer_dispatch(closer, zc_fd_closer_now_ms());
                        if (k >= 0 && !p[0].revents)
                                continue;
                }
                n = zr_ref_recv(ctl, msg, sizeof(msg), fds, ELEMENTSOF(fds), &n_fds);

                if (n == 0 || n == -ECONNRESET)
                        _exit(0); /* the daemon closed the socket; _exit as above */
                if (n == -EAGAIN || n == -EINTR)
                        continue;
                if (n == -EMSGSIZE) {
                        reply_error(ctl, ZE_STEP_NONE, EMSGSIZE);
                        continue;
                }
                if (n < 0)
                        die("recvmsg", (int) -n);
                if ((size_t) n < sizeof(h)) {
                        for (size_t i = 0; i < n_fds; i++)
                                zc_fd_closer_close(closer, fds[i]);
                        reply_error(ctl, ZE_STEP_NONE, EBADMSG);
                } else {
                        size_t n_caller = n_fds;

                        memcpy(&h, msg, sizeof(h));
                        if (h.magic == ZR_REF_MAGIC && h.type == ZR_REF_INIT) {
                                /* INIT's fds are the daemon's (the pid namespace's) */
                                (void) handle_init(ctl, msg + sizeof(h), (size_t) n - sizeof(h), fds, n_fds,
                                                   &initialized);
                                n_caller = 0;
                        } else if (h.magic == ZR_REF_MAGIC && h.type == ZR_REF_SPAWN && initialized)
                                (void) handle_spawn(ctl, msg + sizeof(h), (size_t) n - sizeof(h), fds, n_fds, &n_caller,
                                                    closer);
                        else if (h.magic == ZR_REF_MAGIC && h.type == ZR_REF_POOL && initialized) {
                                /* POOL's fd is the daemon's (the worker's channel) */
                                (void) handle_pool(ctl, fds, n_fds, closer);
                                n_caller = 0;
                        } else
                                reply_error(ctl, ZE_STEP_NONE, initialized ? EBADMSG : EPROTO);
                        /* The daemon's own (the status pipe it waits on for the exec) go at once;
                         * only the caller's may be slow to close. */
                        for (size_t i = 0; i < n_fds; i++)
                                if (i < n_caller)
                                        zc_fd_closer_close(closer, fds[i]);
                                else
                                        safe_close(fds[i]);
                }
                if (closer && n_fds > 0)
                        timeout = zc_fd_closer_dispatch(closer, zc_fd_closer_now_ms());
        }
}
