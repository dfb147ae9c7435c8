/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * IPv4 DIR-24-8 writer: fpmd's own prefix store (what is needed to find
 * the covering prefix when one goes away) and the tbl24 / tbl8 / rules_v4
 * arrays it keeps in step, through shared mappings. Layout and lookup
 * rules: bpf/fpmd_maps.h. Standalone (no fpmd globals), so the tests and
 * the benchmark drive the same code on their own maps.
 */
#ifndef FPMD_FIB4_H
#define FPMD_FIB4_H

#include <stdbool.h>
#include <stdint.h>

#include "fpmd_maps.h"
#include "common/hash.h"

#include "fib/chunks.h"

struct bpf_object;

/* tbl24 entries per part. */
#define FIB4_PART_ENTRIES (2 * FPMD_TBL24_PART_WORDS)

/* fpmd's copy of one tbl24 part that is not uniform. */
struct fib4_part {
	uint32_t t[FIB4_PART_ENTRIES] __attribute__((aligned(8)));
	uint8_t d[FIB4_PART_ENTRIES]; /* prefix length behind each entry */
	/* Adjacent entries that differ (value or length) plus tbl8
	 * pointers: 0 means uniform, and the part goes. */
	uint32_t nb;
};

struct fib4 {
	struct chunks parts; /* tbl24's parts */
	struct chunks t8c;   /* tbl8's chunks (mapped) */
	struct chunks rulec; /* rules_v4's chunks (mapped) */
	struct fib4_part **part; /* per part: its copy, NULL: uniform */
	uint32_t *dval;          /* per uniform part: its value ... */
	uint8_t *dlen;           /* ... and prefix length */
	uint64_t *dflt;          /* tbl24_dflt, mapped */
	int commit_fd;           /* fpmd_tbl24_commit */
	int fill_fd;             /* tbl24_fill */
	uint32_t *fill_keys;     /* scratch: keys of a batch */
	uint8_t *in_fill;        /* per part: tbl24_fill holds it */
	uint32_t nfill;
	uint64_t *stage;         /* tbl24_stage, mapped */
	/* One- and two-word writes to live parts, gathered as (word,
	 * value) pairs and stored by one FPMD_TBL24_SCATTER run when full
	 * or at the commit (fib4_scatter_flush); nsc pairs. */
	uint64_t *sc;
	uint32_t nsc;
	/* Groups freed (g_queue's last ones) whose tbl24 pointer may still
	 * wait in sc: their grace starts at the flush. */
	uint32_t g_unflushed;
	uint32_t dirty_lo, dirty_hi; /* tbl24 words to write (lo > hi: none) */
	uint32_t chg_lo, chg_hi;     /* parts the change touched */
	bool adopting;          /* replaying rules_v4: no map writes */
	uint32_t *t8priv;       /* tbl8 as replayed during adoption */
	uint8_t *d8;            /* prefix length behind each tbl8 entry */
	uint32_t ngroups, nslots;
	struct htable by_prefix;
	uint32_t nrules, len_count[33];
	/* rules_v4 slots: a used bit each and a count per chunk, taken
	 * lowest first so that the used ones stay at the bottom and empty
	 * chunks can go. */
	uint64_t *slot_used;
	uint32_t *chunk_rules; /* per rules_v4 chunk: slots in use */
	uint32_t slot_lo;      /* no free slot below this one */
	uint8_t *g_state; /* per group: 0 free, 1 in use, 2 reserved
			   * (adoption), 3 freed (in g_queue, in its grace) */
	uint32_t g_fresh;  /* no free group below this one */
	uint32_t *t8_busy; /* per tbl8 chunk: groups not free (state != 0) */
	uint32_t *g_queue; /* freed groups, oldest first */
	uint64_t *g_freed_ns;
	uint32_t g_head, g_count, groups_used;
	/* A freed tbl8 group is reused only this long after tbl24 stopped
	 * pointing at it, so a lookup that read the old pointer never reads
	 * another /24's entries (XDP runs take microseconds). */
	uint64_t grace_ns;
	uint64_t entry_writes; /* entries changed in tbl24 / tbl8 */
	uint64_t syscalls;     /* tbl24 map updates (single or batch) */
};

/*
 * Take the maps (as created from bpf/fpmd_fib.h and sized by
 * fib4_size(): tbl8 for ngroups groups, rules_v4 for nslots prefixes).
 * Nothing is created until a prefix needs it. With adopt, the maps
 * already hold a previous fpmd's tables: the prefix store is rebuilt
 * from rules_v4 and the tables are rewritten only where they differ from
 * what the prefixes give (normally nowhere). 0 or -errno.
 */
struct fib4_maps {
	int tbl24, tbl24_dflt, tbl24_fill, tbl8, rules_v4, tbl24_stage;
	int commit_prog; /* fpmd_tbl24_commit's fd */
};

/* Before loading obj: size tbl8's and rules_v4's outer maps for ngroups
 * groups and nslots prefixes (0, 0: DIR-24-8 unused, smallest maps). */
void fib4_size(struct bpf_object *obj, uint32_t ngroups, uint32_t nslots);
/* After loading: the maps and program of obj by name. */
void fib4_maps_of(struct bpf_object *obj, struct fib4_maps *m);

int fib4_open(struct fib4 *f, const struct fib4_maps *m, uint32_t ngroups,
	      uint32_t nslots, bool adopt);
void fib4_close(struct fib4 *f);

/*
 * Make the new tbl24 parts and rules_v4 chunks visible (filled, then one
 * batch update of each outer map, one RCU grace period) and hand up to
 * max_drops maps no longer needed to the reaper (chunks.h; one grace
 * period each, in its threads): parts that became uniform, then tbl8
 * chunks whose groups are all free and past their grace, then rules_v4
 * chunks without a rule; with max_drops, also take back what the
 * reaper finished. Until
 * then a change that needed a new part is not seen by the fast path:
 * the caller commits before anything tells that a route is in place.
 * 0 or -errno (what failed stays pending for the next commit).
 */
int fib4_commit(struct fib4 *f, uint32_t max_drops);

/* Store the gathered one- and two-word tbl24 writes now (the commit
 * does it first). 0 or -errno. */
int fib4_scatter_flush(struct fib4 *f);

static inline bool fib4_pending(const struct fib4 *f)
{
	return f->parts.npending || f->rulec.npending || f->nsc;
}

/* Does the fast path see what was last written for addr/len (network
 * order): no tbl24 part under it waits to be published? */
bool fib4_published(const struct fib4 *f, const uint8_t addr[4],
		    uint8_t len);

/* Bytes of every map fib4 created (parts and chunks). */
uint64_t fib4_map_bytes(const struct fib4 *f);

/* Add or replace addr/len (network order, host bits ignored). -ENOSPC
 * when rules_v4 or the tbl8 groups are full (nothing changed). */
int fib4_add(struct fib4 *f, const uint8_t addr[4], uint8_t len,
	     uint32_t val);
/* Remove addr/len; its covering prefix takes its place. -ENOENT. */
int fib4_del(struct fib4 *f, const uint8_t addr[4], uint8_t len);
/* What the fast path finds for addr (route value, 0: none). */
uint32_t fib4_lookup(const struct fib4 *f, const uint8_t addr[4]);

/* Every prefix: cb(addr, len, val, arg); stops at a non-zero return. */
int fib4_foreach(const struct fib4 *f,
		 int (*cb)(const uint8_t addr[4], uint8_t len, uint32_t val,
			   void *arg),
		 void *arg);

#endif
