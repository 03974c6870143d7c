// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sharing an interface's XDP hook with other programs through libxdp's
 * multi-program dispatcher (the one xdp-loader, xdp-filter and every other
 * libxdp user attach through).
 *
 * A dispatcher is a small XDP program that calls up to ten component
 * programs in order of their run priority; each component is a freplace
 * (BPF_PROG_TYPE_EXT) program attached to one of its slots, and a
 * component's verdict ends the chain unless it is one of the component's
 * chain-call actions. libxdp keeps the dispatcher's state under its own
 * bpffs directory ($LIBXDP_BPFFS/xdp, by default /sys/fs/bpf/xdp): the
 * dispatcher is attached through netlink and the component links are
 * pinned there, so everything stays when the process that attached it
 * exits. Every libxdp user must see the same directory.
 *
 * weir's component is weir_xdpm, weir_xdp's body without its tail call
 * into the SYN-cookie programs, loaded as an extension program from a
 * fresh open of the same object: every map it uses is the one the pinned
 * XDP entry uses (the pinned maps, and the object's own .rodata, .bss and
 * scratch maps, taken by id from prog_xdp), so both entries share the
 * rules, the buckets and the counters. Why no tail call (bpf/weir.bpf.c
 * says more): kernels before 6.5 let a program tail-call only into
 * programs of its own type, which an extension is not, and since 6.13
 * (and Debian's 6.12) an extension that may change packet data, as a tail
 * call may, cannot take a dispatcher slot that does not, which libxdp's
 * before 1.5.5 do not. So the cookie fallback applies (a SYN a cookie rule
 * refuses is dropped), and rules with action cookie are refused while
 * weir is in a dispatcher, as in tc mode (wr_cookie_guard,
 * lib/cookie.c); the cookie programs' array is not even made for the
 * copy. weir loads the copy itself,
 * with the pinned entry as its first target and multi-buffer XDP as the
 * entry has it (wr_open_for_kernel sets the flag for both), and libxdp
 * moves it into the dispatcher (re-attaching an extension to another
 * target: Linux 5.10+). libxdp takes a loaded
 * program's run priority and chain-call actions from its BTF, where
 * libxdp's XDP_RUN_CONFIG puts them (a .xdp_run_config section): weir
 * adds that section's types to the object's BTF before the load, with the
 * priority asked for (WR_XDP_PRIO_DEFAULT: after xdp-filter's 10, before
 * the default 50) and XDP_PASS as its chain-call action: what weir passes
 * goes on to the next program, anything else ends the chain.
 *
 * The record under weir's root is the extension program itself,
 * xdpm_<netns>_<ifindex>_<mode>_<prio>_<name> (links.c parses it): it keeps
 * the program whatever libxdp does, and `detach` takes exactly that
 * program out of the dispatcher, leaving the others running.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/btf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "lib/libweir.h"
#include "weir.skel.h"
#include "lib/kernel_features.h"

const char *const wr_dispatcher_names[3] = { "auto", "libxdp", "off" };

static int libxdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBXDP_WARN && !opts.debug)
		return 0;
	return vfprintf(stderr, fmt, ap);	/* libxdp's lines say "libxdp: " */
}

static void libxdp_init(void)
{
	static bool done;

	if (!done)
		libxdp_set_print(libxdp_print);
	done = true;
}

static enum xdp_attach_mode xdp_mode_of(int mode)
{
	return mode == WR_MODE_GENERIC ? XDP_MODE_SKB : XDP_MODE_NATIVE;
}

/*
 * The hook of the mode asked for: WR_HOOK_FREE if its slot is empty, unless
 * libxdp's dispatcher holds the other mode's (then *mode says which, for
 * the caller to refuse with the mode to use). Another program in the other
 * slot is left to the attach, which the kernel refuses (native and generic
 * XDP do not run at once) and explain_busy explains. libxdp looks at the
 * driver's slot when both are taken.
 */
