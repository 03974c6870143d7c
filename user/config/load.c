// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Loading a config file, the top of config/: the file read whole, its
 * YAML parsed into a document (reader.c's helpers walk it), the top-level
 * mapping read by the schema's tables (schema.c), the sections judged
 * (validate.c, rule_words.c), and the errors sorted and written out.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config/config_int.h"

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
	free(cfg->feeds);
	memset(cfg, 0, sizeof(*cfg));
}
