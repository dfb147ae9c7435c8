// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Nexthops: objects with ids (fpmctl's own, a feed's) or implicit ones
 * keyed by content (family, gateway, interface), each a nexthops map
 * slot. A feed's ids own no slot: they alias the content slot, so zebra
 * renumbering a nexthop changes no route value. Groups are in group.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "conf/conf.h"
#include "common/log.h"
#include "common/util.h"
#include "fib/maps.h"
#include "rib/rib_int.h"

struct nexthop *rib_nexthop_find(enum rib_source src, uint32_t id)
{
	uint32_t h = id_hash((uint8_t)src, id);

	for (struct hnode *n = ht_chain(&rib_nh_by_id, h); n; n = n->next) {
		struct nexthop *nh = container_of(n, struct nexthop, id_node);

		if (n->hash == h && nh->id == id && nh->src == src)
			return nh;
	}
	return NULL;
}

int nh_write(struct nexthop *nh)
{
	struct fpmd_nexthop v = { 0 };
	bool up = false;

	if (nh->index == NO_INDEX)
		return 0;
	if (nh->is_group)
		return group_write(nh);
	v.ifindex = nh->ifindex;
	v.id = nh->id;
	v.src = nh->src;
	v.flags = FPMD_NH_F_VALID;
	if (!nh->has_gw)
		v.flags |= FPMD_NH_F_CONNECTED;
	else if (nh->resolved)
		v.flags |= FPMD_NH_F_RESOLVED;
	if (nh->family == AF_INET6)
		v.flags |= FPMD_NH_F_V6;
	if (!egress_info(nh->ifindex, v.smac, &v.mtu, &v.oslot, &up))
		/* Not an egress of ours (unmanaged, or our program is not
		 * attached to it): no MTU 0 that would count every frame as
		 * pass-mtu; tx_ports refuses it, so pass-egress-kernel. */
		v.mtu = 0xffff;
	else if (!up)
		v.flags |= FPMD_NH_F_IFDOWN;
	memcpy(v.dmac, nh->mac, 6);
	memcpy(v.gw, nh->gw, 16);
	return maps_nexthop_write(nh->index, &v);
}

/* Slots whose last write failed (write_failed set). */
static uint32_t nh_failed;

void nh_write_logged(struct nexthop *nh)
{
	int ret = nh_write(nh);

	/* What the fast path does with every route using it may change. */
	rib_status_changed_all();

	if (ret && !nh->write_failed) {
		rib_stats.map_errors++;
		log_err("maps: %s %u (slot %u): write failed: %s; its routes "
			"are not in the fast path (nexthop-error), retrying",
			nh->is_group ? "group" : "nexthop", nh->id, nh->index,
			strerror(-ret));
		nh->write_failed = true;
		nh_failed++;
	} else if (!ret && nh->write_failed) {
		log_info("maps: %s %u (slot %u): written",
			 nh->is_group ? "group" : "nexthop", nh->id, nh->index);
		nh->write_failed = false;
		nh_failed--;
	}
}

/* A slot owner leaves: out of the count. */
void nh_write_forget(struct nexthop *nh)
{
	if (nh->write_failed) {
		nh->write_failed = false;
		nh_failed--;
	}
}

void nh_each(struct htable *t, bool by_id,
	     void (*fn)(struct nexthop *nh, void *arg), void *arg)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(t, n, tmp, i)
	{
		fn(by_id ? container_of(n, struct nexthop, id_node) :
			   container_of(n, struct nexthop, key_node),
		   arg);
	}
}

static void retry(struct nexthop *nh, void *arg)
{
	(void)arg;
	if (nh->write_failed)
		nh_write_logged(nh);
}

void rib_retry_writes(void)
{
	/* Singles first: a group's members are written before it. */
	if (nh_failed)
		nh_each(&rib_nh_by_key, false, retry, NULL);
	if (nh_failed)
		nh_each(&rib_nh_by_id, true, retry, NULL);
	if (nh_failed)
		nh_each(&rib_grp_by_key, false, retry, NULL);
}

void nh_resolve(struct nexthop *nh)
{
	struct neighbor *ne;

	if (!nh->has_gw)
		return;
	ne = neigh_find(nh->family, nh->gw, nh->ifindex);
	nh->resolved = ne != NULL;
	/* Gone: the last MAC stays. A map update is a plain copy, and the
	 * fast path may read the entry while it is written: flags that still
	 * say resolved with a MAC half zeroed would send a frame to nobody
	 * (the soak lost one in some hundred neighbor deletions). With the
	 * MAC kept, a reader sees either the old entry or "unresolved". */
	if (ne)
		memcpy(nh->mac, ne->mac, 6);
}

