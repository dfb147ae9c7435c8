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
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>

#include "ctl.h"
#include "fpm.h"
#include "fpmd.h"
#include "guard.h"
#include "iface.h"
#include "log.h"
#include "maps.h"
#include "nl.h"
#include "plugin.h"
#include "rib.h"
#include "xdp.h"

struct fpmd_config cfg = {
	.pin_dir = FPMD_DEFAULT_PIN_DIR,
	.socket_path = FPMD_DEFAULT_SOCKET,
	.socket_group = FPMD_SOCKET_GROUP,
	.log_target = "stderr",
	.xdp_mode = XDP_MODE_AUTO,
	.guard_interval_ms = 1000,
	.max_routes_v4 = FPMD_MAX_ROUTES_V4,
	.max_routes_v6 = FPMD_MAX_ROUTES_V6,
	.max_nexthops = FPMD_MAX_NEXTHOPS,
	.max_groups = FPMD_MAX_GROUPS,
	.max_neigh = FPMD_MAX_NEIGH,
	.fpm_address = "127.0.0.1",
	.fpm_port = 2620,
	.fpm_settle_ms = 3000,
	.fpm_hold_s = 300,
	.plugin_socket = FPMD_DEFAULT_PLUGIN_SOCKET,
};

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
	OPT_PLUGIN_SOCK,
	OPT_NO_PLUGIN,
};

struct opt_doc {
	struct option o;
	int shortopt;
	const char *arg, *help;
};

/* The single table of options: getopt's and --help's. */
static const struct opt_doc opts[] = {
	{ { "interface", required_argument, NULL, 'i' }, 'i', "IFNAME",
	  "route on IFNAME (repeat for each interface; none by default)" },
	{ { "netns", required_argument, NULL, 'N' }, 'N', "NAME",
	  "run in network namespace /run/netns/NAME (keeps bpffs visible)" },
	{ { "bpffs-dir", required_argument, NULL, 'b' }, 'b', "DIR",
	  "pin maps under DIR (default " FPMD_DEFAULT_PIN_DIR ")" },
	{ { "socket", required_argument, NULL, 's' }, 's', "PATH",
	  "control socket (default " FPMD_DEFAULT_SOCKET ")" },
	{ { "socket-group", required_argument, NULL, OPT_SOCK_GROUP }, 0,
	  "GROUP", "group owning the control socket (default " FPMD_SOCKET_GROUP ")" },
	{ { "keep-forwarding", no_argument, NULL, OPT_KEEP }, 0, NULL,
	  "on exit leave XDP attached and maps pinned (restart without loss)" },
	{ { "allow-netfilter-bypass", no_argument, NULL, OPT_NF_BYPASS }, 0,
	  NULL, "attach even though netfilter rules act on forwarded traffic" },
	{ { "xdp-mode", required_argument, NULL, OPT_XDP_MODE }, 0,
	  "native|generic|auto", "XDP attach mode (default auto: native, "
	  "generic with a warning if refused)" },
	{ { "guard-interval", required_argument, NULL, OPT_GUARD_MS }, 0, "MS",
	  "re-check netfilter, sysctls, rules, tc, veth peers every MS (1000)" },
	{ { "max-routes-v4", required_argument, NULL, OPT_MAX_V4 }, 0, "N",
	  "IPv4 route table size" },
	{ { "max-routes-v6", required_argument, NULL, OPT_MAX_V6 }, 0, "N",
	  "IPv6 route table size" },
	{ { "max-nexthops", required_argument, NULL, OPT_MAX_NH }, 0, "N",
	  "nexthop table size" },
	{ { "max-groups", required_argument, NULL, OPT_MAX_GRP }, 0, "N",
	  "nexthop group table size" },
	{ { "max-neighbors", required_argument, NULL, OPT_MAX_NEIGH }, 0, "N",
	  "neighbor table size (per family)" },
	{ { "fpm-address", required_argument, NULL, OPT_FPM_ADDR }, 0, "ADDR",
	  "accept zebra's FPM connection on ADDR (default 127.0.0.1; IPv6 ok)" },
	{ { "fpm-port", required_argument, NULL, OPT_FPM_PORT }, 0, "PORT",
	  "FPM port (default 2620)" },
	{ { "no-fpm", no_argument, NULL, OPT_NO_FPM }, 0, NULL,
	  "no FPM server" },
	{ { "fpm-settle", required_argument, NULL, OPT_FPM_SETTLE }, 0, "MS",
	  "a replay has ended after MS quiet; then stale routes go (3000)" },
	{ { "fpm-hold", required_argument, NULL, OPT_FPM_HOLD }, 0, "SEC",
	  "keep forwarding a lost FPM feed's routes SEC seconds (300)" },
	{ { "plugin-socket", required_argument, NULL, OPT_PLUGIN_SOCK }, 0,
	  "PATH", "zebra plugin feed socket (default " FPMD_DEFAULT_PLUGIN_SOCKET ")" },
	{ { "no-plugin", no_argument, NULL, OPT_NO_PLUGIN }, 0, NULL,
	  "no zebra plugin feed" },
	{ { "log", required_argument, NULL, 'l' }, 'l', "TARGET",
	  "stderr (default), syslog or file:PATH" },
	{ { "debug", no_argument, NULL, 'd' }, 'd', NULL, "debug logging" },
	{ { "version", no_argument, NULL, 'v' }, 'v', NULL, "print version" },
	{ { "help", no_argument, NULL, 'h' }, 'h', NULL, "this help" },
};
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

