/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The global counters (enum weir_global): per CPU, in wr_global, so no
 * atomics are needed.
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_COUNT_H
#define WEIR_BPF_COUNT_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "weir.h"
#include "maps.h"
#include "verdict.h"

/*
 * Global counter idx (enum weir_global) of this CPU's struct
 * weir_globals g, looked up by weir_core; NULL: none.
 */
static __always_inline void gcount(struct weir_globals *g, __u32 idx)
{
	if (g && idx < WEIR_G_MAX)
		g->count[idx] += 1;
}

/* Global counter idx, for paths off the per-packet one (a fault, an event, the cookies). */
static __always_inline void count(__u32 idx)
{
	__u32 zero = 0;

	gcount(bpf_map_lookup_elem(&wr_global, &zero), idx);
}

/*
 * The entry's verdict on a frame of bytes bytes that arrived on ifindex,
 * into that interface's counters if the loader gave it a slot
 * (wr_if_slot): at most WEIR_IF_PROBES array lookups, inlined, the first
 * in all but a collision of low bits.
 */
static __always_inline int wr_if_count(__u32 ifindex, __u32 bytes, __u32 dropped)
{
	struct weir_if_stats *st;
	__u32 i, h, *owner;

	/* No frame arrives on ifindex 0 (a slot never used names it). */
	if (!ifindex)
		return 0;
	for (i = 0; i < WEIR_IF_PROBES; i++) {
		h = (ifindex + i) & (WEIR_IF_SLOTS - 1);
		owner = bpf_map_lookup_elem(&wr_if_slot, &h);
		/* A slot never used ends the search: no later one holds ifindex. */
		if (!owner || !*owner)
			return 0;
		if (*owner != ifindex)
			continue;
		st = bpf_map_lookup_elem(&wr_if_stats, &h);
		if (!st)
			return 0;
		if (dropped) {
			st->dropped_pkts += 1;
			st->dropped_bytes += bytes;
		} else {
			st->passed_pkts += 1;
			st->passed_bytes += bytes;
		}
		return 1;
	}
	return 0;
}

/*
 * Once per frame, after the entry's verdict, reading what it needs from
 * the entry's own context. So the entry keeps nothing but the context
 * live across weir_core for it: with a length and an ifindex passed from
 * the entries, weir_xdp's own frame, the head of the deepest call chain
 * (at 6.1's 512 bytes), grew by a slot, and 6.1 refused weir_tc.
 * The XDP count is the linear buffer's length: a multi-buffer frame's
 * fragments are not in it (their length costs a helper call).
 *
 * Inline on the entries' own verdicts (if_count_*): every frame passes
 * here, and a BPF-to-BPF call returns through the kernel's return thunk,
 * which under a speculative-return mitigation (AMD's Safe RET here) cost
 * about 13 ns a frame. The global copies (wr_if_count_*) are for the
 * frames bound for the cookie programs: the verifier walks a global
 * function once, and the inline one once per state that reaches it.
 */
static __always_inline int if_count_xdp(struct xdp_md *ctx, int v, __u32 cookie_drops)
{
	/* cookie_drops: no cookie programs to answer it, so the fallback drops a cookie's SYN. */
	__u32 dropped = v == WR_VERDICT_DROP || (v == WR_VERDICT_COOKIE && cookie_drops);
	void *data, *end;
	__u64 len;

	if (!ctx)
		return 0;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	/*
	 * One subtraction of the two packet pointers, at once, into a scalar:
	 * with it left to the compiler, it spilled ctx->data as a 32-bit word
	 * across the lookups, which the verifier refuses (invalid size of
	 * register spill).
	 */
	len = (__u64)end - (__u64)data;
	asm volatile("" : "+r"(len));
	return wr_if_count(ctx->ingress_ifindex, len, dropped);
}

__noinline int wr_if_count_xdp(struct xdp_md *ctx, int v, __u32 cookie_drops)
{
	return if_count_xdp(ctx, v, cookie_drops);
}

/* At TC ingress skb->ifindex is the device whose hook runs this; its whole length. */
static __always_inline int if_count_skb(struct __sk_buff *skb, int v)
{
	/* No cookies at TC: the fallback drops a cookie's SYN. */
	__u32 dropped = v == WR_VERDICT_DROP || v == WR_VERDICT_COOKIE;

	if (!skb)
		return 0;
	return wr_if_count(skb->ifindex, skb->len, dropped);
}

__noinline int wr_if_count_skb(struct __sk_buff *skb, int v)
{
	return if_count_skb(skb, v);
}

#endif /* WEIR_BPF_COUNT_H */
