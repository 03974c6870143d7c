// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The egress side of an attachment: weir_egress (the reflection preset's
 * record of the host's own UDP flows, bpf/reflect.h) on the TC egress hook
 * of every interface weir attaches to, whatever the ingress mode. A tcx
 * link (Linux 6.6) pinned as
 *   egr_<netns>_<ifindex>_<name>
 * or, before tcx, a filter on the clsact qdisc's egress hook with weir's
 * handle and priority, its program pinned again as its record,
 *   tce_<netns>_<ifindex>_<q>_<name>
 * (q 1: weir created the qdisc, and removes it again when nothing of
 * weir's is left on it). Attached with the ingress side and removed with
 * it (links.c); never anything weir did not create.
 *
 * Always attached, not only while a rule has the preset: the program
 * reads two array entries (the config, the live rule set) and leaves while
 * no live rule has it (6 to 9 ns over a trivial program in progcost,
 * docs/reflection.md), and attaching hooks on `rule add` would make a rule
 * change touch the interfaces (and need their privileges).
 * The program never drops and never changes a packet (TC_ACT_UNSPEC: the
 * hook's next program decides), so a weir that is gone or broken costs the
 * host's outgoing traffic nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/libweir.h"

/* Not in the UAPI headers libbpf 1.1 ships with: tcx links (Linux 6.6). */
#ifndef BPF_TCX_EGRESS
#define BPF_TCX_EGRESS 47
#endif
/* weir's clsact filter: the ingress side's handle and priority (links.c), on the egress hook. */
#define WR_TCE_HANDLE	0x51c3
#define WR_TCE_PRIO	0xc1

static unsigned long egress_netns(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : st.st_ino;
}

/*
 * Attach weir_egress to dev's egress hook and pin it: through tcx where the
 * kernel has it, unless clsact (the ingress side asked for tc-hook
 * clsact). Caller holds the root lock.
 */
int wr_egress_attach(const char *dev, int ifindex, bool clsact)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, to, .handle = WR_TCE_HANDLE, .priority = WR_TCE_PRIO);
	char pin[NAME_MAX + 1], path[PATH_MAX];
	int prog, link, err;
	bool created;

	err = wr_pin_path(path, sizeof(path), "prog_egress");
	if (err)
		return err;
	prog = bpf_obj_get(path);
	if (prog < 0) {
		err = -errno;
		pr_err("cannot open pinned program %s: %s (a weir loaded by an older version: "
		       "'weir detach all' first)", path, strerror(-err));
		return err;
	}
	err = wr_check_prog(prog, path, "weir_egress", BPF_PROG_TYPE_SCHED_CLS);
	if (err)
		goto out;
	link = clsact ? -1 : bpf_link_create(prog, ifindex, BPF_TCX_EGRESS, NULL);
	if (link >= 0) {
		if ((size_t)snprintf(pin, sizeof(pin), "egr_%lu_%d_%s", egress_netns(), ifindex,
				     dev) >= sizeof(pin) ||
		    wr_pin_path(path, sizeof(path), pin))
			err = -ENAMETOOLONG;
		else if (bpf_obj_pin(link, path))
			err = -errno;
		if (err)
			pr_err("cannot pin the egress link of %s: %s", dev, strerror(-err));
		close(link);	/* unpinned, it goes with the fd */
		goto out;
	}
	if (!clsact && errno != EINVAL) {
		err = -errno;
		pr_err("cannot attach weir's egress program to %s: %s", dev, strerror(-err));
		goto out;
	}
	/* No tcx links (before Linux 6.6): a clsact filter on the egress hook. */
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		pr_err("cannot add a clsact qdisc to %s: %s", dev, strerror(-err));
		goto out;
	}
	created = !err;
	to.prog_fd = prog;
	if ((size_t)snprintf(pin, sizeof(pin), "tce_%lu_%d_%d_%s", egress_netns(), ifindex,
			     created, dev) >= sizeof(pin) ||
	    wr_pin_path(path, sizeof(path), pin)) {
		err = -ENAMETOOLONG;
	} else {
		err = bpf_tc_attach(&hook, &to);
		if (err)
			pr_err("cannot attach weir's egress program to %s through clsact: "
			       "%s%s", dev, strerror(-err), err == -EEXIST ? " (a filter with "
			       "weir's handle and priority is there; weir leaves it alone)" : "");
		else if (bpf_obj_pin(prog, path)) {
			err = -errno;
			pr_err("cannot pin the record of the egress filter at %s: %s", path,
			       strerror(-err));
			to.prog_fd = 0;
			to.prog_id = 0;
			to.flags = 0;
			bpf_tc_detach(&hook, &to);
		}
	}
	if (err && created) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
