// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Country and ASN sets from a MaxMind DB file (geo.h). libmaxminddb opens
 * and checks the file and reads its nodes and records; this file walks the
 * search tree (a binary trie over the address bits, each node two records:
 * another node, "empty", or a pointer into the data section) depth first,
 * left before right, so prefixes come out in address order, and asks each
 * data record reached whether it matches, once per record: a country's
 * networks mostly share one record, so the answer is cached by the record's
 * offset in the data section.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <maxminddb.h>
#include "integrations/geo.h"

/* Address bits of an IPv6 tree; a deeper record is a corrupt tree. */
#define GEO_V6_BITS 128
/* Address bits of an IPv4 tree. */
#define GEO_V4_BITS 32
/* Depth of the IPv4 subtree (::/96) in an IPv6 tree. */
#define GEO_V4_IN_V6 96
/* The walk's stack: at most one pending right record per level, the current two on top. */
#define GEO_STACK (GEO_V6_BITS + 4)
/* Match cache values, one byte per data-section offset (0: not asked yet). */
#define GEO_NO 1
#define GEO_YES 2

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The next comma-separated token of *s into tok; false at the end of s. */
static bool next_token(const char **s, char *tok, size_t len, bool *toolong)
{
	const char *p = *s, *e;
	size_t n;

	if (!p)
		return false;
	e = strchr(p, ',');
	n = e ? (size_t)(e - p) : strlen(p);
	*toolong = n >= len;
	if (*toolong)
		n = len - 1;
	memcpy(tok, p, n);
	tok[n] = '\0';
	*s = e ? e + 1 : NULL;
	return true;
}

/* An ASCII letter, either case (not isalpha(): the locale's letters are not ISO codes). */
static bool letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int wr_geo_parse_countries(const char *s, struct wr_geo_query *q, char *err, size_t errlen)
{
	struct wr_geo_query tmp = *q;
	char tok[16];
	bool toolong;
	int i;

	if (!s || !*s) {
		seterr(err, errlen, "empty country list (e.g. DE,NL)");
		return -EINVAL;
	}
	while (next_token(&s, tok, sizeof(tok), &toolong)) {
		if (!tok[0]) {
			seterr(err, errlen, "empty country in the list (e.g. DE,NL)");
			return -EINVAL;
		}
		if (toolong || strlen(tok) != 2 || !letter(tok[0]) || !letter(tok[1])) {
			seterr(err, errlen, "invalid country \"%s%s\": %s", tok,
			       toolong ? "..." : "", "two letters, ISO 3166-1 alpha-2 (e.g. DE)");
			return -EINVAL;
		}
		/* ASCII letters: clearing 0x20 upper-cases them. */
		tok[0] &= ~0x20;
		tok[1] &= ~0x20;
		for (i = 0; i < tmp.ncountries; i++)
			if (!memcmp(tmp.countries[i], tok, 2))
				break;
		if (i < tmp.ncountries)
			continue;
		if (tmp.ncountries >= WR_GEO_MAX) {
			seterr(err, errlen, "too many countries at \"%s\" (at most %d)", tok,
			       WR_GEO_MAX);
			return -EINVAL;
		}
		memcpy(tmp.countries[tmp.ncountries++], tok, 3);
	}
	*q = tmp;
	return 0;
}

int wr_geo_parse_asns(const char *s, struct wr_geo_query *q, char *err, size_t errlen)
{
	struct wr_geo_query tmp = *q;
	char tok[32];
	const char *num;
	bool toolong;
	uint64_t v;
	int i;

	if (!s || !*s) {
		seterr(err, errlen, "empty ASN list (e.g. 64496,AS64497)");
		return -EINVAL;
	}
	while (next_token(&s, tok, sizeof(tok), &toolong)) {
		if (!tok[0]) {
			seterr(err, errlen, "empty ASN in the list (e.g. 64496,AS64497)");
			return -EINVAL;
		}
		num = (tok[0] == 'A' || tok[0] == 'a') && (tok[1] == 'S' || tok[1] == 's') ?
		      tok + 2 : tok;
		/* ASN 0 is reserved (RFC 7607): no network is announced from it. */
		if (toolong || parse_u64(num, 1, UINT32_MAX, &v)) {
			seterr(err, errlen, "invalid ASN \"%s%s\": 1 to 4294967295, AS optional",
			       tok, toolong ? "..." : "");
			return -EINVAL;
		}
		for (i = 0; i < tmp.nasns; i++)
			if (tmp.asns[i] == v)
				break;
		if (i < tmp.nasns)
			continue;
		if (tmp.nasns >= WR_GEO_MAX) {
			seterr(err, errlen, "too many ASNs at \"%s\" (at most %d)", tok,
			       WR_GEO_MAX);
			return -EINVAL;
		}
		tmp.asns[tmp.nasns++] = (__u32)v;
	}
	*q = tmp;
	return 0;
}

