// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Guards for kernel features the XDP fast path bypasses. Run at start, at
 * once when the kernel announces a change (netconf for forwarding and
 * rp_filter, rule, tc, xfrm policy and nftables notifications), and every
 * guard interval as a backstop: for what has no event (a veth peer's GRO
 * in another namespace) and for an event lost to a socket overrun.
 * The netfilter scan: netfilter.c; the veth peer probe: veth_peer.c.
 */
#include <net/if.h> /* before linux/ headers: it guards linux/if.h */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "conf/conf.h"
#include "kernel/guard.h"
#include "kernel/guard_priv.h"
#include "kernel/iface.h"
#include "common/log.h"
#include "common/util.h"
#include "kernel/nl.h"
#include "kernel/tc_path.h"
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

/* ---- per-interface checks ------------------------------------------------ */

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
 * Sets i->tx_port / tx_reason and the container path modes (tc_path.c):
 * i->peer_egress, i->want_tc_only. Appends to the guard details; served
 * lists the egresses the tc path delivers to. From what o saw.
 */
static void check_egress(struct iface *i, const struct guard_obs_if *o,
			 char *tc_detail, size_t tlen, char *peer_detail,
			 size_t plen, char *served, size_t slen)
{
	const char *why = o->tc_eg_why;
	const struct nl_link *peer = &o->peer;
	bool tc_egress = false;
	int ret, txcsum = o->txcsum;

	i->tx_port = true;
	i->tx_reason[0] = '\0';
	i->peer_egress = false;
	i->want_tc_only = false;
	if (!i->ifindex) {
		i->tx_port = false;
		snprintf(i->tx_reason, sizeof(i->tx_reason), "not present");
		return;
	}
	ret = o->tc_eg;
	if (ret > 0) {
		/* bpf_redirect_peer skips the egress's tc too: no PEER. */
		tc_egress = true;
		i->tx_port = false;
		snprintf(i->tx_reason, sizeof(i->tx_reason),
			 "%s: XDP would bypass it", why);
		appendf(tc_detail, tlen, "%s%s: %s", tc_detail[0] ? "; " : "",
			i->name, why);
	}
	if (!i->is_veth || !i->peer_ifindex)
		return;
	ret = o->peer_ret;
	/* Unknown is not "receives": a redirect into a peer without XDP
	 * or GRO vanishes, so only a peer seen to receive gets frames. */
	if (ret && !tc_egress) {
		i->tx_port = false;
		snprintf(i->tx_reason, sizeof(i->tx_reason),
			 "veth peer (ifindex %d) not visible (%s): redirected "
			 "frames might be dropped",
			 i->peer_ifindex, strerror(-ret));
		appendf(peer_detail, plen, "%s%s: %s",
			peer_detail[0] ? "; " : "", i->name, i->tx_reason);
		return;
	}
	if (ret)
		return;
	snprintf(i->peer_name, sizeof(i->peer_name), "%s", peer->name);
	ret = o->gro;
	/* Partial checksums from the peer would be lost across an XDP
	 * redirect (DESIGN.md): TC_ONLY, whatever the peer's XDP. */
	i->want_tc_only = cfg.container_path && txcsum == 1;
	if (tc_egress || peer->xdp_attached != XDP_ATTACHED_NONE || ret == 1)
		return;
	if (ret < 0) {
		i->tx_port = false;
		snprintf(i->tx_reason, sizeof(i->tx_reason),
			 "cannot inspect veth peer %s (no process or "
			 "/run/netns entry in its namespace): redirected "
			 "frames might be dropped",
			 peer->name);
		appendf(peer_detail, plen, "%s%s: %s",
			peer_detail[0] ? "; " : "", i->name, i->tx_reason);
		return;
	}
	i->tx_port = false;
	if (cfg.container_path) {
		i->peer_egress = true;
		snprintf(i->tx_reason, sizeof(i->tx_reason),
			 "veth peer %s has neither XDP nor GRO: served by the "
			 "tc path (bpf_redirect_peer) while up with carrier",
			 peer->name);
		appendf(served, slen, "%s%s", served[0] ? ", " : "", i->name);
		return;
	}
	/* Say how to fix it: what a real receiver (a NIC) does anyway. */
	snprintf(i->tx_reason, sizeof(i->tx_reason),
		 "veth peer %s has neither XDP nor GRO: redirected frames "
		 "would be dropped; to fix, run `ethtool -K %s gro on` in its "
		 "namespace or attach an XDP program to it",
		 peer->name, peer->name);
	appendf(peer_detail, plen, "%s%s: %s", peer_detail[0] ? "; " : "",
		i->name, i->tx_reason);
}

