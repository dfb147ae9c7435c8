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

#include "fpmd_maps.h"
#include "common/hash.h"
#include "common/util.h"

/* In order of preference: the first present source is programmed. The
 * numbers are stored in route values (FPMD_RT_SRC), keep them stable. */
enum rib_source {
	SRC_KERNEL_LOCAL = 0, /* the router's own addresses: always pass */
	SRC_PLUGIN = 1,
	SRC_FPM = 2,
	SRC_STATIC = 3, /* by hand, fpmctl */
	SRC_MAX
};

enum rib_rtype {
	RT_UNICAST,
	RT_BLACKHOLE,
	RT_UNREACHABLE,
	RT_PROHIBIT,
	RT_LOCAL,
	RT_KERNEL, /* kept on the kernel path, see enum kernel_reason */
};

/* Why a route is kept on the kernel path although it is unicast. */
enum kernel_reason {
	KR_NONE,
	KR_NHID_UNKNOWN, /* RTA_NH_ID of a nexthop never sent */
	KR_UNSUPPORTED,  /* encap, IPv6 gateway for IPv4 (RFC 5549), ... */
	KR_MTU_METRIC,   /* an mtu metric the kernel forwards by */
};

#define NH_MAX_MEMBERS FPMD_GROUP_BUCKETS
#define NO_INDEX UINT32_MAX

struct nexthop;

struct nh_member {
	struct nexthop *nh;
	uint32_t weight;
};

struct nexthop {
	struct hnode id_node;  /* by (src, id): explicit ones */
	struct hnode key_node; /* singles by (family, gw, ifindex); implicit
				* groups by their member list */
	uint32_t id;           /* external id; 0 for implicit nexthops */
	uint8_t src;           /* owner of the id (enum rib_source) */
	bool is_group;
	bool keyed;            /* in rib_nh_by_key / rib_grp_by_key */
	bool blackhole;        /* a blackhole nexthop (NHA_BLACKHOLE) */
	bool unsupported;      /* a nexthop fpmd cannot forward with */
	uint8_t family;        /* of the gateway; AF_UNSPEC when on-link */
	bool has_gw;
	bool resolved;
	uint32_t index;        /* nexthops or nh_groups slot, or NO_INDEX */
	bool write_failed;     /* the slot's last write failed: retried */
	uint8_t gw[16];
	uint32_t ifindex;
	uint8_t mac[6];
	struct nh_member members[NH_MAX_MEMBERS];
	int nmembers;
	uint32_t refcnt;      /* routes, groups and aliases using it */
	/* A feed's ids (FPM, plugin) do not own map slots: each points at a
	 * slot keyed by content, so zebra renumbering a nexthop after a
	 * restart changes no route value. */
	struct nexthop *alias;
	uint32_t nbuckets;    /* groups: buckets in use */
	uint32_t gen;         /* replay generation that last refreshed it */
	/* A feed's id whose interface went down since its last install
	 * (CLOCK_MONOTONIC ms, 0: none): dropped when unused,
	 * rib_nexthop_link_down. */
	uint64_t down_ms;
	/* nexthop_state() cached for one route status scan (st_gen). */
	const char *st_cache;
	uint32_t st_gen;
};

struct route_entry {
	bool present;
	uint8_t type;   /* enum rib_rtype */
	uint8_t kreason; /* enum kernel_reason, RT_KERNEL only */
	uint8_t proto;   /* protocol id (rib_protocol_id), RIB_PROTO_UNKNOWN */
	uint8_t rtproto; /* FPM: the frame's rtm_protocol (for status replies) */
	struct nexthop *nh; /* RT_UNICAST only */
	uint32_t pending_nhid; /* KR_NHID_UNKNOWN: the id we wait for */
	uint32_t gen;   /* replay generation that last refreshed it */
};

enum route_state {
	RS_FORWARDING,   /* in the maps */
	RS_MAP_FULL,     /* NOT in the maps: route table full */
	RS_ERROR,        /* NOT in the maps: write failed */
};

struct route {
	struct hnode node;
	struct prefix p;
	struct route_entry e[SRC_MAX];
	int8_t selected;   /* source programmed, or -1 */
	bool programmed;
	uint8_t state;     /* enum route_state */
	uint32_t val;      /* the value in the map when programmed */
	/* Route status last reported to subscribers (rib_status_subscribe):
	 * the selected source and its state (a string constant). */
	int8_t st_sel;
	uint8_t st_queued; /* subscriber bits: queued, not yet taken */
	/* Its share of the running counts (rib_summary), as last counted:
	 * ROUTE_COUNTED_* bits and the protocol id. */
	uint8_t counted, counted_proto;
	/* Written into an IPv4 table part not yet published (rib_published):
	 * its place in that list + 1, 0 when not in it. */
	uint32_t unpub;
	const char *st_state;
	/* Its row in the state tally (rib_route_tally) + 1; 0: in none. */
	uint16_t tally_row;
};

