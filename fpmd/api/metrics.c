// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prometheus metrics: a table of families, each written from the same
 * tables and functions 'fpmctl show counters / summary / state' use, so
 * the two never disagree. This file serves them over HTTP; the text is
 * written by metrics_text.c from the families of metrics_iface.c,
 * metrics_rib.c, metrics_feed.c and metrics_guard.c.
 *
 * libmicrohttpd runs in its external epoll mode: no thread of its own;
 * its epoll fd and a timer for its timeouts sit in fpmd's event loop, so
 * a scrape reads fpmd's live state on fpmd's one thread, with no locks.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <microhttpd.h>

#include "config.h"

#include "api/metrics.h"
#include "common/log.h"
#include "common/util.h"

/* A scraper or two, and room for a curl by hand: more wait in the
 * kernel's backlog. */
#define METRICS_MAX_CONN 16
/* Seconds an idle or stalled connection may hold a slot. */
#define METRICS_CONN_TIMEOUT 10

static struct MHD_Daemon *daemon_;
static int timer_fd = -1;

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code,
			     const char *text, const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
	    strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	size_t len;
	char *text;

	(void)cls;
	(void)version;
	(void)upload_data;
	/* Refusals go at once (MHD then closes, discarding any body). */
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND,
			     "not found: fpmd serves GET /metrics\n", NULL);
	if (strcmp(method, MHD_HTTP_METHOD_GET))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			     "method not allowed: fpmd serves GET /metrics\n",
			     MHD_HTTP_METHOD_GET);
	/* The answer waits for the whole request: queued from the first
	 * call, MHD would close the connection, and a scraper could not
	 * keep it alive. A body sent with GET is read and ignored. */
	if (!*req_cls) {
		*req_cls = (void *)handle;
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	text = metrics_text(&len);
	if (!text) {
		log_warn("metrics: out of memory building a scrape");
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
			     "out of memory\n", NULL);
	}
	r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	log_warn("metrics: %s", msg);
}

/* Our own socket: a bind failure then says exactly what went wrong. */
static int listen_on(const char *addr, uint16_t port)
{
	return tcp_listen(addr, port, METRICS_MAX_CONN, true);
}

int metrics_open(const char *addr, uint16_t port)
{
	int fd = listen_on(addr, port);

	if (fd < 0)
		return fd;
	timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (timer_fd < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	/* No MHD_USE_INTERNAL_POLLING_THREAD: MHD_run from our loop only. */
	daemon_ = MHD_start_daemon(
	    MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, handle, NULL,
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_LISTEN_SOCKET,
	    fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_MAX_CONN,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_CONN_TIMEOUT,
	    MHD_OPTION_END);
	if (!daemon_) {
		close(fd);
		close(timer_fd);
		timer_fd = -1;
		return -EIO;
	}
	return 0;
}

void metrics_close(void)
{
	if (daemon_)
		MHD_stop_daemon(daemon_); /* closes the listening socket */
	daemon_ = NULL;
	if (timer_fd >= 0)
		close(timer_fd);
	timer_fd = -1;
}

bool metrics_running(void)
{
	return daemon_;
}

void metrics_fds(int *epoll_fd, int *tfd)
{
	const union MHD_DaemonInfo *di =
	    daemon_ ? MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_EPOLL_FD)
		    : NULL;

	*epoll_fd = di ? di->epoll_fd : -1;
	*tfd = daemon_ ? timer_fd : -1;
}

void metrics_io(void)
{
	struct itimerspec its = { 0 };
	MHD_UNSIGNED_LONG_LONG ms;
	uint64_t exp;

	if (!daemon_)
		return;
	if (read(timer_fd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		log_debug("metrics: timer: %s", strerror(errno));
	MHD_run(daemon_);
	/* MHD's next deadline (an idle connection's timeout, or at once
	 * when it has buffered work); none: the timer stays off. */
	if (MHD_get_timeout(daemon_, &ms) == MHD_YES) {
		its.it_value.tv_sec = (time_t)(ms / 1000);
		its.it_value.tv_nsec = (long)(ms % 1000) * 1000000;
		if (!ms)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(timer_fd, 0, &its, NULL);
}
