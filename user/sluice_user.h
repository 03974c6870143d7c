/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* sluice userspace: what the controller's files share. */
#ifndef SLUICE_USER_H
#define SLUICE_USER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>
#include "sluice.h"

#define SLUICE_DEFAULT_ROOT "/sys/fs/bpf/sluice"

/* Global options, set once by main(). */
struct sl_opts {
	const char *root;	/* bpffs directory holding sluice's pins */
	bool json;
	bool pretty;
	bool debug;
	bool help;		/* `sluice OBJECT help`: usage is what was asked for */
};
extern struct sl_opts opts;
/* Where usage goes: stdout when help was asked for, else stderr (a mistake). */
static inline FILE *sl_usage_out(void)
{
	return opts.help ? stdout : stderr;
}

/* Logging: to stderr; an error in JSON mode is {"error": "..."} on stdout. */
void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One printing path for text and JSON (iproute2 style). */
void out_begin(void);
void out_end(void);
void open_object(const char *key);
void close_object(void);
void open_array(const char *key);
void close_array(void);
/* In JSON: "key": value. In text: printf(fmt, value); fmt NULL prints nothing. */
void print_str(const char *key, const char *fmt, const char *v);
void print_u64(const char *key, const char *fmt, uint64_t v);
void print_s64(const char *key, const char *fmt, int64_t v);
void print_bool(const char *key, const char *fmt, bool v);
void print_double(const char *key, const char *fmt, double v);
void print_null(const char *key, const char *text);
/* Text mode only. */
void print_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Strict argument parsing: 0 or -EINVAL/-ERANGE, with the bad word named by the caller. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int parse_rate(const char *s, uint64_t *rate, int *cost);
int parse_rate_per(const char *s, uint64_t *rate, int *cost, uint32_t *period_ms);
void format_rate_per(uint64_t rate, int cost, uint32_t period_ms, char *buf, size_t len);
int parse_size(const char *s, uint64_t *out);
struct sl_cidr {
	int family;		/* 4 or 6 */
	__u32 addr[4];		/* network byte order, masked */
	unsigned int plen;
};
int parse_cidr(const char *s, struct sl_cidr *c);
/* A duration: 600 (seconds), 90s, 10m, 2h, 1d, 1h30m, 1.5s, 250ms; -EINVAL / -ERANGE. */
int sl_parse_duration_ns(const char *s, uint64_t *ns);
void sl_format_secs(__u64 secs, char *buf, size_t len);
/* CLOCK_MONOTONIC in ns: the data path's clock, as userspace reads it. */
__u64 sl_mono_ns(void);
int parse_port_range(const char *s, __u16 *lo, __u16 *hi);
int parse_proto(const char *s, __u8 *proto);
int parse_tcp_flags(const char *s, __u8 *value, __u8 *mask);
const char *proto_name(__u8 proto, char *buf, size_t len);
void format_cidr(int family, const __u32 *addr, unsigned int plen, char *buf, size_t len);
void format_rate(uint64_t rate, int cost, char *buf, size_t len);
void format_tcp_flags(__u8 value, __u8 mask, char *buf, size_t len);
bool is_prefix(const char *word, const char *full);
/* A second-level command table: `sluice OBJECT NAME ARGS...`. */
struct sl_cmd {
	const char *name;
	int (*fn)(int argc, char **argv, void *ctx);	/* argv after NAME */
	bool exact;		/* the whole word only (on/off), not a prefix of it */
};
int sl_cmd_select(const struct sl_cmd *cmds, size_t n, const char *object, int argc,
		  char **argv, void *ctx, void (*usage)(void *ctx));

/* Attach modes. */
enum sl_attach_mode { SL_MODE_NATIVE = 0, SL_MODE_GENERIC, SL_MODE_TC };
/* TC mode's hook: tcx if the kernel has it else clsact, or either alone. */
enum sl_tc_hook { SL_TC_HOOK_AUTO = 0, SL_TC_HOOK_TCX, SL_TC_HOOK_CLSACT };
extern int tc_hook;
extern const char *const sl_mode_names[3];
/*
 * XDP modes and libxdp's multi-program dispatcher (xdpmulti.c): auto joins
 * a dispatcher already on the interface and attaches alone to a free one;
 * libxdp always goes through one (making it if need be); off never does.
 */
