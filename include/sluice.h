/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sluice: what the BPF data path and the userspace controller share.
 *
 * Only fixed-width __u8..__u64 types, explicit padding and size asserts:
 * these structs are map keys and values, read and written from both sides.
 */
#ifndef SLUICE_H
#define SLUICE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Rules in one rule set (a power of two: indices are masked with it). */
#define SLUICE_MAX_RULES	256
/*
 * Rules that may meet one packet: the most one cell of the rule index
 * (struct sluice_ruleset.cand) holds. The data path walks at most this many
 * a packet, in 64-bit masks.
 */
#define SLUICE_MAX_CAND		64
/* Limits carried by one rule. */
#define SLUICE_MAX_LIMITS	4
/* Rule names, NUL included. */
#define SLUICE_NAME_LEN		32
/*
 * Counter slots. A reload may replace every rule while the old set is still
 * live, so there are twice as many slots as rules.
 */
#define SLUICE_STATS_SLOTS	(2 * SLUICE_MAX_RULES)
/* Rule-wide ("per all") buckets, doubled for the same reason. */
#define SLUICE_AGG_SLOTS	(2 * SLUICE_MAX_RULES * SLUICE_MAX_LIMITS)
/* Priority classes: 0 is critical (never shed) .. 3 least important. */
#define SLUICE_MAX_CLASS	3
/* Connection-count keys (wr_conns), across all connection limits. */
#define SLUICE_CONN_MAX		65536
/* Prefixes each deny/allow list holds per family. */
#define SLUICE_LIST_MAX		65536
/* Default number of per-source keys tracked (wr_state ways). */
#define SLUICE_DEFAULT_KEYS	1048576
/* Ways per set of wr_state: a key lives in one of the SLUICE_WAYS of its set. */
#define SLUICE_WAYS		4
/* Fractional bits of the GCRA emission interval. */
#define SLUICE_FP_SHIFT		16

/* Which source-address bits identify a bucket. */
enum sluice_key_kind {
	SLUICE_KEY_SRC = 0,	/* source address masked to plen4 / plen6 */
	SLUICE_KEY_ALL = 1,	/* one bucket for the whole rule */
};

/* How a limit meters (sluice_limit.algo). */
enum sluice_algo {
	SLUICE_ALGO_GCRA = 0,	/* token bucket as GCRA: exact, bursts up to `burst` */
	SLUICE_ALGO_FIXED = 1,	/* fixed window: cheap; up to 2x at window edges */
	SLUICE_ALGO_SLIDING = 2, /* sliding window counter: previous window weighted */
	SLUICE_ALGO_CONNS = 3,	/* concurrent established TCP connections (wr_conns) */
};

/* What one packet costs. */
enum sluice_cost {
	SLUICE_COST_PKT = 0,	/* 1 per packet: rate in packets/s */
	SLUICE_COST_BYTE = 1,	/* L3 length: rate in bytes/s */
};

enum sluice_action {
	SLUICE_ACT_DROP = 0,
	SLUICE_ACT_DRYRUN = 1,	/* pass, but count what would have been dropped */
	/*
	 * Enforce like drop, but a pure SYN the limits refuse is answered
	 * from XDP with a SYN-ACK carrying a SYN cookie (sluice_rule.cookie).
	 */
	SLUICE_ACT_COOKIE = 2,
};

/* sluice_rule.cookie: which SYNs of an action cookie rule are answered. */
enum sluice_cookie_mode {
	SLUICE_COOKIE_OVER = 0,		/* those the limits refuse (the default) */
	SLUICE_COOKIE_ALWAYS = 1,	/* every one; the limits see none */
};

/* Which fields of a rule take part in matching (sluice_rule.match). */
enum sluice_match_bits {
	SLUICE_M_FAMILY = 1 << 0,
	SLUICE_M_PROTO = 1 << 1,
	SLUICE_M_DPORT = 1 << 2,
	SLUICE_M_SRC = 1 << 3,
	SLUICE_M_TCPFLAGS = 1 << 4,
	SLUICE_M_ICMPTYPE = 1 << 5,
};

/* TCP flag bits as they sit in byte 13 of the TCP header. */
#define SLUICE_TCP_FIN	0x01
#define SLUICE_TCP_SYN	0x02
#define SLUICE_TCP_RST	0x04
#define SLUICE_TCP_PSH	0x08
#define SLUICE_TCP_ACK	0x10
#define SLUICE_TCP_URG	0x20
#define SLUICE_TCP_ECE	0x40
#define SLUICE_TCP_CWR	0x80

