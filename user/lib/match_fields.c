// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The further match fields of the rule grammar (weir_rule.xmatch): sport,
 * dst, len, ttl, frag, dscp, payload and iface, each a keyword of the table in
 * rules.c (its reader and printer here), and what they say together with
 * the rest of a rule (wr_fields_end). What a flood's packets have in common
 * when their sources do not. Also the grammar's error helpers, which
 * rules.c uses too.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/rules_int.h"
#include "weir_limiter.h"

/* Record an error about argv[word] (-1: the rule as a whole). */
int perr(struct wr_perr *pe, int word, int err, const char *fmt, ...)
{
	va_list ap;

	pe->word = word;
	va_start(ap, fmt);
	vsnprintf(pe->msg, sizeof(pe->msg), fmt, ap);
	va_end(ap);
	return err;
}

int bad(struct wr_perr *pe, int word, const char *what, const char *val)
{
	return perr(pe, word, -EINVAL, "invalid %s \"%s\"", what, val);
}

/*
 * A range "A" or "A-B" of what (a keyword), each end in 0..max, into lo and
 * hi; an empty one (A > B) is refused by name.
 */
static int range(struct wr_rule_parser *p, const char *what, uint64_t max, uint64_t *lo,
		 uint64_t *hi)
{
	const char *val = VAL(p), *dash = strchr(val, '-');
	char buf[32];

	if (strlen(val) >= sizeof(buf))
		return bad(p->pe, AT(p), what, val);
	strcpy(buf, val);
	if (dash)
		buf[dash - val] = '\0';
	if (parse_u64(buf, 0, max, lo) || (dash && parse_u64(dash + 1, 0, max, hi)))
		return perr(p->pe, AT(p), -EINVAL, "invalid %s \"%s\" (N or A-B, 0 .. %" PRIu64
			    ")", what, val, max);
	if (!dash)
		*hi = *lo;
	if (*lo > *hi)
		return perr(p->pe, AT(p), -EINVAL, "empty %s range \"%s\": %" PRIu64 " is above %"
			    PRIu64, what, val, *lo, *hi);
	return 0;
}

static void print_range(const char *key, const char *word, uint64_t lo, uint64_t hi)
{
	char buf[48];

	if (lo == hi)
		snprintf(buf, sizeof(buf), "%" PRIu64, lo);
	else
		snprintf(buf, sizeof(buf), "%" PRIu64 "-%" PRIu64, lo, hi);
	print_text(" %s", word);
	print_str(key, " %s", buf);
}

/*
 * The range keywords: each keeps its bounds in two fields of struct
 * weir_rule of one width, and has its bit in xmatch.
 */
