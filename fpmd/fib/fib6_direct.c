// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The direct stage in front of the IPv6 search (lens_v6's direct[],
 * layout and rules in bpf/fpmd_maps.h): per /19 of 2000::/3, the best
 * route of length <= 19 over it and either the one route longer than /19
 * inside it (no slots_v6 probe), or the few lengths of the routes inside
 * it (a probe or two), or nothing (bisect the length list as before).
 *
 * fpmd keeps per /19 the value and the length of the route that gives
 * it, the lengths > 19 in use and how many routes; the routes per (/19,
 * length) in a hash. Entries are written after the slots they point at
 * (the callers change slots_v6 first).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fib/fib6_priv.h"

#define DSTUCK 0xff /* dlens: counting failed (no memory): bisect for good */
#define LOW32 0xffffffffull
#define GEN_BITS (FPMD_V6_DIRECT_GEN << 32)

struct dcount {
	struct hnode node;
	uint32_t key; /* /19 << 8 | length */
	uint32_t n;   /* routes */
};

static uint32_t dkey_hash(uint32_t k)
{
	return k * 0x9e3779b1u;
}

static uint64_t top64(const uint8_t *p)
{
	uint64_t t = 0;

	for (int i = 0; i < 8; i++)
		t = t << 8 | p[i];
	return t;
}

/* The /19s of 2000::/3 that p/len covers or lies in: n from *first. */
static uint32_t buckets_of(const uint8_t *p, uint8_t len, uint32_t *first)
{
	uint64_t t = top64(p);

	*first = 0;
	if (len < 3) {
		/* Covers 2000::/3 when its bits are those of 001. */
		if (len && (t ^ 1ull << 61) >> (64 - len))
			return 0;
		return FPMD_V6_DIRECT;
	}
	if (t >> 61 != 1)
		return 0;
	*first =
	    (uint32_t)(t >> (64 - FPMD_V6_DIRECT_PLEN)) & (FPMD_V6_DIRECT - 1);
	return len >= FPMD_V6_DIRECT_PLEN ? 1
					  : 1u << (FPMD_V6_DIRECT_PLEN - len);
}

static struct dcount *count_find(const struct fib6 *f, uint32_t key)
{
	uint32_t h = dkey_hash(key);

	for (struct hnode *n = ht_chain(&f->dcount, h); n; n = n->next) {
		struct dcount *c = container_of(n, struct dcount, node);

		if (n->hash == h && c->key == key)
			return c;
	}
	return NULL;
}

/* Count a route of length len (> 19) in /19 b in or out; false without
 * memory. *first: the first of its length there, or the last. */
static bool count_route(struct fib6 *f, uint32_t b, uint8_t len, int delta,
			bool *first)
{
	uint32_t key = b << 8 | len;
	struct dcount *c = count_find(f, key);

	*first = false;
	if (delta > 0) {
		if (c) {
			c->n++;
			return true;
		}
		c = calloc(1, sizeof(*c));
		if (!c)
			return false;
		c->key = key;
		c->n = 1;
		ht_insert(&f->dcount, &c->node, dkey_hash(key));
		*first = true;
		return true;
	}
	if (!c)
		return false;
	if (!--c->n) {
		ht_remove(&f->dcount, &c->node);
		free(c);
		*first = true;
	}
	return true;
}

/* The packed list of /19 b (longest first) with len in or out. */
static uint32_t list_change(uint32_t list, uint8_t len, int delta)
{
	uint8_t l[FPMD_V6_DIRECT_LENS + 1];
	int n = 0, k = 0;

	for (; n < FPMD_V6_DIRECT_LENS && (list >> (8 * n) & 0xff); n++)
		l[n] = (uint8_t)(list >> (8 * n));
	if (delta > 0) {
		while (k < n && l[k] > len)
			k++;
		memmove(l + k + 1, l + k, (size_t)(n - k));
		l[k] = len;
		n++;
	} else {
		while (k < n && l[k] != len)
			k++;
		if (k < n) {
			memmove(l + k, l + k + 1, (size_t)(n - k - 1));
			n--;
		}
	}
	list = 0;
	for (int i = 0; i < n && i < FPMD_V6_DIRECT_LENS; i++)
		list |= (uint32_t)l[i] << (8 * i);
	return list;
}

/* The lengths of /19 b from the counts (it had too many to list). */
static uint32_t list_scan(const struct fib6 *f, uint32_t b)
{
	uint32_t list = 0;
	int n = 0;

	for (int len = 128; len > FPMD_V6_DIRECT_PLEN && n < f->dlens[b]; len--)
		if (count_find(f, b << 8 | (uint32_t)len))
			list |= (uint32_t)len << (8 * n++);
	return list;
}

/* A length > 19 got its first route (delta 1) or lost its last (-1). */
static void lens_change(struct fib6 *f, uint32_t b, uint8_t len, int delta)
{
	f->dlens[b] = (uint8_t)(f->dlens[b] + delta);
	if (f->dlens[b] > FPMD_V6_DIRECT_LENS)
		return;
	if (delta < 0 && f->dlens[b] == FPMD_V6_DIRECT_LENS)
		f->dlist[b] = list_scan(f, b);
	else
		f->dlist[b] = list_change(f->dlist[b], len, delta);
}

