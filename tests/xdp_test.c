// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Table-driven packet tests for the XDP fast path (bpf/fpmd.bpf.c), and
 * for the same pipeline run by its tc program (fpmd_tc, on an skb), in the
 * style of the kernel's selftests prog_tests/fib_lookup.c: each case is a
 * crafted frame plus the map contents it meets, and the verdict, rewrite
 * and counters it must produce. Frames go through the real program with
 * BPF_PROG_TEST_RUN; nothing is sent anywhere.
 *
 * The process moves into its own network namespace first, so the veths it
 * creates (test_run wants a real ingress ifindex, tx_ports real egresses)
 * vanish with it. Every case gets a freshly loaded skeleton, so no map
 * entry or counter leaks from one case into the next.
 *
 *   xdp_test            run every case
 *   xdp_test --list     print the case names
 *   xdp_test PATTERN... run the cases whose name matches (fnmatch)
 *   xdp_test --fib fast ...  the same with the program built for DIR-24-8
 *                       and the IPv6 binary search on prefix lengths,
 *                       routes written by fpmd's fib4.c / fib6.c
 *                       (default --fib lpm: the LPM tries)
 *   xdp_test --fib dxr ...   the same with IPv4 in DXR (fib4c.c) instead
 *                       of DIR-24-8
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fib/fib4.h"
#include "fib/fib4c.h"
#include "fib/fib6.h"
#include "fib/nhtab.h"
#include "fpmd_maps.h"
#include "fpmd.skel.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* A jumbo frame (MTU 9000) and what the cases add to it. */
#define FRAME_MAX 9216

/* ------------------------------------------------------------------------
 * The fixture: interfaces, nexthops, groups, routes, neighbors.
 * ------------------------------------------------------------------------
 */

/*
 * Nexthop slots. Each nexthop leaves by its own veth ("nh<id>") with its
 * own MACs, so the rewritten source MAC names the nexthop, and through it
 * the egress ifindex, without ambiguity.
 */
enum nh_id {
	NH_DEF4 = 1,
	NH_P8,
	NH_P16,
	NH_P24,
	NH_P32,
	NH_A, /* ECMP members */
	NH_B,
	NH_C,
	NH_D,
	NH_CONN4,  /* connected: dmac from neigh_v4 */
	NH_UNRES,  /* gateway not resolved */
	NH_IFDOWN, /* resolved, egress down */
	NH_NOTX,   /* egress not in tx_ports */
	NH_MTU4,   /* MTU 1000 */
	NH_IN0,	   /* leaves by in0 (rp_filter) */
	NH_IN1,	   /* leaves by in1 (rp_filter) */
	NH_DEF6,
	NH_P6_32,
	NH_P6_48,
	NH_P6_64,
	NH_P6_128,
	NH_CONN6,
	NH_MTU6,  /* MTU 1280 */
	NH_STALE, /* a freed slot: RESOLVED still set, VALID cleared */
	NH_LIVE4, /* copy says 1500, the device now has DEV_MTU_LIVE */
	NH_LIVE6,
	NH_JUMBO4, /* MTU 9000, egress transmits multi-buffer frames */
	NH_JUMBO6,
	NH_NOSG4,  /* MTU 9000, egress without XMIT_SG */
	NH_NOSG6,
	NH_JLIVE4, /* copy says 9000, the device has 1500 */
	NH_COUNT
};
#define NH_UNUSED 1000 /* a slot no one wrote */

/* Interfaces: in0 and in1 receive, stray is not in the ifaces map. */
enum if_id { IF_IN0, IF_IN1, IF_STRAY, IF_NH0 };
#define IF_NH(id) (IF_NH0 + (id))
#define IF_COUNT (IF_NH0 + NH_COUNT)
#define IF_OWN (-1)

#define IN_FLAGS_DEFAULT                                                       \
	(FPMD_IF_F_ENABLED | FPMD_IF_F_FWD_V4 | FPMD_IF_F_FWD_V6)

#define RES FPMD_NH_F_RESOLVED
#define V6 FPMD_NH_F_V6

static const struct nh_def {
	const char *name;
	int dev;     /* IF_OWN: the nexthop's own veth */
	__u16 flags; /* FPMD_NH_F_VALID is added */
	__u16 mtu;
} nh_defs[NH_COUNT] = {
	[NH_DEF4] = { "default-v4", IF_OWN, RES, 1500 },
	[NH_P8] = { "10/8", IF_OWN, RES, 1500 },
	[NH_P16] = { "10.1/16", IF_OWN, RES, 1500 },
	[NH_P24] = { "10.1.2/24", IF_OWN, RES, 1500 },
	[NH_P32] = { "10.1.2.3/32", IF_OWN, RES, 1500 },
	[NH_A] = { "ecmp-A", IF_OWN, RES, 1500 },
	[NH_B] = { "ecmp-B", IF_OWN, RES, 1500 },
	[NH_C] = { "ecmp-C", IF_OWN, RES, 1500 },
	[NH_D] = { "ecmp-D", IF_OWN, RES, 1500 },
	[NH_CONN4] = { "connected-v4", IF_OWN, FPMD_NH_F_CONNECTED, 1500 },
	[NH_UNRES] = { "unresolved", IF_OWN, 0, 1500 },
	[NH_IFDOWN] = { "ifdown", IF_OWN, RES | FPMD_NH_F_IFDOWN, 1500 },
	[NH_NOTX] = { "not-in-tx_ports", IF_OWN, RES, 1500 },
	[NH_MTU4] = { "mtu-1000", IF_OWN, RES, 1000 },
	[NH_IN0] = { "via-in0", IF_IN0, RES, 1500 },
	[NH_IN1] = { "via-in1", IF_IN1, RES, 1500 },
	[NH_DEF6] = { "default-v6", IF_OWN, RES | V6, 1500 },
	[NH_P6_32] = { "2001:db8::/32", IF_OWN, RES | V6, 1500 },
	[NH_P6_48] = { "2001:db8:1::/48", IF_OWN, RES | V6, 1500 },
	[NH_P6_64] = { "2001:db8:1:2::/64", IF_OWN, RES | V6, 1500 },
	[NH_P6_128] = { "2001:db8:1:2::3/128", IF_OWN, RES | V6, 1500 },
	[NH_CONN6] = { "connected-v6", IF_OWN, FPMD_NH_F_CONNECTED | V6, 1500 },
	[NH_MTU6] = { "mtu-1280", IF_OWN, RES | V6, 1280 },
	[NH_STALE] = { "freed", IF_OWN, RES, 1500 },
	[NH_LIVE4] = { "device-mtu-1280", IF_OWN, RES, 1500 },
	[NH_LIVE6] = { "device-mtu-1280-v6", IF_OWN, RES | V6, 1500 },
	[NH_JUMBO4] = { "jumbo-9000", IF_OWN, RES, 9000 },
	[NH_JUMBO6] = { "jumbo-9000-v6", IF_OWN, RES | V6, 9000 },
	[NH_NOSG4] = { "jumbo-no-xmit-sg", IF_OWN, RES, 9000 },
	[NH_NOSG6] = { "jumbo-no-xmit-sg-v6", IF_OWN, RES | V6, 9000 },
	[NH_JLIVE4] = { "copy-9000-device-1500", IF_OWN, RES, 9000 },
};

/*
 * The MTU these nexthops' veths really have while their copies say 1500:
 * what the fast path meets between "ip link set mtu" and fpmd's update.
 */
#define DEV_MTU_LIVE 1280
static const int live_mtu_nh[] = { NH_LIVE4, NH_LIVE6 };

/* Jumbo egresses: their veths have MTU 9000; all but the NOSG ones
 * transmit multi-buffer frames (FPMD_IF_F_XMIT_SG). */
#define DEV_MTU_JUMBO 9000
static const int jumbo_nh[] = { NH_JUMBO4, NH_JUMBO6, NH_NOSG4, NH_NOSG6 };

enum grp_id { G_13 = 1, G_121, G_EQ4, G_RPF_IN, G_RPF_OUT, G_EMPTY, G_COUNT };

static const struct grp_def {
	int n;
	int nh[4];
	int weight[4];
} grp_defs[G_COUNT] = {
	[G_13] = { 2, { NH_A, NH_B }, { 1, 3 } },
	[G_121] = { 3, { NH_A, NH_B, NH_C }, { 1, 2, 1 } },
	[G_EQ4] = { 4, { NH_A, NH_B, NH_C, NH_D }, { 1, 1, 1, 1 } },
	[G_RPF_IN] = { 2, { NH_IN1, NH_IN0 }, { 1, 1 } },
	[G_RPF_OUT] = { 2, { NH_IN1, NH_P8 }, { 1, 1 } },
	[G_EMPTY] = { 0 },
};

#define NH(id) FPMD_RT_NEXTHOP, (id)
#define GRP(id) FPMD_RT_GROUP, (id)
#define TYPE(t) FPMD_RT_##t, 0

static const struct route_def {
	const char *prefix;
	int type;
	int idx;
} route_defs[] = {
	{ "0.0.0.0/0", NH(NH_DEF4) },
	{ "10.0.0.0/8", NH(NH_P8) },
	{ "10.1.0.0/16", NH(NH_P16) },
	{ "10.1.2.0/24", NH(NH_P24) },
	{ "10.1.2.3/32", NH(NH_P32) },
	{ "192.0.2.0/24", GRP(G_13) },
	{ "198.18.0.0/15", GRP(G_121) },
	{ "198.51.100.0/24", GRP(G_EQ4) },
	{ "172.16.0.0/16", TYPE(BLACKHOLE) },
	{ "172.17.0.0/16", TYPE(UNREACHABLE) },
	{ "172.18.0.0/16", TYPE(PROHIBIT) },
	{ "172.19.0.0/16", TYPE(KERNEL) },
	{ "172.20.0.1/32", TYPE(LOCAL) },
	{ "172.21.0.0/24", NH(NH_CONN4) },
	{ "172.22.0.0/16", NH(NH_UNRES) },
	{ "172.23.0.0/16", NH(NH_IFDOWN) },
	{ "172.24.0.0/16", NH(NH_NOTX) },
	{ "172.25.0.0/16", NH(NH_MTU4) },
	{ "172.26.0.0/16", NH(NH_UNUSED) },
	{ "172.27.0.0/16", GRP(G_EMPTY) },
	{ "172.28.0.0/16", NH(NH_STALE) },
	{ "172.29.0.0/16", NH(NH_LIVE4) },
	{ "172.30.0.0/16", NH(NH_JUMBO4) },
	{ "172.31.0.0/16", NH(NH_NOSG4) },
	{ "100.65.0.0/16", NH(NH_JLIVE4) },
	/* sources for the rp_filter cases */
	{ "100.64.0.0/24", NH(NH_IN0) },
	{ "100.64.1.0/24", NH(NH_IN1) },
	{ "100.64.2.0/24", GRP(G_RPF_IN) },
	{ "100.64.3.0/24", GRP(G_RPF_OUT) },
	{ "100.64.4.0/24", TYPE(BLACKHOLE) },

	{ "::/0", NH(NH_DEF6) },
	{ "2001:db8::/32", NH(NH_P6_32) },
	{ "2001:db8:1::/48", NH(NH_P6_48) },
	{ "2001:db8:1:2::/64", NH(NH_P6_64) },
	{ "2001:db8:1:2::3/128", NH(NH_P6_128) },
	{ "fd00:ec::/32", GRP(G_13) },
	{ "fd00:ed::/32", GRP(G_EQ4) },
	{ "fd00:b1::/32", TYPE(BLACKHOLE) },
	{ "fd00:b2::/32", TYPE(UNREACHABLE) },
	{ "fd00:b3::/32", TYPE(PROHIBIT) },
	{ "fd00:10::1/128", TYPE(LOCAL) },
	{ "fd00:21::/64", NH(NH_CONN6) },
	{ "fd00:22::/32", NH(NH_UNRES) },
	{ "fd00:23::/32", NH(NH_IFDOWN) },
	{ "fd00:24::/32", NH(NH_NOTX) },
	{ "fd00:25::/32", NH(NH_MTU6) },
	{ "fd00:29::/32", NH(NH_LIVE6) },
	{ "fd00:30::/32", NH(NH_JUMBO6) },
	{ "fd00:31::/32", NH(NH_NOSG6) },
	{ "fd00:64::/48", NH(NH_IN0) },
	{ "fd00:64:1::/48", NH(NH_IN1) },
};

#define NEIGH4_MAC "02:cc:00:00:04:05"
#define NEIGH6_MAC "02:cc:00:00:06:05"

/*
 * The decoys hold the looked-up address on another interface: a lookup
 * that ignored the ifindex would find them.
 */
static const struct neigh_def {
	int dev;
	const char *addr;
	const char *mac;
} neigh_defs[] = {
	{ IF_NH(NH_CONN4), "172.21.0.5", NEIGH4_MAC },
	{ IF_IN0, "172.21.0.6", "02:cc:00:00:04:06" },
	{ IF_NH(NH_CONN6), "fd00:21::5", NEIGH6_MAC },
	{ IF_IN0, "fd00:21::6", "02:cc:00:00:06:06" },
};

#define PEER_MAC "02:ee:00:00:00:01" /* the sender's MAC */
#define SRC4 "203.0.113.7"
#define SRC6 "fd00:5::7"

static int if_index[IF_COUNT];
static struct fpmd_bpf *skel;
static int ncpus;
static bool fib_fast; /* --fib fast or dxr: fpmd's own tables */
static bool fib_dxr;  /* --fib dxr: IPv4 in DXR, not DIR-24-8 */
static struct fib4 fib4;
static struct fib4c fib4c;
static struct fib6 fib6;
static struct nhtab nhtab;
#define TEST_TBL8_GROUPS 64
#define TEST_RULES_V4 4096
#define TEST_SLOTS_V6 16384

static bool if_exists(int ifid)
{
	if (ifid < IF_NH0)
		return true;
	return ifid < IF_COUNT && nh_defs[ifid - IF_NH0].name &&
	       nh_defs[ifid - IF_NH0].dev == IF_OWN;
}

static void if_name(int ifid, char *buf, size_t len)
{
	static const char *const fixed[] = { "in0", "in1", "stray" };

	if (ifid < IF_NH0)
		snprintf(buf, len, "%s", fixed[ifid]);
	else
		snprintf(buf, len, "nh%d", ifid - IF_NH0);
}

static __u32 if_slot(int ifid)
{
	return ifid == IF_IN0 ? 1 : ifid == IF_IN1 ? 2 : 10 + ifid - IF_NH0;
}

/* For messages: the interface behind a counter slot. */
static const char *slot_name(__u32 slot)
{
	static char buf[IFNAMSIZ + 16];

	for (int i = 0; i < IF_COUNT; i++) {
		if (i != IF_STRAY && if_exists(i) && if_slot(i) == slot) {
			if_name(i, buf, sizeof(buf));
			return buf;
		}
	}
	snprintf(buf, sizeof(buf), "slot %u", slot);
	return buf;
}

static void mac_of(__u8 *mac, __u8 kind, int id)
{
	const __u8 m[ETH_ALEN] = { 0x02, kind, 0, 0, 0, (__u8)id };

	memcpy(mac, m, ETH_ALEN);
}

static void nh_smac(int id, __u8 *mac)
{
	mac_of(mac, 0x50, id);
}

static void nh_dmac(int id, __u8 *mac)
{
	mac_of(mac, 0xd0, id);
}

static void if_mac(int ifid, __u8 *mac)
{
	if (ifid < IF_NH0)
		mac_of(mac, 0x00, ifid + 1);
	else
		nh_smac(ifid - IF_NH0, mac);
}

static const char *nh_name(int id)
{
	return id > 0 && id < NH_COUNT ? nh_defs[id].name : "an unknown MAC";
}

static int nh_dev(int id)
{
	return nh_defs[id].dev == IF_OWN ? IF_NH(id) : nh_defs[id].dev;
}

static void parse_mac(const char *s, __u8 *mac)
{
	unsigned int b[ETH_ALEN];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4],
		   &b[5]) != ETH_ALEN) {
		fprintf(stderr, "xdp_test: bad MAC %s\n", s);
		exit(2);
	}
	for (int i = 0; i < ETH_ALEN; i++)
		mac[i] = b[i];
}

