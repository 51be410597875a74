/* SPDX-License-Identifier: MIT */
/*
 * A small classic-BPF interpreter for seccomp programs, and path-length measurement.
 *
 * zygote compiles profiles with libseccomp and never trusts its own reading of the result: the
 * tests run the exported program here, over every syscall number and argument samples, and
 * compare decisions with other programs; zygoted --check-profile reports the longest path.
 *
 * Semantics follow the kernel's seccomp loader (net/core/filter.c bpf_check_classic,
 * kernel/seccomp.c seccomp_check_filter) and its classic-to-eBPF conversion: A and X start at 0,
 * division by zero ends the program with 0 (SECCOMP_RET_KILL_THREAD), shifts by X use X & 31.
 * Pure functions: no allocation except zp_bpf_longest_path's scratch, no logging.
 */
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

/* Checks a program the way the kernel does before accepting it as a seccomp filter: length
 * 1..BPF_MAXINSNS, only the instructions seccomp allows, aligned in-bounds loads from struct
 * seccomp_data, jumps inside the program, scratch memory written before it is read, a return
 * at the end. Returns 0 or -EINVAL. */
int zp_bpf_check(const struct sock_filter *prog, size_t len);

/* Runs a checked program on d. *ret_action gets the 32-bit return value (SECCOMP_RET_*),
 * *ret_steps (optional) the number of instructions executed, the final return included.
 * Returns 0, or -EINVAL when the program fails zp_bpf_check. */
int zp_bpf_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *d, uint32_t *ret_action,
               unsigned *ret_steps);

/* Longest path, in instructions executed (final return included), through a checked program for
 * one architecture and syscall number, over every value of the arguments and the instruction
 * pointer: branches on those are followed both ways. Exact for programs that keep only a few
 * distinct register states per instruction (libseccomp's do); beyond ZP_BPF_MAX_STATES states at
 * one instruction it over-approximates, so the result stays an upper bound.
 * Returns 0, -EINVAL for a program that fails zp_bpf_check, -ENOMEM. */
#define ZP_BPF_MAX_STATES 16
int zp_bpf_longest_path(const struct sock_filter *prog, size_t len, uint32_t arch, uint32_t nr, unsigned *ret_steps);

/* Same over a range of syscall numbers nr_first .. nr_first + n_nr - 1 (wrapping at 2^32).
 * *ret_worst_nr (optional) gets the first number that reaches the maximum. */
int zp_bpf_longest_path_range(const struct sock_filter *prog, size_t len, uint32_t arch, uint32_t nr_first,
                              uint32_t n_nr, unsigned *ret_steps, uint32_t *ret_worst_nr);

/* Human-readable name of a seccomp return action ("ALLOW", "ERRNO(1)", "KILL_PROCESS", ...),
 * written to buf. Returns buf. */
char *zp_bpf_action_to_string(uint32_t action, char *buf, size_t size);
