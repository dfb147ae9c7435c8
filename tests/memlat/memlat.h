/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by memlat.bpf.c and memlat.c (doc/fib-compact.md, "The machine's
 * limit"). */
#ifndef FPMD_MEMLAT_H
#define FPMD_MEMLAT_H

#define ML_LINE_WORDS 8	 /* u64 words per 64-byte cache line */
#define ML_CH_WORDS 2048 /* one kmalloc'ed chunk: 16 KiB */
#define ML_MAX_HOPS 1024
#define ML_OFF_START 14 /* frame offsets: start line, hops (u32 each) */
#define ML_OFF_HOPS 18

#endif
