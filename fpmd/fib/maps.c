// SPDX-License-Identifier: GPL-2.0-or-later
/* The map writer: every BPF map update fpmd makes goes through here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fib/fib4.h"
#include "fib/fib4c.h"
#include "fib/fib6.h"
#include "fib/maps.h"
#include "fib/nhtab.h"

struct fpmd_map_fds mapfd = {
	.routes_v4 = -1, .routes_v6 = -1, .nexthops = -1, .nh_groups = -1,
	.neigh_v4 = -1, .neigh_v6 = -1, .local_v4 = -1, .local_v4_filter = -1,
	.tx_ports = -1, .ifaces = -1, .ifaces_direct = -1, .stats = -1,
	.meta = -1, .tbl24 = -1, .tbl8 = -1,
	.rules_v4 = -1, .slots_v6 = -1, .lens_v6 = -1, .tbl24_stage = -1,
	.tbl24_dflt = -1, .tbl24_fill = -1,
	.tbl24_commit = -1, .dxr_dir = -1, .dxr_rng = -1, .dxr_val = -1,
};

int fpmd_fib4_algo = FPMD_FIB4_DIR24;
int fpmd_fib6_algo = FPMD_FIB6_BSPL;
uint32_t fpmd_tbl8_groups = FPMD_TBL8_GROUPS;

/* Open when the fast algorithms are in use; NULL with the LPM tries. */
static struct fib4 fib4_store, *fib4;
static struct fib4c fib4c_store, *fib4c; /* DXR */
static struct fib6 fib6_store, *fib6;
static struct nhtab nhtab;

static int err(int ret)
{
	return ret < 0 ? (errno ? -errno : ret) : 0;
}

int maps_fib_open(bool adopt, uint32_t max_routes_v4, uint32_t slots_v6)
{
	int ret;

	if (fpmd_fib4_algo == FPMD_FIB4_DIR24) {
		struct fib4_maps m = {
			.tbl24 = mapfd.tbl24, .tbl8 = mapfd.tbl8,
			.rules_v4 = mapfd.rules_v4,
			.tbl24_stage = mapfd.tbl24_stage,
			.tbl24_dflt = mapfd.tbl24_dflt,
			.tbl24_fill = mapfd.tbl24_fill,
			.commit_prog = mapfd.tbl24_commit,
		};

		ret = fib4_open(&fib4_store, &m, fpmd_tbl8_groups,
				max_routes_v4, adopt);
		if (ret)
			return ret;
		fib4 = &fib4_store;
	}
	if (fpmd_fib4_algo == FPMD_FIB4_DXR) {
		struct fib4c_maps m = {
			.dxr_dir = mapfd.dxr_dir, .dxr_rng = mapfd.dxr_rng,
			.dxr_val = mapfd.dxr_val, .rules_v4 = mapfd.rules_v4,
		};

		ret = fib4c_open(&fib4c_store, &m, max_routes_v4, adopt);
		if (ret)
			return ret;
		fib4c = &fib4c_store;
		/* Adoption rebuilt the /16s where they differ: now. */
		ret = adopt ? fib4c_commit(fib4c) : 0;
		if (ret) {
			maps_fib_close();
			return ret;
		}
	}
	if (fpmd_fib6_algo == FPMD_FIB6_BSPL) {
		ret = fib6_open(&fib6_store, mapfd.slots_v6, mapfd.lens_v6,
				slots_v6, adopt);
		if (ret) {
			maps_fib_close();
			return ret;
		}
		fib6 = &fib6_store;
	}
	return 0;
}

void maps_fib_close(void)
{
	if (fib4)
		fib4_close(fib4);
	if (fib4c)
		fib4c_close(fib4c);
	fib4c = NULL;
	if (fib6)
		fib6_close(fib6);
	fib4 = NULL;
	fib6 = NULL;
}

/* After a mass delete (rib_trim): the lookup tables' own hash tables. */
void maps_fib_trim(void)
{
	if (fib4)
		ht_shrink(&fib4->by_prefix, 1024);
	if (fib6)
		ht_shrink(&fib6->nodes, 1024);
}

