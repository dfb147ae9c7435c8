// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmd: options, start-up, the event loop and a clean stop.
 *
 * One thread does everything (control socket, link events, guard timer),
 * so the maps have a single writer and no locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <linux/neighbour.h>
#include <linux/netconf.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/rtnetlink.h>
#include <linux/xfrm.h>
#include <bpf/bpf.h>

#include "api/ctl.h"
#include "feed/fpm.h"
#include "fpmd.h"
#include "kernel/guard.h"
#include "kernel/iface.h"
#include "kernel/instance.h"
#include "common/log.h"
#include "common/phase.h"
#include "fib/maps.h"
#include "api/metrics.h"
#include "kernel/nl.h"
#include "notify.h"
#include "feed/plugin.h"
#include "rib/rib.h"
#include "fib/xdp.h"


static const char *config_file; /* -f; NULL: the default file if any */
static struct cli_sets cli;     /* the command line, re-applied on reload */
static bool dryrun, daemon_mode;

enum {
	OPT_KEEP = 256,
	OPT_NF_BYPASS,
	OPT_XDP_MODE,
	OPT_SOCK_GROUP,
	OPT_GUARD_MS,
	OPT_MAX_V4,
	OPT_MAX_V6,
	OPT_MAX_NH,
	OPT_MAX_GRP,
	OPT_MAX_NEIGH,
	OPT_FPM_ADDR,
	OPT_FPM_PORT,
	OPT_NO_FPM,
	OPT_FPM_SETTLE,
	OPT_FPM_HOLD,
	OPT_FPM_STATUS,
	OPT_PLUGIN_SOCK,
	OPT_NO_PLUGIN,
	OPT_SHOW_DEFAULT,
	OPT_FIB4,
	OPT_FIB6,
	OPT_METRICS,
	OPT_METRICS_ADDR,
	OPT_METRICS_PORT,
};

struct opt_doc {
	struct option o;
	int shortopt;
	const char *arg, *help;
	/* The YANG leaf (under /fpmd:fpmd) the option sets, and the value
	 * of a flag; path2 is a second leaf set to the same value. */
	const char *path, *value, *path2;
	const char *list; /* a list / leaf-list: the first use replaces it */
	const char *enable; /* a boolean leaf the option also sets true */
};

/* The single table of options: getopt's, --help's, and their leaves. */
static const struct opt_doc opts[] = {
	{ { "config", required_argument, NULL, 'f' }, 'f', "FILE",
	  "configuration file (default " FPMD_CONFIG_FILE " if it exists, "
	  "else the built-in default)",
	  .path = NULL },
	{ { "dryrun", no_argument, NULL, 'C' }, 'C', NULL,
	  "check the configuration (file and options), print the result, exit",
	  .path = NULL },
	{ { "show-default-config", no_argument, NULL, OPT_SHOW_DEFAULT }, 0, NULL,
	  "print the built-in default configuration and exit",
	  .path = NULL },
	{ { "interface", required_argument, NULL, 'i' }, 'i', "IFNAME",
	  "route on IFNAME (repeat for each; replaces the file's list)",
	  .path = "interfaces/interface[name='%s']", .list = "interfaces/interface" },
	{ { "netns", required_argument, NULL, 'N' }, 'N', "NAME",
	  "run in network namespace /run/netns/NAME (keeps bpffs visible)",
	  .path = "netns" },
	{ { "bpffs-dir", required_argument, NULL, 'b' }, 'b', "DIR",
	  "pin maps under DIR (default /sys/fs/bpf/fpmd)",
	  .path = "bpffs-dir" },
	{ { "socket", required_argument, NULL, 's' }, 's', "PATH",
	  "control socket (default /run/fpmd/fpmd.sock)",
	  .path = "control/socket/path" },
	{ { "socket-group", required_argument, NULL, OPT_SOCK_GROUP }, 0, "GROUP",
	  "group owning the control and plugin sockets (frr)",
	  .path = "control/socket/group", .path2 = "plugin/socket/group" },
	{ { "keep-forwarding", no_argument, NULL, OPT_KEEP }, 0, NULL,
	  "on exit leave XDP attached and maps pinned (restart without loss)",
	  .path = "behaviour/keep-forwarding", .value = "true" },
	{ { "allow-netfilter-bypass", no_argument, NULL, OPT_NF_BYPASS }, 0, NULL,
	  "attach even though netfilter rules act on forwarded traffic",
	  .path = "behaviour/allow-netfilter-bypass", .value = "true" },
	{ { "xdp-mode", required_argument, NULL, OPT_XDP_MODE }, 0, "native|generic|auto",
	  "XDP attach mode (default auto: native, "
	  "generic with a warning if refused)",
	  .path = "xdp-mode" },
	{ { "guard-interval", required_argument, NULL, OPT_GUARD_MS }, 0, "MS",
	  "re-check netfilter, sysctls, rules, tc, veth peers every MS (1000)",
	  .path = "behaviour/guard-interval" },
	{ { "max-routes-v4", required_argument, NULL, OPT_MAX_V4 }, 0, "N",
	  "IPv4 route table size",
	  .path = "tables/max-routes-v4" },
	{ { "max-routes-v6", required_argument, NULL, OPT_MAX_V6 }, 0, "N",
	  "IPv6 route table size",
	  .path = "tables/max-routes-v6" },
	{ { "max-nexthops", required_argument, NULL, OPT_MAX_NH }, 0, "N",
	  "nexthop table size",
	  .path = "tables/max-nexthops" },
	{ { "max-groups", required_argument, NULL, OPT_MAX_GRP }, 0, "N",
	  "nexthop group table size",
	  .path = "tables/max-groups" },
	{ { "ipv4-lookup", required_argument, NULL, OPT_FIB4 }, 0,
	  "dir-24-8|lpm-trie", "IPv4 lookup structure (dir-24-8)",
	  .path = "tables/ipv4-lookup" },
	{ { "ipv6-lookup", required_argument, NULL, OPT_FIB6 }, 0,
	  "binary-search|lpm-trie", "IPv6 lookup structure (binary-search)",
	  .path = "tables/ipv6-lookup" },
	{ { "max-neighbors", required_argument, NULL, OPT_MAX_NEIGH }, 0, "N",
	  "neighbor table size (per family)",
	  .path = "tables/max-neighbors" },
	{ { "fpm-address", required_argument, NULL, OPT_FPM_ADDR }, 0, "ADDR",
	  "accept zebra's FPM connection on ADDR (default 127.0.0.1; IPv6 ok; "
	  "repeat for more)",
	  .path = "fpm/address", .list = "fpm/address" },
	{ { "fpm-port", required_argument, NULL, OPT_FPM_PORT }, 0, "PORT",
	  "FPM port (default 2620)",
	  .path = "fpm/port" },
	{ { "no-fpm", no_argument, NULL, OPT_NO_FPM }, 0, NULL,
	  "no FPM server",
	  .path = "fpm/enabled", .value = "false" },
	{ { "fpm-settle", required_argument, NULL, OPT_FPM_SETTLE }, 0, "MS",
	  "a replay has ended after MS quiet; then stale routes go (3000)",
	  .path = "fpm/settle-time" },
	{ { "fpm-hold", required_argument, NULL, OPT_FPM_HOLD }, 0, "SEC",
	  "keep forwarding a lost feed's routes SEC seconds (300)",
	  .path = "fpm/hold-time" },
	{ { "fpm-route-status", no_argument, NULL, OPT_FPM_STATUS }, 0, NULL,
	  "answer each FPM route with its offload status (FRR >= 8.5 reads it)",
	  .path = "fpm/route-status", .value = "true" },
	{ { "metrics", no_argument, NULL, OPT_METRICS }, 0, NULL,
	  "serve Prometheus metrics (GET /metrics, default 127.0.0.1:9343)",
	  .path = "metrics/enabled", .value = "true" },
	{ { "metrics-address", required_argument, NULL, OPT_METRICS_ADDR }, 0,
	  "ADDR", "metrics on ADDR (implies --metrics; IPv6 ok)",
	  .path = "metrics/address", .enable = "metrics/enabled" },
	{ { "metrics-port", required_argument, NULL, OPT_METRICS_PORT }, 0,
	  "PORT", "metrics on PORT (implies --metrics)",
	  .path = "metrics/port", .enable = "metrics/enabled" },
	{ { "plugin-socket", required_argument, NULL, OPT_PLUGIN_SOCK }, 0, "PATH",
	  "zebra plugin feed socket (default /run/fpmd/plugin.sock)",
	  .path = "plugin/socket/path" },
	{ { "no-plugin", no_argument, NULL, OPT_NO_PLUGIN }, 0, NULL,
	  "no zebra plugin feed",
	  .path = "plugin/enabled", .value = "false" },
	{ { "log", required_argument, NULL, 'l' }, 'l', "TARGET",
	  "stderr (default; syslog under systemd or with -d), syslog or "
	  "file:PATH",
	  .path = "logging/target" },
	{ { "daemon", no_argument, NULL, 'd' }, 'd', NULL,
	  "run in the background once started (as FRR's daemons); logs to "
	  "syslog unless a log file is configured",
	  .path = NULL },
	{ { "debug", no_argument, NULL, 'D' }, 'D', NULL,
	  "debug logging (every route map write)",
	  .path = "logging/level", .value = "debug" },
	{ { "version", no_argument, NULL, 'v' }, 'v', NULL,
	  "print version",
	  .path = NULL },
	{ { "help", no_argument, NULL, 'h' }, 'h', NULL,
	  "this help",
	  .path = NULL },
};
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

