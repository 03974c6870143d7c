// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * weir data path: one core, an XDP entry and a TC ingress entry.
 *
 * parse -> the first stage (a refusal still in force: first.h) -> deny
 * list -> allow list -> feeds -> rule matching -> the matching rules'
 * limits (aggregate buckets first, then per-source; check all, then charge)
 * -> verdict and per-CPU counters.
 *
 * This file keeps the entry programs and weir_core, the flow above; each
 * step lives in a header of its own, which includes what it uses
 * (tests/bpf_headers.sh compiles each alone): maps.h, count.h (global
 * counters), clock.h, lists.h (deny and allow), eval.h (an evaluation's
 * state and scratch), state.h (wr_state), event.h (refusals and their
 * events), limit.h (one limit's check, charge and refund), reflect.h (the
 * reflection preset's outgoing flows), match.h (rule matching), walk.h (the limit walk), rule_stats.h (per-rule counters),
 * shed.h, capture.h, tcpstate.h (tcp-state's connection check), first.h
 * (the first stage's cache of refusals), cookie.h
 * and sockops.h. They are included in this
 * order, which is the order of their global functions in the object.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "compat.bpf.h"
#include "verdict.h"
#include "weir.h"
#include "weir_parse.h"
#include "weir_limiter.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "maps.h"
#include "count.h"
#include "clock.h"
#include "lists.h"
#include "eval.h"
#include "state.h"
#include "event.h"
#include "limit.h"
#include "reflect.h"
#include "match.h"
#include "walk.h"
#include "rule_stats.h"
#include "shed.h"
#include "capture.h"
#include "tcpstate.h"
#include "first.h"

/* What weir_cookie_syn needs of rule r, into the per-CPU scratch. */
static __always_inline void ck_stash(struct wr_scratch *sc, const struct weir_rule *r, __u64 now,
				     __u32 len)
{
	sc->ck_slot = r->slot;
	sc->ck_len = len;
	sc->ck_now = now;
	sc->ck_interval_fp = r->ck_interval_fp;
	sc->ck_tolerance = r->ck_tolerance;
	sc->ckd_interval_fp = r->ckd_interval_fp;
	sc->ckd_tolerance = r->ckd_tolerance;
}

/* A pure SYN: the only packet a cookie answers. */
static __always_inline int pure_syn(const struct wr_pkt *p)
{
	return p->proto == WR_IPPROTO_TCP && (p->flags & WR_PKT_L4) &&
	       (p->tcp_flags & (WEIR_TCP_SYN | WEIR_TCP_ACK | WEIR_TCP_RST | WEIR_TCP_FIN)) ==
		       WEIR_TCP_SYN;
}

/*
 * The verdict on one frame. frame_len is its whole length; segs the
 * packets it stands for (a GSO super-packet at TC: more than 1). The
 * entry's context: xctx at XDP, skb at TC (the other NULL), for the
 * capture's copy of a judged frame.
 */
static __always_inline int weir_core(const void *data, const void *data_end, __u32 frame_len,
				       __u32 segs, struct xdp_md *xctx, struct __sk_buff *skb)
{
	struct weir_ruleset *rs;
	/* For the capture: WR_WHY(reason, deciding rule + 1, flags). */
	__u32 why = WEIR_CR_NO_RULE;
	struct weir_config *cfg;
	struct wr_eval ev = {};
	__u64 enforce = 0, dry = 0, matched;
	struct weir_shed *shed = NULL;
	__u32 cap_cls = 0, use_cap = 0;
	/* A limit-class feed's WEIR_FA_CLASS_OF(class) for the source; 0: none. */
	__u32 fcls = 0;
	struct wr_scratch *sc;
	struct wr_match *m;
	__u32 zero = 0;
	__u32 disabled;
	/*
	 * This CPU's global counters for the parse and the lists (a per-CPU
	 * array: the lookup is inlined). After the rule walk each count looks
	 * them up again: a pointer kept across the walk takes a stack slot,
	 * and on 6.1 that slot takes the deepest call chain from 480 to the
	 * 512-byte limit (frames are rounded up to 32 bytes).
	 */
	struct weir_globals *g = bpf_map_lookup_elem(&wr_global, &zero);
	int res;

	/*
	 * Cannot fail (one entry, key 0). Checked once here, so that the
	 * verifier does not follow the rest of the program once with the
	 * counters and once without.
	 */
	if (!g)
		return WR_VERDICT_PASS;
	gcount(g, WEIR_G_PACKETS);
	if (segs > 1) {
		ev.pkt.segs = segs > 0xffff ? 0xffff : segs;
		ev.pkt.flags = WR_PKT_GSO;
	}
	res = wr_parse(data, data_end, frame_len, &ev.pkt, NULL);
	if (res == WR_PARSE_MALFORMED && xctx && has_frags) {
		__u32 full = bpf_xdp_get_buff_len(xctx);

		if (full > frame_len) {
			/*
			 * From the state the first parse started with (XDP
			 * frames are one packet: segs 1, no flags), so the
			 * verifier meets every way that parse failed as one
			 * state here, and checks the second parse once.
			 */
			__builtin_memset(&ev.pkt, 0, sizeof(ev.pkt));
			res = wr_parse(data, data_end, full, &ev.pkt, NULL);
		}
	}
	if (res == WR_PARSE_NON_IP) {
		gcount(g, WEIR_G_NON_IP);
		return WR_VERDICT_PASS;
	}
	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	if (!cfg) {
		gcount(g, WEIR_G_FAULT);
		gcount(g, WEIR_G_FAIL_OPEN);
		return WR_VERDICT_PASS;
	}
	if (res == WR_PARSE_MALFORMED) {
		gcount(g, WEIR_G_MALFORMED);
		why = WEIR_CR_MALFORMED;
		if (cfg->malformed_pass)
			goto pass;
		goto drop;
	}
	gcount(g, WEIR_G_PARSED);
	if (ev.pkt.flags & WR_PKT_ND)
		gcount(g, WEIR_G_ND);

	/*
	 * The first stage: a source whose bucket refused it, and would refuse
	 * it still, is dropped for one lookup (first.h). Not looked at while
	 * the live rule set has nothing it may cache.
	 */
	if (cfg->cache_on) {
		struct weir_refused *e = NULL;
		__u64 cnow = 0;
		__u32 cs = refused_find(&ev.pkt, cfg, &e, &cnow);

		if (e && cs < WEIR_REFUSED_SLOTS && refused_hit(e, cs, ev.pkt.len, cnow)) {
			gcount(g, WEIR_G_CACHED);
			why = WR_WHY(WEIR_CR_RULE, (e->rule & (WEIR_MAX_RULES - 1)) + 1, 0);
			goto drop;
		}
	}

	/*
	 * Deny before allow: a source on both lists is denied. An explicit
	 * deny wins over the neighbour-discovery pass too: ND from a denied
	 * source is dropped, from others it passes as before.
	 */
	if ((cfg->lists & (WEIR_L_DENY4 | WEIR_L_DENY6)) &&
	    on_list(&wr_deny4, &wr_deny6, &ev.pkt, cfg)) {
		gcount(g, WEIR_G_DENIED);
		why = WEIR_CR_DENY;
		goto drop;
	}
	if ((cfg->lists & (WEIR_L_ALLOW4 | WEIR_L_ALLOW6)) &&
	    on_list(&wr_allow4, &wr_allow6, &ev.pkt, cfg)) {
		gcount(g, WEIR_G_ALLOWED);
		gcount(g, WEIR_G_PASSED);
		capture(xctx, skb, cfg, WEIR_CV_PASSED, WEIR_CR_ALLOW);
		return WR_VERDICT_PASS;
	}
	/*
	 * Feeds after the operator's lists: an operator's allow wins over a
	 * third party's blocklist (which may list the operator's own ranges).
	 */
	if (cfg->lists & (WEIR_L_FEED4 | WEIR_L_FEED6)) {
		int fa = on_feed(&ev.pkt, cfg->lists);

		if (fa == WEIR_FA_DENY) {
			gcount(g, WEIR_G_FEED_DENIED);
			why = WEIR_CR_FEED;
			goto drop;
		}
		if (fa == WEIR_FA_ALLOW) {
			gcount(g, WEIR_G_FEED_ALLOWED);
			gcount(g, WEIR_G_PASSED);
			capture(xctx, skb, cfg, WEIR_CV_PASSED, WEIR_CR_FEED);
			return WR_VERDICT_PASS;
		}
		/*
		 * What is left is none (0) or a limit-class (1..15): the class
		 * the packet is shed as, below. Counted without a branch (the
		 * sum is 1 for any class): the verifier follows one path on.
		 */
		fcls = fa;
		g->count[WEIR_G_FEED_CLASSED] += ((__u32)fa + WEIR_FA_MASK) >> 4;
	}

	disabled = cfg->disabled;
	ev.rs_idx = cfg->active & 1;
	ev.fail_closed = cfg->fail_closed;
	ev.seed = cfg->state_seed;
	ev.sets = cfg->state_sets;
	rs = bpf_map_lookup_elem(&wr_rulesets, &ev.rs_idx);
	if (!rs)
		goto pass;

	sc = bpf_map_lookup_elem(&wr_scratch, &zero);
	if (!sc) {
		gcount(g, WEIR_G_FAULT);
		gcount(g, WEIR_G_FAIL_OPEN);
		goto pass;
	}
	sc->pending = 0;
	m = &sc->m;
	/*
	 * A packet the rule index gives no candidate (its protocol and port
	 * match no rule) makes no call: the match is cleared here as the
	 * matcher clears it. A BPF-to-BPF call costs about 10 ns here (its
	 * return goes through the kernel's return thunk under Safe RET).
	 */
	{
		__u32 cell;
		__u64 cand = wr_rule_candidates(rs, &ev.pkt, &cell);

		ev.cell = cell;
		if (!cand)
			wr_match_clear(m);
		else if (xctx)
			wr_match_rules_xdp(xctx, &ev, m, disabled, cand);
		else if (skb)
			wr_match_rules_skb(skb, &ev, m, disabled, cand);
	}
	matched = m->enforce | m->dry;

	/*
	 * action block: dropped, whatever else the packet matches, before it
	 * costs a socket lookup, a shedding draw or a token. Under the kill
	 * switch it passes as a would-drop (drop: below).
	 */
	if (m->block) {
		__u32 ri = (m->block - 1) & (WEIR_MAX_RULES - 1);

		rule_count(rs, ri, ev.pkt.len, disabled ? WR_VERDICT_WOULD_DROP : WR_VERDICT_DROP);
		why = WR_WHY(WEIR_CR_RULE, ri + 1, 0);
		goto drop;
	}

	/*
	 * tcp-state: a TCP segment other than a SYN that belongs to no
	 * connection of this host is dropped before it costs a token or a
	 * shedding draw. Unless it is switched off (`tcp-state auto`).
	 */
	if (m->tcp_state && !pure_syn(&ev.pkt) && ev.pkt.proto == WR_IPPROTO_TCP &&
	    (ev.pkt.flags & WR_PKT_L4) && (!(m->tcp_state & WR_TS_AUTO) || cfg->tcp_state_on)) {
		__u32 ri = (m->tcp_state - 1) & (WEIR_MAX_RULES - 1);
		int ok = 1;

		if (xctx)
			ok = wr_tcp_state_xdp(xctx, &ev.pkt, clock_coarse(cfg));
		else if (skb)
			ok = wr_tcp_state_skb(skb, &ev.pkt, clock_coarse(cfg));
		if (!ok) {
			count(WEIR_G_OUT_OF_STATE);
			if (!(m->tcp_state & WR_TS_DRY)) {
				rule_count(rs, ri, ev.pkt.len, WR_VERDICT_DROP);
				why = WR_WHY(WEIR_CR_TCP_STATE, ri + 1, 0);
				goto drop;
			}
			count(WEIR_G_WOULD_DROP);
			rule_count(rs, ri, ev.pkt.len, WR_VERDICT_WOULD_DROP);
		}
	}

	/*
	 * Shedding by class, then reserved capacity, before any rule limit:
	 * a shed packet consumes no tokens. Neighbour discovery that no rule
	 * names is never shed.
	 */
	shed = bpf_map_lookup_elem(&wr_shed, &zero);
	if (shed && (matched || !(ev.pkt.flags & WR_PKT_ND))) {
		__u32 cls = (fcls ? fcls >> WEIR_FA_CLASS_SHIFT : matched ? m->class :
				shed->default_class) & WEIR_MAX_CLASS;
		__u64 th;

		/* A verified source of a rule with a verified-class is shed as that class. */
		if (m->vclass)
			cls = wr_verified_class(&ev.pkt, m->vclass, cls, clock_now(cfg, 0)) &
			      WEIR_MAX_CLASS;
		th = shed->threshold[cls];

		class_count(cls, ev.pkt.len, 0);
		if (cls && th && !(shed->flags & WEIR_SHED_OFF) &&
		    (!shed->expires_ns || clock_now(cfg, 0) <= shed->expires_ns) &&
		    (__u64)bpf_get_prandom_u32() < th) {
			class_count(cls, ev.pkt.len, 1);
			count(WEIR_G_SHED);
			why = WEIR_CR_SHED;
			goto drop;
		}
		if (shed->cap[0].total.interval_fp || shed->cap[1].total.interval_fp) {
			/*
			 * The jiffies clock is exact for capacity: the controller
			 * gives its buckets a tenth of a second of burst (25 ticks
			 * at HZ=250), never under the two ticks GCRA needs.
			 */
			ev.now = clock_now(cfg, 0);
			cap_cls = cls;
			if (!wr_capacity_op(shed, cls, ev.pkt.len, ev.now, 0)) {
				class_count(cls, ev.pkt.len, 2);
				count(WEIR_G_CAPACITY);
				why = WEIR_CR_CAPACITY;
				goto drop;
			}
			use_cap = 1;
		}
	}
	if (!matched) {
		count(WEIR_G_NO_RULE);
		goto pass;
	}
	if (m->cookie_always) {
		/* `cookie always`: the SYN is answered, whatever the limits say. */
		__u32 ri = (m->cookie_always - 1) & (WEIR_MAX_RULES - 1);

		ck_stash(sc, &rs->rules[ri], clock_now(cfg, 0), ev.pkt.len);
		rule_count(rs, ri, ev.pkt.len, WR_VERDICT_DROP);
		capture(xctx, skb, cfg, WEIR_CV_DROPPED, WR_WHY(WEIR_CR_COOKIE, ri + 1, 0));
		return WR_VERDICT_COOKIE;
	}
	if (!use_cap)
		ev.now = clock_now(cfg, 0);
	ev.now_p = clock_mode == WEIR_CLOCK_AUTO && m->precise ? clock_now(cfg, 1) : ev.now;
	enforce = m->enforce;
	dry = m->dry;

	if (enforce &&
	    !eval_group(&ev, rs, enforce, m->npos, m->nr_enforce, m->agg_enforce,
			m->first_enforce)) {
		rule_count(rs, ev.refused, ev.pkt.len, WR_VERDICT_DROP);
		send_pending(sc);
		if (ev.refused >= 0 && pure_syn(&ev.pkt) &&
		    rs->rules[ev.refused & (WEIR_MAX_RULES - 1)].action == WEIR_ACT_COOKIE) {
			/* Refused by an action cookie rule: answered instead. */
			ck_stash(sc, &rs->rules[ev.refused & (WEIR_MAX_RULES - 1)], ev.now, ev.pkt.len);
			capture(xctx, skb, cfg, WEIR_CV_DROPPED,
				WR_WHY(WEIR_CR_COOKIE, (ev.refused & (WEIR_MAX_RULES - 1)) + 1, 0));
			return WR_VERDICT_COOKIE;
		}
		/* Refused by its bucket (not a fault, not contention): the first stage may hold it. */
		if (cfg->cache_on && !ev.fault)
			wr_refused_fill(&ev);
		/* refused -1: a fault under fail closed. */
		why = ev.refused >= 0 ?
			WR_WHY(WEIR_CR_RULE, (ev.refused & (WEIR_MAX_RULES - 1)) + 1, 0) :
			WEIR_CR_FAULT;
		goto drop;
	}
	/* A passed packet is captured as the first rule's it matched (a would-drop as its rule's). */
	why = WR_WHY(WEIR_CR_RULE, WR_WHY_FIRST, 0);
	if (dry && !eval_group(&ev, rs, dry, m->npos, m->nr_dry, m->agg_dry, m->first_dry)) {
		/* The refusing rule counts a would-drop (which also passes). */
		count(WEIR_G_WOULD_DROP);
		if (ev.refused >= 0) {
			rule_count(rs, ev.refused, ev.pkt.len, WR_VERDICT_WOULD_DROP);
			dry = wr_mask_without(rs, dry, ev.cell, ev.refused);
			why = WR_WHY(WEIR_CR_RULE, (ev.refused & (WEIR_MAX_RULES - 1)) + 1,
				     WEIR_CF_WOULD_DROP);
		}
	}
	send_pending(sc);
	/* Every rule that let the packet through; one (the usual case) needs no walk. */
	matched = enforce | dry;
	if (matched && !(matched & (matched - 1)))
		rule_count(rs, enforce ? m->first_enforce : m->first_dry, ev.pkt.len,
			   WR_VERDICT_PASS);
	else if (matched)
		wr_count_passed(rs, matched, ev.pkt.len, ev.cell);
pass:
	if (use_cap)
		wr_capacity_op(shed, cap_cls, ev.pkt.len, ev.now, 1);
	/*
	 * The entry counts it passed or dropped once the cookie is checked;
	 * the capture does not see such an ACK (its verdict is the cookie
	 * program's).
	 */
	if (wr_cookie_ack_maybe(&ev))
		return WR_VERDICT_ACK;
	count(WEIR_G_PASSED);
	capture(xctx, skb, cfg, WEIR_CV_PASSED, why);
	return WR_VERDICT_PASS;

drop:
	if (cfg->disabled) {
		/* Kill switch: pass, but say what would have been dropped. */
		count(WEIR_G_WOULD_DROP);
		count(WEIR_G_PASSED);
		capture(xctx, skb, cfg, WEIR_CV_PASSED, why | WR_WHY(0, 0, WEIR_CF_WOULD_DROP));
		return WR_VERDICT_PASS;
	}
	count(WEIR_G_DROPPED);
	capture(xctx, skb, cfg, WEIR_CV_DROPPED, why);
	return WR_VERDICT_DROP;
}

#include "cookie.h"

/*
 * The cookie verdicts where no cookie is made: the SYN dropped, the ACK
 * passed, and counted so (TC, and XDP on a kernel without the helpers,
 * where no action cookie rule is accepted).
 */
static __always_inline int cookie_fallback(int v)
{
	if (v == WR_VERDICT_COOKIE) {
		count(WEIR_G_DROPPED);
		return WR_VERDICT_DROP;
	}
	count(WEIR_G_PASSED);
	return WR_VERDICT_PASS;
}

/*
 * Multi-buffer XDP (BPF_F_XDP_HAS_FRAGS, asked for by the loader where the
 * kernel has it: user/lib/kernel_features.h says why the section is plain
 * "xdp"): frames longer than one buffer (jumbo MTUs) come as a linear
 * head plus fragments. The headers sit in the head; length fields are
 * checked against the whole buffer (bpf_xdp_get_buff_len), which is only
 * measured when they reach past the head (see weir_core): the call costs
 * about 20 ns here, on every packet otherwise.
 */
SEC("xdp")
int weir_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	int v = weir_core(data, data_end, data_end - data, 1, ctx, NULL);

	/*
	 * A SYN or ACK bound for the cookie programs, which do not return, is
	 * counted before them as passed, by the global copy of the count; the
	 * other verdicts by the inline one. v is opaque to the compiler here:
	 * left as it was, clang threaded weir_core's constant verdicts into
	 * the count, a copy each, and the verifier walked every copy.
	 */
	asm volatile("" : "+r"(v));
	if (v != WR_VERDICT_COOKIE && v != WR_VERDICT_ACK) {
		if_count_xdp(ctx, v, 1);
		return v == WR_VERDICT_DROP ? XDP_DROP : XDP_PASS;
	}
	wr_if_count_xdp(ctx, v, !has_syncookie);
	/* The cookie programs: no return from here unless the slot is empty. */
	if (has_syncookie)
		bpf_tail_call(ctx, &wr_cookie_progs,
			      v == WR_VERDICT_COOKIE ? WEIR_CK_PROG_SYN : WEIR_CK_PROG_ACK);
	return cookie_fallback(v) == WR_VERDICT_DROP ? XDP_DROP : XDP_PASS;
}

/*
 * weir_xdp as a member of libxdp's dispatcher (user/lib/xdpmulti.c loads it
 * as an extension program in the dispatcher's slot): the same verdicts,
 * without the tail call into the cookie programs. Since Linux 6.13 (and
 * in the 6.12 stable kernels that took the change: Debian's 6.12.117
 * refused it, 6.1.0-56 does not check; docs/KERNELS.md) an extension program
 * that may change packet data (and a tail call counts as one that may)
 * cannot replace a function that does not, and libxdp's dispatcher slots
 * before libxdp 1.5.5 (Debian 12's 1.3, Debian 13's 1.5.4) do not: with
 * the tail call in it, the kernel refused to move the copy into the
 * dispatcher (EINVAL). No cookie is lost by leaving it out: the entry's
 * cookie programs cannot be reached from an extension before 6.5 anyway,
 * so rules with action cookie are refused while weir is in a dispatcher
 * (wr_cookie_guard), and a SYN or ACK such a rule would take has the
 * fallback verdict. Not loaded with the entry ("?xdp"): only the
 * dispatcher's copy loads it.
 */
SEC("?xdp")
int weir_xdpm(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	int v = weir_core(data, data_end, data_end - data, 1, ctx, NULL);

	/* A SYN for a cookie is dropped by the fallback (and counted so), an ACK passed. */
	asm volatile("" : "+r"(v));
	if (v != WR_VERDICT_COOKIE && v != WR_VERDICT_ACK) {
		if_count_xdp(ctx, v, 1);
		return v == WR_VERDICT_DROP ? XDP_DROP : XDP_PASS;
	}
	wr_if_count_xdp(ctx, v, 1);
	return cookie_fallback(v) == WR_VERDICT_DROP ? XDP_DROP : XDP_PASS;
}

SEC("tc")
int weir_tc(struct __sk_buff *skb)
{
	__u32 len = skb->len;
	__u32 want = len < WR_TC_PULL ? len : WR_TC_PULL;
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	int v;

	/* Headers may sit in paged data; pull them into the head only then. */
	if (data + want > data_end) {
		bpf_skb_pull_data(skb, want);
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
	}
	/* GRO and GSO hand TC super-packets: charge each the segments it carries. */
	v = weir_core(data, data_end, len, skb->gso_segs, NULL, skb);
	/* As in weir_xdp: the count inline but for the cookie verdicts. */
	asm volatile("" : "+r"(v));
	if (v != WR_VERDICT_COOKIE && v != WR_VERDICT_ACK) {
		if_count_skb(skb, v);
		return v == WR_VERDICT_DROP ? TC_ACT_SHOT : TC_ACT_OK;
	}
	wr_if_count_skb(skb, v);
	/* No cookies at TC: the controller refuses action cookie rules in tc mode. */
	return cookie_fallback(v) == WR_VERDICT_DROP ? TC_ACT_SHOT : TC_ACT_OK;
}

/*
 * TC egress, on every interface weir attaches to (user/lib/egress.c): the
 * host's outgoing UDP flows, recorded for `preset reflection` while the
 * live rule set has such a rule (reflect.h). Never drops, never changes a
 * packet: TC_ACT_UNSPEC lets the next program or filter on the hook
 * decide. Reads only the linear head: the headers of a packet the host
 * itself builds sit there (a frame whose do not is not recorded, and its
 * reply is then dropped as unsolicited: the preset fails towards what it
 * protects against, never towards the flood).
 */
SEC("tc")
int weir_egress(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;

	reflect_record(data, data_end);
	return TC_ACT_UNSPEC;
}

/*
 * Measures the jiffies clock's offset from CLOCK_MONOTONIC for the loader,
 * which runs it through BPF_PROG_TEST_RUN for a few ticks: the smallest
 * ktime - jiffies x tick seen is the offset at the start of a tick, so
 * jiffies x tick + offset never runs ahead of the precise clock. Never
 * attached.
 */
SEC("xdp")
int weir_clock_sync(struct xdp_md *ctx)
{
	struct weir_config *cfg;
	__u32 zero = 0;
	__u64 tick, off;

	if (CONFIG_HZ <= 0 || CONFIG_HZ > 10000)
		return XDP_PASS;
	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	if (!cfg)
		return XDP_PASS;
	tick = WR_NSEC_PER_SEC / CONFIG_HZ;
	off = bpf_ktime_get_ns() - bpf_jiffies64() * tick;
	if (cfg->clock_tick != tick || (__s64)(off - cfg->clock_off) < 0) {
		cfg->clock_off = off;
		cfg->clock_tick = tick;
	}
	return XDP_PASS;
}

#include "sockops.h"
