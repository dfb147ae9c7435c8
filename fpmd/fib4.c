// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * IPv4 DIR-24-8 (DPDK rte_lpm's layout). tbl24 is kept in fpmd's memory
 * and the words a change touched are written to its parts at the end of
 * the change; tbl8 is written through a shared mapping. Each entry remembers, in user space only (d24 / d8), the length
 * of the prefix it came from: adding a prefix overwrites the entries in
 * its range whose prefix is not longer, deleting one gives the entries it
 * owned to its covering prefix. Readers never see a half-written prefix:
 * a new tbl8 group is filled completely before tbl24 points at it, and
 * every entry is one aligned 32-bit store.
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

#include "fib4.h"

struct fib4_rule {
	struct hnode node;
	uint32_t addr; /* host order, host bits zero */
	uint32_t val;
	uint32_t slot; /* in rules_v4 */
	uint8_t len;
};

#define GRACE_NS_DEFAULT 1000000ull /* 1 ms */

static void store(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* tbl24 entry i changes (written out by flush24). */
static void set24(struct fib4 *f, uint32_t i, uint32_t v)
{
	f->t24[i] = v;
	f->entry_writes++;
	if (f->dirty_lo > f->dirty_hi) {
		f->dirty_lo = f->dirty_hi = i / 2;
		return;
	}
	if (i / 2 < f->dirty_lo)
		f->dirty_lo = i / 2;
	if (i / 2 > f->dirty_hi)
		f->dirty_hi = i / 2;
}

/* Words [from, to] of tbl24 into its parts: a map update for one or
 * two, the commit program for more (fpmd_maps.h). */
static int write24(struct fib4 *f, uint32_t from, uint32_t to)
{
	if (to - from < 2) {
		for (uint32_t w = from; w <= to; w++) {
			uint32_t part = w / FPMD_TBL24_PART_WORDS;
			uint32_t k = w - part * FPMD_TBL24_PART_WORDS;
			uint64_t v;

			memcpy(&v, &f->t24[2 * (size_t)w], 8);
			f->syscalls++;
			if (bpf_map_update_elem(f->part_fd[part], &k, &v, 0))
				return -errno;
		}
		return 0;
	}
	while (from <= to) {
		struct fpmd_tbl24_commit cm = { .first = from };
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &cm,
			    .data_size_in = sizeof(cm), .repeat = 1);

		cm.n = to - from + 1;
		if (cm.n > FPMD_TBL24_STAGE_WORDS)
			cm.n = FPMD_TBL24_STAGE_WORDS;
		memcpy(f->stage, &f->t24[2 * (size_t)from], (size_t)cm.n * 8);
		f->syscalls++;
		if (bpf_prog_test_run_opts(f->commit_fd, &o))
			return -errno;
		if (o.retval != XDP_PASS)
			return -EIO;
		from += cm.n;
	}
	return 0;
}

static int flush24(struct fib4 *f)
{
	int ret = 0;

	if (f->dirty_lo <= f->dirty_hi)
		ret = write24(f, f->dirty_lo, f->dirty_hi);
	f->dirty_lo = 1;
	f->dirty_hi = 0;
	return ret;
}

static uint32_t mask_of(uint8_t len)
{
	return len ? ~0u << (32 - len) : 0;
}

static uint32_t rule_hash(uint32_t addr, uint8_t len)
{
	uint64_t k = ((uint64_t)addr << 8 | len) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(k >> 32);
}

static struct fib4_rule *rule_find(const struct fib4 *f, uint32_t addr,
				   uint8_t len)
{
	uint32_t h = rule_hash(addr, len);

	for (struct hnode *n = ht_chain(&f->by_prefix, h); n; n = n->next) {
		struct fib4_rule *r = container_of(n, struct fib4_rule, node);

		if (n->hash == h && r->addr == addr && r->len == len)
			return r;
	}
	return NULL;
}

/* The longest prefix shorter than len covering addr, or NULL. */
static struct fib4_rule *rule_parent(const struct fib4 *f, uint32_t addr,
				     uint8_t len)
{
	for (int l = len - 1; l >= 0; l--) {
		struct fib4_rule *r;

		if (!f->len_count[l])
			continue;
		r = rule_find(f, addr & mask_of((uint8_t)l), (uint8_t)l);
		if (r)
			return r;
	}
	return NULL;
}

