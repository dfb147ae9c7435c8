// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmctl: printers of fpmd's status, interfaces, counters, guards, the
 * feeds (FPM, plugin), the summary and the YANG documents, as text or as
 * JSON. Where a status is a list of numbers, one table names each
 * number for both.
 */
#include <stdio.h>
#include <string.h>

#include "cli/fpmctl.h"
#include "common/util.h"

/* A number of a status: its JSON key and its text label (NULL: JSON only). */
struct number {
	const char *json, *text;
	uint64_t v;
};

static void interface_json(struct json *j, const Fpmd__Interface *f)
{
	char mb[MAC_STRLEN];

	json_object(j, f->name);
	json_u64(j, "ifindex", f->ifindex);
	json_u64(j, "slot", f->slot);
	json_str(j, "mac", bin_mac(f->mac, mb));
	json_u64(j, "mtu", f->mtu);
	json_str(j, "xdpMode", f->xdp_mode);
	json_str(j, "xdpState", f->xdp_state);
	json_str(j, "xdpReason", f->xdp_reason);
	json_bool(j, "operUp", f->oper_up);
	json_bool(j, "txPort", f->tx_port);
	json_str(j, "txReason", f->tx_reason);
	json_u64(j, "tx", f->tx);
	json_u64(j, "txRedirectErrors", f->tx_redirect_errors);
	json_u64(j, "txXmitDrops", f->tx_xmit_drops);
	json_str(j, "path", f->path);
	json_bool(j, "tcAttached", f->tc_attached);
	json_str(j, "tcReason", f->tc_reason);
	json_bool(j, "peerEgress", f->peer_egress);
	json_array(j, "flags");
	for (size_t k = 0; k < f->n_flags; k++)
		json_str(j, NULL, f->flags[k]);
	json_close(j);
	json_close(j);
}

