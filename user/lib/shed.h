/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Adaptive shedding: signals, the controller step, `weir shed`. */
#ifndef WEIR_USER_SHED_H
#define WEIR_USER_SHED_H

#include "lib/libweir.h"
#include "weir_limiter.h"
#include "weir_shed.h"

/*
 * The shedding controller's desired state: its signals (u is their maximum),
 * curve and default class, and the reserved capacity. The config file fills
 * these (config/), the controller reads them.
 */
enum wr_signal_type {
	WR_SIG_CPU,		/* CPU busy share incl. softirq, /proc/stat */
	WR_SIG_PSI,		/* pressure stall share, /proc/pressure/<arg> */
	WR_SIG_ACCEPTQ,		/* accept-queue fill of listening TCP ports */
	WR_SIG_FILE,		/* a number 0..1 the application writes to <arg> */
};
#define WR_MAX_PORTS 16

struct wr_cfg_signal {
	int type;		/* enum wr_signal_type */
	char arg[256];		/* psi: cpu|io|memory; file: path (resolved) */
	__u16 ports[WR_MAX_PORTS];
	int nr_ports;
};

struct wr_cfg_shed {
	bool on;		/* the file has a shedding: section */
	__u32 interval_ms;	/* controller step, default 1000 */
	struct wr_cfg_signal signals[WEIR_MAX_SIGNALS];
	int nr_signals;
	struct wr_curve curve;	/* default WR_CURVE_DEFAULT */
	int default_class;	/* class of traffic no rule matches, default 3 */
};

struct wr_cfg_capacity {
	__u64 rate[2];		/* by enum weir_cost; 0: not given */
	double reserve;		/* share kept for class 0, default 0.2 */
};

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

/* S (or u) as the map holds it: millionths. */
__s64 wr_shed_micro(double v);
/* The per-class drop thresholds of sh for amount s, under sh's flags (off: none). */
void wr_shed_thresholds(struct weir_shed *sh, double s);
int wr_shed_read(int fd, struct weir_shed *sh);
int wr_shed_write(int fd, const struct weir_shed *sh);
/* Default class, capacity and signal names from cfg; S and switches stay. */
int wr_shed_configure(const struct wr_maps *m, const struct wr_cfg_shed *shed,
		      const struct wr_cfg_capacity *capacity);
/* Read every signal, move S, write the thresholds. */
int wr_shed_step_once(const struct wr_maps *m, const struct wr_cfg_shed *shed,
		      struct wr_signal *sigs, double *s_before, double *s_after);


#endif /* WEIR_USER_SHED_H */
