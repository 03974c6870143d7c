// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Attachments: one bpf_link (XDP, or tcx for TC on 6.6+) or clsact filter
 * per interface, pinned under the root with the namespace, interface and
 * mode it was made with, so that they outlive the CLI and the daemon and
 * can be named, shown and removed after their interface is gone.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"

/* Not in the UAPI headers libbpf 1.1 ships with: tcx links (Linux 6.6). */
#ifndef BPF_TCX_INGRESS
#define BPF_TCX_INGRESS 46
#endif
#ifndef BPF_LINK_TYPE_TCX
#define BPF_LINK_TYPE_TCX 11
#endif

const char *const wr_mode_names[3] = { "native", "generic", "tc" };
const char *const wr_tc_hook_names[3] = { "auto", "tcx", "clsact" };
const char *const wr_attach_keys[WR_AOPT_NR] = {
	[WR_AOPT_MODE] = "mode",
	[WR_AOPT_TC_HOOK] = "tc-hook",
	[WR_AOPT_DISPATCHER] = "dispatcher",
	[WR_AOPT_PRIORITY] = "priority",
};

int wr_attach_key(const char *key)
{
	int i;

	for (i = 0; i < WR_AOPT_NR; i++)
		if (!strcmp(key, wr_attach_keys[i]))
			return i;
	return -ENOENT;
}

/* The words of a chosen option, and the field of o they set (NULL: priority, a number). */
static const char *const *attach_words(struct wr_attach_opts *o, int key, int **field)
{
	switch (key) {
	case WR_AOPT_MODE: *field = &o->mode; return wr_mode_names;
	case WR_AOPT_TC_HOOK: *field = &o->tc_hook; return wr_tc_hook_names;
	case WR_AOPT_DISPATCHER: *field = &o->dispatcher; return wr_dispatcher_names;
	default: *field = NULL; return NULL;
	}
}

int wr_attach_opt(struct wr_attach_opts *o, int key, const char *val)
{
	const char *const *words;
	uint64_t v;
	int *field, i;

	if (key == WR_AOPT_PRIORITY) {
		if (parse_u64(val, 0, INT_MAX, &v))
			return -EINVAL;
		o->priority = v;
		return 0;
	}
	words = attach_words(o, key, &field);
	for (i = 0; words && i < 3; i++) {
		if (!strcmp(val, words[i])) {
			*field = i;
			return 0;
		}
	}
	return -EINVAL;
}

void wr_attach_hint(int key, char *buf, size_t len)
{
	struct wr_attach_opts o;
	const char *const *words;
	int *field;

	words = attach_words(&o, key, &field);
	if (words)
		snprintf(buf, len, "%s, %s or %s", words[0], words[1], words[2]);
	else
		snprintf(buf, len, "0 to %d", INT_MAX);
}

int wr_attach_settle(struct wr_attach_opts *o, unsigned int given, int *bad, char *why,
		     size_t len)
{
	bool disp = given & (1u << WR_AOPT_DISPATCHER), prio = given & (1u << WR_AOPT_PRIORITY);

	if ((disp || prio) && o->mode == WR_MODE_TC) {
		*bad = disp ? WR_AOPT_DISPATCHER : WR_AOPT_PRIORITY;
		snprintf(why, len, "%s applies to XDP (mode native or generic), not to mode tc",
			 wr_attach_keys[*bad]);
		return -EINVAL;
	}
	if ((given & (1u << WR_AOPT_TC_HOOK)) && o->mode != WR_MODE_TC) {
		*bad = WR_AOPT_TC_HOOK;
		snprintf(why, len, "tc-hook applies to mode tc, not to XDP (mode %s)",
			 wr_mode_names[o->mode]);
		return -EINVAL;
	}
	if (prio && o->dispatcher == WR_DISP_OFF) {
		*bad = WR_AOPT_PRIORITY;
		snprintf(why, len, "priority is weir's place in libxdp's dispatcher, which "
			 "dispatcher off never joins");
		return -EINVAL;
	}
	if (prio)
		o->dispatcher = WR_DISP_LIBXDP;
	return 0;
}

