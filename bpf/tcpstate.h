/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `tcp-state`: is a TCP segment other than a SYN part of a connection
 * this host has? Asked of the kernel (bpf_skc_lookup_tcp), and the
 * answer for an established connection kept a while in a per-CPU cache
 * of verified flows (wr_tcp_seen), so that a flow's packets pay the
 * lookup about once per WEIR_TCP_SEEN_TTL_NS rather than each time.
 * Out-of-state segments (a spoofed ACK, RST, FIN or SYN-ACK flood) are
 * misses by nature: each costs one lookup, and nothing is stored for
 * them (docs/tcp-state.md says why no negative cache and no lookup
 * budget).
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_TCPSTATE_H
#define WEIR_BPF_TCPSTATE_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "weir.h"
#include "weir_parse.h"
#include "maps.h"
#include "count.h"
#include "eval.h"

/*
 * Verified flows, per CPU (a flow's packets arrive on one CPU under
 * RSS): a direct-mapped table, the slot picked by a hash of the
 * 4-tuple, holding the tuple and until when it counts as verified.
 * Only a socket lookup that found a connection writes a slot, so a
 * flood cannot fill or evict it; two live flows that share a slot take
 * turns, each paying a lookup when the other had it last.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WEIR_TCP_SEEN_SLOTS);
	__type(key, __u32);
	__type(value, struct weir_tcp_seen);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_tcp_seen SEC(".maps");

/* The cache's slot of a tuple (addresses in network order, ports as in the header). */
static __always_inline __u32 tcp_seen_slot(const struct weir_tcp_seen *t)
{
	__u32 h = t->ports * 0x9e3779b1u;
	int i;

WR_UNROLL
	for (i = 0; i < 4; i++)
		h = (h ^ t->saddr[i] ^ (t->daddr[i] * 0x85ebca6bu)) * 0x9e3779b1u;
	return (h >> (32 - WEIR_TCP_SEEN_SHIFT)) & (WEIR_TCP_SEEN_SLOTS - 1);
}

/*
 * The segment's verdict under tcp-state. data..end: the frame; ctx: the
 * entry's context for the lookup (an XDP one if xdp, a constant). 1 pass,
 * 0 out of state.
 */
