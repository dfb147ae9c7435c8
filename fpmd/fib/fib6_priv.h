/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the IPv6 writer's units share, and nothing outside them uses:
 * fib6.c (routes and markers, add / delete, open), fib6_table.c (the
 * slots_v6 table), fib6_tree.c (the nodes in address order). The API is
 * fib6.h.
 */
#ifndef FPMD_FIB6_PRIV_H
#define FPMD_FIB6_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/slab.h"
#include "fib/fib6.h"

struct fib6_node {
	struct hnode node;
	uint8_t addr[16];                /* host bits zero */
	uint8_t len;
	bool route;                      /* a route of its own */
	bool in_map;
	uint32_t val;                    /* the route's value */
	uint32_t written, wflags;        /* what slots_v6 holds */
	uint32_t refs;                   /* routes whose path passes here */
	uint32_t mark;                   /* refs under the new lens list */
	uint32_t slot;                   /* in slots_v6, when in_map */
	uint32_t nslot;                  /* in the table being grown */
};

/* Every table's nodes (fib6.c): one or two per route, common/slab.h. */
extern struct slab_cache fib6_node_cache;

struct node_list {
	struct fib6_node **v;
	size_t n, cap;
};

/* Slot k of a table made of chunks c. */
static inline struct fpmd_v6_slot *chunk_slot(const struct fib6_chunk *c,
						uint32_t k)
{
	return &c[k >> FPMD_V6_CHUNK_SHIFT].slots[k & (FPMD_V6_CHUNK_SLOTS - 1)];
}

static inline struct fpmd_v6_slot *slot_at(const struct fib6 *f, uint32_t k)
{
	return chunk_slot(f->chunks, k);
}

static inline void store32(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* fib6.c: the best route covering a at length <= maxlen (0: none), and
 * its length in *lenp. */
uint32_t fib6_best(const struct fib6 *f, const uint8_t *a, int maxlen,
		   int *lenp);

/* fib6_direct.c: the direct stage, kept after each change of slots_v6
 * (added: a new route, not a new value) */
int fib6_direct_open(struct fib6 *f);
void fib6_direct_close(struct fib6 *f);
void fib6_direct_add(struct fib6 *f, const struct fib6_node *x, bool added);
void fib6_direct_del(struct fib6 *f, const uint8_t *p, uint8_t len);

/* fib6_tree.c: the nodes in address order */
int fib6_cb_insert(void **root, struct fib6_node *x);
void fib6_cb_remove(void **root, struct fib6_node *x);
void fib6_cb_free(void *p);
void fib6_cb_under(void *root, const uint8_t *p, unsigned int len,
		   struct node_list *l);

/* fib6_table.c: the slots_v6 table */
void fib6_grace(const struct fib6 *f);
void fib6_chunks_free(struct fib6_chunk *c, uint32_t n);
void fib6_shrink(struct fib6 *f);
int fib6_map_write(struct fib6 *f, struct fib6_node *x, uint32_t v,
		   uint32_t flags);
void fib6_map_remove(struct fib6 *f, struct fib6_node *x);
int fib6_adopt_chunks(struct fib6 *f);
int fib6_fresh_table(struct fib6 *f);

#endif
