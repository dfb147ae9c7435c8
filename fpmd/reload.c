// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SIGHUP and fpmctl reload: the configuration file read again, what
 * changed applied one object at a time (logging, listeners, guard timer,
 * interfaces), and what a reload cannot change kept, with a warning.
 */
#include <errno.h>
#include <string.h>
#include <net/if.h>

#include "api/ctl.h"
#include "api/metrics.h"
#include "common/log.h"
#include "feed/fpm.h"
#include "feed/plugin.h"
#include "fib/xdp.h"
#include "fpmd.h"
#include "kernel/iface.h"
#include "kernel/nl.h"
#include "notify.h"

static const struct iface_cfg *iface_cfg_of(const struct fpmd_config *c,
					    const char *name)
{
	for (int k = 0; k < c->n_ifaces; k++)
		if (!strcmp(c->ifaces[k].name, name))
			return &c->ifaces[k];
	return NULL;
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

	/* Applied by the guard check the recheck below runs. */
	if (old->container_path != cfg.container_path)
		log_info("config: container-path %s",
			 cfg.container_path ? "true" : "false");

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
		fpmd_request_neigh_resync();
	}
	fpmd_request_recheck();
}

int fpmd_reload(char *err, size_t elen)
{
	struct fpmd_config nc, old;
	char notes[4096];

	notify_reloading();
	if (config_load(fpmd_args.config_file, &fpmd_args.cli, &nc, err, elen,
			notes, sizeof(notes))) {
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
	periodic_here();
	local_routes_refresh();
	neigh_resync();
	commit_maps(0);
	status_update();
	notify_ready();
	return 0;
}
