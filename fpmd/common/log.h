/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FPMD_LOG_H
#define FPMD_LOG_H

#include <stdbool.h>

enum log_level { LOG_LVL_ERR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

/* target: stderr, syslog or file (then file is its path); -1 if the
 * file cannot be opened, and the previous target stays. */
int log_open(const char *target, const char *file, bool debug);
void log_msg(enum log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Also hand every error message to fn (NULL: stop). */
void log_set_error_hook(void (*fn)(const char *msg));
/* Debug messages are written: format their arguments only then. */
bool log_debug_enabled(void);
/*
 * stderr is the journal's stream ($JOURNAL_STREAM names its device and
 * inode, as systemd sets it for a service): fpmd runs under systemd.
 */
bool log_stderr_is_journal(void);

#define log_err(...) log_msg(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
