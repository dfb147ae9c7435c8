// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Control socket: a unix stream socket (root:frr 0660) speaking the
 * protobuf API in proto/fpmd.proto. Each connection starts with a Hello
 * carrying the API version; a peer of another version is refused with
 * ERR_VERSION and disconnected.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "config.h"

#include "conf/conf.h"
#include "api/ctl.h"
#include "feed/fpm.h"
#include "fpmd.pb-c.h"
#include "kernel/guard.h"
#include "kernel/iface.h"
#include "common/log.h"
#include "feed/plugin.h"
#include "fib/maps.h"
#include "rib/rib.h"
#include "api/state.h"
#include "common/util.h"
#include "common/wire.h"

#define CTL_MAX_CLIENTS 32

/* 'show routes' is streamed: a sorted snapshot of the keys, turned into
 * Responses of CTL_CHUNK routes as the client reads (never the whole table
 * built at once: 1M routes would be ~300 MiB of protobuf). */
#define CTL_CHUNK 2048
/* Build the next chunk only when less than this is waiting for the client. */
#define CTL_OUT_LOW (256u << 10)

struct route_key {
	struct prefix p;
	uint32_t table; /* other-table routes only */
	uint8_t src;
	bool other;
};

struct client {
	int fd;
	bool hello;
	struct wire_buf in;
	/* Responses not yet taken by the client: the socket is non-blocking,
	 * so what does not fit waits here for EPOLLOUT. */
	struct wire_out out;
	struct route_key *keys; /* a 'show routes' being streamed */
	size_t nkeys, next;
};

static struct client clients[CTL_MAX_CLIENTS];
static int listen_fd = -1;
static bool clients_ready;
static char sock_path[108];

int ctl_open(const struct sock_cfg *sc)
{
	const char *path = sc->path, *group = sc->group;
	bool no_group;
	int fd = unix_listen(path, sc->owner, group, sc->mode, &no_group);

	if (fd < 0)
		return fd;
	if (no_group)
		log_warn("ctl: group %s missing; %s is root-only", group, path);
	if (unix_dir_unsafe(path))
		log_warn("ctl: the directory of %s is writable by other users: "
			 "any of them can replace the socket and take fpmctl's "
			 "requests; use a directory only root can write",
			 path);
	snprintf(sock_path, sizeof(sock_path), "%s", path);
	listen_fd = fd;
	if (!clients_ready)
		for (int i = 0; i < CTL_MAX_CLIENTS; i++)
			clients[i].fd = -1;
	clients_ready = true;
	return fd;
}

void ctl_listen_close(void)
{
	if (listen_fd >= 0) {
		close(listen_fd);
		unlink(sock_path);
	}
	listen_fd = -1;
}

void ctl_close(void)
{
	for (int i = 0; i < CTL_MAX_CLIENTS; i++)
		if (clients_ready && clients[i].fd >= 0)
			ctl_client_close(clients[i].fd);
	ctl_listen_close();
}

int ctl_accept(void)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (int i = 0; i < CTL_MAX_CLIENTS; i++) {
		if (clients[i].fd < 0) {
			/* A client that stops reading stalls only itself: its
			 * responses wait in its queue (ctl_client_io). */
			memset(&clients[i], 0, sizeof(clients[i]));
			clients[i].fd = fd;
			return fd;
		}
	}
	log_warn("ctl: too many clients (%d), refusing one", CTL_MAX_CLIENTS);
	close(fd);
	return -EMFILE;
}

static struct client *client_of(int fd)
{
	for (int i = 0; i < CTL_MAX_CLIENTS; i++)
		if (clients[i].fd == fd)
			return &clients[i];
	return NULL;
}

void ctl_client_close(int fd)
{
	struct client *c = client_of(fd);

	if (!c)
		return;
	wire_buf_free(&c->in);
	wire_out_free(&c->out);
	free(c->keys);
	c->keys = NULL;
	close(fd);
	c->fd = -1;
}

/* ---- request handling ---------------------------------------------------- */

static int (*reload_fn)(char *err, size_t elen);

void ctl_set_reload(int (*fn)(char *err, size_t elen))
{
	reload_fn = fn;
}

static int get_prefix(const Fpmd__Prefix *in, struct prefix *p,
		      const char **err)
{
	if (!in || (in->addr.len != 4 && in->addr.len != 16)) {
		*err = "prefix must be 4 or 16 bytes";
		return -EINVAL;
	}
	memset(p, 0, sizeof(*p));
	p->family = in->addr.len == 4 ? AF_INET : AF_INET6;
	if (in->len > in->addr.len * 8u) {
		*err = "prefix length too long";
		return -EINVAL;
	}
	p->len = (uint8_t)in->len;
	memcpy(p->addr, in->addr.data, in->addr.len);
	{
		struct prefix m = *p;

		/* Refuse rather than widen: a typo must not become a route. */
		prefix_mask(&m);
		if (memcmp(m.addr, p->addr, 16)) {
			*err = "host bits set in prefix";
			return -EINVAL;
		}
	}
	return 0;
}

static int get_ifindex(const char *name, uint32_t *ifindex, const char **err)
{
	*ifindex = 0;
	if (!name || !name[0])
		return 0;
	static char buf[IF_NAMESIZE + 32];

	*ifindex = if_nametoindex(name);
	if (!*ifindex) {
		snprintf(buf, sizeof(buf), "no such interface: %.*s",
			 IF_NAMESIZE, name);
		*err = buf;
		return -ENOENT;
	}
	return 0;
}

static int do_route(const Fpmd__Route *r, bool add, const char **err)
{
	static const enum rib_rtype types[] = {
		[FPMD__ROUTE_TYPE__RT_UNSPEC] = RT_UNICAST,
		[FPMD__ROUTE_TYPE__RT_UNICAST] = RT_UNICAST,
		[FPMD__ROUTE_TYPE__RT_BLACKHOLE] = RT_BLACKHOLE,
		[FPMD__ROUTE_TYPE__RT_UNREACHABLE] = RT_UNREACHABLE,
		[FPMD__ROUTE_TYPE__RT_PROHIBIT] = RT_PROHIBIT,
		[FPMD__ROUTE_TYPE__RT_LOCAL] = RT_LOCAL,
	};
	struct rib_route_req rq = { .src = SRC_STATIC };
	struct rib_path path = { 0 };
	uint32_t ifindex;
	int ret;

	ret = get_prefix(r->prefix, &rq.p, err);
	if (ret)
		return ret;
	if (!add)
		return rib_route_del(SRC_STATIC, &rq.p, err);
	if (r->type < 0 || r->type > FPMD__ROUTE_TYPE__RT_LOCAL) {
		*err = "unknown route type";
		return -EINVAL;
	}
	ret = get_ifindex(r->ifname, &ifindex, err);
	if (ret)
		return ret;
	if (r->gateway.len) {
		if (r->gateway.len != 4 && r->gateway.len != 16) {
			*err = "gateway must be 4 or 16 bytes";
			return -EINVAL;
		}
		if (!ifindex) {
			*err = "a gateway needs an interface (dev)";
			return -EINVAL;
		}
		path.family = r->gateway.len == 4 ? AF_INET : AF_INET6;
		path.has_gw = true;
		memcpy(path.gw, r->gateway.data, r->gateway.len);
	}
	path.ifindex = ifindex;
	rq.type = types[r->type];
	rq.nhid = r->nhid;
	rq.paths = &path;
	rq.npaths = 1;
	return rib_route_add(&rq, err);
}

