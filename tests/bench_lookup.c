// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Lookup micro-benchmark, run by hand as root (not part of make check):
 *
 *   tests/bench_lookup [--quick] [--dump ipv4|ipv6:N]
 *
 * Prints ns per packet from BPF_PROG_TEST_RUN for fpmd's XDP program built
 * for the LPM tries, built for the fast tables (DIR-24-8 for IPv4, a
 * direct stage and binary search on prefix lengths for IPv6), and built
 * for DXR (fpmd/fib/fib4c.c) for IPv4 over the fast program's IPv6
 * tables, against bpf/fpmd_ref.bpf.o, the same source built with
 * bpf_fib_lookup() over the kernel FIB holding the same routes, so only
 * the lookup differs; the four run interleaved. Then route write rates,
 * the maps' memory and adoption after a restart.
 *
 * Everything lives in a network namespace of our own (unshare), which the
 * kernel tears down when the process exits: nothing to clean up.
 *
 * Three test_run facts shape the method:
 * - All repeats of one BPF_PROG_TEST_RUN call run on one buffer, rewritten
 *   in place. The gateway's MAC is therefore set to the ingress MAC (the
 *   rewritten frame is again addressed to the router), and a frame is
 *   repeated at most 250 times (TTL 255 drops by one per repeat).
 * - One call repeats one frame, so "spread" runs each of many frames, each
 *   to a different destination, once (repeat 1: no destination warms the
 *   cache for itself); "hot" repeats one frame.
 * - A call with repeat > 1 costs ~30 ms of wall time here (the kernel
 *   swaps the XDP dispatcher in and out around it), repeat 1 a few us, so
 *   hot uses few calls. Repeat 1 also carries the test run's fixed cost
 *   (timer, indirect call); the floor line (an XDP_PASS program) shows it
 *   and the "net of floor" columns take it out of each program and ref.
 *
 * The programs run in blocks (all of one program's frames, then the
 * next), and the four tables together are far larger than the cache this
 * machine gives us. So before each timed spread block the program
 * forwards --warm untimed frames to other spread destinations: its tables
 * start the block as a steady stream of its own packets keeps them (what
 * a router sees), not as the other three programs left them (what no
 * router sees). tests/memlat measures what that state costs by size.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/rtnetlink.h>
#include <linux/udp.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <libmnl/libmnl.h>

#include "fib/fib4.h"
#include "fib/fib4c.h"
#include "fib/fib6.h"
#include "fib/nhtab.h"
#include "fpmd_maps.h"
#include "fpmd.skel.h"
#include "fpmd_ref.skel.h"
#include "tablegen.h"
#include "tool.h"

#define IF_IN "fpb-in"	 /* frames arrive here (test_run ingress_ifindex) */
#define IF_OUT "fpb-out" /* every route leaves here, via a gateway */
static const uint8_t mac_in[ETH_ALEN] = { 0x02, 0xfb, 0, 0, 0, 0x01 };
static const uint8_t mac_out[ETH_ALEN] = { 0x02, 0xfb, 0, 0, 0, 0x02 };
static const uint8_t mac_host[ETH_ALEN] = { 0x02, 0xfb, 0, 0, 0, 0x10 };

#define HOT_REPEAT 250	/* < 255 - 1: TTL drops once per repeat */
#define FIB_BATCH 1024	/* routes per rtnetlink sendmsg */
#define MAP_BATCH 65536 /* routes per bpf_map_update_batch */
#define MAX_ROUNDS 32
#define OUTLIER_NS 20000 /* a preempted or descheduled sample, not a lookup */
#define CHECK_FRAMES 4096 /* spread frames whose rewrite is checked */
#define V6_MEMORY_ROUTES 200000 /* the IPv6 table for the memory report */

struct family {
	const char *name;
	int af;
	int alen; /* address bytes */
	size_t key_size;
	const char *addr_in, *addr_out, *src; /* the test's own subnets */
	const char *gw_net; /* gateway k is gw_net + (2 + k) on IF_OUT */
	__u32 nh_base;	    /* fpmd nexthop index of gateway 0 */
	__u32 grp_base;	    /* fpmd group index of ECMP group 0 */
	struct tg_table t;
	struct tg_route *r; /* t.r, t.n */
	size_t n;
	uint8_t *keys; /* LPM keys of r, key_size each */
	uint8_t gw[TG_NEXTHOPS][16];
	uint8_t mac[TG_NEXTHOPS][ETH_ALEN];
};

/*
 * The programs measured side by side, one column each. Another table is
 * one more entry here and in main(); the verdicts apply to every program
 * with .verdict set, for the families it names, always against P_REF.
 */
enum { P_LPM, P_FAST, P_DXR, P_REF, NPROG };

#define V_IPV4 0x1 /* .verdict: the IPv4 targets apply */
#define V_IPV6 0x2

struct prog {
	const char *name;
	const char *col; /* column name */
	int verdict;	 /* V_IPV4 | V_IPV6: the targets that apply to it */
	int fd;
	int stats_fd; /* -1: the program does not count */
	__u32 want;   /* expected verdict on every frame */
	double spent; /* s of wall time in its measurements */
};

struct frames {
	uint8_t *buf;
	uint16_t *nh; /* the nexthop the generator's longest match gives */
	size_t n, len;
	size_t nested; /* frames whose longest match is not the route drawn */
	char first[INET6_ADDRSTRLEN]; /* first destination, for messages */
};

struct result {
	const char *family;
	size_t routes;
	const char *pattern;
	double ns[NPROG];
	double floor; /* the XDP_PASS program, same method */
};

/* Issue 16's targets: program/ref per packet net of the floor, spread
 * destinations. */
static const struct target {
	const char *family;
	size_t routes;
	double max;
} targets[] = {
	{ "ipv4", 10, 0.3 },	  { "ipv4", 10000, 0.3 },
	{ "ipv4", 100000, 0.2 },  { "ipv4", 1000000, 0.15 },
	{ "ipv6", 10, 0.3 },	  { "ipv6", 10000, 0.3 },
	{ "ipv6", 100000, 0.3 },
};

static struct {
	int quick;
	int rounds;
	size_t spread_frames;
	int hot_calls;
	size_t warm_frames; /* untimed, before each spread block; 0: cold */
} opt = { 0, 9, 32768, 10, 131072 };

static int if_in, if_out;
static struct mnl_socket *nl;
static uint32_t nl_seq;
static double t_start;
static int ncpus;
static size_t outliers, samples;
static double floor_spread[NPROG], floor_hot[NPROG];
static struct fib4 fib4;
static struct fib4c fib4c; /* the dxr program's IPv4 table */
static struct fib6 fib6;

static void progress(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "[%6.1fs] ", now() - t_start);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

static void sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc))
		die("setup failed: %s", cmd);
}

static void write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(val, f) < 0 || fclose(f))
		die("write %s: %s", path, strerror(errno));
}

static const char *fmt_addr(const struct family *f, const uint8_t *a, char *buf)
{
	return inet_ntop(f->af, a, buf, INET6_ADDRSTRLEN);
}

static const char *fmt_count(size_t n, char *buf)
{
	if (n >= 1000000 && n % 1000000 == 0)
		sprintf(buf, "%zuM", n / 1000000);
	else if (n >= 1000 && n % 1000 == 0)
		sprintf(buf, "%zuk", n / 1000);
	else
		sprintf(buf, "%zu", n);
	return buf;
}

/* --- route sets (tests/tablegen.h) --- */

/* Gateway k on IF_OUT and its MAC. Nexthop 0's MAC is the ingress MAC
 * and route 0 goes via it: the hot frame's route (see the top). */
static void family_nexthops(struct family *f)
{
	for (int k = 0; k < TG_NEXTHOPS; k++) {
		char a[INET6_ADDRSTRLEN];
		uint8_t mac[ETH_ALEN] = { 0x02, 0xfb, f->af == AF_INET ? 4 : 6,
					  0, 0, (uint8_t)k };

		if (f->af == AF_INET)
			snprintf(a, sizeof(a), "%s%d", f->gw_net, 2 + k);
		else
			snprintf(a, sizeof(a), "%s%x", f->gw_net, 2 + k);
		if (inet_pton(f->af, a, f->gw[k]) != 1)
			die("gateway %s", a);
		memcpy(f->mac[k], k ? mac : mac_in, ETH_ALEN);
	}
}

/* The table's LPM keys and gateways, once f->t is made or loaded. */
static void family_table(struct family *f)
{
	size_t n = f->t.n;

	f->r = f->t.r;
	f->n = f->t.n;
	f->r[0].nh = 0;
	family_nexthops(f);

	f->keys = calloc(n, f->key_size);
	if (!f->keys)
		die("out of memory for %zu keys", n);
	for (size_t i = 0; i < n; i++) {
		uint8_t *key = f->keys + i * f->key_size;
		__u32 plen = f->r[i].len;

		memcpy(key, &plen, sizeof(plen));
		memcpy(key + sizeof(plen), f->r[i].addr, f->alen);
	}
}

static void gen_routes(struct family *f, size_t n,
		       const struct tg_len_weight *mix, size_t nmix)
{
	tg_gen(&f->t, f->af, n, mix, nmix);
	family_table(f);
}

/* --routes FILE: the family's table from the file (tablegen.h). */
static void load_routes(struct family *f, const char *path)
{
	struct tg_load_stats st;

	tg_load(&f->t, f->af, path, &st);
	family_table(f);
	progress("%s: %zu %s routes (%zu lines; skipped: %zu of the other "
		 "family, %zu longer than /64, %zu repeated, %zu in the "
		 "benchmark's own subnets)",
		 path, f->n, f->name, st.lines, st.other_af, st.too_long,
		 st.dup, st.own);
}

/* The table sizes measured from a file of n routes: the generator's sizes
 * below n, then the whole file. */
static int file_sizes(const size_t *gen, int ngen, size_t n, size_t *out)
{
	int k = 0;

	for (int i = 0; i < ngen; i++)
		if (gen[i] < n)
			out[k++] = gen[i];
	out[k++] = n;
	return k;
}

/* The route value of route i: its nexthop or ECMP group, in this
 * family's range. */