#define RANGE_FIELD(f) offsetof(struct weir_rule, f##_lo), offsetof(struct weir_rule, f##_hi), \
		       sizeof(((struct weir_rule *)0)->f##_lo)
static const struct range_kw {
	const char *word;
	uint64_t max;
	size_t lo, hi, size;
	__u32 bit;
} range_kws[] = {
	{ "sport", 65535, RANGE_FIELD(sport), WEIR_X_SPORT },
	{ "len", WR_GSO_MAX_LEN, RANGE_FIELD(len), WEIR_X_LEN },
	{ "ttl", 255, RANGE_FIELD(ttl), WEIR_X_TTL },
};

static const struct range_kw *range_kw(const char *word)
{
	size_t i;

	for (i = 0; i < sizeof(range_kws) / sizeof(range_kws[0]); i++)
		if (!strcmp(range_kws[i].word, word))
			return &range_kws[i];
	return NULL;
}

/* A field of size bytes (1, 2 or 4) at off of r, as a number. */
static uint64_t field_get(const struct weir_rule *r, size_t off, size_t size)
{
	const unsigned char *b = (const unsigned char *)r + off;

	if (size == 1)
		return *b;
	if (size == 2)
		return *(const __u16 *)b;
	return *(const __u32 *)b;
}

static void field_set(struct weir_rule *r, size_t off, size_t size, uint64_t v)
{
	unsigned char *b = (unsigned char *)r + off;

	if (size == 1)
		*b = v;
	else if (size == 2)
		*(__u16 *)b = v;
	else
		*(__u32 *)b = v;
}

/* sport, len and ttl: the keyword being read is argv[i]. */
int kw_range(struct wr_rule_parser *p)
{
	const struct range_kw *k = range_kw(p->argv[p->i]);
	uint64_t lo, hi;
	int err;

	if (!k)
		return perr(p->pe, p->i, -EINVAL, "not a range keyword: %s", p->argv[p->i]);
	err = range(p, k->word, k->max, &lo, &hi);
	if (err)
		return err;
	field_set(p->r, k->lo, k->size, lo);
	field_set(p->r, k->hi, k->size, hi);
	p->r->xmatch |= k->bit;
	return 1;
}

static void print_range_kw(const struct weir_rule *r, const char *word)
{
	const struct range_kw *k = range_kw(word);

	if (k && (r->xmatch & k->bit))
		print_range(k->word, k->word, field_get(r, k->lo, k->size),
			    field_get(r, k->hi, k->size));
}

void print_sport(const struct weir_rule *r)
{
	print_range_kw(r, "sport");
}

void print_len(const struct weir_rule *r)
{
	print_range_kw(r, "len");
}

void print_ttl(const struct weir_rule *r)
{
	print_range_kw(r, "ttl");
}

/* A word that may be a prefix of `dst` (the next keyword never has a dot or a colon). */
bool dst_item(const char *w)
{
	return strchr(w, '.') || strchr(w, ':');
}

/* Do prefixes a and b (of one family) share an address? */
static bool dst_overlap(const struct weir_rule *r, int a, int b)
{
	int k;

	for (k = 0; k < 4; k++) {
		__u32 m = r->dst_mask[a][k] & r->dst_mask[b][k];

		if ((r->dst_net[a][k] & m) != (r->dst_net[b][k] & m))
			return false;
	}
	return true;
}

int kw_dst(struct wr_rule_parser *p)
{
	struct weir_rule *r = p->r;
	int n, at, k, d;

	for (n = 0, at = AT(p); at < p->argc && dst_item(p->argv[at]); n++, at++) {
		const char *w = p->argv[at];
		struct wr_cidr c;

		if (parse_cidr(w, &c))
			return perr(p->pe, at, -EINVAL, "invalid dst \"%s\" (a CIDR, IPv4 or IPv6, "
				    "host bits 0)", w);
		if (n == WEIR_MAX_DST)
			return perr(p->pe, at, -E2BIG, "dst takes at most %d prefixes: \"%s\" is "
				    "one more", WEIR_MAX_DST, w);
		r->dst_family[n] = c.family;
		r->dst_plen[n] = c.plen;
		memcpy(r->dst_net[n], c.addr, sizeof(r->dst_net[n]));
		for (k = 0; k < 4; k++)
			r->dst_mask[n][k] = c.family == 4 ? (k ? 0 : wr_prefix_word(c.plen, 0))
							  : wr_prefix_word(c.plen, k);
		for (d = 0; d < n; d++)
			if (r->dst_family[d] == c.family && dst_overlap(r, d, n))
				return perr(p->pe, at, -EINVAL, "dst \"%s\" overlaps dst \"%s\" of "
					    "the same rule", w, p->argv[AT(p) + d]);
	}
	if (!n)
		return perr(p->pe, AT(p), -EINVAL, "invalid dst \"%s\" (a CIDR, IPv4 or IPv6)",
			    VAL(p));
	r->nr_dst = n;
	r->xmatch |= WEIR_X_DST;
	return n;
}

void print_dst(const struct weir_rule *r)
{
	char buf[64];
	int d;

	if (!(r->xmatch & WEIR_X_DST))
		return;
	print_text(" dst");
	open_array("dst");
	for (d = 0; d < r->nr_dst && d < WEIR_MAX_DST; d++) {
		format_cidr(r->dst_family[d], r->dst_net[d], r->dst_plen[d], buf, sizeof(buf));
		print_str(NULL, " %s", buf);
	}
	close_array();
}

static const char *const frag_words[] = {
	[WEIR_FRAG_NONE] = "none",
	[WEIR_FRAG_FIRST] = "first",
	[WEIR_FRAG_LATER] = "later",
	[WEIR_FRAG_ANY] = "any",
};

int kw_frag(struct wr_rule_parser *p)
{
	unsigned int f;

	for (f = 0; f < ARRAY_SIZE(frag_words); f++)
		if (!strcmp(VAL(p), frag_words[f]))
			break;
	if (f == ARRAY_SIZE(frag_words))
		return perr(p->pe, AT(p), -EINVAL, "invalid frag \"%s\" (none, first, later or "
			    "any)", VAL(p));
	p->r->frag = f;
	p->r->xmatch |= WEIR_X_FRAG;
	return 1;
}

void print_frag(const struct weir_rule *r)
{
	if (r->xmatch & WEIR_X_FRAG)
		print_str("frag", " frag %s", frag_words[r->frag & 3]);
}

/* DSCP is the top 6 bits of the IPv4 TOS / IPv6 traffic class byte. */
#define WR_DSCP_MAX	63

int kw_dscp(struct wr_rule_parser *p)
{
	uint64_t v;

	if (parse_u64(VAL(p), 0, WR_DSCP_MAX, &v))
		return perr(p->pe, AT(p), -EINVAL, "invalid dscp \"%s\" (0 .. %d)", VAL(p),
			    WR_DSCP_MAX);
	p->r->dscp = v;
	p->r->xmatch |= WEIR_X_DSCP;
	return 1;
}

void print_dscp(const struct weir_rule *r)
{
	if (r->xmatch & WEIR_X_DSCP)
		print_u64("dscp", " dscp %llu", r->dscp);
}

/*
 * iface DEV: an interface that exists now (its ifindex now; the writer
 * resolves the name again at every commit, so a deleted and recreated
 * interface is matched under its new ifindex from the next commit on).
 * Whether weir is attached to it is not asked: a rule may be written
 * before its interface is attached, and matches nothing until it is.
 */
int kw_iface(struct wr_rule_parser *p)
{
	const char *v = VAL(p);
	unsigned int idx;

	if (!*v || strlen(v) >= WEIR_IFNAME_LEN)
		return perr(p->pe, AT(p), -EINVAL, "invalid iface \"%s\" (an interface name, "
			    "1 .. %d bytes)", v, WEIR_IFNAME_LEN - 1);
	idx = if_nametoindex(v);
	if (!idx)
		return perr(p->pe, AT(p), -ENODEV, "iface \"%s\": no such interface", v);
	snprintf(p->r->ifname, sizeof(p->r->ifname), "%s", v);
	p->r->ifindex = idx;
	p->r->xmatch |= WEIR_X_IFACE;
	return 1;
}

void print_iface(const struct weir_rule *r)
{
	if (r->xmatch & WEIR_X_IFACE)
		print_str("iface", " iface %s", r->ifname);
}

/* A word that may be a payload term: each starts with its offset's digit. */
bool payload_item(const char *w)
{
	return isdigit((unsigned char)w[0]);
}

/* A 32-bit number (decimal, 0x hex or 0 octal) from s to its end or stop. */
static int u32_word(const char *s, char stop, __u32 *out, const char **rest)
{
	unsigned long long v;
	char *e;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &e, 0);
	if (errno || v > UINT32_MAX || (*e != stop && *e))
		return -EINVAL;
	*out = v;
	*rest = e;
	return 0;
}

