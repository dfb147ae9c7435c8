/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Route tables for the lookup benchmarks (tests/bench_lookup.c), made by
 * rules a compressed FIB cannot collapse trivially (issue 16):
 *
 * - deterministic: splitmix64 from TG_SEED, so every run measures the
 *   same tables, and a smaller table is the first part of a larger one
 *   (the list is shuffled, as BGP sends routes in no particular order);
 * - IPv4: a BGP-like length mix (tg_v4_mix: ~58 % /24, ~35 % /16-/23, the
 *   rest /8-/15) plus 1.4 % /25-/32, which nest in clusters (about three
 *   per /24, so 1M routes need ~5000 tbl8 groups, not 14000) under
 *   shorter routes of the table, as deaggregates do;
 * - IPv6: mostly /48 and /32-/64 under 2000::/3 (tg_v6_mix);
 * - every route goes via one of TG_NEXTHOPS nexthops, drawn at random,
 *   or (one route in TG_GROUP_ONE_IN) via one of TG_GROUPS ECMP groups of
 *   2 to 4 of those nexthops (tg_group_size, tg_group_member).
 *
 * tg_lookup() is the oracle: the longest match of an address among the
 * first n routes, from a hash of (prefix, length) probed longest first.
 * tests/bench_memory.py feeds fpmd tables made by the same rules.
 */
#ifndef FPMD_TESTS_TABLEGEN_H
#define FPMD_TESTS_TABLEGEN_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "tool.h"

#define TG_SEED 0x66706d64u /* "fpmd" */
#define TG_NEXTHOPS 64	    /* distinct gateways per family */
#define TG_GROUPS 8	    /* ECMP groups per family */
#define TG_GROUP_ONE_IN 16  /* routes via a group: 1 in 16 */
#define TG_GROUP_MAX 4	    /* members per group, at most */
#define TG_CLUSTER_NEW 3    /* 1 in 3 /25-/32s starts a new /24 */

struct tg_route {
	uint8_t addr[16]; /* network order; IPv4 in the first 4 bytes */
	uint8_t len;
	uint16_t nh; /* < TG_NEXTHOPS: a nexthop; else group nh - TG_NEXTHOPS */
};

struct tg_slot {
	uint64_t hi; /* first 64 bits of the prefix (IPv6 routes are <= /64) */
	uint32_t idx1; /* route index + 1; 0: empty */
	uint8_t len;
};

struct tg_table {
	int af, alen;
	struct tg_route *r;
	size_t n;
	struct tg_slot *h; /* every route, by (prefix, length) */
	size_t hmask;
	uint8_t used[65]; /* prefix lengths present */
};

struct tg_len_weight {
	int len, w;
};

/* Prefix length mix in 1/10000. Short lengths are capped at 3/4 of the
 * prefixes that exist (only ~221 unicast /8s), the rest going to the
 * first, most common length: print the actual mix (tg_print_mix). */
static const struct tg_len_weight tg_v4_mix[] = {
	{ 24, 5860 }, { 23, 900 }, { 22, 1100 }, { 21, 500 }, { 20, 450 },
	{ 19, 250 },  { 18, 130 }, { 17, 70 },	 { 16, 100 }, { 15, 140 },
	{ 14, 110 },  { 13, 80 },  { 12, 60 },	 { 11, 50 },  { 10, 30 },
	{ 9, 20 },    { 8, 10 },
	/* longer than /24: 1.4 %, nested (tg_gen); the weights of
	 * tests/fibproto/fibgen.h */
	{ 25, 30 },   { 26, 20 },  { 27, 20 },	 { 28, 20 },  { 29, 15 },
	{ 30, 20 },   { 32, 15 },
};

static const struct tg_len_weight tg_v6_mix[] = {
	{ 48, 5000 }, { 32, 1200 }, { 33, 100 }, { 34, 100 },
	{ 35, 100 },  { 36, 300 },  { 40, 600 }, { 44, 800 },
	{ 46, 200 },  { 47, 200 },  { 56, 600 }, { 64, 800 },
};

#define TG_NMIX(m) (sizeof(m) / sizeof((m)[0]))

/* splitmix64 */
static uint64_t tg_rng = TG_SEED;

/* splitmix64's output for state x (the state then advances by the same
 * constant); also the route file's key hash (tg_key_nh). */
static uint64_t tg_splitmix(uint64_t x)
{
	uint64_t z = x + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t tg_rnd(void)
{
	uint64_t z = tg_splitmix(tg_rng);

	tg_rng += 0x9e3779b97f4a7c15ull;
	return z;
}

static uint64_t tg_mask(int len)
{
	return len ? ~0ull << (64 - len) : 0;
}

static uint64_t tg_hi64(const uint8_t *a, int alen)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | (i < alen ? a[i] : 0);
	return v;
}

