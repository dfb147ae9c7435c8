// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmctl: printers of fpmd's tables, routes, nexthops and groups,
 * neighbors, and of a lookup's answer, as text or as JSON shaped like
 * FRR's show ... json (protocol, prefixLen, interfaceName, ...).
 */
#include <stdio.h>
#include <string.h>

#include "cli/fpmctl.h"
#include "common/util.h"

/* Where a route comes from: protocol as FRR's JSON names it, source: which
 * feed; and its type. show routes and lookup name them alike. */
static void route_origin_json(struct json *j, const char *protocol,
			      Fpmd__Source source, Fpmd__RouteType type)
{
	json_str(j, "protocol", protocol);
	json_str(j, "source", source_name(source));
	json_str(j, "type", rtype_name(type));
}

/* One route of show routes (an entry per source of a prefix). */
static void route_json(struct json *j, const Fpmd__Route *r, const char *pb)
{
	char ab[ADDR_STRLEN];

	json_object(j, NULL);
	json_str(j, "prefix", pb);
	json_u64(j, "prefixLen", r->prefix->len);
	route_origin_json(j, r->protocol, r->source, r->type);
	json_bool(j, "selected", r->selected);
	json_bool(j, "installed", r->programmed);
	json_str(j, "state", r->state);
	json_u64(j, "table", r->table);
	if (r->nhid)
		json_u64(j, "nexthopGroupId", r->nhid);
	if (r->type == FPMD__ROUTE_TYPE__RT_UNICAST) {
		json_u64(j, "fpmdIndex", r->index);
		json_bool(j, "isGroup", r->is_group);
		json_array(j, "nexthops");
		if (!r->is_group) {
			json_object(j, NULL);
			if (r->gateway.len) {
				json_str(j, "ip", bin_addr(r->gateway, ab));
				json_str(j, "afi",
					 r->gateway.len == 4 ? "ipv4" : "ipv6");
			} else {
				json_bool(j, "directlyConnected", true);
			}
			json_str(j, "interfaceName", r->ifname);
			json_close(j);
		}
		json_close(j);
	}
	json_close(j);
}

/* What a route's text row says of its nexthop. */
static void route_nexthop(const Fpmd__Route *r, char *nh, size_t size)
{
	char ab[ADDR_STRLEN];

	if (r->table && r->table != 254) {
		snprintf(nh, size, "table %u", r->table);
	} else if (!strcmp(r->state, "nexthop-id-unknown")) {
		snprintf(nh, size, "nhid %u (never sent)", r->nhid);
	} else if (r->type == FPMD__ROUTE_TYPE__RT_UNICAST && r->ifname[0]) {
		if (r->is_group)
			snprintf(nh, size, "group %u", r->nhid);
		else if (r->gateway.len)
			snprintf(nh, size, "via %s dev %s",
				 bin_addr(r->gateway, ab), r->ifname);
		else
			snprintf(nh, size, "dev %s (connected)", r->ifname);
		if (r->nhid && !r->is_group) {
			size_t l = strlen(nh);

			snprintf(nh + l, size - l, " (nhid %u)", r->nhid);
		}
	} else if (r->is_group) {
		snprintf(nh, size, "group %u", r->nhid);
	}
}

/* Called once per chunk of a streamed 'show routes' (rsp->more: another
 * follows), so the table is printed as it arrives, in bounded memory. */
int print_routes(Fpmd__Response *rsp, struct json *j, bool all)
{
	static char prev[PREFIX_STRLEN];
	static bool started;
	static int w = 18;
	char pb[PREFIX_STRLEN];

	(void)all;
	if (j) {
		/* {"PREFIX": [{entry per source}]}, as FRR's show ip route */
		if (!j->depth)
			json_object(j, NULL);
		for (size_t i = 0; i < rsp->n_routes; i++) {
			bin_prefix(rsp->routes[i]->prefix, pb);
			if (j->depth == 1 || strcmp(prev, pb)) {
				if (j->depth == 2)
					json_close(j);
				json_array(j, pb);
				strcpy(prev, pb);
			}
			route_json(j, rsp->routes[i], pb);
		}
		while (!rsp->more && j->depth)
			json_close(j);
		return 0;
	}
	for (size_t i = 0; i < rsp->n_routes; i++) {
		int l = (int)strlen(bin_prefix(rsp->routes[i]->prefix, pb));

		if (l > w)
			w = l;
	}
	if (!started)
		printf("%-*s %-7s %-10s %-11s %-3s %-16s %s\n", w, "Prefix",
		       "Source", "Protocol", "Type", "Sel", "State", "Nexthop");
	started = true;
	for (size_t i = 0; i < rsp->n_routes; i++) {
		Fpmd__Route *r = rsp->routes[i];
		char nh[128] = "";

		route_nexthop(r, nh, sizeof(nh));
		printf("%-*s %-7s %-10s %-11s %-3s %-16s %s\n", w,
		       bin_prefix(r->prefix, pb), source_name(r->source),
		       r->protocol, rtype_name(r->type), r->selected ? "*" : "",
		       r->state, nh);
	}
	return 0;
}

