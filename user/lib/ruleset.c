// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rule sets: a new set checked against the rule index, then committed.
 *
 * A commit writes the complete new set into the inactive wr_rulesets entry,
 * flips wr_config.active, then waits for an RCU grace period, so that no
 * packet is judged by a mix of two sets and the entry is free for the next
 * commit. Rules keep their bucket state (uid, rule-wide buckets) while their
 * name and limits stay the same, and their counters while their name does.
 * The grammar that makes rules is rules.c.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"
#include "weir_limiter.h"

static bool limits_equal(const struct weir_rule *a, const struct weir_rule *b)
{
	int i;

	if (a->nr_limits != b->nr_limits)
		return false;
	for (i = 0; i < a->nr_limits; i++) {
		const struct weir_limit *x = &a->limits[i], *y = &b->limits[i];

		if (x->rate != y->rate || x->burst != y->burst || x->key != y->key ||
		    x->cost != y->cost || x->plen4 != y->plen4 || x->plen6 != y->plen6 ||
		    x->algo != y->algo || x->period_ms != y->period_ms ||
		    !x->fleet != !y->fleet)
			return false;
	}
	return true;
}

/*
 * The step of the data path's jiffies clock: the resolution of
 * CLOCK_MONOTONIC_COARSE, which ticks with jiffies. 4 ms (HZ=250) if it
 * cannot be read.
 */
static __u64 coarse_tick_ns(void)
{
	struct timespec ts;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts) || (!ts.tv_sec && !ts.tv_nsec))
		return 4000000;
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Derive each rule's flags from its limits: WEIR_RF_PRECISE when one of
 * them is too short for the jiffies clock, so `clock auto` reads the
 * precise clock for just those packets. The limits decide it alone, so a
 * rule whose limits are unchanged keeps its flags too.
 */
static void rules_set_flags(struct weir_ruleset *rs)
{
	__u64 tick = coarse_tick_ns();
	__u32 i, j;

	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++) {
		struct weir_rule *r = &rs->rules[i];

		r->flags &= ~WEIR_RF_PRECISE;
		for (j = 0; j < r->nr_limits && j < WEIR_MAX_LIMITS; j++)
			if (wr_limit_needs_precise(&r->limits[j], tick))
				r->flags |= WEIR_RF_PRECISE;
	}
}

/*
 * The ifindex of each `iface` rule, from its name now: an interface deleted
 * and recreated under the same name has a new one. 0 if it is gone (no
 * packet arrives on ifindex 0: the rule matches nothing until it is back
 * and the set is written again).
 */
static void rules_resolve_ifaces(struct weir_ruleset *rs)
{
	char name[WEIR_IFNAME_LEN + 1];
	__u32 i;

	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++) {
		struct weir_rule *r = &rs->rules[i];

		if (!(r->xmatch & WEIR_X_IFACE))
			continue;
		snprintf(name, sizeof(name), "%.*s", WEIR_IFNAME_LEN, r->ifname);
		r->ifindex = if_nametoindex(name);
		if (!r->ifindex)
			pr_warn("rule %.*s: iface %s is gone: the rule matches nothing until it "
				"is back", WEIR_NAME_LEN, rs->names[i], name);
	}
}

int wr_rule_find(const struct weir_ruleset *rs, const char *name)
{
	__u32 i;

	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++)
		if (!strncmp(rs->names[i], name, WEIR_NAME_LEN))
			return i;
	return -1;
}

static int zero_percpu(int fd, __u32 key, size_t size)
{
	int ncpu = libbpf_num_possible_cpus();
	void *z;
	int err = 0;

	if (ncpu <= 0)
		return -EINVAL;
	z = calloc(ncpu, (size + 7) & ~7UL);
	if (!z)
		return -ENOMEM;
	if (bpf_map_update_elem(fd, &key, z, BPF_ANY))
		err = -errno;
	free(z);
	return err;
}

/*
 * Build rs's rule index (wr_ruleset_index). 0, or -E2BIG with why (len
 * bytes) saying which protocol and port more than WEIR_MAX_CAND rules
 * may all meet.
 */
