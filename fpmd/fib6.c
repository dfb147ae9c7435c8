// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * IPv6 binary search on prefix lengths (Waldvogel). Every node is one
 * hash_v6 entry: a route, a marker (on the search path of longer routes)
 * or both. A marker's value is the best route covering it at its length,
 * so a search that goes right past it and finds nothing longer still has
 * the answer. fpmd keeps the nodes, per length too, so that a route's
 * change can re-evaluate the markers under it.
 *
 * A new or vanished prefix length changes the search order (lens_v6):
 * then every marker is recomputed, the new ones written first, the list
 * flipped, the stale ones removed after a grace period.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>

#include "fib6.h"

struct fib6_node {
	struct hnode node;
	struct fib6_node *lnext, *lprev; /* same length */
	uint8_t addr[16];                /* host bits zero */
	uint8_t len;
	bool route;                      /* a route of its own */
	bool in_map;
	uint32_t val;                    /* the route's value */
	uint32_t written, wflags;        /* what hash_v6 holds */
	uint32_t refs;                   /* routes whose path passes here */
	uint32_t mark;                   /* refs under the new lens list */
};

#define GRACE_NS_DEFAULT 1000000ull

static void mask_addr(const uint8_t *a, uint8_t len, uint8_t *out)
{
	for (int i = 0; i < 16; i++) {
		int bits = len - 8 * i;

		out[i] = bits >= 8 ? a[i] : bits <= 0 ? 0 :
				     a[i] & (uint8_t)(0xff << (8 - bits));
	}
}

static uint32_t node_hash(const uint8_t *a, uint8_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ len, w[2];

	memcpy(w, a, 16);
	h = (h ^ w[0]) * 0x9e3779b97f4a7c15ull;
	h = (h ^ (h >> 29) ^ w[1]) * 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(h >> 32);
}

static struct fib6_node *node_find(const struct fib6 *f, const uint8_t *a,
				   uint8_t len)
{
	uint32_t h = node_hash(a, len);

	for (struct hnode *n = ht_chain(&f->nodes, h); n; n = n->next) {
		struct fib6_node *x = container_of(n, struct fib6_node, node);

		if (n->hash == h && x->len == len && !memcmp(x->addr, a, 16))
			return x;
	}
	return NULL;
}

static struct fib6_node *node_get(struct fib6 *f, const uint8_t *a,
				  uint8_t len)
{
	struct fib6_node *x = node_find(f, a, len);

	if (x)
		return x;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	memcpy(x->addr, a, 16);
	x->len = len;
	ht_insert(&f->nodes, &x->node, node_hash(a, len));
	x->lnext = f->by_len[len];
	if (x->lnext)
		x->lnext->lprev = x;
	f->by_len[len] = x;
	f->len_nodes[len]++;
	return x;
}

static void node_free(struct fib6 *f, struct fib6_node *x)
{
	ht_remove(&f->nodes, &x->node);
	if (x->lprev)
		x->lprev->lnext = x->lnext;
	else
		f->by_len[x->len] = x->lnext;
	if (x->lnext)
		x->lnext->lprev = x->lprev;
	f->len_nodes[x->len]--;
	free(x);
}

/* The best route covering a at length <= len (0: none). */
static uint32_t best_route(const struct fib6 *f, const uint8_t *a,
			   uint8_t len)
{
	uint8_t m[16];

	for (int l = len; l >= 0; l--) {
		struct fib6_node *x;

		if (!f->len_routes[l])
			continue;
		mask_addr(a, (uint8_t)l, m);
		x = node_find(f, m, (uint8_t)l);
		if (x && x->route)
			return x->val;
	}
	return 0;
}

static int map_write(struct fib6 *f, struct fib6_node *x, uint32_t v,
		     uint32_t flags)
{
	struct fpmd_lpm_v6 k = { .prefixlen = x->len };
	struct fpmd_v6_entry e = { .val = v, .flags = flags };

	memcpy(k.addr, x->addr, 16);
	if (!x->in_map && f->in_map >= f->max_entries)
		return -ENOSPC;
	if (bpf_map_update_elem(f->hash_fd, &k, &e, BPF_ANY))
		return errno == E2BIG ? -ENOSPC : -errno;
	f->map_writes++;
	if (!x->in_map)
		f->in_map++;
	x->in_map = true;
	x->written = v;
	x->wflags = flags;
	return 0;
}

