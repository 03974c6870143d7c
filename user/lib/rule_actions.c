// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a rule does with what it matches, in the rule grammar: action
 * (drop, dry-run, cookie, block), SYN cookies' mode and budgets,
 * tcp-state, verified-class and spare verified; and what these say
 * together once the rule is read (wr_action_end). The keyword table in
 * rules.c lists them.
 */
#include <errno.h>
#include <string.h>
#include "lib/libweir.h"
#include "lib/rules_int.h"
#include "weir_limiter.h"

int kw_action(struct wr_rule_parser *p)
{
	if (!strcmp(VAL(p), "drop"))
		p->r->action = WEIR_ACT_DROP;
	else if (!strcmp(VAL(p), "dry-run"))
		p->r->action = WEIR_ACT_DRYRUN;
	else if (!strcmp(VAL(p), "cookie"))
		p->r->action = WEIR_ACT_COOKIE;
	else if (!strcmp(VAL(p), "block"))
		p->r->action = WEIR_ACT_BLOCK;
	else
		return bad(p->pe, AT(p), "action", VAL(p));
	return 1;
}

void print_action(const struct weir_rule *r)
{
	static const char *const names[] = { [WEIR_ACT_DROP] = "drop",
					     [WEIR_ACT_DRYRUN] = "dry-run",
					     [WEIR_ACT_COOKIE] = "cookie",
					     [WEIR_ACT_BLOCK] = "block" };

	print_str("action", " action %s", names[r->action & 3]);
}

/* Which SYNs an action cookie rule answers. */
int kw_cookie(struct wr_rule_parser *p)
{
	if (!strcmp(VAL(p), "over-limit"))
		p->r->cookie = WEIR_COOKIE_OVER;
	else if (!strcmp(VAL(p), "always"))
		p->r->cookie = WEIR_COOKIE_ALWAYS;
	else
		return bad(p->pe, AT(p), "cookie mode (over-limit, always)", VAL(p));
	return 1;
}

void print_cookie(const struct weir_rule *r)
{
	if (r->action == WEIR_ACT_COOKIE)
		print_str("cookie", " cookie %s",
			  r->cookie == WEIR_COOKIE_ALWAYS ? "always" : "over-limit");
}

/* tcp-state on|auto|off: out-of-state TCP segments dropped (bpf/tcpstate.h). */
int kw_tcp_state(struct wr_rule_parser *p)
{
	p->r->flags &= ~(WEIR_RF_TCP_STATE | WEIR_RF_TCP_AUTO);
	if (!strcmp(VAL(p), "on"))
		p->r->flags |= WEIR_RF_TCP_STATE;
	else if (!strcmp(VAL(p), "auto"))
		p->r->flags |= WEIR_RF_TCP_STATE | WEIR_RF_TCP_AUTO;
	else if (strcmp(VAL(p), "off"))
		return bad(p->pe, AT(p), "tcp-state (on, auto, off)", VAL(p));
	return 1;
}

void print_tcp_state(const struct weir_rule *r)
{
	if (r->flags & WEIR_RF_TCP_STATE)
		print_str("tcp_state", " tcp-state %s",
			  (r->flags & WEIR_RF_TCP_AUTO) ? "auto" : "on");
}

/* Default SYN-ACK budgets: per second for the rule, and per destination address. */
#define WR_COOKIE_BUDGET	10000
#define WR_COOKIE_DST_BUDGET	8

int kw_cookie_budget(struct wr_rule_parser *p)
{
	uint64_t v;

	if (parse_u64(VAL(p), 1, 100000000, &v))
		return bad(p->pe, AT(p), "cookie-budget (SYN-ACKs per second, 1..100000000)",
			   VAL(p));
	p->r->ck_rate = v;
	return 1;
}

void print_cookie_budget(const struct weir_rule *r)
{
	if (r->action == WEIR_ACT_COOKIE)
		print_u64("cookie_budget", " cookie-budget %llu", r->ck_rate);
}

int kw_cookie_dst_budget(struct wr_rule_parser *p)
{
	uint64_t v;

	if (parse_u64(VAL(p), 1, 1000000, &v))
		return bad(p->pe, AT(p),
			   "cookie-dst-budget (SYN-ACKs per second to one address, 1..1000000)",
			   VAL(p));
	p->r->ckd_rate = v;
	return 1;
}

void print_cookie_dst_budget(const struct weir_rule *r)
{
	if (r->action == WEIR_ACT_COOKIE)
		print_u64("cookie_dst_budget", " cookie-dst-budget %llu", r->ckd_rate);
}

