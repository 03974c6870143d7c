/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Limiter math and rule matching: pure functions of their arguments.
 *
 * Time comes in as an argument, so host unit tests drive these exhaustively
 * and the BPF data path calls the very same code.
 */
#ifndef WEIR_LIMITER_H
#define WEIR_LIMITER_H

#include "weir.h"
#include "weir_parse.h"

/* E2BIG, where errno.h is not at hand (the BPF side). */
#define WR_E2BIG	7

#define WR_NSEC_PER_SEC 1000000000ULL
/* Largest cost one packet can have (IPv4/IPv6 length fields are 16 bits, plus 40). */
#define WR_MAX_COST 65575ULL
/* Longest period of a rate or window: a day (period_ns << 16 must fit 64 bits). */
#define WR_MAX_PERIOD_MS 86400000ULL

/*
 * GCRA (the virtual-scheduling form of the token bucket). A bucket is one
 * number, the theoretical arrival time (TAT): when it would be empty again
 * were nothing more sent. A packet costing inc is admitted at now if
 * max(TAT, now) + inc lies no further than tolerance ahead of now; admitting
 * it moves the TAT there. An idle bucket (TAT <= now) is full: refill is
 * arithmetic, there is no timer, and an entry that vanished reads as full.
 */

/* ns a packet of this cost moves the TAT, rounded to the nearest ns. */
static __always_inline __u64 wr_gcra_inc(__u64 interval_fp, __u32 cost)
{
	return ((__u64)cost * interval_fp + (1ULL << (WEIR_FP_SHIFT - 1))) >> WEIR_FP_SHIFT;
}

/*
 * 1 and the new TAT if admitted, 0 if not. tat == 0 is a fresh bucket.
 * Unsigned arithmetic throughout: next >= now always holds, so next - now
 * cannot wrap.
 */
static __always_inline int wr_gcra_admit(__u64 tat, __u64 now, __u64 inc, __u64 tolerance,
					 __u64 *next)
{
	__u64 base = tat > now ? tat : now;

	if (inc > tolerance || base - now > tolerance - inc)
		return 0;
	*next = base + inc;
	return 1;
}

/*
 * Window algorithms. The state word packs the current window: its index
 * (now / period, 32 bits: 136 years of 1 s windows) << 32 | the cost counted
 * in it. An idle key's old window simply is not the current one, so expiry
 * is arithmetic here too, and a vanished entry reads as an empty window.
 */
#define WR_WIN_FRAC_SHIFT 16	/* precision of the sliding window's weight */

static __always_inline __u64 wr_win_pack(__u32 idx, __u32 count)
{
	return ((__u64)idx << 32) | count;
}

/* Fixed window: admitted if this window's count plus cost stays within limit. */
static __always_inline int wr_fixed_admit(__u64 word, __u64 now, __u64 period_ns, __u64 cost,
					  __u64 limit, __u64 *next)
{
	__u32 idx = now / period_ns;
	__u64 count = (__u32)word;

	if ((__u32)(word >> 32) != idx)
		count = 0;
	if (count + cost > limit)
		return 0;
	*next = wr_win_pack(idx, count + cost);
	return 1;
}

/*
 * Sliding window counter: the previous window's count, weighted by how much
 * of it still overlaps the last `period`, plus this window's count. An
 * approximation of a sliding log (it assumes the previous window's packets
 * were spread evenly); the weight is rounded up, so it errs towards
 * refusing. *next_prev is what the previous window's count becomes.
 */
static __always_inline int wr_sliding_admit(__u64 word, __u64 prev, __u64 now, __u64 period_ns,
					    __u64 cost, __u64 limit, __u64 *next, __u64 *next_prev)
{
	__u32 idx = now / period_ns;
	__u32 cur = word >> 32;
	__u64 count = (__u32)word, elapsed, weight, est;

	if (cur != idx) {
		/* A new window: the old one becomes the previous, or is long gone. */
		prev = cur + 1 == idx ? count : 0;
		count = 0;
	}
	/* From now itself: idx is 32 bits and wraps, now does not. */
	elapsed = now % period_ns;
	/* Rounded up, so the previous window never weighs less than it should. */
	weight = (((period_ns - elapsed) << WR_WIN_FRAC_SHIFT) + period_ns - 1) / period_ns;
	est = (prev * weight + (1ULL << WR_WIN_FRAC_SHIFT) - 1) >> WR_WIN_FRAC_SHIFT;
	if (est + count + cost > limit)
		return 0;
	*next = wr_win_pack(idx, count + cost);
	*next_prev = prev;
	return 1;
}

/*
 * The windows a window's count is counted in: its own, and for the sliding
 * window the next one too (where it weighs as the previous window, kept in
 * weir_state.aux).
 */
static __always_inline __u32 wr_win_life(__u32 algo)
{
	return algo == WEIR_ALGO_SLIDING ? 2 : 1;
}