static int do_nexthop(const Fpmd__Nexthop *n, bool add, const char **err)
{
	uint32_t ids[NH_MAX_MEMBERS], w[NH_MAX_MEMBERS], ifindex;
	struct rib_path path = { 0 };
	int ret;

	if (!add)
		return rib_nexthop_del(SRC_STATIC, n->id, err);
	if (n->n_members) {
		if (n->n_members > NH_MAX_MEMBERS) {
			*err = "too many group members (max 64)";
			return -EINVAL;
		}
		for (size_t i = 0; i < n->n_members; i++) {
			ids[i] = n->members[i]->nhid;
			w[i] = n->members[i]->weight;
		}
		return rib_group_add(SRC_STATIC, n->id, ids, w,
				     (int)n->n_members, 0, err);
	}
	ret = get_ifindex(n->ifname, &ifindex, err);
	if (ret)
		return ret;
	if (n->gateway.len && n->gateway.len != 4 && n->gateway.len != 16) {
		*err = "gateway must be 4 or 16 bytes";
		return -EINVAL;
	}
	path.ifindex = ifindex;
	if (n->gateway.len) {
		path.has_gw = true;
		path.family = n->gateway.len == 16 ? AF_INET6 : AF_INET;
		memcpy(path.gw, n->gateway.data, n->gateway.len);
	}
	return rib_nexthop_add(SRC_STATIC, n->id, &path, false, false, 0, err);
}

static int do_neigh(const Fpmd__Neighbor *n, bool add, const char **err)
{
	uint32_t ifindex;
	int ret, family;

	if (n->addr.len != 4 && n->addr.len != 16) {
		*err = "neighbor address must be 4 or 16 bytes";
		return -EINVAL;
	}
	family = n->addr.len == 4 ? AF_INET : AF_INET6;
	ret = get_ifindex(n->ifname, &ifindex, err);
	if (ret)
		return ret;
	if (!ifindex) {
		*err = "neighbor needs an interface (dev)";
		return -EINVAL;
	}
	if (!add)
		return rib_neigh_del(family, n->addr.data, ifindex, true, err);
	if (n->mac.len != 6) {
		*err = "lladdr must be 6 bytes";
		return -EINVAL;
	}
	return rib_neigh_add(family, n->addr.data, ifindex, n->mac.data, true,
			     err);
}

/* ---- show ---------------------------------------------------------------- */

/* Everything allocated for one response, freed after sending. */
struct arena {
	void **p;
	size_t n, cap;
};

static void *arena_alloc(struct arena *a, size_t sz)
{
	void *m = calloc(1, sz);

	if (!m)
		return NULL;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		void **np = realloc(a->p, cap * sizeof(*np));

		if (!np) {
			free(m);
			return NULL;
		}
		a->p = np;
		a->cap = cap;
	}
	a->p[a->n++] = m;
	return m;
}

static char *arena_str(struct arena *a, const char *s)
{
	char *d = arena_alloc(a, strlen(s) + 1);

	if (d)
		strcpy(d, s);
	return d;
}

static void arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->p[i]);
	free(a->p);
}

static ProtobufCBinaryData bytes(struct arena *a, const void *d, size_t len)
{
	ProtobufCBinaryData b = { 0, NULL };

	b.data = arena_alloc(a, len ? len : 1);
	if (b.data) {
		memcpy(b.data, d, len);
		b.len = len;
	}
	return b;
}

static const char *ifname_of(uint32_t ifindex, char *buf)
{
	struct iface *i = iface_by_ifindex(ifindex);

	if (i)
		return i->name;
	if (!ifindex || !if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "%s", ifindex ? "?" : "");
	return buf;
}

static int source_pb(int src)
{
	static const int sources[] = {
		[SRC_KERNEL_LOCAL] = FPMD__SOURCE__SRC_KERNEL,
		[SRC_PLUGIN] = FPMD__SOURCE__SRC_PLUGIN,
		[SRC_FPM] = FPMD__SOURCE__SRC_FPM,
		[SRC_STATIC] = FPMD__SOURCE__SRC_STATIC,
	};

	return src >= 0 && src < SRC_MAX ? sources[src] :
					   FPMD__SOURCE__SRC_UNSPEC;
}

static Fpmd__Route *show_other(struct arena *a, const struct other_route *r)
{
	Fpmd__Route *o = arena_alloc(a, sizeof(*o));
	Fpmd__Prefix *p = arena_alloc(a, sizeof(*p));

	if (!o || !p)
		return NULL;
	fpmd__route__init(o);
	fpmd__prefix__init(p);
	p->addr = bytes(a, r->p.addr, (size_t)addr_len(r->p.family));
	p->len = r->p.len;
	o->prefix = p;
	o->type = FPMD__ROUTE_TYPE__RT_UNICAST;
	o->source = source_pb(r->src);
	o->state = "other-table";
	o->table = r->table;
	o->protocol = (char *)rib_protocol_name(r->proto);
	return o;
}

