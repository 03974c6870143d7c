/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Limiter math and rule matching: pure functions of their arguments.
 *
 * Time comes in as an argument, so host unit tests drive these exhaustively
 * and the BPF data path calls the very same code.
 */
#ifndef SLUICE_LIMITER_H
#define SLUICE_LIMITER_H

#include "sluice.h"
#include "sluice_parse.h"

#define SL_NSEC_PER_SEC 1000000000ULL
/* Largest cost one packet can have (IPv4/IPv6 length fields are 16 bits, plus 40). */
#define SL_MAX_COST 65575ULL

/*
 * GCRA (the virtual-scheduling form of the token bucket). A bucket is one
 * number, the theoretical arrival time (TAT): when it would be empty again
 * were nothing more sent. A packet costing inc is admitted at now if
 * max(TAT, now) + inc lies no further than tolerance ahead of now; admitting
 * it moves the TAT there. An idle bucket (TAT <= now) is full: refill is
 * arithmetic, there is no timer, and an entry that vanished reads as full.
 */

/* ns a packet of this cost moves the TAT, rounded to the nearest ns. */
static __always_inline __u64 sl_gcra_inc(__u64 interval_fp, __u32 cost)
{
	return ((__u64)cost * interval_fp + (1ULL << (SLUICE_FP_SHIFT - 1))) >> SLUICE_FP_SHIFT;
}

/*
 * 1 and the new TAT if admitted, 0 if not. tat == 0 is a fresh bucket.
 * Unsigned arithmetic throughout: next >= now always holds, so next - now
 * cannot wrap.
 */
static __always_inline int sl_gcra_admit(__u64 tat, __u64 now, __u64 inc, __u64 tolerance,
					 __u64 *next)
{
	__u64 base = tat > now ? tat : now;

	if (inc > tolerance || base - now > tolerance - inc)
		return 0;
	*next = base + inc;
	return 1;
}

/* Cost of a packet under a limit. */
static __always_inline __u32 sl_limit_cost(const struct sluice_limit *l, const struct sl_pkt *p)
{
	return l->cost == SLUICE_COST_BYTE ? p->len : 1;
}

/*
 * Emission interval for a rate (units per second), << SLUICE_FP_SHIFT.
 * 0 for a rate that cannot be represented (0, or so high the interval
 * rounds to nothing).
 */
static inline __u64 sl_gcra_interval(__u64 rate)
{
	if (rate == 0 || rate > (SL_NSEC_PER_SEC << SLUICE_FP_SHIFT))
		return 0;
	return (SL_NSEC_PER_SEC << SLUICE_FP_SHIFT) / rate;
}

/*
 * Tolerance for a burst. For packet costs it is burst whole packets of the
 * rounded per-packet cost, so a fresh bucket admits exactly burst packets.
 * 0 when burst * interval does not fit comfortably in 62 bits.
 */
static inline __u64 sl_gcra_tolerance(__u64 interval_fp, __u64 burst, int cost_kind)
{
	__u64 unit;

	if (burst == 0 || interval_fp == 0)
		return 0;
	if (cost_kind == SLUICE_COST_PKT) {
		unit = sl_gcra_inc(interval_fp, 1);
		if (unit == 0 || burst > (1ULL << 62) / unit)
			return 0;
		return burst * unit;
	}
	if (burst > (1ULL << 62) / interval_fp)
		return 0;
	/* Rounded like sl_gcra_inc, so a packet of exactly burst bytes fits. */
	return (burst * interval_fp + (1ULL << (SLUICE_FP_SHIFT - 1))) >> SLUICE_FP_SHIFT;
}

/*
 * Tokens (units of cost) left in a bucket at now, and ns until the next
 * whole token: what `top` shows.
 */