static void usage(FILE *f)
{
	fprintf(f, "Usage: fpmd [OPTIONS]\nXDP routing fast path for FRR.\n"
		   "Options override the configuration file (fpmd.conf(5)).\n\n");
	for (size_t i = 0; i < N_OPTS; i++) {
		char left[64];

		if (opts[i].shortopt)
			snprintf(left, sizeof(left), "-%c, --%s%s%s",
				 opts[i].shortopt, opts[i].o.name,
				 opts[i].arg ? " " : "",
				 opts[i].arg ? opts[i].arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s",
				 opts[i].o.name, opts[i].arg ? " " : "",
				 opts[i].arg ? opts[i].arg : "");
		fprintf(f, "  %-34s %s\n", left, opts[i].help);
	}
}

/* Paths with a value in them (-i NAME) need storage for the process. */
static char *cli_strdup(const char *fmt, const char *arg)
{
	char *s;

	if (asprintf(&s, fmt, arg) < 0) {
		fprintf(stderr, "fpmd: out of memory\n");
		exit(1);
	}
	return s;
}

static int cli_push(const char *opt, const char *path, const char *value,
		    const char *drop)
{
	if (cli.n == FPMD_MAX_CLI_SETS) {
		fprintf(stderr, "fpmd: too many options\n");
		return -1;
	}
	cli.s[cli.n++] = (struct cli_set){ .opt = opt, .path = path,
					   .value = value, .drop = drop };
	return 0;
}

/* One option as YANG leaves; libyang checks the values later. */
static int cli_option(const struct opt_doc *d, const char *arg)
{
	static bool replaced[N_OPTS];
	const char *value = d->value ? d->value : arg;
	const char *opt;
	const char *drop = d->list && replaced[d - opts] ? "" : d->list;

	if (d->list)
		replaced[d - opts] = true;
	if (d->shortopt == 'i') {
		if (strchr(arg, '\'')) {
			fprintf(stderr, "fpmd: -i: bad interface name '%s'\n",
				arg);
			return -1;
		}
		return cli_push(cli_strdup("--interface %s", arg),
				cli_strdup(d->path, arg), NULL, drop);
	}
	opt = cli_strdup("--%s", d->o.name);
	if (d->shortopt == 'l' && !strncmp(arg, "file:", 5))
		return cli_push(opt, d->path, "file", NULL) ||
		       cli_push(opt, "logging/file", arg + 5, NULL);
	if (cli_push(opt, d->path, value, drop))
		return -1;
	if (d->enable && cli_push(opt, d->enable, "true", NULL))
		return -1;
	return d->path2 ? cli_push(opt, d->path2, value, NULL) : 0;
}

