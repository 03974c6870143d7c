/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * weir: what the BPF data path and the userspace controller share.
 *
 * Only fixed-width __u8..__u64 types, explicit padding and size asserts:
 * these structs are map keys and values, read and written from both sides.
 */
#ifndef WEIR_H
#define WEIR_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Rules in one rule set (a power of two: indices are masked with it). */
#define WEIR_MAX_RULES	256
/*
 * Rules that may meet one packet: the most one cell of the rule index
 * (struct weir_ruleset.cand) holds. The data path walks at most this many
 * a packet, in 64-bit masks.
 */
#define WEIR_MAX_CAND		64
/* Limits carried by one rule. */
#define WEIR_MAX_LIMITS	4
/* Rule names, NUL included. */
#define WEIR_NAME_LEN		32
/*
 * Counter slots. A reload may replace every rule while the old set is still
 * live, so there are twice as many slots as rules.
 */
#define WEIR_STATS_SLOTS	(2 * WEIR_MAX_RULES)
/* Rule-wide ("per all") buckets, doubled for the same reason. */
#define WEIR_AGG_SLOTS	(2 * WEIR_MAX_RULES * WEIR_MAX_LIMITS)
/* Priority classes: 0 is critical (never shed) .. 3 least important. */
#define WEIR_MAX_CLASS	3
/* Connection-count keys (wr_conns), across all connection limits. */
#define WEIR_CONN_MAX		65536
/* Prefixes each deny/allow list holds per family. */
#define WEIR_LIST_MAX		65536
/* Default number of per-source keys tracked (wr_state ways). */
#define WEIR_DEFAULT_KEYS	1048576
/* Ways per set of wr_state: a key lives in one of the WEIR_WAYS of its set. */
#define WEIR_WAYS		4
/* Fractional bits of the GCRA emission interval. */
#define WEIR_FP_SHIFT		16

/* Which source-address bits identify a bucket. */
enum weir_key_kind {
	WEIR_KEY_SRC = 0,	/* source address masked to plen4 / plen6 */
	WEIR_KEY_ALL = 1,	/* one bucket for the whole rule */
	WEIR_KEY_DST = 2,	/* destination address masked to plen4 / plen6 */
	/*
	 * Source address and source port (0 for a packet without ports): the
	 * whole IPv4 address, or the IPv6 /64 (plen6 64), with the port in
	 * the next key word (wr_make_key_kind).
	 */
	WEIR_KEY_FLOW = 3,
};

/* How a limit meters (weir_limit.algo). */
enum weir_algo {
	WEIR_ALGO_GCRA = 0,	/* token bucket as GCRA: exact, bursts up to `burst` */
	WEIR_ALGO_FIXED = 1,	/* fixed window: cheap; up to 2x at window edges */
	WEIR_ALGO_SLIDING = 2, /* sliding window counter: previous window weighted */
	WEIR_ALGO_CONNS = 3,	/* concurrent established TCP connections (wr_conns) */
};

/* What one packet costs. */
enum weir_cost {
	WEIR_COST_PKT = 0,	/* 1 per packet: rate in packets/s */
	WEIR_COST_BYTE = 1,	/* L3 length: rate in bytes/s */
};

enum weir_action {
	WEIR_ACT_DROP = 0,
	WEIR_ACT_DRYRUN = 1,	/* pass, but count what would have been dropped */
	/*
	 * Enforce like drop, but a pure SYN the limits refuse is answered
	 * from XDP with a SYN-ACK carrying a SYN cookie (weir_rule.cookie).
	 */
	WEIR_ACT_COOKIE = 2,
	/* No limit: every packet the rule matches is dropped (weir auto's fingerprints). */
	WEIR_ACT_BLOCK = 3,
};

/* weir_rule.cookie: which SYNs of an action cookie rule are answered. */
enum weir_cookie_mode {
	WEIR_COOKIE_OVER = 0,		/* those the limits refuse (the default) */
	WEIR_COOKIE_ALWAYS = 1,	/* every one; the limits see none */
};

/* Which fields of a rule take part in matching (weir_rule.match). */
enum weir_match_bits {
	WEIR_M_FAMILY = 1 << 0,
	WEIR_M_PROTO = 1 << 1,
	WEIR_M_DPORT = 1 << 2,
	WEIR_M_SRC = 1 << 3,
	WEIR_M_TCPFLAGS = 1 << 4,
	WEIR_M_ICMPTYPE = 1 << 5,
	/*
	 * The source is in source set `srcset` (`src feed:NAME`, `src
	 * country:CC,..`, `src asn:N,..`): a longest-prefix lookup in the
	 * slot's inner trie (bpf/match.h, wr_srcset_match), not in
	 * wr_rule_match_base, which treats the bit as matching (a superset).
	 */
	WEIR_M_SRCSET = 1 << 6,
};

/*
 * Source sets: slots of wr_srcset4/wr_srcset6 (bpf/maps.h), each an inner
 * LPM trie of the set's prefixes. A rule set names at most half of them
 * (WEIR_SET_SRCSETS), so a commit fills the slots of its new sets while
 * the live set's stay untouched, as rule counter slots do.
 */
#define WEIR_MAX_SRCSETS	16
#define WEIR_SET_SRCSETS	(WEIR_MAX_SRCSETS / 2)
/* weir_rule.srcset: the slot in the low bits; WEIR_SRCSET_NOT matches sources outside it. */
#define WEIR_SRCSET_SLOT	(WEIR_MAX_SRCSETS - 1)
#define WEIR_SRCSET_NOT		0x80
/* A source set as the rule gave it ("country:DE,NL"), its NUL included. */
#define WEIR_SRCSET_LEN		128

/*
 * The further fields a rule may match on (weir_rule.xmatch): what a flood's
 * packets have in common when their sources do not. wr_rule_match tests
 * none of them when xmatch is 0, so a rule without them costs one test.
 */
enum weir_xmatch_bits {
	WEIR_X_SPORT = 1 << 0,		/* sport_lo .. sport_hi (TCP, UDP) */
	WEIR_X_DST = 1 << 1,		/* any of dst_net/dst_mask */
	WEIR_X_LEN = 1 << 2,		/* IP length len_lo .. len_hi */
	WEIR_X_TTL = 1 << 3,		/* IPv4 TTL or IPv6 hop limit ttl_lo .. ttl_hi */
	WEIR_X_FRAG = 1 << 4,		/* enum weir_frag */
	WEIR_X_DSCP = 1 << 5,
	WEIR_X_PAYLOAD = 1 << 6,	/* every term of pay[] */
	/*
	 * Arrived on interface ifindex: XDP's ctx->ingress_ifindex, TC's
	 * skb->ifindex (the device whose ingress hook runs the program).
	 */
	WEIR_X_IFACE = 1 << 7,
};
/* The fields the data path reads from the packet for only the sets that have them. */
#define WEIR_X_READS	(WEIR_X_DST | WEIR_X_DSCP | WEIR_X_TTL | WEIR_X_PAYLOAD)

/* weir_rule.frag: which packets `frag` matches. */
enum weir_frag {
	WEIR_FRAG_NONE = 0,	/* not a fragment */
	WEIR_FRAG_FIRST = 1,	/* a first fragment (offset 0, more fragments) */
	WEIR_FRAG_LATER = 2,	/* a fragment at a non-zero offset: no L4 header */
	WEIR_FRAG_ANY = 3,	/* any fragment, first or later */
};

