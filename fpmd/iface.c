// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Managed interfaces. Each configured name gets a slot (counters are keyed
 * by slot: ifindexes only grow and may come back different after a
 * re-create). The ifaces map holds what the fast path needs per ingress
 * interface; tx_ports holds the interfaces redirects may go out of.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "iface.h"
#include "log.h"
#include "maps.h"
#include "rib.h"

struct iface iface_tab[FPMD_MAX_IFACES];

struct iface *iface_by_ifindex(uint32_t ifindex)
{
	if (!ifindex)
		return NULL;
	for (int s = 0; s < FPMD_MAX_IFACES; s++)
		if (iface_tab[s].used && iface_tab[s].ifindex == ifindex)
			return &iface_tab[s];
	return NULL;
}

struct iface *iface_by_name(const char *name)
{
	for (int s = 0; s < FPMD_MAX_IFACES; s++)
		if (iface_tab[s].used && !strcmp(iface_tab[s].name, name))
			return &iface_tab[s];
	return NULL;
}

struct iface *iface_add(const char *name, bool clear_counters)
{
	struct iface *i = iface_by_name(name);

	if (i)
		return i;
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		i = &iface_tab[s];
		if (i->used)
			continue;
		memset(i, 0, sizeof(*i));
		i->used = true;
		i->slot = (uint32_t)s;
		i->peer_nsid = -1;
		snprintf(i->name, sizeof(i->name), "%s", name);
		snprintf(i->tx_reason, sizeof(i->tx_reason), "not present");
		/* Adopted maps keep counting across a restart. */
		if (clear_counters)
			maps_stats_clear_slot(i->slot);
		return i;
	}
	return NULL;
}

bool iface_update(struct iface *i, const struct nl_link *l)
{
	bool up = l->admin_up && l->lower_up;
	bool changed = i->ifindex != l->ifindex || i->mtu != l->mtu ||
		       i->up != up || memcmp(i->mac, l->mac, 6);

	i->ifindex = l->ifindex;
	memcpy(i->mac, l->mac, 6);
	i->mtu = l->mtu;
	i->up = up;
	i->is_veth = !strcmp(l->kind, "veth");
	i->peer_ifindex = (int)l->link;
	i->peer_nsid = l->link_netnsid;
	return changed;
}

void iface_gone(struct iface *i)
{
	uint32_t old = i->ifindex;

	if (!old)
		return;
	log_warn("iface %s (ifindex %u): removed from the kernel; its routes "
		 "go to the kernel path until it returns",
		 i->name, old);
	maps_iface_delete(old);
	maps_txport_delete(old);
	i->attached = false;
	i->up = false;
	i->tx_port = false;
	snprintf(i->tx_reason, sizeof(i->tx_reason), "not present");
	rib_iface_changed(old);
	/* Keep ifindex until nexthops are rewritten, then forget it; what
	 * names it (routes by hand) follows it when it comes back. */
	i->ifindex = 0;
	i->gone_ifindex = old;
}

static bool prog_is_ours(uint32_t id)
{
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);
	bool ours;

	if (fd < 0)
		return false;
	ours = !bpf_obj_get_info_by_fd(fd, &info, &len) &&
	       !strncmp(info.name, "fpmd_xdp", sizeof(info.name));
	close(fd);
	return ours;
}

static int attach_prog(struct iface *i, int prog_fd)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	uint32_t mode_flag;
	int ret;

	if (!i->ifindex)
		return -ENODEV;
	ret = bpf_xdp_query(i->ifindex, 0, &q);
	if (ret)
		return ret;
	if (q.attach_mode != XDP_ATTACHED_NONE) {
		uint32_t id = q.prog_id ? q.prog_id :
			      q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;

		if (!prog_is_ours(id)) {
			log_err("iface %s: another XDP program (id %u) is "
				"attached; not replacing it",
				i->name, id);
			return -EBUSY;
		}
	}

	if (i->want_mode != XDP_MODE_GENERIC) {
		/* Replacing our own program is atomic: no packet sees none. */
		if (q.skb_prog_id)
			bpf_xdp_detach(i->ifindex, XDP_FLAGS_SKB_MODE, NULL);
		mode_flag = XDP_FLAGS_DRV_MODE;
		ret = bpf_xdp_attach(i->ifindex, prog_fd, mode_flag, NULL);
		if (!ret) {
			i->mode = XDP_MODE_NATIVE;
			goto ok;
		}
		if (i->want_mode == XDP_MODE_NATIVE) {
			log_err("iface %s: native XDP refused: %s", i->name,
				strerror(-ret));
			return ret;
		}
		log_warn("iface %s: native XDP refused (%s); using generic "
			 "XDP, which is much slower",
			 i->name, strerror(-ret));
	}
	if (q.drv_prog_id)
		bpf_xdp_detach(i->ifindex, XDP_FLAGS_DRV_MODE, NULL);
	ret = bpf_xdp_attach(i->ifindex, prog_fd, XDP_FLAGS_SKB_MODE, NULL);
	if (ret) {
		log_err("iface %s: generic XDP refused: %s", i->name,
			strerror(-ret));
		return ret;
	}
	i->mode = XDP_MODE_GENERIC;