/* ---- tbl8 groups ---- */

static void group_free(struct fib4 *f, uint32_t g)
{
	uint32_t tail = (f->g_head + f->g_count) % f->ngroups;

	f->g_state[g] = 3;
	f->g_queue[tail] = g;
	f->g_freed_ns[tail] = mono_ns();
	f->g_count++;
	f->groups_used--;
}

static bool group_available(const struct fib4 *f, uint32_t prefer)
{
	return f->groups_used < f->ngroups ||
	       (prefer < f->ngroups && f->g_state[prefer] == 2);
}

/*
 * A group to fill: the reserved one asked for (adoption keeps a /24's
 * group number), else the oldest freed group past its grace period, a
 * never-used one, or the oldest freed after waiting out its grace.
 */
static int64_t group_alloc(struct fib4 *f, uint32_t prefer)
{
	uint32_t g;

	if (prefer < f->ngroups && f->g_state[prefer] == 2) {
		f->g_state[prefer] = 1;
		return prefer; /* reserved groups already count as used */
	}
	if (f->g_count &&
	    mono_ns() - f->g_freed_ns[f->g_head] >= f->grace_ns)
		goto pop;
	while (f->g_fresh < f->ngroups && f->g_state[f->g_fresh])
		f->g_fresh++;
	if (f->g_fresh < f->ngroups) {
		g = f->g_fresh++;
		goto take;
	}
	if (!f->g_count)
		return -ENOSPC;
	for (;;) {
		uint64_t age = mono_ns() - f->g_freed_ns[f->g_head];

		if (age >= f->grace_ns)
			break;
		usleep((useconds_t)((f->grace_ns - age) / 1000 + 1));
	}
pop:
	g = f->g_queue[f->g_head];
	f->g_head = (f->g_head + 1) % f->ngroups;
	f->g_count--;
take:
	f->g_state[g] = 1;
	f->groups_used++;
	return g;
}

/* ---- painting the arrays ---- */

/* Entries [from, from + n) of group g: those owned by a prefix of length
 * <= len (add) or == len (delete) become val / vlen. */
static void paint8(struct fib4 *f, uint32_t g, uint32_t from, uint32_t n,
		   uint8_t len, bool del, uint32_t val, uint8_t vlen)
{
	uint32_t base = g * FPMD_TBL8_GROUP;

	for (uint32_t j = base + from; j < base + from + n; j++) {
		if (del ? f->d8[j] != len : f->d8[j] > len)
			continue;
		f->d8[j] = vlen;
		if (f->t8[j] != val) {
			store(&f->t8[j], val);
			f->entry_writes++;
		}
	}
}

static void paint24(struct fib4 *f, uint32_t i, uint8_t len, bool del,
		    uint32_t val, uint8_t vlen)
{
	uint32_t e = f->t24[i];

	if (FPMD_RT_TYPE(e) == FPMD_RT_TBL8) {
		paint8(f, FPMD_RT_INDEX(e), 0, FPMD_TBL8_GROUP, len, del, val,
		       vlen);
		return;
	}
	if (del ? f->d24[i] != len : f->d24[i] > len)
		return;
	f->d24[i] = vlen;
	if (e != val)
		set24(f, i, val);
}

/* Back to one tbl24 entry once no prefix longer than /24 is left. */
static void maybe_collapse(struct fib4 *f, uint32_t i, uint32_t g)
{
	uint32_t base = g * FPMD_TBL8_GROUP;

	for (uint32_t j = base; j < base + FPMD_TBL8_GROUP; j++)
		if (f->d8[j] > 24)
			return;
	f->d24[i] = f->d8[base];
	set24(f, i, f->t8[base]);
	group_free(f, g);
}

