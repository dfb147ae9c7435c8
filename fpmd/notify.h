/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Telling the service manager what fpmd does: systemd's notify protocol
 * (sd_notify(3)) and, with -d, the parent process waiting for the daemon.
 */
#ifndef FPMD_NOTIFY_H
#define FPMD_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

/* The watchdog interval asked for (WATCHDOG_USEC), 0 when none. */
uint64_t notify_watchdog_usec(void);
void notify_watchdog(void);

/*
 * READY=1 with the current status line: the configuration is applied
 * (maps adopted or created, interfaces attached, listeners open). The
 * first one also releases a parent waiting in daemonize().
 */
void notify_ready(void);
/* RELOADING=1 (SIGHUP, fpmctl reload); notify_ready() ends it. */
void notify_reloading(void);
void notify_stopping(void);

/* STATUS=: sent only when the line differs from the last one sent. */
void notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * -d: fork; the parent waits until the child is ready (exit 0) or has
 * failed (exit 1, with the child's errors on stderr). The child detaches
 * (setsid, chdir /, stdio on /dev/null). Returns in the child only.
 */
void daemonize(void);
/* A start-up error the waiting parent prints (no-op when not waiting). */
void daemonize_error(const char *msg);

#endif
