/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Layouts shared by the compact-FIB prototype's BPF programs
 * (fibproto.bpf.c) and its harness (fibproto.c). Every table is an array
 * of 64-bit words (BPF arrays round values up to 8 bytes), either one big
 * mmapable array ("big": vmalloc, 4 KiB pages) or an ARRAY_OF_MAPS of
 * 16 KiB chunks ("ch": kmalloc, the kernel's huge-page direct map).
 */
#ifndef FIBPROTO_H
#define FIBPROTO_H

#define FP_CH_SHIFT 11 /* 2048 words = 16 KiB per chunk */
#define FP_CH_WORDS (1u << FP_CH_SHIFT)
#define FP_NCH_SHIFT 10 /* 1024 nodes of 24 bytes per node chunk */
#define FP_NCH_NODES (1u << FP_NCH_SHIFT)

#define FP_BATCH 64 /* lookups per program run */

/* DIR-24-8: u32 entries two per word; FP_T8 | group, or a value. */
#define FP_T8 0x80000000u

/* Poptrie, s = 18: direct entries (u32, two per word) are FP_LEAF | value
 * index, or a node index. Strides 6 (bits 18-23), 6 (24-29), 2 (30-31).
 * Leaves: u16 value indexes, four per word. */
#define FP_POP_S 18
#define FP_LEAF 0x80000000u
struct fp_node {
	unsigned long long vec;  /* bit c: child c is a node */
	unsigned long long lvec; /* bit c: leaf c starts a new run */
	unsigned int base0;      /* first leaf */
	unsigned int base1;      /* first child node */
};

/* DXR, D16R: direct words FP_DXR_U | value index, or n << 32 | base;
 * ranges: u32 (start << 16 | value index), two per word, sorted. */
#define FP_DXR_BITS 16
#define FP_DXR_U (1ull << 63)

enum fp_prog {
	FP_NULL, FP_D248, FP_D248_CH, FP_POP, FP_POP_CH, FP_DXR, FP_DXR_CH,
	FP_NPROG
};

struct fp_dst_blk {
	unsigned int d[FP_BATCH]; /* host order */
};

#endif
