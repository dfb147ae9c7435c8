/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by fib4c.c, fib4c_tbl.c and fib4c_open.c only. */
#ifndef FPMD_FIB4C_PRIV_H
#define FPMD_FIB4C_PRIV_H

#include <time.h>

#include "fib/fib4c.h"

/* A private t24 entry that points at a group of 256 (/25-/32 inside). */
#define FIB4C_T8 0x80000000u

static inline uint64_t fib4c_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint32_t fib4c_mask_of(int len)
{
	return len ? ~0u << (32 - len) : 0;
}

/* A dxr_dir entry of a block (not FPMD_DXR_U): its number of ranges. */
static inline uint32_t fib4c_blk_n(uint64_t e)
{
	return (uint32_t)(e >> 32) & FPMD_DXR_N_MASK;
}

/* The words it takes: a long range each, or two short ones. */
static inline uint32_t fib4c_blk_words(uint64_t e)
{
	return e & FPMD_DXR_S ? (fib4c_blk_n(e) + 1) / 2 : fib4c_blk_n(e);
}

/* Range i of block e as a long range (start << 16 | value index). */
static inline uint32_t fib4c_blk_range(const uint32_t *r, uint64_t e,
				       uint32_t i)
{
	uint32_t w;

	if (!(e & FPMD_DXR_S))
		return r[i];
	w = r[i / 2] >> (i % 2 * 16);
	return (w & 0xff00) << 16 | (w & 0xff);
}

/* fib4c.c: index vi's value, live at once */
void fib4c_val_write(struct fib4c *f, uint32_t vi, uint32_t v);

/* fib4c_tbl.c */
/* Add or change the default route (p: its entry, or NULL). */
int fib4c_default_set(struct fib4c *f, struct fib4c_pfx *p, uint32_t val);
/* A new rule: room and a record slot first, then the rule itself. */
int fib4c_rule_reserve(struct fib4c *f, int64_t *slot);
struct fib4c_pfx *fib4c_rule_insert(struct fib4c *f, uint32_t a, int len,
				    uint32_t vi, int64_t slot);
int fib4c_paint(struct fib4c *f, uint32_t a, int len, uint32_t vi, int l1,
		int only);
uint64_t fib4c_pkey(uint32_t a, int len);
struct fib4c_pfx *fib4c_pinsert(struct fib4c *f, uint64_t k);
int fib4c_pgrow(struct fib4c *f);
void fib4c_pdelete(struct fib4c *f, struct fib4c_pfx *p);
void fib4c_slot_put(struct fib4c *f, uint32_t s);
int64_t fib4c_slot_get(struct fib4c *f);
void fib4c_record_write(struct fib4c *f, uint32_t s, uint32_t a, int len,
			uint32_t val);

#endif