enum sl_xdp_dispatcher { SL_DISP_AUTO = 0, SL_DISP_LIBXDP, SL_DISP_OFF };
extern int xdp_dispatcher;
extern const char *const sl_dispatcher_names[3];
/* sluice's run priority in a dispatcher: after xdp-filter (10), before the default (50). */
#define SL_XDP_PRIO_DEFAULT 20
extern unsigned int xdp_priority;
/* What holds an interface's XDP hook. */
enum { SL_HOOK_FREE = 0, SL_HOOK_DISPATCHER, SL_HOOK_OTHER };
struct sl_xdpm_info {
	__u32 dispatcher_id;	/* the dispatcher program */
	unsigned int prio;	/* sluice's run priority in it */
	int count;		/* programs in it, sluice's included */
	int mode;		/* enum sl_attach_mode it is attached in */
};
/* SL_HOOK_* of the hook for mode want, with the mode and program id of what is there; or -errno. */
int sl_xdpm_hook(int ifindex, int want, int *mode, __u32 *prog_id);
/* Is prog_id a program of the dispatcher on ifindex? 0 (info filled) or -ENOENT. */
int sl_xdpm_find(int ifindex, __u32 prog_id, struct sl_xdpm_info *info);
int sl_xdpm_attach(const char *dev, int ifindex, int mode, unsigned int prio, const char *pin);
int sl_xdpm_detach(int ifindex, int prog);
/* -EOPNOTSUPP (said) if the live rules have action cookie, which a dispatcher cannot answer. */
int sl_xdpm_cookie_check(const char *dev);

/*
 * Every map sluice pins, once: the field of struct sl_maps, the pin name and
 * the shape (type, key and value size) the pinned map must have. The
 * struct, the names, the count and the shape checks all come from this
 * list; the loader checks it against the BPF object's own map definitions
 * on every load (sl_ensure_loaded), so the two cannot drift apart.
 * X(arg, field, type, key size, value size); the pin name is "sl_" field.
 */
/* The deny and allow tries' value. */
#define SL_LIST_VAL sizeof(struct sluice_list_val)
#define SL_MAPS(X, arg)                                                                      \
	X(arg, config, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct sluice_config))                   \
	X(arg, rulesets, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct sluice_ruleset))                \
	X(arg, state, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct sluice_set))                       \
	X(arg, agg, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct sluice_state))                       \
	X(arg, agg_drops, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(__u64))                        \
	X(arg, src_drops, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct sluice_src_wait))     \
	X(arg, rule_stats, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct sluice_rule_stats))    \
	X(arg, global, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct sluice_globals))          \
	X(arg, deny4, BPF_MAP_TYPE_LPM_TRIE, sizeof(struct sluice_lpm4), SL_LIST_VAL)         \
	X(arg, deny6, BPF_MAP_TYPE_LPM_TRIE, sizeof(struct sluice_lpm6), SL_LIST_VAL)         \
	X(arg, allow4, BPF_MAP_TYPE_LPM_TRIE, sizeof(struct sluice_lpm4), SL_LIST_VAL)        \
	X(arg, allow6, BPF_MAP_TYPE_LPM_TRIE, sizeof(struct sluice_lpm6), SL_LIST_VAL)        \
	X(arg, shed, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct sluice_shed))                       \
	X(arg, capacity, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct sluice_state))                  \
	X(arg, class_stats, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct sluice_class_stats))  \
	X(arg, conns, BPF_MAP_TYPE_HASH, sizeof(struct sluice_key), sizeof(struct sluice_conns)) \
	X(arg, cookie_progs, BPF_MAP_TYPE_PROG_ARRAY, 4, 4)                                   \
	X(arg, cookie_agg, BPF_MAP_TYPE_ARRAY, 4, sizeof(__u64))                              \
	X(arg, cookie_dst, BPF_MAP_TYPE_LRU_HASH, sizeof(struct sluice_ck_dst), sizeof(__u64))  \
	X(arg, verified, BPF_MAP_TYPE_LRU_HASH, sizeof(struct sluice_verified_key), sizeof(__u64)) \
	X(arg, events, BPF_MAP_TYPE_RINGBUF, 0, 0)                                            \
	X(arg, fleet_use, BPF_MAP_TYPE_LRU_HASH, sizeof(struct sluice_key),                   \
	  sizeof(struct sluice_fleet_use))                                                     \
	X(arg, fleet_status, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct sluice_fleet_status))        \
	X(arg, capture, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct sluice_capture))                 \
	X(arg, capture_stats, BPF_MAP_TYPE_PERCPU_ARRAY, 4,                                   \
	  sizeof(struct sluice_capture_stats))                                                 \
	X(arg, capture_ring, BPF_MAP_TYPE_RINGBUF, 0, 0)

