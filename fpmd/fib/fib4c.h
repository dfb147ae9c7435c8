/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * IPv4 compact table writer: DXR D16R (dxr_dir, dxr_rng, dxr_val; the
 * layout in bpf/fpmd_maps.h, the choice in doc/fib-compact.md). fpmd's
 * own state is a prefix store and a private DIR-24-8 of value indexes
 * with the prefix length behind each entry (what a delete needs to give
 * the covering prefix its addresses back); the BPF maps hold only the
 * compact table. A change paints the private table and marks its /16s
 * stale; fib4c_commit() rebuilds each stale /16's ranges in free space
 * and switches its dxr_dir entry with one 8-byte store, so a lookup sees
 * the old /16 or the new one, never a mix. Old ranges and value indexes
 * are reused only after a grace period. The prefixes are also in
 * rules_v4 (same format as DIR-24-8), from which a restarted fpmd
 * adopts the table, writing only what differs.
 *
 * Standalone (no fpmd globals), so tests and benchmarks drive the same
 * code on their own maps.
 */
#ifndef FPMD_FIB4C_H
#define FPMD_FIB4C_H

#include <stdbool.h>
#include <stdint.h>

#include "fpmd_maps.h"
#include "fib/chunks.h"

struct bpf_object;

struct fib4c_maps {
	int dxr_dir, dxr_rng, dxr_val, rules_v4;
};

/* A free block of ranges, or a value index, waiting for its grace. */
struct fib4c_later {
	uint32_t base, n; /* n == 0: value index "base" */
	uint64_t at_ns;
};

struct fib4c_flist {
	uint32_t *v;
	uint32_t n, cap;
};

struct fib4c_pfx {
	uint64_t key;  /* (addr << 8 | len) + 1; 0: empty */
	uint32_t vi;   /* value index */
	uint32_t slot; /* in rules_v4 */
};

struct fib4c {
	/* private DIR-24-8 of value indexes (t24: FIB4C_T8 | group) */
	uint32_t *t24;
	uint8_t *l24; /* prefix length + 1 behind each entry, 0: none */
	uint32_t *t8;
	uint8_t *l8;
	uint32_t ngroups, gcap, *gfree, ngfree;
	/* prefix store: open addressing */
	struct fib4c_pfx *pfx;
	uint32_t pmask, nrules, len_count[33];
	/* value table: index -> route value, refcounts by prefix */
	uint32_t *vals, *vref, *vhash; /* vhash: index + 1, open addressing */
	uint32_t *vfree, nvfree, vtop;
	uint32_t *vdead, nvdead; /* unreferenced: their grace starts once
				  * no /16 is left to rebuild */
	/* the maps */
	uint64_t *dmap;	     /* dxr_dir, mapped */
	uint32_t *vmap;	     /* dxr_val, mapped */
	struct chunks rc;    /* dxr_rng's chunks (mapped) */
	struct chunks rulec; /* rules_v4's chunks (mapped) */
	/* per /16: the entry as built (dmap may still hold the previous one
	 * while its ranges wait for their chunk to go live), flags */
	uint64_t *dir;
	uint8_t *dflag;
	uint32_t *dlist, ndlist; /* /16s with a flag set */
	/* range space */
	uint32_t *top;	 /* per chunk: ranges handed out from the bottom */
	uint32_t *clive; /* per chunk: ranges not in a free list */
	uint32_t cur;	 /* chunk being filled */
	uint32_t evac;	 /* chunk being emptied + 1, 0: none */
	struct fib4c_flist *fl; /* free blocks per size class */
	struct fib4c_later *later;
	uint32_t nlater, later_head, later_cap;
	uint32_t nslots;
	uint64_t *slot_used;
	uint32_t *chunk_rules, slot_lo;
	bool adopting;
	/* counters */
	uint64_t grace_ns;     /* reuse freed space after this (1 ms) */
	uint64_t entry_writes; /* dxr_dir entries, ranges, values written */
	uint64_t ranges;       /* range words in use: one long range or
				* two short ones each (fpmd_maps.h) */
	uint64_t rebuilds;     /* /16s rebuilt */
	uint64_t evacuated;    /* range chunks emptied and dropped */
};

