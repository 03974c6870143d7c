/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `weir capture` in the data path: a copy of a judged packet into the
 * wr_capture_ring ring buffer, at most weir_capture.budget a second
 * across all CPUs, while a capture runs.
 *
 * Off, it costs the entry one read of wr_config.capture at the verdict.
 * On, the two global functions below run once per judged packet: the
 * capture's filters (verdict, rule) first, so that only what was asked
 * for spends the budget, then the budget (one compare-and-swap on a
 * second-and-count word), then the copy. They are called from the entry
 * programs' own frame, never from the rule walk, so the deepest call chain
 * (entry -> eval_rule -> wr_limit_op) does not grow; their frames are small.
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_CAPTURE_H
#define WEIR_BPF_CAPTURE_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "compat.bpf.h"
#include "weir.h"
#include "weir_limiter.h"
#include "maps.h"
#include "clock.h"
#include "eval.h"

/* A record being built, off the stack: the header, then the frame's first bytes. */
struct wr_cap_rec {
	struct weir_capture_hdr h;
	__u8 data[WEIR_CAPTURE_SNAPLEN_MAX];
};

/* Per CPU: a packet runs to its verdict on one CPU, so nothing else touches it meanwhile. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wr_cap_rec);
} wr_capture_buf SEC(".maps");

/*
 * What the core tells the capture about a verdict, as the `why` word it
 * carries: bits 0-7 enum weir_capture_reason, 8-16 the deciding rule's
 * index in the live set plus one (0: no rule; WR_WHY_FIRST: the first rule
 * the packet matched, from wr_scratch), 17-23 enum weir_capture_flags;
 * the capture adds the verdict in bits 24-31. The core only moves
 * constants and the refusing rule's index into it and branches on none of
 * it, so the verifier's states do not split over it: the global functions
 * below decode it.
 */
#define WR_WHY(reason, ri1, flags) ((reason) | (ri1) << 8 | (flags) << 17)
#define WR_WHY_FIRST	0x1ff
_Static_assert(WEIR_MAX_RULES < WR_WHY_FIRST, "WR_WHY holds a rule index plus one");

/*
 * Budget retries: another CPU took the word in between. Losing all of them
 * counts the packet as lost to the budget (the word was busy, not full).
 */
#define WR_CAP_CAS_TRIES	4

/*
 * The rule that ri1 (WR_WHY's) names in the live set: its slot, and its
 * uid in *uid; WEIR_CAPTURE_ANY_RULE and 0 for none.
 */
static __always_inline __u32 cap_rule(const struct weir_config *cfg, __u32 ri1, __u32 *uid)
{
	const struct weir_ruleset *rs;
	struct wr_scratch *sc;
	__u32 zero = 0, idx;

	*uid = 0;
	if (!ri1)
		return WEIR_CAPTURE_ANY_RULE;
	if (ri1 == WR_WHY_FIRST) {
		/* wr_match_rules' result for this packet, still in this CPU's scratch. */
		sc = bpf_map_lookup_elem(&wr_scratch, &zero);
		if (!sc)
			return WEIR_CAPTURE_ANY_RULE;
		ri1 = (sc->m.enforce ? sc->m.first_enforce : sc->m.first_dry) + 1;
	}
	idx = cfg->active & 1;
	rs = bpf_map_lookup_elem(&wr_rulesets, &idx);
	if (!rs)
		return WEIR_CAPTURE_ANY_RULE;
	*uid = rs->rules[(ri1 - 1) & (WEIR_MAX_RULES - 1)].uid;
	return rs->rules[(ri1 - 1) & (WEIR_MAX_RULES - 1)].slot;
}

/*
 * The capture's filters and budget for one packet: the record to fill
 * (its header written but for ifindex, len and caplen, which the entry
 * knows), or NULL to copy nothing. what: WR_WHY and the verdict in bits
 * 24-31.
 */
static __always_inline struct wr_cap_rec *cap_admit(__u32 what)
{
	struct weir_capture_stats *cs;
	struct weir_capture *c;
	struct weir_config *cfg;
	struct wr_cap_rec *rec;
	__u64 now, sec, word, next;
	__u32 zero = 0, slot, uid, budget, one_in, verdict = (what >> 24) & 0xf;
	int i, got = 0;

	c = bpf_map_lookup_elem(&wr_capture, &zero);
	if (!c)
		return NULL;
	/*
	 * One in one_in (a power of two: a mask, no division) at random,
	 * first (weir auto's sampling): a sample
	 * spread over the second, and a packet not drawn pays nothing more,
	 * no clock, no filter, no budget word. A dead reader's lease is then
	 * seen at the next packet drawn.
	 */
	one_in = READ_ONCE(c->one_in);
	if (one_in > 1 && bpf_get_prandom_u32() & (one_in - 1))
		return NULL;
	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	cs = bpf_map_lookup_elem(&wr_capture_stats, &zero);
	if (!cfg || !cs)
		return NULL;
	now = clock_now(cfg, 0);
	if (now > READ_ONCE(c->lease_ns)) {
		/*
		 * The capture stopped renewing its lease without clearing
		 * its flag (killed by SIGKILL): clear it, so that packets
		 * stop paying for this. A racing new capture renews and
		 * sets it again within a second (lib/capture.c).
		 */
		WRITE_ONCE(cfg->capture, 0);
		return NULL;
	}
	if (!(READ_ONCE(c->verdicts) & (1U << verdict)))
		return NULL;
	slot = cap_rule(cfg, (what >> 8) & WR_WHY_FIRST, &uid);
	if (c->rule_slot != WEIR_CAPTURE_ANY_RULE && c->rule_slot != slot)
		return NULL;
	/* One word for the second and its count: a new second starts at one. */
	sec = now / WR_NSEC_PER_SEC;
	budget = READ_ONCE(c->budget);
	for (i = 0; i < WR_CAP_CAS_TRIES; i++) {
		word = READ_ONCE(c->window);
		if (word >> 32 != sec)
			next = sec << 32 | 1;
		else if ((__u32)word >= budget)
			break;
		else
			next = word + 1;
		if (__sync_val_compare_and_swap(&c->window, word, next) == word) {
			got = 1;
			break;
		}
	}
	if (!got) {
		cs->lost_budget++;
		return NULL;
	}
	rec = bpf_map_lookup_elem(&wr_capture_buf, &zero);
	if (!rec)
		return NULL;
	/* The precise clock for the timestamp: only copied packets pay for it. */
	rec->h.ts = bpf_ktime_get_ns();
	rec->h.rule_uid = uid;
	rec->h.rule_slot = slot;
	rec->h.verdict = verdict;
	rec->h.reason = what & 0xff;
	rec->h.flags = (what >> 17) & 0x7f;
	/* The snaplen rides in caplen until the entry knows the frame's length. */
	rec->h.caplen = READ_ONCE(c->snaplen);
	return rec;
}

