// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rule grammar: the keywords of `rule add` (each one's reader, printer
 * and usage line), reading a rule from words, and printing it back in the
 * same words. The CLI (cmd/rule.c) and the config file (config/) both read
 * rules through it, so anything one can say the other can. Committing a
 * set is ruleset.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"
#include "weir_limiter.h"

#include "lib/rules_int.h"

/* The smallest burst of a byte token bucket: one full-size packet's IP length. */
#define WR_MIN_BYTE_BURST 1500

/* Fill the derived fields of a limit: interval, tolerance, masks. */
static int limit_finish(struct weir_limit *l, bool burst_set, struct wr_perr *pe, int word)
{
	wr_limit_set_masks(l);
	if (l->fleet && (l->key == WEIR_KEY_DST || l->key == WEIR_KEY_FLOW))
		return perr(pe, word, -EINVAL, "per %s fleet: a fleet-wide limit is per src or "
			    "per all", l->key == WEIR_KEY_DST ? "dst" : "flow");
	if (l->fleet && l->algo == WEIR_ALGO_CONNS)
		return perr(pe, word, -EINVAL, "scope fleet applies to token-bucket and window "
			    "limits: a connection cap counts this host's connections");
	if (l->algo == WEIR_ALGO_CONNS)
		return 0;
	if (l->algo != WEIR_ALGO_GCRA) {
		/* A window admits `rate` per window; there is no separate burst. */
		if (burst_set)
			return perr(pe, word, -EINVAL, "burst applies to token-bucket limits; a "
				    "%s admits its rate per window", wr_algo(l->algo)->name);
		if (l->rate > UINT32_MAX)
			return perr(pe, word, -ERANGE, "a window counts at most %u per window",
				    UINT32_MAX);
		l->burst = l->rate;
	} else if (!burst_set) {
		/* One period of traffic, at least one full-size packet for byte rates. */
		l->burst = l->rate;
		if (l->cost == WEIR_COST_BYTE && l->burst < 1500)
			l->burst = 1500;
	}
	/*
	 * A byte limit charges a packet its IP length: with a burst under one
	 * full-size packet (1500 bytes at the usual MTU) such a packet could
	 * never pass.
	 */
	if (l->algo == WEIR_ALGO_GCRA && l->cost == WEIR_COST_BYTE && burst_set &&
	    l->burst < WR_MIN_BYTE_BURST)
		return perr(pe, word, -EINVAL, "burst %llu is smaller than one full-size packet: "
			    "a byte limit charges each packet its IP length, %u bytes at a 1500 "
			    "MTU, which could never pass (burst %u or more)",
			    (unsigned long long)l->burst, WR_MIN_BYTE_BURST, WR_MIN_BYTE_BURST);
	l->interval_fp = wr_gcra_interval_per(l->rate, l->period_ms);
	if (!l->interval_fp)
		return perr(pe, word, -ERANGE, "rate out of range: %llu %s per %u ms is too fast "
			    "to meter (a packet every nanosecond at most) or the period too long",
			    (unsigned long long)l->rate,
			    l->cost == WEIR_COST_BYTE ? "bytes" : "packets",
			    l->period_ms ? l->period_ms : 1000);
	l->tolerance = wr_gcra_tolerance(l->interval_fp, l->burst, l->cost);
	if (!l->tolerance) {
		if (burst_set)
			return perr(pe, word, -ERANGE, "burst %llu at this rate is out of range",
				    (unsigned long long)l->burst);
		return perr(pe, word, -ERANGE, "rate out of range: %llu %s per %u ms needs a "
			    "burst (by default one period of the rate) too large to meter",
			    (unsigned long long)l->rate,
			    l->cost == WEIR_COST_BYTE ? "bytes" : "packets",
			    l->period_ms ? l->period_ms : 1000);
	}
	return 0;
}

/* The limit being read is complete: fill it in, or say what is wrong with it. */
static int limit_end(struct wr_rule_parser *p)
{
	int err = p->l ? limit_finish(p->l, p->burst_set, p->pe, p->limit_word) : 0;

	return err ? err : ban_end(p);
}

