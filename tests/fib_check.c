// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Differential tests of fpmd's fast route tables against the kernel's LPM
 * trie. Each case drives fib4.c (DIR-24-8), fib4c.c (DXR, the dxr-*
 * cases) or fib6.c (binary search on prefix lengths) through insert / replace / delete sequences and mirrors
 * every change into an LPM trie, the oracle. After each batch of changes
 * bpf/fib_check.bpf.o compares both over a million addresses drawn
 * around the current prefixes (ends, one past the ends, siblings) in one
 * BPF_PROG_TEST_RUN, with the XDP router's own lookup code.
 *
 *   fib_check            run every case
 *   fib_check --list     print the case names
 *   fib_check NAME...    run the named cases
 *
 * A mismatch names the case, the step, the address, the expected value
 * (LPM trie) and the one found.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fib/chunks.h"
#include "fib/fib4.h"
#include "fib/fib4c.h"
#include "fibproto/fibgen.h"
#include "fib/fib6.h"
#include "fib_check.h"
#include "fib_check.skel.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_BASES FIB_CHECK_BASES
#define LOOKUPS (1u << 20)

struct pfx {
	uint8_t addr[16];
	uint8_t len;
	uint32_t val;
};

static struct fib_check_bpf *skel;
static struct fib4 f4;
static struct fib4c f4c;
static bool dxr; /* IPv4 cases run on fib4c (DXR), not DIR-24-8 */
static struct fib6 f6;
static int family; /* 4 or 6 */
static const char *case_name;
static struct pfx *live; /* what the oracle holds */
static size_t nlive, cap_live;
static char last_op[128];
static uint64_t total_lookups;
static bool hold_drops; /* checks publish new parts but drop none */
static uint64_t rng = 0x66706d64u;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stdout, "FAIL %s: ", case_name);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fprintf(stdout, "\n");
	exit(1);
}

static int alen(void)
{
	return family == 4 ? 4 : 16;
}

static const char *fmt_pfx(const uint8_t *a, int len, char *buf)
{
	char s[INET6_ADDRSTRLEN];

	inet_ntop(family == 4 ? AF_INET : AF_INET6, a, s, sizeof(s));
	snprintf(buf, 64, "%s/%d", s, len);
	return buf;
}

static const char *fmt_val(uint32_t v, char *buf)
{
	static const char *const types[16] = {
		"none", "nexthop", "group", "local", "blackhole",
		"unreachable", "prohibit", "kernel", [15] = "tbl8-pointer",
	};
	const char *t = types[FPMD_RT_TYPE(v)];

	if (!v)
		snprintf(buf, 64, "0x00000000 (no route)");
	else
		snprintf(buf, 64, "0x%08x (src %u, %s %u)", v, FPMD_RT_SRC(v),
			 t ? t : "type?", FPMD_RT_INDEX(v));
	return buf;
}

static void mask(uint8_t *a, int len)
{
	for (int i = 0; i < 16; i++) {
		int bits = len - 8 * i;

		a[i] = bits >= 8 ? a[i] : bits <= 0 ? 0 :
				     a[i] & (uint8_t)(0xff << (8 - bits));
	}
}

static uint32_t random_val(void)
{
	static const int types[] = { FPMD_RT_NEXTHOP, FPMD_RT_GROUP,
				     FPMD_RT_BLACKHOLE, FPMD_RT_LOCAL,
				     FPMD_RT_UNREACHABLE };
	uint64_t r = rnd();

	return FPMD_RT_ENCODE_SRC(r % 4, types[(r >> 8) % ARRAY_SIZE(types)],
				  r >> 24);
}

/* ---- the oracle and the table under test, kept in step ---- */

static struct fpmd_lpm_v6 extra_base[4];
static bool in_resize; /* checking from fib6's resize_hook */
static int nextra;

static ssize_t live_find(const uint8_t *a, int len)
{
	for (size_t i = 0; i < nlive; i++)
		if (live[i].len == len && !memcmp(live[i].addr, a, 16))
			return (ssize_t)i;
	return -1;
}

static void oracle_put(const uint8_t *a, int len, uint32_t val)
{
	struct fpmd_route_val v = { val };
	struct fpmd_lpm_v6 k6 = { .prefixlen = (uint32_t)len };
	struct fpmd_lpm_v4 k4 = { .prefixlen = (uint32_t)len };
	int ret;

	memcpy(k4.addr, a, 4);
	memcpy(k6.addr, a, 16);
	ret = family == 4 ?
		      bpf_map_update_elem(bpf_map__fd(skel->maps.routes_v4),
					  &k4, &v, BPF_ANY) :
		      bpf_map_update_elem(bpf_map__fd(skel->maps.routes_v6),
					  &k6, &v, BPF_ANY);
	if (ret)
		fail("LPM trie update: %s", strerror(errno));
}

static void oracle_del(const uint8_t *a, int len)
{
	struct fpmd_lpm_v6 k6 = { .prefixlen = (uint32_t)len };
	struct fpmd_lpm_v4 k4 = { .prefixlen = (uint32_t)len };

	memcpy(k4.addr, a, 4);
	memcpy(k6.addr, a, 16);
	if (family == 4)
		bpf_map_delete_elem(bpf_map__fd(skel->maps.routes_v4), &k4);
	else
		bpf_map_delete_elem(bpf_map__fd(skel->maps.routes_v6), &k6);
}

/* Add or replace; returns the table's result (the oracle follows only
 * what the table took, as fpmd's "map full" routes stay out). */
static int add(const uint8_t *addr, int len, uint32_t val)
{
	uint8_t a[16] = { 0 };
	char b[64];
	ssize_t i;
	int ret;

	memcpy(a, addr, alen());
	mask(a, len);
	snprintf(last_op, sizeof(last_op), "add %s", fmt_pfx(a, len, b));
	/* A check from inside the add (a growth) may see it in part. */
	skel->bss->pend_on = 1;
	skel->bss->pend_val = val;
	skel->bss->pend.prefixlen = (__u32)len;
	memcpy(skel->bss->pend.addr, a, 16);
	ret = family == 6 ? fib6_add(&f6, a, (uint8_t)len, val) :
	      dxr	  ? fib4c_add(&f4c, a, (uint8_t)len, val) :
			    fib4_add(&f4, a, (uint8_t)len, val);
	skel->bss->pend_on = 0;
	if (ret == -ENOSPC)
		return ret;
	if (ret)
		fail("%s: %s", last_op, strerror(-ret));
	oracle_put(a, len, val);
	i = live_find(a, len);
	if (i >= 0) {
		live[i].val = val;
		return 0;
	}
	if (nlive == cap_live) {
		cap_live = cap_live ? cap_live * 2 : 1024;
		live = realloc(live, cap_live * sizeof(*live));
		if (!live)
			fail("out of memory");
	}
	memcpy(live[nlive].addr, a, 16);
	live[nlive].len = (uint8_t)len;
	live[nlive++].val = val;
	return 0;
}

/* A prefix known to be new, without the linear search (bulk cases). */
static int add_new(const uint8_t *addr, int len, uint32_t val)
{
	int ret = family == 6 ? fib6_add(&f6, addr, (uint8_t)len, val) :
		  dxr	      ? fib4c_add(&f4c, addr, (uint8_t)len, val) :
				fib4_add(&f4, addr, (uint8_t)len, val);

	if (ret)
		return ret;
	oracle_put(addr, len, val);
	if (nlive == cap_live) {
		cap_live = cap_live ? cap_live * 2 : 1024;
		live = realloc(live, cap_live * sizeof(*live));
		if (!live)
			fail("out of memory");
	}
	memset(live[nlive].addr, 0, 16);
	memcpy(live[nlive].addr, addr, alen());
	live[nlive].len = (uint8_t)len;
	live[nlive++].val = val;
	return 0;
}

static void del_at(size_t i)
{
	struct pfx p = live[i];
	char b[64];
	int ret;

	snprintf(last_op, sizeof(last_op), "delete %s",
		 fmt_pfx(p.addr, p.len, b));
	/* The oracle first: a table shrinks at the end of a delete, and
	 * checks it (resize_hook) against the oracle. */
	oracle_del(p.addr, p.len);
	ret = family == 6 ? fib6_del(&f6, p.addr, p.len) :
	      dxr	  ? fib4c_del(&f4c, p.addr, p.len) :
			    fib4_del(&f4, p.addr, p.len);
	if (ret)
		fail("%s: %s", last_op, strerror(-ret));
	live[i] = live[--nlive];
}

