/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writes to the fast path's BPF maps. fpmd is their only writer; every
 * function returns 0 or -errno and never logs (callers know the object).
 * The fuzzers link the RIB and the feeds against tests/fuzz/fake_maps.c
 * instead: a function here that those call needs a stand-in there.
 */
#ifndef FPMD_MAPS_WRITE_H
#define FPMD_MAPS_WRITE_H

#include <stdbool.h>
#include <stdint.h>

#include "fpmd_maps.h"
#include "common/util.h"

struct fpmd_map_fds {
	int routes_v4, routes_v6, nexthops, nh_groups, neigh_v4, neigh_v6,
		local_v4, local_v4_filter, tx_ports, ifaces, ifaces_direct, stats,
		meta;
	int tbl24, tbl8, rules_v4, slots_v6, lens_v6, tbl24_stage, tbl24_dflt,
	    tbl24_fill;
	int tbl24_commit; /* the program fpmd_tbl24_commit */
	int dxr_dir, dxr_rng, dxr_val;
};

extern struct fpmd_map_fds mapfd;

/*
 * The route lookup algorithms and the tbl8 size, read by xdp_load()
 * (the program is built for them and the maps sized) and by the route
 * writers below. Set them before xdp_load(); pinned maps made for other
 * choices are not adopted (their sizes differ) but recreated.
 */
extern int fpmd_fib4_algo;          /* enum fpmd_fib4_algo */
extern int fpmd_fib6_algo;          /* enum fpmd_fib6_algo */
extern uint32_t fpmd_tbl8_groups;   /* DIR-24-8: tbl8 groups of 256 */

/* After the program is loaded (mapfd set): map the DIR-24-8 arrays and
 * the IPv6 tables; with adopt, rebuild fpmd's prefix stores from them. */
int maps_fib_open(bool adopt, uint32_t max_routes_v4, uint32_t slots_v6);
void maps_fib_close(void);
void maps_fib_trim(void);
/*
 * Make the route writes so far visible to the fast path: the IPv4
 * table's new parts wait in a batch (one RCU grace period for all
 * instead of one each), so the main loop calls this before anything
 * observable (control replies, metrics, route status to zebra) and at
 * the end of each iteration. Also drops up to max_drops IPv4 maps no
 * longer needed: uniform parts, empty tbl8 and rules_v4 chunks (each
 * delete waits a grace period of its own, ~13 ms unless grace periods
 * are expedited: the reaper's threads do them, fib/reaper.h, and the
 * loop goes on). 0 or -errno (left pending, retried at the next call).
 */
int maps_commit(uint32_t max_drops);
/*
 * Does the fast path see the route last written for p? False only while
 * a new IPv4 table part under it waits for maps_commit() (DIR-24-8: a
 * tbl24 part; DXR: a /16 to rebuild); IPv6 and nexthop writes are seen
 * when they return.
 */
bool maps_route_published(const struct prefix *p);
/*
 * The periodic tick: maps_commit(max_drops), then, with what is left of
 * the max_drops budget, the nexthops / nh_groups chunks wholly at or
 * above nh_top / group_top (one past the highest index in use).
 */
int maps_shrink(uint32_t max_drops, uint32_t nh_top, uint32_t group_top);

/* The chunked maps' chunks (IPv4 tables, nexthops, groups; the IPv6
 * table's live chunks), for show summary and the metrics. */
struct maps_chunk_counts {
	uint64_t live;	   /* in the outer maps */
	uint64_t dropping; /* no longer needed, not yet out (reaping too) */
	uint64_t dropped;  /* taken out and freed, since start */
	uint64_t bytes;	   /* of the chunks that exist */
};
void maps_chunk_counts(struct maps_chunk_counts *n);
/* Every route in the maps (adoption): cb(prefix, value, arg). */
int maps_routes_foreach(int family,
			int (*cb)(const struct prefix *p, uint32_t val,
				  void *arg),
			void *arg);

int maps_route_write(const struct prefix *p, uint32_t val);
int maps_route_delete(const struct prefix *p);
/* After the program is loaded: the nexthops and nh_groups chunks (taken
 * over with adopt). */
int maps_nh_open(bool adopt);
void maps_nh_close(void);
int maps_nexthop_read(uint32_t index, struct fpmd_nexthop *nh);
int maps_group_read(uint32_t index, struct fpmd_nh_group *g);
int maps_nexthop_write(uint32_t index, const struct fpmd_nexthop *nh);
int maps_nexthop_clear(uint32_t index);
int maps_group_write(uint32_t index, const struct fpmd_nh_group *g);
int maps_group_clear(uint32_t index);
int maps_neigh_write(int family, uint32_t ifindex, const uint8_t *addr,
		     const uint8_t mac[6], uint16_t flags);
int maps_neigh_delete(int family, uint32_t ifindex, const uint8_t *addr);

/*
 * Neighbor use (struct fpmd_meta): start a new epoch and return the one
 * that ends (in *ended; never 0). The fast path stamps what it sends by.
 */
int maps_epoch_next(uint32_t *ended);
/* cb(entry) for every nexthop the fast path sent by since epoch since. */
int maps_nexthops_used(uint32_t since,
		       void (*cb)(const struct fpmd_nexthop *nh, void *arg),
		       void *arg);
/* cb(...) for every neighbor (connected routes) it sent to since then. */
int maps_neighs_used(uint32_t since,
		     void (*cb)(int family, uint32_t ifindex,
				const uint8_t *addr, void *arg),
		     void *arg);
int maps_iface_write(uint32_t ifindex, const struct fpmd_iface *i);
int maps_iface_delete(uint32_t ifindex);
int maps_local_v4_add(const uint8_t addr[4]);
int maps_local_v4_delete(const uint8_t addr[4]);
/* local_v4_filter from local_v4's keys (adopted maps, and after a delete). */
int maps_local_v4_filter_rebuild(void);
/* ifaces_direct from ifaces (adopted maps). */
int maps_ifaces_direct_rebuild(void);
int maps_txport_add(uint32_t ifindex);
int maps_txport_delete(uint32_t ifindex);
/* Sum of all CPUs for one counter. */
int maps_stat_read(uint32_t slot, uint32_t reason, struct fpmd_stat *out);
int maps_stats_clear_slot(uint32_t slot);

extern const char *const fpmd_reason_names[FPMD_R_MAX];

#endif