/* An interface name with its NUL: the kernel's IFNAMSIZ. */
#define WEIR_IFNAME_LEN	16

/* Destination prefixes a rule may list (`dst`): a host's few addresses. */
#define WEIR_MAX_DST	4
/* Payload terms a rule may have (`payload`). */
#define WEIR_MAX_PAY	4
/* The furthest byte offset of a payload term into the L4 payload: an Ethernet MTU. */
#define WEIR_PAY_MAX_OFF	1500

/*
 * One payload term: the 32-bit word at byte off of the L4 payload (after
 * the UDP header, or the TCP header with its options), masked, equals
 * value. mask and value in network byte order, value already masked.
 */
struct weir_pay_term {
	__u32 mask;
	__u32 value;
	__u16 off;		/* 0 .. WEIR_PAY_MAX_OFF */
	__u16 pad;
};
_Static_assert(sizeof(struct weir_pay_term) == 12, "weir_pay_term layout");

/*
 * weir_rule.preset: a rule that is a named attack pattern rather than
 * fields. WEIR_PRESET_REFLECT (`preset reflection`, include/weir_reflect.h,
 * docs/reflection.md): UDP from a known amplifier's source port that
 * answers no flow this host sent (wr_reflect); the controller sets proto
 * UDP with it.
 */
enum weir_preset {
	WEIR_PRESET_NONE = 0,
	WEIR_PRESET_REFLECT = 1,
};

/* TCP flag bits as they sit in byte 13 of the TCP header. */
#define WEIR_TCP_FIN	0x01
#define WEIR_TCP_SYN	0x02
#define WEIR_TCP_RST	0x04
#define WEIR_TCP_PSH	0x08
#define WEIR_TCP_ACK	0x10
#define WEIR_TCP_URG	0x20
#define WEIR_TCP_ECE	0x40
#define WEIR_TCP_CWR	0x80

/* One limit of a rule: a GCRA meter. */
struct weir_limit {
	__u64 interval_fp;	/* ns per unit of cost, << WEIR_FP_SHIFT */
	__u64 tolerance;	/* ns the TAT may run ahead of now (the burst) */
	__u64 rate;		/* as configured: units of cost per period (conns: the cap) */
	__u64 burst;		/* as configured, units of cost */
	__u16 agg_slot;		/* index into wr_agg for WEIR_KEY_ALL */
	__u8 key;		/* enum weir_key_kind */
	__u8 cost;		/* enum weir_cost */
	__u8 plen4;		/* IPv4 key prefix length, 0..32 */
	__u8 plen6;		/* IPv6 key prefix length, 0..128 */
	__u8 algo;		/* enum weir_algo */
	/*
	 * 0: this host's limit. Else a fleet-wide limit (a token bucket or
	 * a window), kept in step across hosts by the daemon (user/fleet/),
	 * and each packet
	 * costs this many times its cost: 1 normally, the number of live
	 * hosts under the "safe" fallback (each host then enforces its share).
	 */
	__u8 fleet;
	__u32 mask4;		/* network byte order mask of plen4 */
	__u32 mask6[4];		/* network byte order mask of plen6 */
	__u32 period_ms;	/* `rate` is per this long (1000 for per second); the window */
};
_Static_assert(sizeof(struct weir_limit) == 64, "weir_limit layout");

struct weir_rule {
	__u32 uid;		/* bucket identity; new whenever the limits change */
	__u16 slot;		/* counter slot in wr_rule_stats, stable per name */
	__u8 nr_limits;		/* 1..WEIR_MAX_LIMITS */
	__u8 action;		/* enum weir_action */
	__u8 match;		/* enum weir_match_bits */
	__u8 family;		/* 4 or 6, with WEIR_M_FAMILY */
	__u8 proto;		/* IPPROTO_*, with WEIR_M_PROTO */
	__u8 tcp_mask;		/* (flags & tcp_mask) == tcp_value */
	__u8 tcp_value;
	__u8 icmp_type;		/* with WEIR_M_ICMPTYPE */
	__u8 src_plen;		/* prefix length of src_net */
	__u8 class;		/* priority class 0 (critical) .. 3 */
	__u16 dport_lo;		/* host byte order, inclusive */
	__u16 dport_hi;
	__u8 flags;		/* enum weir_rule_flags, set by the controller */
	__u8 cookie;		/* enum weir_cookie_mode, with WEIR_ACT_COOKIE */
	/*
	 * Verified sources (wr_verified) matching this rule are shed as this
	 * class minus 1 when that is more critical than the rule's; 0: no
	 * such sparing.
	 */
	__u8 verified_class;
	__u8 preset;		/* enum weir_preset: WEIR_PRESET_NONE, or what the rule is */
	__u32 src_net[4];	/* network byte order, already masked */
	__u32 src_mask[4];	/* network byte order */
	struct weir_limit limits[WEIR_MAX_LIMITS];
	/*
	 * SYN-ACK budgets of WEIR_ACT_COOKIE (token buckets, one packet a
	 * unit): rule-wide in wr_cookie_agg[slot], and per destination (the
	 * SYN's source) in wr_cookie_dst. A SYN over either is dropped.
	 */
	__u64 ck_interval_fp;
	__u64 ck_tolerance;
	__u64 ckd_interval_fp;
	__u64 ckd_tolerance;
	__u32 ck_rate;		/* SYN-ACKs per second for the rule, as configured */
	__u32 ckd_rate;		/* per destination, per second */
	/* The further match fields, each with its bit in xmatch (enum weir_xmatch_bits). */
	__u32 len_lo;		/* IP length, inclusive */
	__u32 len_hi;
	__u16 sport_lo;		/* host byte order, inclusive */
	__u16 sport_hi;
	__u8 xmatch;		/* enum weir_xmatch_bits */
	__u8 ttl_lo;		/* inclusive */
	__u8 ttl_hi;
	__u8 frag;		/* enum weir_frag */
	__u8 dscp;		/* 0 .. 63 */
	__u8 nr_dst;		/* 1 .. WEIR_MAX_DST with WEIR_X_DST */
	__u8 nr_pay;		/* 1 .. WEIR_MAX_PAY with WEIR_X_PAYLOAD */
	__u8 srcset;		/* with WEIR_M_SRCSET: slot | WEIR_SRCSET_NOT */
	__u8 dst_family[WEIR_MAX_DST];	/* 4 or 6 */
	__u32 dst_net[WEIR_MAX_DST][4];	/* network byte order, already masked; IPv4 in [0] */
	__u32 dst_mask[WEIR_MAX_DST][4];
	__u8 dst_plen[WEIR_MAX_DST];	/* for printing */
	struct weir_pay_term pay[WEIR_MAX_PAY];
	/*
	 * With WEIR_X_IFACE: the interface by name (`iface DEV`, as given)
	 * and its ifindex, which the writer resolves from the name each time
	 * it commits a set (wr_ruleset_commit): 0 if the interface is gone,
	 * and no packet arrives on ifindex 0.
	 */
	__u32 ifindex;
	char ifname[WEIR_IFNAME_LEN];
	__u32 pad3;
};
_Static_assert(sizeof(struct weir_rule) == 584, "weir_rule layout");

