// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Source sets of rules (`src feed:NAME`, `src country:..`, `src asn:..`):
 * libweir's placement and fill (user/lib/srcset.c) against the real BPF
 * object's wr_srcset4/wr_srcset6, through bpf_prog_test_run. A rule with a
 * set matches a source inside it and not one outside, IPv4 and IPv6; "!"
 * turns that round; an empty or missing set matches nothing; a new rule
 * set's sets never change what the live rules match until the flip.
 */
#include "bpf_harness.h"
#include "lib/libweir.h"

struct wr_opts opts = { .root = WEIR_DEFAULT_ROOT };

/* Every frame ends passed or dropped; every one here is IP. */
static void check_balance(void)
{
	__u64 pk = g(WEIR_G_PACKETS), pas = g(WEIR_G_PASSED), dro = g(WEIR_G_DROPPED);

	CHECK(pk == pas + dro, "PACKETS %llu != PASSED %llu + DROPPED %llu",
	      (unsigned long long)pk, (unsigned long long)pas, (unsigned long long)dro);
}

/* The pinless maps of the harness's object, as libweir sees maps. */
static struct wr_maps maps_of_skel(void)
{
	struct wr_maps m;
	int *fd = (int *)&m;
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(int); i++)
		fd[i] = -1;
	m.config = bpf_map__fd(skel->maps.wr_config);
	m.rulesets = bpf_map__fd(skel->maps.wr_rulesets);
	m.srcset4 = bpf_map__fd(skel->maps.wr_srcset4);
	m.srcset6 = bpf_map__fd(skel->maps.wr_srcset6);
	return m;
}

/* Parse text as a list into *s (a feed's words: one prefix a line). */
static void set_of(struct wr_feed_set *s, const char *text)
{
	char err[300] = "";

	memset(s, 0, sizeof(*s));
	CHECK(!wr_feed_parse(text, strlen(text), WEIR_FA_DENY, s, err, sizeof(err)), "%s", err);
}

static void fill(__u32 slot, const char *text)
{
	struct wr_maps m = maps_of_skel();
	struct wr_feed_set s;

	set_of(&s, text);
	CHECK_EQ(wr_srcset_fill(&m, slot, &s), 0);
	wr_feed_set_free(&s);
}

/* A rule of set slot `set` (WEIR_SRCSET_NOT allowed): UDP, one packet per source, then none. */
static struct weir_rule *set_rule(__u8 set)
{
	struct weir_rule *r = add_rule(WEIR_ACT_DROP);

	match_proto(r, WR_IPPROTO_UDP);
	r->match |= WEIR_M_SRCSET;
	r->srcset = set;
	new_limit(r, WEIR_ALGO_GCRA, 1, 0, 1, WEIR_COST_PKT, WEIR_KEY_SRC, 32, 128);
	return r;
}

/* Of 4 UDP packets from src: how many passed (1: the rule matched it; 4: it did not). */
static int passed4(__u32 src)
{
	struct frame f, l;

	l4_udp(&l, 53, 18);
	frame4(&f, src, WR_IPPROTO_UDP, &l);
	return xmit_n(&f, 4);
}

static int passed6(const __u8 *src)
{
	struct frame f, l;

	l4_udp(&l, 53, 18);
	frame6(&f, src, WR_IPPROTO_UDP, &l);
	return xmit_n(&f, 4);
}

/* Inside the set: limited; outside: no rule; IPv4 and IPv6, nested prefixes. */
HARNESS_CASE(srcset_inside_and_outside)
{
	__u8 in6[16], out6[16];
	__u64 no_rule;

	fill(3, "198.18.0.0/24\n198.18.7.9\n2001:db8:5::/48\n");
	set_rule(3);
	commit();
	CHECK_EQ(passed4(IP4(198, 18, 0, 1)), 1);
	CHECK_EQ(passed4(IP4(198, 18, 0, 255)), 1);
	CHECK_EQ(passed4(IP4(198, 18, 7, 9)), 1);
	no_rule = g(WEIR_G_NO_RULE);
	CHECK_EQ(passed4(IP4(198, 18, 7, 8)), 4);
	CHECK_EQ(passed4(IP4(198, 18, 1, 1)), 4);
	CHECK_EQ(passed4(IP4(198, 19, 0, 1)), 4);
	CHECK_EQ(g(WEIR_G_NO_RULE) - no_rule, 12);
	addr6(in6, 0x00050001, 7);	/* 2001:db8:5:1::7, in the /48 */
	addr6(out6, 0x00060000, 7);	/* 2001:db8:6::7 */
	CHECK_EQ(passed6(in6), 1);
	CHECK_EQ(passed6(out6), 4);
	/* Four sources inside, each limited to 1 of its 4. */
	CHECK_EQ(rstat(0).dropped_pkts, 4 * 3);
}

