// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * progcost: what the weir data path costs per packet, measured with
 * bpf_prog_test_run next to a trivial XDP_DROP program in the same run.
 *
 * Four tables, each the median of --rounds rounds, the candidates of a
 * table alternated inside every round so that noise hits them alike:
 *
 *  - paths: no rules, an existing key admitted / dropped, the same under a
 *    fleet-scope limit (the key tracked for the fleet sync), an IPv6 /64 key,
 *    4 limits on one rule, 8/32/64 rules, a spoofed source refused by the
 *    rule-wide limit (repeat runs of one packet), and a new key inserted
 *    into a full table (one run per packet, each from a new source, next
 *    to the trivial program run the same way), the reflection preset
 *    (a hit beside a preset rule, an unsolicited reply dropped, a recorded
 *    flow's reply passed) and the TC egress program that records the
 *    flows (idle, recording), tcp-state (an established flow's ACK under
 *    one rule with it, a hit of its cache, and without it; an ACK of no
 *    connection dropped at a listener's port and at a port with no
 *    socket: the socket lookup each time), under each data-path clock
 *    (auto, the default; precise; coarse);
 *  - pieces: the trivial program plus one thing (a clock read, a lookup, a
 *    call), which says where the time of a path goes;
 *  - tracked keys: an existing key picked at random among 1k .. 4M keys
 *    (one run per packet, IPv6 /64 keys), the cache-cold case;
 *  - memory: bytes per tracked key from the table's own accounting
 *    (memlock in fdinfo), next to the kernel's hash maps holding weir's
 *    key and bucket.
 *
 * Every instance is set up as the loader sets up weir: wr_state sized in
 * sets of WEIR_WAYS ways, wr_config's set hash seed and set count
 * written before any packet, and the jiffies clock's offset measured for
 * the clocks that read it. Tables are filled by writing wr_state directly,
 * each key in the set the data path's hash picks for it.
 *
 * Markdown goes to stdout; --json FILE writes every median for the bench
 * driver and its plots. Private maps only: nothing pinned is touched.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "weir.h"
#include "weir_limiter.h"
#include "weir_cookie.h"
#include "weir_reflect.h"
#include "weir.skel.h"
#include "../../user/lib/kernel_features.h"
#include "../rand.h"
#include "trivial.skel.h"
#include "prims.skel.h"

#define PKT4_LEN	64
#define PKT6_LEN	86
#define PKT_MAX		PKT6_LEN
/* Rate and burst of a limit that admits everything a run sends. */
#define OPEN_RATE	1000000000ULL
/* Keys (ways) of the "full table" instances: small, so filling them is quick. */
#define FULL_KEYS	65536
/* uid of the keys that fill those tables: above any uid a rule here gets. */
#define FILL_UID	0x7fffffffu
/* How long the jiffies clock's offset is sampled after load: several 4 ms ticks. */
#define CLOCK_SYNC_NS	(15ULL * 1000000ULL)
/* A frame for weir_clock_sync: any content of at least 14 bytes. */
#define SYNC_LEN	64
/* Destination port the measured rule matches; the others take 10000 + i. */
#define BENCH_PORT	9000
/* Source of the repeat runs: 198.18.0.2. */
#define SRC4		0xc6120002u
/* IPv6 sources 2001:db8:X:Y::1, X:Y = SRC6_W1 + n: one /64 per key. */
#define SRC6_W1		0x10000000u
/*
 * The IPv4 sources of the cold existing-key instance: all of 198.18.0.0/15,
 * as many as find a free way (about 97% of a 65536-way table's ways).
 */
#define COLD4_BASE	0xc6120000u
#define COLD4_END	0xc6140000u
#define MAX_ROUNDS	101
/* A fleet-scope limit's key, tracked, against the same limit per host: at most this. */
#define FLEET_AIM	2.0
/* tcp-state on an established flow (its cache hit) over the same rule without: at most this. */
#define TS_HIT_AIM_NS	40

/* The data path's clocks, in the order of the table's columns. */
enum clock_col { CLK_AUTO, CLK_PRECISE, CLK_COARSE, NCLK };
static const struct {
	const char *key;
	__u32 mode;
} clocks[NCLK] = {
	{ "auto", WEIR_CLOCK_AUTO },
	{ "precise", WEIR_CLOCK_PRECISE },
	{ "coarse", WEIR_CLOCK_COARSE },
};

enum path {
	P_NORULE, P_HIT, P_HITX, P_HITIF, P_HITSLOT, P_HITCIDR, P_HITSET, P_FLEET, P_DROP, P_V6,
	P_DST, P_FLOW, P_LIM4,
	P_RULES8, P_RULES32, P_RULES64, P_RULES256, P_SPOOF,
	P_HIT1, P_NEWFULL, P_COOKIE_SYN, P_COOKIE_ACK, P_COOKIE_ACK64,
	P_REFL_OTHER, P_REFL_DROP, P_REFL_ANSWER, P_EGRESS_IDLE, P_EGRESS_REC,
	P_TS_BASE, P_TS_HIT, P_TS_MISS, P_TS_NOSOCK, P_DROP_CACHED, P_SPOOF_D, P_SPOOF_D_CACHED,
	P_HIT_SAMPLED, P_SPARE, P_SPARE_SLOT, P_SPARE_BY, P_FP_LIMIT, P_FP_BLOCK,
	NPATH,
	/* Not a row of the paths' table: measured on its own instance (cold4, clock auto). */
	P_COLD = NPATH,
	/* Not rows either: P_SPOOF and P_DROP run by two CPUs at once (clock auto). */
	P_SPOOF2,
	P_DROP2,
	NROWS
};
static const struct {
	const char *key, *name;
	int distinct;		/* one run per packet */
	__u32 verdict;		/* what every measured packet must get */
} paths[NPATH] = {
	{ "no_rules", "no rules (parse, match nothing, count)", 0, XDP_PASS },
	{ "hit", "one rule, existing key, admitted", 0, XDP_PASS },
	{ "hit_fields", "the same, every further match field in use (sport, dst, len, ttl, frag, "
	  "dscp, 2 payload words)", 0, XDP_PASS },
	{ "hit_iface", "the same, the rule with iface (the packet's own, lo)", 0, XDP_PASS },
	{ "hit_ifcount", "one rule, existing key, admitted, lo with a counter slot (per-interface "
	  "counters; the other rows: lo has none)", 0, XDP_PASS },
	{ "hit_src_cidr", "one rule with src a CIDR (198.18.0.0/15), existing key, admitted", 0,
	  XDP_PASS },
	{ "hit_src_set", "the same rule with src a set of 10000 prefixes (src country:.., "
	  "asn:.., feed:..: one LPM lookup)", 0, XDP_PASS },
	{ "fleet_hit", "the same, fleet scope, key tracked for the fleet sync", 0, XDP_PASS },
	{ "drop", "one rule, existing key, dropped", 0, XDP_DROP },
	{ "v6_64", "IPv6 /64 key, existing, admitted", 0, XDP_PASS },
	{ "per_dst", "one rule per dst, existing key, admitted (destination read, scratch lookup)",
	  0, XDP_PASS },
	{ "per_flow", "one rule per flow, existing key, admitted", 0, XDP_PASS },
	{ "limits4", "4 limits on one rule (src, src/24, src/16, all), admitted", 0, XDP_PASS },
	{ "rules8", "8 rules, the last matches, existing key", 0, XDP_PASS },
	{ "rules32", "32 rules, the last matches, existing key", 0, XDP_PASS },
	{ "rules64", "64 rules, the last matches, existing key", 0, XDP_PASS },
	{ "rules256", "256 rules, the last matches, existing key", 0, XDP_PASS },
	{ "spoof", "spoofed source refused by a rule-wide limit (per all + per src)", 0,
	  XDP_DROP },
	{ "hit_one_run", "one rule, existing key, admitted (one run per packet)", 1, XDP_PASS },
	{ "new_full", "new key into a full table, a limiting way evicted", 1, XDP_PASS },
	{ "cookie_syn", "SYN answered with a cookie (checksums, budgets, SYN-ACK, XDP_TX)", 1,
	  XDP_TX },
	{ "cookie_ack", "ACK with a valid cookie checked (socket lookup, cookie check)", 1,
	  XDP_PASS },
	{ "cookie_ack_rules64", "the same, the cookie rule behind 63 rules on other ports", 1,
	  XDP_PASS },
	{ "reflect_other", "one rule, existing key, admitted, beside a preset reflection rule "
	  "(not from an amplifier's port)", 0, XDP_PASS },
	{ "reflect_drop", "preset reflection: unsolicited UDP from port 53, dropped (flow lookup "
	  "misses)", 0, XDP_DROP },
	{ "reflect_answer", "preset reflection: a reply from port 53 to a recorded flow, passed "
	  "(flow lookup hits)", 0, XDP_PASS },
	/* TC_ACT_UNSPEC: the egress program never decides. */
	{ "egress_idle", "TC egress, UDP out, no preset rule live (one array lookup)", 0,
	  (__u32)-1 },
	{ "egress_record", "TC egress, UDP out, preset rule live, flow recorded again (LRU hash "
	  "lookup, stamp)", 0, (__u32)-1 },
	{ "tcp_established", "an established flow's ACK, one rule (proto tcp), existing key, "
	  "admitted", 0, XDP_PASS },
	{ "tcp_state_hit", "the same, the rule with tcp-state (the flow in its cache)", 0,
	  XDP_PASS },
	{ "tcp_state_listener", "tcp-state: an ACK of no connection to a listener's port, "
	  "dropped (socket lookup, cookie check)", 0, XDP_DROP },
	{ "tcp_state_nosock", "tcp-state: an ACK to a port with no socket, dropped (socket "
	  "lookup)", 0, XDP_DROP },
	{ "drop_first_stage", "one rule, existing key, dropped by the first stage (its refusal "
	  "cached; the drop row above: the same without the cache)", 0, XDP_DROP },
	{ "spoof_distinct", "spoofed sources, a new one each packet, refused by a rule-wide limit "
	  "(per all + per src; one run per packet)", 1, XDP_DROP },
	{ "spoof_distinct_first_stage", "the same, dropped by the first stage (the rule-wide "
	  "refusal cached for any source)", 1, XDP_DROP },
	{ "hit_sampled", "one rule, existing key, admitted, weir auto's sampling on (a capture of "
	  "every verdict, one packet in 64 copied at random)", 0, XDP_PASS },
	{ "spare_verified", "one rule, existing key, admitted, the rule with spare verified (as "
	  "every auto rule; the source not verified, its hint slot stale: one array lookup)", 0,
	  XDP_PASS },
	{ "spare_verified_slot", "the same, the source's hint slot fresh (another source of it "
	  "verified): the hash lookup too, missing", 0, XDP_PASS },
	{ "spare_verified_by", "the same rule, the source verified: it goes by unmatched (one LRU "
	  "lookup, hit)", 0, XDP_PASS },
	{ "fingerprint_limit", "a fingerprint's packet (every further match field) dropped by a "
	  "rule-wide bucket that admits one a day (weir auto's rule before action block)", 0,
	  XDP_DROP },
	{ "fingerprint_block", "the same packet dropped by action block with spare verified (weir "
	  "auto's rule; the source not verified)", 0, XDP_DROP },
};

/* The row of P_COLD, beside the paths. */
#define COLD_NAME "one rule, an existing key picked at random from a full table of as many " \
		  "ways (one run per packet, clock auto)"
/* The rows of P_SPOOF2 and P_DROP2: each CPU's cost while the other runs the same. */
static const char *const two_cpu_names[2] = {
	"spoofed source refused by a rule-wide limit, two CPUs at once (each CPU's cost)",
	"one rule, existing key, dropped, two CPUs at once (each CPU's cost)",
};
static const char *const two_cpu_keys[2] = { "spoof_two_cpus", "drop_two_cpus" };

static const char *row_name(int p);

/*
 * The data path's aims: one path's cost over trivial against another's, in
 * the same rounds; max 0: a ratio shown for comparison, no aim.
 */
static const struct {
	const char *name;
	int num, den;
	double max;
} aims[] = {
	{ "one rule, existing key / no rules", P_HIT, P_NORULE, 1.5 },
	{ "one rule, every further match field in use / the same rule without them", P_HITX, P_HIT,
	  0 },
	{ "one rule with iface / the same rule without it", P_HITIF, P_HIT, 0 },
	{ "one rule, the interface counted / not", P_HITSLOT, P_HIT, 0 },
	{ "one rule, src a set of 10000 prefixes / the same rule with src a CIDR", P_HITSET,
	  P_HITCIDR, 0 },
	{ "fleet scope, tracked key / the same limit per host", P_FLEET, P_HIT, FLEET_AIM },
	{ "4 limits on one rule / one limit", P_LIM4, P_HIT, 2.0 },
	{ "one rule per dst / per src", P_DST, P_HIT, 0 },
	{ "one rule per flow / per src", P_FLOW, P_HIT, 0 },
	{ "64 rules, the last matching / one rule", P_RULES64, P_HIT, 1.3 },
	{ "256 rules, the last matching / 64 rules", P_RULES256, P_RULES64, 1.1 },
	{ "ACK with a cookie, its rule behind 63 others / alone", P_COOKIE_ACK64, P_COOKIE_ACK,
	  1.3 },
	{ "new key into a full table / an existing key picked at random from a full table of "
	  "the same size (one run per packet)", P_NEWFULL, P_COLD, 2.0 },
	{ "new key into a full table / the one existing key run again (one run per packet; "
	  "its set stays in the cache)", P_NEWFULL, P_HIT1, 0 },
	{ "spoofed source refused by a rule-wide limit: two CPUs at once / one CPU",
	  P_SPOOF2, P_SPOOF, 1.25 },
	{ "one source over its limit: two CPUs at once / one CPU", P_DROP2, P_DROP, 1.25 },
	{ "one rule beside a preset reflection rule / one rule", P_REFL_OTHER, P_HIT, 0 },
	{ "preset reflection, unsolicited, dropped / one rule, existing key, dropped", P_REFL_DROP,
	  P_DROP, 0 },
	{ "preset reflection, a recorded flow's reply / no rules", P_REFL_ANSWER, P_NORULE, 0 },
	{ "tcp-state, an established flow (cache hit) / the same rule without tcp-state",
	  P_TS_HIT, P_TS_BASE, 0 },
	{ "tcp-state, an ACK of no connection dropped (listener) / one rule, existing key, "
	  "dropped", P_TS_MISS, P_DROP, 0 },
	{ "one source over its limit: dropped by the first stage / by the rule walk",
	  P_DROP_CACHED, P_DROP, 0 },
	{ "spoofed sources under a rule-wide limit: dropped by the first stage / by the rule walk "
	  "(one run per packet)", P_SPOOF_D_CACHED, P_SPOOF_D, 0 },
	{ "one rule, weir auto's sampling on (one in 64) / off", P_HIT_SAMPLED, P_HIT, 0 },
	{ "one rule with spare verified, the source not verified / the same rule without it",
	  P_SPARE, P_HIT, 0 },
	{ "the same, its hint slot fresh (the hash lookup too) / the same rule without spare "
	  "verified", P_SPARE_SLOT, P_HIT, 0 },
	{ "spare verified, a verified source going by unmatched / no rules", P_SPARE_BY, P_NORULE,
	  0 },
	{ "a fingerprint dropped: action block, spare verified / a rule-wide bucket", P_FP_BLOCK,
	  P_FP_LIMIT, 0 },
	{ "a fingerprint dropped by action block / one rule, existing key, dropped", P_FP_BLOCK,
	  P_DROP, 0 },
};
#define NAIM (int)(sizeof(aims) / sizeof(aims[0]))

enum prim { PR_KTIME, PR_COARSE, PR_JIFFIES, PR_PRANDOM, PR_SUBCALL, PR_SET_CAS, PR_LRU,
	    PR_HASH, PR_LRU_CAS, PR_COUNTERS, NPRIM };
/* report.sh looks the pieces up by these names in the JSON. */
static const char *prim_names[NPRIM] = {
	"bpf_ktime_get_ns (precise clock)", "bpf_ktime_get_coarse_ns (coarse clock)",
	"bpf_jiffies64 (inlined by the JIT)", "bpf_get_prandom_u32 (any helper call)",
	"call of a global BPF function",
	"set-associative lookup (key hash, array, 4 ways) + compare-and-swap",
	"LRU hash lookup, 24-byte key, hit", "hash lookup, 24-byte key, hit",
	"LRU hash lookup + compare-and-swap", "4 per-CPU counter increments",
};

/* Tracked-key counts of the scaling table. */
static unsigned long scale_keys[] = { 1024, 65536, 1048576, 4194304 };
#define NSCALE (sizeof(scale_keys) / sizeof(scale_keys[0]))

struct inst {
	struct weir *skel;
	int prog, state, rulesets, config, agg, global, fleet_use;
	int egress, reflect;	/* weir_egress, wr_reflect */
	__u32 uid;		/* next rule uid */
	__u32 sets;		/* wr_state's sets: keys / WEIR_WAYS */
	__u64 seed;		/* wr_config.state_seed */
	/* fill_table's keys: X of 2001:db8:X::/64, or of IPv4 source X. */
	__u32 *keys;
	unsigned long nkeys;
};

struct lim {
	__u64 rate, burst;
	__u8 key, plen4, plen6;
	__u32 period_ms;	/* 0: per second */
	__u8 fleet;		/* scope fleet: weir_limit.fleet 1 (in step, no fallback) */
};

static unsigned long rounds = 5, repeat = 200000, distinct = 20000;
static __u8 pkt[PKT_MAX];
/* The jiffies clock's step (CLOCK_MONOTONIC_COARSE's resolution), as the controller reads it. */
static __u64 tick_ns;
/* XDP verdict of the latest run. */
static __u32 last_verdict;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned long n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void build_udp4(__u8 *p, __u32 saddr, __u16 dport)
{
	struct wr_ip4 *ip = (void *)(p + 14);
	__u16 *udp = (void *)(p + 34);

	memset(p, 0, PKT4_LEN);
	p[12] = 0x08;			/* ETH_P_IP */
	ip->ver_ihl = 0x45;
	ip->tot_len = htons(PKT4_LEN - 14);
	ip->ttl = 64;
	ip->proto = 17;
	ip->saddr = htonl(saddr);
	ip->daddr = htonl(0xc6120001);	/* 198.18.0.1 */
	udp[0] = htons(40000);
	udp[1] = htons(dport);
	udp[2] = htons(PKT4_LEN - 34);
}

/* The SYN of the cookie paths and its length: a Linux client's options, checksums right. */
#define SYN4_LEN	(14 + 20 + 40)
#define ACK4_LEN	(14 + 20 + 20)
#define SYN_ISN		0x11223344u

/* IPv4 header and TCP checksums of the frame at p (IPv4 header at 14, TCP at 34). */
static void fix_csums4(__u8 *p, __u32 len)
{
	__u16 c;

	p[24] = p[25] = 0;
	c = ~wr_csum_fold(wr_csum_add(0, p + 14, 20));
	p[24] = c >> 8;
	p[25] = c;
	p[34 + 16] = p[34 + 17] = 0;
	c = ~wr_csum_fold(wr_csum_add(wr_pseudo4(p + 26, len - 34), p + 34, len - 34));
	p[34 + 16] = c >> 8;
	p[34 + 17] = c;
}

/* A TCP segment from 198.18.0.2:40000 to BENCH_PORT: SYN with options, or a bare ACK. */
static void build_tcp4(__u8 *p, __u8 flags, __u32 seq, __u32 ack)
{
	static const __u8 opts[20] = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0,
				       1, 3, 3, 7 };
	__u32 len = flags & WEIR_TCP_SYN ? SYN4_LEN : ACK4_LEN;
	__u8 *t = p + 34;

	build_udp4(p, SRC4, BENCH_PORT);
	memset(p + 34, 0, len - 34);
	p[14 + 2] = 0;
	p[14 + 3] = len - 14;
	p[14 + 9] = 6;
	t[0] = 40000 >> 8;
	t[1] = 40000 & 0xff;
	t[2] = BENCH_PORT >> 8;
	t[3] = BENCH_PORT & 0xff;
	wr_put32(t + 4, seq);
	wr_put32(t + 8, ack);
	t[12] = ((len - 34) / 4) << 4;
	t[13] = flags;
	t[14] = 0xff;
	t[15] = 0xff;
	if (flags & WEIR_TCP_SYN)
		memcpy(t + 20, opts, sizeof(opts));
	fix_csums4(p, len);
}

