// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Metrics of the RIB and the maps it fills: routes by label set,
 * nexthops and groups by state, neighbors, and each sized map's fill.
 * Routes come from the RIB's running tally and counts (no walk of the
 * route table: a million routes cost nothing per scrape); nexthops,
 * groups and neighbors, a few thousand at most, are walked.
 */
#include <stdlib.h>
#include <string.h>

#include "api/metrics_text.h"
#include "conf/conf.h"
#include "fib/maps.h"
#include "rib/rib.h"

/*
 * Routes by label set. A new label (the route's protocol) is one more
 * entry here and its value in metrics_tables_walk().
 */
enum { RL_FAMILY, RL_SOURCE, RL_PROTOCOL, RL_STATE, RL_MAX };
static const char *const route_labels[RL_MAX] = { "family", "source",
						  "protocol", "state" };

struct route_row {
	const char *v[RL_MAX];
	uint64_t n;
};

/* One row per label set seen; a handful, whatever the table size. */
struct route_tally {
	struct route_row *row;
	int n, cap;
	bool oom;
};

/* Nexthops or groups per state, as rib_nexthop_walk visits them. */
struct nh_tally {
	const char *name[32];
	uint64_t n[32];
	int count;
	uint64_t in_map; /* with a map slot */
};

/*
 * What the families need from the route, nexthop and neighbor tables,
 * gathered once per scrape.
 */
struct tables {
	struct route_tally routes;
	uint64_t programmed[2]; /* by family: ipv4, ipv6 */
	struct nh_tally nh[2];	/* nexthops, groups */
	uint64_t neigh[2][2];	/* [ipv6][static] */
};

static void route_tally_add(struct route_tally *t, const char *const *v,
			    uint64_t n)
{
	int k;

	for (k = 0; k < t->n; k++) {
		int l = 0;

		while (l < RL_MAX && !strcmp(t->row[k].v[l], v[l]))
			l++;
		if (l == RL_MAX)
			break;
	}
	if (k == t->n) {
		if (t->n == t->cap) {
			int cap = t->cap ? t->cap * 2 : 64;
			struct route_row *r =
			    realloc(t->row, (size_t)cap * sizeof(*r));

			if (!r) {
				t->oom = true;
				return;
			}
			t->row = r;
			t->cap = cap;
		}
		memcpy(t->row[k].v, v, sizeof(t->row[k].v));
		t->row[k].n = 0;
		t->n++;
	}
	t->row[k].n += n;
}

static void nh_tally(const struct nexthop *nh, void *arg)
{
	struct nh_tally *t = &((struct tables *)arg)->nh[nh->is_group];
	const char *st;
	int k;

	if (rib_nexthop_slot((struct nexthop *)nh)->index != NO_INDEX &&
	    !nh->blackhole && !nh->unsupported)
		t->in_map++;
	st = nexthop_state(nh);
	for (k = 0; k < t->count && strcmp(t->name[k], st); k++)
		;
	if (k == t->count) {
		if (k == 32)
			return;
		t->name[t->count] = st;
		t->n[t->count++] = 0;
	}
	t->n[k]++;
}

static void route_row(int family, const char *source, const char *protocol,
		      const char *state, uint32_t n, void *arg)
{
	struct tables *t = arg;
	const char *v[RL_MAX] = { family == AF_INET ? "ipv4" : "ipv6", source,
				  protocol, state };

	route_tally_add(&t->routes, v, n);
}

struct tables *metrics_tables_walk(bool *oom)
{
	struct rib_counts c;
	struct tables *t = calloc(1, sizeof(*t));
	struct hnode *n, *tmp;
	size_t i;

	if (!t)
		return NULL;

	/* Each route once, by the source programmed and its state: their
	 * sum is 'show summary's routes. */
	rib_route_tally(route_row, t);
	rib_summary(&c);
	t->programmed[1] = c.programmed_v6;
	t->programmed[0] = c.programmed - c.programmed_v6;
	rib_nexthop_walk(nh_tally, t);
	ht_for_each(&rib_neigh, n, tmp, i)
	{
		const struct neighbor *ne =
		    container_of(n, struct neighbor, node);

		t->neigh[ne->family == AF_INET6][ne->is_static]++;
	}
	*oom = t->routes.oom;
	return t;
}

void metrics_tables_free(struct tables *t)
{
	free(t->routes.row);
	free(t);
}

static void routes(struct out *o)
{
	const struct route_tally *t = &o->t->routes;

	for (int k = 0; k < t->n; k++)
		metric_sample_a(o, t->row[k].n, route_labels, t->row[k].v,
				RL_MAX);
}

static void route_entries(struct out *o)
{
	for (int s = 0; s < SRC_MAX; s++)
		metric_sample(o, rib_count(s), "source", rib_source_name(s),
			      NULL);
}

static void other_table(struct out *o)
{
	metric_sample(o, rib_other.count, NULL);
}

static void nexthops_of(struct out *o, bool groups)
{
	const struct nh_tally *t = &o->t->nh[groups];

	for (int k = 0; k < t->count; k++)
		metric_sample(o, t->n[k], "state", t->name[k], NULL);
}

static void nexthops(struct out *o)
{
	nexthops_of(o, false);
}

static void groups(struct out *o)
{
	nexthops_of(o, true);
}

static void neighbors(struct out *o)
{
	for (int f = 0; f < 2; f++)
		for (int s = 0; s < 2; s++)
			metric_sample(o, o->t->neigh[f][s], "family",
				      f ? "ipv6" : "ipv4", "source",
				      s ? "static" : "kernel", NULL);
}

