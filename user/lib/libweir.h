/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libweir: the owners of weir's kernel state (loader, pins, maps, links,
 * libxdp's dispatcher, rule sets and their grammar, lists, per-source state,
 * shedding state, connection counts, the cookie guard). The front ends
 * (cmd/, config/, daemon/, fleet/, integrations/) build on it; it includes
 * nothing of theirs.
 */
#ifndef WEIR_LIBWEIR_H
#define WEIR_LIBWEIR_H

#include "util/util.h"
#include "weir_reflect.h"

#define WEIR_DEFAULT_ROOT "/sys/fs/bpf/weir"

/* Attach modes. */
enum wr_attach_mode { WR_MODE_NATIVE = 0, WR_MODE_GENERIC, WR_MODE_TC };
/* TC mode's hook: tcx if the kernel has it else clsact, or either alone. */
enum wr_tc_hook { WR_TC_HOOK_AUTO = 0, WR_TC_HOOK_TCX, WR_TC_HOOK_CLSACT };
extern const char *const wr_mode_names[3];
extern const char *const wr_tc_hook_names[3];
/*
 * XDP modes and libxdp's multi-program dispatcher (xdpmulti.c): auto joins
 * a dispatcher already on the interface and attaches alone to a free one;
 * libxdp always goes through one (making it if need be); off never does.
 */
enum wr_xdp_dispatcher { WR_DISP_AUTO = 0, WR_DISP_LIBXDP, WR_DISP_OFF };
extern const char *const wr_dispatcher_names[3];
/* weir's run priority in a dispatcher: after xdp-filter (10), before the default (50). */
#define WR_XDP_PRIO_DEFAULT 20

/*
 * How weir attaches to an interface: the options of `weir attach` and of an
 * interface in the config file, filled by the one parser below and handed
 * to wr_attach_locked() (as xdp-tools hands its params struct on).
 */
struct wr_attach_opts {
	int mode;		/* enum wr_attach_mode */
	int tc_hook;		/* enum wr_tc_hook: mode tc's hook */
	int dispatcher;		/* enum wr_xdp_dispatcher: XDP modes' sharing */
	unsigned int priority;	/* weir's run priority in libxdp's dispatcher */
};
#define WR_ATTACH_OPTS_DEFAULT { .mode = WR_MODE_NATIVE, .tc_hook = WR_TC_HOOK_AUTO, \
				 .dispatcher = WR_DISP_AUTO, .priority = WR_XDP_PRIO_DEFAULT }
/* The options by name, as attach and the config spell them (their bits in wr_attach_settle()). */
enum wr_attach_key { WR_AOPT_MODE, WR_AOPT_TC_HOOK, WR_AOPT_DISPATCHER, WR_AOPT_PRIORITY,
		     WR_AOPT_NR };
extern const char *const wr_attach_keys[WR_AOPT_NR];
/* The wr_attach_key named key, or -ENOENT. */
int wr_attach_key(const char *key);
/* The value val of option key into o: 0, or -EINVAL (what is valid: wr_attach_hint()). */
int wr_attach_opt(struct wr_attach_opts *o, int key, const char *val);
/* What the valid values of option key are: "native, generic or tc", "0 to 2147483647". */
void wr_attach_hint(int key, char *buf, size_t len);
/*
 * What the options given (a mask of 1 << WR_AOPT_*) say together: a
 * dispatcher and a priority are XDP's, a tc-hook mode tc's; a priority is a
 * place in libxdp's dispatcher, so it sets dispatcher libxdp and cannot go
 * with dispatcher off. 0, or -EINVAL with the key at fault in *bad and why
 * in buf.
 */
int wr_attach_settle(struct wr_attach_opts *o, unsigned int given, int *bad, char *why,
		     size_t len);