/* Bytes of the payload term's word that its mask tests, bit b for byte off + b. */
static unsigned int term_bytes(__u32 mask_host)
{
	unsigned int b, bits = 0;

	for (b = 0; b < 4; b++)
		if (mask_host & (0xffu << (24 - 8 * b)))
			bits |= 1u << b;
	return bits;
}

/* One term: OFF[/MASK]=VALUE, into t; errors about word at. */
static int pay_term(struct wr_rule_parser *p, int at, struct weir_pay_term *t)
{
	const char *w = p->argv[at], *rest;
	__u32 off, mask = 0xffffffffu, value;

	if (u32_word(w, strchr(w, '/') ? '/' : '=', &off, &rest))
		return perr(p->pe, at, -EINVAL, "invalid payload term \"%s\" (%s: OFF a byte "
			    "offset into the L4 payload, 0 .. %d)", w, WR_PAY_ITEMS,
			    WEIR_PAY_MAX_OFF);
	if (off > WEIR_PAY_MAX_OFF)
		return perr(p->pe, at, -ERANGE, "payload offset %u in \"%s\" is past %d", off, w,
			    WEIR_PAY_MAX_OFF);
	if (*rest == '/' && u32_word(rest + 1, '=', &mask, &rest))
		return perr(p->pe, at, -EINVAL, "invalid payload mask in \"%s\" (%s: a 32-bit "
			    "number)", w, WR_PAY_ITEMS);
	if (*rest != '=')
		return perr(p->pe, at, -EINVAL, "payload term \"%s\" needs =VALUE (%s)", w,
			    WR_PAY_ITEMS);
	if (u32_word(rest + 1, '\0', &value, &rest))
		return perr(p->pe, at, -EINVAL, "invalid payload value in \"%s\" (%s: a 32-bit "
			    "number)", w, WR_PAY_ITEMS);
	if (!mask)
		return perr(p->pe, at, -EINVAL, "payload mask 0 in \"%s\" tests nothing", w);
	if (value & ~mask)
		return perr(p->pe, at, -EINVAL, "payload value 0x%x in \"%s\" has bits outside "
			    "its mask 0x%x: it could never match", value, w, mask);
	t->off = off;
	/* The packet's word is compared as read: network byte order. */
	t->mask = htonl(mask);
	t->value = htonl(value);
	return 0;
}

