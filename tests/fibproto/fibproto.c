// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The compact-FIB prototype (issue 16 item 1, doc/fib-compact.md), run by
 * hand as root, not part of make check:
 *
 *   make tests/fibproto/fibproto && tests/fibproto/fibproto [--quick]
 *
 * For each table size (10, 10k, 100k, 1M routes of tests/fibproto/fibgen.h,
 * 64 nexthops) it builds, from one shadow DIR-24-8 (u32 per /24 + tbl8
 * groups, with the prefix length of each entry), three lookup structures:
 * DIR-24-8 itself, Poptrie (s = 18, strides 6/6/2, leaf runs compressed)
 * and DXR (D16R: ranges per /16, binary search), each in two layouts: one
 * big mmapable BPF array per table (vmalloc, 4 KiB pages) and an
 * ARRAY_OF_MAPS of 16 KiB chunks (kmalloc). It checks every program's
 * answers against the shadow, then times them interleaved, round by
 * round, with destinations spread over the table and hot (one address):
 * BPF_PROG_TEST_RUN of a program that looks up FP_BATCH destinations per
 * run (bpf_loop); ns per lookup = run time / FP_BATCH, and "net" takes
 * off the same loop with no lookup (fp_null). At 1M it also times the
 * full builds and incremental updates (shadow + rebuilding each changed
 * chunk aside, as an in-place writer would).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fibgen.h"
#include "fibproto.h"
#include "fibproto.skel.h"
#include "../tool.h"

#define NNH 64
#define NDST_BLK 4096 /* 256k spread destinations */

/* --- the shadow DIR-24-8: value and prefix length + 1 per entry --- */

static uint32_t *t24, *t8;
static uint8_t *l24, *l8;
static uint32_t ng, gcap, *gfree, ngfree;

/* Prefix store: (addr << 8 | len) + 1 -> value, linear probing. */
static uint64_t *hk;
static uint32_t *hv;
static size_t hmask;
static unsigned lencnt[33];

static size_t h_slot(uint64_t k)
{
	return (k * 0x9e3779b97f4a7c15ull) >> 20 & hmask;
}

static uint32_t *h_find(uint32_t a, int len)
{
	uint64_t k = ((uint64_t)a << 8 | len) + 1;

	for (size_t i = h_slot(k);; i = (i + 1) & hmask) {
		if (hk[i] == k)
			return &hv[i];
		if (!hk[i])
			return NULL;
	}
}

static int h_add(uint32_t a, int len, uint32_t v)
{
	uint64_t k = ((uint64_t)a << 8 | len) + 1;
	size_t i;

	for (i = h_slot(k); hk[i]; i = (i + 1) & hmask)
		if (hk[i] == k)
			return 0;
	hk[i] = k;
	hv[i] = v;
	lencnt[len]++;
	return 1;
}

static void h_del(uint32_t a, int len)
{
	uint64_t k = ((uint64_t)a << 8 | len) + 1;
	size_t i = h_slot(k), j;

	while (hk[i] != k)
		i = (i + 1) & hmask;
	lencnt[len]--;
	/* Backward-shift deletion. */
	for (j = i;;) {
		j = (j + 1) & hmask;
		if (!hk[j])
			break;
		size_t h = h_slot(hk[j]);

		if ((j > i && (h <= i || h > j)) ||
		    (j < i && h <= i && h > j)) {
			hk[i] = hk[j];
			hv[i] = hv[j];
			i = j;
		}
	}
	hk[i] = 0;
}

static void shadow_reset(size_t nroutes)
{
	free(t24), free(l24), free(t8), free(l8), free(gfree), free(hk),
	    free(hv);
	t24 = calloc(1u << 24, 4);
	l24 = calloc(1u << 24, 1);
	gcap = 1024;
	t8 = malloc((size_t)gcap * 256 * 4);
	l8 = malloc((size_t)gcap * 256);
	gfree = malloc(gcap * 4);
	ng = ngfree = 0;
	hmask = 1;
	while (hmask < 4 * nroutes + 64)
		hmask <<= 1;
	hk = calloc(hmask, 8);
	hv = calloc(hmask, 4);
	hmask--;
	memset(lencnt, 0, sizeof(lencnt));
	if (!t24 || !l24 || !t8 || !l8 || !gfree || !hk || !hv)
		die("out of memory");
}