/*
 * When a window state word is an empty window again: the end of the last
 * window its count is counted in. What wr_state evicts by.
 */
static __always_inline __u64 wr_win_idle_at(__u32 algo, __u64 word, __u64 period_ns)
{
	return ((word >> 32) + wr_win_life(algo)) * period_ns;
}

/* The period of a limit in ns (per second when not set). */
static __always_inline __u64 wr_limit_period_ns(const struct weir_limit *l)
{
	return (l->period_ms ? l->period_ms : 1000) * 1000000ULL;
}

/* Is limit l counted in windows? */
static __always_inline int wr_limit_windowed(const struct weir_limit *l)
{
	return l->algo == WEIR_ALGO_FIXED || l->algo == WEIR_ALGO_SLIDING;
}

/*
 * The clock limit l's windows are cut by: for a fleet window limit, now
 * plus the fleet's clock offset (weir_config.fleet_win_off) modulo the
 * period, so that its windows turn when the fleet's (Redis's) do, on every
 * host; for every other limit now itself. Modulo the period, the index it
 * gives is the fleet's less a constant (the offset's whole periods) and
 * the clock runs less than one period ahead of now: a window's idle_at
 * from it is at most a period late, which only keeps a bucket longer.
 */
static __always_inline __u64 wr_limit_wnow(const struct weir_limit *l, __u64 now, __u64 off)
{
	if (!l->fleet || !off || !wr_limit_windowed(l))
		return now;
	return now + off % wr_limit_period_ns(l);
}

/*
 * Cost of a packet under a limit: its IP length for a byte limit, for a
 * packet limit the segments it stands for (a GSO super-packet at TC is
 * several packets on the wire, as XDP would have seen them).
 */
static __always_inline __u32 wr_limit_cost(const struct weir_limit *l, const struct wr_pkt *p)
{
	return l->cost == WEIR_COST_BYTE ? p->len : p->segs ? p->segs : 1;
}

/*
 * Emission interval for `rate` units per `period_ms`, << WEIR_FP_SHIFT.
 * 0 for a rate that cannot be represented (0, or so high the interval
 * rounds to nothing, or a period over 49 days).
 */
static inline __u64 wr_gcra_interval_per(__u64 rate, __u64 period_ms)
{
	__u64 period_ns = period_ms * 1000000ULL;

	if (rate == 0 || period_ms == 0 || period_ms > WR_MAX_PERIOD_MS ||
	    rate > (period_ns << WEIR_FP_SHIFT))
		return 0;
	return (period_ns << WEIR_FP_SHIFT) / rate;
}

/* Emission interval for a rate in units per second. */
static inline __u64 wr_gcra_interval(__u64 rate)
{
	return wr_gcra_interval_per(rate, 1000);
}

/*
 * Tolerance for a burst. For packet costs it is burst whole packets of the
 * rounded per-packet cost, so a fresh bucket admits exactly burst packets.
 * 0 when burst * interval does not fit comfortably in 62 bits.
 */
static inline __u64 wr_gcra_tolerance(__u64 interval_fp, __u64 burst, int cost_kind)
{
	__u64 unit;

	if (burst == 0 || interval_fp == 0)
		return 0;
	if (cost_kind == WEIR_COST_PKT) {
		unit = wr_gcra_inc(interval_fp, 1);
		if (unit == 0 || burst > (1ULL << 62) / unit)
			return 0;
		return burst * unit;
	}
	if (burst > (1ULL << 62) / interval_fp)
		return 0;
	/* Rounded like wr_gcra_inc, so a packet of exactly burst bytes fits. */
	return (burst * interval_fp + (1ULL << (WEIR_FP_SHIFT - 1))) >> WEIR_FP_SHIFT;
}

/*
 * Tokens (units of cost) left in a bucket at now, and ns until the next
 * whole token: what `top` shows.
 */
static inline __u64 wr_gcra_remaining(const struct weir_limit *l, __u64 tat, __u64 now,
				      __u64 *refill_ns)
{
	__u64 unit = l->cost == WEIR_COST_PKT ? wr_gcra_inc(l->interval_fp, 1) : 0;
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
	*refill_ns = backlog ? ((l->interval_fp + (1ULL << WEIR_FP_SHIFT) - 1) >>
				WEIR_FP_SHIFT) : 0;
	return (free_ns << WEIR_FP_SHIFT) / l->interval_fp;
}

/* Network-order mask of the top plen bits of 32-bit word w of an address. */
static __always_inline __u32 wr_prefix_word(__u32 plen, __u32 w)
{
	__u32 bits;

	if (plen <= w * 32)
		return 0;
	bits = plen - w * 32;
	if (bits >= 32)
		return 0xffffffffu;
	return wr_htonl(~0u << (32 - bits));
}

/*
 * The further fields of rule r that struct wr_pkt holds (sport, len,
 * frag): 1 if each it has matches p.
 */