static void tg_put_hi64(uint8_t *a, int alen, uint64_t v)
{
	for (int i = 0; i < 8 && i < alen; i++)
		a[i] = v >> (56 - 8 * i);
}

/* Unicast first octets: not 0/8, 10/8 (the tests' subnets), 127/8, 224/3. */
static int tg_v4_octet_ok(unsigned o)
{
	return o >= 1 && o <= 223 && o != 10 && o != 127;
}

/* 169.254/16 is link-local: no route may cover it or lie inside it. */
static int tg_v4_linklocal(uint64_t hi, int len)
{
	int l = len < 16 ? len : 16;

	return (hi & tg_mask(l)) == (0xa9feull << 48 & tg_mask(l));
}

static uint64_t tg_random_prefix(int af, int len)
{
	uint64_t hi;
	unsigned o;

	if (af != AF_INET) /* 2000::/3 */
		return (0x2ull << 60 | (tg_rnd() >> 3)) & tg_mask(len);
	do {
		do
			o = tg_rnd() % 224;
		while (!tg_v4_octet_ok(o));
		hi = ((uint64_t)o << 56 | (tg_rnd() & 0x00ffffffull) << 32) &
		     tg_mask(len);
	} while (tg_v4_linklocal(hi, len));
	return hi;
}

static size_t tg_slot_of(const struct tg_table *t, uint64_t hi, int len)
{
	uint64_t k = hi ^ (uint64_t)len * 0x9e3779b97f4a7c15ull;
	size_t i = (k ^ k >> 29) * 0xbf58476d1ce4e5b9ull >> 32 & t->hmask;

	while (t->h[i].idx1 && (t->h[i].hi != hi || t->h[i].len != len))
		i = (i + 1) & t->hmask;
	return i;
}

/* Record (hi, len) as route idx; 0 if the prefix is already there. */
static int tg_add(struct tg_table *t, uint64_t hi, int len, size_t idx)
{
	size_t i = tg_slot_of(t, hi, len);

	if (t->h[i].idx1)
		return 0;
	t->h[i] = (struct tg_slot){ hi, (uint32_t)idx + 1, (uint8_t)len };
	return 1;
}

/* A /25-/32 in a cluster under a route of at most /24 among r[0, k). */
static uint64_t tg_nested(struct tg_table *t, size_t k, int len, uint64_t *base)
{
	for (int tries = 0;; tries++) {
		uint64_t hi;

		if (!*base || tries > 8 || tg_rnd() % TG_CLUSTER_NEW == 0) {
			const struct tg_route *p;

			do
				p = &t->r[tg_rnd() % k];
			while (p->len > 24);
			*base =
			    (tg_hi64(p->addr, 4) & tg_mask(p->len)) |
			    ((tg_rnd() << 32) & ~tg_mask(p->len) & tg_mask(24));
		}
		hi = (*base | (tg_rnd() & 0xffull) << 32) & tg_mask(len);
		if (tg_add(t, hi, len, k))
			return hi;
	}
}

