// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmctl: the show and lookup commands. Each show is declared once in
 * the table below: its names, the request, the argument it takes, its
 * printer and how deep its JSON breaks lines (a table: one row a line).
 */
#include <stdio.h>
#include <string.h>

#include "cli/fpmctl.h"

enum show_arg {
	SHOW_NO_ARG,
	SHOW_PREFIX, /* show routes [PREFIX] */
	SHOW_ALL,    /* show counters [all] */
};

struct show {
	const char *name, *alias; /* the alias: the singular, as vtysh's
				   * "show ip route" */
	Fpmd__Show what;
	enum show_arg arg;
	print_fn *print;
	int pretty; /* levels of the JSON that get a line per member */
};

static const struct show shows[] = {
	{ "routes", "route", FPMD__SHOW__SHOW_ROUTES, SHOW_PREFIX, print_routes,
	  2 },
	{ "nexthops", "nexthop", FPMD__SHOW__SHOW_NEXTHOPS, SHOW_NO_ARG,
	  print_nexthops, 1 },
	{ "groups", "group", FPMD__SHOW__SHOW_NEXTHOPS, SHOW_NO_ARG,
	  print_groups, 1 },
	{ "neighbors", "neighbor", FPMD__SHOW__SHOW_NEIGHBORS, SHOW_NO_ARG,
	  print_neighbors, 1 },
	{ "interfaces", "interface", FPMD__SHOW__SHOW_INTERFACES, SHOW_NO_ARG,
	  print_interfaces, 1 },
	{ "counters", "counter", FPMD__SHOW__SHOW_COUNTERS, SHOW_ALL,
	  print_counters, 2 },
	{ "guards", "guard", FPMD__SHOW__SHOW_GUARDS, SHOW_NO_ARG, print_guards,
	  1 },
	{ "fpm", NULL, FPMD__SHOW__SHOW_FPM, SHOW_NO_ARG, print_fpm, 0 },
	{ "summary", NULL, FPMD__SHOW__SHOW_SUMMARY, SHOW_NO_ARG, print_summary,
	  0 },
	{ "plugin", NULL, FPMD__SHOW__SHOW_PLUGIN, SHOW_NO_ARG, print_plugin,
	  0 },
	{ "state", NULL, FPMD__SHOW__SHOW_STATE, SHOW_NO_ARG, print_document,
	  0 },
	{ "config", NULL, FPMD__SHOW__SHOW_CONFIG, SHOW_NO_ARG, print_document,
	  0 },
};

static const struct show *find_show(const char *name)
{
	for (size_t i = 0; i < sizeof(shows) / sizeof(shows[0]); i++)
		if (!strcmp(name, shows[i].name) ||
		    (shows[i].alias && !strcmp(name, shows[i].alias)))
			return &shows[i];
	die("unknown show '%s'", name);
}

int run_show(int argc, char **argv, bool json)
{
	Fpmd__Request req = FPMD__REQUEST__INIT;
	Fpmd__ShowRequest sr = FPMD__SHOW_REQUEST__INIT;
	const struct show *s;
	Fpmd__Response *rsp;
	struct json j;
	uint8_t store[16];
	bool all = false;
	int ret;

	if (argc < 1)
		die("show what? %s",
		    "routes|nexthops|neighbors|interfaces|counters|guards|fpm|"
		    "plugin|summary|state|config");
	s = find_show(argv[0]);
	if (argc > 1 && s->arg == SHOW_PREFIX)
		sr.prefix = prefix_arg(argv[1], store);
	else if (argc > 1 && s->arg == SHOW_ALL && !strcmp(argv[1], "all"))
		all = true;
	else if (argc > 1)
		die("unexpected argument '%s'", argv[1]);
	json_start(&j, stdout, s->pretty);
	sr.what = s->what;
	req.req_case = FPMD__REQUEST__REQ_SHOW;
	req.show = &sr;
	rsp = conn_transact(&req);
	ret = conn_check(rsp) ? 1 : s->print(rsp, json ? &j : NULL, all);
	/* A streamed answer: the chunks that follow. */
	while (!ret && rsp->more) {
		fpmd__response__free_unpacked(rsp, NULL);
		rsp = conn_receive();
		ret =
		    conn_check(rsp) ? 1 : s->print(rsp, json ? &j : NULL, all);
	}
	fpmd__response__free_unpacked(rsp, NULL);
	return ret;
}

/* lookup ADDRESS: which path a packet to ADDRESS takes. */
int run_lookup(int argc, char **argv, bool json)
{
	Fpmd__Request req = FPMD__REQUEST__INIT;
	Fpmd__LookupRequest lr = FPMD__LOOKUP_REQUEST__INIT;
	Fpmd__Response *rsp;
	struct json j;
	uint8_t store[16];
	int ret;

	if (argc != 1)
		die("usage: lookup ADDRESS");
	lr.addr = addr_arg(argv[0], store);
	req.req_case = FPMD__REQUEST__REQ_LOOKUP;
	req.lookup = &lr;
	rsp = conn_transact(&req);
	ret = conn_check(rsp);
	if (!ret && !rsp->lookup)
		ret = 1;
	if (!ret) {
		json_start(&j, stdout, 0);
		ret = print_lookup(rsp->lookup, argv[0], json ? &j : NULL);
	}
	fpmd__response__free_unpacked(rsp, NULL);
	return ret;
}