static __always_inline int wr_rule_match_more(const struct weir_rule *r, const struct wr_pkt *p)
{
	__u8 x = r->xmatch, f;

	/* Like dport: a packet without ports (a later fragment) has no source port. */
	if ((x & WEIR_X_SPORT) &&
	    (!(p->flags & WR_PKT_PORTS) || p->sport < r->sport_lo || p->sport > r->sport_hi))
		return 0;
	if ((x & WEIR_X_LEN) && (p->len < r->len_lo || p->len > r->len_hi))
		return 0;
	if (x & WEIR_X_FRAG) {
		f = !(p->flags & WR_PKT_FRAG) ? WEIR_FRAG_NONE :
		    (p->flags & WR_PKT_LATER) ? WEIR_FRAG_LATER : WEIR_FRAG_FIRST;
		if (r->frag == WEIR_FRAG_ANY ? f == WEIR_FRAG_NONE : f != r->frag)
			return 0;
	}
	/* Payload terms need the payload's start: a TCP or UDP header. */
	if ((x & WEIR_X_PAYLOAD) && !(p->flags & WR_PKT_PORTS))
		return 0;
	return 1;
}

/*
 * The fields every rule had before the further ones (enum
 * weir_match_bits). The data path tests the further fields after these
 * (bpf/match.h: match_one), only for rules that have any.
 */
static __always_inline int wr_rule_match_base(const struct weir_rule *r, const struct wr_pkt *p)
{
	__u8 m = r->match;

	/* Neighbour discovery passes unless a rule names its ICMPv6 type. */
	if ((p->flags & WR_PKT_ND) &&
	    (!(m & WEIR_M_ICMPTYPE) || r->icmp_type != p->icmp_type))
		return 0;
	if ((m & WEIR_M_FAMILY) && r->family != p->family)
		return 0;
	if ((m & WEIR_M_PROTO) && r->proto != p->proto)
		return 0;
	if (m & WEIR_M_DPORT) {
		/* Non-first fragments carry no ports: only port-less rules match them. */
		if (!(p->flags & WR_PKT_PORTS) || p->dport < r->dport_lo || p->dport > r->dport_hi)
			return 0;
	}
	if (m & WEIR_M_SRC) {
		if ((p->saddr[0] & r->src_mask[0]) != r->src_net[0] ||
		    (p->saddr[1] & r->src_mask[1]) != r->src_net[1] ||
		    (p->saddr[2] & r->src_mask[2]) != r->src_net[2] ||
		    (p->saddr[3] & r->src_mask[3]) != r->src_net[3])
			return 0;
	}
	if (m & WEIR_M_TCPFLAGS) {
		if (p->proto != WR_IPPROTO_TCP || !(p->flags & WR_PKT_L4) ||
		    (p->tcp_flags & r->tcp_mask) != r->tcp_value)
			return 0;
	}
	if (m & WEIR_M_ICMPTYPE) {
		if ((p->proto != WR_IPPROTO_ICMP && p->proto != WR_IPPROTO_ICMPV6) ||
		    !(p->flags & WR_PKT_L4) || p->icmp_type != r->icmp_type)
			return 0;
	}
	return 1;
}

/*
 * Does rule r match packet p? Every matching rule applies. The fields
 * struct wr_pkt does not hold are wr_rule_match_x's and
 * wr_rule_match_pay's: a rule matches when all three say so.
 */
static __always_inline int wr_rule_match(const struct weir_rule *r, const struct wr_pkt *p)
{
	/* The further fields: one test for the rules that have none. */
	return wr_rule_match_base(r, p) && (!r->xmatch || wr_rule_match_more(r, p));
}

/*
 * The fields of rule r that struct wr_pkt_x holds (dst, dscp, ttl): with
 * wr_rule_match, whether r matches. 1 for a rule without them.
 */
static __always_inline int wr_rule_match_x(const struct weir_rule *r, const struct wr_pkt *p,
					   const struct wr_pkt_x *x)
{
	__u32 d;

	if ((r->xmatch & WEIR_X_DSCP) && x->dscp != r->dscp)
		return 0;
	if ((r->xmatch & WEIR_X_TTL) && (x->ttl < r->ttl_lo || x->ttl > r->ttl_hi))
		return 0;
	if (!(r->xmatch & WEIR_X_DST))
		return 1;
	/*
	 * The rule's destinations in turn, up to the first that holds the
	 * packet's. An IPv4 rule's masks are 0 past word 0, so words 1-3 of an
	 * IPv4 packet's x->daddr, which the data path leaves as they were, do
	 * not count.
	 */
WR_UNROLL
	for (d = 0; d < WEIR_MAX_DST; d++) {
		if (d >= r->nr_dst)
			break;
		if (r->dst_family[d] == p->family &&
		    (x->daddr[0] & r->dst_mask[d][0]) == r->dst_net[d][0] &&
		    (x->daddr[1] & r->dst_mask[d][1]) == r->dst_net[d][1] &&
		    (x->daddr[2] & r->dst_mask[d][2]) == r->dst_net[d][2] &&
		    (x->daddr[3] & r->dst_mask[d][3]) == r->dst_net[d][3])
			return 1;
	}
	return 0;
}

