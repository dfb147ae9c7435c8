// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The direct stage in front of the IPv6 search (lens_v6's direct[],
 * layout and rules in bpf/fpmd_maps.h): per /19 of 2000::/3, the best
 * route of length <= 19 over it and, when its routes have at most
 * FPMD_V6_DIRECT_LENS other lengths, those lengths, so that a lookup
 * probes slots_v6 once or twice instead of bisecting the length list.
 *
 * fpmd keeps a copy of every entry, per /19 the length of the route that
 * gives the value and the number of lengths > 19, and the routes per
 * (/19, length). Entries are written after the slots they point at (the
 * callers change slots_v6 first), one 8-byte store each.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fib/fib6_priv.h"

#define DSTUCK 0xff /* dlens: counting failed (no memory): bisect for good */
#define LOW32 0xffffffffull

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

/* The lengths listed in entry e, longest first; how many. */
static int entry_lens(uint64_t e, uint8_t *l)
{
	int n = (int)(e >> 32 & 0xff) - 1;

	for (int i = 0; i < n; i++)
		l[i] = (uint8_t)(e >> (40 + 8 * i));
	return n < 0 ? 0 : n;
}

static uint64_t entry_make(uint32_t val, const uint8_t *l, int n)
{
	uint32_t lens = 0;

	for (int i = 0; i < n; i++)
		lens |= (uint32_t)l[i] << (8 * i);
	return FPMD_V6_DIRECT_ENCODE(val, (uint32_t)n, lens);
}

/* Entry e with one more length, in its place (longest first). */
static uint64_t entry_insert(uint64_t e, uint8_t len)
{
	uint8_t l[FPMD_V6_DIRECT_LENS + 1];
	int n = entry_lens(e, l), k = 0;

	if (n >= FPMD_V6_DIRECT_LENS)
		return e & LOW32; /* never: the caller counted */
	while (k < n && l[k] > len)
		k++;
	memmove(l + k + 1, l + k, (size_t)(n - k));
	l[k] = len;
	return entry_make((uint32_t)e, l, n + 1);
}

/* The entry of /19 b with its lengths found again from the counts. */
static uint64_t entry_scan(const struct fib6 *f, uint32_t b)
{
	uint8_t l[FPMD_V6_DIRECT_LENS];
	int n = 0;

	if (f->dlens[b] > FPMD_V6_DIRECT_LENS)
		return f->dent[b] & LOW32; /* bisect */
	for (int len = 128; len > FPMD_V6_DIRECT_PLEN && n < f->dlens[b]; len--)
		if (count_find(f, b << 8 | (uint32_t)len))
			l[n++] = (uint8_t)len;
	return entry_make((uint32_t)f->dent[b], l, n);
}

static void entry_store(struct fib6 *f, uint32_t b, uint64_t e)
{
	f->dent[b] = e;
	if (f->lens->direct[b] == e)
		return;
	__atomic_store_n(&f->lens->direct[b], e, __ATOMIC_RELEASE);
	f->direct_writes++;
}

/* Length len (> 19) got its first route (delta 1) or lost its last (-1)
 * in /19 b: its list, or bisection past FPMD_V6_DIRECT_LENS lengths. */
static void lens_change(struct fib6 *f, uint32_t b, uint8_t len, int delta)
{
	uint8_t l[FPMD_V6_DIRECT_LENS + 1];
	uint64_t e = f->dent[b];
	int n, k = 0;

	f->dlens[b] = (uint8_t)(f->dlens[b] + delta);
	if (f->dlens[b] > FPMD_V6_DIRECT_LENS) {
		entry_store(f, b, e & LOW32);
		return;
	}
	if (delta < 0 && f->dlens[b] == FPMD_V6_DIRECT_LENS) {
		entry_store(f, b, entry_scan(f, b)); /* from bisection */
		return;
	}
	if (delta > 0) {
		entry_store(f, b, entry_insert(e, len));
		return;
	}
	n = entry_lens(e, l);
	while (k < n && l[k] != len)
		k++;
	if (k < n) {
		memmove(l + k, l + k + 1, (size_t)(n - k - 1));
		n--;
	}
	entry_store(f, b, entry_make((uint32_t)e, l, n));
}

/* Count a route of length len (> 19) in /19 b; false without memory. */
static bool count_route(struct fib6 *f, uint32_t b, uint8_t len, int delta)
{
	uint32_t key = b << 8 | len;
	struct dcount *c = count_find(f, key);

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
		return true;
	}
	if (c && !--c->n) {
		ht_remove(&f->dcount, &c->node);
		free(c);
		return true;
	}
	return c != NULL;
}

