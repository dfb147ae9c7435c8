/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The nexthops and nh_groups maps, grown in chunks (layout in
 * bpf/fpmd_maps.h): a write creates the chunk of its index if needed and
 * makes it visible before returning, so whatever refers to the index
 * next (a route, a group) finds it. Standalone (no fpmd globals): used by
 * maps.c, the packet tests and the benchmark.
 */
#ifndef FPMD_NHTAB_H
#define FPMD_NHTAB_H

#include <stdbool.h>
#include <stdint.h>

#include "fib/chunks.h"
#include "fpmd_maps.h"

struct nhtab {
	struct chunks nh, groups;
};

/* nh_fd, groups_fd: the outer maps. With adopt, take over their chunks. */
int nhtab_open(struct nhtab *t, int nh_fd, int groups_fd, bool adopt);
void nhtab_close(struct nhtab *t);

int nhtab_nexthop_write(struct nhtab *t, uint32_t idx,
			const struct fpmd_nexthop *nh);
int nhtab_group_write(struct nhtab *t, uint32_t idx,
		      const struct fpmd_nh_group *g);
/* Zero the entry (nothing to do when its chunk was never made). */
int nhtab_nexthop_clear(struct nhtab *t, uint32_t idx);
int nhtab_group_clear(struct nhtab *t, uint32_t idx);
/* -ENOENT when its chunk does not exist (the entry is empty). */
int nhtab_nexthop_read(struct nhtab *t, uint32_t idx, struct fpmd_nexthop *nh);
int nhtab_group_read(struct nhtab *t, uint32_t idx, struct fpmd_nh_group *g);

/*
 * Memory follows the table down: drop the chunks wholly at or above
 * nh_top / group_top (one past the highest index in use; the caller has
 * cleared every entry there), at most *budget handed to the reaper
 * (each delete waits a grace period, in its threads; *budget is
 * decreased by those finished, the rest go at a later call). A chunk
 * marked but not yet deleted comes back on a write.
 */
int nhtab_shrink(struct nhtab *t, uint32_t nh_top, uint32_t group_top,
		 uint32_t *budget);

/*
 * cb(entry) for every valid nexthop the fast path sent by at or after
 * epoch since (struct fpmd_nexthop's used). 0 or -errno.
 */
int nhtab_nexthops_used(struct nhtab *t, uint32_t since,
			void (*cb)(const struct fpmd_nexthop *nh, void *arg),
			void *arg);

#endif