/* n routes: the mix, shuffled, each with a random nexthop. */
static void tg_gen(struct tg_table *t, int af, size_t n,
		   const struct tg_len_weight *mix, size_t nmix)
{
	size_t cnt[nmix], total = 0, k = 0, nlong = 0;
	int *longs;
	uint64_t base = 0;

	memset(t, 0, sizeof(*t));
	t->af = af;
	t->alen = af == AF_INET ? 4 : 16;
	t->r = calloc(n, sizeof(*t->r));
	t->hmask = 1;
	while (t->hmask < 2 * n)
		t->hmask <<= 1;
	t->h = calloc(t->hmask, sizeof(*t->h));
	t->hmask--;
	if (!t->r || !t->h)
		die("out of memory for %zu routes", n);

	for (size_t i = 0; i < nmix; i++) {
		size_t avail = (size_t)-1;

		if (af == AF_INET && mix[i].len < 24)
			avail = (size_t)221 << (mix[i].len - 8);
		cnt[i] = (uint64_t)n * mix[i].w / 10000;
		if (cnt[i] > avail / 4 * 3)
			cnt[i] = avail / 4 * 3;
		total += cnt[i];
		if (af == AF_INET && mix[i].len > 24)
			nlong += cnt[i];
	}
	cnt[0] += n - total; /* mix[0] is the most common length */

	for (size_t i = 0; i < nmix; i++) {
		if (af == AF_INET && mix[i].len > 24)
			continue;
		for (size_t c = 0; c < cnt[i]; c++) {
			uint64_t hi;

			do
				hi = tg_random_prefix(af, mix[i].len);
			while (!tg_add(t, hi, mix[i].len, k));
			tg_put_hi64(t->r[k].addr, t->alen, hi);
			t->r[k++].len = mix[i].len;
		}
	}
	/* The longer ones last, in shuffled length order (a cluster mixes
	 * lengths), under the routes made so far. */
	longs = calloc(nlong + 1, sizeof(*longs));
	if (!longs)
		die("out of memory");
	for (size_t i = 0, j = 0; i < nmix; i++)
		if (af == AF_INET && mix[i].len > 24)
			for (size_t c = 0; c < cnt[i]; c++)
				longs[j++] = mix[i].len;
	for (size_t i = nlong; i > 1; i--) {
		size_t j = tg_rnd() % i;
		int x = longs[i - 1];

		longs[i - 1] = longs[j];
		longs[j] = x;
	}
	for (size_t i = 0; i < nlong; i++) {
		uint64_t hi = tg_nested(t, k, longs[i], &base);

		tg_put_hi64(t->r[k].addr, t->alen, hi);
		t->r[k++].len = longs[i];
	}
	free(longs);

	for (size_t i = n - 1; i > 0; i--) {
		size_t j = tg_rnd() % (i + 1);
		struct tg_route x = t->r[i];

		t->r[i] = t->r[j];
		t->r[j] = x;
	}
	t->n = n;
	/* The hash was filled before the shuffle: index it again. */
	memset(t->h, 0, (t->hmask + 1) * sizeof(*t->h));
	for (size_t i = 0; i < n; i++) {
		t->r[i].nh = tg_rnd() % TG_NEXTHOPS;
		if (tg_rnd() % TG_GROUP_ONE_IN == 0)
			t->r[i].nh = TG_NEXTHOPS + tg_rnd() % TG_GROUPS;
		tg_add(t, tg_hi64(t->r[i].addr, t->alen), t->r[i].len, i);
		t->used[t->r[i].len] = 1;
	}
}

/*
 * A route file instead of the generator (--routes FILE): one "PREFIX KEY"
 * per line, IPv4 and IPv6 mixed, '#' comments; scripts/route-table.py
 * makes one from public routing data, in BGP-like (shuffled) order, so
 * the first n routes of a family are its table of size n. The nexthop key
 * (an origin AS, say) is mapped onto the generator's nexthops and groups
 * by its hash alone, so the same key is the same nexthop in every
 * benchmark (tests/lib/routefile.py maps keys the same way): one key in
 * TG_GROUP_ONE_IN goes via a group. Lines of the other family are
 * skipped, and so are IPv6 routes longer than /64 (tg_lookup's limit;
 * the global table filters beyond /48 anyway), duplicates, and routes
 * inside 10.0.0.0/8 or fd00::/8 (the benchmarks' own subnets).
 */
static uint16_t tg_key_nh(const char *key)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64 */

	for (const unsigned char *c = (const unsigned char *)key; *c; c++)
		h = (h ^ *c) * 0x100000001b3ull;
	h = tg_splitmix(h);
	if ((h >> 32) % TG_GROUP_ONE_IN == 0)
		return TG_NEXTHOPS + (h >> 40) % TG_GROUPS;
	return h % TG_NEXTHOPS;
}

struct tg_load_stats {
	size_t lines, other_af, too_long, dup, own;
};

