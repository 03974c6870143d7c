// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The config file: YAML read with libyaml's document API, so every node
 * carries the line and column it came from, and every error is reported as
 * FILE:LINE:COLUMN: reason. Validation goes on after an error, so one pass
 * reports everything that is wrong; a file with any error yields nothing.
 *
 * Every mapping of the file is read by a table of its keys (the schema,
 * below): how each value is read, its default, and how `weir check -j`
 * prints it. A rule's and a limit's keys are the keywords of `weir rule
 * add` (wr_rule_kws[], user/rules.c): their values are turned into its
 * words, each key judged on its own and then the rule whole by the CLI's
 * own parser; each word remembers the node it came from, so the word the
 * parser names is placed back in the file.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>
#include "config/config.h"
#include "cmd/cmd.h"
#include "fleet/fleet.h"
#include "weir_limiter.h"

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
	int cap_ifaces, cap_deny, cap_allow, cap_deny_files;
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

/* Make room for one more element of size sz in *arr, which holds n of cap. */
static bool grow(struct load *ld, void **arr, int n, int *cap, size_t sz)
{
	int ncap;
	void *p;

	if (n < *cap)
		return true;
	ncap = *cap ? 2 * *cap : 16;
	p = realloc(*arr, (size_t)ncap * sz);
	if (!p) {
		ld->oom = true;
		return false;
	}
	*arr = p;
	*cap = ncap;
	return true;
}

static void verr(struct load *ld, yaml_mark_t at, const char *file, unsigned long line,
		 unsigned long col, const char *fmt, va_list ap)
{
	struct cfg_err *e;

	if (!grow(ld, (void **)&ld->errs, ld->nr_errs, &ld->cap_errs, sizeof(*e)))
		return;
	e = &ld->errs[ld->nr_errs];
	e->file = strdup(file);
	e->line = line;
	e->column = col;
	e->at_line = at.line;
	e->at_column = at.column;
	e->seq = ld->nr_errs;
	if (!e->file || vasprintf(&e->reason, fmt, ap) < 0) {
		free(e->file);
		ld->oom = true;
		return;
	}
	ld->nr_errs++;
}

/* An error in another file (a deny file). */
static void err_file(struct load *ld, const char *file, unsigned long line, unsigned long col,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void err_file(struct load *ld, const char *file, unsigned long line, unsigned long col,
		     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(ld, ld->deny_file_at, file, line, col, fmt, ap);
	va_end(ap);
}

/* An error at a place in the config file; libyaml counts from 0. */
static void err_at(struct load *ld, yaml_mark_t mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void err_at(struct load *ld, yaml_mark_t mark, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(ld, mark, ld->path, mark.line + 1, mark.column + 1, fmt, ap);
	va_end(ap);
}

static int err_order(const void *a, const void *b)
{
	const struct cfg_err *x = a, *y = b;

	if (x->at_line != y->at_line)
		return x->at_line < y->at_line ? -1 : 1;
	if (x->at_column != y->at_column)
		return x->at_column < y->at_column ? -1 : 1;
	return x->seq - y->seq;
}

static void errs_free(struct load *ld)
{
	int i;

	for (i = 0; i < ld->nr_errs; i++) {
		free(ld->errs[i].file);
		free(ld->errs[i].reason);
	}
	free(ld->errs);
	ld->errs = NULL;
	ld->nr_errs = ld->cap_errs = 0;
}

static yaml_node_t *node(struct load *ld, int idx)
{
	return yaml_document_get_node(&ld->doc, idx);
}

static const char *sval(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* A plain empty, ~ or null: YAML's way of saying nothing. */
static bool is_null(const yaml_node_t *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	size_t i;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	for (i = 0; i < ARRAY_SIZE(nulls); i++)
		if (!strcmp(sval(n), nulls[i]))
			return true;
	return false;
}

static const char *kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE: return "a mapping";
	case YAML_SEQUENCE_NODE: return "a list";
	default: return "a single value";
	}
}

/* The text of a scalar, or NULL (reported) when n is not a non-empty scalar. */
static const char *scalar(struct load *ld, const yaml_node_t *n, const char *what)
{
	if (n->type != YAML_SCALAR_NODE) {
		err_at(ld, n->start_mark, "%s must be a single value, not %s", what, kind(n));
		return NULL;
	}
	if (is_null(n)) {
		err_at(ld, n->start_mark, "%s needs a value", what);
		return NULL;
	}
	return sval(n);
}

/* The items of a list (nothing for a null), or false (reported) when n is not one. */
static bool list(struct load *ld, const yaml_node_t *n, const char *what, yaml_node_item_t **start,
		 yaml_node_item_t **end)
{
	*start = *end = NULL;
	if (is_null(n))
		return true;
	if (n->type != YAML_SEQUENCE_NODE) {
		if (n->type == YAML_SCALAR_NODE)
			err_at(ld, n->start_mark, "%s must be a list, not \"%s\"", what, sval(n));
		else
			err_at(ld, n->start_mark, "%s must be a list, not %s", what, kind(n));
		return false;
	}
	*start = n->data.sequence.items.start;
	*end = n->data.sequence.items.top;
	return true;
}

/*
 * Sort the pairs of mapping n into vals[] (and their keys into keys[]) by
 * the position of the key in names[]; report non-mappings, keys that are not
 * single values, unknown keys and keys given twice. A null n is an empty
 * mapping. Returns false when n is not a mapping.
 */
static bool mapping(struct load *ld, const yaml_node_t *n, const char *what,
		    const struct cfg_key *names, int nr, yaml_node_t **keys, yaml_node_t **vals)
{
	yaml_node_pair_t *p;
	int i;

	for (i = 0; i < nr; i++)
		keys[i] = vals[i] = NULL;
	if (is_null(n))
		return true;
	if (n->type != YAML_MAPPING_NODE) {
		if (n->type == YAML_SCALAR_NODE)
			err_at(ld, n->start_mark, "%s must be a mapping, not \"%s\"", what, sval(n));
		else
			err_at(ld, n->start_mark, "%s must be a mapping, not %s", what, kind(n));
		return false;
	}
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(ld, p->key), *v = node(ld, p->value);

		if (!k || !v)
			continue;
		if (k->type != YAML_SCALAR_NODE) {
			err_at(ld, k->start_mark, "a key in %s must be a single word, not %s", what,
			       kind(k));
			continue;
		}
		for (i = 0; i < nr; i++)
			if (!strcmp(sval(k), names[i].name))
				break;
		if (i == nr) {
			char known[512];
			size_t off = 0;
			int j;

			known[0] = '\0';
			for (j = 0; j < nr && off < sizeof(known); j++)
				off += snprintf(known + off, sizeof(known) - off, "%s%s",
						j ? ", " : "", names[j].name);
			err_at(ld, k->start_mark, "unknown key \"%s\" in %s (known: %s)", sval(k),
			       what, known);
			continue;
		}
		if (keys[i]) {
			err_at(ld, k->start_mark, "duplicate key \"%s\" in %s (first at line %lu)",
			       names[i].name, what, (unsigned long)keys[i]->start_mark.line + 1);
			continue;
		}
		keys[i] = k;
		vals[i] = v;
	}
	return true;
}

/* ---- values, and the walks of the schema ---- */

/* A duration in milliseconds: 500ms, 10s, 1m, 1h. */
static int parse_duration_ms(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 } };
	char digits[21];
	uint64_t v;
	size_t n = strspn(s, "0123456789"), i;

	if (!n || n >= sizeof(digits))
		return -EINVAL;
	memcpy(digits, s, n);
	digits[n] = '\0';
	if (parse_u64(digits, 0, UINT32_MAX, &v))
		return -ERANGE;
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(s + n, units[i].unit))
			continue;
		*out = v * units[i].ms;
		return 0;
	}
	return -EINVAL;
}

/* A fraction: 0.2, or a percentage: 20%. */
static int parse_fraction(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -EINVAL;
	if (*end == '%' && !end[1])
		v /= 100;
	else if (*end)
		return -EINVAL;
	if (!(v >= 0 && v <= 1))
		return -ERANGE;
	*out = v;
	return 0;
}

