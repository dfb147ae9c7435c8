// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the fast path used: the epoch it stamps entries with (struct
 * fpmd_meta) and the neighbor entries carrying it (fpmd/neigh_use.c tells
 * the kernel). The nexthops' side is maps_nexthops_used (maps.c, which
 * holds the nexthop table).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <bpf/bpf.h>

#include "fib/maps.h"

static int err(int ret)
{
	return ret < 0 ? (errno ? -errno : ret) : 0;
}

int maps_epoch_next(uint32_t *ended)
{
	struct fpmd_meta m;
	uint32_t k = 0;

	if (bpf_map_lookup_elem(mapfd.meta, &k, &m))
		return err(-1);
	if (!m.epoch)
		m.epoch = 1; /* 0 is "never used" in the entries */
	*ended = m.epoch;
	m.epoch = m.epoch + 1 ? m.epoch + 1 : 1;
	return err(bpf_map_update_elem(mapfd.meta, &k, &m, BPF_EXIST));
}

/* Every entry of one neighbor map, a batch at a time. */
static int neighs_used(int fd, int family, size_t ksize, uint32_t since,
		       void (*cb)(int family, uint32_t ifindex,
				  const uint8_t *addr, void *arg),
		       void *arg)
{
	enum { BATCH = 256 };
	struct fpmd_neigh_val vals[BATCH];
	uint8_t keys[BATCH * sizeof(struct fpmd_neigh_v6_key)];
	uint64_t token;
	bool first = true;

	for (;;) {
		uint32_t n = BATCH;
		int ret = bpf_map_lookup_batch(fd, first ? NULL : &token,
					       &token, keys, vals, &n, NULL);
		bool end = ret && errno == ENOENT;

		if (ret && !end)
			return -errno;
		first = false;
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *k = keys + i * ksize;
			uint32_t ifindex;

			memcpy(&ifindex, k, 4);
			if (fpmd_epoch_since(vals[i].used, since))
				cb(family, ifindex, k + 4, arg);
		}
		if (end)
			return 0;
	}
}

int maps_neighs_used(uint32_t since,
		     void (*cb)(int family, uint32_t ifindex,
				const uint8_t *addr, void *arg),
		     void *arg)
{
	int ret = neighs_used(mapfd.neigh_v4, AF_INET,
			      sizeof(struct fpmd_neigh_v4_key), since, cb, arg);

	return ret ? ret : neighs_used(mapfd.neigh_v6, AF_INET6,
				       sizeof(struct fpmd_neigh_v6_key), since,
				       cb, arg);
}