static __u32 route_val(const struct family *f, size_t i)
{
	uint16_t nh = f->r[i].nh;

	if (nh >= TG_NEXTHOPS)
		return FPMD_RT_ENCODE(FPMD_RT_GROUP,
				      f->grp_base + nh - TG_NEXTHOPS);
	return FPMD_RT_ENCODE(FPMD_RT_NEXTHOP, f->nh_base + nh);
}

/* "/24 58.4%, /16-/23 35.0%, /8-/15 5.1%, /25-/32 1.4%", or IPv6's,
 * and the share of ECMP routes. */
static void print_mix(const struct family *f, size_t n)
{
	struct tg_mix_share m = tg_mix(&f->t, n);
	size_t ecmp = 0;
	char nb[16];

	for (size_t i = 0; i < n; i++)
		ecmp += f->r[i].nh >= TG_NEXTHOPS;
	if (f->af == AF_INET)
		printf("  %s %s routes: /24 %.1f%%, /16-/23 %.1f%%, /8-/15 "
		       "%.1f%%, /25-/32 %.1f%% (nested);\n",
		       f->name, fmt_count(n, nb), m.a, m.b, m.c, m.d);
	else
		printf("  %s %s routes: /48 %.1f%%, /32-/47 %.1f%%, /49-/64 "
		       "%.1f%%;\n",
		       f->name, fmt_count(n, nb), m.a, m.b, m.c);
	printf("    via %d nexthops; %.1f%% via %d ECMP groups of 2-%d of "
	       "them\n",
	       TG_NEXTHOPS, 100.0 * ecmp / n, TG_GROUPS, TG_GROUP_MAX);
}

/* --- frames --- */

static uint16_t ip_csum(const void *p, size_t len)
{
	const uint16_t *w = p;
	uint32_t sum = 0;

	for (size_t i = 0; i < len / 2; i++)
		sum += w[i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* A UDP frame from the host on IF_IN, addressed to the router's MAC.
 * Headers are built aside and copied in: after the 14-byte Ethernet
 * header they are not aligned for their types (UBSan). */
static size_t build_frame(const struct family *f, const uint8_t *dst,
			  uint8_t *buf)
{
	struct ethhdr eth = { .h_proto = htons(f->af == AF_INET ? ETH_P_IP :
								  ETH_P_IPV6) };
	struct udphdr udp = { .source = htons(40000), .dest = htons(5001) };
	size_t l4len = sizeof(udp) + 16, off = sizeof(eth);

	memset(buf, 0, 128);
	memcpy(eth.h_dest, mac_in, ETH_ALEN);
	memcpy(eth.h_source, mac_host, ETH_ALEN);
	memcpy(buf, &eth, sizeof(eth));
	if (f->af == AF_INET) {
		struct iphdr ip = {
			.version = 4,
			.ihl = 5,
			.tot_len = htons(sizeof(ip) + l4len),
			.ttl = 255,
			.protocol = IPPROTO_UDP,
		};

		inet_pton(AF_INET, f->src, &ip.saddr);
		memcpy(&ip.daddr, dst, 4);
		ip.check = ip_csum(&ip, sizeof(ip));
		memcpy(buf + off, &ip, sizeof(ip));
		off += sizeof(ip);
	} else {
		struct ipv6hdr ip6 = {
			.version = 6,
			.payload_len = htons(l4len),
			.nexthdr = IPPROTO_UDP,
			.hop_limit = 255,
		};

		inet_pton(AF_INET6, f->src, &ip6.saddr);
		memcpy(&ip6.daddr, dst, 16);
		memcpy(buf + off, &ip6, sizeof(ip6));
		off += sizeof(ip6);
	}
	udp.len = htons(l4len);
	memcpy(buf + off, &udp, sizeof(udp));
	return off + l4len;
}

/* The route of dst among the first nroutes, by the generator's longest
 * match (a more specific route may lie inside the one drawn). */
static long expected_route(const struct family *f, const uint8_t *dst,
			   size_t nroutes)
{
	long i = tg_lookup(&f->t, dst, nroutes);
	char a[INET6_ADDRSTRLEN];

	if (i < 0)
		die("%s: no route to %s among the first %zu", f->name,
		    fmt_addr(f, dst, a), nroutes);
	return i;
}

static void frames_alloc(struct frames *fr, size_t n)
{
	fr->buf = realloc(fr->buf, n * 128);
	fr->nh = realloc(fr->nh, n * sizeof(*fr->nh));
	if (!fr->buf || !fr->nh)
		die("out of memory for %zu frames", n);
	fr->n = n;
}

/* n frames to destinations spread over the first nroutes routes. */
static void build_frames(const struct family *f, size_t nroutes, size_t n,
			 struct frames *fr)
{
	uint8_t dst[16];

	frames_alloc(fr, n);
	fr->nested = 0;
	for (size_t i = 0; i < n; i++) {
		size_t drawn = tg_rnd() % nroutes;
		long lpm;

		tg_random_dest(&f->t, &f->r[drawn], dst);
		if (!i)
			fmt_addr(f, dst, fr->first);
		lpm = expected_route(f, dst, nroutes);
		fr->nested += (size_t)lpm != drawn;
		fr->nh[i] = f->r[lpm].nh;
		fr->len = build_frame(f, dst, fr->buf + i * 128);
	}
}

/*
 * The hot frame: a destination in route 0 whose longest match in the
 * whole table is route 0 (via nexthop 0, whose MAC is the ingress MAC,
 * so the frame can be repeated), the same at every size.
 */
static void build_hot(const struct family *f, struct frames *fr)
{
	uint8_t dst[16];

	frames_alloc(fr, 1);
	tg_rng = TG_SEED;
	for (int tries = 0;; tries++) {
		tg_random_dest(&f->t, &f->r[0], dst);
		if (tg_lookup(&f->t, dst, f->n) == 0)
			break;
		if (tries > 1000)
			die("%s: no hot destination in route 0", f->name);
	}
	fmt_addr(f, dst, fr->first);
	fr->nh[0] = 0;
	fr->len = build_frame(f, dst, fr->buf);
}

/* --- the namespace and the kernel FIB --- */

/* Every gateway a permanent neighbor on IF_OUT, in one ip -batch. */
static void add_neighbors(const struct family *v4, const struct family *v6)
{
	const struct family *fam[2] = { v4, v6 };
	FILE *p = popen("ip -batch -", "w");

	if (!p)
		die("ip -batch: %s", strerror(errno));
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < TG_NEXTHOPS; i++) {
			const uint8_t *m = fam[k]->mac[i];
			char a[INET6_ADDRSTRLEN];

			fprintf(p,
				"neigh add %s lladdr "
				"%02x:%02x:%02x:%02x:%02x:%02x nud permanent "
				"dev " IF_OUT "\n",
				fmt_addr(fam[k], fam[k]->gw[i], a), m[0], m[1],
				m[2], m[3], m[4], m[5]);
		}
	if (pclose(p))
		die("ip -batch: adding the gateways' neighbors failed");
}

static void setup_netns(const struct family *v4, const struct family *v6)
{
	char m_in[18], m_out[18];

	if (unshare(CLONE_NEWNET))
		die("unshare(CLONE_NEWNET): %s", strerror(errno));
	snprintf(m_in, sizeof(m_in), "%02x:%02x:%02x:%02x:%02x:%02x", mac_in[0],
		 mac_in[1], mac_in[2], mac_in[3], mac_in[4], mac_in[5]);
	snprintf(m_out, sizeof(m_out), "%02x:%02x:%02x:%02x:%02x:%02x",
		 mac_out[0], mac_out[1], mac_out[2], mac_out[3], mac_out[4],
		 mac_out[5]);
	sh("ip link add " IF_IN " address %s type veth peer name " IF_OUT
	   " address %s",
	   m_in, m_out);
	sh("ip link set " IF_IN " up && ip link set " IF_OUT " up");
	sh("ip addr add %s dev " IF_IN " && ip addr add %s dev " IF_OUT,
	   v4->addr_in, v4->addr_out);
	sh("ip -6 addr add %s dev " IF_IN " nodad && "
	   "ip -6 addr add %s dev " IF_OUT " nodad",
	   v6->addr_in, v6->addr_out);
	add_neighbors(v4, v6);
	/* After the links exist: "all" is copied to existing devices. */
	write_file("/proc/sys/net/ipv4/ip_forward", "1");
	write_file("/proc/sys/net/ipv6/conf/all/forwarding", "1");

	if_in = if_nametoindex(IF_IN);
	if_out = if_nametoindex(IF_OUT);
	if (!if_in || !if_out)
		die("veth pair %s/%s not found", IF_IN, IF_OUT);

	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		die("rtnetlink socket: %s", strerror(errno));
}

/* Wait for the ack of seq last; any error names the route that failed. */
static void nl_wait(const struct family *f, const struct tg_route *r,
		    uint32_t first, uint32_t last)
{
	char buf[MNL_SOCKET_BUFFER_SIZE], a[INET6_ADDRSTRLEN];

	for (;;) {
		int len = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		struct nlmsghdr *nlh = (void *)buf;

		if (len < 0)
			die("rtnetlink recv: %s", strerror(errno));
		for (; mnl_nlmsg_ok(nlh, len);
		     nlh = mnl_nlmsg_next(nlh, &len)) {
			struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
			const struct tg_route *bad =
				r + (nlh->nlmsg_seq - first);

			if (nlh->nlmsg_type != NLMSG_ERROR)
				continue;
			if (e->error)
				die("kernel FIB: add %s/%u: %s",
				    fmt_addr(f, bad->addr, a), bad->len,
				    strerror(-e->error));
			if (nlh->nlmsg_seq == last)
				return;
		}
	}
}

/* RTA_GATEWAY and RTA_OIF, or an RTA_MULTIPATH of the group's members. */
static void put_nexthops(struct nlmsghdr *nlh, const struct family *f,
			 uint16_t nh)
{
	int m[TG_GROUP_MAX], nm = tg_members(nh, m);
	struct nlattr *mp;

	if (nh < TG_NEXTHOPS) {
		mnl_attr_put(nlh, RTA_GATEWAY, f->alen, f->gw[nh]);
		mnl_attr_put_u32(nlh, RTA_OIF, if_out);
		return;
	}
	mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	for (int k = 0; k < nm; k++) {
		struct rtnexthop *rtnh = mnl_nlmsg_get_payload_tail(nlh);

		nlh->nlmsg_len += MNL_ALIGN(sizeof(*rtnh));
		memset(rtnh, 0, sizeof(*rtnh));
		rtnh->rtnh_ifindex = if_out;
		mnl_attr_put(nlh, RTA_GATEWAY, f->alen, f->gw[m[k]]);
		rtnh->rtnh_len =
			(char *)mnl_nlmsg_get_payload_tail(nlh) - (char *)rtnh;
	}
	mnl_attr_nest_end(nlh, mp);
}

/* Add routes [from, to) via their gateways, FIB_BATCH per sendmsg. */
static void fib_add(const struct family *f, size_t from, size_t to)
{
	static char buf[FIB_BATCH * 256];

	for (size_t i = from; i < to;) {
		size_t n = to - i < FIB_BATCH ? to - i : FIB_BATCH, off = 0;
		uint32_t first = nl_seq + 1;

		for (size_t k = 0; k < n; k++) {
			struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + off);
			struct rtmsg *rtm;

			nlh->nlmsg_type = RTM_NEWROUTE;
			/* Errors come back unasked; one ack closes the batch.
			 */
			nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE |
					   NLM_F_EXCL |
					   (k == n - 1 ? NLM_F_ACK : 0);
			nlh->nlmsg_seq = ++nl_seq;
			rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
			rtm->rtm_family = f->af;
			rtm->rtm_dst_len = f->r[i + k].len;
			rtm->rtm_table = RT_TABLE_MAIN;
			rtm->rtm_protocol = RTPROT_STATIC;
			rtm->rtm_scope = RT_SCOPE_UNIVERSE;
			rtm->rtm_type = RTN_UNICAST;
			mnl_attr_put(nlh, RTA_DST, f->alen, f->r[i + k].addr);
			put_nexthops(nlh, f, f->r[i + k].nh);
			off += nlh->nlmsg_len;
		}
		if (mnl_socket_sendto(nl, buf, off) < 0)
			die("rtnetlink send: %s", strerror(errno));
		nl_wait(f, f->r + i, first, nl_seq);
		i += n;
	}
}

