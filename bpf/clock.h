/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The data path's clock: precise, on the tick, or set by hand (tests).
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_CLOCK_H
#define WEIR_BPF_CLOCK_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "weir.h"
#include "maps.h"

/*
 * The data path's time. precise: bpf_ktime_get_ns, a helper call (about
 * 35 ns on a host with return-thunk mitigations). The jiffies clock:
 * bpf_jiffies64, which the JIT inlines, times the tick plus the offset
 * the loader measured, so it is CLOCK_MONOTONIC rounded down to a tick and
 * agrees with the precise clock within one tick. GCRA on a tick clock
 * admits exactly the right count while the burst spans at least two ticks;
 * the controller marks rules that need more (WEIR_RF_PRECISE), and under
 * the default clock auto only packets matching those pay for the call.
 */
static __always_inline __u64 clock_now(const struct weir_config *cfg, int precise)
{
	/* clock_mode is frozen .rodata: the verifier prunes the other branches. */
	if (clock_mode == WEIR_CLOCK_MANUAL)
		return manual_now_ns;
	if (clock_mode == WEIR_CLOCK_PRECISE || (clock_mode == WEIR_CLOCK_AUTO && precise))
		return bpf_ktime_get_ns();
	if (cfg->clock_tick)
		return bpf_jiffies64() * cfg->clock_tick + cfg->clock_off;
	return bpf_ktime_get_coarse_ns();
}

/*
 * The tick clock whatever the clock mode (the hand-set one in tests), for
 * what needs no precision: tcp-state's cache of verified flows, good for
 * seconds, costs no helper call under `clock precise` either.
 */
static __always_inline __u64 clock_coarse(const struct weir_config *cfg)
{
	if (clock_mode == WEIR_CLOCK_MANUAL)
		return manual_now_ns;
	if (cfg->clock_tick)
		return bpf_jiffies64() * cfg->clock_tick + cfg->clock_off;
	return bpf_ktime_get_coarse_ns();
}

#endif /* WEIR_BPF_CLOCK_H */
