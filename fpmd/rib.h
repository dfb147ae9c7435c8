/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fpmd's tables: nexthops and nexthop groups (objects with ids, states and
 * dense map indices), routes (one entry per source, the preferred one is
 * programmed) and neighbors. Every change here is written through maps.c.
 */
#ifndef FPMD_RIB_H
#define FPMD_RIB_H

#include <stdbool.h>
#include <stdint.h>

#include "hash.h"
#include "util.h"

/* In order of preference: the first present source is programmed. */
enum rib_source {
	SRC_KERNEL_LOCAL, /* the router's own addresses: always pass */
	SRC_PLUGIN,
	SRC_FPM,
	SRC_STATIC, /* by hand, fpmctl */
	SRC_MAX
};

enum rib_rtype {
	RT_UNICAST,
	RT_BLACKHOLE,
	RT_UNREACHABLE,
	RT_PROHIBIT,
	RT_LOCAL,
};

#define NH_MAX_MEMBERS FPMD_GROUP_BUCKETS
#define NO_INDEX UINT32_MAX

struct nexthop;

struct nh_member {
	struct nexthop *nh;
	uint32_t weight;
};

struct nexthop {
	struct hnode id_node;  /* by id (explicit ones) */
	struct hnode key_node; /* by (family, gw, ifindex), single only */
	uint32_t id;           /* external id; 0 for implicit nexthops */
	uint32_t index;        /* nexthops or nh_groups slot, or NO_INDEX */
	bool is_group;
	bool keyed;            /* in rib_nh_by_key */
	uint8_t family;        /* of the gateway; AF_UNSPEC when on-link */
	bool has_gw;
	uint8_t gw[16];
	uint32_t ifindex;
	bool resolved;
	uint8_t mac[6];
	struct nh_member members[NH_MAX_MEMBERS];
	int nmembers;
	uint32_t refcnt;      /* routes and groups using it */
	uint32_t nbuckets;    /* groups: buckets in use */
};

struct route_entry {
	bool present;
	enum rib_rtype type;
	struct nexthop *nh; /* RT_UNICAST only */
};

enum route_state {
	RS_FORWARDING,   /* in the maps, nexthop usable */
	RS_UNRESOLVED,   /* in the maps, packets go to the kernel for ARP/ND */
	RS_EGRESS_KERNEL,/* in the maps, egress not in the fast path */
	RS_KERNEL_PATH,  /* in the maps as "pass": local/unreachable/... */
	RS_BLACKHOLE,    /* in the maps, dropped in XDP */
	RS_NH_MAP_FULL,  /* in the maps as "pass": nexthop had no slot */
	RS_MAP_FULL,     /* NOT in the maps: route table full */
	RS_ERROR,        /* NOT in the maps: write failed */
};

struct route {
	struct hnode node;
	struct prefix p;
	struct route_entry e[SRC_MAX];
	int selected;      /* source programmed, or -1 */
	bool programmed;
	uint32_t val;      /* the value in the map when programmed */
	enum route_state state;
};

struct neighbor {
	struct hnode node;
	uint8_t family;
	uint32_t ifindex;
	uint8_t addr[16];
	uint8_t mac[6];
};

struct rib_stats {
	uint64_t route_map_full, nh_map_full, group_map_full, map_errors;
};

extern struct htable rib_routes, rib_nh_by_id, rib_nh_by_key, rib_neigh;
extern struct rib_stats rib_stats;

int rib_init(uint32_t max_nexthops, uint32_t max_groups);

/* err gets a human-readable reason on failure (static storage). */
int rib_nexthop_add(uint32_t id, int family, const uint8_t *gw,
		    uint32_t ifindex, const char **err);
int rib_group_add(uint32_t id, const uint32_t *ids, const uint32_t *weights,
		  int n, const char **err);
int rib_nexthop_del(uint32_t id, const char **err);
struct nexthop *rib_nexthop_find(uint32_t id);

/* nhid != 0: use that nexthop/group; otherwise gw/ifindex (implicit). */
int rib_route_add(enum rib_source src, const struct prefix *p,
		  enum rib_rtype type, uint32_t nhid, int gw_family,
		  const uint8_t *gw, uint32_t ifindex, const char **err);
int rib_route_del(enum rib_source src, const struct prefix *p,
		  const char **err);
struct route *rib_route_find(const struct prefix *p);

int rib_neigh_add(int family, const uint8_t *addr, uint32_t ifindex,
		  const uint8_t mac[6], const char **err);
int rib_neigh_del(int family, const uint8_t *addr, uint32_t ifindex,
		  const char **err);

/* An interface changed (MAC, MTU, state, tx port): rewrite its nexthops. */
void rib_iface_changed(uint32_t ifindex);
/* Remove every entry of one source (e.g. its feed went away for good). */
void rib_flush_source(enum rib_source src);
/* Rebuild the tables from adopted pinned maps (after a restart). */
int rib_adopt(uint32_t max_nexthops, uint32_t max_groups);
void rib_free(void);

const char *rib_source_name(int src);
const char *rib_rtype_name(enum rib_rtype t);
const char *route_state_name(enum route_state s);
const char *nexthop_state(const struct nexthop *nh);

#endif
