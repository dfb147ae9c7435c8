/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel queries off the event loop. Netlink requests about links, tc,
 * rules and devices wait for RTNL, which zebra installing routes or an
 * `ip` command may hold for tens of milliseconds each time: the loop
 * must not sleep there. One thread with netlink sockets of its own (nl.h)
 * runs the queries of a job; the loop, woken by an eventfd, takes the
 * finished job back and applies what it observed (memory work only).
 *
 * A job's observations may be older than what the loop has learnt since
 * from events: the job's done() checks that the objects it observed are
 * still the ones the loop has (struct iface's gen) and drops the rest.
 * Jobs run one at a time, in order; done() runs in the same order.
 */
#ifndef FPMD_PROBE_H
#define FPMD_PROBE_H

#include <stdbool.h>

struct probe_job {
	struct probe_job *next;
	void (*run)(struct probe_job *j);  /* in the probe thread */
	void (*done)(struct probe_job *j); /* in the loop: owns j again */
	bool cancelled; /* done() without run(): fpmd stops */
};

/* Start the thread: the eventfd for the loop, or -errno. */
int probe_open(void);
/* Stop and join it (after the query under way, if any); jobs not done
 * get done() with cancelled set. */
void probe_close(void);
/* Hand j over: 0, or -EAGAIN when no thread runs (the caller runs the
 * job itself). */
int probe_submit(struct probe_job *j);
/* The eventfd fired: done() of each finished job, in order. */
void probe_collect(void);

#endif
