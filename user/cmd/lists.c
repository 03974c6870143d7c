// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir deny` and `weir allow`: the deny and allow lists from the command line,
 * over lib/lists.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "lib/libweir.h"
#include "cmd/cmd.h"

static void usage_list(const char *what)
{
	bool deny = !strcmp(what, "deny");

	fprintf(wr_usage_out(),
		"Usage: weir %s add CIDR [ttl DURATION]%s\n"
		"       weir %s del CIDR [ttl-only] [missing-ok]\n"
		"       weir %s list\n"
		"%s\n"
		"ttl: the entry expires by itself after DURATION (600, 90s, 10m, 2h, 1d, 1h30m;\n"
		"     1s to 3650d); without it the entry is permanent. Adding again sets a new\n"
		"     ttl; a permanent entry stays permanent. list shows the time left.\n"
		"ttl-only: remove the entry only if it has a ttl (a ban tool's unban: a\n"
		"     permanent entry stays, and so does a prefix the config lists).\n"
		"missing-ok: a CIDR that is not on the list (or has expired) is not an error.\n",
		what, deny ? " [force]" : "", what, what,
		deny ? "Sources in a denied prefix are dropped before any rule. force: a /0\n"
		       "(every source of a family)."
		     : "Sources in an allowed prefix bypass every limit (the deny list still applies).");
}

/* The longest ttl: ten years, far from any overflow of the clock. */
#define WR_TTL_MAX_NS (3650ULL * 86400 * 1000000000ULL)

/*
 * A ttl: a duration (wr_parse_duration_ns) from 1 s to WR_TTL_MAX_NS.
 * 0 or -EINVAL after naming the bad word.
 */
static int parse_ttl(const char *s, __u64 *ns)
{
	uint64_t v;
	int err = wr_parse_duration_ns(s, &v);

	if (err || v < 1000000000ULL || v > WR_TTL_MAX_NS) {
		pr_err("invalid ttl \"%s\": a duration from 1s to 3650d (600, 90s, 10m, 2h, 1d, "
		       "1h30m)", s);
		return -EINVAL;
	}
	*ns = v;
	return 0;
}

struct print_ctx {
	const struct weir_ruleset *rs;	/* the live rules, for a ban's rule name (may be NULL) */
	__u64 now;
	__u64 expired;		/* entries past their expiry, not shown */
	char buf[64];
};

static int print_one(const struct wr_cidr *c, const struct weir_list_val *v, void *ctx)
{
	struct print_ctx *p = ctx;
	char left[32];
	__u64 secs;

	if (wr_list_expired(v, p->now)) {
		p->expired++;
		return 0;
	}
	format_cidr(c->family, c->addr, c->plen, p->buf, sizeof(p->buf));
	open_object(NULL);
	print_str("cidr", "%s", p->buf);
	if (v->expires_ns) {
		/* Rounded up: an entry that still counts never shows 0. */
		secs = (v->expires_ns - p->now + 999999999ULL) / 1000000000ULL;
		wr_format_secs(secs, left, sizeof(left));
		print_text(" ttl %s", left);
		print_u64("ttl", NULL, secs);
	} else {
		print_null("ttl", NULL);
	}
	print_bool("config", NULL, v->flags & WEIR_LV_CONFIG);
	print_bool("ban", NULL, v->flags & WEIR_LV_BAN);
	if (v->flags & WEIR_LV_BAN) {
		const char *rule = wr_rule_name_by_slot(p->rs, v->ban_slot);

		print_text(" (penalty box");
		if (rule)
			print_str("ban_rule", ": rule %s", rule);
		else
			print_null("ban_rule", NULL);
		print_u64("ban_count", ", ban %llu", v->ban_nth);
		print_text(")");
	}
	close_object();
	print_text("\n");
	return 0;
}

static int cmd_list(int argc, char **argv, void *ctx)
{
	const char *what = ctx;
	struct print_ctx pc = { .now = wr_mono_ns() };
	struct wr_maps m;
	int err, fam;

	(void)argv;
	if (argc != 0) {
		usage_list(what);
		return -EINVAL;
	}
	err = wr_maps_open(&m);
	if (err)
		return err;
	pc.rs = wr_live_get(&m);
	out_begin();
	open_array(what);
	for (fam = 4; !err && fam <= 6; fam += 2)
		err = wr_list_walk(&m, !strcmp(what, "deny"), fam, print_one, &pc);
	close_array();
	out_end();
	free((void *)pc.rs);
	wr_maps_close(&m);
	if (err) {
		pr_err("cannot read the %s list: %s", what, strerror(-err));
		return err;
	}
	/* Expired entries seen: whoever runs next removes them, so this does. */
	if (pc.expired) {
		int lock = wr_write_begin(&m, false);

		if (lock >= 0)
			wr_write_end(&m, lock);
	}
	return 0;
}