static int parse_args(int argc, char **argv)
{
	struct option lo[N_OPTS + 1];
	char so[64] = "";
	int c, idx;

	for (size_t i = 0; i < N_OPTS; i++) {
		lo[i] = opts[i].o;
		if (opts[i].shortopt) {
			size_t l = strlen(so);

			so[l] = (char)opts[i].shortopt;
			so[l + 1] = '\0';
			if (opts[i].arg)
				strcat(so, ":");
		}
	}
	memset(&lo[N_OPTS], 0, sizeof(lo[N_OPTS]));
	while ((c = getopt_long(argc, argv, so, lo, &idx)) != -1) {
		const struct opt_doc *d = NULL;

		switch (c) {
		case 'f': config_file = optarg; continue;
		case 'C': dryrun = true; continue;
		case 'd':
			daemon_mode = true;
			continue;
		case OPT_SHOW_DEFAULT:
			exit(config_print_default(stdout) ? 1 : 0);
		case 'v':
			printf("fpmd %s (map layout %d)\n", PACKAGE_VERSION,
			       FPMD_LAYOUT_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		case '?':
			usage(stderr);
			return -1;
		}
		for (size_t i = 0; i < N_OPTS; i++)
			if (opts[i].o.val == c)
				d = &opts[i];
		if (!d || !d->path || cli_option(d, optarg))
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "fpmd: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

static int enter_netns(const char *name)
{
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		log_err("netns: cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (setns(fd, CLONE_NEWNET) < 0) {
		log_err("netns: cannot enter %s: %s", name, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	log_info("netns: running in network namespace %s", name);
	return 0;
}

/* ---- kernel links -------------------------------------------------------- */

static int prog_fd = -1;
static bool need_neigh_resync, need_local_refresh;

static void link_changed(const struct nl_link *l, void *arg)
{
	struct iface *i = iface_by_name(l->name);
	struct iface *old = iface_by_ifindex(l->ifindex);
	char name[IF_NAMESIZE];
	bool changed;

	/* History (queued while fpmd started): that link is gone, and its
	 * RTM_DELLINK is further down the queue. */
	if (!if_indextoname(l->ifindex, name))
		return;
	/* A rename away from a managed name. */
	if (old && old != i)
		iface_gone(old);
	if (!i)
		return;
	if (i->ifindex && i->ifindex != l->ifindex)
		iface_gone(i);
	changed = iface_update(i, l);
	/* Every event re-checks whose program is there: IFLA_XDP comes
	 * only for netlink changes while up; a link going up re-queries. */
	if (i->attached)
		iface_watch(i, prog_fd);
	if (!changed && i->attached)
		return;
	/* Re-created: nexthops that went out of it go out of it again
	 * (rewritten below, once it is attached). */
	if (i->gone_ifindex && i->gone_ifindex != i->ifindex)
		rib_iface_renumber(i->name, i->gone_ifindex, i->ifindex);
	i->gone_ifindex = 0;
	if (!i->attached) {
		if (iface_attach(i, prog_fd))
			return;
		fpmd_request_recheck();
		need_neigh_resync = true;
	}
	log_info("iface %s: ifindex %u, mtu %u, %s", i->name, i->ifindex, i->mtu,
		 i->up ? "up" : "down");
	need_local_refresh = true;
	iface_sync(i);
	rib_iface_changed(i->ifindex);
}

static void link_learn(const struct nl_link *l, void *arg)
{
	struct iface *i = iface_by_name(l->name);

	if (i)
		iface_update(i, l);
}

static void link_gone(uint32_t ifindex)
{
	struct iface *i = iface_by_ifindex(ifindex);

	if (i)
		iface_gone(i);
}

/* ---- kernel neighbors ---------------------------------------------------- */

/*
 * The kernel resolves ARP/ND for packets the fast path passes up; its
 * neighbor table is the truth. Usable states complete nexthops at once;
 * the rest (INCOMPLETE, FAILED, gone) unresolve them. Only neighbors on
 * managed interfaces matter.
 */
static void neigh_event(const struct nl_neigh *n, void *arg)
{
	const uint16_t usable = NUD_REACHABLE | NUD_STALE | NUD_DELAY |
				NUD_PROBE | NUD_PERMANENT;
	const char *err;

	if (!n->has_addr || (n->family != AF_INET && n->family != AF_INET6) ||
	    (n->flags & NTF_PROXY) || !iface_by_ifindex(n->ifindex))
		return;
	if (!n->deleted && n->has_mac && (n->state & usable))
		rib_neigh_add(n->family, n->addr, n->ifindex, n->mac, false,
			      &err);
	else
		rib_neigh_del(n->family, n->addr, n->ifindex, false, &err);
}

/* Re-read the kernel's neighbors; forget learned ones it no longer has. */
static void neigh_resync(void)
{
	rib_neigh_gen++;
	if (nl_dump_neighs(neigh_event, NULL)) {
		log_warn("kernel: cannot read neighbors");
		return;
	}
	rib_neigh_sweep();
}

/* ---- the router's own addresses: local routes ---------------------------- */

struct local_set {
	struct prefix *p;
	size_t n, cap;
};

static void set_push(struct local_set *s, const struct prefix *p)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct prefix *np = realloc(s->p, cap * sizeof(*np));

		if (!np)
			return;
		s->p = np;
		s->cap = cap;
	}
	s->p[s->n] = *p;
	prefix_mask(&s->p[s->n]);
	s->n++;
}

/* The local table: every route (own addresses, broadcasts, anycast) and,
 * apart, the IPv4 addresses themselves (martian sources for the kernel). */
struct local_dump {
	struct local_set routes, addrs;
};

static void local_route_cb(const struct nl_route *r, void *arg)
{
	struct local_dump *d = arg;

	if (r->type != RTN_LOCAL && r->type != RTN_BROADCAST &&
	    r->type != RTN_ANYCAST)
		return;
	set_push(&d->routes, &r->p);
	/* Addresses bring local routes of protocol kernel; anything else was
	 * added by hand (AnyIP, ...). */
	if (r->type == RTN_LOCAL && r->p.family == AF_INET &&
	    r->protocol != RTPROT_KERNEL)
		iface_set_source_check();
	if (r->type == RTN_LOCAL && r->p.family == AF_INET && r->p.len == 32)
		set_push(&d->addrs, &r->p);
}

static int cmp_prefix(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct prefix));
}

static bool set_has(const struct local_set *s, const struct prefix *p)
{
	return s->n && bsearch(p, s->p, s->n, sizeof(*s->p), cmp_prefix);
}

static struct local_dump local_prev;

/* After adoption: what the maps hold is the last dump. */
static void local_routes_seed(void)
{
	struct fpmd_local_v4_val v;
	struct hnode *n, *tmp;
	uint32_t k, *pk = NULL;
	size_t i;

	ht_for_each(&rib_routes, n, tmp, i)
	{
		struct route *r = container_of(n, struct route, node);

		if (r->e[SRC_KERNEL_LOCAL].present)
			set_push(&local_prev.routes, &r->p);
	}
	while (!bpf_map_get_next_key(mapfd.local_v4, pk, &k)) {
		struct prefix p = { .family = AF_INET, .len = 32 };

		pk = &k;
		if (bpf_map_lookup_elem(mapfd.local_v4, &k, &v))
			continue;
		memcpy(p.addr, &k, 4);
		set_push(&local_prev.addrs, &p);
	}
	qsort(local_prev.routes.p, local_prev.routes.n, sizeof(struct prefix),
	      cmp_prefix);
	qsort(local_prev.addrs.p, local_prev.addrs.n, sizeof(struct prefix),
	      cmp_prefix);
}

/*
 * Mirror the kernel's local table (own addresses, subnet broadcasts) as
 * "pass" routes: a packet for the router must never be forwarded, even
 * when a covering route would match. Diffed against the last dump, so the
 * route table is not walked and unchanged entries are not rewritten.
 */
static void local_routes_refresh(void)
{
	struct local_dump d = { 0 };
	const char *err;
	size_t i;

	if (nl_dump_routes(AF_INET, RT_TABLE_LOCAL, local_route_cb, &d) ||
	    nl_dump_routes(AF_INET6, RT_TABLE_LOCAL, local_route_cb, &d)) {
		log_warn("kernel: cannot read the local table: keeping the "
			 "previous local routes");
		free(d.routes.p);
		free(d.addrs.p);
		return;
	}
	qsort(d.routes.p, d.routes.n, sizeof(struct prefix), cmp_prefix);
	qsort(d.addrs.p, d.addrs.n, sizeof(struct prefix), cmp_prefix);
	for (i = 0; i < local_prev.routes.n; i++)
		if (!set_has(&d.routes, &local_prev.routes.p[i]))
			rib_route_del(SRC_KERNEL_LOCAL, &local_prev.routes.p[i],
				      &err);
	for (i = 0; i < d.routes.n; i++) {
		struct rib_route_req rq = { .src = SRC_KERNEL_LOCAL,
					    .p = d.routes.p[i],
					    .type = RT_LOCAL };

		if (!set_has(&local_prev.routes, &d.routes.p[i]) &&
		    rib_route_add(&rq, &err))
			log_warn("kernel: local route not programmed: %s", err);
	}
	for (i = 0; i < local_prev.addrs.n; i++)
		if (!set_has(&d.addrs, &local_prev.addrs.p[i]))
			maps_local_v4_delete(local_prev.addrs.p[i].addr);
	for (i = 0; i < d.addrs.n; i++)
		if (!set_has(&local_prev.addrs, &d.addrs.p[i]) &&
		    maps_local_v4_add(d.addrs.p[i].addr))
			log_warn("maps: local_v4 full: own address not listed; "
				 "packets from it may be forwarded");
	free(local_prev.routes.p);
	free(local_prev.addrs.p);
	local_prev = d;
}

/* ---- event loop ----------------------------------------------------------- */

enum ev_kind {
	EV_SIGNAL,
	EV_TIMER,
	EV_CTL_LISTEN,
	EV_CTL_CLIENT,
	EV_NL,
	EV_FPM_LISTEN,
	EV_FPM_CONN,
	EV_FPM_TIMER,
	EV_PLUGIN_LISTEN,
	EV_PLUGIN_CONN,
	EV_PLUGIN_TIMER,
	EV_WATCH,
	EV_WATCHDOG,
	EV_METRICS,
};

static void addr_event(void *arg)
{
	/* The kernel adds the local route after it announces the address:
	 * look now and once more shortly after. */
	need_local_refresh = true;
	/* disable_ipv6 has no netconf event; turning it on or off removes or
	 * adds the interface's IPv6 addresses, which is our event for it. */
	guard_event(GUARD_FORWARDING);
}

/* A sysctl changed: forwarding or rp_filter of one interface, or of
 * "all"/"default" (which change every interface): guard_sysctls re-reads
 * them all once the batch of events is read. */
static void netconf_event(const struct nl_netconf *nc, void *arg)
{
	const struct iface *i = iface_by_ifindex((uint32_t)nc->ifindex);
	const char *who = i ? i->name : "unmanaged interface";

	if (nc->ifindex == NETCONFA_IFINDEX_ALL)
		who = "all";
	else if (nc->ifindex == NETCONFA_IFINDEX_DEFAULT)
		who = "default";

	guard_event(nc->rp_filter >= 0 ? GUARD_RP_FILTER : GUARD_FORWARDING);
	log_debug("kernel: netconf %s %s%s%s",
		  nc->family == AF_INET6 ? "ipv6" : "ipv4", who,
		  nc->rp_filter >= 0 ? " rp_filter" : "",
		  nc->forwarding >= 0 ? " forwarding" : "");
}

static void state_event(enum nl_state what, void *arg)
{
	if (what == NL_STATE_RULES) {
		guard_event(GUARD_POLICY_RULES);
	} else {
		guard_event(GUARD_TC_EGRESS);
		guard_event(GUARD_TC_INGRESS);
	}
}

static const struct nl_event_ops nl_ops = {
	.link = link_changed,
	.link_gone = link_gone,
	.neigh = neigh_event,
	.addr = addr_event,
	.netconf = netconf_event,
	.state = state_event,
};

/* Notification sockets other than rtnetlink's: xfrm policies and the
 * nftables ruleset. A message on one re-runs the guards. */
static struct watch {
	const char *what;
	int proto;
	unsigned int group;
	enum guard_id guard;
	int fd;
} watches[] = {
	{ "xfrm policies", NETLINK_XFRM, XFRMNLGRP_POLICY, GUARD_XFRM, -1 },
	{ "nftables", NETLINK_NETFILTER, NFNLGRP_NFTABLES, GUARD_NETFILTER,
	  -1 },
};

static void watches_open(void)
{
	for (size_t k = 0; k < sizeof(watches) / sizeof(watches[0]); k++) {
		struct watch *w = &watches[k];

		w->fd = nl_watch_open(w->proto, w->group);
		if (w->fd < 0)
			log_warn("kernel: cannot follow %s changes (%s): "
				 "polled every guard-interval only",
				 w->what, strerror(-w->fd));
	}
}

static void watch_read(int fd)
{
	for (size_t k = 0; k < sizeof(watches) / sizeof(watches[0]); k++) {
		struct watch *w = &watches[k];
		int n;

		if (w->fd != fd)
			continue;
		n = nl_watch_drain(fd);
		if (n < 0)
			log_warn("kernel: %s events: %s", w->what,
				 strerror(-n));
		else if (n)
			guard_event(w->guard);
	}
}

static int epfd = -1;
static bool recheck;

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static uint64_t mono_ms(void)
{
	return mono_us() / 1000;
}

void fpmd_request_recheck(void)
{
	recheck = true;
}

static int ev_add_events(int fd, enum ev_kind kind, uint32_t events)
{
	struct epoll_event e = { .events = events };

	e.data.u64 = ((uint64_t)kind << 32) | (uint32_t)fd;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e);
}

