/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The limit walk: every limit of the matched rules, aggregate buckets
 * first, checked all, then charged (and refunded when a race refuses half
 * way); with the inline fast paths for one rule with one limit.
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_WALK_H
#define WEIR_BPF_WALK_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "compat.bpf.h"
#include "weir.h"
#include "weir_parse.h"
#include "weir_limiter.h"
#include "weir_state.h"
#include "maps.h"
#include "count.h"
#include "eval.h"
#include "state.h"
#include "event.h"
#include "limit.h"

/*
 * Every limit of the rule at position i of the packet's cell (ev->cell) in
 * the current phase, under ev->op; 1 stops the walk.
 */
static __always_inline long eval_rule_at(__u32 i, struct wr_eval *ev)
{
	struct weir_ruleset *rs;
	const struct weir_rule *r;
	__u32 rs_idx = ev->rs_idx;
	__u64 idx = i;
	__u32 li, n;

	/*
	 * Bound the index where the verifier sees it: clang spills i as 32
	 * bits and reloads it, losing the range a plain check would give.
	 */
	asm volatile("%[idx] &= %[mask]" : [idx] "+r"(idx) : [mask] "i"(WEIR_MAX_CAND - 1));
	if (i >= WEIR_MAX_CAND)
		return 1;
	if (!(ev->group & (1ULL << idx)))
		return 0;
	/* A key on this frame's stack: ev may be a global function's argument. */
	rs = bpf_map_lookup_elem(&wr_rulesets, &rs_idx);
	if (!rs)
		return 1;
	idx = wr_cand_rule(rs, ev->cell, idx);
	asm volatile("%[idx] &= %[mask]" : [idx] "+r"(idx) : [mask] "i"(WEIR_MAX_RULES - 1));
	r = &rs->rules[idx];
	n = r->nr_limits;
	for (li = 0; li < WEIR_MAX_LIMITS && li < n; li++) {
		if (!limit_op(ev, r, li)) {
			if (ev->op != WR_OP_REFUND)
				ev->refused = idx;
			return 1;
		}
	}
	return 0;
}

/* bpf_loop callback: eval_rule_at. */
static long eval_rule(__u32 i, void *ctx)
{
	return eval_rule_at(i, ctx);
}

/*
 * The rule walk without bpf_loop (kernels before 5.17): a bounded loop in a
 * global function, so that the verifier checks its passes once, not at
 * every call site.
 */
__noinline int wr_walk_rules(struct wr_eval *ev, __u32 nr)
{
	__u32 i;

	if (!ev)
		return 0;
	for (i = 0; i < WEIR_MAX_CAND && i < nr; i++)
		if (eval_rule_at(i, ev))
			break;
	return 0;
}

/* eval_rule over positions 0 .. nr - 1 of the packet's cell, until one stops the walk. */
static __always_inline void walk_rules(struct wr_eval *ev, __u32 nr)
{
	if (has_bpf_loop)
		bpf_loop(nr, eval_rule, ev, 0);
	else
		wr_walk_rules(ev, nr);
}

/* One op over the group: aggregate buckets first, then per-source ones. */
static __always_inline int run_op(struct wr_eval *ev, __u32 op, __u32 nr_rules,
				  __u32 nr_limits, __u32 nr_agg)
{
	ev->op = op;
	ev->seen = 0;
	ev->refused = -1;
	if (nr_agg) {
		ev->phase = WR_PH_AGG;
		walk_rules(ev, nr_rules);
		if (ev->refused >= 0 || ev->fault)
			return 0;
	}
	/*
	 * The rule-wide limits go first so that a packet they refuse never
	 * creates per-source state: a spoofed flood does not churn wr_state.
	 */
	if (nr_limits > nr_agg) {
		ev->phase = WR_PH_SRC;
		walk_rules(ev, nr_rules);
	}
	return ev->refused < 0 && !ev->fault;
}

/*
 * The common case, inline: rule r's one limit, a token bucket per source.
 * One pass over the set (state_scan) finds the key's way, or the way a
 * new key takes, so a new source costs no second scan and no call. 1 admitted (and charged), 0 refused, -1 take the general
 * path (a way claimed by another CPU first, or a compare-and-swap that
 * kept failing).
 */
static __always_inline int fast_src(struct wr_eval *ev, const struct weir_rule *r)
{
	const struct weir_limit *l = &r->limits[0];
	struct weir_way *way, *victim;
	__u64 inc, tat, next, now, seen;
	struct weir_set *set;
	struct weir_key key;
	int i;

	/* A fleet limit takes the general path, which tells the fleet sync. */
	if (l->algo != WEIR_ALGO_GCRA || l->key != WEIR_KEY_SRC || l->fleet)
		return -1;
	wr_make_key(r, 0, l, &ev->pkt, &key);
	set = state_set(ev, &key);
	if (!set)
		return -1;
	way = state_scan(set, &key, &victim, &seen);
	now = rule_now(ev, r);
	inc = wr_gcra_inc(l->interval_fp, wr_limit_cost(l, &ev->pkt));
	if (!way) {
		/* A new bucket starts full: this packet is its first charge. */
		if (!wr_gcra_admit(0, now, inc, l->tolerance, &next))
			return 0;
		return state_claim(set, victim, seen, &key, next, 0, 0) ? 1 : -1;
	}
	for (i = 0; i < WR_CAS_TRIES; i++) {
		tat = READ_ONCE(way->st.tat);
		if (!wr_gcra_admit(tat, now, inc, l->tolerance, &next)) {
			note_drop(&way->st, now, &key, r->uid, 0, 0, 0);
			return 0;
		}
		if (__sync_val_compare_and_swap(&way->st.tat, tat, next) == tat) {
			/* The way went to another key meanwhile: see wr_limit_op. */
			if (READ_ONCE(*way_word(way, 0)) != key_word(&key, 0))
				__sync_fetch_and_add(&way->st.tat, -inc);
			return 1;
		}
	}
	return -1;
}