static uint64_t fib4_drops(void)
{
	return fib4->parts.dropped + fib4->t8c.dropped + fib4->rulec.dropped;
}

/*
 * A test-only fault (fpmd(8), ENVIRONMENT): while the file that
 * FPMD_TEST_FAULT_COMMIT names exists, new IPv4 table parts and new
 * nexthop and group chunks fail to publish with ENOMEM, as a refused
 * outer map update would; nothing else changes. Unset (always, outside
 * tests) it costs one load.
 */
static bool fault_commit(void)
{
	static const char *path;
	static bool read;

	if (!read) {
		path = getenv("FPMD_TEST_FAULT_COMMIT");
		read = true;
	}
	return path && *path && !access(path, F_OK);
}

int maps_commit(uint32_t max_drops)
{
	if (max_drops && fib6)
		fib6_tidy(fib6);
	/* The fault fails publishing only: gathered words are stored. */
	if (fault_commit() && (!fib4 || !fib4_scatter_flush(fib4)) &&
	    ((fib4c && fib4c_pending(fib4c)) || (fib4 && fib4_pending(fib4))))
		return -ENOMEM;
	if (fib4c) {
		int ret = max_drops ? fib4c_rules_shrink(fib4c) : 0;

		if (!ret && fib4c_pending(fib4c))
			ret = fib4c_commit(fib4c);
		return ret;
	}
	if (!fib4 || (!fib4_pending(fib4) && !max_drops))
		return 0;
	return fib4_commit(fib4, max_drops);
}

bool maps_route_published(const struct prefix *p)
{
	if (p->family != AF_INET)
		return true;
	if (fib4c)
		return fib4c_published(fib4c, p->addr, p->len);
	return !fib4 || fib4_published(fib4, p->addr, p->len);
}

int maps_shrink(uint32_t max_drops, uint32_t nh_top, uint32_t group_top)
{
	uint64_t d0 = fib4 ? fib4_drops() : 0;
	uint32_t left = max_drops;
	int ret = maps_commit(max_drops);

	if (ret)
		return ret;
	if (fib4)
		left -= fib4_drops() - d0 < max_drops ?
				(uint32_t)(fib4_drops() - d0) :
				max_drops;
	return nhtab_shrink(&nhtab, nh_top, group_top, &left);
}

static void count(struct maps_chunk_counts *n, const struct chunks *c)
{
	if (!c->state)
		return;
	n->live += c->live;
	n->dropping += c->ndropping + c->nreaping;
	n->dropped += c->dropped;
	n->bytes += chunks_bytes(c);
}

void maps_chunk_counts(struct maps_chunk_counts *n)
{
	memset(n, 0, sizeof(*n));
	if (fib4) {
		count(n, &fib4->parts);
		count(n, &fib4->t8c);
		count(n, &fib4->rulec);
	}
	if (fib4c) {
		count(n, &fib4c->rc);
		count(n, &fib4c->rulec);
	}
	if (fib6 && fib6->chunks) {
		n->live += fib6->nslots / FPMD_V6_CHUNK_SLOTS;
		n->bytes += (uint64_t)fib6->nslots * sizeof(struct fpmd_v6_slot);
	}
	count(n, &nhtab.nh);
	count(n, &nhtab.groups);
}

struct foreach_ctx {
	int family;
	int (*cb)(const struct prefix *p, uint32_t val, void *arg);
	void *arg;
};

static int foreach_one(const uint8_t *addr, uint8_t len, uint32_t val,
		       void *arg)
{
	struct foreach_ctx *c = arg;
	struct prefix p = { .family = (uint8_t)c->family, .len = len };

	memcpy(p.addr, addr, c->family == AF_INET ? 4 : 16);
	return c->cb(&p, val, c->arg);
}

