// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The first stage's cache of refusals (bpf/first.h) in the real BPF object:
 * every verdict the same as the limits alone give (a pure GCRA model of the
 * same trace, packet by packet), a source that leaves the cache exactly when
 * its bucket admits again, nothing cached for a cell with a rule the cache
 * cannot hold, a new config generation forgetting every slot, and the drops
 * the cache takes still counted on their rule and their bucket.
 *
 * As in bpf_datapath.c, each case loads a fresh skeleton with the manual
 * clock and pinning switched off, and builds rule sets by hand the way the
 * controller writes them (tests/bpf_harness.h: the commit sets cache_on and
 * moves cache_gen on as the controller's does).
 */
#include "bpf_harness.h"
#include "../tools/rand.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void check_balance(void)
{
	__u64 pk = g(WEIR_G_PACKETS), non = g(WEIR_G_NON_IP), pas = g(WEIR_G_PASSED),
	      dro = g(WEIR_G_DROPPED);

	CHECK(pk == non + pas + dro, "PACKETS %llu != NON_IP %llu + PASSED %llu + DROPPED %llu",
	      (unsigned long long)pk, (unsigned long long)non, (unsigned long long)pas,
	      (unsigned long long)dro);
	CHECK_EQ(g(WEIR_G_FAULT), 0);
}

static void udp4_to(struct frame *f, __u32 src, __u16 dport)
{
	struct frame l;

	l4_udp(&l, dport, 18);
	frame4(f, src, WR_IPPROTO_UDP, &l);
}

/* udp DPORT, a token bucket per source of rate/s and burst. */
static struct weir_rule *udp_rule(__u16 dport, __u64 rate, __u64 burst)
{
	struct weir_rule *r = add_rule(WEIR_ACT_DROP);

	r->match |= WEIR_M_PROTO | WEIR_M_DPORT;
	r->proto = WR_IPPROTO_UDP;
	r->dport_lo = r->dport_hi = dport;
	new_limit(r, WEIR_ALGO_GCRA, rate, 0, burst, WEIR_COST_PKT, WEIR_KEY_SRC, 32, 128);
	return r;
}

/* One key under limit l of the pure model: its TAT. */
struct mkey {
	__u64 tat;
};

static int model_admits(const struct weir_limit *l, const struct mkey *k, __u64 now, __u64 *next)
{
	return wr_gcra_admit(k->tat, now, wr_gcra_inc(l->interval_fp, 1), l->tolerance, next);
}

/*
 * A random trace of udp/53 packets from nsrc sources against rule r (a
 * per-source bucket, and a rule-wide one with agg): each packet's verdict
 * against the model's, which checks every limit and then charges them all.
 * Returns the packets the cache dropped.
 */
static __u64 trace_against_model(const struct weir_rule *r, int agg, int nsrc, int n,
				 __u64 seed)
{
	struct mkey *src = calloc(nsrc, sizeof(*src)), all = {};
	__u64 now = T0, drops = 0, next_s, next_a;
	uint64_t rng = seed;

	if (!src) {
		CHECK_FAIL("out of memory");
		return 0;
	}
	int i, bad = 0, got, want;
	struct frame f;

	for (i = 0; i < n; i++) {
		int s = (int)(wr_xorshift64s(&rng) % nsrc);
		int a_ok, s_ok;

		/* Mostly close together (over the limit), now and then a pause. */
		now += wr_xorshift64s(&rng) % 64 == 0 ? wr_xorshift64s(&rng) % (400 * MSEC) :
						     wr_xorshift64s(&rng) % (5 * MSEC);
		set_now(now);
		s_ok = model_admits(&r->limits[0], &src[s], now, &next_s);
		a_ok = !agg || model_admits(&r->limits[1], &all, now, &next_a);
		want = s_ok && a_ok;
		if (want) {
			src[s].tat = next_s;
			if (agg)
				all.tat = next_a;
		} else {
			drops++;
		}
		udp4_to(&f, SRC_A + s, 53);
		got = xmit(&f);
		if (got != want && bad++ < 3)
			CHECK_FAIL("packet %d (source %d at +%llu ns): %s, the limits say %s", i, s,
				   (unsigned long long)(now - T0), got ? "passed" : "dropped",
				   want ? "pass" : "drop");
	}
	free(src);
	CHECK(!bad, "%d of %d verdicts differ from the limits'", bad, n);
	CHECK_EQ(g(WEIR_G_DROPPED), drops);
	CHECK_EQ(rstat(0).dropped_pkts, drops);
	/*
	 * Refusals come in spells; all but a spell's first of each source may
	 * be the cache's (a rule-wide spell: a first for every source).
	 */
	CHECK(g(WEIR_G_CACHED) * 3 > drops, "the cache dropped %llu of %llu refused",
	      (unsigned long long)g(WEIR_G_CACHED), (unsigned long long)drops);
	CHECK(g(WEIR_G_CACHED) < drops, "the cache dropped every one of %llu refused",
	      (unsigned long long)drops);
	return g(WEIR_G_CACHED);
}

/* Per-source limit: the trace's verdicts are the limits', and the cache took part. */
HARNESS_CASE(cache_verdicts_per_source)
{
	struct weir_rule *r = udp_rule(53, 20, 4);
	__u64 cached;

	(void)r;
	commit();
	CHECK_EQ(cfg_get().cache_on, WEIR_CACHE_SRC);
	cached = trace_against_model(&rs.rules[0], 0, 3, 3000, 0x1234);
	printf("# per source: %llu of 3000 dropped by the cache\n", (unsigned long long)cached);
}

/* A per-source and a rule-wide bucket: the latest of the two decides when the slot ends. */
HARNESS_CASE(cache_verdicts_two_limits)
{
	struct weir_rule *r = udp_rule(53, 30, 5);
	__u64 cached;

	new_limit(r, WEIR_ALGO_GCRA, 50, 0, 6, WEIR_COST_PKT, WEIR_KEY_ALL, 32, 128);
	commit();
	cached = trace_against_model(&rs.rules[0], 1, 4, 3000, 0x9876);
	printf("# two limits: %llu of 3000 dropped by the cache\n", (unsigned long long)cached);
}

/*
 * A spoofed flood: a random source per packet (of 65536) under a rule-wide
 * limit and a per-source one. The per-source slots rarely meet a source
 * twice; the rule-wide bucket's refusal holds for any source's packet
 * (WEIR_CACHE_ANY), so the cache still takes most refusals, and every
 * verdict is still the limits'.
 */
HARNESS_CASE(cache_verdicts_spoofed_sources)
{
	struct weir_rule *r = udp_rule(53, 10, 2);
	__u64 cached;

	/* Second: the model checks limits[1] as the rule-wide one. */
	new_limit(r, WEIR_ALGO_GCRA, 50, 0, 5, WEIR_COST_PKT, WEIR_KEY_ALL, 32, 128);
	commit();
	CHECK_EQ(cfg_get().cache_on, WEIR_CACHE_SRC | WEIR_CACHE_ANY);
	cached = trace_against_model(&rs.rules[0], 1, 65536, 4000, 0x5eed);
	printf("# spoofed: %llu of 4000 dropped by the cache\n", (unsigned long long)cached);
}

/*
 * A rule that matches on the source: its rule-wide refusal holds only for
 * its sources, so nothing is cached for any source, and a source outside
 * it is never dropped.
 */
HARNESS_CASE(cache_any_source_not_for_src_rules)
{
	struct weir_rule *r = udp_rule(53, 1000, 1000);
	struct frame in, out;

	match_src4(r, SRC_A, 24);
	r->limits[0].key = WEIR_KEY_ALL;
	r->limits[0].rate = 1;
	r->limits[0].burst = 1;
	r->limits[0].interval_fp = wr_gcra_interval(1);
	r->limits[0].tolerance = wr_gcra_tolerance(r->limits[0].interval_fp, 1, WEIR_COST_PKT);
	r->limits[0].agg_slot = next_agg++;
	commit();
	CHECK_EQ(cfg_get().cache_on, WEIR_CACHE_SRC);
	udp4_to(&in, SRC_A, 53);
	udp4_to(&out, SRC_C, 53);
	CHECK_EQ(xmit(&in), 1);
	CHECK_EQ(xmit_n(&in, 10), 0);
	CHECK_EQ(g(WEIR_G_CACHED), 9);
	CHECK_EQ(xmit_n(&out, 10), 10);
	CHECK_EQ(g(WEIR_G_NO_RULE), 10);
}

/* The same through the TC entry. */
HARNESS_CASE(cache_verdicts_tc)
{
	use_tc = 1;
	udp_rule(53, 20, 4);
	commit();
	trace_against_model(&rs.rules[0], 0, 3, 1500, 0x55aa);
	use_tc = 0;
}

/*
 * A source leaves the cache exactly when its bucket admits again: 1 ns
 * before, dropped by the cache; at that time, passed.
 */
HARNESS_CASE(cache_leaves_when_bucket_admits)
{
	struct weir_rule *r = udp_rule(53, 10, 2);
	const struct weir_limit *l = &r->limits[0];
	struct weir_key k = key4(r, 0, SRC_A);
	struct weir_state st;
	__u64 admit, c0;
	struct frame f;

	commit();
	udp4_to(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 2), 2);	/* the burst */
	CHECK_EQ(xmit(&f), 0);		/* refused by the bucket: the slot is filled */
	CHECK_EQ(g(WEIR_G_CACHED), 0);
	if (state_find(&k, &st)) {
		CHECK_FAIL("no bucket for the source");
		return;
	}
	admit = st.tat + wr_gcra_inc(l->interval_fp, 1) - l->tolerance;
	set_now(admit - 1);
	c0 = g(WEIR_G_CACHED);
	CHECK_EQ(xmit(&f), 0);
	CHECK_EQ(g(WEIR_G_CACHED), c0 + 1);
	set_now(admit);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(g(WEIR_G_CACHED), c0 + 1);
}