static void usage(FILE *f)
{
	fprintf(f, "Usage: fpmd [OPTIONS]\nXDP routing fast path for FRR.\n\n");
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

static int parse_u32(const char *opt, const char *s, uint32_t min,
		     uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v < min || v > UINT32_MAX) {
		fprintf(stderr, "fpmd: --%s: '%s' is not a number >= %u\n", opt,
			s, min);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_args(int argc, char **argv)
{
	struct option lo[N_OPTS + 1];
	char so[64] = "";
	int c;

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
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		uint32_t v;

		switch (c) {
		case 'i':
			if (cfg.n_ifnames >= FPMD_MAX_CFG_IFACES) {
				fprintf(stderr, "fpmd: at most %d interfaces\n",
					FPMD_MAX_CFG_IFACES);
				return -1;
			}
			if (strlen(optarg) >= IF_NAMESIZE) {
				fprintf(stderr, "fpmd: interface name '%s' too "
						"long\n", optarg);
				return -1;
			}
			cfg.ifnames[cfg.n_ifnames++] = optarg;
			break;
		case 'N': cfg.netns = optarg; break;
		case 'b': cfg.pin_dir = optarg; break;
		case 's': cfg.socket_path = optarg; break;
		case 'l': cfg.log_target = optarg; break;
		case 'd': cfg.debug = true; break;
		case OPT_SOCK_GROUP: cfg.socket_group = optarg; break;
		case OPT_KEEP: cfg.keep_forwarding = true; break;
		case OPT_NF_BYPASS: cfg.allow_nf_bypass = true; break;
		case OPT_XDP_MODE:
			if (!strcmp(optarg, "native"))
				cfg.xdp_mode = XDP_MODE_NATIVE;
			else if (!strcmp(optarg, "generic"))
				cfg.xdp_mode = XDP_MODE_GENERIC;
			else if (!strcmp(optarg, "auto"))
				cfg.xdp_mode = XDP_MODE_AUTO;
			else {
				fprintf(stderr, "fpmd: --xdp-mode: '%s' is not "
						"native, generic or auto\n",
					optarg);
				return -1;
			}
			break;
		case OPT_GUARD_MS:
			if (parse_u32("guard-interval", optarg, 10, &v))
				return -1;
			cfg.guard_interval_ms = v;
			break;
		case OPT_MAX_V4:
			if (parse_u32("max-routes-v4", optarg, 1, &cfg.max_routes_v4))
				return -1;
			break;
		case OPT_MAX_V6:
			if (parse_u32("max-routes-v6", optarg, 1, &cfg.max_routes_v6))
				return -1;
			break;
		case OPT_MAX_NH:
			if (parse_u32("max-nexthops", optarg, 1, &cfg.max_nexthops))
				return -1;
			if (cfg.max_nexthops > FPMD_RT_INDEX_MASK + 1u) {
				fprintf(stderr, "fpmd: --max-nexthops: at most %u\n",
					FPMD_RT_INDEX_MASK + 1u);
				return -1;
			}
			break;
		case OPT_MAX_GRP:
			if (parse_u32("max-groups", optarg, 1, &cfg.max_groups))
				return -1;
			if (cfg.max_groups > FPMD_RT_INDEX_MASK + 1u) {
				fprintf(stderr, "fpmd: --max-groups: at most %u\n",
					FPMD_RT_INDEX_MASK + 1u);
				return -1;
			}
			break;
		case OPT_FPM_ADDR: cfg.fpm_address = optarg; break;
		case OPT_NO_FPM: cfg.fpm_address = NULL; break;
		case OPT_PLUGIN_SOCK: cfg.plugin_socket = optarg; break;
		case OPT_NO_PLUGIN: cfg.plugin_socket = NULL; break;
		case OPT_FPM_PORT:
			if (parse_u32("fpm-port", optarg, 1, &v) || v > 65535) {
				fprintf(stderr, "fpmd: --fpm-port: 1..65535\n");
				return -1;
			}
			cfg.fpm_port = (uint16_t)v;
			break;
		case OPT_FPM_SETTLE:
			if (parse_u32("fpm-settle", optarg, 10, &v))
				return -1;
			cfg.fpm_settle_ms = v;
			break;
		case OPT_FPM_HOLD:
			if (parse_u32("fpm-hold", optarg, 0, &v))
				return -1;
			cfg.fpm_hold_s = v;
			break;
		case OPT_MAX_NEIGH:
			if (parse_u32("max-neighbors", optarg, 1, &cfg.max_neigh))
				return -1;
			break;
		case 'v':
			printf("fpmd %s (map layout %d)\n", PACKAGE_VERSION,
			       FPMD_LAYOUT_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
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

	/* A rename away from a managed name. */
	if (old && old != i)
		iface_gone(old);
	if (!i)
		return;
	if (i->ifindex && i->ifindex != l->ifindex)
		iface_gone(i);
	if (!iface_update(i, l) && i->attached)
		return;
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
};

static void addr_event(void *arg)
{
	/* The kernel adds the local route after it announces the address:
	 * look now and once more shortly after. */
	need_local_refresh = true;
}

static const struct nl_event_ops nl_ops = {
	.link = link_changed,
	.link_gone = link_gone,
	.neigh = neigh_event,
	.addr = addr_event,
};

static int epfd = -1;
static bool recheck;

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void fpmd_request_recheck(void)
{
	recheck = true;
}


static int ev_add(int fd, enum ev_kind kind)
{
	struct epoll_event e = { .events = EPOLLIN };

	e.data.u64 = ((uint64_t)kind << 32) | (uint32_t)fd;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e);
}

static void periodic(void)
{
	static uint64_t local_last;

	if (guard_check() && !cfg.allow_nf_bypass)
		log_debug("guard: netfilter still refuses the fast path");
	recheck = false;
	/* Events drive the local table; a slow re-read catches a local
	 * route the kernel added well after announcing its address (IPv6
	 * DAD). A dump walks the whole FIB (~0.3 s at 1M routes). */
	if (mono_ms() - local_last >= 30000) {
		local_last = mono_ms();
		local_routes_refresh();
	}
}

void fpmd_reload(void)
{
	log_info("reload: re-checking guards, local routes and neighbors");
	periodic();
	local_routes_refresh();
	neigh_resync();
}

static int run(int sfd)
{
	struct epoll_event evs[16];

	uint64_t local_due = 0; /* ms, CLOCK_MONOTONIC */

	for (;;) {
		int timeout = -1, n;

		if (local_due) {
			uint64_t now = mono_ms();

			timeout = local_due > now ? (int)(local_due - now) : 0;
		}
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

			switch (kind) {
			case EV_SIGNAL: {
				struct signalfd_siginfo si;

				if (read(sfd, &si, sizeof(si)) != sizeof(si))
					break;
				if (si.ssi_signo == SIGHUP) {
					fpmd_reload();
					break;
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

				if (cfd >= 0)
					ev_add(cfd, EV_CTL_CLIENT);
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
				}
				break;
			}
			case EV_FPM_LISTEN: {
				int cfd = fpm_accept();

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
		if (recheck)
			periodic();
	}
}

static void stop(void)
{
	ctl_close();
	fpm_close();
	plugin_close();
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		struct iface *i = &iface_tab[s];

		if (!i->used || !i->attached)
			continue;
		if (cfg.keep_forwarding)
			log_info("iface %s: XDP left attached (--keep-forwarding)",
				 i->name);
		else
			iface_detach(i);
	}
	if (cfg.keep_forwarding)
		log_info("bpffs: maps stay pinned in %s; a new fpmd adopts them",
			 cfg.pin_dir);
	else
		xdp_unpin();
	xdp_close();
	nl_close();
	rib_free();
	free(local_prev.routes.p);
	free(local_prev.addrs.p);
}

int main(int argc, char **argv)
{
	struct itimerspec its = { 0 };
	sigset_t mask;
	int sfd, tfd, nlfd, lfd, ret;
	bool adopted;

	if (parse_args(argc, argv))
		return 2;
	if (log_open(cfg.log_target, cfg.debug)) {
		fprintf(stderr, "fpmd: --log: '%s' is not stderr, syslog or "
				"file:PATH (or the file cannot be opened)\n",
			cfg.log_target);
		return 2;
	}
	if (cfg.netns && enter_netns(cfg.netns))
		return 1;
	if (!cfg.n_ifnames)
		log_warn("no interface given (-i): fpmd attaches to nothing "
			 "until one is");

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	ret = nl_open();
	if (ret) {
		log_err("netlink: %s", strerror(-ret));
		return 1;
	}
	if (rib_init(cfg.max_nexthops, cfg.max_groups)) {
		log_err("out of memory");
		return 1;
	}
	if (xdp_load(&adopted))
		return 1;
	prog_fd = xdp_prog_fd();
	if (adopted && rib_adopt(cfg.max_nexthops, cfg.max_groups))
		log_warn("adopt: out of memory; starting with empty tables");
	else if (adopted)
		local_routes_seed();

	for (int k = 0; k < cfg.n_ifnames; k++)
		if (!iface_add(cfg.ifnames[k], !adopted)) {
			log_err("too many interfaces");
			return 1;
		}
	nlfd = nl_events_open();
	if (nlfd < 0) {
		log_err("netlink: events: %s", strerror(-nlfd));
		return 1;
	}
	/* Guards run before anything is attached: refuse, or attach with
	 * the right flags from the first packet on. */
	{
		char nf[512];

		if (netfilter_scan(nf, sizeof(nf)) > 0 && !cfg.allow_nf_bypass) {
			log_err("netfilter: %s. XDP would bypass these rules for "
				"forwarded traffic, so fpmd refuses to attach. "
				"Remove them, or start fpmd with "
				"--allow-netfilter-bypass if forwarded traffic "
				"may skip them.",
				nf);
			if (!adopted)
				xdp_unpin();
			xdp_close();
			return 1;
		}
	}
	nl_dump_links(link_learn, NULL);
	guard_check();
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		struct iface *i = &iface_tab[s];

		if (!i->used)
			continue;
		if (!i->ifindex) {
			log_warn("iface %s: not present; attaching when it "
				 "appears", i->name);
			continue;
		}
		if (iface_attach(i, prog_fd))
			continue;
		iface_sync(i);
		rib_iface_changed(i->ifindex);
	}
	periodic();

	neigh_resync();
	local_routes_refresh();

	lfd = ctl_open(cfg.socket_path, cfg.socket_group);
	if (lfd < 0) {
		log_err("ctl: cannot listen on %s: %s", cfg.socket_path,
			strerror(-lfd));
		stop();
		return 1;
	}
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	its.it_interval.tv_sec = cfg.guard_interval_ms / 1000;
	its.it_interval.tv_nsec = (long)(cfg.guard_interval_ms % 1000) * 1000000;
	its.it_value = its.it_interval;
	timerfd_settime(tfd, 0, &its, NULL);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || tfd < 0 || epfd < 0 || ev_add(sfd, EV_SIGNAL) ||
	    ev_add(tfd, EV_TIMER) || ev_add(lfd, EV_CTL_LISTEN) ||
	    ev_add(nlfd, EV_NL)) {
		log_err("event loop: %s", strerror(errno));
		stop();
		return 1;
	}
	if (cfg.fpm_address) {
		int ffd = fpm_open(cfg.fpm_address, cfg.fpm_port);

		if (ffd < 0) {
			log_err("fpm: cannot listen on %s port %u: %s",
				cfg.fpm_address, cfg.fpm_port, strerror(-ffd));
			stop();
			return 1;
		}
		if (ev_add(ffd, EV_FPM_LISTEN) ||
		    ev_add(fpm_timer_fd(), EV_FPM_TIMER)) {
			log_err("event loop: %s", strerror(errno));
			stop();
			return 1;
		}
	}
	if (cfg.plugin_socket) {
		int pfd = plugin_open(cfg.plugin_socket, cfg.socket_group);

		if (pfd < 0) {
			log_err("plugin: cannot listen on %s: %s",
				cfg.plugin_socket, strerror(-pfd));
			stop();
			return 1;
		}
		if (ev_add(pfd, EV_PLUGIN_LISTEN) ||
		    ev_add(plugin_timer_fd(), EV_PLUGIN_TIMER)) {
			log_err("event loop: %s", strerror(errno));
			stop();
			return 1;
		}
	}
	log_info("fpmd %s started: %d interface(s), control socket %s%s",
		 PACKAGE_VERSION, cfg.n_ifnames, cfg.socket_path,
		 adopted ? ", maps adopted" : "");
	ret = run(sfd);
	stop();
	return ret ? 1 : 0;
}
