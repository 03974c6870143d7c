// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir crowdsec run url URL key-file FILE [interval DURATION] [once]`:
 * the bouncer's options read and checked, then integrations/crowdsec.c
 * follows the decision stream.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "integrations/crowdsec.h"
#include "cmd/cmd.h"

static void usage_crowdsec(void)
{
	fprintf(wr_usage_out(),
		"Usage: weir crowdsec run url URL key-file FILE [interval DURATION] [geo-db DB] "
		"[once]\n"
		"A CrowdSec bouncer: follows the local API's decision stream at URL (e.g.\n"
		"http://127.0.0.1:8080) with the bouncer key in FILE ('cscli bouncers add NAME\n"
		"-o raw'), every DURATION (default 10s, 1s to 1h), and puts each ban decision on\n"
		"an Ip or a Range on the deny list with the decision's duration as its ttl; a\n"
		"deleted decision takes it off. once: one pull of every decision in force, then\n"
		"exit. Runs until SIGINT or SIGTERM; entries expire by themselves.\n"
		"geo-db: a MaxMind DB file; ban decisions on a Country or an AS become\n"
		"feeds of its networks (weir list feed show: crowdsec-country-CC,\n"
		"crowdsec-as-N) that end with the decision. Without it they are skipped.\n");
}

static int read_key(const char *path, char *key, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f) {
		pr_err("cannot read key-file %s: %s", path, strerror(errno));
		return -EINVAL;
	}
	if (!fgets(key, (int)len, f))
		key[0] = '\0';
	fclose(f);
	n = strcspn(key, "\r\n");
	key[n] = '\0';
	if (!n || strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			      "0123456789-_.+/=") != n) {
		pr_err("key-file %s: the first line must be the bouncer's key", path);
		return -EINVAL;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct wr_cs_opts *o)
{
	const char *url = NULL, *keyfile = NULL, *ival = NULL, *geo = NULL;
	int i;

	memset(o, 0, sizeof(*o));
	o->interval_ns = WR_CS_INTERVAL_DEF_NS;
	for (i = 0; i < argc; i++) {
		const char **slot = !strcmp(argv[i], "url") ? &url :
				    !strcmp(argv[i], "key-file") ? &keyfile :
				    !strcmp(argv[i], "interval") ? &ival :
				    !strcmp(argv[i], "geo-db") ? &geo : NULL;

		if (!strcmp(argv[i], "once") && !o->once) {
			o->once = true;
			continue;
		}
		if (!slot || *slot) {
			pr_err(slot ? "\"%s\" given twice" : "unexpected \"%s\"", argv[i]);
			usage_crowdsec();
			return -EINVAL;
		}
		if (i + 1 >= argc) {
			pr_err("%s needs a value", argv[i]);
			return -EINVAL;
		}
		*slot = argv[++i];
	}
	if (!url || !keyfile) {
		pr_err("crowdsec run needs url and key-file");
		usage_crowdsec();
		return -EINVAL;
	}
	if ((strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) ||
	    strlen(url) >= sizeof(o->url) || strpbrk(url, " \t\r\n?#")) {
		pr_err("invalid url \"%s\": http://HOST:PORT or https://HOST:PORT", url);
		return -EINVAL;
	}
	snprintf(o->url, sizeof(o->url), "%s", url);
	/* The stream's path is appended: no trailing slash doubled. */
	while (strlen(o->url) > 8 && o->url[strlen(o->url) - 1] == '/')
		o->url[strlen(o->url) - 1] = '\0';
	if (ival && (wr_parse_duration_ns(ival, &o->interval_ns) ||
		     o->interval_ns < WR_CS_INTERVAL_MIN_NS || o->interval_ns > WR_CS_INTERVAL_MAX_NS)) {
		pr_err("invalid interval \"%s\": a duration from 1s to 1h", ival);
		return -EINVAL;
	}
	if (geo && (geo[0] != '/' || strlen(geo) >= sizeof(o->geo_db))) {
		pr_err("invalid geo-db \"%s\": an absolute path", geo);
		return -EINVAL;
	}
	if (geo)
		snprintf(o->geo_db, sizeof(o->geo_db), "%s", geo);
	return read_key(keyfile, o->key, sizeof(o->key));
}

static int cmd_run(int argc, char **argv, void *ctx)
{
	struct wr_cs_opts o;
	int err;

	(void)ctx;
	err = parse_args(argc, argv, &o);
	return err ? err : wr_crowdsec_run(&o);
}

static void usage_ctx(void *ctx)
{
	(void)ctx;
	usage_crowdsec();
}

static const struct wr_cmd cs_cmds[] = {
	{ "run", cmd_run },
};

int do_crowdsec(int argc, char **argv)
{
	return wr_cmd_select(cs_cmds, ARRAY_SIZE(cs_cmds), "crowdsec", argc, argv, NULL, usage_ctx);
}
