// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmctl: the commands that change fpmd. route, nexthop and neighbor
 * share one shape, "OBJECT add|del KEY [WORD [ARG]]...", declared once
 * per object below: the key, the words and the fields of the protobuf
 * message they set, what an add (or del) needs, and the request.
 */
#include <string.h>

#include "cli/fpmctl.h"
#include "common/util.h"

struct edit_cmd {
	const char *name; /* names the command in its errors */
	const ProtobufCMessageDescriptor *desc;
	struct word key; /* the word after add|del; .name: its usage */
	const struct word *preset; /* applied first, if any */
	const struct word *words;
	/* NULL if msg is a whole request, else what is missing. */
	const char *(*missing)(const void *msg, bool add);
	Fpmd__Request__ReqCase add, del;
};

/* group ID[,WEIGHT]/ID[,WEIGHT]... */
static void group_arg(void *msg, char *list, struct word_store *st)
{
	Fpmd__Nexthop *n = msg;
	char *tok, *save = NULL;

	for (tok = strtok_r(list, "/", &save); tok;
	     tok = strtok_r(NULL, "/", &save)) {
		Fpmd__GroupMember *m = &st->mem[n->n_members];
		char *comma = strchr(tok, ',');

		if (n->n_members == MEMBERS_MAX)
			die("group: at most %d members", MEMBERS_MAX);
		fpmd__group_member__init(m);
		if (comma)
			*comma = '\0';
		m->nhid = u32_arg(tok, "bad member id '%s'");
		m->weight = comma ? u32_arg(comma + 1, "bad weight '%s'") : 1;
		st->memp[n->n_members++] = m;
	}
	n->members = st->memp;
}

static const char *route_missing(const void *msg, bool add)
{
	const Fpmd__Route *r = msg;

	if (add && r->type == FPMD__ROUTE_TYPE__RT_UNICAST && !r->nhid &&
	    !r->ifname[0])
		return "route add: give 'via GW dev IF', 'dev IF', 'nhid ID' "
		       "or a type (blackhole, unreachable, prohibit)";
	return NULL;
}

static const char *nexthop_missing(const void *msg, bool add)
{
	const Fpmd__Nexthop *n = msg;

	if (add && !n->n_members && !n->ifname[0])
		return "nexthop add: give 'via GW dev IF', 'dev IF' or 'group "
		       "ID[,WEIGHT]/...'";
	return NULL;
}

static const char *neighbor_missing(const void *msg, bool add)
{
	const Fpmd__Neighbor *n = msg;

	if (!n->ifname[0] || (add && !n->mac.len))
		return add ? "neighbor add: give 'lladdr MAC dev IF'"
			   : "neighbor del: give 'dev IF'";
	return NULL;
}

#define ROUTE(f) offsetof(Fpmd__Route, f)
#define NEXTHOP(f) offsetof(Fpmd__Nexthop, f)
#define NEIGHBOR(f) offsetof(Fpmd__Neighbor, f)

static const struct word route_words[] = {
	WORD_VALUE("blackhole", ROUTE(type), FPMD__ROUTE_TYPE__RT_BLACKHOLE),
	WORD_VALUE("unreachable", ROUTE(type),
		   FPMD__ROUTE_TYPE__RT_UNREACHABLE),
	WORD_VALUE("prohibit", ROUTE(type), FPMD__ROUTE_TYPE__RT_PROHIBIT),
	WORD("via", WORD_ADDR, ROUTE(gateway)),
	WORD("dev", WORD_NAME, ROUTE(ifname)),
	WORD_NUMBER("nhid", ROUTE(nhid), "bad nexthop id '%s'"),
	WORDS_END,
};

static const struct word nexthop_words[] = {
	WORD("via", WORD_ADDR, NEXTHOP(gateway)),
	WORD("dev", WORD_NAME, NEXTHOP(ifname)),
	WORD_PARSE("group", group_arg),
	WORDS_END,
};

static const struct word neighbor_words[] = {
	WORD("lladdr", WORD_MAC, NEIGHBOR(mac)),
	WORD("dev", WORD_NAME, NEIGHBOR(ifname)),
	WORDS_END,
};

