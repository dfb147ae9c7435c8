// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmctl: the command-line client of fpmd's control socket. Commands are
 * declared in one table; each builds a protobuf Request and prints the
 * Response as text or, with --json, as JSON shaped like FRR's show output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "config.h"
#include "fpmd.pb-c.h"
#include "common/util.h"
#include "common/wire.h"

#define DEFAULT_SOCKET FPMD_RUNSTATEDIR "/fpmd.sock"

static bool json;
static bool show_all;
static bool only_groups; /* show groups: the nexthops that are groups */
static const char *sock_path = DEFAULT_SOCKET;

/* ---- talking to fpmd ----------------------------------------------------- */

static int conn = -1;

static Fpmd__Response *receive(void)
{
	uint8_t *buf = NULL;
	Fpmd__Response *rsp;
	long n;

	n = wire_recv(conn, &buf, WIRE_MAX_RESPONSE);
	if (n < 0) {
		fprintf(stderr, "fpmctl: receive: %s\n", strerror((int)-n));
		exit(1);
	}
	rsp = fpmd__response__unpack(NULL, (size_t)n, buf);
	free(buf);
	if (!rsp) {
		fprintf(stderr, "fpmctl: malformed response from fpmd\n");
		exit(1);
	}
	return rsp;
}

static Fpmd__Response *transact(Fpmd__Request *req)
{
	int ret = wire_send(conn, &req->base);

	if (ret) {
		fprintf(stderr, "fpmctl: send: %s\n", strerror(-ret));
		exit(1);
	}
	return receive();
}

static void connect_fpmd(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	Fpmd__Request req = FPMD__REQUEST__INIT;
	Fpmd__Hello hello = FPMD__HELLO__INIT;
	Fpmd__Response *rsp;

	if (strlen(sock_path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "fpmctl: socket path too long\n");
		exit(1);
	}
	strcpy(sa.sun_path, sock_path);
	conn = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (conn < 0 || connect(conn, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "fpmctl: cannot connect to fpmd at %s: %s\n",
			sock_path, strerror(errno));
		exit(1);
	}
	hello.version = FPMD__API_VERSION__API_VERSION_CURRENT;
	hello.peer = "fpmctl " PACKAGE_VERSION;
	req.req_case = FPMD__REQUEST__REQ_HELLO;
	req.hello = &hello;
	rsp = transact(&req);
	if (rsp->status != FPMD__STATUS__OK) {
		fprintf(stderr, "fpmctl: fpmd refused us: %s (fpmd speaks API "
				"version %u, we speak %u)\n",
			rsp->error, rsp->hello ? rsp->hello->version : 0,
			FPMD__API_VERSION__API_VERSION_CURRENT);
		exit(1);
	}
	fpmd__response__free_unpacked(rsp, NULL);
}

static int check(Fpmd__Response *rsp)
{
	if (rsp->status == FPMD__STATUS__OK)
		return 0;
	fprintf(stderr, "fpmctl: %s\n", rsp->error && rsp->error[0] ?
						rsp->error :
						"request failed");
	return 1;
}

/* ---- argument helpers ---------------------------------------------------- */

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "fpmctl: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static Fpmd__Prefix *prefix_arg(const char *s, uint8_t *store)
{
	static Fpmd__Prefix p;
	struct prefix pf;
	const char *err;

	if (parse_prefix(s, &pf, &err)) {
		fprintf(stderr, "fpmctl: bad prefix '%s': %s\n", s, err);
		exit(2);
	}
	fpmd__prefix__init(&p);
	memcpy(store, pf.addr, 16);
	p.addr.data = store;
	p.addr.len = (size_t)addr_len(pf.family);
	p.len = pf.len;
	return &p;
}

static ProtobufCBinaryData addr_arg(const char *s, uint8_t *store)
{
	ProtobufCBinaryData b;
	uint8_t fam;

	if (parse_addr(s, &fam, store))
		die("bad address '%s'", s);
	b.data = store;
	b.len = (size_t)addr_len(fam);
	return b;
}

static uint32_t u32_arg(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v > UINT32_MAX)
		die(what, s);
	return (uint32_t)v;
}

/* ---- output helpers ------------------------------------------------------ */

