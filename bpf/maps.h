/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every map of the data path, and the read-only switches and globals the
 * loader sets between open and load. The pinned ones are the maps of
 * WR_MAPS (user/lib/libweir.h), which the loader checks against these.
 *
 * Part of weir.bpf.c, the one BPF object; includes what it uses.
 */
#ifndef WEIR_BPF_MAPS_H
#define WEIR_BPF_MAPS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "weir.h"

/* Load-time tunables, set between __open() and __load(). */
const volatile __u32 clock_mode = WEIR_CLOCK_AUTO;	/* enum weir_clock */
/*
 * The kernel has multi-buffer XDP (Linux 5.18: xdp.frags and
 * bpf_xdp_get_buff_len). Set by the loader from a probe; without it the
 * program loads without the frags flag and this read-only 0 makes the
 * verifier skip the helper's call as dead code.
 */
const volatile __u32 has_frags = 1;
/*
 * The kernel has bpf_loop (Linux 5.17). Without it (set by the loader from
 * a probe) the rules are walked by a bounded loop in a global function
 * instead, and the verifier never sees a bpf_loop call.
 */
const volatile __u32 has_bpf_loop = 1;

/*
 * The kernel has the raw SYN cookie helpers (bpf_tcp_raw_gen_syncookie_*,
 * bpf_tcp_raw_check_syncookie_*: Linux 6.0). Without them (set by the
 * loader from a probe) the verifier never sees the cookie code, and
 * `action cookie` rules are refused when added.
 */
const volatile __u32 has_syncookie = 1;

/* Ticks per second, from the kernel's config; 0 if libbpf could not read it. */
extern const int CONFIG_HZ __kconfig __weak;

/* The time under WEIR_CLOCK_MANUAL; written by tests through the skeleton. */
__u64 manual_now_ns = 0;

/*
 * CAS attempts on one word before giving up. A rate limit's bucket that
 * keeps losing is contention, not a fault: the packet is refused and
 * counted (WR_EV_CONTENDED, weir.bpf.c).
 */
#define WR_CAS_TRIES	8
/* Bytes of a non-linear skb pulled into the head so the parser sees the headers. */
#define WR_TC_PULL	256

