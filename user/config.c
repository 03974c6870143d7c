// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The config file: YAML read with libyaml's document API, so every node
 * carries the line and column it came from, and every error is reported as
 * FILE:LINE:COLUMN: reason. Validation goes on after an error, so one pass
 * reports everything that is wrong; a file with any error yields nothing.
 *
 * A rule's keys are turned into the words of `sluice rule add` and parsed by
 * sl_rule_parse(), the CLI's own parser; each word remembers the node it came
 * from, so the word the parser names is placed back in the file.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>
#include "config.h"

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
#define CFG_DEFAULT_LISTEN	"127.0.0.1:9464"
#define CFG_DEFAULT_INTERVAL	10
#define CFG_DEFAULT_LINES	20

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
	struct sl_cfg *cfg;
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
		    const char *const *names, int nr, yaml_node_t **keys, yaml_node_t **vals)
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
			if (!strcmp(sval(k), names[i]))
				break;
		if (i == nr) {
			char known[512];
			size_t off = 0;
			int j;

			known[0] = '\0';
			for (j = 0; j < nr && off < sizeof(known); j++)
				off += snprintf(known + off, sizeof(known) - off, "%s%s",
						j ? ", " : "", names[j]);
			err_at(ld, k->start_mark, "unknown key \"%s\" in %s (known: %s)", sval(k),
			       what, known);
			continue;
		}
		if (keys[i]) {
			err_at(ld, k->start_mark, "duplicate key \"%s\" in %s (first at line %lu)",
			       names[i], what, (unsigned long)keys[i]->start_mark.line + 1);
			continue;
		}
		keys[i] = k;
		vals[i] = v;
	}
	return true;
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
static bool item_word(struct load *ld, struct words *w, const struct sl_rule_kw *kw,
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
static bool item_words(struct load *ld, struct words *w, const struct sl_rule_kw *kw,
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
static bool kw_words(struct load *ld, struct words *w, const struct sl_rule_kw *kw,
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
 * Judge the words from start on their own (sl_rule_check_words(): a key
 * and its value, or a whole limit), so that every value is judged by the
 * CLI's parser even when another one of the same rule is wrong. Returns
 * false (reported) if the parser refuses them.
 */
static bool check_words(struct load *ld, const struct words *w, int start, unsigned int head,
			yaml_mark_t at)
{
	struct sl_perr pe;
	int len = w->n - start;

	if (ld->oom)
		return false;
	if (!sl_rule_check_words(len, w->w + start, head, &pe))
		return true;
	err_at(ld, pe.word >= 0 && pe.word < len ? w->m[start + pe.word] : at, "%s", pe.msg);
	return false;
}

/* Keys of a rule or a limit: the keywords of `rule add` that stand there. */
#define MAX_KEYS 32

static int kw_keys(bool limit, const char **names, const struct sl_rule_kw **kws)
{
	int k, nr = 0;

	for (k = 0; k < sl_nr_rule_kws; k++) {
		const struct sl_rule_kw *kw = &sl_rule_kws[k];

		if ((kw->scope == SL_KW_LIMIT || kw->scope == SL_KW_OPTION) != limit)
			continue;
		kws[nr] = kw;
		names[nr++] = kw->key;
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
	const char *names[MAX_KEYS];
	const struct sl_rule_kw *kws[MAX_KEYS];
	yaml_node_t *keys[MAX_KEYS], *vals[MAX_KEYS];
	char heads[64] = "", needs[64] = "";
	int i, nr, start = w->n, piece, head = -1, nheads = 0;
	bool ok = true;

	nr = kw_keys(true, names, kws);
	if (!mapping(ld, n, "a limit", names, nr, keys, vals))
		return false;
	for (i = 0; i < nr; i++) {
		if (kws[i]->scope != SL_KW_LIMIT)
			continue;
		snprintf(heads + strlen(heads), sizeof(heads) - strlen(heads), "%s%s",
			 *heads ? " or " : "", names[i]);
		snprintf(needs + strlen(needs), sizeof(needs) - strlen(needs),
			 *needs ? " (or %s)" : "%s", names[i]);
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
		if (!vals[i] || kws[i]->scope != SL_KW_OPTION)
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
static void load_rule(struct load *ld, const yaml_node_t *n, int idx, struct seen_name *seen)
{
	const char *names[MAX_KEYS + 2];
	const struct sl_rule_kw *kws[MAX_KEYS + 2];
	yaml_node_t *keys[MAX_KEYS + 2], *vals[MAX_KEYS + 2];
	struct words w = {};
	yaml_node_item_t *it, *end;
	struct sluice_rule r;
	struct sl_perr pe;
	char name[SLUICE_NAME_LEN];
	const char *s;
	bool ok = true;
	int i, nr, start;

	/* name, the rule's keywords, limits */
	names[0] = "name";
	nr = 1 + kw_keys(false, names + 1, kws + 1);
	names[nr++] = "limits";
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
		if (sl_rule_name(s, &pe)) {
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
		if (sl_rule_parse(w.n, w.w, &r, name, &pe)) {
			err_at(ld, pe.word >= 0 && pe.word < w.n ? w.m[pe.word] : n->start_mark,
			       "%s", pe.msg);
		} else if (idx < SLUICE_MAX_RULES) {
			struct sluice_ruleset *rs = ld->cfg->rules;

			rs->rules[idx] = r;
			snprintf(rs->names[idx], SLUICE_NAME_LEN, "%s", name);
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
		if (idx == SLUICE_MAX_RULES)
			err_at(ld, r->start_mark, "too many rules (at most %d)", SLUICE_MAX_RULES);
		load_rule(ld, r, idx, seen);
	}
	free(seen);
}

/* ---- interfaces ---- */

enum { I_NAME, I_MODE, I_NR };
static const char *const iface_keys[I_NR] = { "name", "mode" };

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

static void load_iface(struct load *ld, const yaml_node_t *n)
{
	struct sl_cfg *cfg = ld->cfg;
	yaml_node_t *keys[I_NR], *vals[I_NR];
	struct sl_cfg_iface ifc = {};
	bool ok = true;
	const char *s;
	int i;

	if (n->type != YAML_MAPPING_NODE) {
		err_at(ld, n->start_mark, "an interface must be a mapping, not %s", kind(n));
		return;
	}
	mapping(ld, n, "an interface", iface_keys, I_NR, keys, vals);
	if (!vals[I_NAME]) {
		err_at(ld, n->start_mark, "an interface needs a name");
		ok = false;
	} else if ((s = scalar(ld, vals[I_NAME], "name"))) {
		if (!valid_ifname(s)) {
			err_at(ld, vals[I_NAME]->start_mark, "invalid interface name \"%s\"", s);
			ok = false;
		} else {
			strcpy(ifc.name, s);
		}
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
	ifc.mode = SL_MODE_NATIVE;
	if (vals[I_MODE]) {
		s = scalar(ld, vals[I_MODE], "mode");
		for (i = 0; s && i < (int)ARRAY_SIZE(sl_mode_names); i++)
			if (!strcmp(s, sl_mode_names[i]))
				break;
		if (s && i == (int)ARRAY_SIZE(sl_mode_names))
			err_at(ld, vals[I_MODE]->start_mark,
			       "invalid mode \"%s\" (native, generic or tc)", s);
		if (!s || i == (int)ARRAY_SIZE(sl_mode_names))
			ok = false;
		else
			ifc.mode = i;
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

/* ---- deny and allow ---- */

static void add_cidr(struct load *ld, struct sl_cidr **arr, int *nr, int *cap,
		     const struct sl_cidr *c)
{
	if (!grow(ld, (void **)arr, *nr, cap, sizeof(**arr)))
		return;
	(*arr)[(*nr)++] = *c;
}

/*
 * A /0 deny drops a whole family, the host's own clients included: never
 * from a file the daemon reloads on every change. (`sluice deny add CIDR
 * force` can, by hand.)
 */
#define DENY_ALL_MSG "deny %s would drop every IPv%d packet, this host's own traffic " \
		     "included; a config never denies a whole family ('sluice deny add " \
		     "CIDR force' does, by hand)"

static void load_cidrs(struct load *ld, const yaml_node_t *n, const char *what,
		       struct sl_cidr **arr, int *nr, int *cap)
{
	yaml_node_item_t *it, *end;
	struct sl_cidr c;

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
	struct sl_cfg *cfg = ld->cfg;
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
		struct sl_cidr c;
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
	struct sl_cfg *cfg = ld->cfg;
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

/* ---- switches, tables, metrics, events ---- */

/* A value that must be one of two words; *out is the index of the word. */
static void choice(struct load *ld, const yaml_node_t *n, const char *what, const char *a,
		   const char *b, int *out)
{
	const char *s = scalar(ld, n, what);

	if (!s)
		return;
	if (!strcmp(s, a))
		*out = 0;
	else if (!strcmp(s, b))
		*out = 1;
	else
		err_at(ld, n->start_mark, "invalid %s \"%s\" (%s or %s)", what, s, a, b);
}

enum { T_KEYS, T_NR };
static const char *const table_keys[T_NR] = { "keys" };

static void load_tables(struct load *ld, const yaml_node_t *n)
{
	yaml_node_t *keys[T_NR], *vals[T_NR];
	const char *s;
	uint64_t v;

	if (!mapping(ld, n, "tables", table_keys, T_NR, keys, vals) || !vals[T_KEYS])
		return;
	s = scalar(ld, vals[T_KEYS], "keys");
	if (!s)
		return;
	if (parse_u64(s, 1, CFG_MAX_KEYS, &v))
		err_at(ld, vals[T_KEYS]->start_mark, "invalid keys \"%s\" (1 to %llu)", s,
		       CFG_MAX_KEYS);
	else
		ld->cfg->keys = v;
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

enum { M_LISTEN, M_NR };
static const char *const metrics_keys[M_NR] = { "listen" };

/* A mapping, or a switch: off/false/no turn the endpoint off, on/true/yes keep the default. */
static void load_metrics(struct load *ld, const yaml_node_t *n)
{
	static const char *const off[] = { "off", "false", "no", "Off", "False", "No", "OFF",
					   "FALSE", "NO" };
	static const char *const on[] = { "on", "true", "yes", "On", "True", "Yes", "ON",
					  "TRUE", "YES" };
	struct sl_cfg *cfg = ld->cfg;
	yaml_node_t *keys[M_NR], *vals[M_NR];
	const char *s;
	size_t i;

	if (n->type == YAML_SCALAR_NODE) {
		for (i = 0; i < ARRAY_SIZE(off); i++) {
			if (!strcmp(sval(n), off[i])) {
				cfg->metrics = false;
				return;
			}
			if (!strcmp(sval(n), on[i]))
				return;
		}
	}
	if (n->type == YAML_SCALAR_NODE && !is_null(n)) {
		err_at(ld, n->start_mark,
		       "metrics must be a mapping ({ listen: HOST:PORT }) or off, not \"%s\"",
		       sval(n));
		return;
	}
	if (!mapping(ld, n, "metrics", metrics_keys, M_NR, keys, vals) || !vals[M_LISTEN])
		return;
	s = scalar(ld, vals[M_LISTEN], "listen");
	if (!s)
		return;
	if (strlen(s) >= sizeof(cfg->metrics_listen) || !valid_listen(s))
		err_at(ld, vals[M_LISTEN]->start_mark,
		       "invalid listen \"%s\" (IPV4:PORT or [IPV6]:PORT, PORT 1-65535)", s);
	else
		strcpy(cfg->metrics_listen, s);
}

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

/* A duration in whole seconds: 10s, 1m, 1h, 2000ms. */
static int parse_duration_s(const char *s, uint64_t *out)
{
	uint64_t ms;
	int err = parse_duration_ms(s, &ms);

	if (err)
		return err;
	if (ms % 1000)
		return -EINVAL;
	*out = ms / 1000;
	return 0;
}

enum { E_INTERVAL, E_LINES, E_NR };
static const char *const events_keys[E_NR] = { "interval", "lines" };

static void load_events(struct load *ld, const yaml_node_t *n)
{
	yaml_node_t *keys[E_NR], *vals[E_NR];
	const char *s;
	uint64_t v;

	if (!mapping(ld, n, "events", events_keys, E_NR, keys, vals))
		return;
	if (vals[E_INTERVAL] && (s = scalar(ld, vals[E_INTERVAL], "interval"))) {
		if (parse_duration_s(s, &v) || v < 1 || v > CFG_MAX_INTERVAL)
			err_at(ld, vals[E_INTERVAL]->start_mark,
			       "invalid interval \"%s\" (whole seconds from 1s to 24h: 10s, 1m, "
			       "2000ms)", s);
		else
			ld->cfg->event_interval_s = v;
	}
	if (vals[E_LINES] && (s = scalar(ld, vals[E_LINES], "lines"))) {
		if (parse_u64(s, 0, CFG_MAX_LINES, &v))
			err_at(ld, vals[E_LINES]->start_mark, "invalid lines \"%s\" (0 to %d)", s,
			       CFG_MAX_LINES);
		else
			ld->cfg->event_lines = v;
	}
}

/* ---- shedding and reserved capacity ---- */

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

static void load_signal(struct load *ld, const yaml_node_t *n)
{
	struct sl_cfg_shed *sh = &ld->cfg->shed;
	struct sl_cfg_signal *sig;
	const yaml_node_t *k, *v;
	const char *name, *s;

	if (n->type != YAML_MAPPING_NODE ||
	    n->data.mapping.pairs.top - n->data.mapping.pairs.start != 1) {
		err_at(ld, n->start_mark, "a signal is one of { cpu: true }, { psi: cpu }, "
		       "{ accept-queue: [PORT, ...] }, { file: PATH }");
		return;
	}
	k = node(ld, n->data.mapping.pairs.start->key);
	v = node(ld, n->data.mapping.pairs.start->value);
	if (!k || !v || k->type != YAML_SCALAR_NODE) {
		err_at(ld, n->start_mark, "a signal is a single key");
		return;
	}
	if (sh->nr_signals == SLUICE_MAX_SIGNALS) {
		err_at(ld, n->start_mark, "too many signals (at most %d)", SLUICE_MAX_SIGNALS);
		return;
	}
	sig = &sh->signals[sh->nr_signals];
	memset(sig, 0, sizeof(*sig));
	name = sval(k);
	if (!strcmp(name, "cpu")) {
		if (!(s = scalar(ld, v, "cpu")))
			return;
		if (strcmp(s, "true") && strcmp(s, "yes") && strcmp(s, "on")) {
			if (strcmp(s, "false") && strcmp(s, "no") && strcmp(s, "off"))
				err_at(ld, v->start_mark, "invalid cpu \"%s\" (true or false)", s);
			return;	/* switched off: not a signal */
		}
		sig->type = SL_SIG_CPU;
	} else if (!strcmp(name, "psi")) {
		if (!(s = scalar(ld, v, "psi")))
			return;
		if (strcmp(s, "cpu") && strcmp(s, "io") && strcmp(s, "memory")) {
			err_at(ld, v->start_mark, "invalid psi \"%s\" (cpu, io or memory)", s);
			return;
		}
		sig->type = SL_SIG_PSI;
		strcpy(sig->arg, s);
	} else if (!strcmp(name, "accept-queue")) {
		yaml_node_item_t *it, *end;

		sig->type = SL_SIG_ACCEPTQ;
		if (v->type == YAML_SCALAR_NODE) {
			/* a single port */
			it = NULL;
			end = NULL;
		} else if (!list(ld, v, "accept-queue", &it, &end)) {
			return;
		}
		if (v->type == YAML_SCALAR_NODE) {
			uint64_t port;

			if (parse_u64(sval(v), 1, 65535, &port)) {
				err_at(ld, v->start_mark, "invalid port \"%s\"", sval(v));
				return;
			}
			sig->ports[sig->nr_ports++] = port;
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
			if (sig->nr_ports == SL_MAX_PORTS) {
				err_at(ld, pn->start_mark, "too many ports (at most %d)", SL_MAX_PORTS);
				break;
			}
			sig->ports[sig->nr_ports++] = port;
		}
		if (!sig->nr_ports) {
			err_at(ld, v->start_mark, "accept-queue needs at least one port");
			return;
		}
	} else if (!strcmp(name, "file")) {
		char *path;

		if (!(s = scalar(ld, v, "file")))
			return;
		path = resolve(ld, s);
		if (!path || strlen(path) >= sizeof(sig->arg)) {
			err_at(ld, v->start_mark, "invalid file \"%s\"", s);
			free(path);
			return;
		}
		sig->type = SL_SIG_FILE;
		strcpy(sig->arg, path);
		free(path);
	} else {
		err_at(ld, k->start_mark, "unknown signal \"%s\" (cpu, psi, accept-queue, file)",
		       name);
		return;
	}
	sh->nr_signals++;
}

enum { C_GOOD, C_BAD, C_DELAY, C_RAMP, C_NR };
static const char *const curve_keys[C_NR] = { "good", "bad", "delay", "ramp" };

static void load_curve(struct load *ld, const yaml_node_t *n)
{
	struct sl_curve *c = &ld->cfg->shed.curve;
	yaml_node_t *keys[C_NR], *vals[C_NR];
	const char *s;
	uint64_t ms;
	int i;

	if (!mapping(ld, n, "curve", curve_keys, C_NR, keys, vals))
		return;
	for (i = C_GOOD; i <= C_BAD; i++) {
		double v;

		if (!vals[i] || !(s = scalar(ld, vals[i], curve_keys[i])))
			continue;
		if (parse_fraction(s, &v)) {
			err_at(ld, vals[i]->start_mark, "invalid %s \"%s\" (a utilization 0..1)",
			       curve_keys[i], s);
			continue;
		}
		if (i == C_GOOD)
			c->good = v;
		else
			c->bad = v;
	}
	for (i = C_DELAY; i <= C_RAMP; i++) {
		if (!vals[i] || !(s = scalar(ld, vals[i], curve_keys[i])))
			continue;
		if (parse_duration_ms(s, &ms) || ms == 0 || ms > CFG_MAX_INTERVAL * 1000ULL) {
			err_at(ld, vals[i]->start_mark, "invalid %s \"%s\" (a duration: 500ms, 28s, "
			       "2m; more than 0)", curve_keys[i], s);
			continue;
		}
		if (i == C_DELAY)
			c->delay_s = ms / 1000.0;
		else
			c->ramp_s = ms / 1000.0;
	}
	if (!(c->good > 0 && c->good <= c->bad && c->bad <= 1))
		err_at(ld, n->start_mark, "curve needs 0 < good <= bad <= 1 (good %g, bad %g)",
		       c->good, c->bad);
}

enum { S_INTERVAL, S_SIGNALS, S_CURVE, S_DEFAULT_CLASS, S_NR };
static const char *const shed_keys[S_NR] = { "interval", "signals", "curve", "default-class" };

static void load_shedding(struct load *ld, const yaml_node_t *n)
{
	struct sl_cfg_shed *sh = &ld->cfg->shed;
	yaml_node_t *keys[S_NR], *vals[S_NR];
	yaml_node_item_t *it, *end;
	const char *s;
	uint64_t v;

	sh->on = true;
	if (!mapping(ld, n, "shedding", shed_keys, S_NR, keys, vals))
		return;
	if (vals[S_INTERVAL] && (s = scalar(ld, vals[S_INTERVAL], "interval"))) {
		if (parse_duration_ms(s, &v) || v < 10 || v > 60000)
			err_at(ld, vals[S_INTERVAL]->start_mark,
			       "invalid interval \"%s\" (10ms to 1m: 250ms, 1s)", s);
		else
			sh->interval_ms = v;
	}
	if (vals[S_CURVE])
		load_curve(ld, vals[S_CURVE]);
	if (vals[S_DEFAULT_CLASS] && (s = scalar(ld, vals[S_DEFAULT_CLASS], "default-class"))) {
		if (parse_u64(s, 0, SLUICE_MAX_CLASS, &v))
			err_at(ld, vals[S_DEFAULT_CLASS]->start_mark,
			       "invalid default-class \"%s\" (0 critical .. %d)", s, SLUICE_MAX_CLASS);
		else
			sh->default_class = v;
	}
	if (!vals[S_SIGNALS]) {
		err_at(ld, n->start_mark, "shedding needs signals: [ { cpu: true }, ... ]");
		return;
	}
	if (!list(ld, vals[S_SIGNALS], "signals", &it, &end))
		return;
	for (; it < end; it++) {
		const yaml_node_t *sn = node(ld, *it);

		if (sn)
			load_signal(ld, sn);
	}
}

enum { P_RATE, P_RESERVE, P_NR };
static const char *const capacity_keys[P_NR] = { "rate", "reserve" };

static void capacity_rate(struct load *ld, const yaml_node_t *n)
{
	struct sl_cfg_capacity *cap = &ld->cfg->capacity;
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
		       cost == SLUICE_COST_PKT ? "packet" : "byte", s);
	cap->rate[cost] = rate;
}

static void load_capacity(struct load *ld, const yaml_node_t *n)
{
	struct sl_cfg_capacity *cap = &ld->cfg->capacity;
	yaml_node_t *keys[P_NR], *vals[P_NR];
	const char *s;

	if (!mapping(ld, n, "capacity", capacity_keys, P_NR, keys, vals))
		return;
	if (vals[P_RATE] && vals[P_RATE]->type == YAML_SEQUENCE_NODE) {
		yaml_node_item_t *it, *end;

		list(ld, vals[P_RATE], "rate", &it, &end);
		for (; it < end; it++)
			if (node(ld, *it))
				capacity_rate(ld, node(ld, *it));
	} else if (vals[P_RATE]) {
		capacity_rate(ld, vals[P_RATE]);
	}
	if (!cap->rate[0] && !cap->rate[1])
		err_at(ld, n->start_mark, "capacity needs a rate: 1mpps, 10gbit, or both as a list");
	if (vals[P_RESERVE] && (s = scalar(ld, vals[P_RESERVE], "reserve"))) {
		if (parse_fraction(s, &cap->reserve) || cap->reserve >= 1)
			err_at(ld, vals[P_RESERVE]->start_mark,
			       "invalid reserve \"%s\" (20%%, or 0.2; below 100%%)", s);
	}
}

/* ---- the whole file ---- */

enum {
	K_INTERFACES, K_RULES, K_DENY, K_ALLOW, K_DENY_FILES, K_TABLES, K_FAIL, K_MALFORMED,
	K_METRICS, K_EVENTS, K_SHEDDING, K_CAPACITY, K_NR
};
static const char *const top_keys[K_NR] = {
	"interfaces", "rules", "deny", "allow", "deny-files", "tables", "fail", "malformed",
	"metrics", "events", "shedding", "capacity",
};

/* The data path holds SLUICE_LIST_MAX prefixes per family and list. */
static void check_list_sizes(struct load *ld, const yaml_node_t *where, const char *what,
			     const struct sl_cidr *v, int n)
{
	int fam, i, count;

	for (fam = 4; fam <= 6; fam += 2) {
		for (count = 0, i = 0; i < n; i++)
			count += v[i].family == fam;
		if (count > SLUICE_LIST_MAX)
			err_at(ld, where->start_mark, "%d IPv%d prefixes on the %s list; it holds %d",
			       count, fam, what, SLUICE_LIST_MAX);
	}
}

static void load_top(struct load *ld, const yaml_node_t *root)
{
	struct sl_cfg *cfg = ld->cfg;
	yaml_node_t *keys[K_NR], *vals[K_NR];

	if (root->type != YAML_MAPPING_NODE) {
		err_at(ld, root->start_mark, "the top level must be a mapping, not %s",
		       kind(root));
		return;
	}
	mapping(ld, root, "the top level", top_keys, K_NR, keys, vals);
	if (vals[K_INTERFACES])
		load_ifaces(ld, vals[K_INTERFACES]);
	if (vals[K_RULES])
		load_rules(ld, vals[K_RULES]);
	if (vals[K_DENY])
		load_cidrs(ld, vals[K_DENY], "deny", &cfg->deny, &cfg->nr_deny, &ld->cap_deny);
	if (vals[K_ALLOW])
		load_cidrs(ld, vals[K_ALLOW], "allow", &cfg->allow, &cfg->nr_allow,
			   &ld->cap_allow);
	if (vals[K_DENY_FILES])
		load_deny_files(ld, vals[K_DENY_FILES]);
	if (vals[K_TABLES])
		load_tables(ld, vals[K_TABLES]);
	if (vals[K_FAIL])
		choice(ld, vals[K_FAIL], "fail", "open", "closed", &cfg->fail_closed);
	if (vals[K_MALFORMED])
		choice(ld, vals[K_MALFORMED], "malformed", "drop", "pass", &cfg->malformed_pass);
	if (vals[K_METRICS])
		load_metrics(ld, vals[K_METRICS]);
	if (vals[K_EVENTS])
		load_events(ld, vals[K_EVENTS]);
	if (vals[K_SHEDDING])
		load_shedding(ld, vals[K_SHEDDING]);
	if (vals[K_CAPACITY])
		load_capacity(ld, vals[K_CAPACITY]);
	check_list_sizes(ld, vals[K_DENY] ? vals[K_DENY] : root, "deny", cfg->deny,
			 cfg->nr_deny);
	check_list_sizes(ld, vals[K_ALLOW] ? vals[K_ALLOW] : root, "allow", cfg->allow,
			 cfg->nr_allow);
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

static int load(const char *path, struct sl_cfg *cfg, struct load *ld)
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
		sl_cfg_free(cfg);
		return -ENOMEM;
	}
	ld->dir = strdup(dirname(dir));
	free(dir);
	cfg->metrics = true;
	strcpy(cfg->metrics_listen, CFG_DEFAULT_LISTEN);
	cfg->event_interval_s = CFG_DEFAULT_INTERVAL;
	cfg->event_lines = CFG_DEFAULT_LINES;
	cfg->shed.interval_ms = 1000;
	cfg->shed.curve = (struct sl_curve)SL_CURVE_DEFAULT;
	cfg->shed.default_class = SLUICE_MAX_CLASS;
	cfg->capacity.reserve = 0.2;

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
		sl_cfg_free(cfg);
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

int sl_cfg_load(const char *path, struct sl_cfg *cfg, FILE *errs)
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

void sl_cfg_free(struct sl_cfg *cfg)
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

/* ---- sluice check FILE ---- */

static void usage_check(void)
{
	fprintf(sl_usage_out(),
		"Usage: sluice check FILE\n"
		"Validate a config file without applying anything: every error is printed as\n"
		"FILE:LINE:COLUMN: reason, and the exit status is 0 only for a valid file.\n"
		"Interfaces named in the file need not exist here.\n");
}

static void print_cfg(const struct sl_cfg *cfg)
{
	int i;

	open_array("rules");
	for (i = 0; i < (int)cfg->rules->nr_rules; i++)
		sl_rule_print(cfg->rules, i);
	close_array();
	open_array("interfaces");
	for (i = 0; i < cfg->nr_ifaces; i++) {
		open_object(NULL);
		print_str("name", NULL, cfg->ifaces[i].name);
		print_str("mode", NULL, sl_mode_names[cfg->ifaces[i].mode]);
		close_object();
	}
	close_array();
	print_u64("deny", NULL, cfg->nr_deny);
	print_u64("allow", NULL, cfg->nr_allow);
	open_array("deny_files");
	for (i = 0; i < cfg->nr_deny_files; i++)
		print_str(NULL, NULL, cfg->deny_files[i]);
	close_array();
	print_u64("keys", NULL, cfg->keys);
	print_str("fail", NULL, cfg->fail_closed ? "closed" : "open");
	print_str("malformed", NULL, cfg->malformed_pass ? "pass" : "drop");
	if (cfg->metrics)
		print_str("metrics", NULL, cfg->metrics_listen);
	else
		print_null("metrics", NULL);
	open_object("events");
	print_u64("interval_s", NULL, cfg->event_interval_s);
	print_u64("lines", NULL, cfg->event_lines);
	close_object();
}

int do_check(int argc, char **argv)
{
	struct sl_cfg cfg;
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
		sl_cfg_free(&cfg);
	}
	out_end();
out:
	load_done(&ld);
	return ret ? (ret < 0 ? ret : -EINVAL) : 0;
}