/*
 * tcp-state's rows: an established pair on 127.0.0.1 in this network
 * namespace (test_run's socket lookups look there), a listener's port,
 * and a port bound but not listening (no socket a lookup finds). Ports in
 * host order.
 */
static __u16 ts_client_port, ts_server_port, ts_closed_port;
/* The end of the test process's TCP ACK the tcp-state rows send: 127.0.0.1. */
#define TS_ADDR		0x7f000001u
/*
 * set_rules makes its last rule `proto tcp` (any port) with tcp_mode 1,
 * and adds tcp-state with 2.
 */
static int tcp_mode;

/* A bare ACK from saddr:sport to 127.0.0.1:dport (host order), checksums right. */
static void build_ack4(__u8 *p, __u32 saddr, __u16 sport, __u16 dport)
{
	__u8 *t = p + 34;

	build_tcp4(p, WEIR_TCP_ACK, 1, 1);
	wr_put32(p + 26, saddr);
	wr_put32(p + 30, TS_ADDR);
	t[0] = sport >> 8;
	t[1] = sport & 0xff;
	t[2] = dport >> 8;
	t[3] = dport & 0xff;
	fix_csums4(p, ACK4_LEN);
}

/*
 * The established pair, a listener (fds to *lfd, *cfd, *afd) and a port
 * bound without listening (*bfd), all on 127.0.0.1, for the tcp-state
 * rows. 0 or -errno.
 */
static int ts_sockets(int *lfd, int *cfd, int *afd, int *bfd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(TS_ADDR) };
	socklen_t len = sizeof(a);

	*lfd = socket(AF_INET, SOCK_STREAM, 0);
	*cfd = socket(AF_INET, SOCK_STREAM, 0);
	*bfd = socket(AF_INET, SOCK_STREAM, 0);
	if (*lfd < 0 || *cfd < 0 || *bfd < 0)
		return -errno;
	/* Port 0: the kernel picks free ones, whatever else runs here. */
	if (bind(*lfd, (struct sockaddr *)&a, sizeof(a)) || listen(*lfd, 8) ||
	    getsockname(*lfd, (struct sockaddr *)&a, &len))
		return -errno;
	ts_server_port = ntohs(a.sin_port);
	if (connect(*cfd, (struct sockaddr *)&a, sizeof(a)))
		return -errno;
	*afd = accept(*lfd, NULL, NULL);
	len = sizeof(a);
	if (*afd < 0 || getsockname(*cfd, (struct sockaddr *)&a, &len))
		return -errno;
	ts_client_port = ntohs(a.sin_port);
	a.sin_port = 0;
	len = sizeof(a);
	if (bind(*bfd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(*bfd, (struct sockaddr *)&a, &len))
		return -errno;
	ts_closed_port = ntohs(a.sin_port);
	return 0;
}