/* What the kernel takes as a device name (dev_valid_name()). */
static bool valid_ifname(const char *s)
{
	size_t i, len = strlen(s);

	if (!len || len >= IF_NAMESIZE || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (i = 0; i < len; i++)
		if (s[i] == '/' || s[i] == ':' || isspace((unsigned char)s[i]))
			return false;
	return true;
}

/* HOST:PORT, HOST an IPv4 address or an IPv6 one in brackets, PORT 1-65535. */
static bool valid_listen(const char *s)
{
	char host[INET6_ADDRSTRLEN + 2];
	unsigned char addr[16];
	const char *port;
	uint64_t v;
	size_t len;

	if (s[0] == '[') {
		port = strstr(s, "]:");
		if (!port)
			return false;
		len = port - s - 1;
		if (len >= sizeof(host))
			return false;
		memcpy(host, s + 1, len);
		host[len] = '\0';
		if (inet_pton(AF_INET6, host, addr) != 1)
			return false;
		port += 2;
	} else {
		port = strrchr(s, ':');
		if (!port || (size_t)(port - s) >= sizeof(host))
			return false;
		len = port - s;
		memcpy(host, s, len);
		host[len] = '\0';
		if (inet_pton(AF_INET, host, addr) != 1)
			return false;
		port++;
	}
	return !parse_u64(port, 1, 65535, &v);
}

static void set_uint(void *f, size_t size, uint64_t v)
{
	switch (size) {
	case 1: *(uint8_t *)f = v; break;
	case 2: *(uint16_t *)f = v; break;
	case 4: *(uint32_t *)f = v; break;
	default: *(uint64_t *)f = v; break;
	}
}

static uint64_t get_uint(const void *f, size_t size)
{
	switch (size) {
	case 1: return *(const uint8_t *)f;
	case 2: return *(const uint16_t *)f;
	case 4: return *(const uint32_t *)f;
	default: return *(const uint64_t *)f;
	}
}

/* A name under check -j: the file's, with - as _ ("deny-files": "deny_files"). */
static const char *underscored(const char *name, char *buf, size_t len)
{
	size_t i;

	snprintf(buf, len, "%s", name);
	for (i = 0; buf[i]; i++)
		if (buf[i] == '-')
			buf[i] = '_';
	return buf;
}

#define JSON(k) ((k)->json ? (k)->json : underscored((k)->name, (char[32]){ 0 }, 32))

/* A whole number from min to max. */
static int parse_uint(const struct cfg_key *k, const char *s, void *f)
{
	uint64_t v;

	if (parse_u64(s, k->min, k->max, &v))
		return -EINVAL;
	set_uint(f, k->size, v);
	return 0;
}

static void print_uint(const struct cfg_key *k, const void *f)
{
	print_u64(JSON(k), NULL, get_uint(f, k->size));
}

static void hint_range(const struct cfg_key *k, char *buf, size_t len)
{
	snprintf(buf, len, "%llu to %llu", (unsigned long long)k->min,
		 (unsigned long long)k->max);
}

static const struct cfg_kind k_uint = { parse_uint, print_uint, hint_range };

/* A duration from min to max milliseconds. */
static int duration(const struct cfg_key *k, const char *s, uint64_t *ms)
{
	return parse_duration_ms(s, ms) || *ms < k->min || *ms > k->max ? -EINVAL : 0;
}

/*
 * A duration, kept in whole units of the kind's (milliseconds, or seconds:
 * 10s and 2000ms, not 1500ms).
 */
static int parse_dur(const struct cfg_key *k, const char *s, void *f)
{
	uint64_t ms, unit = k->kind->unit;

	if (duration(k, s, &ms) || ms % unit)
		return -EINVAL;
	set_uint(f, k->size, ms / unit);
	return 0;
}

static const struct cfg_kind k_ms = { parse_dur, print_uint, .unit = 1 };
static const struct cfg_kind k_seconds = { parse_dur, print_uint, .unit = 1000 };

/* A duration, kept in seconds (a double). */
static int parse_ms_as_s(const struct cfg_key *k, const char *s, void *f)
{
	uint64_t ms;

	if (duration(k, s, &ms))
		return -EINVAL;
	*(double *)f = ms / 1000.0;
	return 0;
}

static void print_dbl(const struct cfg_key *k, const void *f)
{
	print_double(JSON(k), NULL, *(const double *)f);
}

static const struct cfg_kind k_ms_as_s = { parse_ms_as_s, print_dbl };

/* A fraction from 0 to 1: 0.7, 70%. */
static int parse_frac(const struct cfg_key *k, const char *s, void *f)
{
	double v;

	(void)k;
	if (parse_fraction(s, &v))
		return -EINVAL;
	*(double *)f = v;
	return 0;
}

static const struct cfg_kind k_fraction = { parse_frac, print_dbl };

/* A share that leaves some: from 0 to below 1 (0.2, 20%). */
static int parse_share(const struct cfg_key *k, const char *s, void *f)
{
	double v;

	(void)k;
	if (parse_fraction(s, &v) || v >= 1)
		return -EINVAL;
	*(double *)f = v;
	return 0;
}

static const struct cfg_kind k_share = { parse_share, print_dbl };

/* One of max words; the field holds its index. */
static int parse_choice(const struct cfg_key *k, const char *s, void *f)
{
	uint64_t i;

	for (i = 0; i < k->max; i++) {
		if (!strcmp(s, k->words[i])) {
			set_uint(f, k->size, i);
			return 0;
		}
	}
	return -EINVAL;
}

static void print_choice(const struct cfg_key *k, const void *f)
{
	print_str(JSON(k), NULL, k->words[get_uint(f, k->size) % k->max]);
}

/* "native, generic or tc" */
static void hint_choice(const struct cfg_key *k, char *buf, size_t len)
{
	size_t off = 0;
	uint64_t i;

	buf[0] = '\0';
	for (i = 0; i < k->max && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i == 0 ? "" : i + 1 < k->max ?
				", " : " or ", k->words[i]);
}

static const struct cfg_kind k_choice = { parse_choice, print_choice, hint_choice };

/* A switch: on, true, yes (or off, false, no), as YAML 1.1 writes them. */
static int parse_switch(const struct cfg_key *k, const char *s, void *f)
{
	static const char *const off[] = { "off", "false", "no", "Off", "False", "No", "OFF",
					   "FALSE", "NO" };
	static const char *const on[] = { "on", "true", "yes", "On", "True", "Yes", "ON",
					  "TRUE", "YES" };
	size_t i;

	(void)k;
	for (i = 0; i < ARRAY_SIZE(off); i++) {
		if (!strcmp(s, off[i]) || !strcmp(s, on[i])) {
			*(bool *)f = !strcmp(s, on[i]);
			return 0;
		}
	}
	return -EINVAL;
}

static void print_switch(const struct cfg_key *k, const void *f)
{
	print_bool(JSON(k), NULL, *(const bool *)f);
}

static const struct cfg_kind k_switch = { parse_switch, print_switch };

static void print_string(const struct cfg_key *k, const void *f)
{
	print_str(JSON(k), NULL, f);
}

/* An interface name. */
static int parse_ifname(const struct cfg_key *k, const char *s, void *f)
{
	if (!valid_ifname(s) || strlen(s) >= k->size)
		return -EINVAL;
	strcpy(f, s);
	return 0;
}

static const struct cfg_kind k_ifname = { parse_ifname, print_string };

/* Where the metrics endpoint listens. */
static int parse_listen(const struct cfg_key *k, const char *s, void *f)
{
	if (strlen(s) >= k->size || !valid_listen(s))
		return -EINVAL;
	strcpy(f, s);
	return 0;
}

static const struct cfg_kind k_listen = { parse_listen, print_string };

/* "invalid WHAT \"VALUE\" (what would be valid)" */
static void err_invalid(struct load *ld, const struct cfg_key *k, const yaml_node_t *v,
			const char *s)
{
	char hint[128] = "";

	if (k->hint)
		snprintf(hint, sizeof(hint), "%s", k->hint);
	else if (k->kind->hint)
		k->kind->hint(k, hint, sizeof(hint));
	err_at(ld, v->start_mark, "invalid %s \"%s\"%s%s%s", k->what ? k->what : k->name, s,
	       *hint ? " (" : "", hint, *hint ? ")" : "");
}

/* The text s as the value of k, into its field in base; false (reported) if it is none. */
static bool parse_value(struct load *ld, const struct cfg_key *k, const yaml_node_t *v,
			const char *s, void *base)
{
	if (!k->kind->parse(k, s, (char *)base + k->off))
		return true;
	err_invalid(ld, k, v, s);
	return false;
}

static bool load_value(struct load *ld, const struct cfg_key *k, const yaml_node_t *v,
		       void *base)
{
	const char *s = scalar(ld, v, k->name);

	return s && parse_value(ld, k, v, s, base);
}

static void load_section(struct load *ld, const struct cfg_section *sec, const yaml_node_t *n,
			 void *base);

static void load_key(struct load *ld, const struct cfg_key *k, const yaml_node_t *v, void *base)
{
	if (k->load)
		k->load(ld, v);
	else if (k->sub)
		load_section(ld, k->sub, v, base);
	else
		load_value(ld, k, v, base);
}

/* Mapping n by the keys of sec, their fields in base. */
static void load_section(struct load *ld, const struct cfg_section *sec, const yaml_node_t *n,
			 void *base)
{
	yaml_node_t *keys[MAX_KEYS], *vals[MAX_KEYS];
	int i;

	if (!mapping(ld, n, sec->what, sec->keys, sec->nr, keys, vals))
		return;
	for (i = 0; i < sec->nr; i++) {
		if (vals[i])
			load_key(ld, &sec->keys[i], vals[i], base);
		else if (sec->keys[i].need)
			err_at(ld, n->start_mark, "%s", sec->keys[i].need);
	}
	if (sec->check)
		sec->check(ld, n, vals);
}

/* The defaults of sec's keys (and their sections'), into base. */
static void section_defaults(const struct cfg_section *sec, void *base)
{
	int i;

	for (i = 0; i < sec->nr; i++) {
		const struct cfg_key *k = &sec->keys[i];

		if (k->sub)
			section_defaults(k->sub, base);
		if (k->defp)
			memcpy((char *)base + k->off, k->defp, k->size);
		if (k->def && k->kind->parse(k, k->def, (char *)base + k->off)) {
			fprintf(stderr, "weir: the default of %s, \"%s\", is no %s\n", k->name,
				k->def, k->name);
			abort();
		}
	}
}

static void print_section(const struct cfg_section *sec, const void *base);

static void print_key(const struct cfg_key *k, const void *base)
{
	if (k->print) {
		k->print(k, base);
	} else if (k->sub) {
		open_object(JSON(k));
		print_section(k->sub, base);
		close_object();
	} else {
		k->kind->print(k, (const char *)base + k->off);
	}
}

/* What sec's keys hold in base, as check -j prints them. */
static void print_section(const struct cfg_section *sec, const void *base)
{
	int i;

	for (i = 0; i < sec->nr; i++)
		print_key(&sec->keys[i], base);
}

/* Where a key is in its section's table. */
static int key_index(const struct cfg_section *sec, const char *name)
{
	int i;

	for (i = 0; i < sec->nr; i++)
		if (!strcmp(sec->keys[i].name, name))
			return i;
	abort();
}

/* ---- rules ---- */

static void words_free(struct words *w)
{
	int i;

	for (i = 0; i < w->n; i++)
		free(w->w[i]);
	free(w->w);
	free(w->m);
	memset(w, 0, sizeof(*w));
}

/* Drop the words from n on. */
static void words_cut(struct words *w, int n)
{
	while (w->n > n)
		free(w->w[--w->n]);
}

static void word(struct load *ld, struct words *w, const char *s, size_t len, yaml_mark_t m)
{
	char *copy;

	if (!grow(ld, (void **)&w->w, w->n, &w->cap_w, sizeof(*w->w)) ||
	    !grow(ld, (void **)&w->m, w->n, &w->cap_m, sizeof(*w->m)))
		return;
	copy = strndup(s, len);
	if (!copy) {
		ld->oom = true;
		return;
	}
	w->w[w->n] = copy;
	w->m[w->n] = m;
	w->n++;
}

static void word_str(struct load *ld, struct words *w, const char *s, yaml_mark_t m)
{
	word(ld, w, s, strlen(s), m);
}

/*
 * One item of a list value (a key word of "per"). Only the words the
 * keyword takes are let through, so a value can never smuggle another
 * keyword ("src limit 1pps") into the rule.
 */
static bool item_word(struct load *ld, struct words *w, const struct wr_rule_kw *kw,
		      const char *s, size_t len, yaml_mark_t m)
{
	int at = w->n;

	word(ld, w, s, len, m);
	if (w->n == at)
		return false;
	if (!kw->item(w->w[at])) {
		err_at(ld, m, "invalid %s key \"%.*s\" (%s)", kw->key, (int)len, s, kw->items);
		words_cut(w, at);
		return false;
	}
	return true;
}

/* A list value ("per"): one word, several separated by spaces, or a list of words. */
static bool item_words(struct load *ld, struct words *w, const struct wr_rule_kw *kw,
		       const yaml_node_t *n)
{
	yaml_node_item_t *it, *end;
	char what[32];
	bool ok = true;
	int before = w->n;

	if (n->type == YAML_SEQUENCE_NODE) {
		list(ld, n, kw->key, &it, &end);
		snprintf(what, sizeof(what), "a %s key", kw->key);
		for (; it < end; it++) {
			yaml_node_t *v = node(ld, *it);
			const char *s = v ? scalar(ld, v, what) : NULL;

			if (!s || !item_word(ld, w, kw, s, strlen(s), v->start_mark))
				ok = false;
		}
	} else {
		const char *s = scalar(ld, n, kw->key), *p;
		yaml_mark_t m;
		bool exact;

		if (!s)
			return false;
		/*
		 * Place each word in the line when the source is the value as it
		 * stands: one line, no escapes (only quotes around it, if any).
		 */
		exact = n->start_mark.line == n->end_mark.line &&
			n->end_mark.column - n->start_mark.column ==
				strlen(s) + (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? 0 : 2);
		for (p = s; *p;) {
			size_t len;

			p += strspn(p, " \t\r\n");
			len = strcspn(p, " \t\r\n");
			if (!len)
				break;
			m = n->start_mark;
			if (exact)
				m.column += (p - s) + (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE);
			if (!item_word(ld, w, kw, p, len, m))
				ok = false;
			p += len;
		}
	}
	if (ok && w->n == before) {
		err_at(ld, n->start_mark, "%s needs a key (%s)", kw->key, kw->items);
		ok = false;
	}
	return ok;
}

/*
 * The words of keyword kw given as key (its word placed at `at`) with value
 * v; false (reported, nothing added) when v is no value of it.
 */
static bool kw_words(struct load *ld, struct words *w, const struct wr_rule_kw *kw,
		     yaml_mark_t at, const yaml_node_t *v)
{
	int start = w->n;
	const char *s;

	word_str(ld, w, kw->word, at);
	if (kw->item) {
		if (item_words(ld, w, kw, v))
			return true;
	} else if ((s = scalar(ld, v, kw->key))) {
		word_str(ld, w, s, v->start_mark);
		return true;
	}
	words_cut(w, start);
	return false;
}

/*
 * Judge the words from start on their own (wr_rule_check_words(): a key
 * and its value, or a whole limit), so that every value is judged by the
 * CLI's parser even when another one of the same rule is wrong. Returns
 * false (reported) if the parser refuses them.
 */
static bool check_words(struct load *ld, const struct words *w, int start, unsigned int head,
			yaml_mark_t at)
{
	struct wr_perr pe;
	int len = w->n - start;

	if (ld->oom)
		return false;
	if (!wr_rule_check_words(len, w->w + start, head, &pe))
		return true;
	err_at(ld, pe.word >= 0 && pe.word < len ? w->m[start + pe.word] : at, "%s", pe.msg);
	return false;
}

/* Keys of a rule or a limit: the keywords of `rule add` that stand there. */
static int kw_keys(bool limit, struct cfg_key *keys, const struct wr_rule_kw **kws)
{
	int k, nr = 0;

	for (k = 0; k < wr_nr_rule_kws; k++) {
		const struct wr_rule_kw *kw = &wr_rule_kws[k];

		if ((kw->scope == WR_KW_LIMIT || kw->scope == WR_KW_OPTION) != limit)
			continue;
		kws[nr] = kw;
		keys[nr++] = (struct cfg_key){ .name = kw->key };
	}
	return nr;
}

/*
 * One entry of "limits": a head (rate or conns) and its options. Each key
 * is judged on its own (an option as in a limit of its head), then the
 * limit as a whole (a burst too big for its rate, a burst on a window).
 */
static bool limit_words(struct load *ld, struct words *w, const yaml_node_t *n)
{
	struct cfg_key names[MAX_KEYS];
	const struct wr_rule_kw *kws[MAX_KEYS];
	yaml_node_t *keys[MAX_KEYS], *vals[MAX_KEYS];
	char heads[64] = "", needs[64] = "";
	int i, nr, start = w->n, piece, head = -1, nheads = 0;
	bool ok = true;

	nr = kw_keys(true, names, kws);
	if (!mapping(ld, n, "a limit", names, nr, keys, vals))
		return false;
	for (i = 0; i < nr; i++) {
		if (kws[i]->scope != WR_KW_LIMIT)
			continue;
		snprintf(heads + strlen(heads), sizeof(heads) - strlen(heads), "%s%s",
			 *heads ? " or " : "", names[i].name);
		snprintf(needs + strlen(needs), sizeof(needs) - strlen(needs),
			 *needs ? " (or %s)" : "%s", names[i].name);
		if (vals[i] || head < 0)
			head = i;
		nheads += !!vals[i];
	}
	if (nheads != 1) {
		if (nheads)
			err_at(ld, n->start_mark, "a limit has a %s, not both", heads);
		else
			err_at(ld, n->start_mark, "a limit needs a %s", needs);
		ok = false;
	}
	/* The head first, its word where the limit is. */
	if (vals[head]) {
		if (!kw_words(ld, w, kws[head], n->start_mark, vals[head]) ||
		    !check_words(ld, w, start, 0, n->start_mark))
			ok = false;
	}
	for (i = 0; i < nr; i++) {
		if (!vals[i] || kws[i]->scope != WR_KW_OPTION)
			continue;
		piece = w->n;
		if (!kw_words(ld, w, kws[i], keys[i]->start_mark, vals[i]) ||
		    !check_words(ld, w, piece, kws[head]->heads, n->start_mark))
			ok = false;
	}
	if (ok && !check_words(ld, w, start, 0, n->start_mark))
		ok = false;
	return ok;
}

/*
 * Rule number idx: build its words in a fixed order (the table's: family
 * before src, so the parser sees a contradiction between them), judge each
 * key's words on their own, then the whole rule (what keys say together),
 * and keep the result in the rule set while there is room.
 */
static const struct cfg_key rule_own_keys[] = { { .name = "name" }, { .name = "limits" } };

static void load_rule(struct load *ld, const yaml_node_t *n, int idx, struct seen_name *seen)
{
	struct cfg_key names[MAX_KEYS + 2];
	const struct wr_rule_kw *kws[MAX_KEYS + 2];
	yaml_node_t *keys[MAX_KEYS + 2], *vals[MAX_KEYS + 2];
	struct words w = {};
	yaml_node_item_t *it, *end;
	struct weir_rule r;
	struct wr_perr pe;
	char name[WEIR_NAME_LEN];
	const char *s;
	bool ok = true;
	int i, nr, start;

	/* name, the rule's keywords, limits */
	names[0] = rule_own_keys[0];
	nr = 1 + kw_keys(false, names + 1, kws + 1);
	names[nr++] = rule_own_keys[1];
	seen[idx].name = NULL;
	if (n->type != YAML_MAPPING_NODE) {
		err_at(ld, n->start_mark, "a rule must be a mapping, not %s", kind(n));
		return;
	}
	if (!mapping(ld, n, "a rule", names, nr, keys, vals))
		return;
	if (!vals[0]) {
		err_at(ld, n->start_mark, "a rule needs a name");
		ok = false;
	} else if ((s = scalar(ld, vals[0], "name"))) {
		for (i = 0; i < idx; i++) {
			if (seen[i].name && !strcmp(seen[i].name, s)) {
				err_at(ld, vals[0]->start_mark,
				       "duplicate rule name \"%s\" (first at line %lu)", s,
				       (unsigned long)seen[i].mark.line + 1);
				ok = false;
				break;
			}
		}
		seen[idx].name = s;
		seen[idx].mark = vals[0]->start_mark;
		word_str(ld, &w, s, vals[0]->start_mark);
		if (wr_rule_name(s, &pe)) {
			err_at(ld, vals[0]->start_mark, "%s", pe.msg);
			ok = false;
		}
	} else {
		ok = false;
	}
	for (i = 1; i < nr - 1; i++) {
		if (!vals[i])
			continue;
		start = w.n;
		if (!kw_words(ld, &w, kws[i], keys[i]->start_mark, vals[i]) ||
		    !check_words(ld, &w, start, 0, n->start_mark))
			ok = false;
	}
	if (vals[nr - 1]) {
		if (!list(ld, vals[nr - 1], "limits", &it, &end)) {
			ok = false;
		} else if (it == end) {
			err_at(ld, vals[nr - 1]->start_mark, "a rule needs at least one limit");
			ok = false;
		}
		for (; it < end; it++) {
			yaml_node_t *l = node(ld, *it);

			if (!l || !limit_words(ld, &w, l))
				ok = false;
		}
	}
	/* The whole rule only when every piece is good: otherwise it is noise. */
	if (ok && !ld->oom) {
		if (wr_rule_parse(w.n, w.w, &r, name, &pe)) {
			err_at(ld, pe.word >= 0 && pe.word < w.n ? w.m[pe.word] : n->start_mark,
			       "%s", pe.msg);
		} else if (idx < WEIR_MAX_RULES) {
			struct weir_ruleset *rs = ld->cfg->rules;

			rs->rules[idx] = r;
			snprintf(rs->names[idx], WEIR_NAME_LEN, "%s", name);
			rs->nr_rules = idx + 1;
		}
	}
	words_free(&w);
}

static void load_rules(struct load *ld, const yaml_node_t *n)
{
	struct seen_name *seen;
	yaml_node_item_t *it, *end;
	int idx;

	if (!list(ld, n, "rules", &it, &end))
		return;
	seen = calloc(end - it + 1, sizeof(*seen));
	if (!seen) {
		ld->oom = true;
		return;
	}
	for (idx = 0; it < end; it++, idx++) {
		yaml_node_t *r = node(ld, *it);

		if (!r)
			continue;
		if (idx == WEIR_MAX_RULES)
			err_at(ld, r->start_mark, "too many rules (at most %d)", WEIR_MAX_RULES);
		load_rule(ld, r, idx, seen);
	}
	free(seen);
	/* Only a whole set (a rule with errors leaves a hole) says what meets a packet. */
	if (ld->cfg->rules->nr_rules && idx <= WEIR_MAX_RULES && !ld->nr_errs) {
		char why[320];

		if (wr_ruleset_index_why(ld->cfg->rules, why, sizeof(why)))
			err_at(ld, n->start_mark, "%s", why);
	}
}

/* ---- interfaces ---- */

enum { I_NAME, I_MODE, I_DISPATCHER, I_PRIORITY };
static const struct cfg_key iface_keys[] = {
	[I_NAME] = { .name = "name", .kind = &k_ifname, FIELD_OF(struct wr_cfg_iface, name),
		     .what = "interface name", .need = "an interface needs a name" },
	[I_MODE] = { .name = "mode", .kind = &k_choice, FIELD_OF(struct wr_cfg_iface, mode),
		     .words = wr_mode_names, .max = ARRAY_SIZE(wr_mode_names), .def = "native" },
	[I_DISPATCHER] = { .name = "dispatcher", .kind = &k_choice,
			   FIELD_OF(struct wr_cfg_iface, dispatcher), .words = wr_dispatcher_names,
			   .max = ARRAY_SIZE(wr_dispatcher_names), .def = "auto" },
	[I_PRIORITY] = { .name = "priority", .kind = &k_uint, FIELD_OF(struct wr_cfg_iface, priority),
			 .max = INT_MAX, .def = STR(WR_XDP_PRIO_DEFAULT) },
};
static const struct cfg_section iface_section = SECTION("an interface", iface_keys);

static void load_iface(struct load *ld, const yaml_node_t *n)
{
	struct wr_cfg *cfg = ld->cfg;
	yaml_node_t *keys[ARRAY_SIZE(iface_keys)], *vals[ARRAY_SIZE(iface_keys)];
	struct wr_cfg_iface ifc = {};
	bool ok = true;
	const char *s;
	int i;

	if (n->type != YAML_MAPPING_NODE) {
		err_at(ld, n->start_mark, "an interface must be a mapping, not %s", kind(n));
		return;
	}
	section_defaults(&iface_section, &ifc);
	mapping(ld, n, iface_section.what, iface_keys, iface_section.nr, keys, vals);
	if (!vals[I_NAME]) {
		err_at(ld, n->start_mark, "%s", iface_keys[I_NAME].need);
		ok = false;
	} else if ((s = scalar(ld, vals[I_NAME], iface_keys[I_NAME].name))) {
		if (!parse_value(ld, &iface_keys[I_NAME], vals[I_NAME], s, &ifc))
			ok = false;
		for (i = 0; i < ld->nr_ifnames; i++) {
			if (!strcmp(ld->ifnames[i].name, s)) {
				err_at(ld, vals[I_NAME]->start_mark,
				       "duplicate interface \"%s\" (first at line %lu)", s,
				       (unsigned long)ld->ifnames[i].mark.line + 1);
				ok = false;
				break;
			}
		}
		if (grow(ld, (void **)&ld->ifnames, ld->nr_ifnames, &ld->cap_ifnames,
			 sizeof(*ld->ifnames))) {
			ld->ifnames[ld->nr_ifnames].name = s;
			ld->ifnames[ld->nr_ifnames++].mark = vals[I_NAME]->start_mark;
		}
	} else {
		ok = false;
	}
	for (i = I_MODE; i <= I_PRIORITY; i++)
		if (vals[i] && !load_value(ld, &iface_keys[i], vals[i], &ifc))
			ok = false;
	/* As attach takes them: for XDP; a priority is a place in the dispatcher. */
	if (ok && ifc.mode == WR_MODE_TC && (vals[I_DISPATCHER] || vals[I_PRIORITY])) {
		err_at(ld, vals[I_DISPATCHER] ? vals[I_DISPATCHER]->start_mark
					      : vals[I_PRIORITY]->start_mark,
		       "%s applies to XDP (mode native or generic), not to mode tc",
		       vals[I_DISPATCHER] ? "dispatcher" : "priority");
		ok = false;
	} else if (ok && vals[I_PRIORITY] && ifc.dispatcher == WR_DISP_OFF) {
		err_at(ld, vals[I_PRIORITY]->start_mark, "priority is weir's place in libxdp's "
		       "dispatcher, which dispatcher off never joins");
		ok = false;
	} else if (ok && vals[I_PRIORITY]) {
		ifc.dispatcher = WR_DISP_LIBXDP;
	}
	if (!ok || !grow(ld, (void **)&cfg->ifaces, cfg->nr_ifaces, &ld->cap_ifaces, sizeof(ifc)))
		return;
	cfg->ifaces[cfg->nr_ifaces++] = ifc;
}

static void load_ifaces(struct load *ld, const yaml_node_t *n)
{
	yaml_node_item_t *it, *end;

	if (!list(ld, n, "interfaces", &it, &end))
		return;
	for (; it < end; it++) {
		yaml_node_t *i = node(ld, *it);

		if (i)
			load_iface(ld, i);
	}
}

static void print_ifaces(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;
	int i;

	open_array(JSON(k));
	for (i = 0; i < cfg->nr_ifaces; i++) {
		open_object(NULL);
		print_section(&iface_section, &cfg->ifaces[i]);
		close_object();
	}
	close_array();
}

/* ---- deny and allow ---- */

static void add_cidr(struct load *ld, struct wr_cidr **arr, int *nr, int *cap,
		     const struct wr_cidr *c)
{
	if (!grow(ld, (void **)arr, *nr, cap, sizeof(**arr)))
		return;
	(*arr)[(*nr)++] = *c;
}

/*
 * A /0 deny drops a whole family, the host's own clients included: never
 * from a file the daemon reloads on every change. (`weir deny add CIDR
 * force` can, by hand.)
 */
#define DENY_ALL_MSG "deny %s would drop every IPv%d packet, this host's own traffic " \
		     "included; a config never denies a whole family ('weir deny add " \
		     "CIDR force' does, by hand)"

static void load_cidrs(struct load *ld, const yaml_node_t *n, const char *what,
		       struct wr_cidr **arr, int *nr, int *cap)
{
	yaml_node_item_t *it, *end;
	struct wr_cidr c;

	if (!list(ld, n, what, &it, &end))
		return;
	for (; it < end; it++) {
		yaml_node_t *v = node(ld, *it);
		const char *s = v ? scalar(ld, v, "a CIDR") : NULL;

		if (!s)
			continue;
		if (parse_cidr(s, &c))
			err_at(ld, v->start_mark, "invalid CIDR \"%s\"", s);
		else if (c.plen == 0 && !strncmp(what, "deny", 4))
			err_at(ld, v->start_mark, DENY_ALL_MSG, s, c.family);
		else
			add_cidr(ld, arr, nr, cap, &c);
	}
}

/* Relative deny-file paths start at the config file's directory. */
static char *resolve(struct load *ld, const char *p)
{
	char *out;

	if (p[0] == '/' || !strcmp(ld->dir, "."))
		out = strdup(p);
	else if (asprintf(&out, "%s/%s", ld->dir, p) < 0)
		out = NULL;
	if (!out)
		ld->oom = true;
	return out;
}

/* One CIDR per line; '#' starts a comment; blank lines are skipped. */
static void read_deny_file(struct load *ld, const char *path, yaml_mark_t at)
{
	struct wr_cfg *cfg = ld->cfg;
	unsigned long lineno = 0;
	char *line = NULL;
	size_t len = 0;
	int bad = 0;
	FILE *f;

	struct stat st;
	int fd;

	/* Non-blocking and checked first: a FIFO or a device must not hang or flood us. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		err_at(ld, at, "cannot read deny file %s: %s", path, strerror(errno));
		return;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err_at(ld, at, "deny file %s is not a regular file", path);
		close(fd);
		return;
	}
	f = fdopen(fd, "re");
	if (!f) {
		err_at(ld, at, "cannot read deny file %s: %s", path, strerror(errno));
		close(fd);
		return;
	}
	while (getline(&line, &len, f) >= 0) {
		struct wr_cidr c;
		char *s, *e;

		lineno++;
		s = line + strspn(line, " \t");
		e = s + strcspn(s, "#\r\n");
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e == s)
			continue;
		*e = '\0';
		if (!parse_cidr(s, &c) && c.plen == 0) {
			err_file(ld, path, lineno, s - line + 1, DENY_ALL_MSG, s, c.family);
			continue;
		}
		if (!parse_cidr(s, &c)) {
			add_cidr(ld, &cfg->deny, &cfg->nr_deny, &ld->cap_deny, &c);
			continue;
		}
		if (++bad > DENYFILE_MAX_ERRORS) {
			err_file(ld, path, lineno, s - line + 1,
				 "more than %d invalid lines, the rest is not checked",
				 DENYFILE_MAX_ERRORS);
			break;
		}
		err_file(ld, path, lineno, s - line + 1, "invalid CIDR \"%s\"", s);
	}
	if (ferror(f))
		err_at(ld, at, "cannot read deny file %s: %s", path, strerror(errno));
	free(line);
	fclose(f);
}

static void load_deny_files(struct load *ld, const yaml_node_t *n)
{
	struct wr_cfg *cfg = ld->cfg;
	yaml_node_item_t *it, *end;

	if (!list(ld, n, "deny-files", &it, &end))
		return;
	for (; it < end; it++) {
		yaml_node_t *v = node(ld, *it);
		const char *s = v ? scalar(ld, v, "a deny file") : NULL;
		char *p;

		if (!s || !(p = resolve(ld, s)))
			continue;
		if (!grow(ld, (void **)&cfg->deny_files, cfg->nr_deny_files, &ld->cap_deny_files,
			  sizeof(p))) {
			free(p);
			continue;
		}
		cfg->deny_files[cfg->nr_deny_files++] = p;
		ld->deny_file_at = v->start_mark;
		read_deny_file(ld, p, v->start_mark);
	}
}

static void load_deny(struct load *ld, const yaml_node_t *n)
{
	load_cidrs(ld, n, "deny", &ld->cfg->deny, &ld->cfg->nr_deny, &ld->cap_deny);
}

static void load_allow(struct load *ld, const yaml_node_t *n)
{
	load_cidrs(ld, n, "allow", &ld->cfg->allow, &ld->cfg->nr_allow, &ld->cap_allow);
}

static void print_deny_files(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;
	int i;

	open_array(JSON(k));
	for (i = 0; i < cfg->nr_deny_files; i++)
		print_str(NULL, NULL, cfg->deny_files[i]);
	close_array();
}

/* ---- metrics ---- */

static const struct cfg_key metrics_keys[] = {
	{ .name = "listen", .kind = &k_listen, FIELD(metrics_listen), .def = "127.0.0.1:9464",
	  .hint = "IPV4:PORT or [IPV6]:PORT, PORT 1-65535" },
};
static const struct cfg_section metrics_section = SECTION("metrics", metrics_keys);

/* A mapping, or a switch: off/false/no turn the endpoint off, on/true/yes keep the default. */
static void load_metrics(struct load *ld, const yaml_node_t *n)
{
	if (n->type == YAML_SCALAR_NODE && !parse_switch(NULL, sval(n), &ld->cfg->metrics))
		return;
	if (n->type == YAML_SCALAR_NODE && !is_null(n)) {
		err_at(ld, n->start_mark,
		       "metrics must be a mapping ({ listen: HOST:PORT }) or off, not \"%s\"",
		       sval(n));
		return;
	}
	load_section(ld, &metrics_section, n, ld->cfg);
}

/* Where the endpoint listens, or null when it is off. */
static void print_metrics(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;

	if (cfg->metrics)
		print_str(JSON(k), NULL, cfg->metrics_listen);
	else
		print_null(JSON(k), NULL);
}

/* ---- shedding and reserved capacity ---- */

static bool sig_cpu(struct load *ld, const yaml_node_t *v, struct wr_cfg_signal *sig)
{
	const char *s = scalar(ld, v, "cpu");

	(void)sig;
	if (!s)
		return false;
	if (strcmp(s, "true") && strcmp(s, "yes") && strcmp(s, "on")) {
		if (strcmp(s, "false") && strcmp(s, "no") && strcmp(s, "off"))
			err_at(ld, v->start_mark, "invalid cpu \"%s\" (true or false)", s);
		return false;	/* switched off: not a signal */
	}
	return true;
}

static void print_sig_cpu(const char *json, const struct wr_cfg_signal *sig)
{
	(void)sig;
	print_bool(json, NULL, true);
}

static bool sig_psi(struct load *ld, const yaml_node_t *v, struct wr_cfg_signal *sig)
{
	const char *s = scalar(ld, v, "psi");

	if (!s)
		return false;
	if (strcmp(s, "cpu") && strcmp(s, "io") && strcmp(s, "memory")) {
		err_at(ld, v->start_mark, "invalid psi \"%s\" (cpu, io or memory)", s);
		return false;
	}
	strcpy(sig->arg, s);
	return true;
}

static void print_sig_arg(const char *json, const struct wr_cfg_signal *sig)
{
	print_str(json, NULL, sig->arg);
}

/* A port, or a list of them. */
static bool sig_accept_queue(struct load *ld, const yaml_node_t *v, struct wr_cfg_signal *sig)
{
	yaml_node_item_t *it = NULL, *end = NULL;
	const char *s;

	if (v->type == YAML_SCALAR_NODE) {
		uint64_t port;

		if (parse_u64(sval(v), 1, 65535, &port)) {
			err_at(ld, v->start_mark, "invalid port \"%s\"", sval(v));
			return false;
		}
		sig->ports[sig->nr_ports++] = port;
	} else if (!list(ld, v, "accept-queue", &it, &end)) {
		return false;
	}
	for (; it && it < end; it++) {
		const yaml_node_t *pn = node(ld, *it);
		uint64_t port;

		if (!pn || !(s = scalar(ld, pn, "a port")))
			continue;
		if (parse_u64(s, 1, 65535, &port)) {
			err_at(ld, pn->start_mark, "invalid port \"%s\"", s);
			continue;
		}
		if (sig->nr_ports == WR_MAX_PORTS) {
			err_at(ld, pn->start_mark, "too many ports (at most %d)", WR_MAX_PORTS);
			break;
		}
		sig->ports[sig->nr_ports++] = port;
	}
	if (!sig->nr_ports) {
		err_at(ld, v->start_mark, "accept-queue needs at least one port");
		return false;
	}
	return true;
}

static void print_sig_ports(const char *json, const struct wr_cfg_signal *sig)
{
	int i;

	open_array(json);
	for (i = 0; i < sig->nr_ports; i++)
		print_u64(NULL, NULL, sig->ports[i]);
	close_array();
}

static bool sig_file(struct load *ld, const yaml_node_t *v, struct wr_cfg_signal *sig)
{
	const char *s = scalar(ld, v, "file");
	char *path;

	if (!s)
		return false;
	path = resolve(ld, s);
	if (!path || strlen(path) >= sizeof(sig->arg)) {
		err_at(ld, v->start_mark, "invalid file \"%s\"", s);
		free(path);
		return false;
	}
	strcpy(sig->arg, path);
	free(path);
	return true;
}

/* The signals of shedding, each a mapping of one key, by enum wr_signal_type. */
static const struct cfg_signal {
	const char *name;
	const char *example;	/* in errors */
	/* Reads v into sig: false when it is no signal (reported, or switched off). */
	bool (*load)(struct load *ld, const yaml_node_t *v, struct wr_cfg_signal *sig);
	void (*print)(const char *json, const struct wr_cfg_signal *sig);
} signals[] = {
	[WR_SIG_CPU] = { .name = "cpu", "{ cpu: true }", sig_cpu, print_sig_cpu },
	[WR_SIG_PSI] = { .name = "psi", "{ psi: cpu }", sig_psi, print_sig_arg },
	[WR_SIG_ACCEPTQ] = { .name = "accept-queue", "{ accept-queue: [PORT, ...] }",
			     sig_accept_queue, print_sig_ports },
	[WR_SIG_FILE] = { .name = "file", "{ file: PATH }", sig_file, print_sig_arg },
};

static void load_signal(struct load *ld, const yaml_node_t *n)
{
	struct wr_cfg_shed *sh = &ld->cfg->shed;
	struct wr_cfg_signal *sig;
	const yaml_node_t *k, *v;
	char names[128] = "", examples[256] = "";
	size_t i;

	for (i = 0; i < ARRAY_SIZE(signals); i++) {
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 i ? ", " : "", signals[i].name);
		snprintf(examples + strlen(examples), sizeof(examples) - strlen(examples), "%s%s",
			 i ? ", " : "", signals[i].example);
	}
	if (n->type != YAML_MAPPING_NODE ||
	    n->data.mapping.pairs.top - n->data.mapping.pairs.start != 1) {
		err_at(ld, n->start_mark, "a signal is one of %s", examples);
		return;
	}
	k = node(ld, n->data.mapping.pairs.start->key);
	v = node(ld, n->data.mapping.pairs.start->value);
	if (!k || !v || k->type != YAML_SCALAR_NODE) {
		err_at(ld, n->start_mark, "a signal is a single key");
		return;
	}
	if (sh->nr_signals == WEIR_MAX_SIGNALS) {
		err_at(ld, n->start_mark, "too many signals (at most %d)", WEIR_MAX_SIGNALS);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(signals); i++)
		if (!strcmp(sval(k), signals[i].name))
			break;
	if (i == ARRAY_SIZE(signals)) {
		err_at(ld, k->start_mark, "unknown signal \"%s\" (%s)", sval(k), names);
		return;
	}
	sig = &sh->signals[sh->nr_signals];
	memset(sig, 0, sizeof(*sig));
	sig->type = i;
	if (signals[i].load(ld, v, sig))
		sh->nr_signals++;
}

static void load_signals(struct load *ld, const yaml_node_t *n)
{
	yaml_node_item_t *it, *end;

	if (!list(ld, n, "signals", &it, &end))
		return;
	for (; it < end; it++) {
		const yaml_node_t *sn = node(ld, *it);

		if (sn)
			load_signal(ld, sn);
	}
}

/* [ { "cpu": true }, { "accept_queue": [ 53, 443 ] } ] */
static void print_signals(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg_shed *sh = &((const struct wr_cfg *)base)->shed;
	char json[32];
	int i;

	open_array(JSON(k));
	for (i = 0; i < sh->nr_signals; i++) {
		const struct cfg_signal *t = &signals[sh->signals[i].type % ARRAY_SIZE(signals)];

		open_object(NULL);
		t->print(underscored(t->name, json, sizeof(json)), &sh->signals[i]);
		close_object();
	}
	close_array();
}

static void check_curve(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals)
{
	const struct wr_curve *c = &ld->cfg->shed.curve;

	(void)vals;
	if (!(c->good > 0 && c->good <= c->bad && c->bad <= 1))
		err_at(ld, n->start_mark, "curve needs 0 < good <= bad <= 1 (good %g, bad %g)",
		       c->good, c->bad);
}

/* The curve's defaults are the shedding math's own. */
static const struct wr_curve curve_default = WR_CURVE_DEFAULT;
#define DURATION_HINT "a duration: 500ms, 28s, 2m; more than 0"

static const struct cfg_key curve_keys[] = {
	{ .name = "good", .kind = &k_fraction, FIELD(shed.curve.good),
	  .defp = &curve_default.good, .hint = "a utilization 0..1" },
	{ .name = "bad", .kind = &k_fraction, FIELD(shed.curve.bad),
	  .defp = &curve_default.bad, .hint = "a utilization 0..1" },
	{ .name = "delay", .kind = &k_ms_as_s, FIELD(shed.curve.delay_s), .json = "delay_s",
	  .min = 1, .max = CFG_MAX_INTERVAL * 1000ULL, .defp = &curve_default.delay_s,
	  .hint = DURATION_HINT },
	{ .name = "ramp", .kind = &k_ms_as_s, FIELD(shed.curve.ramp_s), .json = "ramp_s",
	  .min = 1, .max = CFG_MAX_INTERVAL * 1000ULL, .defp = &curve_default.ramp_s,
	  .hint = DURATION_HINT },
};
static const struct cfg_section curve_section = {
	"curve", curve_keys, ARRAY_SIZE(curve_keys), check_curve
};

static const struct cfg_key shed_keys[] = {
	{ .name = "interval", .kind = &k_ms, FIELD(shed.interval_ms), .json = "interval_ms",
	  .min = 10, .max = 60000, .def = "1s", .hint = "10ms to 1m: 250ms, 1s" },
	{ .name = "signals", .load = load_signals, .print = print_signals,
	  .need = "shedding needs signals: [ { cpu: true }, ... ]" },
	{ .name = "curve", .sub = &curve_section },
	{ .name = "default-class", .kind = &k_uint, FIELD(shed.default_class),
	  .max = WEIR_MAX_CLASS, .def = STR(WEIR_MAX_CLASS),
	  .hint = "0 critical .. " STR(WEIR_MAX_CLASS) },
};
static const struct cfg_section shed_section = SECTION("shedding", shed_keys);

static void load_shedding(struct load *ld, const yaml_node_t *n)
{
	ld->cfg->shed.on = true;
	load_section(ld, &shed_section, n, ld->cfg);
}

/* The controller's settings, or null without a shedding section. */
static void print_shedding(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;

	if (!cfg->shed.on) {
		print_null(JSON(k), NULL);
		return;
	}
	open_object(JSON(k));
	print_section(&shed_section, base);
	close_object();
}

static void capacity_rate(struct load *ld, const yaml_node_t *n)
{
	struct wr_cfg_capacity *cap = &ld->cfg->capacity;
	const char *s = scalar(ld, n, "rate");
	uint64_t rate;
	int cost;

	if (!s)
		return;
	if (parse_rate(s, &rate, &cost)) {
		err_at(ld, n->start_mark, "invalid rate \"%s\"", s);
		return;
	}
	if (cap->rate[cost])
		err_at(ld, n->start_mark, "a second %s capacity \"%s\"",
		       cost == WEIR_COST_PKT ? "packet" : "byte", s);
	cap->rate[cost] = rate;
}

/* A rate, or a list of them: one in packets, one in bytes (or bits). */
static void load_capacity_rate(struct load *ld, const yaml_node_t *n)
{
	yaml_node_item_t *it, *end;

	if (n->type != YAML_SEQUENCE_NODE) {
		capacity_rate(ld, n);
		return;
	}
	list(ld, n, "rate", &it, &end);
	for (; it < end; it++)
		if (node(ld, *it))
			capacity_rate(ld, node(ld, *it));
}

static void print_capacity_rate(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg_capacity *cap = &((const struct wr_cfg *)base)->capacity;
	char buf[48];
	int cost;

	open_array(JSON(k));
	for (cost = WEIR_COST_PKT; cost <= WEIR_COST_BYTE; cost++) {
		if (!cap->rate[cost])
			continue;
		format_rate(cap->rate[cost], cost, buf, sizeof(buf));
		print_str(NULL, NULL, buf);
	}
	close_array();
}

static void check_capacity(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals)
{
	const struct wr_cfg_capacity *cap = &ld->cfg->capacity;

	(void)vals;
	if (!cap->rate[0] && !cap->rate[1])
		err_at(ld, n->start_mark, "capacity needs a rate: 1mpps, 10gbit, or both as a list");
}

static const struct cfg_key capacity_keys[] = {
	{ .name = "rate", .load = load_capacity_rate, .print = print_capacity_rate },
	{ .name = "reserve", .kind = &k_share, FIELD(capacity.reserve), .def = "20%",
	  .hint = "20%, or 0.2; below 100%" },
};
static const struct cfg_section capacity_section = {
	"capacity", capacity_keys, ARRAY_SIZE(capacity_keys), check_capacity
};

/* The capacity and its reserve, or null without a capacity section. */
static void print_capacity(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg_capacity *cap = &((const struct wr_cfg *)base)->capacity;

	if (!cap->rate[0] && !cap->rate[1]) {
		print_null(JSON(k), NULL);
		return;
	}
	open_object(JSON(k));
	print_section(&capacity_section, base);
	close_object();
}

/* ---- the whole file ---- */

static void print_rules(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;
	__u32 i;

	open_array(JSON(k));
	for (i = 0; i < cfg->rules->nr_rules; i++)
		wr_rule_print(cfg->rules, i);
	close_array();
}

static const struct cfg_key tables_keys[] = {
	{ .name = "keys", .kind = &k_uint, FIELD(keys), .min = 1, .max = CFG_MAX_KEYS },
};
static const struct cfg_section tables_section = SECTION("tables", tables_keys);

static const struct cfg_key events_keys[] = {
	{ .name = "interval", .kind = &k_seconds, FIELD(event_interval_s), .json = "interval_s",
	  .min = 1000, .max = CFG_MAX_INTERVAL * 1000ULL, .def = "10s",
	  .hint = "whole seconds from 1s to 24h: 10s, 1m, 2000ms" },
	{ .name = "lines", .kind = &k_uint, FIELD(event_lines), .max = CFG_MAX_LINES,
	  .def = "20" },
};
static const struct cfg_section events_section = SECTION("events", events_keys);

/* ---- fleet ---- */

/* A name of the fleet, or of this host in it: letters, digits, _ - . */
static int parse_fleet_name(const struct cfg_key *k, const char *s, void *f)
{
	if (!s[0] || strlen(s) >= k->size ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
		    strlen(s))
		return -EINVAL;
	strcpy(f, s);
	return 0;
}

static const struct cfg_kind k_fleet_name = { parse_fleet_name, print_string };

/* A path, kept as written (the fleet thread opens it). */
static int parse_path(const struct cfg_key *k, const char *s, void *f)
{
	if (!s[0] || strlen(s) >= k->size)
		return -EINVAL;
	strcpy(f, s);
	return 0;
}

static const struct cfg_kind k_path = { parse_path, print_string };

/* host:port or [v6]:port, the port 1-65535. */
static bool valid_node(const char *s)
{
	const char *colon = strrchr(s, ':');
	uint64_t port;

	if (!colon || colon == s || strlen(s) >= 64)
		return false;
	if (s[0] == '[' && colon[-1] != ']')
		return false;
	return !parse_u64(colon + 1, 1, 65535, &port);
}

static void load_fleet_redis(struct load *ld, const yaml_node_t *n)
{
	struct wr_cfg_fleet *fl = &ld->cfg->fleet;
	yaml_node_item_t *it, *end;

	if (!list(ld, n, "redis", &it, &end))
		return;
	for (; it < end; it++) {
		const yaml_node_t *v = node(ld, *it);
		const char *s = v ? scalar(ld, v, "a Redis server") : NULL;

		if (!s)
			continue;
		if (!valid_node(s)) {
			err_at(ld, v->start_mark, "invalid Redis server \"%s\" (HOST:PORT or "
			       "[IPV6]:PORT, PORT 1-65535)", s);
			continue;
		}
		if (fl->nr_nodes == WEIR_FLEET_NODES) {
			err_at(ld, v->start_mark, "too many Redis servers (at most %d)",
			       WEIR_FLEET_NODES);
			return;
		}
		strcpy(fl->nodes[fl->nr_nodes++], s);
	}
}

static void print_fleet_redis(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;
	int i;

	open_array(JSON(k));
	for (i = 0; i < cfg->fleet.nr_nodes; i++)
		print_str(NULL, NULL, cfg->fleet.nodes[i]);
	close_array();
}

int wr_fleet_auth_check(const char *path, char *why, size_t len)
{
	struct stat st;

	if (stat(path, &st)) {
		snprintf(why, len, "cannot read %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077)) {
		snprintf(why, len, "%s must be a file owned by root that only root can read "
			 "(chmod 600): it holds a password", path);
		return -EPERM;
	}
	return 0;
}

static void check_fleet(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals);

static const char *const fleet_modes[] = { "single", "sharded", "cluster" };
static const char *const fleet_fallbacks[] = { "safe", "local", "hold" };
static const struct cfg_key fleet_keys[] = {
	{ .name = "name", .kind = &k_fleet_name, FIELD(fleet.name),
	  .hint = "1-31 of A-Z a-z 0-9 _ - .", .need = "a fleet needs a name" },
	{ .name = "host", .kind = &k_fleet_name, FIELD(fleet.host),
	  .hint = "1-63 of A-Z a-z 0-9 _ - .; default the hostname" },
	{ .name = "redis", .load = load_fleet_redis, .print = print_fleet_redis,
	  .need = "a fleet needs redis: [ HOST:PORT, ... ]" },
	{ .name = "mode", .kind = &k_choice, FIELD(fleet.mode), .words = fleet_modes,
	  .max = ARRAY_SIZE(fleet_modes), .def = "single" },
	{ .name = "interval", .kind = &k_ms, FIELD(fleet.interval_ms), .json = "interval_ms",
	  .min = 20, .max = 10000, .def = "250ms", .hint = "20ms to 10s: 50ms, 250ms, 1s" },
	{ .name = "stale-after", .kind = &k_ms, FIELD(fleet.stale_ms), .json = "stale_after_ms",
	  .min = 40, .max = 600000, .def = "2s", .hint = "40ms to 10m, more than interval" },
	{ .name = "fallback", .kind = &k_choice, FIELD(fleet.fallback), .words = fleet_fallbacks,
	  .max = ARRAY_SIZE(fleet_fallbacks), .def = "safe" },
	{ .name = "auth-file", .kind = &k_path, FIELD(fleet.auth_file) },
};
static const struct cfg_section fleet_section = {
	"fleet", fleet_keys, ARRAY_SIZE(fleet_keys), check_fleet
};

static void check_fleet(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals)
{
	struct wr_cfg_fleet *fl = &ld->cfg->fleet;
	char why[320];

	(void)vals;
	if (fl->stale_ms <= fl->interval_ms)
		err_at(ld, n->start_mark, "stale-after (%u ms) must be longer than interval (%u ms)",
		       fl->stale_ms, fl->interval_ms);
	if (fl->mode == WR_FLEET_SINGLE && fl->nr_nodes > 1)
		err_at(ld, n->start_mark, "mode single speaks to one Redis server; %d given "
		       "(mode sharded spreads keys over several)", fl->nr_nodes);
	if (fl->auth_file[0] && wr_fleet_auth_check(fl->auth_file, why, sizeof(why)))
		err_at(ld, n->start_mark, "auth-file: %s", why);
}

static void load_fleet(struct load *ld, const yaml_node_t *n)
{
	ld->cfg->fleet.on = true;
	load_section(ld, &fleet_section, n, ld->cfg);
}

/* The fleet's settings, or null without a fleet section. */
static void print_fleet(const struct cfg_key *k, const void *base)
{
	const struct wr_cfg *cfg = base;

	if (!cfg->fleet.on) {
		print_null(JSON(k), NULL);
		return;
	}
	open_object(JSON(k));
	print_section(&fleet_section, base);
	close_object();
}

static const char *const fail_words[] = { "open", "closed" };
static const char *const malformed_words[] = { "drop", "pass" };

static void check_top(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals);

/* The top level of the file, in the order check -j prints it. */
static const struct cfg_key top_keys[] = {
	{ .name = "interfaces", .load = load_ifaces, .print = print_ifaces },
	{ .name = "rules", .load = load_rules, .print = print_rules },
	/* deny and allow print how many prefixes they hold, deny files' included */
	{ .name = "deny", .load = load_deny, .kind = &k_uint, FIELD(nr_deny) },
	{ .name = "allow", .load = load_allow, .kind = &k_uint, FIELD(nr_allow) },
	{ .name = "deny-files", .load = load_deny_files, .print = print_deny_files },
	{ .name = "tables", .sub = &tables_section },
	{ .name = "fail", .kind = &k_choice, FIELD(fail_closed), .words = fail_words,
	  .max = ARRAY_SIZE(fail_words), .def = "open" },
	{ .name = "malformed", .kind = &k_choice, FIELD(malformed_pass),
	  .words = malformed_words, .max = ARRAY_SIZE(malformed_words), .def = "drop" },
	{ .name = "metrics", .load = load_metrics, .print = print_metrics, .sub = &metrics_section,
	  .kind = &k_switch, FIELD(metrics), .def = "on" },
	{ .name = "events", .sub = &events_section },
	{ .name = "shedding", .load = load_shedding, .print = print_shedding,
	  .sub = &shed_section },
	{ .name = "capacity", .print = print_capacity, .sub = &capacity_section },
	{ .name = "fleet", .load = load_fleet, .print = print_fleet, .sub = &fleet_section },
};
static const struct cfg_section top_section = {
	"the top level", top_keys, ARRAY_SIZE(top_keys), check_top
};

/* The data path holds WEIR_LIST_MAX prefixes per family and list. */
static void check_list_sizes(struct load *ld, const yaml_node_t *where, const char *what,
			     const struct wr_cidr *v, int n)
{
	int fam, i, count;

	for (fam = 4; fam <= 6; fam += 2) {
		for (count = 0, i = 0; i < n; i++)
			count += v[i].family == fam;
		if (count > WEIR_LIST_MAX)
			err_at(ld, where->start_mark, "%d IPv%d prefixes on the %s list; it holds %d",
			       count, fam, what, WEIR_LIST_MAX);
	}
}

static void check_top(struct load *ld, const yaml_node_t *n, yaml_node_t *const *vals)
{
	{
		const struct weir_ruleset *rs = ld->cfg->rules;
		__u32 r, l;

		for (r = 0; rs && !ld->cfg->fleet.on && r < rs->nr_rules && r < WEIR_MAX_RULES; r++)
			for (l = 0; l < rs->rules[r].nr_limits && l < WEIR_MAX_LIMITS; l++)
				if (rs->rules[r].limits[l].fleet) {
					err_at(ld, n->start_mark, "rule %s has a limit with scope "
					       "fleet, but the file has no fleet: section to keep it "
					       "in step", rs->names[r]);
					r = WEIR_MAX_RULES;
					break;
				}
		/*
		 * A fleet window shorter than two intervals would turn before
		 * the fleet's count of it came back: each host would count
		 * alone.
		 */
		for (r = 0; rs && ld->cfg->fleet.on && r < rs->nr_rules && r < WEIR_MAX_RULES; r++)
			for (l = 0; l < rs->rules[r].nr_limits && l < WEIR_MAX_LIMITS; l++) {
				const struct weir_limit *lim = &rs->rules[r].limits[l];

				if (lim->fleet && wr_limit_windowed(lim) &&
				    lim->period_ms < 2 * ld->cfg->fleet.interval_ms)
					err_at(ld, n->start_mark, "rule %s: a fleet window (%u ms) "
					       "must span at least two sync intervals (%u ms each)",
					       rs->names[r], lim->period_ms,
					       ld->cfg->fleet.interval_ms);
			}
	}
	const yaml_node_t *deny = vals[key_index(&top_section, "deny")];
	const yaml_node_t *allow = vals[key_index(&top_section, "allow")];
	struct wr_cfg *cfg = ld->cfg;

	check_list_sizes(ld, deny ? deny : n, "deny", cfg->deny, cfg->nr_deny);
	check_list_sizes(ld, allow ? allow : n, "allow", cfg->allow, cfg->nr_allow);
}

static void load_top(struct load *ld, const yaml_node_t *root)
{
	if (root->type != YAML_MAPPING_NODE) {
		err_at(ld, root->start_mark, "the top level must be a mapping, not %s",
		       kind(root));
		return;
	}
	load_section(ld, &top_section, root, ld->cfg);
}

/* The whole file in memory; a reader error then has a line to point at. */
static int slurp(const char *path, char **buf, size_t *len)
{
	struct stat st;
	size_t n = 0, cap = 0;
	char *p = NULL;
	FILE *f;
	int err = 0;

	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	/* A directory, FIFO or device is no config (and must not hang us). */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		close(fd);
		return err;
	}
	f = fdopen(fd, "re");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			char *q;

			if (cap >= CFG_MAX_SIZE) {
				err = -EFBIG;
				goto out;
			}
			cap = cap ? 2 * cap : 65536;
			q = realloc(p, cap);
			if (!q) {
				err = -ENOMEM;
				goto out;
			}
			p = q;
		}
		got = fread(p + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f))
				err = -EIO;
			break;
		}
	}