static void jstr(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static const char *bin_addr(ProtobufCBinaryData b, char *buf)
{
	if (b.len != 4 && b.len != 16)
		return "";
	return fmt_addr(b.len == 4 ? AF_INET : AF_INET6, b.data, buf);
}

static const char *bin_prefix(const Fpmd__Prefix *p, char *buf)
{
	char a[ADDR_STRLEN];

	snprintf(buf, PREFIX_STRLEN, "%s/%u", bin_addr(p->addr, a), p->len);
	return buf;
}

static const char *bin_mac(ProtobufCBinaryData b, char *buf)
{
	if (b.len != 6)
		return "";
	return fmt_mac(b.data, buf);
}

static const char *source_name(Fpmd__Source s)
{
	switch (s) {
	case FPMD__SOURCE__SRC_PLUGIN: return "plugin";
	case FPMD__SOURCE__SRC_FPM: return "fpm";
	case FPMD__SOURCE__SRC_STATIC: return "static";
	case FPMD__SOURCE__SRC_KERNEL: return "kernel";
	default: return "unknown";
	}
}

static const char *rtype_name(Fpmd__RouteType t)
{
	switch (t) {
	case FPMD__ROUTE_TYPE__RT_BLACKHOLE: return "blackhole";
	case FPMD__ROUTE_TYPE__RT_UNREACHABLE: return "unreachable";
	case FPMD__ROUTE_TYPE__RT_PROHIBIT: return "prohibit";
	case FPMD__ROUTE_TYPE__RT_LOCAL: return "local";
	default: return "unicast";
	}
}

/* ---- show ------------------------------------------------------------------ */

static Fpmd__Response *show(Fpmd__Show what, Fpmd__Prefix *p)
{
	Fpmd__Request req = FPMD__REQUEST__INIT;
	Fpmd__ShowRequest s = FPMD__SHOW_REQUEST__INIT;

	s.what = what;
	s.prefix = p;
	req.req_case = FPMD__REQUEST__REQ_SHOW;
	req.show = &s;
	return transact(&req);
}

/* Called once per chunk of a streamed 'show routes' (rsp->more: another
 * follows), so the table is printed as it arrives, in bounded memory. */
static int print_routes(Fpmd__Response *rsp)
{
	static char prev[PREFIX_STRLEN];
	static size_t printed;
	static bool started;
	static int w = 18;
	char pb[PREFIX_STRLEN], ab[ADDR_STRLEN];

	if (json) {
		/* { "PREFIX": [ {entry per source} ] }, as FRR's show ip route json */
		if (!started)
			printf("{");
		started = true;
		for (size_t i = 0; i < rsp->n_routes; i++, printed++) {
			Fpmd__Route *r = rsp->routes[i];
			bool first =
			    !printed || strcmp(prev, bin_prefix(r->prefix, pb));

			bin_prefix(r->prefix, pb);
			if (first) {
				printf("%s\n  ", printed ? "\n  ]," : "");
				jstr(pb);
				printf(": [");
			} else {
				printf(",");
			}
			strcpy(prev, pb);
			printf("\n    {\"prefix\": ");
			jstr(pb);
			/* protocol as FRR's JSON names it; source: which feed */
			printf(", \"prefixLen\": %u, \"protocol\": ",
			       r->prefix->len);
			jstr(r->protocol);
			printf(", \"source\": \"%s\", "
			       "\"type\": \"%s\", \"selected\": %s, "
			       "\"installed\": %s, \"state\": ",
			       source_name(r->source), rtype_name(r->type),
			       r->selected ? "true" : "false",
			       r->programmed ? "true" : "false");
			jstr(r->state);
			printf(", \"table\": %u", r->table);
			if (r->nhid)
				printf(", \"nexthopGroupId\": %u", r->nhid);
			if (r->type == FPMD__ROUTE_TYPE__RT_UNICAST) {
				printf(", \"fpmdIndex\": %u, \"isGroup\": %s, "
				       "\"nexthops\": [",
				       r->index, r->is_group ? "true" : "false");
				if (!r->is_group) {
					printf("{");
					if (r->gateway.len) {
						printf("\"ip\": ");
						jstr(bin_addr(r->gateway, ab));
						printf(", \"afi\": \"%s\", ",
						       r->gateway.len == 4 ? "ipv4" : "ipv6");
					} else {
						printf("\"directlyConnected\": true, ");
					}
					printf("\"interfaceName\": ");
					jstr(r->ifname);
					printf("}");
				}
				printf("]");
			}
			printf("}");
		}
		if (!rsp->more)
			printf("%s}\n", printed ? "\n  ]\n" : "");
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

		if (r->table && r->table != 254) {
			snprintf(nh, sizeof(nh), "table %u", r->table);
		} else if (!strcmp(r->state, "nexthop-id-unknown")) {
			snprintf(nh, sizeof(nh), "nhid %u (never sent)", r->nhid);
		} else if (r->type == FPMD__ROUTE_TYPE__RT_UNICAST &&
			   r->ifname[0]) {
			if (r->is_group)
				snprintf(nh, sizeof(nh), "group %u", r->nhid);
			else if (r->gateway.len)
				snprintf(nh, sizeof(nh), "via %s dev %s%s",
					 bin_addr(r->gateway, ab), r->ifname,
					 r->nhid ? "" : "");
			else
				snprintf(nh, sizeof(nh), "dev %s (connected)",
					 r->ifname);
			if (r->nhid && !r->is_group) {
				size_t l = strlen(nh);

				snprintf(nh + l, sizeof(nh) - l, " (nhid %u)",
					 r->nhid);
			}
		} else if (r->is_group) {
			snprintf(nh, sizeof(nh), "group %u", r->nhid);
		}
		printf("%-*s %-7s %-10s %-11s %-3s %-16s %s\n", w,
		       bin_prefix(r->prefix, pb), source_name(r->source),
		       r->protocol, rtype_name(r->type), r->selected ? "*" : "",
		       r->state, nh);
	}
	return 0;
}

static int print_nexthop_list(Fpmd__Response *rsp);

static int print_nexthops(Fpmd__Response *rsp)
{
	size_t n0 = rsp->n_nexthops;
	int ret;

	if (only_groups) {
		/* Groups first (swapped, so all stay owned), print only them. */
		size_t k = 0;

		for (size_t i = 0; i < n0; i++) {
			if (rsp->nexthops[i]->n_members) {
				Fpmd__Nexthop *t = rsp->nexthops[k];

				rsp->nexthops[k++] = rsp->nexthops[i];
				rsp->nexthops[i] = t;
			}
		}
		rsp->n_nexthops = k;
	}
	ret = print_nexthop_list(rsp);
	rsp->n_nexthops = n0;
	return ret;
}

static int print_nexthop_list(Fpmd__Response *rsp)
{
	char ab[ADDR_STRLEN], mb[MAC_STRLEN];

	if (json) {
		printf("{");
		for (size_t i = 0; i < rsp->n_nexthops; i++) {
			Fpmd__Nexthop *n = rsp->nexthops[i];
			char key[32];

			if (n->id)
				snprintf(key, sizeof(key), "%u", n->id);
			else
				snprintf(key, sizeof(key), "implicit-%u", n->index);
			printf("%s\n  ", i ? "," : "");
			jstr(key);
			printf(": {\"id\": %u, \"source\": \"%s\", \"fpmdIndex\": %u, "
			       "\"refCount\": %u, \"state\": ",
			       n->id, n->id ? source_name(n->source) : "implicit",
			       n->index, n->refcnt);
			jstr(n->state);
			if (n->n_members) {
				printf(", \"group\": true, \"buckets\": %u, "
				       "\"nexthops\": [",
				       n->buckets);
				for (size_t m = 0; m < n->n_members; m++)
					printf("%s{\"id\": %u, \"weight\": %u}",
					       m ? ", " : "", n->members[m]->nhid,
					       n->members[m]->weight);
				printf("]}");
				continue;
			}
			printf(", \"group\": false, \"interfaceName\": ");
			jstr(n->ifname);
			printf(", \"ifindex\": %u", n->ifindex);
			if (n->gateway.len) {
				printf(", \"ip\": ");
				jstr(bin_addr(n->gateway, ab));
			} else {
				printf(", \"directlyConnected\": true");
			}
			printf(", \"resolved\": %s", n->resolved ? "true" : "false");
			if (n->mac.len) {
				printf(", \"mac\": ");
				jstr(bin_mac(n->mac, mb));
			}
			printf("}");
		}
		printf("%s}\n", rsp->n_nexthops ? "\n" : "");
		return 0;
	}
	printf("%-8s %-7s %-6s %-4s %-15s %s\n", "ID", "Source", "Index", "Refs",
	       "State", "Nexthop");
	for (size_t i = 0; i < rsp->n_nexthops; i++) {
		Fpmd__Nexthop *n = rsp->nexthops[i];
		char id[16], what[256] = "";

		snprintf(id, sizeof(id), n->id ? "%u" : "-", n->id);
		if (n->n_members) {
			size_t l = (size_t)snprintf(what, sizeof(what),
						    "group (%u buckets):",
						    n->buckets);

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
			snprintf(what, sizeof(what), "dev %s (connected)",
				 n->ifname);
		}
		printf("%-8s %-7s %-6u %-4u %-15s %s\n", id,
		       n->id ? source_name(n->source) : "-", n->index, n->refcnt,
		       n->state, what);
	}
	return 0;
}

static int print_neighbors(Fpmd__Response *rsp)
{
	char ab[ADDR_STRLEN], mb[MAC_STRLEN];

	if (json) {
		printf("[");
		for (size_t i = 0; i < rsp->n_neighbors; i++) {
			Fpmd__Neighbor *n = rsp->neighbors[i];

			printf("%s\n  {\"ip\": ", i ? "," : "");
			jstr(bin_addr(n->addr, ab));
			printf(", \"interfaceName\": ");
			jstr(n->ifname);
			printf(", \"ifindex\": %u, \"mac\": ", n->ifindex);
			jstr(bin_mac(n->mac, mb));
			printf(", \"source\": \"%s\"}", source_name(n->source));
		}
		printf("%s]\n", rsp->n_neighbors ? "\n" : "");
		return 0;
	}
	printf("%-40s %-16s %-17s %s\n", "Address", "Interface", "MAC",
	       "Source");
	for (size_t i = 0; i < rsp->n_neighbors; i++) {
		Fpmd__Neighbor *n = rsp->neighbors[i];

		printf("%-40s %-16s %-17s %s\n", bin_addr(n->addr, ab), n->ifname,
		       bin_mac(n->mac, mb), source_name(n->source));
	}
	return 0;
}

static int print_interfaces(Fpmd__Response *rsp)
{
	char mb[MAC_STRLEN];

	if (json) {
		printf("{");
		for (size_t i = 0; i < rsp->n_interfaces; i++) {
			Fpmd__Interface *f = rsp->interfaces[i];

			printf("%s\n  ", i ? "," : "");
			jstr(f->name);
			printf(": {\"ifindex\": %u, \"slot\": %u, \"mac\": ",
			       f->ifindex, f->slot);
			jstr(bin_mac(f->mac, mb));
			printf(", \"mtu\": %u, \"xdpMode\": ", f->mtu);
			jstr(f->xdp_mode);
			printf(", \"xdpState\": ");
			jstr(f->xdp_state);
			printf(", \"xdpReason\": ");
			jstr(f->xdp_reason);
			printf(", \"operUp\": %s, \"txPort\": %s, \"txReason\": ",
			       f->oper_up ? "true" : "false",
			       f->tx_port ? "true" : "false");
			jstr(f->tx_reason);
			printf(", \"tx\": %llu, \"txRedirectErrors\": %llu, "
			       "\"txXmitDrops\": %llu",
			       (unsigned long long)f->tx,
			       (unsigned long long)f->tx_redirect_errors,
			       (unsigned long long)f->tx_xmit_drops);
			printf(", \"flags\": [");
			for (size_t k = 0; k < f->n_flags; k++) {
				printf("%s", k ? ", " : "");
				jstr(f->flags[k]);
			}
			printf("]}");
		}
		printf("%s}\n", rsp->n_interfaces ? "\n" : "");
		return 0;
	}
	printf("%-16s %-7s %-4s %-17s %-5s %-7s %-4s %-4s %s\n", "Interface",
	       "Ifindex", "Slot", "MAC", "MTU", "XDP", "Up", "Tx", "Flags");
	for (size_t i = 0; i < rsp->n_interfaces; i++) {
		Fpmd__Interface *f = rsp->interfaces[i];
		unsigned long long lost, left;
		char flags[256] = "";

		for (size_t k = 0; k < f->n_flags; k++) {
			strncat(flags, f->flags[k], sizeof(flags) - strlen(flags) - 2);
			if (k + 1 < f->n_flags)
				strcat(flags, ",");
		}
		printf("%-16s %-7u %-4u %-17s %-5u %-7s %-4s %-4s %s\n", f->name,
		       f->ifindex, f->slot, bin_mac(f->mac, mb), f->mtu,
		       f->xdp_mode, f->oper_up ? "yes" : "no",
		       f->tx_port ? "yes" : "no", flags);
		if (strcmp(f->xdp_state, "attached"))
			printf("%16s   XDP %s: %s\n", "", f->xdp_state,
			       f->xdp_reason);
		if (!f->tx_port && f->tx_reason[0])
			printf("%16s   not a tx port: %s\n", "", f->tx_reason);
		/* The drop tracepoint also sees other programs' redirects. */
		lost = f->tx_redirect_errors + f->tx_xmit_drops;
		left = f->tx > lost ? f->tx - lost : 0;
		if (lost)
			printf("%16s   tx %llu, redirect errors %llu, "
			       "xmit drops %llu: %llu left\n",
			       "", (unsigned long long)f->tx,
			       (unsigned long long)f->tx_redirect_errors,
			       (unsigned long long)f->tx_xmit_drops,
			       (unsigned long long)left);
	}
	return 0;
}

static int print_counters(Fpmd__Response *rsp)
{
	if (json) {
		/* { "IFNAME": { "REASON": {"packets": N, "bytes": N}, ... } } */
		printf("{");
		for (size_t i = 0; i < rsp->n_counters; i++) {
			Fpmd__Counter *c = rsp->counters[i];
			bool first = !i || strcmp(rsp->counters[i - 1]->ifname,
						  c->ifname);

			if (first) {
				printf("%s\n  ", i ? "\n  }," : "");
				jstr(c->ifname);
				printf(": {");
			} else {
				printf(",");
			}
			printf("\n    ");
			jstr(c->reason);
			printf(": {\"packets\": %llu, \"bytes\": %llu}",
			       (unsigned long long)c->packets,
			       (unsigned long long)c->bytes);
		}
		printf("%s}\n", rsp->n_counters ? "\n  }\n" : "");
		return 0;
	}
	printf("%-16s %-20s %14s %16s\n", "Interface", "Counter", "Packets",
	       "Bytes");
	for (size_t i = 0; i < rsp->n_counters; i++) {
		Fpmd__Counter *c = rsp->counters[i];

		if (!show_all && !c->packets)
			continue;
		printf("%-16s %-20s %14llu %16llu\n", c->ifname, c->reason,
		       (unsigned long long)c->packets,
		       (unsigned long long)c->bytes);
	}
	return 0;
}

static void print_guard_events(const Fpmd__Guard *g)
{
	printf(", \"events\": %llu, \"lastEventNs\": %llu, "
	       "\"lastAppliedNs\": %llu}",
	       (unsigned long long)g->events,
	       (unsigned long long)g->last_event_ns,
	       (unsigned long long)g->last_applied_ns);
}

static int print_guards(Fpmd__Response *rsp)
{
	if (json) {
		printf("{");
		for (size_t i = 0; i < rsp->n_guards; i++) {
			printf("%s\n  ", i ? "," : "");
			jstr(rsp->guards[i]->name);
			printf(": {\"state\": ");
			jstr(rsp->guards[i]->state);
			printf(", \"detail\": ");
			jstr(rsp->guards[i]->detail);
			printf(", \"watch\": ");
			jstr(rsp->guards[i]->watch);
			print_guard_events(rsp->guards[i]);
		}
		printf("%s}\n", rsp->n_guards ? "\n" : "");
		return 0;
	}
	for (size_t i = 0; i < rsp->n_guards; i++)
		printf("%-14s %-12s %s\n", rsp->guards[i]->name,
		       rsp->guards[i]->state, rsp->guards[i]->detail);
	return 0;
}

static int print_feed(const Fpmd__FpmStatus *f, const char *name);

static int print_fpm(Fpmd__Response *rsp)
{
	return print_feed(rsp->fpm, "FPM server");
}

static int print_plugin(Fpmd__Response *rsp)
{
	return print_feed(rsp->plugin, "plugin feed");
}

/* The FPM and plugin feeds share one status shape. */
static int print_feed(const Fpmd__FpmStatus *f, const char *name)
{
	const struct {
		const char *json, *text;
		uint64_t v;
	} nums[] = {
		{ "connections", "connections", f ? f->connections : 0 },
		{ "frames", "frames", f ? f->frames : 0 },
		{ "messages", "messages", f ? f->messages : 0 },
		{ "routeMessages", "route messages", f ? f->route_msgs : 0 },
		{ "nexthopMessages", "nexthop messages", f ? f->nexthop_msgs : 0 },
		{ "otherTable", "other-table route messages", f ? f->other_table : 0 },
		{ "ignored", "ignored messages", f ? f->ignored : 0 },
		{ "errors", "connections closed on bad input", f ? f->errors : 0 },
		{ "refused", "connections refused (user not allowed)",
		  f ? f->refused : 0 },
		{ "routes", "routes from this feed", f ? f->routes : 0 },
		{ "nexthopIdUnknown", "routes waiting for a nexthop id",
		  f ? f->unknown_nhid : 0 },
		{ "replayRefreshed", "last replay: refreshed", f ? f->replay_refreshed : 0 },
		{ "replaySwept", "last replay: stale removed", f ? f->replay_swept : 0 },
		{ "mapWrites", "route map writes (all sources)", f ? f->map_writes : 0 },
		{ "holdRemainingMs", "hold remaining (ms)", f ? f->hold_remaining_ms : 0 },
		{ "routeStatusSent", "route status notifications sent",
		  f ? f->status_sent : 0 },
		{ "routeStatusDropped", "route status dropped (zebra not reading)",
		  f ? f->status_dropped : 0 },
		{ "firstMessageNs", NULL, f ? f->first_message_ns : 0 },
		{ "lastMessageNs", NULL, f ? f->last_message_ns : 0 },
		{ "lastMapWriteNs", NULL, f ? f->last_map_write_ns : 0 },
	};

	if (!f) {
		fprintf(stderr, "fpmctl: fpmd sent no %s status\n", name);
		return 1;
	}
	if (json) {
		printf("{\"enabled\": %s, \"listen\": ", f->enabled ? "true" : "false");
		jstr(f->listen);
		printf(", \"connected\": %s, \"peer\": ",
		       f->connected ? "true" : "false");
		jstr(f->peer);
		printf(", \"replayState\": ");
		jstr(f->replay_state);
		printf(", \"lastError\": ");
		jstr(f->last_error);
		for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
			printf(", \"%s\": %llu", nums[i].json,
			       (unsigned long long)nums[i].v);
		printf("}\n");
		return 0;
	}
	printf("%s: %s (%s)\n", name, f->enabled ? f->listen : "disabled",
	       f->connected ? "zebra connected" : "no zebra connected");
	if (f->connected || f->peer[0])
		printf("  peer: %s\n", f->peer);
	printf("  replay: %s\n", f->replay_state);
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (nums[i].text)
			printf("  %-32s %llu\n", nums[i].text,
			       (unsigned long long)nums[i].v);
	if (f->last_error[0])
		printf("  last error: %s\n", f->last_error);
	return 0;
}

static int print_summary(Fpmd__Response *rsp)
{
	static const char *const src[] = { "kernel", "plugin", "fpm", "static" };
	const Fpmd__Summary *m = rsp->summary;
	const struct {
		const char *json, *text;
		uint64_t v;
	} f[] = {
		{ "routesV4", "IPv4 routes", m ? m->routes_v4 : 0 },
		{ "routesV6", "IPv6 routes", m ? m->routes_v6 : 0 },
		{ "programmed", "in the maps", m ? m->programmed : 0 },
		{ "notProgrammed", "not in the maps (full, error)",
		  m ? m->not_programmed : 0 },
		{ "otherTable", "routes of other tables", m ? m->other_table : 0 },
		{ "nexthops", "nexthops", m ? m->nexthops : 0 },
		{ "groups", "nexthop groups", m ? m->groups : 0 },
		{ "neighbors", "neighbors", m ? m->neighbors : 0 },
		{ "routeMapFull", "routes refused: routes map full",
		  m ? m->route_map_full : 0 },
		{ "nexthopMapFull", "nexthops refused: nexthops map full",
		  m ? m->nexthop_map_full : 0 },
		{ "groupMapFull", "groups refused: nh_groups map full",
		  m ? m->group_map_full : 0 },
		{ "mapErrors", "other map write errors", m ? m->map_errors : 0 },
		{ "maxRoutesV4", "routes_v4 size", m ? m->max_routes_v4 : 0 },
		{ "maxRoutesV6", "routes_v6 size", m ? m->max_routes_v6 : 0 },
		{ "maxNexthops", "nexthops size", m ? m->max_nexthops : 0 },
		{ "maxGroups", "nh_groups size", m ? m->max_groups : 0 },
	};

	if (!m) {
		fprintf(stderr, "fpmctl: fpmd sent no summary\n");
		return 1;
	}
	if (json) {
		printf("{");
		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
			printf("%s\"%s\": %llu", i ? ", " : "", f[i].json,
			       (unsigned long long)f[i].v);
		printf(", \"routesBySource\": {");
		for (size_t i = 0; i < m->n_by_source && i < 4; i++)
			printf("%s\"%s\": %llu", i ? ", " : "", src[i],
			       (unsigned long long)m->by_source[i]);
		printf("}, \"routesByProtocol\": {");
		for (size_t i = 0; i < m->n_by_protocol; i++) {
			printf("%s", i ? ", " : "");
			jstr(m->by_protocol[i]->name);
			printf(": %llu",
			       (unsigned long long)m->by_protocol[i]->count);
		}
		printf("}}\n");
		return 0;
	}
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		printf("%-38s %llu\n", f[i].text, (unsigned long long)f[i].v);
	for (size_t i = 0; i < m->n_by_source && i < 4; i++)
		printf("routes from %-26s %llu\n", src[i],
		       (unsigned long long)m->by_source[i]);
	for (size_t i = 0; i < m->n_by_protocol; i++)
		printf("routes by protocol %-19s %llu\n",
		       m->by_protocol[i]->name,
		       (unsigned long long)m->by_protocol[i]->count);
	return 0;
}

/* YANG documents (state, running config) are JSON already. */
static int print_document(Fpmd__Response *rsp)
{
	fputs(rsp->document, stdout);
	if (!*rsp->document || rsp->document[strlen(rsp->document) - 1] != '\n')
		putchar('\n');
	return 0;
}

/* ---- commands -------------------------------------------------------------- */

static int run_show(int argc, char **argv)
{
	/* The singular is accepted too ("show route", as vtysh's "show ip
	 * route"). */
	static const struct {
		const char *name, *alias;
		Fpmd__Show what;
		int (*print)(Fpmd__Response *);
	} shows[] = {
		{ "routes", "route", FPMD__SHOW__SHOW_ROUTES, print_routes },
		{ "nexthops", "nexthop", FPMD__SHOW__SHOW_NEXTHOPS,
		  print_nexthops },
		{ "groups", "group", FPMD__SHOW__SHOW_NEXTHOPS,
		  print_nexthops },
		{ "neighbors", "neighbor", FPMD__SHOW__SHOW_NEIGHBORS,
		  print_neighbors },
		{ "interfaces", "interface", FPMD__SHOW__SHOW_INTERFACES,
		  print_interfaces },
		{ "counters", "counter", FPMD__SHOW__SHOW_COUNTERS,
		  print_counters },
		{ "guards", "guard", FPMD__SHOW__SHOW_GUARDS, print_guards },
		{ "fpm", NULL, FPMD__SHOW__SHOW_FPM, print_fpm },
		{ "summary", NULL, FPMD__SHOW__SHOW_SUMMARY, print_summary },
		{ "plugin", NULL, FPMD__SHOW__SHOW_PLUGIN, print_plugin },
		{ "state", NULL, FPMD__SHOW__SHOW_STATE, print_document },
		{ "config", NULL, FPMD__SHOW__SHOW_CONFIG, print_document },
	};
	uint8_t store[16];

	if (argc < 1)
		die("show what? %s",
		    "routes|nexthops|neighbors|interfaces|counters|guards|fpm|"
		    "plugin|summary|state|config");
	for (size_t i = 0; i < sizeof(shows) / sizeof(shows[0]); i++) {
		Fpmd__Prefix *p = NULL;
		Fpmd__Response *rsp;
		int ret;

		if (strcmp(argv[0], shows[i].name) &&
		    (!shows[i].alias || strcmp(argv[0], shows[i].alias)))
			continue;
		only_groups = !strcmp(shows[i].name, "groups");
		if (argc > 1 && shows[i].what == FPMD__SHOW__SHOW_ROUTES)
			p = prefix_arg(argv[1], store);
		else if (argc > 1 && shows[i].what == FPMD__SHOW__SHOW_COUNTERS &&
			 !strcmp(argv[1], "all"))
			show_all = true;
		else if (argc > 1)
			die("unexpected argument '%s'", argv[1]);
		rsp = show(shows[i].what, p);
		ret = check(rsp) ? 1 : shows[i].print(rsp);
		/* A streamed answer: the chunks that follow. */
		while (!ret && rsp->more) {
			fpmd__response__free_unpacked(rsp, NULL);
			rsp = receive();
			ret = check(rsp) ? 1 : shows[i].print(rsp);
		}
		fpmd__response__free_unpacked(rsp, NULL);
		return ret;
	}
	die("unknown show '%s'", argv[0]);
	return 2;
}

static int simple(Fpmd__Request *req)
{
	Fpmd__Response *rsp = transact(req);
	int ret = check(rsp);

	fpmd__response__free_unpacked(rsp, NULL);
	return ret;
}

/* add | replace: true; del | delete: false; anything else is an error. */
static bool action_arg(const char *what, const char *a)
{
	char msg[96];

	if (!strcmp(a, "add") || !strcmp(a, "replace"))
		return true;
	if (!strcmp(a, "del") || !strcmp(a, "delete"))
		return false;
	snprintf(msg, sizeof(msg), "%s: unknown action '%%s' (add, replace, del)",
		 what);
	die(msg, a);
	return false;
}

/* route add PREFIX {via GW dev IF | dev IF | nhid N | blackhole | ...} */
static int run_route(int argc, char **argv)
{
	Fpmd__Request req = FPMD__REQUEST__INIT;
	Fpmd__Route r = FPMD__ROUTE__INIT;
	uint8_t pstore[16], gstore[16];
	bool add;

	if (argc < 2)
		die("usage: route add|del PREFIX ...%s", "");
	add = action_arg("route", argv[0]);
	r.prefix = prefix_arg(argv[1], pstore);
	r.type = FPMD__ROUTE_TYPE__RT_UNICAST;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "blackhole"))
			r.type = FPMD__ROUTE_TYPE__RT_BLACKHOLE;
		else if (!strcmp(argv[i], "unreachable"))
			r.type = FPMD__ROUTE_TYPE__RT_UNREACHABLE;
		else if (!strcmp(argv[i], "prohibit"))
			r.type = FPMD__ROUTE_TYPE__RT_PROHIBIT;
		else if (!strcmp(argv[i], "via") && i + 1 < argc)
			r.gateway = addr_arg(argv[++i], gstore);
		else if (!strcmp(argv[i], "dev") && i + 1 < argc)
			r.ifname = argv[++i];
		else if (!strcmp(argv[i], "nhid") && i + 1 < argc)
			r.nhid = u32_arg(argv[++i], "bad nexthop id '%s'");
		else
			die("route: unexpected '%s'", argv[i]);
	}
	if (add && r.type == FPMD__ROUTE_TYPE__RT_UNICAST && !r.nhid &&
	    !r.ifname[0])
		die("route add: give 'via GW dev IF', 'dev IF', 'nhid ID' or a "
		    "type (blackhole, unreachable, prohibit)%s", "");
	req.req_case = add ? FPMD__REQUEST__REQ_ROUTE_ADD :
			     FPMD__REQUEST__REQ_ROUTE_DEL;
	req.route_add = &r; /* route_del shares the oneof union */
	return simple(&req);
}

