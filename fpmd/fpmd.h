/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's configuration and top-level state. */
#ifndef FPMD_FPMD_H
#define FPMD_FPMD_H

#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "fpmd_maps.h"

#define FPMD_DEFAULT_PIN_DIR "/sys/fs/bpf/fpmd"
#define FPMD_DEFAULT_SOCKET FPMD_RUNSTATEDIR "/fpmd.sock"
#define FPMD_DEFAULT_PLUGIN_SOCKET FPMD_RUNSTATEDIR "/plugin.sock"
#define FPMD_MAX_CFG_IFACES FPMD_MAX_IFACES

enum xdp_mode { XDP_MODE_AUTO, XDP_MODE_NATIVE, XDP_MODE_GENERIC };

struct fpmd_config {
	const char *pin_dir;
	const char *socket_path;
	const char *socket_group;
	const char *netns;
	const char *log_target;
	bool debug;
	bool keep_forwarding;   /* leave XDP attached on exit */
	bool allow_nf_bypass;   /* attach despite netfilter forward rules */
	enum xdp_mode xdp_mode;
	unsigned int guard_interval_ms;
	const char *fpm_address;  /* NULL: no FPM server */
	uint16_t fpm_port;
	unsigned int fpm_settle_ms; /* quiet time that ends a replay */
	unsigned int fpm_hold_s;    /* keep a lost feed's routes this long */
	const char *plugin_socket;  /* NULL: no plugin feed */
	uint32_t max_routes_v4, max_routes_v6, max_nexthops, max_groups,
		max_neigh;
	const char *ifnames[FPMD_MAX_CFG_IFACES];
	int n_ifnames;
};

extern struct fpmd_config cfg;

/* Set by the event loop when a guard or interface change needs a rerun. */
void fpmd_request_recheck(void);
/* SIGHUP / fpmctl reload: re-read guards, local table, neighbors. */
void fpmd_reload(void);

#endif
