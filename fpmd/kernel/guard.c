// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Guards for kernel features the XDP fast path bypasses. Run at start, at
 * once when the kernel announces a change (netconf for forwarding and
 * rp_filter, rule, tc, xfrm policy and nftables notifications), and every
 * guard interval as a backstop: for what has no event (a veth peer's GRO
 * in another namespace) and for an event lost to a socket overrun.
 */
#include <net/if.h> /* before linux/ headers: it guards linux/if.h */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter_ipv4/ip_tables.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <libmnl/libmnl.h>

#include "conf/conf.h"
#include "kernel/guard.h"
#include "kernel/iface.h"
#include "common/log.h"
#include "kernel/nl.h"
#include "rib/rib.h"

/* watch: how a change reaches fpmd besides the guard-interval poll. */
struct guard guards[GUARD_MAX] = {
	/* iptables-legacy (x_tables) announces nothing: polled. */
	[GUARD_NETFILTER] = { .name = "netfilter",
			      .watch = "nftables events; iptables-legacy: poll" },
	[GUARD_FORWARDING] = { .name = "forwarding",
			       .watch = "netconf events" },
	[GUARD_RP_FILTER] = { .name = "rp-filter", .watch = "netconf events" },
	[GUARD_POLICY_RULES] = { .name = "policy-rules",
				 .watch = "rule events" },
	[GUARD_XFRM] = { .name = "xfrm", .watch = "xfrm policy events" },
	[GUARD_TC_EGRESS] = { .name = "tc-egress", .watch = "tc events" },
	[GUARD_TC_INGRESS] = { .name = "tc-ingress", .watch = "tc events" },
	[GUARD_VETH_PEER] = { .name = "veth-peer", .watch = "poll" },
	/* No event carries send_redirects: polled. */
	[GUARD_SEND_REDIRECTS] = { .name = "send-redirects", .watch = "poll" },
};

static void appendf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static int sysctl_int(const char *fmt, const char *arg, int dflt)
{
	char path[256], buf[32];
	FILE *f;
	int v = dflt;

	snprintf(path, sizeof(path), fmt, arg);
	f = fopen(path, "r");
	if (!f)
		return dflt;
	if (fgets(buf, sizeof(buf), f))
		v = atoi(buf);
	fclose(f);
	return v;
}

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

/* ---- per-interface checks ------------------------------------------------ */

struct rules_ctx {
	int family;
	char detail[256];
	bool all;
	char iif[FPMD_MAX_IFACES][IF_NAMESIZE];
	int niif;
};

static void rule_cb(const struct nl_rule *r, void *arg)
{
	struct rules_ctx *c = arg;
	bool dflt;

	dflt = !r->has_selector && !r->iifname[0] &&
	       ((r->priority == 0 && r->table == RT_TABLE_LOCAL) ||
		(r->priority == 32766 && r->table == RT_TABLE_MAIN) ||
		(r->priority == 32767 && r->table == RT_TABLE_DEFAULT &&
		 c->family == AF_INET));
	if (dflt)
		return;
	appendf(c->detail, sizeof(c->detail), "%s%s rule pref %u table %u%s%s",
		c->detail[0] ? "; " : "", c->family == AF_INET ? "ipv4" : "ipv6",
		r->priority, r->table, r->iifname[0] ? " iif " : "",
		r->iifname);
	if (!r->iifname[0])
		c->all = true;
	else if (c->niif < FPMD_MAX_IFACES)
		snprintf(c->iif[c->niif++], IF_NAMESIZE, "%s", r->iifname);
}

static bool rules_apply(const struct rules_ctx *c, const struct iface *i)
{
	if (c->all)
		return true;
	for (int k = 0; k < c->niif; k++)
		if (!strcmp(c->iif[k], i->name))
			return true;
	return false;
}

/*
 * Can the peer of a veth receive frames redirected into it? Only with an
 * XDP program or GRO on the peer (veth's NAPI path); otherwise the kernel
 * drops them without a counter.
 */
struct peer_q {
	int nsfd;
	char name[IF_NAMESIZE];
	int gro; /* out: 1 on, 0 off, -1 unknown */
};

static int ethtool_gro(const char *name)
{
	struct ethtool_value ev = { .cmd = ETHTOOL_GGRO };
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), ret;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_data = (void *)&ev;
	ret = ioctl(fd, SIOCETHTOOL, &ifr);
	close(fd);
	return ret < 0 ? -1 : (int)(ev.data != 0);
}

