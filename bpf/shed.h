/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reserved capacity and the per-class counters of adaptive shedding (the
 * curve itself is include/weir_shed.h, run by the controller).
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_SHED_H
#define WEIR_BPF_SHED_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "compat.bpf.h"
#include "weir.h"
#include "weir_parse.h"
#include "weir_limiter.h"
#include "maps.h"
#include "count.h"
#include "verified.h"

/*
 * Reserved capacity for a packet of class cls: with charge 0, would every
 * bucket admit it; with charge 1, move every TAT (the packet passed). The
 * check and the charge straddle the rule limits, so a packet they drop
 * uses no capacity; a CPU that loses a race between the two over-admits
 * by that one packet. Global: verified once.
 */
__noinline int wr_capacity_op(const struct weir_shed *sh, __u32 cls, __u32 len, __u64 now,
			      __u32 charge)
{
	__u32 k, b;

	if (!sh)
		return 1;
	/*
	 * Clang 19 (Debian 13) keeps these loops rolled, in a form the verifier
	 * takes for an infinite loop; clang 14 (Debian 12) unrolls them by
	 * itself, and its object, measured on each kernel, is left as it is.
	 */
#if __clang_major__ > 14
#pragma unroll
#endif
	for (k = 0; k < 2; k++) {
#if __clang_major__ > 14
#pragma unroll
#endif
		for (b = 0; b < 2; b++) {
			const struct weir_limit *l = b ? &sh->cap[k].noncrit : &sh->cap[k].total;
			struct weir_state *st;
			__u64 inc, tat, next;
			__u32 idx = 2 * k + b;
			int i;

			if (!l->interval_fp || (b && !cls))
				continue;
			st = bpf_map_lookup_elem(&wr_capacity, &idx);
			if (!st)
				continue;
			inc = wr_gcra_inc(l->interval_fp, k == WEIR_COST_BYTE ? len : 1);
			if (!charge) {
				if (!wr_gcra_admit(READ_ONCE(st->tat), now, inc, l->tolerance, &next))
					return 0;
				continue;
			}
			for (i = 0; i < WR_CAS_TRIES; i++) {
				tat = READ_ONCE(st->tat);
				next = (tat > now ? tat : now) + inc;
				if (__sync_val_compare_and_swap(&st->tat, tat, next) == tat)
					break;
			}
		}
	}
	return 1;
}

static __always_inline void class_count(__u32 cls, __u32 len, int what)
{
	struct weir_class_stats *cs = bpf_map_lookup_elem(&wr_class_stats, &cls);

	if (!cs)
		return;
	if (what == 0) {
		cs->pkts++;
		cs->bytes += len;
	} else if (what == 1) {
		cs->shed_pkts++;
		cs->shed_bytes += len;
	} else {
		cs->cap_pkts++;
		cs->cap_bytes += len;
	}
}

/*
 * The class a packet of class cls is shed as, for rules whose most
 * critical verified-class is vclass - 1: that class if its source completed
 * a handshake within the verified TTL, else cls. Global: its answer is an
 * unknown value to the caller, which splits no paths.
 */
__noinline int wr_verified_class(const struct wr_pkt *p, __u32 vclass, __u32 cls, __u64 now)
{
	struct weir_config *cfg;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	if (!p || !cfg || !vclass || vclass - 1 >= cls || !verified_at(cfg, p, now))
		return cls;
	count(WEIR_G_VERIFIED);
	return vclass - 1;
}

#endif /* WEIR_BPF_SHED_H */
