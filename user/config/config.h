/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The declarative config file (YAML, parsed with libyaml). Its words are the
 * CLI's: a rule's keys become the words of `weir rule add`, parsed by the
 * same wr_rule_parse(), so anything the CLI can say, the file can say.
 */
#ifndef WEIR_CONFIG_H
#define WEIR_CONFIG_H

#include <net/if.h>
#include "lib/libweir.h"
#include "weir_shed.h"
#include "lib/shed.h"

struct wr_cfg_iface {
	char name[IF_NAMESIZE];
	struct wr_attach_opts attach;	/* mode, tc-hook, dispatcher, priority: as `weir attach` */
};

/* fleet: limits with scope fleet kept in step across hosts through Redis. */
enum wr_fleet_mode { WR_FLEET_SINGLE, WR_FLEET_SHARDED, WR_FLEET_CLUSTER };
enum wr_fleet_fallback { WR_FLEET_SAFE, WR_FLEET_LOCAL, WR_FLEET_HOLD };
struct wr_cfg_fleet {
	bool on;			/* the file has a fleet: section */
	char name[32];			/* the fleet's name, its keys' prefix in Redis */
	char host[64];			/* this host's name in the fleet; default the hostname */
	char nodes[WEIR_FLEET_NODES][64];	/* Redis servers, host:port (cluster: any of its nodes) */
	int nr_nodes;
	int mode;			/* enum wr_fleet_mode */
	__u32 interval_ms;		/* sync period, default 250 ms */
	__u32 stale_ms;			/* after this without Redis, the fallback; default 2 s */
	int fallback;			/* enum wr_fleet_fallback */
	char auth_file[256];		/* "[USER] PASSWORD", root-only; "" for none */
};

/* lists: a blocklist feed (integrations/feedstore.h): a URL or a file, deny, allow or a class. */
#define WR_CFG_FEEDS_MAX	64
struct wr_cfg_feed {
	char name[32];			/* A-Z a-z 0-9 _ - . */
	char url[1024];			/* http:// or https://, or empty */
	char file[1024];		/* an absolute path (relative ones resolved), or empty */
	char geo[1024];			/* a MaxMind DB, as file, or empty */
	char country[512];		/* geo: "DE,NL" */
	char asn[512];			/* geo: "64496,AS64497" */
	int action;			/* WEIR_FA_DENY, WEIR_FA_ALLOW, WEIR_FA_CLASS_OF(N) or WEIR_FA_MATCH */
	__u32 refresh_s;
};

struct wr_cfg {
	char *path;
	struct wr_cfg_iface *ifaces;
	int nr_ifaces;
	/* Names and rules as wr_rule_parse() left them; commit assigns identities. */
	struct weir_ruleset *rules;
	struct wr_cidr *deny;		/* from `deny:` and every file of `deny-files:` */
	int nr_deny;
	struct wr_cidr *allow;
	int nr_allow;
	/* As opened (relative paths start at the config's directory), so a reload can watch them. */
	char **deny_files;
	int nr_deny_files;
	__u64 keys;			/* tables.keys; 0 when not given */
	int fail_closed;		/* fail: open (0) | closed (1) */
	int malformed_pass;		/* malformed: drop (0) | pass (1) */
	int first_stage_off;		/* first-stage: on (0) | off (1) */
	bool metrics;			/* metrics: present (default on) */
	char metrics_listen[64];	/* "127.0.0.1:9464" unless given */
	__u32 event_interval_s;		/* events: { interval: 10s } */
	__u32 event_lines;		/* events: { lines: 20 } per interval */
	struct wr_cfg_shed shed;
	struct wr_cfg_capacity capacity;
	struct wr_cfg_fleet fleet;
	struct wr_cfg_feed *feeds;	/* lists: */
	int nr_feeds;
	/* geo-db: the MaxMind DB of rules' `src country:..` and `src asn:..`; "" for none */
	char geo_db[1024];
	/*
	 * tcp-state: { on: 1000, off: 100, hold: 30s }: `tcp-state auto` rules
	 * check segments from a second in which the out-of-state rate (RSTs
	 * the kernel sent plus segments tcp-state dropped) reached on, until
	 * it stayed under off for hold (user/daemon/tcpstate.c).
	 */
	struct {
		__u32 on_pps;
		__u32 off_pps;
		__u32 hold_s;
	} tcp_state;
	/*
	 * auto: { mode: off|advise|on, ... }: `weir auto` (user/daemon/auto.c,
	 * docs/auto.md): the detector's thresholds, the fingerprint's targets,
	 * the rules it may install and how long they stay.
	 */
	struct wr_cfg_auto {
		int mode;		/* off (0), advise (1), on (2): as enum wr_auto_mode */
		__u32 max_rules;	/* auto rules installed at once */
		__u32 linger_s;		/* a rule stays this long after its attack ends */
		__u32 budget;		/* samples a second the capture copies at most */
		__u32 warmup_s;		/* learning without alarm after the start */
		double factor;		/* onset at factor x what normal traffic reaches */
		__u32 floor_pps;	/* an onset needs at least this many packets/s */
		__u64 floor_bps;	/* or this many bytes/s */
		__u32 hold_ms;		/* an attack ends after this long quiet */
		double cover;		/* share of the attack a fingerprint must match */
		double false_max;	/* share of the traffic before it may match */
	} au;
};

/*
 * Whether an auth file is fit to hold a password: a regular file owned by
 * root that nobody else may read or write. 0, or -errno with why in buf.
 */
int wr_fleet_auth_check(const char *path, char *why, size_t len);

/*
 * Load and validate path into cfg. Every problem is written to errs as
 * "FILE:LINE:COLUMN: reason\n" (errs may be NULL). Returns 0 if valid, the
 * number of errors (> 0) if not, or -errno if the file cannot be read. On
 * any non-zero return cfg holds nothing (it is freed).
 */
int wr_cfg_load(const char *path, struct wr_cfg *cfg, FILE *errs);
void wr_cfg_free(struct wr_cfg *cfg);


#endif /* WEIR_CONFIG_H */