/* --- maps --- */

static void map_put(int fd, const void *k, const void *v, const char *what)
{
	if (bpf_map_update_elem(fd, k, v, BPF_ANY))
		die("map update %s: %s", what, strerror(errno));
}

/* ifaces (and its array copy, as fpmd writes them) and tx_ports, the
 * same in every program. */
static void setup_ports(int ifaces_fd, int direct_fd, int tx_fd)
{
	__u32 flags = FPMD_IF_F_ENABLED | FPMD_IF_F_FWD_V4 | FPMD_IF_F_FWD_V6;
	struct fpmd_iface in = { .slot = 0, .flags = flags, .mtu = 1500 };
	struct fpmd_iface out = { .slot = 1, .flags = flags, .mtu = 1500 };
	struct bpf_devmap_val tx = { .ifindex = if_out };

	memcpy(in.mac, mac_in, ETH_ALEN);
	memcpy(out.mac, mac_out, ETH_ALEN);
	map_put(ifaces_fd, &if_in, &in, "ifaces (ingress)");
	map_put(ifaces_fd, &if_out, &out, "ifaces (egress)");
	in.flags |= FPMD_IF_F_PRESENT;
	out.flags |= FPMD_IF_F_PRESENT;
	if ((uint32_t)if_in < FPMD_IFINDEX_DIRECT)
		map_put(direct_fd, &if_in, &in, "ifaces_direct (ingress)");
	if ((uint32_t)if_out < FPMD_IFINDEX_DIRECT)
		map_put(direct_fd, &if_out, &out, "ifaces_direct (egress)");
	map_put(tx_fd, &if_out, &tx, "tx_ports");
}

/* Every gateway of both families a resolved nexthop on IF_OUT, as fpmd
 * writes them: family f's gateway k at index f->nh_base + k, its ECMP
 * group g at group index f->grp_base + g. */
static void setup_nexthops(int fd, int groups_fd, const struct family *v4,
			   const struct family *v6)
{
	const struct family *fam[2] = { v4, v6 };
	struct nhtab t;
	int ret = nhtab_open(&t, fd, groups_fd, false);

	for (int k = 0; !ret && k < 2; k++)
		for (int i = 0; !ret && i < TG_NEXTHOPS; i++) {
			struct fpmd_nexthop nh = {
				.ifindex = if_out,
				.mtu = 1500,
				.flags = FPMD_NH_F_VALID | FPMD_NH_F_RESOLVED |
					 (k ? FPMD_NH_F_V6 : 0),
				.oslot = 1,
			};

			memcpy(nh.dmac, fam[k]->mac[i], ETH_ALEN);
			memcpy(nh.smac, mac_out, ETH_ALEN);
			memcpy(nh.gw, fam[k]->gw[i], fam[k]->alen);
			ret = nhtab_nexthop_write(&t, fam[k]->nh_base + i, &nh);
		}
	for (int k = 0; !ret && k < 2; k++)
		for (int g = 0; !ret && g < TG_GROUPS; g++) {
			struct fpmd_nh_group grp = { 0 };
			int m[TG_GROUP_MAX],
				nm = tg_members(TG_NEXTHOPS + g, m);

			grp.nbuckets = grp.nmembers = nm;
			for (int i = 0; i < nm; i++) {
				grp.bucket[i] = grp.member[i] =
					fam[k]->nh_base + m[i];
				grp.weight[i] = 1;
			}
			ret = nhtab_group_write(&t, fam[k]->grp_base + g, &grp);
		}
	if (ret)
		die("nexthops and groups: %s", strerror(-ret));
	nhtab_close(&t); /* the chunks stay in the outer map */
}

/* Batched update of keys [from, to) in chunks of MAP_BATCH. */
static void lpm_put_batch(int fd, const struct family *f, size_t from,
			  size_t to)
{
	static struct fpmd_route_val vals[MAP_BATCH];

	for (size_t i = from; i < to;) {
		__u32 n = to - i < MAP_BATCH ? to - i : MAP_BATCH, done = n;

		for (__u32 k = 0; k < n; k++)
			vals[k].val = route_val(f, i + k);

		if (bpf_map_update_batch(fd, f->keys + i * f->key_size, vals,
					 &done, NULL) ||
		    done != n)
			die("%s LPM batch update at route %zu: %s", f->name,
			    i + done, strerror(errno));
		i += n;
	}
}

/* Routes/s into a fresh LPM trie like routes_v4/v6, one by one or batched. */
static double lpm_insert_rate(const struct family *f, size_t n, int batched)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_NO_PREALLOC);
	struct fpmd_route_val v;
	int fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "bench_lpm", f->key_size,
				sizeof(v), n, &mo);
	double t;

	if (fd < 0)
		die("create LPM trie for %zu routes: %s", n, strerror(errno));
	t = now();
	if (batched)
		lpm_put_batch(fd, f, 0, n);
	else
		for (size_t i = 0; i < n; i++) {
			v.val = route_val(f, i);
			map_put(fd, f->keys + i * f->key_size, &v, "LPM trie");
		}
	t = now() - t;
	close(fd);
	return n / t;
}

/* Per-reason counters of slots 0 (ingress) and 1 (egress), summed over CPUs. */
static void read_stats(int fd, __u64 out[2][FPMD_R_MAX])
{
	struct fpmd_stat s[ncpus];

	for (int slot = 0; slot < 2; slot++)
		for (int r = 0; r < FPMD_R_MAX; r++) {
			__u32 key = FPMD_STAT_INDEX(slot, r);

			if (bpf_map_lookup_elem(fd, &key, s))
				die("read stats: %s", strerror(errno));
			out[slot][r] = 0;
			for (int c = 0; c < ncpus; c++)
				out[slot][r] += s[c].packets;
		}
}

/* "reason 13: 1 packets, ..." for the counters that moved; enum fpmd_reason. */
static const char *last_reasons(int stats_fd)
{
	static char buf[512];
	__u64 st[2][FPMD_R_MAX];
	size_t off = 0;

	if (stats_fd < 0)
		return "no counters";
	read_stats(stats_fd, st);
	off += snprintf(buf, sizeof(buf), "ingress counters:");
	for (int r = 0; r < FPMD_R_MAX && off < sizeof(buf) - 40; r++)
		if (st[0][r])
			off += snprintf(buf + off, sizeof(buf) - off,
					" reason %d: %llu", r,
					(unsigned long long)st[0][r]);
	return buf;
}

/* --- measurement --- */

/* Mean of the durations of calls test runs, frames taken in turn. */
static double run_frames(const struct prog *p, const struct frames *fr,
			 size_t calls, __u32 repeat)
{
	struct xdp_md ctx = { .data_end = fr->len, .ingress_ifindex = if_in };
	double sum = 0;
	size_t used = 0;

	for (size_t i = 0; i < calls; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o,
			    .data_in = fr->buf + (i % fr->n) * 128,
			    .data_size_in = fr->len, .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = repeat);

		if (bpf_prog_test_run_opts(p->fd, &o))
			die("%s: BPF_PROG_TEST_RUN: %s", p->name,
			    strerror(errno));
		if (o.retval != p->want) {
			const uint8_t *b = fr->buf + (i % fr->n) * 128;

			fprintf(stderr, "frame:");
			for (size_t k = 0; k < fr->len; k++)
				fprintf(stderr, " %02x", b[k]);
			fprintf(stderr, "\n");
			die("%s: frame %zu returned %u, not %u: the numbers "
			    "would mean nothing (%s)",
			    p->name, i % fr->n, o.retval, p->want,
			    last_reasons(p->stats_fd));
		}
		samples++;
		if (o.duration > OUTLIER_NS) {
			outliers++;
			continue;
		}
		sum += o.duration;
		used++;
	}
	if (!used)
		die("%s: every sample above %d ns", p->name, OUTLIER_NS);
	return sum / used;
}

static void dump_frame(const char *what, const uint8_t *b, size_t len)
{
	fprintf(stderr, "%s:", what);
	for (size_t k = 0; k < len; k++)
		fprintf(stderr, " %02x", b[k]);
	fprintf(stderr, "\n");
}

