/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Connection limits: reconciling sl_conns with the kernel's sockets. */
#ifndef SLUICE_CONNS_H
#define SLUICE_CONNS_H

#include "sluice_user.h"

/* Disagreements waiting for a second scan to confirm them. */
#define SL_CONNS_PENDING_MAX 1024

struct sl_conns_pending {
	struct sluice_key key;
	__u64 map_count, truth;
};

struct sl_conns_recon {
	struct sl_conns_pending pending[SL_CONNS_PENDING_MAX];
	struct sl_conns_pending next[SL_CONNS_PENDING_MAX];
	size_t nr_pending, nr_next;
};

/*
 * One scan: count the kernel's connections per connection-limit key of rs,
 * correct entries that disagreed the same way last scan too, drop zeros.
 * *fixed says how many were corrected.
 */
int sl_conns_reconcile(const struct sl_maps *m, const struct sluice_ruleset *rs,
		       struct sl_conns_recon *rc, int *fixed);

#endif /* SLUICE_CONNS_H */