/* The one route longer than /19 inside /19 b. */
static struct fib6_node *one_route(const struct fib6 *f, uint32_t b)
{
	uint64_t t = 1ull << 61 | (uint64_t)b << (64 - FPMD_V6_DIRECT_PLEN);
	struct fib6_node *one = NULL;
	struct node_list l = { 0 };
	uint8_t p[16] = { 0 };

	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(t >> (56 - 8 * i));
	fib6_cb_under(f->tree, p, FPMD_V6_DIRECT_PLEN, &l);
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i]->route && l.v[i]->len > FPMD_V6_DIRECT_PLEN)
			one = l.v[i];
	free(l.v);
	return one;
}

/* What /19 b's entry should say: w0 (without the generation), w1. one:
 * its one route if the caller knows it (else found in the tree). */
static uint64_t entry_want(const struct fib6 *f, uint32_t b,
			   const struct fib6_node *one, uint64_t *w1)
{
	uint32_t val = f->dval[b];
	const struct fib6_node *x;
	uint64_t p;

	*w1 = 0;
	if (f->dlens[b] > FPMD_V6_DIRECT_LENS)
		return val; /* bisect */
	if (f->dtot[b] == 1 && (x = one ? one : one_route(f, b)) &&
	    x->len <= 64) {
		p = top64(x->addr) & FPMD_V6_DIRECT_BITS45;
		*w1 = x->val | (p & LOW32) << 32;
		return val | (uint64_t)FPMD_V6_DIRECT_ONE << 32 |
		       (uint64_t)x->len << 40 | (p >> 32) << 48;
	}
	return FPMD_V6_DIRECT_ENCODE(val, f->dlens[b], f->dlist[b]);
}