static void *peer_thread(void *arg)
{
	struct peer_q *q = arg;

	/* setns affects only this thread; it ends right after. */
	if (setns(q->nsfd, CLONE_NEWNET) == 0)
		q->gro = ethtool_gro(q->name);
	return NULL;
}

/* Does the namespace file at path have id nsid from here? Its fd if so. */
static int netns_try(const char *path, int nsid)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (nl_get_nsid(fd) == nsid)
		return fd;
	close(fd);
	return -1;
}

#define NS_SEEN_MAX 512

/*
 * A process living in the namespace with id nsid, the way `ip netns
 * identify` finds names but by pid: container runtimes mount their
 * namespaces elsewhere than /run/netns, or nowhere. One RTM_GETNSID per
 * distinct namespace (by inode), and the last pid found is tried first,
 * so a steady peer costs one lookup per check.
 */
static int netns_fd_by_proc(int nsid)
{
	static long hint_pid;
	static ino_t seen[NS_SEEN_MAX];
	char path[64];
	DIR *d;
	struct dirent *de;
	int nseen = 0, fd = -1;
	struct stat self;

	if (hint_pid) {
		snprintf(path, sizeof(path), "/proc/%ld/ns/net", hint_pid);
		fd = netns_try(path, nsid);
		if (fd >= 0)
			return fd;
		hint_pid = 0;
	}
	if (stat("/proc/self/ns/net", &self))
		return -1;
	seen[nseen++] = self.st_ino; /* ours has no nsid from here */
	d = opendir("/proc");
	if (!d)
		return -1;
	while (fd < 0 && (de = readdir(d))) {
		struct stat st;
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		bool dup = false;

		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/ns/net", pid);
		if (stat(path, &st))
			continue;
		for (int k = 0; k < nseen && !dup; k++)
			dup = seen[k] == st.st_ino;
		if (dup)
			continue;
		if (nseen < NS_SEEN_MAX)
			seen[nseen++] = st.st_ino;
		fd = netns_try(path, nsid);
		if (fd >= 0)
			hint_pid = pid;
	}
	closedir(d);
	return fd;
}

/* The namespace whose id (from here) is nsid: /run/netns, then /proc. */
static int netns_fd_by_nsid(int nsid)
{
	char path[300];
	DIR *d = opendir("/run/netns");
	struct dirent *de;
	int found = -1;

	while (d && (de = readdir(d)) && found < 0) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		found = netns_try(path, nsid);
	}
	if (d)
		closedir(d);
	return found >= 0 ? found : netns_fd_by_proc(nsid);
}

static int peer_gro(const struct iface *i, const char *peer_name)
{
	struct peer_q q = { .nsfd = -1, .gro = -1 };
	pthread_t t;

	snprintf(q.name, sizeof(q.name), "%s", peer_name);
	if (i->peer_nsid < 0)
		return ethtool_gro(peer_name);
	q.nsfd = netns_fd_by_nsid(i->peer_nsid);
	if (q.nsfd < 0)
		return -1;
	if (!pthread_create(&t, NULL, peer_thread, &q))
		pthread_join(t, NULL);
	close(q.nsfd);
	return q.gro;
}