static void nexthop_json(struct json *j, const Fpmd__Nexthop *n)
{
	char key[32], ab[ADDR_STRLEN], mb[MAC_STRLEN];

	if (n->id)
		snprintf(key, sizeof(key), "%u", n->id);
	else
		snprintf(key, sizeof(key), "implicit-%u", n->index);
	json_object(j, key);
	json_u64(j, "id", n->id);
	json_str(j, "source", n->id ? source_name(n->source) : "implicit");
	json_u64(j, "fpmdIndex", n->index);
	json_u64(j, "refCount", n->refcnt);
	json_str(j, "state", n->state);
	if (n->n_members) {
		json_bool(j, "group", true);
		json_u64(j, "buckets", n->buckets);
		json_array(j, "nexthops");
		for (size_t m = 0; m < n->n_members; m++) {
			json_object(j, NULL);
			json_u64(j, "id", n->members[m]->nhid);
			json_u64(j, "weight", n->members[m]->weight);
			json_close(j);
		}
		json_close(j);
	} else {
		json_bool(j, "group", false);
		json_str(j, "interfaceName", n->ifname);
		json_u64(j, "ifindex", n->ifindex);
		if (n->gateway.len)
			json_str(j, "ip", bin_addr(n->gateway, ab));
		else
			json_bool(j, "directlyConnected", true);
		json_bool(j, "resolved", n->resolved);
		if (n->mac.len)
			json_str(j, "mac", bin_mac(n->mac, mb));
	}
	json_close(j);
}

static void nexthop_text(const Fpmd__Nexthop *n)
{
	char id[16], what[256] = "", ab[ADDR_STRLEN], mb[MAC_STRLEN];

	snprintf(id, sizeof(id), n->id ? "%u" : "-", n->id);
	if (n->n_members) {
		size_t l = (size_t)snprintf(what, sizeof(what),
					    "group (%u buckets):", n->buckets);

		for (size_t m = 0; m < n->n_members && l < sizeof(what); m++)
			l += (size_t)snprintf(what + l, sizeof(what) - l,
					      " %u,%u", n->members[m]->nhid,
					      n->members[m]->weight);
	} else if (!strcmp(n->state, "blackhole") ||
		   !strcmp(n->state, "unsupported")) {
		snprintf(what, sizeof(what), "%s", n->state);
	} else if (n->gateway.len) {
		snprintf(what, sizeof(what), "via %s dev %s%s%s",
			 bin_addr(n->gateway, ab), n->ifname,
			 n->mac.len ? " lladdr " : "", bin_mac(n->mac, mb));
	} else {
		snprintf(what, sizeof(what), "dev %s (connected)", n->ifname);
	}
	printf("%-8s %-7s %-6u %-4u %-15s %s\n", id,
	       n->id ? source_name(n->source) : "-", n->index, n->refcnt,
	       n->state, what);
}

int print_nexthops(Fpmd__Response *rsp, struct json *j, bool all)
{
	(void)all;
	if (j) {
		json_object(j, NULL);
		for (size_t i = 0; i < rsp->n_nexthops; i++)
			nexthop_json(j, rsp->nexthops[i]);
		json_close(j);
		return 0;
	}
	printf("%-8s %-7s %-6s %-4s %-15s %s\n", "ID", "Source", "Index",
	       "Refs", "State", "Nexthop");
	for (size_t i = 0; i < rsp->n_nexthops; i++)
		nexthop_text(rsp->nexthops[i]);
	return 0;
}