/*
 * The network namespace we run in, by inode. Interface indexes mean
 * something only within one namespace, and one bpffs root may serve
 * several, so link pins carry both, and the mode and the interface's name
 * as attached, so that a link whose interface is gone can still be named
 * (`detach NAME`) and shown as what it was:
 *   link_<netns>_<ifindex>_<mode>_<name>
 * Pins of earlier versions, link_<netns>_<ifindex>, are still read.
 */
static unsigned long netns_ino(void)
{
	static unsigned long ino;
	struct stat st;

	if (!ino && !stat("/proc/self/ns/net", &st))
		ino = st.st_ino;
	return ino;
}

static const char *xdp_mode(int ifindex);

/*
 * TC mode on kernels without tcx links (before 6.6) attaches a classic tc
 * filter to the clsact qdisc's ingress hook instead. A filter is no BPF
 * object and cannot be pinned, so the program is pinned a second time as
 * its record, tcf_<netns>_<ifindex>_<q>_<name>, q being 1 if weir
 * created the clsact qdisc (and so removes it again). The filter has
 * weir's own handle and priority, so it never replaces another's.
 */
#define WR_TC_HANDLE	0x51c3
#define WR_TC_PRIO	0xc1

struct link_pin {
	int ifindex;
	int mode;			/* enum wr_attach_mode; -1: not recorded */
	bool tcf;			/* a clsact filter, not a bpf_link */
	bool qdisc_ours;		/* tcf: weir created the clsact qdisc */
	bool xdpm;			/* a program in libxdp's dispatcher (xdpmulti.c) */
	unsigned int prio;		/* xdpm: its run priority as attached */
	char name[IF_NAMESIZE];		/* as attached; "" if not recorded */
	char pin[NAME_MAX + 1];		/* the file under the root */
};

/* A link (or clsact filter) pin of this network namespace? Fills lp if so. */
static bool parse_link_pin(const char *file, struct link_pin *lp)
{
	unsigned long ns;
	int idx, off = 0, m, q;
	unsigned int prio;
	char mode[16];

	if (sscanf(file, "xdpm_%lu_%d_%15[a-z]_%u_%n", &ns, &idx, mode, &prio, &off) == 4 && off) {
		if (ns != netns_ino() || idx <= 0)
			return false;
		memset(lp, 0, sizeof(*lp));
		lp->ifindex = idx;
		lp->xdpm = true;
		lp->prio = prio;
		lp->mode = strcmp(mode, "generic") ? WR_MODE_NATIVE : WR_MODE_GENERIC;
		snprintf(lp->pin, sizeof(lp->pin), "%s", file);
		snprintf(lp->name, sizeof(lp->name), "%s", file + off);
		return true;
	}
	off = 0;
	if (sscanf(file, "tcf_%lu_%d_%d_%n", &ns, &idx, &q, &off) == 3 && off) {
		if (ns != netns_ino() || idx <= 0)
			return false;
		memset(lp, 0, sizeof(*lp));
		lp->ifindex = idx;
		lp->mode = WR_MODE_TC;
		lp->tcf = true;
		lp->qdisc_ours = q == 1;
		snprintf(lp->pin, sizeof(lp->pin), "%s", file);
		snprintf(lp->name, sizeof(lp->name), "%s", file + off);
		return true;
	}
	off = 0;
	if (sscanf(file, "link_%lu_%d%n", &ns, &idx, &off) != 2 || ns != netns_ino() || idx <= 0)
		return false;
	memset(lp, 0, sizeof(*lp));
	lp->ifindex = idx;
	lp->mode = -1;
	snprintf(lp->pin, sizeof(lp->pin), "%s", file);
	if (!file[off])
		return true;			/* the older form */
	if (sscanf(file + off, "_%15[a-z]_%n", mode, &m) != 1 || !m)
		return false;
	for (lp->mode = 0; lp->mode < (int)ARRAY_SIZE(wr_mode_names); lp->mode++)
		if (!strcmp(mode, wr_mode_names[lp->mode]))
			break;
	if (lp->mode == (int)ARRAY_SIZE(wr_mode_names))
		return false;
	snprintf(lp->name, sizeof(lp->name), "%s", file + off + m);
	return true;
}

