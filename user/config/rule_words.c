// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rules of the config file. A rule's and a limit's keys are the
 * keywords of `weir rule add` (wr_rule_kws[], lib/rules.c): their values are
 * turned into its words, each key judged on its own and then the rule whole
 * by the CLI's own parser; each word remembers the node it came from, so
 * the word the parser names is placed back in the file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "config/config_int.h"
#include "weir_limiter.h"

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

	if (!cfg_grow(ld, (void **)&w->w, w->n, &w->cap_w, sizeof(*w->w)) ||
	    !cfg_grow(ld, (void **)&w->m, w->n, &w->cap_m, sizeof(*w->m)))
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
		cfg_list(ld, n, kw->key, &it, &end);
		snprintf(what, sizeof(what), "a %s key", kw->key);
		for (; it < end; it++) {
			yaml_node_t *v = cfg_node(ld, *it);
			const char *s = v ? cfg_scalar(ld, v, what) : NULL;

			if (!s || !item_word(ld, w, kw, s, strlen(s), v->start_mark))
				ok = false;
		}
	} else {
		const char *s = cfg_scalar(ld, n, kw->key), *p;
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
	} else if ((s = cfg_scalar(ld, v, kw->key))) {
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
	if (!cfg_mapping(ld, n, "a limit", names, nr, keys, vals))
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
	struct weir_ban bans[WEIR_MAX_LIMITS];
	struct wr_perr pe;
	char name[WEIR_NAME_LEN], srcset[WEIR_SRCSET_LEN];
	const char *s;
	bool ok = true;
	int i, nr, start;

	/* name, the rule's keywords, limits */
	names[0] = rule_own_keys[0];
	nr = 1 + kw_keys(false, names + 1, kws + 1);
	names[nr++] = rule_own_keys[1];
	seen[idx].name = NULL;
	if (n->type != YAML_MAPPING_NODE) {
		err_at(ld, n->start_mark, "a rule must be a mapping, not %s", node_kind(n));
		return;
	}
	if (!cfg_mapping(ld, n, "a rule", names, nr, keys, vals))
		return;
	if (!vals[0]) {
		err_at(ld, n->start_mark, "a rule needs a name");
		ok = false;
	} else if ((s = cfg_scalar(ld, vals[0], "name"))) {
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
		} else if (wr_rule_name_auto(s)) {
			err_at(ld, vals[0]->start_mark, "rule name \"%s\": auto-N names are weir "
			       "auto's, and auto-fN (docs/auto.md)", s);
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
		if (!cfg_list(ld, vals[nr - 1], "limits", &it, &end)) {
			ok = false;
		} else if (it == end) {
			err_at(ld, vals[nr - 1]->start_mark, "a rule needs at least one limit");
			ok = false;
		}
		for (; it < end; it++) {
			yaml_node_t *l = cfg_node(ld, *it);

			if (!l || !limit_words(ld, &w, l))
				ok = false;
		}
	}
	/* The whole rule only when every piece is good: otherwise it is noise. */
	if (ok && !ld->oom) {
		if (wr_rule_parse(w.n, w.w, &r, bans, srcset, name, &pe)) {
			err_at(ld, pe.word >= 0 && pe.word < w.n ? w.m[pe.word] : n->start_mark,
			       "%s", pe.msg);
		} else if (idx < WEIR_MAX_RULES) {
			struct weir_ruleset *rs = ld->cfg->rules;
			char why[160];

			rs->rules[idx] = r;
			memcpy(rs->bans[idx], bans, sizeof(bans));
			snprintf(rs->names[idx], WEIR_NAME_LEN, "%s", name);
			rs->nr_rules = idx + 1;
			/* Its source set in the file's set, as `rule add` puts it in the live one. */
			if (srcset[0] && wr_srcset_put(rs, idx, srcset, why, sizeof(why)))
				err_at(ld, n->start_mark, "rule %s: %s", name, why);
		}
	}
	words_free(&w);
}

void load_rules(struct load *ld, const yaml_node_t *n)
{
	struct seen_name *seen;
	yaml_node_item_t *it, *end;
	int idx;

	if (!cfg_list(ld, n, "rules", &it, &end))
		return;
	seen = calloc(end - it + 1, sizeof(*seen));
	if (!seen) {
		ld->oom = true;
		return;
	}
	for (idx = 0; it < end; it++, idx++) {
		yaml_node_t *r = cfg_node(ld, *it);

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
