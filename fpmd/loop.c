// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The event loop: one epoll set for every descriptor fpmd serves (signals,
 * the guard timer, netlink events, listeners and their connections,
 * metrics, the watchdog), and the work done once per batch of events.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include "api/ctl.h"
#include "api/metrics.h"
#include "common/log.h"
#include "feed/fpm.h"
#include "feed/plugin.h"
#include "fib/maps.h"
#include "fpmd.h"
#include "kernel/guard.h"
#include "kernel/iface.h"
#include "kernel/nl.h"
#include "notify.h"
#include "rib/rib.h"

static int epfd = -1, sfd = -1, timer_fd = -1;
static bool recheck, need_neigh_resync, need_local_refresh;

static uint64_t mono_us(void)
{
	return now_ns(CLOCK_MONOTONIC) / 1000;
}

static uint64_t mono_ms(void)
{
	return mono_us() / 1000;
}

void fpmd_request_recheck(void)
{
	recheck = true;
}

void fpmd_request_neigh_resync(void)
{
	need_neigh_resync = true;
}

void fpmd_request_local_refresh(void)
{
	need_local_refresh = true;
}

static int ev_add_events(int fd, enum ev_kind kind, uint32_t events)
{
	struct epoll_event e = { .events = events };

	e.data.u64 = ((uint64_t)kind << 32) | (uint32_t)fd;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e);
}

int ev_add(int fd, enum ev_kind kind)
{
	return ev_add_events(fd, kind, EPOLLIN);
}

void ev_mod(int fd, enum ev_kind kind, bool in, bool out)
{
	struct epoll_event e = { .events = (in ? EPOLLIN : 0) |
					   (out ? EPOLLOUT : 0) };

	e.data.u64 = ((uint64_t)kind << 32) | (uint32_t)fd;
	epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &e);
}

void periodic(void)
{
	static uint64_t local_last;

	/* The backstop for attachment changes that send no event (bpf_link,
	 * changes while down). */
	for (int s = 0; s < FPMD_MAX_IFACES; s++)
		if (iface_tab[s].used)
			iface_watch(&iface_tab[s], fpmd_prog_fd);
	if (guard_check() && !cfg.allow_nf_bypass)
		log_debug("guard: netfilter still refuses the fast path");
	recheck = false;
	rib_trim();
	/* Events drive the local table; a slow re-read catches a local
	 * route the kernel added well after announcing its address (IPv6
	 * DAD). A dump walks the whole FIB (~0.3 s at 1M routes). */
	if (mono_ms() - local_last >= 30000) {
		local_last = mono_ms();
		local_routes_refresh();
	}
}

void guard_timer_arm(void)
{
	struct itimerspec its = { 0 };

	its.it_interval.tv_sec = cfg.guard_interval_ms / 1000;
	its.it_interval.tv_nsec = (long)(cfg.guard_interval_ms % 1000) * 1000000;
	its.it_value = its.it_interval;
	timerfd_settime(timer_fd, 0, &its, NULL);
}

void commit_maps(uint32_t max_drops)
{
	static bool failed;
	uint32_t nh_top, group_top;
	int ret;

	if (max_drops) {
		rib_index_tops(&nh_top, &group_top);
		ret = maps_shrink(max_drops, nh_top, group_top);
	} else {
		ret = maps_commit(0);
	}

	if (ret && !failed)
		log_err("fib: new IPv4 table parts cannot be published: %s; "
			"routes written since are not yet in the fast path, "
			"retrying", strerror(-ret));
	else if (!ret && failed)
		log_info("fib: pending IPv4 table parts published");
	failed = ret != 0;
}

int loop_open(const sigset_t *mask, int nlfd)
{
	epfd = epoll_create1(EPOLL_CLOEXEC);
	sfd = signalfd(-1, mask, SFD_CLOEXEC);
	timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (sfd < 0 || timer_fd < 0 || epfd < 0 || ev_add(sfd, EV_SIGNAL) ||
	    ev_add(timer_fd, EV_TIMER) || ev_add(nlfd, EV_NL) ||
	    watches_ev_add()) {
		log_err("event loop: %s", strerror(errno));
		return -1;
	}
	guard_timer_arm();
	return 0;
}

void watchdog_arm(void)
{
	/* Half the interval, as sd_watchdog_enabled(3) advises. */
	uint64_t half = notify_watchdog_usec() / 2;
	struct itimerspec its = { 0 };
	int wfd;

	if (!notify_watchdog_usec())
		return;
	wfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	its.it_interval.tv_sec = (time_t)(half / 1000000);
	its.it_interval.tv_nsec = (long)(half % 1000000) * 1000;
	its.it_value = its.it_interval;
	if (wfd < 0 || timerfd_settime(wfd, 0, &its, NULL) ||
	    ev_add(wfd, EV_WATCHDOG))
		log_warn("systemd: cannot arm the watchdog timer: %s",
			 strerror(errno));
	else
		log_info("systemd: watchdog every %llu ms",
			 (unsigned long long)half / 1000);
}

/* SIGHUP reloads; the others stop fpmd (1), SIGUSR2 leaving forwarding
 * in place for the next fpmd. */
static int signal_read(bool *keep)
{
	struct signalfd_siginfo si;

	if (read(sfd, &si, sizeof(si)) != sizeof(si))
		return 0;
	if (si.ssi_signo == SIGHUP) {
		char err[1024];

		fpmd_reload(err, sizeof(err));
		return 0;
	}
	if (si.ssi_signo == SIGUSR2) {
		log_info("SIGUSR2: stopping for a restart: XDP stays attached "
			 "and maps pinned; the next fpmd adopts them");
		*keep = true;
		return 1;
	}
	log_info("%s: stopping", strsignal((int)si.ssi_signo));
	return 1;
}

