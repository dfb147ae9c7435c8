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
#include "hash.h"

struct fib4 {
	uint32_t *t24;              /* fpmd's copy of tbl24 */
	int *part_fd;               /* tbl24's parts (FPMD_TBL24_PARTS) */
	int commit_fd;              /* fpmd_tbl24_commit */
	uint64_t *stage;            /* tbl24_stage, mapped */
	uint32_t dirty_lo, dirty_hi; /* tbl24 words to write (lo > hi: none) */
	uint32_t *t8;               /* tbl8, mapped */
	struct fpmd_rule_v4 *rules; /* rules_v4, mapped */
	size_t t8_len, rules_len;   /* mapping sizes */
	uint8_t *d24, *d8; /* prefix length behind each entry (user space) */
	uint32_t ngroups, nslots;
	struct htable by_prefix;
	uint32_t nrules, len_count[33];
	uint32_t *free_slot, nfree_slot, next_slot;
	uint8_t *g_state; /* per group: 0 never used, 1 in use, 2 reserved
			   * (adoption), 3 freed (in g_queue) */
	uint32_t g_fresh; /* groups from here on were never used */
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
 * Take the maps (fds of tbl24, tbl8 and rules_v4 as created from
 * bpf/fpmd_fib.h; tbl8 has ngroups groups, rules_v4 nslots slots): create
 * tbl24's parts and map the other two. With adopt, the maps already hold
 * a previous fpmd's tables: the prefix store is rebuilt from rules_v4 and
 * the tables are rewritten only where they differ from what the prefixes
 * give (normally nowhere). 0 or -errno.
 */
struct fib4_maps {
	int tbl24, tbl8, rules_v4, tbl24_stage; /* map fds */
	int commit_prog;                        /* fpmd_tbl24_commit's fd */
};

int fib4_open(struct fib4 *f, const struct fib4_maps *m, uint32_t ngroups,
	      uint32_t nslots, bool adopt);
void fib4_close(struct fib4 *f);

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