/* Sets i->tx_port / tx_reason; appends to the guard details. */
static void check_egress(struct iface *i, char *tc_detail, size_t tlen,
			 char *peer_detail, size_t plen)
{
	char why[160] = "";
	struct nl_link peer;
	int ret;

	i->tx_port = true;
	i->tx_reason[0] = '\0';
	if (!i->ifindex) {
		i->tx_port = false;
		snprintf(i->tx_reason, sizeof(i->tx_reason), "not present");
		return;
	}
	ret = nl_tc_egress(i->ifindex, why, sizeof(why));
	if (ret > 0) {
		i->tx_port = false;
		snprintf(i->tx_reason, sizeof(i->tx_reason),
			 "%s: XDP would bypass it", why);
		appendf(tc_detail, tlen, "%s%s: %s", tc_detail[0] ? "; " : "",
			i->name, why);
		return;
	}
	if (!i->is_veth || !i->peer_ifindex)
		return;
	ret = nl_get_link_in_netns(i->peer_nsid, (uint32_t)i->peer_ifindex,
				   &peer);
	/* Unknown is not "receives": a redirect into a peer without XDP
	 * or GRO vanishes, so only a peer seen to receive gets frames. */
	if (ret) {
		i->tx_port = false;
		snprintf(i->tx_reason, sizeof(i->tx_reason),
			 "veth peer (ifindex %d) not visible (%s): redirected "
			 "frames might be dropped",
			 i->peer_ifindex, strerror(-ret));
		appendf(peer_detail, plen, "%s%s: %s",
			peer_detail[0] ? "; " : "", i->name, i->tx_reason);
		return;
	}
	if (peer.xdp_attached != XDP_ATTACHED_NONE)
		return;
	ret = peer_gro(i, peer.name);
	if (ret == 1)
		return;
	if (ret < 0) {
		i->tx_port = false;
		snprintf(i->tx_reason, sizeof(i->tx_reason),
			 "cannot inspect veth peer %s (no process or "
			 "/run/netns entry in its namespace): redirected "
			 "frames might be dropped",
			 peer.name);
		appendf(peer_detail, plen, "%s%s: %s",
			peer_detail[0] ? "; " : "", i->name, i->tx_reason);
		return;
	}
	i->tx_port = false;
	/* Say how to fix it: what a real receiver (a NIC) does anyway. */
	snprintf(i->tx_reason, sizeof(i->tx_reason),
		 "veth peer %s has neither XDP nor GRO: redirected frames "
		 "would be dropped; to fix, run `ethtool -K %s gro on` in its "
		 "namespace or attach an XDP program to it",
		 peer.name, peer.name);
	appendf(peer_detail, plen, "%s%s: %s", peer_detail[0] ? "; " : "",
		i->name, i->tx_reason);
}

/* ---- sysctls: forwarding and rp_filter ----------------------------------- */

#define SYSCTL_FLAGS                                                           \
	(FPMD_IF_F_FWD_V4 | FPMD_IF_F_FWD_V6 | FPMD_IF_F_RPF_STRICT |          \
	 FPMD_IF_F_RPF_LOOSE)

/* The SYSCTL_FLAGS of i as the kernel applies them now; fwd6 is
 * net.ipv6.conf.all.forwarding. Appends to the guards' details. */
static uint32_t sysctl_flags(const struct iface *i, int fwd6, char *fwd,
			     size_t flen, char *rpf, size_t rlen)
{
	uint32_t f = 0;
	int rp, rpi;

	if (sysctl_int("/proc/sys/net/ipv4/conf/%s/forwarding", i->name, 0))
		f |= FPMD_IF_F_FWD_V4;
	else
		appendf(fwd, flen, "%s%s: ipv4 off", fwd[0] ? "; " : "",
			i->name);
	/* ipv6_rcv() drops everything that arrives on an interface with
	 * IPv6 disabled, forwarding or not. */
	if (sysctl_int("/proc/sys/net/ipv6/conf/%s/disable_ipv6", i->name, 0))
		appendf(fwd, flen, "%s%s: ipv6 disabled", fwd[0] ? "; " : "",
			i->name);
	else if (fwd6 ||
		 sysctl_int("/proc/sys/net/ipv6/conf/%s/force_forwarding",
			    i->name, 0))
		f |= FPMD_IF_F_FWD_V6;
	else
		appendf(fwd, flen, "%s%s: ipv6 off", fwd[0] ? "; " : "",
			i->name);
	/* The kernel uses the larger of "all" and the interface. */
	rp = sysctl_int("/proc/sys/net/ipv4/conf/%s/rp_filter", "all", 0);
	rpi = sysctl_int("/proc/sys/net/ipv4/conf/%s/rp_filter", i->name, 0);
	if (rpi > rp)
		rp = rpi;
	if (rp == 1)
		f |= FPMD_IF_F_RPF_STRICT;
	else if (rp == 2)
		f |= FPMD_IF_F_RPF_LOOSE;
	if (rp)
		appendf(rpf, rlen, "%s%s: %s (checked in XDP)",
			rpf[0] ? "; " : "", i->name,
			rp == 1 ? "strict" : "loose");
	return f;
}

/* ---- change events ------------------------------------------------------- */

/* Guards with an event not yet applied, per kind of re-check. */
static uint32_t pending[2];

void guard_event(enum guard_id g)
{
	bool sysctl = g == GUARD_FORWARDING || g == GUARD_RP_FILTER;

	guards[g].events++;
	guards[g].last_event_ns = now_ns(CLOCK_REALTIME);
	pending[sysctl ? GUARD_PENDING_SYSCTL : GUARD_PENDING_FULL] |= 1u << g;
}

bool guard_pending(enum guard_pending_kind k)
{
	return pending[k] != 0;
}

static uint32_t taken[2];

/* What this check answers: events read after it started wait for the
 * next one. A full check answers the sysctl guards' events too. */
