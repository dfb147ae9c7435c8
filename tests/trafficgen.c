// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Live-frame traffic generator and sinks for tests/bench_live.py, run by
 * hand as root (not part of make check):
 *
 *   trafficgen send --netns NS --dev IF --dmac MAC --src ADDR
 *                   (--dst ADDR | --dsts FILE) --seconds S
 *                   [--cpu N] [--start-at T]
 *   trafficgen sink --netns NS IF...
 *   trafficgen ref  --netns NS IF...
 *   trafficgen floor --netns NS --dmac MAC IN OUT
 *
 * send: routable UDP (IPv4 or IPv6, by --src) out of IF to the router's MAC
 *   at full speed on one core for S seconds, with BPF_PROG_TEST_RUN and
 *   BPF_F_TEST_XDP_LIVE_FRAMES: tests/trafficgen.bpf.c's gen_xdp writes the
 *   whole header of every frame (the pages come back carrying the router's
 *   rewrites), the destination taken in turn from --dsts (16-byte records,
 *   a power of two of them; IPv4 in the first 4 bytes) or the one --dst, the
 *   IPv4 and UDP checksums computed, and returns XDP_TX, which the kernel
 *   carries out: the frame leaves by the ingress_ifindex interface. Prints
 *   {"sent": N, "seconds": T, "calls": C, "loop_seconds": L, "start": A,
 *   "end": B, "ready": R}: T is wall time from the first call to the end
 *   of the last (A to B, CLOCK_MONOTONIC), L the time the kernel spent in
 *   the frame loop, R when it was loaded and ready to send. --cpu pins it
 *   (veth picks the receive queue by the sending CPU);
 *   --start-at waits, loaded, until CLOCK_MONOTONIC T, so that generators
 *   on several CPUs send over the same window.
 * sink: sink_xdp on each IF (XDP_DROP, counting the benchmark's UDP frames).
 * ref: bpf/fpmd_ref.bpf.o, fpmd's program with bpf_fib_lookup() in place of
 *   fpmd's tables, on each IF, with the ifaces and tx_ports maps set up as
 *   fpmd sets them (every IF enabled, forwarding v4 and v6, a tx port).
 * floor: tests/xdp_floor.bpf.c on IN, the redirect floor: each frame gets
 *   destination MAC (--dmac) and OUT's MAC as source and is redirected out
 *   of OUT through a devmap; nothing parsed beyond Ethernet, no lookup.
 *
 * sink, ref and floor print one JSON line of counters per line read on standard
 * input and detach when it closes (or on SIGTERM / SIGINT), so a harness
 * that dies takes its programs with it.
 *
 * --netns enters /run/netns/NS with setns() (as fpmd --netns does; ip netns
 * exec would hide /sys/fs/bpf, though nothing here pins).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fpmd_maps.h"
#include "tool.h"
#include "fpmd_ref.skel.h"
#include "trafficgen.skel.h"
#include "xdp_floor.skel.h"

#define UDP_PORT 9	 /* discard; sink_xdp counts frames to it */
#define PAYLOAD 18	 /* 60-byte IPv4 frames, 80-byte IPv6 */
#define MAX_IFS 16
#define CALL_SECONDS 1.0 /* one test run: long enough to hide its setup */

struct dst {
	uint8_t addr[16];
};

static struct {
	const char *netns, *dev, *dmac, *src, *dst, *dsts;
	double seconds, start_at;
	int cpu, dump;
} opt = { .seconds = 1, .cpu = -1 };

static volatile sig_atomic_t stop;

static void enter_netns(const char *name)
{
	char path[256];
	int fd;

	if (!name)
		return;
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		die("enter network namespace %s: %s", path, strerror(errno));
	close(fd);
}

struct ifinfo {
	const char *name;
	int ifindex;
	uint8_t mac[ETH_ALEN];
	int mtu;
};

static void get_ifinfo(const char *name, struct ifinfo *i)
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	i->name = name;
	i->ifindex = if_nametoindex(name);
	if (s < 0 || !i->ifindex || strlen(name) >= IFNAMSIZ)
		die("interface %s: %s", name, strerror(errno));
	strcpy(ifr.ifr_name, name);
	if (ioctl(s, SIOCGIFHWADDR, &ifr))
		die("interface %s: MAC: %s", name, strerror(errno));
	memcpy(i->mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	if (ioctl(s, SIOCGIFMTU, &ifr))
		die("interface %s: MTU: %s", name, strerror(errno));
	i->mtu = ifr.ifr_mtu;
	close(s);
}

static void parse_mac(const char *s, uint8_t *mac)
{
	unsigned int b[ETH_ALEN];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4],
		   &b[5]) != ETH_ALEN)
		die("bad MAC address %s", s);
	for (int i = 0; i < ETH_ALEN; i++)
		mac[i] = b[i];
}