/* One limit of a rule: a GCRA meter. */
struct sluice_limit {
	__u64 interval_fp;	/* ns per unit of cost, << SLUICE_FP_SHIFT */
	__u64 tolerance;	/* ns the TAT may run ahead of now (the burst) */
	__u64 rate;		/* as configured: units of cost per period (conns: the cap) */
	__u64 burst;		/* as configured, units of cost */
	__u16 agg_slot;		/* index into wr_agg for SLUICE_KEY_ALL */
	__u8 key;		/* enum sluice_key_kind */
	__u8 cost;		/* enum sluice_cost */
	__u8 plen4;		/* IPv4 key prefix length, 0..32 */
	__u8 plen6;		/* IPv6 key prefix length, 0..128 */
	__u8 algo;		/* enum sluice_algo */
	/*
	 * 0: this host's limit. Else a fleet-wide limit (a token bucket or
	 * a window), kept in step across hosts by the daemon (user/fleet.c),
	 * and each packet
	 * costs this many times its cost: 1 normally, the number of live
	 * hosts under the "safe" fallback (each host then enforces its share).
	 */
	__u8 fleet;
	__u32 mask4;		/* network byte order mask of plen4 */
	__u32 mask6[4];		/* network byte order mask of plen6 */
	__u32 period_ms;	/* `rate` is per this long (1000 for per second); the window */
};
_Static_assert(sizeof(struct sluice_limit) == 64, "sluice_limit layout");

struct sluice_rule {
	__u32 uid;		/* bucket identity; new whenever the limits change */
	__u16 slot;		/* counter slot in wr_rule_stats, stable per name */
	__u8 nr_limits;		/* 1..SLUICE_MAX_LIMITS */
	__u8 action;		/* enum sluice_action */
	__u8 match;		/* enum sluice_match_bits */
	__u8 family;		/* 4 or 6, with SLUICE_M_FAMILY */
	__u8 proto;		/* IPPROTO_*, with SLUICE_M_PROTO */
	__u8 tcp_mask;		/* (flags & tcp_mask) == tcp_value */
	__u8 tcp_value;
	__u8 icmp_type;		/* with SLUICE_M_ICMPTYPE */
	__u8 src_plen;		/* prefix length of src_net */
	__u8 class;		/* priority class 0 (critical) .. 3 */
	__u16 dport_lo;		/* host byte order, inclusive */
	__u16 dport_hi;
	__u8 flags;		/* enum sluice_rule_flags, set by the controller */
	__u8 cookie;		/* enum sluice_cookie_mode, with SLUICE_ACT_COOKIE */
	/*
	 * Verified sources (wr_verified) matching this rule are shed as this
	 * class minus 1 when that is more critical than the rule's; 0: no
	 * such sparing.
	 */
	__u8 verified_class;
	__u8 pad;
	__u32 src_net[4];	/* network byte order, already masked */
	__u32 src_mask[4];	/* network byte order */
	struct sluice_limit limits[SLUICE_MAX_LIMITS];
	/*
	 * SYN-ACK budgets of SLUICE_ACT_COOKIE (token buckets, one packet a
	 * unit): rule-wide in wr_cookie_agg[slot], and per destination (the
	 * SYN's source) in wr_cookie_dst. A SYN over either is dropped.
	 */
	__u64 ck_interval_fp;
	__u64 ck_tolerance;
	__u64 ckd_interval_fp;
	__u64 ckd_tolerance;
	__u32 ck_rate;		/* SYN-ACKs per second for the rule, as configured */
	__u32 ckd_rate;		/* per destination, per second */
};
_Static_assert(sizeof(struct sluice_rule) == 352, "sluice_rule layout");

/* sluice_rule.flags: derived from the limits by the controller. */
enum sluice_rule_flags {
	/*
	 * A limit needs the precise clock: a token bucket whose burst spans
	 * under SLUICE_COARSE_TICKS clock ticks, or a window under
	 * SLUICE_COARSE_WINDOW_TICKS. Under `clock auto` a packet that matches
	 * such a rule reads bpf_ktime_get_ns; every other packet reads the
	 * jiffies clock, which costs no call.
	 */
	SLUICE_RF_PRECISE = 1 << 0,
};
/* A GCRA tolerance of at least this many ticks is exact on a tick clock. */
#define SLUICE_COARSE_TICKS		2
/* A window of at least this many ticks moves its edges by at most 1%. */
#define SLUICE_COARSE_WINDOW_TICKS	100

