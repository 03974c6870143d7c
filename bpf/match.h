/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rule matching: the live set's candidate rules for the packet's protocol
 * and port (the rule index) against the parsed packet, into struct
 * wr_match; and whether a passed ACK may answer a SYN cookie.
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_MATCH_H
#define WEIR_BPF_MATCH_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "weir.h"
#include "weir_parse.h"
#include "weir_limiter.h"
#include "maps.h"
#include "eval.h"
#include "reflect.h"
#include "verified.h"


/*
 * The furthest offset read directly: the verifier marks a read safe only
 * if offset plus length stays within its 64 KiB bound on packet offsets.
 * A linear buffer is far shorter; anything further goes to the helper.
 */
#define WR_DIRECT_MAX	0x3fff

/*
 * The len (a constant) bytes at off of the linear buffer [data, end), as
 * the entry's parse read them: a pointer the verifier has bounded, or NULL
 * if they are not all there. One path for the verifier (no helper beside it).
 */
static __always_inline const __u8 *wr_hdr_at(void *data, void *end, __u32 off, __u32 len)
{
	const __u8 *p;

	if (off > WR_DIRECT_MAX)
		return NULL;
	p = (const __u8 *)data + off;
	/* The check and the read through one register, which the verifier bounds. */
	asm volatile("" : "+r"(p));
	if ((const void *)(p + len) > end)
		return NULL;
	return p;
}

/* Those bytes copied into buf: 0, or -1 if they are not there. */
static __always_inline int wr_read_hdr(void *data, void *end, __u32 off, void *buf, __u32 len)
{
	const __u8 *p = wr_hdr_at(data, end, off, len);

	if (!p)
		return -1;
	__builtin_memcpy(buf, p, len);
	return 0;
}

/*
 * len (a constant) bytes at off of the frame into buf: 0, or -1 if the
 * frame is shorter. From the linear buffer directly when they lie in it
 * (a helper call costs ~15 ns, a direct read ~1), else through the helper
 * that reads the rest: multi-buffer XDP's fragments (Linux 5.18; without
 * it the linear buffer is the frame), TC's paged data. ctx is an XDP
 * context if xdp (a constant), else a TC one; data and end are its own,
 * read once by the caller (a second read through the context, which the
 * compiler may address as ctx + 4, the verifier refuses).
 */
static __always_inline int wr_read(void *ctx, int xdp, void *data, void *end, __u32 off,
				   void *buf, __u32 len)
{
	if (!wr_read_hdr(data, end, off, buf, len))
		return 0;
	if (xdp)
		return has_frags && !bpf_xdp_load_bytes(ctx, off, buf, len) ? 0 : -1;
	return bpf_skb_load_bytes(ctx, off, buf, len) ? -1 : 0;
}

/*
 * For a set with rules on dst, dscp, ttl or payload (WEIR_X_READS): those
 * fields of the headers into m->x, as wr_parse would have put them there
 * (the entry's parse keeps them off its stack). The packet parsed as IP of
 * family fam with upper-layer protocol proto, its IP header at l3off (the
 * parse's wr_pkt.l3off): the headers are where the IP header and (IPv6)
 * its extension headers say; the parse checked them all, in the linear
 * buffer, which is read directly here (wr_hdr_at). Inline, once per packet, in wr_match_rules_*; nothing is
 * copied to the stack, whose chain is at 6.1's limit (with two header
 * copies there, the TC program's took 528 bytes).
 * The payload's offset only with a TCP or UDP header (WR_PKT_PORTS);
 * without, the caller does not use it. Returns 0.
 */
