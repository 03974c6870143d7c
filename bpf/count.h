/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The global counters (enum weir_global): per CPU, in wr_global, so no
 * atomics are needed.
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_COUNT_H
#define WEIR_BPF_COUNT_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "weir.h"
#include "maps.h"

/*
 * Global counter idx (enum weir_global) of this CPU's struct
 * weir_globals g, looked up by weir_core; NULL: none.
 */
static __always_inline void gcount(struct weir_globals *g, __u32 idx)
{
	if (g && idx < WEIR_G_MAX)
		g->count[idx] += 1;
}

/* Global counter idx, for paths off the per-packet one (a fault, an event, the cookies). */
static __always_inline void count(__u32 idx)
{
	__u32 zero = 0;

	gcount(bpf_map_lookup_elem(&wr_global, &zero), idx);
}

#endif /* WEIR_BPF_COUNT_H */
