// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kernel state XDP would bypass, as the guards read it: policy rules,
 * xfrm policies, tc on egress (filters, shaping qdiscs) and on ingress
 * (filters, tcx programs).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/fib_rules.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/xfrm.h>
#include <bpf/bpf.h>

#include "kernel/instance.h"
#include "kernel/nl.h"
#include "kernel/nl_priv.h"
#include "kernel/tc_path.h"

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
	return nl_talk(nl_req_sock, nlh, rule_cb, &c);
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
	ret = nl_talk(nl_req_sock, nlh, tc_cb, &c);
	if (ret)
		return ret;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETTFILTER;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = (int)ifindex;
	tcm->tcm_parent = TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS);
	ret = nl_talk(nl_req_sock, nlh, tc_cb, &c);
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
	__u32 ids[64], cnt = 64, foreign = 0;
	int ret;

	/* clsact's and the ingress qdisc's filters share this parent. */
	nlh->nlmsg_type = RTM_GETTFILTER;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = (int)ifindex;
	tcm->tcm_parent = TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS);
	ret = nl_talk(nl_req_sock, nlh, tc_cb, &c);
	if (ret == -EINVAL || ret == -ENOENT)
		ret = 0;
	if (ret || c.found)
		return ret ? ret : 1;
	/* BPF_TCX_INGRESS is 46 (older headers lack it). fpmd's own tc
	 * program (tc_path.c) is part of the fast path, not foreign; so is
	 * a previous fpmd's on our maps until it is swapped out. */
	if (bpf_prog_query((int)ifindex, (enum bpf_attach_type)46, 0, NULL,
			   ids, &cnt))
		return 0;
	for (__u32 k = 0; k < cnt && k < 64; k++) {
		struct prog_who w;

		if (ids[k] == tc_own_prog_id)
			continue;
		instance_whose_prog(ids[k], &w);
		if (w.owner != PROG_PREDECESSOR)
			foreign++;
	}
	if (foreign) {
		snprintf(why, len, "%u tcx ingress BPF program%s", foreign,
			 foreign == 1 ? "" : "s");
		return 1;
	}
	return 0;
}