/* One's complement sum of 16-bit words as they lie in memory. */
static uint64_t sum16(const void *p, size_t len)
{
	const uint16_t *w = p;
	uint64_t s = 0;

	for (size_t i = 0; i < len / 2; i++)
		s += w[i];
	return s;
}

static uint32_t fold32(uint64_t s)
{
	while (s >> 32)
		s = (s & 0xffffffff) + (s >> 32);
	return s;
}

/* --- send --- */

/*
 * The header template (destination and checksums zero) and the sums of its
 * fixed parts; gen_xdp adds the destination's words for each frame.
 */
static size_t build_template(struct trafficgen_bpf *skel, const uint8_t *smac,
			     const uint8_t *dmac, int af, const uint8_t *src,
			     uint8_t *frame)
{
	struct ethhdr *eth = (void *)frame;
	size_t l4len = sizeof(struct udphdr) + PAYLOAD;
	struct udphdr *udp;
	uint8_t pseudo[40] = { 0 };
	size_t len;

	memset(frame, 0, 128);
	memcpy(eth->h_dest, dmac, ETH_ALEN);
	memcpy(eth->h_source, smac, ETH_ALEN);
	if (af == AF_INET) {
		struct iphdr *ip = (void *)(eth + 1);

		eth->h_proto = htons(ETH_P_IP);
		ip->version = 4;
		ip->ihl = 5;
		ip->tot_len = htons(sizeof(*ip) + l4len);
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		memcpy(&ip->saddr, src, 4);
		skel->rodata->ip_sum = fold32(sum16(ip, sizeof(*ip)));
		udp = (void *)(ip + 1);
		/* pseudo header: saddr, daddr (0 here), 0, proto, length */
		memcpy(pseudo, src, 4);
		pseudo[9] = IPPROTO_UDP;
		pseudo[10] = l4len >> 8;
		pseudo[11] = l4len & 0xff;
		skel->rodata->udp_sum = fold32(sum16(pseudo, 12));
	} else {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		eth->h_proto = htons(ETH_P_IPV6);
		ip6->version = 6;
		ip6->payload_len = htons(l4len);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = 64;
		memcpy(&ip6->saddr, src, 16);
		udp = (void *)(ip6 + 1);
		/* saddr, daddr (0 here), upper-layer length, 0, next header */
		memcpy(pseudo, src, 16);
		pseudo[34] = l4len >> 8;
		pseudo[35] = l4len & 0xff;
		pseudo[39] = IPPROTO_UDP;
		skel->rodata->udp_sum = fold32(sum16(pseudo, 40));
		skel->rodata->v6 = 1;
	}
	udp->source = htons(UDP_PORT);
	udp->dest = htons(UDP_PORT);
	udp->len = htons(l4len);
	skel->rodata->udp_sum =
	    fold32((uint64_t)skel->rodata->udp_sum + sum16(udp, sizeof(*udp)));
	len = (uint8_t *)(udp + 1) - frame;
	memcpy(skel->bss->hdr, frame, len);
	return len + PAYLOAD;
}

