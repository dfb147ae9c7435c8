// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtnetlink requests with libmnl: the request socket, links, routes (the
 * local table), neighbors, namespace ids, and the uid behind a TCP peer
 * (sock_diag). What XDP would bypass: nl_bypass.c; change notifications:
 * nl_events.c.
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
#include <linux/neighbour.h>
#include <linux/net_namespace.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>

#include "kernel/nl.h"
#include "kernel/nl_priv.h"

_Thread_local struct mnl_socket *nl_req_sock;
struct mnl_socket *nl_ev_sock;
static _Thread_local uint32_t seq;
static _Thread_local char *talk_buf; /* NL_RX_BUF, the replies */

int nl_open(void)
{
	int one = 1;

	nl_req_sock = mnl_socket_open(NETLINK_ROUTE);
	if (!nl_req_sock ||
	    mnl_socket_bind(nl_req_sock, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	/* Let the kernel filter dumps (the local table out of a million
	 * routes); older kernels ignore it and we filter ourselves too. */
	mnl_socket_setsockopt(nl_req_sock, NETLINK_GET_STRICT_CHK, &one,
			      sizeof(one));
	seq = (uint32_t)time(NULL);
	return 0;
}

void nl_close_requests(void)
{
	if (nl_req_sock)
		mnl_socket_close(nl_req_sock);
	nl_req_sock = NULL;
	nl_genl_close();
	free(talk_buf);
	talk_buf = NULL;
}

void nl_close(void)
{
	nl_close_requests();
	if (nl_ev_sock)
		mnl_socket_close(nl_ev_sock);
	nl_ev_sock = NULL;
}

/* The thread's nl_talk calls under way: at most one, since they share
 * its buffer. */
static _Thread_local int talking;

bool nl_talk_busy(void)
{
	return talking > 0;
}

/* Send nlh on sock and run cb over every reply until DONE or ACK. */
static int talk(struct mnl_socket *s, struct nlmsghdr *nlh, mnl_cb_t cb,
		void *arg)
{
	uint32_t portid = mnl_socket_get_portid(s);
	int ret;

	/* On the heap: a thread-local array would be zeroed in every thread
	 * fpmd starts (the reaper's too), whether it talks or not. */
	if (!talk_buf && !(talk_buf = malloc(NL_RX_BUF)))
		return -ENOMEM;

	/* Without a dump, only the ACK ends the exchange. */
	if (!(nlh->nlmsg_flags & NLM_F_DUMP))
		nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++seq;
	if (mnl_socket_sendto(s, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(s, talk_buf, NL_RX_BUF);

		if (n < 0)
			return -errno;
		ret = mnl_cb_run(talk_buf, (size_t)n, nlh->nlmsg_seq, portid, cb,
				 arg);
		if (ret < 0)
			return -errno;
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

int nl_talk(struct mnl_socket *s, struct nlmsghdr *nlh, mnl_cb_t cb,
	    void *arg)
{
	int ret;

	talking++;
	ret = talk(s, nlh, cb, arg);
	talking--;
	return ret;
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
	return nl_talk(nl_req_sock, nlh, link_cb, &c);
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
	ret = nl_talk(nl_req_sock, nlh, link_cb, &c);
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
	return nl_talk(nl_req_sock, nlh, route_cb, &c);
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
	return nl_talk(nl_req_sock, nlh, neigh_dump_cb, &c);
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
	if (nl_talk(nl_req_sock, nlh, nsid_cb, &nsid))
		return -1;
	return nsid;
}

struct peer_diag {
	int64_t uid;
	uint32_t inode;
};

static int diag_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct inet_diag_msg *m = mnl_nlmsg_get_payload(nlh);
	struct peer_diag *pd = data;

	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return MNL_CB_OK;
	pd->uid = m->idiag_uid;
	pd->inode = m->idiag_inode;
	return MNL_CB_OK;
}

int nl_tcp_peer_uid(int fd, uid_t *uid)
{
	return nl_tcp_peer(fd, uid, NULL);
}

int nl_tcp_peer(int fd, uid_t *uid, uint32_t *inode)
{
	struct sockaddr_storage here, there;
	socklen_t hl = sizeof(here), tl = sizeof(there);
	char buf[NL_TX_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct inet_diag_req_v2 *req;
	struct mnl_socket *s;
	struct peer_diag found = { .uid = -1 };
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
	if (found.uid < 0)
		return -ENOENT;
	*uid = (uid_t)found.uid;
	if (inode)
		*inode = found.inode;
	return 0;
}

int nl_neigh_use(int family, uint32_t ifindex, const uint8_t *addr)
{
	char buf[NL_TX_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *ndm;

	/* No NLM_F_CREATE: an entry the kernel has dropped stays dropped. */
	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = (uint8_t)family;
	ndm->ndm_ifindex = (int)ifindex;
	ndm->ndm_flags = NTF_USE;
	mnl_attr_put(nlh, NDA_DST, family == AF_INET ? 4 : 16, addr);
	return nl_talk(nl_req_sock, nlh, NULL, NULL);
}
