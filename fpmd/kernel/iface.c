// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Managed interfaces. Each configured name gets a slot (counters are keyed
 * by slot: ifindexes only grow and may come back different after a
 * re-create). The ifaces map holds what the fast path needs per ingress
 * interface; tx_ports holds the interfaces redirects may go out of.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel/iface.h"
#include "kernel/instance.h"
#include "kernel/tc_path.h"
#include "common/log.h"
#include "fib/maps.h"
#include "rib/rib.h"

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
		i->tc_link_fd = -1;
		snprintf(i->name, sizeof(i->name), "%s", name);
		snprintf(i->tx_reason, sizeof(i->tx_reason), "not present");
		/* Adopted maps keep counting across a restart. */
		if (clear_counters)
			maps_stats_clear_slot(i->slot);
		return i;
	}
	return NULL;
}

bool iface_read_mtu6(struct iface *i)
{
	char path[64 + IF_NAMESIZE], buf[32];
	uint32_t v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/mtu", i->name);
	f = fopen(path, "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			v = (uint32_t)strtoul(buf, NULL, 10);
		fclose(f);
	}
	if (v == i->mtu6)
		return false;
	if (v && i->ifindex)
		log_info("iface %s: IPv6 MTU (net.ipv6.conf.%s.mtu) %u", i->name,
			 i->name, v);
	i->mtu6 = v;
	return true;
}

bool iface_update(struct iface *i, const struct nl_link *l)
{
	bool up = l->admin_up && l->lower_up;
	bool changed = i->ifindex != l->ifindex || i->mtu != l->mtu ||
		       i->up != up || memcmp(i->mac, l->mac, 6);

	i->gen++;
	i->ifindex = l->ifindex;
	memcpy(i->mac, l->mac, 6);
	i->mtu = l->mtu;
	i->up = up;
	/* The kernel resets it to the device MTU on a change (addrconf). */
	if (iface_read_mtu6(i))
		changed = true;
	i->is_veth = !strcmp(l->kind, "veth");
	i->peer_ifindex = (int)l->link;
	i->peer_nsid = l->link_netnsid;
	return changed;
}

static void (*recheck_fn)(void);

void iface_set_recheck(void (*fn)(void))
{
	recheck_fn = fn;
}

static void (*attached_fn)(void);

void iface_set_attached(void (*fn)(void))
{
	attached_fn = fn;
}

void iface_attached_late(void)
{
	if (attached_fn)
		attached_fn();
}

void iface_gone(struct iface *i)
{
	uint32_t old = i->ifindex;

	if (!old)
		return;
	i->gen++;
	log_warn("iface %s (ifindex %u): removed from the kernel; its routes "
		 "go to the kernel path until it returns",
		 i->name, old);
	maps_iface_delete(old);
	maps_txport_delete(old);
	tc_iface_gone(i);
	i->attached = false;
	i->other_prog = 0;
	i->lost = false;
	i->up = false;
	i->tx_port = false;
	snprintf(i->tx_reason, sizeof(i->tx_reason), "not present");
	rib_iface_changed(old);
	/* Keep ifindex until nexthops are rewritten, then forget it; what
	 * names it (routes by hand) follows it when it comes back. */
	i->ifindex = 0;
	i->gone_ifindex = old;
}

/* Attachments looked at or changed by the loop itself: an answer of the
 * probe thread asked before is older than what it saw. */
static uint32_t watch_epoch;

static int attach_prog(struct iface *i, int prog_fd)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct prog_who w;
	uint32_t mode_flag, id;
	int ret;

	if (!i->ifindex)
		return -ENODEV;
	ret = bpf_xdp_query(i->ifindex, 0, &q);
	if (ret)
		return ret;
	id = q.prog_id ? q.prog_id : q.drv_prog_id ? q.drv_prog_id :
	     q.skb_prog_id ? q.skb_prog_id : q.hw_prog_id;
	/* By id, not by name: every fpmd's program has the same name. */
	instance_whose_prog(id, &w);
	if (w.owner == PROG_OTHER_FPMD || w.owner == PROG_FOREIGN) {
		if (id != i->other_prog)
			log_err("iface %s: %s is attached; not replacing it. "
				"Its traffic and the routes leaving by it take "
				"the kernel path%s",
				i->name, w.desc,
				w.owner == PROG_OTHER_FPMD ?
					" (one fpmd per interface)" :
					"; fpmd attaches when it is removed");
		i->other_prog = id;
		snprintf(i->other_desc, sizeof(i->other_desc), "%s", w.desc);
		return -EBUSY;
	}
	i->other_prog = 0;
	i->other_desc[0] = '\0';

	if (i->want_mode != XDP_MODE_GENERIC) {
		/* Replacing our own program is atomic: no packet sees none. */
		if (q.skb_prog_id)
			bpf_xdp_detach(i->ifindex, XDP_FLAGS_SKB_MODE, NULL);
		/* Nothing there: never over one that appears meanwhile. */
		mode_flag = XDP_FLAGS_DRV_MODE |
			    (id ? 0 : XDP_FLAGS_UPDATE_IF_NOEXIST);
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
	ret = bpf_xdp_attach(i->ifindex, prog_fd,
			     XDP_FLAGS_SKB_MODE |
				     (id ? 0 : XDP_FLAGS_UPDATE_IF_NOEXIST),
			     NULL);
	if (ret) {
		log_err("iface %s: generic XDP refused: %s", i->name,
			strerror(-ret));
		return ret;
	}
	i->mode = XDP_MODE_GENERIC;
ok:
	i->attached = true;
	log_info("iface %s (ifindex %u, slot %u): XDP attached in %s mode%s",
		 i->name, i->ifindex, i->slot,
		 i->mode == XDP_MODE_NATIVE ? "native" : "generic",
		 i->lost ? " (re-attached: nothing else was attached)" : "");
	i->lost = false;
	return 0;
}