static void store64(__u64 *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Bring /19 b's entry in lens_v6 to what fpmd knows; only what differs. */
static void entry_sync(struct fib6 *f, uint32_t b, const struct fib6_node *one)
{
	__u64 *d = f->lens->direct[b];
	uint64_t w1, w0 = entry_want(f, b, one, &w1);
	uint64_t cur = __atomic_load_n(&d[0], __ATOMIC_RELAXED);
	bool cur_one = cur >> 32 & FPMD_V6_DIRECT_ONE;

	if (!(w0 >> 32 & FPMD_V6_DIRECT_ONE)) {
		if (cur == w0)
			return;
		store64(&d[0], w0);
		f->direct_writes++;
		return;
	}
	if (cur_one && (cur & ~GEN_BITS) == w0 && d[1] == w1)
		return;
	if (d[1] != w1) {
		/* Lookups bisect while w1 changes under a w0 that uses it. */
		if (cur_one)
			store64(&d[0], w0 & LOW32);
		store64(&d[1], w1);
	}
	/* A new generation at each w0 of this mode: see fpmd_maps.h. */
	f->dgen[b] = (uint8_t)((f->dgen[b] + 1) & FPMD_V6_DIRECT_GEN);
	store64(&d[0], w0 | (uint64_t)f->dgen[b] << 32);
	f->direct_writes++;
}

/* Only /19 b's value (the route <= /19) changed: a one-route entry keeps
 * its route from lens_v6 rather than a walk of the tree (a /0 change
 * touches every /19). */
static void val_sync(struct fib6 *f, uint32_t b)
{
	__u64 *d = f->lens->direct[b];
	uint64_t cur = __atomic_load_n(&d[0], __ATOMIC_RELAXED);

	if (!(cur >> 32 & FPMD_V6_DIRECT_ONE) || f->dtot[b] != 1 ||
	    f->dlens[b] > FPMD_V6_DIRECT_LENS) {
		entry_sync(f, b, NULL);
		return;
	}
	if ((uint32_t)cur == f->dval[b])
		return;
	f->dgen[b] = (uint8_t)((f->dgen[b] + 1) & FPMD_V6_DIRECT_GEN);
	store64(&d[0], (cur & ~LOW32 & ~GEN_BITS) | f->dval[b] |
			   (uint64_t)f->dgen[b] << 32);
	f->direct_writes++;
}

/* The counts of /19 b can no longer be trusted: bisect from now on. */
static void stuck(struct fib6 *f, uint32_t b)
{
	f->dlens[b] = DSTUCK;
	entry_sync(f, b, NULL);
}

void fib6_direct_add(struct fib6 *f, const struct fib6_node *x, bool added)
{
	uint32_t first, n = buckets_of(x->addr, x->len, &first);
	uint8_t len = x->len;
	bool one;

	if (!n || !f->dval)
		return;
	if (len <= FPMD_V6_DIRECT_PLEN) {
		/* Over the /19s where it is the longest of its kind. */
		for (uint32_t b = first; b < first + n; b++) {
			if (f->dsrc[b] > len + 1)
				continue;
			f->dsrc[b] = (uint8_t)(len + 1);
			f->dval[b] = x->val;
			val_sync(f, b);
		}
		return;
	}
	if (f->dlens[first] == DSTUCK)
		return;
	if (added) {
		if (!count_route(f, first, len, 1, &one)) {
			stuck(f, first);
			return;
		}
		f->dtot[first]++;
		if (one)
			lens_change(f, first, len, 1);
	}
	/* A new value matters to one route; x is it when alone. */
	entry_sync(f, first, x);
}

void fib6_direct_del(struct fib6 *f, const uint8_t *p, uint8_t len)
{
	uint32_t first, n = buckets_of(p, len, &first), val = 0;
	int clen = -1;
	bool last;

	if (!n || !f->dval)
		return;
	if (len <= FPMD_V6_DIRECT_PLEN) {
		/* Its /19s go to the route that covered it. */
		if (len)
			val = fib6_best(f, p, len - 1, &clen);
		for (uint32_t b = first; b < first + n; b++) {
			if (f->dsrc[b] != len + 1)
				continue;
			f->dsrc[b] = (uint8_t)(val ? clen + 1 : 0);
			f->dval[b] = val;
			val_sync(f, b);
		}
		return;
	}
	if (f->dlens[first] == DSTUCK)
		return;
	if (!count_route(f, first, len, -1, &last)) {
		stuck(f, first); /* never: the route was counted */
		return;
	}
	f->dtot[first]--;
	if (last)
		lens_change(f, first, len, -1);
	entry_sync(f, first, NULL);
}

void fib6_direct_close(struct fib6 *f)
{
	struct hnode *n, *tmp;
	size_t i;

	if (f->dcount.b) {
		ht_for_each(&f->dcount, n, tmp, i)
		    free(container_of(n, struct dcount, node));
		ht_free(&f->dcount);
	}
	free(f->dval);
	free(f->dlist);
	free(f->dtot);
	free(f->dsrc);
	free(f->dlens);
	free(f->dgen);
	f->dval = f->dlist = f->dtot = NULL;
	f->dsrc = f->dlens = f->dgen = NULL;
}

/* A route of fpmd's at open: into the counts; *one: the route of its /19
 * if it is alone there (checked by dtot). */
static void add_route(struct fib6 *f, const struct fib6_node *x,
		      const struct fib6_node **one)
{
	uint32_t first, n = buckets_of(x->addr, x->len, &first);
	bool nlen;

	if (!n)
		return;
	if (x->len <= FPMD_V6_DIRECT_PLEN) {
		for (uint32_t b = first; b < first + n; b++) {
			if (f->dsrc[b] > x->len + 1)
				continue;
			f->dsrc[b] = (uint8_t)(x->len + 1);
			f->dval[b] = x->val;
		}
		return;
	}
	if (f->dlens[first] == DSTUCK)
		return;
	if (!count_route(f, first, x->len, 1, &nlen)) {
		f->dlens[first] = DSTUCK;
		return;
	}
	f->dtot[first]++;
	one[first] = x;
	if (nlen)
		lens_change(f, first, x->len, 1);
}

/*
 * Every entry from the routes fpmd has (none, or those adopted), written
 * where lens_v6 holds something else: nothing after a clean restart.
 */
int fib6_direct_open(struct fib6 *f)
{
	const struct fib6_node **one = calloc(FPMD_V6_DIRECT, sizeof(*one));
	struct hnode *n, *tmp;
	size_t i;

	f->dval = calloc(FPMD_V6_DIRECT, sizeof(*f->dval));
	f->dlist = calloc(FPMD_V6_DIRECT, sizeof(*f->dlist));
	f->dtot = calloc(FPMD_V6_DIRECT, sizeof(*f->dtot));
	f->dsrc = calloc(FPMD_V6_DIRECT, 1);
	f->dlens = calloc(FPMD_V6_DIRECT, 1);
	f->dgen = calloc(FPMD_V6_DIRECT, 1);
	if (!one || !f->dval || !f->dlist || !f->dtot || !f->dsrc ||
	    !f->dlens || !f->dgen || ht_init(&f->dcount, 1024)) {
		free(one);
		fib6_direct_close(f);
		return -ENOMEM;
	}
	ht_for_each(&f->nodes, n, tmp, i)
	{
		struct fib6_node *x = container_of(n, struct fib6_node, node);

		if (x->route)
			add_route(f, x, one);
	}
	for (uint32_t b = 0; b < FPMD_V6_DIRECT; b++) {
		uint64_t cur = f->lens->direct[b][0];

		/* Generations go on from the previous fpmd's. */
		if (cur >> 32 & FPMD_V6_DIRECT_ONE)
			f->dgen[b] = (uint8_t)(cur >> 32 & FPMD_V6_DIRECT_GEN);
		entry_sync(f, b, f->dtot[b] == 1 ? one[b] : NULL);
	}
	free(one);
	return 0;
}