/* What holds an interface's XDP hook. */
enum { WR_HOOK_FREE = 0, WR_HOOK_DISPATCHER, WR_HOOK_OTHER };
struct wr_xdpm_info {
	__u32 dispatcher_id;	/* the dispatcher program */
	unsigned int prio;	/* weir's run priority in it */
	int count;		/* programs in it, weir's included */
	int mode;		/* enum wr_attach_mode it is attached in */
};
/* WR_HOOK_* of the hook for mode want, with the mode and program id of what is there; or -errno. */
int wr_xdpm_hook(int ifindex, int want, int *mode, __u32 *prog_id);
/* Is prog_id a program of the dispatcher on ifindex? 0 (info filled) or -ENOENT. */
int wr_xdpm_find(int ifindex, __u32 prog_id, struct wr_xdpm_info *info);
int wr_xdpm_attach(const char *dev, int ifindex, int mode, unsigned int prio, const char *pin);
int wr_xdpm_detach(int ifindex, int prog);

/*
 * Every map weir pins, once: the field of struct wr_maps, the pin name and
 * the shape (type, key and value size) the pinned map must have. The
 * struct, the names, the count and the shape checks all come from this
 * list; the loader checks it against the BPF object's own map definitions
 * on every load (wr_ensure_loaded), so the two cannot drift apart.
 * X(arg, field, type, key size, value size); the pin name is "wr_" field.
 */
/* The deny and allow tries' value. */
#define WR_LIST_VAL sizeof(struct weir_list_val)
#define WR_MAPS(X, arg)                                                                      \
	X(arg, config, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct weir_config))                   \
	X(arg, rulesets, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct weir_ruleset))                \
	X(arg, state, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct weir_set))                       \
	X(arg, agg, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct weir_state))                       \
	X(arg, agg_drops, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(__u64))                        \
	X(arg, src_drops, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct weir_src_wait))     \
	X(arg, rule_stats, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct weir_rule_stats))    \
	X(arg, global, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct weir_globals))          \
	X(arg, deny4, BPF_MAP_TYPE_LPM_TRIE, sizeof(struct weir_lpm4), WR_LIST_VAL)         \
	X(arg, deny6, BPF_MAP_TYPE_LPM_TRIE, sizeof(struct weir_lpm6), WR_LIST_VAL)         \
	X(arg, allow4, BPF_MAP_TYPE_LPM_TRIE, sizeof(struct weir_lpm4), WR_LIST_VAL)        \
	X(arg, allow6, BPF_MAP_TYPE_LPM_TRIE, sizeof(struct weir_lpm6), WR_LIST_VAL)        \
	X(arg, shed, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct weir_shed))                       \
	X(arg, capacity, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct weir_state))                  \
	X(arg, class_stats, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct weir_class_stats))  \
	X(arg, conns, BPF_MAP_TYPE_HASH, sizeof(struct weir_key), sizeof(struct weir_conns)) \
	X(arg, cookie_progs, BPF_MAP_TYPE_PROG_ARRAY, 4, 4)                                   \
	X(arg, cookie_agg, BPF_MAP_TYPE_ARRAY, 4, sizeof(__u64))                              \
	X(arg, cookie_dst, BPF_MAP_TYPE_LRU_HASH, sizeof(struct weir_ck_dst), sizeof(__u64))  \
	X(arg, verified, BPF_MAP_TYPE_LRU_HASH, sizeof(struct weir_verified_key), sizeof(__u64)) \
	X(arg, verified_hint, BPF_MAP_TYPE_ARRAY, 4, sizeof(__u64))                           \
	X(arg, events, BPF_MAP_TYPE_RINGBUF, 0, 0)                                            \
	X(arg, fleet_use, BPF_MAP_TYPE_LRU_HASH, sizeof(struct weir_key),                   \
	  sizeof(struct weir_fleet_use))                                                     \
	X(arg, fleet_status, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct weir_fleet_status))        \
	X(arg, capture, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct weir_capture))                 \
	X(arg, capture_stats, BPF_MAP_TYPE_PERCPU_ARRAY, 4,                                   \
	  sizeof(struct weir_capture_stats))                                                 \
	X(arg, capture_ring, BPF_MAP_TYPE_RINGBUF, 0, 0)                                      \
	X(arg, reflect, BPF_MAP_TYPE_LRU_HASH, sizeof(struct weir_flow_key), sizeof(__u64))  \
	X(arg, if_slot, BPF_MAP_TYPE_ARRAY, 4, 4)                                             \
	X(arg, if_stats, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct weir_if_stats))          \
	X(arg, tcp_seen, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct weir_tcp_seen))          \
	X(arg, feed_blk, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4)                                    \
	X(arg, feed_host, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4)                                   \
	X(arg, feed6, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4)                                       \
	X(arg, srcset4, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4)                                     \
	X(arg, srcset6, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4)