/* Protocol classes of the rule index (struct sluice_ruleset.cand). */
enum sluice_idx_proto {
	SLUICE_IDX_TCP = 0,
	SLUICE_IDX_UDP = 1,
	SLUICE_IDX_OTHER = 2,	/* ICMP, ICMPv6 and every other protocol */
	SLUICE_IDX_PROTOS,
};
/* Destination-port buckets of the rule index: the top 8 bits of a 32-bit hash. */
#define SLUICE_PORT_BUCKETS	256
/* The index's bucket for packets without ports (ICMP, non-first fragments, ...). */
#define SLUICE_IDX_NOPORT	SLUICE_PORT_BUCKETS
/*
 * Cells of the rule index: a protocol class's buckets, then the next
 * class's (771 in all), rounded up to a power of two so that the data path
 * bounds a cell with a mask, not a branch the verifier would follow twice.
 */
#define SLUICE_IDX_CELLS	1024
_Static_assert(SLUICE_IDX_PROTOS * (SLUICE_PORT_BUCKETS + 1) <= SLUICE_IDX_CELLS,
	       "the rule index's cells");
_Static_assert(SLUICE_MAX_CAND == 64, "a cell's rules are walked in 64-bit masks");
_Static_assert(SLUICE_MAX_RULES <= 256, "a cell names its rules in bytes");

/*
 * A whole rule set. The data path reads wr_rulesets[config.active]; the
 * controller writes the other entry and then flips config.active, so a
 * packet is only ever judged by one complete set.
 */
struct sluice_ruleset {
	__u32 nr_rules;
	__u32 gen;		/* bumped on every commit */
	__u32 cookie_rules;	/* rules with action cookie: ACKs are checked for cookies */
	/*
	 * cand and cand_rule hold the rule index (wr_ruleset_index); 0: no
	 * index, and no rule is a candidate (every writer builds one).
	 */
	__u32 indexed;
	struct sluice_rule rules[SLUICE_MAX_RULES];
	/*
	 * The rule index, written with the rules by wr_ruleset_index. A cell
	 * is a protocol class (enum sluice_idx_proto) and a bucket of
	 * destination ports (wr_port_bucket; SLUICE_IDX_NOPORT: a packet
	 * without ports), cell = class * (SLUICE_PORT_BUCKETS + 1) + bucket.
	 * cand_rule[cell] lists, lowest first, the rules that may match a
	 * packet of that cell, and bit k of cand[cell] is set for each entry k
	 * of the list: the data path's masks (which rules matched, which are
	 * being evaluated) are over these positions, not over rule indices. A
	 * superset: the data path still matches each candidate in full, and
	 * only those, so the cost of matching follows the rules that may
	 * apply, not the number of rules.
	 */
	__u64 cand[SLUICE_IDX_CELLS];
	__u8 cand_rule[SLUICE_IDX_CELLS][SLUICE_MAX_CAND];
	char names[SLUICE_MAX_RULES][SLUICE_NAME_LEN];	/* read by userspace only */
};

/* Global switches, wr_config[0]. Written by the controller. */
struct sluice_config {
	__u32 active;		/* which wr_rulesets entry is live: 0 or 1 */
	__u32 disabled;		/* kill switch: pass everything, count would-drops */
	__u32 fail_closed;	/* drop instead of pass on internal faults */
	__u32 malformed_pass;	/* pass malformed IP instead of dropping it */
	__u32 lists;		/* enum sluice_list_bits: which LPM tries hold entries */
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
	 * (enum sluice_cookie_flags, include/sluice_cookie.h), read from its
	 * sysctls by the controller, and the window scale the kernel gives a
	 * cookie connection (what the SYN-ACK must advertise).
	 */
	__u32 cookie_flags;
	__u32 cookie_wscale;
	/* Verified sources stay verified this long after a handshake; 0: not kept. */
	__u64 verified_ttl_ns;
	/*
	 * A `sluice capture` runs: the data path looks at wr_capture (its
	 * lease, filters and budget) for every packet it judges. 0: nothing is
	 * looked at or copied. Set and cleared by the capture under the root
	 * lock; cleared by the data path once the capture's lease has run out
	 * (a capture killed by SIGKILL).
	 */
	__u32 capture;
	__u32 pad2;
	/*
	 * Fleet window limits cut their windows on the fleet's clock: Redis's
	 * TIME (ns since the epoch) less CLOCK_MONOTONIC, as this host's fleet
	 * sync measured it, so every host's windows turn together. The data
	 * path adds it modulo the period (wr_limit_wnow). 0: no fleet yet,
	 * windows on this host's clock. Written by the fleet sync under the
	 * root lock.
	 */
	__u64 fleet_win_off;
};
_Static_assert(sizeof(struct sluice_config) == 88, "sluice_config layout");

