/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Chunks leave their outer maps off the event loop. Taking an inner map
 * out of an ARRAY_OF_MAPS waits for an RCU grace period inside the
 * syscall (maybe_wait_bpf_programs(): ~13 ms with normal grace periods,
 * ~0.1 ms with rcu_expedited), and the kernel has no batch delete for
 * that map type. So a few threads do the deletes (and the munmap and
 * close that free the chunk): waits that overlap share grace periods,
 * and the loop never sleeps in one (measured here with normal grace
 * periods: 1 thread 79 deletes/s, 8 threads ~500/s, 32 ~1900/s).
 *
 * The loop hands chunks over (reaper_batch_add, reaper_batch_submit)
 * and owns them no more: a chunk's fd and mapping belong to its job. It
 * takes finished jobs back (reaper_collect), and may want a chunk back
 * before it is gone (reaper_reclaim: a job not yet started is
 * cancelled, one under way is waited for). The shared state is the job queue and each owner's list
 * of finished jobs, both under one mutex; nothing else is shared.
 *
 * Standalone (no fpmd globals), like chunks.c: the threads start on the
 * first job.
 */
#ifndef FPMD_REAPER_H
#define FPMD_REAPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct reap_job {
	struct reap_job *next;
	struct reap_owner *owner;
	int outer_fd;
	uint32_t key;
	int fd;	     /* the chunk: closed by the job, -1 after */
	void *mem;   /* and its mapping (NULL: none), unmapped */
	size_t len;
	int err;     /* the delete's -errno: fd and mem are left as they were */
	int stage;   /* enum in reaper.c, under the lock */
	uint64_t ns; /* how long the delete waited */
	void (*fn)(void *); /* reaper_call: fn(arg) instead, no owner */
	void *arg;
};

/* One per outer map (struct chunks): its jobs, under the reaper's lock. */
struct reap_owner {
	struct reap_job *done; /* finished, not yet collected */
	uint32_t busy;	       /* submitted, not yet finished */
};

/*
 * Take entry key out of outer_fd, then munmap mem (len bytes) and close
 * fd: jobs handed over in batches (a tick's drops, thousands of chunks
 * after a mass delete). reaper_batch_add() makes each job outside the
 * lock (0, or -errno: no thread, no memory; the caller deletes that one
 * itself), reaper_batch_submit() queues them all under one lock and
 * wakes the threads once. Until then the jobs are the caller's, queued
 * nowhere: submit before anything could reclaim one.
 */
struct reap_batch {
	struct reap_job *head, *tail;
	uint32_t n;
};
int reaper_batch_add(struct reap_batch *b, struct reap_owner *o, int outer_fd,
		     uint32_t key, int fd, void *mem, size_t len);
void reaper_batch_submit(struct reap_batch *b);
/*
 * Run fn(arg) in a reaper thread: work that would hold the loop long and
 * touches nothing the loop owns (malloc_trim after a mass delete, unmap
 * and close the chunks of an IPv6 table it left). 0, or -errno (the
 * caller runs it itself).
 */
int reaper_call(void (*fn)(void *), void *arg);
/* The owner's finished jobs, oldest first (free() each); NULL: none. */
struct reap_job *reaper_collect(struct reap_owner *o);
/*
 * The owner's job for key back before it runs: the job, removed from
 * the queue with fd and mem untouched (free() it). NULL when there is
 * none or it was already under way: then it has finished on return
 * (and waits in the done list).
 */
struct reap_job *reaper_reclaim(struct reap_owner *o, uint32_t key);
/* Until every job of the owner has finished (waits in the done list). */
void reaper_wait(struct reap_owner *o);

struct reaper_stats {
	uint64_t jobs, failed; /* finished */
	uint64_t delete_ns;    /* time spent in deletes, all threads */
	uint64_t max_delete_ns;
	uint32_t queued, running, threads;
};
void reaper_stats(struct reaper_stats *s);

#endif