/* 2001:db8:w1>>16:w1&0xffff::1 -> 2001:db8::1 */
static void build_udp6(__u8 *p, __u32 w1, __u16 dport)
{
	__u32 *src = (void *)(p + 22), *dst = (void *)(p + 38);
	__u16 *udp = (void *)(p + 54);

	memset(p, 0, PKT6_LEN);
	p[12] = 0x86;
	p[13] = 0xdd;
	p[14] = 0x60;
	*(__u16 *)(p + 18) = htons(PKT6_LEN - 54);
	p[20] = 17;
	p[21] = 64;
	src[0] = htonl(0x20010db8);
	src[1] = htonl(w1);
	src[3] = htonl(1);
	dst[0] = htonl(0x20010db8);
	dst[3] = htonl(1);
	udp[0] = htons(40000);
	udp[1] = htons(dport);
	udp[2] = htons(PKT6_LEN - 54);
}

/*
 * ns per packet over `repeat` runs of one packet; -1 if the run failed or
 * the packet did not get verdict want (the figure would be another path's).
 */
static double run_repeat(int fd, __u32 len, __u32 want)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len, .repeat = repeat);

	if (bpf_prog_test_run_opts(fd, &o))
		return -1;
	last_verdict = o.retval;
	return o.retval == want ? (double)o.duration : -1;
}

/* One run of the current packet, whatever its verdict. */
static double run_once(int fd, __u32 len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len, .repeat = 1);

	if (bpf_prog_test_run_opts(fd, &o))
		return -1;
	last_verdict = o.retval;
	return o.duration;
}

/* Mean ns over n single runs of the current packet, each with verdict want. */
static double run_same(int fd, __u32 len, unsigned long n, __u32 want)
{
	double total = 0, d;
	unsigned long i;

	for (i = 0; i < n; i++) {
		d = run_once(fd, len);
		if (d < 0 || last_verdict != want)
			return -1;
		total += d;
	}
	return total / n;
}

/* Mean ns over n single runs, packet i from IPv4 source base + i. */
static double run_distinct4(int fd, __u32 base, unsigned long n, __u32 want)
{
	double total = 0, d;
	unsigned long i;

	for (i = 0; i < n; i++) {
		build_udp4(pkt, base + i, BENCH_PORT);
		d = run_once(fd, PKT4_LEN);
		if (d < 0 || last_verdict != want)
			return -1;
		total += d;
	}
	return total / n;
}

/*
 * Mean ns over n single runs from sources picked at random: among the keys
 * a table was filled with (keys, nkeys of them: IPv6 /64s 2001:db8:X::/64,
 * or IPv4 sources X for fam 4), or among nkeys /64s from SRC6_W1 when keys
 * is NULL.
 */
static double run_random(int fd, int fam, const __u32 *keys, unsigned long nkeys,
			 unsigned long n, uint64_t *rng, __u32 want)
{
	double total = 0, d;
	unsigned long i, r;

	for (i = 0; i < n; i++) {
		r = wr_xorshift64s(rng) % nkeys;
		if (fam == 4)
			build_udp4(pkt, keys[r], BENCH_PORT);
		else
			build_udp6(pkt, keys ? keys[r] : SRC6_W1 + (__u32)r, BENCH_PORT);
		d = run_once(fd, fam == 4 ? PKT4_LEN : PKT6_LEN);
		if (d < 0 || last_verdict != want)
			return -1;
		total += d;
	}
	return total / n;
}

static void fill_limit(struct weir_limit *l, const struct lim *s, __u16 agg_slot)
{
	memset(l, 0, sizeof(*l));
	l->rate = s->rate;
	l->burst = s->burst;
	l->key = s->key;
	l->cost = WEIR_COST_PKT;
	l->plen4 = s->plen4;
	l->plen6 = s->plen6;
	l->agg_slot = agg_slot;
	l->fleet = s->fleet;
	l->period_ms = s->period_ms ? s->period_ms : 1000;
	l->interval_fp = wr_gcra_interval_per(s->rate, l->period_ms);
	l->tolerance = wr_gcra_tolerance(l->interval_fp, s->burst, WEIR_COST_PKT);
	wr_limit_set_masks(l);
}

/*
 * nr rules: rules 0..nr-2 carry one open per-source limit on ports the
 * packets do not use, rule nr-1 matches BENCH_PORT with the given limits.
 * Every rule gets a new uid, so no bucket from an earlier case is reused;
 * the rule-wide buckets are zeroed. Rule flags as the controller derives
 * them, so that `clock auto` reads the clock a daemon's rules would make
 * it read.
 */
/*
 * set_rules gives its last rule every further match field, each matching
 * the bench's UDP packet (build_udp4, and its payload's first word
 * 0x17000300: set_fields_pkt), as a reflection rule would: sport, dst, len,
 * ttl, frag, dscp and two payload terms.
 */
static int xfields;
/* set_rules gives its last rule `iface lo`: test_run's XDP packets arrive on lo (1). */
static int xiface;
/* set_rules: the last rule with spare verified, and verified sources kept (600 s). */
static int xspare;
/* set_rules: the last rule with action block, its limits taken off. */
static int xblock;
/*
 * set_rules gives its last rule a source match: 1 `src 198.18.0.0/15`, 2
 * the source set in slot 0 of wr_srcset4 (srcset_fill: 10000 /32s, SRC4
 * among them), as `src country:..` is after a commit.
 */
static int xsrc;
/* The source set's prefixes: 198.18.0.0 + i, /32 each. */
#define SRCSET_N	10000

static void set_fields(struct weir_rule *r)
{
	r->xmatch = WEIR_X_SPORT | WEIR_X_DST | WEIR_X_LEN | WEIR_X_TTL | WEIR_X_FRAG |
		    WEIR_X_DSCP | WEIR_X_PAYLOAD;
	r->sport_lo = 40000;
	r->sport_hi = 40000;
	r->nr_dst = 1;
	r->dst_family[0] = 4;
	r->dst_plen[0] = 32;
	r->dst_net[0][0] = htonl(0xc6120001);	/* 198.18.0.1 */
	r->dst_mask[0][0] = 0xffffffffu;
	r->len_lo = 40;
	r->len_hi = 60;
	r->ttl_lo = 30;
	r->ttl_hi = 64;
	r->frag = WEIR_FRAG_NONE;
	r->dscp = 0;
	r->nr_pay = 2;
	r->pay[0].off = 0;
	r->pay[0].mask = htonl(0xff00ff00);
	r->pay[0].value = htonl(0x17000300);
	r->pay[1].off = 4;
	r->pay[1].mask = 0xffffffffu;
	r->pay[1].value = 0;
}

/* The bench's UDP packet with the payload set_fields' terms look for. */
static void set_fields_pkt(__u8 *p)
{
	p[42] = 0x17;
	p[44] = 0x03;
}

/*
 * The passed packets of entry key of a per-CPU counter map whose values
 * (vsize bytes) start with them, summed over CPUs; 0 if unreadable.
 */
static __u64 passed_sum(struct bpf_map *map, __u32 key, size_t vsize)
{
	int ncpu = libbpf_num_possible_cpus(), c;
	__u64 v[(ncpu > 0 ? ncpu : 1) * vsize / sizeof(__u64)], n = 0;

	if (ncpu <= 0 || bpf_map__lookup_elem(map, &key, sizeof(key), v, sizeof(v), 0))
		return 0;
	for (c = 0; c < ncpu; c++)
		n += v[c * vsize / sizeof(__u64)];
	return n;
}

/* Packets rule slot 0 has passed; frames slot 1 of the per-interface counters has. */
#define rule0_passed(in) passed_sum((in)->skel->maps.wr_rule_stats, 0, \
				    sizeof(struct weir_rule_stats))
#define if1_passed(in) passed_sum((in)->skel->maps.wr_if_stats, 1, sizeof(struct weir_if_stats))
_Static_assert(offsetof(struct weir_rule_stats, passed_pkts) == 0 &&
	       offsetof(struct weir_if_stats, passed_pkts) == 0, "passed_sum reads word 0");

/* set_rules adds, after its rules, `preset reflection` with its default limit (drop all). */
static bool with_reflect;
/* set_rules: switch the first stage's cache on for the next set (weir_config.cache_on). */
static bool with_cache;
/* set_rules: a capture on for the next set, as weir auto samples (weir_config.capture). */
static bool with_sample;
/* The capture's one in N for it: weir auto's at a few hundred thousand packets a second. */
#define SAMPLE_ONE_IN	64

static int drop_record(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	return 0;
}

/*
 * The capture as weir auto runs it (lib/capture.c's session): every
 * verdict, any rule, a lease that never runs out here, one in
 * SAMPLE_ONE_IN; the ring emptied first, so the copies of the row's runs
 * find room as they do with a reader.
 */
static int sample_on(struct inst *in)
{
	struct weir_capture c = {
		.lease_ns = ~0ULL,
		.budget = WEIR_CAPTURE_BUDGET_MAX,
		.snaplen = 128,
		.verdicts = 1U << WEIR_CV_PASSED | 1U << WEIR_CV_DROPPED,
		.rule_slot = WEIR_CAPTURE_ANY_RULE,
		.pid = 1,
		.one_in = SAMPLE_ONE_IN,
	};
	struct ring_buffer *rb;
	__u32 zero = 0;

	rb = ring_buffer__new(bpf_map__fd(in->skel->maps.wr_capture_ring), drop_record, NULL,
			      NULL);
	if (!rb)
		return -errno;
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	if (bpf_map_update_elem(bpf_map__fd(in->skel->maps.wr_capture), &zero, &c, 0))
		return -errno;
	return 0;
}

