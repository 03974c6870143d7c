/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * SYN cookies in XDP: answering a SYN that an `action cookie` rule refused
 * (or every SYN, `cookie always`) with a SYN-ACK whose sequence number is
 * the kernel's own cookie, and checking the cookie of an ACK that reaches
 * a listener without a connection behind it.
 *
 * The cookie is the kernel's (bpf_tcp_raw_gen_syncookie_ipv4/6: its secret,
 * its MSS table), so the kernel's own cookie path turns the returning ACK
 * into a connection; the options the cookie cannot carry ride in the
 * timestamp as the kernel encodes them (include/weir_cookie.h). No state
 * is kept per SYN. The SYN-ACKs are bounded by the rule's budget and by a
 * budget per destination, so weir never becomes a reflector.
 *
 * Both are programs of their own (weir_cookie_syn, weir_cookie_ack),
 * which the XDP entry tail-calls through wr_cookie_progs once the core has
 * said what the packet is: each gets a fresh stack of 512 bytes and is
 * verified on its own, so the entry's stack budget (512 bytes summed over
 * its deepest chain on kernels before 6.2) and its instruction count do not
 * grow. On a kernel without the helpers (before 6.0) the loader does not
 * load them (kernel_features.h): the slots stay empty, the tail call falls
 * through, and the entry drops the SYN and passes the ACK.
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_COOKIE_H
#define WEIR_BPF_COOKIE_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "compat.bpf.h"
#include "weir.h"
#include "weir_parse.h"
#include "weir_limiter.h"
#include "weir_cookie.h"
#include "maps.h"
#include "count.h"
#include "eval.h"

/* The farthest a TCP header may start in a frame weir answers or checks. */
#define WR_CK_MAXOFF	256
/* The largest MSS advertised (an IPv4 MTU of 65535). */
#define WR_CK_MSS_MAX	65495
/* The smallest (RFC 1122's default). */
#define WR_CK_MSS_MIN	536
/* The SYN-ACK's receive window: unscaled, as in every SYN-ACK. */
#define WR_CK_WINDOW	65535
/* The SYN-ACK's TTL / hop limit. */
#define WR_CK_TTL	64

/* Where a frame's headers are. */
struct wr_ck_loc {
	__u32 l3;		/* offset of the IP header */
	__u32 l4;		/* offset of the TCP header */
	__u32 seg;		/* TCP segment length: header and payload */
	__u32 family;		/* 4 or 6 */
};

/*
 * The headers of a TCP frame: Ethernet, up to WR_MAX_VLAN tags, IPv4 or
 * IPv6 with hop-by-hop and destination options walked. 0, or -1 for a
 * frame that is not answered or checked here: not TCP, a fragment, an
 * IPv4 header with options, an IPv6 routing header (whose pseudo-header
 * address is another host's) or AH, headers past WR_CK_MAXOFF. Out of
 * line, with loops the verifier walks (no unrolling: this code runs on
 * 6.0 and later only), so that its callers' frames stay small.
 */