/* A connection limit counts per source. */
static int conns_per_source(const struct weir_limit *l, struct wr_perr *pe)
{
	if (l->algo == WEIR_ALGO_CONNS && l->key != WEIR_KEY_SRC)
		return perr(pe, -1, -EINVAL, "conns counts per source (src[/LEN] src6/LEN), not "
			    "per %s", l->key == WEIR_KEY_ALL ? "all" :
			    l->key == WEIR_KEY_DST ? "dst" : "flow");
	return 0;
}

/* A new limit, with the defaults: per source, /32 and /64. */
static void limit_open(struct wr_rule_parser *p)
{
	p->l = &p->r->limits[p->r->nr_limits++];
	p->limit_word = AT(p);
	p->seen_limit = 0;
	p->burst_set = false;
	p->l->plen4 = 32;
	p->l->plen6 = 64;
	p->l->key = WEIR_KEY_SRC;
}

/* A head: the limit before it is complete, and a new one starts. */
static int limit_begin(struct wr_rule_parser *p)
{
	int err = limit_end(p);

	if (err)
		return err;
	if (p->r->nr_limits == WEIR_MAX_LIMITS)
		return perr(p->pe, p->i, -E2BIG, "too many limits (at most %d per rule)",
			    WEIR_MAX_LIMITS);
	limit_open(p);
	return 0;
}

/* ---- the keywords: what each reads, and how each prints ---- */

static int kw_family(struct wr_rule_parser *p)
{
	struct weir_rule *r = p->r;
	const char *val = VAL(p);
	int fam;

	if (!strcmp(val, "ipv4") || !strcmp(val, "inet"))
		fam = 4;
	else if (!strcmp(val, "ipv6") || !strcmp(val, "inet6"))
		fam = 6;
	else
		return bad(p->pe, AT(p), "family", val);
	if ((r->match & WEIR_M_FAMILY) && r->family != fam)
		return perr(p->pe, AT(p), -EINVAL, "family %s contradicts an earlier ipv%d src",
			    val, r->family);
	r->family = fam;
	r->match |= WEIR_M_FAMILY;
	return 1;
}

static void print_family(const struct weir_rule *r)
{
	if (r->match & WEIR_M_FAMILY)
		print_str("family", " family %s", r->family == 4 ? "ipv4" : "ipv6");
}

static int kw_proto(struct wr_rule_parser *p)
{
	if (parse_proto(VAL(p), &p->r->proto))
		return bad(p->pe, AT(p), "proto", VAL(p));
	p->r->match |= WEIR_M_PROTO;
	return 1;
}

static void print_proto(const struct weir_rule *r)
{
	char buf[32];

	if (r->match & WEIR_M_PROTO)
		print_str("proto", " proto %s", proto_name(r->proto, buf, sizeof(buf)));
}

static int kw_dport(struct wr_rule_parser *p)
{
	if (parse_port_range(VAL(p), &p->r->dport_lo, &p->r->dport_hi))
		return bad(p->pe, AT(p), "dport", VAL(p));
	p->r->match |= WEIR_M_DPORT;
	return 1;
}

static void print_dport(const struct weir_rule *r)
{
	char buf[16];

	if (!(r->match & WEIR_M_DPORT))
		return;
	if (r->dport_lo == r->dport_hi)
		snprintf(buf, sizeof(buf), "%u", r->dport_lo);
	else
		snprintf(buf, sizeof(buf), "%u-%u", r->dport_lo, r->dport_hi);
	print_str("dport", " dport %s", buf);
}

static int kw_tcp_flags(struct wr_rule_parser *p)
{
	if (parse_tcp_flags(VAL(p), &p->r->tcp_value, &p->r->tcp_mask))
		return bad(p->pe, AT(p), "tcp-flags", VAL(p));
	p->r->match |= WEIR_M_TCPFLAGS;
	return 1;
}

static void print_tcp_flags(const struct weir_rule *r)
{
	char buf[64];

	if (!(r->match & WEIR_M_TCPFLAGS))
		return;
	format_tcp_flags(r->tcp_value, r->tcp_mask, buf, sizeof(buf));
	print_str("tcp_flags", " tcp-flags %s", buf);
}

