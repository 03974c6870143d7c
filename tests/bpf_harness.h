/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The harness the BPF test suites (bpf_datapath, bpf_shed, bpf_limits,
 * bpf_hostile) share: the real object loaded through its skeleton, rule
 * sets written the way the controller writes them, counters read back, and
 * frames run through bpf_prog_test_run_opts.
 *
 * Every load is a fresh skeleton (so maps start empty) with the manual
 * clock at T0, a small wr_state and pinning switched off, so nothing under
 * /sys/fs/bpf is read or written; wr_config then gets the state seed and
 * set count, as the loader writes them. Rule sets are built in rs and
 * committed into the inactive wr_rulesets entry, then wr_config.active is
 * flipped.
 *
 * Each suite includes this once, from its .c file; everything here is
 * static, and what a suite does not use costs nothing.
 */
#ifndef WEIR_TESTS_BPF_HARNESS_H
#define WEIR_TESTS_BPF_HARNESS_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "weir.h"
#include "weir_limiter.h"
#include "weir_state.h"
#include "weir.skel.h"
#include "../user/lib/kernel_features.h"
#include "check.h"
#include "packet.h"

#define SEC	1000000000ULL
#define MSEC	1000000ULL
#define USEC	1000ULL
/* Manual time at the start of every case. */
#define T0	(1000 * SEC)
/* wr_state size for load(), in ways: small, but no eviction unless a case asks for it. */
#define STATE_KEYS	4096
/*
 * wr_config.state_seed after every load. Fixed, so runs are reproducible;
 * nothing depends on its value except cases that pick keys by their set,
 * and those compute the set with it (state_set_of()).
 */
#define STATE_SEED	0x5eed0f51c3b7a9d1ULL
/* rule i gets counter slot i + SLOT_BASE (+ 16 per rule set): not i, so slot/index mix-ups show */
#define SLOT_BASE	3

static struct weir *skel;
static int ncpu;			/* possible CPUs: the per-CPU maps' width */
static struct weir_ruleset rs;	/* the rule set being built */
static __u16 agg_base = 1;		/* first agg_slot after each load; a suite may move it */
static __u16 next_agg;			/* the next agg_slot new_limit() hands out */
static int use_tc;			/* xmit() runs weir_tc instead of weir_xdp */
static int tc_cases;			/* what load() sets use_tc to */

static const __u32 SRC_A = IP4(198, 18, 1, 1), SRC_B = IP4(198, 18, 1, 2),
		   SRC_C = IP4(198, 18, 2, 3);

static inline int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !getenv("WEIR_TEST_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                  */
/* ------------------------------------------------------------------------ */

/* wr_state's number of sets, as the kernel holds it; 0 if it cannot be read. */
static inline __u32 state_map_sets(void)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_map__fd(skel->maps.wr_state), &info, &len))
		return 0;
	return info.max_entries;
}

/*
 * Open, manual clock, sets sets in wr_state (or, with state_fd >= 0, that
 * map in its place, whatever its size), nothing pinned, load; then
 * wr_config's state seed (STATE_SEED) and set count (the map's), as the
 * loader writes them, an empty rs, agg slots from agg_base and use_tc from
 * tc_cases. 0 or -errno.
 */
static inline int load_with(__u32 sets, int state_fd)
{
	struct weir_config c;
	struct bpf_map *m;
	__u32 zero = 0;
	int err;

	char why[256];

	/* Opened as the loader opens it: WEIR_FEATURES_OFF applies here too. */
	skel = wr_open_for_kernel(NULL, NULL, why, sizeof(why));
	if (!skel) {
		err = -errno;
		fprintf(stderr, "%s\n", why);
		return err;
	}
	skel->rodata->clock_mode = WEIR_CLOCK_MANUAL;
	err = bpf_map__set_max_entries(skel->maps.wr_state, sets);
	bpf_object__for_each_map(m, skel->obj)
		if (!err)
			err = bpf_map__set_pin_path(m, NULL);
	if (!err && state_fd >= 0)
		err = bpf_map__reuse_fd(skel->maps.wr_state, state_fd);
	if (!err)
		err = weir__load(skel);
	if (!err)
		err = wr_cookie_progs_fill(skel);
	if (!err) {
		memset(&c, 0, sizeof(c));
		c.state_seed = STATE_SEED;
		c.state_sets = state_map_sets();
		if (!c.state_sets)
			err = -EINVAL;
		else if (bpf_map__update_elem(skel->maps.wr_config, &zero, 4, &c, sizeof(c), 0))
			err = -errno;
	}
	if (err) {
		weir__destroy(skel);
		skel = NULL;
		return err;
	}
	skel->bss->manual_now_ns = T0;
	memset(&rs, 0, sizeof(rs));
	next_agg = agg_base;
	use_tc = tc_cases;
	return 0;
}