out:
	fclose(f);
	if (err) {
		free(p);
		return err;
	}
	*buf = p;
	*len = n;
	return 0;
}

/* libyaml's complaint, at the place it names. */
static void syntax_error(struct load *ld, const yaml_parser_t *p, const char *buf)
{
	yaml_mark_t m = p->problem_mark;
	const char *problem = p->problem ? p->problem : "out of memory";
	size_t i;

	if (p->error == YAML_READER_ERROR) {
		/* The reader knows only a byte offset. */
		memset(&m, 0, sizeof(m));
		for (i = 0; i < p->problem_offset; i++) {
			if (buf[i] == '\n') {
				m.line++;
				m.column = 0;
			} else {
				m.column++;
			}
		}
	}
	if (p->context)
		err_at(ld, m, "syntax error: %s (%s at line %lu, column %lu)", problem, p->context,
		       (unsigned long)p->context_mark.line + 1,
		       (unsigned long)p->context_mark.column + 1);
	else
		err_at(ld, m, "syntax error: %s", problem);
}

static int load(const char *path, struct wr_cfg *cfg, struct load *ld)
{
	yaml_parser_t parser;
	yaml_document_t extra;
	yaml_node_t *root;
	char *buf = NULL, *dir;
	size_t len = 0;
	int err;

	memset(cfg, 0, sizeof(*cfg));
	memset(ld, 0, sizeof(*ld));
	ld->path = path;
	ld->cfg = cfg;
	err = slurp(path, &buf, &len);
	if (err)
		return err;
	dir = strdup(path);
	cfg->path = strdup(path);
	cfg->rules = calloc(1, sizeof(*cfg->rules));
	if (!dir || !cfg->path || !cfg->rules) {
		free(dir);
		free(buf);
		wr_cfg_free(cfg);
		return -ENOMEM;
	}
	ld->dir = strdup(dirname(dir));
	free(dir);
	section_defaults(&top_section, cfg);

	if (!ld->dir || !yaml_parser_initialize(&parser)) {
		err = -ENOMEM;
		goto out;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &ld->doc)) {
		syntax_error(ld, &parser, buf);
		yaml_parser_delete(&parser);
		goto out;
	}
	root = yaml_document_get_root_node(&ld->doc);
	/* An empty file, or one of comments only, is a valid config that says nothing. */
	if (root && !is_null(root))
		load_top(ld, root);
	/* One document: a second one would be silently ignored otherwise. */
	if (!yaml_parser_load(&parser, &extra)) {
		syntax_error(ld, &parser, buf);
	} else {
		root = yaml_document_get_root_node(&extra);
		if (root)
			err_at(ld, root->start_mark, "a config file holds one YAML document");
		yaml_document_delete(&extra);
	}
	yaml_document_delete(&ld->doc);
	yaml_parser_delete(&parser);
