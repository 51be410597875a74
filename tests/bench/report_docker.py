"""Docker's default seccomp profile resolved to the OCI rules a runtime gets (report.py, bench.py):
by architecture, by Docker's default capabilities and by minimum kernel.
"""
import re


# ---- Docker profile -> OCI --------------------------------------------------------------------------

GO_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "s390x": "s390x", "ppc64le": "ppc64le",
           "riscv64": "riscv64", "i686": "386", "loongarch64": "loong64"}
SCMP_ARCH = {"amd64": "SCMP_ARCH_X86_64", "arm64": "SCMP_ARCH_AARCH64", "arm": "SCMP_ARCH_ARM",
             "s390x": "SCMP_ARCH_S390X", "ppc64le": "SCMP_ARCH_PPC64LE", "riscv64": "SCMP_ARCH_RISCV64",
             "386": "SCMP_ARCH_X86", "loong64": "SCMP_ARCH_LOONGARCH64"}
DOCKER_DEFAULT_CAPS = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
                       "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
                       "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"]


def kernel_at_least(release, wanted):
    def parts(v):
        return [int(x) for x in re.findall(r"\d+", v)[:2]]
    return parts(release) >= parts(wanted)


def docker_to_oci(profile, machine="x86_64", kernel="6.1", caps=DOCKER_DEFAULT_CAPS):
    """Resolves a Docker seccomp profile into the plain OCI linux.seccomp object that Docker hands
    to runc for a container with these capabilities on this machine: archMap picks the native
    architecture and its sub-architectures; includes/excludes (arches, caps, minKernel) select the
    rules. Follows moby's profiles/seccomp setupSeccomp."""
    arch = GO_ARCH.get(machine, machine)
    native = SCMP_ARCH.get(arch)
    out = {"defaultAction": profile["defaultAction"]}
    if "defaultErrnoRet" in profile:
        out["defaultErrnoRet"] = profile["defaultErrnoRet"]
    arches = list(profile.get("architectures") or [])
    for a in profile.get("archMap") or []:
        if a["architecture"] == native:
            arches.append(a["architecture"])
            arches.extend(a.get("subArchitectures") or [])
    if arches:
        out["architectures"] = arches
    calls = []
    for c in profile.get("syscalls") or []:
        ex = c.get("excludes") or {}
        inc = c.get("includes") or {}
        if ex.get("arches") and arch in ex["arches"]:
            continue
        if ex.get("caps") and any(x in caps for x in ex["caps"]):
            continue
        if ex.get("minKernel") and kernel_at_least(kernel, ex["minKernel"]):
            continue
        if inc.get("arches") and arch not in inc["arches"]:
            continue
        if inc.get("caps") and not all(x in caps for x in inc["caps"]):
            continue
        if inc.get("minKernel") and not kernel_at_least(kernel, inc["minKernel"]):
            continue
        names = list(c.get("names") or ([c["name"]] if c.get("name") else []))
        n = {"names": names, "action": c["action"]}
        if c.get("args"):
            n["args"] = c["args"]
        if c.get("errnoRet") is not None:
            n["errnoRet"] = c["errnoRet"]
        calls.append(n)
    out["syscalls"] = calls
    return out