/* Global switches, one entry; written by the controller. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct weir_config);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_config SEC(".maps");

/* Two rule sets; wr_config.active names the live one. Written by the controller. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct weir_ruleset);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_rulesets SEC(".maps");

/*
 * Per-source buckets, keyed by rule uid, limit and masked source: sets of
 * WEIR_WAYS ways (struct weir_set), the set picked by a keyed hash.
 * An array, so a lookup is inlined and costs no call, and a new key takes
 * a way with one compare-and-swap instead of the LRU's locks. An evicted
 * bucket reads as full again, which can only admit more, never less.
 * Written by the data path; max_entries (sets) set at load time. Mappable:
 * the daemon's fleet sync folds the fleet's use into a bucket with the same
 * compare-and-swap on the same memory (include/weir_state.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, WEIR_DEFAULT_KEYS / WEIR_WAYS);
	__type(key, __u32);
	__type(value, struct weir_set);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_state SEC(".maps");

/*
 * Established TCP connections per connection-limit key. A plain hash, never
 * LRU: a count that vanished would let a source past its cap. Written by
 * wr_sockops (atomic add/sub); the daemon corrects counts that leaked.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WEIR_CONN_MAX);
	__type(key, struct weir_key);
	__type(value, struct weir_conns);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_conns SEC(".maps");

/* The connection-limit keys each counted socket was counted under. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct weir_sock_conns);
} wr_sock_conns SEC(".maps");

/*
 * Rule-wide buckets, indexed by weir_limit.agg_slot; zeroed by the
 * controller. Mappable, like wr_state, for the fleet sync's fold.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, WEIR_AGG_SLOTS);
	__type(key, __u32);
	__type(value, struct weir_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_agg SEC(".maps");

/*
 * Refusals by each rule-wide bucket (indexed as wr_agg) on this CPU that
 * its drops count does not hold yet (note_drop): per CPU, so that a flood
 * every CPU refuses writes no shared line per packet. Added to the bucket
 * by the next refusal that writes it; readers add what is here (summed
 * over CPUs) to the bucket's drops. Zeroed with the bucket.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WEIR_AGG_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_agg_drops SEC(".maps");

/*
 * Refusals of per-source buckets on this CPU that their drops do not hold
 * yet, a key a slot (struct weir_src_wait; note_drop). Per CPU, as
 * wr_agg_drops; readers add what waits for a key on every CPU.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WEIR_SRC_WAIT_SLOTS);
	__type(key, __u32);
	__type(value, struct weir_src_wait);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_src_drops SEC(".maps");

/*
 * Hot keys of fleet-wide limits and what was charged to them here: the
 * data path inserts a key once its bucket is half spent and adds each
 * charge (atomic add); the daemon reads the growth, sends it to the fleet
 * and removes keys gone cold. LRU: under a flood of hot keys the coldest
 * go, and a key that comes back starts over from its bucket.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, WEIR_FLEET_KEYS);
	__type(key, struct weir_key);
	__type(value, struct weir_fleet_use);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_fleet_use SEC(".maps");

/* The daemon's fleet sync, for `weir fleet status` and /metrics; never read here. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct weir_fleet_status);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_fleet_status SEC(".maps");

/* Per-rule counters by weir_rule.slot. Per-CPU: plain adds, no atomics needed. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WEIR_STATS_SLOTS);
	__type(key, __u32);
	__type(value, struct weir_rule_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_rule_stats SEC(".maps");

/*
 * Global counters, one struct weir_globals (by enum weir_global): one
 * lookup for the parse's and the lists' counts, one for the verdict's.
 * Per-CPU: plain adds, no atomics needed.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct weir_globals);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_global SEC(".maps");

/* Per-interface counters (include/weir.h: WEIR_IF_SLOTS): the slots' owners. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WEIR_IF_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_if_slot SEC(".maps");

/* And their counts, per CPU: plain adds. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WEIR_IF_SLOTS);
	__type(key, __u32);
	__type(value, struct weir_if_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_if_stats SEC(".maps");

/* Shedding thresholds, default class, reserved capacity; written by the controller. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct weir_shed);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_shed SEC(".maps");

/* Reserved-capacity buckets: [2 * cost + 0] total, [2 * cost + 1] classes 1..3. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct weir_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_capacity SEC(".maps");

/* Per-class counters by class. Per-CPU: plain adds. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WEIR_MAX_CLASS + 1);
	__type(key, __u32);
	__type(value, struct weir_class_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_class_stats SEC(".maps");

/* "Started being limited" events for the daemon; written by the data path. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_events SEC(".maps");

/*
 * `weir capture`: its lease, filters and per-second budget (struct
 * weir_capture). Written by the capture (lease, filters; in place through
 * mmap) and by the data path (the budget's window, compare-and-swap).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct weir_capture);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_capture SEC(".maps");

/* What the data path counted for the capture. Per-CPU: plain adds; zeroed by the capture. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct weir_capture_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_capture_stats SEC(".maps");

/*
 * Captured packets (struct weir_capture_hdr, then the frame's bytes) for
 * the capture to read. 2 MiB: over a second of full-size frames at the
 * default budget.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 2 * 1024 * 1024);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_capture_ring SEC(".maps");

/*
 * Deny and allow lists: source prefixes, each with its expiry (0:
 * permanent), written by the controller.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, WEIR_LIST_MAX);
	__type(key, struct weir_lpm4);
	__type(value, struct weir_list_val);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_deny4 SEC(".maps"), wr_allow4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, WEIR_LIST_MAX);
	__type(key, struct weir_lpm6);
	__type(value, struct weir_list_val);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_deny6 SEC(".maps"), wr_allow6 SEC(".maps");

/*
 * Blocklist feeds, double-buffered: slot WEIR_L_FEED_GEN of each is what
 * the data path reads; the controller builds the other slot's inner maps
 * whole (user/lib/feeds.c) and flips the bit. Only these templates are
 * created with the object: the inner maps exist while a feed does.
 *  - wr_feed_blk: IPv4 /24 states, 2 bits each (weir_feed_action); mmapped
 *    by the controller to be written in one copy;
 *  - wr_feed_host: the addresses and /24 defaults of split /24s;
 *  - wr_feed6: IPv6 prefixes, longest match.
 */