/* nexthop add ID {via GW dev IF | dev IF | group ID[,W]/ID[,W]...} */
static int run_nexthop(int argc, char **argv)
{
	Fpmd__Request req = FPMD__REQUEST__INIT;
	Fpmd__Nexthop n = FPMD__NEXTHOP__INIT;
	Fpmd__GroupMember mem[64], *memp[64];
	uint8_t gstore[16];
	bool add;

	if (argc < 2)
		die("usage: nexthop add|del ID ...%s", "");
	add = action_arg("nexthop", argv[0]);
	n.id = u32_arg(argv[1], "bad nexthop id '%s'");
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "via") && i + 1 < argc) {
			n.gateway = addr_arg(argv[++i], gstore);
		} else if (!strcmp(argv[i], "dev") && i + 1 < argc) {
			n.ifname = argv[++i];
		} else if (!strcmp(argv[i], "group") && i + 1 < argc) {
			char *list = argv[++i], *tok, *save = NULL;

			for (tok = strtok_r(list, "/", &save); tok;
			     tok = strtok_r(NULL, "/", &save)) {
				char *comma = strchr(tok, ',');

				if (n.n_members == 64)
					die("group: at most 64 members%s", "");
				fpmd__group_member__init(&mem[n.n_members]);
				if (comma)
					*comma = '\0';
				mem[n.n_members].nhid =
					u32_arg(tok, "bad member id '%s'");
				mem[n.n_members].weight =
					comma ? u32_arg(comma + 1, "bad weight '%s'") : 1;
				memp[n.n_members] = &mem[n.n_members];
				n.n_members++;
			}
			n.members = memp;
		} else {
			die("nexthop: unexpected '%s'", argv[i]);
		}
	}
	if (add && !n.n_members && !n.ifname[0])
		die("nexthop add: give 'via GW dev IF', 'dev IF' or 'group "
		    "ID[,WEIGHT]/...'%s", "");
	req.req_case = add ? FPMD__REQUEST__REQ_NEXTHOP_ADD :
			     FPMD__REQUEST__REQ_NEXTHOP_DEL;
	req.nexthop_add = &n; /* nexthop_del shares the oneof union */
	return simple(&req);
}