static void fmt_mac(const __u8 *m, char *buf)
{
	sprintf(buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3],
		m[4], m[5]);
}

/* Returns the family and fills addr (4 or 16 bytes). */
static int parse_addr(const char *s, void *addr)
{
	if (inet_pton(AF_INET, s, addr) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, s, addr) == 1)
		return AF_INET6;
	fprintf(stderr, "xdp_test: bad address %s\n", s);
	exit(2);
}

static void die(const char *what, int err)
{
	fprintf(stderr, "xdp_test: %s: %s\n", what, strerror(err));
	exit(2);
}

/* One-time: the namespace's veths. */
static void make_interfaces(void)
{
	char name[IFNAMSIZ];
	FILE *ip;

	ip = popen("ip -batch -", "w");
	if (!ip)
		die("ip -batch", errno);
	for (int i = 0; i < IF_COUNT; i++) {
		if (!if_exists(i))
			continue;
		if_name(i, name, sizeof(name));
		fprintf(ip, "link add %s type veth peer name %sp\n", name,
			name);
	}
	for (size_t i = 0; i < ARRAY_SIZE(live_mtu_nh); i++) {
		if_name(IF_NH(live_mtu_nh[i]), name, sizeof(name));
		fprintf(ip, "link set dev %s mtu %d\n", name, DEV_MTU_LIVE);
	}
	for (size_t i = 0; i < ARRAY_SIZE(jumbo_nh); i++) {
		if_name(IF_NH(jumbo_nh[i]), name, sizeof(name));
		fprintf(ip, "link set dev %s mtu %d\n", name, DEV_MTU_JUMBO);
	}
	if (pclose(ip) != 0) {
		fprintf(stderr, "xdp_test: creating veths with ip failed\n");
		exit(2);
	}
	for (int i = 0; i < IF_COUNT; i++) {
		if (!if_exists(i))
			continue;
		if_name(i, name, sizeof(name));
		if_index[i] = if_nametoindex(name);
		if (!if_index[i])
			die(name, errno);
	}
}

static struct fpmd_local_filter local_filter;

static void map_put(struct bpf_map *map, const void *key, const void *val)
{
	if (bpf_map_update_elem(bpf_map__fd(map), key, val, BPF_ANY))
		die(bpf_map__name(map), errno);
}

static void set_iface(int ifid, __u32 flags)
{
	struct fpmd_iface v = { .slot = if_slot(ifid),
				.flags = flags,
				.mtu = 1500 };
	__u32 key = if_index[ifid];

	if_mac(ifid, v.mac);
	map_put(skel->maps.ifaces, &key, &v);
	/*
	 * fpmd also copies the entry into ifaces_direct. The lpm runs leave
	 * the copy out, so every case also runs the program's fallback to
	 * ifaces (what an ifindex >= FPMD_IFINDEX_DIRECT gets).
	 */
	if (fib_fast && key < FPMD_IFINDEX_DIRECT) {
		v.flags |= FPMD_IF_F_PRESENT;
		map_put(skel->maps.ifaces_direct, &key, &v);
	}
}

static void fill_group(struct fpmd_nh_group *g, const struct grp_def *d)
{
	int total = 0, used = 0;

	memset(g, 0, sizeof(*g));
	for (int i = 0; i < d->n; i++)
		total += d->weight[i];
	for (int i = 0; i < d->n; i++) {
		int nb = FPMD_GROUP_BUCKETS * d->weight[i] / total;

		if (i == d->n - 1)
			nb = FPMD_GROUP_BUCKETS - used;
		else if (nb < 1)
			nb = 1;
		for (int j = 0; j < nb; j++)
			g->bucket[used++] = d->nh[i];
	}
	g->nbuckets = used;
}

static void route_key(const char *prefix, int *family, void *key)
{
	char buf[INET6_ADDRSTRLEN + 4], *slash;
	struct fpmd_lpm_v6 *k6 = key;
	struct fpmd_lpm_v4 *k4 = key;
	__u8 addr[16];

	snprintf(buf, sizeof(buf), "%s", prefix);
	slash = strchr(buf, '/');
	*slash = 0;
	*family = parse_addr(buf, addr);
	if (*family == AF_INET) {
		k4->prefixlen = atoi(slash + 1);
		memcpy(k4->addr, addr, 4);
	} else {
		k6->prefixlen = atoi(slash + 1);
		memcpy(k6->addr, addr, 16);
	}
}

/* Publish the IPv4 table's pending changes, as fpmd's commit does. */
static int fib4_table_commit(void)
{
	return fib_dxr ? fib4c_commit(&fib4c) : fib4_commit(&fib4, 64);
}

static void del_route(const char *prefix)
{
	struct fpmd_lpm_v6 key;
	int family, ret;

	route_key(prefix, &family, &key);
	if (fib_fast) {
		ret = family != AF_INET ?
			      fib6_del(&fib6, key.addr, (uint8_t)key.prefixlen) :
		      fib_dxr ? fib4c_del(&fib4c, key.addr, (uint8_t)key.prefixlen) :
				fib4_del(&fib4, key.addr, (uint8_t)key.prefixlen);
		if (!ret && family == AF_INET)
			ret = fib4_table_commit();
		if (ret)
			die(prefix, -ret);
		return;
	}
	if (bpf_map_delete_elem(bpf_map__fd(family == AF_INET
						? skel->maps.routes_v4
						: skel->maps.routes_v6),
				&key))
		die(prefix, errno);
}

/* As fpmd writes a route: through fib4/fib6, or into the LPM tries. */
static void put_route(int family, const struct fpmd_lpm_v6 *key, __u32 val,
		      const char *prefix)
{
	struct fpmd_route_val v = { val };
	int ret;

	if (!fib_fast) {
		map_put(family == AF_INET ? skel->maps.routes_v4
					  : skel->maps.routes_v6,
			key, &v);
		return;
	}
	ret = family != AF_INET ?
		      fib6_add(&fib6, key->addr, (uint8_t)key->prefixlen, val) :
	      fib_dxr ? fib4c_add(&fib4c, key->addr, (uint8_t)key->prefixlen, val) :
			fib4_add(&fib4, key->addr, (uint8_t)key->prefixlen, val);
	if (!ret && family == AF_INET)
		ret = fib4_table_commit();
	if (ret)
		die(prefix, -ret);
}

static void skel_load(void)
{
	struct fib4c_maps m4c;
	struct fib4_maps m4;
	int ret;

	skel = fpmd_bpf__open();
	if (!skel)
		die("fpmd_bpf__open", errno);
	if (fib_fast) {
		skel->rodata->fib4_algo =
		    fib_dxr ? FPMD_FIB4_DXR : FPMD_FIB4_DIR24;
		skel->rodata->fib6_algo = FPMD_FIB6_BSPL;
		bpf_map__set_max_entries(skel->maps.routes_v4, 1);
		bpf_map__set_max_entries(skel->maps.routes_v6, 1);
		fib4_size(skel->obj, fib_dxr ? 0 : TEST_TBL8_GROUPS,
			  fib_dxr ? 0 : TEST_RULES_V4);
		fib4c_size(skel->obj, fib_dxr ? TEST_RULES_V4 : 0);
		bpf_map__set_max_entries(skel->maps.slots_v6,
					 FPMD_V6_OUTER(TEST_SLOTS_V6));
	} else {
		fib4_size(skel->obj, 0, 0);
		bpf_map__set_max_entries(skel->maps.slots_v6, 1);
	}
	if (fpmd_bpf__load(skel))
		die("fpmd_bpf__load", errno);
	ret = nhtab_open(&nhtab, bpf_map__fd(skel->maps.nexthops),
			 bpf_map__fd(skel->maps.nh_groups), false);
	if (ret)
		die("nhtab_open", -ret);
	if (!fib_fast)
		return;
	if (fib_dxr) {
		fib4c_maps_of(skel->obj, &m4c);
		ret = fib4c_open(&fib4c, &m4c, TEST_RULES_V4, false);
		if (!ret)
			ret = fib4c_commit(&fib4c);
	} else {
		fib4_maps_of(skel->obj, &m4);
		ret = fib4_open(&fib4, &m4, TEST_TBL8_GROUPS, TEST_RULES_V4,
				false);
		if (!ret)
			ret = fib4_commit(&fib4, 0);
	}
	if (!ret)
		ret = fib6_open(&fib6, bpf_map__fd(skel->maps.slots_v6),
				bpf_map__fd(skel->maps.lens_v6), TEST_SLOTS_V6,
				false);
	if (ret)
		die("fib4_open / fib6_open", -ret);
	/* no packet runs meanwhile */
	fib4.grace_ns = fib4c.grace_ns = fib6.grace_ns = 0;
}

