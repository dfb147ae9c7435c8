// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Change notifications: the rtnetlink event socket (links, neighbors,
 * addresses, netconf, rules, tc) and its parsers, and the watch sockets
 * of other netlink families (xfrm, nftables) that only say "changed".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netconf.h>
#include <linux/rtnetlink.h>

#include "kernel/nl.h"
#include "kernel/nl_priv.h"

int nl_events_open(void)
{
	/* netconf: rp_filter and forwarding, per interface, "all" and
	 * "default"; rules and tc: what the guards read. */
	unsigned int groups[] = { RTNLGRP_LINK, RTNLGRP_NEIGH,
				  RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR,
				  RTNLGRP_IPV4_NETCONF, RTNLGRP_IPV6_NETCONF,
				  RTNLGRP_IPV4_RULE, RTNLGRP_IPV6_RULE,
				  RTNLGRP_TC };
	int fd, sz = 4 << 20;

	nl_ev_sock = mnl_socket_open(NETLINK_ROUTE);
	if (!nl_ev_sock ||
	    mnl_socket_bind(nl_ev_sock, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	fd = mnl_socket_get_fd(nl_ev_sock);
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (mnl_socket_setsockopt(nl_ev_sock, NETLINK_ADD_MEMBERSHIP,
					  &groups[i], sizeof(groups[i])) < 0)
			return -errno;
	/* A burst of neighbor events (a subnet being scanned), or what
	 * queues while a restart adopts the maps, must not overrun us; if
	 * it does, ENOBUFS makes the caller re-dump. rmem_max caps
	 * SO_RCVBUF (208 KiB by default); root may force more. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	return fd;
}

int nl_parse_neigh(const struct nlmsghdr *nlh, struct nl_neigh *n)
{
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;

	memset(n, 0, sizeof(*n));
	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ndm)))
		return -EINVAL;
	n->family = ndm->ndm_family;
	n->ifindex = (uint32_t)ndm->ndm_ifindex;
	n->state = ndm->ndm_state;
	n->flags = ndm->ndm_flags;
	mnl_attr_for_each(a, nlh, sizeof(*ndm)) {
		uint16_t len = mnl_attr_get_payload_len(a);

		switch (mnl_attr_get_type(a)) {
		case NDA_DST:
			if (len == 4 || len == 16) {
				memcpy(n->addr, mnl_attr_get_payload(a), len);
				n->has_addr = (len == 4) == (n->family == AF_INET);
			}
			break;
		case NDA_LLADDR:
			if (len == 6) {
				memcpy(n->mac, mnl_attr_get_payload(a), 6);
				n->has_mac = true;
			}
			break;
		}
	}
	return 0;
}

struct ev_ctx {
	const struct nl_event_ops *ops;
	void *arg;
};

int nl_parse_netconf(const struct nlmsghdr *nlh, struct nl_netconf *nc)
{
	const struct netconfmsg *ncm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;

	memset(nc, 0, sizeof(*nc));
	nc->rp_filter = nc->forwarding = -1;
	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ncm)))
		return -EINVAL;
	nc->family = ncm->ncm_family;
	/* The header is padded to 4 bytes before the attributes. */
	mnl_attr_for_each(a, nlh, NLMSG_ALIGN(sizeof(*ncm))) {
		if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
			continue;
		switch (mnl_attr_get_type(a)) {
		case NETCONFA_IFINDEX:
			nc->ifindex = (int)mnl_attr_get_u32(a);
			nc->has_ifindex = true;
			break;
		case NETCONFA_RP_FILTER:
			nc->rp_filter = (int)mnl_attr_get_u32(a);
			break;
		case NETCONFA_FORWARDING:
			nc->forwarding = (int)mnl_attr_get_u32(a);
			break;
		}
	}
	return nc->has_ifindex ? 0 : -EINVAL;
}

static int ev_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ev_ctx *c = data;
	struct nl_link l;
	struct nl_neigh ne;

	switch (nlh->nlmsg_type) {
	case RTM_NEWLINK:
		nl_parse_link(nlh, &l);
		c->ops->link(&l, c->arg);
		break;
	case RTM_DELLINK:
		nl_parse_link(nlh, &l);
		c->ops->link_gone(l.ifindex);
		break;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		if (!nl_parse_neigh(nlh, &ne)) {
			ne.deleted = nlh->nlmsg_type == RTM_DELNEIGH;
			c->ops->neigh(&ne, c->arg);
		}
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		c->ops->addr(c->arg);
		break;
	case RTM_NEWNETCONF:
	case RTM_DELNETCONF: {
		struct nl_netconf nc;

		if (!nl_parse_netconf(nlh, &nc))
			c->ops->netconf(&nc, c->arg);
		break;
	}
	case RTM_NEWRULE:
	case RTM_DELRULE:
		c->ops->state(NL_STATE_RULES, c->arg);
		break;
	case RTM_NEWQDISC:
	case RTM_DELQDISC:
	case RTM_NEWTFILTER:
	case RTM_DELTFILTER:
	case RTM_NEWCHAIN:
	case RTM_DELCHAIN:
		c->ops->state(NL_STATE_TC, c->arg);
		break;
	}
	return MNL_CB_OK;
}

int nl_events_read(const struct nl_event_ops *ops, void *arg)
{
	static char buf[NL_RX_BUF];
	struct ev_ctx c = { ops, arg };
	ssize_t n;

	for (;;) {
		n = recv(mnl_socket_get_fd(nl_ev_sock), buf, sizeof(buf),
			 MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS) {
			/* What is still queued is older than the re-read the
			 * caller does now, and the newest events are lost:
			 * applied after it, it would undo it. Drop it. */
			while (recv(mnl_socket_get_fd(nl_ev_sock), buf,
				    sizeof(buf), MSG_DONTWAIT) >= 0 ||
			       errno == ENOBUFS)
				;
			return -ENOBUFS;
		}
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (mnl_cb_run(buf, (size_t)n, 0, 0, ev_cb, &c) < 0)
			return -errno;
	}
}

int nl_watch_open(int proto, unsigned int group)
{
	struct mnl_socket *s =
	    mnl_socket_open2(proto, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int fd, ret;

	if (!s)
		return -errno;
	if (mnl_socket_bind(s, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_setsockopt(s, NETLINK_ADD_MEMBERSHIP, &group,
				  sizeof(group)) < 0) {
		ret = -errno;
		mnl_socket_close(s);
		return ret;
	}
	/* Only the fd is kept: the socket is closed with close(fd). */
	fd = dup(mnl_socket_get_fd(s));
	ret = fd < 0 ? -errno : fd;
	mnl_socket_close(s);
	return ret;
}

int nl_watch_drain(int fd)
{
	static char buf[NL_RX_BUF];
	int got = 0;

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return got;
			if (errno == ENOBUFS) {
				got++; /* lost some: still a change */
				continue;
			}
			return -errno;
		}
		got += n > 0;
	}
}