/* neighbor add ADDR lladdr MAC dev IF | neighbor del ADDR dev IF */
static int run_neighbor(int argc, char **argv)
{
	Fpmd__Request req = FPMD__REQUEST__INIT;
	Fpmd__Neighbor n = FPMD__NEIGHBOR__INIT;
	uint8_t astore[16], mac[6];
	bool add;

	if (argc < 2)
		die("usage: neighbor add|del ADDR ...%s", "");
	add = action_arg("neighbor", argv[0]);
	n.addr = addr_arg(argv[1], astore);
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "lladdr") && i + 1 < argc) {
			if (parse_mac(argv[++i], mac))
				die("bad MAC '%s'", argv[i]);
			n.mac.data = mac;
			n.mac.len = 6;
		} else if (!strcmp(argv[i], "dev") && i + 1 < argc) {
			n.ifname = argv[++i];
		} else {
			die("neighbor: unexpected '%s'", argv[i]);
		}
	}
	if (!n.ifname[0] || (add && !n.mac.len))
		die("neighbor %s", add ? "add: give 'lladdr MAC dev IF'" :
					 "del: give 'dev IF'");
	req.req_case = add ? FPMD__REQUEST__REQ_NEIGH_ADD :
			     FPMD__REQUEST__REQ_NEIGH_DEL;
	req.neigh_add = &n; /* neigh_del shares the oneof union */
	return simple(&req);
}

