// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `weir attach`, `weir detach` and `weir status`. */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"
#include "cmd/cmd.h"
#include "integrations/feedstore.h"

static void usage_attach(FILE *f)
{
	fprintf(f,
		"Usage: weir attach DEV [mode native|generic|tc] [tc-hook auto|tcx|clsact]\n"
		"                         [dispatcher auto|libxdp|off] [priority N]\n"
		"                         [keys N] [clock auto|precise|coarse]\n"
		"  mode   native: XDP in the driver (default); generic: XDP in the stack;\n"
		"         tc: TC ingress\n"
		"  dispatcher  for mode native or generic, sharing the interface with other\n"
		"         XDP programs through libxdp's dispatcher (as xdp-loader and\n"
		"         xdp-filter do): auto (default) joins a dispatcher already there\n"
		"         and attaches alone to a free interface; libxdp always goes through\n"
		"         one, making it if need be; off only ever attaches alone. An XDP\n"
		"         program not loaded through libxdp is refused and left alone.\n"
		"         libxdp keeps its state under $LIBXDP_BPFFS/xdp (/sys/fs/bpf/xdp)\n"
		"  priority  weir's run priority in the dispatcher, lower first (default\n"
		"         %d: after xdp-filter's 10, before the default 50); implies\n"
		"         dispatcher libxdp. What weir passes goes on to the next program\n"
		"         there; what it drops (or answers) goes no further\n"
		"  tc-hook  for mode tc: a tcx link (Linux 6.6+) or a filter on the clsact\n"
		"         qdisc; auto (default) takes tcx where the kernel has it\n"
		"  keys   per-source buckets to track (default %d), set when first loaded;\n"
		"         rounded up to a multiple of %d, 64 bytes each, preallocated\n"
		"  clock  data-path clock, set when first loaded: auto (default) reads the\n"
		"         jiffies clock, which costs no call, except for rules with a limit\n"
		"         whose burst spans under %d ticks (or a window under %d ticks), which\n"
		"         read the precise one; precise: always bpf_ktime_get_ns; coarse:\n"
		"         always the jiffies clock\n",
		WR_XDP_PRIO_DEFAULT, WEIR_DEFAULT_KEYS, WEIR_WAYS, WEIR_COARSE_TICKS,
		WEIR_COARSE_WINDOW_TICKS);
}

int do_attach(int argc, char **argv)
{
	struct wr_load_opts lo = { .clock = WEIR_CLOCK_AUTO };
	struct wr_attach_opts ao = WR_ATTACH_OPTS_DEFAULT;
	bool keys_given = false, clock_given = false;
	unsigned int given = 0;
	struct wr_xdpm_info xi;
	const char *dev;
	int ifindex, lock = -1, err, i, key;
	char why[160];
	uint64_t v;

	if (argc < 1 || !strcmp(argv[0], "help")) {
		usage_attach(argc < 1 ? stderr : stdout);
		return argc < 1 ? -EINVAL : 0;
	}
	dev = argv[0];
	for (i = 1; i < argc; i += 2) {
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!val) {
			pr_err("\"%s\" needs a value", argv[i]);
			return -EINVAL;
		}
		key = wr_attach_key(argv[i]);
		if (key >= 0) {
			/* mode, tc-hook, dispatcher, priority: as the config's interfaces take them */
			if (wr_attach_opt(&ao, key, val)) {
				wr_attach_hint(key, why, sizeof(why));
				pr_err("invalid %s \"%s\" (%s)", argv[i], val, why);
				return -EINVAL;
			}
			given |= 1u << key;
		} else if (!strcmp(argv[i], "keys")) {
			if (parse_u64(val, 1, 1ULL << 28, &v)) {
				pr_err("invalid keys \"%s\" (1 to %llu)", val, 1ULL << 28);
				return -EINVAL;
			}
			lo.keys = v;
			keys_given = true;
		} else if (!strcmp(argv[i], "clock")) {
			clock_given = true;
			if (!strcmp(val, "auto"))
				lo.clock = WEIR_CLOCK_AUTO;
			else if (!strcmp(val, "precise"))
				lo.clock = WEIR_CLOCK_PRECISE;
			else if (!strcmp(val, "coarse"))
				lo.clock = WEIR_CLOCK_COARSE;
			else {
				pr_err("invalid clock \"%s\" (auto, precise or coarse)", val);
				return -EINVAL;
			}
		} else {
			pr_err("unknown attach option \"%s\"", argv[i]);
			usage_attach(stderr);
			return -EINVAL;
		}
	}
	if (wr_attach_settle(&ao, given, &key, why, sizeof(why))) {
		pr_err("%s", why);
		return -EINVAL;
	}
	ifindex = if_nametoindex(dev);
	if (!ifindex) {
		pr_err("unknown interface \"%s\"", dev);
		return -ENODEV;
	}
	lock = wr_lock_root();
	if (lock < 0)
		return lock;
	err = wr_is_loaded() ? wr_check_load_opts(&lo, keys_given, clock_given) : 0;
	if (!err)
		err = wr_ensure_loaded(&lo);
	if (!err)
		err = wr_attach_locked(dev, ifindex, &ao);
	if (err)
		goto out;
	out_begin();
	print_str("attached", "attached to %s", dev);
	print_str("mode", " in %s mode", wr_mode_names[ao.mode]);
	if (!wr_link_xdpm(ifindex, &xi)) {
		print_str("dispatcher", " (%s dispatcher", "libxdp");
		print_u64("priority", ", priority %llu", xi.prio);
		print_u64("dispatcher_id", ", program %llu", xi.dispatcher_id);
		print_u64("dispatcher_programs", " of %llu)", xi.count);
	}
	print_text("\n");
	out_end();
