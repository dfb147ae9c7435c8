/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Object caches for what fpmd holds one of per route: the RIB's routes
 * (both tables), the IPv4 table's rules, the IPv6 table's nodes and tree
 * branches. Objects of one size live in 64 KiB slabs mapped on their own;
 * a slab whose last object goes is unmapped at once, beyond the
 * SLAB_KEEP kept per cache for the next growth (their pages but the
 * header's given back: they are not resident).
 *
 * Why not malloc: after a mass delete (a feed lost, a million routes
 * withdrawn) glibc keeps the freed chunks in its heap, and giving them
 * back takes malloc_trim(), which holds the main arena's lock while it
 * walks every free chunk: the loop's next malloc waited 20-100 ms for it
 * (doc/benchmarks.md "Mass delete"). Here memory goes back as it empties,
 * a few microseconds per slab, with no lock shared with another thread.
 *
 * Single-threaded: the loop's (and a tool's) own. Under ASan a free
 * object is poisoned, so a use after free or a double free is reported
 * as with malloc.
 */
#ifndef FPMD_SLAB_H
#define FPMD_SLAB_H

#include <stddef.h>
#include <stdint.h>

struct slab;

struct slab_cache {
	const char *name;
	size_t size; /* object size as asked */
	/* Set by the first allocation. */
	size_t osize; /* rounded to 16 */
	uint32_t per_slab;
	struct slab *partial; /* slabs with a free object and a used one */
	struct slab *empty;   /* kept for the next growth, SLAB_KEEP at most */
	uint32_t nempty;
	uint64_t objects;	 /* handed out, not freed */
	struct slab_cache *next; /* all caches that allocated: slab_in_use */
};

#define SLAB_CACHE_INIT(label, type)                                           \
	{                                                                      \
		.name = (label), .size = sizeof(type)                          \
	}
#define SLAB_SIZE ((size_t)64 << 10)
#define SLAB_KEEP 2

/* A zeroed object, or NULL (errno ENOMEM) when no slab can be mapped. */
void *slab_alloc(struct slab_cache *c);
/* Back to its cache (NULL: nothing); the slab goes when it empties. */
void slab_free(struct slab_cache *c, void *p);

/* The bytes of every cache's objects in use. */
uint64_t slab_in_use(void);

#endif
