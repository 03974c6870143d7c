// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Blocklist feeds: libweir's parser and map builder (user/lib/feeds.c)
 * against the real BPF object's feed maps, through bpf_prog_test_run.
 * The builder flattens IPv4 into /24 states and split-/24 exceptions; the
 * cases check it against a plain longest-prefix search over the same
 * entries, for random sets of prefixes, both through the library's own
 * lookup and through packets.
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
	m.deny4 = bpf_map__fd(skel->maps.wr_deny4);
	m.deny6 = bpf_map__fd(skel->maps.wr_deny6);
	m.allow4 = bpf_map__fd(skel->maps.wr_allow4);
	m.allow6 = bpf_map__fd(skel->maps.wr_allow6);
	m.feed_blk = bpf_map__fd(skel->maps.wr_feed_blk);
	m.feed_host = bpf_map__fd(skel->maps.wr_feed_host);
	m.feed6 = bpf_map__fd(skel->maps.wr_feed6);
	return m;
}

static void udp4(struct frame *f, __u32 src)
{
	struct frame l;

	l4_udp(&l, 53, 18);
	frame4(f, src, WR_IPPROTO_UDP, &l);
}

static void udp6(struct frame *f, const __u8 *src)
{
	struct frame l;

	l4_udp(&l, 53, 18);
	frame6(f, src, WR_IPPROTO_UDP, &l);
}

/* Parse text as a feed of action a, appended to *all; the parse's return. */
static int feed(struct wr_feed_set *all, const char *text, int a, char *err, size_t len)
{
	struct wr_feed_set one = { 0 };
	int r = wr_feed_parse(text, strlen(text), a, &one, err, len);

	if (!r)
		r = wr_feed_set_append(all, &one);
	wr_feed_set_free(&one);
	return r;
}

static int apply(struct wr_feed_set *all, struct wr_feed_stats *st)
{
	struct wr_maps m = maps_of_skel();

	return wr_feed_apply(&m, all, st);
}