/* Destinations: --dst, or the records of --dsts (a power of two of them). */
static struct dst *load_dsts(int af, size_t *n)
{
	struct dst *d;
	struct stat st;
	FILE *f;

	if (opt.dst) {
		d = calloc(1, sizeof(*d));
		if (!d || inet_pton(af, opt.dst, d->addr) != 1)
			die("bad destination %s", opt.dst);
		*n = 1;
		return d;
	}
	f = fopen(opt.dsts, "rb");
	if (!f || fstat(fileno(f), &st))
		die("open %s: %s", opt.dsts, strerror(errno));
	*n = st.st_size / sizeof(*d);
	if (!*n || (*n & (*n - 1)) || st.st_size % sizeof(*d))
		die("%s: %lld bytes, not a power of two of %zu-byte records",
		    opt.dsts, (long long)st.st_size, sizeof(*d));
	d = malloc(st.st_size);
	if (!d || fread(d, sizeof(*d), *n, f) != *n)
		die("read %s: %s", opt.dsts, strerror(errno));
	fclose(f);
	return d;
}

static int cmd_send(int argc, char **argv)
{
	struct trafficgen_bpf *skel;
	struct ifinfo gen;
	uint8_t dmac[ETH_ALEN], src[16];
	/* The frame 2 bytes into a 4-aligned buffer, so that its IP
	 * header (after 14 bytes of Ethernet) is 4-aligned as struct iphdr
	 * wants (UBSan's alignment check, in the test build). */
	_Alignas(4) uint8_t buf[2 + 128];
	uint8_t *frame = buf + 2;
	int af, fd;
	size_t n, len, bytes;
	struct dst *d;
	void *mem;
	uint64_t sent = 0, calls = 0;
	double loop_ns = 0, t0, t, ready;
	__u32 repeat = 1 << 16;

	if (optind != argc || !opt.dev || !opt.dmac || !opt.src ||
	    !opt.dst == !opt.dsts)
		die("send needs --dev, --dmac, --src and --dst or --dsts");
	af = strchr(opt.src, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(af, opt.src, src) != 1)
		die("bad source address %s", opt.src);
	parse_mac(opt.dmac, dmac);
	d = load_dsts(af, &n);
	enter_netns(opt.netns);
	get_ifinfo(opt.dev, &gen);
	if (opt.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(opt.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			die("CPU %d: %s", opt.cpu, strerror(errno));
	}

	skel = trafficgen_bpf__open();
	if (!skel)
		die("open trafficgen.bpf.o: %s", strerror(errno));
	len = build_template(skel, gen.mac, dmac, af, src, frame);
	skel->rodata->dst_mask = n - 1;
	bpf_map__set_max_entries(skel->maps.dsts, n);
	if (trafficgen_bpf__load(skel))
		die("load trafficgen.bpf.o: %s", strerror(errno));
	fd = bpf_map__fd(skel->maps.dsts);
	bytes = n * sizeof(*d);
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		die("mmap dsts: %s", strerror(errno));
	memcpy(mem, d, bytes);
	munmap(mem, bytes);
	free(d);

	if (opt.dump) {
		uint8_t out[128];
		struct xdp_md ctx = { .data_end = len,
				      .ingress_ifindex = gen.ifindex };
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
			    .data_size_in = len, .data_out = out,
			    .data_size_out = sizeof(out), .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = 1);

		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.gen_xdp),
					   &o))
			die("BPF_PROG_TEST_RUN: %s", strerror(errno));
		printf("verdict %u, %u bytes:", o.retval, o.data_size_out);
		for (__u32 i = 0; i < o.data_size_out; i++)
			printf(" %02x", out[i]);
		printf("\n");
		trafficgen_bpf__destroy(skel);
		return 0;
	}

	/* Together with the other generators; a late start shows in "start",
	 * and "ready" says whether loading or waking up made it late. */
	ready = now();
	while (opt.start_at > 0 && !stop && (t = now()) < opt.start_at) {
		double w = opt.start_at - t;
		struct timespec ts = { .tv_sec = (time_t)w };

		ts.tv_nsec = (long)((w - (time_t)w) * 1e9);
		nanosleep(&ts, NULL);
	}
	t0 = now();
	for (t = t0; t - t0 < opt.seconds && !stop;) {
		struct xdp_md ctx = { .data_end = len,
				      .ingress_ifindex = gen.ifindex };
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
			    .data_size_in = len, .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = repeat,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
		double t1, dt;

		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.gen_xdp),
					   &o))
			die("BPF_PROG_TEST_RUN (live frames) on %s: %s",
			    opt.dev, strerror(errno));
		t1 = now();
		dt = t1 - t;
		t = t1;
		sent += repeat;
		calls++;
		loop_ns += (double)o.duration * repeat;
		/* Next call: CALL_SECONDS long, or what is left. */
		if (dt > 0) {
			double left = opt.seconds - (t - t0);
			double want = left < CALL_SECONDS ? left : CALL_SECONDS;
			double r = repeat * want / dt;

			repeat = r < 1024 ? 1024 : r > 1e8 ? 100000000 : r;
		}
	}
	printf("{\"sent\": %llu, \"seconds\": %.6f, \"calls\": %llu, "
	       "\"loop_seconds\": %.6f, \"start\": %.6f, \"end\": %.6f, "
	       "\"ready\": %.6f}\n",
	       (unsigned long long)sent, t - t0, (unsigned long long)calls,
	       loop_ns / 1e9, t0, t, ready);
	trafficgen_bpf__destroy(skel);
	return 0;
}

