/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Country and ASN sets from a MaxMind DB file (geo.c, through libmaxminddb):
 * `country DE,NL` / `asn 64496` expanded to the database's prefixes, for
 * `weir geo`, blocklist feeds and CrowdSec's Country/AS decisions.
 */
#ifndef WEIR_GEO_H
#define WEIR_GEO_H

#include <stddef.h>
#include <linux/types.h>
#include "util/util.h"

/* Countries, and ASNs, one query holds at most (a list longer than this is refused). */
#define WR_GEO_MAX 64

/* What to expand: a network matches if its record has any of the countries OR any ASN. */
struct wr_geo_query {
	char countries[WR_GEO_MAX][3];	/* ISO 3166-1 alpha-2, upper case, NUL-terminated */
	int ncountries;
	__u32 asns[WR_GEO_MAX];
	int nasns;
};

/*
 * "DE,NL" / "64496,AS64497": parsed into q, appended to what it holds (a
 * repeat is taken once). Countries are two letters (lower case is taken and
 * upper-cased); an ASN is 1 to 4294967295, with or without "AS". 0, or
 * -EINVAL with err naming the bad token (nothing appended then).
 */
int wr_geo_parse_countries(const char *s, struct wr_geo_query *q, char *err, size_t errlen);
int wr_geo_parse_asns(const char *s, struct wr_geo_query *q, char *err, size_t errlen);

/*
 * Walk every network of the MMDB at path; call cb for each prefix whose
 * record matches q (country: the record's country.iso_code, else its
 * registered_country.iso_code, else a top-level country_code as
 * ip-location-db's databases have it; ASN: autonomous_system_number). Prefixes come
 * in address order, IPv4 first, sibling prefixes that both match merged.
 * IPv4 networks come back as family 4: from the ::/96 subtree of an IPv6
 * database or from an IPv4 database; the IPv4 aliases of an IPv6 tree
 * (::ffff:0:0/96, 2002::/16, 2001::/32, which MaxMind's databases point at
 * the ::/96 subtree) are skipped, not reported twice. Returns the number of
 * prefixes reported, or -errno with err set: the file missing or unreadable,
 * not an MMDB ("... is not a MaxMind DB file"), corrupt (a search tree that
 * loops or reaches outside the file, a record that cannot be decoded), or
 * cb's own negative return.
 */
int wr_geo_expand(const char *path, const struct wr_geo_query *q,
		  int (*cb)(const struct wr_cidr *c, void *ctx), void *ctx,
		  char *err, size_t errlen);

#endif /* WEIR_GEO_H */
