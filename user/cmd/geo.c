// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir geo DB country CC,... [asn N,...]`: what a country or ASN set
 * expands to in a MaxMind DB file (integrations/geo.c), one prefix a line or
 * a JSON array, the count on stderr. Reads the file only: it needs no
 * privilege and touches nothing weir has loaded.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "integrations/geo.h"
#include "cmd/cmd.h"

static void usage_geo(void)
{
	fprintf(wr_usage_out(),
		"Usage: weir geo DB [country CC[,CC...]] [asn N[,N...]] [-j]\n"
		"The prefixes of the MaxMind DB file DB (GeoLite2, DB-IP lite, any MMDB) whose\n"
		"networks are in one of the countries (ISO 3166-1 alpha-2, e.g. DE,NL; else\n"
		"the registered country, else a top-level country_code) or announced by one\n"
		"of the ASNs (64496 or AS64496), one a line in address order (IPv4 first),\n"
		"adjacent halves merged; the count on stderr. At least one of country and asn.\n");
}

/*
 * One prefix. The expander calls this only once its walk has succeeded, so
 * under -j the array opens at the first prefix and an error is never mixed
 * into a half-printed array.
 */
static int print_one(const struct wr_cidr *c, void *ctx)
{
	bool *opened = ctx;
	char buf[64];

	format_cidr(c->family, c->addr, c->plen, buf, sizeof(buf));
	if (opts.json) {
		if (!*opened)
			open_array(NULL);
		*opened = true;
		print_str(NULL, NULL, buf);
	} else {
		printf("%s\n", buf);
	}
	return 0;
}

int do_geo(int argc, char **argv)
{
	struct wr_geo_query q = { 0 };
	const char *db = NULL;
	bool seen_country = false, seen_asn = false, opened = false;
	int (*parse)(const char *s, struct wr_geo_query *q, char *err, size_t errlen);
	char err[512];
	int i, n;

	if (opts.help) {
		usage_geo();
		return 0;
	}
	for (i = 0; i < argc; i++) {
		bool *seen = !strcmp(argv[i], "country") ? &seen_country :
			     !strcmp(argv[i], "asn") ? &seen_asn : NULL;

		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			opts.json = true;
			continue;
		}
		if (!seen) {
			if (db || i) {
				pr_err("unexpected \"%s\"", argv[i]);
				usage_geo();
				return -EINVAL;
			}
			db = argv[i];
			continue;
		}
		if (!db) {
			pr_err("geo needs the database file first, before \"%s\"", argv[i]);
			usage_geo();
			return -EINVAL;
		}
		if (*seen) {
			pr_err("\"%s\" given twice (one list: a,b,c)", argv[i]);
			return -EINVAL;
		}
		*seen = true;
		if (i + 1 >= argc) {
			pr_err("%s needs a value", argv[i]);
			return -EINVAL;
		}
		parse = seen == &seen_country ? wr_geo_parse_countries : wr_geo_parse_asns;
		if (parse(argv[i + 1], &q, err, sizeof(err))) {
			pr_err("%s: %s", argv[i], err);
			return -EINVAL;
		}
		i++;
	}
	if (!db || (!seen_country && !seen_asn)) {
		pr_err(db ? "geo needs country or asn" : "geo needs a database file");
		usage_geo();
		return -EINVAL;
	}
	err[0] = '\0';
	n = wr_geo_expand(db, &q, print_one, &opened, err, sizeof(err));
	if (opts.json && n >= 0) {
		/* A top-level array: JSON's own, not out_begin()'s object. */
		if (!opened)
			open_array(NULL);
		close_array();
		putchar('\n');
	}
	if (n < 0) {
		pr_err("%s", err);
		return n;
	}
	fprintf(stderr, "%d prefix%s\n", n, n == 1 ? "" : "es");
	return 0;
}