/* The pin of ifindex (or, if ifindex is 0, of the interface once called name). */
static int find_link(int ifindex, const char *name, struct link_pin *lp)
{
	struct dirent *de;
	DIR *d = opendir(opts.root);
	int err = -ENOENT;

	if (!d)
		return errno == EACCES || errno == EPERM ? -EACCES : -ENOENT;
	while ((de = readdir(d))) {
		if (!parse_link_pin(de->d_name, lp))
			continue;
		if (ifindex ? lp->ifindex == ifindex : !strcmp(lp->name, name)) {
			err = 0;
			break;
		}
	}
	closedir(d);
	return err;
}

static int link_pin_path(char *buf, size_t len, const struct link_pin *lp)
{
	return wr_pin_path(buf, len, lp->pin);
}

/*
 * Is the pinned link still on its interface? The kernel clears a link's
 * ifindex when its interface goes away (the first word of both the xdp and
 * the tcx link info). A program in libxdp's dispatcher is there while the
 * dispatcher on the interface lists it.
 */
static bool link_alive(const struct link_pin *lp, struct bpf_link_info *li)
{
	char path[PATH_MAX], now[IF_NAMESIZE];
	__u32 len = sizeof(*li);
	bool alive = false;
	int fd;

	memset(li, 0, sizeof(*li));
	if (link_pin_path(path, sizeof(path), lp))
		return false;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return false;
	if (lp->xdpm) {
		struct bpf_prog_info pi = {};
		struct wr_xdpm_info xi;
		__u32 plen = sizeof(pi);

		if (!bpf_obj_get_info_by_fd(fd, &pi, &plen))
			alive = !wr_xdpm_find(lp->ifindex, pi.id, &xi);
		li->prog_id = pi.id;
	} else if (lp->tcf) {
		/* A clsact filter: ours while our handle holds the pinned program. */
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = lp->ifindex,
			    .attach_point = BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, to, .handle = WR_TC_HANDLE, .priority = WR_TC_PRIO);
		struct bpf_prog_info pi = {};
		__u32 plen = sizeof(pi);

		if (!bpf_obj_get_info_by_fd(fd, &pi, &plen) && !bpf_tc_query(&hook, &to))
			alive = to.prog_id == pi.id;
		li->prog_id = pi.id;
	} else if (!bpf_obj_get_info_by_fd(fd, li, &len)) {
		alive = li->xdp.ifindex != 0;
	}
	close(fd);
	/* The index now names another interface: ours went and another took it. */
	if (alive && lp->name[0] && (!if_indextoname(lp->ifindex, now) || strcmp(now, lp->name)))
		alive = false;
	return alive;
}

static int explain_busy(const char *dev, int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (!bpf_xdp_query(ifindex, 0, &q) && q.prog_id) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(q.prog_id);

		bool named = fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len);

		if (named && !strcmp(info.name, "xdp_dispatcher")) {
			const char *dir = getenv("LIBXDP_BPFFS");

			/* libxdp finds a dispatcher's programs only under its own directory. */
			pr_err("%s has libxdp's dispatcher (id %u) but none of its state under %s/xdp: "
			       "set LIBXDP_BPFFS as it was for the tool that loaded it", dev,
			       q.prog_id, dir ? dir : "/sys/fs/bpf");
		} else if (named)
			pr_err("%s already has an XDP program (id %u, \"%s\") that is not libxdp's "
			       "dispatcher; weir leaves it alone: remove it first, load it through "
			       "libxdp (xdp-loader) for weir to join, or use mode tc", dev,
			       q.prog_id, info.name);
		else
			pr_err("%s already has an XDP program (id %u) that is not libxdp's "
			       "dispatcher; weir leaves it alone: remove it first, load it through "
			       "libxdp (xdp-loader) for weir to join, or use mode tc", dev,
			       q.prog_id);
		if (fd >= 0)
			close(fd);
	} else {
		pr_err("%s already has a program on that hook; weir leaves it alone", dev);
	}
	return -EBUSY;
}