/*
 * How much of a frame of len the record takes: 1 .. the snaplen, or 0 for
 * nothing to copy. The load helpers want a size the verifier knows is at
 * least 1; 6.1's learns no lower bound from a test for 0, so the size is
 * handed over as ((n - 1) & (max - 1)) + 1, which is n for every n in
 * 1..max and which any verifier bounds to 1..max.
 */
static __always_inline __u64 cap_len(const struct wr_cap_rec *rec, __u32 len)
{
	__u32 caplen = rec->h.caplen;
	__u64 n;

	if (len < caplen)
		caplen = len;
	if (caplen < 1 || caplen > WEIR_CAPTURE_SNAPLEN_MAX)
		return 0;
	n = caplen - 1;
	/* In asm, so that clang, which knows the mask changes nothing, keeps it. */
	asm volatile("%[n] &= %[m]" : [n] "+r"(n) : [m] "i"(WEIR_CAPTURE_SNAPLEN_MAX - 1));
	return n + 1;
}

/* The filled record into the ring; counted either way. */
static __always_inline void cap_emit(struct wr_cap_rec *rec, __u64 caplen)
{
	struct weir_capture_stats *cs;
	__u32 zero = 0;

	cs = bpf_map_lookup_elem(&wr_capture_stats, &zero);
	if (!cs)
		return;
	rec->h.caplen = caplen;
	if (bpf_ringbuf_output(&wr_capture_ring, rec, sizeof(rec->h) + caplen, 0))
		cs->lost_ring++;
	else
		cs->captured++;
}

/*
 * The XDP entry's copy: the frame through bpf_xdp_load_bytes, which reads
 * across the fragments of a multi-buffer frame. That helper came with
 * multi-buffer XDP (Linux 5.18): without it (has_frags 0) the verifier
 * sees none of this, and the controller refuses to capture at XDP.
 * Global: verified once, on its own small frame.
 */
__noinline int wr_capture_xdp(struct xdp_md *ctx, __u32 what)
{
	struct wr_cap_rec *rec;
	__u64 caplen;
	__u32 len;

	if (!has_frags || !ctx)
		return 0;
	rec = cap_admit(what);
	if (!rec)
		return 0;
	len = bpf_xdp_get_buff_len(ctx);
	caplen = cap_len(rec, len);
	if (!caplen)
		return 0;
	rec->h.ifindex = ctx->ingress_ifindex;
	rec->h.len = len;
	if (bpf_xdp_load_bytes(ctx, 0, rec->data, caplen))
		return 0;
	cap_emit(rec, caplen);
	return 0;
}

/* The TC entry's copy, through bpf_skb_load_bytes (paged data included). */
__noinline int wr_capture_skb(struct __sk_buff *skb, __u32 what)
{
	struct wr_cap_rec *rec;
	__u64 caplen;
	__u32 len;

	if (!skb)
		return 0;
	rec = cap_admit(what);
	if (!rec)
		return 0;
	len = skb->len;
	caplen = cap_len(rec, len);
	if (!caplen)
		return 0;
	rec->h.ifindex = skb->ifindex;
	rec->h.len = len;
	if (bpf_skb_load_bytes(skb, 0, rec->data, caplen))
		return 0;
	cap_emit(rec, caplen);
	return 0;
}

/*
 * A packet's verdict is final (verdict: enum weir_capture_verdict; why:
 * WR_WHY): a copy for the capture if one runs. One read of a word when
 * none does. The entry passes its own context: xctx at XDP, skb at TC.
 */
static __always_inline void capture(struct xdp_md *xctx, struct __sk_buff *skb,
				    const struct weir_config *cfg, __u32 verdict, __u32 why)
{
	if (!cfg->capture)
		return;
	if (xctx)
		wr_capture_xdp(xctx, why | verdict << 24);
	else if (skb)
		wr_capture_skb(skb, why | verdict << 24);
}

#endif /* WEIR_BPF_CAPTURE_H */