static int kw_icmp_type(struct wr_rule_parser *p)
{
	uint64_t v;

	if (parse_u64(VAL(p), 0, 255, &v))
		return bad(p->pe, AT(p), "icmp-type", VAL(p));
	p->r->icmp_type = v;
	p->r->match |= WEIR_M_ICMPTYPE;
	return 1;
}

static void print_icmp_type(const struct weir_rule *r)
{
	if (r->match & WEIR_M_ICMPTYPE)
		print_u64("icmp_type", " icmp-type %llu", r->icmp_type);
}

/* A named attack pattern (reflect.c): the preset's own checks come at the rule's end. */
static int kw_preset(struct wr_rule_parser *p)
{
	int v = wr_preset_by_name(VAL(p));

	if (v < 0)
		return bad(p->pe, AT(p), "preset (reflection)", VAL(p));
	p->r->preset = v;
	return 1;
}

static int kw_class(struct wr_rule_parser *p)
{
	uint64_t v;

	if (parse_u64(VAL(p), 0, WEIR_MAX_CLASS, &v))
		return bad(p->pe, AT(p), "class (0 critical .. 3)", VAL(p));
	p->r->class = v;
	return 1;
}

static void print_class(const struct weir_rule *r)
{
	print_u64("class", r->class ? " class %llu" : NULL, r->class);
}

static int kw_limit(struct wr_rule_parser *p)
{
	uint64_t rate;
	uint32_t period;
	int cost, err = limit_begin(p);

	if (err)
		return err;
	if (parse_rate_per(VAL(p), &rate, &cost, &period))
		return bad(p->pe, AT(p), "rate", VAL(p));
	p->l->rate = rate;
	p->l->cost = cost;
	p->l->period_ms = period;
	return 1;
}

static void print_rate(const struct weir_limit *l)
{
	char rate[48];

	if (l->algo == WEIR_ALGO_CONNS)
		return;
	format_rate_per(l->rate, l->cost, l->period_ms, rate, sizeof(rate));
	print_str("rate", " limit %s", rate);
	print_u64(l->cost == WEIR_COST_PKT ? "packets" : "bytes", NULL, l->rate);
	print_u64("period_ms", NULL, l->period_ms ? l->period_ms : 1000);
	print_str("cost", NULL, l->cost == WEIR_COST_PKT ? "packets" : "bytes");
}

/* At most N established connections per key. */
static int kw_conns(struct wr_rule_parser *p)
{
	int err = limit_begin(p);
	uint64_t v;

	if (err)
		return err;
	if (parse_u64(VAL(p), 1, UINT32_MAX, &v))
		return bad(p->pe, AT(p), "connection count", VAL(p));
	p->l->algo = WEIR_ALGO_CONNS;
	p->l->rate = v;
	p->l->period_ms = 0;
	return 1;
}

static void print_conns(const struct weir_limit *l)
{
	if (l->algo == WEIR_ALGO_CONNS)
		print_u64("conns", " conns %llu", l->rate);
}

static int kw_burst(struct wr_rule_parser *p)
{
	uint64_t v;

	if (!p->l || p->l->algo == WEIR_ALGO_CONNS)
		return perr(p->pe, p->i, -EINVAL, "\"burst\" must follow a limit RATE");
	/* Whether it fits the rate is limit_finish()'s to say. */
	if (parse_size(VAL(p), &v) || v == 0)
		return bad(p->pe, AT(p), "burst", VAL(p));
	p->l->burst = v;
	p->burst_set = true;
	return 1;
}

static void print_burst(const struct weir_limit *l)
{
	if (l->algo == WEIR_ALGO_GCRA)
		print_u64("burst", " burst %llu", l->burst);
}

/*
 * A word of a per key: all, src, src/LEN or src6/LEN; and "fleet" after
 * them, short for scope fleet (`per src fleet`).
 */
/* Whose limit it is: this host's (the default), or the fleet's. */
static int kw_scope(struct wr_rule_parser *p)
{
	if (!p->l)
		return perr(p->pe, p->i, -EINVAL, "\"scope\" must follow a limit");
	if (!strcmp(VAL(p), "host"))
		p->l->fleet = 0;
	else if (!strcmp(VAL(p), "fleet"))
		p->l->fleet = 1;
	else
		return bad(p->pe, AT(p), "scope (host, fleet)", VAL(p));
	return 1;
}

