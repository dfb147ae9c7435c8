// SPDX-License-Identifier: GPL-2.0-or-later
/* The probe thread: kernel queries off the event loop (probe.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "kernel/nl.h"
#include "kernel/probe.h"

/*
 * The queue and the finished list are the only shared state, under mu.
 * The thread keeps the default nice value: it mostly sleeps on RTNL, and
 * once it holds RTNL (a dump) it should finish quickly, not wait for a
 * CPU while zebra waits for it.
 */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t started = PTHREAD_COND_INITIALIZER;
static struct probe_job *queued, *finished; /* oldest first */
static bool stopping, running;
static int start_err = 1; /* 1 until the thread says: 0 or -errno */
static pthread_t thread;
static int efd = -1;

static void append(struct probe_job **list, struct probe_job *j)
{
	j->next = NULL;
	while (*list)
		list = &(*list)->next;
	*list = j;
}

static void *probe_main(void *arg)
{
	uint64_t one = 1;

	(void)arg;
	/* Its own request sockets: the loop's stay the loop's. */
	pthread_mutex_lock(&mu);
	start_err = nl_open();
	pthread_cond_signal(&started);
	if (start_err) {
		pthread_mutex_unlock(&mu);
		nl_close_requests();
		return NULL;
	}
	for (;;) {
		struct probe_job *j;

		while (!queued && !stopping)
			pthread_cond_wait(&work, &mu);
		if (stopping)
			break;
		j = queued;
		queued = j->next;
		pthread_mutex_unlock(&mu);
		j->run(j);
		pthread_mutex_lock(&mu);
		append(&finished, j);
		if (write(efd, &one, sizeof(one)) < 0) {
			/* Only at 2^64-1 unread wake-ups: cannot happen. */
		}
	}
	pthread_mutex_unlock(&mu);
	nl_close_requests();
	return NULL;
}

int probe_open(void)
{
	sigset_t all, old;
	int ret;

	if (running)
		return efd;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return -errno;
	stopping = false;
	/* Signals stay with the loop (its signalfd). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&thread, NULL, probe_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!ret) {
		pthread_mutex_lock(&mu);
		while (start_err == 1)
			pthread_cond_wait(&started, &mu);
		ret = -start_err;
		start_err = 1;
		pthread_mutex_unlock(&mu);
		if (ret)
			pthread_join(thread, NULL);
	}
	if (ret) {
		close(efd);
		efd = -1;
		return -ret;
	}
	running = true;
	return efd;
}

int probe_submit(struct probe_job *j)
{
	if (!running)
		return -EAGAIN;
	j->cancelled = false;
	pthread_mutex_lock(&mu);
	append(&queued, j);
	pthread_cond_signal(&work);
	pthread_mutex_unlock(&mu);
	return 0;
}

static struct probe_job *take(struct probe_job **list)
{
	struct probe_job *l;

	pthread_mutex_lock(&mu);
	l = *list;
	*list = NULL;
	pthread_mutex_unlock(&mu);
	return l;
}

static void done_all(struct probe_job *l, bool cancelled)
{
	while (l) {
		struct probe_job *n = l->next;

		l->cancelled = cancelled;
		l->done(l);
		l = n;
	}
}

void probe_collect(void)
{
	uint64_t n;

	if (read(efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	done_all(take(&finished), false);
}

void probe_close(void)
{
	if (!running)
		return;
	pthread_mutex_lock(&mu);
	stopping = true;
	pthread_cond_signal(&work);
	pthread_mutex_unlock(&mu);
	pthread_join(thread, NULL);
	running = false;
	/* Finished first: they were handed over before the queued ones. */
	done_all(take(&finished), true);
	done_all(take(&queued), true);
	close(efd);
	efd = -1;
}