static void guard_pending_take(enum guard_pending_kind k)
{
	taken[k] = pending[k];
	pending[k] = 0;
	if (k == GUARD_PENDING_FULL) {
		taken[k] |= pending[GUARD_PENDING_SYSCTL];
		pending[GUARD_PENDING_SYSCTL] = 0;
	}
}

static void guard_applied(enum guard_pending_kind k)
{
	uint64_t now = now_ns(CLOCK_REALTIME);

	for (int g = 0; g < GUARD_MAX; g++)
		if (taken[k] & (1u << g))
			guards[g].last_applied_ns = now;
	taken[k] = 0;
}

static void guard_set(enum guard_id g, const char *state, const char *detail)
{
	struct guard *gd = &guards[g];

	if (strcmp(gd->state, state) || strcmp(gd->detail, detail)) {
		if (strcmp(state, "clear"))
			log_warn("guard %s: %s: %s", gd->name, state, detail);
		else if (gd->state[0])
			log_info("guard %s: clear%s%s", gd->name,
				 detail[0] ? ": " : "", detail);
	}
	snprintf(gd->state, sizeof(gd->state), "%s", state);
	snprintf(gd->detail, sizeof(gd->detail), "%s", detail);
}

static void sysctl_guards_set(const char *fwd, const char *rpf)
{
	guard_set(GUARD_FORWARDING, fwd[0] ? "kernel-path" : "clear", fwd);
	guard_set(GUARD_RP_FILTER, rpf[0] ? "checked" : "clear", rpf);
}

