// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The netfilter guard's scan: nftables chains over nfnetlink and
 * iptables-legacy (x_tables) tables that act on forwarded traffic, which
 * XDP would bypass.
 */
#include <net/if.h> /* before linux/ headers: it guards linux/if.h */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter_ipv4/ip_tables.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <libmnl/libmnl.h>

#include "kernel/guard.h"
#include "kernel/guard_priv.h"
#include "kernel/nl.h"

/* ---- netfilter: nftables over nfnetlink ---------------------------------- */

#define NFT_MAX_CHAINS 256

struct nft_chain {
	uint8_t family;
	char table[64], name[64], type[16];
	int hook;      /* -1: not a base chain */
	int policy;    /* NF_ACCEPT / NF_DROP, -1 unknown */
	int rules;
};

struct nft_scan {
	struct nft_chain c[NFT_MAX_CHAINS];
	int n;
};

static int nft_chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nft_scan *s = data;
	const struct nfgenmsg *g = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	struct nft_chain *c;

	if ((nlh->nlmsg_type & 0xff) != NFT_MSG_NEWCHAIN ||
	    s->n >= NFT_MAX_CHAINS)
		return MNL_CB_OK;
	c = &s->c[s->n];
	memset(c, 0, sizeof(*c));
	c->family = g->nfgen_family;
	c->hook = -1;
	c->policy = -1;
	mnl_attr_for_each(a, nlh, sizeof(*g)) {
		switch (mnl_attr_get_type(a)) {
		case NFTA_CHAIN_TABLE:
			snprintf(c->table, sizeof(c->table), "%s",
				 mnl_attr_get_str(a));
			break;
		case NFTA_CHAIN_NAME:
			snprintf(c->name, sizeof(c->name), "%s",
				 mnl_attr_get_str(a));
			break;
		case NFTA_CHAIN_TYPE:
			snprintf(c->type, sizeof(c->type), "%s",
				 mnl_attr_get_str(a));
			break;
		case NFTA_CHAIN_POLICY:
			c->policy = (int)ntohl(mnl_attr_get_u32(a));
			break;
		case NFTA_CHAIN_HOOK: {
			const struct nlattr *h;

			mnl_attr_for_each_nested(h, a) {
				if (mnl_attr_get_type(h) == NFTA_HOOK_HOOKNUM)
					c->hook = (int)ntohl(mnl_attr_get_u32(h));
			}
			break;
		}
		}
	}
	s->n++;
	return MNL_CB_OK;
}

static int nft_rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nft_scan *s = data;
	const struct nfgenmsg *g = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	const char *table = "", *chain = "";

	if ((nlh->nlmsg_type & 0xff) != NFT_MSG_NEWRULE)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*g)) {
		if (mnl_attr_get_type(a) == NFTA_RULE_TABLE)
			table = mnl_attr_get_str(a);
		else if (mnl_attr_get_type(a) == NFTA_RULE_CHAIN)
			chain = mnl_attr_get_str(a);
	}
	for (int i = 0; i < s->n; i++) {
		if (s->c[i].family == g->nfgen_family &&
		    !strcmp(s->c[i].table, table) &&
		    !strcmp(s->c[i].name, chain))
			s->c[i].rules++;
	}
	return MNL_CB_OK;
}