struct wr_feed_blk_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WEIR_FEED_WORDS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(map_flags, BPF_F_MMAPABLE);
};
struct wr_feed_host_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u32);
};
struct wr_feed6_map {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1);
	__type(key, struct weir_lpm6);
	__type(value, __u32);
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct wr_feed_blk_map);
} wr_feed_blk SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct wr_feed_host_map);
} wr_feed_host SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct wr_feed6_map);
} wr_feed6 SEC(".maps");

/*
 * The cookie programs the XDP entry tail-calls (bpf/cookie.h), by enum
 * weir_cookie_prog; filled by the loader after load, empty on a kernel
 * without the raw cookie helpers.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, WEIR_CK_PROGS);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_cookie_progs SEC(".maps");

/*
 * SYN cookies: each action cookie rule's rule-wide SYN-ACK budget, a GCRA
 * TAT by weir_rule.slot. Written by the data path (compare-and-swap).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WEIR_STATS_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_cookie_agg SEC(".maps");

/*
 * The per-destination SYN-ACK budget: a GCRA TAT per (rule, address the
 * SYN-ACK goes to). LRU: an evicted destination starts a full budget
 * again, still under the rule-wide one. Written by the data path.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, WEIR_CK_DST_MAX);
	__type(key, struct weir_ck_dst);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_cookie_dst SEC(".maps");

/*
 * Verified sources: addresses that completed a TCP handshake with this
 * host, with the CLOCK_MONOTONIC ns of the latest. Written by wr_sockops
 * while wr_config.verified_ttl_ns is set; an entry older than that is
 * ignored (and the LRU drops the oldest when full). Read by the data path
 * for rules with a verified-class.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, WEIR_VERIFIED_MAX);
	__type(key, struct weir_verified_key);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_verified SEC(".maps");

/*
 * wr_verified's hint (WEIR_VERIFIED_HINTS): per slot the CLOCK_MONOTONIC
 * ns of the latest verification of a source hashing there, written with
 * wr_verified. A flood of unverified sources is told so by this array
 * (inlined, no helper call) and meets the hash lookup only in fresh slots.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WEIR_VERIFIED_HINTS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} wr_verified_hint SEC(".maps");

/*
 * Source sets of rules (`src feed:NAME`, `src country:..`, `src asn:..`),
 * by slot (weir_rule.srcset): each slot an inner LPM trie of the set's
 * prefixes, value 1. Written by the controller (user/lib/srcset.c): a
 * new inner map filled whole, then swapped into its slot; a slot with no
 * inner map is an empty set. The IPv4 key is struct weir_lpm4, the first
 * 8 bytes of struct weir_lpm6, as the deny and allow tries have it.
 */
struct wr_srcset4_map {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(struct weir_lpm4));
	__uint(value_size, sizeof(__u8));
	__uint(map_flags, BPF_F_NO_PREALLOC);
};
struct wr_srcset6_map {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(struct weir_lpm6));
	__uint(value_size, sizeof(__u8));
	__uint(map_flags, BPF_F_NO_PREALLOC);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, WEIR_MAX_SRCSETS);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct wr_srcset4_map);
} wr_srcset4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, WEIR_MAX_SRCSETS);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct wr_srcset6_map);
} wr_srcset6 SEC(".maps");

#endif /* WEIR_BPF_MAPS_H */