/* --- sink and ref: attach, answer counter requests, detach --- */

static struct ifinfo ifs[MAX_IFS];
static int nifs;

static void on_signal(int sig)
{
	stop = 1;
}

static void attach_all(int prog_fd)
{
	for (int i = 0; i < nifs; i++)
		if (bpf_xdp_attach(ifs[i].ifindex, prog_fd, XDP_FLAGS_DRV_MODE,
				   NULL))
			die("attach XDP (native) to %s: %s", ifs[i].name,
			    strerror(errno));
}

static void detach_all(void)
{
	for (int i = 0; i < nifs; i++)
		bpf_xdp_detach(ifs[i].ifindex, XDP_FLAGS_DRV_MODE, NULL);
}

/* Until stdin closes: one line in, one JSON line of counters out. */
static void serve(void (*print)(void *), void *arg)
{
	struct sigaction sa = { .sa_handler = on_signal };
	char line[64];

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (!stop && fgets(line, sizeof(line), stdin)) {
		print(arg);
		fflush(stdout);
	}
	detach_all();
}

static void get_ifs(int argc, char **argv)
{
	if (argc - optind < 1 || argc - optind > MAX_IFS)
		die("name 1 to %d interfaces", MAX_IFS);
	enter_netns(opt.netns);
	for (int i = optind; i < argc; i++)
		get_ifinfo(argv[i], &ifs[nifs++]);
}

static __u64 percpu_sum(int fd, const void *key, size_t size_each)
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 v[ncpus * (size_each / 8)], sum = 0;

	if (bpf_map_lookup_elem(fd, key, v))
		return 0;
	for (int c = 0; c < ncpus; c++)
		sum += v[c * (size_each / 8)];
	return sum;
}

/* {"IF": total, ..., "percpu": {"IF": [cpu0, cpu1, ...], ...}} */
static void print_sink(void *arg)
{
	struct trafficgen_bpf *skel = arg;
	int fd = bpf_map__fd(skel->maps.sink_count);
	int ncpus = libbpf_num_possible_cpus();
	__u64 v[ncpus];

	printf("{");
	for (int i = 0; i < nifs; i++) {
		__u32 k = ifs[i].ifindex;

		printf("%s\"%s\": %llu", i ? ", " : "", ifs[i].name,
		       (unsigned long long)percpu_sum(fd, &k, sizeof(__u64)));
	}
	printf(", \"percpu\": {");
	for (int i = 0; i < nifs; i++) {
		__u32 k = ifs[i].ifindex;

		if (bpf_map_lookup_elem(fd, &k, v))
			memset(v, 0, sizeof(v));
		printf("%s\"%s\": [", i ? ", " : "", ifs[i].name);
		for (int c = 0; c < ncpus; c++)
			printf("%s%llu", c ? ", " : "",
			       (unsigned long long)v[c]);
		printf("]");
	}
	printf("}}\n");
}