static void tg_load(struct tg_table *t, int af, const char *path,
		    struct tg_load_stats *st)
{
	size_t cap = 1024, lineno = 0;
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		die("%s: %s", path, strerror(errno));
	memset(t, 0, sizeof(*t));
	memset(st, 0, sizeof(*st));
	t->af = af;
	t->alen = af == AF_INET ? 4 : 16;
	t->r = malloc(cap * sizeof(*t->r));
	if (!t->r)
		die("out of memory");
	while (fgets(line, sizeof(line), f)) {
		char pfx[256], key[128], *slash;
		uint8_t a[16] = { 0 };
		unsigned long len;
		uint64_t hi;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%255s %127s", pfx, key) != 2 ||
		    !(slash = strchr(pfx, '/')))
			die("%s:%zu: want \"PREFIX/LEN KEY\"", path, lineno);
		*slash = 0;
		len = strtoul(slash + 1, NULL, 10);
		st->lines++;
		if (inet_pton(af, pfx, a) != 1) {
			uint8_t b[16];

			if (inet_pton(af == AF_INET ? AF_INET6 : AF_INET, pfx,
				      b) != 1)
				die("%s:%zu: bad prefix %s", path, lineno, pfx);
			st->other_af++;
			continue;
		}
		if (len > (af == AF_INET ? 32u : 128u))
			die("%s:%zu: bad length /%lu", path, lineno, len);
		if (len > 64) {
			st->too_long++;
			continue;
		}
		if ((af == AF_INET && a[0] == 10) || (af != AF_INET && a[0] == 0xfd)) {
			st->own++;
			continue;
		}
		hi = tg_hi64(a, t->alen) & tg_mask((int)len);
		if (t->n == cap) {
			cap *= 2;
			t->r = realloc(t->r, cap * sizeof(*t->r));
			if (!t->r)
				die("out of memory");
		}
		memset(&t->r[t->n], 0, sizeof(t->r[t->n]));
		tg_put_hi64(t->r[t->n].addr, t->alen, hi);
		t->r[t->n].len = (uint8_t)len;
		t->r[t->n].nh = tg_key_nh(key);
		t->n++;
	}
	fclose(f);
	t->hmask = 1;
	while (t->hmask < 2 * t->n)
		t->hmask <<= 1;
	t->h = calloc(t->hmask, sizeof(*t->h));
	t->hmask--;
	if (!t->h)
		die("out of memory");
	/* Index them, dropping repeats (the first stays). */
	size_t k = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct tg_route r = t->r[i];

		if (!tg_add(t, tg_hi64(r.addr, t->alen), r.len, k)) {
			st->dup++;
			continue;
		}
		t->r[k++] = r;
		t->used[r.len] = 1;
	}
	t->n = k;
	if (!t->n)
		die("%s: no %s routes", path, af == AF_INET ? "IPv4" : "IPv6");
}

/* ECMP group g (0 .. TG_GROUPS - 1): 2, 3 or 4 distinct nexthops. */
static int tg_group_size(int g)
{
	return 2 + g % 3;
}

static int tg_group_member(int g, int i)
{
	return (g * 7 + i * 13) % TG_NEXTHOPS; /* 13 i distinct mod 64 */
}

/* The nexthops of route value nh (one, or a group's members); count. */
static int tg_members(uint16_t nh, int out[TG_GROUP_MAX])
{
	int g = nh - TG_NEXTHOPS;

	if (nh < TG_NEXTHOPS) {
		out[0] = nh;
		return 1;
	}
	for (int i = 0; i < tg_group_size(g); i++)
		out[i] = tg_group_member(g, i);
	return tg_group_size(g);
}

static void tg_free(struct tg_table *t)
{
	free(t->r);
	free(t->h);
	t->r = NULL;
	t->h = NULL;
}

/* The longest match of addr among routes [0, n): its index, or -1. */
static long tg_lookup(const struct tg_table *t, const uint8_t *addr, size_t n)
{
	uint64_t a = tg_hi64(addr, t->alen);

	for (int len = 64; len >= 0; len--) {
		size_t i;

		if (!t->used[len])
			continue;
		i = tg_slot_of(t, a & tg_mask(len), len);
		if (t->h[i].idx1 && t->h[i].idx1 <= n)
			return (long)t->h[i].idx1 - 1;
	}
	return -1;
}

/* A random host address inside route r. */
static void tg_random_dest(const struct tg_table *t, const struct tg_route *r,
			   uint8_t *dst)
{
	for (int i = 0; i < t->alen; i++) {
		int bits = r->len - 8 * i;
		uint8_t pmask = bits >= 8   ? 0xff
				: bits <= 0 ? 0
					    : 0xff << (8 - bits);

		dst[i] = (r->addr[i] & pmask) | (tg_rnd() & ~pmask);
	}
}

/* Share of routes [0, n) in each length class, for the mix line. */
struct tg_mix_share {
	double a, b, c, d; /* IPv4: /24, /16-/23, /8-/15, /25-/32;
			      IPv6: /48, /32-/47, /49-/64, - */
};

static struct tg_mix_share tg_mix(const struct tg_table *t, size_t n)
{
	size_t a = 0, b = 0, c = 0, d = 0;

	for (size_t i = 0; i < n; i++) {
		int l = t->r[i].len;

		if (t->af == AF_INET)
			l == 24 ? a++ : l > 24 ? d++ : l >= 16 ? b++ : c++;
		else
			l == 48 ? a++ : l < 48 ? b++ : c++;
	}
	return (struct tg_mix_share){ 100.0 * a / n, 100.0 * b / n,
				      100.0 * c / n, 100.0 * d / n };
}

#endif