/* weir_rule.flags: derived from the limits by the controller. */
enum weir_rule_flags {
	/*
	 * A limit needs the precise clock: a token bucket whose burst spans
	 * under WEIR_COARSE_TICKS clock ticks, or a window under
	 * WEIR_COARSE_WINDOW_TICKS. Under `clock auto` a packet that matches
	 * such a rule reads bpf_ktime_get_ns; every other packet reads the
	 * jiffies clock, which costs no call.
	 */
	WEIR_RF_PRECISE = 1 << 0,
	/*
	 * A preset rule given no limit: its one limit is the preset's default
	 * (admits none: user/lib/reflect.c), which `rule list` prints as no
	 * limit. Set by the rule's reader; never read by the data path.
	 */
	WEIR_RF_PRESET_DEFAULT = 1 << 1,
	/*
	 * `tcp-state on`: a TCP segment other than a SYN that matches the
	 * rule passes only if it belongs to a connection of this host
	 * (bpf/tcpstate.h). With WEIR_RF_TCP_AUTO (`tcp-state auto`), only
	 * while the daemon has switched the check on (weir_config.tcp_state_on).
	 */
	WEIR_RF_TCP_STATE = 1 << 2,
	WEIR_RF_TCP_AUTO = 1 << 3,
	/*
	 * `spare verified`: a packet whose source completed a TCP handshake
	 * with this host within the verified TTL (wr_verified) does not match
	 * the rule, and goes on to the rules after it. Every rule of `weir
	 * auto` carries it. Costs a lookup only for packets the rule matches
	 * otherwise.
	 */
	WEIR_RF_SPARE_VERIFIED = 1 << 4,
};
/* A GCRA tolerance of at least this many ticks is exact on a tick clock. */
#define WEIR_COARSE_TICKS		2
/* A window of at least this many ticks moves its edges by at most 1%. */
#define WEIR_COARSE_WINDOW_TICKS	100

/*
 * tcp-state's cache of verified flows (bpf/tcpstate.h): per CPU,
 * direct-mapped, WEIR_TCP_SEEN_SLOTS flows a CPU; a flow found
 * established counts as verified this long before it is asked again.
 */
#define WEIR_TCP_SEEN_SHIFT	12
#define WEIR_TCP_SEEN_SLOTS	(1U << WEIR_TCP_SEEN_SHIFT)
#define WEIR_TCP_SEEN_TTL_NS	2000000000ULL
struct weir_tcp_seen {
	__u32 saddr[4];		/* network byte order; IPv4 in [0], rest 0 */
	__u32 daddr[4];
	__u32 ports;		/* source port | destination port << 16, as on the wire */
	__u32 family;		/* 4 or 6; 0: an empty slot */
	__u64 until;		/* data-path clock */
};
_Static_assert(sizeof(struct weir_tcp_seen) == 48, "weir_tcp_seen layout");

/* Protocol classes of the rule index (struct weir_ruleset.cand). */
enum weir_idx_proto {
	WEIR_IDX_TCP = 0,
	WEIR_IDX_UDP = 1,
	WEIR_IDX_OTHER = 2,	/* ICMP, ICMPv6 and every other protocol */
	WEIR_IDX_PROTOS,
};
/* Destination-port buckets of the rule index: the top 8 bits of a 32-bit hash. */
#define WEIR_PORT_BUCKETS	256
/* The index's bucket for packets without ports (ICMP, non-first fragments, ...). */
#define WEIR_IDX_NOPORT	WEIR_PORT_BUCKETS
/*
 * Cells of the rule index: a protocol class's buckets, then the next
 * class's (771 in all), rounded up to a power of two so that the data path
 * bounds a cell with a mask, not a branch the verifier would follow twice.
 */
#define WEIR_IDX_CELLS	1024
_Static_assert(WEIR_IDX_PROTOS * (WEIR_PORT_BUCKETS + 1) <= WEIR_IDX_CELLS,
	       "the rule index's cells");
_Static_assert(WEIR_MAX_CAND == 64, "a cell's rules are walked in 64-bit masks");
_Static_assert(WEIR_MAX_RULES <= 256, "a cell names its rules in bytes");

/*
 * A whole rule set. The data path reads wr_rulesets[config.active]; the
 * controller writes the other entry and then flips config.active, so a
 * packet is only ever judged by one complete set.
 */
/*
 * A limit's penalty box (`ban DUR [after N] [max DUR]`): a source whose
 * bucket of the limit refuses `after` packets within the limit's period
 * (at least a second) goes on the deny list for ban_s, doubled on each
 * repeat within a day, up to max_s. Kept and enforced by the daemon
 * (user/daemon/bans.c); the data path never reads it.
 */
struct weir_ban {
	__u32 ban_s;		/* 0: no penalty box */
	__u32 max_s;		/* the longest a repeat gets; ban_s when not given */
	__u32 after;		/* refusals that ban, 1 when not given */
	__u32 pad;
};
_Static_assert(sizeof(struct weir_ban) == 16, "weir_ban layout");

struct weir_ruleset {
	__u32 nr_rules;
	__u32 gen;		/* bumped on every commit */
	__u32 cookie_rules;	/* rules with action cookie: ACKs are checked for cookies */
	/*
	 * cand and cand_rule hold the rule index (wr_ruleset_index); 0: no
	 * index, and no rule is a candidate (every writer builds one).
	 */
	__u32 indexed;
	/*
	 * Rules with dst, dscp, ttl or payload terms (WEIR_X_READS;
	 * wr_ruleset_index counts them): 0 spares every packet the reads of
	 * them (bpf/match.h).
	 */
	__u32 x_rules;
	/*
	 * Rules with preset reflection: the TC egress program records the
	 * host's outgoing UDP flows only while the live set has one.
	 */
	__u32 reflect_rules;
	struct weir_rule rules[WEIR_MAX_RULES];
	/*
	 * The rule index, written with the rules by wr_ruleset_index. A cell
	 * is a protocol class (enum weir_idx_proto) and a bucket of
	 * destination ports (wr_port_bucket; WEIR_IDX_NOPORT: a packet
	 * without ports), cell = class * (WEIR_PORT_BUCKETS + 1) + bucket.
	 * cand_rule[cell] lists, lowest first, the rules that may match a
	 * packet of that cell, and bit k of cand[cell] is set for each entry k
	 * of the list: the data path's masks (which rules matched, which are
	 * being evaluated) are over these positions, not over rule indices. A
	 * superset: the data path still matches each candidate in full, and
	 * only those, so the cost of matching follows the rules that may
	 * apply, not the number of rules.
	 */
	__u64 cand[WEIR_IDX_CELLS];
	__u8 cand_rule[WEIR_IDX_CELLS][WEIR_MAX_CAND];
	/*
	 * Bit c: every candidate of cell c may be cached (wr_rule_cacheable),
	 * so a refusal of a packet of that cell holds for every packet alike
	 * until its bucket admits again (bpf/first.h). Written by
	 * wr_ruleset_index.
	 */
	__u64 cache_cells[WEIR_IDX_CELLS / 64];
	char names[WEIR_MAX_RULES][WEIR_NAME_LEN];	/* read by userspace only */
	struct weir_ban bans[WEIR_MAX_RULES][WEIR_MAX_LIMITS];	/* read by userspace only */
	/*
	 * Each source set slot's set as the rules gave it ("feed:NAME",
	 * "country:DE,NL", "asn:64496"; no "!"), "" for a slot the set does
	 * not use. Read by userspace only: the printer, and the commit that
	 * places a new set's source sets (user/lib/srcset.c).
	 */
	char srcsets[WEIR_MAX_SRCSETS][WEIR_SRCSET_LEN];
};