/*
 * Rule r's interface (`iface`) against ifindex, the one the packet arrived
 * on: 1 for a rule without one.
 */
static __always_inline int wr_rule_match_iface(const struct weir_rule *r, __u32 ifindex)
{
	return !(r->xmatch & WEIR_X_IFACE) || r->ifindex == ifindex;
}

/*
 * Rule r's payload terms against the words at their offsets (words[t],
 * network byte order, as read from the packet): have bit t says term t's
 * word lies wholly within the packet; a term whose word does not fails.
 * 1 for a rule without terms.
 */
static __always_inline int wr_rule_match_pay(const struct weir_rule *r, const __u32 *words,
					     __u32 have)
{
	__u32 t;

	if (!(r->xmatch & WEIR_X_PAYLOAD))
		return 1;
WR_UNROLL
	for (t = 0; t < WEIR_MAX_PAY; t++) {
		if (t >= r->nr_pay)
			break;
		if (!(have & (1u << t)) || (words[t] & r->pay[t].mask) != r->pay[t].value)
			return 0;
	}
	return 1;
}

/*
 * The rule index (struct weir_ruleset.cand): rules by protocol class and
 * destination-port bucket, so that matching visits only the rules that may
 * match (wr_rule_candidates) instead of every rule of the set.
 */
static __always_inline __u32 wr_idx_proto(__u8 proto)
{
	if (proto == WR_IPPROTO_TCP)
		return WEIR_IDX_TCP;
	if (proto == WR_IPPROTO_UDP)
		return WEIR_IDX_UDP;
	return WEIR_IDX_OTHER;
}

/*
 * A port's bucket, 0 .. WEIR_PORT_BUCKETS - 1: the top 8 bits of the port
 * times the 32-bit golden ratio, so that ports in use together (22, 53, 80,
 * 443; a run of consecutive ports) fall in different buckets.
 */
static __always_inline __u32 wr_port_bucket(__u32 port)
{
	return (__u32)(port * 0x9E3779B1u) >> 24;
}

/* Ports a rule's range may span before it is set in every bucket without walking them. */
#define WR_IDX_WIDE_RANGE	4096

/* The index's cell of a protocol class and a port bucket (struct weir_ruleset.cand). */
static __always_inline __u32 wr_idx_cell(__u32 pc, __u32 bucket)
{
	return pc * (WEIR_PORT_BUCKETS + 1) + bucket;
}

/* Where wr_ruleset_index found more rules than a cell holds: the fullest cell. */
struct wr_idx_full {
	__u32 pc, bucket;	/* its protocol class and port bucket */
	__u32 n;		/* the rules that may meet a packet of it */
};

/*
 * Rule i into cell c of rs's index, counted in n[c] (past the list too, so
 * that an error can say how many), once per rule: rules come in ascending
 * order, so last[c] (the latest rule added, plus one) tells, and the lists
 * stay sorted.
 */
static inline void wr_idx_add(struct weir_ruleset *rs, __u16 *n, __u16 *last, __u32 c, __u32 i)
{
	if (last[c] == i + 1)
		return;
	last[c] = i + 1;
	if (n[c] < WEIR_MAX_CAND) {
		rs->cand_rule[c][n[c]] = i;
		rs->cand[c] |= 1ULL << n[c];
	}
	n[c]++;
}

/* Does rule r key a limit by destination (so its packets need struct wr_pkt_x)? */
static __always_inline int wr_rule_keys_dst(const struct weir_rule *r)
{
	__u32 li;

	for (li = 0; li < WEIR_MAX_LIMITS && li < r->nr_limits; li++)
		if (r->limits[li].key == WEIR_KEY_DST)
			return 1;
	return 0;
}

/*
 * A verified source's slot in wr_verified_hint: its address's words
 * mixed (multiply, xor-shift), the top bits taken. Unseeded: a spoofed
 * source picked to share a verified one's slot only pays the full lookup.
 */
static __always_inline __u32 wr_verified_slot_of(const __u32 *addr, __u32 family)
{
	__u64 h;

	h = ((__u64)addr[0] << 32 | addr[1]) * 0x9E3779B97F4A7C15ULL;
	h = (h ^ (h >> 32) ^ ((__u64)addr[2] << 32 | addr[3]) ^ family) * 0xC2B2AE3D27D4EB4FULL;
	h ^= h >> 29;
	return (__u32)(h >> 32) & (WEIR_VERIFIED_HINTS - 1);
}

static __always_inline __u32 wr_verified_slot(const struct weir_verified_key *k)
{
	return wr_verified_slot_of(k->addr, k->family);
}

/*
 * Does rule r need verified sources kept (wr_verified, by the sock_ops
 * program, for WR_VERIFIED_TTL_S)? A cookie rule verifies, a rule with a
 * verified-class or `spare verified` asks.
 */