int maps_routes_foreach(int family,
			int (*cb)(const struct prefix *p, uint32_t val,
				  void *arg),
			void *arg)
{
	struct foreach_ctx c = { family, cb, arg };
	struct fpmd_lpm_v6 k6, *pk6 = NULL;
	struct fpmd_lpm_v4 k4, *pk4 = NULL;
	struct fpmd_route_val v;
	int ret;

	if (family == AF_INET && fib4)
		return fib4_foreach(fib4, foreach_one, &c);
	if (family == AF_INET && fib4c)
		return fib4c_foreach(fib4c, foreach_one, &c);
	if (family == AF_INET6 && fib6)
		return fib6_foreach(fib6, foreach_one, &c);
	if (family == AF_INET) {
		while (!bpf_map_get_next_key(mapfd.routes_v4, pk4, &k4)) {
			pk4 = &k4;
			if (bpf_map_lookup_elem(mapfd.routes_v4, &k4, &v))
				continue;
			ret = foreach_one(k4.addr, (uint8_t)k4.prefixlen, v.val,
					  &c);
			if (ret)
				return ret;
		}
		return 0;
	}
	while (!bpf_map_get_next_key(mapfd.routes_v6, pk6, &k6)) {
		pk6 = &k6;
		if (bpf_map_lookup_elem(mapfd.routes_v6, &k6, &v))
			continue;
		ret = foreach_one(k6.addr, (uint8_t)k6.prefixlen, v.val, &c);
		if (ret)
			return ret;
	}
	return 0;
}

int maps_route_write(const struct prefix *p, uint32_t val)
{
	struct fpmd_route_val v = { .val = val };

	if (p->family == AF_INET && fib4)
		return fib4_add(fib4, p->addr, p->len, val);
	if (p->family == AF_INET && fib4c)
		return fib4c_add(fib4c, p->addr, p->len, val);
	if (p->family == AF_INET6 && fib6)
		return fib6_add(fib6, p->addr, p->len, val);
	if (p->family == AF_INET) {
		struct fpmd_lpm_v4 k = { .prefixlen = p->len };

		memcpy(k.addr, p->addr, 4);
		return err(bpf_map_update_elem(mapfd.routes_v4, &k, &v, BPF_ANY));
	} else {
		struct fpmd_lpm_v6 k = { .prefixlen = p->len };

		memcpy(k.addr, p->addr, 16);
		return err(bpf_map_update_elem(mapfd.routes_v6, &k, &v, BPF_ANY));
	}
}

int maps_route_delete(const struct prefix *p)
{
	int ret;

	if (p->family == AF_INET && fib4) {
		ret = fib4_del(fib4, p->addr, p->len);
		return ret == -ENOENT ? 0 : ret;
	}
	if (p->family == AF_INET && fib4c) {
		ret = fib4c_del(fib4c, p->addr, p->len);
		return ret == -ENOENT ? 0 : ret;
	}
	if (p->family == AF_INET6 && fib6) {
		ret = fib6_del(fib6, p->addr, p->len);
		return ret == -ENOENT ? 0 : ret;
	}
	if (p->family == AF_INET) {
		struct fpmd_lpm_v4 k = { .prefixlen = p->len };

		memcpy(k.addr, p->addr, 4);
		ret = bpf_map_delete_elem(mapfd.routes_v4, &k);
	} else {
		struct fpmd_lpm_v6 k = { .prefixlen = p->len };

		memcpy(k.addr, p->addr, 16);
		ret = bpf_map_delete_elem(mapfd.routes_v6, &k);
	}
	if (ret < 0 && errno == ENOENT)
		return 0;
	return err(ret);
}

int maps_nh_open(bool adopt)
{
	return nhtab_open(&nhtab, mapfd.nexthops, mapfd.nh_groups, adopt);
}

void maps_nh_close(void)
{
	nhtab_close(&nhtab);
}

int maps_nexthop_read(uint32_t index, struct fpmd_nexthop *nh)
{
	return nhtab_nexthop_read(&nhtab, index, nh);
}

int maps_group_read(uint32_t index, struct fpmd_nh_group *g)
{
	return nhtab_group_read(&nhtab, index, g);
}