out:
	free(buf);
	if (!err && ld->oom)
		err = -ENOMEM;
	if (ld->nr_errs)
		qsort(ld->errs, ld->nr_errs, sizeof(*ld->errs), err_order);
	if (err || ld->nr_errs)
		wr_cfg_free(cfg);
	return err ? err : ld->nr_errs;
}

static void load_done(struct load *ld)
{
	errs_free(ld);
	free(ld->ifnames);
	ld->ifnames = NULL;
	free(ld->dir);
	ld->dir = NULL;
}

int wr_cfg_load(const char *path, struct wr_cfg *cfg, FILE *errs)
{
	struct load ld;
	int ret, i;

	ret = load(path, cfg, &ld);
	for (i = 0; errs && ret > 0 && i < ld.nr_errs; i++)
		fprintf(errs, "%s:%lu:%lu: %s\n", ld.errs[i].file, ld.errs[i].line,
			ld.errs[i].column, ld.errs[i].reason);
	load_done(&ld);
	return ret;
}

void wr_cfg_free(struct wr_cfg *cfg)
{
	int i;

	free(cfg->path);
	free(cfg->ifaces);
	free(cfg->rules);
	free(cfg->deny);
	free(cfg->allow);
	for (i = 0; i < cfg->nr_deny_files; i++)
		free(cfg->deny_files[i]);
	free(cfg->deny_files);
	memset(cfg, 0, sizeof(*cfg));
}