out:
	close(prog);
	return err;
}

/* An egress pin of this namespace: its interface, whether a clsact record, whether q. */
static bool parse_egress_pin(const char *file, int *ifindex, bool *tce, bool *qdisc_ours)
{
	unsigned long ns;
	int idx, q, off = 0;

	if (sscanf(file, "egr_%lu_%d_%n", &ns, &idx, &off) == 2 && off) {
		*tce = false;
		*qdisc_ours = false;
	} else if (sscanf(file, "tce_%lu_%d_%d_%n", &ns, &idx, &q, &off) == 3 && off) {
		*tce = true;
		*qdisc_ours = q == 1;
	} else {
		return false;
	}
	*ifindex = idx;
	return ns == egress_netns();
}

/* Remove one egress attachment by its pin file (of this namespace). */
static int egress_remove(const char *file, int ifindex, bool tce, bool qdisc_ours)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, to, .handle = WR_TCE_HANDLE, .priority = WR_TCE_PRIO);
	char path[PATH_MAX];
	int err = wr_pin_path(path, sizeof(path), file);

	if (err)
		return err;
	if (tce) {
		struct bpf_prog_info pi = {};
		__u32 plen = sizeof(pi);
		int fd = bpf_obj_get(path);

		/* Only the filter that still holds our program: the interface may be gone. */
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &pi, &plen) &&
		    !bpf_tc_query(&hook, &to) && to.prog_id == pi.id) {
			to.prog_id = 0;
			to.prog_fd = 0;
			to.flags = 0;
			err = bpf_tc_detach(&hook, &to);
			if (err && err != -ENOENT && err != -ENODEV)
				pr_err("cannot remove weir's egress filter from ifindex %d: %s",
				       ifindex, strerror(-err));
			else if (qdisc_ours)
				wr_egress_qdisc_release(ifindex);
		}
		if (fd >= 0)
			close(fd);
		if (err && err != -ENOENT && err != -ENODEV)
			return err;
	}
	return unlink(path) ? -errno : 0;
}

/*
 * The clsact qdisc weir created for the egress filter goes once nothing of
 * weir's is on it: the ingress side's filter, if weir attached in tc mode
 * through clsact, still is until its own removal, which removes the qdisc
 * only if it created it (links.c). Here: remove it unless weir's ingress
 * filter is on it.
 */
void wr_egress_qdisc_release(int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, to, .handle = WR_TCE_HANDLE, .priority = WR_TCE_PRIO);

	if (!bpf_tc_query(&hook, &to))
		return;
	hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
	bpf_tc_hook_destroy(&hook);
}

/*
 * Remove the egress attachment of ifindex (0: every one of this namespace).
 * 0 if there was none. Caller holds the root lock.
 */
int wr_egress_detach(int ifindex)
{
	DIR *d = opendir(opts.root);
	struct dirent *de;
	int idx, err = 0, e;
	bool tce, q;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (!parse_egress_pin(de->d_name, &idx, &tce, &q) || (ifindex && idx != ifindex))
			continue;
		e = egress_remove(de->d_name, idx, tce, q);
		err = err ? err : e;
	}
	closedir(d);
	return err;
}

/* Is the egress program on ifindex (a pin of this namespace for it)? */
bool wr_egress_attached(int ifindex, bool *clsact)
{
	DIR *d = opendir(opts.root);
	struct dirent *de;
	bool found = false, q;
	int idx;

	if (!d)
		return false;
	while (!found && (de = readdir(d)))
		found = parse_egress_pin(de->d_name, &idx, clsact, &q) && idx == ifindex;
	closedir(d);
	return found;
}