#define WR_MORE								\
	const struct wr_ip4 *ip;						\
	const __u8 *h;								\
	__u32 off, i, hl;							\
	void *data, *end;							\
	__u8 nh;								\
										\
	if (!ctx || !m)								\
		return 0;							\
	data = (void *)(long)ctx->data;						\
	end = (void *)(long)ctx->data_end;					\
	off = l3off;								\
	h = (const __u8 *)data + off;						\
	if (fam == 4) {								\
		ip = (const void *)h;						\
		if ((const void *)(ip + 1) > end)				\
			return 0;						\
		m->x.daddr[0] = ip->daddr;	/* the rest is not read for IPv4 */	\
		m->x.dscp = ip->tos >> 2;					\
		m->x.ttl = ip->ttl;						\
		off += (ip->ver_ihl & 0xf) * 4;					\
	} else {								\
		/* The first 8 bytes (version .. hop limit), then the destination. */ \
		if ((const void *)(h + 40) > end)				\
			return 0;						\
		__builtin_memcpy(m->x.daddr, h + 24, 16);			\
		m->x.dscp = ((h[0] & 0x0f) << 2) | (h[1] >> 6);			\
		m->x.ttl = h[7];						\
		/* The extension headers the parse walked, up to proto. */	\
		nh = h[6];							\
		off += sizeof(struct wr_ip6);					\
		for (i = 0; i < WR_MAX_EXTHDR && nh != proto; i++) {		\
			h = wr_hdr_at(data, end, off, 2);			\
			if (!h)							\
				return 0;					\
			if (nh == WR_IPPROTO_FRAGMENT)				\
				hl = sizeof(struct wr_ip6_frag);		\
			else if (nh == WR_IPPROTO_AH)				\
				hl = ((__u32)h[1] + 2) * 4;			\
			else							\
				hl = ((__u32)h[1] + 1) * 8;			\
			nh = h[0];						\
			off += hl;						\
		}								\
	}									\
	if (proto == WR_IPPROTO_UDP) {						\
		m->x.payoff = off + 8;						\
	} else if (proto == WR_IPPROTO_TCP) {					\
		/* After the options: the data offset, in 32-bit words. */	\
		h = wr_hdr_at(data, end, off, 13);				\
		if (!h)								\
			return 0;						\
		m->x.payoff = off + (h[12] >> 4) * 4;				\
	}									\
	return 0

static __always_inline int wr_more_xdp(struct xdp_md *ctx, struct wr_match *m, __u32 fam,
				       __u32 proto, __u32 l3off)
{
	WR_MORE;
}

static __always_inline int wr_more_skb(struct __sk_buff *ctx, struct wr_match *m, __u32 fam,
				       __u32 proto, __u32 l3off)
{
	WR_MORE;
}

/*
 * The payload terms of the rule at position pos of ev->cell's list, whose
 * words are read now from the packet (wr_read) at m->x.payoff plus each
 * term's offset: directly, or through helpers where a term lies past the
 * linear head (TC's paged data, a multi-buffer XDP frame's fragments). A
 * word not wholly within the frame fails its term (wr_rule_match_pay).
 * Global, per entry (each takes its own context): verified once each, and
 * its answer one unknown value to match_one, whose own branches would
 * otherwise multiply the states the verifier walks the rest of the
 * candidates with.
 */
#define WR_MATCH_PAY(XDP)							\
	const struct weir_ruleset *rs;						\
	const struct weir_rule *r;						\
	__u32 words[WEIR_MAX_PAY] = {}, have = 0, rs_idx, t;			\
	void *data, *end;							\
										\
	if (!ctx || !ev || !m)							\
		return 0;							\
	data = (void *)(long)ctx->data;						\
	end = (void *)(long)ctx->data_end;					\
	rs_idx = ev->rs_idx;							\
	rs = bpf_map_lookup_elem(&wr_rulesets, &rs_idx);			\
	if (!rs)								\
		return 0;							\
	pos &= WEIR_MAX_CAND - 1;						\
	r = &rs->rules[wr_cand_rule(rs, ev->cell, pos) & (WEIR_MAX_RULES - 1)];	\
	for (t = 0; t < WEIR_MAX_PAY; t++) {					\
		if (t >= r->nr_pay)						\
			break;							\
		if (!wr_read(ctx, XDP, data, end, (__u32)m->x.payoff + r->pay[t].off,	\
			     &words[t], 4))					\
			have |= 1u << t;					\
	}									\
	return wr_rule_match_pay(r, words, have)