int wr_xdpm_hook(int ifindex, int want, int *mode, __u32 *prog_id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct xdp_multiprog *mp;
	__u32 own, other;
	int err;

	libxdp_init();
	*prog_id = 0;
	err = bpf_xdp_query(ifindex, 0, &q);
	if (err)
		return err;
	own = want == WR_MODE_GENERIC ? q.skb_prog_id : q.drv_prog_id;
	other = want == WR_MODE_GENERIC ? q.drv_prog_id : q.skb_prog_id;
	if (!own && !other)
		return WR_HOOK_FREE;
	/* What libxdp looks at: the driver's slot if it is taken. */
	if (own && want == WR_MODE_GENERIC && other)
		return *prog_id = own, *mode = want, WR_HOOK_OTHER;
	*prog_id = own ? own : other;
	*mode = own ? want : (want == WR_MODE_GENERIC ? WR_MODE_NATIVE : WR_MODE_GENERIC);
	mp = xdp_multiprog__get_from_ifindex(ifindex);
	if (libxdp_get_error(mp) || !mp)
		err = WR_HOOK_OTHER;
	else
		err = xdp_multiprog__is_legacy(mp) ? WR_HOOK_OTHER : WR_HOOK_DISPATCHER;
	xdp_multiprog__close(mp);
	/* Another program in the other mode's slot is no business of this one. */
	if (!own && err == WR_HOOK_OTHER)
		return WR_HOOK_FREE;
	return err;
}

int wr_xdpm_find(int ifindex, __u32 prog_id, struct wr_xdpm_info *info)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p = NULL;
	int err = -ENOENT;

	libxdp_init();
	memset(info, 0, sizeof(*info));
	mp = xdp_multiprog__get_from_ifindex(ifindex);
	if (libxdp_get_error(mp) || !mp)
		return -ENOENT;
	if (xdp_multiprog__is_legacy(mp))
		goto out;
	while ((p = xdp_multiprog__next_prog(p, mp))) {
		if (xdp_program__id(p) == prog_id) {
			info->prio = xdp_program__run_prio(p);
			err = 0;
		}
		info->count++;
	}
	info->dispatcher_id = xdp_program__id(xdp_multiprog__main_prog(mp));
	info->mode = xdp_multiprog__attach_mode(mp) == XDP_MODE_SKB ? WR_MODE_GENERIC
								       : WR_MODE_NATIVE;
out:
	xdp_multiprog__close(mp);
	return err;
}

/*
 * The maps of the loaded XDP entry, by name, for the extension program:
 * map names in the kernel are cut at BPF_OBJ_NAME_LEN - 1 characters.
 */
static int reuse_maps(struct bpf_object *obj, int xdp_fd)
{
	__u32 ids[64] = {}, len, i;
	struct bpf_prog_info pi = {};
	struct bpf_map *map;
	int err = 0;

	len = sizeof(pi);
	pi.nr_map_ids = ARRAY_SIZE(ids);
	pi.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(xdp_fd, &pi, &len))
		return -errno;
	if (pi.nr_map_ids > ARRAY_SIZE(ids))
		return -E2BIG;
	for (i = 0; i < pi.nr_map_ids && !err; i++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			return -errno;
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen)) {
			err = -errno;
			close(fd);
			break;
		}
		bpf_object__for_each_map(map, obj) {
			/* Not the cookie programs' array, which the copy has not. */
			if (strncmp(bpf_map__name(map), mi.name, BPF_OBJ_NAME_LEN - 1) ||
			    bpf_map__type(map) == BPF_MAP_TYPE_PROG_ARRAY)
				continue;
			/* Taken as it is: not looked up again by its pin, nor pinned. */
			err = bpf_map__set_pin_path(map, NULL);
			if (!err)
				err = bpf_map__reuse_fd(map, fd);
			break;
		}
		close(fd);	/* reuse_fd holds a duplicate */
	}
	return err;
}

/*
 * libxdp's run config for weir_xdpm into the object's BTF, as
 * XDP_RUN_CONFIG(weir_xdpm) would compile it:
 *   struct { __uint(priority, prio); __uint(XDP_PASS, 1); }
 *	_weir_xdpm SEC(".xdp_run_config");
 * (__uint(name, n) is int (*name)[n]: the number is the array's length.)
 */
