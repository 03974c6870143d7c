/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inside the config reader (user/config/): what its files share. reader.c
 * walks libyaml's document and collects the errors (FILE:LINE:COLUMN),
 * schema.c holds the kinds of values and the tables of keys every mapping
 * is read by, rules.c and validate.c load and check the sections, print.c
 * prints what a loaded file says as `weir check -j` shows it. Nothing
 * outside config/ includes this but the front end of `weir check`
 * (cmd/check.c).
 */
#ifndef WEIR_CONFIG_INT_H
#define WEIR_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>
#include "config/config.h"

/* Largest config file read (bytes): far beyond any real one, short of abuse. */
#define CFG_MAX_SIZE		(16 << 20)
/* Errors reported for one deny file before giving up on the rest of it. */
#define DENYFILE_MAX_ERRORS	100
/* tables.keys: per-source buckets, as `attach keys` takes. */
#define CFG_MAX_KEYS		(1ULL << 28)
/* events.interval, in seconds. */
#define CFG_MAX_INTERVAL	86400
/* events.lines per interval; 0 turns event lines off. */
#define CFG_MAX_LINES		10000
/* Keys of one mapping, at most. */
#define MAX_KEYS		32
#define STR_(x)			#x
#define STR(x)			STR_(x)

struct cfg_err {
	char *file;
	unsigned long line, column;	/* 1-based */
	char *reason;
	/* Order of reporting: the config file's order, a deny file's errors at its path. */
	size_t at_line, at_column;
	int seq;
};

/* A name that must be unique, and where it first appeared. */
struct seen_name {
	const char *name;
	yaml_mark_t mark;
};

/* One load: the document, where relative paths start, the errors so far. */
struct load {
	const char *path;
	char *dir;
	yaml_document_t doc;
	struct wr_cfg *cfg;
	struct cfg_err *errs;
	int nr_errs, cap_errs;
	int cap_ifaces, cap_deny, cap_allow, cap_deny_files, cap_feeds;
	struct seen_name *ifnames;	/* every interface name, valid or not */
	int nr_ifnames, cap_ifnames;
	yaml_mark_t deny_file_at;	/* the deny file being read: its path in the config */
	bool oom;
};

/* The words of one `rule add`, each with the node it came from. */
struct words {
	char **w;
	yaml_mark_t *m;
	int n, cap_w, cap_m;
};

/*
 * The schema: every mapping of the file (a section) is a table of its keys,
 * and each key says how its value is read, its default and how `check -j`
 * prints it. Loading, defaults and printing all walk these tables.
 */
struct cfg_key;

/* A single value's kind: how it is read from the file's text and printed. */
struct cfg_kind {
	int (*parse)(const struct cfg_key *k, const char *s, void *field);	/* 0 or -errno */
	void (*print)(const struct cfg_key *k, const void *field);
	/* What valid values are, after an invalid one; NULL: the key's hint. */
	void (*hint)(const struct cfg_key *k, char *buf, size_t len);
	uint64_t unit;		/* a duration's, in milliseconds */
};

/* A mapping of keys: the top level, events, shedding, an interface... */
struct cfg_section {
	const char *what;		/* in errors: "events", "an interface" */
	const struct cfg_key *keys;
	int nr;
	/* After its keys: what they say together (curve: good <= bad). */
	void (*check)(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals);
};

struct cfg_key {
	const char *name;
	/*
	 * Read as a single value of a kind, as a section of its own (its
	 * fields in the struct of the key's), or its own way (load).
	 */
	const struct cfg_kind *kind;
	const struct cfg_section *sub;
	void (*load)(struct load *ld, const yaml_node_t *v);
	/* Printed by check -j by its kind or section, or its own way. */
	void (*print)(const struct cfg_key *k, const void *base);
	const char *json;	/* its name there: the key's, - as _, unless given */
	size_t off, size;	/* its field in the section's struct */
	uint64_t min, max;	/* a number's range, a duration's in ms; a choice's count */
	const char *const *words;	/* a choice's words */
	const char *what;	/* "invalid WHAT \"VALUE\"": the key's name unless given */
	const char *hint;	/* what would be valid, after that */
	const char *def;	/* the default, written as in the file */
	const void *defp;	/* or a value to copy (size bytes) */
	const char *need;	/* the error when the key is missing, if it must be there */
};

