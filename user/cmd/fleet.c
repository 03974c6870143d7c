// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `weir fleet status`: the fleet sync as the daemon reported it.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <hiredis/hiredis.h>
#include "fleet/fleet.h"
#include "weir_limiter.h"
#include "weir_state.h"
#include "cmd/cmd.h"

static void usage_fleet(void)
{
	fprintf(wr_usage_out(),
		"Usage: weir fleet status\n"
		"  The daemon's sync of fleet-wide limits (scope fleet) with Redis: its\n"
		"  nodes and their health, the last sync, hot keys, the fallback, and this\n"
		"  host's share of each fleet limit. Needs `weir run` with a fleet: section.\n");
}

static int cmd_status(int argc, char **argv, void *ctx)
{
	static const char *const modes[] = { "single", "sharded", "cluster" };
	static const char *const fallbacks[] = { "safe", "local", "hold" };
	struct weir_fleet_status st;
	struct weir_config sc;
	struct weir_ruleset *rs = NULL;
	struct wr_maps m;
	__u32 zero = 0, i, j;
	__u64 now = wr_mono_ns();
	bool running;
	int err;

	(void)argv;
	(void)ctx;
	if (argc) {
		usage_fleet();
		return -EINVAL;
	}
	err = wr_maps_open(&m);
	if (err)
		return err;
	rs = calloc(1, sizeof(*rs));
	if (!rs) {
		err = -ENOMEM;
		goto out;
	}
	if (bpf_map_lookup_elem(m.fleet_status, &zero, &st) || wr_read_live(&m, rs) ||
	    wr_config_read(&m, &sc)) {
		err = -errno;
		pr_err("cannot read the fleet's state: %s", strerror(-err));
		goto out;
	}
	running = st.pid && !kill(st.pid, 0);
	out_begin();
	print_bool("running", running ? NULL : "no fleet sync is running (weir run with a "
		   "fleet: section starts one)\n", running);
	if (running) {
		print_str("name", "fleet %s", st.name);
		print_str("host", " host %s", st.host);
		print_str("mode", " mode %s", modes[st.mode % 3]);
		print_u64("interval_ms", " interval %llums", st.interval_ms);
		print_u64("stale_after_ms", " stale-after %llums\n", st.stale_ms);
		print_u64("pid", NULL, st.pid);
		print_u64("hosts", "  live hosts %llu", st.hosts);
		print_str("fallback", ", fallback %s", fallbacks[st.fallback % 3]);
		print_bool("fallback_active", st.fallback_active ? " (IN FORCE)\n" : " (idle)\n",
			   st.fallback_active);
		print_u64("last_sync_ms_ago", "  last sync %llu ms ago",
			  st.last_sync_ns ? (now - st.last_sync_ns) / 1000000 : 0);
		print_u64("sync_us", ", took %llu us", st.sync_us);
		print_u64("syncs", ", %llu syncs", st.syncs);
		print_u64("hot_keys", "; hot keys %llu", st.hot_keys);
		print_u64("over_keys", ", over their limit %llu", st.over_keys);
		print_u64("keys_synced", ", charges sent %llu", st.keys_synced);
		print_u64("floors", ", buckets moved by the fleet %llu\n", st.floors);
		/*
		 * The fleet windows' clock: Redis's TIME less this host's
		 * CLOCK_MONOTONIC (0 until measured); the same on every host
		 * whose monotonic clocks agree, within the measurement.
		 */
		print_bool("window_clock", sc.fleet_win_off ? "  fleet window clock: Redis's" :
			   "  fleet window clock: not measured yet (fleet windows are not "
			   "sent until it is)\n", sc.fleet_win_off != 0);
		if (sc.fleet_win_off)
			print_u64("window_offset_ns", ", this host's monotonic clock + %llu ns\n",
				  sc.fleet_win_off);
		open_array("nodes");
		for (i = 0; i < st.nr_nodes && i < WEIR_FLEET_NODES; i++) {
			const struct weir_fleet_node *n = &st.node[i];

			open_object(NULL);
			print_str("addr", "  redis %s", n->addr);
			print_bool("up", n->up ? " up" : " DOWN", n->up);
			print_u64("rtt_us", ", rtt %llu us", n->rtt_us);
			print_u64("last_ok_ms_ago", ", last good %llu ms ago",
				  n->last_ok_ns ? (now - n->last_ok_ns) / 1000000 : 0);
			print_u64("keys", ", keys %llu", n->keys);
			print_u64("errors_connect", ", errors: connect %llu",
				  n->errors[WEIR_FE_CONNECT]);
			print_u64("errors_timeout", " timeout %llu", n->errors[WEIR_FE_TIMEOUT]);
			print_u64("errors_reply", " reply %llu\n", n->errors[WEIR_FE_REPLY]);
			close_object();
		}
		close_array();
	}
	open_array("limits");
	for (i = 0; i < rs->nr_rules && i < WEIR_MAX_RULES; i++)
		for (j = 0; j < rs->rules[i].nr_limits && j < WEIR_MAX_LIMITS; j++) {
			const struct weir_limit *l = &rs->rules[i].limits[j];

			if (!l->fleet)
				continue;
			open_object(NULL);
			print_str("rule", "  rule %s", rs->names[i]);
			print_u64("limit", " limit %llu", j);
			print_u64("multiplier", ": each packet counts %llux", l->fleet);
			print_double("share", ", this host's share %.3f of the fleet rate\n",
				     1.0 / l->fleet);
			close_object();
		}
	close_array();
	out_end();
out:
	free(rs);
	wr_maps_close(&m);
	return err;
}

static void usage_ctx(void *ctx)
{
	(void)ctx;
	usage_fleet();
}

static const struct wr_cmd fleet_cmds[] = {
	{ "status", cmd_status },
	{ "show", cmd_status },
};

int do_fleet(int argc, char **argv)
{
	return wr_cmd_select(fleet_cmds, ARRAY_SIZE(fleet_cmds), "fleet", argc, argv, NULL,
			     usage_ctx);
}
