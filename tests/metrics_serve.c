// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test driver of the metrics endpoint: opens the maps pinned under --bpffs
 * and serves them with wr_metrics_start() until SIGTERM or SIGINT, the way
 * the daemon does. The extra callback appends a counter of its own
 * (weir_test_scrapes_total) so tests can see where extra metrics land.
 *
 *   metrics_serve --bpffs DIR [--listen ADDR] [--ready FILE]
 *   metrics_serve --bpffs DIR --render     print one rendering and exit
 *   metrics_serve --counters               every global counter (enum
 *                                          weir_global): NAME FAMILY and
 *                                          "result" if labelled, "-" if not
 *
 * Exit status: 0 after a clean stop, 1 if the server could not start.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"
#include "daemon/metrics.h"
#include "lib/snapshot.h"

struct wr_opts opts = { .root = WEIR_DEFAULT_ROOT };

static atomic_ullong scrapes;

static void extra(FILE *out, void *arg)
{
	(void)arg;
	fputs("# HELP weir_test_scrapes_total Scrapes served by this test server.\n"
	      "# TYPE weir_test_scrapes_total counter\n", out);
	fprintf(out, "weir_test_scrapes_total %llu\n", atomic_fetch_add(&scrapes, 1) + 1);
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void usage(void)
{
	fprintf(stderr, "Usage: metrics_serve --bpffs DIR [--listen ADDR] [--ready FILE]\n"
			"       metrics_serve --bpffs DIR --render\n"
			"       metrics_serve --counters\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "bpffs", required_argument, NULL, 'b' },
		{ "listen", required_argument, NULL, 'l' },
		{ "ready", required_argument, NULL, 'r' },
		{ "render", no_argument, NULL, 'R' },
		{ "counters", no_argument, NULL, 'C' },
		{}
	};
	const char *listen = WR_METRICS_DEFAULT_LISTEN, *ready = NULL;
	struct wr_metrics *srv;
	struct wr_maps m;
	bool once = false;
	sigset_t set;
	int c, sig, err;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			opts.root = optarg;
			break;
		case 'l':
			listen = optarg;
			break;
		case 'r':
			ready = optarg;
			break;
		case 'R':
			once = true;
			break;
		case 'C':
			for (c = 0; c < WEIR_G_MAX; c++)
				printf("%s %s %s\n", wr_global_names[c] ? wr_global_names[c] : "(none)",
				       wr_global_metrics[c].family ? wr_global_metrics[c].family : "(none)",
				       wr_global_metrics[c].result ? "result" : "-");
			return 0;
		default:
			usage();
			return 2;
		}
	}
	if (optind != argc) {
		usage();
		return 2;
	}
	libbpf_set_print(libbpf_quiet);
	if (wr_maps_open(&m))
		return 1;
	if (once) {
		char *buf;
		size_t len;

		err = wr_metrics_render(&m, &buf, &len);
		if (!err) {
			fwrite(buf, 1, len, stdout);
			free(buf);
		} else {
			pr_err("cannot render: %s", strerror(-err));
		}
		wr_maps_close(&m);
		return err ? 1 : 0;
	}
	/* Block the stop signals first: the server's thread inherits the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	srv = wr_metrics_start(listen, &m, extra, NULL);
	/* The server holds its own fds: closing ours now is what the daemon may do too. */
	wr_maps_close(&m);
	if (!srv)
		return 1;
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (f)
			fclose(f);
	}
	sigwait(&set, &sig);
	wr_metrics_stop(srv);
	return 0;
}