enum sluice_list_bits {
	SLUICE_L_DENY4 = 1 << 0,
	SLUICE_L_DENY6 = 1 << 1,
	SLUICE_L_ALLOW4 = 1 << 2,
	SLUICE_L_ALLOW6 = 1 << 3,
	/*
	 * Some entry carries a time to live: writers purge expired entries.
	 * Userspace only; the data path reads each entry's own expiry.
	 */
	SLUICE_L_TTL = 1 << 4,
};

/*
 * Keys of the deny and allow LPM tries (wr_deny4/6, wr_allow4/6): the
 * prefix length first, as LPM tries want; addresses in network order.
 */
struct sluice_lpm4 {
	__u32 plen;
	__u32 addr;
};

struct sluice_lpm6 {
	__u32 plen;
	__u32 addr[4];
};
_Static_assert(sizeof(struct sluice_lpm4) == 8 && sizeof(struct sluice_lpm6) == 20,
	       "LPM key layout");

/* Who put a deny/allow entry there (sluice_list_val.flags). */
enum sluice_list_origin {
	SLUICE_LV_CONFIG = 1 << 0,	/* the daemon's config lists it: permanent */
	SLUICE_LV_RUNTIME = 1 << 1,	/* `deny add` / `allow add` (a person, a ban tool) */
};

/*
 * Value of the deny and allow tries. expires_ns is what the data path
 * reads: 0 = permanent, else the entry counts only while the data path's
 * clock (CLOCK_MONOTONIC, see sluice_config.clock_off) is below it; an
 * expired entry is skipped, and the lookup goes on with the prefixes
 * shorter than plen (the entry's own length, which a trie's lookup does not
 * return). rt_expires_ns is the runtime add's own expiry (0 = permanent)
 * while the config also lists the prefix, so that the entry falls back to
 * it when the config stops listing it. Written by the controller only.
 */
struct sluice_list_val {
	__u64 expires_ns;
	__u64 rt_expires_ns;
	__u8 plen;
	__u8 flags;		/* enum sluice_list_origin */
	__u8 pad[6];
};
_Static_assert(sizeof(struct sluice_list_val) == 24, "list value layout");
/* Expired entries nested in one another that one lookup looks past. */
#define SLUICE_LIST_DEPTH	4

/*
 * Key of a per-source bucket in wr_state. 8-byte aligned: the data path
 * hashes and compares it as three 64-bit words.
 */
struct sluice_key {
	__u32 uid;		/* sluice_rule.uid; never 0 */
	__u8 limit;		/* index of the limit in the rule */
	__u8 family;		/* 4 or 6 */
	__u8 plen;		/* prefix length addr is masked to */
	__u8 pad;
	__u32 addr[4];		/* masked source, network byte order */
} __attribute__((aligned(8)));
_Static_assert(sizeof(struct sluice_key) == 24, "sluice_key layout");

/*
 * A bucket: per-source in wr_state, rule-wide in wr_agg. For a token
 * bucket `tat` is the GCRA theoretical arrival time; for the window
 * algorithms it packs the current window (window index << 32 | cost counted
 * in it) and `aux` holds the previous window's count (sliding window).
 */
struct sluice_state {
	__u64 tat;		/* CAS-updated */
	/*
	 * Packets this bucket refused (atomic add). Its latest refusals may
	 * wait per CPU (wr_agg_drops for a rule-wide bucket, wr_src_drops
	 * for a per-source one): its count is this plus theirs
	 * (SLUICE_DROP_BATCH_NS).
	 */
	__u64 drops;
	/* ns of the latest refusal written (plain store): under a batch before the latest */
	__u64 last_drop;
	__u64 aux;		/* sliding window: the previous window's count */
};
_Static_assert(sizeof(struct sluice_state) == 32, "sluice_state layout");