static Fpmd__Route *show_route(struct arena *a, const struct route *r, int src)
{
	static const int types[] = {
		[RT_UNICAST] = FPMD__ROUTE_TYPE__RT_UNICAST,
		[RT_BLACKHOLE] = FPMD__ROUTE_TYPE__RT_BLACKHOLE,
		[RT_UNREACHABLE] = FPMD__ROUTE_TYPE__RT_UNREACHABLE,
		[RT_PROHIBIT] = FPMD__ROUTE_TYPE__RT_PROHIBIT,
		[RT_LOCAL] = FPMD__ROUTE_TYPE__RT_LOCAL,
		[RT_KERNEL] = FPMD__ROUTE_TYPE__RT_UNICAST,
	};
	const struct route_entry *e = &r->e[src];
	Fpmd__Route *o = arena_alloc(a, sizeof(*o));
	Fpmd__Prefix *p = arena_alloc(a, sizeof(*p));
	char ifn[IF_NAMESIZE];

	if (!o || !p)
		return NULL;
	fpmd__route__init(o);
	fpmd__prefix__init(p);
	p->addr = bytes(a, r->p.addr, (size_t)addr_len(r->p.family));
	p->len = r->p.len;
	o->prefix = p;
	o->type = types[e->type];
	o->source = source_pb(src);
	o->selected = src == r->selected;
	o->programmed = o->selected && r->programmed;
	o->state = arena_str(a, route_entry_state(r, src));
	o->table = 254;
	o->protocol = (char *)rib_entry_protocol(r, src);
	if (e->type == RT_KERNEL && e->kreason == KR_NHID_UNKNOWN)
		o->nhid = e->pending_nhid;
	if (e->type == RT_UNICAST && e->nh) {
		/* Content from the slot the id forwards by. */
		struct nexthop *sl = rib_nexthop_slot(e->nh);

		o->nhid = e->nh->id;
		o->index = sl->index == NO_INDEX ? 0 : sl->index;
		o->is_group = e->nh->is_group;
		if (!e->nh->is_group && !e->nh->blackhole && !e->nh->unsupported) {
			if (sl->has_gw)
				o->gateway = bytes(a, sl->gw,
						   (size_t)addr_len(sl->family));
			o->ifname = arena_str(a, ifname_of(sl->ifindex, ifn));
		}
	}
	return o;
}

/* The order 'show routes' prints: family, address, length, source. */
static int cmp_key(const void *a, const void *b)
{
	const struct route_key *x = a, *y = b;
	int c;

	if (x->p.family != y->p.family)
		return x->p.family == AF_INET ? -1 : 1;
	c = memcmp(x->p.addr, y->p.addr, (size_t)addr_len(x->p.family));
	if (c)
		return c;
	if (x->p.len != y->p.len)
		return x->p.len < y->p.len ? -1 : 1;
	if (source_pb(x->src) != source_pb(y->src))
		return source_pb(x->src) - source_pb(y->src);
	if (x->other != y->other)
		return x->other ? 1 : -1;
	return x->table < y->table ? -1 : x->table > y->table;
}

/* Snapshot the keys of what 'show routes' shows; the routes themselves
 * are read chunk by chunk (next_routes) and may change meanwhile. */