static void print_scope(const struct weir_limit *l)
{
	print_str("scope", l->fleet ? " scope %s" : NULL, l->fleet ? "fleet" : "host");
}

static int kw_algo(struct wr_rule_parser *p)
{
	const char *val = VAL(p);
	int a;

	if (!p->l)
		return perr(p->pe, p->i, -EINVAL, "\"algo\" must follow a limit");
	/* conns is a limit of its own ("conns N"), not an algo of a rate. */
	a = wr_algo_by_name(val);
	if (a < 0 || a == WEIR_ALGO_CONNS || p->l->algo == WEIR_ALGO_CONNS)
		return bad(p->pe, AT(p), "algo (token-bucket, fixed-window, sliding-window)", val);
	p->l->algo = a;
	return 1;
}

static void print_algo(const struct weir_limit *l)
{
	/* Text names a window's algo; a token bucket's is the default, a cap's its keyword. */
	print_str("algo", wr_limit_windowed(l) ? " algo %s" : NULL, wr_algo(l->algo)->name);
}


/*
 * The grammar of `rule add`, in the order a rule prints (a limit's keywords
 * in the order a limit prints) and the config lists its keys. A new keyword
 * is one entry here.
 */
const struct wr_rule_kw wr_rule_kws[] = {
	{ .word = "family", .key = "family", .scope = WR_KW_MATCH, .value = "ipv4|ipv6",
	  .parse = kw_family, .print.rule = print_family },
	{ .word = "proto", .key = "proto", .scope = WR_KW_MATCH,
	  .value = "tcp|udp|icmp|icmpv6|NUM", .parse = kw_proto, .print.rule = print_proto },
	{ .word = "dport", .key = "dport", .scope = WR_KW_MATCH, .value = "P[-Q]",
	  .parse = kw_dport, .print.rule = print_dport },
	{ .word = "src", .key = "src", .scope = WR_KW_MATCH, .value = "CIDR|SET",
	  .parse = kw_src, .print.rule = print_src,
	  .help = "src SET: [!]feed:NAME (the sources feed NAME lists), [!]country:CC[,CC..]\n"
		  "         or [!]asn:N[,N..] (from the geo database); ! for sources outside it" },
	{ .word = "tcp-flags", .key = "tcp-flags", .scope = WR_KW_MATCH,
	  .value = "syn|FLAGS[/MASK]", .parse = kw_tcp_flags, .print.rule = print_tcp_flags },
	{ .word = "icmp-type", .key = "icmp-type", .scope = WR_KW_MATCH, .value = "N",
	  .parse = kw_icmp_type, .print.rule = print_icmp_type },
	{ .word = "sport", .key = "sport", .scope = WR_KW_MATCH, .value = "P[-Q]",
	  .parse = kw_range, .print.rule = print_sport,
	  .help = "sport P[-Q]: source port or range (proto tcp or udp)" },
	{ .word = "dst", .key = "dst", .scope = WR_KW_MATCH, .value = "CIDR",
	  .item = dst_item, .items = WR_DST_ITEMS, .parse = kw_dst, .print.rule = print_dst,
	  .help = "dst CIDR...: destination prefixes, IPv4 or IPv6, up to 4 that do not "
		  "overlap" },
	{ .word = "len", .key = "len", .scope = WR_KW_MATCH, .value = "A[-B]",
	  .parse = kw_range, .print.rule = print_len,
	  .help = "len A[-B]: IP length in bytes (header included, as byte rates count)" },
	{ .word = "ttl", .key = "ttl", .scope = WR_KW_MATCH, .value = "A[-B]",
	  .parse = kw_range, .print.rule = print_ttl,
	  .help = "ttl A[-B]: IPv4 TTL or IPv6 hop limit" },
	{ .word = "frag", .key = "frag", .scope = WR_KW_MATCH, .value = "none|first|later|any",
	  .parse = kw_frag, .print.rule = print_frag,
	  .help = "frag: not a fragment, a first fragment, a later one, or any fragment" },
	{ .word = "dscp", .key = "dscp", .scope = WR_KW_MATCH, .value = "N",
	  .parse = kw_dscp, .print.rule = print_dscp,
	  .help = "dscp N: DSCP 0 .. 63 (the top 6 bits of TOS / traffic class)" },
	{ .word = "payload", .key = "payload", .scope = WR_KW_MATCH, .value = "OFF[/MASK]=VALUE",
	  .item = payload_item, .items = WR_PAY_ITEMS, .parse = kw_payload,
	  .print.rule = print_payload,
	  .help = "payload OFF[/MASK]=VALUE...: up to 4 32-bit big-endian words at byte OFF\n"
		  "         (0 .. 1500) of the TCP/UDP payload; a packet too short fails" },
	{ .word = "iface", .key = "iface", .scope = WR_KW_MATCH, .value = "DEV",
	  .parse = kw_iface, .print.rule = print_iface,
	  .help = "iface DEV: arrived on this interface (one weir is attached to)" },
	{ .word = "preset", .key = "preset", .scope = WR_KW_MATCH, .value = "reflection",
	  .parse = kw_preset, .print.rule = wr_print_preset,
	  .help = "UDP replies from amplifier ports this host never asked (no limit: drop)" },
	{ .word = "class", .key = "class", .scope = WR_KW_MATCH, .value = "N",
	  .parse = kw_class, .print.rule = print_class,
	  .help = "priority class for shedding: 0 critical (default) .. 3" },
	{ .word = "limit", .key = "rate", .scope = WR_KW_LIMIT, .heads = WR_KW_RATE,
	  .value = "RATE", .parse = kw_limit, .print.limit = print_rate,
	  .help = "RATE  := N{pps,kpps,mpps} | N{bit,kbit,mbit,gbit} | N{byte,kbyte,mbyte,gbyte}\n"
		  "         per second, or N[byte-unit]/{s,min,h,day}: 10/s, 100/min, 64kbyte/h;\n"
		  "         bit and byte rates cost the packet's IP length" },
	{ .word = "conns", .key = "conns", .scope = WR_KW_LIMIT, .heads = WR_KW_CONNS, .value = "N",
	  .parse = kw_conns, .print.limit = print_conns,
	  .help = "conns N [per KEY]   at most N established TCP connections per source\n"
		  "         (proto tcp rules); a SYN from a source at its cap is dropped" },
	{ .word = "burst", .key = "burst", .scope = WR_KW_OPTION, .heads = WR_KW_RATE, .value = "N",
	  .parse = kw_burst, .print.limit = print_burst,
	  .help = "burst := packets (or bytes) admitted at once; default one second of RATE" },
	{ .word = "per", .key = "per", .scope = WR_KW_OPTION, .heads = WR_KW_RATE | WR_KW_CONNS,
	  .value = "KEY", .item = per_item, .items = WR_PER_ITEMS,
	  .parse = kw_per, .print.limit = print_per,
	  .help = "KEY   := src[/LEN] [src6/LEN]   one bucket per source prefix "
		  "(default /32, /64)\n"
		  "       | all                    one bucket for the whole rule" },
	{ .word = "algo", .key = "algo", .scope = WR_KW_OPTION, .heads = WR_KW_RATE,
	  .value = "ALGO", .parse = kw_algo, .print.limit = print_algo,
	  .help = "algo  := token-bucket     (the default: GCRA, exact)\n"
		  "       | fixed-window     (cheap, up to 2x across a window edge)\n"
		  "       | sliding-window   (the previous window weighted by overlap)" },
	{ .word = "scope", .key = "scope", .scope = WR_KW_OPTION, .heads = WR_KW_RATE,
	  .value = "host|fleet", .parse = kw_scope, .print.limit = print_scope,
	  .help = "scope := host   (the default: this host's limit)\n"
		  "       | fleet  (rate and burst for the whole fleet, kept in step through\n"
		  "                 Redis by `weir run` with a fleet: section; a token\n"
		  "                 bucket or a window, whose windows then turn on Redis's\n"
		  "                 clock; `per src fleet` says the same)" },
	{ .word = "ban", .key = "ban", .scope = WR_KW_OPTION, .heads = WR_KW_RATE,
	  .value = "DURATION", .parse = kw_ban,
	  .help = "ban DUR: a source the limit refuses goes on the deny list for DUR (1s to\n"
		  "         30d), doubled on each repeat within a day (`weir run` enforces it)" },
	{ .word = "after", .key = "after", .scope = WR_KW_OPTION, .heads = WR_KW_RATE,
	  .value = "N", .parse = kw_ban,
	  .help = "after N: ban only once the limit refused N packets within its period (1)" },
	{ .word = "max", .key = "max", .scope = WR_KW_OPTION, .heads = WR_KW_RATE,
	  .value = "DURATION", .parse = kw_ban,
	  .help = "max DUR: repeats are banned for at most DUR (the ban's own DUR)" },
	{ .word = "action", .key = "action", .scope = WR_KW_RULE,
	  .value = "drop|dry-run|cookie|block", .parse = kw_action, .print.rule = print_action,
	  .help = "action cookie: a SYN the limits refuse is answered from XDP with a SYN\n"
		  "         cookie (rules matching tcp-flags syn; native or generic XDP)\n"
		  "action block: every packet the rule matches is dropped (no limit)" },
	{ .word = "cookie", .key = "cookie", .scope = WR_KW_RULE, .value = "over-limit|always",
	  .parse = kw_cookie, .print.rule = print_cookie,
	  .help = "cookie always: every SYN of the rule is answered with a cookie" },
	{ .word = "cookie-budget", .key = "cookie-budget", .scope = WR_KW_RULE, .value = "N",
	  .parse = kw_cookie_budget, .print.rule = print_cookie_budget,
	  .help = "cookie-budget N: at most N SYN-ACKs per second for the rule (10000)" },
	{ .word = "cookie-dst-budget", .key = "cookie-dst-budget", .scope = WR_KW_RULE,
	  .value = "N", .parse = kw_cookie_dst_budget, .print.rule = print_cookie_dst_budget,
	  .help = "cookie-dst-budget N: at most N SYN-ACKs per second to one address (8)" },
	{ .word = "tcp-state", .key = "tcp-state", .scope = WR_KW_RULE, .value = "on|auto|off",
	  .parse = kw_tcp_state, .print.rule = print_tcp_state,
	  .help = "tcp-state on: a TCP segment other than a SYN passes only if it belongs to a\n"
		  "         connection of this host (proto tcp; a rule may then have no limit);\n"
		  "         auto: only while `weir run` sees an out-of-state flood" },
	{ .word = "verified-class", .key = "verified-class", .scope = WR_KW_RULE, .value = "N",
	  .parse = kw_verified_class, .print.rule = print_verified_class,
	  .help = "verified-class N: sources that completed a handshake are shed as class N" },
	{ .word = "spare", .key = "spare", .scope = WR_KW_RULE, .value = "verified",
	  .parse = kw_spare, .print.rule = print_spare,
	  .help = "spare verified: a source that completed a handshake does not match" },
};
const int wr_nr_rule_kws = ARRAY_SIZE(wr_rule_kws);
_Static_assert(ARRAY_SIZE(wr_rule_kws) <= 32, "a bit of seen_rule and seen_limit a keyword");

