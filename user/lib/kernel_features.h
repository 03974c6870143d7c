/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the running kernel's BPF offers, probed before the object is loaded,
 * and the object's switches set to match: one object for every kernel from
 * 5.15 up. A feature weir cannot do without stops the load with a message
 * naming it and the kernel it came in; one it can do without is replaced
 * (the rodata switches in bpf/maps.h), and the verifier never sees
 * the code that needs it.
 *
 * WEIR_FEATURES_OFF (a comma-separated list of the names below) makes a
 * kernel that has a feature look as if it had not, so that the replacements
 * and the refusals are tested on any kernel.
 *
 * Header only, with static functions: the loader and the BPF test harness
 * (tests/bpf_harness.h) both include it. Needs weir.skel.h first.
 */
#ifndef WEIR_KERNEL_FEATURES_H
#define WEIR_KERNEL_FEATURES_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/utsname.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

enum wr_feature {
	WR_FEAT_CMPXCHG,	/* BPF_ATOMIC | BPF_CMPXCHG */
	WR_FEAT_SOCKOPS_NETNS,	/* bpf_get_netns_cookie() in sock_ops */
	WR_FEAT_BPF_LOOP,	/* bpf_loop() */
	WR_FEAT_XDP_FRAGS,	/* xdp.frags, bpf_xdp_get_buff_len() */
	WR_FEAT_SYNCOOKIE,	/* bpf_tcp_raw_{gen,check}_syncookie_ipv4/6() in XDP */
	WR_FEAT_NR,
};

static const struct wr_feature_desc {
	const char *name;	/* for WEIR_FEATURES_OFF */
	const char *what;
	const char *since;	/* the release it came in */
	const char *instead;	/* NULL: weir cannot run without it */
} wr_feature_descs[WR_FEAT_NR] = {
	[WR_FEAT_CMPXCHG] = { "cmpxchg", "BPF atomic compare-and-swap", "5.12", NULL },
	[WR_FEAT_SOCKOPS_NETNS] = { "sockops_netns_cookie",
				    "bpf_get_netns_cookie() in sock_ops programs", "5.15",
				    "connection limits (conns N) are refused; every other "
				    "limit works" },
	[WR_FEAT_BPF_LOOP] = { "bpf_loop", "bpf_loop()", "5.17",
			       "the rules are walked in a bounded loop, verified pass by pass" },
	[WR_FEAT_XDP_FRAGS] = { "xdp_frags", "XDP multi-buffer (xdp.frags)", "5.18",
				"XDP sees only the first buffer of a frame, and native XDP does "
				"not attach where the MTU needs more than one" },
	[WR_FEAT_SYNCOOKIE] = { "syncookie", "the raw SYN cookie helpers "
				"(bpf_tcp_raw_gen_syncookie_ipv4/6) in XDP", "6.0",
				"rules with action cookie are refused; every other rule works" },
};

/* 1 the kernel has it, 0 it has not, -1 the probe could not tell. */
struct wr_features {
	int has[WR_FEAT_NR];
};

/* A compare-and-swap on a stack slot: refused by kernels before 5.12. */
static inline int wr_probe_cmpxchg(void)
{
	const struct bpf_insn insns[] = {
		/* *(u64 *)(r10 - 8) = 0 */
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8 },
		/* r0 = 0; r1 = 1 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		/* r0 = cmpxchg(r10 - 8, r0, r1) */
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1, .off = -8, .imm = BPF_CMPXCHG },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd;

	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, NULL, "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), NULL);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == EINVAL ? 0 : -1;
}

static inline int wr_probe_helper(enum bpf_prog_type type, enum bpf_func_id id)
{
	int r = libbpf_probe_bpf_helper(type, id, NULL);

	return r < 0 ? -1 : r;
}

static inline void wr_features_probe(struct wr_features *f)
{
	const char *off = getenv("WEIR_FEATURES_OFF");
	int i;

	f->has[WR_FEAT_CMPXCHG] = wr_probe_cmpxchg();
	f->has[WR_FEAT_SOCKOPS_NETNS] = wr_probe_helper(BPF_PROG_TYPE_SOCK_OPS,
							BPF_FUNC_get_netns_cookie);
	f->has[WR_FEAT_BPF_LOOP] = wr_probe_helper(BPF_PROG_TYPE_XDP, BPF_FUNC_loop);
	f->has[WR_FEAT_XDP_FRAGS] = wr_probe_helper(BPF_PROG_TYPE_XDP,
						    BPF_FUNC_xdp_get_buff_len);
	/* The last of the four helpers added together in 6.0, and the lookup the ACK check uses. */
	f->has[WR_FEAT_SYNCOOKIE] =
		wr_probe_helper(BPF_PROG_TYPE_XDP, BPF_FUNC_tcp_raw_check_syncookie_ipv6) &&
		wr_probe_helper(BPF_PROG_TYPE_XDP, BPF_FUNC_skc_lookup_tcp);
	for (i = 0; off && i < WR_FEAT_NR; i++) {
		const char *p = off, *name = wr_feature_descs[i].name;
		size_t n = strlen(name);

		while ((p = strstr(p, name))) {
			if ((p == off || p[-1] == ',') && (p[n] == ',' || !p[n])) {
				f->has[i] = 0;
				break;
			}
			p += n;
		}
	}
}

/* The running kernel's release, for messages. */
static inline const char *wr_kernel_release(void)
{
	static struct utsname u;

	if (!u.release[0] && uname(&u))
		return "?";
	return u.release;
}