/* ECMP: fpmd and the kernel hash differently; any member is right. */
static int is_member_mac(const struct family *f, const uint8_t *mac,
			 const int *m, int nm)
{
	for (int k = 0; k < nm; k++)
		if (!memcmp(mac, f->mac[m[k]], ETH_ALEN))
			return 1;
	return 0;
}

/*
 * Every program must turn each frame into the frame kernel forwarding
 * sends: to the MAC of the gateway of the frame's longest-match route
 * (the generator's, tg_lookup; for an ECMP group, of one of its
 * members), from the egress MAC, one hop less (and
 * the IPv4 checksum updated). Checked on CHECK_FRAMES frames spaced
 * across fr before measuring.
 */
static void check_rewrite(struct prog *p[], int np, const struct family *f,
			  const struct frames *fr)
{
	struct xdp_md ctx = { .data_end = fr->len, .ingress_ifindex = if_in };
	size_t ttl_off = ETH_HLEN + (f->af == AF_INET ? 8 : 7);
	size_t step = fr->n > CHECK_FRAMES ? fr->n / CHECK_FRAMES : 1;
	uint8_t out[128], want[128];

	for (size_t j = 0; j < fr->n; j += step) {
		const uint8_t *in = fr->buf + j * 128;

		int m[TG_GROUP_MAX], nm = tg_members(fr->nh[j], m);

		memcpy(want, in, fr->len);
		memcpy(want, f->mac[m[0]], ETH_ALEN);
		memcpy(want + ETH_ALEN, mac_out, ETH_ALEN);
		want[ttl_off]--;
		if (f->af == AF_INET) {
			struct iphdr ip;

			memcpy(&ip, want + ETH_HLEN, sizeof(ip));
			ip.check = 0;
			ip.check = ip_csum(&ip, sizeof(ip));
			memcpy(want + ETH_HLEN, &ip, sizeof(ip));
		}
		for (int i = 0; i < np; i++) {
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
				    .data_size_in = fr->len, .data_out = out,
				    .data_size_out = sizeof(out),
				    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
				    .repeat = 1);
			char a[INET6_ADDRSTRLEN];

			if (bpf_prog_test_run_opts(p[i]->fd, &o))
				die("%s: BPF_PROG_TEST_RUN: %s", p[i]->name,
				    strerror(errno));
			if (o.retval == XDP_REDIRECT &&
			    o.data_size_out == fr->len &&
			    !memcmp(out + ETH_ALEN, want + ETH_ALEN,
				    fr->len - ETH_ALEN) &&
			    is_member_mac(f, out, m, nm))
				continue;
			dump_frame("expected", want, fr->len);
			dump_frame("got     ", out, o.data_size_out);
			die("%s: %s frame %zu to %s: verdict %u, not rewritten "
			    "to gateway %d (%02x:%02x:%02x:%02x:%02x:%02x%s) "
			    "as the longest match says",
			    p[i]->name, f->name, j,
			    fmt_addr(f, in + ETH_HLEN +
						(f->af == AF_INET ? 16 : 24),
				     a),
			    o.retval, m[0], want[0], want[1], want[2],
			    want[3], want[4], want[5],
			    nm > 1 ? " or another member of its group" : "");
		}
	}
}

/*
 * Run the programs over the same frames, rotating which goes first each
 * round (the machine is shared and noisy), and take each program's median
 * round. Every packet of every repeat must have been forwarded.
 */
static void measure(struct prog *p[], int np, const struct frames *fr,
		    size_t calls, __u32 repeat, const struct frames *warm,
		    double ns[])
{
	__u64 before[NPROG][2][FPMD_R_MAX], after[NPROG][2][FPMD_R_MAX];
	double v[NPROG][MAX_ROUNDS];
	__u64 want = (__u64)opt.rounds * calls * repeat;

	if (warm)
		want += (__u64)opt.rounds * warm->n;

	for (int i = 0; i < np; i++)
		if (p[i]->stats_fd >= 0)
			read_stats(p[i]->stats_fd, before[i]);
	for (int r = 0; r < opt.rounds; r++)
		for (int k = 0; k < np; k++) {
			int i = (k + r) % np;
			double t = now();

			if (warm) {
				/* Untimed: the table as the program's own
				 * stream keeps it, not as the other programs
				 * left it. Not counted as samples. */
				size_t keep_samples = samples,
				       keep_outliers = outliers;

				run_frames(p[i], warm, warm->n, 1);
				samples = keep_samples;
				outliers = keep_outliers;
			}
			v[i][r] = run_frames(p[i], fr, calls, repeat);
			p[i]->spent += now() - t;
		}
	for (int i = 0; i < np; i++) {
		if (p[i]->stats_fd < 0)
			continue;
		read_stats(p[i]->stats_fd, after[i]);
		for (int r = 0; r < FPMD_R_MAX; r++) {
			__u64 d = after[i][0][r] - before[i][0][r];

			if (d != (r == FPMD_R_FORWARDED ? want : 0))
				die("%s: %llu packets on reason %d, want %llu "
				    "forwarded (first destination %s)",
				    p[i]->name, (unsigned long long)d, r,
				    (unsigned long long)want, fr->first);
		}
		if (after[i][1][FPMD_R_TX] - before[i][1][FPMD_R_TX] != want)
			die("%s: egress TX counter off", p[i]->name);
	}
	for (int i = 0; i < np; i++)
		ns[i] = median(v[i], opt.rounds);
}

/* fpmd publishes new tbl24 parts once per main-loop iteration; here
 * once per COMMIT_EVERY routes (about one FPM read's worth). */
#define COMMIT_EVERY 1000

/* The fast tables' writers: fpmd/fib/fib4.c, fib4c.c, fib6.c. */
enum writer { W_DIR24, W_DXR, W_V6 };

static void fast_commit(enum writer w)
{
	int ret = w == W_DXR ? fib4c_commit(&fib4c) : fib4_commit(&fib4, 0);

	if (ret)
		die("%s: %s", w == W_DXR ? "fib4c_commit" : "fib4_commit",
		    strerror(-ret));
}

static int fib4_open_on(struct fpmd_bpf *fp, size_t v4_routes, bool adopt)
{
	struct fib4_maps m;

	fib4_maps_of(fp->obj, &m);
	return fib4_open(&fib4, &m, FPMD_TBL8_GROUPS, (uint32_t)v4_routes,
			 adopt);
}

static int fib4c_open_on(struct fpmd_bpf *fp, size_t v4_routes, bool adopt)
{
	struct fib4c_maps mc;

	fib4c_maps_of(fp->obj, &mc);
	return fib4c_open(&fib4c, &mc, (uint32_t)v4_routes, adopt);
}

/* The kernel's memory accounting of a map (fdinfo "memlock"), bytes. */
static unsigned long long map_memlock(int fd);

/* Memlock of an outer map and every chunk it holds. */
static unsigned long long chunks_memlock(int outer, const struct chunks *c)
{
	unsigned long long b = map_memlock(outer);

	for (uint32_t i = 0; i < c->max_chunks; i++)
		if (c->fd[i] >= 0)
			b += map_memlock(c->fd[i]);
	return b;
}

/* Routes [from, to) into one writer's table, as fpmd writes them; s. */
static double writer_put(enum writer w, const struct family *f, size_t from,
			 size_t to)
{
	double t = now();

	for (size_t i = from; i < to; i++) {
		const struct tg_route *r = &f->r[i];
		__u32 val = route_val(f, i);
		int ret;

		if (w == W_DIR24)
			ret = fib4_add(&fib4, r->addr, r->len, val);
		else if (w == W_DXR)
			ret = fib4c_add(&fib4c, r->addr, r->len, val);
		else
			ret = fib6_add(&fib6, r->addr, r->len, val);

		if (ret)
			die("%s %s table: add route %zu: %s", f->name,
			    w == W_DXR ? "DXR" : "fast", i, strerror(-ret));
		if (w != W_V6 && (i + 1) % COMMIT_EVERY == 0)
			fast_commit(w);
	}
	if (w != W_V6)
		fast_commit(w);
	return now() - t;
}

/* Routes [from, to) into fpmd's fast tables: IPv4 into DIR-24-8 (the
 * fast program's) and into DXR (the dxr program's), timed apart; s, and
 * DXR's in *dxr_s. */
static double fast_put(const struct family *f, size_t from, size_t to,
		       double *dxr_s)
{
	double t;

	if (f->af != AF_INET)
		return writer_put(W_V6, f, from, to);
	t = writer_put(W_DIR24, f, from, to);
	*dxr_s = writer_put(W_DXR, f, from, to);
	return t;
}

/* The kernel's memory accounting of a map (fdinfo "memlock"), bytes. */
static unsigned long long map_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	fp = fopen(path, "r");
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(fp);
	return v;
}