/*
 * TC mode through the clsact qdisc: create it unless it is there (-EEXIST:
 * someone else's, left alone on detach), add weir's filter, and pin the
 * program again as the record of it (see WR_TC_HANDLE).
 */
static int attach_clsact(const char *dev, int ifindex, int prog)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, to, .prog_fd = prog, .handle = WR_TC_HANDLE,
		    .priority = WR_TC_PRIO);
	char pin[NAME_MAX + 1], path[PATH_MAX];
	bool created;
	int err;

	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		pr_err("cannot add a clsact qdisc to %s: %s", dev, strerror(-err));
		return err;
	}
	created = !err;
	if ((size_t)snprintf(pin, sizeof(pin), "tcf_%lu_%d_%d_%s", netns_ino(), ifindex,
			     created, dev) >= sizeof(pin) ||
	    wr_pin_path(path, sizeof(path), pin)) {
		err = -ENAMETOOLONG;
		goto fail;
	}
	err = bpf_tc_attach(&hook, &to);
	if (err) {
		if (err == -EEXIST)
			pr_err("%s already has a tc filter with weir's handle %#x and priority "
			       "%#x on its ingress hook; weir leaves it alone", dev,
			       WR_TC_HANDLE, WR_TC_PRIO);
		else
			pr_err("cannot attach to %s through clsact: %s", dev, strerror(-err));
		goto fail;
	}
	if (bpf_obj_pin(prog, path)) {
		err = -errno;
		pr_err("cannot pin the record of the tc filter at %s: %s", path, strerror(-err));
		to.prog_fd = 0;
		to.prog_id = 0;
		to.flags = 0;
		bpf_tc_detach(&hook, &to);
		goto fail;
	}
	pr_debug("attached to %s through clsact%s", dev, created ? " (qdisc created)" : "");
	return 0;
fail:
	if (created) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
	return err;
}

/*
 * XDP modes: what holds the hook decides. A libxdp dispatcher is joined
 * (unless dispatcher off); a free hook is taken alone (a link of our own)
 * unless dispatcher libxdp asks for one; any other program is left alone.
 * 0 joined, 1 to attach alone, or -errno after saying why.
 */
static int attach_xdp_shared(const char *dev, int ifindex, const struct wr_attach_opts *o)
{
	int mode = o->mode;
	char pin[NAME_MAX + 1];
	int hook, hmode = mode;
	__u32 hid = 0;

	hook = wr_xdpm_hook(ifindex, mode, &hmode, &hid);
	if (hook < 0)
		return 1;	/* the attach says what is wrong */
	if (hook == WR_HOOK_OTHER)
		return explain_busy(dev, ifindex);
	if (hook == WR_HOOK_FREE && o->dispatcher != WR_DISP_LIBXDP)
		return 1;
	if (hook == WR_HOOK_DISPATCHER && o->dispatcher == WR_DISP_OFF) {
		pr_err("%s has libxdp's dispatcher (program %u) and dispatcher is off: weir "
		       "leaves it alone (dispatcher auto or libxdp joins it)", dev, hid);
		return -EBUSY;
	}
	if (hook == WR_HOOK_DISPATCHER && hmode != mode) {
		pr_err("%s has libxdp's dispatcher in %s mode: attach in mode %s to join it", dev,
		       wr_mode_names[hmode], wr_mode_names[hmode]);
		return -EBUSY;
	}
	hook = wr_cookie_attach_guard(dev, WR_CK_DISPATCHER);
	if (hook)
		return hook;
	if ((size_t)snprintf(pin, sizeof(pin), "xdpm_%lu_%d_%s_%u_%s", netns_ino(), ifindex,
			     wr_mode_names[mode], o->priority, dev) >= sizeof(pin))
		return -ENAMETOOLONG;
	return wr_xdpm_attach(dev, ifindex, mode, o->priority, pin);
}

/*
 * Attach the pinned program to dev as o says and pin the link, so the
 * attachment outlives this process. Caller holds the root lock; weir is
 * loaded.
 */