/* Pinned state: an fd per map of SL_MAPS, -1 when not open. */
#define SL__MAP_FIELD(arg, f, ...) int f;
struct sl_maps {
	SL_MAPS(SL__MAP_FIELD, )
};
#define SL__MAP_COUNT(arg, f, ...) +1
#define SL_NR_MAPS (0 SL_MAPS(SL__MAP_COUNT, ))
/* The shape each pinned map must have, in SL_MAPS order (maps.c). */
struct sl_map_shape {
	const char *name;
	__u32 type, key, value;
};
extern const struct sl_map_shape sl_map_shapes[];
/* Every fd of struct sl_maps, in SL_MAPS order. */
#define SL__MAP_FD(m, f, ...) &(m)->f,
#define SL_MAP_FDS(m) { SL_MAPS(SL__MAP_FD, m) }
_Static_assert(sizeof(struct sl_maps) == SL_NR_MAPS * sizeof(int), "one fd per map");
struct sl_load_opts {
	__u64 keys;		/* per-source buckets (sl_state ways); 0 for the default */
	int clock;		/* enum sluice_clock */
};
int sl_bpffs_ensure(const char *root);
int sl_lock(void);		/* exclusive lock on the root, for writers; returns fd */
int sl_lock_root(void);		/* sl_bpffs_ensure() and sl_lock(), saying why on failure */
void sl_unlock(int fd);
int sl_ensure_loaded(const struct sl_load_opts *lo);
bool sl_is_loaded(void);
int sl_maps_open(struct sl_maps *m);
void sl_maps_close(struct sl_maps *m);
void sl_maps_reset(struct sl_maps *m);
int sl_write_begin(struct sl_maps *m, bool load);
void sl_write_end(struct sl_maps *m, int lock);
struct sluice_ruleset *sl_live_get(const struct sl_maps *m);
int sl_config_read(const struct sl_maps *m, struct sluice_config *cfg);
int sl_config_write(const struct sl_maps *m, const struct sluice_config *cfg);
int sl_read_live(const struct sl_maps *m, struct sluice_ruleset *rs);
int sl_pin_path(char *buf, size_t len, const char *name);
int sl_not_loaded(void);
/* The connection counter on the host's cgroup root, only while a rule needs it. */
int sl_conn_counter_sync(const struct sl_maps *m, const struct sluice_ruleset *rs, bool live);
/* The clock the loaded programs read (enum sluice_clock), or -errno. */
int sl_loaded_clock(void);
extern const char *const sl_clock_names[4];
/*
 * The pinned link of ifindex: its interface's name (the name it was
 * attached as when the interface is gone) and mode (-1 if not recorded).
 * 0 if attached, -ENODEV if the interface is gone, -ENOENT if no link.
 */
int sl_link_describe(int ifindex, char *name, size_t len, int *mode);
/* Say that we may not look under the bpffs root; returns -EACCES. */
int sl_denied(void);

/*
 * sl_state, the per-source buckets (state.c): an array of sets of
 * SLUICE_WAYS ways. sl_state_find(): the bucket of key k under cfg's hash
 * seed and set count (read sl_config once for many keys), 0 or -ENOENT or
 * -errno. sl_state_walk(): cb for every occupied way until it returns
 * nonzero; returns that, 0 after the last set, or -errno.
 * sl_state_count(): occupied ways, and sets x SLUICE_WAYS.
 */