/* Routes of other tables: counted and shown, never programmed. */
struct other_route {
	struct hnode node;
	struct prefix p;
	uint32_t table;
	uint32_t gen; /* replay generation that last refreshed it */
	uint8_t src;
	uint8_t proto; /* protocol id, as in route_entry */
};

struct neighbor {
	struct hnode node;
	uint8_t family;
	bool is_static; /* entered by hand: the kernel's view does not remove it */
	uint32_t gen;   /* rib_neigh_gen when the kernel last reported it */
	uint32_t ifindex;
	uint8_t addr[16];
	uint8_t mac[6];
	uint16_t kstate;    /* the kernel's NUD_* as last announced (0: none) */
	uint32_t use_epoch; /* the fast path's use last handled (neigh_use.c) */
};

struct rib_stats {
	uint64_t route_map_full, nh_map_full, group_map_full, map_errors;
	/* Neighbors the fast path used, told to the kernel (NTF_USE). */
	uint64_t neigh_use_sent, neigh_use_failed;
	uint64_t route_writes; /* route map updates and deletes */
	uint64_t other_table;  /* other-table route messages seen */
};

/* A member of an implicit group (RTA_MULTIPATH) or an implicit single. */
struct rib_path {
	uint8_t family; /* of gw; AF_UNSPEC when on-link */
	bool has_gw;
	uint8_t gw[16];
	uint32_t ifindex;
	uint32_t weight;
};

struct rib_route_req {
	enum rib_source src;
	struct prefix p;
	enum rib_rtype type;
	uint32_t nhid;              /* explicit nexthop or group id of src */
	const struct rib_path *paths; /* else implicit: one path or a group */
	int npaths;
	enum kernel_reason kreason; /* RT_KERNEL */
	uint32_t gen;
	uint8_t proto;   /* rib_protocol_id(); 0: by source (fpmctl, local) */
	uint8_t rtproto; /* FPM: rtm_protocol of the frame */
};

extern struct htable rib_routes, rib_nh_by_id, rib_nh_by_key, rib_grp_by_key,
	rib_neigh, rib_other;
extern struct rib_stats rib_stats;

int rib_init(uint32_t max_nexthops, uint32_t max_groups);
void rib_free(void);

/* err gets a human-readable reason on failure (static storage). */
int rib_nexthop_add(enum rib_source src, uint32_t id,
		    const struct rib_path *path, bool blackhole,
		    bool unsupported, uint32_t gen, const char **err);
int rib_group_add(enum rib_source src, uint32_t id, const uint32_t *ids,
		  const uint32_t *weights, int n, uint32_t gen,
		  const char **err);
int rib_nexthop_del(enum rib_source src, uint32_t id, const char **err);
/* "nexthop table full (tables/max-nexthops = N)", or the groups'. */
const char *rib_full_error(bool is_group);
struct nexthop *rib_nexthop_find(enum rib_source src, uint32_t id);
bool rib_nexthop_same_paths(struct nexthop *nh, const struct rib_path *paths,
			    int n);

int rib_route_add(const struct rib_route_req *rq, const char **err);
int rib_route_del(enum rib_source src, const struct prefix *p,
		  const char **err);
struct route *rib_route_find(const struct prefix *p);

void rib_other_add(enum rib_source src, const struct prefix *p, uint32_t table,
		   uint32_t gen, uint8_t proto);
void rib_other_del(enum rib_source src, const struct prefix *p,
		   uint32_t table);
const struct other_route *
rib_other_find(enum rib_source src, const struct prefix *p, uint32_t table);

int rib_neigh_add(int family, const uint8_t *addr, uint32_t ifindex,
		  const uint8_t mac[6], bool is_static, const char **err);
int rib_neigh_del(int family, const uint8_t *addr, uint32_t ifindex,
		  bool is_static, const char **err);
/* Learned neighbors not reported since rib_neigh_gen was bumped go. */
extern uint32_t rib_neigh_gen;
bool rib_neigh_lookup(int family, const uint8_t *addr, uint32_t ifindex,
		      uint8_t mac[6]);
void rib_neigh_sweep(void);
/* The neighbor (family, addr, ifindex), or NULL. */
struct neighbor *rib_neigh_get(int family, const uint8_t *addr,
			       uint32_t ifindex);