int wr_attach_locked(const char *dev, int ifindex, const struct wr_attach_opts *o)
{
	LIBBPF_OPTS(bpf_link_create_opts, lco);
	char path[PATH_MAX];
	int mode = o->mode, prog = -1, link = -1, err;

	/* No SYN cookies at TC: refused while the rule set has cookie rules. */
	if (mode == WR_MODE_TC) {
		err = wr_cookie_attach_guard(dev, WR_CK_TC);
		if (err)
			return err;
	}
	{
		struct link_pin lp;
		struct bpf_link_info li;

		if (!find_link(ifindex, NULL, &lp)) {
			if (link_alive(&lp, &li)) {
				pr_err("weir is already attached to %s; detach it first", dev);
				err = -EEXIST;
				goto out;
			}
			/* The link of an interface that is gone, whose index dev now has. */
			if (!link_pin_path(path, sizeof(path), &lp))
				unlink(path);
		}
		memset(&lp, 0, sizeof(lp));
		lp.ifindex = ifindex;
		if ((size_t)snprintf(lp.pin, sizeof(lp.pin), "link_%lu_%d_%s_%s", netns_ino(),
				     ifindex, wr_mode_names[mode], dev) >= sizeof(lp.pin)) {
			err = -ENAMETOOLONG;
			goto out;
		}
		err = link_pin_path(path, sizeof(path), &lp);
		if (err)
			goto out;
	}
	{
		char ppath[PATH_MAX];

		err = wr_pin_path(ppath, sizeof(ppath), mode == WR_MODE_TC ? "prog_tc" : "prog_xdp");
		if (err)
			goto out;
		prog = bpf_obj_get(ppath);
		if (prog < 0) {
			err = -errno;
			pr_err("cannot open pinned program %s: %s", ppath, strerror(-err));
			goto out;
		}
		err = wr_check_prog(prog, ppath, mode == WR_MODE_TC ? "weir_tc" : "weir_xdp",
				 mode == WR_MODE_TC ? BPF_PROG_TYPE_SCHED_CLS : BPF_PROG_TYPE_XDP);
		if (err)
			goto out;
	}
	if (mode != WR_MODE_TC) {
		err = attach_xdp_shared(dev, ifindex, o);
		if (err != 1)
			goto out;	/* joined a dispatcher, or refused */
	}
	if (mode == WR_MODE_TC) {
		link = o->tc_hook == WR_TC_HOOK_CLSACT ? -1 : bpf_link_create(prog, ifindex,
									      BPF_TCX_INGRESS, NULL);
		/* No tcx links (before Linux 6.6), or asked for: a clsact filter. */
		if (o->tc_hook == WR_TC_HOOK_CLSACT ||
		    (link < 0 && o->tc_hook == WR_TC_HOOK_AUTO && errno == EINVAL)) {
			err = attach_clsact(dev, ifindex, prog);
			goto out;
		}
	} else {
		lco.flags = mode == WR_MODE_NATIVE ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
		link = bpf_link_create(prog, ifindex, BPF_XDP, &lco);
	}
	if (link < 0) {
		err = -errno;
		if (err == -EBUSY || err == -EEXIST)
			err = explain_busy(dev, ifindex);
		else if (mode == WR_MODE_NATIVE && (err == -EOPNOTSUPP || err == -EINVAL))
			pr_err("%s has no native XDP support (%s); try mode generic or tc", dev,
			       strerror(-err));
		else if (mode == WR_MODE_NATIVE && err == -ERANGE)
			/* veth (and drivers like it) refuse a single-buffer program past a page. */
			pr_err("cannot attach to %s in native mode: its MTU needs multi-buffer XDP, "
			       "which this kernel or driver does not give weir (Linux 5.18); lower "
			       "the MTU, or use mode generic or tc", dev);
		else if (mode == WR_MODE_TC && err == -EINVAL)
			pr_err("cannot attach to %s in tc mode: this kernel lacks tcx links "
			       "(Linux 6.6+; tc-hook auto or clsact attaches to clsact instead)", dev);
		else
			pr_err("cannot attach to %s in %s mode: %s", dev, wr_mode_names[mode],
			       strerror(-err));
		goto out;
	}
	if (bpf_obj_pin(link, path)) {
		err = -errno;
		pr_err("cannot pin the link at %s: %s", path, strerror(-err));
		goto out;	/* closing the only fd detaches again */
	}
	err = 0;
out:
	if (link >= 0)
		close(link);
	if (prog >= 0)
		close(prog);
	/* The egress side (egress.c), whatever the mode; without it, no attachment. */
	if (!err) {
		err = wr_egress_attach(dev, ifindex,
				       mode == WR_MODE_TC && o->tc_hook == WR_TC_HOOK_CLSACT);
		/* Its counters (ifstats.c); a set loaded before them has no slot map. */
		if (!err && wr_if_claim(ifindex) == -ENOENT)
			pr_warn("no per-interface counters for %s: reload weir", dev);
		if (err)
			wr_detach_ifindex(ifindex);
	}
	return err;
}

