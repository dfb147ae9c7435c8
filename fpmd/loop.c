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
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include "api/ctl.h"
#include "api/metrics.h"
#include "common/log.h"
#include "common/loopstat.h"
#include "feed/fpm.h"
#include "feed/plugin.h"
#include "fpmd.h"
#include "kernel/guard.h"
#include "kernel/iface.h"
#include "kernel/nl.h"
#include "kernel/probe.h"
#include "notify.h"
#include "rib/rib.h"

static int sfd = -1;

static uint64_t mono_ms(void)
{
	return now_ns(CLOCK_MONOTONIC) / 1000000;
}

int loop_open(const sigset_t *mask, int nlfd)
{
	int tfd, nfd, pfd;

	sfd = signalfd(-1, mask, SFD_CLOEXEC);
	if (ev_open() || sfd < 0 || (tfd = tick_open()) < 0 ||
	    ev_add(sfd, EV_SIGNAL) || ev_add(tfd, EV_TIMER) ||
	    ev_add(nlfd, EV_NL) || watches_ev_add() ||
	    (nfd = neigh_use_open()) < 0 || ev_add(nfd, EV_NEIGH_USE)) {
		log_err("event loop: %s", strerror(errno));
		return -1;
	}
	/* Without it the loop asks the kernel itself, as at start-up. */
	pfd = probe_open();
	if (pfd < 0 || ev_add(pfd, EV_PROBE)) {
		log_warn("event loop: no probe thread (%s): the guard tick's "
			 "kernel queries run in the loop",
			 strerror(pfd < 0 ? -pfd : errno));
		probe_close();
	}
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

/* What an iteration spent on, for its slowest step (loopstat.h). */
static const char *const ev_names[] = {
	[EV_SIGNAL] = "signal",
	[EV_TIMER] = "timer",
	[EV_CTL_LISTEN] = "control-accept",
	[EV_CTL_CLIENT] = "control",
	[EV_NL] = "netlink",
	[EV_FPM_LISTEN] = "fpm-accept",
	[EV_FPM_CONN] = "fpm",
	[EV_FPM_TIMER] = "fpm-timer",
	[EV_PLUGIN_LISTEN] = "plugin-accept",
	[EV_PLUGIN_CONN] = "plugin",
	[EV_PLUGIN_TIMER] = "plugin-timer",
	[EV_WATCH] = "watch",
	[EV_WATCHDOG] = "watchdog",
	[EV_METRICS] = "metrics",
	[EV_NEIGH_USE] = "neighbor-use",
	[EV_PROBE] = "probe",
};
_Static_assert(sizeof(ev_names) / sizeof(ev_names[0]) == EV_PROBE + 1,
	       "a name for every event kind");

/* The steps of one iteration: its start, and the slowest step so far. */
struct step {
	uint64_t start, last, worst, cpu;
	const char *what;
};

/* The thread's context switches: voluntary (it slept: a lock, a
 * syscall that waits) and involuntary (preempted: the CPU was busy). */
static void csw(long *vol, long *invol)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru)) {
		*vol = *invol = 0;
		return;
	}
	*vol = ru.ru_nvcsw;
	*invol = ru.ru_nivcsw;
}

static void step_end(struct step *s, const char *what)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (now - s->last >= s->worst) {
		s->worst = now - s->last;
		s->what = what;
	}
	s->last = now;
}

/* FPM frames read but left by the last slice (feed/fpm.c): their turn
 * again in this batch, as if the socket had woken us, without waiting
 * for more bytes (there may be none). */
static int add_backlog(struct ev *evs, int n, int max)
{
	if (!fpm_backlog() || n >= max)
		return n;
	for (int k = 0; k < n; k++)
		if (evs[k].kind == EV_FPM_CONN)
			return n;
	evs[n].kind = EV_FPM_CONN;
	evs[n].fd = -1;
	return n + 1;
}

/* An iteration over LOOPSTAT_SLOW_NS: its length, its slowest step, and
 * whether it ran, slept or waited for the CPU. At debug level; at info
 * level too when it is the longest so far (a few lines in a process's
 * life) or from LOOP_SLOW_INFO_NS on (rare): then the longest iteration
 * that show summary reports is always explained in the log, also where
 * debug is off (it would log every route write; the soak, doc/soak.md,
 * reports these lines). */