static int ev_add(int fd, enum ev_kind kind)
{
	return ev_add_events(fd, kind, EPOLLIN);
}

static void plugin_watch(int fd, bool in, bool out)
{
	struct epoll_event e = { .events = (in ? EPOLLIN : 0) |
					   (out ? EPOLLOUT : 0) };

	e.data.u64 = ((uint64_t)EV_PLUGIN_CONN << 32) | (uint32_t)fd;
	epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &e);
}

static void fpm_watch(int fd, bool in, bool out)
{
	struct epoll_event e = { .events = (in ? EPOLLIN : 0) |
					   (out ? EPOLLOUT : 0) };

	e.data.u64 = ((uint64_t)EV_FPM_CONN << 32) | (uint32_t)fd;
	epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &e);
}

static void periodic(void)
{
	static uint64_t local_last;

	/* The backstop for attachment changes that send no event (bpf_link,
	 * changes while down). */
	for (int s = 0; s < FPMD_MAX_IFACES; s++)
		if (iface_tab[s].used)
			iface_watch(&iface_tab[s], prog_fd);
	if (guard_check() && !cfg.allow_nf_bypass)
		log_debug("guard: netfilter still refuses the fast path");
	recheck = false;
	rib_trim();
	/* Events drive the local table; a slow re-read catches a local
	 * route the kernel added well after announcing its address (IPv6
	 * DAD). A dump walks the whole FIB (~0.3 s at 1M routes). */
	if (mono_ms() - local_last >= 30000) {
		local_last = mono_ms();
		local_routes_refresh();
	}
}

/* ---- what the service manager shows (notify.c) -----------------------------
 */

static bool under_journal; /* stderr was the journal's stream at start */

/*
 * Left to its default, the log goes where the service manager collects
 * it, as FRR's daemons do: syslog under systemd (journald takes syslog
 * with its levels, and forwards it to a syslog daemon if there is one)
 * and with -d (stderr is /dev/null); stderr otherwise.
 */
static void log_target_resolve(struct fpmd_config *c)
{
	if (c->log_target_default && (daemon_mode || under_journal))
		c->log_target = "syslog";
}

static void __attribute__((format(printf, 3, 4)))
appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* Per feed: the last replay state seen, and when it settled. */
struct feed_seen {
	const char *state;
	char at[16];
};

static void feed_line(char *buf, size_t len, const char *name,
		      const struct feed_status *f, struct feed_seen *seen)
{
	bool done = f->replay_state && (!strcmp(f->replay_state, "settled") ||
					!strcmp(f->replay_state, "complete"));

	if (done && (!seen->state || strcmp(seen->state, f->replay_state))) {
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		strftime(seen->at, sizeof(seen->at), "%H:%M:%S", &tm);
	}
	seen->state = f->replay_state;
	if (!f->connected)
		return;
	appendf(buf, len, "%szebra connected over %s", buf[0] ? "; " : "",
		name);
	if (done)
		appendf(buf, len, "; replay settled: %llu routes (at %s)",
			(unsigned long long)f->replay_refreshed, seen->at);
	else if (f->replay_state && !strcmp(f->replay_state, "in-progress"))
		appendf(buf, len, "; replay in progress");
}

/* One line, rebuilt after every batch of events and sent when it changes:
 * never per packet or per route. */
static void status_update(void)
{
	static struct feed_seen fpm_seen, plugin_seen;
	struct feed_status f, p;
	char feeds[256] = "", guard_s[160] = "";
	int att = 0, susp = 0, want = 0;

	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		const struct iface *i = &iface_tab[s];

		if (!i->used)
			continue;
		want++;
		att += i->attached;
		susp += i->attached && i->suspended;
	}
	fpm_get_status(&f);
	plugin_get_status(&p);
	feed_line(feeds, sizeof(feeds), "the plugin", &p, &plugin_seen);
	feed_line(feeds, sizeof(feeds), "FPM", &f, &fpm_seen);
	if (!feeds[0]) {
		bool held =
		    (f.replay_state && !strcmp(f.replay_state, "held")) ||
		    (p.replay_state && !strcmp(p.replay_state, "held"));

		appendf(feeds, sizeof(feeds), "%swaiting for zebra (",
			held ? "zebra gone, its routes kept for hold-time; "
			     : "");
		if (cfg.fpm_enabled && cfg.n_fpm_address)
			appendf(feeds, sizeof(feeds), "FPM %s%s%s:%u%s",
				strchr(cfg.fpm_address[0], ':') ? "[" : "",
				cfg.fpm_address[0],
				strchr(cfg.fpm_address[0], ':') ? "]" : "",
				cfg.fpm_port, cfg.plugin_enabled ? ", " : "");
		if (cfg.plugin_enabled)
			appendf(feeds, sizeof(feeds), "plugin %s",
				cfg.plugin_sock.path);
		if (!cfg.plugin_enabled &&
		    !(cfg.fpm_enabled && cfg.n_fpm_address))
			appendf(feeds, sizeof(feeds), "no feed configured");
		appendf(feeds, sizeof(feeds), ")");
	}
	/* Guards that take traffic off the fast path (rp_filter is checked
	 * in it, a netfilter bypass is allowed by the configuration, and
	 * send-redirects only concerns IPv4 hairpins, which the kernel
	 * answers with a redirect). */
	for (int g = 0; g < GUARD_MAX; g++)
		if (g != GUARD_SEND_REDIRECTS &&
		    (!strcmp(guards[g].state, "kernel-path") ||
		     !strcmp(guards[g].state, "refused")))
			appendf(guard_s, sizeof(guard_s), "%s%s",
				guard_s[0] ? ", " : "; kernel path: guard ",
				guards[g].name);
	if (att > susp && att - susp < want)
		notify_status("forwarding on %d of %d interfaces; %s%s",
			      att - susp, want, feeds, guard_s);
	else if (att > susp)
		notify_status("forwarding on %d interface%s; %s%s", att - susp,
			      att - susp == 1 ? "" : "s", feeds, guard_s);
	else if (att)
		notify_status("XDP attached on %d interface%s, all traffic on "
			      "the kernel path; %s%s",
			      att, att == 1 ? "" : "s", feeds, guard_s);
	else
		notify_status("not forwarding: %s; %s%s",
			      want ? "no interface attached"
				   : "no interface configured",
			      feeds, guard_s);
}