static uint32_t group_new(uint32_t i24)
{
	uint32_t g;

	if (ngfree) {
		g = gfree[--ngfree];
	} else {
		if (ng == gcap) {
			gcap *= 2;
			t8 = realloc(t8, (size_t)gcap * 256 * 4);
			l8 = realloc(l8, (size_t)gcap * 256);
			gfree = realloc(gfree, gcap * 4);
			if (!t8 || !l8 || !gfree)
				die("out of memory");
		}
		g = ng++;
	}
	for (int k = 0; k < 256; k++) {
		t8[g * 256 + k] = t24[i24];
		l8[g * 256 + k] = l24[i24];
	}
	t24[i24] = FP_T8 | g;
	return g;
}

/* Paint [a, a + 2^(32-len)) with v where the owner is not longer than
 * len (add), or where the owner is exactly len with (v, nl) (delete). */
static void paint(uint32_t a, int len, uint32_t v, int l1, int only)
{
	if (len <= 24) {
		uint32_t i0 = a >> 8, n = 1u << (24 - len);

		for (uint32_t i = i0; i < i0 + n; i++) {
			if (t24[i] & FP_T8) {
				uint32_t g = t24[i] & ~FP_T8;

				for (int k = 0; k < 256; k++) {
					uint8_t *l = &l8[g * 256 + k];

					if (only ? *l == only : *l <= l1) {
						t8[g * 256 + k] = v;
						*l = l1;
					}
				}
				if (only ? l24[i] == only : l24[i] <= l1)
					l24[i] = l1;
			} else if (only ? l24[i] == only : l24[i] <= l1) {
				t24[i] = v;
				l24[i] = l1;
			}
		}
		return;
	}
	uint32_t i24 = a >> 8, g;

	g = t24[i24] & FP_T8 ? t24[i24] & ~FP_T8 : group_new(i24);
	for (uint32_t k = a & 0xff; k < (a & 0xff) + (1u << (32 - len)); k++) {
		uint8_t *l = &l8[g * 256 + k];

		if (only ? *l == only : *l <= l1) {
			t8[g * 256 + k] = v;
			*l = l1;
		}
	}
	if (only) {
		/* Back to one value when no /25+ is left in the /24. */
		for (int k = 0; k < 256; k++)
			if (l8[g * 256 + k] > 25)
				return;
		t24[i24] = t8[g * 256];
		gfree[ngfree++] = g;
	}
}

static int shadow_add(uint32_t a, int len, uint32_t v)
{
	if (!h_add(a, len, v))
		return 0;
	paint(a, len, v, len + 1, 0);
	return 1;
}

static void shadow_del(uint32_t a, int len)
{
	uint32_t cv = 0;
	int cl = 0;

	h_del(a, len);
	for (int l = len - 1; l >= 0; l--) {
		uint32_t *p;

		if (!lencnt[l])
			continue;
		p = h_find(a & fg_mask(l), l);
		if (p) {
			cv = *p;
			cl = l + 1;
			break;
		}
	}
	paint(a, len, cv, cl, len + 1);
}

static uint32_t shadow_lookup(uint32_t a)
{
	uint32_t e = t24[a >> 8];

	return e & FP_T8 ? t8[(e & ~FP_T8) * 256 + (a & 0xff)] : e;
}

/* --- growable arrays with a bump allocator (garbage is counted) --- */

struct vec {
	void *p;
	size_t n, cap, esz, garbage;
};

static uint32_t vec_alloc(struct vec *v, size_t n)
{
	size_t at = v->n;

	if (v->n + n > v->cap) {
		while (v->n + n > v->cap)
			v->cap = v->cap ? v->cap * 2 : 4096;
		v->p = realloc(v->p, v->cap * v->esz);
		if (!v->p)
			die("out of memory");
	}
	v->n += n;
	return at;
}

/* --- Poptrie, s = 18 --- */

static uint32_t *pd;	  /* 2^18 direct entries */
static uint32_t *pd_size; /* nodes + leaves behind each, for garbage */
static struct vec pn = { .esz = sizeof(struct fp_node) };
static struct vec pl = { .esz = 2 };

#define PN(i) (((struct fp_node *)pn.p)[i])
#define PL(i) (((uint16_t *)pl.p)[i])

