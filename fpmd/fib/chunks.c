// SPDX-License-Identifier: GPL-2.0-or-later
/* An array grown in same-size chunks: see chunks.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "fib/chunks.h"

static size_t page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

static size_t elem_size(const struct chunks *c)
{
	return ((size_t)c->value_size + 7) / 8 * 8;
}

int64_t chunks_slot_get(struct chunks *c, const uint64_t *used,
			uint32_t nslots, uint32_t *lo)
{
	uint32_t w = *lo / 64, nw = (nslots + 63) / 64, s;
	int ret;

	while (w < nw && used[w] == ~0ull)
		w++;
	if (w >= nw)
		return -ENOSPC;
	s = w * 64 + (uint32_t)__builtin_ctzll(~used[w]);
	if (s >= nslots)
		return -ENOSPC;
	*lo = s;
	ret = chunks_get(c, s / c->per_chunk, true);
	if (ret)
		return ret;
	return s;
}

uint64_t chunks_bytes(const struct chunks *c)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < c->max_chunks; i++)
		if (c->state[i] != CHUNK_ABSENT)
			n++;
	return n * elem_size(c) * c->per_chunk;
}

static int map_chunk(struct chunks *c, uint32_t idx)
{
	void *p;

	if (!c->mmapable)
		return 0;
	p = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 c->fd[idx], 0);
	if (p == MAP_FAILED)
		return -errno;
	c->mem[idx] = p;
	return 0;
}

static void free_chunk(struct chunks *c, uint32_t idx)
{
	if (c->mem[idx])
		munmap(c->mem[idx], c->map_len);
	if (c->fd[idx] >= 0)
		close(c->fd[idx]);
	c->mem[idx] = NULL;
	c->fd[idx] = -1;
	c->state[idx] = CHUNK_ABSENT;
}

static int adopt_chunks(struct chunks *c)
{
	uint32_t *keys, *ids, cnt = c->max_chunks, out;
	int ret = 0;

	keys = calloc(c->max_chunks, sizeof(*keys));
	ids = calloc(c->max_chunks, sizeof(*ids));
	if (!keys || !ids) {
		ret = -ENOMEM;
		goto out;
	}
	/* One call for every id; absent entries are skipped. */
	if (bpf_map_lookup_batch(c->outer_fd, NULL, &out, keys, ids, &cnt,
				 NULL) &&
	    errno != ENOENT) {
		ret = -errno;
		goto out;
	}
	for (uint32_t j = 0; j < cnt && !ret; j++) {
		uint32_t idx = keys[j];
		int fd;

		if (idx >= c->max_chunks)
			continue;
		fd = bpf_map_get_fd_by_id(ids[j]);
		if (fd < 0) {
			ret = -errno;
			break;
		}
		c->fd[idx] = fd;
		c->state[idx] = CHUNK_LIVE;
		c->live++;
		ret = map_chunk(c, idx);
	}
out:
	free(keys);
	free(ids);
	return ret;
}

int chunks_open(struct chunks *c, int outer_fd, uint32_t value_size,
		uint32_t per_chunk, bool mmapable, bool adopt)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	int ret;

	memset(c, 0, sizeof(*c));
	c->outer_fd = outer_fd;
	if (!value_size || !per_chunk)
		return -EINVAL;
	if (bpf_obj_get_info_by_fd(outer_fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_ARRAY_OF_MAPS || !info.max_entries)
		return -EINVAL;
	c->value_size = value_size;
	c->per_chunk = per_chunk;
	c->max_chunks = info.max_entries;
	c->mmapable = mmapable;
	c->map_len = page_round(elem_size(c) * per_chunk);
	c->fd = malloc(c->max_chunks * sizeof(*c->fd));
	c->mem = calloc(c->max_chunks, sizeof(*c->mem));
	c->state = calloc(c->max_chunks, 1);
	if (!c->fd || !c->mem || !c->state) {
		chunks_close(c);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < c->max_chunks; i++)
		c->fd[i] = -1;
	if (adopt) {
		ret = adopt_chunks(c);
		if (ret) {
			chunks_close(c);
			return ret;
		}
	}
	return 0;
}

void chunks_close(struct chunks *c)
{
	/* What the reaper has not begun stays in the outer map (dropping:
	 * a successor drops it again), what it began is waited for. */
	if (c->state && c->nreaping) {
		for (uint32_t i = 0; i < c->max_chunks; i++)
			if (c->state[i] == CHUNK_REAPING)
				chunks_reclaim(c, i);
		chunks_collect(c, true);
	}
	if (c->state)
		for (uint32_t i = 0; i < c->max_chunks; i++)
			free_chunk(c, i);
	free(c->fd);
	free(c->mem);
	free(c->state);
	memset(c, 0, sizeof(*c));
	c->outer_fd = -1;
}

int chunks_get(struct chunks *c, uint32_t idx, bool create)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);
	int fd, ret;

	if (idx >= c->max_chunks)
		return -ERANGE;
	if (c->state[idx] == CHUNK_REAPING)
		chunks_reclaim(c, idx);
	switch (c->state[idx]) {
	case CHUNK_LIVE:
	case CHUNK_PENDING:
		return 0;
	case CHUNK_DROPPING:
		c->state[idx] = CHUNK_LIVE;
		c->ndropping--;
		return 0;
	default:
		break;
	}
	if (!create)
		return -ENOENT;
	if (c->mmapable)
		o.map_flags = BPF_F_MMAPABLE;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fpmd_chunk", 4, c->value_size,
			    c->per_chunk, &o);
	if (fd < 0)
		return -errno;
	c->fd[idx] = fd;
	ret = map_chunk(c, idx);
	if (ret) {
		free_chunk(c, idx);
		return ret;
	}
	c->state[idx] = CHUNK_PENDING;
	c->npending++;
	c->created++;
	return 0;
}

