/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The configuration: yang/fpmd.yang is its schema (compiled into fpmd),
 * libyang parses and validates the file, and command-line options are
 * applied on top as YANG paths, so every value, wherever it came from,
 * passes the same checks. Precedence: command line, file, the module's
 * defaults.
 */
#ifndef FPMD_CONF_H
#define FPMD_CONF_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fpmd_maps.h"

#define FPMD_MAX_FPM_LISTEN 8
#define FPMD_MAX_FPM_USERS 16
#define FPMD_MAX_CLI_SETS 128

enum xdp_mode { XDP_MODE_AUTO, XDP_MODE_NATIVE, XDP_MODE_GENERIC };

struct iface_cfg {
	const char *name;
	bool enabled;
	enum xdp_mode mode;
};

struct sock_cfg {
	const char *path, *owner, *group;
	unsigned int mode; /* permission bits */
};

/* Every string points into tree, which the config owns. */
struct fpmd_config {
	struct lyd_node *tree;
	char source[PATH_MAX]; /* the file, or "built-in default" */
	const char *netns;
	const char *pin_dir;
	enum xdp_mode xdp_mode;
	struct iface_cfg ifaces[FPMD_MAX_IFACES];
	int n_ifaces;
	bool fpm_enabled;
	const char *fpm_address[FPMD_MAX_FPM_LISTEN];
	int n_fpm_address;
	uint16_t fpm_port;
	const char *fpm_users[FPMD_MAX_FPM_USERS]; /* fpm/allowed-users */
	int n_fpm_users;
	unsigned int fpm_settle_ms; /* quiet time that ends a replay */
	unsigned int fpm_hold_s;    /* keep a lost feed's routes this long */
	bool fpm_route_status;      /* answer routes with their status */
	bool plugin_enabled;
	struct sock_cfg plugin_sock, ctl_sock;
	bool metrics_enabled; /* metrics/: the Prometheus endpoint */
	const char *metrics_address;
	uint16_t metrics_port;
	uint32_t max_routes_v4, max_routes_v6, max_nexthops, max_groups,
		max_neigh;
	int fib4_algo, fib6_algo; /* enum fpmd_fib4_algo / fpmd_fib6_algo */
	uint32_t tbl8_groups;
	bool keep_forwarding;   /* leave XDP attached on exit */
	bool allow_nf_bypass;   /* attach despite netfilter forward rules */
	bool container_path;    /* fpmd's tc program for container veths */
	unsigned int guard_interval_ms;
	const char *log_target; /* stderr, syslog, file */
	bool log_target_default; /* not set: main.c picks by how fpmd runs */
	const char *log_file;
	bool debug;
};

/* One command-line value, as a path under /fpmd:fpmd. */
struct cli_set {
	const char *opt;   /* "--fpm-port", for messages */
	const char *path;  /* "fpm/port" */
	const char *value; /* NULL: create the node (a list entry) */
	const char *drop;  /* a list option: the list whose entries from the
			    * file its first use replaces ("" after that) */
};

struct cli_sets {
	struct cli_set s[FPMD_MAX_CLI_SETS];
	int n;
};

/*
 * Read file (NULL: the default file if it exists, else the built-in
 * default), apply the command line, validate. On error returns -1 with a
 * message "FILE:LINE: PATH: reason" in err and out untouched. notes gets
 * one line per command-line value that overrides the file (for the log).
 */
int config_load(const char *file, const struct cli_sets *cli,
		struct fpmd_config *out, char *err, size_t elen, char *notes,
		size_t nlen);
void config_free(struct fpmd_config *c);
/* Print the built-in default (every leaf, with its default). */
int config_print_default(FILE *f);
/* The running configuration (explicit values) as RFC 7951 JSON. */
char *config_print_running(const struct fpmd_config *c);
/* The libyang context holding the module (for the state tree). */
struct ly_ctx *config_ctx(void);
const char *xdp_mode_name(enum xdp_mode m);

extern struct fpmd_config cfg;

#endif