static int set_rules(struct inst *in, __u32 nr, const struct lim *lims, __u32 nlims)
{
	static struct weir_ruleset rs;
	static const struct lim open = { OPEN_RATE, OPEN_RATE, WEIR_KEY_SRC, 32, 64, 0 };
	struct weir_config cfg;
	struct weir_state zero_st = {};
	__u32 zero = 0, i, li;

	memset(&rs, 0, sizeof(rs));
	rs.nr_rules = nr;
	for (i = 0; i < nr; i++) {
		struct weir_rule *r = &rs.rules[i];
		bool last = i == nr - 1;
		__u32 n = last ? nlims : 1;

		snprintf(rs.names[i], WEIR_NAME_LEN, "bench%u", i);
		r->uid = in->uid++;
		r->slot = i;
		r->nr_limits = n;
		r->match = WEIR_M_PROTO | WEIR_M_DPORT;
		r->proto = 17;
		r->dport_lo = r->dport_hi = last ? BENCH_PORT : 10000 + i;
		for (li = 0; li < n; li++) {
			__u32 slot = i * WEIR_MAX_LIMITS + li;

			fill_limit(&r->limits[li], last ? &lims[li] : &open, slot);
			if (wr_limit_needs_precise(&r->limits[li], tick_ns))
				r->flags |= WEIR_RF_PRECISE;
			if (bpf_map_update_elem(in->agg, &slot, &zero_st, 0))
				return -errno;
		}
		if (last && xfields)
			set_fields(r);
		if (last && tcp_mode) {
			r->proto = 6;
			r->match = WEIR_M_PROTO;
			if (tcp_mode == 2)
				r->flags |= WEIR_RF_TCP_STATE;
		}
		if (last && xsrc == 1) {
			r->match |= WEIR_M_SRC | WEIR_M_FAMILY;
			r->family = 4;
			r->src_plen = 15;
			r->src_mask[0] = htonl(0xfffe0000u);
			r->src_net[0] = htonl(SRC4 & 0xfffe0000u);
		} else if (last && xsrc == 2) {
			r->match |= WEIR_M_SRCSET;
			r->srcset = 0;
		}
		if (last && xiface) {
			r->xmatch |= WEIR_X_IFACE;
			r->ifindex = 1;		/* lo's, in every network namespace */
		}
		if (last && xspare)
			r->flags |= WEIR_RF_SPARE_VERIFIED;
		if (last && xblock) {
			r->action = WEIR_ACT_BLOCK;
			r->nr_limits = 0;
			r->flags &= ~WEIR_RF_PRECISE;
		}
	}
	/* Once: the next set is without it unless asked again. */
	if (with_reflect) {
		struct weir_rule *r = &rs.rules[rs.nr_rules];
		__u32 slot = rs.nr_rules * WEIR_MAX_LIMITS;

		with_reflect = false;
		/* As `rule add reflect preset reflection` makes it (user/lib/reflect.c). */
		snprintf(rs.names[rs.nr_rules], WEIR_NAME_LEN, "reflect");
		r->uid = in->uid++;
		r->slot = rs.nr_rules++;
		r->preset = WEIR_PRESET_REFLECT;
		r->match = WEIR_M_PROTO;
		r->proto = 17;
		r->nr_limits = 1;
		r->flags = WEIR_RF_PRESET_DEFAULT;
		r->limits[0].key = WEIR_KEY_ALL;
		r->limits[0].algo = WEIR_ALGO_FIXED;
		r->limits[0].cost = WEIR_COST_PKT;
		r->limits[0].period_ms = 1000;
		r->limits[0].agg_slot = slot;
		rs.reflect_rules = 1;
		if (bpf_map_update_elem(in->agg, &slot, &zero_st, 0))
			return -errno;
	}
	/* The rest of the config (the set hash, the clock offset) stays as it is. */
	if (bpf_map_lookup_elem(in->config, &zero, &cfg))
		return -errno;
	cfg.next_uid = in->uid;
	/* As the controller commits a set: with its rule index. */
	wr_ruleset_index(&rs, NULL);
	/*
	 * The first stage's cache only where a row asks for it (once): the
	 * other rows measure the path without it, as they did before it.
	 */
	cfg.cache_on = with_cache ? wr_ruleset_caches(&rs) : 0;
	cfg.cache_gen++;
	with_cache = false;
	if (with_sample) {
		int err = sample_on(in);

		if (err)
			return err;
	}
	cfg.capture = with_sample;
	with_sample = false;
	cfg.verified_ttl_ns = xspare ? 600 * 1000000000ULL : 0;
	if (bpf_map_update_elem(in->rulesets, &zero, &rs, 0) ||
	    bpf_map_update_elem(in->config, &zero, &cfg, 0))
		return -errno;
	return 0;
}

static __u64 mono_ns(void);

/* Slot 0 of in's wr_srcset4: an LPM trie of SRCSET_N /32s from 198.18.0.0, SRC4 among them. */
static int srcset_fill(struct inst *in)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	__u32 slot = 0, i;
	__u8 one = 1;
	int fd, err = 0;

	fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "bench_srcset", sizeof(struct weir_lpm4), 1,
			    SRCSET_N, &o);
	if (fd < 0)
		return -errno;
	for (i = 0; !err && i < SRCSET_N; i++) {
		struct weir_lpm4 k = { .plen = 32, .addr = htonl(0xc6120000u + i) };

		if (bpf_map_update_elem(fd, &k, &one, 0))
			err = -errno;
	}
	if (!err && bpf_map_update_elem(bpf_map__fd(in->skel->maps.wr_srcset4), &slot, &fd, 0))
		err = -errno;
	close(fd);
	return err;
}

/*
 * The cookie paths' rule: `proto tcp dport BENCH_PORT tcp-flags syn limit
 * 1pps per all action cookie cookie always`, budgets that never refuse, the
 * kernel primed just now (so no SYN is passed to it instead of answered)
 * and every option allowed back (tcp_timestamps = 2). Behind `front` rules
 * of `proto tcp dport` other ports (limit-free drop rules: they never
 * match the bench's packets).
 */
static int set_cookie_rule(struct inst *in, __u32 front)
{
	static const struct lim one = { 1, 1, WEIR_KEY_ALL, 0, 0, 0 };
	static struct weir_ruleset rs;
	struct weir_config cfg;
	struct weir_ck_dst k = { .addr = { BENCH_PORT }, .slot = front, .family = 0x80 | 4 };
	struct weir_rule *r = &rs.rules[front];
	__u32 zero = 0, i;
	__u64 now;

	memset(&rs, 0, sizeof(rs));
	rs.nr_rules = front + 1;
	rs.cookie_rules = 1;
	for (i = 0; i < front; i++) {
		struct weir_rule *o = &rs.rules[i];

		snprintf(rs.names[i], WEIR_NAME_LEN, "other%u", i);
		o->uid = in->uid++;
		o->slot = i;
		o->match = WEIR_M_PROTO | WEIR_M_DPORT;
		o->proto = 6;
		o->dport_lo = o->dport_hi = BENCH_PORT + 1 + i;
		o->action = WEIR_ACT_DROP;
	}
	snprintf(rs.names[front], WEIR_NAME_LEN, "cookie");
	r->slot = front;
	r->uid = in->uid++;
	r->nr_limits = 1;
	r->match = WEIR_M_PROTO | WEIR_M_DPORT | WEIR_M_TCPFLAGS;
	r->proto = 6;
	r->dport_lo = r->dport_hi = BENCH_PORT;
	r->tcp_mask = WEIR_TCP_SYN | WEIR_TCP_ACK;
	r->tcp_value = WEIR_TCP_SYN;
	r->action = WEIR_ACT_COOKIE;
	r->cookie = WEIR_COOKIE_ALWAYS;
	fill_limit(&r->limits[0], &one, 0);
	r->ck_rate = r->ckd_rate = 1000000000;
	r->ck_interval_fp = r->ckd_interval_fp = wr_gcra_interval_per(OPEN_RATE, 1000);
	r->ck_tolerance = r->ckd_tolerance = wr_gcra_tolerance(r->ck_interval_fp, OPEN_RATE,
							       WEIR_COST_PKT);
	if (bpf_map_lookup_elem(in->config, &zero, &cfg))
		return -errno;
	cfg.next_uid = in->uid;
	cfg.cookie_flags = WEIR_CK_TS | WEIR_CK_SACK | WEIR_CK_WSCALE;
	cfg.cookie_wscale = 7;
	now = mono_ns();
	/* As the controller commits a set: with its rule index. */
	wr_ruleset_index(&rs, NULL);
	if (bpf_map_update_elem(in->rulesets, &zero, &rs, 0) ||
	    bpf_map_update_elem(in->config, &zero, &cfg, 0) ||
	    bpf_map_update_elem(bpf_map__fd(in->skel->maps.wr_cookie_dst), &k, &now, 0))
		return -errno;
	return 0;
}

/*
 * An ACK answering a SYN-ACK weir just made (run once, its sequence
 * number read back) into pkt: a cookie the kernel's check finds valid for
 * the listener main() opened on BENCH_PORT. 0 or -1.
 */
static int cookie_ack(struct inst *in)
{
	__u8 out[SYN4_LEN + 64];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = SYN4_LEN,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	__u32 cookie;

	build_tcp4(pkt, WEIR_TCP_SYN, SYN_ISN, 0);
	if (bpf_prog_test_run_opts(in->prog, &o) || o.retval != XDP_TX)
		return -1;
	cookie = (__u32)out[38] << 24 | (__u32)out[39] << 16 | (__u32)out[40] << 8 | out[41];
	build_tcp4(pkt, WEIR_TCP_ACK, SYN_ISN + 1, cookie + 1);
	return 0;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Measure the jiffies clock's offset, as the loader does after writing the
 * config: weir_clock_sync keeps the smallest ktime - jiffies x tick it
 * sees, which is the offset once a run has landed just after a tick.
 * Without it the coarse clock falls back to bpf_ktime_get_coarse_ns, and
 * the figures would be that clock's.
 */
static int clock_sync(struct inst *in)
{
	static __u8 frame[SYNC_LEN];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame));
	int fd = bpf_program__fd(in->skel->progs.weir_clock_sync);
	__u64 end = mono_ns() + CLOCK_SYNC_NS;
	struct weir_config cfg;
	__u32 zero = 0;

	do {
		if (bpf_prog_test_run_opts(fd, &o))
			return -errno;
	} while (mono_ns() < end);
	if (bpf_map_lookup_elem(in->config, &zero, &cfg))
		return -errno;
	return cfg.clock_tick ? 0 : -ENODATA;
}

/*
 * A private weir with `keys` ways of per-source state under a clock,
 * initialised as the loader initialises it: wr_config holds wr_state's
 * set count and a random nonzero seed (without them every per-source
 * lookup is an internal fault, and fail-open hides it), and the clocks
 * that read jiffies have their offset.
 */
static int open_inst(struct inst *in, int clock, unsigned long keys)
{
	struct weir_config cfg = {};
	struct bpf_map *map;
	__u32 zero = 0;
	char why[256];
	int err;

	memset(in, 0, sizeof(*in));
	in->sets = keys / WEIR_WAYS ? keys / WEIR_WAYS : 1;
	in->skel = wr_open_for_kernel(NULL, NULL, why, sizeof(why));
	if (!in->skel) {
		fprintf(stderr, "progcost: %s\n", why);
		return -errno;
	}
	bpf_object__for_each_map(map, in->skel->obj)
		bpf_map__set_pin_path(map, NULL);
	bpf_map__set_max_entries(in->skel->maps.wr_state, in->sets);
	in->skel->rodata->clock_mode = clocks[clock].mode;
	err = weir__load(in->skel);
	if (!err)
		err = wr_cookie_progs_fill(in->skel);
	if (err)
		return err;
	in->prog = bpf_program__fd(in->skel->progs.weir_xdp);
	in->state = bpf_map__fd(in->skel->maps.wr_state);
	in->rulesets = bpf_map__fd(in->skel->maps.wr_rulesets);
	in->config = bpf_map__fd(in->skel->maps.wr_config);
	in->agg = bpf_map__fd(in->skel->maps.wr_agg);
	in->global = bpf_map__fd(in->skel->maps.wr_global);
	in->fleet_use = bpf_map__fd(in->skel->maps.wr_fleet_use);
	in->egress = bpf_program__fd(in->skel->progs.weir_egress);
	in->reflect = bpf_map__fd(in->skel->maps.wr_reflect);
	in->uid = 1;

	do {
		if (getrandom(&in->seed, sizeof(in->seed), 0) != sizeof(in->seed))
			return errno ? -errno : -EIO;
	} while (!in->seed);
	cfg.next_uid = in->uid;
	cfg.state_seed = in->seed;
	cfg.state_sets = in->sets;
	if (bpf_map_update_elem(in->config, &zero, &cfg, 0))
		return -errno;
	/*
	 * As the loader does, under every clock (tcp-state's cache and verified
	 * sources read the tick clock under clock precise too); as for the
	 * loader, no reason to stop: the figures are then the fallback's.
	 */
	err = clock_sync(in);
	if (err)
		fprintf(stderr, "progcost: cannot measure the jiffies clock's offset (%s): "
				"clock %s reads bpf_ktime_get_coarse_ns instead\n",
			strerror(-err), clocks[clock].key);
	return 0;
}