int maps_nexthop_write(uint32_t index, const struct fpmd_nexthop *nh)
{
	/* The test fault: a slot in a chunk not made yet (its publishing
	 * would be refused). */
	if (!chunks_present(&nhtab.nh, index >> FPMD_NH_CHUNK_SHIFT) &&
	    fault_commit())
		return -ENOMEM;
	return nhtab_nexthop_write(&nhtab, index, nh);
}

/* Before a nexthop or group index is cleared (and maybe reused), the
 * routes deleted from pending parts must be gone from the fast path. */
int maps_nexthop_clear(uint32_t index)
{
	int ret = maps_commit(0);

	return ret ? ret : nhtab_nexthop_clear(&nhtab, index);
}

int maps_group_write(uint32_t index, const struct fpmd_nh_group *g)
{
	if (!chunks_present(&nhtab.groups, index >> FPMD_GROUP_CHUNK_SHIFT) &&
	    fault_commit())
		return -ENOMEM;
	return nhtab_group_write(&nhtab, index, g);
}

int maps_group_clear(uint32_t index)
{
	int ret = maps_commit(0);

	return ret ? ret : nhtab_group_clear(&nhtab, index);
}

int maps_neigh_write(int family, uint32_t ifindex, const uint8_t *addr,
		     const uint8_t mac[6], uint16_t flags)
{
	struct fpmd_neigh_val v = { .flags = flags };

	memcpy(v.mac, mac, 6);
	if (family == AF_INET) {
		struct fpmd_neigh_v4_key k = { .ifindex = ifindex };

		memcpy(k.addr, addr, 4);
		return err(bpf_map_update_elem(mapfd.neigh_v4, &k, &v, BPF_ANY));
	} else {
		struct fpmd_neigh_v6_key k = { .ifindex = ifindex };

		memcpy(k.addr, addr, 16);
		return err(bpf_map_update_elem(mapfd.neigh_v6, &k, &v, BPF_ANY));
	}
}

int maps_neigh_delete(int family, uint32_t ifindex, const uint8_t *addr)
{
	int ret;

	if (family == AF_INET) {
		struct fpmd_neigh_v4_key k = { .ifindex = ifindex };

		memcpy(k.addr, addr, 4);
		ret = bpf_map_delete_elem(mapfd.neigh_v4, &k);
	} else {
		struct fpmd_neigh_v6_key k = { .ifindex = ifindex };

		memcpy(k.addr, addr, 16);
		ret = bpf_map_delete_elem(mapfd.neigh_v6, &k);
	}
	if (ret < 0 && errno == ENOENT)
		return 0;
	return err(ret);
}

/* The ifaces_direct copy of an entry; of none (i NULL): zeroes. */
static struct fpmd_iface direct_entry(const struct fpmd_iface *i)
{
	struct fpmd_iface v = { 0 };

	if (i) {
		v = *i;
		v.flags |= FPMD_IF_F_PRESENT;
	}
	return v;
}

static int iface_direct_write(uint32_t ifindex, const struct fpmd_iface *i)
{
	struct fpmd_iface v = direct_entry(i);

	if (ifindex >= FPMD_IFINDEX_DIRECT)
		return 0;
	return err(bpf_map_update_elem(mapfd.ifaces_direct, &ifindex, &v,
				       BPF_ANY));
}

int maps_iface_write(uint32_t ifindex, const struct fpmd_iface *i)
{
	int ret = err(bpf_map_update_elem(mapfd.ifaces, &ifindex, i, BPF_ANY));

	return ret ? ret : iface_direct_write(ifindex, i);
}

int maps_ifaces_direct_rebuild(void)
{
	static struct fpmd_iface img[FPMD_IFINDEX_DIRECT];
	static uint32_t keys[FPMD_IFINDEX_DIRECT];
	uint32_t k, *pk = NULL, n = FPMD_IFINDEX_DIRECT;
	struct fpmd_iface v;

	for (k = 0; k < FPMD_IFINDEX_DIRECT; k++) {
		keys[k] = k;
		img[k] = direct_entry(NULL);
	}
	while (!bpf_map_get_next_key(mapfd.ifaces, pk, &k)) {
		pk = &k;
		if (k < FPMD_IFINDEX_DIRECT &&
		    !bpf_map_lookup_elem(mapfd.ifaces, &k, &v))
			img[k] = direct_entry(&v);
	}
	/* One write: every entry goes from its old value to its new one. */
	return err(bpf_map_update_batch(mapfd.ifaces_direct, keys, img, &n,
					NULL));
}

