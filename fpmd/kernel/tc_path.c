// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Container paths (doc/containers.md). fpmd's tc program runs at tcx
 * ingress where it is needed: on a TC_ONLY interface (a veth whose peer
 * sends partial checksums: XDP would lose them, so no XDP there), and on
 * every XDP interface while some egress is a PEER veth (XDP hands it the
 * packets for bpf_redirect_peer). Links are pinned in the pin dir as
 * tc_<ifname>, so they outlive a restart like XDP does, and a new fpmd
 * swaps its program in with bpf_link_update.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/log.h"
#include "conf/conf.h"
#include "kernel/iface.h"
#include "kernel/instance.h"
#include "kernel/tc_path.h"
#include "rib/rib.h"

/* Debian's 6.1 UAPI headers predate tcx (kernel 6.6). */
#define TCX_INGRESS 46
#define TCX_F_BEFORE (1U << 3)
#define LINK_TYPE_TCX 11
#define TCX_MAX_PROGS 64

uint32_t tc_own_prog_id;
static int tc_prog_fd = -1;
static int xdp_fd = -1; /* to re-attach XDP when TC_ONLY ends */

static void pin_path(const char *ifname, char *buf, size_t len)
{
	snprintf(buf, len, "%s/tc_%s", cfg.pin_dir, ifname);
}

/* A tcx link's ifindex (0 once its device is gone), program and id. */
static int tcx_link_info(int fd, uint32_t *ifindex, uint32_t *prog_id,
			 uint32_t *id)
{
	struct bpf_link_info info = { 0 };
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != LINK_TYPE_TCX)
		return -EINVAL;
	/* tcx's {ifindex, attach_type} sits where xdp's ifindex does. */
	*ifindex = info.xdp.ifindex;
	*prog_id = info.prog_id;
	*id = info.id;
	return 0;
}

static uint32_t prog_id_of(int fd)
{
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

void tc_path_init(int prog_fd, int xdp_prog_fd)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	tc_prog_fd = prog_fd;
	xdp_fd = xdp_prog_fd;
	tc_own_prog_id = prog_fd >= 0 ? prog_id_of(prog_fd) : 0;
	d = opendir(cfg.pin_dir);
	while (d && (de = readdir(d))) {
		uint32_t ifx, pid, id;
		int fd;

		if (strncmp(de->d_name, "tc_", 3))
			continue;
		snprintf(path, sizeof(path), "%s/%s", cfg.pin_dir, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		/* The previous fpmd's program keeps running until this one
		 * replaces it, atomically. */
		if (!tcx_link_info(fd, &ifx, &pid, &id) && ifx &&
		    !bpf_link_update(fd, prog_fd, NULL))
			log_info("tc: adopted the tcx link %s (id %u, ifindex "
				 "%u): program replaced in place",
				 de->d_name + 3, id, ifx);
		close(fd);
	}
	if (d)
		closedir(d);
}

/* Is fpmd's tc program in i's tcx ingress list? */
static bool tc_really_attached(const struct iface *i)
{
	uint32_t ids[TCX_MAX_PROGS], cnt = TCX_MAX_PROGS;

	if (bpf_prog_query((int)i->ifindex, (enum bpf_attach_type)TCX_INGRESS,
			   0, NULL, ids, &cnt))
		return false;
	for (uint32_t k = 0; k < cnt && k < TCX_MAX_PROGS; k++)
		if (ids[k] == tc_own_prog_id)
			return true;
	return false;
}

static int tc_attach(struct iface *i)
{
	LIBBPF_OPTS(bpf_link_create_opts, o, .flags = TCX_F_BEFORE);
	char path[PATH_MAX];
	uint32_t ifx = 0, pid = 0, id = 0;
	bool adopted = false;
	int fd, ret;

	if (tc_prog_fd < 0 || !i->ifindex)
		return -ENODEV;
	pin_path(i->name, path, sizeof(path));
	/* A link left pinned by a previous fpmd (or this one): reuse it. */
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		if (!tcx_link_info(fd, &ifx, &pid, &id) && ifx == i->ifindex &&
		    (pid == tc_own_prog_id ||
		     !bpf_link_update(fd, tc_prog_fd, NULL))) {
			adopted = true;
			goto ok;
		}
		/* Of a gone or re-created interface. */
		close(fd);
		unlink(path);
	}
	/* BPF_F_BEFORE: first in the list, before any foreign program
	 * (which the tc-ingress guard reports anyway). */
	fd = bpf_link_create(tc_prog_fd, (int)i->ifindex,
			     (enum bpf_attach_type)TCX_INGRESS, &o);
	if (fd < 0) {
		ret = fd;
		if (strncmp(i->tc_reason, "tcx attach failed", 17))
			log_err("iface %s: tc program not attached at tcx "
				"ingress: %s; its container path stays off",
				i->name, strerror(-ret));
		snprintf(i->tc_reason, sizeof(i->tc_reason),
			 "tcx attach failed: %s", strerror(-ret));
		return ret;
	}
	if (bpf_obj_pin(fd, path))
		log_warn("iface %s: tcx link not pinned at %s (%s): a restart "
			 "detaches it",
			 i->name, path, strerror(errno));
	tcx_link_info(fd, &ifx, &pid, &id);
ok:
	i->tc_link_fd = fd;
	i->tc_link_id = id;
	i->tc_attached = true;
	i->tc_reason[0] = '\0';
	log_info("iface %s: tc program attached at tcx ingress (link id %u%s)",
		 i->name, id, adopted ? ", the pinned link kept" : "");
	return 0;
}

