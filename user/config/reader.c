// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The config file: YAML read with libyaml's document API, so every node
 * carries the line and column it came from, and every error is reported as
 * FILE:LINE:COLUMN: reason. Validation goes on after an error, so one pass
 * reports everything that is wrong; a file with any error yields nothing.
 *
 * This file reads the document and collects the errors; every mapping of
 * it is then read by a table of its keys (schema.c), the sections loaded
 * and judged by rule_words.c and validate.c.
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

static void load_top(struct load *ld, const yaml_node_t *root)
{
	if (root->type != YAML_MAPPING_NODE) {
		err_at(ld, root->start_mark, "the top level must be a mapping, not %s",
		       node_kind(root));
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

int cfg_load(const char *path, struct wr_cfg *cfg, struct load *ld)
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
	if (root && !cfg_is_null(root))
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

void cfg_load_done(struct load *ld)
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

	ret = cfg_load(path, cfg, &ld);
	for (i = 0; errs && ret > 0 && i < ld.nr_errs; i++)
		fprintf(errs, "%s:%lu:%lu: %s\n", ld.errs[i].file, ld.errs[i].line,
			ld.errs[i].column, ld.errs[i].reason);
	cfg_load_done(&ld);
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
