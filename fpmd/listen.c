// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The listeners, at start and on reload: the control socket, FPM, the
 * plugin feed and the metrics endpoint, each registered in the loop.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/ctl.h"
#include "api/metrics.h"
#include "common/log.h"
#include "feed/fpm.h"
#include "feed/plugin.h"
#include "fpmd.h"

/* A feed connection waits for what its unit has to do next. */
static void plugin_watch(int fd, bool in, bool out)
{
	ev_mod(fd, EV_PLUGIN_CONN, in, out);
}

static void fpm_watch(int fd, bool in, bool out)
{
	ev_mod(fd, EV_FPM_CONN, in, out);
}

int fpm_listen(void)
{
	int failed = 0;

	fpm_set_watch(fpm_watch);
	if (!cfg.fpm_enabled)
		return 0;
	for (int k = 0; k < cfg.n_fpm_address; k++) {
		int fd = fpm_open(cfg.fpm_address[k], cfg.fpm_port);

		if (fd < 0 || ev_add(fd, EV_FPM_LISTEN)) {
			log_err("fpm: cannot listen on %s port %u: %s",
				cfg.fpm_address[k], cfg.fpm_port,
				strerror(fd < 0 ? -fd : errno));
			failed++;
		}
	}
	if (fpm_timer_fd() >= 0 && ev_add(fpm_timer_fd(), EV_FPM_TIMER) &&
	    errno != EEXIST)
		return -1;
	return failed ? -1 : 0;
}

int plugin_listen(void)
{
	int fd;

	if (!cfg.plugin_enabled)
		return 0;
	plugin_set_watch(plugin_watch);
	fd = plugin_open(&cfg.plugin_sock);
	if (fd < 0) {
		log_err("plugin: cannot listen on %s: %s", cfg.plugin_sock.path,
			strerror(-fd));
		return -1;
	}
	if (ev_add(fd, EV_PLUGIN_LISTEN) ||
	    (ev_add(plugin_timer_fd(), EV_PLUGIN_TIMER) && errno != EEXIST))
		return -1;
	return 0;
}

int ctl_listen(void)
{
	int fd = ctl_open(&cfg.ctl_sock);

	if (fd < 0) {
		log_err("ctl: cannot listen on %s: %s", cfg.ctl_sock.path,
			strerror(-fd));
		return -1;
	}
	return ev_add(fd, EV_CTL_LISTEN);
}

/* Metrics are an add-on: a listener that fails is logged, fpmd goes on. */
void metrics_listen(void)
{
	int efd, tfd, ret;

	if (!cfg.metrics_enabled)
		return;
	ret = metrics_open(cfg.metrics_address, cfg.metrics_port);
	if (ret) {
		log_err("metrics: cannot listen on %s port %u: %s; fpmd runs "
			"without its metrics endpoint",
			cfg.metrics_address, cfg.metrics_port, strerror(-ret));
		return;
	}
	metrics_fds(&efd, &tfd);
	if (ev_add(efd, EV_METRICS) || ev_add(tfd, EV_METRICS)) {
		log_err("metrics: event loop: %s", strerror(errno));
		metrics_close();
		return;
	}
	log_info("metrics: serving http://%s%s%s:%u/metrics",
		 strchr(cfg.metrics_address, ':') ? "[" : "",
		 cfg.metrics_address,
		 strchr(cfg.metrics_address, ':') ? "]" : "",
		 cfg.metrics_port);
}