ok:
	i->attached = true;
	log_info("iface %s (ifindex %u, slot %u): XDP attached in %s mode",
		 i->name, i->ifindex, i->slot,
		 i->mode == XDP_MODE_NATIVE ? "native" : "generic");
	return 0;
}

int iface_attach(struct iface *i, int prog_fd)
{
	int ret = attach_prog(i, prog_fd);

	/* Entries adopted for an interface we cannot attach to are stale. */
	if (ret && i->ifindex) {
		maps_txport_delete(i->ifindex);
		maps_iface_delete(i->ifindex);
	}
	return ret;
}

void iface_detach(struct iface *i)
{
	if (!i->attached || !i->ifindex)
		return;
	bpf_xdp_detach(i->ifindex,
		       i->mode == XDP_MODE_NATIVE ? XDP_FLAGS_DRV_MODE :
						    XDP_FLAGS_SKB_MODE,
		       NULL);
	maps_txport_delete(i->ifindex);
	maps_iface_delete(i->ifindex);
	i->attached = false;
	log_info("iface %s: XDP detached", i->name);
}

void iface_remove(struct iface *i)
{
	uint32_t old = i->ifindex;

	iface_detach(i);
	if (old) {
		maps_txport_delete(old);
		maps_iface_delete(old);
	}
	i->used = false;
	i->attached = false;
	if (old)
		rib_iface_changed(old);
	log_info("iface %s: no longer routed by fpmd; its traffic and the "
		 "routes leaving by it take the kernel path",
		 i->name);
}

uint32_t iface_map_flags(const struct iface *i)
{
	uint32_t f = i->guard_flags;

	if (i->attached && i->up && !i->suspended)
		f |= FPMD_IF_F_ENABLED;
	return f;
}

void iface_sync(struct iface *i)
{
	struct fpmd_iface v = { .slot = i->slot };
	int ret;

	/* Not attached yet: entries adopted from a previous fpmd still serve
	 * the program it left running; deleting them now (the guards run
	 * before attach) would push traffic to the kernel mid-restart. */
	if (!i->ifindex || !i->attached)
		return;
	v.flags = iface_map_flags(i);
	memcpy(v.mac, i->mac, 6);
	v.mtu = (uint16_t)(i->mtu > 0xffff ? 0xffff : i->mtu);
	ret = maps_iface_write(i->ifindex, &v);
	if (ret)
		log_err("maps: iface %s: write failed: %s", i->name,
			strerror(-ret));
	if (i->up && i->tx_port && !i->suspended)
		ret = maps_txport_add(i->ifindex);
	else
		ret = maps_txport_delete(i->ifindex);
	if (ret)
		log_err("maps: tx_ports %s: write failed: %s", i->name,
			strerror(-ret));
}

bool iface_egress(uint32_t ifindex, uint8_t mac[6], uint16_t *mtu,
		  uint16_t *slot, bool *up)
{
	struct iface *i = iface_by_ifindex(ifindex);

	if (!i || !i->attached) {
		memset(mac, 0, 6);
		*mtu = 0;
		*slot = 0;
		*up = false;
		return false;
	}
	memcpy(mac, i->mac, 6);
	*mtu = (uint16_t)(i->mtu > 0xffff ? 0xffff : i->mtu);
	*slot = (uint16_t)i->slot;
	*up = i->up;
	return true;
}