/*
 * The interfaces as the RIB sees them, given by the kernel side (which
 * sits above the RIB: kernel/iface.c registers them at start). Until then
 * no interface is an egress of fpmd's and none takes traffic in.
 */
struct rib_iface_ops {
	/* Egress MAC/MTU/slot for a nexthop on ifindex; false if unmanaged
	 * (or fpmd's program is not attached to it). */
	bool (*egress)(uint32_t ifindex, uint8_t mac[6], uint16_t *mtu,
		       uint16_t *slot, bool *up);
	/* May redirects leave by ifindex (a tx port)? */
	bool (*tx_port)(uint32_t ifindex);
	/* Its configured name, or NULL if fpmd does not manage it. */
	const char *(*name)(uint32_t ifindex);
	/* Families some attached interface takes into the fast path:
	 * bit 0 IPv4, bit 1 IPv6. */
	int (*ingress_families)(void);
};
void rib_set_iface_ops(const struct rib_iface_ops *ops);

/* An interface changed (MAC, MTU, state, tx port): rewrite its nexthops. */
void rib_iface_changed(uint32_t ifindex);
/* An interface was removed and created again under the same name: the
 * nexthops through the old ifindex (routes by hand name the interface)
 * now go through the new one. */
void rib_iface_renumber(const char *name, uint32_t old, uint32_t new_ifindex);
/* Remove what src gave in generations before `before` (a replay's own:
 * what it did not refresh; the feed's next: everything so far), then
 * done(arg, routes removed). A slice now (true: all done, done called),
 * the rest in rib_sweep_run's; a new sweep of src takes over one under
 * way (its done is not called). */
typedef void (*rib_sweep_done_fn)(void *arg, uint32_t swept);
bool rib_sweep(enum rib_source src, uint32_t before, rib_sweep_done_fn done,
	       void *arg);
/* A slice of the sweeps under way (the loop, each turn); true while one
 * is left. */
bool rib_sweep_run(void);
/* Routes waiting for a nexthop id their feed never sent. */
uint32_t rib_pending_routes(void);
/* Routes of src present now. */
uint32_t rib_count(enum rib_source src);

/*
 * The protocol that gave a route, named as FRR names it ("static",
 * "ospf", "connected", "bgp", ...): feeds give a name (the plugin) or an
 * rtm_protocol number (FPM, named by fpm_apply.c). Names are interned in a
 * table of at most RIB_PROTO_MAX, so a route entry holds one byte.
 */
#define RIB_PROTO_MAX 256
#define RIB_PROTO_UNKNOWN 0 /* not given (adopted maps before the replay) */
#define RIB_PROTO_FPMCTL 1  /* entered by hand */
#define RIB_PROTO_LOCAL 2   /* the router's own addresses */
#define RIB_PROTO_OTHER 255 /* the table is full */
/* The id of name (interned on first use); -EINVAL if it is not a short
 * lowercase word (1..15 of [a-z0-9_-]). */
int rib_protocol_id(const char *name);
const char *rib_protocol_name(uint8_t id);
/* The protocol of r's entry from src, by name. */
const char *rib_entry_protocol(const struct route *r, int src);

/* The table sizes 'show summary' and 'show state' report. */
struct rib_counts {
	uint32_t routes_v4, routes_v6;
	uint32_t programmed, not_programmed;
	uint32_t programmed_v6; /* of programmed, IPv6 */
	uint32_t nexthops, groups; /* as rib_nexthop_walk visits them */
	uint32_t neighbors, other_table;
	/* Routes by the protocol of their selected entry, by protocol id. */
	uint32_t by_protocol[RIB_PROTO_MAX];
};

/* Kept as routes change (no walk of the table: cheap at any size). */
void rib_summary(struct rib_counts *c);
/* After a mass delete: give the freed memory back (periodic timer). */
void rib_trim(void);
/* Write again the nexthops and groups whose last map write failed (the
 * periodic tick); their state is "nexthop-error" until one succeeds. */
void rib_retry_writes(void);
/*
 * Link ifindex is down (or gone). zebra takes its nexthops on it as
 * uninstalled, and frees those no route uses without a word to the
 * feeds: the feeds' ids on it (and groups all of whose members are) are
 * marked, and the periodic tick (rib_nexthop_reap) drops a marked id that
 * nothing has used for a while and no feed has installed again.
 */
void rib_nexthop_link_down(uint32_t ifindex);
void rib_nexthop_reap(void);
/* One past the highest nexthop / group index in use (the maps' chunks
 * from there up hold nothing: maps_shrink). */