out:
	wr_unlock(lock);
	return err;
}

int do_detach(int argc, char **argv)
{
	char name[IF_NAMESIZE + 16];
	int links[256], n, i, lock, ifindex, err = 0;

	if (argc != 1 || !strcmp(argv[0], "help")) {
		fprintf(argc == 1 ? stdout : stderr, "Usage: weir detach DEV | all\n"
				"  DEV  remove weir from one interface (rules and state stay)\n"
				"  all  remove it everywhere, with its rules, lists and state\n");
		return argc == 1 ? 0 : -EINVAL;
	}
	err = wr_probe_path(opts.root);
	if (err == -EACCES)
		return err;
	if (err) {
		if (!strcmp(argv[0], "all"))
			return wr_feed_store_clear();	/* nothing else to remove */
		pr_err("weir is not attached to \"%s\" (nothing under %s)", argv[0], opts.root);
		return -ENOENT;
	}
	lock = wr_lock();
	if (lock < 0) {
		pr_err("cannot lock %s: %s", opts.root, strerror(-lock));
		return lock;
	}
	if (!strcmp(argv[0], "all")) {
		int others = wr_count_all_links();

		n = wr_list_links(links, ARRAY_SIZE(links));
		for (i = 0; i < n; i++) {
			int mode;

			wr_link_describe(links[i], name, sizeof(name), &mode);
			print_text("detached from %s\n", name);
		}
		if (others > n)
			print_text("detached %d attachments in other network namespaces\n",
				   others - n);
		err = wr_remove_all();
		if (err)
			pr_err("cannot remove everything under %s: %s", opts.root, strerror(-err));
		else if ((err = wr_feed_store_clear()))
			pr_err("cannot remove the feed store: %s", strerror(-err));
		goto out;
	}
	ifindex = if_nametoindex(argv[0]);
	/* An interface that is gone: by the name it was attached as, or as status shows it. */
	if (!ifindex)
		ifindex = wr_link_find_gone(argv[0]);
	if (!ifindex) {
		pr_err("unknown interface \"%s\"", argv[0]);
		err = -ENODEV;
		goto out;
	}
	err = wr_detach_ifindex(ifindex);
	if (err) {
		if (err == -ENOENT)
			pr_err("weir is not attached to %s", argv[0]);
		else
			pr_err("cannot detach from %s: %s", argv[0], strerror(-err));
		goto out;
	}
	print_text("detached from %s\n", argv[0]);
out:
	wr_unlock(lock);
	return err;
}