int wr_ruleset_index_why(struct weir_ruleset *rs, char *why, size_t len)
{
	static const char *const classes[WEIR_IDX_PROTOS] = {
		"TCP", "UDP", "ICMP (or other protocol)",
	};
	struct wr_idx_full full = {};
	__u32 port, i, named = 65536;

	if (!wr_ruleset_index(rs, &full))
		return 0;
	if (full.bucket == WEIR_IDX_NOPORT) {
		snprintf(why, len, "%u rules may match one %s packet without ports, and the data "
			 "path judges a packet by at most %d (rules that name no port count for "
			 "every packet)", full.n, classes[full.pc % WEIR_IDX_PROTOS],
			 WEIR_MAX_CAND);
		return -E2BIG;
	}
	/* A port of the cell that a rule of it names, if one does. */
	for (port = 0; port < 65536; port++) {
		if (wr_port_bucket(port) != full.bucket)
			continue;
		for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES && named == 65536; i++)
			if ((rs->rules[i].match & WEIR_M_DPORT) && rs->rules[i].dport_lo <= port &&
			    port <= rs->rules[i].dport_hi &&
			    rs->rules[i].dport_hi - rs->rules[i].dport_lo < WR_IDX_WIDE_RANGE)
				named = port;
		if (named != 65536)
			break;
	}
	if (named == 65536) {
		snprintf(why, len, "%u rules may match every %s packet, and the data path judges "
			 "a packet by at most %d (rules that name no port, or a range of %d ports "
			 "or more, count for every port)", full.n,
			 classes[full.pc % WEIR_IDX_PROTOS], WEIR_MAX_CAND, WR_IDX_WIDE_RANGE);
		return -E2BIG;
	}
	snprintf(why, len, "%u rules may match one %s packet to port %u, and the data path "
		 "judges a packet by at most %d (rules that name no port, or a range of %d ports "
		 "or more, count for every port; ports share %d cells of the rule index, so "
		 "others may add to it)", full.n, classes[full.pc % WEIR_IDX_PROTOS], named,
		 WEIR_MAX_CAND, WR_IDX_WIDE_RANGE, WEIR_PORT_BUCKETS);
	return -E2BIG;
}

/*
 * The first interface weir is attached to in tc mode (WR_CK_TC) or in
 * libxdp's dispatcher (WR_CK_DISPATCHER), into name; WR_CK_XDP if none.
 */
static int tc_attachment(char *name, size_t len)
{
	int links[256], n, i, mode;
	struct wr_xdpm_info xi;

	n = wr_list_links(links, ARRAY_SIZE(links));
	for (i = 0; i < n; i++) {
		if (wr_link_describe(links[i], name, len, &mode))
			continue;
		if (mode == WR_MODE_TC)
			return WR_CK_TC;
		if (!wr_link_xdpm(links[i], &xi))
			return WR_CK_DISPATCHER;
	}
	return WR_CK_XDP;
}

/*
 * Replace the live rule set with next (names and rules filled in; uid, slot
 * and agg_slot are assigned here). Caller holds the root lock.
 */