/* ---- weir check FILE ---- */

static void usage_check(void)
{
	fprintf(wr_usage_out(),
		"Usage: weir check FILE\n"
		"Validate a config file without applying anything: every error is printed as\n"
		"FILE:LINE:COLUMN: reason, and the exit status is 0 only for a valid file.\n"
		"Interfaces named in the file need not exist here.\n");
}

/* Every key of the file, from the schema: what it says, or its default. */
static void print_cfg(const struct wr_cfg *cfg)
{
	print_section(&top_section, cfg);
}

/*
 * The accuracy of each fleet limit at the configured interval (README
 * "Fleet-wide limits"): once a key is hot, the fleet admits at most burst +
 * rate x t plus rate x (interval + round trip) per host; before (a host
 * reports a key once its own bucket for it is half spent), each host may
 * add a burst and what its bucket refills meanwhile. A fleet window admits
 * its count, plus what the source sends the fleet between the window's
 * turn and the hosts' syncs just after it (2 ms and a round trip); before
 * a host first syncs a source, what it admits until then. The round trip
 * is taken as 1 ms, a LAN's.
 */
static void print_fleet_bounds(const struct wr_cfg *cfg)
{
	const struct weir_ruleset *rs = cfg->rules;
	__u32 i, j;

	if (!cfg->fleet.on)
		return;
	open_array("fleet_bounds");
	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++)
		for (j = 0; j < rs->rules[i].nr_limits && j < WEIR_MAX_LIMITS; j++) {
			const struct weir_limit *l = &rs->rules[i].limits[j];
			struct wr_fleet_bound b = wr_fleet_bound(l, cfg->fleet.interval_ms);
			const char *unit = l->cost == WEIR_COST_BYTE ? "bytes" : "packets";

			if (!l->fleet)
				continue;
			open_object(NULL);
			print_str("rule", "fleet limit %s", rs->names[i]);
			print_u64("limit", "/%llu: ", j);
			if (wr_limit_windowed(l)) {
				print_u64("window_ms", "its windows (%llu ms) turn together on "
					  "every host; in each the fleet admits at most ",
					  l->period_ms ? l->period_ms : 1000);
				print_u64("per_window", "%llu ", l->rate);
				print_str("unit", "%s", unit);
				print_u64("turn_lag_ms", " + what the source sends the fleet in the "
					  "%llu ms after each turn", b.lag_ns / 1000000);
				print_text(" (the hosts sync then: %llu ms + the round trip, %llu ms);",
					   WR_FLEET_TURN_NS / 1000000, WR_FLEET_RTT_NS / 1000000);
				print_u64("first_per_host", " before a host first syncs a source, up "
					  "to %llu more on it and what it admits in an interval\n",
					  l->rate);
				close_object();
				continue;
			}
			print_double("lag_per_host", "once a key is hot, the fleet admits at most "
				     "burst + rate x t + %.0f ", b.per_host);
			print_str("unit", "%s", unit);
			print_text(" per host (rate x (interval %u ms + %llu ms));", cfg->fleet.interval_ms,
				   WR_FLEET_RTT_NS / 1000000);
			print_u64("first_per_host", " before (a host reports a key once it sees it "
				  "over the rate), up to %llu more per host and what its bucket "
				  "refills meanwhile\n", l->burst);
			close_object();
		}
	close_array();
}

