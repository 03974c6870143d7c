// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rule grammar (user/lib/rules.c, match_fields.c) on the host, through
 * wr_rule_parse as `rule add` and the config call it: the `iface` field,
 * what it stores, and its bad input. Linked with libweir (tests/tests.mk).
 */
#include <errno.h>
#include <net/if.h>
#include <string.h>

#include "check.h"
#include "lib/libweir.h"

struct wr_opts opts = { .root = WEIR_DEFAULT_ROOT };

/* The source set the last parse gave (`src feed:NAME` ...), "" for none. */
static char last_srcset[WEIR_SRCSET_LEN];

/* Parse the words of s (space-separated, at most 32) into r: wr_rule_parse's result. */
static int parse(const char *s, struct weir_rule *r, struct wr_perr *pe)
{
	char buf[512], *argv[32], *save = NULL, *w;
	char name[WEIR_NAME_LEN] = "";
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (w = strtok_r(buf, " ", &save); w && argc < 32; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	memset(r, 0, sizeof(*r));
	memset(pe, 0, sizeof(*pe));
	return wr_rule_parse(argc, argv, r, NULL, last_srcset, name, pe);
}

/* lo always exists (ifindex 1 in every network namespace). */
TEST_CASE(rule_iface_lo)
{
	struct weir_rule r;
	struct wr_perr pe;
	int err = parse("r1 proto udp iface lo limit 10pps", &r, &pe);

	CHECK(err == 0, "parse: %d %s", err, pe.msg);
	CHECK(r.xmatch == WEIR_X_IFACE, "xmatch 0x%x", r.xmatch);
	CHECK_EQ(r.ifindex, if_nametoindex("lo"));
	CHECK(!strcmp(r.ifname, "lo"), "ifname \"%s\"", r.ifname);
}

TEST_CASE(rule_iface_with_other_fields)
{
	struct weir_rule r;
	struct wr_perr pe;
	int err = parse("r1 proto udp sport 123 iface lo dscp 46 limit 10pps", &r, &pe);

	CHECK(err == 0, "parse: %d %s", err, pe.msg);
	CHECK(r.xmatch == (WEIR_X_IFACE | WEIR_X_SPORT | WEIR_X_DSCP), "xmatch 0x%x", r.xmatch);
}

TEST_CASE(rule_without_iface)
{
	struct weir_rule r;
	struct wr_perr pe;
	int err = parse("r1 proto udp limit 10pps", &r, &pe);

	CHECK(err == 0, "parse: %d %s", err, pe.msg);
	CHECK(!(r.xmatch & WEIR_X_IFACE), "xmatch 0x%x", r.xmatch);
	CHECK_EQ(r.ifindex, 0);
}

/* Each refusal names the keyword and points at its value's word. */
static void refused(const char *s, int word, const char *says)
{
	struct weir_rule r;
	struct wr_perr pe;
	int err = parse(s, &r, &pe);

	CHECK(err < 0, "\"%s\" parsed", s);
	CHECK(strstr(pe.msg, says), "\"%s\": \"%s\" lacks \"%s\"", s, pe.msg, says);
	CHECK(word < 0 || pe.word == word, "\"%s\": word %d, not %d", s, pe.word, word);
}

TEST_CASE(rule_iface_bad_input)
{
	refused("r1 iface weir-no-such0 limit 10pps", 2, "iface \"weir-no-such0\": no such");
	refused("r1 iface abcdefghijklmnopq limit 10pps", 2, "invalid iface");
	refused("r1 iface", -1, "iface");
	/* The connection counter and SYN cookies match by fewer fields. */
	refused("r1 proto tcp iface lo conns 10", -1, "iface");
	refused("r1 proto tcp dport 80 tcp-flags syn iface lo limit 10pps action cookie", -1,
		"iface");
}

/* Source sets: the bit, the "!" and the set's words as given, for the commit to place. */
TEST_CASE(rule_srcset_parsed)
{
	static const struct {
		const char *rule, *set;
		int not;
	} ok[] = {
		{ "r1 proto udp dport 53 src asn:64496 limit 10pps", "asn:64496", 0 },
		{ "r1 proto tcp dport 22 src !country:DE limit 1pps", "!country:DE", 1 },
		/* One spelling a set: upper case, sorted, each once, no AS, no leading 0. */
		{ "r1 src country:us,de,NL limit 10pps", "country:DE,NL,US", 0 },
		{ "r1 src !country:nl,DE,de limit 10pps", "!country:DE,NL", 1 },
		{ "r1 src asn:AS64497,64496,as064497 limit 10pps", "asn:64496,64497", 0 },
		{ "r1 src feed:bad-nets.v2 limit 10pps", "feed:bad-nets.v2", 0 },
	};
	struct weir_rule r;
	struct wr_perr pe;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		int err = parse(ok[i].rule, &r, &pe);

		CHECK(err == 0, "\"%s\": %d %s", ok[i].rule, err, pe.msg);
		CHECK(r.match & WEIR_M_SRCSET, "\"%s\": match 0x%x", ok[i].rule, r.match);
		CHECK(!(r.match & (WEIR_M_SRC | WEIR_M_FAMILY)), "\"%s\": a CIDR's bits 0x%x",
		      ok[i].rule, r.match);
		CHECK(!!(r.srcset & WEIR_SRCSET_NOT) == ok[i].not, "\"%s\": srcset 0x%x",
		      ok[i].rule, r.srcset);
		CHECK(!strcmp(last_srcset, ok[i].set), "\"%s\": set \"%s\"", ok[i].rule,
		      last_srcset);
	}
	/* A CIDR stays a CIDR, and leaves no set behind. */
	CHECK_EQ(parse("r1 src 198.18.0.0/15 limit 10pps", &r, &pe), 0);
	CHECK(!(r.match & WEIR_M_SRCSET) && !last_srcset[0], "match 0x%x set \"%s\"", r.match,
	      last_srcset);
}