#define LOOP_SLOW_INFO_NS 100000000ull
static void log_slow(const struct step *st, long vol0, long invol0,
		     bool longest)
{
	unsigned long long cpu =
	    (now_ns(CLOCK_THREAD_CPUTIME_ID) - st->cpu) / 1000;
	uint64_t ns = st->last - st->start;
	long vol, invol;
	enum log_level lvl =
	    longest || ns >= LOOP_SLOW_INFO_NS ? LOG_LVL_INFO : LOG_LVL_DEBUG;

	csw(&vol, &invol);
	log_msg(lvl,
		"loop: slow iteration: %llu us, %llu us of it in %s (%llu us "
		"on the CPU; %ld waits, %ld preemptions)",
		(unsigned long long)ns / 1000,
		(unsigned long long)st->worst / 1000, st->what, cpu, vol - vol0,
		invol - invol0);
}

int loop_run(bool *keep)
{
	struct ev evs[16];

	uint64_t local_due = 0; /* ms, CLOCK_MONOTONIC */
	bool status_busy = false;
	int ctl_wait = -1;

	for (;;) {
		int timeout = -1, n;
		struct step st = { 0 };
		long vol0, invol0;
		bool longest;

		if (local_due) {
			uint64_t now = mono_ms();

			timeout = local_due > now ? (int)(local_due - now) : 0;
		}
		if (ctl_wait >= 0 && (timeout < 0 || ctl_wait < timeout))
			timeout = ctl_wait;
		if (status_busy || fpm_backlog() || plugin_status_more())
			timeout = 0;
		n = ev_wait(evs, 16, timeout);

		if (n < 0) {
			if (n == -EINTR)
				continue;
			log_err("epoll: %s", strerror(-n));
			return -1;
		}
		n = add_backlog(evs, n, 16);
		st.start = st.last = now_ns(CLOCK_MONOTONIC);
		csw(&vol0, &invol0);
		/* Its CPU time too, for the log: a slow iteration that
		 * mostly waited for the CPU is the machine's doing. */
		st.cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
		for (int k = 0; k < n; k++) {
			enum ev_kind kind = evs[k].kind;
			int fd = evs[k].fd;

			if (k)
				step_end(&st, ev_names[evs[k - 1].kind]);
			/* Whatever answers or reports sees committed maps. */
			if (kind == EV_CTL_CLIENT || kind == EV_METRICS ||
			    kind == EV_SIGNAL) {
				commit_maps(0);
				step_end(&st, "commit");
			}
			/* Maps no longer needed (uniform parts, empty
			 * chunks) go at each tick, all of them: their
			 * deletes wait a grace period each, in the
			 * reaper's threads (fib/reaper.h), not here. */
			if (kind == EV_TIMER) {
				commit_maps(UINT32_MAX);
				step_end(&st, "drops");
			}

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
					ev_add_edge(cfd, EV_CTL_CLIENT);
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
					fpmd_request_neigh_resync();
					fpmd_request_local_refresh();
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
			case EV_NEIGH_USE:
				neigh_use_tick();
				break;
			case EV_PROBE:
				/* Answers of the probe thread, applied. */
				probe_collect();
				break;
			}
		}
		if (n)
			step_end(&st, ev_names[evs[n - 1].kind]);
		/* An address or link event: look at the local table now and
		 * once more 100 ms later (the kernel adds the local route
		 * after announcing the address). A dump walks the whole FIB,
		 * so never more often than that. */
		if (ev_take(EV_REQ_LOCAL_REFRESH) && !local_due) {
			local_routes_refresh();
			local_due = mono_ms() + 100;
		}
		if (local_due && mono_ms() >= local_due) {
			local_due = 0;
			local_routes_refresh();
		}
		if (ev_take(EV_REQ_NEIGH_RESYNC))
			neigh_resync();
		/* Events first, once per batch: a sysctl is applied to the
		 * maps right after the kernel announced it, also while a full
		 * check waits for the kernel in the probe thread. */
		if (guard_pending(GUARD_PENDING_SYSCTL))
			guard_sysctls();
		if (guard_pending(GUARD_PENDING_FULL))
			fpmd_request_recheck();
		/* One under way may predate what asked: again after it. */
		if (ev_requested(EV_REQ_RECHECK) && !tick_probing())
			periodic();
		step_end(&st, "housekeeping");
		/* Route status changes, a slice at a time, then to zebra. */
		commit_maps(0);
		step_end(&st, "commit");
		status_busy = rib_sweep_run();
		status_busy |= rib_status_run();
		plugin_status_flush();
		fpm_status_flush();
		status_update();
		step_end(&st, "route-status");
		/* A large 'show routes' being snapshotted, a slice a turn. */
		ctl_wait = ctl_work();
		step_end(&st, "control");
		longest = st.last - st.start > loopstat.max_ns;
		loopstat_add(st.last - st.start, st.what);
		if (st.last - st.start > LOOPSTAT_SLOW_NS)
			log_slow(&st, vol0, invol0, longest);
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
	if (ev_requested(EV_REQ_RECHECK))
		periodic();
}