/*
 * Can the egress's driver transmit multi-buffer XDP frames (xdp-features
 * ndo-xmit-sg)? The devmap refuses such a frame to any other device and
 * it is lost, so the program sends frames larger than a page that would
 * leave there to the kernel (FPMD_IF_F_XMIT_SG unset). For a veth it
 * follows its peer's XDP or GRO, like the redirects themselves; a kernel
 * that cannot say (before 6.3) is taken as "cannot". Logged on a change,
 * where it matters: interfaces whose MTU takes jumbo frames.
 */
static uint32_t xmit_sg_flag(struct iface *i, const struct guard_obs_if *o)
{
	int ret = o->feat_ret;
	bool sg = !ret && (o->feat & NL_XDP_ACT_NDO_XMIT_SG);

	if ((sg != i->xmit_sg || !i->xmit_sg_known) && i->mtu > 1500 &&
	    (!sg || i->xmit_sg_known))
		log_info("iface %s: %s", i->name,
			 sg ? "transmits multi-buffer XDP frames: jumbo "
			      "frames leave by it in XDP again" :
			      ret ? "cannot tell whether its driver transmits "
				    "multi-buffer XDP frames (no netdev "
				    "xdp-features): frames larger than a page "
				    "leaving by it take the kernel path" :
				    "its driver does not transmit multi-buffer "
				    "XDP frames (no ndo-xmit-sg in its "
				    "xdp-features): frames larger than a page "
				    "leaving by it take the kernel path");
	i->xmit_sg = sg;
	i->xmit_sg_known = true;
	return sg ? FPMD_IF_F_XMIT_SG : 0;
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

/* Stamp the guards whose events a check answered. */
static void stamp_applied(uint32_t answered)
{
	uint64_t now = now_ns(CLOCK_REALTIME);

	for (int g = 0; g < GUARD_MAX; g++)
		if (answered & (1u << g))
			guards[g].last_applied_ns = now;
}

static void guard_set(enum guard_id g, const char *state, const char *detail)
{
	struct guard *gd = &guards[g];

	if (strcmp(gd->state, state) || strcmp(gd->detail, detail)) {
		if (!strcmp(state, "tc-path"))
			log_info("guard %s: %s: %s", gd->name, state, detail);
		else if (strcmp(state, "clear"))
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

/* Full checks applied so far: an answer asked before the last one
 * applied is older than it. */
static uint64_t checks_applied;

void guard_probe_fill(struct guard_obs *o)
{
	memset(o, 0, sizeof(*o));
	/* What this check answers: events read after it started wait for
	 * the next one. */
	o->taken = pending[GUARD_PENDING_FULL];
	pending[GUARD_PENDING_FULL] = 0;
	o->after = checks_applied;
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		const struct iface *i = &iface_tab[s];
		struct guard_obs_if *oi = &o->ifs[s];

		if (!i->used || !i->ifindex)
			continue;
		oi->ifindex = i->ifindex;
		oi->gen = i->gen;
		oi->is_veth = i->is_veth;
		oi->peer_ifindex = i->peer_ifindex;
		oi->peer_nsid = i->peer_nsid;
	}
}

struct guard_obs *guard_probe_new(void)
{
	struct guard_obs *o = malloc(sizeof(*o));

	if (o)
		guard_probe_fill(o);
	return o;
}

void guard_probe_drop(struct guard_obs *o)
{
	/* Not answered after all: the next check answers them. */
	pending[GUARD_PENDING_FULL] |= o->taken;
	o->taken = 0;
}

/* Did the loop learn something newer than o meanwhile: a check applied,
 * an interface's link event, one removed or re-created (the same
 * ifindex again or not)? */
static bool probe_stale(const struct guard_obs *o)
{
	if (o->after != checks_applied)
		return true;
	for (int s = 0; s < FPMD_MAX_IFACES; s++) {
		const struct iface *i = &iface_tab[s];

		if (i->used && i->ifindex &&
		    (o->ifs[s].ifindex != i->ifindex || o->ifs[s].gen != i->gen))
			return true;
	}
	return false;
}

int guard_check(void)
{
	static struct guard_obs o;
	int ret;

	guard_probe_fill(&o);
	guard_probe_run(&o);
	ret = guard_probe_apply(&o);
	return ret > 0;
}

int guard_probe_apply(struct guard_obs *o)
{
	char fwd[512] = "", rpf[512] = "", tc[512] = "", peer[512] = "",
	     xf[128] = "", tci[512] = "", redir[512] = "", served[256] = "";
	const struct rules_ctx *r4 = &o->r4, *r6 = &o->r6;
	static int last_use_pmtu;
	const char *pstate;
	int x4 = o->x4, x6 = o->x6, fwd6, redir_all, use_pmtu, refused = 0;

	if (probe_stale(o)) {
		guard_probe_drop(o);
		return -ESTALE;
	}
	/* It reads the sysctls now: it answers their events too. */
	o->taken |= pending[GUARD_PENDING_SYSCTL];
	pending[GUARD_PENDING_SYSCTL] = 0;
	if (o->nfn > 0 && !cfg.allow_nf_bypass) {
		guard_set(GUARD_NETFILTER, "refused", o->nf);
		refused = 1;
	} else if (o->nfn > 0) {
		guard_set(GUARD_NETFILTER, "bypassed", o->nf);
	} else {
		guard_set(GUARD_NETFILTER, "clear", "");
	}
	{
		char d[sizeof(r4->detail) * 2 + 4];

		snprintf(d, sizeof(d), "%s%s%s", r4->detail,
			 r4->detail[0] && r6->detail[0] ? "; " : "", r6->detail);
		guard_set(GUARD_POLICY_RULES, d[0] ? "kernel-path" : "clear",
			  d);
	}
	if (o->xf_ret == 0 && (x4 || x6))
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
		const struct guard_obs_if *oi = &o->ifs[s];
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
		if (rules_apply(r4, i) || x4) {
			f |= FPMD_IF_F_KERNEL_V4;
			appendf(i->policy_reason, sizeof(i->policy_reason),
				"ipv4: %s", x4 ? "xfrm policies" : "policy rules");
		}
		if (rules_apply(r6, i) || x6) {
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
			const char *why = oi->tc_in_why;

			/* XDP runs before tc ingress: that traffic must meet
			 * its filters in the kernel. */
			if (oi->tc_in > 0) {
				f |= FPMD_IF_F_KERNEL_V4 | FPMD_IF_F_KERNEL_V6;
				appendf(i->policy_reason,
					sizeof(i->policy_reason), "%s%s",
					i->policy_reason[0] ? ", " : "", why);
				appendf(tci, sizeof(tci), "%s%s: %s",
					tci[0] ? "; " : "", i->name, why);
			}
		}
		f |= xmit_sg_flag(i, oi);
		i->guard_flags = f;
		i->suspended = refused;
		/* No event announces it: polled here, every guard interval. */
		mtu6_changed = iface_read_mtu6(i);
		check_egress(i, oi, tc, sizeof(tc), peer, sizeof(peer), served,
			     sizeof(served));
		/* Before attach the maps still serve the program a previous
		 * fpmd left running (adopted); attaching syncs them. */
		if (iface_active(i) && (oldf != f || old_tx != i->tx_port ||
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
	/* Every detail is an egress kept out of the tx ports; those the tc
	 * path serves are named, but take no kernel path. */
	pstate = peer[0] ? "kernel-path" : served[0] ? "tc-path" : "clear";
	if (served[0])
		appendf(peer, sizeof(peer), "%sserved by the tc path "
			"(bpf_redirect_peer): %s", peer[0] ? "; " : "", served);
	guard_set(GUARD_VETH_PEER, pstate, peer);
	/* The modes just decided: XDP or tc, links, map entries. */
	tc_path_apply();
	checks_applied++;
	stamp_applied(o->taken);
	return refused;
}

int guard_wants_tc_only(const struct iface *i)
{
	struct nl_link peer;
	int txcsum;

	if (!cfg.container_path || !i->is_veth || !i->peer_ifindex)
		return 0;
	if (nl_talk_busy())
		return -1;
	if (nl_get_link_in_netns(i->peer_nsid, (uint32_t)i->peer_ifindex,
				 &peer))
		return 0;
	peer_gro(i->peer_nsid, peer.name, &txcsum);
	return txcsum == 1;
}

int guard_sysctls(void)
{
	char fwd[512] = "", rpf[512] = "";
	uint32_t answered = pending[GUARD_PENDING_SYSCTL];
	int fwd6, changed = 0;

	pending[GUARD_PENDING_SYSCTL] = 0;
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
		if (iface_active(i)) {
			iface_sync(i);
			rib_iface_changed(i->ifindex);
		}
	}
	sysctl_guards_set(fwd, rpf);
	stamp_applied(answered);
	return changed;
}
