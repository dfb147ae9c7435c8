// SPDX-License-Identifier: GPL-2.0-or-later
/* nexthops and nh_groups in chunks: see nhtab.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "fib/nhtab.h"

int nhtab_open(struct nhtab *t, int nh_fd, int groups_fd, bool adopt)
{
	int ret;

	memset(t, 0, sizeof(*t));
	ret = chunks_open(&t->nh, nh_fd, sizeof(struct fpmd_nexthop),
			  1u << FPMD_NH_CHUNK_SHIFT, false, adopt);
	if (ret)
		return ret;
	ret = chunks_open(&t->groups, groups_fd, sizeof(struct fpmd_nh_group),
			  1u << FPMD_GROUP_CHUNK_SHIFT, false, adopt);
	if (ret)
		chunks_close(&t->nh);
	return ret;
}

void nhtab_close(struct nhtab *t)
{
	/* The chunks stay in the (pinned) outer maps. */
	if (t->nh.state)
		chunks_close(&t->nh);
	if (t->groups.state)
		chunks_close(&t->groups);
}

/* Either entry, with its sequence count where the type keeps it. */
union entry {
	struct fpmd_nexthop nh;
	struct fpmd_nh_group g;
};

/*
 * Write entry idx with the sequence count protocol (FPMD_SEQ_WRITING in
 * fpmd_maps.h): old contents with the count odd, new contents, new
 * contents with the count even. A chunk the fast path cannot see yet
 * (pending) takes one write. A failure leaves the count odd, and the
 * fast path passes the entry's packets to the kernel until a write
 * succeeds.
 */
static int put(struct chunks *c, unsigned int shift, uint32_t idx,
	       const union entry *v, uint32_t *(*seq_of)(union entry *),
	       bool create)
{
	uint32_t ci = idx >> shift, i = idx & ((1u << shift) - 1), seq;
	int ret = chunks_get(c, ci, create), fd;
	union entry old, new = *v;

	if (ret == -ENOENT && !create)
		return 0; /* a clear where nothing was ever written */
	if (ret)
		return ret;
	fd = chunks_fd(c, ci);
	if (c->state[ci] == CHUNK_PENDING) {
		*seq_of(&new) = 0;
		if (bpf_map_update_elem(fd, &i, &new, BPF_ANY))
			return -errno;
		/* Visible (one RCU grace period) before the caller lets
		 * anything refer to idx. */
		return chunks_commit(c, 0);
	}
	if (bpf_map_lookup_elem(fd, &i, &old))
		return -errno;
	seq = *seq_of(&old);
	if (!FPMD_SEQ_WRITING(seq)) {
		*seq_of(&old) = ++seq;
		if (bpf_map_update_elem(fd, &i, &old, BPF_ANY))
			return -errno;
	}
	*seq_of(&new) = seq;
	if (bpf_map_update_elem(fd, &i, &new, BPF_ANY))
		return -errno;
	*seq_of(&new) = seq + 1;
	if (bpf_map_update_elem(fd, &i, &new, BPF_ANY))
		return -errno;
	/* A chunk taken back from the reaper, say. */
	return chunks_dirty(c) ? chunks_commit(c, 0) : 0;
}

static uint32_t *nh_seq(union entry *e)
{
	return &e->nh.seq;
}

static uint32_t *group_seq(union entry *e)
{
	return &e->g.seq;
}

static int get(struct chunks *c, unsigned int shift, uint32_t idx, void *v)
{
	uint32_t ci = idx >> shift, i = idx & ((1u << shift) - 1);

	if (!chunks_present(c, ci))
		return -ENOENT;
	return bpf_map_lookup_elem(chunks_fd(c, ci), &i, v) ? -errno : 0;
}

int nhtab_nexthop_write(struct nhtab *t, uint32_t idx,
			const struct fpmd_nexthop *nh)
{
	union entry e = { .nh = *nh };

	return put(&t->nh, FPMD_NH_CHUNK_SHIFT, idx, &e, nh_seq, true);
}

int nhtab_group_write(struct nhtab *t, uint32_t idx,
		      const struct fpmd_nh_group *g)
{
	union entry e = { .g = *g };

	return put(&t->groups, FPMD_GROUP_CHUNK_SHIFT, idx, &e, group_seq,
		   true);
}

int nhtab_nexthop_clear(struct nhtab *t, uint32_t idx)
{
	static const union entry z;

	return put(&t->nh, FPMD_NH_CHUNK_SHIFT, idx, &z, nh_seq, false);
}

int nhtab_group_clear(struct nhtab *t, uint32_t idx)
{
	static const union entry z;

	return put(&t->groups, FPMD_GROUP_CHUNK_SHIFT, idx, &z, group_seq,
		   false);
}

int nhtab_nexthop_read(struct nhtab *t, uint32_t idx, struct fpmd_nexthop *nh)
{
	return get(&t->nh, FPMD_NH_CHUNK_SHIFT, idx, nh);
}

int nhtab_group_read(struct nhtab *t, uint32_t idx, struct fpmd_nh_group *g)
{
	return get(&t->groups, FPMD_GROUP_CHUNK_SHIFT, idx, g);
}

/* Chunks wholly at or above top (every entry there cleared): marked and
 * deleted, up to *budget of them (one grace period each). */
static int shrink(struct chunks *c, unsigned int shift, uint32_t top,
		  uint32_t *budget)
{
	uint32_t first = (uint32_t)(((uint64_t)top + (1u << shift) - 1) >>
				    shift);
	uint64_t d0 = c->dropped;
	int ret;

	for (uint32_t i = first; i < c->max_chunks; i++)
		if (c->state[i] == CHUNK_LIVE)
			chunks_drop(c, i);
	if (!c->ndropping || !*budget)
		return chunks_collect(c, false);
	ret = chunks_commit(c, *budget);
	*budget -= (uint32_t)(c->dropped - d0) < *budget ?
			   (uint32_t)(c->dropped - d0) :
			   *budget;
	return ret;
}

int nhtab_shrink(struct nhtab *t, uint32_t nh_top, uint32_t group_top,
		 uint32_t *budget)
{
	int ret = shrink(&t->nh, FPMD_NH_CHUNK_SHIFT, nh_top, budget);

	if (!ret)
		ret = shrink(&t->groups, FPMD_GROUP_CHUNK_SHIFT, group_top,
			     budget);
	return ret;
}

int nhtab_nexthops_used(struct nhtab *t, uint32_t since,
			void (*cb)(const struct fpmd_nexthop *nh, void *arg),
			void *arg)
{
	const uint32_t per = 1u << FPMD_NH_CHUNK_SHIFT;
	struct fpmd_nexthop *v;
	uint32_t *keys;
	int ret = 0;

	v = calloc(per, sizeof(*v));
	keys = calloc(per, sizeof(*keys));
	if (!v || !keys) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t ci = 0; ci < t->nh.max_chunks; ci++) {
		uint32_t n = per, out;

		if (!chunks_present(&t->nh, ci))
			continue;
		/* One call reads the whole chunk (an array: all or error). */
		if (bpf_map_lookup_batch(chunks_fd(&t->nh, ci), NULL, &out,
					 keys, v, &n, NULL) &&
		    errno != ENOENT) {
			ret = -errno;
			break;
		}
		for (uint32_t i = 0; i < n; i++)
			if ((v[i].flags & FPMD_NH_F_VALID) &&
			    fpmd_epoch_since(v[i].used, since))
				cb(&v[i], arg);
	}
out:
	free(v);
	free(keys);
	return ret;
}