/* The usual load: STATE_KEYS ways in wr_state. 0 or -errno. */
static inline int load(void)
{
	return load_with(STATE_KEYS / WEIR_WAYS, -1);
}

/* load(), failing the case if it fails. */
static inline int setup(void)
{
	int err = load();

	if (err)
		CHECK_FAIL("loading the BPF object: %s", strerror(-err));
	return err;
}

static inline void teardown(void)
{
	weir__destroy(skel);
	skel = NULL;
}

/*
 * This process into a network namespace of its own with lo up: the
 * sockets a suite makes, and test_run's socket lookups (on lo), meet
 * there and nowhere else. 0, or -1 with *why said.
 */
static inline int own_netns(const char **why)
{
	struct ifreq ifr = {};
	int fd;

	if (unshare(CLONE_NEWNET)) {
		*why = "cannot enter a new network namespace";
		return -1;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) ||
	    (ifr.ifr_flags |= IFF_UP, ioctl(fd, SIOCSIFFLAGS, &ifr))) {
		*why = "cannot bring lo up";
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static inline void set_now(__u64 ns)
{
	skel->bss->manual_now_ns = ns;
}

/*
 * The start of a suite's main(): libbpf quiet below debug (unless
 * WEIR_TEST_DEBUG is set), ncpu counted, the process on CPU 0 (the
 * per-CPU counters are summed anyway, but runs are reproducible), and one
 * load() to see that BPF programs load here at all. 0 with that object
 * loaded (the caller tears it down); otherwise the suite's line is printed
 * and main() returns: -1 skipped (no permission, not root), 1 failed.
 */
static inline int harness_start(const char *suite)
{
	cpu_set_t set;
	int err;

	libbpf_set_print(quiet_print);
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0) {
		printf("not ok - %s: cannot count possible CPUs\n", suite);
		return 1;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);

	err = load();
	/* as root, EACCES is the verifier refusing the object: a failure, not a skip */
	if ((err == -EPERM || err == -EACCES) && geteuid() != 0) {
		printf("skip - %s: cannot load BPF programs: %s\n", suite, strerror(-err));
		return -1;
	}
	if (err) {
		printf("not ok - %s: loading the BPF object: %s\n", suite, strerror(-err));
		return 1;
	}
	return 0;
}

/*
 * HARNESS_CASE(name) { body } defines and registers the case name(): it loads a
 * fresh object (and fails without running the body if that fails), runs the
 * body, checks the suite's check_balance() and unloads.
 */
#define HARNESS_CASE(name)             \
	static void name##_body(void); \
	static void name(void)         \
	{                              \
		if (setup())           \
			return;        \
		name##_body();         \
		check_balance();       \
		teardown();            \
	}                              \
	CHECK_REGISTER(name);          \
	static void name##_body(void)

/* ------------------------------------------------------------------------ */
/* wr_config and rule sets                                                  */
/* ------------------------------------------------------------------------ */

static inline struct weir_config cfg_get(void)
{
	struct weir_config c;
	__u32 zero = 0;

	memset(&c, 0, sizeof(c));
	if (bpf_map__lookup_elem(skel->maps.wr_config, &zero, 4, &c, sizeof(c), 0))
		CHECK_FAIL("reading wr_config: %s", strerror(errno));
	return c;
}

