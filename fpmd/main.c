// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fpmd: start-up, in phases (tests/test_restart.py reads their names in
 * the log), and a clean stop. The loop in between is loop.c's.
 *
 * One thread does everything (control socket, link events, guard timer),
 * so the maps have a single writer and no locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>

#include "api/ctl.h"
#include "api/metrics.h"
#include "common/log.h"
#include "common/phase.h"
#include "feed/fpm.h"
#include "feed/plugin.h"
#include "fib/maps.h"
#include "fib/xdp.h"
#include "fpmd.h"
#include "kernel/guard.h"
#include "kernel/iface.h"
#include "kernel/instance.h"
#include "kernel/nl.h"
#include "kernel/probe.h"
#include "kernel/tc_path.h"
#include "notify.h"
#include "rib/rib.h"

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

/* SIGUSR2: the service manager restarts fpmd; leave forwarding in place. */
static bool stop_keep;

static void stop(void)
{
	bool keep = cfg.keep_forwarding || stop_keep;

	/* After the query under way: nothing asks the kernel behind us. */
	probe_close();
	metrics_close();
	ctl_close();
	if (!keep)
		fpm_status_parting();
	fpm_close();
	plugin_close();
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		struct iface *i = &iface_tab[s];

		/* Like XDP: a restart keeps the tcx links (pinned). */
		if (i->used)
			tc_detach(i, keep);
		if (!i->used || !i->attached)
			continue;
		if (keep)
			log_info("iface %s: XDP left attached (%s)", i->name,
				 stop_keep ? "SIGUSR2" : "--keep-forwarding");
		else
			iface_detach(i);
	}
	if (keep)
		log_info("bpffs: maps stay pinned in %s; a new fpmd adopts them",
			 cfg.pin_dir);
	else
		xdp_unpin();
	xdp_close();
	nl_close();
	watches_close();
	neigh_use_close();
	rib_free();
	local_routes_free();
}

/*
 * One fpmd per bpffs-dir and per interface, checked before anything is
 * adopted, attached or unpinned: a refused fpmd changes nothing.
 */
