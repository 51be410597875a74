/* SPDX-License-Identifier: MIT */
/*
 * Signal names; see signal-util.h.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "signal-util.h"

int zc_signal_from_string(const char *s) {
        const char *name = s;
        char *end;
        long n;

        if (!s || !*s)
                return -EINVAL;
        if (isdigit((unsigned char) s[0])) {
                errno = 0;
                n = strtol(s, &end, 10);
                if (errno != 0 || *end || n < 1 || n > SIGRTMAX)
                        return -EINVAL;
                return (int) n;
        }
        if (strncasecmp(name, "SIG", 3) == 0)
                name += 3;
        for (int i = 1; i < SIGRTMIN; i++) {
                const char *abbrev = sigabbrev_np(i);
                if (abbrev && strcasecmp(name, abbrev) == 0)
                        return i;
        }
        if (strncasecmp(name, "RTMIN", 5) == 0 || strncasecmp(name, "RTMAX", 5) == 0) {
                bool min = toupper((unsigned char) name[4]) == 'N';
                int base = min ? SIGRTMIN : SIGRTMAX, sig;

                if (name[5] == 0)
                        return base;
                if (name[5] != (min ? '+' : '-') || !isdigit((unsigned char) name[6]))
                        return -EINVAL;
                errno = 0;
                n = strtol(name + 6, &end, 10);
                if (errno != 0 || *end || n > SIGRTMAX - SIGRTMIN)
                        return -EINVAL;
                sig = min ? base + (int) n : base - (int) n;
                return sig;
        }
        return -EINVAL;
}

void zc_signals_handled(sigset_t *ret) {
        sigemptyset(ret);
        for (int sig = 1; sig < _NSIG; sig++) {
                struct sigaction old;

                if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &old) < 0)
                        continue;
                if (old.sa_handler != SIG_DFL)
                        sigaddset(ret, sig);
        }
}

void zc_signals_reset(const sigset_t *only) {
        struct sigaction sa = { .sa_handler = SIG_DFL };
        sigset_t none;

        for (int sig = 1; sig < _NSIG; sig++) {
                if (sig == SIGKILL || sig == SIGSTOP || (only && sigismember(only, sig) != 1))
                        continue;
                (void) sigaction(sig, &sa, NULL);
        }
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
}