/*
 * wr_state is a set-associative table: an array of sets, each holding
 * SLUICE_WAYS buckets. A key lives in the set its keyed hash picks
 * (wr_state_set()), in any way of it. A way whose key.uid is 0 is empty;
 * one whose first key word is SLUICE_WAY_BUSY is being filled in. A full
 * set gives up the way that is closest to full (smallest TAT, or the end
 * of its window): an evicted bucket reads as full again, which can only
 * admit more, never less.
 */
struct sluice_way {
	struct sluice_state st;
	struct sluice_key key;
	/* Window algorithms: when the state is an empty window again (ns); 0 for GCRA. */
	__u64 idle_at;
};
_Static_assert(sizeof(struct sluice_way) == 64, "sluice_way layout");

struct sluice_set {
	struct sluice_way way[SLUICE_WAYS];
};
_Static_assert(sizeof(struct sluice_set) == 64 * SLUICE_WAYS, "sluice_set layout");

/* First key word (uid, limit, family, plen, pad) of a way being filled in. */
#define SLUICE_WAY_BUSY	(0xffULL << 56)

/* Keys of fleet-wide limits that are hot (near or over their limit) at once. */
#define SLUICE_FLEET_KEYS	65536

/*
 * A hot key of a fleet-wide limit (wr_fleet_use, keyed by struct
 * sluice_key; a rule-wide bucket has family 0). The data path adds what it
 * charges; the daemon sends the growth since its last look to the fleet.
 */
struct sluice_fleet_use {
	/*
	 * What was charged here since it became hot (atomic add): ns of TAT
	 * advance for a token bucket, units of cost for a window.
	 */
	__u64 charged;
	__u64 since;		/* data-path clock when it became hot */
};
_Static_assert(sizeof(struct sluice_fleet_use) == 16, "sluice_fleet_use layout");

/* Redis servers one fleet speaks to (sharded: keys spread over them). */
#define SLUICE_FLEET_NODES	8

enum sluice_fleet_err {
	SLUICE_FE_CONNECT = 0,	/* could not connect or authenticate */
	SLUICE_FE_TIMEOUT,	/* no answer within the interval */
	SLUICE_FE_REPLY,	/* an error or malformed reply */
	SLUICE_FE_MAX,
};

struct sluice_fleet_node {
	char addr[64];		/* host:port as configured */
	__u32 up;		/* the last exchange worked */
	__u32 pad;
	__u64 last_ok_ns;	/* CLOCK_MONOTONIC of the last good exchange */
	__u64 rtt_us;		/* that exchange's round trip */
	__u64 keys;		/* keys synced through this node, total */
	__u64 errors[SLUICE_FE_MAX];	/* by enum sluice_fleet_err */
};

/*
 * What the daemon's fleet sync is doing (wr_fleet_status[0]): written by
 * the daemon once per sync, read by `sluice fleet status` and /metrics.
 * Not used by the data path.
 */
struct sluice_fleet_status {
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
	struct sluice_fleet_node node[SLUICE_FLEET_NODES];
};

/* Established TCP connections of one key (wr_conns), counted by wr_sockops. */
struct sluice_conns {
	__u64 count;		/* atomic add/sub */
};

/* Connection-limit keys a socket was counted under (its socket storage). */
#define SLUICE_CONN_KEYS_PER_SOCK 4
struct sluice_sock_conns {
	__u32 nr;
	__u32 pad;
	struct sluice_key keys[SLUICE_CONN_KEYS_PER_SOCK];
};

/* Slots of wr_cookie_progs: the programs that answer a SYN and check an ACK. */
enum sluice_cookie_prog {
	SLUICE_CK_PROG_SYN = 0,
	SLUICE_CK_PROG_ACK = 1,
	SLUICE_CK_PROGS,
};

/* Key of wr_cookie_dst: a SYN-ACK destination under one rule's budget. */
struct sluice_ck_dst {
	__u32 addr[4];		/* network byte order; IPv4 in [0] */
	__u16 slot;		/* sluice_rule.slot */
	__u8 family;		/* 4 or 6 */
	__u8 pad;
};
_Static_assert(sizeof(struct sluice_ck_dst) == 20, "sluice_ck_dst layout");

/* Key of wr_verified: a source that completed a TCP handshake with this host. */
struct sluice_verified_key {
	__u32 addr[4];		/* network byte order; IPv4 in [0] */
	__u32 family;		/* 4 or 6 */
};
_Static_assert(sizeof(struct sluice_verified_key) == 20, "sluice_verified_key layout");
/* Sources wr_verified holds; the least recently verified go first. */
#define SLUICE_VERIFIED_MAX	65536
/* SYN-ACK destinations wr_cookie_dst holds (LRU: an evicted one starts a full budget). */
#define SLUICE_CK_DST_MAX	65536