/* What the feeds say of a host address, through the data path: 0 passed, 1 denied. */
static int judged_deny4(__u32 src)
{
	struct frame f;

	udp4(&f, src);
	return xmit(&f) == 0;
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                  */
/* ------------------------------------------------------------------------ */

HARNESS_CASE(feeds_parse_formats)
{
	static const char text[] =
		"# FireHOL netset header\n"
		"; Spamhaus DROP List 2024/01/01\n"
		"198.18.1.0/24 ; SBL123456\n"
		"198.18.2.7\n"
		"  198.18.3.0/25\t# trailing comment\r\n"
		"\n"
		"{\"cidr\":\"198.18.4.0/22\",\"sblid\":\"SBL1\",\"rir\":\"ripencc\"}\n"
		"{\"type\":\"metadata\",\"timestamp\":1700000000,\"size\":3}\n"
		"2001:db8:1::/48\n"
		"2001:db8:2::1";
	struct wr_feed_set s = { 0 };
	char err[300] = "";

	CHECK_EQ(wr_feed_parse(text, strlen(text), WEIR_FA_DENY, &s, err, sizeof(err)), 0);
	CHECK(!err[0], "error \"%s\"", err);
	CHECK_EQ(s.n, 6);
	if (s.n == 6) {
		CHECK_EQ(s.v[0].plen, 24);
		CHECK_EQ(s.v[1].plen, 32);
		CHECK_EQ(s.v[2].plen, 25);
		CHECK_EQ(s.v[3].plen, 22);
		CHECK_EQ(s.v[4].family, 6);
		CHECK_EQ(s.v[4].plen, 48);
		CHECK_EQ(s.v[5].plen, 128);
		CHECK_EQ(s.v[3].addr[0], htonl(IP4(198, 18, 4, 0)));
		CHECK_EQ(s.v[0].action, WEIR_FA_DENY);
	}
	wr_feed_set_free(&s);
}

/* Each bad list: refused whole, with its line named. */
HARNESS_CASE(feeds_parse_rejects)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "198.18.1.0/24\n198.18.1.300\n", "line 2: '198.18.1.300' is not" },
		{ "198.18.1.1/24\n", "line 1: '198.18.1.1/24' is not an address or a prefix "
				     "with its host bits clear" },
		{ "# all\n0.0.0.0/0\n", "line 2: 0.0.0.0/0 would list every IPv4 source" },
		{ "::/0\n", "line 1: ::/0 would list every IPv6 source" },
		{ "198.18.1.0/24 198.18.2.0/24\n", "line 1: '198.18.2.0/24' after the prefix" },
		{ "198.18.1.0/24\n{\"sblid\":1,\"cidr\":5}\n", "line 2: a JSON line without" },
		{ "198.18.1.0/24\n{broken\n", "line 2: a JSON line without" },
		{ "<html><body>503 Service Unavailable</body></html>\n", "line 1: '<html><body>503" },
		{ "198.18.1.0/24\n\0" "198.18.2.0/24\n", "a NUL byte at offset 14" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct wr_feed_set s = { 0 };
		char err[300] = "";
		/* The NUL case's text is longer than strlen says. */
		size_t len = i == ARRAY_SIZE(bad) - 1 ? 29 : strlen(bad[i].text);
		int r = wr_feed_parse(bad[i].text, len, WEIR_FA_DENY, &s, err, sizeof(err));

		CHECK(r == -EINVAL, "list %zu: returned %d", i, r);
		CHECK(!strncmp(err, bad[i].want, strlen(bad[i].want)), "list %zu: \"%s\", want \"%s\"",
		      i, err, bad[i].want);
		CHECK(s.n == 0 && !s.v, "list %zu: entries kept after a failure", i);
	}
	{
		/* A line longer than a line may be. */
		size_t n = 5000;
		char *t = malloc(n + 2);
		struct wr_feed_set s = { 0 };
		char err[300] = "";

		memset(t, '1', n);
		t[n] = '\n';
		t[n + 1] = '\0';
		CHECK_EQ(wr_feed_parse(t, n + 1, WEIR_FA_DENY, &s, err, sizeof(err)), -EINVAL);
		CHECK(strstr(err, "line 1: longer than") != NULL, "\"%s\"", err);
		free(t);
	}
}