static void del(const uint8_t *addr, int len)
{
	uint8_t a[16] = { 0 };
	ssize_t i;

	memcpy(a, addr, alen());
	mask(a, len);
	i = live_find(a, len);
	if (i < 0)
		fail("test bug: delete of a prefix not added");
	del_at((size_t)i);
}

/* ---- the check, inside BPF ---- */

static void check_n(const char *step, uint32_t lookups)
{
	int bfd = bpf_map__fd(skel->maps.bases);
	uint8_t frame[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
		    .data_size_in = sizeof(frame), .repeat = 1);
	uint32_t n = 0;

	/* What fpmd does before anything observable: new parts in, and a
	 * few uniform ones out (the others stay until a later commit and
	 * must be right meanwhile). */
	if (family == 4) {
		int ret = dxr ? fib4c_commit(&f4c) :
				fib4_commit(&f4, hold_drops ? 0 : rnd() % 2 * 4);

		if (ret)
			fail("%s: fib4_commit: %s", step, strerror(-ret));
	} else if (rnd() % 2 && !in_resize && fib6_tidy(&f6)) {
		/* Not from inside a resize (grow_check): a tidy there
		 * would start another resize, which fpmd never does. */
		fail("%s: fib6_tidy failed", step);
	}

	/* The current prefixes (a random subset past MAX_BASES), and /0
	 * so that addresses far from any prefix are drawn too. */
	for (size_t i = 0; i < nlive && n < MAX_BASES - 1; i++) {
		size_t j = nlive <= MAX_BASES - 1 ? i : rnd() % nlive;
		struct fpmd_lpm_v6 b = { .prefixlen = live[j].len };

		memcpy(b.addr, live[j].addr, 16);
		if (bpf_map_update_elem(bfd, &n, &b, BPF_ANY))
			fail("bases: %s", strerror(errno));
		n++;
	}
	/* Prefixes a case wants probed although no route has them. */
	for (int i = 0; i < nextra && n < MAX_BASES - 1; i++, n++)
		if (bpf_map_update_elem(bfd, &n, &extra_base[i], BPF_ANY))
			fail("bases: %s", strerror(errno));
	{
		struct fpmd_lpm_v6 b = { .prefixlen = 0 };

		bpf_map_update_elem(bfd, &n, &b, BPF_ANY);
		n++;
	}
	skel->bss->family = (uint32_t)family;
	skel->bss->v4algo = dxr ? FPMD_FIB4_DXR : FPMD_FIB4_DIR24;
	skel->bss->nbases = n;
	skel->bss->count = lookups;
	skel->bss->seed = rnd();
	skel->bss->checked = 0;
	skel->bss->mismatches = 0;
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.fib_check), &o))
		fail("BPF_PROG_TEST_RUN: %s", strerror(errno));
	if (skel->bss->checked != lookups)
		fail("%s: only %llu of %u lookups ran", step,
		     (unsigned long long)skel->bss->checked, lookups);
	total_lookups += skel->bss->checked;
	if (skel->bss->mismatches) {
		char a[INET6_ADDRSTRLEN], w[64], g[64];
		uint64_t nm = skel->bss->mismatches;

		printf("FAIL %s: %s (last change: %s): %llu of %u lookups "
		       "differ from the LPM trie:\n",
		       case_name, step, last_op, (unsigned long long)nm,
		       lookups);
		for (uint64_t k = 0; k < nm && k < 8; k++) {
			inet_ntop(family == 4 ? AF_INET : AF_INET6,
				  skel->bss->miss[k].addr, a, sizeof(a));
			printf("  %s: expected %s, got %s (%s)\n", a,
			       fmt_val(skel->bss->miss[k].want, w),
			       fmt_val(skel->bss->miss[k].got, g),
			       family == 6 ? "binary search on lengths" :
			       dxr	   ? "DXR" :
					     "DIR-24-8");
		}
		exit(1);
	}
}

/* A full check: a million addresses. */
static void check(const char *step)
{
	check_n(step, LOOKUPS);
}

/* After each step of a hand-made sequence. */
static void check_step(const char *step)
{
	check_n(step, LOOKUPS / 8);
}

/* ---- setup ---- */

static void load(uint32_t ngroups)
{
	skel = fib_check_bpf__open();
	if (!skel)
		fail("open bpf/fib_check.bpf.o: %s", strerror(errno));
	/* One IPv4 table at a time; they share rules_v4. */
	fib4_size(skel->obj, dxr ? 0 : ngroups, dxr ? 0 : 1 << 18);
	fib4c_size(skel->obj, dxr ? 1 << 18 : 0);
	bpf_map__set_max_entries(skel->maps.slots_v6, FPMD_V6_OUTER(1 << 17));
	if (fib_check_bpf__load(skel))
		fail("load bpf/fib_check.bpf.o: %s", strerror(errno));
}

static void open_tables(uint32_t ngroups, bool adopt)
{
	int ret;

	if (family == 4 && dxr) {
		struct fib4c_maps m;

		fib4c_maps_of(skel->obj, &m);
		ret = fib4c_open(&f4c, &m, 1 << 18, adopt);
		f4c.grace_ns = 0;
		if (!ret && adopt)
			ret = fib4c_commit(&f4c);
	} else if (family == 4) {
		struct fib4_maps m;

		fib4_maps_of(skel->obj, &m);

		ret = fib4_open(&f4, &m, ngroups, 1 << 18, adopt);
		f4.grace_ns = 0; /* nothing reads while we write */
	} else {
		ret = fib6_open(&f6, bpf_map__fd(skel->maps.slots_v6),
				bpf_map__fd(skel->maps.lens_v6), 1 << 17,
				adopt);
		f6.grace_ns = 0;
		/* Half the runs leave emptied lengths in the search order
		 * above a few routes (what a mass delete does at scale). */
		if (rnd() % 2)
			f6.rebuild_now = rnd() % 64;
	}
	if (ret)
		fail("open the tables%s: %s", adopt ? " (adopt)" : "",
		     strerror(-ret));
}

static void close_tables(void)
{
	if (family == 4 && dxr)
		fib4c_close(&f4c);
	else if (family == 4)
		fib4_close(&f4);
	else
		fib6_close(&f6);
}

static void start(int fam, uint32_t ngroups)
{
	family = fam;
	nlive = 0;
	load(ngroups);
	open_tables(ngroups, false);
}

static void finish(void)
{
	close_tables();
	fib_check_bpf__destroy(skel);
	skel = NULL;
	printf("PASS %s: %zu prefixes at the end, %llu lookups compared\n",
	       case_name, nlive, (unsigned long long)total_lookups);
}

/* ---- address generators ---- */

static void v4(uint8_t *a, uint32_t h)
{
	h = htonl(h);
	memset(a, 0, 16);
	memcpy(a, &h, 4);
}

/* Prefixes crowded into a few regions, lengths around the boundaries
 * that matter to DIR-24-8 (/0, /8, /16, /24 and its neighbours, /32). */
static int random_v4(uint8_t *a)
{
	/* /0 and /1 rewrite half of tbl24 or more: rare, or the test
	 * spends its time there. */
	static const int lens[] = { 7,	8,  9,	15, 16, 17, 20, 22,
				    23, 24, 24, 24, 25, 25, 26, 27,
				    28, 29, 30, 31, 32, 32 };
	static const uint32_t regions[][2] = {
		{ 0x0a000000, 8 },  /* 10/8 */
		{ 0x0a010200, 22 }, /* 10.1.0.0/22: deep nesting */
		{ 0xc0a80000, 16 }, /* 192.168/16 */
		{ 0, 0 },	    /* anywhere */
	};
	uint64_t r = rnd();
	const uint32_t *reg = regions[r % ARRAY_SIZE(regions)];
	int len = lens[(r >> 8) % ARRAY_SIZE(lens)];
	uint32_t m = reg[1] ? ~0u << (32 - reg[1]) : 0;

	if ((r >> 16) % 256 == 0)
		len = (int)((r >> 24) % 2);

	v4(a, (reg[0] & m) | ((uint32_t)(r >> 32) & ~m));
	return len;
}

static int random_v6(uint8_t *a)
{
	static const int lens[] = { 0,	 1,   16,  31,	32,  32,  33,  40,
				    47,	 48,  48,  49,	56,  63,  64,  64,
				    65,	 80,  96,  112, 127, 128, 128, 3 };
	static const uint8_t regions[][3] = {
		{ 0x20, 0x01, 32 }, /* 2001:db8::/32 (0db8 below) */
		{ 0xfd, 0x00, 8 },
		{ 0x00, 0x00, 0 },
	};
	uint64_t r = rnd(), h = rnd(), l = rnd();
	int reg = (int)(r % ARRAY_SIZE(regions));
	int len = lens[(r >> 8) % ARRAY_SIZE(lens)];

	memcpy(a, &h, 8);
	memcpy(a + 8, &l, 8);
	if (reg == 0) {
		a[0] = 0x20, a[1] = 0x01, a[2] = 0x0d, a[3] = 0xb8;
		/* crowd further: a handful of /48s */
		if (r >> 40 & 1)
			a[4] = 0, a[5] = (uint8_t)(r >> 41 & 3);
	} else if (reg == 1) {
		a[0] = 0xfd;
	}
	return len;
}