/* Pinned state: an fd per map of WR_MAPS, -1 when not open. */
#define WR__MAP_FIELD(arg, f, ...) int f;
struct wr_maps {
	WR_MAPS(WR__MAP_FIELD, )
};
#define WR__MAP_COUNT(arg, f, ...) +1
#define WR_NR_MAPS (0 WR_MAPS(WR__MAP_COUNT, ))
/* The shape each pinned map must have, in WR_MAPS order (maps.c). */
struct wr_map_shape {
	const char *name;
	__u32 type, key, value;
};
extern const struct wr_map_shape wr_map_shapes[];
/* Every fd of struct wr_maps, in WR_MAPS order. */
#define WR__MAP_FD(m, f, ...) &(m)->f,
#define WR_MAP_FDS(m) { WR_MAPS(WR__MAP_FD, m) }
_Static_assert(sizeof(struct wr_maps) == WR_NR_MAPS * sizeof(int), "one fd per map");
struct wr_load_opts {
	__u64 keys;		/* per-source buckets (wr_state ways); 0 for the default */
	int clock;		/* enum weir_clock */
};
/* pins.c: the bpffs root, its lock, and what is pinned under it (0 or -errno). */
int wr_pin_path(char *buf, size_t len, const char *name);
int wr_bpffs_ensure(const char *root);
/* mkdir -p with mode 0700: 0 or -errno. */
int wr_mkdir_p(const char *path);
int wr_lock(void);		/* exclusive lock on the root, for writers; returns fd */
int wr_lock_root(void);		/* wr_bpffs_ensure() and wr_lock(), saying why on failure */
void wr_unlock(int fd);
bool wr_is_loaded(void);
int wr_not_loaded(void);
/* 0, -ENOENT (nothing there) or -EACCES (may not look), said. */
int wr_probe_path(const char *path);
/* Say that we may not look under the bpffs root; returns -EACCES. */
int wr_denied(void);
/* Is the pinned program at path weir's (name and type)? 0 or -errno, said. */
int wr_check_prog(int fd, const char *path, const char *name, __u32 type);
/* loader.c: the BPF object, loaded for this kernel and pinned once. */
int wr_ensure_loaded(const struct wr_load_opts *lo);
/* The connection counter on the host's cgroup root, only while a rule needs it. */
int wr_conn_counter_sync(const struct wr_maps *m, const struct weir_ruleset *rs, bool live);
/* The clock the loaded programs read (enum weir_clock), or -errno. */
int wr_loaded_clock(void);
extern const char *const wr_clock_names[4];
/* Options only a fresh load sets, refused if they differ from the loaded ones. */
int wr_check_load_opts(const struct wr_load_opts *lo, bool keys_given, bool clock_given);
/* maps.c: every pinned map opened and checked; the config and the live rule set. */
int wr_maps_open(struct wr_maps *m);
void wr_maps_close(struct wr_maps *m);
void wr_maps_reset(struct wr_maps *m);
struct weir_ruleset *wr_live_get(const struct wr_maps *m);
int wr_config_read(const struct wr_maps *m, struct weir_config *cfg);
int wr_config_write(const struct wr_maps *m, const struct weir_config *cfg);
/* `set first-stage on|off` into *cfg, cache_on from the live rule set. */
int wr_first_stage_set(const struct wr_maps *m, struct weir_config *cfg, bool off);
int wr_read_live(const struct wr_maps *m, struct weir_ruleset *rs);
/*
 * session.c: a writer's session. Begin: a bpffs at the root, the root
 * locked, weir loaded if load is set, the maps open, expired deny/allow
 * entries removed. Returns the lock (>= 0) or -errno after saying why; end
 * it with wr_write_end() either way.
 */
