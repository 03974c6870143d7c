/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Connection limits: reconciling wr_conns with the kernel's sockets. */
#ifndef WEIR_CONNS_H
#define WEIR_CONNS_H

#include "lib/libweir.h"

/* Disagreements waiting for a second scan to confirm them. */
#define WR_CONNS_PENDING_MAX 1024

struct wr_conns_pending {
	struct weir_key key;
	__u64 map_count, truth;
};

struct wr_conns_recon {
	struct wr_conns_pending pending[WR_CONNS_PENDING_MAX];
	struct wr_conns_pending next[WR_CONNS_PENDING_MAX];
	size_t nr_pending, nr_next;
};

/*
 * One scan: count the kernel's connections per connection-limit key of rs,
 * correct entries that disagreed the same way last scan too, drop zeros.
 * *fixed says how many were corrected.
 */
int wr_conns_reconcile(const struct wr_maps *m, const struct weir_ruleset *rs,
		       struct wr_conns_recon *rc, int *fixed);

#endif /* WEIR_CONNS_H */
