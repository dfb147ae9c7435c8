/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon itself, the top of fpmd/: what its units share. Nothing
 * below the top includes this (lower units reach up through callbacks:
 * ctl_set_reload, iface_set_recheck).
 *
 *   main.c           start-up, the instance lock, a clean stop
 *   options.c        the command line as YANG leaves
 *   reload.c         SIGHUP / fpmctl reload: what changed, applied
 *   loop.c           the epoll loop, its event kinds, periodic work
 *   listen.c         the control, FPM, plugin and metrics listeners
 *   links.c          managed interfaces following their links
 *   kernel_events.c  neighbors, addresses, sysctls, rules, tc, xfrm, nft
 *   local_routes.c   the kernel's local table as "pass" routes
 *   status.c         the status line the service manager shows
 *   notify.c         sd_notify and -d (notify.h)
 */
#ifndef FPMD_FPMD_H
#define FPMD_FPMD_H

#include "config.h"

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"
#include "fpmd_maps.h"

struct iface;
struct nl_link;
struct nl_event_ops;

/* ---- options.c ---------------------------------------------------------- */

struct fpmd_args {
	const char *config_file; /* -f; NULL: the default file if any */
	struct cli_sets cli;     /* the command line, re-applied on reload */
	bool dryrun, daemon_mode;
	bool under_journal; /* stderr was the journal's stream at start */
};
extern struct fpmd_args fpmd_args;

/* 0, or -1 after a message on stderr; --help, --version exit here. */
int parse_args(int argc, char **argv);

/* The default log target: syslog under systemd and with -d. */
void log_target_resolve(struct fpmd_config *c);
/* config_load's notes, one log line each. */
void log_notes(const char *notes);

/* ---- reload.c ----------------------------------------------------------- */

/*
 * SIGHUP / fpmctl reload: re-read the configuration file (a bad one is
 * refused with err filled and the running configuration kept), apply
 * what changed, re-read guards, local table and neighbors.
 */
int fpmd_reload(char *err, size_t elen);

/* ---- ev.c --------------------------------------------------------------- */

enum ev_kind {
	EV_SIGNAL,
	EV_TIMER,
	EV_CTL_LISTEN,
	EV_CTL_CLIENT,
	EV_NL,
	EV_FPM_LISTEN,
	EV_FPM_CONN,
	EV_FPM_TIMER,
	EV_PLUGIN_LISTEN,
	EV_PLUGIN_CONN,
	EV_PLUGIN_TIMER,
	EV_WATCH,
	EV_WATCHDOG,
	EV_METRICS,
	EV_NEIGH_USE,
	EV_PROBE, /* the last: loop.c names each kind */
};

struct ev {
	enum ev_kind kind;
	int fd;
};

/* The loop's epoll set: 0, or -errno. */
int ev_open(void);
/* Register fd for input (ev_add_edge: both ways, edge-triggered). */
int ev_add(int fd, enum ev_kind kind);
int ev_add_edge(int fd, enum ev_kind kind);
/* Change what a registered fd waits for. */
void ev_mod(int fd, enum ev_kind kind, bool in, bool out);
/* Up to max (16) ready descriptors, or -errno. */
int ev_wait(struct ev *evs, int max, int timeout_ms);

/* Work the loop does once the current batch of events is read. */
enum ev_request {
	EV_REQ_RECHECK = 1,       /* guards and attachments (periodic) */
	EV_REQ_NEIGH_RESYNC = 2,  /* neighbors re-read */
	EV_REQ_LOCAL_REFRESH = 4, /* the kernel's local table re-read */
};
void fpmd_request_recheck(void);
void fpmd_request_neigh_resync(void);
void fpmd_request_local_refresh(void);
bool ev_requested(unsigned int what);
/* Whether any of what was asked for, clearing it. */
bool ev_take(unsigned int what);

/* ---- tick.c ------------------------------------------------------------- */

/* The guard timer, armed: its fd, or -errno. */
int tick_open(void);
/* Route writes into the fast path before anything observable. */
void commit_maps(uint32_t max_drops);
/*
 * Guards, attachments, RIB trimming, the slow local table re-read. The
 * kernel queries run in the probe thread once the loop has started it
 * (kernel/probe.h), and their answers are applied when they come;
 * periodic_here() asks them in the calling thread and applies them before
 * it returns (reload answers after the check).
 */
void periodic(void);
void periodic_here(void);
/* A periodic() check is under way in the probe thread. */
bool tick_probing(void);
void guard_timer_arm(void);

/* ---- loop.c ------------------------------------------------------------- */

/*
 * The loop's own descriptors: signals (mask, already blocked), the guard
 * timer, netlink events (nlfd) and the notification watches. -1 after a
 * log line.
 */
int loop_open(const sigset_t *mask, int nlfd);
/* systemd's watchdog, pinged from the loop (when it is asked for). */
void watchdog_arm(void);
/* The events queued while fpmd started, applied after the dumps. */
void startup_events(void);
/* Until a signal stops fpmd: 0, *keep set for SIGUSR2; -1 on error. */
int loop_run(bool *keep);

/* ---- listen.c ----------------------------------------------------------- */

int ctl_listen(void);
int fpm_listen(void);
int plugin_listen(void);
/* An add-on: a failure is logged and fpmd goes on without it. */
void metrics_listen(void);

/* ---- links.c ------------------------------------------------------------ */

extern int fpmd_prog_fd; /* the XDP program attached to managed interfaces */

void link_changed(const struct nl_link *l, void *arg);
void link_attached(void);
void link_learn(const struct nl_link *l, void *arg);
void link_gone(uint32_t ifindex);
void ifaces_adopted_seed(void);
void iface_bring_up(struct iface *i);

/* ---- kernel_events.c ---------------------------------------------------- */

extern const struct nl_event_ops kernel_events;

void neigh_resync(void);
void watches_open(void);
int watches_ev_add(void);
void watch_read(int fd);
void watches_close(void);

/* ---- neigh_use.c -------------------------------------------------------- */

/* The scan timer (every 500 ms): its fd for the loop, or -errno. */
int neigh_use_open(void);
void neigh_use_close(void);
/* The timer fired: tell the kernel which STALE neighbors XDP used. */
void neigh_use_tick(void);
struct neighbor;
/* The kernel made ne STALE: tell it at once if XDP used it lately. */
void neigh_use_stale(struct neighbor *ne);

/* ---- local_routes.c ----------------------------------------------------- */

void local_routes_seed(void);
void local_routes_refresh(void);
void local_routes_refresh_v6(void);
void local_routes_free(void);

/* ---- status.c ----------------------------------------------------------- */

void status_update(void);

#endif