/* The key of IPv4 source a (host order) under limit 0 of rule uid, as the data path makes it. */
static void key4(struct weir_key *k, __u32 uid, __u32 a)
{
	memset(k, 0, sizeof(*k));
	k->uid = uid;
	k->family = 4;
	k->plen = 32;
	k->addr[0] = htonl(a);
}

/* The key of 2001:db8:w1::/64 under limit 0 of rule uid, as the data path makes it. */
static void key6(struct weir_key *k, __u32 uid, __u32 w1)
{
	memset(k, 0, sizeof(*k));
	k->uid = uid;
	k->family = 6;
	k->plen = 64;
	k->addr[0] = htonl(0x20010db8);
	k->addr[1] = htonl(w1);
}

/* A key fill_table puts in: IPv6 /64 2001:db8:X::/64, or IPv4 source X (fam 4). */
static void fill_key(struct weir_key *k, int fam, __u32 uid, __u32 x)
{
	if (fam == 4)
		key4(k, uid, x);
	else
		key6(k, uid, x);
}

static __u32 key_set(const struct inst *in, const struct weir_key *k)
{
	return wr_state_set(wr_key_hash(k, in->seed), in->sets);
}

/*
 * Occupy every way of every set of the per-source table: IPv6 /64 keys
 * 2001:db8:W::/64 of rule uid (limit 0), W from SRC6_W1 on, each put in the
 * set the data path looks in; a key whose set is full already is skipped,
 * and the next W tried, until no way is left (a few times as many W as
 * ways: the last sets fill like the last coupons of a collection). With fam
 * 4, IPv4 sources W of COLD4_BASE .. COLD4_END instead, until the range is
 * used up (some ways stay empty). Buckets hold tat and nothing else. The
 * keys put in are in in->keys (in->nkeys of them).
 */
static int fill_table(struct inst *in, __u32 uid, __u64 tat, int fam)
{
	const unsigned long chunk = 16384;
	unsigned long nways = (unsigned long)in->sets * WEIR_WAYS, placed = 0, s, j;
	__u8 *used = calloc(in->sets, 1);
	struct weir_set *vals = calloc(chunk, sizeof(*vals));
	__u32 *idx = calloc(chunk, sizeof(*idx)), w1 = fam == 4 ? COLD4_BASE : SRC6_W1;
	/* Way w of set s holds key ways[s * WEIR_WAYS + w]; 0: left empty. */
	__u32 *ways = calloc(nways, sizeof(*ways));
	struct weir_key k;
	int err = 0;

	free(in->keys);
	in->keys = malloc(nways * sizeof(*in->keys));
	if (!used || !vals || !idx || !ways || !in->keys) {
		err = -ENOMEM;
		goto out;
	}
	while (placed < nways) {
		if (fam == 4 && w1 == COLD4_END)
			break;	/* the range is used up: some ways stay empty */
		if (w1 == 0) {
			/* Every W tried: cannot happen with a working hash. */
			err = -EOVERFLOW;
			goto out;
		}
		fill_key(&k, fam, uid, w1);
		s = key_set(in, &k);
		if (used[s] < WEIR_WAYS) {
			ways[s * WEIR_WAYS + used[s]++] = w1;
			in->keys[placed++] = w1;
		}
		w1++;
	}
	for (s = 0; s < in->sets && !err; s += chunk) {
		__u32 cnt = in->sets - s < chunk ? in->sets - s : chunk;
		LIBBPF_OPTS(bpf_map_batch_opts, o);

		memset(vals, 0, cnt * sizeof(*vals));
		for (j = 0; j < cnt; j++) {
			int w;

			idx[j] = s + j;
			for (w = 0; w < WEIR_WAYS; w++) {
				struct weir_way *way = &vals[j].way[w];

				if (!ways[(s + j) * WEIR_WAYS + w])
					continue;
				fill_key(&way->key, fam, uid, ways[(s + j) * WEIR_WAYS + w]);
				way->st.tat = tat;
			}
		}
		if (bpf_map_update_batch(in->state, idx, vals, &cnt, &o))
			err = -errno;
	}
	in->nkeys = placed;
out:
	free(ways);
	free(used);
	free(vals);
	free(idx);
	return err;
}

/*
 * How many of a sample of the keys fill_table put in are still in their
 * set: every key a run picks exists, so a key the data path did not find
 * where fill_table put it shows as an insert that evicted another.
 */
static double present_share(const struct inst *in, __u32 uid, int fam)
{
	unsigned long nways = in->nkeys;
	unsigned long i, hit = 0, step = nways > 4096 ? nways / 4096 : 1, tried = 0;
	struct weir_set set;
	struct weir_key k;
	__u32 s;
	int w;

	for (i = 0; i < nways; i += step, tried++) {
		fill_key(&k, fam, uid, in->keys[i]);
		s = key_set(in, &k);
		if (bpf_map_lookup_elem(in->state, &s, &set))
			continue;
		for (w = 0; w < WEIR_WAYS; w++)
			if (!memcmp(&set.way[w].key, &k, sizeof(k))) {
				hit++;
				break;
			}
	}
	return (double)hit / tried;
}

/* A counter of the data path (wr_global, enum weir_global), summed over CPUs. */
static long long global_count(const struct inst *in, __u32 idx)
{
	int ncpu = libbpf_num_possible_cpus(), c;
	struct weir_globals *v;
	long long sum = 0;
	__u32 zero = 0;

	if (ncpu <= 0 || idx >= WEIR_G_MAX)
		return -1;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -1;
	if (bpf_map_lookup_elem(in->global, &zero, v))
		sum = -1;
	for (c = 0; c < ncpu && sum >= 0; c++)
		sum += v[c].count[idx];
	free(v);
	return sum;
}

