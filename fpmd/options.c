// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmd's command line: one table gives getopt its options, --help its
 * text, and each option the YANG leaf it sets. The leaves are checked by
 * libyang with the file's (config_load), and re-applied on every reload.
 * Also where the log goes by default, and config_load's notes, which
 * start-up and reload both log.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "fpmd.h"

struct fpmd_args fpmd_args;

enum {
	OPT_KEEP = 256,
	OPT_NF_BYPASS,
	OPT_NO_CONTAINER,
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
	{ { "no-container-path", no_argument, NULL, OPT_NO_CONTAINER }, 0, NULL,
	  "no tc program for container veths: their routes take the kernel path",
	  .path = "behaviour/container-path", .value = "false" },
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
	  "dir-24-8|dxr|lpm-trie", "IPv4 lookup structure (dir-24-8)",
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
	struct cli_sets *cli = &fpmd_args.cli;

	if (cli->n == FPMD_MAX_CLI_SETS) {
		fprintf(stderr, "fpmd: too many options\n");
		return -1;
	}
	cli->s[cli->n++] = (struct cli_set){ .opt = opt, .path = path,
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

int parse_args(int argc, char **argv)
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
		case 'f': fpmd_args.config_file = optarg; continue;
		case 'C': fpmd_args.dryrun = true; continue;
		case 'd':
			fpmd_args.daemon_mode = true;
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

/*
 * Left to its default, the log goes where the service manager collects
 * it, as FRR's daemons do: syslog under systemd (journald takes syslog
 * with its levels, and forwards it to a syslog daemon if there is one)
 * and with -d (stderr is /dev/null); stderr otherwise.
 */
void log_target_resolve(struct fpmd_config *c)
{
	if (c->log_target_default && (fpmd_args.daemon_mode ||
				       fpmd_args.under_journal))
		c->log_target = "syslog";
}

void log_notes(const char *notes)
{
	const char *p = notes, *nl;

	while (p && *p && (nl = strchr(p, '\n'))) {
		log_info("config: %.*s", (int)(nl - p), p);
		p = nl + 1;
	}
}