/* "!": every source but the set's. */
HARNESS_CASE(srcset_negated)
{
	__u8 in6[16], out6[16];

	fill(0, "198.18.0.0/24\n2001:db8:5::/48\n");
	set_rule(0 | WEIR_SRCSET_NOT);
	commit();
	CHECK_EQ(passed4(IP4(198, 18, 0, 1)), 4);
	CHECK_EQ(passed4(IP4(198, 18, 1, 1)), 1);
	addr6(in6, 0x00050000, 1);
	addr6(out6, 0x00070000, 1);
	CHECK_EQ(passed6(in6), 4);
	CHECK_EQ(passed6(out6), 1);
}

/*
 * A slot without an inner map (never filled, or a family the set has none
 * of) and a set emptied by a refill match nothing; negated, everything.
 */
HARNESS_CASE(srcset_empty_and_missing)
{
	__u8 a6[16];

	set_rule(5);		/* never filled */
	set_rule(6);		/* IPv4 only: no IPv6 trie */
	fill(6, "198.18.9.0/24\n");
	commit();
	addr6(a6, 0x00090000, 1);
	CHECK_EQ(passed4(IP4(198, 18, 1, 1)), 4);
	CHECK_EQ(passed6(a6), 4);
	CHECK_EQ(passed4(IP4(198, 18, 9, 1)), 1);
	/* Refilled with nothing, slot 6 has no inner map and matches nothing. */
	fill(6, "");
	CHECK_EQ(passed4(IP4(198, 18, 9, 2)), 4);
	CHECK_EQ(rstat(0).dropped_pkts, 0);
	CHECK_EQ(rstat(1).dropped_pkts, 3);
	/* Negated, a missing set matches every source. */
	rs.nr_rules = 0;
	set_rule(7 | WEIR_SRCSET_NOT);
	commit();
	CHECK_EQ(passed4(IP4(198, 18, 1, 2)), 1);
	CHECK_EQ(passed6(a6), 1);
}

/* What resolve() reads instead of the set's own words (a feed's next list); NULL: none. */
static const char *next_list;

/* The resolver the tests hand wr_srcsets_load: a set's words are its prefix. */
static int resolve(void *ctx, const char *set, struct wr_feed_set *out, char *why, size_t len)
{
	char text[64];

	(*(int *)ctx)++;
	if (next_list)
		return wr_feed_parse(next_list, strlen(next_list), WEIR_FA_DENY, out, why, len);
	if (!strcmp(set, "feed:broken")) {
		snprintf(why, len, "src %s: unknown feed", set);
		return -ENOENT;
	}
	/* feed:198.18.N.0/24 */
	snprintf(text, sizeof(text), "%s\n", set + 5);
	return wr_feed_parse(text, strlen(text), WEIR_FA_DENY, out, why, len);
}

/*
 * A commit's sets beside the live ones: a set both name keeps its slot, a
 * new one takes a slot the live rules do not name (so the live rules
 * still match what they did until the flip), and the release after the
 * flip empties the slots no rule names. A set that cannot be read fails
 * the load with its words.
 */