int sl_state_find(int fd, const struct sluice_config *cfg, const struct sluice_key *k,
		  struct sluice_state *st);
int sl_state_walk(int fd, int (*cb)(const struct sluice_way *w, void *ctx), void *ctx);
int sl_state_count(int fd, __u64 *used, __u64 *capacity);
/* Attachments; call with the root lock held. */
int sl_attach_locked(const char *dev, int ifindex, int mode);
int sl_detach_ifindex(int ifindex);
int sl_list_links(int *ifindexes, int max);
/* SYN cookies (cookie.c): rules with action cookie in a set, and what they need. */
int sl_cookie_rules(const struct sluice_ruleset *rs);
int sl_cookie_prepare(struct sluice_ruleset *next, struct sluice_config *cfg);
int sl_cookie_attach_check(const struct sl_maps *m, int mode);
/* The deny and allow tries (lists.c); changes need the root lock held. */
int sl_list_walk(const struct sl_maps *m, bool deny, int family,
		 int (*cb)(const struct sl_cidr *c, const struct sluice_list_val *v, void *ctx),
		 void *ctx);
int sl_list_count(const struct sl_maps *m, bool deny, int family, __u64 *n);
int sl_list_add(const struct sl_maps *m, bool deny, const struct sl_cidr *c, __u64 ttl_ns,
		bool *kept);
int sl_list_del(const struct sl_maps *m, bool deny, const struct sl_cidr *c);
/* Many changes under one lock: each entry, then sl_list_bits() once. */
int sl_list_add_entry(const struct sl_maps *m, bool deny, const struct sl_cidr *c, __u64 ttl_ns,
		      bool *kept);
int sl_list_unban_entry(const struct sl_maps *m, bool deny, const struct sl_cidr *c);
int sl_list_bits(const struct sl_maps *m);
int sl_list_purge(const struct sl_maps *m, __u64 *n);
__u64 sl_list_expire(const struct sl_maps *m);
int sl_list_sync(const struct sl_maps *m, bool deny, const struct sl_cidr *v, int n);
int sl_link_mode(int ifindex);	/* enum sl_attach_mode, or -ENOENT / -ENODEV (interface gone) */
/* Its name (as attached, if gone: -ENODEV) and mode; -ENOENT if not attached. */
int sl_link_describe(int ifindex, char *name, size_t len, int *mode);
int sl_link_find_gone(const char *name);
int sl_link_ids(int ifindex, __u32 *link_id, __u32 *prog_id, bool *clsact);
/* The dispatcher sluice joined on ifindex: 0 and info, or -ENOENT (attached alone, or not). */
int sl_link_xdpm(int ifindex, struct sl_xdpm_info *info);
int sl_count_all_links(void);
int sl_remove_all(void);
/* A pinned program of the expected name and type (links.c), for the loader too. */
int sl_check_prog(int fd, const char *path, const char *name, __u32 type);
/* 0, -ENOENT (nothing there) or -EACCES (may not look), said. */
int sl_probe_path(const char *path);
/* Options only a fresh load sets, refused if they differ from the loaded ones. */
int sl_check_load_opts(const struct sl_load_opts *lo, bool keys_given, bool clock_given);

/* An error in a list of words: which word (-1: none in particular), and what. */
struct sl_perr {
	int word;
	char msg[256];
};
int sl_rule_parse(int argc, char **argv, struct sluice_rule *r, char *name, struct sl_perr *pe);
/* Rule i of rs in the words `rule add` takes (text), or as an object (JSON). */
void sl_rule_print(const struct sluice_ruleset *rs, __u32 i);

/*
 * The grammar of `rule add`, one entry a keyword (rules.c): the parser, the
 * printer, the usage and the config file's rule and limit keys all read it.
 */