static bool in_limit(const struct wr_rule_kw *kw)
{
	return kw->scope == WR_KW_LIMIT || kw->scope == WR_KW_OPTION;
}

static const struct wr_rule_kw *kw_find(const char *word)
{
	int k;

	for (k = 0; k < wr_nr_rule_kws; k++)
		if (!strcmp(word, wr_rule_kws[k].word))
			return &wr_rule_kws[k];
	return NULL;
}

/* ---- reading a rule ---- */

static void parser_init(struct wr_rule_parser *p, int argc, char **argv, struct weir_rule *r,
			const char *name, struct wr_perr *pe)
{
	memset(p, 0, sizeof(*p));
	p->argc = argc;
	p->argv = argv;
	p->r = r;
	p->name = name;
	p->pe = pe;
	memset(r, 0, sizeof(*r));
	pe->word = -1;
	pe->msg[0] = '\0';
}

/* The keyword at argv[p->i] and its value; leaves p->i on the last word used. */
static int rule_word(struct wr_rule_parser *p)
{
	const char *w = p->argv[p->i];
	const struct wr_rule_kw *kw;
	unsigned int bit;
	int n;

	/* Every keyword takes a value (per: one or more key words). */
	if (p->i + 1 >= p->argc)
		return perr(p->pe, p->i, -EINVAL, "\"%s\" needs a value", w);
	kw = kw_find(w);
	if (!kw)
		return perr(p->pe, p->i, -EINVAL, "unknown word \"%s\" in rule %s", w, p->name);
	/*
	 * Every keyword but a head may come once per rule (an option once per
	 * limit): a second one is refused by name, as the config refuses a
	 * repeated key, never silently the last one kept.
	 */
	bit = 1u << (kw - wr_rule_kws);
	if (!in_limit(kw)) {
		if (p->seen_rule & bit)
			return perr(p->pe, p->i, -EINVAL, "\"%s\" given twice in rule %s (each "
				    "match, class and action once)", w, p->name);
		p->seen_rule |= bit;
	} else if (kw->scope == WR_KW_OPTION && p->l) {
		if (p->seen_limit & bit)
			return perr(p->pe, p->i, -EINVAL, "\"%s\" given twice in one limit of rule "
				    "%s", w, p->name);
		p->seen_limit |= bit;
	}
	n = kw->parse(p);
	if (n < 0)
		return n;
	p->i += n;
	return 0;
}