/* The walk's state. */
struct geo_walk {
	MMDB_s db;
	const struct wr_geo_query *q;
	__u8 *cache;			/* GEO_NO/GEO_YES by data-section offset */
	struct wr_cidr *out;		/* matched prefixes, merged as they come */
	size_t nout, capout;
	char *err;
	size_t errlen;
};

/* A record waiting on the stack: its value, its depth and the address bits above it. */
struct geo_item {
	__u64 record;
	__u32 addr[4];			/* host order; bit 0 of the address is addr[0]'s top bit */
	unsigned int depth;
};

static bool str_is(const MMDB_entry_data_s *d, const char *s)
{
	return d->has_data && d->type == MMDB_DATA_TYPE_UTF8_STRING && d->data_size == 2 &&
	       !memcmp(d->utf8_string, s, 2);
}

/* 1 if the data record at offset matches, 0 if not, -EINVAL if it cannot be decoded. */
static int record_matches(struct geo_walk *w, __u32 offset)
{
	static const char *const country[] = { "country", "iso_code", NULL };
	static const char *const registered[] = { "registered_country", "iso_code", NULL };
	/* ip-location-db's country MMDBs (GeoLite2, DB-IP, iptoasn...) have only this. */
	static const char *const flat[] = { "country_code", NULL };
	static const char *const asn[] = { "autonomous_system_number", NULL };
	MMDB_entry_s entry = { .mmdb = &w->db, .offset = offset };
	MMDB_entry_data_s d;
	__u64 v = 0;
	int i, rc;

	if (w->cache[offset])
		return w->cache[offset] == GEO_YES;
	w->cache[offset] = GEO_NO;
	if (w->q->ncountries) {
		/* A path the record does not have (no such key) is simply no country. */
		rc = MMDB_aget_value(&entry, &d, country);
		if (rc == MMDB_LOOKUP_PATH_DOES_NOT_MATCH_DATA_ERROR ||
		    (rc == MMDB_SUCCESS && !d.has_data))
			rc = MMDB_aget_value(&entry, &d, registered);
		if (rc == MMDB_LOOKUP_PATH_DOES_NOT_MATCH_DATA_ERROR ||
		    (rc == MMDB_SUCCESS && !d.has_data))
			rc = MMDB_aget_value(&entry, &d, flat);
		if (rc != MMDB_SUCCESS && rc != MMDB_LOOKUP_PATH_DOES_NOT_MATCH_DATA_ERROR)
			goto bad;
		for (i = 0; rc == MMDB_SUCCESS && i < w->q->ncountries; i++)
			if (str_is(&d, w->q->countries[i]))
				goto yes;
	}
	if (w->q->nasns) {
		rc = MMDB_aget_value(&entry, &d, asn);
		if (rc != MMDB_SUCCESS && rc != MMDB_LOOKUP_PATH_DOES_NOT_MATCH_DATA_ERROR)
			goto bad;
		if (rc == MMDB_SUCCESS && d.has_data) {
			if (d.type == MMDB_DATA_TYPE_UINT32)
				v = d.uint32;
			else if (d.type == MMDB_DATA_TYPE_UINT16)
				v = d.uint16;
			else if (d.type == MMDB_DATA_TYPE_UINT64)
				v = d.uint64;
			else if (d.type == MMDB_DATA_TYPE_INT32 && d.int32 > 0)
				v = (__u64)d.int32;
		}
		for (i = 0; v && i < w->q->nasns; i++)
			if (w->q->asns[i] == v)
				goto yes;
	}
	return 0;
yes:
	w->cache[offset] = GEO_YES;
	return 1;
bad:
	seterr(w->err, w->errlen, "%s: corrupt data record at offset %u: %s", w->db.filename,
	       offset, MMDB_strerror(rc));
	return -EINVAL;
}

/* Two prefixes of one family and length that differ only in their last bit. */
static bool siblings(const struct wr_cidr *a, const struct wr_cidr *b)
{
	unsigned int bit, i;
	__u32 x;

	if (a->family != b->family || a->plen != b->plen || !a->plen)
		return false;
	bit = a->plen - 1;
	for (i = 0; i < 4; i++) {
		x = a->addr[i] ^ b->addr[i];
		if (i == bit / 32)
			x ^= 1u << (31 - bit % 32);
		if (x)
			return false;
	}
	return true;
}