__noinline int wr_match_pay_xdp(struct xdp_md *ctx, struct wr_eval *ev, struct wr_match *m,
				__u32 pos)
{
	WR_MATCH_PAY(1);
}

__noinline int wr_match_pay_skb(struct __sk_buff *ctx, struct wr_eval *ev, struct wr_match *m,
				__u32 pos)
{
	WR_MATCH_PAY(0);
}

/*
 * Rule r's payload terms against the words at payoff plus each term's
 * offset, read from the linear buffer directly (the usual case, without a
 * call): 1 if all match, 0 if one does not, -1 if a word lies past the
 * linear buffer (wr_match_pay_* decides then, through the helpers). The
 * context's data and end are read here once.
 */
static __always_inline int wr_pay_direct(void *ctx, int xdp, const struct weir_rule *r,
					 __u32 payoff)
{
	void *data, *end;
	__u32 t, w;

	if (xdp) {
		data = (void *)(long)((struct xdp_md *)ctx)->data;
		end = (void *)(long)((struct xdp_md *)ctx)->data_end;
	} else {
		data = (void *)(long)((struct __sk_buff *)ctx)->data;
		end = (void *)(long)((struct __sk_buff *)ctx)->data_end;
	}
WR_UNROLL
	for (t = 0; t < WEIR_MAX_PAY; t++) {
		if (t >= r->nr_pay)
			break;
		if (wr_read_hdr(data, end, payoff + r->pay[t].off, &w, 4))
			return -1;
		if ((w & r->pay[t].mask) != r->pay[t].value)
			return 0;
	}
	return 1;
}

/*
 * Is the source of p in source set `set` (weir_rule.srcset: its slot,
 * WEIR_SRCSET_NOT inverting the answer)? One longest-prefix lookup in the
 * slot's inner trie of p's family; a slot without an inner map is an empty
 * set. Only rules with WEIR_M_SRCSET call it: a rule without a set costs
 * one bit test. Global, so the verifier checks it once and match_one sees
 * its answer as one unknown value; its frame (the key) is on a short chain
 * of its own.
 */
__noinline int wr_srcset_match(const struct wr_pkt *p, __u32 set)
{
	struct weir_lpm6 k = { .plen = 128 };
	__u32 slot = set & WEIR_SRCSET_SLOT;
	void *inner;
	int hit = 0;

	if (!p)
		return 0;
	if (p->family == 4) {
		/* The v4 trie reads the first 8 bytes of k: its plen and addr[0]. */
		k.plen = 32;
		k.addr[0] = p->saddr[0];
		inner = bpf_map_lookup_elem(&wr_srcset4, &slot);
	} else {
		__builtin_memcpy(k.addr, p->saddr, sizeof(k.addr));
		inner = bpf_map_lookup_elem(&wr_srcset6, &slot);
	}
	if (inner && bpf_map_lookup_elem(inner, &k))
		hit = 1;
	return (set & WEIR_SRCSET_NOT) ? !hit : hit;
}

/*
 * The rule at position pos of ev->cell's list against ev->pkt: if it
 * matches, into m. ctx: the entry's context, an XDP one if xdp (a
 * constant), else a TC one.
 */
