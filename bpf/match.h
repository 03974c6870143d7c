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

/* The rule at position pos of ev->cell's list against ev->pkt: if it matches, into m. */
static __always_inline void match_one(const struct weir_ruleset *rs, struct wr_eval *ev,
				      struct wr_match *m, __u32 disabled, __u32 pos)
{
	const struct weir_rule *r;
	__u32 li, agg = 0, i;

	pos &= WEIR_MAX_CAND - 1;
	i = wr_cand_rule(rs, ev->cell, pos) & (WEIR_MAX_RULES - 1);
	r = &rs->rules[i];
	if (!wr_rule_match(r, &ev->pkt))
		return;
	/* Only for packets the preset's rule matches otherwise: the flow lookup. */
	if (r->preset == WEIR_PRESET_REFLECT && !wr_reflect_unsolicited(&ev->pkt))
		return;
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
 * verifier checks the body once, not once per candidate and path.
 */
__noinline int wr_match_one(struct wr_eval *ev, struct wr_match *m, __u32 pos, __u32 disabled)
{
	struct weir_ruleset *rs;
	__u32 rs_idx;

	if (!ev || !m)
		return 0;
	/* A map key from the stack, as in wr_match_rules. */
	rs_idx = ev->rs_idx;
	rs = bpf_map_lookup_elem(&wr_rulesets, &rs_idx);
	if (rs)
		match_one(rs, ev, m, disabled, pos);
	return 0;
}

/*
 * Match the live set's rules against ev->pkt: only the candidates its index
 * gives for the packet's protocol and destination port (wr_rule_candidates),
 * lowest first, so the cost follows the rules that may match rather than
 * the number of rules. Each step takes the lowest candidate bit and its
 * index by arithmetic (wr_bit_index). The first candidate, usually the
 * only one, is matched inline; the others through wr_match_one, a global
 * function (a call each), so that the verifier checks the body twice in
 * all: written out or looped inline, 64 copies of it took 6.1's verifier
 * past its million instructions (and a loop, 6.18's too). Global, so the
 * verifier checks it once and the caller sees the masks as unknown values
 * rather than one exact constant per path.
 */
__noinline int wr_match_rules(struct wr_eval *ev, struct wr_match *m, __u32 disabled)
{
	struct weir_ruleset *rs;
	__u32 k, rs_idx, cell;
	__u64 cand;

	if (!ev || !m)
		return 0;
	__builtin_memset(m, 0, sizeof(*m));
	m->class = WEIR_MAX_CLASS;
	/*
	 * A map key from the stack: kernels before 6.2 refuse one that points
	 * into a global function's argument (memory of unknown kind to them).
	 */
	rs_idx = ev->rs_idx;
	rs = bpf_map_lookup_elem(&wr_rulesets, &rs_idx);
	if (!rs)
		return 0;
	cand = wr_rule_candidates(rs, &ev->pkt, &cell);
	ev->cell = cell;
	if (!cand)
		return 0;
	match_one(rs, ev, m, disabled, wr_cand_pop(&cand));
	for (k = 1; k < WEIR_MAX_CAND && cand; k++)
		wr_match_one(ev, m, wr_cand_pop(&cand), disabled);
	return 0;
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

	/* ACK, PSH and the ECN bits may come with it; SYN, RST and FIN may not. */
	if (!ev || ev->pkt.proto != WR_IPPROTO_TCP || !(ev->pkt.flags & WR_PKT_L4) ||
	    (ev->pkt.tcp_flags & (WEIR_TCP_SYN | WEIR_TCP_ACK | WEIR_TCP_RST |
				  WEIR_TCP_FIN)) != WEIR_TCP_ACK)
		return 0;
	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	if (!cfg || cfg->disabled)
		return 0;
	rs_idx = ev->rs_idx;
	rs = bpf_map_lookup_elem(&wr_rulesets, &rs_idx);
	if (!rs || !rs->cookie_rules)
		return 0;
	cand = wr_rule_candidates(rs, &ev->pkt, &cell);
	flags = ev->pkt.tcp_flags;
	ev->pkt.tcp_flags = WEIR_TCP_SYN;
	for (k = 0; k < WEIR_MAX_CAND && cand; k++) {
		const struct weir_rule *r;

		r = &rs->rules[wr_cand_rule(rs, cell, wr_cand_pop(&cand)) & (WEIR_MAX_RULES - 1)];
		if (r->action == WEIR_ACT_COOKIE && wr_rule_match(r, &ev->pkt)) {
			hit = 1;
			break;
		}
	}
	ev->pkt.tcp_flags = flags;
	return hit;
}

#endif /* WEIR_BPF_MATCH_H */
