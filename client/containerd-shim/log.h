/* SPDX-License-Identifier: MIT */
/* The shim's log: one line on stderr, which the serving shim points at the bundle's "log" fifo
 * (containerd copies it into its own log). Used at the edges only: request handlers, main. */
#pragma once

#include <stdio.h>

#define zs_log(fmt, ...) fprintf(stderr, "containerd-shim-zygote-v2: " fmt "\n", ##__VA_ARGS__)
