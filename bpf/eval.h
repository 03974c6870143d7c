/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The state of one packet's evaluation: struct wr_eval on the entry's
 * stack, and the per-CPU scratch (wr_scratch) that keeps the match result,
 * a deferred event and a cookie's hand-off off it.
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_EVAL_H
#define WEIR_BPF_EVAL_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "weir.h"
#include "weir_parse.h"
#include "weir_reflect.h"

/* What one pass over the applicable limits does. */
enum wr_op {
	WR_OP_CHECK,	/* would every limit admit? stop at the first that refuses */
	WR_OP_CHARGE,	/* admit and move every TAT; stop at the first that refuses */
	WR_OP_REFUND,	/* give back what the first `charged` limits were charged */
};

/* Which limits a pass visits; aggregate buckets always go first. */
enum wr_phase {
	WR_PH_AGG,
	WR_PH_SRC,
};

/*
 * The stack budget. Kernels before 6.2 add up the frames of a call chain,
 * each rounded up to 32 bytes, bpf_loop's callback counted as a call, and
 * refuse a chain over 512 bytes. The deepest chain is the entry program
 * (weir_core inline, with this struct) -> eval_rule -> wr_limit_op, so:
 * the matching result lives in a per-CPU scratch map rather than on the
 * entry's stack, and wr_limit_op emits its events inline instead of
 * calling wr_event (a fourth frame).
 */
/* State of one evaluation, on the stack and handed to bpf_loop callbacks. */
struct wr_eval {
	struct wr_pkt pkt;
	__u64 group;		/* rules being evaluated, bit per position in cell's list */
	__u64 now;		/* the clock, for rules without WEIR_RF_PRECISE */
	__u64 now_p;		/* the clock for rules with it: precise under clock auto */
	__u64 seed;		/* wr_config.state_seed */
	__u32 sets;		/* wr_config.state_sets */
	__u32 rs_idx;		/* live rule set */
	__u32 seen;		/* limits visited in this op so far */
	__u32 charged;		/* limits charged by the CHARGE op (REFUND bound) */
	__u16 cell;		/* the rule index's cell of the packet (wr_rule_candidates) */
	__u16 pad;
	__s32 refused;		/* rule index that refused, or -1 */
	/* Bytes, not words: the struct is 8 bytes smaller on the entry's stack. */
	__u8 op;		/* enum wr_op */
	__u8 phase;		/* enum wr_phase */
	__u8 fault;		/* WR_EV_FAULT or WR_EV_CONTENDED happened */
	__u8 fail_closed;
};

/*
 * wr_eval.fault: what ended an evaluation other than a refusal. Either
 * stops the walks at once; they differ in what the packet gets.
 */
#define WR_EV_FAULT	1	/* an internal fault: the fail policy decides */
/*
 * Contention: the state this packet needs is being changed by another CPU
 * beyond the bounded retry: a new key's way claimed twice by a claim in
 * progress (a claimant stalled between its two compare-and-swaps, as a
 * preempted vCPU is), or a bucket's compare-and-swap lost WR_CAS_TRIES
 * times in a row. Refused by the rule being evaluated, counted under
 * WEIR_G_CONTENDED; never admitted uncharged (docs/ARCHITECTURE.md).
 */
#define WR_EV_CONTENDED	2

/*
 * The time rule r's buckets are metered by. Each bucket belongs to one
 * rule, so it always sees the same clock, even when a packet matches
 * rules of both kinds.
 */
static __always_inline __u64 rule_now(const struct wr_eval *ev, const struct weir_rule *r)
{
	return r->flags & WEIR_RF_PRECISE ? ev->now_p : ev->now;
}

/* Which rules a packet matched, split by whether they enforce. */
struct wr_match {
	__u64 enforce;		/* action drop, kill switch off */
	__u64 dry;		/* action dry-run, or any rule under the kill switch */
	__u32 nr_enforce;	/* limits carried by the enforcing rules */
	__u32 nr_dry;
	__u32 agg_enforce;	/* of which rule-wide */
	__u32 agg_dry;
	__u32 first_enforce;	/* lowest rule index in each group */
	__u32 first_dry;
	__u32 npos;		/* the highest position (ev->cell's list) that matched, plus one */
	__u32 class;		/* most critical class among the matching rules */
	__u32 precise;		/* a matching rule needs the precise clock */
	__u32 cookie_always;	/* 1 + index of the first `cookie always` rule a SYN matched */
	__u32 vclass;		/* 1 + the most critical verified-class; 0: none */
	__u32 block;		/* 1 + index of an action block rule matched; 0: none */
	/* 1 + index of the first tcp-state rule matched, with WR_TS_AUTO and WR_TS_DRY; 0: none */
	__u32 tcp_state;
	/*
	 * The header fields that struct wr_pkt does not hold, read for a set
	 * with rules on them (wr_more_xdp, wr_more_skb) and not cleared
	 * (wr_match_clear).
	 */
	struct wr_pkt_x x;
};
/*
 * wr_match.tcp_state's flags above the rule index: the rule is `tcp-state
 * auto`; it does not enforce (dry-run, kill switch).
 */
#define WR_TS_AUTO	(1U << 16)
#define WR_TS_DRY	(1U << 17)
/* The bytes of struct wr_match that matching starts from 0. */
#define WR_MATCH_CLEAR	__builtin_offsetof(struct wr_match, x)

/* m as matching starts it: no rule matched (x is left as it was). */
static __always_inline void wr_match_clear(struct wr_match *m)
{
	__builtin_memset(m, 0, WR_MATCH_CLEAR);
	m->class = WEIR_MAX_CLASS;
}

/*
 * Per-packet scratch space off the entry program's stack (see the stack
 * budget above struct wr_eval): the match result, written by
 * wr_match_rules, and the "started limiting" event a bucket deep in
 * wr_limit_op wants sent, which weir_core sends once the rules are done.
 * Per CPU, and a packet runs to its verdict on one CPU without sleeping, so
 * nothing else touches it meanwhile.
 */
struct wr_scratch {
	struct wr_match m;
	struct weir_key key;	/* the bucket's key; family 0: a rule-wide bucket */
	__u64 uid_li;		/* rule uid << 8 | limit index */
	__u64 now;
	__u64 drops;
	__u32 pending;		/* an event waits to be sent */
	/* A SYN for weir_cookie_syn: its rule's counter slot, SYN-ACK budgets, time, length. */
	__u32 ck_slot;
	__u32 ck_len;
	__u64 ck_now;
	__u64 ck_interval_fp;
	__u64 ck_tolerance;
	__u64 ckd_interval_fp;
	__u64 ckd_tolerance;
	struct weir_fleet_use fu;	/* a new hot fleet key's first value */
	struct weir_flow_key fk;	/* wr_reflect_unsolicited's lookup key */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wr_scratch);
} wr_scratch SEC(".maps");

#endif /* WEIR_BPF_EVAL_H */
