// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rules: parsing `rule add`, listing, and committing a whole rule set.
 *
 * A commit writes the complete new set into the inactive sl_rulesets entry,
 * flips sl_config.active, then waits for an RCU grace period, so that no
 * packet is judged by a mix of two sets and the entry is free for the next
 * commit. Rules keep their bucket state (uid, rule-wide buckets) while their
 * name and limits stay the same, and their counters while their name does.
 */
#include <errno.h>
#include <stdarg.h>
#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sluice_user.h"
#include "sluice_limiter.h"

static void usage_rule(void)
{
	fprintf(sl_usage_out(),
		"Usage: sluice rule add NAME [MATCH...] LIMIT [LIMIT...] [action drop|dry-run]\n"
		"LIMIT := limit RATE [burst N] [per KEY] [algo ALGO] | conns N [per KEY]\n"
		"       sluice rule del NAME\n"
		"       sluice rule list\n"
		"MATCH := family ipv4|ipv6 | proto tcp|udp|icmp|icmpv6|NUM | dport P[-Q]\n"
		"       | src CIDR | tcp-flags syn|FLAGS[/MASK] | icmp-type N\n"
		"       | class N      priority class for shedding: 0 critical (default) .. 3\n"
		"RATE  := N{pps,kpps,mpps} | N{bit,kbit,mbit,gbit} | N{byte,kbyte,mbyte,gbyte}\n"
		"         per second, or N[byte-unit]/{s,min,h,day}: 10/s, 100/min, 64kbyte/h;\n"
		"         bit and byte rates cost the packet's IP length\n"
		"algo  := token-bucket     (the default: GCRA, exact)\n"
		"       | fixed-window     (cheap, up to 2x across a window edge)\n"
		"       | sliding-window   (the previous window weighted by overlap)\n"
		"conns N [per KEY]   at most N established TCP connections per source\n"
		"         (proto tcp rules); a SYN from a source at its cap is dropped\n"
		"burst := packets (or bytes) admitted at once; default one second of RATE\n"
		"KEY   := src[/LEN] [src6/LEN]   one bucket per source prefix (default /32, /64)\n"
		"       | all                    one bucket for the whole rule\n"
		"Up to %d rules of up to %d limits; a packet passes only if every limit of\n"
		"every matching rule admits it, and only then is it charged.\n",
		SLUICE_MAX_RULES, SLUICE_MAX_LIMITS);
}

