/* SPDX-License-Identifier: MIT */
/*
 * Limits on what one profile file may ask the daemon to hold. A header of its own so that every
 * part of the profile module (JSON reading, the OCI seccomp parser, the compiler) checks the same
 * numbers without depending on the module's API above them.
 */
#pragma once

#define ZP_PROFILE_MAX_FILE_SIZE (1024 * 1024)
#define ZP_PROFILE_MAX_RULES 4096  /* entries of "syscalls" */
#define ZP_PROFILE_MAX_NAMES 16384 /* syscall names over every entry */
#define ZP_PROFILE_MAX_ARGS 16     /* "args" of one entry (same index repeated means OR) */
#define ZP_PROFILE_MAX_ARCHES 16
#define ZP_PROFILE_MAX_ACCESS 1024 /* users, and groups, in "access" */
#define ZP_PROFILE_MAX_LIST 256    /* any other list: caps, arches, archMap, flags */
#define ZP_PROFILE_NAME_MAX 64
#define ZP_PROFILE_SET_MAX 256 /* profiles in one set */