/* ---- configuration: listeners and interfaces, at start and on reload ---- */

static int timer_fd = -1;

static void guard_timer_arm(void)
{
	struct itimerspec its = { 0 };

	its.it_interval.tv_sec = cfg.guard_interval_ms / 1000;
	its.it_interval.tv_nsec = (long)(cfg.guard_interval_ms % 1000) * 1000000;
	its.it_value = its.it_interval;
	timerfd_settime(timer_fd, 0, &its, NULL);
}

static int fpm_listen(void)
{
	int failed = 0;

	fpm_set_watch(fpm_watch);
	if (!cfg.fpm_enabled)
		return 0;
	for (int k = 0; k < cfg.n_fpm_address; k++) {
		int fd = fpm_open(cfg.fpm_address[k], cfg.fpm_port);

		if (fd < 0 || ev_add(fd, EV_FPM_LISTEN)) {
			log_err("fpm: cannot listen on %s port %u: %s",
				cfg.fpm_address[k], cfg.fpm_port,
				strerror(fd < 0 ? -fd : errno));
			failed++;
		}
	}
	if (fpm_timer_fd() >= 0 && ev_add(fpm_timer_fd(), EV_FPM_TIMER) &&
	    errno != EEXIST)
		return -1;
	return failed ? -1 : 0;
}

static int plugin_listen(void)
{
	int fd;

	if (!cfg.plugin_enabled)
		return 0;
	plugin_set_watch(plugin_watch);
	fd = plugin_open(&cfg.plugin_sock);
	if (fd < 0) {
		log_err("plugin: cannot listen on %s: %s", cfg.plugin_sock.path,
			strerror(-fd));
		return -1;
	}
	if (ev_add(fd, EV_PLUGIN_LISTEN) ||
	    (ev_add(plugin_timer_fd(), EV_PLUGIN_TIMER) && errno != EEXIST))
		return -1;
	return 0;
}

static int ctl_listen(void)
{
	int fd = ctl_open(&cfg.ctl_sock);

	if (fd < 0) {
		log_err("ctl: cannot listen on %s: %s", cfg.ctl_sock.path,
			strerror(-fd));
		return -1;
	}
	return ev_add(fd, EV_CTL_LISTEN);
}

/* Metrics are an add-on: a listener that fails is logged, fpmd goes on. */
static void metrics_listen(void)
{
	int efd, tfd, ret;

	if (!cfg.metrics_enabled)
		return;
	ret = metrics_open(cfg.metrics_address, cfg.metrics_port);
	if (ret) {
		log_err("metrics: cannot listen on %s port %u: %s; fpmd runs "
			"without its metrics endpoint",
			cfg.metrics_address, cfg.metrics_port, strerror(-ret));
		return;
	}
	metrics_fds(&efd, &tfd);
	if (ev_add(efd, EV_METRICS) || ev_add(tfd, EV_METRICS)) {
		log_err("metrics: event loop: %s", strerror(errno));
		metrics_close();
		return;
	}
	log_info("metrics: serving http://%s%s%s:%u/metrics",
		 strchr(cfg.metrics_address, ':') ? "[" : "",
		 cfg.metrics_address,
		 strchr(cfg.metrics_address, ':') ? "]" : "",
		 cfg.metrics_port);
}

static const struct iface_cfg *iface_cfg_of(const struct fpmd_config *c,
					    const char *name)
{
	for (int k = 0; k < c->n_ifaces; k++)
		if (!strcmp(c->ifaces[k].name, name))
			return &c->ifaces[k];
	return NULL;
}

/*
 * Adopted maps know each managed interface by the ifindex it had when the
 * previous fpmd left; an interface deleted or re-created since (by a
 * container restart, while no fpmd watched, or during adoption) must not
 * leave nexthops on that old ifindex: remember it, and start-up follows
 * it as link_changed would have.
 */
static void ifaces_adopted_seed(void)
{
	uint32_t k, *pk = NULL;
	struct fpmd_iface v;

	while (!bpf_map_get_next_key(mapfd.ifaces, pk, &k)) {
		pk = &k;
		if (bpf_map_lookup_elem(mapfd.ifaces, &k, &v) ||
		    v.slot >= FPMD_MAX_IFACES || !iface_tab[v.slot].used)
			continue;
		iface_tab[v.slot].gone_ifindex = k;
	}
}

/* Attach what is configured and present; the rest waits for its link. */
static void iface_bring_up(struct iface *i)
{
	uint32_t old = i->gone_ifindex;
	char name[IF_NAMESIZE];

	/* Still there (as another managed interface, or under another
	 * name: the configuration's order changed): not ours to move. */
	if (old && (iface_by_ifindex(old) || if_indextoname(old, name)))
		old = 0;
	if (old && old != i->ifindex) {
		/* Its adopted entries serve an interface that is gone. */
		maps_iface_delete(old);
		maps_txport_delete(old);
		if (i->ifindex) {
			log_warn("iface %s: re-created since the maps were "
				 "pinned (ifindex %u, was %u)",
				 i->name, i->ifindex, old);
			rib_iface_renumber(i->name, old, i->ifindex);
		} else {
			log_warn("iface %s (ifindex %u): removed since the maps "
				 "were pinned; its routes go to the kernel "
				 "path until it returns",
				 i->name, old);
			rib_iface_changed(old);
		}
	}
	if (i->ifindex)
		i->gone_ifindex = 0;
	if (!i->ifindex) {
		log_warn("iface %s: not present; attaching when it appears",
			 i->name);
		return;
	}
	if (iface_attach(i, prog_fd))
		return;
	iface_sync(i);
	rib_iface_changed(i->ifindex);
}

static bool same_sock(const struct sock_cfg *a, const struct sock_cfg *b)
{
	return !strcmp(a->path, b->path) && !strcmp(a->owner, b->owner) &&
	       !strcmp(a->group, b->group) && a->mode == b->mode;
}

static bool same_fpm(const struct fpmd_config *a, const struct fpmd_config *b)
{
	if (a->fpm_enabled != b->fpm_enabled || a->fpm_port != b->fpm_port ||
	    a->n_fpm_address != b->n_fpm_address)
		return false;
	for (int k = 0; k < a->n_fpm_address; k++)
		if (strcmp(a->fpm_address[k], b->fpm_address[k]))
			return false;
	return true;
}

/* What a reload cannot change: say so, and keep the running value. */
static void keep_u32(const char *leaf, uint32_t run, uint32_t *nw)
{
	if (run == *nw)
		return;
	log_warn("config: tables/%s %u -> %u takes effect when fpmd restarts. "
		 "It costs a rebuild: the restart cannot adopt the maps of the "
		 "old size, creates new ones and rewrites every entry, and "
		 "traffic takes the kernel path until the feeds have replayed "
		 "(seconds at a full table)",
		 leaf, run, *nw);
	*nw = run;
}

