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
	return wr_rule_parse(argc, argv, r, NULL, name, pe);
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

int main(void)
{
	return check_run_all();
}
