/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for record/'s readers of a profile (rec_json_parse: the file a recording is
 * merged into), of zygoted's eBPF record (rec_bpf_parse) and rec_oci_recording (a container's
 * seccomp object made a recording one):
 * whatever the bytes, no crash, no leak, no undefined behaviour; a parse either fails with a
 * message or gives a set whose written profile reads back to the same set.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <seccomp.h>

#include "fuzz-json.h"
#include "record-agent.h"
#include "record-bpf-read.h"
#include "record-json.h"
#include "record-set.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const struct rec_set *s) {
        struct rec_set back;
        json_object *o = NULL;

        if (rec_json_build(s, &o, NULL) < 0)
                abort();
        rec_set_init(&back);
        if (rec_json_parse(o, &back, NULL) < 0)
                abort();
        /* every named call of s is in what was written (calls without a name are left out) */
        for (size_t i = 0; i < s->n_calls; i++) {
                char *n = rec_syscall_name(s->calls[i].arch, s->calls[i].nr);
                /* a name libseccomp resolves to another number there (i386's socket: its
                 * socketcall multiplexer) reads back as that one */
                if (n && strcmp(n, "clone3") != 0 &&
                    seccomp_syscall_resolve_name_arch(s->calls[i].arch, n) == (int) s->calls[i].nr &&
                    !rec_set_has(&back, s->calls[i].arch, s->calls[i].nr))
                        abort();
                free(n);
        }
        rec_set_done(&back);
        json_object_put(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        json_object *o = fuzz_json(data, size), *rec = NULL;
        struct rec_set s;
        char *err = NULL;

        if (!o)
                return 0;
        rec_set_init(&s);
        if (rec_json_parse(o, &s, &err) < 0) {
                if (!err)
                        abort(); /* every refusal explains itself */
                free(err);
        } else
                round_trip(&s);
        rec_set_done(&s);
        /* zygoted's record: read, or -EINVAL; what it read writes and reads back */
        const char *incomplete = NULL;
        rec_set_init(&s);
        if (rec_bpf_parse(o, &s, &incomplete) == 0)
                round_trip(&s);
        rec_set_done(&s);
        err = NULL;
        if (rec_oci_recording(o, "/run/agent.sock", &rec, &err) == 0)
                json_object_put(rec);
        free(err);
        json_object_put(o);
        return 0;
}
