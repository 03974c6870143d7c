// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A limit's penalty box in the rule grammar: `ban DUR [after N] [max
 * DUR]` after a rate limit (struct weir_ban, kept in the rule set beside
 * the rules; the daemon enforces it, user/daemon/bans.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "lib/rules_int.h"
#include "weir_limiter.h"

/* The longest ban and repeat: 30 days. The most refusals `after` takes. */
#define BAN_MAX_S	(30u * 86400)
#define AFTER_MAX	1000000u

static struct weir_ban *cur_ban(struct wr_rule_parser *p)
{
	return &p->bans[(p->r->nr_limits - 1) % WEIR_MAX_LIMITS];
}

/* A whole number of seconds from 1 s to BAN_MAX_S; 0 if it is not one. */
static __u32 ban_secs(const char *s)
{
	uint64_t ns;

	if (wr_parse_duration_ns(s, &ns) || ns % 1000000000ULL || ns < 1000000000ULL ||
	    ns > BAN_MAX_S * 1000000000ULL)
		return 0;
	return ns / 1000000000ULL;
}

int kw_ban(struct wr_rule_parser *p)
{
	const char *w = p->argv[p->i];
	struct weir_ban *b;
	uint64_t v;

	if (!p->l)
		return perr(p->pe, p->i, -EINVAL, "\"%s\" must follow a limit", w);
	b = cur_ban(p);
	if (!strcmp(w, "after")) {
		if (parse_u64(VAL(p), 1, AFTER_MAX, &v))
			return perr(p->pe, AT(p), -EINVAL, "invalid after \"%s\": refusals from 1 "
				    "to %u", VAL(p), AFTER_MAX);
		b->after = v;
		return 1;
	}
	v = ban_secs(VAL(p));
	if (!v)
		return perr(p->pe, AT(p), -EINVAL, "invalid %s \"%s\": whole seconds from 1s to "
			    "30d (90s, 10m, 1h, 1d)", w, VAL(p));
	if (!strcmp(w, "max"))
		b->max_s = v;
	else
		b->ban_s = v;
	return 1;
}

int ban_end(struct wr_rule_parser *p)
{
	struct weir_ban *b;

	if (!p->l)
		return 0;
	b = cur_ban(p);
	if (!b->ban_s) {
		if (b->after || b->max_s)
			return perr(p->pe, p->limit_word, -EINVAL, "\"%s\" goes with ban DURATION "
				    "in the same limit", b->after ? "after" : "max");
		return 0;
	}
	if (p->l->algo == WEIR_ALGO_CONNS)
		return perr(p->pe, p->limit_word, -EINVAL, "ban goes with a rate limit, not conns");
	if (p->l->key != WEIR_KEY_SRC)
		return perr(p->pe, p->limit_word, -EINVAL, "ban needs a limit per source (src[/LEN] "
			    "src6/LEN): a %s bucket has no source to ban",
			    p->l->key == WEIR_KEY_ALL ? "rule-wide" :
			    p->l->key == WEIR_KEY_DST ? "per-destination" : "per-flow");
	if (p->l->fleet)
		return perr(p->pe, p->limit_word, -EINVAL, "ban goes with a host limit, not scope "
			    "fleet");
	if (b->max_s && b->max_s < b->ban_s)
		return perr(p->pe, p->limit_word, -EINVAL, "max %us is shorter than ban %us",
			    b->max_s, b->ban_s);
	if (!b->max_s)
		b->max_s = b->ban_s;
	if (!b->after)
		b->after = 1;
	return 0;
}

void print_ban(const char *word, const struct weir_ban *b)
{
	char d[32];

	if (!b->ban_s)
		return;
	if (!strcmp(word, "after")) {
		print_u64("ban_after", b->after != 1 ? " after %llu" : NULL, b->after);
		return;
	}
	wr_format_secs(!strcmp(word, "max") ? b->max_s : b->ban_s, d, sizeof(d));
	if (!strcmp(word, "max"))
		print_str("ban_max", b->max_s != b->ban_s ? " max %s" : NULL, d);
	else
		print_str("ban", " ban %s", d);
	print_u64(!strcmp(word, "max") ? "ban_max_s" : "ban_s", NULL,
		  !strcmp(word, "max") ? b->max_s : b->ban_s);
}