int wr_write_begin(struct wr_maps *m, bool load);
void wr_write_end(struct wr_maps *m, int lock);
/*
 * The pinned link of ifindex: its interface's name (the name it was
 * attached as when the interface is gone) and mode (-1 if not recorded).
 * 0 if attached, -ENODEV if the interface is gone, -ENOENT if no link.
 */
int wr_link_describe(int ifindex, char *name, size_t len, int *mode);

/*
 * wr_state, the per-source buckets (state.c): an array of sets of
 * WEIR_WAYS ways. wr_state_find(): the bucket of key k under cfg's hash
 * seed and set count (read wr_config once for many keys), 0 or -ENOENT or
 * -errno. wr_state_walk(): cb for every occupied way until it returns
 * nonzero; returns that, 0 after the last set, or -errno.
 * wr_state_count(): occupied ways, and sets x WEIR_WAYS.
 */
int wr_state_find(int fd, const struct weir_config *cfg, const struct weir_key *k,
		  struct weir_state *st);
int wr_state_walk(int fd, int (*cb)(const struct weir_way *w, void *ctx), void *ctx);
int wr_state_count(int fd, __u64 *used, __u64 *capacity);
/* Attachments; call with the root lock held. */
int wr_attach_locked(const char *dev, int ifindex, const struct wr_attach_opts *o);
int wr_detach_ifindex(int ifindex);
int wr_list_links(int *ifindexes, int max);
/* SYN cookies (cookie.c): rules with action cookie in a set, and what they need. */
int wr_cookie_rules(const struct weir_ruleset *rs);
/*
 * What a rule set with cookie rules needs of the kernel and of where weir
 * is attached (hook, WR_CK_*, on dev: ruleset.c finds it from the links).
 */
int wr_cookie_prepare(struct weir_ruleset *next, struct weir_config *cfg, int hook,
		      const char *dev);
/*
 * Every peer of an established TCP connection of this network namespace
 * into wr_verified (and its hint), stamped now: a source whose handshake
 * came while nothing kept verified sources, which a rule with `spare
 * verified` is about to ask about. How many, or -errno.
 */
int wr_verified_seed(const struct wr_maps *m);
/*
 * The one guard of "cookie rules need plain XDP": rules with action cookie
 * answer SYNs from weir's own XDP program attached alone; in tc mode it
 * cannot send them, and in libxdp's dispatcher it cannot reach the
 * programs that make them. hook: where weir is, or is to be, on dev
 * (WR_CK_*); change: what is being made, an attachment beside the live
 * rules (attach), the rules beside an attachment (rule commit) or a
 * config's interface beside its rules (the daemon), which the reason
 * words. 0 if rs (NULL: no rules) and hook go together, else -EOPNOTSUPP
 * with the reason in why.
 */
enum wr_cookie_hook { WR_CK_XDP = 0, WR_CK_TC, WR_CK_DISPATCHER };
enum wr_cookie_change { WR_CK_ATTACH, WR_CK_RULES, WR_CK_CONFIG };
int wr_cookie_guard(const struct weir_ruleset *rs, int hook, const char *dev, int change,
		    char *why, size_t len);
/* The guard for attaching to dev at hook beside the live rules; the reason said (pr_err). */
int wr_cookie_attach_guard(const char *dev, int hook);
/* The deny and allow tries (lists.c); changes need the root lock held. */
int wr_list_walk(const struct wr_maps *m, bool deny, int family,
		 int (*cb)(const struct wr_cidr *c, const struct weir_list_val *v, void *ctx),
		 void *ctx);
int wr_list_count(const struct wr_maps *m, bool deny, int family, __u64 *n);
/* Whether an entry's expiry has passed at now (the data path's clock); 0 is permanent. */
static inline bool wr_list_expired(const struct weir_list_val *v, __u64 now)
{
	return v->expires_ns && v->expires_ns <= now;
}
int wr_list_add(const struct wr_maps *m, bool deny, const struct wr_cidr *c, __u64 ttl_ns,
		bool *kept);