int kw_payload(struct wr_rule_parser *p)
{
	struct weir_rule *r = p->r;
	int n, at, k;

	for (n = 0, at = AT(p); at < p->argc && payload_item(p->argv[at]); n++, at++) {
		struct weir_pay_term *t = &r->pay[n < WEIR_MAX_PAY ? n : 0];
		int err;

		if (n == WEIR_MAX_PAY)
			return perr(p->pe, at, -E2BIG, "payload takes at most %d terms: "
				    "\"%s\" is a fifth", WEIR_MAX_PAY, p->argv[at]);
		err = pay_term(p, at, t);
		if (err)
			return err;
		/* Two terms that test one byte would be one redundant or both contradictory. */
		for (k = 0; k < n; k++) {
			const struct weir_pay_term *o = &r->pay[k];
			int d = (int)t->off - (int)o->off;
			unsigned int tb = term_bytes(ntohl(t->mask));
			unsigned int ob = term_bytes(ntohl(o->mask));

			/* Byte i of o is byte i - d of t. */
			if (d > -4 && d < 4 && (d >= 0 ? (ob >> d) & tb : (tb >> -d) & ob))
				return perr(p->pe, at, -EINVAL, "payload term \"%s\" overlaps "
					    "\"%s\": both test a byte (one term per byte)",
					    p->argv[at], p->argv[AT(p) + k]);
		}
	}
	if (!n)
		return perr(p->pe, AT(p), -EINVAL, "invalid payload term \"%s\" (%s)", VAL(p),
			    WR_PAY_ITEMS);
	r->nr_pay = n;
	r->xmatch |= WEIR_X_PAYLOAD;
	return n;
}

void print_payload(const struct weir_rule *r)
{
	char buf[64];
	int t;

	if (!(r->xmatch & WEIR_X_PAYLOAD))
		return;
	print_text(" payload");
	open_array("payload");
	for (t = 0; t < r->nr_pay && t < WEIR_MAX_PAY; t++) {
		__u32 mask = ntohl(r->pay[t].mask), value = ntohl(r->pay[t].value);

		if (mask == 0xffffffffu)
			snprintf(buf, sizeof(buf), "%u=0x%08x", r->pay[t].off, value);
		else
			snprintf(buf, sizeof(buf), "%u/0x%08x=0x%08x", r->pay[t].off, mask, value);
		print_str(NULL, " %s", buf);
	}
	close_array();
}

int wr_fields_end(const struct weir_rule *r, struct wr_perr *pe)
{
	bool ports = !(r->match & WEIR_M_PROTO) || r->proto == 6 || r->proto == 17;
	int d, i;

	if (!r->xmatch)
		return 0;
	for (i = 0; i < r->nr_limits; i++)
		if (r->limits[i].algo == WEIR_ALGO_CONNS)
			return perr(pe, -1, -EINVAL, "conns counts connections by family, proto, "
				    "dport and src only: sport, dst, len, ttl, frag, dscp, "
				    "payload and iface are for rate limits");
	if (r->action == WEIR_ACT_COOKIE)
		return perr(pe, -1, -EINVAL, "action cookie matches SYNs by family, proto, dport, "
			    "src and tcp-flags only (the ACK that answers a cookie must match "
			    "the same rule): no sport, dst, len, ttl, frag, dscp, payload or "
			    "iface");
	if ((r->xmatch & WEIR_X_SPORT) && !ports)
		return perr(pe, -1, -EINVAL, "sport needs proto tcp or udp");
	if ((r->xmatch & WEIR_X_PAYLOAD) && !ports)
		return perr(pe, -1, -EINVAL, "payload needs proto tcp or udp: terms are read "
			    "after the TCP or UDP header");
	if ((r->xmatch & WEIR_X_FRAG) && r->frag == WEIR_FRAG_LATER &&
	    ((r->match & (WEIR_M_DPORT | WEIR_M_TCPFLAGS | WEIR_M_ICMPTYPE)) ||
	     (r->xmatch & (WEIR_X_SPORT | WEIR_X_PAYLOAD))))
		return perr(pe, -1, -EINVAL, "frag later matches fragments without an upper-layer "
			    "header: no dport, sport, tcp-flags, icmp-type or payload with it");
	if ((r->xmatch & WEIR_X_DST) && (r->match & WEIR_M_FAMILY))
		for (d = 0; d < r->nr_dst && d < WEIR_MAX_DST; d++)
			if (r->dst_family[d] != r->family)
				return perr(pe, -1, -EINVAL, "dst prefix %d is IPv%d but the "
					    "rule is ipv%d (its family or src)", d + 1,
					    r->dst_family[d], r->family);
	return 0;
}
