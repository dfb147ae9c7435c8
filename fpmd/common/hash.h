/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small intrusive chained hash table. Objects embed a struct hnode and
 * supply the hash; lookups walk one chain with a caller-side comparison.
 * It doubles when the load passes 1, so a full table (1M routes) stays at
 * one or two probes.
 */
#ifndef FPMD_HASH_H
#define FPMD_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct hnode {
	struct hnode *next;
	uint32_t hash;
};

struct htable {
	struct hnode **b;
	size_t nbuckets; /* power of two */
	size_t count;
};

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline int ht_init(struct htable *t, size_t n)
{
	size_t nb = 16;

	while (nb < n)
		nb <<= 1;
	t->b = calloc(nb, sizeof(*t->b));
	t->nbuckets = nb;
	t->count = 0;
	return t->b ? 0 : -1;
}

static inline void ht_free(struct htable *t)
{
	free(t->b);
	t->b = NULL;
	t->nbuckets = t->count = 0;
}

/* Rehash into nb buckets (a power of two). */
static inline void ht_resize(struct htable *t, size_t nb)
{
	struct hnode **b = calloc(nb, sizeof(*b));

	if (!b)
		return; /* keep the old size: slower, still correct */
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct hnode *n = t->b[i], *next;

		for (; n; n = next) {
			next = n->next;
			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
		}
	}
	free(t->b);
	t->b = b;
	t->nbuckets = nb;
}

static inline void ht_grow(struct htable *t)
{
	ht_resize(t, t->nbuckets * 2);
}

/*
 * After a mass delete: back to the smallest size with room for twice what
 * is left (at least min buckets), so the next inserts do not grow it at
 * once. Not while iterating; the caller picks the moment.
 */
static inline void ht_shrink(struct htable *t, size_t min)
{
	size_t nb = 16;

	while (nb < min || nb < 2 * t->count)
		nb <<= 1;
	if (nb < t->nbuckets)
		ht_resize(t, nb);
}

static inline void ht_insert(struct htable *t, struct hnode *n, uint32_t h)
{
	if (t->count >= t->nbuckets)
		ht_grow(t);
	n->hash = h;
	n->next = t->b[h & (t->nbuckets - 1)];
	t->b[h & (t->nbuckets - 1)] = n;
	t->count++;
}

static inline void ht_remove(struct htable *t, struct hnode *n)
{
	struct hnode **pp = &t->b[n->hash & (t->nbuckets - 1)];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			t->count--;
			return;
		}
	}
}

/* First node of the chain for hash h; walk with ->next, check ->hash. */
static inline struct hnode *ht_chain(const struct htable *t, uint32_t h)
{
	return t->b[h & (t->nbuckets - 1)];
}

/* Iterate over every node; safe against removal of the current node. */
#define ht_for_each(t, n, tmp, i)                                      \
	for ((i) = 0; (i) < (t)->nbuckets; (i)++)                      \
		for ((n) = (t)->b[(i)], (tmp) = (n) ? (n)->next : NULL; \
		     (n); (n) = (tmp), (tmp) = (n) ? (n)->next : NULL)

#endif
