// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The limit keys of the rule grammar ("per"): which bucket a packet is
 * charged to, by source (src/LEN src6/LEN), destination (dst/LEN
 * dst6/LEN), flow (source address and port) or the whole rule (all),
 * optionally fleet-wide. A keyword of the table in rules.c, its reader and
 * printer here.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "lib/rules_int.h"
#include "weir_limiter.h"

bool per_item(const char *w)
{
	return !strcmp(w, "all") || !strcmp(w, "src") || !strncmp(w, "src/", 4) ||
	       !strncmp(w, "src6/", 5) || !strcmp(w, "dst") || !strncmp(w, "dst/", 4) ||
	       !strncmp(w, "dst6/", 5) || !strcmp(w, "flow") || !strncmp(w, "flow/", 5) ||
	       !strcmp(w, "fleet");
}

/*
 * One key word of "per": its kind, and a prefix length (-1: none; which
 * family by *v6). -1 and an error said when the word is not a key.
 */
static int per_word(struct wr_rule_parser *p, int at, const char *w, int *plen, bool *v6)
{
	uint64_t v;
	int kind;

	*plen = -1;
	*v6 = false;
	if (!strcmp(w, "all"))
		return WEIR_KEY_ALL;
	if (!strcmp(w, "flow"))
		return WEIR_KEY_FLOW;
	if (!strncmp(w, "flow/", 5))
		return bad(p->pe, at, "per flow key (a flow is a whole source address and "
			   "port; it takes no prefix)", w);
	kind = w[0] == 's' ? WEIR_KEY_SRC : WEIR_KEY_DST;
	if (w[3] == '/') {
		if (parse_u64(w + 4, 0, 32, &v))
			return bad(p->pe, at, kind == WEIR_KEY_SRC ? "IPv4 key prefix" :
				   "IPv4 per dst prefix", w);
		*plen = v;
	} else if (w[3] == '6') {
		if (parse_u64(w + 5, 0, 128, &v))
			return bad(p->pe, at, kind == WEIR_KEY_SRC ? "IPv6 key prefix" :
				   "IPv6 per dst prefix", w);
		*plen = v;
		*v6 = true;
	}
	return kind;
}

/*
 * The per key words that follow. One kind per limit: "per src/24 src6/48",
 * "per dst/32 dst6/64", "per flow" or "per all", then optionally "fleet".
 */
int kw_per(struct wr_rule_parser *p)
{
	static const char *const kind_name[] = { "src", "all", "dst", "flow" };
	struct weir_limit *l = p->l;
	int n, at, kind = -1;

	if (!l)
		return perr(p->pe, p->i, -EINVAL, "\"per\" must follow a limit");
	for (n = 0, at = AT(p); at < p->argc && per_item(p->argv[at]); n++, at++) {
		const char *w = p->argv[at];
		int k, plen;
		bool v6;

		if (!strcmp(w, "fleet")) {
			if (!n)
				break;	/* a key first: "per fleet" says nothing */
			l->fleet = 1;
			continue;
		}
		k = per_word(p, at, w, &plen, &v6);
		if (k < 0)
			return k;
		if (kind >= 0 && k != kind)
			return perr(p->pe, at, -EINVAL, "per %s: one key kind per limit, and this "
				    "one is per %s", w, kind_name[kind]);
		kind = k;
		l->key = k;
		if (k == WEIR_KEY_ALL) {
			l->plen4 = 0;
			l->plen6 = 0;
		} else if (k == WEIR_KEY_FLOW) {
			/* The whole IPv4 source, the IPv6 /64: the port fills the next word. */
			l->plen4 = 32;
			l->plen6 = 64;
		} else if (plen >= 0 && v6) {
			l->plen6 = plen;
		} else if (plen >= 0) {
			l->plen4 = plen;
		}
	}
	if (!n)
		return perr(p->pe, AT(p), -EINVAL, "invalid per key (%s) \"%s\"",
			    WR_PER_ITEMS, VAL(p));
	return n;
}

void print_per(const struct weir_limit *l)
{
	if (l->key == WEIR_KEY_ALL) {
		print_str("per", " per %s", "all");
	} else if (l->key == WEIR_KEY_FLOW) {
		print_str("per", " per %s", "flow");
	} else {
		bool dst = l->key == WEIR_KEY_DST;

		print_str("per", " per %s", dst ? "dst" : "src");
		print_u64("prefix4", "/%llu", l->plen4);
		print_u64("prefix6", dst ? " dst6/%llu" : " src6/%llu", l->plen6);
	}
}

const char *wr_key_kind_name(unsigned int kind)
{
	static const char *const names[] = { "src", "all", "dst", "flow" };

	return kind < ARRAY_SIZE(names) ? names[kind] : "?";
}

/*
 * Bucket key k as people read it: its address (a host bare, a prefix as
 * CIDR; a host's /32 or /128 kept unless bare), a flow's with "port N"
 * after it; "all" for a rule-wide bucket (family 0). The kind is not said: callers label it (wr_key_kind_name),
 * so a destination is never shown as a source.
 */
void wr_format_key(const struct weir_key *k, bool bare, char *buf, size_t len)
{
	__u32 a[4];
	size_t n;

	if (!k->family) {
		snprintf(buf, len, "all");
		return;
	}
	memcpy(a, k->addr, sizeof(a));
	/* A flow's port sits in the word after its address (wr_make_key_kind). */
	if (k->kind == WEIR_KEY_FLOW)
		a[k->family == 4 ? 1 : 2] = 0;
	format_cidr(k->family, a, k->plen, buf, len);
	if (bare && k->plen == (k->family == 4 ? 32 : 128))
		buf[strcspn(buf, "/")] = '\0';
	n = strlen(buf);
	if (k->kind == WEIR_KEY_FLOW && n < len)
		snprintf(buf + n, len - n, " port %u", k->addr[k->family == 4 ? 1 : 2]);
}