/*
 * One matched rule with rule-wide token buckets: check those first,
 * inline. A spoofed flood that they refuse then costs no call and touches
 * no per-source state. 1: every one admits (the general path still charges
 * them), 0: refused.
 */
static __always_inline int agg_admits(struct wr_eval *ev, const struct weir_rule *r)
{
	__u32 li;

	for (li = 0; li < WEIR_MAX_LIMITS; li++) {
		const struct weir_limit *l = &r->limits[li];
		struct weir_state *st;
		__u64 next;
		__u32 slot;

		if (li >= r->nr_limits)
			break;
		if (l->key != WEIR_KEY_ALL || l->algo != WEIR_ALGO_GCRA)
			continue;
		slot = l->agg_slot;
		st = bpf_map_lookup_elem(&wr_agg, &slot);
		if (!st)
			return 1;	/* the general path counts the fault */
		if (!wr_gcra_admit(READ_ONCE(st->tat), rule_now(ev, r),
				   wr_gcra_inc(l->interval_fp, wr_limit_cost(l, &ev->pkt)),
				   l->tolerance, &next)) {
			note_drop(st, rule_now(ev, r), NULL, r->uid, li, 0, slot);
			return 0;
		}
	}
	return 1;
}

/*
 * Check then charge every limit of the group. Returns 1 if admitted (and
 * charged), 0 if refused (nothing charged; ev->refused says by which rule).
 * A fault sets ev->fault and returns 1 (fail open) or 0 (fail closed);
 * contention (WR_EV_CONTENDED) is a refusal by the rule it met, counted.
 */
static __always_inline int eval_group(struct wr_eval *ev, const struct weir_ruleset *rs,
				      __u64 group, __u32 nr_rules, __u32 nr_limits,
				      __u32 nr_agg, __u32 first)
{
	const struct weir_rule *r = &rs->rules[first & (WEIR_MAX_RULES - 1)];

	ev->group = group;
	ev->charged = 0;
	ev->fault = 0;
	ev->refused = -1;
	if (nr_agg && !(group & (group - 1)) && !agg_admits(ev, r)) {
		ev->refused = first & (WEIR_MAX_RULES - 1);
		goto not_admitted;
	}
	if (nr_limits > 1 && !(group & (group - 1))) {
		int o = wr_rule_once(ev, r, nr_limits);

		if (o > 0)
			return 1;
		if (!o) {
			if (!ev->fault)
				ev->refused = first & (WEIR_MAX_RULES - 1);
			goto not_admitted;
		}
		/* A new key or a contended bucket: the general walk, from the start. */
		ev->fault = 0;
		ev->refused = -1;
		ev->charged = 0;
	}
	if (nr_limits == 1) {
		/*
		 * One rule with one limit, the common case: CHARGE alone is
		 * check and charge in one atomic step, no walk needed.
		 */
		int f = nr_agg ? -1 : fast_src(ev, r);

		if (f >= 0) {
			if (f)
				return 1;
			ev->refused = first & (WEIR_MAX_RULES - 1);
			goto not_admitted;
		}
		ev->op = WR_OP_CHARGE;
		ev->phase = nr_agg ? WR_PH_AGG : WR_PH_SRC;
		if (limit_op(ev, r, 0))
			return 1;
		if (ev->fault != WR_EV_FAULT)
			ev->refused = first & (WEIR_MAX_RULES - 1);
		goto not_admitted;
	}
	if (!run_op(ev, WR_OP_CHECK, nr_rules, nr_limits, nr_agg))
		goto not_admitted;
	if (run_op(ev, WR_OP_CHARGE, nr_rules, nr_limits, nr_agg))
		return 1;
	/* Lost a race (or a fault) half-way: undo what this packet charged. */
	if (ev->charged) {
		__s32 refused = ev->refused;
		__u32 fault = ev->fault;

		/* A fault flag would end the refund walk early: clear it meanwhile. */
		ev->fault = 0;
		run_op(ev, WR_OP_REFUND, nr_rules, nr_limits, nr_agg);
		ev->refused = refused;
		ev->fault = fault;
	}
not_admitted:
	if (ev->fault == WR_EV_CONTENDED) {
		/* ev->refused: the rule whose limit met it (eval_rule_at, or above). */
		count(WEIR_G_CONTENDED);
		return 0;
	}
	if (ev->fault) {
		count(WEIR_G_FAULT);
		ev->refused = -1;
		if (ev->fail_closed)
			return 0;
		count(WEIR_G_FAIL_OPEN);
		return 1;
	}
	return 0;
}

#endif /* WEIR_BPF_WALK_H */