int iface_attach(struct iface *i, int prog_fd)
{
	int ret = attach_prog(i, prog_fd);

	watch_epoch++;
	if (!ret)
		tc_adopt_pinned(i);
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
	watch_epoch++;
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
	tc_detach(i, false);
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

/* The answer for i: what iface_watch does once it knows id. */
static void watch_apply(struct iface *i, int prog_fd, uint32_t id)
{
	struct prog_who w;
	int ret;

	if (i->attached) {
		instance_whose_prog(id, &w);
		if (w.owner == PROG_OURS)
			return;
		/* Redirects into it and its entries stop now; the program
		 * there (if any) is not ours to serve. */
		i->attached = false;
		i->lost = true;
		maps_txport_delete(i->ifindex);
		maps_iface_delete(i->ifindex);
		if (id) {
			i->other_prog = id;
			snprintf(i->other_desc, sizeof(i->other_desc), "%s",
				 w.desc);
			log_err("iface %s: fpmd's XDP program was replaced by "
				"%s: its traffic and the routes leaving by it "
				"take the kernel path; fpmd does not replace it "
				"and re-attaches once it is removed",
				i->name, w.desc);
		} else {
			log_warn("iface %s: fpmd's XDP program was removed "
				 "(ip link set dev %s xdp off?): re-attaching",
				 i->name, i->name);
		}
		rib_iface_changed(i->ifindex);
	}
	/* Never attached (refused, not present yet): link events retry. */
	if (i->attached || (!i->lost && !i->other_prog))
		return;
	if (id && id == i->other_prog)
		return; /* still there, already reported */
	if (!id && i->other_prog)
		log_info("iface %s: %s is gone", i->name, i->other_desc);
	ret = iface_attach(i, prog_fd);
	if (ret) {
		/* Refused for another reason than a program in the way:
		 * logged once, retried on the next link event. */
		if (ret != -EBUSY)
			i->lost = false;
		return;
	}
	iface_sync(i);
	rib_iface_changed(i->ifindex);
	if (recheck_fn)
		recheck_fn();
}

void iface_watch(struct iface *i, int prog_fd)
{
	uint32_t id;

	/* TC_ONLY: no XDP here (tc_path.c watches its link). */
	if (i->tc_only || !i->ifindex ||
	    instance_attached_prog(i->ifindex, &id))
		return;
	watch_epoch++;
	watch_apply(i, prog_fd, id);
}

bool iface_watch_ask(const struct iface *i, struct iface_watch_ask *seen)
{
	if (!i->used || i->tc_only || !i->ifindex)
		return false;
	seen->epoch = watch_epoch;
	seen->ifindex = i->ifindex;
	seen->gen = i->gen;
	seen->attached = i->attached;
	seen->lost = i->lost;
	seen->other_prog = i->other_prog;
	return true;
}

bool iface_watch_seen(struct iface *i, int prog_fd,
		      const struct iface_watch_ask *seen, uint32_t id)
{
	struct iface_watch_ask now;

	/* An event, an attach or a detach since: that is newer. */
	if (!iface_watch_ask(i, &now) || now.epoch != seen->epoch ||
	    now.ifindex != seen->ifindex ||
	    now.gen != seen->gen || now.attached != seen->attached ||
	    now.lost != seen->lost || now.other_prog != seen->other_prog)
		return false;
	watch_apply(i, prog_fd, id);
	/* Its own re-attach leaves the other answers asked with it (other
	 * interfaces) as fresh as they were. */
	watch_epoch = now.epoch;
	return true;
}

const char *iface_xdp_state(const struct iface *i)
{
	if (i->attached)
		return "attached";
	if (!i->ifindex)
		return "absent";
	return i->other_prog ? "detached-foreign" : "detached";
}

const char *iface_xdp_reason(const struct iface *i)
{
	if (i->attached)
		return "";
	if (!i->ifindex)
		return "not present";
	if (i->other_prog)
		return i->other_desc;
	if (i->tc_only)
		return "TC_ONLY: the veth peer sends partial checksums, which "
		       "XDP would lose; fpmd's tc program serves it";
	return i->lost ? "fpmd's XDP program was removed" :
			 "XDP not attached";
}

bool iface_active(const struct iface *i)
{
	return i->attached || (i->tc_only && i->tc_attached);
}

bool iface_is_tx_port(const struct iface *i)
{
	return i && iface_active(i) && i->up && i->tx_port && !i->suspended;
}

const char *iface_tx_reason(const struct iface *i)
{
	if (iface_is_tx_port(i))
		return "";
	if (!iface_active(i)) {
		if (i->other_prog)
			return i->other_desc;
		return i->ifindex ? "XDP not attached" : "not present";
	}
	if (i->suspended)
		return "suspended: netfilter";
	return !i->up ? "down" : i->tx_reason;
}

static bool source_check;

/*
 * The kernel sets fib_has_custom_local_routes when user space adds a
 * route of type local, and never clears it; from then on every IPv4 source
 * is looked up (fib_validate_source). Sticky here too.
 */
void iface_set_source_check(void)
{
	if (source_check)
		return;
	source_check = true;
	log_info("kernel: a local route was added by hand: like the kernel, "
		 "IPv4 sources whose route is local now go to the kernel "
		 "(dropped there as martians)");
	for (int s = 0; s < FPMD_MAX_IFACES; s++)
		if (iface_tab[s].used && iface_active(&iface_tab[s]))
			iface_sync(&iface_tab[s]);
}

uint32_t iface_map_flags(const struct iface *i)
{
	uint32_t f = i->guard_flags;

	if (iface_active(i) && i->up && !i->suspended)
		f |= FPMD_IF_F_ENABLED;
	if (source_check)
		f |= FPMD_IF_F_SRC_CHECK;
	if (i->tc_attached)
		f |= FPMD_IF_F_TC;
	if (i->tc_only && i->tc_attached)
		f |= FPMD_IF_F_TC_ONLY;
	/* bpf_redirect_peer into a peer without carrier "succeeds" and the
	 * kernel drops: only while up with carrier. */
	if (i->peer_egress && iface_active(i) && i->up && !i->suspended)
		f |= FPMD_IF_F_PEER;
	return f;
}

void iface_sync(struct iface *i)
{
	struct fpmd_iface v = { .slot = i->slot };
	int ret;

	/* Not attached yet: entries adopted from a previous fpmd still serve
	 * the program it left running; deleting them now (the guards run
	 * before attach) would push traffic to the kernel mid-restart. */
	if (!i->ifindex || !iface_active(i))
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

/*
 * Egress MAC/MTU/slot for a nexthop on ifindex; false if unmanaged. The MTU
 * is the smaller of the device's and the IPv6 one: a nexthop serves both
 * families and the fast path has one MTU per nexthop.
 */
static bool iface_egress(uint32_t ifindex, uint8_t mac[6], uint16_t *mtu,
			 uint16_t *slot, bool *up)
{
	struct iface *i = iface_by_ifindex(ifindex);
	uint32_t m;

	if (!i || !iface_active(i)) {
		memset(mac, 0, 6);
		*mtu = 0;
		*slot = 0;
		*up = false;
		return false;
	}
	memcpy(mac, i->mac, 6);
	m = i->mtu6 && i->mtu6 < i->mtu ? i->mtu6 : i->mtu;
	*mtu = (uint16_t)(m > 0xffff ? 0xffff : m);
	*slot = (uint16_t)i->slot;
	*up = i->up;
	return true;
}

/* Families some attached interface takes into the fast path (bit 0 IPv4,
 * bit 1 IPv6), for the RIB's route status. */
static int iface_ingress_families(void)
{
	int fam = 0;

	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		const struct iface *i = &iface_tab[s];
		uint32_t f;

		if (!i->used || !i->ifindex || !iface_active(i))
			continue;
		f = iface_map_flags(i);
		if (!(f & FPMD_IF_F_ENABLED))
			continue;
		if ((f & FPMD_IF_F_FWD_V4) && !(f & FPMD_IF_F_KERNEL_V4))
			fam |= 1;
		if ((f & FPMD_IF_F_FWD_V6) && !(f & FPMD_IF_F_KERNEL_V6))
			fam |= 2;
	}
	return fam;
}

static bool iface_rib_tx_port(uint32_t ifindex)
{
	struct iface *i = iface_by_ifindex(ifindex);

	if (iface_is_tx_port(i))
		return true;
	/* A PEER egress: the tc program delivers, when every ingress has
	 * it (iface_map_flags holds the carrier rule). */
	return i && (iface_map_flags(i) & FPMD_IF_F_PEER) && tc_path_serving();
}

static const char *iface_rib_name(uint32_t ifindex)
{
	struct iface *i = iface_by_ifindex(ifindex);

	return i ? i->name : NULL;
}

static const struct rib_iface_ops iface_rib_ops = {
	.egress = iface_egress,
	.tx_port = iface_rib_tx_port,
	.name = iface_rib_name,
	.ingress_families = iface_ingress_families,
};

void iface_init(void)
{
	rib_set_iface_ops(&iface_rib_ops);
}