/* show groups: the nexthops that are groups. */
int print_groups(Fpmd__Response *rsp, struct json *j, bool all)
{
	size_t n0 = rsp->n_nexthops, k = 0;
	int ret;

	/* Groups first (swapped, so all stay owned), print only them. */
	for (size_t i = 0; i < n0; i++) {
		if (rsp->nexthops[i]->n_members) {
			Fpmd__Nexthop *t = rsp->nexthops[k];

			rsp->nexthops[k++] = rsp->nexthops[i];
			rsp->nexthops[i] = t;
		}
	}
	rsp->n_nexthops = k;
	ret = print_nexthops(rsp, j, all);
	rsp->n_nexthops = n0;
	return ret;
}

int print_neighbors(Fpmd__Response *rsp, struct json *j, bool all)
{
	char ab[ADDR_STRLEN], mb[MAC_STRLEN];

	(void)all;
	if (j) {
		json_array(j, NULL);
		for (size_t i = 0; i < rsp->n_neighbors; i++) {
			Fpmd__Neighbor *n = rsp->neighbors[i];

			json_object(j, NULL);
			json_str(j, "ip", bin_addr(n->addr, ab));
			json_str(j, "interfaceName", n->ifname);
			json_u64(j, "ifindex", n->ifindex);
			json_str(j, "mac", bin_mac(n->mac, mb));
			json_str(j, "source", source_name(n->source));
			json_close(j);
		}
		json_close(j);
		return 0;
	}
	printf("%-40s %-16s %-17s %s\n", "Address", "Interface", "MAC",
	       "Source");
	for (size_t i = 0; i < rsp->n_neighbors; i++) {
		Fpmd__Neighbor *n = rsp->neighbors[i];

		printf("%-40s %-16s %-17s %s\n", bin_addr(n->addr, ab),
		       n->ifname, bin_mac(n->mac, mb), source_name(n->source));
	}
	return 0;
}

static void lookup_json(const Fpmd__LookupResult *o, const char *addr,
			struct json *j)
{
	char pb[PREFIX_STRLEN], ab[ADDR_STRLEN], mb[MAC_STRLEN];

	json_object(j, NULL);
	json_str(j, "address", addr);
	if (o->prefix) {
		json_str(j, "prefix", bin_prefix(o->prefix, pb));
		route_origin_json(j, o->protocol, o->source, o->type);
		json_str(j, "state", o->state);
	}
	json_bool(j, "fastPath", o->fast_path);
	json_str(j, "verdict", o->verdict);
	json_str(j, "reason", o->reason);
	if (o->nhid)
		json_u64(j, "nexthopGroupId", o->nhid);
	json_array(j, "nexthops");
	for (size_t i = 0; i < o->n_nexthops; i++) {
		const Fpmd__Nexthop *n = o->nexthops[i];

		json_object(j, NULL);
		json_u64(j, "id", n->id);
		json_str(j, "interfaceName", n->ifname);
		if (n->gateway.len)
			json_str(j, "ip", bin_addr(n->gateway, ab));
		json_bool(j, "resolved", n->resolved);
		if (n->mac.len)
			json_str(j, "mac", bin_mac(n->mac, mb));
		json_str(j, "state", n->state);
		json_close(j);
	}
	json_close(j);
	json_close(j);
}

int print_lookup(const Fpmd__LookupResult *o, const char *addr, struct json *j)
{
	char pb[PREFIX_STRLEN], ab[ADDR_STRLEN], mb[MAC_STRLEN];

	if (j) {
		lookup_json(o, addr, j);
		return 0;
	}
	if (o->prefix)
		printf("%s: route %s (%s, %s %s, %s)\n", addr,
		       bin_prefix(o->prefix, pb), source_name(o->source),
		       o->protocol, rtype_name(o->type), o->state);
	else
		printf("%s: no route in the fast path\n", addr);
	printf("  %s: %s\n", o->verdict, o->reason);
	for (size_t i = 0; i < o->n_nexthops; i++) {
		const Fpmd__Nexthop *n = o->nexthops[i];

		printf("  nexthop %u: %s%s%s dev %s %s%s [%s]\n", n->id,
		       n->gateway.len ? "via " : "",
		       n->gateway.len ? bin_addr(n->gateway, ab) : "",
		       n->gateway.len ? "" : "connected", n->ifname,
		       n->mac.len ? "lladdr " : "",
		       n->mac.len ? bin_mac(n->mac, mb) : "", n->state);
	}
	return 0;
}