/* Child c of a node at level lvl over /24 index or group g, offset off. */
static int pop_child(int lvl, uint32_t x, uint32_t off, int c, uint32_t *v)
{
	if (lvl == 0) {
		uint32_t e = t24[x << 6 | c];

		*v = e;
		return !!(e & FP_T8);
	}
	if (lvl == 1) {
		const uint32_t *e = &t8[x * 256 + c * 4];

		*v = e[0];
		return e[1] != e[0] || e[2] != e[0] || e[3] != e[0];
	}
	*v = t8[x * 256 + off + c];
	return 0;
}

static size_t pop_node(uint32_t idx, int lvl, uint32_t x, uint32_t off)
{
	int nc = lvl == 2 ? 4 : 64, nl = 0, prev_leaf = 0, nint;
	uint64_t vec = 0, lvec = 0;
	uint32_t lv[64], prev = 0, b0, b1, v, xs[64], offs[64];
	size_t used;

	for (int c = 0; c < nc; c++) {
		if (pop_child(lvl, x, off, c, &v)) {
			vec |= 1ull << c;
			xs[__builtin_popcountll(vec) - 1] =
			    lvl == 0 ? v & ~FP_T8 : x;
			offs[__builtin_popcountll(vec) - 1] = c * 4;
			prev_leaf = 0;
			continue;
		}
		if (!prev_leaf || v != prev) {
			lvec |= 1ull << c;
			lv[nl++] = v;
		}
		prev_leaf = 1;
		prev = v;
	}
	nint = __builtin_popcountll(vec);
	b1 = vec_alloc(&pn, nint);
	b0 = vec_alloc(&pl, nl);
	for (int i = 0; i < nl; i++)
		PL(b0 + i) = lv[i];
	PN(idx) = (struct fp_node){ vec, lvec, b0, b1 };
	used = nint * sizeof(struct fp_node) + nl * 2;
	for (int i = 0; i < nint; i++)
		used += pop_node(b1 + i, lvl + 1, xs[i], offs[i]);
	return used;
}

/* Builds direct entry j (a /18) aside; old space becomes garbage. */
static void pop_chunk(uint32_t j)
{
	uint32_t v0 = t24[j << 6], idx;
	int uniform = !(v0 & FP_T8);

	for (int c = 1; c < 64 && uniform; c++)
		uniform = t24[j << 6 | c] == v0;
	pn.garbage += pd_size[j];
	pd_size[j] = 0;
	if (uniform) {
		pd[j] = FP_LEAF | v0;
		return;
	}
	idx = vec_alloc(&pn, 1);
	pd_size[j] = sizeof(struct fp_node) + pop_node(idx, 0, j, 0);
	pd[j] = idx; /* the one switch */
}

static void pop_build(void)
{
	free(pd), free(pd_size);
	pd = calloc(1u << FP_POP_S, 4);
	pd_size = calloc(1u << FP_POP_S, 4);
	pn.n = pl.n = pn.garbage = 0;
	for (uint32_t j = 0; j < 1u << FP_POP_S; j++)
		pop_chunk(j);
	pn.garbage = 0;
}

static uint32_t pop_lookup_c(uint32_t a)
{
	uint32_t d = pd[a >> (32 - FP_POP_S)], idx = d;

	if (d & FP_LEAF)
		return d & 0xffff;
	for (int lvl = 0; lvl < 3; lvl++) {
		struct fp_node *n = &PN(idx);
		int v = lvl == 0   ? (a >> 8) & 63
			: lvl == 1 ? (a >> 2) & 63
				   : a & 3;
		uint64_t m = ~0ull >> (63 - v);

		if ((n->vec >> v) & 1) {
			idx = n->base1 + __builtin_popcountll(n->vec & m) - 1;
			continue;
		}
		return PL(n->base0 + __builtin_popcountll(n->lvec & m) - 1);
	}
	return ~0u;
}

/* --- DXR, D16R --- */

static uint64_t *xd;
static struct vec xr = { .esz = 4 };
static uint32_t xtmp[65536 + 1];

#define XR(i) (((uint32_t *)xr.p)[i])