/* A route is unicast unless a type word says otherwise. */
static const struct word route_unicast =
    WORD_VALUE(NULL, ROUTE(type), FPMD__ROUTE_TYPE__RT_UNICAST);

static const struct edit_cmd route_cmd = {
	.name = "route",
	.desc = &fpmd__route__descriptor,
	.key = WORD("PREFIX", WORD_PREFIX, ROUTE(prefix)),
	.preset = &route_unicast,
	.words = route_words,
	.missing = route_missing,
	.add = FPMD__REQUEST__REQ_ROUTE_ADD,
	.del = FPMD__REQUEST__REQ_ROUTE_DEL,
};

static const struct edit_cmd nexthop_cmd = {
	.name = "nexthop",
	.desc = &fpmd__nexthop__descriptor,
	.key = WORD_NUMBER("ID", NEXTHOP(id), "bad nexthop id '%s'"),
	.words = nexthop_words,
	.missing = nexthop_missing,
	.add = FPMD__REQUEST__REQ_NEXTHOP_ADD,
	.del = FPMD__REQUEST__REQ_NEXTHOP_DEL,
};

static const struct edit_cmd neighbor_cmd = {
	.name = "neighbor",
	.desc = &fpmd__neighbor__descriptor,
	.key = WORD("ADDR", WORD_ADDR, NEIGHBOR(addr)),
	.words = neighbor_words,
	.missing = neighbor_missing,
	.add = FPMD__REQUEST__REQ_NEIGH_ADD,
	.del = FPMD__REQUEST__REQ_NEIGH_DEL,
};

static int edit(const struct edit_cmd *c, int argc, char **argv)
{
	Fpmd__Request req = FPMD__REQUEST__INIT;
	union {
		Fpmd__Route route;
		Fpmd__Nexthop nexthop;
		Fpmd__Neighbor neighbor;
	} msg;
	struct word_store st;
	const char *missing;
	bool add;

	if (argc < 2)
		die("usage: %s add|del %s ...", c->name, c->key.name);
	protobuf_c_message_init(c->desc, &msg);
	if (c->preset)
		word_set(c->preset, &msg, NULL, NULL, &st);
	add = action_arg(c->name, argv[0]);
	word_set(&c->key, &msg, argv[1], st.buf[0], &st);
	words_parse(c->name, c->words, &msg, &st, argc - 2, argv + 2);
	missing = c->missing(&msg, add);
	if (missing)
		die("%s", missing);
	req.req_case = add ? c->add : c->del;
	/* The add and del requests of every object share the oneof union. */
	req.route_add = (Fpmd__Route *)&msg;
	return conn_simple(&req);
}

/* route add PREFIX {via GW dev IF | dev IF | nhid N | blackhole | ...} */
int run_route(int argc, char **argv, bool json)
{
	(void)json;
	return edit(&route_cmd, argc, argv);
}

/* nexthop add ID {via GW dev IF | dev IF | group ID[,W]/ID[,W]...} */
int run_nexthop(int argc, char **argv, bool json)
{
	(void)json;
	return edit(&nexthop_cmd, argc, argv);
}

/* neighbor add ADDR lladdr MAC dev IF | neighbor del ADDR dev IF */
int run_neighbor(int argc, char **argv, bool json)
{
	(void)json;
	return edit(&neighbor_cmd, argc, argv);
}

int run_reload(int argc, char **argv, bool json)
{
	Fpmd__Request req = FPMD__REQUEST__INIT;

	(void)argv;
	(void)json;
	if (argc)
		die("usage: reload");
	req.req_case = FPMD__REQUEST__REQ_RELOAD;
	req.reload = true;
	return conn_simple(&req);
}

int run_clear(int argc, char **argv, bool json)
{
	Fpmd__Request req = FPMD__REQUEST__INIT;

	(void)json;
	if (argc < 1 || strcmp(argv[0], "counters"))
		die("usage: clear counters");
	req.req_case = FPMD__REQUEST__REQ_CLEAR_COUNTERS;
	req.clear_counters = true;
	return conn_simple(&req);
}
