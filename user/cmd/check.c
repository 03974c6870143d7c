// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir check FILE`: a config file validated without applying anything,
 * its errors printed as FILE:LINE:COLUMN: reason (or as JSON), and with -j
 * every key the file says or defaults, from the schema (config/print.c).
 */
#include <errno.h>
#include <string.h>
#include <limits.h>
#include "fleet/fleet.h"
#include "integrations/feedstore.h"
#include "cmd/cmd.h"
#include "config/config_int.h"
#include "weir_limiter.h"

static void usage_check(void)
{
	fprintf(wr_usage_out(),
		"Usage: weir check FILE\n"
		"Validate a config file without applying anything: every error is printed as\n"
		"FILE:LINE:COLUMN: reason, and the exit status is 0 only for a valid file.\n"
		"Interfaces named in the file need not exist here.\n");
}

/*
 * The accuracy of each fleet limit at the configured interval (docs/fleet.md,
 * wr_fleet_bound): once a key is hot, the fleet admits at most burst +
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

/*
 * Rules' `src feed:NAME` sets name a feed of the config's lists: or one the
 * feed store keeps (added with `weir list feed add`), as the daemon's
 * apply will look for it; the first that names neither, in why.
 */
static int check_feed_sets(const struct wr_cfg *cfg, char *why, size_t len)
{
	const struct weir_ruleset *rs = cfg->rules;
	char dir[PATH_MAX];
	__u32 r;
	int f;

	for (r = 0; rs && r < rs->nr_rules && r < WEIR_MAX_RULES; r++) {
		const struct weir_rule *x = &rs->rules[r];
		const char *set = rs->srcsets[x->srcset & WEIR_SRCSET_SLOT], *name;
		struct wr_feed_def d;

		if (!(x->match & WEIR_M_SRCSET))
			continue;
		name = set + (set[0] == '!');
		if (strncmp(name, "feed:", 5))
			continue;
		name += 5;
		for (f = 0; f < cfg->nr_feeds; f++)
			if (!strcmp(cfg->feeds[f].name, name))
				break;
		if (f < cfg->nr_feeds)
			continue;
		if (!wr_feed_dir(dir, sizeof(dir)) && !wr_feed_def_load(dir, name, &d))
			continue;
		snprintf(why, len, "rule %s: src %sfeed:%s: no feed %s in lists: or in the feed "
			 "store (weir list feed add %s ...)", rs->names[r],
			 x->srcset & WEIR_SRCSET_NOT ? "!" : "", name, name, name);
		return -ENOENT;
	}
	return 0;
}

int do_check(int argc, char **argv)
{
	char why[WEIR_NAME_LEN + WEIR_SRCSET_LEN + 160] = "";
	struct wr_cfg cfg;
	struct load ld;
	int ret, i;

	if (argc != 1 || !strcmp(argv[0], "help")) {
		usage_check();
		return argc != 1 ? -EINVAL : 0;
	}
	ret = cfg_load(argv[0], &cfg, &ld);
	if (!ret && check_feed_sets(&cfg, why, sizeof(why))) {
		wr_cfg_free(&cfg);
		ret = 1;
	}
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
	if (why[0] && !opts.json) {
		fprintf(stderr, "%s: %s\n", argv[0], why);
	} else if (why[0]) {
		open_object(NULL);
		print_str("file", NULL, argv[0]);
		print_str("reason", NULL, why);
		close_object();
	}
	close_array();
	if (!ret) {
		if (opts.json)
			cfg_print(&cfg);
		print_text("%s: valid: %u rules, %d interfaces, %d deny, %d allow\n", argv[0],
			   cfg.rules->nr_rules, cfg.nr_ifaces, cfg.nr_deny, cfg.nr_allow);
		print_fleet_bounds(&cfg);
		wr_cfg_free(&cfg);
	}
	out_end();
out:
	cfg_load_done(&ld);
	return ret ? (ret < 0 ? ret : -EINVAL) : 0;
}