/* The counts of /19 b can no longer be trusted: bisect from now on. */
static void stuck(struct fib6 *f, uint32_t b)
{
	f->dlens[b] = DSTUCK;
	entry_store(f, b, f->dent[b] & LOW32);
}

static void set_val(struct fib6 *f, uint32_t b, uint32_t val)
{
	entry_store(f, b, (f->dent[b] & ~LOW32) | val);
}

void fib6_direct_add(struct fib6 *f, const uint8_t *p, uint8_t len,
		     uint32_t val, bool added)
{
	uint32_t first, n = buckets_of(p, len, &first);

	if (!n || !f->dent)
		return;
	if (len <= FPMD_V6_DIRECT_PLEN) {
		/* Over the /19s where it is the longest of its kind. */
		for (uint32_t b = first; b < first + n; b++) {
			if (f->dsrc[b] > len + 1)
				continue;
			f->dsrc[b] = (uint8_t)(len + 1);
			set_val(f, b, val);
		}
		return;
	}
	if (!added || f->dlens[first] == DSTUCK)
		return; /* a new value: in its slot already */
	if (!count_route(f, first, len, 1)) {
		stuck(f, first);
		return;
	}
	if (count_find(f, first << 8 | len)->n == 1)
		lens_change(f, first, len, 1);
}

void fib6_direct_del(struct fib6 *f, const uint8_t *p, uint8_t len)
{
	uint32_t first, n = buckets_of(p, len, &first), val = 0;
	int clen = -1;

	if (!n || !f->dent)
		return;
	if (len <= FPMD_V6_DIRECT_PLEN) {
		/* Its /19s go to the route that covered it. */
		if (len)
			val = fib6_best(f, p, len - 1, &clen);
		for (uint32_t b = first; b < first + n; b++) {
			if (f->dsrc[b] != len + 1)
				continue;
			f->dsrc[b] = (uint8_t)(val ? clen + 1 : 0);
			set_val(f, b, val);
		}
		return;
	}
	if (f->dlens[first] == DSTUCK)
		return;
	if (!count_route(f, first, len, -1)) {
		stuck(f, first); /* never: the route was counted */
		return;
	}
	if (!count_find(f, first << 8 | len))
		lens_change(f, first, len, -1);
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
	free(f->dent);
	free(f->dsrc);
	free(f->dlens);
	f->dent = NULL;
	f->dsrc = f->dlens = NULL;
}

static int add_route(const uint8_t addr[16], uint8_t len, uint32_t val,
		     void *arg)
{
	struct fib6 *f = arg;
	uint32_t first, n = buckets_of(addr, len, &first);

	if (!n)
		return 0;
	if (len <= FPMD_V6_DIRECT_PLEN) {
		for (uint32_t b = first; b < first + n; b++) {
			if (f->dsrc[b] > len + 1)
				continue;
			f->dsrc[b] = (uint8_t)(len + 1);
			f->dent[b] = val;
		}
		return 0;
	}
	if (f->dlens[first] == DSTUCK)
		return 0;
	if (!count_route(f, first, len, 1))
		f->dlens[first] = DSTUCK;
	else if (count_find(f, first << 8 | len)->n == 1)
		f->dlens[first]++;
	return 0;
}

/*
 * Every entry from the routes fpmd has (none, or those adopted), written
 * where lens_v6 holds something else: nothing after a clean restart.
 */
int fib6_direct_open(struct fib6 *f)
{
	struct hnode *n, *tmp;
	size_t i;

	f->dent = calloc(FPMD_V6_DIRECT, sizeof(*f->dent));
	f->dsrc = calloc(FPMD_V6_DIRECT, 1);
	f->dlens = calloc(FPMD_V6_DIRECT, 1);
	if (!f->dent || !f->dsrc || !f->dlens || ht_init(&f->dcount, 1024)) {
		fib6_direct_close(f);
		return -ENOMEM;
	}
	fib6_foreach(f, add_route, f);
	for (uint32_t b = 0; b < FPMD_V6_DIRECT; b++)
		if (f->dlens[b] <= FPMD_V6_DIRECT_LENS)
			f->dent[b] = entry_make((uint32_t)f->dent[b], NULL, 0);
	ht_for_each(&f->dcount, n, tmp, i)
	{
		struct dcount *c = container_of(n, struct dcount, node);
		uint32_t b = c->key >> 8;

		if (f->dlens[b] <= FPMD_V6_DIRECT_LENS)
			f->dent[b] = entry_insert(f->dent[b], (uint8_t)c->key);
	}
	for (uint32_t b = 0; b < FPMD_V6_DIRECT; b++)
		entry_store(f, b, f->dent[b]);
	return 0;
}
