// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The config file: YAML read with libyaml's document API, so every node
 * carries the line and column it came from, and every error is reported as
 * FILE:LINE:COLUMN: reason. Validation goes on after an error, so one pass
 * reports everything that is wrong; a file with any error yields nothing.
 *
 * This file holds what walks a document and collects its errors, at the
 * bottom of config/: every mapping is read by a table of its keys
 * (schema.c), the sections judged by rule_words.c and validate.c, and
 * load.c drives a whole file through them.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config/config_int.h"

/* Make room for one more element of size sz in *arr, which holds n of cap. */
bool cfg_grow(struct load *ld, void **arr, int n, int *cap, size_t sz)
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

	if (!cfg_grow(ld, (void **)&ld->errs, ld->nr_errs, &ld->cap_errs, sizeof(*e)))
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
void err_file(struct load *ld, const char *file, unsigned long line, unsigned long col,
	      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(ld, ld->deny_file_at, file, line, col, fmt, ap);
	va_end(ap);
}

/* An error at a place in the config file; libyaml counts from 0. */
void err_at(struct load *ld, yaml_mark_t mark, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(ld, mark, ld->path, mark.line + 1, mark.column + 1, fmt, ap);
	va_end(ap);
}

yaml_node_t *cfg_node(struct load *ld, int idx)
{
	return yaml_document_get_node(&ld->doc, idx);
}

const char *cfg_sval(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* A plain empty, ~ or null: YAML's way of saying nothing. */
bool cfg_is_null(const yaml_node_t *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	size_t i;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	for (i = 0; i < ARRAY_SIZE(nulls); i++)
		if (!strcmp(cfg_sval(n), nulls[i]))
			return true;
	return false;
}

const char *node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE: return "a mapping";
	case YAML_SEQUENCE_NODE: return "a list";
	default: return "a single value";
	}
}

/* The text of a scalar, or NULL (reported) when n is not a non-empty scalar. */
const char *cfg_scalar(struct load *ld, const yaml_node_t *n, const char *what)
{
	if (n->type != YAML_SCALAR_NODE) {
		err_at(ld, n->start_mark, "%s must be a single value, not %s", what, node_kind(n));
		return NULL;
	}
	if (cfg_is_null(n)) {
		err_at(ld, n->start_mark, "%s needs a value", what);
		return NULL;
	}
	return cfg_sval(n);
}

/* The items of a list (nothing for a null), or false (reported) when n is not one. */
bool cfg_list(struct load *ld, const yaml_node_t *n, const char *what, yaml_node_item_t **start,
	      yaml_node_item_t **end)
{
	*start = *end = NULL;
	if (cfg_is_null(n))
		return true;
	if (n->type != YAML_SEQUENCE_NODE) {
		if (n->type == YAML_SCALAR_NODE)
			err_at(ld, n->start_mark, "%s must be a list, not \"%s\"", what,
			       cfg_sval(n));
		else
			err_at(ld, n->start_mark, "%s must be a list, not %s", what, node_kind(n));
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
bool cfg_mapping(struct load *ld, const yaml_node_t *n, const char *what,
		 const struct cfg_key *names, int nr, yaml_node_t **keys, yaml_node_t **vals)
{
	yaml_node_pair_t *p;
	int i;

	for (i = 0; i < nr; i++)
		keys[i] = vals[i] = NULL;
	if (cfg_is_null(n))
		return true;
	if (n->type != YAML_MAPPING_NODE) {
		if (n->type == YAML_SCALAR_NODE)
			err_at(ld, n->start_mark, "%s must be a mapping, not \"%s\"", what,
			       cfg_sval(n));
		else
			err_at(ld, n->start_mark, "%s must be a mapping, not %s", what,
			       node_kind(n));
		return false;
	}
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = cfg_node(ld, p->key), *v = cfg_node(ld, p->value);

		if (!k || !v)
			continue;
		if (k->type != YAML_SCALAR_NODE) {
			err_at(ld, k->start_mark, "a key in %s must be a single word, not %s", what,
			       node_kind(k));
			continue;
		}
		for (i = 0; i < nr; i++)
			if (!strcmp(cfg_sval(k), names[i].name))
				break;
		if (i == nr) {
			char known[512];
			size_t off = 0;
			int j;

			known[0] = '\0';
			for (j = 0; j < nr && off < sizeof(known); j++)
				off += snprintf(known + off, sizeof(known) - off, "%s%s",
						j ? ", " : "", names[j].name);
			err_at(ld, k->start_mark, "unknown key \"%s\" in %s (known: %s)",
			       cfg_sval(k), what, known);
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