/* A refusal on one port is not a refusal on another; another source is not the refused one. */
HARNESS_CASE(cache_keyed_by_port_and_source)
{
	struct frame f53, f80, fb;

	udp_rule(53, 10, 1);
	udp_rule(80, 1000, 1000);
	commit();
	udp4_to(&f53, SRC_A, 53);
	udp4_to(&f80, SRC_A, 80);
	udp4_to(&fb, SRC_B, 53);
	CHECK_EQ(xmit(&f53), 1);
	CHECK_EQ(xmit_n(&f53, 5), 0);
	CHECK_EQ(g(WEIR_G_CACHED), 4);
	CHECK_EQ(xmit_n(&f80, 5), 5);
	CHECK_EQ(xmit(&fb), 1);
	CHECK_EQ(g(WEIR_G_CACHED), 4);
}

/*
 * A cell with a rule the cache cannot hold (a dry-run rule, a length
 * match, a source set: `!feed:NAME` of an empty set, every source) is
 * never cached: the refusals are the walk's, every one.
 */
HARNESS_CASE(cache_not_for_other_rules)
{
	static const int kinds[] = { 0, 1, 2 };
	size_t i;

	for (i = 0; i < ARRAY_LEN(kinds); i++) {
		struct weir_rule *o;
		struct frame f;

		rs.nr_rules = 0;
		udp_rule(53, 10, 1);
		o = udp_rule(53, 1000, 1000);
		if (kinds[i] == 0) {
			o->action = WEIR_ACT_DRYRUN;
		} else if (kinds[i] == 2) {
			o->match |= WEIR_M_SRCSET;
			o->srcset = 3 | WEIR_SRCSET_NOT;
		} else {
			o->xmatch = WEIR_X_LEN;
			o->len_lo = 0;
			o->len_hi = 9000;
		}
		commit();
		CHECK_EQ(cfg_get().cache_on, 0);
		udp4_to(&f, SRC_C + (__u32)i, 53);
		CHECK_EQ(xmit(&f), 1);
		CHECK_EQ(xmit_n(&f, 20), 0);
		CHECK_EQ(g(WEIR_G_CACHED), 0);
	}
}