TEST_CASE(rule_srcset_bad_input)
{
	refused("r1 src country:DEU limit 10pps", 2, "invalid country \"DEU\"");
	refused("r1 src country:DE,,NL limit 10pps", 2, "invalid country");
	refused("r1 src country: limit 10pps", 2, "invalid country");
	refused("r1 src asn:0 limit 10pps", 2, "invalid ASN \"0\"");
	refused("r1 src asn:4294967296 limit 10pps", 2, "invalid ASN");
	refused("r1 src feed: limit 10pps", 2, "invalid feed name");
	refused("r1 src feed:a/b limit 10pps", 2, "invalid feed name");
	refused("r1 src geo:DE limit 10pps", 2, "invalid CIDR \"geo:DE\" (or a source set");
	refused("r1 proto tcp dport 80 tcp-flags syn src asn:64496 limit 10pps action cookie", -1,
		"action cookie takes no source set");
	{
		/* Without a place for the set, the parser refuses it rather than drop it. */
		char *argv[] = { "r1", "src", "asn:64496", "limit", "10pps" };
		char name[WEIR_NAME_LEN];
		struct weir_rule r;
		struct wr_perr pe;

		CHECK(wr_rule_parse(5, argv, &r, NULL, NULL, name, &pe) < 0, "parsed");
		CHECK(strstr(pe.msg, "not taken here"), "\"%s\"", pe.msg);
	}
}

/*
 * A set's slots: a set two rules name takes one slot; a rule set names at
 * most WEIR_SET_SRCSETS; a slot no rule names any more is taken again.
 */
TEST_CASE(rule_srcset_slots)
{
	static struct weir_ruleset rs;
	char why[200], set[32];
	__u32 i;

	memset(&rs, 0, sizeof(rs));
	rs.nr_rules = 3;
	CHECK_EQ(wr_srcset_put(&rs, 0, "asn:64496", why, sizeof(why)), 0);
	CHECK_EQ(wr_srcset_put(&rs, 1, "!asn:64496", why, sizeof(why)), 0);
	CHECK_EQ(wr_srcset_put(&rs, 2, "country:DE", why, sizeof(why)), 0);
	CHECK_EQ(rs.rules[0].srcset, 0);
	CHECK_EQ(rs.rules[1].srcset, WEIR_SRCSET_NOT | 0);
	CHECK_EQ(rs.rules[2].srcset, 1);
	CHECK_EQ(wr_srcset_count(&rs), 2);
	CHECK(!strcmp(rs.srcsets[0], "asn:64496"), "slot 0 \"%s\"", rs.srcsets[0]);
	/* Rule 2 names another set: its old slot is free again, and taken. */
	CHECK_EQ(wr_srcset_put(&rs, 2, "feed:x", why, sizeof(why)), 0);
	CHECK_EQ(rs.rules[2].srcset, 1);
	CHECK_EQ(wr_srcset_count(&rs), 2);
	rs.nr_rules = WEIR_SET_SRCSETS + 1;
	for (i = 0; i < WEIR_SET_SRCSETS; i++) {
		snprintf(set, sizeof(set), "asn:%u", 100 + i);
		CHECK_EQ(wr_srcset_put(&rs, i, set, why, sizeof(why)), 0);
	}
	CHECK_EQ(wr_srcset_count(&rs), WEIR_SET_SRCSETS);
	CHECK_EQ(wr_srcset_put(&rs, WEIR_SET_SRCSETS, "asn:99", why, sizeof(why)), -E2BIG);
	CHECK(strstr(why, "at most 8"), "\"%s\"", why);
}

int main(void)
{
	return check_run_all();
}
