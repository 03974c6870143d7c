// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir shed status|on|off|set`: adaptive shedding from the command line,
 * over lib/shed.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include "config/config.h"
#include "lib/shed.h"
#include "lib/tcpdiag.h"
#include "cmd/cmd.h"

static void usage_shed(void)
{
	fprintf(wr_usage_out(),
		"Usage: weir shed status\n"
		"       weir shed off | on\n"
		"       weir shed set S\n"
		"  status  each signal's value, utilization u, the shedding amount S and\n"
		"          each class's drop probability\n"
		"  off/on  stop shedding at once / let the controller shed again\n"
		"  set S   move S (-1 .. 1) now; the controller goes on from there\n");
}

static int shed_status(const struct wr_maps *m)
{
	struct weir_shed sh;
	__u64 cs[WEIR_MAX_CLASS + 1][6];
	unsigned int c, i;
	int err = wr_shed_read(m->shed, &sh);

	for (c = 0; !err && c <= WEIR_MAX_CLASS; c++)
		err = wr_percpu_sum(m->class_stats, c, cs[c], 6);
	if (err) {
		pr_err("cannot read the shedding state: %s", strerror(-err));
		return err;
	}
	out_begin();
	print_bool("controller", "controller: %s", sh.flags & WEIR_SHED_ACTIVE);
	print_text("%s\n", sh.flags & WEIR_SHED_ACTIVE ? " (weir run with shedding)"
							  : " (none: no shedding configured)");
	print_bool("enabled", "shedding: %s\n", !(sh.flags & WEIR_SHED_OFF));
	open_array("signals");
	for (i = 0; i < sh.nr_signals && i < WEIR_MAX_SIGNALS; i++) {
		open_object(NULL);
		print_str("name", "  signal %-40s", sh.signal_name[i]);
		if (sh.signal_micro[i] < 0)
			print_null("value", " unreadable\n");
		else
			print_double("value", " %.3f\n", sh.signal_micro[i] / 1e6);
		close_object();
	}
	close_array();
	if (sh.u_micro < 0)
		print_null("utilization", "utilization u: no readable signal\n");
	else
		print_double("utilization", "utilization u: %.3f\n", sh.u_micro / 1e6);
	print_double("amount", "shedding amount S: %.3f\n", sh.s_micro / 1e6);
	print_u64("default_class", "default class (no rule matched): %llu\n", sh.default_class);
	open_array("classes");
	print_text("%-6s %12s %14s %14s %14s\n", "class", "drop prob", "packets", "shed",
		   "over capacity");
	for (c = 0; c <= WEIR_MAX_CLASS; c++) {
		open_object(NULL);
		print_u64("class", "%-6llu", c);
		print_double("probability", " %12.3f", sh.threshold[c] / 4294967296.0);
		print_u64("packets", " %14llu", cs[c][0]);
		print_u64("shed_packets", " %14llu", cs[c][2]);
		print_u64("over_capacity_packets", " %14llu\n", cs[c][4]);
		close_object();
	}
	close_array();
	for (c = 0; c < 2; c++) {
		char rate[48];

		if (!sh.cap[c].total.rate)
			continue;
		format_rate(sh.cap[c].total.rate, c, rate, sizeof(rate));
		print_str(c ? "capacity_bytes" : "capacity_packets", "capacity: %s", rate);
		format_rate(sh.cap[c].noncrit.rate, c, rate, sizeof(rate));
		print_str(c ? "noncritical_bytes" : "noncritical_packets",
			  ", classes 1-3 at most %s\n", rate);
	}
	out_end();
	return 0;
}

static int cmd_status(int argc, char **argv, void *ctx)
{
	struct wr_maps m;
	int err;

	(void)argv;
	(void)ctx;
	if (argc != 0) {
		usage_shed();
		return -EINVAL;
	}
	err = wr_maps_open(&m);
	if (err)
		return err;
	err = shed_status(&m);
	wr_maps_close(&m);
	return err;
}

/* on, off, set S: the operator's word on the shedding state. */
static int change(const char *what, int argc, char **argv)
{
	struct weir_shed sh;
	struct wr_maps m;
	int lock, err;

	if (!strcmp(what, "set") ? argc != 1 : argc != 0) {
		usage_shed();
		return -EINVAL;
	}
	lock = wr_write_begin(&m, false);
	if (lock < 0)
		return lock;
	err = wr_shed_read(m.shed, &sh);
	if (err)
		goto out;
	if (!strcmp(what, "set")) {
		char *end;
		double s;

		errno = 0;
		s = strtod(argv[0], &end);
		if (errno || end == argv[0] || *end || !(s >= -1 && s <= 1)) {
			pr_err("invalid S \"%s\" (-1 .. 1)", argv[0]);
			err = -EINVAL;
			goto out;
		}
		sh.s_micro = wr_shed_micro(s);
		/* Without a controller the operator's word holds until changed. */
		if (!(sh.flags & WEIR_SHED_ACTIVE))
			sh.expires_ns = 0;
	} else if (!strcmp(what, "off")) {
		sh.flags |= WEIR_SHED_OFF;
	} else {
		sh.flags &= ~WEIR_SHED_OFF;
	}
	wr_shed_thresholds(&sh, sh.s_micro / 1e6);
	err = wr_shed_write(m.shed, &sh);
	if (err) {
		pr_err("cannot write the shedding state: %s", strerror(-err));
		goto out;
	}
	if (!strcmp(what, "set"))
		print_text("shedding amount S set to %.3f\n", sh.s_micro / 1e6);
	else
		print_text("shedding %s\n", what);
out:
	wr_write_end(&m, lock);
	return err;
}

static int cmd_on(int argc, char **argv, void *ctx)
{
	(void)ctx;
	return change("on", argc, argv);
}

static int cmd_off(int argc, char **argv, void *ctx)
{
	(void)ctx;
	return change("off", argc, argv);
}

static int cmd_set(int argc, char **argv, void *ctx)
{
	(void)ctx;
	return change("set", argc, argv);
}

static void usage_ctx(void *ctx)
{
	(void)ctx;
	usage_shed();
}

static const struct wr_cmd shed_cmds[] = {
	{ "status", cmd_status },
	{ "show", cmd_status },
	{ "on", cmd_on, true },
	{ "off", cmd_off, true },
	{ "set", cmd_set, true },
};

int do_shed(int argc, char **argv)
{
	return wr_cmd_select(shed_cmds, ARRAY_SIZE(shed_cmds), "shed", argc, argv, NULL, usage_ctx);
}
