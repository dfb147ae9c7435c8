/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An array grown in same-size chunks. BPF maps cannot grow in place, so
 * a table that follows its contents is an ARRAY_OF_MAPS ("outer") whose
 * entry i is chunk i, a plain BPF array of per_chunk values created on
 * first use. The chunk must match the outer map's inner template exactly
 * (type, key and value size, max_entries, flags; no BPF_F_INNER_MAP, so
 * the verifier keeps inlining lookups into it).
 *
 * A new chunk is pending: it exists (fd, and a shared mapping when
 * mmapable) and can be filled, but the fast path cannot see it until
 * chunks_commit() puts every pending chunk into the outer map with ONE
 * batch update. Every syscall update or delete of a map-in-map waits
 * for an RCU grace period (maybe_wait_bpf_programs(); ~13 ms with
 * normal grace periods, ~0.1 ms expedited), a batch waits once. Drops
 * are deferred to a commit likewise (a reader sees a chunk until its
 * replacement, e.g. a default, is in place) and cost a grace period
 * each: the kernel has no batch delete for ARRAY_OF_MAPS, so the commit
 * hands them to the reaper's threads (reaper.h), and the loop never
 * waits for one. A chunk being reaped is no longer the table's; wanted
 * again (chunks_get) it is taken back if its delete has not started,
 * else waited for (a grace period at most) and made anew.
 *
 * Standalone (no fpmd globals): used by fib4_*.c, the tests and the
 * benchmark alike.
 */
#ifndef FPMD_CHUNKS_H
#define FPMD_CHUNKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fib/reaper.h"

enum chunk_state {
	CHUNK_ABSENT = 0,
	CHUNK_PENDING,	/* created, not yet in the outer map */
	CHUNK_LIVE,	/* in the outer map */
	CHUNK_DROPPING, /* in the outer map, deleted at the next commit */
	CHUNK_REAPING,	/* handed to the reaper: fd and mapping are its own */
};

struct chunks {
	int outer_fd;
	uint32_t value_size, per_chunk, max_chunks;
	bool mmapable;
	size_t map_len; /* bytes of one chunk's mapping */
	int *fd;	/* per chunk, -1: none */
	void **mem;	/* per chunk mapping (mmapable), else NULL */
	uint8_t *state; /* enum chunk_state */
	uint32_t npending, ndropping, nreaping;
	struct reap_owner reap;
	/* counters */
	uint32_t live;	      /* chunks in the outer map (reaping included) */
	uint64_t grace_waits; /* outer map syscalls (each waits a grace) */
	uint64_t created, dropped;
};

/*
 * Take the outer map outer_fd (ARRAY_OF_MAPS; its max_entries is the
 * most chunks) whose chunks hold per_chunk values of value_size bytes,
 * BPF_F_MMAPABLE when mmapable. With adopt, the chunks already in the
 * outer map are taken over (one batch lookup of their ids; mapped when
 * mmapable). 0 or -errno.
 */
int chunks_open(struct chunks *c, int outer_fd, uint32_t value_size,
		uint32_t per_chunk, bool mmapable, bool adopt);
void chunks_close(struct chunks *c);

/*
 * Chunk idx: 0 when it exists (live, pending or dropping: a dropping
 * chunk is kept again, and so is one handed to the reaper whose delete
 * has not begun), -ENOENT when absent and !create, else created pending
 * (zero-filled). -errno on failure, -ERANGE past max_chunks.
 */
int chunks_get(struct chunks *c, uint32_t idx, bool create);

static inline void *chunks_mem(const struct chunks *c, uint32_t idx)
{
	return c->mem[idx];
}

static inline int chunks_fd(const struct chunks *c, uint32_t idx)
{
	return c->fd[idx];
}

static inline bool chunks_present(const struct chunks *c, uint32_t idx)
{
	return idx < c->max_chunks && c->state[idx] != CHUNK_ABSENT &&
	       c->state[idx] != CHUNK_REAPING;
}

/*
 * Chunk idx, handed to the reaper, back as it was (dropping) when its
 * delete has not begun, else waited for (absent). Nothing for a chunk
 * in another state.
 */
void chunks_reclaim(struct chunks *c, uint32_t idx);

/* Drop chunk idx: a pending one at once, a live one at the next commit. */
void chunks_drop(struct chunks *c, uint32_t idx);

/*
 * Make the pending chunks visible (one batch update of the outer map)
 * and hand up to max_drops dropping ones to the reaper (each delete
 * waits a grace period, there; the loop goes on). Then take back what
 * the reaper finished (chunks_collect). 0 or -errno; on failure the
 * chunks stay pending / dropping.
 */
int chunks_commit(struct chunks *c, uint32_t max_drops);

/*
 * The chunks the reaper has taken out of the outer map become absent
 * (their slots free again); with wait, once all it holds are done. 0,
 * or the -errno of a delete that failed (that chunk is dropping again).
 */
int chunks_collect(struct chunks *c, bool wait);

/* Work for chunks_commit: pending, dropping, or reaped to collect. */
static inline bool chunks_dirty(const struct chunks *c)
{
	return c->npending || c->ndropping || c->nreaping;
}

/* Bytes of the chunks that exist (value_size rounded up to 8). */
uint64_t chunks_bytes(const struct chunks *c);

/*
 * The lowest free slot of rules_v4 (used bits, nslots of them, none free
 * below *lo), its chunk in c made (pending) if needed; *lo moves to it.
 * Taking the lowest keeps the rules packed at the bottom, so the chunks
 * above the highest one in use hold nothing and can go. The caller marks
 * it used. -ENOSPC when full.
 */
int64_t chunks_slot_get(struct chunks *c, const uint64_t *used,
			uint32_t nslots, uint32_t *lo);

#endif