static __noinline int ck_locate(struct xdp_md *ctx, struct wr_ck_loc *loc)
{
	const void *data = (void *)(long)ctx->data;
	const void *data_end = (void *)(long)ctx->data_end;
	const __u8 *cur = data;
	__u32 off = sizeof(struct wr_eth);
	__u16 proto;
	int i;

	if (cur + sizeof(struct wr_eth) > (const __u8 *)data_end)
		return -1;
	proto = wr_ntohs(((const struct wr_eth *)cur)->proto);
	for (i = 0; i < WR_MAX_VLAN; i++) {
		const struct wr_vlan *vh = (const void *)(cur + off);

		if (proto != WR_ETH_P_8021Q && proto != WR_ETH_P_8021AD)
			break;
		if ((const void *)(vh + 1) > data_end)
			return -1;
		proto = wr_ntohs(vh->proto);
		off += sizeof(*vh);
	}
	loc->l3 = off;
	if (proto == WR_ETH_P_IP) {
		const struct wr_ip4 *ip = (const void *)(cur + off);
		__u32 tot;

		if ((const void *)(ip + 1) > data_end)
			return -1;
		/* Options would have to be taken out of the reply: not answered. */
		if (ip->ver_ihl != 0x45 || ip->proto != WR_IPPROTO_TCP ||
		    (wr_ntohs(ip->frag_off) & 0x3fff))
			return -1;
		tot = wr_ntohs(ip->tot_len);
		if (tot < sizeof(*ip) + 20)
			return -1;
		loc->family = 4;
		loc->l4 = off + sizeof(*ip);
		loc->seg = tot - sizeof(*ip);
		return 0;
	}
	if (proto == WR_ETH_P_IPV6) {
		const struct wr_ip6 *ip6 = (const void *)(cur + off);
		__u32 left;
		__u8 nh;

		if ((const void *)(ip6 + 1) > data_end)
			return -1;
		left = wr_ntohs(ip6->payload_len);
		nh = ip6->nexthdr;
		off += sizeof(*ip6);
		for (i = 0; i < WR_MAX_EXTHDR; i++) {
			const __u8 *eh = cur + (off & (WR_CK_MAXOFF - 1));
			__u32 hl;

			if (nh != WR_IPPROTO_HOPOPTS && nh != WR_IPPROTO_DSTOPTS)
				break;
			if (off >= WR_CK_MAXOFF || eh + 8 > (const __u8 *)data_end)
				return -1;
			hl = ((__u32)eh[1] + 1) * 8;
			if (hl > left)
				return -1;
			nh = eh[0];
			off += hl;
			left -= hl;
		}
		if (nh != WR_IPPROTO_TCP || off >= WR_CK_MAXOFF || left < 20)
			return -1;
		loc->family = 6;
		loc->l4 = off;
		loc->seg = left;
		return 0;
	}
	return -1;
}

/*
 * Charge one SYN-ACK to the token bucket at *tat (interval_fp, tolerance):
 * 1 admitted, 0 over. Shared by every CPU: compare-and-swap, bounded retry.
 */
static __always_inline int ck_charge(__u64 *tat, __u64 now, __u64 interval_fp, __u64 tolerance)
{
	__u64 inc = wr_gcra_inc(interval_fp, 1), old, next;
	int i;

	for (i = 0; i < WR_CAS_TRIES; i++) {
		old = READ_ONCE(*tat);
		if (!wr_gcra_admit(old, now, inc, tolerance, &next))
			return 0;
		if (__sync_val_compare_and_swap(tat, old, next) == old)
			return 1;
	}
	return 0;
}

/*
 * Keeping the kernel willing. Its cookie path takes an ACK only from a
 * listener that sent a cookie itself within the last two minutes
 * (tcp_synq_no_recent_overflow), which with tcp_syncookies = 2 it does for
 * every SYN that reaches it. So one valid SYN per rule, port and family
 * every WR_CK_PRIME_NS is passed to the kernel instead of answered: the
 * kernel answers it with a cookie of its own (no state either) and keeps
 * accepting the answers to weir's. The time of the latest sits in
 * wr_cookie_dst under a key no address has (family 0x80 | family, the
 * port in addr[0]). 1: pass this SYN.
 */
#define WR_CK_PRIME_NS	(60 * WR_NSEC_PER_SEC)

static __always_inline int ck_prime(const struct wr_scratch *sc, __u16 dport, __u32 family)
{
	struct weir_ck_dst k = {};
	__u64 now = sc->ck_now, *at, old;

	k.addr[0] = dport;
	k.slot = sc->ck_slot;
	k.family = 0x80 | family;
	at = bpf_map_lookup_elem(&wr_cookie_dst, &k);
	if (!at)
		return !bpf_map_update_elem(&wr_cookie_dst, &k, &now, BPF_NOEXIST);
	old = READ_ONCE(*at);
	/* Signed: another CPU's clock may have written a time a little ahead of ours. */
	if ((__s64)(now - old) < (__s64)WR_CK_PRIME_NS)
		return 0;
	/* One CPU wins the pass; the others answer. */
	return __sync_val_compare_and_swap(at, old, now) == old;
}