/* Load a fresh program and write the whole fixture into its maps. */
static void fixture_load(void)
{
	skel_load();

	for (int i = 0; i < IF_COUNT; i++) {
		struct bpf_devmap_val dv = { .ifindex = if_index[i] };
		__u32 key = if_index[i];

		if (!if_exists(i) || i == IF_STRAY)
			continue;
		set_iface(i, IN_FLAGS_DEFAULT |
				     (i == IF_NH(NH_NOSG4) || i == IF_NH(NH_NOSG6) ?
					      0 :
					      FPMD_IF_F_XMIT_SG));
		if (i != IF_NH(NH_NOTX))
			map_put(skel->maps.tx_ports, &key, &dv);
	}
	for (__u32 id = 1; id < NH_COUNT; id++) {
		const struct nh_def *d = &nh_defs[id];
		struct fpmd_nexthop nh = {
			.ifindex = if_index[nh_dev(id)],
			.mtu = d->mtu,
			.flags = id == NH_STALE ? d->flags
						: FPMD_NH_F_VALID | d->flags,
			.oslot = if_slot(nh_dev(id)),
		};

		nh_dmac(id, nh.dmac);
		nh_smac(id, nh.smac);
		int err = nhtab_nexthop_write(&nhtab, id, &nh);

		if (err)
			die("nexthops write", -err);
	}
	for (__u32 id = 1; id < G_COUNT; id++) {
		struct fpmd_nh_group g;

		fill_group(&g, &grp_defs[id]);
		int err = nhtab_group_write(&nhtab, id, &g);

		if (err)
			die("nh_groups write", -err);
	}
	for (size_t i = 0; i < ARRAY_SIZE(route_defs); i++) {
		__u32 v = FPMD_RT_ENCODE(route_defs[i].type, route_defs[i].idx);
		struct fpmd_lpm_v6 key;
		int family;

		route_key(route_defs[i].prefix, &family, &key);
		put_route(family, &key, v, route_defs[i].prefix);
		/* fpmd also lists its own IPv4 addresses in local_v4, each
		 * with its bit in local_v4_filter. */
		if (family == AF_INET && route_defs[i].type == FPMD_RT_LOCAL &&
		    key.prefixlen == 32) {
			struct fpmd_local_v4_val lv = { 1 };
			__u32 a, zero = 0;

			memcpy(&a, key.addr, 4);
			fpmd_local_filter_add(&local_filter, a);
			map_put(skel->maps.local_v4_filter, &zero,
				&local_filter);
			map_put(skel->maps.local_v4, &a, &lv);
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(neigh_defs); i++) {
		const struct neigh_def *d = &neigh_defs[i];
		struct fpmd_neigh_val v = { 0 };
		struct fpmd_neigh_v6_key k6 = { .ifindex = if_index[d->dev] };
		struct fpmd_neigh_v4_key k4 = { .ifindex = if_index[d->dev] };

		parse_mac(d->mac, v.mac);
		if (parse_addr(d->addr, k6.addr) == AF_INET) {
			memcpy(k4.addr, k6.addr, 4);
			map_put(skel->maps.neigh_v4, &k4, &v);
		} else {
			map_put(skel->maps.neigh_v6, &k6, &v);
		}
	}
}

static void fixture_unload(void)
{
	if (fib_dxr)
		fib4c_close(&fib4c);
	else if (fib_fast)
		fib4_close(&fib4);
	if (fib_fast)
		fib6_close(&fib6);
	nhtab_close(&nhtab);
	fpmd_bpf__destroy(skel);
	skel = NULL;
}

/* Per-case tweaks of the fixture. */
static void no_default_v4(void)
{
	del_route("0.0.0.0/0");
}

/* The not-in-tx_ports egress is a container's veth: a PEER. */
static void peer_notx(void)
{
	set_iface(IF_NH(NH_NOTX), IN_FLAGS_DEFAULT | FPMD_IF_F_PEER);
}

static void no_default_v6(void)
{
	del_route("::/0");
}

/* ------------------------------------------------------------------------
 * Frames.
 * ------------------------------------------------------------------------
 */

/* Mutations applied to the otherwise well-formed frame. */
#define M_BAD_CSUM 0x1	 /* IPv4 header checksum off by one */
#define M_VERSION 0x2	 /* version 6 in IPv4, 4 in IPv6 */
#define M_IHL4 0x4	 /* IHL 4 */
#define M_OPTIONS 0x8	 /* IPv4 router alert option, IHL 6 */
#define M_LEN_BIG 0x10	 /* tot_len / payload_len one past the frame */
#define M_LEN_SMALL 0x20 /* tot_len 19, shorter than the header */
#define M_HBH 0x40	 /* IPv6 hop-by-hop options header */
#define M_DSTOPT 0x80	 /* IPv6 destination options header */
#define M_FRAG6 0x100	 /* IPv6 fragment header (first fragment) */
#define M_NO_NEXT 0x200	 /* IPv6 next header 59, no payload */

#define TTL_ZERO 256 /* .ttl = 0 means the default, 64 */

struct pkt {
	const char *src, *dst; /* src NULL: SRC4 / SRC6 */
	int ttl;	       /* TTL or hop limit */
	int l3len;	       /* 0: headers + 8 (UDP) + 16 */
	__u16 frag;	       /* IPv4 frag_off, host order */
	__u8 proto;	       /* 0: UDP */
	__u16 sport, dport;
	__u32 mut;	   /* M_* */
	int trunc;	   /* cut the frame to this many bytes */
	int pad_to;	   /* Ethernet padding up to this many bytes */
	int trail;	   /* bytes after the datagram (0xee), not padding */
	bool plen0;	   /* IPv6 payload_len 0 (no jumbo option) */
	const char *l2dst; /* NULL: the ingress interface's MAC */
	__u16 ethertype;   /* 0: from the address family */
};

/* Two bytes ahead of the frame align the IP header, as NET_IP_ALIGN does. */
struct frame {
	__u8 align[2];
	__u8 b[FRAME_MAX];
	__u32 len;
	__u32 meta_len; /* XDP metadata that came out in front of b */
	__u8 meta[32];
} __attribute__((aligned(4)));

static __u32 csum_add(__u32 sum, const void *p, size_t len)
{
	const __u8 *b = p;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (b[i] << 8) | b[i + 1];
	if (len & 1)
		sum += b[len - 1] << 8;
	return sum;
}

static __u16 csum_fold(__u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* The IPv4 header checksum by full recomputation, as stored (net order). */
static __u16 ipv4_csum(const struct iphdr *ip)
{
	struct iphdr h;
	size_t hl = ip->ihl >= 5 ? ip->ihl * 4 : sizeof(h);

	memcpy(&h, ip, sizeof(h));
	h.check = 0;
	return htons(
	    ~csum_fold(csum_add(csum_add(0, &h, sizeof(h)),
				(const __u8 *)ip + sizeof(h), hl - sizeof(h))) &
	    0xffff);
}

static bool ipv4_csum_ok(const struct iphdr *ip)
{
	return csum_fold(csum_add(0, ip, ip->ihl * 4)) == 0xffff;
}

static void build_l4(__u8 *l4, int len, const struct pkt *p)
{
	struct udphdr *udp = (void *)l4;

	for (int i = 0; i < len; i++)
		l4[i] = 0xa0 + i;
	if (len < (int)sizeof(*udp))
		return;
	udp->source = htons(p->sport ? p->sport : 40000);
	udp->dest = htons(p->dport ? p->dport : 53);
	udp->len = htons(len);
	udp->check = 0;
}

static void build_frame(const struct pkt *p, int in_if, struct frame *f)
{
	struct ethhdr *eth = (void *)f->b;
	__u8 src[16], dst[16];
	int family, ttl;

	memset(f, 0, sizeof(*f));
	family = parse_addr(p->dst ? p->dst : "192.0.2.1", dst);
	parse_addr(p->src ? p->src : family == AF_INET ? SRC4 : SRC6, src);
	ttl = p->ttl == TTL_ZERO ? 0 : p->ttl ? p->ttl : 64;

	if (p->l2dst)
		parse_mac(p->l2dst, eth->h_dest);
	else
		if_mac(in_if, eth->h_dest);
	parse_mac(PEER_MAC, eth->h_source);
	eth->h_proto = htons(p->ethertype	 ? p->ethertype
			     : family == AF_INET ? ETH_P_IP
						 : ETH_P_IPV6);

	if (p->ethertype && p->ethertype != ETH_P_IP &&
	    p->ethertype != ETH_P_IPV6) {
		/* ARP, VLAN, LLDP: the body does not matter, the type does */
		for (int i = ETH_HLEN; i < 60; i++)
			f->b[i] = i;
		f->len = 60;
	} else if (family == AF_INET) {
		struct iphdr *ip = (void *)(eth + 1);
		int hl = sizeof(*ip) + (p->mut & M_OPTIONS ? 4 : 0);
		int l3len = p->l3len ? p->l3len : hl + 8 + 16;

		ip->version = 4;
		ip->ihl = hl / 4;
		ip->tot_len = htons(l3len);
		ip->id = htons(0x1234);
		ip->frag_off = htons(p->frag);
		ip->ttl = ttl;
		ip->protocol = p->proto ? p->proto : IPPROTO_UDP;
		memcpy(&ip->saddr, src, 4);
		memcpy(&ip->daddr, dst, 4);
		if (p->mut & M_OPTIONS) {
			static const __u8 ra[4] = { 0x94, 0x04, 0, 0 };

			memcpy(ip + 1, ra, sizeof(ra));
		}
		build_l4((__u8 *)ip + hl, l3len - hl, p);
		f->len = ETH_HLEN + l3len;
		if (p->mut & M_VERSION)
			ip->version = 6;
		if (p->mut & M_IHL4)
			ip->ihl = 4;
		if (p->mut & M_LEN_BIG)
			ip->tot_len = htons(l3len + 1);
		if (p->mut & M_LEN_SMALL)
			ip->tot_len = htons(19);
		ip->check = 0;
		ip->check = htons(~csum_fold(csum_add(0, ip, hl)) & 0xffff);
		if (p->mut & M_BAD_CSUM)
			ip->check ^= htons(1);
	} else {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		__u8 *ext = (__u8 *)(ip6 + 1);
		__u8 proto = p->proto ? p->proto : IPPROTO_UDP;
		int extlen = p->mut & (M_HBH | M_DSTOPT | M_FRAG6) ? 8 : 0;
		int l3len = p->l3len ? p->l3len
			    : p->mut & M_NO_NEXT
				? (int)sizeof(*ip6)
				: (int)sizeof(*ip6) + extlen + 8 + 16;

		ip6->version = 6;
		ip6->payload_len = htons(l3len - sizeof(*ip6));
		ip6->nexthdr = proto;
		ip6->hop_limit = ttl;
		memcpy(&ip6->saddr, src, 16);
		memcpy(&ip6->daddr, dst, 16);
		if (p->mut & (M_HBH | M_DSTOPT)) {
			/* next header, length 0, PadN of 4 */
			const __u8 opt[8] = { proto, 0, 1, 4, 0, 0, 0, 0 };

			ip6->nexthdr = p->mut & M_HBH ? 0 : 60;
			memcpy(ext, opt, sizeof(opt));
		} else if (p->mut & M_FRAG6) {
			/* next header, reserved, offset 0 with M, id */
			const __u8 fh[8] = { proto, 0, 0, 1, 0, 0, 0x12, 0x34 };

			ip6->nexthdr = 44;
			memcpy(ext, fh, sizeof(fh));
		} else if (p->mut & M_NO_NEXT) {
			ip6->nexthdr = 59;
		}
		if (l3len > (int)sizeof(*ip6) + extlen)
			build_l4(ext + extlen, l3len - sizeof(*ip6) - extlen,
				 p);
		f->len = ETH_HLEN + l3len;
		if (p->mut & M_VERSION)
			ip6->version = 4;
		if (p->mut & M_LEN_BIG)
			ip6->payload_len = htons(l3len - sizeof(*ip6) + 1);
	}
	if (p->plen0)
		((struct ipv6hdr *)(eth + 1))->payload_len = 0;
	memset(f->b + f->len, 0xee, p->trail);
	f->len += p->trail;
	if ((int)f->len < p->pad_to)
		f->len = p->pad_to;
	if (p->trunc)
		f->len = p->trunc;
}

/* ------------------------------------------------------------------------
 * Running a frame, reading counters.
 * ------------------------------------------------------------------------
 */

static const char *const verdict_names[] = {
	[XDP_ABORTED] = "XDP_ABORTED",	 [XDP_DROP] = "XDP_DROP",
	[XDP_PASS] = "XDP_PASS",	 [XDP_TX] = "XDP_TX",
	[XDP_REDIRECT] = "XDP_REDIRECT",
};

static const char *const tc_verdict_names[] = {
	[TC_ACT_OK] = "TC_ACT_OK",
	[TC_ACT_SHOT] = "TC_ACT_SHOT",
	[TC_ACT_REDIRECT] = "TC_ACT_REDIRECT",
};

#define R(x) [FPMD_R_##x] = #x
static const char *const reason_names[FPMD_R_MAX] = {
	R(FORWARDED),	     R(TX),
	R(DROP_BLACKHOLE),   R(PASS_NOT_IP),
	R(PASS_L2_OTHER),    R(PASS_MALFORMED),
	R(PASS_BAD_CSUM),    R(PASS_TTL),
	R(PASS_OPTIONS),     R(PASS_LOCAL),
	R(PASS_MCAST),	     R(PASS_LINKLOCAL),
	R(PASS_MARTIAN),     R(PASS_NO_ROUTE),
	R(PASS_UNREACHABLE), R(PASS_UNRESOLVED),
	R(PASS_EGRESS),	     R(PASS_MTU),
	R(PASS_RPF),	     R(PASS_POLICY),
	R(PASS_DISABLED),    R(PASS_REDIRECT),
	R(TX_REDIRECT_ERR),  R(TX_XMIT_DROP),
	R(FORWARDED_PEER),   R(FORWARDED_TC),
};
#undef R

#define R_NONE (-1) /* no counter may move */

static const char *vname(bool tc, int v)
{
	if (tc)
		return v >= 0 && v < (int)ARRAY_SIZE(tc_verdict_names) &&
			       tc_verdict_names[v]
			   ? tc_verdict_names[v]
			   : "?";
	return v >= 0 && v < (int)ARRAY_SIZE(verdict_names) && verdict_names[v]
		   ? verdict_names[v]
		   : "?";
}

static const char *rname(int r)
{
	return r == R_NONE				     ? "(none)"
	       : r >= 0 && r < FPMD_R_MAX && reason_names[r] ? reason_names[r]
							     : "?";
}

/* Returns 0 and the verdict, or -errno when test_run itself refuses. */
static int run_frame(int in_if, const struct frame *in, struct frame *out,
		     __u32 *retval)
{
	struct xdp_md ctx = {
		.data = 0,
		.data_end = in->len,
		.ingress_ifindex = if_index[in_if],
	};
	struct xdp_md ctx_out = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in->b,
		    .data_size_in = in->len, .data_out = out->b,
		    .data_size_out = sizeof(out->b), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .ctx_out = &ctx_out,
		    .ctx_size_out = sizeof(ctx_out), .repeat = 1);
	int err;

	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.fpmd_xdp),
				     &opts);
	if (err)
		return -errno;
	/* The output starts at data_meta; ctx_out.data is where the frame
	 * starts in it. */
	out->len = opts.data_size_out;
	out->meta_len = ctx_out.data;
	if (out->meta_len > sizeof(out->meta) || out->meta_len > out->len)
		return -EOVERFLOW;
	memcpy(out->meta, out->b, out->meta_len);
	out->len -= out->meta_len;
	memmove(out->b, out->b + out->meta_len, out->len);
	*retval = opts.retval;
	return 0;
}

/*
 * The same through fpmd_tc on an skb, as at tc ingress of in_if. An skb
 * test run carries no XDP metadata (data_meta == data), so these are the
 * frames tc meets on a TC_ONLY interface, or without XDP's marker.
 */
static int run_frame_tc(int in_if, const struct frame *in, struct frame *out,
			__u32 gso_size, __u32 gso_segs, __u32 *retval)
{
	struct __sk_buff ctx = {
		.ifindex = if_index[in_if],
		.gso_size = gso_size,
		.gso_segs = gso_segs,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in->b,
		    .data_size_in = in->len, .data_out = out->b,
		    .data_size_out = sizeof(out->b), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);
	int err;

	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.fpmd_tc),
				     &opts);
	if (err)
		return -errno;
	out->len = opts.data_size_out;
	out->meta_len = 0;
	*retval = opts.retval;
	return 0;
}

/* Counters summed over CPUs, packets and bytes, for every slot. */
static struct fpmd_stat stats_sum[FPMD_MAX_STATS];

static void read_stats(void)
{
	struct fpmd_stat *v = calloc(ncpus, sizeof(*v));
	int fd = bpf_map__fd(skel->maps.stats);

	if (!v)
		die("calloc", ENOMEM);
	for (__u32 k = 0; k < FPMD_MAX_STATS; k++) {
		if (bpf_map_lookup_elem(fd, &k, v))
			die("stats lookup", errno);
		stats_sum[k] = (struct fpmd_stat){ 0 };
		for (int c = 0; c < ncpus; c++) {
			stats_sum[k].packets += v[c].packets;
			stats_sum[k].bytes += v[c].bytes;
		}
	}
	free(v);
}