/* Per-rule counters, one per CPU per counter slot. */
struct sluice_rule_stats {
	__u64 passed_pkts;	/* includes would-drops (they pass) */
	__u64 passed_bytes;
	__u64 dropped_pkts;
	__u64 dropped_bytes;
	__u64 wdrop_pkts;	/* would have been dropped: dry-run or kill switch */
	__u64 wdrop_bytes;
};
_Static_assert(sizeof(struct sluice_rule_stats) == 48, "sluice_rule_stats layout");

/* Global counters, indices into struct sluice_globals.count (wr_global, per CPU). */
enum sluice_global {
	SLUICE_G_PACKETS = 0,	/* every frame the program saw */
	SLUICE_G_PARSED,	/* well-formed IPv4/IPv6 */
	SLUICE_G_NON_IP,	/* passed untouched: ARP and other ethertypes */
	SLUICE_G_MALFORMED,	/* truncated or invalid IP */
	SLUICE_G_ND,		/* IPv6 neighbour discovery / RA, passed */
	SLUICE_G_DENIED,	/* source on the deny list */
	SLUICE_G_ALLOWED,	/* source on the allow list, bypassed limits */
	SLUICE_G_NO_RULE,	/* IP that matched no rule */
	SLUICE_G_PASSED,	/* total passed */
	SLUICE_G_DROPPED,	/* total dropped */
	SLUICE_G_WOULD_DROP,	/* passed by dry-run or the kill switch */
	SLUICE_G_FAULT,		/* internal faults (a bucket's map or set not there) */
	SLUICE_G_FAIL_OPEN,	/* faults that passed a packet */
	SLUICE_G_EVENTS,	/* "started being limited" events sent */
	SLUICE_G_EVENTS_LOST,	/* events the ring buffer had no room for */
	SLUICE_G_SHED,		/* dropped by adaptive shedding */
	SLUICE_G_CAPACITY,	/* dropped by reserved capacity */
	SLUICE_G_COOKIE_SENT,	/* SYN-ACKs with a SYN cookie sent (the SYN counts as dropped) */
	SLUICE_G_COOKIE_BUDGET,	/* SYNs not answered: over a SYN-ACK budget */
	SLUICE_G_COOKIE_BAD,	/* SYNs not answered: bad checksum or not answerable */
	SLUICE_G_COOKIE_VALID,	/* ACKs with a valid cookie, passed to the kernel */
	SLUICE_G_COOKIE_INVALID, /* ACKs to a listener with an invalid cookie, dropped */
	SLUICE_G_VERIFIED,	/* packets from verified sources shed as their class */
	SLUICE_G_COOKIE_PRIMED,	/* SYNs passed to keep the kernel accepting cookies */
	/*
	 * Refused because their bucket was being changed by another CPU
	 * beyond the bounded retry (a new key's claim in progress, a
	 * compare-and-swap lost every time): contention, never a fault.
	 */
	SLUICE_G_CONTENDED,
	SLUICE_G_MAX,
};

/*
 * Every global counter in one per-CPU value, wr_global[0]: the data path
 * looks it up once before the rule walk and once for the verdict, and
 * increments fields of it, instead of one lookup per counter.
 */
struct sluice_globals {
	__u64 count[SLUICE_G_MAX];	/* by enum sluice_global */
};
_Static_assert(sizeof(struct sluice_globals) == 8 * SLUICE_G_MAX, "sluice_globals layout");

/*
 * A bucket started refusing packets after a quiet spell of at least
 * SLUICE_EVENT_QUIET_NS. Sent on the wr_events ring buffer; the daemon
 * turns these into a bounded number of log lines per interval.
 */
#define SLUICE_EVENT_QUIET_NS	1000000000ULL
/*
 * A bucket that refused within this long on a CPU counts that CPU's
 * further refusals apart (wr_agg_drops, wr_src_drops) and adds them to
 * its drops at the first refusal after it: 2^23 ns, about 8.4 ms (three ticks of the
 * jiffies clock at HZ=250 before one is seen past it). Under the fleet
 * sync's shortest interval (20 ms), so a bucket that keeps refusing shows
 * its drops grow at every sync.
 */
#define SLUICE_DROP_BATCH_NS	(1ULL << 23)