static int show_routes(struct client *c, const Fpmd__ShowRequest *s,
		       const char **err)
{
	size_t cap = rib_routes.count * SRC_MAX + rib_other.count + 1, k = 0, i;
	struct route_key *keys;
	struct hnode *n, *tmp;
	struct prefix want;
	bool filter = false;

	if (s->prefix && s->prefix->addr.len) {
		if (get_prefix(s->prefix, &want, err))
			return -EINVAL;
		prefix_mask(&want);
		filter = true;
	}
	keys = malloc(cap * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	ht_for_each(&rib_routes, n, tmp, i)
	{
		struct route *r = container_of(n, struct route, node);

		if (filter && memcmp(&r->p, &want, sizeof(want)))
			continue;
		for (int src = 0; src < SRC_MAX && k < cap; src++)
			if (r->e[src].present)
				keys[k++] =
				    (struct route_key){ .p = r->p,
							.src = (uint8_t)src };
	}
	ht_for_each(&rib_other, n, tmp, i)
	{
		struct other_route *o = container_of(n, struct other_route, node);

		if ((!filter || !memcmp(&o->p, &want, sizeof(want))) && k < cap)
			keys[k++] = (struct route_key){ .p = o->p,
							.table = o->table,
							.src = o->src,
							.other = true };
	}
	if (filter && !k) {
		free(keys);
		*err = "no such route";
		return -ENOENT;
	}
	qsort(keys, k, sizeof(*keys), cmp_key);
	free(c->keys);
	c->keys = keys;
	c->nkeys = k;
	c->next = 0;
	return 0;
}

/* The next chunk of a streamed 'show routes'; routes removed since the
 * snapshot are skipped. more says whether another chunk follows. */
static int next_routes(struct client *c, struct arena *a, Fpmd__Response *rsp)
{
	size_t k = 0;

	rsp->routes = arena_alloc(a, CTL_CHUNK * sizeof(*rsp->routes));
	if (!rsp->routes)
		return -ENOMEM;
	for (; c->next < c->nkeys && k < CTL_CHUNK; c->next++) {
		const struct route_key *key = &c->keys[c->next];
		const struct other_route *ot = NULL;
		const struct route *r = NULL;
		Fpmd__Route *o;

		if (key->other)
			ot = rib_other_find(key->src, &key->p, key->table);
		else
			r = rib_route_find(&key->p);
		if (r && !r->e[key->src].present)
			r = NULL;
		if (!r && !ot)
			continue;
		o = ot ? show_other(a, ot) : show_route(a, r, key->src);
		if (!o)
			return -ENOMEM;
		rsp->routes[k++] = o;
	}
	rsp->n_routes = k;
	rsp->more = c->next < c->nkeys;
	return 0;
}

static Fpmd__Nexthop *show_nexthop(struct arena *a, struct nexthop *id)
{
	/* A feed's id shows the slot it forwards by. */
	const struct nexthop *nh = rib_nexthop_slot(id);
	Fpmd__Nexthop *o = arena_alloc(a, sizeof(*o));
	char ifn[IF_NAMESIZE];

	if (!o)
		return NULL;
	fpmd__nexthop__init(o);
	o->id = id->id;
	o->source = source_pb(id->id ? id->src : -1);
	o->index = nh->index == NO_INDEX ? 0 : nh->index;
	o->refcnt = id->refcnt;
	o->state = arena_str(a, nexthop_state(id));
	if (id->is_group) {
		o->members = arena_alloc(a, sizeof(*o->members) *
					       (size_t)id->nmembers);
		for (int m = 0; o->members && m < id->nmembers; m++) {
			Fpmd__GroupMember *gm = arena_alloc(a, sizeof(*gm));

			if (!gm)
				break;
			fpmd__group_member__init(gm);
			gm->nhid = id->members[m].nh->id;
			gm->weight = id->members[m].weight;
			o->members[o->n_members++] = gm;
		}
		o->buckets = nh->nbuckets;
		o->resolved = nh->nbuckets > 0;
		return o;
	}
	if (nh->has_gw)
		o->gateway = bytes(a, nh->gw, (size_t)addr_len(nh->family));
	o->ifindex = nh->ifindex;
	o->ifname = arena_str(a, ifname_of(nh->ifindex, ifn));
	o->resolved = !nh->has_gw || nh->resolved;
	if (nh->has_gw && nh->resolved)
		o->mac = bytes(a, nh->mac, 6);
	return o;
}

static int cmp_nh(const void *a, const void *b)
{
	const Fpmd__Nexthop *x = *(Fpmd__Nexthop *const *)a,
			    *y = *(Fpmd__Nexthop *const *)b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int show_nexthops(struct arena *a, Fpmd__Response *rsp)
{
	size_t cap = rib_nh_by_id.count + rib_nh_by_key.count +
		     rib_grp_by_key.count + 1, k = 0, i;
	struct hnode *n, *tmp;

	rsp->nexthops = arena_alloc(a, cap * sizeof(*rsp->nexthops));
	if (!rsp->nexthops)
		return -ENOMEM;
	/* Explicit groups, blackhole and unsupported nexthops (only in
	 * by_id), implicit groups, and every forwarding single (by_key). */
	ht_for_each(&rib_nh_by_id, n, tmp, i)
	{
		struct nexthop *nh = container_of(n, struct nexthop, id_node);

		if ((nh->is_group || !nh->keyed) && k < cap)
			rsp->nexthops[k++] = show_nexthop(a, nh);
	}
	ht_for_each(&rib_grp_by_key, n, tmp, i)
	{
		struct nexthop *nh = container_of(n, struct nexthop, key_node);

		if (k < cap)
			rsp->nexthops[k++] = show_nexthop(a, nh);
	}
	ht_for_each(&rib_nh_by_key, n, tmp, i)
	{
		struct nexthop *nh = container_of(n, struct nexthop, key_node);

		if (k < cap)
			rsp->nexthops[k++] = show_nexthop(a, nh);
	}
	qsort(rsp->nexthops, k, sizeof(*rsp->nexthops), cmp_nh);
	rsp->n_nexthops = k;
	return 0;
}

static int cmp_neigh(const void *a, const void *b)
{
	const Fpmd__Neighbor *x = *(Fpmd__Neighbor *const *)a,
			     *y = *(Fpmd__Neighbor *const *)b;

	if (x->addr.len != y->addr.len)
		return x->addr.len < y->addr.len ? -1 : 1;
	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	return memcmp(x->addr.data, y->addr.data, x->addr.len);
}

static int show_neighbors(struct arena *a, Fpmd__Response *rsp)
{
	size_t k = 0, i;
	struct hnode *n, *tmp;
	char ifn[IF_NAMESIZE];

	rsp->neighbors =
		arena_alloc(a, (rib_neigh.count + 1) * sizeof(*rsp->neighbors));
	if (!rsp->neighbors)
		return -ENOMEM;
	ht_for_each(&rib_neigh, n, tmp, i)
	{
		struct neighbor *ne = container_of(n, struct neighbor, node);
		Fpmd__Neighbor *o = arena_alloc(a, sizeof(*o));

		if (!o)
			return -ENOMEM;
		fpmd__neighbor__init(o);
		o->addr = bytes(a, ne->addr, (size_t)addr_len(ne->family));
		o->mac = bytes(a, ne->mac, 6);
		o->ifindex = ne->ifindex;
		o->ifname = arena_str(a, ifname_of(ne->ifindex, ifn));
		o->source = ne->is_static ? FPMD__SOURCE__SRC_STATIC :
					    FPMD__SOURCE__SRC_KERNEL;
		rsp->neighbors[k++] = o;
	}
	qsort(rsp->neighbors, k, sizeof(*rsp->neighbors), cmp_neigh);
	rsp->n_neighbors = k;
	return 0;
}

static void add_flag(struct arena *a, Fpmd__Interface *o, const char *f)
{
	o->flags[o->n_flags++] = arena_str(a, f);
}

static uint64_t tx_count(uint32_t slot, uint32_t reason)
{
	struct fpmd_stat st;

	return maps_stat_read(slot, reason, &st) ? 0 : st.packets;
}

static int show_interfaces(struct arena *a, Fpmd__Response *rsp)
{
	size_t k = 0;

	rsp->interfaces =
		arena_alloc(a, FPMD_MAX_IFACES * sizeof(*rsp->interfaces));
	if (!rsp->interfaces)
		return -ENOMEM;
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		const struct iface *i = &iface_tab[s];
		Fpmd__Interface *o;
		uint32_t f;

		if (!i->used)
			continue;
		o = arena_alloc(a, sizeof(*o));
		if (!o)
			return -ENOMEM;
		fpmd__interface__init(o);
		f = iface_map_flags(i);
		o->name = arena_str(a, i->name);
		o->ifindex = i->ifindex;
		o->slot = i->slot;
		o->mac = bytes(a, i->mac, 6);
		o->mtu = i->mtu;
		o->xdp_mode = arena_str(a, !i->attached ? "none" :
					   i->mode == XDP_MODE_NATIVE ? "native" :
									"generic");
		o->oper_up = i->up;
		o->tx_port = iface_is_tx_port(i);
		o->tx_reason = arena_str(a, iface_tx_reason(i));
		o->xdp_state = arena_str(a, iface_xdp_state(i));
		o->xdp_reason = arena_str(a, iface_xdp_reason(i));
		o->tx = tx_count(i->slot, FPMD_R_TX);
		o->tx_redirect_errors =
			tx_count(i->slot, FPMD_R_TX_REDIRECT_ERR);
		o->tx_xmit_drops = tx_count(i->slot, FPMD_R_TX_XMIT_DROP);
		o->flags = arena_alloc(a, 13 * sizeof(*o->flags));
		if (!o->flags)
			return -ENOMEM;
		if (f & FPMD_IF_F_ENABLED)
			add_flag(a, o, "enabled");
		if (i->suspended)
			add_flag(a, o, "suspended");
		if (f & FPMD_IF_F_FWD_V4)
			add_flag(a, o, "forwarding-ipv4");
		if (f & FPMD_IF_F_FWD_V6)
			add_flag(a, o, "forwarding-ipv6");
		if (f & FPMD_IF_F_RPF_STRICT)
			add_flag(a, o, "rp-filter-strict");
		if (f & FPMD_IF_F_RPF_LOOSE)
			add_flag(a, o, "rp-filter-loose");
		if (f & FPMD_IF_F_KERNEL_V4)
			add_flag(a, o, "kernel-path-ipv4");
		if (f & FPMD_IF_F_KERNEL_V6)
			add_flag(a, o, "kernel-path-ipv6");
		if (f & FPMD_IF_F_REDIRECTS_V4)
			add_flag(a, o, "send-redirects-ipv4");
		if (f & FPMD_IF_F_SRC_CHECK)
			add_flag(a, o, "source-check");
		rsp->interfaces[k++] = o;
	}
	rsp->n_interfaces = k;
	return 0;
}

static int show_counters(struct arena *a, Fpmd__Response *rsp)
{
	size_t k = 0;

	rsp->counters = arena_alloc(a, FPMD_MAX_STATS * sizeof(*rsp->counters));
	if (!rsp->counters)
		return -ENOMEM;
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		const struct iface *i = &iface_tab[s];

		if (!i->used)
			continue;
		for (uint32_t r = 0; r < FPMD_R_MAX; r++) {
			Fpmd__Counter *o = arena_alloc(a, sizeof(*o));
			struct fpmd_stat st;

			if (!o)
				return -ENOMEM;
			if (maps_stat_read(i->slot, r, &st))
				memset(&st, 0, sizeof(st));
			fpmd__counter__init(o);
			o->ifname = arena_str(a, i->name);
			o->slot = i->slot;
			o->reason = (char *)fpmd_reason_names[r];
			o->packets = st.packets;
			o->bytes = st.bytes;
			rsp->counters[k++] = o;
		}
	}
	rsp->n_counters = k;
	return 0;
}

