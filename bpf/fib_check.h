/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by bpf/fib_check.bpf.c and tests/fib_check.c. */
#ifndef FPMD_FIB_CHECK_H
#define FPMD_FIB_CHECK_H

#include <linux/types.h>

#define FIB_CHECK_BASES 65536 /* prefixes addresses are drawn around */
#define FIB_CHECK_MISSES 8    /* mismatches kept */

struct fib_check_miss {
	__u8 addr[16]; /* network order; IPv4 in the first 4 bytes */
	__u32 want;    /* the LPM trie's route value */
	__u32 got;     /* the fast lookup's */
};

#endif