int wr_list_del(const struct wr_maps *m, bool deny, const struct wr_cidr *c);
/* Many changes under one lock: each entry, then wr_list_bits() once. */
int wr_list_add_entry(const struct wr_maps *m, bool deny, const struct wr_cidr *c, __u64 ttl_ns,
		      bool *kept);
/* Many adds at once, as if one by one: each one's result in res[]. */
int wr_list_add_entries(const struct wr_maps *m, bool deny, const struct wr_cidr *c,
			const __u64 *ttl_ns, size_t n, int *res);
int wr_list_unban_entry(const struct wr_maps *m, bool deny, const struct wr_cidr *c);
/* The penalty box's deny entry for c (runtime, marked a ban), then the list bits. */
int wr_list_ban(const struct wr_maps *m, const struct wr_cidr *c, __u64 ttl_ns, bool *kept,
		__u16 rule_slot, __u32 nth);
/* 1 if a live entry of the list covers addr (a host, or a prefix), 0 if not, or -errno. */
int wr_list_covers(const struct wr_maps *m, bool deny, const struct wr_cidr *addr);
/* The name of the rule whose counter slot is slot_plus_one - 1 in rs, or NULL (0, gone, no rs). */
const char *wr_rule_name_by_slot(const struct weir_ruleset *rs, __u16 slot_plus_one);
int wr_list_bits(const struct wr_maps *m);
int wr_list_purge(const struct wr_maps *m, __u64 *n);
__u64 wr_list_expire(const struct wr_maps *m);
int wr_list_sync(const struct wr_maps *m, bool deny, const struct wr_cidr *v, int n);
/* Blocklist feeds' entries in the data path (feeds.c). */
#define WR_FEED_MAX_ENTRIES	(4u << 20)	/* entries of one parse, and of all feeds together */
struct wr_feed_entry {
	__u32 addr[4];		/* network byte order, masked */
	__u8 family;		/* 4 or 6 */
	__u8 plen;
	__u8 action;		/* enum weir_feed_action; WEIR_FA_CLASS_OF(N) */
	__u8 pad;
};
struct wr_feed_set {
	struct wr_feed_entry *v;
	size_t n, cap;
};
struct wr_feed_stats {
	__u64 prefixes4, prefixes6;	/* distinct prefixes written */
	__u64 split_blocks;		/* IPv4 /24s a longer prefix splits */
	__u64 host_entries;		/* their exceptions in wr_feed_host */
};
/* A feed's whole text into *out (each entry action); -EINVAL, err "line N: why". */
int wr_feed_parse(const char *buf, size_t len, int action, struct wr_feed_set *out, char *err,
		  size_t errlen);
int wr_feed_set_append(struct wr_feed_set *dst, const struct wr_feed_set *src);
void wr_feed_set_free(struct wr_feed_set *s);
/* c with action appended to s (grown by doubling); -E2BIG past WR_FEED_MAX_ENTRIES. */
int wr_feed_set_push(struct wr_feed_set *s, const struct wr_cidr *c, int action);
/*
 * Every feed's entries (all: sorted in place) as the data path's next
 * generation, swapped in at once; an empty set takes every feed entry
 * out. Caller holds the root lock.
 */
int wr_feed_apply(const struct wr_maps *m, struct wr_feed_set *all, struct wr_feed_stats *st);
/* "limit-class N" (N 0..WEIR_MAX_CLASS) into WEIR_FA_CLASS_OF(N), or -EINVAL. */
int wr_feed_class_parse(const char *s);
/* "limit-class N" for a WEIR_FA_CLASS value, or NULL for any other action. */
const char *wr_feed_class_name(int action);
/*
 * What the live feeds say of addr (a host, plen ignored): enum weir_feed_action
 * (WEIR_FA_CLASS_OF(N) for a limit-class) or -errno.
 */
int wr_feed_lookup(const struct wr_maps *m, const struct wr_cidr *addr);