static void keep_str(const char *leaf, const char *run, const char **nw)
{
	if (!run && !*nw)
		return;
	if (!run || !*nw || strcmp(run, *nw))
		log_warn("config: %s '%s' -> '%s' takes effect when fpmd "
			 "restarts",
			 leaf, run ? run : "", *nw ? *nw : "");
	*nw = run;
}

static char run_pin_dir[PATH_MAX], run_netns[256];

/* cfg is already the new configuration; old is what ran until now. */
static void apply_changes(const struct fpmd_config *old)
{
	bool new_links = false;

	if (strcmp(old->log_target, cfg.log_target) || old->debug != cfg.debug ||
	    (old->log_file && cfg.log_file && strcmp(old->log_file, cfg.log_file))) {
		if (log_open(cfg.log_target, cfg.log_file, cfg.debug))
			log_err("config: cannot open log file %s: %s; logging "
				"stays where it was",
				cfg.log_file, strerror(errno));
		else
			log_info("config: logging to %s%s%s, level %s",
				 cfg.log_target, cfg.log_file ? " " : "",
				 cfg.log_file ? cfg.log_file : "",
				 cfg.debug ? "debug" : "info");
	}
	if (!same_sock(&old->ctl_sock, &cfg.ctl_sock)) {
		log_info("config: control socket now %s (%s:%s %03o)",
			 cfg.ctl_sock.path, cfg.ctl_sock.owner,
			 cfg.ctl_sock.group, cfg.ctl_sock.mode);
		ctl_listen_close();
		ctl_listen();
	}
	if (old->plugin_enabled != cfg.plugin_enabled ||
	    !same_sock(&old->plugin_sock, &cfg.plugin_sock)) {
		log_info("config: plugin socket %s", cfg.plugin_enabled ?
			 cfg.plugin_sock.path : "off");
		plugin_listen_close();
		plugin_listen();
	}
	if (!same_fpm(old, &cfg)) {
		log_info("config: FPM listeners changed%s",
			 cfg.fpm_enabled ? "" : ": FPM off");
		fpm_listen_close();
		fpm_listen();
	}
	/* Also when it could not listen before: the operator freed the port
	 * and reloads. */
	if (old->metrics_enabled != cfg.metrics_enabled ||
	    old->metrics_port != cfg.metrics_port ||
	    strcmp(old->metrics_address, cfg.metrics_address) ||
	    (cfg.metrics_enabled && !metrics_running())) {
		if (!cfg.metrics_enabled)
			log_info("config: metrics off");
		metrics_close();
		metrics_listen();
	}
	if (old->guard_interval_ms != cfg.guard_interval_ms)
		guard_timer_arm();
	if (old->allow_nf_bypass != cfg.allow_nf_bypass ||
	    old->keep_forwarding != cfg.keep_forwarding)
		log_info("config: allow-netfilter-bypass %s, keep-forwarding %s",
			 cfg.allow_nf_bypass ? "true" : "false",
			 cfg.keep_forwarding ? "true" : "false");

	/* Interfaces: each change touches that interface only. */
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		struct iface *i = &iface_tab[s];
		const struct iface_cfg *ic;

		if (!i->used)
			continue;
		ic = iface_cfg_of(&cfg, i->name);
		if (!ic || !ic->enabled) {
			log_info("config: interface %s %s", i->name,
				 ic ? "disabled" : "removed");
			iface_remove(i);
			continue;
		}
		if (ic->mode != i->want_mode) {
			i->want_mode = ic->mode;
			if (i->attached && ic->mode != XDP_MODE_AUTO &&
			    ic->mode != i->mode) {
				log_info("iface %s: re-attaching in %s mode",
					 i->name, xdp_mode_name(ic->mode));
				iface_detach(i);
				iface_bring_up(i);
			}
		}
	}
	for (int k = 0; k < cfg.n_ifaces; k++) {
		const struct iface_cfg *ic = &cfg.ifaces[k];
		struct iface *i;

		if (!ic->enabled || iface_by_name(ic->name))
			continue;
		i = iface_add(ic->name, true);
		if (!i) {
			log_err("config: interface %s: no free slot", ic->name);
			continue;
		}
		i->want_mode = ic->mode;
		log_info("config: interface %s added", ic->name);
		new_links = true;
	}
	if (new_links) {
		/* link_changed attaches every managed, present, unattached one. */
		nl_dump_links(link_changed, NULL);
		need_neigh_resync = true;
	}
	fpmd_request_recheck();
}

static void log_notes(const char *notes)
{
	const char *p = notes, *nl;

	while (p && *p && (nl = strchr(p, '\n'))) {
		log_info("config: %.*s", (int)(nl - p), p);
		p = nl + 1;
	}
}

/* Route writes into the fast path before anything observable. */
static void commit_maps(uint32_t max_drops)
{
	static bool failed;
	uint32_t nh_top, group_top;
	int ret;

	if (max_drops) {
		rib_index_tops(&nh_top, &group_top);
		ret = maps_shrink(max_drops, nh_top, group_top);
	} else {
		ret = maps_commit(0);
	}

	if (ret && !failed)
		log_err("fib: new IPv4 table parts cannot be published: %s; "
			"routes written since are not yet in the fast path, "
			"retrying", strerror(-ret));
	else if (!ret && failed)
		log_info("fib: pending IPv4 table parts published");
	failed = ret != 0;
}

int fpmd_reload(char *err, size_t elen)
{
	struct fpmd_config nc, old;
	char notes[4096];

	notify_reloading();
	if (config_load(config_file, &cli, &nc, err, elen, notes,
			sizeof(notes))) {
		log_err("reload: %s; keeping the running configuration", err);
		status_update();
		notify_ready();
		return -1;
	}
	log_target_resolve(&nc);
	log_info("reload: configuration from %s", nc.source);
	log_notes(notes);
	keep_str("bpffs-dir", cfg.pin_dir, &nc.pin_dir);
	keep_str("netns", cfg.netns, &nc.netns);
	keep_u32("max-routes-v4", cfg.max_routes_v4, &nc.max_routes_v4);
	keep_u32("max-routes-v6", cfg.max_routes_v6, &nc.max_routes_v6);
	keep_u32("max-nexthops", cfg.max_nexthops, &nc.max_nexthops);
	keep_u32("max-groups", cfg.max_groups, &nc.max_groups);
	keep_u32("max-neighbors", cfg.max_neigh, &nc.max_neigh);
	keep_u32("ipv4-tbl8-groups", cfg.tbl8_groups, &nc.tbl8_groups);
	if (nc.fib4_algo != cfg.fib4_algo || nc.fib6_algo != cfg.fib6_algo)
		log_warn("config: tables/ipv4-lookup or ipv6-lookup changed: takes "
			 "effect when fpmd restarts, which rebuilds the maps "
			 "(traffic takes the kernel path until the feeds have "
			 "replayed)");
	nc.fib4_algo = cfg.fib4_algo;
	nc.fib6_algo = cfg.fib6_algo;
	old = cfg;
	cfg = nc;
	apply_changes(&old);
	config_free(&old);
	log_info("reload: re-checking guards, local routes and neighbors");
	periodic();
	local_routes_refresh();
	neigh_resync();
	commit_maps(0);
	status_update();
	notify_ready();
	return 0;
}

/* SIGUSR2: the service manager restarts fpmd; leave forwarding in place. */
static bool stop_keep;

