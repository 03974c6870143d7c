/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wr_state, the per-source buckets: an array of sets of WEIR_WAYS ways,
 * the set picked by a seeded hash of the key, ways claimed and published
 * with compare-and-swap.
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_STATE_H
#define WEIR_BPF_STATE_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "weir_state.h"
#include "weir_limiter.h"
#include "maps.h"
#include "eval.h"

/* ---- wr_state: per-source buckets in a set-associative table ---- */

/* The set key k lives in; NULL when wr_state has no such set (an internal fault). */
static __always_inline struct weir_set *state_set(const struct wr_eval *ev,
						    const struct weir_key *k)
{
	__u32 idx;

	if (!ev->sets)
		return NULL;
	idx = wr_state_set(wr_key_hash(k, ev->seed), ev->sets);
	return bpf_map_lookup_elem(&wr_state, &idx);
}

#endif /* WEIR_BPF_STATE_H */