/* A SYN the data path counted as dropped by its rule was passed after all. */
static __always_inline void ck_recount_passed(const struct wr_scratch *sc)
{
	__u32 slot = sc->ck_slot;
	struct weir_rule_stats *st = bpf_map_lookup_elem(&wr_rule_stats, &slot);

	if (!st)
		return;
	st->dropped_pkts--;
	st->dropped_bytes -= sc->ck_len;
	st->passed_pkts++;
	st->passed_bytes += sc->ck_len;
}

/* The SYN-ACK budgets of the rule the scratch names: 1 within both, 0 not. */
static __always_inline int ck_budget(const struct wr_scratch *sc, const __u32 *saddr, __u32 family)
{
	struct weir_ck_dst k = {};
	__u32 slot = sc->ck_slot;
	__u64 *tat;

	if (sc->ckd_interval_fp) {
		k.addr[0] = saddr[0];
		if (family == 6) {
			k.addr[1] = saddr[1];
			k.addr[2] = saddr[2];
			k.addr[3] = saddr[3];
		}
		k.slot = slot;
		k.family = family;
		tat = bpf_map_lookup_elem(&wr_cookie_dst, &k);
		if (!tat) {
			__u64 zero = 0;

			/* A new destination: a full budget. Losing the insert race is harmless. */
			bpf_map_update_elem(&wr_cookie_dst, &k, &zero, BPF_NOEXIST);
			tat = bpf_map_lookup_elem(&wr_cookie_dst, &k);
		}
		if (!tat || !ck_charge(tat, sc->ck_now, sc->ckd_interval_fp, sc->ckd_tolerance))
			return 0;
	}
	if (sc->ck_interval_fp) {
		tat = bpf_map_lookup_elem(&wr_cookie_agg, &slot);
		if (!tat || !ck_charge(tat, sc->ck_now, sc->ck_interval_fp, sc->ck_tolerance))
			return 0;
	}
	return 1;
}

/*
 * Working space of weir_cookie_syn, per CPU and off the stack (the stack
 * budget): the SYN's TCP header, then the SYN-ACK's; the kernel's cookie
 * input, then the reply's IP header; the SYN's addresses; the SYN's
 * options.
 *
 * The options are here, in map memory, and not on the stack, for the
 * verifier's sake: kernels before 6.8 walk a bpf_loop callback once, so
 * every state they explore after the walk has read one option at most.
 * Stack slots are tracked, and from zeroed ones such a verifier
 * concluded that saw_ts and saw_ws are never both set, never visited
 * the window-scale option's store, and (as a privileged load does)
 * removed it: 6.1 sent NOPs in its place. What is in a map value is
 * never tracked, so every option is an unknown there and every branch
 * on it is kept.
 */
struct ck_work {
	__u8 tcp[64] __attribute__((aligned(8)));
	__u8 ip[64] __attribute__((aligned(8)));
	__u32 saddr[4];
	__u32 daddr[4];
	__u8 pseudo[40] __attribute__((aligned(8)));	/* addresses, 0, protocol, TCP length */
	struct wr_synopts o;				/* written by ck_option */
};

/*
 * n bytes (a multiple of 4) from the work space to the frame, a word at a
 * time: clang would copy an unaligned destination byte by byte, spilling.
 */
static __always_inline void ck_copy_out(__u8 *dst, const __u8 *src, __u32 n)
{
	__u32 i;

#pragma unroll
	for (i = 0; i < 80; i += 4)
		if (i < n)
			*(__u32 *)(dst + i) = *(const __u32 *)(src + i);
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ck_work);
} wr_ck_work SEC(".maps");