/* All words read: the last limit complete, then what the keywords say together. */
static int rule_end(struct wr_rule_parser *p)
{
	struct weir_rule *r = p->r;
	struct wr_perr *pe = p->pe;
	int i, err;

	if (!p->l && !r->preset && !(r->flags & WEIR_RF_TCP_STATE) && r->action != WEIR_ACT_BLOCK)
		return perr(pe, -1, -EINVAL, "rule %s needs at least one limit (or tcp-state, or "
			    "action block)", p->name);
	err = limit_end(p);
	if (!err)
		err = wr_preset_finish(r, pe);
	if (err)
		return err;

	for (i = 0; i < r->nr_limits; i++) {
		if (r->limits[i].algo != WEIR_ALGO_CONNS)
			continue;
		if (!(r->match & WEIR_M_PROTO) || r->proto != 6)
			return perr(pe, -1, -EINVAL, "conns needs proto tcp: it counts established "
				    "TCP connections");
		err = conns_per_source(&r->limits[i], pe);
		if (err)
			return err;
	}

	err = wr_action_end(r, pe);
	if (err)
		return err;
	err = wr_fields_end(r, pe);
	if (err)
		return err;

	/* Contradictions that would make a rule silently match nothing. */
	if ((r->match & WEIR_M_PROTO) && (r->match & WEIR_M_TCPFLAGS) && r->proto != 6)
		return perr(pe, -1, -EINVAL, "tcp-flags needs proto tcp");
	if ((r->match & WEIR_M_PROTO) && (r->match & WEIR_M_DPORT) && r->proto != 6 &&
	    r->proto != 17)
		return perr(pe, -1, -EINVAL, "dport needs proto tcp or udp");
	if ((r->match & WEIR_M_PROTO) && (r->match & WEIR_M_ICMPTYPE) && r->proto != 1 &&
	    r->proto != 58)
		return perr(pe, -1, -EINVAL, "icmp-type needs proto icmp or icmpv6");
	if ((r->match & WEIR_M_FAMILY) && (r->match & WEIR_M_PROTO) &&
	    ((r->proto == 1 && r->family == 6) || (r->proto == 58 && r->family == 4)))
		return perr(pe, -1, -EINVAL, "proto %s does not exist in ipv%d",
			    r->proto == 1 ? "icmp" : "icmpv6", r->family);
	return 0;
}