static int add_run_config(struct btf *btf, unsigned int prio)
{
	int i32, arr, ptr_prio, ptr_pass, st, var, sec, err;

	i32 = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	if (i32 < 0)
		return i32;
	arr = btf__add_array(btf, i32, i32, prio);
	ptr_prio = arr < 0 ? arr : btf__add_ptr(btf, arr);
	arr = ptr_prio < 0 ? ptr_prio : btf__add_array(btf, i32, i32, 1);
	ptr_pass = arr < 0 ? arr : btf__add_ptr(btf, arr);
	st = ptr_pass < 0 ? ptr_pass : btf__add_struct(btf, NULL, 2 * sizeof(void *));
	if (st < 0)
		return st;
	err = btf__add_field(btf, "priority", ptr_prio, 0, 0);
	if (!err)
		err = btf__add_field(btf, "XDP_PASS", ptr_pass, 8 * sizeof(void *), 0);
	if (err)
		return err;
	var = btf__add_var(btf, "_weir_xdpm", BTF_VAR_GLOBAL_ALLOCATED, st);
	sec = var < 0 ? var : btf__add_datasec(btf, ".xdp_run_config", 2 * sizeof(void *));
	if (sec < 0)
		return sec;
	return btf__add_datasec_var_info(btf, var, 0, 2 * sizeof(void *));
}

/*
 * Whether the kernel loads extension (freplace) programs at all, which
 * the dispatcher's components are: a kernel locked down against them
 * refuses any with EPERM before looking at it. 0 if it may, else -EPERM.
 */
static int probe_ext(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },	/* r0 = 0 */
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_EXT, NULL, "GPL", insns, ARRAY_SIZE(insns), NULL);

	if (fd >= 0)
		close(fd);
	/* Anything else (EINVAL: no target named) says the type is there. */
	return fd < 0 && errno == EPERM ? -EPERM : 0;
}

/*
 * Join (or make) the dispatcher on ifindex with weir_xdp as an extension
 * program, and pin it as the record `pin` under the root. Caller holds the
 * root lock and has checked that the hook is free or holds a dispatcher.
 */
