// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kernel state fpmd needs and XDP would otherwise bypass: links, the local
 * table, policy rules, xfrm policies, tc on egress. All through libmnl.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <linux/inet_diag.h>
#include <linux/neighbour.h>
#include <linux/netconf.h>
#include <linux/net_namespace.h>
#include <linux/fib_rules.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/xfrm.h>
#include <bpf/bpf.h>

#include "kernel/nl.h"

static struct mnl_socket *req_sock;
static struct mnl_socket *ev_sock;
static uint32_t seq;

int nl_open(void)
{
	int one = 1;

	req_sock = mnl_socket_open(NETLINK_ROUTE);
	if (!req_sock || mnl_socket_bind(req_sock, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	/* Let the kernel filter dumps (the local table out of a million
	 * routes); older kernels ignore it and we filter ourselves too. */
	mnl_socket_setsockopt(req_sock, NETLINK_GET_STRICT_CHK, &one,
			      sizeof(one));
	seq = (uint32_t)time(NULL);
	return 0;
}

void nl_close(void)
{
	if (req_sock)
		mnl_socket_close(req_sock);
	if (ev_sock)
		mnl_socket_close(ev_sock);
	req_sock = ev_sock = NULL;
}

/* Send nlh on sock and run cb over every reply until DONE or ACK. */
static int nl_talk(struct mnl_socket *s, struct nlmsghdr *nlh, mnl_cb_t cb,
		   void *arg)
{
	static char buf[NL_RX_BUF];
	uint32_t portid = mnl_socket_get_portid(s);
	int ret;

	/* Without a dump, only the ACK ends the exchange. */
	if (!(nlh->nlmsg_flags & NLM_F_DUMP))
		nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++seq;
	if (mnl_socket_sendto(s, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(s, buf, sizeof(buf));

		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, portid, cb, arg);
		if (ret < 0)
			return -errno;
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

int nl_parse_link(const struct nlmsghdr *nlh, struct nl_link *l)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;

	memset(l, 0, sizeof(*l));
	l->ifindex = (uint32_t)ifi->ifi_index;
	l->admin_up = ifi->ifi_flags & IFF_UP;
	l->lower_up = ifi->ifi_flags & IFF_LOWER_UP;
	l->link_netnsid = -1;
	mnl_attr_for_each(a, nlh, sizeof(*ifi)) {
		switch (mnl_attr_get_type(a)) {
		case IFLA_IFNAME:
			snprintf(l->name, sizeof(l->name), "%s",
				 mnl_attr_get_str(a));
			break;
		case IFLA_ADDRESS:
			if (mnl_attr_get_payload_len(a) == 6) {
				memcpy(l->mac, mnl_attr_get_payload(a), 6);
				l->has_mac = true;
			}
			break;
		case IFLA_MTU:
			l->mtu = mnl_attr_get_u32(a);
			break;
		case IFLA_LINK:
			l->link = mnl_attr_get_u32(a);
			break;
		case IFLA_LINK_NETNSID:
			l->link_netnsid = (int)mnl_attr_get_u32(a);
			break;
		case IFLA_LINKINFO: {
			const struct nlattr *li;

			mnl_attr_for_each_nested(li, a) {
				if (mnl_attr_get_type(li) == IFLA_INFO_KIND)
					snprintf(l->kind, sizeof(l->kind), "%s",
						 mnl_attr_get_str(li));
			}
			break;
		}
		case IFLA_XDP: {
			const struct nlattr *x;

			mnl_attr_for_each_nested(x, a) {
				if (mnl_attr_get_type(x) == IFLA_XDP_ATTACHED)
					l->xdp_attached = mnl_attr_get_u8(x);
				else if (mnl_attr_get_type(x) == IFLA_XDP_PROG_ID)
					l->xdp_prog_id = mnl_attr_get_u32(x);
			}
			break;
		}
		}
	}
	return 0;
}

struct link_ctx {
	nl_link_cb cb;
	void *arg;
	struct nl_link *one;
};

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_ctx *c = data;
	struct nl_link l;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	nl_parse_link(nlh, &l);
	if (c->one)
		*c->one = l;
	else
		c->cb(&l, c->arg);
	return MNL_CB_OK;
}

int nl_dump_links(nl_link_cb cb, void *arg)
{
	char buf[NL_TX_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;
	struct link_ctx c = { cb, arg, NULL };

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	return nl_talk(req_sock, nlh, link_cb, &c);
}

int nl_get_link_in_netns(int nsid, uint32_t ifindex, struct nl_link *out)
{
	char buf[NL_TX_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;
	struct link_ctx c = { NULL, NULL, out };
	int ret;

	out->ifindex = 0;
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = (int)ifindex;
	if (nsid >= 0)
		mnl_attr_put_u32(nlh, IFLA_TARGET_NETNSID, (uint32_t)nsid);
	ret = nl_talk(req_sock, nlh, link_cb, &c);
	if (!ret && !out->ifindex)
		return -ENODEV;
	return ret;
}

struct route_ctx {
	nl_route_cb cb;
	void *arg;
	uint32_t table;
};

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct route_ctx *c = data;
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	struct nl_route r = { 0 };

	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return MNL_CB_OK;
	r.p.family = rtm->rtm_family;
	r.p.len = rtm->rtm_dst_len;
	r.type = rtm->rtm_type;
	r.table = rtm->rtm_table;
	r.protocol = rtm->rtm_protocol;
	mnl_attr_for_each(a, nlh, sizeof(*rtm)) {
		switch (mnl_attr_get_type(a)) {
		case RTA_DST:
			if (mnl_attr_get_payload_len(a) <= 16)
				memcpy(r.p.addr, mnl_attr_get_payload(a),
				       mnl_attr_get_payload_len(a));
			break;
		case RTA_TABLE:
			r.table = mnl_attr_get_u32(a);
			break;
		case RTA_OIF:
			r.oif = mnl_attr_get_u32(a);
			break;
		}
	}
	if (c->table && r.table != c->table)
		return MNL_CB_OK;
	c->cb(&r, c->arg);
	return MNL_CB_OK;
}

int nl_dump_routes(int family, uint32_t table, nl_route_cb cb, void *arg)
{
	char buf[NL_TX_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;
	struct route_ctx c = { cb, arg, table };

	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (uint8_t)family;
	if (table) {
		rtm->rtm_table = table < 256 ? (uint8_t)table : RT_TABLE_UNSPEC;
		mnl_attr_put_u32(nlh, RTA_TABLE, table);
	}
	return nl_talk(req_sock, nlh, route_cb, &c);
}

struct rule_ctx {
	nl_rule_cb cb;
	void *arg;
};

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rule_ctx *c = data;
	const struct fib_rule_hdr *frh = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	struct nl_rule r = { 0 };

	if (nlh->nlmsg_type != RTM_NEWRULE)
		return MNL_CB_OK;
	r.family = frh->family;
	r.table = frh->table;
	r.has_selector = frh->src_len || frh->dst_len || frh->tos ||
			 frh->action != FR_ACT_TO_TBL || frh->flags;
	mnl_attr_for_each(a, nlh, sizeof(*frh)) {
		switch (mnl_attr_get_type(a)) {
		case FRA_PRIORITY:
			r.priority = mnl_attr_get_u32(a);
			break;
		case FRA_TABLE:
			r.table = mnl_attr_get_u32(a);
			break;
		case FRA_IFNAME:
			snprintf(r.iifname, sizeof(r.iifname), "%s",
				 mnl_attr_get_str(a));
			break;
		case FRA_FWMARK:
		case FRA_OIFNAME:
		case FRA_L3MDEV:
		case FRA_UID_RANGE:
		case FRA_IP_PROTO:
		case FRA_SPORT_RANGE:
		case FRA_DPORT_RANGE:
			r.has_selector = true;
			break;
		}
	}
	c->cb(&r, c->arg);
	return MNL_CB_OK;
}

int nl_dump_rules(int family, nl_rule_cb cb, void *arg)
{
	char buf[NL_TX_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct fib_rule_hdr *frh;
	struct rule_ctx c = { cb, arg };

	nlh->nlmsg_type = RTM_GETRULE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	frh = mnl_nlmsg_put_extra_header(nlh, sizeof(*frh));
	frh->family = (uint8_t)family;
	return nl_talk(req_sock, nlh, rule_cb, &c);
}

struct xfrm_ctx {
	int v4, v6;
};

static int xfrm_cb(const struct nlmsghdr *nlh, void *data)
{
	struct xfrm_ctx *c = data;
	const struct xfrm_userpolicy_info *p = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type != XFRM_MSG_NEWPOLICY)
		return MNL_CB_OK;
	/* Socket policies do not affect forwarded traffic. */
	if (p->dir >= XFRM_POLICY_MAX)
		return MNL_CB_OK;
	if (p->sel.family == AF_INET6)
		c->v6++;
	else if (p->sel.family == AF_INET)
		c->v4++;
	else
		c->v4++, c->v6++;
	return MNL_CB_OK;
}

int nl_xfrm_policies(int *v4, int *v6)
{
	char buf[NL_TX_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct mnl_socket *s = mnl_socket_open(NETLINK_XFRM);
	struct xfrm_ctx c = { 0, 0 };
	int ret;

	*v4 = *v6 = 0;
	if (!s)
		return errno == EPROTONOSUPPORT ? 0 : -errno; /* no xfrm */
	if (mnl_socket_bind(s, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		mnl_socket_close(s);
		return ret;
	}
	nlh->nlmsg_type = XFRM_MSG_GETPOLICY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct xfrm_userpolicy_info));
	ret = nl_talk(s, nlh, xfrm_cb, &c);
	mnl_socket_close(s);
	*v4 = c.v4;
	*v6 = c.v6;
	return ret;
}

struct tc_ctx {
	char *why;
	size_t len;
	int found;
	uint32_t ifindex;
	const char *hook; /* "egress", "ingress" */
};

/* Qdiscs that only queue: what XDP bypasses there does not matter. */
static bool qdisc_is_plain(const char *kind)
{
	static const char *const plain[] = { "noqueue", "pfifo_fast", "mq",
					     "fq_codel", "fq", "pfifo",
					     "bfifo", "clsact", "ingress" };

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (!strcmp(kind, plain[i]))
			return true;
	return false;
}

static int tc_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tc_ctx *c = data;
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	const char *kind = "";

	if (tcm->tcm_ifindex != (int)c->ifindex)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*tcm)) {
		if (mnl_attr_get_type(a) == TCA_KIND)
			kind = mnl_attr_get_str(a);
	}
	if (nlh->nlmsg_type == RTM_NEWQDISC) {
		/* Also a child: a shaper under mq acts on its queue. */
		if (!qdisc_is_plain(kind) && !c->found) {
			snprintf(c->why, c->len, "%s qdisc %s",
				 tcm->tcm_parent == TC_H_ROOT ? "root" : "child",
				 kind);
			c->found = 1;
		}
	} else if (nlh->nlmsg_type == RTM_NEWTFILTER && !c->found) {
		snprintf(c->why, c->len, "tc %s filter %s", c->hook, kind);
		c->found = 1;
	}
	return MNL_CB_OK;
}

