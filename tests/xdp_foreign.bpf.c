// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A stranger's XDP program for tests/test_attach.py: it passes every frame
 * to the kernel. It is named like fpmd's own program on purpose: fpmd must
 * tell them apart by id, not by name.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int fpmd_xdp(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
