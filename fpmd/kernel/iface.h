/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Interfaces fpmd manages: slots, XDP attachment, flags, tx ports. */
#ifndef FPMD_IFACE_H
#define FPMD_IFACE_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "conf/conf.h"
#include "kernel/nl.h"

struct iface {
	bool used;
	char name[IF_NAMESIZE];
	uint32_t slot;
	uint32_t ifindex; /* 0 while the kernel has no such interface */
	uint32_t gone_ifindex; /* the one it had before it was removed */
	/* Link events and removals seen: an answer of the probe thread
	 * (kernel/probe.h) asked at another gen is older than what the loop
	 * knows, and dropped. */
	uint32_t gen;
	uint8_t mac[6];
	uint32_t mtu;
	uint32_t mtu6;    /* net.ipv6.conf.NAME.mtu; 0 when unknown */
	bool up;          /* administratively up with carrier */
	bool attached;
	/* Not attached because another program is: its id and who owns it
	 * (instance.c); 0 when none was found in our place. */
	uint32_t other_prog;
	char other_desc[256];
	bool lost; /* ours was removed under us: re-attach when free */
	enum xdp_mode want_mode; /* configured */
	enum xdp_mode mode;      /* attached in (native or generic) */
	uint32_t guard_flags; /* FPMD_IF_F_* from guard.c (fwd, rpf, policy) */
	bool suspended;       /* netfilter appeared: everything to the kernel */
	bool tx_port;
	bool xmit_sg;     /* transmits multi-buffer XDP frames (ndo-xmit-sg) */
	bool xmit_sg_known; /* xmit_sg read (and logged) once */
	char tx_reason[192];  /* why not a tx port */
	char policy_reason[192];
	bool is_veth;
	int peer_ifindex;
	int peer_nsid; /* -1: same namespace */
	/* Container paths (tc_path.c, doc/containers.md). */
	char peer_name[IF_NAMESIZE]; /* the veth peer's, when seen */
	bool peer_egress; /* veth peer takes no XDP redirects: tc delivers */
	bool peer_logged; /* peer_egress as last logged */
	bool want_tc_only; /* guard.c: peer has tx checksumming on */
	bool tc_only;     /* applied: no XDP here, the tc program forwards */
	bool xdp_deferred; /* links.c: appeared with such a peer, no XDP
			    * until the guards decide (tc_path.c) */
	bool tc_attached; /* fpmd's tc program really is at tcx ingress */
	int tc_link_fd;   /* the pinned tcx link, -1 when none */
	uint32_t tc_link_id;
	char tc_reason[96]; /* why tc is not attached where wanted */
};

extern struct iface iface_tab[FPMD_MAX_IFACES];

struct iface *iface_by_ifindex(uint32_t ifindex);
struct iface *iface_by_name(const char *name);
/* Give a configured name a slot; the kernel interface may come later. */
struct iface *iface_add(const char *name, bool clear_counters);
/* Refresh from the kernel's view; returns true if something changed. */
bool iface_update(struct iface *i, const struct nl_link *l);
/* Called when an interface's attachment changed, so that the guards
 * and interfaces are looked at again soon (the event loop's recheck). */
void iface_set_recheck(void (*fn)(void));
/* XDP attached by tc_path.c (deferred at the link event): what links.c
 * asks for after its own attach (neighbors, the local table). */
void iface_set_attached(void (*fn)(void));
void iface_attached_late(void);
void iface_gone(struct iface *i);
int iface_attach(struct iface *i, int prog_fd);
void iface_detach(struct iface *i);
/* No longer configured: detach, forget, its nexthops to the kernel path. */
void iface_remove(struct iface *i);
/* Write the ifaces map and tx_ports for i from its current state. */
void iface_sync(struct iface *i);
/*
 * Is fpmd's program still the one attached? Called on every link event of
 * a managed interface and periodically (bpf_link changes and changes
 * while down send no event). Reports a replacement or removal at once,
 * re-attaches only when nothing else is attached.
 */
void iface_watch(struct iface *i, int prog_fd);
/*
 * iface_watch() in two steps, for the probe thread: should the program
 * attached to i be asked for (its attachment as it is now in *seen), and,
 * back in the loop, what was found: id, the attached program's (0: none)
 * while i's attachment was still *seen. Dropped (false) when i changed
 * meanwhile (another gen, ifindex or attachment) or the loop looked at
 * or changed an attachment itself (iface_watch, attach, detach).
 */
struct iface_watch_ask {
	uint32_t epoch, ifindex, gen, other_prog;
	bool attached, lost;
};
bool iface_watch_ask(const struct iface *i, struct iface_watch_ask *seen);
bool iface_watch_seen(struct iface *i, int prog_fd,
		      const struct iface_watch_ask *seen, uint32_t id);
/* "attached", "detached", "detached-foreign" or "absent", and why. */
const char *iface_xdp_state(const struct iface *i);
const char *iface_xdp_reason(const struct iface *i);
/* Does one of fpmd's programs take i's traffic: XDP attached, or TC_ONLY
 * with the tc program attached. */
bool iface_active(const struct iface *i);
/* May redirects leave by i? Else why not (for show/state/lookup). */
bool iface_is_tx_port(const struct iface *i);
const char *iface_tx_reason(const struct iface *i);
/* The value the fast path sees, computed from state. */
uint32_t iface_map_flags(const struct iface *i);
/* A hand-made local route exists (or existed): the kernel checks sources. */
void iface_set_source_check(void);
/*
 * Re-read net.ipv6.conf.NAME.mtu, which changes with no event (only a
 * device MTU change resets it); true if it changed.
 */
bool iface_read_mtu6(struct iface *i);
/* Give the RIB its view of the interfaces (rib_set_iface_ops): before
 * rib_adopt, which rewrites nexthops. */
void iface_init(void);

#endif
