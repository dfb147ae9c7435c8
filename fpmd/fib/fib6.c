// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * IPv6 binary search on prefix lengths (Waldvogel). Every node is one
 * slots_v6 entry: a route, a marker (on the search path of longer routes)
 * or both. A marker's value is the best route covering it at its length,
 * so a search that goes right past it and finds nothing longer still has
 * the answer. fpmd keeps the nodes, per length too, so that a route's
 * change can re-evaluate the markers under it.
 *
 * A new or vanished prefix length changes the search order (lens_v6):
 * then every marker is recomputed, the new ones written first, the list
 * flipped, the stale ones removed after a grace period.
 *
 * Nodes are also kept in address order (a crit-bit tree on address and
 * length), so the markers under a prefix are found without a scan.
 *
 * The table itself is a run of chunks in slots_v6; it doubles at half
 * full and halves below an eighth: the new table is built in the other
 * half of the outer map, lens_v6 flips to it, and the old chunks go after
 * a grace period.
 *
 * Here: the nodes (routes and markers), add / delete / lookup, adoption.
 * The slots_v6 table: fib6_table.c; the crit-bit tree: fib6_tree.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "fib/fib6_priv.h"

struct slab_cache fib6_node_cache =
	SLAB_CACHE_INIT("IPv6 table nodes", struct fib6_node);

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
	x = slab_alloc(&fib6_node_cache);
	if (!x)
		return NULL;
	memcpy(x->addr, a, 16);
	x->len = len;
	if (fib6_cb_insert(&f->tree, x)) {
		slab_free(&fib6_node_cache, x);
		return NULL;
	}
	ht_insert(&f->nodes, &x->node, node_hash(a, len));
	return x;
}

static void node_free(struct fib6 *f, struct fib6_node *x)
{
	fib6_cb_remove(&f->tree, x);
	ht_remove(&f->nodes, &x->node);
	slab_free(&fib6_node_cache, x);
}

uint32_t fib6_best(const struct fib6 *f, const uint8_t *a, int maxlen,
		   int *lenp)
{
	uint8_t m[16];

	for (int l = maxlen; l >= 0; l--) {
		struct fib6_node *x;

		if (!f->len_routes[l])
			continue;
		mask_addr(a, (uint8_t)l, m);
		x = node_find(f, m, (uint8_t)l);
		if (x && x->route) {
			*lenp = l;
			return x->val;
		}
	}
	return 0;
}

/* The best route covering a at length <= len (0: none). */
static uint32_t best_route(const struct fib6 *f, const uint8_t *a,
			   uint8_t len)
{
	int l;

	return fib6_best(f, a, len, &l);
}

