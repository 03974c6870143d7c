/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The rule grammar's inside, shared by its files: the parser's state
 * (rules.c), the error helpers and the further match fields' keywords
 * (match_fields.c), what a rule does (rule_actions.c), which the keyword
 * table in rules.c lists.
 */
#ifndef WEIR_LIB_RULES_INT_H
#define WEIR_LIB_RULES_INT_H

#include <stdbool.h>
#include "lib/libweir.h"

/* The state of one rule being read, keyword by keyword. */
struct wr_rule_parser {
	int argc;
	char **argv;
	int i;				/* the keyword being read: argv[i] */
	struct weir_rule *r;
	const char *name;
	struct wr_perr *pe;
	struct weir_limit *l;		/* the limit being read; NULL before the first */
	int limit_word;			/* its value's word, where its own errors point */
	bool burst_set;
	unsigned int seen_rule, seen_limit;	/* keywords given, by their place in the table */
	struct weir_ban bans[WEIR_MAX_LIMITS];	/* each limit's penalty box (penalty.c) */
	char srcset[WEIR_SRCSET_LEN];		/* src's source set in one spelling, "" for none */
};

/* Record an error about argv[word] (-1: the rule as a whole); returns err. */
int perr(struct wr_perr *pe, int word, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "invalid WHAT \"VAL\"" about argv[word]: -EINVAL. */
int bad(struct wr_perr *pe, int word, const char *what, const char *val);

/* The value of the keyword being read, and its word. */
#define VAL(p) ((p)->argv[(p)->i + 1])
#define AT(p) ((p)->i + 1)

/* The further match fields (match_fields.c): sport, dst, len, ttl, frag, dscp,
 * payload, iface.
 */
/* sport, len and ttl (the keyword being read names which). */
int kw_range(struct wr_rule_parser *p);
void print_sport(const struct weir_rule *r);
bool dst_item(const char *w);
int kw_dst(struct wr_rule_parser *p);
void print_dst(const struct weir_rule *r);
void print_len(const struct weir_rule *r);
void print_ttl(const struct weir_rule *r);
int kw_frag(struct wr_rule_parser *p);
void print_frag(const struct weir_rule *r);
int kw_dscp(struct wr_rule_parser *p);
void print_dscp(const struct weir_rule *r);
bool payload_item(const char *w);
int kw_payload(struct wr_rule_parser *p);
void print_payload(const struct weir_rule *r);
int kw_iface(struct wr_rule_parser *p);
void print_iface(const struct weir_rule *r);
/* What the further fields say together with the rest of rule r, once all is read. */
int wr_fields_end(const struct weir_rule *r, struct wr_perr *pe);

/* The penalty box (penalty.c): ban, after, max; checked as each limit ends. */
int kw_ban(struct wr_rule_parser *p);
int ban_end(struct wr_rule_parser *p);
void print_ban(const char *word, const struct weir_ban *b);

/* The limit keys (limit_keys.c): "per". */
#define WR_PER_ITEMS "src[/LEN], src6/LEN, dst[/LEN], dst6/LEN, flow or all"
bool per_item(const char *w);
int kw_per(struct wr_rule_parser *p);
void print_per(const struct weir_limit *l);

/* src (srcset.c): a CIDR, or a source set whose words print_srcset takes from the rule set. */
int kw_src(struct wr_rule_parser *p);
void print_src(const struct weir_rule *r);
void print_srcset(const struct weir_ruleset *rs, const struct weir_rule *r);

/*
 * What the rule does (rule_actions.c): action, cookie, cookie-budget,
 * cookie-dst-budget, tcp-state, verified-class, spare.
 */
int kw_action(struct wr_rule_parser *p);
void print_action(const struct weir_rule *r);
int kw_cookie(struct wr_rule_parser *p);
void print_cookie(const struct weir_rule *r);
int kw_cookie_budget(struct wr_rule_parser *p);
void print_cookie_budget(const struct weir_rule *r);
int kw_cookie_dst_budget(struct wr_rule_parser *p);
void print_cookie_dst_budget(const struct weir_rule *r);
int kw_tcp_state(struct wr_rule_parser *p);
void print_tcp_state(const struct weir_rule *r);
int kw_verified_class(struct wr_rule_parser *p);
void print_verified_class(const struct weir_rule *r);
int kw_spare(struct wr_rule_parser *p);
void print_spare(const struct weir_rule *r);
/* What they say together with the rest of rule r, once all is read; sets cookie budgets. */
int wr_action_end(struct weir_rule *r, struct wr_perr *pe);

#define WR_DST_ITEMS "CIDR, IPv4 or IPv6"
#define WR_PAY_ITEMS "OFF[/MASK]=VALUE"

#endif /* WEIR_LIB_RULES_INT_H */