static void bench_family(struct family *f, const size_t *sizes, int nsizes,
			 struct prog *p[NPROG], int routes_fd,
			 struct result *res, int *nres, double *fib_time,
			 double *fast_time, double *dxr_time)
{
	struct frames spread = { 0 }, hot = { 0 }, warm = { 0 };
	size_t have = 0;
	char nb[16];

	for (int s = 0; s < nsizes; s++) {
		size_t n = sizes[s];
		struct result *rs = &res[(*nres)++], *rh = &res[(*nres)++];
		double t = now(), td = 0;

		fib_add(f, have, n);
		t = now() - t;
		*fib_time += t;
		progress("%s %s routes: kernel FIB +%zu in %.1f s", f->name,
			 fmt_count(n, nb), n - have, t);
		lpm_put_batch(routes_fd, f, have, n);
		t = fast_put(f, have, n, &td);
		*fast_time += t;
		if (f->af == AF_INET) {
			*dxr_time += td;
			progress("%s %s routes: fast table +%zu in %.2f s, DXR "
				 "in %.2f s",
				 f->name, fmt_count(n, nb), n - have, t, td);
		} else {
			progress("%s %s routes: fast table +%zu in %.2f s",
				 f->name, fmt_count(n, nb), n - have, t);
		}
		have = n;

		build_frames(f, n, opt.spread_frames, &spread);
		if (opt.warm_frames)
			build_frames(f, n, opt.warm_frames, &warm);
		build_hot(f, &hot);

		check_rewrite(p, NPROG, f, &spread);
		check_rewrite(p, NPROG, f, &hot);
		progress("%s %s routes: rewrites checked, %zu of %zu spread "
			 "destinations under a more specific route",
			 f->name, fmt_count(n, nb), spread.nested, spread.n);
		*rs = (struct result){ .family = f->name,
				       .routes = n,
				       .pattern = "spread",
				       .floor = floor_spread[0] };
		measure(p, NPROG, &spread, spread.n, 1,
			opt.warm_frames ? &warm : NULL, rs->ns);
		*rh = (struct result){ .family = f->name,
				       .routes = n,
				       .pattern = "hot",
				       .floor = floor_hot[0] };
		measure(p, NPROG, &hot, opt.hot_calls, HOT_REPEAT, NULL, rh->ns);
		for (int k = 0; k < NPROG; k++)
			progress("%s %s routes: %s spread %.0f ns, hot %.0f ns",
				 f->name, fmt_count(n, nb), p[k]->col,
				 rs->ns[k], rh->ns[k]);
	}
	free(spread.buf);
	free(warm.buf);
	free(spread.nh);
	free(hot.buf);
	free(hot.nh);
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bench_lookup [--quick] [--writes] [--routes FILE] "
		"[--dump ipv4|ipv6:N]\n"
		"  ns/packet of fpmd's XDP lookup (LPM tries, DIR-24-8, DXR)\n"
		"  against bpf_fib_lookup(), route write rates, memory and\n"
		"  adoption; needs root.\n"
		"  --quick  IPv4 10/10k/100k and IPv6 10/10k routes, 5 rounds\n"
		"  --warm N untimed frames to other spread destinations before\n"
		"           each program's spread block (default 131072, quick\n"
		"           16384; 0: the table as the other programs left it)\n"
		"  --routes FILE  the tables from FILE (\"PREFIX KEY\" lines,\n"
		"           scripts/route-table.py): its first 10, 10k, 100k\n"
		"           (1M) routes of each family and all of them\n"
		"  --writes only the fast tables' fresh write rates and\n"
		"           adoption (IPv4 1M, IPv6 100k; --quick: 100k, 10k)\n"
		"  --dump   print the first N (or all) routes of the family's table\n"
		"           (\"prefix/len gateway[,gateway...]\", several for\n"
		"           an ECMP group), measure nothing\n");
}

/* --dump: the tables for other benchmarks (tests/bench_memory.py). */
static int dump_routes(const struct family *f, size_t n)
{
	char a[INET6_ADDRSTRLEN];

	if (n > f->n)
		die("--dump: %s has %zu routes", f->name, f->n);
	for (size_t i = 0; i < n; i++) {
		int m[TG_GROUP_MAX], nm = tg_members(f->r[i].nh, m);

		printf("%s/%u ", fmt_addr(f, f->r[i].addr, a), f->r[i].len);
		for (int k = 0; k < nm; k++)
			printf("%s%d", k ? "," : "", m[k]);
		printf("\n");
	}
	return 0;
}

/* fpmd's program, built for the LPM tries, for the fast tables, or for
 * DXR (IPv4) over another program's IPv6 tables. */
enum build { B_LPM, B_FAST, B_DXR };

static const char *const build_name[] = { "lpm", "fast", "dxr" };

/*
 * Before loading: m is to be shared's map, the one the kernel holds. Its
 * shape must be the one m was sized to here, or the program would be
 * verified against a map it was not built for.
 */
static void reuse_map(struct bpf_map *m, const struct bpf_map *shared)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = bpf_map__fd(shared);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		die("%s: map info: %s", bpf_map__name(shared), strerror(errno));
	if (info.type != bpf_map__type(m) ||
	    info.key_size != bpf_map__key_size(m) ||
	    info.value_size != bpf_map__value_size(m) ||
	    info.max_entries != bpf_map__max_entries(m) ||
	    info.map_flags != bpf_map__map_flags(m))
		die("%s: cannot share it: type %u, key %u, value %u bytes, "
		    "%u entries, flags %#x; the dxr program's wants %u, %u, "
		    "%u, %u, %#x",
		    bpf_map__name(shared), info.type, info.key_size,
		    info.value_size, info.max_entries, info.map_flags,
		    bpf_map__type(m), bpf_map__key_size(m),
		    bpf_map__value_size(m), bpf_map__max_entries(m),
		    bpf_map__map_flags(m));
	if (bpf_map__reuse_fd(m, fd))
		die("%s: reuse: %s", bpf_map__name(shared), strerror(errno));
}

static struct fpmd_bpf *load_fpmd(enum build b, size_t v4_routes,
				  size_t v6_routes,
				  const struct fpmd_bpf *share)
{
	struct fpmd_bpf *fp = fpmd_bpf__open();

	if (!fp)
		die("open fpmd.bpf.o: %s", strerror(errno));
	fp->rodata->fib4_algo = b == B_LPM  ? FPMD_FIB4_LPM :
				b == B_FAST ? FPMD_FIB4_DIR24 :
					      FPMD_FIB4_DXR;
	fp->rodata->fib6_algo = b == B_LPM ? FPMD_FIB6_LPM : FPMD_FIB6_BSPL;
	if (b == B_LPM) {
		bpf_map__set_max_entries(fp->maps.routes_v4, v4_routes);
		bpf_map__set_max_entries(fp->maps.routes_v6, v6_routes);
		fib4_size(fp->obj, 0, 0);
		bpf_map__set_max_entries(fp->maps.slots_v6, 1);
	} else {
		bpf_map__set_max_entries(fp->maps.routes_v4, 1);
		bpf_map__set_max_entries(fp->maps.routes_v6, 1);
		if (b == B_FAST) {
			fib4_size(fp->obj, FPMD_TBL8_GROUPS,
				  (uint32_t)v4_routes);
		} else {
			fib4_size(fp->obj, 0, 0);
			fib4c_size(fp->obj, (uint32_t)v4_routes);
		}
		bpf_map__set_max_entries(
			fp->maps.slots_v6,
			FPMD_V6_OUTER(fib6_slots_for((uint32_t)v6_routes)));
	}
	/* The same IPv6 routes, nexthops and groups as share: fib6 and
	 * setup_nexthops() write them once for both programs. */
	if (share) {
		reuse_map(fp->maps.slots_v6, share->maps.slots_v6);
		reuse_map(fp->maps.lens_v6, share->maps.lens_v6);
		reuse_map(fp->maps.nexthops, share->maps.nexthops);
		reuse_map(fp->maps.nh_groups, share->maps.nh_groups);
	}
	if (fpmd_bpf__load(fp))
		die("load fpmd.bpf.o (%s): %s", build_name[b], strerror(errno));
	return fp;
}

/*
 * Writes into fresh fast tables as zebra would send them: every route via
 * one of 64 nexthops (in the lookup runs all routes share one nexthop,
 * so most /24s under a covering /16 change no entry), then every route
 * deleted, in the order given. Routes per second for each.
 */
static void write_rates(const struct family *v4, size_t n4,
			const struct family *v6, size_t n6, double rate[2][2],
			double adopt_s[2], uint32_t *parts, double *commit_s)
{
	struct fpmd_bpf *fw = load_fpmd(B_FAST, v4->n, v6->n, NULL);
	const struct family *fam[2] = { v4, v6 };
	size_t cnt[2] = { n4, n6 };
	int ret;

	fib4_close(&fib4);
	fib6_close(&fib6);
	ret = fib4_open_on(fw, v4->n, false);
	if (!ret)
		ret = fib6_open(&fib6, bpf_map__fd(fw->maps.slots_v6),
				bpf_map__fd(fw->maps.lens_v6),
				fib6_slots_for((uint32_t)v6->n), false);
	if (ret)
		die("fib4_open / fib6_open: %s", strerror(-ret));
	for (int k = 0; k < 2; k++) {
		const struct family *f = fam[k];
		double t = now(), tcommit = 0;

		for (size_t i = 0; i < cnt[k]; i++) {
			__u32 val = route_val(f, i);

			ret = k ? fib6_add(&fib6, f->r[i].addr, f->r[i].len, val) :
				  fib4_add(&fib4, f->r[i].addr, f->r[i].len, val);
			if (ret)
				die("%s write rate: add route %zu: %s", f->name,
				    i, strerror(-ret));
			if (!k && (i + 1) % COMMIT_EVERY == 0) {
				double tc = now();

				fast_commit(W_DIR24);
				tcommit += now() - tc;
			}
		}
		if (!k)
			fast_commit(W_DIR24);
		rate[k][0] = cnt[k] / (now() - t);
		if (!k)
			*commit_s = tcommit;
		if (!k)
			*parts = fib4.parts.live;
		/* A restarted fpmd: rebuild the store from the maps. The
		 * old store's teardown is the old process's exit, not part
		 * of the new one's adoption: not timed. */
		if (k)
			fib6_close(&fib6);
		else
			fib4_close(&fib4);
		t = now();
		if (k)
			ret = fib6_open(&fib6, bpf_map__fd(fw->maps.slots_v6),
					bpf_map__fd(fw->maps.lens_v6),
					fib6_slots_for((uint32_t)v6->n), true);
		else
			ret = fib4_open_on(fw, v4->n, true);
		if (ret)
			die("%s: adoption: %s", f->name, strerror(-ret));
		adopt_s[k] = now() - t;
		if (k ? fib6.nroutes != cnt[k] : fib4.nrules != cnt[k])
			die("%s: adoption found %u routes, not %zu", f->name,
			    k ? fib6.nroutes : fib4.nrules, cnt[k]);
		if (!k && fib4.entry_writes)
			die("ipv4: adoption rewrote %llu entries",
			    (unsigned long long)fib4.entry_writes);
		t = now();
		for (size_t i = 0; i < cnt[k]; i++) {
			ret = k ? fib6_del(&fib6, f->r[i].addr, f->r[i].len) :
				  fib4_del(&fib4, f->r[i].addr, f->r[i].len);
			if (ret)
				die("%s write rate: delete route %zu: %s",
				    f->name, i, strerror(-ret));
			if (!k && (i + 1) % COMMIT_EVERY == 0)
				fast_commit(W_DIR24);
		}
		if (!k)
			fast_commit(W_DIR24);
		rate[k][1] = cnt[k] / (now() - t);
	}
	fpmd_bpf__destroy(fw);
}