static int show_guards(struct arena *a, Fpmd__Response *rsp)
{
	rsp->guards = arena_alloc(a, GUARD_MAX * sizeof(*rsp->guards));
	if (!rsp->guards)
		return -ENOMEM;
	for (int g = 0; g < GUARD_MAX; g++) {
		Fpmd__Guard *o = arena_alloc(a, sizeof(*o));

		if (!o)
			return -ENOMEM;
		fpmd__guard__init(o);
		o->name = (char *)guards[g].name;
		o->state = arena_str(a, guards[g].state[0] ? guards[g].state :
							     "unchecked");
		o->detail = arena_str(a, guards[g].detail);
		o->watch = (char *)guards[g].watch;
		o->events = guards[g].events;
		o->last_event_ns = guards[g].last_event_ns;
		o->last_applied_ns = guards[g].last_applied_ns;
		rsp->guards[rsp->n_guards++] = o;
	}
	return 0;
}

/* Both feeds (FPM, the plugin) answer in one shape. */
static Fpmd__FpmStatus *show_feed(struct arena *a, const struct feed_status *st,
				  enum rib_source src)
{
	Fpmd__FpmStatus *o = arena_alloc(a, sizeof(*o));

	if (!o)
		return NULL;
	fpmd__fpm_status__init(o);
	o->enabled = st->enabled;
	o->listen = arena_str(a, st->listen);
	o->connected = st->connected;
	o->peer = arena_str(a, st->peer);
	o->connections = st->connections;
	o->messages = st->messages;
	o->frames = st->frames;
	o->errors = st->errors;
	o->last_error = arena_str(a, st->last_error);
	o->replay_state = arena_str(a, st->replay_state);
	o->replay_refreshed = st->replay_refreshed;
	o->replay_swept = st->replay_swept;
	o->routes = rib_count(src);
	o->route_msgs = st->route_msgs;
	o->nexthop_msgs = st->nexthop_msgs;
	o->other_table = rib_stats.other_table;
	o->ignored = st->ignored;
	o->map_writes = rib_stats.route_writes;
	o->first_message_ns = st->first_message_ns;
	o->last_message_ns = st->last_message_ns;
	o->last_map_write_ns = st->last_map_write_ns;
	o->hold_remaining_ms = st->hold_remaining_ms;
	o->unknown_nhid = rib_pending_routes();
	o->refused = st->refused;
	o->status_sent = st->status_sent;
	o->status_dropped = st->status_dropped;
	return o;
}

static int show_fpm(struct arena *a, Fpmd__Response *rsp)
{
	struct feed_status st;

	fpm_get_status(&st);
	rsp->fpm = show_feed(a, &st, SRC_FPM);
	return rsp->fpm ? 0 : -ENOMEM;
}

static int show_plugin(struct arena *a, Fpmd__Response *rsp)
{
	struct feed_status st;

	plugin_get_status(&st);
	rsp->plugin = show_feed(a, &st, SRC_PLUGIN);
	return rsp->plugin ? 0 : -ENOMEM;
}

static int show_summary(struct arena *a, Fpmd__Response *rsp)
{
	Fpmd__Summary *o = arena_alloc(a, sizeof(*o));
	struct rib_counts c;

	if (!o)
		return -ENOMEM;
	fpmd__summary__init(o);
	rib_summary(&c);
	o->routes_v4 = c.routes_v4;
	o->routes_v6 = c.routes_v6;
	o->programmed = c.programmed;
	o->not_programmed = c.not_programmed;
	o->nexthops = c.nexthops;
	o->groups = c.groups;
	o->neighbors = c.neighbors;
	o->other_table = c.other_table;
	o->route_map_full = rib_stats.route_map_full;
	o->nexthop_map_full = rib_stats.nh_map_full;
	o->group_map_full = rib_stats.group_map_full;
	o->map_errors = rib_stats.map_errors;
	o->by_source = arena_alloc(a, SRC_MAX * sizeof(*o->by_source));
	if (!o->by_source)
		return -ENOMEM;
	for (int s = 0; s < SRC_MAX; s++)
		o->by_source[o->n_by_source++] = rib_count(s);
	for (int k = 0; k < RIB_PROTO_MAX; k++) {
		Fpmd__ProtocolCount *pc;

		if (!c.by_protocol[k])
			continue;
		if (!o->by_protocol) {
			o->by_protocol = arena_alloc(
				a, RIB_PROTO_MAX * sizeof(*o->by_protocol));
			if (!o->by_protocol)
				return -ENOMEM;
		}
		pc = arena_alloc(a, sizeof(*pc));
		if (!pc)
			return -ENOMEM;
		fpmd__protocol_count__init(pc);
		pc->name = (char *)rib_protocol_name((uint8_t)k);
		pc->count = c.by_protocol[k];
		o->by_protocol[o->n_by_protocol++] = pc;
	}
	o->max_routes_v4 = cfg.max_routes_v4;
	o->max_routes_v6 = cfg.max_routes_v6;
	o->max_nexthops = cfg.max_nexthops;
	o->max_groups = cfg.max_groups;
	rsp->summary = o;
	return 0;
}

/* ---- lookup --------------------------------------------------------------- */

/* What the fast path's address checks say before any route lookup. */
static const char *addr_verdict(const struct prefix *p)
{
	const uint8_t *a = p->addr;

	if (p->family == AF_INET) {
		if (a[0] >= 224)
			return a[0] < 240 || (a[0] == 255 && a[1] == 255 &&
					      a[2] == 255 && a[3] == 255) ?
				       "multicast or broadcast destination: the "
				       "kernel (pass-multicast)" :
				       NULL;
		if (a[0] == 0 || a[0] == 127)
			return "martian destination: the kernel drops it "
			       "(pass-martian)";
		if (a[0] == 169 && a[1] == 254)
			return "link-local destination: the kernel "
			       "(pass-link-local)";
		return NULL;
	}
	if (a[0] == 0xff)
		return "multicast destination: the kernel (pass-multicast)";
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return "link-local destination: the kernel (pass-link-local)";
	{
		static const uint8_t zero[15];

		if (!memcmp(a, zero, 15) && (a[15] == 0 || a[15] == 1))
			return "martian destination: the kernel drops it "
			       "(pass-martian)";
	}
	return NULL;
}