static void map_remove(struct fib6 *f, struct fib6_node *x)
{
	struct fpmd_lpm_v6 k = { .prefixlen = x->len };

	if (!x->in_map)
		return;
	memcpy(k.addr, x->addr, 16);
	bpf_map_delete_elem(f->hash_fd, &k);
	f->map_writes++;
	f->in_map--;
	x->in_map = false;
}

/* Bring x's hash_v6 entry up to date; drop x when nothing needs it. */
static int node_sync(struct fib6 *f, struct fib6_node *x, bool keep)
{
	uint32_t v, flags;

	if (!x->route && !x->refs && !keep) {
		map_remove(f, x);
		node_free(f, x);
		return 0;
	}
	v = x->route ? x->val : best_route(f, x->addr, x->len);
	flags = x->route ? FPMD_V6E_F_ROUTE : 0;
	if (x->in_map && x->written == v && x->wflags == flags)
		return 0;
	return map_write(f, x, v, flags);
}

/* The marker lengths on the search path to len in lens[0..n). */
static int search_path(const uint8_t *lens, uint32_t n, uint8_t len,
		       uint8_t *out)
{
	uint32_t lo = 0, hi = n;
	int k = 0;

	while (lo < hi) {
		uint32_t mid = (lo + hi) >> 1;

		if (lens[mid] < len) {
			out[k++] = lens[mid];
			lo = mid + 1;
		} else if (lens[mid] > len) {
			hi = mid;
		} else {
			break;
		}
	}
	return k;
}

static int markers_adjust(struct fib6 *f, const uint8_t *a, uint8_t len,
			  int delta)
{
	uint8_t path[FPMD_V6_PROBES + 1], m[16];
	int n = search_path(f->lens_in_use, f->nlens, len, path), ret = 0;

	for (int i = 0; i < n; i++) {
		struct fib6_node *x;

		mask_addr(a, path[i], m);
		x = delta > 0 ? node_get(f, m, path[i]) : node_find(f, m, path[i]);
		if (!x)
			return delta > 0 ? -ENOMEM : 0;
		x->refs += delta;
		if (node_sync(f, x, false) && !ret)
			ret = -ENOSPC;
	}
	return ret;
}

static bool covers(const uint8_t *p, uint8_t len, const uint8_t *a)
{
	uint8_t m[16];

	mask_addr(a, len, m);
	return !memcmp(m, p, 16);
}