struct nexthop *nh_alloc(enum rib_source src, uint32_t id,
				bool is_group, bool need_index)
{
	struct nexthop *nh = calloc(1, sizeof(*nh));

	if (!nh)
		return NULL;
	nh->id = id;
	nh->src = (uint8_t)src;
	nh->is_group = is_group;
	nh->index = NO_INDEX;
	if (!need_index)
		return nh;
	nh->index = pool_get(is_group ? &group_pool : &nh_pool);
	if (nh->index == NO_INDEX) {
		if (is_group)
			rib_stats.group_map_full++;
		else
			rib_stats.nh_map_full++;
	}
	return nh;
}

/* The error a full nexthops or nh_groups map gives, naming the limit. */
const char *rib_full_error(bool is_group)
{
	static char buf[96];

	snprintf(buf, sizeof(buf), "%s table full (tables/%s = %u)",
		 is_group ? "nexthop group" : "nexthop",
		 is_group ? "max-groups" : "max-nexthops",
		 is_group ? cfg.max_groups : cfg.max_nexthops);
	return buf;
}

/* A nexthop or group that got no map slot: say which, and what follows. */
void nh_full_log(const struct nexthop *nh)
{
	char gw[ADDR_STRLEN], ifn[IF_NAMESIZE + 2] = "?";
	const char *name;

	if (nh->id) {
		log_err("maps: %s: %s %u kept out of the fast path (routes "
			"using it go to the kernel)",
			rib_full_error(nh->is_group),
			nh->is_group ? "group" : "nexthop", nh->id);
		return;
	}
	if (nh->is_group) {
		log_err("maps: %s: an ECMP group of %d nexthops kept out of "
			"the fast path (routes using it go to the kernel)",
			rib_full_error(true), nh->nmembers);
		return;
	}
	name = egress_name(nh->ifindex);
	if (name)
		snprintf(ifn, sizeof(ifn), "%s", name);
	if (nh->has_gw)
		fmt_addr(nh->family, nh->gw, gw);
	log_err("maps: %s: nexthop %s%s dev %s kept out of the fast path "
		"(routes using it go to the kernel)",
		rib_full_error(false), nh->has_gw ? "via " : "",
		nh->has_gw ? gw : "(connected)", ifn);
}

void nh_set_single(struct nexthop *nh, const struct rib_path *path)
{
	if (nh->keyed)
		ht_remove(&rib_nh_by_key, &nh->key_node);
	nh->family = path->has_gw ? path->family : AF_UNSPEC;
	nh->has_gw = path->has_gw;
	memset(nh->gw, 0, 16);
	if (path->has_gw)
		memcpy(nh->gw, path->gw, addr_len(path->family));
	nh->ifindex = path->ifindex;
	ht_insert(&rib_nh_by_key, &nh->key_node,
		  key_hash(nh->family, nh->gw, nh->ifindex));
	nh->keyed = true;
	nh_resolve(nh);
}

void nh_free(struct nexthop *nh)
{
	struct nexthop *alias = nh->alias;

	if (nh->is_group) {
		for (int i = 0; i < nh->nmembers; i++)
			nh->members[i].nh->refcnt--;
		if (nh->keyed)
			ht_remove(&rib_grp_by_key, &nh->key_node);
		if (nh->index != NO_INDEX)
			maps_group_clear(nh->index);
		pool_put(&group_pool, nh->index);
	} else {
		if (nh->keyed)
			ht_remove(&rib_nh_by_key, &nh->key_node);
		if (nh->index != NO_INDEX)
			maps_nexthop_clear(nh->index);
		pool_put(&nh_pool, nh->index);
	}
	nh_write_forget(nh);
	nh_installed(nh);
	free(nh);
	nh_put(alias);
}

void nh_put(struct nexthop *nh)
{
	struct nh_member m[NH_MAX_MEMBERS];
	int n = 0;

	if (!nh)
		return;
	nh->refcnt--;
	/* Implicit nexthops and groups live as long as something uses them. */
	if (nh->id || nh->refcnt)
		return;
	if (nh->is_group) {
		n = nh->nmembers;
		memcpy(m, nh->members, sizeof(m[0]) * (size_t)n);
		for (int i = 0; i < n; i++)
			m[i].nh->refcnt++; /* nh_free drops them */
	}
	nh_free(nh);
	for (int i = 0; i < n; i++)
		nh_put(m[i].nh);
}

static bool same_path(const struct nexthop *nh, const struct rib_path *path)
{
	return nh->keyed && !nh->blackhole && !nh->unsupported &&
	       nh->ifindex == path->ifindex && nh->has_gw == path->has_gw &&
	       (!path->has_gw ||
		(nh->family == path->family &&
		 !memcmp(nh->gw, path->gw, addr_len(path->family))));
}

