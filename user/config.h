/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The declarative config file (YAML, parsed with libyaml). Its words are the
 * CLI's: a rule's keys become the words of `sluice rule add`, parsed by the
 * same sl_rule_parse(), so anything the CLI can say, the file can say.
 */
#ifndef SLUICE_CONFIG_H
#define SLUICE_CONFIG_H

#include <net/if.h>
#include "sluice_user.h"

struct sl_cfg_iface {
	char name[IF_NAMESIZE];
	int mode;			/* enum sl_attach_mode */
};

struct sl_cfg {
	char *path;
	struct sl_cfg_iface *ifaces;
	int nr_ifaces;
	/* Names and rules as sl_rule_parse() left them; commit assigns identities. */
	struct sluice_ruleset *rules;
	struct sl_cidr *deny;		/* from `deny:` and every file of `deny-files:` */
	int nr_deny;
	struct sl_cidr *allow;
	int nr_allow;
	/* As opened (relative paths start at the config's directory), so a reload can watch them. */
	char **deny_files;
	int nr_deny_files;
	__u64 keys;			/* tables.keys; 0 when not given */
	int fail_closed;		/* fail: open (0) | closed (1) */
	int malformed_pass;		/* malformed: drop (0) | pass (1) */
	bool metrics;			/* metrics: present (default on) */
	char metrics_listen[64];	/* "127.0.0.1:9464" unless given */
	__u32 event_interval_s;		/* events: { interval: 10s } */
	__u32 event_lines;		/* events: { lines: 20 } per interval */
};

/*
 * Load and validate path into cfg. Every problem is written to errs as
 * "FILE:LINE:COLUMN: reason\n" (errs may be NULL). Returns 0 if valid, the
 * number of errors (> 0) if not, or -errno if the file cannot be read. On
 * any non-zero return cfg holds nothing (it is freed).
 */
int sl_cfg_load(const char *path, struct sl_cfg *cfg, FILE *errs);
void sl_cfg_free(struct sl_cfg *cfg);

/* `sluice check FILE` */
int do_check(int argc, char **argv);
/* `sluice run --config FILE` */
int do_run(int argc, char **argv);

#endif /* SLUICE_CONFIG_H */