int nl_tc_egress(uint32_t ifindex, char *why, size_t len)
{
	char buf[NL_TX_BUF];
	struct nlmsghdr *nlh;
	struct tcmsg *tcm;
	struct tc_ctx c = { why, len, 0, ifindex, "egress" };
	int ret;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETQDISC;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = (int)ifindex;
	ret = nl_talk(req_sock, nlh, tc_cb, &c);
	if (ret)
		return ret;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETTFILTER;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = (int)ifindex;
	tcm->tcm_parent = TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS);
	ret = nl_talk(req_sock, nlh, tc_cb, &c);
	/* No clsact qdisc: the kernel answers EINVAL, i.e. no filters. */
	if (ret == -EINVAL || ret == -ENOENT)
		ret = 0;
	if (!ret && !c.found) {
		/* tcx programs (kernel 6.6+) are no tc filters; BPF_TCX_EGRESS
		 * is 47 (older headers lack it, older kernels say EINVAL). */
		__u32 cnt = 0;

		if (!bpf_prog_query((int)ifindex, (enum bpf_attach_type)47, 0,
				    NULL, NULL, &cnt) && cnt) {
			snprintf(why, len, "%u tcx egress BPF program%s", cnt,
				 cnt == 1 ? "" : "s");
			c.found = 1;
		}
	}
	return ret ? ret : c.found;
}

