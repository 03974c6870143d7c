// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The daemon's capabilities: once it has loaded and attached, it keeps
 * only what reloads need (moved out of daemon.c, which had reached its
 * size limit).
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include "lib/libweir.h"
#include "daemon/daemon_int.h"

/*
 * Does the daemon share an interface through libxdp's dispatcher, or may
 * it on a reload? libxdp opens the dispatcher's programs by id (which
 * takes CAP_SYS_ADMIN) and weir's program in it is an extension program
 * (CAP_PERFMON).
 */
bool uses_dispatcher(const struct daemon *d)
{
	struct wr_xdpm_info xi;
	int links[256], n, i;

	for (i = 0; i < d->cfg.nr_ifaces; i++)
		if (d->cfg.ifaces[i].attach.mode != WR_MODE_TC &&
		    d->cfg.ifaces[i].attach.dispatcher == WR_DISP_LIBXDP)
			return true;
	n = wr_list_links(links, ARRAY_SIZE(links));
	for (i = 0; i < n; i++)
		if (!wr_link_xdpm(links[i], &xi))
			return true;
	return false;
}

/*
 * After loading and attaching, keep only what reloads need: CAP_BPF for the
 * bpf() syscall, CAP_NET_ADMIN to attach interfaces, and where libxdp's
 * dispatcher is used, CAP_SYS_ADMIN and CAP_PERFMON (uses_dispatcher).
 * Everything else goes, from the bounding set too.
 */
int drop_caps(bool dispatcher)
{
	static const cap_value_t keep[] = { CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN, CAP_PERFMON };
	int nkeep = dispatcher ? 4 : 2, k;
	cap_t caps = cap_init();
	cap_value_t c;
	char *text;
	int err = 0;

	if (!caps)
		return -errno;
	if (cap_set_flag(caps, CAP_PERMITTED, nkeep, keep, CAP_SET) ||
	    cap_set_flag(caps, CAP_EFFECTIVE, nkeep, keep, CAP_SET)) {
		err = -errno;
		goto out;
	}
	for (c = 0; c <= CAP_LAST_CAP; c++) {
		for (k = 0; k < nkeep && keep[k] != c; k++)
			;
		if (k < nkeep)
			continue;
		if (cap_drop_bound(c) && errno != EINVAL) {
			err = -errno;
			goto out;
		}
	}
	if (cap_set_proc(caps)) {
		err = -errno;
		goto out;
	}
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	text = cap_to_text(caps, NULL);
	dlog("dropped privileges; capabilities kept: %s", text ? text : "cap_bpf,cap_net_admin");
	cap_free(text);
out:
	cap_free(caps);
	return err;
}