static int random_prefix(uint8_t *a)
{
	return family == 4 ? random_v4(a) : random_v6(a);
}

/* n random changes: adds and replaces, deletes (a third), checked every
 * "every" changes. */
static void churn(int n, int every)
{
	char step[64];

	for (int i = 1; i <= n; i++) {
		uint8_t a[16];
		uint64_t r = rnd();

		if (nlive && r % 3 == 0) {
			del_at(rnd() % nlive);
		} else if (nlive && r % 7 == 1) {
			size_t j = rnd() % nlive; /* replace */

			add(live[j].addr, live[j].len, random_val());
		} else {
			int len = random_prefix(a);

			add(a, len, random_val());
		}
		if (i % every == 0) {
			snprintf(step, sizeof(step), "after change %d", i);
			check(step);
		}
	}
}

/* ---- the cases ---- */

static void case_v4_random(void)
{
	start(4, 2048);
	churn(20000, 2500);
	finish();
}

/* A chain of covering prefixes, taken down parents first, children
 * first and from the middle, checked after every step. */
static void nest_chain(const int *lens, int n, const uint32_t addr,
		       const int *order)
{
	uint8_t a[16];
	char step[64];

	for (int i = 0; i < n; i++) {
		v4(a, addr);
		add(a, lens[i], random_val());
		snprintf(step, sizeof(step), "after adding /%d", lens[i]);
		check_step(step);
	}
	for (int i = 0; i < n; i++) {
		v4(a, addr);
		del(a, lens[order[i]]);
		snprintf(step, sizeof(step), "after deleting /%d",
			 lens[order[i]]);
		check_step(step);
	}
}

static void case_v4_covering(void)
{
	static const int lens[] = { 0, 8, 16, 23, 24, 25, 28, 31, 32 };
	static const int parents_first[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 };
	static const int children_first[] = { 8, 7, 6, 5, 4, 3, 2, 1, 0 };
	static const int middle[] = { 4, 5, 3, 0, 8, 2, 6, 1, 7 };
	const int n = ARRAY_SIZE(lens);

	start(4, 64);
	nest_chain(lens, n, 0x0a0102ff, parents_first);
	nest_chain(lens, n, 0x0a010200, children_first);
	nest_chain(lens, n, 0xc0a80180, middle);
	/* Two /25 halves under a /24, then the /24 goes: the group must
	 * go back to tbl24 only when no /25 is left. */
	{
		uint8_t a[16];

		v4(a, 0x0a630000);
		add(a, 24, random_val());
		add(a, 25, random_val());
		v4(a, 0x0a630080);
		add(a, 25, random_val());
		check_step("two /25 under a /24");
		v4(a, 0x0a630000);
		del(a, 24);
		check_step("the /24 deleted");
		del(a, 25);
		check_step("first /25 deleted");
		v4(a, 0x0a630080);
		del(a, 25);
		check_step("second /25 deleted");
		if (f4.groups_used)
			fail("%u tbl8 groups still in use with no prefix "
			     "longer than /24",
			     f4.groups_used);
	}
	finish();
}

/* More /25+ prefixes in distinct /24s than there are tbl8 groups. */
static void case_v4_groups_full(void)
{
	const uint32_t groups = 16;
	uint32_t full = 0;
	uint8_t a[16];

	start(4, groups);
	v4(a, 0);
	add(a, 0, random_val());
	for (uint32_t i = 0; i < 40; i++) {
		v4(a, 0x0b000000 + (i << 8) + 0x40);
		if (add(a, 26, random_val()) == -ENOSPC)
			full++;
	}
	if (full != 40 - groups)
		fail("%u of 40 /26 refused with %u groups, expected %u", full,
		     groups, 40 - groups);
	check("groups exhausted");
	for (int i = 0; i < 8; i++)
		del_at(rnd() % nlive);
	churn(4000, 1000);
	finish();
}

/* Close and reopen on the same maps, as a restarted fpmd does: nothing
 * may be rewritten, and the store must be whole again. */
static void case_adopt(int fam)
{
	uint64_t writes;

	start(fam, 1024);
	churn(6000, 6000);
	close_tables();
	open_tables(1024, true);
	/* IPv6: the direct stage's entries (slots are read back as they
	 * are). */
	writes = fam == 4 ? (dxr ? f4c.entry_writes : f4.entry_writes) :
			    f6.direct_writes;
	if (writes)
		fail("adoption rewrote %llu table entries",
		     (unsigned long long)writes);
	check("after adoption");
	churn(6000, 3000);
	finish();
}

static void case_v4_adopt(void)
{
	case_adopt(4);
}

static void case_v6_random(void)
{
	start(6, 1);
	churn(20000, 2500);
	finish();
}

static void case_v6_covering(void)
{
	static const int lens[] = { 0, 16, 32, 47, 48, 49, 64, 127, 128 };
	uint8_t a[16];
	char step[64];

	start(6, 1);
	inet_pton(AF_INET6, "2001:db8:1:2:3:4:5:6", a);
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		add(a, lens[i], random_val());
		snprintf(step, sizeof(step), "after adding /%d", lens[i]);
		check_step(step);
	}
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		int l = lens[(i * 5) % ARRAY_SIZE(lens)];

		del(a, l);
		snprintf(step, sizeof(step), "after deleting /%d", l);
		check_step(step);
	}
	finish();
}

/*
 * A marker's value follows the routes above it: with lengths /16, /32 and
 * /48 in use, 2001:db8:1::/48 leaves a marker at 2001:db8::/32 whose
 * value is 2001::/16's. Other prefixes keep each length in use, so these
 * are updates in place, not a rebuild of the search order.
 */
static void case_v6_markers(void)
{
	static const char *const keep[] = { "3000::/16", "4000:1::/32",
					    "5000::/48" };
	uint8_t a[16], p16[16], p48[16];

	start(6, 1);
	for (size_t i = 0; i < ARRAY_SIZE(keep); i++) {
		char buf[64], *sl;

		snprintf(buf, sizeof(buf), "%s", keep[i]);
		sl = strchr(buf, '/');
		*sl = 0;
		inet_pton(AF_INET6, buf, a);
		add(a, atoi(sl + 1), random_val());
	}
	inet_pton(AF_INET6, "2001::", p16);
	inet_pton(AF_INET6, "2001:db8:1::", p48);
	add(p16, 16, random_val());
	add(p48, 48, random_val());
	check_step("marker under 2001::/16");
	del(p16, 16);
	check_step("2001::/16 deleted under the marker");
	add(p16, 16, random_val());
	check_step("2001::/16 added again");
	add(p16, 16, random_val());
	check_step("2001::/16 replaced");
	inet_pton(AF_INET6, "2001:db8::", a);
	add(a, 32, random_val());
	check_step("the marker became a route");
	del(a, 32);
	check_step("and a marker again");
	del(p48, 48);
	check_step("2001:db8:1::/48 deleted");
	finish();
}

/* A prefix in one of four /19s of 2400::/16, of a length on either side
 * of /19 or covering them all. */
static int random_direct(uint8_t *a)
{
	static const int lens[] = { 0,	3,  16, 18, 19, 19,  20, 20,
				    21, 24, 32, 48, 48, 64, 128 };
	uint64_t r = rnd(), h = rnd(), l = rnd();

	memcpy(a, &h, 8);
	memcpy(a + 8, &l, 8);
	a[0] = 0x24;
	a[1] = 0x00;
	a[2] = (uint8_t)((r >> 8 & 3) << 5 | (a[2] & 0x1f));
	return lens[(r >> 16) % ARRAY_SIZE(lens)];
}

/*
 * The direct stage (one lens_v6 entry per /19 of 2000::/3): about 16
 * prefixes over four /19s, so that a /19 goes from no route to one (no
 * probe) to a few lengths (probed directly) to more than
 * FPMD_V6_DIRECT_LENS (bisected) and back,
 * while covering routes (/0, /3, /16, /18, /19) come and go over them;
 * checked every 8 changes, then after adoption.
 */
