/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the IPv4 DIR-24-8 writer's units share, and nothing outside them
 * uses: fib4.c (the prefix store, add / delete, commit), fib4_tbl24.c
 * (tbl24's parts), fib4_tbl8.c (tbl8's groups), fib4_open.c (open,
 * adoption, close). The API is fib4.h.
 */
#ifndef FPMD_FIB4_PRIV_H
#define FPMD_FIB4_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "common/slab.h"
#include "fib/fib4.h"

struct fib4_rule {
	struct hnode node;
	uint32_t addr; /* host order, host bits zero */
	uint32_t val;
	uint32_t slot; /* in rules_v4 */
	uint8_t len;
};

/* Every table's rules (fib4.c): one per route, common/slab.h. */
extern struct slab_cache fib4_rule_cache;

#define PE FIB4_PART_ENTRIES

static inline void store(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Entries in part p (the last one is short). */
static inline uint32_t part_len(uint32_t p)
{
	uint32_t left = FPMD_TBL24_ENTRIES - p * PE;

	return left < PE ? left : PE;
}

static inline uint32_t part_words(uint32_t p)
{
	return part_len(p) / 2;
}

static inline uint32_t get24(const struct fib4 *f, uint32_t i)
{
	uint32_t p = i / PE;
	const struct fib4_part *P = f->part[p];

	return P ? P->t[i - p * PE] : f->dval[p];
}

static inline uint32_t mask_of(uint8_t len)
{
	return len ? ~0u << (32 - len) : 0;
}

/* The 256 entries of tbl8 group g. */
static inline uint32_t *grp(const struct fib4 *f, uint32_t g)
{
	if (f->adopting)
		return f->t8priv + (size_t)g * FPMD_TBL8_GROUP;
	return (uint32_t *)chunks_mem(&f->t8c, g / FPMD_TBL8_CHUNK_GROUPS) +
	       (g % FPMD_TBL8_CHUNK_GROUPS) * FPMD_TBL8_GROUP;
}

static inline struct fpmd_rule_v4 *rec_of(const struct fib4 *f,
					   uint32_t slot)
{
	return (struct fpmd_rule_v4 *)chunks_mem(&f->rulec,
						 slot / FPMD_RULES_CHUNK) +
	       slot % FPMD_RULES_CHUNK;
}

/* fib4_tbl24.c: tbl24's parts */
void fib4_set24(struct fib4 *f, uint32_t i, uint32_t v, uint8_t len);
void fib4_dematerialize(struct fib4 *f, uint32_t p);
int fib4_run_commit(struct fib4 *f, uint32_t p, uint32_t from, uint32_t to,
		    uint32_t op);
int fib4_write_words(struct fib4 *f, uint32_t p, uint32_t from, uint32_t to,
		     const uint64_t *src);
int fib4_flush24(struct fib4 *f);
void fib4_paint24(struct fib4 *f, uint32_t i, uint32_t n, uint8_t len,
		  bool del, uint32_t val, uint8_t vlen);
int fib4_prepare(struct fib4 *f, uint32_t addr, uint8_t len);
int fib4_fill_clear(struct fib4 *f);
int fib4_publish_parts(struct fib4 *f);

/* fib4_tbl8.c: tbl8's groups */
void fib4_group_free(struct fib4 *f, uint32_t g);
void fib4_groups_release(struct fib4 *f, bool wait);
void fib4_groups_flushed(struct fib4 *f);
bool fib4_group_available(const struct fib4 *f, uint32_t prefer);
int64_t fib4_group_alloc(struct fib4 *f, uint32_t prefer);
void fib4_paint8(struct fib4 *f, uint32_t g, uint32_t from, uint32_t n,
		 uint8_t len, bool del, uint32_t val, uint8_t vlen);
void fib4_maybe_collapse(struct fib4 *f, uint32_t i, uint32_t g);

/* fib4.c: the prefix store */
struct fib4_rule *fib4_rule_new(struct fib4 *f, uint32_t addr, uint8_t len,
				uint32_t val, uint32_t slot);
void fib4_slot_mark(struct fib4 *f, uint32_t s);
int fib4_paint_add(struct fib4 *f, uint32_t addr, uint8_t len, uint32_t val,
		   uint32_t prefer);

#endif
