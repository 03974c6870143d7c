/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Adaptive shedding: signals, the controller step, `weir shed`. */
#ifndef WEIR_USER_SHED_H
#define WEIR_USER_SHED_H

#include "config.h"
#include "weir_limiter.h"
#include "weir_shed.h"

/* A configured signal and what reading it needs to remember. */
struct wr_signal {
	struct wr_cfg_signal cfg;
	bool primed;		/* cpu/psi: a first reading was taken */
	bool warned;		/* unreadable was reported; say so again when it is back */
	__u64 prev_a, prev_total;
};

void wr_signal_name(const struct wr_cfg_signal *c, char *buf, size_t len);
/* 0 and u in [0, 1]; -EAGAIN on a first cpu/psi reading; -errno if unreadable. */
int wr_signal_read(struct wr_signal *s, double *u);

int wr_shed_read(int fd, struct weir_shed *sh);
int wr_shed_write(int fd, const struct weir_shed *sh);
/* Default class, capacity and signal names from cfg; S and switches stay. */
int wr_shed_configure(const struct wr_maps *m, const struct wr_cfg *cfg);
/* Read every signal, move S, write the thresholds. */
int wr_shed_step_once(const struct wr_maps *m, const struct wr_cfg *cfg, struct wr_signal *sigs,
		      double *s_before, double *s_after);

int do_shed(int argc, char **argv);

#endif /* WEIR_USER_SHED_H */