static void dxr_chunk(uint32_t j)
{
	uint32_t n = 0, prev = ~0u, base;

	for (uint32_t e = 0; e < 256; e++) {
		uint32_t t = t24[j << 8 | e];

		if (!(t & FP_T8)) {
			if (t != prev)
				xtmp[n++] = e << 24 | t, prev = t;
			continue;
		}
		for (uint32_t k = 0; k < 256; k++) {
			uint32_t v = t8[(t & ~FP_T8) * 256 + k];

			if (v != prev)
				xtmp[n++] = (e << 8 | k) << 16 | v, prev = v;
		}
	}
	if (!(xd[j] & FP_DXR_U))
		xr.garbage += (xd[j] >> 32) * 4;
	if (n == 1) {
		xd[j] = FP_DXR_U | (xtmp[0] & 0xffff);
		return;
	}
	base = vec_alloc(&xr, n);
	memcpy(&XR(base), xtmp, n * 4);
	xd[j] = (uint64_t)n << 32 | base;
}

static void dxr_build(void)
{
	free(xd);
	xd = calloc(1u << FP_DXR_BITS, 8);
	for (uint32_t j = 0; j < 1u << FP_DXR_BITS; j++)
		xd[j] = FP_DXR_U;
	xr.n = xr.garbage = 0;
	for (uint32_t j = 0; j < 1u << FP_DXR_BITS; j++)
		dxr_chunk(j);
}

static uint32_t dxr_lookup_c(uint32_t a)
{
	uint64_t d = xd[a >> 16];
	uint32_t key = a & 0xffff, lo = 0, hi, base;

	if (d & FP_DXR_U)
		return d & 0xffff;
	base = (uint32_t)d;
	hi = d >> 32;
	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;

		if (XR(base + mid) >> 16 <= key)
			lo = mid;
		else
			hi = mid;
	}
	return XR(base + lo) & 0xffff;
}

/* --- BPF --- */

static const char *prog_names[FP_NPROG] = {
	"floor (no lookup)", "DIR-24-8 big", "DIR-24-8 chunks", "Poptrie big",
	"Poptrie chunks",    "DXR big",	     "DXR chunks",
};

struct table {
	struct bpf_map *big, *ch;
	const void *src;
	size_t words; /* 8-byte words (for pn: nodes) */
	size_t esz;
};

static size_t words_of(size_t bytes)
{
	return (bytes + 7) / 8;
}

static void big_fill(struct bpf_map *m, const void *src, size_t bytes)
{
	size_t esz = bpf_map__value_size(m), n = bpf_map__max_entries(m);
	size_t len = (esz * n + 4095) & ~4095ul;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(m), 0);

	if (p == MAP_FAILED)
		die("mmap %s: %s", bpf_map__name(m), strerror(errno));
	memcpy(p, src, bytes);
	munmap(p, len);
}

/* Fills an ARRAY_OF_MAPS with chunks of per entries of esz bytes. */
static void ch_fill(struct bpf_map *outer, const void *src, size_t bytes,
		    size_t esz, size_t per)
{
	size_t nch = (bytes + esz * per - 1) / (esz * per);
	uint32_t *keys = malloc(per * 4), *okeys = malloc(nch * 4);
	int *fds = malloc(nch * sizeof(int));
	char *buf = calloc(per, esz);

	if (!keys || !okeys || !fds || !buf)
		die("out of memory");
	for (uint32_t i = 0; i < per; i++)
		keys[i] = i;
	for (size_t c = 0; c < nch; c++) {
		size_t off = c * per * esz, nb = bytes - off;
		__u32 cnt = per;

		if (nb > per * esz)
			nb = per * esz;
		memset(buf, 0, per * esz);
		memcpy(buf, (const char *)src + off, nb);
		fds[c] =
		    bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, esz, per, NULL);
		if (fds[c] < 0)
			die("chunk: %s", strerror(errno));
		if (bpf_map_update_batch(fds[c], keys, buf, &cnt, NULL))
			die("chunk fill: %s", strerror(errno));
		okeys[c] = c;
	}
	__u32 cnt = nch;

	if (nch &&
	    bpf_map_update_batch(bpf_map__fd(outer), okeys, fds, &cnt, NULL))
		die("outer %s: %s", bpf_map__name(outer), strerror(errno));
	for (size_t c = 0; c < nch; c++)
		close(fds[c]);
	free(keys), free(okeys), free(fds), free(buf);
}

static size_t max1(size_t n)
{
	return n ? n : 1;
}