/* Markers longer than p/len under it: their best route may have changed. */
static void update_below(struct fib6 *f, const uint8_t *p, uint8_t len)
{
	for (int m = len + 1; m < FPMD_V6_LENS; m++) {
		int span = m - len;
		struct fib6_node *x, *next;

		if (!f->len_nodes[m])
			continue;
		if (span <= 16 && (1u << span) < f->len_nodes[m]) {
			for (uint32_t c = 0; c < (1u << span); c++) {
				uint8_t a[16];

				memcpy(a, p, 16);
				for (int b = 0; b < span; b++) {
					int bit = len + b;

					if (c >> (span - 1 - b) & 1)
						a[bit / 8] |= 0x80 >> (bit % 8);
				}
				x = node_find(f, a, (uint8_t)m);
				if (x && !x->route)
					node_sync(f, x, false);
			}
			continue;
		}
		for (x = f->by_len[m]; x; x = next) {
			next = x->lnext;
			if (!x->route && covers(p, len, x->addr))
				node_sync(f, x, false);
		}
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The set of prefix lengths changed: recompute every marker for the new
 * search order, write what changed, flip lens_v6, then drop the markers
 * only the old order needed.
 */
static int rebuild(struct fib6 *f)
{
	uint8_t lens[FPMD_V6_LENS], path[FPMD_V6_PROBES + 1], m[16];
	struct fib6_node **routes, *x;
	struct hnode *n, *tmp;
	uint32_t nl = 0, nr = 0, a;
	bool same, stale = false;
	size_t it;
	int ret = 0;

	f->rebuilds++;
	for (int l = 0; l < FPMD_V6_LENS; l++)
		if (f->len_routes[l])
			lens[nl++] = (uint8_t)l;
	routes = malloc((f->nroutes + 1) * sizeof(*routes));
	if (!routes)
		return -ENOMEM;
	ht_for_each(&f->nodes, n, tmp, it)
	{
		x = container_of(n, struct fib6_node, node);
		x->mark = 0;
		if (x->route)
			routes[nr++] = x;
	}
	for (uint32_t i = 0; i < nr; i++) {
		int k = search_path(lens, nl, routes[i]->len, path);

		for (int j = 0; j < k; j++) {
			mask_addr(routes[i]->addr, path[j], m);
			x = node_get(f, m, path[j]);
			if (!x) {
				ret = -ENOMEM;
				break;
			}
			x->mark++;
		}
	}
	free(routes);
	/* Before the flip, both orders' markers must answer right. */
	ht_for_each(&f->nodes, n, tmp, it)
	{
		x = container_of(n, struct fib6_node, node);
		if (!x->route && !x->refs && !x->mark) {
			/* Neither order passes here (a deleted route). */
			map_remove(f, x);
			node_free(f, x);
			continue;
		}
		if (!ret)
			ret = node_sync(f, x, true);
	}
	if (ret)
		goto sweep_new; /* the old order stays in force */
	same = nl == f->nlens && !memcmp(lens, f->lens_in_use, nl);
	if (!same) {
		a = f->lens->active & 1;
		memcpy(f->lens->len[!a], lens, nl);
		f->lens->n[!a] = nl;
		__atomic_store_n(&f->lens->active, !a, __ATOMIC_RELEASE);
		memcpy(f->lens_in_use, lens, nl);
		f->nlens = nl;
	}
	ht_for_each(&f->nodes, n, tmp, it)
	{
		x = container_of(n, struct fib6_node, node);
		if (!x->route && !x->mark && x->in_map)
			stale = true;
		x->refs = x->mark;
	}
	if (stale && !same) {
		uint64_t t = mono_ns() + f->grace_ns;

		while (mono_ns() < t)
			usleep(100);
	}
sweep_new:
	ht_for_each(&f->nodes, n, tmp, it)
	{
		x = container_of(n, struct fib6_node, node);
		if (!x->route && !x->refs) {
			map_remove(f, x);
			node_free(f, x);
		}
	}
	return ret;
}

int fib6_add(struct fib6 *f, const uint8_t a[16], uint8_t len, uint32_t val)
{
	struct fib6_node *x;
	uint8_t p[16];
	int ret;

	if (len > 128 || FPMD_RT_TYPE(val) == FPMD_RT_NONE)
		return -EINVAL;
	mask_addr(a, len, p);
	x = node_find(f, p, len);
	if (x && x->route) {
		if (x->val == val)
			return 0;
		x->val = val;
		ret = node_sync(f, x, false);
		update_below(f, p, len);
		return ret;
	}
	if (f->in_map + FPMD_V6_PROBES + 1 > f->max_entries)
		return -ENOSPC;
	x = node_get(f, p, len);
	if (!x)
		return -ENOMEM;
	x->route = true;
	x->val = val;
	f->nroutes++;
	if (!f->len_routes[len]++) {
		ret = rebuild(f);
		if (ret) {
			x->route = false;
			f->nroutes--;
			f->len_routes[len]--;
			node_sync(f, x, false);
		}
		return ret;
	}
	ret = markers_adjust(f, p, len, 1);
	if (!ret)
		ret = node_sync(f, x, false);
	if (ret) {
		x->route = false;
		f->nroutes--;
		f->len_routes[len]--;
		node_sync(f, x, false);
		markers_adjust(f, p, len, -1);
		return ret;
	}
	update_below(f, p, len);
	return 0;
}

int fib6_del(struct fib6 *f, const uint8_t a[16], uint8_t len)
{
	struct fib6_node *x;
	uint8_t p[16];

	if (len > 128)
		return -EINVAL;
	mask_addr(a, len, p);
	x = node_find(f, p, len);
	if (!x || !x->route)
		return -ENOENT;
	x->route = false;
	f->nroutes--;
	if (!--f->len_routes[len])
		return rebuild(f);
	node_sync(f, x, false); /* a marker now, or gone */
	update_below(f, p, len);
	markers_adjust(f, p, len, -1);
	return 0;
}

uint32_t fib6_lookup(const struct fib6 *f, const uint8_t a[16])
{
	uint32_t lo = 0, hi = f->nlens, best = 0;
	uint8_t m[16];

	while (lo < hi) {
		uint32_t mid = (lo + hi) >> 1;
		struct fib6_node *x;

		mask_addr(a, f->lens_in_use[mid], m);
		x = node_find(f, m, f->lens_in_use[mid]);
		if (x && x->in_map) {
			if (x->written)
				best = x->written;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return best;
}

int fib6_foreach(const struct fib6 *f,
		 int (*cb)(const uint8_t addr[16], uint8_t len, uint32_t val,
			   void *arg),
		 void *arg)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each(&f->nodes, n, tmp, i)
	{
		struct fib6_node *x = container_of(n, struct fib6_node, node);
		int ret;

		if (!x->route)
			continue;
		ret = cb(x->addr, x->len, x->val, arg);
		if (ret)
			return ret;
	}
	return 0;
}

/* Take hash_v6 and lens_v6 as a previous fpmd left them. */
static int adopt(struct fib6 *f)
{
	struct fpmd_lpm_v6 k, *pk = NULL;
	struct fpmd_v6_entry e;
	uint32_t a = f->lens->active & 1;

	f->nlens = f->lens->n[a] <= FPMD_V6_LENS ? f->lens->n[a] : 0;
	memcpy(f->lens_in_use, f->lens->len[a], f->nlens);
	while (!bpf_map_get_next_key(f->hash_fd, pk, &k)) {
		struct fib6_node *x;

		pk = &k;
		if (bpf_map_lookup_elem(f->hash_fd, &k, &e) || k.prefixlen > 128)
			continue;
		x = node_get(f, k.addr, (uint8_t)k.prefixlen);
		if (!x)
			return -ENOMEM;
		x->in_map = true;
		f->in_map++;
		x->written = e.val;
		x->wflags = e.flags;
		x->refs = 1; /* kept until the lens_v6 in force is settled */
		if ((e.flags & FPMD_V6E_F_ROUTE) &&
		    FPMD_RT_TYPE(e.val) != FPMD_RT_NONE) {
			x->route = true;
			x->val = e.val;
			f->nroutes++;
			f->len_routes[x->len]++;
		}
	}
	return rebuild(f);
}

int fib6_open(struct fib6 *f, int hash_fd, int lens_fd, uint32_t max_entries,
	      bool adopt_maps)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	void *p;
	int ret;

	memset(f, 0, sizeof(*f));
	f->hash_fd = hash_fd;
	f->max_entries = max_entries;
	f->grace_ns = GRACE_NS_DEFAULT;
	f->lens_len = (sizeof(struct fpmd_v6_lens) + 7) / 8 * 8;
	f->lens_len = (f->lens_len + pg - 1) / pg * pg;
	p = mmap(NULL, f->lens_len, PROT_READ | PROT_WRITE, MAP_SHARED, lens_fd,
		 0);
	if (p == MAP_FAILED)
		return -errno;
	f->lens = p;
	if (ht_init(&f->nodes, 1024)) {
		fib6_close(f);
		return -ENOMEM;
	}
	if (adopt_maps) {
		ret = adopt(f);
		if (ret) {
			fib6_close(f);
			return ret;
		}
	}
	return 0;
}

void fib6_close(struct fib6 *f)
{
	struct hnode *n, *tmp;
	size_t i;

	if (f->nodes.b) {
		ht_for_each(&f->nodes, n, tmp, i)
			free(container_of(n, struct fib6_node, node));
		ht_free(&f->nodes);
	}
	if (f->lens)
		munmap(f->lens, f->lens_len);
	memset(f, 0, sizeof(*f));
}