static int run(int sfd)
{
	struct epoll_event evs[16];

	uint64_t local_due = 0; /* ms, CLOCK_MONOTONIC */
	bool status_busy = false;

	for (;;) {
		int timeout = -1, n;

		if (local_due) {
			uint64_t now = mono_ms();

			timeout = local_due > now ? (int)(local_due - now) : 0;
		}
		if (status_busy)
			timeout = 0;
		n = epoll_wait(epfd, evs, 16, timeout);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_err("epoll: %s", strerror(errno));
			return -1;
		}
		for (int k = 0; k < n; k++) {
			enum ev_kind kind = (enum ev_kind)(evs[k].data.u64 >> 32);
			int fd = (int)(uint32_t)evs[k].data.u64;

			/* Whatever answers or reports sees committed maps. */
			if (kind == EV_CTL_CLIENT || kind == EV_METRICS ||
			    kind == EV_SIGNAL)
				commit_maps(0);
			/* Maps no longer needed (uniform parts, empty
			 * chunks) leave a few per tick: each waits a grace
			 * period (~15 ms) of its own. */
			if (kind == EV_TIMER)
				commit_maps(4);

			switch (kind) {
			case EV_SIGNAL: {
				struct signalfd_siginfo si;

				if (read(sfd, &si, sizeof(si)) != sizeof(si))
					break;
				if (si.ssi_signo == SIGHUP) {
					char err[1024];

					fpmd_reload(err, sizeof(err));
					break;
				}
				if (si.ssi_signo == SIGUSR2) {
					log_info(
					    "SIGUSR2: stopping for a restart: "
					    "XDP stays attached and maps "
					    "pinned; the next fpmd adopts "
					    "them");
					stop_keep = true;
					return 0;
				}
				log_info("%s: stopping",
					 strsignal((int)si.ssi_signo));
				return 0;
			}
			case EV_TIMER: {
				uint64_t exp;

				if (read(fd, &exp, sizeof(exp)) == sizeof(exp))
					periodic();
				break;
			}
			case EV_CTL_LISTEN: {
				int cfd = ctl_accept();

				/* Edge-triggered both ways: ctl_client_io reads
				 * and writes until EAGAIN. */
				if (cfd >= 0)
					ev_add_events(cfd, EV_CTL_CLIENT,
						      EPOLLIN | EPOLLOUT |
							  EPOLLET);
				break;
			}
			case EV_CTL_CLIENT:
				/* A closed fd leaves epoll by itself. */
				ctl_client_io(fd);
				break;
			case EV_NL: {
				int ret = nl_events_read(&nl_ops, NULL);

				if (ret == -ENOBUFS) {
					log_warn("kernel: events overrun; "
						 "re-reading links and "
						 "neighbors");
					nl_dump_links(link_changed, NULL);
					need_neigh_resync = true;
					need_local_refresh = true;
					/* Lost netconf, rule or tc events:
					 * re-check everything. */
					fpmd_request_recheck();
				}
				break;
			}
			case EV_WATCH:
				watch_read(fd);
				break;
			case EV_WATCHDOG: {
				uint64_t exp;

				/* From the loop itself: a stuck loop stops
				 * the pings and systemd restarts fpmd. */
				if (read(fd, &exp, sizeof(exp)) == sizeof(exp))
					notify_watchdog();
				break;
			}
			case EV_FPM_LISTEN: {
				int cfd = fpm_accept(fd);

				if (cfd >= 0)
					ev_add(cfd, EV_FPM_CONN);
				break;
			}
			case EV_FPM_CONN:
				fpm_io();
				break;
			case EV_FPM_TIMER:
				fpm_timer();
				break;
			case EV_PLUGIN_LISTEN: {
				int cfd = plugin_accept();

				if (cfd >= 0)
					ev_add(cfd, EV_PLUGIN_CONN);
				break;
			}
			case EV_PLUGIN_CONN:
				plugin_io();
				break;
			case EV_PLUGIN_TIMER:
				plugin_timer();
				break;
			case EV_METRICS:
				metrics_io();
				break;
			}
		}
		/* An address or link event: look at the local table now and
		 * once more 100 ms later (the kernel adds the local route
		 * after announcing the address). A dump walks the whole FIB,
		 * so never more often than that. */
		if (need_local_refresh && !local_due) {
			local_routes_refresh();
			local_due = mono_ms() + 100;
		}
		need_local_refresh = false;
		if (local_due && mono_ms() >= local_due) {
			local_due = 0;
			local_routes_refresh();
		}
		if (need_neigh_resync) {
			need_neigh_resync = false;
			neigh_resync();
		}
		/* Events first, once per batch: a sysctl is applied to the
		 * maps right after the kernel announced it. */
		if (guard_pending(GUARD_PENDING_FULL))
			recheck = true;
		else if (guard_pending(GUARD_PENDING_SYSCTL))
			guard_sysctls();
		if (recheck)
			periodic();
		/* Route status changes, a slice at a time, then to zebra. */
		commit_maps(0);
		status_busy = rib_status_run();
		plugin_status_flush();
		fpm_status_flush();
		status_update();
	}
}

/*
 * What changed while fpmd started (links, neighbors, addresses, sysctls),
 * applied after the dumps: each object's last event is at least as new as
 * what the dump said, so the maps end as the kernel is.
 */
static void startup_events(void)
{
	int ret = nl_events_read(&nl_ops, NULL);

	if (ret == -ENOBUFS) {
		log_warn("kernel: events overrun during start-up; re-reading "
			 "links and neighbors");
		nl_dump_links(link_changed, NULL);
		fpmd_request_recheck();
	} else if (ret) {
		log_warn("kernel: events: %s", strerror(-ret));
	}
	/* neigh_resync and the local table follow at once; the flags stay
	 * set, so that the loop looks again once the kernel has added the
	 * local routes of addresses it just announced. */
	if (recheck)
		periodic();
}

static void stop(void)
{
	bool keep = cfg.keep_forwarding || stop_keep;

	metrics_close();
	ctl_close();
	fpm_close();
	plugin_close();
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		struct iface *i = &iface_tab[s];

		if (!i->used || !i->attached)
			continue;
		if (keep)
			log_info("iface %s: XDP left attached (%s)", i->name,
				 stop_keep ? "SIGUSR2" : "--keep-forwarding");
		else
			iface_detach(i);
	}
	if (keep)
		log_info("bpffs: maps stay pinned in %s; a new fpmd adopts them",
			 cfg.pin_dir);
	else
		xdp_unpin();
	xdp_close();
	nl_close();
	for (size_t k = 0; k < sizeof(watches) / sizeof(watches[0]); k++)
		if (watches[k].fd >= 0)
			close(watches[k].fd);
	rib_free();
	free(local_prev.routes.p);
	free(local_prev.addrs.p);
}

/*
 * One fpmd per bpffs-dir and per interface, checked before anything is
 * adopted, attached or unpinned: a refused fpmd changes nothing.
 */