/* A new config generation (a list, a feed, a switch, a commit) forgets every slot. */
HARNESS_CASE(cache_forgotten_on_new_generation)
{
	struct weir_config c;
	struct frame f;
	__u64 c0;

	udp_rule(53, 10, 1);
	commit();
	udp4_to(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 3), 1);
	c0 = g(WEIR_G_CACHED);
	CHECK_EQ(c0, 1);
	/* `allow add` of the source: the controller writes the list, then the config. */
	list_put4(skel->maps.wr_allow4, SRC_A, 32, 0);
	c = cfg_get();
	c.lists |= WEIR_L_ALLOW4;
	c.cache_gen++;
	cfg_put(&c);
	CHECK_EQ(xmit_n(&f, 3), 3);
	CHECK_EQ(g(WEIR_G_ALLOWED), 3);
	CHECK_EQ(g(WEIR_G_CACHED), c0);
}

/*
 * Every drop the cache takes is counted on its rule and on its bucket (with
 * those waiting per CPU, as readers add them), as the walk's refusals are;
 * a rule-wide bucket's too.
 */
HARNESS_CASE(cache_drops_counted_on_bucket)
{
	struct weir_rule *r = udp_rule(53, 1, 1);
	struct weir_key k = key4(r, 0, SRC_A);
	struct weir_rule *ra;
	struct weir_state st;
	struct frame f;
	int i;

	ra = udp_rule(54, 1000000, 1000000);
	ra->limits[0].key = WEIR_KEY_ALL;
	ra->limits[0].rate = 1;
	ra->limits[0].burst = 1;
	ra->limits[0].interval_fp = wr_gcra_interval(1);
	ra->limits[0].tolerance = wr_gcra_tolerance(ra->limits[0].interval_fp, 1, WEIR_COST_PKT);
	ra->limits[0].agg_slot = next_agg++;
	commit();
	udp4_to(&f, SRC_A, 53);
	CHECK_EQ(xmit(&f), 1);
	for (i = 0; i < 101; i++) {
		set_now(T0 + (__u64)i * MSEC);
		CHECK_EQ(xmit(&f), 0);
	}
	CHECK(g(WEIR_G_CACHED) == 100, "cached %llu of 100", (unsigned long long)g(WEIR_G_CACHED));
	CHECK_EQ(rstat(0).dropped_pkts, 101);
	if (state_find(&k, &st)) {
		CHECK_FAIL("no bucket for the source");
		return;
	}
	CHECK(st.drops == 101, "the bucket counts %llu drops of 101", (unsigned long long)st.drops);

	/*
	 * The rule-wide one: SRC_B's first refusal fills its slot and the
	 * any-source slot (the rule does not match on the source), so every
	 * packet of SRC_C is cached from the start.
	 */
	set_now(T0);
	udp4_to(&f, SRC_B, 54);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(xmit_n(&f, 50), 0);
	udp4_to(&f, SRC_C, 54);
	CHECK_EQ(xmit_n(&f, 50), 0);
	CHECK_EQ(g(WEIR_G_CACHED), 100 + 49 + 50);
	st = agg_get(&ra->limits[0]);
	CHECK(st.drops == 100, "the rule-wide bucket counts %llu drops of 100",
	      (unsigned long long)st.drops);
}