HARNESS_CASE(srcset_placed_beside_live)
{
	struct wr_maps m = maps_of_skel();
	static struct weir_ruleset next;
	char why[300] = "";
	__u32 slot, id;
	int calls = 0;

	/* Live: rule0 on feed:198.18.1.0/24 in slot 0, rule1 on feed:198.18.2.0/24 in slot 1. */
	set_rule(0);
	set_rule(0);
	CHECK_EQ(wr_srcset_put(&rs, 0, "feed:198.18.1.0/24", why, sizeof(why)), 0);
	CHECK_EQ(wr_srcset_put(&rs, 1, "feed:198.18.2.0/24", why, sizeof(why)), 0);
	CHECK_EQ(wr_srcsets_load(&m, &rs, resolve, &calls, why, sizeof(why)), 0);
	CHECK_EQ(calls, 2);
	commit();
	CHECK_EQ(passed4(IP4(198, 18, 1, 1)), 1);
	CHECK_EQ(passed4(IP4(198, 18, 2, 1)), 1);
	CHECK_EQ(passed4(IP4(198, 18, 3, 1)), 4);

	/* Next: rule0's set kept, rule1 on a new set; written, not yet flipped. */
	next = rs;
	CHECK_EQ(wr_srcset_put(&next, 1, "feed:198.18.3.0/24", why, sizeof(why)), 0);
	/* In next's own slots it took the one the live rule1 still reads. */
	CHECK_EQ(next.rules[1].srcset, rs.rules[1].srcset);
	CHECK_EQ(wr_srcsets_load(&m, &next, resolve, &calls, why, sizeof(why)), 0);
	CHECK_EQ(next.rules[0].srcset, rs.rules[0].srcset);
	CHECK(next.rules[1].srcset != rs.rules[0].srcset &&
	      next.rules[1].srcset != rs.rules[1].srcset,
	      "the new set went to slot %u, which the live rules name", next.rules[1].srcset);
	CHECK(!strcmp(next.srcsets[next.rules[1].srcset], "feed:198.18.3.0/24"), "\"%s\"",
	      next.srcsets[next.rules[1].srcset]);
	/* The live rules still match as before. */
	CHECK_EQ(passed4(IP4(198, 18, 2, 2)), 1);
	CHECK_EQ(passed4(IP4(198, 18, 3, 2)), 4);
	{
		__u32 old1 = rs.rules[1].srcset;

		rs = next;
		commit();
		wr_srcsets_release(&m, &rs);
		slot = old1;
	}
	CHECK_EQ(passed4(IP4(198, 18, 2, 3)), 4);
	CHECK_EQ(passed4(IP4(198, 18, 3, 3)), 1);
	CHECK_EQ(passed4(IP4(198, 18, 1, 3)), 1);
	/* The old set's slot went with the release. */
	CHECK(bpf_map_lookup_elem(m.srcset4, &slot, &id) && errno == ENOENT,
	      "slot %u kept its map after the release", slot);

	/* A set the live rules have, unreadable now: it keeps what it held. */
	next = rs;
	next_list = "not a prefix\n";
	CHECK_EQ(wr_srcsets_load(&m, &next, resolve, &calls, why, sizeof(why)), 0);
	next_list = NULL;
	CHECK_EQ(wr_srcset_entries(&m, next.rules[1].srcset, 4), 1);
	CHECK_EQ(passed4(IP4(198, 18, 3, 5)), 1);

	/* A new set that cannot be read: the load fails, naming it. */
	next = rs;
	CHECK_EQ(wr_srcset_put(&next, 1, "feed:broken", why, sizeof(why)), 0);
	CHECK_EQ(wr_srcsets_load(&m, &next, resolve, &calls, why, sizeof(why)), -ENOENT);
	CHECK(strstr(why, "feed:broken"), "\"%s\"", why);
	CHECK_EQ(passed4(IP4(198, 18, 3, 4)), 1);
}

/* A set's refill in place (a feed's refresh): the live rule matches the new prefixes. */
HARNESS_CASE(srcset_refilled_in_place)
{
	struct wr_maps m = maps_of_skel();
	char why[300] = "";
	int calls = 0;

	set_rule(0);
	CHECK_EQ(wr_srcset_put(&rs, 0, "feed:198.18.1.0/24", why, sizeof(why)), 0);
	CHECK_EQ(wr_srcsets_load(&m, &rs, resolve, &calls, why, sizeof(why)), 0);
	commit();
	CHECK_EQ(passed4(IP4(198, 18, 1, 1)), 1);
	/* The feed's next list: another /24 and an IPv6 prefix. */
	next_list = "198.18.9.0/24\n198.18.10.0/24\n2001:db8:9::/48\n";
	CHECK_EQ(wr_srcsets_refill(&m, "feed:198.18.1.0/24", resolve, &calls, why, sizeof(why)),
		 1);
	CHECK_EQ(wr_srcsets_refill(&m, "feed:other", resolve, &calls, why, sizeof(why)), 0);
	next_list = NULL;
	CHECK_EQ(wr_srcset_entries(&m, 0, 4), 2);
	CHECK_EQ(wr_srcset_entries(&m, 0, 6), 1);
	CHECK_EQ(passed4(IP4(198, 18, 1, 2)), 4);
	CHECK_EQ(passed4(IP4(198, 18, 10, 2)), 1);
}

int main(void)
{
	int err;

	err = harness_start("bpf_srcset");
	if (err)
		return err > 0;
	teardown();
	return check_run_all();
}
