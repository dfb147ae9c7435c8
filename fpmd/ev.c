// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The event loop's epoll set, and the work other units ask the loop to do
 * once the current batch of events is read. Units that serve a descriptor
 * (listeners, kernel events, links) register it here and ask for work
 * here, so none of them calls into the loop (loop.c) itself.
 */
#include <errno.h>
#include <sys/epoll.h>

#include "fpmd.h"

static int epfd = -1;
static unsigned int requests; /* enum ev_request */

int ev_open(void)
{
	epfd = epoll_create1(EPOLL_CLOEXEC);
	return epfd < 0 ? -errno : 0;
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

int ev_add_edge(int fd, enum ev_kind kind)
{
	return ev_add_events(fd, kind, EPOLLIN | EPOLLOUT | EPOLLET);
}

void ev_mod(int fd, enum ev_kind kind, bool in, bool out)
{
	struct epoll_event e = { .events = (in ? EPOLLIN : 0) |
					   (out ? EPOLLOUT : 0) };

	e.data.u64 = ((uint64_t)kind << 32) | (uint32_t)fd;
	epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &e);
}

int ev_wait(struct ev *evs, int max, int timeout_ms)
{
	struct epoll_event e[16];
	int n;

	if (max > 16)
		max = 16;
	n = epoll_wait(epfd, e, max, timeout_ms);
	for (int k = 0; k < n; k++) {
		evs[k].kind = (enum ev_kind)(e[k].data.u64 >> 32);
		evs[k].fd = (int)(uint32_t)e[k].data.u64;
	}
	return n < 0 ? -errno : n;
}

void fpmd_request_recheck(void)
{
	requests |= EV_REQ_RECHECK;
}

void fpmd_request_neigh_resync(void)
{
	requests |= EV_REQ_NEIGH_RESYNC;
}

void fpmd_request_local_refresh(void)
{
	requests |= EV_REQ_LOCAL_REFRESH;
}

bool ev_requested(unsigned int what)
{
	return (requests & what) != 0;
}

bool ev_take(unsigned int what)
{
	bool set = (requests & what) != 0;

	requests &= ~what;
	return set;
}
