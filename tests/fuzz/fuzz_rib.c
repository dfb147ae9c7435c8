// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The RIB across its inputs: an input is a sequence of operations, each
 * a few bytes, as every source and the kernel watcher make them (routes,
 * nexthops and groups of the plugin, FPM and fpmctl, neighbors learned
 * and static, interfaces going down and up or changing MAC, replay
 * sweeps). The feed targets reach the RIB through one source each; this
 * one mixes them on a handful of prefixes, ids and gateways, so that
 * sources meet on the same objects. Values come from small sets on
 * purpose: collisions are where ownership and reference counts matter.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "fuzz_common.h"
#include "kernel/iface.h"
#include "rib/rib.h"

struct in {
	const uint8_t *p;
	size_t n;
};

static uint8_t take(struct in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static enum rib_source source(uint8_t b)
{
	static const enum rib_source s[] = { SRC_PLUGIN, SRC_FPM, SRC_STATIC };

	return s[b % 3];
}

/* Eight IPv4 and eight IPv6 prefixes, some nested. */
static void prefix_of(uint8_t b, struct prefix *p)
{
	static const uint8_t lens4[] = { 0, 8, 16, 24, 24, 25, 32, 32 };
	static const uint8_t lens6[] = { 0, 32, 48, 64, 64, 65, 127, 128 };

	memset(p, 0, sizeof(*p));
	if (b & 0x80) {
		p->family = AF_INET6;
		p->addr[0] = 0x20;
		p->addr[1] = 0x01;
		p->addr[15] = (uint8_t)(b >> 3 & 3);
		p->len = lens6[b & 7];
	} else {
		p->family = AF_INET;
		p->addr[0] = 10;
		p->addr[3] = (uint8_t)(b >> 3 & 3);
		p->len = lens4[b & 7];
	}
	prefix_mask(p);
}

/* A gateway: 10.0.0.1-4 or fe80::1-4 (or none), on ifindex 0-3. */
static void path_of(uint8_t b, uint8_t w, struct rib_path *path)
{
	memset(path, 0, sizeof(*path));
	path->ifindex = b & 3;
	path->weight = w % 4;
	switch (b >> 2 & 3) {
	case 0:
		break;
	case 1:
	case 2:
		path->has_gw = true;
		path->family = AF_INET;
		path->gw[0] = 10;
		path->gw[3] = (uint8_t)(1 + (b >> 4 & 3));
		break;
	default:
		path->has_gw = true;
		path->family = AF_INET6;
		path->gw[0] = 0xfe;
		path->gw[1] = 0x80;
		path->gw[15] = (uint8_t)(1 + (b >> 4 & 3));
		break;
	}
}

static void op_route_add(struct in *in)
{
	static const enum rib_rtype types[] = {
		RT_UNICAST,	RT_UNICAST,  RT_UNICAST, RT_BLACKHOLE,
		RT_UNREACHABLE, RT_PROHIBIT, RT_LOCAL,	 RT_KERNEL,
	};
	struct rib_path paths[NH_MAX_MEMBERS];
	struct rib_route_req rq = { 0 };
	uint8_t how = take(in);
	const char *err;

	rq.src = source(take(in));
	prefix_of(take(in), &rq.p);
	rq.type = types[how & 7];
	rq.gen = take(in) & 3;
	if (rq.type == RT_KERNEL)
		rq.kreason = KR_UNSUPPORTED;
	if (rq.type == RT_UNICAST && how & 8) {
		rq.nhid = 1 + (take(in) & 7);
	} else if (rq.type == RT_UNICAST) {
		rq.npaths = 1 + (how >> 4 & 3);
		for (int i = 0; i < rq.npaths; i++) {
			uint8_t b = take(in);

			path_of(b, take(in), &paths[i]);
		}
		rq.paths = paths;
	}
	rib_route_add(&rq, &err);
}

static void op_route_del(struct in *in)
{
	enum rib_source src = source(take(in));
	struct prefix p;
	const char *err;

	prefix_of(take(in), &p);
	rib_route_del(src, &p, &err);
}

static void op_nexthop_add(struct in *in)
{
	enum rib_source src = source(take(in));
	uint8_t b = take(in), id = take(in);
	struct rib_path path;
	const char *err;

	path_of(b, 1, &path);
	rib_nexthop_add(src, id & 7, &path, b & 0x40, b & 0x80, take(in) & 3,
			&err);
}

static void op_group_add(struct in *in)
{
	enum rib_source src = source(take(in));
	uint32_t ids[NH_MAX_MEMBERS], w[NH_MAX_MEMBERS];
	uint8_t id = take(in), n = take(in);
	const char *err;

	n = n % 5; /* 0 members is refused, try it too */
	for (int i = 0; i < n; i++) {
		uint8_t b = take(in);

		ids[i] = 1 + (b & 15);
		w[i] = b >> 4;
	}
	rib_group_add(src, 1 + (id & 15), ids, w, n, take(in) & 3, &err);
}

static void op_nexthop_del(struct in *in)
{
	enum rib_source src = source(take(in));
	const char *err;

	rib_nexthop_del(src, take(in) & 15, &err);
}

static void op_neigh(struct in *in)
{
	uint8_t b = take(in), m = take(in);
	uint8_t mac[6] = { 0x02, 0, 0, 0, 0, m };
	struct rib_path path;
	const char *err;

	path_of(b, 0, &path);
	if (!path.has_gw)
		return;
	if (b & 0x40)
		rib_neigh_del(path.family, path.gw, path.ifindex, b & 0x80,
			      &err);
	else
		rib_neigh_add(path.family, path.gw, path.ifindex, mac, b & 0x80,
			      &err);
}

/* What the kernel watcher does on a link or neighbor dump. */
static void op_kernel(struct in *in)
{
	uint8_t b = take(in);
	struct iface *i = &iface_tab[b % FUZZ_IFACES];

	switch (b >> 2 & 3) {
	case 0:
		i->up = !i->up;
		break;
	case 1:
		i->mac[4]++;
		break;
	case 2:
		i->mtu = i->mtu == 1500 ? 1280 : 1500;
		break;
	default:
		rib_neigh_gen++;
		rib_neigh_sweep();
		return;
	}
	rib_iface_changed(i->ifindex);
}

static void op_sweep(struct in *in)
{
	uint8_t b = take(in);

	/* Generations before 0-3 (a replay of that generation); to the
	 * end, as the loop's turns would. */
	rib_sweep(source(b), b >> 2 & 3, NULL, NULL);
	while (rib_sweep_run())
		;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static void (*const ops[])(struct in *) = {
		op_route_add,	op_route_add, op_route_del,
		op_nexthop_add, op_group_add, op_nexthop_del,
		op_neigh,	op_kernel,    op_sweep,
	};
	struct in in = { data, size };

	while (in.n) {
		uint8_t op = take(&in);

		ops[op % (sizeof(ops) / sizeof(ops[0]))](&in);
	}
	fuzz_reset(SRC_MAX);
	return 0;
}