static inline void cfg_put(const struct weir_config *c)
{
	__u32 zero = 0;

	if (bpf_map__update_elem(skel->maps.wr_config, &zero, 4, c, sizeof(*c), 0))
		CHECK_FAIL("writing wr_config: %s", strerror(errno));
}

#define CFG_SET(field, v)                      \
	do {                                   \
		struct weir_config c_ = cfg_get(); \
		c_.field = (v);                \
		cfg_put(&c_);                  \
	} while (0)

/*
 * Write rs (its gen one up) into the inactive wr_rulesets entry. *c is
 * wr_config as it was, with active naming that entry, for the caller to
 * write back (or not). 0, or -1 if the write failed.
 */
static inline int stage_rules(struct weir_config *c)
{
	__u32 idx;

	*c = cfg_get();
	idx = (c->active & 1) ^ 1;
	rs.gen++;
	/* As the controller commits a set: with its rule index (wr_ruleset_index). */
	if (wr_ruleset_index(&rs, NULL)) {
		CHECK_FAIL("the rule set's index is over-full: more than %d rules meet a cell",
			   WEIR_MAX_CAND);
		return -1;
	}
	if (bpf_map__update_elem(skel->maps.wr_rulesets, &idx, 4, &rs, sizeof(rs), 0)) {
		CHECK_FAIL("writing wr_rulesets[%u]: %s", idx, strerror(errno));
		return -1;
	}
	c->active = idx;
	/* As wr_config_write and the commit do: a new cache generation, and whether it caches. */
	c->cache_on = c->cache_off ? 0 : wr_ruleset_caches(&rs);
	c->cache_gen++;
	return 0;
}

/* Write rs into the inactive entry; flip to it when flip is set. */
static inline void write_rules(int flip)
{
	struct weir_config c;

	if (!stage_rules(&c) && flip)
		cfg_put(&c);
}

/* Write rs into the inactive entry and flip to it, as the controller does. */
static inline void commit(void)
{
	write_rules(1);
}

/* A new rule (no match bits: matches all IP), distinct uid and counter slot. */
static inline struct weir_rule *add_rule(__u8 action)
{
	struct weir_rule *r = &rs.rules[rs.nr_rules];

	memset(r, 0, sizeof(*r));
	r->uid = 1000 + rs.nr_rules + 100 * rs.gen;
	/* a rule of a later set is a different rule: its own counters */
	r->slot = rs.nr_rules + SLOT_BASE + 16 * rs.gen;
	r->action = action;
	snprintf(rs.names[rs.nr_rules], WEIR_NAME_LEN, "rule%u", rs.nr_rules);
	rs.nr_rules++;
	return r;
}

/*
 * A limit as `rule add` builds it: `rate` per `period_ms` (0: per second,
 * left 0 as the controller leaves it for token buckets), windows with
 * burst = rate, or for WEIR_ALGO_CONNS a cap of `rate`. No agg_slot.
 */
static inline void limit_init(struct weir_limit *l, int algo, __u64 rate, __u32 period_ms,
			      __u64 burst, int cost, int key, int plen4, int plen6)
{
	memset(l, 0, sizeof(*l));
	l->algo = algo;
	l->rate = rate;
	l->cost = cost;
	l->key = key;
	l->plen4 = plen4;
	l->plen6 = plen6;
	if (algo != WEIR_ALGO_CONNS) {
		l->period_ms = period_ms;
		l->burst = algo == WEIR_ALGO_GCRA ? burst : rate;
		l->interval_fp = wr_gcra_interval_per(rate, period_ms ? period_ms : 1000);
		l->tolerance = wr_gcra_tolerance(l->interval_fp, l->burst, cost);
	}
	wr_limit_set_masks(l);
}