/* memlock of a map fd, from /proc/self/fdinfo: the map's own accounting. */
static long long memlock(int fd)
{
	char path[64], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* memlock per entry of a kernel map of this type, key and value size, entries. */
static double kernel_map_bytes(enum bpf_map_type type, unsigned long entries)
{
	int fd = bpf_map_create(type, NULL, sizeof(struct weir_key), sizeof(struct weir_state),
				entries, NULL);
	double b;

	if (fd < 0)
		return -1;
	b = (double)memlock(fd) / entries;
	close(fd);
	return b;
}

/* One path on one instance; ns per packet. */
/* One thread of run_two: the current packet, repeat runs on one CPU. */
struct two_cpu {
	int fd, cpu;
	__u32 len, want;
	double ns;
};

static void *two_cpu_run(void *arg)
{
	struct two_cpu *t = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	t->ns = -1;
	if (sched_setaffinity(0, sizeof(set), &set))
		return NULL;
	t->ns = run_repeat(t->fd, t->len, t->want);
	return NULL;
}

/*
 * The current packet run by CPUs 0 and 1 at once, each repeat times: the
 * mean of the two CPUs' ns per packet, or -1. What the two share (a bucket
 * both refuse or charge) moves between their caches as it is written.
 */
static double run_two(int fd, __u32 len, __u32 want)
{
	struct two_cpu t[2] = { { fd, 0, len, want, -1 }, { fd, 1, len, want, -1 } };
	pthread_t th[2];
	int i, started = 0;

	for (i = 0; i < 2; i++)
		if (!pthread_create(&th[i], NULL, two_cpu_run, &t[i]))
			started++;
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (started < 2 || t[0].ns < 0 || t[1].ns < 0)
		return -1;
	return (t[0].ns + t[1].ns) / 2;
}

/* P_SPOOF and P_DROP of the last run_path, run by two CPUs at once (clock auto). */
static double two_ns[2];
/* The instance whose P_SPOOF and P_DROP run on two CPUs too (clock auto); NULL: none. */
static struct inst *two_inst;

static double run_path(struct inst *in, int p, unsigned long round)
{
	static const struct lim open = { OPEN_RATE, OPEN_RATE, WEIR_KEY_SRC, 32, 64 };
	static const struct lim tight = { 1, 1, WEIR_KEY_SRC, 32, 64 };
	/* per dst and per flow: off the per-source fast path (bpf/walk.h fast_src). */
	static const struct lim dst = { OPEN_RATE, OPEN_RATE, WEIR_KEY_DST, 32, 64 };
	static const struct lim flow = { OPEN_RATE, OPEN_RATE, WEIR_KEY_FLOW, 32, 64 };
	static const struct lim four[4] = {
		{ OPEN_RATE, OPEN_RATE, WEIR_KEY_SRC, 32, 64 },
		{ OPEN_RATE, OPEN_RATE, WEIR_KEY_SRC, 24, 48 },
		{ OPEN_RATE, OPEN_RATE, WEIR_KEY_SRC, 16, 32 },
		{ OPEN_RATE, OPEN_RATE, WEIR_KEY_ALL, 0, 0 },
	};
	/* Rule-wide 1 pps burst 1: the first packet takes it, every later one is refused. */
	static const struct lim spoof[2] = {
		{ 1, 1, WEIR_KEY_ALL, 0, 0 },
		{ OPEN_RATE, OPEN_RATE, WEIR_KEY_SRC, 32, 64 },
	};
	/*
	 * One packet an hour, burst 2: a new key's first packet is admitted and
	 * leaves its bucket an hour from full, so the ways the new keys take
	 * stay limiting, like the ways fill_table put there: a full table of
	 * buckets that evicting forgets a charge of, round after round.
	 */
	static const struct lim slow = { 1, 2, WEIR_KEY_SRC, 32, 64, 3600000 };
	__u32 len = PKT4_LEN;
	struct weir_key k;
	__u64 before;
	int err = 0;

	if (p == P_COOKIE_SYN || p == P_COOKIE_ACK || p == P_COOKIE_ACK64) {
		if (set_cookie_rule(in, p == P_COOKIE_ACK64 ? 63 : 0))
			return -1;
		if (p != P_COOKIE_SYN)
			return cookie_ack(in) ? -1 : run_same(in->prog, ACK4_LEN, distinct, XDP_PASS);
		build_tcp4(pkt, WEIR_TCP_SYN, SYN_ISN, 0);
		return run_same(in->prog, SYN4_LEN, distinct, XDP_TX);
	}

	build_udp4(pkt, SRC4, BENCH_PORT);
	with_reflect = p >= P_REFL_OTHER && p != P_EGRESS_IDLE && p < P_DROP_CACHED;
	switch (p) {
	case P_REFL_OTHER:
		err = set_rules(in, 1, &open, 1);
		break;
	case P_REFL_DROP:
	case P_REFL_ANSWER: {
		/* The reply's key: as the egress program records the host's query to SRC4:53. */
		struct weir_flow_key fk = { .raddr = { htonl(SRC4) }, .rport = 53,
					    .lport = BENCH_PORT, .family = 4 };
		__u64 stamp = mono_ns();

		err = set_rules(in, 0, NULL, 0);
		((__u16 *)(pkt + 34))[0] = htons(53);
		bpf_map_delete_elem(in->reflect, &fk);
		/* Stamped now: fresh for WR_REFLECT_TTL_NS, longer than a round. */
		if (!err && p == P_REFL_ANSWER && bpf_map_update_elem(in->reflect, &fk, &stamp, 0))
			err = -errno;
		break;
	}
	case P_EGRESS_IDLE:
	case P_EGRESS_REC:
		err = set_rules(in, 0, NULL, 0);
		if (err || run_once(in->egress, len) < 0)
			return -1;
		return run_repeat(in->egress, len, paths[p].verdict);
	case P_NORULE:
		err = set_rules(in, 0, NULL, 0);
		break;
	case P_TS_BASE:
	case P_TS_HIT:
	case P_TS_MISS:
	case P_TS_NOSOCK: {
		cpu_set_t was, one;
		long long l0, d0;
		double ns;

		tcp_mode = p == P_TS_BASE ? 1 : 2;
		err = set_rules(in, 1, &open, 1);
		tcp_mode = 0;
		if (err)
			return -1;
		len = ACK4_LEN;
		if (p == P_TS_BASE || p == P_TS_HIT)
			build_ack4(pkt, TS_ADDR, ts_client_port, ts_server_port);
		else
			build_ack4(pkt, SRC4, 40000,
				   p == P_TS_MISS ? ts_server_port : ts_closed_port);
		/*
		 * On one CPU for the row: tcp-state's cache is per CPU, and
		 * test_run may move to another CPU between repeats.
		 */
		if (sched_getaffinity(0, sizeof(was), &was))
			return -1;
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu(), &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			return -1;
		/*
		 * The hit's first run looks the flow up and caches it (or
		 * finds it cached from the round before); without tcp-state
		 * nothing is looked up.
		 */
		l0 = global_count(in, WEIR_G_TCP_LOOKUPS);
		ns = run_once(in->prog, len);
		if (ns >= 0 && !(p == P_TS_BASE && global_count(in, WEIR_G_TCP_LOOKUPS) != l0)) {
			l0 = global_count(in, WEIR_G_TCP_LOOKUPS);
			d0 = global_count(in, WEIR_G_OUT_OF_STATE);
			ns = run_repeat(in->prog, len, paths[p].verdict);
		} else {
			ns = -1;
		}
		sched_setaffinity(0, sizeof(was), &was);
		if (ns < 0)
			return -1;
		/*
		 * Measured only if the runs did what the row says: the hit
		 * never looked up (the cache's 2 s outlast a round), each miss
		 * looked up and was dropped by tcp-state, the rule without it
		 * never looked up.
		 */
		if (p == P_TS_BASE || p == P_TS_HIT) {
			if (global_count(in, WEIR_G_TCP_LOOKUPS) != l0)
				return -1;
		} else if (global_count(in, WEIR_G_TCP_LOOKUPS) - l0 != (long long)repeat ||
			   global_count(in, WEIR_G_OUT_OF_STATE) - d0 != (long long)repeat) {
			return -1;
		}
		return ns;
	}
	case P_HIT:
		err = set_rules(in, 1, &open, 1);
		break;
	case P_FP_LIMIT:
	case P_FP_BLOCK: {
		static const struct lim day = { 1, 1, WEIR_KEY_ALL, 0, 0, 86400000 };

		xfields = 1;
		xblock = xspare = p == P_FP_BLOCK;
		err = set_rules(in, 1, &day, 1);
		xfields = xblock = xspare = 0;
		set_fields_pkt(pkt);
		if (err || run_once(in->prog, len) < 0)
			return -1;
		return run_repeat(in->prog, len, paths[p].verdict);
	}
	case P_HITX:
		xfields = 1;
		err = set_rules(in, 1, &open, 1);
		xfields = 0;
		set_fields_pkt(pkt);
		/* Measured only if the rule does match: its first packet counted as passed. */
		if (err)
			return -1;
		before = rule0_passed(in);
		if (run_once(in->prog, len) < 0 || rule0_passed(in) <= before)
			return -1;
		return run_repeat(in->prog, len, paths[p].verdict);
	case P_HITCIDR:
	case P_HITSET:
		xsrc = p == P_HITCIDR ? 1 : 2;
		err = set_rules(in, 1, &open, 1);
		xsrc = 0;
		if (!err && p == P_HITSET)
			err = srcset_fill(in);
		/* Measured only if the rule does match: its first packet counted as passed. */
		if (err)
			return -1;
		before = rule0_passed(in);
		if (run_once(in->prog, len) < 0 || rule0_passed(in) <= before)
			return -1;
		return run_repeat(in->prog, len, paths[p].verdict);
	case P_HITIF:
		xiface = 1;
		err = set_rules(in, 1, &open, 1);
		xiface = 0;
		/* Measured only if the rule does match: its first packet counted as passed. */
		if (err)
			return -1;
		before = rule0_passed(in);
		if (run_once(in->prog, len) < 0 || rule0_passed(in) <= before)
			return -1;
		return run_repeat(in->prog, len, paths[p].verdict);
	case P_SPARE:
	case P_SPARE_SLOT:
	case P_SPARE_BY: {
		struct weir_verified_key vk = { .addr = { htonl(SRC4) }, .family = 4 };
		/* A second ago: the tick clocks read up to a tick behind mono_ns. */
		__u64 at = mono_ns() - 1000000000ULL, never = 0;
		__u32 slot = wr_verified_slot(&vk);
		double ns;

		xspare = 1;
		err = set_rules(in, 1, &open, 1);
		xspare = 0;
		if (err)
			return -1;
		bpf_map__delete_elem(in->skel->maps.wr_verified, &vk, sizeof(vk), 0);
		if (bpf_map__update_elem(in->skel->maps.wr_verified_hint, &slot, 4,
					 p == P_SPARE ? &never : &at, sizeof(at), 0))
			return -1;
		if (p == P_SPARE_BY &&
		    bpf_map__update_elem(in->skel->maps.wr_verified, &vk, sizeof(vk), &at,
					 sizeof(at), 0))
			return -1;
		/* Measured only if the rule matched (not verified) or did not (verified). */
		before = rule0_passed(in);
		if (run_once(in->prog, len) < 0 || (rule0_passed(in) > before) != (p != P_SPARE_BY))
			return -1;
		ns = run_repeat(in->prog, len, paths[p].verdict);
		bpf_map__delete_elem(in->skel->maps.wr_verified, &vk, sizeof(vk), 0);
		bpf_map__update_elem(in->skel->maps.wr_verified_hint, &slot, 4, &never, sizeof(never),
				     0);
		return ns;
	}
	case P_HITSLOT: {
		__u32 h = 1, lo = 1, none = 0;	/* lo: ifindex 1, its slot 1 (ifindex % 256) */
		double ns;

		err = set_rules(in, 1, &open, 1);
		if (err || bpf_map__update_elem(in->skel->maps.wr_if_slot, &h, 4, &lo, 4, 0))
			return -1;
		/* Measured only if the frame is counted there. */
		before = if1_passed(in);
		ns = run_once(in->prog, len) < 0 || if1_passed(in) <= before ? -1 :
		     run_repeat(in->prog, len, paths[p].verdict);
		/* The other rows measure lo without a slot: one lookup, no count. */
		bpf_map__update_elem(in->skel->maps.wr_if_slot, &h, 4, &none, 4, 0);
		return ns;
	}
	case P_FLEET: {
		static const struct lim fleet = { OPEN_RATE, OPEN_RATE, WEIR_KEY_SRC, 32, 64, 0, 1 };
		struct weir_fleet_use u = {};
		double ns;

		err = set_rules(in, 1, &fleet, 1);
		if (err || run_once(in->prog, len) < 0)
			return -1;
		/*
		 * Tracked, as the fleet sync's fold leaves a key the fleet
		 * knows: every charge is added up for the sync. Measured only
		 * if that is what the runs did.
		 */
		key4(&k, in->uid - 1, SRC4);
		if (bpf_map_update_elem(in->fleet_use, &k, &u, BPF_ANY))
			return -1;
		ns = run_repeat(in->prog, len, paths[p].verdict);
		if (bpf_map_lookup_elem(in->fleet_use, &k, &u) || u.charged == 0)
			return -1;
		return ns;
	}
	case P_DROP:
		err = set_rules(in, 1, &tight, 1);
		break;
	case P_HIT_SAMPLED:
		with_sample = true;
		err = set_rules(in, 1, &open, 1);
		break;
	case P_DROP_CACHED:
		with_cache = true;
		err = set_rules(in, 1, &tight, 1);
		break;
	case P_V6:
		err = set_rules(in, 1, &open, 1);
		build_udp6(pkt, SRC6_W1, BENCH_PORT);
		len = PKT6_LEN;
		break;
	case P_DST:
		err = set_rules(in, 1, &dst, 1);
		break;
	case P_FLOW:
		err = set_rules(in, 1, &flow, 1);
		break;
	case P_LIM4:
		err = set_rules(in, 1, four, 4);
		break;
	case P_RULES8:
		err = set_rules(in, 8, &open, 1);
		break;
	case P_RULES32:
		err = set_rules(in, 32, &open, 1);
		break;
	case P_RULES64:
		err = set_rules(in, 64, &open, 1);
		break;
	case P_RULES256:
		err = set_rules(in, 256, &open, 1);
		break;
	case P_SPOOF:
		err = set_rules(in, 1, spoof, 2);
		break;
	case P_SPOOF_D:
	case P_SPOOF_D_CACHED:
		with_cache = p == P_SPOOF_D_CACHED;
		err = set_rules(in, 1, spoof, 2);
		/* The first packet takes the rule-wide token; every later one is refused. */
		if (err || run_once(in->prog, len) < 0)
			return -1;
		return run_distinct4(in->prog, 0xc6140000 + (round % 2) * distinct, distinct,
				     paths[p].verdict);
	case P_HIT1:
		/* The same cold start as the new key below, for an existing key. */
		err = set_rules(in, 1, &open, 1);
		if (err || run_once(in->prog, len) < 0)
			return -1;
		return run_same(in->prog, len, distinct, paths[p].verdict);
	case P_NEWFULL:
		/*
		 * A new uid: every source of this round is a new key, and
		 * each takes a way from a full set.
		 */
		err = set_rules(in, 1, &slow, 1);
		if (err)
			return -1;
		return run_distinct4(in->prog, 0xc6130000 + (round % 2) * distinct, distinct,
				     paths[p].verdict);
	}
	if (err)
		return -1;
	/* The first packet creates the bucket (or takes the only token). */
	if (run_once(in->prog, len) < 0)
		return -1;
	if (in == two_inst && (p == P_SPOOF || p == P_DROP))
		two_ns[p == P_DROP] = run_two(in->prog, len, paths[p].verdict);
	return run_repeat(in->prog, len, paths[p].verdict);
}

static const char *row_name(int p)
{
	if (p == P_COLD)
		return COLD_NAME;
	if (p >= P_SPOOF2)
		return two_cpu_names[p - P_SPOOF2];
	return paths[p].name;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: progcost [--rounds N] [--repeat N] [--distinct N] [--max-keys N]\n"
		   "                [--json FILE]\n"
		   "  ns per packet of weir's data path next to a trivial XDP_DROP\n"
		   "  (bpf_prog_test_run), the pieces it is made of, the cost against\n"
		   "  tracked keys (up to --max-keys, default 4194304) and bytes per key.\n");
}