/* limit-class N: N from 0 to 3, one word after it, nothing else; names back. */
HARNESS_CASE(feeds_class_parse)
{
	static const char *const bad[] = {
		"limit-class 4", "limit-class x", "limit-class", "limit-class ", "limit-class 1x",
		"limit-class -1", "limit-class 10", "limit-class  1", "limit-classes 1", "class 1",
	};
	size_t i;
	int c;

	for (c = 0; c <= WEIR_MAX_CLASS; c++) {
		char s[32];

		snprintf(s, sizeof(s), "limit-class %d", c);
		CHECK_EQ(wr_feed_class_parse(s), WEIR_FA_CLASS_OF(c));
		CHECK(wr_feed_class_name(WEIR_FA_CLASS_OF(c)) &&
			      !strcmp(wr_feed_class_name(WEIR_FA_CLASS_OF(c)), s),
		      "name of class %d", c);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK(wr_feed_class_parse(bad[i]) == -EINVAL, "\"%s\" accepted", bad[i]);
	CHECK(!wr_feed_class_name(WEIR_FA_DENY), "deny named as a class");
	CHECK(!wr_feed_class_name(WEIR_FA_ALLOW), "allow named as a class");
	CHECK(!wr_feed_class_name(WEIR_FA_NONE), "none named as a class");
}

/* ------------------------------------------------------------------------ */
/* The data path                                                            */
/* ------------------------------------------------------------------------ */

/*
 * Overlaps resolved as the longest prefix says, deny winning a tie; the
 * operator's allow beats a feed's deny and the operator's deny a feed's
 * allow; counters and the capture reason's counters.
 */
HARNESS_CASE(feeds_verdicts)
{
	struct wr_feed_set all = { 0 };
	struct wr_feed_stats st;
	char err[300] = "";
	__u8 a6[16], b6[16];
	struct frame f;

	CHECK_EQ(feed(&all, "198.18.0.0/16\n198.18.9.7\n198.18.10.0/25\n2001:db8:5::/48\n",
		      WEIR_FA_DENY, err, sizeof(err)), 0);
	CHECK_EQ(feed(&all, "198.18.9.0/24\n198.18.10.0/24\n198.18.11.0/24\n2001:db8:5:1::/64\n",
		      WEIR_FA_ALLOW, err, sizeof(err)), 0);
	/* The same /24 in a deny feed too: deny wins the tie. */
	CHECK_EQ(feed(&all, "198.18.11.0/24\n", WEIR_FA_DENY, err, sizeof(err)), 0);
	/* Before any apply: nothing listed, no lookups. */
	CHECK_EQ(judged_deny4(IP4(198, 18, 1, 1)), 0);
	CHECK_EQ(apply(&all, &st), 0);
	CHECK_EQ(st.prefixes4, 6);
	CHECK_EQ(st.prefixes6, 2);
	CHECK_EQ(st.split_blocks, 2);

	CHECK_EQ(judged_deny4(IP4(198, 18, 1, 1)), 1);	/* the /16 */
	CHECK_EQ(judged_deny4(IP4(198, 18, 9, 6)), 0);	/* the allow /24 inside it */
	CHECK_EQ(judged_deny4(IP4(198, 18, 9, 7)), 1);	/* a deny /32 inside that */
	CHECK_EQ(judged_deny4(IP4(198, 18, 10, 5)), 1);	/* a deny /25 inside an allow /24 */
	CHECK_EQ(judged_deny4(IP4(198, 18, 10, 200)), 0);
	CHECK_EQ(judged_deny4(IP4(198, 18, 11, 1)), 1);	/* the tie */
	CHECK_EQ(judged_deny4(IP4(198, 19, 0, 1)), 0);	/* outside */
	addr6(a6, 0x00050000, 9);			/* 2001:db8:5::9 */
	addr6(b6, 0x00050001, 9);			/* 2001:db8:5:1::9 */
	udp6(&f, a6);
	CHECK_EQ(xmit(&f), 0);
	udp6(&f, b6);
	CHECK_EQ(xmit(&f), 1);
	CHECK_EQ(g(WEIR_G_FEED_DENIED), 5);
	CHECK_EQ(g(WEIR_G_FEED_ALLOWED), 3);

	/* The operator's lists come first. */
	{
		struct wr_maps m = maps_of_skel();
		struct wr_cidr c;
		bool kept;

		parse_cidr("198.18.1.1", &c);
		CHECK_EQ(wr_list_add(&m, false, &c, 0, &kept), 0);
		parse_cidr("198.18.9.6", &c);
		CHECK_EQ(wr_list_add(&m, true, &c, 0, &kept), 0);
		/* The operator's list bits leave the feeds' bits alone. */
		CHECK((cfg_get().lists & (WEIR_L_FEED4 | WEIR_L_FEED6)) ==
			      (WEIR_L_FEED4 | WEIR_L_FEED6),
		      "lists 0x%x", cfg_get().lists);
	}
	CHECK_EQ(judged_deny4(IP4(198, 18, 1, 1)), 0);
	CHECK_EQ(judged_deny4(IP4(198, 18, 9, 6)), 1);
	CHECK_EQ(g(WEIR_G_DENIED), 1);
	CHECK_EQ(g(WEIR_G_ALLOWED), 1);
	wr_feed_set_free(&all);
}

/* Shedding thresholds of classes 0..3 and the class of traffic no rule matches. */
static void shed_set(__u64 t0, __u64 t1, __u64 t2, __u64 t3, __u32 default_class)
{
	struct weir_shed sh;
	__u32 zero = 0;

	memset(&sh, 0, sizeof(sh));
	sh.threshold[0] = t0;
	sh.threshold[1] = t1;
	sh.threshold[2] = t2;
	sh.threshold[3] = t3;
	sh.default_class = default_class;
	if (bpf_map__update_elem(skel->maps.wr_shed, &zero, 4, &sh, sizeof(sh), 0))
		CHECK_FAIL("writing wr_shed: %s", strerror(errno));
}

/* Class cls's packets seen and shed, summed over CPUs. */
static void class_seen(__u32 cls, __u64 *pkts, __u64 *shed)
{
	struct weir_class_stats v[ncpu];
	int c;

	*pkts = *shed = 0;
	if (bpf_map__lookup_elem(skel->maps.wr_class_stats, &cls, 4, v, sizeof(v), 0)) {
		CHECK_FAIL("reading wr_class_stats[%u]: %s", cls, strerror(errno));
		return;
	}
	for (c = 0; c < ncpu; c++) {
		*pkts += v[c].pkts;
		*shed += v[c].shed_pkts;
	}
}

/* The live feeds' answer for a host address, through the library. */
static int lookup(const char *addr)
{
	struct wr_maps m = maps_of_skel();
	struct wr_cidr c;

	if (parse_cidr(addr, &c)) {
		CHECK_FAIL("bad address %s", addr);
		return -1;
	}
	return wr_feed_lookup(&m, &c);
}

/*
 * limit-class: a listed source is shed as the feed's class, not its rule's
 * nor the default class. With class 3 shed whole and classes 0..2 not at
 * all, a class-3 source drops and a class-1 source passes. Overlaps: the
 * longest prefix first; on the same prefix deny, then the higher class,
 * then allow. A v4 host, a whole /24, a /22 of whole /24s, v6. In calm
 * (no threshold) every classed source passes.
 */
HARNESS_CASE(feeds_limit_class)
{
	static const struct {
		const char *addr;
		int want;	/* what the library's lookup says */
		int passed;	/* 1: passed, 0: shed or denied */
	} probes[] = {
		{ "198.18.30.1", WEIR_FA_CLASS_OF(3), 0 },	/* a class-3 /24 */
		{ "198.18.31.5", WEIR_FA_CLASS_OF(3), 0 },	/* a class-3 host ... */
		{ "198.18.31.6", WEIR_FA_CLASS_OF(1), 1 },	/* ... in a class-1 /24 */
		{ "198.18.41.7", WEIR_FA_CLASS_OF(3), 0 },	/* a class-3 /22's third /24 */
		{ "198.18.32.1", WEIR_FA_CLASS_OF(1), 1 },	/* a class-1 /24 */
		{ "198.18.33.1", WEIR_FA_DENY, 0 },		/* deny beats class 3 */
		{ "198.18.34.1", WEIR_FA_CLASS_OF(3), 0 },	/* class 3 beats class 2 */
		{ "198.18.35.1", WEIR_FA_CLASS_OF(2), 1 },	/* class 2 beats class 0 */
		{ "198.18.39.1", WEIR_FA_CLASS_OF(0), 1 },	/* a class-0 /24 */
		{ "198.18.36.1", WEIR_FA_CLASS_OF(1), 1 },	/* class 1 beats allow */
		{ "198.18.37.9", WEIR_FA_CLASS_OF(3), 0 },	/* a class-3 host ... */
		{ "198.18.37.10", WEIR_FA_ALLOW, 1 },		/* ... in an allow /24 */
		{ "198.18.38.129", WEIR_FA_CLASS_OF(3), 0 },	/* a class-3 /25 ... */
		{ "198.18.38.1", WEIR_FA_DENY, 0 },		/* ... in a deny /24 */
		{ "198.18.50.1", WEIR_FA_NONE, 1 },		/* not listed: default class 1 */
		{ "2001:db8:30::9", WEIR_FA_CLASS_OF(3), 0 },
		{ "2001:db8:30:1::9", WEIR_FA_CLASS_OF(1), 1 },	/* the longer prefix */
		{ "2001:db8:31::9", WEIR_FA_DENY, 0 },		/* deny beats class 3 */
		{ "2001:db8:32::9", WEIR_FA_NONE, 1 },
	};
	struct wr_feed_set all = { 0 };
	struct wr_feed_stats st;
	char err[300] = "";
	__u64 p1, s1, p3, s3, p0, s0, classed;
	size_t i;

	CHECK_EQ(feed(&all, "198.18.30.0/24\n198.18.31.5\n198.18.40.0/22\n198.18.33.0/24\n"
		      "198.18.34.0/24\n198.18.37.9\n198.18.38.128/25\n2001:db8:30::/48\n"
		      "2001:db8:31::/48\n", WEIR_FA_CLASS_OF(3), err, sizeof(err)), 0);
	CHECK_EQ(feed(&all, "198.18.31.0/24\n198.18.32.0/24\n198.18.36.0/24\n"
		      "2001:db8:30:1::/64\n", WEIR_FA_CLASS_OF(1), err, sizeof(err)), 0);
	CHECK_EQ(feed(&all, "198.18.34.0/24\n198.18.35.0/24\n", WEIR_FA_CLASS_OF(2), err,
		      sizeof(err)), 0);
	CHECK_EQ(feed(&all, "198.18.35.0/24\n198.18.39.0/24\n", WEIR_FA_CLASS_OF(0), err,
		      sizeof(err)), 0);
	CHECK_EQ(feed(&all, "198.18.33.0/24\n198.18.38.0/24\n2001:db8:31::/48\n", WEIR_FA_DENY,
		      err, sizeof(err)), 0);
	CHECK_EQ(feed(&all, "198.18.36.0/24\n198.18.37.0/24\n", WEIR_FA_ALLOW, err,
		      sizeof(err)), 0);
	CHECK_EQ(apply(&all, &st), 0);
	/*
	 * Split by a longer prefix: 31, 37 and 38. Hash entries: one per classed
	 * /24 that nothing splits (30, 32, 34, 35, 36, 39, 40-43: 11), and the
	 * split ones' /24 keys and exceptions (31: 2, 37: 2, 38: 1 + 128).
	 */
	CHECK_EQ(st.split_blocks, 3);
	CHECK_EQ(st.host_entries, 143);

	for (i = 0; i < ARRAY_SIZE(probes); i++) {
		int got = lookup(probes[i].addr);

		CHECK(got == probes[i].want, "%s: lookup %d, want %d", probes[i].addr, got,
		      probes[i].want);
	}

	/* Under load: class 3 shed whole, classes 0..2 not at all; no rule: default 1. */
	shed_set(0, 0, 0, 1ULL << 32, 1);
	for (i = 0; i < ARRAY_SIZE(probes); i++) {
		struct wr_cidr c;
		struct frame f;

		parse_cidr(probes[i].addr, &c);
		if (c.family == 4)
			udp4(&f, ntohl(c.addr[0]));
		else
			udp6(&f, (const __u8 *)c.addr);
		CHECK(xmit(&f) == probes[i].passed, "%s: %s under load", probes[i].addr,
		      probes[i].passed ? "dropped" : "passed");
	}
	/* 30.1, 31.5, 41.7, 34.1, 37.9, 38.129 and 2001:db8:30::9 shed as class 3. */
	class_seen(3, &p3, &s3);
	CHECK_EQ(p3, 7);
	CHECK_EQ(s3, 7);
	CHECK_EQ(g(WEIR_G_SHED), 7);
	class_seen(1, &p1, &s1);
	/* 31.6, 32.1, 36.1, 2001:db8:30:1::9, and the unlisted 50.1 and 2001:db8:32::9 */
	CHECK_EQ(p1, 6);
	CHECK_EQ(s1, 0);
	classed = g(WEIR_G_FEED_CLASSED);
	CHECK_EQ(classed, 13);
	CHECK_EQ(g(WEIR_G_FEED_DENIED), 3);
	CHECK_EQ(g(WEIR_G_FEED_ALLOWED), 1);

	/* A rule's class gives way to the feed's: a class-0 rule over all of 198.18.0.0/16. */
	{
		struct weir_rule *r = add_rule(WEIR_ACT_DROP);
		struct frame f;

		r->class = 0;
		match_src4(r, IP4(198, 18, 0, 0), 16);
		new_limit(r, WEIR_ALGO_GCRA, 1000000000, 0, 1000000000, WEIR_COST_PKT,
			  WEIR_KEY_ALL, 32, 128);
		commit();
		udp4(&f, IP4(198, 18, 30, 1));
		CHECK_EQ(xmit(&f), 0);		/* the feed's class 3 */
		udp4(&f, IP4(198, 18, 50, 1));
		CHECK_EQ(xmit(&f), 1);		/* the rule's class 0 */
		class_seen(0, &p0, &s0);
		CHECK_EQ(p0, 2);		/* 39.1 in the probes, 50.1 here */
		class_seen(3, &p3, &s3);
		CHECK_EQ(s3, 8);
		/* The same rule of class 3: its unlisted source shed, a lower feed class spared. */
		r->class = 3;
		commit();
		udp4(&f, IP4(198, 18, 50, 1));
		CHECK_EQ(xmit(&f), 0);		/* the rule's class 3 */
		udp4(&f, IP4(198, 18, 32, 1));
		CHECK_EQ(xmit(&f), 1);		/* the feed's class 1 */
		udp4(&f, IP4(198, 18, 39, 1));
		CHECK_EQ(xmit(&f), 1);		/* the feed's class 0 */
		class_seen(0, &p0, &s0);
		CHECK_EQ(p0, 3);		/* 50.1 and 39.1 before, 39.1 now */
		class_seen(3, &p3, &s3);
		CHECK_EQ(s3, 9);
	}

	/* In calm nothing is shed: the classed sources are served. */
	shed_set(0, 0, 0, 0, 1);
	for (i = 0; i < ARRAY_SIZE(probes); i++) {
		struct wr_cidr c;
		struct frame f;

		if (probes[i].want == WEIR_FA_DENY)
			continue;
		parse_cidr(probes[i].addr, &c);
		if (c.family == 4)
			udp4(&f, ntohl(c.addr[0]));
		else
			udp6(&f, (const __u8 *)c.addr);
		CHECK(xmit(&f) == 1, "%s: dropped in calm", probes[i].addr);
	}
	CHECK_EQ(g(WEIR_G_SHED), 9);
	wr_feed_set_free(&all);
}

/*
 * A verified source keeps its sparing: a rule of class 1 with
 * verified-class 0 over sources a limit-class 3 feed lists, class 3 shed
 * whole. The verified one passes as class 0, the other is shed as the
 * feed's class 3 (not the rule's 1).
 */
HARNESS_CASE(feeds_limit_class_verified)
{
	struct wr_feed_set all = { 0 };
	struct wr_feed_stats st;
	__u64 at = T0 - 10 * SEC;
	struct weir_rule *r;
	char err[300] = "";
	struct frame f;

	CHECK_EQ(feed(&all, "198.18.1.0/24\n198.18.2.0/24\n", WEIR_FA_CLASS_OF(3), err,
		      sizeof(err)), 0);
	CHECK_EQ(apply(&all, &st), 0);
	r = add_rule(WEIR_ACT_DROP);
	match_proto(r, WR_IPPROTO_TCP);
	r->class = 1;
	r->verified_class = 0 + 1;
	new_limit(r, WEIR_ALGO_GCRA, 1000000, 0, 1000000, WEIR_COST_PKT, WEIR_KEY_ALL, 0, 0);
	commit();
	shed_set(0, 0, 0, 1ULL << 32, 1);
	CFG_SET(verified_ttl_ns, 60 * SEC);
	verify4(SRC_A, at, 0);

	tcp4(&f, SRC_A, 80, WEIR_TCP_ACK);	/* 198.18.1.1, verified */
	CHECK_EQ(xmit_n(&f, 10), 10);
	tcp4(&f, SRC_C, 80, WEIR_TCP_ACK);	/* 198.18.2.3, not verified */
	CHECK_EQ(xmit_n(&f, 10), 0);
	CHECK_EQ(g(WEIR_G_VERIFIED), 10);
	CHECK_EQ(g(WEIR_G_SHED), 10);
	CHECK_EQ(g(WEIR_G_FEED_CLASSED), 20);
	wr_feed_set_free(&all);
}

/*
 * Each apply writes the other generation and flips WEIR_L_FEED_GEN; the
 * old generation's maps are gone from their slots after it; an empty set
 * clears everything.
 */
HARNESS_CASE(feeds_generations)
{
	struct wr_feed_set a = { 0 }, b = { 0 }, none = { 0 };
	struct wr_feed_stats st;
	char err[300] = "";
	__u32 id, slot;
	int fd_blk = bpf_map__fd(skel->maps.wr_feed_blk);
	int fd6 = bpf_map__fd(skel->maps.wr_feed6);

	CHECK_EQ(feed(&a, "198.18.20.0/24\n2001:db8:20::/48\n", WEIR_FA_DENY, err, sizeof(err)), 0);
	CHECK_EQ(feed(&b, "198.18.21.0/24\n", WEIR_FA_DENY, err, sizeof(err)), 0);
	CHECK_EQ(apply(&a, &st), 0);
	CHECK(cfg_get().lists & WEIR_L_FEED_GEN, "first apply into slot 1: 0x%x", cfg_get().lists);
	slot = 0;
	CHECK(bpf_map_lookup_elem(fd_blk, &slot, &id) && errno == ENOENT, "slot 0 holds a map");
	slot = 1;
	CHECK(!bpf_map_lookup_elem(fd_blk, &slot, &id), "slot 1 empty");
	CHECK(!bpf_map_lookup_elem(fd6, &slot, &id), "IPv6 slot 1 empty");
	CHECK_EQ(judged_deny4(IP4(198, 18, 20, 1)), 1);
	CHECK_EQ(judged_deny4(IP4(198, 18, 21, 1)), 0);

	CHECK_EQ(apply(&b, &st), 0);
	CHECK(!(cfg_get().lists & WEIR_L_FEED_GEN), "second apply into slot 0");
	CHECK(cfg_get().lists & WEIR_L_FEED4, "IPv4 bit");
	CHECK(!(cfg_get().lists & WEIR_L_FEED6), "IPv6 bit with no IPv6 entries");
	slot = 1;
	CHECK(bpf_map_lookup_elem(fd_blk, &slot, &id) && errno == ENOENT, "old slot kept");
	CHECK(bpf_map_lookup_elem(fd6, &slot, &id) && errno == ENOENT, "old IPv6 slot kept");
	CHECK_EQ(judged_deny4(IP4(198, 18, 20, 1)), 0);
	CHECK_EQ(judged_deny4(IP4(198, 18, 21, 1)), 1);

	CHECK_EQ(apply(&none, &st), 0);
	CHECK((cfg_get().lists & (WEIR_L_FEED4 | WEIR_L_FEED6)) == 0, "bits left: 0x%x",
	      cfg_get().lists);
	for (slot = 0; slot < 2; slot++)
		CHECK(bpf_map_lookup_elem(fd_blk, &slot, &id) && errno == ENOENT,
		      "slot %u kept after an empty apply", slot);
	CHECK_EQ(judged_deny4(IP4(198, 18, 21, 1)), 0);
	wr_feed_set_free(&a);
	wr_feed_set_free(&b);
}

/* The strictness of an action on a tie: allow, limit-class 0 .. 3, deny. */
static int strictness(int a)
{
	return a == WEIR_FA_DENY ? 9 : (a & 3) == WEIR_FA_CLASS ? 1 + (a >> 2) : 0;
}

/* The longest-prefix answer for host address a (host order) from e[0..n), the stricter on ties. */
static int reference4(const struct wr_feed_entry *e, size_t n, __u32 a)
{
	int best = -1, act = WEIR_FA_NONE;
	size_t i;

	for (i = 0; i < n; i++) {
		__u32 net = ntohl(e[i].addr[0]);
		__u32 mask = e[i].plen ? ~0u << (32 - e[i].plen) : 0;

		if ((a & mask) != net)
			continue;
		if ((int)e[i].plen > best) {
			best = e[i].plen;
			act = e[i].action;
		} else if ((int)e[i].plen == best && strictness(e[i].action) > strictness(act)) {
			act = e[i].action;
		}
	}
	return act;
}

/*
 * Random prefixes of every length from /12 to /32 inside 198.16.0.0/12,
 * deny, allow and limit-class mixed, nested and overlapping: every probe's answer (the
 * library's lookup for all of them, the data path's for a share) equals
 * the plain longest-prefix search's. Three rounds, each a new generation.
 */
HARNESS_CASE(feeds_random_against_reference)
{
	unsigned int seed = 12345, round;
	struct wr_maps m = maps_of_skel();

	for (round = 0; round < 3; round++) {
		struct wr_feed_set all = { 0 }, copy = { 0 };
		struct wr_feed_stats st;
		size_t i, n = 3000, wrong = 0, wrong_dp = 0, denied = 0;

		for (i = 0; i < n; i++) {
			unsigned int plen = 12 + rand_r(&seed) % 21;
			__u32 a = IP4(198, 16, 0, 0) | (rand_r(&seed) & 0x000fffff);
			struct wr_feed_entry e = { .family = 4, .plen = plen };

			/* Most prefixes long, clustered in 198.18.0.0/16: /24s split often. */
			if (i % 3)
				a = IP4(198, 18, rand_r(&seed) % 64, rand_r(&seed) & 0xff),
				plen = 22 + rand_r(&seed) % 11, e.plen = plen;
			a &= ~0u << (32 - plen);
			e.addr[0] = htonl(a);
			/* deny, allow and the four limit-classes, deny the most */
			e.action = rand_r(&seed) % 2 ? WEIR_FA_DENY : rand_r(&seed) % 3 ?
				   WEIR_FA_CLASS_OF(rand_r(&seed) % 4) : WEIR_FA_ALLOW;
			if (all.n == all.cap) {
				all.cap = all.cap ? all.cap * 2 : 1024;
				all.v = realloc(all.v, all.cap * sizeof(*all.v));
			}
			all.v[all.n++] = e;
		}
		copy.v = malloc(all.n * sizeof(*all.v));
		memcpy(copy.v, all.v, all.n * sizeof(*all.v));
		copy.n = copy.cap = all.n;
		CHECK_EQ(apply(&all, &st), 0);
		for (i = 0; i < 40000; i++) {
			__u32 a = i % 2 ? IP4(198, 18, rand_r(&seed) % 64, rand_r(&seed) & 0xff)
					: IP4(198, 16, 0, 0) | (rand_r(&seed) & 0x000fffff);
			struct wr_cidr c = { .family = 4, .plen = 32, .addr = { htonl(a) } };
			int want = reference4(copy.v, copy.n, a), got = wr_feed_lookup(&m, &c);

			if (got != want && wrong++ < 5)
				CHECK_FAIL("round %u: %u.%u.%u.%u: lookup %d, reference %d", round,
					   a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff, got,
					   want);
			denied += want == WEIR_FA_DENY;
			if (i % 8 == 0 && judged_deny4(a) != (want == WEIR_FA_DENY) &&
			    wrong_dp++ < 5)
				CHECK_FAIL("round %u: %u.%u.%u.%u: data path %s, reference %d", round,
					   a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff,
					   judged_deny4(a) ? "dropped" : "passed", want);
		}
		/* The probes exercised all three answers, not just one. */
		CHECK(denied > 1000 && denied < 39000, "round %u: %zu of 40000 denied", round,
		      denied);
		CHECK(st.split_blocks > 100, "round %u: only %llu split /24s", round,
		      (unsigned long long)st.split_blocks);
		CHECK_EQ(wrong, 0);
		CHECK_EQ(wrong_dp, 0);
		wr_feed_set_free(&all);
		wr_feed_set_free(&copy);
	}
}

int main(void)
{
	int err;

	err = harness_start("bpf_feeds");
	if (err)
		return err > 0;
	teardown();
	return check_run_all();
}