int guard_check(void)
{
	char nf[512], fwd[512] = "", rpf[512] = "", tc[512] = "",
		peer[512] = "", xf[128] = "", tci[512] = "", redir[512] = "";
	static struct rules_ctx r4, r6;
	static int last_use_pmtu;
	int nfn, x4 = 0, x6 = 0, fwd6, redir_all, use_pmtu, refused = 0;

	guard_pending_take(GUARD_PENDING_FULL);

	nfn = netfilter_scan(nf, sizeof(nf));
	if (nfn > 0 && !cfg.allow_nf_bypass) {
		guard_set(GUARD_NETFILTER, "refused", nf);
		refused = 1;
	} else if (nfn > 0) {
		guard_set(GUARD_NETFILTER, "bypassed", nf);
	} else {
		guard_set(GUARD_NETFILTER, "clear", "");
	}

	memset(&r4, 0, sizeof(r4));
	memset(&r6, 0, sizeof(r6));
	r4.family = AF_INET;
	r6.family = AF_INET6;
	nl_dump_rules(AF_INET, rule_cb, &r4);
	nl_dump_rules(AF_INET6, rule_cb, &r6);
	{
		char d[sizeof(r4.detail) * 2 + 4];

		snprintf(d, sizeof(d), "%s%s%s", r4.detail,
			 r4.detail[0] && r6.detail[0] ? "; " : "", r6.detail);
		guard_set(GUARD_POLICY_RULES, d[0] ? "kernel-path" : "clear",
			  d);
	}
	if (nl_xfrm_policies(&x4, &x6) == 0 && (x4 || x6))
		snprintf(xf, sizeof(xf), "%d IPv4 and %d IPv6 xfrm policies",
			 x4, x6);
	guard_set(GUARD_XFRM, xf[0] ? "kernel-path" : "clear", xf);

	fwd6 = sysctl_int("/proc/sys/net/ipv6/conf/%s/forwarding", "all", 0);
	/* No netconf event carries send_redirects: polled here. */
	redir_all = sysctl_int("/proc/sys/net/ipv4/conf/%s/send_redirects",
			       "all", 1);
	/* With it on, ip_forward() sizes IPv4 by the path MTUs the kernel
	 * learnt (exceptions fpmd cannot see): IPv4 takes the kernel path.
	 * A global sysctl with no event: polled. */
	use_pmtu = sysctl_int("/proc/sys/net/ipv4/%s", "ip_forward_use_pmtu", 0);
	if (use_pmtu != last_use_pmtu)
		log_info("guard: net.ipv4.ip_forward_use_pmtu=%d: IPv4 takes the "
			 "%s path",
			 use_pmtu, use_pmtu ? "kernel" : "fast");
	last_use_pmtu = use_pmtu;
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		struct iface *i = &iface_tab[s];
		uint32_t f, oldf = i->guard_flags;
		bool old_tx = i->tx_port, old_susp = i->suspended;
		bool mtu6_changed;

		if (!i->used || !i->ifindex)
			continue;
		f = sysctl_flags(i, fwd6, fwd, sizeof(fwd), rpf, sizeof(rpf));
		/* IN_DEV_TX_REDIRECTS: "all" OR the interface. The kernel
		 * may then redirect an IPv4 hairpin: XDP passes those. */
		if (redir_all ||
		    sysctl_int("/proc/sys/net/ipv4/conf/%s/send_redirects",
			       i->name, 1)) {
			f |= FPMD_IF_F_REDIRECTS_V4;
			appendf(redir, sizeof(redir), "%s%s",
				redir[0] ? ", " : "", i->name);
		}
		i->policy_reason[0] = '\0';
		if (rules_apply(&r4, i) || x4) {
			f |= FPMD_IF_F_KERNEL_V4;
			appendf(i->policy_reason, sizeof(i->policy_reason),
				"ipv4: %s", x4 ? "xfrm policies" : "policy rules");
		}
		if (rules_apply(&r6, i) || x6) {
			f |= FPMD_IF_F_KERNEL_V6;
			appendf(i->policy_reason, sizeof(i->policy_reason),
				"%sipv6: %s", i->policy_reason[0] ? ", " : "",
				x6 ? "xfrm policies" : "policy rules");
		}
		if (use_pmtu) {
			f |= FPMD_IF_F_KERNEL_V4;
			appendf(i->policy_reason, sizeof(i->policy_reason),
				"%sipv4: net.ipv4.ip_forward_use_pmtu",
				i->policy_reason[0] ? ", " : "");
		}
		{
			char why[160] = "";

			/* XDP runs before tc ingress: that traffic must meet
			 * its filters in the kernel. */
			if (nl_tc_ingress(i->ifindex, why, sizeof(why)) > 0) {
				f |= FPMD_IF_F_KERNEL_V4 | FPMD_IF_F_KERNEL_V6;
				appendf(i->policy_reason,
					sizeof(i->policy_reason), "%s%s",
					i->policy_reason[0] ? ", " : "", why);
				appendf(tci, sizeof(tci), "%s%s: %s",
					tci[0] ? "; " : "", i->name, why);
			}
		}
		i->guard_flags = f;
		i->suspended = refused;
		/* No event announces it: polled here, every guard interval. */
		mtu6_changed = iface_read_mtu6(i);
		check_egress(i, tc, sizeof(tc), peer, sizeof(peer));
		/* Before attach the maps still serve the program a previous
		 * fpmd left running (adopted); attaching syncs them. */
		if (i->attached && (oldf != f || old_tx != i->tx_port ||
				    old_susp != i->suspended || mtu6_changed)) {
			iface_sync(i);
			rib_iface_changed(i->ifindex);
		}
	}
	sysctl_guards_set(fwd, rpf);
	guard_set(GUARD_TC_EGRESS, tc[0] ? "kernel-path" : "clear", tc);
	guard_set(GUARD_TC_INGRESS, tci[0] ? "kernel-path" : "clear", tci);
	if (redir[0])
		appendf(redir, sizeof(redir), ": IPv4 hairpins (egress = "
			"ingress) take the kernel path, which sends the ICMP "
			"redirect");
	guard_set(GUARD_SEND_REDIRECTS, redir[0] ? "kernel-path" : "clear",
		  redir);
	/* Every detail is an egress kept out of the tx ports. */
	guard_set(GUARD_VETH_PEER, peer[0] ? "kernel-path" : "clear", peer);
	guard_applied(GUARD_PENDING_FULL);
	return refused;
}

int guard_sysctls(void)
{
	char fwd[512] = "", rpf[512] = "";
	int fwd6, changed = 0;

	guard_pending_take(GUARD_PENDING_SYSCTL);
	fwd6 = sysctl_int("/proc/sys/net/ipv6/conf/%s/forwarding", "all", 0);
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		struct iface *i = &iface_tab[s];
		uint32_t f;

		if (!i->used || !i->ifindex)
			continue;
		f = (i->guard_flags & ~SYSCTL_FLAGS) |
		    sysctl_flags(i, fwd6, fwd, sizeof(fwd), rpf, sizeof(rpf));
		if (f == i->guard_flags)
			continue;
		i->guard_flags = f;
		changed++;
		if (i->attached) {
			iface_sync(i);
			rib_iface_changed(i->ifindex);
		}
	}
	sysctl_guards_set(fwd, rpf);
	guard_applied(GUARD_PENDING_SYSCTL);
	return changed;
}