int do_status(int argc, char **argv)
{
	int clock;
	struct weir_ruleset *rs = NULL;
	struct weir_config cfg = {};
	struct wr_maps m;
	char name[IF_NAMESIZE + 16];
	int links[256], n, i, err;
	struct bpf_map_info minfo = {};
	__u32 ilen = sizeof(minfo);
	struct wr_xdpm_info xi;

	if (argc > 0) {
		bool help = argc == 1 && !strcmp(argv[0], "help");

		fprintf(help ? stdout : stderr, "Usage: weir status\n"
			"  what is loaded and where: attachments and their modes, switches,\n"
			"  rules, the per-source table, the clock, whether a capture runs and\n"
			"  the rules' source sets\n");
		return help ? 0 : -EINVAL;
	}
	if (!wr_is_loaded()) {
		char path[PATH_MAX];

		/* "Not loaded" only when we could have seen it: else say why not. */
		if (!wr_pin_path(path, sizeof(path), "prog_xdp") && access(path, F_OK) &&
		    (errno == EACCES || errno == EPERM))
			return wr_not_loaded();
		out_begin();
		print_bool("loaded", "loaded: %s\n", false);
		print_str("bpffs", "bpffs: %s\n", opts.root);
		open_array("interfaces");
		close_array();
		out_end();
		return 0;
	}
	err = wr_maps_open(&m);
	if (err)
		return err;
	rs = wr_live_get(&m);
	err = rs ? wr_config_read(&m, &cfg) : -ENOENT;
	if (err) {
		if (rs)
			pr_err("cannot read the config: %s", strerror(-err));
		goto out;
	}
	bpf_obj_get_info_by_fd(m.state, &minfo, &ilen);
	out_begin();
	print_bool("loaded", "loaded: %s\n", true);
	print_str("bpffs", "bpffs: %s\n", opts.root);
	print_bool("enabled", "enabled: %s", !cfg.disabled);
	print_text("%s\n", cfg.disabled ? " (kill switch on: everything passes, would-drops "
					  "counted)" : "");
	print_str("fail", "on internal faults: fail %s\n", cfg.fail_closed ? "closed" : "open");
	print_str("malformed", "malformed IP: %s\n", cfg.malformed_pass ? "pass" : "drop");
	print_str("first_stage", "first stage: %s\n",
		  cfg.cache_off ? "off" : cfg.cache_on ? "on" : "on (no rule it may cache)");
	print_str("tcp_state_auto", "tcp-state auto: %s\n",
		  cfg.tcp_state_on ? "on (checking segments)" : "off");
	wr_auto_status();
	print_u64("rules", "rules: %llu\n", rs->nr_rules);
	print_u64("generation", "rule set generation: %llu\n", rs->gen);
	open_object("keys");
	print_u64("capacity", "per-source buckets: capacity %llu", (__u64)minfo.max_entries * WEIR_WAYS);
	print_u64("sets", " (%llu sets", minfo.max_entries);
	print_u64("ways", " of %llu ways)\n", WEIR_WAYS);
	close_object();
	clock = wr_loaded_clock();
	print_str("clock", "clock: %s\n", clock >= 0 ? wr_clock_names[clock] : "unknown");
	wr_capture_status(&m, &cfg);
	wr_reflect_status(&m, rs);
	wr_srcset_status(&m, rs);
	open_array("interfaces");
	n = wr_list_links(links, ARRAY_SIZE(links));
	if (!n)
		print_text("attached: nowhere\n");
	for (i = 0; i < n; i++) {
		__u32 link_id, prog_id;
		bool gone, clsact, eclsact;
		int mode = -1;

		if (wr_link_ids(links[i], &link_id, &prog_id, &clsact))
			continue;	/* detached since the directory was read */
		gone = wr_link_describe(links[i], name, sizeof(name), &mode) == -ENODEV;
		open_object(NULL);
		print_text("attached: ");
		print_str("interface", "%s", name);
		print_u64("ifindex", NULL, links[i]);
		/* As attach names it; a link of an older version whose interface is gone says "unknown". */
		print_str("mode", " mode %s", mode >= 0 ? wr_mode_names[mode] : "unknown");
		if (mode == WR_MODE_TC)
			print_str("tc_hook", " hook %s", clsact ? "clsact" : "tcx");
		if (!wr_link_xdpm(links[i], &xi)) {
			/* In libxdp's dispatcher: no link of our own; the dispatcher's program. */
			print_str("dispatcher", " (%s dispatcher", "libxdp");
			print_u64("priority", ", priority %llu)", xi.prio);
			if (xi.dispatcher_id)
				print_u64("dispatcher_id", " dispatcher %llu", xi.dispatcher_id);
			if (xi.count)
				print_u64("dispatcher_programs", " (%llu programs)", xi.count);
		} else {
			print_str("dispatcher", NULL, "none");
			print_u64("link_id", " link %llu", link_id);
		}
		print_u64("prog_id", " prog %llu", prog_id);
		/* The egress program (the reflection preset's flows) and its hook; null: none. */
		if (wr_egress_attached(links[i], &eclsact))
			print_str("egress", ", egress %s", eclsact ? "clsact" : "tcx");
		else
			print_null("egress", ", no egress program");
		print_bool("interface_gone", NULL, gone);
		if (gone)
			print_text(" (interface gone: 'weir detach %s' removes the link)", name);
		print_text("\n");
		close_object();
	}
	close_array();
	i = wr_count_all_links() - n;
	print_u64("other_netns_attachments", i ? "attached in other network namespaces: %llu\n"
						: NULL, i);
	out_end();
	err = 0;
out:
	free(rs);
	wr_maps_close(&m);
	return err;
}

