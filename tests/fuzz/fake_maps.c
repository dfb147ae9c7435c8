// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The map writer for the fuzzers: every function of fpmd/fib/maps.h, writing
 * into memory instead of BPF maps (a fuzzer cannot create maps, and a
 * million inputs must not touch the kernel). What the kernel would refuse
 * is refused the same way (an array index past the end is -E2BIG); what
 * only a RIB bug can produce (a route value naming a slot past the
 * tables, a prefix longer than its family) aborts, so the fuzzer reports
 * it with the input that caused it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fake_maps.h"
#include "fib/maps.h"
#include "fib/reaper.h"

struct fpmd_map_fds mapfd = {
	.routes_v4 = -1,
	.routes_v6 = -1,
	.nexthops = -1,
	.nh_groups = -1,
	.neigh_v4 = -1,
	.neigh_v6 = -1,
	.local_v4 = -1,
	.local_v4_filter = -1,
	.tx_ports = -1,
	.ifaces = -1,
	.ifaces_direct = -1,
	.stats = -1,
	.meta = -1,
	.tbl24 = -1,
	.tbl8 = -1,
	.rules_v4 = -1,
	.slots_v6 = -1,
	.lens_v6 = -1,
	.tbl24_stage = -1,
	.tbl24_commit = -1,
};

int fpmd_fib4_algo = FPMD_FIB4_DIR24;
int fpmd_fib6_algo = FPMD_FIB6_BSPL;
uint32_t fpmd_tbl8_groups = FPMD_TBL8_GROUPS;

static struct fpmd_nexthop nexthops[FAKE_MAX_NEXTHOPS];
static struct fpmd_nh_group groups[FAKE_MAX_GROUPS];
struct fake_maps fake_maps;

static void fake_abort(const char *what, const char *detail, unsigned v)
{
	fprintf(stderr, "fake maps: %s: %s (%u)\n", what, detail, v);
	abort();
}

void fake_maps_reset(void)
{
	memset(nexthops, 0, sizeof(nexthops));
	memset(groups, 0, sizeof(groups));
	memset(&fake_maps, 0, sizeof(fake_maps));
}

int maps_fib_open(bool adopt, uint32_t max_routes_v4, uint32_t slots_v6)
{
	return 0;
}

void maps_fib_close(void)
{
}

void maps_fib_trim(void)
{
}

/* Writes to the fake maps are visible at once: nothing to publish. */
int maps_commit(uint32_t max_drops)
{
	(void)max_drops;
	return 0;
}

/* Every write is seen at once (no table parts wait for a commit). */
bool maps_route_published(const struct prefix *p)
{
	(void)p;
	return true;
}

void maps_chunk_counts(struct maps_chunk_counts *n)
{
	memset(n, 0, sizeof(*n));
}

int maps_routes_foreach(int family,
			int (*cb)(const struct prefix *p, uint32_t val,
				  void *arg),
			void *arg)
{
	return 0;
}

static void route_check(const struct prefix *p)
{
	if (p->family != AF_INET && p->family != AF_INET6)
		fake_abort("route write", "family neither IPv4 nor IPv6",
			   p->family);
	if (p->len > (p->family == AF_INET ? 32 : 128))
		fake_abort("route write", "prefix length past the address",
			   p->len);
}

int maps_route_write(const struct prefix *p, uint32_t val)
{
	uint32_t type = FPMD_RT_TYPE(val), idx = FPMD_RT_INDEX(val);

	route_check(p);
	if (type == FPMD_RT_NEXTHOP && idx >= FAKE_MAX_NEXTHOPS)
		fake_abort("route write", "nexthop slot past the table", idx);
	if (type == FPMD_RT_GROUP && idx >= FAKE_MAX_GROUPS)
		fake_abort("route write", "group slot past the table", idx);
	fake_maps.route_writes++;
	return 0;
}

int maps_route_delete(const struct prefix *p)
{
	route_check(p);
	fake_maps.route_deletes++;
	return 0;
}

int maps_nexthop_write(uint32_t index, const struct fpmd_nexthop *nh)
{
	if (index >= FAKE_MAX_NEXTHOPS)
		return -E2BIG;
	nexthops[index] = *nh;
	fake_maps.nexthop_writes++;
	return 0;
}

int maps_nexthop_clear(uint32_t index)
{
	struct fpmd_nexthop z = { 0 };

	return maps_nexthop_write(index, &z);
}

int maps_group_write(uint32_t index, const struct fpmd_nh_group *g)
{
	if (index >= FAKE_MAX_GROUPS)
		return -E2BIG;
	if (g->nbuckets > FPMD_GROUP_BUCKETS)
		fake_abort("group write", "more buckets than the entry holds",
			   g->nbuckets);
	for (uint32_t b = 0; b < g->nbuckets; b++)
		if (g->bucket[b] >= FAKE_MAX_NEXTHOPS)
			fake_abort("group write", "bucket past the nexthops",
				   g->bucket[b]);
	groups[index] = *g;
	fake_maps.group_writes++;
	return 0;
}

int maps_group_clear(uint32_t index)
{
	struct fpmd_nh_group z = { 0 };

	return maps_group_write(index, &z);
}

int maps_nexthop_read(uint32_t index, struct fpmd_nexthop *nh)
{
	if (index >= FAKE_MAX_NEXTHOPS)
		return -ENOENT;
	*nh = nexthops[index];
	return 0;
}

int maps_group_read(uint32_t index, struct fpmd_nh_group *g)
{
	if (index >= FAKE_MAX_GROUPS)
		return -ENOENT;
	*g = groups[index];
	return 0;
}

int maps_neigh_write(int family, uint32_t ifindex, const uint8_t *addr,
		     const uint8_t mac[6], uint16_t flags)
{
	if (family != AF_INET && family != AF_INET6)
		fake_abort("neighbor write", "bad family", (unsigned)family);
	fake_maps.neigh_writes++;
	return 0;
}

int maps_neigh_delete(int family, uint32_t ifindex, const uint8_t *addr)
{
	if (family != AF_INET && family != AF_INET6)
		fake_abort("neighbor delete", "bad family", (unsigned)family);
	return 0;
}

int maps_iface_write(uint32_t ifindex, const struct fpmd_iface *i)
{
	return 0;
}

int maps_ifaces_direct_rebuild(void)
{
	return 0;
}

int maps_iface_delete(uint32_t ifindex)
{
	return 0;
}

int maps_local_v4_filter_rebuild(void)
{
	return 0;
}

int maps_local_v4_add(const uint8_t addr[4])
{
	return 0;
}

int maps_local_v4_delete(const uint8_t addr[4])
{
	return 0;
}

int maps_txport_add(uint32_t ifindex)
{
	return 0;
}

int maps_txport_delete(uint32_t ifindex)
{
	return 0;
}

int maps_stat_read(uint32_t slot, uint32_t reason, struct fpmd_stat *out)
{
	if (slot >= FPMD_MAX_IFACES || reason >= FPMD_R_MAX)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	return 0;
}

int maps_stats_clear_slot(uint32_t slot)
{
	return slot < FPMD_MAX_IFACES ? 0 : -E2BIG;
}

/* fib/reaper.h's one call outside fib/ (rib_trim): no threads in a
 * fuzzer, so the caller runs the work itself, as when no reaper runs. */
int reaper_call(void (*fn)(void *), void *arg)
{
	(void)fn;
	(void)arg;
	return -ENOSYS;
}