/* Global switches, wr_config[0]. Written by the controller. */
struct weir_config {
	__u32 active;		/* which wr_rulesets entry is live: 0 or 1 */
	__u32 disabled;		/* kill switch: pass everything, count would-drops */
	__u32 fail_closed;	/* drop instead of pass on internal faults */
	__u32 malformed_pass;	/* pass malformed IP instead of dropping it */
	__u32 lists;		/* enum weir_list_bits: which LPM tries hold entries */
	__u32 next_uid;		/* next rule uid to hand out, never reused */
	/*
	 * The network namespace whose TCP connections connection limits
	 * count (cgroup programs see every namespace); 0: all.
	 */
	__u64 conn_netns;
	/*
	 * wr_state: the key of its set hash (random, set once when the maps
	 * are created) and its number of sets. Never changed while it holds
	 * state: every bucket would move.
	 */
	__u64 state_seed;
	__u32 state_sets;
	/* ns per jiffy; 0 until the loader measured clock_off. */
	__u32 clock_tick;
	/*
	 * The jiffies clock: jiffies x tick + clock_off is CLOCK_MONOTONIC
	 * rounded down to a tick, so the data path's clocks (and userspace's)
	 * agree within one tick whichever a packet reads.
	 */
	__u64 clock_off;
	/*
	 * SYN cookies: what the kernel's cookie check accepts back
	 * (enum weir_cookie_flags, include/weir_cookie.h), read from its
	 * sysctls by the controller, and the window scale the kernel gives a
	 * cookie connection (what the SYN-ACK must advertise).
	 */
	__u32 cookie_flags;
	__u32 cookie_wscale;
	/* Verified sources stay verified this long after a handshake; 0: not kept. */
	__u64 verified_ttl_ns;
	/*
	 * A `weir capture` runs: the data path looks at wr_capture (its
	 * lease, filters and budget) for every packet it judges. 0: nothing is
	 * looked at or copied. Set and cleared by the capture under the root
	 * lock; cleared by the data path once the capture's lease has run out
	 * (a capture killed by SIGKILL).
	 */
	__u32 capture;
	/*
	 * `tcp-state auto` rules check segments while this is set: switched
	 * by the daemon's out-of-state watch (user/daemon/tcpstate.c).
	 */
	__u32 tcp_state_on;
	/*
	 * Fleet window limits cut their windows on the fleet's clock: Redis's
	 * TIME (ns since the epoch) less CLOCK_MONOTONIC, as this host's fleet
	 * sync measured it, so every host's windows turn together. The data
	 * path adds it modulo the period (wr_limit_wnow). 0: no fleet yet,
	 * windows on this host's clock. Written by the fleet sync under the
	 * root lock.
	 */
	__u64 fleet_win_off;
	/*
	 * The first stage's cache of refused sources (bpf/first.h): a slot
	 * counts only while it carries this generation, which every write of
	 * this config moves on (wr_config_write), and so every rule set
	 * commit, list and feed change and switch: nothing cached under an
	 * earlier rule set or list survives it.
	 */
	__u32 cache_gen;
	/*
	 * enum weir_cache_bits: the live rule set has a cell the cache may
	 * hold refusals of (cache_cells), and the operator has not switched it
	 * off; 0 otherwise.
	 */
	__u32 cache_on;
	/* `set first-stage off` (`first-stage: off`): no refusal is cached. */
	__u32 cache_off;
	__u32 pad;
};
_Static_assert(sizeof(struct weir_config) == 104, "weir_config layout");

enum weir_list_bits {
	WEIR_L_DENY4 = 1 << 0,
	WEIR_L_DENY6 = 1 << 1,
	WEIR_L_ALLOW4 = 1 << 2,
	WEIR_L_ALLOW6 = 1 << 3,
	/*
	 * Some entry carries a time to live: writers purge expired entries.
	 * Userspace only; the data path reads each entry's own expiry.
	 */
	WEIR_L_TTL = 1 << 4,
	/*
	 * Blocklist feeds (user/lib/feeds.c): the feed maps' slot
	 * WEIR_L_FEED_GEN says which generation the data path reads, and
	 * WEIR_L_FEED4/6 whether it holds IPv4/IPv6 entries. A feed refresh
	 * fills the other slot and flips the bit: every feed's entries change
	 * in one write.
	 */
	WEIR_L_FEED4 = 1 << 5,
	WEIR_L_FEED6 = 1 << 6,
	WEIR_L_FEED_GEN = 1 << 7,
};
#define WEIR_L_FEEDS	(WEIR_L_FEED4 | WEIR_L_FEED6 | WEIR_L_FEED_GEN)

/*
 * What a feed does with a source it lists (the feed maps' values, 2-bit
 * block states). The operator's own deny and allow lists come first; where
 * two feeds list the same prefix with different actions the stricter one
 * wins: deny, then limit-class 3 .. 0, then allow (user/lib/feeds.c).
 */
enum weir_feed_action {
	WEIR_FA_NONE = 0,
	WEIR_FA_DENY = 1,
	WEIR_FA_ALLOW = 2,
	/* wr_feed_blk only: the /24 holds longer prefixes, see wr_feed_host */
	WEIR_FA_SPLIT = 3,
	/*
	 * wr_feed_host and wr_feed6 values only (where no SPLIT is): limit-class,
	 * the source shed as the class in bits WEIR_FA_CLASS_SHIFT.. (0..3)
	 * instead of its rule's. A /24 a class feed lists is a split /24: the
	 * 2-bit /24 state has no room for a class.
	 */
	WEIR_FA_CLASS = 3,
};
/* Where a WEIR_FA_CLASS value keeps its class, and the bits of a whole value. */
#define WEIR_FA_CLASS_SHIFT	2
#define WEIR_FA_MASK		0xf
/* The value of limit-class c (c <= WEIR_MAX_CLASS). */
#define WEIR_FA_CLASS_OF(c)	(WEIR_FA_CLASS | (c) << WEIR_FA_CLASS_SHIFT)
/*
 * A feed only rules' `src feed:NAME` reads (action match): userspace only,
 * above WEIR_FA_MASK, never written to a feed map.
 */
#define WEIR_FA_MATCH		16
/*
 * IPv4 feeds, flattened: a 2-bit state per /24 (weir_feed_action), 32 in
 * each 64-bit word of wr_feed_blk's inner array, 4 MiB in all. A /24
 * split by longer prefixes (WEIR_FA_SPLIT) is looked up in wr_feed_host:
 * first the address itself (key: the address, host byte order), then the
 * /24's own state (key: WEIR_FEED_BLOCK_KEY | the /24's first address).
 */