static int instance_start(void)
{
	char path[PATH_MAX];
	long holder;
	int ret = instance_lock(cfg.pin_dir, &holder, path, sizeof(path));

	if (ret == -EBUSY) {
		log_err("bpffs-dir %s is in use by a running fpmd (pid %ld, "
			"lock file %s): refusing to start; nothing was changed",
			cfg.pin_dir, holder, path);
		return -1;
	}
	if (ret) {
		log_err("lock file %s: %s", path, strerror(-ret));
		return -1;
	}
	atexit(instance_unlock);
	instance_note_pins(cfg.pin_dir);
	for (int k = 0; k < cfg.n_ifaces; k++) {
		unsigned int idx = if_nametoindex(cfg.ifaces[k].name);
		struct prog_who w;
		uint32_t id;

		if (!cfg.ifaces[k].enabled || !idx ||
		    instance_attached_prog(idx, &id))
			continue;
		instance_whose_prog(id, &w);
		if (w.owner != PROG_OTHER_FPMD)
			continue;
		log_err("iface %s: served by %s: refusing to start (one fpmd "
			"per interface); nothing was changed",
			cfg.ifaces[k].name, w.desc);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char err[1024], notes[4096];
	sigset_t mask;
	int sfd, nlfd, ret;
	bool adopted;

	/* A parent's descriptors (its lock file, sockets) are not ours to
	 * hold for the life of a daemon. */
	close_range(3, ~0U, 0);
	phase_begin();
	metrics_init();
	ctl_set_reload(fpmd_reload);
	iface_set_recheck(fpmd_request_recheck);
	if (parse_args(argc, argv))
		return 2;
	if (config_load(config_file, &cli, &cfg, err, sizeof(err), notes,
			sizeof(notes))) {
		fprintf(stderr, "fpmd: %s\n", err);
		return 2;
	}
	phase_end("config (YANG)");
	if (dryrun) {
		/* The effective configuration on stdout, the verdict on stderr. */
		char *doc = config_print_running(&cfg);

		printf("%s\n", doc ? doc : "");
		free(doc);
		fputs(notes, stderr);
		fprintf(stderr, "fpmd: configuration OK (%s)\n", cfg.source);
		config_free(&cfg);
		return 0;
	}
	under_journal = log_stderr_is_journal();
	log_target_resolve(&cfg);
	if (log_open(cfg.log_target, cfg.log_file, cfg.debug)) {
		fprintf(stderr, "fpmd: %s: cannot open the log file %s: %s\n",
			cfg.source, cfg.log_file, strerror(errno));
		return 2;
	}
	if (daemon_mode) {
		if (cfg.log_target_default)
			fprintf(stderr,
				"fpmd: running in the background, logging "
				"to syslog (logging/target or --log to "
				"change)\n");
		daemonize();
	}
	log_info("config: from %s", cfg.source);
	if (cfg.log_target_default && !strcmp(cfg.log_target, "syslog"))
		log_info("log: to syslog (%s; logging/target or --log to "
			 "change)",
			 daemon_mode ? "-d" : "started by systemd");
	log_notes(notes);
	/* Fixed for the life of the process (a reload says so). */
	snprintf(run_pin_dir, sizeof(run_pin_dir), "%s", cfg.pin_dir);
	cfg.pin_dir = run_pin_dir;
	if (cfg.netns) {
		snprintf(run_netns, sizeof(run_netns), "%s", cfg.netns);
		cfg.netns = run_netns;
	}
	if (cfg.netns && enter_netns(cfg.netns))
		return 1;
	if (instance_start())
		return 1;
	phase_end("log, netns, instance lock");
	if (!cfg.n_ifaces)
		log_warn("no interface configured (interfaces in the file, or "
			 "-i): fpmd attaches to nothing until one is");

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	ret = nl_open();
	if (ret) {
		log_err("netlink: %s", strerror(-ret));
		return 1;
	}
	phase_end("nl_open");
	/*
	 * Subscribe before anything is loaded or adopted: from here on no
	 * link or neighbor change is missed. Events queue in the socket
	 * while the maps are adopted, and are applied once the interfaces
	 * are attached (an overrun re-reads everything).
	 */
	nlfd = nl_events_open();
	if (nlfd < 0) {
		log_err("netlink: events: %s", strerror(-nlfd));
		return 1;
	}
	watches_open();
	phase_end("nl_events_open, watches");
	if (rib_init(cfg.max_nexthops, cfg.max_groups)) {
		log_err("out of memory");
		return 1;
	}
	iface_init();
	phase_end("rib_init");
	/* The lookup structures are chosen at load (tables/ipv4-lookup...). */
	fpmd_fib4_algo = cfg.fib4_algo;
	fpmd_fib6_algo = cfg.fib6_algo;
	fpmd_tbl8_groups = cfg.tbl8_groups;
	{
		char meta[PATH_MAX];

		snprintf(meta, sizeof(meta), "%s/meta", cfg.pin_dir);
		notify_status("%s maps in %s",
			      access(meta, F_OK) ? "creating"
						 : "adopting pinned",
			      cfg.pin_dir);
	}
	if (xdp_load(&adopted))
		return 1;
	prog_fd = xdp_prog_fd();
	instance_set_own(prog_fd, mapfd.stats);
	if (adopted && rib_adopt(cfg.max_nexthops, cfg.max_groups))
		log_warn("adopt: out of memory; starting with empty tables");
	else if (adopted)
		local_routes_seed();
	phase_end("rib_adopt");

	for (int k = 0; k < cfg.n_ifaces; k++) {
		struct iface *i;

		if (!cfg.ifaces[k].enabled) {
			log_info("iface %s: configured disabled; not attaching",
				 cfg.ifaces[k].name);
			continue;
		}
		i = iface_add(cfg.ifaces[k].name, !adopted);
		if (!i) {
			log_err("too many interfaces");
			return 1;
		}
		i->want_mode = cfg.ifaces[k].mode;
	}
	if (adopted)
		ifaces_adopted_seed();
	/* Guards run before anything is attached: refuse, or attach with
	 * the right flags from the first packet on. */
	{
		char nf[512];

		if (netfilter_scan(nf, sizeof(nf)) > 0 && !cfg.allow_nf_bypass) {
			log_err("netfilter: %s. XDP would bypass these rules for "
				"forwarded traffic, so fpmd refuses to attach. "
				"Remove them, or set behaviour/"
				"allow-netfilter-bypass (--allow-netfilter-bypass) "
				"if forwarded traffic may skip them.",
				nf);
			if (!adopted)
				xdp_unpin();
			xdp_close();
			return 1;
		}
	}
	phase_end("netfilter scan");
	nl_dump_links(link_learn, NULL);
	phase_end("link dump");
	guard_check();
	phase_end("guards");
	notify_status("attaching %d interface%s", cfg.n_ifaces,
		      cfg.n_ifaces == 1 ? "" : "s");
	for (int s = 0; s < FPMD_MAX_IFACES; s++)
		if (iface_tab[s].used)
			iface_bring_up(&iface_tab[s]);
	phase_end("attach");
	periodic();
	phase_end("periodic (guards, interfaces)");
	startup_events();
	phase_end("events queued during start-up");
	neigh_resync();
	phase_end("neighbor dump");
	local_routes_refresh();
	phase_end("local table dump");

	epfd = epoll_create1(EPOLL_CLOEXEC);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (sfd < 0 || timer_fd < 0 || epfd < 0 || ev_add(sfd, EV_SIGNAL) ||
	    ev_add(timer_fd, EV_TIMER) || ev_add(nlfd, EV_NL)) {
		log_err("event loop: %s", strerror(errno));
		stop();
		return 1;
	}
	for (size_t k = 0; k < sizeof(watches) / sizeof(watches[0]); k++)
		if (watches[k].fd >= 0 && ev_add(watches[k].fd, EV_WATCH)) {
			log_err("event loop: %s", strerror(errno));
			stop();
			return 1;
		}
	guard_timer_arm();
	if (ctl_listen() || fpm_listen() || plugin_listen()) {
		stop();
		return 1;
	}
	phase_end("listeners");
	if (notify_watchdog_usec()) {
		/* Half the interval, as sd_watchdog_enabled(3) advises. */
		uint64_t half = notify_watchdog_usec() / 2;
		struct itimerspec its = { 0 };
		int wfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);

		its.it_interval.tv_sec = (time_t)(half / 1000000);
		its.it_interval.tv_nsec = (long)(half % 1000000) * 1000;
		its.it_value = its.it_interval;
		if (wfd < 0 || timerfd_settime(wfd, 0, &its, NULL) ||
		    ev_add(wfd, EV_WATCHDOG))
			log_warn("systemd: cannot arm the watchdog timer: %s",
				 strerror(errno));
		else
			log_info("systemd: watchdog every %llu ms",
				 (unsigned long long)half / 1000);
	}
	metrics_listen();
	log_info("fpmd %s started: %d interface(s), control socket %s%s",
		 PACKAGE_VERSION, cfg.n_ifaces, cfg.ctl_sock.path,
		 adopted ? ", maps adopted" : "");
	commit_maps(0);
	status_update();
	notify_ready();
	phase_ready(adopted);
	ret = run(sfd);
	notify_stopping();
	stop();
	config_free(&cfg);
	return ret ? 1 : 0;
}
