// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The floor for cost measurements: an XDP program that drops everything. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int xdp_drop_all(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_DROP;
}
