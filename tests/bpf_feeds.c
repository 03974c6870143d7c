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

/* The longest-prefix answer for host address a (host order) from e[0..n), deny winning ties. */
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
		} else if ((int)e[i].plen == best && e[i].action == WEIR_FA_DENY) {
			act = WEIR_FA_DENY;
		}
	}
	return act;
}

/*
 * Random prefixes of every length from /12 to /32 inside 198.16.0.0/12,
 * deny and allow mixed, nested and overlapping: every probe's answer (the
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
			e.action = rand_r(&seed) % 4 ? WEIR_FA_DENY : WEIR_FA_ALLOW;
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