/*
 * Refusals of per-source buckets waiting on one CPU, as a rule-wide
 * bucket's wait in wr_agg_drops: wr_src_drops is a per-CPU array of
 * SLUICE_SRC_WAIT_SLOTS of these, a key in the slot its words pick
 * (wr_src_wait_slot), one key a slot. A slot whose key has not been
 * refused on its CPU for a batch period is given to the next key that
 * wants it, its count first added to its bucket.
 */
#define SLUICE_SRC_WAIT_SHIFT	10
#define SLUICE_SRC_WAIT_SLOTS	(1U << SLUICE_SRC_WAIT_SHIFT)
struct sluice_src_wait {
	struct sluice_key key;	/* whose refusals wait here (n 0: none, the slot is free) */
	__u64 n;		/* refusals not yet in the bucket's drops */
	__u64 at;		/* data-path clock of the latest */
};
_Static_assert(sizeof(struct sluice_src_wait) == 40, "sluice_src_wait layout");
struct sluice_event {
	struct sluice_key key;	/* key.family 0: the rule-wide bucket key.uid/key.limit */
	__u64 ts;		/* ns, data-path clock */
	__u64 drops;		/* the bucket's drop count including this drop */
};
_Static_assert(sizeof(struct sluice_event) == 40, "sluice_event layout");

/*
 * `sluice capture`: samples of judged packets, copied by the data path
 * into the wr_capture_ring ring buffer at most `budget` a second (shared
 * by all CPUs), while wr_config.capture is set and the lease in
 * wr_capture has not run out.
 */
/* Bytes of a frame a capture record may hold (its snaplen's ceiling). */
#define SLUICE_CAPTURE_SNAPLEN_MAX	2048
/* A power of two: the data path bounds a copy's size with a mask of it (bpf/capture.h). */
_Static_assert((SLUICE_CAPTURE_SNAPLEN_MAX & (SLUICE_CAPTURE_SNAPLEN_MAX - 1)) == 0,
	       "snaplen ceiling a power of two");
/* Packets a second the data path may copy: the default and the ceiling. */
#define SLUICE_CAPTURE_BUDGET_DEF	1000
#define SLUICE_CAPTURE_BUDGET_MAX	100000
/* The capture renews its lease this often; the data path honours it this long. */
#define SLUICE_CAPTURE_RENEW_NS		1000000000ULL
#define SLUICE_CAPTURE_LEASE_NS		3000000000ULL
/* sluice_capture.rule_slot: no rule filter. */
#define SLUICE_CAPTURE_ANY_RULE		0xffff

/* sluice_capture.verdicts and sluice_capture_hdr.verdict (as 1 << verdict). */
enum sluice_capture_verdict {
	SLUICE_CV_PASSED = 0,
	SLUICE_CV_DROPPED = 1,
};

/* Why a captured packet got its verdict (sluice_capture_hdr.reason). */
enum sluice_capture_reason {
	SLUICE_CR_NO_RULE = 0,	/* IP that matched no rule (passed) */
	SLUICE_CR_RULE,		/* a rule's limits: rule_uid / rule_slot say which */
	SLUICE_CR_DENY,		/* the deny list */
	SLUICE_CR_ALLOW,	/* the allow list (passed) */
	SLUICE_CR_SHED,		/* adaptive shedding */
	SLUICE_CR_CAPACITY,	/* reserved capacity */
	SLUICE_CR_MALFORMED,	/* truncated or invalid IP */
	SLUICE_CR_COOKIE,	/* a SYN answered with a SYN cookie instead (dropped) */
	SLUICE_CR_FAULT,	/* an internal fault, under the fail policy */
	SLUICE_CR_MAX,
};

/* sluice_capture_hdr.flags */
enum sluice_capture_flags {
	SLUICE_CF_WOULD_DROP = 1 << 0,	/* passed by dry-run or the kill switch */
};

/*
 * The capture's control and budget, wr_capture[0]. Mappable: the capture
 * writes the lease word in place while the data path moves `window` by
 * compare-and-swap, so neither overwrites the other's word.
 */