/* Sets the sizes of every table for the current build. */
static void size_maps(struct fibproto_bpf *s)
{
	size_t t8b = (size_t)ng * 1024, pnb = pn.n * sizeof(struct fp_node);
	size_t plb = pl.n * 2, xrb = xr.n * 4;

	bpf_map__set_max_entries(s->maps.dsts, NDST_BLK);
	bpf_map__set_max_entries(s->maps.out, NDST_BLK * FP_BATCH);
	bpf_map__set_max_entries(s->maps.vals, 65536);
	bpf_map__set_max_entries(s->maps.t24, 1u << 23);
	bpf_map__set_max_entries(s->maps.t8, max1(words_of(t8b)));
	bpf_map__set_max_entries(s->maps.t24_ch,
				 (64u << 20) / (FP_CH_WORDS * 8));
	bpf_map__set_max_entries(s->maps.t8_ch,
				 max1(words_of(t8b) / FP_CH_WORDS + 1));
	bpf_map__set_max_entries(s->maps.pd, 1u << (FP_POP_S - 1));
	bpf_map__set_max_entries(s->maps.pn, max1(pn.n));
	bpf_map__set_max_entries(s->maps.pl, max1(words_of(plb)));
	bpf_map__set_max_entries(s->maps.pd_ch,
				 (1u << (FP_POP_S - 1)) / FP_CH_WORDS);
	bpf_map__set_max_entries(s->maps.pn_ch, pn.n / FP_NCH_NODES + 1);
	bpf_map__set_max_entries(s->maps.pl_ch,
				 words_of(plb) / FP_CH_WORDS + 1);
	bpf_map__set_max_entries(s->maps.xd, 1u << FP_DXR_BITS);
	bpf_map__set_max_entries(s->maps.xr, max1(words_of(xrb)));
	bpf_map__set_max_entries(s->maps.xd_ch,
				 (1u << FP_DXR_BITS) / FP_CH_WORDS);
	bpf_map__set_max_entries(s->maps.xr_ch,
				 words_of(xrb) / FP_CH_WORDS + 1);
	(void)pnb;
}

static double fill_maps(struct fibproto_bpf *s)
{
	static uint64_t v[65536];
	double t0 = now();
	size_t t8b = (size_t)ng * 1024;

	for (int i = 0; i < 65536; i++)
		v[i] = i;
	big_fill(s->maps.vals, v, sizeof(v));
	big_fill(s->maps.t24, t24, 64u << 20);
	if (ng)
		big_fill(s->maps.t8, t8, t8b);
	ch_fill(s->maps.t24_ch, t24, 64u << 20, 8, FP_CH_WORDS);
	ch_fill(s->maps.t8_ch, t8, t8b, 8, FP_CH_WORDS);
	big_fill(s->maps.pd, pd, 4u << FP_POP_S);
	if (pn.n)
		big_fill(s->maps.pn, pn.p, pn.n * sizeof(struct fp_node));
	if (pl.n)
		big_fill(s->maps.pl, pl.p, pl.n * 2);
	ch_fill(s->maps.pd_ch, pd, 4u << FP_POP_S, 8, FP_CH_WORDS);
	ch_fill(s->maps.pn_ch, pn.p, pn.n * sizeof(struct fp_node),
		sizeof(struct fp_node), FP_NCH_NODES);
	ch_fill(s->maps.pl_ch, pl.p, pl.n * 2, 8, FP_CH_WORDS);
	big_fill(s->maps.xd, xd, 8u << FP_DXR_BITS);
	if (xr.n)
		big_fill(s->maps.xr, xr.p, xr.n * 4);
	ch_fill(s->maps.xd_ch, xd, 8u << FP_DXR_BITS, 8, FP_CH_WORDS);
	ch_fill(s->maps.xr_ch, xr.p, xr.n * 4, 8, FP_CH_WORDS);
	return now() - t0;
}

static int prog_fd(struct fibproto_bpf *s, int p)
{
	struct bpf_program *progs[FP_NPROG] = {
		s->progs.fp_null,   s->progs.fp_d248,	s->progs.fp_d248_ch,
		s->progs.fp_pop,    s->progs.fp_pop_ch, s->progs.fp_dxr,
		s->progs.fp_dxr_ch,
	};

	return bpf_program__fd(progs[p]);
}