/* The next limit of rule r, as limit_init() fills it; rule-wide ones get the next agg_slot. */
static inline struct weir_limit *new_limit(struct weir_rule *r, int algo, __u64 rate,
					     __u32 period_ms, __u64 burst, int cost, int key,
					     int plen4, int plen6)
{
	struct weir_limit *l = &r->limits[r->nr_limits++];

	limit_init(l, algo, rate, period_ms, burst, cost, key, plen4, plen6);
	if (key == WEIR_KEY_ALL)
		l->agg_slot = next_agg++;
	return l;
}

static inline void match_proto(struct weir_rule *r, __u8 proto)
{
	r->match |= WEIR_M_PROTO;
	r->proto = proto;
}

static inline void match_src4(struct weir_rule *r, __u32 net, unsigned int plen)
{
	r->match |= WEIR_M_SRC | WEIR_M_FAMILY;
	r->family = 4;
	r->src_plen = plen;
	r->src_mask[0] = wr_prefix_word(plen, 0);
	r->src_net[0] = htonl(net) & r->src_mask[0];
}

/* ------------------------------------------------------------------------ */
/* Counters and state                                                       */
/* ------------------------------------------------------------------------ */

/* Global counter idx summed over CPUs. */
static inline __u64 g(int idx)
{
	struct weir_globals v[ncpu];
	__u64 sum = 0;
	__u32 key = 0;
	int i;

	if (idx < 0 || idx >= WEIR_G_MAX) {
		CHECK_FAIL("no global counter %d", idx);
		return 0;
	}
	if (bpf_map__lookup_elem(skel->maps.wr_global, &key, 4, v, sizeof(v), 0)) {
		CHECK_FAIL("reading wr_global (counter %d): %s", idx, strerror(errno));
		return 0;
	}
	for (i = 0; i < ncpu; i++)
		sum += v[i].count[idx];
	return sum;
}

/*
 * Entry key of a per-CPU map of counters (values of size bytes, all
 * __u64), summed over CPUs into out; zeros, and a failed check, if
 * unreadable.
 */
static inline void percpu_sum(struct bpf_map *map, __u32 key, void *out, size_t size)
{
	__u64 v[ncpu * size / sizeof(__u64)], *o = out;
	size_t c, w, n = size / sizeof(__u64);

	memset(out, 0, size);
	if (bpf_map__lookup_elem(map, &key, 4, v, sizeof(v), 0)) {
		CHECK_FAIL("reading %s[%u]: %s", bpf_map__name(map), key, strerror(errno));
		return;
	}
	for (c = 0; c < (size_t)ncpu; c++)
		for (w = 0; w < n; w++)
			o[w] += v[c * n + w];
}

/* Counters of the rule at index i of the current set, summed over CPUs. */
static inline struct weir_rule_stats rstat(int i)
{
	struct weir_rule_stats s;

	percpu_sum(skel->maps.wr_rule_stats, rs.rules[i].slot, &s, sizeof(s));
	return s;
}

/* Refusals of limit l's rule-wide bucket waiting per CPU (wr_agg_drops), summed. */
static inline __u64 agg_waiting(const struct weir_limit *l)
{
	__u64 v[ncpu], sum = 0;
	__u32 key = l->agg_slot;
	int c;

	if (bpf_map__lookup_elem(skel->maps.wr_agg_drops, &key, 4, v, sizeof(v), 0)) {
		CHECK_FAIL("reading wr_agg_drops[%u]: %s", key, strerror(errno));
		return 0;
	}
	for (c = 0; c < ncpu; c++)
		sum += v[c];
	return sum;
}

/* The rule-wide bucket of limit l as it is in wr_agg, without those waiting. */
static inline struct weir_state agg_raw(const struct weir_limit *l)
{
	struct weir_state st;
	__u32 key = l->agg_slot;

	memset(&st, 0, sizeof(st));
	if (bpf_map__lookup_elem(skel->maps.wr_agg, &key, 4, &st, sizeof(st), 0))
		CHECK_FAIL("reading wr_agg[%u]: %s", key, strerror(errno));
	return st;
}

/* The rule-wide bucket of limit l as readers see it: drops with those waiting per CPU. */
static inline struct weir_state agg_get(const struct weir_limit *l)
{
	struct weir_state st = agg_raw(l);

	st.drops += agg_waiting(l);
	return st;
}