/* Which fixture nexthop's source MAC the frame carries; 0 if none. */
static int nh_by_smac(const struct frame *f)
{
	for (int id = 1; id < NH_COUNT; id++) {
		__u8 mac[ETH_ALEN];

		nh_smac(id, mac);
		if (!memcmp(f->b + ETH_ALEN, mac, ETH_ALEN))
			return id;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Failure reporting.
 * ------------------------------------------------------------------------
 */

static char msg[16384];
static size_t msglen;
static char note[256];
static int nfail_lines;

__attribute__((format(printf, 1, 2))) static void failf(const char *fmt, ...)
{
	va_list ap;

	nfail_lines++;
	if (msglen + 8 >= sizeof(msg))
		return;
	memcpy(msg + msglen, "    ", 4);
	msglen += 4;
	va_start(ap, fmt);
	vsnprintf(msg + msglen, sizeof(msg) - msglen - 1, fmt, ap);
	va_end(ap);
	msglen += strlen(msg + msglen);
	msg[msglen++] = '\n';
	msg[msglen] = 0;
}

/* ------------------------------------------------------------------------
 * The table.
 * ------------------------------------------------------------------------
 */

struct xcase {
	const char *name;
	const char *desc;
	struct pkt pkt;
	int in;		/* ingress interface, IF_IN0 by default */
	bool set_flags; /* ingress flags other than IN_FLAGS_DEFAULT */
	__u32 flags;
	void (*setup)(void); /* fixture tweak */
	int verdict;
	int reason;	  /* FPMD_R_* on the ingress slot, or R_NONE */
	int nh;		  /* XDP_REDIRECT: expected nexthop */
	const char *dmac; /* expected dst MAC when not the nexthop's */
	int err;	  /* test_run itself must fail with this errno */
	bool tc;	  /* through fpmd_tc (verdicts TC_ACT_*) */
	bool handoff;	  /* XDP: passed with the handoff marker */
	__u32 gso_size, gso_segs; /* tc: the skb is GSO */
	void (*run)(const struct xcase *c); /* a case that loops */
};

#define FWD(n) .verdict = XDP_REDIRECT, .reason = FPMD_R_FORWARDED, .nh = (n)
#define PASS(r) .verdict = XDP_PASS, .reason = FPMD_R_##r
#define DROP(r) .verdict = XDP_DROP, .reason = FPMD_R_##r
#define FLAGS(f) .set_flags = true, .flags = (f)
/* fpmd_tc; its ingress is a TC_ONLY interface unless FLAGS say else. */
#define TC_ONLY FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_TC_ONLY)
#define TC_FWD(n)                                                              \
	.tc = true, .verdict = TC_ACT_REDIRECT, .reason = FPMD_R_FORWARDED_TC, \
	.nh = (n)
#define TC_PEER(n)                                                             \
	.tc = true, .verdict = TC_ACT_REDIRECT,                                \
	.reason = FPMD_R_FORWARDED_PEER, .nh = (n)
#define TC_PASS(r) .tc = true, .verdict = TC_ACT_OK, .reason = FPMD_R_##r
#define TC_DROP(r) .tc = true, .verdict = TC_ACT_SHOT, .reason = FPMD_R_##r
#define EN FPMD_IF_F_ENABLED
#define F4 FPMD_IF_F_FWD_V4
#define F6 FPMD_IF_F_FWD_V6

static void case_csum_sweep(const struct xcase *c);
static void case_ecmp_13_v4(const struct xcase *c);
static void case_ecmp_121_v4(const struct xcase *c);
static void case_ecmp_eq4_v4(const struct xcase *c);
static void case_ecmp_13_v6(const struct xcase *c);
static void case_ecmp_eq4_v6(const struct xcase *c);
static void case_ecmp_sticky_v4(const struct xcase *c);
static void case_nexthop_rewrite(const struct xcase *c);
static void case_group_rewrite(const struct xcase *c);
static void case_ecmp_sticky_v6(const struct xcase *c);
static void case_ecmp_frag_v4(const struct xcase *c);
static void case_ecmp_frag_v6(const struct xcase *c);

static const struct xcase cases[] = {
	/* --- forwarding and longest-prefix match --- */
	{ "v4_lpm_default", "IPv4 to 11.0.0.1 takes the default route",
	  .pkt.dst = "11.0.0.1", FWD(NH_DEF4) },
	{ "v4_lpm_default_below_8", "9.255.255.255 is outside 10/8",
	  .pkt.dst = "9.255.255.255", FWD(NH_DEF4) },
	{ "v4_lpm_8", "10.9.9.9 matches 10/8 only", .pkt.dst = "10.9.9.9",
	  FWD(NH_P8) },
	{ "v4_lpm_8_after_16", "10.2.0.1 is past 10.1/16",
	  .pkt.dst = "10.2.0.1", FWD(NH_P8) },
	{ "v4_lpm_16", "10.1.9.9 matches 10.1/16", .pkt.dst = "10.1.9.9",
	  FWD(NH_P16) },
	{ "v4_lpm_16_edge", "10.1.255.255 is the last of 10.1/16",
	  .pkt.dst = "10.1.255.255", FWD(NH_P16) },
	{ "v4_lpm_24", "10.1.2.9 matches 10.1.2/24", .pkt.dst = "10.1.2.9",
	  FWD(NH_P24) },
	{ "v4_lpm_24_next_to_32", "10.1.2.4 is next to the /32",
	  .pkt.dst = "10.1.2.4", FWD(NH_P24) },
	{ "v4_lpm_32", "10.1.2.3 matches the host route", .pkt.dst = "10.1.2.3",
	  FWD(NH_P32) },
	{ "v4_fwd_from_in1", "forwarding counts on the ingress slot",
	  .in = IF_IN1, .pkt.dst = "10.1.2.3", FWD(NH_P32) },
	{ "v4_fwd_tcp", "TCP is forwarded like UDP",
	  .pkt = { .dst = "10.1.2.3", .proto = IPPROTO_TCP, .l3len = 60 },
	  FWD(NH_P32) },
	{ "v4_fwd_header_only", "a 20-byte IPv4 packet, no L4 header",
	  .pkt = { .dst = "10.1.2.3", .l3len = 20 }, FWD(NH_P32) },
	{ "v4_fwd_fragment", "a fragment (MF, offset 800) is forwarded as is",
	  .pkt = { .dst = "10.1.2.3", .frag = 0x2000 | 100 }, FWD(NH_P32) },
	{ "v6_lpm_default", "2001:db9::1 takes ::/0", .pkt.dst = "2001:db9::1",
	  FWD(NH_DEF6) },
	{ "v6_lpm_32", "2001:db8:9::1 matches 2001:db8::/32",
	  .pkt.dst = "2001:db8:9::1", FWD(NH_P6_32) },
	{ "v6_lpm_48", "2001:db8:1:9::1 matches 2001:db8:1::/48",
	  .pkt.dst = "2001:db8:1:9::1", FWD(NH_P6_48) },
	{ "v6_lpm_48_after_64", "2001:db8:1:3::1 is past the /64",
	  .pkt.dst = "2001:db8:1:3::1", FWD(NH_P6_48) },
	{ "v6_lpm_64", "2001:db8:1:2::9 matches the /64",
	  .pkt.dst = "2001:db8:1:2::9", FWD(NH_P6_64) },
	{ "v6_lpm_64_next_to_128", "2001:db8:1:2::4 is next to the /128",
	  .pkt.dst = "2001:db8:1:2::4", FWD(NH_P6_64) },
	{ "v6_lpm_128", "2001:db8:1:2::3 matches the host route",
	  .pkt.dst = "2001:db8:1:2::3", FWD(NH_P6_128) },
	{ "v6_fwd_from_in1", "forwarding counts on the ingress slot",
	  .in = IF_IN1, .pkt.dst = "2001:db8:1:2::3", FWD(NH_P6_128) },
	{ "v6_fwd_no_payload", "payload_len 0, next header 59",
	  .pkt = { .dst = "2001:db8:1:2::3", .mut = M_NO_NEXT },
	  FWD(NH_P6_128) },
	{ "v6_fwd_dest_options", "a destination options header is not ours",
	  .pkt = { .dst = "2001:db8:1:2::3", .mut = M_DSTOPT },
	  FWD(NH_P6_128) },
	{ "v6_fwd_fragment_header", "routers forward IPv6 fragments",
	  .pkt = { .dst = "2001:db8:1:2::3", .mut = M_FRAG6 }, FWD(NH_P6_128) },

	/* --- trimming: the kernel forwards the datagram, not the frame --- */
	{ "v4_trim_ethernet_padding",
	  "tot_len 28 in a zero-padded 60-byte frame leaves as 42 bytes",
	  .pkt = { .dst = "10.1.2.3", .l3len = 28, .pad_to = 60 },
	  FWD(NH_P32) },
	{ "v4_trim_header_only_padding",
	  "a 20-byte datagram padded to 60 leaves as 34 bytes",
	  .pkt = { .dst = "10.1.2.3", .l3len = 20, .pad_to = 60 },
	  FWD(NH_P32) },
	{ "v4_trim_trailing_bytes",
	  "tot_len 100, 37 bytes of 0xee after it: cut at tot_len",
	  .pkt = { .dst = "10.1.2.3", .l3len = 100, .trail = 37 },
	  FWD(NH_P32) },
	{ "v4_trim_trailing_one_byte", "one byte past tot_len is cut",
	  .pkt = { .dst = "10.1.2.3", .l3len = 100, .trail = 1 },
	  FWD(NH_P32) },
	{ "v4_trim_connected", "trimmed towards a connected neighbor",
	  .pkt = { .dst = "172.21.0.5", .l3len = 28, .pad_to = 60 },
	  FWD(NH_CONN4), .dmac = NEIGH4_MAC },
	{ "v6_trim_ethernet_padding",
	  "a 40-byte datagram (next header 59) padded to 60 leaves as 54",
	  .pkt = { .dst = "2001:db8:1:2::3", .mut = M_NO_NEXT, .pad_to = 60 },
	  FWD(NH_P6_128) },
	{ "v6_trim_trailing_bytes",
	  "payload_len 24, 100 bytes of 0xee after it: cut",
	  .pkt = { .dst = "2001:db8:1:2::3", .trail = 100 }, FWD(NH_P6_128) },
	{ "v6_trim_trailing_one_byte", "one byte past payload_len is cut",
	  .pkt = { .dst = "2001:db8:1:2::3", .trail = 1 }, FWD(NH_P6_128) },
	{ "v6_trim_payload_len_0",
	  "payload_len 0 without hop-by-hop: the kernel keeps the 40-byte "
	  "header alone and forwards it; the UDP after it is cut",
	  .pkt = { .dst = "2001:db8:1:2::3", .plen0 = true }, FWD(NH_P6_128) },
	{ "v6_trim_payload_len_0_padded",
	  "payload_len 0, UDP next header, padded frame: 54 bytes leave",
	  .pkt = { .dst = "2001:db8:1:2::3", .plen0 = true, .l3len = 41,
		   .pad_to = 60 },
	  FWD(NH_P6_128) },
	{ "v6_payload_len_0_hop_by_hop",
	  "payload_len 0 with hop-by-hop (a jumbogram): the kernel's",
	  .pkt = { .dst = "2001:db8:1:2::3", .plen0 = true, .mut = M_HBH },
	  PASS(PASS_OPTIONS) },
	{ "v6_trim_connected", "trimmed towards a connected neighbor",
	  .pkt = { .dst = "fd00:21::5", .trail = 9 }, FWD(NH_CONN6),
	  .dmac = NEIGH6_MAC },

	/* --- the incremental checksum --- */
	{ "v4_csum_sweep",
	  "1000 random headers, checksums near 0x0000/0xffff included: "
	  "the incremental update equals a full recomputation",
	  .run = case_csum_sweep },

	/* --- TTL and hop limit --- */
	{ "v4_ttl_0", "TTL 0 goes to the kernel",
	  .pkt = { .dst = "10.1.2.3", .ttl = TTL_ZERO }, PASS(PASS_TTL) },
	{ "v4_ttl_1", "TTL 1: the kernel sends Time Exceeded",
	  .pkt = { .dst = "10.1.2.3", .ttl = 1 }, PASS(PASS_TTL) },
	{ "v4_ttl_2", "TTL 2 leaves with TTL 1",
	  .pkt = { .dst = "10.1.2.3", .ttl = 2 }, FWD(NH_P32) },
	{ "v4_ttl_255", "TTL 255 leaves with 254",
	  .pkt = { .dst = "10.1.2.3", .ttl = 255 }, FWD(NH_P32) },
	{ "v6_hlim_0", "hop limit 0 goes to the kernel",
	  .pkt = { .dst = "2001:db8:1:2::3", .ttl = TTL_ZERO },
	  PASS(PASS_TTL) },
	{ "v6_hlim_1", "hop limit 1: the kernel sends Time Exceeded",
	  .pkt = { .dst = "2001:db8:1:2::3", .ttl = 1 }, PASS(PASS_TTL) },
	{ "v6_hlim_2", "hop limit 2 leaves with 1",
	  .pkt = { .dst = "2001:db8:1:2::3", .ttl = 2 }, FWD(NH_P6_128) },
	{ "v6_hlim_255", "hop limit 255 leaves with 254",
	  .pkt = { .dst = "2001:db8:1:2::3", .ttl = 255 }, FWD(NH_P6_128) },

	/* --- ECMP --- */
	{ "v4_ecmp_weights_1_3", "4000 flows over weights 1:3",
	  .run = case_ecmp_13_v4 },
	{ "v4_ecmp_weights_1_2_1", "4000 flows over weights 1:2:1",
	  .run = case_ecmp_121_v4 },
	{ "v4_ecmp_equal_4", "4000 flows over 4 equal members",
	  .run = case_ecmp_eq4_v4 },
	{ "v6_ecmp_weights_1_3", "4000 IPv6 flows over weights 1:3",
	  .run = case_ecmp_13_v6 },
	{ "v6_ecmp_equal_4", "4000 IPv6 flows over 4 equal members",
	  .run = case_ecmp_eq4_v6 },
	{ "v4_ecmp_same_flow_same_member",
	  "the same 5-tuple always picks the same member",
	  .run = case_ecmp_sticky_v4 },
	{ "v4_nexthop_rewrite_never_torn",
	  "a nexthop rewritten under traffic (MAC changes, resolved and not): "
	  "every frame leaves by one whole version or goes up",
	  .run = case_nexthop_rewrite },
	{ "v4_group_rewrite_never_torn",
	  "a group rewritten under traffic (1 bucket <-> 64): every frame "
	  "picks a member of one whole version or goes up",
	  .run = case_group_rewrite },
	{ "v6_ecmp_same_flow_same_member",
	  "the same IPv6 5-tuple always picks the same member",
	  .run = case_ecmp_sticky_v6 },
	{ "v4_ecmp_fragments_3tuple",
	  "fragments of one flow (MF or offset) all pick one member",
	  .run = case_ecmp_frag_v4 },
	{ "v6_ecmp_fragments_3tuple",
	  "IPv6 fragments of one flow all pick one member",
	  .run = case_ecmp_frag_v6 },

	/* --- connected routes and neighbors --- */
	{ "v4_connected_neigh", "dst MAC comes from neigh_v4",
	  .pkt.dst = "172.21.0.5", FWD(NH_CONN4), .dmac = NEIGH4_MAC },
	{ "v4_connected_neigh_other_if",
	  "172.21.0.6 is a neighbor of in0, not of the egress",
	  .pkt.dst = "172.21.0.6", PASS(PASS_UNRESOLVED) },
	{ "v4_connected_no_neigh", "no neighbor entry: the kernel does ARP",
	  .pkt.dst = "172.21.0.7", PASS(PASS_UNRESOLVED) },
	{ "v6_connected_neigh", "dst MAC comes from neigh_v6",
	  .pkt.dst = "fd00:21::5", FWD(NH_CONN6), .dmac = NEIGH6_MAC },
	{ "v6_connected_neigh_other_if",
	  "fd00:21::6 is a neighbor of in0, not of the egress",
	  .pkt.dst = "fd00:21::6", PASS(PASS_UNRESOLVED) },
	{ "v6_connected_no_neigh", "no neighbor entry: the kernel does ND",
	  .pkt.dst = "fd00:21::7", PASS(PASS_UNRESOLVED) },

	/* --- nexthop state --- */
	{ "v4_gw_unresolved", "gateway nexthop without RESOLVED",
	  .pkt.dst = "172.22.1.1", PASS(PASS_UNRESOLVED) },
	{ "v4_nh_ifdown", "resolved nexthop whose egress is down",
	  .pkt.dst = "172.23.1.1", PASS(PASS_UNRESOLVED) },
	{ "v4_nh_slot_unused", "route to a nexthop slot never written",
	  .pkt.dst = "172.26.1.1", PASS(PASS_UNRESOLVED) },
	{ "v4_nh_not_valid", "route to a freed slot (RESOLVED, not VALID)",
	  .pkt.dst = "172.28.1.1", PASS(PASS_UNRESOLVED) },
	{ "v4_group_empty", "route to a group with no buckets",
	  .pkt.dst = "172.27.1.1", PASS(PASS_UNRESOLVED) },
	{ "v6_gw_unresolved", "gateway nexthop without RESOLVED",
	  .pkt.dst = "fd00:22::1", PASS(PASS_UNRESOLVED) },
	{ "v6_nh_ifdown", "resolved nexthop whose egress is down",
	  .pkt.dst = "fd00:23::1", PASS(PASS_UNRESOLVED) },

	/* --- route types --- */
	{ "v4_blackhole", "blackhole route drops in XDP",
	  .pkt.dst = "172.16.1.1", DROP(DROP_BLACKHOLE) },
	{ "v4_unreachable", "unreachable: the kernel sends ICMP",
	  .pkt.dst = "172.17.1.1", PASS(PASS_UNREACHABLE) },
	{ "v4_prohibit", "prohibit: the kernel sends ICMP",
	  .pkt.dst = "172.18.1.1", PASS(PASS_UNREACHABLE) },
	{ "v4_kernel_route", "a route kept on the kernel path",
	  .pkt.dst = "172.19.1.1", PASS(PASS_UNREACHABLE) },
	{ "v4_local", "to the router's own address", .pkt.dst = "172.20.0.1",
	  PASS(PASS_LOCAL) },
	{ "v4_no_route", "no default route, no match", .pkt.dst = "11.0.0.1",
	  .setup = no_default_v4, PASS(PASS_NO_ROUTE) },
	{ "v6_blackhole", "blackhole route drops in XDP",
	  .pkt.dst = "fd00:b1::1", DROP(DROP_BLACKHOLE) },
	{ "v6_unreachable", "unreachable: the kernel sends ICMPv6",
	  .pkt.dst = "fd00:b2::1", PASS(PASS_UNREACHABLE) },
	{ "v6_prohibit", "prohibit: the kernel sends ICMPv6",
	  .pkt.dst = "fd00:b3::1", PASS(PASS_UNREACHABLE) },
	{ "v6_local", "to the router's own address", .pkt.dst = "fd00:10::1",
	  PASS(PASS_LOCAL) },
	{ "v6_no_route", "no default route, no match", .pkt.dst = "2001:db9::1",
	  .setup = no_default_v6, PASS(PASS_NO_ROUTE) },

	/* --- options --- */
	{ "v4_options_ihl6", "router alert option, IHL 6",
	  .pkt = { .dst = "10.1.2.3", .mut = M_OPTIONS }, PASS(PASS_OPTIONS) },
	{ "v6_hop_by_hop", "hop-by-hop header",
	  .pkt = { .dst = "2001:db8:1:2::3", .mut = M_HBH },
	  PASS(PASS_OPTIONS) },

	/* --- malformed headers --- */
	{ "v4_bad_csum", "IPv4 header checksum off by one",
	  .pkt = { .dst = "10.1.2.3", .mut = M_BAD_CSUM },
	  PASS(PASS_BAD_CSUM) },
	{ "v4_version_6", "version 6 under the IPv4 ethertype",
	  .pkt = { .dst = "10.1.2.3", .mut = M_VERSION },
	  PASS(PASS_MALFORMED) },
	{ "v6_version_4", "version 4 under the IPv6 ethertype",
	  .pkt = { .dst = "2001:db8:1:2::3", .mut = M_VERSION },
	  PASS(PASS_MALFORMED) },
	{ "v4_ihl_4", "IHL 4", .pkt = { .dst = "10.1.2.3", .mut = M_IHL4 },
	  PASS(PASS_MALFORMED) },
	{ "v4_totlen_past_frame", "tot_len one byte past the frame",
	  .pkt = { .dst = "10.1.2.3", .mut = M_LEN_BIG },
	  PASS(PASS_MALFORMED) },
	{ "v4_totlen_below_header", "tot_len 19",
	  .pkt = { .dst = "10.1.2.3", .mut = M_LEN_SMALL },
	  PASS(PASS_MALFORMED) },
	{ "v6_payload_past_frame", "payload_len one byte past the frame",
	  .pkt = { .dst = "2001:db8:1:2::3", .mut = M_LEN_BIG },
	  PASS(PASS_MALFORMED) },

	/* --- truncated frames --- */
	/*
	 * test_run refuses frames shorter than ETH_HLEN with EINVAL
	 * (bpf_test_init), so the program's own "shorter than Ethernet"
	 * branch cannot be reached from here; 14 bytes is the floor.
	 */
	{ "trunc_13_refused_by_test_run",
	  "a 13-byte frame never reaches the program",
	  .pkt = { .dst = "10.1.2.3", .trunc = 13 }, .err = EINVAL },
	{ "trunc_eth_only_v4", "14 bytes, IPv4 ethertype",
	  .pkt = { .dst = "10.1.2.3", .trunc = 14 }, PASS(PASS_MALFORMED) },
	{ "trunc_eth_only_v6", "14 bytes, IPv6 ethertype",
	  .pkt = { .dst = "2001:db8:1:2::3", .trunc = 14 },
	  PASS(PASS_MALFORMED) },
	{ "trunc_eth_only_arp", "14 bytes, ARP ethertype",
	  .pkt = { .ethertype = ETH_P_ARP, .trunc = 14 }, PASS(PASS_NOT_IP) },
	{ "trunc_v4_1_byte", "one byte of IPv4 header",
	  .pkt = { .dst = "10.1.2.3", .trunc = 15 }, PASS(PASS_MALFORMED) },
	{ "trunc_v4_19_bytes", "19 of 20 IPv4 header bytes",
	  .pkt = { .dst = "10.1.2.3", .trunc = 33 }, PASS(PASS_MALFORMED) },
	{ "trunc_v4_payload", "header complete, payload cut",
	  .pkt = { .dst = "10.1.2.3", .trunc = 38 }, PASS(PASS_MALFORMED) },
	{ "trunc_v6_39_bytes", "39 of 40 IPv6 header bytes",
	  .pkt = { .dst = "2001:db8:1:2::3", .trunc = 53 },
	  PASS(PASS_MALFORMED) },
	{ "trunc_v6_payload", "header complete, payload cut",
	  .pkt = { .dst = "2001:db8:1:2::3", .trunc = 58 },
	  PASS(PASS_MALFORMED) },

	/* --- multicast, broadcast, L2 --- */
	{ "v4_dst_broadcast", "255.255.255.255 to our MAC",
	  .pkt.dst = "255.255.255.255", PASS(PASS_MCAST) },
	{ "v4_dst_mcast_224_0_0_5", "OSPF multicast to our MAC",
	  .pkt.dst = "224.0.0.5", PASS(PASS_MCAST) },
	{ "v4_dst_mcast_239", "239.255.255.255 to our MAC",
	  .pkt.dst = "239.255.255.255", PASS(PASS_MCAST) },
	{ "v4_dst_below_mcast", "223.255.255.255 is unicast",
	  .pkt.dst = "223.255.255.255", FWD(NH_DEF4) },
	{ "v4_dst_class_e", "240.0.0.1 is not multicast",
	  .pkt.dst = "240.0.0.1", FWD(NH_DEF4) },
	{ "v6_dst_mcast_ff02_1", "all-nodes to our MAC", .pkt.dst = "ff02::1",
	  PASS(PASS_MCAST) },
	{ "v6_dst_mcast_ff05_2", "site-local all-routers to our MAC",
	  .pkt.dst = "ff05::2", PASS(PASS_MCAST) },
	{ "v4_l2_broadcast", "unicast IPv4 in an Ethernet broadcast",
	  .pkt = { .dst = "10.1.2.3", .l2dst = "ff:ff:ff:ff:ff:ff" },
	  PASS(PASS_L2_OTHER) },
	{ "v4_l2_multicast", "multicast MAC",
	  .pkt = { .dst = "224.0.0.5", .l2dst = "01:00:5e:00:00:05" },
	  PASS(PASS_L2_OTHER) },
	{ "v4_l2_other_host", "another host's MAC",
	  .pkt = { .dst = "10.1.2.3", .l2dst = "02:00:00:00:00:99" },
	  PASS(PASS_L2_OTHER) },
	{ "v4_l2_other_iface", "in1's MAC arriving on in0",
	  .pkt = { .dst = "10.1.2.3", .l2dst = "02:00:00:00:00:02" },
	  PASS(PASS_L2_OTHER) },
	{ "v6_l2_multicast", "33:33:00:00:00:01",
	  .pkt = { .dst = "ff02::1", .l2dst = "33:33:00:00:00:01" },
	  PASS(PASS_L2_OTHER) },
	{ "v6_l2_other_host", "another host's MAC",
	  .pkt = { .dst = "2001:db8:1:2::3", .l2dst = "02:00:00:00:00:99" },
	  PASS(PASS_L2_OTHER) },
	{ "arp", "ARP is not IP",
	  .pkt = { .ethertype = ETH_P_ARP, .l2dst = "ff:ff:ff:ff:ff:ff" },
	  PASS(PASS_NOT_IP) },
	{ "arp_to_our_mac", "unicast ARP is not IP either",
	  .pkt = { .ethertype = ETH_P_ARP }, PASS(PASS_NOT_IP) },
	{ "vlan", "802.1Q tagged", .pkt = { .ethertype = ETH_P_8021Q },
	  PASS(PASS_NOT_IP) },
	{ "lldp", "LLDP",
	  .pkt = { .ethertype = ETH_P_LLDP, .l2dst = "01:80:c2:00:00:0e" },
	  PASS(PASS_NOT_IP) },

	/* --- martians --- */
	{ "v4_src_0_0_0_0", "source 0.0.0.0",
	  .pkt = { .src = "0.0.0.0", .dst = "10.1.2.3" }, PASS(PASS_MARTIAN) },
	{ "v4_src_0_8", "source in 0/8",
	  .pkt = { .src = "0.1.2.3", .dst = "10.1.2.3" }, PASS(PASS_MARTIAN) },
	{ "v4_src_127", "source 127.0.0.1",
	  .pkt = { .src = "127.0.0.1", .dst = "10.1.2.3" },
	  PASS(PASS_MARTIAN) },
	{ "v4_src_127_edge", "source 127.255.255.254",
	  .pkt = { .src = "127.255.255.254", .dst = "10.1.2.3" },
	  PASS(PASS_MARTIAN) },
	{ "v4_src_224", "multicast source 224.0.0.1",
	  .pkt = { .src = "224.0.0.1", .dst = "10.1.2.3" },
	  PASS(PASS_MARTIAN) },
	{ "v4_src_239", "multicast source 239.255.255.255",
	  .pkt = { .src = "239.255.255.255", .dst = "10.1.2.3" },
	  PASS(PASS_MARTIAN) },
	{ "v4_src_broadcast", "source 255.255.255.255",
	  .pkt = { .src = "255.255.255.255", .dst = "10.1.2.3" },
	  PASS(PASS_MARTIAN) },
	{ "v4_dst_127", "destination 127.0.0.1 (default route covers it)",
	  .pkt.dst = "127.0.0.1", PASS(PASS_MARTIAN) },
	{ "v4_dst_0_0_0_0", "destination 0.0.0.0", .pkt.dst = "0.0.0.0",
	  PASS(PASS_MARTIAN) },
	{ "v4_dst_0_8", "destination 0.1.2.3", .pkt.dst = "0.1.2.3",
	  PASS(PASS_MARTIAN) },
	{ "v4_src_1_0_0_1", "1.0.0.1 is a normal source",
	  .pkt = { .src = "1.0.0.1", .dst = "10.1.2.3" }, FWD(NH_P32) },
	{ "v4_src_126", "126.255.255.255 is a normal source",
	  .pkt = { .src = "126.255.255.255", .dst = "10.1.2.3" }, FWD(NH_P32) },
	{ "v4_src_128", "128.0.0.1 is a normal source",
	  .pkt = { .src = "128.0.0.1", .dst = "10.1.2.3" }, FWD(NH_P32) },
	{ "v4_src_223", "223.255.255.255 is a normal source",
	  .pkt = { .src = "223.255.255.255", .dst = "10.1.2.3" }, FWD(NH_P32) },
	{ "v4_src_class_e", "240.0.0.1: Linux accepts class E sources",
	  .pkt = { .src = "240.0.0.1", .dst = "10.1.2.3" }, FWD(NH_P32) },
	{ "v6_src_loopback", "source ::1",
	  .pkt = { .src = "::1", .dst = "2001:db8:1:2::3" },
	  PASS(PASS_MARTIAN) },
	{ "v6_dst_loopback", "destination ::1 (::/0 covers it)",
	  .pkt.dst = "::1", PASS(PASS_MARTIAN) },
	{ "v6_src_unspecified",
	  "source ::", .pkt = { .src = "::", .dst = "2001:db8:1:2::3" },
	  PASS(PASS_MARTIAN) },
	{ "v6_dst_unspecified",
	  "destination ::", .pkt.dst = "::", PASS(PASS_MARTIAN) },
	{ "v6_src_v4mapped", "source ::ffff:192.0.2.1",
	  .pkt = { .src = "::ffff:192.0.2.1", .dst = "2001:db8:1:2::3" },
	  PASS(PASS_MARTIAN) },
	{ "v6_dst_v4mapped", "destination ::ffff:192.0.2.1",
	  .pkt.dst = "::ffff:192.0.2.1", PASS(PASS_MARTIAN) },
	{ "v6_src_mcast", "multicast source ff02::1",
	  .pkt = { .src = "ff02::1", .dst = "2001:db8:1:2::3" },
	  PASS(PASS_MARTIAN) },
	{ "v6_src_mcast_global", "multicast source ff0e::1",
	  .pkt = { .src = "ff0e::1", .dst = "2001:db8:1:2::3" },
	  PASS(PASS_MARTIAN) },

	/* --- link-local --- */
	{ "v4_src_linklocal", "source 169.254.1.1",
	  .pkt = { .src = "169.254.1.1", .dst = "10.1.2.3" },
	  PASS(PASS_LINKLOCAL) },
	{ "v4_dst_linklocal", "destination 169.254.1.1",
	  .pkt.dst = "169.254.1.1", PASS(PASS_LINKLOCAL) },
	{ "v4_dst_169_253", "169.253.255.255 is not link-local",
	  .pkt.dst = "169.253.255.255", FWD(NH_DEF4) },
	{ "v4_dst_169_255", "169.255.0.0 is not link-local",
	  .pkt.dst = "169.255.0.0", FWD(NH_DEF4) },
	{ "v6_src_linklocal", "source fe80::1",
	  .pkt = { .src = "fe80::1", .dst = "2001:db8:1:2::3" },
	  PASS(PASS_LINKLOCAL) },
	{ "v6_dst_linklocal", "destination fe80::1", .pkt.dst = "fe80::1",
	  PASS(PASS_LINKLOCAL) },
	{ "v6_src_linklocal_top", "source febf::1 is still fe80::/10",
	  .pkt = { .src = "febf::1", .dst = "2001:db8:1:2::3" },
	  PASS(PASS_LINKLOCAL) },
	{ "v6_dst_linklocal_top", "destination febf:ffff::1",
	  .pkt.dst = "febf:ffff::1", PASS(PASS_LINKLOCAL) },
	{ "v6_dst_fec0", "fec0::1 is past fe80::/10", .pkt.dst = "fec0::1",
	  FWD(NH_DEF6) },
	{ "v6_dst_fe7f", "fe7f::1 is below fe80::/10", .pkt.dst = "fe7f::1",
	  FWD(NH_DEF6) },

	/* --- MTU --- */
	{ "v4_mtu_over", "1001 bytes over MTU 1000",
	  .pkt = { .dst = "172.25.1.1", .l3len = 1001 }, PASS(PASS_MTU) },
	{ "v4_mtu_equal", "1000 bytes on MTU 1000 (frame 1014)",
	  .pkt = { .dst = "172.25.1.1", .l3len = 1000 }, FWD(NH_MTU4) },
	{ "v6_mtu_over", "1281 bytes over MTU 1280",
	  .pkt = { .dst = "fd00:25::1", .l3len = 1281 }, PASS(PASS_MTU) },
	{ "v6_mtu_equal", "1280 bytes on MTU 1280 (frame 1294)",
	  .pkt = { .dst = "fd00:25::1", .l3len = 1280 }, FWD(NH_MTU6) },
	{ "v4_mtu_trailing_bytes_not_counted",
	  "1000 bytes on MTU 1000, 200 trailing bytes: the datagram fits",
	  .pkt = { .dst = "172.25.1.1", .l3len = 1000, .trail = 200 },
	  FWD(NH_MTU4) },
	{ "v6_mtu_padding_not_counted",
	  "1280 bytes on MTU 1280, 30 trailing bytes: the datagram fits",
	  .pkt = { .dst = "fd00:25::1", .l3len = 1280, .trail = 30 },
	  FWD(NH_MTU6) },
	{ "v4_mtu_device_now_smaller",
	  "copy 1500, device 1280 now: 1281 bytes go to the kernel",
	  .pkt = { .dst = "172.29.1.1", .l3len = 1281 }, PASS(PASS_MTU) },
	{ "v4_mtu_device_now_smaller_df",
	  "the same with DF: the kernel answers frag-needed",
	  .pkt = { .dst = "172.29.1.1", .l3len = 1281, .frag = 0x4000 },
	  PASS(PASS_MTU) },
	{ "v4_mtu_device_equal", "copy 1500, device 1280: 1280 bytes leave",
	  .pkt = { .dst = "172.29.1.1", .l3len = 1280 }, FWD(NH_LIVE4) },
	{ "v4_mtu_device_trailing_not_counted",
	  "device 1280: 1280 bytes and 20 trailing ones still leave",
	  .pkt = { .dst = "172.29.1.1", .l3len = 1280, .trail = 20 },
	  FWD(NH_LIVE4) },
	{ "v6_mtu_device_now_smaller",
	  "copy 1500, device 1280 now: 1281 bytes go to the kernel",
	  .pkt = { .dst = "fd00:29::1", .l3len = 1281 }, PASS(PASS_MTU) },
	{ "v6_mtu_device_equal", "copy 1500, device 1280: 1280 bytes leave",
	  .pkt = { .dst = "fd00:29::1", .l3len = 1280 }, FWD(NH_LIVE6) },
	{ "v6_mtu_device_trailing_not_counted",
	  "device 1280: 1280 bytes and 20 trailing ones still leave",
	  .pkt = { .dst = "fd00:29::1", .l3len = 1280, .trail = 20 },
	  FWD(NH_LIVE6) },

	/* --- jumbo frames: multi-buffer (xdp.frags), past one page --- */
	{ "v4_jumbo_fwd", "9000 bytes on MTU 9000, most of them in fragments "
	  "(TTL, checksum, MACs; bytes counted whole)",
	  .pkt = { .dst = "172.30.1.1", .l3len = 9000 }, FWD(NH_JUMBO4) },
	{ "v6_jumbo_fwd", "9000 bytes on MTU 9000, most of them in fragments",
	  .pkt = { .dst = "fd00:30::1", .l3len = 9000 }, FWD(NH_JUMBO6) },
	{ "v4_jumbo_trim_to_linear", "100 bytes and 8000 trailing ones: the "
	  "trim leaves one buffer, which any egress sends",
	  .pkt = { .dst = "172.31.1.1", .l3len = 100, .trail = 8000 },
	  FWD(NH_NOSG4) },
	{ "v4_jumbo_mtu_1500_df", "9000 bytes with DF on MTU 1500: the kernel "
	  "sends frag-needed",
	  .pkt = { .dst = "10.1.2.3", .l3len = 9000, .frag = 0x4000 },
	  PASS(PASS_MTU) },
	{ "v6_jumbo_mtu_1500", "9000 bytes on MTU 1500: Packet Too Big",
	  .pkt = { .dst = "2001:db8:1:2::3", .l3len = 9000 }, PASS(PASS_MTU) },
	{ "v4_jumbo_mtu_device_now_smaller", "copy 9000, device 1500: "
	  "bpf_check_mtu measures the datagram, not the linear part",
	  .pkt = { .dst = "100.65.1.1", .l3len = 9000 }, PASS(PASS_MTU) },
	{ "v4_jumbo_no_xmit_sg", "the egress cannot send multi-buffer frames "
	  "(no XMIT_SG): the kernel sends it",
	  .pkt = { .dst = "172.31.1.1", .l3len = 9000 }, PASS(PASS_EGRESS) },
	{ "v6_jumbo_no_xmit_sg", "the same in IPv6",
	  .pkt = { .dst = "fd00:31::1", .l3len = 9000 }, PASS(PASS_EGRESS) },
	{ "v4_jumbo_ttl_1", "TTL 1: counted with the whole frame's bytes",
	  .pkt = { .dst = "172.30.1.1", .l3len = 9000, .ttl = 1 },
	  PASS(PASS_TTL) },
	{ "v4_jumbo_len_past_frame", "tot_len one past the fragments' end",
	  .pkt = { .dst = "172.30.1.1", .l3len = 9000, .mut = M_LEN_BIG },
	  PASS(PASS_MALFORMED) },

	/* --- egress not managed --- */
	{ "v4_egress_not_in_tx_ports", "egress not in tx_ports",
	  .pkt.dst = "172.24.1.1", PASS(PASS_EGRESS) },
	{ "v6_egress_not_in_tx_ports", "egress not in tx_ports",
	  .pkt.dst = "fd00:24::1", PASS(PASS_EGRESS) },

	/* --- rp_filter --- */
	{ "v4_rpf_loose_no_route", "loose: source has no route",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_LOOSE), .setup = no_default_v4,
	  .pkt = { .src = "100.99.0.1", .dst = "10.1.2.3" }, PASS(PASS_RPF) },
	{ "v4_rpf_loose_default_route", "loose: the default route counts",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_LOOSE),
	  .pkt = { .src = "100.99.0.1", .dst = "10.1.2.3" }, FWD(NH_P32) },
	{ "v4_rpf_loose_other_if", "loose: source via in1 is fine on in0",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_LOOSE), .setup = no_default_v4,
	  .pkt = { .src = "100.64.1.1", .dst = "10.1.2.3" }, FWD(NH_P32) },
	{ "v4_rpf_loose_src_blackhole", "loose: a blackhole is no route back",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_LOOSE),
	  .pkt = { .src = "100.64.4.1", .dst = "10.1.2.3" }, PASS(PASS_RPF) },
	{ "v4_rpf_loose_src_local", "loose: our own address as source",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_LOOSE),
	  .pkt = { .src = "172.20.0.1", .dst = "10.1.2.3" },
	  PASS(PASS_MARTIAN) },
	{ "v4_rpf_strict_other_if", "strict: source's route leaves by in1",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_STRICT),
	  .pkt = { .src = "100.64.1.1", .dst = "10.1.2.3" }, PASS(PASS_RPF) },
	{ "v4_rpf_strict_ingress", "strict: source's route leaves by in0",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_STRICT),
	  .pkt = { .src = "100.64.0.1", .dst = "10.1.2.3" }, FWD(NH_P32) },
	{ "v4_rpf_strict_ingress_in1", "strict: via in1, received on in1",
	  .in = IF_IN1, FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_STRICT),
	  .pkt = { .src = "100.64.1.1", .dst = "10.1.2.3" }, FWD(NH_P32) },
	{ "v4_rpf_strict_group_member",
	  "strict: a group member leaves by the ingress",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_STRICT),
	  .pkt = { .src = "100.64.2.1", .dst = "10.1.2.3" }, FWD(NH_P32) },
	{ "v4_rpf_strict_group_no_member",
	  "strict: no group member leaves by the ingress",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_STRICT),
	  .pkt = { .src = "100.64.3.1", .dst = "10.1.2.3" }, PASS(PASS_RPF) },
	{ "v4_rpf_strict_default_other_if",
	  "strict: the default route leaves elsewhere",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_STRICT),
	  .pkt = { .src = "100.99.0.1", .dst = "10.1.2.3" }, PASS(PASS_RPF) },
	{ "v4_src_local_martian", "our own address as source, rp_filter off",
	  .pkt = { .src = "172.20.0.1", .dst = "10.1.2.3" }, PASS(PASS_MARTIAN) },
	{ "v4_rpf_off_no_route", "no rp_filter: the source is not looked up",
	  .setup = no_default_v4,
	  .pkt = { .src = "100.99.0.1", .dst = "10.1.2.3" }, FWD(NH_P32) },
	/*
	 * Hairpins (egress = ingress): the kernel forwards and may send an
	 * ICMP redirect. IPv4 only while send_redirects is on (all or the
	 * interface: FPMD_IF_F_REDIRECTS_V4), IPv6 always.
	 */
	{ "v4_hairpin_send_redirects", "egress = ingress, send_redirects on",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_REDIRECTS_V4),
	  .pkt = { .dst = "100.64.0.1" }, PASS(PASS_REDIRECT) },
	{ "v4_hairpin_no_send_redirects", "egress = ingress, send_redirects off",
	  .pkt = { .dst = "100.64.0.1" }, FWD(NH_IN0) },
	{ "v4_hairpin_in1_send_redirects", "via in0, received on in1",
	  .in = IF_IN1, FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_REDIRECTS_V4),
	  .pkt = { .dst = "100.64.0.1" }, FWD(NH_IN0) },
	{ "v4_send_redirects_not_hairpin", "send_redirects on, other egress",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_REDIRECTS_V4),
	  .pkt = { .dst = "10.1.2.3" }, FWD(NH_P32) },
	{ "v6_hairpin", "egress = ingress: IPv6 redirects without a sysctl",
	  .pkt = { .dst = "fd00:64::1" }, PASS(PASS_REDIRECT) },
	{ "v6_hairpin_in1", "via in0, received on in1",
	  .in = IF_IN1, .pkt = { .dst = "fd00:64::1" }, FWD(NH_IN0) },
	/* Linux has no rp_filter for IPv6: the flags must not apply to it. */
	{ "v6_rpf_loose_not_applied", "loose flag: IPv6 source not checked",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_LOOSE), .setup = no_default_v6,
	  .pkt = { .src = "fd00:99::1", .dst = "2001:db8:1:2::3" },
	  FWD(NH_P6_128) },
	{ "v6_rpf_loose_other_if", "loose: source via in1 is fine on in0",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_LOOSE), .setup = no_default_v6,
	  .pkt = { .src = "fd00:64:1::1", .dst = "2001:db8:1:2::3" },
	  FWD(NH_P6_128) },
	{ "v6_rpf_strict_not_applied", "strict flag: IPv6 source not checked",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_STRICT),
	  .pkt = { .src = "fd00:64:1::1", .dst = "2001:db8:1:2::3" },
	  FWD(NH_P6_128) },
	{ "v6_rpf_strict_ingress", "strict: source's route leaves by in0",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_RPF_STRICT),
	  .pkt = { .src = "fd00:64::1", .dst = "2001:db8:1:2::3" },
	  FWD(NH_P6_128) },

	/* --- interface flags --- */
	{ "v4_if_not_enabled", "interface without ENABLED", FLAGS(F4 | F6),
	  .pkt.dst = "10.1.2.3", PASS(PASS_DISABLED) },
	{ "v6_if_not_enabled", "interface without ENABLED", FLAGS(F4 | F6),
	  .pkt.dst = "2001:db8:1:2::3", PASS(PASS_DISABLED) },
	{ "arp_if_not_enabled", "nothing is looked at on a disabled iface",
	  FLAGS(F4 | F6), .pkt.ethertype = ETH_P_ARP, PASS(PASS_DISABLED) },
	{ "v4_if_no_fwd_v4", "IPv4 forwarding off", FLAGS(EN | F6),
	  .pkt.dst = "10.1.2.3", PASS(PASS_DISABLED) },
	{ "v6_if_no_fwd_v4", "IPv4 forwarding off does not stop IPv6",
	  FLAGS(EN | F6), .pkt.dst = "2001:db8:1:2::3", FWD(NH_P6_128) },
	{ "v6_if_no_fwd_v6", "IPv6 forwarding off", FLAGS(EN | F4),
	  .pkt.dst = "2001:db8:1:2::3", PASS(PASS_DISABLED) },
	{ "v4_if_no_fwd_v6", "IPv6 forwarding off does not stop IPv4",
	  FLAGS(EN | F4), .pkt.dst = "10.1.2.3", FWD(NH_P32) },
	{ "v4_if_kernel_v4", "IPv4 policy routing on this interface",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_KERNEL_V4), .pkt.dst = "10.1.2.3",
	  PASS(PASS_POLICY) },
	{ "v6_if_kernel_v4", "IPv4 policy does not stop IPv6",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_KERNEL_V4),
	  .pkt.dst = "2001:db8:1:2::3", FWD(NH_P6_128) },
	{ "v6_if_kernel_v6", "IPv6 policy routing on this interface",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_KERNEL_V6),
	  .pkt.dst = "2001:db8:1:2::3", PASS(PASS_POLICY) },
	{ "v4_if_kernel_v6", "IPv6 policy does not stop IPv4",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_KERNEL_V6), .pkt.dst = "10.1.2.3",
	  FWD(NH_P32) },
	/*
	 * --- container paths: XDP's handoff to fpmd_tc, and fpmd_tc ---
	 * 172.24/16 and fd00:24::/32 leave by an egress not in tx_ports;
	 * peer_notx makes it a container's veth (FPMD_IF_F_PEER).
	 */
	{ "v4_xdp_handoff_peer",
	  "egress PEER, tc on the ingress: passed untouched with the marker, "
	  "counted by tc, not here",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_TC), .setup = peer_notx,
	  .pkt.dst = "172.24.1.1", .verdict = XDP_PASS, .reason = R_NONE,
	  .handoff = true },
	{ "v6_xdp_handoff_peer", "the same for IPv6",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_TC), .setup = peer_notx,
	  .pkt.dst = "fd00:24::1", .verdict = XDP_PASS, .reason = R_NONE,
	  .handoff = true },
	{ "v4_xdp_handoff_padded",
	  "a padded frame goes to tc as it came (tc trims)",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_TC), .setup = peer_notx,
	  .pkt = { .dst = "172.24.1.1", .l3len = 28, .pad_to = 60 },
	  .verdict = XDP_PASS, .reason = R_NONE, .handoff = true },
	{ "v4_xdp_peer_no_tc", "egress PEER, no tc program on the ingress",
	  .setup = peer_notx, .pkt.dst = "172.24.1.1", PASS(PASS_EGRESS) },
	{ "v6_xdp_peer_no_tc", "egress PEER, no tc program on the ingress",
	  .setup = peer_notx, .pkt.dst = "fd00:24::1", PASS(PASS_EGRESS) },
	{ "v4_xdp_tc_not_peer", "tc on the ingress, egress not a PEER",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_TC), .pkt.dst = "172.24.1.1",
	  PASS(PASS_EGRESS) },
	{ "v4_xdp_tc_normal_egress", "tc on the ingress: tx ports still XDP",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_TC), .pkt.dst = "10.1.2.3",
	  FWD(NH_P32) },
	{ "v4_xdp_handoff_ttl", "TTL 1 to a PEER: XDP's pass, counted there",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_TC), .setup = peer_notx,
	  .pkt = { .dst = "172.24.1.1", .ttl = 1 }, PASS(PASS_TTL) },

	{ "v4_tc_forward", "TC_ONLY ingress to a tx port: bpf_redirect",
	  TC_ONLY, .pkt.dst = "10.1.2.3", TC_FWD(NH_P32) },
	{ "v4_tc_forward_tcp", "TCP, as a container sends it",
	  TC_ONLY, .pkt = { .dst = "10.1.2.3", .proto = IPPROTO_TCP,
			    .l3len = 60 },
	  TC_FWD(NH_P32) },
	{ "v4_tc_forward_connected", "to a connected neighbor",
	  TC_ONLY, .pkt.dst = "172.21.0.5", TC_FWD(NH_CONN4),
	  .dmac = NEIGH4_MAC },
	{ "v4_tc_trim_padding", "tot_len 28 padded to 60: 42 bytes leave",
	  TC_ONLY, .pkt = { .dst = "10.1.2.3", .l3len = 28, .pad_to = 60 },
	  TC_FWD(NH_P32) },
	{ "v4_tc_trim_trailing", "37 bytes past tot_len are cut",
	  TC_ONLY, .pkt = { .dst = "10.1.2.3", .l3len = 100, .trail = 37 },
	  TC_FWD(NH_P32) },
	{ "v4_tc_peer", "TC_ONLY ingress to a PEER: bpf_redirect_peer",
	  TC_ONLY, .setup = peer_notx, .pkt.dst = "172.24.1.1",
	  TC_PEER(NH_NOTX) },
	{ "v4_tc_peer_padded", "to a PEER, padding cut",
	  TC_ONLY, .setup = peer_notx,
	  .pkt = { .dst = "172.24.1.1", .l3len = 28, .pad_to = 60 },
	  TC_PEER(NH_NOTX) },
	{ "v4_tc_not_tx_port", "TC_ONLY, egress neither tx port nor PEER",
	  TC_ONLY, .pkt.dst = "172.24.1.1", TC_PASS(PASS_EGRESS) },
	{ "v4_tc_no_marker", "no marker, not TC_ONLY: XDP counted it",
	  .pkt.dst = "10.1.2.3", .tc = true, .verdict = TC_ACT_OK,
	  .reason = R_NONE },
	{ "v4_tc_no_marker_tc", "no marker behind XDP (FPMD_IF_F_TC)",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_TC), .setup = peer_notx,
	  .pkt.dst = "172.24.1.1", .tc = true, .verdict = TC_ACT_OK,
	  .reason = R_NONE },
	{ "v4_tc_unmanaged", "ingress not in ifaces: no counter",
	  .in = IF_STRAY, .pkt.dst = "10.1.2.3", .tc = true,
	  .verdict = TC_ACT_OK, .reason = R_NONE },
	{ "v4_tc_ttl", "TTL 1", TC_ONLY,
	  .pkt = { .dst = "10.1.2.3", .ttl = 1 }, TC_PASS(PASS_TTL) },
	{ "v4_tc_options", "IPv4 options", TC_ONLY,
	  .pkt = { .dst = "10.1.2.3", .mut = M_OPTIONS },
	  TC_PASS(PASS_OPTIONS) },
	{ "v4_tc_bad_csum", "IPv4 header checksum wrong", TC_ONLY,
	  .pkt = { .dst = "10.1.2.3", .mut = M_BAD_CSUM },
	  TC_PASS(PASS_BAD_CSUM) },
	{ "v4_tc_len_big", "tot_len past the frame", TC_ONLY,
	  .pkt = { .dst = "10.1.2.3", .mut = M_LEN_BIG },
	  TC_PASS(PASS_MALFORMED) },
	{ "v4_tc_local", "to a local address", TC_ONLY,
	  .pkt.dst = "172.20.0.1", TC_PASS(PASS_LOCAL) },
	{ "v4_tc_no_route", "no route", TC_ONLY, .setup = no_default_v4,
	  .pkt.dst = "11.0.0.1", TC_PASS(PASS_NO_ROUTE) },
	{ "v4_tc_l2_other", "not to the interface's MAC", TC_ONLY,
	  .pkt = { .dst = "10.1.2.3", .l2dst = "02:99:00:00:00:01" },
	  TC_PASS(PASS_L2_OTHER) },
	{ "v4_tc_arp", "ARP", TC_ONLY, .pkt.ethertype = ETH_P_ARP,
	  TC_PASS(PASS_NOT_IP) },
	{ "v4_tc_blackhole", "blackhole: dropped as XDP drops it", TC_ONLY,
	  .pkt.dst = "172.16.1.1", TC_DROP(DROP_BLACKHOLE) },
	{ "v4_tc_mtu_over", "1001 bytes over MTU 1000", TC_ONLY,
	  .pkt = { .dst = "172.25.1.1", .l3len = 1001 }, TC_PASS(PASS_MTU) },
	{ "v4_tc_mtu_equal", "1000 bytes on MTU 1000", TC_ONLY,
	  .pkt = { .dst = "172.25.1.1", .l3len = 1000 }, TC_FWD(NH_MTU4) },
	{ "v4_tc_mtu_device_now_smaller", "device 1280: 1281 bytes pass",
	  TC_ONLY, .pkt = { .dst = "172.29.1.1", .l3len = 1281 },
	  TC_PASS(PASS_MTU) },
	{ "v4_tc_mtu_peer_over", "over the MTU towards a PEER", TC_ONLY,
	  .setup = peer_notx, .pkt = { .dst = "172.24.1.1", .l3len = 1501 },
	  TC_PASS(PASS_MTU) },
	/*
	 * GSO skbs (a container's TSO): the kernel measures the segments,
	 * not the whole (skb_gso_validate_network_len). A test run's skb
	 * has no transport header, so bpf_check_mtu(BPF_MTU_CHK_SEGS) cannot
	 * measure them and the kernel decides; the non-GSO check would have
	 * let this one through (the helper waves GSO skbs through without
	 * BPF_MTU_CHK_SEGS).
	 */
	{ "v4_tc_gso_over_device_mtu",
	  "GSO skb of 1400 bytes, device 1280 (copy 1500): segments unmeasured, "
	  "to the kernel",
	  TC_ONLY, .pkt = { .dst = "172.29.1.1", .l3len = 1400 },
	  .gso_size = 1000, .gso_segs = 2, TC_PASS(PASS_MTU) },
	{ "v4_tc_gso_fits", "a GSO skb within the MTU as a whole leaves",
	  TC_ONLY, .pkt = { .dst = "10.1.2.3", .l3len = 1000 },
	  .gso_size = 500, .gso_segs = 2, TC_FWD(NH_P32) },
	{ "v6_tc_gso_over_device_mtu", "the same for IPv6", TC_ONLY,
	  .pkt = { .dst = "fd00:29::1", .l3len = 1400 }, .gso_size = 1000,
	  .gso_segs = 2, TC_PASS(PASS_MTU) },
	{ "v4_tc_no_gso_device_mtu", "without GSO 1280 bytes fit the device",
	  TC_ONLY, .pkt = { .dst = "172.29.1.1", .l3len = 1280 },
	  TC_FWD(NH_LIVE4) },
	{ "v4_tc_hairpin", "egress = ingress, send_redirects on",
	  FLAGS(IN_FLAGS_DEFAULT | FPMD_IF_F_TC_ONLY | FPMD_IF_F_REDIRECTS_V4),
	  .pkt = { .dst = "100.64.0.1" }, TC_PASS(PASS_REDIRECT) },
	{ "v4_tc_disabled", "TC_ONLY but not enabled",
	  FLAGS(FPMD_IF_F_TC_ONLY | F4 | F6), .pkt.dst = "10.1.2.3",
	  TC_PASS(PASS_DISABLED) },
	{ "v6_tc_forward", "IPv6 from a TC_ONLY ingress: bpf_redirect",
	  TC_ONLY, .pkt.dst = "2001:db8:1:2::3", TC_FWD(NH_P6_128) },
	{ "v6_tc_trim_trailing", "IPv6, bytes past payload_len cut", TC_ONLY,
	  .pkt = { .dst = "2001:db8:1:2::3", .trail = 100 },
	  TC_FWD(NH_P6_128) },
	{ "v6_tc_peer", "IPv6 to a PEER: bpf_redirect_peer", TC_ONLY,
	  .setup = peer_notx, .pkt.dst = "fd00:24::1", TC_PEER(NH_NOTX) },
	{ "v6_tc_hop_limit", "hop limit 1", TC_ONLY,
	  .pkt = { .dst = "2001:db8:1:2::3", .ttl = 1 }, TC_PASS(PASS_TTL) },
	{ "v6_tc_hop_by_hop", "hop-by-hop options", TC_ONLY,
	  .pkt = { .dst = "2001:db8:1:2::3", .mut = M_HBH },
	  TC_PASS(PASS_OPTIONS) },
	{ "v6_tc_no_route", "no route", TC_ONLY, .setup = no_default_v6,
	  .pkt.dst = "2001:db9::1", TC_PASS(PASS_NO_ROUTE) },
	{ "v6_tc_blackhole", "blackhole", TC_ONLY, .pkt.dst = "fd00:b1::1",
	  TC_DROP(DROP_BLACKHOLE) },
	{ "v6_tc_mtu_over", "1281 bytes over MTU 1280", TC_ONLY,
	  .pkt = { .dst = "fd00:25::1", .l3len = 1281 }, TC_PASS(PASS_MTU) },
	{ "v6_tc_hairpin", "IPv6 egress = ingress", TC_ONLY,
	  .pkt = { .dst = "fd00:64::1" }, TC_PASS(PASS_REDIRECT) },
	{ "v6_tc_no_marker", "no marker, not TC_ONLY: XDP counted it",
	  .pkt.dst = "2001:db8:1:2::3", .tc = true, .verdict = TC_ACT_OK,
	  .reason = R_NONE },

	{ "v4_if_unmanaged", "ingress not in ifaces: pass, no counter",
	  .in = IF_STRAY, .pkt.dst = "10.1.2.3", .verdict = XDP_PASS,
	  .reason = R_NONE },
	{ "v6_if_unmanaged", "ingress not in ifaces: pass, no counter",
	  .in = IF_STRAY, .pkt.dst = "2001:db8:1:2::3", .verdict = XDP_PASS,
	  .reason = R_NONE },
};