static char *fmtbuf(struct arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static char *fmtbuf(struct arena *a, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return arena_str(a, buf);
}

static void lookup_unicast(struct arena *a, Fpmd__LookupResult *o,
			   const struct prefix *dst, struct nexthop *nh)
{
	struct nexthop *sl = rib_nexthop_slot(nh);
	char gw[ADDR_STRLEN], mac[MAC_STRLEN], ifbuf[IF_NAMESIZE];
	const char *ifn;
	const char *st = nexthop_state(nh);

	o->nhid = nh->id;
	o->is_group = nh->is_group;
	o->verdict = "kernel";
	if (nh->blackhole) {
		o->fast_path = true;
		o->verdict = "dropped";
		o->reason = "blackhole nexthop (drop-blackhole)";
		return;
	}
	if (nh->unsupported) {
		o->reason = "unsupported nexthop: the kernel routes it "
			    "(pass-unreachable)";
		return;
	}
	if (sl->index == NO_INDEX) {
		o->reason = "nexthop map full: the kernel routes it "
			    "(pass-unreachable)";
		return;
	}
	if (nh->is_group) {
		o->nexthops = arena_alloc(a, sizeof(*o->nexthops) *
					       (size_t)(nh->nmembers + 1));
		for (int i = 0; o->nexthops && i < nh->nmembers; i++)
			o->nexthops[o->n_nexthops++] =
				show_nexthop(a, nh->members[i].nh);
		if (!strcmp(st, "member-map-full")) {
			o->reason = "a member got no nexthop slot (map full): "
				    "the whole group takes the kernel path "
				    "(pass-unresolved)";
			return;
		}
		if (!sl->nbuckets) {
			o->reason = "no member of the group is up: the kernel "
				    "(pass-unresolved)";
			return;
		}
		if (!strcmp(st, "egress-kernel")) {
			o->reason = "no member's egress is a tx port (see show "
				    "interfaces): the kernel "
				    "(pass-egress-kernel)";
			return;
		}
		o->fast_path = true;
		o->verdict = "forwarded";
		o->reason = fmtbuf(a, "ECMP over %d members (%u buckets), "
				   "picked by the flow's 5-tuple hash; a member "
				   "still unresolved, or whose egress is not a tx "
				   "port, sends its flows to the kernel",
				   nh->nmembers, sl->nbuckets);
		return;
	}
	o->nexthops = arena_alloc(a, sizeof(*o->nexthops));
	if (o->nexthops)
		o->nexthops[o->n_nexthops++] = show_nexthop(a, nh);
	ifn = ifname_of(sl->ifindex, ifbuf);
	if (!strcmp(st, "egress-kernel")) {
		struct iface *i = iface_by_ifindex(sl->ifindex);

		o->reason = fmtbuf(a, "egress %s is not a tx port (%s): the "
				   "kernel (pass-egress-kernel)", ifn,
				   i ? iface_tx_reason(i) :
				       "not managed by fpmd");
		return;
	}
	if (!strcmp(st, "egress-down")) {
		o->reason = fmtbuf(a, "egress %s is down: the kernel "
				   "(pass-unresolved)", ifn);
		return;
	}
	if (sl->has_gw) {
		fmt_addr(sl->family, sl->gw, gw);
		if (!sl->resolved) {
			o->reason = fmtbuf(a, "neighbor %s on %s unresolved: "
					   "the kernel resolves it "
					   "(pass-unresolved)", gw, ifn);
			return;
		}
		o->fast_path = true;
		o->verdict = "forwarded";
		o->reason = fmtbuf(a, "via %s dev %s, to %s", gw, ifn,
				   fmt_mac(sl->mac, mac));
		return;
	}
	/* Connected: the host's own neighbor entry gives the MAC. */
	{
		uint8_t m[6];
		char da[ADDR_STRLEN];

		fmt_addr(dst->family, dst->addr, da);
		if (!rib_neigh_lookup(dst->family, dst->addr, sl->ifindex, m)) {
			o->reason = fmtbuf(a, "connected on %s, neighbor %s "
					   "unresolved: the kernel resolves it "
					   "(pass-unresolved)", ifn, da);
			return;
		}
		o->fast_path = true;
		o->verdict = "forwarded";
		o->reason = fmtbuf(a, "connected on %s, to %s", ifn,
				   fmt_mac(m, mac));
	}
}

static int do_lookup(struct arena *a, Fpmd__Response *rsp,
		     const Fpmd__LookupRequest *lr, const char **err)
{
	Fpmd__LookupResult *o = arena_alloc(a, sizeof(*o));
	struct prefix dst = { 0 };
	struct route *r = NULL;
	const char *pre;
	int bits;

	if (!o)
		return -ENOMEM;
	if (!lr || (lr->addr.len != 4 && lr->addr.len != 16)) {
		*err = "lookup needs an IPv4 or IPv6 address";
		return -EINVAL;
	}
	fpmd__lookup_result__init(o);
	rsp->lookup = o;
	dst.family = lr->addr.len == 4 ? AF_INET : AF_INET6;
	memcpy(dst.addr, lr->addr.data, lr->addr.len);
	bits = (int)lr->addr.len * 8;
	dst.len = (uint8_t)bits;
	o->verdict = "kernel";
	pre = addr_verdict(&dst);
	if (pre) {
		o->reason = (char *)pre;
		return 0;
	}
	/* What XDP's LPM lookup finds: the longest programmed prefix. */
	for (int len = bits; len >= 0 && !r; len--) {
		struct prefix m = dst;

		m.len = (uint8_t)len;
		prefix_mask(&m);
		r = rib_route_find(&m);
		if (r && !r->programmed)
			r = NULL;
	}
	if (!r || r->selected < 0) {
		o->reason = "no route in the fast path: the kernel routes it "
			    "(pass-no-route)";
		return 0;
	}
	{
		const struct route_entry *e = &r->e[r->selected];
		Fpmd__Prefix *p = arena_alloc(a, sizeof(*p));

		if (!p)
			return -ENOMEM;
		fpmd__prefix__init(p);
		p->addr = bytes(a, r->p.addr, (size_t)addr_len(r->p.family));
		p->len = r->p.len;
		o->prefix = p;
		o->source = source_pb(r->selected);
		o->protocol = (char *)rib_entry_protocol(r, r->selected);
		o->state = arena_str(a, route_entry_state(r, r->selected));
		switch (e->type) {
		case RT_LOCAL:
			o->type = FPMD__ROUTE_TYPE__RT_LOCAL;
			o->reason = "addressed to the router itself: the kernel "
				    "(pass-local)";
			break;
		case RT_BLACKHOLE:
			o->type = FPMD__ROUTE_TYPE__RT_BLACKHOLE;
			o->fast_path = true;
			o->verdict = "dropped";
			o->reason = "blackhole route (drop-blackhole)";
			break;
		case RT_UNREACHABLE:
		case RT_PROHIBIT:
			o->type = e->type == RT_UNREACHABLE ?
					  FPMD__ROUTE_TYPE__RT_UNREACHABLE :
					  FPMD__ROUTE_TYPE__RT_PROHIBIT;
			o->reason = "unreachable or prohibit route: the kernel "
				    "answers with ICMP (pass-unreachable)";
			break;
		case RT_KERNEL:
			o->type = FPMD__ROUTE_TYPE__RT_UNICAST;
			o->nhid = e->pending_nhid;
			o->reason = e->kreason == KR_NHID_UNKNOWN ?
					    "its nexthop id was never sent by the "
					    "feed: the kernel routes it "
					    "(pass-unreachable)" :
				    e->kreason == KR_MTU_METRIC ?
					    "the route has an mtu metric, which "
					    "the kernel checks packets against: "
					    "the kernel routes it "
					    "(pass-unreachable)" :
					    "unsupported nexthop: the kernel "
					    "routes it (pass-unreachable)";
			break;
		default:
			o->type = FPMD__ROUTE_TYPE__RT_UNICAST;
			lookup_unicast(a, o, &dst, e->nh);
			break;
		}
	}
	return 0;
}

static int do_show(struct client *c, struct arena *a, Fpmd__Response *rsp,
		   const Fpmd__ShowRequest *s, const char **err)
{
	switch (s->what) {
	case FPMD__SHOW__SHOW_ROUTES: return show_routes(c, s, err);
	case FPMD__SHOW__SHOW_NEXTHOPS: return show_nexthops(a, rsp);
	case FPMD__SHOW__SHOW_NEIGHBORS: return show_neighbors(a, rsp);
	case FPMD__SHOW__SHOW_INTERFACES: return show_interfaces(a, rsp);
	case FPMD__SHOW__SHOW_COUNTERS: return show_counters(a, rsp);
	case FPMD__SHOW__SHOW_GUARDS: return show_guards(a, rsp);
	case FPMD__SHOW__SHOW_FPM: return show_fpm(a, rsp);
	case FPMD__SHOW__SHOW_SUMMARY: return show_summary(a, rsp);
	case FPMD__SHOW__SHOW_PLUGIN: return show_plugin(a, rsp);
	case FPMD__SHOW__SHOW_STATE:
	case FPMD__SHOW__SHOW_CONFIG: {
		char *doc = s->what == FPMD__SHOW__SHOW_STATE ?
				    state_json() : config_print_running(&cfg);

		if (!doc) {
			*err = "cannot build the YANG document";
			return -ENOMEM;
		}
		rsp->document = arena_str(a, doc);
		free(doc);
		return rsp->document ? 0 : -ENOMEM;
	}
	default:
		*err = "unknown show request";
		return -EINVAL;
	}
}

/* "ctl: route add refused: route 10.0.0.0/8: route table full (...)" */
static void log_change(const char *what, const char *obj, int ret,
		       const char *err)
{
	if (ret)
		log_warn("ctl: %s refused: %s: %s", what, obj,
			 err ? err : strerror(-ret));
	else
		log_debug("ctl: %s %s", what, obj);
}

/* add and del of one object share a oneof union member: the case says
 * which it is. */
static int route_change(const Fpmd__Request *q, bool add, const char **err)
{
	return do_route(q->route_add, add, err);
}

static int nexthop_change(const Fpmd__Request *q, bool add, const char **err)
{
	return do_nexthop(q->nexthop_add, add, err);
}

static int neigh_change(const Fpmd__Request *q, bool add, const char **err)
{
	return do_neigh(q->neigh_add, add, err);
}

static const struct {
	Fpmd__Request__ReqCase add, del;
	const char *what;
	int (*fn)(const Fpmd__Request *q, bool add, const char **err);
} changes[] = {
	{ FPMD__REQUEST__REQ_ROUTE_ADD, FPMD__REQUEST__REQ_ROUTE_DEL, "route",
	  route_change },
	{ FPMD__REQUEST__REQ_NEXTHOP_ADD, FPMD__REQUEST__REQ_NEXTHOP_DEL,
	  "nexthop", nexthop_change },
	{ FPMD__REQUEST__REQ_NEIGH_ADD, FPMD__REQUEST__REQ_NEIGH_DEL,
	  "neighbor", neigh_change },
};

/* The object a change names, for the log: "route 10.0.0.0/8",
 * "nexthop 42". */
static const char *change_object(const Fpmd__Request *q, char *buf, size_t len)
{
	const Fpmd__Prefix *p = NULL;
	const ProtobufCBinaryData *a = NULL;
	char ab[ADDR_STRLEN];

	switch (q->req_case) {
	case FPMD__REQUEST__REQ_ROUTE_ADD:
	case FPMD__REQUEST__REQ_ROUTE_DEL:
		p = q->route_add ? q->route_add->prefix : NULL;
		a = p ? &p->addr : NULL;
		break;
	case FPMD__REQUEST__REQ_NEXTHOP_ADD:
	case FPMD__REQUEST__REQ_NEXTHOP_DEL:
		snprintf(buf, len, "nexthop %u",
			 q->nexthop_add ? q->nexthop_add->id : 0);
		return buf;
	case FPMD__REQUEST__REQ_NEIGH_ADD:
	case FPMD__REQUEST__REQ_NEIGH_DEL:
		a = q->neigh_add ? &q->neigh_add->addr : NULL;
		break;
	default:
		break;
	}
	if (!a || (a->len != 4 && a->len != 16))
		return p ? "route (bad prefix)" : "neighbor (bad address)";
	fmt_addr(a->len == 4 ? AF_INET : AF_INET6, a->data, ab);
	if (p)
		snprintf(buf, len, "route %s/%u", ab, p->len);
	else
		snprintf(buf, len, "neighbor %s", ab);
	return buf;
}

static int do_change(const Fpmd__Request *q, const char **err)
{
	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		bool add = q->req_case == changes[i].add;
		char what[32], ob[ADDR_STRLEN + 16];
		int ret;

		if (!add && q->req_case != changes[i].del)
			continue;
		ret = changes[i].fn(q, add, err);
		snprintf(what, sizeof(what), "%s %s", changes[i].what,
			 add ? "add" : "del");
		log_change(what, change_object(q, ob, sizeof(ob)), ret, *err);
		return ret;
	}
	*err = "unknown request";
	return -EINVAL;
}

