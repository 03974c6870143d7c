// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The expander's API as the feeds call it (user/integrations/geo.c): what
 * the parsers append and refuse, the prefixes' byte order and families,
 * errno values, and a callback that stops the walk. The databases are
 * written by tools/mkmmdb.py (python3); tests/geo.sh checks the same code
 * through `weir geo` against mmdblookup. Linked with libweir and the
 * integrations (tests/tests.mk).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "integrations/geo.h"

struct wr_opts opts;

/* The networks of the databases below (198.18.0.0/15 and 2001:db8::/32 only). */
static const char *const nets_json =
	"{\"networks\": ["
	"{\"network\": \"198.18.0.0/24\", \"country\": \"DE\", \"asn\": 64496},"
	"{\"network\": \"198.18.1.0/24\", \"country\": \"DE\"},"
	"{\"network\": \"198.18.9.0/24\", \"country\": \"NL\", \"asn\": 64497},"
	"{\"network\": \"198.19.255.255/32\", \"registered_country\": \"DE\"},"
	"{\"network\": \"2001:db8:8000::/33\", \"country\": \"DE\"}"
	"]}";

static char dir[] = "/tmp/wr-geo-unit-XXXXXX";
static char db6[64], db4[64];

/* Write the databases once: 0, or -1 (the case then fails saying so). */
static int make_dbs(void)
{
	static int done;
	char cmd[1024], json[64];
	FILE *f;

	if (done)
		return done > 0 ? 0 : -1;
	done = -1;
	if (!mkdtemp(dir))
		return -1;
	snprintf(json, sizeof(json), "%s/nets.json", dir);
	snprintf(db6, sizeof(db6), "%s/v6.mmdb", dir);
	snprintf(db4, sizeof(db4), "%s/v4.mmdb", dir);
	f = fopen(json, "w");
	if (!f)
		return -1;
	fputs(nets_json, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "python3 tools/mkmmdb.py --record-size 24 %s %s 2>/dev/null && "
		 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
		 "d[\"networks\"]=d[\"networks\"][:4]; json.dump(d, open(sys.argv[1], \"w\"))' %s && "
		 "python3 tools/mkmmdb.py --ip-version 4 --record-size 32 %s %s 2>/dev/null",
		 json, db6, json, json, db4);
	if (system(cmd))
		return -1;
	done = 1;
	return 0;
}

#define MAX_GOT 64
struct got {
	struct wr_cidr c[MAX_GOT];
	int n;
	int stop_at;		/* return -ECANCELED at this call (1-based); 0: never */
};

static int collect(const struct wr_cidr *c, void *ctx)
{
	struct got *g = ctx;

	if (g->n < MAX_GOT)
		g->c[g->n] = *c;
	g->n++;
	return g->stop_at && g->n == g->stop_at ? -ECANCELED : 0;
}

static void fmt(const struct wr_cidr *c, char *buf, size_t len)
{
	format_cidr(c->family, c->addr, c->plen, buf, len);
}

TEST_CASE(geo_parse_appends_once_upper_case)
{
	struct wr_geo_query q = { 0 };
	char err[128] = "";

	CHECK(!wr_geo_parse_countries("DE,nl", &q, err, sizeof(err)), "%s", err);
	CHECK(!wr_geo_parse_countries("NL,Fr,de", &q, err, sizeof(err)), "%s", err);
	CHECK_EQ(q.ncountries, 3);
	CHECK(!strcmp(q.countries[0], "DE") && !strcmp(q.countries[1], "NL") &&
	      !strcmp(q.countries[2], "FR"), "%s %s %s", q.countries[0], q.countries[1],
	      q.countries[2]);
	CHECK(!wr_geo_parse_asns("64496,AS64497,as64496,4294967295", &q, err, sizeof(err)), "%s",
	      err);
	CHECK_EQ(q.nasns, 3);
	CHECK_EQ(q.asns[0], 64496);
	CHECK_EQ(q.asns[1], 64497);
	CHECK_EQ(q.asns[2], 4294967295u);
}

/* A refused list appends nothing, not even its good tokens before the bad one. */
TEST_CASE(geo_parse_refused_changes_nothing)
{
	struct wr_geo_query q = { 0 }, before;
	char err[128] = "";

	CHECK(!wr_geo_parse_countries("DE", &q, err, sizeof(err)), "%s", err);
	before = q;
	CHECK(wr_geo_parse_countries("NL,FR,DEU", &q, err, sizeof(err)) == -EINVAL, "DEU taken");
	CHECK(strstr(err, "\"DEU\""), "error: %s", err);
	CHECK(!memcmp(&q, &before, sizeof(q)), "the query changed");
	CHECK(wr_geo_parse_asns("64496,ASx", &q, err, sizeof(err)) == -EINVAL, "ASx taken");
	CHECK(strstr(err, "\"ASx\""), "error: %s", err);
	CHECK(!memcmp(&q, &before, sizeof(q)), "the query changed");
}

TEST_CASE(geo_parse_at_most_max)
{
	struct wr_geo_query q = { 0 };
	char list[WR_GEO_MAX * 4 + 8] = "", err[128] = "";
	int i;

	for (i = 0; i < WR_GEO_MAX; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%c%c", i ? "," : "",
			 'A' + i / 26, 'A' + i % 26);
	CHECK(!wr_geo_parse_countries(list, &q, err, sizeof(err)), "%d countries: %s",
	      WR_GEO_MAX, err);
	CHECK_EQ(q.ncountries, WR_GEO_MAX);
	CHECK(wr_geo_parse_countries("ZZ", &q, err, sizeof(err)) == -EINVAL, "one more taken");
	CHECK(strstr(err, "\"ZZ\"") && strstr(err, "at most"), "error: %s", err);
	CHECK(!wr_geo_parse_countries("AA", &q, err, sizeof(err)), "a repeat refused: %s", err);
}

