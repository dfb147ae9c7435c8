// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The slots_v6 table: a run of chunks in the outer map, open addressing
 * with a bounded probe window. It doubles at half full and halves below
 * an eighth: the new table is built in the other half of the outer map,
 * lens_v6 flips to it, and the old chunks go after a grace period.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fib/fib6_priv.h"
#include "fib/reaper.h"

static const size_t chunk_bytes =
	(size_t)FPMD_V6_CHUNK_SLOTS * sizeof(struct fpmd_v6_slot);

void fib6_chunks_free(struct fib6_chunk *c, uint32_t n)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < n; i++) {
		if (c[i].slots)
			munmap(c[i].slots, chunk_bytes);
		if (c[i].fd >= 0)
			close(c[i].fd);
	}
	free(c);
}

struct old_chunks {
	struct fib6_chunk *c;
	uint32_t n;
};

static void old_chunks_free(void *arg)
{
	struct old_chunks *o = arg;

	fib6_chunks_free(o->c, o->n);
	free(o);
}

/*
 * Chunks out of the outer map, freed in a reaper thread: unmapping a
 * large table (tens of MiB after a mass delete) shoots down TLBs on
 * every CPU, ~30 ms of the loop here. Nothing of fpmd's touches them
 * any more, and lookups stopped with the outer map's update.
 */
static void chunks_free_later(struct fib6_chunk *c, uint32_t n)
{
	struct old_chunks *o = malloc(sizeof(*o));

	if (o) {
		o->c = c;
		o->n = n;
		if (!reaper_call(old_chunks_free, o))
			return;
		free(o);
	}
	fib6_chunks_free(c, n);
}

static struct fib6_chunk *chunks_alloc(uint32_t n)
{
	struct fib6_chunk *c = calloc(n, sizeof(*c));

	for (uint32_t i = 0; c && i < n; i++)
		c[i].fd = -1;
	return c;
}

static int chunk_mmap(struct fib6_chunk *c)
{
	void *p = mmap(NULL, chunk_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		       c->fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	c->slots = p;
	return 0;
}

static int chunk_create(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fpmd_slots6",
				sizeof(__u32), sizeof(struct fpmd_v6_slot),
				FPMD_V6_CHUNK_SLOTS, &o);

	return fd < 0 ? -errno : fd;
}

/*
 * Release outer entries [first, first + n). ARRAY_OF_MAPS has no batch
 * delete and each delete waits an RCU grace period (~15 ms here: seconds
 * for a large table), so they are pointed at one shared empty chunk, the
 * filler, in one batch update (one grace period); the chunks they held
 * are freed.
 */
static void outer_clear(struct fib6 *f, uint32_t first, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	uint32_t *keys = malloc((n + 1) * sizeof(*keys)), cnt = n, id;
	int *fds = malloc((n + 1) * sizeof(*fds));

	if (!keys || !fds)
		goto out;
	if (f->filler_fd < 0)
		f->filler_fd = chunk_create();
	for (uint32_t i = 0; i < n; i++) {
		keys[i] = first + i;
		fds[i] = f->filler_fd;
	}
	if (f->filler_fd >= 0 &&
	    !bpf_map_update_batch(f->outer_fd, keys, fds, &cnt, &bo))
		goto out;
	for (uint32_t i = 0; i < n; i++)
		if (!bpf_map_lookup_elem(f->outer_fd, &keys[i], &id))
			bpf_map_delete_elem(f->outer_fd, &keys[i]);
out:
	free(keys);
	free(fds);
}

/* n new, empty chunks at outer entries [base, base + n). */
static struct fib6_chunk *chunks_create(struct fib6 *f, uint32_t base,
					uint32_t n, int *err)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	struct fib6_chunk *c = chunks_alloc(n);
	uint32_t *keys = malloc(n * sizeof(*keys)), cnt = n;
	int *fds = malloc(n * sizeof(*fds)), ret = -ENOMEM;

	if (!c || !keys || !fds)
		goto fail;
	for (uint32_t i = 0; i < n; i++) {
		c[i].fd = chunk_create();
		if (c[i].fd < 0) {
			ret = c[i].fd;
			goto fail;
		}
		ret = chunk_mmap(&c[i]);
		if (ret)
			goto fail;
		keys[i] = base + i;
		fds[i] = c[i].fd;
	}
	if (bpf_map_update_batch(f->outer_fd, keys, fds, &cnt, &bo)) {
		ret = -errno;
		outer_clear(f, base, n);
		goto fail;
	}
	free(keys);
	free(fds);
	return c;
fail:
	fib6_chunks_free(c, n);
	free(keys);
	free(fds);
	*err = ret;
	return NULL;
}

static void slot_key(const struct fib6_node *x, uint64_t *hi, uint64_t *lo)
{
	memcpy(hi, x->addr, 8);
	memcpy(lo, x->addr + 8, 8);
}