/* ------------------------------------------------------------------------
 * The generic check: one frame, one verdict.
 * ------------------------------------------------------------------------
 */

/* bytes: received (rx reasons); tx_bytes: sent (TX, after the trim). */
static void expect_counters(int in_if, int reason, int out_if, __u64 n,
			    __u64 bytes, __u64 tx_bytes)
{
	read_stats();
	for (__u32 k = 0; k < FPMD_MAX_STATS; k++) {
		__u32 slot = k / FPMD_R_MAX, r = k % FPMD_R_MAX;
		__u64 want = 0, want_bytes = 0;

		if (reason != R_NONE && slot == if_slot(in_if) &&
		    (int)r == reason) {
			want = n;
			want_bytes = bytes;
		}
		if (out_if >= 0 && slot == if_slot(out_if) && r == FPMD_R_TX) {
			want = n;
			want_bytes = tx_bytes;
		}
		if (stats_sum[k].packets != want ||
		    stats_sum[k].bytes != want_bytes)
			failf("counter %s %s: expected %llu packets %llu "
			      "bytes, got %llu packets %llu bytes",
			      slot_name(slot), rname(r),
			      (unsigned long long)want,
			      (unsigned long long)want_bytes,
			      (unsigned long long)stats_sum[k].packets,
			      (unsigned long long)stats_sum[k].bytes);
	}
}