/* The key of limit li of rule r for an IPv4 source (host order), as the data path makes it. */
static inline struct weir_key key4(const struct weir_rule *r, __u32 li, __u32 src)
{
	const struct weir_limit *l = &r->limits[li];
	struct weir_key k;

	memset(&k, 0, sizeof(k));
	k.uid = r->uid;
	k.limit = li;
	k.family = 4;
	k.plen = l->plen4;
	k.addr[0] = htonl(src) & l->mask4;
	return k;
}

static inline struct weir_key key6(const struct weir_rule *r, __u32 li, const __u8 *src)
{
	const struct weir_limit *l = &r->limits[li];
	struct weir_key k;
	int w;

	memset(&k, 0, sizeof(k));
	k.uid = r->uid;
	k.limit = li;
	k.family = 6;
	k.plen = l->plen6;
	memcpy(k.addr, src, 16);
	for (w = 0; w < 4; w++)
		k.addr[w] &= l->mask6[w];
	return k;
}

/*
 * Entries in m, a hash keyed by struct weir_key (wr_conns); the first key
 * found goes to *first if given. wr_state is counted by state_count().
 */
static inline int key_count(struct bpf_map *m, struct weir_key *first)
{
	struct weir_key k, next;
	int n = 0, err;

	err = bpf_map__get_next_key(m, NULL, &next, sizeof(next));
	while (!err) {
		if (!n && first)
			*first = next;
		n++;
		k = next;
		err = bpf_map__get_next_key(m, &k, &next, sizeof(next));
	}
	return n;
}

/*
 * wr_state, as the data path sees it: an array of sets of WEIR_WAYS
 * ways; key k lives in set wr_state_set(wr_key_hash(k, seed), sets), with
 * seed and sets from wr_config, in any way of it.
 */

/* Set idx of wr_state into *s: 0, or -errno (-ENOENT beyond the map). */
static inline int state_set_get(__u32 idx, struct weir_set *s)
{
	memset(s, 0, sizeof(*s));
	if (bpf_map__lookup_elem(skel->maps.wr_state, &idx, 4, s, sizeof(*s), 0))
		return -errno;
	return 0;
}

static inline void state_set_put(__u32 idx, const struct weir_set *s)
{
	if (bpf_map__update_elem(skel->maps.wr_state, &idx, 4, s, sizeof(*s), 0))
		CHECK_FAIL("writing wr_state[%u]: %s", idx, strerror(errno));
}

/* The set of key k under wr_config's seed and set count, as the data path computes it. */
static inline __u32 state_set_of(const struct weir_key *k)
{
	struct weir_config c = cfg_get();

	return wr_state_set(wr_key_hash(k, c.state_seed), c.state_sets);
}

/* A way that holds a key: not empty, not being filled in. */
static inline int way_used(const struct weir_way *w)
{
	__u64 w0;

	memcpy(&w0, &w->key, sizeof(w0));
	return w->key.uid != 0 && w0 != WEIR_WAY_BUSY;
}

/* The way of set s holding key k (the whole key compared), or -1. */
static inline int way_of(const struct weir_set *s, const struct weir_key *k)
{
	int i;

	for (i = 0; i < WEIR_WAYS; i++)
		if (way_used(&s->way[i]) && !memcmp(&s->way[i].key, k, sizeof(*k)))
			return i;
	return -1;
}

/* The way holding key k into *w: 0, or -ENOENT if no way of its set holds it. */
static inline int state_way(const struct weir_key *k, struct weir_way *w)
{
	struct weir_set s;
	int i;

	if (state_set_get(state_set_of(k), &s))
		return -ENOENT;
	i = way_of(&s, k);
	if (i < 0)
		return -ENOENT;
	*w = s.way[i];
	return 0;
}