static void case_v6_direct(void)
{
	uint32_t one = 0, direct = 0, bisect = 0;
	char step[64];

	start(6, 1);
	for (int i = 1; i <= 2400; i++) {
		uint8_t a[16];
		uint64_t r = rnd();

		if (nlive && (nlive > 16 || r % 3 == 0)) {
			del_at(rnd() % nlive);
		} else if (nlive && r % 7 == 1) {
			size_t j = rnd() % nlive; /* replace */

			add(live[j].addr, live[j].len, random_val());
		} else {
			int len = random_direct(a);

			add(a, len, random_val());
		}
		for (uint32_t k = 0; k < 4; k++) {
			/* 2400::/19 is /19 number 0x400 << 3 of 2000::/3 */
			uint32_t m = f6.lens->direct[0x400 << 3 | k][0] >> 32 &
				     0xff;

			if (m & FPMD_V6_DIRECT_ONE)
				one++;
			else if (m > 1)
				direct++;
			else if (!m)
				bisect++;
		}
		if (i % 8 == 0) {
			snprintf(step, sizeof(step), "after change %d", i);
			check_step(step);
		}
	}
	if (!one || !direct || !bisect)
		fail("the /19s held one route %u times, a list of lengths %u "
		     "times and were bisected %u times: all expected",
		     one, direct, bisect);
	close_tables();
	open_tables(1, true);
	if (f6.direct_writes)
		fail("adoption rewrote %llu direct entries",
		     (unsigned long long)f6.direct_writes);
	check("after adoption");
	finish();
}

static void case_v6_adopt(void)
{
	case_adopt(6);
}

/* Both tables answer right while slots_v6 grows: the new one before it
 * is used (the old one still is), and after the flip. */
static void grow_check(struct fib6 *f, uint32_t n, bool flipped)
{
	char step[96];

	in_resize = true;
	snprintf(step, sizeof(step), "%s %u -> %u slots, %s",
		 n > f->nslots ? "growing" : "shrinking", f->nslots, n,
		 flipped ? "after the flip" : "new table built, old in use");
	check_step(step);
	in_resize = false;
}

/*
 * slots_v6 starts at one chunk and doubles at half full, in the middle
 * of a sequence: checked at each growth (before and after the flip),
 * with a growth inside a length-set rebuild (a new length brings a
 * marker for many routes at once), then after adoption of the grown
 * table and while deleting back down, when it halves below an eighth
 * full, back to one chunk.
 */
static void case_v6_grow(void)
{
	uint8_t a[16];
	uint32_t slots;

	start(6, 1);
	f6.resize_hook = grow_check;
	if (f6.nslots != FPMD_V6_CHUNK_SLOTS)
		fail("a new table has %u slots, not one chunk (%u)", f6.nslots,
		     FPMD_V6_CHUNK_SLOTS);
	/* A /48, and /80s each in a /64 of its own up to just under half
	 * full: no growth. With two lengths no route needs a marker. */
	inet_pton(AF_INET6, "2001:db8::", a);
	add(a, 48, random_val());
	for (uint32_t i = 0; f6.in_map + 2 < f6.nslots / 2; i++) {
		a[6] = (uint8_t)(i >> 8), a[7] = (uint8_t)i;
		add(a, 80, random_val());
	}
	if (f6.grows)
		fail("grew below half full (%u of %u slots)", f6.in_map,
		     f6.nslots);
	/* A /64, a new length: the search starts there, and every /80
	 * needs a marker at /64, all written in one rebuild, and the table
	 * grows inside it. */
	memset(a + 6, 0xff, 10);
	add(a, 64, random_val());
	if (f6.grows != 1)
		fail("a rebuild past half full grew %llu times, expected 1",
		     (unsigned long long)f6.grows);
	check_step("growth inside a rebuild");
	/* Random changes through two more doublings (checked by the hook). */
	while (f6.nslots < 8 * FPMD_V6_CHUNK_SLOTS)
		churn(1000, 1 << 30);
	slots = f6.nslots;
	close_tables();
	open_tables(1, true);
	f6.resize_hook = grow_check;
	if (f6.nslots != slots)
		fail("adopted a table of %u slots, the grown one has %u",
		     f6.nslots, slots);
	check("after adoption of the grown table");
	while (nlive > 64)
		del_at(rnd() % nlive);
	/* The tick shrinks the table once deletes stop (fib6_tidy). */
	if (fib6_tidy(&f6) || fib6_tidy(&f6))
		fail("fib6_tidy after the deletes");
	check("deleted back down");
	if (f6.nslots != FPMD_V6_CHUNK_SLOTS || !f6.shrinks)
		fail("%u entries left in %u slots after %llu shrinks: the table "
		     "did not shrink back to one chunk", f6.in_map, f6.nslots,
		     (unsigned long long)f6.shrinks);
	churn(3000, 1000);
	finish();
}

/* The divide-free part index agrees with the divide for every word. */
static void case_v4_part_index(void)
{
	for (uint32_t w = 0; w < FPMD_TBL24_WORDS; w++)
		if (FPMD_TBL24_PART_OF(w) != w / FPMD_TBL24_PART_WORDS)
			fail("FPMD_TBL24_PART_OF(%u) = %u, not %u", w,
			     FPMD_TBL24_PART_OF(w), w / FPMD_TBL24_PART_WORDS);
	printf("PASS %s: %u words\n", case_name, FPMD_TBL24_WORDS);
}

/* ---- tbl24 parts, tbl8 and rules_v4 chunks ---- */

/* Every part that became uniform leaves the outer map now. */
static void settle(const char *step)
{
	int ret = fib4_commit(&f4, UINT32_MAX);

	if (ret)
		fail("%s: fib4_commit: %s", step, strerror(-ret));
	/* The reaper's threads take them out: wait for them. */
	ret = chunks_collect(&f4.parts, true);
	ret = ret ? ret : chunks_collect(&f4.t8c, true);
	ret = ret ? ret : chunks_collect(&f4.rulec, true);
	if (ret)
		fail("%s: a chunk's delete: %s", step, strerror(-ret));
	if (f4.parts.ndropping || f4.parts.npending || f4.parts.nreaping)
		fail("%s: %u parts still dropping, %u pending, %u reaping",
		     step, f4.parts.ndropping, f4.parts.npending,
		     f4.parts.nreaping);
}

static void expect_parts(const char *step, uint32_t want)
{
	settle(step);
	check_step(step);
	if (f4.parts.live != want)
		fail("%s: %u tbl24 parts, expected %u", step, f4.parts.live,
		     want);
}

/* Whether the fast path can see part p (the outer map holds it). */
static bool part_visible(uint32_t p)
{
	uint32_t id;

	return !bpf_map_lookup_elem(bpf_map__fd(skel->maps.tbl24), &p, &id);
}

/*
 * Parts exist only where the table is not uniform: a /25 in an empty
 * part makes one (invisible until the commit), its removal drops it; a
 * /9 over several parts needs only the two its ends fall in; longer
 * prefixes inside add and remove theirs; a default route and its
 * changes live in tbl24_dflt. A part waiting to be dropped stays right
 * when the routes over it change.
 */
static void case_v4_parts(void)
{
	const uint32_t p25 = (0x0a000000u >> 8) / FIB4_PART_ENTRIES;
	uint8_t a[16], d[16];

	start(4, 64);
	hold_drops = true;
	expect_parts("empty table", 0);
	v4(a, 0x0a000000);
	add(a, 25, random_val());
	if (part_visible(p25) || !f4.parts.npending)
		fail("a new part is visible before its commit");
	expect_parts("a /25 in an empty part", 1);
	del(a, 25);
	check_step("the /25 deleted, its part not yet dropped");
	if (!part_visible(p25))
		fail("a part went before the commit that drops it");
	expect_parts("the /25's part dropped", 0);
	/* 10.0.0.0/9: /24s 655360..688127, parts 81 (partly) .. 86
	 * (partly); 82..85 are wholly inside. */
	add(a, 9, random_val());
	expect_parts("a /9 over six parts", 2);
	v4(a, 0x0a300000);
	add(a, 24, random_val());
	v4(a, 0x0a300100);
	add(a, 28, random_val());
	expect_parts("a /24 and a /28 inside the /9", 3);
	v4(d, 0);
	add(d, 0, random_val());
	expect_parts("a default route", 3);
	add(d, 0, random_val());
	expect_parts("the default route changed", 3);
	v4(a, 0x0a300000);
	del(a, 24);
	v4(a, 0x0a300100);
	del(a, 28);
	/* Uniform again but not dropped yet: the routes over it change. */
	v4(a, 0x0a000000);
	add(a, 9, random_val()); /* the /9 over it changes */
	add(a, 8, random_val());
	check_n("the /9 over a part waiting to be dropped changed",
		LOOKUPS / 8);
	/* The /9's ends and the /8's (parts 81, 86 and 90). */
	expect_parts("the inner part dropped", 3);
	del(a, 9);
	del(a, 8);
	expect_parts("the /9 and /8 deleted", 0);
	del(d, 0);
	expect_parts("no route at all", 0);
	/* A lab router: 100 routes cost well under 1 MiB of maps. */
	for (int i = 0; i < 100; i++) {
		uint32_t x = i < 40 ? 0x0a000000 + ((uint32_t)i << 8) :
			     i < 80 ? 0x0a00c800 + 4 * (uint32_t)(i - 40) :
				      0x0a00ff00 + (uint32_t)(i - 80);

		v4(a, x);
		add(a, i < 40 ? 24 : i < 80 ? 30 : 32, random_val());
	}
	expect_parts("100 routes in 10.0.0.0/16", 1);
	if (fib4_map_bytes(&f4) >= 512 * 1024)
		fail("100 routes take %llu bytes of maps",
		     (unsigned long long)fib4_map_bytes(&f4));
	finish();
}