static int change(const char *what, bool add, int argc, char **argv)
{
	bool deny = !strcmp(what, "deny"), force = false, missing_ok = false, kept = false;
	bool ttl_only = false;
	char left[32];
	struct wr_maps m;
	struct wr_cidr c;
	__u64 ttl = 0;
	int lock, err, i;

	if (argc < 1) {
		usage_list(what);
		return -EINVAL;
	}
	for (i = 1; i < argc; i++) {
		if (add && deny && !strcmp(argv[i], "force") && !force) {
			force = true;
		} else if (add && !strcmp(argv[i], "ttl") && !ttl) {
			if (i + 1 >= argc) {
				pr_err("ttl needs a duration (600, 90s, 10m, 2h, 1d)");
				return -EINVAL;
			}
			if (parse_ttl(argv[++i], &ttl))
				return -EINVAL;
		} else if (!add && !strcmp(argv[i], "missing-ok") && !missing_ok) {
			missing_ok = true;
		} else if (!add && !strcmp(argv[i], "ttl-only") && !ttl_only) {
			ttl_only = true;
		} else {
			pr_err("unexpected \"%s\" after the CIDR", argv[i]);
			usage_list(what);
			return -EINVAL;
		}
	}
	if (parse_cidr(argv[0], &c)) {
		pr_err("invalid CIDR \"%s\"", argv[0]);
		return -EINVAL;
	}
	/* A /0 deny drops every packet of its family: the host's own clients too. */
	if (deny && add && c.plen == 0 && !force) {
		pr_err("deny add %s drops every IPv%d packet, this host's own traffic included; "
		       "say 'deny add %s force' if that is meant", argv[0], c.family, argv[0]);
		return -EINVAL;
	}
	lock = wr_write_begin(&m, add);
	if (lock < 0)
		return lock;
	if (add) {
		err = wr_list_add(&m, deny, &c, ttl, &kept);
	} else if (ttl_only) {
		err = wr_list_unban_entry(&m, deny, &c);
		if (err == -EPERM) {
			kept = true;
			err = 0;
		}
		if (!err)
			err = wr_list_bits(&m);
	} else {
		err = wr_list_del(&m, deny, &c);
	}
	if (err == -ENOENT && missing_ok) {
		print_text("%s is not on the %s list\n", argv[0], what);
		err = 0;
	} else if (err == -EEXIST) {
		pr_err("%s is already on the %s list", argv[0], what);
	} else if (err == -ENOENT) {
		pr_err("%s is not on the %s list", argv[0], what);
	} else if (err == -ENOSPC) {
		pr_err("the %s list is full", what);
	} else if (err) {
		pr_err("cannot update the %s list: %s", what, strerror(-err));
	} else if (kept) {
		print_text("%s is on the %s list permanently; %s\n", argv[0], what,
			   add ? "ttl not applied" : "left in place");
	} else if (add && ttl) {
		wr_format_secs((ttl + 999999999ULL) / 1000000000ULL, left, sizeof(left));
		print_text("added %s to the %s list, ttl %s\n", argv[0], what, left);
	} else {
		print_text("%s %s %s the %s list\n", add ? "added" : "removed", argv[0],
			   add ? "to" : "from", what);
	}
	wr_write_end(&m, lock);
	return err;
}

static int cmd_add(int argc, char **argv, void *ctx)
{
	return change(ctx, true, argc, argv);
}

static int cmd_del(int argc, char **argv, void *ctx)
{
	return change(ctx, false, argc, argv);
}

static void usage_ctx(void *ctx)
{
	usage_list(ctx);
}

static const struct wr_cmd list_cmds[] = {
	{ "add", cmd_add },
	{ "delete", cmd_del },
	{ "list", cmd_list },
	{ "show", cmd_list },
};

int do_deny(int argc, char **argv)
{
	return wr_cmd_select(list_cmds, ARRAY_SIZE(list_cmds), "deny", argc, argv, (void *)"deny",
			     usage_ctx);
}

int do_allow(int argc, char **argv)
{
	return wr_cmd_select(list_cmds, ARRAY_SIZE(list_cmds), "allow", argc, argv, (void *)"allow",
			     usage_ctx);
}