/* Refusals of key k's per-source bucket waiting per CPU (wr_src_drops), summed. */
static inline __u64 src_waiting(const struct weir_key *k)
{
	struct weir_src_wait v[ncpu];
	__u32 slot = wr_src_wait_slot(k);
	__u64 sum = 0;
	int c;

	if (bpf_map__lookup_elem(skel->maps.wr_src_drops, &slot, 4, v, sizeof(v), 0)) {
		CHECK_FAIL("reading wr_src_drops[%u]: %s", slot, strerror(errno));
		return 0;
	}
	for (c = 0; c < ncpu; c++)
		if (v[c].n && key_same(&v[c].key, k))
			sum += v[c].n;
	return sum;
}

/*
 * The bucket of key k into *st, as readers see it (drops with those
 * waiting per CPU): 0, or -ENOENT if no way of its set holds it.
 */
static inline int state_find(const struct weir_key *k, struct weir_state *st)
{
	struct weir_way w;
	int err = state_way(k, &w);

	if (!err) {
		*st = w.st;
		st->drops += src_waiting(k);
	}
	return err;
}

/*
 * Empty the way holding key k, as eviction does: the bucket is gone and
 * reads as full again. 0, or -ENOENT if there is none.
 */
static inline int state_forget(const struct weir_key *k)
{
	__u32 idx = state_set_of(k);
	struct weir_set s;
	int i;

	if (state_set_get(idx, &s))
		return -ENOENT;
	i = way_of(&s, k);
	if (i < 0)
		return -ENOENT;
	memset(&s.way[i], 0, sizeof(s.way[i]));
	state_set_put(idx, &s);
	return 0;
}

/* Ways of wr_state that hold a key; the first one found goes to *first if given. */
static inline int state_count(struct weir_key *first)
{
	__u32 idx, sets = state_map_sets();
	struct weir_set s;
	int i, n = 0;

	for (idx = 0; idx < sets; idx++) {
		if (state_set_get(idx, &s)) {
			CHECK_FAIL("reading wr_state[%u]: %s", idx, strerror(errno));
			return n;
		}
		for (i = 0; i < WEIR_WAYS; i++) {
			if (!way_used(&s.way[i]))
				continue;
			if (!n && first)
				*first = s.way[i].key;
			n++;
		}
	}
	return n;
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

/* 2001:db8:<net>::<host> */
/*
 * An entry of a deny or allow trie, as the controller writes it: net/plen
 * (host order for v4, 16 bytes for v6), expiring at expires_ns of the
 * manual clock (0: permanent).
 */
static inline void list_put4(struct bpf_map *m, __u32 net, __u32 plen, __u64 expires_ns)
{
	struct weir_lpm4 k = { .plen = plen, .addr = htonl(net) };
	struct weir_list_val v = { .expires_ns = expires_ns, .plen = plen,
				     .flags = WEIR_LV_RUNTIME };

	if (bpf_map__update_elem(m, &k, sizeof(k), &v, sizeof(v), 0))
		CHECK_FAIL("adding to %s: %s", bpf_map__name(m), strerror(errno));
}

static inline void list_put6(struct bpf_map *m, const __u8 *net, __u32 plen, __u64 expires_ns)
{
	struct weir_lpm6 k = { .plen = plen };
	struct weir_list_val v = { .expires_ns = expires_ns, .plen = plen,
				     .flags = WEIR_LV_RUNTIME };

	memcpy(k.addr, net, 16);
	if (bpf_map__update_elem(m, &k, sizeof(k), &v, sizeof(v), 0))
		CHECK_FAIL("adding to %s: %s", bpf_map__name(m), strerror(errno));
}

static inline void addr6(__u8 *a, __u32 net, __u32 host)
{
	memset(a, 0, 16);
	a[0] = 0x20;
	a[1] = 0x01;
	a[2] = 0x0d;
	a[3] = 0xb8;
	a[4] = net >> 24;
	a[5] = net >> 16;
	a[6] = net >> 8;
	a[7] = net;
	a[12] = host >> 24;
	a[13] = host >> 16;
	a[14] = host >> 8;
	a[15] = host;
}

/*
 * Source src (IPv4, host order) verified at `at`, as wr_sockops records a
 * completed handshake: its wr_verified entry (unless hint_only) and its
 * slot's stamp in wr_verified_hint.
 */
static inline void verify4(__u32 src, __u64 at, int hint_only)
{
	struct weir_verified_key k;
	__u32 slot;

	memset(&k, 0, sizeof(k));
	k.family = 4;
	k.addr[0] = htonl(src);
	if (!hint_only &&
	    bpf_map__update_elem(skel->maps.wr_verified, &k, sizeof(k), &at, sizeof(at), 0))
		CHECK_FAIL("writing wr_verified: %s", strerror(errno));
	slot = wr_verified_slot(&k);
	if (bpf_map__update_elem(skel->maps.wr_verified_hint, &slot, 4, &at, sizeof(at), 0))
		CHECK_FAIL("writing wr_verified_hint: %s", strerror(errno));
}

static inline void tcp4(struct frame *f, __u32 src, __u16 dport, __u8 flags)
{
	struct frame l;

	l4_tcp(&l, dport, flags, 5);
	frame4(f, src, WR_IPPROTO_TCP, &l);
}

static inline void tcp6(struct frame *f, const __u8 *src, __u16 dport, __u8 flags)
{
	struct frame l;

	l4_tcp(&l, dport, flags, 5);
	frame6(f, src, WR_IPPROTO_TCP, &l);
}

static inline void icmp6(struct frame *f, const __u8 *src, __u8 type, __u8 hop)
{
	struct frame l;

	l4_icmp(&l, type, 24);
	eth_ip6(f, src, WR_IPPROTO_ICMPV6, hop, -1, &l);
}

/* ------------------------------------------------------------------------ */
/* Running                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * f once through the TC entry (tc) or the XDP entry: 1 passed, 0 dropped,
 * -2 another verdict; -1 if test_run refused it (-errno in *err).
 */
static inline int run_frame(const struct frame *f, int tc, int *err)
{
	static __u8 out[sizeof(f->b) + 512];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = f->n, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);
	struct bpf_program *prog = tc ? skel->progs.weir_tc : skel->progs.weir_xdp;

	*err = bpf_prog_test_run_opts(bpf_program__fd(prog), &o);
	if (*err)
		return -1;
	if (tc)
		return o.retval == TC_ACT_OK ? 1 : o.retval == TC_ACT_SHOT ? 0 : -2;
	return o.retval == XDP_PASS ? 1 : o.retval == XDP_DROP ? 0 : -2;
}