/* Write addr/len into the arrays; prefer: a group number for adoption. */
static int paint_add(struct fib4 *f, uint32_t addr, uint8_t len, uint32_t val,
		     uint32_t prefer)
{
	uint32_t i = addr >> 8, e;
	int64_t g;

	if (len <= 24) {
		uint32_t n = 1u << (24 - len);

		for (uint32_t k = i; k < i + n; k++)
			paint24(f, k, len, false, val, len);
		return 0;
	}
	e = f->t24[i];
	if (FPMD_RT_TYPE(e) == FPMD_RT_TBL8) {
		g = FPMD_RT_INDEX(e);
	} else {
		uint32_t base;

		g = group_alloc(f, prefer);
		if (g < 0)
			return (int)g;
		base = (uint32_t)g * FPMD_TBL8_GROUP;
		/* The whole /24 as it is now, then the new prefix, then
		 * the pointer: a lookup sees the old /24 or the new one. */
		for (uint32_t j = base; j < base + FPMD_TBL8_GROUP; j++) {
			store(&f->t8[j], e);
			f->d8[j] = f->d24[i];
		}
		f->entry_writes += FPMD_TBL8_GROUP;
		paint8(f, (uint32_t)g, addr & 0xff, 1u << (32 - len), len,
		       false, val, len);
		set24(f, i, FPMD_RT_ENCODE(FPMD_RT_TBL8, g));
		return 0;
	}
	paint8(f, (uint32_t)g, addr & 0xff, 1u << (32 - len), len, false, val,
	       len);
	return 0;
}

static void paint_del(struct fib4 *f, uint32_t addr, uint8_t len,
		      uint32_t pval, uint8_t plen)
{
	uint32_t i = addr >> 8, e;

	if (len <= 24) {
		uint32_t n = 1u << (24 - len);

		for (uint32_t k = i; k < i + n; k++)
			paint24(f, k, len, true, pval, plen);
		return;
	}
	e = f->t24[i];
	if (FPMD_RT_TYPE(e) != FPMD_RT_TBL8)
		return; /* cannot happen: a /25+ always has its group */
	paint8(f, FPMD_RT_INDEX(e), addr & 0xff, 1u << (32 - len), len, true,
	       pval, plen);
	maybe_collapse(f, i, FPMD_RT_INDEX(e));
}

/* ---- the prefix store ---- */

static void record_write(struct fib4 *f, const struct fib4_rule *r)
{
	struct fpmd_rule_v4 *rec = &f->rules[r->slot];
	uint32_t a = __builtin_bswap32(r->addr);

	if (rec->flags & FPMD_RULE_F_USED) {
		store(&rec->val, r->val);
		return;
	}
	memcpy(rec->addr, &a, 4);
	rec->val = r->val;
	rec->len = r->len;
	__atomic_store_n(&rec->flags, FPMD_RULE_F_USED, __ATOMIC_RELEASE);
}

static struct fib4_rule *rule_new(struct fib4 *f, uint32_t addr, uint8_t len,
				  uint32_t val, uint32_t slot)
{
	struct fib4_rule *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->addr = addr;
	r->len = len;
	r->val = val;
	r->slot = slot;
	ht_insert(&f->by_prefix, &r->node, rule_hash(addr, len));
	f->len_count[len]++;
	f->nrules++;
	return r;
}

static uint32_t slot_get(struct fib4 *f)
{
	if (f->nfree_slot)
		return f->free_slot[--f->nfree_slot];
	return f->next_slot++;
}

int fib4_add(struct fib4 *f, const uint8_t a[4], uint8_t len, uint32_t val)
{
	uint32_t addr, prefer = UINT32_MAX;
	struct fib4_rule *r;
	int ret;

	if (len > 32 || FPMD_RT_TYPE(val) == FPMD_RT_TBL8 ||
	    FPMD_RT_TYPE(val) == FPMD_RT_NONE)
		return -EINVAL;
	memcpy(&addr, a, 4);
	addr = __builtin_bswap32(addr) & mask_of(len);
	r = rule_find(f, addr, len);
	if (r) {
		if (r->val == val)
			return 0;
		r->val = val;
		record_write(f, r);
		ret = paint_add(f, addr, len, val, prefer);
		return ret ? ret : flush24(f);
	}
	if (!f->nfree_slot && f->next_slot >= f->nslots)
		return -ENOSPC;
	if (len > 24 && FPMD_RT_TYPE(f->t24[addr >> 8]) != FPMD_RT_TBL8 &&
	    !group_available(f, prefer))
		return -ENOSPC;
	r = rule_new(f, addr, len, val, slot_get(f));
	if (!r)
		return -ENOMEM;
	record_write(f, r);
	ret = paint_add(f, addr, len, val, prefer);
	if (ret) { /* not reached: availability was checked */
		fib4_del(f, a, len);
		return ret;
	}
	return flush24(f);
}