/* Bring x's slots_v6 entry up to date; drop x when nothing needs it. */
static int node_sync(struct fib6 *f, struct fib6_node *x, bool keep)
{
	uint32_t v, flags;

	if (!x->route && !x->refs && !keep) {
		fib6_map_remove(f, x);
		node_free(f, x);
		return 0;
	}
	v = x->route ? x->val : best_route(f, x->addr, x->len);
	flags = x->route ? FPMD_V6S_ROUTE : 0;
	if (x->in_map && x->written == v && x->wflags == flags)
		return 0;
	return fib6_map_write(f, x, v, flags);
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

/* Markers longer than p/len under it: their best route may have changed. */
static void update_below(struct fib6 *f, const uint8_t *p, uint8_t len)
{
	struct node_list l = { 0 };

	fib6_cb_under(f->tree, p, len, &l);
	for (size_t i = 0; i < l.n; i++) {
		struct fib6_node *x = l.v[i];

		if (x->len > len && !x->route && x->refs)
			node_sync(f, x, false);
	}
	free(l.v);
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
	f->lens_stale = false;
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
			fib6_map_remove(f, x);
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
		f->lens->base[!a] = f->base;
		f->lens->mask[!a] = f->nslots - 1;
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
	if (stale && !same)
		fib6_grace(f);
sweep_new:
	ht_for_each(&f->nodes, n, tmp, it)
	{
		x = container_of(n, struct fib6_node, node);
		if (!x->route && !x->refs) {
			fib6_map_remove(f, x);
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
		if (!ret)
			fib6_direct_add(f, x, false);
		return ret;
	}
	if (f->in_map + FPMD_V6_PROBES + 1 > f->max_in_map)
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
		} else {
			fib6_direct_add(f, x, true);
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
	fib6_direct_add(f, x, true);
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
	/* The last route of its length: the search order loses a length,
	 * a rebuild that walks every route. In a big table (a mass delete
	 * empties lengths one after another) the length stays in the order
	 * instead, with markers only, as if another route of it were left;
	 * fib6_tidy() rebuilds once the table is small. */
	if (!--f->len_routes[len] && f->nroutes <= f->rebuild_now) {
		int ret = rebuild(f);

		fib6_direct_del(f, p, len);
		return ret;
	}
	if (!f->len_routes[len])
		f->lens_stale = true;
	node_sync(f, x, false); /* a marker now, or gone */
	update_below(f, p, len);
	markers_adjust(f, p, len, -1);
	fib6_direct_del(f, p, len);
	return 0;
}

int fib6_tidy(struct fib6 *f)
{
	bool settled = f->nroutes >= f->tidy_routes;
	int ret = 0;

	f->tidy_routes = f->nroutes;
	if (f->lens_stale && f->nroutes <= f->rebuild_now) {
		ret = rebuild(f);
		if (ret)
			f->lens_stale = true;
	}
	if (settled)
		fib6_shrink(f);
	return ret;
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

/* Take slots_v6 and lens_v6 as a previous fpmd left them. */
static int adopt(struct fib6 *f)
{
	uint32_t a;
	int ret = fib6_adopt_chunks(f);

	if (ret)
		return ret;
	if (!f->chunks)
		return fib6_fresh_table(f); /* nothing to adopt: start empty */
	a = f->lens->active & 1;
	f->nlens = f->lens->n[a] <= FPMD_V6_LENS ? f->lens->n[a] : 0;
	memcpy(f->lens_in_use, f->lens->len[a], f->nlens);
	for (uint32_t k = 0; k < f->nslots; k++) {
		struct fpmd_v6_slot *s = slot_at(f, k);
		uint8_t addr[16], m[16];
		uint32_t len = FPMD_V6S_LEN(s->tag);
		struct fib6_node *x;

		if (!(s->tag & FPMD_V6S_VALID))
			continue;
		memcpy(addr, &s->hi, 8);
		memcpy(addr + 8, &s->lo, 8);
		mask_addr(addr, (uint8_t)len, m);
		if (len > 128 || memcmp(m, addr, 16) || node_find(f, m, (uint8_t)len)) {
			store32(&s->tag, FPMD_V6S_TOMB); /* torn or foreign */
			continue;
		}
		x = node_get(f, m, (uint8_t)len);
		if (!x)
			return -ENOMEM;
		x->in_map = true;
		x->slot = k;
		f->in_map++;
		x->written = s->val;
		x->wflags = s->tag & FPMD_V6S_ROUTE;
		x->refs = 1; /* kept until the lens_v6 in force is settled */
		if ((s->tag & FPMD_V6S_ROUTE) &&
		    FPMD_RT_TYPE(s->val) != FPMD_RT_NONE) {
			x->route = true;
			x->val = s->val;
			f->nroutes++;
			f->len_routes[x->len]++;
		}
	}
	return rebuild(f);
}

uint32_t fib6_slots_for(uint32_t max_routes)
{
	uint64_t want = (uint64_t)max_routes * FPMD_V6_ENTRIES_PER_ROUTE * 2;
	uint32_t n = FPMD_V6_CHUNK_SLOTS;

	while (n < want && n < (1u << 31))
		n <<= 1;
	return n;
}

int fib6_open(struct fib6 *f, int slots_fd, int lens_fd, uint32_t max_slots,
	      bool adopt_maps)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int ret = -ENOMEM;
	void *p;

	memset(f, 0, sizeof(*f));
	f->filler_fd = -1;
	if (max_slots < FPMD_V6_CHUNK_SLOTS || (max_slots & (max_slots - 1)))
		return -EINVAL;
	f->outer_fd = slots_fd;
	f->max_slots = max_slots;
	f->max_in_map = max_slots / 10 * 6;
	f->grace_ns = GRACE_NS_DEFAULT;
	f->rebuild_now = FIB6_REBUILD_NOW;
	f->lens_len = (sizeof(struct fpmd_v6_lens) + pg - 1) / pg * pg;
	p = mmap(NULL, f->lens_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 lens_fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}
	f->lens = p;
	if (ht_init(&f->nodes, 1024))
		goto fail;
	ret = adopt_maps ? adopt(f) : fib6_fresh_table(f);
	if (!ret)
		ret = fib6_direct_open(f);
	if (ret)
		goto fail;
	return 0;
fail:
	fib6_close(f);
	return ret;
}

void fib6_close(struct fib6 *f)
{
	struct hnode *n, *tmp;
	size_t i;

	fib6_direct_close(f);
	fib6_cb_free(f->tree);
	if (f->nodes.b) {
		ht_for_each(&f->nodes, n, tmp, i)
			slab_free(&fib6_node_cache,
				  container_of(n, struct fib6_node, node));
		ht_free(&f->nodes);
	}
	/* The chunks stay in slots_v6 (pinned) for the next fpmd. */
	fib6_chunks_free(f->chunks, f->nslots / FPMD_V6_CHUNK_SLOTS);
	if (f->lens && f->filler_fd >= 0) /* opened */
		close(f->filler_fd);
	if (f->lens)
		munmap(f->lens, f->lens_len);
	memset(f, 0, sizeof(*f));
	f->filler_fd = -1;
}