/*
 * Multi-buffer XDP for the XDP programs where the kernel has it. They are
 * SEC("xdp"), not SEC("xdp.frags"), and the flag is asked for here: libbpf
 * adds BPF_F_XDP_HAS_FRAGS to an "xdp.frags" section at load whatever the
 * program's flags say, and a kernel before 5.18 refuses that flag (EINVAL),
 * so such a section cannot load there at all. A tail call's target must
 * agree with its caller on frags, so the cookie programs follow the entry.
 */
static inline int wr_xdp_frags_set(struct weir *skel, int frags)
{
	struct bpf_program *p[] = { skel->progs.weir_xdp, skel->progs.weir_xdpm,
				    skel->progs.weir_cookie_syn, skel->progs.weir_cookie_ack };
	size_t k;
	int err;

	for (k = 0; k < sizeof(p) / sizeof(p[0]); k++) {
		__u32 fl = bpf_program__flags(p[k]);

		err = bpf_program__set_flags(p[k], frags ? fl | BPF_F_XDP_HAS_FRAGS :
							   fl & ~BPF_F_XDP_HAS_FRAGS);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Set skel's switches for f, between open and load. 0, or -EOPNOTSUPP with
 * why[] saying which feature weir needs and the kernel lacks.
 */
static inline int wr_features_apply(struct weir *skel, const struct wr_features *f,
				    char *why, size_t len)
{
	int i;

	for (i = 0; i < WR_FEAT_NR; i++) {
		const struct wr_feature_desc *d = &wr_feature_descs[i];

		if (f->has[i] == 0 && !d->instead) {
			snprintf(why, len, "this kernel (%s) has no %s, which weir needs "
				 "(Linux %s or later)", wr_kernel_release(), d->what, d->since);
			return -EOPNOTSUPP;
		}
	}
	/* Without it the connection counter cannot tell namespaces apart: not loaded. */
	bpf_program__set_autoload(skel->progs.weir_sockops, f->has[WR_FEAT_SOCKOPS_NETNS] != 0);
	skel->rodata->has_bpf_loop = f->has[WR_FEAT_BPF_LOOP] != 0;
	skel->rodata->has_frags = f->has[WR_FEAT_XDP_FRAGS] != 0;
	skel->rodata->has_syncookie = f->has[WR_FEAT_SYNCOOKIE] != 0;
	/* The cookie programs are verified only where their helpers exist. */
	bpf_program__set_autoload(skel->progs.weir_cookie_syn, skel->rodata->has_syncookie);
	bpf_program__set_autoload(skel->progs.weir_cookie_ack, skel->rodata->has_syncookie);
	return wr_xdp_frags_set(skel, skel->rodata->has_frags);
}

/*
 * After load: the cookie programs into wr_cookie_progs, where the XDP
 * entry tail-calls them (nothing where they were not loaded). 0 or -errno.
 */
static inline int wr_cookie_progs_fill(struct weir *skel)
{
	struct bpf_program *p[WEIR_CK_PROGS] = {
		[WEIR_CK_PROG_SYN] = skel->progs.weir_cookie_syn,
		[WEIR_CK_PROG_ACK] = skel->progs.weir_cookie_ack,
	};
	int map = bpf_map__fd(skel->maps.wr_cookie_progs);
	__u32 k;

	for (k = 0; k < WEIR_CK_PROGS; k++) {
		int fd = bpf_program__fd(p[k]);

		if (fd < 0)
			continue;
		if (bpf_map_update_elem(map, &k, &fd, 0))
			return -errno;
	}
	return 0;
}

/*
 * The kernel config values the object reads (CONFIG_HZ), for libbpf's
 * open options, so that a kernel without /boot/config-* or /proc/config.gz
 * loads too. The tick is the resolution of CLOCK_MONOTONIC_COARSE, which
 * the kernel reports as exactly its TICK_NSEC; "" (libbpf then reads the
 * config file) if it cannot be had.
 */
static inline const char *wr_kconfig(void)
{
	static char buf[32];
	struct timespec res;

	if (!buf[0] && !clock_getres(CLOCK_MONOTONIC_COARSE, &res) && !res.tv_sec &&
	    res.tv_nsec > 0)
		snprintf(buf, sizeof(buf), "CONFIG_HZ=%ld\n",
			 (1000000000L + res.tv_nsec / 2) / res.tv_nsec);
	return buf[0] ? buf : NULL;
}

/*
 * The object opened for this kernel: its config values given, its switches
 * set for what the kernel offers (f, probed here if NULL), and pinned under
 * pin_root if not NULL. NULL with errno set; EOPNOTSUPP with why[] saying
 * what the kernel lacks.
 */
static inline struct weir *wr_open_for_kernel(const char *pin_root, struct wr_features *f,
						char *why, size_t len)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = pin_root, .kconfig = wr_kconfig());
	struct wr_features probed;
	struct weir *skel;
	int err;

	if (!f) {
		wr_features_probe(&probed);
		f = &probed;
	}
	why[0] = 0;
	skel = weir__open_opts(&oo);
	if (!skel) {
		snprintf(why, len, "cannot open the BPF object: %s", strerror(errno));
		return NULL;
	}
	err = wr_features_apply(skel, f, why, len);
	if (err) {
		if (!why[0])
			snprintf(why, len, "%s", strerror(-err));
		weir__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

#endif /* WEIR_KERNEL_FEATURES_H */