/*
 * A link a previous fpmd left pinned for i: take it over before i's first
 * map write, so XDP keeps handing PEER-bound packets to tc across a
 * restart instead of passing them to the kernel until the guard poll.
 */
void tc_adopt_pinned(struct iface *i)
{
	char path[PATH_MAX];

	if (i->tc_attached || tc_prog_fd < 0 || !i->ifindex)
		return;
	pin_path(i->name, path, sizeof(path));
	if (!access(path, F_OK))
		tc_attach(i);
}

void tc_detach(struct iface *i, bool keep)
{
	char path[PATH_MAX];

	if (i->tc_link_fd >= 0)
		close(i->tc_link_fd);
	i->tc_link_fd = -1;
	if (!keep) {
		/* The pin is the last reference: unlinking detaches. */
		pin_path(i->name, path, sizeof(path));
		if (!unlink(path) && i->tc_attached)
			log_info("iface %s: tc program detached", i->name);
	} else if (i->tc_attached) {
		log_info("iface %s: tc program left attached (link id %u)",
			 i->name, i->tc_link_id);
	}
	i->tc_attached = false;
	i->tc_link_id = 0;
}

void tc_iface_gone(struct iface *i)
{
	/* The kernel detached the link with its device; drop the pin. */
	tc_detach(i, false);
	i->tc_only = false;
	i->want_tc_only = false;
	i->peer_egress = false;
	i->peer_logged = false;
	i->tc_reason[0] = '\0';
}

/* Take our XDP program off i, leaving its map entries: the tc program
 * goes on reading them. Another's program is not ours to remove. */
static void xdp_off(struct iface *i)
{
	struct prog_who w;
	uint32_t id;

	i->attached = false;
	i->lost = false;
	if (instance_attached_prog(i->ifindex, &id) || !id)
		return;
	instance_whose_prog(id, &w);
	if (w.owner != PROG_OURS && w.owner != PROG_PREDECESSOR)
		return;
	bpf_xdp_detach((int)i->ifindex, XDP_FLAGS_DRV_MODE, NULL);
	bpf_xdp_detach((int)i->ifindex, XDP_FLAGS_SKB_MODE, NULL);
}

bool tc_path_serving(void)
{
	bool any = false;

	if (!cfg.container_path || tc_prog_fd < 0)
		return false;
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		const struct iface *i = &iface_tab[s];

		if (!i->used || !i->ifindex || !iface_active(i))
			continue;
		if (!i->tc_attached)
			return false;
		any = true;
	}
	return any;
}

const char *tc_iface_path(const struct iface *i)
{
	if (i->attached)
		return "xdp";
	return i->tc_only && i->tc_attached ? "tc" : "none";
}

/* Mode changes of one interface; true if its map entry must change. */
static bool apply_one(struct iface *i, bool any_peer)
{
	bool changed = false, need;

	if (i->tc_attached && !tc_really_attached(i)) {
		log_warn("iface %s: fpmd's tc program was removed from tcx "
			 "ingress: re-attaching",
			 i->name);
		tc_detach(i, false);
		changed = true;
	}
	if (i->peer_egress != i->peer_logged) {
		if (i->peer_egress)
			log_info("iface %s: %s", i->name, i->tx_reason);
		else
			log_info("iface %s: no longer a PEER egress of the tc "
				 "path",
				 i->name);
		i->peer_logged = i->peer_egress;
		changed = true;
	}
	need = i->want_tc_only || (any_peer && i->attached);
	if (need && !i->tc_attached && !tc_attach(i))
		changed = true;
	if (i->want_tc_only && !i->tc_only && i->tc_attached) {
		i->tc_only = true;
		log_info("iface %s: peer %s has tx checksumming on: served by "
			 "the tc path%s",
			 i->name, i->peer_name,
			 i->attached ? ", XDP detached" : "");
		/* Also a previous fpmd's, adopted at start. */
		xdp_off(i);
		changed = true;
	} else if (!i->want_tc_only && i->tc_only) {
		i->tc_only = false;
		log_info("iface %s: %s: XDP again", i->name,
			 cfg.container_path ? "peer no longer sends partial "
					      "checksums"
					    : "container path off");
		if (!iface_attach(i, xdp_fd))
			changed = true;
	}
	/* Its link event left it without XDP for the guards to decide
	 * (links.c): the peer no longer sends partial checksums. */
	if (i->tc_only || i->attached)
		i->xdp_deferred = false;
	if (i->xdp_deferred && !i->want_tc_only) {
		i->xdp_deferred = false;
		log_info("iface %s: peer %s sends no partial checksums: XDP",
			 i->name, i->peer_name);
		if (!iface_attach(i, xdp_fd)) {
			iface_attached_late();
			changed = true;
		}
	}
	need = i->tc_only || (any_peer && i->attached);
	if (!need)
		i->tc_reason[0] = '\0';
	if (!need && i->tc_attached) {
		tc_detach(i, false);
		changed = true;
	}
	return changed;
}

void tc_path_apply(void)
{
	bool any_peer = false;

	for (int s = 0; s < FPMD_MAX_IFACES; s++)
		if (iface_tab[s].used && iface_tab[s].ifindex &&
		    iface_tab[s].peer_egress)
			any_peer = true;
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		struct iface *i = &iface_tab[s];

		if (!i->used || !i->ifindex)
			continue;
		if (!apply_one(i, any_peer))
			continue;
		iface_sync(i);
		rib_iface_changed(i->ifindex);
	}
}
