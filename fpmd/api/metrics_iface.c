// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Metrics of the managed interfaces: what XDP did with the packets each
 * received (as 'fpmctl show counters'), what it sent out of each, and
 * each interface's XDP and tx-port state (as 'fpmctl show interfaces').
 */
#include <string.h>

#include "api/metrics_text.h"
#include "fib/maps.h"
#include "kernel/iface.h"
#include "kernel/tc_path.h"

static bool is_tx_reason(uint32_t r)
{
	return r == FPMD_R_TX || r == FPMD_R_TX_REDIRECT_ERR ||
	       r == FPMD_R_TX_XMIT_DROP;
}

static struct fpmd_stat stat_of(const struct iface *i, uint32_t r)
{
	struct fpmd_stat st;

	if (maps_stat_read(i->slot, r, &st))
		memset(&st, 0, sizeof(st));
	return st;
}

/* The managed interfaces, as 'show counters' and 'show interfaces'. */
static const struct iface *next_iface(const struct iface *i)
{
	for (i = i ? i + 1 : iface_tab; i < iface_tab + FPMD_MAX_IFACES; i++)
		if (i->used)
			return i;
	return NULL;
}

#define for_each_iface(i)                                                      \
	for (const struct iface *i = next_iface(NULL); i; i = next_iface(i))

/* Ingress: every packet moves exactly one reason on its interface. */
static void packets(struct out *o, bool bytes)
{
	for_each_iface(i)
	{
		for (uint32_t r = 0; r < FPMD_R_MAX; r++) {
			struct fpmd_stat st;

			if (is_tx_reason(r))
				continue;
			st = stat_of(i, r);
			metric_sample(o, bytes ? st.bytes : st.packets,
				      "interface", i->name, "reason",
				      fpmd_reason_names[r], NULL);
		}
	}
}

static void rx_packets(struct out *o)
{
	packets(o, false);
}

static void rx_bytes(struct out *o)
{
	packets(o, true);
}

static void tx_of(struct out *o, uint32_t r, bool bytes)
{
	for_each_iface(i)
	{
		struct fpmd_stat st = stat_of(i, r);

		metric_sample(o, bytes ? st.bytes : st.packets, "interface",
			      i->name, NULL);
	}
}

static void tx_packets(struct out *o)
{
	tx_of(o, FPMD_R_TX, false);
}

static void tx_bytes(struct out *o)
{
	tx_of(o, FPMD_R_TX, true);
}

static void tx_redirect_errors(struct out *o)
{
	tx_of(o, FPMD_R_TX_REDIRECT_ERR, false);
}

static void tx_xmit_drops(struct out *o)
{
	tx_of(o, FPMD_R_TX_XMIT_DROP, false);
}

static const char *attached_mode(const struct iface *i)
{
	if (!i->attached)
		return "none";
	return i->mode == XDP_MODE_NATIVE ? "native" : "generic";
}

static void xdp_attached(struct out *o)
{
	for_each_iface(i)
	{
		metric_sample(o, i->attached, "interface", i->name, "mode",
			      attached_mode(i), NULL);
	}
}

static void xdp_state(struct out *o)
{
	static const char *const states[] = { "attached", "detached",
					      "detached-foreign", "absent",
					      NULL };

	for_each_iface(i)
	{
		metric_state_set(o, states, iface_xdp_state(i), "interface",
				 i->name, "state");
	}
}

static void tc_attached(struct out *o)
{
	for_each_iface(i)
	{
		metric_sample(o, i->tc_attached, "interface", i->name, "path",
			      tc_iface_path(i), NULL);
	}
}

static void peer_egress(struct out *o)
{
	for_each_iface(i)
	{
		metric_sample(o, i->peer_egress, "interface", i->name, NULL);
	}
}

static void xmit_sg(struct out *o)
{
	for_each_iface(i)
	{
		metric_sample(o, i->xmit_sg, "interface", i->name, NULL);
	}
}

static void iface_up(struct out *o)
{
	for_each_iface(i)
	{
		metric_sample(o, i->ifindex && i->up, "interface", i->name,
			      NULL);
	}
}

static void iface_tx_port(struct out *o)
{
	for_each_iface(i)
	{
		metric_sample(o, iface_is_tx_port(i), "interface", i->name,
			      NULL);
	}
}

static void iface_suspended(struct out *o)
{
	for_each_iface(i)
	{
		metric_sample(o, i->suspended, "interface", i->name, NULL);
	}
}

static const struct metric_family families[] = {
	{ "fpmd_packets_total", "counter",
	  "Packets received on a managed interface, by what XDP did with "
	  "them: forwarded, drop-* or pass-* (to the kernel); see fpmctl(8) "
	  "COUNTERS.",
	  .write = rx_packets },
	{ "fpmd_bytes_total", "counter",
	  "Bytes received on a managed interface, by what XDP did with them "
	  "(as fpmd_packets_total).",
	  .write = rx_bytes },
	{ "fpmd_tx_packets_total", "counter",
	  "Packets XDP forwarded out of this interface (redirected).",
	  .write = tx_packets },
	{ "fpmd_tx_bytes_total", "counter",
	  "Bytes XDP forwarded out of this interface (after the trim).",
	  .write = tx_bytes },
	{ "fpmd_tx_redirect_errors_total", "counter",
	  "Redirects out of this interface that the devmap refused "
	  "(xdp:xdp_redirect_err).",
	  .write = tx_redirect_errors },
	{ "fpmd_tx_xmit_drops_total", "counter",
	  "Redirected frames the driver of this interface dropped "
	  "(xdp:xdp_devmap_xmit).",
	  .write = tx_xmit_drops },
	{ "fpmd_interface_xdp_attached", "gauge",
	  "1 when fpmd's XDP program is attached to the interface, in mode "
	  "native or generic (none when not attached).",
	  .write = xdp_attached },
	{ "fpmd_interface_xdp_state", "gauge",
	  "The interface's XDP state (1 for the current state): attached, "
	  "detached, detached-foreign (another program is there), absent.",
	  .write = xdp_state },
	{ "fpmd_interface_tc_attached", "gauge",
	  "1 when fpmd's tc program is attached at tcx ingress of the "
	  "interface; path: which program takes its traffic (xdp, tc for "
	  "TC_ONLY, none).",
	  .write = tc_attached },
	{ "fpmd_interface_peer_egress", "gauge",
	  "1 when the interface is a PEER egress: a veth whose peer takes no "
	  "XDP redirects, served by the tc program (bpf_redirect_peer).",
	  .write = peer_egress },
	{ "fpmd_interface_xmit_sg", "gauge",
	  "1 when the interface's driver transmits multi-buffer XDP frames "
	  "(xdp-features ndo-xmit-sg): frames larger than a page routed to it "
	  "leave by XDP; 0: they go to the kernel (pass-egress-kernel).",
	  .write = xmit_sg },
	{ "fpmd_interface_up", "gauge",
	  "1 when the interface is present, administratively up and has "
	  "carrier.",
	  .write = iface_up },
	{ "fpmd_interface_tx_port", "gauge",
	  "1 when XDP may redirect out of the interface; 0 when its egress "
	  "traffic takes the kernel path (see fpmctl show interfaces).",
	  .write = iface_tx_port },
	{ "fpmd_interface_suspended", "gauge",
	  "1 when netfilter rules appeared and all traffic of the interface "
	  "goes to the kernel.",
	  .write = iface_suspended },
};

const struct metric_group metrics_iface = METRIC_GROUP(families);