/*
 * tbl8 and rules_v4 grow chunk by chunk: 300 /25s in distinct /24s take
 * three tbl8 chunks, 9000 prefixes two rules_v4 chunks; adoption finds
 * them all and rewrites nothing; deleting everything frees the groups.
 */
static void case_v4_chunks_grow(void)
{
	uint8_t a[16];

	start(4, 1024);
	for (uint32_t i = 0; i < 300; i++) {
		v4(a, 0x0b000000 + (i << 8));
		add(a, 25, random_val());
		if (i == 127)
			check_step("one tbl8 chunk full");
	}
	for (uint32_t i = 0; i < 8700; i++) {
		v4(a, 0x0c000000 + (i << 8));
		add(a, 24, random_val());
	}
	settle("grown");
	check("grown");
	if (f4.t8c.live != 3 || f4.rulec.live != 2)
		fail("%u tbl8 chunks (expected 3), %u rules_v4 chunks "
		     "(expected 2)", f4.t8c.live, f4.rulec.live);
	close_tables();
	open_tables(1024, true);
	if (f4.entry_writes || f4.nrules != 9000 || f4.t8c.live != 3 ||
	    f4.rulec.live != 2)
		fail("adoption: %llu entries rewritten, %u prefixes, %u tbl8 "
		     "and %u rules_v4 chunks",
		     (unsigned long long)f4.entry_writes, f4.nrules,
		     f4.t8c.live, f4.rulec.live);
	check("after adoption");
	while (nlive)
		del_at(nlive - 1);
	settle("all deleted");
	check("all deleted");
	if (f4.groups_used || f4.parts.live)
		fail("%u groups, %u parts left with no prefix",
		     f4.groups_used, f4.parts.live);
	finish();
}

/*
 * A sparse table adopted: only the parts and chunks the maps hold are
 * read, nothing is rewritten, and a part that was waiting to be dropped
 * when fpmd stopped is dropped by the new one.
 */
static void case_v4_adopt_sparse(void)
{
	uint8_t a[16];

	start(4, 64);
	hold_drops = true;
	v4(a, 0);
	add(a, 0, random_val());
	v4(a, 0x0a000000);
	add(a, 24, random_val());
	v4(a, 0xc0a80100);
	add(a, 30, random_val());
	v4(a, 0x64000000);
	add(a, 16, random_val());
	expect_parts("three parts", 3);
	del(a, 16); /* uniform again, left live */
	check_step("one part waiting to be dropped");
	close_tables();
	open_tables(64, true);
	if (f4.entry_writes || f4.nrules != 3)
		fail("adoption: %llu entries rewritten, %u prefixes",
		     (unsigned long long)f4.entry_writes, f4.nrules);
	if (f4.parts.live != 3 || f4.parts.ndropping != 1)
		fail("adoption: %u parts live, %u dropping (expected 3, 1)",
		     f4.parts.live, f4.parts.ndropping);
	check_step("adopted");
	expect_parts("the old uniform part dropped", 2);
	churn(3000, 1000);
	finish();
}

static void expect_chunks(const char *step, uint32_t t8, uint32_t rules)
{
	settle(step);
	check_step(step);
	if (f4.t8c.live != t8 || f4.rulec.live != rules)
		fail("%s: %u tbl8 chunks (expected %u), %u rules_v4 chunks "
		     "(expected %u)", step, f4.t8c.live, t8, f4.rulec.live,
		     rules);
}

/*
 * Memory follows the table down: slots and groups are taken lowest
 * first, and the tbl8 / rules_v4 chunks nothing uses any more go at a
 * commit with drops, but never a tbl8 chunk holding a group still in its
 * grace period. Rules left in high slots are adopted, and new ones fill
 * the low slots again.
 */
static void case_v4_shrink(void)
{
	uint8_t a[16];

	start(4, 1024);
	for (uint32_t i = 0; i < 300; i++) {
		v4(a, 0x0b000000 + (i << 8));
		add(a, 25, random_val());
	}
	for (uint32_t i = 0; i < 8700; i++) {
		v4(a, 0x0c000000 + (i << 8));
		add(a, 24, random_val());
	}
	expect_chunks("grown", 3, 2);
	for (uint32_t i = 0; i < 8700; i++) {
		v4(a, 0x0c000000 + (i << 8));
		del(a, 24);
	}
	for (uint32_t i = 128; i < 300; i++) {
		v4(a, 0x0b000000 + (i << 8));
		del(a, 25);
	}
	expect_chunks("128 /25s left", 1, 1);
	/* A group of chunk 1 in its grace keeps the chunk. */
	v4(a, 0x0b000000 + (200 << 8));
	add(a, 25, random_val());
	v4(a, 0x0b000000 + (201 << 8));
	add(a, 25, random_val());
	expect_chunks("130 /25s", 2, 1);
	f4.grace_ns = 3600ull * 1000000000ull;
	v4(a, 0x0b000000 + (200 << 8));
	del(a, 25);
	v4(a, 0x0b000000 + (201 << 8));
	del(a, 25);
	expect_chunks("groups of chunk 1 in their grace", 2, 1);
	f4.grace_ns = 0;
	expect_chunks("their grace over", 1, 1);
	/* Free low slots and groups, rules left high: adoption, then the
	 * low ones are taken again first. */
	for (uint32_t i = 0; i < 64; i++) {
		v4(a, 0x0b000000 + (i << 8));
		del(a, 25);
	}
	close_tables();
	open_tables(1024, true);
	if (f4.entry_writes || f4.nrules != 64)
		fail("adoption: %llu entries rewritten, %u prefixes",
		     (unsigned long long)f4.entry_writes, f4.nrules);
	check_step("adopted, rules in slots 64..127");
	for (uint32_t i = 0; i < 64; i++) {
		v4(a, 0x0d000000 + (i << 8));
		add(a, 26, random_val());
	}
	expect_chunks("64 more in the low slots and groups", 1, 1);
	while (nlive)
		del_at(nlive - 1);
	expect_chunks("all deleted", 0, 0);
	if (f4.parts.live || fib4_map_bytes(&f4))
		fail("%u parts, %llu bytes of maps with no prefix",
		     f4.parts.live, (unsigned long long)fib4_map_bytes(&f4));
	finish();
}

/* The live tbl24 entry of /24 index i (what the fast path reads now). */
static uint32_t live24(uint32_t i)
{
	uint32_t w = i / 2, p = FPMD_TBL24_PART_OF(w), k;
	uint64_t v;

	k = w - p * FPMD_TBL24_PART_WORDS;
	if (!chunks_present(&f4.parts, p) || f4.parts.state[p] != CHUNK_LIVE)
		fail("live24: part %u of /24 %u not live", p, i);
	if (bpf_map_lookup_elem(chunks_fd(&f4.parts, p), &k, &v))
		fail("live24: read part %u: %s", p, strerror(errno));
	return (uint32_t)(v >> (32 * (i & 1)));
}

/*
 * The one- and two-word tbl24 writes are gathered and stored at the
 * commit (fib4_scatter_flush). A tbl8 group freed meanwhile (its /24's
 * last /25 deleted) must not be handed out again while the fast path can
 * still read the pointer to it: with one group, a /25 elsewhere needs it
 * at once, and by then the live tbl24 no longer points at it. Also: the
 * gathered words are stored before a part is published whole, and a
 * table full of gathered words stays exact (one flush per 2000).
 */