/*
 * Source sets of rules (srcset.c): `src feed:NAME`, `src country:CC,..`,
 * `src asn:N,..`, each with an optional "!" (sources outside the set).
 */
/* Whether a src value w is a source set rather than a CIDR. */
bool wr_srcset_word(const char *w);
/* Whether w (a source set, "!" allowed) is well formed: 0, or -EINVAL with why. */
int wr_srcset_check(const char *w, char *why, size_t len);
/*
 * Rule i of rs names the source set `set` ("!" allowed): its slot in rs
 * (the slot that holds the same set, or a free one) into the rule. 0, or
 * -E2BIG with why when rs would name more than WEIR_SET_SRCSETS sets.
 */
int wr_srcset_put(struct weir_ruleset *rs, __u32 i, const char *set, char *why, size_t len);
/* The source sets rs's rules name. */
int wr_srcset_count(const struct weir_ruleset *rs);
/* What a source set ("feed:NAME", "country:DE") holds, into *out: 0 or -errno with why. */
typedef int (*wr_srcset_resolve_fn)(void *ctx, const char *set, struct wr_feed_set *out,
				    char *why, size_t len);
/*
 * Before committing next: its source sets placed beside the live set's
 * (a set both name keeps its slot; a new one takes a slot the live rules
 * do not name) and each filled from fn. Caller holds the root lock. 0, or
 * -errno with why (nothing the live rules read changed, but for a set
 * both name, refilled in place).
 */
int wr_srcsets_load(const struct wr_maps *m, struct weir_ruleset *next, wr_srcset_resolve_fn fn,
		    void *ctx, char *why, size_t len);
/* Slot slot's prefixes replaced by s's, in one swap per family. */
int wr_srcset_fill(const struct wr_maps *m, __u32 slot, const struct wr_feed_set *s);
/* The live rules' slots that hold set refilled from fn: how many, or -errno with why. */
int wr_srcsets_refill(const struct wr_maps *m, const char *set, wr_srcset_resolve_fn fn,
		      void *ctx, char *why, size_t len);
/* After a commit: the slots the live rules (live) do not name emptied. */
void wr_srcsets_release(const struct wr_maps *m, const struct weir_ruleset *live);
/* Prefixes of family fam in slot slot (0 for an empty slot), or -errno. */
long long wr_srcset_entries(const struct wr_maps *m, __u32 slot, int fam);
/* `weir status`: rs's source sets, each with its prefixes in force. */
void wr_srcset_status(const struct wr_maps *m, const struct weir_ruleset *rs);
int wr_link_mode(int ifindex);	/* enum wr_attach_mode, or -ENOENT / -ENODEV (interface gone) */
int wr_link_find_gone(const char *name);
int wr_link_ids(int ifindex, __u32 *link_id, __u32 *prog_id, bool *clsact);
/* The dispatcher weir joined on ifindex: 0 and info, or -ENOENT (attached alone, or not). */
int wr_link_xdpm(int ifindex, struct wr_xdpm_info *info);
int wr_count_all_links(void);
int wr_remove_all(void);

/*
 * Per-interface counters (ifstats.c): claim ifindex's slot when weir
 * attaches there (its counts from 0), free it when weir detaches; read its
 * counts, summed over CPUs (-ENOENT: it has no slot).
 */
int wr_if_claim(int ifindex);
int wr_if_release(int ifindex);
int wr_if_read(const struct wr_maps *m, int ifindex, struct weir_if_stats *out);

/*
 * bans: WEIR_MAX_LIMITS penalty boxes, one per limit (NULL: not wanted).
 * srcset: WEIR_SRCSET_LEN bytes for the rule's source set as given
 * ("!country:DE", "" for none), which the caller places with
 * wr_srcset_put (NULL: a source set is refused).
 */
int wr_rule_parse(int argc, char **argv, struct weir_rule *r, struct weir_ban *bans, char *srcset,
		  char *name, struct wr_perr *pe);
/* The index of the rule called name in rs, or -1. */
int wr_rule_find(const struct weir_ruleset *rs, const char *name);
/* Rule i of rs in the words `rule add` takes (text), or as an object (JSON). */
void wr_rule_print(const struct weir_ruleset *rs, __u32 i);

