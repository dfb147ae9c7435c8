/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A BGP-like IPv4 route table for the lookup benchmarks (issue 16 item 2):
 * tests/bench_lookup.c's prefix-length mix plus 1.4 % of /25-/32, and
 * route values drawn at random from nnh distinct nexthops (>= 64: one
 * nexthop would let any compressed FIB collapse the table to nothing).
 *
 *   struct fg_route *r = calloc(n, sizeof(*r));
 *   fg_gen(r, n, 64, seed);       // unique prefixes, in random order
 *   fg_dest(&r[i], &st)           // a random address inside route i
 *
 * Header only, no dependency beyond libc, so any tool can include it.
 */
#ifndef FPMD_FIBGEN_H
#define FPMD_FIBGEN_H

#include <stdint.h>
#include <stdlib.h>

struct fg_route {
	uint32_t addr; /* host order, masked to len */
	uint32_t len;
	uint32_t nh; /* 0 .. nnh - 1 */
};

/* Prefix length mix in 1/10000 (bench_lookup's v4_mix, /24 lowered by
 * the 140 of /25-/32). Short lengths are capped at 3/4 of the prefixes
 * that exist (~221 unicast /8s); the rest goes to /24. */
static const struct {
	int len, w;
} fg_v4_mix[] = {
	{ 24, 5860 }, { 23, 900 }, { 22, 1100 }, { 21, 500 }, { 20, 450 },
	{ 19, 250 },  { 18, 130 }, { 17, 70 },	 { 16, 100 }, { 15, 140 },
	{ 14, 110 },  { 13, 80 },  { 12, 60 },	 { 11, 50 },  { 10, 30 },
	{ 9, 20 },    { 8, 10 },   { 25, 30 },	 { 26, 20 },  { 27, 20 },
	{ 28, 20 },   { 29, 15 },  { 30, 20 },	 { 32, 15 },
};

#define FG_NMIX (sizeof(fg_v4_mix) / sizeof(fg_v4_mix[0]))

static inline uint64_t fg_rnd(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static inline uint32_t fg_mask(int len)
{
	return len ? ~0u << (32 - len) : 0;
}

/* Unicast first octets: not 0/8, 10/8 (the tests' subnets), 127/8, 224/3;
 * and nothing over or in 169.254/16 (link-local). */
static inline int fg_prefix_ok(uint32_t a, int len)
{
	unsigned o = a >> 24;
	int l = len < 16 ? len : 16;

	if (o < 1 || o > 223 || o == 10 || o == 127)
		return 0;
	return (a & fg_mask(l)) != (0xa9fe0000u & fg_mask(l));
}

/* Fills r[0..n) with n unique prefixes; returns n (0: out of memory). */
static inline size_t fg_gen(struct fg_route *r, size_t n, unsigned nnh,
			    uint64_t seed)
{
	size_t cnt[FG_NMIX], total = 0, k = 0, mask = 1;
	uint64_t s = seed | 1, *seen;

	while (mask < 2 * n)
		mask <<= 1;
	seen = calloc(mask, sizeof(*seen));
	if (!seen)
		return 0;
	mask--;
	for (size_t i = 0; i < FG_NMIX; i++) {
		size_t avail = (size_t)-1;

		if (fg_v4_mix[i].len < 24)
			avail = (size_t)221 << (fg_v4_mix[i].len - 8);
		cnt[i] = (uint64_t)n * fg_v4_mix[i].w / 10000;
		if (cnt[i] > avail / 4 * 3)
			cnt[i] = avail / 4 * 3;
		total += cnt[i];
	}
	cnt[0] += n - total; /* fg_v4_mix[0] is the most common length */
	for (size_t i = 0; i < FG_NMIX; i++) {
		int len = fg_v4_mix[i].len;

		for (size_t c = 0; c < cnt[i]; c++) {
			uint32_t a;
			uint64_t key;
			size_t h;

			for (;;) {
				a = (uint32_t)fg_rnd(&s) & fg_mask(len);
				if (!fg_prefix_ok(a, len))
					continue;
				key = ((uint64_t)a << 8 | len) + 1;
				h = (key * 0xbf58476d1ce4e5b9ull) >> 32 & mask;
				while (seen[h] && seen[h] != key)
					h = (h + 1) & mask;
				if (!seen[h])
					break;
			}
			seen[h] = key;
			r[k].addr = a;
			r[k].len = len;
			r[k++].nh = fg_rnd(&s) % nnh;
		}
	}
	free(seen);
	/* BGP sends routes in no particular order. */
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = fg_rnd(&s) % (i + 1);
		struct fg_route t = r[i];

		r[i] = r[j];
		r[j] = t;
	}
	return n;
}

/* A random address inside route r. */
static inline uint32_t fg_dest(const struct fg_route *r, uint64_t *s)
{
	return r->addr | ((uint32_t)fg_rnd(s) & ~fg_mask(r->len));
}

#endif
