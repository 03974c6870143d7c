// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The reflection preset in the controller: what `preset reflection` makes
 * of a rule, how the rule and `status` show it (the amplifier ports
 * expanded, include/weir_reflect.h), and the count of the host's own UDP
 * flows the egress program (egress.c) has recorded. docs/reflection.md.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include "lib/libweir.h"
#include "weir_reflect.h"

/* The amplifier table, for display: made from the one list the data path's switch is. */
#define WR_AMP_ENTRY(p, n) { p, n },
const struct wr_amp wr_amps[] = { WR_AMP_PORTS(WR_AMP_ENTRY) };
#undef WR_AMP_ENTRY
const int wr_nr_amps = ARRAY_SIZE(wr_amps);

int wr_preset_by_name(const char *name)
{
	return !strcmp(name, "reflection") ? WEIR_PRESET_REFLECT : -EINVAL;
}

/*
 * A rule with a preset, once all its words are read: the preset's protocol
 * (UDP; another one named is refused by name), and, without a limit of
 * its own, the default one: every unsolicited reply dropped (a rule-wide
 * fixed window that admits 0 a second, which `rule list` prints as no
 * limit: WEIR_RF_PRESET_DEFAULT). 0, or -EINVAL with pe saying why.
 */
int wr_preset_finish(struct weir_rule *r, struct wr_perr *pe)
{
	struct weir_limit *l = &r->limits[0];

	if (r->preset != WEIR_PRESET_REFLECT)
		return 0;
	if ((r->match & WEIR_M_PROTO) && r->proto != 17) {
		pe->word = -1;
		snprintf(pe->msg, sizeof(pe->msg), "preset reflection matches UDP (replies from "
			 "amplifier source ports); it cannot take another proto");
		return -EINVAL;
	}
	r->proto = 17;
	r->match |= WEIR_M_PROTO;
	if (r->nr_limits)
		return 0;
	memset(l, 0, sizeof(*l));
	l->key = WEIR_KEY_ALL;
	l->algo = WEIR_ALGO_FIXED;
	l->cost = WEIR_COST_PKT;
	l->rate = 0;		/* none a window: every packet refused */
	l->period_ms = 1000;
	r->nr_limits = 1;
	r->flags |= WEIR_RF_PRESET_DEFAULT;
	return 0;
}

/* The preset keyword in a rule: its word, and in JSON the ports it stands for. */
void wr_print_preset(const struct weir_rule *r)
{
	int i;

	if (r->preset != WEIR_PRESET_REFLECT)
		return;
	print_str("preset", " preset %s", "reflection");
	open_array("amplifier_ports");
	for (i = 0; i < wr_nr_amps; i++) {
		open_object(NULL);
		print_u64("port", NULL, wr_amps[i].port);
		print_str("service", NULL, wr_amps[i].name);
		close_object();
	}
	close_array();
	print_str("unsolicited", NULL, r->flags & WEIR_RF_PRESET_DEFAULT ? "drop" : "limited");
}

/* The text that follows a preset rule's line: what the preset expands to. */
void wr_print_preset_expanded(const struct weir_rule *r)
{
	int i;

	if (r->preset != WEIR_PRESET_REFLECT)
		return;
	print_text("  # preset reflection: UDP from source port");
	for (i = 0; i < wr_nr_amps; i++)
		print_text("%s %u (%s)", i ? "," : "", wr_amps[i].port, wr_amps[i].name);
	print_text("\n  # that answers no UDP flow this host sent in the last %llu s: %s\n",
		   WR_REFLECT_TTL_NS / 1000000000ULL,
		   r->flags & WEIR_RF_PRESET_DEFAULT ? "dropped" : "limited as the rule says");
}

/* Rules of rs with preset reflection: the egress program records flows while there are any. */
__u32 wr_reflect_rules(const struct weir_ruleset *rs)
{
	__u32 i, n = 0;

	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++)
		n += rs->rules[i].preset == WEIR_PRESET_REFLECT;
	return n;
}

/* What `status` says of the preset: its rules, its ports, the flows recorded. */
void wr_reflect_status(const struct wr_maps *m, const struct weir_ruleset *rs)
{
	struct weir_flow_key k, next;
	__u64 flows = 0;
	void *prev = NULL;
	int i;

	open_object("reflection");
	print_u64("rules", "reflection preset: %llu rules", rs->reflect_rules);
	/* A walk of the LRU: a few thousand keys at most on a host's own flows. */
	while (m->reflect >= 0 && !bpf_map_get_next_key(m->reflect, prev, &next) &&
	       flows < WEIR_REFLECT_FLOWS) {
		flows++;
		k = next;
		prev = &k;
	}
	print_u64("flows", ", %llu outgoing UDP flows recorded", flows);
	print_u64("ttl_s", " (kept %llu s after their last packet)\n",
		  WR_REFLECT_TTL_NS / 1000000000ULL);
	if (rs->reflect_rules) {
		print_text("  amplifier source ports:");
		open_array("amplifier_ports");
		for (i = 0; i < wr_nr_amps; i++) {
			open_object(NULL);
			print_u64("port", " %llu", wr_amps[i].port);
			print_str("service", " (%s)", wr_amps[i].name);
			close_object();
		}
		close_array();
		print_text("\n");
	}
	close_object();
}