int nl_tc_ingress(uint32_t ifindex, char *why, size_t len)
{
	char buf[NL_TX_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;
	struct tc_ctx c = { why, len, 0, ifindex, "ingress" };
	__u32 cnt = 0;
	int ret;

	/* clsact's and the ingress qdisc's filters share this parent. */
	nlh->nlmsg_type = RTM_GETTFILTER;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = (int)ifindex;
	tcm->tcm_parent = TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS);
	ret = nl_talk(req_sock, nlh, tc_cb, &c);
	if (ret == -EINVAL || ret == -ENOENT)
		ret = 0;
	if (ret || c.found)
		return ret ? ret : 1;
	/* BPF_TCX_INGRESS is 46 (older headers lack it). */
	if (!bpf_prog_query((int)ifindex, (enum bpf_attach_type)46, 0, NULL,
			    NULL, &cnt) && cnt) {
		snprintf(why, len, "%u tcx ingress BPF program%s", cnt,
			 cnt == 1 ? "" : "s");
		return 1;
	}
	return 0;
}

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

	ev_sock = mnl_socket_open(NETLINK_ROUTE);
	if (!ev_sock || mnl_socket_bind(ev_sock, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	fd = mnl_socket_get_fd(ev_sock);
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (mnl_socket_setsockopt(ev_sock, NETLINK_ADD_MEMBERSHIP,
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
		n = recv(mnl_socket_get_fd(ev_sock), buf, sizeof(buf),
			 MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS) {
			/* What is still queued is older than the re-read the
			 * caller does now, and the newest events are lost:
			 * applied after it, it would undo it. Drop it. */
			while (recv(mnl_socket_get_fd(ev_sock), buf, sizeof(buf),
				    MSG_DONTWAIT) >= 0 ||
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

struct neigh_ctx {
	nl_neigh_cb cb;
	void *arg;
};

static int neigh_dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct neigh_ctx *c = data;
	struct nl_neigh ne;

	if (nlh->nlmsg_type == RTM_NEWNEIGH && !nl_parse_neigh(nlh, &ne))
		c->cb(&ne, c->arg);
	return MNL_CB_OK;
}

int nl_dump_neighs(nl_neigh_cb cb, void *arg)
{
	char buf[NL_TX_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *ndm;
	struct neigh_ctx c = { cb, arg };

	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = AF_UNSPEC;
	return nl_talk(req_sock, nlh, neigh_dump_cb, &c);
}

static int nsid_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWNSID)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(struct rtgenmsg)) {
		if (mnl_attr_get_type(a) == NETNSA_NSID)
			*(int *)data = (int)mnl_attr_get_u32(a);
	}
	return MNL_CB_OK;
}

int nl_get_nsid(int nsfd)
{
	char buf[NL_TX_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtgenmsg *g;
	int nsid = -1;

	nlh->nlmsg_type = RTM_GETNSID;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->rtgen_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, NETNSA_FD, (uint32_t)nsfd);
	if (nl_talk(req_sock, nlh, nsid_cb, &nsid))
		return -1;
	return nsid;
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

static int diag_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct inet_diag_msg *m = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return MNL_CB_OK;
	*(int64_t *)data = m->idiag_uid;
	return MNL_CB_OK;
}

int nl_tcp_peer_uid(int fd, uid_t *uid)
{
	struct sockaddr_storage here, there;
	socklen_t hl = sizeof(here), tl = sizeof(there);
	char buf[NL_TX_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct inet_diag_req_v2 *req;
	struct mnl_socket *s;
	int64_t found = -1;
	int ret;

	if (getsockname(fd, (struct sockaddr *)&here, &hl) < 0 ||
	    getpeername(fd, (struct sockaddr *)&there, &tl) < 0)
		return -errno;
	if (here.ss_family != there.ss_family ||
	    (here.ss_family != AF_INET && here.ss_family != AF_INET6))
		return -EAFNOSUPPORT;
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->sdiag_family = (uint8_t)here.ss_family;
	req->sdiag_protocol = IPPROTO_TCP;
	req->idiag_states = ~0u;
	/* The peer's socket: its source is our peer, its destination us. */
	if (here.ss_family == AF_INET) {
		const struct sockaddr_in *h = (void *)&here, *t = (void *)&there;

		req->id.idiag_sport = t->sin_port;
		req->id.idiag_dport = h->sin_port;
		memcpy(req->id.idiag_src, &t->sin_addr, 4);
		memcpy(req->id.idiag_dst, &h->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *h = (void *)&here,
					  *t = (void *)&there;

		req->id.idiag_sport = t->sin6_port;
		req->id.idiag_dport = h->sin6_port;
		memcpy(req->id.idiag_src, &t->sin6_addr, 16);
		memcpy(req->id.idiag_dst, &h->sin6_addr, 16);
	}
	req->id.idiag_cookie[0] = req->id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	s = mnl_socket_open2(NETLINK_SOCK_DIAG, SOCK_CLOEXEC);
	if (!s)
		return -errno;
	if (mnl_socket_bind(s, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		mnl_socket_close(s);
		return ret;
	}
	/* An exact lookup: one answer, or an error (ENOENT: no such local
	 * socket, the peer is on another host or namespace). */
	ret = nl_talk(s, nlh, diag_cb, &found);
	mnl_socket_close(s);
	if (ret)
		return ret;
	if (found < 0)
		return -ENOENT;
	*uid = (uid_t)found;
	return 0;
}