/*
 * A bucket evicted while its refusal is cached (emptying its way stands in
 * for eviction): the slot sees it at its next look at the bucket, within
 * WEIR_DROP_BATCH_NS, and the source then meets a full bucket, as the walk
 * would have let it at once.
 */
HARNESS_CASE(cache_sees_eviction)
{
	struct weir_rule *r = udp_rule(53, 1, 2);
	struct weir_key k = key4(r, 0, SRC_A);
	struct frame f;

	commit();
	udp4_to(&f, SRC_A, 53);
	CHECK_EQ(xmit_n(&f, 5), 2);
	CHECK_EQ(g(WEIR_G_CACHED), 2);
	CHECK(!state_forget(&k), "no way holds the bucket");
	/* Within the batch of the slot's last look: still the cached refusal. */
	CHECK_EQ(xmit(&f), 0);
	CHECK_EQ(g(WEIR_G_CACHED), 3);
	set_now(T0 + WEIR_DROP_BATCH_NS);
	CHECK_EQ(xmit_n(&f, 5), 2);
	CHECK_EQ(g(WEIR_G_CACHED), 3 + 2);
	CHECK_EQ(rstat(0).passed_pkts, 4);
	CHECK_EQ(rstat(0).dropped_pkts, 7);
}

int main(void)
{
	int err = harness_start("bpf_cache");

	if (err)
		return err > 0;
	teardown();
	return check_run_all();
}
