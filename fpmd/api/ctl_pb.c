// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control socket's protobuf values: the arena a response is built
 * in, and the conversions between the API's messages and the RIB's
 * prefixes, interfaces, sources and nexthops.
 */
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/ctl_req.h"
#include "kernel/iface.h"
#include "rib/rib.h"
#include "common/util.h"

void *arena_alloc(struct arena *a, size_t sz)
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

char *arena_str(struct arena *a, const char *s)
{
	char *d = arena_alloc(a, strlen(s) + 1);

	if (d)
		strcpy(d, s);
	return d;
}

void arena_free(struct arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->p[i]);
	free(a->p);
}

char *arena_fmt(struct arena *a, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return arena_str(a, buf);
}

ProtobufCBinaryData pb_bytes(struct arena *a, const void *d, size_t len)
{
	ProtobufCBinaryData b = { 0, NULL };

	b.data = arena_alloc(a, len ? len : 1);
	if (b.data) {
		memcpy(b.data, d, len);
		b.len = len;
	}
	return b;
}

int pb_get_prefix(const Fpmd__Prefix *in, struct prefix *p, const char **err)
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

Fpmd__Prefix *pb_prefix(struct arena *a, const struct prefix *in)
{
	Fpmd__Prefix *p = arena_alloc(a, sizeof(*p));

	if (!p)
		return NULL;
	fpmd__prefix__init(p);
	p->addr = pb_bytes(a, in->addr, (size_t)addr_len(in->family));
	p->len = in->len;
	return p;
}

int pb_get_ifindex(const char *name, uint32_t *ifindex, const char **err)
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

const char *ctl_ifname(uint32_t ifindex, char *buf)
{
	struct iface *i = iface_by_ifindex(ifindex);

	if (i)
		return i->name;
	if (!ifindex || !if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "%s", ifindex ? "?" : "");
	return buf;
}

int pb_source(int src)
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

Fpmd__Nexthop *pb_nexthop(struct arena *a, struct nexthop *id)
{
	/* A feed's id shows the slot it forwards by. */
	const struct nexthop *nh = rib_nexthop_slot(id);
	Fpmd__Nexthop *o = arena_alloc(a, sizeof(*o));
	char ifn[IF_NAMESIZE];

	if (!o)
		return NULL;
	fpmd__nexthop__init(o);
	o->id = id->id;
	o->source = pb_source(id->id ? id->src : -1);
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
		o->gateway = pb_bytes(a, nh->gw, (size_t)addr_len(nh->family));
	o->ifindex = nh->ifindex;
	o->ifname = arena_str(a, ctl_ifname(nh->ifindex, ifn));
	o->resolved = !nh->has_gw || nh->resolved;
	if (nh->has_gw && nh->resolved)
		o->mac = pb_bytes(a, nh->mac, 6);
	return o;
}