int fib4_del(struct fib4 *f, const uint8_t a[4], uint8_t len)
{
	struct fib4_rule *r, *p;
	uint32_t addr;

	if (len > 32)
		return -EINVAL;
	memcpy(&addr, a, 4);
	addr = __builtin_bswap32(addr) & mask_of(len);
	r = rule_find(f, addr, len);
	if (!r)
		return -ENOENT;
	ht_remove(&f->by_prefix, &r->node);
	f->len_count[len]--;
	f->nrules--;
	p = rule_parent(f, addr, len);
	paint_del(f, addr, len, p ? p->val : 0, p ? p->len : 0);
	__atomic_store_n(&f->rules[r->slot].flags, 0, __ATOMIC_RELEASE);
	f->free_slot[f->nfree_slot++] = r->slot;
	free(r);
	return flush24(f);
}

uint32_t fib4_lookup(const struct fib4 *f, const uint8_t a[4])
{
	uint32_t addr, e;

	memcpy(&addr, a, 4);
	addr = __builtin_bswap32(addr);
	e = f->t24[addr >> 8];
	if (FPMD_RT_TYPE(e) == FPMD_RT_TBL8)
		e = f->t8[FPMD_RT_INDEX(e) * FPMD_TBL8_GROUP + (addr & 0xff)];
	return e;
}

int fib4_foreach(const struct fib4 *f,
		 int (*cb)(const uint8_t addr[4], uint8_t len, uint32_t val,
			   void *arg),
		 void *arg)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(&f->by_prefix, n, tmp, i)
	{
		struct fib4_rule *r = container_of(n, struct fib4_rule, node);
		uint32_t a = __builtin_bswap32(r->addr);
		int ret = cb((const uint8_t *)&a, r->len, r->val, arg);

		if (ret)
			return ret;
	}
	return 0;
}

/* ---- open, adopt, close ---- */

static void *map_mmap(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static size_t page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

static int cmp_rec_len(const void *a, const void *b)
{
	const struct fpmd_rule_v4 *x = *(const struct fpmd_rule_v4 *const *)a;
	const struct fpmd_rule_v4 *y = *(const struct fpmd_rule_v4 *const *)b;

	return (int)x->len - (int)y->len;
}

/* tbl24 as the maps hold it, into buf (2^24 entries). */
static int read24(struct fib4 *f, uint32_t *buf)
{
	static uint32_t keys[FPMD_TBL24_PART_WORDS];
	static uint64_t vals[FPMD_TBL24_PART_WORDS];

	for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++) {
		uint32_t out, cnt = FPMD_TBL24_PART_WORDS, base;
		int ret;

		ret = bpf_map_lookup_batch(f->part_fd[p], NULL, &out, keys,
					   vals, &cnt, NULL);
		if (ret && errno != ENOENT)
			return -errno;
		base = p * FPMD_TBL24_PART_WORDS;
		for (uint32_t j = 0; j < cnt; j++) {
			uint32_t w = base + keys[j];

			if (keys[j] < FPMD_TBL24_PART_WORDS &&
			    w < FPMD_TBL24_WORDS)
				memcpy(&buf[2 * (size_t)w], &vals[j], 8);
		}
	}
	return 0;
}

/*
 * Replay rules_v4 into private tables (shortest prefixes first, each /24
 * keeping the tbl8 group number it has in the live tables), then write
 * the live ones only where they differ: groups first, tbl24 last.
 */