/* ---- output queue -------------------------------------------------------- */

static size_t out_pending(const struct client *c)
{
	return wire_out_pending(&c->out);
}

static int queue_msg(struct client *c, const ProtobufCMessage *msg)
{
	return wire_queue(&c->out, msg);
}

static int flush(struct client *c)
{
	return wire_flush(c->fd, &c->out);
}

/* Queue chunks of a streamed show while little waits, and write. */
static int pump(struct client *c)
{
	int ret;

	for (;;) {
		while (c->keys && out_pending(c) < CTL_OUT_LOW) {
			Fpmd__Response rsp = FPMD__RESPONSE__INIT;
			struct arena a = { 0 };

			ret = next_routes(c, &a, &rsp);
			if (!ret)
				ret = queue_msg(c, &rsp.base);
			arena_free(&a);
			if (ret)
				return ret;
			if (!rsp.more) {
				free(c->keys);
				c->keys = NULL;
			}
		}
		ret = flush(c);
		if (ret || !c->keys)
			return ret;
	}
}

static int handle(struct client *c, const uint8_t *buf, size_t len)
{
	Fpmd__Response rsp = FPMD__RESPONSE__INIT;
	Fpmd__Hello hello = FPMD__HELLO__INIT;
	struct arena a = { 0 };
	Fpmd__Request *req;
	const char *err = NULL;
	int ret = 0, keep = 0;

	req = fpmd__request__unpack(NULL, len, buf);
	if (!req) {
		log_warn("ctl: malformed request (%zu bytes), closing the "
			 "connection",
			 len);
		rsp.status = FPMD__STATUS__ERR_INVALID;
		rsp.error = "malformed protobuf request";
		queue_msg(c, &rsp.base);
		return -EINVAL;
	}
	if (!c->hello && req->req_case != FPMD__REQUEST__REQ_HELLO) {
		rsp.status = FPMD__STATUS__ERR_VERSION;
		rsp.error = "expected a Hello first";
		queue_msg(c, &rsp.base);
		fpmd__request__free_unpacked(req, NULL);
		return -EPROTO;
	}
	switch (req->req_case) {
	case FPMD__REQUEST__REQ_HELLO:
		hello.version = FPMD__API_VERSION__API_VERSION_CURRENT;
		hello.peer = "fpmd " PACKAGE_VERSION;
		rsp.hello = &hello;
		if (req->hello->version != FPMD__API_VERSION__API_VERSION_CURRENT) {
			log_warn("ctl: peer '%s' speaks API version %u, we speak "
				 "%u: refused",
				 req->hello->peer, req->hello->version,
				 FPMD__API_VERSION__API_VERSION_CURRENT);
			rsp.status = FPMD__STATUS__ERR_VERSION;
			rsp.error = "API version mismatch";
			keep = -EPROTO;
			break;
		}
		c->hello = true;
		break;
	case FPMD__REQUEST__REQ_ROUTE_ADD:
	case FPMD__REQUEST__REQ_ROUTE_DEL:
	case FPMD__REQUEST__REQ_NEXTHOP_ADD:
	case FPMD__REQUEST__REQ_NEXTHOP_DEL:
	case FPMD__REQUEST__REQ_NEIGH_ADD:
	case FPMD__REQUEST__REQ_NEIGH_DEL:
		ret = do_change(req, &err);
		/* The reply says it is done: in the fast path too. */
		if (!ret && maps_commit(0)) {
			ret = -EAGAIN;
			err = "applied, but the new IPv4 table parts are not "
			      "published yet (fpmd retries)";
		}
		break;
	case FPMD__REQUEST__REQ_SHOW:
		ret = do_show(c, &a, &rsp, req->show, &err);
		break;
	case FPMD__REQUEST__REQ_RELOAD: {
		char *why = arena_alloc(&a, 1024);

		if (!reload_fn) {
			ret = -EINVAL;
			err = "reload is not available";
		} else if (why && reload_fn(why, 1024)) {
			ret = -EINVAL;
			err = why;
		}
		break;
	}
	case FPMD__REQUEST__REQ_LOOKUP:
		ret = do_lookup(&a, &rsp, req->lookup, &err);
		break;
	case FPMD__REQUEST__REQ_CLEAR_COUNTERS:
		for (int s = 0; s < FPMD_MAX_IFACES; s++)
			if (iface_tab[s].used)
				maps_stats_clear_slot(iface_tab[s].slot);
		log_info("ctl: counters cleared");
		break;
	default:
		ret = -EINVAL;
		err = "unknown request";
		break;
	}
	if (ret) {
		rsp.status = wire_status_of(ret);
		rsp.error = (char *)(err ? err : strerror(-ret));
	}
	/* A streamed show answers with its chunks (pump), errors at once. */
	if ((ret || !c->keys) && queue_msg(c, &rsp.base))
		keep = -ENOMEM;
	arena_free(&a);
	fpmd__request__free_unpacked(req, NULL);
	return keep;
}