enum sl_kw_scope {
	SL_KW_MATCH,		/* once a rule; a MATCH in the usage (class too) */
	SL_KW_RULE,		/* once a rule; after the limits in the usage */
	SL_KW_LIMIT,		/* starts a limit (a head): as many as a rule has limits */
	SL_KW_OPTION,		/* once a limit, after a head it follows */
};
/* The heads of a limit, as bits: what a head is, what an option follows. */
#define SL_KW_RATE	1u	/* limit RATE */
#define SL_KW_CONNS	2u	/* conns N */
struct sl_rule_parser;
struct sl_rule_kw {
	const char *word;	/* in `rule add` */
	const char *key;	/* in the config file: most are the word itself */
	int scope;		/* enum sl_kw_scope */
	unsigned int heads;	/* SL_KW_LIMIT: which head; SL_KW_OPTION: the heads it follows */
	const char *value;	/* its value in the usage: "ipv4|ipv6", "RATE" */
	/*
	 * NULL: one word of value. Else the value is a list of the words this
	 * accepts (one or more; the config's `per: [src/24, src6/48]`), and
	 * items says what they are, for errors.
	 */
	bool (*item)(const char *w);
	const char *items;
	/* Reads the value (at the parser's word); returns the words used, or -errno. */
	int (*parse)(struct sl_rule_parser *p);
	/* Prints what it says in a rule or in a limit, in the words `rule add` takes. */
	union {
		void (*rule)(const struct sluice_rule *r);
		void (*limit)(const struct sluice_limit *l);
	} print;
	const char *help;	/* in the usage: a MATCH's one line, else its own lines */
};
extern const struct sl_rule_kw sl_rule_kws[];
extern const int sl_nr_rule_kws;
/* Whether name may name a rule; if not, pe (word 0) says why. */
int sl_rule_name(const char *name, struct sl_perr *pe);
/*
 * Judge some words of a rule on their own, as the config judges each key
 * and then each limit: argv[0] is a keyword and the rest its value, or a
 * whole limit (a head, then its options). An option alone is read as in a
 * limit of the head it names (SL_KW_RATE or SL_KW_CONNS); a limit that the
 * words start is judged whole. 0, or -errno with pe naming the word.
 */
int sl_rule_check_words(int argc, char **argv, unsigned int head, struct sl_perr *pe);

/* A rule set change: replace the live set with new rules (by name). */
int sl_ruleset_commit(const struct sl_maps *m, struct sluice_ruleset *next);
int sl_ruleset_index_why(struct sluice_ruleset *rs, char *why, size_t len);

/* Objects of the command line: argc/argv start after the object word. */
int do_attach(int argc, char **argv);
int do_detach(int argc, char **argv);
int do_status(int argc, char **argv);
int do_rule(int argc, char **argv);
int do_deny(int argc, char **argv);
int do_crowdsec(int argc, char **argv);
int do_allow(int argc, char **argv);
int do_stats(int argc, char **argv);
int do_top(int argc, char **argv);
int do_disable(int argc, char **argv);
int do_enable(int argc, char **argv);
int do_set(int argc, char **argv);
int do_capture(int argc, char **argv);
/* The capture's switch and lease, for `sluice status` (capture.c). */
void sl_capture_status(const struct sl_maps *m, const struct sluice_config *cfg);

/* Monotonic ns on the data path's clock. */
__u64 sl_now_ns(void);
/* Sum a per-CPU value array of n __u64 words per CPU into out. */
int sl_percpu_sum(int map_fd, __u32 key, __u64 *out, size_t words);
/* Rule-wide bucket slot of sl_agg, its drops with the refusals still waiting per CPU; or -errno. */
int sl_agg_read(const struct sl_maps *m, __u32 slot, struct sluice_state *st);
/* Every CPU's slots of sl_src_drops, read at once: refusals of per-source buckets still waiting. */
struct sl_src_waits {
	struct sluice_src_wait *w;	/* slot-major: w[slot * ncpu + cpu] */
	int ncpu;
};
int sl_src_waits_read(const struct sl_maps *m, struct sl_src_waits *ws);
/* What waits for key k on every CPU: add it to its bucket's drops. */
__u64 sl_src_waiting(const struct sl_src_waits *ws, const struct sluice_key *k);
void sl_src_waits_free(struct sl_src_waits *ws);
/* What waits for key k alone (its one slot, every CPU): 0 or -errno. */
int sl_src_waiting_key(const struct sl_maps *m, const struct sluice_key *k, __u64 *n);

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif /* SLUICE_USER_H */