/* Record an error about argv[word] (-1: the rule as a whole). */
static int perr(struct sl_perr *pe, int word, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int perr(struct sl_perr *pe, int word, int err, const char *fmt, ...)
{
	va_list ap;

	pe->word = word;
	va_start(ap, fmt);
	vsnprintf(pe->msg, sizeof(pe->msg), fmt, ap);
	va_end(ap);
	return err;
}

static int bad(struct sl_perr *pe, int word, const char *what, const char *val)
{
	return perr(pe, word, -EINVAL, "invalid %s \"%s\"", what, val);
}

static const char *const algo_names[] = {
	[SLUICE_ALGO_GCRA] = "token-bucket",
	[SLUICE_ALGO_FIXED] = "fixed-window",
	[SLUICE_ALGO_SLIDING] = "sliding-window",
	[SLUICE_ALGO_CONNS] = "conns",
};

/* The smallest burst of a byte token bucket: one full-size packet's IP length. */
#define SL_MIN_BYTE_BURST 1500

/* Fill the derived fields of a limit: interval, tolerance, masks. */
static int limit_finish(struct sluice_limit *l, bool burst_set, struct sl_perr *pe, int word)
{
	sl_limit_set_masks(l);
	if (l->algo == SLUICE_ALGO_CONNS)
		return 0;
	if (l->algo != SLUICE_ALGO_GCRA) {
		/* A window admits `rate` per window; there is no separate burst. */
		if (burst_set)
			return perr(pe, word, -EINVAL, "burst applies to token-bucket limits; a "
				    "%s admits its rate per window", algo_names[l->algo]);
		if (l->rate > UINT32_MAX)
			return perr(pe, word, -ERANGE, "a window counts at most %u per window",
				    UINT32_MAX);
		l->burst = l->rate;
	} else if (!burst_set) {
		/* One period of traffic, at least one full-size packet for byte rates. */
		l->burst = l->rate;
		if (l->cost == SLUICE_COST_BYTE && l->burst < 1500)
			l->burst = 1500;
	}
	/*
	 * A byte limit charges a packet its IP length: with a burst under one
	 * full-size packet (1500 bytes at the usual MTU) such a packet could
	 * never pass.
	 */
	if (l->algo == SLUICE_ALGO_GCRA && l->cost == SLUICE_COST_BYTE && burst_set &&
	    l->burst < SL_MIN_BYTE_BURST)
		return perr(pe, word, -EINVAL, "burst %llu is smaller than one full-size packet: "
			    "a byte limit charges each packet its IP length, %u bytes at a 1500 "
			    "MTU, which could never pass (burst %u or more)",
			    (unsigned long long)l->burst, SL_MIN_BYTE_BURST, SL_MIN_BYTE_BURST);
	l->interval_fp = sl_gcra_interval_per(l->rate, l->period_ms);
	if (!l->interval_fp)
		return perr(pe, word, -ERANGE, "rate out of range: %llu %s per %u ms is too fast "
			    "to meter (a packet every nanosecond at most) or the period too long",
			    (unsigned long long)l->rate,
			    l->cost == SLUICE_COST_BYTE ? "bytes" : "packets",
			    l->period_ms ? l->period_ms : 1000);
	l->tolerance = sl_gcra_tolerance(l->interval_fp, l->burst, l->cost);
	if (!l->tolerance) {
		if (burst_set)
			return perr(pe, word, -ERANGE, "burst %llu at this rate is out of range",
				    (unsigned long long)l->burst);
		return perr(pe, word, -ERANGE, "rate out of range: %llu %s per %u ms needs a "
			    "burst (by default one period of the rate) too large to meter",
			    (unsigned long long)l->rate,
			    l->cost == SLUICE_COST_BYTE ? "bytes" : "packets",
			    l->period_ms ? l->period_ms : 1000);
	}
	return 0;
}

/* Parse "per" keys after argv[*i]; leaves *i on the last word used. */
static int parse_per(int argc, char **argv, int *i, struct sluice_limit *l, struct sl_perr *pe)
{
	bool any = false;
	uint64_t v;

	while (*i + 1 < argc) {
		const char *w = argv[*i + 1];

		if (!strcmp(w, "all")) {
			l->key = SLUICE_KEY_ALL;
			l->plen4 = 0;
			l->plen6 = 0;
		} else if (!strcmp(w, "src")) {
			l->key = SLUICE_KEY_SRC;
		} else if (!strncmp(w, "src/", 4)) {
			if (parse_u64(w + 4, 0, 32, &v))
				return bad(pe, *i + 1, "IPv4 key prefix", w);
			l->key = SLUICE_KEY_SRC;
			l->plen4 = v;
		} else if (!strncmp(w, "src6/", 5)) {
			if (parse_u64(w + 5, 0, 128, &v))
				return bad(pe, *i + 1, "IPv6 key prefix", w);
			l->key = SLUICE_KEY_SRC;
			l->plen6 = v;
		} else {
			break;
		}
		any = true;
		(*i)++;
	}
	if (!any)
		return bad(pe, *i + 1 < argc ? *i + 1 : *i, "per key (src[/LEN], src6/LEN or all)",
			   *i + 1 < argc ? argv[*i + 1] : "");
	return 0;
}

/*
 * Parse the words of `rule add` (argv[0] is NAME) into r and name. The
 * config file builds the same words, so both say the same things; on error
 * pe names the word at fault.
 */
int sl_rule_parse(int argc, char **argv, struct sluice_rule *r, char *name, struct sl_perr *pe)
{
	/*
	 * Every keyword but limit and conns may come once per rule (algo,
	 * burst and per once per limit): a second one is refused by name, as
	 * the config refuses a repeated key, never silently the last one kept.
	 */
	static const char *const once_rule[] = { "family", "proto", "dport", "src", "tcp-flags",
						 "icmp-type", "class", "action" };
	static const char *const once_limit[] = { "algo", "burst", "per" };
	unsigned int seen_rule = 0, seen_limit = 0;
	struct sluice_limit *l = NULL;
	bool burst_set = false;
	int i, err, limit_word = 0;
	size_t k;
	uint64_t v;

	memset(r, 0, sizeof(*r));
	pe->word = -1;
	pe->msg[0] = '\0';
	if (argc < 1)
		return perr(pe, -1, -EINVAL, "a rule needs a NAME");
	if (strlen(argv[0]) >= SLUICE_NAME_LEN || !argv[0][0] ||
	    strspn(argv[0], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
		    strlen(argv[0]))
		return perr(pe, 0, -EINVAL, "invalid rule name \"%s\" (1-%d of A-Z a-z 0-9 _ - .)",
			    argv[0], SLUICE_NAME_LEN - 1);
	if (!strcmp(argv[0], "limit") || !strcmp(argv[0], "help"))
		return perr(pe, 0, -EINVAL, "rule add needs a NAME before its matches and limits");
	strcpy(name, argv[0]);

	for (i = 1; i < argc; i++) {
		const char *w = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		/* Every keyword but the "per" key list takes exactly one value. */
		if (!val)
			return perr(pe, i, -EINVAL, "\"%s\" needs a value", w);
		for (k = 0; k < ARRAY_SIZE(once_rule); k++) {
			if (strcmp(w, once_rule[k]))
				continue;
			if (seen_rule & (1u << k))
				return perr(pe, i, -EINVAL, "\"%s\" given twice in rule %s (each "
					    "match, class and action once)", w, name);
			seen_rule |= 1u << k;
		}
		for (k = 0; l && k < ARRAY_SIZE(once_limit); k++) {
			if (strcmp(w, once_limit[k]))
				continue;
			if (seen_limit & (1u << k))
				return perr(pe, i, -EINVAL, "\"%s\" given twice in one limit of rule "
					    "%s", w, name);
			seen_limit |= 1u << k;
		}
		if (!strcmp(w, "limit") || !strcmp(w, "conns")) {
			bool conns = !strcmp(w, "conns");
			uint64_t rate;
			uint32_t period;
			int cost;

			if (l && (err = limit_finish(l, burst_set, pe, limit_word)))
				return err;
			if (r->nr_limits == SLUICE_MAX_LIMITS)
				return perr(pe, i, -E2BIG, "too many limits (at most %d per rule)",
					    SLUICE_MAX_LIMITS);
			l = &r->limits[r->nr_limits++];
			limit_word = i + 1;
			seen_limit = 0;
			burst_set = false;
			l->plen4 = 32;
			l->plen6 = 64;
			l->key = SLUICE_KEY_SRC;
			if (conns) {
				/* At most N established connections per key. */
				if (parse_u64(val, 1, UINT32_MAX, &v))
					return bad(pe, i + 1, "connection count", val);
				l->algo = SLUICE_ALGO_CONNS;
				l->rate = v;
				l->period_ms = 0;
			} else {
				if (parse_rate_per(val, &rate, &cost, &period))
					return bad(pe, i + 1, "rate", val);
				l->rate = rate;
				l->cost = cost;
				l->period_ms = period;
			}
			i++;
		} else if (!strcmp(w, "algo")) {
			int a;

			if (!l)
				return perr(pe, i, -EINVAL, "\"algo\" must follow a limit");
			for (a = 0; a < SLUICE_ALGO_CONNS; a++)
				if (!strcmp(val, algo_names[a]))
					break;
			if (a == SLUICE_ALGO_CONNS || l->algo == SLUICE_ALGO_CONNS)
				return bad(pe, i + 1, "algo (token-bucket, fixed-window, sliding-window)",
					   val);
			l->algo = a;
			i++;
		} else if (!strcmp(w, "burst")) {
			if (!l || l->algo == SLUICE_ALGO_CONNS)
				return perr(pe, i, -EINVAL, "\"burst\" must follow a limit RATE");
			/* Whether it fits the rate is limit_finish()'s to say. */
			if (parse_size(val, &v) || v == 0)
				return bad(pe, i + 1, "burst", val);
			l->burst = v;
			burst_set = true;
			i++;
		} else if (!strcmp(w, "per")) {
			if (!l)
				return perr(pe, i, -EINVAL, "\"per\" must follow a limit");
			err = parse_per(argc, argv, &i, l, pe);
			if (err)
				return err;
		} else if (!strcmp(w, "family")) {
			int fam;

			if (!strcmp(val, "ipv4") || !strcmp(val, "inet"))
				fam = 4;
			else if (!strcmp(val, "ipv6") || !strcmp(val, "inet6"))
				fam = 6;
			else
				return bad(pe, i + 1, "family", val);
			if ((r->match & SLUICE_M_FAMILY) && r->family != fam)
				return perr(pe, i + 1, -EINVAL, "family %s contradicts an earlier "
					    "ipv%d src", val, r->family);
			r->family = fam;
			r->match |= SLUICE_M_FAMILY;
			i++;
		} else if (!strcmp(w, "proto")) {
			if (parse_proto(val, &r->proto))
				return bad(pe, i + 1, "proto", val);
			r->match |= SLUICE_M_PROTO;
			i++;
		} else if (!strcmp(w, "dport")) {
			if (parse_port_range(val, &r->dport_lo, &r->dport_hi))
				return bad(pe, i + 1, "dport", val);
			r->match |= SLUICE_M_DPORT;
			i++;
		} else if (!strcmp(w, "src")) {
			struct sl_cidr c;
			int k;

			if (parse_cidr(val, &c))
				return bad(pe, i + 1, "CIDR", val);
			memcpy(r->src_net, c.addr, sizeof(r->src_net));
			for (k = 0; k < 4; k++)
				r->src_mask[k] = c.family == 4 ? (k ? 0 : sl_prefix_word(c.plen, 0))
							       : sl_prefix_word(c.plen, k);
			r->src_plen = c.plen;
			if ((r->match & SLUICE_M_FAMILY) && r->family != c.family)
				return perr(pe, i + 1, -EINVAL, "src \"%s\" is not of family ipv%d",
					    val, r->family);
			r->family = c.family;
			r->match |= SLUICE_M_SRC | SLUICE_M_FAMILY;
			i++;
		} else if (!strcmp(w, "tcp-flags")) {
			if (parse_tcp_flags(val, &r->tcp_value, &r->tcp_mask))
				return bad(pe, i + 1, "tcp-flags", val);
			r->match |= SLUICE_M_TCPFLAGS;
			i++;
		} else if (!strcmp(w, "icmp-type")) {
			if (parse_u64(val, 0, 255, &v))
				return bad(pe, i + 1, "icmp-type", val);
			r->icmp_type = v;
			r->match |= SLUICE_M_ICMPTYPE;
			i++;
		} else if (!strcmp(w, "class")) {
			if (parse_u64(val, 0, SLUICE_MAX_CLASS, &v))
				return bad(pe, i + 1, "class (0 critical .. 3)", val);
			r->class = v;
			i++;
		} else if (!strcmp(w, "action")) {
			if (!strcmp(val, "drop"))
				r->action = SLUICE_ACT_DROP;
			else if (!strcmp(val, "dry-run"))
				r->action = SLUICE_ACT_DRYRUN;
			else
				return bad(pe, i + 1, "action", val);
			i++;
		} else {
			return perr(pe, i, -EINVAL, "unknown word \"%s\" in rule %s", w, name);
		}
	}
	if (!l)
		return perr(pe, -1, -EINVAL, "rule %s needs at least one limit", name);
	err = limit_finish(l, burst_set, pe, limit_word);
	if (err)
		return err;

	for (i = 0; i < r->nr_limits; i++) {
		if (r->limits[i].algo != SLUICE_ALGO_CONNS)
			continue;
		if (!(r->match & SLUICE_M_PROTO) || r->proto != 6)
			return perr(pe, -1, -EINVAL, "conns needs proto tcp: it counts established "
				    "TCP connections");
		if (r->limits[i].key == SLUICE_KEY_ALL)
			return perr(pe, -1, -EINVAL, "conns counts per source (src[/LEN] "
				    "src6/LEN), not per all");
	}

	/* Contradictions that would make a rule silently match nothing. */
	if ((r->match & SLUICE_M_PROTO) && (r->match & SLUICE_M_TCPFLAGS) && r->proto != 6)
		return perr(pe, -1, -EINVAL, "tcp-flags needs proto tcp");
	if ((r->match & SLUICE_M_PROTO) && (r->match & SLUICE_M_DPORT) && r->proto != 6 &&
	    r->proto != 17)
		return perr(pe, -1, -EINVAL, "dport needs proto tcp or udp");
	if ((r->match & SLUICE_M_PROTO) && (r->match & SLUICE_M_ICMPTYPE) && r->proto != 1 &&
	    r->proto != 58)
		return perr(pe, -1, -EINVAL, "icmp-type needs proto icmp or icmpv6");
	if ((r->match & SLUICE_M_FAMILY) && (r->match & SLUICE_M_PROTO) &&
	    ((r->proto == 1 && r->family == 6) || (r->proto == 58 && r->family == 4)))
		return perr(pe, -1, -EINVAL, "proto %s does not exist in ipv%d",
			    r->proto == 1 ? "icmp" : "icmpv6", r->family);
	return 0;
}

static bool limits_equal(const struct sluice_rule *a, const struct sluice_rule *b)
{
	int i;

	if (a->nr_limits != b->nr_limits)
		return false;
	for (i = 0; i < a->nr_limits; i++) {
		const struct sluice_limit *x = &a->limits[i], *y = &b->limits[i];

		if (x->rate != y->rate || x->burst != y->burst || x->key != y->key ||
		    x->cost != y->cost || x->plen4 != y->plen4 || x->plen6 != y->plen6 ||
		    x->algo != y->algo || x->period_ms != y->period_ms)
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
 * Derive each rule's flags from its limits: SLUICE_RF_PRECISE when one of
 * them is too short for the jiffies clock, so `clock auto` reads the
 * precise clock for just those packets. The limits decide it alone, so a
 * rule whose limits are unchanged keeps its flags too.
 */
static void rules_set_flags(struct sluice_ruleset *rs)
{
	__u64 tick = coarse_tick_ns();
	__u32 i, j;

	for (i = 0; i < rs->nr_rules && i < SLUICE_MAX_RULES; i++) {
		struct sluice_rule *r = &rs->rules[i];

		r->flags &= ~SLUICE_RF_PRECISE;
		for (j = 0; j < r->nr_limits && j < SLUICE_MAX_LIMITS; j++)
			if (sl_limit_needs_precise(&r->limits[j], tick))
				r->flags |= SLUICE_RF_PRECISE;
	}
}

static int find_rule(const struct sluice_ruleset *rs, const char *name)
{
	__u32 i;

	for (i = 0; i < rs->nr_rules && i < SLUICE_MAX_RULES; i++)
		if (!strncmp(rs->names[i], name, SLUICE_NAME_LEN))
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
 * Replace the live rule set with next (names and rules filled in; uid, slot
 * and agg_slot are assigned here). Caller holds the root lock.
 */
int sl_ruleset_commit(const struct sl_maps *m, struct sluice_ruleset *next)
{
	bool slot_used[SLUICE_STATS_SLOTS] = {}, agg_used[SLUICE_AGG_SLOTS] = {};
	struct sluice_ruleset *live;
	struct sluice_config cfg;
	struct sluice_state empty = {};
	__u32 i, j, idx;
	int err;

	live = calloc(1, sizeof(*live));
	if (!live)
		return -ENOMEM;
	err = sl_config_read(m, &cfg);
	if (!err)
		err = sl_read_live(m, live);
	if (err)
		goto out;
	if (next->nr_rules > SLUICE_MAX_RULES) {
		err = -E2BIG;
		goto out;
	}
	/* Slots the live set uses stay untouched until it is gone. */
	for (i = 0; i < live->nr_rules && i < SLUICE_MAX_RULES; i++) {
		struct sluice_rule *r = &live->rules[i];

		slot_used[r->slot % SLUICE_STATS_SLOTS] = true;
		for (j = 0; j < r->nr_limits && j < SLUICE_MAX_LIMITS; j++)
			if (r->limits[j].key == SLUICE_KEY_ALL)
				agg_used[r->limits[j].agg_slot % SLUICE_AGG_SLOTS] = true;
	}
	/* First pass: what carries over from the live rule of the same name. */
	for (i = 0; i < next->nr_rules; i++) {
		struct sluice_rule *r = &next->rules[i];
		int old = find_rule(live, next->names[i]);

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
		struct sluice_rule *r = &next->rules[i];

		if (r->slot == UINT16_MAX) {
			for (idx = 0; idx < SLUICE_STATS_SLOTS && slot_used[idx]; idx++)
				;
			if (idx == SLUICE_STATS_SLOTS) {
				err = -ENOSPC;
				goto out;
			}
			slot_used[idx] = true;
			r->slot = idx;
			err = zero_percpu(m->rule_stats, idx, sizeof(struct sluice_rule_stats));
			if (err)
				goto out;
		}
		if (r->uid)
			continue;
		r->uid = cfg.next_uid ? cfg.next_uid : 1;
		cfg.next_uid = r->uid + 1;
		for (j = 0; j < r->nr_limits; j++) {
			if (r->limits[j].key != SLUICE_KEY_ALL)
				continue;
			for (idx = 0; idx < SLUICE_AGG_SLOTS && agg_used[idx]; idx++)
				;
			if (idx == SLUICE_AGG_SLOTS) {
				err = -ENOSPC;
				goto out;
			}
			agg_used[idx] = true;
			r->limits[j].agg_slot = idx;
			if (bpf_map_update_elem(m->agg, &idx, &empty, BPF_ANY)) {
				err = -errno;
				goto out;
			}
		}
	}
	rules_set_flags(next);
	next->gen = live->gen + 1;
	err = sl_conn_counter_sync(m, next, false);
	if (err)
		goto out;
	idx = !(cfg.active & 1);
	if (bpf_map_update_elem(m->rulesets, &idx, next, BPF_ANY)) {
		err = -errno;
		goto out;
	}
	cfg.active = idx;
	err = sl_config_write(m, &cfg);
	if (err)
		goto out;
	err = sl_conn_counter_sync(m, next, true);
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

static void print_limit(const struct sluice_limit *l)
{
	char rate[48];

	open_object(NULL);
	if (l->algo == SLUICE_ALGO_CONNS) {
		print_u64("conns", " conns %llu", l->rate);
	} else {
		format_rate_per(l->rate, l->cost, l->period_ms, rate, sizeof(rate));
		print_str("rate", " limit %s", rate);
		print_u64(l->cost == SLUICE_COST_PKT ? "packets" : "bytes", NULL, l->rate);
		print_u64("period_ms", NULL, l->period_ms ? l->period_ms : 1000);
		print_str("cost", NULL, l->cost == SLUICE_COST_PKT ? "packets" : "bytes");
		if (l->algo == SLUICE_ALGO_GCRA)
			print_u64("burst", " burst %llu", l->burst);
	}
	if (l->key == SLUICE_KEY_ALL) {
		print_str("per", " per %s", "all");
	} else {
		print_str("per", " per %s", "src");
		print_u64("prefix4", "/%llu", l->plen4);
		print_u64("prefix6", " src6/%llu", l->plen6);
	}
	print_str("algo", l->algo == SLUICE_ALGO_FIXED || l->algo == SLUICE_ALGO_SLIDING
				  ? " algo %s" : NULL, algo_names[l->algo % 4]);
	close_object();
}

/* One rule, in the words `rule add` takes. */
void sl_rule_print(const struct sluice_ruleset *rs, __u32 i)
{
	const struct sluice_rule *r = &rs->rules[i];
	char buf[64];
	__u32 j;

	open_object(NULL);
	print_str("name", "%s", rs->names[i]);
	if (r->match & SLUICE_M_FAMILY)
		print_str("family", " family %s", r->family == 4 ? "ipv4" : "ipv6");
	if (r->match & SLUICE_M_PROTO)
		print_str("proto", " proto %s", proto_name(r->proto, buf, sizeof(buf)));
	if (r->match & SLUICE_M_DPORT) {
		if (r->dport_lo == r->dport_hi)
			snprintf(buf, sizeof(buf), "%u", r->dport_lo);
		else
			snprintf(buf, sizeof(buf), "%u-%u", r->dport_lo, r->dport_hi);
		print_str("dport", " dport %s", buf);
	}
	if (r->match & SLUICE_M_SRC) {
		format_cidr(r->family, r->src_net, r->src_plen, buf, sizeof(buf));
		print_str("src", " src %s", buf);
	}
	if (r->match & SLUICE_M_TCPFLAGS) {
		format_tcp_flags(r->tcp_value, r->tcp_mask, buf, sizeof(buf));
		print_str("tcp_flags", " tcp-flags %s", buf);
	}
	if (r->match & SLUICE_M_ICMPTYPE)
		print_u64("icmp_type", " icmp-type %llu", r->icmp_type);
	print_u64("class", r->class ? " class %llu" : NULL, r->class);
	open_array("limits");
	for (j = 0; j < r->nr_limits && j < SLUICE_MAX_LIMITS; j++)
		print_limit(&r->limits[j]);
	close_array();
	print_str("action", " action %s", r->action == SLUICE_ACT_DRYRUN ? "dry-run" : "drop");
	print_u64("uid", NULL, r->uid);
	print_text("\n");
	close_object();
}

static int rule_list(const struct sl_maps *m)
{
	struct sluice_ruleset *rs = sl_live_get(m);
	__u32 i;

	if (!rs)
		return -ENOENT;
	out_begin();
	open_array("rules");
	for (i = 0; i < rs->nr_rules && i < SLUICE_MAX_RULES; i++)
		sl_rule_print(rs, i);
	close_array();
	out_end();
	free(rs);
	return 0;
}

static int rule_change(int argc, char **argv, bool add)
{
	struct sluice_ruleset *rs = NULL;
	struct sluice_rule r;
	char name[SLUICE_NAME_LEN] = "";
	struct sl_maps m;
	int lock, err = 0, at;

	if (add) {
		struct sl_perr pe;

		err = sl_rule_parse(argc, argv, &r, name, &pe);
		if (err) {
			pr_err("%s", pe.msg);
			if (argc < 1)
				usage_rule();
			return err;
		}
	} else {
		if (argc != 1) {
			pr_err(argc ? "rule del takes one NAME" : "rule del needs the NAME of a rule");
			usage_rule();
			return -EINVAL;
		}
		snprintf(name, sizeof(name), "%s", argv[0]);
	}
	/* Rules may come before any interface: adding loads without attaching. */
	lock = sl_write_begin(&m, add);
	if (lock < 0)
		return lock;
	rs = sl_live_get(&m);
	if (!rs) {
		err = -ENOENT;
		goto out;
	}
	at = find_rule(rs, add ? name : argv[0]);
	if (add) {
		if (at >= 0) {
			pr_err("rule \"%s\" already exists", name);
			err = -EEXIST;
			goto out;
		}
		if (rs->nr_rules >= SLUICE_MAX_RULES) {
			pr_err("too many rules: %u is the most sluice holds", SLUICE_MAX_RULES);
			err = -E2BIG;
			goto out;
		}
		rs->rules[rs->nr_rules] = r;
		memset(rs->names[rs->nr_rules], 0, SLUICE_NAME_LEN);
		strcpy(rs->names[rs->nr_rules], name);
		rs->nr_rules++;
	} else {
		if (at < 0) {
			pr_err("unknown rule \"%s\"", argv[0]);
			err = -ENOENT;
			goto out;
		}
		memmove(&rs->rules[at], &rs->rules[at + 1],
			(rs->nr_rules - at - 1) * sizeof(rs->rules[0]));
		memmove(rs->names[at], rs->names[at + 1],
			(rs->nr_rules - at - 1) * SLUICE_NAME_LEN);
		rs->nr_rules--;
		memset(&rs->rules[rs->nr_rules], 0, sizeof(rs->rules[0]));
		memset(rs->names[rs->nr_rules], 0, SLUICE_NAME_LEN);
	}
	err = sl_ruleset_commit(&m, rs);
	if (err) {
		pr_err("cannot commit the rule set: %s", strerror(-err));
		goto out;
	}
	print_text("%s rule %s\n", add ? "added" : "deleted", name);
out:
	free(rs);
	sl_write_end(&m, lock);
	return err;
}

static int cmd_add(int argc, char **argv, void *ctx)
{
	(void)ctx;
	return rule_change(argc, argv, true);
}

static int cmd_del(int argc, char **argv, void *ctx)
{
	(void)ctx;
	return rule_change(argc, argv, false);
}

static int cmd_list(int argc, char **argv, void *ctx)
{
	struct sl_maps m;
	int err;

	(void)argv;
	(void)ctx;
	if (argc > 0) {
		pr_err("rule list takes no arguments");
		return -EINVAL;
	}
	err = sl_maps_open(&m);
	if (err)
		return err;
	err = rule_list(&m);
	sl_maps_close(&m);
	return err;
}

static void usage_ctx(void *ctx)
{
	(void)ctx;
	usage_rule();
}

static const struct sl_cmd rule_cmds[] = {
	{ "add", cmd_add },
	{ "delete", cmd_del },
	{ "list", cmd_list },
	{ "show", cmd_list },
};

int do_rule(int argc, char **argv)
{
	return sl_cmd_select(rule_cmds, ARRAY_SIZE(rule_cmds), "rule", argc, argv, NULL, usage_ctx);
}