/* ns per lookup, one lookup per call (repeat 1): between calls the
 * syscall and test-run machinery evict what a loop keeps warm. */
static double run_percall(int fd, int calls)
{
	char pkt[64] = { 0 };
	double sum = 0;

	for (int i = 0; i < calls; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt,
			    .data_size_in = sizeof(pkt), .repeat = 1);

		if (bpf_prog_test_run_opts(fd, &o))
			die("test run: %s", strerror(errno));
		sum += o.duration;
	}
	return sum / calls;
}

/* ns per lookup over every block once. */
static double run(int fd)
{
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt,
		    .data_size_in = sizeof(pkt), .repeat = NDST_BLK);

	if (bpf_prog_test_run_opts(fd, &o))
		die("test run: %s", strerror(errno));
	return (double)o.duration / FP_BATCH;
}

/* --- the run --- */

static int rounds = 7;

static const char *fg_count(size_t n)
{
	static char buf[4][16];
	static int k;
	char *b = buf[k++ % 4];

	if (n >= 1000000)
		sprintf(b, "%zuM", n / 1000000);
	else if (n >= 1000)
		sprintf(b, "%zuk", n / 1000);
	else
		sprintf(b, "%zu", n);
	return b;
}

struct result {
	double spread[2][FP_NPROG], hot[2][FP_NPROG]; /* [dep] */
	double pc_spread[FP_NPROG], pc_hot[FP_NPROG]; /* one per call */
	size_t mem[FP_NPROG];
};

static void write_dsts(struct fibproto_bpf *s, const uint32_t *d)
{
	big_fill(s->maps.dsts, d, (size_t)NDST_BLK * FP_BATCH * 4);
	s->bss->pos = 0;
}

static void verify(struct fibproto_bpf *s, const uint32_t *d, size_t n)
{
	size_t len = n * 8;
	uint64_t *out = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			     bpf_map__fd(s->maps.out), 0);

	if (out == MAP_FAILED)
		die("mmap out: %s", strerror(errno));
	for (size_t i = 0; i < n; i++) {
		uint32_t want = shadow_lookup(d[i]);

		if (pop_lookup_c(d[i]) != want || dxr_lookup_c(d[i]) != want)
			die("C lookup of %08x: pop %x dxr %x, want %x", d[i],
			    pop_lookup_c(d[i]), dxr_lookup_c(d[i]), want);
	}
	s->bss->verify = 1;
	for (int p = 1; p < FP_NPROG; p++) {
		memset(out, 0xff, len);
		s->bss->pos = 0;
		run(prog_fd(s, p));
		for (size_t i = 0; i < n; i++)
			if ((uint32_t)out[i] != shadow_lookup(d[i]))
				die("%s: lookup of %08x gave %x, want %x",
				    prog_names[p], d[i], (uint32_t)out[i],
				    shadow_lookup(d[i]));
	}
	s->bss->verify = 0;
	munmap(out, len);
}