#define WEIR_FEED_BLOCKS	(1u << 24)
#define WEIR_FEED_WORDS		(WEIR_FEED_BLOCKS / 32)
#define WEIR_FEED_BLOCK_KEY	(1ULL << 32)

/*
 * Keys of the deny and allow LPM tries (wr_deny4/6, wr_allow4/6): the
 * prefix length first, as LPM tries want; addresses in network order.
 */
struct weir_lpm4 {
	__u32 plen;
	__u32 addr;
};

struct weir_lpm6 {
	__u32 plen;
	__u32 addr[4];
};
_Static_assert(sizeof(struct weir_lpm4) == 8 && sizeof(struct weir_lpm6) == 20,
	       "LPM key layout");

/* Who put a deny/allow entry there (weir_list_val.flags). */
enum weir_list_origin {
	WEIR_LV_CONFIG = 1 << 0,	/* the daemon's config lists it: permanent */
	WEIR_LV_RUNTIME = 1 << 1,	/* `deny add` / `allow add` (a person, a ban tool) */
	WEIR_LV_BAN = 1 << 2,		/* with RUNTIME: the daemon's penalty box put it there */
};

/*
 * Value of the deny and allow tries. expires_ns is what the data path
 * reads: 0 = permanent, else the entry counts only while the data path's
 * clock (CLOCK_MONOTONIC, see weir_config.clock_off) is below it; an
 * expired entry is skipped, and the lookup goes on with the prefixes
 * shorter than plen (the entry's own length, which a trie's lookup does not
 * return). rt_expires_ns is the runtime add's own expiry (0 = permanent)
 * while the config also lists the prefix, so that the entry falls back to
 * it when the config stops listing it. Written by the controller only.
 */
struct weir_list_val {
	__u64 expires_ns;
	__u64 rt_expires_ns;
	__u8 plen;
	__u8 flags;		/* enum weir_list_origin */
	/* WEIR_LV_BAN: the rule's counter slot + 1, and its ban count in a day */
	__u16 ban_slot;
	__u8 ban_nth;
	__u8 pad[3];
};
_Static_assert(sizeof(struct weir_list_val) == 24, "list value layout");
/* Expired entries nested in one another that one lookup looks past. */
#define WEIR_LIST_DEPTH	4

/*
 * Key of a per-source bucket in wr_state. 8-byte aligned: the data path
 * hashes and compares it as three 64-bit words.
 */
struct weir_key {
	__u32 uid;		/* weir_rule.uid; never 0 */
	__u8 limit;		/* index of the limit in the rule */
	__u8 family;		/* 4 or 6 */
	__u8 plen;		/* prefix length addr is masked to */
	/*
	 * enum weir_key_kind: WEIR_KEY_SRC (0), WEIR_KEY_DST or WEIR_KEY_FLOW,
	 * so a source's and a destination's bucket of one limit never meet.
	 */
	__u8 kind;
	/*
	 * Masked source (or destination, by kind), network byte order. A flow
	 * adds the source port (host byte order) in the word after the
	 * address: addr[1] for IPv4, addr[2] after the IPv6 /64.
	 */
	__u32 addr[4];
} __attribute__((aligned(8)));
_Static_assert(sizeof(struct weir_key) == 24, "weir_key layout");

/*
 * The first stage's cache of refusals (bpf/first.h): per CPU,
 * direct-mapped, WEIR_REFUSED_SLOTS a CPU, the slot picked by a hash of
 * the source and destination port. A slot says: a packet from this source
 * with these header fields (everything a cacheable rule matches on) is
 * refused by rule `rule` until `until`, under config generation gen.
 */
/* weir_config.cache_on */
enum weir_cache_bits {
	WEIR_CACHE_SRC = 1 << 0,	/* per-source refusals */
	/*
	 * Refusals of any source's packets: a rule that does not match on the
	 * source has a rule-wide limit (wr_ruleset_caches), whose refusal of
	 * one packet holds for every packet alike (bpf/first.h). The lookup
	 * of their slot costs the sets without such a rule nothing.
	 */
	WEIR_CACHE_ANY = 1 << 1,
};
/* weir_refused.sig of an any-source refusal (saddr all 0) */
#define WEIR_REFUSED_ANY	(1ULL << 63)
#define WEIR_REFUSED_SHIFT	12
#define WEIR_REFUSED_SLOTS	(1U << WEIR_REFUSED_SHIFT)
/*
 * A slot holds at most this long: the longest a refusal is taken on trust.
 * Under WEIR_EVENT_QUIET_NS, so that a bucket the slot counts drops on is
 * never taken for a quiet one between two fills.
 */
#define WEIR_REFUSED_MAX_NS	500000000ULL
struct weir_refused {
	__u32 saddr[4];		/* network byte order; IPv4 in [0], rest 0 */
	/*
	 * dport | family << 16 | proto << 24 | tcp_flags << 32 | icmp_type
	 * << 40 | flags << 48 (struct wr_pkt's, without WR_PKT_GSO): wr_refused_sig.
	 */
	__u64 sig;
	__u32 gen;		/* weir_config.cache_gen it was filled under */
	__u16 rule;		/* the refusing rule's index in the live set */
	__u16 slot;		/* its counter slot (wr_rule_stats) */
	__u64 until;		/* the data path's clock: when its bucket admits again */
	/*
	 * The bucket each drop is counted on, as the walk counts a refusal
	 * (note_drop): the per-source bucket of key in way `way` of wr_state
	 * set loc; or, key.family 0, the rule-wide wr_agg[loc] of rule uid's
	 * limit li.
	 */
	struct weir_key key;
	__u32 loc;
	__u32 uid;
	__u8 way;
	__u8 li;
	__u8 precise;		/* until is on the precise clock (the rule's WEIR_RF_PRECISE) */
	__u8 pad[5];
	/*
	 * When this slot last counted a drop on the bucket itself (note_drop,
	 * which moved its last_drop then): within WEIR_DROP_BATCH_NS of it
	 * the bucket is known to be refusing, and a drop goes straight to this
	 * CPU's waiting count, as note_drop would put it, without the bucket.
	 */
	__u64 noted;
};
_Static_assert(sizeof(struct weir_refused) == 88, "weir_refused layout");

/*
 * A bucket: per-source in wr_state, rule-wide in wr_agg. For a token
 * bucket `tat` is the GCRA theoretical arrival time; for the window
 * algorithms it packs the current window (window index << 32 | cost counted
 * in it) and `aux` holds the previous window's count (sliding window).
 */
struct weir_state {
	__u64 tat;		/* CAS-updated */
	/*
	 * Packets this bucket refused (atomic add). Its latest refusals may
	 * wait per CPU (wr_agg_drops for a rule-wide bucket, wr_src_drops
	 * for a per-source one): its count is this plus theirs
	 * (WEIR_DROP_BATCH_NS).
	 */
	__u64 drops;
	/* ns of the latest refusal written (plain store): under a batch before the latest */
	__u64 last_drop;
	__u64 aux;		/* sliding window: the previous window's count */
};
_Static_assert(sizeof(struct weir_state) == 32, "weir_state layout");