static __always_inline int wr_rule_uses_verified(const struct weir_rule *r)
{
	return r->verified_class || r->action == WEIR_ACT_COOKIE ||
	       (r->flags & WEIR_RF_SPARE_VERIFIED);
}

/*
 * May the first stage hold rule r's refusals (bpf/first.h)? Only where a
 * refusal says the same of every packet alike until its bucket admits
 * again, and the packet's fate is then a drop, whatever else it matches:
 * action drop (a cookie rule answers, a dry-run rule passes), no preset,
 * no tcp-state nor `spare verified` (whose answer turns on the source's
 * handshakes, not its bucket), matched on nothing but family, protocol, destination
 * port, source prefix, TCP flags and ICMP type (the slot's key,
 * wr_refused_sig; not a source set, whose contents a feed refresh changes
 * without a config write),
 * and limits that are token buckets per source (or its prefix) or for the
 * whole rule, none of the fleet's (another host moves those).
 */
static __always_inline int wr_rule_cacheable(const struct weir_rule *r)
{
	__u32 li;

	if (r->action != WEIR_ACT_DROP || r->preset != WEIR_PRESET_NONE || r->xmatch ||
	    (r->match & WEIR_M_SRCSET) ||
	    (r->flags & (WEIR_RF_TCP_STATE | WEIR_RF_TCP_AUTO | WEIR_RF_SPARE_VERIFIED)) ||
	    !r->nr_limits)
		return 0;
	for (li = 0; li < WEIR_MAX_LIMITS && li < r->nr_limits; li++) {
		const struct weir_limit *l = &r->limits[li];

		if (l->algo != WEIR_ALGO_GCRA || l->fleet ||
		    (l->key != WEIR_KEY_SRC && l->key != WEIR_KEY_ALL))
			return 0;
	}
	return 1;
}

/* The header fields of p a cached refusal is keyed by, with its source (weir_refused.sig). */
static __always_inline __u64 wr_refused_sig(const struct wr_pkt *p)
{
	return (__u64)p->dport | (__u64)p->family << 16 | (__u64)p->proto << 24 |
	       (__u64)p->tcp_flags << 32 | (__u64)p->icmp_type << 40 |
	       (__u64)(p->flags & ~WR_PKT_GSO & 0xff) << 48;
}

/*
 * Build the index of rs's rules (userspace, whenever the set is written:
 * with the rules, into the entry that is not live yet). Each rule goes into
 * every cell it may match in: a superset, as wr_rule_match still decides.
 * 0, or -E2BIG when a cell would hold more than WEIR_MAX_CAND rules (more
 * rules than that may meet one packet): the set must not be written, and
 * *full (if not NULL) says which cell, with how many.
 */
static inline int wr_ruleset_index(struct weir_ruleset *rs, struct wr_idx_full *full)
{
	__u32 nr = rs->nr_rules < WEIR_MAX_RULES ? rs->nr_rules : WEIR_MAX_RULES;
	__u16 n[WEIR_IDX_CELLS] = { 0 }, last[WEIR_IDX_CELLS] = { 0 };
	__u32 i, pc, b, port, c, worst = 0;

	__builtin_memset(rs->cand, 0, sizeof(rs->cand));
	__builtin_memset(rs->cand_rule, 0, sizeof(rs->cand_rule));
	rs->x_rules = 0;
	for (i = 0; i < nr; i++) {
		const struct weir_rule *r = &rs->rules[i];
		__u8 m = r->match;

		/* A per-destination limit reads the destination as a dst match does. */
		if ((r->xmatch & WEIR_X_READS) || wr_rule_keys_dst(r))
			rs->x_rules++;

		for (pc = 0; pc < WEIR_IDX_PROTOS; pc++) {
			if ((m & WEIR_M_PROTO) && wr_idx_proto(r->proto) != pc)
				continue;
			/* TCP flags match TCP only; an ICMP type ICMP and ICMPv6 only. */
			if ((m & WEIR_M_TCPFLAGS) && pc != WEIR_IDX_TCP)
				continue;
			if ((m & WEIR_M_ICMPTYPE) && pc != WEIR_IDX_OTHER)
				continue;
			/* A source port or a payload term matches TCP and UDP only. */
			if ((r->xmatch & (WEIR_X_SPORT | WEIR_X_PAYLOAD)) && pc == WEIR_IDX_OTHER)
				continue;
			if (!(m & WEIR_M_DPORT)) {
				for (b = 0; b <= WEIR_IDX_NOPORT; b++)
					wr_idx_add(rs, n, last, wr_idx_cell(pc, b), i);
				continue;
			}
			/* A port range matches packets with ports (TCP, UDP) only. */
			if (pc == WEIR_IDX_OTHER || r->dport_hi < r->dport_lo)
				continue;
			if ((__u32)r->dport_hi - r->dport_lo >= WR_IDX_WIDE_RANGE) {
				for (b = 0; b < WEIR_PORT_BUCKETS; b++)
					wr_idx_add(rs, n, last, wr_idx_cell(pc, b), i);
				continue;
			}
			for (port = r->dport_lo; port <= r->dport_hi; port++)
				wr_idx_add(rs, n, last, wr_idx_cell(pc, wr_port_bucket(port)), i);
		}
	}
	rs->indexed = 1;
	__builtin_memset(rs->cache_cells, 0, sizeof(rs->cache_cells));
	for (c = 0; c < WEIR_IDX_CELLS; c++) {
		int cacheable = n[c] && n[c] <= WEIR_MAX_CAND;

		for (i = 0; cacheable && i < n[c]; i++)
			cacheable = wr_rule_cacheable(&rs->rules[rs->cand_rule[c][i]]);
		if (cacheable)
			rs->cache_cells[c / 64] |= 1ULL << (c % 64);
		if (n[c] > n[worst])
			worst = c;
	}
	if (n[worst] <= WEIR_MAX_CAND)
		return 0;
	if (full) {
		full->pc = worst / (WEIR_PORT_BUCKETS + 1);
		full->bucket = worst % (WEIR_PORT_BUCKETS + 1);
		full->n = n[worst];
	}
	return -WR_E2BIG;
}