/*
 * Whether nh (a feed's single or group) forwards over exactly paths: the
 * same gateways, interfaces and weights, in any order. The plugin sends a
 * route's paths next to its group id, so a group zebra left stale shows.
 */
bool rib_nexthop_same_paths(struct nexthop *nh, const struct rib_path *paths,
			    int n)
{
	bool used[NH_MAX_MEMBERS] = { false };

	if (!nh->is_group)
		return n == 1 && same_path(slot_of(nh), &paths[0]);
	if (nh->nmembers != n)
		return false;
	for (int i = 0; i < n; i++) {
		int j;

		for (j = 0; j < n; j++)
			if (!used[j] && nh->members[j].weight == paths[i].weight &&
			    same_path(slot_of(nh->members[j].nh), &paths[i]))
				break;
		if (j == n)
			return false;
		used[j] = true;
	}
	return true;
}

/* A feed's single id: point it at the content slot for path. */
static int feed_single(struct nexthop *nh, const struct rib_path *path,
		       bool blackhole, bool unsupported, const char **err)
{
	struct nexthop *slot = NULL, *old = nh->alias;

	if (!blackhole && !unsupported) {
		slot = nh_implicit(path);
		if (!slot) {
			*err = "out of memory";
			return -ENOMEM;
		}
		if (slot == old && !nh->blackhole && !nh->unsupported)
			return 0; /* unchanged: a replay writes nothing */
		slot->refcnt++;
	} else if (!old && nh->blackhole == blackhole &&
		   nh->unsupported == unsupported) {
		return 0;
	}
	nh->alias = slot;
	nh->blackhole = blackhole;
	nh->unsupported = unsupported;
	/* What used this id now forwards by another slot (or none). */
	if (nh->refcnt)
		routes_follow(nh);
	nh_put(old);
	return 0;
}

int rib_nexthop_add(enum rib_source src, uint32_t id,
		    const struct rib_path *path, bool blackhole,
		    bool unsupported, uint32_t gen, const char **err)
{
	struct nexthop *nh = rib_nexthop_find(src, id);
	bool is_new = !nh;
	int ret;

	if (!id) {
		*err = "nexthop id 0 is reserved";
		return -EINVAL;
	}
	if (!blackhole && !unsupported && !path->ifindex) {
		*err = "nexthop needs an interface";
		return -EINVAL;
	}
	if (nh && nh->is_group) {
		*err = "id is a group; delete it first";
		return -EEXIST;
	}
	if (!nh) {
		nh = nh_alloc(src, id, false,
			      !feed_src(src) && !blackhole && !unsupported);
		if (!nh) {
			*err = "out of memory";
			return -ENOMEM;
		}
		/* By hand: refused, the caller hears why (a feed's ids own
		 * no slot). */
		if (!feed_src(src) && !blackhole && !unsupported &&
		    nh->index == NO_INDEX) {
			free(nh);
			*err = rib_full_error(false);
			return -ENOSPC;
		}
		ht_insert(&rib_nh_by_id, &nh->id_node, id_hash((uint8_t)src, id));
	}
	nh->gen = gen;
	if (feed_src(src)) {
		nh_installed(nh);
		ret = feed_single(nh, path, blackhole, unsupported, err);
		if (!ret && is_new)
			route_retry_pending(src, id);
		return ret;
	}
	if (!is_new && !blackhole && !unsupported && same_path(nh, path))
		return 0; /* unchanged: nothing to write */
	if (nh->blackhole != blackhole || nh->unsupported != unsupported) {
		if (!blackhole && !unsupported && nh->index == NO_INDEX) {
			nh->index = pool_get(&nh_pool);
			if (nh->index == NO_INDEX) {
				rib_stats.nh_map_full++;
				*err = rib_full_error(false);
				return -ENOSPC;
			}
		}
		nh->blackhole = blackhole;
		nh->unsupported = unsupported;
		/* The kind changes route values: routes using it follow. */
		if (nh->refcnt)
			routes_follow(nh);
	}
	if (!blackhole && !unsupported) {
		/* Replace in place: routes and groups keep this slot. */
		nh_set_single(nh, path);
		nh_write_logged(nh);
		groups_rewrite_containing(nh);
	}
	if (is_new)
		route_retry_pending(src, id);
	return 0;
}

int rib_nexthop_del(enum rib_source src, uint32_t id, const char **err)
{
	struct nexthop *nh = rib_nexthop_find(src, id);

	if (!nh) {
		*err = "no such nexthop";
		return -ENOENT;
	}
	if (nh->refcnt) {
		*err = "nexthop in use by routes or groups";
		return -EBUSY;
	}
	ht_remove(&rib_nh_by_id, &nh->id_node);
	nh_free(nh);
	return 0;
}

