/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Verified sources: addresses that completed a TCP handshake with this
 * host (wr_verified, kept by the sock_ops program while a rule needs them).
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_VERIFIED_H
#define WEIR_BPF_VERIFIED_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "compat.bpf.h"
#include "weir.h"
#include "weir_parse.h"
#include "weir_limiter.h"
#include "maps.h"
#include "count.h"
#include "clock.h"

/*
 * Did p's source complete a handshake within cfg's verified TTL, as of now?
 * A stamp ahead of now (the precise clock's, read against the tick clock,
 * up to a tick apart) is fresh.
 */
static __always_inline int verified_at(const struct weir_config *cfg, const struct wr_pkt *p,
				       __u64 now)
{
	struct weir_verified_key k = {};
	__u32 slot;
	__u64 *at;

	if (!cfg->verified_ttl_ns)
		return 0;
	/* No source of the slot verified within the TTL: not this one either. */
	slot = wr_verified_slot_of(p->saddr, p->family);
	at = bpf_map_lookup_elem(&wr_verified_hint, &slot);
	if (!at || (__s64)(now - READ_ONCE(*at)) > (__s64)cfg->verified_ttl_ns)
		return 0;
	k.family = p->family;
	k.addr[0] = p->saddr[0];
	if (p->family == 6) {
		k.addr[1] = p->saddr[1];
		k.addr[2] = p->saddr[2];
		k.addr[3] = p->saddr[3];
	}
	at = bpf_map_lookup_elem(&wr_verified, &k);
	return at && (__s64)(now - READ_ONCE(*at)) <= (__s64)cfg->verified_ttl_ns;
}

/*
 * May p's source be verified: was any source of its hint slot verified
 * within the TTL? The inlined first half of wr_source_verified, which a
 * spoofed flood's every packet meets: 0 proves it unverified without a
 * call; 1 sends the question on.
 */
static __always_inline int wr_source_maybe_verified(const struct wr_pkt *p)
{
	struct weir_config *cfg;
	__u32 zero = 0, slot;
	__u64 *at;

	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	if (!cfg || !cfg->verified_ttl_ns)
		return 0;
	slot = wr_verified_slot_of(p->saddr, p->family);
	at = bpf_map_lookup_elem(&wr_verified_hint, &slot);
	return at && (__s64)(clock_coarse(cfg) - READ_ONCE(*at)) <= (__s64)cfg->verified_ttl_ns;
}

/*
 * Is p's source verified now? For rules with WEIR_RF_SPARE_VERIFIED, which
 * a verified source does not match: asked only for packets such a rule
 * matches otherwise, so a rule without the flag costs one bit test. On the
 * tick clock, whatever the clock mode: a TTL of minutes needs no helper
 * call.
 * Global: the verifier checks it once, and match_one sees its answer as
 * one unknown value.
 */
__noinline int wr_source_verified(const struct wr_pkt *p)
{
	struct weir_config *cfg;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	if (!p || !cfg || !verified_at(cfg, p, clock_coarse(cfg)))
		return 0;
	count(WEIR_G_VERIFIED_UNMATCHED);
	return 1;
}

#endif /* WEIR_BPF_VERIFIED_H */
