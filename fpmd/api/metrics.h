/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Prometheus endpoint (yang container metrics): GET /metrics in the
 * text exposition format 0.0.4, served by libmicrohttpd from fpmd's own
 * event loop, built from the same tables fpmctl shows.
 */
#ifndef FPMD_METRICS_H
#define FPMD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Note the process start (fpmd_start_time_seconds). */
void metrics_init(void);
/*
 * Listen on addr:port. Returns 0, or -errno with nothing left open
 * (-EADDRINUSE, -EADDRNOTAVAIL, ...). The event loop then waits on
 * metrics_fds() and calls metrics_io() when either is readable.
 */
int metrics_open(const char *addr, uint16_t port);
void metrics_close(void);
/* Listening now? */
bool metrics_running(void);
/* libmicrohttpd's epoll fd and its timeout timer; -1 when closed. */
void metrics_fds(int *epoll_fd, int *timer_fd);
void metrics_io(void);
/* The exposition text (malloc'd, NUL-terminated), or NULL. */
char *metrics_text(size_t *len);

#endif