/*
 * A SYN's options being read by bpf_loop (ck_option), on the stack as
 * bpf_loop wants; what is read goes to ck_work.o (see there).
 */
struct ck_optwalk {
	__u8 *tcp;		/* ck_work.tcp */
	struct wr_synopts *o;	/* ck_work.o */
	__u32 hl;
	__u32 at;
};

/* bpf_loop callback: one option (wr_syn_option); 1 stops the walk. */
static long ck_option(__u32 n, void *ctx)
{
	struct ck_optwalk *w = ctx;

	return !w->tcp || !w->o || !wr_syn_option(w->tcp, w->hl & 63, &w->at, w->o);
}

/*
 * The ones' complement sum of TCP over IP: pseudo-header (addresses at
 * addrs, 8 or 32 bytes in ck_work.ip order) and the n-byte segment at tcp,
 * through bpf_csum_diff (one call, no loop for the verifier to walk).
 * The sum is of the bytes as they lie in memory: its fold is stored as is.
 */
static __always_inline __u32 ck_tcp_sum(__u8 *pseudo, __u32 family, __u8 *tcp, __u32 n)
{
	__s64 sum;

	pseudo[family == 4 ? 8 : 32] = 0;
	pseudo[family == 4 ? 9 : 33] = WR_IPPROTO_TCP;
	pseudo[family == 4 ? 10 : 34] = n >> 8;
	pseudo[family == 4 ? 11 : 35] = n;
	sum = bpf_csum_diff(NULL, 0, (void *)pseudo, family == 4 ? 12 : 36, 0);
	if (sum < 0)
		return 0;
	sum = bpf_csum_diff(NULL, 0, (void *)tcp, n & 60, (__u32)sum);
	return sum < 0 ? 0 : (__u32)sum;
}

/*
 * A segment sent with transmit checksum offload that has not been
 * offloaded yet: a local socket's SYN over veth (a container, a VM's tap)
 * reaches XDP as CHECKSUM_PARTIAL left it, the checksum field holding the
 * folded sum of the pseudo-header alone (the kernel's ~tcp_v4_check(len,
 * saddr, daddr, 0), and the same for IPv6), for the device to finish. That
 * form is fixed and checked here: the pseudo-header (ck_tcp_sum filled its
 * length and protocol) at pseudo, the segment's header copy at tcp. A
 * corrupt segment has it by chance once in 65536.
 */
static __always_inline int ck_partial_csum(__u8 *pseudo, __u32 family, const __u8 *tcp)
{
	__s64 sum = bpf_csum_diff(NULL, 0, (void *)pseudo, family == 4 ? 12 : 36, 0);

	return sum >= 0 && *(const __u16 *)(tcp + 16) == wr_csum_fold((__u32)sum);
}

/*
 * Answer the SYN in ctx, which the rule in the per-CPU scratch refused:
 * its checksums verified, the budgets charged, the frame rewritten in
 * place into the SYN-ACK. XDP_TX, or XDP_DROP for a SYN not answered.
 */
