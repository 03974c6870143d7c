// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The switches in wr_config: `disable` / `enable` (the kill switch) and
 * `set fail|malformed|first-stage`, each a read-modify-write of the config
 * under the root lock.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "lib/libweir.h"
#include "cmd/cmd.h"

static int config_change(int (*apply)(const struct wr_maps *, struct weir_config *, void *),
			 void *arg)
{
	struct weir_config cfg;
	struct wr_maps m;
	int lock, err;

	lock = wr_write_begin(&m, false);
	if (lock < 0)
		return lock;
	err = wr_config_read(&m, &cfg);
	if (!err)
		err = apply(&m, &cfg, arg);
	if (!err)
		err = wr_config_write(&m, &cfg);
	if (err && err != -EINVAL)
		pr_err("cannot update the config: %s", strerror(-err));
	wr_write_end(&m, lock);
	return err;
}

static int set_disabled(const struct wr_maps *m, struct weir_config *cfg, void *arg)
{
	(void)m;
	cfg->disabled = *(__u32 *)arg;
	return 0;
}

int do_disable(int argc, char **argv)
{
	__u32 one = 1;
	int err;

	(void)argv;
	if (argc) {
		fprintf(wr_usage_out(), "Usage: weir disable\n"
				"  kill switch: pass everything, still count what would be dropped\n");
		return opts.help && argc == 1 ? 0 : -EINVAL;
	}
	err = config_change(set_disabled, &one);
	if (!err)
		print_text("weir disabled: everything passes; would-drops are counted\n");
	return err;
}

int do_enable(int argc, char **argv)
{
	__u32 zero = 0;
	int err;

	(void)argv;
	if (argc) {
		fprintf(wr_usage_out(), "Usage: weir enable\n  undo disable\n");
		return opts.help && argc == 1 ? 0 : -EINVAL;
	}
	err = config_change(set_disabled, &zero);
	if (!err)
		print_text("weir enabled\n");
	return err;
}

struct set_arg {
	const char *what, *val;
};

static int apply_set(const struct wr_maps *m, struct weir_config *cfg, void *arg)
{
	struct set_arg *s = arg;

	if (!strcmp(s->what, "first-stage")) {
		if (strcmp(s->val, "on") && strcmp(s->val, "off"))
			goto bad;
		return wr_first_stage_set(m, cfg, !strcmp(s->val, "off"));
	}
	if (!strcmp(s->what, "fail")) {
		if (!strcmp(s->val, "open"))
			cfg->fail_closed = 0;
		else if (!strcmp(s->val, "closed"))
			cfg->fail_closed = 1;
		else
			goto bad;
	} else {
		if (!strcmp(s->val, "drop"))
			cfg->malformed_pass = 0;
		else if (!strcmp(s->val, "pass"))
			cfg->malformed_pass = 1;
		else
			goto bad;
	}
	return 0;
bad:
	pr_err("invalid %s policy \"%s\"", s->what, s->val);
	return -EINVAL;
}

int do_set(int argc, char **argv)
{
	struct set_arg s;
	int err;

	bool known = argc >= 1 && (!strcmp(argv[0], "fail") || !strcmp(argv[0], "malformed") ||
				   !strcmp(argv[0], "first-stage"));

	if (argc != 2 || !known) {
		if (argc >= 1 && strcmp(argv[0], "help") && !known)
			pr_err("unknown setting \"%s\"", argv[0]);
		fprintf(wr_usage_out(), "Usage: weir set fail open|closed\n"
				"       weir set malformed drop|pass\n"
				"       weir set first-stage on|off\n"
				"  fail         what an internal fault (e.g. a full table) does to the "
				"packet\n"
				"  malformed    what happens to truncated or invalid IP packets\n"
				"  first-stage  drop a source a limit refused, until its bucket admits "
				"again,\n"
				"               for one lookup instead of the rule walk (default on)\n");
		return argc == 1 && !strcmp(argv[0], "help") ? 0 : -EINVAL;
	}
	s.what = argv[0];
	s.val = argv[1];
	err = config_change(apply_set, &s);
	if (!err)
		print_text("%s: %s\n", s.what, s.val);
	return err;
}