static __always_inline void match_one(void *ctx, int xdp, const struct weir_ruleset *rs,
				      struct wr_eval *ev, struct wr_match *m, __u32 disabled,
				      __u32 pos)
{
	const struct weir_rule *r;
	__u32 li, agg = 0, i;

	pos &= WEIR_MAX_CAND - 1;
	i = wr_cand_rule(rs, ev->cell, pos) & (WEIR_MAX_RULES - 1);
	r = &rs->rules[i];
	if (!wr_rule_match_base(r, &ev->pkt))
		return;
	if ((r->match & WEIR_M_SRCSET) && !wr_srcset_match(&ev->pkt, r->srcset))
		return;
	/*
	 * The further fields (weir_rule.xmatch): sport, len and frag from
	 * ev->pkt, dst, dscp and ttl from m->x (wr_more_*), iface from the
	 * context (XDP's ingress_ifindex; at TC ingress skb->ifindex is the
	 * device whose hook runs this, as is ingress_ifindex, and test_run sets
	 * only the former), then the payload's words (wr_match_pay_*).
	 */
	if (r->xmatch) {
		if (!wr_rule_match_more(r, &ev->pkt) || !wr_rule_match_x(r, &ev->pkt, &m->x) ||
		    !wr_rule_match_iface(r, xdp ? ((struct xdp_md *)ctx)->ingress_ifindex :
						  ((struct __sk_buff *)ctx)->ifindex))
			return;
		if (r->xmatch & WEIR_X_PAYLOAD) {
			int pay = wr_pay_direct(ctx, xdp, r, m->x.payoff);

			if (pay < 0)
				pay = xdp ? wr_match_pay_xdp(ctx, ev, m, pos) :
					    wr_match_pay_skb(ctx, ev, m, pos);
			if (!pay)
				return;
		}
	}
	/* Only for packets the preset's rule matches otherwise: the flow lookup. */
	if (r->preset == WEIR_PRESET_REFLECT && !wr_reflect_unsolicited(&ev->pkt))
		return;
	/* `spare verified` (auto's rules): a verified source goes on past the rule. */
	if ((r->flags & WEIR_RF_SPARE_VERIFIED) && wr_source_maybe_verified(&ev->pkt) &&
	    wr_source_verified(&ev->pkt))
		return;
	/* action block: the packet is dropped; the rule has nothing else to add. */
	if (r->action == WEIR_ACT_BLOCK) {
		m->block = i + 1;
		return;
	}
	m->npos = pos + 1;
	if (r->verified_class && (!m->vclass || r->verified_class < m->vclass))
		m->vclass = r->verified_class;
	if (r->action == WEIR_ACT_COOKIE && r->cookie == WEIR_COOKIE_ALWAYS &&
	    !disabled && !m->cookie_always &&
	    (ev->pkt.tcp_flags & (WEIR_TCP_SYN | WEIR_TCP_ACK | WEIR_TCP_RST |
				  WEIR_TCP_FIN)) == WEIR_TCP_SYN)
		m->cookie_always = i + 1;
	if (r->class < m->class)
		m->class = r->class;
	m->precise |= r->flags & WEIR_RF_PRECISE;
	for (li = 0; li < WEIR_MAX_LIMITS; li++)
		if (li < r->nr_limits && r->limits[li].key == WEIR_KEY_ALL)
			agg++;
	if ((r->flags & WEIR_RF_TCP_STATE) && !m->tcp_state)
		m->tcp_state = (i + 1) | ((r->flags & WEIR_RF_TCP_AUTO) ? WR_TS_AUTO : 0) |
			       ((r->action == WEIR_ACT_DROP && !disabled) ? 0 : WR_TS_DRY);
	if ((r->action == WEIR_ACT_DROP || r->action == WEIR_ACT_COOKIE) && !disabled) {
		if (!m->enforce)
			m->first_enforce = i;
		m->enforce |= 1ULL << pos;
		m->nr_enforce += r->nr_limits;
		m->agg_enforce += agg;
	} else {
		if (!m->dry)
			m->first_dry = i;
		m->dry |= 1ULL << pos;
		m->nr_dry += r->nr_limits;
		m->agg_dry += agg;
	}
}

/*
 * match_one for a packet's second and later candidates. Global, so the
 * verifier checks the body once, not once per candidate and path; one
 * per entry, as each takes its own context.
 */
