// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * IPv4 compact table (DXR): opening the maps, adoption after a restart
 * (rules_v4 replayed, the live ranges kept where they are right), close.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <bpf/libbpf.h>

#include "fib/fib4c_priv.h"

static void *anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void *map_fd(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static uint32_t cls_size_floor(uint32_t g)
{
	return g <= 64 ? g : 64 + (g - 64) / 32 * 32;
}

static void fl_add(struct fib4c *f, uint32_t base, uint32_t n)
{
	struct fib4c_flist *l = &f->fl[fib4c_cls(n)];

	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 16;
		uint32_t *v = realloc(l->v, cap * 4);

		if (!v)
			return;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = base;
}

/*
 * Keep the ranges the live dxr_dir points at (they are visible) and make
 * the holes between them free space; /16s whose entry is not sound are
 * reset to "no route" (a corrupt table, not a restart).
 */
static int take_live(struct fib4c *f)
{
	uint32_t nch = f->rc.max_chunks;
	uint64_t *used = calloc((size_t)nch * FPMD_DXR_CHUNK_RANGES / 64, 8);

	if (!used)
		return -ENOMEM;
	for (uint32_t j = 0; j < FPMD_DXR_DIR; j++) {
		uint64_t e = f->dmap[j];
		uint32_t n = fib4c_blk_n(e), w = fib4c_blk_words(e),
			 base = (uint32_t)e;
		uint32_t c = base / FPMD_DXR_CHUNK_RANGES;
		uint32_t off = base % FPMD_DXR_CHUNK_RANGES, sz;

		if (e & FPMD_DXR_U) {
			f->dir[j] = e;
			continue;
		}
		sz = fib4c_cls_size(fib4c_cls(w));
		if (n < 2 || !chunks_present(&f->rc, c) ||
		    off + sz > FPMD_DXR_CHUNK_RANGES) {
			__atomic_store_n(&f->dmap[j], FPMD_DXR_U,
					 __ATOMIC_RELEASE);
			f->entry_writes++;
			f->dir[j] = FPMD_DXR_U;
			continue;
		}
		for (uint32_t i = c * FPMD_DXR_CHUNK_RANGES + off;
		     i < c * FPMD_DXR_CHUNK_RANGES + off + sz; i++)
			used[i / 64] |= 1ull << (i % 64);
		if (off + sz > f->top[c])
			f->top[c] = off + sz;
		f->clive[c] += sz;
		f->dir[j] = e;
		f->ranges += w;
	}
	for (uint32_t c = 0; c < nch; c++) {
		uint32_t i = 0;

		while (i < f->top[c]) {
			uint32_t at = c * FPMD_DXR_CHUNK_RANGES + i, g = 0;

			if (used[at / 64] & (1ull << (at % 64))) {
				i++;
				continue;
			}
			while (
			    i + g < f->top[c] &&
			    !(used[(at + g) / 64] & (1ull << ((at + g) % 64))))
				g++;
			i += g;
			while (g) {
				uint32_t piece = cls_size_floor(g);

				fl_add(f, at, piece);
				at += piece;
				g -= piece;
			}
		}
	}
	free(used);
	return 0;
}

struct arule {
	uint32_t a, val, slot;
	uint8_t len;
};

static int arule_cmp(const void *x, const void *y)
{
	const struct arule *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return (int)p->len - (int)q->len;
}

static int adopt(struct fib4c *f)
{
	int ret = 0;

	f->adopting = true;
	/* The value indexes in use keep their numbers. */
	for (uint32_t vi = 1; vi < FPMD_DXR_VALS; vi++) {
		f->vals[vi] = f->vmap[vi];
		if (f->vals[vi])
			f->vtop = vi + 1;
	}
	for (uint32_t vi = 1; vi < f->vtop; vi++)
		if (f->vals[vi])
			f->vref[vi] = 1; /* so that vh_rebuild indexes it */
	memset(f->vhash, 0, 2 * FPMD_DXR_VALS * 4);
	for (uint32_t vi = 1; vi < f->vtop; vi++) {
		uint32_t h = (f->vals[vi] * 0x9e3779b1u) >> 15;

		if (!f->vals[vi])
			continue;
		for (;; h = (h + 1) & (2 * FPMD_DXR_VALS - 1)) {
			uint32_t x = f->vhash[h];

			if (!x) {
				f->vhash[h] = vi + 1;
				break;
			}
			if (f->vals[x - 1] == f->vals[vi])
				break; /* a duplicate: freed below */
		}
		f->vref[vi] = 0;
	}
	/* The prefixes, replayed in address order: the private table is
	 * then painted front to back (1M in random order: mostly cache
	 * misses). */
	struct arule *rs = NULL;
	size_t nr = 0, cap = 0;

	for (uint32_t s = 0; s < f->nslots; s++) {
		struct fpmd_rule_v4 *rec;
		uint32_t c = s / FPMD_RULES_CHUNK, a;

		if (!chunks_present(&f->rulec, c)) {
			s = (c + 1) * FPMD_RULES_CHUNK - 1;
			continue;
		}
		rec = (struct fpmd_rule_v4 *)chunks_mem(&f->rulec, c) +
		      s % FPMD_RULES_CHUNK;
		if (!(__atomic_load_n(&rec->flags, __ATOMIC_ACQUIRE) &
		      FPMD_RULE_F_USED))
			continue;
		if (nr == cap) {
			struct arule *n;

			cap = cap ? cap * 2 : 4096;
			n = realloc(rs, cap * sizeof(*rs));
			if (!n) {
				free(rs);
				return -ENOMEM;
			}
			rs = n;
		}
		memcpy(&a, rec->addr, 4);
		a = __builtin_bswap32(a) &
		    (rec->len ? ~0u << (32 - rec->len) : 0);
		rs[nr++] = (struct arule){ a, rec->val, s, rec->len };
	}
	if (nr) /* none: rs is NULL, which qsort must not see */
		qsort(rs, nr, sizeof(*rs), arule_cmp);
	while ((f->pmask + 1) / 2 < nr) /* no rehash while replaying */
		f->pmask = f->pmask * 2 + 1;
	free(f->pfx);
	f->pfx = calloc((size_t)f->pmask + 1, sizeof(*f->pfx));
	if (!f->pfx) {
		free(rs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr && !ret; i++) {
		uint32_t n = __builtin_bswap32(rs[i].a), s = rs[i].slot;

		ret = fib4c_add(f, (const uint8_t *)&n, rs[i].len, rs[i].val);
		if (!ret) {
			struct fib4c_pfx *p =
			    fib4c_pfind(f, rs[i].a, rs[i].len);

			if (p)
				p->slot = s;
			f->slot_used[s / 64] |= 1ull << (s % 64);
			f->chunk_rules[s / FPMD_RULES_CHUNK]++;
		}
	}
	free(rs);
	if (!ret && !fib4c_pfind(f, 0, 0))
		f->vmap[0] = 0; /* no default route: index 0 is the miss */
	/* Indexes no prefix uses: free once the tables no longer name
	 * them (after the commit below). */
	for (uint32_t vi = 1; vi < f->vtop; vi++) {
		if (f->vref[vi])
			continue;
		if (f->vals[vi])
			f->vdead[f->nvdead++] = vi;
		else
			f->vfree[f->nvfree++] = vi;
	}
	if (!ret)
		ret = take_live(f);
	f->adopting = false;
	return ret;
}

int fib4c_open(struct fib4c *f, const struct fib4c_maps *m, uint32_t nslots,
	       bool adopt_maps)
{
	uint32_t nrc;
	int ret;

	memset(f, 0, sizeof(*f));
	f->grace_ns = 1000000;
	f->nslots = nslots;
	f->vtop = 1; /* index 0: no route */
	f->t24 = anon((size_t)4 << 24);
	f->l24 = anon((size_t)1 << 24);
	f->pmask = 1023;
	f->pfx = calloc(f->pmask + 1, sizeof(*f->pfx));
	f->vals = calloc(FPMD_DXR_VALS, 4);
	f->vref = calloc(FPMD_DXR_VALS, 4);
	f->vhash = calloc(2 * FPMD_DXR_VALS, 4);
	f->vfree = calloc(FPMD_DXR_VALS, 4);
	f->vdead = calloc(FPMD_DXR_VALS, 4);
	f->dir = calloc(FPMD_DXR_DIR, 8);
	f->dflag = calloc(FPMD_DXR_DIR, 1);
	f->dlist = calloc(FPMD_DXR_DIR, 4);
	f->fl = calloc(FIB4C_NCLASS, sizeof(*f->fl));
	f->slot_used = calloc((nslots + 63) / 64 + 1, 8);
	f->chunk_rules = calloc(nslots / FPMD_RULES_CHUNK + 1, 4);
	f->dmap = map_fd(m->dxr_dir, (size_t)FPMD_DXR_DIR * 8);
	f->vmap = map_fd(m->dxr_val, (size_t)FPMD_DXR_VAL_WORDS * 8);
	ret = -ENOMEM;
	if (!f->t24 || !f->l24 || !f->pfx || !f->vals || !f->vref ||
	    !f->vhash || !f->vfree || !f->vdead || !f->dir || !f->dflag ||
	    !f->dlist || !f->fl || !f->slot_used || !f->chunk_rules)
		goto fail;
	if (!f->dmap || !f->vmap) {
		ret = -errno;
		goto fail;
	}
	ret = chunks_open(&f->rc, m->dxr_rng, FPMD_DXR_CHUNK_WORDS * 8, 1, true,
			  adopt_maps);
	if (ret)
		goto fail;
	ret = chunks_open(&f->rulec, m->rules_v4, sizeof(struct fpmd_rule_v4),
			  FPMD_RULES_CHUNK, true, adopt_maps);
	if (ret) {
		chunks_close(&f->rc);
		goto fail;
	}
	nrc = f->rc.max_chunks;
	f->top = calloc(nrc + 1, 4);
	f->clive = calloc(nrc + 1, 4);
	if (!f->top || !f->clive) {
		ret = -ENOMEM;
		goto fail_chunks;
	}
	if (adopt_maps) {
		ret = adopt(f);
		if (ret)
			goto fail_chunks;
		/*
		 * The caller commits: rebuilt where different. The replay
		 * listed every /16 a prefix covers; the others have no route
		 * in the private table, which a published "uniform, none"
		 * already says. Reading them would touch all of t24 for
		 * nothing (64 MiB, where a read of untouched memory is not
		 * served from the zero page; 0.4 s).
		 */
		for (uint32_t j = 0; j < FPMD_DXR_DIR; j++)
			if (f->dflag[j] & FIB4C_LISTED) {
				f->dflag[j] |= FIB4C_STALE;
			} else if (f->dmap[j] != FPMD_DXR_U) {
				f->dflag[j] = FIB4C_LISTED | FIB4C_STALE;
				f->dlist[f->ndlist++] = j;
			}
		return 0;
	}
	for (uint32_t j = 0; j < FPMD_DXR_DIR; j++) {
		f->dir[j] = FPMD_DXR_U;
		__atomic_store_n(&f->dmap[j], FPMD_DXR_U, __ATOMIC_RELEASE);
	}
	f->vmap[0] = 0;
	return 0;

fail_chunks:
	chunks_close(&f->rc);
	chunks_close(&f->rulec);
fail:
	f->rc.max_chunks = 0;
	fib4c_close(f);
	return ret;
}

void fib4c_close(struct fib4c *f)
{
	if (f->rc.max_chunks) {
		chunks_close(&f->rc);
		chunks_close(&f->rulec);
	}
	if (f->t24)
		munmap(f->t24, (size_t)4 << 24);
	if (f->l24)
		munmap(f->l24, (size_t)1 << 24);
	if (f->dmap)
		munmap(f->dmap, (size_t)FPMD_DXR_DIR * 8);
	if (f->vmap)
		munmap(f->vmap, (size_t)FPMD_DXR_VAL_WORDS * 8);
	for (uint32_t k = 0; f->fl && k < FIB4C_NCLASS; k++)
		free(f->fl[k].v);
	free(f->fl);
	free(f->t8), free(f->l8), free(f->gfree), free(f->pfx);
	free(f->vals), free(f->vref), free(f->vhash), free(f->vfree);
	free(f->vdead), free(f->dir), free(f->dflag), free(f->dlist);
	free(f->top), free(f->clive), free(f->later), free(f->slot_used),
	    free(f->chunk_rules);
	memset(f, 0, sizeof(*f));
}

/* ---- sizing ---- */

void fib4c_size(struct bpf_object *obj, uint32_t nslots)
{
	struct bpf_map *dir = bpf_object__find_map_by_name(obj, "dxr_dir");
	struct bpf_map *val = bpf_object__find_map_by_name(obj, "dxr_val");
	struct bpf_map *rng = bpf_object__find_map_by_name(obj, "dxr_rng");
	struct bpf_map *rl = bpf_object__find_map_by_name(obj, "rules_v4");

	if (!nslots) {
		bpf_map__set_max_entries(dir, 1);
		bpf_map__set_max_entries(val, 1);
		bpf_map__set_max_entries(rng, 1);
		return;
	}
	bpf_map__set_max_entries(dir, FPMD_DXR_DIR);
	bpf_map__set_max_entries(val, FPMD_DXR_VAL_WORDS);
	/* ~1.8 ranges per prefix in a full table, room to build aside */
	bpf_map__set_max_entries(
	    rng, (uint32_t)((uint64_t)nslots * 3 / FPMD_DXR_CHUNK_RANGES) + 4);
	bpf_map__set_max_entries(rl, (nslots + FPMD_RULES_CHUNK - 1) /
					 FPMD_RULES_CHUNK);
}

void fib4c_maps_of(struct bpf_object *obj, struct fib4c_maps *m)
{
	m->dxr_dir = bpf_object__find_map_fd_by_name(obj, "dxr_dir");
	m->dxr_val = bpf_object__find_map_fd_by_name(obj, "dxr_val");
	m->dxr_rng = bpf_object__find_map_fd_by_name(obj, "dxr_rng");
	m->rules_v4 = bpf_object__find_map_fd_by_name(obj, "rules_v4");
}