/*
 * What of rs's refusals the first stage may hold (weir_config.cache_on,
 * enum weir_cache_bits): per source if a cell is cacheable, and of any
 * source if a cacheable rule that does not match on the source has a
 * rule-wide limit.
 */
static inline __u32 wr_ruleset_caches(const struct weir_ruleset *rs)
{
	__u32 i, li, bits = 0;

	for (i = 0; i < WEIR_IDX_CELLS / 64; i++)
		if (rs->cache_cells[i])
			bits = WEIR_CACHE_SRC;
	for (i = 0; bits && i < rs->nr_rules && i < WEIR_MAX_RULES; i++) {
		const struct weir_rule *r = &rs->rules[i];

		if ((r->match & WEIR_M_SRC) || !wr_rule_cacheable(r))
			continue;
		for (li = 0; li < WEIR_MAX_LIMITS && li < r->nr_limits; li++)
			if (r->limits[li].key == WEIR_KEY_ALL)
				bits |= WEIR_CACHE_ANY;
	}
	return bits;
}

/*
 * The rules of rs that may match p, as positions in the list of its index
 * cell, *cell (bit k: the list's entry k, wr_cand_rule); none without an
 * index.
 */
static __always_inline __u64 wr_rule_candidates(const struct weir_ruleset *rs,
						const struct wr_pkt *p, __u32 *cell)
{
	__u32 b = WEIR_IDX_NOPORT;

	*cell = 0;
	if (!rs->indexed)
		return 0;
	if (p->flags & WR_PKT_PORTS)
		b = wr_port_bucket(p->dport);
	*cell = wr_idx_cell(wr_idx_proto(p->proto), b);
	return rs->cand[*cell & (WEIR_IDX_CELLS - 1)];
}

/* The index of the rule at position k of cell's list (wr_rule_candidates). */
static __always_inline __u32 wr_cand_rule(const struct weir_ruleset *rs, __u32 cell, __u32 k)
{
	return rs->cand_rule[cell & (WEIR_IDX_CELLS - 1)][k & (WEIR_MAX_CAND - 1)];
}

/* The rule at position k of cell's list. */
static __always_inline const struct weir_rule *wr_cand_r(const struct weir_ruleset *rs,
							 __u32 cell, __u32 k)
{
	return &rs->rules[wr_cand_rule(rs, cell, k) & (WEIR_MAX_RULES - 1)];
}

/*
 * Index of the one bit set in x (a power of two; 64 for 0): the bits below
 * it counted without a branch or a table, so a loop over candidates gives
 * the verifier one unknown index per step rather than a constant per path.
 */
static __always_inline __u32 wr_bit_index(__u64 x)
{
	x -= 1;
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (__u32)((x * 0x0101010101010101ULL) >> 56);
}

/*
 * The lowest of the candidates *cand, taken out of it: its position in the
 * cell's list (64 when none is left). Each walk over a cell's candidates
 * steps with it, lowest first.
 */
static __always_inline __u32 wr_cand_pop(__u64 *cand)
{
	__u64 low = *cand & -*cand;

	*cand ^= low;
	return wr_bit_index(low);
}

/*
 * The per-source bucket key of limit li of rule r for packet p. The masks
 * are precomputed by the controller (wr_limit_set_masks), so this is
 * branch-free apart from the family.
 */
