// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmctl: the command-line client of fpmd's control socket. Commands are
 * declared in one table; each builds a protobuf Request and prints the
 * Response as text or, with --json, as JSON shaped like FRR's show output.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "cli/fpmctl.h"

#define DEFAULT_SOCKET FPMD_RUNSTATEDIR "/fpmd.sock"

static const struct command {
	const char *name, *alias, *usage;
	int (*run)(int argc, char **argv, bool json);
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
	{ "reload", NULL,
	  "reload  (re-read the configuration file, guards, "
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
	const char *sock_path = DEFAULT_SOCKET;
	bool json = false;
	int c;

	while ((c = getopt_long(argc, argv, "+s:jhv", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			sock_path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'v':
			printf("fpmctl %s\n", PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	/* --json also accepted at the end, as in "show routes --json". */
	if (argc && (!strcmp(argv[argc - 1], "--json") ||
		     !strcmp(argv[argc - 1], "json"))) {
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
		conn_open(sock_path);
		return commands[i].run(argc - 1, argv + 1, json);
	}
	fprintf(stderr, "fpmctl: unknown command '%s'\n", argv[0]);
	usage(stderr);
	return 2;
}
