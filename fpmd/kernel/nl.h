/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rtnetlink (and xfrm, nfnetlink) requests with libmnl. */
#ifndef FPMD_NL_H
#define FPMD_NL_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <libmnl/libmnl.h>

#include "common/util.h"

#define NL_RX_BUF 65536 /* a dump part of many messages */
#define NL_TX_BUF 8192
#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000 /* linux/if.h, which clashes with net/if.h */
#endif

struct nl_link {
	uint32_t ifindex;
	char name[IF_NAMESIZE];
	uint8_t mac[6];
	bool has_mac;
	uint32_t mtu;
	bool admin_up, lower_up;
	char kind[16];      /* "veth", ... */
	uint32_t link;      /* IFLA_LINK: veth peer ifindex */
	int link_netnsid;   /* -1: same namespace */
	uint32_t xdp_prog_id;
	uint8_t xdp_attached; /* XDP_ATTACHED_* */
};

struct nl_route {
	struct prefix p;
	uint8_t type;   /* RTN_* */
	uint8_t protocol; /* RTPROT_* */
	uint32_t table;
	uint32_t oif;
};

struct nl_rule {
	uint8_t family;
	uint32_t priority;
	uint32_t table;
	char iifname[IF_NAMESIZE];
	bool has_selector; /* from/to/fwmark/... beyond "from all" */
};

typedef void (*nl_link_cb)(const struct nl_link *l, void *arg);
typedef void (*nl_route_cb)(const struct nl_route *r, void *arg);
typedef void (*nl_rule_cb)(const struct nl_rule *r, void *arg);

/*
 * One socket for requests per thread (the loop's, the probe thread's:
 * kernel/probe.h), each with its own buffer; dumps are synchronous.
 * nl_open() opens the calling thread's, nl_close_requests() closes it,
 * nl_close() closes it and the event socket.
 */
int nl_open(void);
void nl_close_requests(void);
void nl_close(void);

int nl_dump_links(nl_link_cb cb, void *arg);
/* Inside a request's callback (a dump's): the request socket and its
 * buffer are in use, so no other request can be made from there. */
bool nl_talk_busy(void);
/* The link ifindex inside the namespace known to us as nsid. */
int nl_get_link_in_netns(int nsid, uint32_t ifindex, struct nl_link *out);
int nl_dump_routes(int family, uint32_t table, nl_route_cb cb, void *arg);
int nl_dump_rules(int family, nl_rule_cb cb, void *arg);
/* Number of xfrm policies per family. */
int nl_xfrm_policies(int *v4, int *v6);
/* Describe what on ifindex's egress XDP would bypass (tc filters,
 * shaping qdisc) into why; returns 1 if anything, 0 if none, -errno. */
int nl_tc_egress(uint32_t ifindex, char *why, size_t len);

/* Filters or tcx programs on ifindex's ingress, which XDP runs before;
 * 1 (and why) if any, 0 if none, -errno. */
int nl_tc_ingress(uint32_t ifindex, char *why, size_t len);

/* linux/netdev.h: the driver transmits multi-buffer XDP frames. */
#define NL_XDP_ACT_NDO_XMIT_SG (1ull << 6)
/* ifindex's xdp-features (NETDEV_XDP_ACT_*, generic netlink "netdev"):
 * 0 or -errno (-ENOENT: a kernel before 6.3, which does not say). */
int nl_xdp_features(uint32_t ifindex, uint64_t *features);

struct nl_neigh {
	uint8_t family;
	bool has_addr, has_mac, deleted;
	uint16_t state; /* NUD_* */
	uint8_t flags;  /* NTF_* */
	uint32_t ifindex;
	uint8_t addr[16];
	uint8_t mac[6];
};

typedef void (*nl_neigh_cb)(const struct nl_neigh *n, void *arg);

/* RTM_NEWNETCONF: a sysctl of ifindex (or NETCONFA_IFINDEX_ALL/_DEFAULT)
 * changed; the value attributes are -1 when the message lacks them. */
struct nl_netconf {
	uint8_t family;
	bool has_ifindex;
	int ifindex;
	int rp_filter;
	int forwarding;
};

/* Kernel state a guard reads, announced without detail worth decoding. */
enum nl_state {
	NL_STATE_RULES, /* ip rule added or deleted */
	NL_STATE_TC,	/* qdisc, filter or chain */
};

struct nl_event_ops {
	nl_link_cb link;                   /* added or changed */
	void (*link_gone)(uint32_t ifindex);
	nl_neigh_cb neigh;                 /* added, changed or deleted */
	void (*addr)(void *arg);           /* an address came or went */
	void (*netconf)(const struct nl_netconf *nc, void *arg);
	void (*state)(enum nl_state what, void *arg);
};

/* Event socket: links, neighbors, addresses, netconf, rules, tc. fd for
 * the event loop. */
int nl_events_open(void);
/* Read every pending event. -ENOBUFS: events were lost, re-dump. */
int nl_events_read(const struct nl_event_ops *ops, void *arg);
int nl_dump_neighs(nl_neigh_cb cb, void *arg);
/*
 * Tell the kernel its neighbor entry is in use, as its own forwarding
 * would by sending through it (RTM_NEWNEIGH with NTF_USE: the kernel's
 * neigh_event_send, STALE -> DELAY and the entry's "used" time). 0 or
 * -errno (-ENOENT: no such entry).
 */
int nl_neigh_use(int family, uint32_t ifindex, const uint8_t *addr);
int nl_parse_neigh(const struct nlmsghdr *nlh, struct nl_neigh *n);

int nl_parse_link(const struct nlmsghdr *nlh, struct nl_link *l);
int nl_parse_netconf(const struct nlmsghdr *nlh, struct nl_netconf *nc);

/* The uid owning the other end of the TCP connection fd, by sock_diag.
 * -ENOENT: that end is no socket of this namespace (a remote peer). */
int nl_tcp_peer_uid(int fd, uid_t *uid);
/* The same, and the inode of that socket (to find its process). */
int nl_tcp_peer(int fd, uid_t *uid, uint32_t *inode);

/* A non-blocking netlink socket (proto, e.g. NETLINK_XFRM) subscribed to
 * one multicast group, for change notifications only; returns its fd. */
int nl_watch_open(int proto, unsigned int group);
/* Read everything pending; returns the number of messages (a lost
 * overrun counts as one), 0 if none, -errno. */
int nl_watch_drain(int fd);
/* The id our namespace has for the namespace behind nsfd, or -1. */
int nl_get_nsid(int nsfd);

#endif