static void interface_text(const Fpmd__Interface *f)
{
	unsigned long long lost, left;
	char flags[256] = "", mb[MAC_STRLEN];

	for (size_t k = 0; k < f->n_flags; k++) {
		strncat(flags, f->flags[k], sizeof(flags) - strlen(flags) - 2);
		if (k + 1 < f->n_flags)
			strcat(flags, ",");
	}
	printf("%-16s %-7u %-4u %-17s %-5u %-7s %-4s %-4s %s\n", f->name,
	       f->ifindex, f->slot, bin_mac(f->mac, mb), f->mtu, f->xdp_mode,
	       f->oper_up ? "yes" : "no", f->tx_port ? "yes" : "no", flags);
	if (strcmp(f->xdp_state, "attached"))
		printf("%16s   XDP %s: %s\n", "", f->xdp_state, f->xdp_reason);
	if (f->tc_attached || f->tc_reason[0])
		printf("%16s   path %s, tc program %s%s%s\n", "", f->path,
		       f->tc_attached ? "attached" : "not attached",
		       f->tc_reason[0] ? ": " : "", f->tc_reason);
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

int print_interfaces(Fpmd__Response *rsp, struct json *j, bool all)
{
	(void)all;
	if (j) {
		json_object(j, NULL);
		for (size_t i = 0; i < rsp->n_interfaces; i++)
			interface_json(j, rsp->interfaces[i]);
		json_close(j);
		return 0;
	}
	printf("%-16s %-7s %-4s %-17s %-5s %-7s %-4s %-4s %s\n", "Interface",
	       "Ifindex", "Slot", "MAC", "MTU", "XDP", "Up", "Tx", "Flags");
	for (size_t i = 0; i < rsp->n_interfaces; i++)
		interface_text(rsp->interfaces[i]);
	return 0;
}

int print_counters(Fpmd__Response *rsp, struct json *j, bool all)
{
	if (j) {
		/* {"IFNAME": {"REASON": {"packets": N, "bytes": N}, ...}} */
		json_object(j, NULL);
		for (size_t i = 0; i < rsp->n_counters; i++) {
			Fpmd__Counter *c = rsp->counters[i];

			/* The counters come sorted by interface. */
			if (!i ||
			    strcmp(rsp->counters[i - 1]->ifname, c->ifname)) {
				if (i)
					json_close(j);
				json_object(j, c->ifname);
			}
			json_object(j, c->reason);
			json_u64(j, "packets", c->packets);
			json_u64(j, "bytes", c->bytes);
			json_close(j);
		}
		while (j->depth)
			json_close(j);
		return 0;
	}
	printf("%-16s %-20s %14s %16s\n", "Interface", "Counter", "Packets",
	       "Bytes");
	for (size_t i = 0; i < rsp->n_counters; i++) {
		Fpmd__Counter *c = rsp->counters[i];

		if (!all && !c->packets)
			continue;
		printf("%-16s %-20s %14llu %16llu\n", c->ifname, c->reason,
		       (unsigned long long)c->packets,
		       (unsigned long long)c->bytes);
	}
	return 0;
}

int print_guards(Fpmd__Response *rsp, struct json *j, bool all)
{
	(void)all;
	if (j) {
		json_object(j, NULL);
		for (size_t i = 0; i < rsp->n_guards; i++) {
			const Fpmd__Guard *g = rsp->guards[i];

			json_object(j, g->name);
			json_str(j, "state", g->state);
			json_str(j, "detail", g->detail);
			json_str(j, "watch", g->watch);
			json_u64(j, "events", g->events);
			json_u64(j, "lastEventNs", g->last_event_ns);
			json_u64(j, "lastAppliedNs", g->last_applied_ns);
			json_close(j);
		}
		json_close(j);
		return 0;
	}
	for (size_t i = 0; i < rsp->n_guards; i++)
		printf("%-14s %-12s %s\n", rsp->guards[i]->name,
		       rsp->guards[i]->state, rsp->guards[i]->detail);
	return 0;
}

/* Members of the current JSON object, or text lines "INDENT LABEL  N"
 * with the labels in a column width wide. */
static void print_numbers(const struct number *nums, size_t n, struct json *j,
			  const char *indent, int width)
{
	for (size_t i = 0; i < n; i++) {
		if (j)
			json_u64(j, nums[i].json, nums[i].v);
		else if (nums[i].text)
			printf("%s%-*s %llu\n", indent, width, nums[i].text,
			       (unsigned long long)nums[i].v);
	}
}

/* The FPM and plugin feeds share one status shape. */
static int print_feed(const Fpmd__FpmStatus *f, const char *name,
		      struct json *j)
{
	if (!f) {
		fprintf(stderr, "fpmctl: fpmd sent no %s status\n", name);
		return 1;
	}

	const struct number nums[] = {
		{ "connections", "connections", f->connections },
		{ "frames", "frames", f->frames },
		{ "messages", "messages", f->messages },
		{ "routeMessages", "route messages", f->route_msgs },
		{ "nexthopMessages", "nexthop messages", f->nexthop_msgs },
		{ "otherTable", "other-table route messages", f->other_table },
		{ "ignored", "ignored messages", f->ignored },
		{ "errors", "connections closed on bad input", f->errors },
		{ "refused", "connections refused (user not allowed)",
		  f->refused },
		{ "routes", "routes from this feed", f->routes },
		{ "nexthopIdUnknown", "routes waiting for a nexthop id",
		  f->unknown_nhid },
		{ "replayRefreshed", "last replay: refreshed",
		  f->replay_refreshed },
		{ "replaySwept", "last replay: stale removed",
		  f->replay_swept },
		{ "mapWrites", "route map writes (all sources)",
		  f->map_writes },
		{ "holdRemainingMs", "hold remaining (ms)",
		  f->hold_remaining_ms },
		{ "routeStatusSent", "route status notifications sent",
		  f->status_sent },
		{ "routeStatusDropped",
		  "route status dropped (zebra not reading)",
		  f->status_dropped },
		{ "firstMessageNs", NULL, f->first_message_ns },
		{ "lastMessageNs", NULL, f->last_message_ns },
		{ "lastMapWriteNs", NULL, f->last_map_write_ns },
	};
	const size_t n = sizeof(nums) / sizeof(nums[0]);

	if (j) {
		json_object(j, NULL);
		json_bool(j, "enabled", f->enabled);
		json_str(j, "listen", f->listen);
		json_bool(j, "connected", f->connected);
		json_str(j, "peer", f->peer);
		json_str(j, "replayState", f->replay_state);
		json_str(j, "lastError", f->last_error);
		print_numbers(nums, n, j, NULL, 0);
		json_close(j);
		return 0;
	}
	printf("%s: %s (%s)\n", name, f->enabled ? f->listen : "disabled",
	       f->connected ? "zebra connected" : "no zebra connected");
	if (f->connected || f->peer[0])
		printf("  peer: %s\n", f->peer);
	printf("  replay: %s\n", f->replay_state);
	print_numbers(nums, n, NULL, "  ", 32);
	if (f->last_error[0])
		printf("  last error: %s\n", f->last_error);
	return 0;
}

int print_fpm(Fpmd__Response *rsp, struct json *j, bool all)
{
	(void)all;
	return print_feed(rsp->fpm, "FPM server", j);
}

int print_plugin(Fpmd__Response *rsp, struct json *j, bool all)
{
	(void)all;
	return print_feed(rsp->plugin, "plugin feed", j);
}

int print_summary(Fpmd__Response *rsp, struct json *j, bool all)
{
	static const char *const src[] = { "kernel", "plugin", "fpm",
					   "static" };
	const Fpmd__Summary *m = rsp->summary;

	(void)all;
	if (!m) {
		fprintf(stderr, "fpmctl: fpmd sent no summary\n");
		return 1;
	}

	const struct number nums[] = {
		{ "routesV4", "IPv4 routes", m->routes_v4 },
		{ "routesV6", "IPv6 routes", m->routes_v6 },
		{ "programmed", "in the maps", m->programmed },
		{ "notProgrammed", "not in the maps (full, error)",
		  m->not_programmed },
		{ "otherTable", "routes of other tables", m->other_table },
		{ "nexthops", "nexthops", m->nexthops },
		{ "groups", "nexthop groups", m->groups },
		{ "neighbors", "neighbors", m->neighbors },
		{ "routeMapFull", "routes refused: routes map full",
		  m->route_map_full },
		{ "nexthopMapFull", "nexthops refused: nexthops map full",
		  m->nexthop_map_full },
		{ "groupMapFull", "groups refused: nh_groups map full",
		  m->group_map_full },
		{ "mapErrors", "other map write errors", m->map_errors },
		{ "routesUnpublished",
		  "routes in IPv4 table parts not yet published",
		  m->routes_unpublished },
		{ "neighborUseSent",
		  "neighbors in use told to the kernel (NTF_USE)",
		  m->neigh_use_sent },
		{ "neighborUseFailed", "of those, failed",
		  m->neigh_use_failed },
		{ "maxRoutesV4", "routes_v4 size", m->max_routes_v4 },
		{ "maxRoutesV6", "routes_v6 size", m->max_routes_v6 },
		{ "maxNexthops", "nexthops size", m->max_nexthops },
		{ "maxGroups", "nh_groups size", m->max_groups },
		{ "mapChunks", "map chunks", m->map_chunks },
		{ "mapChunksDropping", "map chunks being freed",
		  m->map_chunks_dropping },
		{ "mapChunksDropped", "map chunks freed since start",
		  m->map_chunks_dropped },
		{ "mapChunkBytes", "bytes in map chunks", m->map_chunk_bytes },
		{ "loopIterations", "loop iterations", m->loop_iterations },
		{ "loopIterationsSlow", "loop iterations over 20 ms",
		  m->loop_iterations_slow },
		{ "loopIterationMaxUs", "longest loop iteration (us)",
		  m->loop_iteration_max_us },
		{ "loopIterationRecentMaxUs", "longest in the last 60 s (us)",
		  m->loop_iteration_recent_max_us },
		{ "heapInUse", "heap in use (bytes)", m->heap_in_use },
		{ "resident", "resident memory, RSS (bytes)", m->resident },
	};
	const size_t n = sizeof(nums) / sizeof(nums[0]);

	if (j) {
		json_object(j, NULL);
		print_numbers(nums, n, j, NULL, 0);
		json_str(j, "publishError", m->publish_error);
		json_str(j, "loopIterationMaxStep", m->loop_iteration_max_step);
		json_str(j, "loopIterationRecentMaxStep",
			 m->loop_iteration_recent_max_step);
		json_object(j, "routesBySource");
		for (size_t i = 0; i < m->n_by_source && i < 4; i++)
			json_u64(j, src[i], m->by_source[i]);
		json_close(j);
		json_object(j, "routesByProtocol");
		for (size_t i = 0; i < m->n_by_protocol; i++)
			json_u64(j, m->by_protocol[i]->name,
				 m->by_protocol[i]->count);
		json_close(j);
		json_close(j);
		return 0;
	}
	print_numbers(nums, n, NULL, "", 38);
	if (m->publish_error[0])
		printf("%-38s %s (retrying)\n", "publishing new table parts fails",
		       m->publish_error);
	if (m->loop_iteration_max_step[0])
		printf("%-38s %s\n", "longest loop iteration spent on",
		       m->loop_iteration_max_step);
	if (m->loop_iteration_recent_max_step[0])
		printf("%-38s %s\n", "longest in the last 60 s spent on",
		       m->loop_iteration_recent_max_step);
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
int print_document(Fpmd__Response *rsp, struct json *j, bool all)
{
	(void)j;
	(void)all;
	fputs(rsp->document, stdout);
	if (!*rsp->document || rsp->document[strlen(rsp->document) - 1] != '\n')
		putchar('\n');
	return 0;
}
