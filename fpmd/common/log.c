// SPDX-License-Identifier: GPL-2.0-or-later
/* Logging to stderr, syslog or a file, with FRR-like level words. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <sys/stat.h>

#include "common/log.h"

static FILE *log_file;
static bool log_syslog;
static bool log_debug_on;
static void (*error_hook)(const char *msg);

void log_set_error_hook(void (*fn)(const char *msg))
{
	error_hook = fn;
}

bool log_stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st))
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

int log_open(const char *target, const char *file, bool debug)
{
	FILE *f = NULL;

	if (target && !strcmp(target, "file")) {
		f = file ? fopen(file, "a") : NULL;
		if (!f)
			return -1;
		setvbuf(f, NULL, _IOLBF, 0);
	}
	/* Switch only once the new target is open (a reload may fail). */
	if (log_file)
		fclose(log_file);
	log_file = f;
	if (log_syslog && (!target || strcmp(target, "syslog")))
		closelog();
	log_syslog = target && !strcmp(target, "syslog");
	if (log_syslog)
		openlog("fpmd", LOG_PID, LOG_DAEMON);
	log_debug_on = debug;
	return 0;
}

bool log_debug_enabled(void)
{
	return log_debug_on;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	static const char *const words[] = { "error", "warning", "notice",
					     "debug" };
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_NOTICE,
				    LOG_DEBUG };
	FILE *out = log_file ? log_file : stderr;
	char ts[32];
	struct timespec now;
	struct tm tm;
	va_list ap;

	if (lvl == LOG_LVL_DEBUG && !log_debug_on)
		return;
	if (lvl == LOG_LVL_ERR && error_hook) {
		char msg[1024];

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		error_hook(msg);
	}
	va_start(ap, fmt);
	if (log_syslog) {
		vsyslog(prio[lvl], fmt, ap);
		va_end(ap);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	localtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y/%m/%d %H:%M:%S", &tm);
	fprintf(out, "%s.%03ld fpmd %s: ", ts, now.tv_nsec / 1000000,
		words[lvl]);
	vfprintf(out, fmt, ap);
	fputc('\n', out);
	fflush(out);
	va_end(ap);
}
