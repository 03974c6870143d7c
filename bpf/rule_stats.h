/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-rule counters of a verdict (wr_rule_stats, per CPU: no atomics).
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_RULE_STATS_H
#define WEIR_BPF_RULE_STATS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "compat.bpf.h"
#include "verdict.h"
#include "weir.h"
#include "weir_limiter.h"
#include "maps.h"

static __always_inline void rule_count(const struct weir_ruleset *rs, __s32 i, __u32 len,
				       int what)
{
	struct weir_rule_stats *s;
	__u64 idx = (__u32)i;
	__u32 slot;

	if (i < 0 || i >= WEIR_MAX_RULES)
		return;
	/*
	 * Bound the index where the verifier sees it: 6.1's loses the checks
	 * above when clang reloads i from a spill (see eval_rule_at).
	 */
	asm volatile("%[idx] &= %[mask]" : [idx] "+r"(idx) : [mask] "i"(WEIR_MAX_RULES - 1));
	slot = rs->rules[idx].slot;
	s = bpf_map_lookup_elem(&wr_rule_stats, &slot);
	if (!s)
		return;
	switch (what) {
	case WR_VERDICT_PASS:
		s->passed_pkts++;
		s->passed_bytes += len;
		break;
	case WR_VERDICT_DROP:
		s->dropped_pkts++;
		s->dropped_bytes += len;
		break;
	default:
		/* would-drop: passed, and counted as such */
		s->wdrop_pkts++;
		s->wdrop_bytes += len;
		s->passed_pkts++;
		s->passed_bytes += len;
		break;
	}
}

/*
 * Every matching rule that let the packet through counts it as passed.
 * Global, so verified once: the caller's masks are exact constants per path.
 */
__noinline int wr_count_passed(const struct weir_ruleset *rs, __u64 matched, __u32 len,
			       __u32 cell)
{
	__u32 i;

	if (!rs)
		return 0;
	for (i = 0; i < WEIR_MAX_CAND; i++) {
		if (!matched)
			break;
		if (matched & 1)
			rule_count(rs, wr_cand_rule(rs, cell, i), len, WR_VERDICT_PASS);
		matched >>= 1;
	}
	return 0;
}

/*
 * mask (positions in cell's list) without rule ri's position: a dry-run
 * rule that refused is not counted as passed too. Global, and run only
 * when a dry-run rule refuses: the walks need not note where a refusal
 * came from (a byte written on every refusal took 6.1's verifier 38k
 * instructions further).
 */
__noinline __u64 wr_mask_without(const struct weir_ruleset *rs, __u64 mask, __u32 cell,
				 __s32 ri)
{
	__u32 k;

	if (!rs)
		return mask;
	for (k = 0; k < WEIR_MAX_CAND; k++)
		if ((mask & (1ULL << k)) && (__s32)wr_cand_rule(rs, cell, k) == ri)
			return mask & ~(1ULL << k);
	return mask;
}

#endif /* WEIR_BPF_RULE_STATS_H */