int wr_ruleset_commit(const struct wr_maps *m, struct weir_ruleset *next)
{
	bool slot_used[WEIR_STATS_SLOTS] = {}, agg_used[WEIR_AGG_SLOTS] = {};
	struct weir_ruleset *live;
	struct weir_config cfg;
	struct weir_state empty = {};
	__u32 i, j, idx;
	int err;

	live = calloc(1, sizeof(*live));
	if (!live)
		return -ENOMEM;
	err = wr_config_read(m, &cfg);
	if (!err)
		err = wr_read_live(m, live);
	if (err)
		goto out;
	if (next->nr_rules > WEIR_MAX_RULES) {
		err = -E2BIG;
		goto out;
	}
	{
		char why[320];

		/*
		 * The rule index goes in with the rules (the flip below makes
		 * both live at once; nothing after this changes what a rule
		 * matches), built before anything is written: a set the index
		 * cannot hold changes nothing.
		 */
		err = wr_ruleset_index_why(next, why, sizeof(why));
		if (err) {
			pr_err("%s", why);
			goto out;
		}
	}
	/* Slots the live set uses stay untouched until it is gone. */
	for (i = 0; i < live->nr_rules && i < WEIR_MAX_RULES; i++) {
		struct weir_rule *r = &live->rules[i];

		slot_used[r->slot % WEIR_STATS_SLOTS] = true;
		for (j = 0; j < r->nr_limits && j < WEIR_MAX_LIMITS; j++)
			if (r->limits[j].key == WEIR_KEY_ALL)
				agg_used[r->limits[j].agg_slot % WEIR_AGG_SLOTS] = true;
	}
	/* First pass: what carries over from the live rule of the same name. */
	for (i = 0; i < next->nr_rules; i++) {
		struct weir_rule *r = &next->rules[i];
		int old = wr_rule_find(live, next->names[i]);

		r->slot = UINT16_MAX;
		r->uid = 0;
		if (old < 0)
			continue;
		r->slot = live->rules[old].slot;	/* counters follow the name */
		if (limits_equal(r, &live->rules[old])) {
			r->uid = live->rules[old].uid;	/* so do buckets, while limits stay */
			for (j = 0; j < r->nr_limits; j++)
				r->limits[j].agg_slot = live->rules[old].limits[j].agg_slot;
		}
	}
	/* Second pass: fresh identities, on slots the live set does not use. */
	for (i = 0; i < next->nr_rules; i++) {
		struct weir_rule *r = &next->rules[i];

		if (r->slot == UINT16_MAX) {
			for (idx = 0; idx < WEIR_STATS_SLOTS && slot_used[idx]; idx++)
				;
			if (idx == WEIR_STATS_SLOTS) {
				err = -ENOSPC;
				goto out;
			}
			slot_used[idx] = true;
			r->slot = idx;
			err = zero_percpu(m->rule_stats, idx, sizeof(struct weir_rule_stats));
			if (err)
				goto out;
		}
		if (r->uid)
			continue;
		r->uid = cfg.next_uid ? cfg.next_uid : 1;
		cfg.next_uid = r->uid + 1;
		for (j = 0; j < r->nr_limits; j++) {
			if (r->limits[j].key != WEIR_KEY_ALL)
				continue;
			for (idx = 0; idx < WEIR_AGG_SLOTS && agg_used[idx]; idx++)
				;
			if (idx == WEIR_AGG_SLOTS) {
				err = -ENOSPC;
				goto out;
			}
			agg_used[idx] = true;
			r->limits[j].agg_slot = idx;
			if (bpf_map_update_elem(m->agg, &idx, &empty, BPF_ANY)) {
				err = -errno;
				goto out;
			}
			/* Refusals an earlier rule's bucket left waiting per CPU go with it. */
			err = zero_percpu(m->agg_drops, idx, sizeof(__u64));
			if (err)
				goto out;
		}
	}
	{
		/* Where weir is attached matters only to cookie rules: looked up for them. */
		char dev[64] = "";
		int hook = wr_cookie_rules(next) ? tc_attachment(dev, sizeof(dev)) : WR_CK_XDP;

		err = wr_cookie_prepare(next, &cfg, hook, dev);
	}
	if (err)
		goto out;
	rules_set_flags(next);
	rules_resolve_ifaces(next);
	/* The egress program records the host's UDP flows while this is not 0. */
	next->reflect_rules = wr_reflect_rules(next);
	next->gen = live->gen + 1;
	err = wr_conn_counter_sync(m, next, false);
	if (err)
		goto out;
	idx = !(cfg.active & 1);
	if (bpf_map_update_elem(m->rulesets, &idx, next, BPF_ANY)) {
		err = -errno;
		goto out;
	}
	cfg.active = idx;
	cfg.cache_on = cfg.cache_off ? 0 : wr_ruleset_caches(next);
	err = wr_config_write(m, &cfg);
	if (err)
		goto out;
	err = wr_conn_counter_sync(m, next, true);
	if (err)
		goto out;
	/*
	 * synchronize_rcu(): every packet that could still be reading the old
	 * set has finished, so the next commit may overwrite it.
	 */
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(50000);	/* no membarrier: outwait any packet generously */
out:
	free(live);
	return err;
}

/*
 * The first stage on or off in *cfg (for the caller to write): on, it
 * caches what the live rule set lets it (weir_config.cache_on, as a
 * commit sets it).
 */
int wr_first_stage_set(const struct wr_maps *m, struct weir_config *cfg, bool off)
{
	struct weir_ruleset *rs;

	cfg->cache_off = off;
	cfg->cache_on = 0;
	if (off)
		return 0;
	rs = wr_live_get(m);
	if (!rs)
		return -EIO;
	cfg->cache_on = wr_ruleset_caches(rs);
	free(rs);
	return 0;
}
