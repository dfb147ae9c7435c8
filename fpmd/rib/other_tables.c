// SPDX-License-Identifier: GPL-2.0-or-later
/* Routes of other tables than main: counted and shown, never programmed. */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "rib/rib_int.h"

static struct other_route *other_find(enum rib_source src,
				      const struct prefix *p, uint32_t table,
				      uint32_t h)
{
	for (struct hnode *n = ht_chain(&rib_other, h); n; n = n->next) {
		struct other_route *o = container_of(n, struct other_route,
						     node);

		if (n->hash == h && o->table == table && o->src == src &&
		    !memcmp(&o->p, p, sizeof(*p)))
			return o;
	}
	return NULL;
}

const struct other_route *rib_other_find(enum rib_source src,
					 const struct prefix *p, uint32_t table)
{
	return other_find(src, p, table, prefix_hash(p) ^ table);
}

void rib_other_add(enum rib_source src, const struct prefix *p, uint32_t table,
		   uint32_t gen, uint8_t proto)
{
	uint32_t h = prefix_hash(p) ^ table;
	struct other_route *o;
	char pb[PREFIX_STRLEN];

	rib_stats.other_table++;
	o = other_find(src, p, table, h);
	if (o) {
		o->gen = gen;
		o->proto = proto;
		return;
	}
	o = slab_alloc(&other_cache);
	if (!o)
		return;
	o->gen = gen;
	o->proto = proto;
	o->p = *p;
	o->table = table;
	o->src = (uint8_t)src;
	ht_insert(&rib_other, &o->node, h);
	note_size();
	if (rib_other.count <= 10 || !(rib_other.count % 10000))
		log_info("%s: route %s in table %u: not programmed (only the "
			 "main table is; %zu such routes)",
			 rib_source_name(src), fmt_prefix(p, pb), table,
			 rib_other.count);
}

void rib_other_del(enum rib_source src, const struct prefix *p,
		   uint32_t table)
{
	struct other_route *o = other_find(src, p, table,
					   prefix_hash(p) ^ table);

	if (o) {
		ht_remove(&rib_other, &o->node);
		slab_free(&other_cache, o);
	}
}
