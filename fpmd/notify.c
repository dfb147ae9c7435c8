// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The service manager's view of fpmd: sd_notify(3) messages (READY,
 * RELOADING, STOPPING, STATUS, WATCHDOG, MAINPID) and -d's handshake
 * with the parent. Without $NOTIFY_SOCKET sd_notify does nothing.
 *
 * READY=1 never waits for a feed: fpmd starts before zebra, and FPM has
 * no end-of-replay marker. STATUS= says whether zebra came and when its
 * first replay settled instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>

#include "common/log.h"
#include "notify.h"

static char status_sent[512];
static int ready_fd = -1; /* -d: the pipe to the waiting parent */
static bool daemonized;

uint64_t notify_watchdog_usec(void)
{
	uint64_t usec = 0;

	return sd_watchdog_enabled(0, &usec) > 0 ? usec : 0;
}

void notify_watchdog(void)
{
	sd_notify(0, "WATCHDOG=1");
}

void notify_ready(void)
{
	if (daemonized)
		sd_notifyf(0, "READY=1\nMAINPID=%ld\nSTATUS=%s", (long)getpid(),
			   status_sent);
	else
		sd_notifyf(0, "READY=1\nSTATUS=%s", status_sent);
	if (ready_fd >= 0) {
		/* The marker: the parent exits 0. */
		if (write(ready_fd, "", 1) != 1)
			log_warn(
			    "daemon: cannot tell the parent process we are "
			    "ready: %s",
			    strerror(errno));
		close(ready_fd);
		ready_fd = -1;
		log_set_error_hook(NULL);
	}
}

void notify_reloading(void)
{
	struct timespec ts;

	/* MONOTONIC_USEC: what Type=notify-reload (systemd >= 253) wants;
	 * older ones ignore it. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0,
		   "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading the "
		   "configuration",
		   (unsigned long long)ts.tv_sec * 1000000ull +
		       (unsigned long long)ts.tv_nsec / 1000);
	status_sent[0] = '\0';
}

void notify_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
	snprintf(status_sent, sizeof(status_sent), "stopping");
}

void notify_status(const char *fmt, ...)
{
	char line[sizeof(status_sent)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!strcmp(line, status_sent))
		return;
	snprintf(status_sent, sizeof(status_sent), "%s", line);
	sd_notifyf(0, "STATUS=%s", line);
}

/* ---- -d ----------------------------------------------------------------- */

void daemonize_error(const char *msg)
{
	if (ready_fd < 0)
		return;
	if (dprintf(ready_fd, "fpmd: %s\n", msg) < 0)
		return;
}

/* The parent: the child's errors, then its readiness or its exit. */
static void __attribute__((noreturn)) parent_wait(int fd, pid_t child)
{
	char buf[4096];
	bool ready = false;
	ssize_t n;
	int st;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		ready = !buf[n - 1];
		fwrite(buf, 1, (size_t)(ready ? n - 1 : n), stderr);
	}
	if (ready)
		_exit(0);
	if (waitpid(child, &st, 0) == child && WIFEXITED(st)) {
		fprintf(stderr,
			"fpmd: the daemon (pid %ld) exited with status "
			"%d before it was ready\n",
			(long)child, WEXITSTATUS(st));
		_exit(WEXITSTATUS(st) ? WEXITSTATUS(st) : 1);
	}
	if (WIFSIGNALED(st))
		fprintf(stderr,
			"fpmd: the daemon (pid %ld) was killed by "
			"signal %d (%s) before it was ready\n",
			(long)child, WTERMSIG(st), strsignal(WTERMSIG(st)));
	_exit(1);
}

void daemonize(void)
{
	int p[2], null;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC)) {
		fprintf(stderr, "fpmd: daemon: pipe: %s\n", strerror(errno));
		exit(1);
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "fpmd: daemon: fork: %s\n", strerror(errno));
		exit(1);
	}
	if (pid > 0) {
		close(p[1]);
		parent_wait(p[0], pid);
	}
	close(p[0]);
	ready_fd = p[1];
	daemonized = true;
	log_set_error_hook(daemonize_error);
	setsid();
	if (chdir("/"))
		log_warn("daemon: chdir /: %s", strerror(errno));
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
}