int do_check(int argc, char **argv)
{
	struct wr_cfg cfg;
	struct load ld;
	int ret, i;

	if (argc != 1 || !strcmp(argv[0], "help")) {
		usage_check();
		return argc != 1 ? -EINVAL : 0;
	}
	ret = load(argv[0], &cfg, &ld);
	out_begin();
	print_str("file", NULL, argv[0]);
	print_bool("valid", NULL, ret == 0);
	if (ret < 0) {
		pr_err("cannot read %s: %s", argv[0], strerror(-ret));
		goto out;
	}
	open_array("errors");
	for (i = 0; i < ld.nr_errs; i++) {
		const struct cfg_err *e = &ld.errs[i];

		if (!opts.json) {
			fprintf(stderr, "%s:%lu:%lu: %s\n", e->file, e->line, e->column,
				e->reason);
			continue;
		}
		open_object(NULL);
		print_str("file", NULL, e->file);
		print_u64("line", NULL, e->line);
		print_u64("column", NULL, e->column);
		print_str("reason", NULL, e->reason);
		close_object();
	}
	close_array();
	if (!ret) {
		if (opts.json)
			print_cfg(&cfg);
		print_text("%s: valid: %u rules, %d interfaces, %d deny, %d allow\n", argv[0],
			   cfg.rules->nr_rules, cfg.nr_ifaces, cfg.nr_deny, cfg.nr_allow);
		print_fleet_bounds(&cfg);
		wr_cfg_free(&cfg);
	}
	out_end();
out:
	load_done(&ld);
	return ret ? (ret < 0 ? ret : -EINVAL) : 0;
}