/*
 * wr_state is a set-associative table: an array of sets, each holding
 * WEIR_WAYS buckets. A key lives in the set its keyed hash picks
 * (wr_state_set()), in any way of it. A way whose key.uid is 0 is empty;
 * one whose first key word is WEIR_WAY_BUSY is being filled in. A full
 * set gives up the way that is closest to full (smallest TAT, or the end
 * of its window): an evicted bucket reads as full again, which can only
 * admit more, never less.
 */
struct weir_way {
	struct weir_state st;
	struct weir_key key;
	/* Window algorithms: when the state is an empty window again (ns); 0 for GCRA. */
	__u64 idle_at;
};
_Static_assert(sizeof(struct weir_way) == 64, "weir_way layout");

struct weir_set {
	struct weir_way way[WEIR_WAYS];
};
_Static_assert(sizeof(struct weir_set) == 64 * WEIR_WAYS, "weir_set layout");

/* First key word (uid, limit, family, plen, pad) of a way being filled in. */
#define WEIR_WAY_BUSY	(0xffULL << 56)

/* Keys of fleet-wide limits that are hot (near or over their limit) at once. */
#define WEIR_FLEET_KEYS	65536

/*
 * A hot key of a fleet-wide limit (wr_fleet_use, keyed by struct
 * weir_key; a rule-wide bucket has family 0). The data path adds what it
 * charges; the daemon sends the growth since its last look to the fleet.
 */
struct weir_fleet_use {
	/*
	 * What was charged here since it became hot (atomic add): ns of TAT
	 * advance for a token bucket, units of cost for a window.
	 */
	__u64 charged;
	__u64 since;		/* data-path clock when it became hot */
};
_Static_assert(sizeof(struct weir_fleet_use) == 16, "weir_fleet_use layout");

/* Redis servers one fleet speaks to (sharded: keys spread over them). */
#define WEIR_FLEET_NODES	8

enum weir_fleet_err {
	WEIR_FE_CONNECT = 0,	/* could not connect or authenticate */
	WEIR_FE_TIMEOUT,	/* no answer within the interval */
	WEIR_FE_REPLY,	/* an error or malformed reply */
	WEIR_FE_MAX,
};

struct weir_fleet_node {
	char addr[64];		/* host:port as configured */
	__u32 up;		/* the last exchange worked */
	__u32 pad;
	__u64 last_ok_ns;	/* CLOCK_MONOTONIC of the last good exchange */
	__u64 rtt_us;		/* that exchange's round trip */
	__u64 keys;		/* keys synced through this node, total */
	__u64 errors[WEIR_FE_MAX];	/* by enum weir_fleet_err */
};

/*
 * What the daemon's fleet sync is doing (wr_fleet_status[0]): written by
 * the daemon once per sync, read by `weir fleet status` and /metrics.
 * Not used by the data path.
 */
struct weir_fleet_status {
	char name[32];		/* the fleet's name: its keys' prefix */
	char host[64];		/* this host's name in the fleet */
	__u64 pid;		/* the daemon that writes this; 0: no fleet configured */
	__u64 updated_ns;	/* CLOCK_MONOTONIC of the last write */
	__u64 last_sync_ns;	/* of the last sync that reached every node */
	__u64 sync_us;		/* that sync's duration */
	__u64 syncs;		/* syncs run */
	__u64 keys_synced;	/* key charges sent, total */
	__u64 hot_keys;		/* hot keys at the last sync */
	__u64 over_keys;	/* keys over their limit fleet-wide at the last sync */
	__u64 floors;		/* local buckets moved forward by the fleet's use, total */
	__u64 sync_hist[8];	/* syncs taking <= 1, 2, 5, 10, 25, 50, 100 ms, more */
	__u32 mode;		/* 0 single, 1 sharded, 2 cluster */
	__u32 fallback;		/* 0 safe, 1 local, 2 hold */
	__u32 fallback_active;	/* a node is stale: the fallback is in force */
	__u32 hosts;		/* live hosts seen in the heartbeat set */
	__u32 multiplier;	/* cost multiplier in force on fleet limits */
	__u32 interval_ms;
	__u32 stale_ms;
	__u32 nr_nodes;
	struct weir_fleet_node node[WEIR_FLEET_NODES];
};

/* Established TCP connections of one key (wr_conns), counted by wr_sockops. */
struct weir_conns {
	__u64 count;		/* atomic add/sub */
};

/* Connection-limit keys a socket was counted under (its socket storage). */
#define WEIR_CONN_KEYS_PER_SOCK 4
struct weir_sock_conns {
	__u32 nr;
	__u32 pad;
	struct weir_key keys[WEIR_CONN_KEYS_PER_SOCK];
};

/* Slots of wr_cookie_progs: the programs that answer a SYN and check an ACK. */
enum weir_cookie_prog {
	WEIR_CK_PROG_SYN = 0,
	WEIR_CK_PROG_ACK = 1,
	WEIR_CK_PROGS,
};

/* Key of wr_cookie_dst: a SYN-ACK destination under one rule's budget. */
struct weir_ck_dst {
	__u32 addr[4];		/* network byte order; IPv4 in [0] */
	__u16 slot;		/* weir_rule.slot */
	__u8 family;		/* 4 or 6 */
	__u8 pad;
};
_Static_assert(sizeof(struct weir_ck_dst) == 20, "weir_ck_dst layout");

/* Key of wr_verified: a source that completed a TCP handshake with this host. */
struct weir_verified_key {
	__u32 addr[4];		/* network byte order; IPv4 in [0] */
	__u32 family;		/* 4 or 6 */
};
_Static_assert(sizeof(struct weir_verified_key) == 20, "weir_verified_key layout");
/* Sources wr_verified holds; the least recently verified go first. */
#define WEIR_VERIFIED_MAX	65536
/*
 * Slots of wr_verified_hint: the latest verification of any source whose
 * address hashes there (wr_verified_slot). A slot not stamped within the
 * TTL proves its sources unverified without the hash lookup; a fresh one
 * sends the question on to wr_verified.
 */
#define WEIR_VERIFIED_HINTS	65536
/* SYN-ACK destinations wr_cookie_dst holds (LRU: an evicted one starts a full budget). */
#define WEIR_CK_DST_MAX	65536

/* Per-rule counters, one per CPU per counter slot. */
struct weir_rule_stats {
	__u64 passed_pkts;	/* includes would-drops (they pass) */
	__u64 passed_bytes;
	__u64 dropped_pkts;
	__u64 dropped_bytes;
	__u64 wdrop_pkts;	/* would have been dropped: dry-run or kill switch */
	__u64 wdrop_bytes;
};
_Static_assert(sizeof(struct weir_rule_stats) == 48, "weir_rule_stats layout");

