// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * weir: the command line. `weir [OPTIONS] OBJECT COMMAND ...`, objects
 * matched by unique prefix as in ip(8) and bpftool(8).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "cmd/cmd.h"

struct wr_opts opts = { .root = WEIR_DEFAULT_ROOT };

static int do_help(int argc, char **argv);
static int do_version(int argc, char **argv);

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} cmds[] = {
	{ "attach", do_attach, "attach DEV [mode native|generic|tc]   start protecting DEV" },
	{ "detach", do_detach, "detach DEV|all                        stop (all: remove everything)" },
	{ "status", do_status, "status                                what is loaded and where" },
	{ "rule", do_rule, "rule add|del|list ...                 rate-limit rules" },
	{ "deny", do_deny, "deny add|del|list CIDR [ttl DUR]      sources always dropped" },
	{ "allow", do_allow, "allow add|del|list CIDR [ttl DUR]     sources never limited" },
	{ "list", do_list, "list feed add|del|show|refresh|test ... blocklist feeds (HTTP(S), files)" },
	{ "stats", do_stats, "stats                                 global and per-rule counters" },
	{ "top", do_top, "top [N] [rule NAME]                   sources being limited now" },
	{ "disable", do_disable, "disable                               kill switch: pass everything" },
	{ "enable", do_enable, "enable                                undo disable" },
	{ "shed", do_shed, "shed status|on|off|set S                adaptive load shedding" },
	{ "auto", do_auto, "auto status                           attacks detected, fingerprinted, dropped" },
	{ "fleet", do_fleet, "fleet status                          fleet-wide limits' sync with Redis" },
	{ "set", do_set, "set fail open|closed | malformed drop|pass" },
	{ "check", do_check, "check FILE                            validate a config file" },
	{ "capture", do_capture, "capture [rule NAME] [-w FILE] ...     samples of judged packets (pcap)" },
	{ "run", do_run, "run --config FILE                     the daemon: apply, reload, log, metrics" },
	{ "crowdsec", do_crowdsec, "crowdsec run url URL key-file FILE    CrowdSec bans as expiring deny entries" },
	{ "geo", do_geo, "geo DB country CC,.. [asn N,..]       a country or ASN set's prefixes in an MMDB" },
	{ "version", do_version, "version" },
	{ "help", do_help, "help" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"Usage: weir [OPTIONS] OBJECT COMMAND [ARGS]\n"
		"Packet-level rate limiter and DoS front line (XDP/TC).\n\n"
		"Objects:\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(f, "  %s\n", cmds[i].summary);
	fprintf(f,
		"\nOptions:\n"
		"  -j, --json         JSON output (errors as {\"error\": ...})\n"
		"  -p, --pretty       indented JSON (implies -j)\n"
		"  -d, --debug        debug output, libbpf's included\n"
		"      --bpffs DIR    where weir pins its state (default %s)\n"
		"  -V, --version      print the version\n"
		"  -h, --help         this text\n"
		"\n'weir OBJECT help' describes each object.\n",
		WEIR_DEFAULT_ROOT);
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

static int do_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	out_begin();
	print_str("version", "weir %s", WEIR_VERSION);
	print_text(" (libbpf %d.%d)\n", libbpf_major_version(), libbpf_minor_version());
	out_end();
	return 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !opts.debug)
		return 0;
	if (level == LIBBPF_INFO && !opts.debug)
		return 0;
	fputs("libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "debug", no_argument, NULL, 'd' },
		{ "bpffs", required_argument, NULL, 'b' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const struct cmd *match = NULL;
	size_t i;
	int c, err;

	/* Stop at the first non-option: the object's words are its own. */
	while ((c = getopt_long(argc, argv, "+jpdVh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opts.json = true;
			break;
		case 'p':
			opts.json = true;
			opts.pretty = true;
			break;
		case 'd':
			opts.debug = true;
			break;
		case 'b':
			if (!optarg[0] || optarg[0] != '/') {
				pr_err("invalid --bpffs \"%s\" (an absolute path)", optarg);
				return 1;
			}
			opts.root = optarg;
			break;
		case 'V':
			return do_version(0, NULL);
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	libbpf_set_print(libbpf_print);
	if (optind >= argc) {
		usage(stderr);
		return 1;
	}
	/* As in ip(8) and bpftool: the first object in table order that the word starts. */
	for (i = 0; i < ARRAY_SIZE(cmds) && !match; i++)
		if (is_prefix(argv[optind], cmds[i].name))
			match = &cmds[i];
	if (!match) {
		pr_err("unknown object \"%s\" (try 'weir help')", argv[optind]);
		return 1;
	}
	/* `weir OBJECT help` (or -h, --help): its usage is the answer, on stdout. */
	opts.help = optind + 1 < argc && (!strcmp(argv[optind + 1], "help") ||
					  !strcmp(argv[optind + 1], "-h") ||
					  !strcmp(argv[optind + 1], "--help"));
	err = match->fn(argc - optind - 1, argv + optind + 1);
	return err ? 1 : 0;
}
