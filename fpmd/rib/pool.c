// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Dense index pools: the nexthops and nh_groups map slots.
 *
 * Lowest free index first (stable, readable in bpftool dumps, and the
 * indices in use stay packed at the bottom, so the maps' chunks above
 * the highest one can go: pool_top), a used bit per index. Adoption
 * takes indices out of order.
 */
#include <stdlib.h>
#include <string.h>

#include "rib/rib_int.h"

struct idx_pool nh_pool, group_pool;

#define POOL_BIT(p, i) ((p)->used[(i) / 64] & (1ull << ((i) % 64)))

int pool_init(struct idx_pool *p, uint32_t max)
{
	memset(p, 0, sizeof(*p));
	p->used = calloc(max / 64 + 1, sizeof(*p->used));
	p->max = max;
	return p->used ? 0 : -1;
}

static void pool_mark(struct idx_pool *p, uint32_t idx, bool used)
{
	if (used)
		p->used[idx / 64] |= 1ull << (idx % 64);
	else
		p->used[idx / 64] &= ~(1ull << (idx % 64));
}

uint32_t pool_get(struct idx_pool *p)
{
	uint32_t w = p->lo / 64, nw = (p->max + 63) / 64, idx;

	while (w < nw && p->used[w] == ~0ull)
		w++;
	if (w >= nw)
		return NO_INDEX;
	idx = w * 64 + (uint32_t)__builtin_ctzll(~p->used[w]);
	if (idx >= p->max)
		return NO_INDEX;
	pool_mark(p, idx, true);
	p->lo = idx + 1;
	return idx;
}

void pool_put(struct idx_pool *p, uint32_t idx)
{
	if (idx == NO_INDEX || idx >= p->max || !POOL_BIT(p, idx))
		return;
	pool_mark(p, idx, false);
	if (idx < p->lo)
		p->lo = idx;
}

bool pool_take(struct idx_pool *p, uint32_t idx)
{
	if (idx >= p->max || POOL_BIT(p, idx))
		return false;
	pool_mark(p, idx, true);
	return true;
}

/* One past the highest index in use (0: none). */
static uint32_t pool_top(const struct idx_pool *p)
{
	for (uint32_t w = (p->max + 63) / 64; w-- > 0;)
		if (p->used[w])
			return w * 64 + 64 - (uint32_t)__builtin_clzll(p->used[w]);
	return 0;
}

void rib_index_tops(uint32_t *nh_top, uint32_t *group_top)
{
	*nh_top = pool_top(&nh_pool);
	*group_top = pool_top(&group_pool);
}

void pool_free(struct idx_pool *p)
{
	free(p->used);
	memset(p, 0, sizeof(*p));
}