static int instance_start(void)
{
	char path[PATH_MAX];
	long holder;
	int ret = instance_lock(cfg.pin_dir, &holder, path, sizeof(path));

	if (ret == -EBUSY) {
		log_err("bpffs-dir %s is in use by a running fpmd (pid %ld, "
			"lock file %s): refusing to start; nothing was changed",
			cfg.pin_dir, holder, path);
		return -1;
	}
	if (ret) {
		log_err("lock file %s: %s", path, strerror(-ret));
		return -1;
	}
	atexit(instance_unlock);
	instance_note_pins(cfg.pin_dir);
	for (int k = 0; k < cfg.n_ifaces; k++) {
		unsigned int idx = if_nametoindex(cfg.ifaces[k].name);
		struct prog_who w;
		uint32_t id;

		if (!cfg.ifaces[k].enabled || !idx ||
		    instance_attached_prog(idx, &id))
			continue;
		instance_whose_prog(id, &w);
		if (w.owner != PROG_OTHER_FPMD)
			continue;
		log_err("iface %s: served by %s: refusing to start (one fpmd "
			"per interface); nothing was changed",
			cfg.ifaces[k].name, w.desc);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char run_pin_dir[PATH_MAX], run_netns[256];
	char err[1024], notes[4096];
	sigset_t mask;
	int nlfd, ret;
	bool adopted;

	/* A parent's descriptors (its lock file, sockets) are not ours to
	 * hold for the life of a daemon. */
	close_range(3, ~0U, 0);
	phase_begin();
#ifdef __GLIBC__
	/* No fastbins: a free coalesces at once. With them, the first
	 * large malloc after a mass delete consolidates every small chunk
	 * freed since, in one go: tens to hundreds of ms of a loop
	 * iteration at a million routes (issue 27). */
	mallopt(M_MXFAST, 0);
	/* Arrays from 128 KiB up (hash buckets, table lists) mapped on
	 * their own, always: glibc's default raises this threshold to the
	 * size of the last mapped block freed (up to 32 MiB), after which a
	 * shrunk table's arrays would be heap that only malloc_trim gives
	 * back (rib.c, rib_trim). */
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
#endif
	metrics_init();
	ctl_set_reload(fpmd_reload);
	iface_set_recheck(fpmd_request_recheck);
	iface_set_attached(link_attached);
	if (parse_args(argc, argv))
		return 2;
	if (config_load(fpmd_args.config_file, &fpmd_args.cli, &cfg, err,
			sizeof(err), notes, sizeof(notes))) {
		fprintf(stderr, "fpmd: %s\n", err);
		return 2;
	}
	phase_end("config (YANG)");
	if (fpmd_args.dryrun) {
		/* The effective configuration on stdout, the verdict on stderr. */
		char *doc = config_print_running(&cfg);

		printf("%s\n", doc ? doc : "");
		free(doc);
		fputs(notes, stderr);
		fprintf(stderr, "fpmd: configuration OK (%s)\n", cfg.source);
		config_free(&cfg);
		return 0;
	}
	fpmd_args.under_journal = log_stderr_is_journal();
	log_target_resolve(&cfg);
	if (log_open(cfg.log_target, cfg.log_file, cfg.debug)) {
		fprintf(stderr, "fpmd: %s: cannot open the log file %s: %s\n",
			cfg.source, cfg.log_file, strerror(errno));
		return 2;
	}
	if (fpmd_args.daemon_mode) {
		if (cfg.log_target_default)
			fprintf(stderr,
				"fpmd: running in the background, logging "
				"to syslog (logging/target or --log to "
				"change)\n");
		daemonize();
	}
	log_info("config: from %s", cfg.source);
	if (cfg.log_target_default && !strcmp(cfg.log_target, "syslog"))
		log_info("log: to syslog (%s; logging/target or --log to "
			 "change)",
			 fpmd_args.daemon_mode ? "-d" : "started by systemd");
	log_notes(notes);
	/* Fixed for the life of the process (a reload says so). */
	snprintf(run_pin_dir, sizeof(run_pin_dir), "%s", cfg.pin_dir);
	cfg.pin_dir = run_pin_dir;
	if (cfg.netns) {
		snprintf(run_netns, sizeof(run_netns), "%s", cfg.netns);
		cfg.netns = run_netns;
	}
	if (cfg.netns && enter_netns(cfg.netns))
		return 1;
	if (instance_start())
		return 1;
	phase_end("log, netns, instance lock");
	if (!cfg.n_ifaces)
		log_warn("no interface configured (interfaces in the file, or "
			 "-i): fpmd attaches to nothing until one is");

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	ret = nl_open();
	if (ret) {
		log_err("netlink: %s", strerror(-ret));
		return 1;
	}
	phase_end("nl_open");
	/*
	 * Subscribe before anything is loaded or adopted: from here on no
	 * link or neighbor change is missed. Events queue in the socket
	 * while the maps are adopted, and are applied once the interfaces
	 * are attached (an overrun re-reads everything).
	 */
	nlfd = nl_events_open();
	if (nlfd < 0) {
		log_err("netlink: events: %s", strerror(-nlfd));
		return 1;
	}
	watches_open();
	phase_end("nl_events_open, watches");
	if (rib_init(cfg.max_nexthops, cfg.max_groups)) {
		log_err("out of memory");
		return 1;
	}
	iface_init();
	phase_end("rib_init");
	/* The lookup structures are chosen at load (tables/ipv4-lookup...). */
	fpmd_fib4_algo = cfg.fib4_algo;
	fpmd_fib6_algo = cfg.fib6_algo;
	fpmd_tbl8_groups = cfg.tbl8_groups;
	{
		char meta[PATH_MAX];

		snprintf(meta, sizeof(meta), "%s/meta", cfg.pin_dir);
		notify_status("%s maps in %s",
			      access(meta, F_OK) ? "creating"
						 : "adopting pinned",
			      cfg.pin_dir);
	}
	if (xdp_load(&adopted))
		return 1;
	fpmd_prog_fd = xdp_prog_fd();
	instance_set_own(fpmd_prog_fd, mapfd.stats);
	tc_path_init(xdp_tc_prog_fd(), fpmd_prog_fd);
	if (adopted && rib_adopt(cfg.max_nexthops, cfg.max_groups))
		log_warn("adopt: out of memory; starting with empty tables");
	else if (adopted)
		local_routes_seed();
	phase_end("rib_adopt");

	for (int k = 0; k < cfg.n_ifaces; k++) {
		struct iface *i;

		if (!cfg.ifaces[k].enabled) {
			log_info("iface %s: configured disabled; not attaching",
				 cfg.ifaces[k].name);
			continue;
		}
		i = iface_add(cfg.ifaces[k].name, !adopted);
		if (!i) {
			log_err("too many interfaces");
			return 1;
		}
		i->want_mode = cfg.ifaces[k].mode;
	}
	if (adopted)
		ifaces_adopted_seed();
	/* Guards run before anything is attached: refuse, or attach with
	 * the right flags from the first packet on. */
	{
		char nf[512];

		if (netfilter_scan(nf, sizeof(nf)) > 0 && !cfg.allow_nf_bypass) {
			log_err("netfilter: %s. XDP would bypass these rules for "
				"forwarded traffic, so fpmd refuses to attach. "
				"Remove them, or set behaviour/"
				"allow-netfilter-bypass (--allow-netfilter-bypass) "
				"if forwarded traffic may skip them.",
				nf);
			if (!adopted)
				xdp_unpin();
			xdp_close();
			return 1;
		}
	}
	phase_end("netfilter scan");
	nl_dump_links(link_learn, NULL);
	phase_end("link dump");
	guard_check();
	phase_end("guards");
	notify_status("attaching %d interface%s", cfg.n_ifaces,
		      cfg.n_ifaces == 1 ? "" : "s");
	for (int s = 0; s < FPMD_MAX_IFACES; s++)
		if (iface_tab[s].used)
			iface_bring_up(&iface_tab[s]);
	phase_end("attach");
	periodic();
	phase_end("periodic (guards, interfaces)");
	startup_events();
	phase_end("events queued during start-up");
	neigh_resync();
	phase_end("neighbor dump");
	local_routes_refresh();
	phase_end("local table dump");

	if (loop_open(&mask, nlfd)) {
		stop();
		return 1;
	}
	if (ctl_listen() || fpm_listen() || plugin_listen()) {
		stop();
		return 1;
	}
	phase_end("listeners");
	watchdog_arm();
	metrics_listen();
	log_info("fpmd %s started: %d interface(s), control socket %s%s",
		 PACKAGE_VERSION, cfg.n_ifaces, cfg.ctl_sock.path,
		 adopted ? ", maps adopted" : "");
	commit_maps(0);
	status_update();
	notify_ready();
	phase_ready(adopted);
	ret = loop_run(&stop_keep);
	notify_stopping();
	stop();
	config_free(&cfg);
	return ret ? 1 : 0;
}
