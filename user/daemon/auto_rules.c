// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir auto`'s changes to the live rule set, and a JSON string for its
 * state file: shared by auto.c (its own rules) and auto_fleet.c (the
 * fleet's), below both.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/libweir.h"
#include "auto/engine.h"
#include "daemon/daemon.h"
#include "daemon/daemon_int.h"

/* Words of one rule, its name included. */
#define AUTO_ARGV		64
/* Words into argv (in place): their number, or -E2BIG. */
static int split(char *s, char **argv, int max)
{
	int n = 0;
	char *save, *w;

	for (w = strtok_r(s, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (n >= max)
			return -E2BIG;
		argv[n++] = w;
	}
	return n;
}

/* Rule `name words` into rs: added, or in place of the one of that name. 0 or -errno, why. */
int auto_put_rule(struct weir_ruleset *rs, const char *name, const char *words, char *why,
		  size_t len)
{
	char buf[WR_AUTO_RULE_LEN + WR_AUTO_WORDS_LEN + 2], rname[WEIR_NAME_LEN] = "";
	struct weir_ban bans[WEIR_MAX_LIMITS];
	char *argv[AUTO_ARGV];
	struct wr_perr pe;
	struct weir_rule r;
	int argc, at, err;

	snprintf(buf, sizeof(buf), "%s %s", name, words);
	argc = split(buf, argv, AUTO_ARGV);
	if (argc < 0) {
		snprintf(why, len, "too many words");
		return argc;
	}
	/* No source set: an auto rule matches on what a packet carries. */
	err = wr_rule_parse(argc, argv, &r, bans, NULL, rname, &pe);
	if (err) {
		snprintf(why, len, "%s", pe.msg);
		return err;
	}
	/* Whoever wrote the words (a fleet peer too), verified sources go by. */
	r.flags |= WEIR_RF_SPARE_VERIFIED;
	at = wr_rule_find(rs, name);
	if (at < 0) {
		if (rs->nr_rules >= WEIR_MAX_RULES) {
			snprintf(why, len, "the rule set is full (%u rules)", WEIR_MAX_RULES);
			return -E2BIG;
		}
		at = rs->nr_rules++;
		memset(rs->names[at], 0, WEIR_NAME_LEN);
		snprintf(rs->names[at], WEIR_NAME_LEN, "%s", name);
	}
	rs->rules[at] = r;
	memcpy(rs->bans[at], bans, sizeof(bans));
	return 0;
}

/* Rule name out of rs, if it is there (as `weir rule del`). */
static void drop_rule(struct weir_ruleset *rs, const char *name)
{
	int at = wr_rule_find(rs, name);
	__u32 rest;

	if (at < 0)
		return;
	rest = rs->nr_rules - at - 1;
	memmove(&rs->rules[at], &rs->rules[at + 1], rest * sizeof(rs->rules[0]));
	memmove(rs->names[at], rs->names[at + 1], rest * WEIR_NAME_LEN);
	memmove(rs->bans[at], rs->bans[at + 1], rest * sizeof(rs->bans[0]));
	rs->nr_rules--;
	memset(&rs->rules[rs->nr_rules], 0, sizeof(rs->rules[0]));
	memset(rs->names[rs->nr_rules], 0, WEIR_NAME_LEN);
	memset(rs->bans[rs->nr_rules], 0, sizeof(rs->bans[0]));
}

/*
 * The live set with rule put (words) or deleted (words NULL), committed
 * under the root lock: the daemon's own reloads and `weir rule` take it
 * too, so none of them commits over another's change. 0 or -errno, why.
 */
int auto_change_live(struct daemon *d, const char *rule, const char *words, char *why,
		     size_t len)
{
	struct weir_ruleset *rs;
	int lock, err;

	lock = wr_lock();
	if (lock < 0) {
		snprintf(why, len, "cannot take the root lock: %s", strerror(-lock));
		return lock;
	}
	rs = wr_live_get(&d->maps);
	if (!rs) {
		err = -ENOENT;
		snprintf(why, len, "cannot read the live rule set");
		goto out;
	}
	if (words)
		err = auto_put_rule(rs, rule, words, why, len);
	else
		err = (drop_rule(rs, rule), 0);
	/*
	 * Sources are kept verified only while a rule asks (the first auto
	 * rule may be that rule): the clients connected now are verified
	 * before the rule goes live, however long ago their handshakes were.
	 */
	if (!err && words) {
		int n = wr_verified_seed(&d->maps);

		if (n < 0)
			dlog("auto: cannot read this host's TCP connections (%s): only handshakes "
			     "from now on are verified", strerror(-n));
	}
	if (!err) {
		err = wr_ruleset_commit(&d->maps, rs);
		if (err)
			snprintf(why, len, "cannot commit the rule set: %s", strerror(-err));
	}
	free(rs);
out:
	wr_unlock(lock);
	return err;
}

void auto_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}