static __always_inline void wr_make_key(const struct weir_rule *r, __u32 li,
					const struct weir_limit *l, const struct wr_pkt *p,
					struct weir_key *k)
{
	k->uid = r->uid;
	k->limit = li;
	k->family = p->family;
	k->kind = WEIR_KEY_SRC;
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

/*
 * The bucket key of limit li of rule r for packet p, for any per-address
 * kind (struct weir_key): a is the address the kind keys on, p->saddr for
 * WEIR_KEY_SRC and WEIR_KEY_FLOW, the destination (struct wr_pkt_x) for
 * WEIR_KEY_DST. A flow adds the source port after the address: the
 * controller fixes a flow's prefixes at /32 and /64 (wr_limit_set_masks),
 * so that word's mask is 0 and the port alone fills it. The port word is
 * chosen without a branch (flow: key kind 3, both low bits set). A packet
 * without ports (ICMP, a later fragment) counts as port 0: its flow is
 * its source's port-0 flow. wr_make_key is this for WEIR_KEY_SRC, kept apart
 * for the per-source fast path.
 */
static __always_inline void wr_make_key_kind(const struct weir_rule *r, __u32 li,
					     const struct weir_limit *l, const struct wr_pkt *p,
					     const __u32 *a, struct weir_key *k)
{
	/* All ones for WEIR_KEY_FLOW (3), else 0. */
	__u32 pm = -(__u32)((l->key >> 1) & l->key & 1);
	/* sport, or 0 without WR_PKT_PORTS (bit 1): a mask, not a branch. */
	__u32 port = p->sport & -(__u32)((p->flags >> 1) & 1);

	k->uid = r->uid;
	k->limit = li;
	k->family = p->family;
	k->kind = l->key;
	if (p->family == 4) {
		k->plen = l->plen4;
		k->addr[0] = a[0] & l->mask4;
		k->addr[1] = port & pm;
		k->addr[2] = 0;
		k->addr[3] = 0;
	} else {
		k->plen = l->plen6;
		k->addr[0] = a[0] & l->mask6[0];
		k->addr[1] = a[1] & l->mask6[1];
		k->addr[2] = (a[2] & l->mask6[2]) | (port & pm);
		k->addr[3] = a[3] & l->mask6[3];
	}
}

/*
 * wr_state's set hash: the key's three 64-bit words mixed under a random
 * seed (multiply, xor-shift), so sources cannot be picked to share a set.
 * For a fixed rule, limit and family an IPv4 key maps one to one onto the
 * hash; collisions only matter for the set anyway, since ways compare the
 * whole key.
 */
static __always_inline __u64 wr_key_hash(const struct weir_key *k, __u64 seed)
{
	const __u64 *w = (const __u64 *)k;
	__u64 h;

	h = (w[0] ^ seed) * 0x9E3779B97F4A7C15ULL;
	h = (h ^ (h >> 32) ^ w[1]) * 0xC2B2AE3D27D4EB4FULL;
	h = (h ^ (h >> 29) ^ w[2]) * 0x9E3779B97F4A7C15ULL;
	return h ^ (h >> 32);
}

/* The set of a hash among sets: the top 32 bits scaled, no division. */
static __always_inline __u32 wr_state_set(__u64 hash, __u32 sets)
{
	return ((hash >> 32) * (__u64)sets) >> 32;
}

/*
 * Does limit l need the precise clock (enum weir_rule_flags)? tick_ns:
 * the jiffies clock's step.
 */
static inline int wr_limit_needs_precise(const struct weir_limit *l, __u64 tick_ns)
{
	switch (l->algo) {
	case WEIR_ALGO_GCRA:
		return l->tolerance < WEIR_COARSE_TICKS * tick_ns;
	case WEIR_ALGO_FIXED:
	case WEIR_ALGO_SLIDING:
		return wr_limit_period_ns(l) < WEIR_COARSE_WINDOW_TICKS * tick_ns;
	default:
		return 0;
	}
}

/*
 * The dispatch over a limit's algorithm, so that the data path's code for
 * one limit is the same whatever its kind: the state of a bucket is a word
 * (a TAT, or a packed window) and an aux word (the sliding window's
 * previous count). A new algorithm is a case in each of these three.
 */

/* The verdict on a bucket state (word, aux) for a packet of cost at now: 1 and the state after charging it, or 0. */
static __always_inline int wr_meter(const struct weir_limit *l, __u64 word, __u64 aux,
				    __u64 now, __u32 cost, __u64 *next, __u64 *next_aux)
{
	*next_aux = aux;
	switch (l->algo) {
	case WEIR_ALGO_FIXED:
		return wr_fixed_admit(word, now, wr_limit_period_ns(l), cost, l->rate, next);
	case WEIR_ALGO_SLIDING:
		return wr_sliding_admit(word, aux, now, wr_limit_period_ns(l), cost, l->rate, next,
					next_aux);
	default:
		return wr_gcra_admit(word, now, wr_gcra_inc(l->interval_fp, cost), l->tolerance,
				     next);
	}
}

/* When a window state is empty again; 0 for a token bucket (its TAT says it). */
static __always_inline __u64 wr_idle_at(const struct weir_limit *l, __u64 word)
{
	if (!wr_limit_windowed(l))
		return 0;
	return wr_win_idle_at(l->algo, word, wr_limit_period_ns(l));
}

/*
 * A window's word with a charge of cost at now taken back: 1 and *out
 * while the window it went into is still the current one and holds that
 * much, else 0 (nothing to take back). Token buckets take back by
 * subtracting wr_gcra_inc (others may have built on the TAT since).
 */
static __always_inline int wr_win_uncharge(const struct weir_limit *l, __u64 word, __u64 now,
					   __u32 cost, __u64 *out)
{
	if ((__u32)(word >> 32) != (__u32)(now / wr_limit_period_ns(l)) || (__u32)word < cost)
		return 0;
	*out = word - cost;
	return 1;
}

/*
 * What the userspace code that handles limits of every kind (the rule
 * parser and printer, `top`, the fleet's sync) knows of each algorithm:
 * one row per enum weir_algo, in wr_algo(). A new algorithm is a row there,
 * a case in the dispatches above and in wr_limit_remaining(); the fleet's
 * sync follows the row and those (a fleet kind is also a kind in
 * user/fleet/sync.lua). The data path does not read the row.
 */
#define WR_NR_ALGOS		4
/* struct wr_algo.fleet_kind of an algorithm no fleet limit can have. */
#define WR_FLEET_KIND_NONE	0xff

struct wr_algo {
	const char *name;	/* as rules, configs and `top` spell it */
	/*
	 * Fleet limits: the kind user/fleet/sync.lua knows a key of it by (0:
	 * a token bucket, its TAT; 1 and 2: a window, its counts), and the
	 * doubles its answer holds per key.
	 */
	__u8 fleet_kind;
	__u8 fleet_answer;
};

/* The row of algorithm algo; a token bucket's for a value no limit has. */
static inline const struct wr_algo *wr_algo(__u32 algo)
{
	static const struct wr_algo algos[WR_NR_ALGOS] = {
		[WEIR_ALGO_GCRA]	= { "token-bucket", 0, 1 },
		[WEIR_ALGO_FIXED]	= { "fixed-window", 1, 4 },
		[WEIR_ALGO_SLIDING]	= { "sliding-window", 2, 4 },
		[WEIR_ALGO_CONNS]	= { "conns", WR_FLEET_KIND_NONE, 0 },
	};

	return &algos[algo < WR_NR_ALGOS ? algo : WEIR_ALGO_GCRA];
}

/* The algorithm a name spells (wr_algo()'s), or -1. */
static inline int wr_algo_by_name(const char *name)
{
	__u32 a;

	for (a = 0; a < WR_NR_ALGOS; a++)
		if (!__builtin_strcmp(name, wr_algo(a)->name))
			return a;
	return -1;
}

/*
 * What a full bucket of limit l holds, in the measure of its state: a
 * token bucket's tolerance (ns its TAT may run ahead of now), a window's
 * limit (its count). A state at more than half of it is half spent.
 */
static inline __u64 wr_limit_budget(const struct weir_limit *l)
{
	return wr_limit_windowed(l) ? l->rate : l->tolerance;
}

/*
 * What a bucket state (word, aux) of limit l has left at now, and in
 * *refill_ns when more comes: a token bucket's tokens and the next one;
 * a window's cost it would still admit and when its next window starts (a
 * fleet window's on the fleet's clock, win_off: wr_limit_wnow). What `top`
 * shows.
 */
static inline __u64 wr_limit_remaining(const struct weir_limit *l, __u64 word, __u64 aux,
				       __u64 now, __u64 win_off, __u64 *refill_ns)
{
	__u64 period = wr_limit_period_ns(l), next, prev;
	__u64 lo = 0, hi = l->rate, mid;

	switch (l->algo) {
	case WEIR_ALGO_FIXED:
		now = wr_limit_wnow(l, now, win_off);
		*refill_ns = period - now % period;
		return wr_fixed_admit(word, now, period, 0, l->rate, &next) ? l->rate - (__u32)next
									   : 0;
	case WEIR_ALGO_SLIDING:
		now = wr_limit_wnow(l, now, win_off);
		*refill_ns = period - now % period;
		/* The largest cost it would still admit, found by bisection. */
		while (lo < hi) {
			mid = lo + (hi - lo + 1) / 2;
			if (wr_sliding_admit(word, aux, now, period, mid, l->rate, &next, &prev))
				lo = mid;
			else
				hi = mid - 1;
		}
		return lo;
	default:
		return wr_gcra_remaining(l, word, now, refill_ns);
	}
}

/* Fill in the key masks of a limit from its prefix lengths. */
static inline void wr_limit_set_masks(struct weir_limit *l)
{
	__u32 w;

	l->mask4 = wr_prefix_word(l->plen4, 0);
	for (w = 0; w < 4; w++)
		l->mask6[w] = wr_prefix_word(l->plen6, w);
}

#endif /* WEIR_LIMITER_H */