/*
 * The length of the frame the kernel forwards: Ethernet header plus the
 * datagram as its header states it; padding and trailing bytes are cut
 * (ip_rcv_core, ip6_rcv_core trim before routing).
 */
static __u32 trimmed_len(const struct frame *f)
{
	const void *l3 = f->b + ETH_HLEN;

	if (((const struct ethhdr *)f->b)->h_proto == htons(ETH_P_IP))
		return ETH_HLEN + ntohs(((const struct iphdr *)l3)->tot_len);
	return ETH_HLEN + sizeof(struct ipv6hdr) +
	       ntohs(((const struct ipv6hdr *)l3)->payload_len);
}

/* The frame the program must send: trimmed, MACs rewritten, TTL - 1. */
static void expected_output(const struct frame *in, const __u8 *dmac,
			    const __u8 *smac, struct frame *exp)
{
	/* memcpy, not assignment: the header fields below are read through
	 * casts of exp->b, which an aggregate copy does not alias under
	 * -O2's type-based alias analysis. */
	memcpy(exp, in, sizeof(*exp));
	exp->len = trimmed_len(in);
	memcpy(exp->b, dmac, ETH_ALEN);
	memcpy(exp->b + ETH_ALEN, smac, ETH_ALEN);
	if (((struct ethhdr *)exp->b)->h_proto == htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(exp->b + ETH_HLEN);

		ip->ttl--;
		ip->check = ipv4_csum(ip);
	} else {
		struct ipv6hdr *ip6 = (void *)(exp->b + ETH_HLEN);

		ip6->hop_limit--;
	}
}