/* Help asked for goes to stdout; usage after a mistake to stderr. */
/* Link pins of every namespace. */
int wr_count_all_links(void)
{
	struct dirent *de;
	DIR *d = opendir(opts.root);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, "link_", 5) || !strncmp(de->d_name, "tcf_", 4) ||
		     !strncmp(de->d_name, "xdpm_", 5);
	closedir(d);
	return n;
}

int wr_list_links(int *ifindexes, int max)
{
	struct link_pin lp;
	struct dirent *de;
	DIR *d = opendir(opts.root);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max)
		if (parse_link_pin(de->d_name, &lp))
			ifindexes[n++] = lp.ifindex;
	closedir(d);
	return n;
}

/*
 * Remove one attachment: unpinning a link destroys it; a clsact filter is
 * detached (and the qdisc removed if weir created it) before its record
 * goes. A filter whose interface is gone went with it.
 */
static int unpin_link(const struct link_pin *lp)
{
	char path[PATH_MAX];
	int err = link_pin_path(path, sizeof(path), lp);

	if (err)
		return err;
	/* The egress side first: a clsact qdisc weir made for both goes with the ingress side. */
	err = wr_egress_detach(lp->ifindex);
	if (err)
		return err;
	wr_if_release(lp->ifindex);
	if (lp->xdpm) {
		int fd = bpf_obj_get(path);

		/* Out of the dispatcher, the others left running; gone already is fine. */
		err = fd < 0 ? 0 : wr_xdpm_detach(lp->ifindex, fd);
		if (fd >= 0)
			close(fd);
		if (err && err != -ENOENT && err != -ENODEV)
			return err;
	}
	if (lp->tcf) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = lp->ifindex,
			    .attach_point = BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, to, .handle = WR_TC_HANDLE, .priority = WR_TC_PRIO);
		struct bpf_link_info li;

		if (link_alive(lp, &li)) {
			err = bpf_tc_detach(&hook, &to);
			if (err && err != -ENOENT && err != -ENODEV) {
				pr_err("cannot remove weir's tc filter from %s: %s", lp->name,
				       strerror(-err));
				return err;
			}
			if (lp->qdisc_ours) {
				hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
				bpf_tc_hook_destroy(&hook);	/* the clsact qdisc weir made */
			}
		}
	}
	return unlink(path) ? -errno : 0;
}

/* Unpin (and so destroy) the link of ifindex. Caller holds the root lock. */
int wr_detach_ifindex(int ifindex)
{
	struct link_pin lp;
	int err = find_link(ifindex, NULL, &lp);

	return err ? err : unpin_link(&lp);
}

int wr_link_describe(int ifindex, char *name, size_t len, int *mode)
{
	struct bpf_link_info li;
	struct link_pin lp;
	bool alive;

	if (find_link(ifindex, NULL, &lp))
		return -ENOENT;
	alive = link_alive(&lp, &li);
	*mode = lp.mode;
	if (lp.mode < 0 && alive && li.type == BPF_LINK_TYPE_TCX)
		*mode = WR_MODE_TC;
	else if (lp.mode < 0 && alive)
		*mode = strcmp(xdp_mode(ifindex), "generic") ? WR_MODE_NATIVE : WR_MODE_GENERIC;
	if (alive && if_indextoname(ifindex, name))
		return 0;
	if (lp.name[0])
		snprintf(name, len, "%s", lp.name);
	else
		snprintf(name, len, "ifindex%d", ifindex);
	return -ENODEV;
}