static int cmd_sink(int argc, char **argv)
{
	struct trafficgen_bpf *skel;
	int ncpus = libbpf_num_possible_cpus();
	__u64 zero[ncpus];

	get_ifs(argc, argv);
	memset(zero, 0, sizeof(zero));
	skel = trafficgen_bpf__open_and_load();
	if (!skel)
		die("load trafficgen.bpf.o: %s", strerror(errno));
	for (int i = 0; i < nifs; i++) {
		__u32 k = ifs[i].ifindex;

		if (bpf_map_update_elem(bpf_map__fd(skel->maps.sink_count), &k,
					zero, BPF_ANY))
			die("sink_count: %s", strerror(errno));
	}
	attach_all(bpf_program__fd(skel->progs.sink_xdp));
	serve(print_sink, skel);
	trafficgen_bpf__destroy(skel);
	return 0;
}

/* forwarded, and everything else the program saw, per interface. */
static void print_ref(void *arg)
{
	struct fpmd_ref_bpf *skel = arg;
	int fd = bpf_map__fd(skel->maps.stats);

	printf("{");
	for (int i = 0; i < nifs; i++) {
		__u64 fwd = 0, other = 0;

		for (int r = 0; r < FPMD_R_MAX; r++) {
			__u32 k = FPMD_STAT_INDEX(i, r);
			__u64 v = percpu_sum(fd, &k, sizeof(struct fpmd_stat));

			if (r == FPMD_R_FORWARDED)
				fwd = v;
			else if (r != FPMD_R_TX)
				other += v;
		}
		printf("%s\"%s\": {\"forwarded\": %llu, \"other\": %llu}",
		       i ? ", " : "", ifs[i].name, (unsigned long long)fwd,
		       (unsigned long long)other);
	}
	printf("}\n");
}

static int cmd_ref(int argc, char **argv)
{
	__u32 flags = FPMD_IF_F_ENABLED | FPMD_IF_F_FWD_V4 | FPMD_IF_F_FWD_V6;
	struct fpmd_ref_bpf *skel;

	get_ifs(argc, argv);
	skel = fpmd_ref_bpf__open_and_load();
	if (!skel)
		die("load fpmd_ref.bpf.o: %s", strerror(errno));
	for (int i = 0; i < nifs; i++) {
		struct fpmd_iface in = { .slot = i, .flags = flags,
					 .mtu = ifs[i].mtu };
		struct bpf_devmap_val tx = { .ifindex = ifs[i].ifindex };
		__u32 k = ifs[i].ifindex;

		memcpy(in.mac, ifs[i].mac, ETH_ALEN);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.ifaces), &k, &in,
					BPF_ANY) ||
		    bpf_map_update_elem(bpf_map__fd(skel->maps.tx_ports), &k,
					&tx, BPF_ANY))
			die("ifaces / tx_ports for %s: %s", ifs[i].name,
			    strerror(errno));
		/* The array copy fpmd keeps too (fpmd_maps.h). */
		in.flags |= FPMD_IF_F_PRESENT;
		if (k < FPMD_IFINDEX_DIRECT &&
		    bpf_map_update_elem(bpf_map__fd(skel->maps.ifaces_direct),
					&k, &in, BPF_ANY))
			die("ifaces_direct for %s: %s", ifs[i].name,
			    strerror(errno));
	}
	attach_all(bpf_program__fd(skel->progs.fpmd_xdp));
	serve(print_ref, skel);
	fpmd_ref_bpf__destroy(skel);
	return 0;
}

