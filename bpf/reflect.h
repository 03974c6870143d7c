/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The reflection preset's state: the host's own outgoing UDP flows
 * (wr_reflect), recorded by the TC egress program weir_egress, and the
 * question rule matching asks of a packet a `preset reflection` rule
 * otherwise matches: is it unsolicited? (docs/reflection.md)
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_REFLECT_H
#define WEIR_BPF_REFLECT_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "weir.h"
#include "weir_parse.h"
#include "weir_reflect.h"
#include "maps.h"
#include "clock.h"
#include "eval.h"

/*
 * Outgoing UDP flows of this host: key as the reply will carry it, value
 * the time of the flow's last outgoing packet (the data path's clock,
 * clock_now). Written only by weir_egress, so spoofed packets cannot fill
 * it; an LRU, so a host with more concurrent flows than this loses its
 * oldest (their late replies are then dropped as unsolicited).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, WEIR_REFLECT_FLOWS);
	__type(key, struct weir_flow_key);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_reflect SEC(".maps");

/*
 * Is p, which a `preset reflection` rule matches in every other field,
 * unsolicited: UDP from a known amplifier's source port that answers no
 * flow this host sent within WR_REFLECT_TTL_NS? 1 if so (the rule
 * matches), else 0. Only packets otherwise matched by such a rule get
 * here. Global, so the verifier checks the port switch and the lookup once,
 * not once per candidate and path, and the caller sees an unknown value.
 * The key is built in the per-CPU scratch, not on the stack: this is a
 * fourth frame under the entry (entry -> wr_match_rules -> wr_match_one
 * -> here), and kernels before 6.2 limit the chain to 512 bytes; a map
 * value is a valid map key on every kernel weir supports.
 */
__noinline int wr_reflect_unsolicited(const struct wr_pkt *p)
{
	struct weir_config *cfg;
	struct wr_scratch *sc;
	__u32 zero = 0;
	__u64 *seen;

	if (!p || p->proto != WR_IPPROTO_UDP || !(p->flags & WR_PKT_PORTS) ||
	    !wr_amp_port(p->sport))
		return 0;
	sc = bpf_map_lookup_elem(&wr_scratch, &zero);
	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	/* Cannot fail (one entry each); were they missing, the rule matches. */
	if (!sc || !cfg)
		return 1;
	wr_flow_of_reply(p, &sc->fk);
	seen = bpf_map_lookup_elem(&wr_reflect, &sc->fk);
	/* Signed: another CPU's egress may have stamped it a tick after our clock. */
	return !seen || (__s64)(clock_now(cfg, 0) - *seen) > (__s64)WR_REFLECT_TTL_NS;
}

/*
 * Record the outgoing frame data..end, if it is UDP, as a flow whose
 * replies the preset passes: only while the live rule set has a
 * `preset reflection` rule (else one array lookup and out). Stamps an
 * existing flow in place; a new one is inserted.
 */
static __always_inline void reflect_record(const void *data, const void *data_end)
{
	struct weir_flow_key k = {};
	struct weir_ruleset *rs;
	struct weir_config *cfg;
	__u32 zero = 0, idx;
	__u64 now, *seen;

	cfg = bpf_map_lookup_elem(&wr_config, &zero);
	if (!cfg)
		return;
	idx = cfg->active & 1;
	rs = bpf_map_lookup_elem(&wr_rulesets, &idx);
	if (!rs || !rs->reflect_rules)
		return;
	if (!wr_flow_of_egress(data, data_end, &k))
		return;
	now = clock_now(cfg, 0);
	seen = bpf_map_lookup_elem(&wr_reflect, &k);
	if (seen) {
		/* Racing stamps from two CPUs both hold a current time: either will do. */
		if (*seen != now)
			*seen = now;
		return;
	}
	bpf_map_update_elem(&wr_reflect, &k, &now, BPF_ANY);
}

#endif /* WEIR_BPF_REFLECT_H */