static void measure(size_t nroutes, struct result *res, int updates)
{
	struct fg_route *r = calloc(nroutes, sizeof(*r));
	size_t nd = (size_t)NDST_BLK * FP_BATCH;
	uint32_t *spread = malloc(nd * 4), *hot = malloc(nd * 4);
	double t0, tsh, tpop, tdxr, tfill, sp[2][FP_NPROG][32],
	    ho[2][FP_NPROG][32];
	uint64_t st = 42;
	struct fibproto_bpf *s;

	if (!r || !spread || !hot || !fg_gen(r, nroutes, NNH, 1))
		die("out of memory");
	shadow_reset(nroutes + (updates ? updates : 0));
	t0 = now();
	for (size_t i = 0; i < nroutes; i++)
		shadow_add(r[i].addr, r[i].len, r[i].nh + 1);
	tsh = now() - t0;
	t0 = now();
	pop_build();
	tpop = now() - t0;
	t0 = now();
	dxr_build();
	tdxr = now() - t0;
	for (size_t i = 0; i < nd; i++) {
		spread[i] = fg_dest(&r[fg_rnd(&st) % nroutes], &st);
		hot[i] = fg_dest(&r[0], &(uint64_t){ 7 });
	}

	s = fibproto_bpf__open();
	if (!s)
		die("open BPF object: %s", strerror(errno));
	size_maps(s);
	if (fibproto_bpf__load(s))
		die("load BPF object: %s", strerror(errno));
	s->bss->nblk = NDST_BLK;
	tfill = fill_maps(s);
	write_dsts(s, spread);
	verify(s, spread, nd);

	res->mem[FP_D248] = res->mem[FP_D248_CH] = (64u << 20) + ng * 1024;
	res->mem[FP_POP] = res->mem[FP_POP_CH] =
	    (4u << FP_POP_S) + pn.n * sizeof(struct fp_node) + pl.n * 2;
	res->mem[FP_DXR] = res->mem[FP_DXR_CH] = (8u << FP_DXR_BITS) + xr.n * 4;
	fprintf(stderr,
		"%zu routes: %u tbl8 groups, poptrie %zu nodes %zu leaves, "
		"dxr %zu ranges; build: shadow %.3f s, poptrie %.3f s, dxr "
		"%.3f s, maps %.3f s; checked %zu lookups per program\n",
		nroutes, ng, pn.n, pl.n, xr.n, tsh, tpop, tdxr, tfill, nd);
	if (updates)
		printf("\nBuild of %zu routes: shadow DIR-24-8 %.3f s (prefix "
		       "store and painting), Poptrie from it %.3f s, DXR from "
		       "it %.3f s; copying every table into the maps %.3f s.\n",
		       nroutes, tsh, tpop, tdxr, tfill);

	for (int k = 0; k < rounds; k++) {
		/* Interleaved: every program once per round and pattern. */
		for (int d = 0; d < 2; d++) {
			s->bss->dep = d;
			write_dsts(s, spread);
			for (int p = 0; p < FP_NPROG; p++)
				sp[d][p][k] = run(prog_fd(s, p));
			write_dsts(s, hot);
			for (int p = 0; p < FP_NPROG; p++)
				ho[d][p][k] = run(prog_fd(s, p));
		}
	}
	{
		double ps[FP_NPROG][32], ph[FP_NPROG][32];

		s->bss->dep = 0;
		s->data->batch = 1;
		for (int k = 0; k < rounds; k++) {
			write_dsts(s, spread);
			for (int p = 0; p < FP_NPROG; p++)
				ps[p][k] = run_percall(prog_fd(s, p), 4096);
			write_dsts(s, hot);
			for (int p = 0; p < FP_NPROG; p++)
				ph[p][k] = run_percall(prog_fd(s, p), 4096);
		}
		s->data->batch = FP_BATCH;
		for (int p = 0; p < FP_NPROG; p++) {
			res->pc_spread[p] = median(ps[p], rounds);
			res->pc_hot[p] = median(ph[p], rounds);
		}
	}
	for (int d = 0; d < 2; d++)
		for (int p = 0; p < FP_NPROG; p++) {
			res->spread[d][p] = median(sp[d][p], rounds);
			res->hot[d][p] = median(ho[d][p], rounds);
		}
	fibproto_bpf__destroy(s);

	if (updates) {
		struct fg_route *u = calloc(updates, sizeof(*u));
		size_t nu = 0;
		double tadd[3] = { 0 }, tdel[3] = { 0 }, tt;
		size_t pg0, xg0;

		/* New prefixes of the same mix, other addresses. */
		fg_gen(u, updates, NNH, 99);
		for (size_t i = 0; i < (size_t)updates; i++)
			if (!h_find(u[i].addr, u[i].len))
				u[nu++] = u[i];
		pn.garbage = xr.garbage = 0;
		pg0 = pn.n * sizeof(struct fp_node) + pl.n * 2;
		xg0 = xr.n * 4;
		for (int del = 0; del < 2; del++) {
			double *t = del ? tdel : tadd;

			for (size_t i = 0; i < nu; i++) {
				uint32_t a = u[i].addr;
				int len = u[i].len;

				tt = now();
				if (del)
					shadow_del(a, len);
				else
					shadow_add(a, len, u[i].nh + 1);
				t[0] += now() - tt;
				tt = now();
				for (uint32_t j = 0;
				     j < (len >= FP_POP_S
					      ? 1u
					      : 1u << (FP_POP_S - len));
				     j++)
					pop_chunk((a >> (32 - FP_POP_S)) + j);
				t[1] += now() - tt;
				tt = now();
				for (uint32_t j = 0;
				     j < (len >= 16 ? 1u : 1u << (16 - len));
				     j++)
					dxr_chunk((a >> 16) + j);
				t[2] += now() - tt;
			}
		}
		/* Still right after every update. */
		for (size_t i = 0; i < nd; i++)
			if (pop_lookup_c(spread[i]) !=
				shadow_lookup(spread[i]) ||
			    dxr_lookup_c(spread[i]) != shadow_lookup(spread[i]))
				die("lookup of %08x wrong after updates",
				    spread[i]);
		printf("\nIncremental updates at %zu routes: %zu adds then "
		       "the same %zu deletes (new prefixes of the same mix); "
		       "us per update, each chunk rebuilt aside then "
		       "switched:\n\n",
		       nroutes, nu, nu);
		printf("| step | add us | delete us |\n|---|---:|---:|\n");
		printf("| shadow DIR-24-8 (prefix store, painting) | %.2f | "
		       "%.2f |\n",
		       tadd[0] / nu * 1e6, tdel[0] / nu * 1e6);
		printf(
		    "| Poptrie: rebuild the changed /18(s) | %.2f | %.2f |\n",
		    tadd[1] / nu * 1e6, tdel[1] / nu * 1e6);
		printf("| DXR: rebuild the changed /16(s) | %.2f | %.2f |\n",
		       tadd[2] / nu * 1e6, tdel[2] / nu * 1e6);
		printf("\nSpace left behind by %zu updates (to free after a "
		       "grace period): Poptrie %.1f MiB (table %.1f MiB), DXR "
		       "%.1f MiB (table %.1f MiB).\n",
		       2 * nu, pn.garbage / 1048576.0, pg0 / 1048576.0,
		       xr.garbage / 1048576.0, xg0 / 1048576.0);
		free(u);
	}
	free(r), free(spread), free(hot);
}

