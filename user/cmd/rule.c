// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir rule add|del|list`: the rule set from the command line, over the
 * grammar and the rule set commit of lib/rules.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"
#include "weir_limiter.h"
#include "cmd/cmd.h"
#include "integrations/feedstore.h"

/* The usage of `weir rule`, written from the grammar's keyword table. */
static void usage_rule(void)
{
	FILE *f = wr_usage_out();
	const struct wr_rule_kw *kw, *o;
	const struct wr_rule_kw *end = wr_rule_kws + wr_nr_rule_kws;
	const char *sep = "";
	int col;

	fputs("Usage: weir rule add NAME [MATCH...] LIMIT [LIMIT...]", f);
	for (kw = wr_rule_kws; kw < end; kw++)
		if (kw->scope == WR_KW_RULE)
			fprintf(f, " [%s %s]", kw->word, kw->value);
	fputs("\nLIMIT :=", f);
	for (kw = wr_rule_kws; kw < end; kw++) {
		if (kw->scope != WR_KW_LIMIT)
			continue;
		fprintf(f, "%s %s %s", sep, kw->word, kw->value);
		for (o = wr_rule_kws; o < end; o++)
			if (o->scope == WR_KW_OPTION && (o->heads & kw->heads))
				fprintf(f, " [%s %s]", o->word, o->value);
		sep = " |";
	}
	fputs("\n"
	      "       weir rule del NAME\n"
	      "       weir rule list\n", f);
	/* The matches, as many as fit a line; one with a help on a line of its own. */
	col = fprintf(f, "MATCH :=");
	sep = "";
	for (kw = wr_rule_kws; kw < end; kw++) {
		if (kw->scope != WR_KW_MATCH)
			continue;
		if (*sep && (kw->help || col + 3 + strlen(kw->word) + 1 + strlen(kw->value) > 79)) {
			fputs("\n      ", f);
			col = 6;
		}
		col += fprintf(f, "%s %s %s", sep, kw->word, kw->value);
		if (kw->help)
			col += fprintf(f, "      %s", kw->help);
		sep = " |";
	}
	fputc('\n', f);
	for (kw = wr_rule_kws; kw < end; kw++)
		if (kw->scope != WR_KW_MATCH && kw->help)
			fprintf(f, "%s\n", kw->help);
	fprintf(f, "Up to %d rules of up to %d limits; a packet passes only if every limit of\n"
		"every matching rule admits it, and only then is it charged.\n",
		WEIR_MAX_RULES, WEIR_MAX_LIMITS);
}

static int rule_list(const struct wr_maps *m)
{
	struct weir_ruleset *rs = wr_live_get(m);
	__u32 i;

	if (!rs)
		return -ENOENT;
	out_begin();
	open_array("rules");
	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++)
		wr_rule_print(rs, i);
	close_array();
	out_end();
	free(rs);
	return 0;
}