static uint32_t slot_tag(const struct fib6_node *x, uint32_t flags)
{
	return FPMD_V6S_VALID | flags | x->len;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void fib6_grace(const struct fib6 *f)
{
	uint64_t t = mono_ns() + f->grace_ns;

	while (mono_ns() < t)
		usleep(100);
}

/* The first free slot of (hi, lo, len)'s probe window in a table of
 * mask + 1 slots, or -1. */
static int64_t free_slot(struct fib6_chunk *c, uint32_t mask, uint64_t hi,
			 uint64_t lo, uint32_t len)
{
	uint32_t home = (uint32_t)fpmd_v6_hash(hi, lo, len);

	for (uint32_t p = 0; p < FPMD_V6_MAX_PROBE; p++) {
		uint32_t k = (home + p) & mask;

		if (!(chunk_slot(c, k)->tag & FPMD_V6S_VALID))
			return k;
	}
	return -1;
}

/*
 * Move to a table of n slots: build it in the other half of slots_v6
 * (lookups do not see it yet), flip lens_v6 to it with the same length
 * list, and drop the old chunks once no lookup can still be reading them.
 */
static int resize(struct fib6 *f, uint32_t n)
{
	uint32_t nch = n / FPMD_V6_CHUNK_SLOTS, a,
		 base = f->base ? 0 : f->max_slots / FPMD_V6_CHUNK_SLOTS;
	struct fib6_chunk *c;
	struct hnode *h, *tmp;
	size_t it;
	int ret = 0;

	if (n > f->max_slots || n < FPMD_V6_CHUNK_SLOTS ||
	    f->in_map > n / 10 * 6)
		return -ENOSPC;
	c = chunks_create(f, base, nch, &ret);
	if (!c)
		return ret;
	ht_for_each(&f->nodes, h, tmp, it)
	{
		struct fib6_node *x = container_of(h, struct fib6_node, node);
		struct fpmd_v6_slot *o;
		int64_t k;

		if (!x->in_map)
			continue;
		o = slot_at(f, x->slot);
		k = free_slot(c, n - 1, o->hi, o->lo, x->len);
		if (k < 0) {
			ret = -ENOSPC; /* a full window at a quarter full */
			break;
		}
		x->nslot = (uint32_t)k;
		*chunk_slot(c, (uint32_t)k) = *o;
	}
	if (ret) {
		outer_clear(f, base, nch);
		fib6_chunks_free(c, nch);
		return ret;
	}
	if (f->resize_hook)
		f->resize_hook(f, n, false);
	a = f->lens->active & 1;
	memcpy(f->lens->len[!a], f->lens->len[a], FPMD_V6_LENS);
	f->lens->n[!a] = f->lens->n[a];
	f->lens->base[!a] = base;
	f->lens->mask[!a] = n - 1;
	__atomic_store_n(&f->lens->active, !a, __ATOMIC_RELEASE);
	if (f->resize_hook)
		f->resize_hook(f, n, true);
	fib6_grace(f);
	outer_clear(f, f->base, f->nslots / FPMD_V6_CHUNK_SLOTS);
	chunks_free_later(f->chunks, f->nslots / FPMD_V6_CHUNK_SLOTS);
	f->chunks = c;
	f->base = base;
	ht_for_each(&f->nodes, h, tmp, it)
	{
		struct fib6_node *x = container_of(h, struct fib6_node, node);

		if (x->in_map)
			x->slot = x->nslot;
	}
	if (n > f->nslots)
		f->grows++;
	else
		f->shrinks++;
	f->nslots = n;
	return 0;
}

static int grow(struct fib6 *f)
{
	return resize(f, f->nslots * 2);
}

/* Below an eighth full, halve (to a quarter full: no flapping with the
 * growth at half), as often as that holds, in one move: the table is
 * built once at its new size. */
void fib6_shrink(struct fib6 *f)
{
	uint32_t n = f->nslots;

	while (n > FPMD_V6_CHUNK_SLOTS && f->in_map < n / 8)
		n /= 2;
	if (n < f->nslots)
		resize(f, n);
}

/* Write x's entry: in place when it has a slot, else into the first free
 * slot of its probe window (key and val first, the tag last). A new entry
 * past half full grows the table first. */
int fib6_map_write(struct fib6 *f, struct fib6_node *x, uint32_t v,
		   uint32_t flags)
{
	struct fpmd_v6_slot *s;
	uint64_t hi, lo;
	int64_t k;

	if (x->in_map) {
		s = slot_at(f, x->slot);
		if (s->val != v)
			store32(&s->val, v);
		if (x->wflags != flags)
			store32(&s->tag, slot_tag(x, flags));
		goto done;
	}
	if (f->in_map >= f->max_in_map)
		return -ENOSPC;
	/* A failed grow leaves the table as it was, usable to 60%. */
	if (f->in_map + 1 > f->nslots / 2 && f->nslots < f->max_slots)
		grow(f);
	if (f->in_map >= f->nslots / 10 * 6)
		return -ENOSPC;
	slot_key(x, &hi, &lo);
	k = free_slot(f->chunks, f->nslots - 1, hi, lo, x->len);
	if (k < 0 && f->nslots < f->max_slots && !grow(f))
		k = free_slot(f->chunks, f->nslots - 1, hi, lo, x->len);
	if (k < 0)
		return -ENOSPC; /* a full probe window: very rare below 60% */
	s = slot_at(f, (uint32_t)k);
	__atomic_store_n(&s->hi, hi, __ATOMIC_RELAXED);
	__atomic_store_n(&s->lo, lo, __ATOMIC_RELAXED);
	store32(&s->val, v);
	store32(&s->tag, slot_tag(x, flags));
	x->slot = (uint32_t)k;
	x->in_map = true;
	f->in_map++;
done:
	f->map_writes++;
	x->written = v;
	x->wflags = flags;
	return 0;
}

/* A tombstone; then tombstones followed by an empty slot become empty
 * (no probe sequence can pass them), walking back. */
void fib6_map_remove(struct fib6 *f, struct fib6_node *x)
{
	uint32_t mask = f->nslots - 1, k;

	if (!x->in_map)
		return;
	k = x->slot;
	store32(&slot_at(f, k)->tag, FPMD_V6S_TOMB);
	while (slot_at(f, (k + 1) & mask)->tag == FPMD_V6S_EMPTY &&
	       slot_at(f, k)->tag == FPMD_V6S_TOMB) {
		store32(&slot_at(f, k)->tag, FPMD_V6S_EMPTY);
		k = (k - 1) & mask;
	}
	f->map_writes++;
	f->in_map--;
	x->in_map = false;
}

/* The chunks of the table lens_v6 points at, as a previous fpmd left
 * them; 0 with f->chunks NULL when there is no valid one. */
int fib6_adopt_chunks(struct fib6 *f)
{
	uint32_t a = f->lens->active & 1, n = f->lens->mask[a] + 1,
		 base = f->lens->base[a], half = f->max_slots / FPMD_V6_CHUNK_SLOTS,
		 nch = n / FPMD_V6_CHUNK_SLOTS;
	struct fib6_chunk *c;

	if ((n & (n - 1)) || n < FPMD_V6_CHUNK_SLOTS || n > f->max_slots ||
	    (base != 0 && base != half))
		return 0;
	c = chunks_alloc(nch);
	if (!c)
		return -ENOMEM;
	for (uint32_t i = 0; i < nch; i++) {
		struct bpf_map_info info = { 0 };
		uint32_t k = base + i, id, ilen = sizeof(info);

		if (bpf_map_lookup_elem(f->outer_fd, &k, &id))
			goto invalid;
		c[i].fd = bpf_map_get_fd_by_id(id);
		if (c[i].fd < 0 ||
		    bpf_obj_get_info_by_fd(c[i].fd, &info, &ilen) ||
		    info.max_entries != FPMD_V6_CHUNK_SLOTS ||
		    info.value_size != sizeof(struct fpmd_v6_slot) ||
		    chunk_mmap(&c[i]))
			goto invalid;
	}
	f->chunks = c;
	f->nslots = n;
	f->base = base;
	/* A grow cut short: its half-built table is nobody's. Unused
	 * entries all hold the one filler: more than one map there is such
	 * a table. */
	for (uint32_t i = 0, k = base ? 0 : half, id0 = 0, id; i < half;
	     i++, k++) {
		if (bpf_map_lookup_elem(f->outer_fd, &k, &id))
			continue;
		if (!id0)
			id0 = id;
		if (id != id0) {
			outer_clear(f, base ? 0 : half, half);
			break;
		}
	}
	return 0;
invalid:
	fib6_chunks_free(c, nch);
	return 0;
}

/* A new, empty table of one chunk; lookups miss until routes come. */
int fib6_fresh_table(struct fib6 *f)
{
	int ret = 0;

	uint32_t k, id;

	/* Maps reused without adoption (tests): free what they hold. */
	for (k = 0; k < 2 * (f->max_slots / FPMD_V6_CHUNK_SLOTS); k++)
		if (!bpf_map_lookup_elem(f->outer_fd, &k, &id))
			break;
	if (k < 2 * (f->max_slots / FPMD_V6_CHUNK_SLOTS))
		outer_clear(f, 0, 2 * (f->max_slots / FPMD_V6_CHUNK_SLOTS));
	f->chunks = chunks_create(f, 0, 1, &ret);
	if (!f->chunks)
		return ret;
	f->nslots = FPMD_V6_CHUNK_SLOTS;
	f->base = 0;
	memset(f->lens, 0, sizeof(*f->lens));
	f->lens->mask[0] = f->lens->mask[1] = f->nslots - 1;
	return 0;
}