/*
 * Keep a prefix (host order). Prefixes come in address order, so a prefix's
 * left sibling, if it matched whole, is the last one kept (itself merged
 * from its halves as they came): the two become their parent.
 */
static int keep(struct geo_walk *w, int family, const __u32 *addr, unsigned int plen)
{
	struct wr_cidr c = { .family = family, .plen = plen };

	memcpy(c.addr, addr, sizeof(c.addr));
	while (w->nout && siblings(&w->out[w->nout - 1], &c)) {
		c.plen--;
		c.addr[c.plen / 32] &= ~(1u << (31 - c.plen % 32));
		w->nout--;
	}
	if (w->nout == w->capout) {
		size_t cap = w->capout ? w->capout * 2 : 1024;
		struct wr_cidr *n = realloc(w->out, cap * sizeof(*n));

		if (!n) {
			seterr(w->err, w->errlen, "out of memory");
			return -ENOMEM;
		}
		w->out = n;
		w->capout = cap;
	}
	w->out[w->nout++] = c;
	return 0;
}

/* A matching data record at depth of the tree: its prefix, IPv4 where it is one. */
static int report(struct geo_walk *w, const struct geo_item *it, bool v6, bool zeros)
{
	__u32 v4[4] = { 0 };
	int err;

	if (!v6)
		return keep(w, 4, it->addr, it->depth);
	if (zeros && it->depth >= GEO_V4_IN_V6) {
		/* Inside ::/96: the last 32 bits are the IPv4 address. */
		v4[0] = it->addr[3];
		return keep(w, 4, v4, it->depth - GEO_V4_IN_V6);
	}
	err = keep(w, 6, it->addr, it->depth);
	/* A record above ::/96 on its path covers every IPv4 address as well. */
	if (!err && zeros)
		err = keep(w, 4, v4, 0);
	return err;
}

/* Whether the path to addr so far is the path to ::/96 (all its bits zero). */
static bool zero_path(const __u32 *addr)
{
	unsigned int i;

	/* Bits below the depth are zero by construction: the first 96 bits are words 0 to 2. */
	for (i = 0; i < 3; i++)
		if (addr[i])
			return false;
	return true;
}

/* The node of ::/96 in an IPv6 tree (follow 96 left records), or node_count if none. */
static __u32 v4_root(const MMDB_s *db)
{
	MMDB_search_node_s n;
	__u32 node = 0;
	int i;

	for (i = 0; i < GEO_V4_IN_V6; i++) {
		if (MMDB_read_node(db, node, &n) != MMDB_SUCCESS ||
		    n.left_record_type != MMDB_RECORD_TYPE_SEARCH_NODE)
			return db->metadata.node_count;
		node = (__u32)n.left_record;
	}
	return node;
}

static int walk(struct geo_walk *w)
{
	const __u32 nodes = w->db.metadata.node_count;
	const bool v6 = w->db.metadata.ip_version == 6;
	const unsigned int bits = v6 ? GEO_V6_BITS : GEO_V4_BITS;
	const __u32 v4node = v6 ? v4_root(&w->db) : nodes;
	struct geo_item stack[GEO_STACK], it, *c;
	MMDB_search_node_s n;
	__u64 visits = 0;
	unsigned int sp = 0;
	bool zeros;
	int rc;

	stack[sp++] = (struct geo_item){ .record = 0, .depth = 0 };
	while (sp) {
		it = stack[--sp];
		zeros = v6 && zero_path(it.addr);
		if (it.record == nodes)
			continue;	/* empty: no network here */
		if (it.record > nodes) {
			/* Data: node_count + 16 + the record's offset in the data section. */
			__u64 off = it.record - nodes - 16;

			if (it.record < (__u64)nodes + 16 || off >= w->db.data_section_size) {
				seterr(w->err, w->errlen, "%s: corrupt search tree: %s (%llu)",
				       w->db.filename, "a record points outside the data section",
				       (unsigned long long)it.record);
				return -EINVAL;
			}
			rc = record_matches(w, (__u32)off);
			if (rc > 0)
				rc = report(w, &it, v6, zeros);
			if (rc < 0)
				return rc;
			continue;
		}
		/* A node: the IPv4 subtree's root reached by another path is an alias. */
		if (v6 && it.record == v4node && !(zeros && it.depth == GEO_V4_IN_V6))
			continue;
		/* A tree visits each node once: more visits than nodes is a loop. */
		if (it.depth >= bits || ++visits > nodes) {
			seterr(w->err, w->errlen,
			       "%s: corrupt search tree (%s at node %llu)", w->db.filename,
			       it.depth >= bits ? "deeper than the address" : "a loop",
			       (unsigned long long)it.record);
			return -EINVAL;
		}
		rc = MMDB_read_node(&w->db, (__u32)it.record, &n);
		if (rc != MMDB_SUCCESS) {
			seterr(w->err, w->errlen, "%s: corrupt search tree at node %llu: %s",
			       w->db.filename, (unsigned long long)it.record, MMDB_strerror(rc));
			return -EINVAL;
		}
		/* Right pushed first, so the left half (lower addresses) comes out first. */
		if (sp + 2 > GEO_STACK) {
			seterr(w->err, w->errlen, "%s: corrupt search tree (too deep)",
			       w->db.filename);
			return -EINVAL;
		}
		c = &stack[sp++];
		*c = it;
		c->record = n.right_record;
		c->depth = it.depth + 1;
		c->addr[it.depth / 32] |= 1u << (31 - it.depth % 32);
		c = &stack[sp++];
		*c = it;
		c->record = n.left_record;
		c->depth = it.depth + 1;
	}
	return 0;
}