int wr_remove_all(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(opts.root);
	int err = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	err = wr_egress_detach(0);
	while ((de = readdir(d))) {
		struct link_pin lp;

		if (de->d_name[0] == '.')
			continue;
		/*
		 * A clsact filter or a dispatcher's program of this namespace
		 * goes first; its record with it.
		 */
		if (parse_link_pin(de->d_name, &lp) && (lp.tcf || lp.xdpm)) {
			int e = unpin_link(&lp);

			err = err ? err : e;
			continue;
		}
		/*
		 * One of another namespace cannot be reached from here: its
		 * record stays, so that `detach all` there removes it.
		 */
		if (!strncmp(de->d_name, "tcf_", 4) || !strncmp(de->d_name, "xdpm_", 5) ||
		    !strncmp(de->d_name, "tce_", 4)) {
			pr_err("a %s of weir's in another network namespace stays until "
			       "'weir detach all' runs there (%s)",
			       de->d_name[0] == 't' ? "tc filter" : "dispatcher's program",
			       de->d_name);
			continue;
		}
		if (strncmp(de->d_name, "link_", 5) && strncmp(de->d_name, "prog_", 5) &&
		    strncmp(de->d_name, "egr_", 4) &&
		    strncmp(de->d_name, "wr_", 3) && strncmp(de->d_name, "cgroup_", 7))
			continue;	/* not ours: leave it */
		if (wr_pin_path(path, sizeof(path), de->d_name) || unlink(path))
			err = -errno;
	}
	closedir(d);
	if (rmdir(opts.root) && errno != ENOTEMPTY && errno != ENOENT && errno != EBUSY)
		err = -errno;
	return err;
}

static const char *xdp_mode(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return "xdp";
	switch (q.attach_mode) {
	case XDP_ATTACHED_DRV: return "native";
	case XDP_ATTACHED_SKB: return "generic";
	case XDP_ATTACHED_HW: return "offload";
	case XDP_ATTACHED_MULTI:
		return q.drv_prog_id ? "native" : "generic";
	default: return "xdp";
	}
}

int wr_link_mode(int ifindex)
{
	char name[IF_NAMESIZE + 16];
	int mode, err = wr_link_describe(ifindex, name, sizeof(name), &mode);

	return err ? err : mode;
}


/*
 * The interface index of an attachment whose interface is gone, by the
 * name it was attached as or as status shows it ("ifindexN"); 0 if none.
 */
int wr_link_find_gone(const char *name)
{
	struct link_pin lp;
	int idx;
	char tail;

	if (!find_link(0, name, &lp) ||
	    (sscanf(name, "ifindex%d%c", &idx, &tail) == 1 && !find_link(idx, NULL, &lp)))
		return lp.ifindex;
	return 0;
}

/* What status shows of the attachment of ifindex: its link and program, and its hook. */
int wr_link_ids(int ifindex, __u32 *link_id, __u32 *prog_id, bool *clsact)
{
	struct bpf_link_info li;
	struct link_pin lp;

	if (find_link(ifindex, NULL, &lp))
		return -ENOENT;
	link_alive(&lp, &li);
	*link_id = li.id;
	*prog_id = li.prog_id;
	*clsact = lp.tcf;
	return 0;
}

int wr_link_xdpm(int ifindex, struct wr_xdpm_info *info)
{
	struct wr_xdpm_info xi;
	struct bpf_link_info li;
	struct link_pin lp;

	memset(info, 0, sizeof(*info));
	if (find_link(ifindex, NULL, &lp) || !lp.xdpm)
		return -ENOENT;
	info->prio = lp.prio;
	info->mode = lp.mode;
	/* What the dispatcher says, while weir is in it; else what the record says. */
	if (link_alive(&lp, &li) && !wr_xdpm_find(ifindex, li.prog_id, &xi))
		*info = xi;
	return 0;
}