static unsigned long number(const char *opt, const char *s, unsigned long min, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max) {
		fprintf(stderr, "progcost: invalid %s \"%s\" (%lu to %lu)\n", opt, s, min, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "repeat", required_argument, NULL, 'n' },
		{ "distinct", required_argument, NULL, 'k' },
		{ "max-keys", required_argument, NULL, 'm' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static double res[NCLK][NPATH][MAX_ROUNDS], med[NCLK][NPATH];
	static double triv[MAX_ROUNDS], triv1[MAX_ROUNDS], prim[NPRIM][MAX_ROUNDS];
	static double scale[NSCALE][MAX_ROUNDS], triv6[MAX_ROUNDS];
	/* clock auto, per round: each path over its trivial program, and the aims' ratios */
	static double over[NROWS][MAX_ROUNDS], spread[NROWS][3], aim[NAIM][MAX_ROUNDS];
	static double two[2][MAX_ROUNDS];
	static double cold4[MAX_ROUNDS], m_aim[NAIM], ts_extra[MAX_ROUNDS];
	double m_ts_extra;
	double m_triv, m_triv1, m_triv6, m_prim[NPRIM], m_scale[NSCALE];
	double bytes_state[NSCALE], bytes_lru[NSCALE], bytes_hash[NSCALE], present[NSCALE];
	unsigned long max_keys = 4194304, i, nscale = 0;
	struct timespec res_coarse;
	struct inst clk[NCLK] = {}, sc[NSCALE] = {}, cold = {};
	struct trivial *triv_skel = NULL;
	int lfd = -1, ts_fd[4] = { -1, -1, -1, -1 };
	struct prims *prims = NULL;
	const char *json_path = NULL;
	int a, c, k, p, err = 1, tfd, prim_fd[NPRIM];
	uint64_t rng = 0x9E3779B97F4A7C15ULL;
	FILE *js;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'r':
			rounds = number("--rounds", optarg, 1, MAX_ROUNDS);
			break;
		case 'n':
			repeat = number("--repeat", optarg, 1, 100000000);
			break;
		case 'k':
			distinct = number("--distinct", optarg, 1, 60000);
			break;
		case 'm':
			max_keys = number("--max-keys", optarg, 1024, 1UL << 24);
			break;
		case 'j':
			json_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "progcost: unexpected argument \"%s\"\n", argv[optind]);
		return 2;
	}

	/* The controller's tick for rule flags: CLOCK_MONOTONIC_COARSE's step. */
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res_coarse) == 0)
		tick_ns = res_coarse.tv_sec * 1000000000ULL + res_coarse.tv_nsec;

	/* A listener on BENCH_PORT: an ACK is checked only when it reaches one. */
	{
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(BENCH_PORT) };
		int one = 1;

		err = 0;
		lfd = socket(AF_INET, SOCK_STREAM, 0);
		if (lfd >= 0)
			setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (lfd < 0)
			err = -errno;
		else if (bind(lfd, (struct sockaddr *)&a, sizeof(a)))
			/* Another's listener there serves as well: the lookup finds it. */
			err = errno == EADDRINUSE ? 0 : -errno;
		else if (listen(lfd, 8))
			err = -errno;
		if (err) {
			fprintf(stderr, "progcost: cannot listen on port %d: %s\n", BENCH_PORT,
				strerror(-err));
			err = 1;
			goto out;
		}
	}
	err = ts_sockets(&ts_fd[0], &ts_fd[1], &ts_fd[2], &ts_fd[3]);
	if (err) {
		fprintf(stderr, "progcost: cannot open the tcp-state rows' sockets on 127.0.0.1: "
				"%s\n", strerror(-err));
		err = 1;
		goto out;
	}
	err = 1;	/* what every failure below returns */
	triv_skel = trivial__open_and_load();
	prims = prims__open_and_load();
	if (!triv_skel || !prims) {
		fprintf(stderr, "progcost: cannot load the BPF objects (root?)\n");
		goto out;
	}
	tfd = bpf_program__fd(triv_skel->progs.xdp_drop_all);
	{
		struct bpf_program *pp[NPRIM] = {
			prims->progs.p_ktime, prims->progs.p_coarse, prims->progs.p_jiffies,
			prims->progs.p_prandom, prims->progs.p_subcall, prims->progs.p_set_cas,
			prims->progs.p_lru_lookup, prims->progs.p_hash_lookup, prims->progs.p_lru_cas,
			prims->progs.p_counters,
		};
		/* The key every lookup of the pieces hits (see prims.bpf.c). */
		__u32 hk[6] = { 1, 2, 3, 4, 5, 6 };
		__u64 hv[3] = {};
		/* The set-associative piece's key: 198.18.0.2 of rule 1, limit 0. */
		struct weir_key sk = { .uid = 1, .family = 4, .plen = 32 };
		static struct weir_set set;
		__u32 idx;
		int w;

		sk.addr[0] = htonl(SRC4);
		do {
			if (getrandom(&prims->bss->p_seed, sizeof(prims->bss->p_seed), 0) < 0)
				prims->bss->p_seed = rng;
		} while (!prims->bss->p_seed);
		idx = wr_state_set(wr_key_hash(&sk, prims->bss->p_seed),
				   bpf_map__max_entries(prims->maps.p_sets));
		/* Other sources of the same rule before it: every way compares two words. */
		for (w = 0; w < WEIR_WAYS; w++) {
			set.way[w].key = sk;
			set.way[w].key.addr[0] = htonl(SRC4 + (w < WEIR_WAYS - 1 ? 1 + w : 0));
		}
		for (p = 0; p < NPRIM; p++)
			prim_fd[p] = bpf_program__fd(pp[p]);
		if (bpf_map_update_elem(bpf_map__fd(prims->maps.p_lru), hk, hv, 0) ||
		    bpf_map_update_elem(bpf_map__fd(prims->maps.p_hash), hk, hv, 0) ||
		    bpf_map_update_elem(bpf_map__fd(prims->maps.p_sets), &idx, &set, 0)) {
			fprintf(stderr, "progcost: cannot set up the pieces: %s\n", strerror(errno));
			goto out;
		}
	}

	for (k = 0; k < NCLK; k++) {
		err = open_inst(&clk[k], k, FULL_KEYS);
		if (err) {
			fprintf(stderr, "progcost: cannot load weir (clock %s): %s\n",
				clocks[k].key, strerror(-err));
			err = 1;
			goto out;
		}
		/*
		 * Every way taken by a bucket an hour from full (uid FILL_UID is
		 * no rule's): a new key must evict one that is still limiting.
		 */
		err = fill_table(&clk[k], FILL_UID, mono_ns() + 3600 * 1000000000ULL, 6);
		if (err) {
			fprintf(stderr, "progcost: cannot fill the table: %s\n", strerror(-err));
			err = 1;
			goto out;
		}
	}
	/* CPUs 0 and 1 both online: the two-CPU rows. */
	{
		cpu_set_t on;

		if (!sched_getaffinity(0, sizeof(on), &on) && CPU_ISSET(0, &on) && CPU_ISSET(1, &on))
			two_inst = &clk[CLK_AUTO];
	}
	/*
	 * An existing key measured as the new key is: one run per packet, each
	 * from another IPv4 source, in a table of as many ways, so that its
	 * set is as far from the cache as a new key's (the new key's row less
	 * this one is what inserting costs, not where the set was).
	 */
	{
		static const struct lim open = { OPEN_RATE, OPEN_RATE, WEIR_KEY_SRC, 32, 64 };

		err = open_inst(&cold, CLK_AUTO, FULL_KEYS);
		if (!err)
			err = set_rules(&cold, 1, &open, 1);
		if (!err)
			err = fill_table(&cold, cold.uid - 1, 0, 4);
		if (err) {
			fprintf(stderr, "progcost: cannot set up the cold existing keys: %s\n",
				strerror(-err));
			err = 1;
			goto out;
		}
	}
	for (i = 0; i < NSCALE && scale_keys[i] <= max_keys; i++, nscale++) {
		static const struct lim open = { OPEN_RATE, OPEN_RATE, WEIR_KEY_SRC, 32, 64 };
		unsigned long n = scale_keys[i];

		/* As many ways as keys, each holding one: the table the loader makes for n keys. */
		err = open_inst(&sc[i], CLK_AUTO, n);
		if (!err)
			err = set_rules(&sc[i], 1, &open, 1);
		if (!err)
			err = fill_table(&sc[i], 1, 0, 6);
		if (err) {
			fprintf(stderr, "progcost: cannot set up %lu keys: %s\n", n, strerror(-err));
			err = 1;
			goto out;
		}
		/* The map's own accounting, per way: the key weir can track per way. */
		bytes_state[i] = (double)memlock(sc[i].state) / ((double)sc[i].sets * WEIR_WAYS);
		/* The kernel's hash maps holding weir's key and bucket, n of them. */
		bytes_lru[i] = kernel_map_bytes(BPF_MAP_TYPE_LRU_HASH, n);
		bytes_hash[i] = kernel_map_bytes(BPF_MAP_TYPE_HASH, n);
	}

	err = 1;
	/* Alternate everything within each round so that noise hits all alike. */
	for (i = 0; i < rounds; i++) {
		build_udp4(pkt, SRC4, BENCH_PORT);
		triv[i] = run_repeat(tfd, PKT4_LEN, XDP_DROP);
		for (p = 0; p < NPRIM; p++)
			prim[p][i] = run_repeat(prim_fd[p], PKT4_LEN, XDP_DROP);
		for (p = 0; p < NPATH; p++)
			for (k = 0; k < NCLK; k++)
				res[k][p][i] = run_path(&clk[k], p, i);
		two[0][i] = two_ns[0];
		two[1][i] = two_ns[1];
		triv1[i] = run_distinct4(tfd, 0xc6130000, distinct, XDP_DROP);
		cold4[i] = run_random(cold.prog, 4, cold.keys, cold.nkeys, distinct, &rng, XDP_PASS);
		triv6[i] = run_random(tfd, 6, NULL, 1024, distinct, &rng, XDP_DROP);
		for (k = 0; k < (int)nscale; k++)
			scale[k][i] = run_random(sc[k].prog, 6, sc[k].keys, sc[k].nkeys, distinct,
						 &rng, XDP_PASS);
	}
	/* A failed run, or a packet that got another verdict than its path's, spoils the table. */
	for (i = 0; i < rounds; i++) {
		const char *bad = NULL;

		if (triv[i] < 0 || triv1[i] < 0 || triv6[i] < 0)
			bad = "the trivial program";
		else if (cold4[i] < 0)
			bad = "existing key from a full table";
		else if (two_inst && (two[0][i] < 0 || two[1][i] < 0))
			bad = "two CPUs at once";
		for (p = 0; p < NPRIM && !bad; p++)
			if (prim[p][i] < 0)
				bad = prim_names[p];
		for (p = 0; p < NPATH && !bad; p++)
			for (k = 0; k < NCLK && !bad; k++)
				if (res[k][p][i] < 0)
					bad = paths[p].key;
		for (k = 0; k < (int)nscale && !bad; k++)
			if (scale[k][i] < 0)
				bad = "tracked keys";
		if (bad) {
			fprintf(stderr, "progcost: a test run failed or got an unexpected verdict "
					"(%s, round %lu)\n", bad, i + 1);
			goto out;
		}
	}
	/*
	 * The data path passes a packet whose per-source lookup faults (fail
	 * open), which would make its figures those of the fault: none allowed.
	 */
	for (k = 0; k <= NCLK + (int)nscale; k++) {
		struct inst *in = k < NCLK ? &clk[k] : k == NCLK ? &cold : &sc[k - NCLK - 1];
		long long faults = global_count(in, WEIR_G_FAULT);

		if (faults != 0) {
			fprintf(stderr, "progcost: the data path counted %lld internal faults "
					"(wr_config's state_sets or state_seed?)\n", faults);
			goto out;
		}
	}
	for (k = 0; k < (int)nscale; k++)
		present[k] = present_share(&sc[k], 1, 6);
	/* Every pick an existing key: a miss would have measured an insert. */
	if (present_share(&cold, cold.uid - 1, 4) < 1) {
		fprintf(stderr, "progcost: keys of the cold existing-key table went missing\n");
		goto out;
	}
	/*
	 * Before the medians sort the rounds: each path's cost in each round
	 * over the trivial program of that round, and each aim's ratio of two
	 * paths in the same round, so a slow round slows both sides.
	 */
	for (p = 0; p < NPATH; p++)
		for (i = 0; i < rounds; i++)
			over[p][i] = res[0][p][i] - (paths[p].distinct ? triv1[i] : triv[i]);
	for (i = 0; i < rounds; i++) {
		over[P_COLD][i] = cold4[i] - triv1[i];
		over[P_SPOOF2][i] = two[0][i] - triv[i];
		over[P_DROP2][i] = two[1][i] - triv[i];
	}
	for (a = 0; a < NAIM; a++)
		for (i = 0; i < rounds; i++)
			aim[a][i] = over[aims[a].den][i] > 0 ? over[aims[a].num][i] /
								over[aims[a].den][i] : 0;
	for (i = 0; i < rounds; i++)
		ts_extra[i] = over[P_TS_HIT][i] - over[P_TS_BASE][i];
	m_ts_extra = median(ts_extra, rounds);
	for (p = 0; p < NROWS; p++) {
		spread[p][1] = median(over[p], rounds);
		spread[p][0] = over[p][0];
		spread[p][2] = over[p][rounds - 1];
	}
	for (a = 0; a < NAIM; a++)
		m_aim[a] = median(aim[a], rounds);
	m_triv = median(triv, rounds);
	m_triv1 = median(triv1, rounds);
	m_triv6 = median(triv6, rounds);
	for (p = 0; p < NPRIM; p++)
		m_prim[p] = median(prim[p], rounds);
	for (k = 0; k < NCLK; k++)
		for (p = 0; p < NPATH; p++)
			med[k][p] = median(res[k][p], rounds);
	for (k = 0; k < (int)nscale; k++)
		m_scale[k] = median(scale[k], rounds);

	printf("| path | auto ns | over trivial | precise ns | over trivial | coarse ns | "
	       "over trivial |\n|---|---:|---:|---:|---:|---:|---:|\n");
	printf("| trivial XDP_DROP (repeat runs) | %.0f | | %.0f | | %.0f | |\n", m_triv, m_triv,
	       m_triv);
	for (p = 0; p < NPATH; p++) {
		double f = paths[p].distinct ? m_triv1 : m_triv;

		if (p == P_HIT1)
			printf("| trivial XDP_DROP (one run per packet) | %.0f | | %.0f | | %.0f | |\n",
			       m_triv1, m_triv1, m_triv1);
		printf("| %s |", paths[p].name);
		for (k = 0; k < NCLK; k++)
			printf(" %.0f | %+.0f |", med[k][p], med[k][p] - f);
		printf("\n");
	}
	printf("\nMedian of %lu rounds: repeat runs of %lu packets; one-run-per-packet rows over "
	       "%lu packets, next to the trivial program run the same way (the syscall's share "
	       "is in both, and each run starts with colder caches than a repeat run: compare "
	       "the new key with the existing key measured that way). The full table has %d "
	       "ways (%d sets of %d), every one holding a bucket that is still limiting before "
	       "the first round, and each new key's bucket is left limiting too, so every new "
	       "key evicts a limiting bucket.\n\n", rounds, repeat, distinct, FULL_KEYS,
	       FULL_KEYS / WEIR_WAYS, WEIR_WAYS);

	printf("| path (clock auto) | over trivial: min | median | max |\n|---|---:|---:|---:|\n");
	for (p = 0; p < NROWS; p++)
		if (p < P_SPOOF2 || two_inst)
			printf("| %s | %+.0f | %+.0f | %+.0f |\n", row_name(p), spread[p][0],
			       spread[p][1], spread[p][2]);
	printf("\nThe spread of each path's cost over its trivial program across the %lu "
	       "rounds (clock auto). The existing key picked at random is measured as the new key "
	       "is: each run from another IPv4 source, picked at random among the %lu keys of a "
	       "table of %d ways, so its set is as far from the cache as a new key's; the new "
	       "key's cost less this one is what the insert itself costs.%s\n\n", rounds,
	       cold.nkeys, FULL_KEYS,
	       two_inst ? " The two-CPU rows run the path's packet on CPUs 0 and 1 at once, "
			  "each repeat times, and give the mean of the two CPUs' ns per packet: "
			  "a bucket that both refuse would show what writing it on every "
			  "packet costs when its cache line moves between them." :
			  " With one CPU online there are no two-CPU rows.");
	printf("| ratio of two paths' cost over trivial, same rounds (clock auto) | median | "
	       "aim |\n|---|---:|---:|\n");
	for (a = 0; a < NAIM; a++)
		if (!two_inst && aims[a].num >= P_SPOOF2)
			continue;
		else if (aims[a].max > 0)
			printf("| %s | %.2f x | <= %.2f x |\n", aims[a].name, m_aim[a], aims[a].max);
		else
			printf("| %s | %.2f x | (shown, no aim) |\n", aims[a].name, m_aim[a]);
	printf("\n");
	printf("tcp-state on an established flow (a cache hit) costs %+.0f ns over the same rule "
	       "without it (clock auto, median of the rounds' differences; aim <= +%d ns).\n\n",
	       m_ts_extra, TS_HIT_AIM_NS);

	printf("| piece (trivial program plus ...) | ns | over trivial |\n|---|---:|---:|\n");
	printf("| nothing (trivial XDP_DROP) | %.0f | |\n", m_triv);
	for (p = 0; p < NPRIM; p++)
		printf("| %s | %.0f | %+.0f |\n", prim_names[p], m_prim[p], m_prim[p] - m_triv);
	printf("\n");

	printf("| tracked keys | ns per packet | over trivial | keys still present | "
	       "bytes per key (weir table) | kernel LRU hash | kernel hash |\n"
	       "|---:|---:|---:|---:|---:|---:|---:|\n");
	for (k = 0; k < (int)nscale; k++)
		printf("| %lu | %.0f | %+.0f | %.1f%% | %.1f | %.1f | %.1f |\n", scale_keys[k],
		       m_scale[k], m_scale[k] - m_triv6, 100 * present[k], bytes_state[k],
		       bytes_lru[k], bytes_hash[k]);
	printf("\nOne run per packet under `clock auto`, each from an IPv6 /64 picked at random "
	       "among the tracked keys (all existing: the table is filled with one key per way, "
	       "each in the set the data path looks in), %lu per round; trivial program run the "
	       "same way: %.0f ns. Keys still present: a sample of them found in their set after "
	       "the rounds (a key the data path missed would have evicted another). Bytes per "
	       "key: memlock of the table (fdinfo) / its ways (sets x %d); a way is %zu bytes "
	       "(key %zu, bucket %zu, window end %zu), the rest is the array's own. The kernel "
	       "maps: memlock / max_entries of a BPF hash map (LRU and plain) of as many "
	       "entries, with weir's key (%zu bytes) and bucket (%zu).\n",
	       distinct, m_triv6, WEIR_WAYS, sizeof(struct weir_way),
	       sizeof(struct weir_key), sizeof(struct weir_state), sizeof(__u64),
	       sizeof(struct weir_key), sizeof(struct weir_state));

	if (json_path) {
		js = fopen(json_path, "w");
		if (!js) {
			fprintf(stderr, "progcost: cannot write %s: %s\n", json_path,
				strerror(errno));
			goto out;
		}
		fprintf(js, "{\"rounds\": %lu, \"repeat\": %lu, \"distinct\": %lu, "
			    "\"trivial\": %.1f, \"trivial_one_run\": %.1f, \"trivial_one_run6\": %.1f,\n"
			    " \"paths\": {", rounds, repeat, distinct, m_triv, m_triv1, m_triv6);
		for (p = 0; p < NPATH; p++) {
			fprintf(js, "%s\"%s\": {", p ? ", " : "", paths[p].key);
			for (k = 0; k < NCLK; k++)
				fprintf(js, "\"%s\": %.1f, ", clocks[k].key, med[k][p]);
			fprintf(js, "\"floor\": %.1f}", paths[p].distinct ? m_triv1 : m_triv);
		}
		fprintf(js, "},\n \"spread\": {");
		for (p = 0; p < NROWS; p++)
			if (p < P_SPOOF2 || two_inst)
				fprintf(js, "%s\"%s\": [%.1f, %.1f, %.1f]", p ? ", " : "",
					p == P_COLD ? "existing_cold" :
					p >= P_SPOOF2 ? two_cpu_keys[p - P_SPOOF2] : paths[p].key,
					spread[p][0], spread[p][1], spread[p][2]);
		fprintf(js, "},\n \"aims\": [");
		/* Only the aims: the ratios shown for comparison are the markdown's. */
		for (a = 0, c = 0; a < NAIM; a++)
			if (aims[a].max > 0 && (two_inst || aims[a].num < P_SPOOF2))
				fprintf(js, "%s{\"name\": \"%s\", \"ratio\": %.3f, \"max\": %.2f}",
					c++ ? ", " : "", aims[a].name, m_aim[a], aims[a].max);
		fprintf(js, "],\n \"tcp_state_hit_extra_ns\": %.1f, \"tcp_state_hit_aim_ns\": %d,",
			m_ts_extra, TS_HIT_AIM_NS);
		fprintf(js, "\n \"pieces\": {");
		for (p = 0; p < NPRIM; p++)
			fprintf(js, "%s\"%s\": %.1f", p ? ", " : "", prim_names[p], m_prim[p]);
		fprintf(js, "},\n \"keys\": [");
		for (k = 0; k < (int)nscale; k++)
			fprintf(js, "%s{\"keys\": %lu, \"sets\": %u, \"ns\": %.1f, "
				    "\"present\": %.4f, \"bytes_per_key\": %.1f, \"lru_hash\": %.1f, "
				    "\"hash\": %.1f}", k ? ", " : "", scale_keys[k], sc[k].sets,
				m_scale[k], present[k], bytes_state[k], bytes_lru[k], bytes_hash[k]);
		/* way_bytes: weir's per key; payload_bytes: the kernel maps' key and value. */
		fprintf(js, "],\n \"ways\": %d, \"full_table_keys\": %d, \"way_bytes\": %zu, "
			    "\"payload_bytes\": %zu}\n", WEIR_WAYS, FULL_KEYS,
			sizeof(struct weir_way),
			sizeof(struct weir_key) + sizeof(struct weir_state));
		fclose(js);
	}
	err = 0;
out:
	for (k = 0; k < NCLK; k++) {
		weir__destroy(clk[k].skel);
		free(clk[k].keys);
	}
	for (i = 0; i < NSCALE; i++) {
		weir__destroy(sc[i].skel);
		free(sc[i].keys);
	}
	weir__destroy(cold.skel);
	free(cold.keys);
	prims__destroy(prims);
	trivial__destroy(triv_skel);
	if (lfd >= 0)
		close(lfd);
	for (i = 0; i < 4; i++)
		if (ts_fd[i] >= 0)
			close(ts_fd[i]);
	return err;
}