/* Global counters, indices into struct weir_globals.count (wr_global, per CPU). */
enum weir_global {
	WEIR_G_PACKETS = 0,	/* every frame the program saw */
	WEIR_G_PARSED,	/* well-formed IPv4/IPv6 */
	WEIR_G_NON_IP,	/* passed untouched: ARP and other ethertypes */
	WEIR_G_MALFORMED,	/* truncated or invalid IP */
	WEIR_G_ND,		/* IPv6 neighbour discovery / RA, passed */
	WEIR_G_DENIED,	/* source on the deny list */
	WEIR_G_ALLOWED,	/* source on the allow list, bypassed limits */
	WEIR_G_NO_RULE,	/* IP that matched no rule */
	WEIR_G_PASSED,	/* total passed */
	WEIR_G_DROPPED,	/* total dropped */
	WEIR_G_WOULD_DROP,	/* passed by dry-run or the kill switch */
	WEIR_G_FAULT,		/* internal faults (a bucket's map or set not there) */
	WEIR_G_FAIL_OPEN,	/* faults that passed a packet */
	WEIR_G_EVENTS,	/* "started being limited" events sent */
	WEIR_G_EVENTS_LOST,	/* events the ring buffer had no room for */
	WEIR_G_SHED,		/* dropped by adaptive shedding */
	WEIR_G_CAPACITY,	/* dropped by reserved capacity */
	WEIR_G_COOKIE_SENT,	/* SYN-ACKs with a SYN cookie sent (the SYN counts as dropped) */
	WEIR_G_COOKIE_BUDGET,	/* SYNs not answered: over a SYN-ACK budget */
	WEIR_G_COOKIE_BAD,	/* SYNs not answered: bad checksum or not answerable */
	WEIR_G_COOKIE_VALID,	/* ACKs with a valid cookie, passed to the kernel */
	WEIR_G_COOKIE_INVALID, /* ACKs to a listener with an invalid cookie, dropped */
	WEIR_G_VERIFIED,	/* packets from verified sources shed as their class */
	WEIR_G_COOKIE_PRIMED,	/* SYNs passed to keep the kernel accepting cookies */
	/*
	 * Refused because their bucket was being changed by another CPU
	 * beyond the bounded retry (a new key's claim in progress, a
	 * compare-and-swap lost every time): contention, never a fault.
	 */
	WEIR_G_CONTENDED,
	WEIR_G_OUT_OF_STATE,	/* TCP segments of no connection, dropped by tcp-state */
	WEIR_G_TCP_LOOKUPS,	/* tcp-state's socket lookups (its cache's misses) */
	WEIR_G_FEED_DENIED,	/* dropped: a blocklist feed denies the source */
	WEIR_G_FEED_ALLOWED,	/* passed: an allow feed lists the source */
	WEIR_G_CACHED,		/* dropped by the first stage: a refusal still in force */
	WEIR_G_FEED_CLASSED,	/* given a shedding class by a limit-class feed */
	WEIR_G_VERIFIED_UNMATCHED,	/* a `spare verified` rule let a verified source by (per rule) */
	WEIR_G_MAX,
};

/*
 * Every global counter in one per-CPU value, wr_global[0]: the data path
 * looks it up once before the rule walk and once for the verdict, and
 * increments fields of it, instead of one lookup per counter.
 */
struct weir_globals {
	__u64 count[WEIR_G_MAX];	/* by enum weir_global */
};
_Static_assert(sizeof(struct weir_globals) == 8 * WEIR_G_MAX, "weir_globals layout");

/*
 * A bucket started refusing packets after a quiet spell of at least
 * WEIR_EVENT_QUIET_NS. Sent on the wr_events ring buffer; the daemon
 * turns these into a bounded number of log lines per interval.
 */
#define WEIR_EVENT_QUIET_NS	1000000000ULL
/*
 * A bucket that refused within this long on a CPU counts that CPU's
 * further refusals apart (wr_agg_drops, wr_src_drops) and adds them to
 * its drops at the first refusal after it: 2^23 ns, about 8.4 ms (three ticks of the
 * jiffies clock at HZ=250 before one is seen past it). Under the fleet
 * sync's shortest interval (20 ms), so a bucket that keeps refusing shows
 * its drops grow at every sync.
 */
#define WEIR_DROP_BATCH_NS	(1ULL << 23)

/*
 * Refusals of per-source buckets waiting on one CPU, as a rule-wide
 * bucket's wait in wr_agg_drops: wr_src_drops is a per-CPU array of
 * WEIR_SRC_WAIT_SLOTS of these, a key in the slot its words pick
 * (wr_src_wait_slot), one key a slot. A slot whose key has not been
 * refused on its CPU for a batch period is given to the next key that
 * wants it, its count first added to its bucket.
 */
#define WEIR_SRC_WAIT_SHIFT	10
#define WEIR_SRC_WAIT_SLOTS	(1U << WEIR_SRC_WAIT_SHIFT)
struct weir_src_wait {
	struct weir_key key;	/* whose refusals wait here (n 0: none, the slot is free) */
	__u64 n;		/* refusals not yet in the bucket's drops */
	__u64 at;		/* data-path clock of the latest */
};
_Static_assert(sizeof(struct weir_src_wait) == 40, "weir_src_wait layout");
struct weir_event {
	struct weir_key key;	/* key.family 0: the rule-wide bucket key.uid/key.limit */
	__u64 ts;		/* ns, data-path clock */
	__u64 drops;		/* the bucket's drop count including this drop */
};
_Static_assert(sizeof(struct weir_event) == 40, "weir_event layout");

/*
 * `weir capture`: samples of judged packets, copied by the data path
 * into the wr_capture_ring ring buffer at most `budget` a second (shared
 * by all CPUs), while wr_config.capture is set and the lease in
 * wr_capture has not run out.
 */
/* Bytes of a frame a capture record may hold (its snaplen's ceiling). */
#define WEIR_CAPTURE_SNAPLEN_MAX	2048
/* A power of two: the data path bounds a copy's size with a mask of it (bpf/capture.h). */
_Static_assert((WEIR_CAPTURE_SNAPLEN_MAX & (WEIR_CAPTURE_SNAPLEN_MAX - 1)) == 0,
	       "snaplen ceiling a power of two");
/* Packets a second the data path may copy: the default and the ceiling. */
#define WEIR_CAPTURE_BUDGET_DEF	1000
#define WEIR_CAPTURE_BUDGET_MAX	100000
/* The capture renews its lease this often; the data path honours it this long. */
#define WEIR_CAPTURE_RENEW_NS		1000000000ULL
#define WEIR_CAPTURE_LEASE_NS		3000000000ULL
/* weir_capture.rule_slot: no rule filter. */
#define WEIR_CAPTURE_ANY_RULE		0xffff

/* weir_capture.verdicts and weir_capture_hdr.verdict (as 1 << verdict). */
enum weir_capture_verdict {
	WEIR_CV_PASSED = 0,
	WEIR_CV_DROPPED = 1,
};

/* Why a captured packet got its verdict (weir_capture_hdr.reason). */
enum weir_capture_reason {
	WEIR_CR_NO_RULE = 0,	/* IP that matched no rule (passed) */
	WEIR_CR_RULE,		/* a rule's limits: rule_uid / rule_slot say which */
	WEIR_CR_DENY,		/* the deny list */
	WEIR_CR_ALLOW,	/* the allow list (passed) */
	WEIR_CR_SHED,		/* adaptive shedding */
	WEIR_CR_CAPACITY,	/* reserved capacity */
	WEIR_CR_MALFORMED,	/* truncated or invalid IP */
	WEIR_CR_COOKIE,	/* a SYN answered with a SYN cookie instead (dropped) */
	WEIR_CR_FAULT,	/* an internal fault, under the fail policy */
	WEIR_CR_TCP_STATE,	/* a TCP segment of no connection (tcp-state) */
	WEIR_CR_FEED,		/* a blocklist feed (denied, or passed by an allow feed) */
	WEIR_CR_MAX,
};