/* Compare a forwarded frame with what it should be; name what differs. */
static void check_forwarded(const struct frame *in, const struct frame *out,
			    int want_nh, const char *want_dmac)
{
	__u8 dmac[ETH_ALEN], smac[ETH_ALEN];
	char e[24], a[24];
	struct frame exp;
	int got_nh;

	if (want_dmac)
		parse_mac(want_dmac, dmac);
	else
		nh_dmac(want_nh, dmac);
	nh_smac(want_nh, smac);
	expected_output(in, dmac, smac, &exp);

	if (out->len != exp.len) {
		failf("frame length: expected %u, got %u", exp.len, out->len);
		return;
	}
	got_nh = nh_by_smac(out);
	if (got_nh != want_nh)
		failf("nexthop (by source MAC): expected %s, got %s",
		      nh_name(want_nh), nh_name(got_nh));
	if (if_index[nh_dev(want_nh)] !=
	    (got_nh ? if_index[nh_dev(got_nh)] : 0))
		failf("egress ifindex: expected %d, got %d",
		      if_index[nh_dev(want_nh)],
		      got_nh ? if_index[nh_dev(got_nh)] : 0);
	if (memcmp(out->b, dmac, ETH_ALEN)) {
		fmt_mac(dmac, e);
		fmt_mac(out->b, a);
		failf("dst MAC: expected %s, got %s", e, a);
	}
	if (memcmp(out->b + ETH_ALEN, smac, ETH_ALEN)) {
		fmt_mac(smac, e);
		fmt_mac(out->b + ETH_ALEN, a);
		failf("src MAC: expected %s, got %s", e, a);
	}
	if (((struct ethhdr *)in->b)->h_proto == htons(ETH_P_IP)) {
		const struct iphdr *xi = (void *)(exp.b + ETH_HLEN);
		const struct iphdr *oi = (void *)(out->b + ETH_HLEN);

		if (oi->ttl != xi->ttl)
			failf("TTL: expected %u, got %u", xi->ttl, oi->ttl);
		if (oi->check != xi->check)
			failf("IPv4 checksum: expected 0x%04x (full "
			      "recomputation), got 0x%04x",
			      ntohs(xi->check), ntohs(oi->check));
		if (!ipv4_csum_ok(oi))
			failf("IPv4 checksum 0x%04x does not verify",
			      ntohs(oi->check));
	} else {
		const struct ipv6hdr *xi = (void *)(exp.b + ETH_HLEN);
		const struct ipv6hdr *oi = (void *)(out->b + ETH_HLEN);

		if (oi->hop_limit != xi->hop_limit)
			failf("hop limit: expected %u, got %u", xi->hop_limit,
			      oi->hop_limit);
	}
	for (__u32 i = 0; i < exp.len; i++) {
		if (out->b[i] != exp.b[i]) {
			failf("frame byte %u: expected 0x%02x, got 0x%02x "
			      "(first difference)",
			      i, exp.b[i], out->b[i]);
			break;
		}
	}
}

static void run_generic(const struct xcase *c)
{
	struct frame in, out;
	__u32 retval = 0;
	int err;

	int fwd = c->tc ? TC_ACT_REDIRECT : XDP_REDIRECT;
	__u32 handoff;

	build_frame(&c->pkt, c->in, &in);
	if (c->tc)
		err = run_frame_tc(c->in, &in, &out, c->gso_size, c->gso_segs,
				   &retval);
	else
		err = run_frame(c->in, &in, &out, &retval);
	if (c->err) {
		if (err != -c->err)
			failf("test_run: expected error %s, got %s",
			      strerror(c->err),
			      err ? strerror(-err) : "success");
		return;
	}
	if (err) {
		failf("test_run failed: %s", strerror(-err));
		return;
	}
	if ((int)retval != c->verdict)
		failf("verdict: expected %s, got %s (%u)",
		      vname(c->tc, c->verdict), vname(c->tc, retval), retval);
	if (c->verdict == fwd && (int)retval == fwd)
		check_forwarded(&in, &out, c->nh, c->dmac);
	else if (c->verdict != fwd &&
		 (out.len != in.len || memcmp(out.b, in.b, in.len)))
		failf("frame modified although not forwarded");
	memcpy(&handoff, out.meta, sizeof(handoff));
	if (c->handoff && (out.meta_len != sizeof(handoff) ||
			   handoff != FPMD_META_HANDOFF))
		failf("metadata: expected the handoff marker 0x%08x (4 "
		      "bytes), got %u bytes (0x%08x)",
		      FPMD_META_HANDOFF, out.meta_len,
		      out.meta_len >= 4 ? handoff : 0);
	else if (!c->handoff && out.meta_len)
		failf("metadata: %u bytes written, expected none",
		      out.meta_len);
	/* A GSO skb counts as its segments. */
	expect_counters(c->in, c->reason, c->verdict == fwd ? nh_dev(c->nh) : -1,
			c->gso_segs ? c->gso_segs : 1, in.len,
			trimmed_len(&in));
}

/* ------------------------------------------------------------------------
 * Looping cases.
 * ------------------------------------------------------------------------
 */

static __u64 rng_state = 0x9e3779b97f4a7c15ull;

static __u32 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state >> 32;
}

/*
 * Random forwardable IPv4 headers through the default route. A third of
 * them get their id chosen so the checksum lands on a value where the
 * one's complement arithmetic wraps (0x0000, 0xffff-ish, byte carries).
 */
static void case_csum_sweep(const struct xcase *c)
{
	static const __u16 edge[] = { 0x0000, 0x0001, 0x00fe, 0x00ff, 0x0100,
				      0x0101, 0x7fff, 0x8000, 0xfe00, 0xfefe,
				      0xfeff, 0xff00, 0xff01, 0xfffe };
	const int n = 1000;
	int edges = 0, bytes = 0;

	for (int i = 0; i < n && nfail_lines < 20; i++) {
		struct frame in, out;
		struct iphdr *ip;
		__u32 retval, s, d;
		int plen = rnd() % 101, a, err, before;

		build_frame(&(struct pkt){ .dst = "20.0.0.1" }, IF_IN0, &in);
		ip = (void *)(in.b + ETH_HLEN);
		do
			a = 1 + rnd() % 223;
		while (a == 127 || a == 169);
		s = (__u32)a << 24 | (rnd() & 0xffffff);
		d = (20 + rnd() % 80) << 24 | (rnd() & 0xffffff);
		ip->saddr = htonl(s);
		ip->daddr = htonl(d);
		ip->tos = rnd();
		ip->id = rnd();
		ip->frag_off = htons(rnd() & 0x7fff); /* DF, MF, offset */
		ip->ttl = i % 50 == 0 ? 2 : 2 + rnd() % 254;
		ip->protocol = rnd();
		ip->tot_len = htons(sizeof(*ip) + plen);
		for (int j = 0; j < plen; j++)
			in.b[ETH_HLEN + sizeof(*ip) + j] = rnd();
		in.len = ETH_HLEN + sizeof(*ip) + plen;
		ip->check = 0;
		if (i % 3 == 0) {
			__u16 want = edge[(i / 3) % ARRAY_SIZE(edge)];
			__u16 sum;

			ip->id = 0;
			sum = csum_fold(csum_add(0, ip, sizeof(*ip)));
			/* id = ~want - sum in one's complement */
			ip->id = htons(csum_fold((__u16)~want + (__u16)~sum));
			if (ntohs(ipv4_csum(ip)) != want) {
				failf(
				    "fixture: could not aim at checksum 0x%04x",
				    want);
				continue;
			}
			edges++;
		}
		ip->check = ipv4_csum(ip);

		err = run_frame(IF_IN0, &in, &out, &retval);
		if (err) {
			failf("header %d: test_run failed: %s", i,
			      strerror(-err));
			continue;
		}
		if (retval != XDP_REDIRECT) {
			failf("header %d (ttl %u, check 0x%04x): verdict %s", i,
			      ip->ttl, ntohs(ip->check), vname(false, retval));
			continue;
		}
		before = nfail_lines;
		check_forwarded(&in, &out, NH_DEF4, NULL);
		if (nfail_lines != before)
			failf("  in header %d: ttl %u, checksum in 0x%04x", i,
			      ip->ttl, ntohs(ip->check));
		bytes += in.len;
	}
	if (!nfail_lines)
		expect_counters(IF_IN0, FPMD_R_FORWARDED, IF_NH(NH_DEF4), n,
				bytes, bytes);
	snprintf(note, sizeof(note), "%d headers, %d aimed at edge checksums",
		 n, edges);
}

/* Member counts over flows; returns how many frames were not forwarded. */
static int ecmp_count(const char *dst, int nflows, int *count)
{
	int lost = 0;

	memset(count, 0, sizeof(int) * NH_COUNT);
	for (int i = 0; i < nflows; i++) {
		struct pkt p = { .dst = dst, .sport = 1024 + i };
		struct frame in, out;
		__u32 retval;

		build_frame(&p, IF_IN0, &in);
		if (run_frame(IF_IN0, &in, &out, &retval) ||
		    retval != XDP_REDIRECT) {
			lost++;
			continue;
		}
		count[nh_by_smac(&out)]++;
	}
	return lost;
}

/* Each member's share of nflows is its share of the group's buckets. */
static void ecmp_spread(const char *dst, int gid)
{
	const struct grp_def *d = &grp_defs[gid];
	const int nflows = 4000;
	const double tol = 0.05;
	int count[NH_COUNT], members = 0, lost;
	struct fpmd_nh_group g;
	size_t off = 0;

	fill_group(&g, d);
	lost = ecmp_count(dst, nflows, count);
	if (lost)
		failf("%d of %d flows not forwarded", lost, nflows);
	for (int id = 0; id < NH_COUNT; id++) {
		int share = 0;
		double want, got;
		bool member = false;

		for (int i = 0; i < d->n; i++)
			member |= d->nh[i] == id;
		for (__u32 b = 0; b < g.nbuckets; b++)
			share += (int)g.bucket[b] == id;
		if (!member) {
			if (count[id])
				failf("%d flows went to %s, not a member",
				      count[id], nh_name(id));
			continue;
		}
		members++;
		want = (double)share / g.nbuckets;
		got = (double)count[id] / nflows;
		if (off < sizeof(note))
			off += snprintf(note + off, sizeof(note) - off,
					"%s%s %.1f%%", members > 1 ? ", " : "",
					nh_defs[id].name, 100 * got);
		if (got < want - tol || got > want + tol)
			failf("%s: expected %.1f%% +- %.0f%% of %d flows, got "
			      "%.1f%% (%d)",
			      nh_defs[id].name, 100 * want, 100 * tol, nflows,
			      100 * got, count[id]);
	}
	if (!nfail_lines)
		read_stats();
	if (!nfail_lines &&
	    stats_sum[FPMD_STAT_INDEX(if_slot(IF_IN0), FPMD_R_FORWARDED)]
		    .packets != (__u64)nflows)
		failf("FORWARDED on in0: expected %d", nflows);
}