void rib_index_tops(uint32_t *nh_top, uint32_t *group_top);
/* Every nexthop and group once: the content ones (by key), fpmctl's
 * groups, and the ids that forward without a slot (blackhole,
 * unsupported). A feed's id that names a content slot is not visited: a
 * group zebra knows by id is one nh_groups entry, one group. */
void rib_nexthop_walk(void (*fn)(const struct nexthop *nh, void *arg),
		      void *arg);
/* Rebuild the tables from adopted pinned maps (after a restart). */
int rib_adopt(uint32_t max_nexthops, uint32_t max_groups);

const char *rib_source_name(int src);
const char *rib_rtype_name(enum rib_rtype t);
const char *route_entry_state(const struct route *r, int src);
const char *nexthop_state(const struct nexthop *nh);
/* The object whose map slot forwards for nh (a feed's id shares one). */
struct nexthop *rib_nexthop_slot(struct nexthop *nh);

/*
 * Route status: does the fast path take a route's packets now?
 *
 * A source's entry is offloaded when it is the selected one, programmed,
 * and its state is "forwarding" (nexthop or group in the maps, an egress
 * that is attached, up and a tx port, the gateway's neighbor resolved) or
 * "blackhole" (XDP drops, as the kernel would), and at least one attached
 * interface takes the route's family into the fast path (not suspended by
 * netfilter, forwarding on, no policy rules / xfrm / tc ingress sending
 * the family to the kernel): else its state is "ingress-kernel". Every
 * other state (unresolved, egress-kernel, egress-down, map-full,
 * mtu-metric, unreachable, ...) means the kernel path. Returns the state.
 */
const char *rib_route_status(const struct route *r, int src, bool *offloaded);

/*
 * The "route status changed" hook. fn hears of every route whose status
 * (selected source, or that source's state) changed since it was last
 * reported: at once when the route itself is written, and after
 * rib_status_changed_all() from a deferred scan of every route, run in
 * slices by rib_status_run(). The route may be gone by the time the
 * subscriber looks again: keep its prefix, not the pointer. Each
 * subscriber gets one bit of route.st_queued for its own use
 * (rib_status_queue / rib_status_take). Returns the id, or -1 (at most 8).
 */
typedef void (*rib_status_fn)(struct route *r, void *arg);
int rib_status_subscribe(rib_status_fn fn, void *arg);
/*
 * The maps' commit (maps_commit) returned err: 0, every route written
 * before it is in the fast path; else the routes written into new IPv4
 * table parts are not, and until a commit succeeds their state is
 * "unpublished" (their status subscribers hear it at once) -- while no
 * commit failed, a route waits for the commit that ends its loop turn,
 * and subscribers answer after it, so nothing flaps. Returns how many
 * routes wait (0 after a success).
 */
uint32_t rib_published(int err);
/* Is r among them (a status reply to it waits for rib_published)? */
static inline bool rib_route_unpublished(const struct route *r)
{
	return r->unpub != 0;
}
/* While commits fail: the error of the last one, and the routes waiting
 * ("unpublished"); else 0 and 0. */
int rib_publish_error(void);
uint32_t rib_routes_unpublished(void);

/*
 * Routes by family, selected source, protocol of that entry and its state
 * (route_entry_state; "not-selected" with protocol "none" when no entry
 * is selected), kept as each route's state is worked out: when it is
 * written, and by the deferred scan after anything that may change many
 * routes' state. Nothing walks the table: the metrics read it at any
 * size. Only rows with routes are visited.
 */
void rib_route_tally(void (*fn)(int family, const char *source,
				const char *protocol, const char *state,
				uint32_t n, void *arg),
		     void *arg);

/* Something that may change many routes' status changed (an interface, a
 * guard, a neighbor, a nexthop): scan every route soon. */
void rib_status_changed_all(void);
/* One slice of the deferred scan; true while more work is waiting. */
bool rib_status_run(void);

/* Subscriber id's queued bit: set it, false if it was set already. */
static inline bool rib_status_queue(struct route *r, int id)
{
	bool was = r->st_queued & (1u << id);

	r->st_queued |= (uint8_t)(1u << id);
	return !was;
}

static inline bool rib_status_queued(const struct route *r, int id)
{
	return id >= 0 && (r->st_queued & (1u << id));
}

/* Clear it; true if it was set. */
static inline bool rib_status_take(struct route *r, int id)
{
	bool was = r->st_queued & (1u << id);

	r->st_queued &= (uint8_t)~(1u << id);
	return was;
}

#endif