/*
 * The grammar of `rule add`, one entry a keyword (rules.c): the parser, the
 * printer, the usage and the config file's rule and limit keys all read it.
 */
enum wr_kw_scope {
	WR_KW_MATCH,		/* once a rule; a MATCH in the usage (class too) */
	WR_KW_RULE,		/* once a rule; after the limits in the usage */
	WR_KW_LIMIT,		/* starts a limit (a head): as many as a rule has limits */
	WR_KW_OPTION,		/* once a limit, after a head it follows */
};
/* The heads of a limit, as bits: what a head is, what an option follows. */
#define WR_KW_RATE	1u	/* limit RATE */
#define WR_KW_CONNS	2u	/* conns N */
struct wr_rule_parser;
struct wr_rule_kw {
	const char *word;	/* in `rule add` */
	const char *key;	/* in the config file: most are the word itself */
	int scope;		/* enum wr_kw_scope */
	unsigned int heads;	/* WR_KW_LIMIT: which head; WR_KW_OPTION: the heads it follows */
	const char *value;	/* its value in the usage: "ipv4|ipv6", "RATE" */
	/*
	 * NULL: one word of value. Else the value is a list of the words this
	 * accepts (one or more; the config's `per: [src/24, src6/48]`), and
	 * items says what they are, for errors.
	 */
	bool (*item)(const char *w);
	const char *items;
	/* Reads the value (at the parser's word); returns the words used, or -errno. */
	int (*parse)(struct wr_rule_parser *p);
	/* Prints what it says in a rule or in a limit, in the words `rule add` takes. */
	union {
		void (*rule)(const struct weir_rule *r);
		void (*limit)(const struct weir_limit *l);
	} print;
	const char *help;	/* in the usage: a MATCH's one line, else its own lines */
};
extern const struct wr_rule_kw wr_rule_kws[];
/* egress.c: weir_egress on the TC egress hook of each attached interface. */
int wr_egress_attach(const char *dev, int ifindex, bool clsact);
int wr_egress_detach(int ifindex);
void wr_egress_qdisc_release(int ifindex);
bool wr_egress_attached(int ifindex, bool *clsact);
/* reflect.c: the reflection preset (docs/reflection.md). */
struct wr_amp {
	__u16 port;		/* UDP source port of the amplifier, host byte order */
	const char *name;	/* its service */
};
extern const struct wr_amp wr_amps[];
extern const int wr_nr_amps;
int wr_preset_by_name(const char *name);
int wr_preset_finish(struct weir_rule *r, struct wr_perr *pe);
void wr_print_preset(const struct weir_rule *r);
void wr_print_preset_expanded(const struct weir_rule *r);
__u32 wr_reflect_rules(const struct weir_ruleset *rs);
void wr_reflect_status(const struct wr_maps *m, const struct weir_ruleset *rs);
extern const int wr_nr_rule_kws;
/* Whether name may name a rule; if not, pe (word 0) says why. */
int wr_rule_name(const char *name, struct wr_perr *pe);
/*
 * auto-N and auto-fN: the names weir auto gives its rules and the fleet's
 * (daemon/auto.c, daemon/auto_fleet.c), which the daemon keeps by name;
 * neither the config nor `rule add` may use them.
 */
bool wr_rule_name_auto(const char *name);
/*
 * Judge some words of a rule on their own, as the config judges each key
 * and then each limit: argv[0] is a keyword and the rest its value, or a
 * whole limit (a head, then its options). An option alone is read as in a
 * limit of the head it names (WR_KW_RATE or WR_KW_CONNS); a limit that the
 * words start is judged whole. 0, or -errno with pe naming the word.
 */
int wr_rule_check_words(int argc, char **argv, unsigned int head, struct wr_perr *pe);

/* A rule set change: replace the live set with new rules (by name). */
int wr_ruleset_commit(const struct wr_maps *m, struct weir_ruleset *next);
int wr_ruleset_index_why(struct weir_ruleset *rs, char *why, size_t len);