SEC("xdp")
int weir_cookie_syn(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 *saddr, *daddr, mtu = 0, zero = 0, hl, l2, l3len, tcplen, flags, flen;
	__s64 isum;
	struct ck_optwalk w;
	struct ck_work *wk;
	__u8 *tcp, *ip;
	struct wr_synopts *o;
	struct wr_ck_loc loc;
	struct wr_scratch *sc;
	struct weir_config *cfg;
	__u16 mss;
	__s64 ck;
	__u8 *th, *l3;

	sc = bpf_map_lookup_elem(&wr_scratch, &zero);
	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	wk = bpf_map_lookup_elem(&wr_ck_work, &zero);
	if (!sc || !cfg || !wk || ck_locate(ctx, &loc))
		goto bad;
	tcp = wk->tcp;
	ip = wk->ip;
	saddr = wk->saddr;
	daddr = wk->daddr;
	o = &wk->o;
	w.tcp = tcp;
	w.o = o;
	l3 = (__u8 *)data + (loc.l3 & 31);
	th = (__u8 *)data + (loc.l4 & (WR_CK_MAXOFF - 1));
	if (th + 20 > (__u8 *)data_end)
		goto bad;
	/* A pure SYN: FIN, RST or ACK with it is never answered. */
	if ((th[13] & (WEIR_TCP_SYN | WEIR_TCP_ACK | WEIR_TCP_RST | WEIR_TCP_FIN)) !=
	    WEIR_TCP_SYN)
		goto bad;
	hl = (th[12] >> 4) * 4;
	/* Data on a SYN (TCP Fast Open) would be lost: not answered, the client retries. */
	if (hl < 20 || hl > WR_TCP_MAXHDR || hl != loc.seg)
		goto bad;
#if __clang_major__ > 14
	/*
	 * The length's lower bound as the verifier sees it: clang 19 (Debian
	 * 13) masks the shifted data offset after its checks, and 6.12's
	 * verifier then takes hl & 60 for [0, 60] and refuses a possibly
	 * zero-sized read (6.18's keeps the bound). Clang 14's object, which
	 * 6.1 and 6.12 take, is left as it is.
	 */
	hl &= 60;
	barrier_var(hl);
	if (hl < 20)
		goto bad;
	/* bpf_xdp_load_bytes: this kernel has it (5.18), as it has the cookie helpers. */
	if (bpf_xdp_load_bytes(ctx, loc.l4 & (WR_CK_MAXOFF - 1), tcp, hl))
		goto bad;
#else
	if (bpf_xdp_load_bytes(ctx, loc.l4 & (WR_CK_MAXOFF - 1), tcp, hl & 60))
		goto bad;
#endif

	/* Checksums first: a corrupt SYN gets no answer. */
	if (loc.family == 4) {
		if (l3 + 20 > (__u8 *)data_end)
			goto bad;
		isum = bpf_csum_diff(NULL, 0, (void *)l3, 20, 0);
		if (isum < 0 || wr_csum_fold(isum) != 0xffff)
			goto bad;
		saddr[0] = *(__u32 *)(l3 + 12);
		daddr[0] = *(__u32 *)(l3 + 16);
		ck_copy_out((__u8 *)(wk->pseudo), (const __u8 *)(l3 + 12), 8);
	} else {
		if (l3 + 40 > (__u8 *)data_end)
			goto bad;
		ck_copy_out((__u8 *)(saddr), (const __u8 *)(l3 + 8), 16);
		ck_copy_out((__u8 *)(daddr), (const __u8 *)(l3 + 24), 16);
		ck_copy_out((__u8 *)(wk->pseudo), (const __u8 *)(l3 + 8), 32);
	}
	if (wr_csum_fold(ck_tcp_sum(wk->pseudo, loc.family, tcp, hl)) != 0xffff &&
	    !ck_partial_csum(wk->pseudo, loc.family, tcp))
		goto bad;

	if (ck_prime(sc, (__u16)tcp[2] << 8 | tcp[3], loc.family)) {
		ck_recount_passed(sc);
		count(WEIR_G_COOKIE_PRIMED);
		count(WEIR_G_PASSED);
		return XDP_PASS;
	}

	if (!ck_budget(sc, saddr, loc.family)) {
		count(WEIR_G_COOKIE_BUDGET);
		count(WEIR_G_DROPPED);
		return XDP_DROP;
	}

	__builtin_memset(o, 0, sizeof(*o));
	w.hl = hl;
	w.at = 20;
	/* bpf_loop: this kernel has it (5.17), as it has the cookie helpers (6.0). */
	bpf_loop(WR_TCP_MAXOPTS, ck_option, &w, 0);

	/*
	 * The kernel's cookie for this SYN, from a copy of its addresses, ports
	 * and sequence number with only the MSS option: a constant length the
	 * verifier can check, and the only option the helper reads.
	 */
	__builtin_memset(ip, 0, sizeof(wk->ip));
	if (loc.family == 4) {
		struct iphdr *iph = (void *)ip;
		__u8 *c = ip + 20;

		iph->version = 4;
		iph->ihl = 5;
		iph->saddr = saddr[0];
		iph->daddr = daddr[0];
		ck_copy_out(c, tcp, 12);
		c[12] = 6 << 4;
		c[13] = WEIR_TCP_SYN;
		c[20] = o->mss ? WR_TCPOPT_MSS : WR_TCPOPT_NOP;
		c[21] = o->mss ? 4 : WR_TCPOPT_NOP;
		c[22] = o->mss ? o->mss >> 8 : WR_TCPOPT_NOP;
		c[23] = o->mss ? o->mss & 0xff : WR_TCPOPT_NOP;
		ck = bpf_tcp_raw_gen_syncookie_ipv4(iph, (struct tcphdr *)c, 24);
	} else {
		struct ipv6hdr *ip6h = (void *)ip;
		__u8 *c = ip + 40;

		ip[0] = 0x60;
		ck_copy_out((__u8 *)(&ip6h->saddr), (const __u8 *)(saddr), 16);
		ck_copy_out((__u8 *)(&ip6h->daddr), (const __u8 *)(daddr), 16);
		ck_copy_out(c, tcp, 12);
		c[12] = 6 << 4;
		c[13] = WEIR_TCP_SYN;
		c[20] = o->mss ? WR_TCPOPT_MSS : WR_TCPOPT_NOP;
		c[21] = o->mss ? 4 : WR_TCPOPT_NOP;
		c[22] = o->mss ? o->mss >> 8 : WR_TCPOPT_NOP;
		c[23] = o->mss ? o->mss & 0xff : WR_TCPOPT_NOP;
		ck = bpf_tcp_raw_gen_syncookie_ipv6(ip6h, (struct tcphdr *)c, 24);
	}
	if (ck < 0)
		goto bad;

	/* This host's MSS: the interface's MTU less the headers, as the kernel advertises. */
	bpf_check_mtu(ctx, 0, &mtu, 0, 0);
	mss = WR_CK_MSS_MAX;
	if (mtu && mtu - (loc.family == 4 ? 40 : 60) < WR_CK_MSS_MAX)
		mss = mtu - (loc.family == 4 ? 40 : 60);
	if (mss < WR_CK_MSS_MIN)
		mss = WR_CK_MSS_MIN;

	/*
	 * The frame to its new length first: the SYN's extension headers go,
	 * and the SYN-ACK's options take 20 bytes with a timestamp, 4 (MSS)
	 * without. A frame that cannot grow (a driver, or veth, without
	 * tailroom) gets the short form: no timestamp, so no options but MSS.
	 */
	flags = cfg->cookie_flags;
	l2 = loc.l3 & 31;
	l3len = loc.family == 4 ? 20 : 40;
	tcplen = wr_synack_tcplen(o, flags);
	/* The whole frame's length, fragments included (XDP multi-buffer). */
	flen = bpf_xdp_get_buff_len(ctx);
	if (bpf_xdp_adjust_tail(ctx, (int)(l2 + l3len + tcplen) - (int)flen)) {
		flags &= ~WEIR_CK_TS;
		tcplen = WR_SYNACK_TCPLEN_MIN;
		if (bpf_xdp_adjust_tail(ctx, (int)(l2 + l3len + tcplen) - (int)flen))
			goto bad;
	}

	/* The SYN-ACK's TCP header, built in the work space. */
	{
		__u32 seq = ((__u32)tcp[4] << 24 | (__u32)tcp[5] << 16 | (__u32)tcp[6] << 8 | tcp[7]);
		__u8 p0 = tcp[0], p1 = tcp[1];

		tcp[0] = tcp[2];
		tcp[1] = tcp[3];
		tcp[2] = p0;
		tcp[3] = p1;
		wr_put32(tcp + 4, (__u32)ck);
		wr_put32(tcp + 8, seq + 1);
	}
	tcp[12] = (tcplen / 4) << 4;
	tcp[13] = WEIR_TCP_SYN | WEIR_TCP_ACK;
	tcp[14] = WR_CK_WINDOW >> 8;
	tcp[15] = WR_CK_WINDOW & 0xff;
	tcp[16] = tcp[17] = tcp[18] = tcp[19] = 0;
	wr_synack_options(tcp + 20, mss, o, flags,
			  wr_cookie_tsval(bpf_ktime_get_ns() / 1000000, o, flags),
			  cfg->cookie_wscale);

	/* The reply's IP header, and both checksums. */
	__builtin_memset(ip, 0, sizeof(wk->ip));
	if (loc.family == 4) {
		ip[0] = 0x45;
		ip[3] = 20 + tcplen;
		ip[6] = 0x40;	/* don't fragment */
		ip[8] = WR_CK_TTL;
		ip[9] = WR_IPPROTO_TCP;
		ck_copy_out((__u8 *)(ip + 12), (const __u8 *)(daddr), 4);
		ck_copy_out((__u8 *)(ip + 16), (const __u8 *)(saddr), 4);
		isum = bpf_csum_diff(NULL, 0, (void *)ip, 20, 0);
		*(__u16 *)(ip + 10) = ~wr_csum_fold(isum < 0 ? 0 : isum);
		ck_copy_out((__u8 *)(wk->pseudo), (const __u8 *)(ip + 12), 8);
	} else {
		ip[0] = 0x60;
		ip[5] = tcplen;
		ip[6] = WR_IPPROTO_TCP;
		ip[7] = WR_CK_TTL;
		ck_copy_out((__u8 *)(ip + 8), (const __u8 *)(daddr), 16);
		ck_copy_out((__u8 *)(ip + 24), (const __u8 *)(saddr), 16);
		ck_copy_out((__u8 *)(wk->pseudo), (const __u8 *)(ip + 8), 32);
	}
	*(__u16 *)(tcp + 16) = ~wr_csum_fold(ck_tcp_sum(wk->pseudo, loc.family, tcp, tcplen));

	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + 14 > data_end)
		goto bad;
	{
		/* Ethernet addresses swapped, as words. */
		__u32 d0 = *(__u32 *)data, s0 = *(__u32 *)(data + 6);
		__u16 d1 = *(__u16 *)(data + 4), s1 = *(__u16 *)(data + 10);

		*(__u32 *)data = s0;
		*(__u16 *)(data + 4) = s1;
		*(__u32 *)(data + 6) = d0;
		*(__u16 *)(data + 10) = d1;
	}
	/* Copies of constant length, which the verifier can check against the frame. */
	l3 = (__u8 *)data + l2;
	if (loc.family == 4) {
		if (l3 + 20 + WR_SYNACK_TCPLEN_MIN > (__u8 *)data_end)
			goto bad;
		ck_copy_out(l3, ip, 20);
		if (tcplen == WR_SYNACK_TCPLEN) {
			if (l3 + 20 + WR_SYNACK_TCPLEN > (__u8 *)data_end)
				goto bad;
			ck_copy_out(l3 + 20, tcp, WR_SYNACK_TCPLEN);
		} else {
			ck_copy_out(l3 + 20, tcp, WR_SYNACK_TCPLEN_MIN);
		}
	} else {
		if (l3 + 40 + WR_SYNACK_TCPLEN_MIN > (__u8 *)data_end)
			goto bad;
		ck_copy_out(l3, ip, 40);
		if (tcplen == WR_SYNACK_TCPLEN) {
			if (l3 + 40 + WR_SYNACK_TCPLEN > (__u8 *)data_end)
				goto bad;
			ck_copy_out(l3 + 40, tcp, WR_SYNACK_TCPLEN);
		} else {
			ck_copy_out(l3 + 40, tcp, WR_SYNACK_TCPLEN_MIN);
		}
	}
	count(WEIR_G_COOKIE_SENT);
	count(WEIR_G_DROPPED);
	return XDP_TX;