int kw_verified_class(struct wr_rule_parser *p)
{
	uint64_t v;

	if (parse_u64(VAL(p), 0, WEIR_MAX_CLASS, &v))
		return bad(p->pe, AT(p), "verified-class (0 critical .. 3)", VAL(p));
	p->r->verified_class = v + 1;
	return 1;
}

void print_verified_class(const struct weir_rule *r)
{
	if (r->verified_class)
		print_u64("verified_class", " verified-class %llu", r->verified_class - 1);
}

/* spare verified: sources that completed a handshake do not match the rule. */
int kw_spare(struct wr_rule_parser *p)
{
	if (strcmp(VAL(p), "verified"))
		return bad(p->pe, AT(p), "spare (verified)", VAL(p));
	p->r->flags |= WEIR_RF_SPARE_VERIFIED;
	return 1;
}
void print_spare(const struct weir_rule *r)
{
	if (r->flags & WEIR_RF_SPARE_VERIFIED)
		print_str("spare", " spare %s", "verified");	/* the one value */
}

/* The action's keywords together with the rest of rule r, once all is read. */
int wr_action_end(struct weir_rule *r, struct wr_perr *pe)
{
	/* block: every packet matched is dropped, so nothing that meters or answers. */
	if (r->action == WEIR_ACT_BLOCK && (r->nr_limits || r->preset ||
					    (r->flags & WEIR_RF_TCP_STATE)))
		return perr(pe, -1, -EINVAL, "action block drops every packet the rule matches: "
			    "it takes no limit, preset or tcp-state");
	/* SYN cookies: a rule that matches SYNs, and budgets that always hold. */
	if (r->action == WEIR_ACT_COOKIE && (r->match & WEIR_M_SRCSET))
		return perr(pe, -1, -EINVAL, "action cookie takes no source set: a cookie's ACK "
			    "is checked by the rule's ports alone");
	if (r->action != WEIR_ACT_COOKIE) {
		if (r->cookie || r->ck_rate || r->ckd_rate)
			return perr(pe, -1, -EINVAL, "cookie, cookie-budget and cookie-dst-budget "
				    "need action cookie");
	} else {
		if (!(r->match & WEIR_M_PROTO) || r->proto != 6 ||
		    !(r->match & WEIR_M_TCPFLAGS) || !(r->tcp_mask & WEIR_TCP_SYN) ||
		    !(r->tcp_value & WEIR_TCP_SYN))
			return perr(pe, -1, -EINVAL, "action cookie needs proto tcp and tcp-flags "
				    "syn: it answers SYNs");
		if (!r->ck_rate)
			r->ck_rate = WR_COOKIE_BUDGET;
		if (!r->ckd_rate)
			r->ckd_rate = WR_COOKIE_DST_BUDGET;
		/* Token buckets of one second's budget. */
		r->ck_interval_fp = wr_gcra_interval_per(r->ck_rate, 1000);
		r->ck_tolerance = wr_gcra_tolerance(r->ck_interval_fp, r->ck_rate,
						    WEIR_COST_PKT);
		r->ckd_interval_fp = wr_gcra_interval_per(r->ckd_rate, 1000);
		r->ckd_tolerance = wr_gcra_tolerance(r->ckd_interval_fp, r->ckd_rate,
						     WEIR_COST_PKT);
	}

	if (r->flags & WEIR_RF_TCP_STATE) {
		if (!(r->match & WEIR_M_PROTO) || r->proto != 6)
			return perr(pe, -1, -EINVAL, "tcp-state needs proto tcp: it checks TCP "
				    "segments against this host's connections");
		if (r->action == WEIR_ACT_COOKIE)
			return perr(pe, -1, -EINVAL, "tcp-state and action cookie do not go in one "
				    "rule: a cookie rule matches SYNs, which tcp-state never checks; "
				    "give the port a second rule with tcp-state");
		if ((r->match & WEIR_M_TCPFLAGS) && (r->tcp_mask & WEIR_TCP_SYN) &&
		    (r->tcp_value & WEIR_TCP_SYN) && (r->tcp_mask & WEIR_TCP_ACK) &&
		    !(r->tcp_value & WEIR_TCP_ACK))
			return perr(pe, -1, -EINVAL, "tcp-state on a rule that matches only SYNs "
				    "would check nothing: SYNs are never checked");
	}
	return 0;
}