static int nft_dump(struct mnl_socket *sk, uint16_t msg, mnl_cb_t cb,
		    struct nft_scan *s)
{
	char buf[NL_RX_BUF];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *g;
	uint32_t seq = (uint32_t)getpid() ^ msg, portid;
	ssize_t n;
	int ret;

	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | msg;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = NFPROTO_UNSPEC;
	g->version = NFNETLINK_V0;
	if (mnl_socket_sendto(sk, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	portid = mnl_socket_get_portid(sk);
	do {
		n = mnl_socket_recvfrom(sk, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, cb, s);
	} while (ret > 0);
	return ret < 0 ? -errno : 0;
}

static const char *nft_family(uint8_t f)
{
	switch (f) {
	case NFPROTO_INET: return "inet";
	case NFPROTO_IPV4: return "ip";
	case NFPROTO_IPV6: return "ip6";
	case NFPROTO_NETDEV: return "netdev";
	default: return "other";
	}
}

static const char *nft_hook(uint8_t family, int hook)
{
	static const char *const inet[] = { "prerouting", "input", "forward",
					    "output", "postrouting",
					    "ingress" };

	if (family == NFPROTO_NETDEV)
		return hook == 0 ? "ingress" : "egress";
	return hook >= 0 && hook < 6 ? inet[hook] : "?";
}

/* Does this base chain act on packets the fast path would forward? */
static bool nft_chain_matters(const struct nft_chain *c)
{
	bool active = c->rules > 0 || c->policy == NF_DROP;

	if (c->hook < 0 || !active)
		return false;
	if (c->family == NFPROTO_NETDEV)
		return true; /* ingress/egress of a device: bypassed too */
	if (c->family != NFPROTO_INET && c->family != NFPROTO_IPV4 &&
	    c->family != NFPROTO_IPV6)
		return false;
	/* An inet-family ingress chain runs at its device's ingress hook,
	 * which XDP's redirect skips just like a netdev one. */
	return c->hook == NF_INET_PRE_ROUTING || c->hook == NF_INET_FORWARD ||
	       c->hook == NF_INET_POST_ROUTING ||
	       (c->family == NFPROTO_INET && c->hook == NF_INET_INGRESS);
}

static int nft_scan(char *detail, size_t len)
{
	struct mnl_socket *sk = mnl_socket_open(NETLINK_NETFILTER);
	struct nft_scan *s;
	int found = 0, ret;

	if (!sk)
		return 0; /* no nfnetlink: no nftables */
	if (mnl_socket_bind(sk, 0, MNL_SOCKET_AUTOPID) < 0) {
		mnl_socket_close(sk);
		return -errno;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		mnl_socket_close(sk);
		return -ENOMEM;
	}
	ret = nft_dump(sk, NFT_MSG_GETCHAIN, nft_chain_cb, s);
	if (!ret && s->n)
		ret = nft_dump(sk, NFT_MSG_GETRULE, nft_rule_cb, s);
	mnl_socket_close(sk);
	for (int i = 0; !ret && i < s->n; i++) {
		const struct nft_chain *c = &s->c[i];

		if (!nft_chain_matters(c))
			continue;
		appendf(detail, len,
			"%snftables table %s %s chain %s (type %s, hook %s, "
			"policy %s, %d rule%s)",
			found ? "; " : "", nft_family(c->family), c->table,
			c->name, c->type, nft_hook(c->family, c->hook),
			c->policy == NF_DROP ? "drop" : "accept", c->rules,
			c->rules == 1 ? "" : "s");
		found++;
	}
	free(s);
	return ret ? ret : found;
}

/* ---- netfilter: iptables-legacy (x_tables) ------------------------------- */

/* x_tables for one family: ipt_* and ip6t_* share their layouts except
 * for the entry's match part, so only target_offset's place differs. */
struct xt_family {
	int af, level, get_info, get_entries;
	const char *names, *tool;
	size_t target_offset_at;
};

static const struct xt_family xt_families[] = {
	{ AF_INET, IPPROTO_IP, IPT_SO_GET_INFO, IPT_SO_GET_ENTRIES,
	  "/proc/net/ip_tables_names", "iptables-legacy",
	  offsetof(struct ipt_entry, target_offset) },
	{ AF_INET6, IPPROTO_IPV6, IP6T_SO_GET_INFO, IP6T_SO_GET_ENTRIES,
	  "/proc/net/ip6_tables_names", "ip6tables-legacy",
	  offsetof(struct ip6t_entry, target_offset) },
};

/* The verdict of the policy entry at offset off: DROP? */
static bool xt_policy_drop(int fd, const struct xt_family *xf,
			   const char *table, const struct ipt_getinfo *info,
			   unsigned int off)
{
	size_t sz = sizeof(struct ipt_get_entries) + info->size;
	struct ipt_get_entries *e = calloc(1, sz);
	socklen_t esl = (socklen_t)sz;
	bool drop = false;

	if (!e)
		return false;
	snprintf(e->name, sizeof(e->name), "%s", table);
	e->size = info->size;
	if (!getsockopt(fd, xf->level, xf->get_entries, e, &esl) &&
	    off + xf->target_offset_at + sizeof(uint16_t) <= info->size) {
		const char *pe = (const char *)e->entrytable + off;
		uint16_t toff;
		const struct xt_standard_target *t;

		memcpy(&toff, pe + xf->target_offset_at, sizeof(toff));
		if (off + toff + sizeof(*t) <= info->size) {
			t = (const void *)(pe + toff);
			drop = t->verdict == -NF_DROP - 1;
		}
	}
	free(e);
	return drop;
}

static int xt_scan_table(const struct xt_family *xf, const char *table,
			 char *detail, size_t len, bool first)
{
	struct ipt_getinfo info = { 0 };
	socklen_t sl = sizeof(info);
	int fd = socket(xf->af, SOCK_RAW, IPPROTO_RAW), found = 0;
	static const int hooks[] = { NF_INET_PRE_ROUTING, NF_INET_FORWARD,
				     NF_INET_POST_ROUTING };
	static const char *const hname[] = { "PREROUTING", "INPUT", "FORWARD",
					     "OUTPUT", "POSTROUTING" };

	if (fd < 0)
		return 0;
	snprintf(info.name, sizeof(info.name), "%s", table);
	if (getsockopt(fd, xf->level, xf->get_info, &info, &sl) < 0) {
		close(fd);
		return 0;
	}
	for (size_t k = 0; k < sizeof(hooks) / sizeof(hooks[0]); k++) {
		int h = hooks[k];
		bool rules, drop = false;

		if (!(info.valid_hooks & (1u << h)))
			continue;
		/* A built-in chain with rules starts before its policy. */
		rules = info.hook_entry[h] != info.underflow[h];
		if (h == NF_INET_FORWARD && !strcmp(table, "filter"))
			drop = xt_policy_drop(fd, xf, table, &info,
					      info.underflow[h]);
		if (!rules && !drop)
			continue;
		appendf(detail, len, "%s%s table %s chain %s (%s)",
			first && !found ? "" : "; ", xf->tool, table, hname[h],
			rules ? "has rules" : "policy DROP");
		found++;
	}
	close(fd);
	return found;
}

static int xt_scan(char *detail, size_t len, bool first)
{
	char name[XT_TABLE_MAXNAMELEN];
	int found = 0;

	for (size_t k = 0; k < sizeof(xt_families) / sizeof(xt_families[0]);
	     k++) {
		FILE *f = fopen(xt_families[k].names, "r");

		if (!f)
			continue;
		while (fgets(name, sizeof(name), f)) {
			name[strcspn(name, "\n")] = '\0';
			found += xt_scan_table(&xt_families[k], name, detail,
					       len, first && !found);
		}
		fclose(f);
	}
	return found;
}

int netfilter_scan(char *detail, size_t len)
{
	int n, x;

	detail[0] = '\0';
	n = nft_scan(detail, len);
	if (n < 0) {
		snprintf(detail, len, "cannot read nftables ruleset: %s",
			 strerror(-n));
		return 1; /* unknown is not clear */
	}
	x = xt_scan(detail, len, n == 0);
	return n + x;
}