/* lookup ADDRESS: which path a packet to ADDRESS takes. */
static int run_lookup(int argc, char **argv)
{
	Fpmd__Request req = FPMD__REQUEST__INIT;
	Fpmd__LookupRequest lr = FPMD__LOOKUP_REQUEST__INIT;
	char pb[PREFIX_STRLEN], ab[ADDR_STRLEN], mb[MAC_STRLEN];
	Fpmd__Response *rsp;
	Fpmd__LookupResult *o;
	uint8_t store[16];
	int ret;

	if (argc != 1)
		die("usage: lookup ADDRESS%s", "");
	lr.addr = addr_arg(argv[0], store);
	req.req_case = FPMD__REQUEST__REQ_LOOKUP;
	req.lookup = &lr;
	rsp = transact(&req);
	ret = check(rsp);
	o = rsp->lookup;
	if (ret || !o) {
		fpmd__response__free_unpacked(rsp, NULL);
		return ret ? ret : 1;
	}
	if (json) {
		printf("{\"address\": ");
		jstr(argv[0]);
		if (o->prefix) {
			printf(", \"prefix\": ");
			jstr(bin_prefix(o->prefix, pb));
			printf(", \"protocol\": ");
			jstr(o->protocol);
			printf(", \"source\": \"%s\", \"type\": \"%s\", "
			       "\"state\": ",
			       source_name(o->source), rtype_name(o->type));
			jstr(o->state);
		}
		printf(", \"fastPath\": %s, \"verdict\": ",
		       o->fast_path ? "true" : "false");
		jstr(o->verdict);
		printf(", \"reason\": ");
		jstr(o->reason);
		if (o->nhid)
			printf(", \"nexthopGroupId\": %u", o->nhid);
		printf(", \"nexthops\": [");
		for (size_t i = 0; i < o->n_nexthops; i++) {
			Fpmd__Nexthop *n = o->nexthops[i];

			printf("%s{\"id\": %u, \"interfaceName\": ", i ? ", " : "",
			       n->id);
			jstr(n->ifname);
			if (n->gateway.len) {
				printf(", \"ip\": ");
				jstr(bin_addr(n->gateway, ab));
			}
			printf(", \"resolved\": %s", n->resolved ? "true" : "false");
			if (n->mac.len) {
				printf(", \"mac\": ");
				jstr(bin_mac(n->mac, mb));
			}
			printf(", \"state\": ");
			jstr(n->state);
			printf("}");
		}
		printf("]}\n");
	} else {
		if (o->prefix)
			printf("%s: route %s (%s, %s %s, %s)\n", argv[0],
			       bin_prefix(o->prefix, pb), source_name(o->source),
			       o->protocol, rtype_name(o->type), o->state);
		else
			printf("%s: no route in the fast path\n", argv[0]);
		printf("  %s: %s\n", o->verdict, o->reason);
		for (size_t i = 0; i < o->n_nexthops; i++) {
			Fpmd__Nexthop *n = o->nexthops[i];

			printf("  nexthop %u: %s%s%s dev %s %s%s [%s]\n", n->id,
			       n->gateway.len ? "via " : "",
			       n->gateway.len ? bin_addr(n->gateway, ab) : "",
			       n->gateway.len ? "" : "connected", n->ifname,
			       n->mac.len ? "lladdr " : "",
			       n->mac.len ? bin_mac(n->mac, mb) : "", n->state);
		}
	}
	fpmd__response__free_unpacked(rsp, NULL);
	return 0;
}