static int adopt(struct fib4 *f)
{
	uint32_t *live24, *live8 = f->t8;
	struct fpmd_rule_v4 **recs;
	uint32_t n = 0, top = 0;
	int ret = 0;

	live24 = calloc(FPMD_TBL24_ENTRIES, sizeof(uint32_t));
	f->t8 = calloc((size_t)f->ngroups * FPMD_TBL8_GROUP, sizeof(uint32_t));
	recs = calloc(f->nslots ? f->nslots : 1, sizeof(*recs));
	if (!live24 || !f->t8 || !recs) {
		ret = -ENOMEM;
		goto out;
	}
	ret = read24(f, live24);
	if (ret)
		goto out;
	for (uint32_t i = 0; i < FPMD_TBL24_ENTRIES; i++) {
		uint32_t e = live24[i];

		if (FPMD_RT_TYPE(e) == FPMD_RT_TBL8 &&
		    FPMD_RT_INDEX(e) < f->ngroups &&
		    !f->g_state[FPMD_RT_INDEX(e)]) {
			f->g_state[FPMD_RT_INDEX(e)] = 2;
			f->groups_used++;
		}
	}
	for (uint32_t s = 0; s < f->nslots; s++) {
		struct fpmd_rule_v4 *rec = &f->rules[s];

		if (!(rec->flags & FPMD_RULE_F_USED))
			continue;
		if (rec->len > 32 || FPMD_RT_TYPE(rec->val) == FPMD_RT_NONE ||
		    FPMD_RT_TYPE(rec->val) == FPMD_RT_TBL8) {
			rec->flags = 0; /* torn or foreign: drop it */
			continue;
		}
		recs[n++] = rec;
		top = s + 1;
	}
	qsort(recs, n, sizeof(*recs), cmp_rec_len);
	for (uint32_t k = 0; k < n; k++) {
		struct fpmd_rule_v4 *rec = recs[k];
		uint32_t addr, slot = (uint32_t)(rec - f->rules), e;

		memcpy(&addr, rec->addr, 4);
		addr = __builtin_bswap32(addr) & mask_of(rec->len);
		if (rule_find(f, addr, rec->len)) {
			rec->flags = 0; /* a duplicate: keep the first */
			continue;
		}
		if (!rule_new(f, addr, rec->len, rec->val, slot)) {
			ret = -ENOMEM;
			goto out;
		}
		e = live24[addr >> 8];
		ret = paint_add(f, addr, rec->len, rec->val,
				FPMD_RT_TYPE(e) == FPMD_RT_TBL8 ?
					FPMD_RT_INDEX(e) : UINT32_MAX);
		if (ret)
			goto out;
	}
	f->next_slot = top;
	for (uint32_t s = top; s-- > 0;)
		if (!(f->rules[s].flags & FPMD_RULE_F_USED))
			f->free_slot[f->nfree_slot++] = s;
	f->entry_writes = 0;
	for (uint32_t g = 0; g < f->ngroups; g++) {
		if (f->g_state[g] != 1)
			continue;
		for (uint32_t j = g * FPMD_TBL8_GROUP;
		     j < (g + 1) * FPMD_TBL8_GROUP; j++)
			if (live8[j] != f->t8[j]) {
				store(&live8[j], f->t8[j]);
				f->entry_writes++;
			}
	}
	f->dirty_lo = 1;
	f->dirty_hi = 0;
	for (uint32_t w = 0; w < FPMD_TBL24_WORDS && !ret; w++) {
		uint32_t end = w;

		if (!memcmp(&live24[2 * (size_t)w], &f->t24[2 * (size_t)w], 8))
			continue;
		while (end + 1 < FPMD_TBL24_WORDS &&
		       memcmp(&live24[2 * (size_t)(end + 1)],
			      &f->t24[2 * (size_t)(end + 1)], 8))
			end++;
		f->entry_writes += end - w + 1;
		ret = write24(f, w, end);
		w = end;
	}
	/* Groups the old tables used that no prefix needs any more. */
	for (uint32_t g = 0; g < f->ngroups; g++)
		if (f->g_state[g] == 2)
			group_free(f, g);
out:
	free(live24);
	free(f->t8);
	free(recs);
	f->t8 = live8;
	return ret;
}

/*
 * tbl24's parts: the adopted ones, or new ones put into the outer map in
 * one batch (every single update of a map-in-map waits for an RCU grace
 * period: 2098 of them take seconds).
 */