int wr_rule_name(const char *name, struct wr_perr *pe)
{
	if (strlen(name) >= WEIR_NAME_LEN || !name[0] ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
		    strlen(name))
		return perr(pe, 0, -EINVAL, "invalid rule name \"%s\" (1-%d of A-Z a-z 0-9 _ - .)",
			    name, WEIR_NAME_LEN - 1);
	if (!strcmp(name, "limit") || !strcmp(name, "help"))
		return perr(pe, 0, -EINVAL, "rule add needs a NAME before its matches and limits");
	return 0;
}

bool wr_rule_name_auto(const char *name)
{
	const char *n = !strncmp(name, "auto-", 5) ? name + 5 + (name[5] == 'f') : NULL;

	return n && *n && strspn(n, "0123456789") == strlen(n);
}

/*
 * Parse the words of `rule add` (argv[0] is NAME) into r and name; on error
 * pe names the word at fault. The config file builds the same words.
 */
int wr_rule_parse(int argc, char **argv, struct weir_rule *r, struct weir_ban *bans, char *srcset,
		  char *name, struct wr_perr *pe)
{
	struct wr_rule_parser p;
	int err;

	parser_init(&p, argc, argv, r, name, pe);
	if (bans)
		memset(bans, 0, sizeof(p.bans));
	if (srcset)
		srcset[0] = '\0';
	if (argc < 1)
		return perr(pe, -1, -EINVAL, "a rule needs a NAME");
	err = wr_rule_name(argv[0], pe);
	if (err)
		return err;
	strcpy(name, argv[0]);
	for (p.i = 1; p.i < argc; p.i++) {
		err = rule_word(&p);
		if (err)
			return err;
	}
	err = rule_end(&p);
	if (!err && p.srcset[0] && !srcset)
		err = perr(pe, -1, -EINVAL, "src %s: source sets are not taken here", p.srcset);
	if (!err && bans)
		memcpy(bans, p.bans, sizeof(p.bans));
	if (!err && srcset)
		memcpy(srcset, p.srcset, sizeof(p.srcset));
	return err;
}

