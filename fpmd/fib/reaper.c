// SPDX-License-Identifier: GPL-2.0-or-later
/* Chunks off their outer maps, in threads: see reaper.h. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>

#include "fib/reaper.h"

/*
 * Waits in concurrent deletes share grace periods: with normal (not
 * expedited) grace periods 8 threads take ~500 chunks/s here, enough to
 * free a full IPv4 table's ~2300 chunks in seconds. They sleep in the
 * kernel, so they cost no CPU; their stacks are small.
 */
#define REAPER_THREADS 8
#define REAPER_STACK (256u << 10)
/*
 * The threads' nice value: on a small machine they share the loop's
 * cores, and a batch of jobs wakes all of them at once. At nice 10 the
 * scheduler gives the loop ~90 % of a contended core (CFS weights 1024
 * and 110), so a drop never stretches a loop iteration; their deletes
 * mostly sleep in a grace period, so they lose next to no time.
 */
#define REAPER_NICE 10

enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER; /* a job queued */
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER; /* a job finished */
static struct reap_job *head, *tail; /* the queue, oldest first */
static struct reap_job *cur[REAPER_THREADS]; /* running, per thread */
static struct reaper_stats st;
static uint32_t nthreads; /* written once, before any job */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg)
{
	struct reap_job **mine = arg;
	id_t tid = (id_t)syscall(SYS_gettid);

	/* Linux: a thread's own nice value (PRIO_PROCESS with its tid). */
	setpriority(PRIO_PROCESS, tid, REAPER_NICE);
	pthread_mutex_lock(&mu);
	for (;;) {
		struct reap_job *j;
		uint64_t t0, ns;
		int err = 0;

		while (!head)
			pthread_cond_wait(&work, &mu);
		j = head;
		head = j->next;
		if (!head)
			tail = NULL;
		j->next = NULL;
		j->stage = JOB_RUNNING;
		*mine = j;
		st.queued--;
		st.running++;
		pthread_mutex_unlock(&mu);

		if (j->fn) {
			/* At the loop's nice value: fn may hold a lock the
			 * loop waits for (malloc's), and free(j) takes the
			 * loop's arena. */
			setpriority(PRIO_PROCESS, tid, 0);
			j->fn(j->arg);
			free(j);
			setpriority(PRIO_PROCESS, tid, REAPER_NICE);
			pthread_mutex_lock(&mu);
			*mine = NULL;
			st.running--;
			continue;
		}
		t0 = mono_ns();
		if (bpf_map_delete_elem(j->outer_fd, &j->key) && errno != ENOENT)
			err = -errno;
		ns = mono_ns() - t0;
		if (!err) {
			if (j->mem)
				munmap(j->mem, j->len);
			if (j->fd >= 0)
				close(j->fd);
			j->mem = NULL;
			j->fd = -1;
		}

		pthread_mutex_lock(&mu);
		j->err = err;
		j->ns = ns;
		j->stage = JOB_DONE;
		*mine = NULL;
		st.running--;
		st.jobs++;
		st.failed += err != 0;
		st.delete_ns += ns;
		if (ns > st.max_delete_ns)
			st.max_delete_ns = ns;
		j->next = j->owner->done;
		j->owner->done = j;
		j->owner->busy--;
		pthread_cond_broadcast(&idle);
	}
	return NULL;
}

static void start(void)
{
	pthread_attr_t a;
	sigset_t all, old;

	/* Signals stay with the loop (its signalfd). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, REAPER_STACK);
	for (int i = 0; i < REAPER_THREADS; i++) {
		pthread_t t;

		if (pthread_create(&t, &a, worker, &cur[i]))
			break;
		nthreads++;
	}
	pthread_attr_destroy(&a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int reaper_batch_add(struct reap_batch *b, struct reap_owner *o, int outer_fd,
		     uint32_t key, int fd, void *mem, size_t len)
{
	struct reap_job *j;

	pthread_once(&once, start);
	if (!nthreads)
		return -EAGAIN;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->owner = o;
	j->outer_fd = outer_fd;
	j->key = key;
	j->fd = fd;
	j->mem = mem;
	j->len = len;
	j->stage = JOB_QUEUED;
	if (b->tail)
		b->tail->next = j;
	else
		b->head = j;
	b->tail = j;
	b->n++;
	return 0;
}

/* The batch's jobs onto the queue: one lock, one wake-up for all. */
void reaper_batch_submit(struct reap_batch *b)
{
	if (!b->head)
		return;
	pthread_mutex_lock(&mu);
	if (tail)
		tail->next = b->head;
	else
		head = b->head;
	tail = b->tail;
	for (struct reap_job *j = b->head; j; j = j->next)
		if (j->owner)
			j->owner->busy++;
	st.queued += b->n;
	if (b->n > 1)
		pthread_cond_broadcast(&work);
	else
		pthread_cond_signal(&work);
	pthread_mutex_unlock(&mu);
	b->head = b->tail = NULL;
	b->n = 0;
}

int reaper_call(void (*fn)(void *), void *arg)
{
	struct reap_batch b = { 0 };
	int ret = reaper_batch_add(&b, NULL, -1, 0, -1, NULL, 0);

	if (!ret) {
		b.head->fn = fn;
		b.head->arg = arg;
	}
	reaper_batch_submit(&b);
	return ret;
}

struct reap_job *reaper_collect(struct reap_owner *o)
{
	struct reap_job *l, *r = NULL;

	pthread_mutex_lock(&mu);
	l = o->done;
	o->done = NULL;
	pthread_mutex_unlock(&mu);
	while (l) { /* newest first: reverse */
		struct reap_job *n = l->next;

		l->next = r;
		r = l;
		l = n;
	}
	return r;
}

static bool running(const struct reap_owner *o, uint32_t key)
{
	for (int i = 0; i < REAPER_THREADS; i++)
		if (cur[i] && cur[i]->owner == o && cur[i]->key == key)
			return true;
	return false;
}

struct reap_job *reaper_reclaim(struct reap_owner *o, uint32_t key)
{
	struct reap_job *j, *prev = NULL;

	pthread_mutex_lock(&mu);
	for (j = head; j; prev = j, j = j->next)
		if (j->owner == o && j->key == key)
			break;
	if (j) {
		if (prev)
			prev->next = j->next;
		else
			head = j->next;
		if (tail == j)
			tail = prev;
		j->next = NULL;
		o->busy--;
		st.queued--;
		pthread_mutex_unlock(&mu);
		return j;
	}
	while (running(o, key))
		pthread_cond_wait(&idle, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

void reaper_wait(struct reap_owner *o)
{
	pthread_mutex_lock(&mu);
	while (o->busy)
		pthread_cond_wait(&idle, &mu);
	pthread_mutex_unlock(&mu);
}

void reaper_stats(struct reaper_stats *s)
{
	pthread_mutex_lock(&mu);
	*s = st;
	pthread_mutex_unlock(&mu);
	s->threads = nthreads;
}