/* Per /16 flags (fib4c.dflag). */
#define FIB4C_STALE 0x1	 /* to rebuild at the commit */
#define FIB4C_DEFER 0x2	 /* built, waits for its chunk to go live */
#define FIB4C_LISTED 0x4 /* in dlist */
#define FIB4C_MOVE 0x8	 /* rebuild into new space even if unchanged */

/* Range blocks come in size classes: exact up to 64, then steps of 32. */
#define FIB4C_NCLASS (64 + (FPMD_DXR_CHUNK_RANGES - 64) / 32 + 1)

static inline uint32_t fib4c_cls(uint32_t n)
{
	return n <= 64 ? n : 64 + (n - 64 + 31) / 32;
}

static inline uint32_t fib4c_cls_size(uint32_t k)
{
	return k <= 64 ? k : 64 + (k - 64) * 32;
}

/* Before loading obj: size dxr_rng's and rules_v4's outer maps for nslots
 * prefixes, and dxr_dir / dxr_val (0: DXR unused, smallest maps). */
void fib4c_size(struct bpf_object *obj, uint32_t nslots);
void fib4c_maps_of(struct bpf_object *obj, struct fib4c_maps *m);

/* Take the maps; with adopt, rebuild from rules_v4 and rewrite only what
 * differs from what the prefixes give. 0 or -errno. */
int fib4c_open(struct fib4c *f, const struct fib4c_maps *m, uint32_t nslots,
	       bool adopt);
void fib4c_close(struct fib4c *f);

/* Add or replace addr/len (network order). -ENOSPC: rules_v4 or the value
 * table full (nothing changed). Seen by the fast path after the commit. */
int fib4c_add(struct fib4c *f, const uint8_t addr[4], uint8_t len,
	      uint32_t val);
/* Remove addr/len; its covering prefix takes its place. -ENOENT. */
int fib4c_del(struct fib4c *f, const uint8_t addr[4], uint8_t len);

/* Rebuild the stale /16s and switch them; make new chunks visible. 0 or
 * -errno (what failed stays pending for the next commit). */
int fib4c_commit(struct fib4c *f);

/* rules_v4 chunks without a rule (slots are taken lowest first, so
 * those above the rules in use) go to the reaper (chunks.h), as with
 * DIR-24-8; the periodic tick calls it. 0 or -errno. */
int fib4c_rules_shrink(struct fib4c *f);

/* Work for fib4c_commit(): stale /16s, new chunks, and space or value
 * indexes waiting for their grace (a chunk being emptied drops only once
 * they are reaped). */
static inline bool fib4c_pending(const struct fib4c *f)
{
	return f->ndlist || chunks_dirty(&f->rulec) || chunks_dirty(&f->rc) ||
	       f->nlater || f->nvdead || f->evac;
}

/* Does the fast path see what was last written for addr/len (network
 * order): no /16 under it waits for its rebuild or its chunk? */
bool fib4c_published(const struct fib4c *f, const uint8_t addr[4],
		     uint8_t len);

/* What the fast path finds for addr now (route value, 0: none). */
uint32_t fib4c_lookup(const struct fib4c *f, const uint8_t addr[4]);
/* Bytes of the lookup structure (dxr_dir, dxr_val, range chunks) and of
 * rules_v4's chunks. */
uint64_t fib4c_map_bytes(const struct fib4c *f);
void fib4c_block_counts(const struct fib4c *f, uint32_t *nshort,
			uint32_t *nlong);
uint64_t fib4c_rules_bytes(const struct fib4c *f);

/* The stored prefix a/len (host order, masked), or NULL. */
struct fib4c_pfx *fib4c_pfind(const struct fib4c *f, uint32_t a, int len);

int fib4c_foreach(const struct fib4c *f,
		  int (*cb)(const uint8_t addr[4], uint8_t len, uint32_t val,
			    void *arg),
		  void *arg);

#endif