static void case_v4_gathered(void)
{
	uint8_t a[16], b[16];
	uint32_t ia = 0x0b0001, ib = 0x0b0003;
	uint64_t stores;

	start(4, 1);
	v4(a, ia << 8 | 0x80);
	add(a, 25, random_val());
	v4(b, ib << 8);
	add(b, 24, random_val());
	check_step("a /25 in group 0, a /24 beside it");
	if (FPMD_RT_TYPE(live24(ia)) != FPMD_RT_TBL8)
		fail("the /25's /24 does not point at a group");
	f4.grace_ns = 0;
	del(a, 25);  /* the pointer's word gathered, group 0 freed */
	if (!f4.nsc || FPMD_RT_TYPE(live24(ia)) != FPMD_RT_TBL8)
		fail("the collapse was not gathered (%u words)", f4.nsc);
	v4(b, ib << 8 | 0x80);
	add(b, 25, random_val()); /* needs group 0 again */
	if (FPMD_RT_TYPE(live24(ia)) == FPMD_RT_TBL8)
		fail("group 0 handed out again while the fast path still "
		     "points at it from %u", ia);
	check_step("group 0 reused for the other /24");
	/* Thousands of /24s in live parts: several flushes before the
	 * commit, each in order. */
	for (uint32_t i = 0; i < 5000; i++) {
		v4(a, (0x0b0100 + i * 3) << 8);
		add(a, 24, random_val());
	}
	check_step("5000 /24s");
	stores = f4.syscalls;
	for (uint32_t i = 0; i < 5000; i++) {
		v4(a, (0x0b0100 + i * 3) << 8);
		add(a, 24, random_val()); /* replaced: live parts now */
	}
	if (f4.syscalls - stores != 5000 / FPMD_TBL24_SCATTER_MAX ||
	    f4.nsc != 5000 % FPMD_TBL24_SCATTER_MAX)
		fail("5000 one-word changes: %llu runs, %u words gathered",
		     (unsigned long long)(f4.syscalls - stores), f4.nsc);
	check_step("5000 /24s replaced");
	finish();
}

/*
 * A covering route deleted under live parts, then a restart: a default
 * route withdrawn while /24s keep tbl24 parts live. tbl24_dflt keeps the
 * old default under those parts (read only where no part is), and the
 * adoption once started its parts from it: the restarted fpmd forwarded
 * every address no prefix covers by the withdrawn default.
 */
static void case_v4_adopt_default_gone(void)
{
	uint8_t a[16] = { 0 };

	start(4, 64);
	add(a, 0, random_val());
	for (uint32_t i = 0; i < 64; i++) {
		v4(a, (0x0a0000 + i * 0x40000) << 8); /* a /24 every 1024 */
		add(a, 24, random_val());
	}
	check_step("a default route, 64 /24s under it");
	memset(a, 0, sizeof(a));
	del(a, 0);
	check_step("the default route withdrawn");
	close_tables();
	open_tables(64, true);
	check("after adoption: no default route");
	finish();
}

/* ---- the chunk module (fpmd/fib/chunks.c) ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Chunk idx as the outer map holds it: its first value, or -1: none. */
static int64_t outer_first(int outer, uint32_t idx)
{
	uint32_t id, zero = 0;
	uint64_t v;
	int fd;

	if (bpf_map_lookup_elem(outer, &idx, &id))
		return -1;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		fail("chunk %u: fd of id %u: %s", idx, id, strerror(errno));
	if (bpf_map_lookup_elem(fd, &zero, &v))
		fail("chunk %u: lookup: %s", idx, strerror(errno));
	close(fd);
	return (int64_t)v;
}

static int make_outer(uint32_t nchunks, uint32_t per_chunk)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, oo);
	int tmpl, outer;

	tmpl = bpf_map_create(BPF_MAP_TYPE_ARRAY, "tmpl", 4, 8, per_chunk, &o);
	if (tmpl < 0)
		fail("inner template: %s", strerror(errno));
	oo.inner_map_fd = tmpl;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "outer", 4, 4,
			       nchunks, &oo);
	if (outer < 0)
		fail("outer map: %s", strerror(errno));
	close(tmpl);
	return outer;
}

/*
 * Chunks appear only when committed, all in one outer update; a dropped
 * one stays visible until the commit; adoption finds them and their
 * contents through the mapping. Also measures what a grace period costs
 * (one outer update alone versus a batch of 32).
 */
static void case_chunks(void)
{
	const uint32_t per = 512, nch = 64;
	int outer = make_outer(nch, per), ret;
	struct chunks c, d;
	uint64_t t0, one_ns, batch_ns;

	ret = chunks_open(&c, outer, 8, per, true, false);
	if (ret)
		fail("chunks_open: %s", strerror(-ret));
	if (chunks_get(&c, 3, false) != -ENOENT)
		fail("chunk 3 exists before its creation");
	if (chunks_get(&c, nch, true) != -ERANGE)
		fail("chunk %u past the end was created", nch);
	for (uint32_t i = 0; i < 3; i++) {
		ret = chunks_get(&c, i * 7, true);
		if (ret)
			fail("chunks_get(%u): %s", i * 7, strerror(-ret));
		((uint64_t *)chunks_mem(&c, i * 7))[0] = 1000 + i * 7;
		((uint64_t *)chunks_mem(&c, i * 7))[per - 1] = 7;
	}
	if (outer_first(outer, 7) != -1 || c.npending != 3 || c.live)
		fail("a pending chunk is visible before the commit");
	ret = chunks_commit(&c, 64);
	if (ret)
		fail("chunks_commit: %s", strerror(-ret));
	if (c.grace_waits != 1)
		fail("3 pending chunks took %llu outer updates, not 1",
		     (unsigned long long)c.grace_waits);
	for (uint32_t i = 0; i < 3; i++)
		if (outer_first(outer, i * 7) != 1000 + i * 7)
			fail("chunk %u not visible after the commit", i * 7);
	if (c.live != 3 || chunks_bytes(&c) != 3ull * per * 8)
		fail("counters: %u live, %llu bytes", c.live,
		     (unsigned long long)chunks_bytes(&c));
	chunks_drop(&c, 7);
	if (outer_first(outer, 7) != 1007)
		fail("a dropped chunk vanished before the commit");
	chunks_drop(&c, 14);
	if (chunks_get(&c, 14, false)) /* kept again before the commit */
		fail("a dropping chunk could not be kept");
	ret = chunks_commit(&c, 64);
	if (!ret)
		ret = chunks_collect(&c, true); /* the reaper's deletes */
	if (ret || outer_first(outer, 7) != -1 ||
	    outer_first(outer, 14) != 1014 || chunks_present(&c, 7) ||
	    c.live != 2 || c.nreaping)
		fail("drop of chunk 7 / keep of chunk 14 (ret %d)", ret);
	/* Handed to the reaper, then wanted again: taken back whole if its
	 * delete had not begun, else made anew; either way present, and
	 * the outer map holds what the table holds. */
	for (uint32_t round = 0; round < 64; round++) {
		chunks_drop(&c, 14);
		ret = chunks_commit(&c, 64);
		if (ret || chunks_get(&c, 14, true))
			fail("round %u: drop then get of chunk 14", round);
		ret = chunks_commit(&c, 0);
		ret = ret ? ret : chunks_collect(&c, true);
		if (ret || !chunks_present(&c, 14) || c.live != 2 ||
		    c.nreaping)
			fail("round %u: chunk 14 lost (ret %d, %u live)", round,
			     ret, c.live);
		if (outer_first(outer, 14) !=
		    (int64_t)((uint64_t *)chunks_mem(&c, 14))[0])
			fail("round %u: the outer map holds another chunk 14",
			     round);
	}
	((uint64_t *)chunks_mem(&c, 14))[0] = 1014;
	((uint64_t *)chunks_mem(&c, 14))[per - 1] = 7;
	/* A restarted user takes the live chunks over, mapped. */
	ret = chunks_open(&d, outer, 8, per, true, true);
	if (ret)
		fail("chunks_open (adopt): %s", strerror(-ret));
	if (d.live != 2 || !chunks_present(&d, 0) || !chunks_present(&d, 14) ||
	    chunks_present(&d, 7) ||
	    ((uint64_t *)chunks_mem(&d, 14))[per - 1] != 7)
		fail("adoption found %u chunks, or the wrong ones", d.live);
	chunks_close(&d);
	/* What a grace period costs: one chunk alone, then 32 at once. */
	chunks_get(&c, 40, true);
	t0 = now_ns();
	chunks_commit(&c, 64);
	one_ns = now_ns() - t0;
	for (uint32_t i = 0; i < 32; i++)
		chunks_get(&c, 20 + i + (i >= 20), true);
	t0 = now_ns();
	ret = chunks_commit(&c, 64);
	batch_ns = now_ns() - t0;
	if (ret || c.live != 35)
		fail("batch of 32: %s, %u live", strerror(-ret), c.live);
	chunks_close(&c);
	close(outer);
	printf("PASS %s: one outer update %.1f ms, a batch of 32 %.1f ms\n",
	       case_name, one_ns / 1e6, batch_ns / 1e6);
}