static __always_inline int tcp_state_check(void *ctx, int xdp, const void *data,
					   const void *end, const struct wr_pkt *p, __u64 now)
{
	struct bpf_sock_tuple t = {};
	struct weir_tcp_seen k = {};
	struct weir_tcp_seen *slot;
	const struct tcphdr *th = NULL;
	const struct iphdr *iph = NULL;
	const struct ipv6hdr *ip6h = NULL;
	struct bpf_sock *sk;
	const __u8 *l3;
	__u32 off, idx, state;
	__u16 type;
	__u8 fl = p->tcp_flags;
	int synack, i;

	l3 = wr_parse_l2(data, end, &type, &off);
	if (!l3)
		return 0;
	k.ports = (__u32)bpf_htons(p->sport) | (__u32)bpf_htons(p->dport) << 16;
	if (p->family == 4) {
		__u32 hl;

		iph = (const void *)l3;
		if ((const void *)(iph + 1) > end)
			return 0;
		k.saddr[0] = iph->saddr;
		k.daddr[0] = iph->daddr;
		hl = (iph->ihl & 0xf) * 4;
		th = (const void *)(l3 + hl);
		if ((const void *)(th + 1) > end)
			th = NULL;
	} else {
		ip6h = (const void *)l3;
		if ((const void *)(ip6h + 1) > end)
			return 0;
WR_UNROLL
		for (i = 0; i < 4; i++) {
			k.saddr[i] = ip6h->saddr.in6_u.u6_addr32[i];
			k.daddr[i] = ip6h->daddr.in6_u.u6_addr32[i];
		}
		/* Extension headers before TCP: no cookie check (below), the lookup as ever. */
		if (ip6h->nexthdr == WR_IPPROTO_TCP) {
			th = (const void *)(ip6h + 1);
			if ((const void *)(th + 1) > end)
				th = NULL;
		}
	}
	k.family = p->family;

	/* A SYN-ACK always asks the kernel: it must answer a connect of this host. */
	synack = (fl & (WEIR_TCP_SYN | WEIR_TCP_ACK)) == (WEIR_TCP_SYN | WEIR_TCP_ACK);
	idx = tcp_seen_slot(&k);
	slot = bpf_map_lookup_elem(&wr_tcp_seen, &idx);
	if (slot && !synack && (__s64)(slot->until - now) > 0 && slot->ports == k.ports &&
	    slot->family == k.family && slot->saddr[0] == k.saddr[0] &&
	    slot->daddr[0] == k.daddr[0] && slot->saddr[1] == k.saddr[1] &&
	    slot->saddr[2] == k.saddr[2] && slot->saddr[3] == k.saddr[3] &&
	    slot->daddr[1] == k.daddr[1] && slot->daddr[2] == k.daddr[2] &&
	    slot->daddr[3] == k.daddr[3])
		return 1;

	count(WEIR_G_TCP_LOOKUPS);
	if (p->family == 4) {
		t.ipv4.saddr = k.saddr[0];
		t.ipv4.daddr = k.daddr[0];
		t.ipv4.sport = bpf_htons(p->sport);
		t.ipv4.dport = bpf_htons(p->dport);
		sk = bpf_skc_lookup_tcp(ctx, &t, sizeof(t.ipv4), BPF_F_CURRENT_NETNS, 0);
	} else {
WR_UNROLL
		for (i = 0; i < 4; i++) {
			t.ipv6.saddr[i] = k.saddr[i];
			t.ipv6.daddr[i] = k.daddr[i];
		}
		t.ipv6.sport = bpf_htons(p->sport);
		t.ipv6.dport = bpf_htons(p->dport);
		sk = bpf_skc_lookup_tcp(ctx, &t, sizeof(t.ipv6), BPF_F_CURRENT_NETNS, 0);
	}
	if (!sk)
		return 0;
	state = sk->state;
	bpf_sk_release(sk);

	if (synack)
		/*
		 * It answers this host's SYN (SYN_SENT), or is a retransmitted
		 * one whose ACK the peer lost (ESTABLISHED): the kernel's reply
		 * to that completes the peer's handshake.
		 */
		return state == BPF_TCP_SYN_SENT || state == BPF_TCP_ESTABLISHED;
	switch (state) {
	case BPF_TCP_LISTEN:
		/*
		 * No connection or request, only a listener: only the answer
		 * to a SYN cookie (the kernel's or weir's, one secret) belongs
		 * here; RST, FIN and data without a cookie do not.
		 */
		if ((fl & (WEIR_TCP_SYN | WEIR_TCP_ACK | WEIR_TCP_RST | WEIR_TCP_FIN)) !=
		    WEIR_TCP_ACK)
			return 0;
		if (!has_syncookie)
			/* No raw cookie check before 6.0: the kernel decides. */
			return 1;
		if (!th)
			return 0;
		if (iph) {
			if ((const void *)(iph + 1) > end || (const void *)(th + 1) > end)
				return 0;
			return !bpf_tcp_raw_check_syncookie_ipv4((struct iphdr *)iph,
								 (struct tcphdr *)th);
		}
		if (!ip6h || (const void *)(ip6h + 1) > end || (const void *)(th + 1) > end)
			return 0;
		return !bpf_tcp_raw_check_syncookie_ipv6((struct ipv6hdr *)ip6h,
							 (struct tcphdr *)th);
	case BPF_TCP_NEW_SYN_RECV:
	case BPF_TCP_SYN_SENT:
	case BPF_TCP_TIME_WAIT:
		/* A handshake's last ACK, an answer to our SYN, a closing's tail: not cached. */
		return 1;
	default:
		break;
	}
	/* A connection: verified for a while. */
	if (slot) {
		k.until = now + WEIR_TCP_SEEN_TTL_NS;
		*slot = k;
	}
	return 1;
}

/* One per entry, as each takes its own context; global, so verified once. */
__noinline int wr_tcp_state_xdp(struct xdp_md *ctx, const struct wr_pkt *p, __u64 now)
{
	if (!ctx || !p)
		return 1;
	return tcp_state_check(ctx, 1, (void *)(long)ctx->data, (void *)(long)ctx->data_end, p,
			       now);
}

__noinline int wr_tcp_state_skb(struct __sk_buff *ctx, const struct wr_pkt *p, __u64 now)
{
	if (!ctx || !p)
		return 1;
	return tcp_state_check(ctx, 0, (void *)(long)ctx->data, (void *)(long)ctx->data_end, p,
			       now);
}

#endif /* WEIR_BPF_TCPSTATE_H */
