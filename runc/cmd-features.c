/* SPDX-License-Identifier: MIT */
/*
 * zygote-runc features: what this runtime supports, in the OCI runtime-spec's features format.
 */
#include <stdio.h>
#include <stdlib.h>

#include "profile.h"

#include "util.h"
#include "verbs.h"

int zrc_cmd_features(const struct zct_ctx *c, const struct zrc_verb *v, int argc, char **argv) {
        (void) c;
        (void) v;
        (void) argc;
        (void) argv;
        /* the capabilities this kernel has, by name, as runc lists them */
        json_object *caps = json_object_new_array();
        for (int cap = 0; cap <= zct_oci_cap_last(); cap++) {
                char *name = NULL;
                if (zp_cap_to_name((unsigned) cap, &name) >= 0)
                        json_object_array_add(caps, json_object_new_string(name));
                free(name);
        }
        json_object *modes = json_object_new_array(), *mflags = json_object_new_array();
        for (size_t i = 0; zct_mempolicy_mode_names[i]; i++)
                json_object_array_add(modes, json_object_new_string(zct_mempolicy_mode_names[i]));
        for (size_t i = 0; zct_mempolicy_flag_names[i]; i++)
                json_object_array_add(mflags, json_object_new_string(zct_mempolicy_flag_names[i]));
        printf("{\n"
               "  \"ociVersionMin\": \"1.0.0\",\n"
               "  \"ociVersionMax\": \"" ZCT_RUNC_OCI_VERSION "\",\n"
               "  \"hooks\": "
               "[\"prestart\",\"createRuntime\",\"createContainer\",\"startContainer\",\"poststart\",\"poststop\"],\n"
               "  \"mountOptions\": [\"ro\",\"rw\",\"nosuid\",\"suid\",\"nodev\",\"dev\",\"noexec\",\"exec\","
               "\"bind\",\"rbind\",\"private\",\"rprivate\",\"shared\",\"rshared\",\"slave\",\"rslave\","
               "\"unbindable\",\"runbindable\",\"relatime\",\"norelatime\",\"strictatime\",\"noatime\",\"tmpcopyup\","
               "\"idmap\",\"ridmap\"],"
               "\n"
               "  \"linux\": {\n"
               "    \"namespaces\": [\"cgroup\",\"ipc\",\"mount\",\"network\",\"pid\",\"user\",\"uts\",\"time\"],\n"
               "    \"capabilities\": %s,\n"
               "    \"cgroup\": {\"v1\": true, \"v2\": true, \"systemd\": false, \"systemdUser\": false, \"rdma\": "
               "true},\n"
               "    \"seccomp\": {\"enabled\": true, \"actions\": [\"SCMP_ACT_ALLOW\",\"SCMP_ACT_ERRNO\","
               "\"SCMP_ACT_KILL\",\"SCMP_ACT_KILL_PROCESS\",\"SCMP_ACT_KILL_THREAD\",\"SCMP_ACT_LOG\","
               "\"SCMP_ACT_NOTIFY\",\"SCMP_ACT_TRACE\",\"SCMP_ACT_TRAP\"]},\n"
               "    \"apparmor\": {\"enabled\": true},\n"
               "    \"selinux\": {\"enabled\": false},\n"
               "    \"mountExtensions\": {\"idmap\": {\"enabled\": true}},\n"
               "    \"memoryPolicy\": {\"modes\": %s, \"flags\": %s}\n"
               "  },\n"
               "  \"annotations\": {\"io.zygote.runtime\": \"zygote-runc " ZYGOTE_VERSION "\"}\n"
               "}\n",
               json_object_to_json_string_ext(caps, JSON_C_TO_STRING_PLAIN),
               json_object_to_json_string_ext(modes, JSON_C_TO_STRING_PLAIN),
               json_object_to_json_string_ext(mflags, JSON_C_TO_STRING_PLAIN));
        json_object_put(caps);
        json_object_put(modes);
        json_object_put(mflags);
        return 0;
}