static void case_ecmp_13_v4(const struct xcase *c)
{
	ecmp_spread("192.0.2.77", G_13);
}

static void case_ecmp_121_v4(const struct xcase *c)
{
	ecmp_spread("198.18.3.4", G_121);
}

static void case_ecmp_eq4_v4(const struct xcase *c)
{
	ecmp_spread("198.51.100.9", G_EQ4);
}

static void case_ecmp_13_v6(const struct xcase *c)
{
	ecmp_spread("fd00:ec::77", G_13);
}

static void case_ecmp_eq4_v6(const struct xcase *c)
{
	ecmp_spread("fd00:ed::9", G_EQ4);
}

/* Many flows, each sent several times interleaved: one member per flow. */
static void ecmp_sticky(bool v6)
{
	enum { NFLOWS = 64, ROUNDS = 5 };
	int first[NFLOWS], used[NH_COUNT] = { 0 }, distinct = 0;
	char src[NFLOWS][INET6_ADDRSTRLEN];
	__u16 sport[NFLOWS], dport[NFLOWS];

	for (int f = 0; f < NFLOWS; f++) {
		__u32 r = rnd();

		if (v6)
			snprintf(src[f], sizeof(src[f]), "fd00:5::%x:%x",
				 r >> 16, r & 0xffff);
		else
			snprintf(src[f], sizeof(src[f]), "203.0.%u.%u",
				 (r >> 8) & 0xff, 1 + r % 254);
		sport[f] = 1024 + rnd() % 60000;
		dport[f] = 1 + rnd() % 65000;
	}
	for (int round = 0; round < ROUNDS; round++) {
		for (int f = 0; f < NFLOWS; f++) {
			struct pkt p = { .src = src[f],
					 .dst =
					     v6 ? "fd00:ed::9" : "198.51.100.9",
					 .sport = sport[f],
					 .dport = dport[f] };
			struct frame in, out;
			__u32 retval;
			int nh;

			build_frame(&p, IF_IN0, &in);
			if (run_frame(IF_IN0, &in, &out, &retval) ||
			    retval != XDP_REDIRECT) {
				failf("flow %d round %d not forwarded", f,
				      round);
				return;
			}
			nh = nh_by_smac(&out);
			if (!round) {
				first[f] = nh;
				distinct += !used[nh]++;
			} else if (nh != first[f]) {
				failf("flow %s:%u -> %u round %d: %s, first %s",
				      src[f], sport[f], dport[f], round,
				      nh_name(nh), nh_name(first[f]));
			}
		}
	}
	/* Otherwise a constant pick would pass. */
	if (distinct < 2)
		failf("%d flows all picked one member: the hash ignores them",
		      NFLOWS);
	snprintf(note, sizeof(note), "%d flows x %d rounds, %d members used",
		 NFLOWS, ROUNDS, distinct);
}

static void case_ecmp_sticky_v4(const struct xcase *c)
{
	ecmp_sticky(false);
}

/*
 * Rewrites under traffic. fpmd rewrites a nexthop or group in place while
 * the fast path reads it (a MAC change, a neighbor lost, a member down):
 * a writer thread cycles an entry through versions with the real writer
 * (nhtab.c) while this thread runs frames through the program, and every
 * frame must show one whole version (fpmd_maps.h, FPMD_SEQ_WRITING) or go
 * up. Without the sequence count a frame leaves with one version's flags
 * and another's MAC (seen on the neighbor-delete path in the soak). A
 * tear is likeliest where a cache line boundary splits what the fast
 * path reads, so the nexthop case moves its entry over 8 slots (array
 * entries are 56 bytes apart, so one of 8 has each split); the group's
 * count and buckets always span lines.
 */
#define REWRITE_NS 1600000000ull
#define REWRITE_SLOTS 8

struct rewriter {
	bool group;
	__u32 idx;
	volatile bool stop;
	unsigned long writes;
	int err;
};

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The nexthop's versions: resolved with NH_P32's MACs, unresolved with no
 * MAC (the old neighbor-delete write), resolved with NH_A's; the MACs of
 * the two differ in every byte. */
static void rewrite_nh_version(int v, struct fpmd_nexthop *nh)
{
	memset(nh, 0, sizeof(*nh));
	nh->ifindex = if_index[nh_dev(NH_P32)];
	nh->mtu = 1500;
	nh->oslot = if_slot(nh_dev(NH_P32));
	nh->flags = FPMD_NH_F_VALID;
	if (v == 1 || v == 3)
		return;
	nh->flags |= FPMD_NH_F_RESOLVED;
	nh_dmac(v ? NH_A : NH_P32, nh->dmac);
	nh_smac(v ? NH_A : NH_P32, nh->smac);
}

/* G_13's versions: one bucket (NH_A) with NH_D left in the other 63, or
 * all 64 buckets NH_B. A frame by NH_D read the new count with the old
 * buckets. */
static void rewrite_group_version(int v, struct fpmd_nh_group *g)
{
	memset(g, 0, sizeof(*g));
	for (int i = 0; i < FPMD_GROUP_BUCKETS; i++)
		g->bucket[i] = v ? NH_B : NH_D;
	if (!v)
		g->bucket[0] = NH_A;
	g->nbuckets = v ? FPMD_GROUP_BUCKETS : 1;
}

static int rewrite_one(struct rewriter *w, int v)
{
	if (!w->group) {
		struct fpmd_nexthop nh;

		rewrite_nh_version(v, &nh);
		return nhtab_nexthop_write(&nhtab, w->idx, &nh);
	}
	struct fpmd_nh_group g;

	rewrite_group_version(v % 2, &g);
	return nhtab_group_write(&nhtab, w->idx, &g);
}

static void *rewriter_run(void *arg)
{
	struct rewriter *w = arg;

	for (int v = 1; !w->stop && !w->err; v = (v + 1) % 4) {
		w->err = rewrite_one(w, v);
		w->writes++;
	}
	return NULL;
}

struct rewrite_tally {
	unsigned long frames, writes, passed, first, second;
	int bad;
};

/* Frames to dst for ns while a writer rewrites w's entry. */
static void rewrite_run(struct rewriter *w, const char *dst,
			unsigned long long ns, struct rewrite_tally *t)
{
	int ok_a = w->group ? NH_A : NH_P32, ok_b = w->group ? NH_B : NH_A;
	unsigned long long end;
	pthread_t th;

	w->err = rewrite_one(w, 0);
	if (w->err || pthread_create(&th, NULL, rewriter_run, w)) {
		failf("writer: cannot start");
		t->bad++;
		return;
	}
	end = mono_ns() + ns;
	while (mono_ns() < end && t->bad < 5) {
		struct pkt p = { .dst = dst,
				 .sport = 1000 + t->frames % 4096,
				 .dport = 53 };
		struct frame in, out;
		__u8 d[ETH_ALEN];
		char dm[18], sm[18];
		__u32 retval;
		int nh;

		build_frame(&p, IF_IN0, &in);
		if (run_frame(IF_IN0, &in, &out, &retval)) {
			failf("test_run failed");
			t->bad++;
			break;
		}
		t->frames++;
		if (retval == XDP_PASS) {
			t->passed++;
			continue;
		}
		nh = retval == XDP_REDIRECT ? nh_by_smac(&out) : 0;
		if (nh)
			nh_dmac(nh, d);
		if ((nh == ok_a || nh == ok_b) &&
		    (w->group || !memcmp(out.b, d, ETH_ALEN))) {
			*(nh == ok_a ? &t->first : &t->second) += 1;
			continue;
		}
		t->bad++;
		fmt_mac(out.b, dm);
		fmt_mac(out.b + ETH_ALEN, sm);
		failf("slot %u frame %lu: verdict %u, dst %s src %s (%s): not "
		      "one whole version",
		      w->idx, t->frames, retval, dm, sm,
		      nh ? nh_name(nh) : "no nexthop");
	}
	w->stop = true;
	pthread_join(th, NULL);
	if (w->err) {
		failf("writer: %s", strerror(-w->err));
		t->bad++;
	}
	t->writes += w->writes;
}

static void rewrite_report(bool group, const struct rewrite_tally *t)
{
	/* The versions must really have met the frames. */
	if (t->writes < 1000)
		failf("only %lu rewrites", t->writes);
	if (!t->passed || !t->first || !t->second)
		failf("versions seen: passed %lu, first %lu, second %lu",
		      t->passed, t->first, t->second);
	snprintf(note, sizeof(note),
		 "%lu frames, %lu rewrites; %lu passed, by %s %lu, by %s %lu",
		 t->frames, t->writes, t->passed, nh_name(group ? NH_A : NH_P32),
		 t->first, nh_name(group ? NH_B : NH_A), t->second);
}

static void case_nexthop_rewrite(const struct xcase *c)
{
	struct rewrite_tally t = { 0 };
	struct fpmd_lpm_v6 key;
	int family;

	_Static_assert(NH_COUNT + REWRITE_SLOTS <= 1u << FPMD_NH_CHUNK_SHIFT,
		       "the rewrite slots share chunk 0");
	route_key("10.1.2.3/32", &family, &key);
	for (__u32 k = 0; k < REWRITE_SLOTS && !t.bad; k++) {
		struct rewriter w = { .idx = NH_COUNT + k };

		put_route(AF_INET, &key, FPMD_RT_ENCODE(FPMD_RT_NEXTHOP, NH_COUNT + k),
			  "10.1.2.3/32");
		rewrite_run(&w, "10.1.2.3", REWRITE_NS / REWRITE_SLOTS, &t);
	}
	rewrite_report(false, &t);
}

static void case_group_rewrite(const struct xcase *c)
{
	struct rewrite_tally t = { 0 };
	struct rewriter w = { .group = true, .idx = G_13 };

	rewrite_run(&w, "192.0.2.9", REWRITE_NS, &t);
	rewrite_report(true, &t);
}

static void case_ecmp_sticky_v6(const struct xcase *c)
{
	ecmp_sticky(true);
}

/*
 * Fragments of one flow carry different bytes where the ports would be
 * (the first fragment has the real ports, the others payload): the pick
 * must come from addresses and protocol only. The same bytes sent
 * unfragmented must spread, or the check proves nothing.
 */
static void ecmp_fragments(bool v6)
{
	enum { NFRAGS = 48 };
	const char *dst = v6 ? "fd00:ed::9" : "198.51.100.9";
	int frag_nh = -1, used[NH_COUNT] = { 0 }, distinct = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (int k = 0; k < NFRAGS; k++) {
			struct pkt p = { .dst = dst,
					 .sport = 1000 + 17 * k,
					 .dport = 2000 + 31 * k };
			struct frame in, out;
			__u32 retval;
			int nh;

			if (pass == 0 && !v6)
				p.frag = k % 3 == 0 ? 0x2000
						    : /* MF, offset 0 */
					     k % 3 == 1 ? 0x2000 | k
							: /* MF, offset */
					     k;		  /* last */
			if (pass == 0 && v6)
				p.mut = M_FRAG6;
			build_frame(&p, IF_IN0, &in);
			if (pass == 0 && v6 && k % 2) {
				/* a later fragment: offset k, M clear */
				__u8 *fh =
				    in.b + ETH_HLEN + sizeof(struct ipv6hdr);

				fh[2] = k >> 5;
				fh[3] = (k << 3) & 0xf8;
			}
			if (run_frame(IF_IN0, &in, &out, &retval) ||
			    retval != XDP_REDIRECT) {
				failf("%s %d not forwarded",
				      pass ? "packet" : "fragment", k);
				return;
			}
			nh = nh_by_smac(&out);
			if (pass == 1) {
				distinct += !used[nh]++;
			} else if (frag_nh < 0) {
				frag_nh = nh;
			} else if (nh != frag_nh) {
				failf("fragment %d (ports bytes %u/%u): %s, "
				      "fragment 0 took %s",
				      k, p.sport, p.dport, nh_name(nh),
				      nh_name(frag_nh));
			}
		}
	}
	if (distinct < 2)
		failf("the same port bytes unfragmented all took one member: "
		      "this case cannot tell");
	snprintf(note, sizeof(note),
		 "%d fragments on one member, unfragmented spread over %d",
		 NFRAGS, distinct);
}

static void case_ecmp_frag_v4(const struct xcase *c)
{
	ecmp_fragments(false);
}

static void case_ecmp_frag_v6(const struct xcase *c)
{
	ecmp_fragments(true);
}

/* ------------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------------
 */

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static bool selected(const char *name, int npat, char **pat)
{
	if (!npat)
		return true;
	for (int i = 0; i < npat; i++)
		if (!fnmatch(pat[i], name, 0))
			return true;
	return false;
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: xdp_test [--fib lpm|fast|dxr] [--list] [CASE-PATTERN...]\n"
	       "Runs fpmd's XDP program on crafted frames (BPF_PROG_TEST_RUN)\n"
	       "in a private network namespace. Needs root.\n");
}

int main(int argc, char **argv)
{
	int npat = argc - 1, nsel = 0, passed = 0, failed = 0, num = 0;
	char **pat = argv + 1;
	bool list = false;

	if (npat >= 2 && !strcmp(pat[0], "--fib")) {
		if (strcmp(pat[1], "lpm") && strcmp(pat[1], "fast") &&
		    strcmp(pat[1], "dxr")) {
			usage(stderr);
			return 2;
		}
		fib_dxr = !strcmp(pat[1], "dxr");
		fib_fast = fib_dxr || !strcmp(pat[1], "fast");
		npat -= 2;
		pat += 2;
	}
	if (npat && !strcmp(pat[0], "--list")) {
		list = true;
		npat--;
		pat++;
	} else if (npat &&
		   (!strcmp(pat[0], "-h") || !strcmp(pat[0], "--help"))) {
		usage(stdout);
		return 0;
	}
	for (int i = 0; i < npat; i++) {
		if (pat[i][0] == '-') {
			usage(stderr);
			return 2;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(cases[i].name, cases[j].name)) {
				fprintf(stderr, "xdp_test: case %s twice\n",
					cases[i].name);
				return 2;
			}
		}
		if (selected(cases[i].name, npat, pat)) {
			nsel++;
			if (list)
				printf("%s\n", cases[i].name);
		}
	}
	if (list)
		return 0;
	if (!nsel) {
		fprintf(stderr, "xdp_test: no case matches\n");
		return 2;
	}

	/* A private netns: our veths go away with the process. */
	if (unshare(CLONE_NEWNET))
		die("unshare(CLONE_NEWNET) (needs root)", errno);
	libbpf_set_print(libbpf_print);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		die("libbpf_num_possible_cpus", -ncpus);
	make_interfaces();

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct xcase *c = &cases[i];

		if (!selected(c->name, npat, pat))
			continue;
		msglen = 0;
		msg[0] = 0;
		note[0] = 0;
		nfail_lines = 0;
		fixture_load();
		if (c->set_flags)
			set_iface(c->in, c->flags);
		if (c->setup)
			c->setup();
		if (c->run)
			c->run(c);
		else
			run_generic(c);
		fixture_unload();

		num++;
		if (nfail_lines) {
			failed++;
			printf("not ok %d - %s: %s\n%s", num, c->name, c->desc,
			       msg);
			if (nfail_lines > 1 && msglen >= sizeof(msg) - 8)
				printf("    (%d failures, output cut)\n",
				       nfail_lines);
		} else {
			passed++;
			printf("ok %d - %s%s%s%s\n", num, c->name,
			       note[0] ? " (" : "", note, note[0] ? ")" : "");
		}
		fflush(stdout);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