int wr_xdpm_attach(const char *dev, int ifindex, int mode, unsigned int prio, const char *pin)
{
	struct xdp_program *xp = NULL;
	struct xdp_multiprog *mp = NULL;
	struct weir *skel = NULL;
	struct bpf_program *p;
	char path[PATH_MAX], why[256], msg[128];
	struct wr_xdpm_info info;
	const char *skip;
	int xdp = -1, err;
	__u32 id;

	libxdp_init();
	skip = getenv("LIBXDP_SKIP_DISPATCHER");
	if (skip && !strcmp(skip, "1")) {
		pr_err("LIBXDP_SKIP_DISPATCHER=1 is set: libxdp would attach weir without its "
		       "dispatcher; unset it to join one");
		return -EINVAL;
	}
	err = wr_pin_path(path, sizeof(path), "prog_xdp");
	if (err)
		return err;
	xdp = bpf_obj_get(path);
	if (xdp < 0) {
		err = -errno;
		pr_err("cannot open pinned program %s: %s", path, strerror(-err));
		return err;
	}
	err = wr_check_prog(xdp, path, "weir_xdp", BPF_PROG_TYPE_XDP);
	if (err)
		goto out;
	err = probe_ext();
	if (err) {
		pr_err("this kernel (%s) refuses extension (freplace) programs, which libxdp's "
		       "dispatcher is made of (kernel lockdown or a security policy): weir can "
		       "attach to %s only alone", wr_kernel_release(), dev);
		goto out;
	}
	skel = wr_open_for_kernel(opts.root, NULL, why, sizeof(why));
	if (!skel) {
		err = -errno;
		pr_err("cannot open weir's BPF object: %s", why);
		goto out;
	}
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, p == skel->progs.weir_xdpm);
	p = skel->progs.weir_xdpm;
	/* Nothing of the copy's reaches the cookie programs: their array is not made. */
	err = bpf_map__set_autocreate(skel->maps.wr_cookie_progs, false);
	if (!err)
		err = reuse_maps(skel->obj, xdp);
	if (err) {
		pr_err("cannot share the maps of %s with the dispatcher's copy: %s", path,
		       strerror(-err));
		goto out;
	}
	err = add_run_config(bpf_object__btf(skel->obj), prio);
	if (err) {
		pr_err("cannot add libxdp's run config to the BPF object's BTF: %s",
		       strerror(-err));
		goto out;
	}
	/* An extension of the pinned entry until libxdp moves it into the dispatcher. */
	err = bpf_program__set_type(p, BPF_PROG_TYPE_EXT);
	if (!err)
		err = bpf_program__set_expected_attach_type(p, 0);
	if (!err)
		err = bpf_program__set_attach_target(p, xdp, "weir_xdp");
	if (!err)
		err = bpf_object__load(skel->obj);
	if (err) {
		pr_err("cannot load weir's XDP program as an extension for libxdp's dispatcher: "
		       "%s", strerror(-err));
		goto out;
	}
	xp = xdp_program__from_fd(bpf_program__fd(p));
	err = libxdp_get_error(xp);
	if (err) {
		xp = NULL;
		pr_err("libxdp cannot take weir's XDP program: %s", strerror(-err));
		goto out;
	}
	if (xdp_program__run_prio(xp) != prio || !xdp_program__chain_call_enabled(xp, XDP_PASS)) {
		pr_err("BUG: libxdp reads weir's run config as priority %u%s, not %u and XDP_PASS",
		       xdp_program__run_prio(xp),
		       xdp_program__chain_call_enabled(xp, XDP_PASS) ? "" : " without XDP_PASS",
		       prio);
		err = -EINVAL;
		goto out;
	}
	err = xdp_program__attach(xp, ifindex, xdp_mode_of(mode), 0);
	if (err) {
		libxdp_strerror(err, msg, sizeof(msg));
		if (err == -EEXIST || err == -EBUSY)
			pr_err("cannot join the XDP dispatcher on %s: %s (is it attached in the "
			       "other mode? 'weir status' and 'xdp-loader status %s' show it)",
			       dev, msg, dev);
		else if (err == -EINVAL)
			/*
			 * libxdp could not move the copy into the dispatcher
			 * (bpf_link_create with a new target: EINVAL), then
			 * tried it alone. Seen on Debian's 6.12 while the copy
			 * still made a tail call (see weir_xdpm).
			 */
			pr_err("cannot attach to %s through libxdp's dispatcher: this kernel (%s) "
			       "refused to move weir's program into it (%s); attach weir in tc "
			       "mode beside the other XDP program, or alone on %s", dev,
			       wr_kernel_release(), msg, dev);
		else
			pr_err("cannot attach to %s through libxdp's dispatcher: %s", dev, msg);
		goto out;
	}
	id = xdp_program__id(xp);
	/*
	 * libxdp attaches a lone program without its dispatcher where the
	 * kernel cannot run one (freplace needs Linux 5.10+): never that.
	 */
	if (wr_xdpm_find(ifindex, id, &info)) {
		xdp_program__detach(xp, ifindex, xdp_mode_of(mode), 0);
		mp = xdp_multiprog__get_from_ifindex(ifindex);
		if (!libxdp_get_error(mp) && mp && xdp_multiprog__is_legacy(mp) &&
		    xdp_program__id(xdp_multiprog__main_prog(mp)) == id)
			xdp_multiprog__detach(mp);
		pr_err("this kernel (%s) cannot run libxdp's dispatcher (it needs freplace "
		       "programs, Linux 5.10+): attach without 'dispatcher libxdp'",
		       wr_kernel_release());
		err = -EOPNOTSUPP;
		goto out;
	}
	err = wr_pin_path(path, sizeof(path), pin);
	if (!err && bpf_obj_pin(xdp_program__fd(xp), path))
		err = -errno;
	if (err) {
		pr_err("cannot pin the record of the dispatcher's program at %s: %s", path,
		       strerror(-err));
		xdp_program__detach(xp, ifindex, xdp_mode_of(mode), 0);
		goto out;
	}
	pr_debug("joined the dispatcher %u on %s as program %u, priority %u of %d programs",
		 info.dispatcher_id, dev, id, info.prio, info.count);
out:
	xdp_multiprog__close(mp);
	xdp_program__close(xp);
	weir__destroy(skel);
	close(xdp);
	return err;
}

/*
 * Take weir's program (prog, the record's fd) out of the dispatcher on
 * ifindex, leaving the others. -ENOENT if it is not there (any more).
 */
int wr_xdpm_detach(int ifindex, int prog)
{
	struct xdp_program *xp;
	struct wr_xdpm_info info;
	char msg[128];
	int err;

	libxdp_init();
	xp = xdp_program__from_fd(prog);
	err = libxdp_get_error(xp);
	if (err)
		return err;
	if (wr_xdpm_find(ifindex, xdp_program__id(xp), &info)) {
		err = -ENOENT;
		goto out;
	}
	err = xdp_program__detach(xp, ifindex, xdp_mode_of(info.mode), 0);
	if (err) {
		libxdp_strerror(err, msg, sizeof(msg));
		pr_err("cannot take weir out of the dispatcher on ifindex %d: %s", ifindex, msg);
	}
out:
	xdp_program__close(xp);
	return err;
}