#define WR_MATCH_ONE(XDP)							\
	struct weir_ruleset *rs;						\
	__u32 rs_idx;								\
										\
	if (!ctx || !ev || !m)							\
		return 0;							\
	/* A map key from the stack, as in wr_match_rules_*. */		\
	rs_idx = ev->rs_idx;							\
	rs = bpf_map_lookup_elem(&wr_rulesets, &rs_idx);			\
	if (rs)									\
		match_one(ctx, XDP, rs, ev, m, disabled, pos);			\
	return 0

__noinline int wr_match_one_xdp(struct xdp_md *ctx, struct wr_eval *ev, struct wr_match *m,
				__u32 pos, __u32 disabled)
{
	WR_MATCH_ONE(1);
}

__noinline int wr_match_one_skb(struct __sk_buff *ctx, struct wr_eval *ev, struct wr_match *m,
				__u32 pos, __u32 disabled)
{
	WR_MATCH_ONE(0);
}

/*
 * Match the live set's rules against ev->pkt: cand, the candidates its
 * index gives for the packet's protocol and destination port in cell
 * ev->cell (wr_rule_candidates, which the caller ran: a packet with none
 * makes no call), lowest first, so the cost follows the rules that may
 * match rather than the number of rules. Each step takes the lowest
 * candidate bit and its index by arithmetic (wr_bit_index). Candidates
 * whose protocol, port or source cannot match (another port in the same
 * bucket) are passed over inline by that test alone (wr_rule_match_base,
 * match_one's first). The first candidate left, usually the only one, is
 * matched inline; the others through wr_match_one, a global
 * function (a call each), so that the verifier checks the body twice in
 * all: written out or looped inline, 64 copies of it took 6.1's verifier
 * past its million instructions (and a loop, 6.18's too). Global, so the
 * verifier checks it once and the caller sees the masks as unknown values
 * rather than one exact constant per path.
 */
#define WR_MATCH_RULES(XDP, MORE, ONE)						\
	struct weir_ruleset *rs;						\
	__u32 k, rs_idx, pos;							\
										\
	if (!ctx || !ev || !m)							\
		return 0;							\
	wr_match_clear(m);							\
	/*									\
	 * A map key from the stack: kernels before 6.2 refuse one that points	\
	 * into a global function's argument (memory of unknown kind to them).	\
	 */									\
	rs_idx = ev->rs_idx;							\
	rs = bpf_map_lookup_elem(&wr_rulesets, &rs_idx);			\
	if (!rs || !cand)							\
		return 0;							\
	/* dst, dscp, ttl and the payload's offset, only for a set with rules on them. */ \
	if (rs->x_rules)							\
		MORE(ctx, m, ev->pkt.family, ev->pkt.proto, ev->pkt.l3off);	\
	pos = wr_cand_pop(&cand);						\
	if (cand && !wr_rule_match_base(wr_cand_r(rs, ev->cell, pos), &ev->pkt)) \
		pos = wr_cand_pop(&cand);					\
	match_one(ctx, XDP, rs, ev, m, disabled, pos);				\
	/* An action block rule ends the walk: the packet is dropped, whatever else it matches. */ \
	for (k = 1; k < WEIR_MAX_CAND && cand && !m->block; k++)		\
		ONE(ctx, ev, m, wr_cand_pop(&cand), disabled);			\
	return 0

/*
 * One per entry, as each takes its own context (for the header fields
 * and payload words that only some rules need): a program has one of the
 * two, verified once.
 */
__noinline int wr_match_rules_xdp(struct xdp_md *ctx, struct wr_eval *ev, struct wr_match *m,
				  __u32 disabled, __u64 cand)
{
	WR_MATCH_RULES(1, wr_more_xdp, wr_match_one_xdp);
}