int loop_run(bool *keep)
{
	struct epoll_event evs[16];

	uint64_t local_due = 0; /* ms, CLOCK_MONOTONIC */
	bool status_busy = false;

	for (;;) {
		int timeout = -1, n;

		if (local_due) {
			uint64_t now = mono_ms();

			timeout = local_due > now ? (int)(local_due - now) : 0;
		}
		if (status_busy)
			timeout = 0;
		n = epoll_wait(epfd, evs, 16, timeout);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_err("epoll: %s", strerror(errno));
			return -1;
		}
		for (int k = 0; k < n; k++) {
			enum ev_kind kind = (enum ev_kind)(evs[k].data.u64 >> 32);
			int fd = (int)(uint32_t)evs[k].data.u64;

			/* Whatever answers or reports sees committed maps. */
			if (kind == EV_CTL_CLIENT || kind == EV_METRICS ||
			    kind == EV_SIGNAL)
				commit_maps(0);
			/* Maps no longer needed (uniform parts, empty
			 * chunks) leave a few per tick: each waits a grace
			 * period (~15 ms) of its own. */
			if (kind == EV_TIMER)
				commit_maps(4);

			switch (kind) {
			case EV_SIGNAL:
				if (signal_read(keep))
					return 0;
				break;
			case EV_TIMER: {
				uint64_t exp;

				if (read(fd, &exp, sizeof(exp)) == sizeof(exp))
					periodic();
				break;
			}
			case EV_CTL_LISTEN: {
				int cfd = ctl_accept();

				/* Edge-triggered both ways: ctl_client_io reads
				 * and writes until EAGAIN. */
				if (cfd >= 0)
					ev_add_events(cfd, EV_CTL_CLIENT,
						      EPOLLIN | EPOLLOUT |
							  EPOLLET);
				break;
			}
			case EV_CTL_CLIENT:
				/* A closed fd leaves epoll by itself. */
				ctl_client_io(fd);
				break;
			case EV_NL: {
				int ret = nl_events_read(&kernel_events, NULL);

				if (ret == -ENOBUFS) {
					log_warn("kernel: events overrun; "
						 "re-reading links and "
						 "neighbors");
					nl_dump_links(link_changed, NULL);
					need_neigh_resync = true;
					need_local_refresh = true;
					/* Lost netconf, rule or tc events:
					 * re-check everything. */
					fpmd_request_recheck();
				}
				break;
			}
			case EV_WATCH:
				watch_read(fd);
				break;
			case EV_WATCHDOG: {
				uint64_t exp;

				/* From the loop itself: a stuck loop stops
				 * the pings and systemd restarts fpmd. */
				if (read(fd, &exp, sizeof(exp)) == sizeof(exp))
					notify_watchdog();
				break;
			}
			case EV_FPM_LISTEN: {
				int cfd = fpm_accept(fd);

				if (cfd >= 0)
					ev_add(cfd, EV_FPM_CONN);
				break;
			}
			case EV_FPM_CONN:
				fpm_io();
				break;
			case EV_FPM_TIMER:
				fpm_timer();
				break;
			case EV_PLUGIN_LISTEN: {
				int cfd = plugin_accept();

				if (cfd >= 0)
					ev_add(cfd, EV_PLUGIN_CONN);
				break;
			}
			case EV_PLUGIN_CONN:
				plugin_io();
				break;
			case EV_PLUGIN_TIMER:
				plugin_timer();
				break;
			case EV_METRICS:
				metrics_io();
				break;
			}
		}
		/* An address or link event: look at the local table now and
		 * once more 100 ms later (the kernel adds the local route
		 * after announcing the address). A dump walks the whole FIB,
		 * so never more often than that. */
		if (need_local_refresh && !local_due) {
			local_routes_refresh();
			local_due = mono_ms() + 100;
		}
		need_local_refresh = false;
		if (local_due && mono_ms() >= local_due) {
			local_due = 0;
			local_routes_refresh();
		}
		if (need_neigh_resync) {
			need_neigh_resync = false;
			neigh_resync();
		}
		/* Events first, once per batch: a sysctl is applied to the
		 * maps right after the kernel announced it. */
		if (guard_pending(GUARD_PENDING_FULL))
			recheck = true;
		else if (guard_pending(GUARD_PENDING_SYSCTL))
			guard_sysctls();
		if (recheck)
			periodic();
		/* Route status changes, a slice at a time, then to zebra. */
		commit_maps(0);
		status_busy = rib_status_run();
		plugin_status_flush();
		fpm_status_flush();
		status_update();
	}
}

/*
 * What changed while fpmd started (links, neighbors, addresses, sysctls),
 * applied after the dumps: each object's last event is at least as new as
 * what the dump said, so the maps end as the kernel is.
 */
void startup_events(void)
{
	int ret = nl_events_read(&kernel_events, NULL);

	if (ret == -ENOBUFS) {
		log_warn("kernel: events overrun during start-up; re-reading "
			 "links and neighbors");
		nl_dump_links(link_changed, NULL);
		fpmd_request_recheck();
	} else if (ret) {
		log_warn("kernel: events: %s", strerror(-ret));
	}
	/* neigh_resync and the local table follow at once; the flags stay
	 * set, so that the loop looks again once the kernel has added the
	 * local routes of addresses it just announced. */
	if (recheck)
		periodic();
}