static int open_parts(struct fib4 *f, int tbl24_fd, bool adopt_maps)
{
	uint32_t *keys = NULL, n = 0, cnt;
	int *fds = NULL, ret = 0;

	f->part_fd = malloc(FPMD_TBL24_PARTS * sizeof(*f->part_fd));
	keys = malloc(FPMD_TBL24_PARTS * sizeof(*keys));
	fds = malloc(FPMD_TBL24_PARTS * sizeof(*fds));
	if (!f->part_fd || !keys || !fds) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++)
		f->part_fd[p] = -1;
	for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++) {
		uint32_t id;
		int fd = -1;

		if (adopt_maps && !bpf_map_lookup_elem(tbl24_fd, &p, &id))
			fd = bpf_map_get_fd_by_id(id);
		if (fd < 0) {
			fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fpmd_tbl24p",
					    4, 8, FPMD_TBL24_PART_WORDS, NULL);
			if (fd < 0) {
				ret = -errno;
				goto out;
			}
			keys[n] = p;
			fds[n++] = fd;
		}
		f->part_fd[p] = fd;
	}
	cnt = n;
	if (n && (bpf_map_update_batch(tbl24_fd, keys, fds, &cnt, NULL) ||
		  cnt != n))
		ret = -errno;
out:
	free(keys);
	free(fds);
	return ret;
}

int fib4_open(struct fib4 *f, const struct fib4_maps *m, uint32_t ngroups,
	      uint32_t nslots, bool adopt_maps)
{
	int ret = -ENOMEM;

	memset(f, 0, sizeof(*f));
	if (!ngroups || ngroups > FPMD_TBL8_MAX_GROUPS || !nslots)
		return -EINVAL;
	f->ngroups = ngroups;
	f->nslots = nslots;
	f->grace_ns = GRACE_NS_DEFAULT;
	f->dirty_lo = 1;
	f->t8_len = page_round((size_t)ngroups * FPMD_TBL8_GROUP_WORDS * 8);
	f->rules_len = page_round((size_t)nslots * sizeof(struct fpmd_rule_v4));
	f->commit_fd = m->commit_prog;
	f->t8 = map_mmap(m->tbl8, f->t8_len);
	f->rules = map_mmap(m->rules_v4, f->rules_len);
	f->stage = map_mmap(m->tbl24_stage, FPMD_TBL24_STAGE_WORDS * 8);
	if (!f->t8 || !f->rules || !f->stage) {
		ret = -errno;
		goto fail;
	}
	f->t24 = calloc(FPMD_TBL24_ENTRIES, sizeof(uint32_t));
	f->d24 = calloc(FPMD_TBL24_ENTRIES, 1);
	f->d8 = calloc((size_t)ngroups * FPMD_TBL8_GROUP, 1);
	f->g_state = calloc(ngroups, 1);
	f->g_queue = calloc(ngroups, sizeof(*f->g_queue));
	f->g_freed_ns = calloc(ngroups, sizeof(*f->g_freed_ns));
	f->free_slot = calloc(nslots, sizeof(*f->free_slot));
	if (!f->t24 || !f->d24 || !f->d8 || !f->g_state || !f->g_queue ||
	    !f->g_freed_ns || !f->free_slot || ht_init(&f->by_prefix, 1024))
		goto fail;
	ret = open_parts(f, m->tbl24, adopt_maps);
	if (ret)
		goto fail;
	if (adopt_maps) {
		ret = adopt(f);
		if (ret)
			goto fail;
	}
	return 0;
fail:
	fib4_close(f);
	return ret;
}

void fib4_close(struct fib4 *f)
{
	struct hnode *n, *tmp;
	size_t i;

	if (f->by_prefix.b) {
		ht_for_each(&f->by_prefix, n, tmp, i)
			free(container_of(n, struct fib4_rule, node));
		ht_free(&f->by_prefix);
	}
	if (f->part_fd) {
		for (uint32_t p = 0; p < FPMD_TBL24_PARTS; p++)
			if (f->part_fd[p] >= 0)
				close(f->part_fd[p]);
		free(f->part_fd);
	}
	free(f->t24);
	if (f->t8)
		munmap(f->t8, f->t8_len);
	if (f->rules)
		munmap(f->rules, f->rules_len);
	if (f->stage)
		munmap(f->stage, FPMD_TBL24_STAGE_WORDS * 8);
	free(f->d24);
	free(f->d8);
	free(f->g_state);
	free(f->g_queue);
	free(f->g_freed_ns);
	free(f->free_slot);
	memset(f, 0, sizeof(*f));
}
