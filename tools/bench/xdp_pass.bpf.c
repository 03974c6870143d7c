// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * XDP_PASS and nothing else. The benchmark attaches it under the candidates
 * that filter in the stack (no filter, nftables, iptables), so that every
 * candidate receives the flood the same way: as xdp_frames that veth turns
 * into skbs only for what XDP passes.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int xdp_pass_all(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}