bad:
	count(WEIR_G_COOKIE_BAD);
	count(WEIR_G_DROPPED);
	return XDP_DROP;
}

/*
 * An ACK to the ports of an action cookie rule: if no connection or
 * request stands behind it, only a listener, it can only be the answer to
 * a cookie (the kernel's or weir's, one secret): checked, and passed
 * to the kernel's cookie path if valid, dropped and counted if not.
 * Everything else passes. XDP_PASS or XDP_DROP.
 */
SEC("xdp")
int weir_cookie_ack(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bpf_sock_tuple t = {};
	struct wr_ck_loc loc;
	struct bpf_sock *sk;
	__u8 *th, *l3;
	__u32 state;
	long ret;

	if (ck_locate(ctx, &loc))
		goto pass;
	l3 = (__u8 *)data + (loc.l3 & 31);
	th = (__u8 *)data + (loc.l4 & (WR_CK_MAXOFF - 1));
	if (th + sizeof(struct tcphdr) > (__u8 *)data_end)
		goto pass;
	if ((th[13] & (WEIR_TCP_SYN | WEIR_TCP_ACK | WEIR_TCP_RST | WEIR_TCP_FIN)) !=
	    WEIR_TCP_ACK)
		goto pass;
	if (loc.family == 4) {
		struct iphdr *iph = (void *)l3;

		if ((void *)(iph + 1) > data_end)
			goto pass;
		t.ipv4.saddr = iph->saddr;
		t.ipv4.daddr = iph->daddr;
		t.ipv4.sport = *(__be16 *)th;
		t.ipv4.dport = *(__be16 *)(th + 2);
		sk = bpf_skc_lookup_tcp(ctx, &t, sizeof(t.ipv4), BPF_F_CURRENT_NETNS, 0);
	} else {
		struct ipv6hdr *ip6h = (void *)l3;

		if ((void *)(ip6h + 1) > data_end)
			goto pass;
		ck_copy_out((__u8 *)(t.ipv6.saddr), (const __u8 *)(&ip6h->saddr), 16);
		ck_copy_out((__u8 *)(t.ipv6.daddr), (const __u8 *)(&ip6h->daddr), 16);
		t.ipv6.sport = *(__be16 *)th;
		t.ipv6.dport = *(__be16 *)(th + 2);
		sk = bpf_skc_lookup_tcp(ctx, &t, sizeof(t.ipv6), BPF_F_CURRENT_NETNS, 0);
	}
	if (!sk)
		goto pass;
	state = sk->state;
	bpf_sk_release(sk);
	if (state != BPF_TCP_LISTEN)
		goto pass;
	if (loc.family == 4) {
		struct iphdr *iph = (void *)l3;

		if ((void *)(iph + 1) > data_end)
			goto pass;
		ret = bpf_tcp_raw_check_syncookie_ipv4(iph, (struct tcphdr *)th);
	} else {
		struct ipv6hdr *ip6h = (void *)l3;

		if ((void *)(ip6h + 1) > data_end)
			goto pass;
		ret = bpf_tcp_raw_check_syncookie_ipv6(ip6h, (struct tcphdr *)th);
	}
	if (ret) {
		count(WEIR_G_COOKIE_INVALID);
		count(WEIR_G_DROPPED);
		return XDP_DROP;
	}
	count(WEIR_G_COOKIE_VALID);
pass:
	count(WEIR_G_PASSED);
	return XDP_PASS;
}

#endif /* WEIR_BPF_COOKIE_H */
