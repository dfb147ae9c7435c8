// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The redirect floor of tests/bench_live.py: a router that does only what
 * every XDP forwarder must do to move a frame from one veth to the next,
 * and nothing else. No parsing beyond the Ethernet header, no lookup, no
 * counter: both MACs rewritten, then one devmap redirect to the fixed
 * egress (the mechanism fpmd uses, tx_ports). Loaded and attached by
 * tests/trafficgen floor, which sets the MACs before load and the egress
 * in the devmap.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} floor_tx SEC(".maps");

/* Destination MAC then source MAC, as they lie in the frame; set by
 * trafficgen before load. Halfwords: six 2-byte stores per frame. */
const volatile __u16 floor_macs[6];

SEC("xdp")
int floor_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u16 *w = data;

	if (data + ETH_HLEN > data_end)
		return XDP_PASS;
#pragma unroll
	for (int i = 0; i < 6; i++)
		w[i] = floor_macs[i];
	return bpf_redirect_map(&floor_tx, 0, 0);
}

char LICENSE[] SEC("license") = "GPL";