/* 1 if the program (use_tc) passed the frame, 0 if it dropped it, -1 on error. */
static inline int xmit(const struct frame *f)
{
	int err, v = run_frame(f, use_tc, &err);

	if (v == -1)
		CHECK_FAIL("%s test_run of %zu bytes: %s", use_tc ? "tc" : "xdp", f->n,
			   strerror(-err));
	return v < 0 ? -1 : v;
}

/* Send f n times; how many passed. */
static inline int xmit_n(const struct frame *f, int n)
{
	int i, passed = 0;

	for (i = 0; i < n; i++)
		passed += xmit(f) == 1;
	return passed;
}

/*
 * A thread that runs f through the XDP entry on one CPU, repeat times at
 * once in each of rounds rounds, each round between two waits on bar, so
 * the main thread can set the clock before a round and read counters after.
 */
struct racer {
	int cpu;
	int rounds, repeat;
	struct frame f;
	pthread_barrier_t *bar;
	int err;
};

static inline void *race(void *arg)
{
	struct racer *rc = arg;
	int fd = bpf_program__fd(skel->progs.weir_xdp);
	__u8 out[sizeof(rc->f.b) + 512];
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	CPU_SET(rc->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		rc->err = -errno;
	for (i = 0; i < rc->rounds; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = rc->f.b, .data_size_in = rc->f.n,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = rc->repeat);

		pthread_barrier_wait(rc->bar);
		if (!rc->err)
			rc->err = bpf_prog_test_run_opts(fd, &o);
		pthread_barrier_wait(rc->bar);
	}
	return NULL;
}

#endif /* WEIR_TESTS_BPF_HARNESS_H */
