/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * IPv6 binary search on prefix lengths: fpmd's own table of routes and
 * markers, and the slots_v6 / lens_v6 maps it keeps in step. Layout and
 * lookup rules: bpf/fpmd_maps.h. Standalone like fib4.
 */
#ifndef FPMD_FIB6_H
#define FPMD_FIB6_H

#include <stdbool.h>
#include <stdint.h>

#include "fpmd_maps.h"
#include "common/hash.h"

struct fib6_node;

struct fib6_chunk {
	int fd;
	struct fpmd_v6_slot *slots; /* its mmap */
};

struct fib6 {
	int outer_fd;                /* slots_v6 */
	int filler_fd;               /* an empty chunk for unused entries */
	struct fib6_chunk *chunks;   /* the table in use */
	uint32_t nslots;             /* its size, a power of two */
	uint32_t base;               /* its first chunk in slots_v6 */
	uint32_t max_slots;          /* the largest it may grow to */
	struct fpmd_v6_lens *lens;   /* mmap of lens_v6 */
	size_t lens_len;
	struct htable nodes;        /* routes and markers, by prefix */
	void *tree;                 /* the same in address order (crit-bit) */
	uint32_t len_routes[FPMD_V6_LENS];
	uint8_t lens_in_use[FPMD_V6_LENS]; /* what lens_v6 says now */
	uint32_t nlens;
	uint32_t nroutes, in_map, max_in_map;
	/* Stale markers are removed, and the chunks of a table grown out
	 * of dropped, this long after lens_v6 flips, so a lookup still
	 * bisecting the old list finds what it needs. */
	uint64_t grace_ns;
	/* The direct stage (lens_v6's direct[], fib6_direct.c), per /19 of
	 * 2000::/3: the best route of length <= 19 and 1 + its length (0:
	 * none), the lengths > 19 in use (how many, and the list while
	 * short), the routes > 19, the generation; routes per (/19,
	 * length) in dcount. */
	uint32_t *dval, *dlist, *dtot;
	uint8_t *dsrc, *dlens, *dgen;
	struct htable dcount;
	uint64_t map_writes, rebuilds, grows, shrinks, direct_writes;
	/* A length without routes left in the search order (fib6_del),
	 * above rebuild_now routes (FIB6_REBUILD_NOW; tests lower it). */
	bool lens_stale;
	uint32_t rebuild_now;
	uint32_t tidy_routes; /* nroutes at the last fib6_tidy */
	/* Tests: called while moving to a table of n slots (growing or
	 * shrinking), with the new table built but not in use (flipped
	 * false), then in use with the old not yet dropped. */
	void (*resize_hook)(struct fib6 *f, uint32_t n, bool flipped);
};

/* The largest slots_v6 table for max_routes routes: a power of two, at
 * most half full with FPMD_V6_ENTRIES_PER_ROUTE entries per route (fpmd
 * refuses entries past 60%). slots_v6 needs FPMD_V6_OUTER() of it. */
uint32_t fib6_slots_for(uint32_t max_routes);

/* slots_fd, lens_fd: slots_v6 (FPMD_V6_OUTER(max_slots) entries) and
 * lens_v6 as created from bpf/fpmd_fib.h. The table starts at one chunk
 * and doubles at half full up to max_slots (a power of two). With adopt,
 * rebuild from them; else start empty. */
int fib6_open(struct fib6 *f, int slots_fd, int lens_fd, uint32_t max_slots,
	      bool adopt);
void fib6_close(struct fib6 *f);

/* Add or replace addr/len; -ENOSPC when slots_v6 is full (nothing
 * changed). */
int fib6_add(struct fib6 *f, const uint8_t addr[16], uint8_t len,
	     uint32_t val);
int fib6_del(struct fib6 *f, const uint8_t addr[16], uint8_t len);
/*
 * Routes up to which a rebuild of the search order (it walks them all,
 * ~1 us each) is done at once when a length loses its last route; above,
 * the length stays in the order, and fib6_tidy() rebuilds once the
 * table is that small.
 */
#define FIB6_REBUILD_NOW 8192
/*
 * The periodic tick's work, so that a mass delete never waits for it
 * route by route: the rebuild above, and, once the table has stopped
 * shrinking since the previous call, slots_v6 halved (at once to its
 * size) while below an eighth full. 0 or -errno.
 */
int fib6_tidy(struct fib6 *f);
/* What the fast path finds, from fpmd's copy (0: none). */
uint32_t fib6_lookup(const struct fib6 *f, const uint8_t addr[16]);

int fib6_foreach(const struct fib6 *f,
		 int (*cb)(const uint8_t addr[16], uint8_t len, uint32_t val,
			   void *arg),
		 void *arg);

#endif