static const char *open_error(int rc)
{
	switch (rc) {
	case MMDB_INVALID_METADATA_ERROR:
	case MMDB_UNKNOWN_DATABASE_FORMAT_ERROR:
		return "is not a MaxMind DB file";
	case MMDB_CORRUPT_SEARCH_TREE_ERROR:
	case MMDB_INVALID_DATA_ERROR:
		return "is a corrupt MaxMind DB file";
	default:
		return NULL;
	}
}

int wr_geo_expand(const char *path, const struct wr_geo_query *q,
		  int (*cb)(const struct wr_cidr *c, void *ctx), void *ctx,
		  char *err, size_t errlen)
{
	struct geo_walk w = { .q = q, .err = err, .errlen = errlen };
	struct stat st;
	const char *why;
	struct wr_cidr c;
	size_t i;
	int k, rc, ret;

	/* What MMDB_open would only call an I/O error (mmap of nothing, of a directory). */
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		seterr(err, errlen, "%s is a directory, not a MaxMind DB file", path);
		return -EISDIR;
	}
	if (!stat(path, &st) && S_ISREG(st.st_mode) && !st.st_size) {
		seterr(err, errlen, "%s is empty, not a MaxMind DB file", path);
		return -EINVAL;
	}
	rc = MMDB_open(path, MMDB_MODE_MMAP, &w.db);
	if (rc != MMDB_SUCCESS) {
		int e = errno;

		why = open_error(rc);
		if (why)
			seterr(err, errlen, "%s %s (%s)", path, why, MMDB_strerror(rc));
		else if (rc == MMDB_FILE_OPEN_ERROR || rc == MMDB_IO_ERROR)
			seterr(err, errlen, "cannot read %s: %s", path,
			       e ? strerror(e) : MMDB_strerror(rc));
		else
			seterr(err, errlen, "cannot open %s: %s", path, MMDB_strerror(rc));
		if (rc == MMDB_FILE_OPEN_ERROR && e)
			return -e;
		return rc == MMDB_OUT_OF_MEMORY_ERROR ? -ENOMEM : -EINVAL;
	}
	if (w.db.metadata.ip_version != 4 && w.db.metadata.ip_version != 6) {
		seterr(err, errlen, "%s: ip_version %u (4 or 6)", path, w.db.metadata.ip_version);
		ret = -EINVAL;
		goto out;
	}
	/* Pages of the cache that no record lands in are never touched, so never allocated. */
	w.cache = calloc(w.db.data_section_size ? w.db.data_section_size : 1, 1);
	if (!w.cache) {
		seterr(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	ret = walk(&w);
	for (i = 0; !ret && i < w.nout; i++) {
		c = w.out[i];
		for (k = 0; k < 4; k++)
			c.addr[k] = htonl(c.addr[k]);
		rc = cb(&c, ctx);
		if (rc < 0) {
			seterr(err, errlen, "%s", strerror(-rc));
			ret = rc;
		}
	}
	if (!ret)
		ret = w.nout > INT_MAX ? INT_MAX : (int)w.nout;
out:
	free(w.cache);
	free(w.out);
	MMDB_close(&w.db);
	return ret;
}