void chunks_drop(struct chunks *c, uint32_t idx)
{
	if (idx >= c->max_chunks)
		return;
	if (c->state[idx] == CHUNK_PENDING) {
		c->npending--;
		c->dropped++;
		free_chunk(c, idx);
	} else if (c->state[idx] == CHUNK_LIVE) {
		c->state[idx] = CHUNK_DROPPING;
		c->ndropping++;
	}
}

static int commit_pending(struct chunks *c)
{
	uint32_t *keys, n = 0, cnt;
	int *fds, ret = 0;

	keys = calloc(c->npending, sizeof(*keys));
	fds = calloc(c->npending, sizeof(*fds));
	if (!keys || !fds) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < c->max_chunks; i++)
		if (c->state[i] == CHUNK_PENDING) {
			keys[n] = i;
			fds[n++] = c->fd[i];
		}
	cnt = n;
	c->grace_waits++;
	if (bpf_map_update_batch(c->outer_fd, keys, fds, &cnt, NULL)) {
		ret = -errno;
		/* The first cnt went in. */
		n = cnt < n ? cnt : 0;
	}
	for (uint32_t j = 0; j < n; j++) {
		c->state[keys[j]] = CHUNK_LIVE;
		c->npending--;
		c->live++;
	}
out:
	free(keys);
	free(fds);
	return ret;
}

/* Chunk idx is out of the outer map: absent, its slot free again. */
static void gone(struct chunks *c, uint32_t idx)
{
	c->live--;
	c->dropped++;
	free_chunk(c, idx);
}

/*
 * ARRAY_OF_MAPS has no batch delete (6.18: ENOTSUPP), so each drop waits
 * its own grace period: the reaper's threads do them, up to max_drops
 * per commit, handed over in one batch (a dropping chunk is still
 * correct, only not yet freed).
 * Without a thread, here, one grace period each.
 */
static int commit_drops(struct chunks *c, uint32_t max_drops)
{
	uint32_t here = 4; /* without the reaper: the loop waits for these */
	struct reap_batch b = { 0 };
	int ret = 0;

	for (uint32_t i = 0; i < c->max_chunks && max_drops && here; i++) {
		if (c->state[i] != CHUNK_DROPPING)
			continue;
		c->grace_waits++;
		c->ndropping--;
		max_drops--;
		if (!reaper_batch_add(&b, &c->reap, c->outer_fd, i, c->fd[i],
				      c->mem[i], c->map_len)) {
			/* The job's now: closed and unmapped there. */
			c->fd[i] = -1;
			c->mem[i] = NULL;
			c->state[i] = CHUNK_REAPING;
			c->nreaping++;
			continue;
		}
		here--;
		if (bpf_map_delete_elem(c->outer_fd, &i) && errno != ENOENT) {
			ret = -errno;
			c->ndropping++;
			break;
		}
		gone(c, i);
	}
	/* All of this commit's drops, under one lock. */
	reaper_batch_submit(&b);
	return ret;
}

/* A finished job's chunk: gone, or dropping again when its delete
 * failed (fd and mapping as they were). */
static int job_done(struct chunks *c, struct reap_job *j)
{
	int err = j->err;

	c->nreaping--;
	if (err) {
		c->fd[j->key] = j->fd;
		c->mem[j->key] = j->mem;
		c->state[j->key] = CHUNK_DROPPING;
		c->ndropping++;
	} else {
		gone(c, j->key);
	}
	free(j);
	return err;
}

int chunks_collect(struct chunks *c, bool wait)
{
	struct reap_job *j;
	int ret = 0;

	if (!c->nreaping)
		return 0;
	if (wait)
		reaper_wait(&c->reap);
	j = reaper_collect(&c->reap);
	while (j) {
		struct reap_job *n = j->next;
		int err = job_done(c, j);

		ret = ret ? ret : err;
		j = n;
	}
	return ret;
}

void chunks_reclaim(struct chunks *c, uint32_t idx)
{
	struct reap_job *j;

	if (idx >= c->max_chunks || c->state[idx] != CHUNK_REAPING)
		return;
	j = reaper_reclaim(&c->reap, idx);
	if (j) {
		/* Its delete never began: the chunk is as it was. */
		c->fd[idx] = j->fd;
		c->mem[idx] = j->mem;
		c->state[idx] = CHUNK_DROPPING;
		c->ndropping++;
		c->nreaping--;
		free(j);
		return;
	}
	chunks_collect(c, false); /* it finished: idx among them */
}

int chunks_commit(struct chunks *c, uint32_t max_drops)
{
	int ret = 0;

	if (c->npending)
		ret = commit_pending(c);
	if (!ret && c->ndropping && max_drops)
		ret = commit_drops(c, max_drops);
	if (c->nreaping) {
		int r = chunks_collect(c, false);

		ret = ret ? ret : r;
	}
	return ret;
}