int wr_rule_check_words(int argc, char **argv, unsigned int head, struct wr_perr *pe)
{
	const struct wr_rule_kw *first = argc > 0 ? kw_find(argv[0]) : NULL;
	struct wr_rule_parser p;
	struct weir_rule r;
	int err;

	parser_init(&p, argc, argv, &r, "", pe);
	if (first && first->scope == WR_KW_OPTION) {
		limit_open(&p);
		if (head & WR_KW_CONNS)
			p.l->algo = WEIR_ALGO_CONNS;
	}
	for (p.i = 0; p.i < argc; p.i++) {
		err = rule_word(&p);
		if (err)
			return err;
	}
	if (!first || first->scope != WR_KW_LIMIT)
		return 0;
	err = limit_end(&p);
	return err ? err : conns_per_source(p.l, pe);
}

/* One rule, in the words `rule add` takes: each keyword prints itself. */
void wr_rule_print(const struct weir_ruleset *rs, __u32 i)
{
	const struct wr_rule_kw *kw, *o, *end = wr_rule_kws + wr_nr_rule_kws;
	const struct weir_rule *r = &rs->rules[i];
	bool limits = false;
	__u32 j;

	open_object(NULL);
	print_str("name", "%s", rs->names[i]);
	for (kw = wr_rule_kws; kw < end; kw++) {
		if (!in_limit(kw)) {
			/* A source set is the rule set's: its slot's words. */
			if (kw->print.rule == print_src && (r->match & WEIR_M_SRCSET))
				print_srcset(rs, r);
			else
				kw->print.rule(r);
			continue;
		}
		/* The limits where their first keyword stands, each in keyword order. */
		if (limits)
			continue;
		limits = true;
		open_array("limits");
		/* A preset's default limit is no limit given. */
		for (j = 0; j < r->nr_limits && j < WEIR_MAX_LIMITS &&
			    !(r->flags & WEIR_RF_PRESET_DEFAULT); j++) {
			open_object(NULL);
			for (o = kw; o < end; o++)
				if (in_limit(o) && o->print.limit)
					o->print.limit(&r->limits[j]);
				else if (in_limit(o))
					print_ban(o->word, &rs->bans[i][j]);
			close_object();
		}
		close_array();
	}
	print_u64("uid", NULL, r->uid);
	print_text("\n");
	wr_print_preset_expanded(r);
	close_object();
}