/* Called on every event of a client (edge-triggered, in and out): write
 * what is queued, then take the next request only once everything before
 * it has been sent, so a client that reads slowly is answered slowly
 * (never disconnected), and one that sends without reading fills only
 * its own input buffer. */
int ctl_client_io(int fd)
{
	struct client *c = client_of(fd);
	const uint8_t *msg;
	size_t len;
	int ret;

	if (!c)
		return -EBADF;
	for (;;) {
		long n;

		ret = pump(c);
		if (ret == -EAGAIN)
			return 0;
		if (ret) {
			if (ret == -EPIPE || ret == -ECONNRESET)
				log_debug("ctl: client %d went away", fd);
			else
				log_warn("ctl: client %d: %s, closing the "
					 "connection",
					 fd, strerror(-ret));
			ctl_client_close(fd);
			return ret;
		}
		ret = wire_frame(&c->in, WIRE_MAX_REQUEST, &msg, &len);
		if (ret < 0) {
			log_warn("ctl: request larger than %u bytes, closing "
				 "the connection",
				 WIRE_MAX_REQUEST);
			ctl_client_close(fd);
			return ret;
		}
		if (ret == 1) {
			ret = handle(c, msg, len);
			wire_consume(&c->in, WIRE_HDR + len);
			if (ret) {
				/* Best effort: the error response first. */
				flush(c);
				ctl_client_close(fd);
				return ret;
			}
			continue;
		}
		n = wire_fill(fd, &c->in);
		if (n == -EAGAIN)
			return 0;
		if (n <= 0) {
			ctl_client_close(fd);
			return -ECONNRESET;
		}
	}
}