int maps_iface_delete(uint32_t ifindex)
{
	int ret = iface_direct_write(ifindex, NULL);

	if (ret)
		return ret;
	ret = bpf_map_delete_elem(mapfd.ifaces, &ifindex);

	if (ret < 0 && errno == ENOENT)
		return 0;
	return err(ret);
}

static struct fpmd_local_filter local_filter;

static int local_filter_write(void)
{
	uint32_t zero = 0;

	return err(bpf_map_update_elem(mapfd.local_v4_filter, &zero,
				       &local_filter, BPF_ANY));
}

int maps_local_v4_filter_rebuild(void)
{
	uint32_t k, *pk = NULL;

	memset(&local_filter, 0, sizeof(local_filter));
	while (!bpf_map_get_next_key(mapfd.local_v4, pk, &k)) {
		fpmd_local_filter_add(&local_filter, k);
		pk = &k;
	}
	return local_filter_write();
}

int maps_local_v4_add(const uint8_t addr[4])
{
	struct fpmd_local_v4_val v = { 1 };
	uint32_t k;
	int ret;

	memcpy(&k, addr, 4);
	/* The bit first: a key without its bit would go unseen. */
	fpmd_local_filter_add(&local_filter, k);
	ret = local_filter_write();
	if (ret)
		return ret;
	return err(bpf_map_update_elem(mapfd.local_v4, &k, &v, BPF_ANY));
}

int maps_local_v4_delete(const uint8_t addr[4])
{
	uint32_t k;
	int ret;

	memcpy(&k, addr, 4);
	ret = bpf_map_delete_elem(mapfd.local_v4, &k);
	if (ret < 0 && errno == ENOENT)
		return 0;
	if (ret)
		return err(ret);
	/* Another address may share the bit: rebuild from what is left. */
	return maps_local_v4_filter_rebuild();
}

int maps_txport_add(uint32_t ifindex)
{
	struct bpf_devmap_val v = { .ifindex = ifindex };

	return err(bpf_map_update_elem(mapfd.tx_ports, &ifindex, &v, BPF_ANY));
}

int maps_txport_delete(uint32_t ifindex)
{
	int ret = bpf_map_delete_elem(mapfd.tx_ports, &ifindex);

	if (ret < 0 && errno == ENOENT)
		return 0;
	return err(ret);
}

int maps_stat_read(uint32_t slot, uint32_t reason, struct fpmd_stat *out)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t key = FPMD_STAT_INDEX(slot, reason);
	struct fpmd_stat *v;
	int ret;

	if (ncpu <= 0)
		return -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	ret = bpf_map_lookup_elem(mapfd.stats, &key, v);
	if (ret < 0) {
		ret = -errno;
		free(v);
		return ret;
	}
	memset(out, 0, sizeof(*out));
	for (int c = 0; c < ncpu; c++) {
		out->packets += v[c].packets;
		out->bytes += v[c].bytes;
	}
	free(v);
	return 0;
}

int maps_stats_clear_slot(uint32_t slot)
{
	int ncpu = libbpf_num_possible_cpus();
	struct fpmd_stat *z;
	int ret = 0;

	if (ncpu <= 0)
		return -EINVAL;
	z = calloc((size_t)ncpu, sizeof(*z));
	if (!z)
		return -ENOMEM;
	for (uint32_t r = 0; r < FPMD_R_MAX && !ret; r++) {
		uint32_t key = FPMD_STAT_INDEX(slot, r);

		ret = err(bpf_map_update_elem(mapfd.stats, &key, z, BPF_ANY));
	}
	free(z);
	return ret;
}

int maps_nexthops_used(uint32_t since,
		       void (*cb)(const struct fpmd_nexthop *nh, void *arg),
		       void *arg)
{
	return nhtab_nexthops_used(&nhtab, since, cb, arg);
}