/* The maps whose fill fpmd limits (tables/max-*), by their pinned name. */
struct map_fill {
	const char *map;
	uint64_t entries, capacity;
};

static int map_fills(const struct tables *t, struct map_fill *m)
{
	m[0] = (struct map_fill){ "routes_v4", t->programmed[0],
				  cfg.max_routes_v4 };
	m[1] = (struct map_fill){ "routes_v6", t->programmed[1],
				  cfg.max_routes_v6 };
	m[2] =
	    (struct map_fill){ "nexthops", t->nh[0].in_map, cfg.max_nexthops };
	m[3] =
	    (struct map_fill){ "nh_groups", t->nh[1].in_map, cfg.max_groups };
	m[4] = (struct map_fill){ "neigh_v4", t->neigh[0][0] + t->neigh[0][1],
				  cfg.max_neigh };
	m[5] = (struct map_fill){ "neigh_v6", t->neigh[1][0] + t->neigh[1][1],
				  cfg.max_neigh };
	return 6;
}

static void map_entries(struct out *o)
{
	struct map_fill m[8];
	int n = map_fills(o->t, m);

	for (int k = 0; k < n; k++)
		metric_sample(o, m[k].entries, "map", m[k].map, NULL);
}

static void map_capacity(struct out *o)
{
	struct map_fill m[8];
	int n = map_fills(o->t, m);

	for (int k = 0; k < n; k++)
		metric_sample(o, m[k].capacity, "map", m[k].map, NULL);
}

static void map_full(struct out *o)
{
	metric_sample(o, rib_stats.route_map_full, "map", "routes", NULL);
	metric_sample(o, rib_stats.nh_map_full, "map", "nexthops", NULL);
	metric_sample(o, rib_stats.group_map_full, "map", "nh_groups", NULL);
}

static void map_errors(struct out *o)
{
	metric_sample(o, rib_stats.map_errors, NULL);
}

static void neigh_use(struct out *o)
{
	metric_sample(o, rib_stats.neigh_use_sent, "result", "sent", NULL);
	metric_sample(o, rib_stats.neigh_use_failed, "result", "failed", NULL);
}

static void route_writes(struct out *o)
{
	metric_sample(o, rib_stats.route_writes, NULL);
}

static void map_chunks(struct out *o)
{
	struct maps_chunk_counts n;

	maps_chunk_counts(&n);
	metric_sample(o, n.live, "state", "live", NULL);
	metric_sample(o, n.dropping, "state", "dropping", NULL);
}

static void map_chunks_dropped(struct out *o)
{
	struct maps_chunk_counts n;

	maps_chunk_counts(&n);
	metric_sample(o, n.dropped, NULL);
}

static void map_chunk_bytes(struct out *o)
{
	struct maps_chunk_counts n;

	maps_chunk_counts(&n);
	metric_sample(o, n.bytes, NULL);
}

static const struct metric_family families[] = {
	{ "fpmd_routes", "gauge",
	  "Routes in fpmd's table (main table), each counted once by its "
	  "family, the source programmed and its state (forwarding, or why "
	  "not).",
	  .write = routes },
	{ "fpmd_route_entries", "gauge",
	  "Route entries each source gives (a prefix given by two sources "
	  "counts in both).",
	  .write = route_entries },
	{ "fpmd_routes_other_table", "gauge",
	  "Routes of other tables: shown, never programmed.",
	  .write = other_table },
	{ "fpmd_nexthops", "gauge", "Nexthops by state.", .write = nexthops },
	{ "fpmd_nexthop_groups", "gauge", "Nexthop groups by state.",
	  .write = groups },
	{ "fpmd_neighbors", "gauge",
	  "Neighbors fpmd forwards to, by family and source (the kernel's "
	  "table, or static by hand).",
	  .write = neighbors },
	{ "fpmd_map_entries", "gauge",
	  "Entries in use in a BPF map fpmd sizes (tables/max-*).",
	  .write = map_entries },
	{ "fpmd_map_capacity", "gauge",
	  "Capacity of a BPF map fpmd sizes (tables/max-*).",
	  .write = map_capacity },
	{ "fpmd_map_full_total", "counter",
	  "Entries refused because their map was full (map routes: both "
	  "families).",
	  .write = map_full },
	{ "fpmd_map_write_errors_total", "counter",
	  "BPF map writes that failed for another reason than a full map.",
	  .write = map_errors },
	{ "fpmd_route_map_writes_total", "counter",
	  "Route map updates and deletes.", .write = route_writes },
	{ "fpmd_neighbor_use_total", "counter",
	  "Neighbors the fast path used while the kernel had them STALE, "
	  "told to the kernel (RTM_NEWNEIGH with NTF_USE) as its own "
	  "forwarding would have, by result.",
	  .write = neigh_use },
	{ "fpmd_map_chunks", "gauge",
	  "Chunks of the chunked maps (IPv4 tables, nexthops, groups, the "
	  "IPv6 table): live in their outer maps, or dropping (no longer "
	  "needed, being taken out and freed).",
	  .write = map_chunks },
	{ "fpmd_map_chunks_dropped_total", "counter",
	  "Chunks taken out of their outer maps and freed.",
	  .write = map_chunks_dropped },
	{ "fpmd_map_chunk_bytes", "gauge",
	  "Bytes of the chunks that exist (live and dropping).",
	  .write = map_chunk_bytes },
};

const struct metric_group metrics_rib = METRIC_GROUP(families);