static int rule_change(int argc, char **argv, bool add)
{
	struct weir_ruleset *rs = NULL;
	struct weir_rule r;
	struct weir_ban bans[WEIR_MAX_LIMITS];
	char name[WEIR_NAME_LEN] = "", srcset[WEIR_SRCSET_LEN] = "", why[400] = "";
	char dir[PATH_MAX] = "";
	struct wr_srcset_src src = { .dir = dir, .geo_db = wr_geo_db_default() };
	struct wr_maps m;
	int lock, err = 0, at;

	if (add) {
		struct wr_perr pe;

		err = wr_rule_parse(argc, argv, &r, bans, srcset, name, &pe);
		if (err) {
			pr_err("%s", pe.msg);
			if (argc < 1)
				usage_rule();
			return err;
		}
		if (wr_rule_name_auto(name)) {
			pr_err("rule name \"%s\": auto-N names are weir auto's, and auto-fN "
			       "(docs/auto.md)", name);
			return -EINVAL;
		}
	} else {
		if (argc != 1) {
			pr_err(argc ? "rule del takes one NAME" : "rule del needs the NAME of a rule");
			usage_rule();
			return -EINVAL;
		}
		snprintf(name, sizeof(name), "%s", argv[0]);
	}
	/* Rules may come before any interface: adding loads without attaching. */
	lock = wr_write_begin(&m, add);
	if (lock < 0)
		return lock;
	rs = wr_live_get(&m);
	if (!rs) {
		err = -ENOENT;
		goto out;
	}
	at = wr_rule_find(rs, add ? name : argv[0]);
	if (add) {
		if (at >= 0) {
			pr_err("rule \"%s\" already exists", name);
			err = -EEXIST;
			goto out;
		}
		if (rs->nr_rules >= WEIR_MAX_RULES) {
			pr_err("too many rules: %u is the most weir holds", WEIR_MAX_RULES);
			err = -E2BIG;
			goto out;
		}
		rs->rules[rs->nr_rules] = r;
		memcpy(rs->bans[rs->nr_rules], bans, sizeof(bans));
		memset(rs->names[rs->nr_rules], 0, WEIR_NAME_LEN);
		strcpy(rs->names[rs->nr_rules], name);
		rs->nr_rules++;
		if (srcset[0]) {
			err = wr_srcset_put(rs, rs->nr_rules - 1, srcset, why, sizeof(why));
			if (err) {
				pr_err("rule %s: %s", name, why);
				goto out;
			}
		}
	} else {
		if (at < 0) {
			pr_err("unknown rule \"%s\"", argv[0]);
			err = -ENOENT;
			goto out;
		}
		memmove(&rs->rules[at], &rs->rules[at + 1],
			(rs->nr_rules - at - 1) * sizeof(rs->rules[0]));
		memmove(rs->names[at], rs->names[at + 1],
			(rs->nr_rules - at - 1) * WEIR_NAME_LEN);
		memmove(rs->bans[at], rs->bans[at + 1],
			(rs->nr_rules - at - 1) * sizeof(rs->bans[0]));
		rs->nr_rules--;
		memset(&rs->rules[rs->nr_rules], 0, sizeof(rs->rules[0]));
		memset(rs->names[rs->nr_rules], 0, WEIR_NAME_LEN);
		memset(rs->bans[rs->nr_rules], 0, sizeof(rs->bans[0]));
	}
	/* The rules' source sets filled before the set that names them goes live. */
	if (wr_srcset_count(rs)) {
		err = wr_feed_dir(dir, sizeof(dir));
		if (!err)
			err = wr_srcsets_load(&m, rs, wr_srcset_resolve, &src, why, sizeof(why));
		else
			snprintf(why, sizeof(why), "cannot open the feed store: %s",
				 strerror(-err));
		if (err) {
			pr_err("rule %s: %s; nothing changed", name, why);
			goto out;
		}
	}
	err = wr_ruleset_commit(&m, rs);
	if (err) {
		pr_err("cannot commit the rule set: %s", strerror(-err));
		goto out;
	}
	wr_srcsets_release(&m, rs);
	print_text("%s rule %s\n", add ? "added" : "deleted", name);
out:
	free(rs);
	wr_write_end(&m, lock);
	return err;
}

static int cmd_add(int argc, char **argv, void *ctx)
{
	(void)ctx;
	return rule_change(argc, argv, true);
}

static int cmd_del(int argc, char **argv, void *ctx)
{
	(void)ctx;
	return rule_change(argc, argv, false);
}

static int cmd_list(int argc, char **argv, void *ctx)
{
	struct wr_maps m;
	int err;

	(void)argv;
	(void)ctx;
	if (argc > 0) {
		pr_err("rule list takes no arguments");
		return -EINVAL;
	}
	err = wr_maps_open(&m);
	if (err)
		return err;
	err = rule_list(&m);
	wr_maps_close(&m);
	return err;
}

static void usage_ctx(void *ctx)
{
	(void)ctx;
	usage_rule();
}

static const struct wr_cmd rule_cmds[] = {
	{ "add", cmd_add },
	{ "delete", cmd_del },
	{ "list", cmd_list },
	{ "show", cmd_list },
};

int do_rule(int argc, char **argv)
{
	return wr_cmd_select(rule_cmds, ARRAY_SIZE(rule_cmds), "rule", argc, argv, NULL, usage_ctx);
}