/* ---- DXR (fib4c.c): the same sequences, and its own ---- */

static void case_dxr_random(void)
{
	dxr = true;
	case_v4_random();
}

static void case_dxr_covering(void)
{
	static const int lens[] = { 0, 8, 15, 16, 17, 24, 25, 28, 31, 32 };
	static const int parents_first[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	static const int children_first[] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 };
	static const int middle[] = { 4, 5, 3, 0, 9, 2, 6, 1, 7, 8 };
	const int n = ARRAY_SIZE(lens);

	dxr = true;
	start(4, 64);
	nest_chain(lens, n, 0x0a0102ff, parents_first);
	nest_chain(lens, n, 0x0a010200, children_first);
	nest_chain(lens, n, 0xc0a80180, middle);
	/* The last address of a /16 and the first of the next. */
	{
		uint8_t a[16];

		v4(a, 0x0b01ffff);
		add(a, 32, random_val());
		v4(a, 0x0b020000);
		add(a, 32, random_val());
		check_step("/32 at both sides of a /16 boundary");
		v4(a, 0x0b01ffff);
		del(a, 32);
		check_step("one deleted");
	}
	finish();
}

static void case_dxr_adopt(void)
{
	dxr = true;
	case_adopt(4);
}

/*
 * Adoption rebuilds only the /16s a replayed prefix covers, and those
 * that publish something: the latter catch a /16 whose prefix is gone
 * from rules_v4 while its ranges are still published (an fpmd stopped
 * between the two). Made by clearing one prefix's record by hand: the
 * only prefix of its /16, under no shorter one.
 */
static void case_dxr_adopt_stale(void)
{
	struct fib4c_pfx *p;
	struct fpmd_rule_v4 *rec;
	uint8_t a[16] = { 0 };
	uint32_t slot;

	dxr = true;
	start(4, 64);
	churn(2000, 2000);
	v4(a, 0xc6330700); /* 198.51.7.0/24 */
	for (size_t i = 0; i < nlive; i++)
		if (live[i].len <= 16 && (live[i].addr[0] == 198 ||
					  live[i].len < 8))
			del_at(i--);
	for (size_t i = 0; i < nlive; i++)
		if (live[i].addr[0] == 198 && live[i].addr[1] == 51)
			del_at(i--);
	add(a, 24, random_val());
	fib4c_commit(&f4c);
	check_step("198.51.7.0/24 alone in its /16");
	p = fib4c_pfind(&f4c, 0xc6330700, 24);
	if (!p)
		fail("198.51.7.0/24 not found");
	slot = p->slot;
	rec = (struct fpmd_rule_v4 *)chunks_mem(&f4c.rulec,
					       slot / FPMD_RULES_CHUNK) +
	      slot % FPMD_RULES_CHUNK;
	__atomic_store_n(&rec->flags, 0, __ATOMIC_RELEASE);
	oracle_del(a, 24);
	{
		ssize_t i = live_find(a, 24);

		if (i < 0)
			fail("198.51.7.0/24 not in the oracle's list");
		live[i] = live[--nlive];
	}
	extra_base[0].prefixlen = 24;
	memcpy(extra_base[0].addr, a, 4);
	nextra = 1; /* its addresses drawn too */
	close_tables();
	open_tables(64, true);
	check("after adoption: the lost prefix is gone from the lookup");
	nextra = 0;
	finish();
}

/* A default route's record cleared by hand (an fpmd stopped between the
 * two), its value still in index 0: adoption must make index 0 the miss. */
static void default_lost(void)
{
	struct fib4c_pfx *p = fib4c_pfind(&f4c, 0, 0);
	struct fpmd_rule_v4 *rec;
	uint8_t a[16] = { 0 };
	ssize_t i = live_find(a, 0);

	if (!p || i < 0)
		fail("no default route to lose");
	rec = (struct fpmd_rule_v4 *)chunks_mem(&f4c.rulec,
					       p->slot / FPMD_RULES_CHUNK) +
	      p->slot % FPMD_RULES_CHUNK;
	__atomic_store_n(&rec->flags, 0, __ATOMIC_RELEASE);
	oracle_del(a, 0);
	live[i] = live[--nlive];
}

/*
 * The default route paints nothing (fib4c.c default_set): value index 0
 * carries it. Added, changed, a /8 under it added and removed, adopted
 * by a restarted writer, removed, and adopted once more with its record
 * lost; each of these a single value write, no /16 rebuilt.
 */
static void case_dxr_default(void)
{
	static const char *const steps[] = { "a default route",
					     "the default route changed",
					     "the default route removed" };
	uint8_t a[16] = { 0 }, b[16];

	dxr = true;
	start(4, 64);
	churn(2000, 2000);
	for (size_t i = 0; i < nlive; i++) /* churn's own /0, if any */
		if (!live[i].len)
			del_at(i--);
	check_step("no default route");
	for (int k = 0; k < 3; k++) {
		uint64_t w = f4c.entry_writes;
		uint64_t t0 = now_ns();

		if (k < 2)
			add(a, 0, random_val());
		else
			del(a, 0);
		if (f4c.ndlist || f4c.entry_writes - w != 1)
			fail("%s: %u /16s to rebuild, %llu entries written "
			     "(want 0 and 1)", steps[k], f4c.ndlist,
			     (unsigned long long)(f4c.entry_writes - w));
		if (now_ns() - t0 > 1000000)
			fail("%s took %.1f ms", steps[k],
			     (now_ns() - t0) / 1e6);
		check_step(steps[k]);
		if (k == 1) {
			v4(b, 0x0a000000);
			add(b, 8, random_val());
			check_step("10.0.0.0/8 under the default");
			del(b, 8);
			check_step("10.0.0.0/8 removed: the default again");
			close_tables();
			open_tables(64, true);
			check("adopted with the default route");
		}
	}
	add(a, 0, random_val());
	fib4c_commit(&f4c);
	default_lost();
	close_tables();
	open_tables(64, true);
	check("after adoption: the lost default route is gone");
	finish();
}

/* Every value index in use, then one more value: refused, the table
 * intact; values freed by deletes come back after the commit. */
static void case_dxr_values_full(void)
{
	uint8_t a[16];
	uint32_t base = 0x0c000000;
	int refused = 0;

	dxr = true;
	start(4, 64);
	for (uint32_t i = 0; i < FPMD_DXR_VALS; i++) {
		int ret;

		v4(a, base + (i << 8));
		ret = add_new(a, 24, FPMD_RT_ENCODE(FPMD_RT_NEXTHOP, i + 1));
		if (ret == -ENOSPC)
			refused++;
		else if (ret)
			fail("add: %s", strerror(-ret));
	}
	/* index 0 is the miss: FPMD_DXR_VALS - 1 values fit */
	if (refused != 1)
		fail("%d of %u distinct values refused, expected 1", refused,
		     FPMD_DXR_VALS);
	check("value table full");
	for (int i = 0; i < 100; i++)
		del_at(rnd() % nlive);
	check("100 deleted");
	f4c.grace_ns = 0;
	fib4c_commit(&f4c);
	for (uint32_t i = 0; i < 100; i++) {
		v4(a, 0x0d000000 + (i << 8));
		if (add_new(a, 24, FPMD_RT_ENCODE(FPMD_RT_GROUP, i + 1)))
			fail("value %u refused after deletes freed 100", i);
	}
	check("freed values reused");
	finish();
}

/*
 * A BGP-like table (tests/fibproto/fibgen.h: 100k prefixes, 64 nexthops,
 * /25-/32 included) loaded in batches as fpmd gets them, checked, half
 * deleted and replaced, checked again, then adopted. Prints the rates.
 */