/* Network byte order, masked; IPv4 from ::/96 as family 4; address order, siblings merged. */
TEST_CASE(geo_expand_prefixes_as_wr_cidr)
{
	struct wr_geo_query q = { 0 };
	struct got g = { 0 };
	char err[256] = "", buf[64];
	__u32 want4 = htonl(0xc6120000);	/* 198.18.0.0 */
	int n;

	CHECK(!make_dbs(), "tools/mkmmdb.py failed");
	CHECK(!wr_geo_parse_countries("DE", &q, err, sizeof(err)), "%s", err);
	n = wr_geo_expand(db6, &q, collect, &g, err, sizeof(err));
	CHECK_EQ(n, 3);
	CHECK_EQ(g.n, 3);
	CHECK(g.c[0].family == 4 && g.c[0].plen == 23 && g.c[0].addr[0] == want4 &&
	      !g.c[0].addr[1] && !g.c[0].addr[3], "first: family %d plen %u addr %08x",
	      g.c[0].family, g.c[0].plen, g.c[0].addr[0]);
	fmt(&g.c[1], buf, sizeof(buf));
	CHECK(!strcmp(buf, "198.19.255.255/32"), "second: %s", buf);
	fmt(&g.c[2], buf, sizeof(buf));
	CHECK(g.c[2].family == 6 && !strcmp(buf, "2001:db8:8000::/33"), "third: %s", buf);
}

/* The IPv4 database and the IPv6 one's ::/96 give the same IPv4 prefixes. */
TEST_CASE(geo_expand_ipv4_database)
{
	struct wr_geo_query q = { 0 };
	struct got g4 = { 0 }, g6 = { 0 };
	char err[256] = "";
	int i;

	CHECK(!make_dbs(), "tools/mkmmdb.py failed");
	CHECK(!wr_geo_parse_countries("DE,NL", &q, err, sizeof(err)), "%s", err);
	CHECK_EQ(wr_geo_expand(db4, &q, collect, &g4, err, sizeof(err)), 3);
	CHECK_EQ(wr_geo_expand(db6, &q, collect, &g6, err, sizeof(err)), 4);
	for (i = 0; i < 3 && i < g4.n; i++)
		CHECK(!memcmp(&g4.c[i], &g6.c[i], sizeof(g4.c[i])), "prefix %d differs", i);
	CHECK_EQ(g6.c[3].family, 6);
}

TEST_CASE(geo_expand_asn_only)
{
	struct wr_geo_query q = { 0 };
	struct got g = { 0 };
	char err[256] = "", buf[64];

	CHECK(!make_dbs(), "tools/mkmmdb.py failed");
	CHECK(!wr_geo_parse_asns("AS64497", &q, err, sizeof(err)), "%s", err);
	CHECK_EQ(wr_geo_expand(db6, &q, collect, &g, err, sizeof(err)), 1);
	fmt(&g.c[0], buf, sizeof(buf));
	CHECK(!strcmp(buf, "198.18.9.0/24"), "got %s", buf);
}

/* The callback's negative return stops the walk and is what expand returns. */
TEST_CASE(geo_expand_callback_stops)
{
	struct wr_geo_query q = { 0 };
	struct got g = { .stop_at = 2 };
	char err[256] = "";
	int n;

	CHECK(!make_dbs(), "tools/mkmmdb.py failed");
	CHECK(!wr_geo_parse_countries("DE", &q, err, sizeof(err)), "%s", err);
	n = wr_geo_expand(db6, &q, collect, &g, err, sizeof(err));
	CHECK(n == -ECANCELED, "expand returned %d", n);
	CHECK_EQ(g.n, 2);
	CHECK(err[0], "no error text");
}

TEST_CASE(geo_expand_errors)
{
	struct wr_geo_query q = { 0 };
	struct got g = { 0 };
	char err[256] = "", path[96];
	FILE *f;
	int n;

	CHECK(!make_dbs(), "tools/mkmmdb.py failed");
	CHECK(!wr_geo_parse_countries("DE", &q, err, sizeof(err)), "%s", err);
	snprintf(path, sizeof(path), "%s/missing.mmdb", dir);
	n = wr_geo_expand(path, &q, collect, &g, err, sizeof(err));
	CHECK(n == -ENOENT, "missing: %d %s", n, err);
	CHECK(strstr(err, "missing.mmdb"), "missing: %s", err);
	snprintf(path, sizeof(path), "%s/text.mmdb", dir);
	f = fopen(path, "w");
	CHECK(f, "cannot write %s", path);
	if (f) {
		fputs("198.18.0.0/24 DE\n", f);
		fclose(f);
	}
	n = wr_geo_expand(path, &q, collect, &g, err, sizeof(err));
	CHECK(n == -EINVAL, "text: %d %s", n, err);
	CHECK(strstr(err, "is not a MaxMind DB file"), "text: %s", err);
	CHECK_EQ(g.n, 0);
}

int main(void)
{
	char cmd[128];
	int rc = check_run_all();

	if (strcmp(dir, "/tmp/wr-geo-unit-XXXXXX")) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "# could not remove %s\n", dir);
	}
	return rc;
}