static void print_floor(void *arg)
{
	printf("{}\n"); /* no counters: the floor does nothing it need not */
}

static int cmd_floor(int argc, char **argv)
{
	struct bpf_devmap_val tx = { 0 };
	struct xdp_floor_bpf *skel;
	uint8_t macs[2 * ETH_ALEN];
	__u32 k = 0;

	if (argc - optind != 2 || !opt.dmac)
		die("floor needs --dmac and two interfaces, IN and OUT");
	parse_mac(opt.dmac, macs);
	get_ifs(argc, argv);
	memcpy(macs + ETH_ALEN, ifs[1].mac, ETH_ALEN);
	skel = xdp_floor_bpf__open();
	if (!skel)
		die("open xdp_floor.bpf.o: %s", strerror(errno));
	memcpy((void *)skel->rodata->floor_macs, macs, sizeof(macs));
	if (xdp_floor_bpf__load(skel))
		die("load xdp_floor.bpf.o: %s", strerror(errno));
	tx.ifindex = ifs[1].ifindex;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.floor_tx), &k, &tx,
				BPF_ANY))
		die("floor_tx: egress %s: %s", ifs[1].name, strerror(errno));
	nifs = 1; /* attached to IN only; OUT just transmits */
	attach_all(bpf_program__fd(skel->progs.floor_xdp));
	serve(print_floor, NULL);
	xdp_floor_bpf__destroy(skel);
	return 0;
}

/* --- command line --- */

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "send", cmd_send,
	  "send --netns NS --dev IF --dmac MAC --src ADDR (--dst ADDR | --dsts "
	  "FILE)\n       --seconds S [--cpu N] [--start-at T] [--dump]   "
	  "live-frame UDP out of IF\n"
	  "       (--dump: print one frame, sent nowhere; --start-at: wait "
	  "until\n       CLOCK_MONOTONIC T)" },
	{ "sink", cmd_sink, "sink --netns NS IF...   count and drop (XDP)" },
	{ "ref", cmd_ref,
	  "ref --netns NS IF...    bpf_fib_lookup reference router (XDP)" },
	{ "floor", cmd_floor,
	  "floor --netns NS --dmac MAC IN OUT   redirect floor: MACs, devmap "
	  "redirect\n       from IN to OUT (XDP), no parsing, no lookup" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  trafficgen %s\n", commands[i].help);
	fprintf(out, "sink, ref and floor print a JSON line of counters per "
		     "line read on stdin\nand detach when stdin closes.\n");
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "netns", required_argument, 0, 'N' },
		{ "dev", required_argument, 0, 'i' },
		{ "dmac", required_argument, 0, 'm' },
		{ "src", required_argument, 0, 's' },
		{ "dst", required_argument, 0, 'd' },
		{ "dsts", required_argument, 0, 'f' },
		{ "seconds", required_argument, 0, 't' },
		{ "cpu", required_argument, 0, 'c' },
		{ "dump", no_argument, 0, 'D' },
		{ "start-at", required_argument, 0, 'S' },
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	const struct command *cmd = NULL;
	int c;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		usage(stderr);
		return 2;
	}
	argc--, argv++;
	while ((c = getopt_long(argc, argv, "h", longopts, 0)) != -1) {
		switch (c) {
		case 'N': opt.netns = optarg; break;
		case 'i': opt.dev = optarg; break;
		case 'm': opt.dmac = optarg; break;
		case 's': opt.src = optarg; break;
		case 'd': opt.dst = optarg; break;
		case 'f': opt.dsts = optarg; break;
		case 't': opt.seconds = atof(optarg); break;
		case 'c': opt.cpu = atoi(optarg); break;
		case 'D': opt.dump = 1; break;
		case 'S': opt.start_at = atof(optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (geteuid())
		die("needs root (BPF, network namespaces)");
	libbpf_set_print(libbpf_quiet);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmd->run(argc, argv);
}