static void print_write_rates(size_t n4, size_t n6, double wrate[2][2],
			      const double adopt_s[2], uint32_t fresh_parts,
			      double commit_s)
{
	char nb[16];

	printf("\nFast tables, fresh, the same routes and nexthops (fpmd's "
	       "writer, one route per call):\n"
	       "| family | routes | add | delete | adoption (restart) |\n"
	       "|---|---:|---:|---:|---:|\n"
	       "| ipv4 | %s | %.0f routes/s | %.0f routes/s | %.2f s |\n",
	       fmt_count(n4, nb), wrate[0][0], wrate[0][1], adopt_s[0]);
	printf("| ipv6 | %s | %.0f routes/s | %.0f routes/s | %.2f s |\n",
	       fmt_count(n6, nb), wrate[1][0], wrate[1][1], adopt_s[1]);
	printf("IPv4: %u tbl24 parts after the fresh load (new parts "
	       "published every %d routes: %.2f s of the load's %.2f s).\n",
	       fresh_parts, COMMIT_EVERY, commit_s, n4 / wrate[0][0]);
}

static double mib(unsigned long long b)
{
	return b / 1048576.0;
}

/* Every IPv4 fast-table map of fp (fib4 open on it), memlock bytes. */
static unsigned long long fib4_memlock(struct fpmd_bpf *fp,
				       unsigned long long part[3])
{
	part[0] = chunks_memlock(bpf_map__fd(fp->maps.tbl24), &fib4.parts) +
		  map_memlock(bpf_map__fd(fp->maps.tbl24_dflt)) +
		  map_memlock(bpf_map__fd(fp->maps.tbl24_stage));
	part[1] = chunks_memlock(bpf_map__fd(fp->maps.tbl8), &fib4.t8c);
	part[2] = chunks_memlock(bpf_map__fd(fp->maps.rules_v4), &fib4.rulec);
	return part[0] + part[1] + part[2];
}

/*
 * A lab router's table, with fpmd's default sizes: 100 IPv4 routes in
 * 10.0.0.0/16 (40 /24 subnets, 40 /30 links, 20 /32 loopbacks). The
 * IPv4 maps' memory once written, and the time to adopt them.
 */
static void small_table(double *mem_mib, double *adopt_s, uint32_t *parts)
{
	struct fpmd_bpf *fs = load_fpmd(B_FAST, FPMD_MAX_ROUTES_V4, 1, NULL);
	unsigned long long part[3];
	double t;
	int ret;

	fib4_close(&fib4);
	ret = fib4_open_on(fs, FPMD_MAX_ROUTES_V4, false);
	if (ret)
		die("small table: fib4_open: %s", strerror(-ret));
	for (int i = 0; i < 100; i++) {
		uint8_t a[4] = { 10, 0, 0, 0 };
		uint8_t len;

		if (i < 40) {
			a[2] = (uint8_t)i, len = 24;
		} else if (i < 80) {
			a[2] = 200, a[3] = (uint8_t)(4 * (i - 40)), len = 30;
		} else {
			a[2] = 255, a[3] = (uint8_t)(i - 80), len = 32;
		}
		ret = fib4_add(&fib4, a, len,
			       FPMD_RT_ENCODE(FPMD_RT_NEXTHOP, i % 8));
		if (ret)
			die("small table: add route %d: %s", i, strerror(-ret));
	}
	fast_commit(W_DIR24);
	*mem_mib = mib(fib4_memlock(fs, part));
	*parts = fib4.parts.live;
	fib4_close(&fib4);
	t = now();
	ret = fib4_open_on(fs, FPMD_MAX_ROUTES_V4, true);
	*adopt_s = now() - t;
	if (ret || fib4.nrules != 100 || fib4.entry_writes)
		die("small table: adoption: %s, %u routes, %llu rewritten",
		    strerror(-ret), fib4.nrules,
		    (unsigned long long)fib4.entry_writes);
	fib4_close(&fib4);
	fpmd_bpf__destroy(fs);
}

/* One line per target and program whose .verdict names the target's
 * family: net of the floor (the program's own cost) and gross, PASS or
 * MISS on net. */
static void print_targets(struct prog *const p[], const struct result *res,
			  int nres)
{
	char nb[16];

	printf("\nTargets, program/ref with spread destinations, net of the "
	       "floor (the program's own cost):\n");
	for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
		const struct result *r = NULL;

		for (int i = 0; i < nres; i++)
			if (!strcmp(res[i].family, targets[t].family) &&
			    res[i].routes == targets[t].routes &&
			    !strcmp(res[i].pattern, "spread"))
				r = &res[i];
		int fam = strcmp(targets[t].family, "ipv4") ? V_IPV6 : V_IPV4;

		for (int k = 0; k < NPROG; k++) {
			double gross, net;

			if (!(p[k]->verdict & fam))
				continue;
			if (!r) {
				printf("  %s %s routes, %s: not measured in "
				       "this run (target <= %.2f)\n",
				       targets[t].family,
				       fmt_count(targets[t].routes, nb),
				       p[k]->col, targets[t].max);
				continue;
			}
			gross = r->ns[k] / r->ns[P_REF];
			net = (r->ns[k] - r->floor) / (r->ns[P_REF] - r->floor);
			printf("  %s %s routes, %s: %.2f net (target <= %.2f: "
			       "%s), %.2f gross\n",
			       r->family, fmt_count(r->routes, nb), p[k]->col,
			       net, targets[t].max,
			       net <= targets[t].max ? "PASS" : "MISS", gross);
		}
	}
}

/* The table of ns per packet: a column per program, its ratio to ref,
 * and net of the floor for the programs with targets. */
