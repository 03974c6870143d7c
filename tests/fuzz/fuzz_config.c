// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the YAML config loader, wr_cfg_load(), as `weir
 * check` and `weir run` call it. Each input is written to weir.yaml in
 * a private directory beside a small deny.txt (so relative deny-files
 * resolve) and loaded. A valid config must hold only rules the data path
 * can run; an invalid one must come back empty with every error counted;
 * nothing may leak (LeakSanitizer) on either path.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "weir_limiter.h"

struct wr_opts opts = { .root = "/nonexistent" };

#define FAIL(...)                                               \
	do {                                                    \
		fprintf(stderr, "fuzz_config: " __VA_ARGS__);   \
		fputc('\n', stderr);                            \
		abort();                                        \
	} while (0)

static char dir[] = "/tmp/weir-fuzz-config.XXXXXX";
static char path[sizeof(dir) + 16];
static FILE *devnull;

static void write_file(const char *p, const void *data, size_t n)
{
	FILE *f = fopen(p, "we");

	if (!f || fwrite(data, 1, n, f) != n || fclose(f))
		FAIL("cannot write %s", p);
}

static void cleanup(void)
{
	char p[sizeof(dir) + 16];

	snprintf(p, sizeof(p), "%s/deny.txt", dir);
	unlink(p);
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char deny[] = "# two prefixes\n192.0.2.0/24\n2001:db8:bad::/48\n";
	char p[sizeof(dir) + 16];

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		FAIL("mkdtemp: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/weir.yaml", dir);
	snprintf(p, sizeof(p), "%s/deny.txt", dir);
	write_file(p, deny, sizeof(deny) - 1);
	devnull = fopen("/dev/null", "we");
	atexit(cleanup);
	return 0;
}

static void check_cfg(const struct wr_cfg *c)
{
	__u32 i, li;
	int j;

	if (!c->rules || c->rules->nr_rules > WEIR_MAX_RULES)
		FAIL("valid config with %u rules", c->rules ? c->rules->nr_rules : 0);
	for (i = 0; i < c->rules->nr_rules; i++) {
		const struct weir_rule *r = &c->rules->rules[i];

		if (!c->rules->names[i][0] || r->nr_limits < 1 || r->nr_limits > WEIR_MAX_LIMITS)
			FAIL("rule %u: name \"%.32s\", %u limits", i, c->rules->names[i],
			     r->nr_limits);
		for (li = 0; li < r->nr_limits; li++)
			if (!r->limits[li].interval_fp || !r->limits[li].tolerance)
				FAIL("rule %u limit %u cannot run", i, li);
	}
	for (j = 0; j < c->nr_ifaces; j++)
		if (!c->ifaces[j].name[0] || c->ifaces[j].attach.mode < 0 ||
		    c->ifaces[j].attach.mode > 2 || c->ifaces[j].attach.tc_hook < 0 ||
		    c->ifaces[j].attach.tc_hook > 2)
			FAIL("interface %d", j);
	for (j = 0; j < c->nr_deny; j++)
		if (c->deny[j].plen > (c->deny[j].family == 4 ? 32u : 128u))
			FAIL("deny %d: /%u", j, c->deny[j].plen);
	if (c->event_lines > 10000 || c->shed.nr_signals > WEIR_MAX_SIGNALS ||
	    c->shed.default_class > WEIR_MAX_CLASS || !(c->capacity.reserve < 1))
		FAIL("events %u signals %d default class %d reserve %g", c->event_lines,
		     c->shed.nr_signals, c->shed.default_class, c->capacity.reserve);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct wr_cfg cfg;
	int ret;

	if (n > 65536)
		return 0;
	write_file(path, data, n);
	memset(&cfg, 0x5a, sizeof(cfg));
	ret = wr_cfg_load(path, &cfg, devnull);
	if (ret < 0)
		FAIL("wr_cfg_load: %s", strerror(-ret));
	if (ret > 0) {
		if (cfg.rules || cfg.ifaces || cfg.deny || cfg.path)
			FAIL("an invalid config (%d errors) left something behind", ret);
		return 0;
	}
	check_cfg(&cfg);
	wr_cfg_free(&cfg);
	return 0;
}