bool quiet_full;

struct nexthop *nh_implicit(const struct rib_path *path)
{
	uint8_t key[16] = { 0 };
	int family = path->has_gw ? path->family : AF_UNSPEC;
	struct nexthop *nh;
	uint32_t h;

	if (path->has_gw)
		memcpy(key, path->gw, addr_len(path->family));
	h = key_hash(family, key, path->ifindex);
	for (struct hnode *n = ht_chain(&rib_nh_by_key, h); n; n = n->next) {
		nh = container_of(n, struct nexthop, key_node);
		if (n->hash == h && !nh->id && nh->ifindex == path->ifindex &&
		    nh->has_gw == path->has_gw && nh->family == family &&
		    !memcmp(nh->gw, key, 16))
			return nh;
	}
	nh = nh_alloc(SRC_MAX, 0, false, true);
	if (!nh)
		return NULL;
	nh_set_single(nh, path);
	nh_write_logged(nh);
	if (nh->index == NO_INDEX && !quiet_full)
		nh_full_log(nh);
	return nh;
}

struct nexthop *rib_nexthop_slot(struct nexthop *nh)
{
	return slot_of(nh);
}

/*
 * Feed ids zebra freed without a word. zebra's nexthop ids are its kernel
 * nexthop objects'. When their interface goes down (or loses its
 * carrier) the kernel flushes those objects, telling nobody, and zebra
 * takes the ones on it as uninstalled: it installs one again (through
 * the dataplane, so the feeds hear) before a route uses it, and frees an
 * unused one there and then without a dataplane delete. Neither the
 * plugin (a provider after the kernel's) nor FPM hears of that, and fpmd
 * kept such ids, ~1 KiB each, a few per link flap, until the next replay
 * (the soak's heap growth, issue 27). So a link down marks the feeds'
 * ids on it, and groups all of whose members are marked; a feed's
 * install clears the mark; and the periodic tick drops an id marked for
 * GONE_GRACE_MS that nothing in fpmd uses. Dropping one zebra still
 * holds costs nothing lasting: zebra installs it again before a route
 * names it, and a route naming an unknown id waits for it (routes
 * waiting for a nexthop id: show plugin, show fpm).
 */
#define GONE_GRACE_MS 2000

static uint32_t ndown; /* ids marked */

static uint64_t mono_ms(void)
{
	return now_ns(CLOCK_MONOTONIC) / 1000000;
}

void nh_installed(struct nexthop *nh)
{
	if (nh->down_ms) {
		nh->down_ms = 0;
		ndown--;
	}
}

static void mark_down(struct nexthop *nh, uint64_t now)
{
	if (!nh->down_ms) {
		nh->down_ms = now;
		ndown++;
	}
}

void rib_nexthop_link_down(uint32_t ifindex)
{
	uint64_t now = mono_ms();
	struct hnode *n, *tmp;
	size_t i;

	/* Singles first: a group is marked when all its members are. */
	for (int pass = 0; pass < 2; pass++) {
		ht_for_each(&rib_nh_by_id, n, tmp, i)
		{
			struct nexthop *nh =
			    container_of(n, struct nexthop, id_node);
			bool all = nh->nmembers > 0;

			if (!feed_src(nh->src) || nh->is_group != pass)
				continue;
			if (!pass) {
				if (nh->alias && nh->alias->ifindex == ifindex)
					mark_down(nh, now);
				continue;
			}
			for (int k = 0; k < nh->nmembers && all; k++)
				all = nh->members[k].nh->down_ms;
			if (all)
				mark_down(nh, now);
		}
	}
}

void rib_nexthop_reap(void)
{
	uint64_t now;
	struct hnode *n, *tmp;
	size_t i;

	if (!ndown)
		return;
	now = mono_ms();
	/* Groups first: dropping one releases its members. */
	for (int pass = 0; pass < 2; pass++) {
		ht_for_each(&rib_nh_by_id, n, tmp, i)
		{
			struct nexthop *nh =
			    container_of(n, struct nexthop, id_node);
			const char *err;

			if (!nh->down_ms || nh->is_group != !pass ||
			    nh->refcnt || now - nh->down_ms < GONE_GRACE_MS)
				continue;
			log_debug("%s: %s %u: its interface went down and "
				  "nothing uses it: dropped (zebra frees such "
				  "ids unannounced)",
				  rib_source_name(nh->src),
				  nh->is_group ? "group" : "nexthop", nh->id);
			rib_nexthop_del((enum rib_source)nh->src, nh->id, &err);
		}
	}
}
