// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The "service under attack" stage's spoofed range, 198.18.128.0/17, dropped
 * at once in XDP, everything else passed:
 *  - on the generator's side, what the protected host sends back to the
 *    spoofed sources (SYN-ACKs, resets) dies there, standing for the wire:
 *    the replies' cost to the host stays, the generator's namespace does
 *    not pay for them too;
 *  - on the receiving side it is the floor: a filter that knows the flood
 *    and costs next to nothing, while the legitimate client gets through.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The spoofed range wrflood draws from in that stage: 198.18.128.0/17. */
#define SPOOF_NET	0xc6128000
#define SPOOF_MASK	0xffff8000

static __always_inline int spoofed(const __u8 *a)
{
	return (bpf_ntohl(*(const __u32 *)a) & SPOOF_MASK) == SPOOF_NET;
}

SEC("xdp")
int xdp_unspoof(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u8 *p = data;

	/* Ethernet (14), IPv4 source at 26..29, destination at 30..33. */
	if (data + 34 > end || p[12] != 0x08 || p[13] != 0x00)
		return XDP_PASS;
	if (spoofed(p + 26) || spoofed(p + 30))
		return XDP_DROP;
	return XDP_PASS;
}