/* The field f of struct wr_cfg, or of type t, as a key's off and size. */
#define FIELD(f) FIELD_OF(struct wr_cfg, f)
#define FIELD_OF(t, f) .off = offsetof(t, f), .size = sizeof(((t *)0)->f)
#define SECTION(w, k) { .what = (w), .keys = (k), .nr = ARRAY_SIZE(k) }

/* A name under check -j: the file's, with - as _ ("deny-files": "deny_files"). */
const char *underscored(const char *name, char *buf, size_t len);
#define JSON(k) ((k)->json ? (k)->json : underscored((k)->name, (char[32]){ 0 }, 32))

/* ---- reader.c: the document, and the errors ---- */

/* Make room for one more element of size sz in *arr, which holds n of cap. */
bool cfg_grow(struct load *ld, void **arr, int n, int *cap, size_t sz);
/* An error at a place in the config file; libyaml counts from 0. */
void err_at(struct load *ld, yaml_mark_t mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* An error in another file (a deny file). */
void err_file(struct load *ld, const char *file, unsigned long line, unsigned long col,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
yaml_node_t *cfg_node(struct load *ld, int idx);
const char *cfg_sval(const yaml_node_t *n);
/* A plain empty, ~ or null: YAML's way of saying nothing. */
bool cfg_is_null(const yaml_node_t *n);
/* "a mapping", "a list" or "a single value" */
const char *node_kind(const yaml_node_t *n);
/* The text of a scalar, or NULL (reported) when n is not a non-empty scalar. */
const char *cfg_scalar(struct load *ld, const yaml_node_t *n, const char *what);
/* The items of a list (nothing for a null), or false (reported) when n is not one. */
bool cfg_list(struct load *ld, const yaml_node_t *n, const char *what, yaml_node_item_t **start,
	      yaml_node_item_t **end);
/* The pairs of mapping n sorted into keys[] and vals[] by names[] (reported). */
bool cfg_mapping(struct load *ld, const yaml_node_t *n, const char *what,
		 const struct cfg_key *names, int nr, yaml_node_t **keys, yaml_node_t **vals);
/*
 * Load path into cfg, the errors (sorted) into ld: 0 if valid, the number of
 * errors, or -errno; on non-zero cfg holds nothing. ld is freed by
 * cfg_load_done() whatever the outcome.
 */
int cfg_load(const char *path, struct wr_cfg *cfg, struct load *ld);
void cfg_load_done(struct load *ld);

/* ---- schema.c: kinds of values, the walks of the tables, the tables ---- */

/* A switch: on, true, yes (or off, false, no); k may be NULL. */
int parse_switch(const struct cfg_key *k, const char *s, void *f);
/* The text s as the value of k, into its field in base; false (reported) if it is none. */
bool parse_value(struct load *ld, const struct cfg_key *k, const yaml_node_t *v,
		 const char *s, void *base);
bool load_value(struct load *ld, const struct cfg_key *k, const yaml_node_t *v, void *base);
/* Mapping n by the keys of sec, their fields in base. */
void load_section(struct load *ld, const struct cfg_section *sec, const yaml_node_t *n,
		  void *base);
/* The defaults of sec's keys (and their sections'), into base. */
void section_defaults(const struct cfg_section *sec, void *base);
/* Where a key is in its section's table. */
int key_index(const struct cfg_section *sec, const char *name);

/*
 * An interface's keys, by index (load_iface() judges them together): its
 * name, then the options of `weir attach` in the order of enum
 * wr_attach_key.
 */
enum { I_NAME, I_MODE, I_TC_HOOK, I_DISPATCHER, I_PRIORITY, I_NR };
_Static_assert(I_TC_HOOK - I_MODE == WR_AOPT_TC_HOOK && I_DISPATCHER - I_MODE ==
	       WR_AOPT_DISPATCHER && I_PRIORITY - I_MODE == WR_AOPT_PRIORITY &&
	       I_NR - I_MODE == WR_AOPT_NR, "an interface's keys are attach's options");
extern const struct cfg_key iface_keys[I_NR];
/* A feed's keys, by index (load_feed() judges them together). */
enum { FD_NAME, FD_URL, FD_FILE, FD_GEO, FD_COUNTRY, FD_ASN, FD_REFRESH, FD_ACTION, FD_NR };
extern const struct cfg_key feed_keys[FD_NR];
extern const struct cfg_section feed_section;
extern const struct cfg_section iface_section, metrics_section, shed_section, capacity_section,
	fleet_section, auto_section, top_section;

/* A signal of shedding: a mapping of one key, its name. */
struct cfg_signal {
	const char *name;
	const char *example;	/* in errors */
	/* Reads v into sig: false when it is no signal (reported, or switched off). */
	bool (*load)(struct load *ld, const yaml_node_t *v, struct wr_cfg_signal *sig);
	void (*print)(const char *json, const struct wr_cfg_signal *sig);
};
#define CFG_NR_SIGNALS		(WR_SIG_FILE + 1)
extern const struct cfg_signal cfg_signals[CFG_NR_SIGNALS];

/* ---- rules.c and validate.c: how sections load and what they say together ---- */

void load_rules(struct load *ld, const yaml_node_t *n);
void load_ifaces(struct load *ld, const yaml_node_t *n);
void load_lists(struct load *ld, const yaml_node_t *n);
void load_deny(struct load *ld, const yaml_node_t *n);
void load_allow(struct load *ld, const yaml_node_t *n);
void load_deny_files(struct load *ld, const yaml_node_t *n);
void load_metrics(struct load *ld, const yaml_node_t *n);
void load_signals(struct load *ld, const yaml_node_t *n);
bool sig_cpu(struct load *ld, const yaml_node_t *v, struct wr_cfg_signal *sig);
bool sig_psi(struct load *ld, const yaml_node_t *v, struct wr_cfg_signal *sig);
bool sig_accept_queue(struct load *ld, const yaml_node_t *v, struct wr_cfg_signal *sig);
bool sig_file(struct load *ld, const yaml_node_t *v, struct wr_cfg_signal *sig);
void load_shedding(struct load *ld, const yaml_node_t *n);
void load_capacity_rate(struct load *ld, const yaml_node_t *n);
void load_fleet(struct load *ld, const yaml_node_t *n);
void load_fleet_redis(struct load *ld, const yaml_node_t *n);
void check_curve(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals);
void check_tcp_state(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals);
void check_auto(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals);
void check_capacity(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals);
void check_fleet(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals);
void check_top(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals);

/* ---- print.c: what a loaded file says, as check -j prints it ---- */

/* What sec's keys hold in base. */
void print_section(const struct cfg_section *sec, const void *base);
/* Every key of the file, from the schema: what it says, or its default. */
void cfg_print(const struct wr_cfg *cfg);
void print_ifaces(const struct cfg_key *k, const void *base);
void print_lists(const struct cfg_key *k, const void *base);
void print_rules(const struct cfg_key *k, const void *base);
void print_deny_files(const struct cfg_key *k, const void *base);
void print_metrics(const struct cfg_key *k, const void *base);
void print_signals(const struct cfg_key *k, const void *base);
void print_sig_cpu(const char *json, const struct wr_cfg_signal *sig);
void print_sig_arg(const char *json, const struct wr_cfg_signal *sig);
void print_sig_ports(const char *json, const struct wr_cfg_signal *sig);
void print_shedding(const struct cfg_key *k, const void *base);
void print_capacity_rate(const struct cfg_key *k, const void *base);
void print_capacity(const struct cfg_key *k, const void *base);
void print_fleet_redis(const struct cfg_key *k, const void *base);
void print_fleet(const struct cfg_key *k, const void *base);

#endif /* WEIR_CONFIG_INT_H */