static int run_reload(int argc, char **argv)
{
	Fpmd__Request req = FPMD__REQUEST__INIT;

	if (argc)
		die("usage: reload%s", "");
	req.req_case = FPMD__REQUEST__REQ_RELOAD;
	req.reload = true;
	return simple(&req);
}

static int run_clear(int argc, char **argv)
{
	Fpmd__Request req = FPMD__REQUEST__INIT;

	if (argc < 1 || strcmp(argv[0], "counters"))
		die("usage: clear counters%s", "");
	req.req_case = FPMD__REQUEST__REQ_CLEAR_COUNTERS;
	req.clear_counters = true;
	return simple(&req);
}

static const struct {
	const char *name, *alias, *usage;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "show", NULL,
	  "show routes [PREFIX] | nexthops | groups | neighbors | interfaces | "
	  "counters [all] | guards | fpm | plugin | summary | state | config",
	  run_show },
	{ "route", "routes",
	  "route add PREFIX {via GW dev IF | dev IF | nhid ID | blackhole | "
	  "unreachable | prohibit}\n      route del PREFIX",
	  run_route },
	{ "nexthop", "nexthops",
	  "nexthop add ID {via GW dev IF | dev IF | group ID[,W]/ID[,W]...}\n"
	  "      nexthop del ID",
	  run_nexthop },
	{ "neighbor", "neigh",
	  "neighbor add ADDR lladdr MAC dev IF\n      neighbor del ADDR dev IF",
	  run_neighbor },
	{ "lookup", NULL,
	  "lookup ADDRESS  (the path a packet to ADDRESS takes, or why the "
	  "kernel)",
	  run_lookup },
	{ "clear", NULL, "clear counters", run_clear },
	{ "reload", NULL, "reload  (re-read the configuration file, guards, "
	  "local routes, neighbors)",
	  run_reload },
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "Usage: fpmctl [-s SOCKET] [-j|--json] COMMAND\n\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %s\n", commands[i].usage);
	fprintf(f, "\nSee fpmctl(8).\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "+s:jhv", lo, NULL)) != -1) {
		switch (c) {
		case 's': sock_path = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		case 'v': printf("fpmctl %s\n", PACKAGE_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	argc -= optind;
	argv += optind;
	/* --json also accepted at the end, as in "show routes --json". */
	if (argc && !strcmp(argv[argc - 1], "--json")) {
		json = true;
		argc--;
	} else if (argc && !strcmp(argv[argc - 1], "json")) {
		json = true;
		argc--;
	}
	if (argc < 1) {
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < N_COMMANDS; i++) {
		if (strcmp(argv[0], commands[i].name) &&
		    (!commands[i].alias || strcmp(argv[0], commands[i].alias)))
			continue;
		connect_fpmd();
		return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "fpmctl: unknown command '%s'\n", argv[0]);
	usage(stderr);
	return 2;
}
