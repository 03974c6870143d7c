// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir run --config FILE`: the words read, then the daemon (daemon/)
 * runs until it is stopped.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include "daemon/daemon.h"
#include "cmd/cmd.h"

static void usage_run(void)
{
	fprintf(wr_usage_out(),
		"Usage: weir run --config FILE\n"
		"  Apply FILE, then stay in the foreground: reload on SIGHUP and when FILE\n"
		"  changes, log sources as they get limited, serve metrics. SIGTERM/SIGINT\n"
		"  stop the daemon and leave protection in place ('weir detach' removes it).\n");
}

int do_run(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *path = NULL;
	int c;

	optind = 0;	/* argv[0] is the first word after "run" */
	argv--;
	argc++;
	while ((c = getopt_long(argc, argv, "c:h", lo, NULL)) != -1) {
		if (c == 'c') {
			path = optarg;
		} else {
			usage_run();
			return c == 'h' ? 0 : -EINVAL;
		}
	}
	if (opts.help) {
		usage_run();
		return 0;
	}
	if (!path || optind != argc) {
		if (optind < argc)
			pr_err("unexpected argument \"%s\"", argv[optind]);
		usage_run();
		return -EINVAL;
	}
	return wr_daemon_run(path);
}