struct sluice_capture {
	__u64 lease_ns;		/* data-path clock: copy nothing after this; 0: none */
	__u64 window;		/* second << 32 | packets copied in it (CAS) */
	__u32 budget;		/* packets a second, 1..SLUICE_CAPTURE_BUDGET_MAX */
	__u32 snaplen;		/* bytes of each frame, 1..SLUICE_CAPTURE_SNAPLEN_MAX */
	__u32 verdicts;		/* 1 << enum sluice_capture_verdict: which are copied */
	__u16 rule_slot;	/* only packets of this rule (sluice_rule.slot), or ANY_RULE */
	__u16 pad;
	__u32 pid;		/* the capture's process */
	__u32 pad2;
};
_Static_assert(sizeof(struct sluice_capture) == 40, "sluice_capture layout");

/* What the data path counted for the running capture (wr_capture_stats, per CPU). */
struct sluice_capture_stats {
	__u64 captured;		/* records written to the ring */
	__u64 lost_budget;	/* wanted, but over the second's budget */
	__u64 lost_ring;	/* within the budget, but the ring was full */
};
_Static_assert(sizeof(struct sluice_capture_stats) == 24, "sluice_capture_stats layout");

/* A record of wr_capture_ring: this header, then caplen bytes of the frame. */
struct sluice_capture_hdr {
	__u64 ts;		/* bpf_ktime_get_ns (CLOCK_MONOTONIC) when judged */
	__u32 rule_uid;		/* the rule that decided (sluice_rule.uid); 0: none */
	__u32 ifindex;		/* interface it arrived on */
	__u32 len;		/* the frame's whole length */
	__u16 caplen;		/* bytes that follow */
	__u16 rule_slot;	/* that rule's slot; SLUICE_CAPTURE_ANY_RULE: none */
	__u8 verdict;		/* enum sluice_capture_verdict */
	__u8 reason;		/* enum sluice_capture_reason */
	__u8 flags;		/* enum sluice_capture_flags */
	__u8 pad[5];
};
_Static_assert(sizeof(struct sluice_capture_hdr) == 32, "sluice_capture_hdr layout");

/* Signals the shedding controller reports (struct sluice_shed). */
#define SLUICE_MAX_SIGNALS	8
#define SLUICE_SIGNAL_NAME_LEN	32

/* sluice_shed.flags */
enum sluice_shed_flags {
	SLUICE_SHED_OFF = 1 << 0,	/* operator: shed nothing (S still tracked) */
	SLUICE_SHED_ACTIVE = 1 << 1,	/* a controller is running */
};

/*
 * Reserved capacity for one kind of cost: every class charges `total`
 * (the host's capacity); classes 1..3 also charge `noncrit`, which runs at
 * (1 - reserve) of it, so class 0 always keeps at least the reserve. A
 * rate of 0 means not configured. State: wr_capacity[2 * cost + 0/1].
 */
struct sluice_capacity {
	struct sluice_limit total;
	struct sluice_limit noncrit;
};

/*
 * Shedding, wr_shed[0]: per-class drop thresholds the data path applies,
 * and the controller's state, which is the source of truth for S: the CLI
 * reads and sets it here, and a restarted daemon adopts it. Written by the
 * daemon (and by `sluice shed`); fixed-point values are in millionths.
 */
struct sluice_shed {
	__u64 threshold[SLUICE_MAX_CLASS + 1];	/* shed if prandom_u32 < threshold */
	__u32 default_class;	/* class of traffic that matches no rule */
	__u32 flags;		/* enum sluice_shed_flags */
	struct sluice_capacity cap[2];	/* by enum sluice_cost */
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
	__s64 signal_micro[SLUICE_MAX_SIGNALS];	/* each signal's value x 1e6; < 0: unreadable */
	char signal_name[SLUICE_MAX_SIGNALS][SLUICE_SIGNAL_NAME_LEN];
};

/* Per-class counters, by class. Per-CPU. */
struct sluice_class_stats {
	__u64 pkts;		/* packets of this class seen by shedding */
	__u64 bytes;
	__u64 shed_pkts;	/* shed (dropped, or would-drop under the kill switch) */
	__u64 shed_bytes;
	__u64 cap_pkts;		/* refused by reserved capacity */
	__u64 cap_bytes;
};

/* Clock for the data path, a load-time tunable. */
enum sluice_clock {
	SLUICE_CLOCK_PRECISE = 0,	/* bpf_ktime_get_ns */
	SLUICE_CLOCK_COARSE = 1,	/* jiffies x tick: no call, tick steps */
	SLUICE_CLOCK_MANUAL = 2,	/* a global the tests set: deterministic time */
	SLUICE_CLOCK_AUTO = 3,		/* coarse, precise for rules with SLUICE_RF_PRECISE */
};

#endif /* SLUICE_H */