/* weir_capture_hdr.flags */
enum weir_capture_flags {
	WEIR_CF_WOULD_DROP = 1 << 0,	/* passed by dry-run or the kill switch */
};

/*
 * The capture's control and budget, wr_capture[0]. Mappable: the capture
 * writes the lease word in place while the data path moves `window` by
 * compare-and-swap, so neither overwrites the other's word.
 */
struct weir_capture {
	__u64 lease_ns;		/* data-path clock: copy nothing after this; 0: none */
	__u64 window;		/* second << 32 | packets copied in it (CAS) */
	__u32 budget;		/* packets a second, 1..WEIR_CAPTURE_BUDGET_MAX */
	__u32 snaplen;		/* bytes of each frame, 1..WEIR_CAPTURE_SNAPLEN_MAX */
	__u32 verdicts;		/* 1 << enum weir_capture_verdict: which are copied */
	__u16 rule_slot;	/* only packets of this rule (weir_rule.slot), or ANY_RULE */
	__u16 pad;
	__u32 pid;		/* the capture's process */
	/*
	 * Copy about one packet in this many (a power of two), drawn at
	 * random (0 or 1: every one), before the budget: a sample of the
	 * whole second, not of its first packets, for `weir auto`'s
	 * estimates; set as the rate changes.
	 */
	__u32 one_in;
};
_Static_assert(sizeof(struct weir_capture) == 40, "weir_capture layout");

/*
 * Per-interface counters: wr_if_slot[h] holds the ifindex that owns slot h
 * (0: never used, WEIR_IF_FREED: freed), wr_if_stats[h] (per CPU) its counts. The loader gives an
 * attachment slot ifindex % WEIR_IF_SLOTS or one of the next
 * WEIR_IF_PROBES - 1 (wr_if_claim); the data path finds it in as many
 * array lookups (inlined: no hash), the first in all but a collision.
 */
#define WEIR_IF_SLOTS	256	/* a power of two: a slot is an ifindex's low bits */
#define WEIR_IF_PROBES	4	/* slots an ifindex may take: h, h + 1, .. */
/*
 * The owner of a slot freed by a detach: the search goes on past it (a
 * later slot may hold an ifindex of the same low bits), where a slot never
 * used (0) ends it. No ifindex is this large (they are positive ints).
 */
#define WEIR_IF_FREED	0xffffffffu

/* One attached interface's verdicts: frames and their bytes as the hook sees them. */
struct weir_if_stats {
	__u64 passed_pkts;
	__u64 passed_bytes;
	__u64 dropped_pkts;
	__u64 dropped_bytes;
};
_Static_assert(sizeof(struct weir_if_stats) == 32, "weir_if_stats layout");

/* What the data path counted for the running capture (wr_capture_stats, per CPU). */
struct weir_capture_stats {
	__u64 captured;		/* records written to the ring */
	__u64 lost_budget;	/* wanted, but over the second's budget */
	__u64 lost_ring;	/* within the budget, but the ring was full */
};
_Static_assert(sizeof(struct weir_capture_stats) == 24, "weir_capture_stats layout");

/* A record of wr_capture_ring: this header, then caplen bytes of the frame. */
struct weir_capture_hdr {
	__u64 ts;		/* bpf_ktime_get_ns (CLOCK_MONOTONIC) when judged */
	__u32 rule_uid;		/* the rule that decided (weir_rule.uid); 0: none */
	__u32 ifindex;		/* interface it arrived on */
	__u32 len;		/* the frame's whole length */
	__u16 caplen;		/* bytes that follow */
	__u16 rule_slot;	/* that rule's slot; WEIR_CAPTURE_ANY_RULE: none */
	__u8 verdict;		/* enum weir_capture_verdict */
	__u8 reason;		/* enum weir_capture_reason */
	__u8 flags;		/* enum weir_capture_flags */
	__u8 pad[5];
};
_Static_assert(sizeof(struct weir_capture_hdr) == 32, "weir_capture_hdr layout");

/* Signals the shedding controller reports (struct weir_shed). */
#define WEIR_MAX_SIGNALS	8
#define WEIR_SIGNAL_NAME_LEN	32

/* weir_shed.flags */
enum weir_shed_flags {
	WEIR_SHED_OFF = 1 << 0,	/* operator: shed nothing (S still tracked) */
	WEIR_SHED_ACTIVE = 1 << 1,	/* a controller is running */
};

/*
 * Reserved capacity for one kind of cost: every class charges `total`
 * (the host's capacity); classes 1..3 also charge `noncrit`, which runs at
 * (1 - reserve) of it, so class 0 always keeps at least the reserve. A
 * rate of 0 means not configured. State: wr_capacity[2 * cost + 0/1].
 */
struct weir_capacity {
	struct weir_limit total;
	struct weir_limit noncrit;
};

/*
 * Shedding, wr_shed[0]: per-class drop thresholds the data path applies,
 * and the controller's state, which is the source of truth for S: the CLI
 * reads and sets it here, and a restarted daemon adopts it. Written by the
 * daemon (and by `weir shed`); fixed-point values are in millionths.
 */
struct weir_shed {
	__u64 threshold[WEIR_MAX_CLASS + 1];	/* shed if prandom_u32 < threshold */
	__u32 default_class;	/* class of traffic that matches no rule */
	__u32 flags;		/* enum weir_shed_flags */
	struct weir_capacity cap[2];	/* by enum weir_cost */
	__s64 s_micro;		/* S x 1e6, in [floor, 1e6] */
	__s64 u_micro;		/* u x 1e6 */
	__u64 updated_ns;	/* CLOCK_MONOTONIC of the last controller step */
	/*
	 * The thresholds hold until then (data-path clock); 0: until changed.
	 * A controller that dies stops shedding once its last word expires,
	 * instead of leaving classes shed forever.
	 */
	__u64 expires_ns;
	__u32 nr_signals;
	__u32 pad;
	__s64 signal_micro[WEIR_MAX_SIGNALS];	/* each signal's value x 1e6; < 0: unreadable */
	char signal_name[WEIR_MAX_SIGNALS][WEIR_SIGNAL_NAME_LEN];
};

/* Per-class counters, by class. Per-CPU. */
struct weir_class_stats {
	__u64 pkts;		/* packets of this class seen by shedding */
	__u64 bytes;
	__u64 shed_pkts;	/* shed (dropped, or would-drop under the kill switch) */
	__u64 shed_bytes;
	__u64 cap_pkts;		/* refused by reserved capacity */
	__u64 cap_bytes;
};

/* Clock for the data path, a load-time tunable. */
enum weir_clock {
	WEIR_CLOCK_PRECISE = 0,	/* bpf_ktime_get_ns */
	WEIR_CLOCK_COARSE = 1,	/* jiffies x tick: no call, tick steps */
	WEIR_CLOCK_MANUAL = 2,	/* a global the tests set: deterministic time */
	WEIR_CLOCK_AUTO = 3,		/* coarse, precise for rules with WEIR_RF_PRECISE */
};

#endif /* WEIR_H */