static void print_results(struct prog *const p[], const struct result *res,
			  int nres)
{
	char nb[16];

	printf("\n| family | routes | destinations |");
	for (int k = 0; k < NPROG; k++)
		printf(" %s ns |", p[k]->col);
	for (int k = 0; k < NPROG; k++)
		if (k != P_REF)
			printf(" %s/ref |", p[k]->col);
	for (int k = 0; k < NPROG; k++)
		if (p[k]->verdict)
			printf(" %s/ref net of floor |", p[k]->col);
	printf("\n|---|---:|---|");
	for (int k = 0; k < NPROG; k++)
		printf("---:|%s", k != P_REF ? "---:|" : "");
	for (int k = 0; k < NPROG; k++)
		if (p[k]->verdict)
			printf("---:|");
	printf("\n");
	for (int i = 0; i < nres; i++) {
		const struct result *r = &res[i];

		printf("| %s | %s | %s |", r->family,
		       fmt_count(r->routes, nb), r->pattern);
		for (int k = 0; k < NPROG; k++)
			printf(" %.1f |", r->ns[k]);
		for (int k = 0; k < NPROG; k++)
			if (k != P_REF)
				printf(" %.2f |", r->ns[k] / r->ns[P_REF]);
		for (int k = 0; k < NPROG; k++)
			if (p[k]->verdict)
				printf(" %.2f |", (r->ns[k] - r->floor) /
							  (r->ns[P_REF] -
							   r->floor));
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quick", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		{ "dump", required_argument, 0, 'd' },
		{ "warm", required_argument, 0, 'w' },
		{ "routes", required_argument, 0, 'r' },
		{ "writes", no_argument, 0, 'W' },
		{ 0 },
	};
	const char *dump = NULL, *routes = NULL;
	size_t s4_file[5], s6_file[5];
	int warm_set = 0, writes_only = 0;
	static const size_t v4_full[] = { 10, 10000, 100000, 1000000 };
	static const size_t v6_full[] = { 10, 10000, 100000 };
	static const size_t v4_quick[] = { 10, 10000, 100000 };
	static const size_t v6_quick[] = { 10, 10000 };
	struct family v4 = {
		.name = "ipv4",
		.af = AF_INET,
		.alen = 4,
		.key_size = sizeof(struct fpmd_lpm_v4),
		.addr_in = "10.255.0.1/24",
		.addr_out = "10.255.1.1/24",
		.gw_net = "10.255.1.",
		.nh_base = 0,
		.grp_base = 0,
		.src = "10.255.0.2",
	};
	struct family v6 = {
		.name = "ipv6",
		.af = AF_INET6,
		.alen = 16,
		.key_size = sizeof(struct fpmd_lpm_v6),
		.addr_in = "fd00:fb:0::1/64",
		.addr_out = "fd00:fb:1::1/64",
		.gw_net = "fd00:fb:1::",
		.nh_base = TG_NEXTHOPS,
		.grp_base = TG_GROUPS,
		.src = "fd00:fb:0::2",
	};
	const size_t *s4 = v4_full, *s6 = v6_full;
	int n4 = 4, n6 = 3, nres = 0, c, ret;
	struct fpmd_bpf *fl, *ff, *fx;
	struct fpmd_ref_bpf *ref;
	struct prog progs[NPROG], ppass, *pp[NPROG], *floor_p[1];
	struct result res[16];
	double fib4_t = 0, fib6_t = 0, fast4_t = 0, fast6_t = 0, dxr4_t = 0, t;
	double ins[2][2] = { 0 }, wrate[2][2] = { 0 }, adopt_s[2] = { 0 };
	double commit_s = 0;
	unsigned long long mem[7] = { 0 }, writes[4] = { 0 };
	struct {
		uint64_t ranges, map_bytes, rules_bytes, writes, rebuilds;
		uint32_t nrules, nshort, nlong;
		double adopt_s, v6_s; /* v6_s: measuring its IPv6 rows */
	} dxr = { 0 };
	uint32_t mem_slots = 0, mem_in_map = 0, mem_groups = 0, mem_parts = 0,
		 mem_t8c = 0, mem_rulec = 0, fresh_parts = 0, small_parts = 0;
	double small_mib = 0, small_adopt = 0, fast_mib = 0;
	struct frames fr = { 0 };
	struct utsname u;
	char nb[16];

	while ((c = getopt_long(argc, argv, "qhW", longopts, 0)) != -1) {
		switch (c) {
		case 'q':
			opt.quick = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'd':
			dump = optarg;
			break;
		case 'r':
			routes = optarg;
			break;
		case 'w':
			opt.warm_frames = strtoul(optarg, NULL, 10);
			warm_set = 1;
			break;
		case 'W':
			writes_only = 1;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (opt.quick) {
		s4 = v4_quick, n4 = 3, s6 = v6_quick, n6 = 2;
		opt.rounds = 5, opt.spread_frames = 4096, opt.hot_calls = 8;
		if (!warm_set)
			opt.warm_frames = 16384;
	}
	if (geteuid() && !dump)
		die("needs root (network namespace, BPF)");
	t_start = now();
	libbpf_set_print(libbpf_quiet);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		die("cannot count CPUs");

	/* The quick run's tables are the first routes of the full run's. */
	if (routes) {
		load_routes(&v4, routes);
		load_routes(&v6, routes);
		n4 = file_sizes(s4, n4, v4.n, s4_file);
		n6 = file_sizes(s6, n6, v6.n, s6_file);
		s4 = s4_file, s6 = s6_file;
	} else {
		size_t n6_gen = V6_MEMORY_ROUTES;

		/* --dump ipv6:N beyond the memory report's table: a table
		 * of that size, of the same mix. */
		if (dump && !strncmp(dump, "ipv6:", 5) &&
		    strtoul(dump + 5, NULL, 10) > n6_gen)
			n6_gen = strtoul(dump + 5, NULL, 10);
		gen_routes(&v4, 1000000, tg_v4_mix, TG_NMIX(tg_v4_mix));
		gen_routes(&v6, n6_gen, tg_v6_mix, TG_NMIX(tg_v6_mix));
	}
	if (dump) {
		const char *colon = strchr(dump, ':');

		if (!colon || (strncmp(dump, "ipv4:", 5) &&
			       strncmp(dump, "ipv6:", 5)))
			die("--dump %s: want ipv4:N or ipv6:N", dump);
		struct family *f = dump[3] == '4' ? &v4 : &v6;

		ret = dump_routes(f, strcmp(colon + 1, "all") ?
					     strtoul(colon + 1, NULL, 10) :
					     f->n);
		tg_free(&v4.t);
		free(v4.keys);
		tg_free(&v6.t);
		free(v6.keys);
		return ret;
	}
	progress("route sets generated");

	setup_netns(&v4, &v6);
	progress("namespace set up");
	if (writes_only) {
		write_rates(&v4, s4[n4 - 1], &v6, s6[n6 - 1], wrate, adopt_s,
			    &fresh_parts, &commit_s);
		print_write_rates(s4[n4 - 1], s6[n6 - 1], wrate, adopt_s,
				  fresh_parts, commit_s);
		return 0;
	}
	fl = load_fpmd(B_LPM, v4.n, v6.n, NULL);
	ff = load_fpmd(B_FAST, v4.n, v6.n, NULL);
	fx = load_fpmd(B_DXR, v4.n, v6.n, ff);
	ref = fpmd_ref_bpf__open_and_load();
	if (!ref)
		die("load fpmd_ref.bpf.o: %s", strerror(errno));
	ret = fib4_open_on(ff, v4.n, false);
	if (ret)
		die("fib4_open: %s", strerror(-ret));
	ret = fib4c_open_on(fx, v4.n, false);
	if (ret)
		die("fib4c_open: %s", strerror(-ret));
	ret = fib6_open(&fib6, bpf_map__fd(ff->maps.slots_v6),
			bpf_map__fd(ff->maps.lens_v6),
			fib6_slots_for((uint32_t)v6.n), false);
	if (ret)
		die("fib6_open: %s", strerror(-ret));
	progress("programs loaded");
	setup_ports(bpf_map__fd(fl->maps.ifaces),
		    bpf_map__fd(fl->maps.ifaces_direct),
		    bpf_map__fd(fl->maps.tx_ports));
	setup_ports(bpf_map__fd(ff->maps.ifaces),
		    bpf_map__fd(ff->maps.ifaces_direct),
		    bpf_map__fd(ff->maps.tx_ports));
	setup_ports(bpf_map__fd(fx->maps.ifaces),
		    bpf_map__fd(fx->maps.ifaces_direct),
		    bpf_map__fd(fx->maps.tx_ports));
	setup_ports(bpf_map__fd(ref->maps.ifaces),
		    bpf_map__fd(ref->maps.ifaces_direct),
		    bpf_map__fd(ref->maps.tx_ports));
	setup_nexthops(bpf_map__fd(fl->maps.nexthops),
		       bpf_map__fd(fl->maps.nh_groups), &v4, &v6);
	/* fx's too: it shares ff's. */
	setup_nexthops(bpf_map__fd(ff->maps.nexthops),
		       bpf_map__fd(ff->maps.nh_groups), &v4, &v6);

	progs[P_LPM] = (struct prog){
		.name = "fpmd-lpm",
		.col = "lpm",
		.fd = bpf_program__fd(fl->progs.fpmd_xdp),
		.stats_fd = bpf_map__fd(fl->maps.stats),
		.want = XDP_REDIRECT,
	};
	progs[P_FAST] = (struct prog){
		.name = "fpmd-fast",
		.col = "fast",
		.verdict = V_IPV4 | V_IPV6,
		.fd = bpf_program__fd(ff->progs.fpmd_xdp),
		.stats_fd = bpf_map__fd(ff->maps.stats),
		.want = XDP_REDIRECT,
	};
	/* Its IPv6 is fast's very code and tables: no IPv6 verdicts. */
	progs[P_DXR] = (struct prog){
		.name = "fpmd-dxr",
		.col = "dxr",
		.verdict = V_IPV4,
		.fd = bpf_program__fd(fx->progs.fpmd_xdp),
		.stats_fd = bpf_map__fd(fx->maps.stats),
		.want = XDP_REDIRECT,
	};
	progs[P_REF] = (struct prog){
		.name = "ref",
		.col = "ref",
		.fd = bpf_program__fd(ref->progs.fpmd_xdp),
		.stats_fd = bpf_map__fd(ref->maps.stats),
		.want = XDP_REDIRECT,
	};
	ppass = (struct prog){
		.name = "xdp_pass",
		.col = "pass",
		.fd = bpf_program__fd(ref->progs.fpmd_xdp_pass),
		.stats_fd = -1,
		.want = XDP_PASS,
	};
	for (int k = 0; k < NPROG; k++)
		pp[k] = &progs[k];
	floor_p[0] = &ppass;

	/* What a test run costs with a program doing nothing. */
	build_frames(&v4, 10, opt.spread_frames, &fr);
	measure(floor_p, 1, &fr, fr.n, 1, NULL, floor_spread);
	measure(floor_p, 1, &fr, opt.hot_calls, HOT_REPEAT, NULL, floor_hot);
	free(fr.buf);
	free(fr.nh);
	progress("floor: %.1f ns at repeat 1, %.1f ns at repeat %d",
		 floor_spread[0], floor_hot[0], HOT_REPEAT);

	bench_family(&v4, s4, n4, pp, bpf_map__fd(fl->maps.routes_v4), res,
		     &nres, &fib4_t, &fast4_t, &dxr4_t);
	dxr.v6_s = progs[P_DXR].spent;
	bench_family(&v6, s6, n6, pp, bpf_map__fd(fl->maps.routes_v6), res,
		     &nres, &fib6_t, &fast6_t, NULL);
	dxr.v6_s = progs[P_DXR].spent - dxr.v6_s;

	/* DXR as the lookup runs left it, then a restart: adopt, rebuild
	 * what differs (nothing). The old store's teardown is the old
	 * process's exit: not timed, as for DIR-24-8 below. */
	dxr.ranges = fib4c.ranges;
	fib4c_block_counts(&fib4c, &dxr.nshort, &dxr.nlong);
	dxr.map_bytes = fib4c_map_bytes(&fib4c);
	dxr.rules_bytes = fib4c_rules_bytes(&fib4c);
	dxr.writes = fib4c.entry_writes;
	dxr.rebuilds = fib4c.rebuilds;
	dxr.nrules = fib4c.nrules;
	fib4c_close(&fib4c);
	t = now();
	ret = fib4c_open_on(fx, v4.n, true);
	if (!ret)
		ret = fib4c_commit(&fib4c);
	dxr.adopt_s = now() - t;
	if (ret || fib4c.nrules != dxr.nrules || fib4c.entry_writes)
		die("DXR adoption: %s, %u of %u prefixes, %llu writes",
		    strerror(-ret), fib4c.nrules, dxr.nrules,
		    (unsigned long long)fib4c.entry_writes);
	fib4c_close(&fib4c);
	progress("DXR adoption measured");

	/* Memory at the full v4 table and V6_MEMORY_ROUTES IPv6 routes (not
	 * in the kernel FIB: only the maps are measured). */
	if (!opt.quick) {
		lpm_put_batch(bpf_map__fd(fl->maps.routes_v6), &v6,
			      s6[n6 - 1], v6.n);
		t = fast_put(&v6, s6[n6 - 1], v6.n, NULL);
		progress("ipv6: %zu more routes for the memory report in "
			 "%.2f s", v6.n - s6[n6 - 1], t);
	}

	{
		unsigned long long p4[3],
				   h6 = map_memlock(bpf_map__fd(ff->maps.slots_v6)),
				   l6 = map_memlock(bpf_map__fd(ff->maps.lens_v6)),
				   r4 = map_memlock(bpf_map__fd(fl->maps.routes_v4)),
				   r6 = map_memlock(bpf_map__fd(fl->maps.routes_v6));

		fib4_memlock(ff, p4);
		mem_parts = fib4.parts.live;
		mem_t8c = fib4.t8c.live;
		mem_rulec = fib4.rulec.live;
		for (uint32_t i = 0; i < fib6.nslots / FPMD_V6_CHUNK_SLOTS; i++)
			h6 += map_memlock(fib6.chunks[i].fd);
		mem[0] = p4[0], mem[1] = p4[1], mem[2] = p4[2], mem[3] = h6,
		mem[4] = l6, mem[5] = r4, mem[6] = r6;
		mem_slots = fib6.nslots;
		mem_in_map = fib6.in_map;
		mem_groups = fib4.groups_used;
		writes[0] = fib4.entry_writes;
		writes[1] = fib4.syscalls;
		writes[2] = fib6.map_writes;
		writes[3] = fib6.rebuilds;
	}
	write_rates(&v4, s4[n4 - 1], &v6, s6[n6 - 1], wrate, adopt_s,
		    &fresh_parts, &commit_s);
	progress("fast-table write rates measured");
	small_table(&small_mib, &small_adopt, &small_parts);
	progress("small table measured");
	ins[0][0] = lpm_insert_rate(&v4, s4[n4 - 1], 0);
	ins[0][1] = lpm_insert_rate(&v4, s4[n4 - 1], 1);
	ins[1][0] = lpm_insert_rate(&v6, s6[n6 - 1], 0);
	ins[1][1] = lpm_insert_rate(&v6, s6[n6 - 1], 1);
	progress("insertion rates measured");

	uname(&u);
	printf("fpmd lookup benchmark%s: %s %s, %d CPUs\n",
	       opt.quick ? " (--quick)" : "", u.sysname, u.release, ncpus);
	printf("BPF_PROG_TEST_RUN ns per packet, median of %d rounds, the "
	       "%d programs interleaved;\n",
	       opt.rounds, NPROG);
	printf("spread: %zu frames to distinct destinations across the table, "
	       "repeat 1 each;\nhot: one destination, %d calls x repeat %d.\n",
	       opt.spread_frames, opt.hot_calls, HOT_REPEAT);
	if (opt.warm_frames)
		printf("Before each program's spread block, %zu untimed frames "
		       "to other spread destinations:\nits tables as its own "
		       "stream of packets keeps them, not as the other "
		       "programs left them.\n",
		       opt.warm_frames);
	else
		printf("--warm 0: each spread block starts with the tables as "
		       "the other programs left them.\n");
	printf("lpm: fpmd with LPM tries; fast: fpmd with DIR-24-8 (IPv4) / "
	       "a direct stage per /19 and\nbinary search on prefix lengths "
	       "(IPv6); dxr: fpmd with DXR (IPv4) and fast's very IPv6\n"
	       "tables (shared maps), so its IPv6 rows differ from fast's "
	       "only by run-to-run noise\n(measured anyway: %.1f s, %.0f%% of "
	       "the run; no IPv6 verdicts for dxr); ref: bpf_fib_lookup()\non "
	       "the kernel FIB. Every route via one of %d gateways or %d ECMP "
	       "groups (random,\nseeded), each rewrite checked against the "
	       "longest match.\nRoute mix:\n",
	       dxr.v6_s, 100 * dxr.v6_s / (now() - t_start), TG_NEXTHOPS,
	       TG_GROUPS);
	if (routes)
		printf("Tables: %s (the file's first routes of each family; "
		       "nexthop keys hashed onto\nthe gateways and groups)\n",
		       routes);
	else
		printf("Tables: synthetic (tests/tablegen.h)\n");
	print_mix(&v4, s4[n4 - 1]);
	print_mix(&v6, s6[n6 - 1]);
	print_results(pp, res, nres);
	printf(
	    "\nFloor (an XDP_PASS program, same method): %.1f ns at repeat 1 "
	    "(spread), %.1f ns at repeat %d (hot).\n",
	    floor_spread[0], floor_hot[0], HOT_REPEAT);
	printf("Samples above %d ns dropped as preempted: %zu of %zu.\n",
	       OUTLIER_NS, outliers, samples);
	print_targets(pp, res, nres);
	printf("\n| family | routes | fast tables (fpmd's writer) | DXR "
	       "(fpmd's writer) | LPM one by one | LPM batched (%d/call) | "
	       "kernel FIB, rtnetlink (%d/sendmsg) |\n"
	       "|---|---:|---:|---:|---:|---:|---:|\n",
	       MAP_BATCH, FIB_BATCH);
	printf("| ipv4 | %s | %.0f routes/s | %.0f routes/s | %.0f routes/s | "
	       "%.0f routes/s | %.0f routes/s |\n",
	       fmt_count(s4[n4 - 1], nb), s4[n4 - 1] / fast4_t,
	       s4[n4 - 1] / dxr4_t, ins[0][0], ins[0][1], s4[n4 - 1] / fib4_t);
	printf("| ipv6 | %s | %.0f routes/s | - | %.0f routes/s | %.0f "
	       "routes/s | %.0f routes/s |\n",
	       fmt_count(s6[n6 - 1], nb), s6[n6 - 1] / fast6_t, ins[1][0],
	       ins[1][1], s6[n6 - 1] / fib6_t);
	printf("Fast tables in the lookup runs (routes over %d nexthops per "
	       "family): "
	       "%llu tbl24/tbl8 entry changes\nin %llu tbl24 writes for IPv4, "
	       "%llu slots_v6 writes (%llu length-set rebuilds) for IPv6;\n"
	       "DXR: %llu entries written (dxr_dir, ranges, values), %llu /16 "
	       "rebuilds. A commit every %d routes.\n",
	       TG_NEXTHOPS, writes[0], writes[1], writes[2], writes[3],
	       (unsigned long long)dxr.writes,
	       (unsigned long long)dxr.rebuilds, COMMIT_EVERY);
	print_write_rates(s4[n4 - 1], s6[n6 - 1], wrate, adopt_s,
			  fresh_parts, commit_s);
	printf("\nSmall table (a lab router: 100 IPv4 routes in 10.0.0.0/16, "
	       "default sizes):\n"
	       "| family | routes | IPv4 map memory | tbl24 parts | adoption "
	       "(restart) |\n|---|---:|---:|---:|---:|\n"
	       "| ipv4 | 100 | %.3f MiB | %u | %.3f s |\n",
	       small_mib, small_parts, small_adopt);

	{
		unsigned long long t24 = mem[0], t8 = mem[1], rl = mem[2],
				   h6 = mem[3], l6 = mem[4], r4 = mem[5],
				   r6 = mem[6];
		size_t m6 = opt.quick ? s6[n6 - 1] : v6.n;

		printf("\nMap memory (kernel memlock accounting, fdinfo) at "
		       "%s IPv4 + %s IPv6 routes:\n",
		       fmt_count(s4[n4 - 1], nb), fmt_count(m6, nb + 8));
		printf("| map | MiB | notes |\n|---|---:|---|\n");
		printf("| tbl24 | %.1f | %u of %u parts x %u x 8 bytes, "
		       "+ tbl24_dflt, tbl24_stage |\n",
		       mib(t24), mem_parts, FPMD_TBL24_PARTS,
		       FPMD_TBL24_PART_WORDS);
		printf("| tbl8 | %.1f | %u chunks x %u groups x 1 KiB (%u "
		       "groups in use) |\n",
		       mib(t8), mem_t8c, FPMD_TBL8_CHUNK_GROUPS, mem_groups);
		printf("| rules_v4 | %.1f | the IPv4 prefixes, for adoption; "
		       "%u chunks x %u slots x 16 bytes |\n",
		       mib(rl), mem_rulec, FPMD_RULES_CHUNK);
		printf("| slots_v6 | %.1f | %u slots x 24 bytes, %u routes + "
		       "markers in use |\n",
		       mib(h6), mem_slots, mem_in_map);
		printf("| lens_v6 | %.3f | |\n", mib(l6));
		printf("| **fast total** | **%.1f** | |\n",
		       mib(t24 + t8 + rl + h6 + l6));
		printf("| routes_v4 (LPM) | %.1f | |\n", mib(r4));
		printf("| routes_v6 (LPM) | %.1f | |\n", mib(r6));
		printf("| **LPM total** | **%.1f** | |\n", mib(r4 + r6));
		fast_mib = mib(t24 + t8 + rl + h6 + l6);
	}
	printf("\ndxr = DXR for IPv4 (fpmd/fib/fib4c.c) at %s routes, as the "
	       "lookup runs left it: %llu range words (%u /16s with short\n"
	       "ranges, two a word, %u with long), %.2f MiB of lookup maps (dxr_dir, "
	       "dxr_val, range chunks), %.2f MiB of rules_v4.\n"
	       "DXR adoption of %u prefixes (restart): %.2f s, no entry "
	       "rewritten.\n",
	       fmt_count(s4[n4 - 1], nb), (unsigned long long)dxr.ranges,
	       dxr.nshort, dxr.nlong, mib(dxr.map_bytes), mib(dxr.rules_bytes),
	       dxr.nrules, dxr.adopt_s);
	/* Issue 13's targets: adoption in proportion, maps no larger at
	 * 1M than the preallocated layout's 111.9 MiB. */
	printf("\nTargets, adoption and memory:\n");
	printf("  small table (100 IPv4 routes) adoption: %.3f s (target "
	       "<= 0.3 s: %s)\n",
	       small_adopt, small_adopt <= 0.3 ? "met" : "not met");
	if (!opt.quick) {
		printf("  ipv4 %s routes adoption: %.2f s (target <= 1 s: "
		       "%s)\n",
		       fmt_count(s4[n4 - 1], nb), adopt_s[0],
		       adopt_s[0] <= 1.0 ? "met" : "not met");
		printf("  fast tables at 1M IPv4 + 200k IPv6: %.1f MiB "
		       "(target <= 111.9 MiB: %s)\n",
		       fast_mib, fast_mib <= 111.9 ? "met" : "not met");
		/* Issue 16's: the compact table's lookup structure. */
		printf("  DXR lookup structure at %s IPv4 routes: %.2f MiB "
		       "(target <= 8 MiB: %s); adoption beside it: %.2f MiB "
		       "of rules_v4\n",
		       fmt_count(s4[n4 - 1], nb), mib(dxr.map_bytes),
		       mib(dxr.map_bytes) <= 8.0 ? "met" : "not met",
		       mib(dxr.rules_bytes));
	}
	printf("\nTotal run time %.0f s; command:", now() - t_start);
	for (int k = 0; k < argc; k++)
		printf(" %s", argv[k]);
	printf("\n");

	fib4_close(&fib4);
	fib6_close(&fib6);
	fpmd_ref_bpf__destroy(ref);
	fpmd_bpf__destroy(fx);
	fpmd_bpf__destroy(ff);
	fpmd_bpf__destroy(fl);
	mnl_socket_close(nl);
	tg_free(&v4.t);
	free(v4.keys);
	tg_free(&v6.t);
	free(v6.keys);
	return 0;
}