static inline __u64 sl_gcra_remaining(const struct sluice_limit *l, __u64 tat, __u64 now,
				      __u64 *refill_ns)
{
	__u64 unit = l->cost == SLUICE_COST_PKT ? sl_gcra_inc(l->interval_fp, 1) : 0;
	__u64 backlog = tat > now ? tat - now : 0;
	__u64 free_ns;

	if (backlog > l->tolerance)
		backlog = l->tolerance;
	free_ns = l->tolerance - backlog;
	if (unit) {
		*refill_ns = backlog ? backlog - (backlog / unit) * unit : 0;
		if (*refill_ns == 0 && backlog)
			*refill_ns = unit;
		return free_ns / unit;
	}
	/* bytes: interval is per byte in fixed point */
	*refill_ns = backlog ? ((l->interval_fp + (1ULL << SLUICE_FP_SHIFT) - 1) >>
				SLUICE_FP_SHIFT) : 0;
	return (free_ns << SLUICE_FP_SHIFT) / l->interval_fp;
}

/* Network-order mask of the top plen bits of 32-bit word w of an address. */
static __always_inline __u32 sl_prefix_word(__u32 plen, __u32 w)
{
	__u32 bits;

	if (plen <= w * 32)
		return 0;
	bits = plen - w * 32;
	if (bits >= 32)
		return 0xffffffffu;
	return sl_htonl(~0u << (32 - bits));
}

/* Does rule r match packet p? Every matching rule applies. */
static __always_inline int sl_rule_match(const struct sluice_rule *r, const struct sl_pkt *p)
{
	__u8 m = r->match;

	/* Neighbour discovery passes unless a rule names its ICMPv6 type. */
	if ((p->flags & SL_PKT_ND) &&
	    (!(m & SLUICE_M_ICMPTYPE) || r->icmp_type != p->icmp_type))
		return 0;
	if ((m & SLUICE_M_FAMILY) && r->family != p->family)
		return 0;
	if ((m & SLUICE_M_PROTO) && r->proto != p->proto)
		return 0;
	if (m & SLUICE_M_DPORT) {
		/* Non-first fragments carry no ports: only port-less rules match them. */
		if (!(p->flags & SL_PKT_PORTS) || p->dport < r->dport_lo || p->dport > r->dport_hi)
			return 0;
	}
	if (m & SLUICE_M_SRC) {
		if ((p->saddr[0] & r->src_mask[0]) != r->src_net[0] ||
		    (p->saddr[1] & r->src_mask[1]) != r->src_net[1] ||
		    (p->saddr[2] & r->src_mask[2]) != r->src_net[2] ||
		    (p->saddr[3] & r->src_mask[3]) != r->src_net[3])
			return 0;
	}
	if (m & SLUICE_M_TCPFLAGS) {
		if (p->proto != SL_IPPROTO_TCP || !(p->flags & SL_PKT_L4) ||
		    (p->tcp_flags & r->tcp_mask) != r->tcp_value)
			return 0;
	}
	if (m & SLUICE_M_ICMPTYPE) {
		if ((p->proto != SL_IPPROTO_ICMP && p->proto != SL_IPPROTO_ICMPV6) ||
		    !(p->flags & SL_PKT_L4) || p->icmp_type != r->icmp_type)
			return 0;
	}
	return 1;
}

/*
 * The per-source bucket key of limit li of rule r for packet p. The masks
 * are precomputed by the controller (sl_limit_set_masks), so this is
 * branch-free apart from the family.
 */
static __always_inline void sl_make_key(const struct sluice_rule *r, __u32 li,
					const struct sluice_limit *l, const struct sl_pkt *p,
					struct sluice_key *k)
{
	k->uid = r->uid;
	k->limit = li;
	k->family = p->family;
	k->pad = 0;
	if (p->family == 4) {
		k->plen = l->plen4;
		k->addr[0] = p->saddr[0] & l->mask4;
		k->addr[1] = 0;
		k->addr[2] = 0;
		k->addr[3] = 0;
	} else {
		k->plen = l->plen6;
		k->addr[0] = p->saddr[0] & l->mask6[0];
		k->addr[1] = p->saddr[1] & l->mask6[1];
		k->addr[2] = p->saddr[2] & l->mask6[2];
		k->addr[3] = p->saddr[3] & l->mask6[3];
	}
}

/* Fill in the key masks of a limit from its prefix lengths. */
static inline void sl_limit_set_masks(struct sluice_limit *l)
{
	__u32 w;

	l->mask4 = sl_prefix_word(l->plen4, 0);
	for (w = 0; w < 4; w++)
		l->mask6[w] = sl_prefix_word(l->plen6, w);
}

#endif /* SLUICE_LIMITER_H */
