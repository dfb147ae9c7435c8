/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Interfaces fpmd manages: slots, XDP attachment, flags, tx ports. */
#ifndef FPMD_IFACE_H
#define FPMD_IFACE_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "fpmd.h"
#include "nl.h"

struct iface {
	bool used;
	char name[IF_NAMESIZE];
	uint32_t slot;
	uint32_t ifindex; /* 0 while the kernel has no such interface */
	uint32_t gone_ifindex; /* the one it had before it was removed */
	uint8_t mac[6];
	uint32_t mtu;
	bool up;          /* administratively up with carrier */
	bool attached;
	enum xdp_mode want_mode; /* configured */
	enum xdp_mode mode;      /* attached in (native or generic) */
	uint32_t guard_flags; /* FPMD_IF_F_* from guard.c (fwd, rpf, policy) */
	bool suspended;       /* netfilter appeared: everything to the kernel */
	bool tx_port;
	char tx_reason[192];  /* why not a tx port */
	char policy_reason[192];
	bool is_veth;
	int peer_ifindex;
	int peer_nsid; /* -1: same namespace */
};

extern struct iface iface_tab[FPMD_MAX_IFACES];

struct iface *iface_by_ifindex(uint32_t ifindex);
struct iface *iface_by_name(const char *name);
/* Give a configured name a slot; the kernel interface may come later. */
struct iface *iface_add(const char *name, bool clear_counters);
/* Refresh from the kernel's view; returns true if something changed. */
bool iface_update(struct iface *i, const struct nl_link *l);
void iface_gone(struct iface *i);
int iface_attach(struct iface *i, int prog_fd);
void iface_detach(struct iface *i);
/* No longer configured: detach, forget, its nexthops to the kernel path. */
void iface_remove(struct iface *i);
/* Write the ifaces map and tx_ports for i from its current state. */
void iface_sync(struct iface *i);
/* The value the fast path sees, computed from state. */
uint32_t iface_map_flags(const struct iface *i);
/* Egress MAC/MTU/slot for a nexthop on ifindex; false if unmanaged. */
bool iface_egress(uint32_t ifindex, uint8_t mac[6], uint16_t *mtu,
		  uint16_t *slot, bool *up);

#endif