static void print_table(const struct result *res, const size_t *sizes, int d)
{
	printf("\n%s: ns per lookup inside BPF, median of %d interleaved "
	       "rounds, net of the floor (the same program, no lookup); %d "
	       "nexthops; spread = %d destinations over the table, hot = "
	       "one:\n\n",
	       d == 2 ? "One lookup per BPF_PROG_TEST_RUN call (4096 calls, "
			"as bench_lookup sends packets)"
	       : d    ? "Latency (each lookup's address depends on the result "
			"before: one packet at a time)"
		   : "Throughput (independent lookups: the CPU overlaps their "
		     "misses)",
	       rounds, NNH, d == 2 ? 4096 : NDST_BLK * FP_BATCH);
	printf("| program |");
	for (int i = 0; i < 4; i++)
		printf(" %s spread | %s hot |", fg_count(sizes[i]),
		       fg_count(sizes[i]));
	printf(" MiB at 10 / 10k / 100k / 1M |\n|---|");
	for (int i = 0; i < 4; i++)
		printf("---:|---:|");
	printf("---|\n");
	for (int p = 0; p < FP_NPROG; p++) {
		printf("| %s |", prog_names[p]);
		for (int i = 0; i < 4; i++) {
			double f = p == FP_NULL ? 0 : 1;

			const double *sp =
			    d == 2 ? res[i].pc_spread : res[i].spread[d];
			const double *ho =
			    d == 2 ? res[i].pc_hot : res[i].hot[d];

			printf(" %.1f | %.1f |", sp[p] - f * sp[FP_NULL],
			       ho[p] - f * ho[FP_NULL]);
		}
		if (p == FP_NULL)
			printf(" |\n");
		else
			printf(" %.2f / %.2f / %.2f / %.2f |\n",
			       res[0].mem[p] / 1048576.0,
			       res[1].mem[p] / 1048576.0,
			       res[2].mem[p] / 1048576.0,
			       res[3].mem[p] / 1048576.0);
	}
}

int main(int argc, char **argv)
{
	size_t sizes[] = { 10, 10000, 100000, 1000000 };
	struct result res[4];
	int quick = argc > 1 && !strcmp(argv[1], "--quick");

	if (quick)
		rounds = 3;
	for (int i = 0; i < 4; i++)
		measure(sizes[i], &res[i],
			i == 3 ? (quick ? 20000 : 100000) : 0);

	for (int d = 1; d >= 0; d--)
		print_table(res, sizes, d);
	print_table(res, sizes, 2);
	return 0;
}