/* Sum a per-CPU value array of n __u64 words per CPU into out. */
int wr_percpu_sum(int map_fd, __u32 key, __u64 *out, size_t words);
/* Rule-wide bucket slot of wr_agg, its drops with the refusals still waiting per CPU; or -errno. */
int wr_agg_read(const struct wr_maps *m, __u32 slot, struct weir_state *st);
/* Entries one batched write of wr_map_put_many() carries at most. */
#define WR_PUT_CHUNK 4096u
int wr_map_put_many(int fd, const void *keys, size_t ksz, const void *vals, size_t vsz,
		    size_t n, int *res);
/* Every CPU's slots of wr_src_drops, read at once: refusals of per-source buckets still waiting. */
struct wr_src_waits {
	struct weir_src_wait *w;	/* slot-major: w[slot * ncpu + cpu] */
	int ncpu;
};
int wr_src_waits_read(const struct wr_maps *m, struct wr_src_waits *ws);
/* What waits for key k on every CPU: add it to its bucket's drops. */
__u64 wr_src_waiting(const struct wr_src_waits *ws, const struct weir_key *k);
void wr_src_waits_free(struct wr_src_waits *ws);
/* What waits for key k alone (its one slot, every CPU): 0 or -errno. */
int wr_src_waiting_key(const struct wr_maps *m, const struct weir_key *k, __u64 *n);

/*
 * A capture session (capture.c): the one reader of wr_capture_ring. open
 * maps the control and the ring (refusing, -EBUSY, while another live
 * process holds the lease) and drops what an earlier session left; start
 * takes the lease and sets the switch; poll reads samples into fn and
 * renews the lease (-EBUSY once another session took it over); stop clears
 * the switch and reads what was copied before; close frees it all (and
 * stops). fn returns 0 to go on.
 */
struct ring_buffer;
typedef int (*wr_capture_fn)(void *ctx, const struct weir_capture_hdr *h, const __u8 *frame);
struct wr_capture_opts {
	__u32 budget;		/* packets a second, 1..WEIR_CAPTURE_BUDGET_MAX */
	__u32 snaplen;		/* bytes of each frame, 1..WEIR_CAPTURE_SNAPLEN_MAX */
	__u32 verdicts;		/* 1 << enum weir_capture_verdict */
	__u16 rule_slot;	/* one rule's slot, or WEIR_CAPTURE_ANY_RULE */
	__u32 one_in;		/* about one in this many (rounded down to a power of two); 0: all */
};
struct wr_capture_sess {
	const struct wr_maps *m;
	struct weir_capture *ctl;	/* wr_capture[0], mapped */
	size_t ctl_len;
	struct ring_buffer *rb;
	wr_capture_fn fn;
	void *ctx;
	__u64 next_renew;
	__u64 malformed;	/* records shorter than their header says */
	bool started;
	bool draining;		/* discarding what an earlier session left */
};
int wr_capture_open(struct wr_capture_sess *s, const struct wr_maps *m, wr_capture_fn fn,
		    void *ctx);
int wr_capture_start(struct wr_capture_sess *s, const struct wr_capture_opts *o);
int wr_capture_poll(struct wr_capture_sess *s, int timeout_ms);
int wr_capture_stop(struct wr_capture_sess *s);
/* A started session's sampling, changed as it runs: one in n, rounded down to a power of two. */
void wr_capture_one_in(struct wr_capture_sess *s, __u32 n);
void wr_capture_close(struct wr_capture_sess *s);
int wr_capture_stats_read(const struct wr_maps *m, struct weir_capture_stats *st);
/* 0, or -EOPNOTSUPP (said) when an XDP attachment cannot copy (no bpf_xdp_load_bytes). */
int wr_capture_kernel_ok(void);

/* A bucket key's kind ("src", "all", "dst", "flow") and address (limit_keys.c). */
const char *wr_key_kind_name(unsigned int kind);
void wr_format_key(const struct weir_key *k, bool bare, char *buf, size_t len);


#endif /* WEIR_LIBWEIR_H */