static void case_dxr_bulk(void)
{
	const size_t n = 100000;
	struct fg_route *r = calloc(n, sizeof(*r));
	double t0, tload, tdel;
	uint32_t nshort, nlong;
	uint8_t a[16];

	dxr = true;
	if (!r || !fg_gen(r, n, 64, 7))
		fail("out of memory");
	start(4, 64);
	t0 = (double)clock() / CLOCKS_PER_SEC;
	for (size_t i = 0; i < n; i++) {
		uint32_t h = htonl(r[i].addr), ret;

		memset(a, 0, 16);
		memcpy(a, &h, 4);
		ret = (uint32_t)fib4c_add(
			&f4c, a, (uint8_t)r[i].len,
			FPMD_RT_ENCODE(FPMD_RT_NEXTHOP, r[i].nh + 1));
		if (ret)
			fail("add %zu: %s", i, strerror(-(int)ret));
		if (i % 256 == 255)
			fib4c_commit(&f4c);
	}
	fib4c_commit(&f4c);
	tload = (double)clock() / CLOCKS_PER_SEC - t0;
	/* The oracle and the bases, in bulk (live_find is linear). */
	live = realloc(live, n * sizeof(*live));
	if (!live)
		fail("out of memory");
	cap_live = n;
	for (size_t i = 0; i < n; i++) {
		uint32_t h = htonl(r[i].addr);

		memset(live[i].addr, 0, 16);
		memcpy(live[i].addr, &h, 4);
		live[i].len = (uint8_t)r[i].len;
		live[i].val = FPMD_RT_ENCODE(FPMD_RT_NEXTHOP, r[i].nh + 1);
		oracle_put(live[i].addr, live[i].len, live[i].val);
	}
	nlive = n;
	check("100k BGP-like prefixes");
	/* 64 nexthops: most /16s pack their ranges short; those with a /25
	 * or longer keep long ones. Both formats must be what was checked. */
	fib4c_block_counts(&f4c, &nshort, &nlong);
	if (!nshort || !nlong)
		fail("%u /16s with short ranges, %u with long: both formats "
		     "should be in use", nshort, nlong);
	t0 = (double)clock() / CLOCKS_PER_SEC;
	for (size_t i = 0; i < n / 2; i++) {
		size_t k = rnd() % nlive;

		oracle_del(live[k].addr, live[k].len);
		if (fib4c_del(&f4c, live[k].addr, live[k].len))
			fail("delete failed");
		live[k] = live[--nlive];
		if (i % 256 == 255)
			fib4c_commit(&f4c);
	}
	fib4c_commit(&f4c);
	tdel = (double)clock() / CLOCKS_PER_SEC - t0;
	check("half deleted");
	close_tables();
	open_tables(64, true);
	if (f4c.entry_writes)
		fail("adoption rewrote %llu entries",
		     (unsigned long long)f4c.entry_writes);
	check("after adoption");
	{
		uint64_t ranges = f4c.ranges;
		double mib = fib4c_map_bytes(&f4c) / 1048576.0;

		free(r);
		finish();
		printf("  %zu prefixes loaded in %.3f s (%.0f/s, commit every "
		       "256), %zu deleted in %.3f s (%.0f/s); %llu range "
		       "words, %.2f MiB of lookup maps; at 100k %u /16s with "
		       "short ranges, %u with long\n",
		       n, tload, n / tload, n / 2, tdel, n / 2 / tdel,
		       (unsigned long long)ranges, mib, nshort, nlong);
	}
}

/*
 * Range space comes back: 250k BGP-like prefixes loaded in batches leave
 * blocks behind; deleting two thirds leaves more. Chunks must be emptied
 * and dropped (fib4c.c compact()) while every lookup stays right.
 */
static void case_dxr_compact(void)
{
	const size_t n = 250000; /* rules_v4 holds 1 << 18 here */
	struct fg_route *r = calloc(n, sizeof(*r));
	uint64_t peak, allowed;
	uint8_t a[16];
	char step[64];

	dxr = true;
	if (!r || !fg_gen(r, n, 64, 11))
		fail("out of memory");
	start(4, 64);
	for (size_t i = 0; i < n; i++) {
		uint32_t h = htonl(r[i].addr);

		memset(a, 0, 16);
		memcpy(a, &h, 4);
		if (add_new(a, (int)r[i].len,
			    FPMD_RT_ENCODE(FPMD_RT_NEXTHOP, r[i].nh + 1)))
			fail("add %zu failed", i);
		if (i % 1000 == 999)
			fib4c_commit(&f4c);
	}
	check("250k loaded in batches");
	peak = fib4c_map_bytes(&f4c);
	for (size_t i = 0; i < 2 * n / 3; i++) {
		size_t k = rnd() % nlive;

		oracle_del(live[k].addr, live[k].len);
		if (fib4c_del(&f4c, live[k].addr, live[k].len))
			fail("delete failed");
		live[k] = live[--nlive];
		if (i % 1000 == 999) {
			fib4c_commit(&f4c);
			if (i % 50000 == 49999) {
				snprintf(step, sizeof(step),
					 "%zu deleted, %llu chunks emptied",
					 i + 1,
					 (unsigned long long)f4c.evacuated);
				check_step(step);
			}
		}
	}
	for (int i = 0; i < 64; i++)
		fib4c_commit(&f4c); /* settle: one chunk at a time */
	check("two thirds deleted, settled");
	/* At most two chunks' worth free (plus the one being filled). */
	allowed = (uint64_t)FPMD_DXR_DIR * 8 + (uint64_t)FPMD_DXR_VAL_WORDS * 8 +
		  ((f4c.ranges + FPMD_DXR_CHUNK_RANGES - 1) /
			   FPMD_DXR_CHUNK_RANGES +
		   3) * FPMD_DXR_CHUNK_RANGES * 4;
	if (!f4c.evacuated || fib4c_map_bytes(&f4c) > allowed ||
	    fib4c_map_bytes(&f4c) >= peak)
		fail("range space not given back: %.2f MiB at the peak, %.2f "
		     "MiB now for %llu ranges (at most %.2f), %llu chunks "
		     "emptied",
		     peak / 1048576.0, fib4c_map_bytes(&f4c) / 1048576.0,
		     (unsigned long long)f4c.ranges, allowed / 1048576.0,
		     (unsigned long long)f4c.evacuated);
	close_tables();
	open_tables(64, true);
	check("after adoption");
	free(r);
	finish();
}

static const struct fcase {
	const char *name;
	void (*run)(void);
} cases[] = {
	{ "chunks", case_chunks },
	{ "ipv4-part-index", case_v4_part_index },
	{ "ipv4-random", case_v4_random },
	{ "ipv4-covering", case_v4_covering },
	{ "ipv4-groups-full", case_v4_groups_full },
	{ "ipv4-adopt", case_v4_adopt },
	{ "ipv4-parts", case_v4_parts },
	{ "ipv4-chunks-grow", case_v4_chunks_grow },
	{ "ipv4-adopt-sparse", case_v4_adopt_sparse },
	{ "ipv4-shrink", case_v4_shrink },
	{ "ipv6-random", case_v6_random },
	{ "ipv6-covering", case_v6_covering },
	{ "ipv6-markers", case_v6_markers },
	{ "ipv6-adopt", case_v6_adopt },
	{ "ipv6-grow", case_v6_grow },
	/* Last: a case's seed is its index, keep the others' sequences. */
	{ "dxr-random", case_dxr_random },
	{ "dxr-covering", case_dxr_covering },
	{ "dxr-adopt", case_dxr_adopt },
	{ "dxr-adopt-stale", case_dxr_adopt_stale },
	{ "dxr-values-full", case_dxr_values_full },
	{ "dxr-bulk", case_dxr_bulk },
	{ "dxr-compact", case_dxr_compact },
	{ "ipv6-direct", case_v6_direct },
	{ "dxr-default", case_dxr_default },
	{ "ipv4-gathered", case_v4_gathered },
	{ "ipv4-adopt-default-gone", case_v4_adopt_default_gone },
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

int main(int argc, char **argv)
{
	/* FIB_CHECK_SEED=N: every case from seed N instead of its index
	 * (to try other sequences; a failure names the case). */
	const char *seed = getenv("FIB_CHECK_SEED");
	int ran = 0;

	if (argc > 1 && !strcmp(argv[1], "--list")) {
		for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
			printf("%s\n", cases[i].name);
		return 0;
	}
	libbpf_set_print(libbpf_print);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		bool want = argc == 1;

		for (int k = 1; k < argc; k++)
			want |= !strcmp(argv[k], cases[i].name);
		if (!want)
			continue;
		case_name = cases[i].name;
		hold_drops = false;
		dxr = false;
		rng = 0x66706d64u + (seed ? strtoull(seed, NULL, 0) : i);
		total_lookups = 0;
		cases[i].run();
		ran++;
	}
	if (!ran) {
		fprintf(stderr, "fib_check: no such case\n");
		return 2;
	}
	return 0;
}
