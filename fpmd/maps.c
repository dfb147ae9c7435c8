// SPDX-License-Identifier: GPL-2.0-or-later
/* The map writer: every BPF map update fpmd makes goes through here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "maps.h"

struct fpmd_map_fds mapfd = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1 };

const char *const fpmd_reason_names[FPMD_R_MAX] = {
	[FPMD_R_FORWARDED] = "forwarded",
	[FPMD_R_TX] = "tx",
	[FPMD_R_DROP_BLACKHOLE] = "drop-blackhole",
	[FPMD_R_PASS_NOT_IP] = "pass-not-ip",
	[FPMD_R_PASS_L2_OTHER] = "pass-l2-other",
	[FPMD_R_PASS_MALFORMED] = "pass-malformed",
	[FPMD_R_PASS_BAD_CSUM] = "pass-bad-checksum",
	[FPMD_R_PASS_TTL] = "pass-ttl",
	[FPMD_R_PASS_OPTIONS] = "pass-ip-options",
	[FPMD_R_PASS_LOCAL] = "pass-local",
	[FPMD_R_PASS_MCAST] = "pass-multicast",
	[FPMD_R_PASS_LINKLOCAL] = "pass-link-local",
	[FPMD_R_PASS_MARTIAN] = "pass-martian",
	[FPMD_R_PASS_NO_ROUTE] = "pass-no-route",
	[FPMD_R_PASS_UNREACHABLE] = "pass-unreachable",
	[FPMD_R_PASS_UNRESOLVED] = "pass-unresolved",
	[FPMD_R_PASS_EGRESS] = "pass-egress-kernel",
	[FPMD_R_PASS_MTU] = "pass-mtu",
	[FPMD_R_PASS_RPF] = "pass-rp-filter",
	[FPMD_R_PASS_POLICY] = "pass-policy",
	[FPMD_R_PASS_DISABLED] = "pass-disabled",
};

static int err(int ret)
{
	return ret < 0 ? (errno ? -errno : ret) : 0;
}

int maps_route_write(const struct prefix *p, uint32_t val)
{
	struct fpmd_route_val v = { .val = val };

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

int maps_nexthop_write(uint32_t index, const struct fpmd_nexthop *nh)
{
	return err(bpf_map_update_elem(mapfd.nexthops, &index, nh, BPF_ANY));
}

int maps_nexthop_clear(uint32_t index)
{
	struct fpmd_nexthop z = { 0 };

	return maps_nexthop_write(index, &z);
}

int maps_group_write(uint32_t index, const struct fpmd_nh_group *g)
{
	return err(bpf_map_update_elem(mapfd.nh_groups, &index, g, BPF_ANY));
}

int maps_group_clear(uint32_t index)
{
	struct fpmd_nh_group z = { 0 };

	return maps_group_write(index, &z);
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

int maps_iface_write(uint32_t ifindex, const struct fpmd_iface *i)
{
	return err(bpf_map_update_elem(mapfd.ifaces, &ifindex, i, BPF_ANY));
}

int maps_iface_delete(uint32_t ifindex)
{
	int ret = bpf_map_delete_elem(mapfd.ifaces, &ifindex);

	if (ret < 0 && errno == ENOENT)
		return 0;
	return err(ret);
}

int maps_local_v4_add(const uint8_t addr[4])
{
	struct fpmd_local_v4_val v = { 1 };
	uint32_t k;

	memcpy(&k, addr, 4);
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
	return err(ret);
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