__noinline int wr_match_rules_skb(struct __sk_buff *ctx, struct wr_eval *ev, struct wr_match *m,
				  __u32 disabled, __u64 cand)
{
	WR_MATCH_RULES(0, wr_more_skb, wr_match_one_skb);
}

/*
 * Is the rule at position pos of cell's list in set rs_idx an action
 * cookie rule whose SYNs look like p? Global: wr_match_cookie_ack's walk
 * calls it per candidate, so the verifier checks the rule match once, not
 * once per candidate (written inline, the walk cost 6.18's verifier 150 000
 * instructions).
 */
__noinline int wr_cookie_cand(const struct wr_pkt *p, __u32 rs_idx, __u32 cell, __u32 pos)
{
	const struct weir_ruleset *rs;
	const struct weir_rule *r;

	if (!p)
		return 0;
	rs = bpf_map_lookup_elem(&wr_rulesets, &rs_idx);
	if (!rs)
		return 0;
	r = &rs->rules[wr_cand_rule(rs, cell, pos & (WEIR_MAX_CAND - 1)) & (WEIR_MAX_RULES - 1)];
	/* Cookie rules have no further fields (the rule parser refuses them). */
	return r->action == WEIR_ACT_COOKIE && wr_rule_match_base(r, p);
}

/*
 * Is ev->pkt, a passed packet, an ACK (and nothing else) addressed like
 * the SYNs of an action cookie rule? Then it may carry a cookie's answer
 * (weir_cookie_ack). Only the index's candidates for its protocol and
 * port are visited, as in wr_match_rules: an ACK's cost does not grow with
 * the rules that cannot match it. Global, so verified once and its answer
 * an unknown value to the caller, which splits no paths before the very
 * end.
 */
__noinline int wr_match_cookie_ack(struct wr_eval *ev)
{
	struct weir_ruleset *rs;
	struct weir_config *cfg;
	__u32 k, rs_idx, cell, zero = 0;
	__u64 cand;
	__u8 flags;
	int hit = 0;

	/* A pure ACK, its set with an action cookie rule: wr_cookie_ack_maybe tested both. */
	if (!ev)
		return 0;
	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	if (!cfg || cfg->disabled)
		return 0;
	rs_idx = ev->rs_idx;
	rs = bpf_map_lookup_elem(&wr_rulesets, &rs_idx);
	if (!rs)
		return 0;
	cand = wr_rule_candidates(rs, &ev->pkt, &cell);
	flags = ev->pkt.tcp_flags;
	ev->pkt.tcp_flags = WEIR_TCP_SYN;
	for (k = 0; k < WEIR_MAX_CAND && cand; k++) {
		if (wr_cookie_cand(&ev->pkt, rs_idx, cell, wr_cand_pop(&cand))) {
			hit = 1;
			break;
		}
	}
	ev->pkt.tcp_flags = flags;
	return hit;
}

/*
 * wr_match_cookie_ack's first tests, inline and only here: a passed
 * packet that is not a pure ACK (ACK, PSH and the ECN bits may come with
 * it; SYN, RST and FIN may not), or a rule set with no action cookie rule
 * (the usual case), costs no call. A BPF-to-BPF call returns through the kernel's return
 * thunk, about 10 ns under Safe RET here, more than these tests.
 */
static __always_inline int wr_cookie_ack_maybe(struct wr_eval *ev)
{
	const struct weir_ruleset *rs;

	if (ev->pkt.proto != WR_IPPROTO_TCP || !(ev->pkt.flags & WR_PKT_L4) ||
	    (ev->pkt.tcp_flags & (WEIR_TCP_SYN | WEIR_TCP_ACK | WEIR_TCP_RST | WEIR_TCP_FIN)) !=
		    WEIR_TCP_ACK)
		return 0;
	rs = bpf_map_lookup_elem(&wr_rulesets, &ev->rs_idx);
	return rs && rs->cookie_rules && wr_match_cookie_ack(ev);
}

#endif /* WEIR_BPF_MATCH_H */
